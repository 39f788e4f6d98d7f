"""AdaptMix: adaptive tokenizer-training mixtures, and the baseline mixtures.

"The Art of Breaking Words: Rethinking Multilingual Tokenizer Design"
(Thakur et al. 2025, arXiv:2508.06533), §3.4, §4.3 and App. A.2. A tokenizer
is trained on a mixture of languages, each language's *fertility* (tokens per
whitespace word) is measured on a dev set, and the next mixture moves towards
the languages that fragment most. In the paper's notation (N = iteration,
T = total character budget, m^N = mixture shares, summing to 1):

    δ_l   = (f_l − f_best) / f_range                   (Eq. 1)  normalised excess fertility
    w_l   = δ_l + ε                                     (Eq. 2)  ε > 0 keeps every language in
    t_l   = w_l / Σ_k w_k                               (Eq. 3)  target shares
    m_l^N = (1 − μ) · m_l^{N−1} + μ · t_l               (Eq. 4)  momentum μ ∈ (0, 1]
    C_l^N = round(m_l^N · T), renormalised, Σ C = T     (Eq. 5)  characters of language l
    f_range = 0  ⇒  m^N = m^{N−1} (rescaled to sum 1)   (Eq. 7)

How we read the quantities (interpretations are marked *reading*):

- ``f_range`` — *reading*: the spread of this iteration's fertilities,
  max_l f_l − min_l f_l, over the languages in the mixture.
- ``f_best`` — fixed at 1.0 (one token per word, the ideal) by default;
  ``f_best="dynamic"`` takes the lowest fertility of the iteration (the App. A.2
  ablation), so the best language's δ is 0 and only ε keeps it in the mix.
- δ_l is clamped at 0 from below — *reading*: a language already below
  ``f_best`` (possible only with a fixed ``f_best``) needs no extra data; the
  paper assumes f_l ≥ f_best and does not say.
- Eq. 5's rounding — *reading*: round half up, then the ±1 corrections that
  make Σ C = T go to the languages whose exact share m_l·T lost (or gained)
  most by rounding; ties by language order.

>>> m = adaptmix_update({"a": 3.0, "b": 2.0, "c": 1.0}, uniform(["a", "b", "c"]), mu=0.5, eps=0.5)
>>> {lang: round(v, 4) for lang, v in m.items()}     # 5/12, 1/3, 1/4 (worked in tests)
{'a': 0.4167, 'b': 0.3333, 'c': 0.25}
>>> allocate(m, 10)                                  # 4.17, 3.33, 2.5 -> 4, 3, 3
{'a': 4, 'b': 3, 'c': 3}

What happens when a language's allocation exceeds its text is an explicit
``policy`` of :func:`allocate` / :func:`adaptmix`:

- ``"cap"`` (default): cap it at what it has and redistribute the excess over
  the other languages in proportion to their shares (repeated until nothing
  exceeds; if every language is capped the total is less than T);
- ``"repeat"``: keep the allocation and repeat the language's text (the fixed
  shuffle wraps around: whole passes, then a prefix).

Budget sampling is a *prefix of a fixed per-language shuffle* (:class:`TextPool`):
language l's text is shuffled once (seed, language), and C_l characters are the
longest prefix of whole lines with at most C_l characters. A larger budget is a
superset of a smaller one, and every iteration reads the same lines. Text is
split into pre-tokens once per scheme; an iteration's pre-token counts are a
``bincount`` over a prefix of that one array, never a re-split.
"""

from __future__ import annotations

import math
import zlib
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from modtok.errors import (
    BudgetError,
    DataError,
    MissingDevTextError,
    MixtureError,
    UnknownLanguageError,
)
from modtok.evaluation import metrics
from modtok.progress import bar as progress_bar
from modtok.text.pretokenize import compiled, pattern

Mixture = dict[str, float]  # language -> share; shares are >= 0 and sum to 1

POLICIES = ("cap", "repeat")


# --------------------------------------------------------------------------
# the update (Eqs. 1-4, 7) and the allocation (Eq. 5)


def check_momentum(mu: float, eps: float) -> None:
    """μ ∈ (0, 1] and ε ≥ 0, else :class:`MixtureError`."""
    if not (isinstance(mu, (int, float)) and 0.0 < mu <= 1.0):
        raise MixtureError(f"momentum mu must be in (0, 1], got {mu!r}")
    if not (isinstance(eps, (int, float)) and eps >= 0.0 and math.isfinite(eps)):
        raise MixtureError(f"epsilon must be a finite number >= 0, got {eps!r}")


