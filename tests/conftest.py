"""Shared fixtures: a fresh store per test, quiet Prefect settings."""

from __future__ import annotations

import os

import pytest

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


@pytest.fixture(scope="session")
def short_deck(tmp_path_factory):
    """The short-deck Hold'em stage chain (tests.poker_helpers.ShortDeck) in one store shared by
    every module that builds on it: river-hs and HSD are computed once per session."""
    from gameforge.artifacts import ArtifactStore
    from tests.poker_helpers import ShortDeck

    return ShortDeck(ArtifactStore(tmp_path_factory.mktemp("short-deck") / "store"))


@pytest.fixture
def server_port(tmp_path, monkeypatch) -> int:
    """A free loopback port for `gameforge server start`, with the Prefect home in tmp_path/prefect
    and no inherited API URL (the test's server is the only one it talks to)."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("PREFECT_HOME", str(tmp_path / "prefect"))
    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    return port
