"""open_corpus: every format gives the plain-text loader's lines; budget, sampling,
partitions, manifests; each bad input gives its error (file, line/row, byte offset)
or is skipped and counted."""

from __future__ import annotations

import bz2
from collections import Counter
import gzip
import json
import lzma
import random

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import zstandard
from hypothesis import given, settings
from hypothesis import strategies as st

from modtok.errors import (
    DataError,
    EncodingError,
    RecordEncodingError,
    RecordError,
    ShardError,
    UnknownLanguageError,
)
from modtok.text import data
from modtok.text.corpus import Part, ReadOptions, detect, open_corpus, partition, read_part
from modtok.text.corpus import records as corpus_records

# Documents with what loaders trip over: decomposed accents (NFC), CRLF, blank and
# whitespace-only lines, Devanagari marks, a tab, an emoji.
DOCS = [
    "Cafe\u0301 au lait\r\nsecond line",
    "नमस्ते संसार",
    "  \n\nafter blanks\t tab",
    "emoji 🙂 and ß",
    "one",
    "x" * 50,
] + [" ".join(random.Random(i).choice(["a", "bb", "ccc", "दद", "é"]) for _ in range(8)) for i in range(60)]


def _text(docs=DOCS) -> str:
    return "\n".join(docs) + "\n"


def _reference(tmp_path):
    path = tmp_path / "ref.txt"
    path.write_text(_text(), encoding="utf-8", newline="")
    return data.read_lines(path)


def _jsonl(docs=DOCS) -> bytes:
    return "".join(json.dumps({"id": i, "text": d}, ensure_ascii=False) + "\n" for i, d in enumerate(docs)).encode()


def _write_parquet(path, docs, row_group_size=7):
    pq.write_table(pa.table({"id": list(range(len(docs))), "text": docs}), path, row_group_size=row_group_size)


@pytest.fixture
def shards(tmp_path):
    """The same documents in every format; plain text keeps one unit per line."""
    d = tmp_path / "shards"
    d.mkdir()
    text = _text().encode()
    (d / "a.txt").write_bytes(text)
    (d / "a.txt.gz").write_bytes(gzip.compress(text))
    (d / "a.txt.zst").write_bytes(zstandard.ZstdCompressor().compress(text))
    (d / "a.jsonl").write_bytes(_jsonl())
    (d / "a.jsonl.gz").write_bytes(gzip.compress(_jsonl()))
    (d / "a.jsonl.zst").write_bytes(zstandard.ZstdCompressor().compress(_jsonl()))
    (d / "a.txt.bz2").write_bytes(bz2.compress(text))
    (d / "a.jsonl.xz").write_bytes(lzma.compress(_jsonl()))
    _write_parquet(d / "a.parquet", DOCS)
    return d


@pytest.mark.parametrize("name", ["a.txt", "a.txt.gz", "a.txt.zst", "a.jsonl", "a.jsonl.gz", "a.jsonl.zst",
                                  "a.txt.bz2", "a.jsonl.xz", "a.parquet"])
def test_every_file_format_gives_the_plain_text_lines(shards, tmp_path, name):
    ref = _reference(tmp_path)
    assert len(ref) > 60 and "Cafe\u0301 au lait" in ref  # raw text, as the papers use it
    corpus = open_corpus(shards / name, lang="eng_Latn")
    assert list(corpus) == ref
    assert list(corpus) == ref  # a second pass re-reads
    assert corpus.n_units == len(ref) and corpus.chars == sum(map(len, ref)) and not corpus.skipped
    nfc = open_corpus(shards / name, lang="eng_Latn", normalization="NFC")
    assert list(nfc) == data.read_lines(tmp_path / "ref.txt", normalization="NFC") and "Café au lait" in list(nfc)


