"""The numba kernels' on-disk cache: filled ahead of time (``modtok warmup``), and checked.

A fresh clone spent 60 s compiling on its first ``modtok sequential-bpe`` (2.8 s the next
time); ``make install`` runs :func:`warm` once, so the first real command starts warm.
:func:`kernels_cold` tells a command that its kernels will compile first (the CLI says so
before it starts). This module sits on the algorithms' floor: it trains a tiny model of
each kind (:mod:`modtok.bpe`, :mod:`modtok.unigram`), imported only when it runs.
"""

from __future__ import annotations

import importlib
import os
from pathlib import Path


def warm() -> float:
    """Compile every numba kernel into its on-disk cache by training tiny models of each kind;
    the seconds it took. The kernels are specialised on array types, not sizes, so a tiny run
    compiles what a large one uses."""
    import random
    import time

    from modtok.bpe import parity, reference, standard
    from modtok.bpe.engine import Engine
    from modtok.bpe.sequential import train_sequential
    from modtok.text.pretokenize import count_arrays, count_by_language
    from modtok.unigram.merge import merge_unigram
    from modtok.unigram.train import train_unigram_per_language

    t0 = time.perf_counter()
    rng = random.Random(0)
    letters = {"eng_Latn": "abcdefghij", "rus_Cyrl": "абвгдежзик", "npi_Deva": "कखगचजतदनपम"}
    corpus = {lang: [" ".join("".join(rng.choice(a) for _ in range(rng.randint(1, 6))) for _ in range(12))
                     for _ in range(200)] for lang, a in letters.items()}
    counts = count_by_language(corpus)
    count_arrays(corpus)  # the lexer's union (numba's, when the C lexer is not built)
    standard.train(counts, 400)
    reference.train(Engine.from_counts(counts), 300)  # best_pair() then merge(): K.merge_best (extend's loop)
    train_sequential(counts, 300).modular().subtokenizer(["eng_Latn"]).encode(corpus["eng_Latn"][0])
    dev = {lang: lines[:20] for lang, lines in corpus.items()}
    parity.train_from_lines(corpus, dev, 400)
    parity.train_from_lines(corpus, dev, 400, variant="window", window=20, alpha=2)
    parity.train_from_lines(corpus, dev, 400, compat="reference")
    models = train_unigram_per_language(corpus, 400)
    models["eng_Latn"].encode(corpus["eng_Latn"][:2])  # the Viterbi kernels (a Unigram's own encoder)
    merge_unigram(models, corpus, max_iter=1).modular().subtokenizer(["npi_Deva"]).encode(corpus["npi_Deva"][0])
    return time.perf_counter() - t0


def kernels_cold(modules: list[str]) -> bool:
    """True when one of the numba kernel ``modules`` has no on-disk cache newer than
    its source: a fresh clone or ``pip install`` before ``modtok warmup``, or a pulled
    change to the kernels. The command then compiles them first (21 s of a 1.3 s
    ``sequential-bpe`` in a fresh clone). With ``$NUMBA_CACHE_DIR`` the
    cache lies elsewhere: not checked (False)."""
    if os.environ.get("NUMBA_CACHE_DIR"):
        return False
    for name in modules:
        src = Path(importlib.import_module(name).__file__)
        # an index newer than the source: something was compiled since the last change
        # (an index of a function since moved stays behind, older: not "the newest")
        cached = [f.stat().st_mtime for f in (src.parent / "__pycache__").glob(f"{src.stem}.*.nbi")]
        if max(cached, default=0.0) < src.stat().st_mtime:
            return True
    return False
