"""The results cache: a study's expensive results kept on disk, keyed by all they depend on.

A notebook's trainings, LM runs, AdaptMix loops and evaluations are computed once and then
read back, by the next Run All, by ``make demo`` for a class that opens the notebooks later,
by a second kernel. A result is served only when everything it depends on is the same:

- **the data**: the text itself, hashed (:func:`fingerprint` of the lines a study was given,
  never of file names or sizes: a sample, a normalisation or one changed line is a new key).
  The readers' :class:`modtok.outputs.Digest` records the bytes of the files read while an
  output directory is written; a study computes on the lines it holds, so those are hashed;
- **the parameters**: every argument of the computation, hashed the same way;
- **the code**: :func:`code_version`, the SHA-256 of every source file of the ``modtok``
  package and the versions of the libraries that compute (numpy, torch, tokenizers, ...).
  Coarse — any edit of modtok recomputes every result — but never stale: a result depends
  on kernels, readers and metrics far from the study that asked for it (imports inside
  functions, numba kernels), and a finer key that missed one would serve a wrong result.

Where: ``$MODTOK_RESULTS``, else ``$MODTOK_CACHE/results/`` (either set to ``none``, ``off``
or ``0`` turns the cache off), else the user cache directory (``~/.cache/modtok/results`` on Linux,
as :func:`modtok.artifacts.deployed.cache_dir` does for the converted tokenizers). One
file per result, ``<study>/<key>.pkl``: a JSON header line (what, when computed, how long
it took, the payload's SHA-256) and the result, pickled. Pickle is for a local cache only:
an entry is code to run, so a cache directory is never shared with someone one does not trust.
Writes are atomic (:func:`modtok.atomic.write_bytes`: a temporary file renamed into place),
so concurrent writers of one key each leave a whole entry, the last one wins; an entry that
cannot be read back whole (truncated, altered, an older format) is computed again and
rewritten, and :meth:`Results.note` says so.

>>> import tempfile
>>> results = Results("demo", root=tempfile.mkdtemp())
>>> calls = []
>>> def square(x):
...     calls.append(x)
...     return x * x
>>> results.get("square", {"x": 3}, lambda: square(3)), results.get("square", {"x": 3}, lambda: square(3))
(9, 9)
>>> calls                                            # the second was read back, not computed
[3]
>>> Results("demo", root=results.root).get("square", {"x": 3}, lambda: square(3)), calls   # a new kernel too
(9, [3])
>>> results.get("square", {"x": 4}, lambda: square(4)), calls   # a new parameter: a new result
(16, [3, 4])
>>> fingerprint(["a b", "c"]) == fingerprint(["a b", "c"]) != fingerprint(["a", "b c"])
True
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import importlib.metadata
import json
import os
import pickle
import sys
import time
from collections.abc import Callable, Mapping
from datetime import datetime, timezone
from functools import lru_cache
from pathlib import Path
from typing import TypeVar

import numpy as np

import modtok
from modtok.atomic import write_bytes
from modtok.errors import ConfigError, DataError

T = TypeVar("T")
MAGIC = b"modtok-results 1\n"  # the file format's version: another one is read as unreadable (recomputed)
OFF = ("none", "off", "0")  # MODTOK_RESULTS / MODTOK_CACHE values that turn the results cache off
# the libraries whose versions are part of the code a result was computed with
LIBRARIES = ("numpy", "numba", "regex", "tokenizers", "torch", "sentencepiece", "scipy")


# Set (to anything but 0) by make demo (modtok.ui.demo): a notebook computes ahead, into the results cache, what
# its widgets would otherwise compute when moved (06: the explorer's other trainers; 01: every subset that leaves
# one language out), for the class that opens it after
AHEAD = "MODTOK_AHEAD"


def ahead() -> bool:
    """Whether :data:`AHEAD` asks for the work done ahead."""
    return os.environ.get(AHEAD, "").strip() not in ("", "0")


def results_dir() -> Path | None:
    """The results cache directory, or None when it is off. In order: ``$MODTOK_RESULTS``
    (a directory, or ``none``: off; the test suite points it at a temporary directory and
    leaves the converted tokenizers' cache where it is); ``$MODTOK_CACHE/results``
    (``MODTOK_CACHE=none``: off); the user cache directory's ``modtok/results``.

    >>> import os
    >>> env = {"MODTOK_RESULTS": os.environ.pop("MODTOK_RESULTS", None), "MODTOK_CACHE": os.environ.get("MODTOK_CACHE")}
    >>> os.environ["MODTOK_CACHE"] = "/tmp/c"; str(results_dir())
    '/tmp/c/results'
    >>> os.environ["MODTOK_CACHE"] = "none"; results_dir() is None
    True
    >>> os.environ["MODTOK_RESULTS"] = "/tmp/r"; str(results_dir())
    '/tmp/r'
    >>> for k, v in env.items():
    ...     _ = os.environ.pop(k, None) if v is None else os.environ.__setitem__(k, v)
    """
    for var, sub in (("MODTOK_RESULTS", ""), ("MODTOK_CACHE", "results")):
        value = os.environ.get(var, "")
        if value.strip().lower() in OFF:
            return None
        if value:
            return Path(value) / sub
    return user_cache() / "results"


def user_cache() -> Path:
    """modtok's directory in the platform's user cache: ``$XDG_CACHE_HOME`` (default
    ``~/.cache``) on Linux, ``~/Library/Caches`` on macOS, ``%LOCALAPPDATA%`` on Windows,
    then ``modtok``. Never inside a checkout: a cache is not part of the project, and a
    read-only install must work too."""
    if sys.platform == "darwin":
        base = Path.home() / "Library" / "Caches"
    elif sys.platform == "win32":
        base = Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local")
    else:
        base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "modtok"


# --------------------------------------------------------------------------
# keys


def _feed(h, value, depth: int = 0) -> None:
    """Feed ``value`` to the hash ``h``, tagged by type so that no two values collide
    (``1`` vs ``"1"`` vs ``1.0``; ``["ab"]`` vs ``["a", "b"]``)."""
    if depth > 64:
        raise ConfigError("fingerprint: a value nested more than 64 deep (a cycle?)")
    if callable(getattr(type(value), "cache_key", None)):
        # an object that says what it is, cheaper than its contents (a deployed tokenizer: its shipped file's
        # SHA-256, modtok.artifacts.deployed.Lazy); first, and by its type: a proxy is asked nothing else
        _feed(h, (_name(type(value)), value.cache_key()), depth + 1)
    elif value is None or isinstance(value, (bool, int, float, complex)):
        h.update(f"{type(value).__name__}:{value!r};".encode())
    elif isinstance(value, str):
        data = value.encode("utf-8", "surrogatepass")
        h.update(b"s%d:" % len(data) + data)
    elif isinstance(value, (bytes, bytearray)):
        h.update(b"b%d:" % len(value) + bytes(value))
    elif isinstance(value, (list, tuple)):
        if value and all(type(x) is str for x in value):  # lines of text: one pass, not one call per line
            data = "".join(value).encode("utf-8", "surrogatepass")
            sizes = np.fromiter(map(len, value), dtype=np.int64, count=len(value))
            h.update(b"L%d:" % len(value) + sizes.tobytes() + data)
        else:
            h.update(f"{type(value).__name__}{len(value)}[".encode())
            for x in value:
                _feed(h, x, depth + 1)
            h.update(b"]")
    elif isinstance(value, Mapping):  # in order: the order of a dict's languages may change a result
        h.update(f"{type(value).__name__}{len(value)}{{".encode())
        for k, v in value.items():
            _feed(h, k, depth + 1)
            _feed(h, v, depth + 1)
        h.update(b"}")
    elif isinstance(value, (set, frozenset)):
        h.update(b"set%d{" % len(value) + b"".join(sorted(fingerprint(x).encode() for x in value)) + b"}")
    elif isinstance(value, np.ndarray):
        h.update(f"nd{value.dtype.str}{value.shape}:".encode() + np.ascontiguousarray(value).tobytes())
    elif type(value).__module__.startswith("torch") and hasattr(value, "detach"):  # a tensor, by its values
        t = value.detach().cpu()
        _feed(h, ("tensor", str(t.dtype), t.numpy() if str(t.dtype) != "torch.bfloat16" else t.float().numpy()),
              depth + 1)
    elif isinstance(value, np.generic):
        _feed(h, value.item(), depth + 1)
    elif isinstance(value, Path):
        _feed(h, ("Path", str(value)), depth + 1)
    elif hasattr(value, "to_str") and callable(value.to_str):  # a HF tokenizer: its whole JSON
        _feed(h, (type(value).__qualname__, value.to_str()), depth + 1)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        _feed(h, (_name(type(value)), {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}), depth + 1)
    elif callable(value) and "<" not in getattr(value, "__qualname__", "<") and hasattr(value, "__module__"):
        # a module's function or class: its code is in code_version() (a lambda or a local function
        # may hold values of its closure that no key would see: refused)
        _feed(h, ("callable", _name(value)), depth + 1)
    elif hasattr(value, "__dict__") and not callable(value):
        _feed(h, (_name(type(value)), vars(value)), depth + 1)
    else:
        raise ConfigError(f"fingerprint: cannot key a result on a {type(value).__qualname__} ({value!r:.60})")


def _name(obj) -> str:
    return f"{obj.__module__}.{obj.__qualname__}"


def fingerprint(*values) -> str:
    """The SHA-256 (hex) of ``values``: equal for equal contents, in every process.

    Lines of text, dicts, numbers, numpy arrays, dataclasses, HF tokenizers (their JSON), an
    object with a ``cache_key()`` method by what it returns (a deployed tokenizer's handle: its
    file), objects by their attributes; a lambda or an object of no known kind is refused
    (:class:`~modtok.errors.ConfigError`), never keyed on its ``id``.

    >>> fingerprint({"x": [1, 2.0]}) == fingerprint({"x": [1, 2.0]}) != fingerprint({"x": [1, 2]})
    True
    >>> fingerprint(lambda: 1)
    Traceback (most recent call last):
    ...
    modtok.errors.ConfigError: fingerprint: cannot key a result on a function (<function <lambda> at ...
    """
    h = hashlib.sha256()
    _feed(h, values)
    return h.hexdigest()


@lru_cache(maxsize=1)
def code_version() -> str:
    """The SHA-256 of the ``modtok`` package's source (every ``.py``, ``.c`` and data file under it,
    by relative path), Python's version and :data:`LIBRARIES`' versions: the code a result
    was computed with (once per process: about 10 ms)."""
    h = hashlib.sha256()
    root = Path(modtok.__file__).parent
    for path in sorted(root.rglob("*")):
        if path.is_file() and path.suffix in (".py", ".c", ".toml", ".json", ".txt") and "__pycache__" not in path.parts:
            _feed(h, (path.relative_to(root).as_posix(), path.read_bytes()))
    versions = {}
    for lib in LIBRARIES:
        try:
            versions[lib] = importlib.metadata.version(lib)
        except importlib.metadata.PackageNotFoundError:
            versions[lib] = None
    _feed(h, (sys.version_info[:3], versions))
    return h.hexdigest()


# --------------------------------------------------------------------------
# entries


def _read(path: Path, key: str) -> tuple[dict, object]:
    """``(header, result)`` of the entry at ``path``; raises on anything but a whole entry of ``key``."""
    raw = path.read_bytes()
    if not raw.startswith(MAGIC):
        raise DataError("not a modtok results entry of this format")
    line, _, payload = raw[len(MAGIC):].partition(b"\n")
    header = json.loads(line)
    if header.get("key") != key:
        raise DataError("the entry is of another key")
    if hashlib.sha256(payload).hexdigest() != header.get("sha256") or len(payload) != header.get("bytes"):
        raise DataError("the result does not match its header's SHA-256 (truncated or altered)")
    return header, pickle.loads(payload)


def read_header(path) -> dict:
    """The JSON header of an entry (what, when, how long), without reading its result;
    ``{}`` for a file that is not one."""
    try:
        with open(path, "rb") as f:
            if f.read(len(MAGIC)) != MAGIC:
                return {}
            return json.loads(f.readline())
    except (OSError, ValueError):
        return {}


@dataclasses.dataclass
class Event:
    """One result asked for: ``how`` it was had ("cached", "computed", "recomputed" after an
    unreadable entry, "not stored" when it could not be written, "off"), when it was computed
    (ISO, UTC) and how long computing it took (s)."""

    what: str
    how: str
    computed: str
    seconds: float
    why: str = ""


class Results:
    """A study's handle on the results cache: :meth:`get` a result, :meth:`note` what came
    from where. ``study`` names the entries' directory; ``data`` (optional, hashed once, on the
    first :meth:`get`) is the text every result of this study depends on; ``root``: the
    cache directory (default :func:`results_dir` as it is at each :meth:`get`; None: no cache,
    everything is computed)."""

    def __init__(self, study: str, data=None, root: str | os.PathLike | None | bool = True):
        self.study, self._root = study, root
        self.events: list[Event] = []
        self._data, self._data_key = data, None

    @property
    def root(self) -> Path | None:
        return results_dir() if self._root is True else Path(self._root) if self._root else None

    def key(self, what: str, params) -> str:
        """The key of result ``what`` with ``params``: study, data, parameters and code."""
        if self._data_key is None:
            self._data_key = fingerprint(self._data)
        return fingerprint(self.study, what, self._data_key, params, code_version())

    def get(self, what: str, params, compute: Callable[[], T]) -> T:
        """The result ``what`` of ``params``: read from the cache when an entry of the same
        study, data, parameters and code is there and whole, else ``compute()``d and stored."""
        root = self.root
        if root is None:
            t0 = time.perf_counter()
            value = compute()
            self.events.append(Event(what, "off", _now(), time.perf_counter() - t0))
            return value
        key = self.key(what, params)
        path, how, why = root / self.study / f"{key}.pkl", "computed", ""
        if path.exists():
            try:
                header, value = _read(path, key)
                self.events.append(Event(what, "cached", header["computed"], header["seconds"]))
                return value
            except Exception as e:  # any unreadable entry (truncated, altered, unpicklable): computed again
                how, why = "recomputed", f"{path.name}: {type(e).__name__}: {e}"[:200]
        t0, when = time.perf_counter(), _now()
        value = compute()
        seconds = time.perf_counter() - t0
        try:
            payload = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
            header = {"key": key, "study": self.study, "what": what, "computed": when, "seconds": round(seconds, 3),
                      "bytes": len(payload), "sha256": hashlib.sha256(payload).hexdigest(), "modtok": modtok.__version__}
            write_bytes(path, MAGIC + json.dumps(header).encode() + b"\n" + payload)
        except (OSError, pickle.PicklingError, TypeError, AttributeError) as e:  # the result stands; it is not kept
            how, why = "not stored", f"{type(e).__name__}: {e}"[:200]
        self.events.append(Event(what, how, when, seconds, why))
        return value

    def stored(self, what: str, params) -> dict:
        """The header of the entry :meth:`get` would read for ``what`` and ``params`` (``"computed"``:
        when, ``"seconds"``: how long it took), ``{}`` when there is none; nothing is computed."""
        root = self.root
        return read_header(root / self.study / f"{self.key(what, params)}.pkl") if root is not None else {}

    def note(self) -> str:
        """One line: how many results came from the cache (computed when, how much work it
        spared), how many were computed now, and any entry that could not be read or written.

        >>> import tempfile
        >>> r = Results("demo", root=tempfile.mkdtemp()); _ = r.get("one", 1, lambda: 1)
        >>> r.note()
        'results cache: 1 computed now and stored in ...demo'
        >>> Results("demo", root=None).note()
        'results cache: off (MODTOK_CACHE=none); nothing asked for yet'
        """
        if self.root is None:
            n = len(self.events)
            return f"results cache: off (MODTOK_CACHE=none); {f'{n} computed' if n else 'nothing asked for yet'}"
        cached = [e for e in self.events if e.how == "cached"]
        parts = []
        if cached:
            when = sorted(e.computed for e in cached)
            span = _short(when[0]) if when[0][:16] == when[-1][:16] else f"{_short(when[0])} to {_short(when[-1])}"
            parts.append(f"{len(cached)} from the cache (computed {span}; {_duration(sum(e.seconds for e in cached))} "
                         "of work not redone)")
        computed = [e for e in self.events if e.how in ("computed", "recomputed")]
        if computed:
            parts.append(f"{len(computed)} computed now and stored in {self.root / self.study}")
        parts += [f"{e.what} recomputed ({e.why})" for e in self.events if e.how == "recomputed"]
        parts += [f"{e.what} not stored ({e.why})" for e in self.events if e.how == "not stored"]
        return "results cache: " + ("; ".join(parts) if parts else "nothing asked for yet")


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def _short(iso: str) -> str:
    """An ISO time stamp to the minute, in UTC.

    >>> _short("2000-01-02T03:04:05.6+00:00")
    '2000-01-02 03:04 UTC'
    """
    return iso[:16].replace("T", " ") + " UTC"


def size_text(n: int) -> str:
    """``n`` bytes for a person: kB below a megabyte (a corpus of a few KB is not "0.0 MB").

    >>> size_text(4_321), size_text(2_500_000), size_text(3_000_000_000)
    ('4.3 kB', '2.5 MB', '3.00 GB')
    """
    return f"{n / 1e3:.1f} kB" if n < 1e6 else f"{n / 1e6:.1f} MB" if n < 1e9 else f"{n / 1e9:.2f} GB"


def _duration(seconds: float) -> str:
    return f"{seconds:.1f} s" if seconds < 120 else f"{seconds / 60:.1f} min"


# --------------------------------------------------------------------------
# the whole cache (``modtok cache``)


def summary(root: str | os.PathLike | None = None) -> dict:
    """What the cache holds: ``{"root", "studies": {study: {"entries", "bytes", "oldest", "newest"}}}``
    (``root`` None: :func:`results_dir`; ``{"root": None}`` when the cache is off)."""
    root = Path(root) if root else results_dir()
    studies: dict[str, dict] = {}
    if root is not None and root.is_dir():
        for path in sorted(root.glob("*/*.pkl")):
            header = read_header(path)
            s = studies.setdefault(path.parent.name, {"entries": 0, "bytes": 0, "oldest": None, "newest": None})
            s["entries"] += 1
            s["bytes"] += path.stat().st_size
            if when := header.get("computed"):
                s["oldest"] = min(s["oldest"] or when, when)
                s["newest"] = max(s["newest"] or when, when)
    return {"root": root, "studies": studies}


def clear(root: str | os.PathLike | None = None) -> tuple[int, int]:
    """Remove every entry of the results cache (``root``, default :func:`results_dir`):
    ``(entries, bytes)`` removed. Only the entries go (``<study>/*.pkl``, a write's leftover
    temporary file, then the emptied study directories), never anything else in ``root``:
    ``MODTOK_RESULTS`` may name a directory that holds other files."""
    root = Path(root) if root else results_dir()
    if root is None or not root.is_dir():
        return 0, 0
    n = size = 0
    for study in [p for p in root.iterdir() if p.is_dir()]:
        for path in [*study.glob("*.pkl"), *study.glob(".*.pkl.*.tmp")]:
            n, size = n + (path.suffix == ".pkl"), size + path.stat().st_size
            path.unlink(missing_ok=True)
        with contextlib.suppress(OSError):  # not empty: something else is in it, and stays
            study.rmdir()
    return n, size


def describe(clear_it: bool = False) -> list[str]:
    """``modtok cache`` (``modtok cache clear`` with ``clear_it``): where the results cache is,
    per study its entries, size and when they were computed; or what clearing removed.

    >>> import os, tempfile
    >>> os.environ["MODTOK_RESULTS"], saved = tempfile.mkdtemp(), os.environ.get("MODTOK_RESULTS")
    >>> _ = Results("demo").get("one", 1, lambda: 1)
    >>> describe()[1]
    '  demo: 1 entries, 0.3 kB, computed ... UTC'
    >>> describe(clear_it=True)[0]
    'results cache ...: removed 1 entries (0.3 kB)'
    >>> describe()[-1]
    '  (empty)'
    >>> _ = os.environ.pop("MODTOK_RESULTS") if saved is None else os.environ.__setitem__("MODTOK_RESULTS", saved)
    """
    if clear_it:
        root = results_dir()
        n, size = clear(root)
        return [f"results cache {root}: removed {n} entries ({size_text(size)})" if root else
                "results cache: off (MODTOK_RESULTS / MODTOK_CACHE = none): nothing to clear"]
    info = summary()
    if info["root"] is None:
        return ["results cache: off (MODTOK_RESULTS / MODTOK_CACHE = none)"]
    studies = info["studies"]
    total = sum(s["bytes"] for s in studies.values())
    lines = [f"results cache {info['root']}: {sum(s['entries'] for s in studies.values())} entries, "
             f"{size_text(total)} (modtok cache clear empties it)"]
    for name, s in studies.items():
        when = _short(s["oldest"]) if s["oldest"] else "?"
        when += f" to {_short(s['newest'])}" if s["newest"] and s["newest"][:16] != (s["oldest"] or "")[:16] else ""
        lines.append(f"  {name}: {s['entries']} entries, {size_text(s['bytes'])}, computed {when}")
    return lines + ["  (empty)"] * (not studies)
