"""The AdaptMix study (notebook 06): "The Art of Breaking Words" on our data.

Thakur et al. 2025 (arXiv:2508.06533), §3.4, §4.3, App. A.2. The algorithm
is :mod:`modtok.mixture`; this module wires it to data and to the paper's
evaluation:

- :func:`load_data`: the paper's 16 languages as the project serves them
  (:func:`modtok.studies.languages.choose`, :func:`modtok.text.data.default_corpora`):
  training text, a **dev** split for fertility inside the loop and for choosing
  μ and ε, and the test split (FLORES-200 **devtest**) for the tables; on the
  wordfreq default, dev is another held-out sample of the same lists;
- :class:`AdaptMixStudy`: one sampler over the training text, cached runs
  (:meth:`~AdaptMixStudy.run`), the choice of μ and ε **on dev**
  (:meth:`~AdaptMixStudy.choose`), fixed-mixture baselines
  (:meth:`~AdaptMixStudy.baseline`: natural, natural τ = 3.3, skewed) and the
  rows of the paper's tables: Table 5 (devtest fertility, and the per-language
  change AdaptMix vs UniMix beside the paper's, repeated over :data:`SEEDS` seeds of the
  sampler: :meth:`~AdaptMixStudy.over_seeds`), Table 7 (parity: each language's fertility
  over English's, with intervals over devtest lines, and the Gini of token totals), the
  App. A.2 f_best ablation, and — beyond the
  paper — adaptive budgets for sequential BPE; :meth:`~AdaptMixStudy.explore`
  is the widget's function.

**No hyper-parameter sees the test split.** The study keeps the test split
sealed: :attr:`AdaptMixStudy.devtest` (and every method that reads it) raises
:class:`~modtok.errors.UsageError` until :meth:`~AdaptMixStudy.choose` has fixed
μ and ε on dev, and once devtest has been read a new choice is refused.

**Which iteration is AdaptMix.** The paper iterates "until the optimal mixture
was reached" (§3.4): its AdaptMix is the converged — here the last — iteration
(:data:`ADAPT`). The iteration with the lowest mean dev fertility (iteration 0,
i.e. UniMix, included) is a selection the paper does not make; it is shown only
as a labelled addition (:data:`SELECTED`). Every comparison uses the same
trainer, vocabulary, pre-tokenizer ``scheme`` and total budget T; AdaptMix's
iteration 0 is the uniform mixture, so it *is* UniMix.

**Languages written without spaces** take part, with the fertility of
:func:`modtok.evaluation.metrics.pivot_fertility` (tokens per word of a spaced
language's parallel line), when dev and test are parallel with a spaced language;
otherwise :func:`spaceless_problem` says why, and the study leaves them out only when
told to (``exclude_spaceless``), naming them in :attr:`AdaptMixStudy.excluded`.

**Seeds.** The sampler (:class:`modtok.mixture.TextPool`: a seeded shuffle per language,
budgets are prefixes of it) is the run's randomness: a seed changes which lines every
allocation takes, so the tokenizers. The chosen run is repeated over :data:`SEEDS` seeds
(μ and ε stay those chosen on dev at the study's seed), and AdaptMix vs UniMix is reported
as the mean over seeds of the per-seed, paired change with a Student-t interval over seeds
(:func:`modtok.evaluation.stats.t_interval`; why t: :class:`SeedRuns`).

**When the mixture cannot change** (the budget covers all the text: every mixture
trains on all of it), UniMix, AdaptMix and the baselines are one tokenizer:
:meth:`AdaptMixStudy.unchanging` says so, and :meth:`AdaptMixStudy.paper_vs_here`
calls the comparisons between them not comparable rather than holding or not.

>>> change_pct({"a": 2.0, "b": 4.0}, {"a": 1.9, "b": 4.2})     # per language, AdaptMix vs UniMix
{'a': -5.000000000000004, 'b': 5.000000000000004}
"""

from __future__ import annotations

import math
import resource
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import numpy as np

from modtok import mixture
from modtok.cache import AHEAD, Results, ahead, fingerprint
from modtok.errors import MissingDevTextError, MixtureError, UsageError
from modtok.evaluation import metrics, stats
from modtok.studies import languages, paper_vs_here
from modtok.studies.contract import Paper, Study
from modtok.text import data
from modtok.text.pretokenize import DEFAULT_SCHEME, count_by_language
from modtok.text.training import TRAINING_SCHEME

BASELINES = ("natural", "natural τ=3.3", "skewed")
SEEDS = 3  # seeds of the sampler the chosen run is repeated over (the study's seed and the next ones)
WORDFREQ_DEV_LINES = 300  # dev lines per language on the wordfreq default
MIN_LANGUAGES = 3  # fewer of the preferred languages than this: topped up from the data's others
UNI = "UniMix"
ADAPT = "AdaptMix"  # the paper's: the last iteration
SELECTED = "AdaptMix, dev-selected (addition)"  # the iteration with the lowest mean dev fertility
TABLE5_KEY = "table5_"  # paper_figures.toml keys [adaptmix.table5_<lang>] (and table5_mean): Table 5's changes
CRITERION = "lowest mean dev fertility at the last iteration (the iteration reported as AdaptMix)"
ITERATION_CLAIMS = ("most_fragmented", "spread")  # with the table5_* keys: AdaptMix vs UniMix
BASELINE_CLAIMS = ("vs_natural", "vs_skewed", "abstract_vs_natural")  # AdaptMix vs a fixed mixture
SEEDED_BASELINES = ("natural", "skewed")  # the fixed mixtures those claims compare with, repeated over seeds


def label(lang: str) -> str:
    """``"Hindi (hin_Deva)"``: a language as the tables name it.

    >>> label("hin_Deva")
    'Hindi (hin_Deva)'
    """
    return f"{data.lang_name(lang)} ({lang})"


def left_out(excluded: Mapping[str, str], name=str) -> str:
    """``"left out: a, b (why); c (why else)"``: the languages an AdaptMix run left out,
    grouped by reason (``name`` writes a language), or ``"none left out"``.

    >>> left_out({"tha_Thai": "no spaces", "zho_Hans": "no spaces"}), left_out({})
    ('left out: tha_Thai, zho_Hans (no spaces)', 'none left out')
    """
    by_reason: dict[str, list[str]] = {}
    for lang, why in excluded.items():
        by_reason.setdefault(why, []).append(name(lang))
    return "left out: " + "; ".join(f"{', '.join(langs)} ({why})" for why, langs in by_reason.items()) \
        if by_reason else "none left out"


def change_pct(before: Mapping[str, float], after: Mapping[str, float]) -> dict[str, float]:
    """``100 · (after − before) / before`` per key of ``before`` (the % change of Table 5)."""
    return {k: 100.0 * (after[k] - b) / b for k, b in before.items()}


@dataclass
class Data:
    """The study's text: ``train`` (the sampler draws from it), ``dev`` (fertility
    in the loop and the choice of μ, ε; ``None`` when the data has no dev split,
    ``dev_label`` then says what is missing), ``test`` (the tables: sealed by
    :class:`AdaptMixStudy` until the choice), whether dev/test are ``parallel``
    and a sentence saying where it all came from."""

    langs: list[str]
    train: dict[str, list[str]]
    dev: dict[str, list[str]] | None
    test: dict[str, list[str]] | None
    parallel: bool
    source: str
    dev_label: str = ""
    eval_label: str = ""
    choice: languages.Choice | None = None  # which languages were asked for, and why any is not used


def load_data(preferred: Sequence[str] = mixture.PAPER_LANGUAGES, train_chars: int | None = None,
              eval_lines: int | None = None, seed: int = 0, min_langs: int = MIN_LANGUAGES) -> Data:
    """The languages of ``preferred`` the project has (same-script stand-ins on the
    wordfreq default), with :func:`modtok.text.data.default_corpora`'s training
    and evaluation (devtest) text, and its dev split.

    ``train_chars`` caps each language's training text (``default_corpora``'s
    default is 2M characters; every pool language has fewer than 3M, so 3M is
    all of it); ``eval_lines`` caps the dev and devtest lines. Dev is the
    evaluation text's dev split (:attr:`~modtok.text.data.Corpora.has_dev`: FLORES-200
    dev, or ``$MODTOK_EVAL/dev``); on the wordfreq default, whose evaluation text is
    itself a held-out sample, another sample (seed + 1) of :data:`WORDFREQ_DEV_LINES`
    lines; otherwise (evaluation text without a dev split, or lines held out of the
    training text) ``dev`` is ``None`` and nothing is put in its place. The languages are
    :func:`modtok.studies.languages.choose`'s for the wish list ``preferred`` (a user's
    manifest: its own), topped up to ``min_langs`` (:data:`MIN_LANGUAGES`) from the data's
    others: a mixture of one or two is thin.
    """
    choice = languages.choose(preferred, min_langs, fewest=1)
    corpora = data.default_corpora(choice.used, train_chars=train_chars, eval_lines=eval_lines, seed=seed)
    choice.keep_only(corpora.languages, "no training or evaluation text")
    langs = corpora.languages
    if corpora.has_dev:
        dev = corpora.dev(max_lines=eval_lines)
        kind = corpora.eval_set.kind
        aligned = len({len(lines) for lines in dev.values()}) == 1
        dev_label = f"{kind} dev ({len(dev[langs[0]])} {'parallel ' if aligned else ''}lines)"
    elif corpora.eval_set is None and data.training_source() == "wordfreq":
        dev = data.load_wordfreq(langs, n_lines=WORDFREQ_DEV_LINES, seed=seed + 1)
        dev_label = f"another wordfreq sample ({WORDFREQ_DEV_LINES} lines per language)"
    else:
        dev, dev_label = None, f"no dev split: the evaluation text ({corpora.eval_label}) has none"
    return Data(langs, corpora.train, dev, corpora.eval, corpora.parallel_eval,
                corpora.source + "; dev (the loop and the choice of μ, ε): " + dev_label, dev_label,
                corpora.eval_label, choice)


