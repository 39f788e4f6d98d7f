"""Sequential multilingual BPE (modular tokenizers paper, §4.2, Algorithm 2).

Languages are trained one after another on top of one global merge list M;
language i keeps its own sub-vocabulary V_i of at most k tokens, closed under
ancestry, so that every union of sub-vocabularies is a proper BPE:

    M <- []                                       # global merges
    for language i in order:
        V_i <- 256 bytes
        segment language i's pre-tokens with M
        while |V_i| < k:
            t <- most frequent token (in this segmentation) not in V_i
            p <- most frequent adjacent pair
            if count(t) >= count(p):              # unigram rule (ties: unigram)
                V_i <- V_i + t + ancestors(t)
            else:                                 # bigram rule
                M <- M + [p];  V_i <- V_i + merge(p);  apply p
    return M, (V_1, ..., V_n)

Budget accounting: **k counts every token of V_i, the 256 bytes included**
(there are no special tokens), so V_i is comparable to a monolingual BPE of
``vocab_size = k``. If adding t with its missing ancestors would exceed k, the
language stops there (|V_i| is then at most k - 1, rare and only at the end).
When the bigram rule fires both parts of p are already in V_i (a part occurs
at least as often as the pair, and a part not in V_i would have won the
unigram rule); the code still closes V_i defensively. Ties: the pair
tie-break of :mod:`modtok.bpe.engine`; among tokens, the smallest id.
A run of bigrams is one kernel call (:func:`_bigrams`); the unigram rule's steps are Python.

>>> from collections import Counter
>>> res = train_sequential({"x": Counter({"ab": 5}), "y": Counter({"abc": 4})}, 258)
>>> [res.model.vocab[i] for i in res.lang_to_ids["x"][256:]], [res.model.vocab[i] for i in res.lang_to_ids["y"][256:]]
([b'ab'], [b'ab', b'abc'])
"""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from modtok.bpe import kernels as K
from modtok.bpe.engine import Engine
from modtok.bpe.model import BPEModel
from modtok.bpe.standard import BATCH, check_budget
from modtok.errors import UnknownLanguageError
from modtok.progress import bar as progress_bar
from modtok.text.lexer import WordCounts
from modtok.text.pretokenize import DEFAULT_SCHEME


@dataclass
class MultilingualBPE:
    """A global BPE model, each language's sub-vocabulary (sorted global ids) and its
    budget (``budgets``: what was asked; :meth:`short` says who stopped below it)."""

    model: BPEModel
    lang_to_ids: dict[str, list[int]]
    budgets: dict[str, int] = field(default_factory=dict)

    def short(self) -> dict[str, tuple[int, int]]:
        """``{lang: (asked, got)}`` for the languages whose sub-vocabulary is smaller than
        their budget (their text ran out of pairs and tokens, or the last token's ancestors
        did not fit: module docstring).

        >>> from collections import Counter
        >>> train_sequential({"x": Counter({"ab": 5}), "y": Counter({"abc": 4})}, 260).short()
        {'x': (260, 257), 'y': (260, 258)}
        """
        return {lang: (k, len(self.lang_to_ids[lang])) for lang, k in self.budgets.items()
                if len(self.lang_to_ids[lang]) < k}

    def modular(self):
        """The :class:`~modtok.artifacts.modular.ModularTokenizer` (HF-backed encoders)."""
        from modtok.artifacts.modular import ModularTokenizer
        from modtok.bpe.export import to_tokenizer_json

        return ModularTokenizer(to_tokenizer_json(self.model), self.lang_to_ids)


def check_order(counts_by_lang: Mapping, order: Sequence[str] | None) -> list[str]:
    order = list(counts_by_lang) if order is None else list(order)
    for lang in order:
        if lang not in counts_by_lang:
            raise UnknownLanguageError(lang, counts_by_lang)
    return order


