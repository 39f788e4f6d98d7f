"""Benchmark + fidelity run for the modular Unigram (issue 4). Prints, in one run:

1. sentencepiece training time per language (k, ~1 MB each, the scale reference);
2. merge setup (union, word counting, trie) and the time of each EM iteration
   (E-step forward-backward over the joint corpus + M-step) on the merged
   vocabulary of all pool languages, with the log-likelihood;
3. fidelity on FLORES devtest: NSL of each language's subtokenizer and of the
   full merged tokenizer vs the monolingual sentencepiece Unigram of the same k.

    python bench/unigram_em.py                        # the 26 languages of issue 4, k = 8000, 1 MB each
    python bench/unigram_em.py --langs pool           # every pool language (39 now)
    python bench/unigram_em.py --k 4000 --chars 300000
    MODTOK_SMOKE=1 python bench/unigram_em.py         # tiny sizes

Data: $MODTOK_POOL / $MODTOK_FLORES, else ../shared/data/{pool,flores200}.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np

from bpe_train import LANGS_26  # bench/ is on sys.path when a bench runs
from modtok.text import data
from modtok.unigram import lattice
from modtok.unigram.merge import merge_unigram
from modtok.unigram.train import train_unigram

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"


def main() -> None:
    smoke = data.is_smoke()
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--k", type=int, default=1000 if smoke else 8000)
    ap.add_argument("--chars", type=int, default=100_000 if smoke else 1_000_000, help="training characters per language")
    ap.add_argument("--langs", nargs="+", default=["26"],
                    help="pool languages, 'pool' (all of them) or '26' (default: bpe_train.LANGS_26, the "
                         "configuration of issue 4; the pool has grown to 39)")
    ap.add_argument("--iters", type=int, default=2 if smoke else 5, help="EM M-steps")
    ap.add_argument("--sp-threads", type=int, default=2)
    ap.add_argument("--no-nsl", action="store_true")
    args = ap.parse_args()
    pool = os.environ.get("MODTOK_POOL") or str(SHARED / "pool")
    flores = os.environ.get("MODTOK_FLORES") or str(SHARED / "flores200")
    langs = {"26": LANGS_26, "pool": data.pool_languages(pool)}.get(" ".join(args.langs), args.langs)
    langs = langs[:4] if smoke else langs
    corpus = data.load_pool(langs, root=pool, max_chars=args.chars)
    print(f"pool {pool}: {len(langs)} languages, <= {args.chars:,} chars each "
          f"({sum(data.chars_per_language(corpus).values()):,} chars); k = {args.k}; numba threads = {lattice.num_threads()}")

    print(f"\n1. sentencepiece training (num_threads={args.sp_threads})")
    models, sp_time = {}, {}
    for lang in langs:
        t = time.perf_counter()
        models[lang] = train_unigram(corpus[lang], args.k, num_threads=args.sp_threads)
        sp_time[lang] = time.perf_counter() - t
        print(f"  {lang}: {sp_time[lang]:6.2f} s  {len(models[lang])} pieces")
    times = np.array(list(sp_time.values()))
    print(f"  total {times.sum():.1f} s, median {np.median(times):.2f} s per language")

    print("\n2. merge + EM on the joint corpus (modtok.unigram.merge.merge_unigram)")
    first = langs[0]
    merge_unigram({first: models[first]}, {first: corpus[first][:20]}, max_iter=1)  # load the numba cache
    t = time.perf_counter()
    merged = merge_unigram(models, corpus, max_iter=args.iters, tol=0.0)
    total = time.perf_counter() - t
    iter_times = merged.em_seconds
    print(f"  {len(merged.model):,} pieces; {merged.n_units:,} distinct units ({merged.n_words:,.0f} occurrences); "
          f"setup (union, units, trie, last E-step) {total - sum(iter_times):.2f} s")
    for i, (sec, ll) in enumerate(zip(iter_times, merged.loglik)):
        print(f"  iteration {i + 1}: {sec:6.2f} s   loglik before {ll:.8e}")
    lls = merged.loglik
    print(f"  final loglik {lls[-1]:.8e}; never decreased: {bool(np.all(np.diff(lls) >= 0))}")
    print(f"  one EM iteration (E + M step): median {np.median(iter_times):.2f} s "
          f"vs sentencepiece training of one language: median {np.median(times):.2f} s")
    final, lang_ids = merged.model, merged.lang_to_ids
    if args.no_nsl:
        return
    print("\n3. fidelity on FLORES-200 devtest: NSL vs the monolingual sentencepiece Unigram (k each)")
    ev = data.load_flores([lang for lang in langs if lang in data.flores_languages(root=flores)], root=flores)
    print(f"  {'lang':10s} {'sub/mono':>9s} {'full/mono':>10s} {'|sub|':>7s}")
    subs, fulls = [], []
    for lang, lines in ev.items():
        mono = sum(map(len, models[lang].encode(lines)))
        sub = sum(map(len, final.encode(lines, lang_ids[lang])))
        full = sum(map(len, final.encode(lines)))
        subs.append(sub / mono)
        fulls.append(full / mono)
        print(f"  {lang:10s} {sub / mono:9.4f} {full / mono:10.4f} {len(lang_ids[lang]):7d}")
    print(f"  {'mean':10s} {np.mean(subs):9.4f} {np.mean(fulls):10.4f}   "
          f"(sub range {min(subs):.4f}-{max(subs):.4f}, full range {min(fulls):.4f}-{max(fulls):.4f})")


if __name__ == "__main__":
    main()
