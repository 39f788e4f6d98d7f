"""Subtokenizers of a Unigram model: restriction to a piece set, and
frequency-based extraction.

Restriction (the paper's modular Unigram, §4.1): a language subset keeps its own
pieces with their (re-estimated) scores; every other normal piece gets
probability 0 -- it is simply not a lattice edge. Scores are *not*
renormalised, so the restricted Viterbi path is exactly the best path of the
global model among the paths that use only kept pieces. (Renormalising is not
neutral: dividing every kept probability by their sum Z < 1 adds -log Z > 0 to
every piece, which favours segmentations with more pieces.)
:class:`RestrictedUnigram` is that encoder (the reference restricted Viterbi);
``ModularTokenizer.subtokenizer`` and :meth:`UnigramModel.sentencepiece_proto`
export the same segmentation.

Frequency-based extraction (the paper's alternative, Table 12): encode a
language's corpus with the full multilingual model and keep the ``k`` most
frequent pieces. Its compression is bounded by the base tokenizer's.

>>> from modtok.unigram.model import UnigramModel
>>> from modtok.unigram.merge import BASE_PIECES, BASE_TYPES
>>> pieces = BASE_PIECES + ["▁", "a", "b", "▁ab", "ab"]
>>> m = UnigramModel(pieces, [0.0] * 259 + [-2.0, -1.5, -1.5, -1.0, -2.5], BASE_TYPES + [1] * 5)
>>> piece_frequencies(m, ["ab ab", "ba"])[259:].tolist()   # ▁ab ▁ab | ▁ b a
[1, 1, 1, 2, 0]
>>> frequency_subvocab(m, ["ab ab", "ba"], k=259 + 2)[259:].tolist()   # ▁ab, then ▁ (tie with a, b: lower id)
[259, 262]
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from modtok.errors import BudgetError, DataError
from modtok.unigram.model import UnigramModel


class RestrictedUnigram:
    """The restricted-Viterbi encoder of ``model`` on the piece ids ``ids``
    (base pieces are always added); emits global ids.

    >>> from modtok.unigram.model import UnigramModel
    >>> from modtok.unigram.merge import BASE_PIECES, BASE_TYPES
    >>> m = UnigramModel(BASE_PIECES + ["▁", "a", "▁a"], [0.0] * 259 + [-1.0, -1.0, -1.5], BASE_TYPES + [1] * 3)
    >>> RestrictedUnigram(m, [259, 260, 261]).encode("a"), RestrictedUnigram(m, [259, 260]).encode("a")
    ([261], [259, 260])
    """

    def __init__(self, model: UnigramModel, ids):
        self.model = model
        self.global_ids = np.union1d(model.base_ids, np.asarray(ids, dtype=np.int64))
        if len(self.global_ids) and (self.global_ids[0] < 0 or self.global_ids[-1] >= len(model)):
            raise DataError(f"piece ids must lie in [0, {len(model)})")

    def __len__(self) -> int:
        return len(self.global_ids)

    def encode(self, text: str) -> list[int]:
        return self.model.encode(text, self.global_ids)

    def encode_batch(self, texts: Sequence[str]) -> list[list[int]]:
        return self.model.encode(list(texts), self.global_ids)

    def decode(self, ids) -> str:
        return self.model.decode(ids)

    def sentencepiece_proto(self) -> bytes:
        """The ``.model`` bytes (pieces outside the set typed ``UNUSED``)."""
        return self.model.sentencepiece_proto(self.global_ids)


def piece_frequencies(model: UnigramModel, lines: Sequence[str], ids=None) -> np.ndarray:
    """How often each piece id occurs in the (restricted) Viterbi encoding of
    ``lines``: int64 array of shape ``(len(model),)``."""
    counts = np.zeros(len(model), dtype=np.int64)
    for seq in model.encode(list(lines), ids):
        np.add.at(counts, seq, 1)
    return counts


def frequency_subvocab(model: UnigramModel, lines: Sequence[str], k: int) -> np.ndarray:
    """Sorted ids of the base pieces plus the ``k - n_base`` normal pieces used
    most often when the full model encodes ``lines`` (ties: lower id first).

    ``k`` counts every piece, like a sentencepiece ``vocab_size``. Raises
    :class:`BudgetError` if it leaves no normal piece or asks for more normal
    pieces than the corpus uses.
    """
    if not any(line.strip() for line in lines):
        raise DataError("cannot extract a sub-vocabulary from an empty corpus")
    n_base = len(model.base_ids)
    if k <= n_base:
        raise BudgetError(f"k={k} leaves no normal piece beyond the {n_base} base pieces")
    freq = piece_frequencies(model, lines)
    normal = model.normal_ids
    used = normal[freq[normal] > 0]
    if k - n_base > len(used):
        raise BudgetError(
            f"k={k} asks for {k - n_base} normal pieces but the corpus uses only {len(used)} "
            f"(the most k can be is {n_base + len(used)})"
        )
    order = used[np.lexsort((used, -freq[used]))]  # by frequency desc, then id asc
    return np.sort(np.concatenate([model.base_ids, order[: k - n_base]]))
