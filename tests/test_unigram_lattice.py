"""Unigram lattice: compiled Viterbi / forward-backward vs the pure-Python
reference, vs brute-force enumeration of all segmentations, vs HF tokenizers and
sentencepiece on random models (including score ties), and EM monotonicity."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from modtok.artifacts.modular import ModularTokenizer
from modtok.errors import TokenizerFileError
from modtok.unigram import lattice, reference
from modtok.unigram.merge import BASE_PIECES, BASE_TYPES, em
from modtok.unigram.model import SPACE, UnigramModel, normalize, quantize_scores

LETTERS = "ab" + SPACE + "c"
UNKNOWN = "é漢😀"  # 2-, 3- and 4-byte characters that no random model has


def random_model(rng: random.Random, n_pieces: int = 12, tie_scores: bool = True,
                 singles: bool = False) -> UnigramModel:
    """Random pieces over LETTERS (all single letters too if ``singles``); scores
    from {-1,-2,-3,-4} (many exact ties) or continuous, quantised like exported models."""
    pieces: list[str] = list(LETTERS) if singles else []
    while len(pieces) < n_pieces:
        p = "".join(rng.choice(LETTERS) for _ in range(rng.randint(1, 4)))
        if p not in pieces:
            pieces.append(p)
    if tie_scores:
        scores = [float(rng.choice([-1, -2, -3, -4])) for _ in pieces]
    else:
        scores = quantize_scores([rng.uniform(-9, -0.5) for _ in pieces]).tolist()
    return UnigramModel(BASE_PIECES + pieces, [0.0] * 259 + scores, BASE_TYPES + [1] * len(pieces))


def random_text(rng: random.Random, max_len: int = 12, p_unknown: float = 0.3) -> str:
    return "".join(rng.choice(UNKNOWN) if rng.random() < p_unknown else rng.choice("ab c")
                   for _ in range(rng.randint(0, max_len)))


def reference_ids(model: UnigramModel, text: str, allowed: np.ndarray) -> list[int]:
    """Reference Viterbi on the normalised text, unknown characters as UTF-8 byte ids."""
    vocab = {model.pieces[i]: model.scores[i] for i in np.flatnonzero(allowed)}
    norm = normalize(text)
    ids, pos = [], 0
    for piece in reference.viterbi(norm, vocab, model.unk_score(allowed)):
        if piece is None:
            ids += [int(model.byte_ids[b]) for b in norm[pos].encode("utf-8")]
            pos += 1
        else:
            ids.append(model.index[piece])
            pos += len(piece)
    return ids


def test_hand_derived_viterbi_and_posteriors():
    """'▁ab' with ▁ab=-1.2, ▁=-1, a=-1, b=-1.5, ab=-1.0: paths ▁ab (-1.2), ▁+ab (-2.0),
    ▁+a+b (-3.5): Viterbi picks ▁ab; P(▁ab) = e^-1.2 / (e^-1.2 + e^-2 + e^-3.5)."""
    pieces = [SPACE + "ab", SPACE, "a", "b", "ab"]
    scores = [-1.2, -1.0, -1.0, -1.5, -1.0]
    m = UnigramModel(BASE_PIECES + pieces, [0.0] * 259 + scores, BASE_TYPES + [1] * 5)
    assert m.encode("ab") == [259]
    z = math.exp(-1.2) + math.exp(-2.0) + math.exp(-3.5)
    cps, off = lattice.encode_units([SPACE + "ab"])
    counts, unk, ll = lattice.expected_counts(cps, off, [2.0], m.trie, m.scores, -50.0)
    assert counts[259] == pytest.approx(2 * math.exp(-1.2) / z)
    assert counts[260] == pytest.approx(2 * (math.exp(-2.0) + math.exp(-3.5)) / z)
    assert counts[263] == pytest.approx(2 * math.exp(-2.0) / z)  # 'ab'
    assert ll == pytest.approx(2 * math.log(z))
    assert unk == 0.0


def test_byte_fallback_emits_utf8_bytes_and_decodes():
    """No piece for é (C3 A9), 漢 (E6 BC A2), 😀 (F0 9F 98 80): one unknown edge each,
    emitted as its bytes; unk score = min score - 10 so 'x' prefers the piece."""
    m = UnigramModel(BASE_PIECES + [SPACE, "x"], [0.0] * 259 + [-1.0, -2.0], BASE_TYPES + [1, 1])
    ids = m.encode("x é漢😀")
    byte = lambda b: 3 + b  # noqa: E731  (base layout: bytes after <unk>, <s>, </s>)
    assert ids == [259, 260, 259, byte(0xC3), byte(0xA9), byte(0xE6), byte(0xBC), byte(0xA2),
                   byte(0xF0), byte(0x9F), byte(0x98), byte(0x80)]
    assert m.decode(ids) == "x é漢😀"
    assert m.unk_score() == -12.0


def test_tie_goes_to_the_earliest_start_like_hf_and_sentencepiece():
    """'▁ab': ▁a+b and ▁+ab both score -2; the end position 3 is first reached from
    start 1 ('ab' after '▁', relaxed before start 2's 'b'), so ▁+ab wins."""
    pieces = [SPACE, SPACE + "a", "a", "b", "ab"]
    m = UnigramModel(BASE_PIECES + pieces, [0.0] * 259 + [-1.0, -1.0, -3.0, -1.0, -1.0], BASE_TYPES + [1] * 5)
    want = [259, 263]
    assert m.encode("ab") == want
    assert ModularTokenizer(m.tokenizer_json(), {"x": list(range(len(m)))}).encode("ab") == want
    assert m.sentencepiece().encode("ab") == want


@pytest.mark.parametrize("seed", range(4))
def test_viterbi_fast_equals_reference_hf_and_sentencepiece(seed):
    """Random models (with exact score ties), random masks, random texts with
    unknown characters: the numba Viterbi, the reference, HF tokenizers (restricted
    tokenizer.json via ModularTokenizer) and sentencepiece (.model, UNUSED pieces)
    give identical ids, and both exports decode losslessly."""
    rng = random.Random(seed)
    for trial in range(6):
        m = random_model(rng, tie_scores=trial % 2 == 0)
        keep = [i for i in m.normal_ids.tolist() if rng.random() < 0.7]
        if m.index.get(SPACE) is not None:
            keep.append(m.index[SPACE])  # a sub-vocabulary without '▁' cannot decode spaces in sentencepiece
        allowed = m.mask(keep)
        ids = np.union1d(m.base_ids, keep)
        sub = ModularTokenizer(m.tokenizer_json(), {"x": ids.tolist()}).subtokenizer(["x"])
        sp = m.sentencepiece(ids)
        texts = [random_text(rng) for _ in range(40)]
        fast = m.encode(texts, ids)
        assert fast == sub.encode_batch(texts)
        for text, got in zip(texts, fast):
            assert got == reference_ids(m, text, allowed), text
            assert got == sp.encode(text), text
            assert sub.decode(got) == text
            if SPACE in [m.pieces[i] for i in keep]:
                assert sp.decode(got) == text


@pytest.mark.parametrize("seed", range(3))
def test_expected_counts_fast_equals_reference(seed):
    rng = random.Random(100 + seed)
    m = random_model(rng, n_pieces=15, tie_scores=False)
    vocab = {m.pieces[i]: m.scores[i] for i in m.normal_ids}
    units = [normalize(random_text(rng, 20)) for _ in range(30)]
    weights = [rng.randint(1, 5) for _ in units]
    unk_score = m.unk_score()
    cps, off = lattice.encode_units(units)
    counts, unk, ll = lattice.expected_counts(cps, off, weights, m.trie, m.scores, unk_score)
    want = np.zeros(len(m))
    want_unk = want_ll = 0.0
    for u, w in zip(units, weights):
        if not u:
            continue
        c, logz = reference.expected_counts(u, vocab, unk_score)
        for piece, x in c.items():
            if piece is None:
                want_unk += w * x
            else:
                want[m.index[piece]] += w * x
        want_ll += w * logz
    np.testing.assert_allclose(counts, want, rtol=1e-10, atol=1e-12)
    assert unk == pytest.approx(want_unk, rel=1e-10)
    assert ll == pytest.approx(want_ll, rel=1e-12)


@pytest.mark.parametrize("case", ["long units", "a tiny probability"])
def test_expected_counts_out_of_double_range_equals_reference(case):
    """The E-step runs in probability space with power-of-two rescaling (lattice section
    comment): units of hundreds of characters, whose Z underflows a double (rescaled),
    and a piece of probability e^-400 < P_MIN (the unit is scored in log space) give the
    reference's counts and log Z."""
    rng = random.Random(7)
    m = random_model(rng, n_pieces=15, tie_scores=False, singles=True)
    if case == "a tiny probability":
        scores = m.scores.copy()
        scores[m.index["a"]] = -400.0
        m = UnigramModel(m.pieces, scores, m.types)
        units = [normalize(random_text(rng, 20, p_unknown=0.1)) for _ in range(20)]
    else:
        units = [normalize(random_text(rng, 800, p_unknown=0.1)) for _ in range(6)]
    units = [u for u in units if u]
    vocab = {m.pieces[i]: m.scores[i] for i in m.normal_ids}
    unk_score = m.unk_score()
    cps, off = lattice.encode_units(units)
    counts, unk, ll = lattice.expected_counts(cps, off, [1.0] * len(units), m.trie, m.scores, unk_score)
    want = np.zeros(len(m))
    want_unk = want_ll = 0.0
    for u in units:
        c, logz = reference.expected_counts(u, vocab, unk_score)
        for piece, x in c.items():
            if piece is None:
                want_unk += x
            else:
                want[m.index[piece]] += x
        want_ll += logz
    if case == "long units":
        assert want_ll / len(units) < -800  # Z of an average unit < e^-800: no double holds it
    np.testing.assert_allclose(counts, want, rtol=1e-10, atol=1e-12)
    assert unk == pytest.approx(want_unk, rel=1e-10)
    assert ll == pytest.approx(want_ll, rel=1e-12)


@pytest.mark.parametrize("seed", range(3))
def test_e_step_equals_brute_force_enumeration(seed):
    """E[c(v)] = Σ_seg P(seg) c_v(seg) with P(seg) = exp(score(seg)) / Σ exp(score),
    enumerating every segmentation (unknown edges included) of short strings."""
    rng = random.Random(200 + seed)
    m = random_model(rng, n_pieces=14, tie_scores=False, singles=True)
    vocab = {m.pieces[i]: m.scores[i] for i in m.normal_ids}
    unk_score = m.unk_score()
    most = 0
    for _ in range(20):
        unit = normalize(random_text(rng, 9, p_unknown=0.1))
        if not unit:
            continue
        segs = reference.all_segmentations(unit, vocab, unk_score)
        z = sum(math.exp(s) for _, s in segs)
        want = np.zeros(len(m))
        want_unk = 0.0
        for pieces, s in segs:
            for p in pieces:
                if p is None:
                    want_unk += math.exp(s) / z
                else:
                    want[m.index[p]] += math.exp(s) / z
        cps, off = lattice.encode_units([unit])
        counts, unk, ll = lattice.expected_counts(cps, off, [1.0], m.trie, m.scores, unk_score)
        np.testing.assert_allclose(counts, want, rtol=1e-9, atol=1e-12)
        assert unk == pytest.approx(want_unk, rel=1e-9, abs=1e-12)
        assert ll == pytest.approx(math.log(z), rel=1e-12)
        most = max(most, len(segs))
    assert most >= 4  # the test exercises real lattices, not single paths


@pytest.mark.parametrize("seed", range(3))
def test_em_log_likelihood_never_decreases(seed):
    rng = random.Random(300 + seed)
    m = random_model(rng, n_pieces=20, tie_scores=False)
    units = sorted({normalize(random_text(rng, 15)) for _ in range(60)} - {""})
    weights = [rng.randint(1, 9) for _ in units]
    res = em(m, units, weights, max_iter=12, tol=0.0)
    assert len(res.loglik) == 13
    diffs = np.diff(res.loglik)
    assert (diffs >= -1e-9 * abs(res.loglik[0])).all(), res.loglik
    assert res.loglik[-1] > res.loglik[0]  # and it does improve on a random start
    normal = m.types == 1
    assert np.exp(res.logp[normal]).sum() == pytest.approx(1.0)


def test_trie_refuses_an_empty_or_repeated_piece():
    with pytest.raises(TokenizerFileError, match="piece 1 is the empty string"):
        lattice.Trie(["a", ""], [0, 1])
    with pytest.raises(TokenizerFileError, match="pieces 0 and 2 are the same string 'ab'"):
        lattice.Trie(["ab", "b", "ab"], [0, 1, 2])
