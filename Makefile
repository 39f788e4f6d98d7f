# modtok — setup and the three commands (see README.md).
#   make demo   run every walkthrough notebook headless, write reports/<notebook>.html
#   make test   install what is needed, run pytest and nbval over every notebook
#   make lab    open JupyterLab; notebooks/*.py open as notebooks (jupytext)

PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.modtok-installed
SHARED := $(abspath ../shared/data)

# Point at the shared data when it exists (override with your own copies).
ifneq ($(wildcard $(SHARED)/flores200/devtest),)
export MODTOK_FLORES ?= $(SHARED)/flores200
endif
ifneq ($(wildcard $(SHARED)/pool),)
export MODTOK_POOL ?= $(SHARED)/pool
endif
export JUPYTERLAB_SETTINGS_DIR := $(abspath .jupyter/lab/user-settings)
export PYTHONHASHSEED := 0

NOTEBOOKS := $(sort $(wildcard notebooks/[0-9]*.py))
BUILT     := $(patsubst notebooks/%.py,build/notebooks/%.ipynb,$(NOTEBOOKS))

.PHONY: install demo test lab notebooks clean

install: $(STAMP)

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --disable-pip-version-check -e '.[deployed,notebooks,corpora,test]'
	@touch $@

build/notebooks/%.ipynb: notebooks/%.py $(STAMP)
	@mkdir -p build/notebooks
	$(BIN)/jupytext --quiet --to ipynb --output $@ $<

notebooks: $(BUILT)

demo: notebooks
	@mkdir -p reports
	@for nb in $(BUILT); do \
	  echo "== running $$nb"; \
	  $(BIN)/jupyter nbconvert --to html --execute --ExecutePreprocessor.timeout=3600 \
	    --output-dir reports $$nb || exit 1; \
	done
	@echo; echo "Reports written to $(abspath reports)/:"; ls -1 reports/*.html

test: notebooks
	$(BIN)/python -m pytest -q --doctest-modules modtok tests
	MODTOK_SMOKE=1 $(BIN)/python -m pytest -q --nbval-lax --nbval-current-env \
	  --nbval-cell-timeout=900 -p no:cacheprovider $(BUILT)

lab: $(STAMP)
	$(BIN)/jupyter lab --notebook-dir=notebooks $(if $(filter 0,$(shell id -u)),--allow-root)

clean:
	rm -rf build reports
