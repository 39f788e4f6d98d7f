"""``modtok ...``: scripted runs of what the notebooks do interactively.

    modtok data                                   which data the notebooks would use
    modtok example-corpus DIR [--scripts]         a small corpus of one's own (--scripts: 7 scripts)
    modtok warmup                                 compile the numba kernels once (make install does)
    modtok sequential-bpe OUT -k 8000 [--langs ...]   train sequential BPE, save a ModularTokenizer
    modtok modular-unigram OUT -k 8000 [--langs ...]  merged Unigram + EM, save a ModularTokenizer
    modtok nsl TOKDIR [--langs ...]               NSL of each subtokenizer vs monolingual HF BPE
    modtok encode TOKDIR --langs npi_Deva "text"  global ids of a subtokenizer
    modtok lm-train --tokenizer DIR --out DIR     train a modular LM (torchrun ... -m modtok lm-train)
    modtok count MANIFEST -o DIR [--workers N | --scheduler ADDR]   pre-token counts (on Dask)
    modtok trim BASE -o OUT --langs L... [--model HF_DIR]   trim a tokenizer (and model) to languages
    modtok parity-bpe OUT --train F.. --dev F.. -s 1000   parity-aware BPE on files (the reference's flags)
    modtok adaptmix OUT --budget-chars N [--trainer hf-bpe -V 32000 --langs ...]   AdaptMix on dev fertility
    modtok audit TOKENIZER [--lang npi_Deva --ref eng_Latn] [--json]   pre-token audit on FLORES devtest
    modtok extend BASE -o OUT --lang L (--manifest M | --text F...) -K N [--arm R2] [--model HF_DIR]
                                                  continued BPE on a deployed tokenizer, model resized
    modtok report [REPORTS]                       the notebooks' paper-vs-here tables on one page
    modtok playground                             JupyterLab on the tokenizer playground (for a class)
    modtok cache [clear]                          the notebooks' results cache: what it holds; clear it

Every training command reads the pool by default, or ``--manifest FILE`` (JSON or
YAML ``{lang: [paths or globs]}``, any format of :mod:`modtok.text.corpus`; an entry
``{path: x.jsonl, text_field: body}`` names its JSONL field);
``sequential-bpe`` and ``modular-unigram`` also train from saved counts (``--counts DIR``;
Unigram's made with ``--scheme sentencepiece``); ``parity-bpe`` reads
the text files it is given (one per language).

Tokenizer directories hold ``tokenizer.json`` + ``lang_to_ids.json`` (see
:class:`modtok.artifacts.modular.ModularTokenizer`). Errors from bad input are printed as
one line (``modtok: error: ...``) with exit status 2, a count or budget flag below 1
(``--merges -5``) before anything runs; Ctrl-C ends a command with ``modtok: interrupted``
and status 130, SIGTERM with ``modtok: terminated`` and 143 (a directory being written is
removed either way); a reader that stops early (``modtok data | head -1``) ends it quietly,
status 141 (128 + SIGPIPE, as a shell reports it for other commands).

Every command that writes a directory writes it whole (:mod:`modtok.outputs`): into a
temporary sibling renamed into place, with a ``run.json`` saying what made it; an existing
directory is refused unless it is an earlier output of the same command and ``--force``
is given.

Each ``cmd_*`` calls one library function (its docstring names it) and prints what it
returns; the runs themselves live in the library, which never prints (what a run says
while it works comes through its ``log``, onto stderr). ``tests/test_architecture.py``
keeps it so.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import signal
import sys
from functools import partial

from modtok import errors, options
from modtok.errors import ModtokError
from modtok.text.training import TRAINING_SCHEME
from modtok.warmup import kernels_cold


def _say(line: str) -> None:
    """A run's ``log``: what it reads and decides, on stderr (stdout holds its results)."""
    print(line, file=sys.stderr)


def _quiet_transformers(args) -> None:
    """Without --progress, transformers' own loading / writing bars are off (a --model run)."""
    if args.model and not args.progress:
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()


def cmd_warmup(args) -> None:
    """``modtok.warmup.warm``: every numba kernel compiled into its on-disk cache (``make install`` runs it)."""
    from modtok.warmup import warm

    print(f"numba kernels compiled and cached in {warm():.1f} s")


