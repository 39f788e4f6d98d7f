"""ModularTokenizer / SubTokenizer: restriction rule, id maps, masks, files, errors."""

from __future__ import annotations

import json
import random
from collections import Counter

import numpy as np
import pytest

from modtok.artifacts.modular import ModularTokenizer
from modtok.artifacts.tokenizer_json import restrict
from modtok.bpe.export import bpe_model_json, to_tokenizer_json
from modtok.errors import (
    MergeListError,
    ModtokError,
    OutOfVocabularyError,
    TokenizerFileError,
    UnknownLanguageError,
)


def _tj(model: dict, added=()) -> dict:
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": list(added),
        "normalizer": None,
        "pre_tokenizer": None,
        "post_processor": None,
        "decoder": None,
        "model": model,
    }


# ids: a b c d | ab(4) abc(5) cd(6) abcd(7)
TOY_BPE = bpe_model_json(
    {"a": 0, "b": 1, "c": 2, "d": 3, "ab": 4, "abc": 5, "cd": 6, "abcd": 7},
    [["a", "b"], ["ab", "c"], ["c", "d"], ["abc", "d"]],
)


def toy_modular() -> ModularTokenizer:
    base = [0, 1, 2, 3]
    return ModularTokenizer(
        _tj(TOY_BPE), {"x": base + [4, 5], "y": base + [6], "z": base + [4, 5, 7]}
    )


def test_bpe_restriction_hand_oracle():
    """Global merges on "abcd": a+b -> ab, ab+c -> abc, (c+d not applicable), abc+d -> abcd
    = [7]. x keeps ab, abc: [5, 3]. y keeps only c+d: [0, 1, 6]. x+y keeps ab, abc, cd in
    global order: ab (rank 0) first, then abc (rank 1) consumes c, so [5, 3]."""
    mt = toy_modular()
    assert mt.encode("abcd") == [7]
    assert mt.encode("abcd", ["x"]) == [5, 3]
    assert mt.encode("abcd", ["y"]) == [0, 1, 6]
    assert mt.encode("abcd", ["x", "y"]) == [5, 3]
    assert mt.encode("abcd", ["z"]) == [7]
    assert mt.encode_batch(["abcd", "cd"], ["y"]) == [[0, 1, 6], [6]]
    sub = mt.subtokenizer(["y"])
    assert sub.global_ids.tolist() == [0, 1, 2, 3, 6]
    assert sub.encode_local("abcd") == [0, 1, 4]
    assert sub.to_local([6, 0]).tolist() == [4, 0]
    assert sub.tokenizer_json["model"]["merges"] == [["c", "d"]]
    assert mt.subtokenizer(["y"]) is sub  # cached
    assert mt.subtokenizer(("y",)) is sub


def test_ids_and_masks():
    mt = toy_modular()
    assert mt.languages == ["x", "y", "z"]
    assert mt.vocab_size == 8
    assert mt.ids(["x", "y"]).tolist() == [0, 1, 2, 3, 4, 5, 6]
    assert mt.ids("y").tolist() == [0, 1, 2, 3, 6]
    m = mt.mask(["y"])
    assert m.shape == (8,) and m.dtype == bool
    assert np.flatnonzero(m).tolist() == [0, 1, 2, 3, 6]


def test_errors():
    mt = toy_modular()
    with pytest.raises(UnknownLanguageError, match="'w'"):
        mt.ids(["x", "w"])
    with pytest.raises(UnknownLanguageError):
        mt.subtokenizer([])
    with pytest.raises(OutOfVocabularyError, match="global id 7"):
        mt.subtokenizer(["x"]).to_local([0, 7])
    assert issubclass(OutOfVocabularyError, ModtokError)
    # abc without its part ab: not closed under ancestry
    bad = ModularTokenizer(_tj(TOY_BPE), {"x": [0, 1, 2, 3, 5]})
    with pytest.raises(MergeListError, match="'abc'"):
        bad.subtokenizer(["x"])
    with pytest.raises(TokenizerFileError, match="id 8"):
        ModularTokenizer(_tj(TOY_BPE), {"x": [0, 8]})
    with pytest.raises(TokenizerFileError, match="WordLevel"):
        ModularTokenizer(_tj({"type": "WordLevel", "vocab": {"a": 0}}), {"x": [0]})


def test_save_load_roundtrip_and_bad_directory(tmp_path):
    mt = toy_modular()
    mt.save(tmp_path / "tok")
    assert sorted(p.name for p in (tmp_path / "tok").iterdir()) == [
        "lang_to_ids.json",
        "tokenizer.json",
    ]
    back = ModularTokenizer.load(tmp_path / "tok")
    assert back.languages == mt.languages
    for lang in mt.languages:
        assert back.ids(lang).tolist() == mt.ids(lang).tolist()
        assert back.encode("abcdcab", [lang]) == mt.encode("abcdcab", [lang])
    # lang_to_ids pointing at a missing id
    (tmp_path / "tok" / "lang_to_ids.json").write_text(json.dumps({"x": [0, 1, 99]}))
    with pytest.raises(TokenizerFileError, match="id 99"):
        ModularTokenizer.load(tmp_path / "tok")
    (tmp_path / "tok" / "lang_to_ids.json").write_text("{not json")
    with pytest.raises(TokenizerFileError, match="not valid JSON"):
        ModularTokenizer.load(tmp_path / "tok")
    with pytest.raises(TokenizerFileError, match="no such file"):
        ModularTokenizer.load(tmp_path / "missing")


