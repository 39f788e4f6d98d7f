"""Vocabulary state off the device (§6.4, Appendix E): a host store and row-sparse AdamW.

With hundreds of languages the two vocabulary matrices and their AdamW moments
dominate the model (250 languages x 8000 rows x d_model, six times over), yet a
batch tokenized with a subtokenizer touches only its K active rows. The host
store keeps all of it in host memory (pinned when CUDA is present)::

    embed     (V, d)   input embedding rows     exp_avg, exp_avg_sq  (V, d) each
    out       (V, d)   output rows              exp_avg, exp_avg_sq  (V, d) each
    out_bias  (V,)     output bias (if any)     exp_avg, exp_avg_sq  (V,)   each

and every training step does::

    gather   rows = table[active]            host -> device   (K, d) per table
    compute  forward/backward on the K rows   the device holds the body + K rows
    return   rows.grad                        device -> host
    update   row-sparse AdamW on the K rows   on the host

**Row-sparse AdamW** ("lazy" Adam, the semantics of ``torch.optim.SparseAdam``
and TF's LazyAdam): an active row gets exactly AdamW's update — decoupled weight
decay, both moments, bias correction with the global step t — with torch's own
arithmetic (:func:`row_sparse_adamw_`). An inactive row is left alone: its
moments are not decayed, it gets no weight decay and no update from its stale
momentum, whereas dense AdamW does all three to every row at every step. The two
coincide when every row is active at every step (Samp_Full(1)); the tests check
that bit for bit on CPU.

**The delayed scheme** (App. E). With ``delay=1``, while step t computes, a host
worker thread applies the update of step t-1 and then prefetches the rows of step
t+1 (on CUDA through pinned buffers on a side stream). A row active at both t
and t+1 is therefore read before step t's update reaches it: step t+1 computes
with it one update late, the delay of the paper. With ``delay=0`` the update is
applied before the next gather, synchronously: the run is the one without a host
store (bit for bit on CPU where the optimizers agree, i.e. when every row is
active). A checkpoint is a barrier of the pipeline: the pending update is
applied and the next rows are gathered again, so a run resumed from a checkpoint
continues exactly as the uninterrupted one (which passes the same barrier).

>>> from modtok.lm.model import LM, LMConfig
>>> model = LM(LMConfig(vocab_size=10, d_model=8, n_layers=1, n_heads=2))
>>> store = HostVocabStore.from_model(model, weight_decay=0.1, pin=False)
>>> rows = store.gather(torch.tensor([2, 5]), torch.device("cpu"))
>>> rows.embed.shape, bool(torch.equal(rows.embed, model.embed.weight[[2, 5]]))
(torch.Size([2, 8]), True)
"""

from __future__ import annotations

import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import torch

from modtok.errors import CheckpointError, ModtokError

# table name -> the LM parameter it holds
TABLES = {"embed": "embed.weight", "out": "out.weight", "out_bias": "out.bias"}


@dataclass
class VocabRows:
    """The K active rows of one step, on the device; leaves that collect their gradients."""

    embed: torch.Tensor  # (K, d)
    out: torch.Tensor  # (K, d)
    bias: torch.Tensor | None  # (K,) or None

    def tensors(self) -> dict[str, torch.Tensor]:
        """``{table: rows}`` in the LM's parameter order (embed, out, out_bias)."""
        t = {"embed": self.embed, "out": self.out}
        if self.bias is not None:
            t["out_bias"] = self.bias
        return t


def row_runs(rows: torch.Tensor) -> list[tuple[int, int]]:
    """Maximal runs ``[a, b)`` of consecutive ids in sorted unique ``rows``.

    >>> row_runs(torch.tensor([0, 1, 2, 7, 8, 11]))
    [(0, 3), (7, 9), (11, 12)]
    """
    r = rows.numpy()
    if r.size == 0:
        return []
    cut = np.flatnonzero(np.diff(r) != 1) + 1
    starts, ends = r[np.r_[0, cut]], r[np.r_[cut - 1, r.size - 1]] + 1
    return list(zip(starts.tolist(), ends.tolist()))


