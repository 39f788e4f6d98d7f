"""Metrics against values worked out by hand on toy tokenizers.

``Chars`` emits one token per character and ``Words`` one per whitespace word,
so every expected value below is a count you can do on paper.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from modtok.errors import (
    DataError,
    ModtokError,
    ParallelCorpusError,
    UnknownLanguageError,
    UnsupportedTokenizerError,
)
from modtok.evaluation import metrics


class Chars:
    """One token per character, id = position of the character in ``alphabet``
    (``encode(str)`` only: the slowest duck-typing path)."""

    def __init__(self, alphabet: str = "abcdefghijklmnopqrstuvwxyz "):
        self.index = {c: i for i, c in enumerate(alphabet)}
        self.vocab_size = len(alphabet)

    def encode(self, text):
        return [self.index.get(c, 0) for c in text]


class Words:
    """One token per whitespace word (``encode_batch`` path)."""

    def encode_batch(self, texts):
        return [[len(w) for w in t.split()] for t in texts]


LINES = ["ab c", "de", "fgh ij k"]  # 4 + 2 + 8 = 14 characters, 2 + 1 + 3 = 6 words


def test_token_counts_duck_typed_paths():
    """Chars: [4, 2, 8]; Words: [2, 1, 3]; int64 array of one count per line."""
    counts = metrics.token_counts(Chars(), LINES)
    assert counts.dtype == np.int64 and counts.tolist() == [4, 2, 8]
    assert metrics.token_counts(Words(), LINES).tolist() == [2, 1, 3]

    class WithEncodings:  # encode() returns an object with .ids (an HF Encoding)
        def encode(self, text):
            return type("E", (), {"ids": list(range(len(text)))})()

    assert metrics.token_counts(WithEncodings(), LINES).tolist() == [4, 2, 8]


def test_token_counts_hf_tokenizer_without_special_tokens(monkeypatch):
    """A WordLevel tokenizer whose post-processor prepends [CLS]: metrics must
    not count it, so "a b" -> 2 tokens and "b" -> 1. With a batch size of 2 the
    five lines go through three encode_batch calls and keep their order."""
    from tokenizers import Tokenizer, models, pre_tokenizers, processors

    tok = Tokenizer(models.WordLevel({"[UNK]": 0, "[CLS]": 1, "a": 2, "b": 3}, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.post_processor = processors.TemplateProcessing(single="[CLS] $A", special_tokens=[("[CLS]", 1)])
    assert len(tok.encode("a b").ids) == 3  # the processor is active by default
    monkeypatch.setattr(metrics, "_BATCH", 2)
    lines = ["a b", "b", "a a a", "", "b z"]
    assert metrics.token_counts(tok, lines).tolist() == [2, 1, 3, 0, 2]
    assert metrics.encode_lines(tok, ["a b"]) == [[2, 3]]


def test_token_counts_sentencepiece_matches_its_own_encode(tmp_path):
    """The sentencepiece path gives what ``sp.encode(line)`` gives line by line."""
    import io

    import sentencepiece as spm

    text = ["the cat sat on the mat", "a dog and a cat", "नमस्ते संसार"] * 20
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(text), model_writer=model, vocab_size=40, model_type="unigram",
        minloglevel=2, hard_vocab_limit=False,
    )
    sp = spm.SentencePieceProcessor(model_proto=model.getvalue())
    lines = ["the cat", "नमस्ते", "a dog sat"]
    assert metrics.token_counts(sp, lines).tolist() == [len(sp.encode(x)) for x in lines]
    assert metrics.vocab_size_of(sp) == sp.get_piece_size()


def test_token_counts_tiktoken_encodes_special_text_as_ordinary():
    """tiktoken's encode_batch refuses text with a special token; metrics use
    encode_ordinary_batch, so "<|endoftext|>" is 13 one-byte tokens here."""
    tiktoken = pytest.importorskip("tiktoken", reason="tiktoken is in the [deployed] extra")
    enc = tiktoken.Encoding(
        "bytes", pat_str=r"\S+|\s+", mergeable_ranks={bytes([b]): b for b in range(256)},
        special_tokens={"<|endoftext|>": 256},
    )
    assert metrics.token_counts(enc, ["<|endoftext|>", "ab"]).tolist() == [13, 2]
    assert metrics.vocab_size_of(enc) == 257


def test_unsupported_tokenizer():
    with pytest.raises(UnsupportedTokenizerError, match="cannot encode with object"):
        metrics.token_counts(object(), LINES)
    with pytest.raises(UnsupportedTokenizerError, match="vocab_size="):
        metrics.vocab_utilisation(Words(), LINES)


def test_nsl():
    """Chars vs Words reference: 14 / 6 = 7/3; the reverse 6/14 = 3/7;
    a tokenizer against itself is 1."""
    assert metrics.nsl(Chars(), Words(), LINES) == pytest.approx(7 / 3)
    assert metrics.nsl(Words(), Chars(), LINES) == pytest.approx(3 / 7)
    assert metrics.nsl(Chars(), Chars(), LINES) == 1.0
    assert metrics.nsl_from_counts(np.array([4, 2, 8]), np.array([2, 1, 3])) == pytest.approx(7 / 3)
    with pytest.raises(DataError, match="reference has no token"):
        metrics.nsl(Chars(), Words(), ["  ", ""])


def test_tokens_per_char_and_bytes_per_token():
    """["é a", "नम"]: 5 characters; UTF-8 bytes 2+1+1 + 3+3 = 10.
    Chars: 5 tokens -> 1 token/char, 2 bytes/token. Words: 2 + 1 = 3 tokens ->
    3/5 tokens/char, 10/3 bytes/token."""
    lines = ["é a", "नम"]
    assert metrics.tokens_per_char(Chars(), lines) == 1.0
    assert metrics.compression_rate(Chars(), lines, "bytes") == 2.0
    assert metrics.tokens_per_char(Words(), lines) == pytest.approx(3 / 5)
    assert metrics.compression_rate(Words(), lines, "bytes") == pytest.approx(10 / 3)
    assert (metrics.char_count(lines), metrics.byte_count(lines), metrics.word_count(lines)) == (5, 10, 3)


def test_fertility_and_unspaced_scripts():
    """Chars on LINES: 14 tokens / 6 words = 7/3. For Thai, Chinese, Japanese
    (and the other data.SPACELESS_SCRIPTS) fertility is undefined: NaN."""
    assert metrics.fertility(Chars(), LINES) == pytest.approx(7 / 3)
    assert metrics.fertility(Chars(), LINES, lang="eng_Latn") == pytest.approx(7 / 3)
    for lang in ("tha_Thai", "zho_Hans", "zho_Hant", "jpn_Jpan", "khm_Khmr", "lao_Laoo", "mya_Mymr"):
        assert math.isnan(metrics.fertility(Chars(), LINES, lang=lang))
    assert not metrics.written_without_spaces("npi_Deva")
    with pytest.raises(DataError, match="no whitespace word"):
        metrics.fertility(Chars(), ["   "])
    with pytest.raises(DataError, match="<lang>_<Script>"):
        metrics.fertility(Chars(), LINES, lang="english")


def test_premium_is_a_ratio_of_totals():
    """lang ["abcd", "e"] vs eng ["ab", "c"] with Chars: (4 + 1) / (2 + 1) = 5/3,
    not the mean of the per-line ratios (2 + 1) / 2 = 3/2."""
    assert metrics.premium(Chars(), ["abcd", "e"], ["ab", "c"]) == pytest.approx(5 / 3)
    parallel = {"eng_Latn": ["ab", "c"], "xxx_Latn": ["abcd", "e"], "yyy_Latn": ["a", "b"]}
    assert metrics.premiums(Chars(), parallel) == pytest.approx(
        {"eng_Latn": 1.0, "xxx_Latn": 5 / 3, "yyy_Latn": 2 / 3}
    )
    with pytest.raises(ParallelCorpusError, match="lang: 3, eng: 2"):
        metrics.premium(Chars(), ["a", "b", "c"], ["a", "b"])
    with pytest.raises(UnknownLanguageError):
        metrics.premiums(Chars(), {"xxx_Latn": ["a"]})
    with pytest.raises(DataError, match="English side has no token"):
        metrics.premium(Chars(), ["a"], [""])


def test_gini():
    """Costs [1, 2, 3, 4]: Σ|vi − vj| over ordered pairs = 2 (1+2+3+1+2+1) = 20,
    2 n² mean = 2 * 16 * 2.5 = 80 -> 0.25. One language pays everything among
    four, [0, 0, 0, 1]: 6 / (2 * 16 * 0.25) = 0.75 = (n − 1)/n. Equal costs: 0."""
    assert metrics.gini([1, 2, 3, 4]) == pytest.approx(0.25)
    assert metrics.gini([0, 0, 0, 1]) == pytest.approx(0.75)
    assert metrics.gini([7, 7]) == 0.0
    parallel = {"a_Latn": ["x"], "b_Latn": ["xx"], "c_Latn": ["xxx"], "d_Latn": ["xxxx"]}
    assert metrics.language_costs(Chars(), parallel) == {"a_Latn": 1, "b_Latn": 2, "c_Latn": 3, "d_Latn": 4}
    assert metrics.cost_gini(Chars(), parallel) == pytest.approx(0.25)
    with pytest.raises(ParallelCorpusError):
        metrics.cost_gini(Chars(), {"a_Latn": ["x"], "b_Latn": ["x", "y"]})
    for bad in ([], [0, 0], [1, -1]):
        with pytest.raises(DataError):
            metrics.gini(bad)


def test_vocab_utilisation():
    """Alphabet "abcdefghij" (|V| = 10). "abca", "bd" use {a, b, c, d}: 4/10;
    "jjj" uses {j}: 1/10. An explicit vocab_size=8 gives 4/8."""
    tok = Chars("abcdefghij")
    assert metrics.vocab_utilisation(tok, ["abca", "bd"]) == pytest.approx(0.4)
    assert metrics.vocab_utilisation(tok, ["abca", "bd"], vocab_size=8) == pytest.approx(0.5)
    assert metrics.vocab_utilisation_by_language(tok, {"x_Latn": ["abca", "bd"], "y_Latn": ["jjj"]}) == pytest.approx(
        {"x_Latn": 0.4, "y_Latn": 0.1}
    )
    assert metrics.unigram_counts(tok, ["abca", "bd"]) == {0: 2, 1: 2, 2: 1, 3: 1}


def test_renyi_efficiency():
    """"aabc" -> p = (1/2, 1/4, 1/4), |V| = 4.
    α = 2: Σp² = 3/8, H₂ = log(8/3), efficiency log(8/3)/log 4 = 0.70752.
    α = 1 (Shannon): H = 1.5 bits, log₂4 = 2 bits -> 0.75.
    α = 2.5 (default): Σp^2.5 = 2^-2.5 + 2·4^-2.5 = 0.239277, H = −ln(0.239277)/1.5 = 1.430135/1.5
    = 0.953423, / ln 4 = 0.687749.
    Uniform use of the whole vocabulary is efficiency 1 for any α."""
    tok = Chars("abcd")
    assert metrics.renyi_efficiency(tok, ["aabc"], alpha=2.0) == pytest.approx(0.707519, abs=1e-6)
    assert metrics.renyi_efficiency(tok, ["aabc"], alpha=1.0) == pytest.approx(0.75)
    assert metrics.renyi_efficiency(tok, ["aa", "bc"]) == pytest.approx(0.687749, abs=1e-6)
    assert metrics.renyi_efficiency(tok, ["abcd"], alpha=3.0) == pytest.approx(1.0)
    assert metrics.renyi_efficiency_from_counts({5: 2, 9: 1, 11: 1}, 4, alpha=2.0) == pytest.approx(0.707519, abs=1e-6)
    with pytest.raises(DataError):
        metrics.renyi_efficiency(tok, ["", ""])  # no token at all
    with pytest.raises(DataError):
        metrics.renyi_efficiency_from_counts([1, 1], vocab_size=1)


def test_language_table():
    """eng_Latn ["ab c"] (4 chars, 2 words, 4 bytes) and zho_Hans ["你好"] (2 chars,
    6 bytes, no word boundaries). Chars against the Words reference:
    eng: 4 tokens, NSL 4/2 = 2, 1 token/char, 1 byte/token, fertility 4/2 = 2;
    zho: 2 tokens, NSL 2/1 = 2, 1 token/char, 3 bytes/token, fertility NaN."""
    corpus = {"eng_Latn": ["ab c"], "zho_Hans": ["你好"]}
    rows = metrics.language_table({"chars": Chars(), "words": Words()}, Words(), corpus)
    assert [(r["lang"], r["tokenizer"]) for r in rows] == [
        ("eng_Latn", "chars"), ("eng_Latn", "words"), ("zho_Hans", "chars"), ("zho_Hans", "words"),
    ]
    eng, zho = rows[0], rows[2]
    assert (eng["tokens"], eng["nsl"], eng["tokens_per_char"], eng["bytes_per_token"], eng["fertility"]) == (4, 2.0, 1.0, 1.0, 2.0)
    assert (zho["tokens"], zho["nsl"], zho["tokens_per_char"], zho["bytes_per_token"]) == (2, 2.0, 1.0, 3.0)
    assert math.isnan(zho["fertility"])
    assert rows[1]["nsl"] == 1.0  # the reference against itself
    # per-language references: eng against Chars itself -> NSL 1
    rows = metrics.language_table({"chars": Chars()}, {"eng_Latn": Chars(), "zho_Hans": Words()}, corpus)
    assert [r["nsl"] for r in rows] == [1.0, 2.0]
    with pytest.raises(UnknownLanguageError, match="zho_Hans"):
        metrics.language_table({"chars": Chars()}, {"eng_Latn": Chars()}, corpus)


@pytest.mark.parametrize(
    "call",
    [
        lambda: metrics.token_counts(Chars(), []),
        lambda: metrics.nsl(Chars(), Words(), []),
        lambda: metrics.tokens_per_char(Chars(), []),
        lambda: metrics.compression_rate(Chars(), []),
        lambda: metrics.fertility(Chars(), []),
        lambda: metrics.premium(Chars(), [], []),
        lambda: metrics.cost_gini(Chars(), {}),
        lambda: metrics.vocab_utilisation(Chars(), []),
        lambda: metrics.renyi_efficiency(Chars(), []),
        lambda: metrics.language_table({"c": Chars()}, Chars(), {}),
        lambda: metrics.language_table({"c": Chars()}, Chars(), {"eng_Latn": []}),
        lambda: metrics.token_counts(Chars(), "one string, not lines"),
    ],
)
def test_empty_or_malformed_corpus_is_a_data_error(call):
    with pytest.raises(DataError) as info:
        call()
    assert isinstance(info.value, ModtokError)


def test_compression_rates_and_tiers():
    """Chars on LINES: 14 chars, 14 bytes, 3 lines over 14 tokens; two 'languages'
    utilisation = distinct characters / 27: x 12, y 2, z 3."""
    corpus = {"x": LINES, "y": ["aab", "ba"]}
    assert metrics.compression_rate(Chars(), LINES, "chars") == 1.0
    assert metrics.compression_rate(Chars(), LINES, "lines") == 3 / 14
    assert metrics.compression_rate(Chars(), ["né"], "bytes") == 3 / 2
    assert metrics.compression_rates(Words(), corpus, "lines") == {"x": 3 / 6, "y": 2 / 2}
    assert metrics.global_compression(Chars(), corpus, "chars") == 1.0
    assert metrics.global_compression(Words(), corpus, "lines") == 5 / 8
    util = metrics.vocab_utilisation_by_tier(Chars(), {**corpus, "z": ["abc"]}, {"x": "low", "y": "high", "z": "high"})
    assert util == {"low": pytest.approx(12 / 27), "high": pytest.approx((2 / 27 + 3 / 27) / 2)}
    with pytest.raises(UnknownLanguageError):
        metrics.vocab_utilisation_by_tier(Chars(), corpus, {"x": "low"})
    with pytest.raises(DataError, match="unknown unit"):
        metrics.compression_rate(Chars(), LINES, "words")


def test_parity_summary_on_parallel_text():
    """Two aligned sides: Chars costs 4+2 and 3+3 tokens -> Gini |6-6| = 0; Words
    costs 3 and 2 -> Gini 2*1 / (2*4*2.5) = 0.1."""
    parallel = {"xxx_Latn": ["ab c", "de"], "yyy_Latn": ["abc", "fgh"]}
    s = metrics.parity_summary(Chars(), parallel)
    assert s["gini"] == 0.0 and s["tokens"] == 12
    assert s["gini_per_byte"] == pytest.approx(metrics.gini([6 / 6, 6 / 6]))  # 6 bytes each side
    words = metrics.parity_summary(Words(), {"xxx_Latn": ["ab c", "de"], "yyy_Latn": ["abcdefgh", "x"]}, vocab_size=10)
    assert words["gini_per_byte"] == pytest.approx(metrics.gini([3 / 6, 2 / 9]))  # 3 tokens / 6 bytes, 2 / 9
    assert s["global_compression"] == 12 / 12 and s["fertility"] == 12 / 5
    assert s["utilisation"] == 9 / 27  # a b c d e f g h and the space
    assert metrics.parity_summary(Words(), parallel, vocab_size=10)["gini"] == pytest.approx(0.1)
    with pytest.raises(ParallelCorpusError):
        metrics.parity_summary(Chars(), {"xxx_Latn": ["a"], "yyy_Latn": ["a", "b"]})


# --------------------------------------------------------------------------
# encode once: every measure from one Encoded equals the measure encoding again,
# to the last digit (the oracles below are the implementations before issue 32)


def _per_measure(tok, parallel, size):
    """Each measure the way it was computed before issue 32: every one encodes again."""
    lines = {lang: list(ls) for lang, ls in parallel.items()}
    totals = {lang: int(metrics.token_counts(tok, ls).sum()) for lang, ls in lines.items()}
    first = next(iter(lines))

    def unigram(ls):
        flat = np.fromiter((i for seq in metrics.encode_lines(tok, ls) for i in seq), dtype=np.int64)
        values, counts = np.unique(flat, return_counts=True)
        return dict(zip(values.tolist(), counts.tolist()))

    pooled = np.bincount(np.concatenate([np.fromiter((i for seq in metrics.encode_lines(tok, ls) for i in seq),
                                                     np.int64) for ls in lines.values()]))
    pooled = pooled[pooled > 0]
    spaced = [lang for lang in lines if not metrics.written_without_spaces(lang)]
    return {
        "premiums": {lang: t / totals[first] for lang, t in totals.items()},
        "gini": metrics.gini(list(totals.values())),
        "utilisation": {lang: len(unigram(ls)) / size for lang, ls in lines.items()},
        "renyi": metrics.renyi_efficiency_from_counts(unigram(lines[first]), size),
        "compression": {lang: metrics.byte_count(ls) / metrics.token_counts(tok, ls).sum() for lang, ls in lines.items()},
        "chars": {lang: metrics.char_count(ls) / metrics.token_counts(tok, ls).sum() for lang, ls in lines.items()},
        "fertility": {lang: metrics.fertility_from_counts(metrics.token_counts(tok, ls), ls, lang)
                      for lang, ls in lines.items()},
        "summary": {
            "gini": metrics.gini(list(totals.values())),
            "gini_per_byte": metrics.gini([totals[lang] / metrics.byte_count(ls) for lang, ls in lines.items()]),
            "global_compression": sum(map(metrics.byte_count, lines.values())) / sum(totals.values()),
            "utilisation": len(pooled) / size,
            "renyi": metrics.renyi_efficiency_from_counts(pooled, size),
            "fertility": (sum(totals[lang] for lang in spaced) / sum(metrics.word_count(lines[lang]) for lang in spaced)
                          if spaced else float("nan")),
            "tokens": sum(totals.values())},
    }


def _from_one_encoding(tok, parallel, size):
    enc = metrics.encode(tok, parallel)
    first = next(iter(enc))
    return {
        "premiums": metrics.premiums_of(enc, first),
        "gini": metrics.cost_gini_of(enc),
        "utilisation": {lang: metrics.vocab_utilisation_of(e, size) for lang, e in enc.items()},
        "renyi": metrics.renyi_efficiency_from_counts(enc[first].unigram, size),
        "compression": {lang: metrics.compression_rate_of(e) for lang, e in enc.items()},
        "chars": {lang: metrics.compression_rate_of(e, "chars") for lang, e in enc.items()},
        "fertility": {lang: metrics.fertility_of(e, lang) for lang, e in enc.items()},
        "summary": metrics.parity_summary_of(enc, size),
    }


def _same(a, b):  # equal to the last digit, NaN equal to NaN
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return a == b or (isinstance(a, float) and math.isnan(a) and math.isnan(b))


def test_measures_from_one_encoding_equal_the_measures_per_call_tiny():
    from modtok.bpe.export import hf_tokenizer
    from modtok.bpe.model import BPEModel

    tok = hf_tokenizer(BPEModel([(0x61, 0x62), (0x20, 0x63), (0xE0, 0xB8)], scheme="llama3"))
    parallel = {"eng_Latn": ["ab c ab", "cab  d"], "deu_Latn": ["abab c", "x"], "tha_Thai": ["สวัสดี", "ab"]}
    size = metrics.vocab_size_of(tok)
    assert _same(_from_one_encoding(tok, parallel, size), _per_measure(tok, parallel, size))
    # the (tokenizer, lines) forms are the same numbers
    assert _same(metrics.parity_summary(tok, parallel), _per_measure(tok, parallel, size)["summary"])
    assert _same(metrics.premiums(tok, parallel, "eng_Latn"), _per_measure(tok, parallel, size)["premiums"])
    assert metrics.unigram_counts(tok, parallel["eng_Latn"]) == dict(zip(*np.unique(
        [i for s in metrics.encode_lines(tok, parallel["eng_Latn"]) for i in s], return_counts=True)))


def test_measures_from_one_encoding_equal_the_measures_per_call_flores(flores_root):
    from modtok.artifacts import deployed
    from modtok.text import data

    if "llama3" not in deployed.available():
        pytest.skip("llama3: optional package not installed (pip install modtok[deployed])")
    tok = deployed.load("llama3")
    parallel = data.load_flores(["eng_Latn", "npi_Deva", "tha_Thai", "deu_Latn"], root=flores_root)
    size = metrics.vocab_size_of(tok)
    assert _same(_from_one_encoding(tok, parallel, size), _per_measure(tok, parallel, size))


def test_ethiopic_wordspace_separates_words(declaration):
    """Amharic written with Ethiopic's wordspace ፡ (U+1361) and no spaces, as the UDHR's is: a word is a
    run between whitespace or ፡ (hand oracle: a regex), where str.split saw one word a line."""
    import re

    amharic = declaration("amh")
    words = sum(len(re.findall(r"[^\s\u1361]+", line)) for line in amharic)
    assert metrics.word_count(amharic) == words > 10 * sum(len(line.split()) for line in amharic)
    assert metrics.words_in("ሰው፡ሁሉ፡ሲወለድ ነጻ") == 4
