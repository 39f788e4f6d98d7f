"""A ``transformers`` causal LM with its embedding rows grown or cut for an adapted
tokenizer, checked before it is saved and after it is loaded back.

Growing (:func:`resize_causal_lm`, for :mod:`modtok.adapt.extend`): every new id gets
a row, the mean of its constituents' rows (:func:`grow_rows`), in
the input embedding and, when untied, the output matrix; every original row stays.
A padded matrix (Qwen pads 151,669 ids to 151,936 rows) keeps its padding: new ids
overwrite the padding rows they land on, and a matrix too small for them grows to
the last new id + 1, rounded up to ``pad_to_multiple_of``; rows no id uses are the
mean of the real rows. On text the extension encodes as its base did, the logits over
the *real* original ids (``base.next_id`` of them; padding columns are no token's)
must not move:

    logits_before = model(ids)[:, :V]             # V = base.next_id
    grow the embeddings
    change = max |model(ids)[:, :V] - logits_before|

Cutting (:func:`cut_rows`, for :mod:`modtok.adapt.trim`): only the kept rows, in the
new id order, optionally padded. :func:`check_model_dir` looks at a model directory
before any work (local files only, rows covering the tokenizer, a tokenizer inside it
equal to the base); :func:`save_checked` saves a model, loads it back with
``AutoModelForCausalLM`` and compares its logits with what was measured.

>>> import torch, transformers
>>> from modtok.adapt import extend
>>> from modtok.bpe.export import to_tokenizer_json
>>> from modtok.bpe.model import BPEModel
>>> base = extend.Base(to_tokenizer_json(BPEModel([(0xE0, 0xA4)], scheme="llama3")))   # 257 ids
>>> ext = extend.Extension(base, [("क".encode()[:2], b"\\x95")], base.regex)              # id 257 = क
>>> _ = torch.manual_seed(0)
>>> model = transformers.LlamaForCausalLM(transformers.LlamaConfig(vocab_size=257, hidden_size=8,
...     intermediate_size=16, num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=1))
>>> r = resize_causal_lm(model, ext, [[72, 105]], pad_to_multiple_of=16)
>>> r.rows_before, r.rows_after, r.tied, r.max_logit_change < 1e-4, model.config.vocab_size
(257, 272, False, True, 272)
"""

from __future__ import annotations

import copy
import dataclasses
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch

from modtok.errors import ConfigError, OutOfVocabularyError, VocabularyMismatchError
from modtok.lm import embed_init
from modtok.lm.embed_init import extended_size

# More rows than tokenizer ids by this much is no longer padding to a round size but,
# most likely, another tokenizer's model: said, not refused (the ids still fit).
PADDING_WARN = 1024


