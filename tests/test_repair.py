"""Continued BPE on deployed tokenizers in their own ids (modtok.repair).

Oracles: a naive BPE over the deployed encoder's own segmentation (the
engine in private ids must learn the same merges), the ids of the original
tokenizer on FLORES English/Russian and on hypothesis strings (Proposition 1),
hand-built filter cases, and the pre-token floor as a lower bound for R1.
Scale: a few hundred merges on 2,000 pool lines.
"""

from __future__ import annotations

import json
from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from modtok import audit, data, deployed, pretokenize, repair
from modtok.errors import TokenizerFileError
from modtok.pretokenize import byte_level

K = (60, 300)
TRAIN_LINES = 2000


def _need(name):
    if name not in deployed.available():
        pytest.skip(f"{name}: optional package not installed (pip install modtok[deployed])")


@pytest.fixture(scope="module")
def flores(flores_root):
    return data.load_flores(["eng_Latn", "rus_Cyrl", "npi_Deva"], root=flores_root)


@pytest.fixture(scope="module")
def nepali(pool_root):
    return data.load_pool(["npi_Deva"], root=pool_root)["npi_Deva"][:TRAIN_LINES]


@pytest.fixture(scope="module")
def bases():
    out = {}
    for name in ("llama3", "qwen3"):
        if name in deployed.available():
            out[name] = repair.Base.load(name)
    return out


@pytest.fixture(scope="module")
def extensions(bases, nepali):
    """``{(base, arm, K): Extension}``: llama3 every arm at two K, qwen3 R1/R2 at the larger."""
    if "llama3" not in bases:
        pytest.skip("llama3 tokenizer not installed (pip install modtok[deployed])")
    runs = [("llama3", arm, K) for arm in repair.ARMS] + [("qwen3", "R2", K[-1:])] * ("qwen3" in bases)
    out = {}
    for name, arm, ks in runs:
        base = bases[name]
        counts = repair.count_words(base, nepali, repair.arm_pattern(base.regex, arm))
        for k, ext in repair.sweep(base, counts, ks, arm).items():
            out[name, arm, k] = (ext, ext.tokenizer())
    return out


# --------------------------------------------------------------------------
# pieces, no data


def test_repaired_pattern_is_the_named_repair():
    llama = pretokenize.pattern("llama3")
    assert repair.arm_pattern(llama, "R1") == llama
    assert repair.arm_pattern(llama, "R2") == pretokenize.pattern("llama3-marks")
    assert repair.arm_pattern(llama, "R2-deva") == pretokenize.pattern("llama3-deva")
    # Qwen2/3 (single digits): only the word and punctuation classes change
    qwen = repair.repaired_pattern(pretokenize.pattern("qwen2"))
    assert r"|\p{N}|" in qwen and r"[\p{L}\p{M}]+" in qwen
    with pytest.raises(TokenizerFileError, match="no letters-only word class"):
        repair.repaired_pattern(pretokenize.pattern("o200k"))
    with pytest.raises(ValueError, match="unknown arm"):
        repair.arm_pattern(llama, "R3")


def test_block_filter_by_hand():
    ka, kha = "क".encode(), "ख".encode()  # e0 a4 95, e0 a4 96
    strict, relaxed = repair.BlockFilter(), repair.BlockFilter(relaxed=True)
    for tok, s, r in [
        (ka, True, True),
        (b" " + ka, True, True),          # a complete code point after a space
        (ka[1:] + kha, True, True),        # tail of क, then all of ख
        (ka[:2], False, True),             # lead bytes of क: a piece only
        (ka[1:] + kha[:1], False, True),   # tail of क + lead of ख
        ("কা".encode(), False, False),     # Bengali: another block
        (ka[2:] + b"a", False, False),     # a Devanagari tail then ASCII: no run of the block
        (b"ab", False, False),
    ]:
        assert (strict.keeps(tok), relaxed.keeps(tok)) == (s, r), tok
    bengali = repair.BlockFilter(0x0980, 0x09FF)
    assert bengali.keeps("ক".encode()) and not bengali.keeps(ka)
    with pytest.raises(ValueError, match="UTF-8 lengths"):
        repair.BlockFilter(0x0700, 0x0900)


