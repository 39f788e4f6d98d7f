"""Where the time of standard BPE goes, phase by phase, at one size (issue 23).

    python bench/bpe_phases.py --langs eng_Latn npi_Deva --chars 1000000 --vocab 8000
    python bench/bpe_phases.py --langs 26 --slice-mb 20 --vocab 32000      # bpe_train.py's [1]
    python bench/bpe_phases.py --langs pool --chars all --vocab 128000     # the whole pool
    python bench/bpe_phases.py --langs eng_Latn deu_Latn tur_Latn vie_Latn rus_Cyrl ell_Grek npi_Deva tel_Telu \
        --chars 1000000 --sizes 32000 128000 --ab 5

One process, one training, the phases of ``standard.train_from_lines`` (what a user calls
from lines) timed by wrapping the public kernels of :mod:`modtok.bpe.kernels` (the engine
reads them as ``K.<name>`` at call time, so a wrapper sees every call):

- ``import``: importing modtok's BPE modules (numba included);
- ``first call``: a tiny training in this fresh process: loading the cached numba
  kernels (or compiling them on a cold cache);
- ``counting``: ``count_arrays`` on every core (the compiled lexer: the distinct pre-tokens
  as arrays, no string per pre-token; before issue 44 ``count_by_language``'s Counters, then
  ``words_from_counts``);
- ``engine setup``: ``Engine.from_word_counts`` less ``init_counts``; ``init_counts``: the
  first pair counts and occurrence lists;
- ``merge loop``: ``standard.learn``, split into the merge kernels (``merge_greedy``, since
  issue 44 many merges and their best pairs per call; ``merge`` / ``merge_best`` before), the ``best``
  kernel and the rest (the Python per merge: ``Engine.merge`` / ``best_pair`` wrappers,
  ``BPEModel.add_merge``, the progress bar), and the numba dispatch share of the
  kernel calls (a call's unboxing of its named tuples, measured by calling ``best``
  on the final, settled state: it returns at once);
  (``BPEModel.extend`` since issue 44: a kernel call's merges at once);
- ``export``: ``hf_tokenizer(model)`` (the ``tokenizer.json`` dict + HF's parser).

``--sizes V1 V2 ... --ab N`` (issue 44): the merge loop alone at each size, interleaved
(V1, V2, ..., V1, V2, ...), ``N`` times, on the same counts: a smaller vocabulary must not
take longer than a larger one whose merges include it (session 17 measured 32k 7.35 s and
128k 3.99 s in two runs at load 15-16).

``--ab N`` (issue 44): then the merge loop before and after it ran in the kernel, on the
same counts, ``N`` times interleaved (before, after, before, ...; a fresh engine each, its
build not timed): ``one merge per call`` is the loop ``standard.learn`` ran until then
(``best_pair`` / ``BPEModel.add_merge`` / ``merge`` per merge), ``standard.learn`` the
one that makes up to ``standard.BATCH`` merges per kernel call. Both must give the same
merges and ids.

The timing wrappers add about a microsecond per kernel call; the loop's total is
``standard.learn`` as a user calls it.
"""

from __future__ import annotations

import time

T0 = time.perf_counter()

import argparse  # noqa: E402
import os  # noqa: E402
import statistics  # noqa: E402

from modtok.bpe import kernels, standard  # noqa: E402
from modtok.bpe.engine import Engine  # noqa: E402
from modtok.bpe.export import hf_tokenizer  # noqa: E402
from modtok.bpe.model import BPEModel  # noqa: E402
from modtok.text import data  # noqa: E402
from modtok.text.pretokenize import count_arrays  # noqa: E402

T_IMPORT = time.perf_counter() - T0

from bpe_train import select_languages, select_text  # noqa: E402  (bench/ is on sys.path when run)


