"""Language models trained with sampled subtokenizers (notebook 04; the paper's §5.2, §6, Tables 3, 6, 15, 18, 23).

One LM over the global vocabulary of a modular tokenizer; every batch is in one language
and tokenized with a subtokenizer drawn by a sampling scheme (:mod:`modtok.lm.sampling`:
Mono-only, Samp_Full(p), Samp_Sub_n(n, p)). This module trains one model per scheme on
the same data and schedule (:func:`train_schemes`) and the paper's **Baseline** beside them
(:func:`train_baseline`, §6.1-6.2: one shared tokenizer over all languages, monolingual
batches), tabulates bits per byte under the paper's four inference settings
(:func:`evaluate_schemes`, :func:`bpb_table`, Tables 4/6; the Baseline under its one
tokenizer, the paper's "Baseline | Full" row)
and the language fidelity of generation (:func:`fidelity_rows`), and summarises what a
scheme does to the batches (:func:`sampling_summary`, the notebook's explorer).

>>> smooth([1.0, 2.0, 3.0, 4.0], 2).tolist()            # moving average, "valid" part only
[1.5, 2.5, 3.5]
>>> rows = [{"scheme": "s", "setting": st, "lang": lang, "bpb": b}
...         for st, lang, b in [("Lang", "x", 1.0), ("Lang", "y", 3.0), ("Full", "x", 2.0), ("Full", "y", 4.0)]]
>>> bpb_table(rows, ["s"], ["Lang", "Full"], ["x", "y"])
[{'scheme': 's', 'setting': 'Lang', 'x': 1.0, 'y': 3.0}, {'scheme': 's', 'setting': 'Full', 'x': 2.0, 'y': 4.0}]
>>> mean_bpb(rows, ["s"], ["Lang", "Full"])
[{'scheme': 's', 'setting': 'Lang', 'bpb': 2.0}, {'scheme': 's', 'setting': 'Full', 'bpb': 3.0}]
>>> bpb_table(rows + [{"scheme": "Baseline", "setting": "Full", "lang": lang, "bpb": 2.5} for lang in "xy"],
...           ["s", "Baseline"], ["Full"], ["x", "y"])[1]       # a (scheme, setting) never evaluated has no row
{'scheme': 'Baseline', 'setting': 'Full', 'x': 2.5, 'y': 2.5}
"""

from __future__ import annotations

import dataclasses
import json
import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

import numpy as np

from modtok.artifacts import baselines
from modtok.artifacts.modular import ModularTokenizer
from modtok.cache import Results, fingerprint
from modtok.errors import SchemeError, UsageError
from modtok.evaluation import metrics
from modtok.lm.sampling import Scheme, SubtokenizerSampler, default_mixture, samp_full
from modtok.studies import paper_vs_here
from modtok.studies.contract import Study
from modtok.studies.paper_vs_here import Measured, NotMeasured
from modtok.studies.setting import corpus_fields, pretokenization
from modtok.text.data import Corpora

from . import PAPER

# torch, and the modtok.lm modules built on it (batches, model, train, infer), are imported
# inside the functions that train, evaluate or size a model, never when this module is: the
# reproduction page imports every study module to list the studies (contract.declared), and
# torch was most of `modtok report`'s time (4.6 s of this module's import at load 10, against
# under 1.6 s for any other study; tests/test_contract.py keeps it out).
if TYPE_CHECKING:
    from modtok.lm.model import LM, LMConfig
    from modtok.lm.train import TrainConfig

# This kernel's trainings and evaluations, kept on disk (modtok.cache): cache_note() says which were read back
RESULTS = Results("modular_lm")


def cache_note() -> str:
    """One line: which models and evaluations of this kernel came from the results cache, and when."""
    return RESULTS.note()


@dataclass
class Trained:
    """One model per scheme (in eval mode), its ``metrics.jsonl`` rows and its training time
    (s, when it was trained: a model read from the results cache keeps its time)."""

    models: dict[str, LM]
    curves: dict[str, list[dict]]
    seconds: dict[str, float]


def tokenizer_key(tokenizer) -> tuple:
    """What a :class:`~modtok.artifacts.modular.ModularTokenizer` is, for a results cache key:
    its ``tokenizer.json`` and each language's ids (not the encoders it built while used)."""
    return tokenizer.tokenizer_json, {lang: tokenizer.ids([lang]) for lang in tokenizer.languages}


