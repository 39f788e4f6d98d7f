"""Every snippet of the README runs: its Python blocks and its shell commands.

The README is the first thing a user copies from; a command in it that fails
(``modtok encode ... --langs npi_Deva "text"`` once did) is a bug. Each fenced
``python`` block and each line of each ``bash`` block is executed here, in a
scratch directory, on a tiny generated pool + FLORES pair (``MODTOK_POOL`` /
``MODTOK_FLORES`` point at it), so the test is hermetic and fast:

- Python blocks run in order in one interpreter (later blocks use earlier names);
- the other bash blocks run as typed, one script each, with ``.venv/bin`` on ``PATH``;
- ``make test`` is what CI runs (``.ci/run`` is checked to run exactly it);
  ``make demo`` runs for real under ``MODTOK_SMOKE=1`` on one notebook
  (``NOTEBOOKS=...``: the other notebooks are nbval's job) and must write its
  HTML report with the plotly figures embedded and save its paper-vs-here table;
  ``make report`` (``REPORTS=...``: a scratch folder) must gather the saved tables into
  the reproduction page; ``make lab`` must serve JupyterLab (it is stopped once ``/lab``
  answers).
"""

from __future__ import annotations

import json
import os
import random
import re
import shlex
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from conftest import REPO

README = (REPO / "README.md").read_text(encoding="utf-8")
BLOCKS = re.findall(r"^```(\w+)\n(.*?)^```", README, flags=re.S | re.M)
DEMO_NOTEBOOK = "notebooks/03_modular_unigram.py"  # the quickest walkthrough under smoke

# Syllables of three scripts: random words of 1-4 syllables give the tiny pool enough
# distinct substrings for the README's budgets (k = 8000) without any real text.
SYLLABLES = {
    "eng_Latn": [c + v for c in "bcdfghklmnprstvw" for v in "aeiou"],
    "npi_Deva": [c + v for c in "कखगचजतदनपबमरलसह" for v in ("", "ा", "ि", "ी", "ु", "े", "ो")],
    "rus_Cyrl": [c + v for c in "бвгдзклмнпрстх" for v in "аеиоуыя"],
}


def pseudo_lines(lang: str, n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    syl = SYLLABLES[lang]
    word = lambda: "".join(rng.choice(syl) for _ in range(rng.randint(1, 4)))  # noqa: E731
    return [" ".join(word() for _ in range(rng.randint(5, 15))) for _ in range(n)]


def shell_commands() -> list[str]:
    """Every command line of the README's bash blocks (comments dropped)."""
    out = []
    for lang, body in BLOCKS:
        if lang == "bash":
            for line in body.splitlines():
                words = shlex.split(line, comments=True)
                if words:
                    out.append(shlex.join(words))
    return out


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    """A scratch working directory and the environment of a user in it."""
    root = tmp_path_factory.mktemp("readme")
    pool, flores = root / "data" / "pool", root / "data" / "flores200"
    pool.mkdir(parents=True)
    for split in ("dev", "devtest"):
        (flores / split).mkdir(parents=True)
    for i, lang in enumerate(SYLLABLES):
        (pool / f"{lang}.txt").write_text("\n".join(pseudo_lines(lang, 3000, i)) + "\n", encoding="utf-8")
        dev = pseudo_lines(lang, 40, 100 + i)
        for split in ("dev", "devtest"):
            (flores / split / f"{lang}.{split}").write_text("\n".join(dev) + "\n", encoding="utf-8")
    work = root / "work"
    work.mkdir()
    e = dict(os.environ, MODTOK_POOL=str(pool), MODTOK_FLORES=str(flores), MODTOK_SMOKE="1",
             PATH=f"{REPO / '.venv' / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}")
    return work, e


def _run(cmd, cwd, env, timeout=600):
    res = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout,
                         shell=isinstance(cmd, str))
    assert res.returncode == 0, f"{cmd!r} failed ({res.returncode}):\n{res.stdout[-2000:]}\n{res.stderr[-3000:]}"
    return res