def spaceless_problem(d: Data) -> str | None:
    """Why the languages of ``d`` written without spaces cannot take part in AdaptMix (their
    dev or test text is not parallel with a spaced language: :func:`modtok.mixture.pivot_problem`),
    or ``None`` when they can (or there is none, or no dev split to run on).

    >>> d = Data(["eng_Latn", "tha_Thai"], {}, {"eng_Latn": ["a b"], "tha_Thai": ["ab"]},
    ...          {"eng_Latn": ["a b"], "tha_Thai": ["ab", "c"]}, False, "toy")
    >>> spaceless_problem(d)
    'the test text is not parallel (lines: tha_Thai 2, eng_Latn 1)'
    """
    spaceless = [lang for lang in d.langs if metrics.written_without_spaces(lang)]
    if not spaceless or d.dev is None:
        return None
    splits = {"dev": d.dev, "test": d.test}
    return next((problem for name, split in splits.items() if split is not None
                 for problem in [mixture.pivot_problem(split, spaceless, f"the {name} text")] if problem), None)


@dataclass(frozen=True)
class Unchanging:
    """Every AdaptMix iteration trained on the same text (``reason``:
    :meth:`modtok.mixture.History.unchanging`), so UniMix and AdaptMix are one tokenizer;
    ``baselines``: the fixed mixtures trained on that same text too."""

    reason: str
    baselines: bool

    @property
    def statement(self) -> str:
        """The sentence a report shows instead of comparing the same tokenizer with itself."""
        same = f"UniMix, AdaptMix and the baselines ({', '.join(BASELINES)})" if self.baselines else "UniMix and AdaptMix"
        return f"The mixture cannot change what is trained on: {self.reason}. {same} are one tokenizer, one result."

    @property
    def not_comparable(self) -> paper_vs_here.NotComparable:
        """The verdict of a claim that compares them."""
        what = ("the budget covers all the text, every mixture is the same tokenizer" if self.baselines
                else "every AdaptMix iteration trained on the same text, UniMix and AdaptMix are the same tokenizer")
        return paper_vs_here.NotComparable(what)


def _lowest(parity: Parity, names: Sequence[str]) -> str:
    """The tokenizer of ``names`` with the lowest mean parity (ties: the first)."""
    return min(names, key=lambda name: parity.intervals[f"{name}|mean"][0])


def baseline_mixture(name: str, langs: Sequence[str]) -> mixture.Mixture:
    """A fixed mixture of :data:`BASELINES`: ``"natural"`` (IndicCorp sizes; a
    language without a published size gets the smallest known one), ``"natural
    τ=3.3"`` (the same, temperature-smoothed) or ``"skewed"`` (English and Hindi
    half of the budget: the EnHiMix analog).

    >>> baseline_mixture("skewed", ["eng_Latn", "hin_Deva", "tam_Taml", "tel_Telu"])["tam_Taml"]
    0.25
    """
    if name == "natural":
        return mixture.natural(langs, missing="floor")
    if name == "natural τ=3.3":
        return mixture.natural(langs, tau=3.3, missing="floor")
    if name == "skewed":
        return mixture.skewed(langs)
    raise MixtureError(f"unknown baseline mixture {name!r} (known: {', '.join(BASELINES)})")


def paper_table5(claims: Sequence[paper_vs_here.Claim] | None = None) -> dict[str, float]:
    """The paper's Table 5 change per language (%), from ``paper_figures.toml``'s
    ``[adaptmix.table5_<lang>]`` claims, and the mean's (``table5_mean``): ``{lang
    or "mean": figure}``, for every language the table prints (changes derived from its cells).

    >>> claim = paper_vs_here.Claim("adaptmix", "table5_hin_Deva", "", "", 5.9, "%", "same sign", "")
    >>> paper_table5([claim])
    {'hin_Deva': 5.9}
    """
    claims = paper_vs_here.claims("adaptmix") if claims is None else claims
    return {c.key[len(TABLE5_KEY):]: c.paper for c in claims
            if c.key.startswith(TABLE5_KEY) and isinstance(c.paper, (int, float))}


def _per_tokenizer(tokenizers: Mapping[str, object], measure) -> dict:
    """``{name: measure(tokenizer)}``, measuring each distinct tokenizer object once."""
    done: dict[int, object] = {}
    for tok in tokenizers.values():
        if id(tok) not in done:
            done[id(tok)] = measure(tok)
    return {name: done[id(tok)] for name, tok in tokenizers.items()}


def _spread(values: Mapping[str, float]) -> float:
    """Highest minus lowest value: the fertility range across languages."""
    return max(values.values()) - min(values.values())


def _measured(values: Sequence[float], over: str = "seeds") -> float | paper_vs_here.Measured:
    """The mean of per-seed values with its t-interval (:func:`modtok.evaluation.stats.t_interval`),
    or the one value of a single seed (a point: no interval can be had from it).

    >>> _measured([1.0, 2.0, 3.0]).shown(), _measured([0.5])
    ('[-0.4841, 4.484] over seeds', 0.5)
    """
    if len(values) == 1:
        return float(values[0])
    mean, lo, hi = stats.t_interval(values)
    return paper_vs_here.Measured(mean, min(lo, mean), max(hi, mean), over)  # min/max: float rounding at sd 0


def _negated(m: float | paper_vs_here.Measured) -> float | paper_vs_here.Measured:
    """``-m``, its interval flipped.

    >>> _negated(paper_vs_here.Measured(1.0, 0.5, 2.0, "seeds"))
    Measured(value=-1.0, lo=-2.0, hi=-0.5, over='seeds')
    """
    if isinstance(m, paper_vs_here.Measured):
        return paper_vs_here.Measured(-m.value, -m.hi, -m.lo, m.over)
    return -m


@dataclass(frozen=True)
class SeedRuns:
    """The chosen run (trainer, vocabulary, T, iterations, μ and ε) repeated over seeds of the
    sampler: ``fert[seed]`` is ``{UNI: {lang: devtest fertility}, ADAPT: {...}}`` of that seed's
    run, ``alloc[seed]`` the characters its last iteration allocated.

    The comparison is paired: both columns of a seed come from one run (AdaptMix's iteration 0
    is UniMix), so the per-seed change removes what the seed does to both. The interval is a
    Student-t interval over the seeds' changes (:func:`_measured`), not a bootstrap over
    (seed, language): the replicate of the method is a seed, and the languages of one run are
    one tokenizer's, not independent draws; the claim is about these languages' mean. A
    percentile bootstrap over 3 seeds has 10 distinct resamples and is too narrow.

    Hand case: two languages, three seeds; x changes by −4%, −2% and 0%, y not at all, so the
    mean fertility changes by −2%, −1% and 0%: the headline is −1% with the interval
    −1 ± 4.303 · 1 / √3, and x's change is −2 ± 4.303 · 2 / √3:

    >>> f = lambda u, a: {UNI: {"x": u, "y": 2.0}, ADAPT: {"x": a, "y": 2.0}}
    >>> r = SeedRuns((0, 1, 2), {0: f(2.0, 1.92), 1: f(2.0, 1.96), 2: f(2.0, 2.0)}, {})
    >>> [round(c, 6) for c in r.mean_changes()], r.headline().shown()
    ([-2.0, -1.0, 0.0], '[-3.484, 1.484] over seeds')
    >>> r.per_language()["x"].shown(), r.per_language()["y"]
    ('[-6.968, 2.968] over seeds', Measured(value=0.0, lo=0.0, hi=0.0, over='seeds'))
    """

    seeds: tuple[int, ...]
    fert: dict[int, dict[str, dict[str, float]]]
    alloc: dict[int, dict[str, int]]

    def changes(self) -> list[dict[str, float]]:
        """Per seed: each language's change (%), AdaptMix vs UniMix."""
        return [change_pct(self.fert[s][UNI], self.fert[s][ADAPT]) for s in self.seeds]

    def mean_changes(self) -> list[float]:
        """Per seed: the change (%) of the unweighted mean fertility, AdaptMix vs UniMix."""
        return [100.0 * (mixture.mean(self.fert[s][ADAPT]) / mixture.mean(self.fert[s][UNI]) - 1) for s in self.seeds]

    def headline(self) -> float | paper_vs_here.Measured:
        """The change of the mean fertility: its mean over seeds and t-interval."""
        return _measured(self.mean_changes())

    def per_language(self) -> dict[str, float | paper_vs_here.Measured]:
        """Each language's change: its mean over seeds and t-interval."""
        changes = self.changes()
        return {lang: _measured([c[lang] for c in changes]) for lang in changes[0]}

    def spread(self) -> float | paper_vs_here.Measured:
        """The change (%) of the fertility range across languages, AdaptMix vs UniMix: its mean
        over seeds and t-interval."""
        return _measured([100.0 * (_spread(self.fert[s][ADAPT]) / _spread(self.fert[s][UNI]) - 1) for s in self.seeds])

    def versus(self, baseline: str) -> float | paper_vs_here.Measured:
        """The change (%) of the mean fertility, AdaptMix vs the fixed mixture ``baseline``
        (trained on the same seed's sample, so paired as UniMix is): mean over seeds, t-interval.

        >>> f = lambda nat, a: {UNI: {"x": 2.0}, ADAPT: {"x": a}, "natural": {"x": nat}}
        >>> r = SeedRuns((0, 1, 2), {0: f(2.0, 1.9), 1: f(2.0, 1.8), 2: f(2.0, 1.7)}, {})
        >>> r.versus("natural").shown()                    # -5%, -10%, -15%: -10 ± 4.303 · 5 / √3
        '[-22.42, 2.421] over seeds'
        """
        return _measured([100.0 * (mixture.mean(self.fert[s][ADAPT]) / mixture.mean(self.fert[s][baseline]) - 1)
                          for s in self.seeds])


@dataclass(frozen=True)
class Parity:
    """Table 7's parity (App. A.3): each language's devtest fertility over English's under the
    same tokenizer, 1.0 for English. The paper's Table 7 is this ratio of its Table 3
    fertilities (Qwen's Hindi: 4.66 / 1.36 = 3.4265), not a token premium on parallel lines
    (tokens over English tokens for the same sentences, which divides out the words).
    ``values[tokenizer][lang]``; ``rows`` the table (per language, the mean over the
    non-English languages, the Gini of token totals); ``intervals`` the paired bootstrap
    over devtest lines (:func:`parity_intervals`) of every value and of AdaptMix's mean
    minus each other tokenizer's."""

    pivot: str
    values: dict[str, dict[str, float]]
    rows: list[dict]
    intervals: dict[str, tuple[float, float, float]]

    def measured(self, key: str) -> paper_vs_here.Measured:
        """``intervals[key]`` as a :class:`~modtok.studies.paper_vs_here.Measured` over lines (the
        percentile interval widened to hold the point, should a skewed bootstrap leave it out)."""
        value, lo, hi = self.intervals[key]
        return paper_vs_here.Measured(value, min(lo, value), max(hi, value), "lines")


