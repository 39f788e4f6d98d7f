"""How many tokens an HF BPE model makes of each of many pre-tokens, in one numba call.

An AdaptMix iteration measures a new tokenizer on the same dev pre-tokens
(:mod:`modtok.mixture.dev`): only the token count of each distinct pre-token
matters. Calling the HF model's ``tokenize`` once per pre-token costs ~2.5 us
of Python each (0.29 s for the 118k distinct pre-tokens of 16 x 997 FLORES dev
lines). :class:`Pieces` keeps the pre-tokens as one array of code points, and
:meth:`Pieces.lengths` reads the model's vocabulary and merges from its JSON
state and segments them all with the merge engine's kernel
(:func:`modtok.bpe.kernels.encode_words`, HF's rule: lowest rank first,
leftmost first).

It answers only for a *plain* BPE model, where that rule is the whole story:
no dropout, no subword prefix or end-of-word suffix, no repeated merge, and
every character of every piece in the vocabulary (so no unknown-token or byte
fallback handling is involved). ``ignore_merges`` (a piece that is itself a
token stays whole) is honoured. Otherwise it returns ``None`` and the caller
tokenizes piece by piece.

>>> from tokenizers import models
>>> bpe = models.BPE({"a": 0, "b": 1, "c": 2, "ab": 3, "abc": 4}, [("a", "b"), ("ab", "c")])
>>> Pieces(["abc", "cab", "b"]).lengths(bpe).tolist()
[1, 2, 1]
>>> Pieces(["abd"]).lengths(bpe) is None     # 'd' is unknown: not plain
True
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from itertools import chain
from operator import itemgetter

import numpy as np

from modtok.bpe import kernels as K
from modtok.bpe.model import BPEModel
from modtok.errors import UsageError
from modtok.text.pretokenize import unicode_to_bytes


def _plain_state(model) -> dict | None:
    """The JSON state of an HF ``models.BPE`` whose segmentation is the merge rule alone."""
    from tokenizers import models

    if not isinstance(model, models.BPE):
        return None
    state = json.loads(model.__getstate__())
    if state.get("dropout") or state.get("continuing_subword_prefix") or state.get("end_of_word_suffix"):
        return None
    return state


class Pieces:
    """Distinct pre-tokens as one flat array of code points (built once).

    ``lengths(model)`` is the model's token count of each piece, shape
    ``(len(pieces),)``, or ``None`` when the model is not a plain BPE (see the
    module docstring); ``lengths(model, rows)`` of pieces ``rows`` only, in that order
    (notebook 01's subset of three languages segments its own test pieces, not the 39
    languages').
    """

    def __init__(self, pieces: Sequence[str]):
        self.pieces = list(pieces)
        points = np.frombuffer("".join(self.pieces).encode("utf-32-le"), np.uint32)  # (n_chars,)
        sizes = np.fromiter(map(len, self.pieces), np.int64, count=len(self.pieces))
        # the engine's word rows, up to the two columns encode_words reads and writes
        self._word = np.zeros((len(self.pieces), max(K.W_START, K.W_LENGTH) + 1), np.int64)
        self._word[:, K.W_LENGTH] = sizes
        np.cumsum(sizes[:-1], out=self._word[1:, K.W_START])
        # the distinct characters, and each position's index among them
        self._chars, self._char_index = np.unique(points, return_inverse=True)

    def lengths(self, model, rows: np.ndarray | None = None) -> np.ndarray | None:
        state = _plain_state(model)
        if state is None:
            return None
        vocab: dict[str, int] = state["vocab"]
        char_ids = np.fromiter((vocab.get(chr(c), -1) for c in self._chars), np.int64, count=len(self._chars))
        if (char_ids < 0).any():
            return None
        merges = state["merges"]  # [[a, b], ...]
        # the parts' and results' ids (HF refuses a model where one is missing), by maps
        # that run in C: a tuple per merge took twice as long
        left, right, result = (np.fromiter(map(vocab.__getitem__, parts), np.int64, count=len(merges)) for parts in
                               (map(itemgetter(0), merges), map(itemgetter(1), merges), map("".join, merges)))
        keys = (left << K.KEY_SHIFT) | right
        if len(np.unique(keys)) < len(keys):
            return None  # a repeated merge: which rank HF keeps is its implementation's business
        out = self._segmented(char_ids, keys, result, rows)
        if state.get("ignore_merges"):
            pieces = self.pieces if rows is None else [self.pieces[r] for r in rows]
            out[np.fromiter((p in vocab for p in pieces), bool, count=len(pieces))] = 1
        return out

    def model_lengths(self, model: BPEModel, rows: np.ndarray | None = None) -> np.ndarray:
        """:meth:`lengths` under a modtok :class:`~modtok.bpe.model.BPEModel` itself, for pieces
        cut by a byte-level pipeline (HF's ``ByteLevel`` alphabet, what its export
        :func:`~modtok.bpe.export.hf_tokenizer` cuts): the same numbers as ``lengths`` of the
        export's model (``tests/test_bpe_lengths.py``), without building it (the JSON, HF's parse and
        the state read back took 0.9 s of a 38-language subset in notebook 01).

        >>> m = BPEModel([(97, 98), (256, 99)], "whitespace")       # a+b, ab+c
        >>> Pieces(["abc", "cab", "Ġab"]).model_lengths(m).tolist()  # Ġ: the byte-level space
        [1, 2, 2]
        >>> Pieces(["abc", "cab", "Ġab"]).model_lengths(m, rows=np.array([2, 0])).tolist()
        [2, 1]
        """
        byte_of = unicode_to_bytes()
        char_ids = np.fromiter((byte_of.get(chr(c), -1) for c in self._chars), np.int64, count=len(self._chars))
        if (char_ids < 0).any():
            bad = "".join(chr(c) for c in self._chars[char_ids < 0][:5])
            raise UsageError(f"pieces hold characters outside the byte-level alphabet ({bad!r}): a BPEModel "
                             "segments only pieces cut by a byte-level pipeline")
        merges = np.fromiter(chain.from_iterable(model.merges), np.int64, 2 * len(model.merges)).reshape(-1, 2)
        keys = (merges[:, 0] << K.KEY_SHIFT) | merges[:, 1]
        return self._segmented(char_ids, keys, np.asarray(model.results, np.int64), rows)

    def _segmented(self, char_ids: np.ndarray, keys: np.ndarray, result: np.ndarray,
                   rows: np.ndarray | None) -> np.ndarray:
        """Token count of each piece (of ``rows``; None: all): its characters as
        ``char_ids[distinct character]``, then merge ``keys[r]`` (``a << KEY_SHIFT | b``, unique)
        into ``result[r]``, lowest rank first."""
        table_keys, table_ids = K.table_of_ranks(keys)
        symbols = char_ids[self._char_index].astype(np.int32)
        word = self._word.copy() if rows is None else self._word[rows]
        K.segment_words(symbols, word, table_keys, table_ids, result)
        return word[:, K.W_LENGTH].copy()
