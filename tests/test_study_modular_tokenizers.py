"""The studies of "To Each Language Its Tokenizer" (modtok.studies.modular_tokenizers, notebooks 01-04).

Hand-written three-language text (no shared data needed). Oracles: a tokenizer against
itself has NSL 1; a one-language concatenation *is* the monolingual BPE; the first
language of a sequential run is the same as that language trained alone; union
subtokenizers are proper BPEs that decode what they encode; merge trees spell their word
and are the trees of the ids the HF tokenizer emits; Unigram tables agree with direct
token counts; the sampling explorer's shares add up to one.
"""

from __future__ import annotations

import math
import tomllib
from collections import Counter

import numpy as np
import pytest

from modtok import cache
from modtok.artifacts import baselines
from modtok.artifacts.tokenizer_json import check_proper
from modtok.bpe import standard
from modtok.bpe.export import hf_tokenizer
from modtok.bpe.sequential import train_sequential
from modtok.bpe.tree import leaves
from modtok.errors import DataError, UsageError
from modtok.evaluation import metrics, stats
from modtok.lm import infer
from modtok.lm.batches import active_ids, lm_vocab_size
from modtok.lm.model import config
from modtok.lm.sampling import default_mixture, mono, samp_sub
from modtok.lm.train import TrainConfig
from modtok.studies import paper_vs_here
from modtok.studies.languages import Choice, choose
from modtok.studies.modular_tokenizers import lm
from modtok.studies.modular_tokenizers.inefficiency import InefficiencyStudy, paper_joint_budget
from modtok.studies.modular_tokenizers.inefficiency import paper_values as inefficiency_values
from modtok.studies.modular_tokenizers.reference import Monolingual
from modtok.studies.modular_tokenizers.sequential import KINDS, ORDERS, SequentialStudy
from modtok.studies.modular_tokenizers.sequential import paper_values as sequential_values
from modtok.studies.modular_tokenizers.sequential import reasons as sequential_reasons
from modtok.studies.modular_tokenizers.unigram import UnigramStudy
from modtok.studies.modular_tokenizers.unigram import paper_values as unigram_values
from modtok.text import data
from modtok.text.data import Corpora
from modtok.text.pretokenize import count_pretokens

TEXT = {  # in code order: sequential BPE trains in it (the paper's alphabetical order)
    "deu_Latn": ["die katze sitzt auf der matte und schaut zum fenster", "ein kleiner hund rennt dem ball nach",
                 "wir gingen zum markt und kauften frisches brot", "das wetter war kalt aber der morgen hell",
                 "sie liest jeden abend ein buch vor dem schlafen", "sie spielten zusammen musik bis spät"],
    "eng_Latn": ["the cat sat on the mat and looked at the window", "a small dog ran after the red ball",
                 "we walked to the market and bought fresh bread", "the weather was cold but the morning bright",
                 "she reads a book every evening before sleeping", "they played music together late at night"],
    "fra_Latn": ["le chat est assis sur le tapis et regarde la fenêtre", "un petit chien court après la balle",
                 "nous sommes allés au marché acheter du pain frais", "il faisait froid mais le matin lumineux",
                 "elle lit un livre chaque soir avant de dormir", "ils jouaient de la musique ensemble"],
}
LANGS = list(TEXT)
CORPORA = Corpora({lang: lines * 8 for lang, lines in TEXT.items()}, TEXT, "hand-written test text")
K = 300  # bytes included: 44 merges per language


class Chars:
    """One token per character."""

    def encode(self, text):
        return list(text)


# ---------------------------------------------------------------------------- languages for any data


def test_choose_languages_keeps_the_wish_list_uses_stand_ins_under_their_own_code_and_tops_up():
    avail = ["deu_Latn", "eng_Latn", "hin_Deva", "rus_Cyrl"]  # the manifest fixture's languages: no Nepali
    c = choose(["eng_Latn", "fra_Latn", "npi_Deva", "rus_Cyrl"], available=avail, asked=None)
    assert c.used == ["eng_Latn", "hin_Deva", "rus_Cyrl"]  # npi -> hin under hin's code
    assert c.left_out == {"fra_Latn": "not in the training text",
                          "npi_Deva": "not in the training text (its same-script stand-in hin_Deva is taken, "
                                      "under its own code)"}
    assert c.added == {"hin_Deva": "same-script stand-in for npi_Deva"}
    nothing = choose(["fra_Latn"], available=avail)  # nothing wished is there: the first three, named
    assert nothing.used == avail[:3] and set(nothing.added) == set(avail[:3]) and list(nothing.left_out) == ["fra_Latn"]
    assert choose(["rus_Cyrl"], at_least=2, available=avail).used == ["rus_Cyrl", "deu_Latn"]
    assert choose(["eng_Latn", "eng_Latn"], at_least=1, available=avail).used == ["eng_Latn"]
    with pytest.raises(DataError, match="at least 3 languages.*2: a_Latn, b_Latn"):
        choose(["eng_Latn"], available=["a_Latn", "b_Latn"])


def test_choose_languages_reads_what_the_data_has(monkeypatch):
    monkeypatch.setattr(data, "training_source", lambda: "pool")
    monkeypatch.setattr(data, "available_languages", lambda: ["spa_Latn", "ita_Latn", "por_Latn", "cat_Latn"])
    monkeypatch.setattr(data, "training_languages", lambda: ["spa_Latn", "ita_Latn", "por_Latn", "cat_Latn"])
    assert choose(["eng_Latn", "ita_Latn"]).used == ["ita_Latn", "spa_Latn", "por_Latn"]


def test_a_choice_that_does_not_add_up_is_refused():
    Choice(["a_Latn", "b_Latn"], ["a_Latn", "c_Latn"], {"b_Latn": "why"}, {"c_Latn": "top-up"}).check()
    for bad in (Choice(["a_Latn", "b_Latn"], ["a_Latn"]),  # b neither used nor left out: dropped silently
                Choice(["a_Latn"], ["a_Latn", "c_Latn"]),  # c used but never asked for nor added
                Choice(["a_Latn"], ["a_Latn"], {"a_Latn": "why"})):  # used and left out
        with pytest.raises(DataError, match="does not add up"):
            bad.check()


def _user_data(tmp_path, monkeypatch, langs, eval_langs):
    """A user's manifest of ``langs`` (pool text, 20k characters each) and their own parallel
    evaluation directory with files for ``eval_langs`` only; no pool configured."""
    (tmp_path / "train").mkdir()
    (tmp_path / "eval").mkdir()
    lines = {lang: [f"{lang} line {i} " + " ".join(TEXT[list(TEXT)[i % 3]][i % 6].split()[::-1]) for i in range(300)]
             for lang in langs}
    for lang in langs:
        (tmp_path / "train" / f"{lang}.txt").write_text("\n".join(lines[lang]) + "\n", encoding="utf-8")
    for lang in eval_langs:
        (tmp_path / "eval" / f"{lang}.txt").write_text("\n".join(lines[lang][:20]) + "\n", encoding="utf-8")
    manifest = tmp_path / "corpora.yaml"
    manifest.write_text("".join(f"{lang}: [train/{lang}.txt]\n" for lang in langs), encoding="utf-8")
    monkeypatch.setenv("MODTOK_MANIFEST", str(manifest))
    monkeypatch.setenv("MODTOK_EVAL", str(tmp_path / "eval"))
    monkeypatch.delenv("MODTOK_POOL", raising=False)
    monkeypatch.delenv("MODTOK_FLORES", raising=False)