def parity_intervals(tokens: Mapping[str, Mapping[str, Sequence[int]]], words: Mapping[str, Sequence[int]],
                     pivot: str, ref: str | None = None, n_boot: int = 1000, seed: int = 0) -> dict:
    """Parity and its paired bootstrap over lines (:func:`modtok.evaluation.stats.paired_bootstrap`):
    ``tokens[tokenizer][lang]`` and ``words[lang]`` per line of a parallel text (a language
    written without spaces passes its pivot's words); keys ``"<tokenizer>|<lang>"``,
    ``"<tokenizer>|mean"`` (over the languages other than ``pivot``) and, for ``ref``,
    ``"<ref>-<other>|mean"``. One draw of lines serves every value, so a difference sees
    the same lines on both sides; a replicate's totals are the lines' draw counts times
    the per-line columns (one matrix product, not a copy of every array per replicate).

    >>> out = parity_intervals({"t": {"en": [2, 2], "xx": [4, 2]}}, {"en": [2, 2], "xx": [2, 2]}, "en")
    >>> out["t|xx"][0], out["t|mean"][0]           # (6 / 4) / (4 / 4)
    (1.5, 1.5)
    """
    names, langs = list(tokens), list(words)
    cols = np.array([words[lang] for lang in langs] + [tokens[n][lang] for n in names for lang in langs],
                    np.float64).T  # (lines, columns)
    n, k, others = cols.shape[0], len(langs), [lang for lang in langs if lang != pivot]

    def statistic(s):
        drawn = s["line"].astype(np.int64)
        times = np.ones(n) if drawn.ndim == 1 else np.stack([np.bincount(r, minlength=n) for r in drawn])
        tot = times @ cols  # (..., columns): each column's total over the drawn lines
        out = {}
        for j, name in enumerate(names):
            fert = {lang: tot[..., k * (j + 1) + i] / tot[..., i] for i, lang in enumerate(langs)}
            for lang in langs:
                out[f"{name}|{lang}"] = fert[lang] / fert[pivot]
            out[f"{name}|mean"] = sum(out[f"{name}|{lang}"] for lang in others) / len(others)
        for name in names if ref is not None else ():
            if name != ref:
                out[f"{ref}-{name}|mean"] = out[f"{ref}|mean"] - out[f"{name}|mean"]
        return out

    return stats.paired_bootstrap({"line": np.arange(n)}, statistic, n_boot=n_boot, seed=seed)


@dataclass(frozen=True)
class MuEps:
    """μ and ε as chosen on dev: the pick, the ``rows`` of every candidate, the
    ``criterion`` and the ``dev`` text it was made on."""

    mu: float
    eps: float
    rows: list[dict] = field(compare=False)
    criterion: str = CRITERION
    dev: str = ""
    run: tuple = field(default=(), compare=False)  # (trainer, vocab, budget, iterations, f_best) of the choice


def closing_lines(choice: MuEps, hist: mixture.History, top: int = 2) -> list[str]:
    """What this run chose and how its mixture moved, as lines to print (the closing note:
    no number of it is typed in the notebook's prose): the choice of (μ, ε) among the
    candidates, how far each update moved the mixture, the iteration with the lowest mean dev
    fertility against the last one (the paper's AdaptMix), and the ``top`` languages that
    gained and lost the most of T.

    >>> rows = [{"μ": mu, "ε": 0.5, "mean dev fertility, UniMix": 2.0, "mean dev fertility, last it.": f,
    ...          "converged": c} for mu, f, c in ((0.3, 1.99, True), (0.5, 2.01, False))]
    >>> steps = [{"mixture": {"a": 0.5, "b": 0.5}, "mean_fertility": 2.0},
    ...          {"mixture": {"a": 0.6, "b": 0.4}, "mean_fertility": 1.98},
    ...          {"mixture": {"a": 0.65, "b": 0.35}, "mean_fertility": 1.99}]
    >>> h = mixture.History(["a", "b"], {}, steps, {"a": 0.66, "b": 0.34})
    >>> print("\\n".join(closing_lines(MuEps(0.3, 0.5, rows, dev="dev"), h, top=1)))
    the choice on dev: of 2 (μ, ε) candidates, (0.3, 0.5) has the lowest last-iteration mean dev fertility, 1.9900 (UniMix 2.0000); the candidates span 1.9900–2.0100 (-0.50% to +0.50%); 1 of 2 converged
    each update moved the mixture by (L1, share of T): 0.200, 0.100, 0.020
    mean dev fertility is lowest at iteration 1 (1.9800, -1.00% vs UniMix); the last, iteration 2 (AdaptMix): 1.9900 (-0.50%)
    the mixture moved most: a 50.00% -> 65.00% of T; b 50.00% -> 35.00% of T
    """
    last = [r["mean dev fertility, last it."] for r in choice.rows]
    uni = choice.rows[0]["mean dev fertility, UniMix"]
    pick = next(r for r in choice.rows if (r["μ"], r["ε"]) == (choice.mu, choice.eps))
    means = [s["mean_fertility"] for s in hist.steps]
    best, end = hist.best(), hist.last()
    first, final = hist.steps[0]["mixture"], hist.steps[-1]["mixture"]
    moved = sorted(hist.langs, key=lambda lang: final[lang] - first[lang])
    most = moved[::-1][:top] + [lang for lang in moved[:top] if lang not in moved[::-1][:top]]

    def pct(v: float) -> str:  # against UniMix, iteration 0
        return f"{100 * (v - means[0]) / means[0]:+.2f}%"

    return [f"the choice on {choice.dev}: of {len(choice.rows)} (μ, ε) candidates, ({choice.mu}, {choice.eps}) has "
            f"the lowest last-iteration mean dev fertility, {pick['mean dev fertility, last it.']:.4f} (UniMix "
            f"{uni:.4f}); the candidates span {min(last):.4f}–{max(last):.4f} ({100 * (min(last) - uni) / uni:+.2f}% "
            f"to {100 * (max(last) - uni) / uni:+.2f}%); {sum(r['converged'] for r in choice.rows)} of "
            f"{len(choice.rows)} converged",
            "each update moved the mixture by (L1, share of T): " + ", ".join(f"{m:.3f}" for m in hist.mixture_changes()),
            f"mean dev fertility is lowest at iteration {best} ({means[best]:.4f}, {pct(means[best])} vs UniMix); "
            f"the last, iteration {end} (AdaptMix): {means[end]:.4f} ({pct(means[end])})",
            "the mixture moved most: " + "; ".join(f"{data.lang_name(lang)} {first[lang]:.2%} -> {final[lang]:.2%} of T"
                                                  for lang in most)]


