"""Beyond the paper: the AdaptMix feedback loop on sequential BPE's per-language budgets.

Sequential BPE (:func:`modtok.bpe.sequential.train_sequential`) gives each
language a sub-vocabulary of k_l tokens (256 bytes included). Here the
*budgets*, not the data, are the mixture: m_l = (k_l − 256) / (K − 256·n)
under a fixed total K = Σ k_l. Each iteration trains, measures every
extracted subtokenizer's ``target`` on dev text and applies Eqs. 1–5
(:mod:`modtok.mixture.update`) to the budgets. Iteration 0 is the uniform
budget k_l = K / n.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from modtok.errors import BudgetError, MixtureError, UnknownLanguageError
from modtok.mixture.dev import DevSet, mean
from modtok.mixture.sizes import uniform
from modtok.mixture.update import adaptmix_update, allocate, check_momentum
from modtok.text.pretokenize import DEFAULT_SCHEME

TARGETS = ("fertility", "premium")


@dataclass(frozen=True)
class BudgetStep:
    """One iteration: the budgets ``k`` it trained with, each subtokenizer's
    ``score`` on dev text, and their unweighted mean."""

    iteration: int
    k: dict[str, int]
    score: dict[str, float]
    mean_score: float


@dataclass
class BudgetRun:
    """What :func:`adaptive_budgets` did: its languages (in training order), the
    ``target`` it fed back, the total K, and one :class:`BudgetStep` per iteration."""

    langs: list[str]
    target: str
    total_k: int
    steps: list[BudgetStep] = field(default_factory=list)


def adaptive_budgets(
    counts_by_lang: Mapping[str, Counter],
    total_k: int,
    iterations: int,
    mu: float,
    eps: float,
    dev: Mapping[str, Sequence[str]],
    *,
    target: str = "fertility",
    pivot: str = "eng_Latn",
    f_best: float | str = 1.0,
    clamp_delta: bool = False,
    order: Sequence[str] | None = None,
    scheme: str = DEFAULT_SCHEME,
) -> BudgetRun:
    """Iterate sequential-BPE budgets on each subtokenizer's dev ``target``.

    ``"fertility"`` (tokens per whitespace word; for a script written without
    spaces, per whitespace word of a spaced pivot's parallel dev line:
    :class:`~modtok.mixture.dev.DevSet`, which refuses dev text that cannot give it) or ``"premium"`` (tokens for the same
    content relative to the ``pivot`` language's own subtokenizer; needs
    parallel dev text, and f_best = 1.0 is then parity). ``scheme`` is the
    pre-tokenizer sequential BPE trains with; ``counts_by_lang`` must be cut by it.
    ``f_best`` and ``clamp_delta`` are :func:`~modtok.mixture.update.adaptmix_update`'s
    (a premium below parity gives a negative δ unless ``clamp_delta``).

    >>> from collections import Counter
    >>> counts = {"x_Latn": Counter({"abab": 9, "ab": 3}), "y_Latn": Counter({"cdcdcd": 7, "cd": 2})}
    >>> dev = {"x_Latn": ["abab"], "y_Latn": ["cdcdcd"]}
    >>> run = adaptive_budgets(counts, 2 * 256 + 4, 2, 0.5, 0.1, dev, scheme="whitespace")
    >>> run.steps[0].score            # two merges each: abab is one token, cdcdcd two (cdcd cd)
    {'x_Latn': 1.0, 'y_Latn': 2.0}
    >>> run.steps[1].k                # shares (0.29, 0.71) of the 4 free tokens: 1 and 3
    {'x_Latn': 257, 'y_Latn': 259}
    """
    from modtok.bpe.sequential import check_order, train_sequential

    check_momentum(mu, eps)
    if target not in TARGETS:
        raise MixtureError(f"target must be 'fertility' or 'premium', got {target!r}")
    langs = check_order(counts_by_lang, order)
    free = total_k - 256 * len(langs)
    if free < len(langs):
        raise BudgetError(f"total vocabulary K={total_k} leaves fewer than one token per language "
                          f"above the 256 bytes of each of {len(langs)} subtokenizers")
    devset = DevSet(dev, langs)  # without spaces: fertility per word of a spaced pivot, or refused
    if target == "premium" and pivot not in langs:
        raise UnknownLanguageError(pivot, langs)
    mixture, run = uniform(langs), BudgetRun(langs, target, total_k)
    for it in range(iterations):
        extra = allocate(mixture, free)
        k = {lang: 256 + extra[lang] for lang in langs}
        tok = train_sequential(counts_by_lang, k, order=langs, scheme=scheme).modular()
        subs = {lang: tok.subtokenizer([lang]) for lang in langs}
        if target == "fertility":
            score = {lang: devset.fertility(subs[lang], [lang])[lang] for lang in langs}
        else:
            tokens = {lang: devset.token_totals(subs[lang], [lang])[lang] for lang in langs}
            score = {lang: tokens[lang] / tokens[pivot] for lang in langs}
        run.steps.append(BudgetStep(it, k, score, mean(score)))
        mixture = adaptmix_update(score, mixture, mu=mu, eps=eps, f_best=f_best, clamp_delta=clamp_delta)
    return run