def test_a_users_languages_are_all_asked_for_and_one_without_evaluation_text_is_named(tmp_path, monkeypatch):
    """Issue 30 (5): notebooks 02 and 03 ran on their wish list cut to what the data had, so a
    user's language outside it, or without an evaluation file, vanished without a word."""
    user = ["eng_Latn", "deu_Latn", "fra_Latn", "ita_Latn", "spa_Latn", "por_Latn", "nld_Latn"]
    _user_data(tmp_path, monkeypatch, user, [lang for lang in user if lang != "spa_Latn"])
    c = choose(["eng_Latn", "deu_Latn", "fra_Latn", "rus_Cyrl", "npi_Deva", "swh_Latn"])
    assert c.asked == user  # the manifest's languages, not the notebook's wish list
    assert c.used == ["eng_Latn", "deu_Latn", "fra_Latn", "ita_Latn", "por_Latn", "nld_Latn"]
    assert list(c.left_out) == ["spa_Latn"] and c.left_out["spa_Latn"].startswith("no evaluation text for it in ")
    assert str(tmp_path / "eval") in c.left_out["spa_Latn"] and not c.added
    assert any(line.startswith("left out: spa_Latn (no evaluation text") for line in c.lines())
    corpora = data.default_corpora(c.used, train_chars=5_000)  # what the notebooks read next: exactly those used
    assert list(corpora.train) == c.used == list(corpora.eval)


def _claim_keys(study):
    return {c.key for c in paper_vs_here.claims(study)}


# ---------------------------------------------------------------------------- the reference


def test_reference_is_trained_once_per_language_and_budget_and_has_nsl_one_against_itself():
    calls = []
    ref = Monolingual(lambda lang, k: calls.append((lang, k)) or Chars(), TEXT)
    assert ref("eng_Latn", 5) is ref("eng_Latn", 5) and ref("eng_Latn", 6) is not ref("eng_Latn", 5)
    assert calls == [("eng_Latn", 5), ("eng_Latn", 6)]
    assert ref.tokens("deu_Latn", 5) == sum(map(len, TEXT["deu_Latn"]))
    assert ref.nsl(Chars(), "deu_Latn", 5) == 1.0
    assert ref.nsl(ref("fra_Latn", 5), "fra_Latn", 5) == 1.0


# ---------------------------------------------------------------------------- notebook 01


@pytest.fixture(scope="module")
def inefficiency():
    return InefficiencyStudy(CORPORA, K, {"chars": Chars()})


def test_nsl_table_has_one_row_per_language_and_the_nsl_of_direct_token_counts(inefficiency):
    result = inefficiency.nsl_table(["fra_Latn", "eng_Latn"], 400)
    assert result["langs"] == ("fra_Latn", "eng_Latn") and [r["lang"] for r in result["rows"]] == ["fra_Latn", "eng_Latn"]
    joint = inefficiency.joint(("fra_Latn", "eng_Latn"), 400)
    for row in result["rows"]:
        lines, ref = TEXT[row["lang"]], inefficiency.mono(row["lang"], K)
        ref_tokens = metrics.token_counts(ref, lines).sum()
        assert row["NSL joint BPE 0k"] == pytest.approx(metrics.token_counts(joint, lines).sum() / ref_tokens)
        assert row["NSL chars"] == pytest.approx(sum(map(len, lines)) / ref_tokens)
        assert row["mono 0k tok/char"] == pytest.approx(ref_tokens / sum(map(len, lines)))
    assert len(result["long"]) == 2 * 2  # languages x tokenizers
    assert inefficiency.nsl_table([], 400) == {"langs": (), "budget": 400, "rows": [], "long": [], "line_tokens": {}}


@pytest.mark.parametrize("budget", [300, 420, 9_000])  # 9,000: the text runs out of pairs seen twice
def test_the_joint_bpe_is_what_hf_bpetrainer_makes_of_the_same_text(budget):
    """The joint BPE is modtok's (from counts, 4x faster); the notebook's numbers are HF
    BpeTrainer's on the same text: the same tokens, the same segmentation of every line."""
    joint = InefficiencyStudy(CORPORA, K).joint(LANGS, budget)
    hf = baselines.train_hf_bpe({lang: CORPORA.train[lang] for lang in LANGS}, budget, "whitespace")
    assert set(joint.get_vocab()) == set(hf.get_vocab()) and joint.get_vocab_size() == hf.get_vocab_size()
    text = [line for lines in TEXT.values() for line in lines]
    assert [joint.encode(t).tokens for t in text] == [hf.encode(t).tokens for t in text]


UDHR = {"eng_Latn": "eng", "rus_Cyrl": "rus", "hin_Deva": "hin", "ell_Grek": "ell_monotonic", "tha_Thai": "tha",
        "zho_Hans": "cmn_hans"}  # the udhr package's declarations: six scripts, two without spaces between words


@pytest.fixture(scope="module")
def udhr_study(declaration):
    """An InefficiencyStudy on the UDHR in six scripts: every third paragraph is a test line, the rest
    training text."""
    text = {lang: declaration(code) for lang, code in UDHR.items()}
    return InefficiencyStudy(Corpora({lang: [p for i, p in enumerate(ps) if i % 3] for lang, ps in text.items()},
                                     {lang: ps[::3] for lang, ps in text.items()}, "UDHR"), 2_000)


@pytest.mark.parametrize("subset", [("eng_Latn",), ("rus_Cyrl", "hin_Deva", "zho_Hans"), tuple(UDHR)[1:],
                                    tuple(reversed(UDHR))])
def test_a_subsets_joint_bpe_is_the_one_trained_from_its_languages_counters(udhr_study, subset):
    """Issue 44 (01's new subset <= 5 s): a subset's joint BPE trains from the study's pre-token arrays,
    counted once for every language (its languages' columns summed), not from a Counter per language added
    up as before; the merges are those of the old path, whatever the subset and its order."""
    train = udhr_study.corpora.train
    counts = Counter()
    for lang in subset:
        counts.update(count_pretokens(train[lang], "whitespace"))
    for budget in (600, 2_500):
        old = hf_tokenizer(standard.train(counts, budget, "whitespace", min_frequency=2))
        new = udhr_study.joint(subset, budget)
        assert [new.id_to_token(i) for i in range(new.get_vocab_size())] == [
            old.id_to_token(i) for i in range(old.get_vocab_size())]
    assert udhr_study.trained(subset) == 2_500


def test_the_joint_bpes_tokens_per_test_line_are_hfs_encoding(udhr_study):
    """Issue 44: nsl_table counts the joint BPE's tokens per test line from pre-tokens cut once for every
    language (LinePieces, the merge kernel) instead of HF's encode_batch: the same number on every line,
    for a subset (whose pieces are a part of all the languages') and at two budgets."""
    for subset, budget in ((("hin_Deva", "rus_Cyrl", "zho_Hans"), 900), (tuple(UDHR), 2_000)):
        result = udhr_study.nsl_table(subset, budget)
        joint = udhr_study.joint(subset, budget)
        for lang in subset:
            lines = udhr_study.corpora.eval[lang]
            assert result["line_tokens"][lang][f"joint BPE {budget // 1000}k"] == [
                len(joint.encode(line).ids) for line in lines]


