"""Held-out text for continued pretraining: pieces within documents (§VI, App. D).

The paper scores held-out text cut into pieces of at most 2,000 bytes, each in
one context, and resamples *documents* for its intervals. Here a piece never
crosses a document (:func:`held_out`); the document is FLORES-200's metadata
document (:func:`flores_documents`), or, on the pool and the extra text, whose
lines are hash-shuffled paragraphs of articles (one line = one paragraph, the
data's SOURCES.md), the line itself.

>>> list(pieces(["aa bb cc dd", "eeeeeeee"], 6))   # at most 6 bytes, cut at whitespace
['aa bb', 'cc dd', 'eeeeee', 'ee']
>>> h = held_out(["a b", "c", "d e f"], 3, documents=["x", "x", "y"])   # never across a document
>>> h.texts, h.units.tolist(), h.unit
(['a b', 'c', 'd e', 'f'], [0, 0, 1, 1], 'document')
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from modtok.artifacts.modular import ModularTokenizer
from modtok.errors import DataError, ModtokError, UsageError
from modtok.text import data

LINE = "line (a paragraph)"  # the document where no ids are given (HeldOut.unit)


def pieces(lines: Iterable[str], size: int = 2000) -> Iterable[str]:
    """The text of ``lines`` (joined by single spaces) in consecutive pieces of at
    most ``size`` UTF-8 bytes, each cut at the last whitespace that fits (a word
    longer than ``size`` is cut at a character boundary); the whitespace at a cut
    belongs to no piece, and a piece never starts or ends with whitespace.

    Lines are joined by a space, not a newline: in training the boundary id
    stands where a newline would be, so no model has seen the newline byte, and
    the lines of one document (FLORES-200: consecutive sentences of one article)
    read as running text."""
    text = " ".join(s.strip() for s in lines if s.strip())
    raw = text.encode("utf-8")
    start = 0
    while start < len(raw):
        end = min(start + size, len(raw))
        if end < len(raw):
            cut = max(raw.rfind(b" ", start, end + 1), raw.rfind(b"\n", start, end + 1))
            if cut > start:
                end = cut
            else:  # one long word: back off to a character boundary
                while raw[end] & 0xC0 == 0x80:
                    end -= 1
        piece = raw[start:end].decode("utf-8").strip()
        if piece:
            yield piece
        start = end
        while start < len(raw) and raw[start : start + 1].isspace():
            start += 1


@dataclasses.dataclass(frozen=True)
class HeldOut:
    """Held-out pieces and the document each belongs to: ``units[i]`` is the index
    of piece ``i``'s document, the bootstrap unit. ``unit`` says what a document
    is: ``"document"`` (ids given, e.g. FLORES-200's metadata) or :data:`LINE`
    (none given: each line is a document, as on the pool and the extra text,
    whose lines are hash-shuffled paragraphs of articles, one line = one
    paragraph, so no two lines are known to share a document)."""

    texts: list[str]
    units: np.ndarray  # (n_pieces,) int
    unit: str
    piece_bytes: int = 0  # the size they were cut at (fit_held_out: chosen to fit one context)
    longest: dict[str, int] = dataclasses.field(default_factory=dict)  # arm -> tokens of its longest piece

    @property
    def n_units(self) -> int:
        return int(self.units.max()) + 1 if len(self.units) else 0

    @property
    def nbytes(self) -> int:
        return sum(len(t.encode("utf-8")) for t in self.texts)


def held_out(lines: Sequence[str], size: int = 2000, documents: Sequence | None = None) -> HeldOut:
    """``lines`` as :func:`pieces` of at most ``size`` bytes, never across a
    document: each run of consecutive lines with one id of ``documents`` (one id
    per line, e.g. :func:`flores_documents`) is a document, cut on its own, and
    the bootstrap unit. Without ``documents`` every line is its own document
    (:data:`LINE`: the pool's lines are shuffled paragraphs).

    >>> h = held_out(["a b", "c d"], 3)                     # no ids: a line is a document
    >>> h.texts, h.units.tolist(), h.unit
    (['a b', 'c d'], [0, 1], 'line (a paragraph)')
    """
    unit = "document" if documents is not None else LINE
    documents = range(len(lines)) if documents is None else documents
    if len(documents) != len(lines):
        raise UsageError(f"held_out: {len(documents)} document ids for {len(lines)} lines")
    texts, units, start = [], [], 0
    for i in range(1, len(lines) + 1):
        if i == len(lines) or documents[i] != documents[start]:
            doc = list(pieces(lines[start:i], size))
            if doc:
                units += [units[-1] + 1 if units else 0] * len(doc)
                texts += doc
            start = i
    return HeldOut(texts, np.asarray(units, dtype=np.int64), unit)


def flores_documents(lines: Sequence[str], lang: str, split: str = "devtest", root=None) -> list[str] | None:
    """The FLORES-200 document (article URL) of each of ``lines``, from
    ``metadata_<split>.tsv`` beside the split directories, when ``lines`` are the
    first lines of ``lang``'s FLORES-200 ``split`` file; ``None`` otherwise (other
    text, or no metadata file): the caller then uses pieces as units.

    (A reader of FLORES files belongs in :mod:`modtok.text.data`; it lives here
    until that module has it.)
    """
    root = data.flores_dir(root)
    meta = root / f"metadata_{split}.tsv" if root else None
    if meta is None or not meta.is_file():
        return None
    try:
        flores = data.load_flores([lang], split, root=root)[lang]
    except ModtokError:
        return None
    if list(lines) != flores[: len(lines)]:
        return None
    rows = meta.read_text(encoding="utf-8").splitlines()[1:]  # header: URL, domain, topic, ...
    if len(rows) != len(flores):
        return None
    return [r.split("\t", 1)[0] for r in rows[: len(lines)]]


def longest(tokenizer: ModularTokenizer, texts: Sequence[str]) -> int:
    """Tokens of the longest of ``texts`` under ``tokenizer`` (0 for none)."""
    return max(map(len, tokenizer.encode_batch(list(texts))), default=0)


def fit_held_out(lines: Sequence[str], context: int, tokenizers: Mapping[str, ModularTokenizer],
                 max_bytes: int = 2000, documents: Sequence | None = None, shrink: float = 0.9) -> HeldOut:
    """:func:`held_out` at the largest piece size that lets every piece be scored
    in one context (App. D) under every one of ``tokenizers``: a piece of ``n``
    tokens is scored as ``prefix t1 .. tn`` in one window of ``context`` ids
    (``n <= context``). Sizes tried: ``max_bytes``, then each time ``shrink``
    times the last, floored (deterministic, no search over the data's own
    lengths); the size used is :attr:`HeldOut.piece_bytes` and the longest
    piece per tokenizer :attr:`HeldOut.longest`.

    >>> from modtok.bpe.model import BPEModel
    >>> from modtok.bpe.export import to_tokenizer_json
    >>> from modtok.lm.stream import lm_tokenizer
    >>> tok = lm_tokenizer(to_tokenizer_json(BPEModel([], "llama3")))   # bytes only: a byte is a token
    >>> h = fit_held_out(["aaaa bbbb cccc"], 5, {"R0": tok}, max_bytes=14)
    >>> h.texts, h.piece_bytes, h.longest          # 14, 12, 10, 9 bytes keep "aaaa bbbb" (9 ids) whole
    (['aaaa', 'bbbb', 'cccc'], 8, {'R0': 4})
    """
    size = max_bytes
    while True:
        held = held_out(lines, size, documents)
        most = {name: longest(tok, held.texts) for name, tok in tokenizers.items()}
        if max(most.values(), default=0) <= context:
            return dataclasses.replace(held, piece_bytes=size, longest=most)
        if size <= 1:
            raise DataError(f"no piece size fits a {context}-id context: one byte needs more than {context} tokens")
        size = max(1, math.floor(size * shrink))
