"""The parity-aware BPE study (modtok.studies.parity_bpe, notebook 05's harness) at toy sizes."""

from __future__ import annotations

import itertools
import random

import numpy as np
import pytest

from modtok import mixture
from modtok.bpe import parity
from modtok.errors import DataError, ParityConfigError
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


def test_mixture_rows_name_every_setting(study):
    rows = study.mixture_rows()
    assert [r["language"] for r in rows] == [f"{data.lang_name(lang)} ({lang})" for lang in study.langs]
    assert list(rows[0]) == ["language", "tier", "CC-100 GiB", "τ = 3.3 chars", "τ = 1 chars", "balanced chars"]
    assert [r["tier"] for r in rows] == ["high", "medium", "low"]  # 100, 10, 1 GiB
    assert rows[0]["τ = 1 chars"] == data.chars_per_language(study.mixture(pb.NATURAL))["eng_Latn"]


def test_spec_is_canonical_and_its_config_is_the_run():
    s = _toy()
    classical = s.spec(variant="classical", j_frac=0.5, window=7, dev_lines=10)
    assert classical == s.spec(variant="classical")  # J, w, α and dev lines mean nothing to it
    assert s.spec(window=50, alpha=3.0) == s.spec()  # only the window variant has w and α
    win = s.spec(pb.NATURAL, "window", 0.333, 50, 3.0, 10, 300, ["rus_Cyrl", "eng_Latn"])
    assert win == (pb.NATURAL, "window", 0.33, 50, 3.0, 10, 300, ("rus_Cyrl", "eng_Latn"))
    assert win.config() == parity.ParityConfig(variant="window", window=50, alpha=3.0, hybrid=int(0.33 * 44))
    assert s.spec(variant="ratio").config().ratios == (1.0, 1.0, 1.0)
    assert s.spec() == (pb.TAU, "base", 0.0, 100, 2.0, 30, VOCAB, tuple(s.langs))
    with pytest.raises(ParityConfigError, match="unknown variant 'windowed'"):
        s.spec(variant="windowed")
    with pytest.raises(DataError, match="no corpus size for rus_Cyrl"):
        pb.ParityStudy(s.train, s.dev, s.test, vocab=VOCAB, scheme=SCHEME, sizes={"eng_Latn": 1, "hin_Deva": 1})


def test_table1_has_its_columns_and_parity_lowers_the_gini(study):
    """The toy has to show the paper's effect: every parity-aware variant that ranks by
    the dev set has a lower devtest Gini than classical BPE on the same mixture."""
    rows = study.table1()
    assert [(r["mixture"], r["tokenizer"]) for r in rows] == [
        (m, name) for m in ("τ = 3.3", "τ = 1") for name in pb.TABLE1_VARIANTS]
    assert list(rows[0]) == ["mixture", "tokenizer", "Gini ↓", "Gini per byte", "global compression (B/tok) ↑",
                             "mean per-language B/tok", "utilisation", "Rényi eff.", "fertility", "devtest tokens"]
    for r in rows:
        ev = study.evaluate(study.named(r["tokenizer"], pb.TAU if r["mixture"] == "τ = 3.3" else pb.NATURAL))
        assert r["Gini ↓"] == ev["row"]["gini"] and r["devtest tokens"] == ev["row"]["tokens"]
    for block in (rows[:5], rows[5:]):
        classical = block[0]["Gini ↓"]
        assert all(r["Gini ↓"] < classical for r in block[1:4]), block  # base, hybrid, window
    hybrid = study.evaluate(study.named("hybrid (J = K/2)"))
    assert hybrid["merges"][parity.GLOBAL] == (VOCAB - 256) // 2
    cut, comp = study.price(pb.TAU)
    base, classical = rows[1], rows[0]
    assert cut == pytest.approx(1 - base["Gini ↓"] / classical["Gini ↓"]) and cut > 0.3
    compression = "global compression (B/tok) ↑"
    assert comp == pytest.approx(base[compression] / classical[compression] - 1)


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
        assert r["parity Gini"] < r["classical Gini"]


def test_tau_sweep_the_largest_language_loses_share_as_tau_grows(study):
    taus = (pb.NATURAL, 1.5, 2.0, pb.TAU)
    rows = study.tau_sweep(taus)
    shares = [r["English share of the text"] for r in rows]
    assert shares == sorted(shares, reverse=True) and shares[0] > shares[-1]  # share ∝ size^(1/τ)
    for tau, r in zip(taus, rows):
        cut, comp = study.price(tau)
        assert r["Gini cut %"] == 100 * cut and r["global compression change %"] == 100 * comp


def test_per_language_tier_and_ablation_rows(study):
    fig2 = study.per_language(["classical", "parity (base)"], "bytes per token")
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
    assert list(bal[0]) == ["setting", "tokenizer", "gini", "global_compression"]
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
    assert fresh.evaluate(spec) == study.evaluate(spec)


def test_explore_and_its_rendering(study):
    empty = study.explore("base", pb.TAU, 0.0, 100, 2.0, 30, VOCAB, ("eng_Latn",))
    assert empty["rows"] == [] and len(plots.parity_explore(empty)) == 2
    two = study.explore("window", pb.NATURAL, 0.0, 20, 2.0, 10, 350, ("hin_Deva", "eng_Latn"))
    assert two["langs"] == ("eng_Latn", "hin_Deva")  # the study's order
    assert two["key"][:2] == (pb.NATURAL, "window") and two["key"][5:7] == (10, 350)
    assert [r["tokenizer"] for r in two["rows"]] == ["classical", "window"] and len(two["per_lang"]) == 4
    classical = study.evaluate(study.spec(pb.NATURAL, "classical", vocab=350, langs=two["langs"]))
    assert two["rows"][0]["gini"] == classical["row"]["gini"]
    shown = plots.parity_explore(two)
    assert len(shown) == 2 and [t.name for t in shown[1].data] == ["classical", "window"]


def test_load_on_the_wordfreq_default(monkeypatch):
    for var in ("MODTOK_POOL", "MODTOK_FLORES", "MODTOK_MANIFEST"):
        monkeypatch.delenv(var, raising=False)
    s = pb.load(["eng_Latn", "rus_Cyrl"], 300, SCHEME, train_chars=3_000, eval_lines=20)
    assert s.langs == ["eng_Latn", "rus_Cyrl"] and not s.parallel
    assert "wordfreq" in s.dev_source and "NOT parallel" in s.dev_source and s.n_dev == 300
    assert s.dev == data.load_wordfreq(s.langs, n_lines=300, seed=7)
    corpora = data.default_corpora(s.langs, train_chars=3_000, eval_lines=20)
    assert s.train == corpora.train and s.test == corpora.eval and s.source == corpora.source


def test_load_on_pool_and_flores(pool_root, flores_root, monkeypatch):
    monkeypatch.setenv("MODTOK_POOL", str(pool_root))
    monkeypatch.setenv("MODTOK_FLORES", str(flores_root))
    monkeypatch.delenv("MODTOK_MANIFEST", raising=False)
    s = pb.load(["eng_Latn", "hin_Deva"], 300, SCHEME, train_chars=5_000, eval_lines=20, tau=2.0)
    assert s.parallel and s.tau == 2.0 and s.spec().setting == 2.0
    assert s.dev == data.load_flores(s.langs, "dev") and s.dev_source.startswith("FLORES-200 dev (")
    assert s.tiers == {"eng_Latn": "high", "hin_Deva": "medium"}
