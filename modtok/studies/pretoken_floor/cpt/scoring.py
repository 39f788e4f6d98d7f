"""Scoring held-out pieces in bits per byte, and the intervals over documents and seeds.

Every piece is scored *independently, in one context* (App. D):
:func:`score_pieces`; :func:`compare` turns the per-piece nats and bytes of
every arm and seed into bits per byte with paired-bootstrap intervals over
documents (:func:`modtok.evaluation.stats.paired_bootstrap`)::

    bpb(arm) = mean over seeds of  Σ_pieces nats(t1..tn | DOC) / ln 2  /  Σ_pieces bytes(piece)
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import torch
import torch.nn.functional as F

from modtok.artifacts.modular import ModularTokenizer
from modtok.errors import DataError, UsageError
from modtok.evaluation import stats
from modtok.lm.batches import boundary_id
from modtok.lm.loss import IGNORE
from modtok.lm.model import LM


@torch.no_grad()
def score_pieces(model: LM, tokenizer: ModularTokenizer, texts: Sequence[str], prefix: int | None = None,
                 batch_size: int = 16, device=None) -> tuple[np.ndarray, np.ndarray]:
    """``(nats, scored bytes)`` per piece: each piece is encoded as ``prefix t1 ..
    tn`` (``prefix``: default the boundary id ``DOC``, which every arm has) and
    every token ``t1 .. tn`` is scored under the full softmax in ONE window of
    the model (App. D: every piece independently, in one context); a piece
    longer than ``max_seq_len`` tokens is refused, never cut into windows
    (:func:`fit_held_out` chooses pieces that fit). Every byte of a piece is
    scored, so the scored bytes are the piece's UTF-8 bytes under any tokenizer."""
    device = device or next(model.parameters()).device
    prefix = boundary_id(tokenizer) if prefix is None else prefix
    T = model.cfg.max_seq_len
    windows, scored = [], []
    for p, ids in enumerate(tokenizer.encode_batch(list(texts))):
        if not ids:
            raise DataError(f"piece {p} is empty: nothing to score")
        if len(ids) > T:
            raise DataError(f"piece {p} is {len(ids)} tokens, more than the model's {T}-id context: it would be "
                            "cut into two windows (App. D scores a piece in one context; see fit_held_out)")
        windows.append([prefix, *ids])
        scored.append(len(texts[p].encode("utf-8")))
    nats = np.zeros(len(texts))
    for i in range(0, len(windows), batch_size):
        chunk = windows[i : i + batch_size]
        width = max(map(len, chunk)) - 1
        idx = torch.zeros((len(chunk), width), dtype=torch.long)  # (B, T) right-padded
        targets = torch.full((len(chunk), width), IGNORE, dtype=torch.long)
        for r, w in enumerate(chunk):
            idx[r, : len(w) - 1], targets[r, : len(w) - 1] = torch.tensor(w[:-1]), torch.tensor(w[1:])
        logits = model.logits(idx.to(device)).float()  # (B, T, V) the full softmax
        nats[i : i + len(chunk)] = F.cross_entropy(logits.transpose(1, 2), targets.to(device), ignore_index=IGNORE,
                                                   reduction="none").sum(1).double().cpu().numpy()  # (B,) per piece
    return nats, np.asarray(scored, dtype=np.int64)


def compare(scores: Mapping[str, Mapping[int, tuple[np.ndarray, np.ndarray]]], units: Sequence[int],
            pairs: Sequence[tuple[str, str]] = (), n_boot: int = 1000, level: float = 0.95,
            seed: int = 0) -> dict[str, tuple[float, float, float]]:
    """Bits per byte of every arm, mean over its seeds, and of every pair's
    difference ``"a − b"`` (seed by seed, then the mean), each ``(point, lo, hi)``
    with the interval of :func:`modtok.evaluation.stats.paired_bootstrap` over
    ``units``: the nats and bytes of the pieces are summed per unit (document),
    and every replicate draws the same units for every arm and seed. Each seed's
    own figure is there too, key ``"… @ seed s"``.

    ``scores``: ``{arm: {seed: (nats, bytes) per piece}}``; every arm has the same
    seeds (an arm without seeds, the base model, repeats its one score under
    each), and the same scored bytes (:func:`score_pieces`: by construction).

    >>> ln2 = math.log(2)                      # two documents of one byte, 2 and 4 bits; seeds 0 and 1
    >>> sc = {"A": {0: ([2 * ln2, 4 * ln2], [1, 1]), 1: ([4 * ln2, 4 * ln2], [1, 1])},
    ...       "B": {0: ([ln2, ln2], [1, 1]), 1: ([ln2, ln2], [1, 1])}}
    >>> res = compare(sc, [0, 1], [("A", "B")], n_boot=200)
    >>> res["A"][0], res["A @ seed 0"][0], res["A − B"][0], res["A − B @ seed 1"][0]
    (3.5, 3.0, 2.5, 3.0)
    """
    arms = list(scores)
    seeds = list(next(iter(scores.values())))
    units = np.asarray(units, dtype=np.int64)
    n_units = int(units.max()) + 1
    per_unit = lambda v: np.bincount(units, weights=np.asarray(v, np.float64), minlength=n_units)  # noqa: E731
    nbytes = None
    samples = {}
    for a in arms:
        if list(scores[a]) != seeds:
            raise UsageError(f"compare: arm {a!r} has seeds {list(scores[a])}, the first arm {seeds}")
        for s in seeds:
            nats, b = scores[a][s]
            if nbytes is None:
                nbytes = np.asarray(b)
            elif not np.array_equal(np.asarray(b), nbytes):
                raise UsageError(f"compare: arm {a!r} (seed {s}) scored other bytes than the first arm")
            samples[f"bits {a} @ {s}"] = per_unit(nats) / math.log(2)
    samples["bytes"] = per_unit(nbytes)

    def bpb(x):  # every arm and seed, the seed means, then the pairs, from the same draws
        den = x["bytes"].sum(-1)
        out = {f"{a} @ seed {s}": x[f"bits {a} @ {s}"].sum(-1) / den for a in arms for s in seeds}
        out |= {a: sum(out[f"{a} @ seed {s}"] for s in seeds) / len(seeds) for a in arms}
        for a, b in pairs:
            out[f"{a} − {b}"] = out[a] - out[b]
            out |= {f"{a} − {b} @ seed {s}": out[f"{a} @ seed {s}"] - out[f"{b} @ seed {s}"] for s in seeds}
        return out

    return stats.paired_bootstrap(samples, bpb, n_boot, level, seed)
