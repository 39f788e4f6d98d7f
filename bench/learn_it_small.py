"""Run All of each notebook's "Learn it small" section, headless, with no data configured.

A class's clock (issue 41): the toy sections must run in seconds at every size setting and
with no data at all. For each notebook the cells of its "## Learn it small" lesson (the heading,
the toy's cell and its prose, not the study's setup that follows) are executed in a new kernel
(nbclient), with ``MODTOK_POOL``, ``MODTOK_FLORES``,
``MODTOK_EXTRA``, ``MODTOK_MANIFEST``, ``MODTOK_EVAL`` and ``MODTOK_SMOKE`` unset; the time is
from the first cell's start to the last cell's end (kernel start-up excluded, imports
included), with the machine's load beside it::

    .venv/bin/python bench/learn_it_small.py            # every numbered notebook
    .venv/bin/python bench/learn_it_small.py 03 07
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import jupytext
import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]
UNSET = ("MODTOK_POOL", "MODTOK_FLORES", "MODTOK_EXTRA", "MODTOK_MANIFEST", "MODTOK_EVAL", "MODTOK_SMOKE")


def learn_it_small(notebook: nbformat.NotebookNode) -> list:
    """The cells from the "## Learn it small" heading to the first code cell that is not the
    lesson's (the study's setup, which follows in the same section: imports, data, sizes). A
    lesson cell runs the toy: it imports :mod:`modtok.studies.lessons`.

    >>> cell = nbformat.v4.new_markdown_cell
    >>> nb = nbformat.v4.new_notebook(cells=[cell("# 01"), cell("## Learn it small"),
    ...     nbformat.v4.new_code_cell("from modtok.studies.lessons import bpe"), cell("Same toy, fast engine."),
    ...     nbformat.v4.new_code_cell("corpora = load()")])
    >>> [c.source for c in learn_it_small(nb)]
    ['## Learn it small', 'from modtok.studies.lessons import bpe', 'Same toy, fast engine.']
    """
    start = next(i for i, c in enumerate(notebook.cells) if c.source.startswith("## Learn it small"))
    end = next((i for i, c in enumerate(notebook.cells) if i > start and c.cell_type == "code"
                and "modtok.studies.lessons" not in c.source), len(notebook.cells))
    return notebook.cells[start:end]


def time_section(path: Path) -> tuple[float, int]:
    """``(seconds, code cells)`` of one Run All of ``path``'s section in a new kernel."""
    notebook = jupytext.read(path)
    notebook.cells = learn_it_small(notebook)
    client = NotebookClient(notebook, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(ROOT)}})
    with client.setup_kernel():
        t0 = time.perf_counter()
        for index, cell in enumerate(notebook.cells):
            client.execute_cell(cell, index)
        seconds = time.perf_counter() - t0
    return seconds, sum(c.cell_type == "code" for c in notebook.cells)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("notebooks", nargs="*", help="notebook numbers, e.g. 03 07 (default: all)")
    args = ap.parse_args()
    for name in UNSET:
        os.environ.pop(name, None)
    os.environ["PYTHONPATH"] = str(ROOT)
    paths = [p for p in sorted((ROOT / "notebooks").glob("[0-9]*.py"))
             if not args.notebooks or p.name[:2] in args.notebooks]
    print("| notebook | code cells | Run All of Learn it small | load (1 min) |\n|---|---:|---:|---:|")
    for path in paths:
        load = os.getloadavg()[0]
        seconds, n = time_section(path)
        print(f"| {path.stem} | {n} | {seconds:.1f} s | {load:.2f} |", flush=True)


if __name__ == "__main__":
    sys.exit(main())
