"""`gameforge stage ...`: run one stage with what it needs upstream, list the stages, or show one
stage's inputs and parameters."""

from __future__ import annotations

import json
import sys
from typing import Annotated, Any

import typer
from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from gameforge.flows.cli.common import (
    DashboardOpt,
    DaskOpt,
    ForceResourcesOpt,
    InputOpt,
    PresetOpt,
    RepairOpt,
    SetOpt,
    VerboseOpt,
    WriteStoreOpt,
    fail,
    say,
    user_errors,
)
from gameforge.flows.cli.run import run_request
from gameforge.flows.request import RunRequest

stage_app = typer.Typer(no_args_is_help=True, help="Run, list or show single stages.")


@stage_app.command("run")
def stage_run_cmd(
    stage: Annotated[str, typer.Argument(help="Stage name (see `gameforge stage list`).")],
    preset: PresetOpt = "small",
    overrides: SetOpt = None,
    store: WriteStoreOpt = "store",
    dask_address: DaskOpt = None,
    force: Annotated[bool, typer.Option("--force", help="Recompute even if cached.")] = False,
    dashboard: DashboardOpt = False,
    stored_inputs: InputOpt = None,
    flow: Annotated[
        str | None,
        typer.Option("--flow", help="Take presets from this flow (default: the first with it)."),
    ] = None,
    node: Annotated[
        str | None,
        typer.Option("--node", help="The flow's node to run, where several run the stage."),
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--plan", help="Print what would run and what is cached; run nothing.")
    ] = False,
    verbose: VerboseOpt = False,
    repair: RepairOpt = False,
    force_resources: ForceResourcesOpt = False,
) -> None:
    """Run one stage (and whatever it needs upstream) with its flow's preset."""
    try:
        from gameforge.flows.specs import resolve_stage

        target = resolve_stage(stage, flow, node)
    except user_errors() as exc:
        fail(str(exc))
    spec, chosen = target.flow, target.node.name
    hints = []
    if target.other_flows:
        hints.append(f"also in {', '.join(target.other_flows)}: --flow")
    if target.other_nodes:
        hints.append(f"other nodes {', '.join(target.other_nodes)}: --node")
    suffix = f" ({'; '.join(hints)})" if hints else ""
    say(f"stage {stage}: flow {spec.name}, node {chosen}{suffix}")
    request = RunRequest(
        flow=spec.name,
        preset=preset,
        overrides=tuple(overrides or ()),
        store_root=store,
        dask_address=dask_address,
        force=(chosen,) if force else (),
        only=tuple(spec.upstream(chosen)),
        dashboard=dashboard,
        stored_inputs=tuple(stored_inputs or ()),
        repair=repair,
        force_resources=force_resources,
    )
    run_request(request, dry_run, verbose)


@stage_app.command("list")
def stage_list_cmd(
    as_json: Annotated[bool, typer.Option("--json", help="JSON array on stdout.")] = False,
) -> None:
    """List stages with their versions, inputs and parameters."""
    from gameforge.stages.registry import all_stages

    rows: list[dict[str, Any]] = []
    for stage in all_stages().values():
        fields = stage.params_model.model_fields
        rows.append(
            {
                "stage": stage.name,
                "version": stage.version,
                "inputs": dict(stage.inputs),
                "parameters": [_param_default(k, v) for k, v in fields.items()],
                "description": stage.description,
            }
        )
    if as_json:
        sys.stdout.write(json.dumps(rows, indent=2) + "\n")
        return
    # a block per stage, its lines wrapped by the terminal: no value is ever cut
    for row in rows:
        say(f"{row['stage']} v{row['version']}: {row['description']}")
        inputs = ", ".join(f"{k} <- {v}" for k, v in row["inputs"].items()) or "none"
        say(f"  inputs: {inputs}")
        say(f"  parameters (defaults): {', '.join(row['parameters']) or 'none'}")


@stage_app.command("show")
def stage_show_cmd(
    name: Annotated[str, typer.Argument(help="Stage name (see `gameforge stage list`).")],
) -> None:
    """Show one stage: its version, description, inputs, and every parameter with its type,
    default, whether it is execution-only (not in the key) and what it means."""
    from gameforge.stages.registry import get_stage, stage_inputs, stage_parameters

    try:
        shown = get_stage(name)
    except user_errors() as exc:
        fail(str(exc))
    say(f"{shown.name}  version {shown.version}")
    if shown.description:
        say(shown.description)
    say("")
    say("inputs:" if shown.inputs else "inputs: none")
    for entry in stage_inputs(shown):
        marks = [m for m, on in (("optional", entry.optional), ("one or more", entry.many)) if on]
        listed = f"{entry.name}.0, {entry.name}.1, ..." if entry.many else entry.name
        suffix = f" ({', '.join(marks)})" if marks else ""
        say(f"  {listed} <- {' | '.join(entry.upstream)}{suffix}")
    say("")
    params = stage_parameters(shown)
    if not params:
        say("parameters: none")
        return
    # every cell wraps (or folds a word longer than its column) instead of being cut
    table = Table(
        title="parameters (exec: execution-only, not in the key)",
        title_justify="left",
        box=box.SIMPLE_HEAD,
        show_lines=True,
        pad_edge=False,
    )
    table.add_column("name", overflow="fold", no_wrap=True)
    # the terminal's width now (the shared console fixes COLUMNS when it is created)
    view = Console(highlight=False)
    # type and default wrap early, so at 80 columns the description keeps most of the width
    narrow = max(14, (view.width - 40) // 4)
    table.add_column("type", overflow="fold", max_width=narrow)
    table.add_column("default", overflow="fold", max_width=narrow)
    table.add_column("exec", overflow="fold")
    table.add_column("description", overflow="fold")
    for row in params:
        table.add_row(
            escape(row.name),
            escape(row.type),
            escape(row.default),
            "yes" if row.execution_only else "",
            escape(row.description),
        )
    view.print(table)


def _param_default(name: str, info: Any) -> str:
    """'name=default' for `stage list`, or 'name (required)' for a parameter without one."""
    if info.is_required():
        return f"{name} (required)"
    return f"{name}={info.get_default(call_default_factory=True)!r}"
