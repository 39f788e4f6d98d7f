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
# Variants (all options of `modtok.bpe.parity.train`): **hybrid** (the first J merges
# classical), **moving window** (a language is skipped while it holds more than α/L of
# the last w parity choices), **ratio** (no dev set: equalise each language's own
# training compression, scaled by target ratios).
#
# We train on the pool in the paper's **unbalanced** setting (a temperature-sampled
# mixture of realistic per-language corpus sizes: τ = 3.3 and τ = 1, the natural
# proportions; the pool's own sizes are nearly uniform) and in a **balanced** one, use
# FLORES-200 *dev* as the parallel dev set and evaluate everything on FLORES-200 *devtest*. The disparity measure is the
# **Gini coefficient** of the per-language token totals on the parallel devtest lines
# (0 = every language pays the same).

# %%
import functools
import time

import numpy as np
from IPython.display import HTML, display

from modtok.text import data
from modtok.evaluation import metrics
from modtok.ui import plots, widgets
from modtok.bpe import parity
from modtok.mixture import TextPool

plots.setup()
T0 = time.time()
SMOKE = data.is_smoke()
# The mark-aware repair of the Llama-3 pre-tokenizer: the letters-only original cuts
# Indic words at every combining mark, which puts a floor under those languages' cost
# that no merge can lower (see modtok.text.pretokenize); parity-aware BPE would then keep
# choosing a language it cannot help. Lossless like every modtok scheme.
SCHEME = "llama3-marks"

# Realistic corpus sizes: CC-100 (the XLM-R corpus), GiB of text per language, rounded,
# as tabulated in Conneau et al. 2020, "Unsupervised Cross-lingual Representation
# Learning at Scale", Table 6. They only set the skew of the mixture.
CC100_GIB = {
    "eng_Latn": 300.8, "rus_Cyrl": 278.0, "vie_Latn": 137.3, "deu_Latn": 66.6, "fra_Latn": 56.8,
    "spa_Latn": 53.3, "por_Latn": 49.1, "ell_Grek": 46.9, "pol_Latn": 44.6, "ita_Latn": 30.2,
    "nld_Latn": 29.3, "tur_Latn": 20.9, "hin_Deva": 20.2, "ces_Latn": 16.3, "tam_Taml": 12.2,
    "ben_Beng": 8.4, "tel_Telu": 4.7, "mar_Deva": 2.8,
}
TIERS = {lang: "high" if gib >= 50 else "medium" if gib >= 5 else "low" for lang, gib in CC100_GIB.items()}
TAU = 3.3
# The paper's 30 languages (its evaluation suite's language list) that the pool has: 18.
# Its others (Arabic, Persian, Chinese, Japanese, Korean, Thai, Hebrew, Georgian,
# Indonesian, Filipino, Norwegian, Azerbaijani) have no pool text.
PREFERRED = list(CC100_GIB)
if SMOKE:
    PREFERRED = ["eng_Latn", "rus_Cyrl", "ell_Grek", "hin_Deva", "tel_Telu", "mar_Deva"]
LANGS = data.pick_languages(PREFERRED)  # wordfreq default: same-script stand-ins
VOCAB = 2_000 if SMOKE else 32_000
corpora = data.default_corpora(LANGS, train_chars=150_000 if SMOKE else 3_000_000,
                               eval_lines=300 if SMOKE else None)
LANGS = [lang for lang in LANGS if lang in corpora.train]
if corpora.parallel_eval:  # FLORES-200 is configured (with the pool or a manifest)
    dev_all = data.load_flores(LANGS, "dev")
    dev_source = f"FLORES-200 dev ({len(dev_all[LANGS[0]])} parallel lines)"
else:  # no parallel text: equal numbers of held-out 12-word pseudo-sentences
    dev_all = data.load_wordfreq(LANGS, n_lines=300, seed=7)
    dev_source = "wordfreq held-out sample (300 lines per language, NOT parallel: parity of tokens per 12-word line)"
test = corpora.eval
print("data:", corpora.source)
print("dev set:", dev_source)
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
available = data.chars_per_language(corpora.train)
POOL = TextPool(corpora.train, seed=0)  # the one sampler: a prefix of one fixed shuffle per language
NATURAL = 1.0