def test_sweep_prefixes_are_extend_runs(bases, nepali):
    base = bases.get("llama3") or pytest.skip("llama3 not installed")
    counts = repair.count_words(base, nepali[:500], base.regex)
    swept = repair.sweep(base, counts, [10, 40], keep=False)
    assert swept[10].merges == swept[40].merges[:10] == repair.extend(base, counts, 10, keep=False).merges
    assert len(swept[40].merges) == 40


def test_filter_drops_dependants():
    base = {bytes([b]) for b in range(256)}
    ka = "क".encode()
    merges = [(ka[:1], ka[1:2]), (ka[:2], ka[2:]), (b"a", b"b"), (b"ab", ka), (ka, ka)]
    # strict: e0+a4 (no complete code point) goes, and with it everything built on e0a4
    assert repair.filter_merges(merges, repair.BlockFilter().keeps, base) == []
    relaxed = repair.filter_merges(merges, repair.BlockFilter(relaxed=True).keeps, base)
    assert relaxed == [merges[0], merges[1], merges[4]]  # a+b goes, and ab+क (built on ab) with it


def test_base_refuses_other_pipelines():
    from modtok.bpe.model import BPEModel
    from modtok.export import to_tokenizer_json

    tj = to_tokenizer_json(BPEModel([(97, 98)], scheme="llama3"))
    assert repair.Base(tj).next_id == 257
    bad = json.loads(json.dumps(tj))
    bad["pre_tokenizer"] = {"type": "Whitespace"}
    with pytest.raises(TokenizerFileError, match="Split \\+ ByteLevel"):
        repair.Base(bad)
    bad = json.loads(json.dumps(tj))
    del bad["model"]["vocab"]["a"]
    with pytest.raises(TokenizerFileError, match="byte 0x61"):
        repair.Base(bad)


# --------------------------------------------------------------------------
# the engine in private ids == naive BPE over the deployed encoder's own tokens


def _naive_continued(base, tok, counts: Counter, n: int) -> list[tuple[bytes, bytes]]:
    """Continued BPE by the book: segment each word with the deployed tokenizer,
    merge the most frequent pair (ties: smallest (id a, id b), learned ids after all)."""
    words = {w: [t.id for t in tok.model.tokenize(byte_level(w.encode()))] for w in counts}
    tb = dict(enumerate(base.token_bytes))
    ids = {t: i for i, t in tb.items() if t is not None}
    out = []
    for _ in range(n):
        pairs: Counter = Counter()
        for w, seq in words.items():
            for p in zip(seq, seq[1:]):
                pairs[p] += counts[w]
        best = min(pairs, key=lambda p: (-pairs[p], p))
        if pairs[best] < 2:
            break
        a, b = best
        t = tb[a] + tb[b]
        c = ids.setdefault(t, max(tb) + 1)
        tb[c] = t
        out.append((tb[a], tb[b]))
        for w, seq in words.items():
            i, new = 0, []
            while i < len(seq):
                if i + 1 < len(seq) and (seq[i], seq[i + 1]) == best:
                    new.append(c)
                    i += 2
                else:
                    new.append(seq[i])
                    i += 1
            words[w] = new
    return out


@pytest.mark.parametrize("name", ["llama3", "qwen3"])
def test_engine_learns_what_naive_bpe_learns(name, bases, nepali):
    _need(name)
    base = bases[name]
    counts = repair.count_words(base, nepali[:300], repair.arm_pattern(base.regex, "R2"))
    assert repair.learn(base, counts, 25) == _naive_continued(base, base.tokenizer, counts, 25)


