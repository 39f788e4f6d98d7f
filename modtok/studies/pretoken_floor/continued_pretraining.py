"""Continued pretraining after vocabulary extension: arms R0 / R1 / R2 (§VI–VII analog).

"Merge-Based Vocabulary Extension Stalls at the Pre-Tokenizer" (§VI–VII)
continues pretraining a model whose tokenizer has the letters-only regex on
Nepali text, in arms that differ only in the tokenizer:

    R0   the original tokenizer, no new tokens
    R1   K merges appended under the original regex (they stall at the floor)
    R2   the repaired regex (\\p{M} in the word class) + K merges
    new embedding and output rows: the mean of the constituents' rows (§V)

and scores held-out Nepali in bits per byte, the unit that does not depend on
the tokenizer. The paper's scale is 1 GB of Nepali and 1B-parameter models;
here, at workspace scale, the same experiment runs end to end on a CPU:

1. **Base tokenizer**: the project's own byte-level BPE with the ``llama3``
   split regex (:mod:`modtok.bpe.standard`), trained on English-heavy text and
   exported as ``tokenizer.json``, which :meth:`extend.Base.load` reads back.
2. **Base model**: a small :class:`~modtok.lm.model.LM` pretrained on that
   English-heavy text (:func:`modtok.lm.train.train`), once (the paper's
   pretrained model is one model too).
3. **Arms** continue from the base weights on the SAME Nepali + English lines
   (the R1/R2 merges are learned on the Nepali part of them). R0, R1 and R2 read
   those lines exactly once (byte-matched), so R2, whose tokens are longer,
   takes fewer optimizer steps than R1, and R1 fewer than R0. As in the paper,
   ``R2 (matched steps)`` takes **R1's** step count, its extra windows drawn
   from a **second pass over the same stream** (not fresh text). The paper
   states "We did not run R0 at matched steps"; ``R0 (matched steps)`` (R0 cut
   to R1's step count, so it reads less) is our labelled addition
   (:data:`ADDITIONS`). Every arm runs once per seed of ``Setup.seeds``
   (at least 3 at full size): a seed fixes the order of the continued-
   pretraining lines, the same order for every arm of that seed.
4. **Evaluation, every piece in one context** (§VI "Evaluation", App. D):
   held-out text cut into pieces of at most ``piece_bytes`` bytes at
   whitespace (:func:`held_out`), never across a document. Every piece is
   scored *independently, in one context*: after a *registered prefix token*
   that every arm's vocabulary has, every token of the piece in ONE window of
   the model, so every arm conditions on the same bytes (token windows would
   give the arm with longer tokens more bytes of context, App. D). The paper's
   models read 2,048 tokens, more than any 2,000-byte piece needs; ours read
   ``seq_len`` ids, so the piece size is *chosen*: the largest size, from
   ``piece_bytes`` down (:func:`fit_held_out`), at which the longest piece
   fits one window under every arm (R0, whose tokens are the shortest, needs
   the most ids), and :func:`score_pieces` refuses a piece that does not fit
   rather than cut it. Our tokenizers have no BOS, so the prefix is the LM's
   document boundary ``DOC`` (:func:`modtok.lm.batches.boundary_id`, the
   end-of-text of the paper's "BOS, or end-of-text where there is no BOS"),
   which no text encodes to and which the training stream puts at every
   document start, as the paper's BOS rerun trains with BOS there::

       bpb(arm) = mean over seeds of  Σ_pieces nats(t1..tn | DOC) / ln 2  /  Σ_pieces bytes(piece)

   The denominator is the same for every arm by construction (the scored-bytes
   column of :meth:`Result.table`). The paper's primary held-out text is a
   slice of its training source never trained on, FLORES-200 secondary
   (§VI, App. D); :func:`texts` carves such a slice (``heldout_target``,
   ``heldout_english``) right after the training text.
5. **Intervals over documents, spread over seeds** (:func:`compare`): a paired
   bootstrap that resamples *documents* (on FLORES-200, the sentence's document
   id from its metadata, :func:`flores_documents`; on other data the unit is a
   piece of consecutive lines, stated in :attr:`HeldOut.unit`), the same
   documents for every arm and seed; and, beside it, the standard deviation of
   each seed's own point over the seeds.
6. **Labels** (:func:`label`) for R2 − R1 and R2 − R0 (:data:`LABELLED`), on the
   document interval of the seed-mean difference, margin δ = 0.01 bits per
   byte, in the fixed order of §VI ("Analysis"; lower bits per byte is
   better): *better* if the interval lies below 0; otherwise *non-inferior* if
   it lies below +0.01; otherwise *worse* if it lies above 0; otherwise *no
   detectable difference*. So the paper's own example, [+0.004, +0.007], is
   non-inferior although it excludes 0. Each seed's own label is reported
   beside it.

Training text is a stream: ``[DOC] line1 [DOC] line2 [DOC] ...`` (``DOC``: the
LM's boundary id; a line is a document, and the boundary stands for its
newline) cut into consecutive windows of ``seq_len + 1`` ids that share their
edge id, so every id after the first is a target exactly once a pass; a batch
is ``batch_size`` consecutive windows (:class:`StreamSource`). The bytes of a
step are the exact UTF-8 bytes of its targets (a token's own bytes, 1 for
``DOC``), so two arms that read the same lines see the same byte total,
whatever their tokenization.

>>> list(pieces(["aa bb cc dd", "eeeeeeee"], 6))   # at most 6 bytes, cut at whitespace
['aa bb', 'cc dd', 'eeeeee', 'ee']
>>> h = held_out(["a b", "c", "d e f"], 3, documents=["x", "x", "y"])   # never across a document
>>> h.texts, h.units.tolist(), h.unit
(['a b', 'c', 'd e', 'f'], [0, 0, 1, 1], 'document')
>>> [label(lo, hi) for lo, hi in [(-0.3, -0.1), (0.004, 0.007), (-0.02, 0.04), (0.001, 0.02)]]
['better', 'non-inferior', 'no detectable difference', 'worse']
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
import shutil
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from modtok.adapt import extend
from modtok.adapt.hf_model import grow_lm as grow
from modtok.artifacts.modular import ModularTokenizer
from modtok.bpe.export import save_tokenizer_json
from modtok.bpe.standard import train_from_lines
from modtok.errors import DataError, ModtokError, UsageError, VocabularyMismatchError  # noqa: F401 (tests reach it here)
from modtok.evaluation import stats
from modtok.lm import embed_init  # noqa: F401 (tests reach it here)
from modtok.lm.batches import Batch, boundary_id, lm_vocab_size, vocab_fingerprint
from modtok.lm.loss import IGNORE
from modtok.lm.model import LM, config
from modtok.lm.train import TrainConfig, default_device, train
from modtok.text import data
from modtok.text.pretokenize import from_byte_level

from .floor import RESULTS

ALL = "all"  # the one "language" of an arm's tokenizer: every id is in its softmax
BASE = "base (no continued pretraining)"
MATCHED = "R2 (matched steps)"  # the paper's: R1's step count, the extra windows a second pass
R0_MATCHED = "R0 (matched steps)"  # our addition: R0 cut to R1's step count
ARMS = ("R0", "R1", "R2", MATCHED, R0_MATCHED)  # trained once per seed, in this order
ADDITIONS = {BASE: "reference: the base model, no continued pretraining",
             R0_MATCHED: "addition: not in the paper (\"We did not run R0 at matched steps\")"}
PAIRS = (("R2", "R1"), ("R2", "R0"), ("R1", "R0"), (MATCHED, "R1"), (MATCHED, "R0"), (R0_MATCHED, "R0"),
         (BASE, "R0"))
LABELLED = (("R2", "R1"), ("R2", "R0"))  # the paper's registered comparisons
MARGIN = 0.01  # bits per byte: the non-inferiority margin of the labels
LABELS = ("better", "non-inferior", "worse", "no detectable difference")  # §VI's order (label())


# --------------------------------------------------------------------------
# tokenizers of the arms


def base_tokenizer(lines: Iterable[str], vocab_size: int, path, scheme: str = "llama3") -> extend.Base:
    """The project's own byte-level BPE (``scheme``'s split regex) trained on
    ``lines``, written to ``path`` (``tokenizer.json``) and loaded back as a
    :class:`extend.Base`, the way a deployed file is read."""
    save_tokenizer_json(train_from_lines(lines, vocab_size, scheme), path)
    return extend.Base.load(path)


def lm_tokenizer(tokenizer_json: dict) -> ModularTokenizer:
    """An arm's tokenizer as the LM code takes it: one language :data:`ALL`
    holding every id (the softmax is always over the whole vocabulary)."""
    vocab = tokenizer_json["model"]["vocab"]
    return ModularTokenizer(tokenizer_json, {ALL: range(max(vocab.values()) + 1)})


def token_nbytes(tokenizer: ModularTokenizer) -> np.ndarray:
    """UTF-8 bytes of every LM id (shape ``(lm_vocab_size,)``); the boundary
    counts 1 (its newline)."""
    out = np.ones(lm_vocab_size(tokenizer), dtype=np.int64)
    for s, i in tokenizer.tokenizer_json["model"]["vocab"].items():
        out[i] = len(from_byte_level(s))
    return out


# --------------------------------------------------------------------------
# the training stream


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


# --------------------------------------------------------------------------
# held-out text: pieces within documents


def pieces(lines: Iterable[str], size: int = 2000) -> Iterable[str]:
    """The text of ``lines`` (joined by single spaces) in consecutive pieces of at
    most ``size`` UTF-8 bytes, each cut at the last whitespace that fits (a word
    longer than ``size`` is cut at a character boundary); the whitespace at a cut
    belongs to no piece, and a piece never starts or ends with whitespace.

    Lines are joined by a space, not a newline: in training the boundary id
    stands where a newline would be, so no model has seen the newline byte, and
    the lines of one document (FLORES-200: consecutive sentences of one article)
    read as running text."""
    text = " ".join(s.strip() for s in lines if s.strip())
    raw = text.encode("utf-8")
    start = 0
    while start < len(raw):
        end = min(start + size, len(raw))
        if end < len(raw):
            cut = max(raw.rfind(b" ", start, end + 1), raw.rfind(b"\n", start, end + 1))
            if cut > start:
                end = cut
            else:  # one long word: back off to a character boundary
                while raw[end] & 0xC0 == 0x80:
                    end -= 1
        piece = raw[start:end].decode("utf-8").strip()
        if piece:
            yield piece
        start = end
        while start < len(raw) and raw[start : start + 1].isspace():
            start += 1


@dataclasses.dataclass(frozen=True)
class HeldOut:
    """Held-out pieces and the unit each belongs to: ``units[i]`` is the index of
    piece ``i``'s document (``unit == "document"``) or ``i`` itself (``unit ==
    "piece"``: no document ids, so a piece of consecutive lines is the unit)."""

    texts: list[str]
    units: np.ndarray  # (n_pieces,) int
    unit: str
    piece_bytes: int = 0  # the size they were cut at (fit_held_out: chosen to fit one context)
    longest: dict[str, int] = dataclasses.field(default_factory=dict)  # arm -> tokens of its longest piece

    @property
    def n_units(self) -> int:
        return int(self.units.max()) + 1 if len(self.units) else 0

    @property
    def nbytes(self) -> int:
        return sum(len(t.encode("utf-8")) for t in self.texts)


def held_out(lines: Sequence[str], size: int = 2000, documents: Sequence | None = None) -> HeldOut:
    """``lines`` as :func:`pieces` of at most ``size`` bytes. With ``documents``
    (one id per line, e.g. :func:`flores_documents`), each run of consecutive
    lines with one id is a document, cut on its own: no piece crosses a document
    and the bootstrap unit is the document. Without, the unit is the piece."""
    if documents is None:
        texts = list(pieces(lines, size))
        return HeldOut(texts, np.arange(len(texts)), "piece")
    if len(documents) != len(lines):
        raise UsageError(f"held_out: {len(documents)} document ids for {len(lines)} lines")
    texts, units, start = [], [], 0
    for i in range(1, len(lines) + 1):
        if i == len(lines) or documents[i] != documents[start]:
            doc = list(pieces(lines[start:i], size))
            if doc:
                units += [units[-1] + 1 if units else 0] * len(doc)
                texts += doc
            start = i
    return HeldOut(texts, np.asarray(units, dtype=np.int64), "document")


def flores_documents(lines: Sequence[str], lang: str, split: str = "devtest", root=None) -> list[str] | None:
    """The FLORES-200 document (article URL) of each of ``lines``, from
    ``metadata_<split>.tsv`` beside the split directories, when ``lines`` are the
    first lines of ``lang``'s FLORES-200 ``split`` file; ``None`` otherwise (other
    text, or no metadata file): the caller then uses pieces as units.

    (A reader of FLORES files belongs in :mod:`modtok.text.data`; it lives here
    until that module has it.)
    """
    root = data.flores_dir(root)
    meta = root / f"metadata_{split}.tsv" if root else None
    if meta is None or not meta.is_file():
        return None
    try:
        flores = data.load_flores([lang], split, root=root)[lang]
    except ModtokError:
        return None
    if list(lines) != flores[: len(lines)]:
        return None
    rows = meta.read_text(encoding="utf-8").splitlines()[1:]  # header: URL, domain, topic, ...
    if len(rows) != len(flores):
        return None
    return [r.split("\t", 1)[0] for r in rows[: len(lines)]]


# --------------------------------------------------------------------------
# scoring


def longest(tokenizer: ModularTokenizer, texts: Sequence[str]) -> int:
    """Tokens of the longest of ``texts`` under ``tokenizer`` (0 for none)."""
    return max(map(len, tokenizer.encode_batch(list(texts))), default=0)


def fit_held_out(lines: Sequence[str], context: int, tokenizers: Mapping[str, ModularTokenizer],
                 max_bytes: int = 2000, documents: Sequence | None = None, shrink: float = 0.9) -> HeldOut:
    """:func:`held_out` at the largest piece size that lets every piece be scored
    in one context (App. D) under every one of ``tokenizers``: a piece of ``n``
    tokens is scored as ``prefix t1 .. tn`` in one window of ``context`` ids
    (``n <= context``). Sizes tried: ``max_bytes``, then each time ``shrink``
    times the last, floored (deterministic, no search over the data's own
    lengths); the size used is :attr:`HeldOut.piece_bytes` and the longest
    piece per tokenizer :attr:`HeldOut.longest`.

    >>> from modtok.bpe.model import BPEModel
    >>> from modtok.bpe.export import to_tokenizer_json
    >>> tok = lm_tokenizer(to_tokenizer_json(BPEModel([], "llama3")))   # bytes only: a byte is a token
    >>> h = fit_held_out(["aaaa bbbb cccc"], 5, {"R0": tok}, max_bytes=14)
    >>> h.texts, h.piece_bytes, h.longest          # 14, 12, 10, 9 bytes keep "aaaa bbbb" (9 ids) whole
    (['aaaa', 'bbbb', 'cccc'], 8, {'R0': 4})
    """
    size = max_bytes
    while True:
        held = held_out(lines, size, documents)
        most = {name: longest(tok, held.texts) for name, tok in tokenizers.items()}
        if max(most.values(), default=0) <= context:
            return dataclasses.replace(held, piece_bytes=size, longest=most)
        if size <= 1:
            raise DataError(f"no piece size fits a {context}-id context: one byte needs more than {context} tokens")
        size = max(1, math.floor(size * shrink))


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


# --------------------------------------------------------------------------
# intervals and labels


def label(lo: float, hi: float, margin: float = MARGIN) -> str:
    """The registered label of a difference ``a − b`` in bits per byte (lower is
    better) from its 95% interval ``[lo, hi]``, tested in §VI's fixed order
    ("Analysis"): better, non-inferior (below ``margin``), worse, no detectable
    difference (module docstring, point 6).

    >>> label(0.004, 0.007), label(0.0084, 0.0104), label(-0.0014, -0.0007)   # §VI's example; Qwen R2 − R1 (§VII-B)
    ('non-inferior', 'worse', 'better')
    """
    if hi < 0:
        return LABELS[0]
    if hi < margin:
        return LABELS[1]
    if lo > 0:
        return LABELS[2]
    return LABELS[3]


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


def bootstrap(nats: Mapping[str, Sequence[float]], nbytes: Mapping[str, Sequence[float]],
              pairs: Sequence[tuple[str, str]] | None = None, n_boot: int = 1000, level: float = 0.95,
              seed: int = 0) -> dict[str, tuple[float, float, float]]:
    """Bits per byte ``Σnats / ln 2 / Σbytes`` of every arm (one score each) and
    the difference of each pair ``(a, b)`` (key ``"a − b"``; default: every later
    arm minus every earlier one), each as ``(point, lo, hi)``, resampling the
    pieces themselves with :func:`modtok.evaluation.stats.paired_bootstrap` (per
    arm, then, :func:`modtok.evaluation.stats.ratio_ci` of bits over bytes). Arms
    may score different bytes here; :func:`compare` is the seeds-and-documents
    version the experiment uses."""
    arms = list(nats)
    samples = {f"bits {a}": np.asarray(nats[a], np.float64) / math.log(2) for a in arms}
    samples |= {f"bytes {a}": nbytes[a] for a in arms}
    if pairs is None:
        pairs = [(b, a) for i, a in enumerate(arms) for b in arms[i + 1 :]]

    def bpb(s):
        out = {a: s[f"bits {a}"].sum(-1) / s[f"bytes {a}"].sum(-1) for a in arms}
        return out | {f"{a} − {b}": out[a] - out[b] for a, b in pairs}

    return stats.paired_bootstrap(samples, bpb, n_boot, level, seed)


# --------------------------------------------------------------------------
# the experiment


def consecutive(lines: Sequence[str], *sizes: int) -> list[list[str]]:
    """Disjoint runs of consecutive ``lines``, the k-th holding at least
    ``sizes[k]`` UTF-8 bytes (newlines counted) or what is left.

    >>> consecutive(["ab", "cd", "ef", "gh"], 4, 2, 10)
    [['ab', 'cd'], ['ef'], ['gh']]
    """
    out, i = [], 0
    for size in sizes:
        run, n = [], 0
        while i < len(lines) and n < size:
            run.append(lines[i])
            n += len(lines[i].encode("utf-8")) + 1
            i += 1
        out.append(run)
    return out


def texts(english: Sequence[str], target: Sequence[str], base_bytes: int, cpt_bytes: int,
          heldout_bytes: int = 0) -> dict[str, list[str]]:
    """The texts of :func:`run` (its keyword arguments ``base_text``,
    ``cpt_target``, ``cpt_english``) from consecutive runs of ``english`` and
    ``target`` lines (:func:`consecutive`), by UTF-8 bytes: the base is 95%
    English + 5% target of ``base_bytes``; continued pretraining 75% target +
    25% English of ``cpt_bytes``; then ``heldout_target`` and
    ``heldout_english``, ``heldout_bytes`` of each from the lines right after
    (the paper's primary held-out text: a slice of the training source that is
    never trained on, §VI / App. D).

    >>> t = texts(["e"] * 100, ["t"] * 100, 40, 16, 4)       # 2 bytes a line, newline counted
    >>> {k: len(v) for k, v in t.items()}
    {'base_text': 20, 'cpt_target': 6, 'cpt_english': 2, 'heldout_target': 2, 'heldout_english': 2}
    """
    base_en, cpt_en, held_en = consecutive(english, int(0.95 * base_bytes), cpt_bytes // 4, heldout_bytes)
    base_t, cpt_t, held_t = consecutive(target, int(0.05 * base_bytes), 3 * cpt_bytes // 4, heldout_bytes)
    return {"base_text": base_en + base_t, "cpt_target": cpt_t, "cpt_english": cpt_en,
            "heldout_target": held_t, "heldout_english": held_en}


@dataclasses.dataclass(frozen=True)
class Setup:
    """Sizes of one run (defaults: the notebook's full size on 2 CPU cores)."""

    base_vocab: int = 4096  # the llama3-regex BPE of the base model
    merges: int = 2000  # K, before the §V filter
    model: dict = dataclasses.field(default_factory=lambda: dict(n_layers=2))  # overrides of config("mini")
    batch_size: int = 4
    seq_len: int = 512  # the context of training and scoring: a piece of <= piece_bytes must fit it (App. D)
    base_steps: int = 1000
    base_lr: float = 3e-3
    lr: float = 1e-3  # continued pretraining
    warmup: float = 0.05  # share of each run's steps
    piece_bytes: int = 2000  # the paper's; fit_held_out shrinks it until every piece fits seq_len under every arm
    n_boot: int = 1000
    seed: int = 0  # the base model's and the bootstrap's
    seeds: tuple[int, ...] = (0, 1, 2)  # continued pretraining: the order of its lines, and torch's seed


def preset(size: str) -> tuple[Setup, dict[str, int]]:
    """Notebook 07's settings and its text sizes in bytes (``{"base", "cpt",
    "heldout"}``, see :func:`texts`): ``"smoke"`` (CI: 3 seeds of a few dozen
    steps), ``"cpu"`` (the full size on 2 CPU cores: base vocabulary 4,096,
    K = 2,000, d_model 128 x 2 layers, 4 x 512 ids a step, base 1,000 steps) or
    ``"gpu"`` ("small", 5.9M parameters without the vocabulary, 16 x 512 ids a
    step; not yet run on a GPU). Every preset's context is 512 ids (smoke: 128),
    so pieces of about 2,000 bytes fit it under every arm (App. D; a 2,000-byte
    Nepali piece is about 470 ids under a 4,096-token base, measured:
    550 bytes per 128 ids; bench/RESULTS.md, "Figures cited in docstrings").

    >>> setup, sizes = preset("smoke")
    >>> len(setup.seeds), setup.seq_len, sizes
    (3, 128, {'base': 120000, 'cpt': 20000, 'heldout': 20000})
    """
    if size == "smoke":
        return (Setup(base_vocab=600, merges=200, model=dict(d_model=64, n_layers=1), batch_size=4, seq_len=128,
                      base_steps=100, n_boot=200),
                {"base": 120_000, "cpt": 20_000, "heldout": 20_000})
    if size == "gpu":
        return (Setup(base_vocab=8192, merges=8000, model=dict(d_model=256, n_layers=8, n_heads=8, n_kv_heads=4),
                      batch_size=16, seq_len=512, base_steps=4000),
                {"base": 2_400_000, "cpt": 8_000_000, "heldout": 200_000})
    if size == "cpu":
        return Setup(), {"base": 1_200_000, "cpt": 1_000_000, "heldout": 200_000}
    raise UsageError(f"preset {size!r}: one of smoke, cpu, gpu")


@dataclasses.dataclass
class Arm:
    name: str
    tokenizer: ModularTokenizer
    ext: extend.Extension | None  # None: R0 (the base tokenizer)
    steps: int = 0
    bytes: int = 0  # training bytes read (per seed: the same for every seed)
    model: LM | None = None  # kept for the base model only (the arms' are scored, then dropped)


@dataclasses.dataclass
class Result:
    arms: dict[str, Arm]
    held_out: dict[str, HeldOut]  # eval set -> its pieces and units
    scores: dict[str, dict[str, dict[int, tuple[np.ndarray, np.ndarray]]]]  # eval set -> arm -> seed -> (nats, bytes)
    intervals: dict[str, dict[str, tuple[float, float, float]]]  # eval set -> compare()
    seeds: tuple[int, ...]
    base_steps: int
    tokens: dict[str, dict[str, int]] = dataclasses.field(default_factory=dict)  # eval set -> arm -> tokens of the pieces
    seq_len: int = 0  # the context in ids of training and scoring windows
    roles: dict[str, str] = dataclasses.field(default_factory=dict)  # "primary" / "control" / "secondary" -> eval set

    def spread(self, ev: str, key: str) -> float:
        """Standard deviation over the seeds (ddof 1; 0 with one seed) of the
        point of ``key`` (an arm or ``"a − b"``) on eval set ``ev``."""
        points = [self.intervals[ev][f"{key} @ seed {s}"][0] for s in self.seeds]
        return float(np.std(points, ddof=1)) if len(points) > 1 else 0.0

    def table(self) -> list[dict]:
        """One row per arm: what it is, vocabulary, steps, training bytes, and per
        eval set the scored bytes, bytes per token, bits per byte (mean over seeds),
        its spread over seeds and its 95% interval over units (documents)."""
        rows = []
        for name, arm in self.arms.items():
            row = {"arm": name, "note": ADDITIONS.get(name, "the paper's"), "vocabulary": arm.tokenizer.vocab_size,
                   "steps": arm.steps, "training bytes": arm.bytes,
                   "seeds": 1 if name == BASE else len(self.seeds)}
            for ev, res in self.intervals.items():
                p, lo, hi = res[name]
                row[f"{ev} scored bytes"] = int(self.scores[ev][name][self.seeds[0]][1].sum())
                if self.tokens:
                    row[f"{ev} bytes/token"] = row[f"{ev} scored bytes"] / self.tokens[ev][name]
                row[f"{ev} bpb"], row[f"{ev} ± seeds"] = p, self.spread(ev, name)
                row[f"{ev} CI"] = f"[{lo:.3f}, {hi:.3f}]"
            rows.append(row)
        return rows

    def comparisons(self) -> list[dict]:
        """One row per (eval set, pair of :data:`PAIRS`): the difference (mean over
        seeds), its 95% interval over units, its spread over seeds, each seed's
        difference, and the label (:func:`label`) of the mean and of each seed;
        ``registered`` marks the paper's comparisons (:data:`LABELLED`)."""
        rows = []
        for ev, res in self.intervals.items():
            for a, b in PAIRS:
                key = f"{a} − {b}"
                d, lo, hi = res[key]
                per_seed = [res[f"{key} @ seed {s}"] for s in self.seeds]
                rows.append({"held-out text": ev, "comparison": key, "registered": (a, b) in LABELLED,
                             "difference": d, "lo": lo, "hi": hi, "CI": f"[{lo:+.3f}, {hi:+.3f}]",
                             "± seeds": self.spread(ev, key),
                             "per seed": ", ".join(f"{x[0]:+.3f}" for x in per_seed),
                             "label": label(lo, hi), "per-seed labels": ", ".join(label(x[1], x[2]) for x in per_seed)})
        return rows

    def held_out_lines(self) -> list[str]:
        """One line per held-out text: its pieces, the size they were cut at, the
        longest piece in ids against the context, and the bootstrap unit."""
        return [f"{ev}: {len(h.texts)} pieces of <= {h.piece_bytes:,} bytes ({h.nbytes:,} bytes), longest piece in "
                f"ids {h.longest} for a {self.seq_len}-id context; bootstrap unit: {h.unit} ({h.n_units})"
                for ev, h in self.held_out.items()]

    def summary(self, ev: str) -> str:
        """One line on eval set ``ev``: which of R0, R1, R2 has the lowest bits per
        byte (the paper: R0), how the pieces were scored (size, longest piece in
        ids per arm: one context each), the base model against R0, and R0 at R1's
        step count."""
        bpb = {a: self.intervals[ev][a][0] for a in self.arms}
        h = self.held_out[ev]
        return (f"lowest held-out {ev} bits per byte of R0, R1, R2: {min(('R0', 'R1', 'R2'), key=bpb.get)} (the paper: "
                f"R0); pieces of <= {h.piece_bytes:,} bytes, each in one {self.seq_len}-id context (longest piece, "
                f"ids: {h.longest}); base model {bpb[BASE]:.3f} vs R0 {bpb['R0']:.3f}; "
                f"R0 at R1's step count {bpb[R0_MATCHED]:.3f}")

    def interval_rows(self) -> list[dict]:
        """One row per (eval set, arm): ``{"arm", "held-out text", "bits per byte",
        "lo", "hi"}``, the bars (seed means, 95% intervals over units) of the figure."""
        return [{"arm": arm, "held-out text": ev, "bits per byte": res[arm][0], "lo": res[arm][1], "hi": res[arm][2]}
                for ev, res in self.intervals.items() for arm in self.arms]


def _train_cfg(setup: Setup, steps: int, lr: float, seed: int) -> TrainConfig:
    return TrainConfig(steps=steps, lr=lr, warmup_steps=max(1, round(setup.warmup * steps)), seed=seed,
                       ckpt_every=steps, prefetch=0)


def run(setup: Setup, base_text: Sequence[str], cpt_target: Sequence[str], cpt_english: Sequence[str],
        evaluation: Mapping[str, Sequence[str]], out_dir, documents: Mapping[str, Sequence | None] | None = None,
        device=None, progress: bool = False) -> Result:
    """The whole experiment (module docstring) in ``out_dir``.

    ``base_text``: English-heavy lines of the base tokenizer and model;
    ``cpt_target`` + ``cpt_english``: the continued-pretraining lines every
    byte-matched arm reads once (the merges are learned on ``cpt_target``),
    interleaved in an order fixed by each seed; ``evaluation``: ``{name:
    held-out lines}``, e.g. ``{"Nepali": ..., "English": ...}``; ``documents``:
    ``{name: one document id per line}`` where known (:func:`flores_documents`),
    the bootstrap unit; elsewhere the unit is a piece. The pieces are cut by
    :func:`fit_held_out` once the arms' tokenizers exist (they depend on the
    base tokenizer only), so that each is scored in one ``seq_len`` context
    under every arm. Each arm's checkpoint directory is removed once it is
    scored (``out_dir/base`` stays).
    """
    out_dir = Path(out_dir)
    device = torch.device(device) if device else default_device()
    documents = documents or {}
    base = base_tokenizer(base_text, setup.base_vocab, out_dir / "base" / "tokenizer.json")
    base_tok = lm_tokenizer(base.json)
    arms = {BASE: Arm(BASE, base_tok, None), "R0": Arm("R0", base_tok, None)}
    for name in ("R1", "R2"):
        counts = extend.count_words(base, cpt_target, extend.arm_pattern(base.regex, name))
        ext = extend.extend(base, counts, setup.merges, name)
        arms[name] = Arm(name, lm_tokenizer(ext.tokenizer_json()), ext)
    arms[MATCHED] = Arm(MATCHED, arms["R2"].tokenizer, arms["R2"].ext)
    arms[R0_MATCHED] = Arm(R0_MATCHED, base_tok, None)
    scoring = {name: arms[name].tokenizer for name in ("R0", "R1", "R2")}  # the matched arms share R2's and R0's
    held = {ev: fit_held_out(lines, setup.seq_len, scoring, setup.piece_bytes, documents.get(ev))
            for ev, lines in evaluation.items()}

    cfg = config("mini", lm_vocab_size(base_tok), max_seq_len=setup.seq_len, **setup.model)
    source = StreamSource(base_tok, base_text, setup.batch_size, setup.seq_len, cycle=True)
    base_model = train(cfg, _train_cfg(setup, setup.base_steps, setup.base_lr, setup.seed), source,
                       out_dir / "base", resume=False, progress=progress, device=device).model.eval()
    arms[BASE].model = base_model

    scores = {ev: {name: {} for name in arms} for ev in held}
    for ev, h in held.items():  # the base model: one model, the same score for every seed
        once = score_pieces(base_model, base_tok, h.texts, device=device)
        scores[ev][BASE] = {s: once for s in setup.seeds}
    cpt = list(cpt_target) + list(cpt_english)
    for seed in setup.seeds:
        order = [cpt[i] for i in np.random.default_rng(seed).permutation(len(cpt))]
        for name in ARMS:
            arm = arms[name]
            src = StreamSource(arm.tokenizer, order, setup.batch_size, setup.seq_len, cycle=name == MATCHED)
            # one pass for R0, R1, R2; R1's step count for the matched arms (R2's wraps into a second pass)
            arm.steps = arms["R1"].steps if name in (MATCHED, R0_MATCHED) else src.steps
            arm.bytes = int(sum(src.batch(s).n_bytes for s in range(arm.steps)))
            init = base_model if arm.ext is None else grow(base_model, arm.ext)
            arm_dir = out_dir / f"{name.split()[0]}{'-matched' if name in (MATCHED, R0_MATCHED) else ''}-seed{seed}"
            model = train(init.cfg, _train_cfg(setup, arm.steps, setup.lr, seed), src, arm_dir, resume=False,
                          progress=progress, device=device, init=init).model.eval()
            for ev, h in held.items():
                scores[ev][name][seed] = score_pieces(model, arm.tokenizer, h.texts, device=device)
            shutil.rmtree(arm_dir, ignore_errors=True)
    intervals = {ev: compare(scores[ev], held[ev].units, PAIRS, n_boot=setup.n_boot, seed=setup.seed) for ev in held}
    tokens = {ev: {name: sum(map(len, arm.tokenizer.encode_batch(h.texts))) for name, arm in arms.items()}
              for ev, h in held.items()}
    return Result(arms, held, scores, intervals, tuple(setup.seeds), setup.base_steps, tokens, setup.seq_len)


def study(size: str, english: Sequence[str], target: Sequence[str], eval_target: Sequence[str], name: str,
          lang: str, eval_label: str, out_dir, device=None, progress: bool = False) -> Result:
    """Notebook 07 (h) in one call, at preset ``size`` (:func:`preset`):
    :func:`texts` from the training lines ``english`` and ``target`` (the
    target language ``lang``, called ``name``), then :func:`run` scored on three
    held-out sets, as the paper's §VI / App. D name them:

    - ``primary``: ``name``, the held-out slice of the training source (never trained on);
    - ``control``: ``"English"``, the same for English (the registered English control);
    - ``secondary``: ``"<name> (<eval_label>)"``, the evaluation text ``eval_target``
      (e.g. FLORES-200 devtest; its documents from the metadata where it is FLORES).

    A slice the training text is too short for is left out (its role absent
    from :attr:`Result.roles`). English evaluation text is not scored (the
    paper's FLORES metric is Nepali only, Table VIII)."""
    setup, sizes = preset(size)
    smoke = size == "smoke"
    t = texts(list(english), list(target), sizes["base"], sizes["cpt"], sizes["heldout"])
    secondary = f"{name} ({eval_label.split(' (')[0] or 'evaluation text'})"
    sets = {"primary": (name, t.pop("heldout_target")), "control": ("English", t.pop("heldout_english")),
            "secondary": (secondary, list(eval_target)[:100] if smoke else list(eval_target))}
    sets = {role: v for role, v in sets.items() if any(s.strip() for s in v[1])}
    evaluation = {ev: lines for ev, lines in sets.values()}
    documents = {secondary: flores_documents(evaluation[secondary], lang)} if "secondary" in sets else {}
    device_type = torch.device(device).type if device else default_device().type  # a GPU's result is another's
    res = RESULTS.get("continued pretraining", (setup, t, evaluation, documents, device_type), lambda: run(
        setup, **t, evaluation=evaluation, out_dir=out_dir, documents=documents, device=device, progress=progress))
    Path(out_dir).mkdir(parents=True, exist_ok=True)  # read back, nothing was written there: the directory is as run leaves it
    res.roles = {role: ev for role, (ev, _) in sets.items()}
    return res