def padded(rows: int, multiple: int | None) -> int:
    """``rows`` rounded up to a multiple of ``multiple`` (``None``: as it is).

    >>> padded(151669, 128), padded(258, None), padded(256, 64)
    (151680, 258, 256)
    """
    if multiple is None:
        return rows
    if multiple < 1:
        raise ConfigError(f"pad_to_multiple_of must be at least 1, not {multiple}")
    return -(-rows // multiple) * multiple


@dataclass
class Resized:
    """What :func:`resize_causal_lm` did: rows before and after, whether the output
    matrix is the input embedding (tied), and the largest change of a logit over the
    real original ids on the probe ids (``nan`` without probes)."""

    model: object
    rows_before: int
    rows_after: int
    tied: bool
    max_logit_change: float


@dataclass
class ModelDir:
    """A model directory as :func:`check_model_dir` found it: its ``model_type``, embedding
    ``rows`` (``config.vocab_size``), whether a ``tokenizer.json`` inside it was compared
    with the base (``None``: there is none), and ``notes`` worth telling the user."""

    path: Path
    model_type: str
    rows: int
    tokenizer_checked: bool | None
    notes: list[str] = field(default_factory=list)


def local_dir(path: str | os.PathLike) -> Path:
    """``path`` as an existing local directory, else a :class:`ConfigError` that says why:
    modtok never downloads, so a hub name (``Qwen/Qwen3-8B``) is refused before any work.

    >>> local_dir("Qwen/Qwen3-0.6B")
    Traceback (most recent call last):
    ...
    modtok.errors.ConfigError: --model 'Qwen/Qwen3-0.6B' is not a local directory (modtok reads local files only, ...
    """
    p = Path(path)
    if not p.is_dir():
        hint = ("; download it first, e.g. `hf download NAME --local-dir DIR`, and give DIR"
                if not p.exists() and not Path(path).is_absolute() and str(path).count("/") == 1 else "")
        raise ConfigError(f"--model {str(path)!r} is not a local directory (modtok reads local files only, "
                          f"never the network{hint})")
    return p


def token_ids(tokenizer_json: Mapping) -> dict[str, int]:
    """Every token of a ``tokenizer.json`` (model vocabulary and added tokens) and its id."""
    vocab = tokenizer_json["model"]["vocab"]
    ids = dict(vocab) if isinstance(vocab, Mapping) else {str(v[0]): i for i, v in enumerate(vocab)}
    return {**ids, **{t["content"]: t["id"] for t in tokenizer_json.get("added_tokens") or []}}


def check_model_dir(path: str | os.PathLike, tokenizer_json: Mapping) -> ModelDir:
    """Check a ``transformers`` causal-LM directory against the base ``tokenizer_json``,
    reading only its ``config.json`` and ``tokenizer.json`` (no weights): a local directory
    (:func:`local_dir`), a config ``transformers`` can read, rows for every id of the base
    (fewer: :class:`VocabularyMismatchError`; many more: a note), and a ``tokenizer.json``
    inside it, if any, with the base's vocabulary and added tokens at the same ids."""
    from transformers import AutoConfig

    p = local_dir(path)
    if not (p / "config.json").is_file():
        raise ConfigError(f"{p}: no config.json, not a transformers model directory")
    try:
        cfg = AutoConfig.from_pretrained(p, local_files_only=True)
    except (OSError, ValueError, KeyError) as e:
        raise ConfigError(f"{p}/config.json: transformers cannot read it ({e})") from None
    text_cfg = cfg.get_text_config() if hasattr(cfg, "get_text_config") else cfg
    rows = getattr(text_cfg, "vocab_size", None)
    if not isinstance(rows, int):
        raise ConfigError(f"{p}/config.json has no vocab_size")
    want = token_ids(tokenizer_json)
    real = max(want.values()) + 1
    out = ModelDir(p, cfg.model_type, rows, None)
    if rows < real:
        raise VocabularyMismatchError(f"{p}: the model has {rows:,} embedding rows, the tokenizer {real:,} "
                                      "ids: it is not this tokenizer's model (nothing was done)")
    if rows > real:
        out.notes.append(f"the model has {rows - real:,} rows beyond the tokenizer's {real:,} ids "
                         + ("(padding: kept)" if rows - real <= PADDING_WARN else
                            "(kept; that many is more than padding: is it this tokenizer's model?)"))
    if (p / "tokenizer.json").is_file():
        try:
            vocab = token_ids(json.loads((p / "tokenizer.json").read_text(encoding="utf-8")))
        except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError, IndexError) as e:
            raise ConfigError(f"{p}/tokenizer.json: cannot read it ({e})") from None
        moved = [(s, i, vocab.get(s)) for s, i in want.items() if vocab.get(s) != i]
        if moved:
            s, i, j = min(moved, key=lambda m: m[1])
            raise VocabularyMismatchError(
                f"{p}/tokenizer.json is not the base tokenizer: {len(moved):,} of its {len(want):,} entries differ "
                f"(first: {s!r} is id {i} in the base, {j} in the model's); give the model of this tokenizer")
        out.tokenizer_checked = True
    return out


def load_causal_lm(path: str | os.PathLike):
    """``AutoModelForCausalLM.from_pretrained(path)`` (local files only, the saved dtype),
    in eval mode; a directory that is not a causal LM is a :class:`ConfigError`."""
    from transformers import AutoModelForCausalLM

    p = local_dir(path)
    try:
        model = AutoModelForCausalLM.from_pretrained(p, local_files_only=True, dtype="auto")
    except (OSError, ValueError, KeyError) as e:
        raise ConfigError(f"{p}: not a transformers causal-LM directory ({e})") from None
    return model.eval()


def is_tied(model) -> bool:
    """The output matrix is the input embedding (``tie_word_embeddings``)."""
    out = model.get_output_embeddings()
    return out is not None and out.weight is model.get_input_embeddings().weight


@torch.no_grad()
def logits(model, probe_ids: Sequence[Sequence[int]], columns: int | None = None) -> list[torch.Tensor]:
    """The model's logits (float32, (T, V)) on each id sequence, the first ``columns`` only."""
    device = model.get_input_embeddings().weight.device
    return [model(torch.tensor([list(ids)], device=device)).logits[0, :, :columns].float() for ids in probe_ids]


def max_change(after: Sequence[torch.Tensor], before: Sequence[torch.Tensor]) -> float:
    """The largest absolute difference of two lists of logits (``nan`` when empty)."""
    return max((float((a - b).abs().max()) for a, b in zip(after, before)), default=float("nan"))


def constituents_of(ext):
    """``token bytes -> old ids`` of an extension's new tokens: its own ``constituents`` (a
    sentencepiece extension, :mod:`modtok.adapt.spm`), else the byte-level base's merges on
    the token's bytes (:func:`modtok.lm.embed_init.constituents`)."""
    return getattr(ext, "constituents", None) or (lambda token: embed_init.constituents(ext.base, token))


