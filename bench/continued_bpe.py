"""Continued BPE on top of Llama-3: modtok's engine vs the paper's method.

    MODTOK_POOL=../shared/data/pool MODTOK_FLORES=../shared/data/flores200 \\
        python bench/continued_bpe.py [--k 32000] [--arm R2] [--extra-mb 0] [--repeats 5]

Its two sizes (issue 23): the default, the pool's 1.6 MB of Nepali, and
``--extra-mb 40``, 41.5 MB.

Both learn K merges on the same Nepali text (pool ``npi_Deva``, plus the first
``--extra-mb`` MB of ``extra/npi_Deva.large.txt``), from the lines:

- **modtok**: pre-token counts (:func:`modtok.adapt.extend.count_words`, every core), the engine
  segments each word with Llama-3's merges in private ids, K merges
  (:func:`modtok.adapt.extend.learn`);
- **HF private-use** (the paper's method, after Purason et al.): the same
  counting, each word segmented with Llama-3 itself (``model.tokenize``), every
  base token mapped to a private-use code point, HF ``BpeTrainer`` on those
  strings, merges mapped back to bytes.

Runs alternate modtok, HF, modtok, HF, ... ``--repeats`` times; the first line
printed is the ratio of the median wall times (< 1: modtok faster). What a
base derives once is kept on it and shared by the repeats of both arms: HF's
``Tokenizer`` (``Base.tokenizer``) and modtok's private numbering (``Base.private``). Both
merge lists then go through the same §V filter and export, and the premium
of each on FLORES-200 devtest (npi_Deva / eng_Latn) is printed.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import statistics
import time
from pathlib import Path

from modtok.adapt import extend, filters
from modtok.evaluation import audit
from modtok.text import data
from modtok.text.pretokenize import byte_level

HERE = Path(__file__).resolve().parents[2]


def private_use():
    """Private-use code points: the BMP area, then planes 15 and 16."""
    return itertools.chain(range(0xE000, 0xF900), range(0xF0000, 0xFFFFE), range(0x100000, 0x10FFFE))


WORKERS = os.cpu_count() or 1  # both arms count with every core, as `modtok extend` does


def modtok_run(base, lines, regex, k):
    return extend.learn(base, extend.count_words(base, lines, regex, WORKERS), k)


def hf_run(base, lines, regex, k):
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    counts = extend.count_words(base, lines, regex, WORKERS)
    tokenize = base.tokenizer.model.tokenize
    char_of: dict[int, str] = {}
    points = private_use()
    words = {}
    for w in counts:
        ids = [t.id for t in tokenize(byte_level(w.encode("utf-8")))]
        for i in ids:
            if i not in char_of:
                char_of[i] = chr(next(points))
        words[w] = "".join(char_of[i] for i in ids)
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    trainer = trainers.BpeTrainer(vocab_size=len(char_of) + k, min_frequency=2, show_progress=False,
                                  initial_alphabet=list(char_of.values()), limit_alphabet=len(char_of))
    tok.train_from_iterator((" ".join([words[w]] * n) for w, n in counts.items() if len(words[w]) > 1),
                            trainer=trainer)
    bytes_of = {c: base.token_bytes[i] for i, c in char_of.items()}
    out = []  # merges as PUA strings -> bytes
    for left, right in json.loads(tok.to_str())["model"]["merges"]:
        out.append((b"".join(bytes_of[c] for c in left), b"".join(bytes_of[c] for c in right)))
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--k", type=int, default=32000)
    ap.add_argument("--arm", default="R2", choices=extend.ARMS)
    ap.add_argument("--extra-mb", type=float, default=0.0)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()

    pool = str(data.pool_dir() or HERE / "shared/data/pool")
    flores = str(data.flores_dir() or HERE / "shared/data/flores200")
    print(f"language npi_Deva (pool {pool}; FLORES {flores}); load average at the start: "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}; {os.cpu_count()} cores")
    lines = data.load_pool(["npi_Deva"], root=pool)["npi_Deva"]
    if args.extra_mb:
        extra = Path(pool).parent / "extra" / "npi_Deva.large.txt"
        budget = int(args.extra_mb * 1e6)
        with open(extra, encoding="utf-8") as f:
            for line in f:
                budget -= len(line.encode())
                if budget < 0:
                    break
                if line.strip():
                    lines.append(line.rstrip("\n"))  # raw, as load_pool reads the pool
    mb = sum(len(x.encode()) for x in lines) / 1e6
    base = extend.Base.load("llama3")
    regex = extend.arm_pattern(base.regex, args.arm)
    extend.learn(base, extend.count_words(base, lines[:200], regex), 5)  # compile the kernels first

    times = {"modtok": [], "hf": []}
    result = {}
    for _ in range(args.repeats):
        for name, fn in (("modtok", modtok_run), ("hf", hf_run)):
            t = time.perf_counter()
            result[name] = fn(base, lines, regex, args.k)
            times[name].append(time.perf_counter() - t)
    med = {n: statistics.median(v) for n, v in times.items()}
    print(f"ratio modtok / HF private-use = {med['modtok'] / med['hf']:.3f}")
    print(f"Llama-3 + K={args.k} merges, arm {args.arm}, Nepali text {mb:.1f} MB ({len(lines)} lines), "
          f"{args.repeats} repeats interleaved")
    for n, v in times.items():
        print(f"  {n:7s} median {med[n]:7.2f} s  range {min(v):.2f}-{max(v):.2f} s  merges {len(result[n])}")
    fl = data.load_flores(["eng_Latn", "npi_Deva"], root=flores)
    same = sum(a == b for a, b in zip(result["modtok"], result["hf"]))
    print(f"  identical merges at the same rank: {same} of {min(map(len, result.values()))}")
    prem = {}
    for n, merges in result.items():
        ext = extend.Extension(base, filters.filter_merges(merges, filters.BlockFilter().keeps, set(base.id_of)), regex)
        tok = ext.tokenizer()
        prem[n] = audit.premium_ci(tok, fl["npi_Deva"], fl["eng_Latn"])
        print(f"  {n:7s} after the §V filter: {len(ext.merges)} merges, {len(ext.new_tokens())} new tokens, "
              f"premium {prem[n][0]:.4f} [{prem[n][1]:.4f}, {prem[n][2]:.4f}], "
              f"floor {audit.floor(tok, fl['npi_Deva'], fl['eng_Latn']):.4f}")
    gap = abs(prem["modtok"][0] - prem["hf"][0])
    print(f"  premium modtok / HF = {prem['modtok'][0] / prem['hf'][0]:.4f}; |difference| = {gap:.5f} "
          f"({'<' if gap < 5e-4 else '>='} 0.0005: {'the same' if gap < 5e-4 else 'not the same'} to 3 decimals; "
          "the merge lists differ only where counts tie, each side breaking ties its own way)")


if __name__ == "__main__":
    main()
