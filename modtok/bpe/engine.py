"""The merge engine: incremental BPE statistics over unique pre-tokens.

Every BPE policy (standard, continued, sequential, concatenated, parity-aware)
is "pick a pair, merge it everywhere, repeat". The engine does the "merge it
everywhere" part once and fast, and keeps the statistics a policy needs to
pick:

- the corpus as **unique pre-tokens** (words) with a count per language
  (``counts[w, l]``), each a sequence of token ids (bytes 0..255 at first);
- **pair counts** in total and, optionally, per language;
- **token (unigram) counts** in total and per language;
- a **pair -> words index**, so a merge touches only the words that hold the
  pair (no per-merge rescan of the corpus);
- a **lazy max-heap** of pairs for "the most frequent pair".

Tie-break of :meth:`Engine.best_pair`: highest total count, then the smallest
``(rank[a], rank[b])``, where ``rank`` orders the 256 bytes by the code point
of their byte-level character (GPT-2's ``bytes_to_unicode``) and merged tokens
by id after them. That is exactly the order of HF ``BpeTrainer`` (which
numbers its initial alphabet by code point), so with the same pre-token
counts both learn the same merges, ties included.

>>> from collections import Counter
>>> eng = Engine.from_counts({"x": Counter({"abab": 2, "ab": 1})})
>>> a, b, n = eng.best_pair(); bytes([a, b]), n
(b'ab', 5)
>>> eng.merge(a, b, 256)
5
>>> int(eng.token_counts()[256]), eng.best_pair()[2]
(5, 2)
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

import numpy as np
from modtok.bpe import _kernels as K
from modtok.pretokenize import bytes_to_unicode


def byte_ranks() -> np.ndarray:
    """HF's id order of the 256 bytes: by the code point of the byte-level char."""
    table = bytes_to_unicode()
    order = sorted(range(256), key=lambda b: table[b])
    rank = np.empty(256, np.int64)
    rank[order] = np.arange(256)
    return rank


def words_from_counts(
    counts_by_lang: Mapping[str, Counter],
) -> tuple[list[str], list[bytes], np.ndarray]:
    """Unique pre-tokens of all languages (first-seen order) and their counts.

    Returns ``(langs, words, counts)`` with ``counts[w, l]`` (int64) the count of
    word ``w`` in language ``langs[l]``.
    """
    langs = list(counts_by_lang)
    index: dict[str, int] = {}
    rows: list[tuple[int, int, int]] = []
    for l, lang in enumerate(langs):
        for word, n in counts_by_lang[lang].items():
            w = index.setdefault(word, len(index))
            rows.append((w, l, n))
    counts = np.zeros((len(index), len(langs)), np.int64)
    if rows:
        r = np.asarray(rows, dtype=np.int64)
        np.add.at(counts, (r[:, 0], r[:, 1]), r[:, 2])
    words = [w.encode("utf-8") for w in index]
    return langs, words, counts


