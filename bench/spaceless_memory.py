"""Peak memory of ``modtok sequential-bpe`` on text without spaces (issue 43 #14).

    nice .venv/bin/python bench/spaceless_memory.py [--dir build/spaceless] [-k 1000]
                                                    [--arms spaceless:default,spaced:default,...]

The corpus (built once under ``--dir``, never committed; nothing read from ``../shared``):
pseudo-text from wordfreq lists (:func:`modtok.text.data.load_wordfreq`, seeded), so any
checkout with the ``wordfreq`` package builds the same bytes:

- ``spaceless/``: ``jpn_Jpan.txt`` = one line of 5,000,000 UTF-8 bytes (1.7M characters) of
  Japanese words with nothing between them, only letters (``[\\p{L}\\p{M}]``: one pre-token
  under every letter-run regex), plus ``eng_Latn``, ``deu_Latn``, ``rus_Cyrl`` (8,000
  pseudo-sentences each, 0.5-1 MB);
- ``spaced/``: the same Japanese characters cut into 2-character "words" with a space between
  them, 12 to a line (the "with spaces" reference), and the same three languages.

An arm is ``corpus:scheme``; ``default`` passes no ``--scheme`` (the checkout's own training
default), any other name is passed as ``--scheme``. Each arm runs
``python -m modtok sequential-bpe OUT -k K --manifest M --train-chars 10000000 --force`` in a
fresh process (the budget covers every line: the text trained on is the whole corpus) and
reports the peak PSS summed over it and its counting workers and the main process's peak RSS
(``bench/_memory.py``), and the wall time. Run it in two checkouts (before / after) for a
comparison; the numbers are in bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

from _memory import peak_memory_mb  # bench/ is on sys.path when a bench runs

OTHERS = ("eng_Latn", "deu_Latn", "rus_Cyrl")
LINE_BYTES = 5_000_000


def build(directory: Path) -> dict[str, Path]:
    """Write both corpora and their manifests (once); ``{corpus: manifest path}``."""
    import regex

    from modtok.text.data import load_wordfreq

    manifests = {name: directory / name / "manifest.json" for name in ("spaceless", "spaced")}
    if all(m.exists() for m in manifests.values()):
        return manifests
    words_per_line, not_letter = 12, regex.compile(r"[^\p{L}\p{M}]")
    rows = load_wordfreq(["jpn_Jpan"], n_lines=200_000, words_per_line=words_per_line, seed=0)["jpn_Jpan"]
    kept = []  # rows joined without spaces until the line has LINE_BYTES bytes
    size = 0
    for row in rows:
        row = not_letter.sub("", row)
        size += len(row.encode())
        kept.append(row)
        if size >= LINE_BYTES:
            break
    line = "".join(kept).encode()[:LINE_BYTES].decode("utf-8", "ignore")
    others = load_wordfreq(list(OTHERS), n_lines=8000, seed=1)
    spaced_rows = []  # the same characters, a space every 2 of them, 12 such words a line
    for i in range(0, len(line), 24):
        spaced_rows.append(" ".join(line[j : j + 2] for j in range(i, min(i + 24, len(line)), 2)))
    texts = {"spaceless": {"jpn_Jpan": [line]}, "spaced": {"jpn_Jpan": spaced_rows}}
    for name, corpus in texts.items():
        d = directory / name
        d.mkdir(parents=True, exist_ok=True)
        for lang, lines in {**corpus, **others}.items():
            (d / f"{lang}.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
        manifests[name].write_text(json.dumps({lang: [f"{lang}.txt"] for lang in ["jpn_Jpan", *OTHERS]}))
    return manifests


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", default="build/spaceless")
    ap.add_argument("-k", type=int, default=1000)
    ap.add_argument("--arms", default="spaceless:default,spaceless:llama3-marks,spaced:default")
    args = ap.parse_args()
    directory = Path(args.dir)
    manifests = build(directory)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    print(f"checkout {commit}; {platform.machine()}, {os.cpu_count()} CPUs; k = {args.k}")
    print(f"{'arm':<28} {'peak PSS (MB)':>14} {'main peak RSS (MB)':>19} {'wall (s)':>9}")
    for arm in args.arms.split(","):
        corpus, scheme = arm.split(":")
        argv = [sys.executable, "-m", "modtok", "sequential-bpe", str(directory / f"out-{corpus}-{scheme}"),
                "-k", str(args.k), "--manifest", str(manifests[corpus]), "--train-chars", "10000000", "--force"]
        argv += [] if scheme == "default" else ["--scheme", scheme]
        start = time.perf_counter()
        pss, rss = peak_memory_mb(argv)
        print(f"{arm:<28} {pss:>14.0f} {rss:>19.0f} {time.perf_counter() - start:>9.1f}", flush=True)


if __name__ == "__main__":
    main()
