"""The continued-pretraining experiment end to end: :func:`run` and notebook 07 (h)'s :func:`study`."""

from __future__ import annotations

import copy
import dataclasses
import math
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import torch

from modtok.adapt.hf_model import grow_lm as grow
from modtok.errors import DataError, UsageError
from modtok.evaluation.stats import label
from modtok.lm.batches import lm_vocab_size
from modtok.lm.model import LM, config
from modtok.lm.stream import StreamSource
from modtok.lm.train import CHECKPOINT, TrainConfig, default_device, load_checkpoint, save_atomic, train

from ..floor import RESULTS
from .arms import ADDITIONS, ARMS, BASE, LABELLED, MATCHED, PAIRS, R0_MATCHED, Arm, arms as make_arms, base_tokenizer
from .held_out import HeldOut, fit_held_out, flores_documents
from .presets import Setup, base_model_texts, flattened, preset, texts
from .scoring import compare, score_pieces


@dataclasses.dataclass
class Result:
    arms: dict[str, Arm]
    held_out: dict[str, HeldOut]  # eval set -> its pieces and units
    scores: dict[str, dict[str, dict[int, tuple[np.ndarray, np.ndarray]]]]  # eval set -> arm -> seed -> (nats, bytes)
    intervals: dict[str, dict[str, tuple[float, float, float]]]  # eval set -> compare()
    seeds: tuple[int, ...]
    base_steps: int  # the base model's steps (the pretrained base: its best checkpoint's)
    tokens: dict[str, dict[str, int]] = dataclasses.field(default_factory=dict)  # eval set -> arm -> tokens of the pieces
    seq_len: int = 0  # the context in ids of training and scoring windows
    roles: dict[str, str] = dataclasses.field(default_factory=dict)  # "primary" / "control" / "secondary" -> eval set
    base_history: list[tuple[int, float]] = dataclasses.field(default_factory=list)  # (step, Nepali dev bpb): Flatten
    flattened: bool | None = None  # the pretrained base: its constant phase stopped by the rule (False: at max_steps)
    base_decay: tuple[int, int] | None = None  # the pretrained base: the decay phase's first and last steps
    base_source: str = ""  # the pretrained base: where its target text came from
    setup: Setup | None = None  # what study() ran (its preset), for regime() and describe()
    sizes: dict[str, int] = dataclasses.field(default_factory=dict)

    def spread(self, ev: str, key: str) -> float:
        """Standard deviation over the seeds (ddof 1; 0 with one seed) of the
        point of ``key`` (an arm or ``"a − b"``) on eval set ``ev``."""
        points = [self.intervals[ev][f"{key} @ seed {s}"][0] for s in self.seeds]
        return float(np.std(points, ddof=1)) if len(points) > 1 else 0.0

    def table(self) -> list[dict]:
        """One row per arm: what it is, vocabulary, steps, training bytes, and per
        eval set the scored bytes, bytes per token, bits per byte (mean over seeds),
        its spread over seeds and its 95% interval over units (documents)."""
        rows = []
        for name, arm in self.arms.items():
            row = {"arm": name, "note": ADDITIONS.get(name, "the paper's"), "vocabulary": arm.tokenizer.vocab_size,
                   "steps": arm.steps, "training bytes": arm.bytes,
                   "seeds": 1 if name == BASE else len(self.seeds)}
            for ev, res in self.intervals.items():
                p, lo, hi = res[name]
                row[f"{ev} scored bytes"] = int(self.scores[ev][name][self.seeds[0]][1].sum())
                if self.tokens:
                    row[f"{ev} bytes/token"] = row[f"{ev} scored bytes"] / self.tokens[ev][name]
                row[f"{ev} bpb"], row[f"{ev} ± seeds"] = p, self.spread(ev, name)
                row[f"{ev} CI"] = f"[{lo:.3f}, {hi:.3f}]"
            rows.append(row)
        return rows

    def comparisons(self) -> list[dict]:
        """One row per (eval set, pair of :data:`PAIRS`): the difference (mean over
        seeds), its 95% interval over units, its spread over seeds, each seed's
        difference, and the label (:func:`label`) of the mean and of each seed;
        ``registered`` marks the paper's comparisons (:data:`LABELLED`)."""
        rows = []
        for ev, res in self.intervals.items():
            for a, b in PAIRS:
                key = f"{a} − {b}"
                d, lo, hi = res[key]
                per_seed = [res[f"{key} @ seed {s}"] for s in self.seeds]
                rows.append({"held-out text": ev, "comparison": key, "registered": (a, b) in LABELLED,
                             "difference": d, "lo": lo, "hi": hi, "CI": f"[{lo:+.3f}, {hi:+.3f}]",
                             "± seeds": self.spread(ev, key),
                             "per seed": ", ".join(f"{x[0]:+.3f}" for x in per_seed),
                             "label": label(lo, hi), "per-seed labels": ", ".join(label(x[1], x[2]) for x in per_seed)})
        return rows

    def held_out_lines(self) -> list[str]:
        """One line per held-out text: its pieces, the size they were cut at, the
        longest piece in ids against the context, and the bootstrap unit."""
        return [f"{ev}: {len(h.texts)} pieces of <= {h.piece_bytes:,} bytes ({h.nbytes:,} bytes), longest piece in "
                f"ids {h.longest} for a {self.seq_len}-id context; bootstrap unit: {h.unit} ({h.n_units})"
                for ev, h in self.held_out.items()]

    def summary(self, ev: str) -> str:
        """One line on eval set ``ev``: which of R0, R1, R2 has the lowest bits per
        byte (the paper: R0), how the pieces were scored (size, longest piece in
        ids per arm: one context each), the base model against R0, and R0 at R1's
        step count."""
        bpb = {a: self.intervals[ev][a][0] for a in self.arms}
        h = self.held_out[ev]
        return (f"lowest held-out {ev} bits per byte of R0, R1, R2: {min(('R0', 'R1', 'R2'), key=bpb.get)} (the paper: "
                f"R0); pieces of <= {h.piece_bytes:,} bytes, each in one {self.seq_len}-id context (longest piece, "
                f"ids: {h.longest}); base model {bpb[BASE]:.3f} vs R0 {bpb['R0']:.3f}; "
                f"R0 at R1's step count {bpb[R0_MATCHED]:.3f}")

    def describe(self, target: str = "Nepali") -> list[str]:
        """What the notebook prints above the tables: the regime (:func:`regime`), for
        the pretrained base where its text came from and its dev bits per byte by
        step, the held-out roles and :meth:`held_out_lines`."""
        out = [regime(self, target)]
        if self.base_history:
            out += [f"base model's {target} text: {self.base_source}",
                    "base model's dev bits per byte by step: "
                    + ", ".join(f"{s}: {b:.3f}" for s, b in self.base_history),
                    self.base_course()]
        return out + [f"held-out texts: {self.roles}", *self.held_out_lines()]

    def base_course(self) -> str:
        """The pretrained base's course in one line: where its constant phase
        ended (flattened by the rule, or not by ``max_steps``), the decay, and the
        step and dev bits per byte of the model used (the lowest)."""
        if self.base_decay is None:  # a result saved before the decay phase existed (bench --report)
            return f"{'flattened' if self.flattened else 'not flattened'}; no decay; the model used: the last step"
        start, end = self.base_decay
        dev = dict(self.base_history)[self.base_steps]
        return (("flattened at step " if self.flattened else "not flattened by the rule at the constant rate: "
                 "stopped at max_steps = ") + f"{start:,}; then decayed (cosine) over steps {start:,}-{end:,}; the "
                f"model used: step {self.base_steps:,}, the lowest dev bits per byte ({dev:.3f})")

    def interval_rows(self) -> list[dict]:
        """One row per (eval set, arm): ``{"arm", "held-out text", "bits per byte",
        "lo", "hi"}``, the bars (seed means, 95% intervals over units) of the figure."""
        return [{"arm": arm, "held-out text": ev, "bits per byte": res[arm][0], "lo": res[arm][1], "hi": res[arm][2]}
                for ev, res in self.intervals.items() for arm in self.arms]


