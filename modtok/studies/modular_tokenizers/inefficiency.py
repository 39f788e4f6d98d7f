"""Why one vocabulary fails many languages (notebook 01; the paper's §3.1, §5.1, Tables 1, 2, 10).

A joint byte-level BPE trained on a set of languages with one total budget V, and the
deployed tokenizers, against a monolingual HF BPE of k tokens per language
(:class:`~.reference.Monolingual`), by NSL; and the premium of one language over
English on parallel lines (a measure of this project, not of the paper).

>>> from modtok.text.data import Corpora
>>> text = {"eng_Latn": ["aa ab aab"] * 30, "deu_Latn": ["bb ba bba"] * 30}
>>> study = InefficiencyStudy(Corpora(text, text, "toy"), k=260)   # references: 4 merges each
>>> result = study.nsl_table(["eng_Latn", "deu_Latn"], 262)         # a joint BPE of 6 merges
>>> [(row["language"], row["NSL joint BPE 0k"]) for row in result["rows"]]
[('English', 1.25), ('German', 1.25)]
>>> study.joint(("eng_Latn", "deu_Latn"), 262) is study.joint(["eng_Latn", "deu_Latn"], 262)  # trained once
True
>>> here = paper_values(result)                                       # the notebook's "paper vs here" values
>>> here["joint_mean_nsl"], here["deployed_max_nsl"].reason
(1.25, "no deployed tokenizer installed (pip install 'modtok[deployed]')")
>>> paper_joint_budget(21, 24_000)                                   # the paper's Multi 21 at 128k
128000
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

import numpy as np

from modtok.artifacts import baselines
from modtok.bpe import standard
from modtok.bpe.export import hf_tokenizer
from modtok.bpe.model import BPEModel
from modtok.cache import Results
from modtok.evaluation import metrics
from modtok.studies import paper_vs_here
from modtok.studies.paper_vs_here import NotMeasured
from modtok.text import data
from modtok.text.data import Corpora
from modtok.text.pretokenize import count_pretokens

from .reference import Monolingual
from .setting import corpus_fields, pretokenization

# The paper's joint baseline "Multi 21" of Tables 1 and 10: 128k tokens over 21 languages whose
# monolingual references have 24k each, i.e. about a quarter of a reference budget per language.
PAPER_JOINT_SHARE = 128 / (21 * 24)


def paper_joint_budget(n_langs: int, k: int, step: int = 2_000) -> int:
    """The joint budget V that gives each of ``n_langs`` languages the paper's share
    (:data:`PAPER_JOINT_SHARE`) of a reference budget ``k``, rounded to ``step``."""
    return max(step, round(PAPER_JOINT_SHARE * n_langs * k / step) * step)


class InefficiencyStudy:
    """Joint BPE of any language subset and budget (cached), and the ``deployed``
    tokenizers (``{name: tokenizer}``), against monolingual HF BPE of ``k`` tokens. Both
    BPEs pre-tokenize with ``scheme`` (default ``"whitespace"``: the notebook's setting since
    it was written, kept explicit when the project's default became ``llama3``)."""

    def __init__(self, corpora: Corpora, k: int, deployed: Mapping[str, object] | None = None,
                 scheme: str = "whitespace", train_at: int | None = None):
        self.corpora, self.k, self.deployed, self.scheme = corpora, k, dict(deployed or {}), scheme
        # every joint budget up to train_at is cut from one training at train_at per language subset
        # (notebook 01 passes its slider's maximum: a budget move never trains, see joint())
        self.train_at = train_at
        # the trainings on disk too (modtok.cache), keyed on the text and the pre-tokenizer
        self.results = Results("inefficiency", (corpora.train, scheme))
        self.mono = Monolingual(lambda lang, k: self.results.get("monolingual", (lang, k), lambda: baselines.train_hf_bpe(
            corpora.train[lang], k, scheme)), corpora.eval)
        self._joint: dict[tuple[tuple[str, ...], int], object] = {}  # (langs, budget) -> HF tokenizer
        self._trained: dict[tuple[str, ...], tuple[int, BPEModel]] = {}  # langs -> (size asked, model)
        self._pretokens: dict[str, Counter] = {}
        # (tokenizer name, lang) -> its Encoded test lines, for the tokenizers that never change
        # (deployed, references): a widget change encodes only the new joint BPE
        # (re-encoding ten deployed tokenizers was 1.0-1.7 s of every change at smoke size)
        self._encoded: dict[tuple[str, str], metrics.Encoded] = {}

    def _kept(self, name: str, tokenizer, lang: str) -> metrics.Encoded:
        if (name, lang) not in self._encoded:
            self._encoded[name, lang] = metrics.Encoded(tokenizer, self.corpora.eval[lang], lang)
        return self._encoded[name, lang]

    def joint(self, langs: Sequence[str], budget: int):
        """Byte-level BPE of vocab_size ``budget`` on the training text of ``langs``, as an
        HF tokenizer: modtok's standard BPE (:mod:`modtok.bpe.standard`) from each language's
        pre-token counts (counted once), stopping, as HF ``BpeTrainer`` does, when no pair
        occurs twice — the merges HF's trainer makes on the same text
        (``tests/test_study_modular_tokenizers.py``), 4x faster and with a progress bar: a new
        subset of the 39 pool languages at 128k, 1M characters each, took 9.9 s + 0.8 s export
        against 41.8 s for ``train_hf_bpe`` (2 cores, session 15).

        A smaller budget of the same languages is a prefix of a larger one's merges
        (:meth:`~modtok.bpe.model.BPEModel.prefix`: the training stopped there), so once a
        larger budget is trained a smaller one is cut from it: moving notebook 01's budget
        slider down answers without training. With ``train_at`` (≥ ``budget``) the first budget
        asked for a subset is trained at ``train_at``, so that moving the slider up does not
        train either.
        """
        key = (tuple(langs), budget)
        if key not in self._joint:
            asked, model = self._trained.get(key[0], (0, None))
            if budget > asked:  # nothing trained this far for these languages
                asked = max(budget, self.train_at or 0)

                def train() -> BPEModel:
                    # one column of summed counts: the merges depend on the totals only, and the
                    # engine's per-language columns cost 2.1 s of a 38-language subset's 10.6 s
                    counts = Counter()
                    for lang in key[0]:
                        counts.update(self._counts(lang))
                    return standard.train(counts, asked, self.scheme, min_frequency=2)
                model = self.results.get("joint", (key[0], asked), train)
                self._trained[key[0]] = (asked, model)
            self._joint[key] = hf_tokenizer(model.prefix(budget))
        return self._joint[key]

    def _counts(self, lang: str) -> Counter:
        """The pre-token counts of ``lang``'s training text (counted once per language)."""
        if lang not in self._pretokens:
            self._pretokens[lang] = count_pretokens(self.corpora.train[lang], self.scheme)
        return self._pretokens[lang]

    def nsl_table(self, langs: Sequence[str], budget: int) -> dict:
        """The analysis behind notebook 01's panel: ``{"langs", "budget", "rows", "long"}``.

        ``long`` is :func:`modtok.evaluation.metrics.language_table` (one row per language x
        tokenizer: the joint BPE of ``langs`` at ``budget``, then the deployed ones); ``rows``
        has one row per language: its name, script, the reference's tokens per character and
        an ``"NSL <tokenizer>"`` column per tokenizer.
        """
        langs = tuple(langs)
        if not langs:
            return {"langs": (), "budget": budget, "rows": [], "long": []}
        joint, name = self.joint(langs, budget), f"joint BPE {budget // 1000}k"
        encoded = {lang: {name: metrics.Encoded(joint, self.corpora.eval[lang], lang),
                          **{d: self._kept(d, tok, lang) for d, tok in self.deployed.items()}} for lang in langs}
        reference = {lang: self._kept(f"mono {self.k}", self.mono(lang, self.k), lang) for lang in langs}
        long = metrics.language_table_of(encoded, reference)
        rows = []
        for lang in langs:
            mine = [r for r in long if r["lang"] == lang]
            rows.append({
                "lang": lang, "language": data.lang_name(lang), "script": data.script_of(lang),
                # the reference's tokens per character: tokens/char of any tokenizer over its NSL
                f"mono {self.k // 1000}k tok/char": mine[0]["tokens_per_char"] / mine[0]["nsl"],
                **{f"NSL {r['tokenizer']}": r["nsl"] for r in mine},
            })
        return {"langs": langs, "budget": budget, "rows": rows, "long": long}

    def setting(self, langs: Sequence[str], budget: int) -> dict[str, str]:
        """This run's setting, in the fields of the paper's (``paper_figures.toml``)."""
        langs = list(langs)
        share = budget / (len(langs) * self.k) if langs else float("nan")
        deployed = ", ".join(self.deployed) or "none installed"
        return {**corpus_fields(self.corpora, langs),
                "vocabulary": f"monolingual BPE references of {self.k:,} tokens; joint BPE of {budget:,} over "
                              f"{len(langs)} languages ({share:.2f} of a reference budget per language); "
                              f"deployed: {deployed}",
                "pretokenization": f"references and the joint BPE: {pretokenization(self.scheme, self.corpora)}"}

    def reasons(self, here: Mapping[str, float | NotMeasured], result: dict) -> dict[str, str]:
        """A measured reason for each claim of ``here`` (:func:`paper_values` of ``result``,
        :meth:`nsl_table`'s) that does not hold: for a deployed tokenizer's NSL, the
        reference it is measured against (its budget, its training characters, its and the
        tokenizer's token totals on the test lines; the paper's references have 24k tokens);
        for the joint BPE, the share of a reference budget each language got."""
        claims = {c.key: c for c in paper_vs_here.claims("modular_tokenizers_inefficiency")}
        failing = [k for k, v in here.items() if not isinstance(v, NotMeasured) and claims[k].verdict(v) == "does not hold"]
        rows = result["rows"]
        by_lang = {r["lang"]: r for r in rows}

        def against(lang: str, column: str) -> str:
            ref = self.mono.tokens(lang, self.k)
            chars = sum(len(line) for line in self.corpora.train[lang])
            return (f"NSL against our {data.lang_name(lang)} reference of {self.k:,} tokens trained on {chars:,} "
                    f"characters (the paper's references: 24k tokens): on the {len(self.corpora.eval[lang]):,} test "
                    f"lines it spends {ref:,} tokens, {column[4:]} {by_lang[lang][column] * ref:,.0f}")

        deployed = [c for c in (rows[0] if rows else {}) if c.startswith("NSL ") and not c.startswith("NSL joint")]
        where = {"nepali_nsl_llama3": ("npi_Deva", "NSL llama3"), "nepali_nsl_qwen3": ("npi_Deva", "NSL qwen3"),
                 "english_nsl_llama3": ("eng_Latn", "NSL llama3")}
        out = {}
        for key in failing:
            if key in where:
                out[key] = against(*where[key])
            elif key in ("deployed_max_nsl", "llama3_max_nsl"):
                columns = deployed if key == "deployed_max_nsl" else ["NSL llama3"]
                lang, column = max(((r["lang"], c) for r in rows for c in columns), key=lambda lc: by_lang[lc[0]][lc[1]])
                out[key] = against(lang, column)
            elif key == "joint_mean_nsl":
                share = result["budget"] / (len(rows) * self.k)
                out[key] = (f"the joint BPE of {result['budget']:,} tokens gives each of {len(rows)} languages "
                            f"{share:.2f} of a {self.k:,}-token reference budget (the paper's Multi 21: "
                            f"{PAPER_JOINT_SHARE:.2f} of 24k)")
        return out

    def cache_note(self) -> str:
        """One line: which trainings came from the results cache, and when they were computed."""
        return self.results.note()

    def premiums(self, budget: int, lang: str = "npi_Deva", pivot: str = "eng_Latn") -> list[dict]:
        """``lang``'s premium over ``pivot`` (Σ|T(s_lang)| / Σ|T(s_pivot)| on parallel lines)
        for the joint BPE of every language at ``budget`` and each deployed tokenizer:
        one row ``{"tokenizer", "premium <lang>/<pivot>"}`` each (3-letter codes)."""
        column = f"premium {lang[:3]}/{pivot[:3]}"
        joint = self.joint(self.corpora.languages, budget)
        candidates = {f"joint BPE {budget // 1000}k": joint, **self.deployed}
        ev = self.corpora.eval
        return [{"tokenizer": name, column: metrics.premium(tok, ev[lang], ev[pivot])}
                for name, tok in candidates.items()]


def _column(rows: list[dict], name: str) -> str | None:
    return f"NSL {name}" if rows and f"NSL {name}" in rows[0] else None


def paper_values(result: dict) -> dict:
    """The measured values of the ``modular_tokenizers_inefficiency`` claims (``paper_figures.toml``)
    from :meth:`InefficiencyStudy.nsl_table`'s ``result``.

    >>> rows = [{"lang": "npi_Deva", "NSL joint BPE 8k": 1.5, "NSL llama3": 3.0}, {"lang": "eng_Latn", "NSL joint BPE 8k": 0.9, "NSL llama3": 1.0}]
    >>> here = paper_values({"rows": rows})
    >>> here["joint_mean_nsl"], here["deployed_max_nsl"], here["nepali_nsl_llama3"], here["english_nsl_llama3"]
    (1.2, 3.0, 3.0, 1.0)
    >>> here["nepali_nsl_qwen3"].reason
    'qwen3 is not installed'
    """
    rows = result["rows"]
    if not rows:
        none = NotMeasured("no language selected")
        return {key: none for key in ("deployed_max_nsl", "llama3_max_nsl", "nepali_nsl_llama3", "nepali_nsl_qwen3",
                                      "english_nsl_llama3", "joint_mean_nsl")}
    joint = next(k for k in rows[0] if k.startswith("NSL joint"))
    deployed = [k for k in rows[0] if k.startswith("NSL ") and k != joint]
    by_lang = {r["lang"]: r for r in rows}

    def of(name: str, lang: str | None = None):
        col = _column(rows, name)
        if col is None:
            return NotMeasured(f"{name} is not installed")
        if lang is None:
            return max(float(r[col]) for r in rows)
        if lang not in by_lang:
            return NotMeasured(f"{lang} is not among the languages")
        return float(by_lang[lang][col])

    return {"deployed_max_nsl": (max(float(r[k]) for r in rows for k in deployed) if deployed
                                 else NotMeasured("no deployed tokenizer installed (pip install 'modtok[deployed]')")),
            "llama3_max_nsl": of("llama3"), "nepali_nsl_llama3": of("llama3", "npi_Deva"),
            "nepali_nsl_qwen3": of("qwen3", "npi_Deva"), "english_nsl_llama3": of("llama3", "eng_Latn"),
            "joint_mean_nsl": float(np.mean([r[joint] for r in rows]))}
