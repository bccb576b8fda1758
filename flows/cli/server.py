"""`gameforge server ...` (a long-lived local Prefect server) and `gameforge serve` (every flow as
a Prefect deployment)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from gameforge.flows.cli.common import DaskOpt, WriteStoreOpt, console, fail, say

server_app = typer.Typer(no_args_is_help=True, help="A long-lived local Prefect server.")


def serve_cmd(
    store: WriteStoreOpt = "store",
    dask_address: DaskOpt = None,
    preset: Annotated[
        str, typer.Option("--preset", "-p", help="The preset a run uses unless it says another.")
    ] = "small",
    name: Annotated[str, typer.Option("--name", help="The deployments' name.")] = "gameforge",
    limit: Annotated[int, typer.Option("--limit", min=1, help="Flow runs executed at once.")] = 1,
    pool: Annotated[
        str | None,
        typer.Option(
            "--pool",
            help="Register the deployments with this work pool and return: its workers "
            "(`prefect worker start --pool NAME`) run them instead of this process.",
        ),
    ] = None,
) -> None:
    """Serve every flow as a Prefect deployment (FLOW/NAME) until interrupted.

    Runs can then be started from the Prefect UI or `prefect deployment run`. Needs a Prefect
    server."""
    from gameforge.flows.runtime import prefect_defaults

    prefect_defaults()
    if not os.environ.get("PREFECT_API_URL"):
        fail("serve needs a Prefect server: `gameforge server start`, or set PREFECT_API_URL")
    from gameforge.artifacts.files import is_remote
    from gameforge.artifacts.store import ArtifactStore

    root = ArtifactStore(store).location  # flow runs execute in processes of their own
    if not is_remote(root):
        root = str(Path(root).resolve())
    from prefect import serve

    from gameforge.flows.prefect_flow import deployments

    served = deployments(name, preset, root, dask_address)
    names = ", ".join(f"{d.flow_name}/{name}" for d in served)
    if pool is not None:
        for deployment in served:
            deployment.apply(work_pool_name=pool)
        say(f"registered {len(served)} deployments with work pool {pool}: {names}")
        return
    say(f"serving {len(served)} flows as {names}")
    say(f"store {root}; Prefect API {os.environ['PREFECT_API_URL']}")
    serve(*served, limit=limit, print_starting_message=False)


@server_app.command("start")
def server_start(port: Annotated[int, typer.Option(help="Port on 127.0.0.1.")] = 4200) -> None:
    """Start a local Prefect server (UI and API on 127.0.0.1) that later runs use."""
    from gameforge.flows import server

    with console.status("starting prefect server..."):
        try:
            state = server.start(port)
        except RuntimeError as exc:
            fail(str(exc))
    console.print(
        f"prefect server up: pid {state['pid']}, UI {state['ui']}, API {state['api_url']}"
    )


@server_app.command("stop")
def server_stop() -> None:
    """Stop the local Prefect server."""
    from gameforge.flows import server

    console.print("stopped" if server.stop() else "no server running")


@server_app.command("status")
def server_status() -> None:
    """Whether the local Prefect server is up (runs use it when it is)."""
    from gameforge.flows import server

    state = server.status()
    if not state:
        console.print("down: runs use Prefect's temporary local API (slower start)")
        return
    health = "healthy" if state["healthy"] else "not answering"
    console.print(f"up ({health}): pid {state['pid']}, UI {state['ui']}, API {state['api_url']}")
