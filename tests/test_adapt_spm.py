"""The SentencePiece BPE family: a `.model` as the base of `modtok extend` and `modtok trim`.

Oracles: `sentencepiece` itself (the base's ids; the written `.model` loaded back), the
HF `tokenizers` reading of the `tokenizer.json` written beside it (the same ids as
sentencepiece), and round trips. A tiny byte-fallback BPE `.model` trained here needs no
package; Mistral's (`mistral-common`, the deployed extra) are used when installed.
"""

from __future__ import annotations

import json

import pytest
import sentencepiece as spm
from tokenizers import Tokenizer

from modtok.adapt import spm as adapt_spm
from modtok.artifacts import deployed, spm_bpe
from modtok.errors import TokenizerFileError
from modtok.ui import cli

ENGLISH = ["The government announced a new policy on Monday.", "Prices rose by 3.5% in the capital, officials said.",
           "  two  spaces and a tab\there ", "An emoji 😀 and a rare letter ꙮ."]
NEPALI = ["नेपालको सरकारले नयाँ नीति ल्यायो", "सरकारको नीति नेपालमा लागू भयो", "नेपाल सरकार नेपालको नीति",
          "काठमाडौंमा नयाँ सरकार बन्यो", "प्रधानमन्त्रीले सोमबार घोषणा गर्नुभयो"]


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    """A byte-fallback sentencepiece BPE trained on English only (Devanagari: bytes)."""
    d = tmp_path_factory.mktemp("spm")
    text = d / "en.txt"
    words = "the government policy prices officials capital announced monday said rose new on by in a of and"
    text.write_text("\n".join(ENGLISH * 20 + [words] * 50) + "\n", encoding="utf-8")
    spm.SentencePieceTrainer.train(input=str(text), model_prefix=str(d / "tiny"), model_type="bpe", vocab_size=400,
                                   byte_fallback=True, character_coverage=1.0, split_digits=True)
    return d / "tiny.model"


def test_the_tokenizer_json_encodes_like_sentencepiece(tiny_model):
    model = spm_bpe.read(tiny_model)
    sp, hf = spm.SentencePieceProcessor(model_file=str(tiny_model)), Tokenizer.from_str(json.dumps(model.tokenizer_json()))
    for line in ENGLISH + NEPALI + ["", " ", "x" * 50]:
        assert hf.encode(line, add_special_tokens=False).ids == sp.encode(line), line
    assert spm_bpe.read(model.serialize()).pieces == model.pieces  # the wire format round-trips


def _extend_and_trim(base, tmp_path, k="60"):
    (tmp_path / "ne.txt").write_text("\n".join(NEPALI * 40) + "\n", encoding="utf-8")
    (tmp_path / "en.txt").write_text("\n".join(ENGLISH) + "\n", encoding="utf-8")
    (tmp_path / "m.yaml").write_text(f"npi_Deva: [{tmp_path / 'ne.txt'}]\neng_Latn: [{tmp_path / 'en.txt'}]\n")
    ext, cut = tmp_path / "ext", tmp_path / "cut"
    assert cli.main(["extend", str(base), "-o", str(ext), "--lang", "npi_Deva", "-K", k, "--text",
                     str(tmp_path / "ne.txt"), "--probe", str(tmp_path / "en.txt")]) == 0
    assert cli.main(["trim", str(ext), "-o", str(cut), "--langs", "eng_Latn", "npi_Deva", "--manifest",
                     str(tmp_path / "m.yaml"), "--eval", str(tmp_path / "en.txt")]) == 0
    return ext, cut


