"""Pre-tokenization: named split regexes, the byte-level alphabet, pre-token counts.

A pre-tokenizer cuts text into *pre-tokens*; BPE merges never cross their
borders. The same named scheme is used for training, for metrics and for the
exported ``tokenizer.json`` (an HF ``Split`` with the same regex), so a
tokenizer always sees the text cut the same way.

>>> pretokenize("Hello world, 2024!", "llama3")
['Hello', ' world', ',', ' ', '202', '4', '!']
>>> pretokenize("नमस्ते", "llama3")       # letters-only: split at the marks
['नमस', '्त', 'े']
>>> pretokenize("नमस्ते", "llama3-marks")  # the repair keeps the word whole
['नमस्ते']

Schemes (``SCHEMES``):

``gpt2``          GPT-2's pattern.
``cl100k``        OpenAI cl100k_base.
``o200k``         OpenAI o200k_base (case-aware, marks in the word class).
``llama3``        Llama-3 = Qwen2/3 letters-only pattern, digits in groups of <= 3.
``qwen2``         Qwen2/Qwen3: like ``llama3`` but single digits.
``qwen3.5``       Qwen3.5: ``qwen2`` with ``\\p{M}`` added to the word class.
``llama3-marks``  mark-aware repair of ``llama3``: ``\\p{M}`` joins the word class
                  and leaves the leading and the punctuation classes.
``llama3-deva``   Devanagari-only repair: the same, with an explicit class of the
                  34 Devanagari combining marks (``DEVANAGARI_MARKS``) instead of
                  ``\\p{M}``, so no other script changes at all.
``whitespace``    words with their leading space, runs of whitespace (the
                  whitespace-style pre-tokenization of the papers' baselines).
``sentencepiece`` sentencepiece's words (``split_by_whitespace`` with whitespace-only
                  pieces allowed): a run of spaces (or ``▁``) with the text after it up to
                  the next space; what merged Unigram trains on (:mod:`modtok.unigram.units`
                  adds the dummy-prefix ``▁``), so its counts can be saved (``modtok count
                  --scheme sentencepiece``) like any other scheme's.
"""

from __future__ import annotations

import multiprocessing
from collections import Counter
from collections.abc import Iterable, Mapping
from concurrent.futures import ProcessPoolExecutor
from functools import lru_cache

import regex

from modtok.errors import UnknownSchemeError

# The 34 combining marks (Mn, Mc) of the Devanagari block U+0900–U+097F:
# U+0900–0903, U+093A–093C, U+093E–094F, U+0951–0957, U+0962–0963.
DEVANAGARI_MARKS = "\u0900-\u0903\u093a-\u093c\u093e-\u094f\u0951-\u0957\u0962\u0963"

_CONTRACTIONS = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)"


def _letters_only(digits: str) -> str:
    return (
        _CONTRACTIONS
        + r"|[^\r\n\p{L}\p{N}]?\p{L}+|"
        + digits
        + r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
    )


def _mark_repair(marks: str, digits: str = r"\p{N}{1,3}") -> str:
    """The letters-only pattern with ``marks`` moved into the word class."""
    return (
        _CONTRACTIONS
        + rf"|[^\r\n\p{{L}}{marks}\p{{N}}]?[\p{{L}}{marks}]+|"
        + digits
        + rf"| ?[^\s\p{{L}}{marks}\p{{N}}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
    )


SCHEMES: dict[str, str] = {
    "gpt2": r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+""",
    "cl100k": r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+""",
    "o200k": "|".join(
        [
            r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
            r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
            r"""\p{N}{1,3}""",
            r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
            r"""\s*[\r\n]+""",
            r"""\s+(?!\S)""",
            r"""\s+""",
        ]
    ),
    "llama3": _letters_only(r"\p{N}{1,3}"),
    "qwen2": _letters_only(r"\p{N}"),
    "qwen3.5": _CONTRACTIONS
    + r"|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",
    "llama3-marks": _mark_repair(r"\p{M}"),
    "llama3-deva": _mark_repair(DEVANAGARI_MARKS),
    "whitespace": r""" ?\S+|\s+(?!\S)|\s+""",
    # Only U+0020 and U+2581 separate: sentencepiece's identity normalisation turns spaces (and
    # nothing else: not tabs, not U+00A0) into "▁" and cuts before a "▁" that follows another
    # character (tests/test_unigram_counts.py checks the map to sentencepiece's words).
    "sentencepiece": "[ \u2581]+[^ \u2581]*|[^ \u2581]+",
}

