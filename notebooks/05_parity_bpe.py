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
# # 05 — Parity-aware BPE
#
# Classical BPE merges the most frequent pair of the whole training corpus, so the
# languages with the most data get the most merges and every other language pays
# with longer token sequences. **Parity-aware BPE** ("Parity-Aware Byte-Pair
# Encoding", Foroutan, Meister et al. 2025, Algorithm 2) keeps the greedy loop but
# asks, at every step, *which language is currently the most expensive* on a small
# **parallel** dev set, and merges the most frequent pair of **that language's**
# training data — applied to every language:
#
#     for m in 1 .. K:
#         l* ← argmax_l |tokenize(dev_l)|            (ties: lowest index)
#         (a, b) ← most frequent pair in l*'s training data
#         merge (a, b) everywhere; update the dev costs
#
# Variants (all options of `modtok.bpe.parity.train`, the fields of `parity.ParityConfig`):
# **hybrid** (the first J merges classical), **moving window** (a language is skipped while it holds more than α/L of
# the last w parity choices), **ratio** (no dev set: equalise each language's own
# training compression, scaled by target ratios).
#
# We train on the pool in the paper's **unbalanced** setting (a temperature-sampled
# mixture of realistic per-language corpus sizes: τ = 3.3 and τ = 1, the natural
# proportions; the pool's own sizes are nearly uniform) and in a **balanced** one, use
# FLORES-200 *dev* as the parallel dev set and evaluate everything on FLORES-200 *devtest*. The disparity measure is the
# **Gini coefficient** of the per-language token totals on the parallel devtest lines
# (0 = every language pays the same). The harness (mixtures, cached runs, evaluations, tables)
# is `modtok.studies.parity_bpe`; this notebook sets the parameters, shows and checks.

# %%
import time

import numpy as np
from IPython.display import display

from modtok.bpe import parity
from modtok.studies import parity_bpe
from modtok.text import data
from modtok.ui import plots, widgets

plots.setup()
T0 = time.time()
SMOKE = data.is_smoke()
# The mark-aware repair of the Llama-3 pre-tokenizer: the letters-only original cuts
# Indic words at every combining mark, which puts a floor under those languages' cost
# that no merge can lower (see modtok.text.pretokenize); parity-aware BPE would then keep
# choosing a language it cannot help. Lossless like every modtok scheme.
SCHEME = "llama3-marks"
# The mixture's skew comes from realistic corpus sizes: CC-100 GiB per language
# (parity_bpe.CC100_GIB, Conneau et al. 2020, Table 6). τ = 3.3 is XLM-R's smoothing.
TAU = 3.3
NATURAL = parity_bpe.NATURAL  # τ = 1: the natural proportions
# The paper's 30 languages (its evaluation suite's language list) that the pool has: 18.
PREFERRED = list(parity_bpe.CC100_GIB)
if SMOKE:
    PREFERRED = parity_bpe.SMOKE_LANGUAGES  # eng rus ell hin tel mar
VOCAB = 2_000 if SMOKE else 32_000
# wordfreq default: same-script stand-ins; FLORES-200 dev ranks, devtest evaluates
study = parity_bpe.load(PREFERRED, VOCAB, SCHEME, train_chars=150_000 if SMOKE else 3_000_000,
                        eval_lines=300 if SMOKE else None, tau=TAU)
LANGS, TIERS, N_DEV = study.langs, study.tiers, study.n_dev
print("data:", study.source)
print("dev set:", study.dev_source)
print(f"{len(LANGS)} languages:", ", ".join(f"{data.lang_name(l)} ({l}, {TIERS[l]})" for l in LANGS))
print(f"vocabulary: {VOCAB:,} tokens (256 bytes included), pre-tokenizer {SCHEME}")

# %% [markdown]
# ## The training mixtures
#
# **Unbalanced**: share_l ∝ size_l^(1/τ) with the CC-100 sizes above, scaled so that every
# language's share fits in the text we have (the binding language gives all of its text):
# τ = 3.3 (XLM-R's smoothing; the default below) and τ = 1 (the natural proportions).
# **Balanced**: the same number of characters for every language.

