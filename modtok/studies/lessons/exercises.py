"""The exercise ladder: one checker per rung, each saying where an answer first differs.

The rungs climb from BPE on a toy to the rules of the papers (the notebook
``notebooks/exercises.py`` has a skeleton and a check cell for each; reference solutions
are in ``exercises/solutions.py`` at the repository root, which the library never imports):

1. :func:`check_bpe_training` — train BPE on a toy corpus (any of the tied pairs will do);
2. :func:`check_engine_match` — match modtok's engine merge for merge, tie-break included,
   on seeded random corpora;
3. :func:`check_encode` — encode with a merge list and match Llama-3's ids on UDHR lines;
4. :func:`check_algorithm2` — the rule of Algorithm 2 (reuse a token or learn a merge);
5. :func:`check_viterbi` — Viterbi over a Unigram lattice;
6. :func:`check_em_step` — one EM step of a Unigram model;
7. :func:`check_parity_choice` — the language and pair of a parity-aware merge.

Conventions: a token is ``bytes``, a merge a pair of ``bytes``. Where several answers
are equally good the inputs are given in tie-break order and the first one wins (Python's
``max`` keeps the first maximum). A checker calls the learner's function, compares, and
returns a :class:`Check`; an exception in the learner's code is reported, not raised:

>>> check = check_viterbi(lambda text, vocab: list(text))
>>> check.ok, check.message
(False, "'abb': yours ['a', 'b', 'b'] scores -4.0, expected ['ab', 'b'] scores -2.7")
>>> check_viterbi(lambda text, vocab: 1 / 0).message
'your function raised ZeroDivisionError: division by zero'
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

from modtok.artifacts import deployed
from modtok.bpe import standard
from modtok.bpe.reference import ReferenceEngine
from modtok.errors import MissingPackageError
from modtok.studies.lessons import bpe, parity, sequential, subtokenizers, unigram
from modtok.text import udhr
from modtok.text.pretokenize import from_byte_level, pattern
from modtok.unigram import reference as uni_ref

RUNGS = {
    1: "train BPE on a toy corpus",
    2: "match modtok's engine merge for merge",
    3: "encode like a deployed tokenizer",
    4: "the rule of Algorithm 2",
    5: "Viterbi over a lattice",
    6: "one EM step",
    7: "a parity-aware choice",
}
ALPHABET = ["a", "b", "c", " ", "é", "न", "म", "्"]  # one- two- and three-byte characters, a mark
TRIALS = 12


@dataclass(frozen=True)
class Check:
    """The verdict of one rung: ``ok`` and a message that names the first difference."""

    rung: int
    ok: bool
    message: str

    def __repr__(self) -> str:
        verdict = "passed" if self.ok else "not yet"
        return f"Check(rung {self.rung}, {RUNGS[self.rung]}: {verdict}. {self.message})"


def _call(fn: Callable, *args):
    """``(result, None)`` or ``(None, message)`` when the learner's code raised."""
    try:
        return fn(*args), None
    except Exception as e:  # the learner's code: anything it raises is the answer to report
        return None, f"your function raised {type(e).__name__}: {e}"


def _corpus(rng: random.Random, words: int = 6, longest: int = 6) -> Counter:
    """A random word-count corpus over :data:`ALPHABET` (a seeded ``rng``)."""
    out = Counter()
    for _ in range(words):
        out["".join(rng.choice(ALPHABET) for _ in range(rng.randint(1, longest)))] += rng.randint(1, 5)
    return out


def _invalid(vocab: list[bytes], merge) -> str | None:
    """Why ``merge`` is not a pair of tokens of ``vocab`` (None when it is)."""
    if not (isinstance(merge, tuple) and len(merge) == 2 and all(isinstance(x, bytes) for x in merge)):
        return f"{merge!r} is not a pair of bytes"
    missing = [x for x in merge if x not in vocab]
    return f"{merge!r}: {missing[0]!r} is not a token yet" if missing else None


def _replay(ref: ReferenceEngine, vocab: list[bytes], merge: tuple[bytes, bytes]) -> None:
    """Apply a merge given as bytes (a pair of tokens of ``vocab``) to ``ref``."""
    a, b = vocab.index(merge[0]), vocab.index(merge[1])
    vocab.append(merge[0] + merge[1])
    ref.merge(a, b, len(vocab) - 1)


def _pair_count(ref: ReferenceEngine, vocab: list[bytes], merge) -> int:
    ids = {v: i for i, v in enumerate(vocab)}
    return ref.pair_counts().get((ids.get(merge[0], -1), ids.get(merge[1], -1)), 0)


