"""A real Dask cluster on 127.0.0.1 (scheduler + two worker processes) gives the same artifact."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from artifacts import ArtifactStore
from flows.runtime import dask_executor
from stages.runner import run_stage

PARAMS = {"game": "holdem6.limit.2p.reverse_blinds", "boards_per_chunk": 128}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.cluster
def test_stage_through_real_cluster_equals_in_process(tmp_path):
    bindir = Path(sys.executable).parent
    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    env = dict(os.environ, NUMBA_NUM_THREADS="1")
    logs = tmp_path / "logs"
    logs.mkdir()
    procs = [
        subprocess.Popen(
            [
                str(bindir / "dask"),
                "scheduler",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--dashboard-address",
                "127.0.0.1:0",
            ],
            stdout=open(logs / "scheduler.log", "w"),  # noqa: SIM115 (closed with the process)
            stderr=subprocess.STDOUT,
            env=env,
        )
    ]
    try:
        time.sleep(1.0)
        for i in range(2):
            procs.append(
                subprocess.Popen(
                    [
                        str(bindir / "dask"),
                        "worker",
                        address,
                        "--host",
                        "127.0.0.1",
                        "--nworkers",
                        "1",
                        "--nthreads",
                        "1",
                        "--no-dashboard",
                        "--name",
                        f"w{i}",
                    ],
                    stdout=open(logs / f"worker{i}.log", "w"),  # noqa: SIM115
                    stderr=subprocess.STDOUT,
                    env=env,
                )
            )
        from distributed import Client

        with Client(address, timeout="30s") as client:
            client.wait_for_workers(2, timeout=60)
            assert len(client.scheduler_info()["workers"]) == 2
        on_cluster = ArtifactStore(tmp_path / "cluster")
        with dask_executor(address) as executor:
            remote = run_stage(
                "river-hs", PARAMS, store=on_cluster, executor=executor, log=lambda _m: None
            )
        local = ArtifactStore(tmp_path / "local")
        here = run_stage("river-hs", PARAMS, store=local, log=lambda _m: None)
        assert remote.key == here.key
        a = on_cluster.open(remote.key)
        b = local.open(here.key)
        assert a.meta["arrays"] == b.meta["arrays"]  # shapes, dtypes and checksums
        assert a["hs_count"][:].tobytes() == b["hs_count"][:].tobytes()
        worker_logs = "".join((logs / f"worker{i}.log").read_text() for i in range(2))
        assert "Starting established connection" in worker_logs or "Registered to" in worker_logs
    finally:
        for proc in reversed(procs):
            proc.terminate()
        for proc in procs:
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
