"""Monolingual Unigram models trained by sentencepiece, in memory.

The paper's settings (Appendix A.1.1, :data:`modtok.artifacts.baselines.SP_SETTINGS`):
unigram, byte fallback, split digits, identity normalisation, whitespace-only
pieces allowed, extra whitespace kept. The budget ``vocab_size`` counts every
piece (``<unk>``, ``<s>``, ``</s>``, the 256 bytes and the normal pieces).

It is sentencepiece's *soft* limit: its pruning can stop a little short of the
budget (1 MB of English at 8000 gives about 7200 pieces; the hard limit would
refuse). A budget the corpus cannot possibly fill -- more normal pieces than
the corpus has distinct candidate substrings (at most ``max_sentencepiece_length``
characters, not crossing a word start) -- is a :class:`BudgetError`.

>>> m = train_unigram(["low lower lowest newer wider"] * 50, vocab_size=270)
>>> len(m), m.decode(m.encode("lowest wider"))
(270, 'lowest wider')
>>> train_unigram(["ab ab"], vocab_size=300)
Traceback (most recent call last):
...
modtok.errors.BudgetError: vocab_size 300 asks for 41 normal pieces but the corpus has only 6 distinct substrings (of at most 16 characters) to choose from
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from modtok.artifacts.baselines import SP_SETTINGS, sp_model_proto
from modtok.errors import BudgetError, DataError
from modtok.progress import bar as progress_bar
from modtok.unigram.merge import WORD
from modtok.unigram.model import UnigramModel, normalize

N_BASE = 3 + 256  # <unk>, <s>, </s> and the byte pieces


def train_unigram(lines: Sequence[str], vocab_size: int, num_threads: int = 1, **overrides) -> UnigramModel:
    """A sentencepiece Unigram model of exactly ``vocab_size`` pieces.

    Raises :class:`DataError` on an empty corpus and :class:`BudgetError` if
    ``vocab_size`` leaves no normal piece or exceeds what the corpus supports
    (sentencepiece's own limit: its seed substrings and characters).
    ``overrides`` change sentencepiece trainer settings.
    """
    if isinstance(lines, str):
        raise DataError("expected a list of lines, got one string")
    lines = [line for line in lines if line.strip()]
    if not lines:
        raise DataError("cannot train a Unigram model on an empty corpus")
    if vocab_size <= N_BASE:
        raise BudgetError(
            f"vocab_size {vocab_size} leaves no normal piece beyond the {N_BASE} base pieces "
            "(<unk>, <s>, </s> and 256 bytes)"
        )
    settings = {**SP_SETTINGS, **overrides}
    model = UnigramModel.from_sentencepiece(sp_model_proto(lines, vocab_size, num_threads, **overrides))
    if len(model) < vocab_size:
        need = vocab_size - N_BASE
        have = distinct_substrings(lines, settings.get("max_sentencepiece_length", 16), stop=need)
        if have < need:
            raise BudgetError(
                f"vocab_size {vocab_size} asks for {need} normal pieces but the corpus has only "
                f"{have} distinct substrings (of at most {settings.get('max_sentencepiece_length', 16)} "
                "characters) to choose from"
            )
    return model


def distinct_substrings(lines: Sequence[str], max_len: int = 16, stop: int | None = None) -> int:
    """Distinct substrings of the normalised words of ``lines`` of at most
    ``max_len`` characters (counting stops early once it reaches ``stop``).

    >>> distinct_substrings(["ab ab"])   # ▁, ▁a, ▁ab, a, ab, b
    6
    """
    seen: set[str] = set()
    words = {w for line in lines for w in WORD.findall(normalize(line))}
    for w in words:
        for i in range(len(w)):
            for j in range(i + 1, min(len(w), i + max_len) + 1):
                seen.add(w[i:j])
        if stop is not None and len(seen) >= stop:
            break
    return len(seen)


def train_unigram_per_language(corpus: Mapping[str, Sequence[str]], vocab_size: int, num_threads: int = 1,
                      progress: bool = False, **overrides) -> dict[str, UnigramModel]:
    """``{lang: model}``, one sentencepiece Unigram per language at budget ``vocab_size``."""
    if not corpus:
        raise DataError("empty corpus (no language)")
    out = {}
    for lang, lines in progress_bar(list(corpus.items()), desc="sentencepiece", enabled=progress):
        try:
            out[lang] = train_unigram(lines, vocab_size, num_threads, **overrides)
        except (BudgetError, DataError) as e:
            raise type(e)(f"{lang}: {e}") from None
    return out
