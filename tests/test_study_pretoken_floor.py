"""Notebook 07's harness (modtok.studies.pretoken_floor.floor, cross_script.pool_table,
data.extra_text_path, the plots it draws with): hand-derived costs on a bytes-only
llama3-regex BPE, the floor as a lower bound, R2's floor below R1's, English ids that
do not move (and a check that can see them move)."""

from __future__ import annotations

import pytest

from modtok.adapt import extend
from modtok.bpe.export import to_tokenizer_json
from modtok.bpe.model import BPEModel
from modtok.errors import UnknownLanguageError
from modtok.evaluation import audit
from modtok.studies.pretoken_floor import cross_script, floor
from modtok.text import data
from modtok.ui import plots

NEPALI = ["नेपालको सरकार", "नेपाल सरकार नेपालको", "सरकारको नेपाल", "हामीसँग नेपाल छ"] * 4
ENGLISH = ["Nepal's government", "Nepal government Nepal's", "the government of Nepal", "we have Nepal"] * 4
KS = [0, 10, 40]


@pytest.fixture(scope="module")
def base():
    """A llama3-regex byte-level BPE whose tokens hold every Devanagari character
    of NEPALI whole (e0 a4 -> 256, e0 a5 -> 257, then 256/257 + the last byte), as
    a deployed base does: learned merges then join whole characters (§V filter)."""
    chars = sorted({c.encode() for c in "".join(NEPALI) if 0x0900 <= ord(c) <= 0x097F})
    merges = [(0xE0, 0xA4), (0xE0, 0xA5)] + [(256 + (c[1] == 0xA5), c[2]) for c in chars]
    return extend.Base(to_tokenizer_json(BPEModel(merges, scheme="llama3")))


@pytest.fixture(scope="module")
def sweep(base):
    return floor.k_sweep({"bytes": base}, NEPALI, KS, NEPALI, ENGLISH)


def test_cost_by_hand():
    tok = extend.Base(to_tokenizer_json(BPEModel([], scheme="llama3"))).tokenizer  # bytes only
    ne, en = ["नमस्ते"], ["Hi there"]  # 18 bytes in 3 pre-tokens; 8 bytes in 2 pre-tokens
    assert floor.cost(tok, ne, en) == 18 / 8 == audit.premium_ci(tok, ne, en, n_boot=10)[0]
    assert floor.cost(tok, ne, en, floor=True) == 3 / 8
    assert floor.cost(tok, ne) == 18 / 6 and floor.cost(tok, ne, floor=True) == 3 / 6  # per character


def test_sweep_rows_floors_and_curves(sweep, base):
    assert [(r["base"], r["arm"], r["K"]) for r in sweep.rows] == [("bytes", a, k) for a in floor.ARMS for k in KS]
    start = {arm: sweep.of("bytes", arm)[0] for arm in floor.ARMS}
    for r in start.values():  # K = 0 is the base itself (R2 only re-cuts the pre-tokens)
        assert r["merges kept"] == 0 and r["cost"] == floor.cost(base.tokenizer, NEPALI, ENGLISH)
    for r in sweep.rows:
        assert r["cost"] >= r["floor"] - 1e-12, r
        assert r["merges kept"] == len(sweep.extensions["bytes", r["arm"], r["K"]].merges)
    assert start["R2"]["floor"] < start["R1"]["floor"]  # the repair lowers the floor
    r1, r2 = sweep.of("bytes", "R1"), sweep.of("bytes", "R2")
    assert r1[-1]["cost"] == r1[0]["floor"] < r1[0]["cost"]  # every word repeats: R1 merges down to its floor
    assert r2[-1]["cost"] < r1[0]["floor"]  # and R2 goes below it
    curves = sweep.curves()
    assert list(curves) == ["bytes R1", "bytes R1 floor", "bytes R2", "bytes R2 floor"]
    assert curves["bytes R2"] == (KS, [r["cost"] for r in r2])


def test_moved_ids_sees_what_it_should(sweep, base):
    assert floor.moved_ids({"bytes": base}, sweep.tokenizers, ENGLISH) == []
    # unfiltered merges learned on English do move English ids: the check can fail
    counts = extend.count_words(base, ENGLISH, base.regex)
    leaky = extend.extend(base, counts, 5, keep=False).tokenizer()
    assert floor.moved_ids({"bytes": base}, {("bytes", "R1", 5): leaky}, ENGLISH) == [("bytes", "R1", 5)]


