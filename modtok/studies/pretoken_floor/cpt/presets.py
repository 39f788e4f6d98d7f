"""Sizes of the continued-pretraining experiment: :class:`Setup`, :func:`preset`, and its texts.

Two regimes, one set of arms and one scoring (:mod:`.run`):

- ``"smoke"``, ``"cpu"``, ``"gpu"``: a small base model pretrained here for a fixed
  number of steps on English-heavy text (5% Nepali), then continued at 1e-3: close
  to training from scratch, the regime in which the paper's §VIII ("Why our sign
  differs from Regmi et al.") expects the repaired regex to win;
- ``"pretrained-smoke"``, ``"pretrained-cpu"``, ``"pretrained-gpu"``: the base
  model is pretrained on substantial Nepali (the extra text, disjoint from the
  pool) and English, interleaved, at a constant rate until its Nepali bits per
  byte flatten, then decayed; the best evaluated step is the base (:class:`Flatten`),
  with tied embeddings, and continued at the paper's rate and shape (1e-4 peak,
  1% linear warm-up, cosine to 10%, §VI and App. D) on 50% / 50% Nepali /
  English: the paper's hypothesis as far as this data allows.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from modtok.errors import UsageError


@dataclasses.dataclass(frozen=True)
class Flatten:
    """Pretrain the base model until its Nepali bits per byte flatten, then decay
    (:func:`~.run.pretrain`): a warm-up of ``eval_every`` steps, then a constant
    rate; every ``eval_every`` steps score the Nepali dev text (``dev_bytes`` right
    after the base model's Nepali, never trained on); the constant phase ends when
    the dev curve has flattened (:func:`flattened`: the last ``window`` + 1
    evaluations lie within ``min_gain`` bits per byte of each other) or at
    ``max_steps``; then the rate decays (cosine to ``decay_to`` of the peak) over
    ``decay_share`` of the steps so far, rounded up to whole evaluations. The model
    returned is the evaluated one with the lowest dev bits per byte (the best
    checkpoint), and its step is recorded. ``batch_size``: the base model's batch
    (0: the arms' ``Setup.batch_size``).

    Evidence (bench/RESULTS.md, "Continued pretraining from a pretrained base"):
    the last run at a constant 1e-3 on 4 x 256 ids swung between 1.11 and 1.79 and
    never met the rule in 1,500 steps. The cause was the order of the text, not the
    rate: its stream read the 500 KB of English, then the 500 KB of Nepali, so each
    pass (275 steps) had an English block (Nepali dev up: 3.73 at step 100, 1.79 at
    1,200) and a Nepali block (down: 1.89 at 200, 1.11 at 1,300). The base's lines
    are now interleaved by a seeded shuffle (:func:`~.run.pretrain`). 3e-3 diverged
    at a constant rate (loss 4.3 to 12.0 at step 275), so the peak stays 1e-3."""

    eval_every: int
    window: int
    min_gain: float  # bits per byte: the band the last window + 1 evaluations must lie in
    max_steps: int  # of the constant phase; the decay comes after it
    dev_bytes: int
    batch_size: int = 0  # the base model's (0: Setup.batch_size)
    decay_share: float = 0.25  # decay steps: this share of the constant phase's
    decay_to: float = 0.1  # the decay's last rate, a share of the peak (the arms' cosine ends there too)


def flattened(history: Sequence[float], window: int, min_gain: float) -> bool:
    """Whether a history of dev bits per byte (one per evaluation) has flattened:
    its last ``window`` + 1 values lie within ``min_gain`` of each other. So a
    curve still falling by ``min_gain`` over the window is not flat, nor is one
    that swings by more than ``min_gain`` (a lucky low between highs is not a
    plateau).

    >>> flattened([3.0, 2.0, 1.5], 2, 0.1), flattened([3.0, 2.0, 1.98, 1.97], 2, 0.1), flattened([3.0], 2, 0.1)
    (False, True, False)
    >>> flattened([1.3, 1.1, 1.8, 1.1], 2, 0.1)   # swinging: not flat, though the last gained nothing
    False
    """
    if len(history) <= window:
        return False
    last = history[-window - 1:]
    return max(last) - min(last) < min_gain


@dataclasses.dataclass(frozen=True)
class Setup:
    """Sizes of one run (defaults: the notebook's full size on 2 CPU cores)."""

    base_vocab: int = 4096  # the llama3-regex BPE of the base model
    merges: int = 2000  # K, before the §V filter
    model: dict = dataclasses.field(default_factory=lambda: dict(n_layers=2))  # overrides of config("mini")
    tie_embeddings: bool = False  # one matrix for input and output rows (the paper's Llama-3.2 and Qwen3 tie them)
    cpt_target_share: float = 0.75  # of the continued-pretraining bytes (the paper: 1 GB + 1 GB, i.e. 0.5)
    base_target_share: float = 0.05  # of the base tokenizer's (and, without `flatten`, the base model's) bytes
    flatten: Flatten | None = None  # set: the pretrained-base regime (module docstring); its model's target share:
    model_target_share: float = 0.5  # of the base model's bytes, from the extra text (the rest: pool English)
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
    Nepali piece is about 470 ids under a 4,096-token base, measured:
    550 bytes per 128 ids; bench/RESULTS.md, "Figures cited in docstrings").

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
    if size.startswith("pretrained-"):
        return pretrained_preset(size.removeprefix("pretrained-"))
    raise UsageError(f"preset {size!r}: one of {', '.join(PRESETS)}")


PRESETS = ("smoke", "cpu", "gpu", "pretrained-smoke", "pretrained-cpu", "pretrained-gpu")
PAPER_RATE = dict(lr=1e-4, warmup=0.01, tie_embeddings=True, cpt_target_share=0.5)  # §VI, App. D; 1 GB + 1 GB


def pretrained_preset(size: str) -> tuple[Setup, dict[str, int]]:
    """The pretrained-base regime's settings (module docstring) and text sizes in
    bytes (:func:`preset`'s, plus ``"base_model"``: the base model's text, a
    ``model_target_share`` of it Nepali from the extra text): ``"smoke"`` (CI, 2
    seeds, a CPU in well under a minute), ``"cpu"`` (the reduced size run on 2
    shared CPU cores, about 40 minutes: 2 layers x d_model 128, base vocabulary
    2,048, K = 1,000, the base on 6 MB (92% Nepali) at 8 x 256 ids a step, at most
    1,500 steps at the constant rate and 375 decaying, the arms at 4 x 256) or
    ``"gpu"`` (the full size: "small", 8 layers x d_model 256, 16 x 512 ids a step,
    base vocabulary 8,192, K = 8,000, the base on 18 MB (90% Nepali: the pool has
    2.8 MB of English) at most 20,000 steps; the same call on ``cuda``).

    >>> setup, sizes = pretrained_preset("smoke")
    >>> setup.lr, setup.warmup, setup.tie_embeddings, setup.flatten.max_steps, sizes["base_model"]
    (0.0001, 0.01, True, 80, 120000)
    """
    if size == "smoke":
        return (Setup(base_vocab=600, merges=200, model=dict(d_model=64, n_layers=1), batch_size=4, seq_len=128,
                      base_lr=1e-3,
                      flatten=Flatten(eval_every=20, window=2, min_gain=0.02, max_steps=80, dev_bytes=10_000),
                      n_boot=200, seeds=(0, 1), **PAPER_RATE),
                {"base": 120_000, "base_model": 120_000, "cpt": 20_000, "heldout": 20_000})
    if size == "cpu":
        # Probes at 1e-3 on the interleaved 1 MB (bench/RESULTS.md, "Continued pretraining from a pretrained
        # base", its second session's sub-section; load 6-8), dev bits per byte: 4 x 256 ids a step, 2.41 / 1.82 /
        # 1.53 / 1.43 / 1.36 / 1.32 at steps 50..300 (falling every time: the swing was the order, not the
        # batch); 8 x 256 ids on 3 MB, 2.24 / 1.64 / 1.39 / 1.29 at 50..200, lower per step. So 8 x 256. A
        # first run capped at 600 constant steps on 3 MB was still falling 0.01-0.02 per 50 steps there
        # (1.065 / 1.047 / 1.031 / 1.020 at 450..600: not flat) and reached 0.963 after the decay; so the cap
        # is 1,500 (+ 375 decaying), on 6 MB (5.5 MB extra Nepali: 2.2 passes at most, not 5.5 over 1 MB).
        # The band: 0.02 bits per byte over 150 steps; at that rate the base would gain < 0.01 (the
        # registered margin) over an arm's 60 steps even at the base's rate, 10 x the arms'.
        return (Setup(base_vocab=2048, merges=1000, batch_size=4, seq_len=256, base_lr=1e-3, model_target_share=0.92,
                      flatten=Flatten(eval_every=50, window=3, min_gain=0.02, max_steps=1500, dev_bytes=50_000,
                                      batch_size=8),
                      **PAPER_RATE),
                {"base": 600_000, "base_model": 6_000_000, "cpt": 200_000, "heldout": 100_000})
    if size == "gpu":
        return (Setup(base_vocab=8192, merges=8000, model=dict(d_model=256, n_layers=8, n_heads=8, n_kv_heads=4),
                      batch_size=16, seq_len=512, base_lr=1e-3, model_target_share=0.9,
                      flatten=Flatten(eval_every=500, window=3, min_gain=0.005, max_steps=20_000, dev_bytes=200_000),
                      **PAPER_RATE),
                {"base": 2_000_000, "base_model": 18_000_000, "cpt": 1_000_000, "heldout": 200_000})
    raise UsageError(f"preset pretrained-{size}: one of {', '.join(PRESETS)}")


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
    never trained on, §VI / App. D); ``unused_target``: the target lines after it.

    >>> t = texts(["e"] * 100, ["t"] * 100, 40, 16, 4)       # 2 bytes a line, newline counted
    >>> {k: len(v) for k, v in t.items()}
    {'base_text': 20, 'cpt_target': 6, 'cpt_english': 2, 'heldout_target': 2, 'heldout_english': 2, 'unused_target': 91}
    """
    base_en, cpt_en, held_en = consecutive(english, round((1 - base_share) * base_bytes),
                                           round((1 - cpt_share) * cpt_bytes), heldout_bytes)
    base_t, cpt_t, held_t = consecutive(target, round(base_share * base_bytes), round(cpt_share * cpt_bytes),
                                        heldout_bytes)
    used = len(base_t) + len(cpt_t) + len(held_t)
    return {"base_text": base_en + base_t, "cpt_target": cpt_t, "cpt_english": cpt_en,
            "heldout_target": held_t, "heldout_english": held_en, "unused_target": list(target[used:])}


def base_model_texts(english: Sequence[str], extra_target: Sequence[str], setup: Setup,
                     sizes: dict[str, int]) -> dict[str, list[str]]:
    """The pretrained-base regime's base-model text and Nepali dev text: English from
    the first lines of ``english`` (inside the base tokenizer's English, so disjoint
    from the continued-pretraining and held-out English of :func:`texts`) and
    ``model_target_share`` of ``sizes["base_model"]`` target bytes from
    ``extra_target`` (the extra text, disjoint from the pool), then its dev slice.

    >>> s = Setup(model_target_share=0.5, flatten=Flatten(1, 1, 0.0, 1, dev_bytes=2))
    >>> t = base_model_texts(["e"] * 10, ["n"] * 10, s, {"base": 20, "base_model": 8})
    >>> {k: len(v) for k, v in t.items()}
    {'base_model_text': 4, 'dev_target': 1}
    """
    en_bytes = round((1 - setup.model_target_share) * sizes["base_model"])
    if en_bytes > (1 - setup.base_target_share) * sizes["base"]:
        raise UsageError(f"the base model's {en_bytes:,} bytes of English would run into the continued-pretraining "
                         f"English: at most {(1 - setup.base_target_share) * sizes['base']:,.0f} (sizes['base'])")
    (base_en,) = consecutive(english, en_bytes)
    base_t, dev = consecutive(extra_target, round(setup.model_target_share * sizes["base_model"]),
                              setup.flatten.dev_bytes)
    return {"base_model_text": base_en + base_t, "dev_target": dev}
