"""Learn it small (issue 41): each notebook's toy, run by the naive reference, equals the
same toy through the fast engine; the stepper and the prediction widget work headless."""

from __future__ import annotations

import importlib
import math

import pytest

from modtok.studies.lessons import LESSONS, bpe, mixture, parity, pretoken, sequential, subtokenizers, unigram
from modtok.ui.stepper import Predict, Stepper, render_step


def test_01_bpe_reference_equals_engine():
    steps = bpe.trace()
    engine = bpe.engine_run()
    assert [s.data["merge"] for s in steps[1:]] == engine["merges"]
    assert steps[-1].data["words"] == engine["words"]
    # each chosen pair is the most frequent of the counts shown with it
    for s in steps[1:]:
        assert s.data["count"] == max(s.data["pair_counts"].values())


def test_02_sequential_reference_equals_engine():
    ref, engine = sequential.reference(), sequential.engine_run()
    assert ref["model"].merges == engine["merges"]
    assert ref["ids"] == engine["ids"]
    assert ref["vocab"] == {"x": ["ab"], "y": ["ab", "abc"]}  # bpe/sequential.py's docstring
    assert [r["branch"] for r in ref["steps"]] == ["merge", "reuse", "merge"]
    # on a larger toy with three languages too
    toy = subtokenizers.TOY
    assert sequential.reference(toy, 262)["ids"] == sequential.engine_run(toy, 262)["ids"]


def test_02_concatenation_breaks_the_union_and_sequential_does_not():
    demo = sequential.union_demo()
    assert len(demo["concat"]["x ∪ y"]) > len(demo["concat"]["y alone"])
    assert demo["sequential"]["x ∪ y"] == demo["sequential"]["y alone"]


def test_03_unigram_reference_equals_engine():
    steps, engine = unigram.trace(), unigram.engine_run()
    assert steps[2].data["viterbi"] == engine["viterbi"] == ["ab", "b"]
    assert round(steps[3].data["counts"]["ab"]["ab"], 4) == 0.7858
    for piece, total in steps[3].data["totals"].items():
        assert math.isclose(total, engine["totals"][piece], rel_tol=1e-9)
    for piece, logp in steps[-1].data["new_logp"].items():
        assert math.isclose(logp, engine["new_logp"][piece], rel_tol=1e-9)
    assert math.isclose(sum(math.exp(v) for v in steps[-1].data["new_logp"].values()), 1.0)


def test_04_subtokenizer_rows_reference_equals_engine():
    ref, engine = subtokenizers.reference(), subtokenizers.engine_run()
    assert ref["local"] == engine["local"]
    assert math.isclose(engine["restricted"], engine["masked_full"], rel_tol=1e-5)
    for s in subtokenizers.trace()[1:]:  # the rows covered are exactly the drawn languages' tokens
        mine = {t for lang in s.data["langs"] for t in subtokenizers.trace()[0].data["tokens"][lang]}
        assert set(s.data["covered"]) == mine and s.data["lang"] in s.data["langs"]


def test_05_parity_reference_equals_engine():
    ref, engine = parity.reference(), parity.engine_run()
    assert ref["merges"] == engine["merges"]
    assert ref["choices"] == engine["choices"] == [1, 0]
    assert ref["costs"] == engine["costs"]


def test_06_adaptmix_reference_equals_engine():
    for ref, engine in zip(mixture.reference(), mixture.engine_run(), strict=True):
        assert ref["C"] == engine["C"]
        for lang, share in ref["m"].items():
            assert math.isclose(share, engine["m"][lang], rel_tol=1e-12)


def test_07_pretoken_reference_equals_engine_and_r1_cannot_make_the_token():
    assert pretoken.reference() == pretoken.engine_run()
    last = pretoken.trace()[-1].data
    assert last["in R2"] and not last["in R1"]


@pytest.mark.parametrize("number", sorted(LESSONS))
def test_every_lesson_steps_and_predicts(number):
    lesson = importlib.import_module(f"modtok.studies.lessons.{LESSONS[number]}")
    steps = lesson.trace()
    assert len(steps) >= 3
    shown = [render_step(s, i, len(steps)) for i, s in enumerate(steps)]
    assert len(set(shown)) == len(shown)  # every step shows something different
    p = lesson.prediction()
    assert p.answer in p.options and p.why


def test_stepper_moves_forward_and_back_within_bounds():
    steps = bpe.trace()
    s = Stepper(steps)
    first = s.html.value
    assert s.back.disabled and not s.next.disabled
    s.back.click()
    assert s.index == 0 and s.html.value == first
    s.next.click()
    assert s.index == 1 and s.html.value != first and steps[1].title.split(":")[0] in s.html.value
    s.slider.value = len(steps) - 1
    assert s.next.disabled
    s.next.click()
    assert s.index == len(steps) - 1
    s.back.click()
    assert s.index == len(steps) - 2 and not s.next.disabled
    s.go(-5)
    assert s.index == 0 and s.html.value == first


def test_predict_reveals_the_computed_answer():
    p = Predict(unigram.prediction())
    assert p.answer.value == ""
    p.choice.value = "ab | b"
    p.reveal.click()
    assert "Right" in p.answer.value and "-2.7" in p.answer.value
    p.choice.value = "a | b | b"
    p.reveal.click()
    assert "not quite" in p.answer.value and "<b>ab | b</b>" in p.answer.value


@pytest.mark.parametrize("number", sorted(LESSONS))
def test_every_lesson_shows_the_engine_agreeing(number):
    lesson = importlib.import_module(f"modtok.studies.lessons.{LESSONS[number]}")
    step = lesson.engine_step()
    assert step.data["same"] and len(step.data["rows"]) >= 2
    assert "NO" not in render_step(step)
