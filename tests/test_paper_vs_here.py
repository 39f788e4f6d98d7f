"""The "paper vs here" tables: rules, the data file, and that every notebook 02-07 ends with one."""

import re
import tomllib
from pathlib import Path

import pytest

from modtok.errors import ConfigError
from modtok.studies import paper_vs_here as pvh

ROOT = Path(__file__).resolve().parents[1]
STUDY_OF = {"01": "modular_tokenizers_inefficiency", "02": "modular_tokenizers_sequential",
            "03": "modular_tokenizers_unigram", "04": "modular_tokenizers_lm",
            "05": "parity_bpe", "06": "adaptmix", "07": "pretoken_floor"}


def _claim(rule, paper=-1.0):
    return pvh.Claim("s", "k", "c", "src", paper, "u", rule, "set")


@pytest.mark.parametrize("rule,here,expected", [
    ("below 0", -0.1, "holds"), ("below 0", 0.0, "does not hold"),
    ("at most 1.05", 1.05, "holds"), ("at most 1.05", 1.051, "does not hold"),
    ("above 2", 2.5, "holds"), ("at least 2", 1.9, "does not hold"),
    ("within 0.1", -0.95, "holds"), ("within 0.1", -0.8, "does not hold"),
    ("same sign", -3.0, "holds"), ("same sign", 0.5, "does not hold"), ("same sign", 0.0, "does not hold"),
])
def test_rules(rule, here, expected):
    assert _claim(rule).verdict(here) == expected


def test_every_claim_needs_a_value_and_no_extra(tmp_path):
    f = tmp_path / "f.toml"
    f.write_text('[s.a]\nclaim="x"\nsource="T1"\npaper=1.0\nunit="u"\nrule="below 2"\nsetting="p"\n'
                 '[s.b]\nclaim="y"\nsource="T2"\npaper="none"\nunit="u"\nrule="at least 0"\nsetting="p"\n')
    cs = pvh.claims("s", f)
    with pytest.raises(ConfigError, match="no measured value.*b"):
        pvh.rows_for(cs, {"a": 1.0}, "here")
    with pytest.raises(ConfigError, match="does not have: zz"):
        pvh.rows_for(cs, {"a": 1.0, "b": 1.0, "zz": 2.0}, "here")
    rows = pvh.rows_for(cs, {"a": 3.0, "b": pvh.NotMeasured("no parallel text")}, "here")
    assert [r["holds?"] for r in rows] == ["does not hold", "not measured: no parallel text"]


def test_bad_rule_and_missing_field_are_config_errors(tmp_path):
    f = tmp_path / "f.toml"
    f.write_text('[s.a]\nclaim="x"\nsource="T1"\npaper=1.0\nunit="u"\nrule="roughly 2"\nsetting="p"\n')
    with pytest.raises(ConfigError, match=r"\[s.a\].*rule 'roughly 2'"):
        pvh.claims("s", f)
    f.write_text('[s.a]\nclaim="x"\npaper=1.0\nunit="u"\nrule="below 2"\nsetting="p"\n')
    with pytest.raises(ConfigError, match="lacks source"):
        pvh.claims("s", f)
    with pytest.raises(ConfigError, match="no claims for study 'nope'"):
        pvh.claims("nope", f)


def test_the_figures_file_parses_for_every_study_that_has_claims():
    table = tomllib.loads(pvh.FIGURES.read_text(encoding="utf-8"))
    for study in table:
        for c in pvh.claims(study):
            assert c.source and c.setting and c.claim, c


@pytest.mark.parametrize("nb", sorted(STUDY_OF))
def test_notebook_ends_with_its_generated_table(nb):
    """The last code cell of notebooks 02-07 builds the table from measured values."""
    path = next((ROOT / "notebooks").glob(f"{nb}_*.py"))
    cells = [c for c in re.split(r"^# %%.*$", path.read_text(encoding="utf-8"), flags=re.M) if c.strip()]
    code = [c for c in cells if any(line.strip() and not line.startswith("#") for line in c.splitlines())]
    assert f'paper_vs_here.table("{STUDY_OF[nb]}"' in code[-1], f"{path.name}: last code cell"
