"""What a new widget setting costs at normal size: notebook 01's language subset and budget,
notebook 06's explorer (issue 44: ≤ 5 s and ≤ 10 s).

Each timing calls the study function the notebook's panel calls, in one process, the way the
notebook's cells build the study (pool + FLORES-200 from ``MODTOK_POOL`` / ``MODTOK_FLORES``;
set ``MODTOK_RESULTS`` to a new directory so that nothing is read back from an earlier run).
The machine's load is printed beside every figure, and the process's CPU seconds (the trainers' own
code is single-threaded: about what a quiet machine's wall clock would show); ``--profile N`` adds
cProfile's N costliest functions of each timed call::

    python bench/new_settings.py subsets 0.5.10,1.6.11 [--budget all] [--no-deployed]   # 01: new subsets (indices)
    python bench/new_settings.py budgets 1.5.9                           # 01: one subset, its budget moved
    python bench/new_settings.py explore mu=0.35,eps=0.55,langs=0 [--size run]   # 06: new explorer settings
    python bench/new_settings.py explore trainer=hf-bpe,trainer=sp-unigram --ahead   # 06: after make demo
    python bench/new_settings.py devsplit                                # 06: a new dev split vs a kept one
    python bench/new_settings.py costs [--points 25000:8000,...]          # 06: one iteration's cost, fitted

``subsets --budget paper`` trains a subset at the paper's share for that many languages, as
notebook 01 sets its slider; ``--budget all`` at the all-language budget V, the value the slider
kept before session 18. ``explore --size explorer`` starts at ``study.explorer_size`` (what
notebook 06 shows); ``--size run`` at the headline run's 10 iterations, 32k and 500k characters a
language (the explorer before session 18). Both older forms also run in a checkout of e66f9c8,
which is how bench/RESULTS.md's "main" columns were taken.
"""

from __future__ import annotations

import argparse
import cProfile
import contextlib
import os
import pstats
import time


def load() -> str:
    with open("/proc/loadavg") as f:
        return f.read().split()[0]


@contextlib.contextmanager
def profiled(args, label: str):
    """With ``--profile N``: cProfile around the block, its N costliest functions (cumulative) printed."""
    if not getattr(args, "profile", 0):
        yield
        return
    prof = cProfile.Profile()
    prof.enable()
    try:
        yield
    finally:
        prof.disable()
        print(f"--- profile of {label}")
        pstats.Stats(prof).sort_stats("cumulative").print_stats(args.profile)


def notebook01(train_at: int = 128_000, with_deployed: bool = True):
    """Notebook 01's study at normal size: K = 8k, 1M training characters a language, every
    FLORES-200 devtest line, the deployed tokenizers loaded lazily (none: ``--no-deployed``, a
    shorter warm-up; their counts are kept for the kernel either way, so a subset reads them),
    joint BPEs at ``train_at``."""
    from modtok.artifacts import deployed
    from modtok.studies.modular_tokenizers import inefficiency as ineff
    from modtok.text import data

    corpora = data.default_corpora(train_chars=1_000_000, eval_lines=None)
    k = 8_000
    v = ineff.paper_joint_budget(len(corpora.languages), k)
    return ineff, ineff.InefficiencyStudy(corpora, k, deployed.lazy() if with_deployed else {},
                                          train_at=max(train_at, v)), k, v  # (module, study, K, V)


def warm(s01, v: int) -> None:
    """What the first Run All leaves: notebook 01's default view, every language at V (its joint BPE
    trained at the ceiling, the references, the deployed tokenizers' counts, the test lines'
    pre-tokens and every language's pre-token arrays; the study's own memo, read by ``nsl_table``)."""
    s01.nsl_table(tuple(s01.corpora.languages), v)


def subsets(args) -> None:
    ineff, s01, k, v = notebook01(with_deployed=args.deployed)
    langs = s01.corpora.languages
    asked = [tuple(langs[int(i)] for i in s.split(".")) for s in args.which.split(",")]
    t = time.time()
    warm(s01, v)
    print(f"{len(langs)} languages, V = {v:,}; warm-up {time.time() - t:.1f} s (load {load()})", flush=True)
    for sub in asked:
        budget = v if args.budget == "all" else ineff.paper_joint_budget(len(sub), k)
        t, cpu = time.time(), time.process_time()
        with profiled(args, f"{len(sub)} languages"):
            s01.nsl_table(sub, budget)
        print(f"subset of {len(sub)} ({', '.join(sub)}) at {budget:,} (trained at {s01.trained(sub):,}): "
              f"{time.time() - t:.2f} s, CPU {time.process_time() - cpu:.2f} s (load {load()})", flush=True)


