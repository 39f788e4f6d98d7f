"""modtok.outputs: a command's directory appears whole or not at all, never deletes what it did
not write, and records what made it."""

import json
import os
import signal
import subprocess
import sys
import textwrap

import pytest

from modtok.errors import OutputExistsError
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
    assert rec["inputs"] == [{"path": str(src.resolve()), "bytes": 12}] and len(rec["inputs_sha256"]) == 16
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
