"""Text in, counts out: where corpora come from and how they become pre-token counts.

- :mod:`modtok.text.corpus`      ``open_corpus``: text, JSONL, ``.gz``/``.zst``, Parquet, Arrow,
  HF ``datasets``, globs and manifests, streamed with budgets and bad-record handling
- :mod:`modtok.text.data`        languages, FLORES-200, the training pool, the wordfreq default,
  ``default_corpora`` (what every notebook and command trains and evaluates on)
- :mod:`modtok.text.schemes`    the named split regexes
- :mod:`modtok.text.pretokenize` the byte-level alphabet, pre-token counting (``regex``: the reference)
- :mod:`modtok.text.lexer`      the compiled pre-tokenizer counting runs on (exact on every scheme)
- :mod:`modtok.text.counts`      pre-token counts as an artifact, counted in one process or on Dask
  (``run``: all of ``modtok count``)
- :mod:`modtok.text.training`    the text a training command reads and what its ``run.json`` records
"""
