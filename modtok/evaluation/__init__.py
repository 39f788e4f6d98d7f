"""Measuring tokenizers.

- :mod:`modtok.evaluation.metrics` NSL, tokens per character / byte, fertility, premium, Gini,
  vocabulary utilisation, Rényi efficiency
- :mod:`modtok.evaluation.stats`   the paired bootstrap (one, for every interval in the project)
- :mod:`modtok.evaluation.audit`   the Table III audit of a tokenizer: premium with its interval,
  the pre-token floor and the premium's decomposition, mark-initial share, lossless check
"""
