"""Pre-token counting at scale: one process vs a 2-worker Dask LocalCluster vs HF's
pre-tokenizer, on >= 1 GB of JSONL.zst built from the pool.

    nice .venv/bin/python bench/count_scale.py [--gb 1.0] [--dir build/count_scale] [--repeats 1]
                                               [--subset-repeats 5] [--scheme llama3]

The corpus (built once, under ``--dir``, never committed): every pool language's
lines, NFC, grouped 8 lines to a JSON document ``{"text": ...}``, written as one
``<lang>.<copy>.jsonl.zst`` shard per language and copy (zstd level 3); copies of
the whole pool are added until the *uncompressed* JSONL reaches ``--gb`` GB.
(Repeating the pool keeps the number of distinct pre-tokens that of the pool:
the counts stay small, so peak memory shows what the streaming costs.)
A manifest ``{lang: ["<dir>/<lang>.*.jsonl.zst"]}`` lists it.

Three runs, each in a fresh subprocess, interleaved (A B C A B C ...):

- ``single``: ``modtok.text.counts.count_corpora`` in one process (streaming);
- ``dask2``:  the same on a ``LocalCluster`` of 2 worker processes (1 thread each),
  one task per shard, the words (arrays) summed in a tree on the workers;
- ``hf``:     the peer: the same streamed units through HF tokenizers'
  ``Split(regex, "isolated").pre_tokenize_str`` into a Counter (one process).

All three must give identical ``{lang: Counter}`` (checked through a digest).
Throughput = UTF-8 MB of text units / wall seconds (the JSONL and compressed
sizes are printed too). Peak RSS = the highest sampled (every 0.1 s) sum of the
resident memory of the run's process and all its descendants (Dask's scheduler,
nannies and workers included). The full corpus runs ``--repeats`` rounds; a
subset (the first copy only, one pool's worth) runs ``--subset-repeats`` rounds.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import platform
import resource
import statistics
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

from _peers import hf_pretoken_counts  # bench/ is on sys.path when a bench runs

RUNS = ("single", "dask2", "hf")
DOC_LINES = 8


def build(directory: Path, pool: str, gb: float) -> Path:
    """Write the shards and manifests (once); return the full manifest's path."""
    import zstandard

    from modtok.text import data

    manifest = directory / "manifest.json"
    stamp = directory / "built.json"
    if stamp.exists() and json.loads(stamp.read_text()).get("gb") == gb:
        return manifest
    directory.mkdir(parents=True, exist_ok=True)
    corpus = data.load_pool(root=pool)
    blobs = {}
    for lang, lines in corpus.items():
        docs = ("\n".join(lines[i : i + DOC_LINES]) for i in range(0, len(lines), DOC_LINES))
        blobs[lang] = "".join(json.dumps({"text": d}, ensure_ascii=False) + "\n" for d in docs).encode()
    per_copy = sum(map(len, blobs.values()))
    copies = math.ceil(gb * 1e9 / per_copy)
    cctx = zstandard.ZstdCompressor(level=3)
    packed = {lang: cctx.compress(blob) for lang, blob in blobs.items()}
    for c in range(copies):
        for lang, blob in packed.items():
            (directory / f"{lang}.{c:03d}.jsonl.zst").write_bytes(blob)
    full = {lang: [f"{lang}.*.jsonl.zst"] for lang in corpus}  # relative to the manifest
    first = {lang: [f"{lang}.000.jsonl.zst"] for lang in corpus}
    manifest.write_text(json.dumps(full, indent=1))
    (directory / "manifest-subset.json").write_text(json.dumps(first, indent=1))
    stamp.write_text(json.dumps({"gb": gb, "copies": copies, "languages": len(corpus),
                                 "jsonl_bytes": per_copy * copies,
                                 "zst_bytes": sum(map(len, packed.values())) * copies,
                                 "subset_jsonl_bytes": per_copy,
                                 "subset_zst_bytes": sum(map(len, packed.values()))}))
    return manifest


class PeakRSS:
    """Highest sum of RSS over this process and its descendants, sampled in a thread."""

    def __init__(self, every: float = 0.1):
        import psutil

        self.me, self.every, self.peak, self._stop = psutil.Process(), every, 0, threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        import psutil

        while not self._stop.is_set():
            total = 0
            for p in [self.me, *self.me.children(recursive=True)]:
                try:
                    total += p.memory_info().rss
                except psutil.Error:
                    pass
            self.peak = max(self.peak, total)
            self._stop.wait(self.every)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()


def digest(by_lang: dict[str, Counter]) -> str:
    h = hashlib.sha256()
    for lang in sorted(by_lang):
        for k, v in sorted(by_lang[lang].items()):
            h.update(f"{lang}\t{k}\t{v}\n".encode())
    return h.hexdigest()[:16]


