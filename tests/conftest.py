"""Shared fixtures: where the real data lives (if anywhere), and hypothesis settings.

Tests never use the network. Tests that need FLORES-200 or the pool find them
through MODTOK_FLORES / MODTOK_POOL or the sibling ``../shared/data`` checkout
and are skipped, with the reason, on a machine that has neither.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared" / "data"

settings.register_profile(
    "modtok", max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile("modtok")


def _locate(env: str, fallback: Path) -> Path | None:
    value = os.environ.get(env)
    path = Path(value) if value else fallback
    return path if path.is_dir() else None


@pytest.fixture(scope="session")
def flores_root() -> Path:
    root = _locate("MODTOK_FLORES", SHARED / "flores200")
    if root is None:
        pytest.skip("FLORES-200 not available (set MODTOK_FLORES)")
    return root


@pytest.fixture(scope="session")
def pool_root() -> Path:
    root = _locate("MODTOK_POOL", SHARED / "pool")
    if root is None:
        pytest.skip("training pool not available (set MODTOK_POOL)")
    return root