# The one default pre-tokenizer of every trainer and baseline (a caller that wants the papers'
# whitespace baselines passes scheme="whitespace"). Letters-only: it splits Devanagari at its
# combining marks (the pre-token floor of notebook 07); "llama3-marks" is the repair.
DEFAULT_SCHEME = "llama3"


def pattern(scheme: str) -> str:
    """The regex source of a named scheme (what goes into ``tokenizer.json``)."""
    try:
        return SCHEMES[scheme]
    except KeyError:
        raise UnknownSchemeError(
            f"unknown pre-tokenizer {scheme!r} (known: {', '.join(SCHEMES)})"
        ) from None


@lru_cache(maxsize=None)
def _compile(source: str) -> regex.Pattern:
    return regex.compile(source)


def compiled(scheme: str) -> regex.Pattern:
    """The compiled ``regex`` pattern of a scheme (cached)."""
    return _compile(pattern(scheme))


def pretokenize(text: str, scheme: str = DEFAULT_SCHEME) -> list[str]:
    """Cut ``text`` into pre-tokens; their concatenation is always ``text``.

    >>> pretokenize("it's 12345 km", "gpt2")
    ['it', "'s", ' 12345', ' km']
    """
    return compiled(scheme).findall(text)


# --------------------------------------------------------------------------
# byte-level alphabet


@lru_cache(maxsize=1)
def bytes_to_unicode() -> dict[int, str]:
    """GPT-2's reversible map from the 256 byte values to printable characters.

    Printable Latin-1 bytes map to themselves; the others (control bytes,
    space, ...) are shifted to U+0100 and up, so every byte-level token is a
    visible string. ``bytes_to_unicode()[ord(" ")] == "Ġ"``.
    """
    keep = (
        list(range(ord("!"), ord("~") + 1))
        + list(range(ord("¡"), ord("¬") + 1))
        + list(range(ord("®"), ord("ÿ") + 1))
    )
    table, shift = {}, 0
    for b in range(256):
        if b in keep:
            table[b] = chr(b)
        else:
            table[b] = chr(256 + shift)
            shift += 1
    return table


@lru_cache(maxsize=1)
def unicode_to_bytes() -> dict[str, int]:
    """Inverse of :func:`bytes_to_unicode`."""
    return {c: b for b, c in bytes_to_unicode().items()}


def byte_alphabet() -> list[str]:
    """The 256 base symbols of a byte-level tokenizer, in byte order."""
    table = bytes_to_unicode()
    return [table[b] for b in range(256)]


@lru_cache(maxsize=1)
def _byte_level_table() -> dict[int, str]:
    return str.maketrans({chr(b): c for b, c in bytes_to_unicode().items()})


def byte_level(data: bytes) -> str:
    """Raw bytes (a token, or ``text.encode("utf-8")``) in the byte-level alphabet:
    the one encoder behind ``tokenizer.json`` strings, rank conversion and tests.

    >>> byte_level(" é".encode("utf-8")), byte_level(b"\\xff")
    ('ĠÃ©', 'ÿ')
    """
    return data.decode("latin-1").translate(_byte_level_table())  # latin-1: code point b = byte b


def from_byte_level(symbols: str) -> bytes:
    """Inverse of :func:`byte_level`; KeyError on a character outside the alphabet."""
    inv = unicode_to_bytes()
    return bytes(inv[c] for c in symbols)


# --------------------------------------------------------------------------
# counting


