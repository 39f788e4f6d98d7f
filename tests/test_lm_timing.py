"""modtok.lm.infer.full_vs_compact_timing: the rows notebook 04 tabulates."""

import math

import numpy as np
from lm_helpers import one_torch_thread  # noqa: F401 (autouse fixture)

from modtok.lm.infer import full_vs_compact_timing
from modtok.lm.model import LM, LMConfig


def test_rows_compare_the_full_and_the_compact_model_at_each_width():
    rows = np.append(np.arange(50), 299)  # 51 of 300 vocabulary rows
    out = full_vs_compact_timing(300, rows, [32, 64], "toy", batch=2, seq=16, repeats=1)
    assert [(r["d_model"], r["model"], r["vocab rows"]) for r in out] == [
        (32, "full", 300), (32, "compact", 51), (64, "full", 300), (64, "compact", 51)]
    for full, compact in zip(out[::2], out[1::2]):
        d = full["d_model"]
        cfg = dict(d_model=d, n_layers=4, n_heads=1, max_seq_len=16)
        per_row = LM(LMConfig(vocab_size=2, **cfg)).num_params() - LM(LMConfig(vocab_size=1, **cfg)).num_params()
        # oracle: the compact model drops exactly the parameters of 249 vocabulary rows
        assert round((full["params (M)"] - compact["params (M)"]) * 1e6) == 249 * per_row
        assert math.isclose(full["param MB"], full["params (M)"] * 1e6 * 4 / 2**20)
        assert full["forward ms"] > 0 and compact["forward ms"] > 0 and full["vocabulary"] == "toy"