def train_schemes(tokenizer, train_text: Mapping[str, list[str]], schemes: Mapping[str, Scheme],
                  mixture: Mapping[str, float], model_cfg: LMConfig, train_cfg: TrainConfig, batch: int,
                  seq: int, runs_dir, progress: bool = False) -> Trained:
    """Train one model per ``{name: scheme}`` on the same data, seed (0), model and schedule;
    run ``name`` writes its checkpoint and metrics under ``runs_dir/name`` (never resumed).
    A model trained before on the same tokenizer, text and settings is read from the results
    cache instead (its ``runs_dir/name`` is then not written)."""
    from modtok.lm.batches import BatchSource
    from modtok.lm.train import read_metrics, train

    out, data = Trained({}, {}, {}), fingerprint(tokenizer_key(tokenizer), train_text)

    def run(name: str, scheme: Scheme) -> tuple[LM, list[dict], float]:
        sampler = SubtokenizerSampler(scheme, mixture, seed=0)
        source = BatchSource(tokenizer, train_text, sampler, batch, seq, seed=0)
        t0 = time.perf_counter()
        result = train(model_cfg, train_cfg, source, f"{runs_dir}/{name}", resume=False, progress=progress)
        return result.model.eval(), read_metrics(f"{runs_dir}/{name}"), time.perf_counter() - t0

    for name, scheme in schemes.items():
        out.models[name], out.curves[name], out.seconds[name] = RESULTS.get(
            "train", (data, scheme, mixture, model_cfg, train_cfg, batch, seq), partial(run, name, scheme))
    return out


BASELINE = "Baseline"  # the paper's name of its comparator (Tables 4-8, 15)


@dataclass
class Baseline:
    """The Baseline run: its shared ``tokenizer`` (every language's view is the whole
    vocabulary), the model (in eval mode), its ``metrics.jsonl`` rows and training time (s)."""

    tokenizer: ModularTokenizer
    model: LM
    curve: list[dict]
    seconds: float


def shared_tokenizer(train_text: Mapping[str, list[str]], vocab_size: int, scheme: str) -> ModularTokenizer:
    """The Baseline's one tokenizer: a joint byte-level BPE (:func:`modtok.artifacts.baselines.train_joint`,
    pre-tokenizer ``scheme``) on every language's training lines at ``vocab_size`` ids (HF's trainer
    stops earlier when no pair occurs twice: ``vocab_size`` of the result says), as the LM code
    takes it: each language's view holds every id, so any batch is encoded and scored over the one
    shared vocabulary."""
    hf = baselines.train_joint(train_text, vocab_size, scheme=scheme)
    return ModularTokenizer(json.loads(hf.to_str()), {lang: range(hf.get_vocab_size()) for lang in train_text})


def train_baseline(tokenizer, scheme: str, train_text: Mapping[str, list[str]], mixture: Mapping[str, float],
                   model_cfg: LMConfig, train_cfg: TrainConfig, batch: int, seq: int, runs_dir,
                   progress: bool = False) -> Baseline:
    """The paper's Baseline (§6.2: "the same monolingual batching scheme but with a single shared
    multilingual tokenizer"), beside :func:`train_schemes`' models: a :func:`shared_tokenizer` of
    the modular ``tokenizer``'s total size (its union of every language), the same mixture, batch
    and sequence length, model shape (with the shared tokenizer's rows), schedule and seed 0. The
    sampler is Samp_Full(1) with seed 0: each step draws the same batch language as the schemes'
    samplers (the language is drawn first, :meth:`~modtok.lm.sampling.SubtokenizerSampler.draw`)
    and always the full, here shared, tokenizer. Written under ``runs_dir/Baseline``; read from
    the results cache instead when trained before on the same tokenizer size, text and settings."""
    from modtok.lm.batches import BatchSource, lm_vocab_size
    from modtok.lm.train import read_metrics, train

    def run() -> Baseline:
        shared = shared_tokenizer(train_text, tokenizer.vocab_size, scheme)
        sampler = SubtokenizerSampler(samp_full(1.0), mixture, seed=0)
        source = BatchSource(shared, train_text, sampler, batch, seq, seed=0)
        t0 = time.perf_counter()
        result = train(dataclasses.replace(model_cfg, vocab_size=lm_vocab_size(shared)), train_cfg, source,
                       f"{runs_dir}/{BASELINE}", resume=False, progress=progress)
        return Baseline(shared, result.model.eval(), read_metrics(f"{runs_dir}/{BASELINE}"), time.perf_counter() - t0)

    params = (tokenizer.vocab_size, scheme, fingerprint(train_text), mixture, model_cfg, train_cfg, batch, seq)
    return RESULTS.get("baseline", params, run)


def smooth(ys: Sequence[float], w: int) -> np.ndarray:
    """Moving average of window ``w`` (the ``len(ys) - w + 1`` full windows)."""
    return np.convolve(ys, np.ones(w) / w, mode="valid")


def loss_curves(curves: Mapping[str, list[dict]], w: int, key: str = "bpb") -> dict[str, tuple]:
    """``{name: (steps, smoothed key)}`` for :func:`modtok.ui.plots.lines`."""
    out = {}
    for name, rows in curves.items():
        ys = smooth([r[key] for r in rows], w)
        out[name] = (np.arange(len(ys)), ys)
    return out


@dataclass(frozen=True)
class Passes:
    """How many times a run's steps read its training text (epochs): per language, the UTF-8
    bytes its batches' targets covered over the bytes of its non-blank training lines (each
    line's newline counted, as :class:`~modtok.lm.batches.BatchSource` counts it), and
    ``overall``: the same over every language of the run."""

    overall: float
    per_lang: dict[str, float]


