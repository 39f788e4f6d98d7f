# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
# ---

# %% [markdown]
# # 02 — Sequential multilingual BPE (modular tokenizers §4.2, Algorithm 2)
#
# Languages are trained one after another on one global merge list; each keeps a
# budget-k sub-vocabulary closed under ancestry, so any union of languages is a proper
# BPE. We compare (a) each extracted subtokenizer with a monolingual BPE of the same
# budget, (b) n-language unions against naive concatenation of monolingual BPEs,
# (c) why a token cannot form under concatenation, (d) global vocabulary size vs languages.

# %%
import random

import ipywidgets as widgets
import numpy as np
import plotly.graph_objects as go

from modtok import data
from modtok.bpe import standard
from modtok.bpe.concat import concatenate
from modtok.bpe.sequential import train_sequential
from modtok.export import hf_tokenizer
from modtok.pretokenize import count_by_language

SMOKE = data.is_smoke()
LANGS = data.pick_languages(["eng_Latn", "deu_Latn", "fra_Latn", "rus_Cyrl", "npi_Deva", "swh_Latn"])
corpora = data.default_corpora(LANGS, train_chars=100_000 if SMOKE else 1_000_000)
print(corpora.source)
LANGS = [lang for lang in LANGS if lang in corpora.train]
K = 600 if SMOKE else 8000
counts = count_by_language(corpora.train, "llama3")


def ntokens(tok, lines):
    return sum(len(e.ids) for e in tok.encode_batch(lines, add_special_tokens=False))


# %% [markdown]
# ## (a) Subtokenizer fidelity: NSL vs a monolingual BPE of the same budget

# %%
def fidelity_table(k):
    seq = train_sequential(counts, k, order=LANGS)
    monos = {lang: standard.train(counts[lang], k) for lang in LANGS}
    ref = {lang: ntokens(hf_tokenizer(monos[lang]), corpora.eval[lang]) for lang in LANGS}
    mt = seq.modular()
    rows = {lang: (ntokens(mt.subtokenizer([lang]).hf, corpora.eval[lang]) / ref[lang],
                   ntokens(mt.hf, corpora.eval[lang]) / ref[lang]) for lang in LANGS}
    return seq, monos, ref, rows


seq, monos, ref, rows = fidelity_table(K)
for lang, (sub, glob) in rows.items():
    print(f"{lang:10s} subtokenizer {sub:.3f}  global {glob:.3f}")
assert max(sub for sub, _ in rows.values()) <= 1.10

# %% [markdown]
# ## (b) n-language unions: sequential vs concatenation (random subsets and orders)

# %%
def compare_unions(n, trials=3, seed=0):
    rng = random.Random(seed)
    out = {"sequential": [], "concatenation": []}
    for _ in range(trials):
        subset = rng.sample(LANGS, n)
        sq = train_sequential({l: counts[l] for l in subset}, K, order=subset).modular()
        ct = concatenate(monos, subset).modular()
        for name, mt in (("sequential", sq), ("concatenation", ct)):
            sub = mt.subtokenizer(subset).hf
            out[name].append(np.mean([ntokens(sub, corpora.eval[l]) / ref[l] for l in subset]))
    return out


results = {n: compare_unions(n) for n in (1, 2, 3, 4)}
fig = go.Figure()
for name in ("sequential", "concatenation"):
    fig.add_trace(go.Box(x=[n for n in results for _ in results[n][name]],
                         y=[v for n in results for v in results[n][name]], name=name))
fig.update_layout(boxmode="group", xaxis_title="languages in the union", yaxis_title="NSL vs monolingual")
fig.show()
assert np.mean(results[4]["sequential"]) < np.mean(results[4]["concatenation"])

# %% [markdown]
# ## (c) Merge hierarchy explorer: how a word is built, and why concatenation can fail

# %%
def merge_tree(model, token, depth=0):
    lines = ["  " * depth + repr(model.vocab[token].decode("utf-8", "replace"))]
    if model.parents[token] is not None:
        for part in model.parents[token]:
            lines += merge_tree(model, part, depth + 1)
    return lines


def explain(word, langs=("eng_Latn", "deu_Latn")):
    langs = list(langs)
    cat = concatenate(monos, langs)
    seqm = train_sequential({l: counts[l] for l in langs}, K, order=langs)
    out = []
    for name, res in (("concatenation", cat), ("sequential", seqm)):
        mt = res.modular()
        ids = mt.encode(word, langs)
        out.append(f"{name}: {[res.model.vocab[i].decode('utf-8', 'replace') for i in ids]}")
        for t in ids:
            out += merge_tree(res.model, t, 1)
    return "\n".join(out)


word = widgets.Text(value=" understanding", description="word")
explorer = widgets.Output()
explained = {}


def on_word(change):
    explained["text"] = explain(change["new"])
    explorer.clear_output()
    with explorer:
        print(explained["text"])


word.observe(on_word, names="value")
display(widgets.VBox([word, explorer]))  # noqa: F821
word.value = " Straßenbahn"
print(explained["text"])
assert "sequential" in explained["text"] and "concatenation" in explained["text"]

# %% [markdown]
# ## (d) Global vocabulary size vs number of languages

# %%
sizes = [len(train_sequential({l: counts[l] for l in LANGS[:n]}, K, order=LANGS[:n]).model)
         for n in range(1, len(LANGS) + 1)]
fig = go.Figure(go.Scatter(x=list(range(1, len(LANGS) + 1)), y=sizes, mode="lines+markers", name="sequential"))
fig.add_trace(go.Scatter(x=list(range(1, len(LANGS) + 1)), y=[256 + n * (K - 256) for n in range(1, len(LANGS) + 1)],
                         name="no sharing (n·k)"))
fig.update_layout(xaxis_title="languages", yaxis_title="global vocabulary")
fig.show()
assert sizes == sorted(sizes) and sizes[-1] <= 256 + len(LANGS) * (K - 256)

# %% [markdown]
# ## Budget widget: the fidelity table for another k

# %%
budget = widgets.IntSlider(value=K, min=300, max=K, step=100, description="k")
table = {}


def on_budget(change):
    table.clear()
    table.update(fidelity_table(change["new"])[3])


budget.observe(on_budget, names="value")
display(budget)  # noqa: F821
budget.value = max(300, K // 2)
assert len(table) == len(LANGS) and all(v[0] > 0 for v in table.values())
