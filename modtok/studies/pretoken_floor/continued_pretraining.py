"""Continued pretraining after vocabulary extension: arms R0 / R1 / R2 (§VI–VII analog).

"Merge-Based Vocabulary Extension Stalls at the Pre-Tokenizer" (§VI–VII)
continues pretraining a model whose tokenizer has the letters-only regex on
Nepali text, in three arms that differ only in the tokenizer:

    R0   the original tokenizer, no new tokens
    R1   K merges appended under the original regex (they stall at the floor)
    R2   the repaired regex (\\p{M} in the word class) + K merges
    new embedding and output rows: the mean of the constituents' rows (§V)

and scores held-out Nepali in bits per byte, the unit that does not depend on
the tokenizer. The paper's scale is 1 GB of Nepali and 1B-parameter models;
here, at workspace scale, the same experiment runs end to end on a CPU:

1. **Base tokenizer**: the project's own byte-level BPE with the ``llama3``
   split regex (:mod:`modtok.bpe.standard`), trained on English-heavy text and
   exported as ``tokenizer.json``, which :meth:`repair.Base.load` reads back.
2. **Base model**: a small :class:`~modtok.lm.model.LM` pretrained on that
   English-heavy text (:func:`modtok.lm.train.train`).
3. **Arms** continue from the base weights on the SAME Nepali + English lines
   (the R1/R2 merges are learned on the Nepali part of them). Byte-matched arms
   read those lines exactly once, so R2, whose tokens are longer, takes fewer
   optimizer steps; ``R2 (matched steps)`` takes as many steps as R0 and reads
   further into the same stream of lines.
4. **Evaluation**: held-out text cut into pieces of at most ``piece_bytes``
   bytes at whitespace (:func:`pieces`; the same byte strings for every arm).
   A piece tokenized as ``t0 t1 ... tn`` is scored from ``t1`` on (``t0`` is the
   one context token), and its **scored bytes** are the piece's UTF-8 bytes
   minus the bytes of ``t0``::

       bpb(arm) = Σ_pieces nats(t1..tn | t0) / ln 2  /  Σ_pieces (bytes(piece) − bytes(t0))

   with a paired bootstrap over pieces (:func:`bootstrap`): every replicate
   resamples the same pieces for every arm, which gives the 95% intervals of
   each arm and of the differences R1−R0, R2−R0, R2−R1. The English control is
   the same measurement on English pieces.

Training text is a stream: ``[DOC] line1 [DOC] line2 [DOC] ...`` (``DOC``: the
LM's boundary id, standing for the newline) cut into consecutive windows of
``seq_len + 1`` ids that share their edge id, so every id after the first is a
target exactly once; a batch is ``batch_size`` consecutive windows
(:class:`StreamSource`). The bytes of a step are the exact UTF-8 bytes of its
targets (a token's own bytes, 1 for ``DOC``), so two arms that read the same
lines see the same byte total, whatever their tokenization.

>>> list(pieces(["aa bb cc dd", "eeeeeeee"], 6))   # at most 6 bytes, cut at whitespace
['aa bb', 'cc dd', 'eeeeee', 'ee']
>>> ln2 = math.log(2)                          # nats of 2 and 4 bits on two 1-byte pieces
>>> res = bootstrap({"A": [2 * ln2, 4 * ln2], "B": [ln2, ln2]}, {"A": [1, 1], "B": [1, 1]}, n_boot=200)
>>> round(res["A"][0], 6), round(res["B − A"][0], 6)
(3.0, -2.0)
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import math
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from modtok.artifacts.modular import ModularTokenizer
from modtok.bpe import repair
from modtok.bpe.export import save_tokenizer_json
from modtok.bpe.standard import train_from_lines
from modtok.errors import DataError, VocabularyMismatchError
from modtok.evaluation import stats
from modtok.lm import embed_init
from modtok.lm.batches import Batch, boundary_id, lm_vocab_size, vocab_fingerprint
from modtok.lm.loss import IGNORE
from modtok.lm.model import LM, config
from modtok.lm.train import TrainConfig, default_device, train
from modtok.text.pretokenize import from_byte_level

ALL = "all"  # the one "language" of an arm's tokenizer: every id is in its softmax
BASE, MATCHED = "base (no continued pretraining)", "R2 (matched steps)"
PAIRS = (("R1", "R0"), ("R2", "R0"), ("R2", "R1"), (MATCHED, "R0"), (BASE, "R0"))


# --------------------------------------------------------------------------
# tokenizers of the arms


def base_tokenizer(lines: Iterable[str], vocab_size: int, path, scheme: str = "llama3") -> repair.Base:
    """The project's own byte-level BPE (``scheme``'s split regex) trained on
    ``lines``, written to ``path`` (``tokenizer.json``) and loaded back as a
    :class:`repair.Base`, the way a deployed file is read."""
    save_tokenizer_json(train_from_lines(lines, vocab_size, scheme), path)
    return repair.Base.load(path)


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


@torch.no_grad()
def grow(model: LM, ext: repair.Extension) -> LM:
    """A copy of ``model`` (trained with ``ext.base``: tokens ``0..V-1``, boundary
    ``V``) for the ids of ``ext``: new tokens ``V..V+n-1`` get the mean of their
    constituents' rows (:func:`embed_init.extend_lm`) and the boundary moves to
    ``V+n`` with its trained rows. On original ids, the logits of the original
    tokens and of the boundary do not change."""
    model = copy.deepcopy(model)
    V = ext.base.next_id
    if model.cfg.vocab_size != V + 1:
        raise VocabularyMismatchError(f"the model has {model.cfg.vocab_size} rows; the base tokenizer needs "
                                      f"{V} + the boundary")
    if not ext.new_tokens():  # every learned merge was filtered out: nothing to add
        return model
    doc_embed, doc_out = model.embed.weight[V].clone(), model.out.weight[V].clone()  # (d,) each
    doc_bias = None if model.out.bias is None else model.out.bias[V].clone()
    embed_init.extend_lm(model, ext)  # rows V.. are now the new tokens (V's row was overwritten)
    model.embed = nn.Embedding.from_pretrained(torch.cat([model.embed.weight, doc_embed[None]]), freeze=False)
    out = nn.Linear(model.cfg.d_model, model.cfg.vocab_size + 1, bias=doc_bias is not None,
                    device=doc_out.device, dtype=doc_out.dtype)
    out.weight.copy_(torch.cat([model.out.weight, doc_out[None]]))
    if doc_bias is not None:
        out.bias.copy_(torch.cat([model.out.bias, doc_bias[None]]))
    model.out = out
    model.cfg = dataclasses.replace(model.cfg, vocab_size=model.cfg.vocab_size + 1)  # the config is frozen
    return model


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
# evaluation


def pieces(lines: Iterable[str], size: int = 2000) -> Iterable[str]:
    """The text of ``lines`` (joined by newlines) in consecutive pieces of at most
    ``size`` UTF-8 bytes, each cut at the last whitespace that fits (a word
    longer than ``size`` is cut at a character boundary); the whitespace at a cut
    belongs to no piece, and a piece never starts or ends with whitespace."""
    text = "\n".join(s.strip() for s in lines if s.strip())
    data = text.encode("utf-8")
    start = 0
    while start < len(data):
        end = min(start + size, len(data))
        if end < len(data):
            cut = max(data.rfind(b" ", start, end + 1), data.rfind(b"\n", start, end + 1))
            if cut > start:
                end = cut
            else:  # one long word: back off to a character boundary
                while data[end] & 0xC0 == 0x80:
                    end -= 1
        piece = data[start:end].decode("utf-8").strip()
        if piece:
            yield piece
        start = end
        while start < len(data) and data[start : start + 1].isspace():
            start += 1


@torch.no_grad()
def score_pieces(model: LM, tokenizer: ModularTokenizer, texts: Sequence[str], batch_size: int = 16,
                 device=None) -> tuple[np.ndarray, np.ndarray]:
    """``(nats, scored bytes)`` per piece: each piece ``t0 t1 .. tn`` is scored
    from ``t1`` on under the full softmax, in windows of ``max_seq_len``
    predictions that each start from the last id of the previous one; scored
    bytes are the piece's bytes minus those of ``t0``."""
    device = device or next(model.parameters()).device
    nb, T = token_nbytes(tokenizer), model.cfg.max_seq_len
    windows, owner, scored = [], [], []
    for p, ids in enumerate(tokenizer.encode_batch(list(texts))):
        if len(ids) < 2:
            raise DataError(f"piece {p} has {len(ids)} token(s): nothing to score after the context token")
        scored.append(len(texts[p].encode("utf-8")) - int(nb[ids[0]]))
        for i in range(0, len(ids) - 1, T):
            windows.append(ids[i : i + T + 1])
            owner.append(p)
    nats = np.zeros(len(texts))
    for i in range(0, len(windows), batch_size):
        chunk = windows[i : i + batch_size]
        width = max(map(len, chunk)) - 1
        idx = torch.zeros((len(chunk), width), dtype=torch.long)  # (B, T) right-padded
        targets = torch.full((len(chunk), width), IGNORE, dtype=torch.long)
        for r, w in enumerate(chunk):
            idx[r, : len(w) - 1], targets[r, : len(w) - 1] = torch.tensor(w[:-1]), torch.tensor(w[1:])
        logits = model.logits(idx.to(device)).float()  # (B, T, V) the full softmax
        per_row = F.cross_entropy(logits.transpose(1, 2), targets.to(device), ignore_index=IGNORE,
                                  reduction="none").sum(1)  # (B,) nats of each window
        np.add.at(nats, owner[i : i + batch_size], per_row.double().cpu().numpy())
    return nats, np.asarray(scored, dtype=np.int64)


