"""Inference with a compact (extracted) vocabulary vs the full vocabulary, at three widths.

Synthetic setting (ids only): a full model over 26 x 8000 = 208,000 ids (+1
boundary) and the compact model cut from it for one language's 8,000 ids (+1
boundary) with :func:`modtok.lm.infer.slice_vocab` (the compact model's logits
equal the full model's logits restricted to those ids). Widths d_model 128,
256, 512 with 4 layers, heads of 64 channels (GQA with 2 kv heads where
possible). Forward = logits over the model's whole vocabulary for a batch of
4 x 128 token ids drawn uniformly from the compact vocabulary (seed 0); median
of 5 runs after one warm-up, in eval mode under torch.no_grad.

    python bench/lm_infer.py
    MODTOK_SMOKE=1 python bench/lm_infer.py   # 26 x 1000 ids
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
import torch

from modtok.lm.infer import slice_vocab
from modtok.lm.model import LM, LMConfig
from modtok.lm.train import autocast, default_device
from modtok.text.data import is_smoke


def timed_forward(model, idx, repeats, device):
    times = []
    with torch.no_grad(), autocast(device):
        for r in range(repeats + 1):
            if device.type == "cuda":
                torch.cuda.synchronize()
            t0 = time.perf_counter()
            model.logits(idx)
            if device.type == "cuda":
                torch.cuda.synchronize()
            if r:
                times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--per-lang", type=int, default=1000 if is_smoke() else 8000)
    ap.add_argument("--langs", type=int, default=26)
    ap.add_argument("--widths", type=int, nargs="+", default=[128, 256, 512])
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--seq", type=int, default=128)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--threads", type=int, default=None)
    args = ap.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    device = default_device()
    V = args.langs * args.per_lang + 1
    rows = np.append(np.arange(args.per_lang * 3, args.per_lang * 4), V - 1)  # one language + boundary
    print(f"device {device} ({torch.get_num_threads()} threads), torch {torch.__version__}; "
          f"full vocabulary {V:,} rows, compact {len(rows):,} rows; batch {args.batch} x {args.seq}")
    print(f"{'d_model':>7} {'model':>8} {'params (M)':>11} {'param MB':>9} {'forward ms':>11} {'speed-up':>9}")
    g = torch.Generator().manual_seed(0)
    idx = torch.randint(len(rows), (args.batch, args.seq), generator=g).to(device)  # compact (local) ids
    for d in args.widths:
        heads = max(1, d // 64)
        cfg = LMConfig(vocab_size=V, d_model=d, n_layers=4, n_heads=heads,
                       n_kv_heads=2 if heads % 2 == 0 else None, max_seq_len=args.seq)
        torch.manual_seed(0)
        full = LM(cfg).to(device).eval()
        compact = slice_vocab(full, rows)
        t_full = timed_forward(full, torch.as_tensor(rows, device=device)[idx], args.repeats, device)
        t_small = timed_forward(compact, idx, args.repeats, device)
        for name, m, t in (("full", full, t_full), ("compact", compact, t_small)):
            n = m.num_params()
            print(f"{d:>7} {name:>8} {n / 1e6:>11.2f} {n * 4 / 2**20:>9.1f} {t * 1e3:>11.1f} "
                  f"{(t_full / t if name == 'compact' else 1.0):>8.1f}x")
        del full, compact


if __name__ == "__main__":
    main()
