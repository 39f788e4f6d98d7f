"""A command's output directory: it appears whole or not at all, and says what made it.

Every command that writes a directory (``count``, ``sequential-bpe``, ``parity-bpe``,
``adaptmix``, ``extend``, ``trim``, ...) writes it through :func:`output_dir`:

- the files go into a hidden temporary sibling (``.NAME.modtok-tmp-PID-XXXX``), which is
  renamed into place only when the command succeeded, so a crash (even ``kill -9``) leaves
  the earlier output, or nothing, never a mix of old and new files;
- a temporary sibling left by a crashed run (its process gone) is removed by the next run
  into the same place, so no temporary directory outlives the next run;
- an existing directory is never emptied: an empty one is taken, an earlier output of the
  same command is replaced only with ``force=True`` (and only if it holds nothing but the
  files that run recorded writing), anything else is refused with what is in the way;
- a lock (``.NAME.modtok-lock``, holding the writer's pid) is taken on the target before
  anything else, so a second run into the same place is refused at once, naming the first
  writer's pid, not after doing all its work; a lock whose process is gone (``kill -9``) is
  taken over;
- ``run.json`` records the command, its arguments, the modtok version, the inputs (below),
  whatever the command adds (lines and characters per language, evaluation source), the
  files written with their sizes and the wall time;
- a disk (or quota) that fills up ends the run with one :class:`~modtok.errors.OutputWriteError`
  naming the output, its partial directory removed;
  :func:`check_output` checks a directory against it before a command reads it (a counts
  directory for ``sequential-bpe --counts``).

The inputs are fingerprinted by what was read, as it was read: while an output directory
is being written, modtok's readers (:mod:`modtok.text.corpus`) feed every file they read
through a :class:`Digest` (:func:`reading`), so ``run.json``'s ``inputs`` holds, per file,
the SHA-256 of the bytes read (decompressed, for a compressed file; the text values of the
rows, for Parquet and Arrow), how many, from which offset and whether the read reached
the file's end (a budget stops a reader early; the script check reads a file's first
20,000 characters whatever the budget: they are read, so they are in the hash);
``inputs_sha256`` is the SHA-256 of that list. A line appended to a file
after its reader passed it is not in the fingerprint (a fingerprint of sizes taken at the
end once recorded the longer file). A file named as an input (``inputs=``,
:meth:`Run.add_inputs`) that no reader read in this process (a tokenizer loaded whole by a
library, text read on Dask workers) is hashed when the run ends if it is at most
:data:`HASH_AT_END_MAX` bytes, else recorded with its size only; each row says which.

>>> import tempfile, pathlib
>>> root = pathlib.Path(tempfile.mkdtemp())
>>> with output_dir(root / "out", command="demo", args={"k": 3}) as run:
...     _ = (run.path / "a.txt").write_text("hello")
...     run.record(languages={"eng_Latn": {"lines": 1, "chars": 5}})
>>> sorted(p.name for p in (root / "out").iterdir()), read_run(root / "out")["command"]
(['a.txt', 'run.json'], 'demo')
>>> with output_dir(root / "out", command="demo", args={"k": 4}):
...     pass
Traceback (most recent call last):
...
modtok.errors.OutputExistsError: ... is an earlier output of 'demo': pass --force to replace it
>>> with output_dir(root / "out", command="other", args={}, force=True):
...     pass
Traceback (most recent call last):
...
modtok.errors.OutputExistsError: ... is an output of 'demo' (its run.json), not of 'other'; refusing to replace it
>>> sorted(p.name for p in root.iterdir())      # refused runs leave nothing behind (no lock either)
['out']
>>> check_output(root / "out", "demo")["files"]
{'a.txt': 5}
>>> _ = (root / "out" / "a.txt").write_text("hello, world")
>>> check_output(root / "out", "demo")
Traceback (most recent call last):
...
modtok.errors.DataError: ... a.txt has 12 bytes, its run.json says 5: not the output that run wrote ...
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import socket
import shutil
import sys
import tempfile
import time
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import modtok
from modtok.atomic import write_json
from modtok.errors import DataError, OutputBusyError, OutputExistsError, OutputWriteError

RUN_FILE = "run.json"
_TMP = ".modtok-tmp-"
_OLD = ".modtok-old-"
_LOCK = ".modtok-lock"
HASH_AT_END_MAX = 64 << 20  # a named input no reader read is hashed at the end up to this size (no second read of big text)


@dataclass
class Digest:
    """The SHA-256 of what a reader read of one file, fed as it reads (:func:`reading`).

    >>> d = Digest("x.txt"); d.update(b"one\\n"); d.update(b"two\\n"); d.to_end = True
    >>> d.row()["bytes"], d.row()["sha256"] == hashlib.sha256(b"one\\ntwo\\n").hexdigest()
    (8, True)
    """

    path: str
    start: int = 0  # byte offset of the first byte read (a part of a file)
    what: str = "bytes"  # "bytes" (decompressed for a compressed file) or "text values" (Parquet, Arrow rows)
    n: int = 0
    to_end: bool = False
    _hash: object = field(default_factory=hashlib.sha256, repr=False)

    def update(self, data: bytes) -> None:
        self._hash.update(data)
        self.n += len(data)

    def row(self) -> dict:
        """The file's ``inputs`` row of run.json."""
        return {"path": os.path.realpath(self.path), **({"from": self.start} if self.start else {}), "bytes": self.n,
                **({"of": self.what} if self.what != "bytes" else {}), "sha256": self._hash.hexdigest(),
                "to_end": self.to_end, "hashed": "as read"}


