"""The shape of the house, checked: floors, one exception family, thin notebooks.

The library is layered (README, "The layout"); an import may go to its own floor or
below, never up, and no chain of imports comes back to where it started::

    ground      errors, atomic, outputs, progress, options (the names of the option lists)
    text        corpora, pre-tokens, counts
    artifacts   tokenizer.json, modular / deployed tokenizers, the HF and sentencepiece peers
    evaluation  metrics, statistics, the audit
    algorithms  bpe, unigram, mixture, lm, adapt (a deployed tokenizer and its model, adapted),
                warmup (the numba kernels' cache: it trains a tiny model of each kind)
    studies     the papers' experiments, and the lessons' toys and exercise checkers (studies.lessons)
    ui          plots, widgets, the command line

Imports inside functions count (they are arrows too); ``if TYPE_CHECKING`` ones do not
exist here.
"""

from __future__ import annotations

import ast

import pytest
from conftest import REPO

PKG = REPO / "modtok"
FLOORS = [
    ("ground", {"modtok", "modtok.errors", "modtok.atomic", "modtok.outputs", "modtok.progress", "modtok.cache",
                "modtok.options"}),
    ("text", {"modtok.text"}),
    ("artifacts", {"modtok.artifacts"}),
    ("evaluation", {"modtok.evaluation"}),
    ("algorithms", {"modtok.bpe", "modtok.unigram", "modtok.mixture", "modtok.lm", "modtok.adapt", "modtok.warmup"}),
    ("studies", {"modtok.studies"}),
    ("ui", {"modtok.ui", "modtok.__main__"}),
]


def module_name(path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in sorted(PKG.rglob("*.py"))}


def floor(module: str) -> int:
    """Index of the floor a module lives on (its top package decides)."""
    for i, (_, roots) in enumerate(FLOORS):
        if module in roots or any(module.startswith(r + ".") for r in roots if r != "modtok"):
            return i
    raise AssertionError(f"{module} is on no floor: add its package to FLOORS and to the README's layout")


def imports(module: str) -> list[tuple[str, list[str], int]]:
    """``(target module, imported names, line)`` for every ``modtok`` import of ``module``."""
    path = MODULES[module]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target == "modtok" or target.startswith("modtok."):
                for alias in node.names:  # `from modtok.bpe import parity` imports the module modtok.bpe.parity
                    sub = f"{target}.{alias.name}"
                    out.append((sub if sub in MODULES else target, [alias.name], node.lineno))
        elif isinstance(node, ast.Import):
            out += [(a.name, [], node.lineno) for a in node.names if a.name.startswith("modtok")]
    return out


def test_every_module_is_on_a_floor():
    for module in MODULES:
        floor(module)


def test_no_import_runs_back_up():
    up = [f"{m}:{line} imports {t} ({FLOORS[floor(t)][0]} is above {FLOORS[floor(m)][0]})"
          for m in MODULES for t, _, line in imports(m) if floor(t) > floor(m)]
    assert not up, "\n".join(up)


def find_cycle(graph: dict[str, set[str]]) -> list[str]:
    """A circle of ``graph`` as ``[a, b, ..., a]``, or ``[]`` (depth-first search)."""
    state: dict[str, int] = {}  # 1 = on the current path, 2 = finished

    def visit(m: str, path: list[str]) -> list[str]:
        state[m] = 1
        for t in sorted(graph.get(m, ())):
            if state.get(t) == 1:
                return path[path.index(t):] + [t]
            if t not in state and (found := visit(t, path + [t])):
                return found
        state[m] = 2
        return []

    for m in sorted(graph):
        if m not in state and (found := visit(m, [m])):
            return found
    return []


def test_find_cycle_finds_one_and_only_one():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) == []


def test_the_import_graph_has_no_circle():
    graph = {m: {t for t, _, _ in imports(m) if t != m and t in MODULES} for m in MODULES}
    for m in list(graph):  # importing a.b.c runs a.b's __init__ first (not an arrow out of a.b itself)
        for t in list(graph[m]):
            graph[m] |= {p for p in MODULES if t.startswith(p + ".") and not m.startswith(p + ".")
                         and p not in (m, "modtok")}
    cycle = find_cycle(graph)
    assert not cycle, " -> ".join(cycle)


def private_imports(tree) -> list[tuple[int, str]]:
    """``(line, "module.name")`` of every ``from modtok... import _name`` in ``tree``."""
    return [(node.lineno, f"{node.module}.{a.name}") for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("modtok")
            for a in node.names if a.name.startswith("_")]


def test_no_private_name_crosses_a_module():
    """A private module (``bpe.kernels``) is its package's own: only its siblings import it."""
    leaks = []
    for m, path in MODULES.items():
        for line, name in private_imports(ast.parse(path.read_text(encoding="utf-8"))):
            if not (name in MODULES and name.rpartition(".")[0] == m.rpartition(".")[0]):
                leaks.append(f"{m}:{line} imports {name}")
    for path in [*REPO.glob("tests/*.py"), *REPO.glob("notebooks/*.py"), *REPO.glob("bench/*.py")]:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        leaks += [f"{path.relative_to(REPO)}:{line} imports {name}" for line, name in private_imports(tree)]
    assert not leaks, "\n".join(leaks)


