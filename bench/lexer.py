"""Pre-token counting per core: the ``regex`` reference vs the compiled lexer, same text.

    .venv/bin/python bench/lexer.py [--schemes llama3,o200k] [--pool DIR] [--max-chars N] [--repeats 5]
                                    [--reference-repeats N] [--phases] [--before FILE]

For each scheme, three sides count the pre-tokens of every line of every pool language in
this one process on one core, through the entry points the library uses:

- ``reference``: ``count_by_language(corpus, scheme, engine="regex")`` (``regex`` findall a
  line at a time; a bounded scheme's cut included);
- ``lexer``: ``count_by_language(corpus, scheme)`` (the default engine: the compiled
  pre-tokenizer, then the ``Counter`` of strings the callers read);
- ``arrays``: ``count_arrays(corpus, scheme)`` (the lexer's distinct pre-tokens as UTF-8
  arrays for the BPE engine, all languages in one table: no string per pre-token), on the
  lexer's engine (``lexer.ENGINE``: the C lexer when it is built, printed at the start);
- ``numba``: the same with the numba lexer (``lexer.using("numba")``), when the C lexer is
  built: the two engines interleaved in one process.

All three must agree exactly (checked on the first repeat). Interleaved (reference, lexer,
arrays, ...), ``--repeats`` times (the reference only in the first ``--reference-repeats``:
at about 10 MB/s it is most of the run); the median and the range of each, in MB of UTF-8
per second of wall time and per second of this process's CPU time (on a shared machine the
CPU time is the per-core figure), the ratios of the medians, and ``/proc/loadavg`` beside
each scheme. The class table and the kernels are built before the clock starts.

``--before FILE``: a fourth side, ``before``: ``count_arrays`` with another version of
``modtok/text/lexer.py`` (``git show main:modtok/text/lexer.py > /tmp/lexer_main.py``)
in place of this checkout's, interleaved with the others (a before/after in one process).

``--phases``: instead, where the CPU time of ``count_arrays`` goes, scheme by scheme (the
median of ``--repeats`` calls, with its system time and minor page faults: the kernel's
share, mostly the page faults of new memory): the lexer's kernels and helpers are wrapped
with timers while the real call runs. On the C lexer: ``_c_count`` (the one pass: code points, classes,
UTF-8, cut, hash count) and ``union`` (the languages' words in one table and the dense
words x languages matrix); on numba (``--engine numba``): ``_code_points`` (the UTF-32
copy), ``_lex`` (the class lookup and the cut), ``_unique`` (the hash count), ``_utf8`` and
``union``. The rest is Python (a bounded scheme's re-cut; on numba also joining lines, line
ends, blocks).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import platform
import resource
import statistics
import sys
import time

import numpy as np

from modtok.text import data, lexer, pretokenize
from modtok.text.pretokenize import SCHEMES, count_arrays, count_by_language


def timed(fn):
    """``(result, wall seconds, CPU seconds)`` of ``fn()``."""
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - wall, time.process_time() - cpu


def summary(mb: float, seconds: list[float]) -> str:
    rates = sorted(mb / s for s in seconds)
    return f"{mb / statistics.median(seconds):7.1f} MB/s [{rates[0]:.1f}-{rates[-1]:.1f}]"


def loadavg() -> str:
    try:
        return open("/proc/loadavg").read().split()[0]
    except OSError:
        return "?"


# Two languages (the union of their words compiles too) and a spaceless run (a bounded scheme's re-cut).
WARM_UP = {"x": ["warm-up: compile the kernels"], "y": ["東京タワーは" * 4]}


def counting_with(path: str):
    """``count_arrays`` with the lexer module loaded from ``path`` in place of this checkout's."""
    spec = importlib.util.spec_from_file_location("lexer_before", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # numba's cached kernels find their module by its name
    spec.loader.exec_module(module)

    def count(corpus, scheme):
        saved, pretokenize.lexer = pretokenize.lexer, module
        try:
            return count_arrays(corpus, scheme)
        finally:
            pretokenize.lexer = saved
    return count


def with_numba(fn):
    """``fn()`` counted by the numba lexer."""
    with lexer.using("numba"):
        return fn()


def same_arrays(a, b) -> bool:
    """The same words, in the same order, with the same counts (WordCounts)."""
    return a.languages == b.languages and all(np.array_equal(x, y) for x, y in zip(a[1:], b[1:]))


PHASES = {"c": ("_c_count", "union"), "numba": ("_code_points", "_lex", "_unique", "_utf8", "union")}


def phases(corpus, scheme: str, mb: float, repeats: int) -> None:
    """Print the CPU seconds of each of :data:`PHASES` of the engine inside ``count_arrays(corpus, scheme)``."""
    names = PHASES[lexer.ENGINE]
    spent = dict.fromkeys(names, 0.0)
    originals = {name: getattr(lexer, name) for name in names}

    def timer(name):
        def call(*args, **kw):
            cpu = time.process_time()
            try:
                return originals[name](*args, **kw)
            finally:
                spent[name] += time.process_time() - cpu
        return call

    rows = []
    try:
        for name in names:
            setattr(lexer, name, timer(name))
        for _ in range(repeats):
            spent.update(dict.fromkeys(names, 0.0))
            before = resource.getrusage(resource.RUSAGE_SELF)
            _, _, cpu = timed(lambda: count_arrays(corpus, scheme))
            after = resource.getrusage(resource.RUSAGE_SELF)
            rows.append((cpu, dict(spent), after.ru_stime - before.ru_stime, after.ru_minflt - before.ru_minflt))
    finally:
        for name, fn in originals.items():
            setattr(lexer, name, fn)
    cpu, spent, system, faults = sorted(rows, key=lambda r: r[0])[len(rows) // 2]
    parts = [*spent.items(), ("python (rest)", cpu - sum(spent.values()))]
    print(f"{scheme:22} {lexer.ENGINE:5} {mb / cpu:6.1f} MB/s CPU, {cpu:.2f} s: "
          + ", ".join(f"{name} {s:.2f} ({100 * s / cpu:.0f}%)" for name, s in parts)
          + f"; of the CPU, system {system:.2f} s ({faults} minor page faults); CPU s of the {repeats}: "
          + " ".join(f"{r[0]:.2f}" for r in rows) + f"; load {loadavg()}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--schemes", default=",".join(SCHEMES))
    ap.add_argument("--pool", default=os.environ.get("MODTOK_POOL", "../shared/data/pool"))
    ap.add_argument("--max-chars", type=int, default=None, help="cap per language (a deterministic sample)")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--reference-repeats", type=int, default=None, help="default: --repeats")
    ap.add_argument("--phases", action="store_true", help="where count_arrays' CPU time goes (no sides)")
    ap.add_argument("--before", default=None, help="another lexer.py: a 'before' side of count_arrays")
    ap.add_argument("--engine", choices=("c", "numba"), default=None, help="--phases of this engine (default: the lexer's)")
    ap.add_argument("--no-reference", action="store_true", help="leave out the reference side (checked against 'lexer')")
    args = ap.parse_args()
    ref_repeats = args.repeats if args.reference_repeats is None else args.reference_repeats

    corpus = data.load_pool(root=args.pool, max_chars=args.max_chars)
    mb = sum(len(line.encode()) for lines in corpus.values() for line in lines) / 1e6
    print(f"{len(corpus)} languages, {mb:.1f} MB UTF-8, {args.repeats} interleaved repeats ({ref_repeats} of the "
          f"reference), one process, {os.cpu_count()} cores, {platform.processor() or platform.machine()}, "
          f"load {loadavg()}")
    _, wall, _ = timed(lexer.class_table)
    print(f"class table built in {wall:.1f} s (once a process); lexer engine: {lexer.ENGINE}"
          + (f" ({lexer.ENGINE_NOTE})" if lexer.ENGINE_NOTE else ""))
    sides = {"reference": lambda s: count_by_language(corpus, s, engine="regex"),
             "lexer": lambda s: count_by_language(corpus, s),
             "arrays": lambda s: count_arrays(corpus, s)}
    if lexer.ENGINE == "c":
        sides["numba"] = lambda s: with_numba(lambda: count_arrays(corpus, s))
    if args.no_reference:
        del sides["reference"]
    if args.before:
        before = counting_with(args.before)
        sides["before"] = lambda s: before(corpus, s)

    if args.phases:
        with lexer.using(args.engine or lexer.ENGINE):
            for scheme in args.schemes.split(","):
                count_arrays(WARM_UP, scheme)
                phases(corpus, scheme, mb, args.repeats)
        return
    print(f"{'scheme':22} {'side':9} {'wall':>30} {'CPU':>30}")
    for scheme in args.schemes.split(","):
        _, wall, _ = timed(lambda: with_numba(lambda: count_arrays(WARM_UP, scheme)))
        count_arrays(WARM_UP, scheme)
        if args.before:
            before(WARM_UP, scheme)
        times = {side: ([], []) for side in sides}
        load = [loadavg()]
        for r in range(args.repeats):
            results = {}
            for side, fn in sides.items():
                if side == "reference" and r >= ref_repeats:
                    continue
                results[side], w, c = timed(lambda: fn(scheme))
                times[side][0].append(w)
                times[side][1].append(c)
            if r == 0:
                if "reference" in results:
                    assert results["reference"] == results["lexer"], f"{scheme}: the lexer's counts differ"
                assert results["arrays"].to_counters() == results["lexer"], f"{scheme}: the arrays differ"
                for side in ("before", "numba"):
                    if side in results:
                        assert same_arrays(results[side], results["arrays"]), f"{scheme}: {side}'s arrays differ"
        load.append(loadavg())
        for side, (w, c) in times.items():
            print(f"{scheme:22} {side:9} {summary(mb, w):>30} {summary(mb, c):>30}")
        for side in [s for s in sides if s != "reference" and "reference" in sides]:
            ratio = [statistics.median(times["reference"][i]) / statistics.median(times[side][i]) for i in (0, 1)]
            print(f"{scheme:22} {side + '/ref':9} {ratio[0]:29.1f}x {ratio[1]:29.1f}x")
        for side in ("before", "numba"):
            if side in sides:
                ratio = statistics.median(times["arrays"][1]) / statistics.median(times[side][1])
                print(f"{scheme:22} {f'arrays/{side} CPU time':26} {ratio:29.2f}x")
        print(f"{scheme:22} counts identical; compile {wall:.1f} s; load {' -> '.join(load)}", flush=True)


if __name__ == "__main__":
    main()
