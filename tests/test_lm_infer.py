"""modtok.lm.infer: evaluation settings, generation, EN|Lang, compact export, fidelity."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from lm_helpers import TOY_CORPUS, one_torch_thread, toy_tokenizer  # noqa: F401 (autouse fixture)

from modtok.errors import (
    ActiveSetError,
    CheckpointError,
    ModtokError,
    UnknownLanguageError,
    VocabularyMismatchError,
)
from modtok.lm.batches import active_ids, boundary_id, lm_vocab_size
from modtok.lm.infer import (
    EXTRA_SETTINGS,
    SETTINGS,
    CompactLM,
    continue_text,
    evaluate,
    evaluate_settings,
    export_compact,
    fidelity,
    foreign_token_share,
    generate,
    setting_langs,
    slice_vocab,
)
from modtok.lm.model import LM, KVCache, config


@pytest.fixture(scope="module")
def tok():
    return toy_tokenizer()


@pytest.fixture(scope="module")
def model(tok):
    torch.manual_seed(0)
    return LM(config("tiny", lm_vocab_size(tok), max_seq_len=16, output_bias=True)).eval()


def test_zero_output_matrix_gives_log_k_per_token_in_every_setting(tok):
    """Oracle: with an all-zero output layer every prediction is uniform over the K output ids,
    so nats = (tokens of the lines + 1 boundary per line) * ln K, bytes = UTF-8 bytes + 1 per line."""
    m = LM(config("tiny", lm_vocab_size(tok), max_seq_len=8))
    torch.nn.init.zeros_(m.out.weight)
    lines = TOY_CORPUS["fra_Latn"][:3]  # long enough to need several windows of 8
    n_bytes = sum(len(s.encode()) + 1 for s in lines)
    for enc, out in [(["fra_Latn"], ["fra_Latn"]), (None, None), (["fra_Latn"], None), (["fra_Latn"], ["eng_Latn", "fra_Latn"])]:
        n_tok = sum(len(tok.encode(s, enc)) + 1 for s in lines)
        k = len(active_ids(tok, out))
        r = evaluate(m, tok, lines, enc, out, batch_size=2)
        assert (r.tokens, r.bytes) == (n_tok, n_bytes)
        assert r.nats == pytest.approx(n_tok * math.log(k), rel=1e-6)
        assert r.bpb == pytest.approx(n_tok * math.log2(k) / n_bytes, rel=1e-6)


def test_windowed_evaluation_equals_one_pass_when_the_line_fits(tok, model):
    """A line scored in one window (max_seq_len 16 >= its length) equals the direct sum of
    -log softmax over the active ids along the sequence."""
    line = "le chat"
    ids = [boundary_id(tok)] + tok.encode(line, ["fra_Latn"]) + [boundary_id(tok)]
    assert len(ids) <= 17
    active = torch.from_numpy(active_ids(tok, ["fra_Latn"]))
    with torch.no_grad():
        logits = model.logits(torch.tensor([ids[:-1]]), active)[0]
    local = torch.searchsorted(active, torch.tensor(ids[1:]))
    oracle = -torch.log_softmax(logits, -1)[torch.arange(len(local)), local].sum()
    r = evaluate(model, tok, [line], ["fra_Latn"], ["fra_Latn"])
    assert r.nats == pytest.approx(float(oracle), rel=1e-5)


def test_full_lang_is_full_tokenization_with_the_lang_softmax(tok, model):
    """Paper, Tab. 4: "inputs tokenized with Full, predictions restricted to Lang vocabulary". Oracle by
    hand: encode with the full tokenizer, softmax over deu ids + boundary; targets outside are counted
    and their bytes (the line's bytes + 1 spread over its targets) leave the denominator."""
    assert setting_langs("Full-Lang", "deu_Latn") == (None, ["deu_Latn"])
    line = "die katze sitzt on the mat and looked"  # English words: full tokens outside deu's vocabulary
    ids = [boundary_id(tok)] + tok.encode(line) + [boundary_id(tok)]
    active = torch.from_numpy(active_ids(tok, ["deu_Latn"]))
    with torch.no_grad():
        logp = torch.log_softmax(model.logits(torch.tensor([ids[:-1]]), active)[0], -1)  # (T, K)
    nats, out = 0.0, 0
    for pos, t in enumerate(ids[1:]):
        if t in active.tolist():
            nats -= float(logp[pos, active.tolist().index(t)])
        else:
            out += 1
    assert out > 0
    r = evaluate(model, tok, [line], None, ["deu_Latn"], uncovered="count")
    share = (len(line.encode()) + 1) / (len(ids) - 1)
    assert r.tokens == len(ids) - 1 and r.uncovered_tokens == out
    assert r.uncovered_bytes == pytest.approx(out * share) and r.nats == pytest.approx(nats, rel=1e-5)
    assert r.bpb == pytest.approx(nats / math.log(2) / (len(line.encode()) + 1 - out * share), rel=1e-5)
    assert r.coverage == pytest.approx(1 - out / (len(ids) - 1))
    full = evaluate(model, tok, [line])
    assert full.tokens == r.tokens and r.nats < full.nats  # fewer targets, each under a smaller softmax


def test_settings_table_and_bad_combinations(tok, model):
    rows = evaluate_settings(model, tok, {"deu_Latn": TOY_CORPUS["deu_Latn"][:2]},
                             settings=SETTINGS + EXTRA_SETTINGS)
    assert [r["setting"] for r in rows] == ["Lang", "Full", "Full-Lang", "EN+Lang", "Lang (full softmax)"]
    by = {r["setting"]: r for r in rows}
    # Full-Lang: the Full tokenization, each target's softmax restricted to deu: never more nats than Full
    assert by["Full-Lang"]["tokens"] == by["Full"]["tokens"] and by["Full-Lang"]["nats"] <= by["Full"]["nats"]
    assert all(r["coverage"] == 1.0 for r in rows if r["setting"] != "Full-Lang")
    # the old "Full-Lang": same tokens as Lang, bigger softmax, so it can only cost more
    old = by["Lang (full softmax)"]
    assert old["tokens"] == by["Lang"]["tokens"] and old["nats"] > by["Lang"]["nats"]
    with pytest.raises(ActiveSetError, match="outside the output vocabulary of deu_Latn .*uncovered='count'"):
        evaluate(model, tok, ["hallo"], None, ["deu_Latn"])
    with pytest.raises(ActiveSetError, match="unknown evaluation setting"):
        setting_langs("Lang-Full", "deu_Latn")
    with pytest.raises(ActiveSetError, match="empty union"):
        evaluate(model, tok, ["hallo"], [], [])
    with pytest.raises(UnknownLanguageError):
        evaluate(model, tok, ["hallo"], ["xxx_Latn"], ["xxx_Latn"])
    with pytest.raises(VocabularyMismatchError, match="does not fit the tokenizer"):
        evaluate(LM(config("tiny", 50)), tok, ["hallo"])


def test_generation_greedy_topk_and_en_lang(tok, model):
    prompt = [boundary_id(tok)] + tok.encode("the cat", ["eng_Latn"])
    active = torch.from_numpy(active_ids(tok, ["deu_Latn"]))
    greedy = generate(model, prompt, active, 12)
    # greedy oracle: argmax of the restricted logits, step by step
    ids = list(prompt)
    for t in greedy:
        j = int(model.logits(torch.tensor([ids[-16:]]), active)[0, -1].argmax())
        assert t == int(active[j])
        ids.append(t)
    assert set(greedy) <= set(active.tolist())
    assert greedy == generate(model, prompt, active, 12, kv_cache=False)
    a = generate(model, prompt, active, 12, top_k=5, seed=1)
    assert a == generate(model, prompt, active, 12, top_k=5, seed=1) and set(a) <= set(active.tolist())
    assert any(generate(model, prompt, active, 12, top_k=None, seed=s) != a for s in range(2, 5))
    # EN | Lang: English prompt, German continuation
    text, new = continue_text(model, tok, "the cat", ["eng_Latn"], ["deu_Latn"], max_new_tokens=10)
    assert np.isin([t for t in new if t != boundary_id(tok)], tok.ids(["deu_Latn"])).all()
    assert text == tok.decode([t for t in new if t != boundary_id(tok)])


def test_kv_cache_greedy_equals_uncached_greedy_also_past_the_context(tok, model):
    """The KV cache is only a speed-up: greedy and seeded top-k outputs are identical with and without it,
    including after the context (16 positions here) fills and the window slides."""
    prompt = [boundary_id(tok)] + tok.encode("the cat sat", ["eng_Latn"])
    for langs in (["eng_Latn"], None):
        active = torch.from_numpy(active_ids(tok, langs))
        cached = generate(model, prompt, active, 30)
        assert len(cached) == 30 and len(prompt) + 30 > model.cfg.max_seq_len
        assert cached == generate(model, prompt, active, 30, kv_cache=False)
        sampled = generate(model, prompt, active, 20, top_k=10, seed=4)
        assert sampled == generate(model, prompt, active, 20, top_k=10, seed=4, kv_cache=False)
    # the cached logits themselves: prefix in one call, then one position at a time
    ids = torch.tensor([prompt + [5, 9, 11]])
    cache = KVCache(model.cfg.n_layers)
    with torch.no_grad():
        parts = [model.logits(ids[:, :4], None, cache)] + [model.logits(ids[:, t : t + 1], None, cache)
                                                            for t in range(4, ids.shape[1])]
        assert torch.allclose(torch.cat(parts, 1), model.logits(ids), atol=1e-5)


def test_compact_model_logits_equal_restricted_logits_and_survive_a_round_trip(tok, model, tmp_path):
    langs = ["eng_Latn", "fra_Latn"]
    compact = export_compact(model, tok, langs, tmp_path / "compact")
    rows = active_ids(tok, langs)
    assert compact.model.cfg.vocab_size == len(rows) < model.cfg.vocab_size
    assert compact.model.num_params() < model.num_params()
    text = "le petit chat regarde the window"
    local = compact.tokenizer.encode(text)
    sub = tok.subtokenizer(langs)
    assert local == sub.to_local(sub.encode(text)).tolist()  # same segmentation, local ids
    doc_local, doc_global = boundary_id(compact.tokenizer), boundary_id(tok)
    assert rows[doc_local] == doc_global
    glob = torch.tensor([[doc_global] + sub.encode(text)])
    full = model.logits(glob, torch.from_numpy(rows))
    small = compact.model.logits(torch.tensor([[doc_local] + local]))
    assert torch.allclose(full, small, atol=1e-6)
    loaded = CompactLM.load(tmp_path / "compact")
    assert loaded.langs == tuple(langs) and np.array_equal(loaded.global_ids, rows)
    assert torch.allclose(loaded.model.logits(torch.tensor([[doc_local] + local])), small)
    # evaluating the compact model with its own (full) tokenizer = the full model under the union
    r_small = evaluate(compact.model, compact.tokenizer, TOY_CORPUS["eng_Latn"][:2])
    r_full = evaluate(model, tok, TOY_CORPUS["eng_Latn"][:2], langs, langs)
    assert r_small.nats == pytest.approx(r_full.nats, rel=1e-5) and r_small.tokens == r_full.tokens
    with pytest.raises(ActiveSetError, match="empty union"):
        export_compact(model, tok, [])
    with pytest.raises(CheckpointError, match="no model.pt"):
        CompactLM.load(tmp_path)


def test_slice_vocab_keeps_the_blocks():
    torch.manual_seed(3)
    m = LM(config("tiny", 30))
    s = slice_vocab(m, [2, 5, 29])
    x = torch.tensor([[0, 1, 2]])
    assert torch.allclose(m.logits(torch.tensor([[2, 5, 29]]), torch.tensor([2, 5, 29])), s.logits(x), atol=1e-6)


def test_foreign_token_share_and_fidelity(tok, model):
    eng_only = np.setdiff1d(tok.ids(["eng_Latn"]), tok.ids(["deu_Latn"]))
    deu_only = np.setdiff1d(tok.ids(["deu_Latn"]), tok.ids(["eng_Latn"]))
    shared = np.intersect1d(tok.ids(["eng_Latn"]), tok.ids(["deu_Latn"]))
    ids = [int(eng_only[0]), int(shared[0]), int(deu_only[0]), int(deu_only[1]), boundary_id(tok)]
    assert foreign_token_share(ids, tok, "eng_Latn") == pytest.approx(2 / 4)
    assert foreign_token_share(ids, tok, "deu_Latn") == pytest.approx(1 / 4)
    out = fidelity(model, tok, {"eng_Latn": ["the cat"], "deu_Latn": ["die katze"]}, max_new_tokens=8)
    _, new = continue_text(model, tok, "die katze", None, None, max_new_tokens=8)
    assert out["deu_Latn"] == foreign_token_share(new, tok, "deu_Latn")
    assert isinstance(ActiveSetError("x"), ModtokError)
