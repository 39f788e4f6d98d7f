"""A byte-level BPE model: ordered merges over token ids, plus the readable
reference encoder/decoder and the properness check.

Ids 0..255 are the bytes; every other id is the output of a merge. A merge
list is *proper* when every merge's parts are bytes or outputs of earlier
merges (this also rules out cycles); it is checked on construction, so every
model that exists is proper. Two merges may produce the same token (HF's
trainer does that too when ``ab+c`` and ``a+bc`` both occur); the token keeps
the id of its first merge.

>>> m = BPEModel([(97, 98), (256, 99)], scheme="whitespace")   # a+b, ab+c
>>> m.vocab[256], m.vocab[257]
(b'ab', b'abc')
>>> m.encode("abc abx")
[257, 32, 256, 120]
>>> m.decode([257, 32, 256, 120])
'abc abx'
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from modtok.errors import MergeListError
from modtok.text.pretokenize import DEFAULT_SCHEME, compiled, pattern


class BPEModel:
    """Ordered merges ``[(a, b), ...]`` over token ids (rank = position).

    ``vocab[i]`` is the byte string of id ``i``; ``results[r]`` the id made by
    merge ``r``; ``ranks[(a, b)]`` the rank of a merge; ``parents[i]`` the parts
    of the first merge that made ``i`` (``None`` for a byte).
    """

    def __init__(self, merges: Iterable[tuple[int, int]], scheme: str = DEFAULT_SCHEME):
        pattern(scheme)  # unknown scheme -> error now, not at encode time
        self.scheme = scheme
        self.merges: list[tuple[int, int]] = []
        self.vocab: list[bytes] = [bytes([b]) for b in range(256)]
        self.parents: list[tuple[int, int] | None] = [None] * 256
        self.results: list[int] = []
        self.ranks: dict[tuple[int, int], int] = {}
        self._id_of: dict[bytes, int] = {v: i for i, v in enumerate(self.vocab)}
        for a, b in merges:
            self.add_merge(int(a), int(b))

    def add_merge(self, a: int, b: int) -> int:
        """Append merge (a, b); returns the id of its output (new or existing)."""
        r = len(self.merges)
        n = len(self.vocab)
        for part in (a, b):
            if not 0 <= part < n:
                raise MergeListError(
                    f"merge {r} ({a}, {b}): part {part} is neither a byte nor the output "
                    f"of an earlier merge (only ids < {n} exist so far)"
                )
        if (a, b) in self.ranks:
            raise MergeListError(f"merge {r} ({a}, {b}) repeats merge {self.ranks[(a, b)]}")
        token = self.vocab[a] + self.vocab[b]
        c = self._id_of.get(token)
        if c is None:
            c = n
            self.vocab.append(token)
            self.parents.append((a, b))
            self._id_of[token] = c
        self.merges.append((a, b))
        self.results.append(c)
        self.ranks[(a, b)] = r
        return c

    def __len__(self) -> int:
        """Vocabulary size (256 bytes + distinct merge outputs)."""
        return len(self.vocab)

    def __repr__(self) -> str:
        return f"BPEModel(vocab={len(self.vocab)}, merges={len(self.merges)}, scheme={self.scheme!r})"

    def id_of(self, token: bytes) -> int | None:
        return self._id_of.get(token)

    def ancestors(self, token: int) -> set[int]:
        """``token`` and every id its first merge is built from, down to bytes."""
        out, stack = set(), [token]
        while stack:
            t = stack.pop()
            if t in out:
                continue
            out.add(t)
            if self.parents[t] is not None:
                stack.extend(self.parents[t])
        return out

    # ---- reference encoder / decoder (readable, not fast)
    def encode_bytes(self, data: bytes) -> list[int]:
        """BPE of one pre-token: repeatedly merge the adjacent pair of lowest rank
        (leftmost first) until no adjacent pair is a merge (HF's rule)."""
        ids = list(data)
        while len(ids) > 1:
            pairs = [(self.ranks.get(p, len(self.merges)), i) for i, p in enumerate(zip(ids, ids[1:]))]
            r, i = min(pairs)
            if r == len(self.merges):
                break
            ids[i : i + 2] = [self.results[r]]
        return ids

    def encode(self, text: str) -> list[int]:
        out: list[int] = []
        for piece in compiled(self.scheme).findall(text):
            out.extend(self.encode_bytes(piece.encode("utf-8")))
        return out

    def decode(self, ids: Sequence[int]) -> str:
        return b"".join(self.vocab[i] for i in ids).decode("utf-8", errors="replace")

    def prefix(self, vocab_size: int) -> "BPEModel":
        """The model as its training was when it had ``vocab_size`` tokens: the merges up
        to the one that made id ``vocab_size - 1`` (ids are made in merge order), i.e. what
        training stopped at ``vocab_size`` gives; the whole model if it is no larger.

        >>> m = BPEModel([(97, 98), (256, 99), (97, 256), (257, 100)], "whitespace")  # ab abc (aab) abcd
        >>> len(m), len(m.prefix(258).merges), m.prefix(258).vocab[-1], m.prefix(300) is m
        (260, 2, b'abc', True)
        """
        if vocab_size >= len(self):
            return self
        last = self.results.index(vocab_size - 1) if vocab_size > 256 else -1
        return BPEModel(self.merges[: last + 1], self.scheme)

    def restricted(self, ids: Iterable[int]) -> "BPEModel":
        """The model keeping the merges whose parts and result are all in ``ids``
        (global order). Token ids change; see :mod:`modtok.artifacts.modular` for id maps."""
        keep = set(ids) | set(range(256))
        sub = BPEModel([], self.scheme)
        local = {i: i for i in range(256)}
        for (a, b), c in zip(self.merges, self.results):
            if a in keep and b in keep and c in keep:
                local[c] = sub.add_merge(local[a], local[b])
        return sub
