"""The "paper vs here" table that ends notebooks 01-07: each claim, the paper's figure,
ours, the paper's setting beside ours, the scale it was tested at, and whether the claim
holds here.

The papers' figures live in one data file, ``paper_figures.toml`` beside this module
(section or table, the figure, the rule, the scale, the paper's setting field by field); a
notebook passes only the numbers it measured and its own setting, so the table is
generated, never typed in. A value is a plain number (a point estimate) or a
:class:`Measured` with its interval (over seeds, lines, pieces). A claim a notebook could
not measure on the data it has (no parallel text, no Nepali) is passed as
:class:`NotMeasured` with the reason; one whose comparison means nothing in this run (one
tokenizer under many names) as :class:`NotComparable`. A claim that does not hold carries
the measured reason the notebook gives, or says "reason not measured".

A verdict is one of four: "holds", "does not hold", "not comparable: why" (our
:class:`NotComparable`, a paper figure below its printing resolution, a hypothesis of
ours that the paper does not state, or a rule on our interval over X given a value without
one), "not measured: why".

>>> claim = Claim("demo", "gini", "parity lowers the Gini", "Paper, Table 1", -0.5,
...               "relative change", "below 0", {"data": "60 languages", "vocabulary": "128k"})
>>> claim.verdict(-0.2), claim.verdict(0.1)
('holds', 'does not hold')
>>> claim.verdict(Measured(-0.2, -0.3, -0.1, "seeds")), claim.verdict(Measured(-0.2, -0.4, 0.05, "seeds"))
('holds', 'does not hold')
>>> row = rows_for([claim], {"gini": -0.2}, {"data": "8 languages", "vocabulary": "128k"})[0]
>>> row["paper"], row["here"], row["holds?"], row["interval"], row["setting differs"]
('-0.5', '-0.2', 'holds', 'point estimate (no interval): the direction is not tested against noise', 'data: paper 60 languages / here 8 languages')
>>> row = rows_for([claim], {"gini": 0.1}, {"data": "60 languages"}, {"gini": "8 languages only"})[0]
>>> row["holds?"], row["reason"], row["setting differs"]
('does not hold', '8 languages only', 'vocabulary: paper 128k / here not stated')
>>> rows_for([claim], {"gini": NotMeasured("needs parallel text")}, "")[0]["holds?"]
'not measured: needs parallel text'
>>> rows_for([claim], {"gini": NotComparable("one tokenizer under two names")}, "")[0]["holds?"]
'not comparable: one tokenizer under two names'

The same file is checked against the papers' full texts (``../shared/papers``, or
``$MODTOK_PAPERS``): every numeric figure that is not ``derived_from`` other cells must
be printed in the paper it cites (:func:`occurs`, :func:`figure_problems`).

With ``$MODTOK_REPORTS`` set (``make demo`` sets it to ``reports/``), :func:`table`
also saves its rows as ``$MODTOK_REPORTS/paper_vs_here/<study>.json``, which
``modtok report`` gathers into one reproduction page.
"""

from __future__ import annotations

import math
import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from decimal import Decimal
from functools import lru_cache
from pathlib import Path

import numpy as np

from modtok.atomic import write_json
from modtok.errors import ConfigError, DataError
from modtok.studies import contract
from modtok.studies.contract import FIGURES
from modtok.evaluation.stats import paired_bootstrap
from modtok.text import data, eval_sets

# Rule kinds (the grammar is in paper_figures.toml's header):
#   "below X", "above X", "at most X", "at least X"  a threshold; with an interval, all of it
#                                                     must lie on the rule's side
#   "matches ±T (basis)"                              our value within the paper's figure ± T,
#                                                     T from the one place its basis names:
#     - a basis of the paper's ("printed precision", "the paper's interval", "the paper's spread",
#       "std across languages" of the paper's cells): |our point value - paper| <= T. Our interval,
#       if any, is shown but never widens T: a wide interval over lines must not rescue a value
#       the paper's precision rules out (an earlier rule did: "some of the interval within ± T").
#     - "our interval over X" (X: seeds, lines, pieces, ...): paper within [lo - T, hi + T] of a
#       Measured over X (T: what the paper's printing adds, 0 for none). A plain number, or an
#       interval over something else, is "not comparable" with the reason, not a ConfigError: which
#       values come with an interval is known only at run time (over_lines gives point estimates
#       on text that is not parallel), so it cannot be checked when the file is read.
#   "same sign"                                       the paper's sign; with an interval, all of it
THRESHOLDS = {"below": lambda v, x: v < x, "above": lambda v, x: v > x,
              "at most": lambda v, x: v <= x + EPS, "at least": lambda v, x: v >= x - EPS}
# Float rounding allowance of "at most", "at least" and "matches" (2.2 - 2.19 is 0.0100000000000002).
EPS = 1e-9
# "matches ±T (basis)": T and the basis of the tolerance, which must name where it comes from.
# A threshold may end with a note too: "at least 4.2 (half the paper's effect)".
_NOTE = re.compile(r"\s*\((?:[^()]|\([^()]*\))*\)$")
_MATCHES = re.compile(r"matches ±(?P<tol>\d+(?:\.\d+)?) \((?P<basis>[^()]*(?:\([^()]*\)[^()]*)*)\)")
PAPER_BASES = ("printed precision", "the paper's interval", "the paper's spread", "std across languages")
OUR_INTERVAL = re.compile(r"our interval over (?P<over>[\w-]+)")  # at the start of the basis
SCALES = ("paper", "reduced", "not reproduced")
SETTING_FIELDS = ("data", "size", "vocabulary", "model", "lr", "iterations", "pretokenization", "heldout")
NOT_IN_PAPER = "not in the paper"
REQUIRED = ("claim", "source", "paper", "unit", "rule", "scale", "range", "setting")
OPTIONAL = ("derived_from", "headline", "printed_step", "printed_difference", "hypothesis")

