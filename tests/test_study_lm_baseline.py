"""Notebook 04's Baseline (one shared tokenizer, monolingual batches) and the interval over
evaluation lines of its bits-per-byte claims (issue 42)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from lm_helpers import TOY_CORPUS, one_torch_thread, toy_tokenizer  # noqa: F401 (autouse fixture)

from modtok.lm import infer
from modtok.lm import train as trainer
from modtok.lm.batches import lm_vocab_size
from modtok.lm.loss import IGNORE, gathered_cross_entropy, restricted_cross_entropy
from modtok.lm.model import config
from modtok.lm.sampling import SubtokenizerSampler, default_mixture, mono, samp_sub
from modtok.lm.train import TrainConfig
from modtok.studies import paper_vs_here
from modtok.studies.modular_tokenizers import lm

LANGS = list(TOY_CORPUS)
TRAIN = {lang: lines * 3 for lang, lines in TOY_CORPUS.items()}
PARALLEL = {lang: lines[:4] for lang, lines in TOY_CORPUS.items()}  # the same number of lines in every language
STEPS, BATCH, SEQ = 4, 2, 16


@pytest.fixture(scope="module")
def tok():
    return toy_tokenizer()


@pytest.fixture(scope="module")
def runs(tok, tmp_path_factory):
    """The Baseline and two schemes, trained as notebook 04 trains them; the Baseline's BatchSource
    is caught on its way into ``train`` so that its batches can be read back."""
    sources = []
    real_train = trainer.train  # lm imports it when it trains (lm.py keeps torch out of its import)

    def catching(model_cfg, train_cfg, source, out_dir, **kw):
        sources.append((model_cfg, source))
        return real_train(model_cfg, train_cfg, source, out_dir, **kw)

    model_cfg = config("tiny", lm_vocab_size(tok), max_seq_len=SEQ)
    train_cfg = TrainConfig(steps=STEPS, lr=1e-2, warmup_steps=1, ckpt_every=STEPS, log_every=1)
    mixture = default_mixture(LANGS)
    runs_dir = tmp_path_factory.mktemp("runs")
    mp = pytest.MonkeyPatch()
    mp.setattr(trainer, "train", catching)
    try:
        base = lm.train_baseline(tok, "whitespace", TRAIN, mixture, model_cfg, train_cfg, BATCH, SEQ, runs_dir)
    finally:
        mp.undo()
    schemes = {"Mono-only": mono(), "Samp_Sub_1(0.5)": samp_sub(1, 0.5)}
    trained = lm.train_schemes(tok, TRAIN, schemes, mixture, model_cfg, train_cfg, BATCH, SEQ, runs_dir)
    return base, sources[0], trained, mixture


def test_the_baseline_trains_one_shared_tokenizer_on_monolingual_batches(tok, runs):
    base, (model_cfg, source), _, mixture = runs
    shared = base.tokenizer
    # one joint BPE of the modular tokenizer's total size, every language's view the whole of it
    assert shared is source.tokenizer and shared is not tok and shared.vocab_size <= tok.vocab_size
    assert all(list(shared.ids([lang])) == list(range(shared.vocab_size)) for lang in LANGS)
    assert model_cfg.vocab_size == lm_vocab_size(shared) == base.model.cfg.vocab_size
    assert len(base.curve) == STEPS and base.seconds > 0
    # each step: the schemes' batch language (the same draw), the full shared tokenizer and softmax,
    # and every line between two boundaries is a whole training line of that one language
    schemes_draw = SubtokenizerSampler(mono(), mixture, seed=0)
    langs_seen = set()
    for step in range(12):
        batch = source.batch(step)
        assert batch.lang == schemes_draw.draw(step).lang and batch.langs is None
        assert batch.active_ids.tolist() == list(range(lm_vocab_size(shared)))
        langs_seen.add(batch.lang)
        for row in batch.idx.tolist():
            cut = [i for i, t in enumerate(row) if t == source.doc]
            for a, b in zip(cut, cut[1:]):
                assert shared.decode(row[a + 1 : b]) in TOY_CORPUS[batch.lang]
    assert len(langs_seen) > 1  # the draw moves between languages, a batch never does


def test_the_baseline_has_its_own_row_in_the_table(tok, runs):
    base, _, trained, _ = runs
    rows = lm.evaluate_schemes(trained.models, tok, PARALLEL, baseline=base)
    runs_ = [*trained.models, lm.BASELINE]
    table = lm.bpb_table(rows, runs_, infer.SETTINGS, LANGS)
    assert [(r["scheme"], r["setting"]) for r in table] == (
        [(s, st) for s in trained.models for st in infer.SETTINGS] + [(lm.BASELINE, "Full")])
    for lang in LANGS:  # the Baseline's cell: its model under its own tokenizer
        direct = infer.evaluate(base.model, base.tokenizer, PARALLEL[lang])
        assert table[-1][lang] == pytest.approx(direct.bpb)
        assert sum(direct.line_nats) == pytest.approx(direct.nats)
    assert lm.mean_bpb(rows, runs_, ["Full"])[-1]["bpb"] == pytest.approx(np.mean([table[-1][x] for x in LANGS]))
    here = lm.paper_values(rows, [{"scheme": s, "mean": 0.0} for s in runs_], [], "Mono-only",
                           "Samp_Sub_1(0.5)", "Samp_Sub_1(0.5)")
    b = np.mean([table[-1][x] for x in LANGS])
    sub_full = np.mean([r[x] for r in table if r["scheme"] == "Samp_Sub_1(0.5)" and r["setting"] == "Full" for x in LANGS])
    assert isinstance(here["samp_sub_recovers_baseline"], paper_vs_here.Measured)
    assert here["samp_sub_recovers_baseline"].value == pytest.approx(100 * (1 - sub_full / b))
    assert here["samp_sub_recovers_baseline"].over == "lines"
    # failing bits-per-byte claims on Lang name the cells compared and the size of Lang's softmax
    worse = dict(here, lang_vs_full=paper_vs_here.Measured(1.0, 0.9, 1.1, "lines"),
                 mono_only_matches_baseline=paper_vs_here.Measured(50.0, 40.0, 60.0, "lines"))
    why = lm.reasons(worse, [], rows, tok, "Mono-only", "Samp_Sub_1(0.5)")
    assert set(why) == {"lang_vs_full", "mono_only_matches_baseline"}
    means = {(m["scheme"], m["setting"]): m["bpb"] for m in lm.mean_bpb(rows, runs_, ["Lang", "Full"])}
    assert f"Mono-only {means['Mono-only', 'Full'] - means['Mono-only', 'Lang']:.3f}" in why["lang_vs_full"]
    assert f"the Baseline {b:.3f}" in why["mono_only_matches_baseline"]
    assert f"Full's over all {lm_vocab_size(tok):,}" in why["lang_vs_full"]
    no_base = lm.paper_values([r for r in rows if r["scheme"] != lm.BASELINE], [{"scheme": s, "mean": 0.0} for s in runs_],
                              [], "Mono-only", "Samp_Sub_1(0.5)", "Samp_Sub_1(0.5)")
    assert isinstance(no_base["mono_only_matches_baseline"], paper_vs_here.NotMeasured)


def test_per_line_totals_add_up_to_the_setting_totals(tok, runs):
    _, _, trained, _ = runs
    model = trained.models["Mono-only"]
    for enc, out in [(["deu_Latn"], ["deu_Latn"]), (None, ["deu_Latn"])]:  # Lang, and Full-Lang (some uncovered)
        r = infer.evaluate(model, tok, PARALLEL["deu_Latn"], enc, out, uncovered="count")
        assert len(r.line_nats) == len(r.line_bytes) == len(PARALLEL["deu_Latn"])
        assert sum(r.line_nats) == pytest.approx(r.nats)
        assert sum(r.line_bytes) == pytest.approx(r.bytes - r.uncovered_bytes)


def _rows(lines_bpb: dict[tuple[str, str], list[float]]) -> list[dict]:
    """Evaluation rows of one language from per-line bits per byte (every line 2 bytes)."""
    out = []
    for (scheme, setting), bpb in lines_bpb.items():
        out.append({"scheme": scheme, "setting": setting, "lang": "x", "bpb": float(np.mean(bpb)), "coverage": 1.0,
                    "line_nats": [2 * b * math.log(2) for b in bpb], "line_bytes": [2.0] * len(bpb)})
    return out


def test_lang_vs_full_is_a_share_of_mono_onlys_gap_with_an_interval_over_lines():
    """By hand: Mono-only's gap (Full - Lang) is 1 bpb on both lines; Samp_Sub's is 0 on line 1 and
    1 on line 2. A replicate draws lines {1, 1}, {1, 2} or {2, 2}: Sub's gap is 0, 0.5 or 1, Mono's
    always 1, so the share is 0.5 with the whole range [0, 1] as its 95% interval (each end has
    a quarter of the draws). The same totals spread evenly over the lines have no spread at all."""
    speed, fid = [], [{"scheme": s, "mean": 0.0} for s in ("m", "s")]
    mono_rows = {("m", "Lang"): [1.0, 1.0], ("m", "Full"): [2.0, 2.0]}
    uneven = _rows(mono_rows | {("s", "Lang"): [1.0, 1.0], ("s", "Full"): [1.0, 2.0]})
    share = lm.paper_values(uneven, fid, speed, "m", "s", "s")["lang_vs_full"]
    assert share == paper_vs_here.Measured(0.5, 0.0, 1.0, "lines")
    even = _rows(mono_rows | {("s", "Lang"): [1.0, 1.0], ("s", "Full"): [1.5, 1.5]})
    assert lm.paper_values(even, fid, speed, "m", "s", "s")["lang_vs_full"] == paper_vs_here.Measured(0.5, 0.5, 0.5,
                                                                                                     "lines")
    claim = {c.key: c for c in paper_vs_here.claims("modular_tokenizers_lm")}["lang_vs_full"]
    # the paper's near-parity (at most 0.69 of Mono-only's gap, the whole interval): the even case holds;
    # the uneven one has the same point but its interval reaches Mono-only's whole gap, so it does not
    assert claim.verdict(lm.paper_values(even, fid, speed, "m", "s", "s")["lang_vs_full"]) == "holds"
    assert claim.verdict(share) == "does not hold"
    assert claim.verdict(paper_vs_here.Measured(1.0, 0.9, 1.1, "lines")) == "does not hold"  # no better than Mono-only


def test_text_that_is_not_parallel_gives_a_point_estimate_only():
    rows = _rows({("m", "Lang"): [1.0, 1.0], ("m", "Full"): [2.0, 2.0], ("s", "Lang"): [1.0, 1.0],
                  ("s", "Full"): [1.5, 1.5]})
    rows += [dict(r, lang="y", line_nats=r["line_nats"] + r["line_nats"][:1], line_bytes=r["line_bytes"] + [2.0])
             for r in rows]  # a second language with three lines: no line unit shared by both
    value = lm.over_lines(rows, {"l": ("s", "Lang"), "f": ("s", "Full")}, lambda m: m["f"] - m["l"])
    assert type(value) is float and value == pytest.approx(0.5)


def test_per_row_cross_entropy_adds_up_to_the_summed_one():
    g = torch.Generator().manual_seed(0)
    h, w = torch.randn(3, 5, 8, generator=g), torch.randn(20, 8, generator=g)
    active = torch.tensor([1, 4, 7, 9, 15])
    targets = active[torch.randint(0, 5, (3, 5), generator=g)]
    targets[0, 3:] = IGNORE  # padding scores nothing
    rows = gathered_cross_entropy(h, w[active], None, targets, active, per_row=True)
    assert rows.shape == (3,) and torch.allclose(rows.sum(), restricted_cross_entropy(h, w, None, targets, active))
    assert torch.allclose(rows[0], restricted_cross_entropy(h[:1], w, None, targets[:1], active))


def test_samp_full_narrows_gap_has_an_interval_over_lines():
    """By hand: Mono-only's gap (Full - Lang) is 1 bpb on both lines; Samp_Full's is 1 on line 1
    and 0 on line 2. Mono-only's gap minus Samp_Full's is 0, 0.5 or 1 as the replicate draws lines
    {1, 1}, {1, 2} or {2, 2}: the point 0.5, the whole range [0, 1] as its 95% interval, so the
    direction ("above 0") is not established; with Samp_Full's gap 0 on both lines it is."""
    speed, fid = [], [{"scheme": s, "mean": 0.0} for s in ("m", "f")]
    mono_rows = {("m", "Lang"): [1.0, 1.0], ("m", "Full"): [2.0, 2.0]}
    uneven = _rows(mono_rows | {("f", "Lang"): [1.0, 1.0], ("f", "Full"): [2.0, 1.0]})
    narrows = lm.paper_values(uneven, fid, speed, "m", "f", "f")["samp_full_narrows_gap"]
    assert narrows == paper_vs_here.Measured(0.5, 0.0, 1.0, "lines")
    claim = {c.key: c for c in paper_vs_here.claims("modular_tokenizers_lm")}["samp_full_narrows_gap"]
    assert claim.verdict(narrows.value) == "holds" and claim.verdict(narrows) == "does not hold"
    closed = _rows(mono_rows | {("f", "Lang"): [1.0, 1.0], ("f", "Full"): [1.0, 1.0]})
    assert claim.verdict(lm.paper_values(closed, fid, speed, "m", "f", "f")["samp_full_narrows_gap"]) == "holds"
