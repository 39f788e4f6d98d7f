"""Continued BPE: append merges learned on new text on top of a frozen merge list.

    segment every new pre-token with the frozen merges (the encoder's rule)
    while fewer than K new tokens: add the most frequent pair as a merge

After segmentation no adjacent pair is a frozen merge, so every learned merge
is new and goes *after* the frozen ones: every original token keeps its id
and every original merge its rank.

>>> from collections import Counter
>>> from modtok.bpe.model import BPEModel
>>> base = BPEModel([(97, 98)], scheme="whitespace")            # a+b
>>> m = continue_training(base, Counter({"abc": 3}), 1)
>>> m.merges, m.vocab[257]
([(97, 98), (256, 99)], b'abc')
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

from modtok.bpe.engine import Engine
from modtok.bpe.model import BPEModel
from modtok.bpe.standard import as_language_counts, learn
from modtok.errors import BudgetError


def continue_training(
    base: BPEModel,
    counts: Counter | Mapping[str, Counter],
    new_tokens: int,
    progress: bool = False,
) -> BPEModel:
    """A copy of ``base`` with up to ``new_tokens`` new tokens learned on ``counts``
    (pre-token counts made with ``base.scheme``; fewer if the text runs out of pairs)."""
    if new_tokens < 0:
        raise BudgetError(f"new_tokens={new_tokens} is negative")
    model = BPEModel(base.merges, base.scheme)
    engine = Engine.from_counts(
        as_language_counts(counts),
        merges=model.merges,
        results=model.results,
        capacity=len(model) + new_tokens + 1,
    )
    return learn(engine, model, len(model) + new_tokens, progress)