# --------------------------------------------------------------------------
# Unigram


def toy_unigram() -> dict:
    # ids: <unk>(0) a(1) b(2) c(3) ab(4) bc(5) abc(6)
    pieces = [["<unk>", 0.0], ["a", -3.0], ["b", -3.0], ["c", -3.0], ["ab", -2.0],
              ["bc", -2.5], ["abc", -4.5]]
    model = {"type": "Unigram", "unk_id": 0, "vocab": pieces, "byte_fallback": False}
    added = [{"id": 0, "content": "<unk>", "single_word": False, "lstrip": False,
              "rstrip": False, "normalized": False, "special": True}]
    tj = _tj(model, added)
    tj["decoder"] = {"type": "Fuse"}
    return tj


def test_unigram_restriction_hand_oracle():
    """Scores: abc = -4.5 beats ab+c = -5.0 and a+bc = -5.5. Without abc: ab+c (-5.0).
    Without abc and ab: a+bc (-5.5) beats a+b+c (-9.0). Only chars: a+b+c."""
    mt = ModularTokenizer(
        toy_unigram(),
        {"full": range(7), "no_abc": [0, 1, 2, 3, 4, 5], "bc": [0, 1, 2, 3, 5], "chars": [0, 1, 2, 3]},
    )
    assert mt.encode("abc") == [6]
    assert mt.encode("abc", ["full"]) == [6]
    assert mt.encode("abc", ["no_abc"]) == [4, 3]
    assert mt.encode("abc", ["bc"]) == [1, 5]
    assert mt.encode("abc", ["chars"]) == [1, 2, 3]
    sub = mt.subtokenizer(["bc"])
    assert [p for p, _ in sub.tokenizer_json["model"]["vocab"]] == ["<unk>", "a", "b", "c", "bc"]
    assert sub.tokenizer_json["model"]["unk_id"] == 0
    assert mt.encode("abd", ["chars"]) == [1, 2, 0]  # d is unknown everywhere
    assert mt.decode([4, 3]) == "abc"


def test_unigram_from_hf_trainer_roundtrip(tmp_path):
    """A real trained Unigram: each restricted encoding uses only its ids, and the union of
    all languages reproduces the global encoding."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    lines = ["the cat sat on the mat", "a dog and a cat", "ein Hund und eine Katze",
             "die Katze sitzt auf der Matte"] * 20
    tok = Tokenizer(models.Unigram())
    tok.pre_tokenizer = pre_tokenizers.Metaspace()
    tok.decoder = decoders.Metaspace()
    tok.train_from_iterator(lines, trainers.UnigramTrainer(vocab_size=60, unk_token="<unk>",
                                                           special_tokens=["<unk>"],
                                                           show_progress=False))
    tj = json.loads(tok.to_str())
    n = len(tj["model"]["vocab"])
    rng = random.Random(0)
    chars = [i for i, (p, _) in enumerate(tj["model"]["vocab"]) if len(p) == 1 or i == 0]
    half = sorted(set(chars) | set(rng.sample(range(n), n // 2)))
    mt = ModularTokenizer(tj, {"all": range(n), "half": half})
    mt.save(tmp_path)
    mt = ModularTokenizer.load(tmp_path)
    for line in lines[:4]:
        assert mt.encode(line, ["all"]) == tok.encode(line, add_special_tokens=False).ids
        ids = mt.encode(line, ["half"])
        assert set(ids) <= set(half)
        assert mt.decode(ids) == line


def test_restrict_keeps_global_merge_order():
    """Restricting to every id is the identity on the model."""
    tj = _tj(TOY_BPE)
    out = restrict(tj, np.arange(8))
    assert out["model"]["merges"] == TOY_BPE["merges"]
    assert out["model"]["vocab"] == TOY_BPE["vocab"]


def test_load_refuses_a_reordered_merge_list(tmp_path):
    """Moving a late merge to the front (it needs tokens made by later merges) used to
    load and encode silently; properness is now checked on load, naming the merge."""
    from modtok.bpe import standard

    model = standard.train(Counter({"lower": 5, "lowest": 3, "newer": 4}), 270, "whitespace")
    tok = ModularTokenizer(to_tokenizer_json(model), {"x": list(range(len(model)))})
    tok.save(tmp_path / "ok")
    assert ModularTokenizer.load(tmp_path / "ok").encode("lowest") == tok.encode("lowest")
    tj = json.loads((tmp_path / "ok" / "tokenizer.json").read_text(encoding="utf-8"))
    merges = tj["model"]["merges"]
    late = merges.pop(len(merges) - 1)  # built from earlier merges' outputs
    tj["model"]["merges"] = [late] + merges
    (tmp_path / "ok" / "tokenizer.json").write_text(json.dumps(tj), encoding="utf-8")
    with pytest.raises(MergeListError, match=r"ok: merge 0 .* which only merge \d+ creates"):
        ModularTokenizer.load(tmp_path / "ok")
