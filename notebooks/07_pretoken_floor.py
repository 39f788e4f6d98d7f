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
# # 07 — The pre-token floor and the English-preserving repair
#
# "Merge-Based Vocabulary Extension Stalls at the Pre-Tokenizer": the letters-only regex of
# Llama-3 and Qwen3 (`[^\r\n\p{L}\p{N}]?\p{L}+`) cuts a Nepali word before every vowel sign
# and virama, and no merge crosses a pre-token border. So however many merges are appended,
# the Nepali/English premium stays above the **pre-token floor** ΣP(ne)/ΣT(en). Moving `\p{M}`
# into the word class (arm R2) lowers the floor (sections (b) and (c) print it), and continued BPE then
# keeps falling, while every id of text without combining marks or Devanagari stays the same
# (Proposition 1). We show (a) the Fig. 4 illustration, (b) the audit of the deployed
# tokenizers (Table III), (c) a K sweep of R1 vs R2 on top of Llama-3 with the floors drawn,
# (d) the English-invariance check, (e) a widget to look at one sentence under any base, arm and K,
# (f) the added-tokens arm (App. J: R2's strings as HF added tokens on the unchanged regex), and
# (g) the same study across scripts (Table V: the paper's seven other languages with combining
# marks, Bengali, Hindi, Tamil, Telugu, Sinhala, Burmese and Thai, those the shared data has; the
# paper's no-mark controls are Amharic and Korean, Russian and Greek stand in where those are
# absent), and (h) continued pretraining of a small LM under R0 / R1 / R2 (§VI–VII analog, scored
# as App. D: every piece in one context), 3 seeds. The notebook ends with the generated "paper vs
# here" table, our setting beside the paper's.
#
# **Any data.** The study is about Nepali against English; without Nepali the notebook takes the
# data's first Devanagari language under its own code (Hindi on the wordfreq default) and says
# so; sections that need aligned text (the premium, Table III, App. J), the pool and FLORES-200
# (Table V) or a Devanagari language at all print what they need and skip. The paper's numbers
# are rows of the closing table, never asserts; the asserts check what holds for any data (the
# floor is a floor, lossless round trips, English ids unchanged, equal scored bytes).

# %% [markdown]
# ## Learn it small
#
# Before BPE counts pairs, a regex cuts text into pre-tokens, and no merge ever
# crosses a pre-token border. So the number of pre-tokens is a floor: no merges added later can
# bring the token count below it (§III). Llama-3's regex (R1) lets only letters into a word, and
# a Devanagari vowel sign is a combining mark, not a letter, so R1 cuts Nepali words inside
# syllables; the repair (R2, §V) puts marks in the word class. The toy cuts one Nepali phrase
# both ways, trains the same BPE under each regex, and finds a token that R2 learns and R1 never can.
#
# ```text
# floor(text, P)  = |P(text)|                 # pre-tokens: a lower bound on |T(text)|, §III
# train(text, P, K):
#   words = P(text)                           # BPE runs inside each pre-token
#   K times: merge the most frequent adjacent pair within a word
# token t is reachable under P  ⇔  t lies inside one pre-token of P somewhere in the text
# ```
#
# Predict first, then step through the run (Next / Back / Play, or the slider).

# %%
from modtok.studies.lessons import pretoken as toy
from modtok.ui.stepper import Predict, Stepper

display(Predict(toy.prediction()))
display(Stepper([*toy.trace(), toy.engine_step()]))

# %% [markdown]
# The last step is the same toy through the fast engine: the numba engine
# (`modtok.bpe.standard.train`) learns the same tokens under R1 and R2 as the naive reference.

# %%
from pathlib import Path

from IPython.display import display

from modtok.artifacts import deployed
from modtok.adapt import filters
from modtok.cache import size_text
from modtok.studies import paper_vs_here, setting
from modtok.studies.languages import choose
from modtok.studies.pretoken_floor import added_tokens, claims, cross_script, floor
from modtok.text import data
from modtok.ui import plots
from modtok.ui.widgets import Panel, choice