class _TokenQueue:
    """Lazy max-heap of the tokens not in V_i by their count (ties: smallest id).

    Valid because the count of a token not in V_i only goes down: a merge
    lowers its parts and raises only its output, which joins V_i at once."""

    def __init__(self, counts, in_vocab):
        self.counts, self.in_vocab = counts, in_vocab
        present = np.flatnonzero(counts > 0)  # (a Python loop over every id took 52 ms a language)
        self.heap = [(-c, t) for t, c in zip(present.tolist(), counts[present].tolist()) if t not in in_vocab]
        heapq.heapify(self.heap)

    def top(self) -> tuple[int, int]:
        """``(token, count)`` of the most frequent token not in V_i, ``(-1, 0)`` if none."""
        while self.heap:
            neg, t = self.heap[0]
            cur = int(self.counts[t])
            if t in self.in_vocab or cur == 0:
                heapq.heappop(self.heap)
            elif -neg != cur:
                heapq.heapreplace(self.heap, (-cur, t))
            else:
                return t, cur
        return -1, 0


def _outside(model: BPEModel, t: int, vocab: set[int]) -> set[int]:
    """``model.ancestors(t) - vocab`` for a ``vocab`` closed under ancestry: the walk down
    stops at a token of ``vocab`` (its ancestors are all in it). The whole walk took 1.1 of
    9.8 s of sequential BPE on 10 languages (1 MB each, k = 8000, cProfile).

    >>> m = BPEModel([(97, 98), (256, 99)], "whitespace")   # ab, abc
    >>> sorted(_outside(m, 257, set(range(256)))), sorted(_outside(m, 257, set(range(257))))
    ([256, 257], [257])
    """
    out, stack = set(), [t]
    while stack:
        x = stack.pop()
        if x in out or x in vocab:
            continue
        out.add(x)
        if model.parents[x] is not None:
            stack.extend(model.parents[x])
    return out


def _bigrams(engine: Engine, model: BPEModel, strings: K.Strings, out: np.ndarray, a: int, b: int,
             t_count: int, room: int, missing: set[int]) -> list[int]:
    """The bigram rule's merge of ``(a, b)``, then, in the same kernel call
    (:meth:`Engine.merge_greedy`), every next best pair as long as the rule would pick it
    again; the ids made (``out``'s rows: the merges).

    The bigram rule fires while the best pair's count is above ``t_count``, the count of the
    most frequent token outside V_i, and that count only goes down while merges are made
    (module docstring; the merged tokens join V_i), so every pair above the ``t_count``
    of the first merge is a bigram too: ``min_frequency = t_count + 1``. Each such pair's parts
    are in V_i (a part occurs at least as often as the pair: above ``t_count``), so each
    merge adds one token to V_i: at most ``room``. The run stops where the next pair's string
    may exist (:data:`K.CHECK`: an earlier language's token), and the loop decides again. A
    first merge whose string exists (or whose parts brought ``missing`` ancestors, which the
    argument does not cover) is made alone, with that id."""
    existing = model.id_of(model.vocab[a] + model.vocab[b])
    alone = existing is not None or bool(missing)
    rows = 1 if alone else min(room, BATCH)
    forced = len(model) if existing is None else existing
    n, _ = engine.merge_greedy(strings, len(model), len(model) + (1 if alone else room), t_count + 1,
                               out[:rows], forced)
    ids = model.extend(out[:n, :2])
    if ids != out[:n, 2].tolist():
        raise AssertionError("the kernel's token ids part from the model's")  # a bug, not bad input
    return ids