# The read logs of the output directories being written in this process (nested ones too):
# every Digest a reader opens goes into each of them.
_READING: list[list[Digest]] = []


def reading(path, start: int = 0, what: str = "bytes") -> Digest | None:
    """A :class:`Digest` for the reader of ``path`` (from byte ``start``) to feed what it reads,
    or None when no output directory is being written (nothing to record it in)."""
    if not _READING:
        return None
    digest = Digest(os.fspath(path), start, what)
    for log in _READING:
        log.append(digest)
    return digest


@dataclass
class Run:
    """The directory being written (``path``, a temporary sibling until the end) and the
    fields ``run.json`` will hold beyond the standard ones."""

    path: Path
    fields: dict = field(default_factory=dict)
    inputs: list[Path] = field(default_factory=list)

    def record(self, **fields) -> None:
        """Add fields to ``run.json`` (JSON-serialisable values; a later call overrides)."""
        self.fields.update(fields)

    def add_inputs(self, paths: Iterable) -> None:
        """Name input files (recorded with their sizes and a hash of the list)."""
        self.inputs.extend(Path(p) for p in paths)


def read_run(path) -> dict:
    """The ``run.json`` of an output directory (``{}`` when there is none or it is unreadable)."""
    try:
        return json.loads((Path(path) / RUN_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _siblings(target: Path, kind: str) -> Iterator[tuple[Path, int]]:
    """``(path, pid)`` of the hidden siblings of ``target`` of one kind (``_TMP`` or ``_OLD``)."""
    prefix = f".{target.name}{kind}"
    for p in target.parent.iterdir():  # not glob: a name may hold [ or *
        pid = p.name[len(prefix):].split("-", 1)[0] if p.name.startswith(prefix) else ""
        if pid.isdigit():
            yield p, int(pid)


def _remove_stale(target: Path) -> None:
    """Clean up after runs into ``target`` whose process is gone: their temporary
    directories are removed; an earlier output moved aside for a replacement (``_OLD``)
    goes back into place if the run died before its new output took it, else it is removed."""
    for p, pid in list(_siblings(target, _TMP)):
        if not _alive(pid):
            shutil.rmtree(p, ignore_errors=True)
    for p, pid in list(_siblings(target, _LOCK + "-")):  # a lock being written when its run died
        if not _alive(pid):
            p.unlink(missing_ok=True)
    for p, pid in list(_siblings(target, _OLD)):
        if not _alive(pid):
            if target.exists():
                shutil.rmtree(p, ignore_errors=True)
            else:
                os.replace(p, target)


def _inputs_record(read: list[Digest], named: list[Path]) -> dict:
    """run.json's ``inputs`` (one row per file read, then per named file no reader read) and
    ``inputs_sha256`` (of the rows' paths, offsets, sizes and hashes)."""
    rows, seen = [], set()
    for d in read:
        row = d.row()
        key = json.dumps(row, sort_keys=True)
        if key not in seen:  # one file read twice alike is one row; read twice unlike, two
            seen.add(key)
            rows.append(row)
    streamed = {row["path"] for row in rows}
    for p in dict.fromkeys(os.path.realpath(p) for p in named):
        if p not in streamed:
            rows.append(_named_row(Path(p)))
    fingerprint = [[r["path"], r.get("from", 0), r["bytes"], r["sha256"]] for r in rows]
    return {"inputs": rows, "inputs_sha256": hashlib.sha256(json.dumps(fingerprint).encode()).hexdigest()}


def _named_row(p: Path) -> dict:
    """The row of a named input no reader read: hashed now, when small enough."""
    try:
        size = p.stat().st_size if p.is_file() else None
    except OSError:
        size = None
    if size is None:
        return {"path": str(p), "bytes": None, "sha256": None, "hashed": "no: not a readable file at the end of the run"}
    if size > HASH_AT_END_MAX:
        return {"path": str(p), "bytes": size, "sha256": None,
                "hashed": f"no: not read through modtok's readers in this process, and over {HASH_AT_END_MAX >> 20} MiB"}
    h = hashlib.sha256()
    with open(p, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return {"path": str(p), "bytes": size, "sha256": h.hexdigest(), "to_end": True,
            "hashed": "at the end of the run (not read through modtok's readers in this process)"}


def _proc_start(pid: int) -> str | None:
    """When process ``pid`` started (clock ticks since boot, Linux's /proc; None elsewhere or
    when it is gone): a pid and its start time name one process even after pids are reused."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[19].decode()
    except (OSError, IndexError):
        return None


def _holder(lock: Path) -> dict | None:
    """The live writer holding ``lock`` (its JSON), or None when it is gone (a stale lock)."""
    try:
        held = json.loads(lock.read_text(encoding="utf-8"))
        pid = int(held["pid"])
    except (OSError, ValueError, KeyError, TypeError):
        return None  # gone, or half-written by a writer that died while writing it
    if held.get("host") != socket.gethostname():
        return held  # another machine's run (a shared disk): it cannot be checked from here
    if not _alive(pid) or held.get("started") not in (None, _proc_start(pid)):
        return None
    return held


def _take_lock(target: Path, command: str) -> Path:
    """Take the writer's lock on ``target`` (a sibling file holding this pid), refusing at once
    when a live run holds it; a lock left by a run that is gone is taken over. Two runs racing
    for one stale lock could both pass; the check before the final rename still keeps the
    output whole (the second is refused there)."""
    lock = target.parent / f".{target.name}{_LOCK}"
    me = {"pid": os.getpid(), "started": _proc_start(os.getpid()), "host": socket.gethostname(),
          "command": command, "since_utc": datetime.now(timezone.utc).isoformat(timespec="seconds")}
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}{_LOCK}-{os.getpid()}-")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump(me, f)
    try:
        for _ in range(3):
            try:
                _create(tmp, lock)
                return lock
            except FileExistsError:
                held = _holder(lock)
                if held is not None:
                    raise OutputBusyError(
                        f"{target} is being written by another modtok run (pid {held['pid']}"
                        + (f" on {held['host']}" if held.get("host") != me["host"] else "")
                        + f", `modtok {held.get('command')}` since {held.get('since_utc')}): wait for it to "
                        f"finish or choose another output (its lock: {lock})") from None
                try:
                    os.unlink(lock)  # stale: its writer is gone
                except FileNotFoundError:
                    pass
        raise OutputBusyError(f"{target}: could not take its lock {lock} (other runs keep taking it)")
    finally:
        os.unlink(tmp)


def _create(written: Path, lock: Path) -> None:
    """Create ``lock`` holding ``written``'s content, or raise ``FileExistsError``: a hard link
    (the file appears with its content, in one step), else, on a filesystem without hard links,
    an exclusive create written after (a reader may see it empty for a moment: a stale lock)."""
    try:
        os.link(written, lock)
    except FileExistsError:
        raise
    except OSError:
        fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        with os.fdopen(fd, "wb") as f:
            f.write(Path(written).read_bytes())


def _release_lock(lock: Path) -> None:
    """Remove ``lock`` if it is still this process's."""
    try:
        if json.loads(lock.read_text(encoding="utf-8")).get("pid") == os.getpid():
            lock.unlink()
    except (OSError, ValueError):
        pass


def _check_target(target: Path, command: str, force: bool) -> list[str] | None:
    """What may be replaced at ``target``: None (nothing there or an empty directory) or the
    earlier run's recorded files; raises when the target must not be touched."""
    if not target.exists():
        return None
    if not target.is_dir():
        raise OutputExistsError(f"{target} exists and is not a directory; choose another output path")
    present = sorted(p.name for p in target.iterdir())
    if not present:
        return None
    earlier = read_run(target)
    if not earlier:
        shown = ", ".join(present[:5]) + (" ..." if len(present) > 5 else "")
        raise OutputExistsError(f"{target} is not empty ({shown}) and is not a modtok output "
                                "(no run.json); choose an empty or new directory")
    if earlier.get("command") != command:
        raise OutputExistsError(f"{target} is an output of {earlier.get('command')!r} (its run.json), "
                                f"not of {command!r}; refusing to replace it")
    if not force:
        raise OutputExistsError(f"{target} is an earlier output of {command!r}: pass --force to replace it")
    written = set(earlier.get("files", {})) | {RUN_FILE}
    foreign = [n for n in present if n not in written]
    if foreign:
        raise OutputExistsError(f"{target} holds files the earlier {command!r} did not write "
                                f"({', '.join(foreign[:5])}); move them away first")
    return present


def _files(root: Path) -> dict[str, int | None]:
    """``{name: bytes}`` of what a run wrote (``None`` for a subdirectory), run.json aside."""
    return {p.name: None if p.is_dir() else p.stat().st_size
            for p in sorted(root.iterdir()) if p.name != RUN_FILE}


def check_output(path, command: str) -> dict:
    """The ``run.json`` of ``path`` after checking that ``path`` is one whole output of
    ``command``: its run.json is there, names ``command``, and the directory holds exactly
    the files it lists, each of the size it records. Raises :class:`DataError` naming what
    is wrong (a directory made by hand or by an older modtok, or files added, removed or
    replaced since)."""
    path = Path(path)
    if not path.is_dir():
        raise DataError(f"{path}: no such directory")
    record = read_run(path)
    if not record:
        raise DataError(f"{path}: no readable {RUN_FILE}, so not a whole output of `modtok {command}` "
                        f"(made by hand, by an older modtok, or by a run that never finished); run "
                        f"`modtok {command}` again")
    if record.get("command") != command:
        raise DataError(f"{path}: an output of `modtok {record.get('command')}` (its {RUN_FILE}), "
                        f"not of `modtok {command}`")
    files = record.get("files", {})
    present = _files(path)
    extra, missing = sorted(set(present) - set(files)), sorted(set(files) - set(present))
    if extra or missing:
        said = "; ".join(f"{what}: {', '.join(names[:5])}" for what, names in
                         (("not in its run.json", extra), ("missing", missing)) if names)
        raise DataError(f"{path}: not the output its {RUN_FILE} records ({said}); run "
                        f"`modtok {command}` again into a new directory")
    for name, size in files.items():
        if present[name] != size:
            raise DataError(f"{path}: {name} has {present[name]} bytes, its {RUN_FILE} says {size}: not the "
                            f"output that run wrote (a file replaced since); run `modtok {command}` again")
    return record


@contextmanager
def output_dir(path, *, command: str, args: Mapping, force: bool = False,
               inputs: Iterable = ()) -> Iterator[Run]:
    """Write a command's output directory whole (see the module docstring).

    Yields a :class:`Run` whose ``path`` the caller writes into; on normal exit ``run.json``
    is added and the directory renamed to ``path``. On any exception (Ctrl-C included, and
    SIGTERM, which the CLI raises as one) the temporary directory is removed and ``path`` is
    left as it was. The target is checked
    before the body runs, so a refusal costs no work.
    """
    target = Path(path).absolute()
    target.parent.mkdir(parents=True, exist_ok=True)
    lock = _take_lock(target, command)
    read: list[Digest] = []
    _READING.append(read)
    tmp = None
    try:
        _remove_stale(target)
        _check_target(target, command, force)
        started = time.monotonic()
        tmp = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}{_TMP}{os.getpid()}-"))
        run = Run(tmp, inputs=[Path(p) for p in inputs])
        yield run
        record = {"command": command, "args": {k: _jsonable(v) for k, v in dict(args).items()},
                  "argv": sys.argv[1:], "modtok_version": modtok.__version__,
                  "created_utc": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                  **_inputs_record(read, run.inputs), **run.fields,
                  "files": _files(tmp),
                  "wall_s": round(time.monotonic() - started, 3)}
        write_json(tmp / RUN_FILE, record, indent=2)
        os.chmod(tmp, 0o755)
        replaced = _check_target(target, command, force)    # again: it may have changed meanwhile
        if replaced is None:
            if target.exists():
                target.rmdir()
            os.replace(tmp, target)
        else:
            old = target.parent / f".{target.name}{_OLD}{os.getpid()}"
            os.replace(target, old)
            os.replace(tmp, target)
            for name in replaced:
                p = old / name
                shutil.rmtree(p) if p.is_dir() and not p.is_symlink() else p.unlink()
            old.rmdir()
    except OSError as e:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
        if e.errno not in (errno.ENOSPC, errno.EDQUOT):
            raise
        where = f" (writing {Path(e.filename).name})" if e.filename else ""
        raise OutputWriteError(f"{target}: {os.strerror(e.errno).lower()}{where}; nothing was written "
                                        "there (the partial output is removed): free some space, or write "
                                        "elsewhere") from None
    except BaseException:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
        raise
    finally:
        _READING[:] = [log for log in _READING if log is not read]
        _release_lock(lock)


def _jsonable(value):
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set)):
        return [_jsonable(v) for v in value]
    return repr(value)
