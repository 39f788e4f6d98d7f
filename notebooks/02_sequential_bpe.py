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
# # 02 — Sequential multilingual BPE
#
# A *modular* tokenizer has one global vocabulary and a sub-vocabulary V_ℓ per
# language ℓ; a model serving languages S uses only the union ∪_{ℓ∈S} V_ℓ. For
# BPE this only works if every union is itself a **proper** BPE: each merge's
# parts must be tokens of the union, and the merges must be applied in one
# global order. The modular-tokenizers paper (§4.2, Algorithm 2) gets this by
# training languages **one after another** on one global merge list M:
#
#     M ← []
#     for language i in the chosen order:
#         V_i ← the 256 bytes
#         segment language i's pre-tokens with M
#         while |V_i| < k:
#             t ← most frequent token not yet in V_i
#             p ← most frequent adjacent pair
#             if count(t) ≥ count(p):  V_i ← V_i ∪ {t} ∪ ancestors(t)   # reuse an earlier language's token
#             else:                    M ← M + [p];  V_i ← V_i ∪ {merge(p)}  # learn a new merge
#
# The budget k counts every token of V_i, the 256 bytes included, so V_i is
# comparable to a monolingual BPE with vocab_size = k. (The paper's Algorithm 2 starts V_i
# empty and lets bytes in as ancestors of the tokens it adds; starting from all 256 bytes is
# our choice, so that every V_i encodes any text, as a byte-level monolingual BPE does.)
#
# The naive alternative, **concatenation**, trains one BPE per language and
# appends their merge lists. Its tokens all exist, but a language's merges were
# never ordered against the other languages' merges, so in a union an earlier
# language's merge can consume the bytes a later language needed.
#
# We measure both with the normalised sequence length against a monolingual BPE
# T_ℓ of the same budget k (trained on the training text, evaluated on the evaluation lines;
# the paper's k is 24k, ours 8k at full size, and it pre-tokenizes by whitespace, as we do here):
#
#     NSL(T, ℓ) = Σ_s |T(s)| / Σ_s |T_ℓ(s)|     over ℓ's evaluation lines s
#
# and show (a) each extracted subtokenizer's fidelity (the paper's Tables 2 and 10),
# (b) n-language unions (Table 7), (c) a word's merge trees (Fig. 2), (d) how the global
# vocabulary grows with languages (App. A.5, Fig. 6).

# %% [markdown]
# ## Learn it small
#
# Sequential BPE (§4.2, Algorithm 2) trains one language after another. Each new
# language's text is first cut with the tokens the earlier languages already learned; then at
# every step it compares the most frequent *token* not yet in its own vocabulary with the most
# frequent *pair*. If the token is at least as frequent, it is reused (taken with the tokens that
# build it, no new merge); otherwise the pair becomes a new merge, shared by everyone. The toy has
# two tiny languages; the last steps show why simply concatenating two monolingual merge lists
# can cut a word of one language that each list alone keeps whole.
#
# ```text
# Sequential-BPE(D_1 … D_N, k):                       # Algorithm 2, §4.2
#   T = BPE(D_1, k);  V_1 = vocab(T)
#   for i = 2 … N:
#     cut D_i with T;  V_i = bytes
#     while |V_i| < k:
#       u, f_u = most frequent token of T(D_i) not in V_i
#       (x, y), f_b = most frequent adjacent pair of T(D_i)
#       if f_u >= f_b: V_i += u and its ancestors      # reuse
#       else:          V_i += xy;  T += merge(x, y)    # learn; re-cut D_i
# ```
#
# Predict first, then step through the run (Next / Back / Play, or the slider).

# %%
from modtok.studies.lessons import sequential as toy
from modtok.ui.stepper import Predict, Stepper

display(Predict(toy.prediction()))
display(Stepper([*toy.trace(), toy.engine_step()]))

# %% [markdown]
# The last step is the same toy through the fast engine: Algorithm 2 through the library's
# `train_sequential` gives the same vocabularies as the naive loop.

# %%
import time

import numpy as np
from IPython.display import display

from modtok.bpe.tree import label, leaves, walk
from modtok.studies import paper_vs_here
from modtok.studies.languages import choose
from modtok.studies.modular_tokenizers.sequential import KINDS, ORDERS, SequentialStudy, global_vs_subtokenizer
from modtok.text import data, scripts
from modtok.text.training import shortfall_lines
from modtok.ui import plots, widgets

