"""Atomic file writes: a failed run never leaves a partial artifact.

Every artifact modtok writes (tokenizer files, checkpoints, metrics logs,
caches, counts) goes through :func:`atomic_write`: the content is written to a
temp file in the *same directory* (so the final rename stays on one
filesystem), flushed, and renamed over the target with ``os.replace``, which
is atomic on POSIX and Windows. If anything raises, the temp file is removed
and the old target (if any) is untouched.

>>> import tempfile, pathlib
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> with atomic_write(d / "a.txt") as f:
...     _ = f.write("hello")
>>> (d / "a.txt").read_text()
'hello'
>>> try:
...     with atomic_write(d / "a.txt") as f:
...         _ = f.write("half")
...         raise RuntimeError("crash")
... except RuntimeError:
...     pass
>>> (d / "a.txt").read_text(), sorted(p.name for p in d.iterdir())
('hello', ['a.txt'])
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from modtok.errors import ConfigError


@contextmanager
def atomic_write(path, mode: str = "w", encoding: str | None = "utf-8") -> Iterator:
    """Open a temp file beside ``path`` for writing; rename it over ``path`` on success.

    ``mode`` is ``"w"`` (text, ``encoding``) or ``"wb"`` (bytes). Parent
    directories are created. The file gets mode 0o644 (mkstemp's default is 0o600).
    """
    if mode not in ("w", "wb"):
        raise ConfigError(f"atomic_write mode must be 'w' or 'wb', not {mode!r}")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, mode, encoding=None if "b" in mode else encoding) as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def write_text(path, text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically."""
    with atomic_write(path) as f:
        f.write(text)
    return Path(path)


def write_bytes(path, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically."""
    with atomic_write(path, "wb") as f:
        f.write(data)
    return Path(path)


def write_json(path, obj, **kw) -> Path:
    """Write ``obj`` as JSON (UTF-8, ``ensure_ascii=False``) to ``path`` atomically."""
    with atomic_write(path) as f:
        json.dump(obj, f, ensure_ascii=False, **kw)
    return Path(path)
