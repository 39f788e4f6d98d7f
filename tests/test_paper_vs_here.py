"""The "paper vs here" tables: rules, settings side by side, reasons, the saved JSON, the
data file checked against the papers' full texts, the reproduction report, and that every
notebook 01-07 ends with its table."""

import json
import re
import tomllib
from pathlib import Path

import pytest

from modtok.errors import ConfigError, DataError
from modtok.studies import contract
from modtok.studies import paper_vs_here as pvh
from modtok.ui import cli, report

ROOT = Path(__file__).resolve().parents[1]


def _claim(rule, paper=-1.0):
    return pvh.Claim("s", "k", "c", "src", paper, "u", rule, "set")


@pytest.fixture(scope="module")
def papers():
    folder = pvh.papers_dir()
    if not (folder / "modular-tokenizers.txt").is_file():
        pytest.skip(f"the papers' texts are not in {folder} (set MODTOK_PAPERS)")
    return folder


@pytest.mark.parametrize("rule,here,expected", [
    ("below 0", -0.1, "holds"), ("below 0", 0.0, "does not hold"),
    ("at most 1.05", 1.05, "holds"), ("at most 1.05", 1.051, "does not hold"),
    ("above 2", 2.5, "holds"), ("at least 2", 1.9, "does not hold"),
    ("matches ±0.1 (printed precision 0.1)", -0.95, "holds"), ("matches ±0.1 (printed precision 0.1)", -0.8, "does not hold"),
    ("same sign", -3.0, "holds"), ("same sign", 0.5, "does not hold"), ("same sign", 0.0, "does not hold"),
])
def test_rules(rule, here, expected):
    assert _claim(rule).verdict(here) == expected


SCALE = 'scale="reduced: 8 languages"\nrange=[0, 10]\n'
TWO = ('[s.a]\nclaim="x"\nsource="Table 1"\npaper=1.0\nunit="u"\nrule="below 2"\n' + SCALE +
       '[s.a.setting]\ndata="60 languages"\nvocabulary="128k"\nlr="1e-4"\n'
       '[s.b]\nclaim="y"\nsource="§3"\npaper="not in the paper"\nunit="u"\nrule="at least 0"\n' + SCALE +
       'setting="p"\n')


def test_every_claim_needs_a_value_and_no_extra(tmp_path):
    f = tmp_path / "f.toml"
    f.write_text(TWO)
    cs = pvh.claims("s", f)
    with pytest.raises(ConfigError, match="no measured value.*b"):
        pvh.rows_for(cs, {"a": 1.0}, "here")
    with pytest.raises(ConfigError, match="does not have: zz"):
        pvh.rows_for(cs, {"a": 1.0, "b": 1.0, "zz": 2.0}, "here")
    rows = pvh.rows_for(cs, {"a": 3.0, "b": pvh.NotMeasured("no parallel text")}, "here")
    assert [r["holds?"] for r in rows] == ["does not hold", "not measured: no parallel text"]


def test_the_papers_setting_is_beside_ours_with_every_difference(tmp_path):
    f = tmp_path / "f.toml"
    f.write_text(TWO)
    a, b = pvh.claims("s", f)
    assert a.setting == {"data": "60 languages", "vocabulary": "128k", "lr": "1e-4"}
    assert b.setting == {"data": "p"}       # the older plain string: the data field
    ours = {"data": "60  Languages", "vocabulary": 32000, "model": "6M"}
    row = pvh.rows_for([a, b], {"a": 1.5, "b": 1.0}, ours)[0]
    # case and spacing aside the data agree; 32,000 vs 128k and the lr we do not state differ;
    # our model is not a field of the paper's setting for this claim
    assert row["setting differs"] == "vocabulary: paper 128k / here 32,000; lr: paper 1e-4 / here not stated"
    assert row["setting: paper"] == "data: 60 languages; vocabulary: 128k; lr: 1e-4"
    assert row["setting: here"] == "data: 60  Languages; vocabulary: 32,000; lr: not stated"
    same = pvh.rows_for([a], {"a": 1.5}, {"data": "60 languages", "vocabulary": "128K", "lr": "1e-4"})[0]
    assert same["setting differs"] == "none"
    with pytest.raises(ConfigError, match="setting fields tokens are not among"):
        pvh.rows_for([a], {"a": 1.5}, {"tokens": "32k"})
    f.write_text(TWO.replace('lr="1e-4"', 'lr="1e-4"\nbatch="8"'))
    with pytest.raises(ConfigError, match=r"\[s.a\].*setting fields batch"):
        pvh.claims("s", f)


