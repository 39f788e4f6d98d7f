"""A user's data is never misaligned, counted twice or mislabelled (issue 30): one test per
class of input that earlier versions accepted with a confident, wrong answer and exit 0.

Each builds its own tiny corpus; none needs ../shared.
"""

from __future__ import annotations

import glob
import json

import pytest

from modtok.errors import DataError, ModtokError, ParallelCorpusError
from modtok.text import corpus, eval_sets, manifest
from modtok.ui import cli

EN = [f"the cat number {i} sat on the mat" for i in range(40)]
FR = [f"le chat numéro {i} était assis sur le tapis" for i in range(40)]
UK = [f"кіт номер {i} сидів на килимку" for i in range(40)]


def _write(path, lines):
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def test_a_manifest_giving_a_language_twice_is_refused(tmp_path):
    """A plain YAML loader keeps the last entry: half of English would be dropped silently."""
    _write(tmp_path / "a.txt", EN[:20])
    _write(tmp_path / "b.txt", EN[20:])
    (tmp_path / "m.yaml").write_text("eng_Latn: [a.txt]\nfra_Latn: [a.txt]\neng_Latn: [b.txt]\n", encoding="utf-8")
    with pytest.raises(ModtokError, match="'eng_Latn' is given twice"):
        corpus.open_corpus(tmp_path / "m.yaml")


def test_a_json_manifest_giving_a_language_twice_names_both_lines(tmp_path):
    (tmp_path / "m.json").write_text('{"eng_Latn": ["a.txt"],\n "fra_Latn": ["a.txt"],\n "eng_Latn": ["b.txt"]}',
                                     encoding="utf-8")
    with pytest.raises(DataError, match=r"'eng_Latn' is given twice \(lines 1 and 3\)"):
        manifest.load_manifest(tmp_path / "m.json")


def test_a_manifest_that_is_a_symlink_loop_says_so(tmp_path):
    (tmp_path / "m.json").symlink_to(tmp_path / "n.json")
    (tmp_path / "n.json").symlink_to(tmp_path / "m.json")
    with pytest.raises(DataError, match="symlink loop"):
        manifest.load_manifest(tmp_path / "m.json")


def test_a_file_matched_by_two_patterns_is_counted_once(tmp_path):
    _write(tmp_path / "eng_Latn.txt", EN)
    (tmp_path / "m.yaml").write_text("eng_Latn: [eng_Latn.txt, 'eng*.txt', '*.txt']\n", encoding="utf-8")
    assert corpus.open_corpus(tmp_path / "m.yaml")["eng_Latn"].lines() == EN


@pytest.mark.parametrize("name", ["arb*x.txt", "arb?.txt", "arb[1].txt"])
def test_a_file_named_with_glob_characters_is_read_literally_and_through_a_glob(tmp_path, name):
    """A match of a pattern was globbed again: ``arb*x.txt`` recursed until RecursionError,
    ``arb[1].txt`` was "no file matches", even glob-escaped, and broke every glob over its folder."""
    _write(tmp_path / name, EN[:20])
    _write(tmp_path / "b.txt", EN[20:])
    for entry, lines in ((name, EN[:20]), ("*.txt", EN), ("arb*", EN[:20]), (glob.escape(name), EN[:20])):
        (tmp_path / "m.yaml").write_text(f"eng_Latn: [{json.dumps(entry)}]\n", encoding="utf-8")
        assert corpus.open_corpus(tmp_path / "m.yaml")["eng_Latn"].lines() == lines, entry
    with pytest.raises(DataError, match="no file matches"):
        corpus.open_corpus(str(tmp_path / "c*.txt"), lang="eng_Latn")


