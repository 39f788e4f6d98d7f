"""How well a tokenizer compresses each language: NSL, tokens/char, premium, Gini, ...

Every metric is a ratio of *corpus totals* (never a mean of per-line ratios),
so long and short lines weigh by their length. Lines are units: a tokenizer
encodes each line on its own, without special tokens.

>>> class Chars:                      # a toy tokenizer: one token per character
...     def encode(self, text): return [ord(c) for c in text]
>>> class Words:                      # another: one token per whitespace word
...     def encode(self, text): return [hash(w) for w in text.split()]
>>> token_counts(Chars(), ["ab c", "d"]).tolist()
[4, 1]
>>> nsl(Chars(), Words(), ["ab c", "d"])        # (4 + 1) / (2 + 1)
1.6666666666666667

Definitions (``T(x)`` = number of tokens of line ``x``, sums over the corpus):

=====================  ======================================================
``nsl``                ΣT(x) / ΣT_ref(x): normalised sequence length against a
                       reference tokenizer (Eq. 1 of "To Each Language Its
                       Tokenizer"); < 1 means shorter than the reference
``tokens_per_char``    ΣT(x) / Σ(characters of x)   (Unicode code points)
``fertility``          ΣT(x) / Σ(whitespace words of x) (``str.split``); NaN,
                       i.e. undefined, for a language whose script is written
                       without spaces between words (:data:`modtok.text.data.SPACELESS_SCRIPTS`)
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

import numpy as np

from modtok.errors import (
    DataError,
    ParallelCorpusError,
    UnknownLanguageError,
    UnsupportedTokenizerError,
)
from modtok.text.data import written_without_spaces

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


# --------------------------------------------------------------------------
# text sizes


def char_count(lines: Iterable[str]) -> int:
    """Unicode code points over all lines."""
    return sum(len(line) for line in lines)


def byte_count(lines: Iterable[str]) -> int:
    """UTF-8 bytes over all lines."""
    return sum(len(line.encode("utf-8")) for line in lines)


def word_count(lines: Iterable[str]) -> int:
    """Whitespace-separated words (``str.split``) over all lines."""
    return sum(len(line.split()) for line in lines)


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
    return nsl_from_counts(token_counts(tokenizer, lines), token_counts(reference, lines))


def tokens_per_char(tokenizer, lines: Iterable[str]) -> float:
    """ΣT(x) / Σ characters (code points)."""
    lines = _lines(lines)
    return ratio(token_counts(tokenizer, lines).sum(), char_count(lines), "tokens per character")


def fertility_from_counts(counts, lines: Iterable[str], lang: str | None = None) -> float:
    """ΣT(x) / Σ words; NaN for a ``lang`` written without spaces."""
    if lang is not None and written_without_spaces(lang):
        return float("nan")
    return ratio(np.sum(counts), word_count(lines), "fertility (no whitespace word)")


def fertility(tokenizer, lines: Iterable[str], lang: str | None = None) -> float:
    """Tokens per whitespace word, ΣT(x) / Σ len(x.split()).

    Returns ``float('nan')`` (undefined) when ``lang`` is given and its script
    is written without spaces (:func:`written_without_spaces`). Without
    ``lang`` the text is taken to be space-delimited.
    """
    lines = _lines(lines)
    if lang is not None and written_without_spaces(lang):
        return float("nan")
    return fertility_from_counts(token_counts(tokenizer, lines), lines)


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


def premium(tokenizer, lines: Iterable[str], english_lines: Iterable[str]) -> float:
    """Tokenization premium of a language over English on parallel text.

    Lines are aligned by position: line i of ``lines`` translates line i of
    ``english_lines``; both must have the same number of lines. The premium is
    the ratio of totals over all aligned pairs, Σ_i T(lang_i) / Σ_i T(eng_i)
    (not the mean of per-pair ratios), so it is the NSL of the language's
    side against the English side.
    """
    sides = aligned({"lang": lines, "eng": english_lines})
    return ratio(
        token_counts(tokenizer, sides["lang"]).sum(),
        token_counts(tokenizer, sides["eng"]).sum(),
        "premium (the English side has no token)",
    )


def premiums(tokenizer, parallel: Mapping[str, Iterable[str]], pivot: str = "eng_Latn") -> dict[str, float]:
    """:func:`premium` of every language of a parallel corpus against ``pivot``."""
    sides = aligned(parallel)
    if pivot not in sides:
        raise UnknownLanguageError(pivot, sides)
    totals = {lang: int(token_counts(tokenizer, lines).sum()) for lang, lines in sides.items()}
    return {lang: ratio(t, totals[pivot], f"premium (the {pivot} side has no token)") for lang, t in totals.items()}


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


def language_costs(tokenizer, parallel: Mapping[str, Iterable[str]]) -> dict[str, int]:
    """Total tokens each language needs for the same (aligned) content."""
    return {lang: int(token_counts(tokenizer, lines).sum()) for lang, lines in aligned(parallel).items()}


def cost_gini(tokenizer, parallel: Mapping[str, Iterable[str]]) -> float:
    """Gini coefficient of the per-language token totals on parallel text
    (the disparity measure of "Parity-Aware Byte-Pair Encoding")."""
    return gini(list(language_costs(tokenizer, parallel).values()))


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
    ids = encode_lines(tokenizer, lines)
    flat = np.fromiter((i for seq in ids for i in seq), dtype=np.int64)
    values, counts = np.unique(flat, return_counts=True)
    return dict(zip(values.tolist(), counts.tolist()))


def vocab_utilisation(tokenizer, lines: Iterable[str], vocab_size: int | None = None) -> float:
    """Share of the vocabulary that occurs at least once on ``lines``:
    |{ids used}| / |V| (``|V|`` from :func:`vocab_size_of` unless given)."""
    size = vocab_size if vocab_size is not None else vocab_size_of(tokenizer)
    return ratio(len(unigram_counts(tokenizer, lines)), size, "vocabulary utilisation")


def vocab_utilisation_by_language(
    tokenizer, corpus: Mapping[str, Iterable[str]], vocab_size: int | None = None
) -> dict[str, float]:
    """:func:`vocab_utilisation` of each language's text."""
    if not corpus:
        raise DataError("empty corpus (no language)")
    return {lang: vocab_utilisation(tokenizer, _lines(lines, lang), vocab_size) for lang, lines in corpus.items()}


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
    return renyi_efficiency_from_counts(unigram_counts(tokenizer, lines), size, alpha)


