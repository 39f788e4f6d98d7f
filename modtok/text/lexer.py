"""A compiled pre-tokenizer: every named scheme's regex as a hand-written state machine.

:mod:`modtok.text.pretokenize` cuts text with the ``regex`` module (``findall``, one
line at a time from Python): about 10 MB/s a core. This module cuts the same text
into the same pre-tokens in one numba pass over all the lines at once, and counts
them in a second pass (a hash table of the pre-tokens' code points), so counting
runs at the speed of the machine instead of the regex engine's. The ``regex`` path
stays the reference: ``tests/test_lexer.py`` checks that the two agree on every
scheme, on generated text in every script, on UDHR, the pool and FLORES.

>>> pretokens("Hello world, 2024!", "llama3")
['Hello', ' world', ',', ' ', '202', '4', '!']
>>> sorted(count(["a b a", "a"], "gpt2").items())
[(' a', 1), (' b', 1), ('a', 2)]

How it works:

- **Character classes from the regex module itself.** Each code point (surrogates
  included) gets a 16-bit mask of the classes the patterns use (``\\p{L}``, ``\\p{N}``,
  ``\\s``, ``\\p{M}``, o200k's case classes, the Devanagari marks, the letters of the
  case-insensitive contractions ...), found by matching each class's ``regex`` source
  against a string of all 1,114,112 code points, so the table is exactly what the
  reference pattern sees, Unicode version included. It is stored in two levels
  (:func:`class_table`): a block index per 256 code points and the distinct blocks.
- **The text as code points.** The lines are joined and read as UTF-32 (``str.encode``,
  a C pass), so a pre-token's span indexes the Python string directly. The kernel
  reads the UTF-32 array, not UTF-8: decoding UTF-8 inside the kernel would cost the
  same pass again and give byte offsets that Python cannot slice a ``str`` by.
- **Leftmost alternation by hand.** For each scheme (:data:`MACHINES`) the kernel tries
  the alternatives in the pattern's order at each position and takes the first that
  matches, with the backtracking each one would do (``\\s*[\\r\\n]+`` ends after the last
  CR/LF of the whitespace run; ``\\s+(?!\\S)`` gives back the run's last character;
  o200k's ``U*L+`` gives back upper-case letters until a lower one). No alternative
  matches the empty string and every character matches one of them, so the pre-tokens
  tile each line: the kernel writes only where each one ends.
- **Two engines, one set of machines.** Counting runs on the C lexer
  (``modtok/text/_lexc.c``, built by ``pip install -e .``) when it is built: one pass per
  line that reads the str's code points, cuts with the same machines as :func:`_cut` and
  counts each pre-token's UTF-8 bytes in a hash table as it goes (about twice the speed of
  the numba kernels below, which stay the engine of :func:`boundaries` and :func:`pretokens`).
  Without it (no compiler at install) the numba kernels count, and :data:`ENGINE_NOTE` says
  so; a C module built from another ``_lexc.c`` is refused (:class:`~modtok.errors.StaleBuildError`).
- **Exact or refused.** Each machine records the regex source it implements; a
  scheme whose pattern in :data:`~modtok.text.schemes.SCHEMES` differs (a new scheme, an
  edited one) is refused with :class:`~modtok.errors.UnknownSchemeError`, never cut
  approximately.
"""

from __future__ import annotations

import hashlib
import importlib
import io
from collections import Counter
from collections.abc import Iterable, Mapping
from contextlib import contextmanager
from functools import lru_cache
from itertools import islice
from pathlib import Path
from typing import NamedTuple

import numpy as np
import regex
from numba import njit

from modtok.atomic import write_bytes
from modtok.errors import DataError, StaleBuildError, UnknownSchemeError, UsageError
from modtok.text.schemes import DEVANAGARI_MARKS, SCHEMES, pattern

# ------------------------------------------------------------------ the class table

# (bit, the regex class that sets it). The contraction letters are matched the way the
# patterns match them, inside (?i:...): the regex module folds case simply, so "ſ"
# (U+017F) is an "s" there and "K" (U+212A, the kelvin sign) would be a "k".
CLASSES = [
    (1 << 0, r"\p{L}"),
    (1 << 1, r"\p{N}"),
    (1 << 2, r"\s"),
    (1 << 3, r"\p{M}"),
    (1 << 4, r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]"),  # o200k's upper-case word class
    (1 << 5, r"[\p{Ll}\p{Lm}\p{Lo}\p{M}]"),  # o200k's lower-case word class
    (1 << 6, f"[{DEVANAGARI_MARKS}]"),
    (1 << 7, "[ \u2581]"),  # sentencepiece's separators
] + [(1 << (8 + i), f"(?i:{c})") for i, c in enumerate("strevmld")]
L, N, S, M, UP, LO, DEVA, SPM = (bit for bit, _ in CLASSES[:8])
C_S, C_T, C_R, C_E, C_V, C_M, C_L, C_D = (bit for bit, _ in CLASSES[8:])


