"""The reproduction report: every notebook's "paper vs here" table on one page.

Under ``make demo`` each notebook's last cell saves its table as
``reports/paper_vs_here/<study>.json`` (:func:`modtok.studies.paper_vs_here.table` with
``$MODTOK_REPORTS`` set). :func:`write` reads those files, and only those, and writes
``reports/reproduction.md`` and ``reports/reproduction.html``. The page leads with each
paper's headline findings (``headline = true`` in ``paper_figures.toml``: from the paper's
abstract), each with its verdict and, where it does not hold or was not reproduced, the
measured reason; then the counts of claims that hold, do not hold, are not comparable and
were not measured, per paper and per scale (at the paper's setting, reduced, not reproduced
here), never pooled over scales; then every claim with the paper's figure and its
reference, ours with its interval, the rule, the scale, what differs in the setting, the
verdict and its reason. Nothing on the page is typed in. A study whose file is missing, was written against other
figures than ``paper_figures.toml`` holds now, or is older than its notebook's source, is
listed as such with the time it was written.

>>> import os, tempfile
>>> from modtok.studies import paper_vs_here as pvh
>>> folder = tempfile.mkdtemp()
>>> here = {c.key: pvh.NotMeasured("no parallel text") for c in pvh.claims("parity_bpe")}
>>> _ = pvh.save("parity_bpe", pvh.rows_for(pvh.claims("parity_bpe"), here, {"data": "demo"}),
...              pvh.claims("parity_bpe"), {"data": "demo"}, folder)
>>> out = write(folder)
>>> counts = out.counts["parity-aware-bpe.txt"]
>>> counts["not measured"] == counts["claims"] == len(here), counts["holds"]
(True, 0)
>>> out.by_scale[("parity-aware-bpe.txt", "reduced")]["not measured"] == len(here)
True
>>> "modular_tokenizers_lm" in out.missing
True
"""

from __future__ import annotations

import html
import json
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from modtok.atomic import write_text
from modtok.errors import ConfigError, DataError
from modtok.studies import contract
from modtok.studies import paper_vs_here as pvh
from modtok.ui.plots import table_html

KINDS = pvh.VERDICTS  # holds, does not hold, not comparable, not measured
NOTEBOOKS_DIR = Path(__file__).resolve().parents[2] / "notebooks"


@dataclass
class Study:
    """One study's saved table (``record`` is None when its JSON is missing), its status, and
    its notebook and paper (``(file, title)``) as the study declares them
    (:mod:`modtok.studies.contract`), else as its saved table records them."""

    name: str
    record: dict | None
    status: str
    notebook: str = ""
    paper: tuple[str, str] = ("", "")


@dataclass
class Reproduction:
    """What :func:`write` wrote and found."""

    markdown: Path
    html: Path
    counts: dict[str, Counter] = field(default_factory=dict)   # paper file -> claims, holds, ...
    by_scale: dict[tuple[str, str], Counter] = field(default_factory=dict)  # (paper, scale kind) -> ...
    headlines: list[dict] = field(default_factory=list)        # the headline rows, as on the page
    missing: list[str] = field(default_factory=list)           # studies without a saved table
    outdated: list[str] = field(default_factory=list)          # studies whose table is out of date

    def summary(self) -> str:
        """A few lines for the terminal: the pages, the counts per paper and scale, the headline
        rows, what is missing."""
        lines = [f"wrote {self.markdown} and {self.html}"]
        for paper, c in self.counts.items():  # verdicts are counted per scale only, never pooled over scales
            lines.append(f"{paper}: {c['claims']} claims")
            lines += [f"  at scale {scale}: {n['claims']} claims: " + ", ".join(f"{k} {n[k]}" for k in KINDS)
                      for (p, scale), n in self.by_scale.items() if p == paper and n["claims"]]
        for h in self.headlines:
            lines.append(f"headline ({h['paper']}): {h['claim']}: {h['verdict']}"
                         + (f" ({h['reason']})" if h["reason"] else ""))
        if self.missing:
            lines.append("no table saved (run its notebook under make demo): " + ", ".join(self.missing))
        if self.outdated:
            lines.append("out of date: " + ", ".join(self.outdated))
        return "\n".join(lines)


