"""Verdicts that can fail (issue 42): every rule kind says "does not hold" on a value that
contradicts the paper, no claim's rule holds over the whole plausible range of its
measurement, a direction with an interval straddling zero does not hold, a paper figure
below its printing resolution is not comparable, and the page counts per paper and per scale."""

import re
import tomllib

import pytest

from modtok.errors import ConfigError
from modtok.studies import contract
from modtok.studies import paper_vs_here as pvh
from modtok.ui import report

# every claim of every claims file: the default one and any a declared study names
FILES = sorted({contract.FIGURES} | {s.figures for s in contract.declared().values()})
ALL = [c for f in FILES for s in pvh.studies(f) for c in pvh.claims(s, f)]


def _claim(rule, paper=2.19, **kw):
    return pvh.Claim("s", "k", "c", "Table 1", paper, "u", rule, {"data": "d"}, **kw)


# one case per rule kind: a value agreeing with the paper, and one contradicting it
@pytest.mark.parametrize("rule,paper,agrees,contradicts", [
    ("below 0", -0.5, -0.2, 0.3), ("above 0", 0.5, 0.2, -0.3),
    ("at most 1.05", 1.0, 1.05, 1.2), ("at least 4.2 (half the paper's excess)", 7.4, 4.5, 2.0),
    ("matches ±0.01 (printed precision 0.01)", 2.19, 2.1927, 2.3), ("same sign", -8.13, -2.0, 1.0),
])
def test_each_rule_kind_fails_on_a_value_that_contradicts_the_paper(rule, paper, agrees, contradicts):
    c = _claim(rule, paper)
    assert (c.verdict(agrees), c.verdict(contradicts)) == ("holds", "does not hold")


@pytest.mark.parametrize("rule,paper", [("below 0", -0.5), ("above 0", 0.5), ("same sign", 3.5), ("same sign", -3.5)])
def test_a_direction_with_an_interval_across_zero_does_not_hold(rule, paper):
    c = _claim(rule, paper)
    point = 0.1 if paper > 0 else -0.1
    assert c.verdict(point) == "holds"  # the point estimate alone is on the paper's side ...
    assert c.verdict(pvh.Measured(point, -0.2, 0.2, "seeds")) == "does not hold"  # ... its interval is not
    assert c.verdict(pvh.Measured(point, *sorted((point / 2, point * 2)), "seeds")) == "holds"
    row = pvh.rows_for([c], {"k": point}, "d")[0]
    assert row["interval"].startswith("point estimate") and "not tested against noise" in row["interval"]
    row = pvh.rows_for([c], {"k": pvh.Measured(point, -0.2, 0.2, "seeds")}, "d")[0]
    assert (row["holds?"], row["interval"], row["here"]) == ("does not hold", "[-0.2, 0.2] over seeds", pvh.shown(point))


def test_thresholds_need_the_whole_interval():
    at_most = _claim("at most 1.05", 1.0)
    assert at_most.verdict(pvh.Measured(1.0, 0.98, 1.04, "lines")) == "holds"
    assert at_most.verdict(pvh.Measured(1.0, 0.98, 1.07, "lines")) == "does not hold"


def test_a_wide_interval_no_longer_rescues_a_rule_whose_tolerance_is_the_papers():
    """The case that used to hold wrongly (on main "some of the interval within paper ± T"):
    a tolerance of the paper's printed precision, our point 0.06 away, a wide bootstrap interval
    over lines reaching the paper. The paper's tolerance compares our point value; our interval
    is shown but not scored, and cannot make a close point fail either."""
    match = _claim("matches ±0.01 (printed precision 0.01)", 2.19)
    assert match.verdict(pvh.Measured(2.25, 2.15, 2.35, "lines")) == "does not hold"
    assert match.verdict(pvh.Measured(2.195, 2.0, 2.4, "lines")) == "holds"
    row = pvh.rows_for([match], {"k": pvh.Measured(2.25, 2.15, 2.35, "lines")}, "d")[0]
    assert row["holds?"] == "does not hold" and row["here"] == "2.25"
    assert row["interval"] == "[2.15, 2.35] over lines (shown, not scored: the rule's tolerance is the paper's)"