def normalise(weights: Mapping[str, float], what: str = "mixture") -> Mixture:
    """Shares proportional to non-negative ``weights`` (positive sum)."""
    if not weights:
        raise MixtureError(f"{what}: no language")
    for lang, w in weights.items():
        if not (math.isfinite(w) and w >= 0):
            raise MixtureError(f"{what}: weight of {lang} is {w!r}, expected a finite number >= 0")
    z = float(sum(weights.values()))
    if z <= 0:
        raise MixtureError(f"{what}: weights sum to 0")
    return {lang: float(w) / z for lang, w in weights.items()}


def adaptmix_update(
    fertility: Mapping[str, float],
    previous: Mapping[str, float],
    *,
    mu: float,
    eps: float,
    f_best: float | str = 1.0,
) -> Mixture:
    """The next mixture m^N from this iteration's fertilities and m^{N−1} (Eqs. 1–4, 7).

    ``fertility`` and ``previous`` have the same languages; ``previous`` is
    normalised first. ``f_best`` is a number (1.0 by default) or ``"dynamic"``
    (the lowest fertility of this iteration, App. A.2).

    >>> adaptmix_update({"a": 2.0, "b": 2.0}, {"a": 3, "b": 1}, mu=0.5, eps=0.1)   # Eq. 7
    {'a': 0.75, 'b': 0.25}
    """
    check_momentum(mu, eps)
    if set(fertility) != set(previous):
        raise MixtureError(
            f"fertility languages {sorted(fertility)} differ from the previous mixture's {sorted(previous)}"
        )
    for lang, f in fertility.items():
        if not (math.isfinite(f) and f > 0):
            raise MixtureError(f"fertility of {lang} is {f!r}; expected a finite number > 0")
    prev = normalise({lang: previous[lang] for lang in fertility}, "previous mixture")
    values = list(fertility.values())
    f_range = max(values) - min(values)
    if f_range == 0:  # Eq. 7: no signal, keep the mixture
        return prev
    if f_best == "dynamic":
        best = min(values)
    elif isinstance(f_best, (int, float)) and math.isfinite(f_best):
        best = float(f_best)
    else:
        raise MixtureError(f"f_best must be a number or 'dynamic', got {f_best!r}")
    delta = {lang: max(0.0, (f - best) / f_range) for lang, f in fertility.items()}  # Eq. 1
    w = {lang: d + eps for lang, d in delta.items()}  # Eq. 2
    if sum(w.values()) == 0:  # eps = 0 and every language at or below f_best
        return prev
    t = normalise(w, "target shares")  # Eq. 3
    return {lang: (1.0 - mu) * prev[lang] + mu * t[lang] for lang in fertility}  # Eq. 4


def round_to_total(exact: Mapping[str, float], total: int) -> dict[str, int]:
    """Integers close to ``exact`` (non-negative, summing to ``total``): round half
    up, then ±1 to the languages that rounding moved furthest (ties: order).

    >>> round_to_total({"a": 2.5, "b": 2.5, "c": 5.0}, 10)   # 3 + 3 + 5 = 11: the first tie gives one back
    {'a': 2, 'b': 3, 'c': 5}
    """
    c = {lang: int(math.floor(x + 0.5)) for lang, x in exact.items()}
    diff = total - sum(c.values())
    langs = list(exact)
    if diff > 0:  # deficit: raise those that lost most (exact − c largest)
        order = sorted(langs, key=lambda l: (-(exact[l] - c[l]), langs.index(l)))
        for lang in order[:diff]:
            c[lang] += 1
    elif diff < 0:  # surplus: lower those that gained most (exact − c smallest), never below 0
        order = sorted((l for l in langs if c[l] > 0), key=lambda l: (exact[l] - c[l], langs.index(l)))
        for lang in order[: -diff]:
            c[lang] -= 1
    return c


