"""Token counts of many pre-tokens in one call (modtok.bpe.lengths) = HF's own model.

Oracles: the HF model's ``tokenize`` of each piece (its Rust BPE), and the readable
reference encoder ``BPEModel.encode_bytes`` for the engine's kernel.
"""

from __future__ import annotations

import functools
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from modtok.artifacts.baselines import train_hf_bpe
from modtok.bpe import kernels as K
from modtok.bpe.export import hf_tokenizer
from modtok.bpe.lengths import Pieces
from modtok.bpe.model import BPEModel
from modtok.errors import UsageError
from modtok.evaluation.metrics import pretokens

TEXT = ["the cat sat on the mat, the cats sat", "नमस्ते दुनिया नमस्कार", "ab ab abc a b c ba cab"] * 30


@functools.lru_cache(maxsize=None)
def _trained(kind: str):
    if kind == "hf":
        return train_hf_bpe({"x_Latn": TEXT}, 290, "whitespace")  # 34 merges: words stay split
    # a modtok model: bytes 0..255, every merge's parts earlier ids (random but proper)
    return hf_tokenizer(_random_model(random.Random(3), [ord(c) for c in "abct "], 300))


def _random_model(rng, alphabet, n_merges) -> BPEModel:
    """A proper merge list over ``alphabet`` (byte values) and earlier outputs, repeated
    outputs included (ab+c and a+bc both make abc)."""
    model = BPEModel([], "whitespace")
    for _ in range(n_merges):
        ids = alphabet + list(range(256, len(model.vocab)))
        a, b = rng.choice(ids), rng.choice(ids)
        if (a, b) not in model.ranks:
            model.add_merge(a, b)
    return model


def _oracle(model, pieces):
    return [len(model.tokenize(p)) for p in pieces]


@pytest.mark.parametrize("kind", ["hf", "modtok"])
@settings(max_examples=60, deadline=None)
@given(st.lists(st.text("abct हिनम्", min_size=1, max_size=40), min_size=1, max_size=30))
def test_lengths_equal_the_models_own_tokenize(kind, texts):
    tok = _trained(kind)
    pieces = sorted({p for t in texts for p in pretokens(tok, t)})
    if not pieces:
        return
    assert Pieces(pieces).lengths(tok.model).tolist() == _oracle(tok.model, pieces)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text("abct हिनम्", min_size=1, max_size=40), min_size=1, max_size=30), st.integers(0, 2**16))
def test_a_bpe_model_segments_its_pieces_as_its_export_does(texts, seed):
    """Pieces.model_lengths reads the BPEModel itself: the numbers of its HF export's model, on
    random proper merge lists (repeated outputs: ab+c and a+bc) and pieces of several scripts."""
    model = _random_model(random.Random(seed), sorted({b for t in texts for b in t.encode()})[:8], 60)
    tok = hf_tokenizer(model)
    pieces = sorted({p for t in texts for p in pretokens(tok, t)})
    assert Pieces(pieces).model_lengths(model).tolist() == Pieces(pieces).lengths(tok.model).tolist()
    with pytest.raises(UsageError, match="byte-level alphabet"):  # not what a byte-level pipeline cuts
        Pieces(["a b"]).model_lengths(model)  # a space, where the byte-level pipeline has Ġ


def test_lengths_on_the_trained_text_and_with_ignore_merges():
    from tokenizers import models

    tok = _trained("hf")
    pieces = sorted({p for line in TEXT for p in pretokens(tok, line)})
    table = Pieces(pieces)
    assert table.lengths(tok.model).tolist() == _oracle(tok.model, pieces)
    assert max(table.lengths(tok.model)) > 1  # not every piece is one token: the merges act
    # ignore_merges: a piece that is a token stays whole even when the merges would split it
    vocab = {"a": 0, "b": 1, "c": 2, "bc": 3, "abc": 4}
    merges = [("b", "c")]  # "abc" is reachable only through ignore_merges
    for ignore in (False, True):
        bpe = models.BPE(vocab, merges, ignore_merges=ignore)
        assert Pieces(["abc", "bc", "cab"]).lengths(bpe).tolist() == _oracle(bpe, ["abc", "bc", "cab"])
    assert Pieces(["abc"]).lengths(models.BPE(vocab, merges, ignore_merges=True)).tolist() == [1]


