/* The C lexer: modtok.text.lexer's state machines, cutting and counting in one pass.

   modtok/text/lexer.py holds the reference of this file's logic twice over: the regex patterns
   (modtok.text.schemes, the ground truth) and the numba machines (_cut and its helpers), which
   the functions below mirror one for one, under the same names, so that a reader can hold the
   two side by side. lexer.py uses this module when it is built and says so when it is not
   (lexer.ENGINE, lexer.ENGINE_NOTE); tests/test_lexer.py checks both against the regex module.

   Design (the evidence is in bench/RESULTS.md, issue 44, sessions 18 and 19):

   - Lines in, counted words out, one call. count() iterates the lines itself (any iterable of
     str) and reads each line's code points straight from the str object (its 1, 2 or 4 bytes a
     code point, PEP 393): no joined copy of the text, no UTF-32 array of the whole input. The
     numba lexer's two passes over arrays of the whole block (the cut writes every pre-token's
     end; a second kernel hashes them) become one loop per line whose buffers stay in the cache.
   - Per line, one preparation pass (prepare_line): each code point, its classes from the
     regex module's table (lexer.class_table(), passed in as buffers: the Unicode data stays the
     regex module's) and its UTF-8 bytes, written at once. An ASCII line is its own UTF-8.
   - The machines (cut) run on the code points and classes, as the numba ones do, with the
     same backtracking by index; each pre-token's UTF-8 bytes are a slice of the line's.
   - Counting: an open-addressing table keyed by the pre-token's UTF-8 bytes (linear probing,
     half full at most, a 32-bit tag of the hash in the slot so that a probe rarely reads an
     entry it does not match). The distinct words come out already in UTF-8, in order of first
     occurrence, with their counts: what lexer.WordCounts holds. A lone surrogate (a Python str
     may hold one) is refused for the arrays (no UTF-8) or passed as its 3 bytes (surrogatepass)
     for the Counter path, which decodes the words back to str.
   - union() and scatter(): the same table over words already counted (a language's parts and
     then every language), for lexer.union's (words x languages) matrix.

   The class bits and machine modes are lexer.py's; CLASS_BITS and MODES are exported so that
   lexer.py checks them at import, and SOURCE_SHA256 (set by setup.py at build time) so that a
   module built from another version of this file is refused instead of used. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#ifndef LEXC_SOURCE_SHA256
#define LEXC_SOURCE_SHA256 "unknown: built without setup.py"
#endif

/* lexer.CLASSES' bits and lexer's kernel modes */
enum { L = 1 << 0, N = 1 << 1, S = 1 << 2, M = 1 << 3, UP = 1 << 4, LO = 1 << 5, DEVA = 1 << 6, SPM = 1 << 7,
       C_S = 1 << 8, C_T = 1 << 9, C_R = 1 << 10, C_E = 1 << 11, C_V = 1 << 12, C_M = 1 << 13, C_L = 1 << 14,
       C_D = 1 << 15 };
enum { LETTERS, O200K, GPT2, WHITESPACE, SENTENCEPIECE };

typedef Py_ssize_t idx;

/* One scheme's machine: lexer.MACHINES' mode and parameters. */
typedef struct {
    int mode;
    uint16_t p_excl, word, q_excl;
    idx digits;
} Machine;

/* ------------------------------------------------------------------ the machines (lexer._cut) */

/* End of the run of characters in `bits` from i. */
static inline idx run(const uint16_t *k, idx i, idx e, uint16_t bits) {
    while (i < e && (k[i] & bits)) i++;
    return i;
}

/* End of the run of characters in none of `bits` from i. */
static inline idx run_not(const uint16_t *k, idx i, idx e, uint16_t bits) {
    while (i < e && !(k[i] & bits)) i++;
    return i;
}

/* End of 's|'t|'re|'ve|'m|'ll|'d at i (case-folded or not), or -1; tried in the pattern's order. */
static inline idx contraction(const uint32_t *cps, const uint16_t *k, idx i, idx e, int folded) {
    if (cps[i] != 39 || i + 1 >= e) return -1;
    if (folded) {
        uint16_t a = k[i + 1], b = i + 2 < e ? k[i + 2] : 0;
        if ((a & C_S) || (a & C_T)) return i + 2;
        if (((a & C_R) && (b & C_E)) || ((a & C_V) && (b & C_E))) return i + 3;
        if (a & C_M) return i + 2;
        if ((a & C_L) && (b & C_L)) return i + 3;
        return (a & C_D) ? i + 2 : -1;
    }
    uint32_t a = cps[i + 1], b = i + 2 < e ? cps[i + 2] : 0;
    if (a == 's' || a == 't' || a == 'm' || a == 'd') return i + 2;
    if (((a == 'r' || a == 'v') && b == 'e') || (a == 'l' && b == 'l')) return i + 3;
    return -1;
}