def allocate(
    mixture: Mapping[str, float],
    budget: int,
    available: Mapping[str, int] | None = None,
    policy: str = "cap",
) -> dict[str, int]:
    """Characters per language, C_l (Eq. 5), with the over-allocation ``policy``.

    ``available`` (characters each language has) matters only for ``"cap"``:
    a language that would get more than it has is capped and the excess goes
    to the others in proportion to their shares, until nothing exceeds.

    >>> allocate({"a": 0.5, "b": 0.25, "c": 0.25}, 100, {"a": 20, "b": 1000, "c": 1000})
    {'a': 20, 'b': 40, 'c': 40}
    >>> allocate({"a": 0.5, "b": 0.25, "c": 0.25}, 100, {"a": 20, "b": 1000, "c": 1000}, "repeat")
    {'a': 50, 'b': 25, 'c': 25}
    """
    if policy not in POLICIES:
        raise MixtureError(f"unknown over-allocation policy {policy!r} (known: {', '.join(POLICIES)})")
    shares = normalise(mixture)
    if not isinstance(budget, (int, np.integer)) or budget < len(shares):
        raise BudgetError(
            f"character budget T={budget!r} is smaller than the number of languages ({len(shares)})"
        )
    budget = int(budget)
    if policy == "repeat" or available is None:
        return round_to_total({lang: s * budget for lang, s in shares.items()}, budget)
    for lang in shares:
        if lang not in available:
            raise UnknownLanguageError(lang, available)
    capped: dict[str, int] = {}
    while True:
        free = {lang: s for lang, s in shares.items() if lang not in capped}
        rest = budget - sum(capped.values())
        if not free or sum(free.values()) == 0 or rest <= 0:
            out = {lang: capped.get(lang, 0) for lang in shares}
            break
        sub = normalise(free)
        alloc = round_to_total({lang: s * rest for lang, s in sub.items()}, rest)
        over = {lang for lang, c in alloc.items() if c > available[lang]}
        if not over:
            out = {lang: capped.get(lang, alloc.get(lang, 0)) for lang in shares}
            break
        for lang in over:
            capped[lang] = int(available[lang])
    return out


# --------------------------------------------------------------------------
# baseline mixtures


def uniform(langs: Sequence[str]) -> Mixture:
    """UniMix: every language the same share.

    >>> uniform(["a", "b"])
    {'a': 0.5, 'b': 0.5}
    """
    langs = list(langs)
    if not langs:
        raise MixtureError("uniform mixture of no language")
    return {lang: 1.0 / len(langs) for lang in langs}


# Published per-language sizes (millions of whitespace tokens) of IndicCorp, the
# AI4Bharat web/news corpus of Kakwani et al. 2020 ("IndicNLPSuite", Findings of
# EMNLP 2020), as listed in its download table: AI4Bharat/indicnlp.ai4bharat.org,
# content/pages/indicnlp-corpus.md ("Tokens" column; English is Indian-English news).
# IndicCorp v1 has 12 of the paper's 16 languages. For Maithili, Nepali, Sanskrit
# and Sindhi we found no per-language figure in a source we could check (the
# Sangraha dataset card's statistics table was only partly readable), so none is
# given here: ``natural(..., missing="floor")`` makes that explicit.
INDICCORP_TOKENS_M: dict[str, float] = {
    "asm_Beng": 32.6, "ben_Beng": 836.0, "eng_Latn": 1220.0, "guj_Gujr": 719.0,
    "hin_Deva": 1860.0, "kan_Knda": 713.0, "mal_Mlym": 767.0, "mar_Deva": 551.0,
    "ory_Orya": 107.0, "pan_Guru": 773.0, "tam_Taml": 582.0, "tel_Telu": 674.0,
}

# The 16 languages of the AdaptMix paper (all in the pool and in FLORES-200).
PAPER_LANGUAGES = [
    "asm_Beng", "ben_Beng", "eng_Latn", "guj_Gujr", "hin_Deva", "kan_Knda", "mai_Deva", "mal_Mlym",
    "mar_Deva", "npi_Deva", "ory_Orya", "pan_Guru", "san_Deva", "snd_Arab", "tam_Taml", "tel_Telu",
]


def missing_sizes(langs: Sequence[str], sizes: Mapping[str, float] = INDICCORP_TOKENS_M) -> list[str]:
    """The languages of ``langs`` without a published size in ``sizes``."""
    return [lang for lang in langs if lang not in sizes]


def natural(
    langs: Sequence[str],
    sizes: Mapping[str, float] = INDICCORP_TOKENS_M,
    tau: float = 1.0,
    missing: str = "error",
) -> Mixture:
    """Shares ∝ size_l^(1/τ): the natural resource distribution (τ = 1) or its
    temperature-smoothed version (τ = 3.3 in "Parity-Aware Byte-Pair Encoding").

    ``missing="error"`` refuses a language without a size; ``missing="floor"``
    gives it the smallest size among ``langs`` that have one (a stated
    stand-in for "low-resource, figure unknown", not a published number).

    >>> natural(["a", "b"], {"a": 3.0, "b": 1.0})
    {'a': 0.75, 'b': 0.25}
    >>> {l: round(s, 3) for l, s in natural(["a", "b", "c"], {"a": 4.0, "b": 1.0}, tau=2.0, missing="floor").items()}
    {'a': 0.5, 'b': 0.25, 'c': 0.25}
    """
    if not (isinstance(tau, (int, float)) and tau > 0):
        raise MixtureError(f"temperature tau must be > 0, got {tau!r}")
    if missing not in ("error", "floor"):
        raise MixtureError(f"missing must be 'error' or 'floor', got {missing!r}")
    langs = list(langs)
    absent = missing_sizes(langs, sizes)
    known = [sizes[lang] for lang in langs if lang in sizes]
    if absent and (missing == "error" or not known):
        raise DataError(f"no published corpus size for {', '.join(absent)} (pass sizes=... or missing='floor')")
    floor = min(known) if known else 0.0
    return normalise({lang: float(sizes.get(lang, floor)) ** (1.0 / tau) for lang in langs}, "natural mixture")