def _train_cfg(setup: Setup, steps: int, lr: float, seed: int) -> TrainConfig:
    return TrainConfig(steps=steps, lr=lr, warmup_steps=max(1, round(setup.warmup * steps)), seed=seed,
                       ckpt_every=steps, prefetch=0)


@dataclasses.dataclass
class Pretrained:
    """What :func:`pretrain` did: ``history`` (step, dev bits per byte) of every
    evaluation, the decay's included; ``flat_at``: the step where :func:`flattened`
    fired at the constant rate (None: it did not by ``max_steps``); ``decay``: the
    decay phase's first and last steps; ``best``: the step of the returned model,
    the lowest in ``history``."""

    model: LM
    history: list[tuple[int, float]]
    flat_at: int | None
    decay: tuple[int, int]
    best: int


def _reschedule(out_dir: Path, tcfg: TrainConfig) -> None:
    """Let ``train(tcfg, resume=True)`` continue the checkpoint in ``out_dir`` under a
    new schedule: :func:`train` refuses a checkpoint written under another config
    (a resumed run must compute what it started), so the checkpoint is rewritten
    with ``tcfg``. Only the schedule changes (steps, warm-up span, last rate); the
    weights, AdamW moments and the stream's position stay, so the decay continues
    the constant phase as one run would."""
    path = out_dir / CHECKPOINT
    ckpt = load_checkpoint(path)
    ckpt["train_config"] = dataclasses.asdict(tcfg)
    save_atomic(ckpt, path)


