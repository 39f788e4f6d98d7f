"""Why one vocabulary fails many languages (notebook 01; the paper's Table 1 / Table 9).

A joint byte-level BPE trained on a set of languages with one total budget V, and the
deployed tokenizers, against a monolingual HF BPE of k tokens per language
(:class:`~.reference.Monolingual`), by NSL; and the premium of one language over
English on parallel lines.

>>> from modtok.text.data import Corpora
>>> text = {"eng_Latn": ["aa ab aab"] * 30, "deu_Latn": ["bb ba bba"] * 30}
>>> study = InefficiencyStudy(Corpora(text, text, "toy"), k=260)   # references: 4 merges each
>>> result = study.nsl_table(["eng_Latn", "deu_Latn"], 262)         # a joint BPE of 6 merges
>>> [(row["language"], row["NSL joint BPE 0k"]) for row in result["rows"]]
[('English', 1.25), ('German', 1.25)]
>>> study.joint(("eng_Latn", "deu_Latn"), 262) is study.joint(["eng_Latn", "deu_Latn"], 262)  # trained once
True
>>> here = paper_values(result, NotMeasured("needs parallel text"))   # the notebook's "paper vs here" values
>>> here["joint_mean_nsl"], here["deployed_max_nsl"].reason
(1.25, "no deployed tokenizer installed (pip install 'modtok[deployed]')")
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from modtok.artifacts import baselines
from modtok.evaluation import metrics
from modtok.studies.paper_vs_here import NotMeasured
from modtok.text import data
from modtok.text.data import Corpora

from .reference import Monolingual

LETTERS_ONLY = ("cl100k", "llama3", "qwen3")  # deployed tokenizers whose pre-tokenizer splits at combining marks


class InefficiencyStudy:
    """Joint BPE of any language subset and budget (cached), and the ``deployed``
    tokenizers (``{name: tokenizer}``), against monolingual HF BPE of ``k`` tokens. Both
    BPEs pre-tokenize with ``scheme`` (default ``"whitespace"``: the notebook's setting since
    it was written, kept explicit when the project's default became ``llama3``)."""

    def __init__(self, corpora: Corpora, k: int, deployed: Mapping[str, object] | None = None,
                 scheme: str = "whitespace"):
        self.corpora, self.k, self.deployed, self.scheme = corpora, k, dict(deployed or {}), scheme
        self.mono = Monolingual(lambda lang, k: baselines.train_hf_bpe(corpora.train[lang], k, scheme), corpora.eval)
        self._joint: dict[tuple[tuple[str, ...], int], object] = {}

    def joint(self, langs: Sequence[str], budget: int):
        """HF byte-level BPE of vocab_size ``budget`` on the training text of ``langs``."""
        key = (tuple(langs), budget)
        if key not in self._joint:
            text = {lang: self.corpora.train[lang] for lang in key[0]}
            self._joint[key] = baselines.train_hf_bpe(text, budget, self.scheme)
        return self._joint[key]

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
        tokenizers = {f"joint BPE {budget // 1000}k": self.joint(langs, budget), **self.deployed}
        long = metrics.language_table(tokenizers, {lang: self.mono(lang, self.k) for lang in langs},
                                      {lang: self.corpora.eval[lang] for lang in langs})
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


def paper_values(result: dict, premiums: list[dict] | NotMeasured) -> dict:
    """The measured values of the ``modular_tokenizers_inefficiency`` claims (``paper_figures.toml``)
    from :meth:`InefficiencyStudy.nsl_table`'s ``result`` and the rows of
    :meth:`InefficiencyStudy.premiums` for Nepali over English (or why they were not computed).

    >>> rows = [{"lang": "x", "NSL joint BPE 8k": 1.5, "NSL llama3": 3.0}, {"lang": "y", "NSL joint BPE 8k": 0.9, "NSL llama3": 1.0}]
    >>> prem = [{"tokenizer": "joint BPE 8k", "premium npi/eng": 1.1}, {"tokenizer": "llama3", "premium npi/eng": 2.5}]
    >>> paper_values({"rows": rows}, prem)
    {'joint_mean_nsl': 1.2, 'deployed_max_nsl': 3.0, 'premium_npi_letters_only': 2.5}
    """
    rows = result["rows"]
    if not rows:
        none = NotMeasured("no language selected")
        return {"joint_mean_nsl": none, "deployed_max_nsl": none, "premium_npi_letters_only": none}
    joint = next(k for k in rows[0] if k.startswith("NSL joint"))
    deployed = [k for k in rows[0] if k.startswith("NSL ") and k != joint]
    out: dict = {"joint_mean_nsl": float(np.mean([r[joint] for r in rows]))}
    out["deployed_max_nsl"] = (max(float(r[k]) for r in rows for k in deployed) if deployed
                               else NotMeasured("no deployed tokenizer installed (pip install 'modtok[deployed]')"))
    if isinstance(premiums, NotMeasured):
        out["premium_npi_letters_only"] = premiums
    else:
        letters = [r["premium npi/eng"] for r in premiums if r["tokenizer"] in LETTERS_ONLY]
        out["premium_npi_letters_only"] = (float(min(letters)) if letters else
                                           NotMeasured(f"none of {', '.join(LETTERS_ONLY)} is installed"))
    return out
