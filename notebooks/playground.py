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
# # The tokenizer playground
#
# Type or paste a sentence in the box and watch how each tokenizer cuts it: every token is a
# coloured pill, and the pills are redrawn as you type. Run All, then:
#
# * **hover** a pill for its token id(s) and bytes;
# * **click** a pill to unroll its merges down to bytes (click again to fold it);
# * a pill with a **dashed border** and a small "N tokens" holds several tokens: the tokenizer cut
#   *inside* a character (byte-level tokenizers spell a rare script's letters byte by byte), and
#   the pieces are shown together so the text stays readable;
# * `·` is a space, `↵` a newline, `→` a tab;
# * the second box takes a parallel English line: each row then shows its **premium**, its tokens
#   for your text divided by its tokens for the English line (a premium of two: twice the tokens, so twice the
#   compute and half the context for the same content).
#
# The rows: the deployed tokenizers of Llama-3, Qwen3, OpenAI (o200k, cl100k) and Mistral (a
# SentencePiece BPE with byte fallback), and a small BPE trained here on one language of the
# configured data (Nepali, or its same-script stand-in, else the data's first language other than
# English; English only when the data has no other), the monolingual reference of notebook 01,
# pre-tokenized as modtok's training commands do (`llama3-marks-bounded`: vowel signs stay in
# the word; a run of text without spaces is cut at 16 characters). The parallel line is English's,
# never the sentence's own language; without one the cell says why.

# %%
from modtok.artifacts import baselines
from modtok.studies.languages import choose
from modtok.text import data
from modtok.text.training import TRAINING_SCHEME
from modtok.ui.playground import Playground, deployed_views, languages

# Nepali, else its stand-in, else the data's first language but English; the parallel line English's, if any
lang, ref, no_ref = languages(choose(["npi_Deva"], at_least=1).used, data.available_languages())
corpora = data.default_corpora([lang, *([ref] if ref else [])], train_chars=200_000 if data.is_smoke() else 1_000_000)
print(corpora.source)
monolingual = baselines.train_hf_bpe(corpora.train[lang], 2000 if data.is_smoke() else 8000, scheme=TRAINING_SCHEME)
views, missing = deployed_views()

# %%
sentence = corpora.eval[lang][0]
english = corpora.eval[ref][0] if ref in corpora.eval and corpora.parallel_eval else ""
print(f"{lang}: {sentence}\n" + (f"English, the parallel line: {english}" if english else
      f"no parallel English line ({no_ref or f'{corpora.eval_label} is not aligned'}): type one into the second box"))
playground = Playground({**{v.name: v for v in views}, f"BPE on {lang}": monolingual},
                        text=sentence, reference=english, missing=missing)
playground.show()

# %% [markdown]
# **Your own tokenizers.** `Playground` takes any mix of deployed names (`"qwen3.5"`, `"tekken"`),
# HF `tokenizers.Tokenizer` objects, a `ModularTokenizer` (its global vocabulary) and its
# subtokenizers (`tok.subtokenizer(["npi_Deva"])`, or a union such as `["eng_Latn", "npi_Deva"]`),
# for instance `Playground({"Llama-3": "llama3", "Nepali only": tok.subtokenizer("npi_Deva")})`.
# `modtok playground` opens this notebook alone in JupyterLab.
