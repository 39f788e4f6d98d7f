"""Pre-token counts: Dask on a 2-worker LocalCluster gives exactly the
single-process counts; the counts artifact round-trips byte-identically; trainers
and the CLI give the same tokenizer from saved counts, from a manifest of Parquet
shards and from the plain-text pool."""

from __future__ import annotations

import gzip
import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import zstandard

from modtok.bpe import standard
from modtok.bpe.concat import train_concat
from modtok.bpe.continued import continue_training
from modtok.bpe.sequential import train_sequential
from modtok.errors import DataError, RecordError, UnknownLanguageError
from modtok.text import data
from modtok.text.corpus import open_corpus
from modtok.text.counts import Counts, count_corpora, group_parts, load_counts, local_client, read_meta
from modtok.text.counts import summary as cli_summary
from modtok.text.pretokenize import count_by_language
from modtok.ui import cli

LANGS = ["eng_Latn", "deu_Latn", "hin_Deva"]


@pytest.fixture(scope="module")
def lines():
    """Pseudo-sentences from the embedded wordfreq lists (no shared data needed)."""
    return data.load_wordfreq(LANGS, n_lines=400, seed=3)


def _write_shards(root, lines):
    """Each language in a different layout: uncompressed JSONL (byte ranges),
    zst + gz JSONL (whole-file parts), Parquet with many row groups."""
    root.mkdir(exist_ok=True)
    eng, deu, hin = (lines[lang] for lang in LANGS)
    with open(root / "eng.jsonl", "w", encoding="utf-8") as f:
        for i in range(0, len(eng), 3):  # three lines per document
            f.write(json.dumps({"text": "\n".join(eng[i : i + 3])}, ensure_ascii=False) + "\n")
    half = len(deu) // 2
    for name, part, pack in (("deu-0.jsonl.zst", deu[:half], zstandard.ZstdCompressor().compress),
                             ("deu-1.jsonl.gz", deu[half:], gzip.compress)):
        (root / name).write_bytes(pack("".join(json.dumps({"text": s}) + "\n" for s in part).encode()))
    pq.write_table(pa.table({"text": hin}), root / "hin.parquet", row_group_size=25)
    return {"eng_Latn": [str(root / "eng.jsonl")], "deu_Latn": [str(root / "deu-*")],
            "hin_Deva": [str(root / "hin.parquet")]}


@pytest.fixture(scope="module")
def client():
    with local_client(2) as c:
        assert len(c.scheduler_info()["workers"]) == 2
        yield c


def test_dask_counts_are_identical_to_the_single_process_counter(tmp_path, lines, client):
    manifest = _write_shards(tmp_path / "s", lines)
    corpora = open_corpus(manifest)
    assert {lang: c.lines() for lang, c in corpora.items()} == lines  # the shards hold the same lines
    reference = count_by_language(lines, "llama3")
    one = count_corpora(corpora, "llama3")
    assert one.by_lang == reference
    tasks = sum(len(group_parts(c.parts(2000), 2000)) for c in corpora.values())
    assert tasks > 20  # byte ranges and row groups, so the tree has several levels
    dask = count_corpora(corpora, "llama3", client=client, partition_bytes=2000, fan_in=2)
    assert dask.by_lang == reference
    assert dask.stats == one.stats and list(dask.by_lang) == LANGS