@functools.lru_cache(maxsize=None)
def mixture(setting):
    """The training text of ``setting``: a temperature τ, or "balanced"."""
    if setting == "balanced":
        return POOL.sample({l: 1.0 for l in LANGS}, min(available.values()) * len(LANGS)).lines()
    share = {l: CC100_GIB[l] ** (1 / setting) for l in LANGS}
    total = int(min(available[l] * sum(share.values()) / share[l] for l in LANGS))
    return POOL.sample(share, total).lines()


@functools.lru_cache(maxsize=None)
def counts(setting):
    return parity.count_corpus(mixture(setting), SCHEME)


chars = {setting: data.chars_per_language(mixture(setting)) for setting in (TAU, NATURAL, "balanced")}
mixture_rows = [{"language": f"{data.lang_name(l)} ({l})", "tier": TIERS[l], "CC-100 GiB": CC100_GIB[l],
                 f"τ = {TAU} chars": chars[TAU][l], "τ = 1 chars": chars[NATURAL][l],
                 "balanced chars": chars["balanced"][l]} for l in LANGS]
display(plots.table(mixture_rows))
skew = {setting: max(c.values()) / min(c.values()) for setting, c in chars.items()}
assert skew[NATURAL] > skew[TAU] > 2.5 and skew["balanced"] < 1.01, skew  # really unbalanced
print(f"largest / smallest language: τ = {TAU}: {skew[TAU]:.1f}x, τ = 1: {skew[NATURAL]:.0f}x")

# %% [markdown]
# Every tokenizer is trained once (cached); the widgets only train what a new setting needs.


# %%
N_DEV = len(dev_all[LANGS[0]])


@functools.lru_cache(maxsize=None)
def dev_counts(n_lines, langs):
    return parity.count_dev({l: dev_all[l][:n_lines] for l in langs}, SCHEME)


def spec(setting=TAU, variant="base", j_frac=0.0, window=100, alpha=2.0,
         dev_lines=None, vocab=VOCAB, langs=tuple(LANGS)):
    """One training run as a canonical tuple (settings a variant ignores are dropped)."""
    if variant != "window":
        window, alpha = 100, 2.0
    if variant == "classical":
        j_frac, dev_lines = 0.0, None
    return (setting, variant, round(j_frac, 2), window, alpha, dev_lines or N_DEV, vocab, tuple(langs))


@functools.lru_cache(maxsize=None)
def trained(key):
    """One parity-aware (or classical) BPE; variant in classical / base / window / ratio."""
    setting, variant, j_frac, window, alpha, dev_lines, vocab, langs = key
    train_counts = {l: counts(setting)[l] for l in langs}
    options = {"hybrid": int(j_frac * (vocab - 256))}
    if variant == "ratio":
        options["ratios"] = [1.0] * len(langs)  # equal target ratios
    else:
        options["variant"] = variant
        if variant == "window":
            options.update(window=window, alpha=alpha)
    return parity.train(train_counts, dev_counts(dev_lines, langs), vocab, scheme=SCHEME, **options)


@functools.lru_cache(maxsize=None)
def evaluate(key):
    """Table 1 columns on devtest (one encoding per language) + per-language numbers."""
    res = trained(key)
    tok, langs = res.tokenizer(), res.languages
    parallel = {l: test[l] for l in langs}
    row = metrics.parity_summary(tok, parallel, vocab_size=len(res.model))
    per_lang = [{"lang": l, "tokens per line": metrics.token_counts(tok, test[l]).mean(),
                 "bytes per token": metrics.compression_rate(tok, test[l], "bytes"),
                 "utilisation": metrics.vocab_utilisation(tok, test[l], len(res.model))} for l in langs]
    tiers = metrics.vocab_utilisation_by_tier(tok, parallel, TIERS, len(res.model))
    return {"row": row, "per_lang": per_lang, "tiers": tiers, "merges": res.language_merge_counts()}


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
VARIANT_OPTIONS = {
    "classical": dict(variant="classical"),
    "parity (base)": dict(variant="base"),
    "hybrid (J = K/2)": dict(variant="base", j_frac=0.5),
    "window (w=100, α=2)": dict(variant="window", window=100, alpha=2.0),
    "ratio (r = 1)": dict(variant="ratio"),
}
VARIANTS = {name: spec(**options) for name, options in VARIANT_OPTIONS.items()}  # τ = 3.3
table1 = []
for tau in (TAU, NATURAL):
    for name, options in VARIANT_OPTIONS.items():
        ev = evaluate(spec(tau, **options))
        r = ev["row"]
        table1.append({"mixture": f"τ = {tau:g}", "tokenizer": name, "Gini ↓": r["gini"],
                       "Gini per byte": r["gini_per_byte"],
                       "global compression (B/tok) ↑": r["global_compression"],
                       "mean per-language B/tok": np.mean([p["bytes per token"] for p in ev["per_lang"]]),
                       "utilisation": r["utilisation"], "Rényi eff.": r["renyi"],
                       "fertility": r["fertility"], "devtest tokens": r["tokens"]})