plots.setup()
T0 = time.time()
SMOKE = data.is_smoke()  # MODTOK_SMOKE=1 (CI): small sizes, same code
TRAIN_CHARS = 100_000 if SMOKE else 1_000_000  # training characters per language
EVAL_LINES = 300 if SMOKE else None  # evaluation lines per language (None: all, e.g. FLORES devtest's 1012)
K = 1_000 if SMOKE else 8_000  # per-language budget k (bytes included)
SCHEME = "whitespace"  # the paper's pre-tokenization (§3)
# the languages asked for (your manifest's, else the ones this notebook was written for): every one
# is used or named below with the reason it is left out (a wished one the data lacks: its same-script
# stand-in, under its own code); topped up with the first other languages the data has to 3
CHOICE = choose(["eng_Latn", "deu_Latn", "fra_Latn", "rus_Cyrl", "npi_Deva", "swh_Latn"], at_least=3)
print(*CHOICE.lines(), sep="\n")
LANGS = sorted(CHOICE.used)  # by code: the paper's alphabetical training order (§4.2, App. A.3)
corpora = data.default_corpora(LANGS, train_chars=TRAIN_CHARS, eval_lines=EVAL_LINES)
print("data:", corpora.source)
print("languages:", ", ".join(f"{data.lang_name(l)} ({l})" for l in LANGS), f"— k = {K}")

# %% [markdown]
# Every tokenizer (monolingual reference, sequential, concatenation) is trained
# once and cached by the study, so the widgets below only retrain what a new
# setting needs.

# %%
study = SequentialStudy(corpora, LANGS, K, SCHEME)  # counts the pre-tokens of every language
counts = study.counts

# %% [markdown]
# ## (a) Subtokenizer fidelity
#
# Train the sequential tokenizer on the selected languages in the selected
# order, extract each language's subtokenizer (its V_ℓ and the merges whose
# result is in V_ℓ, in global order), and compare it with the monolingual BPE
# of the same budget k. The *global* tokenizer (all languages' tokens) is shown
# for contrast: more tokens usually means shorter sequences, NSL < 1.
# "reused" counts the tokens of V_ℓ that an earlier language had already made.

# %%
def render_fidelity(result):
    title = f"Sequential BPE, k = {result['k']}, order {' → '.join(result['order'])}: NSL vs monolingual BPE"
    return plots.nsl_panel(result["rows"], result["long"], "NSL", title, result["order"])


w_langs = widgets.language_picker(LANGS, LANGS)
w_order = widgets.choice(ORDERS, description="order")
w_k = widgets.budget_slider(K, min=500, max=K, step=100 if SMOKE else 500, description="budget k")
fid = widgets.Panel(study.fidelity, {"langs": w_langs, "order": w_order, "k": w_k}, render_fidelity)
fid.show()

# %% [markdown]
# Each subtokenizer should be almost as good as a dedicated BPE of the same
# size (NSL ≈ 1): the first language *is* a monolingual BPE (up to the
# unigram-rule tie-breaks), later languages reuse earlier tokens where they are
# frequent enough and learn their own merges otherwise.

# %%
full = fid.result
subs = [r["NSL subtokenizer"] for r in full["rows"]]
print(f"subtokenizer NSL: mean {np.mean(subs):.3f}, max {max(subs):.3f} (the paper's figure: table at the end)")
print(global_vs_subtokenizer(full["rows"]), "(more merges need not mean fewer tokens: a finding, not a law)")

# %% [markdown]
# ## (b) n-language unions: sequential vs concatenation
#
# For n = 1..4 we draw random subsets of n languages in a random order (seeded),
# train both tokenizers on them, and encode each language of the subset with the
# **union** subtokenizer. Each point is the mean NSL over the subset's languages.
# The table gives, per n and kind, Table 7's two numbers as we measure them: the mean NSL over
# the subsets and their languages, with its 95% interval over evaluation lines (a paired
# bootstrap: line i of every language, subset and kind drawn together), and our std across
# languages (each language's mean NSL over the subsets holding it), beside which the paper prints
# ±.01 for sequential and ±.25-.27 for concatenation at n = 2-4. That std is the tolerance of the
# union rules at the end: our mean must lie within the paper's mean ± the paper's std.
# Concatenation gets every language's monolingual tokens, yet it cannot apply
# them as a monolingual BPE would once another language's merges come first.
# The paper's Table 7 is this experiment on its 21 European languages (19 in Latin script):
# sequential 1.00-0.99 and concatenation 1.22-1.33 for n = 2-4. Our languages span several
# scripts, where merges of one script cannot take the bytes of another, so concatenation can
# lose less here: the table at the end compares the two.