def test_directories_globs_and_lists_read_files_in_sorted_order(shards, tmp_path):
    ref = _reference(tmp_path)
    split = tmp_path / "split"
    (split / "sub").mkdir(parents=True)
    (split / "b.jsonl.zst").write_bytes(zstandard.ZstdCompressor().compress(_jsonl(DOCS[20:40])))
    _write_parquet(split / "a.parquet", DOCS[:20], row_group_size=3)
    (split / "sub" / "c.txt.gz").write_bytes(gzip.compress(_text(DOCS[40:]).encode()))
    (split / "README.md").write_text("not text of the corpus\n")  # other suffixes are skipped in a walk
    (split / ".hidden.txt").write_text("hidden\n")
    assert list(open_corpus(split, lang="x")) == ref
    assert list(open_corpus(str(split / "**" / "*.*"), lang="x"))[-1] == ref[-1]
    assert list(open_corpus([split / "a.parquet", str(split / "b.*"), split / "sub"], lang="x")) == ref
    with pytest.raises(DataError, match="no file matches"):
        open_corpus(str(tmp_path / "nothing-*.jsonl"), lang="x")
    with pytest.raises(DataError, match="no such file"):
        open_corpus(tmp_path / "missing.txt", lang="x")
    with pytest.raises(DataError, match="lang="):
        open_corpus(shards / "a.txt")


def test_hf_datasets_saved_to_disk_and_arrow_files(tmp_path):
    datasets = pytest.importorskip("datasets")
    ref = _reference(tmp_path)
    datasets.Dataset.from_dict({"text": DOCS}).save_to_disk(str(tmp_path / "ds"), num_shards=3)
    assert list(open_corpus(tmp_path / "ds", lang="x")) == ref
    dd = datasets.DatasetDict({"train": datasets.Dataset.from_dict({"text": DOCS}),
                               "test": datasets.Dataset.from_dict({"text": ["held out"]})})
    dd.save_to_disk(str(tmp_path / "dd"))
    # no split named: every split, in dataset_dict.json's order, and the description says which
    every = open_corpus(tmp_path / "dd", lang="x")
    assert list(every) == ref + ["held out"]
    assert "(split train)" in every.describe() and "(split test)" in every.describe()
    train = open_corpus(tmp_path / "dd", lang="x", split="train")
    assert list(train) == ref and "(split train)" in train.describe() and "split test" not in train.describe()
    assert list(open_corpus(tmp_path / "dd", lang="x", split="test")) == ["held out"]
    with pytest.raises(DataError, match="splits"):
        open_corpus(tmp_path / "dd", lang="x", split="validation")
    # a dataset inside a directory walk: its Arrow files, not its metadata
    (tmp_path / "walk").mkdir()
    datasets.Dataset.from_dict({"text": DOCS}).save_to_disk(str(tmp_path / "walk" / "ds"))
    assert list(open_corpus(tmp_path / "walk", lang="x")) == ref
    (tmp_path / "ds" / "state.json").write_text("{broken")
    with pytest.raises(DataError, match="state.json: unreadable datasets metadata"):
        open_corpus(tmp_path / "ds", lang="x")
    # a bare Arrow IPC file (file format; datasets writes the stream format)
    with pa.OSFile(str(tmp_path / "t.arrow"), "wb") as sink, \
            pa.ipc.new_file(sink, pa.schema([("text", pa.string())])) as w:
        w.write_table(pa.table({"text": DOCS}))
    assert list(open_corpus(tmp_path / "t.arrow", lang="x")) == ref


def test_character_budget_is_a_stream_prefix_and_deterministic(shards, tmp_path):
    ref = _reference(tmp_path)
    for budget in (1, 5, 30, 100, 10_000):
        got = list(open_corpus(shards / "a.jsonl.zst", lang="x", max_chars=budget))
        assert got == list(open_corpus(shards / "a.parquet", lang="x", max_chars=budget))
        assert len(got) >= 1 and sum(map(len, got)) <= budget  # never over the budget
        assert got[:-1] == ref[: len(got) - 1] and ref[len(got) - 1].startswith(got[-1])  # the last one cut only if alone
        if len(got) == 1 and len(ref[0]) > budget:
            continue  # the first unit alone was over the budget: its start, cut at a boundary
        assert got == ref[: len(got)]
        if len(got) < len(ref):  # stopped at the first unit that did not fit
            assert sum(map(len, got)) + len(ref[len(got)]) > budget
    with pytest.raises(DataError, match="positive"):
        open_corpus(shards / "a.txt", lang="x", max_chars=0)