plots.setup()
SMOKE = data.is_smoke()
KS = [0, 1000] if SMOKE else [0, 1000, 2000, 4000, 8000, 16000, 32000]
# Llama-3 is needed (its load says how to install the deployed tokenizers when they are missing); Qwen3 if there
BASES = floor.deployed_bases([name for name in ("llama3", "qwen3") if name == "llama3" or name in deployed.available()])

# The target: Nepali, else its stand-in or the first Devanagari language the data has (under its
# own code, e.g. hin_Deva on the wordfreq default); English is the reference, Russian a second
# no-Devanagari check. Every other language is left out of (b)-(f) and (h), and the lines below
# say so, and which of them (g) asks for (Table V's languages: its cell says which it swept).
AVAILABLE = data.available_languages()
CHOICE = choose(["npi_Deva", "eng_Latn", "rus_Cyrl"], at_least=0, fewest=0)
TARGET = cross_script.narrow(CHOICE, SMOKE)  # the Devanagari target; the others left out of (b)-(f), (h), said
print(*CHOICE.lines(), sep="\n")
HAVE = TARGET is not None and "eng_Latn" in CHOICE.used  # sections (c)-(h) need both
corpora = data.default_corpora(CHOICE.used, train_chars=300_000 if SMOKE else 10**9)
print(corpora.source)
# what (c) and (h) trained on, said in their settings: None for the pool (its SOURCES.md), else e.g. one's manifest
TRAINING = None if data.training_source() == "pool" else setting.training_text(corpora).removeprefix("training: ")
if not HAVE:
    print("sections (b)-(h) need English and a Devanagari language (Nepali, Hindi, ...); the data has", AVAILABLE)
train = list(corpora.train.get(TARGET, []))
extra = data.extra_text_path(f"{TARGET}.large.txt")  # $MODTOK_EXTRA, else extra/ beside the pool
EXTRA = data.read_lines(extra) if extra else None  # (h)'s pretrained base reads it too (Nepali: npi_Deva.large.txt)
train += EXTRA if EXTRA and not SMOKE else []
print(f"training text ({TARGET}): {len(train):,} lines, {size_text(sum(len(x.encode()) for x in train))}" if TARGET
      else "no Devanagari language: no training text for (c)-(h)")
PARALLEL = HAVE and corpora.parallel_eval  # the whole aligned devtest (1,012 lines on FLORES): cheap
ne, en = corpora.eval.get(TARGET, []), corpora.eval.get("eng_Latn", [])
REF = en if PARALLEL else None  # the cost: premium over English on aligned text, else tokens per character
print("evaluation:", f"aligned lines, premium {TARGET}/eng" if PARALLEL else "held-out lines, tokens per character")

# %% [markdown]
# ## (a) Fig. 4: pre-tokens of *nepālko sarkār* under both regexes

# %%
PHRASE = "नेपालको सरकार"
fig4 = floor.pretoken_rows(PHRASE, {"Llama-3 (letters-only)": "llama3", "repaired (\\p{M} in the word class)": "llama3-marks"})
display(plots.table(fig4))

# %% [markdown]
# ## (b) The audit of the deployed tokenizers (Table III)
#
# Premium with its 95% paired-bootstrap interval, the floor under each tokenizer's full
# pre-tokenizer pipeline, premium = base × regex factor × vocab factor (base: the floor of the
# repaired Llama-3 pattern), the share of Nepali tokens that begin with a combining mark,
# and the lossless round trip. Same as `modtok audit NAME`. "lossless" is a finding, not a
# requirement, for a tokenizer with a normaliser: Qwen3's NFC changes every line that is not in
# NFC already (on the embedded default's UDHR Hindi many are not; the lossless column says so).

# %%
audit_rows = {}
if PARALLEL:
    audit_rows = floor.audit_rows(deployed.lazy(), ne, en, n_boot=200 if SMOKE else 1000)  # cached, keyed by file
    display(plots.ci_table([{"tokenizer": n, **r} for n, r in audit_rows.items()], {"premium_ci": "CI"}))
    # the paper's Table III figures (Llama-3 floor 2.19, premium 2.58; Qwen3 floor 2.17): 'paper vs here' below
