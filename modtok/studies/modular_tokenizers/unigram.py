"""Modular Unigram (notebook 03; the paper's §4.1, Algorithm 1, Tables 11/12).

One sentencepiece Unigram per language at budget k (the monolingual reference, trained
once per (language, k): :class:`~.reference.Monolingual`), their vocabularies merged and
re-estimated by EM on the joint corpus (:func:`modtok.unigram.merge.merge_unigram`); a
language's subtokenizer keeps its own pieces. :class:`UnigramStudy` returns the tables:
subtokenizer fidelity (Table 11 analog), the two EM starts side by side, frequency-based
extraction (Table 12 analog), one sentence segmented three ways, and the panel's table.

>>> from modtok.text.data import Corpora
>>> text = {"x_Latn": ["aaa ab abab"] * 20, "y_Latn": ["bbb ba baba"] * 20}
>>> study = UnigramStudy(Corpora(text, text, "toy"), ["x_Latn", "y_Latn"])
>>> merged = study.merge(["x_Latn", "y_Latn"], 266, iters=2)
>>> [row["language"] for row in study.fidelity_rows(merged, 266)]
['x_Latn', 'y_Latn']
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from modtok.cache import Results
from modtok.errors import BudgetError
from modtok.evaluation import metrics
from modtok.studies.contract import Study
from modtok.studies import paper_vs_here
from modtok.studies.paper_vs_here import NotMeasured
from modtok.studies.setting import corpus_fields, pretokenization
from modtok.text import data
from modtok.text.data import Corpora
from modtok.unigram.extract import RestrictedUnigram, frequency_subvocab
from modtok.unigram.merge import MergedUnigram, merge_unigram
from modtok.unigram.train import train_unigram_per_language

from . import PAPER
from .reference import Monolingual


class UnigramStudy(Study):
    """Merged Unigram tokenizers of subsets of ``langs`` on ``corpora``, measured against
    each language's own sentencepiece Unigram of the same budget."""

    name, paper, notebook = "modular_tokenizers_unigram", PAPER, "03_modular_unigram"

    def __init__(self, corpora: Corpora, langs: Sequence[str]):
        self.corpora, self.langs = corpora, list(langs)
        # the trainings on disk too (modtok.cache), keyed on the training text
        self.results = Results("unigram", corpora.train)
        self.mono = Monolingual(lambda lang, k: self.results.get(
            "monolingual", (lang, k), lambda: train_unigram_per_language({lang: corpora.train[lang]}, k)[lang]),
            corpora.eval)

    def setting(self, merged: MergedUnigram, k: int, iters: int, init: str = "uniform") -> dict[str, str]:
        """This run's setting, in the fields of the paper's (``paper_figures.toml``), for the merged
        model ``merged`` of the monolingual Unigrams of budget ``k`` after ``iters`` EM iterations."""
        return {**corpus_fields(self.corpora, self.langs),
                "vocabulary": f"monolingual sentencepiece Unigrams of {k:,} pieces, merged: {len(merged.model):,} "
                              f"pieces; frequency-based extraction from that merged model",
                "iterations": f"{iters} EM iterations from the {init} start",
                "pretokenization": pretokenization("sentencepiece", self.corpora)}

    def keep_trainable(self, k: int) -> dict[str, str]:
        """Train every language's monolingual Unigram of budget ``k`` and keep (in :attr:`langs`)
        those that train; return ``{lang: why not}`` for the others: sentencepiece refuses a
        budget below the characters a language's text needs (Chinese or Japanese at k = 800)."""
        left_out = {}
        for lang in self.langs:
            try:
                self.mono(lang, k)
            except BudgetError as e:
                left_out[lang] = str(e).removeprefix(f"{lang}: ")
        self.langs = [lang for lang in self.langs if lang not in left_out]
        return left_out

    def models(self, langs: Sequence[str], k: int) -> dict:
        """``{lang: monolingual Unigram of budget k}``."""
        return {lang: self.mono(lang, k) for lang in langs}

    def merge(self, langs: Sequence[str], k: int, iters: int = 5, init: str = "uniform") -> MergedUnigram:
        """Algorithm 1 on the monolingual models of ``langs`` at budget ``k``: ``iters`` EM
        iterations on their joint training text, starting from ``init``."""
        return self.results.get("merge", (tuple(langs), k, iters, init), lambda: merge_unigram(
            self.models(langs, k), {lang: self.corpora.train[lang] for lang in langs}, max_iter=iters, init=init))

    def nsl(self, tokenizer, lang: str, k: int):
        """NSL of ``tokenizer`` on ``lang`` vs the monolingual Unigram of budget ``k``."""
        return self.mono.nsl(tokenizer, lang, k)

    def rows(self, merged: MergedUnigram, k: int) -> list[dict]:
        """The per-language rows (:func:`modtok.evaluation.metrics.language_table_of`): each
        language of ``merged`` (in ``langs`` order) under its subtokenizer and under the full
        merged tokenizer, against its monolingual Unigram of budget ``k``."""
        mt, ev = merged.modular(), self.corpora.eval
        langs = [lang for lang in self.langs if lang in merged.lang_to_ids]
        encoded = {lang: {"subtokenizer": metrics.Encoded(mt.subtokenizer([lang]), ev[lang], lang),
                          "full merged": metrics.Encoded(mt, ev[lang], lang)} for lang in langs}
        return metrics.language_table_of(encoded, {lang: self.mono.encoded(lang, k) for lang in langs})

    def measured(self, rows: list[dict], no_em_rows: list[dict], freq_rows: list[dict], ks: Sequence[int],
                 line_tokens: Mapping[str, Mapping[str, Sequence[int]]] | None = None) -> dict:
        """The value of each claim (:func:`paper_values`)."""
        return paper_values(rows, no_em_rows, freq_rows, ks, line_tokens)

    def line_tokens(self, merged: MergedUnigram, k: int) -> dict[str, dict[str, list[int]]]:
        """``{lang: {"subtokenizer", "full merged", "reference": tokens of each evaluation line}}``
        for each language of ``merged`` (in ``langs`` order): what :func:`paper_values` draws
        lines from for the intervals of its NSLs."""
        mt, ev = merged.modular(), self.corpora.eval
        return {lang: {"subtokenizer": metrics.token_counts(mt.subtokenizer([lang]), ev[lang]).tolist(),
                       "full merged": metrics.token_counts(mt, ev[lang]).tolist(),
                       "reference": self.mono.line_tokens(lang, k).tolist()}
                for lang in self.langs if lang in merged.lang_to_ids}

    def _nsls(self, merged: MergedUnigram, k: int) -> dict[str, dict[str, float]]:
        """``{lang: {"subtokenizer": NSL, "full merged": NSL}}`` from :meth:`rows`."""
        out: dict[str, dict[str, float]] = {}
        for r in self.rows(merged, k):
            out.setdefault(r["lang"], {})[r["tokenizer"]] = r["nsl"]
        return out

    def fidelity_rows(self, merged: MergedUnigram, k: int) -> list[dict]:
        """Table 11 analog, one row per language of ``merged`` (in ``langs`` order): NSL of its
        subtokenizer and of the full merged tokenizer (:meth:`rows`), and its sub-vocabulary size."""
        return [{"language": data.lang_name(lang), **nsl, "sub-vocab size": len(merged.lang_to_ids[lang])}
                for lang, nsl in self._nsls(merged, k).items()]

    def start_rows(self, starts: Mapping[str, MergedUnigram], k: int) -> list[dict]:
        """One row per language: the subtokenizer NSL of each merged model of ``starts``
        (``{init: merged}``, e.g. the uniform and averaged EM starts)."""
        tokenizers = {init: m.modular() for init, m in starts.items()}
        langs = [lang for lang in self.langs if all(lang in m.lang_to_ids for m in starts.values())]
        return [{"language": data.lang_name(lang),
                 **{f"NSL, {init} start": self.nsl(mt.subtokenizer([lang]), lang, k)
                    for init, mt in tokenizers.items()}}
                for lang in langs]

    def frequency_rows(self, merged: MergedUnigram, ks: Sequence[int], k: int) -> list[dict]:
        """Table 12 analog: per language, the NSL (vs the Unigram of budget ``k``) of the
        frequency-based extraction of each size in ``ks`` from ``merged`` (the pieces the
        full model uses most on the language's training text); NaN where the language uses
        fewer pieces than asked for."""
        rows = []
        for lang in self.langs:
            row = {"language": data.lang_name(lang)}
            for size in ks:
                try:
                    ids = frequency_subvocab(merged.model, self.corpora.train[lang], size)
                    row[f"k={size}"] = self.nsl(RestrictedUnigram(merged.model, ids), lang, k)
                except BudgetError:  # the language uses fewer pieces than k asks for
                    row[f"k={size}"] = float("nan")
            rows.append(row)
        return rows

    def segment(self, merged: MergedUnigram, lang: str, other: str, i: int = 0) -> dict:
        """Evaluation line ``i`` of ``lang`` through ``lang``'s subtokenizer, the full merged
        tokenizer and ``other``'s subtokenizer: ``{"text", "pieces", "ids", "direct"}``, each
        of the last three ``{view: ...}``; ``direct`` are the ids of the merged model's own
        restricted Viterbi (:meth:`~modtok.unigram.model.UnigramModel.encode`), which the
        HF-backed ``ids`` must equal."""
        text = self.corpora.eval[lang][i]
        mt = merged.modular()
        views = {f"{lang} subtokenizer": ([lang], mt.subtokenizer([lang])), "full merged": (None, mt),
                 f"{other} subtokenizer": ([other], mt.subtokenizer([other]))}
        ids = {name: enc.encode(text) for name, (_, enc) in views.items()}
        direct = {name: merged.model.encode(text, None if langs is None else merged.subvocab(langs))
                  for name, (langs, _) in views.items()}
        return {"text": text, "ids": ids, "direct": direct,
                "pieces": {name: [merged.model.pieces[g] for g in seq] for name, seq in ids.items()}}

    def table(self, langs: Sequence[str], k: int, iters: int) -> list[dict]:
        """The panel's callback: merge the Unigrams of ``langs`` at budget ``k`` with ``iters``
        EM iterations; one row per language with both NSLs, the final EM log-likelihood, k
        and the iterations ([] when no language is selected)."""
        langs = list(langs)
        if not langs:
            return []
        mg = self.merge(langs, k, iters)
        return [{"language": data.lang_name(lang), **nsl, "EM log-likelihood": mg.loglik[-1], "k": k,
                 "EM iterations": iters} for lang, nsl in self._nsls(mg, k).items()]



