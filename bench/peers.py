"""The new peers side by side (issue 44). Prints, in one run:

[1] standard byte-level BPE, each arm from the same in-memory lines (pre-token counting +
    training), ``--repeats`` times interleaved (A B C ... A B C ...): modtok
    (``standard.train_from_lines`` with ``workers`` = every core: the compiled lexer's
    ``count_arrays``, then the engine on its arrays), HF ``BpeTrainer``, karpathy's
    ``rustbpe``, ``bpeasy`` and sentencepiece 0.2.3's BPE trainer; median, range and the
    ratio modtok / peer. Merge identity where the peer promises the same algorithm (exact
    greedy BPE on the same pre-tokens): HF ``BpeTrainer`` (same tie order as modtok: the
    tokens must be the same at every rank) and rustbpe, whose ties go to the smallest pair
    of *raw* ids (bytes by value; modtok and HF order bytes by their byte-level character),
    so modtok's engine is also run with rustbpe's byte order and must then give rustbpe's
    tokens at every rank. bpeasy (a token-length cap, 128 bytes) and sentencepiece (its own
    pre-tokenizer, characters not bytes) promise no such thing: the share of common tokens.
[2] Unigram: sentencepiece's trainer on the lines vs modtok's (``train_unigram``: modtok
    counts the units, sentencepiece trains on them as TSV word counts), same settings.
[3] parity-aware BPE vs HF ``ParityBpeTrainer``: base, window, hybrid and ratio on the same
    lines, dev = FLORES-200 dev (997 lines), ``--merges`` merges. Reference pre-tokenizer:
    modtok ``compat="reference"``; llama3: modtok ``compat="hf"`` and the default mode
    (which parts from HF at the first tie, modtok/bpe/parity.py). Each arm from lines
    (counting + training); merges compared with HF's.
[4] sequential BPE (``train_sequential`` on ``count_arrays``' arrays, every core) vs one
    monolingual HF ``BpeTrainer`` training per language at the same k (issue 44's target:
    <= 0.4x), each from the lines, ``--repeats`` times interleaved; no identity (not the
    same algorithm).

    python bench/peers.py                                  # 8 languages, 1M chars each, 32k, 4,000 merges
    python bench/peers.py --repeats 5 --skip-unigram --skip-parity
    python bench/peers.py --repeats 5 --skip-unigram --skip-parity --before --no-bpeasy --no-sentencepiece  # issue 44 #2
    python bench/peers.py --langs pool --chars all --vocab 32000 128000 256000 --skip-unigram --skip-parity --no-sentencepiece
    python bench/peers.py --langs pool --skip-standard --skip-unigram --skip-parity --sequential   # [4]: 39 x 1M chars, k 8k
    MODTOK_SMOKE=1 python bench/peers.py                   # tiny sizes

Data: $MODTOK_POOL / $MODTOK_FLORES. Other agents may share the CPU: the load average is
printed before each part.
"""

from __future__ import annotations

import argparse
import os
import time
from collections import Counter

import numpy as np
from tokenizers import pre_tokenizers

from _peers import bpeasy_vocab, hf_parity_merges, rustbpe_tokens  # bench/ is on sys.path when a bench runs
from bpe_phases import one_merge_per_call
from bpe_train import hf_train, interleaved, select_languages, select_text
from modtok.artifacts.baselines import sp_model_proto, train_sp_unigram
from modtok.bpe import parity, standard
from modtok.bpe.sequential import train_sequential
from modtok.bpe.engine import Engine
from modtok.bpe.model import BPEModel
from modtok.text import data
from modtok.text.lexer import WordCounts
from modtok.text.pretokenize import byte_level, count_arrays, hf_pre_tokenizer, pattern, unicode_to_bytes
from modtok.unigram.train import train_unigram

LANGS8 = ["eng_Latn", "deu_Latn", "tur_Latn", "vie_Latn", "rus_Cyrl", "ell_Grek", "npi_Deva", "tel_Telu"]


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def interleaved_results(runs: dict, repeats: int) -> tuple[dict[str, list[float]], dict]:
    """:func:`bpe_train.interleaved`, keeping each arm's last result."""
    times: dict[str, list[float]] = {name: [] for name in runs}
    last = {}
    for _ in range(repeats):
        for name, fn in runs.items():
            t = time.perf_counter()
            last[name] = fn()
            times[name].append(time.perf_counter() - t)
    return times, last