class Timed:
    """Replace ``kernels.<name>`` by a wrapper that sums its wall time and calls."""

    def __init__(self, name: str):
        self.name, self.fn, self.seconds, self.calls = name, getattr(kernels, name), 0.0, 0
        setattr(kernels, name, self)

    def __call__(self, *args):
        t = time.perf_counter()
        out = self.fn(*args)
        self.last, self.t_last = args, t
        self.seconds += time.perf_counter() - t
        self.calls += 1
        return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--langs", nargs="+", default=["26"],
                    help="pool languages, or 'pool' (all of them) or '26' (bpe_train.py's default set)")
    ap.add_argument("--chars", default=None, help="characters per language, or 'all'")
    ap.add_argument("--slice-mb", default=None, help="total MB shared equally by the languages (as bpe_train [1])")
    ap.add_argument("--vocab", type=int, default=32000)
    ap.add_argument("--scheme", default="llama3")
    ap.add_argument("--ab", type=int, default=0, help="then time the loop before/after issue 44, N times each")
    ap.add_argument("--sizes", type=int, nargs="+", help="then time the loop alone at these sizes, --ab times each")
    args = ap.parse_args()
    langs = select_languages(args.langs)
    pool, what = select_text(langs, args.chars, args.slice_mb)
    lines = [line for ls in pool.values() for line in ls]
    mb = sum(len(line.encode("utf-8")) + 1 for line in lines) / 1e6
    print(f"languages ({len(langs)}): {' '.join(langs)}")
    print(f"text: {what}, {mb:.1f} MB, {len(lines):,} lines; vocab {args.vocab}; scheme {args.scheme}")

    t = time.perf_counter()
    standard.train_from_lines(["ab bc ab"], 258)  # numba: load (or compile) the lexer's and the engine's kernels
    first = time.perf_counter() - t

    names = ("init_counts", "encode_words", "merge", "merge_best", "merge_greedy", "best", "reserve")
    wrapped = {n: Timed(n) for n in names if hasattr(kernels, n)}  # merge_best: issue 23; merge_greedy: 44
    for n in ("merge_best", "merge_greedy"):
        if n not in wrapped:
            wrapped[n] = Timed.__new__(Timed)
            wrapped[n].seconds, wrapped[n].calls = 0.0, 0
    workers = os.cpu_count() or 1
    t = time.perf_counter()
    counts = count_arrays({"all": lines}, args.scheme, workers)
    t_count = time.perf_counter() - t
    for w in wrapped.values():
        w.seconds, w.calls = 0.0, 0
    t = time.perf_counter()
    engine = Engine.from_word_counts(counts, capacity=args.vocab + 1)
    t_engine = time.perf_counter() - t
    t_init = wrapped["init_counts"].seconds
    t = time.perf_counter()
    model = standard.learn(engine, BPEModel([], args.scheme), args.vocab)
    t_loop = time.perf_counter() - t
    n_merges = len(model.merges)
    t_merge, t_best, t_reserve = (wrapped[n].seconds for n in ("merge", "best", "reserve"))
    merging = [wrapped[n] for n in ("merge", "merge_best", "merge_greedy")]
    t_merge += sum(w.seconds for w in merging[1:])  # merge_greedy: the merges and the best pairs
    calls = wrapped["best"].calls + sum(w.calls for w in merging)
    # dispatch: a call of `best` on the settled final state returns at once (its top is live),
    # so its time is the unboxing of the Pairs tuple (19 arrays) + the rank array + the call
    last_merge = max((w for w in merging if w.calls), key=lambda w: w.t_last)
    if last_merge is wrapped["merge_greedy"]:
        _, rank, st = last_merge.last[:3]  # (words, rank, pairs, ...) of the last call: the final state
    else:
        _, _, _, rank, st = last_merge.last  # (pid, c, words, rank, pairs) of the last merge
    best_fn, last = wrapped["best"].fn, (st, rank, -1)
    best_fn(*last)
    reps = 20_000
    t = time.perf_counter()
    for _ in range(reps):
        best_fn(*last)
    per_call = (time.perf_counter() - t) / reps
    t = time.perf_counter()
    tok = hf_tokenizer(model)
    t_export = time.perf_counter() - t
    total = t_count + t_engine + t_loop + t_export

    def row(name, s, note=""):
        print(f"  {name:34s} {s:8.3f} s  {100 * s / total:5.1f}%  {note}")

    print(f"\nphases (one run; end to end from text {total:.2f} s; {n_merges:,} merges, "
          f"{len(counts.lengths):,} unique pre-tokens, {tok.get_vocab_size():,} tokens)")
    print(f"  {'import modtok.bpe (not in total)':34s} {T_IMPORT:8.3f} s")
    print(f"  {'first call: numba load (not in total)':34s} {first:8.3f} s")
    row("counting", t_count, f"({workers} workers)")
    row("engine setup (less init_counts)", t_engine - t_init)
    row("init_counts kernel", t_init)
    row("merge loop", t_loop, f"({1e6 * t_loop / max(n_merges, 1):.1f} us per merge)")
    row("  merge kernels (+ next best)", t_merge, f"({calls:,} kernel calls)")
    row("  best kernel", t_best)
    row("  reserve (growth)", t_reserve, f"({wrapped['reserve'].calls} calls)")
    py = t_loop - t_merge - t_best - t_reserve
    row("  Python per merge", py, f"({1e6 * py / max(n_merges, 1):.1f} us per merge)")
    row("  numba dispatch (in the kernels)", per_call * calls,
        f"({1e6 * per_call:.2f} us per call x {calls:,} calls)")
    row("export (hf_tokenizer)", t_export)
    for w in wrapped.values():  # unwrap: what follows times the loops as a user calls them
        if hasattr(w, "fn"):
            setattr(kernels, w.name, w.fn)
    if args.sizes:
        sizes(counts, args.sizes, args.scheme, args.ab or 3)
    elif args.ab:
        ab(counts, args.vocab, args.scheme, args.ab)


