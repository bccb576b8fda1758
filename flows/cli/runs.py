"""`gameforge runs ...`: the runs recorded in the store (list, show one, compare two)."""

from __future__ import annotations

import functools
import json
import sys
from typing import Annotated, Any

import typer
from rich.table import Table
from rich.text import Text

from gameforge.flows.cli.common import StoreOpt, console, fail, ledger

runs_app = typer.Typer(no_args_is_help=True, help="Past runs recorded in the store.")


def _get_run(store: str, run_id: str) -> Any:
    from gameforge.artifacts.store import StoreError

    try:
        return ledger(store).get(run_id)
    except StoreError as exc:
        fail(str(exc))


@runs_app.command("ls")
def runs_ls(
    store: StoreOpt = "store",
    as_json: Annotated[bool, typer.Option("--json", help="JSON array on stdout.")] = False,
) -> None:
    """List recorded runs, oldest first (the id starts with the UTC start time): flow, preset,
    status, duration, and how many stages it computed and found cached."""
    from rich import box

    from gameforge.artifacts.store import ArtifactStore
    from gameforge.flows.queries import list_runs, run_counts, run_seconds

    records = list_runs(ArtifactStore(store))
    if as_json:
        rows = [{**r.as_dict(), "status": r.shown_status()} for r in records]
        sys.stdout.write(json.dumps(rows, indent=2) + "\n")
        return
    table = Table(title=f"runs in store {store}", box=box.SIMPLE_HEAD, collapse_padding=True)
    for column in ("run", "flow", "preset", "status", "took", "computed/cached"):
        table.add_column(column, no_wrap=column in ("run", "status"))
    for r in records:
        counts, seconds = run_counts(r), run_seconds(r)
        table.add_row(
            r.run_id,
            r.flow,
            r.preset or "-",
            r.shown_status(),
            "-" if seconds is None else f"{seconds:.0f} s",
            "-" if counts is None else f"{counts[0]}/{counts[1]}",
        )
    console.print(table)
    if not records:
        console.print("no runs recorded yet: `gameforge run FLOW` records one")


@runs_app.command("show")
def runs_show(
    run_id: Annotated[str, typer.Argument(help="Run id, a unique prefix, last, or last~1 ...")],
    store: StoreOpt = "store",
    as_json: Annotated[bool, typer.Option("--json", help="The record as JSON.")] = False,
) -> None:
    """One run: what it asked for, each node's artifact, and how it ended."""
    from gameforge.artifacts.store import ArtifactStore

    record = _get_run(store, run_id)
    if as_json:
        sys.stdout.write(json.dumps({**record.as_dict(), "status": record.shown_status()},
                                    indent=2) + "\n")  # fmt: skip
        return
    out = functools.partial(console.print, highlight=False, markup=False)
    out(f"{record.run_id}  flow {record.flow}, preset {record.preset}: {record.shown_status()}")
    out(f"  {record.command}")
    out(f"  started {record.started} on {record.host} (pid {record.pid}), "
        f"finished {record.finished or '-'}")  # fmt: skip
    if record.overrides:
        out("  overrides: " + " ".join(record.overrides))
    if record.error:
        out(f"  error: {record.error}")
    artifacts = ArtifactStore(store)
    out("  nodes:")
    for label, node in record.nodes.items():
        how = ("cached" if node["cached"] else f"computed in {node['seconds']:.1f} s") if (
            "cached" in node) else f"planned ({node.get('planned', '?')})"  # fmt: skip
        gone = "" if artifacts.exists(node["key"]) else "  [not in the store]"
        out(f"    {label}: {node['key']} {how}{gone}")


@runs_app.command("compare")
def runs_compare(
    first: Annotated[str, typer.Argument(help="Run id, a unique prefix, last, or last~1 ...")],
    second: Annotated[str, typer.Argument(help="The other run.")],
    store: StoreOpt = "store",
    everything: Annotated[
        bool, typer.Option("--all", help="Every value, not only those that differ.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Rows as JSON.")] = False,
) -> None:
    """Two runs' results side by side: each node's key, and the summary values that differ."""
    from gameforge.artifacts.runs import compare_runs
    from gameforge.artifacts.store import ArtifactStore

    a, b = _get_run(store, first), _get_run(store, second)
    rows = compare_runs(ArtifactStore(store), a, b, everything)
    if as_json:
        sys.stdout.write(json.dumps(rows, indent=2, default=str) + "\n")
        return
    table = Table(title=f"A = {a.run_id}   B = {b.run_id}")
    for column in ("node", "field", "A", "B", "B - A"):
        table.add_column(column, overflow="fold")
    previous = None
    for row in rows:
        node = row["node"] if row["node"] != previous else ""
        previous = row["node"]
        same = row["field"] == "key" and row["a"] == row["b"]
        b_text = "(same artifact)" if same else str(row["b"])
        table.add_row(*(Text(str(c)) for c in (node, row["field"], row["a"], b_text,
                                                 row["change"])))  # fmt: skip
    console.print(table)
