"""One paired bootstrap: percentile intervals for statistics of aligned samples.

*Aligned* samples are arrays of one length ``n`` whose entry ``i`` belongs
together: the token counts of FLORES line ``i`` and of its English translation
(the premium, :mod:`modtok.evaluation.audit`), or the nats and scored bytes of
held-out piece ``i`` under every arm (bits per byte,
:mod:`modtok.studies.pretoken_floor.cpt`). A replicate draws
``n`` indices with replacement, once, and takes entry ``i`` of *every* sample at
each drawn index, so a statistic that compares samples (a ratio of totals, the
difference of two arms) always sees the same units on both sides. That is what
makes the interval of a difference tight where the per-sample intervals
overlap: the unit-to-unit spread cancels.

The recipe, fixed so that one seed gives the same numbers everywhere:

- draws ``numpy.random.default_rng(seed).integers(0, n, size=(n_boot, n))``;
- the statistic is computed on the samples (the point) and on the drawn
  samples, arrays of shape ``(n_boot, n)`` (the replicates): it reduces the
  last axis, so one function serves both;
- the interval is the ``(1 - level) / 2`` and ``(1 + level) / 2`` quantiles of
  the replicates (numpy's default, linear interpolation).

Worked example: two lines with 1 and 3 tokens against 1 and 1. A replicate
draws the lines {1, 1}, {1, 2} (or {2, 1}) or {2, 2}, with probabilities 1/4,
1/2, 1/4, so its ratio of totals is 2/2 = 1, 4/2 = 2 or 6/2 = 3 and its
difference of totals 0, 2 or 4; with 2,000 draws, over 2.5% of them land on
each end, so the 95% interval is the whole range:

>>> totals = lambda s: {"ratio": s["a"].sum(-1) / s["b"].sum(-1), "difference": s["a"].sum(-1) - s["b"].sum(-1)}
>>> paired_bootstrap({"a": [1, 3], "b": [1, 1]}, totals, n_boot=2000, seed=1)
{'ratio': (2.0, 1.0, 3.0), 'difference': (2.0, 0.0, 4.0)}
>>> ratio_ci([1, 3], [1, 1], n_boot=2000, seed=1)          # the ratio alone
(2.0, 1.0, 3.0)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from modtok.errors import UsageError
from modtok.evaluation.metrics import ratio

MARGIN = 0.01  # bits per byte: the non-inferiority margin of the labels (the pretoken-floor paper's §VI)
LABELS = ("better", "non-inferior", "worse", "no detectable difference")  # §VI's order (label())
Statistic = Callable[[dict[str, np.ndarray]], Mapping[str, "np.ndarray | float"]]


def paired_bootstrap(samples: Mapping[str, object], statistic: Statistic, n_boot: int = 1000,
                     level: float = 0.95, seed: int = 0) -> dict[str, tuple[float, float, float]]:
    """``{name: (point, lo, hi)}`` for every statistic ``statistic`` returns.

    ``samples``: named aligned 1-d arrays (cast to float64), all of one
    non-zero length; ``statistic(arrays)`` returns ``{name: value}`` and must
    reduce the last axis (it gets shape ``(n,)`` for the point and
    ``(n_boot, n)`` for the replicates). Draws and quantiles as in the module
    docstring.
    """
    arrays = {name: np.asarray(values, np.float64) for name, values in samples.items()}
    shapes = {name: a.shape for name, a in arrays.items()}
    if not arrays or len(set(shapes.values())) != 1 or any(len(s) != 1 or s[0] == 0 for s in shapes.values()):
        raise UsageError(f"paired bootstrap: need aligned non-empty 1-d samples, got shapes {shapes}")
    n = next(iter(shapes.values()))[0]
    idx = np.random.default_rng(seed).integers(0, n, size=(n_boot, n))  # (n_boot, n): replicate r takes units idx[r]
    point = statistic(arrays)
    boot = statistic({name: a[idx] for name, a in arrays.items()})  # each (n_boot,)
    q = [(1 - level) / 2, (1 + level) / 2]
    return {name: (float(point[name]), *map(float, np.quantile(boot[name], q))) for name in point}


def ratio_ci(num, den, n_boot: int = 1000, level: float = 0.95, seed: int = 0) -> tuple[float, float, float]:
    """``(Σnum / Σden, lo, hi)``: the ratio of totals of two aligned count arrays
    and its paired-bootstrap interval (unit ``i`` of ``num`` is resampled with
    unit ``i`` of ``den``); a zero ``Σden`` is a :class:`~modtok.errors.DataError`.

    >>> ratio_ci([2, 4, 6], [1, 2, 3])          # every unit has ratio 2: no spread
    (2.0, 2.0, 2.0)
    """
    num, den = np.asarray(num, np.float64), np.asarray(den, np.float64)
    if num.shape != den.shape or num.ndim != 1 or num.size == 0:
        raise UsageError(f"ratio_ci: need two aligned non-empty 1-d count arrays, got shapes {num.shape} and {den.shape}")
    ratio(num.sum(), den.sum(), "ratio (the reference side has no token)")  # a zero total is an error, not inf
    res = paired_bootstrap({"num": num, "den": den}, lambda s: {"ratio": s["num"].sum(-1) / s["den"].sum(-1)},
                           n_boot, level, seed)
    return res["ratio"]


def t_quantile(p: float, df: int) -> float:
    """The ``p`` quantile (``p`` in [0.5, 1)) of Student's t with ``df`` degrees of freedom,
    by bisection on its CDF (the density integrated by Simpson's rule; no SciPy here).

    >>> round(t_quantile(0.975, 1), 3), round(t_quantile(0.975, 2), 3), round(t_quantile(0.975, 30), 3)
    (12.706, 4.303, 2.042)
    """
    if not 0.5 <= p < 1 or df < 1:
        raise UsageError(f"t_quantile: need 0.5 <= p < 1 and df >= 1, got p={p}, df={df}")
    log_c = math.lgamma((df + 1) / 2) - math.lgamma(df / 2) - 0.5 * math.log(df * math.pi)

    def cdf(t: float, n: int = 2000) -> float:  # 0.5 + the density's integral over [0, t], Simpson's rule
        x = np.linspace(0.0, t, n + 1)
        f = np.exp(log_c - (df + 1) / 2 * np.log1p(x * x / df))
        return 0.5 + t / (3 * n) * (f[0] + f[-1] + 4 * f[1:-1:2].sum() + 2 * f[2:-1:2].sum())

    lo, hi = 0.0, 1.0
    while cdf(hi) < p:
        lo, hi = hi, 2 * hi
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if cdf(mid) < p else (lo, mid)
    return (lo + hi) / 2


def t_interval(values, level: float = 0.95) -> tuple[float, float, float]:
    """``(mean, lo, hi)``: the mean of a few replicates (seeds) and its Student-t interval,
    mean ± t((1 + level) / 2, n - 1) · sd / √n. For a handful of seeds this, not a
    bootstrap, is the interval: a percentile bootstrap over 3 seeds has 10 distinct
    resamples and is too narrow. A paired comparison passes its per-replicate differences.

    Worked example: differences 1, 2, 3 have mean 2 and sd 1, so the half-width is
    4.303 · 1 / √3 = 2.484:

    >>> tuple(round(x, 3) for x in t_interval([1.0, 2.0, 3.0]))
    (2.0, -0.484, 4.484)
    """
    x = np.asarray(values, np.float64)
    if x.ndim != 1 or x.size < 2:
        raise UsageError(f"t_interval: need at least 2 replicates in a 1-d array, got shape {x.shape}")
    mean, half = float(x.mean()), t_quantile((1 + level) / 2, x.size - 1) * float(x.std(ddof=1)) / math.sqrt(x.size)
    return mean, mean - half, mean + half


def label(lo: float, hi: float, margin: float = MARGIN) -> str:
    """The registered label of a difference ``a − b`` of a loss (bits per byte:
    lower is better) from its 95% interval ``[lo, hi]``, tested in the fixed
    order of the pretoken-floor paper's §VI ("Analysis"): *better* if the
    interval lies below 0; otherwise *non-inferior* if it lies below ``margin``;
    otherwise *worse* if it lies above 0; otherwise *no detectable difference*.
    So the paper's own example, [+0.004, +0.007], is non-inferior although it
    excludes 0.

    >>> label(0.004, 0.007), label(0.0084, 0.0104), label(-0.0014, -0.0007)   # §VI's example; Qwen R2 − R1 (§VII-B)
    ('non-inferior', 'worse', 'better')
    """
    if hi < 0:
        return LABELS[0]
    if hi < margin:
        return LABELS[1]
    if lo > 0:
        return LABELS[2]
    return LABELS[3]


def bootstrap(nats: Mapping[str, Sequence[float]], nbytes: Mapping[str, Sequence[float]],
              pairs: Sequence[tuple[str, str]] | None = None, n_boot: int = 1000, level: float = 0.95,
              seed: int = 0) -> dict[str, tuple[float, float, float]]:
    """Bits per byte ``Σnats / ln 2 / Σbytes`` of every arm (one score each) and
    the difference of each pair ``(a, b)`` (key ``"a − b"``; default: every later
    arm minus every earlier one), each as ``(point, lo, hi)``, resampling the
    pieces themselves with :func:`paired_bootstrap`. Arms may score different
    bytes here; :func:`modtok.studies.pretoken_floor.cpt.scoring.compare` is the
    seeds-and-documents version the continued-pretraining experiment uses.

    >>> ln2 = math.log(2)                   # A: 2 bits on 1 byte, B: 1 bit on 1 byte, on each of two pieces
    >>> bootstrap({"A": [2 * ln2, 2 * ln2], "B": [ln2, ln2]}, {"A": [1, 1], "B": [1, 1]}, n_boot=50)["B − A"]
    (-1.0, -1.0, -1.0)
    """
    arms = list(nats)
    samples = {f"bits {a}": np.asarray(nats[a], np.float64) / math.log(2) for a in arms}
    samples |= {f"bytes {a}": nbytes[a] for a in arms}
    if pairs is None:
        pairs = [(b, a) for i, a in enumerate(arms) for b in arms[i + 1 :]]

    def bpb(s):
        out = {a: s[f"bits {a}"].sum(-1) / s[f"bytes {a}"].sum(-1) for a in arms}
        return out | {f"{a} − {b}": out[a] - out[b] for a, b in pairs}

    return paired_bootstrap(samples, bpb, n_boot, level, seed)
