"""Benchmark + fidelity run for modular BPE (issue 3). Prints, in one run:

1. speed: modtok standard BPE vs HF BpeTrainer on a >= 20 MB multilingual slice of
   the pool at vocab 32k (both timed end to end from text: pre-token counting +
   training; HF counts in Rust, modtok with ``count_pretokens``);
2. sequential BPE over the languages (default: the 26 of issue 3, named in
   ``LANGS_26``) at k vs the total time of one monolingual HF training per language;
3. fidelity on FLORES devtest: each extracted subtokenizer's NSL vs a monolingual
   modtok BPE of the same budget k, and n = 2..4 language subsets (random subsets
   and orders) of sequential vs the concatenation baseline (mean and spread).

Timed runs are interleaved (A B A B ...), ``--repeats`` times (default 5): median,
range and the ratio of medians. The sizes are arguments (issue 23): ``--langs`` a list
of pool languages, ``pool`` (every pool language) or ``26`` (the default set);
``--slice-mb`` the text of [1] in MB shared equally by the languages, or ``all``;
``--std-chars`` instead, characters per language of [1] (or ``all``); ``--chars``
characters per language of [2]-[3] (or ``all``); ``--vocab`` / ``--k`` the sizes.

    python bench/bpe_train.py                    # full run (today's configuration)
    python bench/bpe_train.py --skip-fidelity    # speed only
    python bench/bpe_train.py --langs pool --slice-mb all --vocab 128000 --skip-sequential --skip-fidelity
    python bench/bpe_train.py --langs pool --skip-standard --skip-fidelity         # 39 x 1M chars, k = 8k
    python bench/bpe_train.py --langs eng_Latn npi_Deva --slice-mb 2 --chars 1000000 --skip-fidelity
    MODTOK_SMOKE=1 python bench/bpe_train.py     # tiny sizes

``--rss``: after the timed runs, each arm of [1] again in a fresh process (``--arm``)
that reads the text and trains once, ``--rss-repeats`` times interleaved; printed:
the peak of the memory it and its workers hold together (PSS summed, bench/_memory.py)
and the main process's peak RSS, medians.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from collections import Counter

import numpy as np

from _memory import peak_memory_mb  # bench/ is on sys.path when a bench runs
from modtok.artifacts.baselines import train_hf_bpe
from modtok.bpe import standard
from modtok.bpe.concat import concatenate
from modtok.bpe.export import hf_tokenizer
from modtok.bpe.sequential import train_sequential
from modtok.text import data
from modtok.text.pretokenize import count_by_language, count_pretokens


def hf_train(lines, vocab_size, scheme):
    """HF BpeTrainer with every pair allowed (min_frequency 0, as modtok's trainer)."""
    return train_hf_bpe(lines, vocab_size, scheme, min_frequency=0)


def ntokens(tok, lines) -> int:
    return sum(len(e.ids) for e in tok.encode_batch(lines, add_special_tokens=False))


# The 26 pool languages of the issue-3 runs, named so that the figures stay comparable
# as the pool grows (it holds 39 languages now).
LANGS_26 = [
    "ces_Latn", "dan_Latn", "deu_Latn", "ell_Grek", "eng_Latn", "est_Latn", "fin_Latn", "fra_Latn",
    "hun_Latn", "ita_Latn", "nld_Latn", "npi_Deva", "pol_Latn", "por_Latn", "ron_Latn", "rus_Cyrl",
    "sin_Sinh", "slv_Latn", "som_Latn", "spa_Latn", "swe_Latn", "swh_Latn", "tel_Telu", "tur_Latn",
    "ukr_Cyrl", "vie_Latn",
]


def select_languages(names: list[str]) -> list[str]:
    """``["pool"]``: every pool language; ``["26"]``: :data:`LANGS_26`; else the names
    (each must be a pool language)."""
    have = data.pool_languages()
    if names == ["pool"]:
        return have
    langs = LANGS_26 if names == ["26"] else names
    missing = [lang for lang in langs if lang not in have]
    if missing:
        raise SystemExit(f"not in the pool {data.pool_dir()}: {' '.join(missing)}")
    return list(langs)


def select_text(langs: list[str], chars: str | None, slice_mb: str | None) -> tuple[dict, str]:
    """``({lang: lines}, what)``: ``chars`` per language ("all" or a number), else
    ``slice_mb`` MB shared equally by the languages ("all" or a number)."""
    if chars is None and slice_mb is None:
        raise SystemExit("give --chars or --slice-mb")
    if (chars or slice_mb) == "all":
        return data.load_pool(langs), "all text"
    if chars is not None:
        return data.load_pool(langs, max_chars=int(float(chars))), f"<= {int(float(chars)):,} chars per language"
    per_lang = int(float(slice_mb) * 1e6 / len(langs))
    return data.load_pool(langs, max_chars=per_lang), f"{slice_mb} MB slice (<= {per_lang:,} chars per language)"


def interleaved(runs: dict, repeats: int) -> dict[str, list[float]]:
    """Wall seconds of each named callable, run A B A B ... ``repeats`` times."""
    times: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(repeats):
        for name, fn in runs.items():
            t = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t)
    return times


