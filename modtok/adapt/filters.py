"""Which learned merges an extension keeps: the script blocks and the §V / App. H filters.

"Merge-Based Vocabulary Extension Stalls at the Pre-Tokenizer" (§V) keeps a learned
merge only when its output holds a complete code point of the target script's
Unicode block, and drops every merge built on a dropped one; App. H relaxes it to
byte pieces of a target character. Because no kept token can match text without a
character of the block, English ids cannot move (Proposition 1).

>>> strict = BlockFilter()                      # U+0900–U+097F, complete code points
>>> strict.keeps("क".encode()), strict.keeps("क".encode()[:2]), strict.keeps(b"ab")
(True, False, False)
>>> BlockFilter(relaxed=True).keeps("क".encode()[:2])      # App. H: a byte piece of one character
True
"""

from __future__ import annotations

from collections.abc import Sequence

from modtok.errors import ConfigError, DataError

DEVANAGARI = (0x0900, 0x097F)

# The Unicode block of each script the cross-script sweep targets (ISO 15924 code ->
# first and last code point; Unicode 15 block ranges). Each lies in one UTF-8 length
# class, as BlockFilter needs: the Indic, Ethiopic and Hangul blocks are 3 bytes, Greek and Cyrillic 2.
SCRIPT_BLOCKS: dict[str, tuple[int, int]] = {
    "Deva": DEVANAGARI,        # Devanagari
    "Beng": (0x0980, 0x09FF),  # Bengali (also Assamese)
    "Guru": (0x0A00, 0x0A7F),  # Gurmukhi
    "Gujr": (0x0A80, 0x0AFF),  # Gujarati
    "Orya": (0x0B00, 0x0B7F),  # Oriya
    "Taml": (0x0B80, 0x0BFF),  # Tamil
    "Telu": (0x0C00, 0x0C7F),  # Telugu
    "Knda": (0x0C80, 0x0CFF),  # Kannada
    "Mlym": (0x0D00, 0x0D7F),  # Malayalam
    "Sinh": (0x0D80, 0x0DFF),  # Sinhala
    "Grek": (0x0370, 0x03FF),  # Greek and Coptic (monotonic Greek; not Greek Extended)
    "Cyrl": (0x0400, 0x04FF),  # Cyrillic
    "Ethi": (0x1200, 0x137F),  # Ethiopic (Amharic: the paper's no-mark control)
    "Hang": (0xAC00, 0xD7AF),  # Hangul Syllables (Korean: the paper's no-mark control)
}


class BlockFilter:
    """Which learned tokens to keep: those whose bytes hold a complete code point
    of the block ``[lo, hi]`` (§V); with ``relaxed`` (App. H) also byte pieces.

    App. H, as worded, keeps "a byte piece of a target-script character": the
    token, after at most one leading space, is a contiguous part of the UTF-8 of
    **one** block character (``pieces="character"``, the default: the first two
    bytes of क, or space + its lead byte). ``pieces="run"`` is the looser rule
    this project used before (issue 20, item 4), kept as a named option: a
    substring of the UTF-8 of a *run* of block characters, so also a token that
    spans a character boundary such as ``b'\\xa4\\x95\\xe0'`` (the tail of क and the
    lead byte of the next character).

    >>> ka = "क".encode()                                   # e0 a4 95
    >>> worded, runs = BlockFilter(relaxed=True), BlockFilter(relaxed=True, pieces="run")
    >>> worded.keeps(ka[:2]), worded.keeps(b" " + ka[:1]), worded.keeps(ka[1:] + b"\\xe0")
    (True, True, False)
    >>> runs.keeps(ka[1:] + b"\\xe0")                         # spans two characters
    True

    The block must lie in one UTF-8 length class (U+0800–U+FFFF: 3 bytes);
    :meth:`for_script` takes it from :data:`SCRIPT_BLOCKS`.
    """

    PIECE_RULES = ("character", "run")

    def __init__(self, lo: int = DEVANAGARI[0], hi: int = DEVANAGARI[1], relaxed: bool = False,
                 pieces: str = "character"):
        if pieces not in self.PIECE_RULES:
            raise ConfigError(f"BlockFilter: pieces={pieces!r} is not one of {', '.join(self.PIECE_RULES)}")
        encodings = [chr(c).encode("utf-8") for c in range(lo, hi + 1)]
        self.width = len(encodings[0])
        if any(len(e) != self.width for e in encodings):
            raise ConfigError(f"BlockFilter: block U+{lo:04X}-U+{hi:04X} spans several UTF-8 lengths "
                              f"({self.width} bytes at U+{lo:04X}); split it where the length changes")
        self.relaxed, self.pieces = relaxed, pieces
        w = self.width
        self._prefixes = {e[:i] for e in encodings for i in range(1, w)}
        self._suffixes = {e[i:] for e in encodings for i in range(1, w)}
        self._whole = set(encodings)
        self._parts = {e[i:j] for e in encodings for i in range(w) for j in range(i + 1, w + 1)}  # of one character

    @classmethod
    def for_script(cls, script: str, relaxed: bool = False, pieces: str = "character") -> BlockFilter:
        """The filter of a script's block: ``BlockFilter.for_script("Taml")`` keeps tokens
        holding a complete Tamil code point (U+0B80–U+0BFF)."""
        if script not in SCRIPT_BLOCKS:
            raise DataError(f"no Unicode block for script {script!r} (known: {', '.join(SCRIPT_BLOCKS)})")
        return cls(*SCRIPT_BLOCKS[script], relaxed=relaxed, pieces=pieces)

    @property
    def name(self) -> str:
        """``strict`` (§V), ``App. H`` (as worded) or ``App. H (runs)``."""
        return "strict" if not self.relaxed else "App. H" if self.pieces == "character" else "App. H (runs)"

    def complete(self, token: bytes) -> bool:
        """Holds the UTF-8 of a block code point (UTF-8 is self-synchronising, so a
        substring match is a real character)."""
        w = self.width
        return any(token[i : i + w] in self._whole for i in range(len(token) - w + 1))

    def piece(self, token: bytes) -> bool:
        """A byte piece under the :attr:`pieces` rule, after at most one leading
        space. The space is our reading of App. H: byte-level words begin with their
        space, so without it the first merge of a word whose first character is not
        a base token (Malayalam: space + e0 b4) fails, and with it every merge built
        on it (the strict filter keeps ~half of Malayalam's)."""
        if token[:1] == b" " and len(token) > 1:
            token = token[1:]
        if self.pieces == "character":
            return token in self._parts
        w = self.width
        for head in range(w):  # bytes before the first character boundary
            first, rest = token[:head], token[head:]
            if first and first not in self._suffixes:
                continue
            chunks = [rest[i : i + w] for i in range(0, len(rest), w)]
            if chunks and len(chunks[-1]) < w and chunks[-1] not in self._prefixes:
                continue
            if all(c in self._whole for c in chunks if len(c) == w):
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
