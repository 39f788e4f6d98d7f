"""modtok.lm.sampling: Mono-only / Samp_Full(p) / Samp_Sub_n(n, p) draws."""

from __future__ import annotations

from collections import Counter

import pytest

from modtok.errors import SchemeError
from modtok.lm.sampling import (
    Scheme,
    SubtokenizerSampler,
    default_mixture,
    mono,
    samp_full,
    samp_sub,
)

MIX = {"eng": 0.7, "aaa": 0.1, "bbb": 0.1, "ccc": 0.1}


def test_draws_are_a_function_of_seed_and_step():
    s1, s2 = SubtokenizerSampler(samp_sub(2, 0.5), MIX, seed=7), SubtokenizerSampler(samp_sub(2, 0.5), MIX, seed=7)
    assert [s1.draw(i) for i in range(50)] == [s2.draw(i) for i in reversed(range(50))][::-1]
    other = SubtokenizerSampler(samp_sub(2, 0.5), MIX, seed=8)
    assert [s1.draw(i) for i in range(50)] != [other.draw(i) for i in range(50)]


def test_mono_and_samp_full_extremes():
    m = SubtokenizerSampler(mono(), MIX, 0)
    assert all(d.langs == (d.lang,) for d in map(m.draw, range(200)))
    always_full = SubtokenizerSampler(samp_full(1.0), MIX, 0)  # App. D.2: p = 1 trains with the full tokenizer only
    assert all(d.langs is None for d in map(always_full.draw, range(200)))
    never_full = SubtokenizerSampler(samp_full(0.0), MIX, 0)
    assert all(d.langs == (d.lang,) for d in map(never_full.draw, range(200)))
    always_union = SubtokenizerSampler(samp_sub(2, 1.0), MIX, 0)
    assert all(len(d.langs) == 3 for d in map(always_union.draw, range(200)))


def test_p_is_the_probability_of_the_full_tokenizer():
    """p = 0.9: about 90% of Samp_Full batches use the full tokenizer, 90% of Samp_Sub_1 batches a union."""
    n = 4000
    full = [SubtokenizerSampler(samp_full(0.9), MIX, 1).draw(i).langs is None for i in range(n)]
    assert abs(sum(full) / n - 0.9) < 0.02
    sub = SubtokenizerSampler(samp_sub(1, 0.9), MIX, 2)
    assert abs(sum(len(sub.draw(i).langs) == 2 for i in range(n)) / n - 0.9) < 0.02
    assert mono().p == 0.0


def test_frequencies_follow_the_mixture_and_p():
    """Batch language ~ mixture; with p=0.5 about half the Samp_Full batches are full; Samp_Sub_1(0)
    on an "aaa" batch adds eng with probability 0.7 / (0.7 + 0.1 + 0.1) = 0.778."""
    n = 6000
    s = SubtokenizerSampler(samp_full(0.5), MIX, 3)
    draws = [s.draw(i) for i in range(n)]
    langs = Counter(d.lang for d in draws)
    assert abs(langs["eng"] / n - 0.7) < 0.03 and abs(langs["aaa"] / n - 0.1) < 0.02
    assert abs(sum(d.langs is None for d in draws) / n - 0.5) < 0.03

    sub = SubtokenizerSampler(samp_sub(1, 1.0), MIX, 4)
    extra = Counter()
    for d in map(sub.draw, range(n)):
        assert d.lang in d.langs and len(d.langs) == 2 and d.langs == tuple(sorted(d.langs))
        if d.lang == "aaa":
            extra[next(x for x in d.langs if x != "aaa")] += 1
    assert abs(extra["eng"] / sum(extra.values()) - 0.7 / 0.9) < 0.05


def test_samp_sub_draws_distinct_extra_languages():
    s = SubtokenizerSampler(samp_sub(3, 1.0), MIX, 0)
    assert all(len(set(d.langs)) == 4 for d in map(s.draw, range(100)))


def test_bad_schemes_and_mixtures():
    with pytest.raises(SchemeError, match="needs 4 other languages"):
        SubtokenizerSampler(samp_sub(4, 0.5), MIX, 0)
    with pytest.raises(SchemeError, match="outside"):
        samp_full(1.5)
    with pytest.raises(SchemeError, match="n >= 1"):
        samp_sub(0)
    with pytest.raises(SchemeError, match="mono never samples"):
        Scheme("mono", 1.0)  # the old meaning of p (own-language probability) is refused, not reinterpreted
    with pytest.raises(SchemeError, match="non-negative"):
        SubtokenizerSampler(mono(), {"eng": -1.0, "aaa": 2.0}, 0)
    assert samp_sub(2, 0.5).name == "Samp_Sub_2(0.5)" and samp_full(0.25).name == "Samp_Full(0.25)"


def test_default_mixture():
    m = default_mixture(["deu", "eng_Latn", "fra", "ita"])
    assert m["eng_Latn"] == 0.7 and m["deu"] == pytest.approx(0.1) and sum(m.values()) == pytest.approx(1.0)
    assert default_mixture(["deu", "fra"]) == {"deu": 0.5, "fra": 0.5}
