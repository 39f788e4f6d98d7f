"""Does a language's text match its code's script? (``eng_Latn`` text is Latin letters.)

A language code ``<lang>_<Script>`` names an ISO 15924 script; text filed under it in
another script (Devanagari under ``eng_Latn`` or ``mar_Latn``, a swapped file) trains
and evaluates the wrong language with no error anywhere else. :func:`check_script`
measures the share of a sample's *letters* (Unicode category L) that belong to the
code's script (Unicode ``Script_Extensions``, so a letter shared by several scripts
counts for each) and refuses a sample in which fewer than :data:`MIN_SHARE` of them
do. Digits, punctuation, spaces and combining marks are not letters and do not count.

Evidence for the threshold: on the first 50,000 characters of every pool and
FLORES-200 devtest file the lowest share was 0.919 (ukr_Cyrl in the pool: Latin names
and URLs); text in another script scores near 0. Half is far from both.

Composite ISO codes are the union of the scripts they name (``Jpan`` = Han + Hiragana +
Katakana, ``Hans``/``Hant`` = Han, ``Kore`` = Hangul + Han). A script the Unicode
database has no name for is not checked.

The override: ``any_script=True`` (library keyword), or ``$MODTOK_ANY_SCRIPT``: ``1``
(every language) or comma-separated codes (``hin_Deva,mar_Deva``), which the command
line's ``--any-script`` sets for its run.

>>> round(script_share("नमस्ते world", "Deva"), 3)   # 4 Devanagari letters of 9 (vowel signs are marks)
0.444
>>> check_script("eng_Latn", ["Hello, world 42!"], "a.txt")
>>> check_script("eng_Latn", ["नमस्ते संसार"], "a.txt")
Traceback (most recent call last):
...
modtok.errors.DataError: a.txt: text under eng_Latn is not Latin script: 0% of the sample's 7 letters are Latin (at least 50% expected); if that is right, pass any_script=True (command line: --any-script; or $MODTOK_ANY_SCRIPT=eng_Latn)
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from functools import cache

import regex

from modtok.errors import DataError

MIN_SHARE = 0.5  # at least half of the sample's letters in the code's script
SAMPLE_CHARS = 20_000  # characters of a text's start that are checked (a file's, or a list's)
ANY_SCRIPT_ENV = "MODTOK_ANY_SCRIPT"
COMPOSITE = {"Jpan": ("Hani", "Hira", "Kana"), "Hans": ("Hani",), "Hant": ("Hani",), "Kore": ("Hang", "Hani"),
             "Hrkt": ("Hira", "Kana")}
NAMES = {"Latn": "Latin", "Cyrl": "Cyrillic", "Grek": "Greek", "Arab": "Arabic", "Hebr": "Hebrew",
         "Deva": "Devanagari", "Beng": "Bengali", "Taml": "Tamil", "Telu": "Telugu", "Knda": "Kannada",
         "Mlym": "Malayalam", "Gujr": "Gujarati", "Guru": "Gurmukhi", "Orya": "Odia", "Sinh": "Sinhala",
         "Thai": "Thai", "Hang": "Hangul", "Hani": "Han", "Hans": "Han", "Hant": "Han", "Jpan": "Japanese",
         "Ethi": "Ethiopic", "Geor": "Georgian", "Armn": "Armenian", "Khmr": "Khmer", "Mymr": "Myanmar"}

_LETTER = regex.compile(r"\p{L}")


@cache
def _in_script(script: str):
    """A regex matching a letter of ``script`` (None: the Unicode database has no such script)."""
    classes = "".join(f"\\p{{Script_Extensions={s}}}" for s in COMPOSITE.get(script, (script,)))
    try:
        return regex.compile(rf"(?V1)[\p{{L}}&&[{classes}]]")
    except regex.error:
        return None


def script_share(text: str, script: str) -> float | None:
    """Share of the letters of ``text`` in ``script`` (ISO 15924); None when ``text`` has no
    letter or ``script`` is unknown to Unicode."""
    pattern = _in_script(script)
    letters = len(_LETTER.findall(text))
    if pattern is None or letters == 0:
        return None
    return len(pattern.findall(text)) / letters


def exempt(lang: str, any_script: bool = False) -> bool:
    """True when ``lang``'s script is not to be checked (the keyword, or ``$MODTOK_ANY_SCRIPT``)."""
    value = os.environ.get(ANY_SCRIPT_ENV, "").strip()
    return any_script or value in ("1", "*", "true", "yes") or lang in value.split(",")


def head(lines: Iterable[str], chars: int = SAMPLE_CHARS) -> list[str]:
    """The first lines of ``lines`` up to about ``chars`` characters (an iterator is
    consumed only that far: the rest can still be read from it).

    >>> it = iter(["ab", "cd", "ef"]); head(it, 3), list(it)
    (['ab', 'cd'], ['ef'])
    """
    out, n = [], 0
    for line in lines:
        out.append(line)
        n += len(line)
        if n >= chars:
            break
    return out


def sample(lines: Iterable[str], chars: int = SAMPLE_CHARS) -> str:
    """The first lines of ``lines`` up to about ``chars`` characters, joined."""
    return "\n".join(head(lines, chars))


def check_script(lang: str, lines: Iterable[str], where, any_script: bool = False) -> None:
    """Refuse ``lines`` (their first :data:`SAMPLE_CHARS` characters) when fewer than
    :data:`MIN_SHARE` of their letters are in ``lang``'s script; ``where`` names the text."""
    _, _, script = lang.partition("_")
    if not script or exempt(lang, any_script):
        return
    text = sample(lines)
    share = script_share(text, script)
    if share is None or share >= MIN_SHARE:
        return
    name = NAMES.get(script, script)
    raise DataError(f"{where}: text under {lang} is not {name} script: {share:.0%} of the sample's "
                    f"{len(_LETTER.findall(text)):,} letters are {name} (at least {MIN_SHARE:.0%} expected); "
                    f"if that is right, pass any_script=True (command line: --any-script; or ${ANY_SCRIPT_ENV}={lang})")