def test_sampling_is_seeded_and_the_same_for_any_partition(shards, tmp_path):
    ref = _reference(tmp_path)
    a = list(open_corpus(shards / "a.jsonl", lang="x", sample=0.5, seed=1))
    assert a == list(open_corpus(shards / "a.jsonl", lang="x", sample=0.5, seed=1))
    assert a != list(open_corpus(shards / "a.jsonl", lang="x", sample=0.5, seed=2))
    assert 0.25 * len(ref) < len(a) < 0.75 * len(ref)
    assert set(a) <= set(ref)
    # compression does not move the keys (offsets in the decompressed text)
    assert a == list(open_corpus(shards / "a.jsonl.zst", lang="x", sample=0.5, seed=1))
    assert list(open_corpus(shards / "a.jsonl", lang="x", sample=1.0)) == ref
    with pytest.raises(DataError, match="probability"):
        open_corpus(shards / "a.txt", lang="x", sample=0)
    opts = ReadOptions(sample=0.5, seed=1)
    for fmt in ("a.jsonl", "a.txt", "a.parquet"):
        src = detect(shards / fmt)
        whole = list(read_part(Part(src), opts, {}))
        for size in (1, 17, 100, 1000):
            parts = partition(src, size)
            assert [u for p in parts for u in read_part(p, opts, {})] == whole, (fmt, size)


def test_byte_range_partitions_cover_every_line_once(tmp_path):
    path = tmp_path / "p.txt"
    path.write_text(_text(), encoding="utf-8", newline="")
    src = detect(path)
    whole = list(read_part(Part(src), ReadOptions(), {}))
    assert whole == data.read_lines(path)
    for size in range(1, 120, 7):
        parts = partition(src, size)
        assert parts[0].start == 0 and parts[-1].stop == path.stat().st_size
        assert [u for p in parts for u in read_part(p, ReadOptions(), {})] == whole
    pq_path = tmp_path / "p.parquet"
    _write_parquet(pq_path, DOCS, row_group_size=5)
    assert len(partition(detect(pq_path), 1)) == pq.ParquetFile(pq_path).num_row_groups


def test_manifests_in_json_and_yaml(shards, tmp_path):
    ref = _reference(tmp_path)
    (tmp_path / "m.json").write_text(json.dumps({"eng_Latn": ["shards/a.jsonl.zst"], "deu_Latn": "shards/a.parquet"}))
    (tmp_path / "m.yaml").write_text("eng_Latn:\n  - shards/a.jsonl.zst\ndeu_Latn: shards/a.parquet\n")
    for name in ("m.json", "m.yaml"):
        corpora = open_corpus(tmp_path / name)  # relative to the manifest's folder
        assert list(corpora) == ["eng_Latn", "deu_Latn"]
        assert all(list(c) == ref for c in corpora.values())
        assert list(open_corpus(tmp_path / name, langs=["deu_Latn"])) == ["deu_Latn"]
        assert list(open_corpus(tmp_path / name, lang="deu_Latn")) == ref
        with pytest.raises(UnknownLanguageError, match="xxx_Latn"):
            open_corpus(tmp_path / name, langs=["xxx_Latn"])
    assert list(open_corpus({"x": str(shards / "a.txt")})["x"]) == ref
    for code in ("english", "xx_Fake", "eng_Fake", "eng-Latn"):  # a manifest names real languages
        (tmp_path / "codes.yaml").write_text(f"{code}: shards/a.txt\n")
        with pytest.raises(DataError, match=f"codes.yaml: '{code}' is not a language code"):
            open_corpus(tmp_path / "codes.yaml")
    for text in ("123: shards/a.txt\n", "123: []\n"):  # YAML reads the key as a number; the key is what is wrong
        (tmp_path / "codes.yaml").write_text(text)
        with pytest.raises(DataError, match="codes.yaml: 123 is not a language code"):  # was: "entry 123 must map ..."
            open_corpus(tmp_path / "codes.yaml")
    with pytest.raises(DataError, match="manifest: 7 is not a language code"):
        open_corpus({7: str(shards / "a.txt")})
    (tmp_path / "bad.json").write_text('{"eng_Latn": []}')
    with pytest.raises(DataError, match="bad.json: entry 'eng_Latn'"):
        open_corpus(tmp_path / "bad.json")
    (tmp_path / "bad.yaml").write_text("eng_Latn: [unclosed\n")
    with pytest.raises(DataError, match="bad YAML manifest"):
        open_corpus(tmp_path / "bad.yaml")
    (tmp_path / "gone.json").write_text('{"eng_Latn": ["nowhere/*.parquet"]}')
    with pytest.raises(DataError, match="no file matches"):
        open_corpus(tmp_path / "gone.json")