else:
    print(f"the premium and the floor need {TARGET or 'a Devanagari language'} and English on aligned text "
          "(FLORES-200, or your own parallel evaluation text); skipped on", corpora.source)

# %% [markdown]
# ## (c) K merges on top of Llama-3 and Qwen3: R1 stalls at its floor, R2 keeps falling
#
# Continued BPE in each tokenizer's own ids (Llama-3: new ids from 128256 on), the §V filter
# (a new token must hold a complete Devanagari code point). One run per base and arm; each K
# is a prefix of it. R2 is the base's own regex with `\p{M}` moved into the word class.


# %%
sweep = floor.k_sweep(BASES, train, KS, ne, REF) if HAVE else None
if HAVE:
    display(plots.table(sweep.rows))
    plots.lines(sweep.curves(), title=f"{TARGET} cost vs appended merges", x_title="K merges",
                y_title=f"premium {TARGET}/eng" if PARALLEL else "tokens per character").show()
    # the paper's claims (R1 stalls at its floor, R2 goes below it) are rows of the 'paper vs here' table

# %% [markdown]
# ## (d) English ids do not move
#
# Every extended tokenizer gives the original ids on the English evaluation lines (and on the
# Russian ones when the data has them); `tests/test_repair.py` adds hypothesis strings.

# %%
check = {lang: corpora.eval[lang] for lang in ("eng_Latn", "rus_Cyrl") if HAVE and lang in corpora.eval}
moved = [key for lines in check.values() for key in floor.moved_ids(BASES, sweep.tokenizers, lines)] if HAVE else None
print(f"ids identical on {', '.join(check) or '(nothing: skipped)'}: {not moved}, for all "
      f"{len(sweep.tokenizers) if HAVE else 0} extended tokenizers")

# %% [markdown]
# ## (e) One sentence under any arm and K
#
# The target's first evaluation line under each base, arm and K. On data without a Devanagari
# language no merge was learned: the phrase of (a) under each base with its own regex (R1) and
# the repaired one (R2), K = 0.


# %%
# without a Devanagari language (no merges learned): the Fig. 4 phrase under the bases alone, K = 0
TOKS, SENTENCE, KS_E = (sweep.tokenizers, ne[0], KS) if HAVE else (floor.base_tokenizers(BASES), PHRASE, [0])
print(f"{TARGET}'s first evaluation line" if HAVE else "no Devanagari language: the phrase of (a), K = 0 only")
panel = Panel(floor.segmenter(TOKS, SENTENCE), {"base": choice(list(BASES), description="base"),
              "arm": choice(["R1", "R2"], description="arm"), "k": choice(KS_E, description="K")},
              render=plots.segmentation)
panel.show()

# %% [markdown]
# ## (f) The added-tokens arm (App. J)
#
# R2's learned whole-Devanagari strings (Llama-3 R2 at the largest K above) registered as HF
# added tokens on the *unchanged* Llama-3, letters-only regex and all. HF matches added tokens
# before the pre-tokenizer: by default anywhere, also inside a longer word; with
# `single_word=True` only where no word character touches the match. Two readings of a string:
# as learned, with its leading space (*space keep*), or the Devanagari alone (*space strip*).
# A match is *inside a word* where a letter or mark sits on both sides of its start or of its
# end (`modtok.studies.pretoken_floor.added_tokens`).

# %%
if PARALLEL:
    app_j = added_tokens.arm_rows(BASES["llama3"], sweep.extensions["llama3", "R2", KS[-1]], ne, en,
                                  n_boot=200 if SMOKE else 1000)
    display(plots.ci_table(app_j, {"premium_ci": "CI"}))
    bars = floor.long_rows(app_j, "tokenizer", {"premium": f"premium {TARGET}/eng",
                                                "inside": "share of matches inside a word"})
    plots.grouped_bars(bars, x="tokenizer", y="value", color="measure", hline=1.0,
                       title=f"Added tokens vs merges, Llama-3, K = {KS[-1]:,}").show()
else:
    print("the added-tokens arm needs the Devanagari target and English on aligned text; skipped on", corpora.source)