@dataclass(frozen=True)
class NotMeasured:
    """A claim this run could not measure, and why (shown in the table)."""

    reason: str


@dataclass(frozen=True)
class NotComparable(NotMeasured):
    """A claim this run measured but cannot compare with the paper, and why (one tokenizer
    under several names: AdaptMix and UniMix are the same model). A :class:`NotMeasured`
    too, so that a study's filter of the values it has no number for skips it as well;
    its verdict is "not comparable: <reason>"."""


@dataclass(frozen=True)
class Measured:
    """A measured value with its interval ``lo <= value <= hi`` and what the interval is
    over ("seeds", "lines", "pieces"). ``float(m)`` is the value, so code written for
    plain numbers keeps working.

    >>> m = Measured(0.8, 0.7, 0.95, "lines"); float(m), m.shown()
    (0.8, '[0.7, 0.95] over lines')
    >>> Measured(0.8, 0.9, 1.0, "seeds")
    Traceback (most recent call last):
    ...
    modtok.errors.ConfigError: Measured(0.8, [0.9, 1.0] over seeds): the interval must hold the value (lo <= value <= hi)
    """

    value: float
    lo: float
    hi: float
    over: str

    def __post_init__(self):
        what = f"Measured({self.value}, [{self.lo}, {self.hi}] over {self.over})"
        if not all(isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)
                   for x in (self.value, self.lo, self.hi)):
            raise ConfigError(f"{what}: value and interval must be finite numbers")
        if not self.lo <= self.value <= self.hi:
            raise ConfigError(f"{what}: the interval must hold the value (lo <= value <= hi)")
        if not str(self.over).strip():
            raise ConfigError(f"{what}: say what the interval is over (seeds, lines, pieces)")

    def __float__(self) -> float:
        return float(self.value)

    def shown(self) -> str:
        return f"[{shown(self.lo)}, {shown(self.hi)}] over {self.over}"


def measured(value: float, lo: float, hi: float, over: str) -> Measured:
    """A bootstrap's ``(value, lo, hi)`` as a :class:`Measured`; a percentile interval that
    misses its point (a skewed statistic: a maximum over languages, few lines) is widened to
    it, and ``over`` says so.

    >>> measured(1.0, 1.1, 1.3, "lines")
    Measured(value=1.0, lo=1.0, hi=1.3, over='lines (percentile interval widened to its point)')
    """
    if lo <= value <= hi:
        return Measured(value, lo, hi, over)
    return Measured(value, min(lo, value), max(hi, value), f"{over} (percentile interval widened to its point)")


def over_lines(columns: Mapping[str, object], statistic, n_boot: int = 1000,
               seed: int = 0) -> dict[str, Measured | float]:
    """``statistic(totals)`` (``{name: value}``) of per-line ``columns`` (token counts, bytes,
    nats of each evaluation line: ``totals[c]`` is column ``c``'s sum over the lines) with its
    interval over lines: :func:`~modtok.evaluation.stats.paired_bootstrap` draws lines, and
    line ``i`` of *every* column is drawn together (on parallel text one sentence in every
    language), so a difference or a Gini across languages and tokenizers sees the same lines
    throughout. A replicate's totals are the lines' draw counts times the columns (one matrix
    product: no copy of every column per replicate). Columns of different lengths (text that
    is not parallel) have no common line to draw: the point estimates alone, floats.

    Worked example: under "a" two lines cost 1 and 3 tokens, under "b" 1 and 1; a replicate
    draws the lines {1, 1}, {1, 2} or {2, 2}, so a / b is 1, 2 or 3 (as in
    :mod:`modtok.evaluation.stats`):

    >>> over_lines({"a": [1, 3], "b": [1, 1]}, lambda t: {"a/b": t["a"] / t["b"]}, n_boot=2000, seed=1)
    {'a/b': Measured(value=2.0, lo=1.0, hi=3.0, over='lines')}
    >>> over_lines({"a": [1, 3], "b": [1]}, lambda t: {"a/b": t["a"] / t["b"]})      # not aligned: points
    {'a/b': 4.0}
    """
    names = list(columns)
    arrays = [np.asarray(columns[c], np.float64) for c in names]
    if len({a.shape for a in arrays}) != 1:
        return {k: float(v) for k, v in statistic({c: float(a.sum()) for c, a in zip(names, arrays)}).items()}
    cols = np.stack(arrays, axis=1)  # (lines, columns)
    n = cols.shape[0]

    def stat(s):
        drawn = s["line"].astype(np.int64)
        times = np.ones(n) if drawn.ndim == 1 else np.stack([np.bincount(r, minlength=n) for r in drawn])
        tot = times @ cols  # (..., columns): each column's total over the drawn lines
        return statistic({c: tot[..., j] for j, c in enumerate(names)})

    res = paired_bootstrap({"line": np.arange(n)}, stat, n_boot=n_boot, seed=seed)
    return {k: measured(*v, "lines") for k, v in res.items()}


def _interval(value: float | Measured) -> tuple[float, float, float]:
    """``(value, lo, hi)``: a plain number is its own interval."""
    if isinstance(value, Measured):
        return float(value.value), float(value.lo), float(value.hi)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ConfigError(f"a measured value is a finite number or a Measured, not {value!r}")
    return float(value), float(value), float(value)


