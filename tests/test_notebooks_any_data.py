"""Notebooks run to the end on any corpus, and read as lessons.

- No ``assert`` and no widget poke (setting a control's ``.value``, what a click does) in the
  reader's path: they live in one "Checks" section that ends each notebook, whose code cells
  JupyterLab shows with their source collapsed (``jupyter: {source_hidden: true}``). A user's
  corpus must never stop ``make demo`` on a test of the widget plumbing (issue 41), and what
  the checks test must hold for any data (the browser suite runs every notebook on
  ``modtok example-corpus --scripts``: eight languages, five scripts written without spaces).
- ``make demo`` (``modtok/ui/demo.py``) writes the HTML of a notebook that failed, with the
  error in it, and says which report shows it.
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys

import pytest
from conftest import REPO

NOTEBOOKS = sorted((REPO / "notebooks").glob("[0-9]*.py"))
HIDDEN = 'jupyter={"source_hidden": true}'


def cells(source: str) -> list[tuple[str, str]]:
    """``[(header, body)]`` of a jupytext percent notebook (the header: the ``# %%`` line).

    >>> cells("# x\\n# %% [markdown]\\n# ## A\\n# %%\\nx = 1\\n")
    [('# %% [markdown]', '# ## A\\n'), ('# %%', 'x = 1\\n')]
    """
    out, header, body = [], None, []
    for line in source.splitlines(keepends=True):
        if line.startswith("# %%"):
            if header is not None:
                out.append((header, "".join(body)))
            header, body = line.rstrip("\n"), []
        elif header is not None:
            body.append(line)
    if header is not None:
        out.append((header, "".join(body)))
    return out


def checks_in(code: str) -> list[str]:
    """The asserts and widget pokes (an assignment to a ``.value``) of one code cell, as
    ``line: text``.

    >>> checks_in("x = 1\\nw.value = 2\\na, c['k'].value = 1, 2\\nassert x\\nprint(w.value)\\n")
    ['2: w.value = 2', "3: a, c['k'].value = 1, 2", '4: assert x']
    """
    found = []
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Assert):
            found.append(node)
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            flat = [e for t in targets for e in (t.elts if isinstance(t, ast.Tuple) else [t])]
            if any(isinstance(t, ast.Attribute) and t.attr == "value" for t in flat):
                found.append(node)
    lines = code.splitlines()
    return [f"{n.lineno}: {lines[n.lineno - 1].strip()}" for n in sorted(found, key=lambda n: n.lineno)]


def split_at_checks(source: str) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """The cells before the "## Checks" markdown cell and those from it on."""
    all_cells = cells(source)
    at = next((i for i, (h, b) in enumerate(all_cells) if "[markdown]" in h and re.match(r"# ## Checks\b", b)), None)
    assert at is not None, "no '## Checks' section"
    return all_cells[:at], all_cells[at:]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_no_assert_or_widget_poke_in_the_readers_path(path):
    lesson, checks = split_at_checks(path.read_text(encoding="utf-8"))
    stray = [f"{path.name}, code cell {i}: {c}" for i, (h, body) in enumerate(lesson) if "[markdown]" not in h
             for c in checks_in(body)]
    assert not stray, "asserts or widget pokes outside the collapsed Checks section:\n" + "\n".join(stray)
    code = [(h, b) for h, b in checks[1:] if "[markdown]" not in h]
    assert code and all(HIDDEN in h for h, _ in code), f"{path.name}: every Checks code cell has its source hidden"
    assert any(checks_in(b) for _, b in code), f"{path.name}: the Checks section checks nothing"
    later = [b for h, b in checks[1:] if "[markdown]" in h and re.search(r"^# #+ ", b, re.M)]
    assert not later, f"{path.name}: the Checks section is the last one, found a heading after it: {later}"


def test_the_rule_finds_a_stray_assert():
    bad = "# %%\nx = 1\nassert x\n\n# %% [markdown]\n# ## Checks\n\n# %% " + HIDDEN + "\nassert x\n"
    lesson, _ = split_at_checks(bad)
    assert checks_in(lesson[0][1]) == ["2: assert x"]


def _notebook(path, sources):
    import nbformat

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in sources])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, path)


def test_demo_writes_the_html_of_a_failed_notebook_and_names_it(tmp_path):
    """The script ``make demo`` calls per notebook: a failing cell stops the run (the cells
    after it do not run), the HTML is written with the outputs so far and the error, the
    report is named, and the exit status is 1."""
    nb = tmp_path / "09_fails.ipynb"
    _notebook(nb, ['print("BEFORE" + "-RAN")', "1 / 0", 'print("AFTER" + "-RAN")'])
    run = subprocess.run([sys.executable, "-m", "modtok.ui.demo", str(nb), str(tmp_path / "reports")],
                         capture_output=True, text=True, timeout=300, cwd=REPO)
    html = tmp_path / "reports" / "09_fails.html"
    assert run.returncode == 1, run.stderr
    assert "ZeroDivisionError" in run.stderr and str(html) in run.stderr
    text = html.read_text(encoding="utf-8")
    assert "BEFORE-RAN" in text and "ZeroDivisionError" in text and "division by zero" in text
    assert "AFTER-RAN" not in text  # the cell after the failure did not run


def test_demo_writes_the_html_of_a_notebook_that_ran(tmp_path):
    nb = tmp_path / "09_runs.ipynb"
    _notebook(nb, ['print("ALL" + "-RAN")'])
    run = subprocess.run([sys.executable, "-m", "modtok.ui.demo", str(nb), str(tmp_path)],
                         capture_output=True, text=True, timeout=300, cwd=REPO)
    assert run.returncode == 0 and "ran to the end" in run.stdout, run.stderr
    assert "ALL-RAN" in (tmp_path / "09_runs.html").read_text(encoding="utf-8")


def test_demo_asks_its_notebooks_for_the_work_done_ahead(tmp_path):
    """Issue 44: make demo's kernels see $MODTOK_AHEAD, so notebook 06 trains its explorer's other
    trainers into the results cache for the class that opens it after (AdaptMixStudy.explore_ahead)."""
    nb = tmp_path / "09_ahead.ipynb"
    _notebook(nb, ['import os; print("AHEAD=" + os.environ.get("MODTOK_AHEAD", "unset") + "=")'])
    env = {k: v for k, v in os.environ.items() if k != "MODTOK_AHEAD"}
    run = subprocess.run([sys.executable, "-m", "modtok.ui.demo", str(nb), str(tmp_path)],
                         capture_output=True, text=True, timeout=300, cwd=REPO, env=env)
    assert run.returncode == 0, run.stderr
    assert "AHEAD=1=" in (tmp_path / "09_ahead.html").read_text(encoding="utf-8")


def test_make_demo_runs_each_notebook_through_the_script_and_names_the_failed_reports():
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    recipe = makefile[makefile.index("\ndemo: notebooks"):makefile.index("\nreport:")]
    assert "-m modtok.ui.demo $$nb $(REPORTS)" in recipe and 'failed="$$failed $$html"' in recipe
    assert "exit 1" in recipe and "nbconvert" not in recipe


def test_the_multi_script_example_corpus_is_a_users_corpus(tmp_path):
    """``modtok example-corpus --scripts`` (the browser suite's fixture): eight languages in
    seven scripts, in three formats behind one manifest, with parallel dev/devtest evaluation
    text that no training line repeats; modtok reads it all, script checks included."""
    from modtok.text import data, example

    manifest, evaluation = example.build(tmp_path, example.SCRIPTS)
    names = {p.name for p in (tmp_path / "text").iterdir()}
    assert {"eng_Latn-000.jsonl.zst", "jpn_Jpan.parquet", "tha_Thai.txt"} <= names
    corpora = data.default_corpora(manifest=manifest, eval=evaluation)
    assert sorted(corpora.train) == sorted(example.SCRIPTS) and corpora.parallel_eval and corpora.has_dev
    dev = corpora.dev()
    assert len({len(v) for v in dev.values()}) == 1 and len({len(v) for v in corpora.eval.values()}) == 1
    for lang in example.SCRIPTS:
        train = set(corpora.train[lang])
        assert not train & (set(dev[lang]) | set(corpora.eval[lang])), lang  # evaluation text is never trained on
        assert not set(dev[lang]) & set(corpora.eval[lang]), lang  # dev and devtest are disjoint
    assert dev["zho_Hans"][0].startswith("人人生而自由")  # real text: UDHR article 1, in Chinese


def test_unigram_study_leaves_out_a_language_it_cannot_train_and_says_why():
    """Notebook 03 where a language's monolingual Unigram cannot be trained at k (sentencepiece
    on Chinese at k = 800 on today's main: "Vocabulary size is smaller than required_chars"):
    the language is left out of every section with the trainer's reason, the others stay."""
    from modtok.errors import BudgetError
    from modtok.studies.modular_tokenizers.unigram import UnigramStudy
    from modtok.text.data import Corpora

    train = {lang: [f"line {i}" for i in range(20)] for lang in ("eng_Latn", "zho_Hans", "tha_Thai")}
    study = UnigramStudy(Corpora(train, train, "toy"), list(train))

    def mono(lang, k):
        if lang == "zho_Hans":
            raise BudgetError(f"{lang}: cannot train {k} pieces: the text needs 2343 characters")
        return (lang, k)

    study.mono = mono
    assert study.keep_trainable(800) == {"zho_Hans": "cannot train 800 pieces: the text needs 2343 characters"}
    assert study.langs == ["eng_Latn", "tha_Thai"]
