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

import regex

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


# sentencepiece settings. From the modular-tokenizers paper (§3): byte-level fallback and no
# normalization. Ours, not the paper's (it names none of them): digits split one by one,
# whitespace-only pieces allowed and extra whitespace kept (the text is trained on as it is,
# as the BPE side sees it), and sentencepiece's own default character coverage of 0.9995.
SP_SETTINGS = dict(
    model_type="unigram",
    byte_fallback=True,
    split_digits=True,
    normalization_rule_name="identity",
    allow_whitespace_only_pieces=True,
    remove_extra_whitespaces=False,
    character_coverage=0.9995,
)


# sentencepiece skips, without a word, every input line longer than its max_sentence_length
# (in UTF-8 bytes); sp_model_proto sets it to 1 MiB and refuses longer lines first.
MAX_LINE_BYTES = 1 << 20
# sentencepiece's trainer refuses a character_coverage below 0.98 (its TrainerSpec check).
MIN_CHARACTER_COVERAGE = 0.98
BASE_PIECES = 3 + 256  # <unk>, <s>, </s> and the 256 byte-fallback pieces


def sp_model_proto(lines: list[str], vocab_size: int, num_threads: int = 2, **overrides) -> bytes:
    """Train sentencepiece in memory with :data:`SP_SETTINGS` (+ ``overrides``) and
    return the serialised ModelProto. ``vocab_size`` is a soft limit
    (``hard_vocab_limit=False``). A line over :data:`MAX_LINE_BYTES` or holding ``▅``
    (which sentencepiece would skip in silence) is a :class:`DataError`; a refusal by sentencepiece is a
    :class:`BudgetError` in modtok's words (:func:`sentencepiece_refusal`)."""
    import sentencepiece as spm

    for i, line in enumerate(lines):
        if len(line) * 4 > MAX_LINE_BYTES and len(line.encode("utf-8")) > MAX_LINE_BYTES:
            raise DataError(f"line {i + 1} has {len(line.encode('utf-8')):,} bytes: sentencepiece skips a line over "
                            f"{MAX_LINE_BYTES:,} bytes without a word; cut it first (modtok.unigram.train.train_unigram "
                            "cuts such text at grapheme boundaries and says so)")
        if "\u2585" in line:
            raise DataError(f"line {i + 1} holds ▅ (U+2585), which sentencepiece reserves: it skips such a line "
                            "without a word (modtok.unigram.train.train_unigram trains it through a stand-in)")
    model = io.BytesIO()
    try:
        spm.SentencePieceTrainer.train(
            sentence_iterator=iter(lines),
            model_writer=model,
            vocab_size=vocab_size,
            hard_vocab_limit=False,
            num_threads=num_threads,
            max_sentence_length=MAX_LINE_BYTES,
            input_sentence_size=0,
            minloglevel=2,
            **{**SP_SETTINGS, **overrides},
        )
    except RuntimeError as e:  # "Vocabulary size is too high (...)" and other refusals
        raise BudgetError(
            f"sentencepiece cannot train {vocab_size:,} pieces on {len(lines):,} lines "
            f"({sum(map(len, lines)):,} characters): {sentencepiece_refusal(str(e))}"
        ) from None
    return model.getvalue()


def sentencepiece_refusal(message: str) -> str:
    """A sentencepiece trainer error in modtok's words: its source location dropped, and no
    advice about sentencepiece flags that modtok's commands do not have.

    >>> sentencepiece_refusal("INTERNAL: src/trainer_interface.cc(638) [(x) <= (y)] Vocabulary size is smaller "
    ...     "than required_chars. 800 vs 2785. Increase vocab_size or decrease character_coverage with "
    ...     "--character_coverage option.")
    'the characters that cover the text need 2,785 pieces with the 259 base pieces: ask for at least 2,785 (-k)'
    """
    text = regex.sub(r"^\w+: \S+\(\d+\) \[.*?\]\s*", "", message.strip())
    chars = regex.search(r"required_chars\. (\d+) vs (\d+)", text)
    if chars:
        need = int(chars.group(2))
        return (f"the characters that cover the text need {need:,} pieces with the {BASE_PIECES} base pieces: "
                f"ask for at least {need:,} (-k)")
    if "isfinite(score)" in text:
        return ("a word (text between spaces) too long for its likelihood; cut long text without spaces first "
                "(modtok.unigram.train.train_unigram does)")
    high = regex.search(r"Vocabulary size too high \((\d+)\)\. Please set it to a value <= (\d+)", text)
    if high:
        return f"the text has pieces for at most {int(high.group(2)):,}: ask for at most that many (-k)"
    return text or message.strip()


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