def _status(study: str, record: dict) -> str:
    """'up to date', or what makes the saved table older than the figures or the notebook."""
    try:
        now = [(c.key, pvh.shown(c.paper), c.rule, c.scale) for c in pvh.claims(study)]
    except ConfigError:
        return "out of date: the study is no longer in paper_figures.toml"
    if [(r["key"], r["paper"], r["rule"], r.get("scale")) for r in record["rows"]] != now:
        return "out of date: paper_figures.toml has other claims, figures, rules or scales now"
    source = NOTEBOOKS_DIR / f"{record.get('notebook', '')}.py"
    written = datetime.fromisoformat(record["time"])
    if record.get("notebook") and source.is_file() and \
            datetime.fromtimestamp(source.stat().st_mtime, timezone.utc) > written:
        return f"out of date: notebooks/{source.name} changed after it was written"
    return "up to date"


def gather(folder) -> list[Study]:
    """Every declared study (:func:`modtok.studies.contract.declared`, in notebook order),
    then any other study with a saved table, each with its record and status."""
    saved = {}
    for path in sorted((Path(folder) / "paper_vs_here").glob("*.json")):
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
            saved[record["study"]] = record
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise DataError(f"{path}: not a saved paper-vs-here table ({e})") from None
    known = contract.declared()
    out = []
    for name in [*known, *sorted(set(saved) - set(known))]:
        record = saved.get(name) or {}
        if name in known:
            notebook, paper = known[name].notebook, (known[name].paper.file, known[name].paper.title)
        else:
            notebook, paper = record.get("notebook", ""), (record.get("paper", ""), record.get("title", ""))
        out.append(Study(name, saved.get(name), _status(name, record) if record else "missing", notebook, paper))
    return out


def _counts(studies: list[Study]) -> tuple[dict[str, Counter], dict[tuple[str, str], Counter]]:
    """The verdicts counted per paper and per (paper, scale kind); no count pools scales
    in the second."""
    zero = {k: 0 for k in ("claims", *KINDS, "no figure")}
    out: dict[str, Counter] = {}
    by_scale: dict[tuple[str, str], Counter] = {}
    for s in studies:
        paper = s.paper[0]
        c = out.setdefault(paper, Counter(zero))
        for scale in pvh.SCALES:
            by_scale.setdefault((paper, scale), Counter(zero))
        for row in (s.record or {}).get("rows", []):
            for counter in (c, by_scale.setdefault((paper, _scale_kind(row)), Counter(zero))):
                counter["claims"] += 1
                counter[row["verdict"]] += 1
                counter["no figure"] += not row["numeric"]
    return out, by_scale


# The scale of a row saved before claims had one (its study is also listed as out of date).
UNSTATED = "not stated (saved before scales)"


def _scale_kind(row: dict) -> str:
    return row.get("scale kind", UNSTATED)


def _headlines(studies: list[Study]) -> list[dict]:
    """Each paper's headline claims (``headline = true``), with ours, the scale (which names
    what stands in the way of one not reproduced) and the verdict; where it does not hold, the
    measured reason (or "reason not measured")."""
    out = []
    for s in studies:
        for r in (s.record or {}).get("rows", []):
            if not r.get("headline"):
                continue
            out.append({"paper": s.paper[0], "claim": r["claim"],
                        "paper's figure (reference)": f"{r['paper']} ({r['source']})",
                        "here": r["here"], "interval": r.get("interval", ""), "rule": r["rule"],
                        "scale": r.get("scale here", r["scale"]), "verdict": r["holds?"], "reason": r["reason"]})
    return out