def bootstrap(nats: Mapping[str, Sequence[float]], nbytes: Mapping[str, Sequence[float]],
              pairs: Sequence[tuple[str, str]] | None = None, n_boot: int = 1000, level: float = 0.95,
              seed: int = 0) -> dict[str, tuple[float, float, float]]:
    """Bits per byte ``Σnats / ln 2 / Σbytes`` of every arm and the difference of
    each pair ``(a, b)`` (key ``"a − b"``; default: every later arm minus every
    earlier one), each as ``(point, lo, hi)`` with the percentile interval of
    :func:`modtok.evaluation.stats.paired_bootstrap`: every replicate resamples
    the same pieces for all arms (per arm, then, this is
    :func:`modtok.evaluation.stats.ratio_ci` of bits over bytes)."""
    arms = list(nats)
    samples = {f"bits {a}": np.asarray(nats[a], np.float64) / math.log(2) for a in arms}
    samples |= {f"bytes {a}": nbytes[a] for a in arms}
    if pairs is None:
        pairs = [(b, a) for i, a in enumerate(arms) for b in arms[i + 1 :]]

    def bpb(s):  # per arm, then the pairs' differences, from the same replicates
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


def texts(english: Sequence[str], target: Sequence[str], base_bytes: int, cpt_bytes: int) -> dict[str, list[str]]:
    """The texts of :func:`run` (its keyword arguments ``base_text``,
    ``cpt_target``, ``cpt_english``, ``more_text``) from consecutive runs of
    ``english`` and ``target`` lines (:func:`consecutive`), by UTF-8 bytes:
    the base is 95% English + 5% target of ``base_bytes``; continued
    pretraining 75% target + 25% English of ``cpt_bytes``; the further text of
    ``R2 (matched steps)`` twice that, in the same shares.

    >>> t = texts(["e"] * 100, ["t"] * 100, 40, 16)       # 2 bytes a line, newline counted
    >>> {k: len(v) for k, v in t.items()}
    {'base_text': 20, 'cpt_target': 6, 'cpt_english': 2, 'more_text': 16}
    """
    base_en, cpt_en, more_en = consecutive(english, int(0.95 * base_bytes), cpt_bytes // 4, cpt_bytes // 2)
    base_t, cpt_t, more_t = consecutive(target, int(0.05 * base_bytes), 3 * cpt_bytes // 4, 3 * cpt_bytes // 2)
    return {"base_text": base_en + base_t, "cpt_target": cpt_t, "cpt_english": cpt_en, "more_text": more_t + more_en}


@dataclasses.dataclass(frozen=True)
class Setup:
    """Sizes of one run (defaults: the notebook's full size on 2 CPU cores)."""

    base_vocab: int = 4096  # the llama3-regex BPE of the base model
    merges: int = 2000  # K, before the §V filter
    model: dict = dataclasses.field(default_factory=lambda: dict(n_layers=2))  # overrides of config("mini")
    batch_size: int = 16
    seq_len: int = 128
    base_steps: int = 1000
    base_lr: float = 3e-3
    lr: float = 1e-3  # continued pretraining
    warmup: float = 0.05  # share of each run's steps
    piece_bytes: int = 2000
    n_boot: int = 1000
    seed: int = 0


@dataclasses.dataclass
class Arm:
    name: str
    tokenizer: ModularTokenizer
    ext: repair.Extension | None  # None: R0 (the base tokenizer)
    steps: int = 0
    bytes: int = 0  # training bytes read
    model: LM | None = None


@dataclasses.dataclass
class Result:
    arms: dict[str, Arm]
    scores: dict[str, dict[str, tuple[np.ndarray, np.ndarray]]]  # eval set -> arm -> (nats, bytes) per piece
    intervals: dict[str, dict[str, tuple[float, float, float]]]  # eval set -> bootstrap()
    base_steps: int

    def table(self) -> list[dict]:
        """One row per arm: vocabulary, steps, bytes, bpb with 95% CI per eval set, difference vs R0."""
        rows = []
        for name, arm in self.arms.items():
            row = {"arm": name, "vocabulary": arm.tokenizer.vocab_size, "steps": arm.steps,
                   "training bytes": arm.bytes}
            for ev, res in self.intervals.items():
                p, lo, hi = res[name]
                row[f"{ev} bpb"], row[f"{ev} CI"] = p, f"[{lo:.3f}, {hi:.3f}]"
                if f"{name} − R0" in res:
                    d, dlo, dhi = res[f"{name} − R0"]
                    row[f"{ev} − R0"], row[f"{ev} − R0 CI"] = d, f"[{dlo:.3f}, {dhi:.3f}]"
            rows.append(row)
        return rows

    def interval_rows(self) -> list[dict]:
        """One row per (eval set, arm): ``{"arm", "held-out text", "bits per byte",
        "lo", "hi"}``, the bars (with their 95% intervals) of the notebook's figure."""
        return [{"arm": arm, "held-out text": ev, "bits per byte": p, "lo": lo, "hi": hi}
                for ev, res in self.intervals.items() for arm, (p, lo, hi) in res.items() if arm in self.arms]


def _train_cfg(setup: Setup, steps: int, lr: float) -> TrainConfig:
    return TrainConfig(steps=steps, lr=lr, warmup_steps=max(1, round(setup.warmup * steps)), seed=setup.seed,
                       ckpt_every=steps, prefetch=0)


def run(setup: Setup, base_text: Sequence[str], cpt_target: Sequence[str], cpt_english: Sequence[str],
        more_text: Sequence[str], evaluation: Mapping[str, Sequence[str]], out_dir, device=None,
        progress: bool = False) -> Result:
    """The whole experiment (module docstring) in ``out_dir``.

    ``base_text``: English-heavy lines of the base tokenizer and model;
    ``cpt_target`` + ``cpt_english``: the continued-pretraining lines every
    byte-matched arm reads once (the merges are learned on ``cpt_target``),
    interleaved in a seeded order; ``more_text``: lines (shuffled the same way)
    that follow them in the stream of ``R2 (matched steps)``; ``evaluation``: ``{name: held-out lines}``,
    cut into :func:`pieces`, e.g. ``{"Nepali": ..., "English": ...}``.
    """
    out_dir = Path(out_dir)
    device = torch.device(device) if device else default_device()
    base = base_tokenizer(base_text, setup.base_vocab, out_dir / "base" / "tokenizer.json")
    base_tok = lm_tokenizer(base.json)
    cfg = config("mini", lm_vocab_size(base_tok), max_seq_len=setup.seq_len, **setup.model)
    source = StreamSource(base_tok, base_text, setup.batch_size, setup.seq_len, cycle=True)
    base_model = train(cfg, _train_cfg(setup, setup.base_steps, setup.base_lr), source, out_dir / "base",
                       resume=False, progress=progress, device=device).model

    rng = np.random.default_rng(setup.seed)
    cpt = list(cpt_target) + list(cpt_english)
    cpt = [cpt[i] for i in rng.permutation(len(cpt))]
    more_text = [more_text[i] for i in rng.permutation(len(more_text))]  # the same mix further on
    arms = {BASE: Arm(BASE, base_tok, None, model=base_model.eval()), "R0": Arm("R0", base_tok, None)}
    for name in ("R1", "R2"):
        counts = repair.count_words(base, cpt_target, repair.arm_pattern(base.regex, name))
        ext = repair.extend(base, counts, setup.merges, name)
        arms[name] = Arm(name, lm_tokenizer(ext.tokenizer_json()), ext)
    arms[MATCHED] = Arm(MATCHED, arms["R2"].tokenizer, arms["R2"].ext)

    for arm in arms.values():
        if arm.model is not None:  # the base model itself: no continued pretraining
            continue
        matched = arm.name == MATCHED
        src = StreamSource(arm.tokenizer, cpt + list(more_text) if matched else cpt, setup.batch_size, setup.seq_len)
        arm.steps = arms["R0"].steps if matched else src.steps
        if arm.steps > src.steps:
            raise DataError(f"{arm.name}: {arm.steps} steps need more text than the {src.steps} steps of the stream")
        init = base_model if arm.ext is None else grow(base_model, arm.ext)
        arm.bytes = int(sum(src.batch(s).n_bytes for s in range(arm.steps)))
        arm_dir = out_dir / ("R2-matched" if matched else arm.name)
        arm.model = train(init.cfg, _train_cfg(setup, arm.steps, setup.lr), src, arm_dir, resume=False,
                          progress=progress, device=device, init=init).model.eval()

    scores, intervals = {}, {}
    for ev, lines in evaluation.items():
        texts = list(pieces(lines, setup.piece_bytes))
        scores[ev] = {name: score_pieces(arm.model, arm.tokenizer, texts, device=device) for name, arm in arms.items()}
        intervals[ev] = bootstrap({a: s[0] for a, s in scores[ev].items()}, {a: s[1] for a, s in scores[ev].items()},
                                  pairs=PAIRS, n_boot=setup.n_boot, seed=setup.seed)
    return Result(arms, scores, intervals, setup.base_steps)