def passes(curve: Sequence[dict], train_text: Mapping[str, list[str]]) -> Passes:
    """The :class:`Passes` of a run from its ``metrics.jsonl`` rows (``curve``: one a step,
    with its ``lang`` and ``bytes``) and the text it trained on (``{lang: lines}``).

    A fixed number of steps on a small corpus reads it many times over, and its training
    bits per byte then measure memorisation (session 21's trial: notebook 04 at normal size
    on a few KB of UDHR, hundreds of passes, train bpb 0.007, said nowhere).

    >>> curve = [{"step": 0, "lang": "x", "bytes": 30.0}, {"step": 1, "lang": "x", "bytes": 30.0}]
    >>> p = passes(curve, {"x": ["abcd", "", "efghi"]})     # 5 + 6 bytes a pass: 60 bytes read
    >>> round(p.overall, 2), {k: round(v, 2) for k, v in p.per_lang.items()}
    (5.45, {'x': 5.45})
    """
    if [r["step"] for r in curve] != list(range(len(curve))):
        raise UsageError(f"passes need one metrics line a step (log_every=1); these {len(curve)} lines are of steps "
                         f"{curve[0]['step'] if curve else '-'}..{curve[-1]['step'] if curve else '-'}")
    read: dict[str, float] = {}
    for r in curve:
        read[r["lang"]] = read.get(r["lang"], 0.0) + r["bytes"]
    missing = sorted(set(read) - set(train_text))
    if missing:
        raise UsageError(f"the run trained on {', '.join(missing)}, which the training text given lacks")
    size = {lang: sum(len(s.encode("utf-8")) + 1 for s in train_text[lang] if s.strip()) for lang in read}
    return Passes(sum(read.values()) / sum(size.values()), {lang: read[lang] / size[lang] for lang in sorted(read)})


def passes_line(curves: Mapping[str, Sequence[dict]], train_text: Mapping[str, list[str]]) -> str:
    """What notebook 04 prints after training: the passes over the training text its steps
    made (:func:`passes`), the most of any run, each run's, and the most-read language; when
    that is more than one pass, plainly that the model can memorise the text.

    >>> curve = [{"step": s, "lang": "x", "bytes": 30.0} for s in range(2)]
    >>> passes_line({"A": curve, "B": curve[:1]}, {"x": ["abcd", "efghi"]})
    '5.5 passes over the training text (bytes trained on / bytes of text: A 5.5, B 2.7; the most read: x, 5.5 in A): the model can memorise it, and its training bits per byte then measure that'
    >>> passes_line({"A": curve[:1]}, {"x": ["abcd" * 10]})
    '0.73 of one pass over the training text (bytes trained on / bytes of text: A 0.73; the most read: x, 0.73 in A): no byte read twice on average'
    """
    runs = {name: passes(curve, train_text) for name, curve in curves.items()}
    most = max(runs, key=lambda name: runs[name].overall)
    run, lang = max(((name, lang) for name, p in runs.items() for lang in p.per_lang),
                    key=lambda k: runs[k[0]].per_lang[k[1]])
    n = runs[most].overall
    digits = 1 if n > 1 else 2
    each = ", ".join(f"{name} {p.overall:.{digits}f}" for name, p in runs.items())
    said = (f"bytes trained on / bytes of text: {each}; the most read: {lang}, "
            f"{runs[run].per_lang[lang]:.{digits}f} in {run}")
    if n > 1:
        return (f"{n:.{digits}f} passes over the training text ({said}): the model can memorise it, and its training "
                "bits per byte then measure that")
    return f"{n:.{digits}f} of one pass over the training text ({said}): no byte read twice on average"


def evaluate_schemes(models: Mapping[str, LM], tokenizer, corpus: Mapping[str, list[str]],
                     english: str = "eng_Latn", baseline: Baseline | None = None) -> list[dict]:
    """:func:`modtok.lm.infer.evaluate_settings` of every model, each row tagged with its ``scheme``
    (kept in the results cache, keyed on the models' weights, the tokenizer and the text); with
    ``baseline``, its rows too (scheme :data:`BASELINE`, setting "Full" only: under a shared
    tokenizer the four settings are one, as the paper's Baseline rows say)."""
    from modtok.lm import infer

    data = fingerprint(tokenizer_key(tokenizer), corpus, english)
    rows = [{"scheme": name, **row} for name, model in models.items()
            for row in RESULTS.get("evaluate", (data, model.state_dict()), lambda model=model: infer.evaluate_settings(
                model, tokenizer, dict(corpus), english=english))]
    if baseline is not None:
        rows += [{"scheme": BASELINE, **row} for row in RESULTS.get(
            "evaluate baseline", (fingerprint(tokenizer_key(baseline.tokenizer), corpus, english),
                                  baseline.model.state_dict()),
            lambda: infer.evaluate_settings(baseline.model, baseline.tokenizer, dict(corpus), settings=("Full",),
                                            english=english))]
    return rows


def _cell(rows: list[dict], **match) -> dict:
    return next(r for r in rows if all(r[k] == v for k, v in match.items()))