# one plausible value per basis kind that the rule rejects, beside one it accepts
@pytest.mark.parametrize("rule,paper,agrees,contradicts", [
    ("matches ±0.01 (printed precision 0.01)", 2.19, pvh.Measured(2.195, 2.1, 2.3, "lines"),
     pvh.Measured(2.21, 2.15, 2.25, "lines")),
    ("matches ±0.05 (the paper's interval [0.95, 1.05])", 1.0, 1.04, 1.06),
    ("matches ±0.03 (the paper's spread: std across languages 0.03)", 1.0, 0.98, pvh.Measured(1.04, 0.99, 1.1, "lines")),
    ("matches ±1.21 (std across languages of the paper's seven per-language changes)", 0.3, -0.8, 1.6),
    ("matches ±0 (our interval over seeds)", 2.19, pvh.Measured(2.25, 2.18, 2.3, "seeds"),
     pvh.Measured(2.25, 2.2, 2.3, "seeds")),
    ("matches ±0.005 (our interval over lines, widened by half the printed step 0.01)", 1.0,
     pvh.Measured(1.01, 1.004, 1.02, "lines (percentile interval widened to its point)"),
     pvh.Measured(1.01, 1.006, 1.02, "lines")),
])
def test_each_tolerance_basis_fails_on_a_plausible_value(rule, paper, agrees, contradicts):
    c = _claim(rule, paper)
    assert (c.verdict(agrees), c.verdict(contradicts)) == ("holds", "does not hold")


def test_our_interval_basis_needs_an_interval_over_what_it_names():
    c = _claim("matches ±0 (our interval over seeds)", 2.19)
    assert pvh.tolerance(c.rule) == (0.0, "seeds")
    assert c.verdict(2.19) == ("not comparable: the rule compares with our interval over seeds, and this value is "
                               "a point estimate (no interval)")  # even the paper's own figure: no interval, no test
    assert c.verdict(pvh.Measured(2.19, 2.1, 2.3, "lines")).startswith("not comparable: the rule compares with our "
                                                                      "interval over seeds, and this value is over lines")
    row = pvh.rows_for([c], {"k": 2.19}, "d")[0]
    assert pvh.verdict_kind(row) == "not comparable" and row["reason"] == ""


@pytest.mark.parametrize("basis", ["our std across languages 0.01", "printed precision 0.01 of ours",
                                   "a guess", "our interval, roughly"])
def test_a_basis_that_is_neither_the_papers_nor_our_interval_over_something_is_refused(basis):
    with pytest.raises(ConfigError, match="basis"):
        _claim(f"matches ±0.01 ({basis})", 1.0)


def test_every_matches_rule_of_the_file_has_a_basis_of_the_papers():
    """Every "matches" rule of paper_figures.toml takes its tolerance from the paper (checked by
    hand against the cited tables, issue 42): none says "our interval", so each compares our
    point value, and each names the paper's figure it comes from."""
    matches = [c for c in ALL if c.rule.startswith("matches")]
    assert len(matches) >= 10
    for c in matches:
        tol, over = pvh.tolerance(c.rule)
        assert over is None and tol > 0, c.key
        assert re.search(r"Table|printed precision|the paper's", c.rule), c.key


def test_a_difference_within_the_printing_step_is_not_comparable():
    c = _claim("same sign", 0.53, printed_step=0.01, printed_difference=0.01)
    assert c.verdict(5.0) == c.verdict(-5.0) == ("not comparable: the paper's cells differ by 0.01, within their "
                                                 "printing step of 0.01: below the paper's printing resolution")
    assert _claim("same sign", 1.05, printed_step=0.01, printed_difference=0.02).verdict(-5.0) == "does not hold"
    row = pvh.rows_for([c], {"k": 5.0}, "d")[0]
    assert pvh.verdict_kind(row) == "not comparable" and row["reason"] == ""


def test_table5_rows_below_the_printing_resolution_are_not_comparable():
    """The Table 5 rows derive their printed difference from their two cells (derived_from), and
    exactly those within one step (0.01) are not comparable: Assamese, Bengali, Odia, the mean."""
    cs = {c.key: c for c in pvh.claims("adaptmix")}
    for key, c in cs.items():
        cells = re.search(r"AdaptMix (\d\.\d\d), UniMix (\d\.\d\d)", c.derived_from or "")
        if key.startswith("table5_") and cells:
            assert c.printed_difference == pytest.approx(abs(float(cells[1]) - float(cells[2]))), key
    blocked = sorted(k for k, c in cs.items() if c.not_comparable())
    assert blocked == ["table5_asm_Beng", "table5_ben_Beng", "table5_mean", "table5_ory_Orya"]