def test_make_demo_computes_the_subsets_that_leave_one_language_out_and_a_class_reads_them_back(monkeypatch):
    """Issue 44 (01's new subset <= 5 s): unticking one language leaves most of the text (38 of 39 languages:
    8.9 s of CPU). With $MODTOK_AHEAD (make demo) every such subset's table is computed into the results
    cache at the budget the picker sets; a class's kernel (a new study on the same text) reads each back
    and trains nothing."""
    budget = lambda n: 260 + 20 * n  # noqa: E731 (the notebook's paper_joint_budget, at toy size)
    first = InefficiencyStudy(CORPORA, K, {"chars": Chars()})
    assert first.subsets_ahead(budget).endswith("0 in the results cache, 3 computed when picked (make demo "
                                                "computes them ahead)") and first.trained(LANGS[1:]) == 0
    monkeypatch.setenv(cache.AHEAD, "1")
    assert first.subsets_ahead(budget).startswith("the 3 subsets that leave one language out, computed ahead")
    monkeypatch.delenv(cache.AHEAD)
    trained = []
    real = standard.learn
    monkeypatch.setattr(standard, "learn", lambda engine, model, size, *a, **kw: trained.append(size) or real(
        engine, model, size, *a, **kw))
    again = InefficiencyStudy(CORPORA, K, {"chars": Chars()})
    assert again.subsets_ahead(budget) == "the 3 subsets that leave one language out: 3 in the results cache, 0 computed when picked"
    for i in range(len(LANGS)):
        subset = tuple(LANGS[:i] + LANGS[i + 1:])
        assert again.nsl_table(subset, budget(2)) == first.nsl_table(subset, budget(2))
    assert trained == []
    again.nsl_table(tuple(LANGS[1:]), budget(2) + 20)  # another budget: not computed ahead
    assert trained == [budget(2) + 20]


def test_a_smaller_joint_budget_cut_from_a_larger_is_the_one_trained_afresh():
    """What the budget slider relies on: BPE at a smaller budget is a prefix of a larger one."""
    study, fresh = InefficiencyStudy(CORPORA, K), InefficiencyStudy(CORPORA, K)
    text = [line for lines in TEXT.values() for line in lines]
    big = study.joint(LANGS, 420)
    for budget in (400, 330, 257):
        cut, trained = study.joint(LANGS, budget), fresh.joint(LANGS, budget)
        assert cut.get_vocab() == trained.get_vocab() and cut.get_vocab_size() == budget
        assert [cut.encode(t).ids for t in text] == [trained.encode(t).ids for t in text]
    assert study.joint(LANGS, 9_000).get_vocab() == fresh.joint(LANGS, 9_000).get_vocab()  # the text runs out
    assert study.joint(LANGS, 8_000).get_vocab() == study.joint(LANGS, 9_000).get_vocab()  # cut from it: the same
    assert big.get_vocab_size() == 420 and study.joint(LANGS, 420) is big
    # the table of a cut joint, with the deployed encodings kept from an earlier call, is a fresh study's
    assert study.nsl_table(LANGS, 330) == fresh.nsl_table(LANGS, 330)


def test_with_train_at_every_budget_is_cut_from_one_training_of_all_the_languages(monkeypatch):
    """Notebook 01's slider: train_at trains all the languages once, at the ceiling; every budget,
    up or down, is then the tokenizer a fresh training at that budget gives."""
    trained = []
    real = standard.learn
    monkeypatch.setattr(standard, "learn", lambda engine, model, size, *a, **kw: trained.append(size) or real(
        engine, model, size, *a, **kw))
    monkeypatch.setenv("MODTOK_RESULTS", "none")  # fresh trains each budget itself, not read back from study's
    study, fresh = InefficiencyStudy(CORPORA, K, train_at=420), InefficiencyStudy(CORPORA, K)
    for budget in (330, 400, 257, 420):
        assert study.joint(LANGS, budget).get_vocab() == fresh.joint(LANGS, budget).get_vocab()
    assert study.nsl_table(LANGS, 400) == fresh.nsl_table(LANGS, 400)
    assert trained.count(420) == 2 and trained.count(330) == 1  # study: 420 once; fresh: each budget
    assert study.joint(LANGS, 500).get_vocab_size() == 500  # above the ceiling: trained as asked


def _record_learn(monkeypatch) -> list[tuple[int, int]]:
    """Every standard.learn call from now on, as (size asked, tokens the model had before)."""
    calls, real = [], standard.learn
    monkeypatch.setattr(standard, "learn", lambda engine, model, size, *a, **kw: calls.append(
        (size, len(model))) or real(engine, model, size, *a, **kw))
    return calls


def test_a_subset_trains_at_the_budget_asked_and_a_larger_one_trains_on(monkeypatch):
    """Notebook 01's new language subset (issue 44: a new subset answers in <= 5 s): it trains at the
    budget shown (the notebook sets it to the paper's share for the subset), not at the slider's ceiling
    as all the languages do; a smaller budget is cut from it, a larger one continues the same training
    from where it stopped (the kernel keeps the last subset's engine), and every one is what a fresh
    training at that budget gives. What was handed out does not grow with the engine."""
    monkeypatch.setenv("MODTOK_RESULTS", "none")
    calls = _record_learn(monkeypatch)
    study, subset = InefficiencyStudy(CORPORA, K, train_at=420), LANGS[:2]

    def fresh(budget):
        return InefficiencyStudy(CORPORA, K).joint_model(subset, budget).merges

    assert study.trained(subset) == 0
    table = study.nsl_table(subset, 300)
    assert calls == [(300, 256)] and study.trained(subset) == 300 and table["budget"] == 300
    assert table == InefficiencyStudy(CORPORA, K).nsl_table(subset, 300)
    first, cut = study.joint_model(subset, 300), study.joint_model(subset, 280)
    del calls[:]
    assert cut.merges == fresh(280) and len(first) == 300
    for before, budget in ((300, 320), (320, 400)):  # up: the kept engine trains on
        del calls[:]
        grown = study.joint_model(subset, budget)
        assert calls == [(budget, before)] and study.trained(subset) == budget
        assert grown.merges == fresh(budget)
    assert len(first) == 300 and first.merges == fresh(300)
    study.joint(LANGS, 300)
    assert calls[-1] == (420, 256) and study.trained(LANGS) == 420  # all the languages: at the ceiling
    study.joint_model(subset, 410)
    assert calls[-1] == (410, 256)  # the kept engine was the last training's, not this subset's: from bytes
    assert study.joint(subset, 410).get_vocab() == InefficiencyStudy(CORPORA, K).joint(subset, 410).get_vocab()


def test_a_subset_trained_at_the_ceiling_ahead_is_read_back_for_any_budget(monkeypatch):
    """make demo trains each subset that leaves one language out at the slider's ceiling: a class's
    kernel then reads that training back for a larger budget too, and trains nothing."""
    study = InefficiencyStudy(CORPORA, K, train_at=420)
    monkeypatch.setenv(cache.AHEAD, "1")
    first = study.subsets_ahead(lambda n: 300)
    assert "make demo): 3 in " in first and "there already" not in first
    calls = _record_learn(monkeypatch)
    second = InefficiencyStudy(CORPORA, K, train_at=420).subsets_ahead(lambda n: 300)  # a second make demo
    assert "make demo): 0 in " in second and second.endswith(", 3 there already") and calls == []
    monkeypatch.delenv(cache.AHEAD)
    again, subset = InefficiencyStudy(CORPORA, K, train_at=420), tuple(LANGS[1:])
    assert again.nsl_table(subset, 300) == study.nsl_table(subset, 300)
    assert len(again.joint_model(subset, 400)) == 400 and again.trained(subset) == 420 and calls == []


def test_a_deployed_tokenizer_that_is_the_reference_has_nsl_one():
    study = InefficiencyStudy(CORPORA, K)
    study.deployed["itself"] = study.mono("deu_Latn", K)
    row = study.nsl_table(["deu_Latn"], 400)["rows"][0]
    assert row["NSL itself"] == 1.0 and row["NSL joint BPE 0k"] != 1.0


def test_premium_of_a_character_tokenizer_is_the_character_ratio(inefficiency):
    rows = inefficiency.premiums(400, "deu_Latn", "eng_Latn")
    assert [r["tokenizer"] for r in rows] == ["joint BPE 0k", "chars"]
    chars = sum(map(len, TEXT["deu_Latn"])) / sum(map(len, TEXT["eng_Latn"]))
    assert rows[1]["premium deu/eng"] == pytest.approx(chars)
    assert inefficiency.joint(LANGS, 400) is inefficiency.joint(tuple(LANGS), 400)  # the one the table used


