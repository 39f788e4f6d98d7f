"""Numba kernels of the merge engine (see :mod:`modtok.bpe.engine` for the idea).

Everything is a flat numpy array, so one call does a whole merge:

- words: ``sym[wstart[w] : wstart[w] + wlen[w]]`` are the current symbols of
  unique pre-token ``w`` (compacted in place by each merge), ``wcnt[w]`` its
  total count and ``wlc[w, l]`` its count in language ``l``;
- pairs: an open-addressing hash table ``hkeys/hvals`` maps ``(a << 32) | b`` to
  a pair id; ``pa, pb, pcnt`` hold the pair and its total count, ``plc[pid, l]``
  its count per language (zero columns when per-language pair counts are off);
- occurrences: singly linked lists ``phead[pid] -> node``, ``nword[node]``,
  ``nnext[node]``: the words that held the pair when it was counted or
  created (stale entries are skipped at merge time, duplicates via ``visit``);
- heap: binary max-heap over ``(count, -tie)`` with ``tie = rank[a] << 32 |
  rank[b]``, stored as ``hc`` (count), ``ht`` (tie), ``hp`` (pid); lazy: an entry
  whose count differs from the pair's current count is stale (counts of old
  pairs only go down, new pairs are pushed when created);
- ``meta``: [number of pairs, number of nodes, merge stamp, heap size].
"""

from __future__ import annotations

import numpy as np
from numba import njit

KEY_SHIFT = 32
_EMPTY = -1
_GOLDEN = np.uint64(11400714819323198485)


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
def grow2(arr, need):
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


# ---------------------------------------------------------------- heap
@njit(cache=True, inline="always")
def _above(hc, ht, i, j):
    return hc[i] > hc[j] or (hc[i] == hc[j] and ht[i] < ht[j])


@njit(cache=True, inline="always")
def _swap(hc, ht, hp, i, j):
    hc[i], hc[j] = hc[j], hc[i]
    ht[i], ht[j] = ht[j], ht[i]
    hp[i], hp[j] = hp[j], hp[i]


@njit(cache=True)
def heap_push(hc, ht, hp, meta, count, tie, pid):
    """Capacity is ensured by the caller."""
    i = meta[3]
    meta[3] += 1
    hc[i] = count
    ht[i] = tie
    hp[i] = pid
    while i > 0:
        parent = (i - 1) >> 1
        if _above(hc, ht, i, parent):
            _swap(hc, ht, hp, i, parent)
            i = parent
        else:
            break


@njit(cache=True)
def heap_pop(hc, ht, hp, meta):
    n = meta[3] - 1
    meta[3] = n
    if n == 0:
        return
    hc[0] = hc[n]
    ht[0] = ht[n]
    hp[0] = hp[n]
    i = 0
    while True:
        left = 2 * i + 1
        if left >= n:
            break
        top = left
        if left + 1 < n and _above(hc, ht, left + 1, left):
            top = left + 1
        if _above(hc, ht, top, i):
            _swap(hc, ht, hp, i, top)
            i = top
        else:
            break


@njit(cache=True, inline="always")
def _tie(rank, x, y):
    return (rank[x] << KEY_SHIFT) | rank[y]


@njit(cache=True, inline="always")
def pair_id(x, y, hkeys, hvals, pa, pb, meta):
    """The id of pair ``(x, y)``, created (next free id) if it is new.
    Capacity is ensured by the caller."""
    key = (np.int64(x) << KEY_SHIFT) | np.int64(y)
    h = _slot(hkeys, key)
    if hkeys[h] == key:
        return hvals[h]
    pid = meta[0]
    meta[0] += 1
    hkeys[h] = key
    hvals[h] = pid
    pa[pid] = x
    pb[pid] = y
    return pid


# ---------------------------------------------------------------- engine steps
@njit(cache=True)
def init_counts(sym, wstart, wlen, wcnt, wlc, rank, tcnt, tlc, hkeys, hvals, pa, pb, pcnt, plc,
                phead, nword, nnext, hc, ht, hp, meta):
    """Count every adjacent pair and every token; fill the occurrence lists and the heap."""
    nl = plc.shape[1]
    L = wlc.shape[1]
    for w in range(wstart.shape[0]):
        s = wstart[w]
        n = wlen[w]
        c = wcnt[w]
        for i in range(n):
            t = sym[s + i]
            tcnt[t] += c
            for l in range(L):
                tlc[t, l] += wlc[w, l]
        need = meta[0] + n
        if need > pa.shape[0]:
            pa = grow1(pa, need, 0)
            pb = grow1(pb, need, 0)
            pcnt = grow1(pcnt, need, 0)
            plc = grow2(plc, need)
            phead = grow1(phead, need, -1)
        hkeys, hvals = table_reserve(hkeys, hvals, need)
        if meta[1] + n > nword.shape[0]:
            nword = grow1(nword, meta[1] + n, 0)
            nnext = grow1(nnext, meta[1] + n, 0)
        for i in range(n - 1):
            x = sym[s + i]
            y = sym[s + i + 1]
            pid = pair_id(x, y, hkeys, hvals, pa, pb, meta)
            pcnt[pid] += c
            for l in range(nl):
                plc[pid, l] += wlc[w, l]
            node = meta[1]
            meta[1] += 1
            nword[node] = w
            nnext[node] = phead[pid]
            phead[pid] = node
    npairs = meta[0]
    hc = grow1(hc, npairs + 1, 0)
    ht = grow1(ht, npairs + 1, 0)
    hp = grow1(hp, npairs + 1, 0)
    for pid in range(npairs):
        if pcnt[pid] > 0:
            heap_push(hc, ht, hp, meta, pcnt[pid], _tie(rank, pa[pid], pb[pid]), pid)
    return hkeys, hvals, pa, pb, pcnt, plc, phead, nword, nnext, hc, ht, hp


