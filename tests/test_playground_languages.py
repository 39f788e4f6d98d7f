"""The playground notebook on a corpus of one's own: its "parallel line" is in another
language than its sentence, or it says there is none (session 21's user trial, UDHR
eng/zho/tha/amh/rus/hin without Nepali: the sentence was English, and so was its "parallel
line")."""

from __future__ import annotations

import json

import pytest
from conftest import REPO

from modtok.ui import playground

TRIAL = {"eng_Latn": "eng", "zho_Hans": "cmn_hans", "tha_Thai": "tha", "amh_Ethi": "amh", "rus_Cyrl": "rus",
         "hin_Deva": "hin"}


def own_corpus(tmp_path, monkeypatch, declaration, langs):
    """``langs`` of the trial's corpus as txt files: the manifest's training text and the
    evaluation text both (the first 20 paragraphs of each declaration, aligned)."""
    manifest = {}
    for lang in langs:
        path = tmp_path / f"{lang}.txt"
        path.write_text("\n".join(declaration(TRIAL[lang])[:20]) + "\n", encoding="utf-8")
        manifest[lang] = [str(path)]
    (tmp_path / "corpora.json").write_text(json.dumps(manifest), encoding="utf-8")
    monkeypatch.setenv("MODTOK_MANIFEST", str(tmp_path / "corpora.json"))
    monkeypatch.setenv("MODTOK_EVAL", str(tmp_path))
    monkeypatch.setenv("MODTOK_SMOKE", "1")


def run_notebook(monkeypatch, capsys) -> tuple[dict, str]:
    """Every code cell of ``notebooks/playground.py``, the deployed tokenizers left out (their
    rows are not what is tested) and the widget not displayed; its names and what it printed."""
    monkeypatch.setattr(playground, "deployed_views", lambda: ([], []))
    monkeypatch.setattr(playground.Playground, "show", lambda self: None)
    scope: dict = {}
    exec((REPO / "notebooks" / "playground.py").read_text(encoding="utf-8"), scope)  # noqa: S102
    return scope, capsys.readouterr().out


def test_the_parallel_line_is_another_languages(tmp_path, monkeypatch, capsys, declaration):
    own_corpus(tmp_path, monkeypatch, declaration, TRIAL)
    scope, out = run_notebook(monkeypatch, capsys)
    assert scope["lang"] == "hin_Deva"  # no Nepali: its same-script stand-in
    assert scope["sentence"] == declaration("hin")[0]
    assert scope["english"] == declaration("eng")[0] != scope["sentence"]
    assert f"English, the parallel line: {scope['english']}" in out


def test_english_alone_has_no_parallel_line_and_says_so(tmp_path, monkeypatch, capsys, declaration):
    own_corpus(tmp_path, monkeypatch, declaration, ["eng_Latn"])
    scope, out = run_notebook(monkeypatch, capsys)
    assert scope["lang"] == "eng_Latn" and scope["english"] == ""
    assert "no parallel English line (the data has no language but English)" in out
    assert "the parallel line:" not in out


def test_no_english_no_parallel_line_and_says_so(tmp_path, monkeypatch, capsys, declaration):
    own_corpus(tmp_path, monkeypatch, declaration, ["tha_Thai", "rus_Cyrl"])
    scope, out = run_notebook(monkeypatch, capsys)
    assert scope["lang"] == "tha_Thai" and scope["english"] == ""
    assert "no parallel English line (the data has no English)" in out


@pytest.mark.parametrize("used, expected", [(["eng_Latn", "zho_Hans"], "zho_Hans"), (["eng_Latn"], "eng_Latn"),
                                            (["npi_Deva", "hin_Deva"], "npi_Deva"),
                                            (["rus_Cyrl", "hin_Deva"], "hin_Deva")])
def test_the_sentence_is_english_only_when_nothing_else_is_there(used, expected):
    lang, ref, why = playground.languages(used, used)
    assert lang == expected and ref != lang and bool(why) == (ref is None)
