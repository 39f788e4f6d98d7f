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
                        "mark_initial", "lossless", "lossless_note"}
    assert abs(row["floor"] - 2.19) <= 0.03
    assert cli.main(["audit", "llama3", "--lang", "xxx_Latn"]) == 2


# --------------------------------------------------------------------------
# encode once: the audit from one encoding per side equals the audit as it was
# (every measure encoding again), to the last digit


def _audit_encoding_per_measure(tok, lines, ref_lines, n_boot=1000, seed=0):
    """The audit as it was before issue 32, kept as the oracle: each measure encodes
    again (token counts 4x per side, the pre-tokens twice, P_rep through a copy of the
    tokenizer with only the repaired regex, the ids twice more for marks and decoding)."""
    from modtok.evaluation.stats import ratio_ci

    p, lo, hi = ratio_ci(metrics.token_counts(tok, lines), metrics.token_counts(tok, ref_lines), n_boot, 0.95, seed)
    t_x, t_ref = metrics.token_counts(tok, lines).sum(), metrics.token_counts(tok, ref_lines).sum()
    p_x = audit.pretoken_counts(tok, lines).sum()
    p_rep = audit.pretoken_counts(audit.with_split(tok, audit.P_REP), lines).sum()
    ids = [i for seq in metrics.encode_lines(tok, lines) for i in seq]
    values, counts = np.unique(np.asarray(ids, np.int64), return_counts=True)
    marked = sum(int(c) for v, c in zip(values, counts) if audit.starts_with_mark(audit.token_bytes(tok, int(v))))

    def lossless(ls):
        return all(d == s for d, s in zip(tok.decode_batch(metrics.encode_lines(tok, ls), skip_special_tokens=False), ls))

    return {"regex_class": audit.regex_class(tok), "premium": p, "premium_ci": [lo, hi],
            "floor": metrics.ratio(audit.pretoken_counts(tok, lines).sum(), metrics.token_counts(tok, ref_lines).sum(), ""),
            "base": metrics.ratio(p_rep, t_ref, ""), "regex_factor": metrics.ratio(p_x, p_rep, ""),
            "vocab_factor": metrics.ratio(t_x, p_x, ""), "mark_initial": metrics.ratio(marked, counts.sum(), ""),
            "lossless": lossless(lines) and lossless(ref_lines),
            "lossless_note": "" if lossless(lines) and lossless(ref_lines) else "(a reason)"}


# a tiny parallel text (Nepali with marks and digits, English) and a byte BPE with a few merges
TINY_NE = [NE + " " + NE + " २०२४", "नेपालको सरकार।", "  " + NE + "\t1234 "]
TINY_EN = ["Hello there 2024", "The government of Nepal.", "hi  1234"]


def test_audit_from_one_encoding_equals_the_audit_per_measure_tiny():
    tok = _bytes_bpe([(0xE0, 0xA4), (0xE0, 0xA5), (256, 0xA8), (0x20, 256), (0x68, 0x65)])
    for lines, ref in ((TINY_NE, TINY_EN), (TINY_EN, TINY_NE)):
        assert audit.audit(tok, lines, ref, n_boot=300) == _audit_encoding_per_measure(tok, lines, ref, 300)
    x, ref = audit.encode_aligned(tok, TINY_NE, TINY_EN)
    assert "ids" not in x.__dict__ and x.tokens.tolist() == metrics.token_counts(tok, TINY_NE).tolist()  # counted
    assert x.with_ids().tokens.tolist() == [len(ids) for ids in x.ids]  # and from the ids: the same
    assert x.split("llama3-marks").tolist() == audit.pretoken_counts(audit.with_split(tok, "llama3-marks"), TINY_NE).tolist()
    with pytest.raises(metrics.ParallelCorpusError, match="x: 3, ref: 2"):
        audit.floor_of(x, metrics.Encoded(tok, TINY_EN[:2]))


@pytest.mark.parametrize("name", ["llama3", "qwen3"])
def test_audit_from_one_encoding_equals_the_audit_per_measure_flores(name, devtest):
    if name not in deployed.available():
        pytest.skip(f"{name}: optional package not installed (pip install modtok[deployed])")
    tok = deployed.load(name)
    ne, en = devtest["npi_Deva"], devtest["eng_Latn"]
    assert audit.audit(tok, ne, en, n_boot=200) == _audit_encoding_per_measure(tok, ne, en, 200)
