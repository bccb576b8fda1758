"""Run records: what `gameforge runs` lists, shows and compares, and what `artifacts gc
--unreferenced` keeps because a run uses it."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

import tests.toy_stages  # noqa: F401  (registers the toy stages in this process)
from gameforge.artifacts import ArtifactStore, StoreError
from gameforge.artifacts.runs import (
    RunLedger,
    collect_unreferenced,
    headline_values,
    referenced,
)
from gameforge.stages.runner import run_stage
from tests.poker_helpers import quiet
from tests.toy_stages import TOY_CLI


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    """The toy CLI against the session's Prefect server."""
    env = {**os.environ, "COLUMNS": "120", "NO_COLOR": "1"}
    return subprocess.run([*TOY_CLI, *args], capture_output=True, text=True, env=env, timeout=300)


def test_two_runs_are_listed_compared_and_the_older_collected(tmp_path):
    store = str(tmp_path / "store")
    for n in (3000, 4000):
        done = cli("run", "toy", "--preset", "tiny", "--store", store,
                   "--set", f"toy-squares.n={n}", "--set", "toy-squares.delay=0")  # fmt: skip
        assert done.returncode == 0, done.stderr
    listed = json.loads(cli("runs", "ls", "--store", store, "--json").stdout)
    assert [r["status"] for r in listed] == ["completed", "completed"]
    assert [r["overrides"][0] for r in listed] == ["toy-squares.n=3000", "toy-squares.n=4000"]
    artifacts = ArtifactStore(store)
    for record in listed:
        assert set(record["nodes"]) == {"toy-squares", "toy-double"}
        assert all(artifacts.exists(n["key"]) and n["cached"] is False
                   for n in record["nodes"].values())  # fmt: skip
    compared = json.loads(
        cli("runs", "compare", "last~1", "last", "--store", store, "--json").stdout
    )
    chunks = next(r for r in compared["values"] if r["field"] == "chunks_computed_now")
    assert (chunks["a"], chunks["b"], chunks["change"]) == (30, 40, "+10")
    asked = {(r["node"], r["field"]): (r["a"], r["b"]) for r in compared["parameters"]}
    assert asked[("toy-squares", "n")] == (3000, 4000)
    assert ("(run)", "overrides") in asked
    shown = cli("runs", "compare", "last~1", "last", "--store", store).stdout
    assert "asked for differently" in shown and "chunks_computed_now" in shown
    shown = cli("runs", "show", listed[0]["run_id"][:22], "--store", store).stdout
    assert "toy-squares.n=3000" in shown and listed[0]["nodes"]["toy-double"]["key"] in shown

    before = set(artifacts.keys())
    dry = cli(
        "artifacts", "gc", "--unreferenced", "--keep-last", "1", "--dry-run", "--store", store
    )
    assert dry.returncode == 0 and "would be removed" in dry.stdout
    assert set(artifacts.keys()) == before
    gone = cli("artifacts", "gc", "--unreferenced", "--keep-last", "1", "--store", store)
    assert gone.returncode == 0, gone.stderr
    assert "2 unreferenced artifacts removed" in gone.stdout
    assert set(artifacts.keys()) == set(listed[1]["nodes"][n]["key"] for n in listed[1]["nodes"])
    assert [r.run_id for r in RunLedger(artifacts).all()] == [listed[1]["run_id"]]


def test_an_artifact_is_kept_while_a_kept_run_builds_on_it(store):
    squares = run_stage("toy-squares", {"n": 300}, store=store, log=quiet)
    double = run_stage("toy-double", {}, {"squares": squares.key}, store=store, log=quiet)
    stray = run_stage("toy-squares", {"n": 200}, store=store, log=quiet)
    ledger = RunLedger(store)
    ledger.record_done("toy-double", {"toy-double": {"key": double.key}}, "test")
    assert referenced(store, ledger.all()) == {squares.key, double.key}
    done = collect_unreferenced(store)
    assert [key for key, _size in done.removed] == [stray.key] and done.freed > 0
    assert set(store.keys()) == {squares.key, double.key}


def test_collecting_a_store_without_records_is_refused(store):
    run_stage("toy-squares", {"n": 300}, store=store, log=quiet)
    with pytest.raises(StoreError, match="no run records"):
        collect_unreferenced(store)
    assert len(store.keys()) == 1


def test_headline_values_flatten_short_lists_and_drop_long_ones():
    summary = {"k": 8, "table": [{"win_rate": 0.5}], "sizes": list(range(100)), "ok": True}
    assert headline_values(summary) == {"k": 8, "table.0.win_rate": 0.5, "ok": True}