def test_inefficiency_paper_values_cover_every_claim_and_say_what_is_missing(inefficiency):
    result = inefficiency.nsl_table(LANGS, 400)
    here = inefficiency_values(result)
    assert set(here) == _claim_keys("modular_tokenizers_inefficiency")
    assert here["joint_mean_nsl"].value == pytest.approx(np.mean([r["NSL joint BPE 0k"] for r in result["rows"]]))
    assert here["deployed_max_nsl"].value == max(r["NSL chars"] for r in result["rows"])  # "chars": a deployed one
    assert here["llama3_max_nsl"].reason == "llama3 is not installed"
    # the same table with "chars" named llama3: its largest NSL, its English one; no Nepali among the languages
    named = {"rows": [{k.replace("NSL chars", "NSL llama3"): v for k, v in r.items()} for r in result["rows"]]}
    as_llama = inefficiency_values(named)  # no line_tokens: point estimates
    assert as_llama["llama3_max_nsl"] == here["deployed_max_nsl"].value
    assert as_llama["english_nsl_llama3"] == next(r["NSL chars"] for r in result["rows"] if r["lang"] == "eng_Latn")
    assert as_llama["nepali_nsl_llama3"].reason == "npi_Deva is not among the languages"
    rows = paper_vs_here.table("modular_tokenizers_inefficiency", here, inefficiency.setting(LANGS, 400))
    assert [r["holds?"] for r in rows][1] == "not measured: llama3 is not installed"


def test_inefficiency_nsl_intervals_are_the_paired_bootstrap_over_lines(inefficiency):
    """One language's NSL interval is stats.ratio_ci of its per-line tokens against the
    reference's (the same draws); a maximum over languages has an interval that holds its point
    and spans the languages' replicates; on lines that are not parallel, points alone."""
    result = inefficiency.nsl_table(LANGS, 400)
    lines = {lang: {n.replace("chars", "llama3"): t for n, t in by.items()} for lang, by in result["line_tokens"].items()}
    named = {"rows": [{k.replace("NSL chars", "NSL llama3"): v for k, v in r.items()} for r in result["rows"]],
             "line_tokens": lines}
    here = inefficiency_values(named)
    eng = lines["eng_Latn"]
    assert (here["english_nsl_llama3"].value, here["english_nsl_llama3"].lo, here["english_nsl_llama3"].hi) == \
        pytest.approx(stats.ratio_ci(eng["llama3"], eng["reference"]))
    assert here["english_nsl_llama3"].lo < here["english_nsl_llama3"].value < here["english_nsl_llama3"].hi
    top = here["llama3_max_nsl"]
    assert top.over.startswith("lines") and top.value == max(r["NSL llama3"] for r in named["rows"])
    assert top.hi >= max(stats.ratio_ci(lines[lang]["llama3"], lines[lang]["reference"])[2] for lang in LANGS) - 1e-12
    uneven = {**named, "line_tokens": {**lines, "eng_Latn": {n: t[:-1] for n, t in eng.items()}}}
    assert isinstance(inefficiency_values(uneven)["english_nsl_llama3"], float)


def test_a_budget_the_text_cannot_fill_is_said_in_the_setting_and_the_reasons():
    """A corpus of a few KB a language gives references and a joint BPE far below the budgets asked:
    the setting and a failing claim's reason say the sizes the text gave, not the budgets."""
    study = InefficiencyStudy(CORPORA, 5_000)
    result = study.nsl_table(LANGS, 9_000)
    got = len(study.joint_model(LANGS, 9_000))
    assert got < 9_000 and all(study.mono(lang, 5_000).get_vocab_size() < 5_000 for lang in LANGS)
    vocabulary = study.setting(LANGS, 9_000)["vocabulary"]
    assert f"references of 5,000 tokens ({len(LANGS)} of them short of it: " in vocabulary
    assert f"joint BPE of {got:,} (9,000 asked: its text gave no more)" in vocabulary
    here = inefficiency_values(result)
    here["joint_mean_nsl"] = 0.5  # as if the joint BPE beat the references: "above 1" fails
    assert study.reasons(here, result)["joint_mean_nsl"].startswith(
        f"the joint BPE of {got:,} tokens (9,000 asked: its text gave no more) gives each")


def test_inefficiency_reasons_name_the_reference_of_every_failing_nsl(inefficiency):
    """A claim that fails gets the reference it was measured against, with the token totals
    behind its NSL; a claim that holds gets none (rows_for would refuse it)."""
    result = inefficiency.nsl_table(LANGS, 400)
    named = {"rows": [{k.replace("NSL chars", "NSL llama3"): v for k, v in r.items()} for r in result["rows"]],
             "budget": 400}
    here = inefficiency_values(named)
    here["joint_mean_nsl"] = 0.5  # as if the joint BPE beat the references: "above 1" fails
    reasons = inefficiency.reasons(here, named)
    claims = {c.key: c for c in paper_vs_here.claims("modular_tokenizers_inefficiency")}
    failing = {k for k, v in here.items() if not isinstance(v, paper_vs_here.NotMeasured)
               and claims[k].verdict(v) == "does not hold"}
    assert set(reasons) == failing and "joint_mean_nsl" in failing
    ref = inefficiency.mono.tokens("eng_Latn", K)
    train_chars, test_chars = sum(map(len, CORPORA.train["eng_Latn"])), sum(map(len, TEXT["eng_Latn"]))
    if "english_nsl_llama3" in failing:  # one token per character against a 300-token reference
        assert f"reference of {K:,} tokens trained on {train_chars:,} characters" in reasons["english_nsl_llama3"]
        assert f"spends {ref:,} tokens, llama3 {test_chars:,}" in reasons["english_nsl_llama3"]
    share = 400 / (len(LANGS) * K)
    assert reasons["joint_mean_nsl"].startswith(f"the joint BPE of 400 tokens gives each of {len(LANGS)} languages "
                                                f"{share:.2f} of a {K:,}-token reference budget")
    rows = paper_vs_here.table("modular_tokenizers_inefficiency", here, inefficiency.setting(LANGS, 400), reasons)
    assert all((r["reason"] not in ("", "reason not measured")) == (r["holds?"] == "does not hold") for r in rows)


def test_the_joint_budget_gives_each_language_the_papers_share():
    assert paper_joint_budget(21, 24_000) == 128_000  # Multi 21 of Tables 1 and 10
    assert paper_joint_budget(39, 8_000) == 80_000 and paper_joint_budget(1, 1_000) == 2_000  # at least one step


SETTING_FIELDS = {"data", "size", "vocabulary", "model", "lr", "iterations", "pretokenization", "heldout"}


def test_every_claims_paper_setting_and_every_studys_own_use_the_same_fields(inefficiency, seq, uni, merged):
    """The toml's setting tables and the studies' settings name fields of one list, so the
    report can put the paper's and ours side by side field by field."""
    for study in ("modular_tokenizers_inefficiency", "modular_tokenizers_sequential", "modular_tokenizers_unigram",
                  "modular_tokenizers_lm"):
        table = tomllib.loads(paper_vs_here.FIGURES.read_text(encoding="utf-8"))[study]
        for key, claim in table.items():
            assert isinstance(claim["setting"], dict) and set(claim["setting"]) <= SETTING_FIELDS, (study, key)
    ours = inefficiency.setting(LANGS, 400)
    assert set(ours) <= SETTING_FIELDS and "400 over 3 languages" in ours["vocabulary"]
    assert f"references of {K}" in ours["vocabulary"] and ours["heldout"] == "evaluation text, 6 lines"
    chars = [8 * sum(map(len, TEXT[lang])) for lang in LANGS]  # measured on the training text, not typed
    assert ours["size"] == f"{min(chars):,}-{max(chars):,} training characters per language"
    assert set(seq.setting(2)) <= SETTING_FIELDS and f"k = {K}" in seq.setting(2)["vocabulary"]
    assert "whitespace" in seq.setting(2)["pretokenization"]  # the paper's pre-tokenization (§3)
    u = uni.setting(merged, K, 2)
    assert set(u) <= SETTING_FIELDS and u["iterations"] == "2 EM iterations from the uniform start"
    assert f"{len(merged.model):,} pieces" in u["vocabulary"]


