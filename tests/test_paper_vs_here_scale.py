"""The "scale" column of every notebook's paper-vs-here table states this run's scale, not the
file's text for the full-size run on the pool (session 21's trial: "1,000,000 characters of
pool text per language" on one's own manifest at smoke size)."""

from __future__ import annotations

import json

import pytest

from modtok.studies import paper_vs_here as pvh
from modtok.ui import report


def table_of(study: str) -> tuple[list[pvh.Claim], list[dict]]:
    study_claims = pvh.claims(study)
    return study_claims, pvh.table(study, {c.key: pvh.NotMeasured("not run in this test") for c in study_claims},
                                   {"data": "a test", "size": "3 KB a language"})


@pytest.mark.parametrize("study", pvh.studies())
def test_on_ones_own_corpus_at_smoke_size_no_row_claims_the_files_sizes(study, tmp_path, monkeypatch):
    (tmp_path / "eng_Latn.txt").write_text("a line\n", encoding="utf-8")
    (tmp_path / "corpora.json").write_text('{"eng_Latn": ["%s"]}' % (tmp_path / "eng_Latn.txt"), encoding="utf-8")
    monkeypatch.setenv("MODTOK_SMOKE", "1")
    monkeypatch.setenv("MODTOK_MANIFEST", str(tmp_path / "corpora.json"))
    monkeypatch.setenv("MODTOK_EVAL", str(tmp_path))
    monkeypatch.delenv("MODTOK_REPORTS", raising=False)
    study_claims, rows = table_of(study)
    for c, row in zip(study_claims, rows):
        assert row["scale"] != c.scale  # the file's sizes are not this run's
        assert row["scale"].startswith(pvh.run_kind(c, pvh.off_scale()) + ", not at the size"), row["scale"]
        assert not row["scale"].startswith("paper")  # a smoke run on one's own text is not the paper's scale
        for why in ("MODTOK_SMOKE=1", "one's own manifest", "own evaluation text", "this run: size 3 KB a language"):
            assert why in row["scale"], (why, row["scale"])


def test_the_files_scale_is_kept_for_the_run_it_describes(monkeypatch, tmp_path):
    pool, flores = tmp_path / "pool", tmp_path / "flores"
    (flores / "devtest").mkdir(parents=True)
    (flores / "devtest" / "eng_Latn.devtest").write_text("a line\n", encoding="utf-8")
    pool.mkdir()
    (pool / "eng_Latn.txt").write_text("a line\n", encoding="utf-8")
    for var in ("MODTOK_SMOKE", "MODTOK_MANIFEST", "MODTOK_EVAL", "MODTOK_REPORTS"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("MODTOK_POOL", str(pool))
    monkeypatch.setenv("MODTOK_FLORES", str(flores))
    assert pvh.off_scale() == ""
    study_claims, rows = table_of("modular_tokenizers_lm")
    assert [r["scale"] for r in rows] == [c.scale for c in study_claims]
    monkeypatch.setenv("MODTOK_SMOKE", "1")  # the same data at smoke size: no longer the file's run
    assert pvh.off_scale() == "MODTOK_SMOKE=1 (smoke sizes)"


def test_a_saved_table_keeps_the_files_scale_for_the_report_and_the_runs_beside_it(tmp_path, monkeypatch):
    monkeypatch.setenv("MODTOK_SMOKE", "1")
    monkeypatch.setenv("MODTOK_REPORTS", str(tmp_path))
    study_claims, rows = table_of("parity_bpe")
    saved = json.loads((tmp_path / "paper_vs_here" / "parity_bpe.json").read_text(encoding="utf-8"))["rows"]
    # a verdict counts within its scale: at smoke size no row is counted at the paper's
    assert [r["scale kind"] for r in saved] == [pvh.run_kind(c, pvh.off_scale()) for c in study_claims]
    floor_claims, _ = table_of("pretoken_floor")  # a study with claims at the paper's scale
    floor = json.loads((tmp_path / "paper_vs_here" / "pretoken_floor.json").read_text(encoding="utf-8"))["rows"]
    assert "paper" in {pvh.scale_kind(c.scale) for c in floor_claims} and "paper" not in {r["scale kind"] for r in floor}
    assert [r["scale"] for r in saved] == [c.scale for c in study_claims]  # what modtok report checks against
    assert [r["scale here"] for r in saved] == [r["scale"] for r in rows] != [c.scale for c in study_claims]
    record = json.loads((tmp_path / "paper_vs_here" / "parity_bpe.json").read_text(encoding="utf-8"))
    assert "paper_figures.toml" not in report._status("parity_bpe", record)  # not "out of date" for its scale


def test_the_reproduction_page_shows_the_scale_the_run_had(tmp_path, monkeypatch):
    """modtok report's rows (headlines and per paper) show the saved run's scale, not the file's."""
    monkeypatch.setenv("MODTOK_SMOKE", "1")
    monkeypatch.setenv("MODTOK_REPORTS", str(tmp_path))
    study_claims, rows = table_of("parity_bpe")
    text = report.write(tmp_path).markdown.read_text(encoding="utf-8")
    assert rows[0]["scale"] in text and "MODTOK_SMOKE=1" in text