def pretrain(cfg, setup: Setup, tokenizer, lines: Sequence[str], dev: Sequence[str], out_dir, device,
             progress: bool = False) -> Pretrained:
    """The pretrained-base regime's base model (:class:`Flatten`): trained on
    ``lines`` in an order fixed by ``setup.seed`` (cycled) at ``setup.base_lr``
    after a warm-up of one evaluation interval, constant until the dev bits per
    byte have :func:`flattened` or ``max_steps``, then a cosine decay to
    ``decay_to`` of the peak over ``decay_share`` of the steps so far (rounded up
    to whole evaluations). Every ``eval_every`` steps, its bits per byte on
    ``dev`` (pieces in one context, as the held-out text is scored). Returns the
    evaluated model with the lowest dev bits per byte (ties: the earlier step)."""
    f, out_dir = setup.flatten, Path(out_dir)
    # Interleaved: in the given order (English, then Nepali) each pass had an English block and a Nepali one,
    # and the Nepali dev bits per byte swung with them by up to 0.7 (Flatten's evidence).
    order = [lines[i] for i in np.random.default_rng(setup.seed).permutation(len(lines))]
    source = StreamSource(tokenizer, order, f.batch_size or setup.batch_size, setup.seq_len, cycle=True)
    pieces = fit_held_out(dev, setup.seq_len, {"R0": tokenizer}, setup.piece_bytes).texts
    history, best = [], (math.inf, 0, None)

    def piece(tcfg: TrainConfig, until: int) -> LM:
        nonlocal best
        model = train(cfg, tcfg, source, out_dir, resume=bool(history), until=until, progress=progress,
                      device=device).model.eval()
        nats, nbytes = score_pieces(model, tokenizer, pieces, device=device)
        history.append((until, float(nats.sum() / math.log(2) / nbytes.sum())))
        if history[-1][1] < best[0]:  # strictly lower: a tie keeps the earlier step
            best = (history[-1][1], until, copy.deepcopy(model.state_dict()))
        return model

    stable = TrainConfig(steps=f.max_steps, lr=setup.base_lr, min_lr_ratio=1.0, warmup_steps=f.eval_every,
                         seed=setup.seed, ckpt_every=f.eval_every, prefetch=0)
    flat_at, step = None, 0
    while step < f.max_steps and flat_at is None:
        step = min(step + f.eval_every, f.max_steps)
        model = piece(stable, step)
        if flattened([b for _, b in history], f.window, f.min_gain):
            flat_at = step
    span = f.eval_every * max(1, math.ceil(f.decay_share * step / f.eval_every))
    # lr_at's warm-up spans the steps done (already trained), so from `step` on it is the cosine from the peak
    decay = TrainConfig(steps=step + span, lr=setup.base_lr, min_lr_ratio=f.decay_to, warmup_steps=step,
                        seed=setup.seed, ckpt_every=f.eval_every, prefetch=0)
    _reschedule(out_dir, decay)
    for until in range(step + f.eval_every, step + span + 1, f.eval_every):
        model = piece(decay, until)
    model.load_state_dict(best[2])
    return Pretrained(model, history, flat_at, (step, step + span), best[1])


