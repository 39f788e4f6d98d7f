"""The one paired bootstrap (modtok.evaluation.stats): hand-derived intervals, the
draws it documents, and pairing (resampling units together) checked against the
unpaired alternative."""

from __future__ import annotations

import numpy as np
import pytest

from modtok.errors import DataError, UsageError
from modtok.evaluation import stats


def test_ratio_ci_by_hand():
    # lines (1/1) and (3/1): resamples give 1, 2 or 3, with P(1) = P(3) = 1/4
    point, lo, hi = stats.ratio_ci([1, 3], [1, 1], n_boot=2000, seed=1)
    assert (point, lo, hi) == (2.0, 1.0, 3.0)
    # every line the same ratio: the interval collapses onto it
    assert stats.ratio_ci([2, 4, 6], [1, 2, 3]) == (2.0, 2.0, 2.0)
    # paired: resampling lines together keeps a perfectly correlated pair exact,
    # where unpaired resampling would not
    rng = np.random.default_rng(0)
    den = rng.integers(1, 50, 300)
    p, lo, hi = stats.ratio_ci(2 * den + (np.arange(300) % 2), den)
    assert lo <= p <= hi and hi - lo < 0.02
    assert stats.ratio_ci([1, 3], [1, 1], seed=5) == stats.ratio_ci([1, 3], [1, 1], seed=5)
    with pytest.raises(UsageError, match="aligned"):
        stats.ratio_ci([1, 2], [1])
    with pytest.raises(DataError, match="denominator is 0"):
        stats.ratio_ci([1, 2], [0, 0])


def test_the_draws_and_quantiles_are_the_documented_ones():
    # sum of the drawn indices: the replicates are exactly rng.integers(...).sum(1)
    n, n_boot, seed = 7, 300, 4
    res = stats.paired_bootstrap({"i": np.arange(n)}, lambda s: {"sum": s["i"].sum(-1)}, n_boot, 0.9, seed)
    draws = np.random.default_rng(seed).integers(0, n, size=(n_boot, n)).sum(1)
    assert res["sum"] == (21.0, *np.quantile(draws, [(1 - 0.9) / 2, (1 + 0.9) / 2]))


def test_every_statistic_sees_the_same_draws():
    # b = a / 2 unit by unit: every replicate of a - b is half of a's, so the
    # interval of the difference is exactly half the interval of a
    a = np.array([3.0, 1.0, 5.0, 2.0, 8.0])
    res = stats.paired_bootstrap({"a": a, "b": a / 2},
                                 lambda s: {"a": s["a"].sum(-1), "a - b": s["a"].sum(-1) - s["b"].sum(-1)},
                                 n_boot=500, seed=3)
    assert res["a - b"] == pytest.approx(tuple(x / 2 for x in res["a"]))
    # unpaired (a and b drawn independently) the difference would spread; paired it does not
    d = stats.paired_bootstrap({"a": a, "b": a}, lambda s: {"d": s["a"].sum(-1) - s["b"].sum(-1)}, n_boot=500)
    assert d["d"] == (0.0, 0.0, 0.0)


def test_samples_must_be_aligned():
    with pytest.raises(UsageError, match="'b': \\(3,\\)"):
        stats.paired_bootstrap({"a": [1, 2], "b": [1, 2, 3]}, lambda s: {})
    with pytest.raises(UsageError, match="non-empty"):
        stats.paired_bootstrap({"a": []}, lambda s: {})
    with pytest.raises(UsageError, match="1-d"):
        stats.paired_bootstrap({"a": [[1, 2]]}, lambda s: {})
