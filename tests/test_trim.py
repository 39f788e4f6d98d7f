"""``modtok trim``: a BPE tokenizer (and an HF model) cut to the tokens a text uses.

The claims checked: the trimmed tokenizer encodes its usage text exactly as the base
(Llama-3 with ``ignore_merges``, on real pool text and on random strings), every kept
token is reachable, the merge list gains no improper merge (a proper base stays
proper), specials keep their place, and the trimmed model's logits equal the base
model's at the kept columns.
"""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

from modtok.artifacts import baselines, deployed
from modtok.artifacts import tokenizer_json as tj
from modtok.adapt import hf_model, trim
from modtok.errors import ConfigError, MergeListError, UsageError
from modtok.text import data
from modtok.ui import cli

SAMPLE = {
    "eng_Latn": ["The quick brown fox jumps over the lazy dog.", "Select \"Yes\" to enable AutoFill, 1234567."],
    "deu_Latn": ["Größere Änderungen übernehmen Sie mit der Schaltfläche »OK«.", "Straßenbahn-Haltestelle"],
    "fra_Latn": ["L'élève a écrit « bonjour » à l'île, n'est-ce pas ?", "Ça coûte 3,50 €."],
}


def random_lines(n: int, seed: int) -> list[str]:
    """Strings that stress the pre-tokenizer and the merges: letters of three scripts,
    digits, punctuation, runs of spaces and newlines, emoji, special-token text."""
    rng = random.Random(seed)
    pieces = list("abcdeéßäöüxyz ABCÉ  \t\n0123456789.,;:!?'\"-()[]{}") + ["ing", "tion", "der", "les",
                                                                         "’", "😀", "ы", "<|eot_id|>", "   "]
    return ["".join(rng.choice(pieces) for _ in range(rng.randint(1, 60))) for _ in range(n)]


@pytest.fixture(scope="module")
def llama3():
    if "llama3" not in deployed.available():
        pytest.skip("the deployed llama3 tokenizer is not installed (pip install modtok[deployed])")
    return deployed.load_json("llama3")


@pytest.fixture(scope="module")
def usage_text():
    """200k characters per language of the pool when it is there, else the fixed sample."""
    if data.pool_dir() is not None and data.pool_dir().is_dir():
        return data.load_pool(list(SAMPLE), max_chars=200_000)
    return dict(SAMPLE)


@pytest.fixture(scope="module")
def llama_trim(llama3, usage_text):
    text = {lang: lines + random_lines(300, i) for i, (lang, lines) in enumerate(usage_text.items())}
    return text, trim.trim_json(llama3, text, {"random": random_lines(300, 99)})


def test_usage_text_is_encoded_identically(llama3, llama_trim):
    text, result = llama_trim
    base, trimmed = tj.hf_tokenizer(llama3), tj.hf_tokenizer(result.tokenizer_json)
    for lines in text.values():
        for line in lines:
            ids = trimmed.encode(line, add_special_tokens=False).ids
            assert result.kept[ids].tolist() == base.encode(line, add_special_tokens=False).ids, line
    assert result.report.usage_identical == 1.0
    assert result.report.kept_tokens < result.report.base_tokens / 2  # something was cut
    for line in random_lines(200, 42):  # held-out text: other tokens maybe, the same text back
        assert trimmed.decode(trimmed.encode(line, add_special_tokens=False).ids, skip_special_tokens=False) == line


def test_keep_scripts_keeps_every_token_of_the_script():
    """keep_scripts=["Latn"]: every Latin/Common-only token is kept (with its ancestry), so a
    Latin line the usage text never saw needs no dropped token; Cyrillic tokens still go."""
    russian = ["привет мир, как дела", "мир и привет"] * 30
    lines = [line for lines in SAMPLE.values() for line in lines] * 20 + russian + random_lines(200, 5)
    base = json.loads(baselines.train_hf_bpe(lines, 700, min_frequency=2).to_str())
    latin = trim.script_tokens(base, ["Latn"])
    result = trim.trim_json(base, {"eng_Latn": SAMPLE["eng_Latn"][:1]}, keep_scripts=["Latn"])
    assert latin <= set(result.kept.tolist()) and result.report.kept_tokens < result.report.base_tokens
    hf_base, trimmed = tj.hf_tokenizer(base), tj.hf_tokenizer(result.tokenizer_json)
    for line in SAMPLE["deu_Latn"] + SAMPLE["fra_Latn"]:  # not usage text
        assert result.kept[trimmed.encode(line).ids].tolist() == hf_base.encode(line).ids, line
    assert len(trimmed.encode(russian[0]).ids) > len(hf_base.encode(russian[0]).ids)  # Cyrillic was cut


def test_replay_is_hf_bpe_without_ignore_merges(llama3, usage_text):
    model = llama3["model"]
    hf = tj.hf_tokenizer(llama3)
    ranks = trim.merge_ranks(model)
    lines = [line for lines in usage_text.values() for line in lines[:200]] + random_lines(300, 3)
    words = {w for line in lines for w, _ in hf.pre_tokenizer.pre_tokenize_str(line)} | {"Ġunbelievably"}
    outside = [w for w in words if w not in model["vocab"]]  # ignore_merges emits the others whole
    assert len(outside) > 20
    for w in outside:
        assert trim.replay(w, ranks)[0] == [t.value for t in hf.model.tokenize(w)], w


