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
# # 06 — AdaptMix: adaptive tokenizer-training mixtures
#
# A multilingual tokenizer is only as good for a language as the share of the
# training text that language got. *"The Art of Breaking Words"* (Thakur et al.
# 2025, §3.4, §4.3, App. A.2) proposes **AdaptMix**: train a tokenizer, measure
# each language's **fertility** f_ℓ (tokens per whitespace word) on a dev set,
# and give the next training mixture more of the languages that fragment most:
#
#     δ_ℓ = (f_ℓ − f_best) / f_range          (Eq. 1)   f_range = max f − min f of this iteration
#     w_ℓ = δ_ℓ + ε                            (Eq. 2)   δ_ℓ not clamped (clamp_delta=True is the option)
#     t_ℓ = w_ℓ / Σ w                          (Eq. 3)
#     m_ℓ = (1 − μ) m_ℓ(previous) + μ t_ℓ      (Eq. 4)
#     C_ℓ = round(m_ℓ · T),  Σ C = T           (Eq. 5)   characters of language ℓ
#     f_range = 0  →  keep the previous mixture (Eq. 7)
#
# The loop lives in `modtok.mixture`; it drives any trainer of the project (HF
# BPE, modtok BPE, sentencepiece Unigram/BPE) through one small protocol. The
# study — data, runs, the choice of μ and ε, baselines and the tables below — is
# `modtok.studies.adaptmix`. Iteration 0 trains on the uniform mixture, so it
# **is** the UniMix baseline.
#
# **How the experiment is set up.** μ and ε are chosen on the **dev** split only
# (FLORES-200 dev, or `$MODTOK_EVAL/dev` for your own evaluation text; on the
# wordfreq default another held-out sample; without a dev split every section
# says so and skips itself). The test split (devtest) is sealed inside the study until that choice is
# made — `S.devtest` raises before it — and is read once, afterwards, for the
# tables. The paper iterates "until the optimal mixture was reached" (§3.4), so
# **AdaptMix is the last iteration**; the iteration with the lowest mean dev
# fertility is shown beside it only as a labelled addition.
#
# On the paper's 16 languages (Assamese … Telugu, all in the pool and in
# FLORES-200), or whatever languages the data has, we show: the choice of μ and
# ε on dev, fertility and allocation across iterations (Fig. 2a/2b), the Table 5
# analog (per-language fertility under UniMix and AdaptMix, the change, the
# paper's change beside it), parity with English (Table 7 analog), deployed
# tokenizers (Table 3 analog), the f_best ablation (App. A.2), adaptive
# sequential-BPE budgets (beyond the paper), widgets, and the "paper vs here"
# table. A language written without spaces (Chinese, Japanese, Thai, …) has no
# whitespace words: its fertility is tokens per word of the parallel line in a
# spaced language (English where there is one), i.e. its premium over that language
# times that language's fertility (Petrov et al. 2023), so it takes part in Eqs. 1–5.
# Without parallel dev and test text with a spaced language such languages are left
# out, and the first cell says which and why; none of the 16 languages is one.
# When the budget T covers all the text, every mixture trains on all of it: UniMix,
# AdaptMix and the baselines are one tokenizer, and the tables say so instead of
# comparing it with itself.

# %% [markdown]
# ## Learn it small
#
# AdaptMix (§3.4) chooses how much text of each language a tokenizer is trained on.
# After each round it measures every language's fertility (tokens per word) on the tokenizer
# just trained, and moves the mixture towards the languages that tokenize worst: the worse a
# language's fertility relative to the best, the larger its target share. Momentum μ keeps part
# of the old mixture; ε keeps the best language from dropping to zero. The toy runs two rounds
# on fertilities given by hand, one equation at a time.
#
# ```text
# AdaptMix round N (fertilities f_ℓ, mixture m^{N-1}, μ, ε, budget T):   # §3.4, Eqs. 1–5
#   δ_ℓ = (f_ℓ − f_best) / f_range                  # Eq. 1: how far from the best
#   w_ℓ = δ_ℓ + ε                                    # Eq. 2
#   t_ℓ = w_ℓ / Σ_k w_k                              # Eq. 3: the target mixture
#   m_ℓ = (1 − μ) · m_ℓ^{N-1} + μ · t_ℓ              # Eq. 4: momentum
#   C_ℓ = round(m_ℓ · T)                             # Eq. 5: characters of ℓ to train on
# ```
#
# Predict first, then step through the run (Next / Back / Play, or the slider).

