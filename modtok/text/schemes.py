"""The named pre-tokenizers: their regexes (the one place they are written).

A scheme is a named regex (``SCHEMES``); :mod:`modtok.text.pretokenize` cuts with it through
the ``regex`` module (the reference) and :mod:`modtok.text.lexer` with a hand-written state
machine that implements the same source exactly. Both read the patterns here, so neither
imports the other's module for them (the lexer counts for pretokenize).

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
                  text without spaces bounded (:mod:`modtok.text.pretokenize`, "Text without spaces").
``sentencepiece`` sentencepiece's words (``split_by_whitespace`` with whitespace-only
                  pieces allowed): a run of spaces (or ``▁``) with the text after it up to
                  the next space; what merged Unigram trains on (:mod:`modtok.unigram.units`
                  adds the dummy-prefix ``▁``), so its counts can be saved (``modtok count
                  --scheme sentencepiece``) like any other scheme's.
``llama3-marks-bounded``  ``llama3-marks`` with runs of text written without spaces bounded
                  (the same): the training commands' default.

>>> pattern("whitespace") == SCHEMES["whitespace"] and counting_pattern("whitespace") == UNBOUNDED["whitespace"]
True
"""

from __future__ import annotations

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
LONG_RUN = "|".join(f"[{chars}]{{{MAX_RUN + 1}}}" for chars in SPACELESS_RUNS.values())


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



def counting_pattern(scheme: str) -> str:
    """The regex that counting cuts with before :func:`bound_counts`: ``UNBOUNDED[scheme]``
    for a bounded scheme, else the scheme's own (an unknown scheme is refused here)."""
    return UNBOUNDED.get(scheme) or pattern(scheme)
