"""modtok.lm.offload: row-sparse AdamW against torch's AdamW and a hand-derived lazy-Adam oracle;
the host store's gather and checkpoint state."""

from __future__ import annotations

import math

import pytest
import torch

from modtok.errors import CheckpointError, ModtokError
from modtok.lm.model import LM, LMConfig
from modtok.lm.offload import HostVocabStore, VocabPipeline, row_sparse_adamw_

HYPER = {"lr": 0.01, "beta1": 0.9, "beta2": 0.95, "eps": 1e-8, "weight_decay": 0.1}


def _grads(steps, shape, seed=0):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(shape, generator=g) for _ in range(steps)]


def test_all_rows_active_is_torch_adamw_bit_for_bit():
    g = torch.Generator().manual_seed(1)
    start = torch.randn(7, 5, generator=g)
    dense = torch.nn.Parameter(start.clone())
    opt = torch.optim.AdamW([dense], lr=HYPER["lr"], betas=(HYPER["beta1"], HYPER["beta2"]),
                            eps=HYPER["eps"], weight_decay=HYPER["weight_decay"])
    param, m, v = start.clone(), torch.zeros(7, 5), torch.zeros(7, 5)
    rows = torch.arange(7)
    gathered = [start.clone(), torch.zeros(7, 5), torch.zeros(7, 5)]
    for t, grad in enumerate(_grads(6, (7, 5)), start=1):
        dense.grad = grad.clone()
        opt.step()
        row_sparse_adamw_(param, m, v, rows, grad, step=t, **HYPER)
        row_sparse_adamw_(*gathered, rows, grad, step=t, max_runs=0, **HYPER)
        assert torch.equal(param, dense.detach()) and torch.equal(gathered[0], dense.detach())
    assert torch.equal(m, opt.state[dense]["exp_avg"]) and torch.equal(v, opt.state[dense]["exp_avg_sq"])


@pytest.mark.parametrize("max_runs", [64, 0])  # in place over runs of rows / gathered and scattered
def test_inactive_rows_are_untouched_and_late_rows_follow_lazy_adam(max_runs):
    """Rows 1 and 3 are active at steps 1..3, row 2 only at step 3, rows 0 and 4 never.

    Oracle for row 2 at global step t = 3 from zero moments (hand-derived):
    m = (1 - b1) g, v = (1 - b2) g^2, p <- p (1 - lr wd) - lr / (1 - b1^3) * m / (sqrt(v / (1 - b2^3)) + eps).
    """
    start = torch.randn(5, 4, generator=torch.Generator().manual_seed(2))
    param, m, v = start.clone(), torch.zeros(5, 4), torch.zeros(5, 4)
    grads = _grads(3, (5, 4), seed=3)
    ref = torch.nn.Parameter(start[[1, 3]].clone())  # rows 1 and 3 see plain AdamW
    opt = torch.optim.AdamW([ref], lr=HYPER["lr"], betas=(HYPER["beta1"], HYPER["beta2"]),
                            eps=HYPER["eps"], weight_decay=HYPER["weight_decay"])
    for t, grad in enumerate(grads, start=1):
        rows = torch.tensor([1, 2, 3]) if t == 3 else torch.tensor([1, 3])
        row_sparse_adamw_(param, m, v, rows, grad[rows], step=t, max_runs=max_runs, **HYPER)
        ref.grad = grad[[1, 3]].clone()
        opt.step()
    assert torch.equal(param[[0, 4]], start[[0, 4]]) and not m[[0, 4]].any() and not v[[0, 4]].any()
    assert torch.equal(param[[1, 3]], ref.detach())
    b1, b2, lr, wd, eps = HYPER["beta1"], HYPER["beta2"], HYPER["lr"], HYPER["weight_decay"], HYPER["eps"]
    g = grads[2][2].double()
    m2, v2 = (1 - b1) * g, (1 - b2) * g * g
    want = start[2].double() * (1 - lr * wd) - lr / (1 - b1**3) * m2 / ((v2 / (1 - b2**3)).sqrt() + eps)
    assert torch.allclose(param[2].double(), want, rtol=1e-6, atol=1e-7)
    assert math.isclose(float(m[2, 0]), float(m2[0]), rel_tol=1e-6)