# ---------------------------------------------------------------------------- notebook 02


@pytest.fixture(scope="module")
def seq():
    return SequentialStudy(CORPORA, LANGS, K)


def test_orders_are_deterministic_permutations_of_the_selection(seq):
    assert seq.ordered(["fra_Latn", "eng_Latn"], "alphabetical") == ["eng_Latn", "fra_Latn"]
    assert seq.ordered(LANGS, "reversed") == sorted(LANGS)[::-1]  # the study sorts its languages (§4.2)
    for order in ORDERS:
        assert sorted(seq.ordered(LANGS, order)) == sorted(LANGS)
        assert seq.ordered(LANGS, order) == seq.ordered(LANGS, order)


def test_fidelity_has_one_row_per_language_and_the_first_language_is_trained_as_if_alone(seq):
    order = tuple(seq.ordered(LANGS, "reversed"))
    result = seq.fidelity(LANGS, "reversed", K)
    assert result["order"] == order and [r["position"] for r in result["rows"]] == [1, 2, 3]
    assert [r["language"].split("(")[-1].rstrip(")") for r in result["rows"]] == list(order)
    assert all(r["|V_ℓ|"] <= K for r in result["rows"]) and result["rows"][0]["reused"] == 0
    assert result["global_size"] == len(seq.sequential(order, K).model)
    first = order[0]
    sub = seq.modular("sequential", order, K).subtokenizer([first])
    alone = seq.modular("sequential", (first,), K).hf
    assert [sub.hf.encode(line).tokens for line in TEXT[first]] == [alone.encode(line).tokens for line in TEXT[first]]
    assert result["rows"][0]["NSL subtokenizer"] == seq.nsl(alone, first, K)
    assert seq.fidelity([], "reversed", K) == {"order": (), "k": K, "rows": [], "long": [], "line_tokens": {}}


def test_a_language_in_a_sequential_run_reuses_earlier_tokens(seq):
    rows = seq.fidelity(LANGS, "alphabetical", K)["rows"]
    res = seq.sequential(tuple(LANGS), K)
    assert rows[1]["reused"] == len((set(res.lang_to_ids[LANGS[0]]) & set(res.lang_to_ids[LANGS[1]])) - set(range(256)))
    assert rows[1]["reused"] > 0  # " the" / " und" share pieces like "er", " s", ...


def test_unions_are_proper_and_lossless_and_one_language_concatenation_is_the_reference(seq):
    order = ("deu_Latn", "eng_Latn")
    for kind in ("sequential", "concatenation"):
        sub = seq.modular(kind, order).subtokenizer(list(order))
        if kind == "sequential":
            check_proper(sub.tokenizer_json["model"])
        for lang in order:
            assert all(sub.decode(sub.encode(line)) == line for line in TEXT[lang])
    assert seq.unions(1, trials=3)["concatenation"] == [1.0, 1.0, 1.0]
    spread = seq.unions(2, trials=2)
    assert all(len(v) == 2 and all(math.isfinite(x) for x in v) for v in spread.values())
    # each point is the mean over the subset's languages of the union subtokenizer's NSL
    for t, seq_mean, cat_mean in zip(seq.union_lines(2, trials=2), spread["sequential"], spread["concatenation"]):
        for kind, mean in (("sequential", seq_mean), ("concatenation", cat_mean)):
            sub = seq.modular(kind, t["order"]).subtokenizer(list(t["order"])).hf
            assert mean == pytest.approx(np.mean([seq.nsl(sub, lang) for lang in t["order"]]))
    assert [r["n"] for r in seq.union_table({2: seq.union_lines(2, trials=2)})] == [2]
    with pytest.raises(UsageError, match="kind"):
        seq.modular("concatenated", order)


def test_union_rows_have_intervals_over_lines_and_our_std_across_languages(seq):
    """Issue 42: the union claims (Table 7) were point estimates against the paper's std across
    languages. Now each is a Measured over lines: the paired bootstrap of the whole statistic (the
    largest mean over n), whose interval holds the point and spans at least the interval of the n
    it is attained at; the table shows, per n and kind, that interval and our std across
    languages, each language's mean NSL over the subsets holding it (Table 7's "±")."""
    from modtok.studies.modular_tokenizers.sequential import union_nsl

    lines = {n: seq.union_lines(n, trials=3) for n in (1, 2, 3)}
    here = sequential_values(seq.fidelity(LANGS, "alphabetical", K), lines, seq.vocab_growth())
    per_n = union_nsl(lines)
    for key, kind in (("union_nsl_max", "sequential"), ("concatenation_nsl_max", "concatenation")):
        m = here[key]
        assert isinstance(m, paper_vs_here.Measured) and m.over.startswith("lines")
        best = max((2, 3), key=lambda n: per_n[f"{kind} {n}"].value)
        assert m.value == pytest.approx(per_n[f"{kind} {best}"].value) and m.lo <= m.value <= m.hi
        assert m.hi >= per_n[f"{kind} {best}"].hi - 1e-12
    diff = here["sequential_vs_concatenation"]
    assert isinstance(diff, paper_vs_here.Measured) and diff.lo <= diff.value <= diff.hi
    table = {r["n"]: r for r in seq.union_table(lines)}
    for n, trials in lines.items():
        for kind in ("sequential", "concatenation"):
            by_lang = {}
            for t in trials:
                for lang in t["order"]:
                    sub = seq.modular(kind, t["order"]).subtokenizer(list(t["order"])).hf
                    by_lang.setdefault(lang, []).append(float(seq.nsl(sub, lang)))
            assert table[n][f"{kind} std across languages"] == pytest.approx(np.std([np.mean(v) for v in by_lang.values()]))
            assert table[n][f"{kind} mean"] == pytest.approx(per_n[f"{kind} {n}"].value)
            assert table[n][f"{kind} interval"] == per_n[f"{kind} {n}"].shown()
        assert table[n]["languages"] == len({lang for t in trials for lang in t["order"]})
    assert table[1]["concatenation std across languages"] == 0.0  # one language: its own reference
    # a failing union claim gets each n's means, intervals and stds as its reason
    why = sequential_reasons(dict(here, union_nsl_max=9.0), seq.fidelity(LANGS, "alphabetical", K), seq.vocab_growth(),
                             list(table.values()))
    assert why["union_nsl_max"].startswith(f"n = 2 ({table[2]['subsets']} subsets, {table[2]['languages']} languages): "
                                           f"sequential {table[2]['sequential mean']:.3f} {table[2]['sequential interval']}")
    # on text that is not parallel there is no common line to draw: point estimates
    cut = {n: [dict(t, reference={**t["reference"], t["order"][0]: t["reference"][t["order"][0]][:-1]}) for t in ts]
           for n, ts in lines.items()}
    assert isinstance(union_nsl(cut, largest=True)["union_nsl_max"], float)


