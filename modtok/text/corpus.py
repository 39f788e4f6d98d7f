"""Corpora at scale: the formats researchers keep text in, streamed.

:func:`open_corpus` reads one language's text from any of

- plain text (``.txt`` or any unknown suffix): one unit per line;
- JSON Lines (``.jsonl``, ``.ndjson``; ``.json`` inside a directory or glob):
  one document per line, its text in ``text_field``;
- the same, compressed: ``.gz`` (gzip), ``.zst`` (Zstandard), ``.bz2`` (bzip2) or
  ``.xz`` (xz/LZMA);
- Parquet (``.parquet``, ``.pq``): a text column, read one row group at a time;
- Arrow (``.arrow``, IPC stream or file) and local Hugging Face ``datasets``
  saved with ``save_to_disk`` (a directory with ``state.json``; a
  ``DatasetDict`` directory reads the split ``split`` names, or every split in
  ``dataset_dict.json``'s order when none is named: :meth:`Corpus.describe` says which);
- directories (walked recursively, sorted, files of the suffixes above; hidden
  files, other suffixes and ``datasets``' ``state.json``/``dataset_info.json``
  skipped) and glob patterns (``**`` allowed) of these; a file that two patterns
  (or a pattern and a path) both match is read once, where it first appears,

and yields the same units as :func:`modtok.text.data.read_lines` does for a text
file: a document is cut at ``\\n``, a trailing ``\\r`` is dropped, blank lines
are dropped, the rest is kept raw (or put in the Unicode form ``normalization``,
as the loaders of :mod:`modtok.text.data` do). Nothing is loaded whole: files are
read record by record (bounded memory whatever the size).

Per-language specs are a mapping or a small manifest file (JSON ``.json`` or
YAML ``.yaml``/``.yml``) ``{lang: [paths or globs]}`` (a single string is one
path); relative paths in a manifest file are relative to the manifest's folder.
An entry may also be a mapping that names the JSONL field (Parquet or Arrow column)
its text is in, where that is not ``text_field`` (whose default is ``text``)::

    eng_Latn: {path: eng.jsonl, text_field: body}
    deu_Latn: {paths: [deu-*.jsonl.zst], text_field: content}
    hin_Deva: [hin.txt]

An entry's own ``text_field`` wins over the ``text_field`` argument (``--text-field``),
which is the field of the entries that name none.
A language given twice in a manifest file is refused (a plain YAML or JSON loader
keeps the last entry: half of that language's text, silently), and so is a file
that two languages' entries both match (one file is one language's text).

Each file's start (:data:`~modtok.text.scripts.SAMPLE_CHARS` characters) is checked
against the script of the language code it is read under
(:func:`~modtok.text.scripts.check_script`; ``any_script=True`` turns that off).

Options:

- ``max_chars``: a character budget per language. Units are taken in stream
  order while they fit; the first unit that does not fit ends the stream (so a
  budget never reads more than it needs). A first unit longer than the whole budget
  is cut at a boundary (a space, else a grapheme boundary: text without spaces) and
  :attr:`Corpus.cut` says so; the budget is never exceeded.
  (:func:`modtok.text.data.sample_chars` instead draws lines in a seeded random
  order from a list in memory; a stream cannot do that.)
- ``sample``: keep each *record* (a text line, a JSON document, a row) with
  probability ``sample``, decided by a hash of ``(seed, file index, record
  position)`` -- the byte offset of the record for text and JSONL, the row
  number for Parquet and Arrow. The choice depends on nothing else, so any
  partition of the files (one process, Dask byte ranges) keeps the same records.
- ``skip_bad``: a bad record (invalid JSON, missing or non-string field, null,
  invalid UTF-8, a NUL byte: see :func:`decode_text`) is skipped and counted in
  :attr:`Corpus.skipped` instead of raising; one skipped record is one record. A file
  that cannot be read to its end (a compressed stream that is corrupt or stops before
  its end-of-stream marker -- every zstd frame is checked --, compressed data under a
  plain name, not a Parquet or Arrow file, no such
  column) is always a :class:`~modtok.errors.ShardError`, with or without
  ``skip_bad``: skipping it would drop an unknown share of the corpus. Errors
  name the file, the line or row and the byte offset
  (:class:`~modtok.errors.RecordError`, :class:`~modtok.errors.RecordEncodingError`,
  :class:`~modtok.errors.ShardError`).

>>> import tempfile, pathlib, json
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> _ = (d / "a.jsonl").write_text(json.dumps({"text": "Cafe\\u0301\\n\\nau lait"}) + "\\n" + '{"id": 2}\\n')
>>> c = open_corpus(d / "a.jsonl", lang="fra_Latn", skip_bad=True, normalization="NFC")
>>> list(c), dict(c.skipped)
(['Café', 'au lait'], {"missing field 'text'": 1})
>>> [len(u) for u in open_corpus(d / "a.jsonl", lang="fra_Latn", skip_bad=True)]  # raw: e + U+0301
[5, 7]
>>> list(open_corpus(d / "a.jsonl", lang="fra_Latn", max_chars=6, skip_bad=True, normalization="NFC"))
['Café']
>>> try:
...     list(open_corpus(d / "a.jsonl", lang="fra_Latn"))
... except RecordError as e:
...     print(e.reason, "| line", e.line, "| byte offset", e.offset)
missing field 'text' | line 2 | byte offset 34
"""

from __future__ import annotations

import bisect
import bz2
import errno
import glob as globlib
import gzip
import hashlib
import io
import itertools
import json
import lzma
import os
import re
import unicodedata
import zlib
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

import regex

from modtok.errors import DataError, RecordEncodingError, RecordError, ShardError, UnknownLanguageError
from modtok.outputs import reading
from modtok.text.manifest import MANIFEST_SUFFIXES, check_manifest, load_manifest, not_a_manifest
from modtok.text.names import SYMLINK_LOOP, missing
from modtok.text.scripts import check_script, head

NORMALIZATIONS = ("NFC", "NFD", "NFKC", "NFKD")  # or None: the raw text (the default)


