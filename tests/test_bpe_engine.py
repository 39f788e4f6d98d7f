"""Merge engine and standard BPE: hand oracles, engine-vs-reference differential, HF cross-check."""

from __future__ import annotations

import json
import random
from collections import Counter
from itertools import pairwise

import numpy as np
import pytest

from modtok.artifacts.baselines import train_hf_bpe
from modtok.bpe import kernels as K
from modtok.bpe import reference, standard
from modtok.bpe.engine import Engine
from modtok.bpe.model import BPEModel
from modtok.bpe.reference import ReferenceEngine, as_dict
from modtok.errors import BudgetError, UnknownLanguageError, UsageError
from modtok.text.pretokenize import byte_level


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


def _random_corpus(seed: int, langs=("x", "y", "z")) -> dict[str, Counter]:
    rng = random.Random(seed)
    alphabet = "abcab é"
    return {
        lang: Counter("".join(rng.choice(alphabet) for _ in range(rng.randint(1, 9))) for _ in range(60))
        for lang in langs
    }


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_differential_against_reference(seed):
    """Driven merge for merge, the engine answers every public question exactly as the
    naive reference (which recounts from scratch): best pair and ties overall and per
    language, pair counts, token counts and token totals per language."""
    corpus = _random_corpus(seed)
    eng = Engine.from_counts(corpus, pair_counts_per_language=True)
    ref = ReferenceEngine(corpus)
    c = 256
    for step in range(40):
        for lg in (None, "x", "y", "z"):
            assert eng.best_pair(lg) == ref.best_pair(lg)
            assert eng.tied_pairs(lg) == ref.tied_pairs(lg)
            assert eng.pair_counts(lg) == ref.pair_counts(lg)
            assert as_dict(eng.token_counts(lg)) == as_dict(ref.token_counts(lg))
            assert eng.num_tokens(lg) == ref.num_tokens(lg)
        lang = [None, "x", "y", "z"][step % 4]  # pick like a per-language policy would
        best = ref.best_pair(lang)
        if best is None:
            break
        a, b, _ = best
        assert eng.merge(a, b, c) == ref.merge(a, b, c)
        c += 1


@pytest.mark.parametrize("seed", [0, 1])
def test_tracked_columns_are_segmented_and_in_no_statistic(seed):
    """Dev words as tracked columns (parity-aware BPE): merge for merge, the engine's
    statistics equal those of an engine without them, and the tracked totals equal the
    token totals of a separate engine over the tracked words alone. Some tracked words
    are not training words (they enter with count 0)."""
    corpus, dev = _random_corpus(seed), _random_corpus(seed + 100, langs=("x", "y"))
    dev["y"]["zzzé"] += 3  # only in the tracked column
    both = Engine.from_counts(corpus, tracked=dev, pair_counts_per_language=True)
    plain = Engine.from_counts(corpus, pair_counts_per_language=True)
    alone = Engine.from_counts(dev)
    c = 256
    for step in range(40):
        assert both.tracked_totals().tolist() == alone.token_totals().tolist()
        assert both.token_totals().tolist() == plain.token_totals().tolist()
        for lg in (None, "x", "z"):
            assert both.best_pair(lg) == plain.best_pair(lg)
            assert both.pair_counts(lg) == plain.pair_counts(lg)
        best = plain.best_pair(["x", None, "z"][step % 3])
        if best is None:
            break
        a, b, _ = best
        assert both.merge(a, b, c) == plain.merge(a, b, c)
        alone.merge(a, b, c)
        c += 1
    assert step > 10


def test_tied_pairs_hand_oracle():
    """"ab" x2, "cd" x2, "ef" x1: (a,b) and (c,d) tie at 2 and come in byte-rank order."""
    eng = Engine.from_counts({"x": Counter({"ab": 2, "cd": 2, "ef": 1})})
    assert eng.tied_pairs() == [(97, 98), (99, 100)]
    eng.merge(97, 98, 256)
    assert eng.tied_pairs() == [(99, 100)] and eng.best_pair() == (99, 100, 2)


