"""modtok: modular multilingual tokenization, for notebooks and scripts.

One idea per module, on floors that import only downwards (README "The library";
``tests/test_architecture.py`` keeps it so). From the ground up:

- :mod:`modtok.errors`, :mod:`modtok.outputs`, :mod:`modtok.progress`  one exception family,
  whole-or-nothing output directories, progress bars a caller asks for
- :mod:`modtok.text`        corpora, manifests, evaluation sets, pre-tokenization, counts
- :mod:`modtok.artifacts`   tokenizer files, modular tokenizers, deployed tokenizers, baselines
- :mod:`modtok.evaluation`  NSL, fertility, premium, Gini, bootstrap statistics, the pre-token audit
- :mod:`modtok.bpe`, :mod:`modtok.unigram`, :mod:`modtok.mixture`, :mod:`modtok.lm`,
  :mod:`modtok.adapt`       the algorithms of the four papers
- :mod:`modtok.studies`     the papers' experiments and their paper-vs-here tables
- :mod:`modtok.ui`          plots, widgets, the reproduction page, the ``modtok`` command
"""

from modtok.errors import (
    BudgetError,
    DataError,
    EncodingError,
    MergeListError,
    ModtokError,
    TokenizerFileError,
    UnknownLanguageError,
)

__version__ = "0.1.0"

__all__ = [
    "BudgetError",
    "DataError",
    "EncodingError",
    "MergeListError",
    "ModtokError",
    "TokenizerFileError",
    "UnknownLanguageError",
    "__version__",
]