def _blocks(studies: list[Study], counts: dict[str, Counter], by_scale: dict[tuple[str, str], Counter],
            headlines: list[dict], folder: Path) -> list[tuple[str, object]]:
    """The page as ``(kind, content)`` blocks, rendered to Markdown and HTML alike."""
    now = datetime.now(timezone.utc).isoformat(timespec="seconds")
    blocks: list[tuple[str, object]] = [
        ("h1", "Reproduction: the papers' figures beside ours"),
        ("p", f"Generated by `modtok report` ({now}) from the tables the notebooks saved in "
              f"{folder / 'paper_vs_here'} (`make demo` saves them); nothing here is typed in. "
              "The papers' figures, rules and scales come from modtok/studies/paper_figures.toml. "
              "Scale: 'paper' is tested at the paper's setting (its tokenizers and evaluation text), "
              "'reduced' with the same method on smaller data, vocabulary or model (named), 'not reproduced' "
              "where something stands in the way (named); a verdict counts only within its scale."),
        ("h2", "Headline findings"),
        ("table", headlines) if headlines else ("p", "No headline claim has a saved table."),
        ("h2", "Counts per paper and per scale"),
        ("table", [{"paper": p, "scale": scale, "claims": c["claims"], **{k: c[k] for k in KINDS},
                    "no figure in the paper": c["no figure"]}
                   for (p, scale), c in by_scale.items() if c["claims"]]
         or [{"paper": p, "scale": "—", "claims": 0, **{k: 0 for k in KINDS}, "no figure in the paper": 0}
             for p in counts]),
        ("h2", "Notebooks"),
        ("table", [{"notebook": s.notebook, "study": s.name, "paper": s.paper[0],
                    "data": (s.record or {}).get("data", ""), "written (UTC)": (s.record or {}).get("time", "—"),
                    "status": s.status} for s in studies]),
    ]
    for paper, c in counts.items():
        title = next(s.paper[1] for s in studies if s.paper[0] == paper)
        rows = [{"notebook": s.notebook or s.name, "claim": r["claim"],
                 "paper (reference)": f"{r['paper']} ({r['source']})", "here": r["here"],
                 "interval": r.get("interval", ""), "unit": r["unit"], "rule": r["rule"], "scale": r.get("scale here", r["scale"]),
                 "verdict": r["holds?"], "reason": r["reason"], "setting differs": r["setting differs"]}
                for s in studies if s.record and s.paper[0] == paper for r in s.record["rows"]]
        per_scale = "; ".join(f"{scale}: " + ", ".join(f"{k} {n[k]}" for k in KINDS)
                              for (p, scale), n in by_scale.items() if p == paper and n["claims"])
        blocks += [("h2", f"{title} ({paper})"),
                   ("p", f"{c['claims']} claims saved" + (f"; per scale, {per_scale}." if per_scale else "."))]
        blocks.append(("table", rows) if rows else ("p", "No notebook of this paper has saved its table."))
    return blocks


def _md_cell(value) -> str:
    return str(value).replace("|", "\\|").replace("\n", " ")


def markdown(blocks) -> str:
    """The blocks as Markdown.

    >>> print(markdown([("h2", "A"), ("table", [{"x": "1|2"}])]))
    ## A
    <BLANKLINE>
    | x |
    |---|
    | 1\\|2 |
    <BLANKLINE>
    """
    out = []
    for kind, content in blocks:
        if kind == "table":
            cols = list(content[0]) if content else []
            out += ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
            out += ["| " + " | ".join(_md_cell(r[c]) for c in cols) + " |" for r in content]
        else:
            out.append({"h1": "# ", "h2": "## ", "p": ""}[kind] + content)
        out.append("")
    return "\n".join(out)


def html_page(blocks) -> str:
    """The blocks as one self-contained HTML page."""
    body = []
    for kind, content in blocks:
        body.append(table_html(content) if kind == "table" else f"<{kind}>{html.escape(content.replace('`', ''))}</{kind}>")
    style = ("body{font-family:sans-serif;margin:2em}table{border-collapse:collapse;margin-bottom:1.5em}"
             "td,th{border:1px solid #ccc;padding:4px 6px;text-align:left;vertical-align:top;font-size:90%}")
    return (f"<!DOCTYPE html>\n<html><head><meta charset='utf-8'><title>modtok reproduction</title>"
            f"<style>{style}</style></head><body>\n" + "\n".join(body) + "\n</body></html>\n")


def write(folder="reports") -> Reproduction:
    """Gather ``folder/paper_vs_here/*.json`` into ``folder/reproduction.md`` and ``.html``."""
    folder = Path(folder)
    studies = gather(folder)
    counts, by_scale = _counts(studies)
    headlines = _headlines(studies)
    blocks = _blocks(studies, counts, by_scale, headlines, folder)
    md, page = folder / "reproduction.md", folder / "reproduction.html"
    write_text(md, markdown(blocks))
    write_text(page, html_page(blocks))
    return Reproduction(md, page, counts, by_scale, headlines, [s.name for s in studies if s.status == "missing"],
                        [s.name for s in studies if s.status.startswith("out of date")])