def _check(base_sp, ext, cut):
    new = spm.SentencePieceProcessor(model_file=str(ext / "tokenizer.model"))  # the written .model loads
    hf = Tokenizer.from_file(str(ext / "tokenizer.json"))
    for line in ENGLISH:  # English ids identical to the base's, in both libraries
        assert new.encode(line) == base_sp.encode(line) == hf.encode(line, add_special_tokens=False).ids
    for line in NEPALI:  # the new language's lines shorter, the same in both libraries, round trip exact
        assert len(new.encode(line)) < len(base_sp.encode(line))
        assert new.encode(line) == hf.encode(line, add_special_tokens=False).ids
        assert new.decode(new.encode(line)) == line and hf.decode(hf.encode(line).ids) == line
    assert new.get_piece_size() > base_sp.get_piece_size()
    assert all(new.id_to_piece(i) == base_sp.id_to_piece(i) and new.get_score(i) == base_sp.get_score(i)
               for i in range(base_sp.get_piece_size()))
    # trimmed: a .model of the kept pieces; usage text (English + Nepali) encodes as the extension did
    kept = json.loads((cut / "id_map.json").read_text())["kept"]
    small = spm.SentencePieceProcessor(model_file=str(cut / "tokenizer.model"))
    hf_small = Tokenizer.from_file(str(cut / "tokenizer.json"))
    assert small.get_piece_size() == len(kept) < new.get_piece_size()
    for line in ENGLISH + NEPALI:  # decoded as the extension decodes it (sentencepiece's normalizer
        # drops the extra spaces of ENGLISH[2] in the base too); every other line exactly
        assert [kept[i] for i in small.encode(line)] == new.encode(line)
        assert small.encode(line) == hf_small.encode(line, add_special_tokens=False).ids
        assert small.decode(small.encode(line)) == new.decode(new.encode(line)) == base_sp.decode(base_sp.encode(line))
        assert small.decode(small.encode(line)) == line or line == ENGLISH[2]


def test_extend_and_trim_a_trained_model(tiny_model, tmp_path, capsys):
    ext, cut = _extend_and_trim(tiny_model, tmp_path)
    assert "sentencepiece BPE: no split regex" in capsys.readouterr().out
    _check(spm.SentencePieceProcessor(model_file=str(tiny_model)), ext, cut)
    # a Devanagari character the base only had as bytes is now a piece of its own, after every old id
    new, base_size = spm.SentencePieceProcessor(model_file=str(ext / "tokenizer.model")), spm.SentencePieceProcessor(
        model_file=str(tiny_model)).get_piece_size()
    assert new.piece_to_id("न") >= base_size and not new.is_unknown(new.piece_to_id("न"))
    assert not any(p.startswith("<0x") for p in new.encode("न", out_type=str))


def test_both_kinds_of_base_have_every_phase_extend_runs(tiny_model, tmp_path):
    """`extend.run` calls its phases through `extend.Continuation`: a sentencepiece `.model`
    and a byte-level `tokenizer.json` each get their kind, with every member of it, and
    the same learn -> extension -> as_base -> invariance chain works on both."""
    from modtok.adapt import extend
    from modtok.bpe.export import to_tokenizer_json
    from modtok.bpe.model import BPEModel

    byte_level = tmp_path / "bl" / "tokenizer.json"
    byte_level.parent.mkdir()
    byte_level.write_text(json.dumps(to_tokenizer_json(BPEModel([(0xE0, 0xA4)], scheme="llama3"))))
    for path, kind in ((tiny_model, adapt_spm.SentencePiece), (byte_level, extend.ByteLevel)):
        assert extend.kind_of(path) is kind
        c = kind(path, kind.read(path), None, "R2")
        assert isinstance(c, extend.Continuation) and repr(c.base) in c.describe()
        learned = c.learn(c.base, NEPALI * 3, 5, 2, False, 1)
        ext = c.extension(learned)
        assert len(learned) == 5 and ext.merges == learned and len(ext.new_tokens()) > 0
        assert ext.as_base().next_id == c.base.next_id + len(ext.new_tokens())
        assert c.invariance(ext, {"en": ENGLISH}, ["Deva"]).ok


def test_keep_script_keeps_every_piece_of_the_script(tiny_model):
    """A SentencePiece piece's text is the piece with ▁ as a space (not a byte-level string):
    trimmed to one English line with keep_scripts=["Latn"], English lines the usage text never
    saw encode as in the base (and without the guard they do not); what it keeps beyond the
    usage text has Latin letters only."""
    from modtok.adapt import trim

    model = spm_bpe.read(tiny_model)
    tj = model.tokenizer_json()
    plain = trim.trim_json(tj, {"eng_Latn": ENGLISH[:1]})
    latin = trim.trim_json(tj, {"eng_Latn": ENGLISH[:1]}, keep_scripts=["Latn"])
    assert plain.report.kept_tokens < latin.report.kept_tokens < latin.report.base_tokens
    sp, cut = model.processor(), model.with_pieces([model.pieces[i] for i in latin.kept]).processor()
    for line in ENGLISH[1:3]:
        assert latin.kept[cut.encode(line)].tolist() == sp.encode(line), line
    extra = {model.pieces[i][0] for i in latin.kept} - {model.pieces[i][0] for i in plain.kept}
    assert extra and all(c.isascii() for p in extra for c in p if c.isalpha())  # Latin letters (+ ▁, digits, 😀)
    narrow = model.with_pieces([model.pieces[i] for i in plain.kept]).processor()  # without the guard they move
    assert any(plain.kept[narrow.encode(line)].tolist() != sp.encode(line) for line in ENGLISH[1:3])