def budgets(args) -> None:
    _, s01, k, v = notebook01(with_deployed=args.deployed)
    langs = s01.corpora.languages
    sub = tuple(langs[int(i)] for i in args.which.split("."))
    warm(s01, v)
    for budget in (6_000, 20_000, 40_000, 80_000, 128_000, 30_000):  # up, then down into the ceiling's training
        t = time.time()
        s01.nsl_table(sub, budget)
        print(f"{', '.join(sub)} at {budget:,}: {time.time() - t:.2f} s (trained at {s01.trained(sub):,}; "
              f"load {load()})", flush=True)


def notebook06():
    """Notebook 06's study at normal size: the paper's 16 languages, 3M characters a language
    available, FLORES-200 dev, whitespace pre-tokens, seed 0."""
    from modtok import mixture as mx
    from modtok.studies import adaptmix

    d = adaptmix.load_data(mx.PAPER_LANGUAGES, 3_000_000, None, 0)
    return mx, adaptmix, d, adaptmix.AdaptMixStudy(d, seed=0, scheme="whitespace",
                                                   exclude_spaceless=adaptmix.spaceless_problem(d) is not None)


def explore(args) -> None:
    from modtok.cache import AHEAD

    _, adaptmix, _, s = notebook06()
    run_size = (10, 32_000, 500_000)  # the headline run: --size run explores at it, uncut
    e = adaptmix.explorer_size(*run_size) if args.size == "explorer" else adaptmix.ExplorerSize(*run_size, run_size)
    base = dict(mu=0.3, eps=0.5, budget=e.per_lang, iterations=e.iterations, vocab=e.vocab, trainer="modtok-bpe",
                langs=tuple(s.langs))
    if args.ahead:  # make demo's kernel first (the default view, the trainer menu ahead), then a class's
        os.environ[AHEAD] = "1"
        t = time.time()
        s.explore(**base)
        line = s.explore_ahead(e, base["mu"], base["eps"], base["trainer"])
        print(f"make demo's kernel: the default view and {line}; {time.time() - t:.1f} s (load {load()})", flush=True)
        del os.environ[AHEAD]
        _, _, _, s = notebook06()
        print("a class's kernel:", s.explore_ahead(e, base["mu"], base["eps"], base["trainer"]), flush=True)

    def run(label: str, **change) -> None:
        setting = {**base, **change}
        n = s.to_train(setting["trainer"], setting["vocab"], setting["budget"] * len(setting["langs"]),
                       setting["iterations"], setting["mu"], setting["eps"], setting["langs"])
        guess = adaptmix.estimated_seconds(setting["trainer"], setting["budget"] * len(setting["langs"]),
                                           setting["vocab"], n)  # what the explorer's "ask above" compares
        t, cpu = time.time(), time.process_time()
        with profiled(args, label):
            source = s.explore(**setting).get("source")
        print(f"{label}: {time.time() - t:.2f} s, CPU {time.process_time() - cpu:.2f} s (load {load()}); "
              f"estimated {guess:.2f} s for {n} iterations{'; ' + source if source else ''}", flush=True)

    run("the default view (the first Run All)")
    for move in filter(None, args.moves.split(",")):
        key, value = move.split("=")
        if key == "langs":  # three languages from index value
            run(move, langs=tuple(s.langs[int(value):int(value) + 3]))
        else:
            run(move, **{key: value if key == "trainer" else type(base[key])(float(value))})


