"""Training batches from one stream of lines, for continued pretraining.

The stream is ``[DOC] line1 [DOC] line2 [DOC] ...`` (``DOC``: the LM's boundary
id, :func:`modtok.lm.batches.boundary_id`; a line is a document, and the
boundary stands for its newline) cut into consecutive windows of ``seq_len + 1``
ids that share their edge id, so every id after the first is a target exactly
once a pass; a batch is ``batch_size`` consecutive windows (:class:`StreamSource`).
The bytes of a step are the exact UTF-8 bytes of its targets (a token's own
bytes, 1 for ``DOC``), so two tokenizers that read the same lines see the same
byte total, whatever their tokenization (the byte-matched arms of
:mod:`modtok.studies.pretoken_floor.cpt`).

Unlike :class:`modtok.lm.batches.BatchSource` (per-language batches of a
modular tokenizer), the tokenizer here has one language, :data:`ALL`, holding
every id: the softmax is always over the whole vocabulary.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence

import numpy as np
import torch

from modtok.artifacts.modular import ModularTokenizer
from modtok.errors import DataError
from modtok.lm.batches import Batch, boundary_id, lm_vocab_size, vocab_fingerprint
from modtok.lm.loss import IGNORE
from modtok.text.pretokenize import from_byte_level

ALL = "all"  # the one "language" of a stream's tokenizer: every id is in its softmax


def lm_tokenizer(tokenizer_json: dict) -> ModularTokenizer:
    """A tokenizer (``tokenizer.json`` as a dict) as the LM code takes it: one
    language :data:`ALL` holding every id (the softmax is always over the whole
    vocabulary)."""
    vocab = tokenizer_json["model"]["vocab"]
    return ModularTokenizer(tokenizer_json, {ALL: range(max(vocab.values()) + 1)})


def token_nbytes(tokenizer: ModularTokenizer) -> np.ndarray:
    """UTF-8 bytes of every LM id (shape ``(lm_vocab_size,)``); the boundary
    counts 1 (its newline)."""
    out = np.ones(lm_vocab_size(tokenizer), dtype=np.int64)
    for s, i in tokenizer.tokenizer_json["model"]["vocab"].items():
        out[i] = len(from_byte_level(s))
    return out


class StreamSource:
    """Batches for :func:`modtok.lm.train.train` from one stream of lines (module
    docstring). ``steps`` of them cover ``windows`` in order; ``cycle=True``
    wraps around (the base model's several passes), otherwise the last batch
    has the remaining windows and a stream too short for a step is an error.
    The last window is padded with ignored targets (the loop's mean over
    ``targets.numel()`` then weighs that one step a little less).

    >>> from modtok.bpe.model import BPEModel
    >>> from modtok.bpe.export import to_tokenizer_json
    >>> tok = lm_tokenizer(to_tokenizer_json(BPEModel([], "llama3")))   # bytes only; DOC = 256
    >>> src = StreamSource(tok, ["ab", "c"], batch_size=2, seq_len=2)   # DOC a b DOC c DOC
    >>> src.windows, src.steps, src.text_bytes, [src.batch(s).n_bytes for s in range(src.steps)]
    (3, 2, 5, [4.0, 1.0])
    >>> src.batch(1).targets.tolist()                                   # the last window, padded
    [[256, -1]]
    """

    def __init__(self, tokenizer: ModularTokenizer, lines: Sequence[str], batch_size: int, seq_len: int,
                 cycle: bool = False):
        lines = [s for s in lines if s.strip()]
        if not lines:
            raise DataError("the training stream has no non-blank line")
        self.tokenizer, self.batch_size, self.seq_len, self.cycle = tokenizer, batch_size, seq_len, cycle
        doc = boundary_id(tokenizer)
        stream = [doc]
        for ids in tokenizer.encode_batch(lines):
            stream += ids
            stream.append(doc)
        self.stream = torch.tensor(stream, dtype=torch.long)  # (N,)
        self.nbytes = torch.from_numpy(token_nbytes(tokenizer))[self.stream]  # (N,) bytes of each id
        self.windows = math.ceil((len(stream) - 1) / seq_len)
        self.text_bytes = sum(len(s.encode("utf-8")) + 1 for s in lines)  # + the newline each DOC stands for
        self._digest = hashlib.sha256("\n".join(lines).encode()).hexdigest()

    @property
    def steps(self) -> int:
        """Steps of one pass over the stream."""
        return math.ceil(self.windows / self.batch_size)

    def batch(self, step: int, rank: int = 0) -> Batch:
        if rank:
            raise DataError("a StreamSource feeds one process (rank 0): the stream is not sharded across ranks")
        first = step * self.batch_size
        rows = range(first, first + self.batch_size)
        if self.cycle:
            rows = [w % self.windows for w in rows]
        elif first >= self.windows:
            raise DataError(f"step {step} is past the stream ({self.windows} windows = {self.steps} steps)")
        else:
            rows = range(first, min(first + self.batch_size, self.windows))
        T = self.seq_len
        idx = torch.full((len(rows), T), boundary_id(self.tokenizer), dtype=torch.long)  # (B, T) padded with DOC
        targets = torch.full((len(rows), T), IGNORE, dtype=torch.long)  # (B, T) padding ignored
        n_bytes = 0
        for r, w in enumerate(rows):
            seg = self.stream[w * T : w * T + T + 1]  # (<= T + 1,)
            idx[r, : len(seg) - 1], targets[r, : len(seg) - 1] = seg[:-1], seg[1:]
            n_bytes += int(self.nbytes[w * T + 1 : w * T + len(seg)].sum())
        all_ids = torch.arange(lm_vocab_size(self.tokenizer))
        return Batch(step, ALL, None, idx, targets, all_ids, float(n_bytes))

    def batches(self, start: int, stop: int, rank: int = 0, prefetch: int = 0):
        for step in range(start, stop):
            yield self.batch(step, rank)

    def state_dict(self) -> dict:
        return {"stream": self._digest, "batch_size": self.batch_size, "seq_len": self.seq_len,
                "cycle": self.cycle, "vocab": vocab_fingerprint(self.tokenizer)}