class Engine:
    """Incremental pair statistics over unique words with per-language counts.

    ``words``: byte strings (unique pre-tokens); ``counts``: shape (W, L) int64;
    ``merges``/``results``: an existing merge list (rank order) and its output ids,
    applied to every word first (continued / sequential BPE); ``capacity``: the
    largest token id + 1 expected (grown on demand); ``pair_counts_per_language``:
    also keep ``(pair, language)`` counts (memory: pairs x languages).
    """

    def __init__(
        self,
        words: Sequence[bytes],
        counts: np.ndarray,
        languages: Sequence[str] | None = None,
        merges: Sequence[tuple[int, int]] = (),
        results: Sequence[int] = (),
        rank: np.ndarray | None = None,
        capacity: int = 1024,
        pair_counts_per_language: bool = False,
    ):
        counts = np.ascontiguousarray(counts, dtype=np.int64)
        if counts.ndim == 1:
            counts = counts[:, None]
        if counts.shape[0] != len(words):
            raise ValueError(f"{len(words)} words but counts has {counts.shape[0]} rows")
        self.languages = list(languages) if languages is not None else [
            str(i) for i in range(counts.shape[1])
        ]
        W, L = counts.shape
        lens = np.fromiter((len(w) for w in words), np.int64, W)
        self.sym = np.frombuffer(b"".join(words), np.uint8).astype(np.int32)
        self.wstart = np.zeros(W, np.int64)
        np.cumsum(lens[:-1], out=self.wstart[1:]) if W > 1 else None
        self.wlen = lens.astype(np.int32)
        self.wlc = counts
        self.wcnt = counts.sum(axis=1)
        capacity = max(capacity, 256, max(results, default=0) + 1)
        if rank is None:
            rank = np.concatenate([byte_ranks(), np.arange(256, capacity, dtype=np.int64)])
        self.rank = np.ascontiguousarray(rank, dtype=np.int64)
        if len(self.rank) < capacity:
            self.rank = np.concatenate(
                [self.rank, np.arange(len(self.rank), capacity, dtype=np.int64)]
            )
        if len(merges):
            keys = (np.asarray(merges, np.int64)[:, 0] << K.KEY_SHIFT) | np.asarray(merges, np.int64)[:, 1]
            rk, rv = K.table_new(len(keys))
            for r in range(len(keys) - 1, -1, -1):  # first rank wins for a repeated pair
                K.table_put(rk, rv, keys[r], r)
            K.encode_words(self.sym, self.wstart, self.wlen, rk, rv, np.asarray(results, np.int64))
        self.tcnt = np.zeros(len(self.rank), np.int64)
        self.tlc = np.zeros((len(self.rank), L), np.int64)
        nlp = L if pair_counts_per_language else 0
        hint = max(1024, len(self.sym) // 4)
        hkeys, hvals = K.table_new(hint)
        pa, pb = np.zeros(hint, np.int32), np.zeros(hint, np.int32)
        pcnt, plc = np.zeros(hint, np.int64), np.zeros((hint, nlp), np.int64)
        phead = np.full(hint, -1, np.int64)
        nword = np.zeros(max(1024, len(self.sym)), np.int32)
        nnext = np.zeros(len(nword), np.int64)
        self.meta = np.zeros(4, np.int64)
        (self.hkeys, self.hvals, self.pa, self.pb, self.pcnt, self.plc, self.phead, self.nword,
         self.nnext, self.hc, self.ht, self.hp) = K.init_counts(
            self.sym, self.wstart, self.wlen, self.wcnt, self.wlc, self.rank, self.tcnt, self.tlc,
            hkeys, hvals, pa, pb, pcnt, plc, phead, nword, nnext,
            np.zeros(1, np.int64), np.zeros(1, np.int64), np.zeros(1, np.int64), self.meta,
        )
        self.tstamp = np.zeros(len(self.pa), np.int64)
        self.visit = np.zeros(W, np.int64)

    @classmethod
    def from_counts(cls, counts_by_lang: Mapping[str, Counter], **kw) -> "Engine":
        """An engine over ``{lang: Counter(pre-token -> count)}``."""
        langs, words, counts = words_from_counts(counts_by_lang)
        return cls(words, counts, languages=langs, **kw)

    # ---- statistics
    def best_pair(self) -> tuple[int, int, int] | None:
        """``(a, b, count)`` of the most frequent pair (see the module tie-break), or None."""
        pid = K.best(self.hc, self.ht, self.hp, self.pcnt, self.rank, self.pa, self.pb, self.meta)
        if pid < 0:
            return None
        return int(self.pa[pid]), int(self.pb[pid]), int(self.pcnt[pid])

    def _pid(self, a: int, b: int) -> int:
        return int(K.table_get(self.hkeys, self.hvals, (int(a) << K.KEY_SHIFT) | int(b)))

    def pair_count(self, a: int, b: int, lang: str | None = None) -> int:
        pid = self._pid(a, b)
        if pid < 0:
            return 0
        if lang is None:
            return int(self.pcnt[pid])
        if self.plc.shape[1] == 0:
            raise ValueError("per-language pair counts are off (pair_counts_per_language=False)")
        return int(self.plc[pid, self.languages.index(lang)])

    def pair_counts(self) -> dict[tuple[int, int], int]:
        """All pairs with a positive count (for tests and small corpora)."""
        n = int(self.meta[0])
        live = np.flatnonzero(self.pcnt[:n] > 0)
        return {(int(self.pa[p]), int(self.pb[p])): int(self.pcnt[p]) for p in live}

    def token_counts(self, lang: str | None = None) -> np.ndarray:
        """Occurrences of each token id in the current segmentation (a view)."""
        if lang is None:
            return self.tcnt
        return self.tlc[:, self.languages.index(lang)]

    def segmentation(self, w: int) -> list[int]:
        s = self.wstart[w]
        return self.sym[s : s + self.wlen[w]].tolist()

    # ---- the one mutation
    def _ensure(self, c: int) -> None:
        if c < len(self.tcnt):
            return
        cap = max(c + 1, 2 * len(self.tcnt))
        self.tcnt = np.concatenate([self.tcnt, np.zeros(cap - len(self.tcnt), np.int64)])
        self.tlc = np.concatenate(
            [self.tlc, np.zeros((cap - len(self.tlc), self.tlc.shape[1]), np.int64)]
        )
        self.rank = np.concatenate([self.rank, np.arange(len(self.rank), cap, dtype=np.int64)])

    def merge(self, a: int, b: int, c: int) -> int:
        """Replace every occurrence of (a, b) by token ``c``; returns how many (weighted)."""
        pid = self._pid(a, b)
        if pid < 0:
            return 0
        self._ensure(c)
        (self.hkeys, self.hvals, self.pa, self.pb, self.pcnt, self.plc, self.phead, self.nword,
         self.nnext, self.tstamp, self.hc, self.ht, self.hp, merged) = K.merge(
            pid, c, self.sym, self.wstart, self.wlen, self.wcnt, self.wlc, self.rank, self.tcnt,
            self.tlc, self.visit, self.hkeys, self.hvals, self.pa, self.pb, self.pcnt, self.plc,
            self.phead, self.nword, self.nnext, self.tstamp, self.hc, self.ht, self.hp, self.meta,
        )
        return int(merged)