def test_a_verdict_that_differs_states_its_reason(tmp_path):
    f = tmp_path / "f.toml"
    f.write_text(TWO)
    cs = pvh.claims("s", f)
    here = {"a": 3.0, "b": 1.0}
    rows = pvh.rows_for(cs, here, "d")
    assert [(r["holds?"], r["reason"]) for r in rows] == [("does not hold", "reason not measured"), ("holds", "")]
    rows = pvh.rows_for(cs, here, "d", {"a": "our pool has 3 MB per language (measured: 2.9x fewer merges)"})
    assert rows[0]["reason"].startswith("our pool has 3 MB")
    with pytest.raises(ConfigError, match=r"\[s.b\], which is 'holds'"):
        pvh.rows_for(cs, here, "d", {"b": "why"})
    with pytest.raises(ConfigError, match="reasons for claims .* does not have: c"):
        pvh.rows_for(cs, here, "d", {"c": "why"})
    with pytest.raises(ConfigError, match="not measured"):
        pvh.rows_for(cs, {"a": pvh.NotMeasured("no text"), "b": 1.0}, "d", {"a": "why"})


def test_bad_rule_and_missing_field_are_config_errors(tmp_path):
    f = tmp_path / "f.toml"
    f.write_text('[s.a]\nclaim="x"\nsource="T1"\npaper=1.0\nunit="u"\nrule="roughly 2"\nsetting="p"\n' + SCALE)
    with pytest.raises(ConfigError, match=r"\[s.a\].*rule 'roughly 2'"):
        pvh.claims("s", f)
    f.write_text('[s.a]\nclaim="x"\npaper=1.0\nunit="u"\nrule="below 2"\nsetting="p"\n' + SCALE)
    with pytest.raises(ConfigError, match="lacks source"):
        pvh.claims("s", f)
    with pytest.raises(ConfigError, match="no claims for study 'nope'"):
        pvh.claims("nope", f)


def test_the_figures_file_parses_for_every_study_that_has_claims():
    for study in pvh.studies():
        assert pvh.paper_of(study)[0] in set(pvh.papers())
        for c in pvh.claims(study):
            assert c.source and c.setting and c.claim, c


def _all_not_measured(study):
    return {c.key: pvh.NotMeasured("smoke") for c in pvh.claims(study)}


def test_table_saves_json_only_when_asked(tmp_path, monkeypatch):
    monkeypatch.delenv("MODTOK_REPORTS", raising=False)
    pvh.table("parity_bpe", _all_not_measured("parity_bpe"), {"data": "tiny"})
    assert not list(tmp_path.iterdir())
    monkeypatch.setenv("MODTOK_REPORTS", str(tmp_path))
    rows = pvh.table("parity_bpe", _all_not_measured("parity_bpe"), {"data": "tiny", "vocabulary": "2k"})
    record = json.loads((tmp_path / "paper_vs_here" / "parity_bpe.json").read_text(encoding="utf-8"))
    assert record["study"] == "parity_bpe" and record["paper"] == "parity-aware-bpe.txt"
    assert record["data"] == "tiny" and record["setting"] == {"data": "tiny", "vocabulary": "2k"}
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00", record["time"])
    assert [r["key"] for r in record["rows"]] == [c.key for c in pvh.claims("parity_bpe")]
    assert [{k: v for k, v in r.items() if k not in ("key", "verdict", "numeric", "scale kind", "headline", "scale")}
            for r in record["rows"]] == [{**{k: v for k, v in r.items() if k != "scale"}, "scale here": r["scale"]}
                                         for r in rows]
    # the file's scale, what modtok report checks a saved table against; the shown one is "scale here"
    assert [r["scale"] for r in record["rows"]] == [c.scale for c in pvh.claims("parity_bpe")]
    assert [(r["scale kind"], r["headline"]) for r in record["rows"]] == [
        (pvh.scale_kind(c.scale), c.headline) for c in pvh.claims("parity_bpe")]
    assert {r["verdict"] for r in record["rows"]} == {"not measured"}
    assert [p.name for p in (tmp_path / "paper_vs_here").iterdir()] == ["parity_bpe.json"]  # no temp file left


# ---- the figures against the papers' texts ---------------------------------------------------

PAPER_TEXT = ("Table 2: NSL. Llama3 2\\.432\\.43 and 1.01 for Extracted 24k; the Gini falls by 0.045 "
              "(−12%) and 1,234 merges, §4.2.")


def _problems_of(tmp_path, entries: str) -> list[str]:
    """figure_problems of a one-study file citing the tiny paper above."""
    (tmp_path / "papers").mkdir(exist_ok=True)
    (tmp_path / "papers" / "parity-aware-bpe.txt").write_text(PAPER_TEXT, encoding="utf-8")
    f = tmp_path / "f.toml"
    f.write_text(entries, encoding="utf-8")
    return pvh.figure_problems(f, tmp_path / "papers")


