"""BPE model properness, continued / sequential / concatenated policies."""

from __future__ import annotations

import copy
import random
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from modtok.bpe import standard
from modtok.bpe.concat import train_concat
from modtok.bpe.continued import continue_training
from modtok.bpe.engine import Engine
from modtok.bpe.export import hf_tokenizer
from modtok.bpe.model import BPEModel
from modtok.bpe.sequential import train_sequential
from modtok.errors import BudgetError, MergeListError, UnknownLanguageError
from modtok.text import data
from modtok.text.lexer import WordCounts
from modtok.text.pretokenize import count_by_language, count_pretokens

LANGS = ["eng_Latn", "deu_Latn", "rus_Cyrl", "npi_Deva"]


@pytest.fixture(scope="module")
def counts(pool_root):
    pool = data.load_pool(LANGS, root=pool_root, max_chars=150_000)
    return count_by_language(pool, "llama3", workers=1)


@pytest.fixture(scope="module")
def seq(counts):
    return train_sequential(counts, 700)


def test_improper_merge_lists():
    with pytest.raises(MergeListError, match="merge 0 .*part 256"):
        BPEModel([(256, 97)])  # uses an output that does not exist yet
    with pytest.raises(MergeListError, match="merge 1 .*part 258"):
        BPEModel([(97, 98), (258, 97), (256, 99)])  # cycle-like forward reference
    with pytest.raises(MergeListError, match="repeats merge 0"):
        BPEModel([(97, 98), (97, 98)])


def test_duplicate_output_keeps_first_id():
    """ab+c and a+bc both make "abc": one token (id 258), two merges."""
    m = BPEModel([(97, 98), (256, 99), (98, 99), (97, 258)])
    assert [m.vocab[i] for i in range(256, len(m))] == [b"ab", b"abc", b"bc"]
    assert m.results == [256, 257, 258, 257]
    assert m.encode_bytes(b"abc") == [257]


def _state(m: BPEModel) -> tuple:
    return m.merges, m.results, m.vocab, m.parents, m.ranks, {t: m.id_of(t) for t in m.vocab}


def _one_by_one(m: BPEModel, merges) -> tuple[list[int], str | None]:
    """``add_merge`` a merge at a time: the ids, and the first error's message (or None)."""
    ids = []
    try:
        for a, b in merges:
            ids.append(m.add_merge(a, b))
    except MergeListError as e:
        return ids, str(e)
    return ids, None


# Parts drawn near the ids that exist: bytes a b c, the first outputs, an id just made or
# not made yet, a negative one; lists that make a string twice (ab+c after a+bc) and
# repeat pairs, of the model's or their own.
_part = st.one_of(st.sampled_from([97, 98, 99, 256, 257]), st.integers(-1, 266))


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(_part, _part), max_size=10), st.booleans())
def test_extend_equals_add_merge_one_by_one(merges, as_array):
    """``extend`` = ``add_merge`` per merge: same ids, vocab, parents, ranks and results;
    on bad input the same first error, and the model as it was before the call."""
    start = [(97, 98), (98, 99)]  # ab, bc: a list with (256, 99) / (97, 257) makes abc twice
    one, bulk = BPEModel(start), BPEModel(start)
    ids, error = _one_by_one(one, merges)
    before = copy.deepcopy(_state(bulk))
    arg = np.array(merges, np.int64).reshape(-1, 2) if as_array else merges
    if error is None:
        assert bulk.extend(arg) == ids
        assert _state(bulk) == _state(one)
    else:
        with pytest.raises(MergeListError) as e:
            bulk.extend(arg)
        assert str(e.value) == error
        assert _state(bulk) == before


def test_extend_records_an_existing_string_with_its_id():
    """a+bc after ab+c: the merge is recorded with abc's id, the vocabulary does not grow."""
    m = BPEModel([])
    assert m.extend([(97, 98), (256, 99), (98, 99), (97, 258)]) == [256, 257, 258, 257]
    assert len(m) == 259 and m.parents[257] == (256, 99)
    assert m.extend(np.array([[257, 100]])) == [259] and m.vocab[259] == b"abcd"
    with pytest.raises(MergeListError, match="shape"):
        m.extend(np.zeros((2, 3), np.int64))


