"""The AdaptMix study (modtok.studies.adaptmix, notebook 06's harness) at toy sizes."""

from __future__ import annotations

import ast
import json
import random
from collections.abc import Mapping
from pathlib import Path

import pytest

from modtok import cache
from modtok import mixture as mx
from modtok import progress
from modtok.errors import MissingDevTextError, MixtureError, UsageError
from modtok.evaluation import metrics, stats
from modtok.mixture.sizes import PAPER_LANGUAGES
from modtok.studies import adaptmix as study
from modtok.studies import paper_vs_here
from modtok.text import data
from modtok.text.pretokenize import DEFAULT_SCHEME
from modtok.text.training import TRAINING_SCHEME

NOTEBOOK = Path(__file__).resolve().parents[1] / "notebooks" / "06_adaptmix.py"
GRID = ((0.5, 0.1), (0.3, 0.5))
SEALED = {"devtest", "test_lines", "fertility", "fertility_rows", "parity", "ablation_rows", "over_seeds",
          "rows"}  # read devtest

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


class Spy(Mapping):
    """A test split that records every read of it."""

    def __init__(self, lines):
        self.lines, self.reads = lines, 0

    def __getitem__(self, lang):
        self.reads += 1
        return self.lines[lang]

    def __iter__(self):
        self.reads += 1
        return iter(self.lines)

    def __len__(self):
        return len(self.lines)


@pytest.fixture(scope="module")
def s():
    """A study whose μ and ε were chosen on dev (the tables may read devtest)."""
    st = study.AdaptMixStudy(_toy_data(), seed=0, scheme=WS)
    st.choose("hf-bpe", 300, 9_000, 2, GRID)
    return st