# --------------------------------------------------------------------------
# a table for notebooks


def language_table(tokenizers: Mapping[str, object], reference, corpus: Mapping[str, Iterable[str]]) -> list[dict]:
    """One row per (language, tokenizer) for notebooks, in corpus order then
    tokenizer order: ``{"lang", "tokenizer", "tokens", "nsl", "tokens_per_char",
    "bytes_per_token", "fertility"}``.

    ``reference`` is one tokenizer for all languages or ``{lang: tokenizer}``
    (e.g. monolingual BPE per language, as in the paper's Table 1). Each line
    set is encoded once per tokenizer.
    """
    if not corpus:
        raise DataError("empty corpus (no language)")
    if not tokenizers:
        raise DataError("no tokenizer to tabulate")
    rows = []
    for lang, lines in corpus.items():
        lines = _lines(lines, lang)
        if isinstance(reference, Mapping):
            if lang not in reference:
                raise UnknownLanguageError(lang, reference)
            ref = reference[lang]
        else:
            ref = reference
        ref_total = int(token_counts(ref, lines).sum())
        chars, nbytes = char_count(lines), byte_count(lines)
        for name, tok in tokenizers.items():
            total = int(token_counts(tok, lines).sum())
            rows.append(
                {
                    "lang": lang,
                    "tokenizer": name,
                    "tokens": total,
                    "nsl": nsl_from_counts(total, ref_total),
                    "tokens_per_char": ratio(total, chars, f"{lang}: tokens per character"),
                    "bytes_per_token": ratio(nbytes, total, f"{lang}: bytes per token"),
                    "fertility": fertility_from_counts(total, lines, lang),
                }
            )
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


