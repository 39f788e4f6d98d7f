"""Notebook 05, learn it small: parity-aware BPE serves the costliest language first.

:func:`reference` is the base variant of :mod:`modtok.bpe.parity` written naively: before
each merge, encode every language's dev words with the merges so far
(:class:`~modtok.bpe.reference.ReferenceEngine`), take the language with the most dev tokens
(ties: the first language), and merge *its* most frequent training pair (at least
``min_frequency`` = 2 times; a language with none is passed over) in every language.

The docstring example of :mod:`modtok.bpe.parity`, two merges: y costs 4 dev tokens to x's
2, so its pair c+d wins although x's a+b is more frequent overall (9 vs 2); then both cost
2 and the tie goes to x:

>>> [(s.data["chosen"], s.data["pair"], s.data["global_pair"]) for s in trace()[1:-1]]
[('y', ('c', 'd'), ('a', 'b')), ('x', ('a', 'b'), ('a', 'b'))]
>>> engine_run()["merges"] == reference()["merges"]
True
"""

from __future__ import annotations

from collections import Counter

from modtok.bpe import parity
from modtok.bpe.model import BPEModel
from modtok.bpe.reference import ReferenceEngine
from modtok.studies.lessons.steps import Prediction, Step, comparison, label, table

TRAIN = {"x": Counter({"ab": 9}), "y": Counter({"cd": 2})}  # bpe/parity.py's docstring
DEV = {"x": Counter({"ab": 1}), "y": Counter({"cd": 2})}
MERGES = 2
MIN_FREQUENCY = 2  # ParityConfig's default


def reference(train=TRAIN, dev=DEV, merges: int = MERGES) -> dict:
    """Naive parity-aware BPE: ``{"merges", "choices", "costs": [{lang: dev tokens}], "steps"}``."""
    langs = list(train)
    model = BPEModel([], "whitespace")
    eng, dev_eng = ReferenceEngine(train), ReferenceEngine(dev)
    out = {"merges": [], "choices": [], "costs": [], "steps": []}
    for _ in range(merges):
        costs = {lang: dev_eng.num_tokens(lang) for lang in langs}
        out["costs"].append(costs)
        ranked = sorted(langs, key=lambda lang: (-costs[lang], langs.index(lang)))  # ties: the first language
        chosen = next((lang for lang in ranked if (b := eng.best_pair(lang)) and b[2] >= MIN_FREQUENCY), None)
        if chosen is None:
            break
        a, b, n = eng.best_pair(chosen)
        top = eng.best_pair()
        out["steps"].append(
            {
                "costs": costs,
                "chosen": chosen,
                "pair": (a, b),
                "count": n,
                "pair_counts": {
                    lang: dict(
                        sorted(
                            eng.pair_counts(lang).items(),  # tie-break order
                            key=lambda kv: (eng.rank(kv[0][0]), eng.rank(kv[0][1])),
                        )
                    )
                    for lang in langs
                },
                "global_pair": top[:2],
                "global_count": top[2],
            }
        )
        c = model.add_merge(a, b)
        eng.merge(a, b, c)
        dev_eng.merge(a, b, c)
        out["merges"].append((a, b))
        out["choices"].append(langs.index(chosen))
    out["costs"].append({lang: dev_eng.num_tokens(lang) for lang in langs})
    out["model"] = model
    return out


def engine_run(train=TRAIN, dev=DEV, merges: int = MERGES) -> dict:
    """The library's :func:`modtok.bpe.parity.train` (the engine, per-language heaps) on the toy."""
    res = parity.train(train, dev, 256 + merges, scheme="whitespace")
    return {
        "merges": res.model.merges,
        "choices": res.choices,
        "costs": [dict(zip(res.languages, map(int, row))) for row in res.dev_tokens],
    }


def trace(train=TRAIN, dev=DEV, merges: int = MERGES) -> list[Step]:
    """The toy, then per merge: every language's dev cost, the costliest one's pair."""
    run = reference(train, dev, merges)
    vocab = run["model"].vocab

    def pair(p) -> str:
        return f"{label(vocab[p[0]])} + {label(vocab[p[1]])}"

    steps = [
        Step(
            "the toy",
            "training words and parallel dev words per language",
            [
                table(
                    ["language", "training", "dev"],
                    [[lang, dict(train[lang]), dict(dev[lang])] for lang in train],
                )
            ],
        )
    ]
    for m, s in enumerate(run["steps"], 1):
        rows = []
        for lang in train:
            counts = s["pair_counts"][lang]
            top = max(counts.items(), key=lambda kv: kv[1], default=None)
            rows.append([lang, s["costs"][lang], pair(top[0]) if top else "—", top[1] if top else 0])
        steps.append(
            Step(
                f"merge {m}: {pair(s['pair'])} for {s['chosen']}",
                f"{s['chosen']} costs most on the dev text ({s['costs'][s['chosen']]} tokens), so its pair "
                f"wins; classical BPE would merge {pair(s['global_pair'])} ({s['global_count']} times)",
                [
                    table(
                        ["language", "dev tokens", "its top pair", "count"],
                        rows,
                        mark=list(train).index(s["chosen"]),
                    )
                ],
                {
                    **s,
                    "pair": tuple(label(vocab[t]) for t in s["pair"]),
                    "global_pair": tuple(label(vocab[t]) for t in s["global_pair"]),
                },
            )
        )
    after = run["costs"][-1]
    spread = [max(c.values()) - min(c.values()) for c in (run["costs"][0], after)]
    steps.append(
        Step(
            "after the merges",
            f"the gap between the costliest and the cheapest language: "
            f"{spread[0]} dev tokens before, {spread[1]} after",
            [
                table(
                    ["language", "dev tokens before", "after"],
                    [[lang, run["costs"][0][lang], after[lang]] for lang in train],
                )
            ],
            {"costs": run["costs"]},
        )
    )
    return steps


def prediction(train=TRAIN, dev=DEV) -> Prediction:
    """ "Which language does the first merge serve?"."""
    first = reference(train, dev, 1)["steps"][0]
    costs = ", ".join(f"{lang} {n}" for lang, n in first["costs"].items())
    return Prediction(
        "Which language does parity-aware BPE serve with its first merge?",
        list(train),
        first["chosen"],
        f"the costliest on the dev text (tokens: {costs}), whatever pair is most frequent overall",
    )


def engine_step(train=TRAIN, dev=DEV, merges: int = MERGES) -> Step:
    """The toy through :func:`modtok.bpe.parity.train` next to the naive reference."""
    ref, engine = reference(train, dev, merges), engine_run(train, dev, merges)
    return comparison(
        "the engine (bpe.parity.train)",
        [
            ("merges", ref["merges"], engine["merges"]),
            ("languages served", ref["choices"], engine["choices"]),
            ("dev costs after each merge", ref["costs"], engine["costs"]),
        ],
    )