def setting_of(value, where: str) -> dict[str, str]:
    """A setting as ``{field: text}`` over :data:`SETTING_FIELDS`, in that order.

    A plain string (the older form) is read as the data field; numbers are
    written as the table writes them.

    >>> setting_of({"vocabulary": 32000, "data": "pool"}, "here")
    {'data': 'pool', 'vocabulary': '32,000'}
    >>> setting_of("FLORES-200 devtest", "here")
    {'data': 'FLORES-200 devtest'}
    """
    if isinstance(value, str):
        return {"data": value} if value else {}
    if not isinstance(value, Mapping):
        raise ConfigError(f"{where}: a setting is a table of {', '.join(SETTING_FIELDS)}, not {value!r}")
    unknown = set(value) - set(SETTING_FIELDS)
    if unknown:
        raise ConfigError(f"{where}: setting fields {', '.join(sorted(unknown))} are not among "
                          f"{', '.join(SETTING_FIELDS)}")
    out = {}
    for name in SETTING_FIELDS:
        if name in value:
            v = value[name]
            if isinstance(v, bool) or not isinstance(v, (str, int, float)):
                raise ConfigError(f"{where}: setting {name} = {v!r} is not text or a number")
            out[name] = v if isinstance(v, str) else shown(v)
    return out


@dataclass(frozen=True)
class Claim:
    """One claim of one paper, read from ``paper_figures.toml``.

    ``scale``: where it was tested, "paper", "reduced: <what is smaller>" or "not reproduced:
    <what stands in the way>"; ``range``: the plausible values of our measurement (the tests
    check that no rule holds over all of it); ``printed_step``/``printed_difference``: the
    printing step of the paper's cells and their difference, for a figure derived from two
    printed cells (a difference within one step is below the printing resolution: not
    comparable); ``hypothesis``: a hypothesis of ours the paper does not state (shown, never
    scored as the paper's)."""

    study: str
    key: str
    claim: str
    source: str
    paper: float | str
    unit: str
    rule: str
    setting: Mapping[str, str] = field(default_factory=dict)
    derived_from: str | None = None
    scale: str = "reduced: not stated (a Claim built in code; claims() reads every scale from the file)"
    range: tuple[float, float] = (-math.inf, math.inf)
    headline: bool = False
    printed_step: float | None = None
    printed_difference: float | None = None
    hypothesis: bool = False

    def __post_init__(self):
        where = f"[{self.study}.{self.key}]"
        object.__setattr__(self, "setting", setting_of(self.setting, where))
        _parse_rule(self.rule, self.paper, where)
        scale_kind(self.scale, where)
        if (self.printed_step is None) != (self.printed_difference is None):
            raise ConfigError(f"{where}: printed_step and printed_difference come together")

    @property
    def direction_only(self) -> bool:
        """Whether the rule tests only a direction: "same sign", or a threshold at the
        no-effect line (0 for a change or difference, 1 for a ratio)."""
        name, arg = threshold(self.rule)
        return self.rule == "same sign" or (name in THRESHOLDS and arg in (0.0, 1.0))

    def not_comparable(self) -> str | None:
        """Why the paper's side cannot be compared at all (whatever we measure), or None."""
        if self.hypothesis:
            return "a hypothesis of ours, not a claim of the paper (shown, not scored)"
        if self.printed_difference is not None and abs(self.printed_difference) <= self.printed_step + EPS:
            return (f"the paper's cells differ by {shown(abs(self.printed_difference))}, within their printing "
                    f"step of {shown(self.printed_step)}: below the paper's printing resolution")
        return None

    def verdict(self, here: float | Measured) -> str:
        """'holds', 'does not hold' or 'not comparable: why' for a measured value (a number, or a
        :class:`Measured`: then the whole interval must be on the rule's side; for "matches",
        the interval its basis names, :func:`tolerance`).

        >>> c = Claim("s", "k", "c", "Table 1", 2.19, "ratio", "matches ±0.01 (printed precision 0.01)")
        >>> c.verdict(2.2), c.verdict(2.21), c.verdict(Measured(2.21, 2.17, 2.25, "lines"))
        ('holds', 'does not hold', 'does not hold')
        >>> c = Claim("s", "k", "c", "Table 1", 2.19, "ratio", "matches ±0 (our interval over lines)")
        >>> c.verdict(Measured(2.21, 2.17, 2.25, "lines")), c.verdict(Measured(2.25, 2.21, 2.3, "lines"))
        ('holds', 'does not hold')
        >>> c.verdict(2.19)
        'not comparable: the rule compares with our interval over lines, and this value is a point estimate (no interval)'
        """
        why = self.not_comparable()
        if why:
            return f"not comparable: {why}"
        value, lo, hi = _interval(here)
        if self.rule == "same sign":
            side = math.copysign(1, self.paper)
            ok = (lo > 0 and value > 0) if side > 0 else (hi < 0 and value < 0)
        elif self.rule.startswith("matches"):
            tol, over = tolerance(self.rule)
            if over is None:  # the paper's tolerance: our point value, whatever our interval
                ok = abs(value - self.paper) <= tol + EPS
            elif not isinstance(here, Measured) or here.over.split()[0] != over:
                ours = f"over {here.over}" if isinstance(here, Measured) else "a point estimate (no interval)"
                return f"not comparable: the rule compares with our interval over {over}, and this value is {ours}"
            else:  # our interval, widened by T, holds the paper's figure
                ok = lo - tol - EPS <= self.paper <= hi + tol + EPS
        else:
            name, x = threshold(self.rule)
            ok = all(THRESHOLDS[name](v, x) for v in (value, lo, hi))
        return "holds" if ok else "does not hold"


