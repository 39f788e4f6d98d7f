"""A ``transformers`` causal LM grown to the ids of an extended tokenizer, and checked.

:func:`modtok.lm.embed_init.extend_hf` gives every new id of a
:class:`modtok.bpe.repair.Extension` a row (the mean of its constituents' rows, in
the input embedding and, when untied, the output matrix). Every original row stays,
so on text the extension encodes as its base did (mark-free English, Russian) the
logits over the original ids must not move; :func:`resize_causal_lm` measures that
on probe ids before it hands the model back:

    logits_before = model(ids)                    # (T, V)
    grow the embeddings to V' = last new id + 1
    change = max |model(ids)[:, :V] - logits_before|

>>> import torch, transformers
>>> from modtok.bpe import repair
>>> from modtok.bpe.export import to_tokenizer_json
>>> from modtok.bpe.model import BPEModel
>>> base = repair.Base(to_tokenizer_json(BPEModel([(0xE0, 0xA4)], scheme="llama3")))   # 257 ids
>>> ext = repair.Extension(base, [("क".encode()[:2], b"\\x95")], base.regex)              # id 257 = क
>>> _ = torch.manual_seed(0)
>>> model = transformers.LlamaForCausalLM(transformers.LlamaConfig(vocab_size=257, hidden_size=8,
...     intermediate_size=16, num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=1))
>>> r = resize_causal_lm(model, ext, [[72, 105]])
>>> r.rows_before, r.rows_after, r.tied, r.max_logit_change < 1e-4, model.config.vocab_size
(257, 258, False, True, 258)
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass

import torch

from modtok.errors import ConfigError, VocabularyMismatchError
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
