"""Process-wide set-up for runs: Prefect environment defaults and the Dask client."""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import os
from collections.abc import Callable, Iterator
from typing import Any

from gameforge.stages.executor import DaskExecutor, Executor, InProcessExecutor

STARTUP_TIMEOUT = "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS"


def prefect_defaults() -> None:
    """Analytics off, and the long-lived local server's API when one is running."""
    os.environ.setdefault("DO_NOT_TRACK", "1")
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING")
    # The temporary API's first start on a fresh PREFECT_HOME runs database migrations (20-25 s,
    # more on a busy machine); Prefect's default 20 s start-up timeout is too tight for that.
    os.environ.setdefault(STARTUP_TIMEOUT, "180")
    from gameforge.flows.server import server_url, use_prefect_home

    use_prefect_home()
    if "PREFECT_API_URL" not in os.environ:
        url = server_url()
        if url:
            os.environ["PREFECT_API_URL"] = url


def import_run_libraries() -> None:
    """Import Prefect and Dask's distributed (with Prefect's defaults set) before a run starts."""
    prefect_defaults()
    import distributed  # noqa: F401
    import prefect  # noqa: F401


# distributed always starts an HTTP server on the scheduler and on each worker, even with
# `dashboard_address=None` (which then means port 8787 on every interface). Binding both to
# 127.0.0.1 at a free port is the only way to keep them off the network; measured with
# distributed 2025.1.0 and 2026.8.0, the range pyproject.toml allows.
LOOPBACK_ANY_PORT = "127.0.0.1:0"

TLS_ENV = {
    "tls_ca_file": "GAMEFORGE_TLS_CA_FILE",
    "tls_client_cert": "GAMEFORGE_TLS_CERT",
    "tls_client_key": "GAMEFORGE_TLS_KEY",
}


class ClusterError(ValueError):
    """A Dask address or its security settings that cannot be used, as one line."""


def _address_host(address: str) -> tuple[str, str]:
    """(protocol, host) of a Dask address such as tcp://10.0.0.5:8786."""
    from distributed.comm import get_address_host, parse_address

    return parse_address(address)[0], get_address_host(address)


def is_loopback_host(host: str) -> bool:
    """True if `host` names this machine's loopback interface only (127.0.0.0/8 or ::1)."""
    import ipaddress
    import socket

    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        pass
    try:
        infos = socket.getaddrinfo(host, None)
    except OSError:
        return False
    return bool(infos) and all(ipaddress.ip_address(i[4][0]).is_loopback for i in infos)


def plain_connection_warning(address: str) -> str | None:
    """A one-line warning when `address` is plain tcp:// to a host beyond loopback, else None."""
    protocol, host = _address_host(address)
    if protocol != "tcp" or is_loopback_host(host):
        return None
    return (
        f"warning: {address} is a plain tcp:// connection: unauthenticated and unencrypted; "
        "use tls:// with GAMEFORGE_TLS_CA_FILE, GAMEFORGE_TLS_CERT and GAMEFORGE_TLS_KEY"
    )


def dask_security(address: str) -> Any:
    """Dask `Security` for `address`: TLS files from GAMEFORGE_TLS_* or Dask's own configuration.

    A tls:// address with no certificate anywhere raises ClusterError naming what to set.
    """
    from distributed.security import Security

    files = {name: os.environ[env] for name, env in TLS_ENV.items() if os.environ.get(env)}
    if files:
        missing = [TLS_ENV[name] for name in TLS_ENV if name not in files]
        if missing:
            raise ClusterError(f"TLS needs all three certificate files; {', '.join(missing)} unset")
        for name, path in files.items():
            if not os.path.isfile(path):
                raise ClusterError(f"{TLS_ENV[name]}: no such file {path}")
        return Security(**files, require_encryption=True)
    import dask.config

    security = Security()  # Dask's configuration: distributed.comm.tls.* (or DASK_* variables)
    configured = dask.config.get("distributed.comm.tls.client.cert", None)
    if _address_host(address)[0] == "tls" and not configured:
        raise ClusterError(
            f"{address} needs TLS certificates: set GAMEFORGE_TLS_CA_FILE, GAMEFORGE_TLS_CERT "
            "and GAMEFORGE_TLS_KEY (or Dask's distributed.comm.tls configuration)"
        )
    return security


@functools.cache
def _worker_without_dashboard() -> type:
    from distributed import Worker

    class WorkerWithoutDashboard(Worker):
        """A worker whose HTTP server has no dashboard pages: LocalCluster turns them on
        whenever the worker's HTTP address is given, and it must be given to stay on loopback."""

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            kwargs["dashboard"] = False
            super().__init__(*args, **kwargs)

    return WorkerWithoutDashboard


@contextlib.contextmanager
def dask_executor(
    address: str | None = None,
    workers: int | None = None,
    dashboard: bool = False,
    log: Callable[[str], None] = print,
) -> Iterator[Executor]:
    """A Dask executor: the cluster at `address`, else a threaded LocalCluster on this machine.

    Threads, not processes, by default: the numba kernels release the GIL, and threads need no
    start-up, no pickling and no per-worker Prefect API.
    `address='local'` skips Dask entirely and runs chunks in this process. `dashboard=True`
    serves Dask's dashboard on 127.0.0.1 at a free port and logs its link once.
    """
    if address == "local":
        yield InProcessExecutor()
        return
    import logging

    from distributed import Client, LocalCluster, Worker

    logging.getLogger("distributed").setLevel(logging.ERROR)

    if address:
        warning = plain_connection_warning(address)
        if warning:
            log(warning)
        client = Client(address, timeout="20s", security=dask_security(address))
        try:
            if dashboard:
                log(f"Dask dashboard (the cluster's own): {client.dashboard_link}")
            yield DaskExecutor(client)
        finally:
            client.close()
        return
    threads = workers or os.cpu_count() or 1
    cluster: Any = LocalCluster(
        worker_class=Worker if dashboard else _worker_without_dashboard(),
        n_workers=1,
        threads_per_worker=threads,
        processes=False,  # scheduler and worker talk in-process; only their HTTP servers listen
        dashboard_address=LOOPBACK_ANY_PORT,
        worker_dashboard_address=LOOPBACK_ANY_PORT,
        scheduler_kwargs={"dashboard": dashboard},
    )
    client = Client(cluster)
    try:
        if dashboard:
            port = cluster.scheduler.http_server.port
            log(f"Dask dashboard: http://127.0.0.1:{port}/status")
            if importlib.util.find_spec("bokeh") is None:
                log("the Dask dashboard needs bokeh: pip install 'gameforge[dashboard]'")
        yield DaskExecutor(client)
    finally:
        client.close()
        cluster.close()
