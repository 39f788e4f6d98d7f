"""Run All of a notebook twice, headless, on one empty results cache: the first computes, the second reads back.

What a person waits for when they open a notebook a second time (issue 44): each notebook is
converted (jupytext) and executed by ``jupyter nbconvert --execute``, in a new kernel each time,
with ``MODTOK_RESULTS`` pointing at a new, empty cache directory, so the first Run All fills it
and the second reads from it. Prints the wall time of each, the machine's load at the start,
and the cache's size after the first::

    MODTOK_POOL=../shared/data/pool MODTOK_FLORES=../shared/data/flores200 \\
        .venv/bin/python bench/run_all_twice.py 06 07 [--smoke]

A run that fails says so (and where its log is) and the others go on.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def run_all(notebook: Path, out: Path, env: dict) -> tuple[float, int]:
    """``(seconds, return code)`` of one headless Run All of ``notebook`` (an ``.ipynb``)."""
    t0 = time.perf_counter()
    with open(out.with_suffix(".log"), "w") as log:
        rc = subprocess.run([str(BIN / "jupyter"), "nbconvert", "--to", "notebook", "--execute",
                             "--ExecutePreprocessor.timeout=7200", "--output", str(out), str(notebook)],
                            env=env, cwd=out.parent, stdout=log, stderr=subprocess.STDOUT).returncode
    return time.perf_counter() - t0, rc


def cell_times(executed: Path, top: int = 3) -> str:
    """The sum of the cells' execution times (nbconvert's per-cell timing) and the ``top``
    slowest cells, each by its first source line: where a Run All's time went."""
    import json
    from datetime import datetime

    def seconds(cell) -> float:
        ex = cell.get("metadata", {}).get("execution", {})
        start, end = ex.get("iopub.execute_input"), ex.get("shell.execute_reply")
        if not (start and end):
            return 0.0
        return (datetime.fromisoformat(end.replace("Z", "+00:00")) -
                datetime.fromisoformat(start.replace("Z", "+00:00"))).total_seconds()
    try:
        cells = [c for c in json.loads(executed.read_text())["cells"] if c["cell_type"] == "code"]
    except (OSError, ValueError, KeyError):
        return "cells: (no executed notebook)"
    timed = sorted(((seconds(c), "".join(c["source"]).strip().splitlines()[0][:50] if c["source"] else "")
                    for c in cells), reverse=True)
    slowest = ", ".join(f"{t:.1f} s `{first}`" for t, first in timed[:top])
    return f"cells {sum(t for t, _ in timed):.1f} s (slowest: {slowest})"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("notebooks", nargs="+", help="notebook numbers, e.g. 06 07")
    ap.add_argument("--smoke", action="store_true", help="MODTOK_SMOKE=1 sizes")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="modtok-run-all-"))
    for number in args.notebooks:
        [source] = sorted((ROOT / "notebooks").glob(f"{number}_*.py"))
        cache = work / f"results-{number}"
        env = {**os.environ, "MODTOK_RESULTS": str(cache), "PYTHONPATH": str(ROOT), "PYTHONHASHSEED": "0"}
        if args.smoke:
            env["MODTOK_SMOKE"] = "1"
        notebook = work / f"{source.stem}.ipynb"
        subprocess.run([str(BIN / "jupytext"), "--quiet", "--to", "ipynb", "--output", str(notebook), str(source)],
                       check=True)
        times = []
        for run in ("first", "second"):
            load = os.getloadavg()[0]
            seconds, rc = run_all(notebook, work / f"{source.stem}.{run}.ipynb", env)
            times.append(f"{run} {seconds:.1f} s (load {load:.1f} at the start; "
                         f"{cell_times(work / f'{source.stem}.{run}.ipynb')})"
                         + (f" FAILED rc {rc}: see {work / f'{source.stem}.{run}.log'}" if rc else ""))
            if run == "first":
                size = sum(p.stat().st_size for p in cache.rglob("*.pkl"))
                times[-1] += f", cache {len(list(cache.rglob('*.pkl')))} entries {size / 1e6:.1f} MB"
        print(f"{source.stem}{' (smoke)' if args.smoke else ''}: " + "; ".join(times), flush=True)


if __name__ == "__main__":
    main()
