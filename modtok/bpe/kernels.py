"""Numba kernels of the merge engine (see :mod:`modtok.bpe.engine` for the idea).

Kernel convention (the same in :mod:`modtok.unigram.lattice`): a kernel's state is
a few flat named tuples of numpy arrays, passed whole, so a new field touches only
the tuple, its constructor and :func:`_grown`, never a kernel signature. A kernel
binds the fields it uses to local names once, at its top, and what it calls inside
its hot loops takes those arrays (or scalars), never the tuple: inside a loop Numba
re-reads a named tuple's array field on every access. On the parity benchmark (run (a)
of ``bench/parity_bpe.py``: 8 pool languages of at most 1 MB, 4,000 compat merges; results
in bench/RESULTS.md, "Parity-aware BPE"; the measurements below were all taken on it)
binding once alone made the merge kernel 2.8x faster. (A helper called once per item of
an outer loop, like a lattice unit, may take tuples and bind them at its top: about 0.1 us
a call.) The tuples are flat
because each call from Python unboxes its arguments: a named tuple costs about
0.5 us on top of its arrays, a nested one more (the heaps as two nested tuples made a
call of :func:`merge` 1.5 us slower, 7% of a parity-aware merge).

The state of the merge engine:

:class:`Words` — the corpus as unique pre-tokens (words) and its current
segmentation. A word's scalars are one row of ``word`` (columns ``W_*``, 64 bytes, so
visiting a word in a merge loads one cache line for all of them): word ``w`` is
``symbols[start : start + length]`` (compacted in place by each merge); it occurs
``count`` times, ``lang_count[w, l]`` of them in language ``l``. ``sole`` is the one
language it occurs in (-1 several, -2 none): most words belong to one language, and
then a per-language update touches one column instead of L. ``visited`` is the stamp
of the last merge that rewrote it.
Per token id: ``token_count`` and ``token_lang_count[id, l]`` in the current
segmentation (the engine grows them before a merge creates an id beyond them);
``tokens[l]`` the tokens of language ``l`` (``tokens[L]``: all languages).
*Tracked* columns (parity-aware BPE's dev set) are segmented like the rest but in no
statistic (a word only there has ``count`` 0): ``tracked[w, t]`` the counts, the row's
``sole_tracked`` as ``sole`` and ``tracked`` its count there (so a word of one tracked
column, or none, never loads its ``tracked`` row), ``tracked_tokens[t]`` the token totals.

``rank[id]``: the tie-break order of the token ids (:mod:`modtok.bpe.engine`).

:class:`Pairs` — pair statistics:
  - the hash table ``table_keys -> table_ids`` (open addressing) maps the key
    ``(a << 32) | b`` to a pair id; pair ``p`` is ``(left[p], right[p])``, with
    ``count[p]`` occurrences (weighted), ``lang_count[p, l]`` per language (no
    columns when per-language counts are off) and ``positions[p]`` positions
    (unweighted), which bounds what a merge of it can create;
  - occurrence lists: per pair a linked list of chunks ``list_head[p] -> chunk``,
    ``chunks[chunk] = (next chunk, n, n word ids)`` (see ``CHUNK_WORDS``) of the
    words that held the pair when it was counted or created. Stale entries are
    skipped at merge time, duplicates via ``visited``; a word is not listed twice in
    a row, which drops the duplicates of one word's repeated pair (22% of the visits
    on the parity benchmark). ``touched_at[p]``: the stamp of the last merge that added to ``p``;
  - heaps: binary max-heaps, one per column ``r``, as four arrays ``(count, tie,
    pair, size)``: entry ``i`` is pair ``pair[i, r]`` pushed with ``count[i, r]`` and
    ``tie[i, r] = rank[a] << 32 | rank[b]`` (the higher count, then the lower tie,
    on top); ``size[r]`` entries. ``heap_*`` (one column) ranks pairs by ``count``,
    ``lang_heap_*`` (column ``l``) by ``lang_count[:, l]`` (no columns when off).
    Lazy: an entry whose count differs from the pair's current count is stale.
    Counts of old pairs only go down, and a pair whose count goes up is pushed
    again, so every live pair has an entry at least as high as its count;
  - ``meta``: ``meta[N_PAIRS]`` pairs and ``meta[N_CHUNKS]`` chunks in use, the merge
    stamp ``meta[STAMP]`` and ``meta[TOTAL_ON]`` 1 while the total heap is kept.

Growth: :func:`init_counts` grows the arrays as it goes; :func:`merge` never does: it
returns -1 when the room it may need (:func:`_room`) is missing, the caller calls
:func:`reserve` and merges again. So a merge returns one integer instead of the whole
state (boxing 19 arrays back into Python costs more than a small merge).
"""

from __future__ import annotations

from collections import namedtuple
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

KEY_SHIFT = 32
_LOW = (1 << KEY_SHIFT) - 1
_EMPTY = -1
_GOLDEN = np.uint64(11400714819323198485)
# An occurrence list is a linked list of chunks, ``chunks[c] = (next chunk, words in it,
# up to CHUNK_WORDS word ids)``, 64 bytes of int32: walking a list costs one dependent
# load per 14 words instead of one per word. Measured on the parity benchmark's replay (separate
# processes, 5 each): merge kernel 0.36 -> 0.31 s against one node per word; 30 words
# a chunk was no better. The append is written out in init_counts and merge: as an inlined
# helper taking the arrays it made the merge kernel 20% slower (0.31 -> 0.37 s).
CHUNK_WORDS = 14
N_PAIRS, N_CHUNKS, STAMP, TOTAL_ON = 0, 1, 2, 3  # the entries of Pairs.meta
INIT_BLOCK = 4096  # positions of a word that init_counts makes room for at a time (see there)

Words = namedtuple("Words", [
    "symbols", "word", "lang_count",
    "token_count", "token_lang_count", "tokens",
    "tracked", "tracked_tokens",
])
# The columns of Words.word. One row per word instead of an array per field: on the parity
# benchmark the merge kernel's loads of a visited word's fields from seven arrays were a quarter of its
# samples (perf, cpu-clock), most of them cache misses.
W_START, W_LENGTH, W_COUNT, W_SOLE, W_SOLE_TRACKED, W_TRACKED, W_VISITED = range(7)
WORD_COLUMNS = 8  # 64 bytes of int64
Pairs = namedtuple("Pairs", [
    "table_keys", "table_ids",
    "left", "right", "count", "lang_count", "positions",
    "list_head", "chunks", "touched_at",
    "heap_count", "heap_tie", "heap_pair", "heap_size",
    "lang_heap_count", "lang_heap_tie", "lang_heap_pair", "lang_heap_size",
    "meta",
])