# %% [markdown]
# ## (g) Across scripts (Table V)
#
# Per language, on top of each base: the original premium vs English (FLORES-200 devtest), the
# floor under the original and under the repaired regex, the share of tokens that begin with a
# combining mark, and the premium after K merges of R1 and of R2 learned on the language's pool
# text, filtered by its own script's characters (`filters.BlockFilter.for_script`: Unicode's script property). One filter for every language:
# App. H *as worded* (a kept token holds a complete character of the script, or is a byte piece
# of **one** such character after an optional space; `cross_script.RULES` has the strict §V rule
# and the looser "runs" rule this project used before), with R2 under the strict filter beside it
# (`R2_strict_premium`) and the share of merges strict would keep (`strict_share`). K is the
# paper's 32k at full size, but the pool's ≤ 3 MB a language does not allow it: `R1_learned` and
# `R2_learned` say where the text ran out of pairs seen twice, R1 long before R2 (the paper learns on
# 25–361 MB a language, App. H). **The languages are the paper's** (`cross_script.PAPER_MARKED`): of its
# seven, the shared pool has Hindi, Bengali, Tamil, Telugu and Sinhala; Burmese and Thai have no
# pool text, and the cell prints each language left out with the reason. The paper's no-mark
# controls are Amharic and Korean; the pool has neither, so Russian and Greek stand in, and the
# cell says which were used. Every extension must leave the English ids unchanged.

# %%
K_X = 300 if SMOKE else cross_script.PAPER_K  # Table V's languages the data has (smoke: three), on aligned text
pool_v, said = cross_script.configured_table({name: BASES[name] for name in (["llama3"] if SMOKE else BASES)}, SMOKE,
                                             K_X, train_chars=200_000 if SMOKE else 10**9, n_boot=200 if SMOKE else 1000)
print("\n".join(said))  # K, filter, text per language; Table V's languages used or left out (why); or why skipped
table_v = pool_v.rows if pool_v is not None and pool_v.rows else None
if table_v:
    display(plots.ci_table(table_v, {"premium_ci": "CI", "R1_ci": "R1 CI", "R2_ci": "R2 CI"}, cross_script.COLUMNS))
    plots.grouped_bars(cross_script.figure_rows(table_v), x="language", y="premium", color="tokenizer", hline=1.0,
                       title="Premium vs English on Llama-3 across scripts", x_label=data.LANG_NAMES).show()


