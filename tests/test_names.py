"""The package's own map names only what exists: a module that moved leaves no stale name behind.

Each ``:mod:`` reference in a package docstring must resolve to a module of the checkout, and
the names that modules once had (``bpe.repair``, ``bpe.trim``, the ``extend as repair`` alias)
appear nowhere in the library, tests or notebooks.
"""

from __future__ import annotations

import importlib
import pathlib
import re

import pytest

REPO = pathlib.Path(__file__).resolve().parents[1]
PACKAGES = sorted(p.parent for p in (REPO / "modtok").rglob("__init__.py") if "__pycache__" not in p.parts)
MOD_REF = re.compile(r":mod:`([\w.]+)`")


def _resolve(ref: str, package: str) -> str:
    """``.engine`` inside ``modtok.bpe`` -> ``modtok.bpe.engine``; absolute names unchanged."""
    return f"{package}{ref}" if ref.startswith(".") else ref


@pytest.mark.parametrize("pkg", PACKAGES, ids=lambda p: str(p.relative_to(REPO)))
def test_every_module_a_package_docstring_names_exists(pkg):
    name = ".".join(pkg.relative_to(REPO).parts)
    doc = importlib.import_module(name).__doc__ or ""
    missing = [ref for ref in MOD_REF.findall(doc)
               if importlib.util.find_spec(_resolve(ref, name)) is None]
    assert not missing, f"{name}'s docstring names modules that do not exist: {missing}"


STALE = {
    r"\bextend as repair\b": "modtok.adapt.extend is imported under its own name",
    r"small on purpose": "modtok has dozens of modules; its docstring maps the floors",
    r"modtok\.bpe\.(repair|trim)\b": "continued BPE and trimming live in modtok.adapt",
    r"SCRIPT_BLOCKS|no Unicode block": "merge filters come from Unicode Script_Extensions, for every script",
}


def test_no_stale_name_is_left():
    files = [p for d in ("modtok", "tests", "notebooks") for p in (REPO / d).rglob("*.py")
             if p.name != "test_names.py"]
    found = [f"{p.relative_to(REPO)}: {pattern} ({why})"
             for p in files for pattern, why in STALE.items()
             if re.search(pattern, p.read_text(encoding="utf-8"))]
    assert not found, "\n".join(found)


# What a library docstring or comment may not cite: things outside the checkout (the golden
# set's folder name, the tracker's issue numbers) and dated figures; a measurement that backs a
# decision stays, its date and setting go to bench/RESULTS.md, which the docstring links.
OUTSIDE = {
    r"\bbench8\b": "the parity benchmark (bench/parity_bpe.py, bench/RESULTS.md)",
    r"\b[Ii]ssues? \d+": "say what the change was, not its ticket number",
    r"\b20[2-9]\d-\d\d-\d\d\b": "a dated figure: move it to bench/RESULTS.md and link the section",
}


def test_the_library_cites_nothing_outside_the_checkout():
    found = [f"{p.relative_to(REPO)}:{i}: {line.strip()[:80]} ({why})"
             for p in sorted((REPO / "modtok").rglob("*.py"))
             for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
             for pattern, why in OUTSIDE.items() if re.search(pattern, line)]
    assert not found, "\n".join(found)
