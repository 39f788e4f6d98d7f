"""No number typed in a notebook's Markdown that the notebook computes (issue 41).

A number typed into prose goes stale the day the code or the data changes (04's 12 x 8 table
dated 2026-12-01 did); the notebooks print such sentences from the computed values instead (a
small function of the study returns the text). The paper's own figures may stay in prose, cited.

The rule, per Markdown cell, sentence by sentence (a bullet or a table row is a sentence too):

- *suspect* is a decimal (``3.389``), a number of three digits or more (``180,020``, ``300``),
  a percentage (``93%``) or a date (``2026-12-02``);
- it may stay when its sentence cites where the paper prints it: a Table, §, Fig., App., Eq. or
  Algorithm (the paper's figures, cited with their place);
- and these are not measurements: a year (``2025``, ``Petrov et al. 2023``), a number inside a
  name (``FLORES-200``, ``Qwen3-0.6B``, ``Samp_Full(0.5)``, ``U+0100``), code (`` `k=4000` ``,
  ``$p = 0.5$``, pseudocode blocks), 256 (the byte alphabet) and 95% (an interval's level).

What it cannot see: a small count written without a citation (``18 languages``) or a number
written out in words. Cells that another helper owns are listed in ``PENDING`` with the owner.
"""

from __future__ import annotations

import re

import pytest
from conftest import REPO
from test_notebooks_any_data import NOTEBOOKS, cells, split_at_checks

SUSPECT = re.compile(
    r"\d{4}-\d{2}-\d{2}"  # a date
    r"|(?<![\w.])(?<!\w\()(?<![A-Za-z0-9]-)(?<!U\+)"  # not inside a name: FLORES-200, Samp_Full(0.5), U+0100
    r"(?:\d+(?:\.\d+)?%|\d[\d,]*\.\d+|\d{1,3}(?:,\d{3})+|\d{3,})(?![\w-])"
)
CITED = re.compile(r"\b(?:Tables?|Figs?\.|Figure|App\.|Appendix|Eqs?\.|Algorithms?)\s*[\dA-Z]|§")
YEAR = re.compile(r"(?:19|20)\d\d")
CONSTANTS = {"256", "95%"}  # the byte alphabet and the intervals' level: definitions, not measurements
# Abbreviations that end with a dot inside a sentence (the split must not cut after them)
ABBREVIATIONS = ("Fig.", "Figs.", "App.", "Eq.", "Eqs.", "al.", "e.g.", "i.e.", "vs.", "cf.", "No.")
# Cells owned by another helper this round: notebook -> (heading of the section, owner)
PENDING: dict[str, tuple[str, str]] = {}


def prose(markdown: str) -> str:
    """A Markdown cell's text without its code: fenced or indented blocks, inline code, math.

    >>> prose("# Run `k = 4000` with $p = 0.5$:\\n#\\n#     V ← 300 bytes\\n# then 3.5 s")
    'Run  with :\\n\\n\\nthen 3.5 s'
    """
    lines, fenced = [], False
    for line in markdown.splitlines():
        text = line[2:] if line.startswith("# ") else line.lstrip("#")
        if text.startswith("```"):
            fenced = not fenced
            continue
        lines.append("" if fenced or text.startswith("    ") else text)
    return re.sub(r"`[^`]*`|\$[^$]*\$", "", "\n".join(lines))


def sentences(text: str) -> list[str]:
    """Sentences, bullets and table rows of prose (abbreviations such as "Fig." do not end one).

    >>> sentences("As in Fig. 2 it holds. Ours: 3.1; theirs 2.0.\\n- a bullet\\n| a | row |")
    ['As in Fig. 2 it holds.', 'Ours: 3.1;', 'theirs 2.0.', '- a bullet', '| a | row |']
    """
    out = []
    for block in re.split(r"\n(?=\s*(?:[-*] |\||#))|\n\s*\n", text):
        joined: list[str] = []
        for piece in re.split(r"(?<=;)\s+|(?<=[.!?])\s+(?![a-z0-9])", " ".join(block.split())):
            if joined and joined[-1].endswith(ABBREVIATIONS):
                joined[-1] += " " + piece
            elif piece:
                joined.append(piece)
        out += joined
    return out


def typed_numbers(markdown: str) -> list[str]:
    """The suspect numbers of one Markdown cell, each with its sentence, that no rule lets stay.

    >>> typed_numbers("# The paper's Table 2: 2.43 on Nepali. Here it stops at 44,736 tokens.")
    ['44,736: Here it stops at 44,736 tokens.']
    >>> typed_numbers("# Measured 2026-12-02 (FLORES-200, Samp_Full(0.5), 256 bytes, Petrov et al. 2023)")
    ['2026-12-02: Measured 2026-12-02 (FLORES-200, Samp_Full(0.5), 256 bytes, Petrov et al. 2023)']
    >>> typed_numbers("# Hybrid: −70% / −3.8%; classical (§5.1) 0.0586.")
    ['70%: Hybrid: −70% / −3.8%;', '3.8%: Hybrid: −70% / −3.8%;']
    """
    found = []
    for sentence in sentences(prose(markdown)):
        if CITED.search(sentence):
            continue
        for m in SUSPECT.finditer(sentence):
            number = m.group()
            if number in CONSTANTS or (YEAR.fullmatch(number) and "-" not in number):
                continue
            found.append(f"{number}: {sentence}")
    return found


