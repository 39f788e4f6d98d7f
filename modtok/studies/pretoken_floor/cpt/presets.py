"""Sizes of the continued-pretraining experiment: :class:`Setup`, :func:`preset`, and its texts."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from modtok.errors import UsageError


@dataclasses.dataclass(frozen=True)
class Setup:
    """Sizes of one run (defaults: the notebook's full size on 2 CPU cores)."""

    base_vocab: int = 4096  # the llama3-regex BPE of the base model
    merges: int = 2000  # K, before the §V filter
    model: dict = dataclasses.field(default_factory=lambda: dict(n_layers=2))  # overrides of config("mini")
    tie_embeddings: bool = False  # one matrix for input and output rows (the paper's Llama-3.2 and Qwen3 tie them)
    cpt_target_share: float = 0.75  # of the continued-pretraining bytes (the paper: 1 GB + 1 GB, i.e. 0.5)
    base_target_share: float = 0.05  # of the base model's bytes (the rest English)
    batch_size: int = 4
    seq_len: int = 512  # the context of training and scoring: a piece of <= piece_bytes must fit it (App. D)
    base_steps: int = 1000
    base_lr: float = 3e-3
    lr: float = 1e-3  # continued pretraining
    warmup: float = 0.05  # share of each run's steps
    piece_bytes: int = 2000  # the paper's; fit_held_out shrinks it until every piece fits seq_len under every arm
    n_boot: int = 1000
    seed: int = 0  # the base model's and the bootstrap's
    seeds: tuple[int, ...] = (0, 1, 2)  # continued pretraining: the order of its lines, and torch's seed


def preset(size: str) -> tuple[Setup, dict[str, int]]:
    """Notebook 07's settings and its text sizes in bytes (``{"base", "cpt",
    "heldout"}``, see :func:`texts`): ``"smoke"`` (CI: 3 seeds of a few dozen
    steps), ``"cpu"`` (the full size on 2 CPU cores: base vocabulary 4,096,
    K = 2,000, d_model 128 x 2 layers, 4 x 512 ids a step, base 1,000 steps) or
    ``"gpu"`` ("small", 5.9M parameters without the vocabulary, 16 x 512 ids a
    step; not yet run on a GPU). Every preset's context is 512 ids (smoke: 128),
    so pieces of about 2,000 bytes fit it under every arm (App. D; a 2,000-byte
    Nepali piece is about 470 ids under a 4,096-token base, measured 2026-12-02:
    550 bytes per 128 ids).

    >>> setup, sizes = preset("smoke")
    >>> len(setup.seeds), setup.seq_len, sizes
    (3, 128, {'base': 120000, 'cpt': 20000, 'heldout': 20000})
    """
    if size == "smoke":
        return (Setup(base_vocab=600, merges=200, model=dict(d_model=64, n_layers=1), batch_size=4, seq_len=128,
                      base_steps=100, n_boot=200),
                {"base": 120_000, "cpt": 20_000, "heldout": 20_000})
    if size == "gpu":
        return (Setup(base_vocab=8192, merges=8000, model=dict(d_model=256, n_layers=8, n_heads=8, n_kv_heads=4),
                      batch_size=16, seq_len=512, base_steps=4000),
                {"base": 2_400_000, "cpt": 8_000_000, "heldout": 200_000})
    if size == "cpu":
        return Setup(), {"base": 1_200_000, "cpt": 1_000_000, "heldout": 200_000}
    raise UsageError(f"preset {size!r}: one of smoke, cpu, gpu")


def consecutive(lines: Sequence[str], *sizes: int) -> list[list[str]]:
    """Disjoint runs of consecutive ``lines``, the k-th holding at least
    ``sizes[k]`` UTF-8 bytes (newlines counted) or what is left.

    >>> consecutive(["ab", "cd", "ef", "gh"], 4, 2, 10)
    [['ab', 'cd'], ['ef'], ['gh']]
    """
    out, i = [], 0
    for size in sizes:
        run, n = [], 0
        while i < len(lines) and n < size:
            run.append(lines[i])
            n += len(lines[i].encode("utf-8")) + 1
            i += 1
        out.append(run)
    return out


def texts(english: Sequence[str], target: Sequence[str], base_bytes: int, cpt_bytes: int,
          heldout_bytes: int = 0, cpt_share: float = 0.75, base_share: float = 0.05) -> dict[str, list[str]]:
    """The texts of :func:`run` (its keyword arguments ``base_text``,
    ``cpt_target``, ``cpt_english``) from consecutive runs of ``english`` and
    ``target`` lines (:func:`consecutive`), by UTF-8 bytes: the base is
    ``base_share`` target (default 5%), the rest English, of ``base_bytes``;
    continued pretraining ``cpt_share`` target (default 75%), the rest English,
    of ``cpt_bytes`` (:class:`Setup` records both shares); then ``heldout_target`` and
    ``heldout_english``, ``heldout_bytes`` of each from the lines right after
    (the paper's primary held-out text: a slice of the training source that is
    never trained on, §VI / App. D).

    >>> t = texts(["e"] * 100, ["t"] * 100, 40, 16, 4)       # 2 bytes a line, newline counted
    >>> {k: len(v) for k, v in t.items()}
    {'base_text': 20, 'cpt_target': 6, 'cpt_english': 2, 'heldout_target': 2, 'heldout_english': 2}
    """
    base_en, cpt_en, held_en = consecutive(english, round((1 - base_share) * base_bytes),
                                           round((1 - cpt_share) * cpt_bytes), heldout_bytes)
    base_t, cpt_t, held_t = consecutive(target, round(base_share * base_bytes), round(cpt_share * cpt_bytes),
                                        heldout_bytes)
    return {"base_text": base_en + base_t, "cpt_target": cpt_t, "cpt_english": cpt_en,
            "heldout_target": held_t, "heldout_english": held_en}
