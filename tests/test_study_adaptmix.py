"""The AdaptMix study (modtok.studies.adaptmix, notebook 06's harness) at toy sizes."""

from __future__ import annotations

import random

import pytest

from modtok import mixture as mx
from modtok.errors import MixtureError
from modtok.evaluation import metrics
from modtok.studies import adaptmix as study
from modtok.text import data
from modtok.text.pretokenize import DEFAULT_SCHEME

WS = "whitespace"
# letters and the longest word of each toy language
ALPHABETS = {"eng_Latn": ("abcdefgh", 3), "rus_Cyrl": ("абвгдежзик", 6),
             "hin_Deva": ("कखगघचछजझटठ", 9)}


def _lines(rng, alphabet, length, n):
    return [" ".join("".join(rng.choice(alphabet) for _ in range(rng.randint(1, length)))
                     for _ in range(rng.randint(3, 10))) for _ in range(n)]


def _toy_data(parallel=True, thai=False) -> study.Data:
    """Three languages whose words are 3, 6 and 9 letters at most (so fertility
    differs); 40 dev and test lines each (a count that makes premiums defined)."""
    rng = random.Random(0)
    train = {lang: _lines(rng, a, n, 200) for lang, (a, n) in ALPHABETS.items()}
    dev = {lang: _lines(rng, a, n, 40) for lang, (a, n) in ALPHABETS.items()}
    test = {lang: _lines(rng, a, n, 40) for lang, (a, n) in ALPHABETS.items()}
    if thai:
        train["tha_Thai"], test["tha_Thai"] = ["สวัสดีชาวโลก"] * 50, ["สวัสดี"] * 40
    return study.Data(list(train), train, dev, test, parallel, "toy text")


@pytest.fixture(scope="module")
def s():
    return study.AdaptMixStudy(_toy_data(), seed=0, scheme=WS)


def test_load_data_on_the_wordfreq_default(monkeypatch):
    for var in ("MODTOK_POOL", "MODTOK_FLORES", "MODTOK_MANIFEST"):
        monkeypatch.delenv(var, raising=False)
    d = study.load_data(["eng_Latn", "npi_Deva", "hin_Deva"], train_chars=4_000, eval_lines=20, seed=3)
    assert d.langs == ["eng_Latn", "hin_Deva"]  # Nepali -> its stand-in Hindi, once
    assert not d.parallel and "wordfreq" in d.source and "in the loop" in d.source
    corpora = data.default_corpora(d.langs, train_chars=4_000, eval_lines=20, seed=3)
    assert d.train == corpora.train and d.test == corpora.eval  # the project's one data selection
    assert d.dev == data.load_wordfreq(d.langs, n_lines=study.WORDFREQ_DEV_LINES, seed=4)
    assert len(d.train["eng_Latn"]) == 50 and len(d.test["eng_Latn"]) == 20
    assert d.dev["eng_Latn"] != d.test["eng_Latn"][: len(d.dev["eng_Latn"])]


def test_load_data_on_pool_and_flores(pool_root, flores_root, monkeypatch):
    monkeypatch.setenv("MODTOK_POOL", str(pool_root))
    monkeypatch.setenv("MODTOK_FLORES", str(flores_root))
    monkeypatch.delenv("MODTOK_MANIFEST", raising=False)
    d = study.load_data(["hin_Deva", "tel_Telu"], train_chars=5_000, eval_lines=7)
    assert d.langs == ["hin_Deva", "tel_Telu"] and d.parallel and "FLORES-200 dev (7 parallel lines)" in d.source
    assert d.dev == data.load_flores(d.langs, "dev", max_lines=7)
    assert d.test == data.load_flores(d.langs, "devtest", max_lines=7)
    assert d.train == data.load_pool(d.langs, max_chars=5_000)
    assert sum(map(len, d.train["hin_Deva"])) <= 5_000


def test_runs_are_cached_and_the_widget_default_is_the_main_run(s):
    h = s.run("hf-bpe", 300, 9_000, 2, 0.5, 0.1)
    assert s.run("hf-bpe", 300, 9_000, 2, 0.5, 0.1, tuple(s.langs), 1.0) is h
    assert h.params["trainer"] == "hf-bpe-300" and len(h.tokenizers) == 2  # every tokenizer kept
    assert h.steps[0]["mixture"] == mx.uniform(s.langs)
    result = s.explore(0.5, 0.1, 3_000, 2, 300, "hf-bpe", s.langs)  # T per language
    assert result["history"] is h
    assert [r["language"] for r in result["rows"]] == [study.label(lang) for lang in s.langs]
    assert [r["share (last)"] for r in result["rows"]] == [h.steps[-1]["mixture"][lang] for lang in s.langs]
    assert [r["UniMix dev fertility"] for r in result["rows"]] == [h.steps[0]["fertility"][lang] for lang in s.langs]
    assert s.explore(0.5, 0.1, 3_000, 2, 300, "hf-bpe", ["eng_Latn"]) == {"langs": ("eng_Latn",), "rows": []}
    # the scheme reaches every trainer that takes one
    assert s.trainer("modtok-bpe", 300).scheme == WS and s.trainer("sp-unigram", 300).scheme is None
    assert study.AdaptMixStudy(_toy_data()).scheme == DEFAULT_SCHEME


