"""Runs that fail or are stopped: one line and a log file, no process left behind, a rerun resumes,
and corrupted artifacts are moved aside and rebuilt."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import tests.toy_stages  # noqa: F401  (registers the toy stages in this process)
from gameforge.artifacts import ArtifactStore
from gameforge.artifacts.runs import RunLedger
from gameforge.flows.runlog import descendants
from gameforge.stages.runner import run_stage
from tests.conftest import without_shared_prefect
from tests.poker_helpers import quiet
from tests.toy_stages import TOY_CLI

CLI = [sys.executable, "-m", "gameforge.flows.cli"]


def env(shared_prefect: bool = True) -> dict[str, str]:
    """The CLI's environment: the session's Prefect server, or (False) none, so that a run
    starts Prefect's temporary API as its own child process."""
    out = {**os.environ, "COLUMNS": "100", "NO_COLOR": "1"}
    return out if shared_prefect else without_shared_prefect(out)


def corrupt_first_chunk(store: ArtifactStore, key: str) -> None:
    """Overwrite one stored chunk of `key` with bytes no codec can decode."""
    chunk = next(p for p in sorted(store.object_path(key).rglob("c/*")) if p.is_file())
    chunk.write_bytes(os.urandom(64))


def stored(store: ArtifactStore, stage: str) -> str:
    """The key of the one committed artifact of `stage`."""
    return next(key for key in store.keys() if key.startswith(stage + "-"))  # noqa: SIM118