def normalize(line: str, normalization: str | None) -> str:
    """``line`` in the Unicode normal form ``normalization``; ``None`` returns it unchanged."""
    if normalization is None:
        return line
    if normalization not in NORMALIZATIONS:
        raise DataError(f"unknown Unicode normalisation {normalization!r} (None or one of {', '.join(NORMALIZATIONS)})")
    return line if unicodedata.is_normalized(normalization, line) else unicodedata.normalize(normalization, line)


TEXT, JSONL, PARQUET, ARROW = "text", "jsonl", "parquet", "arrow"
FORMATS = (TEXT, JSONL, PARQUET, ARROW)
COMPRESSIONS = {".gz": "gzip", ".zst": "zstd", ".zstd": "zstd", ".bz2": "bzip2", ".xz": "xz"}
# Suffixes of files that are not one unit of text per line: read as plain text they would be
# counted with their markup (a CSV's header and id column were trained on as Greek text in a
# new-user trial), so they are refused with what to do instead.
NOT_TEXT = {**dict.fromkeys((".zip", ".tar", ".tgz", ".7z", ".rar", ".lz4", ".br", ".lzma"),
                            "an archive or a compression modtok does not read: unpack it, or recompress it as .gz, .zst, .bz2 or .xz"),
            **dict.fromkeys((".csv", ".tsv", ".xlsx", ".xls", ".ods"),
                            "a table: its header and other columns would be read as text; save its text column as JSONL (a 'text' field) or Parquet"),
            **dict.fromkeys((".pdf", ".docx", ".doc", ".odt", ".epub", ".html", ".htm", ".xml"),
                            "a document format: extract its plain text first")}
SUFFIXES = {".txt": TEXT, ".text": TEXT, ".jsonl": JSONL, ".ndjson": JSONL, ".json": JSONL,
            ".parquet": PARQUET, ".pq": PARQUET, ".arrow": ARROW}
HF_METADATA = frozenset({"state.json", "dataset_info.json", "dataset_dict.json"})  # not text, in a walk
BATCH_ROWS = 4096  # rows per Parquet/Arrow batch: memory stays a few batches, whatever the file


# --------------------------------------------------------------------------
# what to read: sources (files) and parts (what one task reads)


@dataclass(frozen=True)
class Source:
    """One file of a corpus; ``index`` is its position in the corpus's file list
    (part of the sampling key); ``split``: the ``datasets`` split it belongs to, if any."""

    path: str
    format: str
    compression: str | None = None
    index: int = 0
    split: str | None = None


@dataclass(frozen=True)
class Part:
    """A partition of a source: bytes ``[start, stop)`` of an uncompressed text
    or JSONL file (a record belongs to the part holding its first byte), row
    groups ``[start, stop)`` of a Parquet file, or the whole file (``stop=None``).
    ``size``: the bytes it covers (on disk for a whole compressed file), what
    Dask uses to put several small parts in one task."""

    source: Source
    start: int = 0
    stop: int | None = None
    size: int = 0


@dataclass(frozen=True)
class ReadOptions:
    text_field: str = "text"
    sample: float | None = None
    seed: int = 0
    skip_bad: bool = False
    normalization: str | None = None  # raw text by default, as modtok.text.data (see normalize)


def detect(path: str | os.PathLike, format: str | None = None) -> Source:
    """Format and compression of a file from its suffixes (``x.jsonl.zst`` ->
    JSONL, zstd); an unknown suffix is plain text. ``format`` overrides the format.

    >>> detect("shard-0001.jsonl.zst")
    Source(path='shard-0001.jsonl.zst', format='jsonl', compression='zstd', index=0, split=None)
    """
    name = Path(path).name.lower()
    compression = next((c for s, c in COMPRESSIONS.items() if name.endswith(s)), None)
    if compression:
        name = name[: name.rindex(".")]
    suffix = Path(name).suffix
    if format is None and suffix in NOT_TEXT:
        raise DataError(f"{path}: {suffix} is {NOT_TEXT[suffix]} "
                        "(plain text under this name: rename it .txt, or pass format='text')")
    fmt = SUFFIXES.get(suffix, TEXT)
    if format is not None:
        if format not in FORMATS:
            raise DataError(f"unknown corpus format {format!r} (known: {', '.join(FORMATS)})")
        fmt = format
    if compression and fmt in (PARQUET, ARROW):
        raise DataError(f"{path}: {fmt} files are compressed inside; an outer {compression} layer is not read")
    return Source(str(path), fmt, compression)


def _known(path: Path) -> bool:
    """True for a file a directory walk reads (a known suffix, not datasets' metadata)."""
    name = path.name.lower()
    if name in HF_METADATA:
        return False
    for s in COMPRESSIONS:
        if name.endswith(s):
            name = name[: -len(s)]
            return Path(name).suffix in SUFFIXES and SUFFIXES[Path(name).suffix] in (TEXT, JSONL)
    return Path(name).suffix in SUFFIXES


