"""Which subtokenizer tokenizes a batch: Mono-only, Samp_Full(p), Samp_Sub_n(n, p).

Every batch is in one language ``L``, drawn from the training mixture. The
scheme then picks the set of languages whose subtokenizer encodes the batch
(and whose ids form the softmax of the restricted loss):

=================  =========================================================
``mono()``         always ``{L}`` (Mono-only)
``samp_full(p)``   the full tokenizer with probability p, else ``{L}``
``samp_sub(n, p)`` with probability p ``{L}`` plus ``n`` other languages drawn
                   without replacement, each with probability proportional to
                   its weight in the training mixture (§6.3), else ``{L}``
=================  =========================================================

``p`` is the paper's (App. D.2): "the probability of sampling the full
tokenizer during training", so ``samp_full(1.0)`` trains with the full
tokenizer only and ``samp_full(0.0)`` is Mono-only; for Samp_Sub_n it is
likewise the probability of the larger (n + 1)-language union. (Before
checkpoint format ``modtok-lm-2`` p was the own-language probability, 1 - p.)

Draws are a pure function of ``(seed, step)``: ``np.random.default_rng([seed,
step])``, so the data position to checkpoint is just the step, every process of
a data-parallel run draws the same language and subtokenizer, and a resumed run
draws exactly what an uninterrupted one would have.

>>> s = SubtokenizerSampler(samp_sub(1, p=1.0), {"eng": 0.7, "deu": 0.2, "fra": 0.1}, seed=0)
>>> d = s.draw(3)
>>> d.lang in d.langs and len(d.langs) == 2
True
>>> SubtokenizerSampler(mono(), {"eng": 1.0}, seed=0).draw(0)
Draw(lang='eng', langs=('eng',))
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass

import numpy as np

from modtok.errors import DataError, SchemeError
from modtok.options import LM_SAMPLING


@dataclass(frozen=True)
class Scheme:
    """``kind`` is "mono", "samp_full" or "samp_sub"; ``p`` the probability of the full tokenizer
    (Samp_Full) or of the own + ``n`` union (Samp_Sub_n), 0 for Mono-only; ``n`` extra languages."""

    kind: str
    p: float = 0.0
    n: int = 0

    def __post_init__(self):
        if self.kind not in LM_SAMPLING:
            raise SchemeError(f"unknown sampling scheme {self.kind!r} ({', '.join(LM_SAMPLING)})")
        if not 0.0 <= self.p <= 1.0:
            raise SchemeError(f"{self.kind}: probability p={self.p} outside [0, 1]")
        if self.kind == "samp_sub" and self.n < 1:
            raise SchemeError(f"samp_sub needs n >= 1 extra languages, got n={self.n}")
        if self.kind == "mono" and (self.p != 0.0 or self.n != 0):
            raise SchemeError(f"mono never samples another tokenizer: p and n must be 0, got p={self.p}, n={self.n}")

    @property
    def name(self) -> str:
        """The paper's name: ``Mono-only``, ``Samp_Full(0.5)``, ``Samp_Sub_2(0.5)``."""
        if self.kind == "mono":
            return "Mono-only"
        if self.kind == "samp_full":
            return f"Samp_Full({self.p:g})"
        return f"Samp_Sub_{self.n}({self.p:g})"

    def to_dict(self) -> dict:
        return asdict(self)


def mono() -> Scheme:
    return Scheme("mono", 0.0, 0)


def samp_full(p: float = 0.5) -> Scheme:
    return Scheme("samp_full", p, 0)


def samp_sub(n: int = 2, p: float = 0.5) -> Scheme:
    return Scheme("samp_sub", p, n)


def default_mixture(langs, english: str = "eng_Latn", english_share: float = 0.7) -> dict[str, float]:
    """``english_share`` for English, the rest split equally; uniform when English is absent.

    >>> default_mixture(["eng_Latn", "deu_Latn", "fra_Latn"])
    {'eng_Latn': 0.7, 'deu_Latn': 0.15, 'fra_Latn': 0.15}
    """
    langs = list(dict.fromkeys(langs))
    if not langs:
        raise DataError("a language mixture needs at least one language")
    if english not in langs or len(langs) == 1:
        return {lang: 1.0 / len(langs) for lang in langs}
    rest = (1.0 - english_share) / (len(langs) - 1)
    return {lang: (english_share if lang == english else round(rest, 12)) for lang in langs}


def normalize_mixture(mixture: Mapping[str, float]) -> dict[str, float]:
    """Weights divided by their sum; languages with weight 0 are dropped."""
    if not mixture or any(w < 0 for w in mixture.values()) or sum(mixture.values()) <= 0:
        raise SchemeError(f"mixture weights must be non-negative with a positive sum, got {dict(mixture)}")
    z = float(sum(mixture.values()))
    return {lang: float(w) / z for lang, w in mixture.items() if w > 0}


@dataclass(frozen=True)
class Draw:
    """The batch language and the subtokenizer languages (``None`` = the full tokenizer)."""

    lang: str
    langs: tuple[str, ...] | None


class SubtokenizerSampler:
    """Draws ``Draw(lang, langs)`` for a step; stateless apart from its seed."""

    def __init__(self, scheme: Scheme, mixture: Mapping[str, float], seed: int):
        self.scheme = scheme
        self.mixture = normalize_mixture(mixture)
        self.seed = int(seed)
        self._langs = list(self.mixture)
        self._p = np.array([self.mixture[lang] for lang in self._langs])
        if scheme.kind == "samp_sub" and len(self._langs) - 1 < scheme.n:
            raise SchemeError(
                f"{scheme.name} needs {scheme.n} other languages with positive weight; "
                f"the mixture has {len(self._langs)} in all"
            )

    def draw(self, step: int) -> Draw:
        rng = np.random.default_rng([self.seed, int(step)])
        i = int(rng.choice(len(self._langs), p=self._p))
        lang = self._langs[i]
        if self.scheme.kind == "mono" or not rng.random() < self.scheme.p:  # p: probability of the larger tokenizer
            return Draw(lang, (lang,))
        if self.scheme.kind == "samp_full":
            return Draw(lang, None)
        others = [j for j in range(len(self._langs)) if j != i]
        w = self._p[others] / self._p[others].sum()
        extra = rng.choice(others, size=self.scheme.n, replace=False, p=w)
        return Draw(lang, tuple(sorted([lang] + [self._langs[j] for j in extra])))

    def state_dict(self) -> dict:
        """What fixes the draws (the position is the step, stored by the trainer)."""
        return {"scheme": self.scheme.to_dict(), "mixture": dict(self.mixture), "seed": self.seed}
