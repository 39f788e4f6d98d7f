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

The schemes and their regexes are in :mod:`modtok.text.schemes` (imported here, as
before); counting cuts with the compiled pre-tokenizer :mod:`modtok.text.lexer` where it
implements the pattern, the ``regex`` module otherwise (the reference).

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

import numpy as np
import regex

from modtok.errors import UsageError
from modtok.text import lexer
from modtok.text.schemes import (  # noqa: F401 (re-exported: the schemes' long-standing home)
    DEFAULT_SCHEME,
    DEVANAGARI_MARKS,
    LONG_RUN,
    MAX_RUN,
    SCHEMES,
    SPACELESS_CLASS,
    SPACELESS_RUNS,
    UNBOUNDED,
    counting_pattern,
    pattern,
)


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
# code points); the stdlib `re` scans them 4x faster than `regex` does the script classes, and
# the lexer's array counting flags the pre-tokens to cut again by them (lexer.count_words).
MAYBE_SPACELESS_RANGES = np.array(
    [(0x0E00, 0x0EFF), (0x1000, 0x109F), (0x1780, 0x17FF), (0x19E0, 0x19FF), (0x2E80, 0x9FFF), (0xA9E0, 0xA9FF),
     (0xAA60, 0xAA7F), (0xF900, 0xFAFF), (0xFF66, 0xFF9F), (0x116D0, 0x116FF), (0x16FE0, 0x16FFF),
     (0x1AFF0, 0x1B16F), (0x1F200, 0x1F2FF), (0x20000, 0x3FFFF)], np.int64)
MAYBE_SPACELESS = re.compile("[" + "".join(f"{chr(lo)}-{chr(hi)}" for lo, hi in MAYBE_SPACELESS_RANGES.tolist())
                             + "]").search


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


# The engines that count: the compiled pre-tokenizer (modtok.text.lexer, the default) where it
# implements the pattern, and the regex module (the reference, and every pattern the lexer has
# no state machine for). Both give the same Counter, in the same order (tests/test_lexer.py).
ENGINES = ("lexer", "regex")


def counting_engine(source: str, engine: str = "lexer") -> str:
    """The engine that counts with the regex ``source`` when ``engine`` is asked for:
    ``"lexer"`` when asked and a state machine implements ``source`` exactly, else ``"regex"``.

    >>> counting_engine(pattern("llama3")), counting_engine(pattern("llama3"), "regex"), counting_engine(r"\\w+")
    ('lexer', 'regex', 'regex')
    """
    if engine not in ENGINES:
        raise UsageError(f"unknown counting engine {engine!r} (known: {', '.join(ENGINES)})")
    return "lexer" if engine == "lexer" and lexer.machine_of(source) is not None else "regex"


def engine_note(scheme: str = DEFAULT_SCHEME, split: str | None = None, engine: str = "lexer") -> str | None:
    """What a command prints when counting with ``scheme`` (or the regex ``split``) does not
    run on the engine asked for: the lexer has no state machine for the pattern, so the
    ``regex`` module counts (the same counts, slower), or the C lexer is not built, so the
    numba one counts (:data:`lexer.ENGINE_NOTE`); None when it runs as asked.

    >>> engine_note("llama3") == lexer.ENGINE_NOTE, engine_note(split=r"\\w+|\\W")
    (True, 'pre-tokens counted with the regex module: the compiled pre-tokenizer (modtok.text.lexer) has no state machine for this pattern (the same counts, about 7x slower)')
    """
    source = counting_pattern(scheme) if split is None else split
    if engine == "lexer" and counting_engine(source, engine) == "regex":
        return ("pre-tokens counted with the regex module: the compiled pre-tokenizer (modtok.text.lexer) has no "
                "state machine for this pattern (the same counts, about 7x slower)")
    return lexer.ENGINE_NOTE if engine == "lexer" else None


def count_chunk(args: tuple[str, str, list[str]]) -> Counter:
    """Pre-token counts of ``(regex source, engine, lines)``: one picklable task of a process
    pool (:func:`counting_engine` picks the engine).

    >>> count_chunk((pattern("whitespace"), "regex", ["a b a"]))
    Counter({'a': 1, ' b': 1, ' a': 1})
    """
    source, engine, lines = args
    if counting_engine(source, engine) == "lexer":
        return lexer.count_pattern(lines, source)
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
    findall, long_run = compiled(scheme).findall, _compile(LONG_RUN).search
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


