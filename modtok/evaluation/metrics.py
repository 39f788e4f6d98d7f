"""How well a tokenizer compresses each language: NSL, tokens/char, premium, Gini, ...

Every metric is a ratio of *corpus totals* (never a mean of per-line ratios),
so long and short lines weigh by their length. Lines are units: a tokenizer
encodes each line on its own, without special tokens.

Encode once: an :class:`Encoded` is one tokenizer's encoding of one text —
tokens per line, ids, pre-tokens per line, the ids' unigram counts, the
text's sizes — each part computed on first use and kept. Every measure has a
form ``..._of`` that reads an :class:`Encoded` (or a mapping language ->
:class:`Encoded`), so a caller needing several measures of the same text pays
for one encoding; the form ``measure(tokenizer, lines)`` encodes and calls it.

>>> class Chars:                      # a toy tokenizer: one token per character
...     def encode(self, text): return [ord(c) for c in text]
>>> class Words:                      # another: one token per whitespace word
...     def encode(self, text): return [hash(w) for w in text.split()]
>>> token_counts(Chars(), ["ab c", "d"]).tolist()
[4, 1]
>>> nsl(Chars(), Words(), ["ab c", "d"])        # (4 + 1) / (2 + 1)
1.6666666666666667
>>> e = Encoded(Chars(), ["ab c", "d"])
>>> e.tokens.tolist(), e.total, e.chars, e.words, len(e.unigram)   # 5 tokens, 4 distinct ids
([4, 1], 5, 5, 3, 5)
>>> tokens_per_char_of(e), fertility_of(e)
(1.0, 1.6666666666666667)

Definitions (``T(x)`` = number of tokens of line ``x``, sums over the corpus):

=====================  ======================================================
``nsl``                ΣT(x) / ΣT_ref(x): normalised sequence length against a
                       reference tokenizer (Eq. 1 of "To Each Language Its
                       Tokenizer"); < 1 means shorter than the reference
``tokens_per_char``    ΣT(x) / Σ(characters of x)   (Unicode code points)
``fertility``          ΣT(x) / Σ(whitespace words of x) (``str.split``); NaN,
                       i.e. undefined, for a language whose script is written
                       without spaces between words (:data:`modtok.text.data.SPACELESS_SCRIPTS`)
``pivot_fertility``    ΣT(x) / Σ(whitespace words of x's translation in a spaced
                       pivot language), on parallel lines: the fertility of a
                       language written without spaces (= premium × the pivot's
                       fertility; Petrov et al. 2023)
``premium``            ΣT(x_lang) / ΣT(x_eng) over aligned parallel lines
``cost_gini``          Gini coefficient of the per-language token totals on
                       parallel text (0 = every language costs the same)
``vocab_utilisation``  share of the vocabulary that occurs at least once
``renyi_efficiency``   H_α(unigram distribution of tokens) / log |V|
                       (Zouhar et al. 2023, α = 2.5)
``compression_rate``   Σ(units of x) / ΣT(x), units = bytes, characters or
                       lines ("Parity-Aware BPE" §2: CR(l) per language;
                       ``global_compression`` pools every language)
=====================  ======================================================
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from functools import cached_property

import numpy as np

from modtok.errors import (
    DataError,
    ParallelCorpusError,
    UnknownLanguageError,
    UnsupportedTokenizerError,
)
from modtok.text.data import written_without_spaces
from modtok.text.pretokenize import pattern

_BATCH = 10_000  # lines per encode_batch call (bounds the memory of HF Encodings)


# --------------------------------------------------------------------------
# encoding


def _lines(lines: Iterable[str], where: str = "corpus") -> list[str]:
    if isinstance(lines, str):
        raise DataError(f"{where}: expected an iterable of lines, got one string")
    lines = list(lines)
    if not lines:
        raise DataError(f"{where}: empty corpus (no line)")
    return lines


def _ids(item) -> Sequence[int]:
    return item.ids if hasattr(item, "ids") else item  # HF Encoding or a list of ids


def encode_lines(tokenizer, lines: Iterable[str]) -> list[Sequence[int]]:
    """Token ids of every line, without special tokens.

    The tokenizer is recognised in this order (the first that applies wins):

    1. an HF ``tokenizers.Tokenizer``: ``encode_batch(lines, add_special_tokens=False)``;
    2. a sentencepiece ``SentencePieceProcessor``: ``encode(lines, out_type=int)``;
    3. anything with ``encode_ordinary_batch`` (``tiktoken.Encoding``: special-token
       text is encoded as ordinary text);
    4. anything with ``encode_batch(list[str])`` (a :class:`~modtok.artifacts.modular.ModularTokenizer`,
       a ``SubTokenizer``, an HF ``BaseTokenizer`` wrapper);
    5. anything with ``encode(str)``.

    Each result may be a list of ids or an object with ``.ids`` (HF ``Encoding``).
    """
    lines = _lines(lines)
    batches = [lines[i : i + _BATCH] for i in range(0, len(lines), _BATCH)]
    from tokenizers import Tokenizer

    if isinstance(tokenizer, Tokenizer):
        return [e.ids for b in batches for e in tokenizer.encode_batch(b, add_special_tokens=False)]
    import sentencepiece

    if isinstance(tokenizer, sentencepiece.SentencePieceProcessor):
        return [ids for b in batches for ids in tokenizer.encode(b, out_type=int)]
    for method in ("encode_ordinary_batch", "encode_batch"):
        if callable(getattr(tokenizer, method, None)):
            encode = getattr(tokenizer, method)
            return [_ids(item) for b in batches for item in encode(b)]
    if callable(getattr(tokenizer, "encode", None)):
        return [_ids(tokenizer.encode(line)) for line in lines]
    raise UnsupportedTokenizerError(
        f"cannot encode with {type(tokenizer).__name__}: expected an HF tokenizers.Tokenizer, "
        "a SentencePieceProcessor, or an object with encode_batch(list[str]) or encode(str)"
    )


def token_counts(tokenizer, lines: Iterable[str]) -> np.ndarray:
    """Number of tokens of each line, shape ``(n_lines,)``, int64.

    An HF ``tokenizers.Tokenizer`` is counted with ``encode_batch_fast`` (no
    offsets) and ``len(encoding)``, without copying ids out: about a quarter
    less CPU than :func:`encode_lines`, same counts.
    """
    from tokenizers import Tokenizer

    if isinstance(tokenizer, Tokenizer) and callable(getattr(tokenizer, "encode_batch_fast", None)):
        lines = _lines(lines)
        return np.fromiter(
            (len(e) for i in range(0, len(lines), _BATCH)
             for e in tokenizer.encode_batch_fast(lines[i : i + _BATCH], add_special_tokens=False)),
            dtype=np.int64,
            count=len(lines),
        )
    return np.fromiter((len(ids) for ids in encode_lines(tokenizer, lines)), dtype=np.int64)


def pretokens(tokenizer, line: str, pre_tokenizer=None) -> list[str]:
    """The pre-tokens of ``line`` under an HF tokenizer's normalizer and its whole
    pre-tokenizer (or ``pre_tokenizer`` in its place); byte-level strings when the
    pipeline ends in ``ByteLevel``."""
    text = tokenizer.normalizer.normalize_str(line) if tokenizer.normalizer is not None else line
    pre = tokenizer.pre_tokenizer if pre_tokenizer is None else pre_tokenizer
    if pre is None:
        return [text] if text else []
    return [piece for piece, _ in pre.pre_tokenize_str(text)]


def pretoken_counts(tokenizer, lines: Iterable[str], pre_tokenizer=None) -> np.ndarray:
    """Number of pre-tokens of each line (:func:`pretokens`), shape ``(n_lines,)``."""
    return np.fromiter((len(pretokens(tokenizer, line, pre_tokenizer)) for line in lines), np.int64)


class Encoded:
    """``tokenizer``'s encoding of ``lines``: each part below is computed on first
    use and kept, so every measure of this text with this tokenizer shares one
    encoding (one ``encode_batch`` of the text, however many measures read it).

    ==============  ============================================================
    ``ids``         token ids of each line (:func:`encode_lines`)
    ``tokens``      tokens of each line, ``(n_lines,)`` int64: the lengths of
                    ``ids`` once they exist, else counted without them
                    (:func:`token_counts`; the same numbers, cheaper)
    ``total``       Σ tokens
    ``unigram``     occurrences of each id that occurs, in id order, int64
    ``pretokens``   pre-tokens of each line under the tokenizer's normalizer and
                    whole pre-tokenizer (:func:`pretoken_counts`; HF tokenizers)
    ``split(s)``    the same under only scheme ``s``'s regex, ``Split(isolated)``
                    (the tokenizer's normalizer kept): App. G's P_rep pipeline
    ``chars``, ``nbytes``, ``words``   the text's code points, UTF-8 bytes,
                    whitespace words
    ==============  ============================================================

    When a measure needs the ids, read them first (:meth:`with_ids`; the audit
    does): ``tokens`` then come from them instead of a second encoding.
    """

    def __init__(self, tokenizer, lines: Iterable[str], where: str = "corpus"):
        self.tokenizer = tokenizer
        self.lines = _lines(lines, where)
        self._splits: dict[str, np.ndarray] = {}

    def __len__(self) -> int:
        return len(self.lines)

    def with_ids(self) -> Encoded:
        """Encode for the ids now (so that ``tokens`` are their lengths); returns ``self``."""
        self.ids  # noqa: B018 (computes and keeps the cached property)
        return self

    @cached_property
    def ids(self) -> list[Sequence[int]]:
        return encode_lines(self.tokenizer, self.lines)

    @cached_property
    def tokens(self) -> np.ndarray:
        if "ids" in self.__dict__:
            return np.fromiter(map(len, self.ids), dtype=np.int64, count=len(self.ids))
        return token_counts(self.tokenizer, self.lines)

    @cached_property
    def total(self) -> int:
        return int(self.tokens.sum())

    @cached_property
    def id_counts(self) -> np.ndarray:
        """Occurrences of every id from 0 to the largest that occurs (zeros included)."""
        return np.bincount(np.fromiter((i for seq in self.ids for i in seq), dtype=np.int64, count=self.total))

    @cached_property
    def unigram(self) -> np.ndarray:
        return self.id_counts[self.id_counts > 0]

    @cached_property
    def pretokens(self) -> np.ndarray:
        return pretoken_counts(self.tokenizer, self.lines)

    def split(self, scheme: str) -> np.ndarray:
        if scheme not in self._splits:
            from tokenizers import Regex, pre_tokenizers

            regex = pre_tokenizers.Split(Regex(pattern(scheme)), behavior="isolated")
            self._splits[scheme] = pretoken_counts(self.tokenizer, self.lines, regex)
        return self._splits[scheme]

    @cached_property
    def chars(self) -> int:
        return char_count(self.lines)

    @cached_property
    def nbytes(self) -> int:
        return byte_count(self.lines)

    @cached_property
    def words(self) -> int:
        return word_count(self.lines)


def encode(tokenizer, corpus: Mapping[str, Iterable[str]]) -> dict[str, Encoded]:
    """Each language of ``corpus`` encoded once (:class:`Encoded`), in corpus order."""
    if not corpus:
        raise DataError("empty corpus (no language)")
    return {lang: Encoded(tokenizer, lines, lang) for lang, lines in corpus.items()}


# --------------------------------------------------------------------------
# text sizes


def char_count(lines: Iterable[str]) -> int:
    """Unicode code points over all lines."""
    return sum(len(line) for line in lines)


def byte_count(lines: Iterable[str]) -> int:
    """UTF-8 bytes over all lines."""
    return sum(len(line.encode("utf-8")) for line in lines)


# Ethiopic's wordspace ፡ (U+1361) separates words as a space does: Amharic written with it (the UDHR's)
# has no spaces, and str.split alone saw one word a line (a fertility of 72 in notebook 06 on UDHR text).
WORDSPACES = str.maketrans({"\u1361": " "})


def words_in(line: str) -> int:
    """Words of one line: whitespace-separated (``str.split``), Ethiopic's wordspace ፡ a separator too.

    >>> words_in("ሰው፡ሁሉ፡ሲወለድ"), words_in(" a  b\tc "), words_in("a ፡ b")
    (3, 3, 2)
    """
    return len(line.translate(WORDSPACES).split())


def word_count(lines: Iterable[str]) -> int:
    """Words (:func:`words_in`) over all lines."""
    return sum(map(words_in, lines))


def ratio(num: float, den: float, what: str) -> float:
    """``num / den`` as a float; a zero denominator is a :class:`DataError` naming ``what``.

    >>> ratio(3, 4, "tokens per byte")
    0.75
    """
    if den == 0:
        raise DataError(f"{what} is undefined: its denominator is 0 on this corpus")
    return float(num) / float(den)


# --------------------------------------------------------------------------
# one tokenizer, one language


def nsl_from_counts(counts, reference_counts) -> float:
    """NSL from token counts (arrays of per-line counts or totals).

    >>> nsl_from_counts([3, 1], [2, 2])
    1.0
    """
    return ratio(np.sum(counts), np.sum(reference_counts), "NSL (reference has no token)")


def nsl(tokenizer, reference, lines: Iterable[str]) -> float:
    """Normalised sequence length: ΣT(x) / ΣT_ref(x) over the corpus (paper Eq. 1)."""
    lines = _lines(lines)
    return nsl_from_counts(Encoded(tokenizer, lines).tokens, Encoded(reference, lines).tokens)


def tokens_per_char_of(e: Encoded) -> float:
    """ΣT(x) / Σ characters (code points) of an :class:`Encoded` text."""
    return ratio(e.total, e.chars, "tokens per character")


def tokens_per_char(tokenizer, lines: Iterable[str]) -> float:
    """ΣT(x) / Σ characters (code points)."""
    return tokens_per_char_of(Encoded(tokenizer, lines))


def fertility_from_counts(counts, lines: Iterable[str], lang: str | None = None) -> float:
    """ΣT(x) / Σ words; NaN for a ``lang`` written without spaces."""
    return fertility_from_totals(np.sum(counts), word_count(lines), lang)


def fertility_from_totals(tokens: int, words: int, lang: str | None = None) -> float:
    """Tokens over whitespace words, from the totals (for a caller that counted the words of a
    text once and measures many tokenizers on it); NaN for a ``lang`` written without spaces.

    >>> fertility_from_totals(12, 8), fertility_from_totals(12, 8, "tha_Thai")
    (1.5, nan)
    """
    if lang is not None and written_without_spaces(lang):
        return float("nan")
    return ratio(tokens, words, "fertility (no whitespace word)")


def pivot_fertility_from_totals(tokens: int, pivot_words: int) -> float:
    """Fertility of a language written without spaces, from totals over parallel lines: its
    tokens over the whitespace words of the same lines' translation in a *pivot* language
    written with spaces (English where there is one).

    A script without spaces has no whitespace word to divide by, so the words are borrowed
    from the translation: ΣT(x) / Σ words(x_pivot) = [ΣT(x) / ΣT(x_pivot)] · [ΣT(x_pivot) /
    Σ words(x_pivot)], i.e. the language's tokenization *premium* over the pivot (Petrov et
    al. 2023, "Language Model Tokenizers Introduce Unfairness Between Languages": tokens for
    the same FLORES-200 sentence relative to English; the parity "The Art of Breaking Words"
    reports in Table 7, citing it as [26]) times the pivot's own fertility. It is on the scale of
    fertility (tokens per word of the same content), so such a language can take part in
    AdaptMix's Eqs. 1-5 beside the spaced ones; on a spaced language with the pivot's word
    count it would be its fertility scaled by words(x) / words(x_pivot).

    >>> pivot_fertility_from_totals(30, 20)    # 30 tokens for content that is 20 English words
    1.5
    """
    return ratio(tokens, pivot_words, "fertility against the pivot (the pivot side has no whitespace word)")


def pivot_fertility(tokenizer, lines: Iterable[str], pivot_lines: Iterable[str]) -> float:
    """:func:`pivot_fertility_from_totals` of ``lines`` (a language written without spaces)
    against their translation ``pivot_lines`` (aligned by position, one line count, else
    :class:`ParallelCorpusError`): premium over the pivot × the pivot's fertility.

    >>> class Chars:
    ...     def encode(self, text): return [ord(c) for c in text]
    >>> pivot_fertility(Chars(), ["你好世界"], ["hello world"])      # 4 tokens, 2 English words
    2.0
    >>> premium(Chars(), ["你好世界"], ["hello world"]) * fertility(Chars(), ["hello world"])
    2.0
    """
    sides = aligned({"lang": lines, "pivot": pivot_lines})
    return pivot_fertility_from_totals(Encoded(tokenizer, sides["lang"]).total, word_count(sides["pivot"]))


def fertility_of(e: Encoded, lang: str | None = None) -> float:
    """:func:`fertility` of an :class:`Encoded` text."""
    if lang is not None and written_without_spaces(lang):
        return float("nan")
    return ratio(e.total, e.words, "fertility (no whitespace word)")


def fertility(tokenizer, lines: Iterable[str], lang: str | None = None) -> float:
    """Tokens per word, ΣT(x) / Σ words_in(x) (:func:`words_in`: whitespace-separated).

    Returns ``float('nan')`` (undefined) when ``lang`` is given and its script
    is written without spaces (:func:`written_without_spaces`): its fertility on
    parallel text is :func:`pivot_fertility`. Without ``lang`` the text is taken
    to be space-delimited.
    """
    lines = _lines(lines)
    if lang is not None and written_without_spaces(lang):
        return float("nan")
    return fertility_of(Encoded(tokenizer, lines))


# --------------------------------------------------------------------------
# parallel text


def aligned(corpus: Mapping[str, Iterable[str]]) -> dict[str, list[str]]:
    """The sides of a parallel corpus as lists, checked to have one line count
    (else :class:`ParallelCorpusError` with every side's count)."""
    if not corpus:
        raise DataError("empty parallel corpus (no language)")
    sides = {lang: _lines(lines, lang) for lang, lines in corpus.items()}
    sizes = {lang: len(lines) for lang, lines in sides.items()}
    if len(set(sizes.values())) > 1:
        shown = ", ".join(f"{lang}: {n}" for lang, n in sizes.items())
        raise ParallelCorpusError(f"parallel sides have different numbers of lines ({shown})")
    return sides


def check_aligned(encoded: Mapping[str, Encoded]) -> None:
    """The :class:`Encoded` sides of a parallel text have one line count (else
    :class:`ParallelCorpusError` with every side's count)."""
    if not encoded:
        raise DataError("empty parallel corpus (no language)")
    sizes = {lang: len(e) for lang, e in encoded.items()}
    if len(set(sizes.values())) > 1:
        shown = ", ".join(f"{lang}: {n}" for lang, n in sizes.items())
        raise ParallelCorpusError(f"parallel sides have different numbers of lines ({shown})")


def premium_of(x: Encoded, eng: Encoded) -> float:
    """:func:`premium` of an :class:`Encoded` language side over its English side."""
    check_aligned({"lang": x, "eng": eng})
    return ratio(x.total, eng.total, "premium (the English side has no token)")


def premium(tokenizer, lines: Iterable[str], english_lines: Iterable[str]) -> float:
    """Tokenization premium of a language over English on parallel text.

    Lines are aligned by position: line i of ``lines`` translates line i of
    ``english_lines``; both must have the same number of lines. The premium is
    the ratio of totals over all aligned pairs, Σ_i T(lang_i) / Σ_i T(eng_i)
    (not the mean of per-pair ratios), so it is the NSL of the language's
    side against the English side.
    """
    sides = aligned({"lang": lines, "eng": english_lines})
    return premium_of(Encoded(tokenizer, sides["lang"]), Encoded(tokenizer, sides["eng"]))


def premiums_of(encoded: Mapping[str, Encoded], pivot: str = "eng_Latn") -> dict[str, float]:
    """:func:`premiums` from each language's :class:`Encoded` side."""
    check_aligned(encoded)
    if pivot not in encoded:
        raise UnknownLanguageError(pivot, encoded)
    return {lang: ratio(e.total, encoded[pivot].total, f"premium (the {pivot} side has no token)")
            for lang, e in encoded.items()}


def premiums(tokenizer, parallel: Mapping[str, Iterable[str]], pivot: str = "eng_Latn") -> dict[str, float]:
    """:func:`premium` of every language of a parallel corpus against ``pivot``."""
    sides = aligned(parallel)
    if pivot not in sides:
        raise UnknownLanguageError(pivot, sides)
    return premiums_of(encode(tokenizer, sides), pivot)


def gini(values) -> float:
    """Gini coefficient by the mean absolute difference:
    G = Σ_i Σ_j |v_i − v_j| / (2 n² mean(v)).

    >>> gini([1, 2, 3, 4])        # ordered pairs sum 20; 2 * 16 * 2.5 = 80
    0.25
    >>> gini([5, 5, 5])
    0.0
    """
    v = np.asarray(values, dtype=np.float64)
    if v.ndim != 1 or v.size == 0:
        raise DataError("Gini coefficient needs a non-empty 1-d list of values")
    if (v < 0).any() or v.sum() == 0:
        raise DataError("Gini coefficient needs non-negative values with a positive sum")
    n = v.size
    return float(np.abs(v[:, None] - v[None, :]).sum() / (2 * n * n * v.mean()))


def language_costs_of(encoded: Mapping[str, Encoded]) -> dict[str, int]:
    """:func:`language_costs` from each language's :class:`Encoded` side."""
    check_aligned(encoded)
    return {lang: e.total for lang, e in encoded.items()}


def language_costs(tokenizer, parallel: Mapping[str, Iterable[str]]) -> dict[str, int]:
    """Total tokens each language needs for the same (aligned) content."""
    return language_costs_of(encode(tokenizer, aligned(parallel)))


def cost_gini_of(encoded: Mapping[str, Encoded]) -> float:
    """:func:`cost_gini` from each language's :class:`Encoded` side."""
    return gini(list(language_costs_of(encoded).values()))


def cost_gini(tokenizer, parallel: Mapping[str, Iterable[str]]) -> float:
    """Gini coefficient of the per-language token totals on parallel text
    (the disparity measure of "Parity-Aware Byte-Pair Encoding")."""
    return cost_gini_of(encode(tokenizer, aligned(parallel)))


# --------------------------------------------------------------------------
# vocabulary


def vocab_size_of(tokenizer) -> int:
    """Number of ids of a tokenizer: HF ``get_vocab_size(with_added_tokens=True)``,
    sentencepiece ``get_piece_size()``, else a ``vocab_size`` or ``n_vocab``
    attribute, else ``len(global_ids)`` (a ``SubTokenizer`` view)."""
    if callable(getattr(tokenizer, "get_vocab_size", None)):
        return int(tokenizer.get_vocab_size(with_added_tokens=True))
    if callable(getattr(tokenizer, "get_piece_size", None)):
        return int(tokenizer.get_piece_size())
    for attr in ("vocab_size", "n_vocab"):
        if isinstance(getattr(tokenizer, attr, None), int):
            return getattr(tokenizer, attr)
    if getattr(tokenizer, "global_ids", None) is not None:
        return len(tokenizer.global_ids)
    raise UnsupportedTokenizerError(
        f"cannot tell the vocabulary size of {type(tokenizer).__name__}: pass vocab_size="
    )


def unigram_counts(tokenizer, lines: Iterable[str]) -> dict[int, int]:
    """How often each token id occurs on the corpus."""
    counts = Encoded(tokenizer, lines).id_counts
    used = np.flatnonzero(counts)
    return dict(zip(used.tolist(), counts[used].tolist()))


def vocab_utilisation_of(e: Encoded, vocab_size: int | None = None) -> float:
    """:func:`vocab_utilisation` of an :class:`Encoded` text."""
    size = vocab_size if vocab_size is not None else vocab_size_of(e.tokenizer)
    return ratio(len(e.unigram), size, "vocabulary utilisation")


def vocab_utilisation(tokenizer, lines: Iterable[str], vocab_size: int | None = None) -> float:
    """Share of the vocabulary that occurs at least once on ``lines``:
    |{ids used}| / |V| (``|V|`` from :func:`vocab_size_of` unless given)."""
    return vocab_utilisation_of(Encoded(tokenizer, lines), vocab_size)


def vocab_utilisation_by_language(
    tokenizer, corpus: Mapping[str, Iterable[str]], vocab_size: int | None = None
) -> dict[str, float]:
    """:func:`vocab_utilisation` of each language's text."""
    return {lang: vocab_utilisation_of(e, vocab_size) for lang, e in encode(tokenizer, corpus).items()}


def renyi_efficiency_from_counts(counts, vocab_size: int, alpha: float = 2.5) -> float:
    """H_α(p) / log |V| for the unigram distribution p ∝ counts.

    H_α(p) = log(Σ p_i^α) / (1 − α), and the Shannon entropy when α = 1.

    >>> round(renyi_efficiency_from_counts([2, 1, 1], vocab_size=4, alpha=2.0), 6)   # log(8/3) / log 4
    0.707519
    """
    c = np.asarray(list(counts.values()) if isinstance(counts, Mapping) else counts, dtype=np.float64)
    if c.size == 0 or c.sum() <= 0 or (c < 0).any():
        raise DataError("Rényi efficiency needs non-negative token counts with a positive sum")
    if vocab_size < 2:
        raise DataError(f"Rényi efficiency needs a vocabulary of >= 2 tokens, got {vocab_size}")
    if alpha < 0:
        raise DataError(f"Rényi order alpha must be >= 0, got {alpha}")
    p = c[c > 0] / c.sum()
    if math.isclose(alpha, 1.0):
        h = float(-(p * np.log(p)).sum())
    else:
        h = float(np.log((p**alpha).sum()) / (1.0 - alpha))
    return h / math.log(vocab_size)


def renyi_efficiency(
    tokenizer, lines: Iterable[str], alpha: float = 2.5, vocab_size: int | None = None
) -> float:
    """Normalised Rényi efficiency of the token unigram distribution on ``lines``
    (Zouhar et al. 2023, "Tokenization and the Noiseless Channel")."""
    size = vocab_size if vocab_size is not None else vocab_size_of(tokenizer)
    return renyi_efficiency_from_counts(Encoded(tokenizer, lines).unigram, size, alpha)


# --------------------------------------------------------------------------
# the per-language rows of every study (one builder, one registry of columns)


def _nsl_column(lang: str, e: Encoded, ref: Encoded | None) -> float:
    return float("nan") if ref is None else nsl_from_counts(e.total, ref.total)


def _fertility_column(lang: str, e: Encoded, ref: Encoded | None) -> float:
    if written_without_spaces(lang):
        return float("nan")
    return ratio(e.total, e.words, "fertility (no whitespace word)")


# The columns of every study's per-language rows: name -> f(lang, e, ref), where ``e`` is one
# tokenizer's Encoded of the language's lines and ``ref`` the reference's (None in a study
# without a reference tokenizer: NSL is then NaN, undefined). A metric added here is a column
# of every study's rows (tests/test_contract.py), and of nothing else to edit.
LANGUAGE_METRICS = {
    "tokens": lambda lang, e, ref: e.total,
    "nsl": _nsl_column,
    "tokens_per_char": lambda lang, e, ref: ratio(e.total, e.chars, f"{lang}: tokens per character"),
    "bytes_per_token": lambda lang, e, ref: ratio(e.nbytes, e.total, f"{lang}: bytes per token"),
    "fertility": _fertility_column,  # NaN: a language written without spaces has no words to count
}


def language_table(tokenizers: Mapping[str, object], reference, corpus: Mapping[str, Iterable[str]]) -> list[dict]:
    """One row per (language, tokenizer) for notebooks, in corpus order then
    tokenizer order: ``{"lang", "tokenizer"}`` and a column per :data:`LANGUAGE_METRICS`
    (``tokens``, ``nsl``, ``tokens_per_char``, ``bytes_per_token``, ``fertility``).

    ``reference`` is one tokenizer for all languages or ``{lang: tokenizer}``
    (e.g. monolingual BPE per language, as in the paper's Table 1). Each line
    set is encoded once per tokenizer (:func:`language_table_of`).
    """
    if not corpus:
        raise DataError("empty corpus (no language)")
    if not tokenizers:
        raise DataError("no tokenizer to tabulate")
    encoded, references = {}, {}
    for lang, lines in corpus.items():
        lines = _lines(lines, lang)
        if isinstance(reference, Mapping) and lang not in reference:
            raise UnknownLanguageError(lang, reference)
        references[lang] = Encoded(reference[lang] if isinstance(reference, Mapping) else reference, lines, lang)
        encoded[lang] = {name: Encoded(tok, lines, lang) for name, tok in tokenizers.items()}
    return language_table_of(encoded, references)


def language_table_of(encoded: Mapping[str, Mapping[str, Encoded]],
                      reference: Mapping[str, Encoded] | None = None) -> list[dict]:
    """:func:`language_table` of texts already encoded: ``encoded[lang][name]`` and
    ``reference[lang]`` (one language's lines, encoded by each tokenizer and by the
    reference; ``reference=None``: no reference, NSL is NaN). The one builder of every
    study's per-language rows (:mod:`modtok.studies.contract`). A caller that keeps the
    Encoded of tokenizers that do not change (the deployed ones, the references) pays
    only for the new tokenizer's encoding.

    >>> class Chars:
    ...     def encode(self, text): return [ord(c) for c in text]
    >>> row = language_table_of({"eng_Latn": {"chars": Encoded(Chars(), ["ab c"])}})[0]
    >>> row["tokens"], row["fertility"], row["nsl"]
    (4, 2.0, nan)
    """
    rows = []
    for lang, by_name in encoded.items():
        if reference is not None and lang not in reference:
            raise UnknownLanguageError(lang, reference)
        ref = None if reference is None else reference[lang]
        for name, e in by_name.items():
            if ref is not None and e.lines is not ref.lines and e.lines != ref.lines:
                raise DataError(f"{lang}: {name} and the reference encoded different lines")
            rows.append({"lang": lang, "tokenizer": name,
                         **{column: f(lang, e, ref) for column, f in LANGUAGE_METRICS.items()}})
    return rows


# --------------------------------------------------------------------------
# compression rates and tiers ("Parity-Aware Byte-Pair Encoding", §2 and §5)

UNITS = ("bytes", "chars", "lines")


def unit_count(lines: Iterable[str], unit: str = "bytes") -> int:
    """Size of a corpus in ``unit``: UTF-8 bytes, characters (code points) or lines.

    >>> unit_count(["né", "a"], "bytes"), unit_count(["né", "a"], "chars"), unit_count(["né", "a"], "lines")
    (4, 3, 2)
    """
    lines = list(lines)
    if unit == "bytes":
        return byte_count(lines)
    if unit == "chars":
        return char_count(lines)
    if unit == "lines":
        return len(lines)
    raise DataError(f"unknown unit {unit!r} (known: {', '.join(UNITS)})")


def _units_of(e: Encoded, unit: str) -> int:
    """:func:`unit_count` of an :class:`Encoded` text (its sizes are counted once)."""
    if unit == "bytes":
        return e.nbytes
    if unit == "chars":
        return e.chars
    if unit == "lines":
        return len(e)
    raise DataError(f"unknown unit {unit!r} (known: {', '.join(UNITS)})")


def compression_rate_of(e: Encoded, unit: str = "bytes") -> float:
    """:func:`compression_rate` of an :class:`Encoded` text."""
    return ratio(_units_of(e, unit), e.total, f"compression rate ({unit})")


def compression_rate(tokenizer, lines: Iterable[str], unit: str = "bytes") -> float:
    """CR = Σ units / ΣT(x): how much text one token carries (higher compresses
    more). On parallel lines, ``unit="lines"`` compares languages by content."""
    return compression_rate_of(Encoded(tokenizer, lines), unit)


def compression_rates(tokenizer, corpus: Mapping[str, Iterable[str]], unit: str = "bytes") -> dict[str, float]:
    """:func:`compression_rate` of each language."""
    return {lang: compression_rate_of(e, unit) for lang, e in encode(tokenizer, corpus).items()}


def global_compression_of(encoded: Mapping[str, Encoded], unit: str = "bytes") -> float:
    """:func:`global_compression` from each language's :class:`Encoded` text."""
    if not encoded:
        raise DataError("empty corpus (no language)")
    units = sum(_units_of(e, unit) for e in encoded.values())
    return ratio(units, sum(e.total for e in encoded.values()), f"global compression rate ({unit})")


def global_compression(tokenizer, corpus: Mapping[str, Iterable[str]], unit: str = "bytes") -> float:
    """Compression rate of all languages pooled: Σ_l units_l / Σ_l T_l."""
    return global_compression_of(encode(tokenizer, corpus), unit)


def vocab_utilisation_by_tier_of(encoded: Mapping[str, Encoded], tiers: Mapping[str, str],
                                 vocab_size: int | None = None) -> dict[str, float]:
    """:func:`vocab_utilisation_by_tier` from each language's :class:`Encoded` text."""
    if not encoded:
        raise DataError("empty corpus (no language)")
    per_lang = {lang: vocab_utilisation_of(e, vocab_size) for lang, e in encoded.items()}
    groups: dict[str, list[float]] = {}
    for lang, value in per_lang.items():
        if lang not in tiers:
            raise UnknownLanguageError(lang, tiers)
        groups.setdefault(tiers[lang], []).append(value)
    return {tier: float(np.mean(values)) for tier, values in groups.items()}


def vocab_utilisation_by_tier(
    tokenizer,
    corpus: Mapping[str, Iterable[str]],
    tiers: Mapping[str, str],
    vocab_size: int | None = None,
) -> dict[str, float]:
    """Mean per-language :func:`vocab_utilisation` within each resource tier
    (``tiers[lang]``, e.g. "high" / "medium" / "low"), tiers in first-seen order.
    Our reading of the paper's Fig. 1 (utilisation grouped by tier)."""
    return vocab_utilisation_by_tier_of(encode(tokenizer, corpus), tiers, vocab_size)


def parity_summary(tokenizer, parallel: Mapping[str, Iterable[str]], vocab_size: int | None = None,
                   alpha: float = 2.5) -> dict[str, float]:
    """The intrinsic columns of the paper's Table 1 on parallel text, each language
    encoded once: ``gini`` (of per-language token totals: the cost of the same
    content, which parity-aware BPE equalises), ``gini_per_byte`` (of tokens per
    UTF-8 byte, the headline "Tokenizer Fairness Gini" of the paper's evaluation
    suite, cimeister/tokenizer-analysis-suite, which also charges a script for its
    bytes per character), ``global_compression`` (bytes per token, all languages
    pooled), ``utilisation`` (share of the vocabulary used by the pooled text),
    ``renyi`` (efficiency at ``alpha``), ``fertility`` (tokens per word over the
    space-delimited languages), ``tokens`` (total)."""
    return parity_summary_of(encode(tokenizer, aligned(parallel)), vocab_size, alpha)


def parity_summary_of(encoded: Mapping[str, Encoded], vocab_size: int | None = None,
                      alpha: float = 2.5) -> dict[str, float]:
    """:func:`parity_summary` from each language's :class:`Encoded` side."""
    check_aligned(encoded)
    size = vocab_size if vocab_size is not None else vocab_size_of(next(iter(encoded.values())).tokenizer)
    totals, per_byte, nbytes, fert_tokens, fert_words = [], [], 0, 0, 0
    pooled = np.zeros(max(len(e.id_counts) for e in encoded.values()), np.int64)
    for lang, e in encoded.items():
        n = e.total
        totals.append(n)
        pooled[: len(e.id_counts)] += e.id_counts
        per_byte.append(ratio(n, e.nbytes, f"tokens per byte of {lang}"))
        nbytes += e.nbytes
        if not written_without_spaces(lang):
            fert_tokens += n
            fert_words += e.words
    used = pooled[pooled > 0]
    return {
        "gini": gini(totals),
        "gini_per_byte": gini(per_byte),
        "global_compression": ratio(nbytes, sum(totals), "global compression rate"),
        "utilisation": ratio(len(used), size, "vocabulary utilisation"),
        "renyi": renyi_efficiency_from_counts(used, size, alpha),
        "fertility": ratio(fert_tokens, fert_words, "fertility") if fert_words else float("nan"),
        "tokens": int(sum(totals)),
    }
