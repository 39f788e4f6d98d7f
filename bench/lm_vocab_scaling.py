"""Training step vs total vocabulary: the host store (§6.4) against device-resident vocabulary.

Total vocabularies of 26, 100 and 250 languages x 8000 rows (+1 LM boundary id),
random initialisation, the same model body (d_model 64, 2 layers, 4 heads / 2 kv
heads). Language i owns ids [i*8000, (i+1)*8000); the 256 byte ids [0, 256) are
in every language. Batches are the library's own: ``BatchSource`` with the
Samp_Sub_2(p=1) sampler over a uniform mixture of all languages (every batch:
own language + 2 others, about 24,001 active ids), drawn per step from seed 0;
a synthetic tokenizer turns each line into 24 ids drawn from the active set.

Each step is ``modtok.lm.train.train_step`` (the training loop's step: with the
host store, rows gathered, forward/backward/clip/AdamW on the body, row grads
returned, row-sparse AdamW on the host). The two configurations of one size
run interleaved, step by step (ABAB...), after two warm-up steps each.

Reported per size: median step time and range, and the device-resident
parameter + optimizer bytes: without the host store, both vocabulary matrices,
the body and AdamW's two moments of each; with it, the body, its moments and
one step's active rows with their gradients. On CUDA, the peak allocated device
memory too, and the host-side transfer (gather) and update seconds per step
(the columns of Table 21). The last line is ``step(250)/step(26) = X`` for the
host store.

    python bench/lm_vocab_scaling.py --threads 1        # a few minutes, ~8 GB of RAM at 250 languages
    MODTOK_SMOKE=1 python bench/lm_vocab_scaling.py     # 1000 rows per language, seconds
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
import zlib
from dataclasses import replace

import numpy as np
import torch

from modtok.lm.batches import BatchSource, lm_vocab_size
from modtok.lm.model import LMConfig
from modtok.lm.offload import device_bytes
from modtok.lm.sampling import SubtokenizerSampler, samp_sub
from modtok.lm.train import TrainConfig, setup_run, train_step, default_device, lr_at
from modtok.text.data import is_smoke


class SyntheticTokenizer:
    """``n_langs`` languages of ``per_lang`` ids each (language 0's block holds the 256 byte ids, which
    every language shares); a line encodes to ``tokens_per_line`` ids drawn, seeded by the line, from
    the union's ids."""

    def __init__(self, n_langs: int, per_lang: int, tokens_per_line: int = 24):
        self.vocab_size = n_langs * per_lang
        self.languages = [f"l{i:03d}_Synt" for i in range(n_langs)]
        self._block = {lang: i for i, lang in enumerate(self.languages)}
        self.per_lang, self.n = per_lang, tokens_per_line
        self.tokenizer_json = {"synthetic": [n_langs, per_lang, tokens_per_line]}

    def ids(self, langs) -> np.ndarray:
        blocks = [np.arange(256)] + [np.arange(self._block[x] * self.per_lang, (self._block[x] + 1) * self.per_lang)
                                     for x in langs]
        return np.unique(np.concatenate(blocks))

    def encode_batch(self, lines, langs):
        pool = self.ids(langs) if langs is not None else np.arange(self.vocab_size)
        return [np.random.default_rng(zlib.crc32(line.encode())).choice(pool, self.n).tolist() for line in lines]


WARMUP = 2  # untimed steps per configuration (AdamW state, allocator, kernel caches)


def sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize()


def resident_bytes(run, rows_k: int) -> int:
    """Parameters + AdamW moments on the device (+ one step's active rows and their grads with the store)."""
    n = device_bytes(run.model, run.opt)  # measured after the warm-up step (AdamW's moments exist)
    if run.pipe is not None:
        n += 2 * 2 * rows_k * run.model_cfg.d_model * 4  # embed + out rows, values + grads (fp32)
    return n


