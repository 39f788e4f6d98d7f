"""The Unigram lattice: a trie of pieces, Viterbi and forward-backward, compiled.

A Unigram model scores a segmentation of a (normalised) string by the sum of
its pieces' log-probabilities. All segmentations form a lattice: node = a
position between two characters, edge = a piece ``text[s:e]``. This module
walks that lattice for many strings at once, in numba:

- :func:`viterbi` finds the best path of each string (encoding);
- :func:`expected_counts` runs forward-backward and returns the expected count
  of every piece, the unknown mass and the log-likelihood (the EM E-step); EM
  builds the lattices once (:func:`build_lattice`) and runs :func:`forward_backward`
  on them at every step.

Byte fallback: at a position where no single-character piece is allowed, an
*unknown* edge covers that one character with score ``unk_score``; Viterbi then
emits the character's UTF-8 bytes as byte pieces. This is exactly what
sentencepiece (``byte_fallback=true``) and HF ``tokenizers`` Unigram do, so every
string has a path. Both libraries use ``unk_score = min score - 10``
(:data:`UNK_PENALTY`), the minimum taken over the allowed normal pieces.

Tie-break (the same as sentencepiece's and HF's optimised encoders): end
positions are relaxed in order of increasing start position and a candidate
replaces the current best only if *strictly* better, so among equally scored
paths the one whose last piece starts earliest wins.

A restricted model (a subtokenizer) is the same lattice with a boolean mask
over piece ids: masked pieces are simply not edges (probability 0).

The kernels follow the convention of :mod:`modtok.bpe.kernels`: their inputs are
a few named tuples of arrays (:class:`Units`, :class:`TrieArrays`,
:class:`ViterbiScores`, and per-thread scratch :class:`ViterbiWork` /
:class:`PathWork`), and a kernel binds the fields it uses to local names once, at
its top. The per-unit kernels take the tuples too (they run once per unit, not per
position): against 17 positional arrays each, measured interleaved on 85k pre-tokens
of 4 pool languages and 40k pieces, Viterbi took the same time and forward-backward
up to 3% more.

>>> import numpy as np
>>> pieces = ["a", "b", "ab"]
>>> trie = Trie(pieces, [0, 1, 2])
>>> cps, offsets = encode_units(["abab", "ba"])
>>> scores = np.log([0.2, 0.2, 0.3])
>>> ids, lens = viterbi(cps, offsets, trie, scores, unk_score=-20.0, byte_ids=np.arange(256) + 10)
>>> split_ids(ids, lens, offsets)
[[2, 2], [1, 0]]
"""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Sequence

import math

import numba
import numpy as np
from numba import njit, prange

from modtok.errors import TokenizerFileError

UNK_PENALTY = 10.0  # sentencepiece kUnkPenalty and HF K_UNK_PENALTY
N_CHUNKS = 16  # work split of the batch kernels; fixed so sums do not depend on the thread count

# The strings as code points: unit u is cps[offsets[u] : offsets[u + 1]]; chunk c of the
# work split is units bounds[c] : bounds[c + 1]; max_len the longest unit.
Units = namedtuple("Units", ["cps", "offsets", "bounds", "max_len"])
# The trie (see Trie): the children of node v are first[v] : first[v] + count[v], by label.
TrieArrays = namedtuple("TrieArrays", ["first", "count", "label", "target", "piece"])
# Viterbi's model: a score per piece id, the pieces that are edges, the score of an
# unknown character's edge and the ids of the 256 byte pieces it is emitted as.
ViterbiScores = namedtuple("ViterbiScores", ["score", "allowed", "unk_score", "byte_ids"])
# Per-thread scratch for one unit of n characters (n + 1 positions): Viterbi's best score
# into each position and the start and piece of the edge that gives it (piece -1: unknown).
ViterbiWork = namedtuple("ViterbiWork", ["best", "start", "piece"])
# Forward-backward's: alpha / beta and alpha's power-of-two scale per position, and the
# lattice's edges in order of start: those of start s are edge_first[s] : edge_first[s + 1]
# (end, piece; piece -1: an unknown character).
PathWork = namedtuple("PathWork", ["alpha", "beta", "scale", "edge_first", "edge_end", "edge_piece"])
# The lattices of all units, built once (build_lattice) and kept across EM iterations: the
# edges of position i of cps (those that start there) are pos_edges[i] consecutive entries of
# edge_piece (-1: an unknown character), positions in order; chunk c's start at chunk_first[c].
Lattice = namedtuple("Lattice", ["units", "depth", "piece_len", "pos_edges", "chunk_first", "edge_piece"])


