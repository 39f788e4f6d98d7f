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

Composite and variant codes are checked as what they are:

- ``Jpan`` (Japanese: Han + Hiragana + Katakana) needs kana beside Han: at least
  :data:`KANA_MIN` of its Han and kana letters are kana, else it is Chinese.
- ``Hans`` / ``Hant`` (Simplified / Traditional Chinese) are Han, told apart by the
  characters that only one of the two standards uses (:data:`SIMPLIFIED_ONLY`,
  :data:`TRADITIONAL_ONLY`: the CC-CEDICT tables of the ``hanzidentifier`` package,
  which reads them from ``zhon``): at least :data:`MIN_SHARE` of those must be the
  code's own, once the sample has :data:`VARIANT_MIN` of them.
- ``Hang`` (Korean in Hangul) tolerates Hanja: Han letters count as Korean while they
  are at most :data:`HANJA_MAX` of the Hangul and Han letters.
- ``Kore`` is Hangul + Han, ``Hrkt`` kana. A script the Unicode database has no name
  for is not checked here (:func:`script_class` refuses it where a script must be known).

The override: ``any_script=True`` (library keyword), or ``$MODTOK_ANY_SCRIPT``: ``1``
(every language) or comma-separated codes (``hin_Deva,mar_Deva``), which the command
line's ``--any-script`` sets for its run.

Speed: the check reads only the first :data:`SAMPLE_CHARS` characters and classifies
each distinct letter once. On 1 MB of text (UDHR paragraphs repeated) one check took
6.0 ms for ``eng_Latn``, 14 ms for ``zho_Hans``/``zho_Hant``, 15 ms for ``jpn_Jpan``
(2 CPU cores at load 15; at load 4: 2.8-7.1 ms); the earlier check, with no
composite rules, took 39-55 ms on the same texts and machine. ``hanzidentifier``'s
tables load once, 46 ms, on the first Chinese check.

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
from collections import Counter
from collections.abc import Iterable
from functools import cache

import regex

from modtok.errors import DataError

MIN_SHARE = 0.5  # at least half of the sample's letters in the code's script
SAMPLE_CHARS = 20_000  # characters of a text's start that are checked (a file's, or a list's)
ANY_SCRIPT_ENV = "MODTOK_ANY_SCRIPT"
COMPOSITE = {"Jpan": ("Hani", "Hira", "Kana"), "Hans": ("Hani",), "Hant": ("Hani",), "Kore": ("Hang", "Hani"),
             "Hrkt": ("Hira", "Kana")}
COMPOSITE_NAMES = {"Jpan": "Japanese", "Hans": "Simplified Han", "Hant": "Traditional Han", "Kore": "Korean",
                   "Hrkt": "kana"}
NOT_SCRIPTS = ("Zinh", "Zyyy", "Zzzz")  # Inherited, Common, Unknown: Unicode values, no script of a language

# Japanese needs kana. Of the Han and kana letters, kana were 0.516-0.532 in UDHR jpn
# (two versions) and 0.655-0.660 in FLORES-200 jpn_Jpan dev/devtest; 0 in every Chinese
# text (UDHR cmn_hans, cmn_hant, yue, nan, hak; FLORES zho_Hans). A tenth of the lowest.
KANA_MIN = 0.05
# Simplified vs Traditional: of the variant-only characters, the other variant's were 0%
# in UDHR cmn_hans, nan, hak and FLORES zho_Hans (4,527-4,541 of them), 1.9% in UDHR yue
# (one character, 係), 0% in UDHR cmn_hant read as Traditional. A verdict needs
# VARIANT_MIN of them: UDHR's preamble alone has 60.
VARIANT_MIN = 20
# Hanja under kor_Hang: FLORES-200 kor_Hang dev + devtest have 2 Han of 28,399 letters.
# Today's Korean writes Hanja as glosses after the Hangul word (인권(人權)), so even a
# gloss on every Sino-Korean word leaves Hangul the majority; text with more Hanja than
# Hangul is the old mixed script (大韓民國은: 4 Han, 1 Hangul), which ISO 15924 names Kore.
HANJA_MAX = 0.5

