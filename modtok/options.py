"""The names of the option lists that several places offer, each written once.

The command line offers them as ``choices``, the studies and notebook widgets as their
menus, and the modules that implement them check a name against them; so a new variant or
trainer is added here and in its implementation, and every menu shows it. Plain tuples on
the ground floor: the command line reads them at start-up without importing the trainers
(``modtok.bpe.parity`` loads numba, ``modtok.mixture`` the BPE kernels: seconds).
Pre-tokenizer schemes are not here: their one list is the name -> pattern table
:data:`modtok.text.pretokenize.SCHEMES`.

>>> PARITY_VARIANTS, MIXTURE_TRAINERS[:2]
(('base', 'window', 'classical'), ('hf-bpe', 'modtok-bpe'))
"""

# parity-aware BPE (modtok.bpe.parity): the variants a config names; "ratio" is the mode that
# ratios= selects on top of one, so the studies' menus add it (modtok.studies.parity_bpe.RUN_VARIANTS)
PARITY_VARIANTS = ("base", "window", "classical")
PARITY_COMPAT = ("reference", "hf")  # reproduce the reference implementation or HF's trainer; None: lossless
PARITY_ON_EXHAUSTED = ("stop", "skip")  # a language without a pair of frequency >= min_frequency

# extending a deployed tokenizer (modtok.adapt.extend): the arms' pre-tokenizers, the merge filters
EXTEND_ARMS = ("R1", "R2", "R2-deva")
EXTEND_FILTERS = ("strict", "relaxed", "none")

# AdaptMix's trainers (modtok.mixture.trainers.TRAINERS, in this order)
MIXTURE_TRAINERS = ("hf-bpe", "modtok-bpe", "sp-unigram", "sp-bpe")

# the modular LM's subtokenizer sampling schemes (modtok.lm.sampling.Scheme.kind)
LM_SAMPLING = ("mono", "samp_full", "samp_sub")
