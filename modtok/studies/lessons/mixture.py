"""Notebook 06, learn it small: two AdaptMix updates, Eqs. 1-5, one quantity at a time.

:func:`reference` writes "The Art of Breaking Words" §3.4 out in plain Python (f_best = 1,
f_range = max - min of the iteration's fertilities, no clamp: the defaults of
:mod:`modtok.mixture.update`): δ (Eq. 1), w (Eq. 2), t (Eq. 3), the next mixture m (Eq. 4)
and the characters per language C (Eq. 5, round half up, then the corrections that make
ΣC = T). :func:`engine_run` is the library's :func:`~modtok.mixture.update.adaptmix_update`
and :func:`~modtok.mixture.update.allocate` on the same numbers.

The fertilities are the toy's input: what the tokenizer trained on each mixture measured
(tokens per word). Hindi is the worst at first and the mixture moves towards it; then its
fertility falls, Thai's is the highest, and the second update moves towards Thai:

>>> run = reference()
>>> [round(run[0]["m"][l], 4) for l in LANGS], [round(run[1]["m"][l], 4) for l in LANGS]
([0.2212, 0.4455, 0.3333], [0.1854, 0.4157, 0.399])
>>> run[0]["C"]
{'eng_Latn': 221, 'hin_Deva': 446, 'tha_Thai': 333}
"""

from __future__ import annotations

import math

from modtok.mixture.update import adaptmix_update, allocate
from modtok.studies.lessons.steps import Prediction, Step, comparison, table

LANGS = ["eng_Latn", "hin_Deva", "tha_Thai"]
START = {"eng_Latn": 1 / 3, "hin_Deva": 1 / 3, "tha_Thai": 1 / 3}
FERTILITY = [  # per iteration, as measured on the tokenizer of the previous mixture
    {"eng_Latn": 1.2, "hin_Deva": 2.6, "tha_Thai": 1.9},
    {"eng_Latn": 1.3, "hin_Deva": 1.9, "tha_Thai": 2.1},
]
MU, EPS, T = 0.5, 0.1, 1000  # momentum μ, ε, character budget T


def reference(
    fertility=FERTILITY, start=START, mu: float = MU, eps: float = EPS, total: int = T
) -> list[dict]:
    """One dict per iteration: f, δ, w, t, m (the next mixture) and C, by hand."""
    m, out = dict(start), []
    for f in fertility:
        f_range = max(f.values()) - min(f.values())
        delta = {l: (f[l] - 1.0) / f_range for l in f}  # Eq. 1, f_best = 1
        w = {l: delta[l] + eps for l in f}  # Eq. 2
        t = {l: w[l] / sum(w.values()) for l in f}  # Eq. 3
        m = {l: (1 - mu) * m[l] + mu * t[l] for l in f}  # Eq. 4
        c = {l: math.floor(m[l] * total + 0.5) for l in f}  # Eq. 5, round half up ...
        for l in sorted(f, key=lambda l: -(m[l] * total - c[l]))[: total - sum(c.values())]:
            c[l] += 1  # ... then the deficit to those that rounding cost most
        for l in sorted(f, key=lambda l: m[l] * total - c[l])[: max(0, sum(c.values()) - total)]:
            c[l] -= 1  # ... or the surplus from those it gave most
        out.append({"f": f, "delta": delta, "w": w, "t": t, "m": m, "C": c})
    return out


def engine_run(
    fertility=FERTILITY, start=START, mu: float = MU, eps: float = EPS, total: int = T
) -> list[dict]:
    """The library's update and allocation, iteration by iteration."""
    m, out = dict(start), []
    for f in fertility:
        m = adaptmix_update(f, m, mu=mu, eps=eps)
        out.append({"m": m, "C": allocate(m, total)})
    return out


def trace(fertility=FERTILITY, start=START, mu: float = MU, eps: float = EPS, total: int = T) -> list[Step]:
    """Per iteration: the fertilities, then δ → w → t, then the mixture and the characters."""
    steps = [
        Step(
            "the start",
            f"a uniform mixture; μ = {mu}, ε = {eps}, T = {total} characters",
            [table(["language", "m"], [[l, round(v, 4)] for l, v in start.items()])],
            {"m": dict(start)},
        )
    ]
    m = start
    for n, it in enumerate(reference(fertility, start, mu, eps, total), 1):
        worst = max(it["f"], key=it["f"].get)
        cols = ["language", "fertility f", "δ (Eq. 1)", "w = δ + ε (Eq. 2)", "t (Eq. 3)"]
        rows = [
            [l, it["f"][l], round(it["delta"][l], 4), round(it["w"][l], 4), round(it["t"][l], 4)]
            for l in it["f"]
        ]
        steps.append(
            Step(
                f"iteration {n}: fertility → target",
                f"{worst} has the highest fertility, so the largest target share",
                [table(cols, rows, mark=list(it["f"]).index(worst))],
                it,
            )
        )
        rows = [[l, round(m[l], 4), round(it["m"][l], 4), it["C"][l]] for l in it["f"]]
        steps.append(
            Step(
                f"iteration {n}: the next mixture",
                f"m = (1 − {mu})·m_prev + {mu}·t (Eq. 4); C = round(m·T) (Eq. 5)",
                [
                    table(
                        ["language", "m before", "m after (Eq. 4)", "C (Eq. 5)"],
                        rows,
                        mark=list(it["f"]).index(worst),
                    )
                ],
                it,
            )
        )
        m = it["m"]
    return steps


def prediction(fertility=FERTILITY, start=START, mu: float = MU, eps: float = EPS) -> Prediction:
    """ "Does the next update raise or lower this language's share?" for the last iteration's worst."""
    first = reference(fertility[:1], start, mu, eps)[0]
    lang = max(first["f"], key=first["f"].get)
    second = reference(fertility, start, mu, eps)[1]
    answer = "rise" if second["m"][lang] > first["m"][lang] else "fall"
    return Prediction(
        f"Iteration 2: {lang}'s fertility is now {fertility[1][lang]} (was {fertility[0][lang]}). "
        f"Does its share rise or fall?",
        ["rise", "fall"],
        answer,
        f"its target t is {second['t'][lang]:.4f} against a share of {first['m'][lang]:.4f}: "
        f"Eq. 4 moves the share {'up' if answer == 'rise' else 'down'} towards t",
    )


def engine_step(fertility=FERTILITY, start=START, mu: float = MU, eps: float = EPS, total: int = T) -> Step:
    """:func:`~modtok.mixture.update.adaptmix_update` and :func:`~modtok.mixture.update.allocate`
    next to the hand-written equations (shares to 12 decimals)."""
    ref, engine = reference(fertility, start, mu, eps, total), engine_run(fertility, start, mu, eps, total)
    rows = []
    for n, (a, b) in enumerate(zip(ref, engine, strict=True), 1):
        rows += [
            (
                f"m after iteration {n}",
                {l: round(v, 12) for l, v in a["m"].items()},
                {l: round(v, 12) for l, v in b["m"].items()},
            ),
            (f"C after iteration {n}", a["C"], b["C"]),
        ]
    return comparison("the library (mixture.update)", rows)