def test_per_language_needs_the_option_and_a_known_language():
    eng = Engine.from_counts({"x": Counter({"ab": 2})})
    with pytest.raises(UsageError, match="pair_counts_per_language"):
        eng.best_pair("x")
    with pytest.raises(UnknownLanguageError, match="'q'"):
        eng.token_counts("q")


def test_standard_bpe_equals_reference_trainer():
    """standard.train (engine) and reference.train (naive recount) learn the same merges."""
    corpus = _random_corpus(7)
    merged: Counter = Counter()
    for c in corpus.values():
        merged.update(c)
    assert standard.train(merged, 290).merges == reference.train(ReferenceEngine(corpus), 290).merges


def test_budget_below_alphabet():
    with pytest.raises(BudgetError, match="255"):
        standard.train(Counter({"ab": 1}), 255)


def _hf_merges(lines, vocab_size, scheme):
    tok = train_hf_bpe(lines, vocab_size, scheme, min_frequency=0)
    return [tuple(m) for m in json.loads(tok.to_str())["model"]["merges"]]


def _our_merges(lines, vocab_size, scheme):
    m = standard.train_from_lines(lines, vocab_size, scheme)
    return [(byte_level(m.vocab[a]), byte_level(m.vocab[b])) for a, b in m.merges]


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
    from modtok.text import data

    pool = data.load_pool(["eng_Latn", "rus_Cyrl", "npi_Deva"], root=pool_root, max_chars=120_000)
    lines = [line for lines in pool.values() for line in lines]
    assert _our_merges(lines, 1200, "llama3") == _hf_merges(lines, 1200, "llama3")


def test_occurrence_lists_grow_while_merging():
    """Many short lists (a pair per word) and a few long ones: the list chunks outgrow
    what the engine reserves up front, during counting and during merges, and the engine
    still answers exactly as the naive reference."""
    chars = "abcdefghijklmnopqrstuvwxyz0123456789"
    corpus = {"x": Counter({f"@#{p}{q}": 1 + (ord(p) + ord(q)) % 3 for p in chars for q in chars[:18]}),
              "y": Counter({f"{q}@#{p}": 2 for p in chars[:12] for q in chars})}
    eng = Engine.from_counts(corpus, pair_counts_per_language=True)
    ref = ReferenceEngine(corpus)
    start = eng._pairs.chunks.shape[0]
    c = 256
    for lang in [None, "x", "y"] * 4:
        assert eng.best_pair(lang) == ref.best_pair(lang)
        a, b, _ = ref.best_pair(lang)
        assert eng.merge(a, b, c) == ref.merge(a, b, c)
        assert eng.pair_counts(lang) == ref.pair_counts(lang) and eng.num_tokens(lang) == ref.num_tokens(lang)
        c += 1
    assert eng._pairs.chunks.shape[0] > start  # the growth path ran


def test_total_heap_can_be_off():
    """Without the heap of total counts the per-language answers and every count stay
    exact; asking for the overall best pair is then an error, not a stale answer."""
    corpus = _random_corpus(3)
    off = Engine.from_counts(corpus, pair_counts_per_language=True, total_best=False)
    on = Engine.from_counts(corpus, pair_counts_per_language=True)
    c = 256
    for step in range(30):
        lang = "xyz"[step % 3]
        assert off.best_pair(lang) == on.best_pair(lang) and off.tied_pairs(lang) == on.tied_pairs(lang)
        assert off.pair_counts() == on.pair_counts() and off.pair_counts(lang) == on.pair_counts(lang)
        a, b, _ = on.best_pair(lang)
        assert off.merge(a, b, c) == on.merge(a, b, c)
        c += 1
    with pytest.raises(UsageError, match="total counts is off"):
        off.best_pair()
    on.stop_total_best()
    with pytest.raises(UsageError, match="total counts is off"):
        on.tied_pairs()
    assert on.pair_count(*on.best_pair("x")[:2]) == off.pair_count(*off.best_pair("x")[:2])


