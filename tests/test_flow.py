"""The Prefect flow and the command line, end to end on the tiny preset."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

BIN = Path(sys.executable).parent


def gameforge(*args: str, store: Path, timeout: float = 300) -> subprocess.CompletedProcess:
    env = dict(os.environ, GAMEFORGE_STORE=str(store), NO_COLOR="1", COLUMNS="200")
    return subprocess.run(
        [str(BIN / "gameforge"), *args], capture_output=True, text=True, env=env, timeout=timeout
    )


def test_flow_run_then_cache_hit_then_inspect(tmp_path):
    store = tmp_path / "store"
    first = gameforge(
        "run", "lhe-abstraction", "--preset", "tiny", "--dask-address", "local", store=store
    )
    assert first.returncode == 0, first.stdout + first.stderr
    assert "computed" in first.stdout

    t0 = time.monotonic()
    listing = gameforge("artifacts", "ls", "--json", store=store)
    assert time.monotonic() - t0 < 5
    rows = json.loads(listing.stdout)
    assert sorted((r["stage"], r["status"]) for r in rows) == [
        ("hsd", "complete"),
        ("hsd-buckets", "complete"),
        ("ochs", "complete"),
        ("ochs-buckets", "complete"),
        ("opponent-clusters", "complete"),
        ("river-hs", "complete"),
    ]
    assert all(r["bytes"] > 0 for r in rows)
    key = next(r["key"] for r in rows if r["stage"] == "river-hs")

    second = gameforge("run", "lhe-abstraction", "--preset", "tiny", store=store)
    assert second.returncode == 0, second.stdout + second.stderr
    assert "every stage cached: no Prefect flow run started" in second.stdout
    assert second.stdout.count(" cached ") == 6

    shown = gameforge("artifacts", "show", key, store=store)
    assert "river-hs" in shown.stdout and "hs_count" in shown.stdout
    assert "holdem6.limit.2p.reverse_blinds" in shown.stdout
    verified = gameforge("artifacts", "verify", store=store)
    assert verified.returncode == 0 and "6 ok, 0 corrupted" in verified.stdout
    hsd_key = next(r["key"] for r in rows if r["stage"] == "hsd")
    assert key in gameforge("artifacts", "show", hsd_key, store=store).stdout  # lineage

    # Rerun one stage: river-hs is reused, hsd recomputed under the same key.
    rerun = gameforge("stage", "run", "hsd", "--preset", "tiny", "--force", store=store)
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr
    assert "river-hs: cache hit" in rerun.stdout and "hsd: computing" in rerun.stdout
    assert "ochs" not in rerun.stdout  # only hsd and what it needs

    # Another flop/turn bucket count reuses everything upstream and beside it.
    other = gameforge(
        "run", "lhe-abstraction", "--preset", "tiny", "--set", "hsd-buckets.k=100", store=store
    )
    assert other.returncode == 0, other.stdout + other.stderr
    assert "river-hs: cache hit" in other.stdout and "hsd: cache hit" in other.stdout
    assert "opponent-clusters: cache hit" in other.stdout and "ochs: cache hit" in other.stdout
    assert "hsd-buckets: computing" in other.stdout and "ochs-buckets: cache hit" in other.stdout
    refused = gameforge("artifacts", "rm", key, store=store)
    assert refused.returncode == 2 and "is an input of" in refused.stderr


def test_bad_input_gets_one_line_and_touches_nothing(tmp_path):
    store = tmp_path / "store"
    cases = [
        (
            ("run", "no-such-flow"),
            "unknown flow 'no-such-flow' (valid: lhe-abstraction, lhe-abstraction-pa",
        ),
        (("run", "lhe-abstraction", "--preset", "huge"), "no preset 'huge'"),
        (("stage", "run", "nope"), "unknown stage 'nope' (valid:"),
        (("run", "lhe-abstraction", "--set", "bogus=1"), "no stage of flow lhe-abstraction"),
        (("run", "lhe-abstraction", "--set", "river-hs.bogus=1"), "unknown parameter bogus"),
        (("run", "lhe-abstraction", "--set", "game=nothing"), "unknown game 'nothing'"),
        (("game", "info", "nothing"), "unknown game 'nothing'"),
        (("artifacts", "show", "river-hs-0000"), "no such folder"),  # a reader needs the store
    ]
    for args, message in cases:
        result = gameforge(*args, store=store)
        assert result.returncode == 2, (args, result.stdout, result.stderr)
        lines = [line for line in result.stderr.splitlines() if line.strip()]
        assert len(lines) == 1 and message in lines[0], (args, result.stderr)
    assert not (store / "objects").exists()


def test_game_info_is_fast_and_exact(tmp_path):
    bad = tmp_path / "bad.game"
    bad.write_text("GAMEDEF\nlimit\nnumPlayers = 2\nnumRounds = 9\nEND GAMEDEF\n")
    result = gameforge("game", "info", str(bad), store=tmp_path)
    assert result.returncode == 2 and "numRounds must be 1..4" in result.stderr
    t0 = time.monotonic()
    result = gameforge("game", "info", "holdem.limit.2p.reverse_blinds", "--json", store=tmp_path)
    assert time.monotonic() - t0 < 5
    info = json.loads(result.stdout)
    assert [r["canonical_hands"] for r in info["rounds"]] == [169, 1286792, 55190538, 2428287420]
    assert [r["raw_hands"] for r in info["rounds"]] == [1326, 25989600, 1221511200, 56189515200]


def test_server_start_run_uses_it_then_stop(tmp_path, server_port):
    """`server start` on 127.0.0.1, the server and all its children bound to loopback only; a
    run then records its flow run there; `server stop`."""
    import urllib.request

    from tests.test_listeners import _listening, _off_loopback

    port = server_port
    try:
        started = gameforge("server", "start", "--port", str(port), store=tmp_path, timeout=180)
        assert started.returncode == 0, started.stdout + started.stderr
        assert f"127.0.0.1:{port}" in started.stdout
        state = json.loads((tmp_path / "prefect" / "gameforge-server.json").read_text())
        seen: set[tuple[str, int, str]] = set()
        for _ in range(40):  # two seconds of samples of the running server
            seen |= _listening([state["pid"]])
            time.sleep(0.05)
        assert not _off_loopback(seen), seen
        assert ("127.0.0.1", port) in {(ip, p) for ip, p, _ in seen}
        assert "up (healthy)" in gameforge("server", "status", store=tmp_path).stdout
        run = gameforge(
            "run",
            "lhe-abstraction",
            "--preset",
            "tiny",
            "--dask-address",
            "local",
            store=tmp_path / "store",
        )
        assert run.returncode == 0, run.stdout + run.stderr
        request = urllib.request.Request(
            f"http://127.0.0.1:{port}/api/flow_runs/filter",
            data=b"{}",
            method="POST",
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            runs = json.loads(response.read())
        assert [r["name"].rsplit(" ", 3)[0] for r in runs] == ["lhe-abstraction [tiny]"]
        assert runs[0]["state_type"] == "COMPLETED"
    finally:
        stopped = gameforge("server", "stop", store=tmp_path)
    assert "stopped" in stopped.stdout
    assert "down" in gameforge("server", "status", store=tmp_path).stdout
