"""The pre-token audit (modtok.evaluation.audit) and ``modtok audit``: hand-derived
values on toy tokenizers, then the paper's Table III numbers on FLORES."""

from __future__ import annotations

import json

import numpy as np
import pytest
from tokenizers import Regex, Tokenizer, models, normalizers, pre_tokenizers

from modtok.artifacts import deployed
from modtok.bpe.export import hf_tokenizer
from modtok.bpe.model import BPEModel
from modtok.evaluation import audit, metrics
from modtok.text import data
from modtok.ui import cli

NE = "नमस्ते"  # llama3 pre-tokens: 'नमस' '्त' 'े'


def _bytes_bpe(merges=(), scheme="llama3"):
    return hf_tokenizer(BPEModel(merges, scheme=scheme))


def test_floor_counts_the_whole_pipeline():
    tok = _bytes_bpe()
    # Nepali: 3 pre-tokens; English "Hi 2024": 'Hi' ' ' '202' '4' -> 2+1+3+1 = 7 byte tokens
    assert audit.pretoken_counts(tok, [NE, "Hi 2024"]).tolist() == [3, 4]
    assert audit.floor(tok, [NE], ["Hi 2024"]) == 3 / 7
    # App. G: a second split after the regex (individual digits) is counted too
    tok.pre_tokenizer = pre_tokenizers.Sequence([tok.pre_tokenizer, pre_tokenizers.Digits(individual_digits=True)])
    assert audit.pretoken_counts(tok, ["Hi 2024"]).tolist() == [6]
    assert audit.floor(tok, ["Hi 2024"], ["Hi"]) == 6 / 2


def test_decomposition_multiplies_to_the_premium():
    tok = _bytes_bpe([(0xE0, 0xA4)])  # one merge: the lead bytes of U+0900–U+093F
    ne, en = [NE, NE + " " + NE], ["Hi", "Hi there"]
    d = audit.decomposition(tok, ne, en)
    # P_rep keeps each word whole (' नमस्ते' with its space): 1 + 2; P: 3 + 6; T(en): 2 + 8 bytes
    assert d["base"] == 3 / (2 + 8)
    assert d["regex_factor"] == (3 + 6) / 3
    prem = metrics.premium(tok, ne, en)
    assert np.isclose(d["base"] * d["regex_factor"] * d["vocab_factor"], prem)
    assert audit.premium_ci(tok, ne, en)[0] == prem


def test_mark_initial_share_by_hand():
    # merges build े (e0 a5 87) and the piece e0 a5; 'नमस' = 9 bytes, '्त' = [e0a5, 8d, e0, a4, a4], 'े' = [े]
    tok = _bytes_bpe([(0xE0, 0xA5), (256, 0x87)])
    assert [len(tok.encode(p).ids) for p in ("नमस", "्त", "े")] == [9, 5, 1]
    assert audit.mark_initial_share(tok, [NE]) == 1 / 15
    assert audit.mark_initial_share(_bytes_bpe(), [NE]) == 0.0  # single bytes never hold a whole mark


def test_lossless_and_regex_class():
    tok = _bytes_bpe()
    assert audit.lossless(tok, [NE, "Hello, World!", "  x\n"])
    tok.normalizer = normalizers.Lowercase()
    assert not audit.lossless(tok, ["Hello"])
    assert audit.regex_class(_bytes_bpe(scheme="llama3")) == "letters-only"
    assert audit.regex_class(_bytes_bpe(scheme="llama3-marks")) == "mark-aware"
    other = Tokenizer(models.BPE())
    other.pre_tokenizer = pre_tokenizers.Split(Regex(" "), behavior="isolated")  # ' ' | 'नमस्ते'
    assert audit.regex_class(other) == "other"


def test_load_tokenizer_paths(tmp_path):
    tok = _bytes_bpe()
    tok.save(str(tmp_path / "tokenizer.json"))
    for where in (tmp_path, tmp_path / "tokenizer.json"):
        assert audit.load_tokenizer(where).encode("ab").ids == [97, 98]
    with pytest.raises(audit.TokenizerFileError, match="neither a deployed"):
        audit.load_tokenizer(tmp_path / "missing.json")
    (tmp_path / "other.json").write_text('{"model": {"type": "WordPiece?"}}')  # JSON, but no tokenizer
    with pytest.raises(audit.TokenizerFileError, match="not a tokenizers JSON file"):
        audit.load_tokenizer(tmp_path / "other.json")


# --------------------------------------------------------------------------
# Table III on FLORES-200 devtest

PAPER = {  # premium (notebook 01) and floor (paper: ±0.03)
    "llama3": (2.58, 2.19, "letters-only"),
    "qwen3": (4.42, 2.17, "letters-only"),
    "qwen3.5": (2.20, None, "mark-aware"),
    "cl100k": (4.76, None, "letters-only"),
    "o200k": (1.61, None, "mark-aware"),
}


@pytest.fixture(scope="module")
def devtest(flores_root):
    return data.load_flores(["eng_Latn", "npi_Deva"], root=flores_root)


@pytest.mark.parametrize("name", list(PAPER))
def test_audit_of_deployed_tokenizers(name, devtest):
    if name not in deployed.available():
        pytest.skip(f"{name}: optional package not installed (pip install modtok[deployed])")
    premium, floor, kind = PAPER[name]
    row = audit.audit(deployed.load(name), devtest["npi_Deva"], devtest["eng_Latn"], n_boot=200)
    assert row["regex_class"] == kind
    assert abs(row["premium"] - premium) < 0.01 and row["premium_ci"][0] < row["premium"] < row["premium_ci"][1]
    if floor is not None:
        assert abs(row["floor"] - floor) <= 0.03
    assert 0.77 <= row["base"] <= 0.81  # the repaired floor, whatever the vocabulary
    assert np.isclose(row["base"] * row["regex_factor"] * row["vocab_factor"], row["premium"])
    assert row["lossless"] is True


def test_cli_audit_json(devtest, flores_root, monkeypatch, capsys):
    if "llama3" not in deployed.available():
        pytest.skip("llama3 not installed")
    monkeypatch.setenv("MODTOK_FLORES", str(flores_root))
    assert cli.main(["audit", "llama3", "--lang", "npi_Deva", "--ref", "eng_Latn", "--json"]) == 0
    row = json.loads(capsys.readouterr().out)
    assert set(row) >= {"premium", "premium_ci", "floor", "base", "regex_factor", "vocab_factor",
                        "mark_initial", "lossless"}
    assert abs(row["floor"] - 2.19) <= 0.03
    assert cli.main(["audit", "llama3", "--lang", "xxx_Latn"]) == 2
