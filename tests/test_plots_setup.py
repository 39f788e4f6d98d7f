"""plots.setup() in a new kernel: the figures' renderer is set up without the 4-5 s import of
rfc3987_syntax (see modtok/ui/plots.py), and that package stays importable afterwards."""

import subprocess
import sys

SCRIPT = """
import io, contextlib, sys
from modtok.ui import plots
with contextlib.redirect_stdout(io.StringIO()):
    plots.setup()
import plotly.io as pio
assert pio.renderers.default == "plotly_mimetype+notebook", pio.renderers.default
assert "nbformat" in sys.modules and "rfc3987_syntax" not in sys.modules, sorted(sys.modules)[:5]
import nbformat
nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("1")])
nbformat.validate(nb)  # validation works without it
try:
    import rfc3987_syntax  # noqa: F401  (importable again, if installed)
except ImportError as e:
    assert "None in sys.modules" not in str(e), e
print("ok")
"""


def test_setup_skips_the_rfc3987_grammar_and_leaves_it_importable():
    out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().endswith("ok")
