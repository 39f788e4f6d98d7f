"""Pre-token counting per core: the ``regex`` reference vs the compiled lexer, same text.

    .venv/bin/python bench/lexer.py [--schemes llama3,o200k] [--pool DIR] [--max-chars N] [--repeats 5]

For each scheme, both sides count the pre-tokens of every line of every pool language
(``{lang: Counter}``) in this one process on one core: the reference is
``count_pretokens(lines, scheme)`` (``regex`` findall a line at a time, workers=1), the
lexer ``modtok.text.lexer.count(lines, scheme)`` (everything included: joining the lines,
the UTF-32 copy, the cut, the count and the Counter of strings). The two must agree
exactly (checked on the first repeat). Interleaved (reference, lexer, reference, ...),
``--repeats`` times; the median and the range of each, in MB of UTF-8 per second of wall
time and per second of this process's CPU time (on a shared machine the CPU time is the
per-core figure: wall time there also counts the other processes' turns), and the ratio
of the medians. The class table and the kernels are built before the clock starts (their
one-time costs are printed).
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time

from modtok.text import data, lexer
from modtok.text.pretokenize import count_pretokens


def timed(fn):
    """``(result, wall seconds, CPU seconds)`` of ``fn()``."""
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - wall, time.process_time() - cpu


def summary(mb: float, seconds: list[float]) -> str:
    rates = sorted(mb / s for s in seconds)
    return f"{mb / statistics.median(seconds):7.1f} MB/s [{rates[0]:.1f}-{rates[-1]:.1f}]"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--schemes", default=",".join(lexer.exact_schemes()))
    ap.add_argument("--pool", default=os.environ.get("MODTOK_POOL", "../shared/data/pool"))
    ap.add_argument("--max-chars", type=int, default=None, help="cap per language (a deterministic sample)")
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()

    corpus = data.load_pool(root=args.pool, max_chars=args.max_chars)
    mb = sum(len(line.encode()) for lines in corpus.values() for line in lines) / 1e6
    print(f"{len(corpus)} languages, {mb:.1f} MB UTF-8, {args.repeats} interleaved repeats, one process, "
          f"{os.cpu_count()} cores, {platform.processor() or platform.machine()}")
    _, wall, _ = timed(lexer.class_table)
    print(f"class table built in {wall:.1f} s (once a process)")

    def ref(scheme):
        return {lang: count_pretokens(lines, scheme) for lang, lines in corpus.items()}

    def ours(scheme):
        return {lang: lexer.count(lines, scheme) for lang, lines in corpus.items()}

    print(f"{'scheme':14} {'side':9} {'wall':>30} {'CPU':>30}")
    for scheme in args.schemes.split(","):
        _, wall, _ = timed(lambda: lexer.count(["warm-up: compile the kernels"], scheme))
        times = {"reference": ([], []), "lexer": ([], [])}
        for r in range(args.repeats):
            results = {}
            for side, fn in (("reference", ref), ("lexer", ours)):
                results[side], w, c = timed(lambda: fn(scheme))
                times[side][0].append(w)
                times[side][1].append(c)
            if r == 0:
                assert results["reference"] == results["lexer"], f"{scheme}: the lexer's counts differ"
        for side, (w, c) in times.items():
            print(f"{scheme:14} {side:9} {summary(mb, w):>30} {summary(mb, c):>30}")
        ratio = [statistics.median(times["reference"][i]) / statistics.median(times["lexer"][i]) for i in (0, 1)]
        print(f"{scheme:14} {'speed-up':9} {ratio[0]:29.1f}x {ratio[1]:29.1f}x   (counts identical; compile {wall:.1f} s)")


if __name__ == "__main__":
    main()
