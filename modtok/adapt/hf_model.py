"""A ``transformers`` causal LM grown to the ids of an extended tokenizer, and checked.

:func:`modtok.lm.embed_init.extend_hf` gives every new id of a
:class:`modtok.adapt.extend.Extension` a row (the mean of its constituents' rows, in
the input embedding and, when untied, the output matrix). Every original row stays,
so on text the extension encodes as its base did (mark-free English, Russian) the
logits over the original ids must not move; :func:`resize_causal_lm` measures that
on probe ids before it hands the model back:

    logits_before = model(ids)                    # (T, V)
    grow the embeddings to V' = last new id + 1
    change = max |model(ids)[:, :V] - logits_before|

>>> import torch, transformers
>>> from modtok.adapt import extend
>>> from modtok.bpe.export import to_tokenizer_json
>>> from modtok.bpe.model import BPEModel
>>> base = extend.Base(to_tokenizer_json(BPEModel([(0xE0, 0xA4)], scheme="llama3")))   # 257 ids
>>> ext = extend.Extension(base, [("क".encode()[:2], b"\\x95")], base.regex)              # id 257 = क
>>> _ = torch.manual_seed(0)
>>> model = transformers.LlamaForCausalLM(transformers.LlamaConfig(vocab_size=257, hidden_size=8,
...     intermediate_size=16, num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=1))
>>> r = resize_causal_lm(model, ext, [[72, 105]])
>>> r.rows_before, r.rows_after, r.tied, r.max_logit_change < 1e-4, model.config.vocab_size
(257, 258, False, True, 258)
"""

from __future__ import annotations

import copy
import dataclasses
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import torch

from modtok.errors import ConfigError, OutOfVocabularyError, VocabularyMismatchError
from modtok.lm import embed_init
from modtok.lm.embed_init import extend_hf, extended_size


@dataclass
class Resized:
    """What :func:`resize_causal_lm` did: rows before and after, whether the output
    matrix is the input embedding (tied), and the largest change of a logit over the
    original ids on the probe ids (``nan`` without probes)."""

    model: object
    rows_before: int
    rows_after: int
    tied: bool
    max_logit_change: float


def load_causal_lm(path: str | os.PathLike):
    """``AutoModelForCausalLM.from_pretrained(path)`` (local files only), in eval mode;
    a directory that is not a causal LM is a :class:`ConfigError`."""
    from transformers import AutoModelForCausalLM

    try:
        model = AutoModelForCausalLM.from_pretrained(path, local_files_only=True)
    except (OSError, ValueError, KeyError) as e:
        raise ConfigError(f"{path}: not a transformers causal-LM directory ({e})") from None
    return model.eval()


def is_tied(model) -> bool:
    """The output matrix is the input embedding (``tie_word_embeddings``)."""
    out = model.get_output_embeddings()
    return out is not None and out.weight is model.get_input_embeddings().weight


@torch.no_grad()
def _logits(model, probe_ids: Sequence[Sequence[int]]) -> list[torch.Tensor]:
    device = model.get_input_embeddings().weight.device
    return [model(torch.tensor([list(ids)], device=device)).logits[0].float() for ids in probe_ids]


def resize_causal_lm(model, ext, probe_ids: Sequence[Sequence[int]] = ()) -> Resized:
    """Grow ``model`` in place to the ids of ``ext`` (:func:`extend_hf`) and measure the
    change of its logits over the original ids on ``probe_ids`` (sequences of original
    ids, e.g. the extended tokenizer's ids of mark-free text, BOS included).

    The model must hold every original id: fewer rows than ``ext.base.next_id`` is a
    :class:`VocabularyMismatchError` (the tokenizer is not the model's); more rows (a
    padded matrix, as Qwen's) are kept, new ids overwriting the padding rows they land on.
    """
    rows = model.get_input_embeddings().weight.shape[0]
    if rows < ext.base.next_id:
        raise VocabularyMismatchError(f"the model has {rows} embedding rows, the tokenizer {ext.base.next_id} "
                                      "original ids: it is not this tokenizer's model")
    if any(i >= rows or i < 0 for ids in probe_ids for i in ids):
        raise ConfigError(f"probe ids outside the model's {rows} rows")
    tied = is_tied(model)
    before = _logits(model, probe_ids)
    extend_hf(model, ext)
    after = _logits(model, probe_ids)
    change = max((float((a[:, : b.shape[1]] - b).abs().max()) for a, b in zip(after, before)), default=float("nan"))
    return Resized(model, rows, extended_size(rows, ext), tied, change)