def skewed(langs: Sequence[str], favoured: Sequence[str] = ("eng_Latn", "hin_Deva"), share: float = 0.5) -> Mixture:
    """The EnHiMix analog: the ``favoured`` languages split ``share`` of the
    budget equally, the others split the rest equally.

    >>> skewed(["eng_Latn", "hin_Deva", "tam_Taml", "tel_Telu"])
    {'eng_Latn': 0.25, 'hin_Deva': 0.25, 'tam_Taml': 0.25, 'tel_Telu': 0.25}
    >>> skewed(["eng_Latn", "hin_Deva", "a", "b", "c", "d"], share=0.6)["eng_Latn"]
    0.3
    """
    langs = list(langs)
    fav = [lang for lang in langs if lang in set(favoured)]
    rest = [lang for lang in langs if lang not in set(favoured)]
    if not fav:
        raise MixtureError(f"none of the favoured languages {list(favoured)} is in the mixture")
    if not 0.0 < share < 1.0 and rest:
        raise MixtureError(f"favoured share must be in (0, 1), got {share!r}")
    if not rest:
        return uniform(langs)
    return {lang: (share / len(fav) if lang in fav else (1.0 - share) / len(rest)) for lang in langs}


# --------------------------------------------------------------------------
# the training text: one fixed shuffle per language, split once


def _language_seed(seed: int, lang: str) -> list[int]:
    return [int(seed), zlib.crc32(lang.encode("utf-8"))]


@dataclass
class _Pretokens:
    """One language's pre-tokens in shuffled line order: ``ids[cum[i]:cum[i+1]]``
    are line i's pre-tokens, as indices into ``vocab``."""

    vocab: np.ndarray  # (n_distinct,) object: the pre-token strings
    ids: np.ndarray  # (n_pretokens,) int64
    cum: np.ndarray  # (n_lines + 1,) int64

    def counts(self, n_lines: int, repeats: int = 0) -> Counter:
        full = np.bincount(self.ids, minlength=len(self.vocab)) * repeats if repeats else 0
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

    def subset(self, langs: Sequence[str]) -> "TextPool":
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
        return {lang: int(self.cum_chars[lang][-1]) for lang in (langs or self.languages)}

    def _span(self, lang: str, chars: int) -> tuple[int, int]:
        """``(whole passes, lines of the last partial pass)`` for ``chars`` characters."""
        cum = self.cum_chars[lang]
        repeats, rest = divmod(int(chars), int(cum[-1]))
        return repeats, int(np.searchsorted(cum, rest, side="right") - 1)

    def pretokens(self, scheme: str) -> dict[str, _Pretokens]:
        """Every line cut into pre-tokens by ``scheme``, once per language and
        scheme (cached, and shared with :meth:`subset` pools)."""
        pattern(scheme)
        cache = self._pretokens.setdefault(scheme, {})
        findall = compiled(scheme).findall
        for lang, lines in self.lines.items():
            if lang in cache:
                continue
            index: dict[str, int] = {}
            ids: list[int] = []
            cum = np.zeros(len(lines) + 1, dtype=np.int64)
            for i, line in enumerate(lines):
                for piece in findall(line):
                    ids.append(index.setdefault(piece, len(index)))
                cum[i + 1] = len(ids)
            cache[lang] = _Pretokens(np.array(list(index), dtype=object), np.asarray(ids, dtype=np.int64), cum)
        return {lang: cache[lang] for lang in self.lines}

    def take(self, alloc: Mapping[str, int]) -> "Sample":
        """The sample of ``alloc[lang]`` characters per language (a prefix of the
        shuffle; beyond the end of the text it wraps: the ``"repeat"`` policy)."""
        spans = {}
        for lang, chars in alloc.items():
            if lang not in self.lines:
                raise UnknownLanguageError(lang, self.lines)
            spans[lang] = self._span(lang, chars)
        return Sample(self, dict(alloc), spans)


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


# --------------------------------------------------------------------------
# one trainer protocol


