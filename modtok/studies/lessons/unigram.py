"""Notebook 03, learn it small: a Unigram LM lattice, its Viterbi path and one EM step.

A Unigram tokenizer gives every piece a log-probability; a segmentation scores the sum of
its pieces', the lattice holds every segmentation, Viterbi picks the best one, and EM
re-estimates the probabilities from the *expected* number of uses of each piece over all
paths (forward-backward), then divides by their total (the M-step,
:func:`modtok.unigram.merge.m_step`). Everything here is computed by the readable oracle
:mod:`modtok.unigram.reference`; :func:`engine_run` is the compiled lattice
(:mod:`modtok.unigram.lattice`) on the same toy.

>>> steps = trace()
>>> steps[1].data["paths"]                     # every path of "abb", best first
[(['ab', 'b'], -2.7), (['a', 'b', 'b'], -4.0)]
>>> steps[2].data["viterbi"]
['ab', 'b']
>>> {p: round(c, 4) for p, c in steps[3].data["counts"]["ab"].items()}   # e^-1.2 vs e^-2.5
{'a': 0.2142, 'ab': 0.7858, 'b': 0.2142}
>>> {p: round(v, 4) for p, v in steps[-1].data["new_logp"].items()}
{'a': -2.0799, 'b': -0.8756, 'ab': -0.7799}
"""

from __future__ import annotations

import math

import numpy as np

from modtok.studies.lessons.steps import Prediction, Step, comparison, pills, table
from modtok.unigram import lattice, reference
from modtok.unigram.merge import m_step

VOCAB = {"a": -1.0, "b": -1.5, "ab": -1.2}  # unigram/reference.py's docstring
WORD = "abb"
CORPUS = {"ab": 1, "abb": 1}  # one EM step over these two words
UNK = -20.0  # no character of the toy is unknown; the oracle needs the number


def _r(x: float) -> float:
    return round(x, 4)


def em_step(corpus=CORPUS, vocab=VOCAB) -> tuple[dict, dict, dict]:
    """``(per-word expected counts, totals, new log-probabilities)`` by the oracle."""
    per_word = {w: reference.expected_counts(w, vocab, UNK)[0] for w in corpus}
    totals = {p: sum(n * per_word[w].get(p, 0.0) for w, n in corpus.items()) for p in vocab}
    z = sum(totals.values())
    return (
        per_word,
        totals,
        {p: math.log(c / z) if c > 0 else -math.inf for p, c in totals.items()},
    )  # m_step's -inf


def trace(word: str = WORD, vocab=VOCAB, corpus=CORPUS) -> list[Step]:
    """The pieces, the lattice's paths, Viterbi, then one EM step (E, then M)."""
    paths = sorted(
        ((p, _r(s)) for p, s in reference.all_segmentations(word, vocab, UNK)), key=lambda x: -x[1]
    )
    best = reference.viterbi(word, vocab, UNK)
    per_word, totals, new = em_step(corpus, vocab)
    z = sum(totals.values())
    steps = [
        Step(
            "the pieces",
            "each piece has a log-probability; a path scores the sum of its pieces'",
            [table(["piece", "log p", "p"], [[p, s, _r(math.exp(s))] for p, s in vocab.items()])],
            {"vocab": dict(vocab)},
        ),
        Step(
            f"the lattice of {word!r}",
            f"{len(paths)} paths from the first character to the last",
            [table(["path", "score (sum of log p)"], [[" | ".join(p), s] for p, s in paths], mark=0)],
            {"paths": paths},
        ),
        Step(
            "Viterbi",
            f"the best path, {' | '.join(best)}, scores {paths[0][1]}: one best prefix per position, "
            "no path enumerated",
            [pills(repr(word), best)],
            {"viterbi": best},
        ),
        Step(
            "E-step: expected counts",
            "each path weighs exp(score) / Z; a piece counts the weight of the paths that use it",
            [
                table(
                    ["word", *vocab],
                    [[w, *(_r(c.get(p, 0.0)) for p in vocab)] for w, c in per_word.items()]
                    + [["total (× count)", *(_r(totals[p]) for p in vocab)]],
                    mark=len(per_word),
                )
            ],
            {"counts": per_word, "totals": totals},
        ),
        Step(
            "M-step: new probabilities",
            f"p(piece) = expected count / {_r(z)} (the total)",
            [
                table(
                    ["piece", "old log p", "new log p", "new p"],
                    [[p, vocab[p], _r(new[p]), _r(math.exp(new[p]))] for p in vocab],
                )
            ],
            {"new_logp": new},
        ),
    ]
    return steps


def engine_run(word: str = WORD, vocab=VOCAB, corpus=CORPUS) -> dict:
    """The compiled lattice: Viterbi of ``word``, expected counts over ``corpus``, the M-step."""
    pieces = list(vocab)
    trie = lattice.Trie(pieces, range(len(pieces)))
    scores = np.array([vocab[p] for p in pieces])
    cps, offsets = lattice.encode_units([word])
    ids, lens = lattice.viterbi(cps, offsets, trie, scores, UNK, np.zeros(256, np.int32))
    cps, offsets = lattice.encode_units(list(corpus))
    counts, _, _ = lattice.expected_counts(
        cps, offsets, np.array(list(corpus.values()), np.float64), trie, scores, UNK
    )
    logp = m_step(counts, np.ones(len(pieces), bool))
    return {
        "viterbi": [pieces[i] for i in lattice.split_ids(ids, lens, offsets[:2])[0]],
        "totals": dict(zip(pieces, counts.tolist())),
        "new_logp": dict(zip(pieces, logp.tolist())),
    }


def prediction(word: str = WORD, vocab=VOCAB) -> Prediction:
    """ "Which path does Viterbi pick?" over every path of the lattice."""
    paths = reference.all_segmentations(word, vocab, UNK)
    best = reference.viterbi(word, vocab, UNK)
    scores = {" | ".join(p): _r(s) for p, s in paths}
    return Prediction(
        f"Which segmentation of {word!r} does Viterbi choose?",
        list(scores),
        " | ".join(best),
        "the highest sum of log-probabilities: " + ", ".join(f"{p} = {s}" for p, s in scores.items()),
    )


def engine_step(word: str = WORD, vocab=VOCAB, corpus=CORPUS) -> Step:
    """The compiled lattice next to the oracle (values to 10 decimals)."""
    steps, engine = trace(word, vocab, corpus), engine_run(word, vocab, corpus)

    def r10(d: dict) -> dict:
        return {p: round(v, 10) for p, v in d.items()}

    return comparison(
        "the compiled lattice (unigram.lattice)",
        [
            ("Viterbi path", steps[2].data["viterbi"], engine["viterbi"]),
            ("expected counts", r10(steps[3].data["totals"]), r10(engine["totals"])),
            ("new log p", r10(steps[-1].data["new_logp"]), r10(engine["new_logp"])),
        ],
    )
