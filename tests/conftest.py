"""Shared fixtures: a fresh store per test, quiet Prefect settings."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("DO_NOT_TRACK", "1")
os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
if os.environ.get("PYTEST_XDIST_WORKER"):
    # One thread each for numba's and torch's OpenMP pools in a parallel test process (and the
    # commands it starts): OpenMP threads spin while they wait, and two processes with a pool
    # per core each took longer over the suite (28 min) than one process alone (21 min).
    os.environ.setdefault("NUMBA_NUM_THREADS", "1")
    os.environ.setdefault("OMP_NUM_THREADS", "1")


# The Prefect home the session started with, for tests that need a run's own temporary API.
OWN_PREFECT_HOME = "GAMEFORGE_TEST_OWN_PREFECT_HOME"


def without_shared_prefect(env: dict[str, str]) -> dict[str, str]:
    """`env` for a run that must start Prefect's temporary API as its own child: no API URL,
    and the Prefect home the session started with (the shared server is found through its own)."""
    out = dict(env)
    out.pop("PREFECT_API_URL", None)
    own = out.pop(OWN_PREFECT_HOME, None)
    if own is not None:
        out.pop("PREFECT_HOME", None)
        if own:
            out["PREFECT_HOME"] = own
    return out


def restore_environ(saved: dict[str, str | None]) -> None:
    """Put environment variables back as `saved` has them (None: unset)."""
    for key, value in saved.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value


@pytest.fixture(scope="session", autouse=True)
def shared_prefect_api(tmp_path_factory):
    """One Prefect server for the session's flow runs, in a Prefect home of its own.

    Without it every `gameforge run` a test starts would start Prefect's temporary API (about 10
    s each). Tests of that temporary server's own behaviour (its clean-up on SIGTERM, what it
    listens on) drop PREFECT_API_URL from their environment; `server_port` does too.
    """
    if os.environ.get("PREFECT_API_URL") or os.environ.get("GAMEFORGE_TEST_EPHEMERAL_PREFECT"):
        yield None
        return
    import socket

    from gameforge.flows import server

    saved = {k: os.environ.get(k) for k in ("PREFECT_HOME", "PREFECT_API_URL")}
    os.environ[OWN_PREFECT_HOME] = saved["PREFECT_HOME"] or ""
    os.environ["PREFECT_HOME"] = str(tmp_path_factory.mktemp("prefect-home"))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    state = server.start(port=port, wait_s=180)
    os.environ["PREFECT_API_URL"] = state["api_url"]
    try:
        yield state["api_url"]
    finally:
        os.environ.pop("PREFECT_API_URL", None)
        os.environ.pop(OWN_PREFECT_HOME, None)
        server.stop()
        restore_environ(saved)


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


@pytest.fixture(scope="session")
def s3_server(tmp_path_factory):
    """A real S3-compatible server (moto) on 127.0.0.1 for the session, its variables in
    os.environ (so commands and Dask workers the tests start reach it), and a bucket."""
    from tests.cluster_helpers import S3Server

    server = S3Server(tmp_path_factory.mktemp("s3") / "moto.log")
    saved = {k: os.environ.get(k) for k in [*server.env, "AWS_PROFILE"]}
    os.environ.pop("AWS_PROFILE", None)
    os.environ.update(server.env)
    try:
        server.create_bucket()
        yield server
    finally:
        server.stop()
        restore_environ(saved)


@pytest.fixture
def s3_store(s3_server, request):
    """An empty artifact store on the S3 server, under a prefix of this test's own."""
    import re
    import uuid

    from gameforge.artifacts import ArtifactStore

    name = re.sub(r"[^a-z0-9]+", "-", request.node.name.lower())[:40]
    return ArtifactStore(s3_server.url(f"{name}-{uuid.uuid4().hex[:6]}"))


@pytest.fixture(params=["local", "s3"])
def any_store(request):
    """An empty store in a temporary folder, or under a fresh prefix of the S3 server: the
    store's guarantees are the same on both."""
    return request.getfixturevalue("store" if request.param == "local" else "s3_store")