def test_explored_trees_spell_the_word_and_are_those_of_the_ids_encoded(seq):
    union = ("deu_Latn", "eng_Latn")  # in training order (alphabetical): English's merges come second
    for word in ("small", "small dog", "after"):
        result = seq.explore(word, True, "eng_Latn", ("eng_Latn", "deu_Latn"))
        assert result["word"] == " " + word and result["order"] == union
        for kind in KINDS:
            nodes = [n for nodes in result["traces"][kind] for n in nodes]
            assert b"".join(b"".join(leaves(n)) for n in nodes) == result["word"].encode()
            assert len(result["segmentation"][kind]) == len(nodes)
        for kind, model in (("sequential", seq.sequential(tuple(LANGS)).model),
                            ("concatenated", seq.concatenation(union).model)):
            mt = seq.modular("sequential", tuple(LANGS)) if kind == "sequential" else seq.modular("concatenation", union)
            assert [model.vocab[i] for i in mt.encode(result["word"], list(union))] == [
                n.token for nodes in result["traces"][kind] for n in nodes], (word, kind)
        assert len(result["blockers"]) <= len(result["blocked"]) == len(result["reasons"])


def test_a_word_of_the_first_language_alone_is_built_the_same_by_all_three(seq):
    word = next(seq.words("eng_Latn"))
    assert word.startswith(" ") and len(word) >= 5 and word[1:].isalpha()
    seg = seq.explore(word, True, "eng_Latn", ("eng_Latn",))["segmentation"]
    assert seg["monolingual"] == seg["concatenated"] == seg["sequential"]


def test_the_default_word_is_one_that_concatenation_cuts_longer(seq):
    union = ("deu_Latn", "eng_Latn")
    word = seq.find_word("eng_Latn", union)
    assert word is not None and word in set(seq.words("eng_Latn"))
    result = seq.explore(word, True, "eng_Latn", union)
    seg = result["segmentation"]
    assert len(seg["concatenated"]) > len(seg["sequential"]) and seg["concatenated"] != seg["monolingual"]
    assert result["reasons"] and result["blockers"]  # a token that cannot form, and the merge in its way
    assert seq.find_word("deu_Latn", ("deu_Latn",)) is None  # alone, the three trees agree


def test_vocab_growth_ends_at_the_global_model_and_stays_under_the_no_sharing_bound(seq):
    rows = seq.vocab_growth()
    res = seq.sequential(tuple(LANGS))
    assert [r["n"] for r in rows] == [1, 2, 3] and [r["added"] for r in rows] == LANGS
    assert rows[0]["sequential"] == len(res.lang_to_ids[LANGS[0]]) and rows[-1]["sequential"] == len(res.model)
    assert rows[0]["concatenation"] == len(seq.mono(LANGS[0], K).vocab)
    assert all(r["sequential"] <= r["no sharing"] and r["concatenation"] <= r["no sharing"] for r in rows)
    assert all(a["sequential"] < b["sequential"] for a, b in zip(rows, rows[1:]))


def test_vocab_growth_tells_tokens_shared_from_tokens_the_text_never_gave(declaration):
    """A user's corpus of a few KB a language (UDHR paragraphs in three scripts) at k = 8,000: every
    language's vocabulary stops short of k, so the global vocabulary is far below 256 + n·(k − 256)
    though almost nothing is shared. The growth rows and the failing claim's reason say which is which
    (the reason blamed sharing for all of it)."""
    text = {lang: declaration(code)[::2] for lang, code in (("amh_Ethi", "amh"), ("eng_Latn", "eng"), ("tha_Thai", "tha"))}
    study = SequentialStudy(Corpora(text, text, "UDHR"), list(text), 8_000)
    rows, res = study.vocab_growth(), study.sequential(tuple(text))
    sizes = [len(res.lang_to_ids[lang]) for lang in study.langs]
    assert max(sizes) < 8_000  # the text ran out of pairs seen twice first
    assert [r["no sharing, as trained"] for r in rows] == [256 + sum(v - 256 for v in sizes[:n]) for n in (1, 2, 3)]
    last = rows[-1]
    assert last["sequential"] <= last["no sharing, as trained"] < last["no sharing"]
    here = {"vocab_growth_share": last["sequential"] / last["no sharing"]}  # far below the paper's 0.69: fails
    why = sequential_reasons(here, study.fidelity(study.langs, "alphabetical", 8_000), rows)["vocab_growth_share"]
    assert (f"{last['no sharing, as trained'] - last['sequential']:,} fewer because the languages share tokens, "
            f"{last['no sharing'] - last['no sharing, as trained']:,} because their own vocabularies stopped short of k") in why


def test_the_explorer_falls_back_to_a_frequent_word_where_concatenation_cuts_nothing_longer(seq):
    assert seq.explorer_pair() == ("deu_Latn", "eng_Latn")
    word, differs = seq.default_word("deu_Latn", ("deu_Latn",))  # alone: nothing differs
    assert not differs and word == next(seq.words("deu_Latn"))
    union = ("deu_Latn", "eng_Latn")
    assert seq.default_word("eng_Latn", union) == (seq.find_word("eng_Latn", union), True)


def test_sequential_paper_values_are_the_fidelity_and_union_numbers(seq):
    fid = seq.fidelity(LANGS, "alphabetical", K)
    spread = {n: seq.unions(n, trials=2) for n in (1, 2)}
    lines = {n: seq.union_lines(n, trials=2) for n in (1, 2)}
    growth = seq.vocab_growth()
    here = sequential_values(fid, lines, growth)
    assert set(here) == _claim_keys("modular_tokenizers_sequential")
    for key, column, name in (("subtokenizer_nsl_max", "NSL subtokenizer", "subtokenizer"),
                              ("global_nsl_max", "NSL global", "global")):
        m = here[key]  # the worst language's NSL, with its interval over the evaluation lines
        assert m.value == pytest.approx(max(r[column] for r in fid["rows"])) and m.over.startswith("lines")
        each = [stats.ratio_ci(t[name], t["reference"]) for t in fid["line_tokens"].values()]
        assert m.hi >= max(hi for _, _, hi in each) - 1e-12 and m.lo >= max(lo for _, lo, _ in each) - 1e-12
        assert [r[column] for r in fid["rows"]] == pytest.approx([v for v, _, _ in each])
    assert here["sequential_vs_concatenation"].value == pytest.approx(
        np.mean(spread[2]["concatenation"]) - np.mean(spread[2]["sequential"]))
    # Table 7's aggregation: the mean over subsets for each n (one language is no union)
    assert here["union_nsl_max"].value == pytest.approx(np.mean(spread[2]["sequential"]))
    assert here["concatenation_nsl_max"].value == pytest.approx(np.mean(spread[2]["concatenation"]))
    assert here["vocab_growth_share"] == len(seq.sequential(tuple(LANGS)).model) / (256 + len(LANGS) * (K - 256))
    alone = sequential_values(fid, {1: lines[1]}, growth)["sequential_vs_concatenation"]
    assert isinstance(alone, paper_vs_here.NotMeasured) and "2 languages" in alone.reason
    assert len(paper_vs_here.table("modular_tokenizers_sequential", here, seq.setting(2))) == len(here)
    # a measured reason for each failing claim: the worst language's place and the tokens it took over
    here = dict(here, subtokenizer_nsl_max=9.0, global_nsl_max=9.0, vocab_growth_share=0.1)  # as if they failed
    why = sequential_reasons(here, fid, growth)
    assert {"subtokenizer_nsl_max", "global_nsl_max", "vocab_growth_share"} <= set(why)
    worst = max(fid["rows"], key=lambda r: r["NSL subtokenizer"])
    assert why["subtokenizer_nsl_max"].startswith(f"the worst is {worst['language']}, trained ")
    assert f"{worst['reused']} of its {worst['|V_ℓ|']} tokens" in why["subtokenizer_nsl_max"]
    assert f"{growth[-1]['sequential']:,} of the {growth[-1]['no sharing']:,}" in why["vocab_growth_share"]
    rows = paper_vs_here.table("modular_tokenizers_sequential", here, seq.setting(2), why)
    for c, r in zip(paper_vs_here.claims("modular_tokenizers_sequential"), rows):
        failing = r["holds?"] == "does not hold"
        assert r["reason"] == (why.get(c.key, "reason not measured") if failing else ""), (c.key, r["reason"])


