"""The papers' experiments, one module (or package) per paper.

The algorithms live below (``bpe``, ``unigram``, ``mixture``, ``lm``); a study wires them to
data, the paper's setting and its evaluation, and returns tables the notebooks display.
Every study provides the same things under the same names (:mod:`modtok.studies.contract`, the
guide: rows, setting, measured, reasons, cache_note) and declares its paper and notebook there;
:mod:`modtok.studies.setting` holds the setting fields they share.

- :mod:`modtok.studies.modular_tokenizers` "To Each Language Its Tokenizer" (notebooks 01-04)
- :mod:`modtok.studies.parity_bpe`         "Parity-Aware Byte-Pair Encoding" (notebook 05)
- :mod:`modtok.studies.adaptmix`           "The Art of Breaking Words" (notebook 06)
- :mod:`modtok.studies.pretoken_floor`     "Merge-Based Vocabulary Extension Stalls at the
  Pre-Tokenizer" (notebook 07): continued pretraining, the cross-script sweep, added tokens
"""