@dataclass(frozen=True)
class Trainer:
    """Any tokenizer trainer AdaptMix can drive.

    ``train(data)`` gets ``{lang: lines}`` (``consumes="lines"``) or
    ``{lang: Counter(pre-token -> count)}`` cut by ``scheme``
    (``consumes="counts"``) and returns a tokenizer that
    :func:`modtok.evaluation.metrics.encode_lines` accepts. An adapter is a few lines,
    e.g. for a counts-based trainer ``f(counts, vocab_size) -> BPEModel``::

        Trainer("my-bpe", lambda counts: hf_tokenizer(f(counts, 32000)), "counts", "whitespace")
    """

    name: str
    train: Callable[[Mapping], object]
    consumes: str = "lines"
    scheme: str | None = None

    def __post_init__(self):
        if self.consumes not in ("lines", "counts"):
            raise MixtureError(f"trainer {self.name}: consumes must be 'lines' or 'counts', got {self.consumes!r}")
        if self.consumes == "counts":
            pattern(self.scheme or "")

    def data(self, sample: Sample) -> Mapping:
        """What :attr:`train` consumes, from a sample."""
        return sample.counts(self.scheme) if self.consumes == "counts" else sample.lines()


def hf_bpe(vocab_size: int, scheme: str = "whitespace") -> Trainer:
    """Byte-level BPE by HF ``BpeTrainer`` (:func:`modtok.artifacts.baselines.train_hf_bpe`)."""
    from modtok.artifacts import baselines

    return Trainer(f"hf-bpe-{vocab_size}", lambda lines: baselines.train_hf_bpe(lines, vocab_size, scheme))


def modtok_bpe(vocab_size: int, scheme: str = "whitespace") -> Trainer:
    """modtok standard BPE from pre-token counts (:mod:`modtok.bpe.standard`), as an HF tokenizer."""
    from modtok.bpe import standard
    from modtok.bpe.export import hf_tokenizer

    return Trainer(
        f"modtok-bpe-{vocab_size}",
        lambda counts: hf_tokenizer(standard.train(counts, vocab_size, scheme)),
        "counts",
        scheme,
    )


def sp_unigram(vocab_size: int) -> Trainer:
    """sentencepiece Unigram with the project's settings (:func:`modtok.artifacts.baselines.train_sp_unigram`)."""
    from modtok.artifacts import baselines

    return Trainer(f"sp-unigram-{vocab_size}", lambda lines: baselines.train_sp_unigram(lines, vocab_size))


def sp_bpe(vocab_size: int) -> Trainer:
    """sentencepiece BPE, the same settings with ``model_type="bpe"``."""
    from modtok.artifacts import baselines

    return Trainer(
        f"sp-bpe-{vocab_size}", lambda lines: baselines.train_sp_unigram(lines, vocab_size, model_type="bpe")
    )


TRAINERS: dict[str, Callable[[int], Trainer]] = {
    "hf-bpe": hf_bpe,
    "modtok-bpe": modtok_bpe,
    "sp-unigram": sp_unigram,
    "sp-bpe": sp_bpe,
}


def make_trainer(kind: str, vocab_size: int) -> Trainer:
    """A trainer of :data:`TRAINERS` by name."""
    if kind not in TRAINERS:
        raise MixtureError(f"unknown trainer {kind!r} (known: {', '.join(TRAINERS)})")
    return TRAINERS[kind](vocab_size)


# --------------------------------------------------------------------------
# fertility on dev text


def pipeline_key(tokenizer) -> tuple[bytes, bytes] | None:
    """What an HF tokenizer's dev pre-tokens depend on — its normalizer and
    pre-tokenizer, as JSON — when its token count of a line is the sum of its
    model's token counts of the line's pre-tokens; else ``None``.

    HF ``tokenizers`` encodes a line as normalizer -> pre-tokenizer -> model,
    the model tokenizing each pre-token on its own ("The tokenization
    pipeline" of the ``tokenizers`` documentation), then the post-processor.
    The sum holds when nothing else acts: no added tokens (they are split out
    before normalisation), no post-processor, truncation or padding. Every
    tokenizer the project trains with HF or exports (:mod:`modtok.bpe.export`)
    qualifies; deployed ones with special tokens and templates do not.

    >>> from tokenizers import Tokenizer, models, pre_tokenizers
    >>> tok = Tokenizer(models.BPE())
    >>> tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    >>> pipeline_key(tok)
    (b'null', b'{"type":"WhitespaceSplit"}')
    >>> tok.add_special_tokens(["<s>"]) and pipeline_key(tok) is None
    True
    """
    from tokenizers import Tokenizer

    if not isinstance(tokenizer, Tokenizer):
        return None
    if (tokenizer.get_added_tokens_decoder() or tokenizer.post_processor is not None
            or tokenizer.truncation is not None or tokenizer.padding is not None):
        return None
    state = [part.__getstate__() if part is not None else b"null"
             for part in (tokenizer.normalizer, tokenizer.pre_tokenizer)]
    return state[0], state[1]


