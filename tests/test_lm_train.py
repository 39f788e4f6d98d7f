"""modtok.lm.train: learning, identical resume, checkpoint refusal, atomic files, 2-process DDP."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from dataclasses import replace
from pathlib import Path

import pytest
import torch
from lm_helpers import TOY_CORPUS, one_torch_thread, toy_tokenizer  # noqa: F401 (autouse fixture)

from modtok.artifacts.modular import ModularTokenizer
from modtok.errors import CheckpointError, ModelConfigError, VocabularyMismatchError
from modtok.lm.batches import BatchSource, lm_vocab_size
from modtok.lm.model import LM, config
from modtok.lm.sampling import SubtokenizerSampler, default_mixture, samp_full, samp_sub
from modtok.lm.train import (
    CHECKPOINT,
    METRICS,
    TrainConfig,
    load_checkpoint,
    load_model,
    read_metrics,
    save_atomic,
    train,
)

CURVE = ("step", "lr", "loss", "bpb", "lang", "setting", "n_active", "tokens", "bytes", "grad_norm")


@pytest.fixture(scope="module")
def tok():
    return toy_tokenizer()


def _source(tok, B=4, T=32, seed=0, scheme=None, langs=TOY_CORPUS):
    sampler = SubtokenizerSampler(scheme or samp_sub(1, 0.5), default_mixture(langs), seed)
    return BatchSource(tok, TOY_CORPUS, sampler, B, T, seed=seed)


def _cfgs(tok, steps=12):
    return config("tiny", lm_vocab_size(tok), max_seq_len=32), TrainConfig(steps=steps, lr=1e-2, warmup_steps=3, ckpt_every=100)


def test_loss_goes_down_and_metrics_are_logged(tok, tmp_path):
    model_cfg, cfg = _cfgs(tok, steps=30)
    result = train(model_cfg, cfg, _source(tok), tmp_path)
    rows = read_metrics(tmp_path)
    assert [r["step"] for r in rows] == list(range(30)) and result.steps == 30
    first, last = sum(r["loss"] for r in rows[:3]) / 3, sum(r["loss"] for r in rows[-3:]) / 3
    assert last < 0.75 * first
    assert all(r["tokens"] == 4 * 32 and r["bytes"] > 0 for r in rows)
    # bits per byte = nats per token * tokens / ln 2 / bytes
    r = rows[-1]
    assert r["bpb"] == pytest.approx(r["loss"] * r["tokens"] / 0.6931471805599453 / r["bytes"])
    model, ckpt = load_model(tmp_path / CHECKPOINT)
    assert ckpt["step"] == 30 and model.cfg == model_cfg


def test_resume_gives_the_identical_loss_curve_and_weights(tok, tmp_path):
    model_cfg, cfg = _cfgs(tok)
    train(model_cfg, cfg, _source(tok), tmp_path / "a")
    train(model_cfg, cfg, _source(tok), tmp_path / "b", until=5)
    assert load_checkpoint(tmp_path / "b" / CHECKPOINT)["step"] == 5
    with open(tmp_path / "b" / METRICS, "a") as f:  # a line logged after the checkpoint by a crashed run
        f.write(json.dumps({"step": 5, "loss": -1.0}) + "\n")
    train(model_cfg, replace(cfg, log_every=1, ckpt_every=7), _source(tok), tmp_path / "b")
    a, b = read_metrics(tmp_path / "a"), read_metrics(tmp_path / "b")
    assert [[r[k] for k in CURVE] for r in a] == [[r[k] for k in CURVE] for r in b]
    wa, wb = load_checkpoint(tmp_path / "a" / CHECKPOINT), load_checkpoint(tmp_path / "b" / CHECKPOINT)
    assert all(torch.equal(wa["model"][k], wb["model"][k]) for k in wa["model"])


def test_checkpoints_from_another_config_or_vocabulary_are_refused(tok, tmp_path):
    model_cfg, cfg = _cfgs(tok, steps=2)
    train(model_cfg, cfg, _source(tok), tmp_path)
    with pytest.raises(CheckpointError, match="another model config .*d_model"):
        train(replace(model_cfg, d_model=64), replace(cfg, steps=3), _source(tok), tmp_path)
    with pytest.raises(CheckpointError, match="another training config .*lr"):
        train(model_cfg, replace(cfg, lr=0.5), _source(tok), tmp_path)
    with pytest.raises(CheckpointError, match="another data stream or vocabulary .*vocab"):
        swapped = {"eng_Latn": "deu_Latn", "deu_Latn": "eng_Latn", "fra_Latn": "fra_Latn"}
        other = ModularTokenizer(tok.tokenizer_json, {a: tok.ids([b]) for a, b in swapped.items()})
        train(model_cfg, cfg, _source(other), tmp_path, until=1)
    with pytest.raises(VocabularyMismatchError, match="vocab_size"):
        train(replace(model_cfg, vocab_size=77), cfg, _source(tok), tmp_path)
    (tmp_path / "junk.pt").write_bytes(b"not a checkpoint")
    with pytest.raises(CheckpointError, match="junk.pt: not a readable checkpoint"):
        load_checkpoint(tmp_path / "junk.pt")
    assert sorted(p.name for p in tmp_path.iterdir()) == [CHECKPOINT, "junk.pt", METRICS]


def test_a_vocabulary_mismatch_is_refused_before_any_file_exists(tok, tmp_path):
    """Not a CheckpointError: there is no checkpoint; the model and the tokenizer disagree."""
    model_cfg, cfg = _cfgs(tok, steps=2)
    with pytest.raises(VocabularyMismatchError, match="model vocab_size 77 != tokenizer vocabulary") as e:
        train(replace(model_cfg, vocab_size=77), cfg, _source(tok), tmp_path / "run")
    assert not isinstance(e.value, CheckpointError) and isinstance(e.value, ModelConfigError)
    assert not (tmp_path / "run").exists()


def test_old_format_checkpoints_with_the_inverted_p_are_refused(tok, tmp_path):
    model_cfg, cfg = _cfgs(tok, steps=1)
    train(model_cfg, cfg, _source(tok), tmp_path)
    ckpt = load_checkpoint(tmp_path / CHECKPOINT)
    save_atomic({**ckpt, "format": "modtok-lm-1"}, tmp_path / CHECKPOINT)
    with pytest.raises(CheckpointError, match="modtok-lm-1 .*own-language subtokenizer.*retrain"):
        load_model(tmp_path / CHECKPOINT)
    with pytest.raises(CheckpointError, match="modtok-lm-1"):
        train(model_cfg, replace(cfg, steps=2), _source(tok), tmp_path)


def _weights_equal(a, b):
    return sorted(a) == sorted(b) and all(torch.equal(a[k], b[k]) for k in a)


def test_host_store_with_delay_0_equals_the_device_run_bit_for_bit(tok, tmp_path):
    """Samp_Full(1): every row is active at every step, where row-sparse AdamW is AdamW; the host store
    (gather, compute on the rows, return, update on the host) must then give the identical run."""
    model_cfg, cfg = _cfgs(tok, steps=8)
    src = lambda: _source(tok, scheme=samp_full(1.0))
    dense = train(model_cfg, cfg, src(), tmp_path / "device")
    host = train(model_cfg, replace(cfg, vocab_store="host"), src(), tmp_path / "host")
    a, b = read_metrics(tmp_path / "device"), read_metrics(tmp_path / "host")
    assert [[r[k] for k in CURVE] for r in a] == [[r[k] for k in CURVE] for r in b]
    assert _weights_equal(dense.model.state_dict(), host.model.state_dict())
    assert _weights_equal(load_checkpoint(tmp_path / "device" / CHECKPOINT)["model"],
                          load_checkpoint(tmp_path / "host" / CHECKPOINT)["model"])


def test_host_store_leaves_inactive_rows_alone_and_resumes_identically(tok, tmp_path):
    """Samp_Sub_1 over English and German: rows outside every active set so far (French-only ids) keep
    their initial values (no weight decay, no stale momentum); resuming a host-store run (delay 0 and
    the delayed scheme) gives the identical curve."""
    model_cfg, cfg = _cfgs(tok, steps=8)
    torch.manual_seed(cfg.seed)
    init = LM(model_cfg).state_dict()  # what train() starts from
    src = lambda: _source(tok, langs=["eng_Latn", "deu_Latn"])
    for delay in (0, 1):
        hcfg = replace(cfg, vocab_store="host", update_delay=delay, ckpt_every=4)
        whole = train(model_cfg, hcfg, src(), tmp_path / f"a{delay}")
        train(model_cfg, hcfg, src(), tmp_path / f"b{delay}", until=4)
        train(model_cfg, hcfg, src(), tmp_path / f"b{delay}")
        a, b = read_metrics(tmp_path / f"a{delay}"), read_metrics(tmp_path / f"b{delay}")
        assert [[r[k] for k in CURVE] for r in a] == [[r[k] for k in CURVE] for r in b]
        assert _weights_equal(whole.model.state_dict(), load_checkpoint(tmp_path / f"b{delay}" / CHECKPOINT)["model"])
        batches = src()
        touched = torch.unique(torch.cat([batches.batch(s).active_ids for s in range(8)]))
        untouched = torch.ones(lm_vocab_size(tok), dtype=torch.bool)
        untouched[touched] = False
        assert untouched.any()
        w = whole.model.state_dict()
        for name in ("embed.weight", "out.weight"):
            assert torch.equal(w[name][untouched], init[name][untouched])
            assert not torch.equal(w[name][touched], init[name][touched])
    d0, d1 = read_metrics(tmp_path / "a0"), read_metrics(tmp_path / "a1")
    assert d0[0]["loss"] == d1[0]["loss"]  # the first step is the same; later ones read rows one update late
    assert [r["loss"] for r in d0[2:]] != [r["loss"] for r in d1[2:]]


def test_the_old_p_flag_is_refused_with_its_new_meaning(capsys):
    from modtok.ui.cli import main

    assert main(["lm-train", "--tokenizer", "nowhere", "--out", "nowhere", "--p", "0.5"]) == 2
    assert "use --p-full, the probability of the full tokenizer" in capsys.readouterr().err


def test_failed_save_leaves_no_partial_file(tmp_path):
    target = tmp_path / CHECKPOINT
    save_atomic({"x": torch.ones(2)}, target)
    before = target.read_bytes()
    with pytest.raises(Exception):
        save_atomic({"x": lambda: 0}, target)  # not picklable: fails half-way
    assert target.read_bytes() == before and [p.name for p in tmp_path.iterdir()] == [CHECKPOINT]


DDP_SCRIPT = textwrap.dedent(
    """
    import sys, torch, torch.distributed as dist
    sys.path.insert(0, {tests!r})
    from lm_helpers import TOY_CORPUS, one_torch_thread, toy_tokenizer  # noqa: F401 (autouse fixture)
    from modtok.lm.batches import BatchSource, lm_vocab_size
    from modtok.lm.model import config
    from modtok.lm.sampling import SubtokenizerSampler, default_mixture, samp_sub
    from modtok.lm import train as T

    torch.set_num_threads(1)
    dist.init_process_group("gloo")
    tok = toy_tokenizer()
    src = BatchSource(tok, TOY_CORPUS, SubtokenizerSampler(samp_sub(1, 0.5), default_mixture(TOY_CORPUS), 0), 2, 16)
    model_cfg = config("tiny", lm_vocab_size(tok), max_seq_len=16)
    seen = []
    original = src.batch
    src.batch = lambda step, rank=0: seen.append((step, rank)) or original(step, rank)
    cfg = T.TrainConfig(steps=4, lr=1e-2, warmup_steps=1, seed=dist.get_rank(), vocab_store={store!r})
    result = T.train(model_cfg, cfg, src, {out!r})
    torch.save({{"seen": seen, "model": result.model.state_dict()}}, {out!r} + f"/rank{{dist.get_rank()}}.pt")
    dist.destroy_process_group()
    """
)


class _BothRanks(BatchSource):
    """Single-process stand-in for a 2-rank run: the rows of ranks 0 and 1 in one batch."""

    def batch(self, step, rank=0):
        a, b = super().batch(step, 0), super().batch(step, 1)
        return replace(a, idx=torch.cat([a.idx, b.idx]), targets=torch.cat([a.targets, b.targets]),
                       n_bytes=a.n_bytes + b.n_bytes)


@pytest.mark.parametrize("store", ["device", "host"])
def test_two_process_gloo_ddp_stays_in_sync(tok, tmp_path, store):
    """2 CPU processes under torchrun (gloo): each rank trains on its own rows (rank r draws (step, r)),
    they start from different seeds (DDP broadcasts rank 0's weights), and they end with identical
    parameters, equal to the checkpoint and to one process training on both ranks' rows at once
    (DDP averages the per-rank mean gradients = the mean over the global batch). With the host store,
    each rank's store must stay identical: rank 0's rows are broadcast at the start (as DDP does for the
    body) and the row gradients are averaged the same way."""
    out = tmp_path / "run"
    script = tmp_path / "ddp.py"
    script.write_text(DDP_SCRIPT.format(tests=str(Path(__file__).parent), out=str(out), store=store))
    env = dict(os.environ, OMP_NUM_THREADS="1")
    proc = subprocess.run(
        [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2", str(script)],
        capture_output=True, text=True, timeout=240, env=env,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    seen = [torch.load(out / f"rank{r}.pt", weights_only=True)["seen"] for r in (0, 1)]
    assert [s for s in seen[0]] == [(i, 0) for i in range(4)] and [s for s in seen[1]] == [(i, 1) for i in range(4)]
    rows = read_metrics(out)
    assert len(rows) == 4 and all(r["tokens"] == 2 * 2 * 16 for r in rows)
    w0, w1 = (torch.load(out / f"rank{r}.pt", weights_only=True)["model"] for r in (0, 1))
    saved = load_checkpoint(out / CHECKPOINT)["model"]
    assert all(torch.equal(w0[k], w1[k]) and torch.equal(w0[k], saved[k]) for k in w0)
    both = _BothRanks(tok, TOY_CORPUS, SubtokenizerSampler(samp_sub(1, 0.5), default_mixture(TOY_CORPUS), 0), 2, 16)
    single = train(config("tiny", lm_vocab_size(tok), max_seq_len=16),
                   TrainConfig(steps=4, lr=1e-2, warmup_steps=1, seed=0, vocab_store=store), both,
                   tmp_path / "single").model
    single_rows = read_metrics(tmp_path / "single")
    assert [r["loss"] for r in rows] == pytest.approx([r["loss"] for r in single_rows], rel=1e-4)
    assert all(torch.allclose(w0[k], v, atol=1e-5) for k, v in single.state_dict().items())
