"""Issue 43, items 7, 11 and 12: what a run read is what its run.json fingerprints (hashed as it
was read), trim and lm-train read the manifest every other command reads, and the messages of
a language without evaluation text, a lossy tokenizer, a symlink loop, a full disk and a
second writer say what happened in one line."""

from __future__ import annotations

import errno
import gzip
import hashlib
import json
import os
import subprocess
import sys
import textwrap
import time

import pytest

from modtok.errors import DataError
from modtok.outputs import output_dir, read_run
from modtok.text import counts, data
from modtok.text.corpus import open_corpus
from modtok.ui import cli

ENG = "".join(f"the cat number {i} sat on the mat\n" for i in range(40))


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@pytest.fixture
def manifest(tmp_path, monkeypatch):
    for env in ("MODTOK_POOL", "MODTOK_FLORES", "MODTOK_EVAL", "MODTOK_MANIFEST"):
        monkeypatch.delenv(env, raising=False)
    (tmp_path / "eng_Latn.txt").write_text(ENG, encoding="utf-8")
    m = tmp_path / "m.yaml"
    m.write_text("eng_Latn: [eng_Latn.txt]\n", encoding="utf-8")
    return m


# ---------------------------------------------------------------- 7: inputs hashed as read


def test_count_fingerprints_the_text_it_read_not_the_file_at_the_end(manifest, tmp_path, monkeypatch, capsys):
    """Lines appended after the count read the file once left run.json with the longer file's
    (path, size) fingerprint; now the row is the SHA-256 of the bytes the count read."""
    src = tmp_path / "eng_Latn.txt"
    counted = counts.count_corpora

    def count_then_append(*args, **kwargs):
        made = counted(*args, **kwargs)
        with open(src, "a", encoding="utf-8") as f:
            f.write("a line appended while the run was still going\n")
        return made

    monkeypatch.setattr(counts, "count_corpora", count_then_append)
    assert cli.main(["count", str(manifest), "-o", str(tmp_path / "c"), "--scheme", "whitespace"]) == 0
    (row,) = read_run(tmp_path / "c")["inputs"]
    assert row["path"] == str(src.resolve()) and row["hashed"] == "as read" and row["to_end"]
    assert row["bytes"] == len(ENG.encode()) and row["sha256"] == sha(ENG.encode()) != sha(src.read_bytes())


def test_run_json_args_are_the_options_the_command_ran_with(manifest, tmp_path, capsys):
    """Issue 45: ``run.json``'s ``args`` is ``asdict`` of the command's options object (what
    ``run`` was given), not the argparse namespace (which also held ``--force`` and the handler)."""
    from dataclasses import fields

    from modtok.studies import parity_bpe

    assert cli.main(["count", str(manifest), "-o", str(tmp_path / "c"), "--seed", "7", "--force"]) == 0
    args = read_run(tmp_path / "c")["args"]
    assert list(args) == [f.name for f in fields(counts.CountOptions)]
    assert args["seed"] == 7 and args["manifest"] == str(manifest) and args["partition_mb"] == 64
    assert cli.main(["parity-bpe", str(tmp_path / "p"), "--manifest", str(manifest), "--merges", "5",
                     "--ratios", "1"]) == 0
    args = read_run(tmp_path / "p")["args"]
    assert list(args) == [f.name for f in fields(parity_bpe.ParityOptions)]
    assert args["merges"] == 5 and args["ratios"] == [1.0] and args["manifest"] == str(manifest)
    assert args["out"] == str(tmp_path / "p")


def test_a_budget_fingerprints_the_bytes_it_stopped_at(manifest, tmp_path):
    """A budget stops the reader early: the row is the file's first bytes (the script check's
    look-ahead of SAMPLE_CHARS characters included), not the whole file."""
    big = "".join(f"the cat number {i} sat on the mat\n" for i in range(2000)).encode()
    (tmp_path / "eng_Latn.txt").write_bytes(big)
    assert cli.main(["count", str(manifest), "-o", str(tmp_path / "c"), "--max-chars", "100"]) == 0
    rec = read_run(tmp_path / "c")
    (row,) = rec["inputs"]
    head = big[: row["bytes"]]
    assert 20_000 <= row["bytes"] < len(big) and not row["to_end"] and row["sha256"] == sha(head)
    assert head.endswith(b"\n") and rec["languages"]["eng_Latn"]["lines"] == 3
    fingerprint = [[row["path"], 0, row["bytes"], row["sha256"]]]
    assert rec["inputs_sha256"] == sha(json.dumps(fingerprint).encode())


