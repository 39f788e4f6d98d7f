"""Standard byte-level BPE: merge the most frequent pair until the vocabulary
has ``vocab_size`` tokens (the 256 bytes included).

    V <- 256 bytes
    while |V| < vocab_size:
        (a, b) <- most frequent adjacent pair    # ties: see modtok.bpe.engine
        add merge (a, b) -> ab; replace every (a, b) by ab

A merge whose output already exists (``a+bc`` after ``ab+c``) is recorded but
does not grow V, exactly as in HF ``BpeTrainer``.

>>> from collections import Counter
>>> m = train(Counter({"hug": 10, "pug": 5, "hugs": 5}), 259)
>>> [m.vocab[i] for i in range(256, len(m))]
[b'ug', b'hug', b'pug']
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping

from modtok.bpe.engine import Engine
from modtok.bpe.model import BPEModel
from modtok.errors import BudgetError
from modtok.progress import bar as progress_bar
from modtok.text.pretokenize import DEFAULT_SCHEME, count_pretokens


def check_budget(vocab_size: int, floor: int = 256, what: str = "vocab_size") -> None:
    if vocab_size < floor:
        raise BudgetError(f"{what}={vocab_size} is below the {floor} base symbols (the byte alphabet)")


def as_language_counts(counts: Counter | Mapping[str, Counter]) -> dict[str, Counter]:
    """``{lang: Counter}`` from a Counter (one language "all") or a mapping of Counters."""
    if isinstance(counts, Counter):
        return {"all": counts}
    return dict(counts)


def learn(engine: Engine, model: BPEModel, vocab_size: int, progress: bool = False,
          min_frequency: int = 1) -> BPEModel:
    """Add the engine's most frequent pairs to ``model`` until it has ``vocab_size`` tokens
    (or no pair occurs ``min_frequency`` times: HF ``BpeTrainer``'s rule of the same name)."""
    with progress_bar(total=vocab_size - len(model), desc="BPE merges", enabled=progress) as bar:
        while len(model) < vocab_size:
            # find the most frequent pair (ties: the engine's order, HF's)
            best = engine.best_pair()
            if best is None or best[2] < min_frequency:
                break
            a, b, _ = best
            size = len(model)
            # mint a new token for it (or find the one an earlier merge made) and replace
            # every occurrence of (a, b) with it; the engine updates the pair counts
            engine.merge(a, b, model.add_merge(a, b))
            bar.update(len(model) - size)
    return model


def train(
    counts: Counter | Mapping[str, Counter],
    vocab_size: int,
    scheme: str = DEFAULT_SCHEME,
    progress: bool = False,
    min_frequency: int = 1,
) -> BPEModel:
    """Byte-level BPE from pre-token counts (``count_pretokens`` / ``count_by_language``);
    ``min_frequency=2`` stops where :func:`modtok.artifacts.baselines.train_hf_bpe` does."""
    check_budget(vocab_size)
    engine = Engine.from_counts(as_language_counts(counts), capacity=vocab_size + 1)
    return learn(engine, BPEModel([], scheme), vocab_size, progress, min_frequency)


def train_from_lines(
    lines: Iterable[str], vocab_size: int, scheme: str = DEFAULT_SCHEME, progress: bool = False
) -> BPEModel:
    """Count the pre-tokens of ``lines`` with ``scheme``, then :func:`train`."""
    check_budget(vocab_size)
    return train(count_pretokens(lines, scheme), vocab_size, scheme, progress)
