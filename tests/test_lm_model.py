"""modtok.lm.model and modtok.lm.loss: restricted logits and loss against full-softmax oracles."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F
from lm_helpers import one_torch_thread  # noqa: F401 (autouse fixture)

from modtok.errors import ActiveSetError, DataError, ModelConfigError, ModtokError, OutOfVocabularyError
from modtok.lm.loss import (
    IGNORE,
    bits_per_byte,
    masked_full_cross_entropy,
    restricted_cross_entropy,
)
from modtok.lm.model import LM, Attention, LMConfig, apply_rope, config, rope_tables


def _setup(V=50, d=8, B=2, T=5, bias=True, seed=0):
    g = torch.Generator().manual_seed(seed)
    hidden = torch.randn(B, T, d, generator=g, dtype=torch.float64, requires_grad=True)
    weight = torch.randn(V, d, generator=g, dtype=torch.float64, requires_grad=True)
    b = torch.randn(V, generator=g, dtype=torch.float64, requires_grad=True) if bias else None
    active = torch.tensor([1, 4, 7, 8, 20, 33, 49])
    targets = active[torch.randint(len(active), (B, T), generator=g)]
    targets[0, 0] = IGNORE
    return hidden, weight, b, targets, active


@pytest.mark.parametrize("bias", [True, False])
def test_restricted_loss_equals_masked_full_softmax_with_gradients(bias):
    """Oracle: softmax over all V logits with -inf outside the active set; same value and same
    gradients for the hidden states, the whole output matrix (zero rows outside) and the bias."""
    h, w, b, t, a = _setup(bias=bias)
    params = [h, w] + ([b] if bias else [])
    ours = restricted_cross_entropy(h, w, b, t, a)
    g_ours = torch.autograd.grad(ours, params)
    ref = masked_full_cross_entropy(h, w, b, t, a)
    g_ref = torch.autograd.grad(ref, params)
    assert torch.allclose(ours, ref, rtol=1e-12, atol=1e-12)
    for x, y in zip(g_ours, g_ref):
        assert torch.allclose(x, y, rtol=1e-10, atol=1e-12)
    outside = torch.ones(w.shape[0], dtype=torch.bool)
    outside[a] = False
    assert g_ours[1][outside].abs().max() == 0 and g_ours[1][~outside].abs().max() > 0


def test_restricted_loss_hand_oracle_uniform_logits():
    """All-zero output matrix -> uniform over K active ids -> each counted target costs ln K nats."""
    h, w, b, t, a = _setup(bias=False)
    zero = torch.zeros_like(w)
    n_counted = int((t != IGNORE).sum())
    loss = restricted_cross_entropy(h, zero, None, t, a)
    assert loss.item() == pytest.approx(n_counted * math.log(len(a)))
    # ... and ln 2 nats per token over 1 byte per token is 1 bit per byte
    assert bits_per_byte(n_counted * math.log(2), n_counted) == pytest.approx(1.0)


def test_bits_per_byte_of_no_bytes_is_a_data_error_not_an_active_set_error():
    with pytest.raises(DataError, match="positive byte count") as e:
        bits_per_byte(1.0, 0)
    assert not isinstance(e.value, ActiveSetError)


def test_targets_outside_active_set_are_rejected():
    h, w, b, t, a = _setup()
    t = t.clone()
    t[1, 3] = 5  # 5 is not active
    with pytest.raises(OutOfVocabularyError, match=r"id 5 at position \(1, 3\)") as e:
        restricted_cross_entropy(h, w, b, t, a)
    assert isinstance(e.value, ModtokError)
    with pytest.raises(OutOfVocabularyError):
        masked_full_cross_entropy(h, w, b, t, a)


@pytest.mark.parametrize(
    "active, match",
    [([4, 1, 7], "sorted"), ([1, 1, 7], "sorted"), ([], "non-empty"), ([1, 50], "outside the vocabulary")],
)
def test_malformed_active_sets_are_rejected(active, match):
    h, w, b, t, _ = _setup()
    with pytest.raises(ActiveSetError, match=match):
        restricted_cross_entropy(h, w, b, t.clamp(min=1), torch.tensor(active, dtype=torch.long))


def test_model_restricted_logits_are_columns_of_full_logits_and_forward_is_the_loss():
    torch.manual_seed(0)
    model = LM(LMConfig(vocab_size=40, d_model=16, n_layers=2, n_heads=4, n_kv_heads=2, output_bias=True))
    idx = torch.randint(40, (2, 7))
    active = torch.tensor([0, 3, 5, 11, 39])
    full = model.logits(idx)  # (2, 7, 40)
    sub = model.logits(idx, active)  # (2, 7, 5)
    assert sub.shape == (2, 7, 5)
    assert torch.allclose(full[..., active], sub, atol=1e-6)
    targets = active[torch.randint(5, (2, 7))]
    oracle = F.cross_entropy(full[..., active].flatten(0, 1), torch.searchsorted(active, targets).flatten(), reduction="sum")
    assert torch.allclose(model(idx, active, targets), oracle, atol=1e-5)


def test_model_is_causal():
    """Changing token t leaves the logits of positions < t unchanged and changes position t."""
    torch.manual_seed(1)
    model = LM(config("tiny", 30))
    idx = torch.randint(30, (1, 10))
    changed = idx.clone()
    changed[0, 6] = (idx[0, 6] + 1) % 30
    a, b = model.logits(idx), model.logits(changed)
    assert torch.allclose(a[:, :6], b[:, :6], atol=1e-6)
    assert not torch.allclose(a[:, 6], b[:, 6], atol=1e-6)


def test_rope_scores_depend_only_on_relative_position():
    cos, sin = rope_tables(8, 32, 10000.0)
    q, k = torch.randn(1, 1, 1, 8), torch.randn(1, 1, 1, 8)

    def score(m, n):
        qm = apply_rope(q.expand(1, 1, 32, 8), cos, sin)[0, 0, m]
        kn = apply_rope(k.expand(1, 1, 32, 8), cos, sin)[0, 0, n]
        return float(qm @ kn)

    assert score(5, 2) == pytest.approx(score(20, 17), abs=1e-5)
    assert score(5, 2) != pytest.approx(score(5, 3), abs=1e-3)
    assert score(0, 0) == pytest.approx(float(q.flatten() @ k.flatten()), abs=1e-5)  # angle 0 = identity


def test_grouped_query_attention_equals_multi_head_with_repeated_kv_weights():
    """GQA with 2 kv heads for 4 query heads == plain attention whose kv heads are copies (0,0,1,1)."""
    torch.manual_seed(2)
    gqa_cfg = LMConfig(vocab_size=10, d_model=32, n_heads=4, n_kv_heads=2)
    mha_cfg = LMConfig(vocab_size=10, d_model=32, n_heads=4)
    gqa, mha = Attention(gqa_cfg), Attention(mha_cfg)
    hd = 8
    k_w, v_w = gqa.wkv.weight.view(2, 2, hd, 32)  # (kv, heads, hd, d) -> k and v blocks
    rep = lambda w: w.repeat_interleave(2, dim=0).reshape(4 * hd, 32)  # noqa: E731
    with torch.no_grad():
        mha.wq.weight.copy_(gqa.wq.weight)
        mha.wo.weight.copy_(gqa.wo.weight)
        mha.wkv.weight.copy_(torch.cat([rep(k_w), rep(v_w)]))
    cos, sin = rope_tables(hd, 16, 10000.0)
    x = torch.randn(2, 9, 32)
    assert torch.allclose(gqa(x, cos[:9], sin[:9]), mha(x, cos[:9], sin[:9]), atol=1e-5)


def test_config_errors_and_named_sizes():
    with pytest.raises(ModelConfigError, match="not divisible"):
        LMConfig(vocab_size=10, d_model=30, n_heads=4)
    with pytest.raises(ModelConfigError, match="n_kv_heads"):
        LMConfig(vocab_size=10, d_model=32, n_heads=4, n_kv_heads=3)
    with pytest.raises(ModelConfigError, match="unknown LM config"):
        config("huge", 10)
    with pytest.raises(ModelConfigError, match="max_seq_len"):
        LM(config("tiny", 10)).hidden(torch.zeros(1, 65, dtype=torch.long))
    # parameter count without vocabulary matrices, by hand for "tiny" (d=32, 2 layers, 4 heads, 2 kv heads,
    # ff = 64 * ceil(8 * 32 / 3 / 64) = 128): per layer wq 32*32 + wkv 32*(2*2*8) + wo 32*32
    # + gate_up 32*256 + down 128*32 + 2 norms 2*32 = 15424; plus the final norm 32.
    model = LM(config("tiny", 100))
    assert model.cfg.ff_width == 128
    assert model.num_params(vocab=False) == 2 * 15424 + 32
    assert model.num_params() == 2 * 15424 + 32 + 2 * 100 * 32
