"""Progress bars, throttled: the one way modtok shows progress on long work.

Only when a caller asks (``progress=True``). In a terminal a bar redraws at
most twice a second; when stderr is a file or a pipe (a CI or cluster log) at
most every 30 s, so a long run leaves a few lines, not one per merge (a
26-language sequential BPE once wrote 187,000). In a Jupyter kernel
``tqdm.auto`` shows a widget. A disabled bar is tqdm's no-op, so callers never
branch on it.

The rate, and so the ETA, is measured from the first completed step on: the first
step of a fresh process carries one-off work (numba compiles the merge kernel on
the first merge, 30 s on a cold cache), and counted from the start it once showed
an ETA of 77 hours for a 2-minute run.

>>> with bar(total=3, enabled=False) as b:
...     b.update(3)
"""

from __future__ import annotations

import sys

TERMINAL_INTERVAL = 0.5  # seconds between redraws in a terminal or a notebook
LOG_INTERVAL = 30.0  # ... when stderr is a file or a pipe


def _interactive() -> bool:
    return "ipykernel" in sys.modules or (hasattr(sys.stderr, "isatty") and sys.stderr.isatty())


def _bar_class():
    """``tqdm.auto``'s class (terminal or notebook) whose clock starts after the first step."""
    from tqdm.auto import tqdm

    class Bar(tqdm):
        _warm = False

        def update(self, n=1):
            if self._warm or self.disable:
                return super().update(n)
            self._warm = True  # the first step: counted, not timed
            self.n += n
            self.start_t = self.last_print_t = self._time()
            self.last_print_n = self.n
            return True

    return Bar


def bar(iterable=None, *, total: int | None = None, desc: str = "", enabled: bool = True, **kw):
    """A ``tqdm.auto`` bar (``disable=not enabled``) with the throttle above, timed from its
    first completed step.

    Update it with ``update(n)`` (``refresh()`` would redraw at every call)."""
    interval = TERMINAL_INTERVAL if _interactive() else LOG_INTERVAL
    return _bar_class()(iterable, total=total, desc=desc, disable=not enabled, mininterval=interval,
                        maxinterval=max(interval, 10.0), **kw)