def table(times: dict[str, list[float]], ours: str) -> str:
    """One row per arm: median [range], ratio of modtok's median to the arm's."""
    med = {name: float(np.median(v)) for name, v in times.items()}
    rows = [f"    {'arm':34s} {'median s':>9s} {'range s':>17s} {ours + ' / arm':>14s}"]
    for name, v in times.items():
        rows.append(f"    {name:34s} {med[name]:9.2f} [{min(v):6.2f}, {max(v):6.2f}] {med[ours] / med[name]:14.2f}")
    return "\n".join(rows)


def hf_tokens(tok) -> list[bytes]:
    """An HF byte-level BPE's tokens in id order, as bytes."""
    back = unicode_to_bytes()
    vocab = tok.get_vocab()
    return [bytes(back[c] for c in s) for s, _ in sorted(vocab.items(), key=lambda kv: kv[1])]


def modtok_tokens(counts: WordCounts, vocab_size: int, scheme: str, raw_byte_order: bool = False) -> list[bytes]:
    """modtok's standard BPE tokens in id order; ``raw_byte_order``: ties between pairs
    to the smallest raw ids (rustbpe's order) instead of HF's (:mod:`modtok.bpe.engine`)."""
    rank = np.arange(256, dtype=np.int64) if raw_byte_order else None
    engine = Engine.from_word_counts(counts, capacity=vocab_size + 1, rank=rank)
    return standard.learn(engine, BPEModel([], scheme), vocab_size).vocab


def same_at_every_rank(a: list[bytes], b: list[bytes]) -> str:
    """Whether two vocabularies learned the same tokens in the same order (the merged
    ones, id 256 on: the peers number the 256 bytes differently)."""
    a, b = a[256:], b[256:]
    first = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), None)
    if first is None and len(a) == len(b):
        return f"identical ({len(a):,} merged tokens)"
    where = first if first is not None else min(len(a), len(b))
    return (f"part at merge {where + 1:,} (ranks {len(a):,} / {len(b):,}); "
            f"{len(set(a) & set(b)) / max(len(a), len(b)):.1%} of the merged tokens shared")


def sp_bpe(lines: list[str], vocab_size: int) -> bytes:
    return sp_model_proto(lines, vocab_size, num_threads=os.cpu_count() or 1, model_type="bpe")


def part_standard(args, langs: list[str]) -> None:
    """[1] at each ``--vocab`` size in turn, on the same lines."""
    corpus, what = select_text(langs, args.chars, None)
    lines = [line for ls in corpus.values() for line in ls]
    mb = sum(len(line.encode("utf-8")) + 1 for line in lines) / 1e6
    for vocab in args.vocab:
        standard_at(args, lines, f"{len(langs)} languages, {what}: {mb:.1f} MB, {len(lines):,} lines", vocab)


def standard_at(args, lines: list[str], what: str, vocab: int) -> None:
    """[1] at one vocabulary size: the arms interleaved, then merge identity."""
    workers, source = os.cpu_count() or 1, pattern(args.scheme)
    arms = {
        "modtok": lambda: standard.train_from_lines(lines, vocab, args.scheme, workers=workers),
        "HF BpeTrainer": lambda: hf_train(lines, vocab, args.scheme),
        "rustbpe": lambda: rustbpe_tokens(lines, vocab, source),
    }
    if args.before:  # the same counting, the merge loop as it was before issue 44 (bench/bpe_phases.py)
        arms["modtok, loop before #44"] = lambda: one_merge_per_call(
            Engine.from_word_counts(count_arrays({"all": lines}, args.scheme, workers), capacity=vocab + 1),
            BPEModel([], args.scheme), vocab)
    if not args.no_bpeasy:
        arms["bpeasy"] = lambda: bpeasy_vocab(lines, vocab, source)
    if not args.no_sentencepiece:
        arms["sentencepiece BPE"] = lambda: sp_bpe(lines, vocab)
    print(f"\n[1] standard BPE, {what}, "
          f"{args.scheme}, vocab {vocab:,}, {args.repeats} interleaved repeats, each from text; load {load()}")
    times, last = interleaved_results(arms, args.repeats)
    print(table(times, "modtok"))
    print(f"    load at the end {load()}")

    counts = count_arrays({"all": lines}, args.scheme, workers)
    ours, rust = last["modtok"].vocab, last["rustbpe"]
    print("    merge identity (merged tokens at every rank):")
    print(f"      modtok vs HF BpeTrainer: {same_at_every_rank(ours, hf_tokens(last['HF BpeTrainer']))}")
    print(f"      modtok vs rustbpe: {same_at_every_rank(ours, rust)}")
    print(f"      modtok with rustbpe's tie order (raw byte ids) vs rustbpe: "
          f"{same_at_every_rank(modtok_tokens(counts, vocab, args.scheme, raw_byte_order=True), rust)}")
    if args.before:
        print(f"      modtok vs modtok's loop before #44: {same_at_every_rank(ours, last['modtok, loop before #44'].vocab)}")
    if not args.no_bpeasy:
        easy = [t for t, _ in sorted(last["bpeasy"].items(), key=lambda kv: kv[1])]
        print(f"      modtok vs bpeasy: {same_at_every_rank(ours, easy)}; bpeasy vs rustbpe: "
              f"{same_at_every_rank(easy, rust)}")