class AdaptMixStudy(Study):
    """AdaptMix runs and baselines on one :class:`Data`, and the paper's tables.

    One :class:`modtok.mixture.TextPool` (a fixed shuffle per language, split
    once) serves every run; :meth:`run` and :meth:`baseline` are cached on
    their arguments, so a widget recomputes only what a new setting needs.
    ``scheme`` is the pre-tokenizer of the BPE trainers and of sequential BPE.
    The test split is sealed until :meth:`choose` (see the module docstring).
    ``exclude_spaceless`` leaves the languages written without spaces out of every run
    and table (:attr:`excluded` names them with the reason, and :func:`spaceless_problem`'s
    when the data cannot measure them); by default they take part. ``seeds``: how many seeds
    of the sampler (``seed``, ``seed + 1``, ...) :meth:`over_seeds` repeats the chosen run over.
    """

    name, notebook = "adaptmix", "06_adaptmix"
    paper = Paper("adaptmix-art-of-breaking-words.txt", "The Art of Breaking Words (AdaptMix)")

    def __init__(self, d: Data, seed: int = 0, scheme: str = DEFAULT_SCHEME, exclude_spaceless: bool = False,
                 seeds: int = SEEDS):
        if isinstance(seeds, bool) or not isinstance(seeds, int) or seeds < 1:
            raise UsageError(f"seeds = {seeds!r}: the number of sampler seeds is an integer >= 1")
        self._test = d.test  # sealed: only self.devtest / self.test_lines() hand it out
        self.data, self.seed, self.scheme = replace(d, test=None), seed, scheme
        self.seeds, self._exclude_spaceless = tuple(range(seed, seed + seeds)), exclude_spaceless
        self._over_seeds: dict[tuple, SeedRuns] = {}
        self.langs, self.excluded = mixture.fertility_languages(d.langs, exclude_spaceless)
        problem = spaceless_problem(d) if self.excluded else None  # the reason they could not take part, if any
        self.excluded = {lang: f"{why}, since {problem}" if problem else why for lang, why in self.excluded.items()}
        self.pool = mixture.TextPool(d.train, seed=seed)
        self.choice: MuEps | None = None
        self._devtest: mixture.DevSet | None = None
        self._runs: dict[tuple, mixture.History] = {}
        # one DevSet per language tuple: its dev pre-token split (3.2 s for 16 x 997 FLORES lines at load 5) is
        # made once per kernel, not once per run (the grid's six runs and every widget move made it again)
        self._devsets: dict[tuple[str, ...], mixture.DevSet] = {}
        self._timed: dict[tuple, list[tuple[int, float]]] = {}  # (trainer, vocab, langs) -> (iterations, seconds)
        self._cached: dict[tuple, str] = {}  # run key -> when the run read back from the results cache was computed
        # the runs, baselines and budgets on disk too (modtok.cache), keyed on the text they read (train and
        # dev: the test split stays sealed) and this study's seed and scheme
        self.results = Results("adaptmix", (self.data.train, self.data.dev, seed, scheme))
        self._test_key: str | None = None  # the test split's fingerprint, taken once the seal is open
        self._tokenizer_keys: dict[int, tuple[object, str]] = {}  # id -> (tokenizer, its fingerprint)

    def _measured(self, what: str, tokenizers: Mapping[str, object], measure, *params) -> dict:
        """``{name: measure(tokenizer)}`` on the test split, each distinct tokenizer measured once
        and kept in the results cache, keyed on the test split and the tokenizer's JSON (fingerprinted
        once per object: ten deployed tokenizers take about 10 s, their measures minutes)."""
        if self._test_key is None:
            self._test_key = fingerprint(self.test_lines(), self.langs)

        def cached(tok):
            if id(tok) not in self._tokenizer_keys:
                self._tokenizer_keys[id(tok)] = (tok, fingerprint(tok))  # the object kept: its id stays its own
            return self.results.get(what, (self._test_key, self._tokenizer_keys[id(tok)][1], *params),
                                    lambda: measure(tok))
        return _per_tokenizer(tokenizers, cached)

    def languages_line(self) -> str:
        """The languages every run uses (how the fertility of those without spaces is
        measured) and every language of the data left out, with the reason."""
        spaceless = [lang for lang in self.langs if metrics.written_without_spaces(lang)]
        out = f"{len(self.langs)} language{'s' if len(self.langs) != 1 else ''}: {', '.join(map(label, self.langs))}"
        if spaceless and self.has_dev:
            pivot = mixture.spaceless_pivot(self.data.dev, spaceless)
            out += f" ({', '.join(spaceless)}: {mixture.SPACED_BASIS} of the parallel {pivot} line)"
        return f"{out}; {left_out(self.excluded, label)}"

    @property
    def has_dev(self) -> bool:
        """Whether the data has a dev split (AdaptMix and the choice of μ, ε need one)."""
        return self.data.dev is not None

    # ---- the seal

    @property
    def devtest(self) -> mixture.DevSet:
        """The test split as a :class:`~modtok.mixture.DevSet` of :attr:`langs` (those written
        without spaces per word of a spaced pivot): refused with
        :class:`~modtok.errors.UsageError` until :meth:`choose`."""
        if self.choice is None:
            raise UsageError("devtest is sealed until μ and ε are chosen on dev: call "
                             "AdaptMixStudy.choose(...) first (no hyper-parameter may see the test split)")
        if self._devtest is None:
            self._devtest = mixture.DevSet(self._test, self.langs)
        return self._devtest

    def test_lines(self) -> dict[str, list[str]]:
        """The test split's lines (sealed as :attr:`devtest` is)."""
        self.devtest  # noqa: B018 (the seal's check)
        return self._test

    def choose(self, trainer: str, vocab: int, budget: int, iterations: int,
               grid: Sequence[tuple[float, float]], f_best: float | str = 1.0) -> MuEps:
        """Fix μ and ε on dev: one :meth:`run` per ``(μ, ε)`` of ``grid``, the pick is
        :data:`CRITERION` (ties: grid order). Dev only — the test split stays sealed
        until this has been called, and a new choice is refused once it was read.
        A grid of one is a fixed choice, recorded the same way."""
        if self._devtest is not None:
            raise UsageError("devtest was already read: a new choice of μ and ε now would be made with it visible")
        if not grid:
            raise MixtureError("choose needs at least one (μ, ε) candidate")
        rows = []
        for mu, eps in grid:
            h = self.run(trainer, vocab, budget, iterations, mu, eps, f_best=f_best)
            first, last = h.steps[0]["mean_fertility"], h.steps[-1]["mean_fertility"]
            rows.append({"μ": mu, "ε": eps, "mean dev fertility, UniMix": first,
                         "mean dev fertility, last it.": last, "change (%)": 100.0 * (last - first) / first,
                         "last update moves (L1)": h.mixture_changes()[-1], "converged": h.converged()})
        pick = min(range(len(rows)), key=lambda i: (rows[i]["mean dev fertility, last it."], i))
        self.choice = MuEps(rows[pick]["μ"], rows[pick]["ε"], rows, CRITERION, self.data.dev_label,
                             (trainer, vocab, budget, iterations, f_best))
        return self.choice

    # ---- runs

    def trainer(self, kind: str, vocab: int) -> mixture.Trainer:
        """A trainer of :data:`modtok.mixture.TRAINERS` with this study's scheme."""
        return mixture.make_trainer(kind, vocab, self.scheme)

    def run(self, trainer: str, vocab: int, budget: int, iterations: int, mu: float, eps: float,
            langs: Sequence[str] | None = None, f_best: float | str = 1.0,
            clamp_delta: bool = False) -> mixture.History:
        """One AdaptMix run on dev (cached): ``budget`` is T, all languages' characters;
        over-allocation is capped and redistributed; every tokenizer is kept. Nothing is
        trained twice: a run with fewer iterations than one already made is its prefix
        (:meth:`~modtok.mixture.History.prefix`), one with more continues the longest such
        run, and runs that differ only in μ, ε, ``f_best`` or ``clamp_delta`` share
        iteration 0 (:meth:`~modtok.mixture.History.branch`: it is the same training).
        So notebook 06's iterations slider trains only the iterations it adds."""
        if not self.has_dev:
            raise MissingDevTextError(f"AdaptMix measures fertility on a dev split: {self.data.dev_label}")
        key = self._run_key(trainer, vocab, budget, iterations, mu, eps, langs, f_best, clamp_delta)
        langs = key[6]
        if key not in self._runs:
            start = self._start(key)
            if start is not None and len(start.steps) >= iterations:
                self._runs[key] = start.prefix(iterations)
                return self._runs[key]
            done = len(start.steps) if start is not None else 0

            def train() -> tuple[mixture.History, tuple[int, float]]:  # the run, and (iterations trained, seconds)
                t0 = time.perf_counter()
                h = mixture.adaptmix(
                    self.trainer(trainer, vocab), self.pool.subset(langs), budget, iterations, mu, eps,
                    self._devset(langs), f_best=f_best, clamp_delta=clamp_delta, policy="cap",
                    keep_tokenizers=True, resume=start)
                return h, (iterations - done, time.perf_counter() - t0)

            self._runs[key], timed = self.results.get("run", key, train)  # a cached run keeps its timing
            if self.results.events and self.results.events[-1].how == "cached":  # this get's own event
                self._cached[key] = self.results.events[-1].computed
            if timed[0] > 0:
                self._timed.setdefault((trainer, vocab, langs), []).append(timed)
        return self._runs[key]

    def _start(self, key: tuple) -> mixture.History | None:
        """Where :meth:`run` of ``key`` starts in this kernel: the longest run kept that differs
        only in its iterations (a prefix of it when it is as long; else a copy, which resuming
        appends to), else iteration 0 of one that differs only in μ, ε, ``f_best`` or
        ``clamp_delta`` (:meth:`~modtok.mixture.History.branch`), else ``None``: from the start."""
        longer = [h for k, h in self._runs.items() if k[:3] == key[:3] and k[4:] == key[4:]]  # iterations aside
        start = max(longer, key=lambda h: len(h.steps), default=None)
        if start is not None:
            return start.prefix(len(start.steps))
        start = next((h for k, h in self._runs.items() if k[:3] == key[:3] and k[6] == key[6]), None)
        return start and start.branch(mu=key[4], eps=key[5], f_best=key[7], clamp_delta=key[8])

    def to_train(self, trainer: str, vocab: int, budget: int, iterations: int, mu: float, eps: float,
                 langs: Sequence[str] | None = None) -> int:
        """How many AdaptMix iterations :meth:`run` would train for these arguments now: 0 when
        the run is kept in this kernel or in the results cache, else those it adds to where it
        starts (:meth:`_start`). Nothing is computed."""
        key = self._run_key(trainer, vocab, budget, iterations, mu, eps, langs)
        if key in self._runs or self.results.stored("run", key):
            return 0
        start = self._start(key)
        return max(0, iterations - (len(start.steps) if start is not None else 0))

    def _run_key(self, trainer: str, vocab: int, budget: int, iterations: int, mu: float, eps: float,
                 langs: Sequence[str] | None = None, f_best: float | str = 1.0, clamp_delta: bool = False) -> tuple:
        """:meth:`run`'s key (in memory and in the results cache) for its arguments."""
        return (trainer, vocab, budget, iterations, mu, eps, tuple(self.langs if langs is None else langs), f_best,
                clamp_delta)

    def _devset(self, langs: tuple[str, ...]) -> mixture.DevSet:
        """The dev split of ``langs`` as a :class:`~modtok.mixture.DevSet`, one per kernel and languages."""
        if langs not in self._devsets:
            self._devsets[langs] = mixture.DevSet(self.data.dev, langs)
        return self._devsets[langs]

    def over_seeds(self) -> SeedRuns:
        """The chosen run (:attr:`MuEps.run`, at the chosen μ and ε) repeated over :attr:`seeds`:
        each seed is a study of its own (its own sampler shuffle, the same text and μ, ε; the
        study's own seed is this study's cached run), and its UniMix, AdaptMix and
        :data:`SEEDED_BASELINES` columns are measured on devtest. Sealed as :attr:`devtest` is;
        cached (in memory; each seed's trainings in the results cache, keyed on its seed)."""
        self.devtest  # noqa: B018 (the seal's check)
        trainer, vocab, budget, iterations, f_best = self.choice.run
        key = (self.choice.mu, self.choice.eps, *self.choice.run)
        if key not in self._over_seeds:
            fert, alloc = {}, {}
            for seed in self.seeds:
                st = self if seed == self.seed else AdaptMixStudy(
                    replace(self.data, test=self._test), seed, self.scheme, self._exclude_spaceless, seeds=1)
                st.choice = self.choice  # chosen once, on dev, at this study's seed
                h = st.run(trainer, vocab, budget, iterations, self.choice.mu, self.choice.eps, f_best=f_best)
                # the fixed mixtures of the baseline claims too, on this seed's sample (results cache)
                fixed = {name: st.baseline(name, trainer, vocab, budget, h.langs)[0] for name in SEEDED_BASELINES}
                fert[seed] = st.fertility({UNI: h.tokenizers[0], ADAPT: h.tokenizers[h.last()], **fixed})
                alloc[seed] = dict(h.steps[-1]["alloc"])
            self._over_seeds[key] = SeedRuns(self.seeds, fert, alloc)
        return self._over_seeds[key]

    def iteration_seconds(self, trainer: str, vocab: int) -> tuple[float, int] | None:
        """``(seconds per iteration, iterations timed)`` over every run this study trained with
        ``trainer`` at ``vocab`` on all its languages (an iteration: train, dev fertility,
        update), or ``None`` before any."""
        timed = self._timed.get((trainer, vocab, tuple(self.langs)), [])
        n = sum(k for k, _ in timed)
        return (sum(s for _, s in timed) / n, n) if n else None

    def baseline(self, name: str, trainer: str, vocab: int, budget: int,
                 langs: Sequence[str] | None = None) -> tuple[object, dict[str, int]]:
        """A tokenizer trained on the fixed mixture ``name`` (cached): ``(tokenizer, allocation)``."""
        langs = tuple(self.langs if langs is None else langs)
        key = (name, trainer, vocab, budget, langs)
        return self._once(("baseline", *key), lambda: mixture.train_on(
            self.trainer(trainer, vocab), self.pool.subset(langs), baseline_mixture(name, langs), budget), keep=True)

    def tokenizers(self, hist: mixture.History, trainer: str, vocab: int, budget: int) -> dict[str, object]:
        """The Table 5 columns: :data:`UNI` (iteration 0), :data:`ADAPT` (the last
        iteration, the paper's), :data:`SELECTED` (lowest mean dev fertility, an
        addition) and the :data:`BASELINES`, same trainer, vocabulary and T."""
        return {UNI: hist.tokenizers[0], ADAPT: hist.tokenizers[hist.last()], SELECTED: hist.tokenizers[hist.best()],
                **{name: self.baseline(name, trainer, vocab, budget, hist.langs)[0] for name in BASELINES}}

    def unchanging(self, hist: mixture.History, trainer: str, vocab: int, budget: int) -> Unchanging | None:
        """Whether the run's iterations all trained on the same text
        (:meth:`~modtok.mixture.History.unchanging`) and whether the :data:`BASELINES`
        (same trainer, vocabulary and T) were allocated that same text too; ``None``
        when the mixture did change what was trained on."""
        reason = hist.unchanging()
        if reason is None:
            return None
        allocs = [self.baseline(name, trainer, vocab, budget, hist.langs)[1] for name in BASELINES]
        return Unchanging(reason, all(a == hist.steps[0]["alloc"] for a in allocs))

    # ---- the tables (they read the test split: sealed until choose)

    def fertility(self, tokenizers: Mapping[str, object]) -> dict[str, dict[str, float]]:
        """Devtest fertility of each named tokenizer, per language (a tokenizer under
        two names, e.g. AdaptMix and the dev-selected iteration when they are the
        same iteration, is measured once)."""
        return self._measured("fertility", tokenizers, self.devtest.fertility)

    def rows(self, tokenizers: Mapping[str, object]) -> list[dict]:
        """The per-language rows (:func:`modtok.evaluation.metrics.language_table_of`, no
        reference tokenizer: NSL is NaN) of each named tokenizer on the test split (sealed
        until :meth:`choose`); the fertility of a language written without spaces is NaN
        here, :meth:`fertility` measures it against a spaced pivot."""
        test = self.test_lines()
        return metrics.language_table_of({lang: {name: metrics.Encoded(tok, test[lang], lang)
                                                 for name, tok in tokenizers.items()} for lang in self.langs})

    def fertility_rows(self, fert: Mapping[str, Mapping[str, float]]) -> list[dict]:
        """One row per language, one column per tokenizer, and the (unweighted) mean."""
        rows = [{"language": label(lang), **{n: f[lang] for n, f in fert.items()}} for lang in self.devtest.lines]
        return rows + [{"language": "mean", **{n: mixture.mean(f) for n, f in fert.items()}}]

    def table5_rows(self, fert: Mapping[str, Mapping[str, float]], paper: Mapping[str, float],
                    seeds: SeedRuns | None = None) -> list[dict]:
        """The Table 5 analog: per language, fertility under :data:`UNI` and
        :data:`ADAPT`, the change (%) and the paper's change (``paper``: ``{lang: %}``;
        "—" for a language the paper does not print), and whether the directions agree (the paper's
        unchanged languages, 0.0, agree with none);
        then the mean (the change of the mean fertility, and the mean of the changes).
        With ``seeds`` (:meth:`over_seeds`) each language and the mean also get the change's
        mean over the seeds and its 95% t-interval over them."""
        uni, ada = fert[UNI], fert[ADAPT]
        change = change_pct(uni, ada)
        over = {**seeds.per_language(), "mean": seeds.headline()} if seeds and len(seeds.seeds) > 1 else {}
        n = len(seeds.seeds) if over else 0

        def seeded(key: str) -> dict:
            if not over:
                return {}
            m = over.get(key)
            return {f"change, mean of {n} seeds (%)": "" if m is None else m.value,
                    "95% t-interval over seeds": "" if m is None else f"[{m.lo:+.2f}, {m.hi:+.2f}]"}

        rows = []
        for lang in uni:
            p = paper.get(lang)
            agree = ("—" if p is None else "paper: unchanged" if p == 0
                     else "yes" if math.copysign(1, p) == math.copysign(1, change[lang]) else "no")
            rows.append({"language": label(lang), UNI: uni[lang], ADAPT: ada[lang], "change (%)": change[lang],
                         **seeded(lang), "paper change (%)": "—" if p is None else p, "same direction": agree})
        mu, ma = mixture.mean(uni), mixture.mean(ada)
        rows.append({"language": "mean", UNI: mu, ADAPT: ma, "change (%)": 100.0 * (ma - mu) / mu,
                     **seeded("mean"), "paper change (%)": paper.get("mean", "—"), "same direction": "—"})
        rows.append({"language": "mean of the changes", UNI: "", ADAPT: "", "change (%)": mixture.mean(change),
                     **seeded(""), "paper change (%)": "—", "same direction": "—"})
        return rows

    def _seeded(self) -> SeedRuns | None:
        """:meth:`over_seeds` when the choice fixed a run and there is more than one seed, else ``None``."""
        return self.over_seeds() if self.choice is not None and self.choice.run and len(self.seeds) > 1 else None

    def table5_tables(self, fert: Mapping[str, Mapping[str, float]], paper: Mapping[str, float],
                      same: Unchanging | None = None) -> list[list[dict]]:
        """The Table 5 analog's tables, :meth:`table5_rows` and :meth:`fertility_rows`; or, when
        some of the columns are one tokenizer (``same``, :meth:`unchanging`), one table in
        which it is one column named for all it is (it is not compared with itself)."""
        if same is None:  # the columns over seeds too (the chosen run repeated: over_seeds)
            return [self.table5_rows(fert, paper, self._seeded()), self.fertility_rows(fert)]
        names = [UNI, ADAPT, SELECTED, *(BASELINES if same.baselines else ())]
        return [self.fertility_rows({" = ".join(names): fert[ADAPT],
                                     **{n: f for n, f in fert.items() if n not in names}})]

    def table5_summary(self, hist: mixture.History, fert: Mapping[str, Mapping[str, float]]) -> list[str]:
        """What the Table 5 analog found, as lines to print: which iterations the
        columns are, the means, the most fragmented language, and how the
        per-language changes add up (the gains against the losses)."""
        uni, ada = fert[UNI], fert[ADAPT]
        change, worst = change_pct(uni, ada), max(uni, key=uni.get)
        gain = sum(c for c in change.values() if c < 0)
        mean_change = 100.0 * (mixture.mean(ada) - mixture.mean(uni)) / mixture.mean(uni)
        return [f"AdaptMix = the last iteration ({hist.last()}); the dev-selected addition = iteration {hist.best()}",
                "mean devtest fertility: " + ", ".join(f"{n} {mixture.mean(f):.4f}" for n, f in fert.items()),
                f"highest fertility under UniMix: {data.lang_name(worst)} {uni[worst]:.3f} -> AdaptMix "
                f"{ada[worst]:.3f} ({change[worst]:+.2f}%)",
                f"per-language changes sum to {gain:+.2f} points where fertility fell and "
                f"{sum(change.values()) - gain:+.2f} where it rose; the mean fertility changes {mean_change:+.3f}%",
                *self._seeds_lines()]

    def _seeds_lines(self) -> list[str]:
        """The headline over seeds as a line to print (nothing with one seed)."""
        seeds = self._seeded()
        if seeds is None:
            return []
        m = seeds.headline()
        per = ", ".join(f"{s} {c:+.3f}%" for s, c in zip(seeds.seeds, seeds.mean_changes()))
        return [f"over {len(seeds.seeds)} seeds of the sampler (μ, ε as chosen): the mean fertility changes "
                f"{m.value:+.3f}%, 95% t-interval over seeds [{m.lo:+.3f}, {m.hi:+.3f}]% (per seed: {per})"]

    def paper_vs_here(self, fert: Mapping[str, Mapping[str, float]] | None,
                      parity: Parity | None = None, deployed: Sequence[str] = (),
                      same: Unchanging | None = None) -> dict[str, float | paper_vs_here.NotMeasured]:
        """The measured value of every ``[adaptmix.*]`` claim of ``paper_figures.toml``
        (devtest ``fert`` of :meth:`fertility`; Table 7's ``parity`` of :meth:`parity`,
        whose tokenizers include the ``deployed`` ones), or
        :class:`~modtok.studies.paper_vs_here.NotMeasured` with the reason: no dev split
        (``fert`` is ``None``), a language the data lacks, no parallel text with English,
        no deployed tokenizer installed. With ``same`` (:meth:`unchanging`) the claims that
        compare one tokenizer with itself are not comparable (AdaptMix vs UniMix; vs the
        baselines too when they trained on the same text).

        AdaptMix vs UniMix (``table5_*``, ``most_fragmented``, ``spread``) and vs the fixed
        mixtures (``vs_natural``, ``vs_skewed``, ``abstract_vs_natural``) are the chosen run over
        the sampler's seeds (:meth:`over_seeds`: mean and paired t-interval over seeds) when there
        are several; ``parity_vs_deployed`` is AdaptMix's mean parity minus the lowest deployed
        tokenizer's, with the paired bootstrap interval over devtest lines."""
        claims = paper_vs_here.claims("adaptmix")
        if fert is None:
            return {c.key: paper_vs_here.NotMeasured(f"needs a dev split ({self.data.dev_label})") for c in claims}
        uni, ada, nat, skew = (mixture.mean(fert[name]) for name in (UNI, ADAPT, "natural", "skewed"))
        change = change_pct(fert[UNI], fert[ADAPT])
        here: dict[str, float | paper_vs_here.NotMeasured] = {
            f"{TABLE5_KEY}{lang}": change[lang] if lang in change else
            paper_vs_here.NotMeasured(f"{lang} is not in this data") for lang in paper_table5(claims) if lang != "mean"}
        worst = max(fert[UNI], key=fert[UNI].get)
        seeds = self._seeded() if same is None else None  # one tokenizer under two names: no seeds to run
        if seeds is not None:
            over = seeds.per_language()
            here.update({key: over[key[len(TABLE5_KEY):]] for key in here if key[len(TABLE5_KEY):] in over})
        here.update({f"{TABLE5_KEY}mean": 100.0 * (ada - uni) / uni if seeds is None else seeds.headline(),
                     "most_fragmented": change[worst] if seeds is None else seeds.per_language()[worst],
                     "spread": 100.0 * (_spread(fert[ADAPT]) - _spread(fert[UNI])) / _spread(fert[UNI])
                     if seeds is None else seeds.spread(),
                     "vs_natural": 100.0 * (ada - nat) / nat if seeds is None else seeds.versus("natural"),
                     "vs_skewed": 100.0 * (ada - skew) / skew if seeds is None else seeds.versus("skewed"),
                     # % below natural: positive is lower (the opposite of vs_natural, seed by seed)
                     "abstract_vs_natural": 100.0 * (nat - ada) / nat if seeds is None else _negated(seeds.versus("natural"))})
        if parity is None:
            here["parity_vs_deployed"] = paper_vs_here.NotMeasured("needs parallel text with English")
        elif not deployed:
            here["parity_vs_deployed"] = paper_vs_here.NotMeasured(
                "no deployed tokenizer installed (pip install 'modtok[deployed]')")
        else:
            here["parity_vs_deployed"] = parity.measured(f"{ADAPT}-{_lowest(parity, deployed)}|mean")
        if same is not None:
            for key, value in here.items():
                compares = key.startswith(TABLE5_KEY) or key in ITERATION_CLAIMS or (
                    same.baselines and key in BASELINE_CLAIMS)
                if compares and not isinstance(value, paper_vs_here.NotMeasured):  # "not in this data" stays
                    here[key] = same.not_comparable
        return here

    measured = paper_vs_here  # the contract's name (modtok.studies.contract)

    def setting(self, trainer: str, vocab: int, budget: int, iterations: int) -> dict[str, str]:
        """Our setting in the fields the paper's claims record theirs in
        (:data:`modtok.studies.paper_vs_here.SETTING_FIELDS`), from this run's own
        configuration: the languages and text, T, the trainer and vocabulary, the
        pre-tokenizer, the iterations and the evaluation text (μ and ε, which the paper's
        setting does not state, are the notebook's to print)."""
        left = f"{left_out(self.excluded)}; " if self.excluded else ""
        return {
            "data": f"{len(self.langs)} languages ({', '.join(self.langs)}); {left}"
                    f"{self.data.source.split('; evaluation')[0].split('; dev')[0]}",
            "size": f"the same total T = {budget:,} characters for every mixture",
            "vocabulary": f"{vocab:,} tokens, {trainer}",
            "pretokenization": f"modtok scheme {self.scheme!r}",
            "iterations": f"{iterations} mixture-adjustment iterations, from the uniform mixture",
            "heldout": f"fertility and parity on {self.data.eval_label or 'the test split'} "
                       f"({'parallel' if self.data.parallel else 'not parallel'}); dev: {self.data.dev_label}",
        }

    def settings_rows(self, trainer: str, vocab: int, budget: int, iterations: int,
                      grid: Sequence[tuple[float, float]]) -> list[dict]:
        """The paper's setting beside ours, one row per setting: the paper's as
        ``paper_figures.toml`` records it for the headline claim (each with its §), ours from this
        run's configuration (:meth:`setting`), and the (μ, ε) candidates, which the paper does not
        state."""
        paper = next(c for c in paper_vs_here.claims("adaptmix") if c.key == f"{TABLE5_KEY}mean").setting
        here = self.setting(trainer, vocab, budget, iterations)
        rows = [{"setting": name, "paper": paper.get(name, "not stated"), "here": here.get(name, "not stated")}
                for name in paper_vs_here.SETTING_FIELDS if name in paper or name in here]
        return rows + [{"setting": "(μ, ε)", "paper": "not stated (§3.4 names μ, Eq. 4, and ε, Eq. 2, not their values)",
                        "here": f"chosen on dev among {len(grid)} candidates: " + ", ".join(map(str, grid))}]

    def reasons(self, here: Mapping[str, float | paper_vs_here.NotMeasured], hist: mixture.History,
                fert: Mapping[str, Mapping[str, float]], parity: Parity | None = None,
                deployed: Sequence[str] = ()) -> dict[str, str]:
        """A measured reason for each claim of ``here`` (:meth:`paper_vs_here`) that does not
        hold, from this run: where the mixture moved a language (its share of T, uniform and
        last), how the per-language changes add up in the mean, the fertility ranges, the
        baselines' means, the parities."""
        claims = {c.key: c for c in paper_vs_here.claims("adaptmix")}
        failing = {k for k, v in here.items()
                   if not isinstance(v, paper_vs_here.NotMeasured) and claims[k].verdict(v) == "does not hold"}
        first, last = hist.steps[0]["mixture"], hist.steps[-1]["mixture"]
        change = change_pct(fert[UNI], fert[ADAPT])

        def moved(lang: str) -> str:
            more = "more" if last[lang] > first[lang] else "less"
            return (f"the mixture gave {data.lang_name(lang)} {more} text ({first[lang]:.2%} -> {last[lang]:.2%} of T): "
                    f"its share follows our dev fertilities, and its fertility changed {change[lang]:+.2f}%")

        gain = sum(c for c in change.values() if c < 0)
        cancel = (f"the per-language changes cancel in the unweighted mean: {gain:+.2f} points where fertility "
                  f"fell, {sum(change.values()) - gain:+.2f} where it rose")
        means = ", ".join(f"{n} {mixture.mean(fert[n]):.4f}" for n in (ADAPT, UNI, *BASELINES))
        out: dict[str, str] = {}
        for key in sorted(failing):
            lang = key[len(TABLE5_KEY):]
            if key.startswith(TABLE5_KEY) and lang in change:
                out[key] = moved(lang)
            elif key == f"{TABLE5_KEY}mean":
                out[key] = cancel
            elif key == "most_fragmented":
                out[key] = moved(max(fert[UNI], key=fert[UNI].get))
            elif key == "spread":
                out[key] = (f"fertility range (highest - lowest language): UniMix {_spread(fert[UNI]):.3f}, "
                            f"AdaptMix {_spread(fert[ADAPT]):.3f}")
            elif key in ("vs_natural", "abstract_vs_natural", "vs_skewed"):
                out[key] = f"mean devtest fertility (seed {self.seed}): {means}; {cancel}"
            elif key == "parity_vs_deployed":
                best, m = _lowest(parity, deployed), here[key]
                ours, theirs = parity.intervals[f"{ADAPT}|mean"][0], parity.intervals[f"{best}|mean"][0]
                out[key] = (f"mean parity (fertility over English's): AdaptMix {ours:.3f} at "
                            f"{hist.params.get('trainer', '')}, the lowest deployed {best} {theirs:.3f}; "
                            f"difference {float(m):+.3f}"
                            + (f", {m.shown()}" if isinstance(m, paper_vs_here.Measured) else ""))
            m = here[key]  # a value that passes while its interval does not: the noise is the reason
            if key in out and isinstance(m, paper_vs_here.Measured) and claims[key].verdict(m.value) == "holds":
                out[key] += f"; the mean {m.value:+.3f} passes the rule, its 95% interval {m.shown()} does not"
        return out

    def paper_setting_cost(self, trainer: str, vocab: int, candidates: int, iterations: int = 20) -> str:
        """What the paper's 20 iterations would cost with ``trainer`` at ``vocab`` on this
        machine, from the iterations this study timed (:meth:`iteration_seconds`), and this
        process's peak memory (RSS, Linux: kilobytes)."""
        timed = self.iteration_seconds(trainer, vocab)
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        if timed is None:
            return f"no AdaptMix iteration at {vocab:,} timed yet; peak memory {rss:,.0f} MB"
        seconds, n = timed
        return (f"one iteration at {vocab:,} took {seconds:.1f} s here (mean of {n}); the paper's {iterations} "
                f"iterations × {candidates} (μ, ε) candidates ≈ {seconds * iterations * candidates / 60:.0f} min "
                f"at {vocab:,}; peak memory of this process {rss:,.0f} MB")

    def parity(self, tokenizers: Mapping[str, object], pivot: str = "eng_Latn") -> Parity | None:
        """Table 7 (App. A.3): each language's devtest fertility over ``pivot``'s under the same
        tokenizer (:class:`Parity`: the paper's definition; 1.0 is parity), with the paired
        bootstrap over the parallel devtest lines (:func:`parity_intervals`; AdaptMix's interval
        is a column of the rows), and the Gini of the token totals; ``None`` without parallel
        text or without ``pivot``. A language written without spaces is measured per word of
        ``pivot``'s parallel line (its parity is then its token premium over ``pivot``)."""
        if not self.data.parallel or pivot not in self.devtest.lines:
            return None
        test = self.test_lines()
        parallel = {lang: test[lang] for lang in self.devtest.lines}
        words = {lang: [metrics.words_in(line) for line in parallel[pivot if metrics.written_without_spaces(lang) else lang]]
                 for lang in parallel}
        tokens = self._measured("token counts", tokenizers, lambda tok: {lang: metrics.token_counts(tok, lines)
                                                                          for lang, lines in parallel.items()})
        ci = parity_intervals(tokens, words, pivot, ADAPT if ADAPT in tokens else None)
        values = {n: {lang: ci[f"{n}|{lang}"][0] for lang in parallel} for n in tokenizers}
        gini = self._measured("gini", tokenizers, lambda tok: metrics.cost_gini(tok, parallel))

        def interval(key: str) -> dict:  # AdaptMix's interval, as a column of the rows
            if ADAPT not in tokens:
                return {}
            return {f"{ADAPT}, 95% interval over lines": "[{1:.3f}, {2:.3f}]".format(*ci[key])}

        rows = [{"language": label(lang), **{n: p[lang] for n, p in values.items()}, **interval(f"{ADAPT}|{lang}")}
                for lang in parallel if lang != pivot]
        rows.append({"language": f"mean (non-{data.lang_name(pivot)})",
                     **{n: ci[f"{n}|mean"][0] for n in tokenizers}, **interval(f"{ADAPT}|mean")})
        rows.append({"language": "Gini of token totals", **gini})
        return Parity(pivot, values, rows, ci)

    def ablation_rows(self, runs: Mapping[str, mixture.History], lang: str) -> list[dict]:
        """App. A.2: per run, the last iteration's devtest fertility (mean, max and
        ``lang``'s: the paper's AdaptMix), whether it converged, and — an addition —
        the iteration selected on dev with its mean devtest fertility."""
        devtest, rows = self.devtest, []
        for name, h in runs.items():
            last, best = devtest.fertility(h.tokenizers[h.last()]), h.best()
            rows.append({"f_best": name, "mean devtest fertility (last it.)": mixture.mean(last),
                         "max devtest fertility (last it.)": max(last.values()),
                         f"{data.lang_name(lang)} (last it.)": last[lang], "converged": h.converged(),
                         "dev-selected it. (addition)": best,
                         "its mean devtest fertility": mixture.mean(devtest.fertility(h.tokenizers[best]))})
        return rows

    # ---- beyond the paper, and the widget (dev only)

    def budgets(self, chars: int, k: int, iterations: int, mu: float, eps: float,
                langs: Sequence[str] | None = None) -> mixture.BudgetRun:
        """Adaptive sequential-BPE budgets (:func:`modtok.mixture.adaptive_budgets`)
        on each language's first ``chars`` characters of the sampler's shuffle,
        with a mean budget of ``k`` tokens per language (K = k · n), on dev."""
        if not self.has_dev:
            raise MissingDevTextError(f"adaptive budgets measure fertility on a dev split: {self.data.dev_label}")
        langs = list(self.langs if langs is None else langs)

        def make() -> mixture.BudgetRun:
            available = self.pool.available(langs)
            train = self.pool.take({lang: min(chars, available[lang]) for lang in langs}).lines()
            counts = count_by_language(train, self.scheme)
            return mixture.adaptive_budgets(counts, k * len(langs), iterations, mu, eps, self.data.dev,
                                            scheme=self.scheme)
        return self.results.get("budgets", (chars, k, iterations, mu, eps, langs), make)

    @staticmethod
    def budget_rows(run: mixture.BudgetRun) -> list[dict]:
        """Per language: budget and subtokenizer fertility, uniform (iteration 0) and last."""
        first, last = run.steps[0], run.steps[-1]
        return [{"language": label(lang), "k (uniform)": first.k[lang], "k (last)": last.k[lang],
                 "fertility (uniform)": first.score[lang], "fertility (last)": last.score[lang]}
                for lang in run.langs]

    def explore(self, mu: float, eps: float, budget: int, iterations: int, vocab: int, trainer: str,
                langs: Sequence[str], long: bool = True, ask_above: float | None = None) -> dict:
        """The widget's function: an AdaptMix run with T = ``budget`` per language,
        on dev only. ``rows``: each language's dev fertility under UniMix and at the
        last iteration, and its last share (empty for fewer than two languages).
        ``long=False`` (notebook 06's toggle): a setting whose training is estimated
        (:func:`estimated_seconds`) above ``ask_above`` seconds (default
        :data:`EXPLORER_SECONDS`) is not trained; ``ask`` then says what it would train
        and for about how long."""
        langs = tuple(langs)
        if len(langs) < 2:
            return {"langs": langs, "rows": []}
        if not long:
            n = self.to_train(trainer, vocab, budget * len(langs), iterations, mu, eps, langs)
            seconds = estimated_seconds(trainer, budget * len(langs), vocab, n)
            ask_above = EXPLORER_SECONDS if ask_above is None else ask_above
            if seconds > ask_above:
                return {"langs": langs, "rows": [], "trainer": trainer, "iterations": iterations,
                        "ask": ask_line(trainer, budget * len(langs), vocab, n, seconds, ask_above)}
        h = self.run(trainer, vocab, budget * len(langs), iterations, mu, eps, langs)
        first, last = h.steps[0], h.steps[-1]
        rows = [{"language": label(lang), "UniMix dev fertility": first["fertility"][lang],
                 "AdaptMix dev fertility (last)": last["fertility"][lang], "share (last)": last["mixture"][lang]}
                for lang in h.langs]
        when = self._cached.get(self._run_key(trainer, vocab, budget * len(langs), iterations, mu, eps, langs))
        return {"langs": langs, "history": h, "rows": rows, "trainer": trainer, "iterations": iterations,
                "source": f"from the results cache, computed {when[:16].replace('T', ' ')} UTC" if when else ""}

    def explore_ahead(self, size: ExplorerSize, mu: float, eps: float, trainer: str) -> str:
        """The explorer's start (``size``, μ, ε, every language) with ``trainer``, trained now
        whatever its estimate (the panel's first view is part of Run All, not a setting a person
        waits on: on a corpus of many languages it may be over "ask above"), and with each other
        trainer of :data:`modtok.mixture.TRAINERS`, so that notebook 06's trainer menu answers from
        the results cache: trained now when ``$MODTOK_AHEAD`` is set (``make demo`` sets it,
        :mod:`modtok.ui.demo`: what a class runs before opening the notebooks), else only looked
        up. One line: what was trained ahead, or which are in the cache and which would train when
        picked. Why: the peers' own training is most of a new setting's time; at the explorer's size
        (T = 50k) HF BPE took 6.7 s and sentencepiece Unigram 8.8 s, 3 iterations on a quiet machine
        (at T = 100k, load 6-12, 33-46 s and 104-189 s: ``bench/RESULTS.md``, sessions 18-21); read
        back, 0.6 s.
        """
        if not self.has_dev:
            return "no dev split: the explorer has nothing to compute ahead"
        self.run(trainer, size.vocab, size.per_lang * len(self.langs), size.iterations, mu, eps)
        others = [t for t in mixture.TRAINERS if t != trainer]
        args = {t: (t, size.vocab, size.per_lang * len(self.langs), size.iterations, mu, eps) for t in others}
        if ahead():
            took = []
            for t in others:
                t0 = time.perf_counter()
                self.run(*args[t])
                took.append(f"{t} {time.perf_counter() - t0:.0f} s")
            return f"the trainer menu, computed ahead into the results cache (${AHEAD}, make demo): {', '.join(took)}"
        stored = {t: self.results.stored("run", self._run_key(*args[t])).get("computed") for t in others}
        there = [f"{t} (computed {when[:16].replace('T', ' ')} UTC)" for t, when in stored.items() if when]
        missing = [t for t, when in stored.items() if not when]
        return "; ".join([*([f"the trainer menu from the results cache: {', '.join(there)}"] if there else []),
                          *([f"not in the results cache, trained when picked (up to about 10 s each at this size; "
                             f"make demo computes them ahead): {', '.join(missing)}"] if missing else [])])