# %%
from modtok.studies.lessons import mixture as toy
from modtok.ui.stepper import Predict, Stepper

display(Predict(toy.prediction()))
display(Stepper([*toy.trace(), toy.engine_step()]))

# %% [markdown]
# The last step is the same toy through the fast engine: the library's `adaptmix_update` and
# `allocate` give the same δ, w, t, mixture and characters as the equations written out by hand.

# %%
import math
import time

from IPython.display import display

from modtok import mixture as mx
from modtok.artifacts import deployed
from modtok.studies import adaptmix as study
from modtok.studies import paper_vs_here
from modtok.text import data
from modtok.ui import plots, widgets

plots.setup()
T0, SMOKE = time.time(), data.is_smoke()

# ---- parameters (smoke: about a minute); the paper's setting beside ours: the table below
TRAINER = "modtok-bpe"  # same merges as HF BpeTrainer (tests/test_mixture.py), faster here
SCHEME = "whitespace"  # the BPE trainers' pre-tokenizer (the library default is llama3; these runs used whitespace)
VOCAB, ITERATIONS = (1_000, 2) if SMOKE else (32_000, 10)  # vocabulary, AdaptMix iterations
# (μ, ε) candidates, chosen on dev by the lowest mean dev fertility of the last iteration (the reported AdaptMix)
GRID = ((0.3, 0.5), (0.5, 1.0)) if SMOKE else tuple((mu, eps) for mu in (0.3, 0.5) for eps in (0.1, 0.5, 1.0))
TRAIN_CHARS = 40_000 if SMOKE else 3_000_000  # per language (every pool language has < 3M: all of it)
EVAL_LINES = 150 if SMOKE else None  # dev/devtest lines (None = all)
SEQ_CHARS = 20_000 if SMOKE else 300_000  # per language, for the adaptive-budget section
SEQ_K = 400 if SMOKE else 4_000  # mean sequential-BPE budget per language (bytes included)
SEQ_ITERS = 2 if SMOKE else 5
SEED = 0

# the paper's 16 languages from the pool (or $MODTOK_MANIFEST) with FLORES-200, else the wordfreq default
D = study.load_data(mx.PAPER_LANGUAGES, TRAIN_CHARS, EVAL_LINES, SEED)
S = study.AdaptMixStudy(D, seed=SEED, scheme=SCHEME, exclude_spaceless=study.spaceless_problem(D) is not None)
LANGS, AVAILABLE, HAVE_DEV = S.langs, S.pool.available(S.langs), S.has_dev
print("data:", S.data.source, *D.choice.lines(), S.languages_line(), sep="\n")  # asked for: used, or left out and why
BUDGET = (16_000 if SMOKE else 500_000) * len(LANGS)  # T: 500k characters per language on average
print(f"trainer {TRAINER} ({SCHEME} pre-tokens), vocabulary {VOCAB:,}, budget T = {BUDGET:,} characters, "
      f"{ITERATIONS} iterations, (μ, ε) candidates {GRID}; text available: {sum(AVAILABLE.values()):,} characters")
print("dev split:", S.data.dev_label if HAVE_DEV else f"none ({S.data.dev_label}): every section below skips itself")

# %% [markdown]
# ### The paper's setting and ours
#
# Setting by setting, the paper's (as `paper_figures.toml` records it, with its §) and this run's
# (`S.settings_rows`, from the parameters above). Ours is smaller on purpose: (1) run time — the
# closing cell prints the measured seconds of one iteration at our vocabulary and what the paper's
# iterations over all the (μ, ε) candidates would take here (`bench/RESULTS.md` has full-size
# timings); (2) data — our budget T is a few MB of text, on which a 128K vocabulary would be a large
# share of every word type, a regime the paper's corpus is not in. A 128K AdaptMix run has not been
# made; its effect on the verdicts is not measured. The closing table prints every difference again,
# claim by claim.

# %%
display(plots.table(S.settings_rows(TRAINER, VOCAB, BUDGET, ITERATIONS, GRID)))

