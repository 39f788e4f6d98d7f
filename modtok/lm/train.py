"""The training loop: AdamW, warmup + cosine, clipping, checkpoints, JSONL metrics, DDP.

Each step takes the batch of :class:`~modtok.lm.batches.BatchSource` for that
step, computes the restricted-vocabulary loss (mean nats per target token over
the batch's active ids), and updates with AdamW. The learning rate rises
linearly for ``warmup_steps`` then follows a cosine down to
``min_lr_ratio * lr`` at the last step.

Checkpoints (``<out>/checkpoint.pt``) hold the model, the optimizer, the step,
both configs and the data-stream description; they are written to a temp file
and renamed, so a crash never leaves a partial file. ``train(..., resume=True)``
loads it with ``torch.load(weights_only=True)``, refuses one from another model
config, training config or vocabulary, and continues: batches and the schedule
are functions of the step, so the loss curve is the one of an uninterrupted run
(bit for bit on CPU). ``<out>/metrics.jsonl`` gets one line per logged step:
``{"step", "lr", "loss", "bpb", "lang", "setting", "n_active", "tokens",
"bytes", "grad_norm", "time_s"}`` (``loss`` in nats/token, ``bpb`` bits per
UTF-8 byte, ``time_s`` wall seconds of the step); on resume, lines past the
checkpoint are dropped.

Data parallel: run under ``torchrun --nproc_per_node=N -m modtok.lm.train ...``
(or call :func:`train` in each process); the process group is NCCL on CUDA, gloo
on CPU. Every rank draws the same language and subtokenizer for a step and its
own rows, so the global batch is monolingual with ``N * batch_size`` rows; rank
0 writes checkpoints and metrics. On CUDA the forward runs under bf16 autocast.

Vocabulary state off the device (§6.4): ``TrainConfig(vocab_store="host")`` keeps
the embedding and output rows and their AdamW moments in a host store; each step
gathers only the batch's active rows and updates them with row-sparse AdamW
(:mod:`modtok.lm.offload`, semantics there); ``update_delay=1`` overlaps the host
work with the next step as in App. E. Checkpoints keep the same model state dict
(the full matrices), so :func:`load_model` reads either kind.

The loop reads like nanoGPT's: per step ``_step`` (forward, backward, clip,
AdamW), ``_log`` on log steps only (its ``float()`` calls are the one device
sync), ``_checkpoint`` every ``ckpt_every`` steps; ``setup_run`` and ``_resume``
come before it.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import torch
import torch.distributed as dist

from modtok import atomic
from modtok.errors import (
    CheckpointError,
    ModelConfigError,
    ModtokError,
    VocabularyMismatchError,
)
from modtok.lm.batches import Batch, BatchSource, lm_vocab_size
from modtok.lm.loss import bits_per_byte
from modtok.lm.model import LM, LMConfig
from modtok.lm.offload import (
    HostVocabStore,
    VocabPipeline,
    VocabRows,
    average_row_grads,
    broadcast_store,
)
from modtok.progress import bar as progress_bar

CHECKPOINT = "checkpoint.pt"
METRICS = "metrics.jsonl"
# modtok-lm-2: p of Samp_Full / Samp_Sub_n is the probability of the full tokenizer (App. D.2);
# in modtok-lm-1 it was the own-language probability, so those checkpoints are refused.
FORMAT = "modtok-lm-2"


@dataclass(frozen=True)
class TrainConfig:
    steps: int = 200
    lr: float = 3e-3
    min_lr_ratio: float = 0.1
    warmup_steps: int = 20
    weight_decay: float = 0.1
    beta1: float = 0.9
    beta2: float = 0.95
    grad_clip: float = 1.0
    seed: int = 0  # model initialisation
    log_every: int = 1
    ckpt_every: int = 100
    prefetch: int = 2
    vocab_store: str = "device"  # "host": vocabulary rows and moments in host memory (modtok.lm.offload)
    update_delay: int = 0  # host store: 1 = the delayed scheme of App. E (updates overlap the next step)

    def __post_init__(self):
        if self.steps < 1 or self.warmup_steps < 0 or self.log_every < 1 or self.ckpt_every < 1:
            raise ModtokError(f"bad TrainConfig: {self}")
        if self.vocab_store not in ("device", "host") or self.update_delay not in (0, 1):
            raise ModtokError(f"bad TrainConfig: vocab_store {self.vocab_store!r} (device, host), "
                              f"update_delay {self.update_delay} (0, 1)")
        if self.update_delay and self.vocab_store != "host":
            raise ModtokError("update_delay=1 needs vocab_store='host' (the delay is the host store's pipeline)")


# Fields that do not change the computation; a resumed run may change them.
_BOOKKEEPING = ("log_every", "ckpt_every", "prefetch")


def lr_at(step: int, cfg: TrainConfig) -> float:
    """Linear warmup over ``warmup_steps`` (step 0 gets lr / warmup), then cosine to ``min_lr_ratio * lr``.

    >>> cfg = TrainConfig(steps=10, lr=1.0, warmup_steps=2, min_lr_ratio=0.0)
    >>> [round(lr_at(s, cfg), 3) for s in (0, 1, 2, 9)]
    [0.5, 1.0, 1.0, 0.0]
    """
    if step < cfg.warmup_steps:
        return cfg.lr * (step + 1) / cfg.warmup_steps
    span = max(1, cfg.steps - 1 - cfg.warmup_steps)
    progress = min(1.0, (step - cfg.warmup_steps) / span)
    low = cfg.lr * cfg.min_lr_ratio
    return low + 0.5 * (cfg.lr - low) * (1 + math.cos(math.pi * progress))


def default_device() -> torch.device:
    return torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")


def autocast(device: torch.device):
    """bf16 autocast on CUDA, nothing on CPU."""
    if device.type == "cuda":
        return torch.autocast("cuda", dtype=torch.bfloat16)
    return contextlib.nullcontext()


def make_optimizer(model: LM, cfg: TrainConfig) -> torch.optim.AdamW:
    """AdamW; weight decay on matrices (embedding, output, projections), none on norms and biases."""
    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    groups = [{"params": decay, "weight_decay": cfg.weight_decay}, {"params": no_decay, "weight_decay": 0.0}]
    return torch.optim.AdamW(groups, lr=cfg.lr, betas=(cfg.beta1, cfg.beta2))


# ---------------------------------------------------------------------------- files


def save_atomic(obj, path: Path) -> None:
    """torch.save through :func:`modtok.atomic.atomic_write` (no partial checkpoint)."""
    with atomic.atomic_write(path, "wb") as f:
        torch.save(obj, f)


def load_checkpoint(path) -> dict:
    """The checkpoint dict, loaded with ``weights_only=True``; CheckpointError if unreadable."""
    path = Path(path)
    try:
        ckpt = torch.load(path, map_location="cpu", weights_only=True)
    except FileNotFoundError:
        raise CheckpointError(f"{path}: no such checkpoint") from None
    except Exception as e:  # unpickling errors come in many types
        raise CheckpointError(f"{path}: not a readable checkpoint ({type(e).__name__}: {e})") from None
    if isinstance(ckpt, dict) and ckpt.get("format") == "modtok-lm-1":
        raise CheckpointError(
            f"{path}: a modtok-lm-1 checkpoint, written when p of Samp_Full/Samp_Sub_n was the probability of "
            f"the own-language subtokenizer; p is now the probability of the full tokenizer (App. D.2), so its "
            f"recorded scheme would be misread: retrain it (format {FORMAT!r})"
        )
    if not isinstance(ckpt, dict) or ckpt.get("format") != FORMAT:
        raise CheckpointError(f"{path}: not a modtok LM checkpoint (format {FORMAT!r} expected)")
    return ckpt


def load_model(path) -> tuple[LM, dict]:
    """The trained model (eval mode, CPU) and its checkpoint dict."""
    ckpt = load_checkpoint(path)
    model = LM(LMConfig(**ckpt["model_config"]))
    model.load_state_dict(ckpt["model"])
    return model.eval(), ckpt


def _diff(name: str, saved: dict, current: dict, path: Path, skip=()) -> None:
    keys = sorted(k for k in set(saved) | set(current) if k not in skip and saved.get(k) != current.get(k))
    if keys:
        shown = "; ".join(f"{k}: checkpoint {saved.get(k)!r} vs now {current.get(k)!r}" for k in keys[:4])
        raise CheckpointError(f"{path} was written with another {name} ({shown})")


def _rewrite_metrics(path: Path, upto: int) -> None:
    """Keep only metric lines with step < upto (a run resumed at ``upto`` logs the rest again)."""
    if not path.exists():
        return
    keep = [line for line in path.read_text().splitlines() if line.strip() and json.loads(line)["step"] < upto]
    atomic.write_text(path, "".join(line + "\n" for line in keep))


def read_metrics(out_dir) -> list[dict]:
    """The metrics log of a run as a list of dicts."""
    path = Path(out_dir) / METRICS
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


# ---------------------------------------------------------------------------- the loop


@dataclass
class TrainResult:
    out_dir: Path
    steps: int  # steps done in all (including those before a resume)
    last: dict  # the last metrics line (empty on ranks other than 0)
    model: LM  # the trained model (the unwrapped module under DDP; on the host with the host store)


@dataclass
class Run:
    """Everything one training process holds: where it runs, the model, the optimizer(s)."""

    model_cfg: LMConfig
    cfg: TrainConfig
    device: torch.device
    rank: int
    world: int
    model: LM  # with the host store: the body only (no vocabulary matrices)
    net: torch.nn.Module  # model, or DDP(model)
    opt: torch.optim.AdamW
    pipe: VocabPipeline | None  # the host store's row traffic (None: vocabulary on the device)
    data_state: dict
    ckpt_path: Path
    metrics_path: Path
    start: int = 0


def _check_shapes(model_cfg: LMConfig, source: BatchSource) -> None:
    if model_cfg.vocab_size != lm_vocab_size(source.tokenizer):
        raise VocabularyMismatchError(
            f"model vocab_size {model_cfg.vocab_size} != tokenizer vocabulary + boundary "
            f"{lm_vocab_size(source.tokenizer)}"
        )
    if source.seq_len > model_cfg.max_seq_len:
        raise ModelConfigError(f"seq_len {source.seq_len} > model max_seq_len {model_cfg.max_seq_len}")


def setup_run(model_cfg, cfg, source, out_dir, device, distributed, init=None) -> Run:
    """Device, initial model (seeded, or ``init``'s weights), optimizer; with the host store the
    vocabulary moves off the model."""
    rank = dist.get_rank() if distributed else 0
    world = dist.get_world_size() if distributed else 1
    if device is None:
        device = default_device()
        if device.type == "cuda" and distributed:
            device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", "0")))
            torch.cuda.set_device(device)
    torch.manual_seed(cfg.seed)
    model, pipe = LM(model_cfg), None
    if init is not None:  # continued pretraining: start from these weights (a fresh optimizer)
        model.load_state_dict(init.state_dict())
    if cfg.vocab_store == "host" and model_cfg.tie_embeddings:
        raise ModelConfigError("vocab_store='host' keeps separate embedding and output rows: untie the model "
                               "(tie_embeddings=False) or keep the vocabulary on the device")
    if cfg.vocab_store == "host":
        store = HostVocabStore.from_model(model, weight_decay=cfg.weight_decay, beta1=cfg.beta1, beta2=cfg.beta2)
        model.embed, model.out = None, None  # the body stays; the rows come from the store
        pipe = VocabPipeline(store, device, cfg.update_delay)
    model = model.to(device)
    out_dir = Path(out_dir)
    return Run(model_cfg, cfg, device, rank, world, model, model, make_optimizer(model, cfg), pipe,
                source.state_dict(), out_dir / CHECKPOINT, out_dir / METRICS)


def _resume(run: Run) -> None:
    """Load ``run.ckpt_path`` if present (refusing another config, data stream or vocabulary)."""
    ckpt = load_checkpoint(run.ckpt_path)
    _diff("model config", ckpt["model_config"], run.model_cfg.to_dict(), run.ckpt_path)
    _diff("training config", ckpt["train_config"], asdict(run.cfg), run.ckpt_path, skip=_BOOKKEEPING)
    _diff("data stream or vocabulary", ckpt["data"], run.data_state, run.ckpt_path)
    if run.pipe is None:
        run.model.load_state_dict(ckpt["model"])
        run.opt.load_state_dict(ckpt["optim"])
    else:
        body = {k: v for k, v in ckpt["model"].items() if not k.startswith(("embed.", "out."))}
        run.model.load_state_dict(body)
        run.opt.load_state_dict(ckpt["optim"]["body"])
        run.pipe.store.load(ckpt["model"], ckpt["optim"]["vocab"])
    run.start = int(ckpt["step"])


def _vocab_first(run: Run, rows: VocabRows | None) -> list[torch.Tensor]:
    """The parameters in the full LM's order (embed, body, out, bias): the order clipping sums norms in."""
    if rows is None:
        return list(run.model.parameters())
    t = rows.tensors()
    return [t["embed"], *run.model.parameters(), t["out"]] + ([t["out_bias"]] if "out_bias" in t else [])


def _step(run: Run, batch: Batch, lr: float, rows: VocabRows | None):
    """Forward, backward, clip, AdamW on one batch; returns the summed nats and the gradient norm (tensors)."""
    for group in run.opt.param_groups:
        group["lr"] = lr
    idx, targets = batch.idx.to(run.device), batch.targets.to(run.device)
    active = batch.active_ids.to(run.device)
    with autocast(run.device):
        nats = run.net(idx, active, targets, rows)  # summed over the rows of this rank
    loss = nats / targets.numel()  # packed rows: every target counts
    run.opt.zero_grad(set_to_none=True)
    loss.backward()
    if rows is not None and run.world > 1:
        average_row_grads(rows, run.world)
    grad_norm = torch.nn.utils.clip_grad_norm_(_vocab_first(run, rows), run.cfg.grad_clip)
    run.opt.step()
    return nats.detach(), grad_norm


def train_step(run: Run, batch: Batch, nxt: Batch | None, lr: float, first: bool = False):
    """:func:`_step` with the host store's row traffic around it (``nxt``: the next batch, prefetched)."""
    if run.pipe is None:
        return _step(run, batch, lr, None)
    nxt_active = None if nxt is None else nxt.active_ids
    if first:
        run.pipe.prime(batch.active_ids)
    rows = run.pipe.rows()
    run.pipe.begin(nxt_active)
    nats, grad_norm = _step(run, batch, lr, rows)
    run.pipe.end(batch.active_ids, rows, batch.step + 1, lr, nxt_active)
    return nats, grad_norm


def _log(run: Run, batch: Batch, lr: float, nats, grad_norm, t0: float) -> dict:
    """The metrics line of a logged step (all ranks reduce, rank 0 writes); the only device sync.

    ``time_s`` is the wall time since ``t0`` (the step's start) once ``float(nats)`` has synced.
    """
    totals = torch.tensor([float(nats), batch.targets.numel(), batch.n_bytes], dtype=torch.float64)
    seconds = time.perf_counter() - t0
    if run.world > 1:
        dist.all_reduce(totals)
    line = {
        "step": batch.step, "lr": lr,
        "loss": float(totals[0] / totals[1]), "bpb": bits_per_byte(totals[0], totals[2]),
        "lang": batch.lang, "setting": batch.setting, "n_active": int(batch.active_ids.numel()),
        "tokens": int(totals[1]), "bytes": float(totals[2]), "grad_norm": float(grad_norm),
        "time_s": seconds,
    }
    if run.rank == 0:
        with open(run.metrics_path, "a") as f:
            f.write(json.dumps(line) + "\n")
    return line


def _full_state(run: Run) -> tuple[dict, dict]:
    """(model state dict with the vocabulary matrices, optimizer state) as a checkpoint stores them."""
    if run.pipe is None:
        return run.model.state_dict(), run.opt.state_dict()
    model = {**run.model.state_dict(), **run.pipe.store.model_state()}
    return model, {"body": run.opt.state_dict(), "vocab": run.pipe.store.state_dict()}


def _checkpoint(run: Run, done: int) -> None:
    model, optim = _full_state(run)
    save_atomic({
        "format": FORMAT, "step": done,
        "model_config": run.model_cfg.to_dict(), "train_config": asdict(run.cfg), "data": run.data_state,
        "model": model, "optim": optim,
    }, run.ckpt_path)


def _final_model(run: Run) -> LM:
    if run.pipe is None:
        return run.model
    model = LM(run.model_cfg)
    model.load_state_dict({k: v.to("cpu") for k, v in _full_state(run)[0].items()})
    return model


def _with_next(batches):
    """(batch, next batch or None): the host store prefetches the next step's rows."""
    it = iter(batches)
    cur = next(it, None)
    for nxt in it:
        yield cur, nxt
        cur = nxt
    if cur is not None:
        yield cur, None


def train(model_cfg: LMConfig, cfg: TrainConfig, source: BatchSource, out_dir, *,
          resume: bool = True, until: int | None = None, progress: bool = False,
          device: torch.device | None = None, init: LM | None = None) -> TrainResult:
    """Train (or continue training) a model on ``source``'s batches; returns where it stopped.

    ``init`` (a model of ``model_cfg``'s shape) replaces the seeded initial weights, e.g. a
    pretrained model for continued pretraining (:mod:`modtok.studies.pretoken_floor.cpt`); a checkpoint
    resumed from ``out_dir`` takes precedence over it.

    ``until`` stops after that many steps (with a checkpoint) so that a run can be done in pieces;
    the schedule still spans ``cfg.steps``.

    Inside ``torchrun`` (env ``WORLD_SIZE`` > 1) the process group is set up here if needed.
    """
    _check_shapes(model_cfg, source)
    own_group = int(os.environ.get("WORLD_SIZE", "1")) > 1 and not dist.is_initialized()
    if own_group:
        dist.init_process_group("nccl" if torch.cuda.is_available() else "gloo")
    run = None
    try:
        run = setup_run(model_cfg, cfg, source, out_dir, device, dist.is_initialized(), init)
        if resume and run.ckpt_path.exists():
            _resume(run)
        if run.rank == 0:
            run.ckpt_path.parent.mkdir(parents=True, exist_ok=True)
            if run.start:
                _rewrite_metrics(run.metrics_path, run.start)
            else:
                run.metrics_path.unlink(missing_ok=True)
        if run.world > 1:
            run.net = torch.nn.parallel.DistributedDataParallel(run.model)  # broadcasts rank 0's body
            if run.pipe is not None:
                broadcast_store(run.pipe.store, run.device)  # ... and here rank 0's vocabulary rows
        bar = progress_bar(total=cfg.steps, initial=run.start, desc="train", unit="step",
                           enabled=progress and run.rank == 0)
        last: dict = {}
        stop = cfg.steps if until is None else min(cfg.steps, until)
        batches = source.batches(run.start, stop, rank=run.rank, prefetch=cfg.prefetch)
        for batch, nxt in _with_next(batches):
            t0, step, lr = time.perf_counter(), batch.step, lr_at(batch.step, cfg)
            nats, grad_norm = train_step(run, batch, nxt, lr, first=step == run.start)
            if step % cfg.log_every == 0 or step == cfg.steps - 1:
                last = _log(run, batch, lr, nats, grad_norm, t0)
            done = step + 1
            if done % cfg.ckpt_every == 0 or done == stop:
                if run.pipe is not None:
                    run.pipe.barrier(None if nxt is None else nxt.active_ids)
                if run.rank == 0:
                    _checkpoint(run, done)
            bar.update(1)
            bar.set_postfix(loss=f"{last.get('loss', float('nan')):.3f}", lang=batch.lang, refresh=False)
        bar.close()
        if run.world > 1:
            dist.barrier()
        return TrainResult(run.ckpt_path.parent, max(run.start, stop), last if run.rank == 0 else {},
                           _final_model(run))
    finally:
        if run is not None and run.pipe is not None:
            run.pipe.close()
        if own_group:
            dist.destroy_process_group()
