"""Merged monolingual Unigram with EM re-estimation (the paper's Algorithm 1).

1. **Union.** The global vocabulary is sentencepiece's base layout (``<unk>``,
   ``<s>``, ``</s>``, 256 byte pieces: ids 0-258) followed by the normal pieces
   of every language, languages in sorted order, each language's pieces in its
   own model order, a piece shared by several languages kept once (first
   occurrence). Language ``l``'s sub-vocabulary = base ids + ids of its pieces.
2. **Initial probabilities.** ``init="uniform"`` (the default, Algorithm 1
   line 3): ``p0(v) = 1/|V|`` over the normal pieces. ``init="average"``:
   ``p0(v) ∝ Σ_l exp(score_l(v))``, the average of the monolingual probabilities
   (a language without ``v`` contributes 0) — a warmer start that reaches the
   same model: notebook 03 compares the two at the default iteration count.
3. **EM on the joint corpus.** E-step: forward-backward over every unit gives
   the expected count ``E[c(v)]`` of each piece. M-step:
   ``p(v) = E[c(v)] / Σ_v' E[c(v')]``. Repeat until the log-likelihood improves by
   less than ``tol`` (relative) or ``max_iter`` M-steps were made.

Units. EM runs on the units sentencepiece trains on (:mod:`modtok.unigram.units`):
the words of the normalised lines (``▁`` for spaces, dummy prefix), cut before
every ``▁`` that follows a non-``▁`` character (``▁▁a▁b`` -> ``▁▁a``, ``▁b``), each
distinct word once with its count -- from lines (``units.unit_counts``) or from
saved counts (``units.load_units``), the same ``Counter`` either way. This is
exact (the same lattices as whole lines) because no piece contains a non-``▁``
character followed by ``▁`` (sentencepiece's ``split_by_whitespace``); for a
vocabulary where one does, whole lines are used (:func:`count_units` with
``by_word=False``), which needs the lines.

Byte fallback in EM: an unknown edge (a character without a single-character
piece) has a fixed log-weight, the initial model's ``min score - 10``. Being a
constant, it keeps EM a proper minorise-maximise step, so the log-likelihood
never decreases; its expected count is reported but is not a piece.

Scores. The final log-probabilities are floored at :data:`LOGP_FLOOR` (a piece
whose expected count underflowed to 0) and quantised to multiples of 2^-8
(:func:`~modtok.unigram.model.quantize_scores`), so the HF ``tokenizer.json``
(float64) and the sentencepiece ``.model`` (float32) hold the very same numbers
and add them up exactly.

>>> from modtok.unigram.train import train_unigram
>>> corpus = {"x": ["aaa ab abab"] * 20, "y": ["bbb ba baba"] * 20}
>>> models = {lang: train_unigram(lines, 266) for lang, lines in corpus.items()}
>>> merged = merge_unigram(models, corpus, max_iter=3)
>>> all(b >= a for a, b in zip(merged.loglik, merged.loglik[1:]))
True
"""

from __future__ import annotations

import math
import time
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import regex

from modtok.artifacts.spm_bpe import BYTE, CONTROL, NORMAL, UNKNOWN
from modtok.errors import DataError, UnknownLanguageError
from modtok.progress import bar as progress_bar
from modtok.unigram import lattice
from modtok.unigram.model import SPACE, UnigramModel, normalize, quantize_scores
from modtok.unigram.units import as_units