def cmd_example_corpus(args) -> None:
    from modtok.text import example

    manifest, evaluation = example.build(args.out, langs := example.SCRIPTS if args.scripts else example.LANGS)
    print(f"example corpus ({', '.join(langs)}) -> {args.out}")
    print(f"export MODTOK_MANIFEST={manifest} MODTOK_EVAL={evaluation}")


def cmd_report(args) -> None:
    from modtok.ui import report

    print(report.write(args.reports).summary())


def cmd_cache(args) -> None:
    """``modtok.cache.describe``: where the results cache is and what it holds, or ``clear`` it."""
    from modtok import cache

    print("\n".join(cache.describe(clear_it=args.action == "clear")))


def cmd_data(args) -> None:
    """``modtok.text.data.describe``: which data is configured, and per language the files it
    resolves to and their lines."""
    from modtok.text import data

    for line in data.describe(args.eval):
        print(line)


def cmd_sequential_bpe(args) -> None:
    """``modtok.studies.modular_tokenizers.training.sequential_bpe``, from text or saved counts."""
    from modtok.studies.modular_tokenizers import training

    made = training.sequential_bpe(args.out, args.k, langs=args.langs, train_chars=args.train_chars,
                                   manifest=args.manifest, counts=args.counts, scheme=args.scheme,
                                   force=args.force, args=vars_of(args), log=_say)
    print("\n".join(made.lines()))


def cmd_modular_unigram(args) -> None:
    """``modtok.studies.modular_tokenizers.training.modular_unigram``, from text or saved counts."""
    from modtok.studies.modular_tokenizers import training

    made = training.modular_unigram(args.out, args.k, langs=args.langs, train_chars=args.train_chars,
                                    manifest=args.manifest, counts=args.counts, em_iters=args.em_iters,
                                    force=args.force, args=vars_of(args), log=_say)
    print("\n".join(made.lines()))


def cmd_nsl(args) -> None:
    """``modtok.studies.modular_tokenizers.reference.nsl_lines``: a table, one language a line."""
    from modtok.studies.modular_tokenizers.reference import nsl_lines

    for line in nsl_lines(args.tokenizer, args.langs, args.k, args.scheme, args.train_chars, args.eval,
                          manifest=args.manifest, log=_say):
        print(line)


def cmd_encode(args) -> None:
    from modtok.artifacts.modular import ModularTokenizer

    tok = ModularTokenizer.load(args.tokenizer)
    print(json.dumps(tok.encode(args.text, args.langs or None)))


def cmd_count(args) -> None:
    """``modtok.text.counts.run``: the manifest's pre-tokens counted (on Dask with --workers or
    --scheduler) into a counts directory."""
    from modtok.text import counts

    made = counts.run(options_of(counts.CountOptions, args), force=args.force)
    for line in counts.summary(made):
        print(line)
    print(f"saved counts ({args.scheme}) -> {args.out}")


def cmd_trim(args) -> None:
    """``modtok.adapt.trim.run``: the tokenizer (and model) cut to --langs, checked after reloading."""
    from modtok.adapt import trim

    _quiet_transformers(args)
    result = trim.run(trim.TrimOptions(
        args.base, args.out, args.langs, manifest=args.manifest, max_chars=args.max_chars, eval_files=args.eval,
        keep_first=args.keep_first, keep_script=args.keep_script, model=args.model,
        pad_to_multiple_of=args.pad_to_multiple_of, logit_tol=args.logit_tol), force=args.force, log=print)
    for line in result.trim.report.lines():
        print(line)
    print(f"saved -> {result.out}")


def cmd_lm_train(args) -> None:
    """``modtok.studies.modular_tokenizers.training.lm_train`` (under torchrun: every rank)."""
    from modtok.studies.modular_tokenizers import training

    if args.p is not None:
        raise errors.ConfigError("--p was the own-language probability; use --p-full, the probability of the full "
                                 "tokenizer (or of the own + n union), i.e. 1 - the old --p")
    training.lm_train(args.tokenizer, args.out, langs=args.langs, english_share=args.english_share, scheme=args.scheme,
                      n=args.n, p_full=args.p_full, vocab_store=args.vocab_store, update_delay=args.update_delay,
                      config=args.config, batch_size=args.batch_size, seq_len=args.seq_len, steps=args.steps, lr=args.lr,
                      warmup=args.warmup, seed=args.seed, max_chars=args.max_chars, manifest=args.manifest,
                      progress=args.progress, force=args.force, args=vars_of(args), log=_say)


