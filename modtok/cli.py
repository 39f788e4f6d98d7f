"""``modtok ...``: scripted runs of what the notebooks do interactively.

    modtok data                                   which data the notebooks would use
    modtok sequential-bpe OUT -k 8000 [--langs ...]   train sequential BPE, save a ModularTokenizer
    modtok modular-unigram OUT -k 8000 [--langs ...]  merged Unigram + EM, save a ModularTokenizer
    modtok nsl TOKDIR [--langs ...]               NSL of each subtokenizer vs monolingual HF BPE
    modtok encode TOKDIR --langs npi_Deva "text"  global ids of a subtokenizer
    modtok lm-train ...                           the LM loop (same flags as python -m modtok.lm.train)
    modtok audit TOKENIZER [--lang npi_Deva --ref eng_Latn] [--json]   pre-token audit on FLORES devtest

Tokenizer directories hold ``tokenizer.json`` + ``lang_to_ids.json`` (see
:class:`modtok.modular.ModularTokenizer`). Errors from bad input are printed as
one line (``modtok: error: ...``) with exit status 2.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from modtok import data
from modtok.errors import ModtokError


def _corpora(args) -> data.Corpora:
    langs = data.pick_languages(args.langs, strict=True) if args.langs else None
    return data.default_corpora(langs, train_chars=args.train_chars)


def cmd_data(args) -> None:
    print("pool:  ", data.pool_dir() or "(unset: $MODTOK_POOL)")
    print("FLORES:", data.flores_dir() or "(unset: $MODTOK_FLORES)")
    langs = data.available_languages()
    print(f"{len(langs)} languages available:", " ".join(langs))


def cmd_sequential_bpe(args) -> None:
    from modtok.bpe.sequential import train_sequential
    from modtok.pretokenize import count_by_language

    corpora = _corpora(args)
    print(corpora.source, file=sys.stderr)
    counts = count_by_language(corpora.train, args.scheme, workers=os.cpu_count() or 1)  # a job: all cores
    multi = train_sequential(counts, args.k, order=list(corpora.train), scheme=args.scheme, progress=True)
    tok = multi.modular()
    tok.save(args.out)
    print(f"saved {tok.vocab_size} tokens, {len(tok.languages)} languages -> {args.out}")


def cmd_modular_unigram(args) -> None:
    from modtok.unigram.merge import merge_unigram
    from modtok.unigram.train import train_unigram_per_language

    corpora = _corpora(args)
    print(corpora.source, file=sys.stderr)
    models = train_unigram_per_language(corpora.train, args.k, num_threads=2, progress=True)
    merged = merge_unigram(models, corpora.train, max_iter=args.em_iters, progress=True)
    tok = merged.modular()
    tok.save(args.out)
    print(f"saved {tok.vocab_size} pieces, {len(tok.languages)} languages, "
          f"EM log-likelihood {merged.loglik[0]:.6g} -> {merged.loglik[-1]:.6g} -> {args.out}")


def cmd_nsl(args) -> None:
    from modtok import baselines, metrics
    from modtok.modular import ModularTokenizer

    tok = ModularTokenizer.load(args.tokenizer)
    langs = args.langs or tok.languages
    corpora = data.default_corpora(langs, train_chars=args.train_chars)
    print(corpora.source, file=sys.stderr)
    print(f"{'language':12s} {'subtok':>8s} {'full':>8s}   (NSL vs monolingual HF BPE of {args.k} tokens)")
    for lang in langs:
        ref = baselines.train_hf_bpe(corpora.train[lang], args.k, scheme=args.scheme)
        lines = corpora.eval[lang]
        sub = metrics.nsl(tok.subtokenizer([lang]), ref, lines)
        full = metrics.nsl(tok, ref, lines)
        print(f"{lang:12s} {sub:8.3f} {full:8.3f}")


def cmd_encode(args) -> None:
    from modtok.modular import ModularTokenizer

    tok = ModularTokenizer.load(args.tokenizer)
    print(json.dumps(tok.encode(args.text, args.langs or None)))


def cmd_lm_train(args, rest) -> None:
    from modtok.lm.train import main

    main(rest)


def cmd_audit(args) -> None:
    from modtok import audit

    flores = data.load_flores([args.lang, args.ref], split=args.split)
    row = audit.audit(audit.load_tokenizer(args.tokenizer), flores[args.lang], flores[args.ref])
    if args.json:
        print(json.dumps(row))
    else:
        print(f"{args.lang} vs {args.ref}, FLORES-200 {args.split} ({len(flores[args.lang])} lines)")
        print(audit.format_rows({args.tokenizer: row}))


class _Langs(argparse.Action):
    """``--langs``: codes separated by commas or spaces, flags repeatable (``npi_Deva,eng_Latn``)."""

    def __call__(self, parser, namespace, values, option_string=None):
        values = [values] if isinstance(values, str) else values
        codes = [code for value in values for code in value.split(",") if code]
        setattr(namespace, self.dest, (getattr(namespace, self.dest) or []) + codes)


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="modtok", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)

    sub.add_parser("data", help="show which data is configured").set_defaults(fn=cmd_data)

    def trainer(name, fn, help):
        p = sub.add_parser(name, help=help)
        p.add_argument("out", help="output tokenizer directory")
        p.add_argument("-k", type=int, default=8000, help="per-language budget")
        p.add_argument("--langs", nargs="*", action=_Langs,
                       help="languages, in training order (default: all available)")
        p.add_argument("--train-chars", type=int, default=1_000_000, help="training characters per language")
        p.set_defaults(fn=fn)
        return p

    trainer("sequential-bpe", cmd_sequential_bpe, "train sequential multilingual BPE").add_argument(
        "--scheme", default="llama3", help="pre-tokenizer (modtok.pretokenize.SCHEMES)")
    trainer("modular-unigram", cmd_modular_unigram, "train merged Unigram with EM").add_argument(
        "--em-iters", type=int, default=5)

    p = sub.add_parser("nsl", help="NSL of every subtokenizer vs a monolingual HF BPE")
    p.add_argument("tokenizer")
    p.add_argument("--langs", nargs="*", action=_Langs)
    p.add_argument("-k", type=int, default=8000, help="reference budget")
    p.add_argument("--scheme", default="llama3")
    p.add_argument("--train-chars", type=int, default=1_000_000)
    p.set_defaults(fn=cmd_nsl)

    p = sub.add_parser("encode", help="encode text with a subtokenizer (global ids)")
    p.add_argument("tokenizer")
    p.add_argument("text")
    # One value per flag (comma-separated, repeatable): a list flag would swallow the text.
    p.add_argument("--langs", action=_Langs,
                   help="the subtokenizer's languages, comma-separated or repeated (default: full tokenizer)")
    p.set_defaults(fn=cmd_encode)

    p = sub.add_parser("audit", help="premium, pre-token floor and its decomposition on FLORES-200")
    p.add_argument("tokenizer", help="a deployed name (llama3, qwen3, ...), a tokenizer.json or its directory")
    p.add_argument("--lang", default="npi_Deva")
    p.add_argument("--ref", default="eng_Latn")
    p.add_argument("--split", default="devtest")
    p.add_argument("--json", action="store_true", help="one JSON object instead of a table")
    p.set_defaults(fn=cmd_audit)

    sub.add_parser("lm-train", help="train an LM (flags: python -m modtok.lm.train --help)",
                   add_help=False).set_defaults(fn=cmd_lm_train)
    return ap


def main(argv=None) -> int:
    ap = build_parser()
    args, rest = ap.parse_known_args(argv)
    try:
        if args.command == "lm-train":
            args.fn(args, rest)
        elif rest:
            ap.error(f"unrecognized arguments: {' '.join(rest)}")
        else:
            args.fn(args)
    except ModtokError as e:
        print(f"modtok: error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
