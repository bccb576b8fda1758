"""`gameforge runs ...`: the runs recorded in the store (list, show one, compare two)."""

from __future__ import annotations

import functools
import json
import sys
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.table import Table
from rich.text import Text

from gameforge.flows.cli.common import StoreOpt, console, fail, ledger

if TYPE_CHECKING:
    from gameforge.flows.findings import Finding

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
    findings = _record_findings(artifacts, record)
    if findings:
        console.print(findings_table(f"findings of {record.flow} [{record.preset}]", findings))


@runs_app.command("compare")
def runs_compare(
    first: Annotated[str, typer.Argument(help="Run id, a unique prefix, last, or last~1 ...")],
    second: Annotated[str, typer.Argument(help="The other run.")],
    store: StoreOpt = "store",
    everything: Annotated[
        bool, typer.Option("--all", help="Every node's key and summary value, side by side.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="The comparison as JSON.")] = False,
) -> None:
    """What two runs asked for differently (parameters) and what they found differently
    (findings), side by side; --all for every summary value."""
    from gameforge.artifacts.runs import compare_runs, parameter_differences
    from gameforge.artifacts.store import ArtifactStore
    from gameforge.flows.findings import compare_findings

    a, b = _get_run(store, first), _get_run(store, second)
    artifacts = ArtifactStore(store)
    parameters = parameter_differences(artifacts, a, b)
    findings = compare_findings(_record_findings(artifacts, a), _record_findings(artifacts, b))
    values = compare_runs(artifacts, a, b, everything)
    if as_json:
        document = {"a": a.run_id, "b": b.run_id, "parameters": parameters,
                    "findings": findings, "values": values}  # fmt: skip
        sys.stdout.write(json.dumps(document, indent=2, default=str) + "\n")
        return
    out = functools.partial(console.print, highlight=False, markup=False)
    for name, record in (("A", a), ("B", b)):
        out(f"{name} = {record.run_id}  {record.flow} [{record.preset}], {record.shown_status()}")
    if everything:
        _side_by_side("every node's key and summary value", ("node", "field"), values)
        return
    _side_by_side("asked for differently", ("node", "parameter"), parameters)
    if findings:
        _side_by_side("found differently", ("finding",), findings)
        return
    changed = [r for r in values if r["field"] != "key"]
    if not changed:
        out("no finding or summary value differs" if parameters else "the same results")
        return
    _side_by_side("summary values that differ (this flow declares no findings)",
                  ("node", "field"), changed[:COMPARE_ROWS])  # fmt: skip
    if len(changed) > COMPARE_ROWS:
        out(f"({len(changed) - COMPARE_ROWS} more values differ: --all shows them)")


# the summary values `runs compare` shows before pointing at --all: a screenful
COMPARE_ROWS = 20


def _side_by_side(title: str, names: tuple[str, ...], rows: list[dict[str, Any]]) -> None:
    """Rows as a table of their names, then A and B (and B - A where rows have it)."""
    if not rows:
        console.print(f"{title}: nothing", highlight=False, markup=False)
        return
    fields = {"node": "node", "field": "field", "parameter": "field", "finding": "what"}
    change = any(row.get("change") for row in rows)
    table = Table(title=Text(title), title_justify="left")
    for column in (*names, "A", "B", *(("B - A",) if change else ())):
        table.add_column(column, overflow="fold")
    previous = None
    for row in rows:
        cells = [str(row[fields[name]]) for name in names]
        if "node" in names:
            cells[0], previous = ("" if row["node"] == previous else row["node"]), row["node"]
        cells += [str(row["a"]), str(row["b"])] + ([str(row.get("change", ""))] if change else [])
        table.add_row(*(Text(c) for c in cells))
    console.print(table)


def _record_findings(store: Any, record: Any) -> list[Finding]:
    """The findings of a recorded run, read again from its artifacts."""
    from gameforge.flows.findings import run_findings

    keys = {label: node["key"] for label, node in record.nodes.items() if "key" in node}
    return run_findings(record.flow, keys, store)


def findings_table(title: str, findings: list[Finding]) -> Table:
    """The findings as a two-column table; the artifact's key under the first value it gives
    (never cut: cells fold rather than end in an ellipsis)."""
    table = Table(title=Text(title), title_justify="left")
    table.add_column("finding", overflow="fold", ratio=2)
    table.add_column("value (95% intervals)", overflow="fold", ratio=5)
    previous = None
    for finding in findings:
        value = Text(finding.value)
        if finding.key != previous:
            value.append(f"\nfrom {finding.key}", style="dim")
            previous = finding.key
        table.add_row(Text(finding.what), value)
    return table


def print_findings(title: str, findings: list[Finding]) -> None:
    """Print a run's findings, or say that it has none to show."""
    if findings:
        console.print(findings_table(title, findings))
    else:
        console.print(f"{title}: none (the nodes holding the flow's results were not built)",
                      markup=False, highlight=False)  # fmt: skip