def _adamw_(p, m, v, grad, *, step, lr, beta1, beta2, eps, weight_decay) -> None:
    """torch's single-tensor AdamW step, line for line, in place on p, m, v."""
    if weight_decay != 0:
        p.mul_(1 - lr * weight_decay)
    m.lerp_(grad, 1 - beta1)
    v.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
    step_size = lr / (1 - beta1 ** float(step))
    bias_correction2_sqrt = (1 - beta2 ** float(step)) ** 0.5
    denom = (v.sqrt() / bias_correction2_sqrt).add_(eps)
    p.addcdiv_(m, denom, value=-step_size)


def row_sparse_adamw_(param, exp_avg, exp_avg_sq, rows, grad, *, step: int, lr: float,
                      beta1: float, beta2: float, eps: float, weight_decay: float, max_runs: int = 64) -> None:
    """AdamW on ``param[rows]`` only, in place; the other rows and their moments are untouched.

    param, exp_avg, exp_avg_sq (V, ...); rows (K,) sorted unique ids (CPU); grad (K, ...); ``step``
    counts the optimizer steps so far including this one (the global t). The arithmetic is torch's
    single-tensor AdamW line for line, so with ``rows`` = every row it reproduces
    ``torch.optim.AdamW`` on CPU bit for bit. A subtokenizer's ids come in few long runs (a
    language's block of merges): up to ``max_runs`` runs are updated in place as slices, more are
    gathered, updated and scattered back (same numbers, more copies).
    """
    hyper = {"step": step, "lr": lr, "beta1": beta1, "beta2": beta2, "eps": eps, "weight_decay": weight_decay}
    runs = row_runs(rows)
    if len(runs) <= max_runs:
        o = 0
        for a, b in runs:
            _adamw_(param[a:b], exp_avg[a:b], exp_avg_sq[a:b], grad[o : o + b - a], **hyper)
            o += b - a
        return
    p, m, v = param.index_select(0, rows), exp_avg.index_select(0, rows), exp_avg_sq.index_select(0, rows)
    _adamw_(p, m, v, grad, **hyper)
    param.index_copy_(0, rows, p)
    exp_avg.index_copy_(0, rows, m)
    exp_avg_sq.index_copy_(0, rows, v)


def _host(t: torch.Tensor, pin: bool) -> torch.Tensor:
    t = t.detach().to("cpu").clone()
    return t.pin_memory() if pin else t