# %% [markdown]
# ## Choosing μ and ε on dev
#
# `S.choose(...)` runs AdaptMix once per (μ, ε) candidate (the runs share
# iteration 0, which μ and ε do not touch) and keeps the candidate whose
# **last** iteration has the lowest mean **dev** fertility. Only after this call
# does the study hand out devtest. Allocations beyond a language's text are
# **capped and redistributed** (`policy="cap"`).

# %%
if HAVE_DEV:
    CHOICE = S.choose(TRAINER, VOCAB, BUDGET, ITERATIONS, GRID)
    MU, EPS = CHOICE.mu, CHOICE.eps
    hist = S.run(TRAINER, VOCAB, BUDGET, ITERATIONS, MU, EPS)  # the chosen run (cached)
    print(f"chosen on {CHOICE.dev}: μ = {MU}, ε = {EPS} ({CHOICE.criterion}; {time.time() - T0:.0f} s so far)")
    display(plots.table(CHOICE.rows, floatfmt="{:.4f}"))
else:
    MU, EPS = GRID[0]  # nothing chosen: without dev text no AdaptMix run is made
if mx.missing_sizes(LANGS):
    print("natural mixture: IndicCorp sizes (Kakwani et al. 2020); no published figure for",
          ", ".join(mx.missing_sizes(LANGS)), "— they get the smallest known size (a stated stand-in)")

# %% [markdown]
# ## Fig. 2a / 2b analogs — fertility and allocation across iterations
#
# Left: each language's dev fertility at every iteration (iteration 0 = UniMix).
# Right: the characters each language got. The languages that fragment most
# gain text; the low-fertility ones give it up. The last column of the table is
# how far each update moved the mixture (L1; 0 is a fixed point).

# %%
if HAVE_DEV:
    plots.language_curves([s["fertility"] for s in hist.steps], hist.langs, y_title="tokens per word",
                          title="Fig. 2a analog: dev fertility per language").show()
    plots.language_layers([s["alloc"] for s in hist.steps], hist.langs, y_title="characters",
                          title="Fig. 2b analog: training characters per language").show()
    moves = hist.mixture_changes()
    display(plots.table([{"iteration": s["iteration"], "mean dev fertility": s["mean_fertility"],
                          **{l: s["mixture"][l] for l in hist.langs}, "update moves (L1)": moves[i]}
                         for i, s in enumerate(hist.steps)], floatfmt="{:.4f}"))
    print(f"last update moves the mixture by {moves[-1]:.4f} (L1): converged at 0.01: {hist.converged()}")

# %% [markdown]
# ## Table 5 analog — devtest fertility, UniMix vs AdaptMix, per language
#
# **Devtest is read here for the first time**, after μ and ε were fixed on dev.
# Same trainer, vocabulary and total budget T for every column. **AdaptMix** is
# the last iteration (the paper's); **UniMix** is iteration 0. The change is
# (AdaptMix − UniMix) / UniMix in percent; the paper's change sits beside it, derived from its
# Table 5 cells (AdaptMix and UniMix, printed to 2 decimals) for all 16 of its languages.
# The second table adds the dev-selected iteration (an addition, not the
# paper's), **natural** (published IndicCorp sizes) and **skewed** (English and
# Hindi half of the budget: the EnHiMix analog).

# %%
if HAVE_DEV:
    tokenizers = S.tokenizers(hist, TRAINER, VOCAB, BUDGET)
    fert = S.fertility(tokenizers)
    SAME = S.unchanging(hist, TRAINER, VOCAB, BUDGET)  # None, or: some columns are one tokenizer (not compared)
    for rows in S.table5_tables(fert, study.paper_table5(), SAME):
        display(plots.table(rows, floatfmt="{:.3f}"))
    print("\n".join([SAME.statement] if SAME else S.table5_summary(hist, fert)))
    worst = max(fert[study.UNI], key=fert[study.UNI].get)

# %% [markdown]
# ## Table 7 analog — parity with English
#
# The paper's parity (App. A.3, Table 7): a language's devtest fertility over English's under
# the same tokenizer (1.0 is parity), with AdaptMix's 95% interval from a paired bootstrap over
# the parallel devtest lines. Needs parallel text with English.

# %%
table7 = S.parity({study.ADAPT: tokenizers[study.ADAPT]} if SAME else tokenizers) if HAVE_DEV else None
if table7:
    display(plots.table(table7.rows, floatfmt="{:.3f}"))