# ---------------------------------------------------------------- rungs 1-3: BPE


def check_bpe_training(train: Callable, counts: Counter | None = None, num_merges: int = 8) -> Check:
    """Rung 1: ``train(word_counts: dict[str, int], num_merges) -> [(bytes, bytes), ...]`` learns
    the most frequent pair at every merge (ties: any of the tied pairs)."""
    counts = Counter({w: n for c in bpe.TOY.values() for w, n in c.items()}) if counts is None else counts
    merges, error = _call(train, dict(counts), num_merges)
    if error:
        return Check(1, False, error)
    ref, vocab = ReferenceEngine({"all": counts}), [bytes([b]) for b in range(256)]
    for i, merge in enumerate(list(merges)):
        pairs = ref.pair_counts()
        if not pairs:
            return Check(1, False, f"merge {i + 1}: yours {merge!r}, but no pair is left")
        if reason := _invalid(vocab, merge):
            return Check(1, False, f"merge {i + 1}: {reason}")
        top = max(pairs.values())
        best = [(vocab[a], vocab[b]) for a, b in ref.tied_pairs()]
        if merge not in best:
            return Check(
                1,
                False,
                f"merge {i + 1}: yours {merge!r} occurs {_pair_count(ref, vocab, merge)} times, expected "
                f"{' or '.join(map(repr, best))} ({top} times, the most frequent)",
            )
        _replay(ref, vocab, merge)
    if len(merges) > num_merges:
        return Check(1, False, f"{len(merges)} merges, {num_merges} asked for")
    if len(merges) < num_merges and ref.pair_counts():
        a, b, n = ref.best_pair()
        return Check(
            1,
            False,
            f"{len(merges)} merges, {num_merges} asked for: the next would be "
            f"{(vocab[a], vocab[b])!r} ({n} times)",
        )
    return Check(1, True, f"{len(merges)} merges, each the most frequent pair at its step")


def check_engine_match(train: Callable, seed: int = 0, trials: int = TRIALS, num_merges: int = 10) -> Check:
    """Rung 2: the same ``train`` gives modtok's merges exactly (tie-break: the 256 bytes by the
    code point of their byte-level character, GPT-2's ``bytes_to_unicode``, then merged tokens
    in the order they were made) on ``trials`` random corpora of ``seed``."""
    rng = random.Random(seed)
    for trial in range(trials):
        counts = _corpus(rng)
        model = standard.train(counts, 256 + num_merges, scheme="whitespace")
        expected = [(model.vocab[a], model.vocab[b]) for a, b in model.merges]
        merges, error = _call(train, dict(counts), num_merges)
        if error:
            return Check(2, False, f"corpus {trial} {dict(counts)}: {error}")
        merges = list(merges)
        ref, vocab = ReferenceEngine({"all": counts}), [bytes([b]) for b in range(256)]
        for i, (mine, want) in enumerate(zip(merges, expected)):
            if reason := _invalid(vocab, mine):
                return Check(2, False, f"corpus {trial} {dict(counts)}, merge {i + 1}: {reason}")
            if mine != want:
                return Check(
                    2,
                    False,
                    f"corpus {trial} {dict(counts)}, merge {i + 1}: yours {mine!r} "
                    f"({_pair_count(ref, vocab, mine)} times), expected {want!r} "
                    f"({_pair_count(ref, vocab, want)} times)",
                )
            _replay(ref, vocab, want)
        if len(merges) != len(expected):
            return Check(
                2, False, f"corpus {trial} {dict(counts)}: {len(merges)} merges, expected {len(expected)}"
            )
    return Check(2, True, f"{trials} random corpora, every merge as modtok's engine makes it")


@cache
def llama3_ranks() -> dict[bytes, int]:
    """Llama-3's tokens as ``{bytes: id}``: the id is also the merge priority (tiktoken's rank)."""
    vocab = deployed.load_json("llama3")["model"]["vocab"]
    return {from_byte_level(token): i for token, i in vocab.items()}


def udhr_lines(
    langs=("eng_Latn", "hin_Deva", "zho_Hans", "arb_Arab"), per_language: int = 2
) -> list[tuple[str, str]]:
    """``(language, line)`` from the installed UDHR (:mod:`modtok.text.udhr`)."""
    udhr.require()
    loaded = udhr.eval_set(list(langs)).load(max_lines=per_language)
    return [(lang, line) for lang in langs for line in loaded[lang]]


