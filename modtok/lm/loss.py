"""Restricted-vocabulary cross-entropy: softmax over the batch's active ids only.

A batch tokenized with a subtokenizer can only contain that subtokenizer's ids,
so the softmax is taken over those K ids instead of the whole global vocabulary
of V ids. We gather the K rows of the output matrix, multiply, and remap every
target from its global id to its position in the sorted active set:

    active_ids = [3, 7, 9]           (sorted, unique global ids)
    targets    = [[7, 3, 9, -1]]     (-1 = padding, ignored)
    local      = [[1, 0, 2, -1]]     (torch.searchsorted)
    logits     = h @ W[active_ids].T (B, T, K = 3)

This equals the full softmax with every logit outside the active set set to
-inf (:func:`masked_full_cross_entropy`, the slow reference), gradients
included: a masked logit gets probability 0 and so gradient 0. The cost of the
output layer drops from B*T*V*d to B*T*K*d multiply-adds.

Losses are *summed* nats; :func:`bits_per_byte` turns a sum into bits per UTF-8
byte of the raw text, the tokenizer-independent unit used to compare models
whose tokenizers differ.

>>> import math
>>> bits_per_byte(math.log(2) * 10, 5)   # 10 bits over 5 bytes
2.0
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from modtok.errors import ActiveSetError, DataError, OutOfVocabularyError

IGNORE = -1  # target id that contributes nothing (padding)


def check_active_ids(active_ids: torch.Tensor, vocab_size: int) -> None:
    """Raise :class:`ActiveSetError` unless active_ids is a non-empty sorted unique 1-D id tensor < vocab_size."""
    if active_ids.dim() != 1 or active_ids.numel() == 0:
        raise ActiveSetError(f"active ids must be a non-empty 1-D tensor, got shape {tuple(active_ids.shape)}")
    if active_ids.dtype != torch.long:
        raise ActiveSetError(f"active ids must be int64, got {active_ids.dtype}")
    if active_ids.numel() > 1 and not bool((active_ids[1:] > active_ids[:-1]).all()):
        raise ActiveSetError("active ids must be sorted and unique")
    lo, hi = int(active_ids[0]), int(active_ids[-1])
    if lo < 0 or hi >= vocab_size:
        raise ActiveSetError(f"active ids span [{lo}, {hi}], outside the vocabulary [0, {vocab_size})")


def to_local(targets: torch.Tensor, active_ids: torch.Tensor) -> torch.Tensor:
    """Map global target ids to their index in the sorted active ids (IGNORE stays IGNORE).

    Raises :class:`~modtok.errors.OutOfVocabularyError` naming the first offending id and its position.
    """
    local = torch.searchsorted(active_ids, targets)  # (B, T), index of the first active id >= target
    valid = targets != IGNORE
    bad = valid & (active_ids[local.clamp(max=active_ids.numel() - 1)] != targets)
    if bool(bad.any()):
        pos = tuple(int(i) for i in bad.nonzero()[0])
        raise OutOfVocabularyError(
            f"{int(bad.sum())} target token(s) outside the active set of {active_ids.numel()} ids; "
            f"first: id {int(targets[pos])} at position {pos}"
        )
    return torch.where(valid, local, IGNORE)


def _at_least_fp32(x: torch.Tensor) -> torch.Tensor:
    """bf16/fp16 logits (autocast) are upcast for the softmax; fp32/fp64 stay as they are."""
    return x.to(torch.promote_types(x.dtype, torch.float32))


def restricted_cross_entropy(
    hidden: torch.Tensor,  # (B, T, d)
    weight: torch.Tensor,  # (V, d) full output matrix
    bias: torch.Tensor | None,  # (V,) or None
    targets: torch.Tensor,  # (B, T) global ids or IGNORE
    active_ids: torch.Tensor,  # (K,) sorted unique global ids
) -> torch.Tensor:
    """Summed cross-entropy in nats with the softmax over ``active_ids`` only."""
    check_active_ids(active_ids, weight.shape[0])
    return gathered_cross_entropy(hidden, weight[active_ids], None if bias is None else bias[active_ids],
                                  targets, active_ids)


def gathered_cross_entropy(
    hidden: torch.Tensor,  # (B, T, d)
    rows: torch.Tensor,  # (K, d) output rows of active_ids, already gathered
    row_bias: torch.Tensor | None,  # (K,) or None
    targets: torch.Tensor,  # (B, T) global ids or IGNORE
    active_ids: torch.Tensor,  # (K,) sorted unique global ids
    per_row: bool = False,
) -> torch.Tensor:
    """:func:`restricted_cross_entropy` once the K active rows are gathered (the host store hands
    them over this way, :mod:`modtok.lm.offload`): the same arithmetic from here on. ``per_row``:
    the (B,) sums of each row instead of their total (the per-line scores of evaluation)."""
    local = to_local(targets, active_ids)  # (B, T)
    logits = F.linear(hidden, rows, row_bias)  # (B, T, K)
    if per_row:
        nats = F.cross_entropy(_at_least_fp32(logits).flatten(0, 1), local.flatten(), ignore_index=IGNORE,
                               reduction="none")  # (B * T,), 0 where ignored
        return nats.view(local.shape).sum(-1)
    return F.cross_entropy(_at_least_fp32(logits).flatten(0, 1), local.flatten(), ignore_index=IGNORE, reduction="sum")


def masked_full_cross_entropy(hidden, weight, bias, targets, active_ids) -> torch.Tensor:
    """Reference: full-vocabulary logits, -inf outside the active set, then cross-entropy (summed nats).

    Same arguments and result as :func:`restricted_cross_entropy`, at the cost of a (B, T, V) matmul.
    """
    check_active_ids(active_ids, weight.shape[0])
    to_local(targets, active_ids)  # same error for tokens outside the set
    logits = _at_least_fp32(F.linear(hidden, weight, bias))  # (B, T, V)
    outside = torch.ones(weight.shape[0], dtype=torch.bool, device=logits.device)
    outside[active_ids] = False
    logits = logits.masked_fill(outside, float("-inf"))
    return F.cross_entropy(logits.flatten(0, 1), targets.flatten(), ignore_index=IGNORE, reduction="sum")


def bits_per_byte(nats: float, n_bytes: float) -> float:
    """Summed nats over a text of n_bytes UTF-8 bytes -> bits per byte.

    A non-positive byte count means there was no text to measure: :class:`~modtok.errors.DataError`.
    """
    if n_bytes <= 0:
        raise DataError(f"bits per byte needs a positive byte count (no text was scored), got {n_bytes}")
    return float(nats) / math.log(2) / float(n_bytes)