def test_segment_and_its_panel_view(sweep):
    tok = sweep.tokenizers["bytes", "R2", KS[-1]]
    seg = floor.segment(tok, NEPALI[0])
    assert b"".join(seg["pieces"]) == NEPALI[0].encode() and seg["tokens"] == len(seg["pieces"])
    assert seg["tokens"] == len(tok.encode(NEPALI[0], add_special_tokens=False).ids) < len(NEPALI[0].encode())
    row = floor.segmenter(sweep.tokenizers, NEPALI[0])("bytes", "R2", KS[-1])
    assert row == {"base": "bytes", "arm": "R2", "K": KS[-1], **seg}
    table, fig = plots.segmentation(row)
    assert list(fig.data[0].y) == [len(p) for p in seg["pieces"]] and f"{seg['tokens']} tokens" in fig.layout.title.text
    assert "<th>segmentation</th>" in table.data and "pieces" not in table.data


def test_pretoken_rows_and_long_rows():
    rows = floor.pretoken_rows("नेपालको सरकार", {"letters-only": "llama3", "repaired": "llama3-marks"})
    assert rows[1] == {"regex": "repaired", "pre-tokens": "नेपालको" + " | " + " सरकार", "count": 2}  # the space leads
    assert all("".join(r["pre-tokens"].split(" | ")) == "नेपालको सरकार" for r in rows)
    wide = [{"t": "a", "p": 1, "q": 2}, {"t": "b", "p": 3, "q": 4}]
    assert [(r["t"], r["m"], r["v"]) for r in floor.long_rows(wide, "t", {"q": "Q", "p": "P"}, "v", "m")] == [
        ("a", "Q", 2), ("a", "P", 1), ("b", "Q", 4), ("b", "P", 3)]


def test_ci_table_formats_and_drops_the_intervals():
    html = plots.ci_table([{"t": "a", "x_ci": [1.0, 2.0], "y": 0.5}], {"x_ci": "X CI"}).data
    assert "<th>t</th><th>y</th><th>X CI</th>" in html and "[1.000, 2.000]" in html and "x_ci" not in html


def test_extra_text_path(tmp_path, monkeypatch):
    pool, extra = tmp_path / "pool", tmp_path / "extra"
    pool.mkdir(), extra.mkdir()
    (extra / "big.txt").write_text("x\n")
    monkeypatch.delenv("MODTOK_EXTRA", raising=False)
    monkeypatch.setenv("MODTOK_POOL", str(pool))
    assert data.extra_text_path("big.txt") == extra / "big.txt"  # beside the pool
    assert data.extra_text_path("missing.txt") is None
    other = tmp_path / "elsewhere"
    other.mkdir()
    monkeypatch.setenv("MODTOK_EXTRA", str(other))
    assert data.extra_text_path("big.txt") is None  # $MODTOK_EXTRA wins over the pool's sibling
    (other / "big.txt").write_text("y\n")
    assert data.extra_text_path("big.txt") == other / "big.txt"
    assert data.extra_text_path("big.txt", root=extra) == extra / "big.txt"
    monkeypatch.delenv("MODTOK_EXTRA"), monkeypatch.delenv("MODTOK_POOL")
    assert data.extra_text_path("big.txt") is None  # nowhere to look


def test_pool_table_is_the_sweep_on_the_shared_data(base, pool_root, flores_root, monkeypatch):
    monkeypatch.setenv("MODTOK_POOL", str(pool_root))
    monkeypatch.setenv("MODTOK_FLORES", str(flores_root))
    corpora = data.default_corpora(["rus_Cyrl", "hin_Deva", "eng_Latn"], train_chars=20_000)
    table = cross_script.pool_table({"bytes": base}, corpora, ["rus_Cyrl", "xxx_Latn", "hin_Deva"], 30, n_boot=20)
    assert list(table.train_bytes) == ["rus_Cyrl", "hin_Deva"]  # in the order asked; unknown codes left out
    assert table.left_out == {"xxx_Latn": "not in the data"}  # ... and named
    train = {x: corpora.train[x] for x in ("rus_Cyrl", "hin_Deva")}
    assert table.train_bytes == {x: sum(len(s.encode()) for s in lines) for x, lines in train.items()}
    want = cross_script.sweep(base, train, corpora.eval, 30, n_boot=20)
    assert [r.pop("base") for r in table.rows] == ["bytes", "bytes"]
    assert repr(table.rows) == repr(want)  # (repr: NaN == NaN)