def test_not_comparable_is_its_own_verdict_and_still_a_not_measured_value():
    c = _claim("below 0", -0.5)
    value = pvh.NotComparable("one tokenizer under two names")
    assert isinstance(value, pvh.NotMeasured)  # a study's filter of unmeasured values skips it
    row = pvh.rows_for([c], {"k": value}, "d")[0]
    assert (row["holds?"], pvh.verdict_kind(row)) == ("not comparable: one tokenizer under two names", "not comparable")
    with pytest.raises(ConfigError, match="which is 'not comparable"):
        pvh.rows_for([c], {"k": value}, "d", {"k": "why"})


def test_measured_rejects_an_interval_without_its_value():
    with pytest.raises(ConfigError, match="must hold the value"):
        pvh.Measured(1.0, 1.1, 1.2, "seeds")
    with pytest.raises(ConfigError, match="say what the interval is over"):
        pvh.Measured(1.0, 0.9, 1.2, " ")
    assert float(pvh.Measured(1.0, 0.9, 1.2, "seeds")) == 1.0


@pytest.mark.parametrize("c", ALL, ids=[f"{c.study}.{c.key}" for c in ALL])
def test_no_rule_holds_for_every_plausible_value(c):
    """Sampled over the claim's plausible range (``range`` in paper_figures.toml, by unit: a
    ratio [0.2, 20], a relative change [-1, 1], ...), some value does not hold: a rule that
    holds everywhere tests nothing (and, with the paper's own figure among the values, some
    value holds: a rule that holds nowhere tests nothing either). A claim not comparable on
    the paper's side never holds."""
    lo, hi = c.range
    values = [lo + (hi - lo) * i / 400 for i in range(401)]
    values += [c.paper] if isinstance(c.paper, (int, float)) and lo <= c.paper <= hi else []
    over = pvh.tolerance(c.rule)[1] if c.rule.startswith("matches") else None
    if over:  # a rule on our interval is tested on values with a narrow interval over what it names
        values = [pvh.Measured(v, v - (hi - lo) / 1000, v + (hi - lo) / 1000, over) for v in values]
    verdicts = {c.verdict(v) for v in values}
    if c.not_comparable():
        assert verdicts == {f"not comparable: {c.not_comparable()}"}
    else:
        assert "does not hold" in verdicts and "holds" in verdicts, (c.rule, c.range)


def test_the_sampled_range_test_covers_every_claim_of_every_claims_file():
    """The test above is parametrized over ALL: it must hold every [study.key] table of every
    claims file (a claim it missed could hold for every value unseen)."""
    tables = {(study, key) for f in FILES for study, t in tomllib.loads(f.read_text(encoding="utf-8")).items()
              for key in t}
    assert {(c.study, c.key) for c in ALL} == tables and len(ALL) == len(tables) >= 70
    assert {s.name for s in contract.declared().values()} <= {c.study for c in ALL}


def test_every_claim_states_its_scale_and_each_paper_has_a_headline():
    for c in ALL:
        assert pvh.scale_kind(c.scale) in pvh.SCALES
    headlines = {pvh.paper_of(c.study)[0] for c in ALL if c.headline}
    assert headlines == set(pvh.papers())
    per_paper = {}
    for c in ALL:
        per_paper[pvh.paper_of(c.study)[0]] = per_paper.get(pvh.paper_of(c.study)[0], 0) + c.headline
    assert all(1 <= n <= 2 for n in per_paper.values()), per_paper
    # the paper's setting is the deployed tokenizers on FLORES: the pre-token floors
    assert {c.key for c in ALL if pvh.scale_kind(c.scale) == "paper"} >= {"llama3_floor", "qwen3_floor"}


def test_a_setting_is_never_a_claim_and_a_bad_scale_is_refused(tmp_path):
    assert "vocabulary" not in {c.key for c in pvh.claims("parity_bpe")}
    f = tmp_path / "f.toml"
    base = '[s.a]\nclaim="x"\nsource="Table 1"\npaper=1.0\nunit="u"\nrule="below 2"\nrange=[0, 5]\nsetting="p"\n'
    f.write_text(base + 'scale="reduced"\n')
    with pytest.raises(ConfigError, match="scale 'reduced' is not"):
        pvh.claims("s", f)
    f.write_text(base)
    with pytest.raises(ConfigError, match="lacks scale"):
        pvh.claims("s", f)
    f.write_text(base.replace('rule="below 2"', 'rule="matches ±0.1 (a guess)"') + 'scale="paper"\n')
    with pytest.raises(ConfigError, match="the basis naming where T comes from"):
        pvh.claims("s", f)


