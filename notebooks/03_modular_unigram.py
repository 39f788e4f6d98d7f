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
# # 03 — Modular Unigram (modular tokenizers §4.1, Algorithm 1)
#
# One sentencepiece Unigram per language (budget k), their vocabularies merged, and the
# piece probabilities re-estimated by EM (forward–backward) on the joint corpus. A language
# subset's *subtokenizer* keeps only its own pieces with the re-estimated scores (all other
# pieces have probability 0) and encodes with the restricted Viterbi. We show
# (a) subtokenizer and full-tokenizer NSL vs the monolingual Unigram of the same k (Table 11 analog),
# (b) the EM log-likelihood per iteration, (c) frequency-based extraction from the merged model for
# several k (Table 12 analog), (d) one sentence segmented three ways, and (e) widgets.

# %%
import numpy as np
from IPython.display import HTML, display

from modtok.studies.modular_tokenizers.unigram import UnigramStudy
from modtok.text import data
from modtok.ui import plots
from modtok.ui.widgets import Panel, budget_slider, language_picker

plots.setup()
SMOKE = data.is_smoke()  # MODTOK_SMOKE=1 (CI): small sizes, same code
TRAIN_CHARS = 100_000 if SMOKE else 1_000_000  # training characters per language
EVAL_LINES = 300 if SMOKE else None  # FLORES devtest lines per language (None: all 1012)
K = 800 if SMOKE else 8000  # pieces per monolingual Unigram
ITERS = 2 if SMOKE else 5  # EM iterations
LANGS = ["eng_Latn", "deu_Latn", "fra_Latn", "rus_Cyrl", "ukr_Cyrl", "npi_Deva", "tel_Telu", "swh_Latn"]
if SMOKE:
    LANGS = ["eng_Latn", "deu_Latn", "rus_Cyrl", "npi_Deva"]
LANGS = data.pick_languages(LANGS)  # wordfreq default: Hindi for Nepali, Tamil for Telugu, ...
corpora = data.default_corpora(LANGS, train_chars=TRAIN_CHARS, eval_lines=EVAL_LINES)
print(corpora.source)
LANGS = [lang for lang in LANGS if lang in corpora.train]

study = UnigramStudy(corpora, LANGS)  # monolingual Unigrams, trained once per (language, k)
merged = study.merge(LANGS, K, ITERS)
print(f"{len(LANGS)} languages at k={K}: merged vocabulary {len(merged.model):,} pieces "
      f"({merged.n_units:,} distinct words, {merged.n_words:,.0f} occurrences)")

# %% [markdown]
# ## (a) NSL vs the monolingual Unigram (Table 11 analog)
#
# NSL = tokens / tokens of the monolingual sentencepiece model of the same budget, on the
# evaluation lines of each language. The paper reports 1.00 for the subtokenizers.

# %%
mt = merged.modular()  # ModularTokenizer: HF tokenizer.json + lang_to_ids
rows = study.fidelity_rows(merged, K)
display(plots.table(rows))
plots.subtokenizer_bars(rows, title=f"NSL vs monolingual Unigram (k={K})").show()
subs = [r["subtokenizer"] for r in rows]
assert all(0.95 <= s <= 1.05 for s in subs), subs
assert np.mean([r["full merged"] for r in rows]) <= 1.0

# %% [markdown]
# ## (b) EM log-likelihood per iteration
#
# Iteration 0 is the union with the paper's start, $p(v) = 1/|V|$ (Algorithm 1 line 3);
# every M-step can only raise the joint-corpus log-likelihood. The averaged monolingual
# probabilities are a warmer start (`init="average"`): at the default iteration count
# (`merge_unigram`'s `max_iter=5`) both starts reach the same model.

# %%
start = {init: study.merge(LANGS, K, init=init) for init in ("uniform", "average")}  # 5 EM iterations
plots.lines({f"start: {init}": (range(len(m.loglik)), m.loglik) for init, m in start.items()},
            title="EM on the joint corpus", x_title="M-steps", y_title="log-likelihood").show()
assert all(b >= a for a, b in zip(merged.loglik, merged.loglik[1:]))
same = study.start_rows(start, K)
display(plots.table(same))
final = {init: m.loglik[-1] for init, m in start.items()}
print(f"final log-likelihood: uniform start {final['uniform']:.6g}, averaged start {final['average']:.6g}")
assert abs(final["uniform"] - final["average"]) < 1e-3 * abs(final["average"])
assert all(abs(r["NSL, uniform start"] - r["NSL, average start"]) < 0.01 for r in same), same

# %% [markdown]
# ## (c) Frequency-based extraction (Table 12 analog)
#
# Encode a language's training text with the full merged model and keep the k most frequent
# pieces. The result is bounded by the base tokenizer (it can only drop pieces), and at small
# k it falls behind the language's own Unigram.

# %%
KS = [K // 4, K // 2, K]
freq_rows = study.frequency_rows(merged, KS, K)
display(plots.table(freq_rows))
for row in freq_rows:
    vals = [row[f"k={k}"] for k in KS if not np.isnan(row[f"k={k}"])]
    assert all(a >= b - 1e-3 for a, b in zip(vals, vals[1:])), row  # more pieces, fewer tokens

# %% [markdown]
# ## (d) One sentence, three segmentations
#
# The same sentence through its language's subtokenizer, the full merged tokenizer and another
# language's subtokenizer (pieces it lacks fall back to shorter pieces or to UTF-8 bytes).

# %%
seg = study.segment(merged, LANGS[0], LANGS[-1])
print(seg["text"])
for name, pieces in seg["pieces"].items():
    print(f"\n{name} ({len(pieces)} tokens):\n  " + " | ".join(pieces))
assert seg["ids"] == seg["direct"]  # HF-backed encoders = the model's own restricted Viterbi
assert all(mt.decode(ids) == seg["text"] for ids in seg["ids"].values())
assert len(seg["pieces"]["full merged"]) <= len(seg["pieces"][f"{LANGS[-1]} subtokenizer"])

# %% [markdown]
# ## (e) Widgets: language subset, budget k, EM iterations
#
# The callback (`study.table`) trains the monolingual models of the chosen languages at budget k
# (once per language and k: the study keeps them), merges them, runs the given number of EM
# iterations and recomputes table (a). (Training takes a few seconds per language at full size.)

# %%
def render(rows):
    if not rows:
        return [HTML("<i>select at least one language</i>"), HTML("")]
    title = (f"NSL vs monolingual Unigram, {len(rows)} languages, k = {rows[0]['k']}, "
             f"{rows[0]['EM iterations']} EM iterations")
    return [plots.table(rows), plots.subtokenizer_bars(rows, title=title)]


picker = language_picker(LANGS, value=LANGS[:2])
k_slider = budget_slider(K // 2, min=400, max=16000, step=200, description="budget k")
iters = budget_slider(1, min=0, max=10, step=1, description="EM iterations")
panel = Panel(study.table, {"langs": picker, "k": k_slider, "iters": iters}, render)
panel.show()

# %%
before = panel.result
picker.value = (LANGS[0], LANGS[2])
assert panel.runs == 2 and panel.result[1]["language"] == data.lang_name(LANGS[2])
one_iter = panel.result
iters.value = 3  # same languages and k, more EM: the likelihood can only go up
assert panel.runs == 3 and panel.result[0]["EM log-likelihood"] >= one_iter[0]["EM log-likelihood"]
k_slider.value = K // 2 + 200
assert panel.runs == 4 and panel.result != before
