"""The training runs of ``modtok sequential-bpe``, ``modtok modular-unigram`` and ``modtok lm-train``.

Each trains into an output directory written whole (:func:`modtok.outputs.output_dir`:
refused when it holds anything but an earlier output of the same command, which ``force``
replaces), from text (:func:`modtok.text.training.training_corpora`: ``manifest``,
``$MODTOK_MANIFEST``, the pool or the wordfreq default) or, for the tokenizers, from saved
counts (``modtok count``); its ``run.json`` records ``args``, the files read and the lines
and characters per language (:mod:`modtok.text.training`). What a run says while it works
goes to ``log`` (a callable taking one line; the CLI writes it to stderr); bars are
:mod:`modtok.progress`'s.
"""

from __future__ import annotations

import contextlib
import os
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from modtok.errors import ConfigError
from modtok.outputs import output_dir
from modtok.text import training


@dataclass
class Trained:
    """What ``sequential-bpe`` or ``modular-unigram`` made: the saved
    :class:`~modtok.artifacts.modular.ModularTokenizer`, where, what each language asked
    and got (``asked``/``got``: tokens in its sub-vocabulary, also in run.json's
    ``vocabulary``), what training changed to fit (``notes``), and for Unigram the
    :class:`~modtok.unigram.merge.MergedUnigram` (its EM log-likelihood)."""

    tokenizer: object
    out: Path
    asked: dict[str, int]
    got: dict[str, int]
    why_short: str
    notes: list[str] = field(default_factory=list)
    merged: object = None

    def short(self) -> list[str]:
        """One line per language whose vocabulary stopped short of its budget."""
        unit = "pieces" if self.merged is not None else "tokens"
        return training.shortfall_lines(self.asked, self.got, unit, self.why_short)

    def lines(self) -> list[str]:
        """The run's summary (what the CLI prints): what was saved, then every shortfall and note."""
        tok = self.tokenizer
        what = "pieces" if self.merged is not None else "tokens"
        em = (f", EM log-likelihood {self.merged.loglik[0]:.6g} -> {self.merged.loglik[-1]:.6g}"
              if self.merged is not None else "")
        head = f"saved {tok.vocab_size} {what}, {len(tok.languages)} languages{em} -> {self.out}"
        short = self.short()
        said = [f"{len(short)} of {len(self.asked)} languages short of their budget:", *short] if short else \
            [f"every language got its budget ({', '.join(f'{k:,}' for k in sorted(set(self.asked.values())))})"]
        return [head, *said, *self.notes]


def sequential_bpe(out, k: int, *, langs: Sequence[str] | None = None, train_chars: int = 1_000_000,
                   manifest=None, counts=None, scheme: str | None = None, force: bool = False,
                   args: Mapping | None = None, log=None):
    """``modtok sequential-bpe``: :func:`modtok.bpe.sequential.train_sequential` with a budget of
    ``k`` per language, languages in ``langs`` order, from text or from the saved ``counts``
    (``scheme``: by default the counts' own pre-tokenizer, for text :data:`~modtok.text.training.TRAINING_SCHEME`);
    the :class:`~modtok.artifacts.modular.ModularTokenizer` saved into ``out``; returns the
    :class:`Trained` run (its ``lines()``: what was saved, and which language stopped short)."""
    from modtok.bpe.sequential import train_sequential
    from modtok.text.counts import load_counts, read_meta
    from modtok.text.pretokenize import count_by_language, describe_cut

    say = log or (lambda line: None)
    if counts and manifest:
        raise ConfigError("give --counts or --manifest, not both")
    with output_dir(out, command="sequential-bpe", args=dict(args or {}), force=force) as run:
        if counts:
            meta = read_meta(counts)
            scheme = scheme or meta["scheme"]  # the counts' own pre-tokenizer by default
            by_lang = load_counts(counts, langs or None, scheme=scheme)
            say(f"training: saved counts {counts} (pre-tokenizer {scheme})")
            training.record_counts(run, counts, list(by_lang))
            cuts = {lang: Counter(meta["languages"][lang].get("cut", {})) for lang in by_lang}
        else:
            scheme = scheme or training.TRAINING_SCHEME
            corpora = training.training_corpora(langs, train_chars, manifest)
            say(corpora.source + f"; pre-tokenizer {scheme}")
            run.add_inputs(training.training_files(manifest, corpora.languages))
            training.record_text(run, corpora.train, training=corpora.source, evaluation=None)
            cuts = {}
            by_lang = count_by_language(corpora.train, scheme, workers=os.cpu_count() or 1, cuts=cuts)  # all cores
        for lang, cut in cuts.items():  # text without spaces: what the scheme's bound cut (never in silence)
            if cut:
                say(f"{lang}: {describe_cut(cut)}")
        multi = train_sequential(by_lang, k, order=list(by_lang), scheme=scheme, progress=True)
        tok = multi.modular()
        tok.save(run.path)
        got = {lang: len(ids) for lang, ids in multi.lang_to_ids.items()}
        training.record_shortfall(run, multi.budgets, got)
        run.record(scheme=scheme)
    return Trained(tok, Path(out), multi.budgets, got, "its text ran out of pairs and tokens")


