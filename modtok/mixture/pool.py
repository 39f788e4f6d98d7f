"""The one sampler: each language's text in one fixed shuffle, split once.

Budget sampling is a *prefix of a fixed per-language shuffle*: language l's
lines are shuffled once (seed, language), and C_l characters are the longest
prefix of whole lines with at most C_l characters. A larger budget is a
superset of a smaller one, and every AdaptMix iteration reads the same lines.
Beyond the end of the text the shuffle wraps around (the ``"repeat"`` policy of
:func:`modtok.mixture.update.allocate`). Text is split into pre-tokens once
per scheme, as far as the samples read; a sample's pre-token counts are a ``bincount`` over
a prefix of that one array, never a re-split.

Any mixture of shares is drawn the same way (:meth:`TextPool.sample`):

>>> pool = TextPool({"a": ["x" * 10] * 100, "b": ["y" * 10] * 100}, seed=0)
>>> pool.sample({"a": 3, "b": 1}, 400).used()
{'a': 300, 'b': 100}
"""

from __future__ import annotations

import zlib
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from modtok.errors import DataError, UnknownLanguageError
from modtok.mixture.update import allocate
from modtok.text.pretokenize import compiled, pattern


def _language_seed(seed: int, lang: str) -> list[int]:
    """The shuffle's seed: the run's ``seed`` and a CRC of the language code (stable
    across processes, unlike the salted ``hash``), so a language's shuffle does not
    depend on which other languages are in the pool."""
    return [int(seed), zlib.crc32(lang.encode("utf-8"))]


class _Pretokens:
    """One language's pre-tokens in shuffled line order, split as far as a sample has
    needed: ``ids[cum[i]:cum[i+1]]`` are line i's pre-tokens (i < :attr:`lines`), as
    indices into ``vocab``. A sample of T characters splits only the lines it reads, so
    an explorer at 50k characters a language splits a twentieth of a 1M pool (the whole
    pool, 16 x 3 MB, took 7.5 s on a widget's first move, load 5); a larger one
    splits on from where the last stopped (at least doubling, so a pool is split in
    a few steps, each line once).

    >>> import regex
    >>> p = _Pretokens(["a b", "b c", "c"], regex.compile(r"\\S+").findall)
    >>> p.counts(2), p.lines                   # two lines read, two split
    (Counter({'b': 2, 'a': 1, 'c': 1}), 2)
    >>> p.counts(1, repeats=1), p.lines        # a whole pass and one line: all split
    (Counter({'b': 3, 'a': 2, 'c': 2}), 3)
    """

    def __init__(self, lines: Sequence[str], findall):
        self._text, self._findall = lines, findall
        self._index: dict[str, int] = {}
        self.vocab = np.array([], dtype=object)  # (n_distinct,) object: the pre-token strings
        self.ids = np.zeros(0, dtype=np.int64)  # (n_pretokens,) int64
        self.cum = np.zeros(1, dtype=np.int64)  # (lines + 1,) int64

    @property
    def lines(self) -> int:
        """How many lines (from the start of the shuffle) are split."""
        return len(self.cum) - 1

    def _split(self, n_lines: int) -> None:
        """Split at least the first ``n_lines`` lines (at least doubling the lines split)."""
        start = self.lines
        if n_lines <= start:
            return
        stop = min(len(self._text), max(n_lines, 2 * start))
        index, ids, cum = self._index, [], np.empty(stop - start, dtype=np.int64)
        for i, line in enumerate(self._text[start:stop]):
            for piece in self._findall(line):
                ids.append(index.setdefault(piece, len(index)))
            cum[i] = len(ids)
        self.cum = np.concatenate([self.cum, cum + self.cum[-1]])
        self.ids = np.concatenate([self.ids, np.asarray(ids, dtype=np.int64)])
        self.vocab = np.array(list(index), dtype=object)

    def counts(self, n_lines: int, repeats: int = 0) -> Counter:
        self._split(len(self._text) if repeats else n_lines)
        full = np.bincount(self.ids[: self.cum[len(self._text)]], minlength=len(self.vocab)) * repeats if repeats else 0
        part = np.bincount(self.ids[: self.cum[n_lines]], minlength=len(self.vocab))
        total = part + full
        nz = np.flatnonzero(total)
        # the strings by one fancy index of the object array, not a Python loop (~40% less time)
        return Counter(dict(zip(self.vocab[nz].tolist(), total[nz].tolist())))