else:
    print("parity needs parallel text with English (and a dev split for AdaptMix); skipped on", S.data.source)

# %% [markdown]
# ## Table 3 analog — deployed tokenizers for reference
#
# The same devtest fertility for tokenizers that real models ship (optional
# extra `modtok[deployed]`), next to AdaptMix and UniMix at our vocabulary size;
# then their parity with English beside AdaptMix's (the paper's Table 7 columns).

# %%
DEPLOYED = deployed.lazy() if HAVE_DEV else {}  # each loaded on first use: cached measures need none
DEPLOYED_PARITY = S.parity({study.ADAPT: tokenizers[study.ADAPT], **DEPLOYED}) if DEPLOYED else None
if DEPLOYED:
    ref = {study.ADAPT: fert[study.ADAPT], study.UNI: fert[study.UNI], **S.fertility(DEPLOYED)}
    display(plots.table(S.fertility_rows(ref), floatfmt="{:.2f}"))
    if DEPLOYED_PARITY:  # the paper's Table 7 compares AdaptMix's parity with deployed tokenizers'
        display(plots.table(DEPLOYED_PARITY.rows, floatfmt="{:.3f}"))
else:
    print("no deployed tokenizer installed (pip install 'modtok[deployed]'), or no dev split")

# %% [markdown]
# ## App. A.2 ablation — f_best fixed at 1.0 vs dynamic
#
# With `f_best = "dynamic"` the best language of each iteration sets δ = 0, so
# the excess is measured against the best language instead of the ideal of one
# token per word. Both runs use the μ and ε chosen on dev; the rows give the
# last iteration (the paper's AdaptMix) and, as an addition, the dev-selected one.

# %%
if HAVE_DEV:
    dyn = S.run(TRAINER, VOCAB, BUDGET, ITERATIONS, MU, EPS, f_best="dynamic")
    runs = {"f_best = 1.0": hist, "f_best = dynamic": dyn}
    display(plots.table(S.ablation_rows(runs, worst), floatfmt="{:.4f}"))
    plots.lines({lab: (range(ITERATIONS), [s["mean_fertility"] for s in h.steps]) for lab, h in runs.items()},
                title="mean dev fertility across iterations", x_title="iteration", y_title="tokens per word").show()

# %% [markdown]
# ## Beyond the paper — adaptive budgets for a modular tokenizer
#
# Sequential BPE (notebook 02) gives each language its own sub-vocabulary of
# k_ℓ tokens. Instead of the *data* mixture, feed the budgets back: under a
# fixed total K = Σ k_ℓ, the shares (k_ℓ − 256)/(K − 256·n) follow Eqs. 1–5 on
# each **extracted subtokenizer's** dev fertility. Iteration 0 is the uniform
# budget k_ℓ = K/n.

# %%
if HAVE_DEV:
    budgets = S.budgets(SEQ_CHARS, SEQ_K, SEQ_ITERS, MU, EPS, hist.langs)  # K = SEQ_K · n
    plots.language_curves([s.score for s in budgets.steps], hist.langs, y_title="tokens per word",
                          title="subtokenizer dev fertility across budget iterations").show()
    plots.language_layers([s.k for s in budgets.steps], hist.langs, y_title="tokens",
                          title="per-language budget k_ℓ across iterations").show()
    display(plots.table(S.budget_rows(budgets), floatfmt="{:.3f}"))
    s0, s1 = budgets.steps[0], budgets.steps[-1]
    w0 = max(s0.score, key=s0.score.get)
    print(f"highest subtokenizer fertility: {data.lang_name(w0)} {s0.score[w0]:.3f} -> {s1.score[w0]:.3f} "
          f"(k {s0.k[w0]} -> {s1.k[w0]})")