def tolerance(rule: str) -> tuple[float, str | None]:
    """``(T, X)`` of a "matches ±T (basis)" rule: X is what our interval must be over for a
    basis "our interval over X", None for a basis of the paper's (then our point value is
    compared with paper ± T).

    >>> tolerance("matches ±0.01 (printed precision 0.01)"), tolerance("matches ±0.005 (our interval over seeds)")
    ((0.01, None), (0.005, 'seeds'))
    """
    m = _MATCHES.fullmatch(rule)
    ours = OUR_INTERVAL.match(m["basis"])
    return float(m["tol"]), (ours["over"] if ours else None)


def scale_kind(scale: str, where: str = "") -> str:
    """The kind of a scale: "paper", "reduced" or "not reproduced"; the last two must
    name what is smaller or what stands in the way.

    >>> scale_kind("reduced: 8k tokens per language, not 24k"), scale_kind("paper")
    ('reduced', 'paper')
    """
    kind, _, what = str(scale).partition(":")
    if kind not in SCALES or (kind != "paper" and not what.strip()):
        raise ConfigError(f"{where}: scale {scale!r} is not 'paper', 'reduced: <what is smaller>' or "
                          "'not reproduced: <what stands in the way>'")
    return kind


def threshold(rule: str) -> tuple[str, float]:
    """``(kind, X)`` of a threshold rule, its note aside; ``("", nan)`` for any other rule.

    >>> threshold("at least 4.2 (half the paper's effect)"), threshold("same sign")[0]
    (('at least', 4.2), '')
    """
    name, _, arg = _NOTE.sub("", rule).rpartition(" ")
    try:
        return (name, float(arg)) if name in THRESHOLDS else ("", math.nan)
    except ValueError:
        return "", math.nan


def _parse_rule(rule: str, paper, where: str) -> None:
    numeric = isinstance(paper, (int, float)) and not isinstance(paper, bool)
    if rule in ("same sign",) or rule.startswith("matches"):
        if not numeric or (rule == "same sign" and paper == 0):
            raise ConfigError(f"{where}: rule {rule!r} needs a numeric, non-zero paper figure")
        if rule == "same sign":
            return
        m = _MATCHES.fullmatch(rule)
        if not m or not (OUR_INTERVAL.match(m["basis"]) or any(b in m["basis"] for b in PAPER_BASES)):
            raise ConfigError(f"{where}: rule {rule!r} is not 'matches ±T (basis)', the basis naming where T "
                              f"comes from: 'our interval over X' or one of the paper's: {', '.join(PAPER_BASES)}")
        if not OUR_INTERVAL.match(m["basis"]) and re.search(r"\bours?\b", m["basis"]):
            raise ConfigError(f"{where}: rule {rule!r}: a basis of ours starts 'our interval over X' (the verdict "
                              "then uses that interval); any other basis is the paper's")
        return
    if threshold(rule)[0] not in THRESHOLDS:
        raise ConfigError(f"{where}: rule {rule!r} is not one of: below X, above X, at most X, "
                          "at least X, matches ±T (basis), same sign")


def _load(path: Path) -> dict:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise ConfigError(f"{path}: cannot read the papers' figures ({e})") from None


def studies(path: Path = FIGURES) -> list[str]:
    """The studies that have claims, in file order."""
    return list(_load(path))


def _number(c: Mapping, name: str, where: str) -> float | None:
    v = c.get(name)
    if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float)) or v < 0):
        raise ConfigError(f"{where}: {name} = {v!r} is not a number >= 0")
    return v


def claims(study: str, path: Path | None = None) -> list[Claim]:
    """The claims of one study, in file order, from ``path`` (default: the claims file the
    study declares, :attr:`modtok.studies.contract.Study.figures`; :data:`FIGURES` for one
    not declared yet)."""
    path = path or (contract.REGISTRY[study].figures if study in contract.REGISTRY else FIGURES)
    table = _load(path)
    if study not in table:
        raise ConfigError(f"{path}: no claims for study {study!r} (studies: {', '.join(table) or 'none'})")
    out = []
    for key, c in table[study].items():
        where = f"{path}: [{study}.{key}]"
        missing = set(REQUIRED) - set(c)
        if missing:
            raise ConfigError(f"{where} lacks {', '.join(sorted(missing))}")
        extra = set(c) - set(REQUIRED) - set(OPTIONAL)
        if extra:
            raise ConfigError(f"{where} has unknown fields {', '.join(sorted(extra))}")
        derived = c.get("derived_from")
        if isinstance(derived, list) and derived and all(isinstance(x, str) for x in derived):
            derived = "; ".join(derived)  # one note per printed cell, joined as the table shows them
        if derived is not None and not isinstance(derived, str):
            raise ConfigError(f"{where}: derived_from names the printed cells, as text (or a list of texts)")
        lo_hi = c["range"]
        if not (isinstance(lo_hi, list) and len(lo_hi) == 2 and all(isinstance(x, (int, float)) for x in lo_hi)
                and lo_hi[0] < lo_hi[1]):
            raise ConfigError(f"{where}: range = {lo_hi!r} is not [lowest, highest] plausible value")
        step, diff = _number(c, "printed_step", where), _number(c, "printed_difference", where)
        flags = {name: c.get(name, False) for name in ("headline", "hypothesis")}
        if any(not isinstance(v, bool) for v in flags.values()):
            raise ConfigError(f"{where}: headline and hypothesis are true or false")
        out.append(Claim(study, key, c["claim"], c["source"], c["paper"], c["unit"], c["rule"],
                         setting_of(c["setting"], where), derived, c["scale"], tuple(lo_hi), flags["headline"],
                         step, diff, flags["hypothesis"]))
    return out