/* o200k's U*W+C? (lower_first) or U+W*C? from i: its end, or -1. */
static inline idx o200k_word(const uint32_t *cps, const uint16_t *k, idx i, idx e, int lower_first) {
    idx r = run(k, i, e, UP), end;
    if (lower_first) {
        if (r < e && (k[r] & LO)) {
            end = run(k, r, e, LO);
        } else { /* U* gives back characters until W+ can take one (Lm, Lo and marks are in both) */
            idx j = r - 1;
            while (j >= i && !(k[j] & LO)) j--;
            if (j < i) return -1;
            end = j + 1;
        }
    } else {
        if (r == i) return -1;
        end = run(k, r, e, LO);
    }
    idx c = end < e ? contraction(cps, k, end, e, 1) : -1;
    return c > 0 ? c : end;
}

/* The whitespace alternatives at i: \s*[\r\n]+ (when crlf_rule), \s+(?!\S), \s+. */
static inline idx space_end(const uint32_t *cps, const uint16_t *k, idx i, idx e, int crlf_rule) {
    idx r = run(k, i, e, S);
    if (crlf_rule) {
        idx j = r - 1;
        while (j >= i && cps[j] != 10 && cps[j] != 13) j--;
        if (j >= i) return j + 1;
    }
    if (r == e || r - 1 == i) return r;
    return r - 1;
}

/* End of the pre-token that starts at i (line end e). */
static inline idx cut(const uint32_t *cps, const uint16_t *k, idx i, idx e, const Machine *m) {
    uint32_t c = cps[i];
    uint16_t a = k[i];
    uint16_t nxt = i + 1 < e ? k[i + 1] : S; /* past the end: as if whitespace (no class a run needs) */
    idx j;
    if (m->mode == SENTENCEPIECE) return run_not(k, run(k, i, e, SPM), e, SPM);
    if (m->mode == WHITESPACE) {
        if (c == 32 && !(nxt & S)) return run_not(k, i + 1, e, S);
        return !(a & S) ? run_not(k, i, e, S) : space_end(cps, k, i, e, 0);
    }
    if (m->mode == GPT2) {
        j = contraction(cps, k, i, e, 0);
        if (j > 0) return j;
        static const uint16_t letters_then_digits[2] = {L, N};
        for (int b = 0; b < 2; b++) {
            uint16_t bits = letters_then_digits[b];
            if (c == 32 && (nxt & bits)) return run(k, i + 1, e, bits);
            if (a & bits) return run(k, i, e, bits);
        }
        if (c == 32 && !(nxt & m->q_excl)) return run_not(k, i + 1, e, m->q_excl);
        return !(a & m->q_excl) ? run_not(k, i, e, m->q_excl) : space_end(cps, k, i, e, 0);
    }
    int prefix = !(a & m->p_excl) && c != 10 && c != 13;
    if (m->mode == LETTERS) {
        j = contraction(cps, k, i, e, 1);
        if (j > 0) return j;
        if (prefix && (nxt & m->word)) return run(k, i + 1, e, m->word);
        if (a & m->word) return run(k, i, e, m->word);
    } else { /* O200K: both word alternatives, each with its prefix and then without */
        for (int lower_first = 1; lower_first >= 0; lower_first--) {
            j = prefix ? o200k_word(cps, k, i + 1, e, lower_first) : -1;
            if (j < 0) j = o200k_word(cps, k, i, e, lower_first);
            if (j > 0) return j;
        }
    }
    if (a & N) {
        idx r = run(k, i, e, N);
        return r < i + m->digits ? r : i + m->digits;
    }
    idx start = (c == 32 && !(nxt & m->q_excl)) ? i + 1 : i;
    if (!(k[start] & m->q_excl)) {
        j = run_not(k, start, e, m->q_excl);
        while (j < e && (cps[j] == 10 || cps[j] == 13 || (m->mode == O200K && cps[j] == 47))) j++;
        return j;
    }
    return space_end(cps, k, i, e, 1);
}

/* ------------------------------------------------------------------ the table of words */

typedef struct {
    uint32_t tag; /* the hash's high 32 bits */
    uint32_t id1; /* the word's id + 1; 0: an empty slot */
} Slot;

/* A word: its first 16 bytes (zero after its end) beside its count, so that a probe compares
   most words (a pre-token is 6 bytes on average on the pool) without reading the arena. */
typedef struct {
    uint64_t k0, k1;
    int64_t count;
    int64_t at; /* where the word's bytes start in the arena */
    uint64_t hash;
    uint32_t len;
    uint32_t flagged;
} Entry;

