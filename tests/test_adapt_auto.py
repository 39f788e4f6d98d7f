"""`modtok extend --model` and `modtok trim --model` outputs load in `transformers` as what was checked.

For tiny models of each model type whose tokenizer `AutoTokenizer` picks differently
(llama, qwen2, qwen3, mistral; built here, no download) and a small byte-level base with
BOS/EOS and a chat template: after `extend --model` and after `trim --model` (of the
extension), `AutoTokenizer` gives the ids of the directory's own `tokenizer.json` on
Nepali and English lines, `AutoModelForCausalLM` loads, and its logits on an English line
equal the original model's on every original id. A padded model (rows beyond the
tokenizer's ids, as Qwen's 151,936) is extended and trimmed with its padding handled.
The oracle for the tokenizer is the `tokenizers` library reading the same file; for the
model, the original model's own logits.
"""

from __future__ import annotations

import json

import pytest

from modtok.bpe.export import to_tokenizer_json
from modtok.bpe.model import BPEModel
from modtok.ui import cli

transformers = pytest.importorskip("transformers")
torch = pytest.importorskip("torch")
from tokenizers import Tokenizer  # noqa: E402

NEPALI = ["नेपालको सरकारले नयाँ नीति ल्यायो", "सरकारको नीति नेपालमा लागू भयो", "नेपाल सरकार नेपालको नीति",
          "काठमाडौंमा नयाँ सरकार"]
ENGLISH = ["The government of Nepal announced a new policy.", "Kathmandu is the capital city."]
CHAT = "{% for m in messages %}<s>{{ m['role'] }}: {{ m['content'] }}</s>{% endfor %}"
TYPES = {"llama": transformers.LlamaConfig, "qwen2": transformers.Qwen2Config, "qwen3": transformers.Qwen3Config,
         "mistral": transformers.MistralConfig}


def small_base(folder):
    """Bytes + 2 merges, <s> at 257 and </s> at 258; BOS before every sequence, a chat template."""
    tj = to_tokenizer_json(BPEModel([(0xE0, 0xA4), (0x20, 0x74)], scheme="llama3"))
    tj["added_tokens"] = [{"id": 258 + k, "content": c, "single_word": False, "lstrip": False, "rstrip": False,
                           "normalized": False, "special": True} for k, c in enumerate(["<s>", "</s>"])]
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "tokenizer.json").write_text(json.dumps(tj), encoding="utf-8")
    (folder / "tokenizer_config.json").write_text(json.dumps(
        {"tokenizer_class": "LlamaTokenizer", "bos_token": "<s>", "eos_token": "</s>", "add_bos_token": True,
         "chat_template": CHAT}), encoding="utf-8")
    return folder


def tiny_model(path, model_type: str, rows: int, tied: bool = False):
    torch.manual_seed(0)
    cfg = TYPES[model_type](vocab_size=rows, hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                            num_attention_heads=2, num_key_value_heads=1, head_dim=8, tie_word_embeddings=tied,
                            bos_token_id=258, eos_token_id=259)
    model = transformers.AutoModelForCausalLM.from_config(cfg).eval()
    if not tied:
        with torch.no_grad():
            model.get_output_embeddings().weight.normal_()
    model.save_pretrained(path)
    return path


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("adapt-auto")
    base = small_base(d / "base")
    (d / "ne.txt").write_text("\n".join(NEPALI * 30) + "\n", encoding="utf-8")
    (d / "en.txt").write_text("\n".join(ENGLISH) + "\n", encoding="utf-8")
    (d / "man.yaml").write_text(f"npi_Deva: [{d / 'ne.txt'}]\neng_Latn: [{d / 'en.txt'}]\n", encoding="utf-8")
    return d, base


def extend_and_trim(d, base, model, tag, *extra):
    ext, trimmed = d / f"ext-{tag}", d / f"trim-{tag}"
    assert cli.main(["extend", str(base), "-o", str(ext), "--lang", "npi_Deva", "-K", "40", "--text", str(d / "ne.txt"),
                     "--probe", str(d / "en.txt"), "--model", str(model), *extra]) == 0
    assert cli.main(["trim", str(ext), "-o", str(trimmed), "--langs", "npi_Deva", "eng_Latn", "--manifest",
                     str(d / "man.yaml"), "--eval", str(d / "en.txt"), "--model", str(ext), *extra]) == 0
    return ext, trimmed


def english_logits(directory, line, ids=None):
    ids = ids or Tokenizer.from_file(str(directory / "tokenizer.json")).encode(line).ids
    model = transformers.AutoModelForCausalLM.from_pretrained(directory, local_files_only=True).eval()
    with torch.no_grad():
        return ids, model(torch.tensor([ids])).logits[0]