def shown(value) -> str:
    """A figure as the table shows it: ``0.0586`` as ``0.0586``, ``44736.0`` as ``44,736`` (not ``4.474e+04``)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if float(value).is_integer() and abs(value) >= 1000:
            return f"{int(value):,}"
        return f"{value:.4g}"
    return str(value)


# A parenthesis that only cites the paper ("(§3.4)", "(§5.1, Table 2)"): not a part of the setting.
_CITATION = re.compile(r"\s*\(\s*(?:(?:§|Tables?\s|Figs?\.|Figures?\s|App\.|Appendix\s|Alg\.|Eqs?\.|Sec\.)[^();,]*"
                       r"(?:[;,]\s*|(?=\))))+\)")


# A paper's setting field that says the text does not give it.
_UNSTATED = re.compile(r"\s*not (?:in the text|in the paper|named|stated|given)\b", re.I)


def _same(a: str, b: str) -> bool:
    """Whether two settings say the same, case, spacing and citations of the paper aside.

    >>> _same("20 iterations, from uniform (§3.4)", "20  Iterations, from uniform"), _same("128k (§5.1)", "32k")
    (True, False)
    >>> _same("16 languages (§3.1, Table 5)", "16 languages"), _same("16 (Table 5; 4 dropped)", "16")
    (True, False)
    >>> _same("FLORES-200 devtest, 1012 lines (§3.1)", "FLORES-200 devtest, 1,012 lines"), _same("1,2", "12")
    (True, False)
    """
    def norm(text: str) -> str:  # thousands separators aside too: "1,012 lines" is "1012 lines"
        return " ".join(re.sub(r"(?<=\d),(?=\d{3}(?!\d))", "", _CITATION.sub("", text)).casefold().split())
    return norm(a) == norm(b)


def setting_differences(paper: Mapping[str, str], here: Mapping[str, str]) -> list[str]:
    """Every field the paper's setting states where ours says otherwise, or nothing
    (compared as text, case, spacing and a parenthesis that only cites the paper aside:
    "32k" and "32,000" count as different, so a difference is never hidden). Fields
    only ours states are not the claim's.

    A field the paper's text does not give ("not in the text ...", "not named ...") is
    not a setting of the paper's, so ours cannot differ from it (the row still shows both).

    >>> setting_differences({"vocabulary": "128k", "lr": "1e-4"}, {"vocabulary": "32k", "model": "6M"})
    ['vocabulary: paper 128k / here 32k', 'lr: paper 1e-4 / here not stated']
    >>> setting_differences({"size": "not in the text (§5.1)", "heldout": "Not named in the text"}, {"size": "3 MB"})
    []
    """
    return [f"{name}: paper {paper[name]} / here {here.get(name, 'not stated')}"
            for name in SETTING_FIELDS if name in paper and not _UNSTATED.match(paper[name])
            and not _same(paper[name], here.get(name, ""))]


def _joined(setting: Mapping[str, str]) -> str:
    return "; ".join(f"{k}: {v}" for k, v in setting.items())


def interval_text(c: Claim, value: float | Measured | NotMeasured) -> str:
    """What a row says of our value's uncertainty: its interval, or that it is a point
    estimate (and, under a rule that tests only a direction, that the direction is then not
    tested against noise).

    >>> c = Claim("s", "k", "c", "Table 1", -0.5, "change", "below 0")
    >>> interval_text(c, Measured(-0.2, -0.3, -0.1, "seeds")), interval_text(c, NotMeasured("x"))
    ('[-0.3, -0.1] over seeds', '—')
    """
    if isinstance(value, NotMeasured):
        return "—"
    if isinstance(value, Measured):
        if c.rule.startswith("matches") and tolerance(c.rule)[1] is None:
            return f"{value.shown()} (shown, not scored: the rule's tolerance is the paper's)"
        return value.shown()
    return "point estimate (no interval)" + (": the direction is not tested against noise" if c.direction_only else "")


def off_scale() -> str:
    """``""`` when this run is the one the file's ``scale`` texts describe (full size on the
    shared pool, evaluated on FLORES-200), else how it differs, in words: their sizes ("1,000,000
    characters of pool text per language", "600 steps") are not this run's then: under
    ``MODTOK_SMOKE=1`` on one's own manifest and evaluation text it is
    ``"MODTOK_SMOKE=1 (smoke sizes); training text: one's own manifest; evaluation text: own
    evaluation text"`` (session 21's trial: every notebook's table said "1,000,000 characters
    of pool text per language" there)."""
    out = ["MODTOK_SMOKE=1 (smoke sizes)"] if data.is_smoke() else []
    source = data.training_source()
    if source != "pool":
        out.append("training text: " + ("one's own manifest" if source == "manifest" else "the wordfreq default"))
    evals = eval_sets.eval_set()
    if evals is None or evals.kind != "FLORES-200":
        out.append("evaluation text: " + (evals.kind if evals is not None else "not FLORES-200"))
    return "; ".join(out)


SCALE_FIELDS = ("size", "vocabulary", "model", "iterations")  # the fields of a setting that say its scale


def scale_here(c: Claim, off: str, ours: Mapping[str, str]) -> str:
    """The scale column of ``c``'s row: the file's text when this run is the one it describes
    (``off`` empty, :func:`off_scale`), else its kind, how this run differs and this run's
    scale, from ``ours`` (the notebook's own setting, measured: its :data:`SCALE_FIELDS`),
    never the file's sizes.

    >>> c = Claim("s", "k", "c", "Table 1", 2.0, "ratio", "above 1", scale="reduced: 8k tokens on 1,000,000 characters")
    >>> scale_here(c, "", {})
    'reduced: 8k tokens on 1,000,000 characters'
    >>> print(scale_here(c, "MODTOK_SMOKE=1 (smoke sizes)", {"size": "40,000 characters a language", "data": "x"}))
    reduced, not at the size this table's file describes (MODTOK_SMOKE=1 (smoke sizes)); this run: size 40,000 characters a language
    """
    if not off:
        return c.scale
    run = "; ".join(f"{k} {ours[k]}" for k in SCALE_FIELDS if ours.get(k)) or "its size not stated by the notebook"
    return f"{run_kind(c, off)}, not at the size this table's file describes ({off}); this run: {run}"


def run_kind(c: Claim, off: str) -> str:
    """The scale kind of ``c``'s row in this run: the file's, except that a claim the file
    tests at the paper's scale is "reduced" in a run off the file's size (``off``,
    :func:`off_scale`): a verdict counts only within its scale (the reproduction page counts
    per scale kind), and a smoke run is not the paper's setting.

    >>> c = Claim("s", "k", "c", "Table 1", 2.0, "ratio", "above 1", scale="paper")
    >>> run_kind(c, ""), run_kind(c, "MODTOK_SMOKE=1 (smoke sizes)")
    ('paper', 'reduced')
    """
    kind = scale_kind(c.scale)
    return "reduced" if off and kind == "paper" else kind


def rows_for(study_claims: list[Claim], here: Mapping[str, float | Measured | NotMeasured], setting,
             reasons: Mapping[str, str] | None = None, off: str = "") -> list[dict]:
    """One row per claim: every claim must get a value (a number, a :class:`Measured`) or a
    :class:`NotMeasured` / :class:`NotComparable` (a claim silently left out would hide a
    disagreement), and no value may be for an unknown claim. ``setting`` is ours (a mapping
    over :data:`SETTING_FIELDS`, or a string for the data); ``reasons`` gives the measured
    reason of each claim that does not hold here; ``off``: how this run differs from the one
    the file's scales describe (:func:`off_scale`, :func:`scale_here`)."""
    keys = {c.key for c in study_claims}
    reasons = dict(reasons or {})
    for what, given in (("measured values", here), ("reasons", reasons)):
        unknown = set(given) - keys
        if unknown:
            raise ConfigError(f"{what} for claims that {FIGURES.name} does not have: {', '.join(sorted(unknown))}")
    missing = keys - set(here)
    if missing:
        raise ConfigError(f"no measured value (or NotMeasured) for: {', '.join(sorted(missing))}")
    ours = setting_of(setting, "our setting")
    rows = []
    for c in study_claims:
        value, reason = here[c.key], ""
        if isinstance(value, NotComparable):
            ours_text, verdict = "—", f"not comparable: {value.reason}"
        elif isinstance(value, NotMeasured):
            ours_text, verdict = "—", f"not measured: {value.reason}"
        else:
            ours_text, verdict = shown(_interval(value)[0]), c.verdict(value)
        if c.key in reasons:
            if verdict != "does not hold" or not str(reasons[c.key]).strip():
                raise ConfigError(f"a reason is given for [{c.study}.{c.key}], which is '{verdict}' here: "
                                  "reasons are for claims that do not hold")
            reason = str(reasons[c.key])
        elif verdict == "does not hold":
            reason = "reason not measured"
        source = c.source + (f"; derived from {c.derived_from}" if c.derived_from else "")
        rows.append({"claim": c.claim, "source": source, "unit": c.unit, "paper": shown(c.paper),
                     "here": ours_text, "interval": interval_text(c, value), "rule": c.rule,
                     "scale": scale_here(c, off, ours),
                     "holds?": verdict, "reason": reason,
                     "setting: paper": _joined(c.setting),
                     "setting: here": _joined({k: ours.get(k, "not stated") for k in c.setting}),
                     "setting differs": "; ".join(setting_differences(c.setting, ours)) or "none"})
    return rows


def _numeric(figure) -> bool:
    return isinstance(figure, (int, float)) and not isinstance(figure, bool)


VERDICTS = ("holds", "does not hold", "not comparable", "not measured")


def verdict_kind(row: Mapping[str, str]) -> str:
    """A row's verdict as one of :data:`VERDICTS`.

    >>> verdict_kind({"holds?": "not comparable: one tokenizer"}), verdict_kind({"holds?": "holds"})
    ('not comparable', 'holds')
    """
    return next(k for k in VERDICTS if row["holds?"] == k or row["holds?"].startswith(k + ":"))


def paper_of(study: str) -> tuple[str, str]:
    """``(file in the papers' folder, short title)`` of the paper a study reproduces, as the
    study declares it (:mod:`modtok.studies.contract`).

    >>> paper_of("modular_tokenizers_lm")[0]
    'modular-tokenizers.txt'
    """
    paper = contract.study(study).paper
    return paper.file, paper.title


def papers() -> dict[str, str]:
    """``{file: title}`` of every paper a declared study reproduces, in notebook order."""
    return {s.paper.file: s.paper.title for s in contract.declared().values()}


def notebook_of(study: str) -> str:
    """The notebook whose last cell builds ``study``'s table, as the study declares it.

    >>> notebook_of("parity_bpe")
    '05_parity_bpe'
    """
    return contract.study(study).notebook


def save(study: str, rows: list[dict], study_claims: list[Claim], setting, folder: Path, off: str = "") -> Path:
    """Write ``folder/paper_vs_here/<study>.json``: the rows (each with its claim key, its
    verdict kind, its scale kind, whether it is a headline claim and whether the paper prints
    a figure for it), the paper, our setting and its data label, and the time (UTC). A row's
    ``scale`` is saved as the file states it (what ``modtok report`` checks a saved table
    against, :mod:`modtok.ui.report`), and ``scale here`` is the column the notebook showed
    (:func:`scale_here`: this run's scale where it is not the file's); its ``scale kind`` is this
    run's (:func:`run_kind`, ``off`` from :func:`off_scale`)."""
    ours = setting_of(setting, "our setting")
    file, title = paper_of(study)
    record = {"study": study, "notebook": notebook_of(study), "paper": file, "title": title,
              "data": ours.get("data", ""), "setting": ours,
              "time": datetime.now(timezone.utc).isoformat(timespec="seconds"),
              "rows": [{"key": c.key, "verdict": verdict_kind(r), "scale kind": run_kind(c, off),
                        "headline": c.headline, "numeric": _numeric(c.paper), **r, "scale": c.scale,
                        "scale here": r["scale"]}
                       for c, r in zip(study_claims, rows)]}
    return write_json(Path(folder) / "paper_vs_here" / f"{study}.json", record, indent=1)


def table(study: str, here: Mapping[str, float | Measured | NotMeasured], setting,
          reasons: Mapping[str, str] | None = None) -> list[dict]:
    """The generated "paper vs here" rows of ``study`` (display with ``plots.table``), their
    scale that of this run (:func:`off_scale`: the file's text only at the size it describes);
    saved for the reproduction report when ``$MODTOK_REPORTS`` names a folder."""
    study_claims = claims(study)
    off = off_scale()
    rows = rows_for(study_claims, here, setting, reasons, off)
    if os.environ.get("MODTOK_REPORTS"):
        save(study, rows, study_claims, setting, Path(os.environ["MODTOK_REPORTS"]), off)
    return rows


# ---- the figures against the papers' texts ------------------------------------------------

def papers_dir() -> Path:
    """``$MODTOK_PAPERS``, else ``../shared/papers`` beside the repository."""
    return Path(os.environ.get("MODTOK_PAPERS") or Path(__file__).resolve().parents[3] / "shared" / "papers")


def paper_text(study: str, folder: Path | None = None) -> str:
    """The full text of the paper ``study`` cites."""
    path = Path(folder or papers_dir()) / paper_of(study)[0]
    try:
        return path.read_text(encoding="utf-8")
    except OSError as e:
        raise DataError(f"{path}: cannot read the paper's text ({e.strerror}; set MODTOK_PAPERS)") from None


# A number as papers print it: "1,234", "0.5", ".5", "−0.045", "+0.004", "35%", "35\%", "24k".
# A sign right after a digit is a range's dash ("0.21-0.27"). A number glued to a letter still
# counts: the texts (from arXiv HTML) glue math to words ("the floor is2.19for Llama-3").
_NUMBER = re.compile(r"(?<![\d.,])(?P<sign>[-−+]?)(?<![\d])(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)"
                     r"(?![\d]|[.,]\d)(?P<pct>\s?%)?(?P<mult>[kMB](?![A-Za-z]))?")
_SCALE = {"k": Decimal(1000), "M": Decimal(10) ** 6, "B": Decimal(10) ** 9}


def _plain(text: str) -> str:
    """Markdown/LaTeX escapes undone (``\\.``, ``\\-``, ``\\%``, ``{,}``), and math that the
    arXiv HTML renders twice, once as text and once as TeX, written once.

    >>> _plain(r"the floor is2\\.192\\.19for Llama; K=32,000K\\{=\\}32\\{,\\}000; −0.045−0.045")
    'the floor is2.19for Llama; K=32,000K{=}32,000; −0.045'
    """
    text = re.sub(r"\\([-.,%\[\]{}()_+=])", r"\1", text).replace("{,}", ",")
    return re.sub(r"(?<![\d.,])([-−+]?\d+(?:[.,]\d+)+)\1(?!\d)", r"\1", text)


@lru_cache(maxsize=16)
def printed_values(text: str) -> frozenset[Decimal]:
    """Every value ``text`` prints, read as the paper writes it: a percentage also as
    its fraction, "24k" also as 24000, and an unsigned number also as its negative
    (a paper says "lowers the Gini by 0.045" where a table holds -0.045; a minus
    sign, though, is never read as plus), after :func:`_plain`.

    >>> values = printed_values("gains +0.004 to 1,234 (35%), .5 and 24k; 0.21-0.27")
    >>> sorted(v for v in values if v > 0)
    [Decimal('0.004'), Decimal('0.21'), Decimal('0.27'), Decimal('0.35'), Decimal('0.5'), Decimal('24'), Decimal('35'), Decimal('1234'), Decimal('24000')]
    >>> Decimal("-0.27") in values, Decimal("-0.004") in values, Decimal("2") in values
    (True, False, False)
    """
    text = _plain(text)
    out = set()
    for m in _NUMBER.finditer(text):
        base = Decimal(m["num"].replace(",", ""))
        readings = {base}
        if m["pct"]:
            readings.add(base / 100)
        if m["mult"]:
            readings.add(base * _SCALE[m["mult"]])
        for v in readings:
            if m["sign"] in ("-", "−"):
                out.add(-v)
            elif m["sign"] == "+":
                out.add(v)
            else:
                out.update((v, -v))
    return frozenset(out)


def occurs(figure: float | int, text: str) -> bool:
    """Whether ``text`` prints ``figure`` at the figure's own precision (trailing zeros
    aside: 3.3 is 3.30; but 2.2 is not 2.19, a figure rounded away from the paper's).

    >>> occurs(0.5, "a gain of .5 points"), occurs(1234, "1,234 lines"), occurs(3.3, "τ = 3.30")
    (True, True, True)
    >>> occurs(0.35, "removes 35% of"), occurs(35, "removes 35\\\\% of"), occurs(24000, "24k tokens")
    (True, True, True)
    >>> occurs(-0.045, "Gini −0.045"), occurs(-0.045, "down by 0.045"), occurs(0.045, "Gini −0.045")
    (True, True, False)
    >>> occurs(2.2, "a floor of 2.19"), occurs(1.01, "11.01 and 1.012")
    (False, False)
    """
    return Decimal(repr(figure)) in printed_values(text)


def numbers_in(text: str) -> list[Decimal]:
    """The numbers written in a piece of the file (a string figure, a derived-from note),
    as printed, in order.

    >>> numbers_in("< 1.04 (gap < 4%), Table 2")
    [Decimal('1.04'), Decimal('4'), Decimal('2')]
    """
    text = _plain(text)
    return [Decimal(m["num"].replace(",", "")).copy_negate() if m["sign"] in ("-", "−")
            else Decimal(m["num"].replace(",", "")) for m in _NUMBER.finditer(text)]


# Sources that point back at this project instead of at the paper.
CIRCULAR = ("notebook", "issue", "stored summary", "stored material", "as quoted", "this project")
# Words of a figure that says it was not found; such a figure is written "not in the paper ...".
NOT_FOUND = re.compile(r"not found|stored material|unknown|not given|not stated|no figure", re.I)
# A source names a place in the paper.
PLACE = re.compile(r"§|\b(?:Tables?|TABLES?|Tabs?\.|Figs?\.|Figures?|App\.|Appendix|Alg\.|Algorithms?|Eqs?\.|"
                   r"Equations?|Sec\.|Sections?|Prop\.|Propositions?|Definitions?|Theorems?|Lemmas?)\s*[\dA-Z]|"
                   r"(?i:abstract)")


def _texts(c: Claim) -> list[tuple[str, str]]:
    """Every text a claim carries, named by its field: a circular source may hide in any."""
    texts = [("source", c.source), ("claim", c.claim), ("unit", c.unit), ("derived_from", c.derived_from or "")]
    texts += [("paper", c.paper)] if isinstance(c.paper, str) else []
    return [(name, text) for name, text in texts + [(f"setting.{k}", v) for k, v in c.setting.items()] if text]


def figure_problems(path: Path = FIGURES, folder: Path | None = None) -> list[str]:
    """What in ``path`` the papers' texts do not bear out, one line each (empty: all good):

    - a numeric figure without ``derived_from`` that its paper does not print (:func:`occurs`);
    - a number in a string figure or a ``derived_from`` note that the paper does not print;
    - a figure saying it was not found that is not written "not in the paper ...";
    - a source, or any other text of a claim (its claim, unit, figure, derived_from
      note, setting), that is circular (:data:`CIRCULAR`); a source that names no place in the paper
      (:data:`PLACE`: a section, table, figure, appendix, algorithm, equation,
      proposition, ... or the abstract);
    - a setting that is a plain string rather than a table of :data:`SETTING_FIELDS`.
    """
    problems = []
    for study, entries in _load(path).items():
        text = paper_text(study, folder)
        file = paper_of(study)[0]
        for c in claims(study, path):
            at = f"[{study}.{c.key}]"
            if _numeric(c.paper):
                if c.derived_from is None and not occurs(c.paper, text):
                    problems.append(f"{at} paper = {c.paper!r} is not printed in {file}")
            else:
                if NOT_FOUND.search(c.paper) and not c.paper.startswith(NOT_IN_PAPER):
                    problems.append(f"{at} paper = {c.paper!r}: a figure not found is written {NOT_IN_PAPER!r}")
                if not c.paper.startswith(NOT_IN_PAPER):
                    problems += [f"{at} paper = {c.paper!r}: {n} is not printed in {file}"
                                 for n in numbers_in(c.paper) if n not in printed_values(text)]
            if c.derived_from is not None:
                if not PLACE.search(c.derived_from):
                    problems.append(f"{at} derived_from {c.derived_from!r} names no table or section")
                else:
                    problems += [f"{at} derived_from: {n} is not printed in {file}"
                                 for n in numbers_in(c.derived_from) if n not in printed_values(text)]
            problems += [f"{at} {name} {text!r} is circular ({', '.join(words)})"
                         for name, text in _texts(c) if (words := [w for w in CIRCULAR if w in text.casefold()])]
            if not PLACE.search(c.source):
                problems.append(f"{at} source {c.source!r} names no section, table or figure of the paper")
            if isinstance(entries[c.key]["setting"], str):
                problems.append(f"{at} setting is a string; write [{study}.{c.key}.setting] with fields of "
                                f"{', '.join(SETTING_FIELDS)}")
    return problems