LOGP_FLOOR = -100.0
BASE_PIECES = ["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(256)]
BASE_TYPES = [UNKNOWN, CONTROL, CONTROL] + [BYTE] * 256
# A unit of the joint corpus: a run of ▁ and what follows it up to the next ▁ (or a word
# with no ▁ before it), the split sentencepiece trains on.
WORD = regex.compile(f"{SPACE}+[^{SPACE}]*|[^{SPACE}]+")
_CROSSING = regex.compile(f"[^{SPACE}]{SPACE}")


# --------------------------------------------------------------------------
# 1. union


INITS = ("uniform", "average")


def union(models: Mapping[str, UnigramModel], init: str = "uniform") -> tuple[UnigramModel, dict[str, np.ndarray]]:
    """The merged model (initial probabilities ``init``, step 2) and ``{lang: sorted ids}``.

    >>> from modtok.unigram.train import train_unigram
    >>> m, ids = union({"x": train_unigram(["aaa ab abab"] * 20, 266)})
    >>> normal = m.types == NORMAL
    >>> bool(np.allclose(m.scores[normal], -np.log(normal.sum())))   # p0(v) = 1/|V|
    True
    """
    if not models:
        raise DataError("no language to merge")
    if init not in INITS:
        raise DataError(f"unknown EM initialisation {init!r} (known: {', '.join(INITS)})")
    pieces, types = list(BASE_PIECES), list(BASE_TYPES)
    index = {p: i for i, p in enumerate(pieces)}
    mass: list[float] = [0.0] * len(pieces)
    lang_ids = {}
    for lang in sorted(models):
        m = models[lang]
        own = list(range(len(BASE_PIECES)))
        for i in m.normal_ids.tolist():
            p = m.pieces[i]
            g = index.get(p)
            if g is None:
                g = index[p] = len(pieces)
                pieces.append(p)
                types.append(NORMAL)
                mass.append(0.0)
            elif types[g] != NORMAL:
                raise DataError(f"{lang}: normal piece {p!r} collides with a base piece")
            mass[g] += math.exp(m.scores[i])
            own.append(g)
        lang_ids[lang] = np.array(sorted(own), dtype=np.int64)
    mass = np.array(mass)
    normal = np.array(types) == NORMAL
    scores = np.zeros(len(pieces))
    if init == "uniform":
        scores[normal] = -np.log(normal.sum())
    else:
        scores[normal] = np.log(mass[normal] / mass[normal].sum())
    return UnigramModel(pieces, scores, types), lang_ids


# --------------------------------------------------------------------------
# units


def word_safe(model: UnigramModel) -> bool:
    """True if no normal piece has a non-``▁`` character followed by ``▁``, so
    cutting before such ``▁`` never cuts a piece."""
    return not any(_CROSSING.search(model.pieces[i]) for i in model.normal_ids.tolist())


def count_units(lines: Iterable[str], by_word: bool = True) -> Counter:
    """``Counter`` of the normalised units (words, or whole lines) of ``lines``.

    >>> sorted(count_units(["a b", "  b"]).items())   # "  b" -> "▁▁▁b"
    [('▁a', 1), ('▁b', 1), ('▁▁▁b', 1)]
    """
    counts: Counter = Counter()
    for line in lines:
        text = normalize(line)
        if by_word:
            counts.update(WORD.findall(text))
        elif text:
            counts[text] += 1
    return counts


# --------------------------------------------------------------------------
# 3. EM


@dataclass
class EMResult:
    """Log-likelihood of the model after each M-step (``loglik[0]``: initial model)."""

    logp: np.ndarray
    loglik: list[float]
    unk: list[float] = field(default_factory=list)  # expected unknown edges per E-step
    seconds: list[float] = field(default_factory=list)  # wall time of each E-step + M-step


def em(model: UnigramModel, units: Sequence[str], weights, max_iter: int = 5, tol: float = 1e-4,
       progress: bool = False) -> EMResult:
    """EM re-estimation of the normal pieces' log-probabilities on weighted units.

    ``max_iter`` M-steps at most, each preceded by an E-step; a last E-step
    scores the final model. Stops early once an M-step improves the
    log-likelihood by less than ``tol * |loglik|``. ``logp`` may contain -inf
    (pieces no unit can use).
    """
    lat = lattice.build_lattice(*lattice.encode_units(units), model.trie)
    weights = np.asarray(weights, dtype=np.float64)
    normal = model.types == NORMAL
    logp = np.where(normal, model.scores, -np.inf)
    unk_logp = model.unk_score()
    steps = progress_bar(range(max_iter), desc="EM", enabled=progress)
    result = EMResult(logp, [])
    for _ in steps:
        start = time.perf_counter()
        counts, unk, ll = lattice.forward_backward(lat, weights, logp, unk_logp)
        result.loglik.append(float(ll))
        result.unk.append(float(unk))
        if len(result.loglik) > 1 and result.loglik[-1] - result.loglik[-2] < tol * abs(result.loglik[-2]):
            return result
        logp = result.logp = m_step(counts, normal)
        result.seconds.append(time.perf_counter() - start)
        steps.set_postfix(loglik=f"{ll:.6g}", refresh=False)
    _, unk, ll = lattice.forward_backward(lat, weights, logp, unk_logp)
    result.loglik.append(float(ll))
    result.unk.append(float(unk))
    return result


def m_step(counts: np.ndarray, normal: np.ndarray) -> np.ndarray:
    """``log p(v) = log E[c(v)] - log Σ E[c(v')]`` over the normal pieces (-inf elsewhere)."""
    with np.errstate(divide="ignore"):
        return np.where(normal, np.log(counts) - np.log(counts[normal].sum()), -np.inf)


def final_model(model: UnigramModel, logp: np.ndarray) -> UnigramModel:
    """``model`` with the EM log-probabilities, floored and quantised (it shares
    ``model``'s trie: the pieces are the same)."""
    normal = model.types == NORMAL
    scores = np.where(normal, quantize_scores(np.maximum(logp, LOGP_FLOOR)), 0.0)
    out = UnigramModel(model.pieces, scores, model.types)
    out.__dict__["trie"] = model.trie  # cached_property slot
    return out


@dataclass
class MergedUnigram:
    """The merged model, each language's sub-vocabulary and the EM trace."""

    model: UnigramModel
    lang_to_ids: dict[str, np.ndarray]
    loglik: list[float]
    n_units: int
    n_words: float  # units weighted by frequency
    em_seconds: list[float] = field(default_factory=list)  # wall time of each EM iteration

    def modular(self):
        """The :class:`modtok.artifacts.modular.ModularTokenizer` of the merged model."""
        from modtok.artifacts.modular import ModularTokenizer

        return ModularTokenizer(self.model.tokenizer_json(),
                                {lang: ids.tolist() for lang, ids in self.lang_to_ids.items()})

    def subvocab(self, langs) -> np.ndarray:
        """Sorted global ids of the union of ``langs``."""
        langs = [langs] if isinstance(langs, str) else list(langs)
        for lang in langs:
            if lang not in self.lang_to_ids:
                raise UnknownLanguageError(lang, self.lang_to_ids)
        return np.unique(np.concatenate([self.lang_to_ids[lang] for lang in langs]))


def merge_unigram(models: Mapping[str, UnigramModel], corpus: Mapping[str, Sequence[str] | Mapping[str, int]],
                  max_iter: int = 5, tol: float = 1e-4, progress: bool = False,
                  init: str = "uniform") -> MergedUnigram:
    """Algorithm 1: union of the languages' pieces, EM on their joint corpus.

    ``corpus`` must hold (non-empty) text for exactly the languages of ``models``: each
    language's lines, or its ``Counter`` of units (:mod:`modtok.unigram.units`; the same
    model as from the lines it was counted from); ``init`` is the starting distribution
    (``"uniform"``, Algorithm 1 line 3, or ``"average"``; module docstring).
    """
    for lang in corpus:
        if lang not in models:
            raise UnknownLanguageError(lang, models)
    for lang in models:
        if lang not in corpus:
            raise UnknownLanguageError(lang, corpus)
    model, lang_ids = union(models, init)
    by_word = word_safe(model)
    counts: Counter = Counter()
    for lang in sorted(corpus):
        text = corpus[lang]
        if by_word:
            lang_units = as_units(text)
        elif isinstance(text, Mapping):
            raise DataError(f"language {lang!r}: a piece of the merged vocabulary crosses a word start, so EM "
                            "needs whole lines; it was given unit counts")
        else:
            lang_units = count_units([line for line in text if line.strip()], by_word=False)
        if not lang_units:
            raise DataError(f"language {lang!r} has an empty corpus")
        counts.update(lang_units)
    units = sorted(counts)  # sorted: the result does not depend on corpus order
    weights = np.array([counts[u] for u in units], dtype=np.float64)
    res = em(model, units, weights, max_iter, tol, progress)
    return MergedUnigram(final_model(model, res.logp), lang_ids, res.loglik, len(units), float(weights.sum()),
                         res.seconds)