# %% [markdown]
# ## (h) Continued pretraining: R0 / R1 / R2
#
# The §VI–VII analog at workspace scale, in one call (`continued.study`, the same call as
# `bench/continued_pretraining_full.py`): the base is the project's own byte-level BPE with the
# Llama-3 letters-only regex, trained on English-heavy text (pool English plus a little Nepali),
# and a small GPT pretrained on the same text. The arms continue from its weights on the SAME
# Nepali + English lines, mostly Nepali by bytes: **R0** the base tokenizer, **R1** K merges
# under the original regex, **R2** the repaired regex + K merges; new rows are the mean of their
# constituents (§V). R0, R1 and R2 read those bytes once (R2 in the fewest steps). As in the
# paper, **R2 (matched steps)** (R2-m, Table IX) takes R1's step count, its extra windows a second
# pass over the same stream; **R0 (matched steps)** (R0 cut to R1's step count) is our addition:
# the paper "did not run R0 at matched steps". Each arm runs once per seed (a seed orders the
# lines). Before each run the cell prints what it will run, field by field (`claims.cpt_plan`,
# from the preset's `Setup`): the shares of the texts, K, the model, the rate and its warm-up,
# the batch, the held-out slice, the piece size and the seeds.
#
# **Scored as App. D.** The held-out texts are the paper's: the *primary* one a slice of the
# training source right after the training text, never trained on (target and English, the
# English one the registered control); FLORES-200 devtest is *secondary*. Each is cut into pieces
# that never cross a document: on FLORES-200 the document of its metadata; the pool's lines are
# hash-shuffled paragraphs of articles (one line = one paragraph, the data's SOURCES.md), so there
# the document is the line (the paper's slice keeps whole documents: 503 on Nepali, Table I). **Every
# piece is scored independently, in one context**: after a prefix
# token every arm has (our tokenizers have no BOS: the LM's document boundary, which the training
# stream puts at every document start, as the paper's BOS rerun does), all its tokens in ONE
# window of the model, so every arm conditions on the same bytes. The paper's 2,048-token
# context holds any of its 2,000-byte pieces (§VI, App. D). Ours is `seq_len` ids, so the piece
# size is *chosen*: the largest size from the paper's (`Setup.piece_bytes`) down at which the
# longest piece fits one context under R0, R1 and R2 (R0, with the shortest tokens, binds), and
# the scorer refuses a piece that would need two windows. The cell prints the size chosen and
# each arm's longest piece in ids. Intervals
# (95%) resample **documents** (FLORES-200's metadata; a line on the pool, as `unit` says), the
# same for every arm and seed; `± seeds` is the spread over seeds. The labels of R2 − R1 and
# R2 − R0 are tested in §VI's fixed order (better, non-inferior at 0.01, worse, no detectable
# difference): an interval below +0.01 is non-inferior even when it excludes 0, as §VI's own
# example [+0.004, +0.007].
#
# **Where this departs from the paper's setting (§VI, App. D).** Each field is a line of the plan
# the cell prints, a row of the settings table printed after the run (`claims.cpt_setting_rows`:
# the paper's beside ours, with what the run took) and of the "setting differs" column of the
# closing table. In words, with the paper's figures cited:
#
# - **model**: a small LM pretrained here, untied input and output embeddings, with its own small
#   byte-level BPE as the base tokenizer, not the pretrained Llama-3.2-1B and Qwen3-0.6B-Base with
#   their tied embeddings and Llama-3's tokenizer (§VI);
# - **data**: a slice of the shared pool, mostly Nepali by bytes, not 1 GB of FineWeb-2 Nepali +
#   1 GB of FineWeb-Edu English, 50% / 50% (§VI);
# - **merges**: K far below the paper's 32,000 (§VI), on far less text;
# - **learning rate**: higher than the paper's, with a longer warm-up (the paper: 1e-4 peak, 1%
#   warm-up, cosine to 10%, §VI and App. D); ours decays by the same cosine;
# - **steps**: one pass per arm of `batch_size` windows of `seq_len` ids a step, not 546–1,095
#   steps of 256 × 2,048 tokens (Table IX);
# - **held-out text**: a slice of the pool right after the training text, not the paper's 30 MB
#   slice of which the first 4 MB is scored (App. D), in pieces of at most the size chosen to fit
#   our context; the seeds are the plan's (the paper ran two, Table IX).
#
# Smoke size shrinks all of it; a GPU takes the "gpu" preset.
#
# **The regime this tests** (the line the cell prints first, generated from the setting by
# `continued.regime`): a base model this small, trained this briefly on little Nepali, reads
# English at well over the bits per byte of the paper's base models, 0.788 (Llama-3.2-1B) and 0.873
# (Qwen3-0.6B-Base) in §VII-B. That is close to training from scratch, and the paper's own §VIII
# ("Why our sign differs from Regmi et al.") says that from scratch the wider word class *lowers*
# Nepali bits per byte, while retrofitted to a pretrained model at equal bytes it is worse. So in
# this regime the paper expects R2 to win: a reversal of §VII-B's sign here is the paper's
# expectation, not a failed reproduction. The next cell tests the paper's own regime as far as
# this data allows.