@lru_cache(maxsize=1)
def class_table() -> tuple[np.ndarray, np.ndarray]:
    """``(index, blocks)``: the classes of code point ``c`` are ``blocks[index[c >> 8], c & 255]``.

    Built from the ``regex`` module's own classes, once per regex version (cached on disk), read once a process.

    >>> index, blocks = class_table()
    >>> int(blocks[index[ord("é") >> 8], ord("é") & 255]) == L | LO
    True
    >>> len(index), len(blocks) < 1000    # 4,352 blocks of 256 code points, few distinct
    (4352, True)
    """
    stored = _TABLE_DIR / f"lexer_classes.{_table_key()}.npz"
    if stored.is_file():
        with np.load(stored) as saved:
            return saved["index"], saved["blocks"]
    index, blocks = _build_class_table()
    try:  # kept beside numba's cached kernels; a read-only install builds it each process
        buffer = io.BytesIO()
        np.savez(buffer, index=index, blocks=blocks)
        write_bytes(stored, buffer.getvalue())
    except OSError:
        pass
    return index, blocks


# The class table is cached on disk (built: 0.7 s of CPU on a quiet core, 4-8 s under load;
# read: milliseconds), keyed by the regex module's version (its Unicode data) and the classes.
_TABLE_DIR = Path(__file__).parent / "__pycache__"


def _table_key() -> str:
    return hashlib.sha256(repr((regex.__version__, CLASSES)).encode()).hexdigest()[:16]


def _build_class_table() -> tuple[np.ndarray, np.ndarray]:
    every = "".join(map(chr, range(0x110000)))
    flat = np.zeros(0x110000, np.uint16)
    for bit, source in CLASSES:
        for m in regex.finditer(f"(?:{source})+", every):
            flat[m.start() : m.end()] |= bit
    blocks, index = np.unique(flat.reshape(-1, 256), axis=0, return_inverse=True)
    return index.reshape(-1).astype(np.int32), blocks


# ------------------------------------------------------------------ the machines

# Kernel modes: the family of the pattern; the parameters below pick the classes.
LETTERS, O200K, GPT2, WHITESPACE, SENTENCEPIECE = range(5)

# scheme -> (the regex source the machine implements, mode, (prefix excludes, word class,
# punctuation excludes, most digits in a pre-token)). In the LETTERS family the optional
# prefix of a word is any character but CR, LF and the ``prefix excludes`` classes; a
# punctuation run is of characters in none of the ``punctuation excludes`` classes.
_LETTERS = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"


def _repair(marks: str) -> str:
    return (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)" + rf"|[^\r\n\p{{L}}{marks}\p{{N}}]?[\p{{L}}{marks}]+|\p{{N}}{{1,3}}"
            + rf"| ?[^\s\p{{L}}{marks}\p{{N}}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")