def part_sequential(args, langs: list[str]) -> None:
    corpus, what = select_text(langs, args.chars, None)
    mb = sum(len(line.encode("utf-8")) + 1 for ls in corpus.values() for line in ls) / 1e6
    workers = os.cpu_count() or 1
    print(f"\n[4] sequential BPE, {len(langs)} languages, {what}: {mb:.1f} MB, {args.scheme}, k {args.k:,}, "
          f"{args.repeats} interleaved repeats, each from text; load {load()}")
    hf = f"{len(langs)} monolingual HF BpeTrainer"
    times, last = interleaved_results({
        "modtok sequential": lambda: train_sequential(count_arrays(corpus, args.scheme, workers), args.k, scheme=args.scheme),
        hf: lambda: [hf_train(corpus[lang], args.k, args.scheme) for lang in langs],
    }, args.repeats)
    print(table(times, "modtok sequential"))
    short = last["modtok sequential"].short()
    print(f"    load at the end {load()}; languages below k: {short or 'none'}")


def part_unigram(args, langs: list[str]) -> None:
    corpus, what = select_text(langs, args.unigram_chars, None)
    lines = [line for ls in corpus.values() for line in ls if line.strip()]
    print(f"\n[2] Unigram, {len(langs)} languages, {what}, vocab {args.unigram_vocab:,}, {args.repeats} interleaved "
          f"repeats, each from text; load {load()}")
    threads = os.cpu_count() or 1
    times = interleaved({
        "modtok train_unigram (its units, TSV)": lambda: train_unigram(lines, args.unigram_vocab, num_threads=threads),
        "sentencepiece Unigram (lines)": lambda: train_sp_unigram(lines, args.unigram_vocab, num_threads=threads),
    }, args.repeats)
    print(table(times, "modtok train_unigram (its units, TSV)"))
    print(f"    load at the end {load()}")


def merge_strings(res: parity.ParityResult) -> list[tuple[str, str]]:
    """A parity run's merges as byte-level string pairs (HF's form)."""
    vocab = res.model.vocab
    return [(byte_level(vocab[a]), byte_level(vocab[b])) for a, b in res.merges]


def versus(mine: list, hf: list) -> str:
    """"identical", or where (0-based merge index) and how two merge lists part."""
    at = next((i for i, (x, y) in enumerate(zip(mine, hf)) if x != y), None)
    if at is None:
        return "identical" if len(mine) == len(hf) else f"part at merge index {min(len(mine), len(hf))} (length)"
    return f"part at merge index {at} ({' '.join(mine[at])} vs HF's {' '.join(hf[at])})"


PARITY = {  # name: (modtok options, HF options, uses the dev set)
    "base": ({}, {}, True),
    "window": ({"variant": "window", "window": 100, "alpha": 2.0}, {"variant": "window", "window_size": 100, "alpha": 2.0},
               True),
    "hybrid": ({"hybrid": None}, {"global_merges": None}, True),  # J = merges / 4 (filled in below)
    "ratio": ({"ratios": None}, {}, False),  # ratios: ratio_targets of the dev lines (filled in below)
}


