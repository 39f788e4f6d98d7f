"""modtok.outputs: a command's directory appears whole or not at all, never deletes what it did
not write, and records what made it."""

import errno
import hashlib
import json
import os
import signal
import subprocess
import sys
import textwrap

import pytest

from modtok.errors import OutputBusyError, OutputExistsError, OutputWriteError
from modtok.outputs import output_dir, read_run


def _write(target, command="count", force=False, files=("a.txt",), text="new"):
    with output_dir(target, command=command, args={"x": 1}, force=force) as run:
        for name in files:
            (run.path / name).write_text(text)
    return target


def test_run_json_records_command_inputs_and_files(tmp_path):
    src = tmp_path / "eng_Latn.txt"
    src.write_text("hello\nworld\n")
    with output_dir(tmp_path / "out", command="count", args={"k": 5, "path": src}, inputs=[src]) as run:
        (run.path / "counts.tsv").write_text("x\t1\n")
        run.record(languages={"eng_Latn": {"lines": 2, "chars": 10}}, evaluation="none")
    rec = read_run(tmp_path / "out")
    assert rec["command"] == "count" and rec["args"] == {"k": 5, "path": str(src)}
    # named, not read through modtok's readers: hashed (whole, being small) when the run ends, and said so
    assert rec["inputs"] == [{"path": str(src.resolve()), "bytes": 12, "to_end": True,
                              "sha256": hashlib.sha256(b"hello\nworld\n").hexdigest(),
                              "hashed": "at the end of the run (not read through modtok's readers in this process)"}]
    assert len(rec["inputs_sha256"]) == 64
    assert rec["files"] == {"counts.tsv": 4} and rec["languages"]["eng_Latn"]["lines"] == 2
    assert rec["wall_s"] >= 0 and rec["modtok_version"]


def test_failure_leaves_the_earlier_output_and_no_temporary(tmp_path):
    out = _write(tmp_path / "out", text="old")
    with pytest.raises(RuntimeError):
        with output_dir(out, command="count", args={}, force=True) as run:
            (run.path / "a.txt").write_text("half")
            raise RuntimeError("crash")
    assert (out / "a.txt").read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_an_existing_directory_is_never_emptied(tmp_path):
    notes = tmp_path / "mine"
    notes.mkdir()
    (notes / "notes.md").write_text("my notes")
    with pytest.raises(OutputExistsError, match="not a modtok output"):
        _write(notes)
    out = _write(tmp_path / "out")
    with pytest.raises(OutputExistsError, match="--force"):
        _write(out)
    with pytest.raises(OutputExistsError, match="not of 'trim'"):
        _write(out, command="trim", force=True)
    (out / "README.md").write_text("a user's file")
    with pytest.raises(OutputExistsError, match="README.md"):
        _write(out, force=True)
    assert (notes / "notes.md").read_text() == "my notes" and (out / "README.md").exists()


def test_force_replaces_an_earlier_output_of_the_same_command(tmp_path):
    out = _write(tmp_path / "out", files=("a.txt", "b.txt"), text="old")
    _write(out, force=True, files=("a.txt",), text="new")
    assert sorted(p.name for p in out.iterdir()) == ["a.txt", "run.json"]
    assert (out / "a.txt").read_text() == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_an_empty_directory_is_taken(tmp_path):
    (tmp_path / "out").mkdir()
    _write(tmp_path / "out")
    assert read_run(tmp_path / "out")["files"] == {"a.txt": 3}


def test_kill_9_mid_write_keeps_the_old_output_and_the_next_run_cleans_up(tmp_path):
    out = _write(tmp_path / "out", files=("a.txt", "b.txt"), text="old")
    script = textwrap.dedent(f"""
        import os, signal, time
        from modtok.outputs import output_dir
        with output_dir({str(out)!r}, command="count", args={{}}, force=True) as run:
            (run.path / "a.txt").write_text("new")
            print("written", flush=True)
            time.sleep(60)
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "written"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert {p.name for p in out.iterdir()} == {"a.txt", "b.txt", "run.json"}
    assert (out / "a.txt").read_text() == "old"                  # no mix of old and new
    assert any(p.name.startswith(".out.modtok-tmp-") for p in tmp_path.iterdir())
    _write(out, force=True, text="newer")                          # the next run removes the crash's leftovers
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
    assert (out / "a.txt").read_text() == "newer" and json.loads((out / "run.json").read_text())["files"] == {"a.txt": 5}


def _holder(out, tmp_path):
    """A second process writing ``out`` (it holds the lock), until ``tmp_path / 'go'`` appears."""
    script = textwrap.dedent(f"""
        import pathlib, time
        from modtok.outputs import output_dir
        with output_dir({str(out)!r}, command="count", args={{}}) as run:
            print("writing", flush=True)
            while not pathlib.Path({str(tmp_path / "go")!r}).exists():
                time.sleep(0.05)
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "writing"
    return proc


def test_a_second_writer_is_refused_at_once_naming_the_first(tmp_path):
    """Two runs into one OUT: the second was refused only after all its work (the final check);
    now the lock refuses it before its body runs, naming the first writer's pid."""
    out = tmp_path / "out"
    first = _holder(out, tmp_path)
    ran = []
    try:
        with pytest.raises(OutputBusyError, match=f"being written by another modtok run \\(pid {first.pid}"):
            with output_dir(out, command="count", args={}) as run:
                ran.append(run)  # the work a second writer would do
    finally:
        (tmp_path / "go").touch()
        first.wait(30)
    assert not ran and read_run(out)["command"] == "count"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["go", "out"]  # the lock went with its run


def test_a_stale_lock_is_no_obstacle(tmp_path):
    out = tmp_path / "out"
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    lock = tmp_path / ".out.modtok-lock"
    lock.write_text(json.dumps({"pid": int(gone.stdout), "host": os.uname().nodename, "command": "count"}))
    _write(out)                                   # its writer is gone: taken over
    assert read_run(out)["files"] == {"a.txt": 3} and not lock.exists()
    lock.write_text("")                           # a writer killed while writing its lock
    _write(out, force=True)
    assert not lock.exists()


def test_disk_full_is_one_modtok_error_and_leaves_nothing(tmp_path):
    out = _write(tmp_path / "out", text="old")
    with pytest.raises(OutputWriteError, match="no space left on device \\(writing b.txt\\); nothing was written"):
        with output_dir(out, command="count", args={}, force=True) as run:
            (run.path / "a.txt").write_text("half")
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(run.path / "b.txt"))
    assert (out / "a.txt").read_text() == "old" and sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_the_lock_works_without_hard_links(tmp_path, monkeypatch):
    """A filesystem without hard links (os.link refused): the lock is an exclusive create instead."""
    def no_links(src, dst):
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(os, "link", no_links)
    out = tmp_path / "out"
    with output_dir(out, command="count", args={}) as run:
        held = json.loads((tmp_path / ".out.modtok-lock").read_text())
        assert held["pid"] == os.getpid() and held["command"] == "count"
        with pytest.raises(OutputBusyError, match=f"pid {os.getpid()}"):
            with output_dir(out, command="count", args={}):
                pass
        (run.path / "a.txt").write_text("x")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
