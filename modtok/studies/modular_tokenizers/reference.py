"""The monolingual reference of NSL: one tokenizer per (language, k), trained once.

Every table of the paper measures a tokenizer T on language ℓ against a tokenizer
T_ℓ trained on ℓ alone with the same budget k:

    NSL(T, ℓ) = Σ_s |T(s)| / Σ_s |T_ℓ(s)|     over ℓ's evaluation lines s

Which trainer makes T_ℓ depends on the study (HF byte-level BPE in notebook 01,
:func:`modtok.bpe.standard.train` in 02, sentencepiece Unigram in 03), so
:class:`Monolingual` takes it as a function. The notebooks' widgets ask for the same
references again and again; a reference and its token total are computed on first
use and kept. :func:`nsl_lines` is ``modtok nsl``: a modular tokenizer's subtokenizers
against HF BPE references, one table line per language.

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

from collections.abc import Callable, Iterator, Mapping, Sequence

import numpy as np

from modtok.evaluation import metrics
from modtok.text.training import TRAINING_SCHEME


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
        self._encoded: dict[tuple[str, int], metrics.Encoded] = {}

    def __call__(self, lang: str, k: int):
        """The reference of ``lang`` at budget ``k`` (trained on the first call)."""
        if (lang, k) not in self._models:
            self._models[lang, k] = self.train(lang, k)
        return self._models[lang, k]

    def encoded(self, lang: str, k: int) -> metrics.Encoded:
        """The reference of budget ``k``'s encoding of ``lang``'s evaluation lines (kept): the
        reference of a study's rows (:func:`modtok.evaluation.metrics.language_table_of`)."""
        if (lang, k) not in self._encoded:
            model = self(lang, k)
            encoder = model if self.encoder is None else self.encoder(model)
            self._encoded[lang, k] = metrics.Encoded(encoder, self.eval[lang], lang)
        return self._encoded[lang, k]

    def line_tokens(self, lang: str, k: int) -> np.ndarray:
        """|T_ℓ(s)| of each of ``lang``'s evaluation lines (an NSL's interval over lines draws them)."""
        return self.encoded(lang, k).tokens

    def tokens(self, lang: str, k: int) -> int:
        """Σ_s |T_ℓ(s)| over ``lang``'s evaluation lines."""
        return int(self.encoded(lang, k).total)

    def nsl(self, tokenizer, lang: str, k: int):
        """NSL of ``tokenizer`` on ``lang`` against the reference of budget ``k``."""
        return metrics.token_counts(tokenizer, self.eval[lang]).sum() / self.tokens(lang, k)


def nsl_lines(tokenizer, langs=None, k: int = 8000, scheme: str = TRAINING_SCHEME, train_chars: int = 1_000_000,
              eval=None, manifest=None, log=None) -> Iterator[str]:
    """``modtok nsl``: the NSL of each language's subtokenizer and of the full tokenizer of
    the :class:`~modtok.artifacts.modular.ModularTokenizer` directory ``tokenizer`` against a
    monolingual HF BPE of ``k`` tokens (``scheme``: its pre-tokenizer) trained on the
    language's ``train_chars`` training characters (from ``manifest``, else as
    :func:`~modtok.text.data.default_corpora` finds them), on the evaluation text (``eval``, else
    ``$MODTOK_EVAL`` / FLORES-200); a header, then one line per language as it is measured,
    with the size its reference reached (``ref``): HF's ``BpeTrainer`` stops short of ``k``
    when the text has no pair seen twice left, and such a row says so -- its NSL compares
    unequal budgets. Where the text came from goes to ``log`` (a callable taking one line)."""
    from modtok.artifacts import baselines
    from modtok.artifacts.modular import ModularTokenizer
    from modtok.text import data
    from modtok.text.eval_sets import need_eval_set

    tok = ModularTokenizer.load(tokenizer)
    langs = langs or tok.languages
    corpora = data.default_corpora(langs, train_chars=train_chars, eval=need_eval_set(eval).root, manifest=manifest)
    (log or (lambda line: None))(corpora.source)
    yield (f"{'language':12s} {'subtok':>8s} {'full':>8s} {'ref':>7s}   (NSL vs a monolingual HF BPE asked for "
           f"{k:,} tokens; ref: the tokens it got)")
    short = []
    for lang in langs:
        ref = baselines.train_hf_bpe(corpora.train[lang], k, scheme=scheme)
        lines = corpora.eval[lang]
        sub = metrics.nsl(tok.subtokenizer([lang]), ref, lines)
        full = metrics.nsl(tok, ref, lines)
        got = ref.get_vocab_size()
        if got < k:
            short.append(lang)
        flag = f"   reference short of {k:,}: unequal budgets" if got < k else ""
        yield f"{lang:12s} {sub:8.3f} {full:8.3f} {got:7,}{flag}"
    if short:
        yield (f"{len(short)} reference(s) stopped short of {k:,} tokens ({', '.join(short)}): their training text has "
               "no pair seen twice left (min_frequency 2); give more text (--train-chars) or a smaller -k")
