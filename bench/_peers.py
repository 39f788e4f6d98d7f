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