def compression_rate(tokenizer, lines: Iterable[str], unit: str = "bytes") -> float:
    """CR = Σ units / ΣT(x): how much text one token carries (higher compresses
    more). On parallel lines, ``unit="lines"`` compares languages by content."""
    lines = _lines(lines)
    return ratio(unit_count(lines, unit), token_counts(tokenizer, lines).sum(), f"compression rate ({unit})")


def compression_rates(tokenizer, corpus: Mapping[str, Iterable[str]], unit: str = "bytes") -> dict[str, float]:
    """:func:`compression_rate` of each language."""
    if not corpus:
        raise DataError("empty corpus (no language)")
    return {lang: compression_rate(tokenizer, _lines(lines, lang), unit) for lang, lines in corpus.items()}


def global_compression(tokenizer, corpus: Mapping[str, Iterable[str]], unit: str = "bytes") -> float:
    """Compression rate of all languages pooled: Σ_l units_l / Σ_l T_l."""
    if not corpus:
        raise DataError("empty corpus (no language)")
    sides = {lang: _lines(lines, lang) for lang, lines in corpus.items()}
    units = sum(unit_count(lines, unit) for lines in sides.values())
    tokens = sum(int(token_counts(tokenizer, lines).sum()) for lines in sides.values())
    return ratio(units, tokens, f"global compression rate ({unit})")


def vocab_utilisation_by_tier(
    tokenizer,
    corpus: Mapping[str, Iterable[str]],
    tiers: Mapping[str, str],
    vocab_size: int | None = None,
) -> dict[str, float]:
    """Mean per-language :func:`vocab_utilisation` within each resource tier
    (``tiers[lang]``, e.g. "high" / "medium" / "low"), tiers in first-seen order.
    Our reading of the paper's Fig. 1 (utilisation grouped by tier)."""
    per_lang = vocab_utilisation_by_language(tokenizer, corpus, vocab_size)
    groups: dict[str, list[float]] = {}
    for lang, value in per_lang.items():
        if lang not in tiers:
            raise UnknownLanguageError(lang, tiers)
        groups.setdefault(tiers[lang], []).append(value)
    return {tier: float(np.mean(values)) for tier, values in groups.items()}


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
    sides = aligned(parallel)
    size = vocab_size if vocab_size is not None else vocab_size_of(tokenizer)
    totals, per_byte, pooled, nbytes, fert_tokens, fert_words = [], [], [], 0, 0, 0
    for lang, lines in sides.items():
        ids = np.fromiter((i for seq in encode_lines(tokenizer, lines) for i in seq), np.int64)
        n = len(ids)
        totals.append(n)
        pooled.append(ids)
        lang_bytes = byte_count(lines)
        per_byte.append(ratio(n, lang_bytes, f"tokens per byte of {lang}"))
        nbytes += lang_bytes
        if not written_without_spaces(lang):
            fert_tokens += n
            fert_words += word_count(lines)
    used = np.bincount(np.concatenate(pooled))
    used = used[used > 0]
    return {
        "gini": gini(totals),
        "gini_per_byte": gini(per_byte),
        "global_compression": ratio(nbytes, sum(totals), "global compression rate"),
        "utilisation": ratio(len(used), size, "vocabulary utilisation"),
        "renyi": renyi_efficiency_from_counts(used, size, alpha),
        "fertility": ratio(fert_tokens, fert_words, "fertility") if fert_words else float("nan"),
        "tokens": int(sum(totals)),
    }