def _cpu_seconds() -> float:
    """User + system CPU of this process and its waited-for children (Dask's
    worker processes are joined when the cluster closes)."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def run_one(kind: str, manifest: str, scheme: str) -> dict:
    """One measured run (in this process); returns seconds, text MB, peak RSS, digest."""
    from modtok.text.corpus import open_corpus
    from modtok.text.counts import count_corpora, local_client

    corpora = open_corpus(manifest)
    cpu0 = _cpu_seconds()
    with PeakRSS() as rss:
        t = time.perf_counter()
        if kind == "single":
            counts = count_corpora(corpora, scheme).by_lang
        elif kind == "dask2":
            with local_client(2) as client:
                t_start = time.perf_counter() - t
                counts = count_corpora(corpora, scheme, client=client).by_lang
        else:
            counts = hf_pretoken_counts(corpora, scheme)
        seconds = time.perf_counter() - t
    # text size: UTF-8 bytes of the counted units = of the pre-tokens they were cut into
    mb = sum(len(k.encode()) * v for c in counts.values() for k, v in c.items()) / 1e6
    out = {"kind": kind, "seconds": seconds, "cpu_s": _cpu_seconds() - cpu0, "text_mb": mb, "peak_rss_mb": rss.peak / 1e6,
           "digest": digest(counts)}
    if kind == "dask2":
        out["cluster_start_s"] = t_start
    return out


def measure(kind: str, manifest: Path, scheme: str) -> dict:
    cmd = [sys.executable, __file__, "--child", kind, "--manifest", str(manifest), "--scheme", scheme]
    res = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if res.returncode != 0:
        sys.exit(f"{kind} failed:\n{res.stderr[-3000:]}")
    return json.loads(res.stdout.strip().splitlines()[-1])


def rounds(manifest: Path, scheme: str, repeats: int, label: str) -> None:
    results = {k: [] for k in RUNS}
    for r in range(repeats):
        for kind in RUNS:  # interleaved: A B C A B C ...
            res = measure(kind, manifest, scheme)
            results[kind].append(res)
            print(f"  [{label} round {r + 1}] {kind:6s} {res['seconds']:7.1f} s  "
                  f"{res['text_mb'] / res['seconds']:5.2f} MB/s  CPU {res['cpu_s']:6.1f} s  peak RSS {res['peak_rss_mb']:5.0f} MB"
                  + (f"  (cluster start {res['cluster_start_s']:.1f} s, included)" if "cluster_start_s" in res else ""),
                  flush=True)
    digests = {res["digest"] for rs in results.values() for res in rs}
    assert len(digests) == 1, f"counts differ between runs: {digests}"
    mb = results["single"][0]["text_mb"]
    print(f"{label}: {mb:,.1f} MB of text, counts identical in all {repeats * len(RUNS)} runs (digest {digests.pop()})")
    med = {k: statistics.median(r["seconds"] for r in rs) for k, rs in results.items()}
    for kind, rs in results.items():
        secs = [r["seconds"] for r in rs]
        rss = max(r["peak_rss_mb"] for r in rs)
        cpu = statistics.median(r["cpu_s"] for r in rs)
        print(f"  {kind:6s} median {med[kind]:7.1f} s (range {min(secs):.1f}-{max(secs):.1f})  "
              f"{mb / med[kind]:5.2f} MB/s  median CPU {cpu:.1f} s ({mb / cpu:.2f} MB per CPU s)  "
              f"max peak RSS {rss:,.0f} MB")
    print(f"  ratios (time): single/hf {med['single'] / med['hf']:.2f}  dask2/hf {med['dask2'] / med['hf']:.2f}  "
          f"dask2/single {med['dask2'] / med['single']:.2f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gb", type=float, default=1.0, help="uncompressed JSONL size to build (GB)")
    ap.add_argument("--dir", default="build/count_scale")
    ap.add_argument("--pool", default=os.environ.get("MODTOK_POOL", "../shared/data/pool"))
    ap.add_argument("--scheme", default="llama3")
    ap.add_argument("--repeats", type=int, default=1, help="rounds on the full corpus")
    ap.add_argument("--subset-repeats", type=int, default=5, help="rounds on the first copy")
    ap.add_argument("--child", choices=RUNS, help=argparse.SUPPRESS)
    ap.add_argument("--manifest", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(run_one(args.child, args.manifest, args.scheme)))
        return

    directory = Path(args.dir)
    t = time.perf_counter()
    manifest = build(directory, args.pool, args.gb)
    info = json.loads((directory / "built.json").read_text())
    print(f"corpus: {info['languages']} pool languages x {info['copies']} copies = "
          f"{info['jsonl_bytes'] / 1e9:.2f} GB JSONL, {info['zst_bytes'] / 1e9:.2f} GB as .zst "
          f"({time.perf_counter() - t:.0f} s to build or find); scheme {args.scheme}; "
          f"{os.cpu_count()} cores, {platform.machine()}, load average {os.getloadavg()[0]:.1f}", flush=True)
    if args.subset_repeats:
        rounds(directory / "manifest-subset.json", args.scheme, args.subset_repeats,
               f"subset (1 copy, {info['subset_jsonl_bytes'] / 1e6:.0f} MB JSONL)")
    if args.repeats:
        rounds(manifest, args.scheme, args.repeats, f"full ({info['jsonl_bytes'] / 1e9:.2f} GB JSONL)")


if __name__ == "__main__":
    main()
