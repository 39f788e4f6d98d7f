"""Monolingual LM batches, each tokenized with a sampled subtokenizer.

For step ``s`` the :class:`~modtok.lm.sampling.SubtokenizerSampler` draws the
batch language ``L`` and the subtokenizer languages; every row then starts at a
random line of ``L``'s corpus (nanoGPT-style random offsets, seeded by
``(seed, s, rank)``) and packs consecutive lines, each preceded by the LM's
document-boundary token, until ``seq_len + 1`` tokens are filled::

    stream   = [DOC] a1 a2 a3 [DOC] b1 b2 ...
    idx      = stream[:-1]            (B, T)
    targets  = stream[1:]             (B, T)
    active   = ids(langs) + [DOC]     (K,)

The boundary token is the LM's own id ``tokenizer.vocab_size`` (the LM vocabulary
is one larger than the tokenizer's; :func:`lm_vocab_size`) and is in every
active set; predicting it stands for the line's newline byte. Bits per byte
need the raw UTF-8 bytes each target covers: a line of ``n`` tokens and ``m``
bytes spreads ``m + 1`` bytes (the ``+1`` is the newline) evenly over its ``n``
tokens and the boundary that ends it, so the shares of a whole line add up to
its exact byte count.

Batches are a pure function of the step, so a background thread prefetches
the next ones while the model trains (:meth:`BatchSource.batches`) and resuming
at step ``s`` continues with exactly the same data.
"""

from __future__ import annotations

import hashlib
import json
from collections import deque
from collections.abc import Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import torch

from modtok.errors import ActiveSetError, DataError, UnknownLanguageError
from modtok.lm.sampling import SubtokenizerSampler


def lm_vocab_size(tokenizer) -> int:
    """Rows of the LM's embedding and output matrices: the tokenizer's ids plus the boundary."""
    return tokenizer.vocab_size + 1


def boundary_id(tokenizer) -> int:
    """The LM's document-boundary id (one past the tokenizer's last id)."""
    return tokenizer.vocab_size


def check_langs(langs) -> tuple[str, ...] | None:
    """``None`` (the full tokenizer) or a sorted tuple of languages; an empty union is an error."""
    if langs is None:
        return None
    langs = (langs,) if isinstance(langs, str) else tuple(sorted(set(langs)))
    if not langs:
        raise ActiveSetError("empty union of subtokenizers: name at least one language (or None for the full tokenizer)")
    return langs


def active_ids(tokenizer, langs) -> np.ndarray:
    """Sorted global ids a model may predict under ``langs`` (``None`` = full tokenizer), boundary included."""
    langs = check_langs(langs)
    if langs is None:
        return np.arange(lm_vocab_size(tokenizer), dtype=np.int64)
    return np.append(tokenizer.ids(langs), boundary_id(tokenizer)).astype(np.int64)


def vocab_fingerprint(tokenizer) -> str:
    """sha256 of the tokenizer model and its language id lists: a checkpoint belongs to one vocabulary."""
    h = hashlib.sha256(json.dumps(tokenizer.tokenizer_json, sort_keys=True, ensure_ascii=False).encode())
    for lang in sorted(tokenizer.languages):
        h.update(lang.encode() + b"\0" + np.asarray(tokenizer.ids([lang]), dtype=np.int64).tobytes())
    return h.hexdigest()


@dataclass
class Batch:
    step: int
    lang: str
    langs: tuple[str, ...] | None  # subtokenizer languages; None = full tokenizer
    idx: torch.Tensor  # (B, T) input ids
    targets: torch.Tensor  # (B, T) next-token ids
    active_ids: torch.Tensor  # (K,) sorted ids of the softmax
    n_bytes: float  # UTF-8 bytes the targets cover

    @property
    def setting(self) -> str:
        return "full" if self.langs is None else "+".join(self.langs)