display(plots.table(table1, floatfmt="{:.4f}"))


def price(setting, vocab=VOCAB):
    """Base parity-aware vs classical BPE: (how much lower the Gini is, relative change of
    global compression), both as fractions."""
    c = evaluate(spec(setting, variant="classical", vocab=vocab))["row"]
    b = evaluate(spec(setting, vocab=vocab))["row"]
    return 1 - b["gini"] / c["gini"], b["global_compression"] / c["global_compression"] - 1


classical = table1[0]
for tau in (TAU, NATURAL):
    cut, comp = price(tau)
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
full_claim = corpora.parallel_eval and not SMOKE
gini_cut, comp_change = price(TAU)
natural_cut, natural_comp = price(NATURAL)
if full_claim:
    assert natural_cut >= 0.6 and abs(natural_comp) <= 0.02, (natural_cut, natural_comp)
    assert gini_cut >= 0.6 and comp_change >= -0.10, (gini_cut, comp_change)
else:
    assert gini_cut >= 0.3 and natural_cut > 0 and min(comp_change, natural_comp) >= -0.12
print(f"within 2% of classical: τ = 1 {abs(natural_comp) <= 0.02}, τ = {TAU} {abs(comp_change) <= 0.02}")
assert all(r["Gini ↓"] < classical["Gini ↓"] for r in table1[1:4])  # base, hybrid, window (τ = 3.3)
assert evaluate(VARIANTS["hybrid (J = K/2)"])["merges"][parity.GLOBAL] == (VOCAB - 256) // 2

# %% [markdown]
# ## The price of parity across vocabulary sizes
#
# Table 1 at one vocabulary hides how the trade moves with the budget. Classical and base
# parity-aware BPE on the same unbalanced mixture at several sizes: how much lower the
# Gini is, and how much global compression changes (the paper: "negligible", within 2%).

# %%
SWEEP = tuple(k * VOCAB for k in (1, 2, 3, 4))  # 32k ... 128k (smoke: 2k ... 8k)
sweep = []
for v in SWEEP:
    cut, comp = price(TAU, v)
    sweep.append({"vocab": v, "classical Gini": evaluate(spec(variant="classical", vocab=v))["row"]["gini"],
                  "parity Gini": evaluate(spec(vocab=v))["row"]["gini"],
                  "Gini cut %": 100 * cut, "global compression change %": 100 * comp})
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
skew_rows = []
for tau in TAUS:
    cut, comp = price(tau)
    mix_chars = data.chars_per_language(mixture(tau))
    skew_rows.append({"τ": tau, f"{data.lang_name(LANGS[0])} share of the text": mix_chars[LANGS[0]] / sum(mix_chars.values()),
                      "Gini cut %": 100 * cut, "global compression change %": 100 * comp})
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
fig2_rows = [{"lang": data.lang_name(p["lang"]), "tokenizer": name, "bytes per token": p["bytes per token"]}
             for name in ("classical", "parity (base)", "hybrid (J = K/2)")
             for p in evaluate(VARIANTS[name])["per_lang"]]
plots.grouped_bars(fig2_rows, x="lang", y="bytes per token", color="tokenizer",
                   title=f"Compression per language on FLORES devtest, vocab {VOCAB:,}").show()
