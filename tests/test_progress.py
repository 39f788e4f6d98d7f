"""modtok.progress: throttled bars whose rate (and ETA) ignores the first step's one-off work."""

import io
import time

from tqdm.auto import tqdm

from modtok import progress


def _rate_after_a_slow_first_step(make) -> tuple[float, float]:
    """The bar's rate after a 0.4 s first step and 40 quick ones; and how long the 40 took."""
    b = make(total=10_000, file=io.StringIO())
    time.sleep(0.4)  # the first step: numba compiling, say
    b.update(1)
    t = time.perf_counter()
    for _ in range(40):
        time.sleep(0.0005)
        b.update(1)
    quick = time.perf_counter() - t
    n, elapsed = b.format_dict["n"], b.format_dict["elapsed"]
    b.close()
    return n / elapsed, quick


def test_the_rate_is_measured_from_the_first_completed_step():
    # Bounds relative to the time measured here, not to a fixed speed: on a loaded machine the
    # 40 quick steps may take 10x longer, and the property still holds.
    ours, quick = _rate_after_a_slow_first_step(lambda **kw: progress.bar(**kw))
    plain, _ = _rate_after_a_slow_first_step(lambda **kw: tqdm(**kw))
    assert plain <= 41 / 0.4  # tqdm counts the slow first step in its elapsed time
    assert ours >= 0.5 * 40 / quick  # ours: the quick steps' own rate (half of it, for timer slack)
    assert ours > plain


def test_a_disabled_bar_counts_nothing_and_prints_nothing():
    out = io.StringIO()
    with progress.bar(total=3, enabled=False, file=out) as b:
        b.update(3)
    assert out.getvalue() == ""
