"""Modular Unigram (the modular-tokenizers paper, §4.1, Algorithm 1).

- :mod:`~modtok.unigram.lattice`   trie + Viterbi + forward-backward (numba), byte fallback
- :mod:`~modtok.unigram.reference` the same in plain Python (oracle for tests)
- :mod:`~modtok.unigram.model`     :class:`UnigramModel`: encode, HF tokenizer.json, sentencepiece .model
- :mod:`~modtok.unigram.train`     monolingual sentencepiece training with the paper's settings
- :mod:`~modtok.unigram.merge`     union of vocabularies + EM re-estimation on the joint corpus
- :mod:`~modtok.unigram.extract`   restricted subtokenizers and frequency-based extraction
"""

from modtok.unigram.model import UnigramModel, normalize

__all__ = ["UnigramModel", "normalize"]
