"""One language chooser: every study and notebook that picks languages asks
:func:`modtok.studies.languages.choose`, and there is one ``Choice`` (issue 45: there were four
choosers, two ``Choice`` classes with different fields, and a third ``Choice`` for μ and ε)."""

from __future__ import annotations

import ast

import pytest
from conftest import REPO

from modtok.studies import adaptmix, languages, parity_bpe

SOURCES = sorted((REPO / "modtok").rglob("*.py")) + sorted((REPO / "notebooks").glob("*.py"))


def _tree(path):
    return ast.parse(path.read_text(encoding="utf-8"))


def test_one_choice_class_and_no_second_chooser():
    choices = [str(p.relative_to(REPO)) for p in SOURCES for node in ast.walk(_tree(p))
               if isinstance(node, ast.ClassDef) and node.name == "Choice"]
    assert choices == ["modtok/studies/languages.py"]
    # the wish-list choosers that were: a second module, data.pick_languages, 07's inline rule
    assert not (REPO / "modtok/studies/modular_tokenizers/languages.py").exists()
    for path in SOURCES:
        text = path.read_text(encoding="utf-8")
        assert "pick_languages" not in text and "choose_languages" not in text, path


# the notebooks that run on a wish list of languages; 01 takes every language the data has
WISH_NOTEBOOKS = ["02_sequential_bpe", "03_modular_unigram", "04_modular_lm", "05_parity_bpe", "06_adaptmix",
                  "07_pretoken_floor", "playground"]
LOADERS = {"parity_bpe.load", "study.load_data"}  # the studies' loaders (each asks choose: the test below)


@pytest.mark.parametrize("name", WISH_NOTEBOOKS)
def test_every_notebook_picks_its_languages_with_the_one_chooser(name):
    calls = set()
    for node in ast.walk(_tree(REPO / "notebooks" / f"{name}.py")):
        if isinstance(node, ast.Call):
            calls.add(ast.unparse(node.func))
    assert "choose" in calls or calls & LOADERS, f"{name} picks languages without modtok.studies.languages.choose"


@pytest.mark.parametrize("load", [lambda: parity_bpe.load(["eng_Latn", "rus_Cyrl"], 300, "gpt2", train_chars=2_000,
                                                          eval_lines=10),
                                  lambda: adaptmix.load_data(["eng_Latn", "rus_Cyrl"], 2_000, 10, min_langs=2)])
def test_the_study_loaders_ask_the_one_chooser(load, monkeypatch):
    for var in ("MODTOK_POOL", "MODTOK_FLORES", "MODTOK_MANIFEST"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("MODTOK_UDHR", "none")
    asked, real = [], languages.choose

    def spy(wish, *args, **kwargs):
        asked.append(list(wish))
        choice = real(wish, *args, **kwargs)
        choice.leave_out("rus_Cyrl", "spy")  # what the chooser decides is what the study uses
        choice.added["deu_Latn"] = "spy"
        choice.used.append("deu_Latn")
        return choice

    monkeypatch.setattr(languages, "choose", spy)
    study = load()
    assert asked == [["eng_Latn", "rus_Cyrl"]]
    assert study.langs == study.choice.used == ["eng_Latn", "deu_Latn"] and "rus_Cyrl" in study.choice.left_out