# %% [markdown]
# ### (h) continued: the pretrained-base arm
#
# The paper's hypothesis is about a *pretrained* model. This arm pretrains the base model on
# substantial Nepali, the extra text `npi_Deva.large.txt` (disjoint from the pool, so from the
# continued-pretraining and held-out slices), and pool English, interleaved, **until its Nepali bits
# per byte flatten**: every `eval_every` steps it scores a Nepali dev slice (right after its
# training text, never trained on); the rate stays constant after warm-up until the last
# `window` + 1 evaluations lie within `min_gain` bits per byte of each other (a swinging curve
# does not count), or `max_steps`; then it decays (cosine to a tenth of the peak over a quarter of
# the steps so far), and the evaluated step with the lowest dev bits per byte is the base
# (`continued.Flatten`; the printed history says where it flattened, or that it did not, and
# which step was used). Then the same arms R0 / R1 / R2 / R2-m continue with **tied embeddings**
# and the paper's rate and shape (§VI, App. D: 1e-4 peak, 1% linear warm-up,
# cosine to 10%) on the paper's equal shares of Nepali and English by bytes (§VI), scored as
# above; the plan line before the run prints this preset's values. The base tokenizer is the same
# English-heavy BPE, so R1 and R2 have room to merge. Without the extra text the arm says what is
# missing; at smoke size it takes the pool's Nepali lines after the held-out slice instead (and
# says so). Sizes: `pretrained-smoke` here in CI, `pretrained-cpu` (reduced) on a CPU,
# `pretrained-gpu` (the full size) where CUDA is present; the full run outside the notebook is
#
#     MODTOK_POOL=... MODTOK_FLORES=... PYTHONHASHSEED=0 python bench/continued_pretraining_full.py OUT --pretrained
#
# which picks `pretrained-gpu` on a GPU (`default_device`) and runs unchanged there.

# %%
import shutil

import torch

from modtok.studies.pretoken_floor import cpt as continued

SIZE = continued.machine_size(SMOKE)  # smoke in CI, else gpu where CUDA is, else cpu
if SIZE != "gpu":  # small models on a shared CPU: spinning OpenMP threads cost more than they give
    torch.set_num_threads(1)
SETUP, SIZES = continued.preset(SIZE)  # what study() runs: sizes, model, 3 seeds (the pretrained base's: below)
NAME, RUNS = data.lang_name(TARGET) if TARGET else None, {}
for size in (SIZE, "pretrained-" + SIZE):  # the small-base regime, then the pretrained-base arm
    setup, sizes = continued.preset(size)
    print(f"{size}:", *claims.cpt_plan(setup, sizes, TARGET, corpora.eval_label, TRAINING), sep="\n  ")  # its plan
    # what is missing: the extra text (the pretrained base's), or text enough for its dev slice (train: the
    # target's training lines, with the extra text only where the pretrained presets read that instead)
    if why := "no English + Devanagari" if not HAVE else continued.missing(size, train, TARGET, EXTRA):
        print("  skipped:", why)
        continue
    res = RUNS[size] = continued.study(size, corpora.train["eng_Latn"], train if not setup.flatten else
                                       corpora.train[TARGET], ne, NAME, TARGET, corpora.eval_label,
                                       Path("build") / "07_continued" / size, progress=not SMOKE, extra_target=EXTRA)
    print("\n".join(res.describe(NAME)))  # the regime (§VIII), the base's dev history, the pieces: one context each
    display(plots.table(res.table()))
    # the paper's rows (Tables I, IX; §VII-B): R2 − R1 at equal bytes, R2-m − R1 and R2-m − R0 at R1's steps,
    # R2 − R0 on the target, the English control R2 − R0 on English; ours beside the paper's figure
    display(plots.table(claims.cpt_rows(res)))  # with the scale: the regime it tested
    display(plots.table(sorted(res.comparisons(), key=lambda c: not c["registered"])))  # every pair, labels
    plots.grouped_bars(res.interval_rows(), x="held-out text", y="bits per byte", color="arm", ci=("lo", "hi"),
                       title=f"{size}: bits per byte, mean of {len(setup.seeds)} seeds, 95% CI over documents").show()
    # the paper's setting (§VI, App. D) beside ours, field by field, generated from the setup and this run
    display(plots.table(claims.cpt_setting_rows(setup, sizes, TARGET, corpora.eval_label, res, TRAINING)))
shutil.rmtree(Path("build") / "07_continued", ignore_errors=True)  # base models; each arm's went once scored
cpt = RUNS.get(SIZE)

