"""BPE -> HF tokenizer.json: files, properness on load, lossless round trips."""

from __future__ import annotations

import json
import random
from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from modtok.bpe import standard
from modtok.bpe.export import (
    from_tokenizer_json,
    hf_tokenizer,
    load_tokenizer_json,
    save_tokenizer_json,
    to_tokenizer_json,
)
from modtok.bpe.model import BPEModel
from modtok.bpe.sequential import train_sequential
from modtok.errors import MergeListError, TokenizerFileError

TEXT = {
    "x": ["the quick brown fox jumps over the lazy dog", "Größe, Straße und Bücher!"] * 30,
    "y": ["Съешь же ещё этих мягких французских булок", "да выпей чаю 2024 года"] * 30,
    "z": ["नमस्ते दुनिया, यह एक परीक्षण है", "σ ς Ω 日本語 😀 emoji"] * 30,
}


@pytest.fixture(scope="module")
def seq():
    counts = {lang: Counter(w for line in lines for w in _pre(line)) for lang, lines in TEXT.items()}
    return train_sequential(counts, 330, scheme="llama3")


def _pre(line):
    from modtok.text.pretokenize import pretokenize

    return pretokenize(line, "llama3")


def test_file_roundtrip_and_hf_equals_reference(tmp_path, seq):
    path = save_tokenizer_json(seq.model, tmp_path / "tokenizer.json")
    back = load_tokenizer_json(path)
    assert back.merges == seq.model.merges and back.vocab == seq.model.vocab
    assert back.scheme == "llama3"
    tok = hf_tokenizer(back)
    from tokenizers import Tokenizer

    tok2 = Tokenizer.from_file(str(path))
    for lines in TEXT.values():
        for line in lines[:2]:
            assert tok.encode(line).ids == seq.model.encode(line) == tok2.encode(line).ids
    assert [p.name for p in tmp_path.iterdir()] == ["tokenizer.json"]  # no temp file left


def test_merges_are_written_as_pairs():
    tj = to_tokenizer_json(BPEModel([(32, 97)], "whitespace"))  # " " + "a"
    assert tj["model"]["merges"] == [["Ġ", "a"]]
    assert tj["model"]["vocab"]["Ġa"] == 256
    assert tj["pre_tokenizer"]["pretokenizers"][1] == {
        "type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False
    }


def test_loading_improper_or_foreign_files(tmp_path):
    tj = to_tokenizer_json(BPEModel([(97, 98), (256, 99)], "whitespace"))
    bad = json.loads(json.dumps(tj))
    bad["model"]["merges"] = [["ab", "c"], ["a", "b"]]  # uses "ab" before it is made
    with pytest.raises(MergeListError, match="merge 0"):
        from_tokenizer_json(bad)
    bad = json.loads(json.dumps(tj))
    bad["model"]["merges"] = [["a", "b"], ["ab", "zz"]]
    with pytest.raises(MergeListError, match="'zz'"):
        from_tokenizer_json(bad)
    bad = json.loads(json.dumps(tj))
    bad["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"] = r"\w+"
    with pytest.raises(TokenizerFileError, match="not a named modtok scheme"):
        from_tokenizer_json(bad)
    (tmp_path / "t.json").write_text("{")
    with pytest.raises(TokenizerFileError, match="not valid JSON"):
        load_tokenizer_json(tmp_path / "t.json")


@given(st.text(max_size=80))
def test_lossless_global(seq_model_tok, text):
    model, tok = seq_model_tok
    ids = tok.encode(text).ids
    assert tok.decode(ids) == text
    assert model.decode(ids) == text


@pytest.fixture(scope="module")
def seq_model_tok(seq):
    return seq.model, hf_tokenizer(seq.model)


@pytest.fixture(scope="module")
def modular(seq):
    return seq.modular()


@given(st.text(max_size=60), st.randoms(use_true_random=False))
def test_lossless_random_subtokenizers(modular, text, rnd):
    langs = rnd.sample(modular.languages, rnd.randint(1, len(modular.languages)))
    ids = modular.encode(text, langs)
    assert set(ids) <= set(modular.ids(langs).tolist())
    assert modular.decode(ids) == text
    assert modular.subtokenizer(langs).decode(ids) == text


def test_transformers_fast_tokenizer_same_ids(tmp_path, seq):
    transformers = pytest.importorskip("transformers")
    path = save_tokenizer_json(seq.model, tmp_path / "tokenizer.json")
    fast = transformers.PreTrainedTokenizerFast(tokenizer_file=str(path))
    for line in TEXT["y"] + TEXT["x"]:
        ids = fast(line, add_special_tokens=False)["input_ids"]
        assert ids == seq.model.encode(line)
        assert fast.decode(ids) == line


def test_standard_budget_reached_exactly():
    m = standard.train(Counter({w: random.Random(0).randint(1, 9) for w in TEXT["x"][0].split()}), 270)
    assert len(m) == 270