def test_pool_table_on_own_parallel_text_names_what_it_cannot_sweep(base):
    """On a user's corpus with its own parallel evaluation text (no pool, no FLORES) the table
    is made of what the data has; a language whose script has no merge filter, and one
    without evaluation text, are left out with the reason, not the whole table skipped."""
    lines = {"eng_Latn": ["the cat sat on the mat", "a dog ran far"], "rus_Cyrl": ["кот сидел на мате", "собака бежала"],
             "xyz_Zzzz": ["ab ba", "ba ab"]}
    corpora = data.Corpora({**lines, "ukr_Cyrl": ["кіт"]}, lines, "own", parallel_eval=True)
    table = cross_script.pool_table({"bytes": base}, corpora, ["rus_Cyrl", "xyz_Zzzz", "ukr_Cyrl"], 20, n_boot=5)
    assert [r["language"] for r in table.rows] == ["rus_Cyrl"]
    assert table.left_out["ukr_Cyrl"] == "no evaluation text"
    assert table.left_out["xyz_Zzzz"] == "unknown script 'Zzzz': not an ISO 15924 code that Unicode knows"
    assert "None" not in "\n".join(table.lines())
    with pytest.raises(UnknownLanguageError):  # the reference must be in the aligned text
        cross_script.pool_table({"bytes": base}, data.Corpora(lines, {"rus_Cyrl": lines["rus_Cyrl"]}, "own",
                                                               parallel_eval=True), ["rus_Cyrl"], 20)


def test_claims_from_measured_values_and_what_is_missing(sweep):
    """The 'paper vs here' values come from what was computed; rows that need
    Nepali on aligned text say so elsewhere, never a stand-in's number."""
    from modtok.studies import paper_vs_here
    from modtok.studies.pretoken_floor import claims

    renamed = floor.Sweep([{**r, "base": "llama3"} for r in sweep.rows], {}, {})
    audit_rows = {"llama3": {"floor": 2.2, "premium": 2.58}}
    v = claims.measured("npi_Deva", True, audit_rows, renamed, moved=[], table_v=None, min_stall_k=KS[-1])
    assert (v["llama3_floor"], v["llama3_premium"], v["english_ids_moved"]) == (2.2, 2.58, 0.0)
    r1, r2 = renamed.of("llama3", "R1"), renamed.of("llama3", "R2")
    assert v["r1_stalls"] == r1[-1]["cost"] / r1[-1]["floor"] and v["r2_floor_llama3"] == r2[0]["floor"]
    assert v["r2_below_r1_floor"] == r2[-1]["cost"] - r1[0]["floor"]
    assert isinstance(v["qwen3_floor"], paper_vs_here.NotMeasured) and "Qwen3" in v["qwen3_floor"].reason
    assert isinstance(v["marks_r2_below_r1"], paper_vs_here.NotMeasured)
    assert v["cpt_r2_minus_r1"].reason == "section (h) did not run"
    ours = claims.setting(claims.Settings("npi_Deva", 10**6, KS, "FLORES-200 devtest (/x)", ["llama3"]))
    why = claims.reasons(v, sweep=renamed, moved=[])
    assert "r1_stalls" not in why  # R1 reached its floor: it holds, so no reason (the table refuses one)
    rows = {r["claim"]: r for r in paper_vs_here.table("pretoken_floor", v, ours, reasons=why)}
    assert len(rows) == len(claims.KEYS)
    by_key = dict(zip(claims.KEYS, rows.values()))
    assert [by_key[k]["holds?"] for k in ("llama3_floor", "llama3_premium")] == ["holds", "holds"]
    # the paper's setting fields beside ours, the same fields
    assert by_key["llama3_floor"]["setting: here"].startswith("data: (c) npi_Deva")
    assert [f.split(":")[0] for f in by_key["llama3_floor"]["setting: here"].split("; ")] == [
        "data", "vocabulary", "pretokenization"]
    assert all(r["reason"] == "" for r in rows.values() if r["holds?"] != "does not hold")
    other = claims.measured("hin_Deva", False, audit_rows, renamed, moved=[("llama3", "R2", 40)])
    assert other["english_ids_moved"] == 1.0  # measured on any data
    assert all(isinstance(other[k], paper_vs_here.NotMeasured) for k in ("llama3_floor", "r1_stalls", "cpt_r0_lowest"))
    table_v = [{"language": "hin_Deva", "R1_premium": 2.0, "R2_premium": 1.5, "r1_equals_r2": False},
               {"language": "tam_Taml", "R1_premium": 2.0, "R2_premium": 2.5, "r1_equals_r2": False},
               {"language": "mal_Mlym", "R1_premium": 2.0, "R2_premium": 1.0, "r1_equals_r2": False},  # not Table V's
               {"language": "rus_Cyrl", "R1_premium": 1.2, "R2_premium": 1.2, "r1_equals_r2": True}]
    v = claims.measured("npi_Deva", True, table_v=table_v)
    assert v["marks_r2_below_r1"] == 0.5 and v["controls_r1_differs"] == 0.0
    table_v[1] |= {"R1_learned": 900, "R2_learned": 300}
    why = claims.reasons(v, table_v=table_v)  # marks does not hold (tam_Taml), the controls do
    assert list(why) == ["marks_r2_below_r1"] and "tam_Taml" in why["marks_r2_below_r1"]
    assert "hin_Deva" not in why["marks_r2_below_r1"] and "mal_Mlym" not in why["marks_r2_below_r1"]
    row = next(r for r in paper_vs_here.table("pretoken_floor", v, "", reasons=why) if "Table V" in r["source"])
    assert row["holds?"] == "does not hold" and row["reason"] == why["marks_r2_below_r1"]
    # a sweep whose text ran out of merges: R1 kept fewer than K, the reason says so (only if R1 does not stall)
    short = floor.Sweep([{"base": "llama3", "arm": "R1", "K": 8000, "merges kept": 3461, "cost": 2.6, "floor": 2.2}], {}, {})
    assert "K = 8,000 kept 3,461" in claims.reasons({"r1_stalls": 2.6 / 2.2}, sweep=short)["r1_stalls"]
    assert claims.reasons({"r1_stalls": 1.0}, sweep=short) == {}
    assert "mal_Mlym" not in cross_script.PAPER_MARKED and len(cross_script.PAPER_MARKED) == 7


