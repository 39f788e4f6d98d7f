# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Exercises — from a 15-line BPE to the papers' rules
#
# Seven rungs. Each has a skeleton to fill in and a check cell; the check runs your function
# and says where your answer *first* differs from modtok's (not just pass or fail). Run a
# check cell as often as you like. The reference solutions are in `exercises/solutions.py`
# at the root of the repository: look there when you are stuck, not before.
#
# Conventions: a token is `bytes`, a merge is a pair of `bytes`. Where several answers are
# equally good, the inputs are given in tie-break order and the first one wins (Python's
# `max` keeps the first maximum).
#
# The notebooks 01–07 show each method step by step on a toy ("learn it small"); these
# exercises ask you to write it.

# %%
from modtok.studies.lessons import exercises as ex

# %% [markdown]
# ## Rung 1 — train BPE on a toy corpus
#
# `train(word_counts, num_merges)` gets `{word: count}` and returns the merges in order.
# Cut every word into its UTF-8 bytes; then, `num_merges` times: count every adjacent pair
# (a word's pairs count as often as the word), take the most frequent pair, and replace it
# by the joined token in every word. Any of the tied pairs is accepted here.

# %%
def train(word_counts: dict[str, int], num_merges: int) -> list[tuple[bytes, bytes]]:
    raise NotImplementedError("rung 1: your BPE training here")


# %%
ex.check_bpe_training(train)

# %% [markdown]
# ## Rung 2 — match modtok's engine merge for merge
#
# Now ties matter: modtok (like Hugging Face's `BpeTrainer`) breaks a tie by the pair whose
# parts come first, the 256 bytes ordered by the code point of their GPT-2 byte-level
# character (`bytes_to_unicode`: printable bytes stand for themselves, the others move to
# U+0100 and up, so a space comes *after* the letters), then merged tokens in the order they
# were made. Change `train` above until it matches on random corpora in three scripts.

# %%
ex.check_engine_match(train)

# %% [markdown]
# ## Rung 3 — encode like Llama-3, id for id
#
# `encode(text, ranks, pattern)`: cut `text` with the regex `pattern` (use the `regex`
# module); a pre-token that is itself a token is that token; otherwise start from its bytes
# and repeatedly join the adjacent pair whose joined bytes have the lowest rank in `ranks`
# (`{bytes: id}`), until no joined pair is a token. The check compares your ids with
# Llama-3's on lines of the Universal Declaration of Human Rights in four scripts.

# %%
def encode(text: str, ranks: dict[bytes, int], pattern: str) -> list[int]:
    raise NotImplementedError("rung 3: your encoder here")


# %%
ex.check_encode(encode)

# %% [markdown]
# ## Rung 4 — the rule of Algorithm 2 (sequential BPE)
#
# Language i is trained on text already cut by the earlier languages' merges. At each step,
# `choose(token_counts, pair_counts, vocab)` sees the count of every token in that text,
# of every adjacent pair, and the language's vocabulary V_i so far. Let f_u be the count of
# the most frequent token *not in* V_i and f_b that of the most frequent pair. If f_u ≥ f_b
# return `("reuse", token)` (an earlier language's token joins V_i, no new merge), else
# `("merge", pair)`.

# %%
def choose(token_counts: dict[bytes, int], pair_counts: dict[tuple[bytes, bytes], int], vocab: set[bytes]):
    raise NotImplementedError("rung 4: Algorithm 2's rule here")


# %%
ex.check_algorithm2(choose)

# %% [markdown]
# ## Rung 5 — Viterbi over a Unigram lattice
#
# `viterbi(text, vocab)`: `vocab` maps a piece to its log-probability; return the
# segmentation of `text` into pieces whose log-probabilities have the highest sum.

# %%
def viterbi(text: str, vocab: dict[str, float]) -> list[str]:
    raise NotImplementedError("rung 5: your Viterbi here")


# %%
ex.check_viterbi(viterbi)

# %% [markdown]
# ## Rung 6 — one EM step
#
# `em_step(corpus, vocab)`: for every word, the expected number of times each piece is used,
# over all segmentations weighted by their probability (forward-backward); multiply by the
# word's count, sum over the corpus, and return each piece's new log-probability,
# log(count / total) (`-inf` for a piece no segmentation uses).

# %%
def em_step(corpus: dict[str, int], vocab: dict[str, float]) -> dict[str, float]:
    raise NotImplementedError("rung 6: your EM step here")


# %%
ex.check_em_step(em_step)

# %% [markdown]
# ## Rung 7 — a parity-aware choice
#
# `choose_language(dev_costs, pair_counts)`: `dev_costs` is each language's number of tokens
# on the parallel dev text, `pair_counts` each language's pair counts in its training text.
# Return `(language, pair)`: the costliest language (ties: the first) that has a pair seen at
# least twice, and its most frequent pair.

# %%
def choose_language(dev_costs: dict[str, int], pair_counts: dict[str, dict[tuple[bytes, bytes], int]]):
    raise NotImplementedError("rung 7: parity-aware BPE's choice here")


# %%
ex.check_parity_choice(choose_language)