# ---------------------------------------------------------------- prefetch
@intrinsic
def prefetch(typingctx, arr, index):
    """Ask the CPU to start loading the cache line of ``arr[index]`` (an int, or a tuple
    of ints for a 2-d array); it changes no value. For loads whose address is known
    early but whose use comes after other work: a merge visits words in list order,
    and each visit waits for its word's row and then its symbols (cache misses, one
    after the other: out-of-order execution does not reach the next word's loads)."""
    def codegen(context, builder, sig, args):
        aryty, idxty = sig.args
        ary = context.make_array(aryty)(context, builder, args[0])
        tys, vals = ((idxty.types, cgutils.unpack_tuple(builder, args[1])) if isinstance(idxty, types.BaseTuple)
                     else ((idxty,), [args[1]]))
        inds = [context.cast(builder, v, t, types.intp) for v, t in zip(vals, tys)]
        ptr = cgutils.get_item_pointer(context, builder, aryty, ary, inds)
        i8p, i32 = ir.IntType(8).as_pointer(), ir.IntType(32)
        fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32]),
                                            "llvm.prefetch.p0")
        builder.call(fn, [builder.bitcast(ptr, i8p), i32(0), i32(3), i32(1)])  # read, keep in all caches, data
        return context.get_dummy_value()
    return types.void(arr, index), codegen


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
def _home(table_keys, key):
    """The home slot of ``key`` (:func:`_slot`)."""
    return np.int64((((np.uint64(key) * _GOLDEN) >> np.uint64(32)) * np.uint64(table_keys.shape[0])) >> np.uint64(32))


@njit(cache=True, inline="always")
def _slot(table_keys, key):
    """The slot of ``key``, or the free slot where it goes (linear probing from its home).

    Home: the top log2(size) bits of ``key * 2^64/phi`` (Fibonacci hashing), computed
    as ``(top 32 bits * size) >> 32`` (the same for a power-of-two size, no log2 needed).
    The top bits depend on every bit of the key. (Bits 20 and up, masked, as before,
    ignored all but the lowest bits of the left id: on the parity benchmark the 4,365 starting pairs
    had 649 distinct homes, 5.5 probes a key on average; with the top bits 3,901.)"""
    mask = table_keys.shape[0] - 1
    h = _home(table_keys, key)
    while table_keys[h] != _EMPTY and table_keys[h] != key:
        h = (h + 1) & mask
    return h


@njit(cache=True)
def table_new(n):
    cap = 1024
    while cap < 2 * n:
        cap *= 2
    return np.full(cap, _EMPTY, np.int64), np.zeros(cap, np.int64)


@njit(cache=True)
def table_get(table_keys, table_ids, key):
    h = _slot(table_keys, key)
    return table_ids[h] if table_keys[h] == key else -1


@njit(cache=True)
def table_put(table_keys, table_ids, key, value):
    h = _slot(table_keys, key)
    table_keys[h] = key
    table_ids[h] = value


@njit(cache=True)
def table_of_ranks(keys):
    """A table ``keys[r] -> r``; a repeated key keeps its first rank. One call for a
    whole merge list: put from Python one call per merge, it cost sequential BPE's last
    language of 39 about 290k calls.

    The table is never grown and is read millions of times, mostly for pairs that are
    no merge, so it is kept at most 1/8 full (a failing lookup probes 2.35 slots at
    the usual 1/2, 1.37 at 1/4): :func:`encode_words` on the 118k FLORES dev
    pre-tokens of a 32k-merge model took 0.148 s at 1/2, 0.110 s at 1/8 (4 MB), no
    less at 1/16."""
    table_keys, table_ids = table_new(4 * keys.shape[0])
    for r in range(keys.shape[0] - 1, -1, -1):
        table_put(table_keys, table_ids, keys[r], r)
    return table_keys, table_ids


@njit(cache=True)
def table_reserve(table_keys, table_ids, n):
    """A table with room for ``n`` keys at load <= 1/2 (rehashed if needed)."""
    if 2 * n <= table_keys.shape[0]:
        return table_keys, table_ids
    nk, nv = table_new(n)
    for h in range(table_keys.shape[0]):
        if table_keys[h] != _EMPTY:
            table_put(nk, nv, table_keys[h], table_ids[h])
    return nk, nv


# ---------------------------------------------------------------- state
def _new_heaps(columns: int) -> tuple:
    """Empty heaps ``(count, tie, pair, size)`` of ``columns`` columns (room for one entry)."""
    return (np.zeros((1, columns), np.int64), np.zeros((1, columns), np.int64),
            np.zeros((1, columns), np.int64), np.zeros(columns, np.int64))


def new_pairs(hint: int, nodes: int, languages: int, per_language: bool, total_heap: bool = True) -> Pairs:
    """Empty pair statistics with room for about ``hint`` pairs and ``nodes`` chunks;
    ``total_heap``: keep the heap of total counts (``meta[TOTAL_ON]``, see :func:`_push_live`)."""
    nl = languages if per_language else 0
    table_keys, table_ids = table_new(hint)
    return Pairs(
        table_keys, table_ids,
        np.zeros(hint, np.int32), np.zeros(hint, np.int32), np.zeros(hint, np.int64),
        np.zeros((hint, nl), np.int64), np.zeros(hint, np.int64),
        np.full(hint, -1, np.int64), np.zeros((max(64, nodes), 2 + CHUNK_WORDS), np.int32),
        np.zeros(hint, np.int64),
        *_new_heaps(1), *_new_heaps(nl),
        np.array([0, 0, 0, int(total_heap)], np.int64),
    )


@njit(cache=True, inline="always")
def _fits(st, pairs, nodes, total_entries, lang_entries):
    return (pairs <= st.left.shape[0] and 2 * pairs <= st.table_keys.shape[0] and nodes <= st.chunks.shape[0]
            and total_entries <= st.heap_count.shape[0] and lang_entries <= st.lang_heap_count.shape[0])


@njit(cache=True, inline="always")
def _largest_lang_heap(st):
    """The size of the largest per-language heap (0 when there are none)."""
    m = 0
    for l in range(st.lang_heap_size.shape[0]):
        m = max(m, st.lang_heap_size[l])
    return m