def test_store_gathers_rows_and_round_trips_its_state():
    model = LM(LMConfig(vocab_size=12, d_model=8, n_layers=1, n_heads=2, output_bias=True))
    store = HostVocabStore.from_model(model, weight_decay=0.1, pin=False)
    assert sorted(store.param) == ["embed", "out", "out_bias"] and store.decay["out_bias"] == 0.0
    assert store.nbytes == 3 * (12 * 8 * 2 + 12) * 4
    rows = store.gather(torch.tensor([0, 4, 11]), torch.device("cpu"))
    assert torch.equal(rows.bias, model.out.bias.detach()[[0, 4, 11]]) and rows.out.requires_grad
    (rows.embed.sum() + rows.out.sum() + rows.bias.sum()).backward()
    store.update(torch.tensor([0, 4, 11]), {k: t.grad for k, t in rows.tensors().items()}, step=1, lr=0.1)
    other = HostVocabStore.from_model(LM(model.cfg), weight_decay=0.1, pin=False)
    other.load(store.model_state(), store.state_dict())
    assert all(torch.equal(other.param[k], store.param[k]) and torch.equal(other.exp_avg[k], store.exp_avg[k])
               for k in store.param)
    with pytest.raises(CheckpointError, match="does not fit the checkpoint"):
        other.load({"embed.weight": torch.zeros(3, 8)}, store.state_dict())
    with pytest.raises(ModtokError, match="delay must be 0 or 1"):
        VocabPipeline(store, torch.device("cpu"), delay=2)


@pytest.mark.parametrize("delay", [0, 1])
def test_pipeline_hands_out_rows_exactly_one_update_late_with_delay_1(delay):
    """Oracle: a reference store updated synchronously, snapshot after every update. With delay 0 the
    rows of step t are the snapshot after t updates; with delay 1 (App. E) they were gathered while
    step t-1 computed, after update t-2: the snapshot after t-1 updates. Both end equal to it."""
    torch.manual_seed(0)
    model = LM(LMConfig(vocab_size=6, d_model=4, n_layers=1, n_heads=2))
    store = HostVocabStore.from_model(model, weight_decay=0.1, pin=False)
    ref = HostVocabStore.from_model(model, weight_decay=0.1, pin=False)
    actives = [torch.tensor(a) for a in ([0, 1, 2], [1, 2, 3], [2, 3, 4], [0, 4, 5], [1, 5])]
    pipe = VocabPipeline(store, torch.device("cpu"), delay=delay)
    snaps = [{k: t.clone() for k, t in ref.param.items()}]
    pipe.prime(actives[0])
    for t, active in enumerate(actives):
        nxt = actives[t + 1] if t + 1 < len(actives) else None
        rows = pipe.rows()
        want = snaps[max(t - delay, 0)]
        assert torch.equal(rows.embed, want["embed"][active]) and torch.equal(rows.out, want["out"][active])
        pipe.begin(nxt)
        grads = {k: torch.randn(x.shape, generator=torch.Generator().manual_seed(t)) for k, x in rows.tensors().items()}
        for k, x in rows.tensors().items():
            x.grad = grads[k].clone()
        pipe.end(active, rows, t + 1, 0.1, nxt)
        ref.update(active, grads, t + 1, 0.1)
        snaps.append({k: x.clone() for k, x in ref.param.items()})
    pipe.barrier(None)
    pipe.close()
    assert all(torch.equal(store.param[k], ref.param[k]) and torch.equal(store.exp_avg_sq[k], ref.exp_avg_sq[k])
               for k in ref.param)
    if delay:  # rows shared by consecutive steps really were stale
        assert not torch.equal(snaps[1]["embed"][actives[2]], snaps[2]["embed"][actives[2]])
