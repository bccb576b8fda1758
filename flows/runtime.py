"""Process-wide set-up for runs: Prefect environment defaults and the Dask client."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from typing import Any

from stages.executor import DaskExecutor, Executor, InProcessExecutor


def prefect_defaults() -> None:
    """Analytics off, and the long-lived local server's API when one is running."""
    os.environ.setdefault("DO_NOT_TRACK", "1")
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING")
    # The temporary API's first start on a fresh PREFECT_HOME runs database migrations (20-25 s,
    # more on a busy machine); Prefect's default 20 s start-up timeout is too tight for that.
    os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "180")
    if "PREFECT_API_URL" not in os.environ:
        from flows.server import server_url

        url = server_url()
        if url:
            os.environ["PREFECT_API_URL"] = url


@contextlib.contextmanager
def dask_executor(address: str | None = None, workers: int | None = None) -> Iterator[Executor]:
    """A Dask executor: the cluster at `address`, else a threaded LocalCluster on this machine.

    Threads, not processes, by default: the numba kernels release the GIL, and threads need no
    start-up, no pickling and no per-worker Prefect API (see the project's PITFALLS notes).
    `address='local'` skips Dask entirely and runs chunks in this process.
    """
    if address == "local":
        yield InProcessExecutor()
        return
    import logging

    from distributed import Client, LocalCluster

    logging.getLogger("distributed").setLevel(logging.ERROR)

    if address:
        client = Client(address, timeout="20s")
        try:
            yield DaskExecutor(client)
        finally:
            client.close()
        return
    threads = workers or os.cpu_count() or 1
    cluster: Any = LocalCluster(
        n_workers=1,
        threads_per_worker=threads,
        processes=False,  # in-process transport: nothing listens on the network
        dashboard_address=None,
    )
    client = Client(cluster)
    try:
        yield DaskExecutor(client)
    finally:
        client.close()
        cluster.close()