@pytest.mark.parametrize("name", ["train", "m.yaml"])
def test_a_directory_given_as_the_manifest_says_so(tmp_path, capsys, name):
    """It was told to "pass lang=...", an argument of the Python API the CLI does not have."""
    (tmp_path / name).mkdir()
    _write(tmp_path / name / "eng.txt", EN)
    assert cli.main(["count", str(tmp_path / name), "-o", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert f"{tmp_path / name}: a directory, not a manifest: a manifest is a JSON or YAML file" in err
    assert "lang=" not in err and not (tmp_path / "out").exists()
    with pytest.raises(DataError, match="a directory, not a manifest"):
        manifest.load_manifest(tmp_path / name)


def test_a_bad_manifest_entry_names_the_manifest_and_the_language(tmp_path):
    (tmp_path / "empty").mkdir()
    (tmp_path / "m.yaml").write_text("eng_Latn: [empty]\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"m.yaml, entry eng_Latn: .*empty: no text, JSONL, Parquet or Arrow file"):
        corpus.open_corpus(tmp_path / "m.yaml")


def test_a_file_under_two_languages_is_refused(tmp_path):
    _write(tmp_path / "x.txt", EN)
    (tmp_path / "m.yaml").write_text("eng_Latn: [x.txt]\nfra_Latn: ['*.txt']\n", encoding="utf-8")
    with pytest.raises(DataError, match="matched by the entries of both eng_Latn and fra_Latn"):
        corpus.open_corpus(tmp_path / "m.yaml")


def test_text_in_another_script_than_its_code_is_refused_unless_overridden(tmp_path):
    _write(tmp_path / "eng_Latn.txt", UK)
    with pytest.raises(ModtokError, match="not Latin script: 0% of"):
        corpus.open_corpus(tmp_path / "eng_Latn.txt", lang="eng_Latn").lines()
    assert corpus.open_corpus(tmp_path / "eng_Latn.txt", lang="eng_Latn", any_script=True).lines() == UK


def test_a_stray_file_in_an_evaluation_directory_is_named_not_read(tmp_path):
    _write(tmp_path / "eng_Latn.txt", EN)
    _write(tmp_path / "fra_Latn.txt", FR)
    _write(tmp_path / "eng_Latn.txt.bak", ["an old line that is not English's test text"])
    s = eval_sets.eval_set(tmp_path)
    assert "eng_Latn.txt.bak" in s.skipped
    test = s.load(["eng_Latn"])["eng_Latn"]
    assert len(test) == 30 and all(line in EN for line in test)  # 40 lines less every 4th (the dev split)


def test_a_blank_line_in_one_language_only_is_refused_with_file_and_line(tmp_path):
    _write(tmp_path / "eng_Latn.txt", EN)
    _write(tmp_path / "fra_Latn.txt", FR[:9] + [""] + FR[10:])
    with pytest.raises(ParallelCorpusError, match=r"fra_Latn.txt line 10 is empty but .*eng_Latn.txt line 10 is not"):
        eval_sets.eval_set(tmp_path).load(["eng_Latn", "fra_Latn"])


def test_a_blank_line_in_every_language_keeps_them_aligned(tmp_path):
    _write(tmp_path / "eng_Latn.txt", EN[:9] + [""] + EN[10:])
    _write(tmp_path / "fra_Latn.txt", FR[:9] + [""] + FR[10:])
    text, parallel = eval_sets.eval_set(tmp_path).aligned(["eng_Latn", "fra_Latn"])
    assert parallel
    pairs = dict(zip(text["eng_Latn"], text["fra_Latn"]))
    assert all(pairs[e] == f for e, f in zip(EN, FR) if e in pairs)  # line i is still line i
    assert EN[9] not in pairs


def test_swapped_parity_bpe_files_are_matched_by_name(tmp_path, capsys):
    """--train and --dev are matched to languages by their names, never by position."""
    train = [str(_write(tmp_path / f"{lang}.txt", lines)) for lang, lines in (("eng_Latn", EN), ("fra_Latn", FR))]
    dev = [str(_write(tmp_path / f"{lang}.dev", lines[:10])) for lang, lines in (("fra_Latn", FR), ("eng_Latn", EN))]
    assert cli.main(["parity-bpe", str(tmp_path / "out"), "-i", *train, "-d", *dev, "-s", "10"]) == 0
    err = capsys.readouterr().err
    assert f"eng_Latn <- {tmp_path / 'eng_Latn.dev'}" in err and f"fra_Latn <- {tmp_path / 'fra_Latn.dev'}" in err
    assert cli.main(["parity-bpe", str(tmp_path / "o2"), "-i", train[0], str(tmp_path / "notacode.txt"), "-s", "5"]) == 2
    assert "named after its language" in capsys.readouterr().err and not (tmp_path / "o2").exists()


def test_a_manifest_entry_naming_its_text_field_is_read_so_by_every_command(tmp_path, monkeypatch, capsys):
    """A new user's JSONL kept its text in ``body``: only ``modtok count --text-field body`` read
    it; ``modtok data`` and the training commands stopped at "missing field 'text'"."""
    (tmp_path / "eng.jsonl").write_text("".join(json.dumps({"body": line}) + "\n" for line in EN), encoding="utf-8")
    _write(tmp_path / "fra.txt", FR)
    manifest = tmp_path / "m.yaml"
    manifest.write_text("eng_Latn: {path: eng.jsonl, text_field: body}\nfra_Latn: [fra.txt]\n", encoding="utf-8")
    monkeypatch.setenv("MODTOK_MANIFEST", str(manifest))
    for var in ("MODTOK_POOL", "MODTOK_EVAL", "MODTOK_FLORES"):
        monkeypatch.delenv(var, raising=False)
    assert cli.main(["data"]) == 0
    assert f"eng_Latn: {tmp_path / 'eng.jsonl'}, 40 lines" in capsys.readouterr().out
    assert cli.main(["count", str(manifest), "-o", str(tmp_path / "counts")]) == 0
    meta = json.loads((tmp_path / "counts" / "meta.json").read_text(encoding="utf-8"))
    assert meta["languages"]["eng_Latn"]["units"] == 40
    assert meta["options"]["text_field"] == {"eng_Latn": "body", "fra_Latn": "text"}  # what each was read from
    assert cli.main(["parity-bpe", str(tmp_path / "p"), "--manifest", str(manifest), "-s", "5",
                     "--variant", "classical"]) == 0
    assert f"eng_Latn <- {tmp_path / 'eng.jsonl'} (40 lines)" in capsys.readouterr().err
    # evaluation text given as such a manifest is read the same way (every 4th line: the derived dev split)
    assert eval_sets.eval_set(manifest).load(["eng_Latn"])["eng_Latn"] == [t for i, t in enumerate(EN) if i % 4 != 3]