def test_a_manifest_entry_names_the_field_of_its_text(tmp_path):
    """JSONL with its text in ``body`` was readable only by ``modtok count --text-field body``:
    a manifest could not say so, and every command reading it stopped at "missing field 'text'"."""
    (tmp_path / "eng.jsonl").write_text("".join(json.dumps({"body": t}) + "\n" for t in ("the cat", "sat on the mat")))
    (tmp_path / "deu.jsonl").write_text(json.dumps({"text": "die Katze"}) + "\n")
    pq.write_table(pa.table({"content": ["кіт сидів"]}), tmp_path / "ukr.parquet")
    (tmp_path / "m.yaml").write_text("eng_Latn: {path: eng.jsonl, text_field: body}\n"
                                     "ukr_Cyrl: {paths: [ukr.parquet], text_field: content}\ndeu_Latn: deu.jsonl\n")
    corpora = open_corpus(tmp_path / "m.yaml")
    assert {lang: list(c) for lang, c in corpora.items()} == {
        "eng_Latn": ["the cat", "sat on the mat"], "ukr_Cyrl": ["кіт сидів"], "deu_Latn": ["die Katze"]}
    (tmp_path / "m.json").write_text(json.dumps({"eng_Latn": {"path": "eng.jsonl", "text_field": "body"},
                                                 "deu_Latn": ["deu.jsonl"]}))
    (tmp_path / "deu.jsonl").write_text(json.dumps({"body": "der Hund"}) + "\n")
    # the argument is the field of the entries that name none; an entry's own wins
    assert {lang: list(c) for lang, c in open_corpus(tmp_path / "m.json", text_field="body").items()} == {
        "eng_Latn": ["the cat", "sat on the mat"], "deu_Latn": ["der Hund"]}
    (tmp_path / "typo.yaml").write_text("eng_Latn: {path: eng.jsonl, text_field: bdy}\n")
    with pytest.raises(RecordError) as caught:
        list(open_corpus(tmp_path / "typo.yaml", lang="eng_Latn"))
    assert str(caught.value) == f"{tmp_path / 'eng.jsonl'}: missing field 'bdy' (line 1, byte offset 0)"
    for entry, message in (("{path: eng.jsonl, field: body}", "optionally text_field, not field"),
                           ("{path: eng.jsonl, paths: [deu.jsonl]}", "path or paths \\(one of them\\)"),
                           ("{text_field: body}", "path or paths \\(one of them\\)"),
                           ("{path: eng.jsonl, text_field: 3}", "text_field must name a JSONL field or a column, not 3"),
                           ("{path: []}", "must map a language to a path, a non-empty list of paths, or")):
        (tmp_path / "bad.yaml").write_text(f"eng_Latn: {entry}\n")
        with pytest.raises(DataError, match=f"bad.yaml: entry 'eng_Latn'.* {message}"):
            open_corpus(tmp_path / "bad.yaml")


# --------------------------------------------------------------------------
# bad input


def _bad_jsonl(tmp_path) -> tuple:
    good = json.dumps({"text": "good one"})
    lines = [good, "{not json", json.dumps({"body": "x"}), json.dumps({"text": 7}), "[1, 2]", good]
    raw = ("\n".join(lines) + "\n").encode()
    path = tmp_path / "bad.jsonl"
    path.write_bytes(raw)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line) + 1)
    return path, offsets


def test_bad_jsonl_records_name_file_line_and_offset(tmp_path):
    path, offsets = _bad_jsonl(tmp_path)
    with pytest.raises(RecordError) as e:
        list(open_corpus(path, lang="x"))
    assert (e.value.path, e.value.line, e.value.offset) == (str(path), 2, offsets[1] + 1)
    assert str(e.value).startswith(f"{path}: bad JSON (") and "line 2, byte offset" in str(e.value)
    # the same error from a byte-range part that starts after line 1 knows its line too
    part = [p for p in partition(detect(path), 10) if p.start <= offsets[1] < p.stop][0]
    assert part.start > 0
    with pytest.raises(RecordError, match="line 2"):
        list(read_part(part, ReadOptions(), {}))
    for field_line, message in ((3, "missing field 'text'"), (4, "field 'text' is int, not a string"),
                                (5, "not a JSON object \\(list\\)")):
        kept = [ln for i, ln in enumerate(path.read_text().splitlines(), 1) if i >= field_line]
        (tmp_path / "one.jsonl").write_text("\n".join(kept) + "\n")
        with pytest.raises(RecordError, match=f"{message} \\(line 1, byte offset 0\\)"):
            list(open_corpus(tmp_path / "one.jsonl", lang="x"))
    corpus = open_corpus(path, lang="x", skip_bad=True)
    assert list(corpus) == ["good one", "good one"]
    assert dict(corpus.skipped) == {"bad JSON": 1, "missing field 'text'": 1, "field 'text' not a string": 1,
                                    "not a JSON object": 1}


