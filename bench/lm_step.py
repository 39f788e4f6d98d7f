"""Training-step time: restricted-vocabulary loss vs masked full-vocabulary loss.

Synthetic setting (no tokenizer needed, ids only): a global vocabulary of
26 languages x 8000 ids = 208,000 ids (+1 LM boundary id). Language i owns ids
[i*8000, (i+1)*8000); the 256 byte ids [0, 256) are shared by all. A Samp_Sub_2
batch is in one language with the subtokenizer of that language + 2 others, so
its active set is 3 blocks + the bytes + the boundary (24,001 ids here: the
drawn languages 0, 7, 19 include language 0, whose block holds the byte ids). Inputs and targets are drawn uniformly from
the active ids (seed 0).

One step = forward, backward, gradient clipping, AdamW step, for
  restricted:  logits = h @ W[active].T              (B, T, 24k)
  masked:      logits = h @ W.T, -inf outside active  (B, T, 208k)
  active-only: a model whose vocabulary is the 24k active ids only (inputs and
               targets renumbered): the limit the restricted loss can approach,
               since it still carries the 208k-row matrices (their gradients and
               AdamW update)
  host store:  restricted, with the vocabulary rows and their AdamW moments in the
               host store (the training loop's step, update delay 0): the device
               computes on the body + the 24k gathered rows only
The four run interleaved step by step after one warm-up step each.
Model: d_model=256, 4 layers, 4 heads (2 kv heads), SwiGLU 704, seq 128, batch 8.

    python bench/lm_step.py --threads 1     # ~2 min on one busy CPU core
    MODTOK_SMOKE=1 python bench/lm_step.py   # 26 x 1000 ids, seconds
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import torch
import torch.nn.functional as F

from modtok.lm.batches import Batch
from modtok.lm.loss import masked_full_cross_entropy
from modtok.lm.model import LM, LMConfig
from modtok.lm.offload import HostVocabStore, VocabPipeline
from modtok.lm.train import (
    TrainConfig,
    Run,
    train_step,
    autocast,
    default_device,
    make_optimizer,
)
from modtok.text.data import is_smoke


def sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--per-lang", type=int, default=1000 if is_smoke() else 8000)
    ap.add_argument("--langs", type=int, default=26)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--seq", type=int, default=128)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: torch's choice)")
    args = ap.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    device = default_device()
    V = args.langs * args.per_lang + 1  # + boundary
    cfg = LMConfig(vocab_size=V, d_model=256, n_layers=4, n_heads=4, n_kv_heads=2, max_seq_len=args.seq)
    g = torch.Generator().manual_seed(0)
    drawn = [0, 7, 19]  # Samp_Sub_2: own language 7 + two others
    active = torch.unique(torch.cat(
        [torch.arange(256)] + [torch.arange(i * args.per_lang, (i + 1) * args.per_lang) for i in drawn]
        + [torch.tensor([V - 1])]))
    pick = torch.randint(active.numel(), (args.batch, args.seq + 1), generator=g)
    stream = active[pick]
    idx, targets = stream[:, :-1].contiguous().to(device), stream[:, 1:].contiguous().to(device)
    active = active.to(device)
    print(f"device {device} ({torch.get_num_threads()} threads), torch {torch.__version__}")
    print(f"global vocabulary {V - 1:,} ids + boundary; Samp_Sub_2 active set {active.numel():,} ids; "
          f"batch {args.batch} x {args.seq} tokens")

    # the limit the restricted loss can approach: a model whose whole vocabulary is the active set
    local_cfg = LMConfig(**{**cfg.to_dict(), "vocab_size": int(active.numel())})
    local_idx, local_targets = torch.searchsorted(active, idx), torch.searchsorted(active, targets)
    setups = {}
    for name in ("restricted", "masked", "active-only"):
        torch.manual_seed(0)  # same initial body for all three
        model = LM(local_cfg if name == "active-only" else cfg).to(device)
        setups[name] = (model, make_optimizer(model, TrainConfig()))
    model = setups["restricted"][0]
    print(f"model: d_model 256, 4 layers, 4 heads / 2 kv heads, ff {cfg.ff_width}; "
          f"{model.num_params() / 1e6:.1f}M parameters ({model.num_params(vocab=False) / 1e6:.2f}M without the "
          f"two vocabulary matrices); the active-only model has {active.numel():,} rows")

    def loss_of(name: str, model: LM) -> torch.Tensor:
        with autocast(device):
            if name == "restricted":
                nats = model(idx, active, targets)
            elif name == "masked":
                w, b = model.output_rows(None)
                nats = masked_full_cross_entropy(model.hidden(idx), w, b, targets, active)
            else:  # full softmax over its own K rows, local ids
                nats = F.cross_entropy(model.logits(local_idx).float().flatten(0, 1), local_targets.flatten(),
                                       reduction="sum")
        return nats / targets.numel()

    # the restricted step with the vocabulary in the host store (modtok.lm.offload; the training loop's own
    # step, delay 0): the device model is the body, the K active rows are gathered and updated per step
    torch.manual_seed(0)
    body = LM(cfg)
    host_cfg = TrainConfig(vocab_store="host")
    store = HostVocabStore.from_model(body, weight_decay=host_cfg.weight_decay)
    body.embed, body.out = None, None
    body = body.to(device)
    run = Run(cfg, host_cfg, device, 0, 1, body, body, make_optimizer(body, host_cfg),
               VocabPipeline(store, device, 0), {}, Path(), Path())
    batch = Batch(0, "l07", ("l00", "l07", "l19"), idx.cpu(), targets.cpu(), active.cpu(), 1.0)

    step_times = {name: [] for name in [*setups, "host store"]}
    fb_times = {name: [] for name in setups}
    first_loss = {}
    for r in range(args.repeats + 1):  # first = warm-up; configurations interleaved ABCDABCD...
        for name, (model, opt) in setups.items():
            sync(device)
            t0 = time.perf_counter()
            loss = loss_of(name, model)
            if not r:
                first_loss[name] = float(loss.detach())
            opt.zero_grad(set_to_none=True)
            loss.backward()
            sync(device)
            t1 = time.perf_counter()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            sync(device)
            t2 = time.perf_counter()
            if r:
                step_times[name].append(t2 - t0)
                fb_times[name].append(t1 - t0)
        sync(device)
        t0 = time.perf_counter()
        nats, _ = train_step(run, batch, batch, host_cfg.lr, first=r == 0)
        float(nats)
        sync(device)
        if r:
            step_times["host store"].append(time.perf_counter() - t0)
    run.pipe.close()
    med = {name: (statistics.median(step_times[name]), statistics.median(fb_times.get(name, [0.0])))
           for name in step_times}
    for name, t in step_times.items():
        fb = f"; loss fwd+bwd {med[name][1] * 1e3:9.1f} ms)  first loss {first_loss[name]:.4f}" if name in setups else ")"
        print(f"{name:>11}: step {med[name][0] * 1e3:9.1f} ms (range {min(t) * 1e3:.1f} - {max(t) * 1e3:.1f}{fb}")
    (rs, rf), (ms, mf), (ls, lf) = med["restricted"], med["masked"], med["active-only"]
    hs = med["host store"][0]
    print(f"ratio restricted / masked: step {rs / ms:.3f}, forward+backward {rf / mf:.3f} (target <= 0.5)")
    print(f"ratio restricted / active-only model: step {rs / ls:.3f}, forward+backward {rf / lf:.3f}")
    print(f"ratio restricted with host store / active-only model: step {hs / ls:.3f} (target <= 1.15)")
    rl, ml = first_loss["restricted"], first_loss["masked"]
    print(f"initial losses equal: {abs(rl - ml) < 1e-3 * max(1.0, abs(ml))} ({rl:.5f} vs {ml:.5f})")

if __name__ == "__main__":
    main()
