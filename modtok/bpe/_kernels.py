"""Numba kernels of the merge engine (see :mod:`modtok.bpe.engine` for the idea).

The state is two named tuples of flat numpy arrays, so one call does a whole
merge and a new field touches only the tuple, :func:`new_pairs` and
:func:`_grown` — never a kernel signature:

:class:`Words` — the corpus as unique pre-tokens:
  ``sym[wstart[w] : wstart[w] + wlen[w]]`` are the current symbols of word ``w``
  (compacted in place by each merge), ``wcnt[w]`` its total count, ``wlc[w, l]``
  its count in language ``l``, ``wsole[w]`` the one language it occurs in (-1 if
  several, -2 if none: most words belong to one language, and then a per-language
  update touches one column instead of L), ``visit[w]`` the stamp of the last merge that
  rewrote it, ``ntok[l]`` the number of tokens of language ``l`` in the current
  segmentation (``ntok[L]``: all languages); ``wtr[w, t]`` / ``ntr[t]``: counts
  and token totals of *tracked* columns, segmented like the rest but never in a
  statistic (parity-aware BPE's dev set: a word only there has ``wcnt`` 0), and
  ``wtsole[w]`` the one tracked column it has a count in (-1 several, -2 none: a
  training word then never loads its tracked row).

:class:`Pairs` — pair statistics:
  - an open-addressing hash table ``hkeys/hvals`` maps ``(a << 32) | b`` to a
    pair id; ``pa, pb, pcnt`` hold the pair and its total count, ``plc[pid, l]``
    its count per language (zero columns when per-language counts are off),
    ``pocc[pid]`` its number of positions (unweighted), which bounds what a
    merge of it can create;
  - occurrences: per pair a singly linked list of chunks ``phead[pid] -> chunk``,
    ``chunks[chunk] = (next chunk, n, n word ids)`` (see ``CHUNK_WORDS``): the
    words that held the pair when it was counted or created (stale entries are
    skipped at merge time, duplicates via ``visit``; a word is not listed twice
    in a row, which drops the duplicates of one word's repeated pair: 22% of the
    visits on bench8); ``meta[1]`` chunks are in use;
    ``tstamp[pid]``: the last merge that touched the pair;
  - heaps: binary max-heaps over ``(count, -tie)`` with ``tie = rank[a] << 32 |
    rank[b]``, one column per heap: ``gc/gt/gp[:, 0]`` the heap of total
    counts, ``lc/lt/lp[:, l]`` the heap of language ``l``'s counts (no columns
    when off); ``gsize``/``lsize`` the heap sizes. Lazy: an entry whose count differs from the
    pair's current count is stale. Counts of old pairs only go down, and a pair
    whose count goes up is pushed again, so every live pair has an entry at
    least as high as its count;
  - ``meta``: [number of pairs, number of chunks, merge stamp, 1 if the heap of total
    counts is kept].

Speed: inside a loop Numba re-reads a named tuple's array fields on every access
(their data pointers and strides), so the hot kernels bind the fields to local
names once and the helpers they call take arrays, never the tuple. On the
parity-aware benchmark workload (``bench/parity_bpe.py``) that alone made the
merge kernel 2.8x faster.

Growth: :func:`init_counts` grows the arrays as it goes; :func:`merge` never
does — it returns -1 when the room it may need (:func:`_room`) is missing,
the caller calls :func:`reserve` and merges again. So a merge
returns one integer instead of the whole state (boxing 19 arrays back into
Python costs more than a small merge).
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

KEY_SHIFT = 32
_EMPTY = -1
_GOLDEN = np.uint64(11400714819323198485)
# An occurrence list is a linked list of chunks, ``chunks[c] = (next chunk, words in it,
# up to CHUNK_WORDS word ids)``, 64 bytes of int32: walking a list costs one dependent
# load per 14 words instead of one per word. Measured on the bench8 replay (separate
# processes, 5 each): merge kernel 0.36 -> 0.31 s against one node per word; 30 words
# a chunk was no better. The append is written out in init_counts and merge: as an inlined
# helper taking the arrays it made the merge kernel 20% slower (0.31 -> 0.37 s).
CHUNK_WORDS = 14

Words = namedtuple("Words", ["sym", "wstart", "wlen", "wcnt", "wlc", "wsole", "visit", "ntok", "wtr", "wtsole", "ntr"])
Pairs = namedtuple("Pairs", [
    "hkeys", "hvals",
    "pa", "pb", "pcnt", "plc", "pocc", "phead", "tstamp",
    "chunks",
    "gc", "gt", "gp", "gsize",
    "lc", "lt", "lp", "lsize",
    "meta",
])


# ---------------------------------------------------------------- growable arrays
@njit(cache=True)
def grow1(arr, need, fill):
    if need <= arr.shape[0]:
        return arr
    cap = max(need, 2 * arr.shape[0])
    out = np.full(cap, fill, dtype=arr.dtype)
    out[: arr.shape[0]] = arr
    return out


@njit(cache=True)
def grow_rows(arr, need):
    """``arr`` (N, C) with at least ``need`` rows."""
    if need <= arr.shape[0]:
        return arr
    cap = max(need, 2 * arr.shape[0])
    out = np.zeros((cap, arr.shape[1]), dtype=arr.dtype)
    out[: arr.shape[0]] = arr
    return out


# ---------------------------------------------------------------- hash table
@njit(cache=True, inline="always")
def _slot(hkeys, key):
    mask = hkeys.shape[0] - 1
    h = np.int64((np.uint64(key) * _GOLDEN) >> np.uint64(20)) & mask
    while hkeys[h] != _EMPTY and hkeys[h] != key:
        h = (h + 1) & mask
    return h


@njit(cache=True)
def table_new(n):
    cap = 1024
    while cap < 2 * n:
        cap *= 2
    return np.full(cap, _EMPTY, np.int64), np.zeros(cap, np.int64)


@njit(cache=True)
def table_get(hkeys, hvals, key):
    h = _slot(hkeys, key)
    return hvals[h] if hkeys[h] == key else -1


@njit(cache=True)
def table_put(hkeys, hvals, key, value):
    h = _slot(hkeys, key)
    hkeys[h] = key
    hvals[h] = value


@njit(cache=True)
def table_reserve(hkeys, hvals, n):
    """A table with room for ``n`` keys at load <= 1/2 (rehashed if needed)."""
    if 2 * n <= hkeys.shape[0]:
        return hkeys, hvals
    nk, nv = table_new(n)
    for h in range(hkeys.shape[0]):
        if hkeys[h] != _EMPTY:
            table_put(nk, nv, hkeys[h], hvals[h])
    return nk, nv


# ---------------------------------------------------------------- state
def new_pairs(hint: int, nodes: int, languages: int, per_language: bool, total_heap: bool = True) -> Pairs:
    """Empty pair statistics with room for about ``hint`` pairs and ``nodes`` chunks;
    ``total_heap``: keep the heap of total counts (``meta[3]``, see :func:`_push_live`)."""
    nl = languages if per_language else 0
    nodes = max(64, nodes)
    hkeys, hvals = table_new(hint)
    return Pairs(
        hkeys, hvals,
        np.zeros(hint, np.int32), np.zeros(hint, np.int32), np.zeros(hint, np.int64),
        np.zeros((hint, nl), np.int64), np.zeros(hint, np.int64),
        np.full(hint, -1, np.int64), np.zeros(hint, np.int64),
        np.zeros((nodes, 2 + CHUNK_WORDS), np.int32),
        np.zeros((1, 1), np.int64), np.zeros((1, 1), np.int64), np.zeros((1, 1), np.int64),
        np.zeros(1, np.int64),
        np.zeros((1, nl), np.int64), np.zeros((1, nl), np.int64), np.zeros((1, nl), np.int64),
        np.zeros(nl, np.int64),
        np.array([0, 0, 0, int(total_heap)], np.int64),
    )


@njit(cache=True, inline="always")
def _fits(st, pairs, nodes, gheap, lheap):
    return (pairs <= st.pa.shape[0] and 2 * pairs <= st.hkeys.shape[0] and nodes <= st.chunks.shape[0]
            and gheap <= st.gc.shape[0] and lheap <= st.lc.shape[0])


@njit(cache=True, inline="always")
def _lmax(st):
    """The size of the largest per-language heap (0 when there are none)."""
    m = 0
    for l in range(st.lsize.shape[0]):
        m = max(m, st.lsize[l])
    return m


@njit(cache=True)
def _grown(st, pairs, nodes, gheap, lheap):
    """``st`` with room for ``pairs`` pairs, ``nodes`` occurrence chunks and heaps
    of ``gheap`` (total) and ``lheap`` (per language) entries. Callers test
    :func:`_fits` first: building a new tuple costs a reference count per array."""
    hkeys, hvals = table_reserve(st.hkeys, st.hvals, pairs)
    return Pairs(
        hkeys, hvals,
        grow1(st.pa, pairs, 0), grow1(st.pb, pairs, 0), grow1(st.pcnt, pairs, 0),
        grow_rows(st.plc, pairs), grow1(st.pocc, pairs, 0),
        grow1(st.phead, pairs, -1), grow1(st.tstamp, pairs, 0),
        grow_rows(st.chunks, nodes),
        grow_rows(st.gc, gheap), grow_rows(st.gt, gheap), grow_rows(st.gp, gheap), st.gsize,
        grow_rows(st.lc, lheap), grow_rows(st.lt, lheap), grow_rows(st.lp, lheap), st.lsize,
        st.meta,
    )


# ---------------------------------------------------------------- heaps (one per column)
@njit(cache=True, inline="always")
def _above(hc, ht, r, i, j):
    return hc[i, r] > hc[j, r] or (hc[i, r] == hc[j, r] and ht[i, r] < ht[j, r])


@njit(cache=True, inline="always")
def _swap(hc, ht, hp, r, i, j):
    hc[i, r], hc[j, r] = hc[j, r], hc[i, r]
    ht[i, r], ht[j, r] = ht[j, r], ht[i, r]
    hp[i, r], hp[j, r] = hp[j, r], hp[i, r]


@njit(cache=True)
def heap_push(hc, ht, hp, size, r, count, tie, pid):
    """Push onto heap (column) ``r``; capacity is ensured by the caller."""
    i = size[r]
    size[r] += 1
    hc[i, r] = count
    ht[i, r] = tie
    hp[i, r] = pid
    while i > 0:
        parent = (i - 1) >> 1
        if _above(hc, ht, r, i, parent):
            _swap(hc, ht, hp, r, i, parent)
            i = parent
        else:
            break


@njit(cache=True)
def heap_pop(hc, ht, hp, size, r):
    n = size[r] - 1
    size[r] = n
    if n == 0:
        return
    hc[0, r] = hc[n, r]
    ht[0, r] = ht[n, r]
    hp[0, r] = hp[n, r]
    i = 0
    while True:
        left = 2 * i + 1
        if left >= n:
            break
        top = left
        if left + 1 < n and _above(hc, ht, r, left + 1, left):
            top = left + 1
        if _above(hc, ht, r, top, i):
            _swap(hc, ht, hp, r, i, top)
            i = top
        else:
            break


@njit(cache=True, inline="always")
def _tie(rank, x, y):
    return (rank[x] << KEY_SHIFT) | rank[y]


@njit(cache=True)
def _heap_best(hc, ht, hp, size, r, counts, rank, pa, pb):
    """Peek heap ``r`` for the pair with the highest ``counts`` (ties: smallest
    ``(rank[a], rank[b])``). Returns its pid, or -1. Stale entries are refreshed."""
    while size[r] > 0:
        pid = hp[0, r]
        cur = counts[pid]
        if hc[0, r] == cur and cur > 0:
            return pid
        heap_pop(hc, ht, hp, size, r)
        if cur > 0:
            heap_push(hc, ht, hp, size, r, cur, _tie(rank, pa[pid], pb[pid]), pid)
    return -1


@njit(cache=True)
def _heap_ties(hc, ht, hp, size, r, counts, rank, pa, pb):
    """Every distinct pid whose ``counts`` equals the maximum (heap order), left in the heap."""
    top = _heap_best(hc, ht, hp, size, r, counts, rank, pa, pb)
    out = np.empty(0, np.int64)
    if top < 0:
        return out
    best = counts[top]
    found = []
    while size[r] > 0:
        pid = hp[0, r]
        cur = counts[pid]
        if hc[0, r] != cur or cur == 0:  # stale: refresh (it may be a tie too)
            heap_pop(hc, ht, hp, size, r)
            if cur > 0:
                heap_push(hc, ht, hp, size, r, cur, _tie(rank, pa[pid], pb[pid]), pid)
            continue
        if cur != best:
            break
        heap_pop(hc, ht, hp, size, r)
        if pid not in found:  # a pair may have two valid entries
            found.append(pid)
    out = np.empty(len(found), np.int64)
    for i in range(len(found)):
        out[i] = found[i]
        heap_push(hc, ht, hp, size, r, best, _tie(rank, pa[found[i]], pb[found[i]]), found[i])
    return out


@njit(cache=True)
def best(st, rank, lang):
    """The pid of the most frequent pair in total (``lang < 0``) or in language ``lang``; -1 if none."""
    if lang < 0:
        return _heap_best(st.gc, st.gt, st.gp, st.gsize, 0, st.pcnt, rank, st.pa, st.pb)
    return _heap_best(st.lc, st.lt, st.lp, st.lsize, lang, st.plc[:, lang], rank, st.pa, st.pb)


@njit(cache=True)
def ties(st, rank, lang):
    """The pids of every pair tied at the maximum count (total or in ``lang``)."""
    if lang < 0:
        return _heap_ties(st.gc, st.gt, st.gp, st.gsize, 0, st.pcnt, rank, st.pa, st.pb)
    return _heap_ties(st.lc, st.lt, st.lp, st.lsize, lang, st.plc[:, lang], rank, st.pa, st.pb)


@njit(cache=True, inline="always")
def _room(st, pid, nsym):
    """What merging ``pid`` can add: ``(pairs, chunks)``. Every occurrence adds at
    most two list entries (so at most as many chunks), 2 x ``pocc``; new pairs (and
    heap pushes, one per touched pair) are only ``(x, c)`` and ``(c, y)``, so also
    at most 2 x the number of symbols ``nsym``. (Sized by positions alone, the first
    merges of bench8 reserved heap rows for 384k pairs where a few hundred appear.)"""
    nodes = 2 * st.pocc[pid]
    return min(nodes, 2 * nsym), nodes


@njit(cache=True)
def reserve(st, pid, nsym):
    """``st`` with the room that merging pair ``pid`` may need (symbols < ``nsym``)."""
    new, nodes = _room(st, pid, nsym)
    pairs, nodes, gheap, lheap = st.meta[0] + new, st.meta[1] + nodes, st.gsize[0] + new, _lmax(st) + new
    if _fits(st, pairs, nodes, gheap, lheap):
        return st
    return _grown(st, pairs, nodes, gheap, lheap)


@njit(cache=True)
def _push_live(st, rank, pids, n):
    """Push pairs ``pids[:n]`` onto every heap where their count is positive (the heap
    of total counts only while ``meta[3]``: a policy that only asks per language, like
    parity-aware BPE, turns it off; on its benchmark that is 17% of the training time).
    Capacity is ensured by the caller."""
    pa, pb, pcnt, plc = st.pa, st.pb, st.pcnt, st.plc
    gc, gt, gp, gsize, lc, lt, lp, lsize = st.gc, st.gt, st.gp, st.gsize, st.lc, st.lt, st.lp, st.lsize
    nl = plc.shape[1]
    total = st.meta[3] != 0
    for t in range(n):
        q = pids[t]
        tie = _tie(rank, pa[q], pb[q])
        if total and pcnt[q] > 0:
            heap_push(gc, gt, gp, gsize, 0, pcnt[q], tie, q)
        for l in range(nl):
            if plc[q, l] > 0:
                heap_push(lc, lt, lp, lsize, l, plc[q, l], tie, q)


# ---------------------------------------------------------------- pairs
@njit(cache=True)
def _new_pair(h, key, x, y, hkeys, hvals, pa, pb, meta):
    """Pair ``(x, y)`` (key ``key``, free slot ``h`` of the table) gets the next free
    id ``meta[0]``. Capacity is ensured by the caller.

    The kernels look a pair up inline (``_slot``, then this on a miss) rather than
    through a helper taking the arrays: such a call costs Numba tens of nanoseconds
    even when inlined, and a merge makes up to four lookups per occurrence
    (measured on bench8: the merge kernel 1.6x slower through a helper)."""
    pid = meta[0]
    meta[0] += 1
    hkeys[h] = key
    hvals[h] = pid
    pa[pid] = x
    pb[pid] = y
    return pid


# ---------------------------------------------------------------- engine steps
@njit(cache=True)
def init_counts(wd, rank, tcnt, tlc, st):
    """Count every adjacent pair and every token; fill the occurrence lists and the heaps."""
    sym, wstart, wlen, wcnt, wlc, wsole, visit, ntok, wtr, wtsole, ntr = wd
    hkeys, hvals, pa, pb, pcnt, plc, pocc = st.hkeys, st.hvals, st.pa, st.pb, st.pcnt, st.plc, st.pocc
    phead, chunks, meta = st.phead, st.chunks, st.meta
    nl = plc.shape[1]
    L = wlc.shape[1]
    for w in range(wstart.shape[0]):
        s = wstart[w]
        n = wlen[w]
        c = wcnt[w]
        sole = wsole[w]
        for t in range(wtr.shape[1]):
            ntr[t] += n * wtr[w, t]
        ntok[L] += n * c
        for i in range(n):
            tcnt[sym[s + i]] += c
        if sole >= 0:
            ntok[sole] += n * c
            for i in range(n):
                tlc[sym[s + i], sole] += c
        else:
            for l in range(L):
                ntok[l] += n * wlc[w, l]
                for i in range(n):
                    tlc[sym[s + i], l] += wlc[w, l]
        if not _fits(st, meta[0] + n, meta[1] + n, 1, 1):
            st = _grown(st, meta[0] + n, meta[1] + n, 1, 1)
            hkeys, hvals, pa, pb, pcnt, plc, pocc = st.hkeys, st.hvals, st.pa, st.pb, st.pcnt, st.plc, st.pocc
            phead, chunks = st.phead, st.chunks
        for i in range(n - 1):
            x, y = sym[s + i], sym[s + i + 1]
            key = (np.int64(x) << KEY_SHIFT) | np.int64(y)
            h = _slot(hkeys, key)
            pid = hvals[h] if hkeys[h] == key else _new_pair(h, key, x, y, hkeys, hvals, pa, pb, meta)
            pcnt[pid] += c
            if nl > 0 and sole >= 0:
                plc[pid, sole] += c
            else:
                for l in range(nl):
                    plc[pid, l] += wlc[w, l]
            pocc[pid] += 1
            head = phead[pid]
            if head < 0 or chunks[head, 1 + chunks[head, 1]] != w:  # w joins pid's list (once; written out, see CHUNK_WORDS)
                if head < 0 or chunks[head, 1] == CHUNK_WORDS:
                    node = meta[1]
                    meta[1] += 1
                    chunks[node, 0] = head
                    chunks[node, 1] = 0
                    phead[pid] = node
                    head = node
                fill = chunks[head, 1]
                chunks[head, 2 + fill] = w
                chunks[head, 1] = fill + 1
    npairs = meta[0]
    lneed = 1  # exact heaps: one entry per pair live in the row
    for l in range(nl):
        lneed = max(lneed, np.count_nonzero(plc[:npairs, l]))
    if not _fits(st, npairs, meta[1], npairs, lneed):
        st = _grown(st, npairs, meta[1], npairs, lneed)
    _push_live(st, rank, np.arange(npairs), npairs)
    return st


@njit(cache=True)
def merge(pid, c, wd, rank, tcnt, tlc, st):
    """Replace every occurrence of pair ``pid`` = (a, b) by token ``c`` (left to right,
    non-overlapping, as HF's trainer does) in the words that hold it; update pair,
    token and length counts; push the pairs whose count went up.

    Each occurrence ``x a b y`` -> ``x c y`` changes (up to) four pairs:
    (x, a) -1, (x, c) +1, (b, y) -1, (c, y) +1. In ``a b a b`` the second
    occurrence's left neighbour is the ``c`` just written, so the transient
    (c, a) +1 of the first is undone by the second's -1 and (c, c) +1 remains.

    Returns the number of occurrences merged (weighted by word counts), or -1,
    having changed nothing, when ``st`` lacks the room the merge may need."""
    new, nodes = _room(st, pid, tcnt.shape[0])
    if not _fits(st, st.meta[0] + new, st.meta[1] + nodes, st.gsize[0] + new, _lmax(st) + new):
        return -1
    sym, wstart, wlen, wcnt, wlc, wsole, visit, ntok, wtr, wtsole, ntr = wd
    hkeys, hvals, pa, pb, pcnt, plc, pocc = st.hkeys, st.hvals, st.pa, st.pb, st.pcnt, st.plc, st.pocc
    phead, tstamp, chunks, meta = st.phead, st.tstamp, st.chunks, st.meta
    nl = plc.shape[1]
    L = wlc.shape[1]
    a = pa[pid]
    b = pb[pid]
    meta[2] += 1
    stamp = meta[2]
    touched = np.empty(new, np.int64)  # pairs whose count went up, each once
    ntouched = 0
    xs = np.empty(4, np.int64)  # the pair changes of one occurrence: (xs, ys) += ds
    ys = np.empty(4, np.int64)
    ds = np.empty(4, np.int64)
    merged = 0
    chunk = phead[pid]
    phead[pid] = -1
    while chunk != -1:
        for e in range(chunks[chunk, 1]):  # the words of this chunk
            w = chunks[chunk, 2 + e]
            if visit[w] == stamp:  # a word may be listed more than once
                continue
            visit[w] = stamp
            s = wstart[w]
            n = wlen[w]
            cw = wcnt[w]
            sole = wsole[w]
            i = 0
            j = 0
            occ = 0
            while i < n:
                if i + 1 < n and sym[s + i] == a and sym[s + i + 1] == b:
                    k = 0
                    if j > 0:
                        x = sym[s + j - 1]
                        xs[0], ys[0], ds[0] = x, a, -1
                        xs[1], ys[1], ds[1] = x, c, 1
                        k = 2
                    if i + 2 < n:
                        y = sym[s + i + 2]
                        xs[k], ys[k], ds[k] = b, y, -1
                        xs[k + 1], ys[k + 1], ds[k + 1] = c, y, 1
                        k += 2
                    for t in range(k):
                        key = (xs[t] << KEY_SHIFT) | ys[t]
                        h = _slot(hkeys, key)
                        q = hvals[h] if hkeys[h] == key else _new_pair(h, key, xs[t], ys[t], hkeys, hvals, pa, pb, meta)
                        d = ds[t]
                        pocc[q] += d
                        if cw != 0:  # (a tracked-only word is in no statistic)
                            pcnt[q] += d * cw
                            if nl > 0 and sole >= 0:
                                plc[q, sole] += d * cw
                            else:
                                for l in range(nl):
                                    plc[q, l] += d * wlc[w, l]
                        if d > 0:
                            head = phead[q]
                            if head < 0 or chunks[head, 1 + chunks[head, 1]] != w:  # w joins q's list (once; as in init_counts)
                                if head < 0 or chunks[head, 1] == CHUNK_WORDS:
                                    node_q = meta[1]
                                    meta[1] += 1
                                    chunks[node_q, 0] = head
                                    chunks[node_q, 1] = 0
                                    phead[q] = node_q
                                    head = node_q
                                fill = chunks[head, 1]
                                chunks[head, 2 + fill] = w
                                chunks[head, 1] = fill + 1
                            if tstamp[q] != stamp:
                                tstamp[q] = stamp
                                touched[ntouched] = q
                                ntouched += 1
                    sym[s + j] = c
                    j += 1
                    i += 2
                    occ += 1
                else:
                    sym[s + j] = sym[s + i]
                    j += 1
                    i += 1
            if occ > 0:
                wlen[w] = j
                ts = wtsole[w]
                if ts >= 0:
                    ntr[ts] -= occ * wtr[w, ts]
                elif ts == -1:
                    for t in range(wtr.shape[1]):
                        ntr[t] -= occ * wtr[w, t]
                k = occ * cw
                merged += k
                ntok[L] -= k
                tcnt[a] -= k
                tcnt[b] -= k
                tcnt[c] += k
                if sole >= 0:  # then wlc[w, sole] == cw
                    ntok[sole] -= k
                    tlc[a, sole] -= k
                    tlc[b, sole] -= k
                    tlc[c, sole] += k
                else:
                    for l in range(L):
                        kl = occ * wlc[w, l]
                        ntok[l] -= kl
                        tlc[a, l] -= kl
                        tlc[b, l] -= kl
                        tlc[c, l] += kl
        chunk = chunks[chunk, 0]
    pcnt[pid] = 0
    pocc[pid] = 0
    for l in range(nl):
        plc[pid, l] = 0
    _push_live(st, rank, touched, ntouched)
    return merged


@njit(cache=True)
def encode_words(sym, wstart, wlen, hkeys, hvals, results):
    """Segment every word with an existing merge list, in place.

    The table maps ``(a << 32) | b`` to the merge's rank, ``results[rank]`` is its
    output. Rule (HF ``tokenizers``' rule): repeatedly merge the adjacent pair of
    lowest rank, leftmost occurrence first, until no adjacent pair is a merge."""
    for w in range(wstart.shape[0]):
        s = wstart[w]
        n = wlen[w]
        while n > 1:
            best_r = -1
            best_i = -1
            for i in range(n - 1):
                key = (np.int64(sym[s + i]) << KEY_SHIFT) | np.int64(sym[s + i + 1])
                h = _slot(hkeys, key)
                if hkeys[h] == key:
                    r = hvals[h]
                    if best_r == -1 or r < best_r:
                        best_r = r
                        best_i = i
            if best_r == -1:
                break
            sym[s + best_i] = results[best_r]
            for i in range(best_i + 1, n - 1):
                sym[s + i] = sym[s + i + 1]
            n -= 1
        wlen[w] = n