def test_ids_are_dense_in_order_with_specials_and_bytes(llama3, llama_trim):
    _, result = llama_trim
    kept, out = result.kept, result.tokenizer_json
    assert np.all(np.diff(kept) > 0)
    base_ids, new_ids = tj.model_ids(llama3), tj.model_ids(out)
    assert sorted(new_ids.values()) == list(range(len(kept)))
    assert all(base_ids[t] == kept[i] for t, i in new_ids.items())  # new id i is old id kept[i]
    assert {t["content"] for t in out["added_tokens"]} == {t["content"] for t in llama3["added_tokens"]}
    singles = [t for t in out["model"]["vocab"] if len(t) == 1]
    assert len(singles) == 256
    assert result.old_to_new[128000] == new_ids["<|begin_of_text|>"] == len(kept) - 256


def test_every_kept_token_is_reachable_and_no_improper_merge_is_added(llama3, llama_trim):
    _, result = llama_trim
    base_model, model = llama3["model"], result.tokenizer_json["model"]
    made_base = set(trim.first_merges(base_model))
    made = set(trim.first_merges(model))
    for token in model["vocab"]:
        # a byte, a whole-word-only entry (no base merge makes it), or made by a kept merge
        assert len(token) == 1 or token not in made_base or token in made, token
    late_base, late = trim.late_merges(base_model), trim.late_merges(model)
    assert late <= late_base and len(late_base) > 0  # Llama-3's converted list is not proper
    assert result.report.late_merges_kept == len(late)


def test_a_proper_base_gives_a_proper_trim():
    lines = [line for lines in SAMPLE.values() for line in lines] * 20 + random_lines(200, 5)
    base = json.loads(baselines.train_hf_bpe(lines, 600, min_frequency=2).to_str())
    tj.check_proper(base["model"])
    result = trim.trim_json(base, {"eng_Latn": SAMPLE["eng_Latn"]}, {"deu_Latn": SAMPLE["deu_Latn"]})
    tj.check_proper(result.tokenizer_json["model"])
    assert result.report.usage["eng_Latn"].identical == 1.0
    assert result.report.late_merges_kept == result.report.late_merges_base == 0
    assert 256 <= result.report.kept_tokens < result.report.base_tokens
    # the held-out German still encodes (bytes are kept), with at least as many tokens
    assert result.report.held_out["deu_Latn"].tokens_per_byte_change >= 0


def test_restrict_refuses_a_set_without_its_ancestry():
    base = {"model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2, "abb": 3},
                      "merges": [["a", "b"], ["ab", "b"]]}, "added_tokens": []}
    assert trim.closure(base, [3], alphabet=False).tolist() == [0, 1, 2, 3]
    with pytest.raises(MergeListError):
        tj.restrict(base, np.array([0, 1, 3]))
    with pytest.raises(UsageError):
        trim.trim_json(base, {})


def test_post_processor_ids_are_renumbered():
    template = {"type": "TemplateProcessing", "single": [], "pair": [],
                "special_tokens": {"<s>": {"id": "<s>", "ids": [7], "tokens": ["<s>"]}}}
    seq = {"type": "Sequence", "processors": [{"type": "ByteLevel"}, template]}
    out = trim.remap_post_processor(seq, {7: 2})
    assert out["processors"][1]["special_tokens"]["<s>"]["ids"] == [2]
    assert seq["processors"][1]["special_tokens"]["<s>"]["ids"] == [7]  # the base is not touched
    assert trim.remap_post_processor({"type": "RobertaProcessing", "sep": ["</s>", 9], "cls": ["<s>", 7]},
                                     {7: 0, 9: 1}) == {"type": "RobertaProcessing", "sep": ["</s>", 1],
                                                       "cls": ["<s>", 0]}


# --------------------------------------------------------------------------
# the model


def tiny_llama(tied: bool, vocab_size: int = 128256, seed: int = 0):
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    torch.manual_seed(seed)
    cfg = transformers.LlamaConfig(vocab_size=vocab_size, hidden_size=16, intermediate_size=32,
                                   num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=1,
                                   tie_word_embeddings=tied, bos_token_id=min(128000, vocab_size - 1),
                                   eos_token_id=[min(128001, vocab_size - 1), min(128009, vocab_size - 1)])
    model = transformers.LlamaForCausalLM(cfg).eval()
    if not tied:  # make sure the output rows differ from the input rows
        with torch.no_grad():
            model.lm_head.weight.normal_()
    return model