def test_the_readme_has_snippets_of_both_kinds():
    kinds = {lang for lang, _ in BLOCKS}
    assert {"python", "bash"} <= kinds and len(shell_commands()) >= 8


def test_python_blocks_run_in_order(env):
    work, e = env
    code = "\n\n".join(body for lang, body in BLOCKS if lang == "python")
    res = _run([sys.executable, "-c", code], work, e)
    assert "Traceback" not in res.stderr


def test_the_readme_opens_with_a_toy_bpe_that_prints_what_it_shows():
    """The README's first Python block (issue 41: a toy BPE through the public API) runs alone and
    prints exactly the ``text`` block under it; its three pictures are committed, under 300 KB."""
    at = next(i for i, (lang, _) in enumerate(BLOCKS) if lang == "python")
    (_, code), (lang, shown) = BLOCKS[at], BLOCKS[at + 1]
    assert lang == "text" and "modtok.bpe" in code and README.index(code) < README.index("## Three commands")
    res = _run([sys.executable, "-c", code], REPO, dict(os.environ), timeout=300)
    assert res.stdout == shown
    for image in re.findall(r"\]\((docs/images/[\w.-]+\.png)\)", README):
        assert (REPO / image).stat().st_size < 300_000, image
    assert len(re.findall(r"\]\((docs/images/[\w.-]+\.png)\)", README)) == 3


@pytest.mark.slow
def test_make_images_draws_the_readme_pictures(tmp_path):
    """``make images`` runs ``bench/readme_images.py``; the script, run into a scratch folder (the
    committed PNGs stay as they are), writes the three pictures under 300 KB. Needs the shared pool +
    FLORES-200 and Chromium: skipped without them."""
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    recipe = makefile[makefile.index("\nimages:"):makefile.index("\nlab:")]
    assert "bench/readme_images.py" in recipe
    shared = REPO.parent / "shared" / "data"
    if not (shared / "pool").is_dir() or not Path("/usr/bin/chromium").exists():
        pytest.skip("make images needs ../shared/data and /usr/bin/chromium")
    e = dict(os.environ, MODTOK_POOL=str(shared / "pool"), MODTOK_FLORES=str(shared / "flores200"))
    e.pop("MODTOK_SMOKE", None)
    _run([sys.executable, "bench/readme_images.py", "--out", str(tmp_path)], REPO, e, timeout=600)
    for name in ("playground.png", "playground-merges.png", "stepper-03-lattice.png"):
        assert 0 < (tmp_path / name).stat().st_size < 300_000, name


@pytest.mark.slow
def test_shell_blocks_run_as_typed(env):
    """Every bash block without ``make`` runs as one script, in README order (later
    blocks use what earlier ones wrote), with ``set -euo pipefail``. The README's ``/tmp/``
    paths are moved into the scratch directory: an earlier run's outputs there (or another
    checkout's) are refused as outputs in the way, as they should be. A rerun is refused
    without ``--force``: an earlier output is never overwritten silently."""
    work, e = env
    tmp = work.parent / "tmp"
    tmp.mkdir(exist_ok=True)
    scripts = [body.replace("/tmp/", f"{tmp}/") for lang, body in BLOCKS if lang == "bash" and "make " not in body]
    assert any("modtok encode" in body for body in scripts)
    for body in scripts:
        _run(["bash", "-euo", "pipefail", "-c", body], work, e)
    again = next(line for body in scripts for line in body.splitlines() if line.startswith("modtok count ") and "$" not in line)
    res = subprocess.run(["bash", "-c", again], cwd=work, env=e, capture_output=True, text=True, timeout=600)
    assert res.returncode == 2 and "pass --force to replace it" in res.stderr, res.stderr


def test_make_test_is_the_ci_command():
    assert "make test" in shell_commands()
    assert (REPO / ".ci" / "run").read_text().strip().splitlines()[-1] == "make test"