def test_compressed_parquet_and_whole_file_readers_feed_the_fingerprint(tmp_path):
    pa, pq = pytest.importorskip("pyarrow"), pytest.importorskip("pyarrow.parquet")
    (tmp_path / "a.txt.gz").write_bytes(gzip.compress(ENG.encode()))
    pq.write_table(pa.table({"text": ["one line", None, "two"]}), tmp_path / "b.parquet")
    (tmp_path / "pool.txt").write_text("whole\n", encoding="utf-8")
    with output_dir(tmp_path / "out", command="demo", args={}) as run:
        list(open_corpus(tmp_path / "a.txt.gz", lang="eng_Latn"))
        list(open_corpus(tmp_path / "b.parquet", lang="eng_Latn", skip_bad=True))
        data.read_lines(tmp_path / "pool.txt")
        run.add_inputs([tmp_path / "a.txt.gz"])  # named and read: one row, the read's
    rows = {os.path.basename(r["path"]): r for r in read_run(tmp_path / "out")["inputs"]}
    assert list(rows) == ["a.txt.gz", "b.parquet", "pool.txt"]
    assert rows["a.txt.gz"]["sha256"] == sha(ENG.encode()) and rows["a.txt.gz"]["of"] == "decompressed bytes"
    assert rows["b.parquet"]["sha256"] == sha(b"one line\n\0\ntwo\n") and rows["b.parquet"]["of"] == "text values"
    assert rows["pool.txt"]["sha256"] == sha(b"whole\n") and all(r["to_end"] for r in rows.values())


def test_nothing_is_hashed_outside_an_output_directory(tmp_path):
    """The readers feed a digest only while a run records one (a notebook's reads cost nothing)."""
    from modtok.outputs import reading

    assert reading(tmp_path / "x.txt") is None


# ---------------------------------------------------------------- 11: trim and lm-train read $MODTOK_MANIFEST


def test_trim_reads_modtok_manifest_and_says_so(manifest, tmp_path, monkeypatch, capsys):
    from modtok.artifacts import baselines

    base = tmp_path / "base"
    base.mkdir()
    baselines.train_hf_bpe(ENG.splitlines() * 5, 300).save(str(base / "tokenizer.json"))
    held = tmp_path / "held.txt"
    held.write_text("the cat sat\n", encoding="utf-8")
    argv = ["trim", str(base), "--langs", "eng_Latn", "--eval", str(held), "-o"]
    assert cli.main([*argv, str(tmp_path / "t0")]) == 2  # nothing to read: said in modtok's words
    err = capsys.readouterr().err
    assert "pass --manifest FILE" in err and "$MODTOK_MANIFEST" in err and "root=" not in err
    monkeypatch.setenv("MODTOK_MANIFEST", str(manifest))
    assert cli.main([*argv, str(tmp_path / "t")]) == 0
    assert f"usage text: manifest {manifest}" in capsys.readouterr().out
    assert read_run(tmp_path / "t")["usage_source"].startswith(f"manifest {manifest}")
    # a budget inside the first line cuts it, and says so ("the cat number 0 sat on the mat")
    assert cli.main([*argv[:-1], "--max-chars", "20", "-o", str(tmp_path / "t20")]) == 0
    said = "eng_Latn: its one line in the budget has 31 characters: cut at a space to 20"
    assert said in capsys.readouterr().out and said in read_run(tmp_path / "t20")["usage_source"]


def test_lm_train_takes_manifest_and_modtok_manifest_and_says_what_it_read(manifest, tmp_path, monkeypatch, capsys):
    pytest.importorskip("torch")
    tok = tmp_path / "tok"
    assert cli.main(["sequential-bpe", str(tok), "-k", "270", "--manifest", str(manifest)]) == 0
    capsys.readouterr()
    argv = ["lm-train", "--tokenizer", str(tok), "--scheme", "mono", "--steps", "2", "--batch-size", "2",
            "--seq-len", "16", "--warmup", "1", "--out"]
    assert cli.main([*argv, str(tmp_path / "a"), "--manifest", str(manifest)]) == 0
    err = capsys.readouterr().err
    assert f"training: manifest {manifest} (all of it), 40 lines of eng_Latn; tokenizer {tok}" in err
    monkeypatch.setenv("MODTOK_MANIFEST", str(manifest))
    assert cli.main([*argv, str(tmp_path / "b")]) == 0
    assert f"training: manifest {manifest}" in capsys.readouterr().err
    rec = read_run(tmp_path / "b")
    assert rec["training"].startswith(f"manifest {manifest}") and rec["languages"]["eng_Latn"]["lines"] == 40
    assert str((tmp_path / "eng_Latn.txt").resolve()) in [r["path"] for r in rec["inputs"]]
    # an earlier output is refused before the text is read (it was read, and tokenized, first)
    from modtok.text import data

    monkeypatch.setattr(data, "manifest_train", lambda *a: pytest.fail("read the text before the refusal"))
    assert cli.main([*argv, str(tmp_path / "b")]) == 2
    assert "pass --force to replace it" in capsys.readouterr().err