@cache
def _script_table() -> dict[str, str]:
    """``{ISO 15924 code: Unicode name}`` of every script value the ``regex`` module knows
    (its own property table: exactly what ``\\p{Script=...}`` compiles), without
    :data:`NOT_SCRIPTS`. Code: each value's 4-letter alias (``Qaac``/``Qaai``, the private
    aliases of Coptic and Inherited, left out); name: its longest alias of another length
    (``Lao`` for ``Laoo``), else the code (``Thai``)."""
    from regex import _regex_core

    aliases: dict[int, list[str]] = {}
    for alias, value in _regex_core.PROPERTIES["SCRIPT"][1].items():
        aliases.setdefault(value, []).append(alias)
    out = {}
    for names in aliases.values():
        name = max([n for n in names if len(n) != 4] or names, key=len).title()
        for code in names:
            if len(code) == 4 and not code.startswith("Q") and code.title() not in NOT_SCRIPTS:
                out[code.title()] = name
    return out


@cache
def codes() -> tuple[str, ...]:
    """The ISO 15924 codes a language code may name: every script Unicode knows, and the
    composites of :data:`COMPOSITE`.

    >>> {"Khmr", "Mymr", "Thai", "Laoo", "Tibt", "Ethi", "Hang", "Hani", "Jpan", "Hans"} <= set(codes())
    True
    >>> "Zyyy" in codes(), "Xxxx" in codes()
    (False, False)
    """
    return tuple(sorted(set(_script_table()) | set(COMPOSITE)))


def name(script: str) -> str:
    """A script's name for messages: ``name("Khmr") == "Khmer"``, ``name("Jpan") == "Japanese"``."""
    return COMPOSITE_NAMES.get(script) or _script_table().get(script, script)


def script_class(script: str) -> str:
    """The body of a regex character class holding every character of ``script`` (an ISO
    15924 code; composites: the union of their scripts), by Unicode ``Script_Extensions``:
    letters, marks, the script's own digits and punctuation (the danda of Devanagari,
    the ideographic full stop of Han). An unknown code is a :class:`DataError` listing the
    valid ones.

    >>> script_class("Jpan")
    '\\\\p{scx=Hani}\\\\p{scx=Hira}\\\\p{scx=Kana}'
    >>> bool(regex.fullmatch(f"[{script_class('Khmr')}]+", "ខ្មែរ"))
    True
    """
    if script not in codes():
        raise DataError(f"unknown script {script!r}: not an ISO 15924 code that Unicode knows (valid: "
                        f"{', '.join(codes())})")
    return "".join(rf"\p{{scx={s}}}" for s in COMPOSITE.get(script, (script,)))


@cache
def _in(script: str):
    """A regex matching one letter of ``script`` (composites: of any of their scripts)."""
    return regex.compile(rf"(?V1)[\p{{L}}&&[{script_class(script)}]]")


def letters_of(text: str) -> Counter:
    """How often each letter of ``text`` occurs (each distinct letter is then classified once;
    ``str.isalpha`` is Unicode category L, and twice as fast as ``regex``'s ``\\p{L}``)."""
    return Counter({c: n for c, n in Counter(text).items() if c.isalpha()})


def count_in(letters: Counter, script: str) -> int:
    """How many of ``letters`` (:func:`letters_of`) are in ``script``."""
    match = _in(script).match
    return sum(n for c, n in letters.items() if match(c))


def script_share(text: str, script: str) -> float | None:
    """Share of the letters of ``text`` in ``script`` (ISO 15924; composites: their union);
    None when ``text`` has no letter or ``script`` is unknown to Unicode."""
    letters = letters_of(text)
    if script not in codes() or not letters:
        return None
    return count_in(letters, script) / sum(letters.values())


@cache
def variant_only() -> tuple[frozenset, frozenset]:
    """(Simplified-only, Traditional-only) Han characters: those of CC-CEDICT's simplified
    and traditional forms (``hanzidentifier``'s tables, from ``zhon``) that the other
    standard does not use (2,325 and 2,703 characters; 8,000 are shared)."""
    from hanzidentifier import helpers

    return (frozenset(helpers.SIMPLIFIED_CHARACTERS - helpers.SHARED_CHARACTERS),
            frozenset(helpers.TRADITIONAL_CHARACTERS - helpers.SHARED_CHARACTERS))


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


