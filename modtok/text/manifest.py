"""Manifests: which files hold each language's text.

A manifest is a JSON or YAML file ``{lang: [paths or globs]}`` (or a mapping given in
code); an entry is a path, a list of paths, or ``{path(s): ..., text_field: ...}`` to name
the JSONL field / Parquet column of its text. :func:`load_manifest` reads one: relative
paths become relative to the manifest's folder, language order is kept, a language given
twice is refused (a plain YAML or JSON loader would keep the last one silently), and every
key must be a real language code (:func:`modtok.text.names.check_language_code`).
:func:`modtok.text.corpus.open_corpus` opens the text of the entries.

>>> check_manifest({"eng_Latn": ["a.txt", "b.txt"]}, "m")
{'eng_Latn': ManifestEntry(paths=['a.txt', 'b.txt'], text_field=None)}
"""

from __future__ import annotations

import errno
import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from modtok.errors import DataError
from modtok.text.names import SYMLINK_LOOP, check_language_code, missing

MANIFEST_SUFFIXES = (".json", ".yaml", ".yml")


def load_manifest(path: str | os.PathLike) -> dict[str, ManifestEntry]:
    """``{lang: ManifestEntry}`` (paths or globs, and the entry's ``text_field``) from a JSON
    or YAML manifest; relative paths become relative to the manifest's folder. Language
    order is kept; a language given twice is refused (:func:`_unique_keys`)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (FileNotFoundError, IsADirectoryError):
        raise not_a_manifest(path) from None
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise DataError(f"{path}: {SYMLINK_LOOP}") from None
        raise DataError(f"{path}: cannot read manifest ({e.strerror})") from None
    except UnicodeDecodeError as e:
        raise DataError(f"{path}: cannot read manifest ({e})") from None
    try:
        if path.suffix.lower() in (".yaml", ".yml"):
            obj = _load_yaml(text, path)
        else:
            try:
                obj = json.loads(text, object_pairs_hook=_unique_keys)
            except json.JSONDecodeError as e:
                raise DataError(f"{path}: bad JSON manifest ({e.msg} at line {e.lineno}, column {e.colno})") from None
    except _DuplicateKey as e:
        if not e.where:  # JSON: find the key's lines in the text
            lines = [text.count("\n", 0, m.start()) + 1 for m in re.finditer(re.escape(json.dumps(e.key)) + r"\s*:", text)]
            e.where = f" (lines {' and '.join(map(str, lines))})" if len(lines) > 1 else ""
        raise DataError(f"{path}: language {e.key!r} is given twice{e.where}: a manifest gives each language "
                        "once, with all its paths in one list (a plain loader keeps the last entry only)") from None
    return check_manifest(obj, path, base=path.parent)


def not_a_manifest(spec) -> DataError:
    """The error for ``spec`` given where a manifest is expected, with no language named:
    a directory, a manifest file that is not there, or one language's text.

    >>> print(not_a_manifest("/nowhere/m.yaml"))
    /nowhere/m.yaml: no such manifest
    >>> print(not_a_manifest(Path(__file__).parent))  # doctest: +ELLIPSIS
    /.../text: a directory, not a manifest: a manifest is a JSON or YAML file ...
    """
    path = Path(spec) if isinstance(spec, (str, os.PathLike)) else None
    if path is not None and path.is_dir():
        return DataError(f"{spec}: a directory, not a manifest: a manifest is a JSON or YAML file "
                         f"{{lang: [paths or globs]}}, where a directory can be a language's path "
                         f"(eng_Latn: [{json.dumps(os.fspath(spec))}] reads its files as English)")
    if path is not None and path.suffix.lower() in MANIFEST_SUFFIXES and not path.exists():
        why = missing(path)
        return DataError(f"{spec}: " + ("no such manifest" if why.startswith("no such") else why))
    return DataError(f"{spec}: not a manifest (a .json, .yaml or .yml file {{lang: [paths or globs]}}), and no "
                     "language is named for it (open_corpus's lang=...)")


class _DuplicateKey(Exception):
    """A manifest key given twice (internal: :func:`load_manifest` names the file)."""

    def __init__(self, key, where: str = ""):
        super().__init__(key)
        self.key, self.where = key, where


def _unique_keys(pairs: list[tuple]) -> dict:
    """A JSON object as a dict, refusing a key given twice (``json``'s ``object_pairs_hook``).

    >>> json.loads('{"eng_Latn": "a.txt", "eng_Latn": "b.txt"}', object_pairs_hook=_unique_keys)
    Traceback (most recent call last):
    ...
    modtok.text.manifest._DuplicateKey: eng_Latn
    """
    out = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateKey(key)
        out[key] = value
    return out


def _load_yaml(text: str, path: Path):
    """A YAML document with yaml's SafeLoader, refusing a mapping key given twice (the
    SafeLoader keeps the last one), with both lines named."""
    import yaml

    class Loader(yaml.SafeLoader):
        def construct_mapping(self, node, deep=False):
            seen = {}
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=deep)
                line = key_node.start_mark.line + 1
                if key in seen:
                    raise _DuplicateKey(key, f" (lines {seen[key]} and {line})")
                seen[key] = line
            return super().construct_mapping(node, deep)

    try:
        return yaml.load(text, Loader=Loader)
    except yaml.YAMLError as e:
        raise DataError(f"{path}: bad YAML manifest ({e})".replace("\n", " ")) from None


@dataclass(frozen=True)
class ManifestEntry:
    """One language's entry of a manifest: its paths (or globs) and the JSONL field /
    Parquet or Arrow column of its text when the entry names one (None: the reader's)."""

    paths: list[str]
    text_field: str | None = None


ENTRY_KEYS = ("path", "paths", "text_field")  # the keys of an entry written as a mapping


def check_manifest(obj, where, base: Path | None = None) -> dict[str, ManifestEntry]:
    """``obj`` as ``{lang: ManifestEntry}``; the keys of a manifest *file* (``base`` set), and
    any key that is not a string, must be real language codes.

    >>> check_manifest({"eng_Latn": {"path": "a.jsonl", "text_field": "body"}, "hin_Deva": "b.txt"}, "m")
    {'eng_Latn': ManifestEntry(paths=['a.jsonl'], text_field='body'), 'hin_Deva': ManifestEntry(paths=['b.txt'], text_field=None)}
    """
    if not isinstance(obj, Mapping) or not obj:
        raise DataError(f"{where}: a manifest is a non-empty mapping {{lang: [paths or globs]}}")
    out = {}
    for lang, value in obj.items():
        if base is not None or not isinstance(lang, str):  # the key first: `123:` is no language, whatever its value
            check_language_code(lang, where)
        entry = _manifest_entry(value, f"{where}: entry {lang!r}")
        out[lang] = replace(entry, paths=[os.fspath(base / p) if base is not None else os.fspath(p)
                                          for p in entry.paths])
    return out


def _manifest_entry(value, where: str) -> ManifestEntry:
    """One manifest value: a path, a non-empty list of paths, or a mapping of ``path`` or
    ``paths`` (one of them) and ``text_field``; ``where`` names the manifest and the entry."""
    text_field = None
    if isinstance(value, Mapping):
        unknown = [str(key) for key in value if key not in ENTRY_KEYS]
        given = [key for key in ("path", "paths") if key in value]
        if unknown or len(given) != 1:
            raise DataError(f"{where}: a mapping entry has path or paths (one of them) and optionally text_field"
                            + (f", not {', '.join(unknown)}" if unknown else ""))
        text_field = value.get("text_field")
        if text_field is not None and not (isinstance(text_field, str) and text_field):
            raise DataError(f"{where}: text_field must name a JSONL field or a column, not {text_field!r}")
        value = value[given[0]]
    paths = [value] if isinstance(value, (str, os.PathLike)) else value
    if not isinstance(paths, list) or not paths or not all(isinstance(p, (str, os.PathLike)) for p in paths):
        raise DataError(f"{where} must map a language to a path, a non-empty list of paths, or "
                        "{path: ..., text_field: ...}")
    return ManifestEntry(paths, text_field)
