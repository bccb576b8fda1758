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
    from gameforge.artifacts import ArtifactStore

    return ArtifactStore(tmp_path / "store")


HOLDEM = "holdem.limit.2p.reverse_blinds"


@pytest.fixture(scope="session")
def holdem_store(tmp_path_factory):
    """One store shared by the full-Hold'em tests (river-hs is built once, ~12 s)."""
    from gameforge.artifacts import ArtifactStore

    return ArtifactStore(tmp_path_factory.mktemp("holdem") / "store")


@pytest.fixture(scope="session")
def holdem_river_hs(holdem_store):
    """The full Hold'em river-hs artifact."""
    from gameforge.stages.runner import run_stage

    result = run_stage("river-hs", {"game": HOLDEM}, store=holdem_store, log=lambda _m: None)
    return holdem_store.open(result.key)


@pytest.fixture(scope="session")
def holdem_preflop_hsd(holdem_store, holdem_river_hs):
    """HSD of the 169 preflop hands of full Hold'em (2,118,760 boards each; ~20 s)."""
    from gameforge.flows.runtime import dask_executor
    from gameforge.stages.runner import run_stage

    with dask_executor(None) as executor:
        result = run_stage(
            "hsd",
            {"game": HOLDEM, "rounds": (0,)},
            {"river_hs": holdem_river_hs.key},
            store=holdem_store,
            executor=executor,
            log=lambda _m: None,
        )
    return holdem_store.open(result.key)
