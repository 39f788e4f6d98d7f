"""The R0/R1/R2 continued-pretraining experiment (modtok.studies.pretoken_floor.continued_pretraining, §VI–VII analog).

Oracles: a model with uniform logits scores log2(V) bits per scored token, so
bits per byte = log2(V) * (tokens - 1) / (bytes - bytes of the first token);
the bootstrap on pieces whose replicates can be enumerated by hand; pieces
rebuild the text and fit their byte budget; stream batches carry every byte
of the text once under any tokenizer; a tiny end-to-end run on the pool.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from modtok.bpe import repair
from modtok.errors import UsageError
from modtok.evaluation import stats
from modtok.lm.batches import boundary_id, lm_vocab_size
from modtok.lm.model import LM, config
from modtok.studies.pretoken_floor import continued_pretraining as continued

# Hand-written text (no corpus): English words and the Fig. 4 phrase.
ENGLISH = ["the small cat sat on the mat", "we walked to the market and back", "the weather was cold"] * 20
NEPALI = ["नेपालको सरकार", "सरकार नेपालको", "नेपालको नेपाल सरकारको"] * 20


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    return continued.base_tokenizer(ENGLISH + NEPALI[:6], 300, tmp_path_factory.mktemp("base") / "tokenizer.json")


@pytest.fixture(scope="module")
def ext(base):
    counts = repair.count_words(base, NEPALI, repair.arm_pattern(base.regex, "R2"))
    return repair.extend(base, counts, 20, "R2")


def test_base_tokenizer_is_the_llama3_regex_bpe_loaded_from_its_file(base):
    from modtok.text import pretokenize

    assert base.regex == pretokenize.pattern("llama3") and base.next_id == 300
    tok = continued.lm_tokenizer(base.json)
    assert tok.vocab_size == 300 and lm_vocab_size(tok) == 301 and boundary_id(tok) == 300


def test_uniform_logits_give_log2_v_bits_per_scored_token(base):
    tok = continued.lm_tokenizer(base.json)
    torch.manual_seed(0)
    model = LM(config("tiny", lm_vocab_size(tok), max_seq_len=8)).eval()
    torch.nn.init.zeros_(model.out.weight)  # logits all 0: uniform over the V = 301 LM ids
    texts = [" ".join(ENGLISH[:3]), NEPALI[0], "cat"]  # the first is longer than the 8-id context
    nats, scored = continued.score_pieces(model, tok, texts, batch_size=2)
    nb = continued.token_nbytes(tok)
    for text, n, s in zip(texts, nats, scored):
        ids = tok.encode(text)
        assert s == len(text.encode()) - nb[ids[0]]  # the first token's bytes are not scored
        assert n == pytest.approx((len(ids) - 1) * math.log(301), rel=1e-5)  # every other token once
    bpb = continued.bootstrap({"u": nats}, {"u": scored}, n_boot=10)["u"][0]
    n_scored = sum(len(tok.encode(t)) - 1 for t in texts)
    assert bpb == pytest.approx(math.log2(301) * n_scored / scored.sum(), rel=1e-5)
    with pytest.raises(continued.DataError, match="nothing to score"):
        continued.score_pieces(model, tok, ["a"])


def test_pieces_fit_their_budget_and_rebuild_the_text():
    lines = ENGLISH[:10] + NEPALI[:10] + ["क" * 50]  # a 150-byte "word" is cut at character boundaries
    got = list(continued.pieces(lines, 40))
    assert all(0 < len(p.encode()) <= 40 for p in got)
    assert "".join("".join(p.split()) for p in got) == "".join("".join(s.split()) for s in lines)
    assert got[-1] == "क" * (len(got[-1])) and len(got[-1].encode()) % 3 == 0
    assert list(continued.pieces(lines, 40)) == got  # deterministic


def test_bootstrap_by_hand():
    # two pieces of one byte with 0 and 2 bits: replicates {0,0}, {0,2}, {2,0}, {2,2} -> 0, 1, 1, 2
    ln2 = math.log(2)
    res = continued.bootstrap({"A": [0.0, 2 * ln2], "B": [ln2, ln2]}, {"A": [1, 1], "B": [1, 1]},
                              pairs=[("A", "B")], n_boot=4000, seed=1)
    assert res["A"] == (1.0, 0.0, 2.0) and res["B"] == (1.0, 1.0, 1.0)
    assert res["A − B"] == (0.0, -1.0, 1.0)
    # per arm it is stats.ratio_ci of bits over bytes (the same draws for the same seed)
    bits, nbytes = np.array([3.0, 1.0, 5.0, 2.0]), np.array([2, 1, 3, 2])
    res = continued.bootstrap({"x": bits * ln2, "y": bits * ln2 / 2}, {"x": nbytes, "y": nbytes}, n_boot=500, seed=3)
    assert res["x"] == pytest.approx(stats.ratio_ci(bits, nbytes, n_boot=500, seed=3))
    assert res["y − x"] == pytest.approx((-res["x"][0] / 2, -res["x"][2] / 2, -res["x"][1] / 2))  # paired: exact
    with pytest.raises(UsageError, match="aligned non-empty"):
        continued.bootstrap({"x": [1.0], "y": [1.0, 2.0]}, {"x": [1], "y": [1, 1]})


def test_streams_carry_every_byte_once_under_any_tokenizer(base, ext):
    lines = ENGLISH[:7] + NEPALI[:9]
    totals = {}
    for name, tj in {"R0": base.json, "R2": ext.tokenizer_json()}.items():
        tok = continued.lm_tokenizer(tj)
        src = continued.StreamSource(tok, lines, batch_size=3, seq_len=5)
        batches = [src.batch(s) for s in range(src.steps)]
        targets = torch.cat([b.targets.flatten() for b in batches])
        targets = targets[targets != -1]
        assert targets.tolist() == src.stream[1:].tolist()  # each id after the first is a target once
        assert sum(b.n_bytes for b in batches) == src.text_bytes == sum(len(s.encode()) + 1 for s in lines)
        doc = boundary_id(tok)
        text = tok.decode([i for i in src.stream.tolist() if i != doc])
        assert text == "".join(lines)
        totals[name] = (src.text_bytes, len(src.stream))
        with pytest.raises(continued.DataError, match="past the stream"):
            src.batch(src.steps)
    assert totals["R0"][0] == totals["R2"][0] and totals["R2"][1] < totals["R0"][1]  # same bytes, fewer ids


def test_train_starts_from_the_given_weights(base, tmp_path):
    from modtok.lm.train import TrainConfig, train

    tok = continued.lm_tokenizer(base.json)
    torch.manual_seed(5)
    init = LM(config("tiny", lm_vocab_size(tok), max_seq_len=8))
    src = continued.StreamSource(tok, ENGLISH[:4], batch_size=2, seq_len=8)
    frozen = train(init.cfg, TrainConfig(steps=2, lr=0.0, warmup_steps=0, seed=0), src, tmp_path / "a",
                   resume=False, device=torch.device("cpu"), init=init).model  # lr 0: weights stay
    fresh = train(init.cfg, TrainConfig(steps=2, lr=0.0, warmup_steps=0, seed=0), src, tmp_path / "b",
                  resume=False, device=torch.device("cpu")).model  # no init: the seeded weights
    assert all(torch.equal(a, b) for a, b in zip(frozen.state_dict().values(), init.state_dict().values()))
    assert not torch.equal(fresh.embed.weight, init.embed.weight)
    with pytest.raises(continued.DataError, match="one process"):
        src.batch(0, rank=1)


def test_grow_keeps_original_logits_and_moves_the_boundary(base, ext):
    torch.manual_seed(0)
    model = LM(config("tiny", base.next_id + 1, output_bias=True)).eval()
    V, n = base.next_id, len(ext.new_tokens())
    idx = torch.randint(0, V + 1, (2, 30))  # (B, T) original ids and the boundary V
    grown = continued.grow(model, ext)
    assert grown.cfg.vocab_size == V + n + 1 and model.cfg.vocab_size == V + 1  # the original is untouched
    moved = torch.where(idx == V, V + n, idx)  # the boundary's new id
    with torch.no_grad():
        before, after = model.logits(idx), grown.logits(moved)  # (B, T, V + 1), (B, T, V + n + 1)
    keep = list(range(V)) + [V + n]
    assert (after[..., keep] - before).abs().max() < 1e-4
    token, i = next(iter(ext.new_tokens().items()))
    parts = continued.embed_init.constituents(base, token)
    assert torch.allclose(grown.embed.weight[i], model.embed.weight[parts].mean(0))
    empty = repair.Extension(base, [], base.regex)  # every merge filtered out: the model as it was
    assert continued.grow(model, empty).cfg.vocab_size == V + 1
    with pytest.raises(continued.VocabularyMismatchError, match="boundary"):
        continued.grow(grown, ext)


@pytest.fixture
def one_thread():
    """One torch thread: on the 2 shared cores, two threads are several times slower."""
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


def test_tiny_end_to_end_run(pool_root, flores_root, tmp_path, one_thread):
    from modtok.text import data

    eng = data.load_pool(["eng_Latn"], root=pool_root)["eng_Latn"]
    npi = data.load_pool(["npi_Deva"], root=pool_root)["npi_Deva"]
    flores = data.load_flores(["eng_Latn", "npi_Deva"], root=flores_root, max_lines=12)
    setup = continued.Setup(base_vocab=300, merges=60, model=dict(d_model=32, n_layers=1, n_heads=4),
                            batch_size=4, seq_len=32, base_steps=8, piece_bytes=500, n_boot=50)
    def once(out):
        return continued.run(setup, eng[:60] + npi[:5], npi[5:25], eng[60:70], npi[25:70] + eng[70:90],
                             {"Nepali": flores["npi_Deva"], "English": flores["eng_Latn"]}, out, device="cpu")

    res = once(tmp_path)
    assert once(tmp_path / "again").table() == res.table()  # seeded: the same numbers twice
    arms = res.arms
    assert arms["R0"].tokenizer.tokenizer_json == repair.Base.load(tmp_path / "base" / "tokenizer.json").json
    assert arms["R0"].tokenizer.vocab_size == 300 < arms["R1"].tokenizer.vocab_size
    assert arms["R0"].bytes == arms["R1"].bytes == arms["R2"].bytes > 0  # the same bytes, read once
    assert arms["R2"].steps < arms["R0"].steps == arms[continued.MATCHED].steps
    assert arms[continued.MATCHED].bytes > arms["R2"].bytes
    for ev, by_arm in res.scores.items():  # the same pieces for every arm: scored + first-token bytes
        texts = list(continued.pieces(flores["npi_Deva" if ev == "Nepali" else "eng_Latn"], 500))
        for name, (nats, scored) in by_arm.items():
            nb = continued.token_nbytes(arms[name].tokenizer)
            first = [nb[ids[0]] for ids in arms[name].tokenizer.encode_batch(texts)]
            assert (scored + first).tolist() == [len(t.encode()) for t in texts] and (nats > 0).all()
    row = {r["arm"]: r for r in res.table()}
    assert set(row) == set(arms) and "Nepali − R0 CI" in row["R2"] and "Nepali − R0" not in row["R0"]
    bars = res.interval_rows()  # the figure: one bar per (eval set, arm), no pair differences
    assert [(b["held-out text"], b["arm"]) for b in bars] == [(ev, a) for ev in res.intervals for a in arms]
    assert all(b["lo"] <= b["bits per byte"] <= b["hi"] for b in bars)
    assert bars[0]["bits per byte"] == res.intervals["Nepali"][bars[0]["arm"]][0]


def test_bar_figure_draws_the_intervals():
    from modtok.ui import plots

    rows = [{"arm": "R0", "set": "Nepali", "bpb": 2.0, "lo": 1.5, "hi": 2.25},
            {"arm": "R2", "set": "Nepali", "bpb": 1.0, "lo": 0.75, "hi": 1.5}]
    fig = plots.grouped_bars(rows, x="set", y="bpb", color="arm", ci=("lo", "hi"))
    assert [list(b.error_y.array) for b in fig.data] == [[0.25], [0.5]]
    assert [list(b.error_y.arrayminus) for b in fig.data] == [[0.5], [0.25]]
    assert plots.grouped_bars(rows, x="set", y="bpb", color="arm").data[0].error_y.array is None
