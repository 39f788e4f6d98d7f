"""Which learned merges an extension keeps: a script's characters, the §V / App. H filters.

"Merge-Based Vocabulary Extension Stalls at the Pre-Tokenizer" (§V) keeps a learned
merge only when its output holds a complete code point of Devanagari (U+0900–U+097F),
and drops every merge built on a dropped one; App. H relaxes it to byte pieces of a
target character. Because no kept token can match text without such a character,
English ids cannot move (Proposition 1).

For any other language the characters are its script's, by Unicode's
``Script_Extensions`` property (:func:`modtok.text.scripts.script_class`, driven by the
ISO 15924 code of ``<lang>_<Script>``), not a list of blocks: every script Unicode
knows works (Thai, Lao, Khmer, Myanmar, Tibetan, Ethiopic, Hangul, Han...), a
composite code is the union of its scripts (``Jpan``: Han + kana), and an unknown code
is refused with the list of valid ones. Characters may be 1 to 4 bytes in UTF-8 (Han's
extensions are 4, Myanmar's are 3 and 4).

>>> strict = BlockFilter()                      # U+0900–U+097F, complete code points
>>> strict.keeps("क".encode()), strict.keeps("क".encode()[:2]), strict.keeps(b"ab")
(True, False, False)
>>> BlockFilter(relaxed=True).keeps("क".encode()[:2])      # App. H: a byte piece of one character
True
>>> khmer = BlockFilter.for_script("Khmr")
>>> khmer.keeps(" ខ្មែរ".encode()), khmer.keeps("ไทย".encode()), khmer.label
(True, False, 'Khmer')
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

import regex

from modtok.errors import ConfigError
from modtok.text import scripts

DEVANAGARI = (0x0900, 0x097F)  # the paper's block (§V)


@cache
def _every() -> str:
    """Every code point but the surrogates, as one string (0.5 s, once)."""
    return "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c < 0xE000)


@cache
def members(chars: str) -> str:
    """Every code point of the character class ``chars`` (a regex class body), in order:
    for the byte pieces of the relaxed filter (Han: 103,660 characters, 0.1 s, once).

    >>> members(r"\\U00000915-\\U00000917")
    'कखग'
    """
    return "".join(regex.findall(f"[{chars}]", _every()))


@cache
def _pieces(chars: str) -> tuple[frozenset, frozenset, frozenset]:
    """(proper prefixes, proper suffixes, every contiguous piece) of the UTF-8 of each
    character of ``chars``."""
    prefixes, suffixes, parts = set(), set(), set()
    for c in members(chars):
        e = c.encode("utf-8")
        w = len(e)
        prefixes.update(e[:i] for i in range(1, w))
        suffixes.update(e[i:] for i in range(1, w))
        parts.update(e[i:j] for i in range(w) for j in range(i + 1, w + 1))
    return frozenset(prefixes), frozenset(suffixes), frozenset(parts)


def _width(lead: int) -> int:
    """Bytes of the UTF-8 character that starts with byte ``lead`` (0: not a lead byte)."""
    for width, end in ((1, 0x80), (0, 0xC0), (2, 0xE0), (3, 0xF0), (4, 0xF8)):  # 80-bf: continuation bytes
        if lead < end:
            return width
    return 0


class BlockFilter:
    """Which learned tokens to keep: those whose bytes hold a complete code point of
    the block ``[lo, hi]`` (§V; the default is the paper's Devanagari), or of a script
    (:meth:`for_script`); with ``relaxed`` (App. H) also byte pieces.

    App. H, as worded, keeps "a byte piece of a target-script character": the
    token, after at most one leading space, is a contiguous part of the UTF-8 of
    **one** target character (``pieces="character"``, the default: the first two
    bytes of क, or space + its lead byte). ``pieces="run"`` is the looser rule
    this project used before, kept as a named option: a
    substring of the UTF-8 of a *run* of target characters, so also a token that
    spans a character boundary such as ``b'\\xa4\\x95\\xe0'`` (the tail of क and the
    lead byte of the next character).

    >>> ka = "क".encode()                                   # e0 a4 95
    >>> worded, runs = BlockFilter(relaxed=True), BlockFilter(relaxed=True, pieces="run")
    >>> worded.keeps(ka[:2]), worded.keeps(b" " + ka[:1]), worded.keeps(ka[1:] + b"\\xe0")
    (True, True, False)
    >>> runs.keeps(ka[1:] + b"\\xe0")                         # spans two characters
    True
    """

    PIECE_RULES = ("character", "run")

    def __init__(self, lo: int = DEVANAGARI[0], hi: int = DEVANAGARI[1], relaxed: bool = False,
                 pieces: str = "character", *, chars: str | None = None, label: str | None = None):
        """``chars`` (a regex class body) and ``label`` replace the block ``lo``–``hi``
        (:meth:`for_script` passes a script's)."""
        if pieces not in self.PIECE_RULES:
            raise ConfigError(f"BlockFilter: pieces={pieces!r} is not one of {', '.join(self.PIECE_RULES)}")
        if chars is None and not 0 <= lo <= hi < 0x110000:
            raise ConfigError(f"BlockFilter: U+{lo:04X}-U+{hi:04X} is no range of code points")
        self.chars = chars if chars is not None else rf"\U{lo:08X}-\U{hi:08X}"
        self.label = label or f"U+{lo:04X}-U+{hi:04X}"
        self.relaxed, self.pieces = relaxed, pieces
        self._char = regex.compile(f"[{self.chars}]")

    @classmethod
    def for_script(cls, script: str, relaxed: bool = False, pieces: str = "character") -> BlockFilter:
        """The filter of a script's characters (ISO 15924, Unicode ``Script_Extensions``):
        ``BlockFilter.for_script("Taml")`` keeps tokens holding a complete Tamil character.
        An unknown code is a :class:`~modtok.errors.DataError` listing the valid ones."""
        return cls(relaxed=relaxed, pieces=pieces, chars=scripts.script_class(script), label=scripts.name(script))

    @property
    def name(self) -> str:
        """``strict`` (§V), ``App. H`` (as worded) or ``App. H (runs)``."""
        return "strict" if not self.relaxed else "App. H" if self.pieces == "character" else "App. H (runs)"

    def holds(self, char: str) -> bool:
        """``char`` (one character) is a target character."""
        return self._char.fullmatch(char) is not None

    def complete(self, token: bytes) -> bool:
        """Holds the UTF-8 of a target code point. UTF-8 is self-synchronising, so
        decoding with the bytes that are no character escaped (lone surrogates, in no
        script) finds exactly the complete characters."""
        return self._char.search(token.decode("utf-8", "surrogateescape")) is not None

    def piece(self, token: bytes) -> bool:
        """A byte piece under the :attr:`pieces` rule, after at most one leading
        space. The space is our reading of App. H: byte-level words begin with their
        space, so without it the first merge of a word whose first character is not
        a base token (Malayalam: space + e0 b4) fails, and with it every merge built
        on it (the strict filter keeps ~half of Malayalam's)."""
        if token[:1] == b" " and len(token) > 1:
            token = token[1:]
        prefixes, suffixes, parts = _pieces(self.chars)
        if self.pieces == "character":
            return token in parts
        for head in range(4):  # bytes before the first character boundary: a proper suffix
            if head and token[:head] not in suffixes:
                continue
            i = head
            while i < len(token):
                w = _width(token[i])
                if not w or i + w > len(token) or not self.holds(token[i : i + w].decode("utf-8", "replace")):
                    break
                i += w
            if i == len(token) or token[i:] in prefixes:  # whole characters, then a proper prefix
                return True
        return False

    def keeps(self, token: bytes) -> bool:
        return self.complete(token) or (self.relaxed and self.piece(token))


def filter_merges(
    merges: Sequence[tuple[bytes, bytes]], keep, base: set[bytes]
) -> list[tuple[bytes, bytes]]:
    """The merges whose output ``keep`` accepts and whose parts are base tokens or
    outputs of kept earlier merges (dropping a merge drops those built on it).

    >>> filter_merges([(b"a", b"b"), (b"ab", b"c"), (b"x", b"y")], lambda t: t != b"ab", {b"a", b"b", b"c", b"x", b"y"})
    [(b'x', b'y')]
    """
    made = set(base)
    out = []
    for a, b in merges:
        if a in made and b in made and keep(a + b):
            out.append((a, b))
            made.add(a + b)
    return out


def any_of(script_codes: Sequence[str], extra: str = ""):
    """A regex finding a character of any of ``script_codes`` or of the class body ``extra``
    (the lines Proposition 1 does not speak of: ``extra`` is ``\\p{M}`` under a repaired
    regex); an unknown code is refused (:func:`modtok.text.scripts.script_class`).

    >>> bool(any_of(["Thai", "Mymr"]).search("Hello")), bool(any_of(["Thai", "Mymr"]).search("Hello မြန်မာ"))
    (False, True)
    """
    return regex.compile("[" + "".join(scripts.script_class(s) for s in script_codes) + extra + "]")


LOW_KEEP = 0.25  # below this share of the learned merges kept, extend says what --filter relaxed would keep


def low_keep_note(lang: str, script: str, learned: int, kept: int, relaxed: int) -> str:
    """The note of a strict filter that kept few merges (fewer than :data:`LOW_KEEP` of
    those learned), with the count the relaxed filter keeps of the same merges.

    >>> low_keep_note("amh_Ethi", "Ethi", 2000, 12, 1890)
    'amh_Ethi: the strict filter kept 12 of 2,000 learned merges (0.6%); the others hold no complete Ethiopic character (byte pieces of one the base has no token for, or other text) or are built on such a merge; --filter relaxed (App. H: byte pieces of one Ethiopic character too) keeps 1,890 of the same merges'
    """
    name = scripts.name(script)
    return (f"{lang}: the strict filter kept {kept:,} of {learned:,} learned merges ({kept / learned:.1%}); the others "
            f"hold no complete {name} character (byte pieces of one the base has no token for, or other text) or "
            f"are built on such a merge; --filter relaxed (App. H: byte pieces of one {name} character too) keeps "
            f"{relaxed:,} of the same merges")