def test_continued_keeps_every_original_id(counts, flores_root):
    """English BPE + 300 tokens learned on Nepali: original merges and ids are a prefix
    of the new model and every FLORES devtest English line encodes to the same ids."""
    base = standard.train(counts["eng_Latn"], 600, "llama3")
    ext = continue_training(base, counts["npi_Deva"], 300)
    assert len(ext) == 900
    assert ext.merges[: len(base.merges)] == base.merges
    assert ext.vocab[: len(base)] == base.vocab
    eng = data.load_flores(["eng_Latn"], root=flores_root)["eng_Latn"]
    old, new = hf_tokenizer(base), hf_tokenizer(ext)
    for a, b in zip(old.encode_batch(eng, add_special_tokens=False), new.encode_batch(eng, add_special_tokens=False)):
        assert a.ids == b.ids
    npi = data.load_flores(["npi_Deva"], root=flores_root)["npi_Deva"][:100]
    assert sum(len(e.ids) for e in new.encode_batch(npi)) < 0.8 * sum(len(e.ids) for e in old.encode_batch(npi))


def test_sequential_vocabularies_closed_and_within_budget(seq):
    model = seq.model
    for lang, ids in seq.lang_to_ids.items():
        vocab = set(ids)
        assert len(vocab) == 700, lang
        assert set(range(256)) <= vocab
        for t in vocab:
            assert model.ancestors(t) <= vocab, (lang, t)
    # later languages reuse earlier tokens: the global vocabulary is smaller than the sum
    assert len(model) < 256 + 4 * (700 - 256)


def test_sequential_first_language_is_monolingual_bpe(counts, seq):
    """Language 1 (the paper's alphabetical order by default: deu_Latn here) starts from bytes
    with an empty merge list: the unigram rule never fires (every token of its segmentation is
    in V_1), so it is standard BPE of size k."""
    first = sorted(LANGS)[0]
    assert list(seq.lang_to_ids)[0] == first  # training order
    mono = standard.train(counts[first], 700, "llama3")
    assert seq.model.merges[: len(mono.merges)] == mono.merges
    assert seq.lang_to_ids[first] == list(range(700))


def _sequential_one_step_at_a_time(counts_by_lang, k: dict) -> tuple[BPEModel, dict]:
    """Algorithm 2 as modtok.bpe.sequential's docstring writes it, one step per loop turn
    (the engine asked for the best pair, one ``Engine.merge`` per bigram): the loop before
    runs of bigrams went into the kernel (issue 44)."""
    model, lang_to_ids = BPEModel([], "llama3"), {}
    for lang in sorted(counts_by_lang):
        engine = Engine.from_counts({lang: counts_by_lang[lang]}, merges=model.merges, results=model.results)
        vocab = set(range(256))
        while len(vocab) < k[lang]:
            tc = engine.token_counts()
            outside = [t for t in range(len(model)) if t not in vocab and tc[t] > 0]
            t = min(outside, key=lambda t: (-tc[t], t), default=-1)
            t_count = int(tc[t]) if t >= 0 else 0
            best = engine.best_pair()
            p_count = best[2] if best else 0
            if t_count == 0 and p_count == 0:
                break
            if t_count >= p_count:
                missing = model.ancestors(t) - vocab
            else:
                a, b, _ = best
                missing = (model.ancestors(a) | model.ancestors(b)) - vocab
            if len(vocab) + len(missing) + (t_count < p_count) > k[lang]:
                break
            vocab |= missing
            if t_count < p_count:
                c = model.add_merge(a, b)
                engine.merge(a, b, c)
                vocab.add(c)
        lang_to_ids[lang] = sorted(vocab)
    return model, lang_to_ids


def test_sequential_equals_one_step_at_a_time_on_pool_text(counts):
    """train_sequential (bigrams in runs, Engine.merge_greedy) learns the merges, ids and
    sub-vocabularies of the one-step loop, on pool text with uneven budgets."""
    _same_as_one_step_at_a_time(counts, dict(zip(sorted(LANGS), [700, 1500, 400, 900])))


def test_sequential_equals_one_step_at_a_time_on_shared_words():
    """The same on three languages drawn from one small word list: later languages meet
    earlier tokens again and again (the unigram rule interleaves with the runs)."""
    rng = random.Random(1)
    words = ["".join(rng.choice("abcdefg") for _ in range(rng.randint(2, 9))) for _ in range(2000)]
    _same_as_one_step_at_a_time({lang: Counter(rng.choices(words, k=3000)) for lang in ("x", "y", "z")},
                                {"x": 500, "y": 700, "z": 900})