class HostVocabStore:
    """The vocabulary tables of an LM and their AdamW moments, in host memory.

    ``weight_decay`` applies to the matrices (as :func:`modtok.lm.train.make_optimizer` does), not to
    the bias; ``pin=None`` pins when CUDA is available.
    """

    def __init__(self, tables: dict[str, torch.Tensor], *, weight_decay: float, beta1: float = 0.9,
                 beta2: float = 0.95, eps: float = 1e-8, pin: bool | None = None):
        self.pin = torch.cuda.is_available() if pin is None else pin
        self.param = {k: _host(t, self.pin) for k, t in tables.items()}
        self.exp_avg = {k: _host(torch.zeros_like(t), self.pin) for k, t in tables.items()}
        self.exp_avg_sq = {k: _host(torch.zeros_like(t), self.pin) for k, t in tables.items()}
        self.decay = {k: (weight_decay if t.dim() >= 2 else 0.0) for k, t in tables.items()}
        self.beta1, self.beta2, self.eps = beta1, beta2, eps

    @classmethod
    def from_model(cls, model, **kw) -> HostVocabStore:
        """A store holding ``model``'s embedding, output matrix and output bias (copies)."""
        state = dict(model.named_parameters())
        return cls({k: state[name] for k, name in TABLES.items() if name in state}, **kw)

    @property
    def nbytes(self) -> int:
        return sum(t.numel() * t.element_size() for d in (self.param, self.exp_avg, self.exp_avg_sq) for t in d.values())

    def gather(self, rows: torch.Tensor, device: torch.device, stream=None) -> VocabRows:
        """Rows ``rows`` (K,) of every table as device leaves that require grad.

        On CUDA the rows are collected into pinned buffers and copied on ``stream`` without blocking;
        :class:`VocabPipeline` synchronises ``stream`` before it hands the rows to the compute stream.
        """
        rows = rows.to("cpu")
        out = {}
        for k, t in self.param.items():
            if device.type == "cuda":  # pinned staging buffer -> asynchronous copy
                buf = torch.empty((rows.numel(), *t.shape[1:]), dtype=t.dtype, pin_memory=True)
                torch.index_select(t, 0, rows, out=buf)  # (K, ...)
                with torch.cuda.stream(stream):
                    out[k] = buf.to(device, non_blocking=True).requires_grad_(True)
            else:
                out[k] = t.index_select(0, rows).requires_grad_(True)  # (K, ...)
        return VocabRows(out["embed"], out["out"], out.get("out_bias"))

    def update(self, rows: torch.Tensor, grads: dict[str, torch.Tensor], step: int, lr: float) -> None:
        """Row-sparse AdamW (:func:`row_sparse_adamw_`) of ``rows`` with host gradients ``grads``."""
        rows = rows.to("cpu")
        for k, g in grads.items():
            row_sparse_adamw_(self.param[k], self.exp_avg[k], self.exp_avg_sq[k], rows, g, step=step, lr=lr,
                              beta1=self.beta1, beta2=self.beta2, eps=self.eps, weight_decay=self.decay[k])

    def model_state(self) -> dict[str, torch.Tensor]:
        """``{LM parameter name: table}`` to complete the body's state dict."""
        return {TABLES[k]: t for k, t in self.param.items()}

    def state_dict(self) -> dict:
        return {"exp_avg": dict(self.exp_avg), "exp_avg_sq": dict(self.exp_avg_sq)}

    def load(self, model_state: dict, state: dict) -> None:
        """Tables from a full LM state dict and moments from :meth:`state_dict` (checkpoint resume)."""
        try:
            for k in self.param:
                self.param[k].copy_(model_state[TABLES[k]])
                self.exp_avg[k].copy_(state["exp_avg"][k])
                self.exp_avg_sq[k].copy_(state["exp_avg_sq"][k])
        except (KeyError, RuntimeError) as e:
            raise CheckpointError(f"host vocabulary store does not fit the checkpoint ({type(e).__name__}: {e})") from None


def broadcast_store(store: HostVocabStore, device: torch.device, src: int = 0, chunk_rows: int = 1 << 16) -> None:
    """Give every rank ``src``'s tables and moments (DDP broadcasts the body's parameters the same way).

    gloo broadcasts host tensors directly; NCCL only moves device tensors, so the tables go through a
    device buffer of ``chunk_rows`` rows at a time.
    """
    import torch.distributed as dist

    via_device = dist.get_backend() == "nccl"
    for d in (store.param, store.exp_avg, store.exp_avg_sq):
        for t in d.values():
            if not via_device:
                dist.broadcast(t, src)
                continue
            for i in range(0, t.shape[0], chunk_rows):
                buf = t[i : i + chunk_rows].to(device)
                dist.broadcast(buf, src)
                t[i : i + chunk_rows].copy_(buf.cpu())


def average_row_grads(rows: VocabRows, world_size: int) -> None:
    """All-reduce the row gradients of a data-parallel step to their mean (as DDP does for the body).

    Every rank draws the same subtokenizer, so the K rows agree, and every rank's store gets the
    same update: the host stores stay identical.
    """
    import torch.distributed as dist

    for t in rows.tensors().values():
        dist.all_reduce(t.grad)
        t.grad.div_(world_size)


