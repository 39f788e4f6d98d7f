"""One notebook of ``make demo``: executed headless, its HTML report written whether it ran
to the end or not.

``jupyter nbconvert --to html --execute`` writes nothing when a cell fails, so a user whose
corpus stops a notebook cannot see where. Here the notebook runs until its first error (the
cells after it are not run: a failure early in a notebook that trains for an hour costs
seconds), and the HTML holds every output up to that cell, the error and its traceback
included. ``make demo`` calls ``python -m modtok.ui.demo NOTEBOOK OUT_DIR`` per notebook and
names, at the end, the reports of those that failed. It also sets ``$MODTOK_AHEAD`` for the
notebooks: what a class runs first, so work a widget would make it wait for is done ahead.

>>> error_of({"cells": [{"cell_type": "code", "outputs": [{"output_type": "error", "ename": "ValueError",
...     "evalue": "bad"}], "execution_count": 4}]})
'cell [4]: ValueError: bad'
"""

from __future__ import annotations

import sys
import time
from pathlib import Path


def error_of(nb) -> str | None:
    """The first error output of an executed notebook, as ``cell [n]: Name: value``; None if none."""
    for cell in nb["cells"]:
        for out in cell.get("outputs", []) if cell["cell_type"] == "code" else []:
            if out["output_type"] == "error":
                return f"cell [{cell.get('execution_count')}]: {out['ename']}: {out['evalue']}"
    return None


def run(notebook, out_dir, timeout: float = 3600) -> tuple[Path, str | None, float]:
    """Execute ``notebook`` (an ``.ipynb``) in its own folder and write ``out_dir/<name>.html``;
    return ``(html, error, seconds)``: ``error`` is None when every cell ran, else the first
    failed cell and its error (the HTML shows it with its traceback)."""
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError
    from nbconvert import HTMLExporter

    from modtok import atomic

    notebook = Path(notebook)
    nb = nbformat.read(notebook, as_version=4)
    client = NotebookClient(nb, timeout=timeout, resources={"metadata": {"path": str(notebook.parent)}})
    start, failure = time.perf_counter(), None
    try:
        client.execute()
    except (CellExecutionError, CellTimeoutError, DeadKernelError) as e:
        failure = f"{type(e).__name__}: {str(e).strip().splitlines()[-1] if str(e).strip() else ''}"
    seconds = time.perf_counter() - start
    html, _ = HTMLExporter().from_notebook_node(nb)
    path = atomic.write_text(Path(out_dir) / f"{notebook.stem}.html", html)
    return path, error_of(nb) or failure, seconds


def main(argv: list[str]) -> int:
    """``python -m modtok.ui.demo NOTEBOOK OUT_DIR``: run it, say how it ended; 1 if it failed.
    The kernel inherits ``$MODTOK_AHEAD`` (:data:`modtok.cache.AHEAD`), set here unless it is set
    already: a notebook then computes ahead, into the results cache, what its widgets would compute
    when moved (06: the explorer's other trainers; 01: the subsets that leave one language out), for
    the class that opens it after."""
    import os

    from modtok.cache import AHEAD

    os.environ.setdefault(AHEAD, "1")
    html, error, seconds = run(argv[0], argv[1])
    if error is None:
        print(f"== ran to the end in {seconds:.0f} s: {html}")
        return 0
    print(f"== FAILED after {seconds:.0f} s at {error}\n   the report shows where: {html}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
