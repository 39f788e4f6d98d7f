"""Rows for the new tokens of an extended tokenizer: the mean of their parts (§V).

A learned token of :class:`modtok.adapt.extend.Extension` is a byte string. Its
*constituents* are what the ORIGINAL tokenizer makes of those bytes: the
original merges applied to them (``model.tokenize`` on the byte-level string),
never the ids of the decoded text. Decoding first is the paper's fixed bug: a
token holding part of a character (``e0 a4``) decodes to U+FFFD, whose ids
have nothing to do with the token.

    new row(t) = mean over c in constituents(t) of row(c)

for the input embedding and the output matrix (and an output bias). Every
original row is kept, so on inputs made of original ids the logits over the
original ids are unchanged (the new rows only add logits of their own).

>>> from modtok.bpe.model import BPEModel
>>> from modtok.bpe.export import to_tokenizer_json
>>> from modtok.adapt import extend
>>> base = extend.Base(to_tokenizer_json(BPEModel([(0xE0, 0xA4)], scheme="llama3")))
>>> ext = extend.Extension(base, [("क".encode()[:2], b"\\x95")], base.regex)
>>> constituents(base, "क".encode())          # e0a4 (id 256) + 0x95
[256, 149]
"""

from __future__ import annotations

import dataclasses

import torch

from modtok.text.pretokenize import byte_level


def constituents(base, token: bytes) -> list[int]:
    """Original ids of ``token``'s bytes under the original merges (no decoding)."""
    return [t.id for t in base.tokenizer.model.tokenize(byte_level(token))]


def extended_size(rows: int, ext) -> int:
    """Rows a matrix of ``rows`` rows needs to hold every id of ``ext``."""
    return max([rows] + [i + 1 for i in ext.new_tokens().values()])


def extend_rows(weight: torch.Tensor, ext) -> torch.Tensor:
    """``weight`` (V, ...) with a row for every new id of ``ext`` (mean of its
    constituents' rows): shape (max(V, last new id + 1), ...). Rows between V
    and the first new id (none for the deployed tokenizers, whose new ids
    start at ``base.next_id``) are zero; rows a padded matrix already has at
    new ids are overwritten."""
    out = weight.new_zeros((extended_size(weight.shape[0], ext), *weight.shape[1:]))
    out[: weight.shape[0]] = weight
    for token, i in ext.new_tokens().items():
        parts = torch.tensor(constituents(ext.base, token), device=weight.device)
        out[i] = weight[parts].mean(dim=0)
    return out


@torch.no_grad()
def extend_lm(model, ext):
    """Grow a :class:`modtok.lm.model.LM` in place to the ids of ``ext``
    (embedding, output matrix, output bias); returns the model."""
    from torch import nn

    embed = extend_rows(model.embed.weight, ext)  # (V', d)
    w = extend_rows(model.out.weight, ext)  # (V', d)
    model.embed = nn.Embedding.from_pretrained(embed, freeze=False)
    out = nn.Linear(w.shape[1], w.shape[0], bias=model.out.bias is not None, device=w.device, dtype=w.dtype)
    out.weight.copy_(w)
    if model.out.bias is not None:
        out.bias.copy_(extend_rows(model.out.bias, ext))
    model.out = out
    model.cfg = dataclasses.replace(model.cfg, vocab_size=w.shape[0])  # the config is frozen
    return model.tie()  # a tied model stays tied (its two grown matrices are equal)


@torch.no_grad()
def extend_hf(model, ext):
    """Grow a ``transformers`` model in place: ``resize_token_embeddings`` (which
    keeps tied weights tied), then the new rows of the input and (if untied)
    output embeddings; returns the model."""
    old_in = model.get_input_embeddings().weight.clone()
    old_out = model.get_output_embeddings()
    old_out = None if old_out is None or old_out.weight is model.get_input_embeddings().weight else old_out.weight.clone()
    model.resize_token_embeddings(extended_size(old_in.shape[0], ext), mean_resizing=False)
    model.get_input_embeddings().weight.copy_(extend_rows(old_in, ext))
    if old_out is not None:
        model.get_output_embeddings().weight.copy_(extend_rows(old_out, ext))
    return model