# The explorer's size at most (notebook 06's widgets start there; the headline run keeps its own):
# one AdaptMix iteration of the headline's 32k vocabulary on T = 500k characters a language is 3.2-3.9 s on
# a quiet machine (12 s at load 5: its 10 iterations are 38-286 s a widget move, session 17); at 8k on 100k
# characters a language, 3 iterations, a new setting took 4-7 s at load 7 (session 18, bench/RESULTS.md).
# T = 50k, not 100k: every trainer of the menu answers a new setting in <= 10 s then. At 100k one training
# of the 16 languages took HF BpeTrainer 3.9 s and sentencepiece Unigram 6.1 s (quiet), so 3 iterations
# were 10 s and 18 s; at 50k 2.0 s and 2.6 s (sentencepiece's time grows faster than its text).
EXPLORER = {"iterations": 3, "vocab": 8_000, "per_lang": 50_000}
# A new setting of the explorer trains by itself when it is estimated to take at most this long (a
# widget's answer within 10 s); a longer one asks first (notebook 06's "ask above" box, default this,
# and its toggle "train long settings"). From the explorer's start the sliders reach 12 iterations,
# 64k and T = 1M a language: sentencepiece Unigram at 4 iterations, 19.5k and T = 300k took 298 s in
# the browser (session 21), blocking the kernel.
EXPLORER_SECONDS = 10.0
# One AdaptMix iteration (the pool's sample, one training, the dev fertility of every language) per
# trainer, fitted as ``c * (characters / 1M) ** b * (vocabulary / 8k) ** g`` and multiplied by
# ``above``, the largest measured / fitted of its points (the fit says no less than any point did):
# ``(c, b, g, above)`` from ``bench/new_settings.py costs`` (bench/RESULTS.md, session 23: T = 50k-400k
# characters a language, vocabularies 2k-32k, the 16 languages, a quiet 2-core AMD EPYC).
ITERATION_COST = {
    "hf-bpe": (2.367, 0.79, 0.14, 1.11),
    "modtok-bpe": (0.613, 0.68, 0.30, 1.12),
    "sp-unigram": (3.499, 1.17, -0.40, 1.10),  # a smaller vocabulary: more pruning rounds
    "sp-bpe": (0.623, 0.54, 0.28, 1.13),
}