# ---------------------------------------------------------------- 12: what went wrong, in one line


def test_a_language_without_evaluation_text_is_not_called_unknown(tmp_path, monkeypatch, capsys):
    """`modtok nsl` on a tokenizer with a language the evaluation text lacks said "unknown
    language"; now it names the evaluation text and the languages it has."""
    pool, flores = tmp_path / "pool", tmp_path / "flores"
    pool.mkdir()
    (flores / "devtest").mkdir(parents=True)
    (pool / "eng_Latn.txt").write_text(ENG, encoding="utf-8")
    (pool / "npi_Deva.txt").write_text("बिरालो चटाईमा बस्यो अर्को बिरालो\n" * 40, encoding="utf-8")
    (flores / "devtest" / "eng_Latn.devtest").write_text("the cat sat\n", encoding="utf-8")
    monkeypatch.setenv("MODTOK_POOL", str(pool))
    monkeypatch.setenv("MODTOK_FLORES", str(flores))
    monkeypatch.delenv("MODTOK_EVAL", raising=False)
    monkeypatch.delenv("MODTOK_MANIFEST", raising=False)
    assert cli.main(["sequential-bpe", str(tmp_path / "tok"), "-k", "270"]) == 0
    capsys.readouterr()
    assert cli.main(["nsl", str(tmp_path / "tok"), "-k", "300"]) == 2
    err = capsys.readouterr().err
    assert (f"npi_Deva has no evaluation text in own evaluation text devtest ({flores}) "
            "(languages that have: eng_Latn)") in err
    assert "unknown language" not in err and err.count("\n") == 1


def test_nsl_trains_its_references_on_the_manifest_given(tmp_path, monkeypatch, capsys):
    """A new user's own language (Thai: not in wordfreq), no data configured: `modtok nsl` said
    "unknown language 'tha_Thai' (available: arb_Arab, ...)" with no word on why (the references
    were read from the wordfreq default) and had no way to name the text; now the error says
    where the training text came from and how to give one's own, and `--manifest` gives it."""
    for var in ("MODTOK_POOL", "MODTOK_FLORES", "MODTOK_EVAL", "MODTOK_MANIFEST"):
        monkeypatch.delenv(var, raising=False)
    text, ev = tmp_path / "text", tmp_path / "eval"
    text.mkdir(), ev.mkdir()
    thai = "แมวนั่งบนเสื่อ แมวอีกตัวนอนบนเก้าอี้\n"
    for name, body in (("eng_Latn", ENG), ("tha_Thai", thai * 40)):
        (text / f"{name}.txt").write_text(body, encoding="utf-8")
        (ev / f"{name}.txt").write_text(body.splitlines(keepends=True)[0] * 8, encoding="utf-8")
    manifest = tmp_path / "m.json"
    manifest.write_text(json.dumps({lang: [str(text / f"{lang}.txt")] for lang in ("eng_Latn", "tha_Thai")}))
    assert cli.main(["sequential-bpe", str(tmp_path / "tok"), "-k", "270", "--manifest", str(manifest)]) == 0
    capsys.readouterr()
    assert cli.main(["nsl", str(tmp_path / "tok"), "-k", "270", "--eval", str(ev)]) == 2
    err = capsys.readouterr().err
    assert "unknown language 'tha_Thai'" in err and "wordfreq default" in err and "--manifest" in err
    assert cli.main(["nsl", str(tmp_path / "tok"), "-k", "270", "--eval", str(ev), "--manifest", str(manifest)]) == 0
    out = capsys.readouterr().out
    assert [line.split()[0] for line in out.splitlines()[1:3]] == ["eng_Latn", "tha_Thai"]