def part_parity(args) -> None:
    train = data.load_pool(LANGS8, max_chars=int(float(args.parity_chars)))
    dev = data.load_flores(LANGS8, split="dev")
    mb = sum(len(line.encode("utf-8")) + 1 for ls in train.values() for line in ls) / 1e6
    ratios = list(parity.ratio_targets(dev).values())
    reference = pre_tokenizers.Sequence([pre_tokenizers.Whitespace(), pre_tokenizers.ByteLevel(use_regex=False)])
    print(f"\n[3] parity-aware BPE vs HF ParityBpeTrainer: {len(LANGS8)} languages ({' '.join(LANGS8)}), "
          f"<= {int(float(args.parity_chars)):,} chars each, {mb:.1f} MB, FLORES-200 dev ({len(dev[LANGS8[0]])} lines), "
          f"{args.merges:,} merges, min_frequency 2, {args.repeats} interleaved repeats, each from text")
    print(f"    ratio targets (bytes per dev line / eng's): {' '.join(f'{r:.3f}' for r in ratios)}")

    fill = {"ratios": ratios, "hybrid": args.merges // 4, "global_merges": args.merges // 4}

    def ours(compat, scheme, options, with_dev):
        options = {k: fill[k] if v is None else v for k, v in options.items()}
        return parity.train_from_lines(train, dev if with_dev else None, 256 + args.merges, scheme=scheme,
                                       compat=compat, workers=os.cpu_count() or 1, **options)

    def theirs(pre, options, with_dev):
        options = {k: fill[k] if v is None else v for k, v in options.items()}
        return hf_parity_merges(train, dev if with_dev else None, args.merges, pre,
                                ratios=None if with_dev else ratios, min_frequency=2, **options)

    for name, (mopts, hopts, with_dev) in PARITY.items():
        if name not in args.variants:
            continue
        pres = [("reference pre-tokens", "reference", "whitespace", reference)] if name == "base" and args.reference else []
        for label, compat, scheme, pre in [*pres, ("llama3", "hf", "llama3", hf_pre_tokenizer("llama3"))]:
            arms = {f"modtok compat={compat!r}": lambda c=compat, s=scheme, m=mopts, d=with_dev: ours(c, s, m, d),
                    "HF ParityBpeTrainer": lambda p=pre, h=hopts, d=with_dev: theirs(p, h, d)}
            if compat == "hf" and name == "base":
                arms["modtok default mode"] = lambda s=scheme, m=mopts, d=with_dev: ours(None, s, m, d)
            times, last = interleaved_results(arms, args.repeats)
            hf = last["HF ParityBpeTrainer"]
            mine = merge_strings(last[f"modtok compat={compat!r}"])
            line = f"merges {versus(mine, hf)} ({len(mine):,} / {len(hf):,})"
            if "modtok default mode" in arms:
                line += f"; default mode: {versus(merge_strings(last['modtok default mode']), hf)}"
            print(f"\n    {name}, {label} (load {load()}): {line}")
            print(table(times, f"modtok compat={compat!r}"))
    print(f"    load at the end {load()}")


def main() -> None:
    smoke = data.is_smoke()
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--langs", nargs="+", default=LANGS8, help="pool languages of [1]-[2], or 'pool'")
    ap.add_argument("--chars", default="100000" if smoke else "1000000", help="[1]-[2]: chars per language, or 'all'")
    ap.add_argument("--scheme", default="llama3")
    ap.add_argument("--vocab", type=int, nargs="+", default=[2000 if smoke else 32000], help="[1]: one row per size")
    ap.add_argument("--unigram-vocab", type=int, default=2000 if smoke else 32000)
    ap.add_argument("--unigram-chars", default="100000" if smoke else "300000", help="[2]: chars per language")
    ap.add_argument("--merges", type=int, default=300 if smoke else 4000, help="[3]: merges")
    ap.add_argument("--parity-chars", default="100000" if smoke else "1000000", help="[3]: chars per language")
    ap.add_argument("--variants", nargs="+", default=list(PARITY), choices=list(PARITY))
    ap.add_argument("--no-reference", dest="reference", action="store_false",
                    help="[3] without the base run on the reference's pre-tokens")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--no-sentencepiece", action="store_true", help="[1] without sentencepiece BPE")
    ap.add_argument("--no-bpeasy", action="store_true", help="[1] without bpeasy")
    ap.add_argument("--before", action="store_true",
                    help="[1] also modtok with the merge loop before issue 44 (one Python round-trip a merge)")
    ap.add_argument("--k", type=int, default=1000 if smoke else 8000, help="[4]: each language's budget")
    ap.add_argument("--sequential", action="store_true", help="also [4] (the languages and chars of [1])")
    ap.add_argument("--skip-standard", action="store_true")
    ap.add_argument("--skip-unigram", action="store_true")
    ap.add_argument("--skip-parity", action="store_true")
    args = ap.parse_args()
    langs = select_languages(args.langs)
    print(f"pool {data.pool_dir()}, FLORES {data.flores_dir()}; {os.cpu_count()} cores; load {load()}")
    t = time.perf_counter()  # numba: load (or compile) the kernels before timing
    standard.train_from_lines(["ab bc ab"], 258)  # the lexer's kernels and the engine's
    parity.train({"x": Counter({"ab": 2})}, {"x": Counter({"ab": 1})}, 257, compat="hf")
    print(f"warm-up (numba kernels loaded or compiled): {time.perf_counter() - t:.1f} s")
    if not args.skip_standard:
        part_standard(args, langs)
    if args.sequential:
        part_sequential(args, langs)
    if not args.skip_unigram:
        part_unigram(args, langs)
    if not args.skip_parity:
        part_parity(args)


if __name__ == "__main__":
    main()