class TextPool:
    """Each language's training lines in a fixed seeded shuffle, with prefix sums
    of characters (and, per pre-tokenizer scheme, of pre-tokens).

    >>> pool = TextPool({"x": ["aa", "b", "cccc"]}, seed=0)
    >>> pool.lines["x"], pool.available()              # the fixed shuffle
    (['cccc', 'b', 'aa'], {'x': 7})
    >>> pool.take({"x": 6}).lines()                    # the longest prefix with <= 6 characters
    {'x': ['cccc', 'b']}
    >>> s = pool.take({"x": 12})                       # more than there is: one whole pass + 5
    >>> s.lines(), s.used()
    ({'x': ['cccc', 'b', 'aa', 'cccc', 'b']}, {'x': 12})
    """

    def __init__(self, corpus: Mapping[str, Sequence[str]], seed: int = 0):
        if not corpus:
            raise DataError("empty training corpus (no language)")
        self.seed = seed
        self.lines: dict[str, list[str]] = {}
        self.cum_chars: dict[str, np.ndarray] = {}
        for lang, lines in corpus.items():
            if isinstance(lines, str):
                raise DataError(f"{lang}: expected a list of lines, got one string")
            lines = list(lines)
            if not lines:
                raise DataError(f"{lang}: no training text")
            order = np.random.default_rng(_language_seed(seed, lang)).permutation(len(lines))
            shuffled = [lines[i] for i in order]
            if not any(shuffled):
                raise DataError(f"{lang}: the training text has no character")
            self.lines[lang] = shuffled
            self.cum_chars[lang] = np.concatenate([[0], np.cumsum([len(s) for s in shuffled], dtype=np.int64)])
        self._pretokens: dict[str, dict[str, _Pretokens]] = {}

    @property
    def languages(self) -> list[str]:
        return list(self.lines)

    def subset(self, langs: Sequence[str]) -> TextPool:
        """The pool of some of the languages, sharing this one's shuffles and splits
        (a language's shuffle depends only on the seed and the language)."""
        for lang in langs:
            if lang not in self.lines:
                raise UnknownLanguageError(lang, self.lines)
        sub = object.__new__(TextPool)
        sub.seed = self.seed
        sub.lines = {lang: self.lines[lang] for lang in langs}
        sub.cum_chars = {lang: self.cum_chars[lang] for lang in langs}
        sub._pretokens = self._pretokens  # shared cache: keyed by scheme, then language
        return sub

    def available(self, langs: Sequence[str] | None = None) -> dict[str, int]:
        """Characters of text per language."""
        for lang in langs or ():
            if lang not in self.lines:
                raise UnknownLanguageError(lang, self.lines)
        return {lang: int(self.cum_chars[lang][-1]) for lang in (langs or self.languages)}

    def _span(self, lang: str, chars: int) -> tuple[int, int]:
        """``(whole passes, lines of the last partial pass)`` for ``chars`` characters."""
        cum = self.cum_chars[lang]
        repeats, rest = divmod(int(chars), int(cum[-1]))
        return repeats, int(np.searchsorted(cum, rest, side="right") - 1)

    def pretokens(self, scheme: str) -> dict[str, _Pretokens]:
        """Each language's lines cut into pre-tokens by ``scheme`` (one :class:`_Pretokens`
        per language and scheme, split as samples need; shared with :meth:`subset` pools)."""
        pattern(scheme)
        cache = self._pretokens.setdefault(scheme, {})
        for lang, lines in self.lines.items():
            if lang not in cache:
                cache[lang] = _Pretokens(lines, compiled(scheme).findall)
        return {lang: cache[lang] for lang in self.lines}

    def take(self, alloc: Mapping[str, int]) -> Sample:
        """The sample of ``alloc[lang]`` characters per language (a prefix of the
        shuffle; beyond the end of the text it wraps: the ``"repeat"`` policy)."""
        spans = {}
        for lang, chars in alloc.items():
            if lang not in self.lines:
                raise UnknownLanguageError(lang, self.lines)
            spans[lang] = self._span(lang, chars)
        return Sample(self, dict(alloc), spans)

    def sample(self, mixture: Mapping[str, float], budget_chars: int, policy: str = "cap") -> Sample:
        """The sample of a mixture: ``budget_chars`` characters allocated by
        ``mixture``'s shares (Eq. 5, :func:`modtok.mixture.update.allocate`, with
        the over-allocation ``policy``), then :meth:`take`. A language with
        share 0 gets no line (and is left out of :meth:`Sample.lines`)."""
        return self.take(allocate(mixture, budget_chars, self.available(list(mixture)), policy))


@dataclass
class Sample:
    """A character allocation drawn from a :class:`TextPool`."""

    pool: TextPool
    alloc: dict[str, int]
    spans: dict[str, tuple[int, int]]  # lang -> (whole passes, lines of the partial pass)

    def used(self) -> dict[str, int]:
        """Characters actually sampled (whole lines only, so <= the allocation)."""
        out = {}
        for lang, (repeats, n) in self.spans.items():
            cum = self.pool.cum_chars[lang]
            out[lang] = int(repeats * cum[-1] + cum[n])
        return out

    def lines(self) -> dict[str, list[str]]:
        """``{lang: lines}`` (languages with no line are left out)."""
        out = {}
        for lang, (repeats, n) in self.spans.items():
            lines = self.pool.lines[lang]
            taken = lines * repeats + lines[:n]
            if taken:
                out[lang] = taken
        return out

    def counts(self, scheme: str) -> dict[str, Counter]:
        """``{lang: Counter(pre-token -> count)}`` from the pool's one split."""
        pre = self.pool.pretokens(scheme)
        out = {}
        for lang, (repeats, n) in self.spans.items():
            if repeats or n:
                out[lang] = pre[lang].counts(n, repeats)
        return out
