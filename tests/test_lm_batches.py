"""modtok.lm.batches: monolingual packed batches tokenized with the sampled subtokenizer."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from lm_helpers import TOY_CORPUS, one_torch_thread, toy_tokenizer  # noqa: F401 (autouse fixture)

from modtok.errors import DataError, UnknownLanguageError
from modtok.lm.batches import BatchSource, active_ids, boundary_id, lm_vocab_size, vocab_fingerprint
from modtok.lm.sampling import SubtokenizerSampler, default_mixture, mono, samp_full, samp_sub


@pytest.fixture(scope="module")
def tok():
    return toy_tokenizer()


def _source(tok, scheme, B=3, T=24, seed=0):
    sampler = SubtokenizerSampler(scheme, default_mixture(TOY_CORPUS), seed)
    return BatchSource(tok, TOY_CORPUS, sampler, B, T, seed=seed)


def test_rows_are_shifted_packed_lines_tokenized_with_the_drawn_subtokenizer(tok):
    """Each row = [DOC] line_i [DOC] line_i+1 ... cut at T+1; the lines between boundaries are the
    batch language's corpus lines encoded with the subtokenizer of the drawn languages."""
    src = _source(tok, samp_sub(1, 0.5))
    doc = boundary_id(tok)
    for step in range(6):
        b = src.batch(step)
        assert b.idx.shape == b.targets.shape == (3, 24)
        assert torch.equal(b.idx[:, 1:], b.targets[:, :-1])
        assert (b.idx[:, 0] == doc).all()
        assert torch.equal(b.active_ids, torch.from_numpy(active_ids(tok, b.langs)))
        assert torch.isin(b.targets, b.active_ids).all()
        lines = TOY_CORPUS[b.lang]
        for row in b.idx.tolist():
            cuts = [i for i, t in enumerate(row) if t == doc] + [len(row)]
            first = cuts[1] if len(cuts) > 2 else None
            if first is not None:  # one complete line: its encoding under the drawn languages
                segment = row[1:first]
                assert segment in [tok.encode(s, b.langs) for s in lines]


def test_mono_and_full_active_sets(tok):
    m = _source(tok, mono()).batch(0)
    assert m.langs == (m.lang,)
    assert m.active_ids.tolist() == tok.ids([m.lang]).tolist() + [tok.vocab_size]
    f = _source(tok, samp_full(1.0)).batch(0)
    assert f.langs is None and f.active_ids.tolist() == list(range(lm_vocab_size(tok)))


def test_byte_shares_add_up_to_the_raw_utf8_bytes():
    """One-line corpus "le chat" (7 bytes, n tokens): a row of exactly 3 copies holds
    3 * (n + 1) targets (tokens + boundary) covering 3 * (7 + 1) bytes (the +1 is the newline)."""
    tok = toy_tokenizer()
    line = "le chat mangé"  # é is 2 bytes: 14 UTF-8 bytes
    n = len(tok.encode(line, ["fra_Latn"]))
    sampler = SubtokenizerSampler(mono(), {"fra_Latn": 1.0}, 0)
    src = BatchSource(tok, {"fra_Latn": [line]}, sampler, batch_size=2, seq_len=3 * (n + 1))
    b = src.batch(5)
    assert b.n_bytes == pytest.approx(2 * 3 * (14 + 1))
    assert (b.targets == boundary_id(tok)).sum() == 2 * 3


def test_batches_are_deterministic_and_prefetch_gives_the_same_stream(tok):
    src = _source(tok, samp_sub(2, 0.5), seed=3)
    direct = [src.batch(s) for s in range(2, 9)]
    streamed = list(src.batches(2, 9, prefetch=3))
    assert [b.step for b in streamed] == list(range(2, 9))
    for a, b in zip(direct, streamed):
        assert torch.equal(a.idx, b.idx) and a.langs == b.langs and a.n_bytes == b.n_bytes
    # ranks of a data-parallel run: same language and subtokenizer, other rows
    r0, r1 = src.batch(4, rank=0), src.batch(4, rank=1)
    assert r0.langs == r1.langs and not torch.equal(r0.idx, r1.idx)
    assert src.state_dict() == _source(tok, samp_sub(2, 0.5), seed=3).state_dict()


def test_language_without_data_or_unknown_language(tok):
    sampler = SubtokenizerSampler(mono(), {"eng_Latn": 0.5, "deu_Latn": 0.5}, 0)
    with pytest.raises(DataError, match="'deu_Latn' is in the training mixture but has no training text"):
        BatchSource(tok, {"eng_Latn": TOY_CORPUS["eng_Latn"], "deu_Latn": ["  ", ""]}, sampler, 2, 8)
    with pytest.raises(UnknownLanguageError, match="xxx_Latn"):
        BatchSource(tok, TOY_CORPUS, SubtokenizerSampler(mono(), {"xxx_Latn": 1.0}, 0), 2, 8)


def test_vocab_fingerprint_tells_vocabularies_apart(tok):
    other = toy_tokenizer(vocab_size=400)
    assert vocab_fingerprint(tok) == vocab_fingerprint(toy_tokenizer())
    assert vocab_fingerprint(tok) != vocab_fingerprint(other)
    assert np.all(np.diff(active_ids(tok, ("deu_Latn", "eng_Latn"))) > 0)