def _entry(key, paper, source="Table 2", extra=""):
    return (f'[parity_bpe.{key}]\nclaim="c"\nsource="{source}"\npaper={paper}\nunit="u"\nrule="below 9"\n'
            f'{SCALE}{extra}[parity_bpe.{key}.setting]\ndata="d"\n')


def test_figure_problems_finds_each_kind(tmp_path):
    good = (_entry("a", 2.43) + _entry("b", -0.045) + _entry("c", 1234) + _entry("d", -0.12, "§4.2")
            + _entry("e", '"not in the paper (§4.2 gives none)"') + _entry("f", '"< 1.01"')
            + _entry("g", 0.012, extra='derived_from = "Table 2: 2.43 and 1.01"\n'))
    assert _problems_of(tmp_path, good) == []
    bad = {"a": (_entry("bad_a", 2.4), "paper = 2.4 is not printed in parity-aware-bpe.txt"),
           "b": (_entry("bad_b", 0.046), "paper = 0.046 is not printed"),
           "c": (_entry("bad_c", '"not found in the text"'), "is written 'not in the paper'"),
           "d": (_entry("bad_d", '"< 1.02"'), "1.02 is not printed"),
           "e": (_entry("bad_e", 1.01, "Table 2, as quoted in notebook 05"), "is circular (notebook, as quoted)"),
           "f": (_entry("bad_f", 1.01, "the paper"), "names no section, table or figure"),
           "g": (_entry("bad_g", 0.5, extra='derived_from = "Table 2: 2.44 minus 1.01"\n'), "derived_from: 2.44"),
           "h": (_entry("bad_h", 0.5, extra='derived_from = "two cells"\n'), "names no table or section"),
           "i": (_entry("bad_i", 1.01).replace('[parity_bpe.bad_i.setting]\ndata="d"\n', 'setting="d"\n'),
                 "setting is a string"),
           # a circular source hides in any text of a claim, not only in its source
           "j": (_entry("bad_j", 1.01).replace('data="d"', 'data="the pool, as in issue 20"'),
                 "setting.data 'the pool, as in issue 20' is circular (issue)"),
           "k": (_entry("bad_k", 1.01).replace('unit="u"', 'unit="tokens (stored summary)"'),
                 "unit 'tokens (stored summary)' is circular (stored summary)"),
           "l": (_entry("bad_l", 0.5, extra='derived_from = "Table 2: 1.01, see the notebook"\n'),
                 "derived_from 'Table 2: 1.01, see the notebook' is circular (notebook)")}
    for key, (entry, message) in bad.items():
        problems = _problems_of(tmp_path, good + entry)
        assert len(problems) == 1 and problems[0].startswith(f"[parity_bpe.bad_{key}]") and message in problems[0], \
            (key, problems)


def test_every_figure_occurs_in_the_paper_it_cites(papers):
    """Every numeric figure not derived from other cells is printed in its paper; no source is
    circular; a figure not found says "not in the paper"; every setting is a table."""
    problems = pvh.figure_problems(folder=papers)
    assert problems == [], f"{len(problems)} problems in {pvh.FIGURES.name}:\n" + "\n".join(problems)


def test_the_occurrence_check_fails_when_one_figure_is_changed(papers, tmp_path):
    """One figure of the real file, moved by 0.137, is reported, and nothing else changes."""
    table = tomllib.loads(pvh.FIGURES.read_text(encoding="utf-8"))
    before = set(pvh.figure_problems(folder=papers))
    study, key, figure = next(
        (s, k, c["paper"]) for s in table for k, c in table[s].items()
        if isinstance(c["paper"], (int, float)) and "derived_from" not in c
        and pvh.occurs(c["paper"], pvh.paper_text(s, papers)))
    moved = round(figure + 0.137, 6)
    assert not pvh.occurs(moved, pvh.paper_text(study, papers))
    text = pvh.FIGURES.read_text(encoding="utf-8")
    start = text.index(f"[{study}.{key}]")
    line = re.compile(r"^paper\s*=.*$", re.M).search(text, start)
    copy = tmp_path / "paper_figures.toml"
    copy.write_text(text[:line.start()] + f"paper = {moved!r}" + text[line.end():], encoding="utf-8")
    after = set(pvh.figure_problems(copy, papers))
    assert after - before == {f"[{study}.{key}] paper = {moved!r} is not printed in {pvh.paper_of(study)[0]}"}
    assert before - after == set()


def test_a_missing_paper_is_a_data_error(tmp_path):
    with pytest.raises(DataError, match="parity-aware-bpe.txt: cannot read the paper's text"):
        pvh.paper_text("parity_bpe", tmp_path)


# ---- the reproduction report ---------------------------------------------------------------