def devsplit(args) -> None:
    mx, _, d, s = notebook06()
    tok = mx.make_trainer("modtok-bpe", 8_000, "whitespace").train(
        s.pool.take({lang: 100_000 for lang in s.langs}).counts("whitespace"))
    kept = mx.DevSet(d.dev, s.langs)
    kept.fertility(tok)
    for _ in range(args.repeats):
        t = time.time()
        mx.DevSet(d.dev, s.langs).fertility(tok)
        new = time.time() - t
        t = time.time()
        kept.fertility(tok)
        print(f"a new DevSet and its fertility {new:.2f} s, a kept DevSet's {time.time() - t:.2f} s (load {load()})",
              flush=True)


COST_POINTS = "50000:8000,100000:8000,200000:8000,400000:8000,50000:2000,50000:32000,200000:32000"


def costs(args) -> None:
    """One AdaptMix iteration (UniMix: the sample, one training, the dev fertility) of every trainer
    at each ``T per language:vocabulary`` of ``--points``, computed (set ``MODTOK_RESULTS`` to a new
    directory), then per trainer the least-squares fit of ``log s = log c + b log(T n / 1M) + g
    log(vocab / 8k)``: the constants of ``adaptmix.ITERATION_COST``."""
    import numpy as np

    mx, _, _, s = notebook06()
    points = [tuple(int(x) for x in p.split(":")) for p in args.points.split(",")]
    n = len(s.langs)
    s.run("modtok-bpe", 1000, 5000 * n, 1, 0.3, 0.5)  # untimed: the pool's sample and the dev split, once
    for trainer in mx.TRAINERS:
        rows = []
        for per_lang, vocab in points:
            t = time.time()
            s.run(trainer, vocab, per_lang * n, 1, 0.3, 0.5)
            rows.append((per_lang * n / 1e6, vocab / 8000, time.time() - t))
            print(f"{trainer} T = {per_lang:,} a language ({n} languages), vocabulary {vocab:,}: "
                  f"{rows[-1][2]:.2f} s (load {load()})", flush=True)
        a = np.array([[1.0, np.log(m), np.log(v)] for m, v, _ in rows])
        (logc, b, g), *_ = np.linalg.lstsq(a, np.log([sec for *_, sec in rows]), rcond=None)
        above = max(sec / (np.exp(logc) * m ** b * v ** g) for m, v, sec in rows)  # the fit's worst underestimate
        print(f"fit {trainer}: ({np.exp(logc):.3f}, {b:.2f}, {g:.2f}) x {above:.2f}  # seconds at 1M characters and "
              f"8k, exponents of characters and vocabulary, times the largest measured / fitted", flush=True)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="what", required=True)
    a = sub.add_parser("subsets", help="01: new language subsets, e.g. 0.5.10,1.6.11")
    a.add_argument("which")
    a.add_argument("--budget", choices=("paper", "all"), default="paper")
    a.set_defaults(fn=subsets)
    a = sub.add_parser("budgets", help="01: one subset (e.g. 1.5.9), its budget slider moved")
    a.add_argument("which")
    a.set_defaults(fn=budgets)
    for a in (sub.choices["subsets"], sub.choices["budgets"]):
        a.add_argument("--no-deployed", dest="deployed", action="store_false",
                       help="without the deployed tokenizers (a shorter warm-up)")
    a = sub.add_parser("explore", help="06: explorer moves, e.g. mu=0.35,vocab=7500,langs=0,trainer=sp-bpe")
    a.add_argument("moves", nargs="?", default="")
    a.add_argument("--size", choices=("explorer", "run"), default="explorer")
    a.add_argument("--ahead", action="store_true", help="first what make demo computes ahead ($MODTOK_AHEAD), then "
                   "the moves in a new study (a class's kernel on the same results cache)")
    a.set_defaults(fn=explore)
    a = sub.add_parser("devsplit", help="06: a new dev split against a kept one")
    a.add_argument("--repeats", type=int, default=5)
    a.set_defaults(fn=devsplit)
    a = sub.add_parser("costs", help="06: one AdaptMix iteration of every trainer, timed and fitted")
    a.add_argument("--points", default=COST_POINTS, help="T per language:vocabulary, comma-separated")
    a.set_defaults(fn=costs)
    for a in sub.choices.values():
        a.add_argument("--profile", type=int, default=0, metavar="N",
                       help="cProfile each timed call, print its N costliest functions")
    args = p.parse_args()
    args.fn(args)


if __name__ == "__main__":
    main()
