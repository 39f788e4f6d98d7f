"""BPE models <-> HF ``tokenizer.json``.

The exported tokenizer is byte-level: ``Split(<scheme regex>, isolated)`` then
``ByteLevel(use_regex=False)`` as pre-tokenizer (so HF cuts the text exactly as
training did), a BPE model with merges written as pairs and ids equal to the
modtok ids (bytes 0..255, then merge outputs), and a ``ByteLevel`` decoder.
Loading checks that the merge list is proper (:class:`MergeListError`).

>>> from modtok.bpe.model import BPEModel
>>> m = BPEModel([(104, 105)], scheme="whitespace")     # h+i
>>> tj = to_tokenizer_json(m)
>>> tj["model"]["merges"], tj["model"]["vocab"]["hi"]
([['h', 'i']], 256)
>>> from_tokenizer_json(tj).merges
[(104, 105)]
"""

from __future__ import annotations

from pathlib import Path

from modtok.artifacts import tokenizer_json
from modtok.artifacts.tokenizer_json import merge_pair, read_json
from modtok.bpe.model import BPEModel
from modtok.errors import MergeListError, TokenizerFileError
from modtok.text.pretokenize import DEFAULT_SCHEME, SCHEMES, byte_level, from_byte_level, pattern


def to_tokenizer_json(model: BPEModel) -> dict:
    """The HF ``tokenizer.json`` dict of a byte-level BPE model."""
    strings = [byte_level(v) for v in model.vocab]
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [],
        "normalizer": None,
        "pre_tokenizer": {
            "type": "Sequence",
            "pretokenizers": [
                {
                    "type": "Split",
                    "pattern": {"Regex": pattern(model.scheme)},
                    "behavior": "Isolated",
                    "invert": False,
                },
                {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False,
                 "use_regex": False},
            ],
        },
        "post_processor": None,
        "decoder": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False,
                    "use_regex": False},
        "model": bpe_model_json(
            {s: i for i, s in enumerate(strings)}, [[strings[a], strings[b]] for a, b in model.merges]
        ),
    }


def bpe_model_json(vocab: dict[str, int], merges: list[list[str]]) -> dict:
    """The ``"model"`` section of an HF ``tokenizer.json`` for a plain BPE
    (no unknown token, no prefixes or suffixes, no dropout, merges always applied)."""
    return {
        "type": "BPE",
        "dropout": None,
        "unk_token": None,
        "continuing_subword_prefix": None,
        "end_of_word_suffix": None,
        "fuse_unk": False,
        "byte_fallback": False,
        "ignore_merges": False,
        "vocab": vocab,
        "merges": merges,
    }


def _scheme_of(tj: dict) -> str:
    pre = tj.get("pre_tokenizer") or {}
    for step in pre.get("pretokenizers", [pre]):
        if step.get("type") == "Split":
            regex = step.get("pattern", {}).get("Regex")
            names = [name for name, src in SCHEMES.items() if src == regex]
            if names:  # cl100k and llama3 share one regex: prefer the default
                return DEFAULT_SCHEME if DEFAULT_SCHEME in names else names[0]
            raise TokenizerFileError(f"the Split regex {regex!r} is not a named modtok scheme")
    raise TokenizerFileError("no Split pre-tokenizer: not a modtok byte-level BPE tokenizer.json")


def from_tokenizer_json(tj: dict) -> BPEModel:
    """A :class:`BPEModel` from a byte-level BPE ``tokenizer.json`` dict.

    Ids must be 0..255 for the bytes and then merge outputs in order (what
    :func:`to_tokenizer_json` writes); the merge list must be proper."""
    model = tj.get("model") or {}
    if model.get("type") != "BPE":
        raise TokenizerFileError(f"model type {model.get('type')!r} is not BPE")
    vocab = model["vocab"]
    try:
        by_bytes = {from_byte_level(s): i for s, i in vocab.items()}
    except KeyError as e:
        raise TokenizerFileError(f"token with a non-byte-level character {e}") from None
    for b in range(256):
        if by_bytes.get(bytes([b])) != b:
            raise TokenizerFileError(f"byte {b} does not have id {b}")
    out = BPEModel([], _scheme_of(tj))
    for r, merge in enumerate(model["merges"]):
        left, right = merge_pair(merge)
        if left not in vocab or right not in vocab:
            missing = left if left not in vocab else right
            raise MergeListError(f"merge {r} ({left!r}, {right!r}): {missing!r} is not in the vocabulary")
        c = out.add_merge(vocab[left], vocab[right])
        if vocab.get(left + right) != c:
            raise TokenizerFileError(
                f"merge {r} ({left!r}, {right!r}) makes id {vocab.get(left + right)}, "
                f"modtok numbering expects {c}"
            )
    if len(out) != len(vocab):
        raise TokenizerFileError(f"{len(vocab) - len(out)} vocabulary entries are made by no merge")
    return out


def save_tokenizer_json(model: BPEModel, path) -> Path:
    """Write ``model`` as an HF ``tokenizer.json`` atomically."""
    path = Path(path)
    tokenizer_json.write_json(path, to_tokenizer_json(model))
    return path


def load_tokenizer_json(path) -> BPEModel:
    """Read a ``tokenizer.json`` written by :func:`save_tokenizer_json` (properness checked)."""
    return from_tokenizer_json(read_json(path))


def hf_tokenizer(model: BPEModel):
    """The HF ``tokenizers.Tokenizer`` of a model."""
    return tokenizer_json.hf_tokenizer(to_tokenizer_json(model))