def bpb_table(rows: list[dict], schemes: Sequence[str], settings: Sequence[str],
              langs: Sequence[str]) -> list[dict]:
    """One row per (scheme, setting) that was evaluated, one bits-per-byte column per language."""
    return [{"scheme": s, "setting": st,
             **{lang: _cell(rows, scheme=s, setting=st, lang=lang)["bpb"] for lang in langs}}
            for s in schemes for st in settings if _evaluated(rows, s, st)]


def _evaluated(rows: list[dict], scheme: str, setting: str) -> bool:
    return any(r["scheme"] == scheme and r["setting"] == setting for r in rows)


def mean_bpb(rows: list[dict], schemes: Sequence[str], settings: Sequence[str]) -> list[dict]:
    """Bits per byte per (scheme, setting) that was evaluated, averaged over the languages."""
    return [{"scheme": s, "setting": st,
             "bpb": float(np.mean([r["bpb"] for r in rows if r["scheme"] == s and r["setting"] == st]))}
            for s in schemes for st in settings if _evaluated(rows, s, st)]


def coverage(rows: list[dict], langs: Sequence[str], setting: str = "Full-Lang") -> dict[str, float]:
    """Per language, the share of ``setting``'s targets that were scored (the same for every scheme)."""
    return {lang: _cell(rows, setting=setting, lang=lang)["coverage"] for lang in langs}


def reading(rows: list[dict], schemes: Sequence[str], langs: Sequence[str]) -> str:
    """How to read this run's Table 4/6 analog, from its rows (the notebook prints it; no
    number of it is typed in the notebook's prose): what Full−Lang leaves unscored, and
    whether sampling the full tokenizer in training (the second scheme) narrows the gap
    between Full and Lang that the first (Mono-only) has.

    >>> rows = [{"scheme": s, "setting": st, "lang": "x", "bpb": b, "coverage": c}
    ...         for s, st, b, c in [("Mono", "Lang", 3.0, 1.0), ("Mono", "Full", 3.4, 1.0), ("Mono", "Full-Lang", 2.9, 0.95),
    ...                             ("Samp", "Lang", 3.1, 1.0), ("Samp", "Full", 3.2, 1.0), ("Samp", "Full-Lang", 3.0, 0.95)]]
    >>> print(reading(rows, ["Mono", "Samp"], ["x"]))
    Full−Lang coverage (the Full tokens inside the language's ids, the same for every scheme): x 95.0%. The other 5.0% of its targets are counted, not scored, so Full−Lang's bits per byte are over the rest of the text: mean 2.900 against Lang's 3.000 for Mono.
    Samp narrows the gap between Full and Lang: mean 3.200 vs 3.100, against 3.400 vs 3.000 for Mono.
    """
    cov = coverage(rows, langs)
    means = {(r["scheme"], r["setting"]): r["bpb"] for r in mean_bpb(rows, schemes, ("Lang", "Full", "Full-Lang"))}
    first, second = schemes[0], schemes[1]
    gap = {s: means[s, "Full"] - means[s, "Lang"] for s in (first, second)}
    missed = (1 - max(cov.values()), 1 - min(cov.values()))
    span = f"{missed[0]:.1%}" if f"{missed[0]:.1%}" == f"{missed[1]:.1%}" else f"{missed[0]:.1%}–{missed[1]:.1%}"
    return ("Full−Lang coverage (the Full tokens inside the language's ids, the same for every scheme): "
            + ", ".join(f"{lang} {c:.1%}" for lang, c in cov.items())
            + f". The other {span} of its targets are counted, not scored, so Full−Lang's bits per byte are over "
            f"the rest of the text: mean {means[first, 'Full-Lang']:.3f} against Lang's {means[first, 'Lang']:.3f} "
            f"for {first}.\n{second} {'narrows' if gap[second] < gap[first] else 'does not narrow'} the gap between "
            f"Full and Lang: mean {means[second, 'Full']:.3f} vs {means[second, 'Lang']:.3f}, against "
            f"{means[first, 'Full']:.3f} vs {means[first, 'Lang']:.3f} for {first}.")


def prompts(corpus: Mapping[str, list[str]], n: int, words: int = 6) -> dict[str, list[str]]:
    """The first ``words`` words of each language's first ``n`` lines.

    >>> prompts({"x": ["a b c d", "e f"]}, 1, words=2)
    {'x': ['a b']}
    """
    return {lang: [" ".join(line.split()[:words]) for line in lines[:n]] for lang, lines in corpus.items()}


def fidelity_rows(models: Mapping[str, LM], tokenizer, prompts: Mapping[str, list[str]],
                  **generation) -> list[dict]:
    """Per scheme, the share of generated tokens (full tokenizer; :func:`modtok.lm.infer.fidelity`
    with ``generation`` = max_new_tokens, top_k, seed, ...) that belong only to other
    languages, per prompt language and their ``mean`` (kept in the results cache, keyed on the
    models' weights, the tokenizer, the prompts and ``generation``)."""
    from modtok.lm import infer

    rows, key = [], fingerprint(tokenizer_key(tokenizer), prompts, generation)
    for name, model in models.items():
        shares = RESULTS.get("fidelity", (key, model.state_dict()),
                             lambda model=model: infer.fidelity(model, tokenizer, dict(prompts), **generation))
        rows.append({"scheme": name, **shares, "mean": float(np.mean(list(shares.values())))})
    return rows


