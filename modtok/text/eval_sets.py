"""Evaluation text: FLORES-200, a user's own (parallel) text, or UDHR, named one way
and aligned by construction.

Every evaluation in modtok (NSL, premiums, audits, notebooks, parity-aware BPE's
and AdaptMix's dev sets) reads an :class:`EvalSet`. Which one:

1. the argument (``--eval DIR`` on the command line), else ``$MODTOK_EVAL``: one's
   own text, a directory or a manifest;
2. else ``$MODTOK_FLORES``: FLORES-200 (the default when present);
3. else none (the caller says what it does instead: the wordfreq default evaluates on
   UDHR, :mod:`modtok.text.udhr`, when it is installed; held-out training lines otherwise).

**Layout.** An evaluation directory is laid out as FLORES-200 is, ``DIR/dev/`` and
``DIR/devtest/`` (the two splits), or flat: files directly in ``DIR`` are the
``devtest`` split, and a dev split is *derived* from it (below). A manifest
(``.yaml``/``.json``, ``{lang: [paths]}``, an entry naming its ``text_field`` as
:mod:`~modtok.text.corpus` describes) is read as a flat directory is. Only files
named ``<lang>_<Script>.<ext>`` are read: a FLORES-200 code, then an extension
:func:`~modtok.text.corpus.open_corpus` knows (``.txt``, ``.jsonl.zst``, ``.parquet``, ...)
or FLORES's own ``.dev``/``.devtest``. Anything else in the directories that hold
the text (``README.md``, ``eng_Latn.txt.bak``, a hidden file) is not read and is named
in :attr:`EvalSet.skipped` (``modtok data`` and the source lines show it). A name of
that shape whose code no registry knows is refused; two files of one language in one
split are refused (which one is line 1?).

**Alignment.** A file's record *i* stays record *i*: an empty line is a line (records:
:func:`~modtok.text.corpus.records`). Where every record carries an id (a JSON
document's ``id`` field, a Parquet ``id`` column) the languages are aligned by id
instead (sorted by id), and each language must have the same ids. Where the files have
the same number of records they are *parallel*, and then an empty record must be empty
in every language (it is dropped from all of them together); one empty where another
language has text is refused with file and line (:class:`~modtok.errors.ParallelCorpusError`),
since every later line would pair with the wrong one. Files with different numbers of
lines are read as they are (blank lines dropped) and called not parallel; commands that
need parallel text (``audit``, parity-aware BPE) refuse them. FLORES-200's own
``metadata_<split>.tsv`` (one row per sentence) fixes its line count: a file with
another count is refused.

**Derived dev split** (flat layout, manifests, UDHR): record *i* (0-based, in aligned
order, before empty records are dropped) is dev when ``i % DEV_EVERY == DEV_EVERY - 1``
(the 4th, 8th, ...), test otherwise: disjoint, the same records in every language and
for any subset of languages, and spread over the whole text. Labels say so.

>>> import tempfile, pathlib
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> for lang, words in (("eng_Latn", "one two three four five"), ("deu_Latn", "eins zwei drei vier fünf")):
...     _ = (d / f"{lang}.txt").write_text("\\n".join(words.split()) + "\\n")
>>> _ = (d / "eng_Latn.txt.bak").write_text("old\\n")
>>> s = eval_set(d)
>>> s.languages(), s.has("dev"), s.parallel(), s.skipped
(['deu_Latn', 'eng_Latn'], True, True, ('eng_Latn.txt.bak',))
>>> s.load(["eng_Latn"]), s.load(["deu_Latn"], "dev")
({'eng_Latn': ['one', 'two', 'three', 'five']}, {'deu_Latn': ['vier']})
>>> s.label("dev").startswith("own evaluation text dev, derived: every 4th aligned line of ")
True
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from modtok.errors import DataError, MissingDevTextError, NoEvalTextError, ParallelCorpusError
from modtok.text.corpus import COMPRESSIONS, SUFFIXES, Record, records
from modtok.text.manifest import MANIFEST_SUFFIXES, ManifestEntry, load_manifest
from modtok.text.names import check_language_code
from modtok.text.scripts import check_script

SPLITS = ("dev", "devtest")
EVAL_ENV = "MODTOK_EVAL"
FLORES_ENV = "MODTOK_FLORES"
DEV_EVERY = 4  # a derived dev split: every 4th aligned record (a quarter); the rest is the test split
# Files of equal line counts are taken as parallel; that translations keep each line's length in
# step is checked, not assumed. On FLORES-200 devtest every language's characters per line
# correlate with English's at r >= 0.76 (zho_Hans lowest, 1,012 lines); lines paired at random
# reach |r| 0.23 over 200 lines at most, 0.63 over 20 (session 22, 20 draws per language). So from
# LENGTH_LINES lines on, r below LENGTH_R is said (length_disagreement), never below that.
LENGTH_LINES, LENGTH_R = 200, 0.25
NAME = re.compile(r"(?P<lang>[a-z]{3}_[A-Z][a-z]{3})\.(?P<ext>.+)")
CODE_SHAPED = re.compile(r"[A-Za-z]{2,3}_[A-Za-z]{4}\b")  # looks like a code: checked against the registry


def known_extension(ext: str) -> bool:
    """True for what may follow ``<lang>_<Script>.`` in an evaluation file's name.

    >>> [known_extension(e) for e in ("txt", "jsonl.zst", "devtest", "parquet", "txt.bak", "md")]
    [True, True, True, True, False, False]
    """
    ext = "." + ext.lower()
    for suffix in COMPRESSIONS:
        if ext.endswith(suffix):
            ext = ext[: -len(suffix)]
            break
    return ext in SUFFIXES or ext in (".dev", ".devtest")


Reader = Callable[[list[str], str | None], list[Record]]  # (a language's files, normalisation) -> its records


def _file_records(paths: list[str], normalization: str | None) -> list[Record]:
    return list(records(paths, normalization=normalization))


def _entry_records(entries: Mapping[str, ManifestEntry]) -> Reader:
    """The reader of a manifest's files: each entry's text in its own ``text_field``."""
    fields = {tuple(e.paths): e.text_field for e in entries.values() if e.text_field}

    def read(paths: list[str], normalization: str | None) -> list[Record]:
        return list(records(paths, fields.get(tuple(paths), "text"), normalization=normalization))

    return read


@dataclass(frozen=True)
class EvalSet:
    """Evaluation text by split and language: ``files[split][lang]`` lists its files.

    ``derived_dev``: the dev split is derived from the devtest records (module
    docstring); ``skipped``: names of files in the text's directories that were not
    read; ``expected``: ``{split: records per language}`` when the source fixes it
    (FLORES-200's metadata); ``reader``: how a language's files become records
    (:func:`~modtok.text.corpus.records`; UDHR has its own); ``name``: a label's
    wording when it is not ``kind`` plus the root.
    """

    kind: str  # "FLORES-200", "own evaluation text" or "UDHR (...)"
    root: Path
    files: dict[str, dict[str, list[str]]]
    derived_dev: bool = False
    skipped: tuple[str, ...] = ()
    expected: Mapping[str, int] = field(default_factory=dict)
    reader: Reader = _file_records
    name: str = ""

    def has(self, split: str) -> bool:
        """True when this set has ``split`` ("dev" or "devtest"), derived or not."""
        if split == "dev" and self.derived_dev:
            return bool(self.files.get("devtest"))
        return bool(self.files.get(split))

    def languages(self, split: str = "devtest") -> list[str]:
        """Sorted languages of ``split``."""
        return sorted(self._files(split))

    def _files(self, split: str) -> dict[str, list[str]]:
        if split not in SPLITS:
            raise DataError(f"unknown evaluation split {split!r} (known: {', '.join(SPLITS)})")
        if not self.has(split):
            if split == "dev":
                raise MissingDevTextError(
                    f"{self.label('devtest')} has no dev split: put dev files in {self.root / 'dev'} "
                    f"(and the test files in {self.root / 'devtest'})")
            raise DataError(f"{self.root}: no {split} text")
        return self.files["devtest" if self.derived_dev else split]

    def load(self, langs: Iterable[str] | str | None = None, split: str = "devtest",
             max_lines: int | None = None, normalization: str | None = None,
             any_script: bool = False) -> dict[str, list[str]]:
        """``{lang: lines}`` of ``split`` (first ``max_lines`` lines), raw unless
        ``normalization``; aligned, or refused (module docstring); each language's text
        checked against its script unless ``any_script``."""
        return self.aligned(langs, split, max_lines, normalization, any_script)[0]

    def require(self, langs: Iterable[str], split: str = "devtest") -> None:
        """Refuse a language of ``langs`` without a ``split`` file here, naming this text and
        the languages that have one (:class:`~modtok.errors.NoEvalTextError`)."""
        files = self._files(split)
        for lang in langs:
            if lang not in files:
                raise NoEvalTextError(lang, files, self.label(split))

    def parallel(self, split: str = "devtest") -> bool:
        """True when every language of ``split`` has its lines aligned (by position or id)."""
        return self.aligned(None, split, any_script=True)[1]

    def aligned(self, langs=None, split: str = "devtest", max_lines: int | None = None,
                normalization: str | None = None, any_script: bool = False) -> tuple[dict[str, list[str]], bool]:
        """``(load(...), parallel)``: the lines and whether they are aligned across ``langs``."""
        files = self._files(split)
        chosen = sorted(files) if langs is None else ([langs] if isinstance(langs, str) else list(langs))
        self.require(chosen, split)
        recs = {lang: self.reader(files[lang], normalization) for lang in chosen}
        stored = "devtest" if self.derived_dev else split
        for lang, rs in recs.items():
            if stored in self.expected and len(rs) != self.expected[stored]:
                raise ParallelCorpusError(f"{', '.join(files[lang])}: {len(rs)} lines, but {self.kind}'s metadata "
                                          f"lists {self.expected[stored]} sentences for {stored}: it is not aligned")
        recs, parallel = align(recs)
        if self.derived_dev:
            keep = (lambda i: i % DEV_EVERY == DEV_EVERY - 1) if split == "dev" else (lambda i: i % DEV_EVERY != DEV_EVERY - 1)
            recs = {lang: [r for i, r in enumerate(rs) if keep(i)] for lang, rs in recs.items()}
        out = {}
        for lang, rs in recs.items():
            lines = [r.text for r in rs if r.text.strip()]
            if not lines:
                where = ", ".join(files[lang])
                if split == "dev" and self.derived_dev:
                    raise MissingDevTextError(f"{where}: too few lines to derive a dev split from "
                                              f"(every {DEV_EVERY}th line is dev)")
                raise DataError(f"language {lang!r}: empty evaluation text ({where})")
            check_script(lang, lines, ", ".join(files[lang]), any_script)
            out[lang] = lines[:max_lines] if max_lines else lines
        return out, parallel

    def label(self, split: str = "devtest") -> str:
        """What this text is, for table captions and source lines."""
        what = self.name or f"{self.kind} {{split}} ({self.root})"
        if not self.derived_dev:
            return what.format(split=split)
        if split == "dev":
            return f"{self.name.format(split='dev') if self.name else self.kind + ' dev'}, derived: every " \
                   f"{DEV_EVERY}th aligned line of {self.root}"
        return f"{what.format(split='devtest')}, less every {DEV_EVERY}th line (the derived dev split)"


def length_disagreement(lines: Mapping[str, list[str]]) -> str:
    """``""`` when parallel ``lines`` (``{lang: lines}``, equal counts) keep each line's length in
    step with English's (else the first language's), or when there are too few lines to tell
    (:data:`LENGTH_LINES`); else what disagrees, worst language first: equal line counts alone
    made them "parallel", and a misaligned or unrelated file would be compared line by line.

    >>> eng = [("x" * (3 + i % 17)) for i in range(300)]
    >>> length_disagreement({"eng_Latn": eng, "deu_Latn": [s + "yz" for s in eng]})
    ''
    >>> said = length_disagreement({"eng_Latn": eng, "deu_Latn": eng[8:] + eng[:8]})  # a file 8 lines off
    >>> said[:62], said.endswith("check that line i is one sentence in every file")
    ("line lengths do not follow eng_Latn's: deu_Latn r = -0.48 over", True)
    """
    langs = list(lines)
    n = len(lines[langs[0]]) if langs else 0
    if len(langs) < 2 or n < LENGTH_LINES or any(len(x) != n for x in lines.values()):
        return ""
    ref = "eng_Latn" if "eng_Latn" in lines else langs[0]
    base = np.array([len(x) for x in lines[ref]], float)
    low = []
    for lang in langs:
        other = np.array([len(x) for x in lines[lang]], float)
        if lang != ref and base.std() > 0 and other.std() > 0:
            r = float(np.corrcoef(base, other)[0, 1])
            if r < LENGTH_R:
                low.append((r, lang))
    if not low:
        return ""
    worst = ", ".join(f"{lang} r = {r:.2f}" for r, lang in sorted(low))
    return (f"line lengths do not follow {ref}'s: {worst} over {n:,} lines (translations: r >= 0.76 on "
            f"FLORES-200); check that line i is one sentence in every file")


def align(recs: Mapping[str, list[Record]]) -> tuple[dict[str, list[Record]], bool]:
    """``(records in aligned order, parallel)``: by id when every record has one, else by
    position; an empty record where another language has text is refused, and records
    empty in every language are kept here (the caller drops them after splitting).

    >>> from modtok.text.corpus import Record
    >>> a = [Record("x", "a", 1), Record("", "a", 2), Record("y", "a", 3)]
    >>> b = [Record("u", "b", 1), Record("v", "b", 2), Record("", "b", 3)]
    >>> align({"eng_Latn": a, "deu_Latn": b})
    Traceback (most recent call last):
    ...
    modtok.errors.ParallelCorpusError: a line 2 is empty but b line 2 is not: parallel evaluation text keeps line i as line i in every language (fill it, or empty it in every file)
    """
    if not recs:
        return {}, True
    if all(r.id is not None for rs in recs.values() for r in rs) and any(recs.values()):
        recs = _by_id(recs)
    elif len({len(rs) for rs in recs.values()}) > 1:  # not parallel: each language as it is
        return dict(recs), False
    langs = list(recs)
    for i in range(len(recs[langs[0]])):
        empty = [recs[lang][i] for lang in langs if not recs[lang][i].text.strip()]
        if empty and len(empty) < len(langs):
            full = next(recs[lang][i] for lang in langs if recs[lang][i].text.strip())
            raise ParallelCorpusError(f"{empty[0].where()} is empty but {full.where()} is not: parallel evaluation "
                                      "text keeps line i as line i in every language (fill it, or empty it in "
                                      "every file)")
    return dict(recs), True


def _by_id(recs: Mapping[str, list[Record]]) -> dict[str, list[Record]]:
    """Each language's records sorted by id; every language must have the same ids, once each."""
    keyed = {}
    for lang, rs in recs.items():
        seen: dict = {}
        for r in rs:
            if r.id in seen:
                raise ParallelCorpusError(f"{r.where()}: id {r.id!r} again (first at {seen[r.id].where()}): "
                                          "an id names one record")
            seen[r.id] = r
        keyed[lang] = seen
    first = next(iter(keyed))
    for lang, by_id in keyed.items():
        for a, b in ((first, lang), (lang, first)):
            if missing := [i for i in keyed[a] if i not in keyed[b]]:
                where = keyed[a][missing[0]].where()
                raise ParallelCorpusError(f"id {missing[0]!r} ({where}) has no record in {b}'s file "
                                          f"{next(iter(keyed[b].values())).path} ({len(missing)} ids missing there): "
                                          "aligned evaluation text has the same ids in every language")
    order = sorted(keyed[first], key=lambda i: (isinstance(i, str), i))
    return {lang: [by_id[i] for i in order] for lang, by_id in keyed.items()}


