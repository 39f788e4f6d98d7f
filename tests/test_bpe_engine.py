"""Merge engine and standard BPE: hand oracles, fast-vs-naive differential, HF cross-check."""

from __future__ import annotations

import json
import random
from collections import Counter

import numpy as np
import pytest

from modtok.bpe import standard
from modtok.bpe.engine import Engine, byte_ranks
from modtok.errors import BudgetError
from modtok.export import token_string
from modtok.pretokenize import hf_pre_tokenizer


def naive_pairs(segs: dict[tuple, int]) -> Counter:
    out: Counter = Counter()
    for seg, n in segs.items():
        for p in zip(seg, seg[1:]):
            out[p] += n
    return out


def naive_merge(seg: tuple, a: int, b: int, c: int) -> tuple:
    out, i = [], 0
    while i < len(seg):
        if i + 1 < len(seg) and seg[i] == a and seg[i + 1] == b:
            out.append(c)
            i += 2
        else:
            out.append(seg[i])
            i += 1
    return tuple(out)


def test_hand_oracle_overlaps():
    """"aaaa" x3 + "aaa" x1: pairs (a,a) = 3*3 + 2 = 11. Merging left to right gives
    [aa, aa] (x3) and [aa, a] (x1): (aa,aa) = 3, (aa,a) = 1; token counts aa = 7, a = 1."""
    eng = Engine.from_counts({"x": Counter({"aaaa": 3, "aaa": 1})})
    assert eng.best_pair() == (97, 97, 11)
    assert eng.merge(97, 97, 256) == 7
    assert eng.pair_counts() == {(256, 256): 3, (256, 97): 1}
    assert eng.token_counts()[256] == 7 and eng.token_counts()[97] == 1


def test_per_language_counts_hand_oracle():
    """"ab" is 2x in x and 3x in y; "abab" once in y: (a,b) = 2 + 3 + 2 = 7, of which y 5."""
    eng = Engine.from_counts(
        {"x": Counter({"ab": 2}), "y": Counter({"ab": 3, "abab": 1})},
        pair_counts_per_language=True,
    )
    assert eng.pair_count(97, 98) == 7
    assert eng.pair_count(97, 98, "x") == 2 and eng.pair_count(97, 98, "y") == 5
    eng.merge(97, 98, 256)
    assert eng.token_counts("y")[256] == 5 and eng.token_counts("x")[256] == 2
    assert eng.pair_count(256, 256, "y") == 1 and eng.pair_count(256, 256, "x") == 0


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_differential_against_naive_recount(seed):
    """After every merge, the engine's pair counts, per-language pair counts and token
    counts equal a from-scratch recount of naively merged words."""
    rng = random.Random(seed)
    alphabet = "abcab é"
    corpus = {
        lang: Counter("".join(rng.choice(alphabet) for _ in range(rng.randint(1, 9))) for _ in range(60))
        for lang in ("x", "y")
    }
    eng = Engine.from_counts(corpus, pair_counts_per_language=True)
    segs = {lang: {tuple(w.encode()): n for w, n in c.items()} for lang, c in corpus.items()}
    c = 256
    for _ in range(25):
        best = eng.best_pair()
        total = naive_pairs(segs["x"]) + naive_pairs(segs["y"])
        if best is None:
            assert not total
            break
        a, b, n = best
        top = max(total.values())
        assert n == top == total[(a, b)]
        rank = byte_ranks()
        rk = lambda t: rank[t] if t < 256 else t  # noqa: E731
        ties = sorted((rk(x), rk(y)) for (x, y), m in total.items() if m == top)
        assert (rk(a), rk(b)) == ties[0]
        eng.merge(a, b, c)
        segs = {lang: _remerge(d, a, b, c) for lang, d in segs.items()}
        total = naive_pairs(segs["x"]) + naive_pairs(segs["y"])
        assert eng.pair_counts() == {p: m for p, m in total.items() if m > 0}
        for lang in ("x", "y"):
            per = naive_pairs(segs[lang])
            for p, m in per.items():
                assert eng.pair_count(*p, lang=lang) == m
            tok = Counter()
            for s, m in segs[lang].items():
                for t in s:
                    tok[t] += m
            counts = eng.token_counts(lang)
            assert {t: int(counts[t]) for t in np.flatnonzero(counts)} == dict(tok)
        c += 1


def _remerge(d: dict, a: int, b: int, c: int) -> dict:
    out: Counter = Counter()
    for s, n in d.items():
        out[naive_merge(s, a, b, c)] += n
    return dict(out)


def test_budget_below_alphabet():
    with pytest.raises(BudgetError, match="255"):
        standard.train(Counter({"ab": 1}), 255)


def _hf_merges(lines, vocab_size, scheme):
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = hf_pre_tokenizer(scheme)
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False
    )
    tok.train_from_iterator(lines, trainer)
    return [tuple(m) for m in json.loads(tok.to_str())["model"]["merges"]]


def _our_merges(lines, vocab_size, scheme):
    m = standard.train_from_lines(lines, vocab_size, scheme)
    return [(token_string(m.vocab[a]), token_string(m.vocab[b])) for a, b in m.merges]


def test_identical_to_hf_on_tie_free_toy():
    """hugs x8, hug x3, pug x4, bun x2, hun x1. Pair counts, hand-derived, strictly ordered at
    every step: (u,g)=15; (h,ug)=11; (hug,s)=8; (p,ug)=4; (u,n)=3; (b,un)=2; (h,un)=1."""
    lines = ["hugs"] * 8 + ["hug"] * 3 + ["pug"] * 4 + ["bun"] * 2 + ["hun"]
    expected = [("u", "g"), ("h", "ug"), ("hug", "s"), ("p", "ug"), ("u", "n"), ("b", "un"), ("h", "un")]
    assert _our_merges(lines, 263, "whitespace") == expected
    assert _hf_merges(lines, 263, "whitespace") == expected


def test_identical_to_hf_on_real_text_with_ties(pool_root):
    """Same pre-token counts -> same merges as HF BpeTrainer, ties included (the tie-break
    reproduces HF's id order); 3 languages, 120k chars each, vocab 1200."""
    from modtok import data

    pool = data.load_pool(["eng_Latn", "rus_Cyrl", "npi_Deva"], root=pool_root, max_chars=120_000)
    lines = [line for lines in pool.values() for line in lines]
    assert _our_merges(lines, 1200, "llama3") == _hf_merges(lines, 1200, "llama3")
