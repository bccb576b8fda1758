"""Servers the tests start on 127.0.0.1: a Dask cluster (a scheduler and two worker processes)
and an S3-compatible object store (moto)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_cluster(
    tmp_path: Path, protocol: str = "tcp", tls: list[str] = ()
) -> tuple[str, list[subprocess.Popen]]:
    """A `dask scheduler` and two single-thread `dask worker` processes, all on 127.0.0.1."""
    bindir = Path(sys.executable).parent
    port = free_port()
    address = f"{protocol}://127.0.0.1:{port}"
    env = dict(os.environ, NUMBA_NUM_THREADS="1")
    logs = tmp_path / "logs"
    logs.mkdir()
    scheduler = [str(bindir / "dask"), "scheduler", "--host", "127.0.0.1", "--port", str(port)]
    scheduler += ["--protocol", protocol, "--dashboard-address", "127.0.0.1:0", *tls]
    procs = [
        subprocess.Popen(
            scheduler,
            stdout=open(logs / "scheduler.log", "w"),  # noqa: SIM115 (closed with the process)
            stderr=subprocess.STDOUT,
            env=env,
        )
    ]
    time.sleep(1.0)
    for i in range(2):
        worker = [str(bindir / "dask"), "worker", address, "--host", "127.0.0.1"]
        worker += ["--nworkers", "1", "--nthreads", "1", "--no-dashboard", "--name", f"w{i}"]
        procs.append(
            subprocess.Popen(
                worker + list(tls),
                stdout=open(logs / f"worker{i}.log", "w"),  # noqa: SIM115
                stderr=subprocess.STDOUT,
                env=env,
            )
        )
    return address, procs


def stop_all(procs: list[subprocess.Popen]) -> None:
    """Terminate processes (kill those that do not end within 20 s)."""
    for proc in reversed(procs):
        proc.terminate()
    for proc in procs:
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()


class S3Server:
    """moto's standalone S3-compatible server on 127.0.0.1, and one bucket in it."""

    BUCKET = "gameforge-test"
    ENV = {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
    }

    def __init__(self, log: Path) -> None:
        self.port = free_port()
        self.endpoint = f"http://127.0.0.1:{self.port}"
        command = [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(self.port)]
        self.proc = subprocess.Popen(
            command,
            stdout=open(log, "w"),  # noqa: SIM115 (closed with the process)
            stderr=subprocess.STDOUT,
        )
        self.env = {**self.ENV, "AWS_ENDPOINT_URL": self.endpoint}
        deadline = time.monotonic() + 60
        while True:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    break
            except OSError:
                if time.monotonic() > deadline or self.proc.poll() is not None:
                    raise RuntimeError(
                        f"moto's S3 server did not start: {log.read_text()}"
                    ) from None
                time.sleep(0.1)

    def create_bucket(self) -> None:
        """The test bucket (needs the server's variables in os.environ)."""
        import fsspec

        fsspec.filesystem("s3", use_listings_cache=False).mkdir(self.BUCKET)

    def url(self, prefix: str) -> str:
        """A store URL in the test bucket."""
        return f"s3://{self.BUCKET}/{prefix}"

    def stop(self) -> None:
        """End the server."""
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