def _same_as_one_step_at_a_time(data_, k):
    """From Counters and from their arrays (WordCounts: per-language engines cut from one)."""
    model, ids = _sequential_one_step_at_a_time(data_, k)
    for counts in (data_, WordCounts.from_counters(data_)):
        res = train_sequential(counts, k)
        assert res.model.merges == model.merges and res.model.results == model.results
        assert res.lang_to_ids == ids


def test_random_unions_are_proper_and_match_reference(seq, flores_root):
    """For random language subsets, the HF subtokenizer equals the readable reference
    encoder of the restricted model (as token bytes) on FLORES devtest lines."""
    mt = seq.modular()
    flores = data.load_flores(LANGS, root=flores_root, max_lines=60)
    rng = random.Random(0)
    for _ in range(5):
        subset = rng.sample(LANGS, rng.randint(1, 4))
        ref = seq.model.restricted(mt.ids(subset).tolist())
        sub = mt.subtokenizer(subset)
        for lang in LANGS:
            for line in flores[lang]:
                got = [seq.model.vocab[g] for g in sub.encode(line)]
                assert got == [ref.vocab[t] for t in ref.encode(line)]


def test_every_language_hf_equals_reference_on_flores(seq, flores_root):
    """Each language's subtokenizer (HF, global ids) == reference encoder, all devtest lines."""
    mt = seq.modular()
    flores = data.load_flores(LANGS, root=flores_root)
    for lang in LANGS:
        ref = seq.model.restricted(seq.lang_to_ids[lang])
        to_global = {i: seq.model.id_of(v) for i, v in enumerate(ref.vocab)}
        enc = mt.encode_batch(flores[lang], [lang])
        for line, ids in zip(flores[lang], enc):
            assert ids == [to_global[t] for t in ref.encode(line)]
    full = [seq.model.encode(line) for line in flores["eng_Latn"][:200]]
    assert mt.encode_batch(flores["eng_Latn"][:200]) == full


def test_sequential_bad_input(counts):
    with pytest.raises(BudgetError, match="k=200"):
        train_sequential(counts, 200)
    with pytest.raises(UnknownLanguageError, match="xxx_Latn"):
        train_sequential(counts, 300, order=["eng_Latn", "xxx_Latn"])


def test_concat_hand_oracle_and_unreachable_token():
    """x learns a+b; y learns b+c then a+bc. Concatenated: [a+b, b+c, a+bc]. y's "abc" is
    made from a+bc; in the x+y union a+b (rank 0) fires first on "abc" and b+c can no
    longer apply: "abc" -> [ab, c], the token "abc" cannot form (the paper's Fig. 2)."""
    res = train_concat({"x": Counter({"ab": 9}), "y": Counter({"abc": 5, "bc": 4})}, 258, scheme="whitespace")
    v = res.model.vocab
    assert [(v[a], v[b]) for a, b in res.model.merges] == [(b"a", b"b"), (b"b", b"c"), (b"a", b"bc")]
    mt = res.modular()
    assert [v[i] for i in mt.encode("abc", ["y"])] == [b"abc"]
    assert [v[i] for i in mt.encode("abc", ["x", "y"])] == [b"ab", b"c"]
    seq = train_sequential({"x": Counter({"ab": 9}), "y": Counter({"abc": 5, "bc": 4})}, 258, scheme="whitespace")
    assert [seq.model.vocab[i] for i in seq.modular().encode("abc", ["x", "y"])] == [b"abc"]


def test_count_then_train_equals_lines_entry_point():
    lines = ["the cat", "the hat", "a cat"]
    a = standard.train(count_pretokens(lines, "whitespace"), 270, "whitespace")
    b = standard.train_from_lines(lines, 270, "whitespace")
    assert a.merges == b.merges


def test_progress_bars_are_throttled_in_logs(capsys):
    """With stderr not a terminal (a CI log), a sequential run of ~1,500 vocabulary steps
    draws its bar a handful of times, not once per merge (it used to refresh on every
    merge: one 26-language run wrote a 187,000-line log)."""
    rng = random.Random(0)
    words = ["".join(rng.choice("abcdefghij") for _ in range(rng.randint(2, 12))) for _ in range(3000)]
    corpus = {lang: Counter(rng.sample(words, 1500)) for lang in ("x", "y")}
    res = train_sequential(corpus, 1000, progress=True)
    assert sum(len(ids) for ids in res.lang_to_ids.values()) > 1500
    err = capsys.readouterr().err
    assert "sequential BPE" in err and err.count("\r") <= 4, err.count("\r")
    standard.train(corpus["x"], 800, progress=True)
    assert capsys.readouterr().err.count("\r") <= 4
