"""The monolingual reference of NSL: one tokenizer per (language, k), trained once.

Every table of the paper measures a tokenizer T on language ℓ against a tokenizer
T_ℓ trained on ℓ alone with the same budget k:

    NSL(T, ℓ) = Σ_s |T(s)| / Σ_s |T_ℓ(s)|     over ℓ's evaluation lines s

Which trainer makes T_ℓ depends on the study (HF byte-level BPE in notebook 01,
:func:`modtok.bpe.standard.train` in 02, sentencepiece Unigram in 03), so
:class:`Monolingual` takes it as a function. The notebooks' widgets ask for the same
references again and again; a reference and its token total are computed on first
use and kept.

>>> class Chars:                                  # a toy tokenizer: one token per character
...     def encode(self, text): return list(text)
>>> ref = Monolingual(lambda lang, k: Chars(), {"x": ["ab", "c"]})
>>> ref.tokens("x", 8)                            # 2 + 1 characters
3
>>> ref("x", 8) is ref("x", 8)                    # trained once
True
>>> float(ref.nsl(Chars(), "x", 8))               # the reference against itself
1.0
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from modtok.evaluation import metrics


class Monolingual:
    """The references ``T_ℓ``: ``train(lang, k)`` on first use, then kept.

    ``eval`` holds each language's evaluation lines; ``encoder`` turns a trained
    reference into something :func:`modtok.evaluation.metrics.token_counts` encodes
    (e.g. :func:`modtok.bpe.export.hf_tokenizer` for a ``BPEModel``; default: itself).
    """

    def __init__(self, train: Callable[[str, int], object], eval: Mapping[str, Sequence[str]],
                 encoder: Callable[[object], object] | None = None):
        self.train, self.eval, self.encoder = train, eval, encoder
        self._models: dict[tuple[str, int], object] = {}
        self._tokens: dict[tuple[str, int], int] = {}

    def __call__(self, lang: str, k: int):
        """The reference of ``lang`` at budget ``k`` (trained on the first call)."""
        if (lang, k) not in self._models:
            self._models[lang, k] = self.train(lang, k)
        return self._models[lang, k]

    def tokens(self, lang: str, k: int) -> int:
        """Σ_s |T_ℓ(s)| over ``lang``'s evaluation lines."""
        if (lang, k) not in self._tokens:
            model = self(lang, k)
            encoder = model if self.encoder is None else self.encoder(model)
            self._tokens[lang, k] = int(metrics.token_counts(encoder, self.eval[lang]).sum())
        return self._tokens[lang, k]

    def nsl(self, tokenizer, lang: str, k: int):
        """NSL of ``tokenizer`` on ``lang`` against the reference of budget ``k``."""
        return metrics.token_counts(tokenizer, self.eval[lang]).sum() / self.tokens(lang, k)