def _files_of(directory: Path, where: str) -> tuple[dict[str, list[str]], list[str]]:
    """``({lang: [file]}, names not read)`` of one directory of evaluation files."""
    out: dict[str, list[str]] = {}
    skipped: list[str] = []
    for path in sorted(directory.iterdir()):
        match = NAME.fullmatch(path.name)
        if path.is_dir() or not match or not known_extension(match["ext"]):
            if not match and CODE_SHAPED.match(path.name):  # eng_latn.txt, en_Latn.txt: a typo, not a stray file
                check_language_code(path.name.split(".", 1)[0], f"{where}: {path.name}")
            skipped.append(path.name)
            continue
        lang = match["lang"]
        check_language_code(lang, f"{where}: {path.name}")
        if lang in out:
            raise DataError(f"{directory}: two evaluation files for {lang} ({Path(out[lang][0]).name}, {path.name}): "
                            "one file per language and split (line i of it is sentence i)")
        out[lang] = [os.fspath(path)]
    return out, skipped


def _read_root(root: Path, kind: str) -> EvalSet:
    if not root.exists():
        raise DataError(f"evaluation text {root} does not exist")
    if root.is_file():
        if root.suffix.lower() not in MANIFEST_SUFFIXES:
            raise DataError(f"{root}: evaluation text is a directory or a manifest ({', '.join(MANIFEST_SUFFIXES)})")
        entries = load_manifest(root)
        return EvalSet(kind, root, {"devtest": {lang: e.paths for lang, e in entries.items()}}, derived_dev=True,
                       reader=_entry_records(entries))
    split_dirs = {s: root / s for s in SPLITS if (root / s).is_dir()}
    files, skipped = {}, []
    for split, d in (split_dirs or {"devtest": root}).items():
        files[split], names = _files_of(d, str(root))
        skipped += [f"{split}/{n}" for n in names] if split_dirs else names
    if not any(files.values()):
        raise DataError(f"{root}: no evaluation files (expected <lang>_<Script>.<ext> files, directly or in "
                        f"dev/ and devtest/){'; not read: ' + ', '.join(skipped) if skipped else ''}")
    expected = {}
    for split in files:
        meta = root / f"metadata_{split}.tsv"
        if kind == "FLORES-200" and meta.is_file():
            with meta.open(encoding="utf-8") as f:
                expected[split] = max(0, sum(1 for line in f if line.strip()) - 1)  # one row a sentence, less the header
    return EvalSet(kind, root, files, derived_dev=not split_dirs, skipped=tuple(skipped), expected=expected)


def flores(root: str | os.PathLike) -> EvalSet:
    """FLORES-200 at ``root`` (``dev/`` and ``devtest/``)."""
    return _read_root(Path(root), "FLORES-200")


def eval_set(root: str | os.PathLike | None = None) -> EvalSet | None:
    """The evaluation text: ``root``, else ``$MODTOK_EVAL``, else FLORES-200
    (``$MODTOK_FLORES``), else None."""
    own = root if root is not None else os.environ.get(EVAL_ENV)
    if own:
        return _read_root(Path(own), "own evaluation text")
    root = os.environ.get(FLORES_ENV)
    if root and (Path(root) / "devtest").is_dir():
        return flores(root)
    return None


def need_eval_set(root: str | os.PathLike | None = None) -> EvalSet:
    """:func:`eval_set`, or a :class:`DataError` saying how to give one when there is none
    (a command that evaluates, or chooses on dev text, has nothing to do without it)."""
    found = eval_set(root)
    if found is None:
        raise DataError("no evaluation text: give --eval DIR (a directory of <lang>.<ext> files, or "
                        "dev/ and devtest/ of them, or a manifest), or set $MODTOK_EVAL or $MODTOK_FLORES")
    return found
