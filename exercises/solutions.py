"""Reference solutions of the exercise ladder (``notebooks/exercises.py``), one per rung.

Kept apart on purpose: the library never imports this file, and the notebook only says
where it is. Each solution is plain Python from scratch (no modtok), small enough to read.
``tests/test_exercises.py`` runs every rung's checker on it.
"""

from __future__ import annotations

import math

import regex

# ---------------------------------------------------------------- rungs 1 and 2: BPE training


def bytes_to_unicode() -> dict[int, str]:
    """GPT-2's byte-level alphabet: printable bytes stand for themselves, the others are moved
    to code points from 256 up (so a space, 0x20, is 'Ġ', U+0120)."""
    keep = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    moved = [b for b in range(256) if b not in keep]
    return {**{b: chr(b) for b in keep}, **{b: chr(256 + i) for i, b in enumerate(moved)}}


def train(word_counts: dict[str, int], num_merges: int) -> list[tuple[bytes, bytes]]:
    """Byte-level BPE: merge the most frequent adjacent pair, ``num_merges`` times.
    Ties: the pair whose parts come first, bytes by their byte-level character, then merged
    tokens in the order they were made (HF BpeTrainer's order, modtok's engine)."""
    table = bytes_to_unicode()
    rank = {bytes([b]): ord(table[b]) for b in range(256)}  # every byte before every merged token
    words = {tuple(bytes([b]) for b in w.encode("utf-8")): n for w, n in word_counts.items()}
    merges = []
    for _ in range(num_merges):
        counts: dict[tuple[bytes, bytes], int] = {}
        for word, n in words.items():
            for pair in zip(word, word[1:]):
                counts[pair] = counts.get(pair, 0) + n
        if not counts:
            break
        a, b = min(counts, key=lambda p: (-counts[p], rank[p[0]], rank[p[1]]))
        merges.append((a, b))
        rank.setdefault(a + b, 0x110000 + len(merges))
        new = {}
        for word, n in words.items():
            out, i = [], 0
            while i < len(word):
                if i + 1 < len(word) and (word[i], word[i + 1]) == (a, b):
                    out.append(a + b)
                    i += 2
                else:
                    out.append(word[i])
                    i += 1
            new[tuple(out)] = new.get(tuple(out), 0) + n
        words = new
    return merges


# ---------------------------------------------------------------- rung 3: encode like Llama-3


def encode(text: str, ranks: dict[bytes, int], pattern: str) -> list[int]:
    """Cut ``text`` with the regex; a pre-token that is a token is that token (Llama-3's
    ``ignore_merges``), else merge the adjacent pair whose joined bytes have the lowest rank,
    until no joined pair is a token (tiktoken's rule)."""
    ids = []
    for piece in regex.findall(pattern, text):
        if piece.encode("utf-8") in ranks:
            ids.append(ranks[piece.encode("utf-8")])
            continue
        parts = [bytes([b]) for b in piece.encode("utf-8")]
        while len(parts) > 1:
            joined = [(ranks.get(a + b, math.inf), i) for i, (a, b) in enumerate(zip(parts, parts[1:]))]
            r, i = min(joined)
            if r == math.inf:
                break
            parts[i : i + 2] = [parts[i] + parts[i + 1]]
        ids += [ranks[p] for p in parts]
    return ids


# ---------------------------------------------------------------- rung 4: Algorithm 2


def choose(token_counts: dict[bytes, int], pair_counts: dict[tuple[bytes, bytes], int], vocab: set[bytes]):
    """Reuse the most frequent token not in V_i if it is at least as frequent as the most
    frequent pair; else learn that pair (ties: the first listed)."""
    outside = {t: n for t, n in token_counts.items() if t not in vocab}
    token = max(outside, key=outside.get, default=None)
    pair = max(pair_counts, key=pair_counts.get, default=None)
    f_u = outside[token] if token is not None else 0
    f_b = pair_counts[pair] if pair is not None else 0
    return ("reuse", token) if f_u >= f_b else ("merge", pair)


# ---------------------------------------------------------------- rungs 5 and 6: Unigram


def viterbi(text: str, vocab: dict[str, float]) -> list[str]:
    """The best segmentation: the best score of every prefix, then walk back."""
    best = [(0.0, 0)] + [(-math.inf, 0)] * len(text)  # (score, start of the last piece)
    for end in range(1, len(text) + 1):
        for start in range(end):
            piece = text[start:end]
            if piece in vocab and best[start][0] + vocab[piece] > best[end][0]:
                best[end] = (best[start][0] + vocab[piece], start)
    path, end = [], len(text)
    while end > 0:
        start = best[end][1]
        path.append(text[start:end])
        end = start
    return path[::-1]


def em_step(corpus: dict[str, int], vocab: dict[str, float]) -> dict[str, float]:
    """Forward-backward per word (probabilities, fine at toy sizes), expected counts weighted by
    the word counts, then log(count / total)."""
    counts = dict.fromkeys(vocab, 0.0)
    for word, n in corpus.items():
        edges = [
            (s, e, word[s:e])
            for s in range(len(word))
            for e in range(s + 1, len(word) + 1)
            if word[s:e] in vocab
        ]
        alpha = [1.0] + [0.0] * len(word)
        for s, e, p in sorted(edges, key=lambda x: x[1]):
            alpha[e] += alpha[s] * math.exp(vocab[p])
        beta = [0.0] * len(word) + [1.0]
        for s, e, p in sorted(edges, key=lambda x: -x[0]):
            beta[s] += math.exp(vocab[p]) * beta[e]
        for s, e, p in edges:
            counts[p] += n * alpha[s] * math.exp(vocab[p]) * beta[e] / alpha[-1]
    total = sum(counts.values())
    return {p: math.log(c / total) if c else -math.inf for p, c in counts.items()}  # a piece no path uses


# ---------------------------------------------------------------- rung 7: parity-aware BPE


def choose_language(dev_costs: dict[str, int], pair_counts: dict[str, dict[tuple[bytes, bytes], int]]):
    """The costliest language (ties: the first) with a pair seen at least twice, and its most
    frequent pair (ties: the first listed)."""
    for lang in sorted(dev_costs, key=lambda l: -dev_costs[l]):  # sorted is stable: ties keep their order
        pairs = pair_counts[lang]
        if pairs and max(pairs.values()) >= 2:
            return lang, max(pairs, key=pairs.get)
    return None