def run(setup: Setup, base_text: Sequence[str], cpt_target: Sequence[str], cpt_english: Sequence[str],
        evaluation: Mapping[str, Sequence[str]], out_dir, documents: Mapping[str, Sequence | None] | None = None,
        device=None, progress: bool = False, base_model_text: Sequence[str] | None = None,
        dev_target: Sequence[str] | None = None) -> Result:
    """The whole experiment (module docstring) in ``out_dir``.

    ``base_text``: English-heavy lines of the base tokenizer and (without
    ``setup.flatten``) of the base model, trained ``setup.base_steps``;
    ``cpt_target`` + ``cpt_english``: the continued-pretraining lines every
    byte-matched arm reads once (the merges are learned on ``cpt_target``),
    interleaved in an order fixed by each seed; ``evaluation``: ``{name:
    held-out lines}``, e.g. ``{"Nepali": ..., "English": ...}``; ``documents``:
    ``{name: one document id per line}`` where known (:func:`flores_documents`),
    the bootstrap unit; elsewhere a line is a document. The pieces are cut by
    :func:`fit_held_out` once the arms' tokenizers exist (they depend on the
    base tokenizer only), so that each is scored in one ``seq_len`` context
    under every arm. With ``setup.flatten`` (the pretrained-base regime) the base
    model reads ``base_model_text`` until its bits per byte on ``dev_target``
    flatten (:func:`pretrain`). Each arm's checkpoint directory is removed once
    it is scored (``out_dir/base`` stays).
    """
    out_dir = Path(out_dir)
    device = torch.device(device) if device else default_device()
    documents = documents or {}
    base = base_tokenizer(base_text, setup.base_vocab, out_dir / "base" / "tokenizer.json")
    arms = make_arms(base, cpt_target, setup.merges)
    base_tok = arms["R0"].tokenizer
    scoring = {name: arms[name].tokenizer for name in ("R0", "R1", "R2")}  # the matched arms share R2's and R0's
    held = {ev: fit_held_out(lines, setup.seq_len, scoring, setup.piece_bytes, documents.get(ev))
            for ev, lines in evaluation.items()}

    cfg = config("mini", lm_vocab_size(base_tok), max_seq_len=setup.seq_len, tie_embeddings=setup.tie_embeddings,
                 **setup.model)
    history, flat, decay, best = [], None, None, setup.base_steps
    if setup.flatten is None:
        source = StreamSource(base_tok, base_text, setup.batch_size, setup.seq_len, cycle=True)
        base_model = train(cfg, _train_cfg(setup, setup.base_steps, setup.base_lr, setup.seed), source,
                           out_dir / "base", resume=False, progress=progress, device=device).model.eval()
    else:
        if not base_model_text or not dev_target:
            raise UsageError("the pretrained-base regime (setup.flatten) needs base_model_text and dev_target")
        pre = pretrain(cfg, setup, base_tok, base_model_text, dev_target, out_dir / "base", device, progress)
        base_model, history, flat, decay, best = pre.model, pre.history, pre.flat_at is not None, pre.decay, pre.best
    arms[BASE].model = base_model

    scores = {ev: {name: {} for name in arms} for ev in held}
    for ev, h in held.items():  # the base model: one model, the same score for every seed
        once = score_pieces(base_model, base_tok, h.texts, device=device)
        scores[ev][BASE] = {s: once for s in setup.seeds}
    cpt = list(cpt_target) + list(cpt_english)
    for seed in setup.seeds:
        order = [cpt[i] for i in np.random.default_rng(seed).permutation(len(cpt))]
        for name in ARMS:
            arm = arms[name]
            src = StreamSource(arm.tokenizer, order, setup.batch_size, setup.seq_len, cycle=name == MATCHED)
            # one pass for R0, R1, R2; R1's step count for the matched arms (R2's wraps into a second pass)
            arm.steps = arms["R1"].steps if name in (MATCHED, R0_MATCHED) else src.steps
            arm.bytes = int(sum(src.batch(s).n_bytes for s in range(arm.steps)))
            init = base_model if arm.ext is None else grow(base_model, arm.ext)
            arm_dir = out_dir / f"{name.split()[0]}{'-matched' if name in (MATCHED, R0_MATCHED) else ''}-seed{seed}"
            model = train(init.cfg, _train_cfg(setup, arm.steps, setup.lr, seed), src, arm_dir, resume=False,
                          progress=progress, device=device, init=init).model.eval()
            for ev, h in held.items():
                scores[ev][name][seed] = score_pieces(model, arm.tokenizer, h.texts, device=device)
            shutil.rmtree(arm_dir, ignore_errors=True)
    intervals = {ev: compare(scores[ev], held[ev].units, PAIRS, n_boot=setup.n_boot, seed=setup.seed) for ev in held}
    tokens = {ev: {name: sum(map(len, arm.tokenizer.encode_batch(h.texts))) for name, arm in arms.items()}
              for ev, h in held.items()}
    return Result(arms, held, scores, intervals, tuple(setup.seeds), best, tokens, setup.seq_len,
                  base_history=history, flattened=flat, base_decay=decay)