def timing_rows(full_vocab: int, compact_rows, widths, label: str, device) -> list[dict]:
    """:func:`modtok.lm.infer.full_vs_compact_timing`, kept in the results cache like a
    training: keyed on the sizes, the device and torch's thread count, so a second Run All shows
    the first one's timing (:func:`cache_note` says when it was taken) and another machine or
    device times again. ``modtok cache clear`` times again on this one."""
    import torch

    from modtok.lm import infer

    rows = np.asarray(compact_rows)
    return RESULTS.get("timing", (full_vocab, rows, list(widths), label, str(device), torch.get_num_threads()),
                       lambda: infer.full_vs_compact_timing(full_vocab, rows, widths, label, device))


def sampling_summary(tokenizer, scheme: str, n: int, p: float, langs: Sequence[str],
                     english: str = "eng_Latn", draws: int = 500) -> dict:
    """What scheme ``scheme`` ("mono", "samp_full", "samp_sub"; ``n`` other languages for
    samp_sub, ``p`` the probability of the larger tokenizer, ignored by mono) does to
    ``draws`` batches of the 70%-English mixture of ``langs``: per kind of subtokenizer
    ("full", "own language", "own + n") its share of batches, mean active ids and output-layer
    cost relative to the full vocabulary. ``{"error", "rows", "name"}``; ``error`` is the
    :class:`~modtok.errors.SchemeError` message of an impossible setting (then no rows).
    """
    from modtok.lm.batches import active_ids, lm_vocab_size

    try:
        s = Scheme(scheme, 0.0 if scheme == "mono" else p, n if scheme == "samp_sub" else 0)
        sampler = SubtokenizerSampler(s, default_mixture(list(langs), english, 0.7), seed=0)
    except SchemeError as e:
        return {"error": str(e), "rows": []}
    kinds: dict[str, list[int]] = {}
    for step in range(draws):
        d = sampler.draw(step)
        if d.langs is None:
            kind = "full"
        else:
            kind = "own language" if d.langs == (d.lang,) else f"own + {len(d.langs) - 1}"
        kinds.setdefault(kind, []).append(len(active_ids(tokenizer, d.langs)))
    rows = [{"subtokenizer": k, "share": len(v) / draws, "mean active ids": float(np.mean(v)),
             "output cost vs full": float(np.mean(v)) / lm_vocab_size(tokenizer)}
            for k, v in sorted(kinds.items())]
    return {"error": None, "rows": rows, "name": s.name}


@dataclass(frozen=True)
class Settings:
    """What notebook 04 ran, for :func:`setting`: the corpus and languages, the modular
    ``tokenizer`` (``scheme`` its pre-tokenizer), the training ``mixture``, one trained
    ``model`` (its shape) and its name, the schedule (``train_cfg``, ``batch`` x ``seq``
    tokens a step), the ``device`` and ``timing`` (the vocabulary of the full/compact timing)."""

    corpora: Corpora
    langs: Sequence[str]
    tokenizer: ModularTokenizer
    mixture: Mapping[str, float]
    scheme: str
    model: LM
    model_name: str
    train_cfg: TrainConfig
    batch: int
    seq: int
    device: object
    timing: str


def setting(s: Settings) -> dict[str, str]:
    """This run's setting, in the fields of the paper's (``paper_figures.toml``): the corpus, the
    modular tokenizer, the mixture, the model, the schedule and the timing of ``s``."""
    from modtok.lm.batches import lm_vocab_size

    langs, mixture, tokenizer, train_cfg, corpora = list(s.langs), s.mixture, s.tokenizer, s.train_cfg, s.corpora
    top = max(mixture, key=mixture.get)
    cfg = s.model.cfg
    ks = sorted({len(tokenizer.ids([lang])) for lang in langs})
    return {**corpus_fields(corpora, langs),
            "size": f"{corpus_fields(corpora, langs)['size']}; {train_cfg.steps * s.batch * s.seq:,} training tokens "
                    f"seen; mixture {mixture[top]:.0%} {top}, the rest equal",
            "vocabulary": f"sequential BPE, {ks[0]:,}-{ks[-1]:,} ids per language, {lm_vocab_size(tokenizer):,} "
                          f"LM rows in all; timing: {s.timing}",
            "model": f"{s.model_name!r}: {s.model.num_params() / 1e6:.1f}M parameters, d {cfg.d_model}, "
                     f"{cfg.n_layers} layers, context {s.seq}, untied embeddings, on {s.device}",
            "lr": f"AdamW, warmup {train_cfg.warmup_steps} steps, cosine from {train_cfg.lr:g} to "
                  f"{train_cfg.lr * train_cfg.min_lr_ratio:g}",
            "iterations": f"{train_cfg.steps:,} steps of batch {s.batch} x {s.seq} tokens",
            "pretokenization": pretokenization(s.scheme, corpora),
            "heldout": f"{corpus_fields(corpora, langs)['heldout']}; bits per byte, not downstream tasks"}