def check_encode(encode: Callable, lines: list[tuple[str, str]] | None = None) -> Check:
    """Rung 3: ``encode(text, ranks: dict[bytes, int], pattern: str) -> [ids]`` gives Llama-3's ids
    (pre-tokens by the regex ``pattern``; a pre-token that is a token is that token, Llama-3's
    ``ignore_merges``; else merge the adjacent pair whose joined bytes have the lowest rank until
    none is in ``ranks``) on UDHR lines (offline: the shipped tokenizer)."""
    try:
        tok = deployed.load("llama3")
        lines = udhr_lines() if lines is None else lines
    except MissingPackageError as e:  # said, not hidden: without Llama-3 or the lines there is no check
        return Check(3, False, f"cannot check here: {e}")
    ranks, regex = llama3_ranks(), pattern("llama3")
    by_id = {i: t for t, i in ranks.items()}
    for n, (lang, line) in enumerate(lines):
        want = tok.encode(line, add_special_tokens=False).ids
        mine, error = _call(encode, line, ranks, regex)
        if error:
            return Check(3, False, f"line {n} ({lang}): {error}")
        mine = list(mine)
        for i, (a, b) in enumerate(zip(mine, want)):
            if a != b:
                return Check(
                    3,
                    False,
                    f"line {n} ({lang}) {line[:40]!r}…, token {i}: yours {a} "
                    f"({by_id.get(a)!r}), expected {b} ({by_id[b]!r})",
                )
        if len(mine) != len(want):
            return Check(3, False, f"line {n} ({lang}): {len(mine)} ids, expected {len(want)}")
    return Check(
        3,
        True,
        f"{len(lines)} UDHR lines in {len({lang for lang, _ in lines})} scripts, every id as Llama-3's",
    )


# ---------------------------------------------------------------- rung 4: Algorithm 2


def algorithm2_states(seed: int = 0, trials: int = 4) -> list[dict]:
    """The states Algorithm 2 decided on: the lessons' toys, then random ones of ``seed``."""
    rng = random.Random(seed)
    toys = [
        (sequential.TOY, sequential.K),
        (sequential.UNION_TOY, sequential.UNION_K),
        (subtokenizers.TOY, 262),
    ]
    toys += [({lang: _corpus(rng) for lang in ("x", "y", "z")}, 262) for _ in range(trials)]
    return [r for toy, k in toys for r in sequential.reference(toy, k)["steps"]]


def check_algorithm2(choose: Callable, seed: int = 0) -> Check:
    """Rung 4: ``choose(token_counts, pair_counts, vocab) -> ("reuse", token) | ("merge", pair)``:
    f_u = the count of the most frequent token not in ``vocab`` (V_i), f_b = the count of the
    most frequent pair; reuse the token if f_u >= f_b, else merge the pair."""
    states = algorithm2_states(seed)
    for n, r in enumerate(states):
        s = r["state"]
        mine, error = _call(choose, dict(s["tokens"]), dict(s["pairs"]), set(s["vocab"]))
        if error:
            return Check(4, False, f"state {n}: {error}")
        if mine != r["answer"]:
            return Check(
                4,
                False,
                f"state {n} (language {r['lang']}; f_u = {r['f_u']} for {r['unigram']!r}, "
                f"f_b = {r['f_b']} for {r['bigram']!r}): yours {mine!r}, expected {r['answer']!r}",
            )
    return Check(4, True, f"{len(states)} decisions of Algorithm 2, each as the paper's rule makes it")


# ---------------------------------------------------------------- rungs 5-6: Unigram


def unigram_cases(seed: int = 0, trials: int = TRIALS) -> list[tuple[str, dict]]:
    """``(text, vocab)``: the lesson's toy, then random vocabularies over ``abc`` (every
    character a piece, scores with no ties)."""
    rng = random.Random(seed)
    cases = [(unigram.WORD, dict(unigram.VOCAB))]
    for _ in range(trials):
        pieces = {"a", "b", "c"} | {
            "".join(rng.choice("abc") for _ in range(rng.randint(2, 3))) for _ in range(5)
        }
        vocab = {p: round(-rng.uniform(0.5, 4.0), 3) for p in sorted(pieces)}
        cases.append(("".join(rng.choice("abc") for _ in range(rng.randint(3, 8))), vocab))
    return cases


def _score(path, vocab) -> float | None:
    return round(sum(vocab[p] for p in path), 6) if all(p in vocab for p in path) else None