PAPER_BASE_ENGLISH = {"Llama-3.2-1B": 0.788, "Qwen3-0.6B-Base": 0.873}  # held-out English bpb of the bases (§VII-B)
NEAR_PAPER = 1.25  # a base within this factor of the paper's English bpb counts as pretrained like the paper's


def regime(res: Result, target: str = "Nepali", short: bool = False) -> str:
    """The regime a run tested, named from its setting and measurements: the base
    model's size, steps and target share, its English bits per byte (the control
    held-out text) against the paper's base models' (:data:`PAPER_BASE_ENGLISH`),
    and what the paper says of that regime. The rule: a base pretrained until its
    target bits per byte flattened (:class:`Flatten`) is *pretrained*; one stopped
    at ``max_steps`` is *pretrained, not flattened*; a base trained a fixed number
    of steps is *close to training from scratch* unless its English bits per byte
    is within :data:`NEAR_PAPER` times the paper's larger one. ``res.setup`` and
    ``res.sizes`` are what :func:`study` ran. ``short``: the kind and the base in
    one clause (the ``scale`` of :func:`~modtok.studies.pretoken_floor.claims.cpt_rows`).
    """
    setup, sizes = res.setup, res.sizes
    cfg = config("mini", res.arms["R0"].tokenizer.vocab_size + 1, max_seq_len=res.seq_len,
                 tie_embeddings=setup.tie_embeddings, **setup.model)
    params = LM(cfg).num_params(vocab=False) / 1e6
    share, text = ((setup.model_target_share, sizes["base_model"]) if setup.flatten is not None
                   else (setup.base_target_share, sizes["base"]))
    english = res.intervals[res.roles["control"]][BASE][0] if "control" in res.roles else None
    paper = max(PAPER_BASE_ENGLISH.values())
    said = (f"base model {cfg.n_layers} layer{'s' if cfg.n_layers != 1 else ''} x d_model {cfg.d_model} ({params:.2f}M parameters without the "
            f"vocabulary, {'tied' if cfg.tie_embeddings else 'untied'} embeddings), {res.base_steps:,} steps on "
            f"{text / 1e6:g} MB of which {share:.0%} {target}; English bits per byte of the base "
            + (f"{english:.2f}" if english is not None else "not measured (no English held-out text)")
            + " against the paper's base models' " + " and ".join(f"{v} ({k})" for k, v in PAPER_BASE_ENGLISH.items())
            + " (§VII-B). ")
    if setup.flatten is not None:
        start, end = res.base_decay
        kind = ((f"pretrained: the base's dev bits per byte flattened at step {start:,}" if res.flattened else
                 f"pretrained, not flattened: the rule did not fire before max_steps = {start:,}")
                + f", then decayed to step {end:,}; the base used is step {res.base_steps:,}, its lowest dev bits "
                "per byte")
        if short:
            return (f"pretrained-base arm, {kind}; a {params:.2f}M-parameter base (without the vocabulary; the "
                    f"paper's: 1B and 0.6B), {res.base_steps:,} steps on {text / 1e6:g} MB, {share:.0%} {target}")
        return (f"Regime: {kind} (the paper's hypothesis as far as this data allows: tied embeddings, the paper's "
                f"rate {setup.lr:g}, {setup.warmup:.0%} warm-up). " + said
                + "The paper's pretrained models gave R0 the lowest Nepali bits per byte (§VII-B).")
    if english is not None and english <= NEAR_PAPER * paper:
        return "Regime: pretrained (English within the paper's range). " + said
    return ("Regime: close to training from scratch. " + said + "§VIII (\"Why our sign differs from Regmi et al.\") "
            "reports that from scratch the repaired regex lowers Nepali bits per byte (by 4.4% at equal compute in "
            "Regmi et al.), while retrofitted to a pretrained model at equal bytes it is worse: in this regime the "
            "paper expects R2 to win.")


