"""The store on an object store: a real S3-compatible server (moto) on 127.0.0.1.

A whole flow through a multi-process Dask cluster gives the same artifacts as a local store; a
killed run resumes from its finished chunks; the lease lock keeps one writer per key across
machines; bad store URLs fail in one line. (`test_store` runs the store's own guarantees on both
kinds of store.)
"""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from gameforge.artifacts import ArtifactStore, StoreError
from gameforge.artifacts.files import LEASE_ENV
from gameforge.stages.runner import run_stage
from tests import toy_stages
from tests.cluster_helpers import start_cluster, stop_all
from tests.toy_stages import TOY_CLI

GAMEFORGE = str(Path(sys.executable).parent / "gameforge")


def _run(args: list[str], cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess:
    result = subprocess.run(args, capture_output=True, text=True, cwd=cwd, timeout=timeout)
    assert result.returncode == 0, result.stdout + result.stderr
    return result


@pytest.mark.cluster
def test_tiny_abstraction_on_s3_through_a_process_cluster_equals_the_local_store(
    tmp_path, s3_store
):
    """The flagship flow with its store on S3 and its chunk tasks in two Dask worker
    processes: the same keys and array checksums as a local store, `verify` clean, and nothing
    written to the local disk."""
    address, procs = start_cluster(tmp_path)  # the workers inherit the S3 server's variables
    try:
        remote = [GAMEFORGE, "run", "lhe-abstraction", "--preset", "tiny"]
        out = _run([*remote, "--store", s3_store.location, "--dask-address", address], tmp_path)
    finally:
        stop_all(procs)
    assert "6/6" in out.stdout or "computed" in out.stdout
    worker_logs = "".join((tmp_path / "logs" / f"worker{i}.log").read_text() for i in range(2))
    assert "Registered to" in worker_logs
    local = ArtifactStore(tmp_path / "local")
    _run([*remote, "--store", local.location, "--dask-address", "local"], tmp_path)

    keys = local.keys()
    assert s3_store.keys() == keys and len(keys) == 6
    for key in keys:
        assert s3_store.open(key).meta["arrays"] == local.open(key).meta["arrays"], key
    assert all(problems == [] for problems in s3_store.verify().values())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["local", "logs"]  # no "s3:" folder
    again = _run([*remote, "--store", s3_store.location], tmp_path)
    assert "every stage cached" in again.stdout


def _done_markers(store: ArtifactStore) -> int:
    return sum(1 for f in store.files.files_under("partial") if "/done/squares/" in f)


def test_a_killed_run_on_s3_resumes_from_its_chunks_to_the_same_artifacts(tmp_path, s3_store):
    """SIGKILL in the middle of a flow on S3; the rerun takes over the dead run's lease at
    once (same host, dead process), resumes the finished chunks, and commits what an
    uninterrupted local run commits."""
    run = [*TOY_CLI, "run", "toy", "--preset", "tiny"]
    proc = subprocess.Popen([*run, "--store", s3_store.location], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, cwd=tmp_path)  # fmt: skip
    deadline = time.monotonic() + 120
    while _done_markers(s3_store) < 3 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.1)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    kept = _done_markers(s3_store)
    assert 3 <= kept < toy_stages.N_CHUNKS
    assert s3_store.keys() == [], "a killed writer must leave nothing that looks complete"

    started = time.monotonic()
    again = _run([*run, "--store", s3_store.location], tmp_path)
    assert "resuming squares" in again.stdout
    assert "waiting" not in again.stdout  # the dead holder's lease is taken over at once
    assert time.monotonic() - started < 120
    local = ArtifactStore(tmp_path / "local")
    _run([*run, "--store", local.location], tmp_path)
    keys = local.keys()
    assert s3_store.keys() == keys
    for key in keys:
        assert s3_store.open(key).meta["arrays"] == local.open(key).meta["arrays"]
    assert [i.status for i in s3_store.entries()] == ["complete"] * len(keys)


def _lease(store: ArtifactStore, key: str, number: int, **record: object) -> None:
    """Write lease number `number` of `key` as another machine would."""
    body = {"host": "elsewhere", "pid": 1, "token": "theirs", "renewed": time.time(),
            "lease_s": 60.0, "released": False, **record}  # fmt: skip
    store.files.write(f"locks/{key}/{number}", json.dumps(body).encode())


