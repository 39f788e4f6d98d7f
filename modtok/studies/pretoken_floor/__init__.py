"""The studies of "Merge-Based Vocabulary Extension Stalls at the Pre-Tokenizer" (notebook 07).

The method itself (the floor, the repaired regex, continued BPE in a deployed tokenizer's
ids) is :mod:`modtok.adapt.extend` and :mod:`modtok.evaluation.audit`; this package holds the
paper's experiments around it:

- :mod:`.floor`                 the K sweep of R1 vs R2 on deployed bases: cost, floor, English ids (§III-V)
- :mod:`.cpt`                   arms R0 / R1 / R2 of continued LM pretraining, bits per byte (§VI-VII)
- :mod:`.cross_script`          R1 vs R2 across scripts (Table V) and the relaxed merge filter (App. H)
- :mod:`.added_tokens`          R2's strings as HF added tokens on the unchanged regex (App. J)
"""

from modtok.studies.contract import Paper

PAPER = Paper("pretoken-floor-nepali-repair.txt",
              "Merge-Based Vocabulary Extension Stalls at the Pre-Tokenizer (Nepali repair)")
