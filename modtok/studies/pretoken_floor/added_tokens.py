"""The added-tokens arm (App. J): R2's whole-word strings as HF added tokens.

"Merge-Based Vocabulary Extension Stalls at the Pre-Tokenizer", App. J, asks
whether the regex repair is needed at all: take the Devanagari strings that the
repaired arm R2 learned and register them as *added tokens*
(``tokenizers.AddedToken``) on the unchanged tokenizer, original regex and all.
HF matches added tokens on the raw (normalized) text *before* the
pre-tokenizer, leftmost-longest, so they do cross the letters-only cuts — but
they match as substrings, with no idea of words:

- default matching: a string matches wherever it occurs, also inside a longer
  word (``नेपाल`` inside ``नेपालको`` leaves ``को`` to the pre-tokenizer);
- ``single_word=True``: HF drops a match whose neighbour on either side is a
  word character (Rust's Unicode ``\\w``: letters, marks, digits, ``_``) —
  so a string with a leading space, which always follows the end of a word,
  hardly ever matches.

Our readings, where the paper leaves room:

*Whole-Devanagari string* (:func:`whole_script_strings`): a learned token that is
not an original one, kept by R2's §V filter, whose bytes decode to complete
text of U+0900–U+097F, optionally after one leading space as the byte-level
tokens have it. ``space="keep"`` registers the string as learned (``" नेपाल"``:
default matching then behaves most like R2's own token); ``space="strip"``
registers the Devanagari text alone (``"नेपाल"``, duplicates merged), which is
what ``single_word`` can match. We report both.

*Inside a word* (:func:`inside_word`): a match starts inside a word when the
character before its start **and** its own first character are letters or
marks (``\\p{L}|\\p{M}``), and ends inside a word when its last character and
the character after its end are. For a match that begins and ends with a
letter or mark this is the plain reading "the character before the start or
after the end is a letter or mark"; the refinement only keeps a leading space
from counting as a cut (" नेपाल" after "सरकार" starts at a word border).

>>> inside_word("नेपालको सरकार", 0, 5)          # 'नेपाल' + 'को': ends inside the word
(False, True)
>>> inside_word("नेपालको सरकार", 7, 13)         # ' सरकार': a whole word with its space
(False, False)
>>> inside_word("हामीसँग", 3, 7)                 # 'ीसँग' starts with a vowel sign after 'म'
(True, False)
"""

from __future__ import annotations

from collections.abc import Sequence

import regex

from modtok.adapt.extend import Base, Extension
from modtok.adapt.filters import DEVANAGARI
from modtok.errors import ConfigError, UsageError
from modtok.evaluation import audit

from .floor import RESULTS, base_key, extension_key

_LETTER_OR_MARK = regex.compile(r"[\p{L}\p{M}]")

SPACE_READINGS = ("keep", "strip")


def whole_script_strings(ext: Extension, block: tuple[int, int] = DEVANAGARI, space: str = "keep") -> list[str]:
    """The learned tokens of ``ext`` that are complete text of ``block`` (after at
    most one leading space), as strings, in id order (``space`` as in the module
    docstring; duplicates after stripping keep their first place)."""
    if space not in SPACE_READINGS:
        raise ConfigError(f"whole_script_strings: unknown space reading {space!r} (known: {', '.join(SPACE_READINGS)})")
    lo, hi = block
    out: dict[str, None] = {}
    for token in ext.new_tokens():  # dict in id order
        try:
            text = token.decode("utf-8")
        except UnicodeDecodeError:  # a byte piece (relaxed filter): not text
            continue
        core = text.removeprefix(" ")
        if core and all(lo <= ord(c) <= hi for c in core):
            out.setdefault(text if space == "keep" else core)
    return list(out)


def added_tokenizer(base: Base, strings: Sequence[str], single_word: bool = False):
    """The unchanged ``base`` tokenizer (its own regex) with ``strings`` registered
    as added tokens (``AddedToken(s, single_word=...)``); their ids follow every
    original id."""
    from tokenizers import AddedToken, Tokenizer

    tok = Tokenizer.from_str(base.tokenizer.to_str())
    tok.add_tokens([AddedToken(s, single_word=single_word) for s in strings])
    ids = [tok.token_to_id(s) for s in strings]
    if strings and min(ids) < base.next_id:  # a string that is already a vocabulary entry
        raise UsageError(f"added_tokenizer: added token {strings[ids.index(min(ids))]!r} got original id {min(ids)}")
    return tok