# %% [markdown]
# ## Widgets
#
# μ, ε, the budget T, the number of iterations, the vocabulary size, the
# trainer and the language subset. `S.explore(...)` is a plain function on
# **dev** (exploring is not choosing: devtest is not shown here): the table
# shows the last iteration's dev fertility next to UniMix's.
#
# **The explorer is smaller than the run above** (at normal size): it starts at 3 iterations, a
# vocabulary of 8k and T = 50k characters a language (`study.EXPLORER`; the run: 10, 32k, 500k),
# so that a new setting answers in seconds instead of minutes, whichever trainer is picked
# (`bench/RESULTS.md`, sessions 18 and 21); the line below the cell says what was cut. Its figures are
# therefore noisier than the run's: read them for direction, the run above for size. The sliders still reach
# the run's setting, at the run's cost, but not by accident: a setting estimated to train longer than
# **ask above** seconds (10, `study.EXPLORER_SECONDS`; the estimate is `study.estimated_seconds`, fitted on
# a 2-core machine: raise it on a faster one) is not trained until you tick **train long settings**; the
# panel says what it would train and for about how long.
# Runs are cached: a setting seen before is read back, fewer iterations are a prefix of more, one more resumes.
# **The trainer menu** at the explorer's start comes from the results cache when `make demo` ran first: it
# trains the other trainers there ahead (else HF BPE and sentencepiece Unigram take 7-9 s at this size
# on a quiet machine, their own training); the second line below the cell says which are there, and a
# figure read back says when it was computed.