MACHINES: dict[str, tuple[str, int, tuple[int, int, int, int]]] = {
    "gpt2": (r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+""",
             GPT2, (0, L, S | L | N, 0)),
    "cl100k": (_LETTERS, LETTERS, (L | N, L, S | L | N, 3)),
    "llama3": (_LETTERS, LETTERS, (L | N, L, S | L | N, 3)),
    "qwen2": (_LETTERS.replace(r"\p{N}{1,3}", r"\p{N}"), LETTERS, (L | N, L, S | L | N, 1)),
    "qwen3.5": (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*"
                r"|\s*[\r\n]+|\s+(?!\S)|\s+", LETTERS, (L | N, L | M, S | L | M | N, 1)),
    "llama3-marks": (_repair(r"\p{M}"), LETTERS, (L | M | N, L | M, S | L | M | N, 3)),
    "llama3-deva": (_repair(DEVANAGARI_MARKS), LETTERS, (L | DEVA | N, L | DEVA, S | L | DEVA | N, 3)),
    "o200k": ("|".join([
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""", r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""", r"""\s*[\r\n]+""", r"""\s+(?!\S)""", r"""\s+"""]),
        O200K, (L | N, 0, S | L | N, 3)),
    # The unbounded whitespace pattern (schemes.UNBOUNDED): the bounded "whitespace" scheme is
    # this cut, then pretokenize.bound_counts on the few pre-tokens with a run without spaces
    # (counting does that: it asks for the machine of UNBOUNDED[scheme] by its source, see
    # machine_of); by its name, "whitespace" is refused here (its pattern differs).
    "whitespace": (r""" ?\S+|\s+(?!\S)|\s+""", WHITESPACE, (0, 0, 0, 0)),
    "sentencepiece": ("[ \u2581]+[^ \u2581]*|[^ \u2581]+", SENTENCEPIECE, (0, 0, 0, 0)),
}


def machine(scheme: str) -> tuple[int, tuple[int, int, int, int]]:
    """The kernel mode and parameters of ``scheme``; refused unless the scheme's pattern is
    exactly the one its machine implements.

    >>> machine("nope")
    Traceback (most recent call last):
    ...
    modtok.errors.UnknownSchemeError: unknown pre-tokenizer 'nope' (known: ...)
    """
    source = pattern(scheme)  # an unknown name fails here, with the list of known ones
    if scheme not in MACHINES or MACHINES[scheme][0] != source:
        what = "has no state machine" if scheme not in MACHINES else "has a pattern its state machine does not implement"
        raise UnknownSchemeError(
            f"pre-tokenizer {scheme!r} {what} in modtok.text.lexer (exact for: {', '.join(exact_schemes())}); "
            "use modtok.text.pretokenize for it")
    _, mode, params = MACHINES[scheme]
    return mode, params


def exact_schemes() -> list[str]:
    """The schemes the lexer cuts exactly as the reference (their pattern is the machine's)."""
    return [s for s, (source, _, _) in MACHINES.items() if SCHEMES.get(s) == source]


# regex source -> (mode, parameters): counting looks a machine up by the pattern it cuts with
# (a bounded scheme's UNBOUNDED pattern, a deployed tokenizer's own Split regex).
_BY_SOURCE = {source: (mode, params) for source, mode, params in MACHINES.values()}


def machine_of(source: str) -> tuple[int, tuple[int, int, int, int]] | None:
    """The kernel mode and parameters of the machine that implements the regex ``source``
    exactly, or None (no machine does: cut it with the ``regex`` module).

    >>> machine_of(SCHEMES["llama3"]) == machine("llama3"), machine_of(r"\\w+|\\W")
    (True, None)
    """
    return _BY_SOURCE.get(source)


# ------------------------------------------------------------------ kernels


@njit(cache=True, inline="always")
def _run(k, i, e, bits):
    """End of the run of characters in ``bits`` from ``i``."""
    while i < e and k[i] & bits:
        i += 1
    return i


@njit(cache=True, inline="always")
def _run_not(k, i, e, bits):
    """End of the run of characters in none of ``bits`` from ``i``."""
    while i < e and not k[i] & bits:
        i += 1
    return i


@njit(cache=True, inline="always")
def _contraction(cps, k, i, e, folded):
    """End of ``'s|'t|'re|'ve|'m|'ll|'d`` at ``i`` (case-folded or not), or -1; tried in the
    pattern's order."""
    if cps[i] != 39 or i + 1 >= e:
        return -1
    if folded:
        a = k[i + 1]
        b = k[i + 2] if i + 2 < e else 0
        if a & C_S or a & C_T:
            return i + 2
        if a & C_R and b & C_E or a & C_V and b & C_E:
            return i + 3
        if a & C_M:
            return i + 2
        if a & C_L and b & C_L:
            return i + 3
        return i + 2 if a & C_D else -1
    a = cps[i + 1]
    b = cps[i + 2] if i + 2 < e else 0
    if a == 115 or a == 116 or a == 109 or a == 100:  # s t m d
        return i + 2
    if (a == 114 or a == 118) and b == 101 or a == 108 and b == 108:  # re ve ll
        return i + 3
    return -1


@njit(cache=True, inline="always")
def _o200k_word(cps, k, i, e, lower_first):
    """o200k's ``U*W+C?`` (``lower_first``) or ``U+W*C?`` from ``i``: its end, or -1."""
    r = _run(k, i, e, UP)
    if lower_first:
        if r < e and k[r] & LO:
            end = _run(k, r, e, LO)
        else:  # U* gives back characters until W+ can take one (Lm, Lo and marks are in both)
            j = r - 1
            while j >= i and not k[j] & LO:
                j -= 1
            if j < i:
                return -1
            end = j + 1
    else:
        if r == i:
            return -1
        end = _run(k, r, e, LO)
    c = _contraction(cps, k, end, e, True) if end < e else -1
    return c if c > 0 else end


@njit(cache=True, inline="always")
def _space_end(cps, k, i, e, crlf_rule):
    """The whitespace alternatives at ``i``: ``\\s*[\\r\\n]+`` (when ``crlf_rule``), ``\\s+(?!\\S)``, ``\\s+``."""
    r = _run(k, i, e, S)
    if crlf_rule:
        j = r - 1
        while j >= i and cps[j] != 10 and cps[j] != 13:
            j -= 1
        if j >= i:
            return j + 1
    if r == e or r - 1 == i:
        return r
    return r - 1


@njit(cache=True, inline="always")
def _cut(cps, k, i, e, mode, p_excl, word, q_excl, digits):
    """End of the pre-token that starts at ``i`` (line end ``e``)."""
    c = cps[i]
    a = k[i]
    nxt = k[i + 1] if i + 1 < e else S  # past the end: as if whitespace (no class a run needs)
    if mode == SENTENCEPIECE:
        return _run_not(k, _run(k, i, e, SPM), e, SPM)
    if mode == WHITESPACE:
        if c == 32 and not nxt & S:
            return _run_not(k, i + 1, e, S)
        return _run_not(k, i, e, S) if not a & S else _space_end(cps, k, i, e, False)
    if mode == GPT2:
        j = _contraction(cps, k, i, e, False)
        if j > 0:
            return j
        for bits in (L, N):
            if c == 32 and nxt & bits:
                return _run(k, i + 1, e, bits)
            if a & bits:
                return _run(k, i, e, bits)
        if c == 32 and not nxt & q_excl:
            return _run_not(k, i + 1, e, q_excl)
        return _run_not(k, i, e, q_excl) if not a & q_excl else _space_end(cps, k, i, e, False)
    prefix = not a & p_excl and c != 10 and c != 13
    if mode == LETTERS:
        j = _contraction(cps, k, i, e, True)
        if j > 0:
            return j
        if prefix and nxt & word:
            return _run(k, i + 1, e, word)
        if a & word:
            return _run(k, i, e, word)
    else:  # O200K: both word alternatives, each with its prefix and then without
        for lower_first in (True, False):
            j = _o200k_word(cps, k, i + 1, e, lower_first) if prefix else -1
            if j < 0:
                j = _o200k_word(cps, k, i, e, lower_first)
            if j > 0:
                return j
    if a & N:
        return min(_run(k, i, e, N), i + digits)
    start = i + 1 if c == 32 and not nxt & q_excl else i
    if not k[start] & q_excl:
        j = _run_not(k, start, e, q_excl)
        while j < e and (cps[j] == 10 or cps[j] == 13 or mode == O200K and cps[j] == 47):
            j += 1
        return j
    return _space_end(cps, k, i, e, True)


@njit(cache=True)
def _lex(cps, line_ends, index, blocks, mode, p_excl, word, q_excl, digits):
    """``(failed, ends)``: where each pre-token of each line ends (lines end at
    ``line_ends``); ``failed`` is -1, or where a character matched no alternative (never,
    for the machines here), with the ends cut before it."""
    n = len(cps)
    k = np.empty(n, np.uint16)
    for i in range(n):
        c = cps[i]
        k[i] = blocks[index[c >> 8], c & 255]
    ends = np.empty(n, np.int64)
    t = 0
    i = 0
    for e in line_ends:
        while i < e:
            j = _cut(cps, k, i, e, mode, p_excl, word, q_excl, digits)
            if j <= i:
                return i, ends[:t]
            ends[t] = j
            t += 1
            i = j
    return -1, ends[:t]


@njit(cache=True)
def _unique(cps, ends):
    """``(rows, arena)``: each distinct pre-token's row ``(first, length, count, at)`` (its
    first occurrence ``cps[first : first + length]``, its count, and where its code points
    start in ``arena``), in order of first occurrence; ``arena`` the distinct pre-tokens'
    code points one after another.

    Open addressing on an FNV-1a hash of the code points. A probe touches two cache lines:
    the slot (hash and id side by side) and the pre-token's row (its first occurrence,
    length, count and place in ``arena``, a copy of the distinct pre-tokens' code points
    that stays in the cache). Evidence, on English (2.8 MB of the pool, 554k pre-tokens,
    CPU time on the loaded 2-core machine): separate arrays for each field and a
    comparison against the first occurrence in the text took 26 ms, this layout 21 ms;
    the hashing alone 7 ms. A second pass rather than counting inside :func:`_lex`: fused
    into one kernel, numba compiled the cut 2.5x slower (53 ms instead of 21 on the same
    text), more than the pass costs.
    """
    slots, rows, arena = _table(cps)
    filled = u = i = 0
    for j in ends:
        key = _hash(cps, i, j)
        slot, x = _find(slots, rows, arena, key, cps, i, j - i)
        if x >= 0:
            rows[x, 2] += 1
        else:
            slots, rows, arena, filled = _insert(slots, rows, arena, filled, u, slot, key, cps, i, j - i)
            u += 1
        i = j
    return rows[:u], arena[:filled]


@njit(cache=True)
def _union(data, lengths, cols, weights, n_cols):
    """``(arena, lengths, counts, first)``: the distinct sequences of ``data`` (cut at
    ``lengths``) in order of first occurrence, one after another, their lengths, where each
    first starts in ``data``, and ``counts[w, c]``: the sum of ``weights`` of the rows of
    sequence ``w`` in column ``cols`` (the same table as :func:`_unique`, over UTF-8 bytes:
    parts of one language summed, languages side by side). The dense counts are filled
    after the table, from each row's id: growing a (words, languages) matrix with the table
    took as long as the hashing (0.63 s of 2.2 on 39 languages x 1 MB, loaded machine)."""
    slots, rows, arena = _table(data)
    ids = np.empty(len(lengths), np.int64)
    filled = u = i = 0
    for t in range(len(lengths)):
        j = i + lengths[t]
        key = _hash(data, i, j)
        slot, x = _find(slots, rows, arena, key, data, i, j - i)
        if x < 0:
            x = u
            slots, rows, arena, filled = _insert(slots, rows, arena, filled, u, slot, key, data, i, j - i)
            u += 1
        ids[t] = x
        i = j
    counts = np.zeros((u, n_cols), np.int64)
    for t in range(len(lengths)):
        counts[ids[t], cols[t]] += weights[t]
    return arena[:filled], rows[:u, 1].copy(), counts, rows[:u, 0].copy()


@njit(cache=True)
def _table(seq):
    """An empty hash table for sequences of ``seq``'s type: ``(slots, rows, arena)`` (:func:`_unique`)."""
    cap = 1 << 12
    return np.full((cap, 2), -1, np.int64), np.empty((cap // 2, 4), np.int64), np.empty(cap, seq.dtype)


@njit(cache=True, inline="always")
def _hash(seq, i, j):
    """FNV-1a of ``seq[i:j]``."""
    h = np.uint64(14695981039346656037)
    for d in range(i, j):
        h = (h ^ np.uint64(seq[d])) * np.uint64(1099511628211)
    return np.int64(h)


@njit(cache=True, inline="always")
def _find(slots, rows, arena, key, seq, i, n):
    """``(slot, id)`` of ``seq[i : i + n]`` (hash ``key``) in the table; id -1 when absent
    (``slot`` is then where it goes)."""
    mask = len(slots) - 1
    slot = key & mask
    while True:
        x = slots[slot, 1]
        if x < 0 or slots[slot, 0] == key and rows[x, 1] == n and _same(arena, rows[x, 3], seq, i, n):
            return slot, x
        slot = (slot + 1) & mask


@njit(cache=True, inline="always")
def _insert(slots, rows, arena, filled, u, slot, key, seq, i, n):
    """Add ``seq[i : i + n]`` as entry ``u`` (count 1) at ``slot``; the table, grown when
    half full, and the arena's new fill."""
    while filled + n > len(arena):
        arena = _double(arena)
    arena[filled : filled + n] = seq[i : i + n]
    rows[u, 0], rows[u, 1], rows[u, 2], rows[u, 3] = i, n, 1, filled
    slots[slot, 0], slots[slot, 1] = key, u
    if 2 * (u + 1) == len(slots):
        slots, rows = _rehash(slots), _double(rows)
    return slots, rows, arena, filled + n


@njit(cache=True, inline="always")
def _same(a, i, b, j, length):
    """``a[i : i + length] == b[j : j + length]``."""
    for d in range(length):
        if a[i + d] != b[j + d]:
            return False
    return True


@njit(cache=True)
def _rehash(slots):
    """The table with twice the slots, every entry re-placed by its kept hash."""
    mask = 2 * len(slots) - 1
    out = np.full((mask + 1, 2), -1, np.int64)
    for old in range(len(slots)):
        if slots[old, 1] >= 0:
            slot = slots[old, 0] & mask
            while out[slot, 1] >= 0:
                slot = (slot + 1) & mask
            out[slot, 0], out[slot, 1] = slots[old, 0], slots[old, 1]
    return out


@njit(cache=True)
def _double(a):
    """``a`` with room for twice its rows (the new ones unset)."""
    out = np.empty((2 * len(a),) + a.shape[1:], a.dtype)
    out[: len(a)] = a
    return out


@njit(cache=True)
def _utf8(cps, lengths, ranges):
    """``(data, byte lengths, flagged, bad)``: the words (``cps`` cut at ``lengths``) in
    UTF-8; ``flagged[w]``: word ``w`` holds a code point in one of ``ranges`` (rows
    ``(lo, hi)``, inclusive, ascending); ``bad``: the first word with a surrogate (not UTF-8), or -1."""
    data = np.empty(4 * len(cps), np.uint8)
    out = np.empty(len(lengths), np.int64)
    flagged = np.zeros(len(lengths), np.bool_)
    n = i = 0
    for w in range(len(lengths)):
        start = n
        for d in range(i, i + lengths[w]):
            c = cps[d]
            if len(ranges) and c >= ranges[0, 0]:  # the ranges ascend: most code points stop here
                for r in range(len(ranges)):
                    if ranges[r, 0] <= c <= ranges[r, 1]:
                        flagged[w] = True
            if c < 0x80:
                data[n] = c
                n += 1
            elif c < 0x800:
                data[n], data[n + 1] = 0xC0 | c >> 6, 0x80 | c & 0x3F
                n += 2
            elif c < 0x10000:
                if 0xD800 <= c <= 0xDFFF:
                    return data[:n], out[:w], flagged[:w], w
                data[n], data[n + 1], data[n + 2] = 0xE0 | c >> 12, 0x80 | c >> 6 & 0x3F, 0x80 | c & 0x3F
                n += 3
            else:
                data[n], data[n + 1] = 0xF0 | c >> 18, 0x80 | c >> 12 & 0x3F
                data[n + 2], data[n + 3] = 0x80 | c >> 6 & 0x3F, 0x80 | c & 0x3F
                n += 4
        out[w] = n - start
        i += lengths[w]
    return data[:n], out, flagged, -1


# ------------------------------------------------------------------ the engines

_C_SOURCE = Path(__file__).with_name("_lexc.c")


def _checked(module, source: Path = _C_SOURCE):
    """``module`` (the built C lexer), once checked to be built from ``source`` as it is now
    and to use this module's class bits and modes; :class:`~modtok.errors.StaleBuildError`
    otherwise. Without the source beside it (an installed wheel: the two come from one build)
    only the bits and modes are checked.

    >>> class Built: SOURCE_SHA256 = "0" * 64
    >>> _checked(Built, _C_SOURCE)
    Traceback (most recent call last):
    ...
    modtok.errors.StaleBuildError: the C lexer ... was built from another version of .../_lexc.c ...
    """
    if source.is_file():
        digest = hashlib.sha256(source.read_bytes()).hexdigest()
        if module.SOURCE_SHA256 != digest:
            raise StaleBuildError(
                f"the C lexer {getattr(module, '__file__', module)} was built from another version of {source} "
                f"(built {module.SOURCE_SHA256[:12]}, the source now {digest[:12]}): rebuild it with "
                "`pip install -e .` (or `python setup.py build_ext --inplace`), or delete the built module "
                "to count with the numba lexer")
    bits = tuple(bit for bit, _ in CLASSES)
    if module.CLASS_BITS != bits or module.MODES != (LETTERS, O200K, GPT2, WHITESPACE, SENTENCEPIECE):
        raise StaleBuildError(f"the C lexer's class bits or modes differ from modtok.text.lexer's ({source}): "
                              "edit the two together, then rebuild with `pip install -e .`")
    return module


def _load_c():
    """``(the C lexer, None)`` when it is built, else ``(None, why not)``."""
    try:  # a compiled module, not a .py: by name (the architecture test's map holds .py modules)
        module = importlib.import_module("modtok.text._lexc")
    except ImportError as e:
        return None, f"{type(e).__name__}: {e}"
    return _checked(module), None


_C, _WHY_NOT_C = _load_c()
# Which engine counts ("c" or "numba") and, when it is numba, the line that says so (the CLI's
# engine note: pretokenize.engine_note): never a silent fallback.
ENGINE = "c" if _C is not None else "numba"
ENGINE_NOTE = None if _C is not None else (
    f"numba lexer: the C lexer (modtok/text/_lexc.c) is not built ({_WHY_NOT_C}; no C compiler at install?): "
    "the same counts, about half the speed; `pip install -e .` with a compiler builds it")


@contextmanager
def using(engine: str):
    """Count with ``engine`` ("c" or "numba") inside the block (benches and tests compare the
    two in one process); "c" when it is not built is refused.

    >>> with using("numba"):
    ...     count(["a a"], "gpt2")
    Counter({'a': 1, ' a': 1})
    """
    global _C, ENGINE
    if engine not in ("c", "numba"):
        raise UsageError(f"unknown lexer engine {engine!r} (known: c, numba)")
    saved = _C, ENGINE
    built = _C if _C is not None else _load_c()[0]
    if engine == "c" and built is None:
        raise UsageError(f"the C lexer is not built: {ENGINE_NOTE}")
    _C, ENGINE = (built, "c") if engine == "c" else (None, "numba")
    try:
        yield
    finally:
        _C, ENGINE = saved


def _c_count(lines: Iterable[str], found, flag: np.ndarray, surrogates: bool):
    """``(data, lengths, counts, flagged, bad)``: the C lexer's count of the lines (``_lexc.count``)."""
    mode, (p_excl, word, q_excl, digits) = found
    index, blocks = class_table()
    (data, lengths, counts, flagged), bad = _C.count(lines, index, blocks, mode, p_excl, word, q_excl, digits,
                                                     np.ascontiguousarray(flag, np.int64), surrogates)
    return (np.frombuffer(data, np.uint8), np.frombuffer(lengths, np.int64), np.frombuffer(counts, np.int64),
            np.frombuffer(flagged, np.bool_), bad)


# ------------------------------------------------------------------ the API

# Most code points cut at once: the kernels hold 14 bytes a code point (UTF-32, its classes,
# where each pre-token ends), so longer input is cut and counted in blocks of whole lines
# (224 MB of arrays at most; a line longer than this is a block of its own).
BLOCK = 1 << 24


def _code_points(text: str) -> np.ndarray:
    # surrogatepass: a lone surrogate (possible in a Python str) is a code point like any other
    return np.frombuffer(text.encode("utf-32-le", "surrogatepass"), np.uint32)


def _blocks(lines: Iterable[str]):
    """The lines in ``(block, line ends)`` of about :data:`BLOCK` code points (lines whole; a
    longer line is a block of its own), ``line ends`` where each line of the block ends in
    it (:func:`_line_ends`). The lines are read :data:`SLICE` at a time and their lengths
    summed by numpy: a Python loop over each line took 0.07 s of the pool's 1.5 (583k lines)."""
    it = iter(lines)
    while chunk := list(islice(it, SLICE)):
        ends = _line_ends(chunk)
        start = 0
        while start < len(chunk):
            base = int(ends[start - 1]) if start else 0
            stop = min(int(np.searchsorted(ends, base + BLOCK)) + 1, len(chunk))
            yield chunk[start:stop], ends[start:stop] - base
            start = stop


# Lines read at a time by _blocks (a block never spans two slices).
SLICE = 1 << 18


def _line_ends(lines: list[str]) -> np.ndarray:
    """Where each line ends in the lines joined (code points).

    >>> _line_ends(["ab", "", "c"]).tolist()
    [2, 2, 3]
    """
    return np.cumsum(np.fromiter(map(len, lines), np.int64, len(lines)))


def _machine(source: str):
    found = machine_of(source)
    if found is None:
        raise UnknownSchemeError(f"no state machine in modtok.text.lexer implements the regex {source!r} "
                                 f"(exact for: {', '.join(exact_schemes())}); use modtok.text.pretokenize for it")
    return found


def _cut_lines(lines: list[str], line_ends: np.ndarray, found) -> tuple[str, np.ndarray, np.ndarray]:
    mode, (p_excl, word, q_excl, digits) = found
    text = "".join(lines)
    cps = _code_points(text)
    index, blocks = class_table()
    failed, ends = _lex(cps, line_ends, index, blocks, mode, p_excl, word, q_excl, digits)
    if failed >= 0:  # a bug, not bad input: say where, never return a partial cut
        raise AssertionError(f"lexer: no alternative matched at character {failed} ({text[failed:failed + 20]!r})")
    return text, cps, ends


def boundaries(lines: list[str], scheme: str) -> tuple[str, np.ndarray, np.ndarray]:
    """``(text, code points, ends)``: the lines joined, and where each pre-token ends in it
    (the first starts at 0, each next one where the one before it ends; lines are units).

    >>> boundaries(["ab c", "d"], "gpt2")[::2]
    ('ab cd', array([2, 4, 5]))
    """
    return _cut_lines(lines, _line_ends(lines), machine(scheme))


def pretokens(text: str, scheme: str) -> list[str]:
    """Cut ``text`` (one unit) into pre-tokens: :func:`~modtok.text.pretokenize.pretokenize`'s result.

    >>> pretokens("I'LL go  now\\r\\n", "o200k")    # o200k's words keep their contraction
    ["I'LL", ' go', ' ', ' now', '\\r\\n']
    >>> pretokens("I'LL go  now\\r\\n", "llama3")
    ['I', "'LL", ' go', ' ', ' now', '\\r\\n']
    """
    text, _, ends = boundaries([text], scheme)
    starts = [0, *ends[:-1].tolist()]
    return [text[s:e] for s, e in zip(starts, ends.tolist())]


def count(lines: Iterable[str], scheme: str) -> Counter:
    """``Counter(pre-token -> count)`` of the lines: :func:`~modtok.text.pretokenize.count_pretokens`'s.

    >>> count(["it's", "It's"], "gpt2")
    Counter({"'s": 2, 'it': 1, 'It': 1})
    """
    return _count(lines, machine(scheme))


def count_pattern(lines: Iterable[str], source: str) -> Counter:
    """:func:`count` with the machine that implements the regex ``source`` (:func:`machine_of`;
    refused when none does): how :mod:`modtok.text.pretokenize` counts.

    >>> count_pattern(["a  b"], r" ?\\S+|\\s+(?!\\S)|\\s+")    # the unbounded whitespace scheme
    Counter({'a': 1, ' ': 1, ' b': 1})
    """
    return _count(lines, _machine(source))


def _count(lines: Iterable[str], found) -> Counter:
    if _C is not None:  # a lone surrogate is a code point here, as in the regex module's str
        data, lengths, counts, _, _ = _c_count(lines, found, _NO_RANGES, True)
        out: Counter = Counter()
        dict.update(out, zip(_C.strings(data, lengths), counts.tolist()))
        return out
    out = Counter()
    for block, line_ends in _blocks(lines):
        text, cps, ends = _cut_lines(block, line_ends, found)
        rows, _ = _unique(cps, ends)
        first, length, counts = rows[:, 0], rows[:, 1], rows[:, 2]
        # dict.update straight into the Counter: no intermediate dict (a third of the Python
        # side's time, which is a third of the whole on the pool's 200k-character samples)
        words = map(text.__getitem__, map(slice, first.tolist(), (first + length).tolist()))
        if out:  # a second block: its counts added to the first's
            out.update(dict(zip(words, counts.tolist())))
        else:
            dict.update(out, zip(words, counts.tolist()))
    return out


class WordCounts(NamedTuple):
    """Distinct pre-tokens as UTF-8 bytes with their counts per language: what the BPE engine
    reads (:meth:`modtok.bpe.engine.Engine.from_word_counts`), made without a Python string
    per pre-token. Word ``w`` is ``data[starts[w] : starts[w] + lengths[w]]`` (the words one
    after another), ``counts[w, l]`` its count in ``languages[l]``; words in order of first
    occurrence (languages in order), as :func:`modtok.bpe.engine.words_from_counts` orders them.

    >>> wc = WordCounts.from_counters({"x": Counter({"ab": 2, "é": 1}), "y": Counter({"ab": 5})})
    >>> wc.words(), wc.counts.tolist()
    ([b'ab', b'\\xc3\\xa9'], [[2, 5], [1, 0]])
    >>> wc.to_counters()
    {'x': Counter({'ab': 2, 'é': 1}), 'y': Counter({'ab': 5})}
    """

    languages: list[str]
    data: np.ndarray  # uint8
    lengths: np.ndarray  # int64, one per word
    counts: np.ndarray  # int64, (words, languages)

    def words(self) -> list[bytes]:
        """The words as byte strings (for tests and small corpora)."""
        ends = np.cumsum(self.lengths).tolist()
        raw = self.data.tobytes()
        return [raw[e - n : e] for e, n in zip(ends, self.lengths.tolist())]

    def to_counters(self) -> dict[str, Counter]:
        """``{lang: Counter(pre-token -> count)}``: the same counts as strings (a word absent
        from a language is not in its Counter)."""
        words = [w.decode("utf-8") for w in self.words()]
        return {lang: Counter({w: n for w, n in zip(words, self.counts[:, l].tolist()) if n})
                for l, lang in enumerate(self.languages)}

    @classmethod
    def from_counters(cls, counts_by_lang: Mapping[str, Counter]) -> WordCounts:
        """The arrays of ``{lang: Counter}`` (each Counter's order; its strings in UTF-8)."""
        parts = [words_of(Counter(c)) for c in counts_by_lang.values()]
        return union(list(counts_by_lang), [(data, lengths, n, l) for l, (data, lengths, n) in enumerate(parts)])


def words_of(counter: Counter) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(data, lengths, counts)`` of a Counter's words in UTF-8 (one part of :func:`union`).

    >>> [a.tolist() for a in words_of(Counter({"ab": 2, "c": 1}))]
    [[97, 98, 99], [2, 1], [2, 1]]
    """
    encoded = [w.encode("utf-8") for w in counter]
    return (np.frombuffer(b"".join(encoded), np.uint8), np.fromiter(map(len, encoded), np.int64, len(encoded)),
            np.fromiter(counter.values(), np.int64, len(counter)))


# No flag ranges: count_words' default.
_NO_RANGES = np.zeros((0, 2), np.int64)


def count_words(lines: Iterable[str], source: str, flag: np.ndarray | None = None):
    """``(data, lengths, counts, flagged)``: the distinct pre-tokens of the lines (cut by the
    machine of the regex ``source``, in order of first occurrence) in UTF-8, one after
    another, their byte lengths and counts, and whether each holds a code point in one of
    the ``flag`` ranges (rows ``(lo, hi)``, inclusive, ascending; what a bounded scheme cuts again).
    A lone surrogate (a Python string may hold one; UTF-8 may not) is refused with
    :class:`~modtok.errors.DataError`.

    >>> data, lengths, counts, _ = count_words(["a é a"], SCHEMES["gpt2"])
    >>> bytes(data), lengths.tolist(), counts.tolist()
    (b'a \\xc3\\xa9 a', [1, 3, 2], [1, 1, 1])
    """
    found = _machine(source)
    flag = _NO_RANGES if flag is None else flag
    if _C is not None:
        data, lengths, counts, flagged, bad = _c_count(lines, found, flag, False)
        if bad is not None:
            line, at, text = bad
            raise DataError(f"a lone surrogate in line {line} of the lines at character {at} ({text!r}): "
                            "not UTF-8, so no byte-level pre-token")
        return data, lengths, counts, flagged
    parts = []
    for block, line_ends in _blocks(lines):
        text, cps, ends = _cut_lines(block, line_ends, found)
        rows, arena = _unique(cps, ends)
        data, lengths, flagged, bad = _utf8(arena, rows[:, 1], flag)
        if bad >= 0:
            at = int(rows[bad, 0])
            raise DataError(f"a lone surrogate in the text at character {at} of a block of lines "
                            f"({text[at:at + 20]!r}): not UTF-8, so no byte-level pre-token")
        parts.append((data, lengths, rows[:, 2].copy(), flagged))
    if len(parts) == 1:
        return parts[0]
    if not parts:
        return np.zeros(0, np.uint8), np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.bool_)
    lengths = np.concatenate([p[1] for p in parts])
    data, merged, counts, first = _union(np.concatenate([p[0] for p in parts]), lengths,
                                         np.zeros(len(lengths), np.int64), np.concatenate([p[2] for p in parts]), 1)
    row = np.searchsorted(np.cumsum(lengths) - lengths, first)  # pre-tokens are never empty: starts are unique
    return data, merged, counts[:, 0], np.concatenate([p[3] for p in parts])[row]


def union(languages: list[str], parts: list[tuple[np.ndarray, np.ndarray, np.ndarray, int]]) -> WordCounts:
    """:class:`WordCounts` of ``parts`` ``(data, lengths, counts, column)``: each a list of
    words (UTF-8, cut at ``lengths``) counted in language ``languages[column]``; a word in
    several parts of one language gets the sum, words in order of first occurrence.

    >>> a, b = words_of(Counter({"ab": 1})), words_of(Counter({"c": 2, "ab": 3}))
    >>> union(["x"], [(*a, 0), (*b, 0)]).counts.tolist()
    [[4], [2]]
    """
    if not parts:
        return WordCounts(list(languages), np.zeros(0, np.uint8), np.zeros(0, np.int64),
                          np.zeros((0, len(languages)), np.int64))
    if len(parts) == 1:  # one part's words are distinct already (count_words, words_of)
        data, lengths, counts, col = parts[0]
        dense = np.zeros((len(lengths), len(languages)), np.int64)
        dense[:, col] = counts
        return WordCounts(list(languages), data, lengths, dense)
    if _C is not None:
        parts = [(np.ascontiguousarray(d, np.uint8), np.ascontiguousarray(n, np.int64),
                  np.ascontiguousarray(k, np.int64), int(c)) for d, n, k, c in parts]
        data, lengths, ids = _C.union(parts)
        lengths = np.frombuffer(lengths, np.int64)
        counts = np.zeros((len(lengths), len(languages)), np.int64)
        _C.scatter(counts, parts, np.frombuffer(ids, np.int64), len(languages))
        return WordCounts(list(languages), np.frombuffer(data, np.uint8), lengths, counts)
    cols = np.concatenate([np.full(len(p[1]), p[3], np.int64) for p in parts])
    data, lengths, counts, _ = _union(np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts]),
                                      cols, np.concatenate([p[2] for p in parts]), len(languages))
    return WordCounts(list(languages), data, lengths, counts)
