"""The studies of "To Each Language Its Tokenizer" (notebooks 01-04).

The algorithms live below (:mod:`modtok.bpe.sequential`, :mod:`modtok.bpe.concat`,
:mod:`modtok.unigram.merge`, :mod:`modtok.lm`); this package wires them to a corpus,
caches what the notebooks' widgets ask for again, and returns the tables the notebooks
display (figures are drawn by :mod:`modtok.ui.plots`):

- :mod:`.reference`    the monolingual reference T_ℓ of NSL, trained once per (language, k)
- :mod:`.inefficiency` joint and deployed tokenizers vs the reference (notebook 01, Table 1/9)
- :mod:`.sequential`   sequential BPE vs concatenation: fidelity, unions, merge trees,
                       vocabulary growth (notebook 02, §4.2)
- :mod:`.unigram`      merged Unigram + EM: fidelity, frequency extraction, segmentations
                       (notebook 03, §4.1, Tables 11/12)
- :mod:`.lm`           LMs trained with sampled subtokenizers: training, bits-per-byte tables,
                       the sampling explorer (notebook 04, §6)
- :mod:`.training`     the runs of ``modtok sequential-bpe``, ``modular-unigram`` and ``lm-train``
                       (text or saved counts in, an output directory with its run.json out)

Each study declares :data:`PAPER` as the paper it reproduces (:mod:`modtok.studies.contract`).
"""

from modtok.studies.contract import Paper

PAPER = Paper("modular-tokenizers.txt", "To Each Language Its Tokenizer (modular tokenizers)")