cls_tpl = {p["lang"]: p["tokens per line"] for p in evaluate(VARIANTS["classical"])["per_lang"]}
par_tpl = {p["lang"]: p["tokens per line"] for p in evaluate(VARIANTS["parity (base)"])["per_lang"]}
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
fig1_rows = [{"tier": tier, "tokenizer": name, "utilisation": value}
             for name in ("classical", "parity (base)")
             for tier, value in evaluate(VARIANTS[name])["tiers"].items()]
plots.grouped_bars(fig1_rows, x="tier", y="utilisation", color="tokenizer",
                   title="Vocabulary utilisation by resource tier (CC-100 size)").show()
# a tier's value is the mean of its languages' own utilisation
for name in ("classical", "parity (base)"):
    ev = evaluate(VARIANTS[name])
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
bal = [{"setting": str(s), "tokenizer": v, **{k: evaluate(spec(s, v))["row"][k] for k in ("gini", "global_compression")}}
       for s in ("balanced", TAU, NATURAL) for v in ("classical", "base")]
display(plots.table(bal, floatfmt="{:.4f}"))
g = {(r["setting"], r["tokenizer"]): r["gini"] for r in bal}
assert g[("balanced", "base")] < g[("balanced", "classical")]

# %% [markdown]
# ## Ablations: dev-set size (Table 4 analog) and window size (Table 3 analog)
#
# The dev set only ranks languages, so a few hundred parallel lines are enough.

# %%
dev_sizes = [n for n in (100, 300) if n < N_DEV] + [N_DEV]
abl_dev = [{"dev lines": n, **{k: evaluate(spec(dev_lines=n))["row"][k] for k in ("gini", "global_compression")}}
           for n in dev_sizes]
abl_win = [{"window w": w, **{k: evaluate(spec(variant="window", window=w))["row"][k]
                              for k in ("gini", "global_compression")}} for w in (50, 100, 200)]
display(plots.table(abl_dev, floatfmt="{:.4f}"), plots.table(abl_win, floatfmt="{:.4f}"))
assert all(r["gini"] < classical["Gini ↓"] for r in abl_dev + abl_win)

# %% [markdown]
# ## How the dev costs converge
#
# Per-language dev cost (tokens on the dev lines) after every merge: parity-aware BPE
# drives the most expensive language down until the costs meet, then keeps them together.

# %%
res_base = trained(spec())
step = max(1, len(res_base.merges) // 200)
curves = {data.lang_name(l): (list(range(0, len(res_base.dev_tokens), step)),
                              res_base.dev_tokens[::step, i].tolist()) for i, l in enumerate(res_base.languages)}
plots.lines(curves, title="Dev cost per language during parity-aware training",
            x_title="merges", y_title="dev tokens").show()
assert (np.diff(res_base.dev_tokens, axis=0) <= 0).all()  # a merge never makes text longer

# %% [markdown]
# ## Explore
#
# Variant, training mixture, hybrid fraction J/K, window w and α, dev lines, vocabulary
# and languages. Each change trains what it needs (cached) and re-evaluates on devtest.

# %%
def explore(variant, setting, j_frac, window, alpha, dev_lines, vocab, langs):
    langs = tuple(l for l in LANGS if l in langs)
    if len(langs) < 2:
        return {"langs": langs, "rows": [], "per_lang": []}
    key = spec(setting, variant, j_frac, window, alpha, dev_lines, vocab, langs)
    ev, ref = evaluate(key), evaluate(spec(setting, variant="classical", vocab=vocab, langs=langs))
    rows = [{"tokenizer": name, **{k: e["row"][k] for k in ("gini", "global_compression", "utilisation", "renyi")}}
            for name, e in (("classical", ref), (variant, ev))]
    per_lang = [{"lang": data.lang_name(p["lang"]), "tokenizer": name, "tokens per line": p["tokens per line"]}
                for name, e in (("classical", ref), (variant, ev)) for p in e["per_lang"]]
    return {"langs": langs, "key": key, "rows": rows, "per_lang": per_lang}


def render(result):
    if not result["rows"]:
        return [HTML("<i>select at least two languages</i>")]
    return [plots.table(result["rows"], floatfmt="{:.4f}"),
            plots.grouped_bars(result["per_lang"], x="lang", y="tokens per line", color="tokenizer",
                               title="Devtest tokens per line")]


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
panel = widgets.Panel(explore, controls, render)
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