def test_the_report_is_generated_from_the_saved_tables(tmp_path, monkeypatch):
    monkeypatch.setenv("MODTOK_REPORTS", str(tmp_path))
    monkeypatch.setattr(pvh, "off_scale", lambda: "")  # the full-size run the file describes: its scale kinds
    cs = pvh.claims("pretoken_floor")
    numeric = [c for c in cs if isinstance(c.paper, (int, float)) and c.rule.startswith("matches")]
    assert len(numeric) >= 2, "the test needs two 'matches' claims with a figure"
    holds, fails = numeric[0], numeric[1]
    here = {c.key: pvh.NotMeasured("needs Nepali") for c in cs}
    here[holds.key] = holds.paper
    here[fails.key] = fails.paper + 10
    pvh.table("pretoken_floor", here, {"data": "pool + FLORES"}, {fails.key: "measured: our floor is 12.3"})
    pvh.table("parity_bpe", _all_not_measured("parity_bpe"), "wordfreq")
    # an out-of-date table: written against a figure the file does not hold now
    path = tmp_path / "paper_vs_here" / "parity_bpe.json"
    record = json.loads(path.read_text(encoding="utf-8"))
    record["rows"][0]["paper"] = "123.456"
    path.write_text(json.dumps(record), encoding="utf-8")

    out = report.write(tmp_path)
    c = out.counts["pretoken-floor-nepali-repair.txt"]
    assert (c["claims"], c["holds"], c["does not hold"], c["not measured"]) == (len(cs), 1, 1, len(cs) - 2)
    assert c["no figure"] == sum(not isinstance(x.paper, (int, float)) for x in cs)
    assert out.counts["parity-aware-bpe.txt"]["not measured"] == len(pvh.claims("parity_bpe"))
    assert out.counts["modular-tokenizers.txt"]["claims"] == 0
    assert set(out.missing) == set(pvh.studies()) - {"pretoken_floor", "parity_bpe"}
    assert out.outdated == ["parity_bpe"]
    md = out.markdown.read_text(encoding="utf-8")
    page = out.html.read_text(encoding="utf-8")
    counts_line = next(line for line in md.splitlines() if line.startswith("| pretoken-floor-nepali-repair.txt | paper"))
    # both 'matches' claims are at the paper's scale; the not-measured ones spread over the scales
    at_paper = out.by_scale[("pretoken-floor-nepali-repair.txt", "paper")]
    assert counts_line.split(" | ")[2:7] == [str(at_paper["claims"]), "1", "1", "0", str(at_paper["claims"] - 2)]
    for text in (md, page):
        assert "measured: our floor is 12.3" in text and "07_pretoken_floor" in text
        assert f"{pvh.shown(holds.paper)} ({holds.source}" in text.replace("&#x27;", "'")
        assert "out of date: paper_figures.toml has other claims, figures, rules or scales now" in text
        assert text.count("missing") >= len(out.missing)
    assert record["time"] in md
    assert page.startswith("<!DOCTYPE html>") and "<table>" in page


def test_the_report_command_prints_the_counts(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("MODTOK_REPORTS", str(tmp_path))
    pvh.table("parity_bpe", _all_not_measured("parity_bpe"), "wordfreq")
    assert cli.main(["report", str(tmp_path)]) == 0
    printed = capsys.readouterr().out
    n = len(pvh.claims("parity_bpe"))
    assert f"parity-aware-bpe.txt: {n} claims\n" in printed  # no verdict count pooled over scales
    assert f"  at scale reduced: {n} claims: holds 0, does not hold 0, not comparable 0, not measured {n}" in printed
    assert (tmp_path / "reproduction.html").is_file() and "no table saved" in printed
    (tmp_path / "paper_vs_here" / "broken.json").write_text("{", encoding="utf-8")
    assert cli.main(["report", str(tmp_path)]) == 2
    assert "broken.json: not a saved paper-vs-here table" in capsys.readouterr().err


@pytest.mark.parametrize("study", pvh.studies())
def test_notebook_ends_with_its_generated_table(study):
    """The last code cell of notebooks 01-07 (before the collapsed "## Checks" section that ends
    each) builds the table from measured values."""
    path = ROOT / "notebooks" / f"{pvh.notebook_of(study)}.py"
    lesson = re.split(r"^# %% \[markdown\][^\n]*\n# ## Checks\b", path.read_text(encoding="utf-8"), flags=re.M)[0]
    cells = [c for c in re.split(r"^# %%.*$", lesson, flags=re.M) if c.strip()]
    code = [c for c in cells if any(line.strip() and not line.startswith("#") for line in c.splitlines())]
    assert f'paper_vs_here.table("{study}"' in code[-1], f"{path.name}: last code cell"


def test_every_study_is_declared_with_its_notebook():
    """The studies that declare themselves (the contract) are those with claims, each with its notebook."""
    declared = contract.declared()
    assert set(declared) == set(pvh.studies())
    assert all((ROOT / "notebooks" / f"{s.notebook}.py").is_file() for s in declared.values())