def cmd_parity_bpe(args) -> None:
    """``modtok.studies.parity_bpe.run``: parity-aware BPE on text files matched to languages by name."""
    from modtok.studies import parity_bpe

    made = parity_bpe.run(options_of(parity_bpe.ParityOptions, args), force=args.force, log=_say)
    if made.result.stop_message:
        _say(made.result.stop_message)
    for line in made.lines():
        print(line)


def cmd_adaptmix(args) -> None:
    """``modtok.studies.adaptmix.run``: AdaptMix around a trainer, on dev fertility."""
    from modtok.studies import adaptmix

    made = adaptmix.run(options_of(adaptmix.AdaptMixOptions, args), force=args.force, log=_say)
    print("\n".join(made.lines()))


def cmd_audit(args) -> None:
    """``modtok.evaluation.audit.on_eval_set``: one row, as a table or as JSON."""
    from modtok.evaluation import audit

    row, label, n = audit.on_eval_set(args.tokenizer, args.lang, args.ref, args.split, args.eval)
    if args.json:
        print(json.dumps({**row, "evaluation": label}))
    else:
        print(f"{args.lang} vs {args.ref}, {label} ({n} parallel lines)")
        print(audit.format_rows({args.tokenizer: row}))


def cmd_extend(args) -> None:
    """``modtok.adapt.extend.run``: continued BPE on a deployed tokenizer for each --lang, the
    invariance and the reloaded directory checked before OUT appears."""
    from modtok.adapt import extend

    texts = extend.texts_of(args.lang, manifest=args.manifest, text=args.text)
    _quiet_transformers(args)
    inputs = [args.manifest] if args.manifest else args.text
    result = extend.run(extend.ExtendOptions(
        args.base, args.out, texts, args.K, arm=args.arm, filter=args.filter, min_count=args.min_count,
        max_chars=args.max_chars, probe_files=args.probe, eval=args.eval, model=args.model, logit_tol=args.logit_tol,
        pad_to_multiple_of=args.pad_to_multiple_of, any_script=args.any_script),
        force=args.force, inputs=inputs, workers=os.cpu_count() or 1, progress=args.progress, log=print)  # all cores
    print(f"saved {len(result.extension.new_tokens())} new tokens" + (" and the model" if result.model else "")
          + f" -> {result.out}" + "".join(f"\nnote: {note}" for note in result.notes))  # e.g. a low-keep filter


def cmd_playground(args) -> None:
    """``modtok.ui.playground.lab_command``: JupyterLab on the playground notebook (for a class)."""
    from modtok.ui.playground import lab_command

    argv, env = lab_command()
    print(f"modtok playground: {' '.join(argv)}", flush=True)
    if not args.dry_run:
        os.execve(argv[0], argv, env)  # Lab takes the terminal over (Ctrl-C stops it)


def options_of(cls, args):
    """A command's options object (``cls``, a dataclass) from its parsed flags, field by field
    by name: every field is a flag's ``dest``."""
    return cls(**{f.name: getattr(args, f.name) for f in dataclasses.fields(cls)})


def vars_of(args) -> dict:
    """The parsed arguments as ``run.json`` records them (without the handler)."""
    return {k: v for k, v in vars(args).items() if k != "fn"}


class _Langs(argparse.Action):
    """``--langs``: codes separated by commas or spaces, flags repeatable (``npi_Deva,eng_Latn``)."""

    def __call__(self, parser, namespace, values, option_string=None):
        values = [values] if isinstance(values, str) else values
        codes = [code for value in values for code in value.split(",") if code]
        setattr(namespace, self.dest, (getattr(namespace, self.dest) or []) + codes)


