"""Byte-level BPE: one merge engine and the policies that drive it.

Every BPE trainer here differs only in *which pair to merge next and where to record
it*; the statistics (unique pre-tokens with per-language counts, pair counts, occurrence
lists, lazy heaps, apply-merge) live once in the engine.

- :mod:`.engine` (+ :mod:`.kernels`, numba)  the incremental pair statistics
- :mod:`.model`      ``BPEModel``: merges, ranks, properness, reference encode/decode
- policies:
  :mod:`.standard`   the most frequent pair overall (HF ``BpeTrainer`` order)
  :mod:`.continued`  standard BPE on top of an existing model, every old id kept
  :mod:`.sequential` languages one after another on the global merge list (Alg. 2 of
                     "To Each Language Its Tokenizer"), per-language budgets
  :mod:`.concat`     the concatenation baseline (monolingual models glued together)
  :mod:`.parity`     parity-aware BPE: the pair of the currently costliest language
- :mod:`.export`     ``BPEModel`` <-> HF ``tokenizer.json``
- :mod:`.lengths`    the token count of many pre-tokens under an HF BPE model, in one call
- :mod:`.tree`       the merge hierarchy of a word (for the notebooks' explorer)
- :mod:`.reference`  the naive twin of the engine that every differential test drives

Continued BPE on a *deployed* tokenizer in its own ids (arms R1, R2) and trimming a
tokenizer to some languages adapt an existing model: they live in :mod:`modtok.adapt`.

A new policy is a function that builds an :class:`~modtok.bpe.engine.Engine` from counts,
asks it for the pair to merge (``best_pair()`` or ``best_pair(lang)``), calls
``merge(pair)``, and records the merge in a :class:`~modtok.bpe.model.BPEModel`: read
:func:`modtok.bpe.standard.learn` (a dozen lines) and copy its shape.
"""
