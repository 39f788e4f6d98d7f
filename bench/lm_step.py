"""Training-step time: restricted-vocabulary loss vs masked full-vocabulary loss.

Synthetic setting (no tokenizer needed, ids only): a global vocabulary of
26 languages x 8000 ids = 208,000 ids (+1 LM boundary id). Language i owns ids
[i*8000, (i+1)*8000); the 256 byte ids [0, 256) are shared by all. A Samp_Sub_2
batch is in one language with the subtokenizer of that language + 2 others, so
its active set is 3 blocks + the bytes + the boundary (24,001 ids here: the
drawn languages 0, 7, 19 include language 0, whose block holds the byte ids). Inputs and targets are drawn uniformly from
the active ids (seed 0).

One step = forward, backward, gradient clipping, AdamW step, for
  restricted: logits = h @ W[active].T              (B, T, 24k)
  masked:     logits = h @ W.T, -inf outside active  (B, T, 208k)
Model: d_model=256, 4 layers, 4 heads (2 kv heads), SwiGLU 704, seq 128, batch 8.

    python bench/lm_step.py --threads 1     # ~2 min on one busy CPU core
    MODTOK_SMOKE=1 python bench/lm_step.py   # 26 x 1000 ids, seconds
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch

from modtok.data import is_smoke
from modtok.lm.loss import masked_full_cross_entropy
from modtok.lm.model import LM, LMConfig
from modtok.lm.train import TrainConfig, autocast, default_device, make_optimizer


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

    results = {}
    for name in ("restricted", "masked"):
        torch.manual_seed(0)  # same initial weights for both
        model = LM(cfg).to(device)
        opt = make_optimizer(model, TrainConfig())
        if name == "restricted":
            print(f"model: d_model 256, 4 layers, 4 heads / 2 kv heads, ff {cfg.ff_width}; "
                  f"{model.num_params() / 1e6:.1f}M parameters ({model.num_params(vocab=False) / 1e6:.2f}M without the "
                  f"two vocabulary matrices)")

        def loss_fn():
            with autocast(device):
                if name == "restricted":
                    nats = model(idx, active, targets)
                else:
                    w, b = model.output_rows(None)
                    nats = masked_full_cross_entropy(model.hidden(idx), w, b, targets, active)
            return nats / targets.numel()

        step_times, fb_times = [], []
        for r in range(args.repeats + 1):  # first = warm-up
            sync(device)
            t0 = time.perf_counter()
            loss = loss_fn()
            if not r:
                first_loss = float(loss.detach())
            opt.zero_grad(set_to_none=True)
            loss.backward()
            sync(device)
            t1 = time.perf_counter()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            sync(device)
            t2 = time.perf_counter()
            if r:
                step_times.append(t2 - t0)
                fb_times.append(t1 - t0)
        results[name] = (statistics.median(step_times), statistics.median(fb_times), first_loss)
        print(f"{name:>10}: step {results[name][0] * 1e3:9.1f} ms  (loss fwd+bwd {results[name][1] * 1e3:9.1f} ms)"
              f"  first loss {results[name][2]:.4f}")
        del model, opt
    (rs, rf, rl), (ms, mf, ml) = results["restricted"], results["masked"]
    print(f"ratio restricted / masked: step {rs / ms:.3f}, forward+backward {rf / mf:.3f} (target <= 0.5)")
    print(f"initial losses equal: {abs(rl - ml) < 1e-3 * max(1.0, abs(ml))} ({rl:.5f} vs {ml:.5f})")


if __name__ == "__main__":
    main()
