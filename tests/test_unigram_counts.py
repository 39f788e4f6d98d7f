"""Merged Unigram from saved counts (issue 22): ``modtok modular-unigram --counts DIR``
gives the model training from the counted text gives -- the same pieces, scores,
language sets and encodings -- because both paths become one ``Counter`` of units
(:mod:`modtok.unigram.units`) before sentencepiece and EM see anything.

Hermetic: made-up words of two scripts, with the whitespace sentencepiece is
particular about (double and trailing spaces, tabs, U+00A0, a literal ``▁``, a line
that begins with a space) and punctuation that the BPE pre-tokenizers would cut off.
"""

from __future__ import annotations

import json
import random
from collections import Counter

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from modtok.artifacts.modular import ModularTokenizer
from modtok.artifacts.spm_bpe import NORMAL
from modtok.errors import DataError, UnknownLanguageError
from modtok.text.counts import count_corpora
from modtok.text.corpus import open_corpus
from modtok.ui import cli
from modtok.unigram.merge import BASE_PIECES, BASE_TYPES, WORD, count_units, merge_unigram
from modtok.unigram.model import SPACE, UnigramModel
from modtok.unigram.train import train_unigram, train_unigram_per_language
from modtok.unigram.units import load_units, unit_counts, units_from_pretokens

SYLLABLES = {
    "eng_Latn": [c + v for c in "bdfgklmnprst" for v in "aeiou"],
    "rus_Cyrl": [c + v for c in "бвдзклмнпрст" for v in "аеиоуя"],
}
SEPARATORS = [" "] * 12 + ["  ", "\t", "\u00a0", ", ", ". ", SPACE]
K = 400


