"""The merge engine's memory on one huge pre-token (issue 43 #14): a line without spaces
under a regex that keeps a run of letters whole (the deployed ones, ``llama3-marks``) is one
word of millions of bytes. The engine reserved pair and chunk rows for every position of a
word at once (5M rows, 1.07 GB for a 5 MB word) and change lists of 2 x its length at every
merge; now it grows them by what the word holds."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

_CHILD = """
from collections import Counter
from modtok.bpe.engine import Engine

def hwm():  # peak resident memory of this process, MB
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmHWM:")) / 1024

eng = Engine.from_counts({"x": Counter({"ab": 1, "abab": 2})})  # kernels loaded: not counted
eng.merge(*eng.best_pair()[:2], 256)
base = hwm()
word = "日本語のテキストを数える" * 60_000  # 2.2 MB of UTF-8, one pre-token
eng = Engine.from_counts({"jpn": Counter({word: 1}), "eng": Counter({"a b": 3})})
for c in range(256, 276):
    a, b, _ = eng.best_pair()
    eng.merge(a, b, c)
print(hwm() - base, len(word.encode()))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="VmHWM: Linux /proc")
def test_one_huge_word_costs_memory_in_proportion_to_its_bytes():
    out = subprocess.run([sys.executable, "-c", _CHILD], capture_output=True, text=True, timeout=300,
                         env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert out.returncode == 0, out.stderr
    grown_mb, nbytes = map(float, out.stdout.split())
    # the word's symbols are 4 bytes a byte; its build and 20 merges took 11 B a byte here
    # (69 MB for 6.1 MB), 200 B a byte before (1.07 GB for 5 MB)
    assert grown_mb < 30 * nbytes / 1e6, f"{grown_mb:.0f} MB for a word of {nbytes / 1e6:.1f} MB"