def reasons(here: Mapping[str, float | NotMeasured], speed_rows: list[dict], eval_rows: list[dict] | None = None,
            tokenizer=None, mono: str = "Mono-only", sub: str = "Samp_Sub_2(0.5)") -> dict[str, str]:
    """A measured reason for each claim of ``here`` (:func:`paper_values`) that does not hold
    where the run measures one: for the compact model, the timed pair of the widest model
    (parameters and forward time of the full and the compact model), i.e. how small a part of
    the work the output layer is here; for the foreign-token share (with ``eval_rows`` and the
    modular ``tokenizer``), the worst language's own ids against the LM's rows; for the
    bits-per-byte claims on Lang (with ``eval_rows`` and ``tokenizer``), the cells compared and
    the size of Lang's softmax, which is smaller than Full's (and the Baseline's) under every
    scheme. Generation gets none (the run measures no cause for it).

    >>> speed = [{"vocabulary": "v", "d_model": 64, "model": m, "params (M)": p, "forward ms": ms}
    ...          for m, p, ms in [("full", 2.0, 1.0), ("compact", 1.9, 1.02)]]
    >>> here = {"compact_speedup": 1.0 / 1.02, "compact_params": 5.0}
    >>> reasons(here, speed)["compact_speedup"]
    'at d_model 64 (vocabulary v) the full model has 2.0M parameters and runs 1.00 ms, the compact one 1.9M and 1.02 ms: the output rows cut are 5% of the parameters'
    """
    from modtok.lm.batches import lm_vocab_size

    claims = {c.key: c for c in paper_vs_here.claims("modular_tokenizers_lm")}
    failing = {k for k, v in here.items() if not isinstance(v, NotMeasured) and claims[k].verdict(v) == "does not hold"}
    out = {}
    if "full_foreign_token_share" in failing and eval_rows and tokenizer is not None:
        cov = {r["lang"]: r["coverage"] for r in eval_rows if r["scheme"] == mono and r["setting"] == "Full-Lang"}
        lang = min(cov, key=cov.get)
        own, rows = len(tokenizer.ids([lang])), lm_vocab_size(tokenizer)
        out["full_foreign_token_share"] = (f"{lang}: {100 * (1 - cov[lang]):.1f}% of its full-tokenizer tokens lie "
                                           f"outside its {own:,} own ids ({own / rows:.0%} of the {rows:,} LM rows)")
    if {"lang_vs_full", "mono_only_matches_baseline"} & failing and eval_rows and tokenizer is not None:
        bpb = {(r["scheme"], r["setting"]): r["bpb"] for r in mean_bpb(eval_rows, [mono, sub, BASELINE], ["Lang", "Full"])}
        own = float(np.mean([len(tokenizer.ids([lang])) for lang in {r["lang"] for r in eval_rows}]))
        softmax = f"Lang's softmax runs over {own:,.0f} ids a language (mean), Full's over all {lm_vocab_size(tokenizer):,}"
        if {(sub, "Full"), (mono, "Full")} <= set(bpb):  # the schemes named here were evaluated
            out["lang_vs_full"] = (f"Full minus Lang, mean bits per byte: {sub} {bpb[sub, 'Full'] - bpb[sub, 'Lang']:.3f}, "
                                   f"{mono} {bpb[mono, 'Full'] - bpb[mono, 'Lang']:.3f}; {softmax}")
        if {(BASELINE, "Full"), (mono, "Lang")} <= set(bpb):
            out["mono_only_matches_baseline"] = (f"{mono} under Lang {bpb[mono, 'Lang']:.3f} bits per byte, the "
                                                 f"{BASELINE} {bpb[BASELINE, 'Full']:.3f}; {softmax}, the "
                                                 f"{BASELINE}'s over its whole shared vocabulary")
        out = {k: v for k, v in out.items() if k in failing}
    failing &= {"compact_speedup", "compact_params"}
    if not failing:
        return out
    last = [r for r in speed_rows if r["vocabulary"] == speed_rows[-1]["vocabulary"]]
    pairs: dict[int, dict[str, dict]] = {}
    for r in last:
        pairs.setdefault(r["d_model"], {})[r["model"]] = r
    timed = [d for d, p in pairs.items() if {"full", "compact"} <= set(p)]

    def why(d: int) -> str:
        full, compact = pairs[d]["full"], pairs[d]["compact"]
        return (f"at d_model {d} (vocabulary {full['vocabulary']}) the full model has {full['params (M)']:.1f}M "
                f"parameters and runs {full['forward ms']:.2f} ms, the compact one {compact['params (M)']:.1f}M and "
                f"{compact['forward ms']:.2f} ms: the output rows cut are "
                f"{1 - compact['params (M)'] / full['params (M)']:.0%} of the parameters")
    # each at the width its value is taken at (paper_values): the speed-up at the smallest, the parameters at the widest
    return out | {k: why(min(timed) if k == "compact_speedup" else max(timed)) for k in sorted(failing)}