def test_count_words_agrees_with_hf_split(extensions, bases, flores):
    """The regex module and HF's Onig cut FLORES Nepali the same way (R1 and R2)."""
    base = bases["llama3"]
    for tok in (base.tokenizer, extensions["llama3", "R2", K[0]][1]):
        regex = tok.pre_tokenizer.__getstate__()  # the pattern as HF holds it
        regex = json.loads(regex)["pretokenizers"][0]["pattern"]["Regex"]
        hf = Counter(
            pretokenize.from_byte_level(p).decode() for line in flores["npi_Deva"] for p in audit.pretokens(tok, line)
        )
        assert repair.count_words(base, flores["npi_Deva"], regex) == hf


# --------------------------------------------------------------------------
# the export keeps everything original


def test_export_keeps_every_original_id(extensions, bases):
    ext, tok = extensions["llama3", "R2", K[-1]]
    orig = bases["llama3"].json
    tj = ext.tokenizer_json()
    new = ext.new_tokens()
    assert len(new) > 0.9 * K[-1] and sorted(new.values()) == list(range(128256, 128256 + len(new)))
    vocab = tj["model"]["vocab"]
    assert all(vocab[s] == i for s, i in orig["model"]["vocab"].items())
    assert tj["model"]["merges"][: len(orig["model"]["merges"])] == orig["model"]["merges"]
    assert len(tj["model"]["merges"]) == len(orig["model"]["merges"]) + len(ext.merges)
    for key in ("added_tokens", "post_processor", "normalizer", "decoder"):
        assert tj[key] == orig[key], key
    assert tj["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"] == pretokenize.pattern("llama3-marks")
    assert tok.get_vocab_size() == 128256 + len(new)
    # special tokens keep their ids (HF renumbers those missing from the model vocabulary)
    for text in ["<|begin_of_text|>x<|eot_id|>", "a<|reserved_special_token_250|>b"]:
        ids = tok.encode(text).ids
        assert ids == bases["llama3"].tokenizer.encode(text).ids and max(ids) >= 128000, (text, ids)


def test_extended_tokens_hold_devanagari_and_round_trip(extensions, flores):
    keep = repair.BlockFilter().keeps
    for (name, arm, k), (ext, tok) in extensions.items():
        assert ext.merges and all(keep(a + b) for a, b in ext.merges), (name, arm, k)
        assert audit.lossless(tok, flores["npi_Deva"]), (name, arm, k)


# --------------------------------------------------------------------------
# English invariance (item 5)


@pytest.mark.parametrize("lang", ["eng_Latn", "rus_Cyrl"])
def test_ids_unchanged_on_flores(lang, extensions, bases, flores):
    lines = flores[lang]
    originals = {name: [e.ids for e in b.tokenizer.encode_batch(lines, add_special_tokens=False)]
                 for name, b in bases.items()}
    for (name, arm, k), (_, tok) in extensions.items():
        ids = [e.ids for e in tok.encode_batch(lines, add_special_tokens=False)]
        assert ids == originals[name], (name, arm, k, lang)


def _no_block(s: str) -> bool:
    return not any(0x0900 <= ord(c) <= 0x097F for c in s)


_PLAIN = st.text(st.characters(exclude_categories=("Mn", "Mc", "Me", "Cs")), max_size=40).filter(_no_block)
# any text outside the Devanagari block, with other scripts' combining marks made likely
_NO_DEVA = st.text(
    st.one_of(st.characters(exclude_categories=("Cs",)), st.sampled_from("\u0301\u0308\u09bf\u09cd\u0bcd\u05b7 ")),
    max_size=40,
).filter(_no_block)


@given(_PLAIN)
def test_proposition_1(extensions, bases, text):
    """Text without \\p{M} and without U+0900–U+097F: every arm gives the original ids."""
    for (name, arm, k), (_, tok) in extensions.items():
        if k == K[-1]:
            assert tok.encode(text).ids == bases[name].tokenizer.encode(text).ids, (name, arm)


