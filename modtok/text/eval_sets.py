"""Evaluation text: FLORES-200, or a user's own (parallel) text, named one way.

Every evaluation in modtok (NSL, premiums, audits, notebooks, parity-aware BPE's
and AdaptMix's dev sets) reads an :class:`EvalSet`. Which one:

1. the argument (``--eval DIR`` on the command line), else ``$MODTOK_EVAL``: one's
   own text, a directory or a manifest;
2. else ``$MODTOK_FLORES``: FLORES-200 (the default when present);
3. else none (the caller says what it does instead, e.g. held-out training lines).

An evaluation directory is laid out as FLORES-200 is, ``DIR/dev/`` and
``DIR/devtest/`` (the two splits), or flat: files directly in ``DIR`` are the
``devtest`` split alone (there is then no dev split, and whatever needs one says
so). A file's language is its name up to the first dot, a FLORES-200 code
(``npi_Deva.txt``, ``npi_Deva.devtest``, ``npi_Deva.jsonl.zst``); any format
:func:`~modtok.text.corpus.open_corpus` reads. Names without ``_`` (``README.md``,
``SOURCES.md``) are not text and are passed over. A manifest (``.yaml``/``.json``,
``{lang: [paths]}``) is the ``devtest`` split. Lines are *parallel* when every
language has the same number of lines (FLORES-200 is); labels say which.

>>> import tempfile, pathlib
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> _ = (d / "eng_Latn.txt").write_text("one\\ntwo\\n"); _ = (d / "deu_Latn.txt").write_text("eins\\nzwei\\n")
>>> s = eval_set(d)
>>> s.languages(), s.has("dev"), s.parallel()
(['deu_Latn', 'eng_Latn'], False, True)
>>> s.load(["eng_Latn"])
{'eng_Latn': ['one', 'two']}
>>> s.label().startswith("own evaluation text ")
True
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from modtok.errors import DataError, MissingDevTextError, UnknownLanguageError
from modtok.text.corpus import MANIFEST_SUFFIXES, check_language_code, load_manifest, open_corpus

SPLITS = ("dev", "devtest")
EVAL_ENV = "MODTOK_EVAL"
FLORES_ENV = "MODTOK_FLORES"


@dataclass(frozen=True)
class EvalSet:
    """Evaluation text by split and language: ``files[split][lang]`` lists its files."""

    kind: str  # "FLORES-200" or "own evaluation text"
    root: Path
    files: dict[str, dict[str, list[str]]]

    def has(self, split: str) -> bool:
        """True when this set has ``split`` ("dev" or "devtest")."""
        return bool(self.files.get(split))

    def languages(self, split: str = "devtest") -> list[str]:
        """Sorted languages of ``split``."""
        return sorted(self._split(split))

    def _split(self, split: str) -> dict[str, list[str]]:
        if split not in SPLITS:
            raise DataError(f"unknown evaluation split {split!r} (known: {', '.join(SPLITS)})")
        if not self.has(split):
            if split == "dev":
                raise MissingDevTextError(
                    f"{self.label('devtest')} has no dev split: put dev files in {self.root / 'dev'} "
                    f"(and the test files in {self.root / 'devtest'})")
            raise DataError(f"{self.root}: no {split} text")
        return self.files[split]

    def load(self, langs: Iterable[str] | str | None = None, split: str = "devtest",
             max_lines: int | None = None, normalization: str | None = None) -> dict[str, list[str]]:
        """``{lang: lines}`` of ``split`` (first ``max_lines`` lines), raw unless ``normalization``."""
        files = self._split(split)
        chosen = sorted(files) if langs is None else ([langs] if isinstance(langs, str) else list(langs))
        for lang in chosen:
            if lang not in files:
                raise UnknownLanguageError(lang, files, f"no {split} file in {self.label(split)}")
        out = {}
        for lang in chosen:
            lines = open_corpus(files[lang], lang, normalization=normalization).lines()
            out[lang] = lines[:max_lines] if max_lines else lines
        return out

    def parallel(self, split: str = "devtest") -> bool:
        """True when every language of ``split`` has the same number of lines (FLORES-200 does)."""
        if self.kind == "FLORES-200":
            return True
        sizes = {len(v) for v in self.load(split=split).values()}
        return len(sizes) == 1

    def label(self, split: str = "devtest") -> str:
        """What this text is, for table captions and source lines."""
        return f"{self.kind} {split} ({self.root})"


def _files_of(directory: Path, where: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for path in sorted(directory.iterdir()):
        if path.name.startswith(".") or "_" not in path.name or path.is_dir():
            continue
        lang = path.name.split(".", 1)[0]
        check_language_code(lang, f"{where}: {path.name}")
        out.setdefault(lang, []).append(os.fspath(path))
    return out


def _read_root(root: Path, kind: str) -> EvalSet:
    if not root.exists():
        raise DataError(f"evaluation text {root} does not exist")
    if root.is_file():
        if root.suffix.lower() not in MANIFEST_SUFFIXES:
            raise DataError(f"{root}: evaluation text is a directory or a manifest ({', '.join(MANIFEST_SUFFIXES)})")
        return EvalSet(kind, root, {"devtest": load_manifest(root)})
    split_dirs = {s: root / s for s in SPLITS if (root / s).is_dir()}
    if split_dirs:
        files = {s: _files_of(d, str(root)) for s, d in split_dirs.items()}
    else:
        files = {"devtest": _files_of(root, str(root))}
    if not any(files.values()):
        raise DataError(f"{root}: no evaluation files (expected <lang>_<Script>.<ext> files, "
                        f"directly or in dev/ and devtest/)")
    return EvalSet(kind, root, files)


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