def test_non_utf8_gives_the_byte_offset_in_text_and_compressed_jsonl(tmp_path):
    raw = "fine\nnaïve\n".encode() + b"bad \xff byte\nlast\n"
    (tmp_path / "b.txt").write_bytes(raw)
    with pytest.raises(RecordEncodingError) as e:
        list(open_corpus(tmp_path / "b.txt", lang="x"))
    assert isinstance(e.value, EncodingError) and e.value.offset == raw.index(b"\xff") and e.value.line == 3
    with pytest.raises(EncodingError) as old:  # the in-memory loader agrees on the offset
        data.read_lines(tmp_path / "b.txt")
    assert old.value.offset == e.value.offset
    doc = b'{"text": "ok"}\n{"text": "caf\xe9"}\n'
    (tmp_path / "b.jsonl.zst").write_bytes(zstandard.ZstdCompressor().compress(doc))
    assert doc.index(b"\xe9") == 28  # offset in the decompressed stream
    with pytest.raises(RecordEncodingError, match=r"b.jsonl.zst: invalid UTF-8 \(line 2, byte offset 28\)"):
        list(open_corpus(tmp_path / "b.jsonl.zst", lang="x"))
    c = open_corpus(tmp_path / "b.txt", lang="x", skip_bad=True)
    assert list(c) == ["fine", "naïve", "last"] and dict(c.skipped) == {"invalid UTF-8": 1}


def test_unreadable_shards_raise_even_under_skip_bad(shards, tmp_path):
    """skip_bad skips records; a file that cannot be read to its end always raises."""
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "a.parquet").write_bytes(b"PAR1 this is not parquet")
    (broken / "b.jsonl.gz").write_bytes(gzip.compress(_jsonl())[:200])  # truncated
    (broken / "c.jsonl.zst").write_bytes(b"\x28\xb5\x2f\xfd garbage")
    pq.write_table(pa.table({"body": ["x"]}), broken / "e.parquet")
    pq.write_table(pa.table({"text": [1, 2]}), broken / "f.parquet")
    pq.write_table(pa.table({"text": ["kept", None, "too"]}), broken / "g.parquet")
    cases = {"a.parquet": "not a readable parquet file .*the file ends at byte offset 24",
             "b.jsonl.gz": "unreadable gzip stream at byte offset", "c.jsonl.zst": "unreadable zstd stream",
             "e.parquet": "no column 'text' \\(columns: body\\)", "f.parquet": "column 'text' is int64, not a string"}
    for name, message in cases.items():
        for skip_bad in (False, True):
            with pytest.raises(ShardError, match=f"{name}: {message}"):
                list(open_corpus([shards / "a.txt", broken / name], lang="x", skip_bad=skip_bad))
    with pytest.raises(RecordError, match=r"g.parquet: 'text' is null \(row 1\)"):
        list(open_corpus(broken / "g.parquet", lang="x"))
    c = open_corpus(broken / "g.parquet", lang="x", skip_bad=True)
    assert list(c) == ["kept", "too"] and c.skipped == {"null 'text'": 1}


@pytest.mark.parametrize("name, why", [("t.csv", "a table: its header"), ("t.tsv", "a table"),
                                       ("a.txt.zip", "an archive"), ("a.txt.lz4", "an archive or a compression"),
                                       ("d.pdf", "a document format")])
def test_a_file_that_is_not_lines_of_text_is_refused_not_read_as_text(tmp_path, name, why):
    """A CSV read as plain text would train on its header and id column; an archive on its bytes."""
    path = tmp_path / name
    path.write_text("id,text\n0,hello\n")
    with pytest.raises(DataError, match=f"{name}: .* is {why}"):
        list(open_corpus(path, lang="eng_Latn"))
    assert list(open_corpus(path, lang="eng_Latn", format="text")) == ["id,text", "0,hello"]  # when asked for


