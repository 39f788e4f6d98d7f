"""Baseline trainers: a hand-derived merge order, budgets, byte fallback, lossless decode."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from modtok.artifacts import baselines
from modtok.errors import BudgetError, ConfigError, DataError

MULTI = {
    "eng_Latn": ["the cat sat on the mat", "a dog and a cat", "in 2024 or 1999"] * 30,
    "npi_Deva": ["नमस्ते संसार", "म घर जान्छु"] * 30,
    "rus_Cyrl": ["привет мир", "кошка сидит"] * 30,
}


def test_hf_bpe_learns_the_hand_derived_merges():
    """Pre-tokens of "ab ab ab cd" (scheme whitespace): "ab", " ab" x2, " cd".
    Byte-level pair counts: (a,b)=3, (Ġ,a)=2, (Ġ,c)=1, (c,d)=1 -> merge a+b first;
    then (Ġ,ab)=2 is the only pair seen twice (min_frequency=2) -> merge Ġ+ab; then stop."""
    tok = baselines.train_hf_bpe(["ab ab ab cd"], vocab_size=300)
    merges = json.loads(tok.to_str())["model"]["merges"]
    assert [tuple(m) if isinstance(m, list) else tuple(m.split()) for m in merges] == [("a", "b"), ("Ġ", "ab")]
    assert tok.get_vocab_size() == 258
    assert tok.encode("ab ab cd").tokens == ["ab", "Ġab", "Ġ", "c", "d"]


def test_hf_bpe_budget_and_joint_training():
    tok = baselines.train_joint(MULTI, 300)
    assert tok.get_vocab_size() == 300
    mono = baselines.train_monolingual(MULTI, 280)
    assert set(mono) == set(MULTI) and all(t.get_vocab_size() <= 280 for t in mono.values())
    with pytest.raises(BudgetError, match="smaller than the byte alphabet"):
        baselines.train_hf_bpe(["abc"], 255)
    with pytest.raises(DataError, match="empty corpus"):
        baselines.train_hf_bpe(["", " "], 300)
    with pytest.raises(ConfigError, match="unknown tokenizer kind"):
        baselines.train_joint(MULTI, 300, kind="wordpiece")


def test_sp_unigram_paper_settings():
    sp = baselines.train_sp_unigram(MULTI, 400)
    assert sp.get_piece_size() <= 400
    ids = sp.encode("zebra ☃")  # unseen characters fall back to UTF-8 bytes
    assert "<0xE2>" in [sp.id_to_piece(i) for i in ids]
    assert [sp.id_to_piece(i) for i in sp.encode("2024")] == ["▁", "2", "0", "2", "4"]  # split_digits
    with pytest.raises(BudgetError):
        baselines.train_sp_unigram(MULTI, 100)


@pytest.fixture(scope="module")
def trained():
    return baselines.train_joint(MULTI, 320), baselines.train_joint(MULTI, 400, kind="unigram")


@given(text=st.text(max_size=50))
def test_hf_bpe_round_trip(trained, text):
    bpe, _ = trained
    assert bpe.decode(bpe.encode(text).ids) == text


@given(text=st.text(max_size=50).filter(lambda s: "\u2581" not in s))
def test_sp_unigram_round_trip(trained, text):
    """Lossless except for U+2581 itself, which sentencepiece uses as its space mark."""
    _, sp = trained
    assert sp.decode(sp.encode(text)) == text
