"""Merge trees (modtok.bpe.tree): the trace equals the reference encoder, labels
are readable, and the blocking merge explains a concatenation failure."""

from __future__ import annotations

from collections import Counter

from hypothesis import given
from hypothesis import strategies as st

from modtok.bpe import standard
from modtok.bpe.concat import train_concat
from modtok.bpe.model import BPEModel
from modtok.bpe.tree import (
    blocking_merge,
    describe,
    explain,
    label,
    leaves,
    merge_origins,
    missing_merge,
    trace,
    walk,
)

TOY = Counter({" banana": 7, " bandana": 5, " cabana": 3, " anna": 4, " nab": 2, "ab": 1})
MODEL = standard.train(TOY, 270)


@given(st.binary(min_size=0, max_size=24))
def test_trace_is_the_reference_encoder(data):
    """Oracle: BPEModel.encode_bytes; every tree's leaves spell its token and the
    roots tile the word left to right."""
    nodes = trace(MODEL, data)
    assert [n.id for n in nodes] == MODEL.encode_bytes(data)
    assert b"".join(n.token for n in nodes) == data
    pos = 0
    for n in nodes:
        assert n.start == pos and data[n.start : n.end] == n.token == b"".join(leaves(n))
        assert MODEL.vocab[n.id] == n.token
        pos = n.end
        for m in walk(n):
            if m.children:
                (a, b) = m.children
                assert MODEL.merges[m.rank] == (a.id, b.id) and a.end == b.start
                assert m.step > max(c.step if c.step is not None else -1 for c in m.children)
    steps = [m.step for n in nodes for m in walk(n) if m.step is not None]
    assert sorted(steps) == list(range(len(steps)))


def test_trace_by_hand():
    """a+b (rank 0), ab+c (rank 1), c+a (rank 2) on "abca": ab, then abc, then nothing (a is alone)."""
    m = BPEModel([(97, 98), (256, 99), (99, 97)])
    (abc, a) = trace(m, b"abca")
    assert (abc.token, abc.step, abc.rank, a.token, a.step) == (b"abc", 1, 1, b"a", None)
    assert [c.token for c in abc.children] == [b"ab", b"c"]


def test_labels():
    """Hand-made: complete characters decode, partial UTF-8 sequences are grouped in hex."""
    deva = "नमस्ते".encode()  # 6 characters x 3 bytes
    assert label(deva) == "नमस्ते"
    assert label(deva[:4]) == "न<e0>"
    assert label(deva[1:5]) == "<a4 a8 e0 a4>"
    assert label(b" a\nb", space="_") == "_a\nb"
    assert label(b"\xff") == "<ff>"


def test_concatenation_blocks_a_token():
    """Language x learns b+c first; language y learns a+b then ab+c. Concatenated
    (x first), "abc" becomes a|bc: y's "ab" is blocked by x's merge b+c (step 0)."""
    res = train_concat({"x": Counter({"bc": 9}), "y": Counter({"abc": 9})}, 258, order=["x", "y"])
    y_alone = standard.train(Counter({"abc": 9}), 258)
    (target,) = trace(y_alone, b"abc")
    concat = trace(res.model, b"abc")
    assert [n.token for n in concat] == [b"a", b"bc"]
    blocker = blocking_merge(target, concat)
    assert (blocker.token, blocker.step, blocker.span) == (b"bc", 0, (1, 3))
    assert missing_merge(target, concat).token == b"ab"
    assert blocking_merge(target, [target]) is None and missing_merge(target, [target]) is None


def test_missing_merge_without_blocker():
    """ab and c both form but the merge ab+c is absent: no blocker, the missing node is abc."""
    (target,) = trace(BPEModel([(97, 98), (256, 99)]), b"abc")
    other = trace(BPEModel([(97, 98)]), b"abc")
    assert blocking_merge(target, other) is None
    assert missing_merge(target, other).token == b"abc"


def test_explain_names_the_blocking_merge_and_the_lists_it_came_from():
    """Hand-derived: with merges a+b then ab+c ("abc" as one token) against a list
    whose first merge is b+c, "abc" cannot form because b+c takes the "b"."""
    own, other = BPEModel([(97, 98), (256, 99)]), BPEModel([(98, 99)])
    why = explain({"own": [trace(own, b"abc")]}, [trace(other, b"abc")])
    assert len(why) == 1
    name, b = why[0]
    assert name == "own" and b.piece == 0 and label(b.target.token) == "abc"
    assert label(b.needed.token) == "ab" and label(b.blocker.token) == "bc" and b.blocker.step == 0
    assert merge_origins(b"b", b"c", {"own": own, "other": other}) == [("other", 0)]
    sentence = describe(b, {"own": own, "other": other})
    assert "«a» + «b» → «ab» (a merge of own (rank 0))" in sentence
    assert "«b» + «c» → «bc» applies first" in sentence and "other (rank 0)" in sentence


def test_explain_a_missing_merge_and_tokens_that_form():
    """No merge in the way: the other list lacks a+b altogether. A token that forms
    (also one merged further in the other run) is not explained; shared spans once."""
    own, bare = BPEModel([(97, 98)]), BPEModel([])
    why = explain({"x": [trace(own, b"abab")], "y": [trace(own, b"abab")]}, [trace(bare, b"abab")])
    assert [(n, b.target.span, b.blocker) for n, b in why] == [("x", (0, 2), None), ("x", (2, 4), None)]
    assert describe(why[0][1], {"bare": bare}).endswith("a merge that no list of bare has.")
    further = BPEModel([(97, 98), (256, 99)])  # "ab" forms, then becomes "abc"
    assert explain({"own": [trace(own, b"abc")]}, [trace(further, b"abc")]) == []