# %%
TRIALS = 3 if SMOKE else 5
NS = [n for n in (1, 2, 3, 4) if n <= len(LANGS)]
union_lines = {n: study.union_lines(n, TRIALS) for n in NS}  # tokens of each evaluation line, per subset
spread = {n: study.unions(n, TRIALS) for n in NS}
plots.union_boxes(spread, title=f"Union subtokenizers over {TRIALS} random subsets/orders (k = {K})").show()
UNIONS = study.union_table(union_lines)
display(plots.table(UNIONS))

# %% [markdown]
# ## (c) The merge hierarchy of a word
#
# How is a word built under each tokenizer? Below, each panel is the merge tree
# of the word (its pre-tokens) under the **monolingual** BPE of its language,
# the **concatenated** tokenizer and the **sequential** tokenizer of a union of
# languages: every box is a token, split into the two tokens its merge joined,
# down to the bytes; the top row under the word is the segmentation. Bytes that
# are not a whole UTF-8 character are shown as hex, e.g. `<e0 a4>`; `␣` is a space.
#
# Red boxes are tokens the language's own tokenizers make that cannot form
# under concatenation, orange boxes the concatenated merge that prevents them:
# the first merge (in the concatenated run on the word) that takes bytes across
# the border of a sub-token they need. The text says which language's merge list
# it came from. Sequential BPE does not have this problem: the later language
# was trained on text already segmented by the earlier languages' merges.
#
# The default word is found on the data: the most frequent word of the second
# language whose concatenated segmentation is longer than the sequential one
# and differs from the monolingual one (`study.find_word`): the first language
# and the next one in the same script (else the second language) form the union; we scan its most
# frequent words (leading space, ≥ 4 letters) for one where the three trees differ as described.
# Where no such word exists (e.g. no two languages share a script) its most frequent word is shown.

# %%
LANG_A, LANG_B = study.explorer_pair()
WORD, DIFFERS = study.default_word(LANG_B, (LANG_A, LANG_B))
print(f"default word: {WORD!r} ({data.lang_name(LANG_B)}), union {LANG_A} + {LANG_B}"
      + ("" if DIFFERS else " — no word of the data is cut longer by concatenation: showing the most frequent one"))

w_word = widgets.text(WORD.strip(), description="word")
w_space = widgets.toggle(WORD.startswith(" "), description="after a space (as inside a sentence: ␣ in the trees)")
w_lang = widgets.choice(LANGS, LANG_B, description="language of the word")
w_union = widgets.language_picker(LANGS, (LANG_A, LANG_B), description="union")
explorer = widgets.Panel(study.explore, {"word": w_word, "space": w_space, "lang": w_lang, "union": w_union},
                         plots.word_explorer)
explorer.show()

# %%
res = explorer.result
for reason in res["reasons"]:
    print(reason)

# %% [markdown]
# In a script whose characters take several bytes (Devanagari, Thai: 3 bytes each; Chinese:
# 3, some 4), the lower levels of a tree are partial characters, labelled in hex. Here a word of
# one language in its own script, alone (so the three tokenizers agree up to the unigram-rule
# ties): the first language written without spaces, else the last non-Latin one.
# `study.script_word` takes its most frequent word in its own script (never a Latin name
# inside Chinese text); a script written without spaces has no words under the whitespace
# scheme, only phrase-long pre-tokens, so it shows the first characters of one and says so.

# %%
LANG_X = next((l for l in LANGS if data.written_without_spaces(l)), None) or next(
    (l for l in reversed(LANGS) if data.script_of(l) not in ("Latn", "Cyrl")), LANGS[-1])