# %% [markdown]
# *Evidence from the full CPU run* (`bench/continued_pretraining_full.py`, the same
# `continued.study` call at this notebook's CPU size; its tables, date, wall time and load are in
# `bench/RESULTS.md`, "Continued pretraining as App. D scores it": the numbers live there, dated,
# not typed here). Every piece fit one context under R0, R1 and R2. On the primary held-out
# Nepali, R2 is below both R0 and R1, "better" in every seed, and R2 at matched steps lower
# still; FLORES-200 agrees, and the English control holds ("better"). So **the paper's verdict (R0
# lowest, §VII-B) is reversed here, and App. D's one-context scoring does not remove the
# reversal**: it is not a context effect. What that run measures beside it: the base model is far
# above R0 on Nepali (base − R0 is larger than any difference between the arms), i.e. most of
# what every arm gains is learning Nepali at all, which the paper's pretrained 1B / 0.6B models
# need not do, and R2's tokens carry nearly twice R0's bytes of Nepali. That is the regime the
# paper's §VIII expects R2 to win.
#
# *Evidence from the pretrained-base arm* (`bench/continued_pretraining_full.py --size
# pretrained-cpu`, the reduced size, on the shared CPU cores; `bench/RESULTS.md`, "Continued
# pretraining from a pretrained base", sub-section "second session", has its tables, its base's
# dev history, the load, and the first run it supersedes, whose base read its English and its
# Nepali in blocks and swung with them). A small base with tied embeddings, pretrained on the
# extra Nepali and pool English interleaved: its dev bits per byte **flattened by the rule**,
# then decayed, and its best step is the base; R0's own pass then gains it little (base − R0
# is small beside the arms' differences), so the base is no longer learning Nepali from the
# arms' text. Each arm then one pass at the paper's rate. **R0 is lowest on Nepali, as in the
# paper**: R2 − R0 is "worse" in every seed, on FLORES-200 too, and so is R2 at matched steps −
# R0, by far more than the paper's (§VII-B). **R2 − R1 keeps our sign**: "better" in every
# seed, where the paper's R2 is worse than R1 (§VII-B). **The English control fails** ("worse"
# in every seed, above §VI's margin). Caveats, measured: R1 and R2 each add about a thousand
# rows that their few dozen steps at the paper's rate cannot train (R1 − R0 is larger still than
# R2 − R0), while the paper's models train theirs on a gigabyte; and the base reads English
# at about twice the bits per byte of the paper's base models (0.788 and 0.873, §VII-B), with
# little English in its text. So at this reduced size the paper's "R0 lowest" sign holds once
# the base is pretrained to a plateau on substantial Nepali, and its "R2 worse than R1" sign
# does not. The full size is the `pretrained-gpu` preset (the command above), not run here: no
# GPU was available to that run.

# %% [markdown]
# ## Paper vs here
#
# Every claim with the paper's figure and ours, from the numbers computed above
# (`modtok.studies.pretoken_floor.claims`, the paper's figures in `paper_figures.toml`), the
# paper's setting beside ours field by field (`claims.setting`, generated from this notebook's
# configuration) and every difference in the row. Rows that need Nepali against English on
# aligned text say so on other data. A claim that does not hold carries the reason this run
# measured (`claims.reasons`): for continued pretraining, how far the base model is from R0 (how
# much of what the arms gain is learning the language at all, which the paper's pretrained
# models need not do), what R0's extra steps gave it (R0 at R1's step count) and the arms' bytes
# per token; for the sweeps, where the text ran out of merges or which language breaks the rule.
# Those are measurements beside the verdict, not a tested cause; where nothing was measured the
# row says "reason not measured". The line printed first says which arm is lowest on the
# primary held-out text (the paper: R0).

# %%
here = claims.measured(TARGET, PARALLEL, audit_rows, sweep, moved, table_v, cpt)
print(cpt.summary(cpt.roles["primary"]) if cpt is not None and "primary" in cpt.roles
      else "no continued pretraining on this data")
print(floor.cache_note())  # which of this notebook's results were read back from the results cache
SETTING = claims.setting(claims.Settings(TARGET, sum(len(x.encode()) for x in train), KS, corpora.eval_label, list(BASES),
                                         SETUP if cpt is not None else None, SIZES, cpt,
                                         k_cross=K_X if table_v else None, cross=pool_v, training=TRAINING))