@torch.no_grad()
def grow_rows(model, ext) -> int:
    """Grow ``model``'s input embedding and (untied) output matrix in place to hold every new
    id of ``ext``, each new row the mean of its constituents' rows; returns the row count."""
    parts = constituents_of(ext)
    emb, head = model.get_input_embeddings(), model.get_output_embeddings()
    tied = is_tied(model)
    old = [emb.weight.clone()] + ([] if tied or head is None else [head.weight.clone()])
    rows = extended_size(old[0].shape[0], ext)
    model.resize_token_embeddings(rows, mean_resizing=False)  # keeps tied weights tied
    new = [model.get_input_embeddings().weight] + ([] if len(old) == 1 else [model.get_output_embeddings().weight])
    for token, i in ext.new_tokens().items():
        ids = torch.tensor(parts(token), device=old[0].device)
        for matrix, before in zip(new, old):
            matrix[i] = before[ids].mean(dim=0)
    return rows


@torch.no_grad()
def _pad_rows(model, rows: int, used: int) -> None:
    """Grow ``model`` to ``rows`` rows; rows ``used:`` (no id's) are the mean of rows ``:used``."""
    if rows <= model.get_input_embeddings().weight.shape[0]:
        return
    model.resize_token_embeddings(rows, mean_resizing=False)  # keeps tied weights tied
    for matrix in {id(m.weight): m.weight for m in (model.get_input_embeddings(), model.get_output_embeddings())
                   if m is not None}.values():
        matrix[used:] = matrix[:used].mean(dim=0)


def resize_causal_lm(model, ext, probe_ids: Sequence[Sequence[int]] = (),
                     pad_to_multiple_of: int | None = None) -> Resized:
    """Grow ``model`` in place to the ids of ``ext`` (:func:`grow_rows`; padding as the
    module docstring says) and measure the change of its logits over the real original
    ids (``ext.base.next_id``) on ``probe_ids`` (sequences of original ids, e.g. the
    extended tokenizer's ids of mark-free text, BOS included).

    Fewer rows than ``ext.base.next_id`` is a :class:`VocabularyMismatchError` (the
    tokenizer is not the model's).
    """
    rows = model.get_input_embeddings().weight.shape[0]
    real = ext.base.next_id
    if rows < real:
        raise VocabularyMismatchError(f"the model has {rows} embedding rows, the tokenizer {real} "
                                      "original ids: it is not this tokenizer's model")
    if any(i >= real or i < 0 for ids in probe_ids for i in ids):
        raise ConfigError(f"probe ids outside the tokenizer's {real} original ids")
    tied = is_tied(model)
    before = logits(model, probe_ids, real)
    need = grow_rows(model, ext)
    _pad_rows(model, padded(need, pad_to_multiple_of), need)
    after = logits(model, probe_ids, real)
    return Resized(model, rows, model.get_input_embeddings().weight.shape[0], tied, max_change(after, before))


def save_checked(model, directory: str | os.PathLike, probe_ids: Sequence[Sequence[int]],
                 want: Sequence[torch.Tensor], columns: int, tol: float, what: str) -> float:
    """The tail that :mod:`modtok.adapt.extend` and :mod:`modtok.adapt.trim` share: save
    ``model`` into ``directory``, load it back with ``AutoModelForCausalLM`` (local files
    only) and return the largest change of its logits over the first ``columns`` ids on
    ``probe_ids`` against ``want`` (what the model measured before it was changed); above
    ``tol`` a :class:`~modtok.errors.ConfigError` naming ``what`` (the caller's output is
    then not written)."""
    model.save_pretrained(directory)
    change = max_change(logits(load_causal_lm(directory), probe_ids, columns), want)
    if not change <= tol:
        raise ConfigError(f"{what}, loaded back with AutoModelForCausalLM, moved its logits by {change:.3g} "
                          f"(> {tol:g}): nothing written")
    return change


# --------------------------------------------------------------------------
# cutting rows (modtok.adapt.trim)


def cut_rows(model, kept: np.ndarray, old_to_new: Mapping[int, int] | None = None,
             pad_to_multiple_of: int | None = None) -> int:
    """Keep only rows ``kept`` (new row ``i`` = old row ``kept[i]``) of an HF causal
    LM's input embedding and output layer, in place; tied embeddings stay tied. With
    ``pad_to_multiple_of`` the matrices are padded to a multiple of it (padding rows:
    the mean of the kept rows). ``config.vocab_size`` becomes the row count and the
    config's (and generation config's) bos/eos/pad ids are renumbered with
    ``old_to_new`` (an id not kept becomes ``None``, or leaves the list). Returns the
    bytes of parameters saved (at the model's dtype).
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
    _pad_rows(model, padded(len(rows), pad_to_multiple_of), len(rows))
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
    return model.tie()  # a tied model stays tied