def test_a_live_lease_elsewhere_makes_a_writer_wait_and_an_expired_one_is_taken_over(s3_store):
    key = "toy-squares-0123456789abcdef"
    _lease(s3_store, key, 0)
    waits: list[str] = []
    with (
        pytest.raises(StoreError, match=r"being built by pid 1 on elsewhere .*gave up waiting"),
        s3_store.lock(key, on_wait=lambda _k, holder: waits.append(holder), timeout=1),
    ):
        pass
    assert len(waits) == 1
    _lease(s3_store, key, 0, renewed=time.time() - 120)  # not renewed for two minutes
    with s3_store.lock(key, timeout=1) as held:
        held.check()
        assert s3_store.files.listdir(f"locks/{key}") == ["0", "1"]
    record = json.loads(s3_store.files.read_bytes(f"locks/{key}/1"))
    assert record["released"] and record["host"] == socket.gethostname()
    assert s3_store.files.listdir(f"locks/{key}") == ["1"]  # older leases cleaned up


def test_a_writer_whose_lease_was_taken_cannot_commit(s3_store, monkeypatch):
    """A stalled writer (its lease expired and another machine took the lock) fails at its
    commit instead of publishing over the other's work; the key is never committed twice."""
    monkeypatch.setenv(LEASE_ENV, "0.6")
    with s3_store.building("toy-squares", 1, {"n": 10, "chunk": 10}, {}) as writer:
        assert writer is not None
        writer.write_arrays({"squares": np.arange(10) ** 2})
        writer._held._stop.set()  # the holder stalls: no more renewals
        time.sleep(1.0)
        _lease(s3_store, writer.key, writer._held.number + 1)  # another machine takes over
        with pytest.raises(StoreError, match="lost the lock .* nothing was committed"):
            writer.commit()
    assert not s3_store.exists(writer.key)


def test_a_writer_that_lost_its_key_to_a_finished_build_neither_writes_nor_commits(any_store):
    """A writer that stalled while another built and committed the same key (which the lock
    prevents, unless a lease lapsed) can neither write into the published artifact nor publish
    its own: the commit creates the group's zarr.json only if absent."""
    from gameforge.artifacts import ArtifactWriter

    store = any_store
    params = {"n": 50, "chunk": 50}
    late = ArtifactWriter(store, run_stage_key(params), {"stage": "toy-squares"})
    late.write_arrays({"squares": np.zeros(50, np.int64)})
    first = run_stage("toy-squares", params, store=store, log=lambda _m: None)
    assert first.key == late.key
    refused = "committed by another writer meanwhile; kept theirs"
    with pytest.raises(StoreError, match=refused):
        late.commit()
    with pytest.raises(StoreError, match=refused):
        late.write_arrays({"squares": np.zeros(50, np.int64)})
    np.testing.assert_array_equal(store.open(first.key)["squares"][:], np.arange(50) ** 2)
    assert store.verify() == {first.key: []}


def run_stage_key(params: dict) -> str:
    """The key run_stage gives toy-squares with these parameters."""
    from gameforge.stages.runner import stage_key

    return stage_key("toy-squares", toy_stages.SquaresParams(**params), {})


@pytest.mark.parametrize(
    ("store_url", "message"),
    [
        ("gs://bucket/x", "gs:// is not supported yet"),
        ("s3://no-such-bucket-here/x", "no-such-bucket-here"),
    ],
)
def test_a_bad_store_url_fails_in_one_line(tmp_path, s3_server, store_url, message):
    result = subprocess.run(
        [GAMEFORGE, "artifacts", "ls", "--store", store_url],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert result.returncode != 0
    assert message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert "Traceback" not in result.stderr


def test_a_file_url_is_a_local_folder(tmp_path):
    store = ArtifactStore(f"file://{tmp_path}/store")
    assert not store.remote and store.location == str(tmp_path / "store")
    first = run_stage("toy-squares", {"n": 30}, store=store, log=lambda _m: None)
    assert (tmp_path / "store" / "objects" / first.key / "zarr.json").is_file()