@dataclass
class _DevPieces:
    """The dev text of every language as distinct pre-tokens (over all
    languages): language ``lang`` has ``counts[lang][i]`` times the pre-token
    ``pieces[ids[lang][i]]``."""

    pieces: list[str]
    ids: dict[str, np.ndarray]  # lang -> (n_distinct_in_lang,) int64
    counts: dict[str, np.ndarray]  # lang -> (n_distinct_in_lang,) int64

    @classmethod
    def of(cls, tokenizer, lines: Mapping[str, Sequence[str]]) -> "_DevPieces":
        from modtok.evaluation.audit import pretokens

        index: dict[str, int] = {}
        ids, counts = {}, {}
        for lang, ls in lines.items():
            c = Counter(p for line in ls for p in pretokens(tokenizer, line))
            ids[lang] = np.fromiter((index.setdefault(p, len(index)) for p in c), dtype=np.int64, count=len(c))
            counts[lang] = np.fromiter(c.values(), dtype=np.int64, count=len(c))
        return cls(list(index), ids, counts)

    def totals(self, tokenizer) -> dict[str, int]:
        """Σ over each language's lines of the tokens of ``tokenizer`` (whose
        :func:`pipeline_key` made these pieces): its model's ``tokenize`` —
        what the pipeline calls on each pre-token — once per distinct pre-token
        (without the pipeline's per-text ``Encoding``: about half the CPU of
        ``encode_batch_fast`` on the same pre-tokens), weighted by the counts."""
        lens = np.fromiter(map(len, map(tokenizer.model.tokenize, self.pieces)),
                           dtype=np.int64, count=len(self.pieces))  # (n_pieces,)
        return {lang: int(lens[ids] @ self.counts[lang]) for lang, ids in self.ids.items()}


class DevSet:
    """Dev lines and their whitespace-word counts (counted once).

    Every iteration measures a new tokenizer on the same dev lines. For an HF
    tokenizer whose counts are sums over pre-tokens (:func:`pipeline_key`) the
    lines are cut into pre-tokens once per pipeline (cached by its key), and
    each distinct pre-token (over all languages; ~118k for 16 × 997 FLORES
    lines, ~311k pre-tokens in all) is tokenized once by the model alone:
    ΣT(x) = Σ_p count(p)·T(p).
    The totals are identical to encoding line by line
    (``tests/test_mixture.py``); other tokenizers are encoded line by line.
    """

    def __init__(self, dev: Mapping[str, Sequence[str]], langs: Sequence[str]):
        self.lines, self.words = {}, {}
        for lang in langs:
            lines = list(dev.get(lang) or [])
            if not lines:
                raise MissingDevTextError(f"{lang}: no dev text to measure fertility on")
            words = metrics.word_count(lines)
            if words == 0:
                raise MissingDevTextError(f"{lang}: the dev text has no whitespace word")
            self.lines[lang], self.words[lang] = lines, words
        self._pieces: dict[tuple[bytes, bytes], _DevPieces] = {}

    def token_totals(self, tokenizer) -> dict[str, int]:
        """ΣT(x) over each language's dev lines."""
        key = pipeline_key(tokenizer)
        if key is None:
            return {lang: int(metrics.token_counts(tokenizer, lines).sum()) for lang, lines in self.lines.items()}
        if key not in self._pieces:
            self._pieces[key] = _DevPieces.of(tokenizer, self.lines)
        return self._pieces[key].totals(tokenizer)

    def fertility(self, tokenizer) -> dict[str, float]:
        """Tokens per whitespace word of each language: ΣT(x) / Σ words."""
        return {lang: t / self.words[lang] for lang, t in self.token_totals(tokenizer).items()}


def mean(values: Mapping[str, float]) -> float:
    """Unweighted mean over languages (the paper's average)."""
    return float(np.mean(list(values.values())))


# --------------------------------------------------------------------------
# the outer loop


