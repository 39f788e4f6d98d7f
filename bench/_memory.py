"""Peak memory of a command and the processes it starts, as a user's machine feels it.

A forked child's RSS counts every page it shares with its parent, so "peak RSS of a
forked child" charges each arm with the bench's own memory at the fork (issue 23's
first figures: 1414 vs 1189 MB, from a parent at 1.5 GB). Here each arm is a fresh
process; every ``interval`` seconds the PSS (proportional set size: a page shared by n
processes counts 1/n in each) of the process and of all its descendants (modtok's
counting workers) is read from ``/proc/<pid>/smaps_rollup`` and summed. The peak of
that sum is the memory the whole job held at once; the main process's own peak RSS
(``VmHWM``, the high-water mark of its memory after ``exec``; ``ru_maxrss`` would also
count the bench's pages that the fork copied before the ``exec``) is returned beside it.
Linux only.
"""

from __future__ import annotations

import os
import subprocess
import time


def _field_kb(path: str, field: str) -> int:
    """The ``field:  N kB`` line of a /proc file; 0 once the process has ended."""
    try:
        with open(path) as f:
            for line in f:
                if line.startswith(field):
                    return int(line.split()[1])
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        pass  # the process ended between the listing and the read
    return 0


def _descendants(root: int) -> list[int]:
    """``root`` and every process below it (parent links read from ``/proc/*/stat``)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (FileNotFoundError, ProcessLookupError, IndexError, ValueError):
            continue
        children.setdefault(ppid, []).append(int(entry))
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo.extend(children.get(pid, ()))
    return out


class Stopped(Exception):
    """The command ran past ``until`` and was stopped (its tree sent SIGTERM); ``peak_mb``: the
    peak PSS until then."""

    def __init__(self, peak_mb: float):
        super().__init__(f"stopped at the deadline (peak {peak_mb:,.0f} MB so far)")
        self.peak_mb = peak_mb


def peak_memory_mb(argv: list[str], interval: float = 0.05, until: float | None = None) -> tuple[float, float]:
    """Run ``argv``; return ``(peak PSS summed over it and its descendants, peak RSS of
    the main process)`` in MB. The command must exit 0. ``until`` (a ``time.time()``): past it,
    the command and its descendants are ended and :class:`Stopped` is raised."""
    proc = subprocess.Popen(argv)
    peak = hwm = 0
    while proc.poll() is None:
        tree = _descendants(proc.pid)
        peak = max(peak, sum(_field_kb(f"/proc/{p}/smaps_rollup", "Pss:") for p in tree))
        hwm = max(hwm, _field_kb(f"/proc/{proc.pid}/status", "VmHWM:"))
        if until is not None and time.time() > until:
            for pid in reversed(tree):  # the workers first, the command last
                try:
                    os.kill(pid, 15)
                except ProcessLookupError:
                    pass
            proc.wait()
            raise Stopped(peak / 1024)
        time.sleep(interval)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} exited with {proc.returncode}")
    return peak / 1024, hwm / 1024
