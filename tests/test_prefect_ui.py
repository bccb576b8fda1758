"""What a run shows in Prefect: each stage's log lines under its task run, a markdown summary per
node, a table where the result is one, a progress artifact, and no internal objects among the
flow's parameters."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import sys
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gameforge.artifacts import ArtifactStore
from gameforge.artifacts.runs import RunLedger
from gameforge.flows.prefect_report import artifact_key, stage_markdown, summary_table
from tests.toy_stages import TOY_CLI


@settings(deadline=None)  # the first example imports Prefect
@given(flow=st.text(min_size=1, max_size=30), label=st.text(min_size=1, max_size=40))
def test_artifact_keys_follow_prefects_rule(flow, label):
    from prefect.types.names import raise_on_name_alphanumeric_dashes_only

    key = artifact_key(flow, label, "progress")
    assert raise_on_name_alphanumeric_dashes_only(key) == key


def test_artifact_keys_name_the_flow_and_the_node():
    assert artifact_key("lhe-league", "cfr[k=8]") == "lhe-league-cfr-k-8"
    assert artifact_key("lhe-league", "cfr[k=8]", "table") == "lhe-league-cfr-k-8-table"
    assert artifact_key("hearts-falcon", "falcon[seed=0]") != artifact_key(
        "hearts-falcon", "falcon[seed=1]"
    )


def test_tables_come_from_rows_named_rows_and_league_players():
    rows = {"table": [{"net": "net.0", "win_rate": 0.25}, {"net": "net.1", "win_rate": 0.5}]}
    assert summary_table(rows) == [
        {"net": "net.0", "win_rate": "0.25"},
        {"net": "net.1", "win_rate": "0.5"},
    ]
    named = {"table": {"new": {"trials": 5}, "previous": {"trials": 4}}}
    assert summary_table(named) == [
        {"name": "new", "trials": "5"},
        {"name": "previous", "trials": "4"},
    ]
    league = {
        "players": ["C6", "C8"],
        "keys": ["cfr-1", "cfr-2"],
        "mean_mbb_per_game": [-3.5, 3.5],
        "undecided": ["C8 vs C6: +3.5 ± 9.0 mbb/g", "x"],  # as long as the players, not a column
    }
    assert summary_table(league) == [
        {"player": "C6", "keys": "cfr-1", "mean_mbb_per_game": "-3.5"},
        {"player": "C8", "keys": "cfr-2", "mean_mbb_per_game": "3.5"},
    ]
    assert summary_table({"players": ["a", "b"], "hands": 10}) is None
    assert summary_table({"k": 8, "rounds": [1, 2, 3]}) is None


def test_the_markdown_summary_names_key_inputs_parameters_and_result():
    meta = {
        "stage": "league",
        "key": "league-0123456789abcdef",
        "version": 3,
        "created": "2026-11-25T04:00:00+00:00",
        "host": "vm",
        "inputs": {"players.0": "cfr-aaaa"},
        "params": {"matches": 2, "seed": 7},
        "summary": {"ranking_text": "C12 > {C8, C6}", "hands_per_pairing": 4000},
    }
    text = stage_markdown(meta, cached=False, seconds=12.34)
    for needed in (
        "league-0123456789abcdef",
        "computed in 12.3 s",
        "players.0: `cfr-aaaa`",
        "matches = `2`",
        "ranking_text: C12 > {C8, C6}",
        "hands_per_pairing: 4000",
    ):
        assert needed in text, needed
    assert "cache hit" in stage_markdown(meta, cached=True, seconds=0.0)


def session_api():  # noqa: ANN201
    """Prefect's client settings pointed at the session's server: this process may have read
    its settings before the server started (at collection), or from another test's context."""
    from prefect.settings import PREFECT_API_URL, temporary_settings

    return temporary_settings(updates={PREFECT_API_URL: os.environ["PREFECT_API_URL"]})