def test_constructor_arguments_that_disagree():
    with pytest.raises(UsageError, match="1 words but counts has 2 rows"):
        Engine([b"ab"], np.ones((2, 1), np.int64))
    with pytest.raises(UsageError, match="2 languages but counts has 1 columns"):
        Engine([b"ab"], np.ones((1, 1), np.int64), languages=["x", "y"])
    with pytest.raises(UsageError, match=r"tracked counts must have shape \(1, D\)"):
        Engine([b"ab"], np.ones((1, 1), np.int64), tracked=np.ones((2, 1), np.int64))
    with pytest.raises(UsageError, match="lengths add up to 3 bytes but their data has 2"):
        Engine((np.frombuffer(b"ab", np.uint8), np.array([3])), np.ones((1, 1), np.int64))


@pytest.mark.parametrize("seed", range(5))
def test_merge_word_changes_are_the_pair_difference(seed):
    """The rewrite alone (no statistics): the word equals the naive left-to-right
    rewrite, and the pair multiset of the old word plus the reported changes is the
    pair multiset of the new word: except the merged pair (a, b) itself, which the
    engine zeroes (the new word has none of it; with a == b a change may hit it)."""
    rng = random.Random(seed)
    for _ in range(200):
        word = [rng.choice([1, 2, 3]) for _ in range(rng.randint(1, 12))]
        a, b, c = rng.choice([1, 2, 3]), rng.choice([1, 2, 3]), 9
        expected, i = [], 0
        while i < len(word):
            if word[i : i + 2] == [a, b]:
                expected.append(c)
                i += 2
            else:
                expected.append(word[i])
                i += 1
        sym = np.array([7, *word, 7], np.int32)  # padded: the rewrite stays inside its word
        # the changes go after a chunk's earlier ones (3 here), which stay as they were
        keys, deltas = np.full(3 + 2 * len(word), -5, np.int64), np.full(3 + 2 * len(word), -5, np.int64)
        n, occurrences, end = K.merge_word(sym, 1, len(word), a, b, c, keys, deltas, 3)
        assert sym[1 : 1 + n].tolist() == expected and sym[0] == 7 and sym[-1] == 7
        assert occurrences == (len(word) - n) and end - 3 <= 2 * len(word)
        assert keys[:3].tolist() == deltas[:3].tolist() == [-5, -5, -5]
        pairs = Counter(pairwise(word))
        for key, d in zip(keys[3:end].tolist(), deltas[3:end].tolist()):
            pairs[(key >> K.KEY_SHIFT, key & 0xFFFFFFFF)] += d
        del pairs[(a, b)]
        assert (a, b) not in pairwise(expected) and min(pairs.values(), default=0) >= 0
        assert +pairs == Counter(pairwise(expected))


def _one_merge_at_a_time(engine, model, vocab_size):
    """The loop standard.learn ran before issue 44: one Python round-trip per merge."""
    while len(model) < vocab_size and (best := engine.best_pair()) is not None:
        engine.merge(best[0], best[1], model.add_merge(best[0], best[1]))
    return model