def test_table5_columns_and_rows(s):
    h = s.run("modtok-bpe", 300, 9_000, 3, 0.5, 0.1)
    toks = s.tokenizers(h, "modtok-bpe", 300, 9_000)
    best = h.best()
    assert list(toks) == ["UniMix", f"AdaptMix (it. {best})", "AdaptMix (last, it. 2)", *study.BASELINES]
    assert toks["UniMix"] is h.tokenizers[0] and toks["AdaptMix (last, it. 2)"] is h.tokenizers[2]
    for name in study.BASELINES:  # each baseline trained on its own mixture, the same T
        tok, alloc = s.baseline(name, "modtok-bpe", 300, 9_000, h.langs)
        assert alloc == mx.allocate(study.baseline_mixture(name, h.langs), 9_000, s.pool.available(), "cap")
        assert toks[name] is tok
    fert = s.fertility(toks)
    assert fert["UniMix"] == {lang: metrics.fertility(h.tokenizers[0], s.data.test[lang], lang) for lang in s.langs}
    rows = s.fertility_rows(fert)
    assert [r["language"] for r in rows] == [*map(study.label, s.langs), "mean"]
    assert rows[-1]["UniMix"] == pytest.approx(sum(fert["UniMix"].values()) / 3, abs=1e-12)
    assert rows[2][f"AdaptMix (it. {best})"] == fert[f"AdaptMix (it. {best})"]["hin_Deva"]
    # Hindi's words are longest: it fragments most under every mixture
    assert all(max(f, key=f.get) == "hin_Deva" for f in fert.values())
    with pytest.raises(MixtureError, match="unknown baseline"):
        study.baseline_mixture("EnHiMix", h.langs)


def test_premiums_need_parallel_text_with_the_pivot(s):
    h = s.run("hf-bpe", 300, 9_000, 2, 0.5, 0.1)
    toks = {"UniMix": h.tokenizers[0], "last": h.tokenizers[-1]}
    prem, rows = s.premiums(toks)
    assert all(p["eng_Latn"] == 1.0 for p in prem.values())
    assert [r["language"] for r in rows] == [study.label("rus_Cyrl"), study.label("hin_Deva"),
                                            "mean (non-English)", "Gini of token totals"]
    totals = {lang: metrics.token_counts(toks["last"], s.data.test[lang]).sum() for lang in s.langs}
    assert rows[1]["last"] == totals["hin_Deva"] / totals["eng_Latn"]
    assert rows[2]["last"] == pytest.approx((prem["last"]["rus_Cyrl"] + prem["last"]["hin_Deva"]) / 2, abs=1e-12)
    assert rows[3]["UniMix"] == metrics.cost_gini(toks["UniMix"], s.data.test)
    assert study.AdaptMixStudy(_toy_data(parallel=False), scheme=WS).premiums(toks) is None
    assert s.premiums(toks, pivot="tha_Thai") is None


def test_ablation_rows_report_the_selected_iteration(s):
    runs = {"fixed": s.run("hf-bpe", 300, 9_000, 2, 0.5, 0.1),
            "dynamic": s.run("hf-bpe", 300, 9_000, 2, 0.5, 0.1, f_best="dynamic")}
    assert runs["dynamic"].steps[0]["fertility"] == runs["fixed"].steps[0]["fertility"]
    rows = s.ablation_rows(runs, "hin_Deva")
    for row, h in zip(rows, runs.values()):
        f = s.devtest.fertility(h.tokenizers[h.best()])
        assert row["selected iteration"] == h.best() and row["mean dev fertility"] == h.steps[h.best()]["mean_fertility"]
        assert row["mean devtest fertility"] == mx.mean(f) and row["Hindi"] == f["hin_Deva"]
        assert row["max devtest fertility"] == f["hin_Deva"]


def test_budgets_keep_the_total_and_name_every_language(s):
    run = s.budgets(6_000, 300, 2, 0.5, 0.1)
    assert run.langs == s.langs and run.total_k == 900
    assert all(sum(step.k.values()) == 900 for step in run.steps)
    rows = s.budget_rows(run)
    assert [r["language"] for r in rows] == list(map(study.label, s.langs))
    assert [r["k (last)"] for r in rows] == [run.steps[-1].k[lang] for lang in s.langs]
    assert rows[0]["k (uniform)"] == 300 and rows[2]["fertility (uniform)"] == run.steps[0].score["hin_Deva"]


def test_spaceless_languages_are_left_out_of_fertility():
    s = study.AdaptMixStudy(_toy_data(thai=True), scheme=WS)
    assert "tha_Thai" in s.langs and "tha_Thai" not in s.devtest.lines
    h = s.run("hf-bpe", 300, 9_000, 1, 0.5, 0.1)
    assert "tha_Thai" in h.excluded and "tha_Thai" not in h.langs