# ---------------------------------------------------------------------------- notebook 03


@pytest.fixture(scope="module")
def uni():
    return UnigramStudy(CORPORA, LANGS)


@pytest.fixture(scope="module")
def merged(uni):
    return uni.merge(LANGS, K, iters=2)


def test_unigram_fidelity_has_one_row_per_language_with_direct_token_counts(uni, merged):
    rows = uni.fidelity_rows(merged, K)
    assert [r["language"] for r in rows] == ["German", "English", "French"]
    mt = merged.modular()
    for row, lang in zip(rows, LANGS):
        mono_tokens = sum(map(len, uni.mono(lang, K).encode_batch(TEXT[lang])))
        assert row["subtokenizer"] == sum(map(len, mt.subtokenizer([lang]).encode_batch(TEXT[lang]))) / mono_tokens
        assert row["full merged"] == sum(map(len, mt.encode_batch(TEXT[lang]))) / mono_tokens
        assert row["sub-vocab size"] == len(merged.lang_to_ids[lang])
    same = uni.start_rows({"a": merged, "b": merged}, K)
    assert [r["NSL, a start"] for r in same] == [r["NSL, b start"] for r in same] == [r["subtokenizer"] for r in rows]


def test_frequency_extraction_shortens_with_more_pieces_and_is_nan_past_what_a_language_uses(uni, merged):
    rows = uni.frequency_rows(merged, [270, 290, 100_000], K)
    assert len(rows) == 3
    for row in rows:
        assert row["k=270"] >= row["k=290"] - 1e-3 and math.isnan(row["k=100000"])


def test_segmentations_are_the_models_own_viterbi_and_decode_to_the_line(uni, merged):
    seg = uni.segment(merged, "eng_Latn", "fra_Latn", i=2)
    assert seg["text"] == TEXT["eng_Latn"][2]
    assert list(seg["pieces"]) == ["eng_Latn subtokenizer", "full merged", "fra_Latn subtokenizer"]
    assert seg["ids"] == seg["direct"]
    assert all(merged.modular().decode(ids) == seg["text"] for ids in seg["ids"].values())
    assert len(seg["pieces"]["full merged"]) <= len(seg["pieces"]["fra_Latn subtokenizer"])


def test_the_panel_table_reuses_the_monolingual_models_and_em_only_raises_the_likelihood():
    uni = UnigramStudy(CORPORA, LANGS)
    calls, train = [], uni.mono.train
    uni.mono.train = lambda lang, k: calls.append((lang, k)) or train(lang, k)
    assert uni.table([], K, 1) == []
    one = uni.table(["deu_Latn", "fra_Latn"], 290, 1)
    three = uni.table(["deu_Latn", "fra_Latn"], 290, 3)
    assert calls == [("deu_Latn", 290), ("fra_Latn", 290)]  # same languages and k: nothing retrained
    assert [r["language"] for r in three] == ["German", "French"] and three[0]["EM iterations"] == 3
    assert three[0]["EM log-likelihood"] >= one[0]["EM log-likelihood"]


def test_unigram_paper_values_compare_em_with_the_union_without_it(uni, merged):
    rows = uni.fidelity_rows(merged, K)
    plain = uni.merge(LANGS, K, 0, init="average")  # no M-step: one scoring E-step only
    assert len(plain.loglik) == 1 and plain.loglik[0] <= uni.merge(LANGS, K, 2, init="average").loglik[-1]
    no_em = uni.fidelity_rows(plain, K)
    freq = uni.frequency_rows(merged, [270, 290], K)
    here = unigram_values(rows, no_em, freq, [270, 290])
    assert set(here) == _claim_keys("modular_tokenizers_unigram")
    subs = [r["subtokenizer"] for r in rows]
    assert here["subtokenizer_nsl_worst"] in subs and all(abs(s - 1) <= abs(here["subtokenizer_nsl_worst"] - 1) for s in subs)
    assert here["em_vs_average_union"] == pytest.approx(np.mean(subs) - np.mean([r["subtokenizer"] for r in no_em]))
    assert here["frequency_small_k"] == pytest.approx(np.mean([r["k=270"] for r in freq]))
    assert here["full_merged_nsl_mean"] == pytest.approx(np.mean([r["full merged"] for r in rows]))
    too_big = unigram_values(rows, no_em, uni.frequency_rows(merged, [270, 100_000], K), [270, 100_000])
    assert isinstance(too_big["frequency_full_k"], paper_vs_here.NotMeasured)


def test_unigram_nsls_have_intervals_over_lines(uni, merged):
    """Issue 42: notebook 03's NSL rows were point estimates. With the per-line tokens, the
    subtokenizer NSL farthest from 1 and the full merged mean are Measured over lines, whose
    points are the table's; one language's full merged mean is that NSL's own paired ratio
    interval; a claim "at most 1" then fails on an interval that crosses 1."""
    rows = uni.fidelity_rows(merged, K)
    freq = uni.frequency_rows(merged, [270, 290], K)
    lines = uni.line_tokens(merged, K)
    assert list(lines) == LANGS and all(len(t) == len(TEXT[lang]) for lang, by in lines.items() for t in by.values())
    here = unigram_values(rows, rows, freq, [270, 290], lines)
    subs = [r["subtokenizer"] for r in rows]
    worst, mean = here["subtokenizer_nsl_worst"], here["full_merged_nsl_mean"]
    assert isinstance(worst, paper_vs_here.Measured) and worst.over == "lines" and worst.lo <= worst.value <= worst.hi
    assert worst.value == pytest.approx(max(subs, key=lambda s: abs(s - 1)))
    assert mean.value == pytest.approx(np.mean([r["full merged"] for r in rows])) and mean.lo <= mean.value <= mean.hi
    one = unigram_values(rows[:1], rows[:1], freq[:1], [270, 290], {LANGS[0]: lines[LANGS[0]]})["full_merged_nsl_mean"]
    by = lines[LANGS[0]]
    assert (one.value, one.lo, one.hi) == pytest.approx(stats.ratio_ci(by["full merged"], by["reference"]))
    claim = next(c for c in paper_vs_here.claims("modular_tokenizers_unigram") if c.key == "full_merged_nsl_mean")
    assert claim.verdict(paper_vs_here.Measured(0.97, 0.9, 1.04, "lines")) == "does not hold"
    assert claim.verdict(0.97) == "holds"  # the point alone would pass
    uneven = {**lines, LANGS[0]: {n: t[:-1] for n, t in lines[LANGS[0]].items()}}
    assert isinstance(unigram_values(rows, rows, freq, [270, 290], uneven)["full_merged_nsl_mean"], float)


# ---------------------------------------------------------------------------- notebook 04


@pytest.fixture(scope="module")
def tok(seq):
    return seq.sequential(tuple(LANGS)).modular()