@pytest.mark.parametrize("model_type", list(TYPES))
def test_outputs_load_as_what_was_checked(files, model_type, capsys):
    d, base = files
    model = tiny_model(d / f"model-{model_type}", model_type, rows=260, tied=model_type == "qwen3")
    ext, trimmed = extend_and_trim(d, base, model, model_type)
    printed = capsys.readouterr().out
    assert "AutoTokenizer loads it as" in printed
    for out in (ext, trimmed):
        own = Tokenizer.from_file(str(out / "tokenizer.json"))
        auto = transformers.AutoTokenizer.from_pretrained(out, local_files_only=True)
        assert len(auto) == own.get_vocab_size()
        for line in NEPALI + ENGLISH:
            for special in (False, True):
                assert auto(line, add_special_tokens=special).input_ids == own.encode(line, add_special_tokens=special).ids
        assert auto(ENGLISH[0]).input_ids[0] == auto.bos_token_id  # BOS carried, as the base adds it
        assert (auto.bos_token, auto.eos_token) == ("<s>", "</s>")
        assert auto.apply_chat_template([{"role": "user", "content": "hi"}], tokenize=False) == "<s>user: hi</s>"
    assert max(Tokenizer.from_file(str(ext / "tokenizer.json")).encode(NEPALI[0]).ids) >= 260  # learned ids used
    # logits on an English line: unchanged on every original id (extend), at every kept id (trim)
    ext_ids, got = english_logits(ext, ENGLISH[0])
    base_ids = [258] + Tokenizer.from_file(str(base / "tokenizer.json")).encode(ENGLISH[0]).ids  # BOS + the base's
    _, want = english_logits(model, ENGLISH[0], base_ids)
    assert ext_ids == base_ids and torch.allclose(got[:, :260], want, atol=1e-5)
    id_map = json.loads((trimmed / "id_map.json").read_text())
    kept = torch.tensor(id_map["kept"])
    new_ids, got = english_logits(trimmed, ENGLISH[0])
    assert kept[new_ids].tolist() == ext_ids
    assert torch.allclose(got, english_logits(ext, ENGLISH[0])[1][:, kept], atol=1e-5)
    assert {id_map["old_to_new"][str(i)] for i in (258, 259)} == {json.loads(
        (trimmed / "tokenizer.json").read_text())["model"]["vocab"][t] for t in ("<s>", "</s>")}


def test_a_padded_model_is_extended_and_trimmed(files):
    d, base = files
    model = tiny_model(d / "padded", "qwen3", rows=300, tied=True)  # 40 padding rows, as Qwen pads
    ext, trimmed = extend_and_trim(d, base, model, "padded", "--pad-to-multiple-of", "64")
    tj = json.loads((ext / "tokenizer.json").read_text())
    new = max(tj["model"]["vocab"].values()) + 1
    grown = transformers.AutoModelForCausalLM.from_pretrained(ext)
    rows = grown.get_input_embeddings().weight.shape[0]
    assert 260 < new <= 300 and rows == 320  # new ids in the padding, then rounded up to 64
    old = transformers.AutoModelForCausalLM.from_pretrained(model).get_input_embeddings().weight
    assert torch.equal(grown.get_input_embeddings().weight[:260], old[:260])
    cut = transformers.AutoModelForCausalLM.from_pretrained(trimmed)
    kept = json.loads((trimmed / "id_map.json").read_text())["kept"]
    assert cut.get_input_embeddings().weight.shape[0] == -(-len(kept) // 64) * 64 == cut.config.vocab_size
    assert torch.equal(cut.get_input_embeddings().weight[: len(kept)], grown.get_input_embeddings().weight[kept])


def test_without_the_key_qwen2_rebuilds_its_regex(files, tmp_path):
    """Why tokenizer_config.json says trust_remote_code: for model_type qwen2, AutoTokenizer
    builds Qwen2Tokenizer whatever the saved class, and without the key that class puts
    back its letters-only regex (issue 31, defect 1)."""
    d, base = files
    ext = d / "ext-qwen2"
    if not ext.exists():
        pytest.skip("needs the qwen2 run of test_outputs_load_as_what_was_checked")
    for name in ("config.json", "tokenizer.json"):
        (tmp_path / name).write_bytes((ext / name).read_bytes())
    config = json.loads((ext / "tokenizer_config.json").read_text())
    del config["trust_remote_code"]
    (tmp_path / "tokenizer_config.json").write_text(json.dumps(config))
    auto = transformers.AutoTokenizer.from_pretrained(tmp_path)
    own = Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    assert type(auto).__name__ == "Qwen2Tokenizer"
    assert any(auto(line).input_ids != own.encode(line).ids for line in NEPALI)