def train_sequential(
    counts_by_lang: Mapping[str, Counter] | WordCounts,
    k: int | Mapping[str, int],
    order: Sequence[str] | None = None,
    scheme: str = DEFAULT_SCHEME,
    progress: bool = False,
) -> MultilingualBPE:
    """Algorithm 2 on ``{lang: Counter(pre-token -> count)}`` (or ``count_arrays``' arrays:
    no string per pre-token) in ``order`` (default: the
    languages sorted by their codes, the paper's alphabetical order, §4.2 and App. A.3; its
    tables sort ISO 639-1 codes, ours FLORES-200 codes, which put a few languages elsewhere:
    ``spa_Latn`` after ``slv_Latn`` where "es" comes before "et").

    ``k`` is one budget for every language (the paper's setting) or
    ``{lang: k_lang}``, a budget per language (what
    :func:`modtok.mixture.adaptive_budgets` iterates).
    """
    arrays = isinstance(counts_by_lang, WordCounts)
    langs = counts_by_lang.languages if arrays else counts_by_lang
    order = check_order(langs, sorted(langs) if order is None else order)
    budgets = {lang: k for lang in order} if isinstance(k, int) else dict(k)
    for lang in order:
        if lang not in budgets:
            raise UnknownLanguageError(lang, budgets)
        check_budget(budgets[lang], what=f"k[{lang!r}]" if not isinstance(k, int) else "k")
    model = BPEModel([], scheme)
    lang_to_ids: dict[str, list[int]] = {}
    # every id the languages can make: each adds at most k_i - 256 (V_i holds the new ones)
    strings = K.strings_of(np.zeros(0, np.int64), np.zeros(0, np.int64),
                           256 + sum(budgets[lang] - 256 for lang in order))
    out = np.empty((BATCH, 3), np.int64)
    with progress_bar(total=sum(budgets[lang] - 256 for lang in order), desc="sequential BPE",
                      enabled=progress) as bar:
        for lang in order:
            k_lang = budgets[lang]
            # this language's text, segmented by every merge learned so far (earlier languages')
            earlier = {"merges": model.merges, "results": model.results, "capacity": len(model) + k_lang + 1}
            engine = (Engine.from_word_counts(counts_by_lang, languages=[lang], **earlier) if arrays
                      else Engine.from_counts({lang: counts_by_lang[lang]}, **earlier))
            # V_i starts as the 256 bytes
            vocab = set(range(256))
            closed = True  # every token of V_i has its ancestors in V_i
            tokens = _TokenQueue(engine.token_counts(), vocab)
            while len(vocab) < k_lang:
                # the two candidates: the most frequent existing token outside V_i, the most
                # frequent pair of the text
                t, t_count = tokens.top()
                best = engine.best_pair()
                p_count = best[2] if best else 0
                if t_count == 0 and p_count == 0:
                    break
                # what taking the more frequent one adds to V_i: its ancestors not yet in it
                if t_count >= p_count:  # unigram rule
                    missing = _outside(model, t, vocab) if closed else model.ancestors(t) - vocab
                else:  # bigram rule
                    a, b, _ = best
                    # While V_i is closed under ancestry, parts in V_i bring nothing new (the
                    # common case: no walk down two ancestor trees per merge)
                    missing = (set() if closed and a in vocab and b in vocab
                               else (model.ancestors(a) | model.ancestors(b)) - vocab)
                # stop when it does not fit the budget k_i
                if len(vocab) + len(missing) + (t_count < p_count) > k_lang:
                    break
                size = len(vocab)
                vocab |= missing
                # a bigram: merge the pair everywhere (a new global id, or an existing one)
                if t_count < p_count:
                    n_model = len(model)
                    room = k_lang - len(vocab)
                    vocab.update(_bigrams(engine, model, strings, out, a, b, t_count, room, missing))
                    tokens.counts = engine.token_counts()  # the engine may grow its arrays
                    if len(model) == n_model:  # an existing token: its first merge's parts may be outside V_i
                        closed = closed and model.ancestors(int(out[0, 2])) <= vocab
                bar.update(len(vocab) - size)
            bar.update(k_lang - len(vocab))  # a language that stops early still counts as done
            # V_i, ids in the one global merge list
            lang_to_ids[lang] = sorted(vocab)
    return MultilingualBPE(model, lang_to_ids, {lang: budgets[lang] for lang in order})