# %%
display(plots.table(study.mixture_rows()))
skew = {setting: study.skew(setting) for setting in (TAU, NATURAL, "balanced")}
assert skew[NATURAL] > skew[TAU] > 2.5 and skew["balanced"] < 1.01, skew  # really unbalanced
print(f"largest / smallest language: τ = {TAU}: {skew[TAU]:.1f}x, τ = 1: {skew[NATURAL]:.0f}x")

# %% [markdown]
# Every tokenizer is trained once and evaluated once (`ParityStudy` caches both); the widgets
# only train what a new setting needs.


# %% [markdown]
# ## Table 1 analog — same unbalanced mixture, same vocabulary
#
# classical BPE; base parity-aware; hybrid with J = half of the merges classical;
# moving window (w = 100, α = 2); ratio (equal target ratios, no dev set) — on the
# τ = 3.3 mixture and on the natural proportions (τ = 1).
# The Gini is of per-language token totals on the parallel lines (the cost of the same
# content, what parity-aware BPE equalises); "Gini per byte" is the headline measure of
# the paper's evaluation suite, tokens per UTF-8 byte, which also charges a script for
# its bytes per character. Global compression is bytes per token over all devtest
# languages pooled; utilisation is the share of the vocabulary the devtest text uses;
# Rényi efficiency at α = 2.5.

# %%
VARIANTS = {name: study.named(name) for name in parity_bpe.TABLE1_VARIANTS}  # τ = 3.3
table1 = study.table1()  # τ = 3.3, then τ = 1
display(plots.table(table1, floatfmt="{:.4f}"))
classical = table1[0]
for tau in (TAU, NATURAL):
    cut, comp = study.price(tau)
    print(f"τ = {tau:g}: base vs classical Gini {100 * cut:.0f}% lower, global compression {100 * comp:+.2f}%"
          f"   [{len(LANGS)} languages, vocab {VOCAB:,}]")

# %%
# The paper's claim: much less Gini (>= 60%) at almost the same global compression (within
# 2%). It holds on the natural proportions and not on the τ = 3.3 mixture, where the
# global-compression cost is larger; we guard that one at 10% and print where it stands.
# Measured (2026-12-01, base vs classical on devtest, these 18 languages, 32k): τ = 1
# -80% Gini / -0.13% global compression (hybrid -60% / +1.3%, window -69% / +1.3%); τ = 1.5
# -92% / -3.8%; τ = 2 -92% / -5.2%;
# τ = 3.3 -93% / -5.7% (64k -92% / -6.3%, 96k -82% / -4.7%, 128k -51% / -2.0%); balanced
# -93% / -5.8%. On a mildly skewed mixture classical BPE already spends its merges about
# as parallel text needs them, so equalising the dev cost (base parity reaches a Gini of
# 0.004; the paper reports 0.019) is paid for by the languages that were cheap (English
# +26%); on the natural proportions classical BPE spends far more merges on English than
# parallel text rewards, and parity-aware BPE gets most of the cost back by moving them.
# Smoke sizes (2k vocabulary) and the wordfreq default (no parallel text) get looser bounds.
full_claim = study.parallel and not SMOKE
gini_cut, comp_change = study.price(TAU)
natural_cut, natural_comp = study.price(NATURAL)
if full_claim:
    assert natural_cut >= 0.6 and abs(natural_comp) <= 0.02, (natural_cut, natural_comp)
    assert gini_cut >= 0.6 and comp_change >= -0.10, (gini_cut, comp_change)
else:
    assert gini_cut >= 0.3 and natural_cut > 0 and min(comp_change, natural_comp) >= -0.12
print(f"within 2% of classical: τ = 1 {abs(natural_comp) <= 0.02}, τ = {TAU} {abs(comp_change) <= 0.02}")
assert all(r["Gini ↓"] < classical["Gini ↓"] for r in table1[1:4])  # base, hybrid, window (τ = 3.3)
assert study.evaluate(VARIANTS["hybrid (J = K/2)"])["merges"][parity.GLOBAL] == (VOCAB - 256) // 2

# %% [markdown]
# ## The price of parity across vocabulary sizes
#
# Table 1 at one vocabulary hides how the trade moves with the budget. Classical and base
# parity-aware BPE on the same unbalanced mixture at several sizes: how much lower the
# Gini is, and how much global compression changes (the paper: "negligible", within 2%).

