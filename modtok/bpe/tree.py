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


# ---------------------------------------------------------------------------- why a token does not form


@dataclass(frozen=True)
class Blocked:
    """Why ``target``, a token of one run on pre-token number ``piece``, does
    not form in another run on the same word.

    ``needed`` is ``target``'s first merge (in its own build order) whose
    result is not a token of the other run (:func:`missing_merge`);
    ``blocker`` is the other run's first merge in the way
    (:func:`blocking_merge`), or ``None`` when nothing is in the way and the
    other tokenizer simply lacks the ``needed`` merge.
    """

    piece: int
    target: Node
    needed: Node
    blocker: Node | None


def explain(runs: dict[str, Sequence[Sequence[Node]]], other: Sequence[Sequence[Node]]) -> list[tuple[str, Blocked]]:
    """For every tokenizer of ``runs`` (name -> one :func:`trace` per
    pre-token) and every one of its tokens that does not form in ``other``
    (the other tokenizer's traces of the same pre-tokens; a token formed and
    then merged further counts as formed): ``(name, Blocked)``.

    A token that two runs share (same pre-token and span) is explained once,
    under the first name of ``runs``.

    >>> word = b"abc"
    >>> runs = {"ab first": [trace(BPEModel([(97, 98), (256, 99)]), word)]}
    >>> [(name, label(b.target.token), label(b.blocker.token)) for name, b in explain(runs, [trace(BPEModel([(98, 99)]), word)])]
    [('ab first', 'abc', 'bc')]
    """
    out, seen = [], set()
    for name, pieces in runs.items():
        for p, (nodes, other_nodes) in enumerate(zip(pieces, other)):
            formed = {n.span for top in other_nodes for n in walk(top)}
            for target in nodes:
                if target.span in formed or (p, target.span) in seen:
                    continue
                seen.add((p, target.span))
                need = missing_merge(target, other_nodes)
                out.append((name, Blocked(p, target, need, blocking_merge(target, other_nodes))))
    return out


def merge_origins(left: bytes, right: bytes, models: dict[str, BPEModel]) -> list[tuple[str, int]]:
    """``(name, rank)`` of each model (in ``models`` order) whose merge list has ``left + right``.

    >>> merge_origins(b"a", b"b", {"x": BPEModel([(97, 98)]), "y": BPEModel([(98, 99)])})
    [('x', 0)]
    """
    out = []
    for name, m in models.items():
        a, b = m.id_of(left), m.id_of(right)
        if a is not None and b is not None and (a, b) in m.ranks:
            out.append((name, m.ranks[(a, b)]))
    return out


def describe(b: Blocked, models: dict[str, BPEModel]) -> str:
    """One sentence for :class:`Blocked` ``b``, naming the models (e.g. each
    language's monolingual BPE) whose merge lists hold the merges involved."""

    def merge(node: Node) -> str:
        n0, n1 = node.children
        return f"«{label(n0.token)}» + «{label(n1.token)}» → «{label(node.token)}»"

    def lists(node: Node) -> str:
        return ", ".join(f"{name} (rank {rank})" for name, rank in merge_origins(*(c.token for c in node.children), models))

    own = lists(b.needed)
    head = f"«{label(b.target.token)}» needs {merge(b.needed)}" + (f" (a merge of {own})" if own else "")
    if b.blocker is None:
        return f"{head}, a merge that no list of {', '.join(models)} has."
    return (f"{head}, but {merge(b.blocker)} applies first (global rank {b.blocker.rank}; in the lists of "
            f"{lists(b.blocker) or 'none'}), taking byte(s) that «{label(b.needed.token)}» needs; "
            f"so «{label(b.target.token)}» cannot form.")