@pytest.mark.parametrize("tied", [True, False])
def test_trimmed_model_logits_equal_the_base_at_kept_ids(tied, tmp_path):
    import torch
    from transformers import AutoModelForCausalLM

    model = tiny_llama(tied)
    rng = np.random.default_rng(0)
    kept = np.unique(np.concatenate([rng.choice(128000, 3000, replace=False), np.arange(128000, 128256)]))
    old_to_new = {int(old): new for new, old in enumerate(kept)}
    new_ids = torch.as_tensor(rng.integers(0, len(kept), size=(2, 12)))
    with torch.no_grad():
        want = model(torch.as_tensor(kept)[new_ids]).logits[..., torch.as_tensor(kept)]
    saved = hf_model.cut_rows(model, kept, old_to_new)
    assert saved == (128256 - len(kept)) * 16 * 4 * (1 if tied else 2)  # float32 rows
    assert model.config.vocab_size == len(kept)
    assert model.config.bos_token_id == old_to_new[128000]
    assert model.config.eos_token_id == [old_to_new[128001], old_to_new[128009]]
    assert (model.get_output_embeddings().weight is model.get_input_embeddings().weight) == tied
    with torch.no_grad():
        got = model(new_ids).logits
    assert got.shape[-1] == len(kept)
    assert torch.max(torch.abs(got - want)) < 1e-5
    model.save_pretrained(tmp_path / "m")
    again = AutoModelForCausalLM.from_pretrained(tmp_path / "m").eval()
    with torch.no_grad():
        assert torch.max(torch.abs(again(new_ids).logits - want)) < 1e-5
    # the tail extend and trim share: saved, loaded back, its logits checked against a tolerance
    before = hf_model.logits(model, new_ids.tolist(), len(kept))
    assert hf_model.save_checked(model, tmp_path / "s", new_ids.tolist(), before, len(kept), 1e-5, "x") < 1e-5
    with pytest.raises(ConfigError, match=r"the cut model, loaded back .* moved its logits by 0 \(> -1\): nothing"):
        hf_model.save_checked(model, tmp_path / "s", new_ids.tolist(), before, len(kept), -1.0, "the cut model")


# --------------------------------------------------------------------------
# the command


def test_cli_trims_a_tokenizer_and_a_model_atomically(tmp_path, monkeypatch, capsys):
    torch = pytest.importorskip("torch")
    from transformers import AutoModelForCausalLM

    pool = tmp_path / "pool"
    pool.mkdir()
    for i, lang in enumerate(SAMPLE):
        (pool / f"{lang}.txt").write_text("\n".join(SAMPLE[lang] + random_lines(50, i)) + "\n", encoding="utf-8")
    monkeypatch.setenv("MODTOK_POOL", str(pool))
    monkeypatch.delenv("MODTOK_FLORES", raising=False)
    lines = [line for lines in SAMPLE.values() for line in lines] * 20 + random_lines(300, 7)
    base = tmp_path / "base"
    base.mkdir()
    hf = baselines.train_hf_bpe(lines, 700)
    hf.save(str(base / "tokenizer.json"))
    tiny_llama(tied=False, vocab_size=hf.get_vocab_size()).save_pretrained(base / "model")
    held = tmp_path / "held.txt"
    held.write_text("Die Schaltfläche übernehmen.\nThe lazy fox.\n", encoding="utf-8")

    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "notes.txt").write_text("someone's files")
    argv = ["trim", str(base), "--langs", "eng_Latn,fra_Latn", "--eval", str(held), "--model", str(base / "model")]
    assert cli.main([*argv, "-o", str(busy)]) == 2  # not an earlier trim: refused, nothing deleted
    assert "is not empty (notes.txt)" in capsys.readouterr().err
    assert [p.name for p in busy.iterdir()] == ["notes.txt"] and (busy / "notes.txt").read_text() == "someone's files"
    out = tmp_path / "out"
    assert cli.main([*argv, "-o", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "usage text encoded identically: 100.00% of lines" in printed and "held.txt" in printed
    assert sorted(p.name for p in tmp_path.iterdir()) == ["base", "busy", "held.txt", "out", "pool"]  # no temp left
    assert cli.main([*argv, "-o", str(out)]) == 2 and "pass --force" in capsys.readouterr().err
    assert cli.main([*argv, "-o", str(out), "--force"]) == 0
    id_map = json.loads((out / "id_map.json").read_text())
    kept = np.array(id_map["kept"])
    assert {int(k): v for k, v in id_map["old_to_new"].items()} == {int(o): n for n, o in enumerate(kept)}
    report = json.loads((out / "trim_report.json").read_text())
    assert set(report["usage"]) == {"eng_Latn", "fra_Latn"} and report["embedding_bytes_saved"] > 0
    from transformers import AutoTokenizer

    assert AutoTokenizer.from_pretrained(out).encode("The lazy fox.") == \
        [id_map["old_to_new"][str(i)] for i in hf.encode("The lazy fox.").ids]
    model = AutoModelForCausalLM.from_pretrained(out)
    assert model.config.vocab_size == len(kept) == report["kept_tokens"]
    ids = tj.hf_tokenizer(tj.read_json(out / "tokenizer.json")).encode(SAMPLE["fra_Latn"][0]).ids
    assert ids == [id_map["old_to_new"][str(i)] for i in hf.encode(SAMPLE["fra_Latn"][0]).ids]
    with torch.no_grad():
        assert model(torch.as_tensor([ids])).logits.shape[-1] == len(kept)
