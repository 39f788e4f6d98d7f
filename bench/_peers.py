"""Peer implementations the benchmarks time modtok against (one copy each)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping

from modtok.text.pretokenize import pattern


def hf_pretoken_counts(corpus: Mapping[str, Iterable[str]], scheme: str) -> dict[str, Counter]:
    """``{lang: Counter(pre-token -> count)}`` cut by HF ``tokenizers``' Oniguruma
    ``Split`` with the scheme's regex, the way an HF trainer sees the text."""
    from tokenizers import Regex, pre_tokenizers

    split = pre_tokenizers.Split(Regex(pattern(scheme)), behavior="isolated")
    out = {}
    for lang, lines in corpus.items():
        counts: Counter = Counter()
        for line in lines:
            counts.update(piece for piece, _ in split.pre_tokenize_str(line))
        out[lang] = counts
    return out


def hf_parity_merges(train: Mapping[str, list[str]], dev: Mapping[str, list[str]] | None, merges: int,
                     pre_tokenizer, ratios=None, **options) -> list[tuple[str, str]]:
    """HF ``ParityBpeTrainer`` (the pinned wheel) from lines, one iterator per language:
    its merges as byte-level string pairs. ``options``: the trainer's own keywords
    (``variant``, ``window_size``, ``alpha``, ``global_merges``, ``min_frequency``)."""
    import json

    from tokenizers import Tokenizer, models
    from tokenizers.trainers import ParityBpeTrainer

    from modtok.text.pretokenize import byte_alphabet

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizer
    trainer = ParityBpeTrainer(num_merges=merges, initial_alphabet=byte_alphabet(), show_progress=False, **options)
    trainer.train_from_iterator(tok, list(train.values()), dev_iterators=None if dev is None else list(dev.values()),
                                ratio=ratios)
    return [tuple(m.split(" ")) if isinstance(m, str) else tuple(m)
            for m in json.loads(tok.to_str())["model"]["merges"]]


def rustbpe_tokens(lines: list[str], vocab_size: int, pattern: str) -> list[bytes]:
    """karpathy's ``rustbpe`` (nanochat's trainer; the ``bench`` extra) from lines: its
    tokens in rank order (bytes 0..255 first)."""
    import rustbpe

    tok = rustbpe.Tokenizer()
    tok.train_from_iterator(lines, vocab_size, pattern=pattern)
    return [token for token, _ in sorted(tok.get_mergeable_ranks(), key=lambda kv: kv[1])]


def bpeasy_vocab(lines: list[str], vocab_size: int, pattern: str) -> dict[bytes, int]:
    """``bpeasy`` (the ``bench`` extra) from lines: its ``{token bytes: rank}``. Its
    Rust side prints progress lines to stdout; they are sent to /dev/null here."""
    import bpeasy

    with _stdout_to_devnull():
        return bpeasy.train_bpe(iter(lines), pattern, 128, vocab_size)


class _stdout_to_devnull:
    """Point file descriptor 1 at /dev/null for a block (a Rust extension's println!)."""

    def __enter__(self):
        import os
        import sys

        sys.stdout.flush()
        self.saved = os.dup(1)
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)
        os.close(null)

    def __exit__(self, *exc):
        import os

        os.dup2(self.saved, 1)
        os.close(self.saved)
