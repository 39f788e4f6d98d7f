"""Counting + training end to end, before and after counting ran on the lexer (issue 44).

    .venv/bin/python bench/lexer_train.py --before DIR [--repeats 3] [--chars 1000000] [--vocab 32000]

The workload of ``bench/peers.py`` [1]: 8 pool languages (``peers.LANGS8``), ``--chars`` each,
all lines in one list, standard byte-level BPE to ``--vocab`` with ``llama3``, counting on
every core. Three arms, each a fresh process (two versions of modtok cannot share one),
interleaved ``--repeats`` times after one untimed warm-up each (numba's caches):

- ``before``: ``DIR``'s modtok (a ``git worktree`` of the code before the wiring):
  ``standard.train(count_pretokens(lines, scheme, workers), vocab)``, counting with ``regex``;
- ``counter``: the same call on this checkout (``count_pretokens`` now runs the lexer);
- ``arrays``: this checkout's ``standard.train(count_arrays({"all": lines}, scheme, workers))``
  (the engine reads the lexer's UTF-8 arrays: no string per pre-token).

Each arm reports wall and CPU seconds (this process and its finished workers) of counting
and of training; the three must learn the same merges (their SHA-256 is compared). Medians
and ranges, the ratios to ``before``, and ``/proc/loadavg`` before each round.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ARMS = ("before", "counter", "arrays")
LANGS8 = ["eng_Latn", "deu_Latn", "tur_Latn", "vie_Latn", "rus_Cyrl", "ell_Grek", "npi_Deva", "tel_Telu"]  # peers.py's


def cpu() -> float:
    """CPU seconds of this process and its finished children (the counting workers)."""
    return sum(resource.getrusage(who).ru_utime + resource.getrusage(who).ru_stime
               for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))


def arm(name: str, chars: int, vocab: int) -> dict:
    """One arm in this process: counting then training; times and the merges' hash."""
    from modtok.bpe import standard
    from modtok.text import data
    from modtok.text.pretokenize import count_pretokens

    corpus = data.load_pool(LANGS8, max_chars=chars)
    lines = [line for ls in corpus.values() for line in ls]
    workers = os.cpu_count() or 1
    w0, c0 = time.perf_counter(), cpu()
    if name == "arrays":
        from modtok.text.pretokenize import count_arrays

        counts = count_arrays({"all": lines}, "llama3", workers=workers)
    else:
        counts = count_pretokens(lines, "llama3", workers=workers)
    w1, c1 = time.perf_counter(), cpu()
    model = standard.train(counts, vocab, "llama3")
    w2, c2 = time.perf_counter(), cpu()
    digest = hashlib.sha256(json.dumps([list(m) for m in model.merges]).encode()).hexdigest()[:16]
    return {"count_wall": w1 - w0, "count_cpu": c1 - c0, "train_wall": w2 - w1, "train_cpu": c2 - c1,
            "mb": sum(len(line.encode()) for line in lines) / 1e6, "merges": len(model.merges), "sha": digest}


def run_arm(name: str, before: Path, chars: int, vocab: int) -> dict:
    root = before if name == "before" else HERE.parent
    env = {**os.environ, "PYTHONPATH": str(root)}
    out = subprocess.run([sys.executable, __file__, "--arm", name, "--chars", str(chars), "--vocab", str(vocab)],
                         env=env, cwd=root, capture_output=True, text=True, check=True, timeout=1800)
    return json.loads(out.stdout.strip().splitlines()[-1])


def med(values: list[float]) -> str:
    return f"{statistics.median(values):7.2f} [{min(values):.2f}-{max(values):.2f}]"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", type=Path, help="a checkout of the code before the wiring")
    ap.add_argument("--arm", choices=ARMS, help=argparse.SUPPRESS)
    ap.add_argument("--chars", type=int, default=1_000_000)
    ap.add_argument("--vocab", type=int, default=32000)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    if args.arm:
        print(json.dumps(arm(args.arm, args.chars, args.vocab)))
        return
    for name in ARMS:  # untimed: fills numba's caches in both checkouts
        run_arm(name, args.before, 10_000, 300)
    results: dict[str, list[dict]] = {name: [] for name in ARMS}
    for r in range(args.repeats):
        print(f"round {r + 1}: load {open('/proc/loadavg').read().split()[0]}", flush=True)
        for name in ARMS:
            results[name].append(run_arm(name, args.before, args.chars, args.vocab))
    first = results["before"][0]
    print(f"{first['mb']:.1f} MB, vocab {args.vocab}, {first['merges']} merges, {os.cpu_count()} cores")
    assert len({res["sha"] for rs in results.values() for res in rs}) == 1, "the arms learned different merges"
    print(f"{'arm':8} {'count wall s':>20} {'count CPU s':>20} {'train wall s':>20} {'train CPU s':>20}"
          f" {'total wall s':>20} {'count CPU MB/s':>15}")
    total = {name: [r["count_wall"] + r["train_wall"] for r in rs] for name, rs in results.items()}
    for name, rs in results.items():
        keys = ("count_wall", "count_cpu", "train_wall", "train_cpu")
        print(f"{name:8} " + " ".join(f"{med([r[k] for r in rs]):>20}" for k in keys)
              + f" {med(total[name]):>20} {first['mb'] / statistics.median([r['count_cpu'] for r in rs]):15.1f}")
    for name in ARMS[1:]:
        ratios = [statistics.median([r[k] for r in results[name]]) / statistics.median([r[k] for r in results["before"]])
                  for k in ("count_wall", "count_cpu", "train_wall")]
        print(f"{name}/before: counting wall {ratios[0]:.2f}, counting CPU {ratios[1]:.2f}, training wall "
              f"{ratios[2]:.2f}, total wall {statistics.median(total[name]) / statistics.median(total['before']):.2f}")
    print(f"merges identical in every arm and round (sha {first['sha']}); load at the end "
          f"{open('/proc/loadavg').read().split()[0]}")


if __name__ == "__main__":
    main()