def test_sampling_summary_shares_add_up_and_match_the_scheme(tok):
    sub = lm.sampling_summary(tok, "samp_sub", 1, 0.5, LANGS, draws=200)
    assert sub["error"] is None and sub["name"] == "Samp_Sub_1(0.5)"
    assert sum(r["share"] for r in sub["rows"]) == pytest.approx(1.0)
    assert {r["subtokenizer"] for r in sub["rows"]} == {"own language", "own + 1"}
    full = lm.sampling_summary(tok, "samp_full", 1, 1.0, LANGS, draws=50)["rows"]
    assert [(r["subtokenizer"], r["share"], r["output cost vs full"]) for r in full] == [("full", 1.0, 1.0)]
    own = lm.sampling_summary(tok, "mono", 2, 0.7, LANGS, draws=50)  # n and p are ignored by mono
    assert own["name"] == "Mono-only" and [r["subtokenizer"] for r in own["rows"]] == ["own language"]
    assert all(r["mean active ids"] < lm_vocab_size(tok) for r in own["rows"])
    short = lm.sampling_summary(tok, "samp_sub", 2, 0.5, ["eng_Latn", "deu_Latn"])
    assert short["rows"] == [] and "needs 2 other languages" in short["error"]


def test_loss_curves_are_moving_averages():
    curves = lm.loss_curves({"a": [{"bpb": float(i)} for i in range(10)]}, 4)
    xs, ys = curves["a"]
    assert list(xs) == list(range(7)) and np.allclose(ys, np.arange(7) + 1.5)


def test_two_schemes_train_evaluate_and_tabulate_end_to_end(tok, tmp_path):
    schemes = {"Mono-only": mono(), "Samp_Sub_1(0.5)": samp_sub(1, 0.5)}
    trained = lm.train_schemes(tok, CORPORA.train, schemes, default_mixture(LANGS), config("tiny", lm_vocab_size(tok),
                               max_seq_len=16), TrainConfig(steps=3, lr=1e-2, warmup_steps=1, ckpt_every=3, log_every=1),
                               2, 16, tmp_path)
    assert list(trained.models) == list(schemes) and all(len(c) == 3 for c in trained.curves.values())
    assert all((tmp_path / name / "metrics.jsonl").exists() for name in schemes)
    short = {lang: lines[:2] for lang, lines in TEXT.items()}
    rows = lm.evaluate_schemes(trained.models, tok, short)
    settings = ("Lang", "Full", "Full-Lang", "EN+Lang")
    table = lm.bpb_table(rows, list(schemes), settings, LANGS)
    assert [(r["scheme"], r["setting"]) for r in table] == [(s, st) for s in schemes for st in settings]
    means = lm.mean_bpb(rows, list(schemes), settings)
    assert means[0]["bpb"] == pytest.approx(np.mean([table[0][lang] for lang in LANGS]))
    assert all(0.0 < c <= 1.0 for c in lm.coverage(rows, LANGS).values())
    fid = lm.fidelity_rows(trained.models, tok, lm.prompts(short, 1, words=3), max_new_tokens=3, top_k=5, seed=0)
    assert [r["scheme"] for r in fid] == list(schemes) and all(0.0 <= r["mean"] <= 1.0 for r in fid)
    speed = infer.full_vs_compact_timing(lm_vocab_size(tok), active_ids(tok, ["deu_Latn"]), [32], "t",
                                         n_layers=1, batch=1, seq=8, repeats=1)
    here = lm.paper_values(rows, fid, speed, "Mono-only", "Samp_Sub_1(0.5)", "Samp_Sub_1(0.5)")
    assert set(here) == _claim_keys("modular_tokenizers_lm")
    by = {(m["scheme"], m["setting"]): m["bpb"] for m in means}
    share = here["lang_vs_full"]  # Samp_Sub's Full-minus-Lang gap as a share of Mono-only's, over lines
    gap = {s: by[s, "Full"] - by[s, "Lang"] for s in ("Mono-only", "Samp_Sub_1(0.5)")}
    assert share.over == "lines" and share.value == pytest.approx(gap["Samp_Sub_1(0.5)"] / gap["Mono-only"])
    assert isinstance(here["samp_sub_recovers_baseline"], paper_vs_here.NotMeasured)  # no Baseline trained here
    assert here["mono_only_mixes_languages"] == pytest.approx(fid[0]["mean"] - fid[1]["mean"])
    assert here["compact_speedup"] == pytest.approx(speed[0]["forward ms"] / speed[1]["forward ms"])
    assert 0 < here["compact_params"] == pytest.approx(100 * (1 - speed[1]["params (M)"] / speed[0]["params (M)"]))
    cov = lm.coverage(rows, LANGS)  # Table 18's share: the Full tokens outside the language's own ids
    assert here["full_foreign_token_share"] == pytest.approx(100 * (1 - min(cov.values())))
    ours = lm.setting(lm.Settings(CORPORA, LANGS, tok, default_mixture(LANGS), "llama3", trained.models["Mono-only"],
                                  "tiny", TrainConfig(steps=3, lr=1e-2, warmup_steps=1), 2, 16, "cpu", "t"))
    assert set(ours) <= SETTING_FIELDS and ours["iterations"] == "3 steps of batch 2 x 16 tokens"
    assert ours["lr"] == "AdamW, warmup 1 steps, cosine from 0.01 to 0.001" and "70% eng_Latn" in ours["size"]
    assert f"{lm_vocab_size(tok):,} LM rows" in ours["vocabulary"] and "untied" in ours["model"]
    assert isinstance(lm.paper_values(rows, fid, [], "Mono-only", "Samp_Sub_1(0.5)", "Samp_Sub_1(0.5)")[
        "compact_speedup"], paper_vs_here.NotMeasured)
    # a compact model no faster than the full one: the reason is the timed pair itself
    slow = dict(here, compact_speedup=0.9, compact_params=50.0)  # params at the paper's size: only the speed fails
    why = lm.reasons(slow, speed)
    assert set(why) == {"compact_speedup"} and f"d_model {speed[0]['d_model']}" in why["compact_speedup"]
    assert f"{speed[0]['params (M)']:.1f}M parameters and runs {speed[0]['forward ms']:.2f} ms" in why["compact_speedup"]
    assert lm.reasons(dict(here, compact_speedup=1.5, compact_params=50.0), speed) == {}  # both hold
    # more foreign tokens than the paper's 5%: the worst language's own ids against the LM's rows
    foreign = lm.reasons(dict(here, full_foreign_token_share=50.0), speed, rows, tok)
    worst = min(cov, key=cov.get)
    assert foreign["full_foreign_token_share"] == (
        f"{worst}: {100 * (1 - cov[worst]):.1f}% of its full-tokenizer tokens lie outside its "
        f"{len(tok.ids([worst])):,} own ids ({len(tok.ids([worst])) / lm_vocab_size(tok):.0%} of the "
        f"{lm_vocab_size(tok):,} LM rows)")


def test_sequential_bpe_trains_in_the_papers_alphabetical_order_by_default():
    """§4.2 and App. A.3: sequential BPE trains the languages in alphabetical order. With no
    order, train_sequential sorts the codes; the study keeps its languages sorted, so its global
    tokenizer, its "alphabetical" order and its vocabulary growth follow that order too."""
    counts = {"y": Counter({"ab": 5, "abc": 4}), "x": Counter({"bc": 6, "abc": 2})}
    default = train_sequential(counts, 259, scheme="whitespace")
    assert list(default.budgets) == ["x", "y"]
    assert default.model.merges == train_sequential(counts, 259, order=["x", "y"], scheme="whitespace").model.merges
    assert default.model.merges != train_sequential(counts, 259, order=["y", "x"], scheme="whitespace").model.merges
    study = SequentialStudy(CORPORA, ["fra_Latn", "eng_Latn", "deu_Latn"], K)
    assert study.langs == ["deu_Latn", "eng_Latn", "fra_Latn"] and ORDERS[0] == "alphabetical"
    assert study.fidelity(study.langs, "alphabetical", K)["order"] == ("deu_Latn", "eng_Latn", "fra_Latn")
    assert [r["added"] for r in study.vocab_growth()] == ["deu_Latn", "eng_Latn", "fra_Latn"]
    assert "alphabetical order" in study.setting(1)["data"]
