"""HF ``tokenizer.json``: the one place that reads, checks, restricts and writes it.

Every module that touches a ``tokenizer.json`` (modular tokenizers, BPE and Unigram
export, the repair of deployed tokenizers, the deployed loaders) goes through these
functions, so a merge written ``"a b"`` or ``["a", "b"]``, the continuing-subword
prefix and the properness rule are decided once.

>>> merge_pair("a b"), merge_pair(["ab", "c"])
(('a', 'b'), ('ab', 'c'))
>>> model_ids({"model": {"type": "BPE", "vocab": {"a": 0, "b": 1}}, "added_tokens": [{"content": "<s>", "id": 2}]})
{'a': 0, 'b': 1, '<s>': 2}
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from modtok import atomic
from modtok.errors import MergeListError, OutOfVocabularyError, TokenizerFileError

# --------------------------------------------------------------------------
# reading the model part of a tokenizer.json


def merge_pair(merge) -> tuple[str, str]:
    """A merge as ``(left, right)``; tokenizer.json writes ``["a", "b"]`` or ``"a b"``."""
    if isinstance(merge, str):
        parts = merge.split(" ")
        if len(parts) != 2:
            raise TokenizerFileError(f"merge {merge!r} is not two space-separated tokens")
        return parts[0], parts[1]
    if isinstance(merge, (list, tuple)) and len(merge) == 2:
        return merge[0], merge[1]
    raise TokenizerFileError(f"merge {merge!r} is not a pair of tokens")


def merge_result(model: dict, left: str, right: str) -> str:
    """The token a BPE merge produces (HF strips the continuing-subword prefix)."""
    prefix = model.get("continuing_subword_prefix") or ""
    if prefix and right.startswith(prefix):
        right = right[len(prefix) :]
    return left + right


def check_proper(model: Mapping) -> None:
    """Raise :class:`MergeListError` unless the BPE merge list of a tokenizer.json
    ``model`` is proper: every part of every merge is in the vocabulary and is
    either a base token (no merge produces it) or the output of an *earlier*
    merge. HF ``tokenizers`` loads an improper list silently and encodes with it.

    >>> bpe = {"vocab": {"a": 0, "b": 1, "ab": 2, "abb": 3}, "merges": [["ab", "b"], ["a", "b"]]}
    >>> check_proper(bpe)
    Traceback (most recent call last):
    ...
    modtok.errors.MergeListError: merge 0 ('ab' 'b') uses 'ab', which only merge 1 creates
    """
    vocab = model.get("vocab") or {}
    pairs = [merge_pair(m) for m in model.get("merges") or []]
    first_made: dict[str, int] = {}
    for r, (left, right) in enumerate(pairs):
        first_made.setdefault(merge_result(model, left, right), r)
    for r, (left, right) in enumerate(pairs):
        for part in (left, right):
            if part not in vocab:
                raise MergeListError(f"merge {r} ({left!r} {right!r}) uses {part!r}, which is not in the vocabulary")
            if first_made.get(part, -1) >= r:
                raise MergeListError(
                    f"merge {r} ({left!r} {right!r}) uses {part!r}, which only merge {first_made[part]} creates"
                )


def model_ids(tokenizer_json: Mapping) -> dict[str, int]:
    """``{token: id}`` of a BPE or Unigram model plus its added tokens."""
    model = tokenizer_json.get("model") or {}
    kind = model.get("type")
    if kind == "BPE":
        vocab = dict(model["vocab"])
    elif kind == "Unigram":
        vocab = {piece: i for i, (piece, _score) in enumerate(model["vocab"])}
    else:
        raise TokenizerFileError(f"model type {kind!r} is not supported (BPE or Unigram)")
    for added in tokenizer_json.get("added_tokens") or []:
        vocab[added["content"]] = added["id"]
    return vocab


def restrict(tokenizer_json: Mapping, global_ids: np.ndarray) -> dict:
    """The tokenizer.json of the model restricted to ``global_ids`` (sorted,
    unique), renumbered so that local id ``i`` is global id ``global_ids[i]``.

    Raises :class:`MergeListError` if a kept BPE token is produced only by
    merges whose parts are not kept (the id set is not closed under ancestry).
    """
    keep = {int(g): i for i, g in enumerate(global_ids)}
    out = json.loads(json.dumps(tokenizer_json))  # deep copy
    out["post_processor"] = None  # it may name ids outside the set; encoding adds no specials
    model = out["model"]
    if model["type"] == "BPE":
        vocab = {tok: keep[i] for tok, i in model["vocab"].items() if i in keep}
        merges, made, produced = [], set(), set()
        for merge in model["merges"]:
            left, right = merge_pair(merge)
            result = merge_result(model, left, right)
            produced.add(result)
            if result in vocab and left in vocab and right in vocab:
                merges.append([left, right])
                made.add(result)
        lone = [t for t in vocab if t in produced and t not in made]
        if lone:
            raise MergeListError(
                f"{len(lone)} kept token(s) cannot be built from kept merges "
                f"(the id set is not closed under ancestry), e.g. {lone[0]!r}"
            )
        model["vocab"] = vocab
        model["merges"] = merges
    else:  # Unigram
        pieces = model["vocab"]
        model["vocab"] = [pieces[g] for g in keep if g < len(pieces)]
        unk = model.get("unk_id")
        if unk is not None:
            model["unk_id"] = keep.get(unk)
            if model["unk_id"] is None:
                raise OutOfVocabularyError(f"the Unigram unk id {unk} is not in the id set")
    out["added_tokens"] = [
        dict(t, id=keep[t["id"]]) for t in out.get("added_tokens") or [] if t["id"] in keep
    ]
    return out


def hf_tokenizer(tokenizer_json: Mapping):
    """An HF ``tokenizers.Tokenizer`` built from a ``tokenizer.json`` dict."""
    from tokenizers import Tokenizer

    try:
        return Tokenizer.from_str(json.dumps(tokenizer_json))
    except Exception as e:  # the Rust side raises a plain Exception
        raise TokenizerFileError(f"tokenizers cannot load the model: {e}") from e


# --------------------------------------------------------------------------
# files


def read_json(path) -> dict:
    """The JSON object in ``path``; a missing file or bad JSON is a :class:`TokenizerFileError`."""
    path = Path(path)
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except FileNotFoundError:
        raise TokenizerFileError(f"{path}: no such file") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise TokenizerFileError(f"{path}: not valid JSON ({e})") from None


def write_json(path, tokenizer_json: Mapping) -> Path:
    """Write ``tokenizer_json`` to ``path`` atomically (temp file + rename)."""
    path = Path(path)
    atomic.write_json(path, tokenizer_json)
    return path