@njit(cache=True)
def _grown(st, pairs, nodes, total_entries, lang_entries):
    """``st`` with room for ``pairs`` pairs, ``nodes`` occurrence chunks and heaps of
    ``total_entries`` (total) and ``lang_entries`` (per language) entries. Callers test
    :func:`_fits` first: building a new tuple costs a reference count per array."""
    table_keys, table_ids = table_reserve(st.table_keys, st.table_ids, pairs)
    return Pairs(
        table_keys, table_ids,
        grow1(st.left, pairs, 0), grow1(st.right, pairs, 0), grow1(st.count, pairs, 0),
        grow_rows(st.lang_count, pairs), grow1(st.positions, pairs, 0),
        grow1(st.list_head, pairs, -1), grow_rows(st.chunks, nodes), grow1(st.touched_at, pairs, 0),
        grow_rows(st.heap_count, total_entries), grow_rows(st.heap_tie, total_entries),
        grow_rows(st.heap_pair, total_entries), st.heap_size,
        grow_rows(st.lang_heap_count, lang_entries), grow_rows(st.lang_heap_tie, lang_entries),
        grow_rows(st.lang_heap_pair, lang_entries), st.lang_heap_size,
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
    """Push onto heap (column) ``r`` of the heap ``(hc, ht, hp, size)`` (count, tie,
    pair, size); capacity is ensured by the caller."""
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
def _heap_best(hc, ht, hp, size, r, counts, rank, left, right):
    """Peek heap ``r`` for the pair with the highest ``counts`` (ties: smallest
    ``(rank[a], rank[b])``). Returns its pid, or -1. Stale entries are refreshed."""
    while size[r] > 0:
        pid = hp[0, r]
        cur = counts[pid]
        if hc[0, r] == cur and cur > 0:
            return pid
        heap_pop(hc, ht, hp, size, r)
        if cur > 0:
            heap_push(hc, ht, hp, size, r, cur, _tie(rank, left[pid], right[pid]), pid)
    return -1


@njit(cache=True)
def _heap_ties(hc, ht, hp, size, r, counts, rank, left, right):
    """Every distinct pid whose ``counts`` equals the maximum (heap order), left in the heap."""
    top = _heap_best(hc, ht, hp, size, r, counts, rank, left, right)
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
                heap_push(hc, ht, hp, size, r, cur, _tie(rank, left[pid], right[pid]), pid)
            continue
        if cur != best:
            break
        heap_pop(hc, ht, hp, size, r)
        if pid not in found:  # a pair may have two valid entries
            found.append(pid)
    out = np.empty(len(found), np.int64)
    for i in range(len(found)):
        out[i] = found[i]
        heap_push(hc, ht, hp, size, r, best, _tie(rank, left[found[i]], right[found[i]]), found[i])
    return out


@njit(cache=True)
def best(st, rank, lang):
    """The pid of the most frequent pair in total (``lang < 0``) or in language ``lang``; -1 if none."""
    if lang < 0:
        return _heap_best(st.heap_count, st.heap_tie, st.heap_pair, st.heap_size, 0,
                          st.count, rank, st.left, st.right)
    return _heap_best(st.lang_heap_count, st.lang_heap_tie, st.lang_heap_pair, st.lang_heap_size, lang,
                      st.lang_count[:, lang], rank, st.left, st.right)


@njit(cache=True)
def ties(st, rank, lang):
    """The pids of every pair tied at the maximum count (total or in ``lang``)."""
    if lang < 0:
        return _heap_ties(st.heap_count, st.heap_tie, st.heap_pair, st.heap_size, 0,
                          st.count, rank, st.left, st.right)
    return _heap_ties(st.lang_heap_count, st.lang_heap_tie, st.lang_heap_pair, st.lang_heap_size, lang,
                      st.lang_count[:, lang], rank, st.left, st.right)


@njit(cache=True, inline="always")
def _room(st, pid, ntokens):
    """What merging ``pid`` can add: ``(pairs, chunks)``. New pairs (and heap pushes,
    one per touched pair) are only ``(x, c)`` and ``(c, y)``: at most 2 x ``positions``
    and at most 2 x the number of token ids ``ntokens``. Every occurrence adds at most
    two list entries, and a touched pair's entries fill its head chunk, then new chunks
    of CHUNK_WORDS: at most one chunk per touched pair plus one per CHUNK_WORDS entries.
    (Sized by positions alone, the first merges of the parity benchmark reserved heap rows for 384k
    pairs where a few hundred appear; and 466k chunks for its first merge, 233k
    positions, where at most 42k can be made: growing the chunks to 1.2M rows took
    51 ms, 8% of its merge loop.)"""
    entries = 2 * st.positions[pid]
    new = min(entries, 2 * ntokens)
    return new, new + entries // CHUNK_WORDS


@njit(cache=True)
def reserve(st, pid, ntokens):
    """``st`` with the room that merging pair ``pid`` may need (token ids < ``ntokens``)."""
    new, nodes = _room(st, pid, ntokens)
    pairs, nodes = st.meta[N_PAIRS] + new, st.meta[N_CHUNKS] + nodes
    total_entries, lang_entries = st.heap_size[0] + new, _largest_lang_heap(st) + new
    if _fits(st, pairs, nodes, total_entries, lang_entries):
        return st
    return _grown(st, pairs, nodes, total_entries, lang_entries)


@njit(cache=True)
def _push_live(st, rank, pids, n):
    """Push pairs ``pids[:n]`` onto every heap where their count is positive (the heap
    of total counts only while ``meta[TOTAL_ON]``: a policy that only asks per language,
    like parity-aware BPE, turns it off; on its benchmark that is 17% of the training
    time). Capacity is ensured by the caller."""
    left, right, count, lang_count = st.left, st.right, st.count, st.lang_count
    gc, gt, gp, gsize = st.heap_count, st.heap_tie, st.heap_pair, st.heap_size
    lc, lt, lp, lsize = st.lang_heap_count, st.lang_heap_tie, st.lang_heap_pair, st.lang_heap_size
    total = st.meta[TOTAL_ON] != 0
    for t in range(n):
        q = pids[t]
        tie = _tie(rank, left[q], right[q])
        if total and count[q] > 0:
            heap_push(gc, gt, gp, gsize, 0, count[q], tie, q)
        for l in range(lang_count.shape[1]):
            if lang_count[q, l] > 0:
                heap_push(lc, lt, lp, lsize, l, lang_count[q, l], tie, q)


# ---------------------------------------------------------------- pairs
@njit(cache=True)
def _new_pair(h, key, table_keys, table_ids, left, right, meta):
    """The pair of key ``key`` (free slot ``h`` of the table) gets the next free id
    ``meta[N_PAIRS]``. Capacity is ensured by the caller.

    The kernels look a pair up inline (``_slot``, then this on a miss) rather than
    through a helper taking the arrays: such a call costs Numba tens of nanoseconds
    even when inlined, and a merge makes up to four lookups per occurrence
    (measured on the parity benchmark: the merge kernel 1.6x slower through a helper)."""
    pid = meta[N_PAIRS]
    meta[N_PAIRS] += 1
    table_keys[h] = key
    table_ids[h] = pid
    left[pid] = key >> KEY_SHIFT
    right[pid] = key & _LOW
    return pid


# ---------------------------------------------------------------- engine steps
@njit(cache=True)
def init_counts(words, rank, st):
    """Count every adjacent pair and every token; fill the occurrence lists and the heaps."""
    symbols, word, word_lang = words.symbols, words.word, words.lang_count
    token_count, token_lang, lang_tokens = words.token_count, words.token_lang_count, words.tokens
    tracked, tracked_tokens = words.tracked, words.tracked_tokens
    table_keys, table_ids, left, right = st.table_keys, st.table_ids, st.left, st.right
    pair_count, pair_lang, positions = st.count, st.lang_count, st.positions
    list_head, chunks, meta = st.list_head, st.chunks, st.meta
    nl = pair_lang.shape[1]
    L = word_lang.shape[1]
    for w in range(word.shape[0]):
        s = word[w, W_START]
        n = word[w, W_LENGTH]
        c = word[w, W_COUNT]
        sole = word[w, W_SOLE]
        ts = word[w, W_SOLE_TRACKED]
        if ts >= 0:
            tracked_tokens[ts] += n * word[w, W_TRACKED]
        elif ts == -1:
            for t in range(tracked.shape[1]):
                tracked_tokens[t] += n * tracked[w, t]
        lang_tokens[L] += n * c
        for i in range(n):
            token_count[symbols[s + i]] += c
        if sole >= 0:
            lang_tokens[sole] += n * c
            for i in range(n):
                token_lang[symbols[s + i], sole] += c
        else:
            for l in range(L):
                lang_tokens[l] += n * word_lang[w, l]
                for i in range(n):
                    token_lang[symbols[s + i], l] += word_lang[w, l]
        # Room for the pairs and chunks the next INIT_BLOCK positions may add, a block at a time.
        # Reserved for the whole word at once, one pre-token of 5 MB (a line without spaces)
        # grew the pair arrays to 5M rows and the chunks to 5M (1.07 GB) for a few thousand
        # pairs. (The state is rebound only between blocks: rebound inside the loop over
        # positions, its arrays were reference-counted at every position, 2.5x slower.)
        for first in range(0, n - 1, INIT_BLOCK):
            m = min(n - 1 - first, INIT_BLOCK)
            if not _fits(st, meta[N_PAIRS] + m, meta[N_CHUNKS] + m, 1, 1):
                st = _grown(st, meta[N_PAIRS] + m, meta[N_CHUNKS] + m, 1, 1)
                table_keys, table_ids, left, right = st.table_keys, st.table_ids, st.left, st.right
                pair_count, pair_lang, positions = st.count, st.lang_count, st.positions
                list_head, chunks = st.list_head, st.chunks
            for i in range(first, first + m):
                key = (np.int64(symbols[s + i]) << KEY_SHIFT) | np.int64(symbols[s + i + 1])
                h = _slot(table_keys, key)
                pid = table_ids[h] if table_keys[h] == key else _new_pair(h, key, table_keys, table_ids,
                                                                          left, right, meta)
                pair_count[pid] += c
                if nl > 0 and sole >= 0:
                    pair_lang[pid, sole] += c
                else:
                    for l in range(nl):
                        pair_lang[pid, l] += word_lang[w, l]
                positions[pid] += 1
                head = list_head[pid]
                # w joins pid's list (once in a row; written out, see CHUNK_WORDS)
                if head < 0 or chunks[head, 1 + chunks[head, 1]] != w:
                    if head < 0 or chunks[head, 1] == CHUNK_WORDS:
                        node = meta[N_CHUNKS]
                        meta[N_CHUNKS] += 1
                        chunks[node, 0] = head
                        chunks[node, 1] = 0
                        list_head[pid] = node
                        head = node
                    fill = chunks[head, 1]
                    chunks[head, 2 + fill] = w
                    chunks[head, 1] = fill + 1
    npairs = meta[N_PAIRS]
    lang_entries = 1  # exact heaps: one entry per pair live in the column
    for l in range(nl):
        lang_entries = max(lang_entries, np.count_nonzero(pair_lang[:npairs, l]))
    if not _fits(st, npairs, meta[N_CHUNKS], npairs, lang_entries):
        st = _grown(st, npairs, meta[N_CHUNKS], npairs, lang_entries)
    _push_live(st, rank, np.arange(npairs), npairs)
    return st


# Inlined into merge: as a call per visited word the merge kernel was 10-13% slower
# (replays of the parity benchmark and 32k-vocab parity-aware runs, interleaved processes).
@njit(cache=True, inline="always")
def merge_word(symbols, s, n, a, b, c, change_key, change_delta, k):
    """Rewrite the word ``symbols[s : s + n]``: every ``a b``, left to right and
    non-overlapping (as HF's ``Word::merge``), becomes ``c``, compacted in place.
    The pair changes go to ``change_key[k:end]`` (pair keys) and ``change_delta[k:end]``
    (-1 / +1), in order: each occurrence ``x a b y`` -> ``x c y`` makes
    ``(x, a) -1, (x, c) +1, (b, y) -1, (c, y) +1`` (so ``end - k <= 2 n``). Returns
    ``(new length, occurrences, end)``.

    In ``a b a b`` the second occurrence's left neighbour is the ``c`` just written,
    so the ``(c, a) +1`` of the first is undone by the second's -1, and ``(c, c) +1``
    remains:

    >>> sym, keys, deltas = np.array([1, 2, 1, 2], np.int32), np.empty(8, np.int64), np.empty(8, np.int64)
    >>> merge_word(sym, 0, 4, 1, 2, 9, keys, deltas, 0), sym[:2].tolist()
    ((2, 2, 4), [9, 9])
    >>> [(int(k) >> KEY_SHIFT, int(k) & 0xFFFFFFFF, int(d)) for k, d in zip(keys[:4], deltas[:4])]
    [(2, 1, -1), (9, 1, 1), (9, 1, -1), (9, 9, 1)]
    """
    i = 0
    j = 0  # symbols[s : s + j] are rewritten
    occurrences = 0
    while i < n:
        if i + 1 < n and symbols[s + i] == a and symbols[s + i + 1] == b:
            if j > 0:
                x = np.int64(symbols[s + j - 1]) << KEY_SHIFT
                change_key[k], change_delta[k] = x | a, -1
                change_key[k + 1], change_delta[k + 1] = x | c, 1
                k += 2
            if i + 2 < n:
                y = np.int64(symbols[s + i + 2])
                change_key[k], change_delta[k] = (b << KEY_SHIFT) | y, -1
                change_key[k + 1], change_delta[k + 1] = (c << KEY_SHIFT) | y, 1
                k += 2
            symbols[s + j] = c
            i += 2
            occurrences += 1
        else:
            symbols[s + j] = symbols[s + i]
            i += 1
        j += 1
    return j, occurrences, k


@njit(cache=True)
def merge(pid, c, words, rank, st):
    """Replace every occurrence of pair ``pid`` = (a, b) by token ``c`` in the words
    that hold it (:func:`merge_word` rewrites a word and says which pairs changed),
    then apply the changes: pair counts (total and per language), positions and
    occurrence lists; token counts and token totals (per language and tracked); push
    the pairs whose count went up.

    Returns the number of occurrences merged (weighted by word counts), or -1,
    having changed nothing, when ``st`` lacks the room the merge may need."""
    new, nodes = _room(st, pid, words.token_count.shape[0])
    if not _fits(st, st.meta[N_PAIRS] + new, st.meta[N_CHUNKS] + nodes, st.heap_size[0] + new,
                 _largest_lang_heap(st) + new):
        return -1
    symbols, word, word_lang, lang_tokens = words.symbols, words.word, words.lang_count, words.tokens
    token_count, token_lang = words.token_count, words.token_lang_count
    tracked, tracked_tokens = words.tracked, words.tracked_tokens
    table_keys, table_ids, left, right = st.table_keys, st.table_ids, st.left, st.right
    pair_count, pair_lang, positions = st.count, st.lang_count, st.positions
    list_head, chunks, touched_at, meta = st.list_head, st.chunks, st.touched_at, st.meta
    nl = pair_lang.shape[1]
    L = word_lang.shape[1]
    a = np.int64(left[pid])
    b = np.int64(right[pid])
    meta[STAMP] += 1
    stamp = meta[STAMP]
    touched = np.empty(new, np.int64)  # pairs whose count went up, each once
    ntouched = 0
    # A chunk's pair changes (merge_word; then the pair and the word of each): a word makes at most
    # 2 x its length and 4 x positions[pid] of them (sized by its length alone, a 5 MB word took
    # 160 MB at each merge).
    most = 4 * positions[pid]
    change_key = np.empty(min(1024, most), np.int64)
    change_delta = np.empty(min(1024, most), np.int64)
    change_word = np.empty(min(1024, most), np.int64)
    change_pair = np.empty(min(1024, most), np.int64)
    merged = 0
    chunk = list_head[pid]
    list_head[pid] = -1
    # A chunk at a time, in three passes over its words (rewrite them, find the pairs of their
    # changes, apply the changes), each pass prefetching what the next one loads (see prefetch):
    # the word rows two chunks ahead (and the chunk after those), this chunk's words' symbols; then
    # the table slots of the changes; then their pairs' counts. On notebook 01's 38-language subset
    # (78k merges, 1.06M words, 21 MB; session 22, interleaved processes, perf samples mapped onto
    # the kernel's code by hand) the kernel took 4.3 s and waited on each word's first symbol (24%
    # of its samples) and on the table slots and counts of the changes (20%): the deeper prefetch
    # of rows and symbols made it 3.8 s, the passes 3.5 s. The change buffers grow once per chunk,
    # never inside the loop over its words: grown there, Numba's reference counts of the arrays
    # (atomic increments, 30% of the samples) made the kernel slower than before. (On the parity
    # benchmark's replay, the rows and one word's symbols ahead made the kernel 15-20% faster;
    # the hash slots of one word's changes, prefetched just before applying them, did not.)
    ahead = chunk
    for _ in range(2):  # the rows of the first two chunks, the third chunk
        if ahead != -1:
            for e in range(chunks[ahead, 1]):
                prefetch(word, (chunks[ahead, 2 + e], 0))
            ahead = chunks[ahead, 0]
    if ahead != -1:
        prefetch(chunks, (ahead, 0))
    while chunk != -1:
        fill = chunks[chunk, 1]
        ahead = chunks[chunk, 0]
        need = 0  # the most changes this chunk's words can make
        for e in range(fill):
            w = chunks[chunk, 2 + e]
            prefetch(symbols, word[w, W_START])
            need += min(2 * word[w, W_LENGTH], most)
        if need > change_key.shape[0]:
            change_key = np.empty(need, np.int64)
            change_delta = np.empty(need, np.int64)
            change_word = np.empty(need, np.int64)
            change_pair = np.empty(need, np.int64)
        after = chunks[ahead, 0] if ahead != -1 else -1
        if after != -1:
            for e in range(chunks[after, 1]):
                prefetch(word, (chunks[after, 2 + e], 0))
            if chunks[after, 0] != -1:
                prefetch(chunks, (chunks[after, 0], 0))
        nchanges = 0
        for e in range(fill):  # 1. rewrite the words of this chunk
            w = chunks[chunk, 2 + e]
            if word[w, W_VISITED] == stamp:  # a word may be listed more than once
                continue
            word[w, W_VISITED] = stamp
            s = word[w, W_START]
            n = word[w, W_LENGTH]
            n, occurrences, end = merge_word(symbols, s, n, a, b, c, change_key, change_delta, nchanges)
            if occurrences == 0:  # a stale entry: the pair left this word
                continue
            word[w, W_LENGTH] = n
            for t in range(nchanges, end):
                change_word[t] = w
            nchanges = end
            # the token changes: a, b -occurrences each, c +occurrences, length -occurrences
            cw = word[w, W_COUNT]
            sole = word[w, W_SOLE]
            ts = word[w, W_SOLE_TRACKED]
            if ts >= 0:
                tracked_tokens[ts] -= occurrences * word[w, W_TRACKED]
            elif ts == -1:
                for t in range(tracked.shape[1]):
                    tracked_tokens[t] -= occurrences * tracked[w, t]
            weighted = occurrences * cw
            merged += weighted
            lang_tokens[L] -= weighted
            token_count[a] -= weighted
            token_count[b] -= weighted
            token_count[c] += weighted
            if sole >= 0:  # then word_lang[w, sole] == cw
                lang_tokens[sole] -= weighted
                token_lang[a, sole] -= weighted
                token_lang[b, sole] -= weighted
                token_lang[c, sole] += weighted
            else:
                for l in range(L):
                    kl = occurrences * word_lang[w, l]
                    lang_tokens[l] -= kl
                    token_lang[a, l] -= kl
                    token_lang[b, l] -= kl
                    token_lang[c, l] += kl
        for t in range(nchanges):
            h = _home(table_keys, change_key[t])
            prefetch(table_keys, h)
            prefetch(table_ids, h)
        for t in range(nchanges):  # 2. the pair of each change (a new pair gets the next id)
            key = change_key[t]
            h = _slot(table_keys, key)
            q = table_ids[h] if table_keys[h] == key else _new_pair(h, key, table_keys, table_ids,
                                                                    left, right, meta)
            change_pair[t] = q
            prefetch(positions, q)
            prefetch(pair_count, q)
        for t in range(nchanges):  # 3. apply the changes
            q = change_pair[t]
            d = change_delta[t]
            w = change_word[t]
            cw = word[w, W_COUNT]
            positions[q] += d
            if cw != 0:  # (a tracked-only word is in no statistic)
                pair_count[q] += d * cw
                sole = word[w, W_SOLE]
                if nl > 0 and sole >= 0:
                    pair_lang[q, sole] += d * cw
                else:
                    for l in range(nl):
                        pair_lang[q, l] += d * word_lang[w, l]
            if d > 0:
                head = list_head[q]
                if head < 0 or chunks[head, 1 + chunks[head, 1]] != w:  # w joins q's list (as in init_counts)
                    if head < 0 or chunks[head, 1] == CHUNK_WORDS:
                        node = meta[N_CHUNKS]
                        meta[N_CHUNKS] += 1
                        chunks[node, 0] = head
                        chunks[node, 1] = 0
                        list_head[q] = node
                        head = node
                    at = chunks[head, 1]
                    chunks[head, 2 + at] = w
                    chunks[head, 1] = at + 1
                if touched_at[q] != stamp:
                    touched_at[q] = stamp
                    touched[ntouched] = q
                    ntouched += 1
        chunk = ahead
    pair_count[pid] = 0
    positions[pid] = 0
    for l in range(nl):
        pair_lang[pid, l] = 0
    _push_live(st, rank, touched, ntouched)
    return merged


@njit(cache=True)
def merge_best(pid, c, words, rank, st):
    """:func:`merge`, then :func:`best` of the total counts: ``(merged, next pid)``, and
    ``(-1, -1)``, having changed nothing, when ``st`` lacks the room (as :func:`merge`).

    One call instead of two per merge of a loop that asks for the total best pair:
    unboxing the state (33 arrays) costs more than a small merge (bpe_phases.py, a
    1.6 MB corpus: 9 us a call at load 8, about the merge kernel's own time)."""
    merged = merge(pid, c, words, rank, st)
    if merged < 0:
        return merged, -1
    return merged, best(st, rank, -1)


# ---------------------------------------------------------------- greedy runs (standard BPE)
# What ends a run of :func:`merge_greedy` (``DONE``: the vocabulary is full, ``NO_PAIR``:
# no pair is left, ``RARE``: the best pair is below min_frequency, ``FULL``: the output
# buffer is full, ``ROOM``: the next merge needs :func:`reserve`, ``CHECK``: the next
# merge's string may exist already, see :class:`Strings`).
DONE, NO_PAIR, RARE, FULL, ROOM, CHECK = range(6)
_BASE = np.uint64(1099511628211)  # the 64-bit FNV prime: odd, so x -> x * _BASE is a bijection
_LOW63 = np.uint64((1 << 63) - 1)
Strings = namedtuple("Strings", ["hash", "power", "table_keys", "table_ids"])
"""The token strings, for the one question a merge loop asks that the engine cannot: does
the string of ``a + b`` exist already (``ab + c`` after ``a + bc``)? Per token id a
polynomial hash of its bytes, ``hash(s) = sum (s[i] + 1) * _BASE^(len - 1 - i)`` (mod 2^64),
and ``power = _BASE^len``; a concatenation's is ``hash(a) * power(b) + hash(b)``, so a new
token's hash costs two multiplications, no bytes. ``table_keys -> table_ids``: the hash
(its low 63 bits, :func:`string_key`: never the table's empty -1) of every merged token -> its
id. (Shifted right instead, ``h`` and ``h + 1`` shared a key: 2-byte strings differing in
their last byte, 207 false hits in 1,744 merges of Nepali.) A hash
that is not in the table is a new string for certain; one that is may be a collision, and
the caller decides with the strings themselves (:func:`merge_greedy` stops there)."""


@njit(cache=True, inline="always")
def string_key(h):
    """The table key of string hash ``h``: its low 63 bits (>= 0)."""
    return np.int64(h & _LOW63)


@njit(cache=True)
def strings_of(parent_a, parent_b, capacity):
    """:class:`Strings` of the bytes and of ids ``256 + i`` made by ``(parent_a[i],
    parent_b[i])`` (each part an earlier id), with room for ``capacity`` ids."""
    n = 256 + parent_a.shape[0]
    capacity = max(capacity, n)
    hashes = np.zeros(capacity, np.uint64)
    power = np.zeros(capacity, np.uint64)
    for x in range(256):
        hashes[x] = np.uint64(x + 1)
        power[x] = _BASE
    table_keys, table_ids = table_new(capacity)
    for i in range(parent_a.shape[0]):
        a, b, c = parent_a[i], parent_b[i], 256 + i
        hashes[c] = hashes[a] * power[b] + hashes[b]
        power[c] = power[a] * power[b]
        table_put(table_keys, table_ids, string_key(hashes[c]), c)
    return Strings(hashes, power, table_keys, table_ids)


@njit(cache=True, inline="always")
def _new_string(hashes, power, table_keys, table_ids, a, b, c):
    """Token ``c``, new, is the string of ``a + b``: its hash and power, and its table entry
    unless the key is taken (a collision keeps the first id)."""
    h = hashes[a] * power[b] + hashes[b]
    hashes[c] = h
    power[c] = power[a] * power[b]
    key = string_key(h)
    if table_get(table_keys, table_ids, key) < 0:
        table_put(table_keys, table_ids, key, c)


@njit(cache=True)
def add_string(strings, a, b, c):
    """:class:`Strings` learns a token ``c`` made in Python as the string of ``a + b``."""
    _new_string(strings.hash, strings.power, strings.table_keys, strings.table_ids, a, b, c)


@njit(cache=True)
def merge_greedy(words, rank, st, strings, next_id, vocab_size, min_frequency, out, forced):
    """Standard BPE's loop in one call: merge the most frequent pair (:func:`best`), again
    and again, into ``next_id, next_id + 1, ...``, until ``vocab_size`` ids exist (or
    another stop, the ``DONE .. CHECK`` above). Each merge ``(a, b) -> c`` goes to the next
    row of ``out`` (n, 3). ``forced`` >= 0: the first merge's id, as the caller decided it
    after a ``CHECK`` (an existing id, or ``next_id`` after a hash collision).

    Returns ``(merges made, why it stopped, the best pair's id, the next free id)``; the
    state needs room for ids < ``vocab_size`` and ``strings`` for ``vocab_size`` ids. One
    call instead of one per merge: the per-merge Python (``standard.learn``,
    ``Engine.merge``, ``BPEModel.add_merge``) and the unboxing of the state (33 arrays)
    were 13 of the 57 us a merge at 128k on the whole pool (bench/bpe_phases.py)."""
    hashes, power, table_keys, table_ids = strings.hash, strings.power, strings.table_keys, strings.table_ids
    left, right, count = st.left, st.right, st.count
    n = 0
    pid = best(st, rank, -1)
    while True:
        if next_id >= vocab_size:
            return n, DONE, pid, next_id
        if pid < 0:
            return n, NO_PAIR, pid, next_id
        if count[pid] < min_frequency:
            return n, RARE, pid, next_id
        if n == out.shape[0]:
            return n, FULL, pid, next_id
        a, b = np.int64(left[pid]), np.int64(right[pid])
        key = string_key(hashes[a] * power[b] + hashes[b])
        c = forced
        if c < 0:
            if table_get(table_keys, table_ids, key) >= 0:
                out[n, 0], out[n, 1], out[n, 2] = a, b, -1
                return n, CHECK, pid, next_id
            c = next_id
        if merge(pid, c, words, rank, st) < 0:
            return n, ROOM, pid, next_id
        if c == next_id:
            _new_string(hashes, power, table_keys, table_ids, a, b, c)
            next_id += 1
        out[n, 0], out[n, 1], out[n, 2] = a, b, c
        n += 1
        forced = -1
        pid = best(st, rank, -1)


@njit(cache=True)
def merge_choose(pid, c, words, rank, st, candidates, lex):
    """:func:`merge`, then parity-aware BPE's next choice (:mod:`modtok.bpe.parity`): of
    the languages ``candidates`` (ascending), the one with the most tracked tokens (its
    dev cost; ties: the first), and that language's most frequent pair -- ties broken as
    :func:`best` does or, when ``lex`` is not empty (compat mode), to the largest
    ``(lex[a], lex[b])``, ``lex`` ranking the token ids by their strings.

    Returns ``(merged, lang, pid)``: ``lang`` -1 when there is no candidate, ``pid`` -1
    when the language has no pair left; ``(-1, -1, -1)``, having changed nothing, when
    ``st`` lacks the room (as :func:`merge`). One call instead of :func:`merge` and
    :func:`ties` and a tie-break in Python per merge (41% of the parity benchmark's merges have tied
    pairs, up to 21)."""
    merged = merge(pid, c, words, rank, st)
    if merged < 0:
        return merged, -1, -1
    tracked_tokens = words.tracked_tokens
    lang = -1
    for l in candidates:
        if lang < 0 or tracked_tokens[l] > tracked_tokens[lang]:
            lang = l
    if lang < 0:
        return merged, -1, -1
    if lex.shape[0] == 0:
        return merged, lang, best(st, rank, lang)
    left, right = st.left, st.right
    top = -1
    for q in ties(st, rank, lang):
        if top < 0 or lex[left[q]] > lex[left[top]] or (
                lex[left[q]] == lex[left[top]] and lex[right[q]] > lex[right[top]]):
            top = q
    return merged, lang, top


@njit(cache=True)
def parity_greedy(words, rank, st, strings, next_id, vocab_size, min_frequency, open_langs, out, costs):
    """Parity-aware BPE's loop in one call (the default mode with the dev-cost chooser,
    :mod:`modtok.bpe.parity`): of the languages ``l`` with ``open_langs[l]`` != 0, the one
    with the most tracked tokens (its dev cost; ties: the lowest index), then that
    language's most frequent pair (:func:`best`), merged into ``next_id``; again and again
    until ``vocab_size`` ids exist or another stop of ``DONE .. CHECK`` (``NO_PAIR``: no
    open language; ``RARE``: the chosen one has no pair of count >= ``min_frequency`` in
    it, which the caller's skip or stop rule decides). Merge ``(a, b) -> c`` of language
    ``l`` goes to row n of ``out`` (n, 4) as ``(a, b, c, l)``, the tracked totals after it
    to row n of ``costs`` (n, tracked columns).

    Returns ``(merges made, why it stopped, the pair it stopped at (-1 none), the next
    free id)``. One call instead of one per merge (:func:`merge_choose`): at 32k on the
    parity benchmark's part (b) the kernel was 28% of the time and the Python around each
    merge (the loop, :meth:`~modtok.bpe.engine.Engine.merge_choose`, ``add_merge``, the
    cost rows) about 60% (bench/RESULTS.md, session 19)."""
    hashes, power, table_keys, table_ids = strings.hash, strings.power, strings.table_keys, strings.table_ids
    left, right, pair_lang = st.left, st.right, st.lang_count
    tracked_tokens = words.tracked_tokens
    n = 0
    while True:
        if next_id >= vocab_size:
            return n, DONE, -1, next_id
        if n == out.shape[0]:
            return n, FULL, -1, next_id
        lang = -1
        for l in range(open_langs.shape[0]):
            if open_langs[l] != 0 and (lang < 0 or tracked_tokens[l] > tracked_tokens[lang]):
                lang = l
        if lang < 0:
            return n, NO_PAIR, -1, next_id
        pid = best(st, rank, lang)
        if pid < 0 or pair_lang[pid, lang] < min_frequency:
            return n, RARE, pid, next_id
        a, b = np.int64(left[pid]), np.int64(right[pid])
        if table_get(table_keys, table_ids, string_key(hashes[a] * power[b] + hashes[b])) >= 0:
            return n, CHECK, pid, next_id
        if merge(pid, next_id, words, rank, st) < 0:
            return n, ROOM, pid, next_id
        _new_string(hashes, power, table_keys, table_ids, a, b, next_id)
        out[n, 0], out[n, 1], out[n, 2], out[n, 3] = a, b, next_id, lang
        for t in range(tracked_tokens.shape[0]):
            costs[n, t] = tracked_tokens[t]
        n += 1
        next_id += 1


@njit(cache=True)
def lex_insert(lex, n, at):
    """Rank a new token id ``n`` at ``at`` among the ranks ``lex[:n]`` (a permutation of
    ``0 .. n-1``): the ranks from ``at`` on move up one. (As numpy, ``lex[lex >= at] +=
    1`` cost 16 us a merge on the parity benchmark, a tenth of its merge loop.)"""
    for i in range(n):
        if lex[i] >= at:
            lex[i] += 1
    lex[n] = at


@njit(cache=True, inline="always")
def _rank_of(table_keys, table_ids, a, b):
    """The rank of merge ``(a, b)``, or -1 when it is none."""
    return table_get(table_keys, table_ids, (np.int64(a) << KEY_SHIFT) | np.int64(b))


@njit(cache=True, inline="always")
def _sift_down(heap, size, i):
    while True:
        j = 2 * i + 1
        if j >= size:
            return
        if j + 1 < size and heap[j + 1] < heap[j]:
            j += 1
        if heap[i] <= heap[j]:
            return
        heap[i], heap[j] = heap[j], heap[i]
        i = j


@njit(cache=True, inline="always")
def _sift_up(heap, i):
    while i > 0:
        j = (i - 1) >> 1
        if heap[j] <= heap[i]:
            return
        heap[i], heap[j] = heap[j], heap[i]
        i = j


@njit(cache=True)
def gather_words(data, starts, lengths, rows):
    """The bytes of words ``rows`` (word ``i`` is ``data[starts[i] : starts[i] + lengths[i]]``),
    back to back: an engine over some of the words of :class:`~modtok.text.lexer.WordCounts`.
    (As numpy, ``np.repeat`` of the offsets and a fancy index over every kept byte: 0.4 s for
    notebook 01's 38-language subset, 20.7M bytes; this, one copy.)

    >>> gather_words(np.array([1, 2, 3, 4, 5], np.uint8), np.array([0, 2, 3]), np.array([2, 1, 2]),
    ...              np.array([0, 2])).tolist()
    [1, 2, 4, 5]
    """
    total = 0
    for r in rows:
        total += lengths[r]
    out = np.empty(total, data.dtype)
    at = 0
    for r in rows:
        n = lengths[r]
        out[at : at + n] = data[starts[r] : starts[r] + n]
        at += n
    return out


@njit(cache=True, nogil=True)  # segment_words runs it in two threads
def encode_words(symbols, word, table_keys, table_ids, results):
    """Segment every word with an existing merge list, in place.

    The table maps ``(a << 32) | b`` to the merge's rank, ``results[rank]`` is its
    output. Rule (HF ``tokenizers``' rule): repeatedly merge the adjacent pair of
    lowest rank, leftmost occurrence first, until no adjacent pair is a merge.

    As HF does it: the word is a linked list of positions and a min-heap holds
    ``rank << 32 | position`` of its mergeable pairs (lowest rank, then leftmost,
    on top); an entry whose pair has changed since it was pushed is skipped. A merge
    looks up only the two pairs it creates. Measured on the 118k distinct pre-tokens of
    16 x 997 FLORES dev lines (22 bytes on average, 2.2M merges applied) with a 32k-merge
    model and the table 1/2 full: looking every adjacent pair up again after each merge
    (~n^2/2 lookups for n symbols) 0.365 s, keeping the pairs' ranks and scanning them
    0.160 s, this heap 0.148 s (0.112 s with :func:`table_of_ranks`' 1/8)."""
    longest = 1
    for w in range(word.shape[0]):
        longest = max(longest, word[w, W_LENGTH])
    nxt = np.empty(longest, np.int64)  # next live position, n at the end
    prv = np.empty(longest, np.int64)  # previous live position, -1 at the start
    pair = np.empty(longest, np.int64)  # rank of the pair starting at a live position, -1 none
    heap = np.empty(3 * longest, np.int64)  # every pair ever formed: n - 1 + 2 per merge
    for w in range(word.shape[0]):
        s = word[w, W_START]
        n = word[w, W_LENGTH]
        size = 0
        for i in range(n):
            nxt[i] = i + 1
            prv[i] = i - 1
            pair[i] = -1
            if i + 1 < n:
                r = _rank_of(table_keys, table_ids, symbols[s + i], symbols[s + i + 1])
                if r != -1:
                    pair[i] = r
                    heap[size] = (r << KEY_SHIFT) | i
                    size += 1
        for i in range(size // 2 - 1, -1, -1):
            _sift_down(heap, size, i)
        live = n
        while size > 0:
            top = heap[0]
            size -= 1
            heap[0] = heap[size]
            _sift_down(heap, size, 0)
            r = top >> KEY_SHIFT
            i = top & _LOW
            if pair[i] != r:
                continue  # stale: the pair at i was merged or changed
            j = nxt[i]
            c = results[r]
            symbols[s + i] = c
            nxt[i] = nxt[j]
            if nxt[j] < n:
                prv[nxt[j]] = i
            pair[j] = -1
            live -= 1
            for at in (prv[i], i):  # the two pairs the merge made
                if at < 0 or nxt[at] >= n:
                    if at >= 0:
                        pair[at] = -1
                    continue
                r2 = _rank_of(table_keys, table_ids, symbols[s + at], symbols[s + nxt[at]])
                pair[at] = r2
                if r2 != -1:
                    heap[size] = (r2 << KEY_SHIFT) | at
                    _sift_up(heap, size)
                    size += 1
        if live < n:  # compact the live symbols to the word's front
            i, k = 0, 0
            while i < n:
                symbols[s + k] = symbols[s + i]
                k += 1
                i = nxt[i]
        word[w, W_LENGTH] = live


SPLIT_WORDS = 50_000  # segment_words: below this many words, one thread


def segment_words(symbols, word, table_keys, table_ids, results) -> None:
    """:func:`encode_words` on two cores: the second half of the words in a second thread
    (the kernel releases the GIL; the halves write disjoint rows and symbols). On notebook 01's
    300k test pieces of 38 languages under a 78k-merge model: 0.33 s in one thread, 0.17 s in
    two (session 22)."""
    if word.shape[0] < SPLIT_WORDS:
        encode_words(symbols, word, table_keys, table_ids, results)
        return
    half = word.shape[0] // 2
    with ThreadPoolExecutor(1) as other:
        second = other.submit(encode_words, symbols, word[half:], table_keys, table_ids, results)
        encode_words(symbols, word[:half], table_keys, table_ids, results)
        second.result()