/* A word's first 16 bytes as two little-endian words, zero after its end. */
typedef struct {
    uint64_t k0, k1;
} Key;

typedef struct {
    Slot *slots;
    size_t mask;
    Entry *entries;
    size_t n, cap;
    char *arena;
    size_t filled, room;
} Table;

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the C lexer reads words as little-endian integers (the numba lexer counts on other machines)"
#endif

/* The first n bytes of w (n < 8), or w. */
static inline uint64_t low_bytes(uint64_t w, size_t n) {
    return n >= 8 ? w : w & ((1ULL << (8 * n)) - 1);
}

/* 8 bytes at p, read as one integer (p + 8 must be readable: the line buffer has 8 spare bytes). */
static inline uint64_t load8(const unsigned char *p) {
    uint64_t w;
    memcpy(&w, p, 8);
    return w;
}

/* The Key of the n bytes at p, read 8 at a time (padded: 8 readable bytes past the end) or
   copied (a caller's buffer, union's). */
static inline Key key_of(const unsigned char *p, size_t n, int padded) {
    Key k = {0, 0};
    if (!padded) {
        memcpy(&k, p, n < 16 ? n : 16);
        return k;
    }
    k.k0 = low_bytes(load8(p), n);
    if (n > 8) k.k1 = low_bytes(load8(p + 8), n - 8);
    return k;
}

static inline uint64_t rotl5(uint64_t h) {
    return (h << 5) | (h >> 59);
}

/* A 64-bit hash of the n bytes at p (k: their Key): 8 bytes a step (FxHash's rotate-xor-
   multiply), then a final mix so that the low bits (the slot) and the high ones (the tag)
   both depend on every byte. */
static inline uint64_t hash_word(Key k, const unsigned char *p, size_t n, int padded) {
    const uint64_t K = 0x517cc1b727220a95ULL;
    uint64_t h = (rotl5(n * K) ^ k.k0) * K;
    h = (rotl5(h) ^ k.k1) * K;
    for (size_t i = 16; i < n; i += 8) {
        uint64_t w = 0;
        if (padded) w = low_bytes(load8(p + i), n - i);
        else memcpy(&w, p + i, n - i < 8 ? n - i : 8);
        h = (rotl5(h) ^ w) * K;
    }
    h ^= h >> 32;
    h *= 0xd6e8feb86659fd93ULL;
    h ^= h >> 32;
    return h;
}

