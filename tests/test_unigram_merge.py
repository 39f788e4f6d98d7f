"""Merged Unigram on real text: union layout, EM, restricted subtokenizers and
their exports (HF tokenizer.json via ModularTokenizer, sentencepiece .model) vs
the reference restricted Viterbi on FLORES devtest, frequency extraction, errors."""

from __future__ import annotations

import numpy as np
import pytest
import sentencepiece as spm
from hypothesis import given
from hypothesis import strategies as st

from modtok.artifacts.modular import ModularTokenizer
from modtok.errors import BudgetError, DataError, MissingByteFallbackError, UnknownLanguageError
from modtok.text import data
from modtok.unigram.extract import RestrictedUnigram, frequency_subvocab, piece_frequencies
from modtok.unigram.merge import BASE_PIECES, BASE_TYPES, count_units, merge_unigram, union, word_safe
from modtok.unigram.model import SPACE, UnigramModel
from modtok.unigram.train import train_unigram

LANGS = ["eng_Latn", "npi_Deva", "rus_Cyrl"]
K = 1000
N_FLORES = 300


@pytest.fixture(scope="module")
def setup(pool_root, flores_root):
    corpus = data.load_pool(LANGS, root=pool_root, max_chars=150_000)
    models = {lang: train_unigram(lines, K) for lang, lines in corpus.items()}
    merged = merge_unigram(models, corpus, max_iter=4, tol=0.0)
    flores = data.load_flores(LANGS, root=flores_root, max_lines=N_FLORES)
    return corpus, models, merged, flores


def test_union_layout_and_language_sets(setup):
    """Base pieces are ids 0..258 and in every language; each language's set is
    exactly the base plus its own model's normal pieces; shared pieces are kept once."""
    _, models, merged, _ = setup
    m = merged.model
    assert m.pieces[:259] == BASE_PIECES and m.types[:259].tolist() == BASE_TYPES
    union_pieces = set().union(*({mm.pieces[i] for i in mm.normal_ids} for mm in models.values()))
    assert len(m) == 259 + len(union_pieces)
    for lang, mm in models.items():
        own = {m.pieces[i] for i in merged.lang_to_ids[lang] if m.types[i] == 1}
        assert own == {mm.pieces[i] for i in mm.normal_ids}
        assert set(range(259)) <= set(merged.lang_to_ids[lang].tolist())
    shared = {mm.pieces[i] for i in models["eng_Latn"].normal_ids} & {mm.pieces[i] for i in models["rus_Cyrl"].normal_ids}
    assert SPACE in shared and len(shared) > 10  # punctuation, digits, '▁'


def test_em_improves_and_never_decreases(setup):
    _, _, merged, _ = setup
    ll = np.array(merged.loglik)
    assert len(ll) == 5
    assert (np.diff(ll) >= -1e-9 * abs(ll[0])).all(), ll
    assert ll[-1] > ll[0]
    normal = merged.model.types == 1
    # the re-estimated probabilities sum to 1 up to quantisation (2^-9 nats per piece)
    assert np.exp(merged.model.scores[normal]).sum() == pytest.approx(1.0, rel=5e-3)


def test_monolingual_export_reproduces_sentencepiece(setup):
    """A trained sentencepiece model, read into UnigramModel: the reference Viterbi,
    the exported tokenizer.json and the re-written .model give sentencepiece's own ids."""
    corpus, models, _, flores = setup
    sp = spm.SentencePieceProcessor(model_proto=models["npi_Deva"].sentencepiece_proto())
    mt = ModularTokenizer(models["npi_Deva"].tokenizer_json(), {"npi_Deva": list(range(len(models["npi_Deva"])))})
    lines = flores["npi_Deva"] + flores["eng_Latn"][:50]
    want = models["npi_Deva"].encode(lines)
    assert want == [sp.encode(s) for s in lines]
    assert want == mt.encode_batch(lines)


@pytest.mark.parametrize("langs", [["eng_Latn"], ["npi_Deva"], ["rus_Cyrl"], ["eng_Latn", "rus_Cyrl"], None])
def test_subtokenizers_match_reference_on_flores(setup, tmp_path, langs):
    """Every language (and a union, and the full model): HF restricted tokenizer.json
    and the sentencepiece .model (written to disk, UNUSED pieces) give exactly the
    reference restricted-Viterbi ids on FLORES devtest lines of every language, and
    decode them losslessly."""
    _, _, merged, flores = setup
    m = merged.model
    ids = merged.subvocab(langs) if langs else np.arange(len(m))
    mt = merged.modular()
    path = m.save_sentencepiece(tmp_path / "sub.model", ids)
    sp = spm.SentencePieceProcessor(model_file=str(path))
    for lang, lines in flores.items():
        want = m.encode(lines, ids)
        assert want == (mt.encode_batch(lines, langs) if langs else mt.encode_batch(lines)), lang
        assert want == [sp.encode(s) for s in lines], lang
        assert all(np.isin(seq, ids).all() for seq in want)
        for s, seq in zip(lines[:100], want):
            assert mt.decode(seq) == s
            assert sp.decode(seq) == s
            assert m.decode(seq) == s


def test_own_subtokenizer_compresses_like_monolingual(setup):
    """Sanity (the full NSL table is in the bench/notebook): each language's
    subtokenizer is within 5% of its monolingual model on its FLORES lines."""
    _, models, merged, flores = setup
    for lang in LANGS:
        sub = sum(map(len, merged.model.encode(flores[lang], merged.lang_to_ids[lang])))
        mono = sum(map(len, models[lang].encode(flores[lang])))
        assert 0.95 < sub / mono < 1.05, (lang, sub / mono)