def _save(folder, study, here):
    cs = pvh.claims(study)
    pvh.save(study, pvh.rows_for(cs, here, {"data": "fixture"}), cs, {"data": "fixture"}, folder)


def test_the_page_counts_per_paper_and_per_scale(tmp_path):
    """A fixture folder of saved tables: pretoken_floor with its paper-scale claims at the
    paper's figures, one reduced claim failing, the rest not measured; adaptmix with one
    NotComparable. The counts per scale add up to the paper's, and the headline rows lead."""
    cs = pvh.claims("pretoken_floor")
    here = {c.key: pvh.NotMeasured("fixture") for c in cs}
    paper_scale = [c for c in cs if pvh.scale_kind(c.scale) == "paper"]
    for c in paper_scale:
        here[c.key] = c.paper
    here["r1_stalls"] = 1.3  # a headline that does not hold (the paper: 1.0046, at most 1.05)
    _save(tmp_path, "pretoken_floor", here)
    ac = pvh.claims("adaptmix")
    _save(tmp_path, "adaptmix", {c.key: pvh.NotComparable("one tokenizer") if c.key == "vs_natural"
                                 else pvh.NotMeasured("fixture") for c in ac})
    out = report.write(tmp_path)
    pf = "pretoken-floor-nepali-repair.txt"
    assert out.by_scale[pf, "paper"]["holds"] == len(paper_scale) == out.by_scale[pf, "paper"]["claims"]
    assert out.by_scale[pf, "reduced"]["does not hold"] == 1
    for kind in ("claims", *report.KINDS):
        assert sum(out.by_scale[pf, s][kind] for s in pvh.SCALES) == out.counts[pf][kind]
    assert out.counts["adaptmix-art-of-breaking-words.txt"]["not comparable"] == 1
    heads = {h["claim"]: h for h in out.headlines}
    stall = next(h for h in out.headlines if h["claim"] == next(c.claim for c in cs if c.key == "r1_stalls"))
    assert stall["verdict"] == "does not hold" and stall["reason"] == "reason not measured"
    assert len(heads) == sum(c.headline for c in cs + ac)
    md = out.markdown.read_text(encoding="utf-8")
    assert md.index("## Headline findings") < md.index("## Counts per paper and per scale") < md.index("## Notebooks")
    assert f"| {pf} | paper | {len(paper_scale)} | {len(paper_scale)} | 0 | 0 | 0 |" in md
    assert "at scale paper" in out.summary() and "headline (" in out.summary()


def test_parity_vs_deployed_is_a_difference_of_mean_parities_not_a_correlation():
    """Its quantity is AdaptMix's mean parity minus a deployed tokenizer's (each a ratio of
    fertilities, Table 7), which no bound of 1 holds: the paper's own AdaptMix minus LLaMA is
    about -4.6, and the study's hand case below -1.5. Its plausible range holds both."""
    from modtok.studies import adaptmix

    c = next(c for c in pvh.claims("adaptmix") if c.key == "parity_vs_deployed")
    llama = [5.9704, 5.8148, 7.0667, 1.9630, 10.2296, 2.1111, 11.8519, 2.8593, 2.6741, 11.7852, 5.8370, 3.5185,
             2.2148, 8.8074, 9.8519]  # Table 7, LLaMA's 15 non-English rows
    paper_diff = 1.3561 - sum(llama) / len(llama)
    out = adaptmix.parity_intervals({"a": {"en": [2, 2], "xx": [2, 2]}, "d": {"en": [2, 2], "xx": [6, 4]}},
                                    {"en": [2, 2], "xx": [2, 2]}, "en", ref="a")
    assert out["a-d|mean"][0] == pytest.approx(1.0 - 2.5)  # parity 1 against (10 / 4) / (4 / 4)
    for diff in (paper_diff, out["a-d|mean"][0]):
        assert c.range[0] <= diff <= c.range[1] and abs(diff) > 1
        assert c.verdict(diff) == "holds"
    assert c.verdict(0.3) == "does not hold"  # AdaptMix farther from parity than a deployed tokenizer