def inside_word(text: str, start: int, end: int) -> tuple[bool, bool]:
    """``(starts inside a word, ends inside a word)`` for the match ``text[start:end]``
    (character offsets; definition in the module docstring)."""
    if not 0 <= start < end <= len(text):
        raise UsageError(f"inside_word: match [{start}, {end}) is empty or outside a text of {len(text)} characters")
    word = lambda c: _LETTER_OR_MARK.fullmatch(c) is not None
    starts = start > 0 and word(text[start - 1]) and word(text[start])
    ends = end < len(text) and word(text[end - 1]) and word(text[end])
    return starts, ends


def matches(tokenizer, lines: Sequence[str], first_id: int) -> list[tuple[int, int, int]]:
    """``(line, start, end)`` of every token with id >= ``first_id`` (the added
    tokens) in the encodings of ``lines``; offsets are characters of the line."""
    encodings = tokenizer.encode_batch(list(lines), add_special_tokens=False)
    return [(n, s, e) for n, enc in enumerate(encodings) for i, (s, e) in zip(enc.ids, enc.offsets) if i >= first_id]


def inside_word_share(tokenizer, lines: Sequence[str], first_id: int) -> dict:
    """``{"matches", "start_inside", "end_inside", "inside"}``: the number of
    added-token matches in ``lines`` and the shares of them that start inside
    a word, end inside one, and do either (NaN without a match)."""
    found = matches(tokenizer, lines, first_id)
    flags = [inside_word(lines[n], s, e) for n, s, e in found]
    share = lambda k: sum(k) / len(k) if k else float("nan")
    return {"matches": len(found), "start_inside": share([a for a, _ in flags]),
            "end_inside": share([b for _, b in flags]), "inside": share([a or b for a, b in flags])}


def arm_rows(base: Base, r2: Extension, lines: Sequence[str], ref_lines: Sequence[str],
             n_boot: int = 1000, seed: int = 0) -> list[dict]:
    """The App. J table: the original tokenizer, the R2 extension ``r2``, and the
    added-token tokenizers (both space readings × default / ``single_word``) on
    aligned ``lines`` (the target language) and ``ref_lines`` (English).

    Columns: ``tokenizer``, ``added`` (strings registered), ``premium`` with
    ``premium_ci``, the inside-word shares of :func:`inside_word_share` (NaN
    where nothing is added), ``mark_initial``, ``english_unchanged`` (ids of
    ``ref_lines`` equal to the original's) and ``lossless``.
    """
    key = (base_key(base), extension_key(r2), lines, ref_lines, n_boot, seed)  # r2 by its merges: its JSON needs the base read
    return RESULTS.get("added tokens", key, lambda: _arm_rows(base, r2, lines, ref_lines, n_boot, seed))


def _arm_rows(base: Base, r2: Extension, lines: Sequence[str], ref_lines: Sequence[str], n_boot: int,
              seed: int) -> list[dict]:
    """:func:`arm_rows`, computed."""
    original = [e.ids for e in base.tokenizer.encode_batch(list(ref_lines), add_special_tokens=False)]
    arms = [("original", 0, base.tokenizer, False), ("R2 (repaired regex + merges)", len(r2.new_tokens()), r2.tokenizer(), False)]
    for space in SPACE_READINGS:
        strings = whole_script_strings(r2, space=space)
        for single_word in (False, True):
            name = f"added tokens, space {space}" + (", single_word" if single_word else "")
            arms.append((name, len(strings), added_tokenizer(base, strings, single_word), True))
    rows = []
    for name, added, tok, is_added in arms:
        p, lo, hi = audit.premium_ci(tok, lines, ref_lines, n_boot=n_boot, seed=seed)
        nan = float("nan")
        shares = inside_word_share(tok, lines, base.next_id) if is_added else \
            {"matches": nan, "start_inside": nan, "end_inside": nan, "inside": nan}
        ids = [e.ids for e in tok.encode_batch(list(ref_lines), add_special_tokens=False)]
        rows.append({"tokenizer": name, "added": added, "premium": p, "premium_ci": [lo, hi], **shares,
                     "mark_initial": audit.mark_initial_share(tok, lines), "english_unchanged": ids == original,
                     "lossless": audit.lossless(tok, lines) and audit.lossless(tok, ref_lines)})
    return rows