def estimated_seconds(trainer: str, characters: int, vocab: int, iterations: int) -> float:
    """About how long ``iterations`` AdaptMix iterations of ``trainer`` at ``vocab`` on
    ``characters`` characters of training text take (:data:`ITERATION_COST`).

    >>> round(estimated_seconds("hf-bpe", 800_000, 8_000, 3), 1), estimated_seconds("hf-bpe", 800_000, 8_000, 0)
    (6.6, 0.0)
    """
    c, b, g, above = ITERATION_COST[trainer]
    return iterations * c * (characters / 1e6) ** b * (vocab / 8_000) ** g * above


def ask_line(trainer: str, characters: int, vocab: int, iterations: int, seconds: float,
             limit: float = EXPLORER_SECONDS) -> str:
    """What notebook 06's explorer says instead of training a setting estimated to take
    ``seconds``, more than ``limit``.

    >>> ask_line("sp-unigram", 4_800_000, 19_500, 4, 296.0)
    'not trained: this setting trains 4 AdaptMix iterations of sp-unigram at vocabulary 19,500 on 4,800,000 characters, about 5 min on a 2-core machine, more than the 10 s the explorer trains by itself ("ask above"); tick "train long settings" to train it'
    >>> ask_line("modtok-bpe", 48_000, 1_000, 1, 0.04, 0).split(", more")[0][-32:]
    'about 0.04 s on a 2-core machine'
    """
    took = f"{seconds:.2g} s" if seconds < 1 else f"{seconds:.0f} s" if seconds < 90 else f"{seconds / 60:.0f} min"
    return (f"not trained: this setting trains {iterations} AdaptMix iteration{'s' * (iterations != 1)} of {trainer} "
            f"at vocabulary {vocab:,} on {characters:,} characters, about {took} on a 2-core machine, more than the "
            f"{limit:g} s the explorer trains by itself (\"ask above\"); tick \"train long settings\" to train it")