@dataclass
class History:
    """Everything an AdaptMix run did; ``steps[i]`` is iteration i:
    ``{"iteration", "mixture", "alloc", "used", "fertility", "mean_fertility"}``
    (the mixture and allocation it trained on, the dev fertility it reached).
    ``next_mixture`` is the update after the last step (where a resumed run starts)."""

    langs: list[str]
    params: dict
    steps: list[dict] = field(default_factory=list)
    next_mixture: dict = field(default_factory=dict)
    excluded: dict = field(default_factory=dict)
    tokenizers: list = field(default_factory=list, repr=False)  # per step, in memory only

    def to_json(self) -> dict:
        return {"langs": self.langs, "params": self.params, "steps": self.steps,
                "next_mixture": self.next_mixture, "excluded": self.excluded}

    @classmethod
    def from_json(cls, obj: Mapping) -> "History":
        try:
            return cls(list(obj["langs"]), dict(obj["params"]), list(obj["steps"]),
                       dict(obj["next_mixture"]), dict(obj.get("excluded", {})))
        except (KeyError, TypeError) as e:
            raise MixtureError(f"not an AdaptMix history: {e}") from None

    def save(self, path) -> None:
        """Write the history as JSON, atomically (tokenizers are not saved)."""
        from modtok.atomic import write_json

        write_json(path, self.to_json())

    @classmethod
    def load(cls, path) -> "History":
        import json
        from pathlib import Path

        try:
            obj = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            raise DataError(f"{path}: cannot read an AdaptMix history ({e})") from None
        return cls.from_json(obj)

    def best(self) -> int:
        """The iteration with the lowest mean dev fertility (ties: the earliest)."""
        return min(range(len(self.steps)), key=lambda i: (self.steps[i]["mean_fertility"], i))


def step(trainer: Trainer, pool: TextPool, mixture: Mapping[str, float], budget_chars: int,
         dev: DevSet, *, mu: float, eps: float, f_best: float | str = 1.0,
         policy: str = "cap") -> tuple[dict, Mixture, object]:
    """One AdaptMix iteration: allocate (Eq. 5) -> sample -> train -> dev
    fertility -> update (Eqs. 1-4, 7). Returns ``(record, next mixture, tokenizer)``."""
    langs = list(mixture)
    alloc = allocate(mixture, budget_chars, pool.available(langs), policy)
    sample = pool.take(alloc)
    tokenizer = trainer.train(trainer.data(sample))
    fert = dev.fertility(tokenizer)
    nxt = adaptmix_update(fert, mixture, mu=mu, eps=eps, f_best=f_best)
    record = {"mixture": dict(mixture), "alloc": alloc, "used": sample.used(),
              "fertility": fert, "mean_fertility": mean(fert)}
    return record, nxt, tokenizer


def adaptmix(
    trainer: Trainer,
    corpora: Mapping[str, Sequence[str]] | TextPool,
    budget_chars: int,
    iterations: int,
    mu: float,
    eps: float,
    dev: Mapping[str, Sequence[str]],
    *,
    f_best: float | str = 1.0,
    initial: Mapping[str, float] | None = None,
    policy: str = "cap",
    seed: int = 0,
    resume: History | None = None,
    checkpoint=None,
    keep_tokenizers: bool = False,
    progress: bool = False,
) -> History:
    """Run AdaptMix for ``iterations`` iterations (in all, counting resumed ones).

    Iteration 0 trains on ``initial`` (default: uniform, i.e. UniMix) and every
    later one on the update of the previous. Languages whose script is written
    without spaces are left out (fertility is undefined there;
    :func:`modtok.evaluation.metrics.written_without_spaces`) and listed in
    ``history.excluded``. ``resume`` continues a saved :class:`History` (same
    settings required); ``checkpoint`` (a path) saves the history after every
    iteration. ``keep_tokenizers`` keeps every iteration's tokenizer in memory
    (else only the last one). Same inputs and seed give the same history.
    """
    check_momentum(mu, eps)
    if not isinstance(iterations, int) or iterations < 1:
        raise MixtureError(f"iterations must be a positive integer, got {iterations!r}")
    if policy not in POLICIES:
        raise MixtureError(f"unknown over-allocation policy {policy!r} (known: {', '.join(POLICIES)})")
    pool = corpora if isinstance(corpora, TextPool) else TextPool(corpora, seed)
    excluded = {lang: "written without spaces: fertility is undefined"
                for lang in pool.languages if metrics.written_without_spaces(lang)}
    langs = [lang for lang in pool.languages if lang not in excluded]
    if not langs:
        raise DataError("no language written with spaces to run AdaptMix on")
    if not isinstance(budget_chars, (int, np.integer)) or budget_chars < len(langs):
        raise BudgetError(f"character budget T={budget_chars!r} is smaller than the number of languages ({len(langs)})")
    devset = DevSet(dev, langs)
    params = {"trainer": trainer.name, "budget_chars": int(budget_chars), "mu": mu, "eps": eps,
              "f_best": f_best, "policy": policy, "seed": pool.seed}
    if resume is not None:
        if resume.params != params or resume.langs != langs:
            raise MixtureError(f"cannot resume: the saved run has {resume.params} on {resume.langs}, "
                               f"this one {params} on {langs}")
        history, mixture = resume, dict(resume.next_mixture)
    else:
        if initial is None:
            mixture = uniform(langs)
        else:
            if set(initial) != set(langs):
                raise MixtureError(f"initial mixture languages {sorted(initial)} differ from {sorted(langs)}")
            mixture = normalise({lang: initial[lang] for lang in langs}, "initial mixture")
        history = History(langs, params, excluded=excluded)
    with progress_bar(total=iterations, initial=len(history.steps), desc="AdaptMix", enabled=progress) as bar:
        while len(history.steps) < iterations:
            record, mixture, tokenizer = step(trainer, pool, mixture, int(budget_chars), devset,
                                              mu=mu, eps=eps, f_best=f_best, policy=policy)
            history.steps.append({"iteration": len(history.steps), **record})
            history.next_mixture = mixture
            history.tokenizers = (history.tokenizers if keep_tokenizers else []) + [tokenizer]
            if checkpoint is not None:
                history.save(checkpoint)
            bar.update(1)
    return history


