"""Tied input and output embeddings (``LMConfig.tie_embeddings``): one matrix, kept one.

Oracles: the output matrix IS the embedding's parameter (same object), so a training
step that moves one moves the other by the same amount; the parameter count has one
vocabulary matrix, not two; a checkpoint reloads tied; growing the vocabulary for an
extension keeps the model tied and the original ids' logits unchanged; the host store
(separate rows by design) refuses a tied model rather than untie it silently.
"""

from __future__ import annotations

import pytest
import torch

from modtok.adapt import extend
from modtok.adapt.hf_model import grow_lm
from modtok.bpe.export import save_tokenizer_json
from modtok.bpe.standard import train_from_lines
from modtok.errors import ModelConfigError
from modtok.lm.batches import lm_vocab_size
from modtok.lm.model import LM, LMConfig, config
from modtok.lm.stream import StreamSource, lm_tokenizer
from modtok.lm.train import CHECKPOINT, TrainConfig, load_checkpoint, train

LINES = ["the small cat sat on the mat", "नेपालको सरकार", "सरकार नेपालको", "we walked to the market"] * 10


def tied(vocab: int, **kw) -> LMConfig:
    return config("tiny", vocab, max_seq_len=32, n_layers=1, tie_embeddings=True, **kw)


def test_one_matrix_and_one_count():
    untied, one = LM(config("tiny", 50, n_layers=1)), LM(tied(50))
    assert one.out.weight is one.embed.weight and untied.out.weight is not untied.embed.weight
    assert untied.num_params() - one.num_params() == 50 * 32  # the second matrix is gone
    assert one.num_params(vocab=False) == untied.num_params(vocab=False)  # the body is the same
    with pytest.raises(ModelConfigError, match="output_bias"):
        tied(50, output_bias=True)


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    path = tmp_path_factory.mktemp("tok") / "tokenizer.json"
    save_tokenizer_json(train_from_lines(LINES, 280, "llama3"), path)
    return extend.Base.load(path)


def test_training_keeps_it_tied_and_a_checkpoint_reloads_tied(base, tmp_path):
    tok = lm_tokenizer(base.json)
    src = StreamSource(tok, LINES, batch_size=2, seq_len=16, cycle=True)
    cfg = tied(lm_vocab_size(tok))
    before = LM(cfg)
    res = train(cfg, TrainConfig(steps=3, lr=1e-2, warmup_steps=1, ckpt_every=3, prefetch=0), src, tmp_path,
                resume=False, init=before)
    model = res.model
    assert model.out.weight is model.embed.weight  # the reloaded final model is tied
    assert not torch.equal(model.embed.weight, before.embed.weight)  # and it did train
    state = load_checkpoint(tmp_path / CHECKPOINT)["model"]  # both names hold the one matrix
    assert torch.equal(state["embed.weight"], state["out.weight"])


def test_grow_keeps_it_tied_and_the_original_logits(base):
    tok = lm_tokenizer(base.json)
    model = LM(tied(lm_vocab_size(tok))).eval()
    counts = extend.count_words(base, LINES[1:3], extend.arm_pattern(base.regex, "R2"))
    ext = extend.extend(base, counts, 5, "R2")
    assert ext.new_tokens()
    grown = grow_lm(model, ext)
    assert grown.out.weight is grown.embed.weight and grown.cfg.tie_embeddings
    V = base.next_id
    idx = torch.tensor([tok.encode(LINES[0])])
    with torch.no_grad():
        old = model.logits(idx)[..., :V]
        new = grown.logits(torch.where(idx == V, idx + len(ext.new_tokens()), idx))[..., :V]
    assert torch.allclose(old, new, atol=1e-5)


def test_the_host_store_refuses_a_tied_model(base, tmp_path):
    tok = lm_tokenizer(base.json)
    src = StreamSource(tok, LINES, batch_size=2, seq_len=16, cycle=True)
    with pytest.raises(ModelConfigError, match="untie"):
        train(tied(lm_vocab_size(tok)), TrainConfig(steps=1, vocab_store="host", prefetch=0), src, tmp_path,
              resume=False)