def test_a_utf16_file_is_named_as_utf16(tmp_path):
    path = tmp_path / "tur.txt"
    path.write_text("Merhaba dünya\n", encoding="utf-16")
    with pytest.raises(EncodingError, match=r"tur.txt: not UTF-8 but UTF-16 .*iconv"):
        list(open_corpus(path, lang="tur_Latn"))


@pytest.mark.parametrize("encoding, named", [("utf-16-le", "UTF-16LE without a byte-order mark"),
                                             ("utf-16-be", "UTF-16BE without a byte-order mark")])
def test_utf16_without_a_bom_is_refused_not_trained_on(tmp_path, encoding, named):
    """ASCII-range UTF-16 without a BOM is valid UTF-8 with a NUL beside every character: it
    was counted and trained on (pre-tokens '\\x00e'), under a budget that stopped before any
    non-ASCII character with exit 0."""
    path = tmp_path / "eng.txt"
    path.write_bytes("the cat sat\non the mat\n".encode(encoding))
    for reader in (lambda: list(open_corpus(path, lang="eng_Latn", max_chars=5)),
                   lambda: list(corpus_records(path)), lambda: data.read_lines(path)):
        with pytest.raises(EncodingError, match=f"eng.txt: not UTF-8 but {named} .*iconv -f UTF-16"):
            reader()
    with pytest.raises(RecordEncodingError, match=r"\(line 1, byte offset [01]\)"):
        list(open_corpus(path, lang="eng_Latn"))


def test_a_nul_byte_in_text_is_refused_with_file_and_line(tmp_path):
    path = tmp_path / "eng.txt"
    path.write_bytes(b"one line\ntwo \x00 lines\nthree\n")
    with pytest.raises(RecordEncodingError, match=r"eng.txt: a NUL byte: binary data.* \(line 2, byte offset 13\)"):
        list(open_corpus(path, lang="eng_Latn"))
    with pytest.raises(EncodingError, match="eng.txt: a NUL byte"):
        data.read_lines(path)
    c = open_corpus(path, lang="eng_Latn", skip_bad=True)
    assert list(c) == ["one line", "three"] and sum(c.skipped.values()) == 1


@pytest.mark.parametrize("compress, suffix", [(gzip.compress, ".gz"), (bz2.compress, ".bz2"), (lzma.compress, ".xz"),
                                              (zstandard.ZstdCompressor().compress, ".zst")])
def test_compressed_data_under_a_plain_name_is_named_as_compressed(tmp_path, compress, suffix):
    """gzip data named .txt gave only 'invalid UTF-8 (line 1, byte offset 1)'."""
    path = tmp_path / "arb.txt"
    path.write_bytes(compress("مرحبا بالعالم\n".encode() * 50))
    for skip_bad in (False, True):
        with pytest.raises(ShardError, match=f"arb.txt: .*-compressed data under a name without {suffix}: add {suffix}"):
            list(open_corpus(path, lang="arb_Arab", skip_bad=skip_bad))
    with pytest.raises(EncodingError, match=f"arb.txt: .*-compressed data .* add {suffix} .* at byte offset 0"):
        data.read_lines(path)
    path.rename(renamed := tmp_path / f"arb.txt{suffix}")
    assert list(open_corpus(renamed, lang="arb_Arab")) == ["مرحبا بالعالم"] * 50
    (tmp_path / "bzh.txt").write_text("BZh1 is text\n")  # a magic prefix alone is not a compressed file
    assert list(open_corpus(tmp_path / "bzh.txt", lang="eng_Latn")) == ["BZh1 is text"]


def _cut(path, keep: float):
    """``path`` cut to a share of its bytes, as a copy beside it."""
    blob = path.read_bytes()
    out = path.with_name("cut-" + path.name)
    out.write_bytes(blob[: int(len(blob) * keep)])
    return out


@pytest.mark.parametrize("name", ["a.txt.zst", "a.jsonl.zst", "multi.jsonl.zst", "a.txt.gz", "a.txt.bz2", "a.jsonl.xz",
                                  "a.parquet", "a.arrow"])