class VocabPipeline:
    """Gather, return and update the rows around the training steps, with ``delay`` 0 or 1.

    Per step t: ``rows()`` (this step's rows), ``begin(next_active)``, forward/backward/clip,
    ``end(active, rows, step, lr, next_active)``; ``barrier(next_active)`` at checkpoints, ``close()``.
    """

    def __init__(self, store: HostVocabStore, device: torch.device, delay: int = 0):
        if delay not in (0, 1):
            raise ModtokError(f"update delay must be 0 or 1, got {delay}")
        self.store, self.device, self.delay = store, device, delay
        self.cuda = device.type == "cuda"
        self.stream = torch.cuda.Stream(device) if self.cuda else None
        self.pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="modtok-vocab") if delay else None
        self._next: Future | VocabRows | None = None
        self._work: list[Future] = []  # submitted host work not yet waited for, delay 1
        self._pending: tuple | None = None  # (rows, grads, ready event, step, lr) of the last step, delay 1
        self.seconds = {"gather": 0.0, "update": 0.0}  # host time spent, for benchmarks (Table 21)

    # -- host work, on the worker thread when delay = 1

    def _gather(self, active):
        t0 = time.perf_counter()
        rows = self.store.gather(active, self.device, self.stream)
        if self.cuda:
            self.stream.synchronize()  # on the worker thread: the rows are on the device when it returns
        self.seconds["gather"] += time.perf_counter() - t0
        return rows

    def _update(self, active, grads, event, step, lr):
        t0 = time.perf_counter()
        if event is not None:
            event.synchronize()  # the device -> host copies of the gradients are done
        self.store.update(active, grads, step, lr)
        self.seconds["update"] += time.perf_counter() - t0

    def _submit(self, fn, *args) -> Future:
        self._work = [f for f in self._work if not f.done()] + [self.pool.submit(fn, *args)]
        return self._work[-1]

    # -- the step protocol

    def prime(self, active) -> None:
        """Gather the first step's rows."""
        self._next = self._gather(active)

    def rows(self) -> VocabRows:
        """This step's rows (waits for the prefetch); on CUDA the compute stream waits for the copy."""
        rows = self._next.result() if isinstance(self._next, Future) else self._next
        self._next = None
        if self.cuda:  # allocated on the side stream, used on the compute stream
            for t in rows.tensors().values():
                t.record_stream(torch.cuda.current_stream(self.device))
        return rows

    def begin(self, next_active) -> None:
        """delay 1: hand the host the update of the previous step, then the prefetch of the next."""
        if self.delay:
            if self._pending is not None:
                self._submit(self._update, *self._pending)
                self._pending = None
            if next_active is not None:
                self._next = self._submit(self._gather, next_active)

    def end(self, active, rows: VocabRows, step: int, lr: float, next_active) -> None:
        """Return this step's row gradients to the host; delay 0: update, then gather the next rows."""
        event = None
        if self.cuda:
            self.stream.wait_stream(torch.cuda.current_stream(self.device))
            with torch.cuda.stream(self.stream):
                grads = {}
                for k, t in rows.tensors().items():
                    host = torch.empty(t.grad.shape, dtype=t.grad.dtype, pin_memory=True)
                    host.copy_(t.grad, non_blocking=True)
                    t.grad.record_stream(self.stream)
                    grads[k] = host
                event = torch.cuda.Event()
                event.record(self.stream)
        else:
            grads = {k: t.grad for k, t in rows.tensors().items()}
        if self.delay:
            self._pending = (active, grads, event, step, lr)
        else:
            self._update(active, grads, event, step, lr)
            if next_active is not None:
                self._next = self._gather(next_active)

    def barrier(self, next_active) -> None:
        """Apply every pending update and gather the next rows afresh (checkpoints, the end of a run)."""
        if self.delay:
            for f in self._work:
                f.result()
            self._work = []
            if self._pending is not None:
                self._update(*self._pending)
                self._pending = None
            self._next = self._gather(next_active) if next_active is not None else None

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)


def device_bytes(module: torch.nn.Module, optimizer: torch.optim.Optimizer) -> int:
    """Bytes of a module's parameters and its optimizer's state tensors (what lives on the device)."""
    n = sum(p.numel() * p.element_size() for p in module.parameters())
    for state in optimizer.state.values():
        n += sum(t.numel() * t.element_size() for t in state.values() if torch.is_tensor(t) and t.dim() > 0)
    return n

