"""The text a training command reads, and what its ``run.json`` says about it.

Every command that trains (``modtok sequential-bpe``, ``modular-unigram``, ``parity-bpe``,
``adaptmix``, ``lm-train``) reads its text the same way and records the same fields into
its output directory's ``run.json`` (:mod:`modtok.outputs`):

- :func:`training_corpora`: training text only, from ``--manifest``, ``$MODTOK_MANIFEST``,
  the pool or the wordfreq default (:func:`modtok.text.data.default_corpora`);
  :func:`training_files` names the files it read (run.json's ``inputs``);
- :func:`record_text` / :func:`record_counts`: lines and characters per language, of the
  text or of the saved counts a run trained on;
- :func:`files_by_language`: text files given one per language, matched to their languages
  by the codes in their names (never by position).

>>> language_of("x/eng_Latn.txt.zst"), language_of("train.eng.txt"), language_of("dev.mar_Deva.dev")
('eng_Latn', 'train.eng', 'mar_Deva')
>>> text_stats({"eng_Latn": ["ab", "cde"]})
{'eng_Latn': {'lines': 2, 'chars': 5}}
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from modtok.errors import ConfigError
from modtok.outputs import Run, read_run
from modtok.text import data
from modtok.text.corpus import COMPRESSIONS, SUFFIXES, open_corpus
from modtok.text.names import check_language_code

# Training commands pre-tokenize with the mark-aware Llama-3 regex: the letters-only
# "llama3" splits Indic words at every combining mark, so merges for them stall at the
# pre-token floor (notebook 07; Nepali premium 1.60 with llama3 vs 1.12 with llama3-marks on
# the same run). `--scheme llama3` is one flag away (the deployed Llama-3's own regex). Bounded
# runs of Han/kana, Thai, Lao, Khmer and Burmese are cut at a change of script and
# into pieces of at most 16 characters, so a line without spaces is not one pre-token
# (modtok.text.pretokenize, "Text without spaces"); every other script is cut as by llama3-marks.
TRAINING_SCHEME = "llama3-marks-bounded"


def training_corpora(langs: Sequence[str] | None, train_chars: int, manifest=None) -> data.Corpora:
    """Training text only (a training command reads no evaluation text, so a run is the
    same whether or not $MODTOK_EVAL/$MODTOK_FLORES is set): ``langs`` (checked, in this
    order; all available when empty) with ``train_chars`` characters each."""
    chosen = data.require_languages(langs, manifest=manifest, need_eval=False) if langs else None
    return data.default_corpora(chosen, train_chars=train_chars, manifest=manifest, need_eval=False)


def training_files(manifest, langs: Iterable[str]) -> list:
    """The files a training command reads for ``langs``: the manifest's (globs resolved) or
    the pool's; none for the embedded wordfreq default (run.json's ``training`` names it)."""
    kind = data.training_source(manifest)
    if kind == "manifest":
        return [src.path for corpus in open_corpus(data.manifest_path(manifest), langs=list(langs)).values()
                for src in corpus.sources]
    if kind == "pool":
        return [data.pool_dir() / f"{lang}.txt" for lang in langs]
    return []


def text_stats(text: Mapping[str, Sequence[str]]) -> dict[str, dict[str, int]]:
    """``{lang: {"lines", "chars"}}`` of ``{lang: lines}``."""
    return {lang: {"lines": len(lines), "chars": sum(map(len, lines))} for lang, lines in text.items()}


def record_text(run: Run, text: Mapping[str, Sequence[str]], **fields) -> None:
    """Lines and characters per language of ``{lang: lines}`` (and ``fields``) into run.json."""
    run.record(languages=text_stats(text), **fields)


def record_counts(run: Run, directory, langs: Sequence[str] | None) -> None:
    """What a run trained on saved counts records: the counts directory, its inputs' hash, and
    the lines and characters per language the counts' own run.json gives."""
    made = read_run(directory)
    chosen = langs or list(made["languages"])
    run.add_inputs(sorted(p for p in Path(directory).iterdir()))
    run.record(training=f"saved counts {directory}", counts_inputs_sha256=made.get("inputs_sha256"),
               languages={lang: made["languages"][lang] for lang in chosen}, evaluation=None)


def shortfall_lines(asked: Mapping[str, int], got: Mapping[str, int], unit: str, why: str,
                    what: str = "sub-vocabulary") -> list[str]:
    """One line per language whose sub-vocabulary (``what``) stopped short of its budget (none
    when every language got what it asked): the words the training commands use, and the
    notebooks for their monolingual references (a corpus of a few KB a language gives a few
    hundred tokens whatever k asks).

    >>> shortfall_lines({"mya_Mymr": 4000, "eng_Latn": 4000}, {"mya_Mymr": 2275, "eng_Latn": 4000},
    ...                 "tokens", "no pair or token left")
    ['mya_Mymr: sub-vocabulary of 2,275 tokens, short of the 4,000 asked (no pair or token left)']
    >>> shortfall_lines({"tha_Thai": 8000}, {"tha_Thai": 740}, "tokens", "no pair seen twice left", "reference")
    ['tha_Thai: reference of 740 tokens, short of the 8,000 asked (no pair seen twice left)']
    """
    return [f"{lang}: {what} of {got[lang]:,} {unit}, short of the {asked[lang]:,} asked ({why})"
            for lang in asked if got[lang] < asked[lang]]


def record_shortfall(run: Run, asked: Mapping[str, int], got: Mapping[str, int]) -> None:
    """run.json's ``vocabulary``: per language the tokens asked and got, and the languages short."""
    run.record(vocabulary={lang: {"asked": asked[lang], "got": got[lang]} for lang in asked},
               short=[lang for lang in asked if got[lang] < asked[lang]])


def language_of(path: str) -> str:
    """The language a file is named after: the first ``xxx_Scrp`` code in its name
    (``x/eng_Latn.txt.zst`` -> ``eng_Latn``), else the name without its corpus suffixes
    (``train.eng.txt`` -> ``train.eng``)."""
    name = Path(path).name
    code = re.search(r"[a-z]{3}_[A-Z][a-z]{3}", name)
    if code:
        return code.group(0)
    while Path(name).suffix in {*SUFFIXES, *COMPRESSIONS, ".dev", ".devtest"}:
        name = Path(name).stem
    return name


def files_by_language(files: Iterable[str], what: str) -> dict[str, str]:
    """``{code: file}`` for files named after their language (``x/eng_Latn.txt.zst``), as every
    command names text; a name without a language code, or two files of one language, is refused."""
    out: dict[str, str] = {}
    for f in files:
        if Path(f).is_dir():
            raise ConfigError(f"{what} {f} is a directory: name its files, one per language, each named after it "
                              f"(e.g. {Path(f) / 'eng_Latn.txt'})")
        lang = language_of(f)
        check_language_code(lang, f"{what} {f}: a file is named after its language (e.g. eng_Latn.txt)")
        if lang in out:
            raise ConfigError(f"{what}: two files for {lang} ({out[lang]}, {f})")
        out[lang] = f
    return out


def check_dev_languages(dev_files: Mapping[str, str], langs: Sequence[str]) -> None:
    """Refuse ``--dev`` files (:func:`files_by_language`) that are not one per language of the run."""
    if dev_files and set(dev_files) != set(langs):
        raise ConfigError(f"--dev files are for {', '.join(sorted(dev_files))}; the run's languages are "
                          f"{', '.join(langs)} (one dev file per language, named after it)")
