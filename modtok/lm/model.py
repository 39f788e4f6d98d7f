"""A small decoder-only Transformer over a global vocabulary, with restricted logits.

One readable file in the spirit of nanoGPT: pre-norm blocks with RMSNorm, rotary
position embeddings (RoPE), a SwiGLU feed-forward, optional grouped-query
attention (fewer key/value heads than query heads) and
``F.scaled_dot_product_attention``. The input embedding and the output matrix are
separate ``(vocab_size, d_model)`` matrices, so a sub-vocabulary can be cut from
both (see :mod:`modtok.lm.infer`), unless ``tie_embeddings`` makes them one
matrix, as Llama-3.2-1B and Qwen3-0.6B tie theirs (:meth:`LM.tie`).

The one twist for modular tokenizers: logits are computed for an *active* id set
only, by gathering those rows of the output matrix::

    h        (B, T, d)         final hidden states
    W[ids]   (K, d)            K active rows of the output matrix
    logits = h @ W[ids].T      (B, T, K)   never (B, T, vocab_size)

>>> cfg = LMConfig(vocab_size=50, d_model=32, n_layers=1, n_heads=4, n_kv_heads=2)
>>> model = LM(cfg)
>>> idx = torch.tensor([[1, 2, 3]])
>>> model.logits(idx, active_ids=torch.tensor([1, 2, 7])).shape
torch.Size([1, 3, 3])
>>> torch.allclose(model.logits(idx)[..., [1, 2, 7]], model.logits(idx, torch.tensor([1, 2, 7])), atol=1e-6)
True
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, replace
from typing import TYPE_CHECKING

import torch
import torch.nn as nn
import torch.nn.functional as F

from modtok.errors import ModelConfigError
from modtok.lm.loss import gathered_cross_entropy, restricted_cross_entropy, to_local

if TYPE_CHECKING:
    from modtok.lm.offload import VocabRows


@dataclass(frozen=True)
class LMConfig:
    """Shape of the model. ``d_ff=None`` picks the SwiGLU width 8/3 * d_model rounded up to 64."""

    vocab_size: int
    d_model: int = 128
    n_layers: int = 2
    n_heads: int = 4
    n_kv_heads: int | None = None  # None = n_heads (plain multi-head attention)
    d_ff: int | None = None
    max_seq_len: int = 256
    rope_theta: float = 10000.0
    norm_eps: float = 1e-5
    output_bias: bool = False
    tie_embeddings: bool = False  # the output matrix IS the input embedding (one parameter)

    def __post_init__(self):
        kv = self.n_kv_heads or self.n_heads
        problems = []
        if self.vocab_size < 1:
            problems.append(f"vocab_size={self.vocab_size} < 1")
        if self.d_model % self.n_heads:
            problems.append(f"d_model={self.d_model} not divisible by n_heads={self.n_heads}")
        elif (self.d_model // self.n_heads) % 2:
            problems.append(f"head size {self.d_model // self.n_heads} is odd (RoPE needs pairs)")
        if self.n_heads % kv:
            problems.append(f"n_heads={self.n_heads} not divisible by n_kv_heads={kv}")
        if self.n_layers < 1 or self.max_seq_len < 1:
            problems.append("n_layers and max_seq_len must be >= 1")
        if self.tie_embeddings and self.output_bias:
            problems.append("tie_embeddings with output_bias: a tied model has no output bias here")
        if problems:
            raise ModelConfigError("bad LMConfig: " + "; ".join(problems))

    @property
    def kv_heads(self) -> int:
        return self.n_kv_heads or self.n_heads

    @property
    def ff_width(self) -> int:
        return self.d_ff or 64 * math.ceil(8 * self.d_model / 3 / 64)

    def to_dict(self) -> dict:
        return asdict(self)


# Named sizes; vocab_size is filled in from the tokenizer (``config("small", vocab_size=...)``).
# Parameter counts without the two vocabulary matrices (add 2 * vocab_size * d_model):
#   tiny 0.03M, mini 0.85M, small 5.9M, base 50M (base with a 32k vocabulary: 99M in all).
CONFIGS: dict[str, dict] = {
    "tiny": dict(d_model=32, n_layers=2, n_heads=4, n_kv_heads=2, max_seq_len=64),
    "mini": dict(d_model=128, n_layers=4, n_heads=4, max_seq_len=128),
    "small": dict(d_model=256, n_layers=8, n_heads=8, n_kv_heads=4, max_seq_len=256),
    "base": dict(d_model=768, n_layers=8, n_heads=12, n_kv_heads=4, max_seq_len=512),
}


def config(name: str, vocab_size: int, **overrides) -> LMConfig:
    """A named config with the vocabulary size set: ``config("tiny", 1000, n_layers=1)``."""
    if name not in CONFIGS:
        raise ModelConfigError(f"unknown LM config {name!r} (available: {', '.join(CONFIGS)})")
    return replace(LMConfig(vocab_size=vocab_size, **CONFIGS[name]), **overrides)


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):  # (..., d)
        x32 = x.float()
        x32 = x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + self.eps)
        return x32.type_as(x) * self.weight


def rope_tables(head_dim: int, max_seq_len: int, theta: float) -> tuple[torch.Tensor, torch.Tensor]:
    """cos, sin of shape (max_seq_len, head_dim // 2): angle t * theta^(-2i/head_dim)."""
    inv_freq = theta ** (-torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim)  # (hd/2,)
    angles = torch.outer(torch.arange(max_seq_len, dtype=torch.float64), inv_freq)  # (T, hd/2)
    return angles.cos().float(), angles.sin().float()


def apply_rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """Rotate channel pairs (x[2i], x[2i+1]) of x (B, H, T, hd) by the angles of each position."""
    x1, x2 = x.float()[..., 0::2], x.float()[..., 1::2]  # (B, H, T, hd/2) each
    out = torch.stack((x1 * cos - x2 * sin, x1 * sin + x2 * cos), dim=-1)  # (B, H, T, hd/2, 2)
    return out.flatten(-2).type_as(x)


@dataclass
class LayerCache:
    """Keys and values (B, Hkv, S, hd) of one layer for the S positions seen so far (RoPE applied)."""

    k: torch.Tensor | None = None
    v: torch.Tensor | None = None


class KVCache:
    """Per-layer keys and values for incremental decoding: each new token costs one position's
    attention instead of a forward pass over the whole prefix (:func:`modtok.lm.infer.generate`)."""

    def __init__(self, n_layers: int):
        self.layers = [LayerCache() for _ in range(n_layers)]
        self.length = 0  # positions cached (the next token's position)

    def layer(self, i: int) -> LayerCache:
        return self.layers[i]


class Attention(nn.Module):
    def __init__(self, cfg: LMConfig):
        super().__init__()
        self.n_heads, self.n_kv = cfg.n_heads, cfg.kv_heads
        self.head_dim = cfg.d_model // cfg.n_heads
        self.wq = nn.Linear(cfg.d_model, cfg.n_heads * self.head_dim, bias=False)
        self.wkv = nn.Linear(cfg.d_model, 2 * self.n_kv * self.head_dim, bias=False)
        self.wo = nn.Linear(cfg.n_heads * self.head_dim, cfg.d_model, bias=False)

    def forward(self, x, cos, sin, cache: LayerCache | None = None):  # x (B, T, d); cos, sin (T, hd/2)
        B, T, _ = x.shape
        q = self.wq(x).view(B, T, self.n_heads, self.head_dim).transpose(1, 2)  # (B, H, T, hd)
        k, v = self.wkv(x).view(B, T, 2, self.n_kv, self.head_dim).permute(2, 0, 3, 1, 4)  # (B, Hkv, T, hd) each
        q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
        causal = True
        if cache is not None and cache.k is not None:  # new queries see every cached position
            k, v = torch.cat([cache.k, k], dim=2), torch.cat([cache.v, v], dim=2)  # (B, Hkv, S + T, hd)
            causal = T > 1
        if cache is not None:
            cache.k, cache.v = k, v
        if causal and k.shape[2] > T:  # a block of T new queries after S cached keys: offset causal mask
            S = k.shape[2] - T
            mask = torch.ones(T, S + T, dtype=torch.bool, device=x.device).tril(S)  # (T, S + T)
            y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, enable_gqa=self.n_kv != self.n_heads)
        else:
            y = F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=self.n_kv != self.n_heads)
        return self.wo(y.transpose(1, 2).reshape(B, T, -1))  # (B, H, T, hd) -> (B, T, d)