def command_line(pid: int) -> str:
    """A process's command line, empty once it has gone."""
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def running(pid: int) -> bool:
    """True while `pid` exists and is not a zombie (an exited process not yet collected)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def lines(text: str) -> list[str]:
    """Non-empty lines."""
    return [line for line in text.splitlines() if line.strip()]


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGKILL], ids=["SIGTERM", "SIGKILL"])
def test_a_stopped_run_leaves_no_process_and_a_rerun_resumes_to_the_same_artifacts(tmp_path, stop):
    store_root = tmp_path / "store"
    run = [*TOY_CLI, "run", "toy", "--preset", "tiny", "--store", str(store_root)]
    proc = subprocess.Popen(run, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env=env(shared_prefect=False))  # fmt: skip
    done_dir = None
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        found = list((store_root / "partial").glob("toy-squares-*/done/squares/*"))
        if len(found) >= 3:
            done_dir = found[0].parent
            break
        time.sleep(0.1)
    assert done_dir is not None, "the toy stage never got going"
    children = descendants(proc.pid)
    assert any("uvicorn" in command_line(pid) for pid in children)  # Prefect's temporary API
    stopped_at = time.monotonic()
    proc.send_signal(stop)
    output = proc.communicate(timeout=30)[0]
    assert time.monotonic() - stopped_at < 10
    record = RunLedger(ArtifactStore(store_root)).get("last")
    if stop == signal.SIGTERM:
        assert proc.returncode == 128 + signal.SIGTERM
        assert "stopped by SIGTERM" in output and len(lines(output)) <= 6, output
        assert (record.status, record.error) == ("stopped", "stopped by SIGTERM")
    else:  # nothing runs in the process: its children must end by themselves
        assert proc.returncode == -signal.SIGKILL
        assert (record.status, record.shown_status()) == ("running", "killed")
    # an exited child may sit as a zombie for a moment until init collects it: not left running
    deadline = time.monotonic() + 5
    while (alive := [p for p in children if running(p)]) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not alive, f"processes left behind: {[(p, command_line(p)) for p in alive]}"
    kept = len(list(done_dir.iterdir()))
    assert 3 <= kept < 40  # stopped in the middle, with finished chunks kept

    again = subprocess.run(run, capture_output=True, text=True, env=env(), timeout=300)
    assert again.returncode == 0, again.stderr
    assert "resuming squares" in again.stdout
    store = ArtifactStore(store_root)
    reference_store = ArtifactStore(tmp_path / "reference")
    reference = run_stage("toy-squares", {}, store=reference_store, log=quiet)
    squares_key = stored(store, "toy-squares")
    assert squares_key == reference.key  # the delay is execution-only: same key
    resumed = store.open(squares_key)
    fresh = reference_store.open(reference.key)
    assert resumed.meta["arrays"] == fresh.meta["arrays"]
    assert resumed.meta["resumed"] is True
    doubled = store.open(stored(store, "toy-double"))
    np.testing.assert_array_equal(doubled["doubled"][:], 2 * np.arange(4000) ** 2)
    assert not store.verify()[squares_key]


def test_memory_error_in_a_dask_worker_ends_the_run_in_one_error_line(tmp_path):
    run = [*TOY_CLI, "run", "toy", "--preset", "tiny", "--store", str(tmp_path / "store"),
           "--set", "toy-squares.fail_chunk=5", "--set", "toy-squares.delay=0.05",
           "--verbose"]  # fmt: skip
    failed = subprocess.run(run, capture_output=True, text=True, env=env(), timeout=120)
    assert failed.returncode == 1
    assert "Traceback (most recent call last)" in failed.stderr  # --verbose: inline too
    errors = [line for line in lines(failed.stderr) if line.startswith("error:")]
    assert len(errors) == 1, failed.stderr
    assert "stage toy-squares" in errors[0] and "MemoryError: chunk 5" in errors[0]
    assert "out of memory" in errors[0]
    record = RunLedger(ArtifactStore(tmp_path / "store")).get("last")
    assert record.status == "failed" and "MemoryError: chunk 5" in record.error


def test_a_failing_stage_prints_one_line_and_a_log_and_repair_rebuilds_the_corrupted_input(
    tmp_path,
):
    store_root = tmp_path / "store"
    store = ArtifactStore(store_root)
    squares = run_stage("toy-squares", {}, store=store, log=quiet)
    corrupt_first_chunk(store, squares.key)
    before = store.open(squares.key).meta["arrays"]
    run = [*TOY_CLI, "run", "toy", "--preset", "tiny", "--store", str(store_root)]

    failed = subprocess.run(run, capture_output=True, text=True, env=env(), timeout=300)
    assert failed.returncode == 1
    errors = [line for line in lines(failed.stderr) if line.startswith("error:")]
    assert len(errors) == 1, failed.stderr
    assert "stage toy-double" in errors[0] and squares.key in errors[0]
    assert "corrupted" in errors[0] and "--repair" in errors[0]
    assert len(lines(failed.stdout + failed.stderr)) <= 8, failed.stdout + failed.stderr
    assert "Traceback" not in failed.stdout + failed.stderr
    log_line = next(line for line in lines(failed.stderr) if line.startswith("full traceback:"))
    log_file = Path(log_line.split(":", 1)[1].strip())
    assert "Traceback (most recent call last)" in log_file.read_text()
    assert not [k for k in store.keys() if k.startswith("toy-double")]  # noqa: SIM118

    repaired = subprocess.run([*run, "--repair"], capture_output=True, text=True, env=env(),
                              timeout=300)  # fmt: skip
    assert repaired.returncode == 0, repaired.stderr
    assert f"repair: {squares.key} is corrupted" in repaired.stdout
    assert not any(store.verify().values())
    assert store.open(squares.key).meta["arrays"] == before  # rebuilt to the recorded content
    assert any(p.name.startswith(squares.key) for p in (store_root / "trash").iterdir())
    doubled = store.open(stored(store, "toy-double"))
    np.testing.assert_array_equal(doubled["doubled"][:], 2 * np.arange(4000) ** 2)


def test_artifacts_repair_rebuilds_a_corrupted_artifact_and_its_changed_dependents(tmp_path):
    from typer.testing import CliRunner

    from gameforge.flows.cli import app

    store = ArtifactStore(tmp_path / "store")
    squares = run_stage("toy-squares", {"n": 500}, store=store, log=quiet)
    double = run_stage("toy-double", {}, {"squares": squares.key}, store=store, log=quiet)
    runner = CliRunner()
    args = ["artifacts", "repair", squares.key, "--store", str(store.root), "--dask-address"]
    intact = runner.invoke(app, [*args, "local"])
    assert intact.exit_code == 0 and "intact" in intact.stdout

    corrupt_first_chunk(store, squares.key)
    fixed = runner.invoke(app, [*args, "local"])
    assert fixed.exit_code == 0, fixed.stdout
    assert f"rebuilt 1: {squares.key}" in fixed.stdout  # same content: the dependent stays
    assert store.exists(double.key) and not store.verify()[squares.key]

    # a dependent built from other content than the rebuilt one is rebuilt as well
    meta_path = store.object_path(double.key) / "zarr.json"
    document = json.loads(meta_path.read_text())
    read = document["attributes"]["gameforge"]["input_checksums"]["squares"]
    read["squares"] = "0" * len(read["squares"])  # as if built from other squares
    meta_path.write_text(json.dumps(document))
    again = runner.invoke(app, [*args, "local", "--rebuild"])
    assert again.exit_code == 0, again.stdout
    assert f"{double.key} was built from the old {squares.key}" in again.stdout
    assert double.key in again.stdout.splitlines()[-1]
    np.testing.assert_array_equal(store.open(double.key)["doubled"][:], 2 * np.arange(500) ** 2)


@pytest.mark.parametrize("damaged", ["group", "array"])
def test_run_repair_mends_damaged_metadata_in_one_command(tmp_path, damaged):
    """A truncated `zarr.json`, the artifact's own or one array's: reads fail in one line naming
    the artifact (and the array), and one `run --repair` sets it aside and rebuilds it."""
    from typer.testing import CliRunner

    from gameforge.flows.cli import app

    store_root = tmp_path / "store"
    store = ArtifactStore(store_root)
    run = [*TOY_CLI, "run", "toy", "--preset", "tiny", "--store", str(store_root)]
    built = subprocess.run(run, capture_output=True, text=True, env=env(), timeout=300)
    assert built.returncode == 0, built.stderr
    squares = stored(store, "toy-squares")
    before = store.open(squares).meta["arrays"]
    document = store.object_path(squares) / "zarr.json"
    if damaged == "array":
        document = store.object_path(squares) / "squares" / "zarr.json"
    document.write_bytes(document.read_bytes()[:120])

    shown = CliRunner().invoke(app, ["artifacts", "verify", squares, "--store", str(store_root)])
    said = " ".join(shown.output.split())  # as one line, whatever the terminal's width
    assert shown.exit_code != 0 and "Traceback" not in said
    assert squares in said and "corrupted" in said
    if damaged == "array":
        assert "array 'squares'" in said

    repaired = subprocess.run([*run, "--repair"], capture_output=True, text=True, env=env(),
                              timeout=300)  # fmt: skip
    assert repaired.returncode == 0, repaired.stdout + repaired.stderr
    assert f"repair: {squares} is corrupted" in repaired.stdout
    assert store.open(squares).meta["arrays"] == before
    assert not any(store.verify().values())
