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

import itertools
from collections import Counter
from collections.abc import Mapping, Sequence

import numpy as np

from modtok.bpe import kernels as K
from modtok.errors import UnknownLanguageError, UsageError
from modtok.text.lexer import WordCounts
from modtok.text.pretokenize import bytes_to_unicode


def byte_ranks() -> np.ndarray:
    """HF's id order of the 256 bytes: by the code point of the byte-level char."""
    table = bytes_to_unicode()
    order = sorted(range(256), key=lambda b: table[b])
    rank = np.empty(256, np.int64)
    rank[order] = np.arange(256)
    return rank


def _aligned_rows(n: int, columns: int) -> np.ndarray:
    """Zeroed int64 ``(n, columns)`` whose rows start at multiples of 64 bytes (one cache
    line per row when ``columns`` is 8; numpy itself aligns to 16)."""
    buf = np.zeros(n * columns + 8, np.int64)
    skip = (-buf.ctypes.data % 64) // 8
    return buf[skip : skip + n * columns].reshape(n, columns)


def _sole_column(counts: np.ndarray) -> np.ndarray:
    """Per row: the one column with a non-zero count, -1 if several, -2 if none.

    >>> _sole_column(np.array([[0, 3], [1, 2], [0, 0]])).tolist()
    [1, -1, -2]
    """
    if counts.shape[1] == 0:
        return np.full(counts.shape[0], -2, np.int64)
    present = counts != 0
    n = present.sum(axis=1)
    return np.where(n == 1, present.argmax(axis=1), np.where(n == 0, -2, -1)).astype(np.int64)


def words_from_counts(
    counts_by_lang: Mapping[str, Counter],
) -> tuple[list[str], list[bytes], np.ndarray]:
    """Unique pre-tokens of all languages (first-seen order) and their counts.

    Returns ``(langs, words, counts)`` with ``counts[w, l]`` (int64) the count of
    word ``w`` in language ``langs[l]``.
    """
    langs = list(counts_by_lang)
    if len(langs) == 1:  # one Counter: its own order is first-seen order (0.5 -> 0.2 s for 591k words)
        c = counts_by_lang[langs[0]]
        return langs, [w.encode("utf-8") for w in c], np.fromiter(c.values(), np.int64, len(c))[:, None]
    first_seen: dict[str, None] = {}
    for lang in langs:  # dict.fromkeys/update run in C: no Python loop per word
        first_seen.update(dict.fromkeys(counts_by_lang[lang]))
    index = dict(zip(first_seen, range(len(first_seen))))
    counts = np.zeros((len(index), len(langs)), np.int64)
    for l, lang in enumerate(langs):
        c = counts_by_lang[lang]
        rows = np.fromiter(map(index.__getitem__, c), np.int64, len(c))
        counts[rows, l] = np.fromiter(c.values(), np.int64, len(c))  # a word once per language
    words = [w.encode("utf-8") for w in index]
    return langs, words, counts


def _packed(words) -> tuple[np.ndarray, np.ndarray]:
    """``(bytes, lengths)`` of the words: byte strings joined, or a pair of those arrays as it
    is (:class:`~modtok.text.lexer.WordCounts`' ``data`` and ``lengths``: no string per word).

    >>> [a.tolist() for a in _packed([b"ab", b"c"])]
    [[97, 98, 99], [2, 1]]
    """
    if isinstance(words, tuple) and len(words) == 2 and isinstance(words[0], np.ndarray):
        data, lengths = words
        return np.asarray(data, np.uint8), np.asarray(lengths, np.int64)
    return np.frombuffer(b"".join(words), np.uint8), np.fromiter(map(len, words), np.int64, len(words))


