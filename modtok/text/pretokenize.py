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
                  whitespace-style pre-tokenization of the papers' baselines), with runs of
                  text without spaces bounded (below).
``sentencepiece`` sentencepiece's words (``split_by_whitespace`` with whitespace-only
                  pieces allowed): a run of spaces (or ``▁``) with the text after it up to
                  the next space; what merged Unigram trains on (:mod:`modtok.unigram.units`
                  adds the dummy-prefix ``▁``), so its counts can be saved (``modtok count
                  --scheme sentencepiece``) like any other scheme's.
``llama3-marks-bounded``  ``llama3-marks`` with runs of text written without spaces bounded
                  (below): the training commands' default.

**Text without spaces.** Chinese, Japanese, Thai, Lao, Khmer and Burmese put no space
between words, so a scheme that cuts at spaces or keeps a run of letters whole makes
clause- or line-long pre-tokens of them (one 5 MB line: one 5 MB pre-token). The deployed
regexes (``gpt2`` ... ``qwen3.5``) do exactly that and are kept exact, as are
``llama3-marks`` / ``llama3-deva`` (the repairs written into adapted deployed tokenizers) and
``sentencepiece`` (sentencepiece's own words; its trainer bounds the pieces itself with
``split_by_unicode_script`` and ``max_sentencepiece_length=16``). modtok's own training
schemes, ``whitespace`` and ``llama3-marks-bounded``, follow sentencepiece's two rules inside
a pre-token: a run of one of the :data:`SPACELESS_RUNS` scripts (Han and kana together, as
sentencepiece merges them) is cut from the letters of other scripts beside it (rule
``script``) and into pieces of at most :data:`MAX_RUN` characters (rule ``length``); the
scheme's one leading space or punctuation mark stays on the first piece. Nothing is lost
(the pieces concatenate to the text), the rule is part of the regex (so ``tokenizer.json``
cuts the same way), and counting says how many pre-tokens each rule cut
(:func:`count_by_language` ``cuts=``; ``modtok count``'s ``meta.json``).

>>> pretokenize("東京タワーは" * 3, "llama3-marks-bounded")
['東京タワーは東京タワーは東京タワ', 'ーは']
>>> pretokenize("iPhoneの画面 ภาษาไทย", "whitespace")
['iPhone', 'の画面', ' ภาษาไทย']
"""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import re
import signal
import sys
import threading
import time
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


# Scripts written without spaces between words: the characters of one run each. Han, Hiragana
# and Katakana (with the prolonged sound mark U+30FC, script Common; and its halfwidth form
# U+FF70) are one run, as in sentencepiece's split_by_unicode_script (IsValidSentencePiece in
# its trainer_interface.cc; HF tokenizers' UnicodeScripts pre-tokenizer copies the rule): a
# Japanese word mixes them (食べる). Script is the Unicode Script property (the regex module
# and HF's Oniguruma read it alike: tests/test_pretokenize.py).
SPACELESS_RUNS: dict[str, str] = {
    "Han+kana": r"\p{Han}\p{Hiragana}\p{Katakana}\u30fc\uff70",
    "Thai": r"\p{Thai}",
    "Lao": r"\p{Lao}",
    "Khmer": r"\p{Khmer}",
    "Myanmar": r"\p{Myanmar}",
}
# Longest run piece in characters: sentencepiece's max_sentencepiece_length default (16).
MAX_RUN = 16
SPACELESS_CLASS = "[" + "".join(SPACELESS_RUNS.values()) + "]"
# A run longer than MAX_RUN: what the "length" rule cuts (else a cut pre-token was cut at a script change).
_LONG_RUN = "|".join(f"[{chars}]{{{MAX_RUN + 1}}}" for chars in SPACELESS_RUNS.values())


def _bounded_word(lead: str, char: str) -> str:
    """The word alternative ``lead char+`` of a scheme, bounded: a run of one
    :data:`SPACELESS_RUNS` script (``char`` and of that script) is a piece of its own, of
    at most :data:`MAX_RUN` characters and the combining marks of the script that follow
    the last (at most :data:`MAX_RUN` more: a piece never starts with a Thai vowel sign);
    the other characters of the word stay together. Every piece is a prefix of what
    ``lead char+`` would match, so the bound only cuts."""
    runs = "|".join(rf"(?:(?=[{chars}]){char}){{1,{MAX_RUN}}}(?:(?=[{chars}])\p{{M}}){{0,{MAX_RUN}}}"
                    for chars in SPACELESS_RUNS.values())
    return rf"{lead}(?:{runs}|(?:(?!{SPACELESS_CLASS}){char})+)"


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
    "whitespace": _bounded_word(" ?", r"\S") + r"|\s+(?!\S)|\s+",
    # Only U+0020 and U+2581 separate: sentencepiece's identity normalisation turns spaces (and
    # nothing else: not tabs, not U+00A0) into "▁" and cuts before a "▁" that follows another
    # character (tests/test_unigram_counts.py checks the map to sentencepiece's words).
    "sentencepiece": "[ \u2581]+[^ \u2581]*|[^ \u2581]+",
    "llama3-marks-bounded": _CONTRACTIONS + "|" + _bounded_word(r"[^\r\n\p{L}\p{M}\p{N}]?", r"[\p{L}\p{M}]")
    + r"|\p{N}{1,3}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",
}
# The bounded schemes without their bound: counting cuts with these, then bound_counts cuts
# the few pre-tokens that hold a spaceless run (the same pre-tokens, and the cuts counted).
UNBOUNDED: dict[str, str] = {
    "whitespace": r""" ?\S+|\s+(?!\S)|\s+""",
    "llama3-marks-bounded": SCHEMES["llama3-marks"],
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


class _Bounded:
    """A bounded scheme's compiled form: :meth:`findall` cuts text that holds no character
    of a spaceless script (``MAYBE_SPACELESS``, a superset of them in code point ranges)
    with the unbounded regex, which gives the same pieces there (the bound only cuts runs
    of those scripts): on 16k pool lines of Hindi and English the bounded regex took 2.4 s
    in the ``regex`` module, the unbounded one 0.77 s, the check 0.07 s."""

    def __init__(self, scheme: str):
        self.pattern = pattern(scheme)
        self._bounded, self._unbounded = _compile(self.pattern).findall, _compile(UNBOUNDED[scheme]).findall

    def findall(self, text: str) -> list[str]:
        return (self._unbounded if MAYBE_SPACELESS(text) is None else self._bounded)(text)


# Every character of SPACELESS_RUNS lies in these ranges (tests/test_pretokenize.py checks all
# code points); the stdlib `re` scans them 4x faster than `regex` does the script classes.
MAYBE_SPACELESS = re.compile(
    "[\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff\u19e0-\u19ff\u2e80-\u9fff\ua9e0-\ua9ff\uaa60-\uaa7f"
    "\uf900-\ufaff\uff66-\uff9f\U000116d0-\U000116ff\U00016fe0-\U00016fff\U0001aff0-\U0001b16f"
    "\U0001f200-\U0001f2ff\U00020000-\U0003ffff]").search


@lru_cache(maxsize=None)
def compiled(scheme: str) -> regex.Pattern | _Bounded:
    """The compiled pattern of a scheme (cached): a ``regex`` Pattern, or for a bounded
    scheme a :class:`_Bounded` (the same ``findall``, fast on text of other scripts)."""
    return _Bounded(scheme) if scheme in UNBOUNDED else _compile(pattern(scheme))


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


def bound_counts(counts: Counter, scheme: str) -> Counter:
    """Counts of ``UNBOUNDED[scheme]``'s pre-tokens -> counts of ``scheme``'s own, in place
    (a scheme without a bound: unchanged). Returns the pre-tokens cut, by rule:
    ``length`` (a run of one spaceless script longer than :data:`MAX_RUN`) or ``script``
    (cut only where such a run meets other letters). Only the distinct pre-tokens that hold
    a spaceless run are cut again, so this costs little beside counting.

    >>> c = Counter({"ab": 2, "ab漢字": 1, "漢" * 17: 3})
    >>> bound_counts(c, "whitespace"), sorted(c.items())
    (Counter({'length': 3, 'script': 1}), [('ab', 3), ('漢', 3), ('漢字', 1), ('漢漢漢漢漢漢漢漢漢漢漢漢漢漢漢漢', 3)])
    """
    cut: Counter = Counter()
    if scheme not in UNBOUNDED or not counts:
        return cut
    spaceless = _compile(SPACELESS_CLASS).search
    if spaceless("".join(counts)) is None:  # most languages: one search over all the keys, in C
        return cut
    findall, long_run = compiled(scheme).findall, _compile(_LONG_RUN).search
    for word in [w for w in counts if spaceless(w)]:
        pieces = findall(word)
        if len(pieces) > 1:
            n = counts.pop(word)
            cut["length" if long_run(word) else "script"] += n
            for piece in pieces:
                counts[piece] += n
    return cut


def describe_cut(cut: Counter) -> str:
    """What :func:`bound_counts` cut, in words (what a command prints).

    >>> describe_cut(Counter({"length": 2, "script": 5}))
    '7 pre-tokens cut (2 with a run over 16 characters of one script, 5 at a change of script only)'
    """
    n = sum(cut.values())
    return (f"{n} pre-token{'s' if n != 1 else ''} cut ({cut['length']} with a run over {MAX_RUN} characters of "
            f"one script, {cut['script']} at a change of script only)")


def counting_pattern(scheme: str) -> str:
    """The regex that counting cuts with before :func:`bound_counts`: ``UNBOUNDED[scheme]``
    for a bounded scheme, else the scheme's own (an unknown scheme is refused here)."""
    return UNBOUNDED.get(scheme) or pattern(scheme)


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
    cuts: dict | None = None,
) -> dict[str, Counter]:
    """``{lang: Counter(pre-token -> count)}`` for a ``{lang: lines}`` corpus.

    All languages' lines are cut into chunks of ``chunk_lines`` that ``workers``
    processes count in parallel (default 1, as in :func:`count_pretokens`), so
    many small languages use every core too. ``split``: a regex source to cut
    with instead of the scheme's (a deployed tokenizer's own Split regex).
    ``cuts``: a dict to receive ``{lang: Counter(rule -> pre-tokens cut)}`` of a
    bounded scheme (:func:`bound_counts`; empty Counters for the others).

    Workers end with this process, ``kill -9`` included (:func:`_worker_start`).

    >>> count_by_language({"x": ["ab ab"]}, split="[^ ]+| ")
    {'x': Counter({'ab': 2, ' ': 1})}
    >>> cuts = {}
    >>> count_by_language({"jpn_Jpan": ["日本語" * 6]}, "whitespace", cuts=cuts)["jpn_Jpan"], cuts
    (Counter({'日本語日本語日本語日本語日本語日': 1, '本語': 1}), {'jpn_Jpan': Counter({'length': 1})})
    """
    counts = _count(corpus, scheme if split is None else None, workers, chunk_lines, split)
    for lang, counter in counts.items():
        cut = bound_counts(counter, scheme) if split is None else Counter()
        if cuts is not None:
            cuts[lang] = cut
    return counts