def test_every_exception_class_lives_in_errors():
    """Every public exception class is in ``modtok.errors`` (a private one, like the
    corpus reader's ``_Skip`` signal, is control flow inside its module, never raised to a caller)."""
    stray = []
    for module, path in MODULES.items():
        if module == "modtok.errors":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and (node.name.endswith("Error") or not node.name.startswith("_") and any(
                    getattr(b, "id", getattr(b, "attr", "")).endswith(("Error", "Exception")) for b in node.bases)):
                stray.append(f"{module}:{node.lineno} class {node.name}")
    assert not stray, "\n".join(stray)


def test_no_bare_builtin_error_is_raised():
    """Bad input is a ModtokError that says what and where (``modtok.errors``)."""
    bare = []
    for module, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call):
                name = getattr(node.exc.func, "id", "")
                if name in {"ValueError", "TypeError", "KeyError", "RuntimeError", "Exception"}:
                    bare.append(f"{module}:{node.lineno} raise {name}")
    assert not bare, "\n".join(bare)


# ---------------------------------------------------------------- the CLI is a thin layer

CLI = PKG / "ui" / "cli.py"
MAX_CMD_LINES, MAX_CLI_LINES = 25, 625  # (+14: `modtok cache`, issue 44; +4: a SIGTERM an import mangled) the parser, the commands, how a run ends (errors, signals, a closed stdout)
# What marks a pipeline in this codebase: an output directory opened, corpora or counts read,
# text counted, a tokenizer or an LM trained, a run.json filled. The CLI calls the library
# function that does these; it never does them itself.
PIPELINE_PRIMITIVES = frozenset({
    "output_dir", "open_corpus", "default_corpora", "load_pool", "load_counts", "load_units", "read_meta",
    "read_run", "count_by_language", "count_corpora", "train_sequential", "train_unigram_per_language",
    "merge_unigram", "train_from_lines", "adaptmix", "make_trainer", "train_hf_bpe", "eval_set",
    "record", "add_inputs", "local_client", "Client", "train",
})


def called_names(node) -> set[str]:
    """The names every call under ``node`` calls (``f(...)`` and ``x.f(...)`` both give ``f``).

    >>> sorted(called_names(ast.parse("a.b(c(1)); d")))
    ['b', 'c']
    """
    return {getattr(n.func, "id", getattr(n.func, "attr", "")) for n in ast.walk(node) if isinstance(n, ast.Call)}


def test_cli_holds_no_pipeline():
    """``ui/cli.py`` parses arguments, calls one library function per command and prints what
    it returns (issue 31): short commands, a short file, no pipeline primitive called."""
    source = CLI.read_text(encoding="utf-8")
    tree = ast.parse(source)
    commands = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name.startswith("cmd_")]
    assert len(commands) >= 15, [c.name for c in commands]
    long = [f"{c.name}: {c.end_lineno - c.lineno + 1} lines" for c in commands
            if c.end_lineno - c.lineno + 1 > MAX_CMD_LINES]
    assert not long, "a command over " + f"{MAX_CMD_LINES} lines holds a pipeline: " + "; ".join(long)
    n_lines = len(source.splitlines())
    assert n_lines <= MAX_CLI_LINES, f"ui/cli.py has {n_lines} lines (at most {MAX_CLI_LINES})"
    primitives = sorted(called_names(tree) & PIPELINE_PRIMITIVES)
    assert not primitives, f"ui/cli.py calls pipeline primitives {primitives}: move the run into the library"


# ---------------------------------------------------------------- notebooks are walkthroughs

NOTEBOOKS = sorted((REPO / "notebooks").glob("[0-9]*.py"))
# 150 for the study, plus the 4 code lines of the "Learn it small" cell that opens every method
# notebook (issue 41: import the lesson and the two widgets, display the prediction and the
# stepper); the toy runs themselves stay in modtok.studies.lessons; plus 2 for 06's explorer controls
# "train long settings" and "ask above (s)" (issue 44, session 23: a long setting asks before it trains)
MAX_FUNCTIONS, MAX_CODE_LINES = 3, 156


def code_lines(source: str) -> int:
    """Non-blank, non-comment lines of the code cells of a jupytext percent notebook.

    >>> code_lines("# %% [markdown]\\n# text\\n\\n# %%\\nx = 1  # one\\n# a comment\\n\\ny = 2\\n")
    2
    """
    n, in_markdown = 0, False
    for line in source.splitlines():
        if line.startswith("# %%"):
            in_markdown = "[markdown]" in line
        elif not in_markdown and line.strip() and not line.lstrip().startswith("#"):
            n += 1
    return n


def test_code_lines_counts_what_it_says():
    assert code_lines("# %%\na = 1\n\n# %% [markdown]\n# b = 2\n# %%\n  # c\nd = (\n  3)\n") == 3


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_is_a_walkthrough(path):
    source = path.read_text(encoding="utf-8")
    functions = [n for n in ast.walk(ast.parse(source)) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))]
    assert len(functions) <= MAX_FUNCTIONS, f"{path.name} defines {len(functions)} functions: move the harness to modtok.studies"
    assert code_lines(source) <= MAX_CODE_LINES, f"{path.name} has {code_lines(source)} code lines"
