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
- ``run.json`` records the command, its arguments, the modtok version, the inputs (paths,
  sizes and a hash of the list), whatever the command adds (lines and characters per
  language, evaluation source), the files written with their sizes and the wall time;
  :func:`check_output` checks a directory against it before a command reads it (a counts
  directory for ``sequential-bpe --counts``).

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
>>> sorted(p.name for p in root.iterdir())      # refused runs leave nothing behind
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

import hashlib
import json
import os
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
from modtok.errors import DataError, OutputExistsError

RUN_FILE = "run.json"
_TMP = ".modtok-tmp-"
_OLD = ".modtok-old-"


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
    for p, pid in list(_siblings(target, _OLD)):
        if not _alive(pid):
            if target.exists():
                shutil.rmtree(p, ignore_errors=True)
            else:
                os.replace(p, target)


def _inputs_record(paths: list[Path]) -> dict:
    rows = []
    for p in paths:
        try:
            size = p.stat().st_size
        except OSError:
            size = None
        rows.append({"path": str(p.resolve()), "bytes": size})
    digest = hashlib.sha256(json.dumps(rows, sort_keys=True).encode()).hexdigest()[:16]
    return {"inputs": rows, "inputs_sha256": digest}


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
    _remove_stale(target)
    _check_target(target, command, force)
    started = time.monotonic()
    tmp = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}{_TMP}{os.getpid()}-"))
    run = Run(tmp, inputs=[Path(p) for p in inputs])
    try:
        yield run
        record = {"command": command, "args": {k: _jsonable(v) for k, v in dict(args).items()},
                  "argv": sys.argv[1:], "modtok_version": modtok.__version__,
                  "created_utc": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                  **_inputs_record(run.inputs), **run.fields,
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
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


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
