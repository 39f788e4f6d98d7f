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
range and the ratio of medians.

    python bench/bpe_train.py                    # full run (20 MB slice, k = 8000)
    python bench/bpe_train.py --skip-fidelity    # speed only
    MODTOK_SMOKE=1 python bench/bpe_train.py     # tiny sizes
"""

from __future__ import annotations

import argparse
import os
import random
import time

import numpy as np

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
    ap.add_argument("--slice-mb", type=float, default=1.0 if smoke else 20.0)
    ap.add_argument("--vocab", type=int, default=2000 if smoke else 32000)
    ap.add_argument("--k", type=int, default=1000 if smoke else 8000)
    ap.add_argument("--chars", type=int, default=100_000 if smoke else 1_000_000,
                    help="training characters per language for parts 2-3")
    ap.add_argument("--scheme", default="llama3")
    ap.add_argument("--langs", nargs="*", default=LANGS_26, help="pool languages (default: the 26 of issue 3)")
    ap.add_argument("--repeats", type=int, default=5, help="interleaved repeats of each timed run")
    ap.add_argument("--subsets", type=int, default=4, help="random subsets per n")
    ap.add_argument("--skip-speed", action="store_true")
    ap.add_argument("--skip-fidelity", action="store_true")
    args = ap.parse_args()
    langs = [lang for lang in args.langs if lang in data.pool_languages()]
    print(f"pool: {data.pool_dir()}  FLORES: {data.flores_dir()}  languages ({len(langs)}): {' '.join(langs)}")
    workers = os.cpu_count() or 1

    # 1. speed on a >= slice-mb multilingual slice, end to end from text
    if not args.skip_speed:
        per_lang = int(args.slice_mb * 1e6 / len(langs))
        pool = data.load_pool(langs, max_chars=per_lang)
        lines = [line for ls in pool.values() for line in ls]
        mb = sum(len(line.encode("utf-8")) + 1 for line in lines) / 1e6
        counts = count_pretokens(lines, args.scheme, workers=workers)
        print(f"\n[1] standard BPE, {mb:.1f} MB, {len(lines):,} lines, {len(counts):,} unique pre-tokens, "
              f"vocab {args.vocab}, {args.repeats} interleaved repeats (each from text: counting + training)")
        times = interleaved({
            "modtok": lambda: standard.train(count_pretokens(lines, args.scheme, workers=workers), args.vocab,
                                             args.scheme),
            "modtok training only": lambda: standard.train(counts, args.vocab, args.scheme),
            "HF BpeTrainer": lambda: hf_train(lines, args.vocab, args.scheme),
        }, args.repeats)
        print(summary(times, "modtok", "HF BpeTrainer"))
        print(f"    ratio training only / HF = "
              f"{np.median(times['modtok training only']) / np.median(times['HF BpeTrainer']):.2f}")
        del pool, lines, counts

    # 2. sequential over all languages vs monolingual HF trainings
    pool = data.load_pool(langs, max_chars=args.chars)
    counts = count_by_language(pool, args.scheme, workers=workers)
    if not args.skip_speed:
        print(f"\n[2] sequential BPE, {len(langs)} languages x {args.chars:,} chars, k = {args.k}, "
              f"{args.repeats} interleaved repeats")
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