@pytest.mark.parametrize("batch", [1, 3, 4096])
def test_greedy_loop_equals_one_merge_at_a_time(batch):
    """standard.learn runs the loop in the kernel (K.merge_greedy): the same merges and
    output ids as one merge per Python call, whatever the batch (standard.BATCH: 1 and 3
    make many FULL returns), on a model whose strings the learning meets again: the
    model has 'abc' as ab+c, the engine's words hold a+bc, so learning a+bc is a CHECK
    that gets the existing id."""
    base = [(98, 99), (97, 98), (257, 99)]  # bc, ab, ab+c = 'abc'
    corpus = {"x": Counter({"abc": 30, "cabcd": 7, "dcbc": 5, "bcbcd": 4, "ddc": 3, "cad": 2, "dacd": 2})}

    def engine():  # words encoded with bc only: 'abc' is a, bc
        return Engine.from_counts(corpus, merges=[(98, 99)], results=[256], capacity=300)

    ours, theirs = BPEModel(base, "whitespace"), BPEModel(base, "whitespace")
    monkey = pytest.MonkeyPatch()
    monkey.setattr(standard, "BATCH", batch)
    try:
        standard.learn(engine(), ours, 300)
    finally:
        monkey.undo()
    _one_merge_at_a_time(engine(), theirs, 300)
    assert ours.merges == theirs.merges and ours.results == theirs.results
    assert ours.merges[3] == (97, 256) and ours.results[3] == 258  # a+bc: the existing 'abc'
    assert len(ours.merges) > 3 + 1


def test_greedy_loop_after_a_hash_collision():
    """A string hash found in the table is only a candidate: after K.CHECK the caller
    decides; a string that is new after all (a collision, forced here by a false table
    entry for 'ab') gets the next id, and later hashes build on its own."""
    strings = K.strings_of(np.zeros(0, np.int64), np.zeros(0, np.int64), 260)
    truth = K.strings_of(np.array([97, 256]), np.array([98, 99]), 260)  # ab, abc
    key_ab = K.string_key(truth.hash[256])
    K.table_put(strings.table_keys, strings.table_ids, key_ab, 7)  # 'ab' claims to be id 7
    eng, out = Engine.from_counts({"x": Counter({"abc": 3})}), np.zeros((4, 3), np.int64)
    n, why = eng.merge_greedy(strings, 256, 260, 1, out)
    assert (n, why, out[0].tolist()) == (0, K.CHECK, [97, 98, -1])
    n, why = eng.merge_greedy(strings, 256, 260, 1, out, forced=256)
    assert out[:n].tolist() == [[97, 98, 256], [256, 99, 257]] and why == K.NO_PAIR
    assert strings.hash[257] == truth.hash[257] and strings.power[257] == truth.power[257]
    assert eng.segmentation(0) == [257]


def test_string_keys_of_every_two_byte_string_differ():
    """No two of the 65,536 two-byte strings share a table key (a shared key is no error,
    only a hand-back to Python, but a weak key made one every few merges: keys shifted
    right paired 'ab' with the string one byte value up)."""
    a, b = np.divmod(np.arange(65536, dtype=np.int64), 256)
    strings = K.strings_of(a, b, 256 + 65536)
    keys = {int(K.string_key(h)) for h in strings.hash[256:]}
    assert len(keys) == 65536


@pytest.mark.parametrize("seed", range(4))
def test_an_engine_over_some_languages_of_word_arrays_is_the_one_over_their_counters(seed):
    """Engine.from_word_counts(wc, languages=...) keeps the words of those columns and gathers their
    bytes (K.gather_words): the engine of the same languages' Counters, merge for merge, whatever
    columns are picked and in whatever order."""
    from modtok.text.pretokenize import count_arrays, count_pretokens

    rng = random.Random(seed)
    alphabet = ["ab", "ba", "abc", "ça", "né", "日本", "ab,", "c"]
    corpus = {lang: [" ".join(rng.choice(alphabet[i:]) for _ in range(rng.randint(1, 8))) for _ in range(40)]
              for i, lang in enumerate(("x", "y", "z"))}
    wc = count_arrays(corpus, "whitespace")
    for langs in (["y"], ["z", "x"], ["x", "y", "z"]):
        arrays = Engine.from_word_counts(wc, languages=langs)
        counters = Engine.from_counts({lang: Counter(count_pretokens(corpus[lang], "whitespace")) for lang in langs})
        assert [arrays.num_tokens(lang) for lang in langs] == [counters.num_tokens(lang) for lang in langs]
        merges = [standard.learn(e, BPEModel([], "whitespace"), 290).merges for e in (arrays, counters)]
        assert merges[0] == merges[1] and len(merges[0]) > 10