def machine_size(smoke: bool) -> str:
    """The preset of the small-base regime this machine runs (:func:`preset`):
    ``"smoke"`` at smoke size (CI), else ``"gpu"`` where CUDA is present
    (:func:`~modtok.lm.train.default_device`), else ``"cpu"``; the pretrained-base
    arm is ``"pretrained-"`` and the same.

    >>> machine_size(True), machine_size(False) in ("gpu", "cpu")
    ('smoke', True)
    """
    return "smoke" if smoke else "gpu" if default_device().type == "cuda" else "cpu"


def missing(size: str, target: Sequence[str], lang: str, extra_target: Sequence[str] | None = None) -> str:
    """What preset ``size`` lacks to run on ``lang``'s training lines ``target`` (and the extra
    text ``extra_target``), "" when nothing: a ``pretrained-*`` preset pretrains its base model on
    the extra text (``pretrained-smoke``: on the target lines the other slices of :func:`texts`
    leave, without it) and stops it by a dev slice of that text. :func:`study` refuses what this
    names (:class:`~modtok.errors.DataError`); notebook 07 prints it and skips the arm.

    >>> missing("smoke", ["x"], "hin_Deva"), missing("pretrained-cpu", ["x"], "hin_Deva")[:46]
    ('', "preset 'pretrained-cpu' pretrains the base mod")
    >>> missing("pretrained-smoke", ["x" * 99] * 22, "hin_Deva")  # a user's 22 lines of Hindi: all sliced before
    "preset 'pretrained-smoke': no hin_Deva dev slice for the base model (pretrained on hin_Deva text, it stops by a dev slice of it): 0 of the 22 training lines are left after the continued-pretraining and held-out slices, and there is no extra text; give more hin_Deva text"
    """
    setup, sizes = preset(size)
    if setup.flatten is None:
        return ""
    if extra_target is None and not size.endswith("smoke"):
        return (f"preset {size!r} pretrains the base model on substantial {lang} disjoint from the pool: no extra "
                f"text (data.extra_text_path('{lang}.large.txt'): $MODTOK_EXTRA or extra/ beside the pool)")
    rest = texts([], list(target), sizes["base"], sizes["cpt"], sizes["heldout"], setup.cpt_target_share,
                 setup.base_target_share)["unused_target"]
    if base_model_texts([], list(extra_target) if extra_target is not None else rest, setup, sizes)["dev_target"]:
        return ""
    given = (f"the extra text has {len(extra_target):,} lines, too few" if extra_target is not None else
             f"{len(rest):,} of the {len(target):,} training lines are left after the continued-pretraining and "
             "held-out slices, and there is no extra text")
    return (f"preset {size!r}: no {lang} dev slice for the base model (pretrained on {lang} text, it stops by a dev "
            f"slice of it): {given}; give more {lang} text")