def test_frequency_extraction_keeps_the_most_frequent_pieces(setup):
    corpus, _, merged, flores = setup
    m = merged.model
    lines = corpus["rus_Cyrl"]
    ids = frequency_subvocab(m, lines, 600)
    assert len(ids) == 600 and set(range(259)) <= set(ids.tolist())
    freq = piece_frequencies(m, lines)
    kept = np.intersect1d(ids, m.normal_ids)
    dropped = np.setdiff1d(m.normal_ids, ids)
    assert freq[kept].min() >= freq[dropped].max()
    sub = RestrictedUnigram(m, ids)
    enc = sub.encode_batch(flores["rus_Cyrl"])
    assert all(np.isin(seq, ids).all() for seq in enc)
    assert [sub.decode(seq) for seq in enc] == flores["rus_Cyrl"]
    # the base tokenizer bounds it: fewer pieces, more tokens
    full = sum(map(len, m.encode(flores["rus_Cyrl"])))
    assert sum(map(len, enc)) > full
    with pytest.raises(BudgetError, match="uses only"):
        frequency_subvocab(m, lines, len(m))
    with pytest.raises(BudgetError, match="no normal piece"):
        frequency_subvocab(m, lines, 259)


def test_em_starts_uniform_as_algorithm_1_and_both_starts_agree(setup):
    """Algorithm 1 line 3: p(v) = 1/|V| is the default start; the averaged monolingual start is an
    option, and at the default iteration count the two reach the same model: log-likelihoods within
    0.1% and FLORES token counts of every subtokenizer within 0.5%."""
    corpus, models, merged, flores = setup
    start, _ = union(models)
    normal = start.types == 1
    assert np.allclose(start.scores[normal], -np.log(normal.sum()), rtol=0, atol=1e-12)
    averaged, _ = union(models, init="average")
    assert not np.allclose(averaged.scores[normal], start.scores[normal])
    uni, avg = merge_unigram(models, corpus), merge_unigram(models, corpus, init="average")
    assert uni.loglik[0] < avg.loglik[0]  # the uniform start is the colder one
    assert abs(uni.loglik[-1] - avg.loglik[-1]) < 1e-3 * abs(avg.loglik[-1])
    mu, ma = uni.modular(), avg.modular()
    for lang in LANGS:
        nu = sum(map(len, mu.subtokenizer([lang]).encode_batch(flores[lang])))
        na = sum(map(len, ma.subtokenizer([lang]).encode_batch(flores[lang])))
        assert abs(nu - na) <= 0.005 * na, (lang, nu, na)
    with pytest.raises(DataError, match="unknown EM initialisation 'zero'"):
        union(models, init="zero")


def test_word_units_are_exact(setup):
    """Cutting lines into words changes nothing: the EM log-likelihood over word
    units equals the one over whole lines."""
    corpus, _, merged, _ = setup
    from modtok.unigram.merge import em

    assert word_safe(merged.model)
    lines = corpus["eng_Latn"][:200]
    by_word, by_line = count_units(lines, True), count_units(lines, False)
    m = merged.model
    a = em(m, list(by_word), list(by_word.values()), max_iter=0)
    b = em(m, list(by_line), list(by_line.values()), max_iter=0)
    assert a.loglik[0] == pytest.approx(b.loglik[0], rel=1e-12)


def test_bad_input_errors():
    pieces = ["<unk>", "a", "b"]
    with pytest.raises(MissingByteFallbackError, match="byte pieces are missing"):
        UnigramModel(pieces, [0, -1, -1], [2, 1, 1])
    with pytest.raises(MissingByteFallbackError, match="byte fallback"):
        train_unigram(["abc abd abe"] * 30, 280, byte_fallback=False)
    with pytest.raises(DataError, match="empty"):
        train_unigram(["  ", ""], 300)
    with pytest.raises(BudgetError, match="distinct substrings"):
        train_unigram(["ab ab"], 300)
    with pytest.raises(BudgetError, match="no normal piece"):
        train_unigram(["ab ab"], 259)
    corpus = {"x": ["aaa ab abab"] * 20, "y": ["bbb ba baba"] * 20}
    models = {lang: train_unigram(lines, 266) for lang, lines in corpus.items()}
    with pytest.raises(DataError, match="'y' has an empty corpus"):
        merge_unigram(models, {"x": corpus["x"], "y": [" "]})
    with pytest.raises(UnknownLanguageError):
        merge_unigram(models, {"x": corpus["x"]})
    with pytest.raises(UnknownLanguageError):
        merge_unigram({"x": models["x"]}, corpus)
    with pytest.raises(DataError):
        union({})


_TOY = None


def _toy():
    """A small merged model over two scripts (built once; hypothesis calls often)."""
    global _TOY
    if _TOY is None:
        corpus = {"x": ["the cat sat on the mat, 12 times."] * 20, "y": ["кот сидел на ковре 3 раза"] * 20}
        models = {lang: train_unigram(lines, 300) for lang, lines in corpus.items()}
        merged = merge_unigram(models, corpus, max_iter=2)
        _TOY = (merged, merged.modular(), merged.model.sentencepiece(merged.subvocab("x")))
    return _TOY


@given(st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters=SPACE), max_size=40))
def test_roundtrip_any_unicode(text):
    """decode(encode(s)) == s for the full model and a subtokenizer (HF and
    sentencepiece exports), and HF equals the reference for text without '<'
    (HF matches the literal text of control/byte pieces such as '<s>', '<0x41>')."""
    merged, mt, sp = _toy()
    ref = merged.model.encode(text, merged.subvocab("x"))
    assert mt.decode(ref) == text and sp.decode(ref) == text
    assert sp.encode(text) == ref
    if "<" not in text:
        assert mt.encode(text, ["x"]) == ref
        assert mt.encode(text) == merged.model.encode(text)
        assert mt.decode(mt.encode(text)) == text