def test_load_data_on_the_wordfreq_default_without_udhr(monkeypatch):
    for var in ("MODTOK_POOL", "MODTOK_FLORES", "MODTOK_MANIFEST"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("MODTOK_UDHR", "none")  # as without make install's udhr package (tests/test_udhr.py: with it)
    d = study.load_data(["eng_Latn", "npi_Deva", "hin_Deva"], train_chars=4_000, eval_lines=20, seed=3, min_langs=1)
    assert d.langs == ["eng_Latn", "hin_Deva"]  # Nepali -> its stand-in Hindi, once
    assert not d.parallel and "wordfreq" in d.source and "another wordfreq sample" in d.dev_label
    corpora = data.default_corpora(d.langs, train_chars=4_000, eval_lines=20, seed=3)
    assert d.train == corpora.train and d.test == corpora.eval  # the project's one data selection
    assert d.dev == data.load_wordfreq(d.langs, n_lines=study.WORDFREQ_DEV_LINES, seed=4)
    assert len(d.train["eng_Latn"]) == 50 and len(d.test["eng_Latn"]) == 20
    assert d.dev["eng_Latn"] != d.test["eng_Latn"][: len(d.dev["eng_Latn"])]


def test_load_data_on_pool_and_flores(pool_root, flores_root, monkeypatch):
    monkeypatch.setenv("MODTOK_POOL", str(pool_root))
    monkeypatch.setenv("MODTOK_FLORES", str(flores_root))
    monkeypatch.delenv("MODTOK_MANIFEST", raising=False)
    d = study.load_data(["hin_Deva", "tel_Telu"], train_chars=5_000, eval_lines=7, min_langs=2)
    assert d.langs == ["hin_Deva", "tel_Telu"] and d.parallel and d.dev_label == "FLORES-200 dev (7 parallel lines)"
    assert d.dev == data.load_flores(d.langs, "dev", max_lines=7)
    assert d.test == data.load_flores(d.langs, "devtest", max_lines=7)
    assert d.train == data.load_pool(d.langs, max_chars=5_000)
    assert sum(map(len, d.train["hin_Deva"])) <= 5_000


def test_load_data_without_a_dev_split_substitutes_nothing(pool_root, flores_root, tmp_path, monkeypatch):
    root = tmp_path / "flores"
    (root / "devtest").mkdir(parents=True)
    for lang in ("hin_Deva", "tel_Telu"):
        (root / "devtest" / f"{lang}.devtest").write_bytes((flores_root / "devtest" / f"{lang}.devtest").read_bytes())
    monkeypatch.setenv("MODTOK_POOL", str(pool_root))
    monkeypatch.setenv("MODTOK_FLORES", str(root))
    monkeypatch.delenv("MODTOK_MANIFEST", raising=False)
    d = study.load_data(["hin_Deva", "tel_Telu"], train_chars=5_000, eval_lines=7, min_langs=2)
    assert d.dev is None and d.test and "no dev split" in d.dev_label
    st = study.AdaptMixStudy(d, scheme=WS)
    assert not st.has_dev
    with pytest.raises(MissingDevTextError, match="no dev split"):
        st.run("hf-bpe", 300, 9_000, 1, 0.5, 0.1)
    with pytest.raises(MissingDevTextError, match="no dev split"):
        st.choose("hf-bpe", 300, 9_000, 1, GRID)
    here = st.paper_vs_here(None)  # every claim: not measured, and why
    assert set(here) == {c.key for c in paper_vs_here.claims("adaptmix")}
    assert all(isinstance(v, paper_vs_here.NotMeasured) and "dev split" in v.reason for v in here.values())


def test_load_data_on_a_users_own_corpus_takes_its_languages_and_its_dev_split(tmp_path, monkeypatch):
    from modtok.text import example

    manifest, evals = example.build(tmp_path)
    for var in ("MODTOK_POOL", "MODTOK_FLORES", "MODTOK_EXTRA"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("MODTOK_MANIFEST", str(manifest))
    monkeypatch.setenv("MODTOK_EVAL", str(evals))
    d = study.load_data(train_chars=3_000, eval_lines=20)  # only English and Hindi are the paper's: take all 4
    assert sorted(d.langs) == sorted(example.LANGS) and d.parallel
    assert d.dev_label == "own evaluation text dev (20 parallel lines)" and "own evaluation text devtest" in d.source
    corpora = data.default_corpora(d.langs, train_chars=3_000, eval_lines=20)
    assert d.dev == corpora.dev(max_lines=20) and d.test == corpora.eval and d.dev != d.test


# --------------------------------------------------------------------------
# the seal: no hyper-parameter sees devtest


def test_devtest_is_sealed_until_mu_and_eps_are_chosen_on_dev():
    d = _toy_data()
    spy = Spy(d.test)
    st = study.AdaptMixStudy(study.Data(d.langs, d.train, d.dev, spy, True, "toy"), scheme=WS)
    assert st.data.test is None  # the study's data no longer hands the split out
    h = st.run("hf-bpe", 300, 9_000, 2, 0.5, 0.1)
    toks = {"UniMix": h.tokenizers[0], "AdaptMix": h.tokenizers[-1]}
    for read in (lambda: st.devtest, st.test_lines, lambda: st.fertility(toks), lambda: st.parity(toks), st.over_seeds,
                 lambda: st.fertility_rows({}), lambda: st.ablation_rows({"fixed": h}, "hin_Deva")):
        with pytest.raises(UsageError, match="devtest is sealed until μ and ε are chosen on dev"):
            read()
    choice = st.choose("hf-bpe", 300, 9_000, 2, GRID)
    assert spy.reads == 0  # the choice (and every run before it) read dev only
    assert (choice.mu, choice.eps) in GRID and st.choice is choice
    assert st.fertility(toks)["UniMix"] == {lang: metrics.fertility(h.tokenizers[0], d.test[lang], lang)
                                            for lang in d.langs}
    assert spy.reads > 0
    with pytest.raises(UsageError, match="already read"):  # once devtest is seen, no new choice
        st.choose("hf-bpe", 300, 9_000, 2, GRID)


def test_choose_keeps_the_lowest_mean_dev_fertility_at_the_last_iteration():
    st = study.AdaptMixStudy(_toy_data(), scheme=WS)
    grid = ((0.5, 0.1), (0.3, 0.5), (1.0, 0.0))
    choice = st.choose("hf-bpe", 300, 9_000, 3, grid)
    last = [st.run("hf-bpe", 300, 9_000, 3, mu, eps).steps[-1]["mean_fertility"] for mu, eps in grid]
    assert [r["mean dev fertility, last it."] for r in choice.rows] == last
    assert (choice.mu, choice.eps) == grid[min(range(3), key=lambda i: (last[i], i))]
    assert [(r["μ"], r["ε"]) for r in choice.rows] == list(grid) and choice.criterion == study.CRITERION
    # the candidates share iteration 0 (μ and ε do not touch it): trained once
    assert len({id(st.run("hf-bpe", 300, 9_000, 3, mu, eps).tokenizers[0]) for mu, eps in grid}) == 1
    tie = study.AdaptMixStudy(_toy_data(), scheme=WS).choose("hf-bpe", 300, 9_000, 1, grid)
    assert (tie.mu, tie.eps) == grid[0]  # one iteration: every candidate is UniMix, the first wins
    with pytest.raises(MixtureError, match="at least one"):
        st.choose("hf-bpe", 300, 9_000, 3, ())


def _reads_before_choice(source: str) -> list[str]:
    """What notebook 06's code cells do with the test split before the cell that calls
    ``.choose(``: a devtest-reading study method called, a ``.test``/``.eval``/``._test``
    attribute read, or a ``"devtest"`` argument passed to a loader."""
    found = []
    for k, cell in enumerate(source.split("\n# %%")):
        if cell.lstrip().startswith("[markdown]"):
            continue
        tree = ast.parse(cell.partition("\n")[2])  # the cell's code, after its "# %%" line
        calls = {n.func.attr for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)}
        if "choose" in calls:
            return found
        for n in ast.walk(tree):
            if isinstance(n, ast.Attribute) and n.attr in SEALED | {"test", "eval", "_test"}:
                found.append(f"{n.attr} (cell {k})")
            if isinstance(n, ast.Call) and any(isinstance(a, ast.Constant) and a.value == "devtest" for a in n.args):
                found.append(f'"devtest" passed to a call (cell {k})')
    raise AssertionError("notebook 06 never calls .choose(...): μ and ε are not chosen on dev")


def test_notebook_06_reads_devtest_only_after_choosing_mu_and_eps():
    assert _reads_before_choice(NOTEBOOK.read_text(encoding="utf-8")) == []
    # the check itself: a notebook that reads devtest first, or never chooses, fails it
    early = "# %%\nS = 1\n# %%\nfert = S.fertility(toks)\n# %%\nCHOICE = S.choose(1, 2, 3, 4, GRID)\n"
    assert _reads_before_choice(early) == ["fertility (cell 1)"]
    loader = '# %%\nx = data.load_flores(LANGS, "devtest")\n# %%\nS.choose(GRID)\n'
    assert _reads_before_choice(loader) == ['"devtest" passed to a call (cell 0)']
    with pytest.raises(AssertionError, match="never calls .choose"):
        _reads_before_choice("# %%\nfert = S.fertility(toks)\n")


def test_every_table_method_is_sealed_and_the_notebook_check_knows_them():
    """The readers the notebook check looks for are exactly the study's methods that
    the seal refuses (a new devtest-reading method must be added to both)."""
    st = study.AdaptMixStudy(_toy_data(), scheme=WS)
    sealed = set()
    for name in dir(study.AdaptMixStudy):
        if name.startswith("_") or name in {"choose", "run", "baseline", "tokenizers", "budgets", "explore", "trainer"}:
            continue
        attr = getattr(study.AdaptMixStudy, name)
        try:
            if isinstance(attr, property):
                getattr(st, name)
            elif callable(attr):
                getattr(st, name)(*([{}] * (attr.__code__.co_argcount - 1)))
        except UsageError:
            sealed.add(name)
        except Exception:  # noqa: BLE001 (wrong dummy arguments: not a reader)
            pass
    assert sealed == SEALED


# --------------------------------------------------------------------------
# runs and tables


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


def test_fewer_iterations_are_a_prefix_and_more_continue_the_longest_run():
    """Notebook 06's iterations slider: nothing trained twice, and every run as a fresh one."""
    def fresh(n):
        return study.AdaptMixStudy(_toy_data(), seed=0, scheme=WS).run("hf-bpe", 300, 9_000, n, 0.5, 0.1)

    st = study.AdaptMixStudy(_toy_data(), seed=0, scheme=WS)
    three = st.run("hf-bpe", 300, 9_000, 3, 0.5, 0.1)
    two = st.run("hf-bpe", 300, 9_000, 2, 0.5, 0.1)
    trained = st._timed[("hf-bpe", 300, tuple(st.langs))]  # (iterations trained, seconds) per training
    assert [n for n, _ in trained] == [3]  # the prefix trained nothing
    assert json.dumps(two.to_json()) == json.dumps(fresh(2).to_json())
    assert two.tokenizers == three.tokenizers[:2] and len(three.steps) == 3  # a copy: the longer run intact
    four = st.run("hf-bpe", 300, 9_000, 4, 0.5, 0.1)
    assert [n for n, _ in trained] == [3, 1]  # only the added iteration
    assert four.tokenizers[:3] == three.tokenizers and len(three.steps) == 3
    assert json.dumps(four.to_json()) == json.dumps(fresh(4).to_json())
    with pytest.raises(MixtureError, match="no prefix of 5"):
        four.prefix(5)
    shown = []  # what notebook 06's panel shows while the loop runs (modtok.progress.reporting)
    with progress.reporting(shown.append, interval=0):
        st.run("hf-bpe", 300, 9_000, 5, 0.5, 0.1)
    lines = [line for text in shown for line in text.splitlines()]
    assert lines[0].startswith("AdaptMix:  80% 4/5") and any(line.startswith("AdaptMix: 100% 5/5") for line in lines)


def test_to_train_counts_only_the_iterations_a_run_would_add():
    """What notebook 06's explorer estimates before it trains: nothing for a run kept in the kernel
    or in the results cache, the added iterations for a longer one, all but iteration 0 for
    another μ, all of them for another vocabulary."""
    st = study.AdaptMixStudy(_toy_data(), seed=0, scheme=WS)
    assert st.to_train("hf-bpe", 300, 9_000, 3, 0.5, 0.1) == 3
    st.run("hf-bpe", 300, 9_000, 2, 0.5, 0.1)
    assert [st.to_train("hf-bpe", 300, 9_000, n, 0.5, 0.1) for n in (1, 2, 3, 5)] == [0, 0, 1, 3]
    assert st.to_train("hf-bpe", 300, 9_000, 3, 0.7, 0.1) == 2  # iteration 0 is shared (History.branch)
    assert st.to_train("hf-bpe", 400, 9_000, 2, 0.5, 0.1) == 2
    assert st.to_train("hf-bpe", 300, 9_000, 2, 0.5, 0.1, st.langs[:2]) == 2
    again = study.AdaptMixStudy(_toy_data(), seed=0, scheme=WS)  # a new kernel: the results cache has it
    assert again.to_train("hf-bpe", 300, 9_000, 2, 0.5, 0.1) == 0
    assert again.to_train("hf-bpe", 300, 9_000, 3, 0.5, 0.1) == 3  # resuming reads the kernel's runs only
    assert again._runs == {}  # nothing was computed or read to say so


def test_a_setting_estimated_over_the_explorers_limit_asks_before_it_trains():
    from modtok.ui import plots

    st = study.AdaptMixStudy(_toy_data(), seed=0, scheme=WS)
    setting = dict(mu=0.5, eps=0.1, budget=3_000, iterations=2, vocab=300, trainer="hf-bpe", langs=st.langs)
    cost = study.estimated_seconds("hf-bpe", 9_000, 300, 2)
    assert 0 < cost < study.EXPLORER_SECONDS  # at toy size the explorer trains by itself
    asked = st.explore(**setting, long=False, ask_above=cost / 2)  # as if the setting were twice the limit
    assert asked["rows"] == [] and st._runs == {}  # nothing trained
    assert "trains 2 AdaptMix iterations of hf-bpe at vocabulary 300 on 9,000 characters" in asked["ask"]
    shown = plots.adaptmix_explorer(asked)
    assert len(shown) == 1 and "train long settings" in shown[0].data
    trained = st.explore(**setting, long=True, ask_above=cost / 2)  # the toggle ticked
    assert len(trained["history"].steps) == 2 and trained["rows"]
    assert st.explore(**setting, long=False, ask_above=0)["history"] is trained["history"]  # kept: nothing to ask
    assert "ask" not in st.explore(**{**setting, "iterations": 3}, long=False, ask_above=cost * 0.75)  # one more: half
    assert "ask" in st.explore(**{**setting, "iterations": 5}, long=False, ask_above=cost * 0.75)  # two more (3 -> 5)


def test_the_explorer_panel_trains_an_asked_setting_once_its_toggle_is_ticked():
    """Notebook 06's panel as a click drives it: more iterations than "ask above" allows show the
    question, not a table; ticking "train long settings" trains them and shows their table."""
    from modtok.ui import plots, widgets

    st = study.AdaptMixStudy(_toy_data(), seed=0, scheme=WS)
    iterations, long = widgets.budget_slider(2, 1, 12, 1), widgets.toggle(False, "train long settings")
    ask_above = widgets.number(100, 0, 3600)
    controls = {"mu": widgets.float_slider(0.5, 0.05, 1, 0.05), "eps": widgets.float_slider(0.1, 0, 2, 0.05),
                "budget": widgets.budget_slider(3_000, 300, 6_000, 300), "iterations": iterations,
                "vocab": widgets.budget_slider(300, 260, 600, 20), "trainer": widgets.choice(list(mx.TRAINERS), "hf-bpe"),
                "langs": widgets.language_picker(st.langs, st.langs), "long": long, "ask_above": ask_above}
    panel = widgets.Panel(st.explore, controls, plots.adaptmix_explorer)
    assert panel.result["rows"]  # the start is under the limit
    ask_above.value = 0  # every new training asks now; the setting shown is kept
    assert panel.result["rows"]
    iterations.value = 3
    assert "ask" in panel.result and not panel.result["rows"]
    assert [len(h.steps) for h in st._runs.values()] == [2]  # nothing trained for it
    long.value = True
    assert panel.result["rows"] and len(panel.result["history"].steps) == 3


def test_the_explorers_start_is_trained_ahead_whatever_its_estimate():
    """On a corpus of many languages the explorer's start may be estimated over "ask above":
    notebook 06's ``explore_ahead`` (run before the panel) trains it, so the first view is a result."""
    st = study.AdaptMixStudy(_toy_data(), seed=0, scheme=WS)
    size = study.ExplorerSize(2, 300, 3_000, (2, 300, 3_000))
    st.explore_ahead(size, 0.5, 0.1, "hf-bpe")
    first = st.explore(0.5, 0.1, 3_000, 2, 300, "hf-bpe", st.langs, long=False, ask_above=0)
    assert "ask" not in first and len(first["history"].steps) == 2


def test_the_explorers_start_trains_by_itself_with_every_trainer():
    """Notebook 06's explorer at its start (EXPLORER on the paper's 16 languages) is under the
    limit for every trainer of the menu, so its first view and the menu never ask; the run's own
    setting (10 iterations, 32k, T = 500k) asks with every trainer."""
    chars = study.EXPLORER["per_lang"] * len(PAPER_LANGUAGES)
    for trainer in mx.TRAINERS:
        assert study.estimated_seconds(trainer, chars, study.EXPLORER["vocab"], study.EXPLORER["iterations"]) \
            <= study.EXPLORER_SECONDS, trainer
        assert study.estimated_seconds(trainer, 500_000 * len(PAPER_LANGUAGES), 32_000, 10) > study.EXPLORER_SECONDS


def test_table5_columns_and_rows(s):
    h = s.run("modtok-bpe", 300, 9_000, 3, 0.5, 0.1)
    toks = s.tokenizers(h, "modtok-bpe", 300, 9_000)
    best = h.best()
    assert list(toks) == [study.UNI, study.ADAPT, study.SELECTED, *study.BASELINES]
    assert toks[study.UNI] is h.tokenizers[0] and toks[study.ADAPT] is h.tokenizers[2]  # the paper's: the last
    assert toks[study.SELECTED] is h.tokenizers[best]  # the dev-selected addition
    for name in study.BASELINES:  # each baseline trained on its own mixture, the same T
        tok, alloc = s.baseline(name, "modtok-bpe", 300, 9_000, h.langs)
        assert alloc == mx.allocate(study.baseline_mixture(name, h.langs), 9_000, s.pool.available(), "cap")
        assert toks[name] is tok
    fert = s.fertility(toks)
    assert fert["UniMix"] == {lang: metrics.fertility(h.tokenizers[0], s.test_lines()[lang], lang) for lang in s.langs}
    rows = s.fertility_rows(fert)
    assert [r["language"] for r in rows] == [*map(study.label, s.langs), "mean"]
    assert rows[-1]["UniMix"] == pytest.approx(sum(fert["UniMix"].values()) / 3, abs=1e-12)
    assert rows[2][study.SELECTED] == fert[study.SELECTED]["hin_Deva"]
    # Hindi's words are longest: it fragments most under every mixture
    assert all(max(f, key=f.get) == "hin_Deva" for f in fert.values())
    with pytest.raises(MixtureError, match="unknown baseline"):
        study.baseline_mixture("EnHiMix", h.langs)


def test_table5_analog_by_hand_beside_the_papers_figures(s):
    fert = {study.UNI: {"eng_Latn": 2.0, "rus_Cyrl": 4.0, "hin_Deva": 5.0},
            study.ADAPT: {"eng_Latn": 2.1, "rus_Cyrl": 3.8, "hin_Deva": 5.0}}
    rows = s.table5_rows(fert, {"hin_Deva": 5.9, "rus_Cyrl": 1.0, "mean": -0.32})
    assert [r["language"] for r in rows] == [*map(study.label, s.langs), "mean", "mean of the changes"]
    # 2.0 -> 2.1: +5%; 4.0 -> 3.8: -5%; 5.0 -> 5.0: 0%
    assert [r["change (%)"] for r in rows[:3]] == pytest.approx([5.0, -5.0, 0.0])
    assert [r["paper change (%)"] for r in rows[:3]] == ["—", 1.0, 5.9]  # "—": not in stored material
    assert [r["same direction"] for r in rows[:3]] == ["—", "no", "yes"]  # 0 counts as +0: the sign of the paper's
    # the mean: 11/3 -> 10.9/3, a change of -0.1/11 = -0.909%; the mean of the changes: 0%
    assert rows[3][study.UNI] == pytest.approx(11 / 3) and rows[3]["change (%)"] == pytest.approx(-100 / 110)
    assert rows[3]["paper change (%)"] == -0.32 and rows[4]["change (%)"] == pytest.approx(0.0, abs=1e-12)


def test_paper_figures_and_the_measured_values_for_every_claim(s):
    paper = study.paper_table5()
    # Table 5 prints all 16 languages of the paper; the changes are derived from its AdaptMix and
    # UniMix cells at 2 decimals, e.g. Malayalam (2.60 - 2.83) / 2.83 and Punjabi (1.61 - 1.50) / 1.50;
    # the mean from the means of its 16 rows (the printed Average row rounds both to 1.97)
    assert set(paper) == {"mean", *PAPER_LANGUAGES}
    assert paper["mal_Mlym"] == round(100 * (2.60 - 2.83) / 2.83, 2) and paper["pan_Guru"] == round(100 * (1.61 - 1.50) / 1.50, 2)
    ada = [1.93, 1.90, 1.47, 2.03, 1.43, 2.30, 1.73, 2.60, 1.87, 1.70, 1.95, 1.61, 2.57, 1.67, 2.35, 2.34]
    uni = [1.93, 1.89, 1.42, 2.05, 1.35, 2.40, 1.70, 2.83, 1.83, 1.62, 1.94, 1.50, 2.66, 1.55, 2.44, 2.44]
    assert paper["mean"] == round(100 * (sum(ada) / sum(uni) - 1), 2) and paper["asm_Beng"] == 0.0
    h = s.run("hf-bpe", 300, 9_000, 2, s.choice.mu, s.choice.eps)  # the chosen run (the one over_seeds repeats)
    toks = s.tokenizers(h, "hf-bpe", 300, 9_000)
    fert = s.fertility(toks)
    # the deployed columns of Table 7: here two of the baselines stand in for deployed tokenizers
    deployed = ("natural", "skewed")
    parity = s.parity(toks)
    here = s.paper_vs_here(fert, parity, deployed)
    assert set(here) == {c.key for c in paper_vs_here.claims("adaptmix")}
    # AdaptMix vs UniMix: over the study's 3 seeds, the mean of the per-seed changes and their t-interval
    seeds = s.over_seeds()
    assert seeds.seeds == (0, 1, 2) and seeds.fert[0] == {n: fert[n] for n in (study.UNI, study.ADAPT, "natural", "skewed")}
    assert seeds.fert[0] != seeds.fert[1] != seeds.fert[2]  # another seed: other text, other tokenizers
    per_seed = [study.change_pct(seeds.fert[k][study.UNI], seeds.fert[k][study.ADAPT])["hin_Deva"] for k in seeds.seeds]
    hindi = here["table5_hin_Deva"]
    assert isinstance(hindi, paper_vs_here.Measured) and hindi.over == "seeds"
    assert hindi.value == pytest.approx(sum(per_seed) / 3) and (hindi.lo, hindi.hi) == pytest.approx(
        stats.t_interval(per_seed)[1:])
    assert here["most_fragmented"] == hindi  # Hindi fragments most under UniMix in this toy
    assert isinstance(here["table5_mal_Mlym"], paper_vs_here.NotMeasured)  # not a toy language
    mean = {n: mx.mean(f) for n, f in fert.items()}
    headline = here["table5_mean"]
    means = [100 * (mx.mean(seeds.fert[k][study.ADAPT]) / mx.mean(seeds.fert[k][study.UNI]) - 1) for k in seeds.seeds]
    assert means[0] == pytest.approx(100 * (mean[study.ADAPT] - mean[study.UNI]) / mean[study.UNI])
    assert headline.value == pytest.approx(sum(means) / 3) and headline.lo < headline.value < headline.hi
    # AdaptMix vs the fixed mixtures and the spread: the same seeds (each seed's baselines trained on its
    # own sample), the mean of the per-seed changes and their paired t-interval
    for key, name in (("vs_skewed", "skewed"), ("vs_natural", "natural")):
        per = [100 * (mx.mean(seeds.fert[k][study.ADAPT]) / mx.mean(seeds.fert[k][name]) - 1) for k in seeds.seeds]
        assert per[0] == pytest.approx(100 * (mean[study.ADAPT] - mean[name]) / mean[name])
        m = here[key]
        assert isinstance(m, paper_vs_here.Measured) and (m.value, m.lo, m.hi) == pytest.approx(stats.t_interval(per))
    def rng(f):  # the fertility range across languages
        return max(f.values()) - min(f.values())
    spread = [100 * (rng(seeds.fert[k][study.ADAPT]) / rng(seeds.fert[k][study.UNI]) - 1) for k in seeds.seeds]
    assert (here["spread"].value, here["spread"].lo, here["spread"].hi) == pytest.approx(stats.t_interval(spread))
    # "% by which AdaptMix is below natural": positive when AdaptMix is lower, the opposite sign of vs_natural
    a, v = here["abstract_vs_natural"], here["vs_natural"]
    assert (a.value, a.lo, a.hi) == pytest.approx((-v.value, -v.hi, -v.lo))
    span = {n: max(fert[n].values()) - min(fert[n].values()) for n in (study.UNI, study.ADAPT)}
    assert spread[0] == pytest.approx(100 * (span[study.ADAPT] - span[study.UNI]) / span[study.UNI])  # seed 0
    prem = parity.values
    lowest = min(((prem[n]["rus_Cyrl"] + prem[n]["hin_Deva"]) / 2 for n in deployed))
    assert here["parity_vs_deployed"].value == pytest.approx(
        (prem[study.ADAPT]["rus_Cyrl"] + prem[study.ADAPT]["hin_Deva"]) / 2 - lowest)
    assert here["parity_vs_deployed"].over == "lines"
    assert isinstance(s.paper_vs_here(fert)["parity_vs_deployed"], paper_vs_here.NotMeasured)  # no parity
    assert "modtok[deployed]" in s.paper_vs_here(fert, parity)["parity_vs_deployed"].reason  # none installed
    setting = s.setting("hf-bpe", 300, 9_000, 2)
    assert set(setting) == set(paper_vs_here.SETTING_FIELDS) - {"model", "lr"}
    assert setting["vocabulary"] == "300 tokens, hf-bpe" and setting["iterations"].startswith("2 mixture-adjustment")
    assert "9,000" in setting["size"] and "toy text" in setting["data"] and "dev: " in setting["heldout"]
    # at the paper's count the iterations field reads as the paper's, its citation aside: no false "differs"
    paper_iterations = {c.key: c for c in paper_vs_here.claims("adaptmix")}["spread"].setting["iterations"]
    assert paper_vs_here.setting_differences({"iterations": paper_iterations},
                                             s.setting("hf-bpe", 300, 9_000, 20)) == []
    reasons = s.reasons(here, h, fert, parity, deployed)
    rows = paper_vs_here.table("adaptmix", here, setting, reasons)
    assert len(rows) == len(here) and all(r["holds?"] for r in rows)
    for c, r in zip(paper_vs_here.claims("adaptmix"), rows):  # a measured reason for every claim that fails here
        assert (r["reason"] not in ("", "reason not measured")) == (r["holds?"] == "does not hold"), (c.key, r)
        assert r["setting differs"] != "none"  # 3 toy languages, 300 tokens: every field the paper states differs
    hindi = reasons.get("table5_hin_Deva")
    if hindi:  # the share Hindi had, uniform and last, as the run recorded it
        assert f"{h.steps[0]['mixture']['hin_Deva']:.2%} -> {h.steps[-1]['mixture']['hin_Deva']:.2%} of T" in hindi
    # a value whose mean passes while its interval over seeds does not: the reason says so
    noisy = dict(here, vs_natural=paper_vs_here.Measured(-4.0, -9.0, 1.0, "seeds"))
    assert s.reasons(noisy, h, fert, parity, deployed)["vs_natural"].endswith(
        "the mean -4.000 passes the rule, its 95% interval [-9, 1] over seeds does not")
    summary = s.table5_summary(h, fert)
    assert len(summary) == 5 and "over 3 seeds" in summary[4] and f"{headline.value:+.3f}%" in summary[4]


def test_the_cost_of_the_papers_iterations_is_measured(s):
    seconds, n = s.iteration_seconds("hf-bpe", 300)
    assert seconds > 0 and n >= 2  # the fixture's choice trained iteration 0 once and one more per candidate
    assert s.iteration_seconds("hf-bpe", 12_345) is None and s.iteration_seconds("another-trainer", 300) is None
    s.run("hf-bpe", 300, 9_000, 2, 0.5, 0.1, langs=s.langs[:2])  # a subset's run is not the study's cost
    assert s.iteration_seconds("hf-bpe", 300)[1] == n
    note = s.paper_setting_cost("hf-bpe", 300, candidates=6)
    assert f"{seconds:.1f} s here (mean of {n})" in note and "20 iterations × 6" in note and "MB" in note
    assert "no AdaptMix iteration at 12,345 timed" in s.paper_setting_cost("hf-bpe", 12_345, 6)


def test_parity_is_fertility_over_english_fertility_and_needs_parallel_text_with_the_pivot(s):
    h = s.run("hf-bpe", 300, 9_000, 2, 0.5, 0.1)
    toks = {"UniMix": h.tokenizers[0], study.ADAPT: h.tokenizers[-1]}
    p = s.parity(toks)
    assert all(v["eng_Latn"] == 1.0 for v in p.values.values())
    assert [r["language"] for r in p.rows] == [study.label("rus_Cyrl"), study.label("hin_Deva"),
                                              "mean (non-English)", "Gini of token totals"]
    fert = {lang: metrics.fertility(toks[study.ADAPT], s.test_lines()[lang], lang) for lang in s.langs}
    # the paper's Table 7: fertility over English fertility (not tokens over English tokens: the words differ)
    assert p.rows[1][study.ADAPT] == pytest.approx(fert["hin_Deva"] / fert["eng_Latn"])
    totals = {lang: metrics.token_counts(toks[study.ADAPT], s.test_lines()[lang]).sum() for lang in s.langs}
    assert p.rows[1][study.ADAPT] != pytest.approx(totals["hin_Deva"] / totals["eng_Latn"])
    assert p.rows[2][study.ADAPT] == pytest.approx((fert["rus_Cyrl"] + fert["hin_Deva"]) / 2 / fert["eng_Latn"])
    lo, hi = (float(x) for x in p.rows[1][f"{study.ADAPT}, 95% interval over lines"].strip("[]").split(", "))
    assert lo < p.rows[1][study.ADAPT] < hi  # 40 random toy lines: a real spread
    assert p.rows[3]["UniMix"] == metrics.cost_gini(toks["UniMix"], s.test_lines())
    unaligned = study.AdaptMixStudy(_toy_data(parallel=False), scheme=WS)
    unaligned.choose("hf-bpe", 300, 9_000, 1, GRID[:1])
    assert unaligned.parity(toks) is None
    assert s.parity(toks, pivot="tha_Thai") is None


def test_parity_by_hand():
    # English: 4 tokens over 4 words (fertility 1); xx: 6 tokens over 2 words (3): parity 3, though
    # its token premium over English is 6 / 4 = 1.5
    out = study.parity_intervals({"t": {"en": [2, 2], "xx": [3, 3]}, "u": {"en": [2, 2], "xx": [2, 2]}},
                                 {"en": [2, 2], "xx": [1, 1]}, "en", ref="t")
    assert out["t|xx"] == (3.0, 3.0, 3.0) and out["t|en"][0] == 1.0 and out["u|xx"][0] == 2.0
    assert out["t-u|mean"] == (1.0, 1.0, 1.0)  # every line has the same ratios: no spread


def test_ablation_rows_report_the_last_iteration_and_the_selected_one(s):
    runs = {"fixed": s.run("hf-bpe", 300, 9_000, 2, 0.5, 0.1),
            "dynamic": s.run("hf-bpe", 300, 9_000, 2, 0.5, 0.1, f_best="dynamic")}
    assert runs["dynamic"].steps[0]["fertility"] == runs["fixed"].steps[0]["fertility"]
    assert runs["dynamic"].tokenizers[0] is runs["fixed"].tokenizers[0]  # one iteration 0 (branched)
    rows = s.ablation_rows(runs, "hin_Deva")
    assert [r["f_best"] for r in rows] == ["fixed", "dynamic"]
    for row, h in zip(rows, runs.values()):
        last, best = s.devtest.fertility(h.tokenizers[-1]), s.devtest.fertility(h.tokenizers[h.best()])
        assert row["mean devtest fertility (last it.)"] == mx.mean(last) and row["Hindi (last it.)"] == last["hin_Deva"]
        assert row["max devtest fertility (last it.)"] == last["hin_Deva"] and row["converged"] == h.converged()
        assert row["dev-selected it. (addition)"] == h.best() and row["its mean devtest fertility"] == mx.mean(best)


def test_budgets_keep_the_total_and_name_every_language(s):
    run = s.budgets(6_000, 300, 2, 0.5, 0.1)
    assert run.langs == s.langs and run.total_k == 900
    assert all(sum(step.k.values()) == 900 for step in run.steps)
    rows = s.budget_rows(run)
    assert [r["language"] for r in rows] == list(map(study.label, s.langs))
    assert [r["k (last)"] for r in rows] == [run.steps[-1].k[lang] for lang in s.langs]
    assert rows[0]["k (uniform)"] == 300 and rows[2]["fertility (uniform)"] == run.steps[0].score["hin_Deva"]


def _udhr_data(**changes) -> study.Data:
    """English, Chinese and Thai from the UDHR (tests/test_mixture.py's udhr_parallel): parallel
    dev (13 paragraphs) and test (the first 12 training paragraphs; a mechanics check)."""
    from dataclasses import replace

    from test_mixture import udhr_parallel

    train, dev = udhr_parallel()
    d = study.Data(list(train), train, dev, {lang: ps[:12] for lang, ps in train.items()}, True, "UDHR")
    return replace(d, **changes)


def test_spaceless_languages_take_part_in_the_study_and_its_tables():
    """Issue 43 (1): the study dropped Chinese and Thai (a spaced-only devtest, runs without them)."""
    d = _udhr_data()
    assert study.spaceless_problem(d) is None
    s = study.AdaptMixStudy(d, scheme=TRAINING_SCHEME)
    s.choose("hf-bpe", 600, 9_000, 1, GRID[:1])
    h = s.run("hf-bpe", 600, 9_000, 1, *GRID[0])
    assert h.langs == s.langs == ["eng_Latn", "zho_Hans", "tha_Thai"] and s.excluded == {} and h.excluded == {}
    assert all(h.steps[0]["used"][lang] > 0 for lang in s.langs)
    fert = s.fertility(s.tokenizers(h, "hf-bpe", 600, 9_000))
    test = s.test_lines()
    assert fert[study.UNI]["zho_Hans"] == metrics.pivot_fertility(h.tokenizers[0], test["zho_Hans"], test["eng_Latn"])
    assert [r["language"] for r in s.fertility_rows(fert)][:3] == list(map(study.label, s.langs))
    assert s.setting("hf-bpe", 600, 9_000, 1)["data"].startswith("3 languages (eng_Latn, zho_Hans, tha_Thai); UDHR")
    assert s.budgets(2_000, 300, 1, 0.5, 0.1).langs == s.langs  # sequential budgets on them too


def test_spaceless_languages_without_parallel_dev_are_refused_or_left_out_with_the_reason():
    dev = _udhr_data().dev
    bad = _udhr_data(dev={**dev, "tha_Thai": dev["tha_Thai"][1:]})  # one line short: not parallel
    problem = study.spaceless_problem(bad)
    assert problem == "the dev text is not parallel (lines: zho_Hans 13, tha_Thai 12, eng_Latn 13)"
    with pytest.raises(MissingDevTextError, match="not parallel"):
        study.AdaptMixStudy(bad, scheme=TRAINING_SCHEME).run("hf-bpe", 600, 9_000, 1, *GRID[0])
    s = study.AdaptMixStudy(bad, scheme=TRAINING_SCHEME, exclude_spaceless=True)
    why = f"{mx.EXCLUDED_SPACELESS}, since {problem}"
    assert s.langs == ["eng_Latn"] and s.excluded == {"zho_Hans": why, "tha_Thai": why}
    assert f"; left out: zho_Hans, tha_Thai ({why}); UDHR" in s.setting("hf-bpe", 600, 9_000, 1)["data"]
    assert s.languages_line() == f"1 language: English (eng_Latn); left out: Chinese (zho_Hans), Thai (tha_Thai) ({why})"
    left = study.AdaptMixStudy(_udhr_data(), scheme=TRAINING_SCHEME, exclude_spaceless=True)  # asked, not needed
    assert left.excluded["tha_Thai"] == mx.EXCLUDED_SPACELESS


def _cli_corpus(tmp_path, train, dev):
    (tmp_path / "train").mkdir()
    (tmp_path / "dev").mkdir()
    for lang in train:
        (tmp_path / "train" / f"{lang}.txt").write_text("\n".join(train[lang]) + "\n", encoding="utf-8")
        (tmp_path / "dev" / f"{lang}.txt").write_text("\n".join(dev[lang]) + "\n", encoding="utf-8")
    manifest = tmp_path / "corpora.json"
    manifest.write_text(json.dumps({lang: [str(tmp_path / "train" / f"{lang}.txt")] for lang in train}))
    return manifest, [str(tmp_path / "dev" / f"{lang}.txt") for lang in train]


def test_the_command_names_the_languages_used_and_left_out(tmp_path):
    """Issue 43 (1), as ``modtok adaptmix`` runs it: the summary said "6 languages" while
    Chinese, Japanese and Thai were left out."""
    from modtok.outputs import read_run
    from test_mixture import udhr_parallel

    manifest, dev = _cli_corpus(tmp_path, *udhr_parallel())
    said = []
    made = study.run(study.AdaptMixOptions(tmp_path / "am", 9_000, vocab=600, manifest=manifest, iterations=2, dev=dev),
                     log=said.append)
    assert "3 languages read; AdaptMix on 3: eng_Latn, zho_Hans, tha_Thai; none left out" in said[0]
    assert "zho_Hans, tha_Thai (written without spaces): tokens per whitespace word of the parallel eng_Latn" in said[0]
    lines = made.lines()
    assert lines[0].startswith("AdaptMix on 3 languages: eng_Latn, zho_Hans, tha_Thai (zho_Hans, tha_Thai: tokens "
                               "per whitespace word of the parallel eng_Latn dev line)")
    assert lines[0].endswith("; none left out")
    record = read_run(tmp_path / "am")["adaptmix"]
    assert record["languages"] == ["eng_Latn", "zho_Hans", "tha_Thai"] and record["excluded"] == {}
    assert record["unchanging"] is None and "eng_Latn" in record["fertility"]["tha_Thai"]
    made = study.run(study.AdaptMixOptions(tmp_path / "ex", 9_000, vocab=600, manifest=manifest, iterations=1,
                                           dev=dev[:1], exclude_spaceless=True))  # only English's dev file needed
    assert made.lines()[0] == f"AdaptMix on 1 language: eng_Latn; left out: zho_Hans, tha_Thai ({mx.EXCLUDED_SPACELESS})"
    run = read_run(tmp_path / "ex")
    assert run["adaptmix"]["excluded"] == {lang: mx.EXCLUDED_SPACELESS for lang in ("zho_Hans", "tha_Thai")}
    assert run["args"]["exclude_spaceless"] is True


def test_a_budget_over_all_the_text_is_one_tokenizer_not_four_results(tmp_path):
    """Issue 43 (2): with T over every language's text, UniMix = AdaptMix = natural = skewed
    were reported as four results, with "does not hold" and "same direction: yes" for 0.000."""
    s = study.AdaptMixStudy(_toy_data(), scheme=WS)
    total = sum(s.pool.available().values())
    s.choose("hf-bpe", 300, total + 1000, 2, GRID[:1])
    h = s.run("hf-bpe", 300, total + 1000, 2, *GRID[0])
    same = s.unchanging(h, "hf-bpe", 300, total + 1000)
    assert same.baselines and same.reason == h.unchanging()
    assert same.statement.startswith(f"The mixture cannot change what is trained on: the budget T = {total + 1000:,}")
    assert same.statement.endswith("UniMix, AdaptMix and the baselines (natural, natural τ=3.3, skewed) are one "
                                   "tokenizer, one result.")
    toks = s.tokenizers(h, "hf-bpe", 300, total + 1000)
    fert = s.fertility(toks)
    assert all(f == fert[study.UNI] for f in fert.values())  # one tokenizer under six names
    here = s.paper_vs_here(fert, None, (), same)
    rows = {c.key: r for c, r in zip(paper_vs_here.claims("adaptmix"),
                                     paper_vs_here.table("adaptmix", here, s.setting("hf-bpe", 300, total, 2)))}
    verdict = "not comparable: the budget covers all the text, every mixture is the same tokenizer"
    for key in ("table5_mean", "table5_eng_Latn", "table5_hin_Deva", "most_fragmented", "spread", "vs_natural",
                "vs_skewed", "abstract_vs_natural"):
        assert rows[key]["holds?"] == verdict, key
    assert rows["table5_mal_Mlym"]["holds?"] == "not measured: mal_Mlym is not in this data"
    assert not any(r["holds?"] in ("holds", "does not hold") for r in rows.values())
    # a budget under the text: the mixture changes the sample, and every comparison is made
    under = s.run("hf-bpe", 300, 9_000, 2, *GRID[0])
    assert s.unchanging(under, "hf-bpe", 300, 9_000) is None
    # the command says so instead of the last update's move, and records it in run.json
    from modtok.outputs import read_run

    d = _toy_data()
    manifest, dev = _cli_corpus(tmp_path, d.train, d.dev)
    lines = study.run(study.AdaptMixOptions(tmp_path / "am", 10 ** 7, vocab=300, iterations=2, manifest=manifest,
                                            dev=dev, scheme=WS)).lines()
    said = [line for line in lines if line.startswith("the mixture cannot change what is trained on: the budget T = "
                                                      "10,000,000 characters covers all the text")]
    assert len(said) == 1 and said[0].endswith("the 2 iterations are one result, not a comparison")
    assert not any("converged" in line for line in lines)
    assert read_run(tmp_path / "am")["adaptmix"]["unchanging"].startswith("the budget T = 10,000,000")


def test_the_headline_is_the_mean_of_the_per_seed_changes_with_their_t_interval():
    def fert(uni, ada):  # x moves, y does not: the mean moves half as much as x
        return {study.UNI: {"x": uni, "y": 2.0}, study.ADAPT: {"x": ada, "y": 2.0}}

    runs = study.SeedRuns((0, 1, 2), {0: fert(2.0, 1.92), 1: fert(2.0, 1.96), 2: fert(2.0, 2.0)}, {})
    m = runs.headline()
    # per seed the mean fertility moves -2%, -1%, 0%: mean -1, sd 1, t(0.975, 2 df) = 4.3027
    assert runs.mean_changes() == pytest.approx([-2.0, -1.0, 0.0])
    assert isinstance(m, paper_vs_here.Measured) and m.over == "seeds"
    assert (m.value, m.lo, m.hi) == pytest.approx((-1.0, -1 - 4.3027 / 3 ** 0.5, -1 + 4.3027 / 3 ** 0.5), abs=1e-4)
    below = {c.key: c for c in paper_vs_here.claims("adaptmix")}["most_fragmented"]  # rule "below 0"
    assert below.verdict(m) == "does not hold"  # the mean is below 0, the interval is not
    steady = study.SeedRuns((0, 1, 2), {0: fert(2.0, 1.92), 1: fert(2.0, 1.94), 2: fert(2.0, 1.96)}, {})
    assert below.verdict(steady.headline()) == "holds"  # -2, -1.5, -1: the interval [-2.74, -0.26]
    one = study.SeedRuns((0,), {0: fert(2.0, 1.92)}, {}).headline()
    assert one == pytest.approx(-2.0) and not isinstance(one, paper_vs_here.Measured)  # one seed: a point
    with pytest.raises(UsageError, match="seeds = 0"):
        study.AdaptMixStudy(_toy_data(), scheme=WS, seeds=0)


def test_the_seeds_are_read_back_from_the_results_cache(tmp_path, monkeypatch):
    """A second Run All (a new study on the same text) trains nothing for the seeds: every seed's
    AdaptMix run and fixed mixtures are in the results cache, keyed on the seed."""
    monkeypatch.setenv("MODTOK_RESULTS", str(tmp_path))
    first = study.AdaptMixStudy(_toy_data(), seed=0, scheme=WS)
    first.choose("hf-bpe", 300, 9_000, 2, GRID)
    runs = first.over_seeds()
    trained = []
    for name in ("train_on", "adaptmix"):  # a fixed mixture's training, an AdaptMix run
        monkeypatch.setattr(mx, name, lambda *a, _real=getattr(mx, name), _n=name, **kw: trained.append(_n) or _real(*a, **kw))
    again = study.AdaptMixStudy(_toy_data(), seed=0, scheme=WS)
    again.choose("hf-bpe", 300, 9_000, 2, GRID)
    assert again.over_seeds().fert == runs.fert and trained == []


def test_the_explorer_starts_at_the_size_notebook_06_states():
    """Issue 44: a widget's new setting in 06 answers in <= 10 s at normal size, from a smaller explorer
    that the notebook states: each of the run's iterations, vocabulary and T cut to study.EXPLORER."""
    e = study.explorer_size(10, 32_000, 500_000)  # notebook 06 at normal size
    assert (e.iterations, e.vocab, e.per_lang) == (3, 8_000, 50_000) == tuple(study.EXPLORER.values())
    assert e.run == (10, 32_000, 500_000) and "(the run: 32,000)" in e.statement
    smoke = study.explorer_size(2, 1_000, 16_000)  # nothing to cut: the explorer starts at the run
    assert (smoke.iterations, smoke.vocab, smoke.per_lang) == smoke.run and "smaller" not in smoke.statement
    assert study.explorer_size(10, 4_000, 500_000).vocab == 4_000  # never larger than the run
    source = NOTEBOOK.read_text(encoding="utf-8")  # the notebook says the size it runs, and starts its sliders there
    stated = (f"starts at {study.EXPLORER['iterations']} iterations, a\n# vocabulary of {study.EXPLORER['vocab'] // 1000}k "
              f"and T = {study.EXPLORER['per_lang'] // 1000}k characters a language")
    assert stated in source and "print(E.statement, S.explore_ahead(E, MU, EPS, TRAINER)" in source
    for slider in ("w_budget = widgets.budget_slider(E.per_lang", "w_iters = widgets.budget_slider(E.iterations",
                   "w_vocab = widgets.budget_slider(E.vocab"):
        assert slider in source


def test_make_demo_computes_the_explorers_other_trainers_ahead_and_the_menu_reads_them_back(tmp_path, monkeypatch):
    """Issue 44: 06's trainer menu at normal size took 33-46 s (HF BPE) and 104-189 s (sentencepiece
    Unigram), the peers' own training. With $MODTOK_AHEAD (make demo sets it) the widget cell trains the
    explorer's start with every other trainer into the results cache; a class's kernel (a new study on
    the same text) then picks each from the cache, trains nothing, and is told where it came from."""
    monkeypatch.setenv("MODTOK_RESULTS", str(tmp_path))
    size = study.explorer_size(2, 300, 3_000)  # smoke-like: the explorer at the run's size
    setting = dict(mu=0.5, eps=0.1, budget=size.per_lang, iterations=size.iterations, vocab=size.vocab)
    others = [t for t in mx.TRAINERS if t != "modtok-bpe"]
    first = study.AdaptMixStudy(_toy_data(), seed=0, scheme=WS)
    line = first.explore_ahead(size, 0.5, 0.1, "modtok-bpe")  # not demo: the start alone trained, the missing named
    assert line.startswith("not in the results cache") and all(t in line for t in others)
    assert {k[0] for k in first._runs} == {"modtok-bpe"}  # the panel's first view: trained whatever its estimate
    monkeypatch.setenv(cache.AHEAD, "1")
    line = first.explore_ahead(size, 0.5, 0.1, "modtok-bpe")
    assert line.startswith("the trainer menu, computed ahead") and all(f"{t} " in line for t in others)
    assert {k[0] for k in first._runs} == set(mx.TRAINERS)
    monkeypatch.delenv(cache.AHEAD)
    trained = []
    monkeypatch.setattr(mx, "adaptmix", lambda *a, _real=mx.adaptmix, **kw: trained.append(a[0].name) or _real(*a, **kw))
    again = study.AdaptMixStudy(_toy_data(), seed=0, scheme=WS)  # a class's kernel
    line = again.explore_ahead(size, 0.5, 0.1, "modtok-bpe")
    assert line.startswith("the trainer menu from the results cache: ") and "not in" not in line
    for t in others:
        shown = again.explore(**setting, trainer=t, langs=again.langs)
        ahead = first.explore(**setting, trainer=t, langs=first.langs)
        assert shown["history"].steps == ahead["history"].steps and shown["source"].startswith("from the results cache")
        assert ahead["source"] == ""  # first trained it: nothing read back
    assert trained == []
    assert again.explore(**setting, trainer="modtok-bpe", langs=again.langs)["source"].startswith("from the results cache")
    assert trained == []  # the start itself was read back by explore_ahead


def test_every_run_of_a_study_measures_dev_on_one_devset_per_languages(monkeypatch):
    """The dev split is cut into pre-tokens once per kernel and languages (3.2 s for 16 x 997 FLORES lines
    at load 5), not once per run: the grid's runs and every widget move made it again."""
    made = []
    real = mx.DevSet.__init__
    monkeypatch.setattr(mx.DevSet, "__init__", lambda self, dev, langs: made.append(tuple(langs)) or real(self, dev, langs))
    monkeypatch.setenv("MODTOK_RESULTS", "none")  # every run trained here, none read back
    st, settings = study.AdaptMixStudy(_toy_data(), seed=0, scheme=WS), [(300, *GRID[0]), (300, *GRID[1]), (400, 0.5, 0.1)]
    runs = [st.run("hf-bpe", vocab, 9_000, 2, mu, eps) for vocab, mu, eps in settings]
    sub = st.explore(0.5, 0.1, 3_000, 2, 300, "hf-bpe", st.langs[:2])["history"]
    assert made == [tuple(st.langs), tuple(st.langs[:2])]
    monkeypatch.setattr(mx.DevSet, "__init__", real)  # a fresh study (its own DevSets): the same runs
    fresh = study.AdaptMixStudy(_toy_data(), seed=0, scheme=WS)
    for h, (vocab, mu, eps) in zip(runs, settings, strict=True):
        assert json.dumps(h.to_json()) == json.dumps(fresh.run("hf-bpe", vocab, 9_000, 2, mu, eps).to_json())
    assert sub.steps == fresh.explore(0.5, 0.1, 3_000, 2, 300, "hf-bpe", st.langs[:2])["history"].steps
