"""One AdaptMix iteration vs the bare trainer on the same mixture.

An AdaptMix iteration (modtok.mixture.step, in modtok/mixture/loop.py) is: allocate the budget (Eq. 5),
take the sample from the split-once pool (a prefix of each language's fixed
shuffle; for a counts-consuming trainer, a bincount over the pre-token array),
train, measure dev fertility, update the mixture (Eqs. 1-4). The bare trainer
gets the same sample's data ready-made and only trains. Both run in the same
process, interleaved (bare, iteration, bare, ...), ``--repeats`` times each;
the overhead of the mixture machinery is (iteration - bare) / bare. What a
run does once (the pool's pre-token split, the dev word counts, the first
training and the dev text's pre-token split of the first fertility) is timed
and printed before the repeats, not in them.

    MODTOK_POOL=../shared/data/pool MODTOK_FLORES=../shared/data/flores200 \
        .venv/bin/python bench/adaptmix.py [--trainer modtok-bpe] [--vocab 32000] [--budget 8000000] \
        [--scheme whitespace]

Languages: the AdaptMix paper's 16 (modtok.mixture.PAPER_LANGUAGES); dev
fertility on all 997 FLORES-200 dev lines of each.
"""

from __future__ import annotations

import argparse
import statistics
import time

from modtok import mixture as mx
from modtok.text import data


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trainer", default="modtok-bpe", choices=list(mx.TRAINERS))
    ap.add_argument("--vocab", type=int, default=32_000)
    ap.add_argument("--budget", type=int, default=8_000_000, help="T, characters over all languages")
    ap.add_argument("--repeats", type=int, default=5)
    # whitespace: the pre-tokenizer of the figures in bench/RESULTS.md (the trainers' default is llama3)
    ap.add_argument("--scheme", default="whitespace", help="pre-tokenizer of the BPE trainers")
    args = ap.parse_args()

    langs = mx.PAPER_LANGUAGES
    train = data.load_pool(langs)
    dev = data.load_flores(langs, "dev")
    pool = mx.TextPool(train, seed=0)
    trainer = mx.make_trainer(args.trainer, args.vocab, args.scheme)
    t = time.perf_counter()
    if trainer.consumes == "counts":
        pool.pretokens(trainer.scheme)  # once per run, as adaptmix() does before its first iteration
    devset = mx.DevSet(dev, langs)
    setup = time.perf_counter() - t
    mixture = mx.natural(langs, tau=3.3, missing="floor")  # any fixed, non-uniform mixture
    sample = pool.sample(mixture, args.budget, "cap")
    ready = trainer.data(sample)
    print(f"pool {data.pool_dir()}: {len(langs)} languages, {sum(pool.available().values()):,} characters; "
          f"T = {args.budget:,}; trainer {trainer.name}; dev: FLORES-200 dev, {len(dev[langs[0]])} lines each")
    print(f"one-off setup (pre-token split of the pool, dev word counts): {setup:.2f} s")
    # warm-up, not in the medians: the first training (numba compiles or loads its
    # kernels) and the first dev fertility of the run, which cuts the dev text into the
    # tokenizer's pre-tokens once (cached in the DevSet for every later iteration)
    t = time.perf_counter()
    tokenizer = trainer.train(ready)
    warm_train = time.perf_counter() - t
    t = time.perf_counter()
    devset.fertility(tokenizer)
    print(f"warm-up: first training {warm_train:.2f} s; first dev fertility (with the one-off dev "
          f"pre-token split) {time.perf_counter() - t:.2f} s")

    # wall seconds, and CPU seconds of this process (all its threads): on a shared
    # machine the CPU figure is the steadier one
    bare, full, bare_cpu, full_cpu = [], [], [], []
    for r in range(args.repeats):
        t, c = time.perf_counter(), time.process_time()
        trainer.train(ready)
        bare.append(time.perf_counter() - t)
        bare_cpu.append(time.process_time() - c)
        t, c = time.perf_counter(), time.process_time()
        mx.step(trainer, pool, mixture, args.budget, devset, mu=0.3, eps=0.5)
        full.append(time.perf_counter() - t)
        full_cpu.append(time.process_time() - c)
        print(f"  repeat {r}: bare {bare[-1]:.2f} s ({bare_cpu[-1]:.2f} CPU s)   "
              f"AdaptMix iteration {full[-1]:.2f} s ({full_cpu[-1]:.2f} CPU s)", flush=True)
    for what, b, f in (("wall", bare, full), ("CPU", bare_cpu, full_cpu)):
        mb, mf = statistics.median(b), statistics.median(f)
        print(f"{what:4s}  bare trainer: median {mb:.2f} s [{min(b):.2f}, {max(b):.2f}]   "
              f"AdaptMix iteration: median {mf:.2f} s [{min(f):.2f}, {max(f):.2f}]   ratio = {mf / mb:.3f}")
        print(f"{what:4s}  overhead = {100 * (mf - mb) / mb:.1f}%")
        # each iteration against the bare run just before it: the load of a shared
        # machine drifts slowly, so the pairs see nearly the same load
        paired = [100 * (y / x - 1) for x, y in zip(b, f)]
        print(f"{what:4s}  paired: median of iteration / bare - 1 per repeat = {statistics.median(paired):.1f}% "
              f"[{min(paired):.1f}, {max(paired):.1f}]")


if __name__ == "__main__":
    main()