def test_a_unigram_model_is_refused_with_the_reason(tmp_path, capsys):
    text = tmp_path / "t.txt"
    text.write_text("\n".join(ENGLISH * 30) + "\n", encoding="utf-8")
    spm.SentencePieceTrainer.train(input=str(text), model_prefix=str(tmp_path / "uni"), model_type="unigram",
                                   vocab_size=300, byte_fallback=True)  # 256 bytes + 37 characters + a few
    with pytest.raises(TokenizerFileError, match="Unigram"):
        adapt_spm.SpmBase.load(tmp_path / "uni.model")
    (tmp_path / "m.yaml").write_text(f"eng_Latn: [{text}]\n")
    assert cli.main(["trim", str(tmp_path / "uni.model"), "-o", str(tmp_path / "o"), "--langs", "eng_Latn",
                     "--manifest", str(tmp_path / "m.yaml")]) == 2
    assert "its Viterbi paths on the usage text" in capsys.readouterr().err and not (tmp_path / "o").exists()


def _need_mistral():
    if "mistral-v1" not in deployed.available():
        pytest.skip("mistral-common is not installed (pip install modtok[deployed])")


def test_extend_and_trim_mistral(tmp_path):
    _need_mistral()
    ext, cut = _extend_and_trim("mistral", tmp_path, k="40")
    _check(spm.SentencePieceProcessor(model_file=str(deployed.resource_path("mistral"))), ext, cut)
    config = json.loads((ext / "tokenizer_config.json").read_text())
    assert (config["bos_token"], config["eos_token"]) == ("<s>", "</s>")
    assert Tokenizer.from_file(str(ext / "tokenizer.json")).encode("Hi").ids[0] == 1  # BOS, as Mistral adds it
    # the trimmed directory keeps BOS/EOS, at their new ids, in transformers too
    old_to_new = json.loads((cut / "id_map.json").read_text())["old_to_new"]
    auto = pytest.importorskip("transformers").AutoTokenizer.from_pretrained(cut, local_files_only=True)
    assert (auto.bos_token, auto.eos_token) == ("<s>", "</s>")
    assert (auto.bos_token_id, auto.eos_token_id) == (old_to_new["1"], old_to_new["2"]) == (1, 2)
    assert auto("Hi").input_ids[0] == 1
    # an extension extended again keeps adding BOS (the template lives in tokenizer.json, not the .model)
    again = tmp_path / "again"
    assert cli.main(["extend", str(ext), "-o", str(again), "--lang", "npi_Deva", "-K", "10", "--text",
                     str(tmp_path / "ne.txt"), "--probe", str(tmp_path / "en.txt")]) == 0
    assert Tokenizer.from_file(str(again / "tokenizer.json")).encode("Hi").ids[0] == 1


@pytest.mark.parametrize("name", ["mistral-v1", "mistral-v3", "mistral-v7"])
def test_deployed_mistral_models_convert_exactly(name, flores_root):
    _need_mistral()
    sp = spm.SentencePieceProcessor(model_file=str(deployed.resource_path(name)))
    hf = deployed.load(name)
    lines = list(ENGLISH + NEPALI)
    for lang in ("eng_Latn", "npi_Deva"):
        f = flores_root / "devtest" / f"{lang}.devtest"
        lines += f.read_text(encoding="utf-8").splitlines()[:300] if f.is_file() else []
    assert [e.ids for e in hf.encode_batch(lines, add_special_tokens=False)] == [sp.encode(line) for line in lines]


def test_tekken_converts_exactly(flores_root):
    _need_mistral()
    from mistral_common.tokens.tokenizers.tekken import Tekkenizer

    tk = Tekkenizer.from_file(str(deployed.resource_path("tekken")))
    hf = deployed.load("tekken")
    lines = list(ENGLISH + NEPALI)
    f = flores_root / "devtest" / "npi_Deva.devtest"
    lines += f.read_text(encoding="utf-8").splitlines()[:200] if f.is_file() else []
    assert [e.ids for e in hf.encode_batch(lines, add_special_tokens=False)] == \
        [tk.encode(line, bos=False, eos=False) for line in lines]
    assert hf.token_to_id("<s>") == tk.bos_id == 1 and hf.get_vocab_size() == 131072