word_x, what_x = study.script_word(LANG_X)
print(f"{data.lang_name(LANG_X)} ({LANG_X}): {word_x!r} — {what_x}")
if word_x:
    tree_x = study.explore(word_x, word_x.startswith(" "), LANG_X, (LANG_X,))
    plots.concatenation_trees(tree_x).show()
    labels_x = [label(n.token) for top in tree_x["traces"]["monolingual"][0] for n in walk(top)]
    print("its monolingual tree, top down:", labels_x[:12])

# %% [markdown]
# ## (d) Global vocabulary size vs number of languages
#
# Adding a language adds at most k − 256 tokens to the global vocabulary, fewer
# when it reuses tokens (the paper's App. A.5, Fig. 6: near-linear growth; Table 10's Seq. 8k
# holds 116k tokens for 21 languages, about 0.69 of 21 x 8k) or when its text runs out of pairs
# before k: "no sharing, as trained" adds up the languages' own vocabularies, so that what sharing
# saved is told apart from what the text never gave. Sequential BPE is deterministic and language i only
# depends on the languages before it, so the global vocabulary after n languages
# is the union V_1 ∪ … ∪ V_n of the run in (a). For concatenation we count the
# distinct tokens of the n monolingual vocabularies.

# %%
res_all, growth = study.sequential(tuple(LANGS)), study.vocab_growth()
print(*shortfall_lines(res_all.budgets, {lang: len(ids) for lang, ids in res_all.lang_to_ids.items()}, "tokens",
                       "its text ran out of pairs and tokens"), sep="\n")  # a budget the text cannot fill: said
plots.vocab_growth(growth, title=f"Global vocabulary vs languages ({' → '.join(LANGS)}, k = {K})").show()
display(plots.table(growth))
seq_sizes, bound = [r["sequential"] for r in growth], [r["no sharing"] for r in growth]

# %%
print(f"notebook ran in {time.time() - T0:.0f} s")

# %% [markdown]
# ## Paper vs here
#
# The paper's claims this notebook measures, its figures (`modtok/studies/paper_figures.toml`,
# each with its table) and ours, computed from (a), (b) and (d) above; the settings columns are
# the paper's and ours (`study.setting`, from this run's configuration). Ours differ in k (8k
# vs 24k), the languages (and their scripts) and the training text. A "matches ±T" rule uses the
# tolerance its parenthesis names: here every T is the paper's (Table 7's std across languages,
# its printed precision), so our point value is compared with the paper's figure ± T, and the
# interval column shows ours over lines without widening T (our std across languages is in the
# union table of (b)).

# %%
HERE = study.measured(full, union_lines, growth)
print(study.cache_note())  # which of this run's results were read back from the results cache
plots.table(paper_vs_here.table("modular_tokenizers_sequential", HERE, study.setting(TRIALS),
                                study.reasons(HERE, full, growth, UNIONS)))


# %% [markdown]
# ## Checks
#
# What must hold on any data (whatever its languages, scripts and sizes), and that the widgets
# recompute: `make test` and the browser suite run these cells; their source is collapsed (click
# the bar on the left to show it).

# %% jupyter={"source_hidden": true}
# every language asked for is used or left out with its reason, and the corpus holds exactly those used
assert set(CHOICE.asked) | set(CHOICE.added) == set(LANGS) | set(CHOICE.left_out)
assert set(corpora.train) == set(corpora.eval) == set(LANGS)
# (a) one row per language in training order, each V_ℓ within its budget k; the first language reuses nothing
assert [r["language"].split("(")[-1].rstrip(")") for r in full["rows"]] == LANGS
assert all(r["|V_ℓ|"] <= K for r in full["rows"]) and full["rows"][0]["reused"] == 0
assert all(np.isfinite(subs)) and min(subs) > 0
# (b) one language: the concatenation *is* the monolingual BPE (NSL exactly 1)
assert all(abs(v - 1.0) < 1e-9 for v in spread[1]["concatenation"])
assert all(np.isfinite(v).all() for n in NS for v in spread[n].values())
# (b) the table's means are the boxes' means; each interval holds its mean; a one-language concatenation
# is its reference in every language (std 0); the union claims are the table's largest means over n >= 2
for row in UNIONS:
    for kind in ("sequential", "concatenation"):
        assert abs(row[f"{kind} mean"] - np.mean(spread[row["n"]][kind])) < 1e-9 and row[f"{kind} std across languages"] >= 0
        lo_hi = row[f"{kind} interval"]
        if lo_hi.startswith("["):
            lo, hi = map(float, lo_hi[1:lo_hi.index("]")].split(", "))
            assert lo - 1e-3 <= row[f"{kind} mean"] <= hi + 1e-3, (row, kind)