# --------------------------------------------------------------------------
# cutting rows (modtok.adapt.trim)


def cut_rows(model, kept: np.ndarray, old_to_new: Mapping[int, int] | None = None) -> int:
    """Keep only rows ``kept`` (new row ``i`` = old row ``kept[i]``) of an HF causal
    LM's input embedding and output layer, in place; tied embeddings stay tied.
    ``config.vocab_size`` becomes ``len(kept)`` and the config's (and generation
    config's) bos/eos/pad ids are renumbered with ``old_to_new`` (an id not kept
    becomes ``None``, or leaves the list). Returns the bytes
    of parameters saved (at the model's dtype).
    """
    emb = model.get_input_embeddings()
    rows = torch.as_tensor(np.asarray(kept), dtype=torch.long, device=emb.weight.device)
    if len(rows) and int(rows.max()) >= emb.weight.shape[0]:
        raise OutOfVocabularyError(f"kept id {int(rows.max())} is beyond the model's {emb.weight.shape[0]} rows")
    head = model.get_output_embeddings()
    tied = head is not None and head.weight is emb.weight

    def size(modules) -> int:
        params = {id(p): p for m in modules if m is not None for p in m.parameters()}
        return sum(p.numel() * p.element_size() for p in params.values())

    before = size([emb, head])
    with torch.no_grad():
        new_emb = torch.nn.Embedding(len(rows), emb.weight.shape[1], padding_idx=None,
                                     device=emb.weight.device, dtype=emb.weight.dtype)
        new_emb.weight.copy_(emb.weight[rows])
        model.set_input_embeddings(new_emb)
        if head is not None:
            new_head = torch.nn.Linear(head.in_features, len(rows), bias=head.bias is not None,
                                       device=head.weight.device, dtype=head.weight.dtype)
            if tied:
                new_head.weight = new_emb.weight
            else:
                new_head.weight.copy_(head.weight[rows])
            if head.bias is not None:
                new_head.bias.copy_(head.bias[rows])
            model.set_output_embeddings(new_head)
    model.config.vocab_size = len(rows)
    if old_to_new is not None:
        for cfg in (model.config, getattr(model, "generation_config", None)):
            for key in ("bos_token_id", "eos_token_id", "pad_token_id"):
                value = getattr(cfg, key, None) if cfg is not None else None
                if isinstance(value, list):  # an id that is not kept is dropped
                    value = [old_to_new[v] for v in value if v in old_to_new] or None
                elif value is not None:
                    value = old_to_new.get(value)
                if cfg is not None and hasattr(cfg, key):
                    setattr(cfg, key, value)
    return before - size([model.get_input_embeddings(), model.get_output_embeddings()])


@torch.no_grad()
def grow_lm(model, ext):
    """A copy of a :class:`modtok.lm.model.LM` ``model`` (trained with ``ext.base``: tokens ``0..V-1``, boundary
    ``V``) for the ids of ``ext``: new tokens ``V..V+n-1`` get the mean of their
    constituents' rows (:func:`embed_init.extend_lm`) and the boundary moves to
    ``V+n`` with its trained rows. On original ids, the logits of the original
    tokens and of the boundary do not change."""
    model = copy.deepcopy(model)
    V = ext.base.next_id
    if model.cfg.vocab_size != V + 1:
        raise VocabularyMismatchError(f"the model has {model.cfg.vocab_size} rows; the base tokenizer needs "
                                      f"{V} + the boundary")
    if not ext.new_tokens():  # every learned merge was filtered out: nothing to add
        return model
    doc_embed, doc_out = model.embed.weight[V].clone(), model.out.weight[V].clone()  # (d,) each
    doc_bias = None if model.out.bias is None else model.out.bias[V].clone()
    embed_init.extend_lm(model, ext)  # rows V.. are now the new tokens (V's row was overwritten)
    model.embed = torch.nn.Embedding.from_pretrained(torch.cat([model.embed.weight, doc_embed[None]]), freeze=False)
    out = torch.nn.Linear(model.cfg.d_model, model.cfg.vocab_size + 1, bias=doc_bias is not None,
                    device=doc_out.device, dtype=doc_out.dtype)
    out.weight.copy_(torch.cat([model.out.weight, doc_out[None]]))
    if doc_bias is not None:
        out.bias.copy_(torch.cat([model.out.bias, doc_bias[None]]))
    model.out = out
    model.cfg = dataclasses.replace(model.cfg, vocab_size=model.cfg.vocab_size + 1)  # the config is frozen
    return model