@pytest.mark.slow
def test_make_demo_writes_reports_with_figures(env):
    _, e = env
    # As a user runs it: the Makefile finds the data (../shared, or the variables typed).
    e = {k: v for k, v in e.items() if k not in ("MODTOK_POOL", "MODTOK_FLORES")}
    # the README's /tmp/ paths in the scratch directory, as in test_shell_blocks_run_as_typed
    # (which makes the example corpus there when it runs first; made here when it did not)
    tmp = env[0].parent / "tmp"
    demos = [c.replace("/tmp/", f"{tmp}/") for c in shell_commands() if c.startswith("make demo")]
    assert demos
    if any(f"{tmp}/modtok-own" in c for c in demos) and not (tmp / "modtok-own").exists():
        _run(["modtok", "example-corpus", str(tmp / "modtok-own")], env[0], e)
    notebook = REPO / DEMO_NOTEBOOK
    report = REPO / "reports" / f"{notebook.stem}.html"
    saved = REPO / "reports" / "paper_vs_here" / "modular_tokenizers_unigram.json"
    page = REPO / "reports" / "reproduction.md"
    stale = REPO / "reports" / "paper_vs_here" / "parity_bpe.json"  # an earlier demo's table, another notebook
    for command in demos:
        for path in (report, saved, page):
            path.unlink(missing_ok=True)
        stale.parent.mkdir(parents=True, exist_ok=True)
        stale.write_text("{}", encoding="utf-8")
        report.write_text("STALE REPORT", encoding="utf-8")  # a notebook that fails now must not leave this
        _run(f"{command} NOTEBOOKS={DEMO_NOTEBOOK}", REPO, dict(e, MODTOK_SMOKE="1"), timeout=900)
        assert not stale.exists(), "make demo kept an earlier run's table beside this run's"
        html = report.read_text(encoding="utf-8")
        assert "STALE REPORT" not in html
        assert "plotly" in html and "Plotly.newPlot" in html, "the report has no plotly figure"
        assert json.loads(saved.read_text(encoding="utf-8"))["study"] == "modular_tokenizers_unigram"
        # make demo ends with the reproduction page, holding the table the notebook just saved
        row = next(line for line in page.read_text(encoding="utf-8").splitlines()
                   if line.startswith(f"| {notebook.stem} | modular_tokenizers_unigram |"))
        assert row.endswith("| up to date |"), row


@pytest.mark.slow
def test_make_report_writes_the_reproduction_page(env, tmp_path):
    """``make report`` as typed, on a scratch folder holding one notebook's saved table
    (written through ``paper_vs_here.table`` as the notebook's last cell writes it)."""
    _, e = env
    assert "make report" in shell_commands()
    save = ("from modtok.studies import paper_vs_here as p; "
            "p.table('parity_bpe', {c.key: p.NotMeasured('test') for c in p.claims('parity_bpe')}, 'readme')")
    _run([sys.executable, "-c", save], REPO, dict(e, MODTOK_REPORTS=str(tmp_path)))
    res = _run(f"make report REPORTS={tmp_path}", REPO, e)
    assert "parity-aware-bpe.txt" in res.stdout
    md = (tmp_path / "reproduction.md").read_text(encoding="utf-8")
    assert "| 05_parity_bpe | parity_bpe | parity-aware-bpe.txt | readme |" in md
    assert "<table>" in (tmp_path / "reproduction.html").read_text(encoding="utf-8")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow
def test_make_lab_serves_jupyterlab(env):
    _, e = env
    assert "make lab" in shell_commands()
    port = _free_port()
    lab_env = dict(e, JUPYTER_PORT=str(port), JUPYTER_TOKEN="readme-test", BROWSER="true")
    proc = subprocess.Popen(["make", "lab"], cwd=REPO, env=lab_env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while True:
            assert proc.poll() is None, proc.stdout.read().decode(errors="replace")[-3000:]
            try:
                url = f"http://127.0.0.1:{port}/lab?token=readme-test"
                with urllib.request.urlopen(url, timeout=5) as r:
                    assert r.status == 200 and b"JupyterLab" in r.read()
                break
            except OSError:
                assert time.monotonic() < deadline, "JupyterLab did not answer within 120 s"
                time.sleep(1)
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
