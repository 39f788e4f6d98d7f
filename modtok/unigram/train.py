"""Monolingual Unigram models trained by sentencepiece, in memory, from units.

The paper's settings (Appendix A.1.1, :data:`modtok.artifacts.baselines.SP_SETTINGS`):
unigram, byte fallback, split digits, identity normalisation, whitespace-only
pieces allowed, extra whitespace kept. The budget ``vocab_size`` counts every
piece (``<unk>``, ``<s>``, ``</s>``, the 256 bytes and the normal pieces).

**From units.** sentencepiece cuts its input into words (``split_by_whitespace``)
and trains on ``{word: count}``; here that split is made first
(:mod:`modtok.unigram.units`) and sentencepiece reads the words with their counts
(``input_format="tsv"``, one ``word<TAB>count`` row per unit, rows sorted, no
dummy prefix: a unit already has its ``▁``). Lines and saved counts become the
same units, so training from either is one computation: the same TSV rows, the
same model. It is also independent of line order (sentencepiece on raw lines is
not quite: its seed pieces come from a suffix array over the lines in order).

sentencepiece on units is not bit-identical to sentencepiece on the raw lines.
Its Unigram trainer makes the seed pieces *before* it cuts sentences into words
(``Trainer::Train``: ``LoadSentences``, ``MakeSeedSentencePieces``, then
``SplitSentencesByWhitespace``), from substring frequencies in a suffix array of
the sentences it was given -- lines there, words here; after the cut, EM,
pruning and character coverage see the same weighted words in both. A repeated
sentence is the same as one TSV row with that count (measured: every line twice
gives the model of every line once with count 2; units as TSV rows give the model
of each unit repeated count times as lines). Measured on the pool (1 MB per
language, 8000 pieces, FLORES-200 devtest tokens, raw lines -> units): eng
+0.17% (piece-set Jaccard 0.969), fra +0.19% (0.976), rus -0.11% (0.970), npi
+0.01% (0.996) -- the same quality, one formulation for text and counts.

A tab cannot be inside a TSV word; it cannot be inside a piece either (other
than the one-character piece ``\\t``, sentencepiece's ``kUPPBoundaryChar``), so a
unit is given to sentencepiece cut at its tabs (each tab a word of its own): the
same lattice, the same character counts. ``▅`` (U+2585, sentencepiece's reserved
``kUNKChar``) would make it skip the word in silence, so it is given as a private-use
stand-in and put back in the pieces.

It is sentencepiece's *soft* limit: its pruning can stop a little short of the
budget (1 MB of English at 8000 gives about 7100 pieces; the hard limit would
refuse); the training commands say which language stopped short. A budget the
corpus cannot possibly fill -- more normal pieces than
the corpus has distinct candidate substrings (at most ``max_sentencepiece_length``
characters, not crossing a word start) -- is a :class:`BudgetError`.

**What sentencepiece would otherwise do in silence or refuse** (:func:`fit_to_sentencepiece`;
each change is said in the model's ``notes``):

- a unit over :data:`~modtok.artifacts.baselines.MAX_LINE_BYTES` (1 MiB: a long line of
  text without spaces is one unit) would be skipped without a word, and a unit of 175,000
  Thai characters (measured) makes its likelihood NaN, a refusal; a unit over
  :data:`MAX_UNIT_BYTES` (sentencepiece's own default ``max_sentence_length``) is cut at
  grapheme boundaries into parts of at most that size (only the pieces that would straddle a
  cut are lost: of at most 16 characters, against parts of over 1,000);
- every character of the ``character_coverage`` share of the text (0.9995, sentencepiece's
  default: a setting of ours, not the paper's) must be a piece, so a budget smaller than those characters plus the 259 base pieces is
  refused (UDHR's Chinese, 2,064 characters of text: 447 characters at 0.9995, for 341
  pieces beside the base ones at a budget of 600). The
  coverage is lowered until the characters fit, down to 0.98 (the least sentencepiece
  takes; the rarer characters fall back to bytes); where even 0.98 needs more, the
  language's budget is raised to what its characters need.

>>> m = train_unigram(["low lower lowest newer wider"] * 50, vocab_size=270)
>>> len(m), m.decode(m.encode("lowest wider"))
(270, 'lowest wider')
>>> from modtok.unigram.units import unit_counts
>>> m.pieces == train_unigram(unit_counts(["low lower lowest newer wider"] * 50), 270).pieces
True
>>> train_unigram(["ab ab"], vocab_size=300)
Traceback (most recent call last):
...
modtok.errors.BudgetError: vocab_size 300 asks for 41 normal pieces but the corpus has only 6 distinct substrings (of at most 16 characters) to choose from
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

import numpy as np
import regex

from modtok.artifacts.baselines import MAX_LINE_BYTES, MIN_CHARACTER_COVERAGE, SP_SETTINGS, sp_model_proto
from modtok.errors import BudgetError, DataError
from modtok.progress import bar as progress_bar
from modtok.unigram.model import UnigramModel
from modtok.unigram.units import as_units

N_BASE = 3 + 256  # <unk>, <s>, </s> and the byte pieces (baselines.BASE_PIECES)
# Settings that decide what a word is: fixed, since the words are cut before sentencepiece sees them.
WORD_SETTINGS = ("input_format", "add_dummy_prefix", "split_by_whitespace", "treat_whitespace_as_suffix",
                 "allow_whitespace_only_pieces", "remove_extra_whitespaces")
_TAB = regex.compile("(\t)")
_CLUSTER = regex.compile(r"\X")
RESERVED = "\u2585"  # sentencepiece's kUNKChar ▅: it skips, without a word, every word holding it
MAX_UNIT_BYTES = 4192  # sentencepiece's default max_sentence_length: a longer word is cut (module docstring)


def tsv_words(units: Mapping[str, int], tab: str = "\t") -> Counter:
    """The words of sentencepiece's TSV input for ``{unit: count}``: each unit cut at its
    tabs, a tab written as the word ``tab`` (a character the units do not contain: a TSV
    word cannot hold a tab; module docstring)."""
    words: Counter = Counter()
    for unit, n in units.items():
        if n <= 0:
            continue
        if "\t" not in unit:  # nearly every unit: split, it is itself (a third of the call's time)
            words[unit] += n
            continue
        for word in _TAB.split(unit):
            if word:
                words[tab if word == "\t" else word] += n
    return words


def tsv_rows(units: Mapping[str, int], tab: str = "\t") -> list[str]:
    """sentencepiece's TSV input for ``{unit: count}``: ``word<TAB>count`` rows of
    :func:`tsv_words`, sorted by word.

    >>> tsv_rows({"▁ab": 2, "▁a\\tb": 1, "▁a": 1}, tab="T")
    ['T\\t1', 'b\\t1', '▁a\\t2', '▁ab\\t2']
    """
    return [f"{word}\t{n}" for word, n in sorted(tsv_words(units, tab).items())]


def free_character(units, taken: str = "") -> str:
    """The first private-use character (from U+E000) that no unit contains (nor ``taken``).

    >>> free_character({"a": 1, "\\ue000b": 2}), free_character({"a": 1}, taken="\\ue000")
    ('\\ue001', '\\ue001')
    """
    used = set().union(*map(set, units)) | set(taken)
    for code in (*range(0xE000, 0xF900), *range(0xF0000, 0xFFFFE)):
        if chr(code) not in used:
            return chr(code)
    raise DataError("the corpus uses every private-use character; no stand-in for the tab or ▅ is left")


def cut_long_units(units: Mapping[str, int], max_bytes: int = MAX_UNIT_BYTES) -> tuple[Counter, int]:
    """``(units, cut)``: every unit over ``max_bytes`` UTF-8 bytes cut into consecutive parts
    of at most that size at grapheme boundaries, and how many units were cut.

    >>> cut_long_units({"▁กินข้าว": 2, "▁a": 1}, max_bytes=9)
    (Counter({'▁กิ': 2, 'นข้': 2, 'าว': 2, '▁a': 1}), 1)
    """
    out: Counter = Counter()
    cut = 0
    for unit, n in units.items():
        if len(unit) * 4 <= max_bytes or len(unit.encode("utf-8")) <= max_bytes:
            out[unit] += n
            continue
        cut += 1
        part, size = [], 0
        for cluster in _CLUSTER.findall(unit):
            b = len(cluster.encode("utf-8"))
            if size + b > max_bytes and part:
                out["".join(part)] += n
                part, size = [], 0
            part.append(cluster)
            size += b
        out["".join(part)] += n
    return out, cut


def characters_needed(units: Mapping[str, int], coverage: float) -> tuple[int, np.ndarray]:
    """How many characters sentencepiece makes pieces of at ``coverage``, and the coverage
    reached after each character (most frequent first): its rule exactly
    (``TrainerInterface::LoadSentences``: characters by count, added until the share they
    cover, as a float32, reaches ``coverage``).

    >>> characters_needed({"▁aab": 1, "▁a": 2}, 0.6)[0]   # ▁ 3, a 4, b 1 of 8: a, ▁ cover 7/8
    2
    """
    # each character's count, weighted by its unit's: one pass of numpy over the units' code points
    # (a Python loop over every character took 0.10 s of a 2.0 s training, 8 x 100k characters)
    lengths = np.fromiter(map(len, units), np.int64, len(units))
    weights = np.repeat(np.fromiter(units.values(), np.int64, len(units)), lengths)
    points = np.frombuffer("".join(units).encode("utf-32-le", "surrogatepass"), np.uint32)
    present = np.bincount(points) > 0  # a character of units counted 0 times is one of 0 (as it always was)
    counts = np.sort(np.bincount(points, weights)[present].astype(np.int64))[::-1]  # float64 sums: exact below 2**53
    covered = (np.cumsum(counts) / counts.sum()).astype(np.float32)  # after 1, 2, ... characters
    before = np.concatenate([[np.float32(0)], covered[:-1]])
    reached = np.flatnonzero(before >= np.float32(coverage))
    return (int(reached[0]) if len(reached) else len(counts)), covered


def fit_to_sentencepiece(units: Mapping[str, int], vocab_size: int,
                         coverage: float) -> tuple[Counter, int, float, list[str]]:
    """``(units, vocab_size, coverage, notes)``: what sentencepiece is given so that it skips
    nothing and refuses nothing (module docstring), and in words what was changed."""
    units, cut = cut_long_units(units)
    notes = [f"{cut:,} word(s) without a space over {MAX_UNIT_BYTES:,} bytes (sentencepiece skips one over "
             f"{MAX_LINE_BYTES:,}, and its likelihood overflows on long ones) cut into parts at grapheme "
             "boundaries"] if cut else []
    need, covered = characters_needed(units, coverage)
    room = vocab_size - N_BASE
    if need <= room:
        return units, vocab_size, coverage, notes
    said = (f"the {need:,} characters that cover {coverage:.2%} of its text do not fit in the {room:,} pieces "
            f"beside the {N_BASE} base pieces")
    if room > 0 and covered[room - 1] >= MIN_CHARACTER_COVERAGE:
        lowered = float(covered[room - 1])
        notes.append(f"{said}: character coverage lowered to {lowered:.4%} ({room:,} characters; the rarer ones "
                     "fall back to bytes)")
        return units, vocab_size, lowered, notes
    floor, _ = characters_needed(units, MIN_CHARACTER_COVERAGE)
    raised = N_BASE + max(floor, 1)
    notes.append(f"{said}, nor at the least coverage sentencepiece takes ({MIN_CHARACTER_COVERAGE:.0%}: "
                 f"{floor:,} characters): its budget raised from {vocab_size:,} to {raised:,} pieces")
    return units, raised, MIN_CHARACTER_COVERAGE, notes


def train_unigram(text, vocab_size: int, num_threads: int = 1, **overrides) -> UnigramModel:
    """A sentencepiece Unigram model of at most ``vocab_size`` pieces (sentencepiece's soft
    limit: module docstring), trained on the
    units of ``text``: lines, or a ``Counter`` of units (:mod:`modtok.unigram.units`:
    ``unit_counts(lines)`` or ``load_units(counts_dir)``); both give the same model.
    What had to change for sentencepiece (:func:`fit_to_sentencepiece`: long units cut,
    the character coverage lowered, the budget raised) is in the model's ``notes``.

    Raises :class:`DataError` on an empty corpus and :class:`BudgetError` if
    ``vocab_size`` leaves no normal piece or exceeds what the corpus supports
    (sentencepiece's own limit: its seed substrings and characters).
    ``overrides`` change sentencepiece trainer settings (not those that decide
    what a word is, :data:`WORD_SETTINGS`).
    """
    fixed = [key for key in WORD_SETTINGS if key in overrides]
    if fixed:
        raise DataError(f"{', '.join(fixed)}: fixed for merged Unigram, which trains on sentencepiece's "
                        "words cut beforehand (modtok.unigram.units)")
    units = as_units(text)
    if not units:
        raise DataError("cannot train a Unigram model on an empty corpus")
    if vocab_size <= N_BASE:
        raise BudgetError(
            f"vocab_size {vocab_size} leaves no normal piece beyond the {N_BASE} base pieces "
            "(<unk>, <s>, </s> and 256 bytes)"
        )
    settings = {**SP_SETTINGS, **overrides}
    tab = free_character(units) if any("\t" in u for u in units) else "\t"
    unk = free_character(units, tab) if any(RESERVED in u for u in units) else RESERVED
    words = Counter({w.replace(RESERVED, unk): n for w, n in tsv_words(units, tab).items()})
    words, size, coverage, notes = fit_to_sentencepiece(words, vocab_size, settings["character_coverage"])
    rows = tsv_rows(words)  # what sentencepiece reads: every word, none over its limits
    try:
        proto = sp_model_proto(rows, size, num_threads, input_format="tsv", add_dummy_prefix=False,
                               **{**overrides, "character_coverage": coverage})
    except BudgetError as e:
        raise BudgetError(f"{e} (the lines: {len(rows)} distinct words with their counts)") from None
    model = UnigramModel.from_sentencepiece(proto)
    pieces = ["\t" if p == tab else p.replace(unk, RESERVED) for p in model.pieces]  # the stand-ins put back
    if pieces != model.pieces:  # (the tab's is only ever a one-character word)
        model = UnigramModel(pieces, model.scores, model.types)
    model.notes = notes
    if len(model) < vocab_size:
        need = vocab_size - N_BASE
        have = distinct_substrings(units, settings.get("max_sentencepiece_length", 16), stop=need)
        if have < need:
            raise BudgetError(
                f"vocab_size {vocab_size} asks for {need} normal pieces but the corpus has only "
                f"{have} distinct substrings (of at most {settings.get('max_sentencepiece_length', 16)} "
                "characters) to choose from"
            )
    return model


def distinct_substrings(text, max_len: int = 16, stop: int | None = None) -> int:
    """Distinct substrings of at most ``max_len`` characters of the units of ``text``
    (lines or a ``Counter`` of units); counting stops early once it reaches ``stop``.

    >>> distinct_substrings(["ab ab"])   # ▁, ▁a, ▁ab, a, ab, b
    6
    """
    seen: set[str] = set()
    for w in sorted(as_units(text)):
        for i in range(len(w)):
            for j in range(i + 1, min(len(w), i + max_len) + 1):
                seen.add(w[i:j])
        if stop is not None and len(seen) >= stop:
            break
    return len(seen)


def train_unigram_per_language(corpus: Mapping[str, Sequence[str] | Mapping[str, int]], vocab_size: int,
                               num_threads: int = 1, progress: bool = False, **overrides) -> dict[str, UnigramModel]:
    """``{lang: model}``, one sentencepiece Unigram per language at budget ``vocab_size``;
    a language's text is its lines or its ``Counter`` of units (:func:`train_unigram`)."""
    if not corpus:
        raise DataError("empty corpus (no language)")
    out = {}
    for lang, lines in progress_bar(list(corpus.items()), desc="sentencepiece", enabled=progress):
        try:
            out[lang] = train_unigram(lines, vocab_size, num_threads, **overrides)
        except (BudgetError, DataError) as e:
            raise type(e)(f"{lang}: {e}") from None
    return out