def summary(times: dict[str, list[float]], ours: str, peer: str) -> str:
    med = {name: float(np.median(v)) for name, v in times.items()}
    parts = [f"{name}: median {med[name]:.2f} s [{min(v):.2f}, {max(v):.2f}]" for name, v in times.items()]
    return "    " + "\n    ".join(parts) + f"\n    ratio {ours} / {peer} = {med[ours] / med[peer]:.2f}"


def main() -> None:
    smoke = data.is_smoke()
    ap = argparse.ArgumentParser()
    ap.add_argument("--slice-mb", default="1" if smoke else "20",
                    help="[1]: MB shared equally by the languages, or 'all'")
    ap.add_argument("--std-chars", default=None, help="[1]: characters per language, or 'all' (instead of --slice-mb)")
    ap.add_argument("--vocab", type=int, default=2000 if smoke else 32000)
    ap.add_argument("--k", type=int, default=1000 if smoke else 8000)
    ap.add_argument("--chars", default="100000" if smoke else "1000000",
                    help="training characters per language for parts 2-3, or 'all'")
    ap.add_argument("--scheme", default="llama3")
    ap.add_argument("--langs", nargs="+", default=["26"],
                    help="pool languages, 'pool' (all of them) or '26' (default: the 26 of issue 3)")
    ap.add_argument("--repeats", type=int, default=5, help="interleaved repeats of each timed run")
    ap.add_argument("--subsets", type=int, default=4, help="random subsets per n")
    ap.add_argument("--skip-speed", action="store_true")
    ap.add_argument("--skip-standard", action="store_true", help="skip [1]")
    ap.add_argument("--skip-sequential", action="store_true", help="skip [2] (and [3])")
    ap.add_argument("--rss", action="store_true", help="[1]: peak memory of each arm in a fresh process")
    ap.add_argument("--rss-repeats", type=int, default=3)
    ap.add_argument("--arm", choices=["modtok", "hf"], help=argparse.SUPPRESS)  # one run of [1]'s arm, for --rss
    ap.add_argument("--skip-fidelity", action="store_true")
    args = ap.parse_args()
    langs = select_languages(args.langs)
    workers = os.cpu_count() or 1
    if not args.arm:
        print(f"pool: {data.pool_dir()}  FLORES: {data.flores_dir()}  languages ({len(langs)}): {' '.join(langs)}")
        print(f"load average at the start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}; {workers} cores")
    t = time.perf_counter()  # numba: load (or, on a cold cache, compile) the kernels before timing
    train_sequential({"x": Counter({"ab": 2, "bc": 1})}, 258, scheme=args.scheme)
    if not args.arm:
        print(f"warm-up (numba kernels loaded or compiled): {time.perf_counter() - t:.1f} s")

    # 1. speed on a >= slice-mb multilingual slice, end to end from text
    if not (args.skip_speed or args.skip_standard):
        pool, what = select_text(langs, args.std_chars, None if args.std_chars else args.slice_mb)
        lines = [line for ls in pool.values() for line in ls]
        if args.arm:  # a child of --rss: one run of one arm
            if args.arm == "modtok":
                standard.train(count_pretokens(lines, args.scheme, workers=workers), args.vocab, args.scheme)
            else:
                hf_train(lines, args.vocab, args.scheme)
            return
        mb = sum(len(line.encode("utf-8")) + 1 for line in lines) / 1e6
        counts = count_pretokens(lines, args.scheme, workers=workers)
        print(f"\n[1] standard BPE, {len(langs)} languages, {what}: {mb:.1f} MB, {len(lines):,} lines, "
              f"{len(counts):,} unique pre-tokens, vocab {args.vocab}, {args.repeats} interleaved repeats "
              f"(each from text: counting + training)")
        times = interleaved({
            "modtok": lambda: standard.train(count_pretokens(lines, args.scheme, workers=workers), args.vocab,
                                             args.scheme),
            "modtok training only": lambda: standard.train(counts, args.vocab, args.scheme),
            "HF BpeTrainer": lambda: hf_train(lines, args.vocab, args.scheme),
        }, args.repeats)
        print(summary(times, "modtok", "HF BpeTrainer"))
        print(f"    ratio training only / HF = "
              f"{np.median(times['modtok training only']) / np.median(times['HF BpeTrainer']):.2f}")
        if args.rss:
            argv = [sys.executable, __file__, *(a for a in sys.argv[1:] if a != "--rss")]
            mem = {"modtok": [], "hf": []}
            for _ in range(args.rss_repeats):
                for arm in mem:
                    mem[arm].append(peak_memory_mb([*argv, "--arm", arm]))
            (ours, ours_rss), (peer, peer_rss) = (np.median(np.array(mem[a]), axis=0) for a in ("modtok", "hf"))
            print(f"    peak memory, each arm a fresh process that reads the text and trains once "
                  f"({args.rss_repeats} interleaved, medians): modtok {ours:.0f} MB with its counting workers "
                  f"(main process RSS {ours_rss:.0f} MB), HF BpeTrainer {peer:.0f} MB (RSS {peer_rss:.0f} MB), "
                  f"ratio {ours / peer:.2f}")
        del pool, lines, counts
    if args.skip_sequential:
        return

    # 2. sequential over all languages vs monolingual HF trainings
    pool, what = select_text(langs, args.chars, None)
    counts = count_by_language(pool, args.scheme, workers=workers)
    if not args.skip_speed:
        mb = sum(len(line.encode("utf-8")) + 1 for ls in pool.values() for line in ls) / 1e6
        print(f"\n[2] sequential BPE, {len(langs)} languages, {what} ({mb:.1f} MB), k = {args.k}, "
              f"{args.repeats} interleaved repeats (each from text: counting + training)")
        times = interleaved({
            "modtok sequential": lambda: train_sequential(count_by_language(pool, args.scheme, workers=workers),
                                                          args.k, scheme=args.scheme),
            f"{len(langs)} monolingual HF trainings": lambda: [hf_train(pool[lang], args.k, args.scheme)
                                                                 for lang in langs],
        }, args.repeats)
        print(summary(times, "modtok sequential", f"{len(langs)} monolingual HF trainings"))
    if args.skip_fidelity:
        return
    flores = data.load_flores(langs)
    seq = train_sequential(counts, args.k, scheme=args.scheme)
    print(f"    global vocabulary {len(seq.model):,} tokens, {len(seq.model.merges):,} merges")

    # 3. fidelity
    monos = {lang: standard.train(counts[lang], args.k, args.scheme) for lang in langs}
    ref = {lang: ntokens(hf_tokenizer(monos[lang]), flores[lang]) for lang in langs}
    mt = seq.modular()
    print(f"\n[3a] NSL on FLORES devtest vs monolingual modtok BPE (k = {args.k}), order = pool order")
    print(f"    {'language':10s} {'subtok':>7s} {'global':>7s}")
    worst = []
    for lang in langs:
        sub = ntokens(mt.subtokenizer([lang]).hf, flores[lang]) / ref[lang]
        glob = ntokens(mt.hf, flores[lang]) / ref[lang]
        worst.append(sub)
        print(f"    {lang:10s} {sub:7.3f} {glob:7.3f}")
    print(f"    max subtokenizer NSL = {max(worst):.3f} (target <= 1.05)")

    print("\n[3b] n-language subtokenizers: mean NSL over the subset's languages (vs monolingual)")
    rng = random.Random(0)
    for n in (2, 3, 4):
        s_vals, c_vals = [], []
        for _ in range(args.subsets):
            subset = rng.sample(langs, n)  # random subset, random order
            sq = train_sequential({lang: counts[lang] for lang in subset}, args.k, order=subset,
                                  scheme=args.scheme).modular()
            ct = concatenate(monos, subset).modular()
            s_vals.append(np.mean([ntokens(sq.subtokenizer(subset).hf, flores[l]) / ref[l] for l in subset]))
            c_vals.append(np.mean([ntokens(ct.subtokenizer(subset).hf, flores[l]) / ref[l] for l in subset]))
        print(f"    n={n}: sequential {np.mean(s_vals):.3f} ± {np.std(s_vals):.3f} "
              f"[{min(s_vals):.3f}, {max(s_vals):.3f}]   concatenation {np.mean(c_vals):.3f} ± "
              f"{np.std(c_vals):.3f} [{min(c_vals):.3f}, {max(c_vals):.3f}]")


if __name__ == "__main__":
    main()