def paper_values(rows: list[dict], no_em_rows: list[dict], freq_rows: list[dict], ks: Sequence[int],
                 line_tokens: Mapping[str, Mapping[str, Sequence[int]]] | None = None) -> dict:
    """The measured values of the ``modular_tokenizers_unigram`` claims (``paper_figures.toml``):
    ``rows`` are :meth:`UnigramStudy.fidelity_rows` of the merged model after EM, ``no_em_rows`` the
    same for the union without EM (averaged monolingual probabilities, 0 iterations), ``freq_rows``
    :meth:`UnigramStudy.frequency_rows` for the sizes ``ks`` (smallest first, largest = k). With
    ``line_tokens`` (:meth:`UnigramStudy.line_tokens` of the same model), the subtokenizer NSL
    farthest from 1 and the full merged tokenizer's mean NSL carry their interval over evaluation
    lines (:func:`modtok.studies.paper_vs_here.over_lines`, each statistic bootstrapped whole:
    a replicate picks its own farthest language); on lines that are not parallel, points.

    >>> rows = [{"subtokenizer": 1.0, "full merged": 0.9}, {"subtokenizer": 1.04, "full merged": 0.95}]
    >>> no_em = [{"subtokenizer": 1.05, "full merged": 0.9}, {"subtokenizer": 1.05, "full merged": 0.9}]
    >>> freq = [{"k=2": 1.5, "k=8": 1.0}, {"k=2": float("nan"), "k=8": 1.02}]
    >>> {k: round(v, 3) for k, v in paper_values(rows, no_em, freq, [2, 8]).items()}
    {'subtokenizer_nsl_worst': 1.04, 'full_merged_nsl_mean': 0.925, 'em_vs_average_union': -0.03, 'frequency_small_k': 1.5, 'frequency_full_k': 1.01}
    """
    subs = [r["subtokenizer"] for r in rows]

    def freq(size):  # NaN: the language uses fewer pieces than asked for
        vals = [r[f"k={size}"] for r in freq_rows if not np.isnan(r[f"k={size}"])]
        return float(np.mean(vals)) if vals else NotMeasured(f"no language has a frequency-based extraction of {size} pieces "
                                                                "(the base pieces or more than it uses)")

    if line_tokens:
        columns = {f"{name}|{lang}": t for lang, by in line_tokens.items() for name, t in by.items()}

        def nsls(t, name):  # (languages, ...) NSLs of ``name`` from the drawn totals
            return np.array([t[f"{name}|{lang}"] / t[f"reference|{lang}"] for lang in line_tokens])

        def stat(t):
            sub = nsls(t, "subtokenizer")
            far = np.take_along_axis(sub, np.abs(sub - 1.0).argmax(axis=0)[None], axis=0)[0]
            return {"subtokenizer_nsl_worst": far, "full_merged_nsl_mean": nsls(t, "full merged").mean(axis=0)}
        fidelity: dict = paper_vs_here.over_lines(columns, stat)
    else:
        fidelity = {"subtokenizer_nsl_worst": float(max(subs, key=lambda s: abs(s - 1.0))),
                    "full_merged_nsl_mean": float(np.mean([r["full merged"] for r in rows]))}
    return {**fidelity,
            "em_vs_average_union": float(np.mean(subs) - np.mean([r["subtokenizer"] for r in no_em_rows])),
            "frequency_small_k": freq(min(ks)), "frequency_full_k": freq(max(ks))}