# %%
SWEEP = tuple(k * VOCAB for k in (1, 2, 3, 4))  # 32k ... 128k (smoke: 2k ... 8k)
sweep = study.vocab_sweep(SWEEP)
display(plots.table(sweep, floatfmt="{:.4f}"))
plots.lines({k: (list(SWEEP), [r[k] for r in sweep]) for k in ("Gini cut %", "global compression change %")},
            title=f"Base parity-aware vs classical BPE, {len(LANGS)} languages, τ = {TAU} mixture",
            x_title="vocabulary size", y_title="% vs classical BPE").show()
assert all(r["parity Gini"] < r["classical Gini"] for r in sweep)
assert abs(sweep[0]["Gini cut %"] - 100 * gini_cut) < 1e-9  # the first size is Table 1's

# %% [markdown]
# ## The skew of the mixture sets the price
#
# The same comparison at the same vocabulary, from the natural proportions (τ = 1) to the
# smoothed mixture (τ = 3.3): the more classical BPE's merges follow one big language, the
# more of the global compression parity-aware BPE wins back by spreading them.

# %%
TAUS = (NATURAL, 1.5, 2.0, TAU)
skew_rows = study.tau_sweep(TAUS)
display(plots.table(skew_rows, floatfmt="{:.4f}"))
plots.lines({k: (list(TAUS), [r[k] for r in skew_rows]) for k in ("Gini cut %", "global compression change %")},
            title=f"Base parity-aware vs classical BPE by mixture temperature, vocab {VOCAB:,}",
            x_title="τ (1 = natural proportions)", y_title="% vs classical BPE").show()
assert abs(skew_rows[0]["global compression change %"] - 100 * natural_comp) < 1e-9
assert all(r["Gini cut %"] > 0 for r in skew_rows)

# %% [markdown]
# ## Per-language compression (Fig. 2 analog)
#
# Bytes per token on each language's devtest lines. Parity-aware BPE is a min-max rule
# on raw token counts: it gives the costliest languages longer tokens until every
# language costs about the same per line, and the languages that were cheapest under
# classical BPE (few merges chosen for them) pay for it — at 32k tokens for 18 languages
# visibly so (the vocabulary sweep above shows how the price moves with the budget).

# %%
fig2_rows = study.per_language(["classical", "parity (base)", "hybrid (J = K/2)"], "bytes per token")
plots.grouped_bars(fig2_rows, x="lang", y="bytes per token", color="tokenizer",
                   title=f"Compression per language on FLORES devtest, vocab {VOCAB:,}").show()
cls_tpl, par_tpl = study.tokens_per_line("classical"), study.tokens_per_line("parity (base)")
worst = max(cls_tpl, key=cls_tpl.get)
print(f"costliest language under classical BPE: {data.lang_name(worst)}, "
      f"{cls_tpl[worst]:.1f} -> {par_tpl[worst]:.1f} tokens per line")
assert par_tpl[worst] < cls_tpl[worst]
assert max(par_tpl.values()) / min(par_tpl.values()) < max(cls_tpl.values()) / min(cls_tpl.values())

# %% [markdown]
# ## Vocabulary utilisation by resource tier (Fig. 1 analog)
#
# Mean over a tier's languages of the share of the vocabulary that its devtest text uses
# (tiers by CC-100 size: high >= 50 GiB, medium >= 5 GiB, low below). The paper reports
# more uniform utilisation with parity-aware BPE at 128k; read the figure for what this
# smaller setting does.

# %%
fig1_rows = study.tier_rows(["classical", "parity (base)"])
plots.grouped_bars(fig1_rows, x="tier", y="utilisation", color="tokenizer",
                   title="Vocabulary utilisation by resource tier (CC-100 size)").show()
# a tier's value is the mean of its languages' own utilisation
for name in ("classical", "parity (base)"):
    ev = study.evaluate(VARIANTS[name])
    for tier, value in ev["tiers"].items():
        own = [p["utilisation"] for p in ev["per_lang"] if TIERS[p["lang"]] == tier]
        assert abs(value - np.mean(own)) < 1e-12 and 0 < value < 1, (name, tier)
