"""The AdaptMix update (Eqs. 1-4, 7) and the character allocation (Eq. 5).

"The Art of Breaking Words: Rethinking Multilingual Tokenizer Design"
(Thakur et al. 2025, arXiv:2508.06533), §3.4 and App. A.2. In the paper's
notation (N = iteration, T = total character budget, m^N = mixture shares,
summing to 1):

    δ_l   = (f_l − f_best) / f_range                   (Eq. 1)  normalised excess fertility
    w_l   = δ_l + ε                                     (Eq. 2)  ε > 0 keeps every language in
    t_l   = w_l / Σ_k w_k                               (Eq. 3)  target shares
    m_l^N = (1 − μ) · m_l^{N−1} + μ · t_l               (Eq. 4)  momentum μ ∈ (0, 1]
    C_l^N = round(m_l^N · T), renormalised, Σ C = T     (Eq. 5)  characters of language l
    f_range = 0  ⇒  m^N = m^{N−1} (rescaled to sum 1)   (Eq. 7)

How we read the quantities (interpretations are marked *reading*):

- ``f_range`` — *reading*: the spread of this iteration's fertilities,
  max_l f_l − min_l f_l, over the languages in the mixture.
- ``f_best`` — fixed at 1.0 (one token per word, the ideal) by default;
  ``f_best="dynamic"`` takes the lowest fertility of the iteration (the App. A.2
  ablation), so the best language's δ is 0 and only ε keeps it in the mix.
- δ_l is **not** clamped (the default, as the paper's Eq. 1 is written): a
  language below a fixed ``f_best`` (fertility under 1.0, possible when tokens
  cross whitespace) gets a negative δ_l, so ε − |δ_l| of weight. The paper does
  not say what happens then; ``clamp_delta=True`` is the option that clamps δ_l
  at 0 from below (such a language gets ε, as the best language does). A weight
  w_l = δ_l + ε that comes out negative gives no share at all, so it is refused
  (:class:`~modtok.errors.MixtureError`) rather than silently changed: pass
  ``clamp_delta=True`` or a larger ε.
- Eq. 5's rounding — *reading*: round half up, then the ±1 corrections that
  make Σ C = T go to the languages whose exact share m_l·T lost (or gained)
  most by rounding; ties by language order.

>>> m = adaptmix_update({"a": 3.0, "b": 2.0, "c": 1.0}, {"a": 1, "b": 1, "c": 1}, mu=0.5, eps=0.5)
>>> {lang: round(v, 4) for lang, v in m.items()}     # 5/12, 1/3, 1/4 (worked in tests)
{'a': 0.4167, 'b': 0.3333, 'c': 0.25}
>>> allocate(m, 10)                                  # 4.17, 3.33, 2.5 -> 4, 3, 3
{'a': 4, 'b': 3, 'c': 3}

What happens when a language's allocation exceeds its text is an explicit
``policy`` of :func:`allocate`:

- ``"cap"`` (default): cap it at what it has and redistribute the excess over
  the other languages in proportion to their shares (repeated until nothing
  exceeds; if every language is capped the total is less than T);
- ``"repeat"``: keep the allocation and repeat the language's text (the
  sampler's fixed shuffle wraps around: whole passes, then a prefix;
  :class:`modtok.mixture.pool.TextPool`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np

from modtok.errors import BudgetError, MixtureError, UnknownLanguageError

Mixture = dict[str, float]  # language -> share; shares are >= 0 and sum to 1

POLICIES = ("cap", "repeat")


def check_momentum(mu: float, eps: float) -> None:
    """μ ∈ (0, 1] and ε ≥ 0, else :class:`MixtureError`."""
    if not (isinstance(mu, (int, float)) and 0.0 < mu <= 1.0):
        raise MixtureError(f"momentum mu must be in (0, 1], got {mu!r}")
    if not (isinstance(eps, (int, float)) and eps >= 0.0 and math.isfinite(eps)):
        raise MixtureError(f"epsilon must be a finite number >= 0, got {eps!r}")


def check_policy(policy: str) -> None:
    """``policy`` is one of :data:`POLICIES`, else :class:`MixtureError`."""
    if policy not in POLICIES:
        raise MixtureError(f"unknown over-allocation policy {policy!r} (known: {', '.join(POLICIES)})")


def normalise(weights: Mapping[str, float], what: str = "mixture") -> Mixture:
    """Shares proportional to non-negative ``weights`` (positive sum).

    >>> normalise({"a": 3, "b": 1})
    {'a': 0.75, 'b': 0.25}
    """
    if not weights:
        raise MixtureError(f"{what}: no language")
    for lang, w in weights.items():
        if not (math.isfinite(w) and w >= 0):
            raise MixtureError(f"{what}: weight of {lang} is {w!r}, expected a finite number >= 0")
    z = float(sum(weights.values()))
    if z <= 0:
        raise MixtureError(f"{what}: weights sum to 0")
    return {lang: float(w) / z for lang, w in weights.items()}


def adaptmix_update(
    fertility: Mapping[str, float],
    previous: Mapping[str, float],
    *,
    mu: float,
    eps: float,
    f_best: float | str = 1.0,
    clamp_delta: bool = False,
) -> Mixture:
    """The next mixture m^N from this iteration's fertilities and m^{N−1} (Eqs. 1–4, 7).

    ``fertility`` and ``previous`` have the same languages; ``previous`` is
    normalised first. ``f_best`` is a number (1.0 by default) or ``"dynamic"``
    (the lowest fertility of this iteration, App. A.2). ``clamp_delta`` clamps
    δ_l at 0 from below (an option; the paper's Eq. 1 has no clamp, and neither
    has the default).

    >>> adaptmix_update({"a": 2.0, "b": 2.0}, {"a": 3, "b": 1}, mu=0.5, eps=0.1)   # Eq. 7
    {'a': 0.75, 'b': 0.25}

    Fertility below ``f_best``: f = (0.8, 1.8), f_range = 1, δ = (−0.2, 0.8), ε = 0.4,
    w = (0.2, 1.2) unclamped; clamped δ = (0, 0.8), w = (0.4, 1.2):

    >>> adaptmix_update({"a": 0.8, "b": 1.8}, {"a": 1, "b": 1}, mu=1.0, eps=0.4)["a"]   # 0.2 / 1.4
    0.14285714285714288
    >>> adaptmix_update({"a": 0.8, "b": 1.8}, {"a": 1, "b": 1}, mu=1.0, eps=0.4, clamp_delta=True)["a"]
    0.25
    """
    check_momentum(mu, eps)
    if set(fertility) != set(previous):
        raise MixtureError(
            f"fertility languages {sorted(fertility)} differ from the previous mixture's {sorted(previous)}"
        )
    for lang, f in fertility.items():
        if not (math.isfinite(f) and f > 0):
            raise MixtureError(f"fertility of {lang} is {f!r}; expected a finite number > 0")
    prev = normalise({lang: previous[lang] for lang in fertility}, "previous mixture")
    values = list(fertility.values())
    f_range = max(values) - min(values)
    if f_range == 0:  # Eq. 7: no signal, keep the mixture
        return prev
    if f_best == "dynamic":
        best = min(values)
    elif isinstance(f_best, (int, float)) and math.isfinite(f_best):
        best = float(f_best)
    else:
        raise MixtureError(f"f_best must be a number or 'dynamic', got {f_best!r}")
    delta = {lang: (f - best) / f_range for lang, f in fertility.items()}  # Eq. 1, as printed
    if clamp_delta:  # the option: a language below f_best counts as being at it
        delta = {lang: max(0.0, d) for lang, d in delta.items()}
    w = {lang: d + eps for lang, d in delta.items()}  # Eq. 2
    negative = {lang: x for lang, x in w.items() if x < 0}
    if negative:
        shown = ", ".join(f"{lang} (fertility {fertility[lang]:.4g})" for lang in negative)
        raise MixtureError(f"Eq. 2 gives a negative weight δ + ε for {shown}: fertility below "
                           f"f_best = {best:g} by more than ε·f_range; pass clamp_delta=True "
                           f"or a larger ε (now {eps:g})")
    if sum(w.values()) == 0:  # eps = 0 and every language at f_best (or below it, clamped)
        return prev
    t = normalise(w, "target shares")  # Eq. 3
    return {lang: (1.0 - mu) * prev[lang] + mu * t[lang] for lang in fertility}  # Eq. 4


def round_to_total(exact: Mapping[str, float], total: int) -> dict[str, int]:
    """Integers close to ``exact`` (non-negative, summing to ``total``): round half
    up, then ±1 to the languages that rounding moved furthest (ties: order).

    >>> round_to_total({"a": 2.5, "b": 2.5, "c": 5.0}, 10)   # 3 + 3 + 5 = 11: the first tie gives one back
    {'a': 2, 'b': 3, 'c': 5}
    """
    c = {lang: math.floor(x + 0.5) for lang, x in exact.items()}
    diff = total - sum(c.values())
    langs = list(exact)
    if diff > 0:  # deficit: raise those that lost most (exact − c largest)
        order = sorted(langs, key=lambda l: (-(exact[l] - c[l]), langs.index(l)))
        for lang in order[:diff]:
            c[lang] += 1
    elif diff < 0:  # surplus: lower those that gained most (exact − c smallest), never below 0
        order = sorted((l for l in langs if c[l] > 0), key=lambda l: (exact[l] - c[l], langs.index(l)))
        for lang in order[: -diff]:
            c[lang] -= 1
    return c


def allocate(
    mixture: Mapping[str, float],
    budget: int,
    available: Mapping[str, int] | None = None,
    policy: str = "cap",
) -> dict[str, int]:
    """Characters per language, C_l (Eq. 5), with the over-allocation ``policy``.

    ``available`` (characters each language has) matters only for ``"cap"``:
    a language that would get more than it has is capped and the excess goes
    to the others in proportion to their shares, until nothing exceeds.

    >>> allocate({"a": 0.5, "b": 0.25, "c": 0.25}, 100, {"a": 20, "b": 1000, "c": 1000})
    {'a': 20, 'b': 40, 'c': 40}
    >>> allocate({"a": 0.5, "b": 0.25, "c": 0.25}, 100, {"a": 20, "b": 1000, "c": 1000}, "repeat")
    {'a': 50, 'b': 25, 'c': 25}
    """
    check_policy(policy)
    shares = normalise(mixture)
    if not isinstance(budget, (int, np.integer)) or budget < len(shares):
        raise BudgetError(
            f"character budget T={budget!r} is smaller than the number of languages ({len(shares)})"
        )
    budget = int(budget)
    if policy == "repeat" or available is None:
        return round_to_total({lang: s * budget for lang, s in shares.items()}, budget)
    for lang in shares:
        if lang not in available:
            raise UnknownLanguageError(lang, available)
    capped: dict[str, int] = {}
    while True:
        free = {lang: s for lang, s in shares.items() if lang not in capped}
        rest = budget - sum(capped.values())
        if not free or sum(free.values()) == 0 or rest <= 0:
            out = {lang: capped.get(lang, 0) for lang in shares}
            break
        sub = normalise(free)
        alloc = round_to_total({lang: s * rest for lang, s in sub.items()}, rest)
        over = {lang for lang, c in alloc.items() if c > available[lang]}
        if not over:
            out = {lang: capped.get(lang, alloc.get(lang, 0)) for lang in shares}
            break
        for lang in over:
            capped[lang] = int(available[lang])
    return out