# --------------------------------------------------------------------------
# strings as code points


def encode_units(units: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """Concatenated code points (int32) and offsets (int64, ``len(units) + 1``).

    >>> cps, offsets = encode_units(["ab", "", "é"])
    >>> cps.tolist(), offsets.tolist()
    ([97, 98, 233], [0, 2, 2, 3])
    """
    joined = "".join(units)
    cps = np.frombuffer(joined.encode("utf-32-le", "surrogatepass"), dtype=np.int32)
    offsets = np.zeros(len(units) + 1, dtype=np.int64)
    np.cumsum([len(u) for u in units], out=offsets[1:])
    return cps, offsets


def split_ids(ids: np.ndarray, lens: np.ndarray, offsets: np.ndarray) -> list[list[int]]:
    """The per-unit id lists of :func:`viterbi`'s flat output."""
    starts = 4 * offsets[:-1]
    return [ids[s : s + n].tolist() for s, n in zip(starts.tolist(), lens.tolist())]


# --------------------------------------------------------------------------
# the trie


class Trie:
    """A character trie of pieces in compressed-row arrays (numba-friendly).

    Node 0 is the root. The children of node ``v`` are the edges
    ``first[v] : first[v] + count[v]``, sorted by ``label`` (a code point) so a
    step is a binary search; ``piece[v]`` is the id of the piece spelled by the
    path to ``v`` (-1 if none). ``depth`` is the longest piece in characters,
    ``piece_len[i]`` the length of piece id ``i``.

    >>> t = Trie(["ab", "a", "b"], [0, 1, 2])
    >>> t.label[t.first[0]:t.first[0] + t.count[0]].tolist()   # the root's children: 'a', 'b'
    [97, 98]
    >>> t.lookup("ab"), t.lookup("a"), t.lookup("ba")
    (0, 1, -1)
    """

    def __init__(self, pieces: Sequence[str], ids: Sequence[int]):
        children: list[dict[int, int]] = [{}]
        piece_at = [-1]
        for pid in ids:
            node = 0
            for ch in map(ord, pieces[pid]):
                nxt = children[node].get(ch)
                if nxt is None:
                    nxt = len(children)
                    children[node][ch] = nxt
                    children.append({})
                    piece_at.append(-1)
                node = nxt
            if node == 0:
                raise TokenizerFileError(f"piece {pid} is the empty string")
            if piece_at[node] != -1:
                raise TokenizerFileError(f"pieces {piece_at[node]} and {pid} are the same string {pieces[pid]!r}")
            piece_at[node] = pid
        n = len(children)
        self.first = np.zeros(n, dtype=np.int32)
        self.count = np.zeros(n, dtype=np.int32)
        labels, targets = [], []
        for v, kids in enumerate(children):
            self.first[v] = len(labels)
            self.count[v] = len(kids)
            for ch in sorted(kids):
                labels.append(ch)
                targets.append(kids[ch])
        self.label = np.array(labels, dtype=np.int32)
        self.target = np.array(targets, dtype=np.int32)
        self.piece = np.array(piece_at, dtype=np.int32)
        self.depth = max((len(pieces[i]) for i in ids), default=0)
        self.piece_len = np.zeros(max(ids, default=-1) + 1, dtype=np.int32)  # characters of each piece id
        for pid in ids:
            self.piece_len[pid] = len(pieces[pid])

    def lookup(self, s: str) -> int:
        """The piece id of string ``s``, or -1."""
        node = 0
        for ch in map(ord, s):
            node = _child(self.first, self.count, self.label, self.target, node, ch)
            if node < 0:
                return -1
        return int(self.piece[node])

    def arrays(self) -> TrieArrays:
        """The trie as the kernels take it."""
        return TrieArrays(self.first, self.count, self.label, self.target, self.piece)


@njit(cache=True, inline="always")
def _child(first, count, label, target, node, c):
    lo = first[node]
    hi = lo + count[node]
    while lo < hi:
        mid = (lo + hi) >> 1
        x = label[mid]
        if x < c:
            lo = mid + 1
        elif x > c:
            hi = mid
        else:
            return target[mid]
    return -1


@njit(cache=True, inline="always")
def _logaddexp(a, b):
    if a == -np.inf:
        return b
    if b == -np.inf:
        return a
    if a > b:
        return a + np.log1p(np.exp(b - a))
    return b + np.log1p(np.exp(a - b))


def _units(cps: np.ndarray, offsets: np.ndarray) -> Units:
    """The units with their work split: N_CHUNKS contiguous chunks of about equal characters."""
    n_units = len(offsets) - 1
    targets = np.linspace(0, offsets[-1], N_CHUNKS + 1)
    bounds = np.searchsorted(offsets[:-1], targets, side="left").astype(np.int64)
    bounds[0], bounds[-1] = 0, n_units
    max_len = int(np.diff(offsets).max()) if len(offsets) > 1 else 0
    return Units(cps, offsets, np.maximum.accumulate(bounds), max_len)


# --------------------------------------------------------------------------
# Viterbi


@njit(cache=True)
def _viterbi_unit(cps, lo, n, trie, model, work, out, pos):
    """Writes the best path of the unit ``cps[lo : lo + n]`` to ``out[pos:]``; returns its length."""
    first, count, label, target, tpiece = trie
    scores, allowed, unk_score, byte_ids = model
    best, bstart, bid = work
    best[0] = 0.0
    for e in range(1, n + 1):
        bstart[e] = -1
    for s in range(n):
        base = best[s]
        node = 0
        single = False
        for e in range(s, n):
            node = _child(first, count, label, target, node, cps[lo + e])
            if node < 0:
                break
            p = tpiece[node]
            if p >= 0 and allowed[p]:
                cand = base + scores[p]
                if bstart[e + 1] == -1 or cand > best[e + 1]:
                    best[e + 1] = cand
                    bstart[e + 1] = s
                    bid[e + 1] = p
                if e == s:
                    single = True
        if not single:
            cand = base + unk_score
            if bstart[s + 1] == -1 or cand > best[s + 1]:
                best[s + 1] = cand
                bstart[s + 1] = s
                bid[s + 1] = -1
    # backtrack, writing ids in reverse, then flip
    k = pos
    e = n
    while e > 0:
        s = bstart[e]
        if bid[e] >= 0:
            out[k] = bid[e]
            k += 1
        else:  # unknown character -> its UTF-8 bytes (written reversed)
            c = cps[lo + s]
            if c < 0x80:
                out[k] = byte_ids[c]
                k += 1
            elif c < 0x800:
                out[k] = byte_ids[0x80 | (c & 0x3F)]
                out[k + 1] = byte_ids[0xC0 | (c >> 6)]
                k += 2
            elif c < 0x10000:
                out[k] = byte_ids[0x80 | (c & 0x3F)]
                out[k + 1] = byte_ids[0x80 | ((c >> 6) & 0x3F)]
                out[k + 2] = byte_ids[0xE0 | (c >> 12)]
                k += 3
            else:
                out[k] = byte_ids[0x80 | (c & 0x3F)]
                out[k + 1] = byte_ids[0x80 | ((c >> 6) & 0x3F)]
                out[k + 2] = byte_ids[0x80 | ((c >> 12) & 0x3F)]
                out[k + 3] = byte_ids[0xF0 | (c >> 18)]
                k += 4
        e = s
    out[pos:k] = out[pos:k][::-1].copy()
    return k - pos


@njit(cache=True, parallel=True)
def _viterbi_batch(units, trie, model):
    cps, offsets, bounds, max_len = units
    n_units = len(offsets) - 1
    out = np.empty(4 * len(cps), dtype=np.int32)
    lens = np.zeros(n_units, dtype=np.int64)
    for c in prange(len(bounds) - 1):
        work = ViterbiWork(np.empty(max_len + 1, dtype=np.float64), np.empty(max_len + 1, dtype=np.int64),
                           np.empty(max_len + 1, dtype=np.int64))
        for u in range(bounds[c], bounds[c + 1]):
            lo = offsets[u]
            lens[u] = _viterbi_unit(cps, lo, offsets[u + 1] - lo, trie, model, work, out, 4 * lo)
    return out, lens


def viterbi(cps, offsets, trie: Trie, scores, unk_score: float, byte_ids, allowed=None):
    """Best segmentation of every unit; returns ``(ids, lens)``.

    ``ids`` is flat: unit ``u``'s ids are ``ids[4*offsets[u] : 4*offsets[u] + lens[u]]``
    (a unit of n characters never needs more than 4n ids; :func:`split_ids` cuts them).
    ``allowed`` (bool per piece id, default all) restricts the lattice.
    """
    scores = np.asarray(scores, dtype=np.float64)
    if allowed is None:
        allowed = np.ones(len(scores), dtype=np.bool_)
    model = ViterbiScores(scores, np.asarray(allowed, dtype=np.bool_), float(unk_score),
                          np.asarray(byte_ids, dtype=np.int32))
    return _viterbi_batch(_units(cps, offsets), trie.arrays(), model)


# --------------------------------------------------------------------------
# forward-backward
#
# Two decisions, measured on the E-step of bench/unigram_em.py (26 pool languages x 1 MB,
# 157,719 pieces, 525,426 units, 13.3M edges; one thread, log space: 1.04-1.46 s, of it
# the trie walk alone 0.38-0.49 s):
#
# - The lattice is built once (build_lattice) and kept across EM iterations: the edges do
#   not change, only their probabilities. 4 bytes per edge and per character (74 MB here).
# - Probability space, not log space: an edge is a multiply-add instead of two logaddexp
#   and an exp (five transcendentals). To stay in range a value that leaves
#   [2^-SCALE_BITS, 2^SCALE_BITS] is multiplied by a power of two -- exact, so the numbers
#   are those of unscaled arithmetic -- together with every value still to be read with
#   it (the next `depth` positions), and the exponent is kept per position. A unit with
#   an edge probability outside [P_MIN, P_MAX] (other than 0), where a product could
#   leave the normal doubles, or whose total underflows anyway, is scored in log space.
#   Against log space: the same log-likelihoods to 1.5e-16 relative, log-probabilities
#   after 5 EM steps within 1.1e-13, identical after quantisation (measured here).
#
# Together, one thread: 0.29-0.33 s per E-step instead of 1.04-1.46 s.

SCALE_BITS = 256
P_MIN = 2.0**-500
P_MAX = 2.0**500


@njit(cache=True)
def _unit_edges(cps, lo, n, trie, work):
    """The lattice of the unit ``cps[lo : lo + n]`` into ``work``: the edges of start ``s``
    are ``edge_first[s] : edge_first[s + 1]``, each with its end and piece (-1: an
    unknown character)."""
    first, count, label, target, tpiece = trie
    _, _, _, efirst, ee, ep = work
    m = 0
    for s in range(n):
        efirst[s] = m
        node = 0
        single = False
        for e in range(s, n):
            node = _child(first, count, label, target, node, cps[lo + e])
            if node < 0:
                break
            p = tpiece[node]
            if p >= 0:
                ee[m] = e + 1
                ep[m] = p
                m += 1
                if e == s:
                    single = True
        if not single:
            ee[m] = s + 1
            ep[m] = -1
            m += 1
    efirst[n] = m


@njit(cache=True)
def _rescale(v, s, stop):
    """If ``v[s]`` (not 0) is outside [2^-SCALE_BITS, 2^SCALE_BITS], multiplies ``v[s : stop]``
    by the power of two 2^k that brings it near 1; returns k (else 0)."""
    x = v[s]
    if x == 0.0 or 2.0**-SCALE_BITS <= x <= 2.0**SCALE_BITS:
        return 0
    k = -math.frexp(x)[1]
    f = math.ldexp(1.0, k)
    for i in range(s, stop):
        v[i] *= f
    return k


@njit(cache=True)
def _fb_unit(n, weight, depth, prob, unk_prob, work, counts):
    """Forward-backward in probability space over the lattice in ``work`` (:func:`_unit_edges`):
    adds ``weight`` times the expected piece counts to ``counts``; returns (log Z, expected
    unknown count, ok). ``ok`` False: the unit needs log space (section comment); nothing added."""
    alpha, beta, scale, efirst, ee, ep = work
    reach = max(depth, 1)  # the longest edge (an unknown one is 1 character)
    for i in range(n + 1):
        alpha[i] = 0.0
    alpha[0] = 1.0
    g = 0  # alpha[i] = alpha_true[i] * 2^g for the positions not yet final
    for s in range(n + 1):
        g += _rescale(alpha, s, min(n, s + reach) + 1)  # alpha[s] is final: every edge into s is added
        scale[s] = g
        if s == n:
            break
        a = alpha[s]
        for j in range(efirst[s], efirst[s + 1]):
            pr = prob[ep[j]] if ep[j] >= 0 else unk_prob
            if pr != 0.0 and (pr < P_MIN or pr > P_MAX):
                return 0.0, 0.0, False
            alpha[ee[j]] += a * pr
    z = alpha[n]
    if z == 0.0 or not np.isfinite(z):
        return 0.0, 0.0, False
    # backward, adding each edge's posterior weight * alpha[s] * p * beta[e] / Z on the way
    beta[n] = 1.0
    h = 0  # beta[i] = beta_true[i] * 2^h for the positions still to be read
    unk = 0.0
    wz = weight / z
    for s in range(n - 1, -1, -1):
        w = wz * alpha[s]  # weight * alpha_true[s] / Z * 2^-h
        if g - scale[s] - h != 0:
            w = math.ldexp(w, g - scale[s] - h)
        acc = 0.0
        for j in range(efirst[s], efirst[s + 1]):
            t = (prob[ep[j]] if ep[j] >= 0 else unk_prob) * beta[ee[j]]
            acc += t
            if ep[j] >= 0:
                counts[ep[j]] += w * t
            else:
                unk += w * t
        beta[s] = acc
        h += _rescale(beta, s, min(n, s + reach) + 1)
    return math.log(z) - g * math.log(2.0), unk, True


@njit(cache=True)
def _fb_unit_log(n, weight, logp, unk_logp, work, counts):
    """:func:`_fb_unit` in log space (any scores; slower); returns (log Z, expected unknown count)."""
    alpha, beta, _, efirst, ee, ep = work
    for i in range(n + 1):
        alpha[i] = -np.inf
        beta[i] = -np.inf
    alpha[0] = 0.0
    beta[n] = 0.0
    for s in range(n):  # all edges into s come from earlier starts: alpha[s] is final
        for j in range(efirst[s], efirst[s + 1]):
            w = logp[ep[j]] if ep[j] >= 0 else unk_logp
            alpha[ee[j]] = _logaddexp(alpha[ee[j]], alpha[s] + w)
    for s in range(n - 1, -1, -1):
        for j in range(efirst[s + 1] - 1, efirst[s] - 1, -1):
            w = logp[ep[j]] if ep[j] >= 0 else unk_logp
            beta[s] = _logaddexp(beta[s], w + beta[ee[j]])
    z = alpha[n]
    unk = 0.0
    for s in range(n):
        for j in range(efirst[s], efirst[s + 1]):
            w = logp[ep[j]] if ep[j] >= 0 else unk_logp
            post = weight * np.exp(alpha[s] + w + beta[ee[j]] - z)
            if ep[j] >= 0:
                counts[ep[j]] += post
            else:
                unk += post
    return z, unk


@njit(cache=True)
def _path_work(max_len, depth):
    """Scratch of one thread for units of up to ``max_len`` characters."""
    cap = max_len * (depth + 1) + 1  # edges: at most depth pieces + 1 unknown per start
    return PathWork(np.empty(max_len + 1, dtype=np.float64), np.empty(max_len + 1, dtype=np.float64),
                    np.empty(max_len + 1, dtype=np.int64), np.empty(max_len + 1, dtype=np.int32),
                    np.empty(cap, dtype=np.int32), np.empty(cap, dtype=np.int32))


@njit(cache=True, parallel=True)
def _build_lattice(units, trie, depth, piece_len):
    cps, offsets, bounds, max_len = units
    n_chunks = len(bounds) - 1
    chunk_first = np.zeros(n_chunks + 1, dtype=np.int64)
    for c in prange(n_chunks):  # pass 1: the number of edges of each chunk
        work = _path_work(max_len, depth)
        for u in range(bounds[c], bounds[c + 1]):
            lo = offsets[u]
            n = offsets[u + 1] - lo
            _unit_edges(cps, lo, n, trie, work)
            chunk_first[c + 1] += work.edge_first[n]
    chunk_first = np.cumsum(chunk_first)
    pos_edges = np.empty(len(cps), dtype=np.int32)
    edge_piece = np.empty(chunk_first[-1], dtype=np.int32)
    for c in prange(n_chunks):  # pass 2: the edges
        work = _path_work(max_len, depth)
        efirst, ep = work.edge_first, work.edge_piece
        k = chunk_first[c]
        for u in range(bounds[c], bounds[c + 1]):
            lo = offsets[u]
            n = offsets[u + 1] - lo
            _unit_edges(cps, lo, n, trie, work)
            for s in range(n):
                pos_edges[lo + s] = efirst[s + 1] - efirst[s]
            edge_piece[k : k + efirst[n]] = ep[: efirst[n]]
            k += efirst[n]
    return Lattice(units, depth, piece_len, pos_edges, chunk_first[:-1].copy(), edge_piece)


def build_lattice(cps, offsets, trie: Trie) -> Lattice:
    """The lattices of the units ``cps`` / ``offsets`` (:func:`encode_units`) under ``trie``,
    for :func:`forward_backward`: 4 bytes per edge and per character (section comment).

    >>> lat = build_lattice(*encode_units(["ab"]), Trie(["a", "b", "ab"], [0, 1, 2]))
    >>> lat.pos_edges.tolist(), lat.edge_piece.tolist()   # from 'a': a, ab; from 'b': b
    ([2, 1], [0, 2, 1])
    """
    return _build_lattice(_units(cps, offsets), trie.arrays(), trie.depth, trie.piece_len)


@njit(cache=True)
def _stored_edges(piece_len, pos_edges, edge_piece, lo, n, k, work):
    """The lattice of the unit at ``cps[lo : lo + n]``, whose first edge is ``k``, from a
    :class:`Lattice`'s arrays into ``work`` (as :func:`_unit_edges` writes it); returns the
    next unit's first edge."""
    _, _, _, efirst, ee, ep = work
    m = 0
    for s in range(n):
        efirst[s] = m
        for _ in range(pos_edges[lo + s]):
            p = edge_piece[k]
            k += 1
            ep[m] = p
            ee[m] = s + (piece_len[p] if p >= 0 else 1)
            m += 1
    efirst[n] = m
    return k


@njit(cache=True, parallel=True)
def _fb_batch(lat, weights, logp, unk_logp):
    # unpacked here: with lat itself in the prange, numba 0.68 fails to compile the kernel
    # ("scalar type Units(...) given for non scalar argument")
    units, depth, piece_len, pos_edges, chunk_first, edge_piece = lat
    _, offsets, bounds, max_len = units
    n_chunks = len(bounds) - 1
    prob = np.exp(logp)
    unk_prob = np.exp(unk_logp)
    counts = np.zeros((n_chunks, len(logp)), dtype=np.float64)
    unks = np.zeros(n_chunks, dtype=np.float64)
    lls = np.zeros(n_chunks, dtype=np.float64)
    for c in prange(n_chunks):
        work = _path_work(max_len, depth)
        k = chunk_first[c]
        for u in range(bounds[c], bounds[c + 1]):
            lo = offsets[u]
            n = offsets[u + 1] - lo
            if n == 0:
                continue
            k = _stored_edges(piece_len, pos_edges, edge_piece, lo, n, k, work)
            z, unk, ok = _fb_unit(n, weights[u], depth, prob, unk_prob, work, counts[c])
            if not ok:
                z, unk = _fb_unit_log(n, weights[u], logp, unk_logp, work, counts[c])
            lls[c] += weights[u] * z
            unks[c] += unk
    total = np.zeros(len(logp), dtype=np.float64)
    for c in range(n_chunks):  # fixed order: the sum does not depend on threads
        total += counts[c]
    return total, unks.sum(), lls.sum()


def forward_backward(lat: Lattice, weights, logp, unk_logp: float):
    """Forward-backward over every unit of ``lat`` (weighted by ``weights``, e.g. counts).

    Returns ``(counts, unk, loglik)``: the expected number of uses of each piece
    (array like ``logp``), of unknown edges, and ``sum_u weight_u * log Z_u``
    where ``Z_u`` sums ``exp(score)`` over all segmentations of unit ``u``.
    Pieces not in the lattice's trie get count 0; ``logp`` may hold ``-inf``.
    """
    return _fb_batch(lat, np.asarray(weights, dtype=np.float64), np.asarray(logp, dtype=np.float64),
                     float(unk_logp))


def expected_counts(cps, offsets, weights, trie: Trie, logp, unk_logp: float):
    """:func:`forward_backward` of the units ``cps`` / ``offsets`` under ``trie`` (one E-step;
    EM builds the lattice once, :func:`build_lattice`)."""
    return forward_backward(build_lattice(cps, offsets, trie), weights, logp, unk_logp)


def num_threads() -> int:
    """Threads numba uses for the batch kernels."""
    return numba.get_num_threads()