def count_pretokens(
    lines: Iterable[str],
    scheme: str = DEFAULT_SCHEME,
    workers: int = 1,
    chunk_lines: int = 20_000,
    engine: str = "lexer",
) -> Counter:
    """Count the pre-tokens of every line (lines are units: nothing crosses them).

    ``workers`` processes share the lines in chunks of ``chunk_lines``. The
    default is 1: a library call never forks behind a notebook's back; pass
    ``workers=os.cpu_count()`` for big corpora. Text of at most one chunk is counted in
    this process whatever ``workers`` says. ``engine``: ``"lexer"`` (the compiled
    pre-tokenizer, where it implements the scheme: every named one) or ``"regex"`` (the
    reference); :func:`counting_engine`. The result depends on neither.

    >>> sorted(count_pretokens(["a b", "a"], "whitespace").items())
    [(' b', 1), ('a', 2)]
    """
    return count_by_language({None: lines}, scheme, workers, chunk_lines, engine=engine)[None]


def count_by_language(
    corpus: Mapping[str, Iterable[str]],
    scheme: str = DEFAULT_SCHEME,
    workers: int = 1,
    chunk_lines: int = 20_000,
    *,
    split: str | None = None,
    cuts: dict | None = None,
    engine: str = "lexer",
) -> dict[str, Counter]:
    """``{lang: Counter(pre-token -> count)}`` for a ``{lang: lines}`` corpus.

    All languages' lines are cut into chunks of ``chunk_lines`` that ``workers``
    processes count in parallel (default 1, as in :func:`count_pretokens`), so
    many small languages use every core too. ``split``: a regex source to cut
    with instead of the scheme's (a deployed tokenizer's own Split regex; the regex
    module counts it unless a state machine implements it: :func:`engine_note` says so).
    ``cuts``: a dict to receive ``{lang: Counter(rule -> pre-tokens cut)}`` of a
    bounded scheme (:func:`bound_counts`; empty Counters for the others). ``engine``:
    as in :func:`count_pretokens`.

    Workers end with this process, ``kill -9`` included (:func:`_worker_start`).

    >>> count_by_language({"x": ["ab ab"]}, split="[^ ]+| ")
    {'x': Counter({'ab': 2, ' ': 1})}
    >>> cuts = {}
    >>> count_by_language({"jpn_Jpan": ["日本語" * 6]}, "whitespace", cuts=cuts)["jpn_Jpan"], cuts
    (Counter({'日本語日本語日本語日本語日本語日': 1, '本語': 1}), {'jpn_Jpan': Counter({'length': 1})})
    """
    source = counting_pattern(scheme) if split is None else split  # an unknown scheme fails here
    counting_engine(source, engine)  # an unknown engine fails here
    counts = _sum_parts(_map_chunks(corpus, count_chunk, (source, engine), workers, chunk_lines))
    for lang, counter in counts.items():
        cut = bound_counts(counter, scheme) if split is None else Counter()
        if cuts is not None:
            cuts[lang] = cut
    return counts


def count_arrays(
    corpus: Mapping[str, Iterable[str]],
    scheme: str = DEFAULT_SCHEME,
    workers: int = 1,
    chunk_lines: int = 20_000,
    *,
    cuts: dict | None = None,
) -> lexer.WordCounts:
    """:func:`count_by_language`'s counts as arrays (:class:`~modtok.text.lexer.WordCounts`:
    the distinct pre-tokens of all languages in UTF-8 and their counts per language), for
    the BPE engine (:meth:`~modtok.bpe.engine.Engine.from_word_counts`): the lexer counts
    and encodes in numba, no Python string is made per distinct pre-token, except, for a
    bounded scheme, of those with a character of a spaceless script (:func:`bound_counts`
    cuts them; ``cuts`` as in :func:`count_by_language`). The same words and counts as
    :func:`count_by_language` (tests/test_lexer.py); a scheme the lexer has no machine for
    is counted by the regex module and converted.

    >>> wc = count_arrays({"x": ["ab ab"], "y": ["ab"]}, "whitespace")
    >>> wc.words(), wc.counts.tolist()
    ([b'ab', b' ab'], [[1, 1], [1, 0]])
    """
    source = counting_pattern(scheme)
    if lexer.machine_of(source) is None:
        return lexer.WordCounts.from_counters(count_by_language(corpus, scheme, workers, chunk_lines, cuts=cuts))
    langs = list(corpus)
    parts, cut = [], {lang: Counter() for lang in langs}
    for lang, (data, lengths, counts, part_cut) in _map_chunks(corpus, _word_chunk, (scheme,), workers, chunk_lines):
        parts.append((data, lengths, counts, langs.index(lang)))
        cut[lang].update(part_cut)
    if cuts is not None:
        cuts.update(cut)
    return lexer.union(langs, parts)


