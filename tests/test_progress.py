"""modtok.progress: throttled bars whose rate (and ETA) ignores the first step's one-off work."""

import io
import time

from tqdm.auto import tqdm

from modtok import progress


def _rate_after_a_slow_first_step(make) -> float:
    b = make(total=10_000, file=io.StringIO())
    time.sleep(0.4)  # the first step: numba compiling, say
    b.update(1)
    for _ in range(40):
        time.sleep(0.0005)
        b.update(1)
    n, elapsed = b.format_dict["n"], b.format_dict["elapsed"]
    b.close()
    return n / elapsed


def test_the_rate_is_measured_from_the_first_completed_step():
    ours = _rate_after_a_slow_first_step(lambda **kw: progress.bar(**kw))
    plain = _rate_after_a_slow_first_step(lambda **kw: tqdm(**kw))
    assert plain < 150 < ours  # 41 steps in >= 0.4 s against 40 steps of ~1 ms
    eta = (10_000 - 41) / ours
    assert eta < 120  # not the 77 hours a cold start once showed


def test_a_disabled_bar_counts_nothing_and_prints_nothing():
    out = io.StringIO()
    with progress.bar(total=3, enabled=False, file=out) as b:
        b.update(3)
    assert out.getvalue() == ""
