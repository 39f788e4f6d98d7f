"""This run's setting, field by field, for the "paper vs here" tables of every study.

The fields are those of each claim's ``setting`` in ``paper_figures.toml`` (the paper's):
data, size, vocabulary, model, lr, iterations, pretokenization, heldout. The notebooks never
type them: each study builds its own from its configuration and the corpus it read (its
``setting``, :mod:`modtok.studies.contract`); this module holds the fields studies share
(those of "To Each Language Its Tokenizer", notebooks 01-04, use them all): what text it
trained on, how much, and what it evaluated on.

>>> from modtok.text.data import Corpora
>>> c = Corpora({"x_Latn": ["ab"] * 3, "y_Latn": ["abc"] * 2}, {"x_Latn": ["a"], "y_Latn": ["b"] * 2},
...             "training: toy text; evaluation: toy lines", eval_label="toy lines")
>>> corpus_fields(c, ["x_Latn", "y_Latn"])["size"]
'6 training characters per language'
>>> corpus_fields(c, ["x_Latn", "y_Latn"])["heldout"]
'toy lines, 1-2 lines'
>>> corpus_fields(c, ["x_Latn"])["data"]
'1 language (x_Latn); training: toy text'
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from modtok.text import data
from modtok.text.data import Corpora


def _span(values: Sequence[int]) -> str:
    lo, hi = min(values), max(values)
    return f"{lo:,}" if lo == hi else f"{lo:,}-{hi:,}"


def training_text(corpora: Corpora) -> str:
    """The training half of ``corpora.source`` (what was read and how much of it).

    >>> training_text(Corpora({}, {}, "training: pool p (≤1 chars/language); evaluation: FLORES; Unicode normalisation: none"))
    'training: pool p (≤1 chars/language)'
    """
    return corpora.source.split("; evaluation")[0].split("; Unicode normalisation")[0]


def evaluation_text(corpora: Corpora) -> str:
    """The evaluation text's label without the folder it was read from (the data field names
    the folders), so that it reads as the paper's setting does.

    >>> evaluation_text(Corpora({}, {}, "", eval_label="FLORES-200 devtest (/data/flores200)"))
    'FLORES-200 devtest'
    """
    return re.sub(r"\s*\((?:/|[A-Za-z]:\\)[^()]*\)", "", corpora.eval_label) or "evaluation text"


def corpus_fields(corpora: Corpora, langs: Sequence[str]) -> dict[str, str]:
    """``data`` (the languages and the training text), ``size`` (training characters per
    language, measured) and ``heldout`` (the evaluation text and its lines per language,
    written as the paper's settings write it: "FLORES-200 devtest, 1,012 lines")."""
    langs = list(langs)
    chars = data.chars_per_language({lang: corpora.train[lang] for lang in langs})
    n = f"{len(langs)} language{'s' if len(langs) != 1 else ''}"
    return {"data": f"{n} ({', '.join(langs)}); {training_text(corpora)}",
            "size": f"{_span(list(chars.values()))} training characters per language",
            "heldout": f"{evaluation_text(corpora)}, {_span([len(corpora.eval[lang]) for lang in langs])} lines"}


def pretokenization(scheme: str, corpora: Corpora) -> str:
    """The pre-tokenizer (a scheme of :mod:`modtok.text.pretokenize`; every trainer here is
    byte-level) and the Unicode normalisation of the text, worded as the paper's settings are.

    >>> pretokenization("whitespace", Corpora({}, {}, ""))
    'whitespace pre-tokenization, byte-level fallback, no normalization'
    """
    normalization = f"{corpora.normalization} normalization" if corpora.normalization else "no normalization"
    return f"{scheme} pre-tokenization, byte-level fallback, {normalization}"
