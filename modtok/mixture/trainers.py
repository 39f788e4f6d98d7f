"""The trainer registry: one small protocol AdaptMix drives any trainer through.

A :class:`Trainer` turns a sample (:class:`modtok.mixture.pool.Sample`) into a
tokenizer. The registry :data:`TRAINERS` has HF BPE, modtok BPE (the same
merges as HF ``BpeTrainer`` on the same pre-tokens, faster from counts) and
sentencepiece Unigram / BPE. The BPE trainers cut text by a modtok
pre-tokenizer ``scheme``, by default :data:`modtok.text.pretokenize.DEFAULT_SCHEME`
(``"llama3"``, the project's one default); sentencepiece cuts text itself.

>>> make_trainer("modtok-bpe", 1000).scheme, make_trainer("hf-bpe", 1000, "whitespace").name
('llama3', 'hf-bpe-1000')
>>> make_trainer("sp-unigram", 1000).scheme is None
True
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from modtok.errors import MixtureError
from modtok.options import MIXTURE_TRAINERS
from modtok.mixture.pool import Sample
from modtok.text.pretokenize import DEFAULT_SCHEME, pattern


@dataclass(frozen=True)
class Trainer:
    """Any tokenizer trainer AdaptMix can drive.

    ``train(data)`` gets ``{lang: lines}`` (``consumes="lines"``) or
    ``{lang: Counter(pre-token -> count)}`` cut by ``scheme``
    (``consumes="counts"``) and returns a tokenizer that
    :func:`modtok.evaluation.metrics.encode_lines` accepts. An adapter is a few lines,
    e.g. for a counts-based trainer ``f(counts, vocab_size) -> BPEModel``::

        Trainer("my-bpe", lambda counts: hf_tokenizer(f(counts, 32000)), "counts", "whitespace")
    """

    name: str
    train: Callable[[Mapping], object]
    consumes: str = "lines"
    scheme: str | None = None

    def __post_init__(self):
        if self.consumes not in ("lines", "counts"):
            raise MixtureError(f"trainer {self.name}: consumes must be 'lines' or 'counts', got {self.consumes!r}")
        if self.consumes == "counts":
            pattern(self.scheme or "")

    def data(self, sample: Sample) -> Mapping:
        """What :attr:`train` consumes, from a sample."""
        return sample.counts(self.scheme) if self.consumes == "counts" else sample.lines()


def hf_bpe(vocab_size: int, scheme: str = DEFAULT_SCHEME) -> Trainer:
    """Byte-level BPE by HF ``BpeTrainer`` (:func:`modtok.artifacts.baselines.train_hf_bpe`)."""
    from modtok.artifacts import baselines

    pattern(scheme)
    return Trainer(f"hf-bpe-{vocab_size}", lambda lines: baselines.train_hf_bpe(lines, vocab_size, scheme),
                   scheme=scheme)


def modtok_bpe(vocab_size: int, scheme: str = DEFAULT_SCHEME) -> Trainer:
    """modtok standard BPE from pre-token counts (:mod:`modtok.bpe.standard`), as an HF tokenizer."""
    from modtok.bpe import standard
    from modtok.bpe.export import hf_tokenizer

    return Trainer(
        f"modtok-bpe-{vocab_size}",
        lambda counts: hf_tokenizer(standard.train(counts, vocab_size, scheme)),
        "counts",
        scheme,
    )


def sp_unigram(vocab_size: int) -> Trainer:
    """sentencepiece Unigram with the project's settings (:func:`modtok.artifacts.baselines.train_sp_unigram`)."""
    from modtok.artifacts import baselines

    return Trainer(f"sp-unigram-{vocab_size}", lambda lines: baselines.train_sp_unigram(lines, vocab_size))


def sp_bpe(vocab_size: int) -> Trainer:
    """sentencepiece BPE, the same settings with ``model_type="bpe"``."""
    from modtok.artifacts import baselines

    return Trainer(
        f"sp-bpe-{vocab_size}", lambda lines: baselines.train_sp_unigram(lines, vocab_size, model_type="bpe")
    )


# the names are modtok.options.MIXTURE_TRAINERS (the command line's --trainer menu), in this order
TRAINERS: dict[str, Callable[..., Trainer]] = dict(
    zip(MIXTURE_TRAINERS, (hf_bpe, modtok_bpe, sp_unigram, sp_bpe), strict=True))


# The trainers that cut text by a modtok pre-tokenizer scheme (sentencepiece cuts it itself).
TAKES_SCHEME = frozenset({"hf-bpe", "modtok-bpe"})


def make_trainer(kind: str, vocab_size: int, scheme: str = DEFAULT_SCHEME) -> Trainer:
    """A trainer of :data:`TRAINERS` by name; ``scheme`` is the pre-tokenizer of
    the trainers in :data:`TAKES_SCHEME` (the sentencepiece ones have none)."""
    if kind not in TRAINERS:
        raise MixtureError(f"unknown trainer {kind!r} (known: {', '.join(TRAINERS)})")
    return TRAINERS[kind](vocab_size, scheme) if kind in TAKES_SCHEME else TRAINERS[kind](vocab_size)
