"""Pre-token counting throughput: modtok vs HF tokenizers' pre-tokenizer, same text.

    .venv/bin/python bench/pretokenize.py [--scheme llama3] [--pool DIR] [--max-chars N]

Both sides produce {pre-token: count} for every line of every pool language and
must agree exactly. HF has no counting API, so its side is the natural use:
``Split(regex).pre_tokenize_str(line)`` per line into a Counter (one core; the
Rust pre-tokenizer is called once per line from Python). modtok uses
``count_pretokens`` (the ``regex`` module, lines split across all cores).
"""

from __future__ import annotations

import argparse
import os
import platform
import time

from _peers import hf_pretoken_counts  # bench/ is on sys.path when a bench runs

from modtok.text import data
from modtok.text.pretokenize import count_pretokens


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scheme", default="llama3")
    ap.add_argument("--pool", default=os.environ.get("MODTOK_POOL", "../shared/data/pool"))
    ap.add_argument("--max-chars", type=int, default=None, help="cap per language")
    args = ap.parse_args()

    corpus = data.load_pool(root=args.pool, max_chars=args.max_chars)
    n_chars = sum(data.chars_per_language(corpus).values())
    n_bytes = sum(len(line.encode()) for lines in corpus.values() for line in lines)
    print(f"{len(corpus)} languages, {n_chars:,} chars, {n_bytes / 1e6:.1f} MB UTF-8, "
          f"scheme {args.scheme}, {os.cpu_count()} cores, {platform.processor() or platform.machine()}")

    t = time.perf_counter()
    ours = {lang: count_pretokens(lines, args.scheme, workers=os.cpu_count() or 1) for lang, lines in corpus.items()}
    t_ours = time.perf_counter() - t

    t = time.perf_counter()
    theirs = hf_pretoken_counts(corpus, args.scheme)
    t_hf = time.perf_counter() - t

    assert ours == theirs, "pre-token counts differ"
    print(f"modtok count_pretokens : {t_ours:6.2f} s  {n_bytes / 1e6 / t_ours:6.1f} MB/s")
    print(f"HF Split pre-tokenizer : {t_hf:6.2f} s  {n_bytes / 1e6 / t_hf:6.1f} MB/s")
    print(f"ratio modtok/HF time   : {t_ours / t_hf:.2f}  (speed-up {t_hf / t_ours:.2f}x)")


if __name__ == "__main__":
    main()