def modular_unigram(out, k: int, *, langs: Sequence[str] | None = None, train_chars: int = 1_000_000,
                    manifest=None, counts=None, em_iters: int = 5, force: bool = False,
                    args: Mapping | None = None, log=None):
    """``modtok modular-unigram``: a sentencepiece Unigram of ``k`` pieces per language, merged
    with ``em_iters`` EM iterations (:func:`modtok.unigram.merge.merge_unigram`), from text or
    from saved ``counts`` (``modtok count --scheme sentencepiece``); saved into ``out``.
    Returns the :class:`Trained` run: the saved :class:`~modtok.artifacts.modular.ModularTokenizer`,
    the :class:`~modtok.unigram.merge.MergedUnigram` (its EM log-likelihood), each language's
    pieces asked and got, and what sentencepiece needed changed (``notes``: long units cut, the
    character coverage lowered or a budget raised, :func:`modtok.unigram.train.fit_to_sentencepiece`)."""
    from modtok.unigram.merge import merge_unigram
    from modtok.unigram.train import train_unigram_per_language
    from modtok.unigram.units import load_units

    say = log or (lambda line: None)
    if counts and manifest:
        raise ConfigError("give --counts or --manifest, not both")
    with output_dir(out, command="modular-unigram", args=dict(args or {}), force=force) as run:
        if counts:
            train = load_units(counts, langs or None)  # {lang: Counter of units}
            say(f"training: saved counts {counts}")
            training.record_counts(run, counts, list(train))
        else:
            corpora = training.training_corpora(langs, train_chars, manifest)
            say(corpora.source)
            train = corpora.train  # lines: counted into the same units (modtok.unigram.units)
            run.add_inputs(training.training_files(manifest, corpora.languages))
            training.record_text(run, train, training=corpora.source, evaluation=None)
        models = train_unigram_per_language(train, k, num_threads=2, progress=True)
        notes = [f"{lang}: {note}" for lang, m in models.items() for note in m.notes]
        merged = merge_unigram(models, train, max_iter=em_iters, progress=True)
        tok = merged.modular()
        tok.save(run.path)
        asked = {lang: k for lang in models}
        got = {lang: len(ids) for lang, ids in merged.lang_to_ids.items()}
        training.record_shortfall(run, asked, got)
        run.record(em_loglik=[float(x) for x in merged.loglik], notes=notes)
    return Trained(tok, Path(out), asked, got, "sentencepiece's pruning kept no more", notes, merged)