def train_on(trainer: Trainer, pool: TextPool, mixture: Mapping[str, float], budget_chars: int,
             policy: str = "cap") -> tuple[object, dict[str, int]]:
    """A tokenizer trained on one fixed mixture (a baseline): ``(tokenizer, allocation)``."""
    alloc = allocate(mixture, budget_chars, pool.available(list(mixture)), policy)
    return trainer.train(trainer.data(pool.take(alloc))), alloc


# --------------------------------------------------------------------------
# beyond the paper: adaptive budgets for modular (sequential) BPE


def adaptive_budgets(
    counts_by_lang: Mapping[str, Counter],
    total_k: int,
    iterations: int,
    mu: float,
    eps: float,
    dev: Mapping[str, Sequence[str]],
    *,
    target: str = "fertility",
    pivot: str = "eng_Latn",
    f_best: float | str = 1.0,
    order: Sequence[str] | None = None,
    scheme: str = "whitespace",
) -> dict:
    """The AdaptMix feedback loop on sequential BPE's per-language budgets k_l.

    Sequential BPE (:func:`modtok.bpe.sequential.train_sequential`) gives each
    language a sub-vocabulary of k_l tokens (256 bytes included). Here the
    *budgets*, not the data, are the mixture: m_l = (k_l − 256) / (K − 256·n)
    under a fixed total K = Σ k_l. Each iteration trains, measures every
    extracted subtokenizer's ``target`` on dev text — ``"fertility"``, or
    ``"premium"`` (tokens for the same content relative to the ``pivot``
    language's own subtokenizer; needs parallel dev text, and f_best = 1.0 is
    then parity) — and applies Eqs. 1–5 to the budgets. Returns
    ``{"steps": [{"iteration", "k", "score", "mean_score"}], "langs", "target"}``.
    """
    from modtok.bpe.sequential import check_order, train_sequential

    check_momentum(mu, eps)
    if target not in ("fertility", "premium"):
        raise MixtureError(f"target must be 'fertility' or 'premium', got {target!r}")
    langs = check_order(counts_by_lang, order)
    free = total_k - 256 * len(langs)
    if free < len(langs):
        raise BudgetError(f"total vocabulary K={total_k} leaves fewer than one token per language "
                          f"above the 256 bytes of each of {len(langs)} subtokenizers")
    devset = DevSet(dev, langs)
    if target == "premium" and pivot not in langs:
        raise UnknownLanguageError(pivot, langs)
    mixture, steps = uniform(langs), []
    for it in range(iterations):
        extra = allocate(mixture, free)
        k = {lang: 256 + extra[lang] for lang in langs}
        tok = train_sequential(counts_by_lang, k, order=langs, scheme=scheme).modular()
        tokens = {lang: int(metrics.token_counts(tok.subtokenizer([lang]), devset.lines[lang]).sum())
                  for lang in langs}
        if target == "fertility":
            score = {lang: tokens[lang] / devset.words[lang] for lang in langs}
        else:
            score = {lang: tokens[lang] / tokens[pivot] for lang in langs}
        steps.append({"iteration": it, "k": k, "score": score, "mean_score": mean(score)})
        mixture = adaptmix_update(score, mixture, mu=mu, eps=eps, f_best=f_best)
    return {"langs": langs, "target": target, "total_k": total_k, "steps": steps}