def check_viterbi(viterbi: Callable, seed: int = 0) -> Check:
    """Rung 5: ``viterbi(text, vocab: dict[piece, log p]) -> [pieces]``, the best segmentation."""
    cases = unigram_cases(seed)
    for text, vocab in cases:
        want = uni_ref.viterbi(text, vocab, unigram.UNK)
        mine, error = _call(viterbi, text, dict(vocab))
        if error:
            return Check(5, False, error)
        mine = list(mine)
        if "".join(p for p in mine if isinstance(p, str)) != text or _score(mine, vocab) is None:
            return Check(5, False, f"{text!r}: yours {mine} does not spell it with pieces of the vocabulary")
        if mine != want:
            return Check(
                5,
                False,
                f"{text!r}: yours {mine} scores {_score(mine, vocab)}, expected {want} "
                f"scores {_score(want, vocab)}",
            )
    return Check(5, True, f"{len(cases)} lattices, every best path found")


def check_em_step(em_step: Callable, seed: int = 0, tol: float = 1e-6) -> Check:
    """Rung 6: ``em_step(corpus: dict[word, count], vocab: dict[piece, log p]) -> new log p``:
    expected counts by forward-backward, summed over the corpus, divided by their total."""
    rng = random.Random(seed)
    cases = [(dict(unigram.CORPUS), dict(unigram.VOCAB))]
    cases += [
        ({text: rng.randint(1, 4), text[::-1]: rng.randint(1, 4)}, vocab)
        for text, vocab in unigram_cases(seed)[1:]
    ]
    for corpus, vocab in cases:
        _, totals, want = unigram.em_step(corpus, vocab)
        mine, error = _call(em_step, dict(corpus), dict(vocab))
        if error:
            return Check(6, False, error)
        z = sum(totals.values())
        for piece, logp in want.items():
            got = mine.get(piece) if isinstance(mine, dict) else None
            if got is None or not math.isclose(got, logp, rel_tol=tol, abs_tol=tol):
                return Check(
                    6,
                    False,
                    f"corpus {corpus}, piece {piece!r}: yours {got}, expected {logp:.6f} "
                    f"(expected count {totals[piece]:.4f} of {z:.4f})",
                )
    return Check(6, True, f"{len(cases)} EM steps, every new log-probability within {tol}")


# ---------------------------------------------------------------- rung 7: parity-aware BPE


def parity_states(seed: int = 0, trials: int = 5) -> list[dict]:
    """The states of parity-aware choices: the lesson's toy, then random ones of ``seed``."""
    rng = random.Random(seed)
    runs = [parity.reference()]
    for _ in range(trials):
        train = {lang: _corpus(rng) for lang in ("x", "y", "z")}
        dev = {lang: Counter(dict(list(c.items())[:3])) for lang, c in train.items()}
        runs.append(parity.reference(train, dev, 4))
    out = []
    for run in runs:
        vocab = run["model"].vocab
        for s in run["steps"]:
            out.append(
                {
                    "costs": s["costs"],
                    "answer": (s["chosen"], (vocab[s["pair"][0]], vocab[s["pair"][1]])),
                    "pairs": {
                        lang: {(vocab[a], vocab[b]): n for (a, b), n in c.items()}
                        for lang, c in s["pair_counts"].items()
                    },
                }
            )
    return out


def check_parity_choice(choose: Callable, seed: int = 0) -> Check:
    """Rung 7: ``choose(dev_costs: dict[lang, tokens], pair_counts: dict[lang, dict[pair, count]])
    -> (lang, pair)``: the costliest language on the dev text that has a pair occurring at least
    twice (the next costliest otherwise), and its most frequent pair."""
    states = parity_states(seed)
    for n, s in enumerate(states):
        mine, error = _call(choose, dict(s["costs"]), {lang: dict(c) for lang, c in s["pairs"].items()})
        if error:
            return Check(7, False, f"state {n}: {error}")
        if mine != s["answer"]:
            return Check(
                7, False, f"state {n} (dev costs {s['costs']}): yours {mine!r}, expected {s['answer']!r}"
            )
    return Check(
        7, True, f"{len(states)} parity-aware merges, each for the language and pair the method picks"
    )


CHECKERS = {
    1: check_bpe_training,
    2: check_engine_match,
    3: check_encode,
    4: check_algorithm2,
    5: check_viterbi,
    6: check_em_step,
    7: check_parity_choice,
}