@njit(cache=True)
def best(hc, ht, hp, pcnt, rank, pa, pb, meta):
    """Peek the pair with the highest count (ties: smallest ``(rank[a], rank[b])``).

    Returns its pid, or -1 when no pair is left. Stale entries are refreshed."""
    while meta[3] > 0:
        pid = hp[0]
        cur = pcnt[pid]
        if hc[0] == cur and cur > 0:
            return pid
        heap_pop(hc, ht, hp, meta)
        if cur > 0:
            heap_push(hc, ht, hp, meta, cur, _tie(rank, pa[pid], pb[pid]), pid)
    return -1


@njit(cache=True, inline="always")
def _change(x, y, delta, w, wcnt, wlc, hkeys, hvals, pa, pb, pcnt, plc, phead, nword, nnext,
            meta, touched, ntouched, tstamp, stamp):
    """Add ``delta`` occurrences of pair (x, y) in word ``w``; a new occurrence also
    enters the pair's list. Capacity is ensured by the caller. Returns ``ntouched``."""
    pid = pair_id(x, y, hkeys, hvals, pa, pb, meta)
    pcnt[pid] += delta * wcnt[w]
    for l in range(plc.shape[1]):
        plc[pid, l] += delta * wlc[w, l]
    if delta > 0:
        node = meta[1]
        meta[1] += 1
        nword[node] = w
        nnext[node] = phead[pid]
        phead[pid] = node
        if tstamp[pid] != stamp:
            tstamp[pid] = stamp
            touched[ntouched] = pid
            ntouched += 1
    return ntouched


@njit(cache=True)
def merge(pid, c, sym, wstart, wlen, wcnt, wlc, rank, tcnt, tlc, visit, hkeys, hvals,
          pa, pb, pcnt, plc, phead, nword, nnext, tstamp, hc, ht, hp, meta):
    """Replace every occurrence of pair ``pid`` = (a, b) by token ``c`` (left to right,
    non-overlapping, as HF's trainer does) in the words that hold it; update pair
    and token counts; push the pairs it created.

    Returns the (possibly grown) arrays and the number of occurrences merged
    (weighted by word counts)."""
    a = pa[pid]
    b = pb[pid]
    meta[2] += 1
    stamp = meta[2]
    L = wlc.shape[1]
    touched = np.empty(64, np.int64)
    ntouched = 0
    merged = 0
    node = phead[pid]
    phead[pid] = -1
    while node != -1:
        w = nword[node]
        node = nnext[node]
        if visit[w] == stamp:
            continue
        visit[w] = stamp
        s = wstart[w]
        n = wlen[w]
        # room for the at most 2 new pairs / nodes per merged occurrence
        need = meta[0] + n
        if need > pa.shape[0]:
            pa = grow1(pa, need, 0)
            pb = grow1(pb, need, 0)
            pcnt = grow1(pcnt, need, 0)
            plc = grow2(plc, need)
            phead = grow1(phead, need, -1)
            tstamp = grow1(tstamp, need, 0)
        hkeys, hvals = table_reserve(hkeys, hvals, need)
        if meta[1] + n > nword.shape[0]:
            nword = grow1(nword, meta[1] + n, 0)
            nnext = grow1(nnext, meta[1] + n, 0)
        if ntouched + n > touched.shape[0]:
            touched = grow1(touched, ntouched + n, 0)
        i = 0
        j = 0
        occ = 0
        while i < n:
            if i + 1 < n and sym[s + i] == a and sym[s + i + 1] == b:
                if j > 0:
                    left = sym[s + j - 1]
                    ntouched = _change(left, a, -1, w, wcnt, wlc, hkeys, hvals, pa, pb, pcnt, plc,
                                       phead, nword, nnext, meta, touched, ntouched, tstamp, stamp)
                    ntouched = _change(left, c, 1, w, wcnt, wlc, hkeys, hvals, pa, pb, pcnt, plc,
                                       phead, nword, nnext, meta, touched, ntouched, tstamp, stamp)
                if i + 2 < n:
                    right = sym[s + i + 2]
                    ntouched = _change(b, right, -1, w, wcnt, wlc, hkeys, hvals, pa, pb, pcnt, plc,
                                       phead, nword, nnext, meta, touched, ntouched, tstamp, stamp)
                    ntouched = _change(c, right, 1, w, wcnt, wlc, hkeys, hvals, pa, pb, pcnt, plc,
                                       phead, nword, nnext, meta, touched, ntouched, tstamp, stamp)
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
            k = occ * wcnt[w]
            merged += k
            tcnt[a] -= k
            tcnt[b] -= k
            tcnt[c] += k
            for l in range(L):
                kl = occ * wlc[w, l]
                tlc[a, l] -= kl
                tlc[b, l] -= kl
                tlc[c, l] += kl
    pcnt[pid] = 0
    for l in range(plc.shape[1]):
        plc[pid, l] = 0
    need = meta[3] + ntouched
    hc = grow1(hc, need, 0)
    ht = grow1(ht, need, 0)
    hp = grow1(hp, need, 0)
    for t in range(ntouched):
        q = touched[t]
        if pcnt[q] > 0:
            heap_push(hc, ht, hp, meta, pcnt[q], _tie(rank, pa[q], pb[q]), q)
    return hkeys, hvals, pa, pb, pcnt, plc, phead, nword, nnext, tstamp, hc, ht, hp, merged


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