async def _what_prefect_holds(store_root: str) -> dict:
    """The flow run that used `store_root`: its parameters, each task run's log lines, and its
    artifacts by key."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import (
        ArtifactFilter,
        ArtifactFilterFlowRunId,
        LogFilter,
        LogFilterTaskRunId,
    )

    record = RunLedger(ArtifactStore(store_root)).get("last")
    async with get_client() as client:
        run = await client.read_flow_run(record.extra["prefect_flow_run"])
        assert run.parameters["store_root"] == store_root
        logs = {}
        for task_run in await client.read_task_runs():
            if task_run.flow_run_id != run.id:
                continue
            records = await client.read_logs(
                LogFilter(task_run_id=LogFilterTaskRunId(any_=[task_run.id]))
            )
            logs[task_run.name] = [r.message for r in records]
        artifacts = await client.read_artifacts(
            artifact_filter=ArtifactFilter(flow_run_id=ArtifactFilterFlowRunId(any_=[run.id]))
        )
        return {
            "state": run.state_name,
            "name": run.name,
            "parameters": run.parameters,
            "logs": logs,
            "artifacts": {a.key: (a.type, a.data) for a in artifacts},
        }


def test_a_run_shows_its_logs_summaries_and_progress_in_prefect(tmp_path):
    if not os.environ.get("PREFECT_API_URL"):
        pytest.skip("needs the session's Prefect server")
    store_root = str(tmp_path / "store")
    run = [*TOY_CLI, "run", "toy", "--preset", "tiny", "--store", store_root,
           "--set", "toy-squares.delay=0.1"]  # fmt: skip
    done = subprocess.run(run, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "COLUMNS": "100"})  # fmt: skip
    assert done.returncode == 0, done.stderr
    with session_api():
        held = asyncio.run(_what_prefect_holds(store_root))
    assert held["state"] == "Completed"
    assert "progress" not in held["parameters"] and "echo" not in held["parameters"]
    squares = held["logs"]["toy-squares"]
    assert any(line.startswith("toy-squares: computing toy-squares-") for line in squares)
    assert any(line.startswith("toy-squares: squares: 40/40 done") for line in squares)
    assert any(
        line.startswith("toy-double: committed toy-double-") for line in held["logs"]["toy-double"]
    )
    kind, text = held["artifacts"]["toy-toy-squares"]
    assert kind == "markdown" and "chunks_computed_now: 40" in text and "n = `4000`" in text
    kind, text = held["artifacts"]["toy-toy-double"]
    assert kind == "markdown" and "squares: `toy-squares-" in text
    kind, value = held["artifacts"]["toy-toy-squares-progress"]
    assert kind == "progress" and float(value) == 100.0


def test_a_stopped_run_is_cancelled_and_named_by_flow_preset_and_time(tmp_path):
    """Ctrl-C ends a run Cancelled in the UI (not Crashed), with the CLI's usual stop line and
    exit status; the flow run's name says flow, preset and start time."""
    if not os.environ.get("PREFECT_API_URL"):
        pytest.skip("needs the session's Prefect server")
    store_root = str(tmp_path / "store")
    run = [*TOY_CLI, "run", "toy", "--preset", "tiny", "--store", store_root,
           "--set", "toy-squares.delay=1"]  # fmt: skip
    proc = subprocess.Popen(run, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env={**os.environ, "COLUMNS": "100"})  # fmt: skip
    assert proc.stdout is not None
    seen = []
    for line in proc.stdout:
        seen.append(line)
        if "toy-squares: computing" in line:
            time.sleep(2.0)  # a chunk or two into the work
            proc.send_signal(signal.SIGINT)
            break
    rest, _ = proc.communicate(timeout=120)
    assert proc.returncode == 130, "".join(seen) + rest
    assert "stopped by SIGINT" in rest
    with session_api():
        held = asyncio.run(_what_prefect_holds(store_root))
    assert held["state"] == "Cancelled"
    assert re.fullmatch(r"toy \[tiny\] \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC", held["name"])


def test_serve_runs_a_flow_triggered_through_the_prefect_api(tmp_path):
    """`gameforge serve` registers every flow as a deployment; lhe-abstraction triggered at the
    tiny preset through the API completes, records itself, and makes the CLI's keys."""
    if not os.environ.get("PREFECT_API_URL"):
        pytest.skip("needs the session's Prefect server")
    from prefect.deployments import run_deployment
    from prefect.exceptions import ObjectNotFound

    from gameforge.flows.pipeline import plan_keys
    from gameforge.flows.specs import get_flow

    store_root = tmp_path / "store"
    name = f"test-{os.getpid()}"
    serve = subprocess.Popen(
        [sys.executable, "-m", "gameforge.flows.cli", "serve", "--store", str(store_root),
         "--preset", "small", "--name", name],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    try:
        run = None
        for _ in range(120):  # until the deployment is registered
            try:
                with session_api():
                    run = run_deployment(
                        f"lhe-abstraction/{name}", parameters={"preset": "tiny"}, timeout=900
                    )
                break
            except ObjectNotFound:  # not registered yet
                assert serve.poll() is None, serve.stdout.read() if serve.stdout else ""
                time.sleep(1)
        assert run is not None and run.state is not None
        assert run.state.is_completed(), run.state
    finally:
        serve.terminate()
        output = serve.communicate(timeout=60)[0]
    assert f"lhe-abstraction/{name}" in output
    record = RunLedger(ArtifactStore(store_root)).get("last")
    assert record.status == "completed" and record.preset == "tiny"
    spec = get_flow("lhe-abstraction")
    assert {n: v["key"] for n, v in record.nodes.items()} == plan_keys(
        spec, spec.resolve("tiny", [])
    )
    assert all(ArtifactStore(store_root).exists(k) for k in record.artifact_keys())


def test_the_server_ui_talks_to_its_own_api_port():
    """`gameforge server start --port P` (the session's server runs on a free port): the UI's
    settings point it at P's API, not Prefect's default :4200."""
    import json
    import urllib.request

    api = os.environ.get("PREFECT_API_URL")
    if not api or "GAMEFORGE_TEST_EPHEMERAL_PREFECT" in os.environ:
        pytest.skip("no session server")
    with urllib.request.urlopen(api.removesuffix("/api") + "/ui-settings", timeout=30) as reply:
        assert json.loads(reply.read())["api_url"] == api