@given(_NO_DEVA)
def test_devanagari_only_repair_on_any_other_text(extensions, bases, text):
    _, tok = extensions["llama3", "R2-deva", K[-1]]
    assert tok.encode(text).ids == bases["llama3"].tokenizer.encode(text).ids


def test_devanagari_only_equals_general_repair_on_nepali(extensions, flores):
    for k in K:
        a = extensions["llama3", "R2", k][1].encode_batch(flores["npi_Deva"])
        b = extensions["llama3", "R2-deva", k][1].encode_batch(flores["npi_Deva"])
        assert [e.ids for e in a] == [e.ids for e in b], k


# --------------------------------------------------------------------------
# the floor is a floor


def test_r1_stays_above_its_floor_and_r2_goes_below(extensions, bases, flores):
    ne, en = flores["npi_Deva"], flores["eng_Latn"]
    floor = audit.floor(bases["llama3"].tokenizer, ne, en)
    before = audit.premium_ci(bases["llama3"].tokenizer, ne, en)[0]
    premium = {(arm, k): audit.premium_ci(tok, ne, en)[0]
               for (name, arm, k), (_, tok) in extensions.items() if name == "llama3"}
    for k in K:
        assert floor <= premium["R1", k] < before
        assert premium["R2", k] < premium["R1", k]
    assert premium["R2", K[-1]] < min(premium["R2", K[0]], floor)  # at 300 merges R2 is under R1's floor


# --------------------------------------------------------------------------
# the loading pitfall (§V): transformers must not rebuild the regex


def test_transformers_keeps_the_repaired_regex(extensions, bases, flores, tmp_path):
    transformers = pytest.importorskip("transformers")
    ext, tok = extensions["llama3", "R2", K[-1]]
    ext.save(tmp_path)
    assert json.loads((tmp_path / "tokenizer_config.json").read_text()) == {"tokenizer_class": "PreTrainedTokenizerFast"}
    ne, en = flores["npi_Deva"], flores["eng_Latn"]
    want = audit.premium_ci(tok, ne, en)[0]
    for loaded in (transformers.AutoTokenizer.from_pretrained(tmp_path),
                   transformers.PreTrainedTokenizerFast(tokenizer_file=str(tmp_path / "tokenizer.json"))):
        pre = json.loads(loaded.backend_tokenizer.to_str())["pre_tokenizer"]
        assert pre["pretokenizers"][0]["pattern"]["Regex"] == pretokenize.pattern("llama3-marks")
        count = lambda lines: sum(map(len, loaded(lines, add_special_tokens=False)["input_ids"]))
        assert count(ne) / count(en) == want
        assert loaded.convert_tokens_to_ids("<|eot_id|>") == 128009
    # the pitfall: a model-specific class rebuilds the pre-tokenizer from its own recipe
    qwen = transformers.Qwen2TokenizerFast.from_pretrained(tmp_path)
    regex = json.loads(qwen.backend_tokenizer.to_str())["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"]
    assert r"\p{M}" not in regex


def test_a_mark_aware_deployed_tokenizer(nepali, flores):
    """o200k (case-aware regex that already holds \\p{M}, ids with gaps before its specials):
    R1 extends it in its own ids; R2 has nothing to repair."""
    _need("o200k")
    base = repair.Base.load("o200k")
    with pytest.raises(TokenizerFileError, match="no letters-only"):
        repair.arm_pattern(base.regex, "R2")
    ext = repair.extend(base, repair.count_words(base, nepali[:300], base.regex), 40)
    tok = ext.tokenizer()
    assert min(ext.new_tokens().values()) == base.next_id and len(ext.new_tokens()) > 20
    lines = flores["eng_Latn"][:300]
    assert [e.ids for e in tok.encode_batch(lines)] == [e.ids for e in base.tokenizer.encode_batch(lines)]
    assert audit.premium_ci(tok, flores["npi_Deva"], flores["eng_Latn"], n_boot=10)[0] < \
        audit.premium_ci(base.tokenizer, flores["npi_Deva"], flores["eng_Latn"], n_boot=10)[0]