@dataclass(frozen=True)
class ExplorerSize:
    """Where notebook 06's explorer starts: the headline run's setting (``run``: iterations,
    vocabulary, T per language), each cut to :data:`EXPLORER`, and :attr:`statement` saying
    which were cut.

    >>> e = explorer_size(10, 32_000, 500_000)
    >>> e.iterations, e.vocab, e.per_lang
    (3, 8000, 50000)
    >>> print(e.statement)
    the explorer starts smaller than the run above, so that a new setting answers in seconds: 3 iterations (the run: 10), vocabulary 8,000 (the run: 32,000), T = 50,000 characters a language (the run: 500,000); its sliders reach the run's setting, which trains that much again
    >>> explorer_size(2, 1_000, 16_000).statement                   # smoke size: nothing to cut
    'the explorer starts at the run above: 2 iterations, vocabulary 1,000, T = 16,000 characters a language'
    """

    iterations: int
    vocab: int
    per_lang: int
    run: tuple[int, int, int]

    @property
    def statement(self) -> str:
        mine = (self.iterations, self.vocab, self.per_lang)
        parts = [f"{self.iterations} iterations", f"vocabulary {self.vocab:,}", f"T = {self.per_lang:,} characters a language"]
        if mine == self.run:
            return f"the explorer starts at the run above: {', '.join(parts)}"
        parts = [f"{p} (the run: {r:,})" if n != r else p for p, n, r in zip(parts, mine, self.run, strict=True)]
        return ("the explorer starts smaller than the run above, so that a new setting answers in seconds: "
                f"{', '.join(parts)}; its sliders reach the run's setting, which trains that much again")