def _count(corpus, scheme, workers, chunk_lines, split) -> dict[str, Counter]:
    """:func:`count_by_language` before the bound: with ``UNBOUNDED[scheme]`` (else the
    scheme's own regex, or ``split``)."""
    source = counting_pattern(scheme) if split is None else split  # an unknown scheme fails here
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
        with ProcessPoolExecutor(max_workers=workers, initializer=_worker_start, initargs=(os.getpid(),)) as pool:
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
# 98 MB: 0.9 s, half of it pickling the lines). Set only while a pool runs.
_FORKED: dict[str, list[str]] = {}


# prctl(2) option: the signal the kernel sends this process when the thread that forked it ends.
_PR_SET_PDEATHSIG = 1


def _worker_start(parent: int) -> None:
    """A counting worker's start (the pool's initializer): it never outlives ``parent``,
    and leaves Ctrl-C and SIGTERM to it.

    ``kill -9`` of the parent once left the workers blocked on their task pipe for good
    (two of 270 MB each). On Linux the kernel now kills a worker with SIGKILL when
    the parent's thread that started it ends (``PR_SET_PDEATHSIG``); a parent that died
    before that call is seen as a changed ``getppid()``, and the worker ends at once.
    Elsewhere (macOS, other POSIX) a daemon thread checks ``getppid()`` every second and
    ends the worker within about a second of the parent (on Windows ``getppid()`` keeps the
    dead parent's id; there, as under any "spawn" start, the worker holds no copy of the
    parent's end of its task pipe, so its next read fails once the parent is gone). The pool is started by the thread
    that calls :func:`count_by_language` and is shut down before it returns, so the death
    signal never fires early. SIGINT and SIGTERM sent to the whole process group (Ctrl-C, a
    batch system's kill) are ignored here: the parent alone reports them, once, and takes
    the workers down with it."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG) failed")
    else:
        threading.Thread(target=_watch_parent, args=(parent,), daemon=True).start()
    if os.getppid() != parent:  # the parent died before the death signal was armed
        os._exit(1)


def _watch_parent(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(1.0)
    os._exit(1)


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
