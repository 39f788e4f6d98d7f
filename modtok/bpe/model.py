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

import numpy as np

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
        self.extend(merges)

    def add_merge(self, a: int, b: int) -> int:
        """Append merge (a, b); returns the id of its output (new or existing)."""
        r = len(self.merges)
        n = len(self.vocab)
        for part in (a, b):
            if not 0 <= part < n:
                raise self._bad_part(r, a, b, part, n)
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

    def extend(self, merges: Iterable[tuple[int, int]] | np.ndarray) -> list[int]:
        """Append many merges at once; returns their output ids. The same model, ids and
        first error as :meth:`add_merge` one merge at a time, in about two thirds of its time
        (replaying 124,497 merges: 0.29-0.35 s against 0.47-0.53 s; a training loop hands over
        thousands of merges per kernel call: :func:`modtok.bpe.standard.learn`), except that on
        an error the model is left as it was (not with the merges before the bad one).

        What needs no string is checked on the whole list at once: a negative part on the
        array, a repeated pair by the size of :attr:`ranks` after one ``update`` (the slow
        search for the first one only when it did not grow by the whole list). The loop makes
        each string, looks it up and appends; a part that no merge has made yet is an
        ``IndexError`` there (which ids exist depends on which merges before made a new string).

        >>> m = BPEModel([], "whitespace")
        >>> m.extend([(97, 98), (256, 99), (98, 99)])   # ab, abc, bc
        [256, 257, 258]
        >>> m.extend([(97, 258)]), len(m)               # a+bc = abc: its existing id, V unchanged
        ([257], 259)
        """
        parts = np.asarray(merges, np.int64)
        if parts.size == 0:
            return []
        if parts.ndim != 2 or parts.shape[1] != 2:
            raise MergeListError(f"merges must be pairs of token ids, got an array of shape {parts.shape}")
        pairs = list(zip(*parts.T.tolist()))
        r0, n0, k = len(self.merges), len(self.vocab), len(pairs)
        stop = int(np.flatnonzero(parts.min(axis=1) < 0)[0]) if parts.min() < 0 else k
        ranks = self.ranks
        ranks.update(zip(pairs, range(r0, r0 + k)))
        if len(ranks) < r0 + k:  # a pair repeats: find the first (before any negative part)
            ranks.clear()
            ranks.update(zip(self.merges, range(r0)))
            seen = set(ranks)
            for r, ab in enumerate(pairs[:stop]):
                if ab in seen:
                    stop = r
                    break
                seen.add(ab)
        vocab, parents, id_of = self.vocab, self.parents, self._id_of
        results: list[int] = []
        n = n0
        try:
            for a, b in pairs[:stop]:
                token = vocab[a] + vocab[b]
                c = id_of.get(token)
                if c is None:
                    c = n
                    n += 1
                    vocab.append(token)
                    parents.append((a, b))
                    id_of[token] = c
                results.append(c)
        except IndexError:
            stop = len(results)
        if stop < k:  # leave the model as it was, then say what add_merge would have said
            for token in vocab[n0:]:
                del id_of[token]
            del vocab[n0:], parents[n0:]
            ranks.clear()
            ranks.update(zip(self.merges, range(r0)))
            a, b = pairs[stop]
            part = next((p for p in (a, b) if not 0 <= p < n), None)
            if part is not None:
                raise self._bad_part(r0 + stop, a, b, part, n)
            first = ranks.get((a, b), r0 + pairs.index((a, b)))
            raise MergeListError(f"merge {r0 + stop} ({a}, {b}) repeats merge {first}")
        self.merges.extend(pairs)
        self.results.extend(results)
        return results

    @staticmethod
    def _bad_part(r: int, a: int, b: int, part: int, n: int) -> MergeListError:
        return MergeListError(
            f"merge {r} ({a}, {b}): part {part} is neither a byte nor the output "
            f"of an earlier merge (only ids < {n} exist so far)"
        )

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

    def copy(self) -> "BPEModel":
        """An independent copy (its lists and maps copied, nothing checked again: 5 ms for 78k
        merges where rebuilding the model from its merges takes 0.2 s).

        >>> m = BPEModel([(97, 98)], "whitespace"); c = m.copy(); c.add_merge(256, 99)
        257
        >>> len(m), len(c), m.vocab[-1]
        (257, 258, b'ab')
        """
        new = BPEModel.__new__(BPEModel)
        new.scheme = self.scheme
        new.merges, new.vocab, new.parents, new.results = (list(self.merges), list(self.vocab), list(self.parents),
                                                           list(self.results))
        new.ranks, new._id_of = dict(self.ranks), dict(self._id_of)
        return new

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
