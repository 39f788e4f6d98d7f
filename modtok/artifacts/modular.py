"""One global vocabulary, many language views: the modular tokenizer.

A :class:`ModularTokenizer` is the serialised HF ``tokenizer.json`` of the
*global* tokenizer (a BPE or a Unigram model) plus ``lang_to_ids``: for each
language the sorted global ids of its sub-vocabulary (base symbols such as the
256 bytes, byte-fallback pieces and special tokens are in every list). Any
union of languages is a :class:`SubTokenizer`: a fast HF ``tokenizers``
encoder built from the *restricted* model that emits global ids.

Restriction rule (the same for every union of languages):

- BPE keeps the vocabulary entries whose id is in the set and the merges whose
  result and both parts are in the set, in global order. A proper language
  vocabulary (closed under ancestry) keeps exactly the merges whose result is
  in the set; a merge whose result is kept but whose part is not means the
  set is not closed, and :meth:`ModularTokenizer.subtokenizer` refuses it.
- Unigram keeps the pieces in the set with their scores (the removed pieces
  have probability 0; the kept scores are not renormalised, so the Viterbi
  path among the kept pieces is the one the global model would score best).

Local id ``i`` of a subtokenizer is global id ``global_ids[i]`` (global ids
sorted ascending), so the maps are one array and one ``searchsorted``.

Encoding never adds special tokens (``add_special_tokens=False``) and decoding
keeps them (``skip_special_tokens=False``), so ``decode(encode(s)) == s`` for
a lossless model.

>>> import json
>>> bpe = {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2, "c": 3, "abc": 4},
...        "merges": [["a", "b"], ["ab", "c"]]}
>>> tj = {"version": "1.0", "added_tokens": [], "normalizer": None,
...       "pre_tokenizer": None, "post_processor": None, "decoder": None, "model": bpe}
>>> mt = ModularTokenizer(tj, {"x": [0, 1, 2, 3], "y": [0, 1, 3]})
>>> mt.encode("abc"), mt.encode("abc", ["x"]), mt.encode("abc", ["y"])
([4], [2, 3], [0, 1, 3])
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

import numpy as np

from modtok import atomic
from modtok.artifacts.tokenizer_json import (
    check_proper,
    hf_tokenizer,
    model_ids,
    read_json,
    restrict,
    write_json,
)
from modtok.errors import OutOfVocabularyError, TokenizerFileError, UnknownLanguageError

TOKENIZER_FILE = "tokenizer.json"
LANG_TO_IDS_FILE = "lang_to_ids.json"


# --------------------------------------------------------------------------
# the view


class SubTokenizer:
    """The tokenizer of a union of languages; emits GLOBAL ids.

    ``global_ids[i]`` is the global id of local id ``i``.
    """

    def __init__(self, langs: tuple[str, ...], global_ids: np.ndarray, tokenizer_json: dict):
        self.langs = langs
        self.global_ids = global_ids
        self.tokenizer_json = tokenizer_json
        self.hf = hf_tokenizer(tokenizer_json)

    def __repr__(self) -> str:
        return f"SubTokenizer(langs={self.langs}, size={len(self.global_ids)})"

    def encode_local(self, text: str) -> list[int]:
        """Local ids (positions in ``global_ids``)."""
        return self.hf.encode(text, add_special_tokens=False).ids

    def encode(self, text: str) -> list[int]:
        """Global ids of ``text`` under the restricted model."""
        return self.global_ids[self.encode_local(text)].tolist()

    def encode_batch(self, texts: list[str]) -> list[list[int]]:
        encs = self.hf.encode_batch(list(texts), add_special_tokens=False)
        return [self.global_ids[e.ids].tolist() for e in encs]

    def to_local(self, global_ids) -> np.ndarray:
        """Local ids of global ids; :class:`OutOfVocabularyError` if one is outside."""
        g = np.asarray(global_ids, dtype=np.int64)
        pos = np.searchsorted(self.global_ids, g)
        pos = np.minimum(pos, len(self.global_ids) - 1)
        bad = self.global_ids[pos] != g
        if bad.any():
            first = int(g[bad].ravel()[0])
            raise OutOfVocabularyError(
                f"global id {first} is not in the sub-vocabulary of {'+'.join(self.langs)} "
                f"({int(bad.sum())} such id(s))"
            )
        return pos

    def to_global(self, local_ids) -> np.ndarray:
        return self.global_ids[np.asarray(local_ids, dtype=np.int64)]

    def decode(self, global_ids) -> str:
        return self.hf.decode(self.to_local(global_ids).tolist(), skip_special_tokens=False)


# --------------------------------------------------------------------------
# the modular tokenizer


class ModularTokenizer:
    """A global tokenizer with a sub-vocabulary per language.

    >>> bpe = {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": [["a", "b"]]}
    >>> mt = ModularTokenizer({"model": bpe, "added_tokens": []}, {"x": [0, 1], "y": [0, 1, 2]})
    >>> mt.ids(["x"]).tolist(), mt.mask(["y"]).tolist()
    ([0, 1], [True, True, True])
    """

    def __init__(self, tokenizer_json: dict, lang_to_ids: Mapping[str, Iterable[int]]):
        self.tokenizer_json = tokenizer_json
        vocab = model_ids(tokenizer_json)
        if tokenizer_json["model"].get("type") == "BPE":
            check_proper(tokenizer_json["model"])
        self.vocab_size = max(vocab.values()) + 1 if vocab else 0
        self._lang_ids: dict[str, np.ndarray] = {}
        for lang, ids in lang_to_ids.items():
            arr = np.unique(np.asarray(list(ids), dtype=np.int64))
            if len(arr) and (arr[0] < 0 or arr[-1] >= self.vocab_size):
                bad = int(arr[-1] if arr[-1] >= self.vocab_size else arr[0])
                raise TokenizerFileError(
                    f"lang_to_ids[{lang!r}] refers to id {bad}, outside the vocabulary "
                    f"(size {self.vocab_size})"
                )
            self._lang_ids[lang] = arr
        self.languages: list[str] = list(self._lang_ids)
        self._full = None
        self._subs: dict[frozenset, SubTokenizer] = {}

    def __repr__(self) -> str:
        kind = self.tokenizer_json["model"]["type"]
        return f"ModularTokenizer({kind}, vocab_size={self.vocab_size}, languages={len(self.languages)})"

    # ---- id sets
    def _check(self, langs) -> tuple[str, ...]:
        if isinstance(langs, str):
            langs = [langs]
        langs = tuple(sorted(set(langs)))
        if not langs:
            raise UnknownLanguageError("(empty subset)", self.languages)
        for lang in langs:
            if lang not in self._lang_ids:
                raise UnknownLanguageError(lang, self.languages)
        return langs

    def ids(self, langs) -> np.ndarray:
        """Sorted unique global ids of the union of ``langs``."""
        langs = self._check(langs)
        return np.unique(np.concatenate([self._lang_ids[lang] for lang in langs]))

    def mask(self, langs) -> np.ndarray:
        """Boolean mask of shape ``(vocab_size,)``: True on the ids of ``langs``."""
        m = np.zeros(self.vocab_size, dtype=bool)
        m[self.ids(langs)] = True
        return m

    def subtokenizer(self, langs) -> SubTokenizer:
        """The restricted tokenizer of the union of ``langs`` (cached)."""
        langs = self._check(langs)
        key = frozenset(langs)
        if key not in self._subs:
            gids = self.ids(langs)
            self._subs[key] = SubTokenizer(langs, gids, restrict(self.tokenizer_json, gids))
        return self._subs[key]

    # ---- encoding
    @property
    def hf(self):
        """The HF ``tokenizers.Tokenizer`` of the global model."""
        if self._full is None:
            self._full = hf_tokenizer(self.tokenizer_json)
        return self._full

    def encode(self, text: str, langs=None) -> list[int]:
        if langs is None:
            return self.hf.encode(text, add_special_tokens=False).ids
        return self.subtokenizer(langs).encode(text)

    def encode_batch(self, texts: list[str], langs=None) -> list[list[int]]:
        if langs is None:
            return [e.ids for e in self.hf.encode_batch(list(texts), add_special_tokens=False)]
        return self.subtokenizer(langs).encode_batch(texts)

    def decode(self, ids) -> str:
        return self.hf.decode([int(i) for i in ids], skip_special_tokens=False)

    # ---- files
    def save(self, directory) -> Path:
        """Write ``tokenizer.json`` and ``lang_to_ids.json`` atomically into ``directory``."""
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        lang_to_ids = {lang: ids.tolist() for lang, ids in self._lang_ids.items()}
        write_json(directory / TOKENIZER_FILE, self.tokenizer_json)
        atomic.write_json(directory / LANG_TO_IDS_FILE, lang_to_ids)
        return directory

    @classmethod
    def load(cls, directory) -> "ModularTokenizer":
        directory = Path(directory)
        tj = read_json(directory / TOKENIZER_FILE)
        l2i = read_json(directory / LANG_TO_IDS_FILE)
        if not isinstance(l2i, dict) or not all(isinstance(v, list) for v in l2i.values()):
            raise TokenizerFileError(f"{directory / LANG_TO_IDS_FILE}: expected {{lang: [ids]}}")
        if not isinstance(tj, dict) or "model" not in tj:
            raise TokenizerFileError(f"{directory / TOKENIZER_FILE}: no 'model' entry")
        try:
            return cls(tj, l2i)
        except TokenizerFileError as e:  # keep the subclass (MergeListError, ...), add the place
            raise type(e)(f"{directory}: {e}") from None