def _word_chunk(args: tuple[str, list[str]]):
    """``(data, lengths, counts, cut)`` of ``(scheme, lines)``: :func:`count_arrays`'s task.
    A bounded scheme cuts again only the pre-tokens the lexer flagged (a character in
    :data:`MAYBE_SPACELESS_RANGES`), as strings; the pieces go after the other words, each word
    once (the words of one chunk are distinct: :func:`lexer.union` passes a single part on as it is).

    >>> _, lengths, counts, cut = _word_chunk(("whitespace", ["ab ab ab漢字"]))
    >>> lengths.tolist(), counts.tolist(), cut
    ([2, 3, 6], [1, 2, 1], Counter({'script': 1}))
    """
    scheme, lines = args
    bounded = scheme in UNBOUNDED
    data, lengths, counts, flagged = lexer.count_words(lines, counting_pattern(scheme),
                                                       MAYBE_SPACELESS_RANGES if bounded else None)
    if not bounded or not flagged.any():
        return data, lengths, counts, Counter()
    raw, ends = data.tobytes(), np.cumsum(lengths)
    flag = np.flatnonzero(flagged)
    words = Counter({raw[e - n : e].decode("utf-8"): k for e, n, k in
                     zip(ends[flag].tolist(), lengths[flag].tolist(), counts[flag].tolist())})
    cut = bound_counts(words, scheme)
    keep = ~flagged
    # a piece may be a word counted unflagged (" ab" of " ab漢字"): the union adds the two
    merged = lexer.union([scheme], [(data[np.repeat(keep, lengths)], lengths[keep], counts[keep], 0),
                                    (*lexer.words_of(words), 0)])
    return merged.data, merged.lengths, merged.counts[:, 0], cut


def _sum_parts(parts) -> dict[str, Counter]:
    """``{lang: Counter}``: the Counters of each language's parts (in order) added."""
    counts: dict = {}
    for lang, part in parts:
        if lang in counts:
            counts[lang].update(part)
        else:  # a language's first part is its Counter: no copy (the parts come in order)
            counts[lang] = part
    return counts


def _map_chunks(corpus, task, head: tuple, workers: int, chunk_lines: int) -> list[tuple]:
    """``[(lang, task((*head, lines)))]``: one task per language in this process, or one per
    chunk of ``chunk_lines`` lines on ``workers`` processes (when there is more than one
    chunk), in the corpus's order."""
    corpus = {lang: lines if isinstance(lines, list) else list(lines) for lang, lines in corpus.items()}
    n_lines = sum(map(len, corpus.values()))
    if workers <= 1 or n_lines <= chunk_lines:
        return [(lang, task((*head, lines))) for lang, lines in corpus.items()]
    spans = [(lang, i, i + chunk_lines) for lang, lines in corpus.items() for i in range(0, max(len(lines), 1), chunk_lines)]
    forked = multiprocessing.get_start_method() == "fork"
    if forked:
        # One tiny task here first: the lexer's class table and kernels (or the regex) are
        # loaded once and inherited, not once a worker (the table alone: 0.7 s of CPU a process).
        task((*head, ["warm up"]))
        _FORKED.update(corpus)
        fn, tasks = _run_span, [(task, head, *span) for span in spans]
    else:
        fn, tasks = task, [(*head, corpus[lang][i:j]) for lang, i, j in spans]
    try:
        with ProcessPoolExecutor(max_workers=workers, initializer=_worker_start, initargs=(os.getpid(),)) as pool:
            return [(lang, part) for (lang, _, _), part in zip(spans, pool.map(fn, tasks))]
    finally:
        _FORKED.clear()


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


def _run_span(args: tuple):
    task, head, lang, start, stop = args
    return task((*head, _FORKED[lang][start:stop]))


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