assert UNIONS[0]["n"] == 1 and UNIONS[0]["concatenation std across languages"] < 1e-12
if len(NS) > 1:
    assert abs(float(HERE["union_nsl_max"]) - max(r["sequential mean"] for r in UNIONS if r["n"] >= 2)) < 1e-9
# (c) every tree spells the word; the trees are those of the tokenizers used (HF ids decode to the same tokens)
for kind in KINDS:
    nodes = [n for nodes in res["traces"][kind] for n in nodes]
    assert b"".join(b"".join(leaves(n)) for n in nodes) == WORD.encode(), kind
mt, union = study.modular("sequential", tuple(LANGS)), list(res["order"])
assert [study.sequential(tuple(LANGS)).model.vocab[i] for i in mt.encode(WORD, union)] == [
    n.token for nodes in res["traces"]["sequential"] for n in nodes]
cat_mt = study.modular("concatenation", res["order"])
assert [study.concatenation(res["order"]).model.vocab[i] for i in cat_mt.encode(WORD, union)] == [
    n.token for nodes in res["traces"]["concatenated"] for n in nodes]
if DIFFERS:  # the word was chosen for this: concatenation cuts it longer, and a red token has an orange blocker
    assert len(res["segmentation"]["concatenated"]) > len(res["segmentation"]["sequential"])
    assert res["segmentation"]["concatenated"] != res["segmentation"]["monolingual"]
    assert res["reasons"] and res["blockers"], "a red token needs an orange blocker"
if word_x:  # the script's word: no broken character in a label; multi-byte characters give partial nodes
    assert "\ufffd" not in "".join(labels_x) and scripts.script_share(word_x, data.script_of(LANG_X)) in (1.0, None)
    if len(word_x.strip().encode()) > len(word_x.strip()):
        assert any(lab.startswith("<") and lab.endswith(">") for lab in labels_x), labels_x
# (d) every token of the global model belongs to some V_i; a union only grows, never past the no-sharing bound
assert seq_sizes[-1] == len(res_all.model)
assert all(a <= b for a, b in zip(seq_sizes, seq_sizes[1:])) and all(s <= b for s, b in zip(seq_sizes, bound))
assert seq_sizes[0] == len(res_all.lang_to_ids[LANGS[0]]) <= K

# %% jupyter={"source_hidden": true}
# setting a widget's value (what a click does) reruns study.fidelity: a proper subset, reversed, half the budget
runs, sub = fid.runs, tuple(LANGS[:min(3, len(LANGS) - 1)])
w_langs.value = sub
w_order.value = "reversed"
w_k.value = max(500, K // 2 // 100 * 100)
assert fid.runs == runs + 3
assert fid.result["order"] == sub[::-1] and fid.result["k"] == w_k.value
assert [r["position"] for r in fid.result["rows"]] == list(range(1, len(sub) + 1))
assert all(r["|V_ℓ|"] <= w_k.value for r in fid.result["rows"])
w_k.value, w_order.value, w_langs.value = K, ORDERS[0], tuple(LANGS)  # restore the full view
assert fid.result["rows"] == full["rows"]
# the explorer: a word of the first language in a union of that language alone is built identically by the
# monolingual and the concatenated tokenizer (a one-language concatenation is its monolingual BPE)
runs = explorer.runs
w_lang.value, w_union.value = LANG_A, (LANG_A,)
top_a = next(study.words(LANG_A), None) or counts[LANG_A].most_common(1)[0][0]  # its most frequent word
w_word.value, w_space.value = top_a.strip(), top_a.startswith(" ")
assert explorer.runs >= runs + 3 and explorer.result["word"] == top_a and explorer.result["order"] == (LANG_A,)
assert explorer.result["segmentation"]["monolingual"] == explorer.result["segmentation"]["concatenated"]
w_lang.value, w_union.value, w_word.value, w_space.value = LANG_B, (LANG_A, LANG_B), WORD.strip(), WORD.startswith(" ")