def over_lines(eval_rows: list[dict], cells: Mapping[str, tuple[str, str]], statistic, n_boot: int = 1000,
               seed: int = 0) -> Measured | float:
    """``statistic({name: bits per byte})`` of the (scheme, setting) ``cells`` (each the mean over the
    languages of its bits per byte, :func:`mean_bpb`), with its interval over evaluation lines
    (:func:`modtok.studies.paper_vs_here.over_lines` of the per-line scored nats and bytes,
    :func:`modtok.lm.infer.evaluate`): line ``i`` of every language and cell drawn together (on
    parallel text, one sentence in every language). Where the languages have different numbers of
    lines (text that is not parallel) there is no such unit: the point estimate alone, a float.

    Worked example (hand-checkable): two lines of 2 bytes each; under "L" both cost 2 bits (1 bpb),
    under "F" the first 2 bits and the second 6 (2 bpb). A replicate draws the lines {1, 1}, {1, 2}
    or {2, 2}: F minus L is then 0, 1 or 2 bpb, so the 95% interval is the whole range:

    >>> ln2 = math.log(2)
    >>> rows = [{"scheme": "s", "setting": st, "lang": "x", "line_nats": [a * ln2, b * ln2], "line_bytes": [2, 2]}
    ...         for st, a, b in [("L", 2, 2), ("F", 2, 6)]]
    >>> over_lines(rows, {"l": ("s", "L"), "f": ("s", "F")}, lambda m: m["f"] - m["l"], n_boot=2000, seed=1)
    Measured(value=1.0, lo=0.0, hi=2.0, over='lines')
    """
    langs = sorted({r["lang"] for r in eval_rows if (r["scheme"], r["setting"]) in set(cells.values())})
    columns = {}
    for name, (scheme, setting) in cells.items():
        for lang in langs:
            row = _cell(eval_rows, scheme=scheme, setting=setting, lang=lang)
            columns[f"{name}|{lang}|nats"], columns[f"{name}|{lang}|bytes"] = row["line_nats"], row["line_bytes"]

    def bpb(t):  # t[...]: a column's total, a float for the point, (n_boot,) for the replicates
        return {"v": statistic({name: np.mean([t[f"{name}|{lang}|nats"] / t[f"{name}|{lang}|bytes"] for lang in langs],
                                               axis=0) / math.log(2) for name in cells})}

    return paper_vs_here.over_lines(columns, bpb, n_boot, seed)["v"]