def made_up(lang: str, n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    word = lambda: "".join(rng.choice(SYLLABLES[lang]) for _ in range(rng.randint(1, 3)))  # noqa: E731
    lines = []
    for _ in range(n):
        words = [word() for _ in range(rng.randint(3, 10))]
        line = words[0] + "".join(rng.choice(SEPARATORS) + w for w in words[1:])
        lines.append(line + rng.choice(["", "", "", "!", " "]))
    lines[3] = " " + lines[3]  # a line that begins with a space: both paths read it alike
    return lines


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """A manifest (JSONL for one language, plain text for the other), its training lines
    and held-out lines."""
    root = tmp_path_factory.mktemp("unigram-counts")
    train = {lang: made_up(lang, 200, i) for i, lang in enumerate(SYLLABLES)}
    held_out = {lang: made_up(lang, 40, 100 + i) for i, lang in enumerate(SYLLABLES)}
    (root / "eng.jsonl").write_text("".join(json.dumps({"text": s}, ensure_ascii=False) + "\n"
                                            for s in train["eng_Latn"]), encoding="utf-8")
    (root / "rus.txt").write_text("\n".join(train["rus_Cyrl"]) + "\n", encoding="utf-8")
    manifest = root / "corpora.json"
    manifest.write_text(json.dumps({"eng_Latn": ["eng.jsonl"], "rus_Cyrl": ["rus.txt"]}))
    return root, manifest, train, held_out


@given(st.text(st.sampled_from(["a", "b", " ", SPACE, "\t", "\u00a0", ",", "я"]), max_size=30))
def test_units_are_sentencepiece_words(line):
    """The ``sentencepiece``-scheme pre-tokens map to sentencepiece's own words of the
    normalised line (dummy prefix, ``▁`` for spaces, cut before a ``▁`` after another
    character: :func:`count_units`), except that a line beginning with a space or ``▁``
    has no dummy prefix (saved counts cannot tell its first pre-token from a later one)."""
    got = unit_counts([line])
    if not line.strip():
        assert got == Counter()  # blank lines are dropped, as open_corpus drops them
    elif line[0] in (" ", SPACE):
        assert got == Counter(WORD.findall(line.replace(" ", SPACE)))
        assert sum(got.values()) == sum(count_units([line]).values())
    else:
        assert got == count_units([line])


def test_counts_equal_text_through_the_cli(corpus, tmp_path, capsys):
    """The must-show: ``modtok count --scheme sentencepiece`` then ``modular-unigram --counts``
    writes the very files ``modular-unigram --manifest`` writes from the text: the same
    pieces and scores (exactly), language sets, and ids on held-out lines; a character
    budget (``--max-chars`` there, ``--train-chars`` here) takes the same lines."""
    root, manifest, train, held_out = corpus
    counts = tmp_path / "counts"
    budget = sum(map(len, train["eng_Latn"])) * 3 // 4  # a budget cuts both alike (stream order)
    assert cli.main(["count", str(manifest), "-o", str(counts), "--scheme", "sentencepiece",
                     "--max-chars", str(budget)]) == 0
    k = ["-k", str(K), "--em-iters", "2"]
    assert cli.main(["modular-unigram", str(tmp_path / "text"), *k, "--manifest", str(manifest),
                     "--train-chars", str(budget)]) == 0
    assert cli.main(["modular-unigram", str(tmp_path / "counts-uni"), *k, "--counts", str(counts)]) == 0
    assert "training: saved counts" in capsys.readouterr().err
    for name in ("tokenizer.json", "lang_to_ids.json"):
        assert (tmp_path / "counts-uni" / name).read_bytes() == (tmp_path / "text" / name).read_bytes(), name
    vocab = json.loads((tmp_path / "text" / "tokenizer.json").read_text(encoding="utf-8"))["model"]["vocab"]
    assert len(vocab) > 259 + K // 2  # a real model, not two empty ones
    assert "\t" in [p for p, _ in vocab]  # the tabs made it through sentencepiece's TSV input
    a, b = ModularTokenizer.load(tmp_path / "text"), ModularTokenizer.load(tmp_path / "counts-uni")
    lines = held_out["eng_Latn"] + held_out["rus_Cyrl"]
    assert a.encode_batch(lines) == b.encode_batch(lines)
    for lang in SYLLABLES:
        assert a.encode_batch(lines, [lang]) == b.encode_batch(lines, [lang])


def test_library_paths_agree_and_ignore_line_order(corpus):
    """Lines, lines in another order and their saved counts: one model per language
    (pieces and scores equal) and one merged model."""
    _, manifest, train, held_out = corpus
    saved = count_corpora(open_corpus(str(manifest)), "sentencepiece")
    from_counts = {lang: units_from_pretokens(saved.by_lang[lang]) for lang in SYLLABLES}
    shuffled = {lang: random.Random(7).sample(lines, len(lines)) for lang, lines in train.items()}
    runs = [train, shuffled, from_counts]
    models = [train_unigram_per_language(text, K) for text in runs]
    for lang in SYLLABLES:
        for m in models[1:]:
            assert m[lang].pieces == models[0][lang].pieces
            assert np.array_equal(m[lang].scores, models[0][lang].scores)
    merged = [merge_unigram(models[0], text, max_iter=2) for text in runs]
    for m in merged[1:]:
        assert m.model.pieces == merged[0].model.pieces and m.loglik == merged[0].loglik
        assert np.array_equal(m.model.scores, merged[0].model.scores)
        assert all(np.array_equal(m.lang_to_ids[x], merged[0].lang_to_ids[x]) for x in SYLLABLES)
    assert merged[0].n_words == sum(sum(c.values()) for c in from_counts.values())
    # and the counts are used: half the text gives another model
    half = train_unigram(train["eng_Latn"][::2], K)
    assert half.pieces != models[0]["eng_Latn"].pieces


def test_cli_errors(corpus, tmp_path, capsys):
    """--counts with --manifest; a language the counts do not hold; counts of another
    pre-tokenizer (the default llama3-marks-bounded cuts ``mat,`` in two); not a counts directory."""
    _, manifest, _, _ = corpus
    spm_counts, llama_counts = tmp_path / "spm", tmp_path / "llama3-marks"
    assert cli.main(["count", str(manifest), "-o", str(spm_counts), "--scheme", "sentencepiece"]) == 0
    assert cli.main(["count", str(manifest), "-o", str(llama_counts)]) == 0
    capsys.readouterr()
    out = str(tmp_path / "out")
    cases = [
        (["--counts", str(spm_counts), "--manifest", str(manifest)], "give --counts or --manifest, not both"),
        (["--counts", str(spm_counts), "--langs", "eng_Latn,fra_Latn"],
         "unknown language 'fra_Latn' (available: eng_Latn, rus_Cyrl); "),
        (["--counts", str(llama_counts)], "counts were made with pre-tokenizer 'llama3-marks-bounded'; merged Unigram trains on "
                                          "sentencepiece's words: count them with `modtok count MANIFEST -o DIR "
                                          "--scheme sentencepiece`"),
        (["--counts", str(tmp_path / "nowhere")], f"{tmp_path / 'nowhere'}: no such directory"),
        (["--counts", str(tmp_path)], "no readable run.json, so not a whole output of `modtok count`"),
    ]
    for flags, message in cases:
        assert cli.main(["modular-unigram", out, "-k", str(K), *flags]) == 2
        assert message in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
    units = load_units(spm_counts, ["rus_Cyrl"])
    assert list(units) == ["rus_Cyrl"] and all(u.startswith(SPACE) for u in units["rus_Cyrl"])
    with pytest.raises(UnknownLanguageError, match="holds no counts of it"):
        load_units(spm_counts, "fra_Latn")


def test_library_errors():
    """Word-deciding sentencepiece settings cannot be overridden; EM from unit counts needs a
    vocabulary whose pieces never cross a word start; empty text is refused either way."""
    with pytest.raises(DataError, match="split_by_whitespace: fixed for merged Unigram"):
        train_unigram(["ab ab"] * 20, 262, split_by_whitespace=False)
    with pytest.raises(DataError, match="empty corpus"):
        train_unigram(Counter(), 300)
    with pytest.raises(DataError, match="expected a list of lines"):
        train_unigram("one string", 300)
    crossing = UnigramModel(BASE_PIECES + ["a", "b", SPACE, f"a{SPACE}b"], [0.0] * 259 + [-1.0] * 4,
                            BASE_TYPES + [NORMAL] * 4)
    with pytest.raises(DataError, match="crosses a word start, so EM needs whole lines"):
        merge_unigram({"x": crossing}, {"x": Counter({f"{SPACE}a": 3})})
    assert merge_unigram({"x": crossing}, {"x": ["a b", "a"]}, max_iter=1).n_units == 2  # lines are fine
    models = {"x": train_unigram(["aaa ab abab"] * 20, 266)}
    with pytest.raises(DataError, match="'x' has an empty corpus"):
        merge_unigram(models, {"x": Counter()})