def one_merge_per_call(engine: Engine, model: BPEModel, vocab_size: int) -> BPEModel:
    """``standard.learn`` before issue 44: a Python round-trip (and a kernel call) per merge."""
    while len(model) < vocab_size and (best := engine.best_pair()) is not None:
        engine.merge(best[0], best[1], model.add_merge(best[0], best[1]))
    return model


def sizes(counts, vocabs: list[int], scheme: str, repeats: int) -> None:
    """``standard.learn`` alone at each size, interleaved on fresh engines (build not timed)."""
    times: dict[int, list[float]] = {v: [] for v in vocabs}
    merges = {}
    for _ in range(repeats):
        for v in vocabs:
            engine = Engine.from_word_counts(counts, capacity=v + 1)
            t = time.perf_counter()
            merges[v] = len(standard.learn(engine, BPEModel([], scheme), v).merges)
            times[v].append(time.perf_counter() - t)
    print(f"\nmerge loop alone at each size ({repeats} interleaved each, load {os.getloadavg()[0]:.1f})")
    for v, ts in times.items():
        med = statistics.median(ts)
        print(f"  vocab {v:>7,}: {merges[v]:>7,} merges, median {med:7.3f} s [{min(ts):.3f}, {max(ts):.3f}]  "
              f"{1e6 * med / max(merges[v], 1):6.1f} us per merge")


def ab(counts, vocab: int, scheme: str, repeats: int) -> None:
    """The two loops interleaved on fresh engines; medians, ranges, the ratio."""
    arms = {"one merge per call": one_merge_per_call, "standard.learn": standard.learn}
    times: dict[str, list[float]] = {name: [] for name in arms}
    models = {}
    for _ in range(repeats):
        for name, loop in arms.items():
            engine = Engine.from_word_counts(counts, capacity=vocab + 1)
            t = time.perf_counter()
            models[name] = loop(engine, BPEModel([], scheme), vocab)
            times[name].append(time.perf_counter() - t)
    a, b = models.values()
    same = a.merges == b.merges and a.results == b.results
    print(f"\nmerge loop before / after ({repeats} interleaved each, load {os.getloadavg()[0]:.1f}); "
          f"merges identical: {same} ({len(b.merges):,})")
    med = {name: statistics.median(v) for name, v in times.items()}
    for name, v in times.items():
        print(f"  {name:20s} median {med[name]:7.3f} s [{min(v):.3f}, {max(v):.3f}]  "
              f"{1e6 * med[name] / len(b.merges):6.1f} us per merge")
    print(f"  after / before: {med['standard.learn'] / med['one merge per call']:.3f}")
    if not same:
        raise SystemExit("the two loops learned different merges")


if __name__ == "__main__":
    data.pool_dir()  # fail early when no pool is configured
    main()