class SwiGLU(nn.Module):
    def __init__(self, cfg: LMConfig):
        super().__init__()
        self.w_gate_up = nn.Linear(cfg.d_model, 2 * cfg.ff_width, bias=False)
        self.w_down = nn.Linear(cfg.ff_width, cfg.d_model, bias=False)

    def forward(self, x):  # (B, T, d)
        gate, up = self.w_gate_up(x).chunk(2, dim=-1)  # (B, T, ff) each
        return self.w_down(F.silu(gate) * up)  # (B, T, d)


class Block(nn.Module):
    def __init__(self, cfg: LMConfig):
        super().__init__()
        self.attn_norm = RMSNorm(cfg.d_model, cfg.norm_eps)
        self.attn = Attention(cfg)
        self.ff_norm = RMSNorm(cfg.d_model, cfg.norm_eps)
        self.ff = SwiGLU(cfg)

    def forward(self, x, cos, sin, cache: LayerCache | None = None):  # (B, T, d)
        x = x + self.attn(self.attn_norm(x), cos, sin, cache)
        return x + self.ff(self.ff_norm(x))


class LM(nn.Module):
    """Decoder-only Transformer; ``forward(idx, active_ids, targets)`` returns the restricted loss."""

    def __init__(self, cfg: LMConfig):
        super().__init__()
        self.cfg = cfg
        self.embed = nn.Embedding(cfg.vocab_size, cfg.d_model)
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layers))
        self.norm = RMSNorm(cfg.d_model, cfg.norm_eps)
        self.out = nn.Linear(cfg.d_model, cfg.vocab_size, bias=cfg.output_bias)
        cos, sin = rope_tables(cfg.d_model // cfg.n_heads, cfg.max_seq_len, cfg.rope_theta)
        self.register_buffer("rope_cos", cos, persistent=False)  # (max_seq_len, hd/2)
        self.register_buffer("rope_sin", sin, persistent=False)
        self.apply(self._init)
        for name, p in self.named_parameters():  # GPT-2: scale residual projections by 1/sqrt(2 * n_layers)
            if name.endswith(("attn.wo.weight", "ff.w_down.weight")):
                nn.init.normal_(p, std=0.02 / math.sqrt(2 * cfg.n_layers))
        self.tie()

    def tie(self) -> LM:
        """With ``cfg.tie_embeddings``, make the output matrix the input embedding's
        parameter (again, after code that replaced either, e.g. growing rows);
        otherwise nothing. Returns the model.

        >>> m = LM(LMConfig(vocab_size=10, d_model=8, n_heads=2, tie_embeddings=True))
        >>> m.out.weight is m.embed.weight, m.num_params() - m.num_params(vocab=False)   # one 10 x 8 matrix
        (True, 80)
        """
        if self.cfg.tie_embeddings:
            self.out.weight = self.embed.weight
        return self

    @staticmethod
    def _init(m):
        if isinstance(m, (nn.Linear, nn.Embedding)):
            nn.init.normal_(m.weight, std=0.02)
            if getattr(m, "bias", None) is not None:
                nn.init.zeros_(m.bias)

    def num_params(self, vocab: bool = True) -> int:
        n = sum(p.numel() for p in self.parameters())  # a tied matrix is one parameter, counted once
        rows = {id(p): p.numel() for p in (self.embed.weight, *self.out.parameters())}
        return n if vocab else n - sum(rows.values())

    def hidden(self, idx: torch.Tensor) -> torch.Tensor:
        """Final normalised hidden states (B, T, d) for token ids idx (B, T)."""
        return self.body(self.embed(idx))

    def body(self, x: torch.Tensor, cache: KVCache | None = None) -> torch.Tensor:
        """The blocks and final norm on input embeddings x (B, T, d) -> hidden states (B, T, d).

        With a ``cache`` (generation), x holds only the new positions; their keys and values are
        appended to the cache and attend to everything cached before them.
        """
        T = x.shape[1]
        start = 0 if cache is None else cache.length
        if start + T > self.cfg.max_seq_len:
            raise ModelConfigError(f"sequence length {start + T} > max_seq_len {self.cfg.max_seq_len}")
        cos, sin = self.rope_cos[start : start + T], self.rope_sin[start : start + T]
        for i, block in enumerate(self.blocks):
            x = block(x, cos, sin, None if cache is None else cache.layer(i))
        if cache is not None:
            cache.length += T
        return self.norm(x)

    def output_rows(self, active_ids: torch.Tensor | None) -> tuple[torch.Tensor, torch.Tensor | None]:
        """(K, d) rows of the output matrix and (K,) bias for the active ids (all rows when None)."""
        w, b = self.out.weight, self.out.bias
        if active_ids is None:
            return w, b
        return w[active_ids], (None if b is None else b[active_ids])

    def logits(self, idx: torch.Tensor, active_ids: torch.Tensor | None = None,
               cache: KVCache | None = None) -> torch.Tensor:
        """Logits (B, T, K) over the active ids, in the order of ``active_ids`` (K = vocab_size when None).

        With a ``cache``, idx (B, T) are the positions after the cached ones (see :meth:`body`).
        """
        w, b = self.output_rows(active_ids)
        return F.linear(self.body(self.embed(idx), cache), w, b)  # (B, T, K)

    def forward(self, idx: torch.Tensor, active_ids: torch.Tensor, targets: torch.Tensor,
                rows: VocabRows | None = None) -> torch.Tensor:
        """Summed cross-entropy (nats) of targets (B, T) over the sorted active ids; -1 targets are ignored.

        ``rows`` are the active ids' embedding and output rows handed over by the host store
        (:mod:`modtok.lm.offload`; the model then has no vocabulary matrices of its own): inputs are
        looked up in them at their local positions, with the same kernels as the full matrices.
        Going through ``forward`` (not ``hidden`` + loss) keeps DistributedDataParallel's hooks in play.
        """
        if rows is None:
            w, b = self.output_rows(None)
            return restricted_cross_entropy(self.hidden(idx), w, b, targets, active_ids)
        h = self.body(F.embedding(to_local(idx, active_ids), rows.embed))  # (B, T, d)
        return gathered_cross_entropy(h, rows.out, rows.bias, targets, active_ids)
