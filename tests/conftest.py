"""Shared fixtures: a fresh store per test, quiet Prefect settings."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
os.environ.setdefault("DO_NOT_TRACK", "1")
os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")


@pytest.fixture
def store(tmp_path):
    """An empty artifact store in a temporary directory."""
    from artifacts import ArtifactStore

    return ArtifactStore(tmp_path / "store")