class _Positive(argparse.Action):
    """An integer flag (a count or a budget) refused, in the words typed, below 1: ``--merges -5``
    once came back as ``vocab_size ... = 251``, the budget it had become, after all the text was read."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, type=int, **kwargs)

    def __call__(self, parser, namespace, value, option_string=None):
        if value < 1:
            raise errors.ConfigError(f"{option_string} {value}: must be a positive integer")
        setattr(namespace, self.dest, value)


EVAL_HELP = ("evaluation text: a directory of <lang>_<Script>.<ext> files (parallel: same line counts), "
             "or dev/ and devtest/ of them, or a manifest (default: $MODTOK_EVAL, else $MODTOK_FLORES)")
SCHEME_HELP = (f"pre-tokenizer (modtok.text.pretokenize.SCHEMES); default {TRAINING_SCHEME} keeps Indic "
               "words whole at combining marks, --scheme llama3 is the deployed Llama-3 regex")
FORCE_HELP = "replace OUT when it is an earlier output of this command (nothing else is ever replaced)"
MANIFEST_HELP = "JSON/YAML {lang: [paths or globs]} to read instead of the pool (default: $MODTOK_MANIFEST)"


def _trainer(sub, name, fn, help):
    """The arguments every training command shares."""
    p = sub.add_parser(name, help=help)
    p.add_argument("out", help="output tokenizer directory")
    p.add_argument("--force", action="store_true", help=FORCE_HELP)
    p.add_argument("-k", action=_Positive, default=8000, help="per-language budget")
    p.add_argument("--langs", nargs="*", action=_Langs,
                   help="languages, in training order (default: all available)")
    p.add_argument("--train-chars", action=_Positive, default=1_000_000, help="training characters per language")
    p.add_argument("--manifest", help="JSON/YAML {lang: [paths or globs]} to train on instead of the pool")
    p.set_defaults(fn=fn)
    return p


def _add_example_corpus(sub) -> None:
    p = sub.add_parser("example-corpus", help="a small corpus of one's own (JSONL.zst, Parquet, text; dev/devtest)")
    p.add_argument("out", help="output directory")
    p.add_argument("--scripts", action="store_true", help="eng, zho, jpn, kor, tha, khm, mya, amh (eval: UDHR)")
    p.set_defaults(fn=cmd_example_corpus)


def _add_data(sub) -> None:
    p = sub.add_parser("data", help="show which data is configured")
    p.add_argument("--eval", help=EVAL_HELP)
    p.set_defaults(fn=cmd_data)


def _add_warmup(sub) -> None:
    sub.add_parser("warmup", help="compile the numba kernels into their cache (make install runs it)"
                   ).set_defaults(fn=cmd_warmup)


def _add_cache(sub) -> None:
    p = sub.add_parser("cache", help="the notebooks' results cache: where, what it holds; 'clear' empties it")
    p.add_argument("action", nargs="?", choices=["show", "clear"], default="show")
    p.set_defaults(fn=cmd_cache)


def _add_report(sub) -> None:
    p = sub.add_parser("report", help="gather the notebooks' paper-vs-here tables (saved by make demo) into "
                                      "REPORTS/reproduction.html and .md")
    p.add_argument("reports", nargs="?", default="reports", help="the reports folder (default: reports)")
    p.set_defaults(fn=cmd_report)


def _add_sequential_bpe(sub) -> None:
    p = _trainer(sub, "sequential-bpe", cmd_sequential_bpe, "train sequential multilingual BPE")
    p.add_argument("--scheme", help=SCHEME_HELP + " (with --counts: the counts' own)")
    p.add_argument("--counts", help="train from saved pre-token counts (modtok count) instead of text")


def _add_modular_unigram(sub) -> None:
    p = _trainer(sub, "modular-unigram", cmd_modular_unigram, "train merged Unigram with EM")
    p.add_argument("--em-iters", type=int, default=5)
    p.add_argument("--counts", help="train from saved counts (modtok count --scheme sentencepiece) instead of text: "
                                    "the model the counted text gives (--train-chars does not apply; count with "
                                    "--max-chars N for the text's --train-chars N)")


def _add_nsl(sub) -> None:
    p = sub.add_parser("nsl", help="NSL of every subtokenizer vs a monolingual HF BPE")
    p.add_argument("tokenizer")
    p.add_argument("--langs", nargs="*", action=_Langs)
    p.add_argument("-k", action=_Positive, default=8000, help="reference budget")
    p.add_argument("--scheme", default=TRAINING_SCHEME, help="the reference's pre-tokenizer")
    p.add_argument("--train-chars", action=_Positive, default=1_000_000)
    p.add_argument("--manifest", help="the references' training text: " + MANIFEST_HELP)
    p.add_argument("--eval", help=EVAL_HELP)
    p.set_defaults(fn=cmd_nsl)


def _add_encode(sub) -> None:
    p = sub.add_parser("encode", help="encode text with a subtokenizer (global ids)")
    p.add_argument("tokenizer")
    p.add_argument("text")
    # One value per flag (comma-separated, repeatable): a list flag would swallow the text.
    p.add_argument("--langs", action=_Langs,
                   help="the subtokenizer's languages, comma-separated or repeated (default: full tokenizer)")
    p.set_defaults(fn=cmd_encode)


def _add_parity_bpe(sub) -> None:
    p = sub.add_parser("parity-bpe", help="parity-aware BPE on text files (one per language)")
    p.add_argument("out", help="output directory: merges.txt, tokenizer.json, trajectory.json, run.json")
    p.add_argument("--force", action="store_true", help=FORCE_HELP)
    p.add_argument("--train", "-i", nargs="+", help="training text, one file per language, named after it "
                                                      "(eng_Latn.txt.zst; any format of modtok.text.corpus: "
                                                      "text, JSONL, .gz/.zst, Parquet, ...)")
    p.add_argument("--manifest", help="instead of --train: a JSON/YAML {lang: [paths or globs]}")
    p.add_argument("--dev", "-d", nargs="*", help="parallel dev text, one file per language, named after it "
                                                  "(eng_Latn.dev, dev.eng_Latn.txt)")
    p.add_argument("--langs", nargs="*", help="the languages to train, in this order (default: every one the "
                                              "--train files are named after, e.g. eng_Latn.txt.zst -> eng_Latn; "
                                              "or the manifest's)")
    size = p.add_mutually_exclusive_group()
    size.add_argument("--merges", "-s", action=_Positive, default=1000, help="number of merges (the reference's -s)")
    size.add_argument("--vocab", action=_Positive, help="vocabulary size instead (bytes included)")
    p.add_argument("--variant", default="base", choices=options.PARITY_VARIANTS)
    p.add_argument("--window", "-w", type=int, default=100)
    p.add_argument("--alpha", type=float, default=2.0)
    p.add_argument("--hybrid", "-g", type=int, default=0, help="J: the first J merges are classical")
    p.add_argument("--ratios", "-r", type=float, nargs="+", help="ratio mode: one target ratio per language")
    p.add_argument("--min-frequency", type=int, default=2)
    p.add_argument("--on-exhausted", choices=options.PARITY_ON_EXHAUSTED)
    p.add_argument("--compat", choices=options.PARITY_COMPAT,
                   help="reproduce the reference implementation, or HF's ParityBpeTrainer (hf)")
    p.add_argument("--scheme", default=TRAINING_SCHEME, help="pre-tokenizer in the default (lossless) mode; " + SCHEME_HELP)
    p.set_defaults(fn=cmd_parity_bpe)


def _add_adaptmix(sub) -> None:
    p = sub.add_parser("adaptmix", help="AdaptMix: iterate a trainer's data mixture on dev fertility "
                                         "(history.json + the last tokenizer)")
    p.add_argument("out", help="output directory: history.json (every iteration's mixture and dev fertility), "
                               "tokenizer.json (HF trainers) or tokenizer.model (sentencepiece), run.json")
    p.add_argument("--force", action="store_true", help=FORCE_HELP)
    p.add_argument("--trainer", default="hf-bpe", choices=options.MIXTURE_TRAINERS)
    p.add_argument("--vocab", "-V", action=_Positive, default=32000, help="vocabulary size")
    p.add_argument("--langs", nargs="*", action=_Langs, help="languages (default: the pool's or the manifest's)")
    p.add_argument("--manifest", help="JSON/YAML {lang: [paths or globs]} instead of the pool")
    p.add_argument("--train-chars", action=_Positive, default=3_000_000, help="text per language the mixture draws from")
    p.add_argument("--budget-chars", action=_Positive, required=True, help="characters of each iteration's training mixture")
    p.add_argument("--iterations", action=_Positive, default=5)
    p.add_argument("--mu", type=float, default=0.3, help="momentum (Eq. 4)")
    p.add_argument("--eps", type=float, default=0.5, help="smoothing ε (Eq. 2)")
    p.add_argument("--dev", nargs="*", help="dev text, one file per language, named after it (default: the dev "
                                            "split of --eval / $MODTOK_EVAL / FLORES-200)")
    p.add_argument("--eval", help=EVAL_HELP + " (its dev split is read, never devtest)")
    p.add_argument("--clamp-delta", action="store_true",
                   help="clamp Eq. 1's delta at 0 (fertility below f_best); the paper's formula is unclamped")
    p.add_argument("--exclude-spaceless", action="store_true", help="leave out scripts without spaces (default: per-word fertility from a parallel spaced dev line)")
    p.add_argument("--scheme", default=TRAINING_SCHEME, help="pre-tokenizer of the BPE trainers; " + SCHEME_HELP)
    p.add_argument("--seed", type=int, default=0)
    p.set_defaults(fn=cmd_adaptmix)


def _add_count(sub) -> None:
    p = sub.add_parser("count", help="count pre-tokens of a manifest's corpora, save them (on Dask with "
                                     "--workers N or --scheduler ADDR)")
    p.add_argument("manifest", help="JSON/YAML {lang: [paths or globs]}")
    p.add_argument("-o", "--out", required=True, help="output counts directory")
    p.add_argument("--force", action="store_true", help=FORCE_HELP)
    p.add_argument("--scheme", default=TRAINING_SCHEME, help=SCHEME_HELP)
    p.add_argument("--langs", nargs="*", help="languages of the manifest to count (default: all)")
    p.add_argument("--text-field", default="text", help="JSONL field / Parquet or Arrow column of the text, for "
                                                        "the manifest entries that name no text_field of their own")
    p.add_argument("--max-chars", action=_Positive, help="character budget per language (first N, stream order)")
    p.add_argument("--sample", type=float, help="keep each record with this probability (seeded)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--skip-bad", action="store_true", help="skip and count bad records instead of failing")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--workers", type=int, help="a LocalCluster of N worker processes on this machine")
    where.add_argument("--scheduler", help="address of a running Dask scheduler, e.g. tcp://HOST:8786")
    p.add_argument("--partition-mb", action=_Positive, default=64, help="input MB per Dask task (small shards are grouped)")
    p.add_argument("--connect-timeout", type=float, default=30, help="seconds to wait for the scheduler")
    p.set_defaults(fn=cmd_count)


def _add_trim(sub) -> None:
    p = sub.add_parser("trim", help="trim a BPE tokenizer (and an HF model) to the tokens some languages use")
    p.add_argument("base", help="a deployed name (llama3, qwen3, ...), a tokenizer.json or its directory")
    p.add_argument("-o", "--out", required=True, help="output directory, new or empty (--force over an earlier "
                                                      "trim): tokenizer.json, id_map.json, ..., run.json")
    p.add_argument("--langs", nargs="+", action=_Langs, required=True, help="languages to keep")
    p.add_argument("--manifest", help="usage text: " + MANIFEST_HELP)
    p.add_argument("--max-chars", action=_Positive, default=3_000_000, help="usage characters per language")
    p.add_argument("--eval", nargs="+", help="held-out text files (default: $MODTOK_EVAL, else FLORES-200 devtest)")
    p.add_argument("--keep-first", type=int, default=0, help="also keep the ids below this (most frequent)")
    p.add_argument("--keep-script", action="store_true",
                   help="also keep every token written only in the languages' scripts (+ digits, punctuation)")
    p.add_argument("--model", help="a local HF causal-LM directory: cut its embedding/output rows into OUT")
    p.add_argument("--pad-to-multiple-of", type=int, help="pad the model's rows to a multiple of N")
    p.add_argument("--logit-tol", type=float, default=1e-4, help="largest change of a kept logit after reloading")
    p.add_argument("--force", action="store_true", help="replace an earlier trim's output in OUT")
    p.add_argument("--progress", action="store_true", help="transformers' own loading bars")
    p.set_defaults(fn=cmd_trim)


def _add_audit(sub) -> None:
    p = sub.add_parser("audit", help="premium, pre-token floor and its decomposition on parallel text")
    p.add_argument("tokenizer", help="a deployed name (llama3, qwen3, ...), a tokenizer.json or its directory")
    p.add_argument("--lang", default="npi_Deva")
    p.add_argument("--ref", default="eng_Latn")
    p.add_argument("--split", default="devtest", choices=["dev", "devtest"])
    p.add_argument("--eval", help=EVAL_HELP)
    p.add_argument("--json", action="store_true", help="one JSON object instead of a table")
    p.set_defaults(fn=cmd_audit)


def _add_extend(sub) -> None:
    p = sub.add_parser("extend", help="extend a deployed tokenizer with merges for one or more languages, keep "
                                      "every original id (checked), grow its model")
    p.add_argument("base", help="a deployed name (llama3, qwen3, ...), a tokenizer.json or its directory")
    p.add_argument("-o", "--out", required=True, help="output directory (new or empty; --force over an earlier "
                                                      "extend; appears when complete, with run.json)")
    p.add_argument("--lang", nargs="+", required=True, help="the languages of the text, e.g. npi_Deva (each one's "
                   "script, by Unicode Script_Extensions, is its merge filter), learned one after another in this order")
    text = p.add_mutually_exclusive_group(required=True)
    text.add_argument("--manifest", help="JSON/YAML {lang: [paths or globs]}: its --lang entries")
    text.add_argument("--text", nargs="+", help="training text (any format modtok.text.corpus reads): the files "
                                                "of one --lang, or one file per --lang")
    p.add_argument("-K", type=int, required=True, help="merges to learn per language, before the filter (>= 1)")
    p.add_argument("--arm", default="R2", choices=options.EXTEND_ARMS,
                   help="R1: the base's regex; R2: marks joined to letters (default; a mark-aware base keeps its "
                        "own); R2-deva: Devanagari marks")
    p.add_argument("--filter", default="strict", choices=options.EXTEND_FILTERS,
                   help="keep merges holding a complete code point of the script (strict), also byte "
                        "pieces (relaxed, App. H), or all (none: breaks the invariance, so nothing is saved "
                        "when probe text changes)")
    p.add_argument("--min-count", type=int, default=2, help="stop when no pair occurs this often")
    p.add_argument("--max-chars", action=_Positive, help="read at most this many characters of text per language")
    p.add_argument("--probe", nargs="+", help="probe text files for the invariance check "
                                              "(default: eng_Latn + rus_Cyrl of the evaluation text)")
    p.add_argument("--eval", help=EVAL_HELP + " (the default probe text)")
    p.add_argument("--model", help="a local transformers causal-LM directory to grow and save with the tokenizer "
                                   "(checked before any training; never downloaded)")
    p.add_argument("--pad-to-multiple-of", type=int, help="pad the model's rows to a multiple of N")
    p.add_argument("--logit-tol", type=float, default=1e-4,
                   help="largest change of a logit over the original ids allowed on mark-free text")
    p.add_argument("--force", action="store_true", help="replace an earlier extend's output in OUT")
    p.add_argument("--progress", action="store_true", help="progress bars over the phases and the merges")
    p.set_defaults(fn=cmd_extend)


def _add_lm_train(sub) -> None:
    p = sub.add_parser("lm-train", help="train a modular LM on a tokenizer directory (multi-process: "
                                         "torchrun --nproc_per_node=N -m modtok lm-train ...)")
    p.add_argument("--tokenizer", required=True, help="ModularTokenizer directory")
    p.add_argument("--out", required=True, help="output directory: checkpoint.pt, metrics.jsonl, run.json")
    p.add_argument("--force", action="store_true", help=FORCE_HELP)
    p.add_argument("--langs", nargs="*", help="training languages (default: all of the tokenizer's)")
    p.add_argument("--english-share", type=float, default=0.7)
    p.add_argument("--scheme", default="samp_sub", choices=options.LM_SAMPLING)
    p.add_argument("--n", type=int, default=2)
    p.add_argument("--p-full", type=float, default=0.5,
                   help="probability of the full tokenizer (samp_full) or of the own + n union (samp_sub), App. D.2")
    p.add_argument("--p", type=float, default=None, help=argparse.SUPPRESS)  # the old flag, refused
    p.add_argument("--vocab-store", default="device", choices=["device", "host"])
    p.add_argument("--update-delay", type=int, default=0, choices=[0, 1])
    p.add_argument("--config", default="mini")
    p.add_argument("--batch-size", type=int, default=8)
    p.add_argument("--seq-len", type=int, default=128)
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--warmup", type=int, default=20)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--max-chars", action=_Positive, default=None, help="training characters per language")
    p.add_argument("--manifest", help=MANIFEST_HELP)
    p.add_argument("--progress", action="store_true")
    p.set_defaults(fn=cmd_lm_train)


def _add_playground(sub) -> None:
    p = sub.add_parser("playground", help="open JupyterLab on the tokenizer playground (type text, see tokens)")
    p.add_argument("--dry-run", action="store_true", help="print the command, do not start JupyterLab")
    p.set_defaults(fn=cmd_playground)


COMMANDS = (
    _add_example_corpus, _add_data, _add_warmup, _add_report, _add_sequential_bpe, _add_modular_unigram,
    _add_nsl, _add_encode, _add_parity_bpe, _add_adaptmix, _add_count, _add_trim, _add_audit, _add_extend,
    _add_lm_train, _add_playground, _add_cache,
)


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="modtok", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    for add in COMMANDS:  # one function per command, in the order `modtok --help` lists them
        add(sub)
    for p in sub.choices.values():  # every command that reads text checks its script (modtok.text.scripts)
        p.add_argument("--any-script", action="store_true",
                       help="accept text whose letters are mostly not in its language code's script "
                            "(sets $MODTOK_ANY_SCRIPT for this run)")
    return ap


def kernel_modules(args) -> list[str]:
    """The numba kernel modules a parsed command runs (the others read, count or evaluate)."""
    if args.command == "modular-unigram":
        return ["modtok.unigram.lattice"]
    if args.command in ("sequential-bpe", "parity-bpe", "trim", "extend") or (
            args.command == "adaptmix" and args.trainer == "modtok-bpe"):
        return ["modtok.bpe.kernels"]
    return []


class _Terminated(BaseException):
    """SIGTERM in the main thread, past every ``except Exception``: each ``finally`` runs, as on Ctrl-C."""
    seen = False  # set by _terminate: a C extension's import may turn the raise into another error


def _terminate(pid: int, signum, frame):
    if os.getpid() != pid:  # a forked worker (count_by_language's) inherits it: a raise hung the pool; end instead
        os._exit(128 + signum)
    _Terminated.seen = True
    raise _Terminated


def main(argv=None) -> int:
    from modtok.text.scripts import ANY_SCRIPT_ENV

    before, on_sigterm = os.environ.get(ANY_SCRIPT_ENV), signal.signal(signal.SIGTERM, partial(_terminate, os.getpid()))
    _Terminated.seen = False
    try:
        args = build_parser().parse_args(argv)  # a count or budget below 1 is refused here (_Positive)
        if kernels_cold(kernel_modules(args)):
            print("modtok: compiling the numba kernels of this checkout first (about 30 s, once; "
                  "`modtok warmup` or `make install` does it ahead of time)", file=sys.stderr)
        if args.any_script:  # the library's readers take it from there (notebooks and studies do too)
            os.environ[ANY_SCRIPT_ENV] = "1"
        args.fn(args)
        sys.stdout.flush()  # a reader gone (`modtok data | head -1`) shows here at the latest
    except ModtokError as e:
        print(f"modtok: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # Ctrl-C: one line, no traceback; an output directory is left as it was
        print("modtok: interrupted", file=sys.stderr)
        return 130  # 128 + SIGINT, what a shell reports for a command ended by Ctrl-C
    except BrokenPipeError:  # stdout's reader left: quietly, as the "Note on SIGPIPE" in Python's docs says
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # so the exit's flush writes nowhere
        return 141  # 128 + SIGPIPE, what a shell reports for a command whose reader left
    except (_Terminated, Exception) as e:  # SIGTERM (kill, a batch system's time limit): as Ctrl-C, with 143;
        if not (isinstance(e, _Terminated) or _Terminated.seen):  # also when an import turned it into "TypeError:
            raise  # expected a message argument" (tqdm.auto's _ssl import, session 21's CI rehearsal)
        print("modtok: terminated", file=sys.stderr)
        return 143
    finally:
        signal.signal(signal.SIGTERM, on_sigterm or signal.SIG_DFL)  # None: a handler set outside Python
        if before is None:
            os.environ.pop(ANY_SCRIPT_ENV, None)
        else:
            os.environ[ANY_SCRIPT_ENV] = before
    return 0


if __name__ == "__main__":
    sys.exit(main())