def problem(script: str, letters: Counter) -> str | None:
    """What is wrong with ``letters`` (:func:`letters_of` of a sample) as text in ``script``,
    said after "text under <lang> ..."; None when nothing is (or the script is unknown).

    >>> problem("Jpan", letters_of("人人生而自由，在尊严和权利上一律平等。"))
    'has no kana: 0 of its 17 Han and kana letters are Hiragana or Katakana (Japanese has at least 5%); Chinese? (zho_Hans, zho_Hant)'
    >>> problem("Hang", letters_of("인권(人權) 선언")), problem("Jpan", letters_of("すべての人間は、生まれながらにして自由"))
    (None, None)
    """
    total = sum(letters.values())
    if script not in codes() or total == 0:
        return None
    if script == "Hang":
        hangul, han = count_in(letters, "Hang"), count_in(letters, "Hani")
        if hangul and han > HANJA_MAX * (hangul + han) and (hangul + han) >= MIN_SHARE * total:
            return (f"has more Hanja than Hangul: {han / (hangul + han):.0%} of its {hangul + han:,} Hangul and Han "
                    f"letters are Han (kor_Hang tolerates at most {HANJA_MAX:.0%}; text written mainly in Hanja "
                    "is Kore, e.g. kor_Kore)")
        own = hangul + (han if han <= HANJA_MAX * (hangul + han) else 0)
    else:
        own = count_in(letters, script)
    if own < MIN_SHARE * total:
        return (f"is not {name(script)} script: {own / total:.0%} of the sample's {total:,} letters are "
                f"{name(script)} (at least {MIN_SHARE:.0%} expected)")
    if script == "Jpan":
        return _kana_problem(letters, own)
    if script in ("Hans", "Hant"):
        return _variant_problem(letters, script)
    return None


def _kana_problem(letters: Counter, japanese: int) -> str | None:
    """Japanese (``japanese`` Han and kana letters) without kana: Chinese."""
    is_kana, is_han = _in("Hrkt").match, _in("Hani").match
    kana = sum(n for c, n in letters.items() if is_kana(c) and not is_han(c))  # 々 and 〆 are Han
    if kana >= KANA_MIN * japanese:
        return None
    return (f"has no kana: {kana:,} of its {japanese:,} Han and kana letters are Hiragana or Katakana "
            f"(Japanese has at least {KANA_MIN:.0%}); Chinese? (zho_Hans, zho_Hant)")


def _variant_problem(letters: Counter, script: str) -> str | None:
    """Han text under ``Hans`` / ``Hant`` whose variant-only characters are mostly the other's."""
    simplified, traditional = (sum(n for c, n in letters.items() if c in only) for only in variant_only())
    mine, other = (simplified, traditional) if script == "Hans" else (traditional, simplified)
    deciding = simplified + traditional
    if deciding < VARIANT_MIN or mine >= MIN_SHARE * deciding:
        return None
    kind, code = ("Traditional", "Hant") if script == "Hans" else ("Simplified", "Hans")
    return (f"is {kind} Chinese: {other / deciding:.0%} of the {deciding:,} characters that only one standard uses "
            f"are {kind}-only (CC-CEDICT's tables, via hanzidentifier); {kind} is {code} (e.g. zho_{code})")


def check_script(lang: str, lines: Iterable[str], where, any_script: bool = False) -> None:
    """Refuse ``lines`` (their first :data:`SAMPLE_CHARS` characters) when they are not
    ``lang``'s script (:func:`problem`: fewer than :data:`MIN_SHARE` of their letters in
    it, Japanese without kana, the other Chinese standard, Korean mainly in Hanja);
    ``where`` names the text."""
    _, _, script = lang.partition("_")
    if not script or exempt(lang, any_script):
        return
    wrong = problem(script, letters_of(sample(lines)))
    if wrong:
        raise DataError(f"{where}: text under {lang} {wrong}; if that is right, pass any_script=True "
                        f"(command line: --any-script; or ${ANY_SCRIPT_ENV}={lang})")