print({(r["tier"], r["tokenizer"]): round(r["utilisation"], 4) for r in fig1_rows})

# %% [markdown]
# ## Balanced setting
#
# Equal characters per language is not equal cost: scripts differ in bytes per character
# and languages in how well their own data compresses, so classical BPE on a balanced
# mixture is not fair by itself. Parity-aware BPE ranks by the parallel dev cost, so it
# reaches a low Gini from either mixture.

# %%
bal = study.balanced_rows()  # balanced, τ = 3.3, τ = 1; classical and base
display(plots.table(bal, floatfmt="{:.4f}"))
g = {(r["setting"], r["tokenizer"]): r["gini"] for r in bal}
assert g[("balanced", "base")] < g[("balanced", "classical")]

# %% [markdown]
# ## Ablations: dev-set size (Table 4 analog) and window size (Table 3 analog)
#
# The dev set only ranks languages, so a few hundred parallel lines are enough.

# %%
dev_sizes = [n for n in (100, 300) if n < N_DEV] + [N_DEV]
abl_dev, abl_win = study.dev_size_rows(dev_sizes), study.window_rows((50, 100, 200))
display(plots.table(abl_dev, floatfmt="{:.4f}"), plots.table(abl_win, floatfmt="{:.4f}"))
assert all(r["gini"] < classical["Gini ↓"] for r in abl_dev + abl_win)

# %% [markdown]
# ## How the dev costs converge
#
# Per-language dev cost (tokens on the dev lines) after every merge: parity-aware BPE
# drives the most expensive language down until the costs meet, then keeps them together.

# %%
res_base = study.trained(study.spec())
plots.lines(study.dev_curves(study.spec()), title="Dev cost per language during parity-aware training",
            x_title="merges", y_title="dev tokens").show()
assert (np.diff(res_base.dev_tokens, axis=0) <= 0).all()  # a merge never makes text longer

# %% [markdown]
# ## Explore
#
# Variant, training mixture, hybrid fraction J/K, window w and α, dev lines, vocabulary
# and languages. Each change trains what it needs (cached) and re-evaluates on devtest.

# %%
controls = {
    "variant": widgets.choice(["base", "window", "ratio", "classical"], description="variant"),
    "setting": widgets.choice([(f"τ = {TAU}", TAU), ("τ = 1 (natural)", NATURAL), ("balanced", "balanced")], TAU,
                              description="mixture"),
    "j_frac": widgets.float_slider(0.0, min=0.0, max=0.9, step=0.1, description="J / K"),
    "window": widgets.budget_slider(100, min=10, max=300, step=10, description="window w"),
    "alpha": widgets.float_slider(2.0, min=0.5, max=4.0, step=0.5, description="α"),
    "dev_lines": widgets.choice([n for n in (50, 100, 200, 300, 500) if n < N_DEV] + [N_DEV], N_DEV,
                                description="dev lines"),
    "vocab": widgets.budget_slider(VOCAB, min=1_000, max=VOCAB, step=500 if SMOKE else 1_000, description="vocab"),
    "langs": widgets.language_picker(LANGS, LANGS),
}
# study.explore trains what the settings need (next to classical BPE); plots.parity_explore draws it
panel = widgets.Panel(study.explore, controls, plots.parity_explore)
panel.show()

# %% [markdown]
# Setting widget values (what a click does) retrains: the window variant on four
# languages of the natural-proportions mixture, with half the dev lines and a smaller
# vocabulary.

# %%
runs = panel.runs
controls["langs"].value = tuple(LANGS[:4])
controls["variant"].value = "window"
controls["setting"].value = NATURAL
controls["dev_lines"].value = 100
controls["vocab"].value = VOCAB // 2
assert panel.runs == runs + 5
assert panel.result["langs"] == tuple(LANGS[:4]) and panel.result["key"][:2] == (NATURAL, "window")
assert panel.result["key"][5:7] == (100, VOCAB // 2) and len(panel.result["per_lang"]) == 8
assert panel.result["rows"][1]["gini"] <= panel.result["rows"][0]["gini"] + 1e-9
print(f"notebook ran in {time.time() - T0:.0f} s")
