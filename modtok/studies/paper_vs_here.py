"""The "paper vs here" table that ends notebooks 02-07: each claim, the paper's figure,
ours, what differs in the setting, and whether the claim holds here.

The papers' figures live in one data file, ``paper_figures.toml`` beside this module
(section, table and setting of each); a notebook passes only the numbers it measured,
so the table is generated, never typed in. A claim a notebook could not measure on the
data it has (no parallel text, no Nepali) is passed as :class:`NotMeasured` with the
reason, and the row says so.

>>> claim = Claim("demo", "gini", "parity lowers the Gini", "Paper, Table 1", -0.5,
...               "relative change", "below 0", "60 languages, 128k")
>>> claim.verdict(-0.2), claim.verdict(0.1)
('holds', 'does not hold')
>>> row = rows_for([claim], {"gini": -0.2}, "8 languages, 32k")[0]
>>> row["paper"], row["here"], row["holds?"]
('-0.5', '-0.2', 'holds')
>>> rows_for([claim], {"gini": NotMeasured("needs parallel text")}, "")[0]["holds?"]
'not measured: needs parallel text'
"""

from __future__ import annotations

import math
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from modtok.errors import ConfigError

FIGURES = Path(__file__).with_name("paper_figures.toml")
SETTING_FIELDS = ("data", "size", "vocabulary", "model", "lr", "iterations", "pretokenization", "heldout")
RULES = ("below", "above", "at most", "at least", "within", "same sign")


@dataclass(frozen=True)
class NotMeasured:
    """A claim this run could not measure, and why (shown in the table)."""

    reason: str


@dataclass(frozen=True)
class Claim:
    """One claim of one paper, read from ``paper_figures.toml``."""

    study: str
    key: str
    claim: str
    source: str
    paper: float | str
    unit: str
    rule: str
    setting: str | Mapping[str, str]  # a table of SETTING_FIELDS, or (older sections) a sentence

    def verdict(self, here: float) -> str:
        """'holds' or 'does not hold' for a measured value under this claim's rule."""
        name, _, arg = self.rule.rpartition(" ") if self.rule != "same sign" else ("same sign", "", "")
        if name == "same sign":
            if not isinstance(self.paper, (int, float)):
                raise ConfigError(f"{FIGURES}: [{self.study}.{self.key}] 'same sign' needs a numeric paper figure")
            ok = math.copysign(1, here) == math.copysign(1, self.paper) and here != 0
        else:
            x = float(arg)
            ok = {"below": here < x, "above": here > x, "at most": here <= x, "at least": here >= x,
                  "within": isinstance(self.paper, (int, float)) and abs(here - self.paper) <= x}[name]
        return "holds" if ok else "does not hold"


def _parse_rule(rule: str, where: str) -> None:
    if rule == "same sign":
        return
    name, _, arg = rule.rpartition(" ")
    try:
        float(arg)
    except ValueError:
        name = ""
    if name not in RULES:
        raise ConfigError(f"{where}: rule {rule!r} is not one of: below X, above X, at most X, "
                          "at least X, within X, same sign")


def claims(study: str, path: Path = FIGURES) -> list[Claim]:
    """The claims of one study, in file order."""
    try:
        table = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise ConfigError(f"{path}: cannot read the papers' figures ({e})") from None
    if study not in table:
        raise ConfigError(f"{path}: no claims for study {study!r} (studies: {', '.join(table) or 'none'})")
    out = []
    for key, c in table[study].items():
        where = f"{path}: [{study}.{key}]"
        missing = {"claim", "source", "paper", "unit", "rule", "setting"} - set(c)
        if missing:
            raise ConfigError(f"{where} lacks {', '.join(sorted(missing))}")
        _parse_rule(c["rule"], where)
        out.append(Claim(study, key, c["claim"], c["source"], c["paper"], c["unit"], c["rule"], c["setting"]))
    return out


def _fmt(value) -> str:
    """``0.0586`` as ``0.0586``, ``44736.0`` as ``44,736`` (not ``4.474e+04``)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if float(value).is_integer() and abs(value) >= 1000:
            return f"{int(value):,}"
        return f"{value:.4g}"
    return str(value)


def _setting(setting: str | Mapping[str, str]) -> str:
    """A setting as one line: a table as ``"k: v; ..."`` in :data:`SETTING_FIELDS` order.

    >>> _setting({"vocabulary": "128k", "data": "mC4"})
    'data: mC4; vocabulary: 128k'
    """
    if isinstance(setting, Mapping):
        return "; ".join(f"{k}: {setting[k]}" for k in SETTING_FIELDS if k in setting)
    return setting


def rows_for(study_claims: list[Claim], here: Mapping[str, float | NotMeasured], setting: str | Mapping[str, str],
             reasons: Mapping[str, str] | None = None) -> list[dict]:
    """One row per claim: every claim must get a value or a :class:`NotMeasured` (a claim
    silently left out would hide a disagreement), and no value may be for an unknown claim."""
    keys = {c.key for c in study_claims}
    unknown = set(here) - keys
    if unknown:
        raise ConfigError(f"measured values for claims that {FIGURES.name} does not have: {', '.join(sorted(unknown))}")
    missing = keys - set(here)
    if missing:
        raise ConfigError(f"no measured value (or NotMeasured) for: {', '.join(sorted(missing))}")
    rows = []
    for c in study_claims:
        value = here[c.key]
        if isinstance(value, NotMeasured):
            shown, verdict = "—", f"not measured: {value.reason}"
        else:
            value = float(value)
            shown, verdict = _fmt(value), c.verdict(value)
        reason = (reasons or {}).get(c.key, "reason not measured") if verdict == "does not hold" else ""
        rows.append({"claim": c.claim, "source": c.source, "unit": c.unit, "paper": _fmt(c.paper),
                     "here": shown, "rule": c.rule, "setting: paper": _setting(c.setting),
                     "setting: here": _setting(setting), "holds?": verdict, "why not": reason})
    return rows


def table(study: str, here: Mapping[str, float | NotMeasured], setting: str | Mapping[str, str],
          reasons: Mapping[str, str] | None = None) -> list[dict]:
    """The generated "paper vs here" rows of ``study`` (display with ``plots.table``);
    ``reasons``: ``{claim key: measured reason}`` for verdicts that do not hold."""
    return rows_for(claims(study), here, setting, reasons)
