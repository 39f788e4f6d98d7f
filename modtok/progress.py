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

A widget panel shows progress in its own status line, not as a bar: inside
:func:`reporting` every bar, enabled or not, sends its one-line text (no bar glyphs)
to a callback instead (a panel's function calls library code headless-style, without
``progress=True``, and a bar drawn from a widget callback would land in Lab's log,
not in the notebook). Bars open at once (an AdaptMix iteration's BPE merges inside
the AdaptMix loop) show one per line, outermost first:

>>> shown = []
>>> with reporting(shown.append, interval=0):
...     for _ in bar(range(2), desc="AdaptMix", enabled=False):
...         pass
>>> [line[:19] for line in shown]
['AdaptMix:   0% 0/2 ', 'AdaptMix:  50% 1/2 ', 'AdaptMix: 100% 2/2 ', '']
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from contextlib import contextmanager
from contextvars import ContextVar
from functools import cache

TERMINAL_INTERVAL = 0.5  # seconds between redraws in a terminal or a notebook
LOG_INTERVAL = 30.0  # ... when stderr is a file or a pipe


def _interactive() -> bool:
    return "ipykernel" in sys.modules or (hasattr(sys.stderr, "isatty") and sys.stderr.isatty())


def _bar_class(base=None):
    """``tqdm.auto``'s class (terminal or notebook), or ``base``, whose clock starts after the first step."""
    if base is None:
        from tqdm.auto import tqdm as base

    class Bar(base):
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


class _Sink:
    """Where a reported bar's tqdm writes (nothing: its text goes to the reporter)."""

    def write(self, text: str) -> None:
        pass

    def flush(self) -> None:
        pass


class _Reporter:
    """The bars open inside one :func:`reporting` block, and where their text goes."""

    def __init__(self, show: Callable[[str], None], interval: float):
        self.show, self.interval, self.open = show, interval, []

    def draw(self) -> None:
        self.show("\n".join(b.format_meter(**{**b.format_dict, "ncols": 0}) for b in self.open))

    def bar(self, iterable, total, desc, kw):
        kw = {k: v for k, v in kw.items() if k != "file"}
        b = _reported_class()(iterable, total=total, desc=desc, file=_Sink(), mininterval=self.interval,
                              maxinterval=max(self.interval, 10.0), **kw)
        b.reporter = self
        self.open.append(b)
        self.draw()
        return b


@cache
def _reported_class():
    """A plain (``tqdm.std``) bar that draws through its :class:`_Reporter`."""
    from tqdm.std import tqdm

    class Reported(_bar_class(tqdm)):
        monitor_interval = 0  # no tqdm monitor thread: the caller's thread draws
        reporter = None  # set right after construction (tqdm draws once in __init__: skipped)

        def display(self, msg=None, pos=None):
            if self.reporter is not None and self in self.reporter.open:
                self.reporter.draw()
            return True

        def update(self, n=1):
            warm = self._warm
            shown = super().update(n)
            if not warm:  # the first step is counted without a redraw (see Bar); show it
                self.display()
            return shown

        def close(self):
            if self.reporter is not None and self in self.reporter.open:
                self.reporter.open.remove(self)
                self.reporter.draw()
            super().close()

    return Reported


_REPORTER: ContextVar[_Reporter | None] = ContextVar("modtok_progress_reporter", default=None)


@contextmanager
def reporting(show: Callable[[str], None], interval: float | None = None):
    """Send the text of every bar opened inside (one line per open bar, outermost
    first; ``""`` once none is open) to ``show``, at most every ``interval`` seconds
    per bar (default :data:`TERMINAL_INTERVAL`). :class:`modtok.ui.widgets.Panel` shows
    it in its status line."""
    token = _REPORTER.set(_Reporter(show, TERMINAL_INTERVAL if interval is None else interval))
    try:
        yield
    finally:
        _REPORTER.reset(token)


def bar(iterable=None, *, total: int | None = None, desc: str = "", enabled: bool = True, **kw):
    """A ``tqdm.auto`` bar (``disable=not enabled``) with the throttle above, timed from its
    first completed step; inside :func:`reporting`, a bar that reports its text there.

    Update it with ``update(n)`` (``refresh()`` would redraw at every call)."""
    reporter = _REPORTER.get()
    if reporter is not None:
        return reporter.bar(iterable, total, desc, kw)
    interval = TERMINAL_INTERVAL if _interactive() else LOG_INTERVAL
    return _bar_class()(iterable, total=total, desc=desc, disable=not enabled, mininterval=interval,
                        maxinterval=max(interval, 10.0), **kw)