def test_a_continued_pretraining_direction_holds_only_when_its_interval_does():
    """Section (h)'s differences are judged with their interval over documents (issue 42: a
    direction holds only when the interval excludes 0); on main the point alone was judged."""
    from modtok.studies import paper_vs_here
    from modtok.studies.pretoken_floor import claims

    paper = {c.key: c for c in paper_vs_here.claims("pretoken_floor")}
    worse = paper["cpt_r2_minus_r1"]  # the paper: R2 worse than R1, "above 0"
    assert worse.verdict(claims.cpt_value((0.02, 0.01, 0.03), "difference")) == "holds"
    assert worse.verdict(claims.cpt_value((0.02, -0.01, 0.05), "difference")) == "does not hold"  # the point is > 0
    within = paper["cpt_r2m_minus_r1"]  # |R2-m − R1| at most 0.012: the interval's far end decides
    assert within.verdict(claims.cpt_value((-0.005, -0.02, 0.01), "|difference|")) == "does not hold"
    assert within.verdict(claims.cpt_value((-0.005, -0.008, 0.002), "|difference|")) == "holds"


def test_cross_script_figure_rows_and_rules():
    row = {"base": "llama3", "language": "hin_Deva", "K": 300, "premium": 3.0, "floor": 2.0, "R1_premium": 2.5,
           "R2_premium": 1.5, "floor_repaired": 1.0}
    got = cross_script.figure_rows([row, {**row, "base": "qwen3"}])
    assert [(r["tokenizer"], r["premium"]) for r in got] == [
        ("original", 3.0), ("floor, original regex", 2.0), ("R1, K = 300", 2.5), ("R2, K = 300", 1.5),
        ("floor, repaired regex", 1.0)]
    assert cross_script.CONTROLS[:2] == cross_script.PAPER_CONTROLS == ("amh_Ethi", "kor_Hang")
    assert cross_script.PAPER_K == 32_000
    strict, worded = cross_script.block_filter("Deva", "strict"), cross_script.block_filter("Deva")
    assert not strict.relaxed and worded.relaxed and worded.pieces == "character"


def test_base_tokenizers_are_the_bases_under_each_regex(base):
    """Section (e) on data without a Devanagari language: K = 0, no merge added; R1 is the
    base itself, R2 the repaired regex over the same vocabulary."""
    toks = floor.base_tokenizers({"bytes": base})
    assert set(toks) == {("bytes", "R1", 0), ("bytes", "R2", 0)}
    line = "नेपालको सरकार and English"
    assert floor.ids_of(toks["bytes", "R1", 0], [line]) == floor.ids_of(base.tokenizer, [line])
    row = floor.segmenter(toks, line)("bytes", "R2", 0)
    assert row["arm"] == "R2" and b"".join(row["pieces"]) == line.encode()


def test_the_setting_names_ones_own_training_text_not_the_pool():
    """Notebook 07 on one's own corpus (a manifest): the settings of (c) and (h) name that text; the
    pool's preparation (NFC, deduplicated, filtered against FLORES-200) is claimed only for the pool."""
    from modtok.studies.pretoken_floor import claims
    from modtok.studies.pretoken_floor.cpt import preset

    own = "manifest /data/corpora.yaml (first ≤300,000 chars/language in stream order)"
    for size in ("smoke", "pretrained-smoke"):
        setup, sizes = preset(size)
        ours = claims.setting(claims.Settings("hin_Deva", 10**4, [0, 1000], "own (/x)", ["llama3"], setup, sizes,
                                              training=own))
        assert ours["data"].count(own) == 2 and "pool" not in ours["data"], ours["data"]
        assert own in "\n".join(claims.cpt_plan(setup, sizes, "hin_Deva", "own (/x)", own))
        assert "pool" in claims.setting(claims.Settings("npi_Deva", 10**4, [0], "", ["llama3"], setup, sizes))["data"]