def test_what_is_not_plain_bpe_is_left_to_the_caller():
    from tokenizers import models

    vocab = {"a": 0, "b": 1, "ab": 2, "##b": 3, "[UNK]": 4}
    pieces = Pieces(["ab", "ba"])
    assert pieces.lengths(models.BPE(vocab, [("a", "b")])).tolist() == [1, 2]
    assert pieces.lengths(models.BPE(vocab, [("a", "b")], dropout=0.5)) is None
    assert pieces.lengths(models.BPE(vocab, [], continuing_subword_prefix="##")) is None
    assert pieces.lengths(models.BPE(vocab, [], end_of_word_suffix="</w>")) is None
    assert Pieces(["abz"]).lengths(models.BPE(vocab, [("a", "b")], unk_token="[UNK]")) is None  # z unknown
    assert pieces.lengths(models.WordLevel(vocab, unk_token="[UNK]")) is None
    assert Pieces([]).lengths(models.BPE(vocab, [("a", "b")])).tolist() == []


def _segmented(kernel, words: list[bytes], model: BPEModel) -> list[list[int]]:
    """``words`` as the engine holds them (symbols back to back, rows of start and length),
    segmented in place by ``kernel`` (K.encode_words or K.segment_words) under ``model``."""
    symbols = np.frombuffer(b"".join(words), np.uint8).astype(np.int32)
    word = np.zeros((len(words), 2), np.int64)
    word[:, K.W_LENGTH] = [len(w) for w in words]
    np.cumsum(word[:-1, K.W_LENGTH], out=word[1:, K.W_START])
    m = np.asarray(model.merges, np.int64)
    table_keys, table_ids = K.table_of_ranks((m[:, 0] << K.KEY_SHIFT) | m[:, 1])
    kernel(symbols, word, table_keys, table_ids, np.asarray(model.results, np.int64))
    return [symbols[start : start + length].tolist() for start, length in word]


@settings(max_examples=80, deadline=None)
@given(st.lists(st.binary(min_size=1, max_size=60), min_size=1, max_size=20), st.integers(0, 2**16))
def test_encode_words_is_the_reference_rule(words, seed):
    """The engine's kernel (heap of pair ranks) against the readable scan of
    BPEModel.encode_bytes, on a random proper merge list over few bytes (so the
    merges act, repeated outputs included: ab+c and a+bc)."""
    model = _random_model(random.Random(seed), sorted({b for w in words for b in w})[:6], 40)
    assert _segmented(K.encode_words, words, model) == [model.encode_bytes(w) for w in words]


@pytest.mark.parametrize("seed", range(3))
def test_segment_words_in_two_threads_is_the_reference_rule(seed, monkeypatch):
    """K.segment_words splits the words between two threads from SPLIT_WORDS on (1 here): each
    half is segmented as BPEModel.encode_bytes does, and neither half touches the other's."""
    monkeypatch.setattr(K, "SPLIT_WORDS", 1)
    rng = random.Random(seed)
    words = [bytes(rng.choice(b"abcde") for _ in range(rng.randint(1, 30))) for _ in range(rng.randint(1, 400))]
    model = _random_model(rng, list(b"abcde"), 60)
    assert _segmented(K.segment_words, words, model) == [model.encode_bytes(w) for w in words]


def test_line_pieces_of_some_languages_are_the_numbers_of_all_and_of_hf():
    """LinePieces.line_tokens(tok, langs) segments only those languages' pre-tokens: each line's
    count is HF's encoding of it, for an HF BPE (one numba call), a modtok BPEModel (no export) and
    a model that is not plain BPE (tokenize per piece), and for every subset of languages."""
    from tokenizers import Tokenizer, models

    from modtok.mixture.dev import LinePieces

    model = _random_model(random.Random(5), [ord(c) for c in "abct "], 120)
    hf = hf_tokenizer(model)
    lines = {"x": TEXT[:4], "y": ["cab cab", "", "tab"], "z": ["बत ab"]}
    pieces = LinePieces.of(hf, lines)
    wordlevel = Tokenizer(models.WordLevel({"a": 0, "[UNK]": 1}, unk_token="[UNK]"))
    wordlevel.pre_tokenizer = hf.pre_tokenizer
    for tok in (hf, model, wordlevel):
        encode = (hf if tok is model else tok).encode
        for langs in (None, ["y"], ["z", "x"], []):
            got = pieces.line_tokens(tok, langs)
            assert {lang: t.tolist() for lang, t in got.items()} == {
                lang: [len(encode(line).ids) for line in lines[lang]] for lang in (lines if langs is None else langs)}
