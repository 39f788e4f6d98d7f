"""Merge trees: how BPE builds the tokens of one pre-token, and why a token
that one tokenizer forms cannot form under another.

:func:`trace` runs the reference encoder (:meth:`BPEModel.encode_bytes`) and
keeps every merge it applies: the result is one binary tree per output token,
whose leaves are the bytes of that token. Each node knows its byte span in the
word and the step at which it was made, so two tokenizers' runs on the same
word can be compared span by span.

>>> m = BPEModel([(98, 99), (97, 98)])          # rank 0: b+c, rank 1: a+b
>>> [label(t.token) for t in trace(m, b"abc")]  # b+c applies first, so "ab" never forms
['a', 'bc']
>>> target = trace(BPEModel([(97, 98), (256, 99)]), b"abc")[0]   # a+b, then ab+c
>>> node = blocking_merge(target, trace(m, b"abc"))
>>> label(node.token), node.step
('bc', 0)
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import regex

from modtok.bpe.model import BPEModel

_ESCAPED = regex.compile(r"[\udc80-\udcff]+")


@dataclass(frozen=True)
class Node:
    """A token in a word: ``token`` (bytes) = ``word[start:end]``.

    ``step`` is the merge's position in the encoder's run (0 = first merge
    applied) and ``rank`` its rank in the model; both are ``None`` for a byte,
    whose ``children`` are empty. ``id`` is the token id in the model.
    """

    id: int
    token: bytes
    start: int
    end: int
    step: int | None = None
    rank: int | None = None
    children: tuple["Node", ...] = ()

    @property
    def span(self) -> tuple[int, int]:
        return self.start, self.end


def trace(model: BPEModel, data: bytes) -> list[Node]:
    """The encoder's run on one pre-token (``data``), as one tree per output token.

    Same rule as :meth:`BPEModel.encode_bytes` (lowest rank first, leftmost on
    ties), so ``[n.id for n in trace(m, d)] == m.encode_bytes(d)``.

    >>> m = BPEModel([(97, 98), (256, 99)])
    >>> [(n.id, n.token, n.span, n.step) for n in trace(m, b"abcab")]
    [(257, b'abc', (0, 3), 2), (256, b'ab', (3, 5), 1)]
    """
    nodes = [Node(b, bytes([b]), i, i + 1) for i, b in enumerate(data)]
    step = 0
    while len(nodes) > 1:
        rank, i = min(
            (model.ranks.get((a.id, b.id), len(model.merges)), i) for i, (a, b) in enumerate(zip(nodes, nodes[1:]))
        )
        if rank == len(model.merges):
            break
        left, right = nodes[i], nodes[i + 1]
        nodes[i : i + 2] = [
            Node(model.results[rank], left.token + right.token, left.start, right.end, step, rank, (left, right))
        ]
        step += 1
    return nodes


def walk(node: Node) -> Iterator[Node]:
    """``node`` and all its descendants, parents before children (left first)."""
    yield node
    for child in node.children:
        yield from walk(child)


def leaves(node: Node) -> list[bytes]:
    """The bytes under ``node``, left to right (they concatenate to ``node.token``)."""
    return [n.token for n in walk(node) if not n.children]


def label(token: bytes, space: str = "␣") -> str:
    """A readable label: UTF-8 text, with bytes that are not a complete UTF-8
    character shown as hex (one group per run), and spaces shown as ``space``.

    >>> label(b" ab"), label("न".encode()[:2]), label(b"\\xa8x"), label("नम".encode()[1:])
    ('␣ab', '<e0 a4>', '<a8>x', '<a4 a8>म')
    """
    text = token.decode("utf-8", errors="surrogateescape").replace(" ", space)
    return _ESCAPED.sub(lambda m: "<" + " ".join(f"{ord(c) - 0xDC00:02x}" for c in m.group()) + ">", text)


def _overlaps(a: Node, b: Node) -> bool:
    return a.start < b.end and b.start < a.end


def blocking_merge(target: Node, other: Sequence[Node]) -> Node | None:
    """The first merge of ``other`` (another tokenizer's :func:`trace` of the
    same word) that makes ``target`` impossible: it overlaps ``target``'s span
    but is neither one of ``target``'s own sub-tokens nor a token containing it.

    Once such a merge has consumed bytes across a border of a sub-token that
    ``target`` needs, that sub-token (hence ``target``) can no longer form.
    Returns ``None`` when no merge of ``other`` is in the way (then ``target``
    either forms in ``other`` or a merge it needs is missing; see
    :func:`missing_merge`). Ties cannot occur: steps are distinct.
    """
    own = {n.span for n in walk(target)}
    in_the_way = [
        n
        for tree in other
        for n in walk(tree)
        if n.step is not None
        and _overlaps(n, target)
        and n.span not in own
        and not (n.start <= target.start and target.end <= n.end)
    ]
    return min(in_the_way, key=lambda n: n.step, default=None)


def missing_merge(target: Node, other: Sequence[Node]) -> Node | None:
    """The first node of ``target`` (in its own build order) whose span is not a
    token anywhere in ``other``'s run, or ``None`` if ``target`` forms there.

    When :func:`blocking_merge` is ``None`` both children of this node do form
    in ``other``, so the merge of those two children is missing from ``other``.

    >>> target = trace(BPEModel([(97, 98), (256, 99)]), b"abc")[0]
    >>> node = missing_merge(target, trace(BPEModel([(97, 98)]), b"abc"))
    >>> [label(c.token) for c in node.children]
    ['ab', 'c']
    """
    formed = {n.span for tree in other for n in walk(tree)}
    merges = sorted((n for n in walk(target) if n.step is not None), key=lambda n: n.step)
    return next((n for n in merges if n.span not in formed), None)
