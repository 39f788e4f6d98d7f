"""How cost grows with the text (issue 44): counting and training time and peak memory
of standard byte-level BPE at 0.1, 1 and 4 GB of text whose distinct words keep growing.

    python bench/growth.py                                  # 0.1 and 1 GB, every arm, 32k and 256k
    python bench/growth.py --sizes 0.1 1 4 --arms modtok modtok-dask --vocabs 32000 256000
    python bench/growth.py --sizes 0.1 1 --repeats 3 1      # repeats per size (fewer at 1 GB)
    python bench/growth.py --sizes 4 --arms modtok --results r.jsonl; python bench/growth.py --report r.jsonl
    python bench/growth.py --sizes 0.1 --phases 3           # where counting's CPU goes (no arms)
    MODTOK_SMOKE=1 python bench/growth.py                   # 2 MB and 20 MB, 1k vocabulary

**The text.** Repeating a corpus keeps its distinct words fixed (``bench/count_scale.py``
does that on purpose, to isolate streaming); here the number of distinct words grows with
the size, as in real text (Heaps' law, distinct ~ size^beta). The vocabulary is the union
of ``wordfreq``'s ``best`` word lists over its 42 languages (7.2M real word forms, 12
scripts), ranked round-robin by rank (the most frequent word of every language, in the
order of the language codes, then every second one, ...). Words are drawn i.i.d. from a
Zipf law over those ranks, P(r) ~ r^-ZIPF_S, with a seeded ``numpy`` generator, 16 words
to a line. With ZIPF_S = 1.2 the expected distinct words grow as about size^(1/1.2) until
the draws approach the 7.2M forms (about 4M at 4 GB): the curve keeps rising over every
size run here (an exponent of 1 would have seen most of the 7.2M forms by 1 GB). The
file is written in blocks (``--dir``, deleted at the end unless ``--keep``), never held
in memory.

**The arms**, each in a fresh process (its wall times and its CPU seconds, ``cpu_s``: all
phases, all threads and worker processes) whose peak memory is the summed PSS of its process
tree (``bench/_memory.py``; Dask's scheduler, nanny and workers included):

- ``modtok``: ``count_corpora`` in one process (streaming), then ``standard.train`` at
  each vocabulary on those counts;
- ``modtok-dask``: the same counting on a 2-worker Dask ``LocalCluster`` (one task per
  ~64 MB part, the words (arrays) summed on the workers; ``bench/count_scale.py``), then the same
  training in the client process;
- ``hf``: HF ``BpeTrainer`` reading the file (``Tokenizer.train``: its Rust reader,
  pre-tokenizer and trainer), one process per vocabulary;
- ``rustbpe``: karpathy's ``rustbpe`` (the ``bench`` extra) from the file's lines, one
  process per vocabulary.

The peers count and train in one call, so only their end-to-end time is known; modtok's
phases are timed apart. Then the exponents: a least-squares line through log(size) ->
log(quantity) over the sizes run (two sizes: the slope between them), for every time and
memory and for the distinct words; a check that no training time or memory grows faster
than the distinct words (counting reads every byte: its exponent is about 1 by nature);
and the extrapolation to 40 GB on this machine and on a Dask cluster.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from _memory import Stopped, peak_memory_mb  # bench/ is on sys.path when a bench runs

ZIPF_S = 1.2
WORDS_PER_LINE = 16
SEED = 44
BLOCK_WORDS = 1 << 20  # words drawn per block (about 8 MB of text; the gather index is 8x that)
SMOKE = os.environ.get("MODTOK_SMOKE") == "1"


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


# ---------------------------------------------------------------- the text
def word_forms() -> list[str]:
    """wordfreq's ``best`` lists of every language, ranked round-robin, first-seen
    duplicates kept (a form shared by two languages takes its best rank)."""
    import wordfreq

    lists = [list(wordfreq.iter_wordlist(lang, "best")) for lang in sorted(wordfreq.available_languages("best"))]
    seen: dict[str, None] = {}
    for rank in range(max(map(len, lists))):
        for words in lists:
            if rank < len(words):
                seen.setdefault(words[rank], None)
    return list(seen)


def write_text(path: Path, gb: float, forms: list[str], seed: int = SEED) -> dict:
    """Write about ``gb`` GB of Zipf-drawn words to ``path``, ``WORDS_PER_LINE`` to a line.

    Vectorised: every form is stored once as ``form + " "`` in one byte array, a block of
    draws is gathered with ``np.repeat`` and every ``WORDS_PER_LINE``-th separator becomes
    a newline. Returns the bytes, words and lines written."""
    blob = [f.encode("utf-8") + b" " for f in forms]
    lens = np.fromiter(map(len, blob), np.int64, len(blob))
    starts = np.concatenate([[0], np.cumsum(lens)[:-1]])
    data = np.frombuffer(b"".join(blob), np.uint8)
    weights = np.arange(1, len(forms) + 1, dtype=np.float64) ** -ZIPF_S
    cdf = np.cumsum(weights)
    cdf /= cdf[-1]
    rng = np.random.default_rng(seed)
    target, written, words = int(gb * 1e9), 0, 0
    with open(path, "wb") as f:
        while written < target:
            draw = np.minimum(np.searchsorted(cdf, rng.random(BLOCK_WORDS)), len(forms) - 1)
            n = lens[draw]
            ends = np.cumsum(n)
            # byte i of the block comes from data[starts[w] + (i - block start of w)]
            gather = np.repeat(starts[draw] - (ends - n), n) + np.arange(ends[-1])
            out = data[gather]
            out[ends[WORDS_PER_LINE - 1 :: WORDS_PER_LINE] - 1] = ord("\n")
            last = target - written < len(out)
            cut = int(out[: target - written].tobytes().rfind(b"\n")) + 1 if last else len(out)  # whole lines
            f.write(out[:cut].tobytes())
            written += cut
            words += int(np.searchsorted(ends, cut, side="right"))
            if last:
                break
    return {"bytes": written, "words": words}


# ---------------------------------------------------------------- the arms (child processes)
def run_arm(arm: str, path: str, vocabs: list[int], scheme: str, save=lambda out: None) -> dict:
    """One arm in this process: the timings (and distinct words for modtok); ``save`` is called
    with what is known so far after each phase (a run stopped at a deadline keeps it)."""
    out: dict = {"arm": arm}
    if arm in ("modtok", "modtok-dask"):
        from modtok.bpe import standard
        from modtok.text.corpus import open_corpus
        from modtok.text.counts import count_corpora, local_client

        corpora = open_corpus({"all": [path]})
        t = time.perf_counter()
        if arm == "modtok":
            counts = count_corpora(corpora, scheme).by_lang
        else:
            with local_client(2) as client:
                out["cluster_start_s"] = time.perf_counter() - t
                counts = count_corpora(corpora, scheme, client=client).by_lang
        out["count_s"] = time.perf_counter() - t
        out["distinct"] = len(counts["all"])
        save({**out, "cpu_s": _cpu_seconds()})
        for v in vocabs:
            t = time.perf_counter()
            model = standard.train(counts, v, scheme)
            out[f"train_s_{v}"] = time.perf_counter() - t
            out[f"vocab_{v}"] = len(model)
            save({**out, "cpu_s": _cpu_seconds()})
    elif arm == "hf":
        from tokenizers import Tokenizer, models, trainers

        from modtok.text.pretokenize import byte_alphabet, hf_pre_tokenizer

        (v,) = vocabs
        tok = Tokenizer(models.BPE())
        tok.pre_tokenizer = hf_pre_tokenizer(scheme)
        trainer = trainers.BpeTrainer(vocab_size=v, min_frequency=0, initial_alphabet=byte_alphabet(),
                                      show_progress=False, special_tokens=[])
        t = time.perf_counter()
        tok.train([path], trainer)
        out[f"total_s_{v}"] = time.perf_counter() - t
        out[f"vocab_{v}"] = tok.get_vocab_size()
    elif arm == "rustbpe":
        import rustbpe

        from modtok.text.pretokenize import pattern

        (v,) = vocabs
        tok = rustbpe.Tokenizer()
        t = time.perf_counter()
        with open(path, encoding="utf-8") as f:
            tok.train_from_iterator((line.rstrip("\n") for line in f), v, pattern=pattern(scheme))
        out[f"total_s_{v}"] = time.perf_counter() - t
        out[f"vocab_{v}"] = len(tok.get_mergeable_ranks())
    out["cpu_s"] = _cpu_seconds()
    return out


def _cpu_seconds() -> float:
    """User + system CPU of this process (every thread) and its waited-for children (the
    Dask workers, joined when the cluster closes). Unlike wall time it hardly moves with
    the load of a shared machine, so its exponents survive runs at different loads."""
    import resource

    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def measure(arm: str, path: Path, vocabs: list[int], scheme: str, until: float | None = None) -> dict:
    """``run_arm`` in a fresh process, with the peak memory of its process tree; past ``until``
    it is stopped and what it had measured is returned with ``"stopped": true``."""
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
        result = Path(f.name)
    argv = [sys.executable, __file__, "--child", arm, "--file", str(path), "--result", str(result),
            "--scheme", scheme, "--vocabs", *map(str, vocabs)]
    try:
        pss, _ = peak_memory_mb(argv, until=until)
        stopped = False
    except Stopped as e:
        pss, stopped = e.peak_mb, True
    out = json.loads(result.read_text() or json.dumps({"arm": arm}))
    result.unlink()
    out["peak_mb"] = pss
    if stopped:
        out["stopped"] = True  # at --until: the phases it had not finished are missing
    return out


def jobs(arms: list[str], vocabs: list[int]) -> list[tuple[str, list[int]]]:
    """modtok counts once and trains at every vocabulary; a peer runs once per vocabulary."""
    out = []
    for arm in arms:
        out += [(arm, vocabs)] if arm.startswith("modtok") else [(arm, [v]) for v in vocabs]
    return out


# ---------------------------------------------------------------- where counting's seconds go
def phases(path: Path, scheme: str, repeats: int) -> dict[str, list[float]]:
    """CPU seconds of this process (``time.process_time``; a shared machine's load moves it
    least) for, interleaved ``repeats`` times on the file at ``path``: ``read`` (the corpus's
    units, nothing counted), ``lexer`` (:func:`modtok.text.pretokenize.count_arrays` on the
    units already in memory: the compiled lexer and its arrays, no reading, no Counter: the
    bound streaming counting aims at), ``count`` (``count_corpora`` in one process, all of it)."""
    from modtok.text.corpus import open_corpus
    from modtok.text.counts import count_corpora
    from modtok.text.pretokenize import count_arrays

    lines = list(open_corpus({"all": [str(path)]})["all"])
    count_arrays({"all": lines[:1000]}, scheme)  # the kernels loaded (compiled once per checkout)
    out: dict[str, list[float]] = {"read": [], "lexer": [], "count": []}
    for _ in range(repeats):
        for name in out:
            t = time.process_time()
            if name == "read":
                sum(1 for _ in open_corpus({"all": [str(path)]})["all"])
            elif name == "lexer":
                count_arrays({"all": lines}, scheme)
            else:
                count_corpora(open_corpus({"all": [str(path)]}), scheme)
            out[name].append(time.process_time() - t)
    return out


# ---------------------------------------------------------------- fits
def exponent(sizes: list[float], values: list[float]) -> float:
    """Slope of log(value) on log(size), least squares.

    >>> round(exponent([1, 10, 100], [3, 30, 300]), 6), round(exponent([1, 4], [2, 4]), 6)
    (1.0, 0.5)
    """
    x, y = np.log(sizes), np.log(values)
    return float(np.polyfit(x, y, 1)[0])


def extrapolate(sizes: list[float], values: list[float], to: float) -> float:
    """``values`` at the largest size carried to ``to`` with the fitted exponent."""
    return values[-1] * (to / sizes[-1]) ** exponent(sizes, values)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=float, nargs="+", default=[0.002, 0.02] if SMOKE else [0.1, 1.0], help="GB")
    ap.add_argument("--repeats", type=int, nargs="+", default=[1], help="rounds per size (the last one repeats)")
    ap.add_argument("--arms", nargs="+", default=["modtok", "modtok-dask", "hf", "rustbpe"])
    ap.add_argument("--vocabs", type=int, nargs="+", default=[1000, 2000] if SMOKE else [32000, 256000])
    ap.add_argument("--scheme", default="llama3")
    ap.add_argument("--dir", default=tempfile.gettempdir(), help="where the generated text goes (deleted after)")
    ap.add_argument("--keep", action="store_true", help="keep the generated files")
    ap.add_argument("--reuse", action="store_true",
                    help="use the text an earlier run left in --dir (--keep, or a stopped run) instead of writing it")
    ap.add_argument("--target-gb", type=float, default=40.0)
    ap.add_argument("--cluster-workers", type=int, nargs="+", default=[16, 64])
    ap.add_argument("--results", help="append every measured arm to this JSON-lines file")
    ap.add_argument("--until", help="HH:MM (UTC, today): stop an arm still running then and keep its finished phases")
    ap.add_argument("--report", nargs="+", help="no run: fit and print from --results files (runs of any sizes)")
    ap.add_argument("--phases", type=int, metavar="REPEATS",
                    help="no arms: CPU seconds of reading, the lexer alone and count_corpora, interleaved, at each size")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--file", help=argparse.SUPPRESS)
    ap.add_argument("--result", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        def save(out: dict) -> None:  # whole or not at all: the run may be stopped at any moment
            part = Path(args.result + ".part")
            part.write_text(json.dumps(out))
            part.replace(args.result)

        save(run_arm(args.child, args.file, args.vocabs, args.scheme, save))
        return

    if args.report:
        rows = [json.loads(line) for name in args.report for line in Path(name).read_text().splitlines() if line]
        results, info = {}, {}
        for row in sorted(rows, key=lambda r: r["gb"]):
            info[row["gb"]] = {"bytes": row["bytes"]}
            results.setdefault(row["gb"], {}).setdefault(row["key"], []).append(row["result"])
        return report(results, info, args)
    t = time.perf_counter()
    forms = [] if args.reuse and all((Path(args.dir) / f"modtok-growth-{gb:g}GB.txt").exists() for gb in args.sizes) \
        else word_forms()
    print(f"word forms: {len(forms):,} (wordfreq 'best', every language) in {time.perf_counter() - t:.1f} s; "
          f"Zipf s = {ZIPF_S}, seed {SEED}, {WORDS_PER_LINE} words a line; {os.cpu_count()} cores; "
          f"scheme {args.scheme}; vocabularies {args.vocabs}", flush=True)
    results: dict[float, dict[str, list[dict]]] = {}
    info: dict[float, dict] = {}
    until = None
    if args.until:
        import datetime as dt

        hh, mm = map(int, args.until.split(":"))
        until = dt.datetime.now(dt.timezone.utc).replace(hour=hh, minute=mm, second=0, microsecond=0).timestamp()
    for i, gb in enumerate(args.sizes):
        repeats = args.repeats[min(i, len(args.repeats) - 1)]
        path = Path(args.dir) / f"modtok-growth-{gb:g}GB.txt"
        t = time.perf_counter()
        if args.reuse and path.exists():  # the same seed writes the same bytes: no need to write them again
            info[gb] = {"bytes": path.stat().st_size}
            print(f"\n{gb:g} GB: reusing {path} ({info[gb]['bytes'] / 1e9:.3f} GB); {repeats} round(s); "
                  f"load {load()}", flush=True)
        else:
            info[gb] = write_text(path, gb, forms)
            print(f"\n{gb:g} GB: wrote {info[gb]['bytes'] / 1e9:.3f} GB, {info[gb]['words']:,} words in "
                  f"{time.perf_counter() - t:.0f} s ({path}); {repeats} round(s); load {load()}", flush=True)
        results[gb] = {}
        if args.phases:
            try:
                cpu = phases(path, args.scheme, args.phases)
            finally:
                if not args.keep:
                    path.unlink(missing_ok=True)
            mb = info[gb]["bytes"] / 1e6
            print("  CPU s (median, range; MB of the file per CPU second): " + "; ".join(
                f"{k} {statistics.median(v):.2f} ({min(v):.2f}-{max(v):.2f}; {mb / statistics.median(v):.1f} MB/s)"
                for k, v in cpu.items()) + f"; count / lexer {statistics.median(cpu['count']) / statistics.median(cpu['lexer']):.2f}"
                f"; load {load()}", flush=True)
            continue
        try:
            for r in range(repeats):
                for arm, vocabs in jobs(args.arms, args.vocabs):  # interleaved within a round
                    res = measure(arm, path, vocabs, args.scheme, until)
                    key = arm + ("" if arm.startswith("modtok") else f" {vocabs[0]}")
                    results[gb].setdefault(key, []).append(res)
                    if args.results:
                        with open(args.results, "a") as f:
                            f.write(json.dumps({"gb": gb, "bytes": info[gb]["bytes"], "key": key, "result": res}) + "\n")
                    times = "  ".join(f"{k} {v:.1f}" for k, v in res.items() if k.endswith("_s") or "_s_" in k)
                    print(f"  [round {r + 1}] {arm:11s} {times}  peak {res['peak_mb']:,.0f} MB"
                          + (f"  distinct {res['distinct']:,}" if "distinct" in res else "") + f"  load {load()}"
                          + ("  STOPPED at --until (CPU and peak so far)" if res.get("stopped") else ""),
                          flush=True)
        finally:
            if not args.keep:
                path.unlink(missing_ok=True)
    if not args.phases:
        report(results, info, args)


def report(results: dict, info: dict, args) -> None:
    """Medians per size, the exponents (each quantity over the sizes it was run at), the
    check, the 40 GB estimate."""
    series: dict[str, tuple[list[float], list[float]]] = {}  # "arm: field" -> (GB written, medians)
    for gb in sorted(results):
        for key, runs in results[gb].items():
            for field in runs[0]:
                if runs[0].get("stopped") and field in ("cpu_s", "peak_mb"):
                    continue  # only so far: not the arm's
                if (field == "peak_mb" or field.endswith("_s") or "_s_" in field or field == "distinct") \
                        and field != "cluster_start_s":
                    x, y = series.setdefault(f"{key}: {field}", ([], []))
                    x.append(info[gb]["bytes"] / 1e9)
                    y.append(statistics.median(r[field] for r in runs))
    print("\nmedians per size (GB written -> value) and the exponent (quantity ~ size^e)")
    for key, (x, y) in series.items():
        e = f"{exponent(x, y):5.2f}" if len(x) > 1 else "  n/a"
        print(f"  {key:36s} e = {e}   " + "  ".join(f"{g:.3f} GB: {v:,.1f}" for g, v in zip(x, y)))
    distinct = max((v for k, v in series.items() if k.endswith("distinct")), key=lambda xy: len(xy[0]), default=None)
    if distinct is None or len(distinct[0]) < 2:
        print("fewer than two sizes: no exponents")
        return
    beta = exponent(*distinct)
    print(f"\ndistinct words ~ size^{beta:.2f} (beta)")
    fitted = {k: exponent(*xy) for k, xy in series.items() if len(xy[0]) > 1}
    worse = [(k, e) for k, e in fitted.items() if ("train_s" in k or "peak_mb" in k) and e > beta + 0.05]
    print("check: every training time and peak memory grows no faster than the distinct words (e <= beta + 0.05): "
          + ("yes" if not worse else "NO: " + ", ".join(f"{k} e = {e:.2f}" for k, e in worse)))
    print("  (counting reads every byte: its exponent is about 1 whatever beta is)")
    to = args.target_gb
    print(f"\n{to:g} GB, carried from each quantity's largest size with its exponent (an extrapolation, not a run):")
    words = extrapolate(*distinct, to)
    print(f"  distinct words: {words:,.0f}")
    for key in fitted:
        if not key.endswith("distinct"):
            unit = "MB" if key.endswith("peak_mb") else "s"
            print(f"  {key:36s} {extrapolate(*series[key], to):12,.0f} {unit}")
    if "modtok-dask: count_s" in fitted:
        # per-worker throughput of this machine's 2-worker cluster at its largest size
        x, y = series["modtok-dask: count_s"]
        per_worker = x[-1] * 1e3 / y[-1] / 2
        trains = {k.split("_")[-1]: extrapolate(*series[k], to) for k in fitted
                  if k.startswith("modtok-dask") and "train_s" in k}
        mem = extrapolate(*series["modtok-dask: peak_mb"], to)
        for workers in args.cluster_workers:
            print(f"  Dask cluster of {workers} workers at this machine's {per_worker:.2f} MB/s per worker: counting "
                  f"{to * 1e3 / (per_worker * workers):,.0f} s, then training in one process ("
                  + ", ".join(f"{v}: {t:,.0f} s" for v, t in trains.items())
                  + f"; about {mem:,.0f} MB there, the Counter of {words:,.0f} words)")


if __name__ == "__main__":
    main()
