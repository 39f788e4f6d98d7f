"""AdaptMix: adaptive tokenizer-training mixtures, and the baseline mixtures.

"The Art of Breaking Words: Rethinking Multilingual Tokenizer Design"
(Thakur et al. 2025, arXiv:2508.06533), §3.4, §4.3 and App. A.2. A tokenizer
is trained on a mixture of languages, each language's *fertility* (tokens per
whitespace word; for a script without spaces, per word of a spaced translation)
is measured on a dev set, and the next mixture moves towards the languages that
fragment most. One concern per module:

- :mod:`~modtok.mixture.update`   the update (Eqs. 1-4, 7) and the allocation (Eq. 5, cap or repeat)
- :mod:`~modtok.mixture.sizes`    uniform / natural (published sizes, temperature) / skewed mixtures
- :mod:`~modtok.mixture.pool`     the one sampler: a prefix of one fixed shuffle per language, split once
- :mod:`~modtok.mixture.trainers` the trainer protocol and registry (HF BPE, modtok BPE, sentencepiece)
- :mod:`~modtok.mixture.dev`      dev fertility (defined in :mod:`modtok.evaluation.metrics`), made cheap;
                                  scripts without spaces per word of a spaced pivot's parallel line
- :mod:`~modtok.mixture.loop`     :class:`History` (and when no mixture can change it) and the resumable loop :func:`adaptmix`
- :mod:`~modtok.mixture.budgets`  beyond the paper: adaptive sequential-BPE budgets

Every public name is re-exported here (``from modtok import mixture; mixture.adaptmix(...)``).

>>> m = adaptmix_update({"a": 3.0, "b": 2.0, "c": 1.0}, uniform(["a", "b", "c"]), mu=0.5, eps=0.5)
>>> allocate(m, 10)                                  # shares 5/12, 1/3, 1/4 of T = 10
{'a': 4, 'b': 3, 'c': 3}
"""

from modtok.mixture.budgets import TARGETS, BudgetRun, BudgetStep, adaptive_budgets
from modtok.mixture.dev import PIVOT, SPACED_BASIS, DevSet, LinePieces, mean, pipeline_key, pivot_problem, spaceless_pivot
from modtok.mixture.loop import EXCLUDED_SPACELESS, History, adaptmix, fertility_languages, step, train_on
from modtok.mixture.pool import Sample, TextPool
from modtok.mixture.sizes import INDICCORP_TOKENS_M, PAPER_LANGUAGES, missing_sizes, natural, skewed, uniform
from modtok.mixture.trainers import (
    TAKES_SCHEME,
    TRAINERS,
    Trainer,
    hf_bpe,
    make_trainer,
    modtok_bpe,
    sp_bpe,
    sp_unigram,
)
from modtok.mixture.update import (
    POLICIES,
    Mixture,
    adaptmix_update,
    allocate,
    check_momentum,
    check_policy,
    normalise,
    round_to_total,
)

__all__ = [
    "EXCLUDED_SPACELESS", "INDICCORP_TOKENS_M", "PAPER_LANGUAGES", "PIVOT", "POLICIES", "SPACED_BASIS", "TAKES_SCHEME",
    "TARGETS", "TRAINERS",
    "BudgetRun", "BudgetStep", "DevSet", "History", "LinePieces", "Mixture", "Sample", "TextPool", "Trainer",
    "adaptive_budgets", "adaptmix", "adaptmix_update", "allocate", "check_momentum", "check_policy",
    "fertility_languages", "hf_bpe", "make_trainer", "mean", "missing_sizes", "modtok_bpe", "natural", "normalise",
    "pipeline_key", "pivot_problem", "round_to_total", "skewed", "spaceless_pivot", "sp_bpe", "sp_unigram", "step", "train_on", "uniform",
]
