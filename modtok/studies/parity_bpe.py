"""Parity-aware BPE, the study (notebook 05): classical vs parity-aware BPE
(:mod:`modtok.bpe.parity`) on the same training mixture and vocabulary, ranked by
a parallel dev set, evaluated on parallel devtest ("Parity-Aware Byte-Pair
Encoding", Foroutan, Meister et al. 2025: Table 1, Figs. 1-2, Tables 3-4).

The paper's Table 1 setting (§5.1 of the stored text): tokenizers trained on FineWeb2
(mC4-trained ones are in its Fig. 3) from the **unbalanced** mixture, examples per language
by temperature sampling with τ = 3.3 on mC4's per-language proportions (the same
proportions for both corpora), at 128k (and 256k) tokens; the FLORES+ dev set ranks the
languages. Our mixture: shares ∝ size_l^(1/τ) (the usual form of temperature sampling;
the text prints no formula) of the mC4 sizes of :data:`MC4_TOKENS_B`, with τ = 3.3. The
reference implementation's run **stops** when the language it chose has no pair of
frequency >= 2 (``on_exhausted="stop"``, golden README item 8). That is this study's
default (:data:`TAU`, :data:`RULE`). Where our text is too
small for the asked size under that rule, :meth:`ParityStudy.allowed_vocab` says how far
it goes and why; classical BPE is compared at the same number of tokens
(:meth:`ParityStudy.versus_classical`).

The training mixtures (:meth:`ParityStudy.mixture`):

- **unbalanced**: shares ∝ size_l^(1/τ) (:func:`modtok.mixture.natural`), τ = 3.3 or
  τ = 1 (the natural proportions); the total is the largest that every language's share
  fits in the text we have, so the binding language gives all of its text;
- **balanced** (:data:`BALANCED`): the same number of characters for every language.

A run is a :class:`RunSpec` (mixture, variant, J/K, window, α, dev lines, vocabulary,
languages, exhaustion rule, ratio targets), canonical so that settings a variant ignores
do not train it twice; :class:`ParityStudy` trains each run once and evaluates it once
(cached), and builds the notebook's tables from those evaluations. The disparity measure
is the Gini of the per-language token totals on the parallel test lines (0 = every
language pays the same; the paper's cost is tokens per aligned segment of a parallel
corpus, its Gini across languages). Resource tiers are the paper's (§5.1,
:func:`tiers_of`): by the number of training examples (lines, here) of each language.

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

import os
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import NamedTuple

import numpy as np

from modtok import mixture as mixtures
from modtok import options
from modtok.bpe import parity
from modtok.cache import Results
from modtok.errors import (ConfigError, DataError, MissingDevTextError, ParallelCorpusError, ParityConfigError,
                           UnknownLanguageError)
from modtok.evaluation import metrics
from modtok.outputs import output_dir
from modtok.studies import languages, paper_vs_here
from modtok.studies.contract import Paper, Study
from modtok.text import data
from modtok.text.corpus import TEXT, detect, expand, open_corpus
from modtok.text.manifest import load_manifest
from modtok.text.eval_sets import EvalSet
from modtok.text.scripts import check_script
from modtok.text.training import TRAINING_SCHEME, check_dev_languages, files_by_language, record_text

# The mixture's skew: mC4 per-language sizes, billions of tokens, from the mT5 paper (Xue
# et al. 2021, "mT5: A Massively Multilingual Pre-trained Text-to-Text Transformer", the
# per-language statistics of mC4), as tabulated in mayhewsw/multilingual-data-stats
# mc4/mc4.csv ("These numbers came from Table 5 in the mT5 paper"). The paper (§5.1) derives
# its per-language sampling parameters from mC4's per-language proportions (in what unit the
# text does not say; its appendix counts words for the LM data). Every mC4 language with a FLORES-200
# code is here (the romanised variants ru-Latn, hi-Latn, ... and co, fy, haw, hmn, la, which
# FLORES-200 lacks, are not); a language without a size is left out of the study (say so).
MC4_TOKENS_B: dict[str, float] = {
    "eng_Latn": 2733, "rus_Cyrl": 713, "spa_Latn": 433, "deu_Latn": 347, "fra_Latn": 318,
    "jpn_Jpan": 164, "ita_Latn": 162, "por_Latn": 146, "pol_Latn": 130, "vie_Latn": 116,
    "nld_Latn": 73, "tur_Latn": 71, "ind_Latn": 69, "ces_Latn": 63, "arb_Arab": 57,
    "pes_Arab": 52, "ron_Latn": 52, "swe_Latn": 45, "ell_Grek": 43, "ukr_Cyrl": 41,
    "zho_Hans": 39, "hun_Latn": 39, "dan_Latn": 29, "nob_Latn": 27, "kor_Hang": 26,
    "fin_Latn": 25, "hin_Deva": 24, "bul_Cyrl": 22, "slk_Latn": 18, "heb_Hebr": 17,
    "mar_Deva": 14, "cat_Latn": 13, "zsm_Latn": 13, "tha_Thai": 11, "lit_Latn": 11,
    "slv_Latn": 8.8, "ben_Beng": 7.3, "lvs_Latn": 7, "est_Latn": 6.9, "mlt_Latn": 5.2,
    "cym_Latn": 4.9, "azj_Latn": 4.4, "srp_Cyrl": 4.3, "als_Latn": 4, "tam_Taml": 3.4,
    "npi_Deva": 3.2, "kaz_Cyrl": 3.1, "mal_Mlym": 2.7, "isl_Latn": 2.6, "kat_Geor": 2.5,
    "glg_Latn": 2.4, "hye_Armn": 2.4, "urd_Arab": 2.4, "tgl_Latn": 2.1, "bel_Cyrl": 2,
    "mkd_Cyrl": 1.8, "khk_Cyrl": 1.8, "afr_Latn": 1.7, "snd_Arab": 1.6, "eus_Latn": 1.4,
    "tgk_Cyrl": 1.4, "som_Latn": 1.4, "tel_Telu": 1.3, "kan_Knda": 1.1, "ltz_Latn": 1,
    "kir_Cyrl": 1, "swh_Latn": 1, "mya_Mymr": 0.9, "uzn_Latn": 0.9, "guj_Gujr": 0.8,
    "sin_Sinh": 0.8, "epo_Latn": 0.7, "khm_Khmr": 0.6, "pan_Guru": 0.6, "gle_Latn": 0.5,
    "pbt_Arab": 0.4, "gla_Latn": 0.4, "kmr_Latn": 0.4, "jav_Latn": 0.3, "amh_Ethi": 0.3,
    "ydd_Hebr": 0.3, "zul_Latn": 0.2, "ceb_Latn": 0.2, "plt_Latn": 0.2, "sna_Latn": 0.2,
    "hat_Latn": 0.2, "hau_Latn": 0.2, "sun_Latn": 0.1, "nya_Latn": 0.1, "lao_Laoo": 0.1,
    "mri_Latn": 0.1, "smo_Latn": 0.09, "ibo_Latn": 0.09, "sot_Latn": 0.08, "xho_Latn": 0.06,
    "yor_Latn": 0.05,
}
SIZES_LABEL = "mC4 tokens (B)"
# The study's languages are OURS, not the paper's: its 30-language set is listed in its Table 9,
# which the stored text (../shared/papers/parity-aware-bpe.txt) lacks (searched: "Table 9" and
# the language names: none is named), so no list can be checked against it. These 18 are pool
# languages spread over scripts and mC4 sizes (high to low resource by §5.1's tiers); the
# setting's "data" field says so beside the paper's 30.
LANGUAGES = ["eng_Latn", "rus_Cyrl", "vie_Latn", "deu_Latn", "fra_Latn", "spa_Latn", "por_Latn",
             "ell_Grek", "pol_Latn", "ita_Latn", "nld_Latn", "tur_Latn", "hin_Deva", "ces_Latn",
             "tam_Taml", "ben_Beng", "tel_Telu", "mar_Deva"]
SMOKE_LANGUAGES = ["eng_Latn", "rus_Cyrl", "ell_Grek", "hin_Deva", "tel_Telu", "mar_Deva"]
MIN_LANGUAGES = 3  # fewer of our languages in the data: topped up from the data's others to this many
TAU = 3.3
NATURAL = 1.0
BALANCED = "balanced"
RULE = "stop"  # the reference's exhaustion rule; "skip" (pass over an exhausted language) is ours
RULES = options.PARITY_ON_EXHAUSTED
BYTES_PER_LINE, EQUAL = "bytes per line", "equal"  # the ratio variant's targets

# Table 1's tokenizers: name -> the RunSpec fields that make it (on top of a mixture).
TABLE1_VARIANTS = {
    "classical": {"variant": "classical"},
    "parity (base)": {"variant": "base"},
    "hybrid (J = K/2)": {"variant": "base", "j_frac": 0.5},
    "window (w=100, α=2)": {"variant": "window", "window": 100, "alpha": 2.0},
    "ratio (bytes-per-line targets)": {"variant": "ratio"},
}
# An extra row beside them: the ratio variant with every target 1 (not the paper's).
EQUAL_RATIO = {"ratio (r = 1)": {"variant": "ratio", "targets": EQUAL}}
RUN_VARIANTS = (*options.PARITY_VARIANTS, "ratio")
# The Explore panel's controls that only some variants read, and those variants: ParityStudy.spec
# sets the others' values to the defaults (window and α are the window variant's; classical BPE
# ranks nothing, so J, the dev lines and the exhaustion rule are not its), and the panel disables
# a control while the variant chosen does not read it (tests check each against spec).
USED_BY = {"j_frac": ("base", "window", "ratio"), "window": ("window",), "alpha": ("window",),
           "dev_lines": ("base", "window", "ratio"), "rule": ("base", "window", "ratio")}
BASE, RATIO = "parity (base)", "ratio (bytes-per-line targets)"
DEV_SET_VARIANTS = ("parity (base)", "hybrid (J = K/2)", "window (w=100, α=2)")  # those a dev set ranks
DEV_SIZES = (100, 300, 1000)  # App. C, Table 4: dev sets of 100, 300 and 1000 examples
WINDOWS = (50, 100, 200)  # App. C, Table 3: window sizes 50 to 200 (α = 2)
NEEDS = "needs a parallel dev set and parallel test lines"


# The paper's resource tiers (§5.1): a language with more than 1M training examples is high-
# resource, 500k-1M medium, fewer than 500k low.
HIGH_EXAMPLES, MEDIUM_EXAMPLES = 1_000_000, 500_000


def tiers_of(examples: Mapping[str, int], high: int = HIGH_EXAMPLES, medium: int = MEDIUM_EXAMPLES) -> dict[str, str]:
    """Resource tier by the number of training examples, the paper's definition (§5.1):
    more than ``high`` examples is "high", ``medium`` to ``high`` "medium", fewer than
    ``medium`` "low" (exactly 1M is medium: the text's "> 1M" and "500k-1M").

    >>> tiers_of({"a": 1_000_001, "b": 1_000_000, "c": 500_000, "d": 499_999})
    {'a': 'high', 'b': 'medium', 'c': 'medium', 'd': 'low'}
    """
    return {lang: "high" if n > high else "medium" if n >= medium else "low" for lang, n in examples.items()}


def label(setting) -> str:
    """How a mixture setting is named in tables: ``"τ = 3.3"``, ``"τ = 1"``, ``"balanced"``."""
    return setting if setting == BALANCED else f"τ = {setting:g}"


class RunSpec(NamedTuple):
    """One training run (hashable: the cache key). ``setting``: a temperature τ or
    :data:`BALANCED`; ``variant``: one of :data:`RUN_VARIANTS`; ``j_frac``: the hybrid
    share J/K of classical merges; ``dev_lines``: how many dev lines rank the languages
    (ratio: derive its targets); ``rule``: what happens when the chosen language has no
    pair of frequency >= 2 (:data:`RULES`); ``ratios``: the ratio variant's targets, in
    ``langs`` order (None for the others)."""

    setting: float | str
    variant: str
    j_frac: float
    window: int
    alpha: float
    dev_lines: int
    vocab: int
    langs: tuple[str, ...]
    rule: str = RULE
    ratios: tuple[float, ...] | None = None

    def config(self) -> parity.ParityConfig:
        """The :class:`~modtok.bpe.parity.ParityConfig` of this run (J = ⌊j_frac · merges⌋)."""
        shared = {"hybrid": int(self.j_frac * (self.vocab - 256)), "on_exhausted": self.rule}
        if self.variant == "ratio":
            return parity.ParityConfig(ratios=self.ratios, **shared)
        return parity.ParityConfig(variant=self.variant, window=self.window, alpha=self.alpha, **shared)


def _parallel_dev(corpora: data.Corpora, langs: Sequence[str]) -> tuple[dict[str, list[str]] | None, str]:
    """The parallel dev lines of ``langs`` (the evaluation text's dev split:
    :attr:`~modtok.text.data.Corpora.has_dev`, :meth:`~modtok.text.data.Corpora.dev`) and
    where they came from, or ``(None, why not)``. Never a substitute: no parallel dev
    split, no dev set."""
    if not corpora.has_dev:
        return None, f"none: {corpora.eval_label or 'the evaluation text'} has no dev split"
    dev = corpora.dev(langs=langs)
    label = corpora.eval_set.label("dev") if corpora.eval_set is not None else "dev split"
    if len({len(lines) for lines in dev.values()}) != 1:
        return None, f"none: {label} is not parallel (different numbers of lines)"
    return dev, f"{label}, {len(dev[langs[0]])} parallel lines"


def load(preferred: Sequence[str], vocab: int, scheme: str, train_chars: int, eval_lines: int | None = None,
         tau: float = TAU, sizes: Mapping[str, float] = MC4_TOKENS_B) -> ParityStudy:
    """The study on the configured data (:func:`modtok.text.data.default_corpora`):
    the languages :func:`modtok.studies.languages.choose` takes for the wish list
    ``preferred`` (same-script stand-ins on the wordfreq default; a user's manifest: its
    languages), topped up to :data:`MIN_LANGUAGES` (or as many as are preferred) from the
    data's others. A language without a size in ``sizes`` is left out, and so is one without
    training text; ``study.choice`` names every language asked for that is not used, with the
    reason. The parallel dev set ranks, the evaluation lines test; without a parallel dev
    split the study has no dev set (``study.has_dev`` False) and says so in ``dev_source``."""
    choice = languages.choose(preferred, min(MIN_LANGUAGES, len(preferred)), fewest=2)
    for lang in list(choice.used):
        if lang not in sizes:
            choice.leave_out(lang, f"no corpus size in sizes= ({SIZES_LABEL}: the mixtures' skew)")
    if len(choice.used) < 2:
        raise DataError("parity-aware BPE needs two languages with a corpus size and text; "
                        + "; ".join(choice.lines()))
    corpora = data.default_corpora(list(choice.used), train_chars=train_chars, eval_lines=eval_lines)
    choice.keep_only([lang for lang in choice.used if corpora.train.get(lang)], "no training text")
    langs = list(choice.used)
    dev, dev_source = _parallel_dev(corpora, langs)
    study = ParityStudy({lang: corpora.train[lang] for lang in langs}, dev, {lang: corpora.eval[lang] for lang in langs},
                        vocab=vocab, scheme=scheme, tau=tau, sizes=sizes, parallel=corpora.parallel_eval,
                        source=corpora.source, dev_source=dev_source, eval_label=corpora.eval_label)
    study.choice = choice
    return study


class ParityStudy(Study):
    """Training text, dev and test lines of the same languages, and every run on them,
    each trained and evaluated once.

    ``vocab``, ``tau``, ``rule``: the vocabulary, the unbalanced mixture and the
    exhaustion rule that a run has unless told otherwise; ``sizes``: the corpus sizes
    that skew the unbalanced mixtures (and set the tiers); ``dev``: parallel dev lines
    (None: the data has none, and only classical BPE and the mixtures can be asked for);
    ``parallel``: whether the test lines are parallel, which the paper's claims need;
    ``source`` / ``dev_source`` / ``eval_label``: where the text came from, in words;
    ``choice``: which languages were asked for and why any is not used
    (:class:`modtok.studies.languages.Choice`; :func:`load` sets it).
    """

    name, notebook = "parity_bpe", "05_parity_bpe"
    paper = Paper("parity-aware-bpe.txt", "Parity-Aware Byte-Pair Encoding")

    def __init__(self, train: Mapping[str, list[str]], dev: Mapping[str, list[str]] | None,
                 test: Mapping[str, list[str]], *, vocab: int, scheme: str, tau: float = TAU,
                 sizes: Mapping[str, float] = MC4_TOKENS_B, parallel: bool = True, source: str = "",
                 dev_source: str = "", rule: str = RULE, eval_label: str = "test lines"):
        if rule not in RULES:
            raise ParityConfigError(f"unknown exhaustion rule {rule!r} (known: {', '.join(RULES)})")
        self.langs = list(train)
        self.train, self.dev, self.test = dict(train), dev, test
        self.vocab, self.scheme, self.tau, self.sizes, self.rule = vocab, scheme, tau, sizes, rule
        if missing := mixtures.missing_sizes(self.langs, sizes):
            raise DataError(f"no corpus size for {', '.join(missing)} (sizes= sets the mixtures' skew)")
        self.parallel, self.source, self.dev_source, self.eval_label = parallel, source, dev_source, eval_label
        self.n_dev = len(dev[self.langs[0]]) if dev else 0
        self.choice = languages.Choice(list(self.langs), list(self.langs))  # what was asked for (load sets it)
        self.pool = mixtures.TextPool(self.train, seed=0)
        # trainings and evaluations on disk too (modtok.cache), keyed on the text they read and the run's spec
        self.results = Results("parity_bpe", (self.train, dev, test, scheme, dict(sizes)))

    @property
    def has_dev(self) -> bool:
        """Whether there is a parallel dev set (parity-aware BPE ranks languages by it)."""
        return self.n_dev > 0

    @property
    def examples(self) -> dict[str, int]:
        """Training examples (lines) of each language in the study's τ mixture: what the
        paper's tiers count (§5.1)."""
        return {lang: len(lines) for lang, lines in self.mixture(self.tau).items()}

    @property
    def tiers(self) -> dict[str, str]:
        """The paper's resource tier of each language (:func:`tiers_of`) by :attr:`examples`."""
        return tiers_of(self.examples)

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
            lines = self.pool.sample(share, total).lines()
            # A share below one line gets none (mC4 at τ = 1: Telugu is 1/2100 of English): an
            # empty training text, which the stop rule ends at once; every language stays listed.
            return {lang: lines.get(lang, []) for lang in self.langs}
        return self._once(("mixture", setting), make)

    def shares(self, setting) -> dict[str, float]:
        """The shares ``setting``'s mixture aims at (equal for :data:`BALANCED`)."""
        if setting == BALANCED:
            return mixtures.uniform(self.langs)
        return mixtures.natural(self.langs, self.sizes, tau=setting)

    def counts(self, setting) -> dict[str, Counter]:
        """Pre-token counts of :meth:`mixture`."""
        return self._once(("counts", setting),
                          lambda: parity.count_corpus(self.mixture(setting), self.scheme))

    def dev_counts(self, n_lines: int, langs: Sequence[str]) -> dict[str, Counter] | None:
        """Pre-token counts of the first ``n_lines`` dev lines of ``langs`` (None: no dev set)."""
        if not self.has_dev:
            return None
        return self._once(("dev", n_lines, tuple(langs)), lambda: parity.count_dev(
            {lang: self.dev[lang][:n_lines] for lang in langs}, self.scheme))

    def mixture_rows(self, settings: Sequence | None = None) -> list[dict]:
        """Characters per language in each mixture (default: τ, the natural proportions,
        balanced), with the paper's tier, the training examples it counts and the corpus size."""
        settings = settings or (self.tau, NATURAL, BALANCED)
        chars = {s: data.chars_per_language(self.mixture(s)) for s in settings}
        examples, tiers = self.examples, self.tiers
        return [{"language": f"{data.lang_name(lang)} ({lang})", "tier": tiers[lang],
                 f"examples ({label(self.tau)})": examples[lang], SIZES_LABEL: self.sizes[lang],
                 **{f"{label(s)} chars": chars[s][lang] for s in settings}} for lang in self.langs]

    def skew(self, setting) -> float:
        """Characters of the largest language / of the smallest, in ``setting``'s mixture
        (inf when a language's share is below one line)."""
        chars = data.chars_per_language(self.mixture(setting))
        return max(chars.values()) / min(chars.values()) if min(chars.values()) else float("inf")

    def skew_text(self, setting) -> str:
        """:meth:`skew` as notebook 05 prints it: ``"17.4x"``, or the languages the mixture gives no
        line (a ratio to nothing is no number: it printed "infx" on a UDHR corpus at τ = 1, where four
        of six languages got none)."""
        empty = [lang for lang, lines in self.mixture(setting).items() if not lines]
        if empty:
            return f"no line for {len(empty)} of {len(self.langs)} languages ({', '.join(empty)}: a share below one line)"
        return f"{self.skew(setting):.1f}x"

    # ---- runs
    def spec(self, setting=None, variant: str = "base", j_frac: float = 0.0, window: int = 100,
             alpha: float = 2.0, dev_lines: int | None = None, vocab: int | None = None,
             langs: Sequence[str] | None = None, rule: str | None = None,
             targets: str = BYTES_PER_LINE) -> RunSpec:
        """One run, canonical: the window and α only for the window variant, J and the
        dev lines not for classical BPE (it ranks nothing), nor the exhaustion rule (its
        run ends when no pair of the concatenation is frequent, whatever the rule); the
        ratio variant's targets (``targets``: :data:`BYTES_PER_LINE`, derived by
        :func:`~modtok.bpe.parity.ratio_targets` from the run's dev lines, or
        :data:`EQUAL`, every r = 1). Defaults: all dev lines, the study's τ, vocabulary,
        rule and languages. Anything but classical needs the dev set."""
        if variant not in RUN_VARIANTS:
            raise ParityConfigError(f"unknown variant {variant!r} (known: {', '.join(RUN_VARIANTS)})")
        if variant != "classical" and not self.has_dev:
            raise MissingDevTextError(f"the {variant} variant needs a parallel dev set ({self.dev_source})")
        if targets not in (BYTES_PER_LINE, EQUAL):
            raise ParityConfigError(f"unknown ratio targets {targets!r} (known: {BYTES_PER_LINE!r}, {EQUAL!r})")
        rule = rule or self.rule
        if rule not in RULES:
            raise ParityConfigError(f"unknown exhaustion rule {rule!r} (known: {', '.join(RULES)})")
        if variant != "window":
            window, alpha = 100, 2.0
        if variant == "classical":
            j_frac, dev_lines, rule = 0.0, None, RULE
        langs = tuple(langs or self.langs)
        dev_lines = dev_lines or self.n_dev
        ratios = None
        if variant == "ratio":
            ratios = ((1.0,) * len(langs) if targets == EQUAL else
                      tuple(parity.ratio_targets({lang: self.dev[lang][:dev_lines] for lang in langs}).values()))
        return RunSpec(self.tau if setting is None else setting, variant, round(j_frac, 2), window, alpha,
                       dev_lines, vocab or self.vocab, langs, rule, ratios)

    def named(self, name: str, setting=None, **fields) -> RunSpec:
        """The Table 1 tokenizer ``name`` (:data:`TABLE1_VARIANTS` or :data:`EQUAL_RATIO`)
        on ``setting``'s mixture; ``fields``: other :meth:`spec` fields (vocab, rule)."""
        return self.spec(setting, **{**TABLE1_VARIANTS, **EQUAL_RATIO}[name], **fields)

    def trained(self, spec: RunSpec) -> parity.ParityResult:
        """The run ``spec`` (trained once)."""
        def make():
            counts = self.counts(spec.setting)
            dev = None if spec.variant == "classical" else self.dev_counts(spec.dev_lines, spec.langs)
            return parity.train({lang: counts[lang] for lang in spec.langs}, dev, spec.vocab, spec.config(),
                                scheme=self.scheme)
        return self._once(("trained", spec), make, keep=True)

    def allowed_vocab(self, asked: int, setting=None) -> tuple[int, str | None]:
        """How far base parity-aware BPE gets towards ``asked`` tokens on ``setting``'s
        mixture under the study's rule: ``(tokens, stop message or None)``. Under the
        reference rule the run ends when the language it chose has no pair of frequency
        >= 2, so a small text can allow less than the paper's vocabulary; a run asked for
        fewer tokens than that is the same run, cut (greedy: a prefix)."""
        res = self.trained(self.spec(setting, vocab=asked))
        return len(res.model), res.stop_message

    def evaluate(self, spec: RunSpec) -> dict:
        """The run on the test lines (each language encoded once): ``row`` (Table 1's
        columns, :func:`modtok.evaluation.metrics.parity_summary`), ``per_lang`` (the
        per-language rows of :func:`modtok.evaluation.metrics.language_table_of`, with tokens
        per line and utilisation), ``tiers`` (utilisation by tier),
        ``merges`` (merges per choosing language, -1 = classical), ``size`` (tokens of
        the model: below ``spec.vocab`` when the run stopped), ``stop`` (its stop
        message or None) and ``line_tokens`` (``{lang: tokens of each test line}``: the
        intervals over lines, :meth:`over_lines`)."""
        def make():
            res = self.trained(spec)
            tok, size = res.tokenizer(), len(res.model)
            encoded = metrics.encode(tok, {lang: self.test[lang] for lang in res.languages})
            per_lang = [{**r, "tokens per line": r["tokens"] / len(encoded[r["lang"]]),
                         "utilisation": metrics.vocab_utilisation_of(encoded[r["lang"]], size)}
                        for r in metrics.language_table_of({lang: {spec.variant: e} for lang, e in encoded.items()})]
            return {"row": metrics.parity_summary_of(encoded, vocab_size=size), "per_lang": per_lang,
                    "tiers": metrics.vocab_utilisation_by_tier_of(encoded, self.tiers, size),
                    "merges": res.language_merge_counts(), "size": size, "stop": res.stop_message,
                    "line_tokens": {lang: e.tokens.tolist() for lang, e in encoded.items()}}
        return self._once(("evaluate", spec), make, keep=True)

    def over_lines(self, runs: Mapping[str, RunSpec], statistic) -> dict[str, paper_vs_here.Measured | float]:
        """``statistic(gini, compression)`` (``{name: value}``) of the named ``runs``' test Gini
        (of per-language token totals, as Table 1's) and global compression (bytes per token),
        each ``{run name: value}``, with its interval over the parallel test lines
        (:func:`modtok.studies.paper_vs_here.over_lines`: line ``i`` of every language under
        every run drawn together, so a change against classical BPE sees the same lines on
        both sides)."""
        langs = list(self.langs)
        columns = {f"{name}|{lang}": self.evaluate(spec)["line_tokens"][lang] for name, spec in runs.items()
                   for lang in langs}
        columns |= {f"bytes|{lang}": [len(line.encode("utf-8")) for line in self.test[lang]] for lang in langs}

        def measures(t):  # t[column]: a total over the drawn lines (a float, or one per replicate)
            tokens = {name: np.stack([np.asarray(t[f"{name}|{lang}"]) for lang in langs], axis=-1) for name in runs}
            nbytes = sum(t[f"bytes|{lang}"] for lang in langs)
            return statistic({name: np.apply_along_axis(metrics.gini, -1, v) for name, v in tokens.items()},
                             {name: nbytes / v.sum(-1) for name, v in tokens.items()})

        return paper_vs_here.over_lines(columns, measures)

    def classical_at(self, spec: RunSpec) -> RunSpec:
        """Classical BPE on ``spec``'s mixture and languages with as many tokens as
        ``spec``'s run has (a run the stop rule ended early is compared at its own size; one
        merge at least: a run that stopped before its first merge is the bytes alone)."""
        size = max(self.evaluate(spec)["size"], 257)
        return self.spec(spec.setting, "classical", vocab=size, langs=spec.langs)

    def versus_classical(self, spec: RunSpec) -> tuple[float, float]:
        """``spec`` vs classical BPE at the same size (:meth:`classical_at`): the relative
        change of the devtest Gini and of global compression, as fractions (negative:
        lower)."""
        r = self.evaluate(spec)["row"]
        c = self.evaluate(self.classical_at(spec))["row"]
        return _change(r["gini"], c["gini"]), _change(r["global_compression"], c["global_compression"])

    def price(self, setting=None, vocab: int | None = None, rule: str | None = None) -> tuple[float, float]:
        """Base parity-aware vs classical BPE (same size) on ``setting``: (how much lower
        the Gini is, relative change of global compression), both as fractions."""
        gini, comp = self.versus_classical(self.spec(setting, vocab=vocab, rule=rule))
        return -gini, comp

    # ---- the tables
    def table1_row(self, spec: RunSpec, names: Mapping[str, object]) -> dict:
        """One row of the Table 1 analog: ``names`` (the columns that name it), the size,
        the rule, the measures, and the change vs classical BPE of the same size."""
        ev = self.evaluate(spec)
        r = ev["row"]
        gini, comp = self.versus_classical(spec)
        return {**names, "mixture": label(spec.setting), "asked": spec.vocab, "tokens": ev["size"],
                "rule": spec.rule if spec.variant != "classical" else "—", "Gini ↓": r["gini"],
                "Gini vs classical %": 100 * gini, "global compression (B/tok) ↑": r["global_compression"],
                "compression vs classical %": 100 * comp, "Gini per byte": r["gini_per_byte"],
                "mean per-language B/tok": np.mean([p["bytes_per_token"] for p in ev["per_lang"]]),
                "utilisation": r["utilisation"], "Rényi eff.": r["renyi"], "fertility": r["fertility"],
                "devtest tokens": r["tokens"]}

    def table1(self, extras: Sequence[tuple[str, str, RunSpec]] = (),
               variants: Mapping[str, dict] = TABLE1_VARIANTS) -> list[dict]:
        """Table 1 analog: the headline rows (each of ``variants`` on the study's τ,
        vocabulary and rule), then the labelled ``extras`` ``(what, tokenizer, run)``."""
        rows = [self.table1_row(self.named(name), {"row": "headline", "tokenizer": name}) for name in variants]
        return rows + [self.table1_row(spec, {"row": f"extra: {what}", "tokenizer": name})
                       for what, name, spec in extras]

    def table1_extras(self, asked: Sequence[int] = (), small: int | None = None) -> list[tuple[str, str, RunSpec]]:
        """The labelled extra rows beside the headline, ``(what, tokenizer, run)``: the
        ratio variant with r = 1; the natural proportions (τ = 1); a ``small``
        vocabulary; each of ``asked`` (the paper's sizes) under the study's rule where the
        text allows more tokens than the headline has, and, where that rule stopped the run,
        under the non-reference rule "skip" (an exhausted language is passed over);
        classical beside each."""
        pair = ("classical", "parity (base)")
        extras = [("r = 1 targets", "ratio (r = 1)", self.named("ratio (r = 1)"))]
        extras += [(label(NATURAL), name, self.named(name, NATURAL)) for name in pair]
        if small:
            extras += [(f"vocab {small:,}", name, self.named(name, vocab=small)) for name in pair]
        for vocab in asked:
            reached = self.allowed_vocab(vocab)[0]
            if reached > self.vocab:
                extras += [(f"vocab {vocab:,}", name, self.named(name, vocab=vocab)) for name in pair]
            if reached < vocab:  # the stop rule bit: what "skip" would have done
                extras += [(f"vocab {vocab:,}, rule skip", name, self.named(name, vocab=vocab, rule="skip"))
                           for name in pair]
        return extras

    def vocab_sweep(self, sizes: Sequence[int], setting=None) -> list[dict]:
        """Classical vs base parity-aware BPE at several vocabulary sizes (same size)."""
        rows = []
        for v in sizes:
            spec = self.spec(setting, vocab=v)
            gini, comp = self.versus_classical(spec)
            rows.append({"vocab": v, "parity tokens": self.evaluate(spec)["size"],
                         "classical Gini": self.evaluate(self.classical_at(spec))["row"]["gini"],
                         "parity Gini": self.evaluate(spec)["row"]["gini"],
                         "Gini cut %": -100 * gini, "global compression change %": 100 * comp})
        return rows

    def tau_sweep(self, taus: Sequence[float]) -> list[dict]:
        """Classical vs base parity-aware BPE (same size) at the study's vocabulary,
        mixture by mixture, with the largest language's share of the training text."""
        first = max(self.langs, key=self.sizes.__getitem__)
        rows = []
        for tau in taus:
            spec = self.spec(tau)
            cut, comp = self.price(tau)
            chars = data.chars_per_language(self.mixture(tau))
            rows.append({"τ": tau, "parity tokens": self.evaluate(spec)["size"],
                         f"{data.lang_name(first)} share of the text": chars[first] / sum(chars.values()),
                         "Gini cut %": 100 * cut, "global compression change %": 100 * comp})
        return rows

    def rows(self, names: Sequence[str], setting=None) -> list[dict]:
        """The per-language rows (:func:`modtok.evaluation.metrics.language_table_of`, no
        reference tokenizer: NSL is NaN) of each Table 1 tokenizer of ``names`` on the test
        lines, with tokens per line and utilisation."""
        return [{**p, "tokenizer": name} for name in names for p in self.evaluate(self.named(name, setting))["per_lang"]]

    def per_language(self, names: Sequence[str], key: str, setting=None) -> list[dict]:
        """``key`` (a :meth:`rows` column) of each language under each Table 1 tokenizer of
        ``names`` (Fig. 2 analog: ``"bytes_per_token"``)."""
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
        """Gini, global compression and size of each ``(columns that name it, run)``."""
        return [{**names, **{k: self.evaluate(spec)["row"][k] for k in ("gini", "global_compression")},
                 "tokens": self.evaluate(spec)["size"]} for names, spec in runs]

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

    # ---- the paper's claims (paper_figures.toml [parity_bpe.*])
    def setting(self, asked: int | None = None) -> dict[str, str]:
        """Our setting, in the fields the paper's claims record theirs in
        (:data:`modtok.studies.paper_vs_here.SETTING_FIELDS`), from this study's own
        configuration; ``asked``: the vocabulary asked for (the headline is :attr:`vocab`)."""
        chars, examples = data.chars_per_language(self.mixture(self.tau)), self.examples
        smallest = min(self.langs, key=chars.__getitem__)
        asked_note = f"{asked:,} asked, " if asked else ""
        return {
            "data": f"{len(self.langs)} languages of our choosing (the paper's 30 are in its Table 9, which its stored "
                    f"text lacks); {self.source.split('; evaluation:')[0]}; unbalanced, shares ∝ "
                    f"size^(1/τ), τ = {self.tau:g}, of the {SIZES_LABEL} of mT5's mC4 table",
            "size": f"{sum(chars.values()):,} characters, {sum(examples.values()):,} lines in the τ = {self.tau:g} "
                    f"mixture (smallest: {data.lang_name(smallest)}, {chars[smallest]:,} characters)",
            "vocabulary": f"{self.vocab:,} tokens ({asked_note}the reference stop rule); hybrid J = K/2, "
                          "window w = 100, α = 2",
            "pretokenization": f"modtok scheme {self.scheme!r}",
            "heldout": f"dev: {self.dev_source}; test: {self.eval_label} "
                       f"({'parallel' if self.parallel else 'not parallel'})",
        }

    def paper_values(self, asked: int) -> dict[str, float | paper_vs_here.NotMeasured]:
        """The measured value of every ``[parity_bpe.*]`` claim at the headline setting
        (``asked``: the vocabulary asked for; the headline is :attr:`vocab`), or
        :class:`~modtok.studies.paper_vs_here.NotMeasured` with the reason. Every Gini and
        compression claim carries its interval over the test lines (:meth:`over_lines`, one
        draw of lines for all of them); utilisation and the window's stability are points."""
        keys = [c.key for c in paper_vs_here.claims("parity_bpe")]
        if not (self.has_dev and self.parallel):
            why = f"{NEEDS} ({self.dev_source}; test: {self.eval_label})"
            return {k: paper_vs_here.NotMeasured(why) for k in keys}
        specs = {name: self.named(name) for name in TABLE1_VARIANTS}
        runs = {**specs, **{f"classical at {name}": self.classical_at(spec) for name, spec in specs.items()
                            if name != "classical"}}
        if self.n_dev > DEV_SIZES[0]:
            runs["dev100"] = self.spec(dev_lines=DEV_SIZES[0])
            runs["classical at dev100"] = self.classical_at(runs["dev100"])
        runs |= {"balanced": self.spec(BALANCED), "classical at balanced": self.classical_at(self.spec(BALANCED))}
        others = [name for name in TABLE1_VARIANTS if name not in ("classical", BASE)]

        def claims_of(gini, comp) -> dict:  # every Gini and compression claim, from the runs' measures
            def change(name, of):  # relative change vs classical BPE of the same size
                return of[name] / of[f"classical at {name}"] - 1
            out = {"gini_change": change(BASE, gini), "hybrid_gini_change": change("hybrid (J = K/2)", gini),
                   "window_gini_change": change("window (w=100, α=2)", gini),
                   "base_lowest_gini": gini[BASE] - np.min([gini[name] for name in others], axis=0),
                   "compression_change": change(BASE, comp), "ratio_gini_change": change(RATIO, gini),
                   "ratio_smallest_reduction": gini[RATIO] - np.max([gini[name] for name in DEV_SET_VARIANTS], axis=0),
                   "ratio_compression_change": change(RATIO, comp),
                   # price(BALANCED) - price(τ): how much less the Gini is cut on the balanced mixture
                   "balanced_smaller_cut": change(BASE, gini) - change("balanced", gini)}
            if "dev100" in gini:
                out["dev100_gini_cut"] = -100 * change("dev100", gini)
                out["dev100_share_of_full"] = change("dev100", gini) / change(BASE, gini)
            return out

        values: dict[str, float | paper_vs_here.Measured | paper_vs_here.NotMeasured] = self.over_lines(runs, claims_of)
        utilisation = self.evaluate(specs[BASE])["row"]["utilisation"]
        values["utilisation_change"] = _change(utilisation,
                                               self.evaluate(self.classical_at(specs[BASE]))["row"]["utilisation"])
        if self.n_dev <= DEV_SIZES[0]:
            values["dev100_gini_cut"] = values["dev100_share_of_full"] = paper_vs_here.NotMeasured(
                f"needs more than {DEV_SIZES[0]} dev lines ({self.n_dev})")
        comp = [self.evaluate(self.spec(variant="window", window=w))["row"]["global_compression"] for w in WINDOWS]
        values["window_stable"] = (max(comp) - min(comp)) / min(comp)
        return values

    measured = paper_values  # the contract's name (modtok.studies.contract)

    def reasons(self, values: Mapping[str, float | paper_vs_here.NotMeasured], asked: int) -> dict[str, str]:
        """A measured reason for each claim of ``values`` (:meth:`paper_values`) whose
        verdict does not hold, where this study measures one (the others: "reason not
        measured" in the table)."""
        claims = {c.key: c for c in paper_vs_here.claims("parity_bpe")}
        failing = {k for k, v in values.items()
                   if not isinstance(v, paper_vs_here.NotMeasured) and claims[k].verdict(v) == "does not hold"}
        out: dict[str, str] = {}
        if not failing:
            return out
        row = {name: self.table1_row(self.named(name), {}) for name in DEV_SET_VARIANTS}
        cost = "; ".join(f"{name}: Gini {r['Gini ↓']:.4f}, compression {r['compression vs classical %']:+.1f}%"
                         for name, r in row.items())
        for key in ("compression_change", "ratio_compression_change"):
            if key in failing:
                out[key] = (f"the compression cost grows with how far the Gini is pushed below classical BPE's "
                            f"{self.evaluate(self.classical_at(self.named(BASE)))['row']['gini']:.4f} ({cost})")
        if "base_lowest_gini" in failing:  # where, measured: the variants' test Ginis side by side
            gini = {name: self.evaluate(self.named(name))["row"]["gini"] for name in TABLE1_VARIANTS}
            out["base_lowest_gini"] = "measured where, not why: test Gini " + ", ".join(
                f"{name} {g:.4f}" for name, g in gini.items())
        if "utilisation_change" in failing:  # where, measured: utilisation by the resource tiers of §5.1
            base = self.named(BASE)
            tiers = {name: self.evaluate(spec)["tiers"] for name, spec in (("classical", self.classical_at(base)), (BASE, base))}
            out["utilisation_change"] = ("measured where, not why: utilisation by resource tier, classical -> base: " +
                                         ", ".join(f"{tier} {tiers['classical'][tier]:.3f} -> {tiers[BASE][tier]:.3f}"
                                                   for tier in tiers[BASE]))
        if failing & {"ratio_gini_change", "ratio_smallest_reduction", "ratio_compression_change"}:
            train_gap, test_gap = self.ratio_target_gaps()
            why = (f"the ratio run meets its targets on the training text (within {train_gap:.1%}), not on the "
                   f"test text (off by up to {test_gap:.0%}): the two differ in domain")
            for key in failing & {"ratio_gini_change", "ratio_smallest_reduction"}:
                out[key] = why
            if "ratio_compression_change" in failing:
                out["ratio_compression_change"] += f"; {why}"
        return out

    def ratio_target_gaps(self) -> tuple[float, float]:
        """How far the ratio variant's per-language compression, relative to the first
        language's, is from its targets r_l: the largest relative gap on the training text
        (the training compression the variant equalises) and on the test lines (bytes per
        token)."""
        spec = self.named(RATIO)
        res, targets = self.trained(spec), np.array(spec.ratios)
        train = res.train_tokens[0] / res.train_tokens[-1]
        test = np.array([p["bytes_per_token"] for p in self.evaluate(spec)["per_lang"]])
        return (float(np.max(np.abs(train / train[0] / targets - 1))),
                float(np.max(np.abs(test / test[0] / targets - 1))))

    def reading(self, table1: Sequence[dict]) -> str:
        """How to read this run's Table 1 analog (``table1``: :meth:`table1`'s rows), as the
        notebook prints it (no number of it is typed in the notebook's prose): how far each
        headline tokenizer got and why the base run ended, what parity cost against classical
        BPE of the same size, whether the ratio variant met its targets, and the extra rows."""
        head = {r["tokenizer"]: r for r in table1 if r["row"] == "headline"}
        base, stop = head[BASE], self.evaluate(self.named(BASE))["stop"]
        train_gap, test_gap = self.ratio_target_gaps()
        return "\n".join([
            f"Asked for {base['asked']:,} tokens on the τ = {self.tau:g} mixture, the headline runs learned "
            + ", ".join(f"{name} {r['tokens']:,}" for name, r in head.items())
            + f"; base parity-aware BPE {'stopped: ' + stop if stop else 'reached the size asked'}.",
            f"Against classical BPE of the same size (change of the Gini / of global compression): base parity-aware "
            f"BPE {_versus(base)}, its Gini {base['Gini ↓']:.4f}; "
            + "; ".join(f"{name}: {_versus(r)}" for name, r in head.items() if name not in ("classical", BASE)) + ".",
            f"The ratio variant meets its targets on the training text to within {train_gap:.1%} and misses them "
            f"on the test lines by up to {test_gap:.0%}.",
            "Extra rows: " + "; ".join(f"{r['row'][len('extra: '):]}, {r['tokenizer']} ({r['tokens']:,} tokens): "
                                       f"{_versus(r)}" for r in table1 if r["row"] != "headline"
                                       and r["tokenizer"] != "classical") + "."])

    # ---- the Explore panel
    def explore(self, variant, setting, j_frac, window, alpha, dev_lines, vocab, langs, rule=RULE) -> dict:
        """One run of the panel's settings next to classical BPE on the same mixture,
        languages and size: ``rows`` (tokens, Gini, global compression, utilisation,
        Rényi), ``per_lang`` (devtest tokens per line), ``key`` (the run); no rows under
        two languages."""
        langs = tuple(lang for lang in self.langs if lang in langs)
        if len(langs) < 2:
            return {"langs": langs, "rows": [], "per_lang": []}
        key = self.spec(setting, variant, j_frac, window, alpha, dev_lines, vocab, langs, rule)
        runs = (("classical", self.classical_at(key)), (variant, key))
        columns = ("gini", "global_compression", "utilisation", "renyi")
        rows = [{"tokenizer": name, "tokens": self.evaluate(s)["size"],
                 **{k: self.evaluate(s)["row"][k] for k in columns}} for name, s in runs]
        per_lang = [{"lang": data.lang_name(p["lang"]), "tokenizer": name,
                     "tokens per line": p["tokens per line"]} for name, s in runs for p in self.evaluate(s)["per_lang"]]
        return {"langs": langs, "key": key, "rows": rows, "per_lang": per_lang}



def _versus(row: Mapping) -> str:
    """A Table 1 row against classical BPE of its size, as :meth:`ParityStudy.reading` says it.

    >>> _versus({"Gini vs classical %": -93.2, "compression vs classical %": -5.91})
    'Gini -93% / compression -5.9%'
    """
    return f"Gini {row['Gini vs classical %']:+.0f}% / compression {row['compression vs classical %']:+.1f}%"


def _change(new: float, old: float) -> float:
    """``new / old - 1`` (nan when ``old`` is 0: no change can be stated)."""
    return new / old - 1 if old else float("nan")


# --------------------------------------------------------------------------
# ``modtok parity-bpe``: one run on text files


class CommandRun(NamedTuple):
    """What ``modtok parity-bpe`` trained (:func:`run`): the result, whether dev text ranked it,
    and the output directory."""

    result: parity.ParityResult
    has_dev: bool
    out: Path

    def lines(self) -> list[str]:
        """The run's summary: merges and tokens saved (with the dev Gini), merges per language."""
        res = self.result
        per_lang = ", ".join(f"{'global' if i == parity.GLOBAL else res.languages[i]} {n}"
                             for i, n in res.language_merge_counts().items())
        gini = f", dev Gini {res.gini_dev():.4f}" if self.has_dev else ""
        return [f"saved {len(res.merges)} merges, {len(res.model)} tokens{gini} -> {self.out}",
                f"merges per language: {per_lang}"]


def _read_training(spec, lang: str, compat: str | None, any_script: bool, text_field: str | None = None) -> list[str]:
    """One language's text: any format open_corpus reads (JSONL documents' ``text_field``,
    default ``text``); compat mode reads plain text the reference's way."""
    if compat:
        plain = [spec] if isinstance(spec, str) else spec
        if any(detect(f).format != TEXT or detect(f).compression for f in plain):
            raise ConfigError(f"{lang}: --compat reference reads plain text files, as the reference does")
        lines = [line for f in plain for line in parity.reference_lines(f)]
        check_script(lang, lines, ", ".join(plain), any_script)
    else:
        lines = open_corpus(spec, lang=lang, text_field=text_field, any_script=any_script).lines()
    if not any(line.strip() for line in lines):
        raise DataError(f"{spec}: no text for {lang} (an empty file trains nothing)")
    return lines


def _read_dev(dev_files: Mapping[str, str], langs: Sequence[str], compat: str | None,
              any_script: bool) -> dict[str, list[str]]:
    """The dev files, aligned as every evaluation text is (line i is line i: a blank line
    in one file only is refused, ids align JSON records); compat mode as the reference."""
    if compat:
        dev = {lang: _read_training(dev_files[lang], lang, compat, any_script) for lang in langs}
        parallel = len({len(lines) for lines in dev.values()}) == 1
    else:
        given = EvalSet("--dev files", Path.cwd(), {"dev": {lang: [f] for lang, f in dev_files.items()}},
                        name="--dev files")
        dev, parallel = given.aligned(langs, "dev", any_script=any_script)
    if not parallel:
        sizes = ", ".join(f"{dev_files[lang]}: {len(dev[lang])}" for lang in langs)
        raise ParallelCorpusError(f"the --dev files are not parallel (lines: {sizes})")
    return dev


def _shown(spec) -> str:
    return spec if isinstance(spec, str) else " ".join(spec)


@dataclass(frozen=True)
class ParityOptions:
    """What ``modtok parity-bpe`` is asked (:func:`run` reads the fields; the command line
    builds them from its flags, and ``run.json``'s ``args`` is their ``asdict``): the training
    text as ``train`` files named after their languages or as a ``manifest`` (one of them),
    the parallel ``dev`` files, ``langs`` chosen and ordered, ``merges`` merges or a ``vocab``
    size; the rest as :func:`modtok.bpe.parity.train_from_lines` takes them.

    >>> ParityOptions("out", train=["eng_Latn.txt"]).merges
    1000
    """

    out: object
    train: list[str] | None = None
    manifest: object = None
    dev: list[str] | None = None
    langs: list[str] | None = None
    merges: int = 1000
    vocab: int | None = None
    scheme: str = TRAINING_SCHEME
    compat: str | None = None
    variant: str = "base"
    hybrid: int = 0
    window: int = 100
    alpha: float = 2.0
    ratios: list[float] | None = None
    min_frequency: int = 2
    on_exhausted: str | None = None
    any_script: bool = False


def run(o: ParityOptions, *, force: bool = False, log=None) -> CommandRun:
    """``modtok parity-bpe`` as ``o`` asks (:class:`ParityOptions`; below, its fields by
    name): :func:`modtok.bpe.parity.train_from_lines` on text files, one per
    language (``train``, named after their languages, or a ``manifest``), ranked on the parallel
    ``dev`` files (none: no dev text), ``langs`` chosen and ordered (default: every one given),
    ``merges`` merges or a ``vocab`` size; ``merges.txt``, ``tokenizer.json`` and
    ``trajectory.json`` saved into ``out`` (:func:`modtok.outputs.output_dir`; ``force``: over an
    earlier parity-bpe; ``run.json``'s ``args``: ``asdict(o)``). What was read goes to
    ``log`` (a callable taking one line)."""
    out, train, manifest, dev, compat, any_script = o.out, o.train, o.manifest, o.dev, o.compat, o.any_script
    say = log or (lambda line: None)
    if bool(train) == bool(manifest):
        raise ConfigError("give the training text as --train FILE... or --manifest FILE (one of them)")
    # Files are matched to languages by the codes in their names, never by position: swapped
    # --dev files once trained English under mar_Deva's name. --langs chooses and orders.
    entries = load_manifest(manifest) if manifest else {}
    files = {lang: e.paths for lang, e in entries.items()} if manifest else files_by_language(train, "--train")
    fields = {lang: e.text_field for lang, e in entries.items()}  # a manifest entry's own JSONL field
    langs = o.langs or list(files)
    missing = [lang for lang in langs if lang not in files]
    if missing:
        raise UnknownLanguageError(missing[0], files, "no --train file is named after it"
                                   if train else "not in the manifest")
    if len(set(langs)) != len(langs):
        raise ConfigError(f"--langs names a language twice ({' '.join(langs)})")
    sources = {lang: files[lang] for lang in langs}
    dev_files = files_by_language(dev, "--dev") if dev else {}
    check_dev_languages(dev_files, langs)
    inputs = [src.path for spec in sources.values() for src in expand(spec)] + list(dev_files.values())
    # the output first: one in the way costs no reading
    with output_dir(out, command="parity-bpe", args=asdict(o), force=force, inputs=inputs) as written:
        text = {lang: _read_training(spec, lang, compat, any_script, fields.get(lang)) for lang, spec in sources.items()}
        dev_text = _read_dev(dev_files, langs, compat, any_script) if dev_files else None
        say("read: training " + "; ".join(f"{lang} <- {_shown(sources[lang])} ({len(text[lang]):,} lines)"
                                          for lang in langs)
            + ("; dev " + "; ".join(f"{lang} <- {dev_files[lang]} ({len(dev_text[lang]):,} lines)" for lang in langs)
               if dev_text else "; no dev text"))
        record_text(written, text, training=f"--manifest {manifest}" if manifest else "--train files",
                    evaluation="--dev files " + " ".join(dev_files.values()) if dev_text else None)
        res = parity.train_from_lines(
            text, dev_text, o.vocab or 256 + o.merges, scheme=o.scheme, compat=compat, variant=o.variant,
            hybrid=o.hybrid, window=o.window, alpha=o.alpha, ratios=o.ratios, min_frequency=o.min_frequency,
            on_exhausted=o.on_exhausted, progress=True, workers=os.cpu_count() or 1,  # a job: all cores
        )
        res.save_merges(written.path / "merges.txt")
        res.save(written.path / "tokenizer.json")
        res.save_trajectory(written.path / "trajectory.json")
    return CommandRun(res, bool(dev_text), Path(out))
