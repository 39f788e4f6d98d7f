"""modtok: modular multilingual tokenization, for notebooks and scripts.

The package is small on purpose; each module holds one idea:

- :mod:`modtok.text.data`        corpora (FLORES-200, plain-text pools, wordfreq default)
- :mod:`modtok.text.pretokenize` named split regexes, byte-level alphabet, pre-token counts
- :mod:`modtok.evaluation.metrics`     NSL, tokens/char, fertility, premium, Gini, Rényi efficiency
- :mod:`modtok.artifacts.baselines`   HF-tokenizers BPE and sentencepiece Unigram baselines
- :mod:`modtok.artifacts.deployed`    deployed tokenizers (Llama-3, Qwen, cl100k, o200k) offline
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