def markdown_cells(path) -> list[tuple[int, str]]:
    """``[(index, body)]`` of a notebook's Markdown cells, without the cells ``PENDING`` names."""
    pending = PENDING.get(path.name)
    out, skipping = [], False
    for i, (header, body) in enumerate(cells(path.read_text(encoding="utf-8"))):
        if "[markdown]" not in header:
            continue
        heading = re.search(r"^# (#+ .*)$", body, re.M)
        if heading:
            skipping = bool(pending) and heading.group(1).startswith(pending[0])
        if not skipping:
            out.append((i, body))
    return out


@pytest.mark.parametrize("path", [*NOTEBOOKS, REPO / "notebooks" / "exercises.py", REPO / "notebooks" / "playground.py"],
                         ids=lambda p: p.name)
def test_no_computed_number_is_typed_in_markdown(path):
    typed = [f"{path.name}, cell {i}: {t}" for i, body in markdown_cells(path) for t in typed_numbers(body)]
    assert not typed, ("numbers typed in Markdown that are not the paper's (cited) — print them from the "
                       "computed values instead:\n" + "\n".join(typed))


def test_the_rule_finds_todays_typed_tables():
    """04's dated 12 x 8 table and 05's "Reading the table" (main before issue 41's prose items)."""
    table = "# ## Closing note\n#\n# Measured 2026-12-01 on the shared CPU:\n#\n# | Mono-only | Lang | 3.389 |\n"
    reading = ("# Reading the table. Under the reference rule base parity-aware BPE stops at **44,736\n"
               "# tokens**, a 93% lower Gini than classical BPE (0.0042 vs 0.0586).\n")
    assert [t.split(":")[0] for t in typed_numbers(table)] == ["2026-12-01", "3.389"]
    assert [t.split(":")[0] for t in typed_numbers(reading)] == ["44,736", "93%", "0.0042", "0.0586"]


# ---------------------------------------------------------------- the sentences the notebooks print instead


def test_05_reading_is_this_runs_table():
    """05's "Reading the table" (``ParityStudy.reading``) says each headline tokenizer's size, the
    base run's Gini and, when the text runs out before the size asked, the stop message."""
    from test_study_parity_bpe import VOCAB, _toy

    study = _toy()
    rows = study.table1(study.table1_extras(small=300))
    text = study.reading(rows)
    head = {r["tokenizer"]: r for r in rows if r["row"] == "headline"}
    assert all(f"{name} {r['tokens']:,}" in text for name, r in head.items())
    assert f"its Gini {head['parity (base)']['Gini ↓']:.4f}" in text and "reached the size asked" in text
    assert "extra: " not in text and "τ = 1, parity (base)" in text and f"Asked for {VOCAB:,} tokens" in text
    study.vocab = 2_000  # more than the toy's text allows: the run stops, and the reading says why
    stopped = study.reading(study.table1())
    assert f"stopped: {study.evaluate(study.named('parity (base)'))['stop']}" in stopped


def test_06_settings_table_cites_the_paper_and_shows_this_run():
    """06's settings table: every paper cell names its §, every "here" cell is this run's."""
    from test_study_adaptmix import WS, _toy_data

    from modtok.studies import adaptmix

    st = adaptmix.AdaptMixStudy(_toy_data(), seed=0, scheme=WS)
    rows = st.settings_rows("hf-bpe", 300, 9_000, 2, ((0.3, 0.5), (0.5, 1.0)))
    here = st.setting("hf-bpe", 300, 9_000, 2)
    assert [r["setting"] for r in rows][-1] == "(μ, ε)" and "(0.5, 1.0)" in rows[-1]["here"]
    assert all("§" in r["paper"] for r in rows if r["paper"] != "not stated") and len(rows) >= 6
    assert {r["setting"]: r["here"] for r in rows[:-1] if r["setting"] in here} == here
    assert "300 tokens, hf-bpe" in here["vocabulary"] and "T = 9,000" in here["size"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_every_notebook_says_what_came_from_the_results_cache(path):
    """Each notebook prints its study's ``cache_note()`` (issue 41) in its study part, not in the
    collapsed Checks: a reader sees which results were read back instead of computed."""
    lesson, _ = split_at_checks(path.read_text(encoding="utf-8"))
    notes = [body for header, body in lesson if "[markdown]" not in header
             and re.search(r"^print\(.*\bcache_note\(\)", body, re.M)]
    assert len(notes) == 1, f"{path.name}: {len(notes)} code cells print a cache_note() (one expected)"


def test_07_plan_prints_what_the_h_prose_names():
    """07 (h)'s prose names the settings (shares, K, rate, batch, held-out slice, piece size); the cell
    prints their values from the preset's ``Setup`` (``claims.cpt_plan``), and follows it when it changes."""
    import dataclasses

    from modtok.studies.pretoken_floor import claims
    from modtok.studies.pretoken_floor.cpt import preset

    setup, sizes = preset("cpu")
    plan = "\n".join(claims.cpt_plan(setup, sizes, "npi_Deva", "FLORES-200 devtest (/x)"))
    for said in ("75% npi_Deva, 25% English by bytes", "K = 2,000", "1e-3 peak", "5% warm-up", "4 x 512 ids",
                 "200 KB", "<= 2,000 B", "untied", "3 seeds", "FLORES-200 devtest secondary"):
        assert said in plan, said
    other = dataclasses.replace(setup, merges=123, cpt_target_share=0.6, lr=2e-4, batch_size=7, seeds=(0, 1))
    plan = "\n".join(claims.cpt_plan(other, sizes, "hin_Deva", ""))
    for said in ("60% hin_Deva, 40% English", "K = 123", "2e-4 peak", "7 x 512 ids", "2 seeds"):
        assert said in plan, said