@pytest.mark.parametrize("keep", [0.5, 0.97])
def test_a_truncated_file_is_refused_with_its_name_and_offset(shards, tmp_path, name, keep):
    """A cut compressed stream, Parquet or Arrow file is never read as a shorter corpus
    (zstandard's stream reader ends quietly inside a frame; every frame is checked here)."""
    if name == "multi.jsonl.zst":  # three frames, cut inside the last one
        zc = zstandard.ZstdCompressor()
        (shards / name).write_bytes(b"".join(zc.compress(_jsonl()) for _ in range(3)))
    if name == "a.arrow":
        import pyarrow as pa

        with pa.ipc.new_stream(str(shards / name), pa.schema([("text", pa.string())])) as w:
            for i in range(0, len(DOCS), 4):
                w.write_table(pa.table({"text": DOCS[i:i + 4]}))
    cut = _cut(shards / name, keep)
    offset = "at compressed byte offset|at byte offset|ends at byte offset" if name != "a.arrow" else "after row"
    for skip_bad in (False, True):
        with pytest.raises(ShardError, match=f"cut-{name}: .*({offset})"):
            list(open_corpus(cut, lang="x", skip_bad=skip_bad))


@settings(max_examples=40)
@given(docs=st.lists(st.text(min_size=0, max_size=30), min_size=1, max_size=12),
       size=st.integers(min_value=1, max_value=64))
def test_any_text_reads_the_same_in_every_format_and_partition(tmp_path_factory, docs, size):
    docs = [d.lstrip("\ufeff").replace("\0", "") for d in docs]  # a BOM is a file's, not a document's; NUL is no text
    d = tmp_path_factory.mktemp("h")
    (d / "a.txt").write_bytes(_text(docs).encode())
    ref = data.read_lines(d / "a.txt")
    (d / "a.jsonl.zst").write_bytes(zstandard.ZstdCompressor().compress(_jsonl(docs)))
    _write_parquet(d / "a.parquet", docs, row_group_size=3)
    for name in ("a.txt", "a.jsonl.zst", "a.parquet"):
        assert list(open_corpus(d / name, lang="x")) == ref, name
    src = detect(d / "a.txt")
    assert [u for p in partition(src, size) for u in read_part(p, ReadOptions(), {})] == ref


@pytest.mark.parametrize("batch", [1, 3, 4096])
def test_plain_text_read_in_batches_gives_what_a_line_at_a_time_gives(tmp_path, monkeypatch, batch):
    """Plain text is decoded and split BATCH_LINES lines at a time; a BOM, blank and
    \\r-ended lines, a bad line (its batch falls back to a line at a time, which skips or names
    only it), the byte ranges of Dask's parts (a line belongs to the part it starts in), the last
    line without a newline and run.json's digests come out as they did a line at a time."""
    from modtok import outputs
    from modtok.text import corpus

    monkeypatch.setattr(corpus, "BATCH_LINES", batch)
    raw = [b"\xef\xbb\xbfhead line\n", b"a\r\n", b"\n", b"  \n", b"b c\n", b"bad \xff here\n", b"x\0y\n",
           "é ü\n".encode(), b"d\n" * 5, b"last without newline"]
    path = tmp_path / "x.txt"
    path.write_bytes(b"".join(raw))
    want = ["head line", "a", "b c", "é ü", *["d"] * 5, "last without newline"]
    with pytest.raises(RecordEncodingError) as e:
        list(open_corpus({"eng_Latn": [str(path)]})["eng_Latn"])
    assert (e.value.line, e.value.offset) == (6, len(b"".join(raw[:5])) + 4)
    stream = open_corpus({"eng_Latn": [str(path)]}, skip_bad=True)["eng_Latn"]
    assert list(stream) == want and stream.skipped == {"invalid UTF-8": 1, "a NUL byte": 1}
    options = ReadOptions(skip_bad=True)
    for size in (7, 13, 30):
        parts = partition(detect(str(path)), size)
        assert len(parts) > 2
        got, logs = [], []
        for part in parts:
            outputs._READING.append(logs)
            try:
                got += read_part(part, options, Counter())
            finally:
                outputs._READING.remove(logs)
        assert got == want, size
        assert [d.start + d.n for d in logs[:-1]] == [d.start for d in logs[1:]]  # the parts hash every byte once
        assert logs[-1].start + logs[-1].n == path.stat().st_size
        assert [d.to_end for d in logs] == [d.start + d.n == path.stat().st_size for d in logs]