def lm_train(tokenizer, out, *, langs: Sequence[str] | None = None, english_share: float = 0.7,
             scheme: str = "samp_sub", n: int = 2, p_full: float = 0.5, vocab_store: str = "device",
             update_delay: int = 0, config: str = "mini", batch_size: int = 8, seq_len: int = 128,
             steps: int = 200, lr: float = 3e-3, warmup: int = 20, seed: int = 0, max_chars: int | None = None,
             manifest=None, progress: bool = False, force: bool = False, args: Mapping | None = None,
             log=None) -> None:
    """``modtok lm-train``: a modular LM (:func:`modtok.lm.train.train`) on the text of ``langs``
    (default: the tokenizer's) from ``manifest``, ``$MODTOK_MANIFEST`` or the pool, as every
    training command reads (``max_chars`` per language; None: all of it), tokenized by the
    tokenizer directory ``tokenizer`` with subtokenizers sampled by ``scheme`` (``mono``,
    ``samp_full``, ``samp_sub`` with ``n`` others; ``p_full``: App. D.2), into ``out``. What it
    read goes to ``log`` (one line). Under ``torchrun`` (``$RANK``) rank 0 writes every file and
    says what it read, the others neither."""
    from modtok.artifacts.modular import ModularTokenizer
    from modtok.errors import DataError
    from modtok.lm.batches import BatchSource, lm_vocab_size
    from modtok.lm.model import config as model_config
    from modtok.lm.sampling import Scheme, SubtokenizerSampler, default_mixture
    from modtok.lm.train import TrainConfig, train
    from modtok.text import data

    tok = ModularTokenizer.load(tokenizer)
    langs = langs or tok.languages
    manifest = data.manifest_path(manifest)  # --manifest, else $MODTOK_MANIFEST
    kind = data.training_source(manifest)
    if kind == "wordfreq":  # an LM on word lists would be no LM: refused, before any work
        raise DataError("lm-train: no training text: pass --manifest FILE (JSON/YAML {lang: [paths or globs]}), "
                        "or set $MODTOK_MANIFEST or $MODTOK_POOL")
    # Under torchrun rank 0 writes every file, the others none. The output is claimed (an earlier
    # one refused) before the text is read and tokenized, so a refusal costs no work.
    rank0 = int(os.environ.get("RANK", "0")) == 0
    claimed = output_dir(out, command="lm-train", args=dict(args or {}), force=force,
                         inputs=[*training.training_files(manifest, langs), *sorted(Path(tokenizer).iterdir())]
                         ) if rank0 else contextlib.nullcontext()
    with claimed as run:
        if kind == "manifest":
            corpus = data.manifest_train(manifest, langs, max_chars)
            what = f"manifest {manifest} (" + (f"first ≤{max_chars:,} chars/language in stream order)" if max_chars
                                               else "all of it)")
        else:
            corpus = data.load_pool(langs, max_chars=max_chars, seed=seed)
            what = f"pool {data.pool_dir()} (" + (f"≤{max_chars:,} chars/language)" if max_chars else "all of it)")
        sampling = Scheme(scheme, 0.0 if scheme == "mono" else p_full, n if scheme == "samp_sub" else 0)
        sampler = SubtokenizerSampler(sampling, default_mixture(langs, english_share=english_share), seed)
        source = BatchSource(tok, corpus, sampler, batch_size, seq_len, seed=seed)
        model_cfg = model_config(config, lm_vocab_size(tok), max_seq_len=seq_len)
        cfg = TrainConfig(steps=steps, lr=lr, warmup_steps=warmup, seed=seed, vocab_store=vocab_store,
                          update_delay=update_delay)
        if run is None:
            train(model_cfg, cfg, source, out, progress=False, resume=False)
            return
        (log or (lambda line: None))(f"training: {what}, {sum(map(len, corpus.values())):,} lines of "
                                     f"{', '.join(langs)}; tokenizer {tokenizer}")
        training.record_text(run, corpus, training=what, evaluation=None)
        train(model_cfg, cfg, source, run.path, progress=progress, resume=False)  # a new directory
