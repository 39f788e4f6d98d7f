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

import numpy as np

from modtok.bpe import kernels as K
from modtok.bpe.engine import Engine
from modtok.bpe.model import BPEModel
from modtok.errors import BudgetError
from modtok.progress import bar as progress_bar
from modtok.text.lexer import WordCounts
from modtok.text.pretokenize import DEFAULT_SCHEME, count_arrays


def check_budget(vocab_size: int, floor: int = 256, what: str = "vocab_size") -> None:
    if vocab_size < floor:
        raise BudgetError(f"{what}={vocab_size} is below the {floor} base symbols (the byte alphabet)")


def as_language_counts(counts: Counter | Mapping[str, Counter]) -> dict[str, Counter]:
    """``{lang: Counter}`` from a Counter (one language "all") or a mapping of Counters."""
    if isinstance(counts, Counter):
        return {"all": counts}
    return dict(counts)


BATCH = 4096  # merges per kernel call of learn (the progress bar moves once per call)


def token_strings(model: BPEModel, capacity: int) -> K.Strings:
    """The kernels' :class:`~modtok.bpe.kernels.Strings` of ``model``'s tokens (each merged
    id by its first merge), with room for ``capacity`` ids."""
    parts = np.array(model.parents[256:], np.int64).reshape(-1, 2)
    return K.strings_of(parts[:, 0].copy(), parts[:, 1].copy(), capacity)


def learn(engine: Engine, model: BPEModel, vocab_size: int, progress: bool = False,
          min_frequency: int = 1) -> BPEModel:
    """Add the engine's most frequent pairs to ``model`` until it has ``vocab_size`` tokens
    (or no pair occurs ``min_frequency`` times: HF ``BpeTrainer``'s rule of the same name).

    The loop runs in the kernel (:meth:`Engine.merge_greedy`), up to :data:`BATCH` merges a
    call; it hands back only a merge whose string may already be a token (``a+bc`` after
    ``ab+c``, or a hash collision), which ``model.id_of`` decides here. The model grows by a
    whole call's merges at once (:meth:`BPEModel.extend`), and its ids must be the kernel's."""
    strings = token_strings(model, vocab_size)
    out = np.empty((BATCH, 3), np.int64)
    forced = -1
    with progress_bar(total=vocab_size - len(model), desc="BPE merges", enabled=progress) as bar:
        while len(model) < vocab_size:
            size = len(model)
            n, why = engine.merge_greedy(strings, size, vocab_size, min_frequency, out, forced)
            if model.extend(out[:n, :2]) != out[:n, 2].tolist():
                raise AssertionError("the kernel's token ids part from the model's")  # a bug, not bad input
            bar.update(len(model) - size)
            forced = -1
            if why == K.CHECK:
                a, b, _ = out[n].tolist()
                existing = model.id_of(model.vocab[a] + model.vocab[b])
                forced = len(model) if existing is None else existing
            elif why != K.FULL:
                break
    return model


def train(
    counts: Counter | Mapping[str, Counter] | WordCounts,
    vocab_size: int,
    scheme: str = DEFAULT_SCHEME,
    progress: bool = False,
    min_frequency: int = 1,
) -> BPEModel:
    """Byte-level BPE from pre-token counts (``count_pretokens`` / ``count_by_language``, or
    ``count_arrays``' arrays); ``min_frequency=2`` stops where
    :func:`modtok.artifacts.baselines.train_hf_bpe` does."""
    check_budget(vocab_size)
    engine = (Engine.from_word_counts(counts, capacity=vocab_size + 1) if isinstance(counts, WordCounts)
              else Engine.from_counts(as_language_counts(counts), capacity=vocab_size + 1))
    return learn(engine, BPEModel([], scheme), vocab_size, progress, min_frequency)


def train_from_lines(
    lines: Iterable[str], vocab_size: int, scheme: str = DEFAULT_SCHEME, progress: bool = False,
    workers: int = 1,
) -> BPEModel:
    """Count the pre-tokens of ``lines`` with ``scheme`` (as arrays: ``count_arrays``, on
    ``workers`` processes), then :func:`train`."""
    check_budget(vocab_size)
    return train(count_arrays({"all": lines}, scheme, workers), vocab_size, scheme, progress)