class BatchSource:
    """Batches of ``batch_size`` rows x ``seq_len`` tokens from ``{lang: lines}``.

    Every language the sampler can draw must have at least one non-blank line.
    """

    def __init__(self, tokenizer, corpus: Mapping[str, list[str]], sampler: SubtokenizerSampler,
                 batch_size: int, seq_len: int, seed: int = 0):
        if batch_size < 1 or seq_len < 1:
            raise DataError(f"batch_size and seq_len must be >= 1, got {batch_size} and {seq_len}")
        self.tokenizer, self.sampler = tokenizer, sampler
        self.batch_size, self.seq_len, self.seed = batch_size, seq_len, int(seed)
        self.lines: dict[str, list[str]] = {}
        self.nbytes: dict[str, np.ndarray] = {}
        for lang in sampler.mixture:
            if lang not in tokenizer.languages:
                raise UnknownLanguageError(lang, tokenizer.languages)
            lines = [s for s in corpus.get(lang, ()) if s.strip()]
            if not lines:
                raise DataError(f"language {lang!r} is in the training mixture but has no training text")
            self.lines[lang] = lines
            self.nbytes[lang] = np.array([len(s.encode("utf-8")) for s in lines], dtype=np.int64)
        self.doc = boundary_id(tokenizer)
        self._active: dict = {}

    def active_ids(self, langs) -> torch.Tensor:
        if langs not in self._active:
            self._active[langs] = torch.from_numpy(active_ids(self.tokenizer, langs))
        return self._active[langs]

    def _row(self, rng, lang: str, langs) -> tuple[list[int], list[float]]:
        """seq_len + 1 ids starting with the boundary, and the byte share of ids[1:]."""
        lines, nbytes, need = self.lines[lang], self.nbytes[lang], self.seq_len + 1
        ids, shares = [self.doc], []
        i = int(rng.integers(len(lines)))
        while len(ids) < need:
            chunk = [(i + j) % len(lines) for j in range(4)]
            for j, toks in zip(chunk, self.tokenizer.encode_batch([lines[j] for j in chunk], langs)):
                ids += list(toks) + [self.doc]
                shares += [(nbytes[j] + 1) / (len(toks) + 1)] * (len(toks) + 1)
            i += 4
        return ids[:need], shares[: need - 1]

    def batch(self, step: int, rank: int = 0) -> Batch:
        """The rows of process ``rank`` for ``step`` (same language and subtokenizer on every rank)."""
        d = self.sampler.draw(step)
        rng = np.random.default_rng([self.seed, int(step), int(rank), 1])
        rows, shares = zip(*(self._row(rng, d.lang, d.langs) for _ in range(self.batch_size)))
        stream = torch.tensor(rows, dtype=torch.long)  # (B, T + 1)
        return Batch(
            step=step, lang=d.lang, langs=d.langs,
            idx=stream[:, :-1].contiguous(), targets=stream[:, 1:].contiguous(),
            active_ids=self.active_ids(d.langs),
            n_bytes=float(np.sum(shares)),
        )

    def batches(self, start: int, stop: int, rank: int = 0, prefetch: int = 2) -> Iterator[Batch]:
        """Batches for steps ``start .. stop - 1``, built ``prefetch`` steps ahead by a background thread."""
        pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="modtok-batches")
        try:
            pending = deque(pool.submit(self.batch, s, rank) for s in range(start, min(stop, start + prefetch + 1)))
            nxt = start + len(pending)
            while pending:
                batch = pending.popleft().result()
                if nxt < stop:
                    pending.append(pool.submit(self.batch, nxt, rank))
                    nxt += 1
                yield batch
        finally:
            pool.shutdown(wait=True, cancel_futures=True)

    def state_dict(self) -> dict:
        """Everything that fixes the data stream except the step."""
        return {
            "sampler": self.sampler.state_dict(),
            "batch_size": self.batch_size,
            "seq_len": self.seq_len,
            "seed": self.seed,
            "vocab": vocab_fingerprint(self.tokenizer),
        }