REASONS = claims.reasons(here, sweep=sweep, table_v=table_v, moved=moved, cpt=cpt)
plots.table(paper_vs_here.table("pretoken_floor", here, SETTING, REASONS))


# %% [markdown]
# ## Checks
#
# What must hold on any data (whatever its languages, scripts and sizes), and that the widgets
# recompute: `make test` and the browser suite run these cells; their source is collapsed (click
# the bar on the left to show it). A section that was skipped is not checked.

# %% jupyter={"source_hidden": true}
assert fig4[0]["count"] > fig4[1]["count"] == 2  # the letters-only regex cuts the Nepali phrase at its marks
for name, r in audit_rows.items():  # premium >= floor on any text; only a normaliser may change the text
    assert r["premium"] >= r["floor"] - 1e-12 and (r["lossless"] or deployed.load(name).normalizer), name
assert all(r["cost"] >= r["floor"] - 1e-9 for r in (sweep.rows if HAVE else [])), "the floor is a floor"
for name in BASES if HAVE else []:  # the repaired regex cuts no more pre-tokens than the letters-only one
    assert sweep.of(name, "R2")[0]["floor"] <= sweep.of(name, "R1")[0]["floor"] + 1e-9, name
assert not moved, moved  # Proposition 1: English (and Russian) ids do not move
if PARALLEL:  # the added-tokens arm: lossless; single_word drops every match our rule calls inside
    if not any(0x0900 <= ord(c) <= 0x097F for line in en for c in line):  # English without Devanagari: no match
        assert all(r["english_unchanged"] for r in app_j)
    assert all(r["lossless"] for r in app_j)
    for space in added_tokens.SPACE_READINGS:
        single = {r["tokenizer"]: r for r in app_j}[f"added tokens, space {space}, single_word"]
        assert single["matches"] == 0 or single["inside"] == 0, space
if pool_v is not None:  # every language asked: used or named; Proposition 1 under App. H; floors are floors
    assert set(pool_v.train_bytes) | set(pool_v.left_out) == set(cross_script.wanted(AVAILABLE, SMOKE))
    for r in table_v or []:
        assert r["english_unchanged"], r["language"]
        assert r["R1_premium"] >= r["floor"] - 1e-9 and r["R2_premium"] >= r["floor_repaired"] - 1e-9, r["language"]
for size, res in RUNS.items():  # both regimes: byte-matched arms, every piece in one context
    arms, setup = res.arms, res.setup
    assert arms["R0"].tokenizer.vocab_size <= arms["R1"].tokenizer.vocab_size  # R1: the base + its kept merges
    assert arms["R0"].bytes == arms["R1"].bytes == arms["R2"].bytes  # byte-matched: one pass each
    assert arms["R1"].steps == arms[continued.MATCHED].steps == arms[continued.R0_MATCHED].steps <= arms["R0"].steps
    for ev, h in res.held_out.items():  # App. D: every piece in one context under R0, R1 and R2, none cut
        assert h.piece_bytes <= setup.piece_bytes, ev
        assert all(continued.longest(arms[a].tokenizer, h.texts) <= res.seq_len for a in ("R0", "R1", "R2")), ev
    assert all(len({r[f"{ev} scored bytes"] for r in res.table()}) == 1 for ev in res.held_out)  # same bytes
    if setup.flatten:  # the pretrained base: constant until its rule (or max_steps), decayed, its best step, tied
        f, dev, base = setup.flatten, dict(res.base_history), arms[continued.BASE].model
        assert res.flattened == continued.flattened([b for s, b in dev.items() if s <= res.base_decay[0]], f.window, f.min_gain)
        assert dev[res.base_steps] == min(dev.values()) and base.out.weight is base.embed.weight
before, runs = panel.result["tokens"], panel.runs  # the segmentation explorer recomputes
panel.controls["k"].value, panel.controls["arm"].value = KS_E[-1], "R2"
assert panel.runs == runs + 1 + (KS_E[-1] != KS_E[0]) and panel.result["arm"] == "R2" and panel.result["K"] == KS_E[-1]
assert not HAVE or panel.result["tokens"] <= before  # more merges and a coarser regex: never more tokens
