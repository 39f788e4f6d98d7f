"""Readable pure-Python Unigram lattice: the oracle for the compiled one.

Same semantics as :mod:`modtok.unigram.lattice` (byte fallback through an
unknown edge where no single-character piece is allowed, ties to the earliest
start), written as plainly as possible. Slow; used by the differential tests.

>>> vocab = {"a": -1.0, "b": -1.5, "ab": -1.2}
>>> viterbi("abb", vocab, unk_score=-20.0)
['ab', 'b']
>>> viterbi("ax", vocab, unk_score=-20.0)       # 'x' has no piece: one unknown edge
['a', None]
>>> counts, logz = expected_counts("ab", vocab, unk_score=-20.0)
>>> round(counts["ab"], 4), round(counts["a"], 4)   # e^-1.2 vs e^-2.5 for a+b
(0.7858, 0.2142)
"""

from __future__ import annotations

import math
from collections.abc import Mapping


def edges(text: str, vocab: Mapping[str, float], unk_score: float) -> list[tuple[int, int, str | None, float]]:
    """All lattice edges ``(start, end, piece or None for unknown, score)``, by start."""
    longest = max(map(len, vocab), default=1)
    out = []
    for s in range(len(text)):
        for e in range(s + 1, min(len(text), s + longest) + 1):
            if text[s:e] in vocab:
                out.append((s, e, text[s:e], vocab[text[s:e]]))
        if text[s] not in vocab:
            out.append((s, s + 1, None, unk_score))
    return out


def viterbi(text: str, vocab: Mapping[str, float], unk_score: float) -> list[str | None]:
    """Best segmentation; ``None`` stands for an unknown (byte-fallback) character."""
    best = {0: (0.0, None, None)}  # end -> (score, start, piece)
    for s, e, piece, score in edges(text, vocab, unk_score):
        cand = best[s][0] + score
        if e not in best or cand > best[e][0]:
            best[e] = (cand, s, piece)
    path, e = [], len(text)
    while e > 0:
        _, s, piece = best[e]
        path.append(piece)
        e = s
    return path[::-1]


def expected_counts(text: str, vocab: Mapping[str, float], unk_score: float) -> tuple[dict, float]:
    """Forward-backward: ``({piece or None: expected count}, log Z)``."""
    es = edges(text, vocab, unk_score)
    n = len(text)
    alpha = [-math.inf] * (n + 1)
    beta = [-math.inf] * (n + 1)
    alpha[0], beta[n] = 0.0, 0.0
    for s, e, _, w in es:
        alpha[e] = _logaddexp(alpha[e], alpha[s] + w)
    for s, e, _, w in reversed(es):
        beta[s] = _logaddexp(beta[s], w + beta[e])
    counts: dict = {}
    for s, e, piece, w in es:
        counts[piece] = counts.get(piece, 0.0) + math.exp(alpha[s] + w + beta[e] - alpha[n])
    return counts, alpha[n]


def all_segmentations(text: str, vocab: Mapping[str, float], unk_score: float):
    """Every path through the lattice as ``(pieces, score)`` (exponentially many)."""
    es = edges(text, vocab, unk_score)
    out_of = {}
    for s, e, piece, w in es:
        out_of.setdefault(s, []).append((e, piece, w))

    def walk(s):
        if s == len(text):
            yield [], 0.0
            return
        for e, piece, w in out_of.get(s, []):
            for rest, score in walk(e):
                yield [piece, *rest], w + score

    return list(walk(0))


def _logaddexp(a: float, b: float) -> float:
    if a == -math.inf:
        return b
    if b == -math.inf:
        return a
    m = max(a, b)
    return m + math.log1p(math.exp(-abs(a - b)))