def measure(n_langs: int, repeats: int, args, device, delay: int) -> dict:
    """``{store: (step seconds, report line)}`` for one total vocabulary, the two stores interleaved."""
    tok = SyntheticTokenizer(n_langs, args.per_lang)
    corpus = {lang: [f"{lang} line {i}" for i in range(64)] for lang in tok.languages}
    sampler = SubtokenizerSampler(samp_sub(2, 1.0), {lang: 1.0 for lang in tok.languages}, seed=0)
    source = BatchSource(tok, corpus, sampler, args.batch, args.seq, seed=0)
    model_cfg = LMConfig(vocab_size=lm_vocab_size(tok), d_model=64, n_layers=2, n_heads=4, n_kv_heads=2,
                         max_seq_len=args.seq)
    cfg = TrainConfig(steps=repeats + WARMUP, warmup_steps=1)
    runs = {}
    with tempfile.TemporaryDirectory() as tmp:
        for store in ("device", "host"):
            run_cfg = replace(cfg, vocab_store=store, update_delay=delay if store == "host" else 0)
            runs[store] = setup_run(model_cfg, run_cfg, source, tmp, device, distributed=False)
    batches = [source.batch(s) for s in range(repeats + WARMUP + 1)]
    times = {k: [] for k in runs}
    peak = dict.fromkeys(runs, 0)
    for s in range(repeats + WARMUP):  # ABAB..., the first WARMUP steps are not timed
        for store, run in runs.items():
            if device.type == "cuda":
                torch.cuda.reset_peak_memory_stats(device)
            sync(device)
            t0 = time.perf_counter()
            nats, _ = train_step(run, batches[s], batches[s + 1], lr_at(s, run.cfg), first=s == 0)
            float(nats)
            sync(device)
            if s >= WARMUP:
                times[store].append(time.perf_counter() - t0)
            if device.type == "cuda":
                peak[store] = max(peak[store], torch.cuda.max_memory_allocated(device))
    rows_k = int(batches[0].active_ids.numel())
    out = {}
    for store, run in runs.items():
        t = times[store]
        host = run.pipe.seconds if run.pipe is not None else {"gather": 0.0, "update": 0.0}
        per = repeats + WARMUP
        line = (f"{n_langs:>9} {model_cfg.vocab_size:>10,} {store:>6} "
                f"{statistics.median(t) * 1e3:>10.1f} ({min(t) * 1e3:7.1f} - {max(t) * 1e3:7.1f})"
                f" {resident_bytes(run, rows_k) / 2**20:>10.1f} {peak[store] / 2**20:>8.1f}"
                f" {host['gather'] / per * 1e3:>9.1f} {host['update'] / per * 1e3:>9.1f}")
        out[store] = (t, line)
        if run.pipe is not None:
            run.pipe.close()
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--per-lang", type=int, default=1000 if is_smoke() else 8000)
    ap.add_argument("--sizes", type=int, nargs="+", default=[26, 100, 250])
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--seq", type=int, default=128)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--delay", type=int, default=None, help="host store update delay (default: 1 on CUDA, 0 on CPU)")
    ap.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: torch's choice)")
    args = ap.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    device = default_device()
    delay = args.delay if args.delay is not None else int(device.type == "cuda")
    print(f"device {device} ({torch.get_num_threads()} threads), torch {torch.__version__}; "
          f"Samp_Sub_2(1) batches of {args.batch} x {args.seq}; host store update delay {delay}")
    print(f"{'languages':>9} {'rows':>10} {'store':>6} {'step ms (median, range)':>28} {'device MB':>10}"
          f" {'peak MB':>8} {'gather ms':>9} {'update ms':>9}")
    measure(min(args.sizes), 2, args, device, delay)  # process warm-up (first-use costs), not reported
    steps = {}
    for n_langs in args.sizes:
        for store, (t, line) in measure(n_langs, args.repeats, args, device, delay).items():
            steps[(n_langs, store)] = statistics.median(t)
            print(line)
    lo, hi = min(args.sizes), max(args.sizes)
    for store in ("device", "host"):
        print(f"{store:>6}: step({hi})/step({lo}) = {steps[(hi, store)] / steps[(lo, store)]:.3f}")
    print(f"step({hi})/step({lo}) = {steps[(hi, 'host')] / steps[(lo, 'host')]:.3f}")


if __name__ == "__main__":
    main()