def _hf_dataset_files(d: Path, split: str | None) -> list[Source] | None:
    """The Arrow files of a ``datasets`` ``save_to_disk`` directory, in order, as sources;
    None if it is not one. A ``DatasetDict`` gives the split ``split``, or every split (in
    ``dataset_dict.json``'s order) when ``split`` is None; each source names its split."""
    def load(name):
        try:
            return json.loads((d / name).read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            raise DataError(f"{d / name}: unreadable datasets metadata ({e})") from None

    if (d / "dataset_dict.json").is_file():
        splits = load("dataset_dict.json").get("splits", [])
        if split is not None and split not in splits:
            raise DataError(f"{d}: a DatasetDict with splits {', '.join(splits)}, no split {split!r}")
        out = []
        for name in [split] if split is not None else splits:
            files = _hf_dataset_files(d / name, None)
            if files is None:
                raise DataError(f"{d / name}: split {name!r} of the DatasetDict has no state.json")
            out += [replace(s, split=name) for s in files]
        return out
    if (d / "state.json").is_file():
        state = load("state.json")
        return [Source(str(d / f["filename"]), ARROW) for f in state.get("_data_files", [])]
    return None


def _expand_one(item: str, format: str | None, split: str | None) -> list[Source]:
    """The sources of one spec entry: an existing path is taken literally (a file may be
    named ``arb[1].txt`` or ``a*b.txt``), else an entry with ``*``, ``?`` or ``[`` is a glob
    pattern, each of whose matches is a path (never a pattern again)."""
    if not os.path.exists(item) and any(ch in item for ch in "*?["):
        matches = sorted(globlib.glob(item, recursive=True))
        if not matches:
            raise DataError(f"{item}: no file matches this pattern")
        return [s for m in matches for s in _expand_path(Path(m), format, split)]
    return _expand_path(Path(item), format, split)


def _expand_path(path: Path, format: str | None, split: str | None) -> list[Source]:
    """The sources of a file or directory (walked) ``path``; a link in the walk that leads
    nowhere (a loop, a missing target) is refused, not skipped."""
    if path.is_dir():
        arrow = _hf_dataset_files(path, split)
        if arrow is not None:
            return arrow
        found = [p for p in path.rglob("*") if _known(p)
                 and not any(part.startswith(".") for part in p.relative_to(path).parts)]
        broken = sorted(p for p in found if p.is_symlink() and not p.exists())
        if broken:
            raise DataError(f"{broken[0]} (in the directory {path}): {missing(broken[0])}")
        files = sorted(p for p in found if p.is_file())
        if not files:
            raise DataError(f"{path}: no text, JSONL, Parquet or Arrow file in this directory")
        return [detect(p, format) for p in files]
    if not path.is_file():
        raise DataError(f"{path}: {missing(path)}")
    return [detect(path, format)]


def expand(spec, format: str | None = None, split: str | None = None) -> list[Source]:
    """The files of a path, directory, glob or list of these, in reading order
    (each entry's files sorted), numbered for sampling. A file matched twice (two
    overlapping patterns, a directory and a file in it) is read once, where it first
    appears: every input counts once.

    >>> import tempfile
    >>> d = Path(tempfile.mkdtemp()); _ = (d / "a-1.txt").write_text("x"); _ = (d / "b.txt").write_text("y")
    >>> [Path(s.path).name for s in expand([str(d / "*.txt"), str(d / "a-*.txt")])]
    ['a-1.txt', 'b.txt']
    """
    items = [spec] if isinstance(spec, (str, os.PathLike)) else list(spec)
    if not items:
        raise DataError("empty corpus spec (no path)")
    sources, seen = [], set()
    for item in items:
        for s in _expand_one(os.fspath(item), format, split):
            key = os.path.realpath(s.path)
            if key not in seen:
                seen.add(key)
                sources.append(s)
    return [replace(s, index=i) for i, s in enumerate(sources)]


# --------------------------------------------------------------------------
# reading records


def _keep(opts: ReadOptions, index: int, position: int) -> bool:
    if opts.sample is None:
        return True
    h = hashlib.blake2b(f"{opts.seed}/{index}/{position}".encode(), digest_size=8).digest()
    return int.from_bytes(h, "little") < opts.sample * 2**64


def units(text: str, normalization: str | None = None) -> Iterator[str]:
    """The units of a document: its non-blank lines (``\\r`` dropped), raw or in
    the Unicode form ``normalization`` (as :func:`modtok.text.data.read_lines`).

    >>> list(units("a\\r\\n\\n  \\nb")), list(units("e\\u0301", "NFC"))
    (['a', 'b'], ['é'])
    """

    for line in text.split("\n"):
        line = line.rstrip("\r")
        if line.strip():
            yield normalize(line, normalization)


class ZstdFrames(io.RawIOBase):
    """The decompressed bytes of a zstd file, frame after frame, refusing a truncated one.

    ``zstandard``'s ``stream_reader`` ends quietly where the input ends, even inside a
    frame, so a cut file reads as a shorter corpus (measured: 83% of a cut file's lines,
    no error). Here each frame is decoded by its own ``decompressobj``, whose ``eof`` says
    whether the frame's end was reached; input that stops before it is a
    :class:`~modtok.errors.ShardError` naming the file and the compressed byte offset.

    >>> import zstandard
    >>> blob = zstandard.ZstdCompressor().compress(b"one\\n") + zstandard.ZstdCompressor().compress(b"two\\n")
    >>> ZstdFrames(io.BytesIO(blob), "two.zst").read()
    b'one\\ntwo\\n'
    >>> ZstdFrames(io.BytesIO(blob[:-3]), "cut.zst").read()
    Traceback (most recent call last):
    ...
    modtok.errors.ShardError: cut.zst: truncated zstd stream: it ends inside a frame at compressed byte offset 23
    """

    CHUNK = 1 << 20

    def __init__(self, raw, path: str):
        import zstandard

        self._raw, self._path, self._zstd = raw, path, zstandard.ZstdDecompressor()
        self._frame = None  # the decompressobj of the frame being read; None between frames
        self._pending = b""  # decompressed bytes not yet returned
        self._offset = 0  # compressed bytes consumed

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        while not self._pending:
            chunk = self._raw.read(self.CHUNK)
            if not chunk:
                if self._frame is not None:
                    raise ShardError(self._path, "truncated zstd stream: it ends inside a frame at "
                                                 f"compressed byte offset {self._offset}")
                return 0
            self._offset += len(chunk)
            out = []
            while chunk:
                if self._frame is None:
                    self._frame = self._zstd.decompressobj()
                out.append(self._frame.decompress(chunk))
                chunk = b""
                if self._frame.eof:
                    chunk, self._frame = self._frame.unused_data, None
            self._pending = b"".join(out)
        n = min(len(buffer), len(self._pending))
        buffer[:n], self._pending = self._pending[:n], self._pending[n:]
        return n

    def close(self) -> None:
        self._raw.close()
        super().close()


def _open_binary(src: Source):
    """``src`` opened for reading its (decompressed) bytes; compressed bytes under a plain
    name are a :class:`~modtok.errors.ShardError` (:func:`compressed_as`)."""
    f = open(src.path, "rb")
    if src.compression is None and (why := compressed_as(f.peek(16)[:16])):
        f.close()
        raise ShardError(src.path, why)
    if src.compression == "gzip":
        return gzip.GzipFile(fileobj=f, mode="rb")  # refuses a stream without its end marker (EOFError)
    if src.compression == "zstd":
        return io.BufferedReader(ZstdFrames(f, src.path), 1 << 20)
    if src.compression == "bzip2":
        return bz2.BZ2File(f, mode="rb")  # refuses a truncated stream (EOFError), as gzip does
    if src.compression == "xz":
        return lzma.LZMAFile(f, mode="rb")
    return f


def _stream_errors(src: Source) -> tuple[type[BaseException], ...]:
    """What a corrupt or truncated compressed stream raises while it is read."""
    if src.compression == "gzip":
        return (OSError, EOFError, zlib.error)  # gzip.BadGzipFile is an OSError
    if src.compression in ("bzip2", "xz"):
        return (OSError, EOFError, lzma.LZMAError)  # bz2: OSError "Invalid data stream"
    if src.compression == "zstd":
        import zstandard

        return (zstandard.ZstdError, OSError)
    return ()


def _line_number(path: str, offset: int) -> int:
    """1-based line of a byte offset of an uncompressed file (only computed for an error)."""
    n, pos = 1, 0
    with open(path, "rb") as f:
        while pos < offset:
            block = f.read(min(1 << 20, offset - pos))
            if not block:
                break
            n += block.count(b"\n")
            pos += len(block)
    return n


class _Skip(Exception):
    """A record was bad and ``skip_bad`` is on (internal: counted, then skipped)."""


def _bad(opts: ReadOptions, skipped: Counter, error: Exception, kind: str):
    if opts.skip_bad:
        skipped[kind] += 1
        raise _Skip
    raise error


def _line_records(part: Part, opts: ReadOptions, skipped: Counter) -> Iterator[str]:
    """Units of a text or JSONL part."""
    src = part.source
    field_name = opts.text_field
    try:
        f = _open_binary(src)
    except OSError as e:
        raise DataError(f"{src.path}: cannot read ({e.strerror})") from None
    with f:
        pos, line_no = part.start, 1
        if part.start > 0:
            f.seek(part.start - 1)
            pos = part.start - 1 + len(f.readline())  # the record that began before start is not ours
            line_no = None  # only computed if an error needs it
        digest = reading(src.path, pos, "decompressed bytes" if src.compression else "bytes")  # run.json's inputs
        lines = iter(f)
        broken = _stream_errors(src)
        batched = src.format == TEXT and opts.sample is None  # else a line at a time
        size = min(FIRST_BATCH, BATCH_LINES)
        while True:
            batch, error = [], None
            try:
                for raw in lines:
                    batch.append(raw)
                    if not batched or len(batch) == size:
                        break
            except broken as e:
                error = e  # the lines read before it are given first, as a line at a time would
            starts = list(itertools.accumulate(map(len, batch), initial=pos))
            n = len(batch) if part.stop is None else bisect.bisect_left(starts, part.stop, hi=len(batch))
            stopped = n < len(batch)  # a record of the next part
            slow, blob = batch[:n], b"".join(batch[:n]) if batched else b""
            if blob and b"\0" not in blob and not (pos == 0 and blob.startswith(b"\xef\xbb\xbf")):
                try:  # UTF-8 is valid line by line iff it is over the lines joined (each ends in "\n")
                    text = blob.decode("utf-8")
                except UnicodeDecodeError:
                    text = None  # a line at a time below: it names the bad line and skips only it
                if text is not None:
                    if digest is not None:
                        digest.update(blob)
                    pos = starts[n]
                    line_no = None if line_no is None else line_no + n
                    yield from units(text, opts.normalization)
                    slow = []
            for raw in slow:
                if digest is not None:
                    digest.update(raw)
                start = pos
                pos += len(raw)
                where = line_no
                if line_no is not None:
                    line_no += 1
                if start == 0 and raw.startswith(b"\xef\xbb\xbf"):
                    raw, start = raw[3:], 3
                try:
                    yield from _record(raw, start, where, src, opts, field_name, skipped)
                except _Skip:
                    pass
            if error is not None and not stopped:
                raise ShardError(src.path, f"unreadable {src.compression} stream at byte offset {pos} of the "
                                           f"decompressed text ({error})") from None
            if stopped or not batch:
                if digest is not None:
                    digest.to_end = not stopped
                return
            size = min(2 * size, BATCH_LINES)


# Lines of a plain-text part decoded and split at once (:func:`_line_records`): a line at a time,
# its generators cost 3 us a line, 3.5 of the 8 s of CPU that counting 0.1 GB of the growth
# bench's Zipf text took; a bad line sends its batch back to the line-at-a-time path. Batches
# start at FIRST_BATCH lines and double up to BATCH_LINES, so that a reader stopped early (a
# character budget) has read, and fingerprinted, at most about twice the lines it used.
FIRST_BATCH, BATCH_LINES = 16, 4096


# The magic bytes a compressed file starts with (bzip2's with its first block's, or an empty
# stream's, so that text starting "BZh" stays text), and the suffix that reads it.
MAGIC = {"gzip": (re.compile(rb"\x1f\x8b\x08"), ".gz"), "zstd": (re.compile(rb"\x28\xb5\x2f\xfd"), ".zst"),
         "bzip2": (re.compile(rb"BZh[1-9](1AY&SY|\x17rE8P\x90)"), ".bz2"), "xz": (re.compile(rb"\xfd7zXZ\x00"), ".xz")}


def compressed_as(head: bytes) -> str | None:
    """Why a file that starts with ``head`` and is read as uncompressed is not text: the
    compression its magic bytes name (gzip, zstd, bzip2, xz), with the suffix that reads it;
    None when it names none.

    >>> compressed_as(gzip.compress(b"hello"))
    'gzip-compressed data under a name without .gz: add .gz to its name (x.txt -> x.txt.gz) and it is read decompressed'
    >>> compressed_as(b"BZh1 is text") is None
    True
    """
    for kind, (magic, suffix) in MAGIC.items():
        if magic.match(head):
            return (f"{kind}-compressed data under a name without {suffix}: add {suffix} to its name "
                    f"(x.txt -> x.txt{suffix}) and it is read decompressed")
    return None


def decode_text(raw: bytes, start: int = 0) -> str:
    """``raw`` (the bytes at byte offset ``start`` of a file: a record, or the whole file)
    as UTF-8 text. Bytes that are not text raise :class:`UnicodeDecodeError` whose
    ``start`` is the first bad byte in ``raw`` and whose ``reason`` says what they look
    like: UTF-16 with a byte-order mark; UTF-16 without one (a NUL byte beside every
    ASCII character: valid UTF-8, but no text has them); other NUL bytes; a
    compressed file under a plain name (:func:`compressed_as`); else invalid UTF-8.

    >>> decode_text("naïve".encode())
    'naïve'
    >>> for raw in ("x".encode("utf-16"), "hello".encode("utf-16-le"), b"a \\x00 in binary data", b"caf\\xe9"):
    ...     try:
    ...         decode_text(raw)
    ...     except UnicodeDecodeError as e:
    ...         print(e.start, e.reason)
    0 not UTF-8 but UTF-16 (a byte-order mark at its start): re-encode it, e.g. iconv -f UTF-16 -t UTF-8
    1 not UTF-8 but UTF-16LE without a byte-order mark (a NUL byte after each character): re-encode it, e.g. iconv -f UTF-16LE -t UTF-8
    2 a NUL byte: binary data, or UTF-16 without a byte-order mark, not UTF-8 text
    3 invalid UTF-8
    """
    nul = raw.find(b"\0")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        bad = e.start
    else:
        if nul < 0:
            return text
        bad = nul
    if start == 0 and raw[:2] in (b"\xff\xfe", b"\xfe\xff"):
        bad, reason = 0, "not UTF-8 but UTF-16 (a byte-order mark at its start): re-encode it, e.g. iconv -f UTF-16 -t UTF-8"
    elif start == 0 and (compressed := compressed_as(raw)):
        bad, reason = 0, compressed
    elif 0 <= nul <= bad:
        bad, reason = nul, "a NUL byte: binary data, or UTF-16 without a byte-order mark, not UTF-8 text"
        odd = raw[(start + 1) % 2::2].count(0)  # NULs at odd byte offsets of the file: UTF-16LE's (ASCII text)
        even = raw[start % 2::2].count(0)  # UTF-16BE's
        if 3 * odd >= len(raw) > 3 * even or 3 * even >= len(raw) > 3 * odd:
            order, side = ("LE", "after") if odd > even else ("BE", "before")
            reason = (f"not UTF-8 but UTF-16{order} without a byte-order mark (a NUL byte {side} each character): "
                      f"re-encode it, e.g. iconv -f UTF-16{order} -t UTF-8")
    else:
        reason = "invalid UTF-8"
    raise UnicodeDecodeError("utf-8", raw, bad, bad + 1, reason)


def _record(raw: bytes, start: int, line_no, src: Source, opts: ReadOptions, field_name: str,
            skipped: Counter) -> Iterator[str]:
    def line():
        return line_no if line_no is not None else _line_number(src.path, start)

    try:
        text = decode_text(raw, start)
    except UnicodeDecodeError as e:
        _bad(opts, skipped, RecordEncodingError(src.path, e.reason, line=line(), offset=start + e.start),
             e.reason.split(":")[0])
    if text.endswith("\n"):
        text = text[:-1]
    if src.format == TEXT:
        if _keep(opts, src.index, start):
            yield from units(text, opts.normalization)  # one line: \r dropped, blank skipped
        return
    if not text.strip():
        return
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        _bad(opts, skipped, RecordError(src.path, f"bad JSON ({e.msg})", line=line(),
                                        offset=start + len(text[: e.pos].encode("utf-8"))), "bad JSON")
    if not isinstance(doc, dict):
        _bad(opts, skipped, RecordError(src.path, f"not a JSON object ({type(doc).__name__})", line=line(),
                                        offset=start), "not a JSON object")
    if field_name not in doc:
        _bad(opts, skipped, RecordError(src.path, f"missing field {field_name!r}", line=line(), offset=start),
             f"missing field {field_name!r}")
    value = doc[field_name]
    if not isinstance(value, str):
        _bad(opts, skipped, RecordError(src.path, f"field {field_name!r} is {type(value).__name__}, not a string",
                                        line=line(), offset=start), f"field {field_name!r} not a string")
    if _keep(opts, src.index, start):
        yield from units(value, opts.normalization)


def _column_batches(src: Source, part: Part, field_name: str):
    """``(first row, list of values)`` batches of the text column of a Parquet or Arrow part."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        if src.format == PARQUET:
            pf = pq.ParquetFile(src.path)
            schema, groups = pf.schema_arrow, range(pf.num_row_groups)
            if part.stop is not None:
                groups = range(part.start, part.stop)
        else:
            reader = _arrow_reader(src.path)
            schema = reader.schema
    except (pa.ArrowException, OSError) as e:  # e.g. a cut Parquet file has no footer
        size = os.path.getsize(src.path)
        raise ShardError(src.path, f"not a readable {src.format} file ({e}; the file ends at byte offset {size})") from None
    if field_name not in schema.names:
        raise ShardError(src.path, f"no column {field_name!r} (columns: {', '.join(schema.names)})")
    kind = schema.field(field_name).type
    if not (pa.types.is_string(kind) or pa.types.is_large_string(kind) or pa.types.is_string_view(kind)):
        raise ShardError(src.path, f"column {field_name!r} is {kind}, not a string")
    row = 0
    try:
        if src.format == PARQUET:
            row = sum(pf.metadata.row_group(g).num_rows for g in range(groups.start)) if groups else 0
            batches = pf.iter_batches(batch_size=BATCH_ROWS, row_groups=list(groups), columns=[field_name])
        elif isinstance(reader, pa.ipc.RecordBatchFileReader):
            batches = (reader.get_batch(i) for i in range(reader.num_record_batches))
        else:
            batches = reader
        for batch in batches:
            values = batch.column(batch.schema.get_field_index(field_name)).to_pylist()
            yield row, values
            row += len(values)
    except (pa.ArrowException, OSError) as e:
        raise ShardError(src.path, f"unreadable {src.format} data after row {row} ({e})") from None


def _arrow_reader(path: str):
    import pyarrow as pa

    source = pa.memory_map(path)
    try:
        return pa.ipc.open_stream(source)  # what datasets writes
    except pa.ArrowInvalid:
        return pa.ipc.open_file(source)


def _row_records(part: Part, opts: ReadOptions, skipped: Counter) -> Iterator[str]:
    """Units of a Parquet or Arrow part (an unreadable file raises :class:`ShardError`)."""
    src = part.source
    digest = None
    for first, values in _column_batches(src, part, opts.text_field):
        digest = digest or reading(src.path, first, "text values")  # run.json's inputs
        for i, value in enumerate(values):
            _feed_value(digest, value)
            if not isinstance(value, str):
                try:
                    _bad(opts, skipped, RecordError(src.path, f"{opts.text_field!r} is null", row=first + i),
                         f"null {opts.text_field!r}")
                except _Skip:
                    continue
            if _keep(opts, src.index, first + i):
                yield from units(value, opts.normalization)
    if digest is not None:
        digest.to_end = part.stop is None


def _feed_value(digest, value) -> None:
    """Feed one row's text to a file's :class:`~modtok.outputs.Digest`: its UTF-8 and a line
    break (a null: a NUL byte), so that rows ``["a", "b"]`` and ``["ab"]`` differ."""
    if digest is not None:
        digest.update((value.encode("utf-8", "surrogatepass") if isinstance(value, str) else b"\0") + b"\n")


def read_whole(path) -> bytes:
    """The bytes of the file ``path``, read whole, fed to run.json's inputs
    (:func:`modtok.outputs.reading`) as every reader here does. A symlink loop is a
    :class:`DataError`; a missing or unreadable file raises the ``OSError`` (callers say it)."""
    try:
        raw = Path(path).read_bytes()
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise DataError(f"{path}: {SYMLINK_LOOP}") from None
        raise
    digest = reading(path)
    if digest is not None:
        digest.update(raw)
        digest.to_end = True
    return raw


def read_part(part: Part, opts: ReadOptions, skipped: Counter) -> Iterator[str]:
    """The units of one part (sampling and bad-record handling applied; no budget)."""
    if part.source.format in (TEXT, JSONL):
        return _line_records(part, opts, skipped)
    return _row_records(part, opts, skipped)


@dataclass(frozen=True)
class Record:
    """One record of an evaluation file: its text (one line; ``""`` for an empty one), where
    it is (``line`` of a text or JSONL file, ``row`` of a Parquet or Arrow one) and its id
    (a JSON document's ``id`` field or an ``id`` column; None when there is none)."""

    text: str
    path: str
    line: int | None = None
    row: int | None = None
    id: str | int | None = None

    def where(self) -> str:
        """``path line N`` or ``path row N``."""
        return f"{self.path} line {self.line}" if self.line is not None else f"{self.path} row {self.row}"


def records(spec, text_field: str = "text", id_field: str = "id", format: str | None = None,
            normalization: str | None = None) -> Iterator[Record]:
    """Every record of ``spec``'s files in order, an empty one included: what evaluation
    text is aligned by (:mod:`modtok.text.eval_sets`), where :class:`Corpus` instead gives
    the non-blank lines. A text line is a record (a trailing ``\\r`` and a leading BOM
    dropped); a JSON document or a Parquet/Arrow row is a record, and a record's text must
    be one line. Nothing is skipped: a bad record raises, naming the file and line or row.

    >>> import tempfile
    >>> p = Path(tempfile.mkdtemp()) / "eng_Latn.txt"; _ = p.write_text("one\\r\\n\\nthree\\n")
    >>> [(r.text, r.line) for r in records(p)]
    [('one', 1), ('', 2), ('three', 3)]
    """
    for src in expand(spec, format):
        if src.format in (TEXT, JSONL):
            yield from _line_records_of(src, text_field, id_field, normalization)
        else:
            yield from _row_records_of(src, text_field, id_field, normalization)


def _one_line(text: str, where: str, normalization) -> str:
    if "\n" in text:
        raise RecordError(where, "an evaluation record is one line; this one holds a line break")
    return normalize(text.rstrip("\r"), normalization)


def _line_records_of(src: Source, text_field: str, id_field: str, normalization) -> Iterator[Record]:
    try:
        f = _open_binary(src)
    except OSError as e:
        raise DataError(f"{src.path}: cannot read ({e.strerror})") from None
    with f:
        pos, broken = 0, _stream_errors(src)
        digest = reading(src.path, 0, "decompressed bytes" if src.compression else "bytes")  # run.json's inputs
        lines = iter(f)
        for number in itertools.count(1):
            try:
                raw = next(lines, None)
            except broken as e:
                raise ShardError(src.path, f"unreadable {src.compression} stream at byte offset {pos} ({e})") from None
            if raw is None:
                if digest is not None:
                    digest.to_end = True
                return
            if digest is not None:
                digest.update(raw)
            start, pos = pos, pos + len(raw)
            if start == 0 and raw.startswith(b"\xef\xbb\xbf"):
                raw, start = raw[3:], 3
            try:
                text = decode_text(raw, start).removesuffix("\n").removesuffix("\r")
            except UnicodeDecodeError as e:
                raise RecordEncodingError(src.path, e.reason, line=number, offset=start + e.start) from None
            if src.format == TEXT:
                yield Record(normalize(text, normalization), src.path, line=number)
                continue
            if not text.strip():
                continue  # JSON Lines: a blank line holds no document
            try:
                doc = json.loads(text)
            except json.JSONDecodeError as e:
                raise RecordError(src.path, f"bad JSON ({e.msg})", line=number, offset=start) from None
            value = doc.get(text_field) if isinstance(doc, dict) else None
            if not isinstance(value, str):
                raise RecordError(src.path, f"no string field {text_field!r}", line=number, offset=start)
            ident = doc.get(id_field)
            if ident is not None and not isinstance(ident, (str, int)):
                raise RecordError(src.path, f"field {id_field!r} is {type(ident).__name__}, not a string or integer",
                                  line=number, offset=start)
            yield Record(_one_line(value, f"{src.path} line {number}", normalization), src.path, line=number,
                         id=ident)


def _row_records_of(src: Source, text_field: str, id_field: str, normalization) -> Iterator[Record]:
    ids, digest = None, reading(src.path, 0, "text values")  # run.json's inputs
    for first, values in _column_batches(src, Part(src), text_field):
        if ids is None:
            ids = _id_column(src, id_field)
        for i, value in enumerate(values):
            _feed_value(digest, value)
            if not isinstance(value, str):
                raise RecordError(src.path, f"{text_field!r} is null", row=first + i)
            ident = ids[first + i] if ids is not None else None
            yield Record(_one_line(value, f"{src.path} row {first + i}", normalization), src.path, row=first + i,
                         id=ident)
    if digest is not None:
        digest.to_end = True


def _id_column(src: Source, id_field: str) -> list | None:
    """The ``id_field`` column of a Parquet or Arrow file (evaluation files are small: read
    whole), or None when it has none."""
    import pyarrow.parquet as pq

    if src.format == PARQUET:
        if id_field not in pq.ParquetFile(src.path).schema_arrow.names:
            return None
        return pq.read_table(src.path, columns=[id_field]).column(id_field).to_pylist()
    table = _arrow_reader(src.path).read_all()
    return table.column(id_field).to_pylist() if id_field in table.schema.names else None


def cut_at_boundary(text: str, n: int) -> tuple[str, str]:
    """``(prefix, where)``: the longest start of ``text`` of at most ``n`` characters that
    ends at a boundary, and which kind it is: before the last whitespace, when that keeps
    at least half of ``n`` (text with spaces), else at the last grapheme-cluster boundary
    (text without spaces: Chinese, Thai, Burmese; a cluster -- a letter and its marks -- is
    never split); ``n`` characters when one cluster is longer than ``n``.

    >>> cut_at_boundary("one two three", 9)
    ('one two', 'a space')
    >>> cut_at_boundary("กินข้าว", 4)   # ข and its tone mark ้ stay together
    ('กิน', 'a grapheme boundary')
    """
    if len(text) <= n:
        return text, "nothing to cut"
    head = text[: n + 1]  # a boundary at n is one before text[n]
    space = max(head.rfind(c) for c in " \t")
    if space >= max(1, n // 2):
        return text[:space], "a space"
    ends = [m.end() for m in regex.finditer(r"\X", head)][:-1]  # the last cluster may go on past n + 1
    end = ends[-1] if ends else 0
    return (text[:end], "a grapheme boundary") if end > 0 else (text[:n], f"character {n} (one cluster is longer)")


def within_budget(units: Iterable[str], budget: int, first: bool = True, cuts: list | None = None) -> Iterator[str]:
    """Units in order while their characters fit in ``budget``; the first that
    does not fit ends the stream (nothing after it is read). With ``first``, a
    stream whose first unit alone is over the budget gives that unit's start, cut at a
    boundary (:func:`cut_at_boundary`), and ``(chars, kept, where)`` is appended to
    ``cuts``: a budget is never exceeded, and a cut is always said.

    >>> list(within_budget(["aaa", "bb", "c", "dddd"], 6)), list(within_budget(["aaa aaaa", "b"], 6))
    (['aaa', 'bb', 'c'], ['aaa'])
    """
    used = 0
    for unit in units:
        n = len(unit)
        if used + n > budget:
            if not (first and used == 0):
                return
            kept, where = cut_at_boundary(unit, budget)
            if cuts is not None:
                cuts.append((n, len(kept), where))
            yield kept
            return
        used += n
        yield unit
        if used >= budget:
            return


def cut_note(lang: str, cut: tuple[int, int, str] | None) -> str:
    """The words for a line cut to the budget (:func:`within_budget`), or "" (what a command prints).

    >>> cut_note("tha_Thai", (1_750_000, 9_998, "a grapheme boundary"))
    'tha_Thai: its one line in the budget has 1,750,000 characters: cut at a grapheme boundary to 9,998'
    """
    if cut is None:
        return ""
    chars, kept, where = cut
    return f"{lang}: its one line in the budget has {chars:,} characters: cut at {where} to {kept:,}"


def partition(src: Source, target_bytes: int) -> list[Part]:
    """Parts of about ``target_bytes``: byte ranges of an uncompressed text or
    JSONL file, groups of row groups of a Parquet file; compressed and Arrow
    files are one part (a compressed stream cannot be entered in the middle).

    >>> import tempfile
    >>> p = tempfile.mktemp(suffix=".txt"); _ = open(p, "w").write("ab\\n" * 10)
    >>> [(q.start, q.stop) for q in partition(detect(p), 12)]
    [(0, 12), (12, 24), (24, 30)]
    """
    if target_bytes <= 0:
        raise DataError(f"partition size must be positive, got {target_bytes}")
    if src.format in (TEXT, JSONL) and src.compression is None:
        size = os.path.getsize(src.path)
        return [Part(src, a, min(a + target_bytes, size), min(target_bytes, size - a))
                for a in range(0, max(size, 1), target_bytes)]
    if src.format == PARQUET:
        import pyarrow as pa
        import pyarrow.parquet as pq

        try:
            meta = pq.ParquetFile(src.path).metadata
        except (pa.ArrowException, OSError):
            return [Part(src, size=os.path.getsize(src.path))]  # the reader reports it
        parts, first, size = [], 0, 0
        for g in range(meta.num_row_groups):
            size += meta.row_group(g).total_byte_size
            if size >= target_bytes:
                parts.append(Part(src, first, g + 1, size))
                first, size = g + 1, 0
        if first < meta.num_row_groups or not parts:
            parts.append(Part(src, first, meta.num_row_groups, size))
        return parts
    return [Part(src, size=os.path.getsize(src.path))]


# --------------------------------------------------------------------------
# one language's stream


@dataclass
class Corpus:
    """One language's text, streamed from its files; iterate it for its units.

    Every pass re-reads the files; ``skipped`` holds what the last pass skipped
    (``{reason: count}``), ``chars`` and ``n_units`` what it gave, ``cut`` the unit it cut
    to the budget (``(chars, kept, where)``, :func:`within_budget`; None when none). Each file's first
    :data:`~modtok.text.scripts.SAMPLE_CHARS` characters are checked against ``lang``'s
    script (unless ``any_script``; a ``lang`` without ``_<Script>`` is not checked).
    """

    lang: str
    sources: list[Source]
    options: ReadOptions = field(default_factory=ReadOptions)
    max_chars: int | None = None
    skipped: Counter = field(default_factory=Counter)
    chars: int = 0
    n_units: int = 0
    any_script: bool = False
    cut: tuple[int, int, str] | None = None

    def __iter__(self) -> Iterator[str]:
        self.skipped, self.chars, self.n_units, self.cut = Counter(), 0, 0, None
        stream = (u for src in self.sources for u in self._checked(src, read_part(Part(src), self.options, self.skipped)))
        cuts: list = []
        if self.max_chars is not None:
            stream = within_budget(stream, self.max_chars, cuts=cuts)
        for unit in stream:
            self.cut = cuts[0] if cuts else None
            self.chars += len(unit)
            self.n_units += 1
            yield unit

    def _checked(self, src: Source, units: Iterator[str]) -> Iterator[str]:
        """``units`` of ``src``, its start checked against the language's script first."""
        start = head(units)  # the rest of ``units`` is left to read
        check_script(self.lang, start, src.path, self.any_script)
        yield from start
        yield from units

    def lines(self) -> list[str]:
        """All units in a list (what the in-memory trainers take); at least one."""
        out = list(self)
        if not out:
            names = ", ".join(src.path for src in self.sources[:3]) + (", ..." if len(self.sources) > 3 else "")
            raise DataError(f"language {self.lang!r}: empty corpus (no non-blank line in "
                            f"{len(self.sources)} file(s): {names})")
        return out

    def parts(self, target_bytes: int = 64 << 20) -> list[Part]:
        """The parts Dask counts (:func:`partition` of every source)."""
        return [p for src in self.sources for p in partition(src, target_bytes)]

    def describe(self, lines: int | None = None) -> str:
        """What this corpus reads, in words: its files (a ``datasets`` split named), and
        ``lines`` (the units read, when given).

        >>> Corpus("eng_Latn", [Source("d/train/data.arrow", ARROW, split="train")]).describe(12)
        'eng_Latn: d/train/data.arrow (split train), 12 lines'
        """
        shown = [src.path + (f" (split {src.split})" if src.split else "") for src in self.sources[:4]]
        if len(self.sources) > 4:
            shown.append(f"... ({len(self.sources)} files)")
        return f"{self.lang}: {', '.join(shown)}" + (f", {lines:,} lines" if lines is not None else "")


# --------------------------------------------------------------------------
# the entry point (a manifest: modtok.text.manifest)


def open_corpus(
    spec,
    lang: str | None = None,
    text_field: str | None = None,
    *,
    langs: Iterable[str] | None = None,
    max_chars: int | None = None,
    sample: float | None = None,
    seed: int = 0,
    skip_bad: bool = False,
    format: str | None = None,
    split: str | None = None,
    normalization: str | None = None,
    any_script: bool = False,
) -> Corpus | dict[str, Corpus]:
    """Open text for streaming (see the module docstring for formats and options).

    - ``spec`` a path, directory, glob or list of them: one language's
      :class:`Corpus`, named ``lang`` (required).
    - ``spec`` a mapping or a manifest file (``.json``, ``.yaml``, ``.yml``):
      ``{lang: Corpus}`` in manifest order, restricted to ``langs`` if given;
      with ``lang`` given, that one language's :class:`Corpus`.

    Files are listed (and missing ones reported) now; they are read on iteration.
    ``text_field``: the JSONL field / Parquet or Arrow column of the text (None: ``text``),
    for the manifest entries that name none.
    ``split``: the split of a ``datasets`` ``DatasetDict`` (default: every split).
    ``any_script``: do not check each file's text against the language's script.
    """
    if max_chars is not None and max_chars <= 0:
        raise DataError(f"character budget must be positive, got {max_chars}")
    if sample is not None and not 0 < sample <= 1:
        raise DataError(f"sample must be a probability in (0, 1], got {sample}")
    opts = ReadOptions(text_field or "text", sample, seed, skip_bad, normalization)

    manifest = None
    if isinstance(spec, Mapping):
        manifest = check_manifest(spec, "manifest")
    elif isinstance(spec, (str, os.PathLike)) and Path(spec).suffix.lower() in MANIFEST_SUFFIXES \
            and Path(spec).is_file():
        manifest = load_manifest(spec)
    if manifest is None:
        if lang is None:
            raise not_a_manifest(spec)
        return Corpus(lang, expand(spec, format, split), opts, max_chars, any_script=any_script)

    chosen = list(manifest) if langs is None else ([langs] if isinstance(langs, str) else list(langs))
    if lang is not None:
        chosen = [lang]
    for code in chosen:
        if code not in manifest:
            raise UnknownLanguageError(code, manifest)
    where = "manifest" if isinstance(spec, Mapping) else os.fspath(spec)
    corpora = {code: Corpus(code, _entry_sources(where, code, manifest[code].paths, format, split),
                            replace(opts, text_field=manifest[code].text_field or opts.text_field), max_chars,
                            any_script=any_script)
               for code in chosen}
    _one_language_per_file(corpora)
    return corpora[lang] if lang is not None else corpora


def _entry_sources(where: str, code: str, paths: list[str], format: str | None, split: str | None) -> list[Source]:
    """:func:`expand` of a manifest's entry; an error names the manifest and the language too.

    >>> _entry_sources("m.yaml", "eng_Latn", ["/nowhere/eng.txt"], None, None)
    Traceback (most recent call last):
    ...
    modtok.errors.DataError: m.yaml, entry eng_Latn: /nowhere/eng.txt: no such file or directory
    """
    try:
        return expand(paths, format, split)
    except DataError as e:
        raise DataError(f"{where}, entry {code}: {e}") from None


def _one_language_per_file(corpora: Mapping[str, Corpus]) -> None:
    """Refuse a file that two languages' entries both match (it would count under both)."""
    owner: dict[str, str] = {}
    for code, corpus in corpora.items():
        for src in corpus.sources:
            key = os.path.realpath(src.path)
            if owner.setdefault(key, code) != code:
                raise DataError(f"{src.path} is matched by the entries of both {owner[key]} and {code}: "
                                "a file is one language's text (narrow the patterns)")