# %%
E = study.explorer_size(ITERATIONS, VOCAB, BUDGET // len(LANGS))  # the explorer's start: EXPLORER's size at most
print(E.statement, S.explore_ahead(E, MU, EPS, TRAINER), sep="\n")  # the trainer menu: make demo computes it ahead
w_mu = widgets.float_slider(MU, min=0.05, max=1.0, step=0.05, description="μ")
w_eps = widgets.float_slider(EPS, min=0.0, max=2.0, step=0.05, description="ε")
w_budget = widgets.budget_slider(E.per_lang, min=E.per_lang // 10, max=2 * E.run[2], step=E.per_lang // 10,
                                 description="T per language")
w_iters = widgets.budget_slider(E.iterations, min=1, max=max(ITERATIONS, 12), step=1, description="iterations")
w_vocab = widgets.budget_slider(E.vocab, min=500, max=64_000, step=500, description="vocabulary")
w_trainer = widgets.choice(list(mx.TRAINERS), TRAINER, description="trainer")
w_langs = widgets.language_picker(LANGS, LANGS)
w_long = widgets.toggle(False, "train long settings")  # unticked: a setting estimated over "ask above" asks first
w_ask = widgets.number(int(study.EXPLORER_SECONDS), 0, 3600, description="ask above (s)")
if HAVE_DEV:
    panel = widgets.Panel(S.explore, {"mu": w_mu, "eps": w_eps, "budget": w_budget, "iterations": w_iters,
                                      "vocab": w_vocab, "trainer": w_trainer, "langs": w_langs, "long": w_long,
                                      "ask_above": w_ask}, plots.adaptmix_explorer)
    panel.show()

# %% [markdown]
# ## Closing note
#
# What this run used and found, printed from its results on every run (the Table 5 and Table 7
# sections above print theirs); the "paper vs here" table closes the notebook.
#
# **Why the last iteration can end near UniMix's mean.** Fertility responds little to the mixture,
# so the target t of Eq. 3 is almost fixed and Eq. 4 converges geometrically (each update moves
# about (1 − μ) times the previous one) to t ≈ (δ + ε)/Σ(δ + ε) of UniMix's fertilities. That fixed
# point need not be where the *mean* is lowest: the high-fertility languages gain text and fertility
# falls for them, the low-fertility ones lose text and fertility rises for them, and the unweighted
# mean adds the two. A larger ε keeps the fixed point nearer the uniform mixture. The lines below say
# how far each update moved, where the mean was lowest and which languages moved most in this run.
#
# δ is unclamped (Eq. 1 as printed); with whitespace pre-tokens every fertility is at least
# f_best = 1, so the clamp (`clamp_delta=True`) would change nothing here.

# %%
print("\n".join(study.closing_lines(CHOICE, hist) if HAVE_DEV else ["no dev split: no (μ, ε) was chosen"]))
print(f"data: {S.data.source}\n{len(LANGS)} languages, μ = {MU}, ε = {EPS} (chosen on dev: {HAVE_DEV}), "
      f"f_best = 1.0, δ unclamped, policy = cap; whole notebook: {time.time() - T0:.0f} s")
print("the paper's 20 iterations at our vocabulary:", S.paper_setting_cost(TRAINER, VOCAB, len(GRID)))
print(S.cache_note())  # which runs and measurements were read back from the results cache

# %%
HERE = S.measured(fert if HAVE_DEV else None, DEPLOYED_PARITY, list(DEPLOYED), SAME if HAVE_DEV else None)
REASONS = S.reasons(HERE, hist, fert, DEPLOYED_PARITY, list(DEPLOYED)) if HAVE_DEV else {}
plots.table(paper_vs_here.table("adaptmix", HERE, S.setting(TRAINER, VOCAB, BUDGET, ITERATIONS), REASONS))


# %% [markdown]
# ## Checks
#
# What must hold on any data (whatever its languages, scripts and sizes), and that the widgets
# recompute: `make test` and the browser suite run these cells; their source is collapsed (click
# the bar on the left to show it). Without a dev split nothing above ran, and nothing is checked.

# %% jupyter={"source_hidden": true}
if HAVE_DEV:
    last = [r["mean dev fertility, last it."] for r in CHOICE.rows]  # the chosen (μ, ε): the lowest last dev fertility
    assert (MU, EPS) in GRID and last[GRID.index((MU, EPS))] == min(last) and hist.params["mu"] == MU
    assert [s["iteration"] for s in hist.steps] == list(range(ITERATIONS))
    assert hist.steps[0]["mixture"] == mx.uniform(hist.langs)
    for s in hist.steps:  # the budget is spent, or a language gave all its text; no language used more than it got
        assert sum(s["alloc"].values()) == BUDGET or any(s["alloc"][l] == AVAILABLE[l] for l in hist.langs)
        assert all(s["used"][l] <= min(s["alloc"][l], AVAILABLE[l]) for l in hist.langs)
    f0 = hist.steps[0]["fertility"]
    worst_dev = max(f0, key=f0.get)
    if ITERATIONS > 1 and max(f0.values()) > min(f0.values()):  # Eqs. 1-4: the largest δ gets more than 1/n
        assert hist.steps[1]["mixture"][worst_dev] > hist.steps[0]["mixture"][worst_dev]
    assert tokenizers[study.UNI] is hist.tokenizers[0] and tokenizers[study.ADAPT] is hist.tokenizers[-1]
    assert all(math.isfinite(v) and v > 0 for f in fert.values() for v in f.values())
    if SCHEME == "whitespace":  # every whitespace word is at least one pre-token, so at least one token
        assert all(v >= 1 for f in fert.values() for v in f.values())
    assert not table7 or all(p["eng_Latn"] == 1.0 for p in table7.values.values())
    assert dyn.steps[0]["fertility"] == hist.steps[0]["fertility"]  # same UniMix start
    if ITERATIONS > 1 and min(f0.values()) != 1.0 and max(f0.values()) > min(f0.values()):
        assert dyn.steps[1]["mixture"] != hist.steps[1]["mixture"]  # the targets differ by a shift of every δ
    assert all(sum(s.k.values()) == SEQ_K * len(hist.langs) for s in budgets.steps)
    if SEQ_ITERS > 1 and max(s0.score.values()) > min(s0.score.values()):  # Eqs. 1-4 on the budget shares
        assert budgets.steps[1].k[w0] > s0.k[w0]
    # setting widget values (what a click does) reruns S.explore; then the view is restored
    start = panel.result["history"]  # the explorer's start: the run at E's size (the chosen run where E is its size)
    assert start is S.run(TRAINER, E.vocab, E.per_lang * len(LANGS), E.iterations, MU, EPS)
    before, subset = panel.runs, tuple(LANGS[:3])
    pokes = [(w_iters, 2), (w_vocab, 500 if SMOKE else 4_000), (w_langs, subset), (w_trainer, "hf-bpe")]
    changed = sum(w.value != v for w, v in pokes)  # a value set to what it already is fires no recompute
    for w, v in pokes:
        w.value = v  # small, so the check is quick
    assert panel.runs == before + changed
    assert panel.result["langs"] == subset and len(panel.result["history"].steps) == 2
    assert panel.result["history"].params["trainer"] == ("hf-bpe-500" if SMOKE else "hf-bpe-4000")
    shown = [l for l in subset if l not in panel.result["history"].excluded]  # a language AdaptMix left out is named
    assert [r["language"].split("(")[-1][:-1] for r in panel.result["rows"]] == shown
    w_langs.value, w_trainer.value, w_vocab.value, w_iters.value = tuple(LANGS), TRAINER, E.vocab, E.iterations
    assert panel.result["history"] is start