def test_dask_sampling_and_skipped_records_match_one_process(tmp_path, lines, client):
    manifest = _write_shards(tmp_path / "s", lines)
    bad = tmp_path / "s" / "eng.jsonl"
    with open(bad, "a") as f:
        f.write('{"text": 1}\n{oops\n' + json.dumps({"text": "tail line"}) + "\n")
    corpora = open_corpus(manifest, sample=0.5, seed=7, skip_bad=True)
    one = count_corpora(corpora, "llama3")
    dask = count_corpora(corpora, "llama3", client=client, partition_bytes=1500)
    assert dask.by_lang == one.by_lang
    assert dask.stats == one.stats
    assert one.stats["eng_Latn"]["skipped"] == {"field 'text' not a string": 1, "bad JSON": 1}
    assert one.stats["eng_Latn"]["units"] < len(lines["eng_Latn"])  # sampled
    # without skip_bad, the worker's error reaches the caller with its line number
    n_docs = -(-len(lines["eng_Latn"]) // 3)
    with pytest.raises(RecordError, match=f"eng.jsonl: field 'text' is int, not a string \\(line {n_docs + 1},"):
        count_corpora(open_corpus(manifest), "llama3", client=client, partition_bytes=1500)



@pytest.mark.parametrize("budget", [1, 50, 999, 5000, 12_345, 10**9])
def test_dask_character_budget_cuts_where_one_process_does(tmp_path, lines, client, budget):
    manifest = _write_shards(tmp_path / "s", lines)
    bad = tmp_path / "s" / "eng.jsonl"
    with open(bad, "a") as f:  # a bad record after the cut is never read by one process
        f.write("{oops\n")
    corpora = open_corpus(manifest, max_chars=budget, sample=0.8, seed=1)
    if budget > 10**8:
        with pytest.raises(RecordError, match="bad JSON"):
            count_corpora(corpora, "llama3", client=client, partition_bytes=700)
        return
    one = count_corpora(corpora, "llama3")
    dask = count_corpora(corpora, "llama3", client=client, partition_bytes=700, fan_in=3)
    assert dask.by_lang == one.by_lang and dask.stats == one.stats
    assert all(s["chars"] <= budget or s["units"] == 1 for s in one.stats.values())


def test_a_budget_inside_the_first_line_is_said_saved_and_printed(tmp_path, client):
    """A budget that runs out inside a language's first line cuts it at a boundary: the cut is
    in the stats (one process and Dask alike), in meta.json, and in the lines `modtok count`
    prints; a budget at a line's end cuts nothing and says nothing."""
    (tmp_path / "eng.txt").write_text("hello world this is a line\nsecond line\n", encoding="utf-8")
    manifest = {"eng_Latn": [str(tmp_path / "eng.txt")]}
    one = count_corpora(open_corpus(manifest, max_chars=20), "llama3")
    dask = count_corpora(open_corpus(manifest, max_chars=20), "llama3", client=client)
    assert one.stats["eng_Latn"]["budget_cut"] == [26, 19, "a space"] and dask.stats == one.stats
    assert one.by_lang["eng_Latn"] == count_by_language({"x": ["hello world this is"]}, "llama3")["x"]
    again = Counts.load(one.save(tmp_path / "counts"))
    assert again.stats["eng_Latn"]["budget_cut"] == [26, 19, "a space"]
    printed = cli_summary(again)
    assert printed[1] == "eng_Latn: its one line in the budget has 26 characters: cut at a space to 19 (the character budget)"
    whole = count_corpora(open_corpus(manifest, max_chars=26), "llama3")
    assert whole.stats["eng_Latn"]["budget_cut"] is None and len(cli_summary(whole)) == 1


def test_counts_artifact_round_trip_schema_and_determinism(tmp_path, lines):
    corpora = open_corpus(_write_shards(tmp_path / "s", lines))
    counts = count_corpora(corpora, "llama3")
    a, b = counts.save(tmp_path / "a"), count_corpora(corpora, "llama3").save(tmp_path / "b")
    for name in ["meta.json"] + [f"{lang}.parquet" for lang in LANGS]:
        assert (a / name).read_bytes() == (b / name).read_bytes(), name
    assert sorted(p.name for p in a.iterdir()) == sorted(["meta.json", "run.json"] + [f"{lang}.parquet" for lang in LANGS])
    meta = read_meta(a)
    assert meta["scheme"] == "llama3" and list(meta["languages"]) == LANGS
    table = pq.read_table(a / "hin_Deva.parquet")
    assert table.schema.names == ["pretoken", "count"] and table.schema.field("count").type == pa.int64()
    rows = list(zip(table.column("pretoken").to_pylist(), table.column("count").to_pylist()))
    assert rows == sorted(counts.by_lang["hin_Deva"].items(), key=lambda kv: (-kv[1], kv[0]))
    assert meta["languages"]["hin_Deva"]["tokens"] == sum(counts.by_lang["hin_Deva"].values())
    assert load_counts(a) == counts.by_lang
    assert list(load_counts(a, ["hin_Deva", "eng_Latn"])) == ["hin_Deva", "eng_Latn"]
    assert Counts.load(a).stats == counts.stats
    with pytest.raises(DataError, match="made with pre-tokenizer 'llama3', not 'gpt2'"):
        load_counts(a, scheme="gpt2")
    with pytest.raises(UnknownLanguageError):
        load_counts(a, ["xxx_Latn"])
    with pytest.raises(DataError, match="no readable run.json"):
        load_counts(tmp_path / "s")


def test_trainers_give_the_same_model_from_saved_counts(tmp_path, lines):
    saved = count_corpora(open_corpus(_write_shards(tmp_path / "s", lines)), "llama3").save(tmp_path / "c")
    counts = load_counts(saved)
    fresh = count_by_language(lines, "llama3")
    assert standard.train(counts, 600).merges == standard.train(fresh, 600).merges
    for train in (train_sequential, train_concat):
        a, b = train(counts, 400), train(fresh, 400)
        assert a.model.merges == b.model.merges and a.lang_to_ids == b.lang_to_ids
    base = standard.train(counts["eng_Latn"], 300)
    assert continue_training(base, counts["hin_Deva"], 50).merges == continue_training(base, fresh["hin_Deva"], 50).merges


@pytest.fixture
def tiny_pool(tmp_path, monkeypatch, lines):
    """The wordfreq lines as a plain-text pool (+ a token FLORES dir the pool path needs)."""
    pool, flores = tmp_path / "pool", tmp_path / "flores" / "devtest"
    pool.mkdir()
    flores.mkdir(parents=True)
    for lang in LANGS:
        (pool / f"{lang}.txt").write_text("\n".join(lines[lang]) + "\n", encoding="utf-8")
        (flores / f"{lang}.devtest").write_text(lines[lang][0] + "\n", encoding="utf-8")
    monkeypatch.setenv("MODTOK_POOL", str(pool))
    monkeypatch.setenv("MODTOK_FLORES", str(flores.parent))
    return pool


def test_sequential_bpe_from_parquet_manifest_and_from_counts_equals_the_pool(tmp_path, tiny_pool, lines):
    shards = tmp_path / "parquet"
    shards.mkdir()
    for lang in LANGS:  # three Parquet shards per language
        third = -(-len(lines[lang]) // 3)
        for i in range(3):
            pq.write_table(pa.table({"text": lines[lang][i * third : (i + 1) * third]}),
                           shards / f"{lang}-{i}.parquet", row_group_size=40)
    manifest = tmp_path / "m.yaml"
    manifest.write_text("".join(f"{lang}: ['parquet/{lang}-*.parquet']\n" for lang in LANGS))
    k = ["-k", "420", "--langs", *LANGS]
    assert cli.main(["sequential-bpe", str(tmp_path / "pool-tok"), *k]) == 0
    assert cli.main(["sequential-bpe", str(tmp_path / "manifest-tok"), *k, "--manifest", str(manifest)]) == 0
    assert cli.main(["count", str(manifest), "-o", str(tmp_path / "counts")]) == 0  # the training default
    assert cli.main(["sequential-bpe", str(tmp_path / "counts-tok"), *k, "--counts", str(tmp_path / "counts")]) == 0
    for name in ("tokenizer.json", "lang_to_ids.json"):
        pool_bytes = (tmp_path / "pool-tok" / name).read_bytes()
        assert (tmp_path / "manifest-tok" / name).read_bytes() == pool_bytes, name
        assert (tmp_path / "counts-tok" / name).read_bytes() == pool_bytes, name
    assert len(json.loads((tmp_path / "pool-tok" / "tokenizer.json").read_text())["model"]["merges"]) > 100


def test_cli_count_on_a_local_cluster_writes_the_same_files(tmp_path, lines, capsys):
    manifest = tmp_path / "m.json"
    manifest.write_text(json.dumps(_write_shards(tmp_path / "s", lines)))
    assert cli.main(["count", str(manifest), "-o", str(tmp_path / "one")]) == 0
    assert cli.main(["count", str(manifest), "-o", str(tmp_path / "two"), "--workers", "2",
                     "--partition-mb", "1"]) == 0
    out = capsys.readouterr().out
    assert "eng_Latn: " in out and "saved counts (llama3-marks-bounded)" in out
    for p in (tmp_path / "one").iterdir():
        if p.name != "run.json":  # its arguments and wall time differ
            assert (tmp_path / "two" / p.name).read_bytes() == p.read_bytes(), p.name
    assert cli.main(["count", str(manifest), "-o", str(tmp_path / "x"), "--langs", "xxx_Latn"]) == 2
    assert cli.main(["sequential-bpe", str(tmp_path / "t"), "--counts", str(tmp_path / "one"),
                     "--manifest", str(manifest)]) == 2
    assert "not both" in capsys.readouterr().err
    assert cli.main(["count", str(manifest), "-o", str(tmp_path / "y"), "--scheduler", "tcp://127.0.0.1:9",
                     "--connect-timeout", "1"]) == 2  # nothing listens on the discard port
    assert "cannot reach the Dask scheduler at tcp://127.0.0.1:9" in capsys.readouterr().err
    assert not (tmp_path / "y").exists()


def test_modular_unigram_from_a_manifest_equals_the_pool(tmp_path, tiny_pool, lines):
    shards = tmp_path / "jsonl"
    shards.mkdir()
    for lang in LANGS:
        docs = "".join(json.dumps({"text": s}, ensure_ascii=False) + "\n" for s in lines[lang])
        (shards / f"{lang}.jsonl.gz").write_bytes(gzip.compress(docs.encode()))
    manifest = tmp_path / "m.json"
    manifest.write_text(json.dumps({lang: [f"jsonl/{lang}.jsonl.gz"] for lang in LANGS}))
    k = ["-k", "320", "--em-iters", "1", "--langs", *LANGS[:2]]
    assert cli.main(["modular-unigram", str(tmp_path / "pool-uni"), *k]) == 0
    assert cli.main(["modular-unigram", str(tmp_path / "manifest-uni"), *k, "--manifest", str(manifest)]) == 0
    for name in ("tokenizer.json", "lang_to_ids.json"):
        assert (tmp_path / "manifest-uni" / name).read_bytes() == (tmp_path / "pool-uni" / name).read_bytes()


def test_a_failing_dask_task_is_reported_once_without_a_worker_traceback(tmp_path, capfd):
    """The workers (child processes, so capfd) logged "Compute Failed" and a traceback before
    the CLI's one-line error; now the error is the only thing said."""
    (tmp_path / "a.jsonl").write_text('{"text": "ok"}\n{not json\n')
    (tmp_path / "m.yaml").write_text("eng_Latn: [a.jsonl]\n")
    assert cli.main(["count", str(tmp_path / "m.yaml"), "-o", str(tmp_path / "out"), "--workers", "2"]) == 2
    err = capfd.readouterr().err
    assert "a.jsonl: bad JSON" in err and "(line 2, byte offset 16)" in err
    assert "Compute Failed" not in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()


def test_sequential_bpe_refuses_a_counts_directory_that_is_not_the_one_count_wrote(tmp_path, lines, capsys):
    """A file removed, a file added, a language's file swapped for another's: each is refused
    naming the file (the old check compared type counts only, and trained on a mix)."""
    import shutil

    manifest = tmp_path / "m.json"
    manifest.write_text(json.dumps(_write_shards(tmp_path / "s", lines)))
    assert cli.main(["count", str(manifest), "-o", str(tmp_path / "whole")]) == 0
    capsys.readouterr()

    def broken(name, edit):
        d = tmp_path / name
        shutil.copytree(tmp_path / "whole", d)
        edit(d)
        return d

    cases = {
        broken("removed", lambda d: (d / "deu_Latn.parquet").unlink()): "missing: deu_Latn.parquet",
        broken("added", lambda d: (d / "notes.txt").write_text("mine")): "not in its run.json: notes.txt",
        broken("swapped", lambda d: shutil.copy(d / "hin_Deva.parquet", d / "eng_Latn.parquet")):
            "eng_Latn.parquet has",
    }
    for counts_dir, message in cases.items():
        assert cli.main(["sequential-bpe", str(tmp_path / "out"), "-k", "300", "--counts", str(counts_dir)]) == 2
        err = capsys.readouterr().err
        assert message in err and "run `modtok count` again" in err, err
        assert not (tmp_path / "out").exists()
    assert cli.main(["sequential-bpe", str(tmp_path / "out"), "-k", "300", "--counts", str(tmp_path / "whole")]) == 0


def test_sigterm_during_count_leaves_no_temporary_and_the_earlier_counts(tmp_path):
    """``kill`` (SIGTERM, a batch system's time limit) during ``modtok count`` left an empty hidden
    temporary directory beside the output until the next run; now it is removed as on Ctrl-C, the
    command says so in one line and exits 143, and the earlier counts are as they were."""
    import random
    import signal
    import subprocess
    import sys
    import time

    from conftest import REPO

    rng, words = random.Random(0), "the cat sat on a mat with another dog and its friend".split()
    (tmp_path / "eng_Latn.txt").write_text("".join(" ".join(rng.choices(words, k=12)) + "\n" for _ in range(300_000)))
    manifest, out = tmp_path / "m.yaml", tmp_path / "counts"
    manifest.write_text("eng_Latn: [eng_Latn.txt]\n")
    assert cli.main(["count", str(manifest), "-o", str(out), "--max-chars", "1000"]) == 0  # the earlier counts
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    # the whole 16 MB counted again (about 2 s): terminated once its temporary directory is there
    proc = subprocess.Popen([sys.executable, "-m", "modtok", "count", str(manifest), "-o", str(out), "--force"],
                            cwd=REPO, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not any(p.name.startswith(".counts.modtok-tmp-") for p in tmp_path.iterdir()):
        assert proc.poll() is None and time.monotonic() < deadline, "the count ended before it was seen running"
        time.sleep(0.01)
    proc.send_signal(signal.SIGTERM)
    err = proc.communicate(timeout=60)[1]
    assert proc.returncode == 143, err  # 128 + SIGTERM; 0 would be a count that ended first
    assert err.splitlines()[-1] == "modtok: terminated" and "Traceback" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["counts", "eng_Latn.txt", "m.yaml"]
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before


def test_kill_9_during_count_keeps_the_earlier_counts_whole(tmp_path, lines):
    """``modtok count --force`` killed (SIGKILL) after it wrote its first language's file: the
    earlier counts directory is intact, byte for byte, and still loads; the next run leaves no
    temporary sibling behind."""
    import os
    import signal
    import subprocess
    import sys
    import textwrap

    manifest = tmp_path / "m.json"
    manifest.write_text(json.dumps(_write_shards(tmp_path / "s", lines)))
    out = tmp_path / "counts"
    assert cli.main(["count", str(manifest), "-o", str(out), "--langs", "eng_Latn", "hin_Deva"]) == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    # the real command, stalled after its first file (written through modtok.atomic.write_bytes)
    script = textwrap.dedent(f"""
        import sys, time
        from modtok.text import counts
        from modtok.ui import cli
        real = counts.write_bytes
        def stall(path, data):
            real(path, data)
            print("written", path.name, flush=True)
            time.sleep(60)
        counts.write_bytes = stall
        sys.exit(cli.main(["count", {str(manifest)!r}, "-o", {str(out)!r}, "--force"]))
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().startswith("written")
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before  # no mix of old and new
    assert list(load_counts(out)) == ["eng_Latn", "hin_Deva"]
    assert cli.main(["count", str(manifest), "-o", str(out), "--force"]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["counts", "m.json", "s"]  # leftovers removed
    assert list(load_counts(out)) == LANGS


def test_count_records_and_says_the_pre_tokens_cut_in_text_without_spaces(tmp_path, lines, capsys):
    """Issue 43 #14: a Japanese line without spaces is cut into pieces of at most 16 by the
    training default; `modtok count` records how many pre-tokens each rule cut (meta.json
    ``cut``, read back by Counts.load), prints it, and the counts on Dask carry the same;
    sequential-bpe from text says it too."""
    jpn = ["東京タワーは東京都港区芝公園にある総合電波塔である" * 3, "日本語のテキスト", "iPhoneの画面"]
    (tmp_path / "jpn.txt").write_text("\n".join(jpn) + "\n", encoding="utf-8")
    (tmp_path / "eng.txt").write_text("\n".join(lines["eng_Latn"][:50]) + "\n", encoding="utf-8")
    manifest = tmp_path / "m.json"
    manifest.write_text(json.dumps({"jpn_Jpan": [str(tmp_path / "jpn.txt")], "eng_Latn": [str(tmp_path / "eng.txt")]}))
    assert cli.main(["count", str(manifest), "-o", str(tmp_path / "c")]) == 0
    out = capsys.readouterr().out
    assert ("jpn_Jpan: " in out and "2 pre-tokens cut (1 with a run over 16 characters of one script, "
            "1 at a change of script only)" in out), out
    meta = read_meta(tmp_path / "c")
    assert meta["languages"]["jpn_Jpan"]["cut"] == {"length": 1, "script": 1}
    assert meta["languages"]["eng_Latn"]["cut"] == {}
    counts = Counts.load(tmp_path / "c")
    assert counts.stats["jpn_Jpan"]["cut"] == {"length": 1, "script": 1}
    pieces = counts.by_lang["jpn_Jpan"]
    assert max(map(len, pieces)) == 16 and sum(len(p) * n for p, n in pieces.items()) == sum(map(len, jpn))
    assert counts.by_lang == count_by_language({"jpn_Jpan": jpn, "eng_Latn": lines["eng_Latn"][:50]},
                                               "llama3-marks-bounded")
    for source in (["--manifest", str(manifest)], ["--counts", str(tmp_path / "c")]):  # from text, from the counts
        assert cli.main(["sequential-bpe", str(tmp_path / "seq"), "-k", "300", "--force", *source]) == 0
        err = capsys.readouterr().err
        assert "jpn_Jpan: 2 pre-tokens cut" in err and "eng_Latn: " not in err.split("pre-tokenizer")[-1], err


def test_dask_counts_carry_the_cuts_of_one_process(tmp_path, client):
    (tmp_path / "tha.txt").write_text("ประเทศไทยมีประชากรประมาณหกสิบหกล้านคน\nภาษาไทย abcไทย\n" * 40, encoding="utf-8")
    corpora = open_corpus({"tha_Thai": [str(tmp_path / "tha.txt")]})
    one = count_corpora(corpora, "whitespace")
    on_dask = count_corpora(open_corpus({"tha_Thai": [str(tmp_path / "tha.txt")]}), "whitespace", client=client,
                            partition_bytes=1 << 10)
    assert one.by_lang == on_dask.by_lang and one.stats == on_dask.stats
    assert one.stats["tha_Thai"]["cut"] == {"length": 40, "script": 40}


@pytest.mark.parametrize("scheme", ["llama3", "llama3-marks-bounded"])
def test_streamed_arrays_equal_the_regex_counter_on_growing_vocabulary(tmp_path, monkeypatch, scheme):
    """Issue 44: streaming counting sums each chunk's words as arrays (counts.Words, a binary
    counter of parts) and makes the Counter once at the end. On text whose distinct words keep
    growing (wordfreq draws over 30k words and three scripts, Hindi's without spaces between
    some words; a number per line never seen before), cut into many chunks so that parts are
    summed at several levels, the counts equal the ``regex`` engine's Counter of the whole text
    word for word, and in its order (first occurrence); at most log2(chunks) + 1 parts are held."""
    from modtok.text import counts as counts_module

    drawn = data.load_wordfreq(LANGS, n_lines=700, seed=11, top_n=30_000)
    text = [f"{line} n{i * 7919}" for lang in LANGS for i, line in enumerate(drawn[lang])]
    (tmp_path / "x.txt").write_text("\n".join(text) + "\n", encoding="utf-8")
    want = count_by_language({"x": text}, scheme, engine="regex")["x"]
    assert len(want) > 8000  # growing: most chunks bring words no earlier chunk had
    monkeypatch.setattr(counts_module, "CHUNK_UNITS", 37)  # 57 chunks: six levels of sums
    held = []
    add = counts_module.Words.add

    def watched(self, *part):
        add(self, *part)
        held.append(len(self.parts))

    monkeypatch.setattr(counts_module.Words, "add", watched)
    for engine in ("lexer", "regex"):
        held.clear()
        got = count_corpora(open_corpus({"x": [str(tmp_path / "x.txt")]}), scheme, engine=engine)
        assert got.by_lang["x"] == want and list(got.by_lang["x"]) == list(want), engine
        assert len(held) == 57 and max(held) <= 6 and held[-1] == bin(57).count("1")  # 57 = 0b111001