class Engine:
    """Incremental pair statistics over unique words with per-language counts.

    ``words``: byte strings (unique pre-tokens), or ``(bytes, lengths)`` arrays of them
    (:meth:`from_word_counts`); ``counts``: shape (W, L) int64;
    ``tracked``: shape (W, D) counts of columns that are segmented and totalled
    (:meth:`tracked_totals`) but enter no statistic (a word may be only there);
    ``merges``/``results``: an existing merge list (rank order) and its output ids,
    applied to every word first (continued / sequential BPE); ``capacity``: the
    largest token id + 1 expected (grown on demand); ``pair_counts_per_language``:
    also keep ``(pair, language)`` counts and one heap per language, for
    :meth:`best_pair` ``(lang=...)`` (memory: pairs x languages); ``total_best``: keep
    the heap of total counts that :meth:`best_pair` ``()`` reads (a policy that only
    asks per language turns it off, here or later with :meth:`stop_total_best`).

    The public surface is what a policy needs: :meth:`best_pair`,
    :meth:`tied_pairs`, :meth:`pair_count`, :meth:`pair_counts`,
    :meth:`token_counts`, :meth:`num_tokens`, :meth:`segmentation` and the one
    mutation :meth:`merge`. The kernel state is private.

    >>> from collections import Counter
    >>> eng = Engine.from_counts({"x": Counter({"ab": 2}), "y": Counter({"bc": 3})},
    ...                          pair_counts_per_language=True)
    >>> [bytes(p[:2]) for p in (eng.best_pair(), eng.best_pair("x"))], eng.num_tokens("y")
    ([b'bc', b'ab'], 6)
    """

    def __init__(
        self,
        words: Sequence[bytes] | tuple[np.ndarray, np.ndarray],
        counts: np.ndarray,
        languages: Sequence[str] | None = None,
        merges: Sequence[tuple[int, int]] = (),
        results: Sequence[int] = (),
        rank: np.ndarray | None = None,
        capacity: int = 1024,
        pair_counts_per_language: bool = False,
        total_best: bool = True,
        tracked: np.ndarray | None = None,
    ):
        counts = np.ascontiguousarray(counts, dtype=np.int64)
        if counts.ndim == 1:
            counts = counts[:, None]
        data, lens = _packed(words)
        if counts.shape[0] != len(lens):
            raise UsageError(f"{len(lens)} words but counts has {counts.shape[0]} rows")
        if lens.sum() != len(data):
            raise UsageError(f"the words' lengths add up to {int(lens.sum())} bytes but their data has {len(data)}")
        self.languages = list(languages) if languages is not None else [
            str(i) for i in range(counts.shape[1])
        ]
        if len(self.languages) != counts.shape[1]:
            raise UsageError(f"{len(self.languages)} languages but counts has {counts.shape[1]} columns")
        W, L = counts.shape
        tracked = np.zeros((W, 0), np.int64) if tracked is None else np.ascontiguousarray(tracked, dtype=np.int64)
        if tracked.ndim != 2 or tracked.shape[0] != W:
            raise UsageError(f"tracked counts must have shape ({W}, D), got {tracked.shape}")
        sole, tracked_sole = _sole_column(counts), _sole_column(tracked)
        word = _aligned_rows(W, K.WORD_COLUMNS)
        if W > 1:
            np.cumsum(lens[:-1], out=word[1:, K.W_START])
        word[:, K.W_LENGTH] = lens
        word[:, K.W_COUNT] = counts.sum(axis=1)
        word[:, K.W_SOLE] = sole
        word[:, K.W_SOLE_TRACKED] = tracked_sole
        if tracked.shape[1]:
            word[:, K.W_TRACKED] = np.where(tracked_sole >= 0, tracked[np.arange(W), np.maximum(tracked_sole, 0)], 0)
        self._words = K.Words(
            symbols=data.astype(np.int32),
            word=word,
            lang_count=counts,
            token_count=np.zeros(0, np.int64),
            token_lang_count=np.zeros((0, L), np.int64),
            tokens=np.zeros(L + 1, np.int64),
            tracked=tracked,
            tracked_tokens=np.zeros(tracked.shape[1], np.int64),
        )
        capacity = max(capacity, 256, max(results, default=0) + 1)
        if rank is None:
            rank = byte_ranks()
        self._rank = np.ascontiguousarray(rank, dtype=np.int64)
        if len(merges):
            # a list of tuples (a BPEModel's merges) read flat: 0.07 s for 124k merges, np.asarray 0.25
            m = np.asarray(merges, np.int64) if isinstance(merges, np.ndarray) else np.fromiter(
                itertools.chain.from_iterable(merges), np.int64, 2 * len(merges)).reshape(-1, 2)
            keys = (m[:, 0] << K.KEY_SHIFT) | m[:, 1]
            rk, rv = K.table_of_ranks(keys)  # first rank wins for a repeated pair
            wd = self._words
            K.segment_words(wd.symbols, wd.word, rk, rv, np.asarray(results, np.int64))
        self._ensure(capacity - 1)
        # Room for few pairs (the distinct pairs are far fewer than positions: 4,130 of
        # 1.9M on the parity benchmark of modtok.bpe.kernels; the arrays grow on demand, and
        # oversized rows cost every later regrowth) and for a list chunk per 4 adjacent
        # positions (the parity benchmark ends its 4,000 merges with 446k chunks for 1.9M
        # positions; more are grown on demand). np.zeros
        # maps untouched pages lazily, so the headroom costs memory only once used.
        positions = int(self._words.word[:, K.W_LENGTH].sum()) - W
        pairs = K.new_pairs(4096, positions // 4, L, pair_counts_per_language, total_best)
        self._pairs = K.init_counts(self._words, self._rank, pairs)
        # Once a policy asks best_pair() for the total counts, merge() finds the next total
        # best pair in the same kernel call (K.merge_best) and best_pair() answers from
        # `_best`: one unboxing of the state per merge instead of two. The heap
        # orders pairs totally (count, then the unique rank tie), so asking early changes
        # no answer. `_last`: (a, b, pid) of the last pair answered (a pair keeps its id
        # for good), so merging it skips the hash lookup.
        self._total_asked = False
        self._cached = False
        self._best: tuple[int, int, int] | None = None
        self._last: tuple[int, int, int] | None = None

    @classmethod
    def from_counts(
        cls, counts_by_lang: Mapping[str, Counter], tracked: Mapping[str, Counter] | None = None, **kw
    ) -> Engine:
        """An engine over ``{lang: Counter(pre-token -> count)}``; ``tracked``: more
        ``{name: Counter}`` columns that are only segmented and totalled
        (:meth:`tracked_totals`)."""
        if tracked is None:
            langs, words, counts = words_from_counts(counts_by_lang)
            return cls(words, counts, languages=langs, **kw)
        columns = [("counts", k) for k in counts_by_lang] + [("tracked", k) for k in tracked]
        both = dict(zip(columns, [*counts_by_lang.values(), *tracked.values()]))
        _, words, counts = words_from_counts(both)
        L = len(counts_by_lang)
        return cls(words, counts[:, :L], languages=list(counts_by_lang), tracked=counts[:, L:], **kw)

    @classmethod
    def from_word_counts(cls, counts: WordCounts, languages: Sequence[str] | None = None, **kw) -> Engine:
        """An engine over :class:`~modtok.text.lexer.WordCounts` (what
        :func:`modtok.text.pretokenize.count_arrays` makes): the words' bytes and counts as
        they are, no string per pre-token; the same engine as :meth:`from_counts` on the
        same counts as Counters. ``languages``: only these columns, and the words that occur
        in them (sequential BPE's one language at a time).

        >>> from modtok.text.pretokenize import count_arrays
        >>> wc = count_arrays({"x": ["abab ab"], "y": ["cd"]}, "gpt2")
        >>> eng = Engine.from_word_counts(wc)
        >>> bytes(eng.best_pair()[:2]), eng.num_tokens()
        (b'ab', 9)
        >>> Engine.from_word_counts(wc, languages=["y"]).segmentation(0)
        [99, 100]
        """
        if languages is None:
            return cls((counts.data, counts.lengths), counts.counts, languages=counts.languages, **kw)
        for lang in languages:
            if lang not in counts.languages:
                raise UnknownLanguageError(lang, counts.languages)
        columns = counts.counts[:, [counts.languages.index(lang) for lang in languages]]
        rows = np.flatnonzero(columns.any(axis=1))
        starts = np.cumsum(counts.lengths) - counts.lengths
        data = K.gather_words(counts.data, starts, counts.lengths, rows)  # the kept words' bytes
        return cls((data, counts.lengths[rows]), columns[rows], languages=list(languages), **kw)

    # ---- statistics
    def _lang(self, lang: str | None, pairs: bool = False) -> int:
        """Column of ``lang`` (-1 for None); with ``pairs``, per-language pair counts must be on."""
        if lang is None:
            return -1
        try:
            col = self.languages.index(lang)
        except ValueError:
            raise UnknownLanguageError(lang, self.languages) from None
        if pairs and self._pairs.lang_count.shape[1] == 0:
            raise UsageError("per-language pair counts are off (pass pair_counts_per_language=True)")
        return col

    def _heap(self, lang: str | None) -> int:
        """The heap that :meth:`best_pair` / :meth:`tied_pairs` read for ``lang``."""
        col = self._lang(lang, pairs=True)
        if col < 0 and not self._pairs.meta[K.TOTAL_ON]:
            raise UsageError("the heap of total counts is off (total_best=False or stop_total_best())")
        return col

    def _pair(self, pid: int) -> tuple[int, int]:
        return int(self._pairs.left[pid]), int(self._pairs.right[pid])

    def best_pair(self, lang: str | None = None) -> tuple[int, int, int] | None:
        """``(a, b, count)`` of the most frequent pair overall, or in language ``lang``
        (``count`` is then the count in ``lang``); None when no pair is left.
        Ties: the smallest ``(rank[a], rank[b])`` (module docstring)."""
        if lang is None and self._cached:
            return self._best
        col = self._heap(lang)
        if col < 0:
            self._total_asked = True
        pid = K.best(self._pairs, self._rank, col)
        if pid < 0:
            return None
        a, b = self._pair(pid)
        self._last = (a, b, pid)
        return a, b, int(self._pairs.count[pid] if col < 0 else self._pairs.lang_count[pid, col])

    def tied_pairs(self, lang: str | None = None) -> list[tuple[int, int]]:
        """Every pair whose count (overall, or in ``lang``) equals the current maximum,
        in tie-break order, so a policy can apply a tie-break of its own; [] if none."""
        col = self._heap(lang)
        pids = K.ties(self._pairs, self._rank, col)
        if len(pids) == 1:  # the common case, once per merge of a policy that breaks ties itself
            return [self._pair(pids[0])]
        return sorted((self._pair(p) for p in pids), key=lambda ab: (self._rank[ab[0]], self._rank[ab[1]]))

    def _pid(self, a: int, b: int) -> int:
        st = self._pairs
        return int(K.table_get(st.table_keys, st.table_ids, (int(a) << K.KEY_SHIFT) | int(b)))

    def pair_count(self, a: int, b: int, lang: str | None = None) -> int:
        """Occurrences of the adjacent pair ``(a, b)`` overall or in ``lang``."""
        col = self._lang(lang, pairs=True)
        pid = self._pid(a, b)
        if pid < 0:
            return 0
        return int(self._pairs.count[pid] if col < 0 else self._pairs.lang_count[pid, col])

    def pair_counts(self, lang: str | None = None) -> dict[tuple[int, int], int]:
        """All pairs with a positive count, overall or in ``lang`` (for tests and small corpora)."""
        col = self._lang(lang, pairs=True)
        st = self._pairs
        n = int(st.meta[K.N_PAIRS])
        cnt = st.count[:n] if col < 0 else st.lang_count[:n, col]
        return {self._pair(p): int(cnt[p]) for p in np.flatnonzero(cnt > 0)}

    def token_counts(self, lang: str | None = None) -> np.ndarray:
        """Occurrences of each token id in the current segmentation, overall or in
        ``lang`` (a read-only view; re-read it after :meth:`merge`, which may grow it)."""
        col = self._lang(lang)
        wd = self._words
        view = (wd.token_count if col < 0 else wd.token_lang_count[:, col]).view()
        view.flags.writeable = False
        return view

    def tracked_totals(self) -> np.ndarray:
        """Tokens of each tracked column in the current segmentation (a copy).

        >>> from collections import Counter
        >>> eng = Engine.from_counts({"x": Counter({"ab": 5})}, tracked={"dev": Counter({"abab": 1, "c": 2})})
        >>> eng.tracked_totals().tolist(), eng.merge(ord("a"), ord("b"), 256), eng.tracked_totals().tolist()
        ([6], 5, [4])
        """
        return self._words.tracked_tokens.copy()

    def token_totals(self) -> np.ndarray:
        """:meth:`num_tokens` of every language at once, in :attr:`languages` order (a copy)."""
        return self._words.tokens[:-1].copy()

    def num_tokens(self, lang: str | None = None) -> int:
        """Tokens in the current segmentation of all words (weighted by counts), overall or in ``lang``."""
        col = self._lang(lang)
        return int(self._words.tokens[col])

    def segmentation(self, w: int) -> list[int]:
        """Current token ids of word ``w`` (in :func:`words_from_counts` order)."""
        wd = self._words
        s = wd.word[w, K.W_START]
        return wd.symbols[s : s + wd.word[w, K.W_LENGTH]].tolist()

    def stop_total_best(self) -> None:
        """Stop keeping the heap of total counts: :meth:`best_pair` and
        :meth:`tied_pairs` then answer per language only (for good: the heap is not
        rebuilt). Pair and token counts stay exact."""
        self._pairs.meta[K.TOTAL_ON] = 0
        self._total_asked = self._cached = False

    # ---- the one mutation
    def _ensure(self, c: int) -> None:
        """Room for token id ``c`` in the token counts and ranks (merged ids rank by id)."""
        count, lang_count = self._words.token_count, self._words.token_lang_count
        if c < len(count):
            return
        cap = max(c + 1, 2 * len(count), 256)
        grow = cap - len(count)
        self._words = self._words._replace(
            token_count=np.concatenate([count, np.zeros(grow, np.int64)]),
            token_lang_count=np.concatenate([lang_count, np.zeros((grow, lang_count.shape[1]), np.int64)]))
        if len(self._rank) < cap:
            self._rank = np.concatenate([self._rank, np.arange(len(self._rank), cap, dtype=np.int64)])

    def merge(self, a: int, b: int, c: int) -> int:
        """Replace every occurrence of (a, b) by token ``c``; returns how many (weighted).
        ``c`` may be an existing id (a merge whose output string already exists)."""
        last = self._last
        pid = last[2] if last is not None and last[0] == a and last[1] == b else self._pid(a, b)
        if pid < 0:
            return 0
        self._ensure(c)
        self._cached = False
        if not self._total_asked:
            merged = K.merge(pid, c, self._words, self._rank, self._pairs)
            if merged < 0:  # the kernel needs room for what the merge may create
                self._pairs = K.reserve(self._pairs, pid, len(self._words.token_count))
                merged = K.merge(pid, c, self._words, self._rank, self._pairs)
            return int(merged)
        merged, nxt = K.merge_best(pid, c, self._words, self._rank, self._pairs)
        if merged < 0:
            self._pairs = K.reserve(self._pairs, pid, len(self._words.token_count))
            merged, nxt = K.merge_best(pid, c, self._words, self._rank, self._pairs)
        if nxt < 0:
            self._best = None
        else:
            x, y = self._pair(nxt)
            self._best, self._last = (x, y, int(self._pairs.count[nxt])), (x, y, nxt)
        self._cached = True
        return int(merged)

    def merge_greedy(self, strings: K.Strings, next_id: int, vocab_size: int, min_frequency: int,
                     out: np.ndarray, forced: int = -1) -> tuple[int, int]:
        """Standard BPE's loop, many merges in one kernel call (:func:`K.merge_greedy`): merge
        the most frequent pair (:meth:`best_pair`'s choice) into ``next_id``, then the next
        into ``next_id + 1``, ... until ``vocab_size`` ids exist, no pair is left, the best is
        below ``min_frequency``, ``out`` is full, or the next pair's string may exist already
        (``strings``: the tokens' string hashes, :func:`K.strings_of`). Each merge goes to a
        row ``(a, b, c)`` of ``out``. Returns ``(merges made, K.DONE .. K.CHECK)``. After
        ``K.CHECK`` the best pair, not merged, is the next row as ``(a, b, -1)``: the caller
        looks its string up and calls again with ``forced`` = its id (an existing one, or
        ``next_id``).

        >>> from collections import Counter
        >>> eng = Engine.from_counts({"x": Counter({"abc": 2})})
        >>> strings = K.strings_of(np.array([97]), np.array([98]), 260)   # id 256 is 'ab' already
        >>> out = np.zeros((8, 3), np.int64)
        >>> n, why = eng.merge_greedy(strings, 257, 260, 1, out); n, why == K.CHECK, out[0].tolist()
        (0, True, [97, 98, -1])
        >>> n, why = eng.merge_greedy(strings, 257, 260, 1, out, forced=256)
        >>> out[:n].tolist(), why == K.NO_PAIR
        ([[97, 98, 256], [256, 99, 257]], True)
        """
        self._ensure(vocab_size - 1)
        self._cached, self._last, self._total_asked = False, None, True
        done = 0
        while True:
            n, why, pid, next_id = K.merge_greedy(self._words, self._rank, self._pairs, strings, next_id,
                                                  vocab_size, min_frequency, out[done:], forced)
            done += n
            if why != K.ROOM:
                return done, int(why)
            forced = forced if n == 0 else -1
            self._pairs = K.reserve(self._pairs, pid, len(self._words.token_count))

    def parity_greedy(self, strings: K.Strings, next_id: int, vocab_size: int, min_frequency: int,
                      open_langs: np.ndarray, out: np.ndarray, costs: np.ndarray) -> tuple[int, int]:
        """Parity-aware BPE's loop (dev-cost chooser, this engine's tie-break), many merges in
        one kernel call (:func:`K.parity_greedy`): the costliest open language by its tracked
        tokens (``open_langs[l]`` != 0; ties: the lowest index), its most frequent pair merged
        into ``next_id``, the next into ``next_id + 1``, ... Row n of ``out`` is merge n as
        ``(a, b, c, language)``, row n of ``costs`` the tracked totals after it. Returns
        ``(merges made, K.DONE .. K.CHECK)``: after ``K.RARE`` (the chosen language has no
        pair of count >= ``min_frequency``), ``K.NO_PAIR`` (no open language) or ``K.CHECK``
        (the pair's string may exist) the caller takes the next step itself.

        >>> from collections import Counter
        >>> eng = Engine.from_counts({"x": Counter({"ab": 9}), "y": Counter({"cde": 2})},
        ...                          tracked={"x": Counter({"ab": 1}), "y": Counter({"cde": 1})},
        ...                          pair_counts_per_language=True, total_best=False)
        >>> strings = K.strings_of(np.zeros(0, np.int64), np.zeros(0, np.int64), 260)
        >>> out, costs = np.zeros((8, 4), np.int64), np.zeros((8, 2), np.int64)
        >>> n, why = eng.parity_greedy(strings, 256, 259, 1, np.ones(2, np.int64), out, costs)
        >>> out[:n].tolist(), why == K.DONE   # y's dev side costs 3 tokens, x's 2; then a tie: x
        ([[99, 100, 256, 1], [97, 98, 257, 0], [256, 101, 258, 1]], True)
        >>> costs[:n].tolist()
        [[2, 2], [1, 2], [1, 1]]
        """
        self._ensure(vocab_size - 1)
        self._cached, self._last = False, None
        done = 0
        while True:
            n, why, pid, next_id = K.parity_greedy(self._words, self._rank, self._pairs, strings, next_id,
                                                   vocab_size, min_frequency, open_langs, out[done:],
                                                   costs[done:])
            done += n
            if why != K.ROOM:
                return done, int(why)
            self._pairs = K.reserve(self._pairs, pid, len(self._words.token_count))

    def merge_choose(self, a: int, b: int, c: int, candidates: Sequence[int],
                     lex: np.ndarray | None = None) -> tuple[int, int | None, tuple[int, int, int] | None]:
        """:meth:`merge`, then parity-aware BPE's next choice, in the same kernel call
        (``K.merge_choose``: one unboxing of the state per merge, no tie-break in Python).

        Returns ``(merged, lang, pair)``: ``lang`` the column among ``candidates``
        (ascending) with the most tracked tokens (ties: the first), None if there is no
        candidate; ``pair`` = ``(x, y, count in lang)`` as :meth:`best_pair` ``(lang)``
        answers or, with ``lex`` (a rank of every token id so far), the pair of
        :meth:`tied_pairs` ``(lang)`` with the largest ``(lex[x], lex[y])``; None if the
        language has no pair.

        >>> from collections import Counter
        >>> eng = Engine.from_counts({"x": Counter({"abc": 2}), "y": Counter({"de": 1})},
        ...                          tracked={"x": Counter({"ab": 1}), "y": Counter({"dede": 1})},
        ...                          pair_counts_per_language=True, total_best=False)
        >>> eng.merge_choose(ord("a"), ord("b"), 256, [0, 1])   # y's dev text costs 4 tokens, x's 1
        (2, 1, (100, 101, 1))
        """
        last = self._last
        pid = last[2] if last is not None and last[0] == a and last[1] == b else self._pid(a, b)
        if pid < 0:
            return 0, None, None
        self._ensure(c)
        self._cached = False
        cand = np.asarray(candidates, np.int64)
        lex = np.zeros(0, np.int64) if lex is None else lex
        merged, lang, nxt = K.merge_choose(pid, c, self._words, self._rank, self._pairs, cand, lex)
        if merged < 0:
            self._pairs = K.reserve(self._pairs, pid, len(self._words.token_count))
            merged, lang, nxt = K.merge_choose(pid, c, self._words, self._rank, self._pairs, cand, lex)
        if lang < 0:
            return int(merged), None, None
        if nxt < 0:
            return int(merged), int(lang), None
        x, y = self._pair(nxt)
        self._last = (x, y, nxt)
        return int(merged), int(lang), (x, y, int(self._pairs.lang_count[nxt, lang]))