def count_chunk(args: tuple[str, list[str]]) -> Counter:
    """Pre-token counts of ``(regex source, lines)``: one picklable task of a process pool.

    >>> count_chunk((pattern("whitespace"), ["a b a"]))
    Counter({'a': 1, ' b': 1, ' a': 1})
    """
    source, lines = args
    findall = _compile(source).findall
    counts: Counter = Counter()
    for line in lines:
        counts.update(findall(line))
    return counts


def count_pretokens(
    lines: Iterable[str],
    scheme: str = DEFAULT_SCHEME,
    workers: int = 1,
    chunk_lines: int = 20_000,
) -> Counter:
    """Count the pre-tokens of every line (lines are units: nothing crosses them).

    ``workers`` processes share the lines in chunks of ``chunk_lines``. The
    default is 1: a library call never forks behind a notebook's back; pass
    ``workers=os.cpu_count()`` for big corpora (the pool's 61 MB: 7.1 s on 2
    processes vs about 13 s on one, bench/RESULTS.md). Text of at most one
    chunk is counted in this process whatever ``workers`` says. The result does
    not depend on ``workers``.

    >>> sorted(count_pretokens(["a b", "a"], "whitespace").items())
    [(' b', 1), ('a', 2)]
    """
    return count_by_language({None: lines}, scheme, workers, chunk_lines)[None]


def count_by_language(
    corpus: Mapping[str, Iterable[str]],
    scheme: str = DEFAULT_SCHEME,
    workers: int = 1,
    chunk_lines: int = 20_000,
    *,
    split: str | None = None,
) -> dict[str, Counter]:
    """``{lang: Counter(pre-token -> count)}`` for a ``{lang: lines}`` corpus.

    All languages' lines are cut into chunks of ``chunk_lines`` that ``workers``
    processes count in parallel (default 1, as in :func:`count_pretokens`), so
    many small languages use every core too. ``split``: a regex source to cut
    with instead of the scheme's (a deployed tokenizer's own Split regex).

    >>> count_by_language({"x": ["ab ab"]}, split="[^ ]+| ")
    {'x': Counter({'ab': 2, ' ': 1})}
    """
    source = pattern(scheme) if split is None else split  # fail early on an unknown scheme
    corpus = {lang: lines if isinstance(lines, list) else list(lines) for lang, lines in corpus.items()}
    n_lines = sum(map(len, corpus.values()))
    if workers <= 1 or n_lines <= chunk_lines:
        return {lang: count_chunk((source, lines)) for lang, lines in corpus.items()}
    spans = [(lang, i, i + chunk_lines) for lang, lines in corpus.items() for i in range(0, max(len(lines), 1), chunk_lines)]
    forked = multiprocessing.get_start_method() == "fork"
    if forked:
        _FORKED.update(corpus)
        fn, tasks = _count_span, [(source, *span) for span in spans]
    else:
        fn, tasks = count_chunk, [(source, corpus[lang][i:j]) for lang, i, j in spans]
    counts: dict = {}
    try:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            for (lang, _, _), part in zip(spans, pool.map(fn, tasks)):
                if lang in counts:
                    counts[lang].update(part)
                else:  # a language's first part is its Counter: no copy (the parts come in order)
                    counts[lang] = part
    finally:
        _FORKED.clear()
    return counts


# The corpus of a running count_by_language, for forked workers: they inherit it and read
# their span by position instead of receiving it pickled (the parent's CPU on the pool's
# 98 MB: 0.9 s, half of it pickling the lines; issue 23). Set only while a pool runs.
_FORKED: dict[str, list[str]] = {}


def _count_span(args: tuple[str, str, int, int]) -> Counter:
    source, lang, start, stop = args
    return count_chunk((source, _FORKED[lang][start:stop]))


def hf_pre_tokenizer(scheme: str = DEFAULT_SCHEME):
    """The HF ``tokenizers`` pre-tokenizer of a scheme for a byte-level model:
    ``Split(regex, "isolated")`` then ``ByteLevel(use_regex=False)``."""
    from tokenizers import Regex, pre_tokenizers

    return pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(pattern(scheme)), behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