def study(size: str, english: Sequence[str], target: Sequence[str], eval_target: Sequence[str], name: str,
          lang: str, eval_label: str, out_dir, device=None, progress: bool = False,
          extra_target: Sequence[str] | None = None) -> Result:
    """Notebook 07 (h) in one call, at preset ``size`` (:func:`preset`):
    :func:`texts` from the training lines ``english`` and ``target`` (the
    target language ``lang``, called ``name``), then :func:`run` scored on three
    held-out sets, as the paper's §VI / App. D name them:

    - ``primary``: ``name``, the held-out slice of the training source (never trained on);
    - ``control``: ``"English"``, the same for English (the registered English control);
    - ``secondary``: ``"<name> (<eval_label>)"``, the evaluation text ``eval_target``
      (e.g. FLORES-200 devtest; its documents from the metadata where it is FLORES).

    A slice the training text is too short for is left out (its role absent
    from :attr:`Result.roles`). English evaluation text is not scored (the
    paper's FLORES metric is Nepali only, Table VIII).

    The ``pretrained-*`` presets pretrain the base model on ``extra_target``
    (the extra text, disjoint from ``target``) and English (:func:`base_model_texts`);
    without it, ``pretrained-smoke`` takes the ``target`` lines after the held-out
    slice (disjoint too, and said in :attr:`Result.base_source`) and the larger
    presets refuse (:class:`~modtok.errors.DataError`: what is missing, :func:`missing`); so
    does any preset whose text leaves no dev slice for the base model."""
    setup, sizes = preset(size)
    smoke = size.endswith("smoke")
    t = texts(list(english), list(target), sizes["base"], sizes["cpt"], sizes["heldout"], setup.cpt_target_share,
              setup.base_target_share)
    rest, source = t.pop("unused_target"), ""
    if why := missing(size, target, lang, extra_target):
        raise DataError(why)
    if setup.flatten is not None:
        source = ("the extra text" if extra_target is not None
                  else f"the {lang} training lines after the held-out slice (no extra text: smoke only)")
        t |= base_model_texts(list(english), list(extra_target) if extra_target is not None else rest, setup, sizes)
    secondary = f"{name} ({eval_label.split(' (')[0] or 'evaluation text'})"
    sets = {"primary": (name, t.pop("heldout_target")), "control": ("English", t.pop("heldout_english")),
            "secondary": (secondary, list(eval_target)[:100] if smoke else list(eval_target))}
    sets = {role: v for role, v in sets.items() if any(s.strip() for s in v[1])}
    evaluation = {ev: lines for ev, lines in sets.values()}
    documents = {secondary: flores_documents(evaluation[secondary], lang)} if "secondary" in sets else {}
    device_type = torch.device(device).type if device else default_device().type  # a GPU's result is another's
    res = RESULTS.get("continued pretraining", (setup, t, evaluation, documents, device_type), lambda: run(
        setup, **t, evaluation=evaluation, out_dir=out_dir, documents=documents, device=device, progress=progress))
    Path(out_dir).mkdir(parents=True, exist_ok=True)  # read back, nothing was written there: the directory is as run leaves it
    res.roles = {role: ev for role, (ev, _) in sets.items()}
    res.base_source, res.setup, res.sizes = source, setup, sizes
    return res
