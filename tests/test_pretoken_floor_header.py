"""Notebook 07's header on one's own corpus: a language it calls left out is not one that
section (g) then sweeps without saying so (session 21's user trial, UDHR
eng/zho/tha/amh/rus/hin: the header said "left out: tha_Thai, amh_Ethi", (g) swept both)."""

from __future__ import annotations

import json
import re

import pytest
from conftest import REPO

from modtok.studies.languages import choose
from modtok.studies.pretoken_floor import cross_script
from modtok.text import data

# the trial's corpus: FLORES-200 code -> the udhr package's declaration
TRIAL = {"eng_Latn": "eng", "zho_Hans": "cmn_hans", "tha_Thai": "tha", "amh_Ethi": "amh", "rus_Cyrl": "rus",
         "hin_Deva": "hin"}


@pytest.fixture
def own_corpus(tmp_path, monkeypatch, declaration):
    """The trial's corpus as txt files: a manifest for training, the same files as evaluation
    text (the first 20 paragraphs of each declaration: the same number of lines each)."""
    (tmp_path / "eval").mkdir()
    manifest = {}
    for lang, code in TRIAL.items():
        path = tmp_path / "eval" / f"{lang}.txt"
        path.write_text("\n".join(declaration(code)[:20]) + "\n", encoding="utf-8")
        manifest[lang] = [str(path)]
    (tmp_path / "corpora.json").write_text(json.dumps(manifest), encoding="utf-8")
    monkeypatch.setenv("MODTOK_MANIFEST", str(tmp_path / "corpora.json"))
    monkeypatch.setenv("MODTOK_EVAL", str(tmp_path / "eval"))


def header_lines(smoke: bool) -> list[str]:
    """What notebook 07's setup cell prints about its languages: its own lines, from
    ``AVAILABLE =`` to the print of the choice, run as they are in the notebook."""
    source = (REPO / "notebooks" / "07_pretoken_floor.py").read_text(encoding="utf-8")
    code = re.search(r"^AVAILABLE = .*?^print\(\*CHOICE\.lines\(\), sep=\"\\n\"\)$", source, re.S | re.M).group(0)
    code = code.replace('print(*CHOICE.lines(), sep="\\n")', "")
    scope = {"data": data, "choose": choose, "cross_script": cross_script, "SMOKE": smoke}
    exec(code, scope)  # noqa: S102 - the notebook's own lines, on the test's corpus
    return scope["CHOICE"].lines()


@pytest.mark.parametrize("smoke", [True, False])
def test_07_header_never_calls_a_language_left_out_that_g_sweeps(own_corpus, smoke):
    lines = header_lines(smoke)
    left = {m.group(1): m.group(2) for line in lines if (m := re.match(r"left out: (\w+) \((.*)\)$", line))}
    swept = set(cross_script.wanted(data.available_languages(), smoke))
    assert {"tha_Thai", "amh_Ethi"} <= swept & set(left), (lines, swept)  # the trial's case is the one tested
    for lang, why in left.items():
        # left out of the sections that do not use it, and (g)'s asking for it said
        assert why.startswith("not used by (b)-(f) and (h)"), (lang, why)
        assert ("(g) asks for it" in why) == (lang in swept), (lang, why, swept)
    used = lines[0].split(": ", 1)[1].split(", ")
    assert used == ["eng_Latn", "rus_Cyrl", "hin_Deva"]
