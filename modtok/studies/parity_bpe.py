"""Parity-aware BPE, the study (notebook 05): classical vs parity-aware BPE
(:mod:`modtok.bpe.parity`) on the same training mixture and vocabulary, ranked by
a parallel dev set, evaluated on parallel devtest ("Parity-Aware Byte-Pair
Encoding", Foroutan, Meister et al. 2025: Table 1, Figs. 1-2, Tables 3-4).

The training mixtures (:meth:`ParityStudy.mixture`):

- **unbalanced**: shares ∝ size_l^(1/τ) (:func:`modtok.mixture.natural`) with the
  CC-100 sizes below, τ = 3.3 (XLM-R's smoothing, :data:`TAU`) or τ = 1 (the natural
  proportions); the total is the largest that every language's share fits in the
  text we have, so the binding language gives all of its text;
- **balanced** (:data:`BALANCED`): the same number of characters for every language.

A run is a :class:`RunSpec` (mixture, variant, J/K, window, α, dev lines, vocabulary,
languages), canonical so that settings a variant ignores do not train it twice;
:class:`ParityStudy` trains each run once and evaluates it once (cached), and
builds the notebook's tables from those evaluations. The disparity measure is the
Gini of the per-language token totals on the parallel devtest lines (0 = every
language pays the same).

A toy: English has most of the training text, so classical BPE spends its merges
on English; parity-aware BPE spends them on the language that costs more on the
(parallel) dev lines, and the devtest Gini drops:

>>> train = {"eng_Latn": ["the cat sat on the mat"] * 40,
...          "rus_Cyrl": ["кот сидел на коврике"] * 4}
>>> dev = {"eng_Latn": ["the cat sat"], "rus_Cyrl": ["кот сидел"]}
>>> study = ParityStudy(train, dev, dev, vocab=280, scheme="llama3", sizes={"eng_Latn": 10, "rus_Cyrl": 1})
>>> gini = {v: study.evaluate(study.spec(variant=v))["row"]["gini"] for v in ("classical", "base")}
>>> gini["base"] < gini["classical"]
True
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import NamedTuple

import numpy as np

from modtok import mixture as mixtures
from modtok.bpe import parity
from modtok.errors import DataError, ParityConfigError
from modtok.evaluation import metrics
from modtok.text import data

# Realistic corpus sizes: CC-100 (the XLM-R corpus), GiB of text per language, rounded,
# as tabulated in Conneau et al. 2020, "Unsupervised Cross-lingual Representation
# Learning at Scale", Table 6. They only set the skew of the mixture. The keys are the
# paper's 30 languages (its evaluation suite's language list) that the pool has: 18.
# Its others (Arabic, Persian, Chinese, Japanese, Korean, Thai, Hebrew, Georgian,
# Indonesian, Filipino, Norwegian, Azerbaijani) have no pool text.
CC100_GIB = {
    "eng_Latn": 300.8, "rus_Cyrl": 278.0, "vie_Latn": 137.3, "deu_Latn": 66.6, "fra_Latn": 56.8,
    "spa_Latn": 53.3, "por_Latn": 49.1, "ell_Grek": 46.9, "pol_Latn": 44.6, "ita_Latn": 30.2,
    "nld_Latn": 29.3, "tur_Latn": 20.9, "hin_Deva": 20.2, "ces_Latn": 16.3, "tam_Taml": 12.2,
    "ben_Beng": 8.4, "tel_Telu": 4.7, "mar_Deva": 2.8,
}
SMOKE_LANGUAGES = ["eng_Latn", "rus_Cyrl", "ell_Grek", "hin_Deva", "tel_Telu", "mar_Deva"]
TAU = 3.3
NATURAL = 1.0
BALANCED = "balanced"

# Table 1's tokenizers: name -> the RunSpec fields that make it (on top of a mixture).
TABLE1_VARIANTS = {
    "classical": {"variant": "classical"},
    "parity (base)": {"variant": "base"},
    "hybrid (J = K/2)": {"variant": "base", "j_frac": 0.5},
    "window (w=100, α=2)": {"variant": "window", "window": 100, "alpha": 2.0},
    "ratio (r = 1)": {"variant": "ratio"},
}
RUN_VARIANTS = ("classical", "base", "window", "ratio")


def tiers_of(sizes: Mapping[str, float]) -> dict[str, str]:
    """Resource tier by corpus size (GiB): high >= 50, medium >= 5, low below.

    >>> tiers_of({"a": 300.8, "b": 20.2, "c": 2.8})
    {'a': 'high', 'b': 'medium', 'c': 'low'}
    """
    return {lang: "high" if gib >= 50 else "medium" if gib >= 5 else "low" for lang, gib in sizes.items()}


def label(setting) -> str:
    """How a mixture setting is named in tables: ``"τ = 3.3"``, ``"τ = 1"``, ``"balanced"``."""
    return setting if setting == BALANCED else f"τ = {setting:g}"


class RunSpec(NamedTuple):
    """One training run (hashable: the cache key). ``setting``: a temperature τ or
    :data:`BALANCED`; ``variant``: one of :data:`RUN_VARIANTS` (``"ratio"``: equal
    target ratios, no dev set to choose); ``j_frac``: the hybrid share J/K of classical
    merges; ``dev_lines``: how many dev lines rank the languages."""

    setting: float | str
    variant: str
    j_frac: float
    window: int
    alpha: float
    dev_lines: int
    vocab: int
    langs: tuple[str, ...]

    def config(self) -> parity.ParityConfig:
        """The :class:`~modtok.bpe.parity.ParityConfig` of this run (J = ⌊j_frac · merges⌋)."""
        options = {"hybrid": int(self.j_frac * (self.vocab - 256))}
        if self.variant == "ratio":
            return parity.ParityConfig(ratios=[1.0] * len(self.langs), **options)
        return parity.ParityConfig(variant=self.variant, window=self.window, alpha=self.alpha, **options)


def load(preferred: Sequence[str], vocab: int, scheme: str, train_chars: int, eval_lines: int | None = None,
         tau: float = TAU, sizes: Mapping[str, float] = CC100_GIB) -> ParityStudy:
    """The study on the configured data (:func:`modtok.text.data.default_corpora`):
    ``preferred`` languages that have text (same-script stand-ins on the wordfreq
    default), FLORES-200 dev as the parallel dev set and devtest as the test set, or,
    without FLORES, 300 held-out wordfreq pseudo-sentences per language (not parallel)."""
    langs = data.pick_languages(preferred)
    corpora = data.default_corpora(langs, train_chars=train_chars, eval_lines=eval_lines)
    langs = [lang for lang in langs if lang in corpora.train]
    if corpora.parallel_eval:  # FLORES-200 is configured (with the pool or a manifest)
        dev = data.load_flores(langs, "dev")
        dev_source = f"FLORES-200 dev ({len(dev[langs[0]])} parallel lines)"
    else:  # no parallel text: equal numbers of held-out 12-word pseudo-sentences
        dev = data.load_wordfreq(langs, n_lines=300, seed=7)
        dev_source = ("wordfreq held-out sample (300 lines per language, NOT parallel: "
                      "parity of tokens per 12-word line)")
    return ParityStudy({lang: corpora.train[lang] for lang in langs}, dev, corpora.eval, vocab=vocab,
                       scheme=scheme, tau=tau, sizes=sizes, parallel=corpora.parallel_eval,
                       source=corpora.source, dev_source=dev_source)


class ParityStudy:
    """Training text, dev and test lines of the same languages, and every run on them,
    each trained and evaluated once.

    ``vocab``, ``tau``: the vocabulary and the unbalanced mixture that a run has unless
    told otherwise (``setting=None``); ``sizes``: the corpus sizes that skew the
    unbalanced mixtures (and set the tiers);
    ``parallel``: whether the test lines are parallel (FLORES), which the paper's
    claims need; ``source`` / ``dev_source``: where the text came from, in words.
    """

    def __init__(self, train: Mapping[str, list[str]], dev: Mapping[str, list[str]],
                 test: Mapping[str, list[str]], *, vocab: int, scheme: str, tau: float = TAU,
                 sizes: Mapping[str, float] = CC100_GIB, parallel: bool = True, source: str = "",
                 dev_source: str = ""):
        self.langs = list(train)
        self.train, self.dev, self.test = dict(train), dev, test
        self.vocab, self.scheme, self.tau, self.sizes = vocab, scheme, tau, sizes
        if missing := mixtures.missing_sizes(self.langs, sizes):
            raise DataError(f"no corpus size for {', '.join(missing)} (sizes= sets the mixtures' skew)")
        self.tiers = tiers_of({lang: sizes[lang] for lang in self.langs})
        self.parallel, self.source, self.dev_source = parallel, source, dev_source
        self.n_dev = len(dev[self.langs[0]])
        self.pool = mixtures.TextPool(self.train, seed=0)
        self._memo: dict[tuple, object] = {}

    def _once(self, key: tuple, make: Callable):
        """``make()``, computed on the first call with ``key`` and remembered."""
        if key not in self._memo:
            self._memo[key] = make()
        return self._memo[key]

    # ---- the training text
    def mixture(self, setting) -> dict[str, list[str]]:
        """The training lines of ``setting``: a temperature τ or :data:`BALANCED`, sampled
        by :class:`modtok.mixture.TextPool` (a prefix of one fixed shuffle per language)."""
        def make():
            available = self.pool.available()
            if setting == BALANCED:
                share = {lang: 1.0 for lang in self.langs}
                return self.pool.sample(share, min(available.values()) * len(self.langs)).lines()
            share = mixtures.natural(self.langs, self.sizes, tau=setting)
            total = int(min(available[lang] / share[lang] for lang in self.langs))  # the binding language
            return self.pool.sample(share, total).lines()
        return self._once(("mixture", setting), make)

    def counts(self, setting) -> dict[str, Counter]:
        """Pre-token counts of :meth:`mixture`."""
        return self._once(("counts", setting),
                          lambda: parity.count_corpus(self.mixture(setting), self.scheme))

    def dev_counts(self, n_lines: int, langs: Sequence[str]) -> dict[str, Counter]:
        """Pre-token counts of the first ``n_lines`` dev lines of ``langs``."""
        return self._once(("dev", n_lines, tuple(langs)), lambda: parity.count_dev(
            {lang: self.dev[lang][:n_lines] for lang in langs}, self.scheme))

    def mixture_rows(self, settings: Sequence | None = None) -> list[dict]:
        """Characters per language in each mixture (default: τ, the natural proportions,
        balanced), with tier and CC-100 size."""
        settings = settings or (self.tau, NATURAL, BALANCED)
        chars = {s: data.chars_per_language(self.mixture(s)) for s in settings}
        return [{"language": f"{data.lang_name(lang)} ({lang})", "tier": self.tiers[lang],
                 "CC-100 GiB": self.sizes[lang], **{f"{label(s)} chars": chars[s][lang] for s in settings}}
                for lang in self.langs]

    def skew(self, setting) -> float:
        """Characters of the largest language / of the smallest, in ``setting``'s mixture."""
        chars = data.chars_per_language(self.mixture(setting))
        return max(chars.values()) / min(chars.values())

    # ---- runs
    def spec(self, setting=None, variant: str = "base", j_frac: float = 0.0, window: int = 100,
             alpha: float = 2.0, dev_lines: int | None = None, vocab: int | None = None,
             langs: Sequence[str] | None = None) -> RunSpec:
        """One run, canonical: the window and α only for the window variant, J and the
        dev lines not for classical BPE (it ranks nothing); defaults: all dev lines, the
        study's τ, vocabulary and languages."""
        if variant not in RUN_VARIANTS:
            raise ParityConfigError(f"unknown variant {variant!r} (known: {', '.join(RUN_VARIANTS)})")
        if variant != "window":
            window, alpha = 100, 2.0
        if variant == "classical":
            j_frac, dev_lines = 0.0, None
        return RunSpec(self.tau if setting is None else setting, variant, round(j_frac, 2), window, alpha,
                       dev_lines or self.n_dev, vocab or self.vocab, tuple(langs or self.langs))

    def named(self, name: str, setting=None) -> RunSpec:
        """The Table 1 tokenizer ``name`` (:data:`TABLE1_VARIANTS`) on ``setting``'s mixture."""
        return self.spec(setting, **TABLE1_VARIANTS[name])

    def trained(self, spec: RunSpec) -> parity.ParityResult:
        """The run ``spec`` (trained once)."""
        def make():
            counts = self.counts(spec.setting)
            return parity.train({lang: counts[lang] for lang in spec.langs},
                                self.dev_counts(spec.dev_lines, spec.langs), spec.vocab, spec.config(),
                                scheme=self.scheme)
        return self._once(("trained", spec), make)

    def evaluate(self, spec: RunSpec) -> dict:
        """The run on the test lines (each language encoded once): ``row`` (Table 1's
        columns, :func:`modtok.evaluation.metrics.parity_summary`), ``per_lang`` (tokens
        per line, bytes per token, utilisation), ``tiers`` (utilisation by tier) and
        ``merges`` (merges per choosing language, -1 = classical)."""
        def make():
            res = self.trained(spec)
            tok, size = res.tokenizer(), len(res.model)
            parallel = {lang: self.test[lang] for lang in res.languages}
            per_lang = [{"lang": lang, "tokens per line": metrics.token_counts(tok, lines).mean(),
                         "bytes per token": metrics.compression_rate(tok, lines, "bytes"),
                         "utilisation": metrics.vocab_utilisation(tok, lines, size)}
                        for lang, lines in parallel.items()]
            return {"row": metrics.parity_summary(tok, parallel, vocab_size=size), "per_lang": per_lang,
                    "tiers": metrics.vocab_utilisation_by_tier(tok, parallel, self.tiers, size),
                    "merges": res.language_merge_counts()}
        return self._once(("evaluate", spec), make)

    def price(self, setting, vocab: int | None = None) -> tuple[float, float]:
        """Base parity-aware vs classical BPE on ``setting``: (how much lower the Gini
        is, relative change of global compression), both as fractions."""
        c = self.evaluate(self.spec(setting, variant="classical", vocab=vocab))["row"]
        b = self.evaluate(self.spec(setting, vocab=vocab))["row"]
        return 1 - b["gini"] / c["gini"], b["global_compression"] / c["global_compression"] - 1

    # ---- the tables
    def table1(self, settings: Sequence | None = None,
               variants: Mapping[str, dict] = TABLE1_VARIANTS) -> list[dict]:
        """Table 1 analog: one row per mixture (default: τ, then the natural proportions)
        and tokenizer."""
        rows = []
        for setting in settings or (self.tau, NATURAL):
            for name, options in variants.items():
                ev = self.evaluate(self.spec(setting, **options))
                r = ev["row"]
                rows.append({"mixture": label(setting), "tokenizer": name, "Gini ↓": r["gini"],
                             "Gini per byte": r["gini_per_byte"],
                             "global compression (B/tok) ↑": r["global_compression"],
                             "mean per-language B/tok": np.mean([p["bytes per token"]
                                                                 for p in ev["per_lang"]]),
                             "utilisation": r["utilisation"], "Rényi eff.": r["renyi"],
                             "fertility": r["fertility"], "devtest tokens": r["tokens"]})
        return rows

    def vocab_sweep(self, sizes: Sequence[int], setting=None) -> list[dict]:
        """Classical vs base parity-aware BPE at several vocabulary sizes."""
        rows = []
        for v in sizes:
            cut, comp = self.price(setting, v)
            gini = {variant: self.evaluate(self.spec(setting, variant, vocab=v))["row"]["gini"]
                    for variant in ("classical", "base")}
            rows.append({"vocab": v, "classical Gini": gini["classical"], "parity Gini": gini["base"],
                         "Gini cut %": 100 * cut, "global compression change %": 100 * comp})
        return rows

    def tau_sweep(self, taus: Sequence[float]) -> list[dict]:
        """Classical vs base parity-aware BPE at the study's vocabulary, mixture by
        mixture, with the first language's share of the training text."""
        first = self.langs[0]
        rows = []
        for tau in taus:
            cut, comp = self.price(tau)
            chars = data.chars_per_language(self.mixture(tau))
            rows.append({"τ": tau,
                         f"{data.lang_name(first)} share of the text": chars[first] / sum(chars.values()),
                         "Gini cut %": 100 * cut, "global compression change %": 100 * comp})
        return rows

    def per_language(self, names: Sequence[str], key: str, setting=None) -> list[dict]:
        """``key`` (a :meth:`evaluate` ``per_lang`` column) of each language under each
        Table 1 tokenizer of ``names`` (Fig. 2 analog: ``"bytes per token"``)."""
        return [{"lang": data.lang_name(p["lang"]), "tokenizer": name, key: p[key]}
                for name in names for p in self.evaluate(self.named(name, setting))["per_lang"]]

    def tokens_per_line(self, name: str, setting=None) -> dict[str, float]:
        """``{lang: devtest tokens per line}`` of the Table 1 tokenizer ``name``."""
        ev = self.evaluate(self.named(name, setting))
        return {p["lang"]: p["tokens per line"] for p in ev["per_lang"]}

    def tier_rows(self, names: Sequence[str], setting=None) -> list[dict]:
        """Vocabulary utilisation by resource tier (Fig. 1 analog)."""
        return [{"tier": tier, "tokenizer": name, "utilisation": value} for name in names
                for tier, value in self.evaluate(self.named(name, setting))["tiers"].items()]

    def gini_rows(self, runs: Sequence[tuple[dict, RunSpec]]) -> list[dict]:
        """Gini and global compression of each ``(columns that name it, run)``."""
        return [{**names, **{k: self.evaluate(spec)["row"][k] for k in ("gini", "global_compression")}}
                for names, spec in runs]

    def balanced_rows(self, variants: Sequence[str] = ("classical", "base")) -> list[dict]:
        """The balanced mixture next to the unbalanced ones (τ, the natural proportions)."""
        return self.gini_rows([({"setting": str(s), "tokenizer": v}, self.spec(s, v))
                               for s in (BALANCED, self.tau, NATURAL) for v in variants])

    def dev_size_rows(self, sizes: Sequence[int]) -> list[dict]:
        """Table 4 analog: base parity-aware BPE ranked by the first n dev lines."""
        return self.gini_rows([({"dev lines": n}, self.spec(dev_lines=n)) for n in sizes])

    def window_rows(self, windows: Sequence[int]) -> list[dict]:
        """Table 3 analog: the window variant at several window sizes w (α = 2)."""
        return self.gini_rows([({"window w": w}, self.spec(variant="window", window=w)) for w in windows])

    def dev_curves(self, spec: RunSpec, points: int = 200) -> dict[str, tuple[list[int], list[int]]]:
        """``{language name: (merges, dev tokens)}`` during training, about ``points`` each."""
        res = self.trained(spec)
        step = max(1, len(res.merges) // points)
        xs = list(range(0, len(res.dev_tokens), step))
        return {data.lang_name(lang): (xs, res.dev_tokens[::step, i].tolist())
                for i, lang in enumerate(res.languages)}

    # ---- the Explore panel
    def explore(self, variant, setting, j_frac, window, alpha, dev_lines, vocab, langs) -> dict:
        """One run of the panel's settings next to classical BPE on the same mixture,
        vocabulary and languages: ``rows`` (Gini, global compression, utilisation,
        Rényi), ``per_lang`` (devtest tokens per line), ``key`` (the run); no rows
        under two languages."""
        langs = tuple(lang for lang in self.langs if lang in langs)
        if len(langs) < 2:
            return {"langs": langs, "rows": [], "per_lang": []}
        key = self.spec(setting, variant, j_frac, window, alpha, dev_lines, vocab, langs)
        runs = (("classical", self.evaluate(self.spec(setting, "classical", vocab=vocab, langs=langs))),
                (variant, self.evaluate(key)))
        columns = ("gini", "global_compression", "utilisation", "renyi")
        rows = [{"tokenizer": name, **{k: e["row"][k] for k in columns}} for name, e in runs]
        per_lang = [{"lang": data.lang_name(p["lang"]), "tokenizer": name,
                     "tokens per line": p["tokens per line"]} for name, e in runs for p in e["per_lang"]]
        return {"langs": langs, "key": key, "rows": rows, "per_lang": per_lang}
