"""Notebook 07, learn it small: the pre-token floor, and a merge the letters-only regex cannot learn.

A BPE merge never crosses a pre-token border, so the number of pre-tokens is the fewest
tokens any merge-based extension can reach: the *pre-token floor* (pre-token floor paper,
§III). The letters-only regex of Llama-3 (R1, scheme ``llama3``) ends a word at every
Devanagari vowel sign, a combining mark, and starts the next pre-token with it; the repair
(R2, ``llama3-marks``) puts the marks in the word class. :func:`trace` cuts one Nepali
phrase both ways, counts the floors, trains the same BPE on a toy corpus under each
(the naive :mod:`modtok.bpe.reference`; :func:`engine_run` is the numba engine) and finds
the first R2 merge that crosses an R1 border.

>>> steps = trace()
>>> steps[1].data["R1"], steps[1].data["R2"]
([' न', 'ेप', 'ालक', 'ो', ' सरक', 'ार'], [' नेपालको', ' सरकार'])
>>> steps[2].data["floor"]
{'R1': 6, 'R2': 2}
>>> steps[-1].data["token"], steps[-1].data["in R1"]
(' नेपाल', False)
"""

from __future__ import annotations

import unicodedata
from collections import Counter

from modtok.bpe import reference as ref_bpe
from modtok.bpe import standard
from modtok.studies.lessons.steps import Prediction, Step, comparison, is_piece, label, pills, table
from modtok.text.pretokenize import count_pretokens, pretokenize

SCHEMES = {"R1": "llama3", "R2": "llama3-marks"}
PHRASE = " नेपालको सरकार"  # nepālko sarkār, "government of Nepal" (the paper's Figure 4 phrase)
CORPUS = [" नेपालको सरकार", " नेपाल", " नेपाली भाषा", " सरकारको"] * 3  # a toy corpus, one line each
MERGES = 16


def _counts(scheme: str, lines=CORPUS) -> Counter:
    return count_pretokens(lines, scheme)


def reference(lines=CORPUS, merges: int = MERGES) -> dict:
    """``{"R1": [token text], "R2": [...]}``: the tokens BPE learns under each regex (naive)."""
    out = {}
    for name, scheme in SCHEMES.items():
        model = ref_bpe.train(ref_bpe.ReferenceEngine({"ne": _counts(scheme, lines)}), 256 + merges)
        out[name] = [label(model.vocab[c]) for c in model.results]
    return out


def engine_run(lines=CORPUS, merges: int = MERGES) -> dict:
    """The same through :func:`modtok.bpe.standard.train` (the numba engine)."""
    out = {}
    for name, scheme in SCHEMES.items():
        model = standard.train(_counts(scheme, lines), 256 + merges, scheme=scheme)
        out[name] = [label(model.vocab[c]) for c in model.results]
    return out


def first_crossing(tokens, phrase_lines=CORPUS) -> str | None:
    """The first token (whole characters) that is inside no R1 pre-token of the corpus:
    BPE under R1 can never make it."""
    pieces = {p for line in phrase_lines for p in pretokenize(line, SCHEMES["R1"])}
    return next((t for t in tokens if not is_piece(t) and not any(t in p for p in pieces)), None)


def _mark_initial(piece: str) -> bool:
    """The pre-token starts with a combining mark (a split syllable)."""
    return unicodedata.category(piece[0]).startswith("M")


def trace(phrase: str = PHRASE, lines=CORPUS, merges: int = MERGES) -> list[Step]:
    """The phrase, its pre-tokens under R1 and R2, the floors, the learned tokens."""
    cut = {name: pretokenize(phrase, scheme) for name, scheme in SCHEMES.items()}
    floor = {name: len(p) for name, p in cut.items()}
    learned = reference(lines, merges)
    token = first_crossing(learned["R2"], lines)
    return [
        Step(
            "the phrase",
            f"{phrase.strip()!r}, {len(phrase.strip())} code points; its vowel signs are combining marks",
            [pills("characters", list(phrase))],
            {"phrase": phrase},
        ),
        Step(
            "pre-tokens",
            "R1 (letters only) ends a word at every vowel sign; R2 keeps the marks in the word",
            [
                pills(f"{name} ({SCHEMES[name]})", p, [i for i, x in enumerate(p) if _mark_initial(x)])
                for name, p in cut.items()
            ],
            {**cut},
        ),
        Step(
            "the floor",
            "no merge crosses a pre-token border: the pre-tokens are the fewest tokens any extension "
            "can reach",
            [table(["regex", "pre-tokens = the floor"], [[n, f] for n, f in floor.items()])],
            {"floor": floor},
        ),
        Step(
            "what BPE learns",
            f"{merges} merges on {len(lines)} toy lines under each regex",
            [
                pills(name, toks, [i for i, t in enumerate(toks) if t == token])
                for name, toks in learned.items()
            ],
            {"learned": learned},
        ),
        Step(
            f"a token R1 cannot make: {token!r}",
            f"R1 cuts {token!r} itself into {pretokenize(token, SCHEMES['R1'])}: "
            "it crosses a border, so no number of R1 merges builds it",
            [pills("R1 pre-tokens", cut["R1"]), pills("R2 token", [token], [0])],
            {"token": token, "in R1": token in learned["R1"], "in R2": token in learned["R2"]},
        ),
    ]


def prediction(phrase: str = PHRASE, lines=CORPUS, merges: int = MERGES) -> Prediction:
    """ "Can BPE under R1 ever make this token?"."""
    token = first_crossing(reference(lines, merges)["R2"], lines)
    return Prediction(
        f"Can BPE under the letters-only regex (R1) ever learn the token {token!r}?",
        ["yes", "no"],
        "no",
        f"R1 cuts {phrase.strip()!r} as {pretokenize(phrase, SCHEMES['R1'])}: {token!r} would cross a border",
    )


def engine_step(lines=CORPUS, merges: int = MERGES) -> Step:
    """The tokens :func:`modtok.bpe.standard.train` learns under each regex next to the reference's."""
    ref, engine = reference(lines, merges), engine_run(lines, merges)
    return comparison(
        "the numba engine (bpe.standard.train)",
        [(f"{name} tokens", ref[name], engine[name]) for name in SCHEMES],
    )
