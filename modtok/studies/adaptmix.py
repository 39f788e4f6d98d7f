"""The AdaptMix study (notebook 06): "The Art of Breaking Words" on our data.

Thakur et al. 2025 (arXiv:2508.06533), §3.4, §4.3, App. A.2. The algorithm
is :mod:`modtok.mixture`; this module wires it to data and to the paper's
evaluation:

- :func:`load_data`: the paper's 16 languages as the project serves them
  (:func:`modtok.text.data.pick_languages`, :func:`modtok.text.data.default_corpora`):
  pool training text, FLORES-200 **dev** for fertility inside the loop and
  **devtest** for the tables; without the shared data, the wordfreq default
  (training and evaluation samples from ``default_corpora``, a third sample as dev);
- :class:`AdaptMixStudy`: one sampler over the training text, cached runs
  (:meth:`~AdaptMixStudy.run`) and fixed-mixture baselines
  (:meth:`~AdaptMixStudy.baseline`: natural, natural τ = 3.3, skewed), and the
  rows of the paper's tables: Table 5 (devtest fertility), Table 7 (premium
  over English, with the Gini of token totals), the App. A.2 f_best ablation,
  and — beyond the paper — adaptive budgets for sequential BPE;
  :meth:`~AdaptMixStudy.explore` is the widget's function.

Every comparison uses the same trainer, vocabulary, pre-tokenizer ``scheme``
and total budget T. AdaptMix's iteration 0 is the uniform mixture, so it *is*
UniMix; "AdaptMix" in the tables is the iteration with the lowest mean dev
fertility (model selection on dev; devtest is only read for the tables).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from modtok import mixture
from modtok.errors import MixtureError
from modtok.evaluation import metrics
from modtok.text import data
from modtok.text.pretokenize import DEFAULT_SCHEME, count_by_language

BASELINES = ("natural", "natural τ=3.3", "skewed")
WORDFREQ_DEV_LINES = 300  # dev lines per language on the wordfreq default


def label(lang: str) -> str:
    """``"Hindi (hin_Deva)"``: a language as the tables name it.

    >>> label("hin_Deva")
    'Hindi (hin_Deva)'
    """
    return f"{data.lang_name(lang)} ({lang})"


@dataclass
class Data:
    """The study's text: ``train`` (the sampler draws from it), ``dev`` (fertility
    in the loop), ``test`` (the tables), whether dev/test are ``parallel``
    (FLORES-200) and a sentence saying where it all came from."""

    langs: list[str]
    train: dict[str, list[str]]
    dev: dict[str, list[str]]
    test: dict[str, list[str]]
    parallel: bool
    source: str


def load_data(preferred: Sequence[str] = mixture.PAPER_LANGUAGES, train_chars: int | None = None,
              eval_lines: int | None = None, seed: int = 0) -> Data:
    """The languages of ``preferred`` the project has (same-script stand-ins on the
    wordfreq default), with :func:`modtok.text.data.default_corpora`'s training
    and evaluation (devtest) text.

    ``train_chars`` caps each language's training text (``default_corpora``'s
    default is 2M characters; every pool language has fewer than 3M, so 3M is
    all of it); ``eval_lines`` caps the FLORES dev and devtest lines. On the
    wordfreq default, dev is another sample (seed + 1) of
    :data:`WORDFREQ_DEV_LINES` lines, not parallel text.
    """
    langs = data.pick_languages(preferred)
    corpora = data.default_corpora(langs, train_chars=train_chars, eval_lines=eval_lines, seed=seed)
    if corpora.parallel_eval:
        dev = data.load_flores(langs, "dev", max_lines=eval_lines)
        said = f"; in the loop: FLORES-200 dev ({len(dev[langs[0]])} parallel lines)"
    else:
        dev = data.load_wordfreq(langs, n_lines=WORDFREQ_DEV_LINES, seed=seed + 1)
        said = f"; in the loop: another wordfreq sample ({WORDFREQ_DEV_LINES} lines per language)"
    return Data(langs, corpora.train, dev, corpora.eval, corpora.parallel_eval, corpora.source + said)


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


def _mean_except(values: Mapping[str, float], lang: str) -> float:
    return sum(v for key, v in values.items() if key != lang) / (len(values) - 1)


class AdaptMixStudy:
    """AdaptMix runs and baselines on one :class:`Data`, and the paper's tables.

    One :class:`modtok.mixture.TextPool` (a fixed shuffle per language, split
    once) serves every run; :meth:`run` and :meth:`baseline` are cached on
    their arguments, so a widget recomputes only what a new setting needs.
    ``scheme`` is the pre-tokenizer of the BPE trainers and of sequential BPE.
    """

    def __init__(self, d: Data, seed: int = 0, scheme: str = DEFAULT_SCHEME):
        self.data, self.seed, self.scheme = d, seed, scheme
        self.langs = list(d.langs)
        self.pool = mixture.TextPool(d.train, seed=seed)
        spaced = [lang for lang in self.langs if not metrics.written_without_spaces(lang)]
        self.devtest = mixture.DevSet(d.test, spaced)  # fertility is undefined without spaces
        self._runs: dict[tuple, mixture.History] = {}
        self._baselines: dict[tuple, tuple] = {}

    def trainer(self, kind: str, vocab: int) -> mixture.Trainer:
        """A trainer of :data:`modtok.mixture.TRAINERS` with this study's scheme."""
        return mixture.make_trainer(kind, vocab, self.scheme)

    def run(self, trainer: str, vocab: int, budget: int, iterations: int, mu: float, eps: float,
            langs: Sequence[str] | None = None, f_best: float | str = 1.0) -> mixture.History:
        """One AdaptMix run (cached): ``budget`` is T, all languages' characters;
        over-allocation is capped and redistributed; every tokenizer is kept."""
        langs = tuple(self.langs if langs is None else langs)
        key = (trainer, vocab, budget, iterations, mu, eps, langs, f_best)
        if key not in self._runs:
            self._runs[key] = mixture.adaptmix(
                self.trainer(trainer, vocab), self.pool.subset(langs), budget, iterations, mu, eps,
                self.data.dev, f_best=f_best, policy="cap", keep_tokenizers=True)
        return self._runs[key]

    def baseline(self, name: str, trainer: str, vocab: int, budget: int,
                 langs: Sequence[str] | None = None) -> tuple[object, dict[str, int]]:
        """A tokenizer trained on the fixed mixture ``name`` (cached): ``(tokenizer, allocation)``."""
        langs = tuple(self.langs if langs is None else langs)
        key = (name, trainer, vocab, budget, langs)
        if key not in self._baselines:
            self._baselines[key] = mixture.train_on(self.trainer(trainer, vocab), self.pool.subset(langs),
                                                    baseline_mixture(name, langs), budget)
        return self._baselines[key]

    def tokenizers(self, hist: mixture.History, trainer: str, vocab: int, budget: int) -> dict[str, object]:
        """The Table 5 columns: UniMix (iteration 0), AdaptMix (selected on dev, and
        the last iteration) and the :data:`BASELINES`, same trainer, vocabulary and T."""
        best, last = hist.best(), len(hist.steps) - 1
        return {"UniMix": hist.tokenizers[0], f"AdaptMix (it. {best})": hist.tokenizers[best],
                f"AdaptMix (last, it. {last})": hist.tokenizers[-1],
                **{name: self.baseline(name, trainer, vocab, budget, hist.langs)[0] for name in BASELINES}}

    def fertility(self, tokenizers: Mapping[str, object]) -> dict[str, dict[str, float]]:
        """Devtest fertility of each named tokenizer, per language."""
        return {name: self.devtest.fertility(tok) for name, tok in tokenizers.items()}

    def fertility_rows(self, fert: Mapping[str, Mapping[str, float]]) -> list[dict]:
        """One row per language, one column per tokenizer, and the (unweighted) mean."""
        rows = [{"language": label(lang), **{n: f[lang] for n, f in fert.items()}} for lang in self.devtest.lines]
        return rows + [{"language": "mean", **{n: mixture.mean(f) for n, f in fert.items()}}]

    def premiums(self, tokenizers: Mapping[str, object], pivot: str = "eng_Latn") -> tuple[dict, list[dict]] | None:
        """Table 7: ``(premiums, rows)``, each language's tokens over ``pivot``'s on
        the same devtest sentences (1.0 is parity) and the Gini of the token
        totals; ``None`` without parallel text or without ``pivot``."""
        if not self.data.parallel or pivot not in self.devtest.lines:
            return None
        parallel = {lang: self.data.test[lang] for lang in self.devtest.lines}
        prem = {name: metrics.premiums(tok, parallel, pivot) for name, tok in tokenizers.items()}
        rows = [{"language": label(lang), **{n: p[lang] for n, p in prem.items()}}
                for lang in parallel if lang != pivot]
        rows.append({"language": f"mean (non-{data.lang_name(pivot)})",
                     **{n: _mean_except(p, pivot) for n, p in prem.items()}})
        rows.append({"language": "Gini of token totals",
                     **{n: metrics.cost_gini(t, parallel) for n, t in tokenizers.items()}})
        return prem, rows

    def ablation_rows(self, runs: Mapping[str, mixture.History], lang: str) -> list[dict]:
        """App. A.2: per run, the iteration selected on dev and its devtest
        fertility (mean, max, and ``lang``'s)."""
        rows = []
        for name, h in runs.items():
            best = h.best()
            f = self.devtest.fertility(h.tokenizers[best])
            rows.append({"f_best": name, "selected iteration": best,
                         "mean dev fertility": h.steps[best]["mean_fertility"],
                         "mean devtest fertility": mixture.mean(f), "max devtest fertility": max(f.values()),
                         data.lang_name(lang): f[lang]})
        return rows

    def budgets(self, chars: int, k: int, iterations: int, mu: float, eps: float,
                langs: Sequence[str] | None = None) -> mixture.BudgetRun:
        """Adaptive sequential-BPE budgets (:func:`modtok.mixture.adaptive_budgets`)
        on each language's first ``chars`` characters of the sampler's shuffle,
        with a mean budget of ``k`` tokens per language (K = k · n)."""
        langs = list(self.langs if langs is None else langs)
        available = self.pool.available(langs)
        train = self.pool.take({lang: min(chars, available[lang]) for lang in langs}).lines()
        counts = count_by_language(train, self.scheme)
        return mixture.adaptive_budgets(counts, k * len(langs), iterations, mu, eps, self.data.dev,
                                        scheme=self.scheme)

    @staticmethod
    def budget_rows(run: mixture.BudgetRun) -> list[dict]:
        """Per language: budget and subtokenizer fertility, uniform (iteration 0) and last."""
        first, last = run.steps[0], run.steps[-1]
        return [{"language": label(lang), "k (uniform)": first.k[lang], "k (last)": last.k[lang],
                 "fertility (uniform)": first.score[lang], "fertility (last)": last.score[lang]}
                for lang in run.langs]

    def explore(self, mu: float, eps: float, budget: int, iterations: int, vocab: int, trainer: str,
                langs: Sequence[str]) -> dict:
        """The widget's function: an AdaptMix run with T = ``budget`` per language.
        ``rows``: each language's dev fertility under UniMix and at the last
        iteration, and its last share (empty for fewer than two languages)."""
        langs = tuple(langs)
        if len(langs) < 2:
            return {"langs": langs, "rows": []}
        h = self.run(trainer, vocab, budget * len(langs), iterations, mu, eps, langs)
        first, last = h.steps[0], h.steps[-1]
        rows = [{"language": label(lang), "UniMix dev fertility": first["fertility"][lang],
                 "AdaptMix dev fertility (last)": last["fertility"][lang], "share (last)": last["mixture"][lang]}
                for lang in h.langs]
        return {"langs": langs, "history": h, "rows": rows, "trainer": trainer, "iterations": iterations}