static int table_init(Table *t) {
    memset(t, 0, sizeof *t);
    t->mask = (1 << 12) - 1;
    t->cap = 1 << 11;
    t->room = 1 << 14;
    t->slots = PyMem_Calloc(t->mask + 1, sizeof(Slot));
    t->entries = PyMem_Malloc(t->cap * sizeof(Entry));
    t->arena = PyMem_Malloc(t->room);
    if (!t->slots || !t->entries || !t->arena) {
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

static void table_free(Table *t) {
    PyMem_Free(t->slots);
    PyMem_Free(t->entries);
    PyMem_Free(t->arena);
}

/* The slots doubled, every entry re-placed by its kept hash. */
static int table_grow(Table *t) {
    size_t mask = 2 * t->mask + 1;
    Slot *slots = PyMem_Calloc(mask + 1, sizeof(Slot));
    if (!slots) {
        PyErr_NoMemory();
        return -1;
    }
    for (size_t id = 0; id < t->n; id++) {
        uint64_t h = t->entries[id].hash;
        size_t s = h & mask;
        while (slots[s].id1) s = (s + 1) & mask;
        slots[s].tag = (uint32_t)(h >> 32);
        slots[s].id1 = (uint32_t)(id + 1);
    }
    PyMem_Free(t->slots);
    t->slots = slots;
    t->mask = mask;
    return 0;
}

/* Add `weight` to the count of the word key[:len] (k its Key, h its hash_word), entered when
   new: its id, and *added set to 1 if it was new; -1 on no memory. */
static inline int64_t table_add(Table *t, const char *key, size_t len, Key k, uint64_t h, int64_t weight,
                                int *added) {
    uint32_t tag = (uint32_t)(h >> 32);
    size_t s = h & t->mask;
    for (;; s = (s + 1) & t->mask) {
        Slot slot = t->slots[s];
        if (!slot.id1) break;
        if (slot.tag == tag) {
            Entry *x = &t->entries[slot.id1 - 1];
            if (x->k0 == k.k0 && x->k1 == k.k1 && x->len == len &&
                (len <= 16 || memcmp(t->arena + x->at + 16, key + 16, len - 16) == 0)) {
                x->count += weight;
                *added = 0;
                return slot.id1 - 1;
            }
        }
    }
    if (t->n == t->cap) {
        Entry *grown = PyMem_Realloc(t->entries, 2 * t->cap * sizeof(Entry));
        if (!grown) return PyErr_NoMemory(), -1;
        t->entries = grown;
        t->cap *= 2;
    }
    while (t->filled + len > t->room) {
        char *grown = PyMem_Realloc(t->arena, 2 * t->room);
        if (!grown) return PyErr_NoMemory(), -1;
        t->arena = grown;
        t->room *= 2;
    }
    memcpy(t->arena + t->filled, key, len);
    size_t id = t->n++;
    t->entries[id] = (Entry){k.k0, k.k1, weight, (int64_t)t->filled, h, (uint32_t)len, 0};
    t->filled += len;
    t->slots[s] = (Slot){tag, (uint32_t)(id + 1)};
    *added = 1;
    if (2 * t->n > t->mask && table_grow(t) < 0) return -1;
    return (int64_t)id;
}

/* ------------------------------------------------------------------ one line */

/* A line's code points, their classes and UTF-8 bytes; off[i]: where code point i's bytes
   start (off[n]: the line's byte length). Grown to the longest line, reused. */
typedef struct {
    uint32_t *cps;
    uint16_t *k;
    int64_t *off;
    unsigned char *u8;
    idx cap;
} Line;

/* The class table (lexer.class_table): the classes of c are blocks[index[c >> 8] * 256 + (c & 255)]. */
typedef struct {
    const int32_t *index;
    const uint16_t *blocks;
} Classes;

static inline uint16_t classes_of(const Classes *cl, uint32_t c) {
    return cl->blocks[(size_t)cl->index[c >> 8] * 256 + (c & 255)];
}

static void line_free(Line *ln) {
    PyMem_Free(ln->cps);
    PyMem_Free(ln->k);
    PyMem_Free(ln->off);
    PyMem_Free(ln->u8);
}

/* Room for a line of n code points (an empty line too: off[0] is written). */
static int line_reserve(Line *ln, idx n) {
    if (n < ln->cap) return 0;
    idx cap = n + 1 > 2 * ln->cap ? n + 1 : 2 * ln->cap;
    line_free(ln);
    ln->cps = PyMem_Malloc(cap * sizeof(uint32_t));
    ln->k = PyMem_Malloc(cap * sizeof(uint16_t));
    ln->off = PyMem_Malloc(cap * sizeof(int64_t));
    ln->u8 = PyMem_Malloc(4 * cap + 8); /* 8 spare bytes: key_of reads 8 at a time */
    ln->cap = cap;
    if (!ln->cps || !ln->k || !ln->off || !ln->u8) {
        ln->cap = 0;
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}


/* Fill the line's arrays from a str's data of `kind` bytes a code point: the index of the
   first lone surrogate when `surrogates` is 0 (no UTF-8 for it), else -1. One function per
   kind (the compiler inlines the constant), so the loop has no branch on the kind. */
static inline idx prepare_kind(Line *ln, const Classes *cl, const void *data, idx n, int kind, int surrogates) {
    unsigned char *o = ln->u8;
    int64_t pos = 0;
    for (idx i = 0; i < n; i++) {
        uint32_t c = kind == 1 ? ((const Py_UCS1 *)data)[i]
                   : kind == 2 ? ((const Py_UCS2 *)data)[i] : ((const Py_UCS4 *)data)[i];
        ln->cps[i] = c;
        ln->k[i] = classes_of(cl, c);
        ln->off[i] = pos;
        if (c < 0x80) {
            o[pos++] = (unsigned char)c;
        } else if (c < 0x800) {
            o[pos] = 0xC0 | c >> 6;
            o[pos + 1] = 0x80 | (c & 0x3F);
            pos += 2;
        } else if (c < 0x10000) {
            if (c >= 0xD800 && c <= 0xDFFF && !surrogates) return i;
            o[pos] = 0xE0 | c >> 12;
            o[pos + 1] = 0x80 | (c >> 6 & 0x3F);
            o[pos + 2] = 0x80 | (c & 0x3F);
            pos += 3;
        } else {
            o[pos] = 0xF0 | c >> 18;
            o[pos + 1] = 0x80 | (c >> 12 & 0x3F);
            o[pos + 2] = 0x80 | (c >> 6 & 0x3F);
            o[pos + 3] = 0x80 | (c & 0x3F);
            pos += 4;
        }
    }
    ln->off[n] = pos;
    return -1;
}

/* prepare_kind for the str `s` (its length n, read): an ASCII line is its own UTF-8. */
static idx prepare_line(Line *ln, const Classes *cl, PyObject *s, idx n, int surrogates) {
    const void *data = PyUnicode_DATA(s);
    switch (PyUnicode_KIND(s)) {
    case PyUnicode_1BYTE_KIND:
        return prepare_kind(ln, cl, data, n, 1, surrogates);
    case PyUnicode_2BYTE_KIND:
        return prepare_kind(ln, cl, data, n, 2, surrogates);
    default:
        return prepare_kind(ln, cl, data, n, 4, surrogates);
    }
}

/* Does any of cps[0:n] fall in one of the ranges (rows lo, hi; inclusive, ascending)? */
static int in_ranges(const uint32_t *cps, idx n, const int64_t *ranges, idx n_ranges) {
    for (idx i = 0; i < n; i++) {
        int64_t c = cps[i];
        if (!n_ranges || c < ranges[0]) continue; /* the ranges ascend: most code points stop here */
        for (idx r = 0; r < n_ranges; r++)
            if (ranges[2 * r] <= c && c <= ranges[2 * r + 1]) return 1;
    }
    return 0;
}

/* Cut the prepared line (n code points) and count its pre-tokens; -1 on no memory, or the
   character where no alternative matched (a bug in a machine, never bad input) as -2 - i.
   One pre-token at a time: the out-of-order core overlaps the next cut with this probe's
   cache misses (a version in stages, every cut first, then every hash with a prefetch of its
   slot, then the probes, took 0.62 s of CPU for the pool's llama3 count against 0.55 s). */
static idx count_line(Table *t, const Line *ln, idx n, const Machine *m, const int64_t *ranges, idx n_ranges) {
    for (idx i = 0, j; i < n; i = j) {
        j = cut(ln->cps, ln->k, i, n, m);
        if (j <= i) return -2 - i;
        const unsigned char *key = ln->u8 + ln->off[i];
        size_t len = (size_t)(ln->off[j] - ln->off[i]);
        Key k = key_of(key, len, 1);
        int added;
        int64_t id = table_add(t, (const char *)key, len, k, hash_word(k, key, len, 1), 1, &added);
        if (id < 0) return -1;
        if (added && n_ranges) t->entries[id].flagged = in_ranges(ln->cps + i, j - i, ranges, n_ranges);
    }
    return 0;
}

/* ------------------------------------------------------------------ Python's side */

/* A read-only buffer of `what`, checked to be C-contiguous with items of `itemsize` bytes. */
static int get_buffer(PyObject *obj, Py_buffer *view, Py_ssize_t itemsize, const char *what, int writable) {
    if (PyObject_GetBuffer(obj, view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0)) < 0)
        return -1;
    if (view->itemsize != itemsize) {
        PyErr_Format(PyExc_TypeError, "_lexc: %s needs items of %zd bytes, got %zd", what, itemsize, view->itemsize);
        PyBuffer_Release(view);
        return -1;
    }
    return 0;
}

/* bytearray objects of the table's words, in order of first occurrence: (data, lengths,
   counts, flagged); data the words' bytes one after another, lengths and counts int64. */
static PyObject *table_arrays(const Table *t) {
    PyObject *data = PyByteArray_FromStringAndSize(t->arena, (Py_ssize_t)t->filled);
    PyObject *lengths = PyByteArray_FromStringAndSize(NULL, (Py_ssize_t)(t->n * 8));
    PyObject *counts = PyByteArray_FromStringAndSize(NULL, (Py_ssize_t)(t->n * 8));
    PyObject *flagged = PyByteArray_FromStringAndSize(NULL, (Py_ssize_t)t->n);
    if (!data || !lengths || !counts || !flagged) {
        Py_XDECREF(data);
        Py_XDECREF(lengths);
        Py_XDECREF(counts);
        Py_XDECREF(flagged);
        return NULL;
    }
    int64_t *len = (int64_t *)PyByteArray_AS_STRING(lengths), *cnt = (int64_t *)PyByteArray_AS_STRING(counts);
    char *flag = PyByteArray_AS_STRING(flagged);
    for (size_t id = 0; id < t->n; id++) {
        len[id] = t->entries[id].len;
        cnt[id] = t->entries[id].count;
        flag[id] = (char)t->entries[id].flagged;
    }
    return Py_BuildValue("(NNNN)", data, lengths, counts, flagged);
}

PyDoc_STRVAR(count_doc,
"count(lines, index, blocks, mode, p_excl, word, q_excl, digits, ranges, surrogates)\n"
"-> ((data, lengths, counts, flagged), bad)\n\n"
"The distinct pre-tokens of the lines (any iterable of str; each line a unit) cut by the\n"
"machine (mode, p_excl, word, q_excl, digits), in order of first occurrence: their UTF-8\n"
"bytes one after another (bytearray), byte lengths and counts (bytearrays of int64), and\n"
"whether each holds a code point in one of `ranges` (int64 rows lo, hi). `bad`: None, or\n"
"(line number, character, the line from there) of the first lone surrogate when `surrogates` is false (the count\n"
"stops there); when true a surrogate is written as its 3 bytes (decode with surrogatepass).");

static PyObject *lexc_count(PyObject *self, PyObject *args) {
    PyObject *lines, *index_obj, *blocks_obj, *ranges_obj;
    Machine m;
    int p_excl, word, q_excl, surrogates;
    if (!PyArg_ParseTuple(args, "OOOiiiinOp", &lines, &index_obj, &blocks_obj, &m.mode, &p_excl, &word, &q_excl,
                          &m.digits, &ranges_obj, &surrogates))
        return NULL;
    m.p_excl = (uint16_t)p_excl, m.word = (uint16_t)word, m.q_excl = (uint16_t)q_excl;
    Py_buffer index, blocks, ranges;
    if (get_buffer(index_obj, &index, 4, "index", 0) < 0) return NULL;
    if (index.len / 4 < (0x110000 >> 8)) {
        PyBuffer_Release(&index);
        return PyErr_Format(PyExc_ValueError, "_lexc: the class index covers %zd blocks, not 4352", index.len / 4);
    }
    if (get_buffer(blocks_obj, &blocks, 2, "blocks", 0) < 0) {
        PyBuffer_Release(&index);
        return NULL;
    }
    if (get_buffer(ranges_obj, &ranges, 8, "ranges", 0) < 0) {
        PyBuffer_Release(&index);
        PyBuffer_Release(&blocks);
        return NULL;
    }
    Classes cl = {index.buf, blocks.buf};
    Table t;
    Line ln = {0};
    PyObject *it = NULL, *s = NULL, *out = NULL, *bad = Py_None;
    Py_INCREF(bad);
    if (table_init(&t) < 0 || !(it = PyObject_GetIter(lines))) goto done;
    for (idx number = 0; (s = PyIter_Next(it)); number++) {
        if (!PyUnicode_Check(s)) {
            PyErr_Format(PyExc_TypeError, "line %zd is %.100s, not str", number, Py_TYPE(s)->tp_name);
            goto done;
        }
#if PY_VERSION_HEX < 0x030C0000
        if (PyUnicode_READY(s) < 0) goto done;
#endif
        idx n = PyUnicode_GET_LENGTH(s);
        if (line_reserve(&ln, n) < 0) goto done;
        idx at = prepare_line(&ln, &cl, s, n, surrogates);
        if (at >= 0) {
            Py_SETREF(bad, Py_BuildValue("(nnN)", number, at, PyUnicode_Substring(s, at, at + 20 < n ? at + 20 : n)));
            if (!bad) goto done;
            Py_CLEAR(s);
            break;
        }
        idx failed = count_line(&t, &ln, n, &m, ranges.buf, ranges.len / 16);
        if (failed == -1) goto done;
        if (failed < -1) {
            PyErr_Format(PyExc_AssertionError, "C lexer: no alternative matched at character %zd of line %zd",
                         -2 - failed, number);
            goto done;
        }
        Py_CLEAR(s);
    }
    if (!PyErr_Occurred()) {
        PyObject *arrays = table_arrays(&t);
        if (arrays) out = Py_BuildValue("(NO)", arrays, bad);
    }
done:
    Py_XDECREF(s);
    Py_XDECREF(it);
    Py_XDECREF(bad);
    line_free(&ln);
    table_free(&t);
    PyBuffer_Release(&index);
    PyBuffer_Release(&blocks);
    PyBuffer_Release(&ranges);
    return out;
}

/* The buffers of one part (data, lengths, counts, column) of union()/scatter(). */
typedef struct {
    Py_buffer data, lengths, counts;
    idx col, rows;
} Part;

static void parts_release(Part *p, idx n) {
    for (idx i = 0; i < n; i++) {
        PyBuffer_Release(&p[i].data);
        PyBuffer_Release(&p[i].lengths);
        PyBuffer_Release(&p[i].counts);
    }
    PyMem_Free(p);
}

/* The parts of a list of (data, lengths, counts, column) tuples; NULL on an error. */
static Part *parts_of(PyObject *list, idx *n_parts) {
    if (!PyList_Check(list)) return PyErr_SetString(PyExc_TypeError, "_lexc: parts must be a list"), NULL;
    idx n = PyList_GET_SIZE(list);
    Part *p = PyMem_Calloc(n ? n : 1, sizeof(Part));
    if (!p) return (Part *)PyErr_NoMemory();
    for (idx i = 0; i < n; i++) {
        PyObject *d, *l, *c;
        if (!PyArg_ParseTuple(PyList_GET_ITEM(list, i), "OOOn", &d, &l, &c, &p[i].col)) goto fail;
        if (get_buffer(d, &p[i].data, 1, "data", 0) < 0) goto fail;
        if (get_buffer(l, &p[i].lengths, 8, "lengths", 0) < 0) {
            PyBuffer_Release(&p[i].data);
            goto fail;
        }
        if (get_buffer(c, &p[i].counts, 8, "counts", 0) < 0) {
            PyBuffer_Release(&p[i].data);
            PyBuffer_Release(&p[i].lengths);
            goto fail;
        }
        p[i].rows = p[i].lengths.len / 8;
        if (p[i].counts.len != p[i].lengths.len) {
            parts_release(p, i + 1);
            return PyErr_Format(PyExc_ValueError, "_lexc: part %zd has %zd lengths and %zd counts", i,
                                p[i].rows, p[i].counts.len / 8), NULL;
        }
        continue;
    fail:
        parts_release(p, i);
        return NULL;
    }
    *n_parts = n;
    return p;
}

/* How many rows ahead union() prefetches a word's slot: the probes of a table of all languages'
   words (32 MB of slots for the whitespace scheme's 1.3M words) were 40% of its time, each a
   cache miss waiting on the one before. */
#define AHEAD 16

PyDoc_STRVAR(union_doc,
"union(parts) -> (data, lengths, ids)\n\n"
"The distinct words of `parts`, a list of (data, lengths, counts, column): each part's words\n"
"(UTF-8, data cut at lengths, int64), in order of first occurrence: their bytes one after\n"
"another, their lengths, and ids[r]: the word of row r of the parts joined (bytearrays of\n"
"int64). scatter() adds the counts up.");

static PyObject *lexc_union(PyObject *self, PyObject *arg) {
    idx n_parts, rows = 0, most = 1, r = 0;
    Part *p = parts_of(arg, &n_parts);
    if (!p) return NULL;
    for (idx i = 0; i < n_parts; i++) rows += p[i].rows, most = p[i].rows > most ? p[i].rows : most;
    Table t = {0};
    PyObject *ids = PyByteArray_FromStringAndSize(NULL, rows * 8), *out = NULL;
    Key *keys = PyMem_Malloc(most * sizeof(Key));
    uint64_t *hashes = PyMem_Malloc(most * sizeof(uint64_t));
    if (!keys || !hashes) PyErr_NoMemory();
    if (!ids || !keys || !hashes || table_init(&t) < 0) goto done;
    int64_t *id_of = (int64_t *)PyByteArray_AS_STRING(ids);
    for (idx i = 0; i < n_parts; i++) {
        const unsigned char *d = p[i].data.buf;
        const int64_t *len = p[i].lengths.buf;
        int64_t at = 0;
        for (idx w = 0; w < p[i].rows; w++) { /* every word's Key and hash first: the probes below prefetch */
            if (len[w] < 0 || at + len[w] > p[i].data.len) {
                PyErr_Format(PyExc_ValueError, "_lexc: part %zd's lengths run past its %zd bytes", i, p[i].data.len);
                goto done;
            }
            keys[w] = key_of(d + at, (size_t)len[w], 0);
            hashes[w] = hash_word(keys[w], d + at, (size_t)len[w], 0);
            at += len[w];
        }
        at = 0;
        for (idx w = 0; w < p[i].rows; w++, r++) {
            if (w + AHEAD < p[i].rows) __builtin_prefetch(&t.slots[hashes[w + AHEAD] & t.mask]);
            int added;
            int64_t id = table_add(&t, (const char *)d + at, (size_t)len[w], keys[w], hashes[w], 0, &added);
            if (id < 0) goto done;
            id_of[r] = id;
            at += len[w];
        }
    }
    PyObject *data = PyByteArray_FromStringAndSize(t.arena, (Py_ssize_t)t.filled);
    PyObject *lengths = PyByteArray_FromStringAndSize(NULL, (Py_ssize_t)(t.n * 8));
    if (data && lengths) {
        int64_t *l = (int64_t *)PyByteArray_AS_STRING(lengths);
        for (size_t id = 0; id < t.n; id++) l[id] = t.entries[id].len;
        out = Py_BuildValue("(NNO)", data, lengths, ids);  /* ids: a new reference, the one below goes */
    } else {
        Py_XDECREF(data);
        Py_XDECREF(lengths);
    }
done:
    table_free(&t);
    Py_XDECREF(ids);
    PyMem_Free(keys);
    PyMem_Free(hashes);
    parts_release(p, n_parts);
    return out;
}

PyDoc_STRVAR(scatter_doc,
"scatter(out, parts, ids)\n\n"
"out[ids[r], column] += counts[r] for every row r of `parts` (union()'s) joined: `out` a\n"
"writable C-contiguous int64 matrix of (words, columns), zero where nothing is added.");

static PyObject *lexc_scatter(PyObject *self, PyObject *args) {
    PyObject *out_obj, *parts_obj, *ids_obj;
    idx n_parts, cols, r = 0;
    if (!PyArg_ParseTuple(args, "OOOn", &out_obj, &parts_obj, &ids_obj, &cols)) return NULL;
    Py_buffer out, ids;
    Part *p = parts_of(parts_obj, &n_parts);
    if (!p) return NULL;
    if (get_buffer(out_obj, &out, 8, "out", 1) < 0) return parts_release(p, n_parts), NULL;
    if (get_buffer(ids_obj, &ids, 8, "ids", 0) < 0) {
        PyBuffer_Release(&out);
        return parts_release(p, n_parts), NULL;
    }
    int64_t *o = out.buf;
    const int64_t *id = ids.buf;
    idx words = cols ? out.len / 8 / cols : 0;
    PyObject *result = Py_None;
    for (idx i = 0; i < n_parts && result; i++) {
        const int64_t *c = p[i].counts.buf;
        if (p[i].col < 0 || p[i].col >= cols) {
            result = PyErr_Format(PyExc_ValueError, "_lexc: column %zd of part %zd outside 0..%zd", p[i].col, i, cols - 1);
            break;
        }
        for (idx w = 0; w < p[i].rows; w++, r++) {
            if (r >= ids.len / 8 || id[r] < 0 || id[r] >= words) {
                result = PyErr_Format(PyExc_ValueError, "_lexc: row %zd has no word in the %zd rows of out", r, words);
                break;
            }
            o[id[r] * cols + p[i].col] += c[w];
        }
    }
    PyBuffer_Release(&out);
    PyBuffer_Release(&ids);
    parts_release(p, n_parts);
    Py_XINCREF(result);
    return result;
}

PyDoc_STRVAR(strings_doc,
"strings(data, lengths) -> list of str: the words (data cut at lengths) decoded from UTF-8,\n"
"a lone surrogate's 3 bytes included (surrogatepass: what count(surrogates=True) writes).");

static PyObject *lexc_strings(PyObject *self, PyObject *args) {
    PyObject *data_obj, *lengths_obj, *out = NULL;
    if (!PyArg_ParseTuple(args, "OO", &data_obj, &lengths_obj)) return NULL;
    Py_buffer data, lengths;
    if (get_buffer(data_obj, &data, 1, "data", 0) < 0) return NULL;
    if (get_buffer(lengths_obj, &lengths, 8, "lengths", 0) < 0) {
        PyBuffer_Release(&data);
        return NULL;
    }
    idx n = lengths.len / 8;
    const int64_t *len = lengths.buf;
    int64_t at = 0;
    out = PyList_New(n);
    for (idx w = 0; out && w < n; w++) {
        PyObject *s = len[w] >= 0 && at + len[w] <= data.len
            ? PyUnicode_DecodeUTF8((const char *)data.buf + at, len[w], "surrogatepass")
            : PyErr_Format(PyExc_ValueError, "_lexc: the lengths run past the %zd bytes", data.len);
        if (!s) Py_CLEAR(out);
        else PyList_SET_ITEM(out, w, s);
        at += len[w];
    }
    PyBuffer_Release(&data);
    PyBuffer_Release(&lengths);
    return out;
}

static PyMethodDef methods[] = {
    {"count", lexc_count, METH_VARARGS, count_doc},
    {"union", lexc_union, METH_O, union_doc},
    {"scatter", lexc_scatter, METH_VARARGS, scatter_doc},
    {"strings", lexc_strings, METH_VARARGS, strings_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_lexc", "modtok.text.lexer's state machines in C (see _lexc.c's head).", -1, methods,
};

PyMODINIT_FUNC PyInit__lexc(void) {
    PyObject *mod = PyModule_Create(&module);
    if (!mod) return NULL;
    if (PyModule_AddStringConstant(mod, "SOURCE_SHA256", LEXC_SOURCE_SHA256) < 0 ||
        PyModule_AddObject(mod, "CLASS_BITS", Py_BuildValue("(iiiiiiiiiiiiiiii)", L, N, S, M, UP, LO, DEVA, SPM, C_S,
                                                            C_T, C_R, C_E, C_V, C_M, C_L, C_D)) < 0 ||
        PyModule_AddObject(mod, "MODES", Py_BuildValue("(iiiii)", LETTERS, O200K, GPT2, WHITESPACE, SENTENCEPIECE)) < 0) {
        Py_DECREF(mod);
        return NULL;
    }
    return mod;
}
