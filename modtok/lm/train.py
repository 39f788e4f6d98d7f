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
"""

from __future__ import annotations

import argparse
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
from modtok.errors import ModtokError
from modtok.lm.batches import BatchSource, lm_vocab_size
from modtok.lm.loss import bits_per_byte
from modtok.lm.model import LM, LMConfig

CHECKPOINT = "checkpoint.pt"
METRICS = "metrics.jsonl"
FORMAT = "modtok-lm-1"


class CheckpointError(ModtokError):
    """A checkpoint that is unreadable or belongs to another model, run or vocabulary."""


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

    def __post_init__(self):
        if self.steps < 1 or self.warmup_steps < 0 or self.log_every < 1 or self.ckpt_every < 1:
            raise ModtokError(f"bad TrainConfig: {self}")


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
    model: LM  # the trained model (the unwrapped module under DDP)


def train(model_cfg: LMConfig, cfg: TrainConfig, source: BatchSource, out_dir, *,
          resume: bool = True, until: int | None = None, progress: bool = False,
          device: torch.device | None = None) -> TrainResult:
    """Train (or continue training) a model on ``source``'s batches; returns where it stopped.

    ``until`` stops after that many steps (with a checkpoint) so that a run can be done in pieces;
    the schedule still spans ``cfg.steps``.

    Inside ``torchrun`` (env ``WORLD_SIZE`` > 1) the process group is set up here if needed.
    """
    if model_cfg.vocab_size != lm_vocab_size(source.tokenizer):
        raise CheckpointError(
            f"model vocab_size {model_cfg.vocab_size} != tokenizer vocabulary + boundary "
            f"{lm_vocab_size(source.tokenizer)}"
        )
    if source.seq_len > model_cfg.max_seq_len:
        raise ModtokError(f"seq_len {source.seq_len} > model max_seq_len {model_cfg.max_seq_len}")
    own_group = int(os.environ.get("WORLD_SIZE", "1")) > 1 and not dist.is_initialized()
    if own_group:
        dist.init_process_group("nccl" if torch.cuda.is_available() else "gloo")
    distributed = dist.is_initialized()
    rank = dist.get_rank() if distributed else 0
    if device is None:
        device = default_device()
        if device.type == "cuda" and distributed:
            device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", "0")))
            torch.cuda.set_device(device)
    out_dir = Path(out_dir)
    ckpt_path, metrics_path = out_dir / CHECKPOINT, out_dir / METRICS
    try:
        torch.manual_seed(cfg.seed)
        model = LM(model_cfg).to(device)
        opt = make_optimizer(model, cfg)
        start = 0
        data_state = source.state_dict()
        if resume and ckpt_path.exists():
            ckpt = load_checkpoint(ckpt_path)
            _diff("model config", ckpt["model_config"], model_cfg.to_dict(), ckpt_path)
            _diff("training config", ckpt["train_config"], asdict(cfg), ckpt_path, skip=_BOOKKEEPING)
            _diff("data stream or vocabulary", ckpt["data"], data_state, ckpt_path)
            model.load_state_dict(ckpt["model"])
            opt.load_state_dict(ckpt["optim"])
            start = int(ckpt["step"])
        if rank == 0:
            out_dir.mkdir(parents=True, exist_ok=True)
            if start:
                _rewrite_metrics(metrics_path, start)
            else:
                metrics_path.unlink(missing_ok=True)
        net = torch.nn.parallel.DistributedDataParallel(model) if distributed else model
        bar = None
        if progress and rank == 0:
            from tqdm.auto import tqdm

            bar = tqdm(total=cfg.steps, initial=start, desc="train", unit="step")
        last: dict = {}
        stop = cfg.steps if until is None else min(cfg.steps, until)
        for batch in source.batches(start, stop, rank=rank, prefetch=cfg.prefetch):
            step, t0 = batch.step, time.perf_counter()
            lr = lr_at(step, cfg)
            for group in opt.param_groups:
                group["lr"] = lr
            idx, targets = batch.idx.to(device), batch.targets.to(device)
            active = batch.active_ids.to(device)
            n_tokens = targets.numel()  # packed rows: every target counts
            with autocast(device):
                nats = net(idx, active, targets)  # summed over the rows of this rank
            loss = nats / n_tokens
            opt.zero_grad(set_to_none=True)
            loss.backward()
            grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.grad_clip)
            opt.step()
            totals = torch.tensor([nats.item(), n_tokens, batch.n_bytes], dtype=torch.float64)
            if distributed:
                dist.all_reduce(totals)
            if rank == 0 and (step % cfg.log_every == 0 or step == cfg.steps - 1):
                last = {
                    "step": step, "lr": lr,
                    "loss": float(totals[0] / totals[1]), "bpb": bits_per_byte(totals[0], totals[2]),
                    "lang": batch.lang, "setting": batch.setting, "n_active": int(active.numel()),
                    "tokens": int(totals[1]), "bytes": float(totals[2]), "grad_norm": float(grad_norm),
                    "time_s": time.perf_counter() - t0,
                }
                with open(metrics_path, "a") as f:
                    f.write(json.dumps(last) + "\n")
            done = step + 1
            if rank == 0 and (done % cfg.ckpt_every == 0 or done == stop):
                save_atomic({
                    "format": FORMAT, "step": done,
                    "model_config": model_cfg.to_dict(), "train_config": asdict(cfg), "data": data_state,
                    "model": model.state_dict(), "optim": opt.state_dict(),
                }, ckpt_path)
            if bar is not None:
                bar.update(1)
                bar.set_postfix(loss=f"{last.get('loss', float('nan')):.3f}", lang=batch.lang)
        if bar is not None:
            bar.close()
        if distributed:
            dist.barrier()
        return TrainResult(out_dir, max(start, stop), last, model)
    finally:
        if own_group:
            dist.destroy_process_group()


# ---------------------------------------------------------------------------- command line


def main(argv=None) -> None:
    """``python -m modtok.lm.train --tokenizer DIR --out DIR [--langs ...] [--scheme samp_sub --n 2 --p 0.5]``."""
    from modtok import data
    from modtok.lm.model import config
    from modtok.lm.sampling import Scheme, SubtokenizerSampler, default_mixture
    from modtok.modular import ModularTokenizer

    ap = argparse.ArgumentParser(prog="modtok.lm.train", description=main.__doc__)
    ap.add_argument("--tokenizer", required=True, help="ModularTokenizer directory")
    ap.add_argument("--out", required=True)
    ap.add_argument("--langs", nargs="*", help="training languages (default: all of the tokenizer's)")
    ap.add_argument("--english-share", type=float, default=0.7)
    ap.add_argument("--scheme", default="samp_sub", choices=["mono", "samp_full", "samp_sub"])
    ap.add_argument("--n", type=int, default=2)
    ap.add_argument("--p", type=float, default=0.5)
    ap.add_argument("--config", default="mini")
    ap.add_argument("--batch-size", type=int, default=8)
    ap.add_argument("--seq-len", type=int, default=128)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--max-chars", type=int, default=None, help="training characters per language")
    ap.add_argument("--progress", action="store_true")
    args = ap.parse_args(argv)
    tok = ModularTokenizer.load(args.tokenizer)
    langs = args.langs or tok.languages
    corpus = data.load_pool(langs, max_chars=args.max_chars, seed=args.seed)
    n = args.n if args.scheme == "samp_sub" else 0
    scheme = Scheme(args.scheme, 1.0 if args.scheme == "mono" else args.p, n)
    sampler = SubtokenizerSampler(scheme, default_mixture(langs, english_share=args.english_share), args.seed)
    source = BatchSource(tok, corpus, sampler, args.batch_size, args.seq_len, seed=args.seed)
    model_cfg = config(args.config, lm_vocab_size(tok), max_seq_len=args.seq_len)
    cfg = TrainConfig(steps=args.steps, lr=args.lr, warmup_steps=args.warmup, seed=args.seed)
    train(model_cfg, cfg, source, args.out, progress=args.progress)


if __name__ == "__main__":
    main()