def paper_values(eval_rows: list[dict], fid_rows: list[dict], speed_rows: list[dict], mono: str = "Mono-only",
                 full: str = "Samp_Full(0.5)", sub: str = "Samp_Sub_2(0.5)") -> dict:
    """The measured values of the ``modular_tokenizers_lm`` claims (``paper_figures.toml``) from
    :func:`evaluate_schemes` (schemes named ``mono``, ``full``, ``sub``), :func:`fidelity_rows` and
    :func:`modtok.lm.infer.full_vs_compact_timing` (its last vocabulary: the paper-scale one when timed).

    The bits-per-byte claims are stated as the paper states them (§6.2-6.3): ``lang_vs_full``, the
    near-parity of Samp_Sub_n, is its gap (Full minus Lang) as a share of Mono-only's;
    ``mono_only_matches_baseline`` and ``samp_sub_recovers_baseline`` are Mono-only under Lang and
    Samp_Sub_n under Full against the :data:`BASELINE` (percent fewer bits per byte than it; not
    measured without Baseline rows). These three and ``samp_full_narrows_gap`` (Mono-only's gap minus
    Samp_Full's) carry intervals over lines (:func:`over_lines`).

    >>> ev = [{"scheme": s, "setting": st, "lang": "x", "bpb": b, "coverage": c} for s, st, b, c in
    ...       [("m", "Lang", 3.0, 1.0), ("m", "Full", 3.5, 1.0), ("m", "Full-Lang", 3.4, 0.96), ("f", "Lang", 3.1, 1.0),
    ...        ("f", "Full", 3.2, 1.0), ("s", "Lang", 3.0, 1.0), ("s", "Full", 3.3, 1.0)]]
    >>> fid = [{"scheme": "m", "mean": 0.2}, {"scheme": "f", "mean": 0.05}, {"scheme": "s", "mean": 0.1}]
    >>> speed = [{"vocabulary": "v", "d_model": d, "model": m, "params (M)": p, "forward ms": t}
    ...          for d, m, p, t in [(64, "full", 2.0, 4.0), (64, "compact", 1.0, 1.0), (128, "full", 4.0, 12.0), (128, "compact", 3.0, 2.0)]]
    >>> for r in ev:
    ...     r["line_nats"], r["line_bytes"] = [r["bpb"] * math.log(2)], [1.0]    # one line of one byte
    >>> here = paper_values(ev, fid, speed, "m", "f", "s")
    >>> m = here["lang_vs_full"]                                # (3.3 - 3.0) / (3.5 - 3.0), one line: no spread
    >>> round(m.value, 3), m.lo == m.value == m.hi, m.over
    (0.6, True, 'lines')
    >>> here["samp_sub_recovers_baseline"]
    NotMeasured(reason='no Baseline trained (train_baseline)')
    >>> round(here["samp_full_narrows_gap"].value, 3)          # (3.5 - 3.0) - (3.2 - 3.1)
    0.4
    >>> {k: round(v, 3) for k, v in here.items() if isinstance(v, float)}   # speed-up at d 64 (6.0 at d 128)
    {'mono_only_mixes_languages': 0.15, 'full_foreign_token_share': 4.0, 'compact_speedup': 4.0, 'compact_params': 25.0}
    """
    gap_share = over_lines(eval_rows, {"ml": (mono, "Lang"), "mf": (mono, "Full"), "sl": (sub, "Lang"),
                                       "sf": (sub, "Full")}, lambda m: (m["sf"] - m["sl"]) / (m["mf"] - m["ml"]))
    if _evaluated(eval_rows, BASELINE, "Full"):
        def vs_base(scheme, setting):  # percent fewer bits per byte than the Baseline (above 0: better)
            return over_lines(eval_rows, {"b": (BASELINE, "Full"), "x": (scheme, setting)},
                              lambda m: 100 * (1 - m["x"] / m["b"]))
        mono_base, sub_base = vs_base(mono, "Lang"), vs_base(sub, "Full")
    else:
        mono_base = sub_base = NotMeasured("no Baseline trained (train_baseline)")
    # Mono-only's Full - Lang gap minus Samp_Full's, over the same drawn lines
    narrows = over_lines(eval_rows, {"ml": (mono, "Lang"), "mf": (mono, "Full"), "fl": (full, "Lang"),
                                     "ff": (full, "Full")}, lambda m: (m["mf"] - m["ml"]) - (m["ff"] - m["fl"]))
    shares = {r["scheme"]: r["mean"] for r in fid_rows}
    # the Full-Lang coverage is a property of the tokenizer (the same under every scheme): read it off one
    foreign = [100 * (1 - r["coverage"]) for r in eval_rows if r["scheme"] == mono and r["setting"] == "Full-Lang"]
    last = [r for r in speed_rows if r["vocabulary"] == speed_rows[-1]["vocabulary"]] if speed_rows else []
    pairs = {}
    for r in last:
        pairs.setdefault(r["d_model"], {})[r["model"]] = r
    pairs = {d: p for d, p in pairs.items() if {"full", "compact"} <= set(p)}
    untimed = NotMeasured("no full/compact timing")
    widest = pairs[max(pairs)] if pairs else None
    return {"lang_vs_full": gap_share, "mono_only_matches_baseline": mono_base, "samp_sub_recovers_baseline": sub_base,
            "samp_full_narrows_gap": narrows,
            "mono_only_mixes_languages": shares[mono] - shares[full],
            "full_foreign_token_share": max(foreign) if foreign else NotMeasured("no Full-Lang evaluation"),
            # at the smallest width timed: the paper's 1.58 is its smallest model's (0.5B), where the
            # output rows are the largest share; the largest ratio over widths would pick the noise
            "compact_speedup": (pairs[min(pairs)]["full"]["forward ms"] / pairs[min(pairs)]["compact"]["forward ms"]
                                if pairs else untimed),
            "compact_params": (100 * (1.0 - widest["compact"]["params (M)"] / widest["full"]["params (M)"])
                               if widest else untimed)}


class ModularLMStudy(Study):
    """Notebook 04's study under the contract's names (:mod:`modtok.studies.contract`): its
    computations are this module's functions, which the notebook calls."""

    name, paper, notebook = "modular_tokenizers_lm", PAPER, "04_modular_lm"
    results = RESULTS

    def rows(self, tokenizer: ModularTokenizer, corpus: Mapping[str, list[str]]) -> list[dict]:
        """The per-language rows (:func:`modtok.evaluation.metrics.language_table_of`) of the
        LMs' shared modular ``tokenizer`` on ``corpus``: each language under its subtokenizer
        and under the full tokenizer, the full tokenizer the reference (NSL: the
        subtokenizer's tokens over the full tokenizer's)."""
        full = {lang: metrics.Encoded(tokenizer, lines, lang) for lang, lines in corpus.items()}
        encoded = {lang: {"subtokenizer": metrics.Encoded(tokenizer.subtokenizer([lang]), lines, lang),
                          "full": full[lang]} for lang, lines in corpus.items()}
        return metrics.language_table_of(encoded, full)

    def setting(self, s: Settings) -> dict[str, str]:
        """:func:`setting`."""
        return setting(s)

    def measured(self, eval_rows: list[dict], fid_rows: list[dict], speed_rows: list[dict], **names) -> dict:
        """:func:`paper_values` (``names``: its scheme names)."""
        return paper_values(eval_rows, fid_rows, speed_rows, **names)

    def reasons(self, here: Mapping[str, float | NotMeasured], speed_rows: list[dict],
                eval_rows: list[dict] | None = None, tokenizer=None) -> dict[str, str]:
        """:func:`reasons`."""
        return reasons(here, speed_rows, eval_rows, tokenizer)