def test_audit_says_why_a_tokenizer_is_not_lossless(tmp_path, capsys):
    """`modtok audit` printed "lossless False" alone; now the normaliser and the first line it changes."""
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers

    tok = Tokenizer(models.BPE({c: i for i, c in enumerate(pre_tokenizers.ByteLevel.alphabet())}, []))
    tok.pre_tokenizer, tok.decoder = pre_tokenizers.ByteLevel(add_prefix_space=False), decoders.ByteLevel()
    tok.normalizer = normalizers.NFC()
    tok.save(str(tmp_path / "tokenizer.json"))
    own = tmp_path / "own"
    own.mkdir()
    # Burmese as often typed: ASAT (U+103A, combining class 9) before DOT BELOW (U+1037, class 7);
    # NFC puts them in canonical order, so the line does not come back
    (own / "mya_Mymr.txt").write_text("မြန်မာ\nကျွန\u103a\u1037\nစာ\nပါ\n", encoding="utf-8")
    (own / "eng_Latn.txt").write_text("Myanmar\nI\nletter\nplease\n", encoding="utf-8")
    argv = ["audit", str(tmp_path / "tokenizer.json"), "--lang", "mya_Mymr", "--ref", "eng_Latn", "--eval", str(own)]
    assert cli.main(argv) == 0
    out = capsys.readouterr().out
    assert "False" in out
    assert ("not lossless: text: the tokenizer's NFC normaliser changes 1 of 3 lines (first: line 2, "
            "U+103A U+1037 -> U+1037)") in out
    assert cli.main([*argv, "--json"]) == 0
    row = json.loads(capsys.readouterr().out)
    assert row["lossless"] is False and row["lossless_note"].startswith("text: the tokenizer's NFC normaliser")


def test_a_symlink_loop_is_called_one(tmp_path):
    (tmp_path / "a.txt").symlink_to(tmp_path / "b.txt")
    (tmp_path / "b.txt").symlink_to(tmp_path / "a.txt")
    (tmp_path / "m.yaml").write_text("eng_Latn: [a.txt]\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"m.yaml, entry eng_Latn: .*a.txt: a symlink loop"):
        open_corpus(tmp_path / "m.yaml")
    with pytest.raises(DataError, match=r"a.txt: a symlink loop"):
        open_corpus(str(tmp_path / "*.txt"), lang="eng_Latn")  # a glob that matches it
    d = tmp_path / "dir"
    d.mkdir()
    (d / "ok.txt").write_text("fine\n", encoding="utf-8")
    (d / "x.txt").symlink_to(d / "x.txt")
    with pytest.raises(DataError, match=r"x.txt \(in the directory .*dir\): a symlink loop"):
        open_corpus(d, lang="eng_Latn")  # a walk once skipped it in silence
    (tmp_path / "loop.yaml").symlink_to(tmp_path / "loop.yaml")
    with pytest.raises(DataError, match=r"loop.yaml: a symlink loop"):
        open_corpus(tmp_path / "loop.yaml")
    with pytest.raises(DataError, match=r"loop.yaml: a symlink loop"):
        data.read_lines(tmp_path / "loop.yaml")


def test_disk_full_during_count_is_one_line_and_no_output(manifest, tmp_path, monkeypatch, capsys):
    def full(path, data):
        with open(path, "wb") as f:
            f.write(data[: len(data) // 2])
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))

    monkeypatch.setattr(counts, "write_bytes", full)
    assert cli.main(["count", str(manifest), "-o", str(tmp_path / "c")]) == 2
    printed = capsys.readouterr().err
    err = printed.splitlines()[-1]  # after the progress bar: one line, no traceback
    assert err.startswith("modtok: error: ") and "Traceback" not in printed and printed.count("modtok:") == 1
    assert "no space left on device (writing eng_Latn.parquet); nothing was written" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["eng_Latn.txt", "m.yaml"]


def test_a_second_count_into_one_out_is_refused_before_counting(manifest, tmp_path, capsys):
    out = tmp_path / "c"
    script = textwrap.dedent(f"""
        import pathlib, time
        from modtok.outputs import output_dir
        with output_dir({str(out)!r}, command="count", args={{}}):
            print("writing", flush=True)
            while not pathlib.Path({str(tmp_path / "go")!r}).exists():
                time.sleep(0.05)
    """)
    first = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        assert first.stdout.readline().strip() == "writing"
        started = time.monotonic()
        assert cli.main(["count", str(manifest), "-o", str(out)]) == 2
        took = time.monotonic() - started
    finally:
        (tmp_path / "go").touch()
        first.wait(30)
    err = capsys.readouterr().err
    assert f"is being written by another modtok run (pid {first.pid}, `modtok count` since" in err
    assert took < 5 and err.count("\n") == 1
