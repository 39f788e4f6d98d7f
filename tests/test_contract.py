"""The study contract (modtok.studies.contract) keeps the README's counts true ("Where a
newcomer's change goes"): a metric added in one place (metrics.LANGUAGE_METRICS) is a column
of every study's rows, and a study that declares itself (its class, its claims file) is on the
reproduction page without an edit of paper_vs_here.py or report.py."""

from __future__ import annotations

import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

import modtok

from modtok.adapt import extend
from modtok.bpe.export import to_tokenizer_json
from modtok.bpe.model import BPEModel
from modtok.errors import ConfigError
from modtok.evaluation import metrics
from modtok.studies import adaptmix, contract
from modtok.studies import paper_vs_here as pvh
from modtok.studies import parity_bpe as pb
from modtok.studies.modular_tokenizers.inefficiency import InefficiencyStudy
from modtok.studies.modular_tokenizers.lm import ModularLMStudy
from modtok.studies.modular_tokenizers.sequential import SequentialStudy
from modtok.studies.modular_tokenizers.unigram import UnigramStudy
from modtok.studies.pretoken_floor import cross_script, floor
from modtok.studies.pretoken_floor.claims import PretokenFloorStudy
from modtok.text.data import Corpora
from modtok.ui import report

TEXT = {
    "eng_Latn": ["the cat sat on the mat and looked at the window", "a small dog ran after the red ball",
                 "we walked to the market and bought fresh bread", "she reads a book every evening"],
    "deu_Latn": ["die katze sitzt auf der matte und schaut zum fenster", "ein kleiner hund rennt dem ball nach",
                 "wir gingen zum markt und kauften frisches brot", "sie liest jeden abend ein buch"],
    "fra_Latn": ["le chat est assis sur le tapis et regarde la fenêtre", "un petit chien court après la balle",
                 "nous sommes allés au marché acheter du pain frais", "elle lit un livre chaque soir"],
}
LANGS = list(TEXT)
CORPORA = Corpora({lang: lines * 8 for lang, lines in TEXT.items()}, TEXT, "hand-written test text")
K = 300
NEW = "chars_per_token"  # the metric the test adds, in one place


def _toy_lines(rng: random.Random, alphabet: str, n: int) -> list[str]:
    words = ["".join(rng.choice(alphabet) for _ in range(rng.randint(2, 6))) for _ in range(30)]
    return [" ".join(rng.choices(words, k=rng.randint(4, 9))) for _ in range(n)]


def _parallel(n_train: int) -> tuple[dict, dict, dict]:
    """Three languages (train, dev, test) of random words, the test and dev sides parallel in size."""
    rng = random.Random(0)
    alphabets = {"eng_Latn": "abcdefghij", "rus_Cyrl": "абвгдежзик", "hin_Deva": "कखगघचछजझटठ"}
    return tuple({lang: _toy_lines(rng, a, n) for lang, a in alphabets.items()} for n in (n_train, 30, 30))


def _bytes_base() -> extend.Base:
    """A deployed base of bytes only (llama3 regex): cheap, and its extensions are real."""
    return extend.Base(to_tokenizer_json(BPEModel([], scheme="llama3")))


def rows_of_every_study() -> dict[str, list[dict]]:
    """Each declared study's per-language rows at toy size, called by the contract's name."""
    seq = SequentialStudy(CORPORA, LANGS, K)
    uni = UnigramStudy(CORPORA, LANGS)
    train, dev, test = _parallel(200)
    parity = pb.ParityStudy(train, dev, test, vocab=320, scheme="llama3",
                            sizes={"eng_Latn": 100.0, "rus_Cyrl": 10.0, "hin_Deva": 1.0}, source="toy")
    mix = adaptmix.AdaptMixStudy(adaptmix.Data(list(train), train, dev, test, True, "toy text"), scheme="whitespace")
    mix.choose("hf-bpe", 300, 9_000, 1, [(0.5, 0.1)])  # the test split is sealed until μ and ε are chosen
    base = {"bytes": _bytes_base()}
    nepali = ["नेपालको सरकार", "नेपाल सरकार नेपालको", "सरकारको नेपाल"] * 4
    sweep = floor.k_sweep(base, nepali, [0, 10], nepali)
    return {
        "modular_tokenizers_inefficiency": InefficiencyStudy(CORPORA, K).rows(LANGS[:2], 400),
        "modular_tokenizers_sequential": seq.rows(LANGS, "alphabetical", K),
        "modular_tokenizers_unigram": uni.rows(uni.merge(LANGS, K, iters=1), K),
        "modular_tokenizers_lm": ModularLMStudy().rows(seq.modular("sequential", LANGS), TEXT),
        "parity_bpe": parity.rows(["classical", "parity (base)"]),
        "adaptmix": mix.rows({"UniMix": mix.run("hf-bpe", 300, 9_000, 1, 0.5, 0.1).tokenizers[0]}),
        "pretoken_floor": PretokenFloorStudy().rows(base, sweep.tokenizers, {"npi_Deva": nepali}),
    }


def test_a_metric_added_in_one_place_is_a_column_of_every_studys_rows(monkeypatch):
    monkeypatch.setitem(metrics.LANGUAGE_METRICS, NEW, lambda lang, e, ref: metrics.ratio(e.chars, e.total, lang))
    rows = rows_of_every_study()
    assert set(rows) == set(contract.declared())  # every study there is, none left out of this test
    promised = {"lang", "tokenizer", *metrics.LANGUAGE_METRICS}
    for study, table in rows.items():
        assert table, f"{study}: no rows"
        for r in table:
            assert promised <= set(r), f"{study}: {sorted(promised - set(r))} missing"
            # the new column is measured on the row's own encoding: characters per token
            assert r[NEW] == pytest.approx(1 / r["tokens_per_char"]), study