def explorer_size(iterations: int, vocab: int, per_lang: int) -> ExplorerSize:
    """The explorer's start for a headline run of ``iterations`` at ``vocab`` on ``per_lang``
    characters a language: each the smaller of the run's and :data:`EXPLORER`'s."""
    return ExplorerSize(min(iterations, EXPLORER["iterations"]), min(vocab, EXPLORER["vocab"]),
                        min(per_lang, EXPLORER["per_lang"]), (iterations, vocab, per_lang))


# --------------------------------------------------------------------------
# ``modtok adaptmix``: one run into an output directory


@dataclass
class CommandRun:
    """What ``modtok adaptmix`` made (:func:`run`): the loop's history, the file the last
    iteration's tokenizer was saved as, and the output directory."""

    history: mixture.History
    saved: str
    out: Path

    def lines(self) -> list[str]:
        """The languages used (and any left out, with the reason), each iteration's mean dev
        fertility, the last update's move — or, when no mixture can change what is trained on
        (:meth:`~modtok.mixture.History.unchanging`), that statement instead — and where it was saved."""
        hist = self.history
        out = [used_line(hist)]
        out += [f"iteration {st['iteration']}: mean dev fertility {st['mean_fertility']:.4f}" for st in hist.steps]
        same = hist.unchanging()
        if same:
            out.append(f"the mixture cannot change what is trained on: {same}; the {len(hist.steps)} iterations "
                       "are one result, not a comparison")
        else:
            # the paper's AdaptMix is the last iteration (§3.4 iterates "until the optimal mixture was reached");
            # the lowest-dev-fertility iteration is a selection it does not make, so it is only named
            moved = hist.mixture_changes()[-1]
            out.append(f"the last update moves the mixture by {moved:.4f} (L1): "
                       f"{'converged' if hist.converged() else 'not converged'} at 0.01; lowest mean dev fertility "
                       f"at iteration {hist.best()} (not saved: the paper keeps the last)")
        out.append(f"saved history.json ({len(hist.steps)} iterations) and the last iteration's {self.saved} "
                   f"-> {self.out}")
        return out


def used_line(hist: mixture.History) -> str:
    """The languages an AdaptMix run used, how their fertility was measured, and every
    language of the text it left out with the reason (nothing left out unsaid).

    >>> h = mixture.History(["eng_Latn", "zho_Hans"], {}, basis={"eng_Latn": "tokens per whitespace word",
    ...     "zho_Hans": "tokens per whitespace word of the parallel eng_Latn dev line"},
    ...     excluded={"tha_Thai": "written without spaces: left out as exclude_spaceless asks"})
    >>> print(used_line(h))
    AdaptMix on 2 languages: eng_Latn, zho_Hans (zho_Hans: tokens per whitespace word of the parallel eng_Latn dev line); left out: tha_Thai (written without spaces: left out as exclude_spaceless asks)
    """
    by_basis: dict[str, list[str]] = {}
    for lang in hist.langs:
        if hist.basis.get(lang, mixture.SPACED_BASIS) != mixture.SPACED_BASIS:
            by_basis.setdefault(hist.basis[lang], []).append(lang)
    pivoted = "; ".join(", ".join(langs) + f": {b}" for b, langs in by_basis.items())
    out = f"AdaptMix on {len(hist.langs)} language{'s' if len(hist.langs) != 1 else ''}: {', '.join(hist.langs)}" + (f" ({pivoted})" if pivoted else "")
    return f"{out}; {left_out(hist.excluded)}"


@dataclass(frozen=True)
class AdaptMixOptions:
    """What ``modtok adaptmix`` is asked (:func:`run` reads the fields; the command line builds
    them from its flags, and ``run.json``'s ``args`` is their ``asdict``): ``iterations`` of
    AdaptMix (step ``mu``, smoothing ``eps``) around ``trainer`` at ``vocab``, each training on
    ``budget_chars`` characters drawn from ``train_chars`` per language of ``langs``.

    >>> AdaptMixOptions("out", 1_000_000).trainer
    'hf-bpe'
    """

    out: object
    budget_chars: int
    trainer: str = "hf-bpe"
    vocab: int = 32000
    langs: list[str] | None = None
    manifest: object = None
    train_chars: int = 3_000_000
    iterations: int = 5
    mu: float = 0.3
    eps: float = 0.5
    dev: list[str] | None = None
    eval: str | None = None
    clamp_delta: bool = False
    exclude_spaceless: bool = False
    scheme: str = TRAINING_SCHEME
    seed: int = 0


def run(options: AdaptMixOptions, *, force: bool = False, log=None) -> CommandRun:
    """``modtok adaptmix`` as ``options`` asks (:class:`AdaptMixOptions`; below, its fields by
    name): :func:`modtok.mixture.adaptmix` around the ``trainer``
    (:func:`modtok.mixture.make_trainer`) on the training text (``manifest``,
    ``$MODTOK_MANIFEST`` or the pool, as every training command), dev fertility measured on
    the ``dev`` files (one per language, named after it) or the dev split of ``eval`` /
    ``$MODTOK_EVAL`` / FLORES-200 (never devtest: the mixture is chosen on it). Languages
    written without spaces take part with their fertility per word of a spaced pivot's
    parallel dev line (:class:`modtok.mixture.DevSet`; refused before any training, naming
    them and what to do, when the dev text cannot give it), or are left out with
    ``exclude_spaceless``; the languages used and left out, each fertility's basis and whether
    the mixture could change at all (:meth:`~modtok.mixture.History.unchanging`) go to
    ``log`` and to run.json. ``history.json``
    (checkpointed every iteration) and the last iteration's tokenizer saved into ``out``
    (:func:`modtok.outputs.output_dir`; ``force``: over an earlier adaptmix; ``run.json``'s
    ``args``: ``asdict(options)``). What was read goes to ``log`` (a callable taking one line)."""
    from modtok import atomic
    from modtok.outputs import output_dir
    from modtok.text import training
    from modtok.text.eval_sets import need_eval_set

    o = options
    out, manifest, exclude_spaceless = o.out, o.manifest, o.exclude_spaceless
    say = log or (lambda line: None)
    dev_files = training.files_by_language(o.dev, "--dev") if o.dev else {}  # by name, never by position
    with output_dir(out, command="adaptmix", args=asdict(o), force=force) as written:
        corpora = training.training_corpora(o.langs, o.train_chars, manifest)
        train = corpora.train
        langs, excluded = mixture.fertility_languages(corpora.languages, exclude_spaceless)
        if dev_files:  # a dev file of a language left out is not needed, nor refused
            training.check_dev_languages({k: v for k, v in dev_files.items() if k not in excluded}, langs)
            dev_text = {lang: data.open_corpus(dev_files[lang], lang=lang).lines() for lang in langs}
            dev_what = "--dev files " + " ".join(dev_files[lang] for lang in langs)
        else:
            evals = need_eval_set(o.eval)
            dev_text = evals.load(langs, "dev")  # dev, never devtest: the mixture is chosen on it
            dev_what = evals.label("dev")
        devset = mixture.DevSet(dev_text, langs)  # a spaceless language without a parallel pivot: refused here
        say(f"{corpora.source}; {len(corpora.languages)} languages read; AdaptMix on {len(langs)}: "
            f"{', '.join(langs)}; {left_out(excluded)}; {devset.describe()}; dev: {dev_what}")
        written.add_inputs(training.training_files(manifest, corpora.languages) + list(dev_files.values()))
        training.record_text(written, train, training=corpora.source, evaluation=dev_what,
                             dev=training.text_stats(dev_text))
        hist = mixture.adaptmix(mixture.make_trainer(o.trainer, o.vocab, o.scheme), train, o.budget_chars,
                                o.iterations, o.mu, o.eps, devset, seed=o.seed, checkpoint=written.path / "history.json",
                                progress=True, clamp_delta=o.clamp_delta, exclude_spaceless=exclude_spaceless)
        written.record(adaptmix={"languages": hist.langs, "excluded": hist.excluded, "fertility": hist.basis,
                                 "unchanging": hist.unchanging()})
        last = hist.tokenizers[-1]
        if hasattr(last, "to_str"):  # an HF tokenizers.Tokenizer
            atomic.write_text(written.path / "tokenizer.json", last.to_str())
            saved = "tokenizer.json"
        else:  # a sentencepiece processor
            atomic.write_bytes(written.path / "tokenizer.model", last.serialized_model_proto())
            saved = "tokenizer.model"
    return CommandRun(hist, saved, Path(out))
