"""The units merged Unigram trains on, from text or from saved pre-token counts.

A *unit* is one of sentencepiece's words: with ``split_by_whitespace`` and
whitespace-only pieces allowed (the paper's settings, :data:`~modtok.artifacts.baselines.SP_SETTINGS`),
sentencepiece cuts every normalised line before each ``▁`` that follows another
character and trains on the resulting ``{word: count}``; no piece crosses such a
cut, so the lattice of a line is the concatenation of its units' lattices (the
EM stage, :mod:`modtok.unigram.merge`, uses the same units). Both training
paths go through one function, :func:`units_from_pretokens`:

- **from text**: :func:`unit_counts` counts the pre-tokens of the non-blank
  lines with the ``sentencepiece`` scheme of :mod:`modtok.text.pretokenize`
  (a run of spaces or ``▁`` and the text after it) and maps them to units;
- **from counts**: ``modtok count MANIFEST -o DIR --scheme sentencepiece`` saves
  those very pre-token counts (:mod:`modtok.text.counts`, also on Dask);
  :func:`load_units` maps them the same way.

So a model trained from a counts directory is the model trained from the text
that was counted, by construction (tested on pieces, scores and encodings).

The map (:func:`unit`) spaces -> ``▁``, and a pre-token that does not start
with a space gets the dummy-prefix ``▁``: a line's first word. That is
sentencepiece's normalisation exactly, except for a line that *begins* with a
space (or ``▁``): saved counts cannot tell its first pre-token from a later
one, so both paths read it as a later one, one ``▁`` shorter than
sentencepiece's word (`` cat`` gives ``▁cat``, not ``▁▁cat``). The pool and
FLORES-200 have no such line; blank lines are dropped, as
:func:`modtok.text.corpus.open_corpus` drops them.

>>> sorted(unit_counts(["the cat", "a  cat "]).items())
[('▁', 1), ('▁a', 1), ('▁cat', 1), ('▁the', 1), ('▁▁cat', 1)]
>>> from modtok.unigram.merge import count_units   # sentencepiece's own split of the lines
>>> count_units(["the cat", "a  cat "]) == unit_counts(["the cat", "a  cat "])
True
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping

from modtok.errors import DataError, UnknownLanguageError
from modtok.text.pretokenize import count_pretokens
from modtok.unigram.model import SPACE

SCHEME = "sentencepiece"  # the pre-tokenizer whose counts are units (modtok.text.pretokenize.SCHEMES)


def unit(pretoken: str) -> str:
    """The unit of a ``sentencepiece``-scheme pre-token (module docstring).

    >>> unit("cat"), unit(" cat"), unit("  cat"), unit(" ")
    ('▁cat', '▁cat', '▁▁cat', '▁')
    """
    text = pretoken.replace(" ", SPACE)
    return text if text.startswith(SPACE) else SPACE + text


def units_from_pretokens(counts: Mapping[str, int]) -> Counter:
    """``Counter`` of units from ``sentencepiece``-scheme pre-token counts (two
    pre-tokens can give one unit: ``"cat"`` and ``" cat"``)."""
    out: Counter = Counter()
    for pretoken, n in counts.items():
        if n > 0 and pretoken:
            out[unit(pretoken)] += n
    return out


def unit_counts(lines: Iterable[str]) -> Counter:
    """``Counter`` of the units of the non-blank ``lines``."""
    if isinstance(lines, str):
        raise DataError("expected a list of lines, got one string")
    return units_from_pretokens(count_pretokens((line for line in lines if line.strip()), SCHEME))


def as_units(text) -> Counter:
    """A language's training text as units: a ``Counter`` of units is kept as it is
    (from :func:`load_units` or :func:`unit_counts`), lines are counted."""
    return Counter(text) if isinstance(text, Mapping) else unit_counts(text)


def load_units(directory, langs=None) -> dict[str, Counter]:
    """``{lang: Counter of units}`` from a counts directory made with ``--scheme
    sentencepiece`` (all its languages, or ``langs`` in that order).

    Raises :class:`~modtok.errors.DataError` for counts of another pre-tokenizer
    (their pre-tokens are not sentencepiece's words: ``llama3`` cuts ``cat,`` in
    two) and :class:`~modtok.errors.UnknownLanguageError` for a language the
    directory does not hold.
    """
    from modtok.text.counts import Counts, read_meta

    meta = read_meta(directory)
    for lang in [langs] if isinstance(langs, str) else langs or ():
        if lang not in meta["languages"]:
            raise UnknownLanguageError(lang, meta["languages"], hint=f"{directory} holds no counts of it")
    counts = Counts.load(directory, langs)
    if counts.scheme != SCHEME:
        raise DataError(
            f"{directory}: counts were made with pre-tokenizer {counts.scheme!r}; merged Unigram trains on "
            f"sentencepiece's words: count them with `modtok count MANIFEST -o DIR --scheme {SCHEME}`"
        )
    return {lang: units_from_pretokens(c) for lang, c in counts.by_lang.items()}