def test_a_reference_less_row_has_no_nsl_and_a_referenced_one_does():
    e = metrics.Encoded(_bytes_base().tokenizer, ["ab c"], "eng_Latn")
    alone = metrics.language_table_of({"eng_Latn": {"bytes": e}})[0]
    against = metrics.language_table_of({"eng_Latn": {"bytes": e}}, {"eng_Latn": e})[0]
    assert alone["nsl"] != alone["nsl"] and against["nsl"] == 1.0  # NaN without a reference; 1 against itself


FIGURES = '''
[fixture_demo.shorter]
claim = "the fixture's method shortens the text"
source = "Fixture paper, Table 1"
paper = 0.8
unit = "NSL"
rule = "below 1"
scale = "reduced: a toy"
range = [0, 3]
[fixture_demo.shorter.setting]
data = "two languages"

[fixture_demo.fairer]
claim = "the fixture's method is fairer"
source = "Fixture paper, Table 2"
paper = -0.1
unit = "Gini change"
rule = "below 0"
scale = "not reproduced: needs the paper's corpus"
range = [-1, 1]
[fixture_demo.fairer.setting]
data = "two languages"
'''


def test_a_fixture_study_plugs_into_the_reproduction_page_through_the_contract_alone(tmp_path, monkeypatch):
    """A new paper's study: a class and a claims file; paper_vs_here.py and report.py untouched."""
    claims_file = tmp_path / "fixture_figures.toml"
    claims_file.write_text(FIGURES, encoding="utf-8")
    monkeypatch.setattr(contract, "REGISTRY", dict(contract.declared()))  # the fixture leaves no study behind

    class FixtureStudy(contract.Study):
        name, notebook, paper = "fixture_demo", "99_fixture", contract.Paper("fixture-paper.txt", "A Fixture Paper")
        figures = claims_file

        def rows(self) -> list[dict]:
            return metrics.language_table_of({"eng_Latn": {"bytes": metrics.Encoded(_bytes_base().tokenizer, ["a b"])}})

        def setting(self) -> dict[str, str]:
            return {"data": "two languages"}

        def measured(self) -> dict:
            return {"shorter": 0.7, "fairer": pvh.NotMeasured("needs parallel text")}

    study = FixtureStudy()
    monkeypatch.setenv("MODTOK_REPORTS", str(tmp_path))
    rows = pvh.table(study.name, study.measured(), study.setting(), study.reasons(study.measured()))
    assert [r["holds?"] for r in rows] == ["holds", "not measured: needs parallel text"]

    out = report.write(tmp_path)
    counts = out.counts["fixture-paper.txt"]
    assert (counts["claims"], counts["holds"], counts["not measured"]) == (2, 1, 1)
    assert set(out.missing) == set(pvh.studies())  # the seven others: declared, no table saved
    page = out.markdown.read_text(encoding="utf-8")
    assert "A Fixture Paper (fixture-paper.txt)" in page and "the fixture's method shortens the text" in page
    assert "| 99_fixture | fixture_demo | fixture-paper.txt | two languages |" in page


def test_a_study_without_rows_cannot_be_made(monkeypatch):
    monkeypatch.setattr(contract, "REGISTRY", {})

    class NoRows(contract.Study):
        name, notebook, paper = "no_rows", "99_no_rows", contract.Paper("x.txt", "X")

        def setting(self) -> dict[str, str]:
            return {}

        def measured(self) -> dict:
            return {}

    with pytest.raises(TypeError, match="abstract method.*rows"):
        NoRows()
    with pytest.raises(ConfigError, match="declared twice"):
        type("Other", (NoRows,), {"name": "no_rows"})


def test_listing_the_studies_imports_no_torch():
    """`modtok report` lists the studies with contract.declared(): in a fresh interpreter that
    finds every study this file imports and loads no torch (notebook 04's study imports it
    lazily, continued_pretraining declares no study and is not imported)."""
    code = ("import sys; from modtok.studies import contract; "
            "print(' '.join(contract.declared()), 'torch' in sys.modules, 'modtok.lm.model' in sys.modules)")
    root = str(Path(modtok.__file__).parents[1])  # this checkout's modtok, not an installed one
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([root, os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env,
                         cwd=root, timeout=300).stdout.split()
    ours = {name for name, cls in contract.declared().items() if cls.__module__.startswith("modtok.studies.")}
    assert set(out[:-2]) == ours and len(ours) == 7  # the seven notebooks' studies, none skipped
    assert out[-2:] == ["False", "False"]  # neither torch nor the LM modules built on it


def test_every_column_of_a_table_v_row_is_placed_in_the_contracts_exception():
    """Table V's rows are the contract's one documented exception to the row builder: each
    column is named there with the kind of measure it is, none is a registry column."""
    train, _, test = _parallel(200)
    row = cross_script.language_row(_bytes_base(), "hin_Deva", train["hin_Deva"], test["hin_Deva"],
                                    test["eng_Latn"], 20, n_boot=5)
    columns = ["base", *row]  # pool_table puts the base's name first
    assert [c for c in columns if f"``{c}``" not in contract.__doc__] == []
    assert not set(columns) & set(metrics.LANGUAGE_METRICS)
