"""The CLI end to end on a tiny pool: train, save, load, encode; clean errors."""

from __future__ import annotations

import json

import pytest

from modtok import cli
from modtok.modular import ModularTokenizer


@pytest.fixture
def tiny_data(tmp_path, monkeypatch):
    pool, flores = tmp_path / "pool", tmp_path / "flores"
    pool.mkdir()
    (flores / "devtest").mkdir(parents=True)
    text = {"eng_Latn": "the cat sat on the mat with another cat", "npi_Deva": "बिरालो चटाईमा बस्यो अर्को बिरालो"}
    for lang, line in text.items():
        (pool / f"{lang}.txt").write_text("\n".join([line] * 200) + "\n", encoding="utf-8")
        (flores / "devtest" / f"{lang}.devtest").write_text(line + "\n", encoding="utf-8")
    monkeypatch.setenv("MODTOK_POOL", str(pool))
    monkeypatch.setenv("MODTOK_FLORES", str(flores))
    return text


def test_sequential_bpe_then_encode(tiny_data, tmp_path, capsys):
    out = tmp_path / "tok"
    assert cli.main(["sequential-bpe", str(out), "-k", "280", "--langs", "eng_Latn", "npi_Deva"]) == 0
    tok = ModularTokenizer.load(out)
    assert tok.languages == ["eng_Latn", "npi_Deva"]
    capsys.readouterr()
    assert cli.main(["encode", str(out), tiny_data["npi_Deva"], "--langs", "npi_Deva"]) == 0
    ids = json.loads(capsys.readouterr().out)
    assert tok.decode(ids) == tiny_data["npi_Deva"]
    assert set(ids) <= set(tok.ids(["npi_Deva"]).tolist())
    assert len(ids) < len(tiny_data["npi_Deva"].encode())  # merges were learned


def test_bad_input_is_one_line_and_exit_2(tiny_data, tmp_path, capsys):
    assert cli.main(["encode", str(tmp_path / "nowhere"), "x"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("modtok: error: ") and err.count("\n") == 1
    assert cli.main(["sequential-bpe", str(tmp_path / "t"), "-k", "100", "--langs", "eng_Latn"]) == 2
    assert "256" in capsys.readouterr().err
