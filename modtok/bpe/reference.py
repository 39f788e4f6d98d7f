"""The BPE reference: a naive, obviously-correct twin of the merge engine.

:class:`ReferenceEngine` has the public surface of :class:`modtok.bpe.engine.Engine`
(``best_pair``, ``tied_pairs``, ``pair_count``, ``pair_counts``,
``token_counts``, ``num_tokens``, ``merge``) but keeps every word as a tuple and
recounts everything from scratch on each question. It is slow on purpose: every
differential test drives both with the same calls and compares the answers, the
role :mod:`modtok.unigram.reference` plays for the lattice.

The tie-break is the engine's, written out: the highest count, then the
smallest ``(rank[a], rank[b])``, where ``rank`` orders the 256 bytes by the code
point of their byte-level character (:func:`modtok.bpe.engine.byte_ranks`) and
merged tokens by id after them — HF ``BpeTrainer``'s order.

>>> from collections import Counter
>>> ref = ReferenceEngine({"x": Counter({"hug": 10, "pug": 5}), "y": Counter({"hugs": 5})})
>>> ref.best_pair(), ref.best_pair("y")[2]
((117, 103, 20), 5)
>>> train(ref, 258).merges                       # u+g, then h+ug
[(117, 103), (104, 256)]
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import TypeVar

import numpy as np

from modtok.bpe.engine import byte_ranks
from modtok.bpe.model import BPEModel

T = TypeVar("T")


def merge_word(seg: Sequence[T], a: T, b: T, c: T) -> tuple[T, ...]:
    """``seg`` with every (a, b) replaced by ``c``, left to right, without overlap (ids
    here; the pieces of a SentencePiece extension in :func:`modtok.adapt.spm.learn`).

    >>> merge_word((1, 1, 1), 1, 1, 9), merge_word(("▁", "क", "ा"), "क", "ा", "का")
    ((9, 1), ('▁', 'का'))
    """
    out, i = [], 0
    while i < len(seg):
        if i + 1 < len(seg) and seg[i] == a and seg[i + 1] == b:
            out.append(c)
            i += 2
        else:
            out.append(seg[i])
            i += 1
    return tuple(out)


class ReferenceEngine:
    """Words as tuples per language, every statistic recounted on demand."""

    def __init__(self, counts_by_lang: Mapping[str, Counter]):
        self.languages = list(counts_by_lang)
        self.segs: dict[str, Counter] = {
            lang: Counter({tuple(w.encode("utf-8")): n for w, n in c.items()})
            for lang, c in counts_by_lang.items()
        }
        self._byte_rank = byte_ranks()

    def rank(self, t: int) -> int:
        return int(self._byte_rank[t]) if t < 256 else t

    def _langs(self, lang: str | None) -> list[str]:
        return self.languages if lang is None else [lang]

    def pair_counts(self, lang: str | None = None) -> dict[tuple[int, int], int]:
        out: Counter = Counter()
        for lg in self._langs(lang):
            for seg, n in self.segs[lg].items():
                for p in zip(seg, seg[1:]):
                    out[p] += n
        return {p: m for p, m in out.items() if m > 0}

    def pair_count(self, a: int, b: int, lang: str | None = None) -> int:
        return self.pair_counts(lang).get((a, b), 0)

    def token_counts(self, lang: str | None = None) -> Counter:
        out: Counter = Counter()
        for lg in self._langs(lang):
            for seg, n in self.segs[lg].items():
                for t in seg:
                    out[t] += n
        return out

    def num_tokens(self, lang: str | None = None) -> int:
        return sum(self.token_counts(lang).values())

    def tied_pairs(self, lang: str | None = None) -> list[tuple[int, int]]:
        """Pairs at the maximum count, in tie-break order."""
        counts = self.pair_counts(lang)
        if not counts:
            return []
        top = max(counts.values())
        return sorted((p for p, m in counts.items() if m == top), key=lambda p: (self.rank(p[0]), self.rank(p[1])))

    def best_pair(self, lang: str | None = None) -> tuple[int, int, int] | None:
        ties = self.tied_pairs(lang)
        if not ties:
            return None
        a, b = ties[0]
        return a, b, self.pair_count(a, b, lang)

    def merge(self, a: int, b: int, c: int) -> int:
        merged = 0
        for lang, segs in self.segs.items():
            out: Counter = Counter()
            for seg, n in segs.items():
                new = merge_word(seg, a, b, c)
                merged += (len(seg) - len(new)) * n
                out[new] += n
            self.segs[lang] = out
        return merged


def train(engine, vocab_size: int) -> BPEModel:
    """Standard BPE on any engine-like object (this reference or the engine):
    merge the best pair until the model has ``vocab_size`` tokens."""
    model = BPEModel([], scheme="whitespace")
    while len(model) < vocab_size:
        best = engine.best_pair()
        if best is None:
            break
        a, b, _ = best
        engine.merge(a, b, model.add_merge(a, b))
    return model


def as_dict(counts) -> dict[int, int]:
    """Token counts (engine array or reference Counter) as ``{id: count > 0}``."""
    if isinstance(counts, np.ndarray):
        return {int(t): int(counts[t]) for t in np.flatnonzero(counts)}
    return {t: n for t, n in counts.items() if n}
