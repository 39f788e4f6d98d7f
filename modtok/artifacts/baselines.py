"""Baseline tokenizers: byte-level BPE (HF ``tokenizers``) and Unigram (``sentencepiece``).

These are the references every modular tokenizer is measured against: a
*monolingual* tokenizer per language (the NSL denominator) and a *joint*
multilingual one trained on all languages at once. Both train in memory.

>>> tok = train_hf_bpe(["low lower lowest"] * 5, vocab_size=260)
>>> tok.decode(tok.encode("lowest low").ids)
'lowest low'
>>> sp = train_sp_unigram(["low lower lowest newer wider"] * 50, vocab_size=300)
>>> sp.decode(sp.encode("lowest wider"))
'lowest wider'
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Mapping

from modtok.errors import BudgetError, ConfigError, DataError
from modtok.text.pretokenize import DEFAULT_SCHEME, byte_alphabet, hf_pre_tokenizer

BYTE_ALPHABET_SIZE = 256


def _lines(corpus: Iterable[str] | Mapping[str, Iterable[str]]) -> list[str]:
    """All lines of a ``{lang: lines}`` corpus (languages in their order) or of a list."""
    if isinstance(corpus, Mapping):
        lines = [line for lang_lines in corpus.values() for line in lang_lines]
    elif isinstance(corpus, str):
        raise DataError("expected lines or {lang: lines}, got one string")
    else:
        lines = list(corpus)
    if not any(line.strip() for line in lines):
        raise DataError("cannot train a tokenizer on an empty corpus")
    return lines


def train_hf_bpe(
    corpus: Iterable[str] | Mapping[str, Iterable[str]],
    vocab_size: int,
    scheme: str = DEFAULT_SCHEME,
    min_frequency: int = 2,
):
    """Byte-level BPE trained with HF ``BpeTrainer``; returns a ``tokenizers.Tokenizer``.

    The vocabulary is the 256 byte symbols plus ``vocab_size - 256`` merges
    (fewer if the corpus runs out of pairs seen ``min_frequency`` times). Text
    is cut by the named pre-tokenizer ``scheme`` (``modtok.text.pretokenize``; the project's
    one default, :data:`~modtok.text.pretokenize.DEFAULT_SCHEME`), then
    mapped to the byte-level alphabet; decoding is lossless.
    """
    from tokenizers import Tokenizer, decoders, models, trainers

    if vocab_size < BYTE_ALPHABET_SIZE:
        raise BudgetError(
            f"vocab_size {vocab_size} is smaller than the byte alphabet ({BYTE_ALPHABET_SIZE})"
        )
    lines = _lines(corpus)
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = hf_pre_tokenizer(scheme)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        min_frequency=min_frequency,
        initial_alphabet=byte_alphabet(),
        show_progress=False,
        special_tokens=[],
    )
    tok.train_from_iterator(lines, trainer=trainer, length=len(lines))
    return tok


# The modular-tokenizers paper's sentencepiece settings (Appendix A.1.1).
SP_SETTINGS = dict(
    model_type="unigram",
    byte_fallback=True,
    split_digits=True,
    normalization_rule_name="identity",
    allow_whitespace_only_pieces=True,
    remove_extra_whitespaces=False,
    character_coverage=0.9995,
)


def sp_model_proto(lines: list[str], vocab_size: int, num_threads: int = 2, **overrides) -> bytes:
    """Train sentencepiece in memory with :data:`SP_SETTINGS` (+ ``overrides``) and
    return the serialised ModelProto. ``vocab_size`` is a soft limit
    (``hard_vocab_limit=False``); a refusal by sentencepiece is a :class:`BudgetError`."""
    import sentencepiece as spm

    model = io.BytesIO()
    try:
        spm.SentencePieceTrainer.train(
            sentence_iterator=iter(lines),
            model_writer=model,
            vocab_size=vocab_size,
            hard_vocab_limit=False,
            num_threads=num_threads,
            max_sentence_length=1 << 20,
            input_sentence_size=0,
            minloglevel=2,
            **{**SP_SETTINGS, **overrides},
        )
    except RuntimeError as e:  # "Vocabulary size is too high (...)" and other refusals
        raise BudgetError(
            f"sentencepiece cannot train {vocab_size} pieces on {len(lines)} lines "
            f"({sum(map(len, lines))} characters): {str(e).strip()}"
        ) from None
    return model.getvalue()


def train_sp_unigram(
    corpus: Iterable[str] | Mapping[str, Iterable[str]],
    vocab_size: int,
    num_threads: int = 2,
    **overrides,
):
    """Unigram LM tokenizer trained by ``sentencepiece`` in memory (paper settings:
    byte fallback, split digits, identity normalisation, whitespace-only pieces
    allowed, extra whitespace kept). Returns a ``SentencePieceProcessor``.

    ``vocab_size`` counts everything, including the 256 byte-fallback pieces and
    ``<unk>``, ``<s>``, ``</s>``; it is a soft limit (``hard_vocab_limit=False``):
    a corpus too small for it yields fewer pieces instead of failing.
    Note: sentencepiece writes spaces as U+2581 ``▁`` and decodes every ``▁``
    back to a space, so text that itself contains U+2581 does not round-trip.
    """
    import sentencepiece as spm

    if vocab_size < BYTE_ALPHABET_SIZE + 4:
        raise BudgetError(
            f"vocab_size {vocab_size} leaves no room beyond the 256 byte-fallback pieces "
            "and the 3 control pieces"
        )
    lines = [line for line in _lines(corpus) if line.strip()]
    return spm.SentencePieceProcessor(model_proto=sp_model_proto(lines, vocab_size, num_threads, **overrides))


def train_monolingual(
    corpus: Mapping[str, Iterable[str]],
    vocab_size: int,
    kind: str = "bpe",
    **kwargs,
) -> dict:
    """One tokenizer per language: ``{lang: tokenizer}`` (``kind`` = "bpe" or "unigram")."""
    train = _trainer(kind)
    return {lang: train(lines, vocab_size, **kwargs) for lang, lines in corpus.items()}


def train_joint(corpus: Mapping[str, Iterable[str]], vocab_size: int, kind: str = "bpe", **kwargs):
    """One multilingual tokenizer trained on all languages' lines together."""
    return _trainer(kind)(corpus, vocab_size, **kwargs)


def _trainer(kind: str):
    trainers = {"bpe": train_hf_bpe, "unigram": train_sp_unigram}
    if kind not in trainers:
        raise ConfigError(f"unknown tokenizer kind {kind!r} (known: {', '.join(trainers)})")
    return trainers[kind]
