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
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from modtok.artifacts import baselines
from modtok.evaluation import metrics
from modtok.text import data
from modtok.text.data import Corpora

from .reference import Monolingual


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
