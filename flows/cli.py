"""The `gameforge` command line.

Commands that only read the store or a game definition import neither Prefect nor Dask, so they
answer quickly; `run` and `stage run` go through Prefect.
"""

from __future__ import annotations

import functools
import json
import os
import sys
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import ProgressColumn, Task
from rich.table import Table
from rich.text import Text

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
    help=__doc__.splitlines()[0],
)
artifacts_app = typer.Typer(no_args_is_help=True, help="Inspect and maintain the artifact store.")
stage_app = typer.Typer(no_args_is_help=True, help="Run or list single stages.")
game_app = typer.Typer(no_args_is_help=True, help="Poker game definitions.")
server_app = typer.Typer(no_args_is_help=True, help="A long-lived local Prefect server.")
strategy_app = typer.Typer(no_args_is_help=True, help="Query solved strategies (cfr artifacts).")
runs_app = typer.Typer(no_args_is_help=True, help="Past runs recorded in the store.")
app.add_typer(artifacts_app, name="artifacts")
app.add_typer(stage_app, name="stage")
app.add_typer(game_app, name="game")
app.add_typer(server_app, name="server")
app.add_typer(strategy_app, name="strategy")
app.add_typer(runs_app, name="runs")

console = Console()
err_console = Console(stderr=True)

StoreOpt = Annotated[
    str,
    typer.Option(
        "--store",
        envvar="GAMEFORGE_STORE",
        help="Artifact store: a folder, or an object store, s3://bucket/prefix.",
    ),
]
PresetOpt = Annotated[str, typer.Option("--preset", "-p", help="tiny, small or paper.")]
SetOpt = Annotated[
    list[str] | None,
    typer.Option("--set", help="Override a parameter: name=value or stage.name=value."),
]
DaskOpt = Annotated[
    str | None,
    typer.Option(
        "--dask-address",
        envvar="GAMEFORGE_DASK_ADDRESS",
        help="Scheduler of an existing Dask cluster (tls://host:8786, or tcp:// on a trusted "
        "network); 'local' runs in-process. Default: a local threaded cluster.",
    ),
]
InputOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--input",
        help="Feed a node's optional input from the store: node.input=KEY (a key prefix is "
        "enough), e.g. cfr.parent=KEY to continue an earlier solve.",
    ),
]
DashboardOpt = Annotated[
    bool,
    typer.Option(
        "--dashboard",
        envvar="GAMEFORGE_DASHBOARD",
        help="Serve Dask's dashboard on 127.0.0.1 at a free port and print its link.",
    ),
]


def _fail(message: str) -> NoReturn:
    err_console.print(f"[bold red]error:[/] {escape(message)}", highlight=False, soft_wrap=True)
    raise typer.Exit(2)


def _say(text: str) -> None:
    """Print one plain line: no rich markup or highlighting, never cut at the terminal's width."""
    console.print(text, highlight=False, markup=False, soft_wrap=True)


def _human(n: int) -> str:
    """Bytes as 12.3 GB (the resource plan's formatting)."""
    from gameforge.stages.resources import human

    return human(n)


def _user_errors() -> tuple[type[Exception], ...]:  # lazy: the imports are slow
    from gameforge.artifacts.store import StoreError
    from gameforge.engines.poker.acpc import GameDefError
    from gameforge.flows.runtime import ClusterError
    from gameforge.stages.base import StageError

    return (StoreError, StageError, GameDefError, ClusterError, FileNotFoundError)


class _RateColumn(ProgressColumn):
    """Items per second (per minute when slower than one a second)."""

    max_refresh = 0.5

    def render(self, task: Task) -> Text:
        """The bar's rate so far."""
        speed = task.finished_speed or task.speed
        if not speed:
            return Text("-/s", style="progress.data.speed")
        text = f"{speed:,.1f}/s" if speed >= 1 else f"{60 * speed:,.1f}/min"
        return Text(text, style="progress.data.speed")


class PlainProgress:
    """Progress as plain lines every few seconds, for output that is not a terminal (CI, nohup)."""

    def __init__(self, every_s: float = 10.0) -> None:
        from gameforge.stages.progress import LogProgress

        self.lines = LogProgress(self.echo, every_s)

    def __enter__(self) -> PlainProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def start(self, desc: str, total: int) -> Any:
        """A bar that prints a line now and then, with its rate and ETA."""
        return self.lines.start(desc, total)

    def echo(self, message: str) -> None:
        """Print a log line."""
        _say(message)


class RichProgress:
    """Progress bars on the terminal (stages report through stages.progress.Progress)."""

    def __init__(self) -> None:
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self.bars = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            _RateColumn(),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            console=console,
            transient=False,
        )

    def __enter__(self) -> RichProgress:
        self.bars.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.bars.stop()

    def start(self, desc: str, total: int) -> Any:
        """Add a bar."""
        task_id = self.bars.add_task(desc, total=total)
        bars = self.bars

        class _Bar:
            def advance(self, n: int = 1) -> None:
                bars.advance(task_id, n)

            def close(self) -> None:
                bars.refresh()

            def note(self, text: str) -> None:
                bars.update(task_id, description=f"{desc} {text}")

        return _Bar()

    def echo(self, message: str) -> None:
        """Print a log line above the bars."""
        self.bars.console.print(message, highlight=False, markup=False, soft_wrap=True)


VerboseOpt = Annotated[
    bool,
    typer.Option(
        "--verbose",
        "-v",
        envvar="GAMEFORGE_VERBOSE",
        help="Print a failure's full traceback, and library errors, on the terminal too.",
    ),
]
ForceResourcesOpt = Annotated[
    bool,
    typer.Option(
        "--force-resources",
        help="Run even if the estimated memory or stored bytes exceed what is free.",
    ),
]
RepairOpt = Annotated[
    bool,
    typer.Option(
        "--repair",
        help="Check the checksums of the stored artifacts this run reuses; move corrupted ones "
        "to the store's trash and rebuild them.",
    ),
]

# Set by `main()`: a failed or interrupted run ends its process at once (worker threads deep in
# a kernel cannot be joined). Left False under tests that call the app in-process.
_END_PROCESS = False


_ENDING = False  # set once the main thread stops children itself: the stop timer then waits


def _end_run(code: int) -> NoReturn:
    """Stop child processes, flush, and end the run with exit status `code`."""
    import os

    from gameforge.flows.runlog import stop_descendants

    global _ENDING
    _ENDING = True
    stop_descendants()
    if _END_PROCESS:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    raise typer.Exit(code)


def _hard_stop(signum: int) -> None:
    """A stop that did not unwind in time (or a second signal): end the process now."""
    import os

    from gameforge.flows.runlog import stop_descendants

    if not _END_PROCESS or _ENDING:
        return  # the main thread is stopping the children within its own bounded time
    stop_descendants(grace_s=1.0)
    sys.stderr.write(f"error: stopped by {signal_name(signum)}; run the same command to resume\n")
    sys.stderr.flush()
    os._exit(128 + signum)


def signal_name(signum: int) -> str:
    """SIGTERM for 15, and so on."""
    import signal

    return signal.Signals(signum).name


def _run(
    flow: str,
    preset: str,
    overrides: list[str] | None,
    store: str,
    dask_address: str | None,
    force: list[str],
    only: list[str] | None = None,
    parallel_nodes: int = 1,
    dashboard: bool = False,
    stored_inputs: list[str] | None = None,
    dry_run: bool = False,
    verbose: bool = False,
    repair: bool = False,
    force_resources: bool = False,
) -> None:
    import time

    t_start = time.monotonic()
    if dry_run:
        _print_plan(flow, preset, overrides, store, force, only, stored_inputs, parallel_nodes)
        return
    from gameforge.flows.prefect_flow import run_flow
    from gameforge.flows.runlog import Interrupted, RunLog, stop_on_signals
    from gameforge.flows.runtime import STARTUP_TIMEOUT, import_run_libraries
    from gameforge.stages.runner import failed_at

    try:
        from gameforge.artifacts.store import ArtifactStore
        from gameforge.flows.pipeline import plan, start_record
        from gameforge.flows.specs import get_flow
        from gameforge.flows.specs import stored_inputs as parse_stored

        spec = get_flow(flow)
        params = spec.resolve(preset, overrides)  # bad input is refused before the store is touched
        stored = parse_stored(spec, stored_inputs or [])
        artifacts = ArtifactStore(store)
        steps = plan(spec, params, artifacts, only, set(force), stored)
        if not force_resources:
            _check_resources(steps, store, parallel_nodes)
        extra = {"stored_inputs": list(stored_inputs)} if stored_inputs else {}
        command = "gameforge " + " ".join(sys.argv[1:])
        ledger, record = start_record(spec, preset, overrides, artifacts, steps, command, extra)
        if not repair and all(node["planned"] == "cached" for node in record.nodes.values()):
            # nothing to compute: no flow run, no cluster (a run record all the same)
            done = {
                n: {"key": v["key"], "cached": True, "seconds": 0.0}
                for n, v in record.nodes.items()
            }
            ledger.finish(record, "completed", nodes=done)
            _print_results(flow, preset, done, time.monotonic() - t_start)
            _say(f"every stage cached: no Prefect flow run started (run {record.run_id})")
            return
        api = _temporary_api()
        import_run_libraries()  # Prefect and Dask set up their log handlers on import
    except _user_errors() as exc:
        _fail(str(exc))
    t0 = time.monotonic()
    runlog = RunLog(store, flow, verbose)
    with runlog:
        runlog.write("gameforge " + " ".join(sys.argv[1:]))
        try:
            with (
                stop_on_signals(on_timeout=_hard_stop),
                RichProgress() if console.is_terminal else PlainProgress() as progress,
            ):

                def echo(message: str) -> None:
                    progress.echo(message)
                    runlog.write(message)

                def run_once() -> dict[str, dict]:
                    if api is not None:
                        api.wait(float(os.environ[STARTUP_TIMEOUT]))
                    return run_flow(
                        flow,
                        preset,
                        overrides,
                        store_root=str(store),
                        dask_address=dask_address,
                        force=force,
                        only=only,
                        progress=progress,
                        echo=echo,
                        parallel_nodes=parallel_nodes,
                        dashboard=dashboard,
                        stored_inputs=stored_inputs,
                        record=(ledger, record),
                    )

                if not repair:
                    results = run_once()
                else:
                    from gameforge.flows.repair import Repair

                    # every artifact the run would use or make, stored inputs included
                    keys = [step.key for step in steps]
                    keys += [
                        artifacts.resolve(k) for node in stored.values() for k in node.values()
                    ]
                    keys = list(dict.fromkeys(keys))
                    mending = Repair(artifacts, within=set(keys))
                    mending.check(keys, echo)
                    results = run_once()
                    while mending.changed_dependents(echo):
                        results = run_once()
        except _user_errors() as exc:
            if failed_at(exc) is not None:  # a stage met a corrupted input: a stage failure
                _stage_failed(exc, runlog, verbose, ledger, record)
            runlog.exception(exc)
            runlog.close()
            ledger.finish(record, "failed", error=str(exc))
            _fail(_with_repair_hint(str(exc), exc))
        except Interrupted as exc:
            runlog.write(f"stopped by {exc.args[0]}")
            ledger.finish(record, "stopped", error=f"stopped by {exc.args[0]}")
            err_console.print(
                f"[bold red]error:[/] stopped by {exc.args[0]}; finished chunks are kept: run the "
                "same command again to resume",
                highlight=False,
            )
            _end_run(128 + exc.signum)
        except KeyboardInterrupt:
            runlog.write("stopped by SIGINT")
            ledger.finish(record, "stopped", error="stopped by SIGINT")
            err_console.print("[bold red]error:[/] interrupted; run the same command to resume")
            _end_run(130)
        except Exception as exc:
            _stage_failed(exc, runlog, verbose, ledger, record)
        ledger.finish(record, "completed", nodes=results)
    _print_results(flow, preset, results, time.monotonic() - t0)


def _print_results(flow: str, preset: str, results: dict[str, dict], seconds: float) -> None:
    """The table a run ends with: each node's key, cached or computed, and its seconds."""
    table = Table(title=f"{flow} \\[{preset}] in {seconds:.1f} s")
    for column in ("stage", "key", "status", "seconds"):
        table.add_column(column)
    for stage, result in results.items():
        status = "cached" if result["cached"] else "computed"
        table.add_row(escape(stage), result["key"], status, f"{result['seconds']:.1f}")
    console.print(table)


def _stage_failed(
    exc: BaseException, runlog: Any, verbose: bool, ledger: Any, record: Any
) -> NoReturn:
    """End a run that failed inside a stage: one line, the log's path, exit status 1."""
    trace = runlog.exception(exc)
    ledger.finish(record, "failed", error=_describe(exc))
    if verbose:
        err_console.print(trace, markup=False, highlight=False)
    err_console.print(
        f"[bold red]error:[/] {escape(_with_repair_hint(_describe(exc), exc))}",
        highlight=False,
        soft_wrap=True,
    )
    err_console.print(f"full traceback: {runlog.path}", highlight=False, soft_wrap=True)
    _end_run(1)


def _temporary_api() -> Any:
    """This run's own Prefect API when no server is running (None when one is): started now,
    before Prefect is imported, so that it boots while the run sets up."""
    from gameforge.flows.runtime import prefect_defaults
    from gameforge.flows.server import TemporaryApi

    prefect_defaults()
    if os.environ.get("PREFECT_API_URL") or "prefect" in sys.modules:
        return None  # a server; or Prefect already read its settings (the CLI called in-process)
    return TemporaryApi()


def _check_resources(steps: list[Any], store: str, parallel_nodes: int) -> None:
    """Refuse, in one line, a run whose estimated memory or stored bytes do not fit."""
    from gameforge.flows.pipeline import resource_plan, resource_refusal
    from gameforge.stages.resources import available_memory, free_disk

    refusal = resource_refusal(
        resource_plan(steps, parallel_nodes), available_memory(), free_disk(store)
    )
    if refusal:
        _fail(f"{refusal}: lower the parameters, or --force-resources to run anyway")


def _describe(exc: BaseException) -> str:
    """One line for an unexpected failure: a stage's own line, else `Type: message`."""
    from gameforge.flows.runlog import one_line
    from gameforge.stages.runner import failed_at

    where = failed_at(exc)
    return where.line(exc) if where is not None else one_line(exc)


def _with_repair_hint(line: str, exc: BaseException) -> str:
    """Add how to recover when the failure met a corrupted artifact."""
    from gameforge.artifacts.store import CorruptedArtifact
    from gameforge.stages.runner import failed_at

    where = failed_at(exc)
    corrupted = isinstance(exc, CorruptedArtifact) or (where is not None and where.corrupted)
    if not corrupted:
        return line
    return line + "; rerun with --repair to move it to the trash and rebuild it"


def _print_plan(
    flow: str,
    preset: str,
    overrides: list[str] | None,
    store: str,
    force: list[str],
    only: list[str] | None,
    stored_inputs: list[str] | None,
    parallel_nodes: int = 1,
) -> None:
    """What a run would do, node by node (the `--plan` dry run); computes and writes nothing."""
    from gameforge.artifacts.store import ArtifactStore
    from gameforge.flows.pipeline import plan, resource_plan, resource_refusal
    from gameforge.flows.specs import get_flow
    from gameforge.flows.specs import stored_inputs as parse_stored
    from gameforge.stages.resources import available_memory, free_disk, human

    try:
        spec = get_flow(flow)
        params = spec.resolve(preset, overrides)
        stored = parse_stored(spec, stored_inputs or [])
        steps = plan(spec, params, ArtifactStore(store), only, set(force), stored)
    except _user_errors() as exc:
        _fail(str(exc))
    console.print(f"plan: {flow} at preset {preset}, store {store}", highlight=False)
    for i, step in enumerate(steps, 1):
        _say(f"{i:>3}. {step.label} ({step.stage} v{step.version}) {step.key}: {step.status}")
        content = ", ".join(f"{k}={v!r}" for k, v in step.params.items())
        _say(f"       parameters: {content or '-'}")
        if step.execution:
            execution = ", ".join(f"{k}={v!r}" for k, v in step.execution.items())
            _say(f"       execution: {execution}")
        if step.footprint is not None:
            largest = ", ".join(f"{n} {human(b)}" for n, b in step.footprint.largest())
            _say(
                f"       resources: memory ~{human(step.footprint.memory)} ({largest or 'small'}"
                f"; working {human(step.footprint.working)}), stores up to "
                f"{human(step.footprint.stored_bytes)}"
            )
    counts = {s: sum(step.status == s for step in steps) for s in ("cached", "resumes")}
    console.print(
        f"{len(steps)} stages: {counts['cached']} cached, {counts['resumes']} resume, "
        f"{len(steps) - counts['cached'] - counts['resumes']} to compute",
        highlight=False,
    )
    needs = resource_plan(steps, parallel_nodes)
    memory_free, disk_free = available_memory(), free_disk(store)
    _say(
        f"resources: memory ~{human(needs.memory)} at the peak"
        + (f" ({needs.hungriest.label})" if needs.hungriest else "")
        + f", {human(memory_free) if memory_free is not None else 'unknown'} available; "
        f"stores up to {human(needs.stored)}, "
        + (f"{human(disk_free)} free" if disk_free is not None else "on an object store")
        + (f"; not estimated: {', '.join(needs.unestimated)}" if needs.unestimated else "")
    )
    refusal = resource_refusal(needs, memory_free, disk_free)
    if refusal:
        _say(f"a run would be refused: {refusal}")


@app.command("flows")
def flows_cmd() -> None:
    """List flows, their stages and presets."""
    from gameforge.flows.specs import FLOWS

    table = Table()
    table.add_column("flow", no_wrap=True)  # a name is never cut; the stage chain wraps
    table.add_column("stages", overflow="fold")  # a stage name too long for a line folds
    table.add_column("presets", max_width=12)
    table.add_column("description")
    for spec in FLOWS.values():
        stages = " -> ".join(n.name for n in spec.nodes)
        table.add_row(spec.name, stages, ", ".join(spec.presets), spec.description)
    console.print(table)


@app.command("run")
def run_cmd(
    flow: Annotated[str, typer.Argument(help="Flow name (see `gameforge flows`).")],
    preset: PresetOpt = "small",
    overrides: SetOpt = None,
    store: StoreOpt = "store",
    dask_address: DaskOpt = None,
    force: Annotated[
        list[str] | None, typer.Option("--force", help="Recompute this stage (repeatable).")
    ] = None,
    parallel_nodes: Annotated[
        int,
        typer.Option(
            "--parallel-nodes",
            min=1,
            help="Run up to N independent stages at once (e.g. a flow's learners).",
        ),
    ] = 1,
    dashboard: DashboardOpt = False,
    stored_inputs: InputOpt = None,
    with_nodes: Annotated[
        list[str] | None,
        typer.Option(
            "--with",
            help="Also run this optional node (repeatable), e.g. best-response in lhe-solve.",
        ),
    ] = None,
    dry_run: Annotated[
        bool,
        typer.Option(
            "--plan",
            help="Print each node's parameters, key and whether it is cached; run nothing.",
        ),
    ] = False,
    verbose: VerboseOpt = False,
    repair: RepairOpt = False,
    force_resources: ForceResourcesOpt = False,
) -> None:
    """Run a flow at a preset: every stage, reusing cached artifacts."""
    forced = force or []
    only = None
    if with_nodes:
        try:
            from gameforge.flows.specs import get_flow

            only = get_flow(flow).default_nodes(with_nodes)
        except _user_errors() as exc:
            _fail(str(exc))
    _run(flow, preset, overrides, store, dask_address, forced, only, parallel_nodes, dashboard,
         stored_inputs, dry_run, verbose, repair, force_resources)  # fmt: skip


@stage_app.command("run")
def stage_run_cmd(
    stage: Annotated[str, typer.Argument(help="Stage name (see `gameforge stage list`).")],
    preset: PresetOpt = "small",
    overrides: SetOpt = None,
    store: StoreOpt = "store",
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
    except _user_errors() as exc:
        _fail(str(exc))
    spec, chosen = target.flow, target.node.name
    hints = []
    if target.other_flows:
        hints.append(f"also in {', '.join(target.other_flows)}: --flow")
    if target.other_nodes:
        hints.append(f"other nodes {', '.join(target.other_nodes)}: --node")
    suffix = f" ({'; '.join(hints)})" if hints else ""
    _say(f"stage {stage}: flow {spec.name}, node {chosen}{suffix}")
    only = spec.upstream(chosen)
    forced = [chosen] if force else []
    _run(spec.name, preset, overrides, store, dask_address, forced, only, dashboard=dashboard,
         stored_inputs=stored_inputs, dry_run=dry_run, verbose=verbose, repair=repair,
         force_resources=force_resources)  # fmt: skip


@stage_app.command("list")
def stage_list_cmd() -> None:
    """List stages with their versions, inputs and parameters."""
    from gameforge.stages.registry import all_stages

    table = Table()
    for column in ("stage", "version", "inputs", "parameters (defaults)", "description"):
        table.add_column(column)
    for stage in all_stages().values():
        fields = stage.params_model.model_fields
        params = ", ".join(_param_default(k, v) for k, v in fields.items())
        inputs = ", ".join(f"{k}<-{v}" for k, v in stage.inputs.items()) or "-"
        table.add_row(
            stage.name, str(stage.version), inputs, escape(params), escape(stage.description)
        )
    console.print(table)


def _param_default(name: str, info: Any) -> str:
    """'name=default' for `stage list`, or 'name (required)' for a parameter without one."""
    if info.is_required():
        return f"{name} (required)"
    return f"{name}={info.get_default(call_default_factory=True)!r}"


@artifacts_app.command("ls")
def artifacts_ls(
    store: StoreOpt = "store",
    as_json: Annotated[bool, typer.Option("--json", help="JSON array on stdout.")] = False,
) -> None:
    """List artifacts by game: key, the parameters that tell it from its siblings, status
    (complete or partial), size, and when built (on a terminal wide enough)."""
    from rich import box

    from gameforge.artifacts.store import ArtifactStore
    from gameforge.flows.listing import describe
    from gameforge.stages.reporting import inline

    artifacts = ArtifactStore(store)
    infos = artifacts.entries()
    described = describe(artifacts, infos)
    if as_json:
        rows = [{**i.as_dict(), **d} for i, d in zip(infos, described, strict=True)]
        sys.stdout.write(json.dumps(rows, indent=2) + "\n")
        return
    table = Table(
        title=f"store {store}",
        box=box.SIMPLE_HEAD,
        show_edge=False,
        pad_edge=False,
        collapse_padding=True,  # one space between columns: 80 columns hold the key and status
    )
    table.add_column("game / key", no_wrap=True)
    table.add_column("parameters", overflow="fold")
    table.add_column("status", no_wrap=True)
    table.add_column("size", no_wrap=True, justify="right")
    wide = console.width >= 110  # the build time fits beside the rest
    if wide:
        table.add_column("created", no_wrap=True)
    order = sorted(range(len(infos)), key=lambda n: (described[n]["game"] or "~", infos[n].key))
    game: Any = ()  # no group yet
    for n in order:
        info, about = infos[n], described[n]
        if about["game"] != game:
            game = about["game"]
            table.add_row(Text(game or "(unknown: partial builds)", style="bold"))
        labels = " ".join(f"{k}={inline(v)}" for k, v in about["labels"].items()) or "-"
        cells = [info.key, labels, info.status, _human(info.bytes)]
        if wide:
            cells.append((info.created or "-").replace("+00:00", "Z"))
        style = None if info.status == "complete" else "yellow"
        table.add_row(*(Text(c) for c in cells), style=style)
    console.print(table)


@artifacts_app.command("show")
def artifacts_show(
    key: Annotated[str, typer.Argument(help="Artifact key (a unique prefix will do).")],
    store: StoreOpt = "store",
    as_json: Annotated[bool, typer.Option("--json", help="Raw metadata as JSON.")] = False,
) -> None:
    """Explain an artifact: its stage, parameters, inputs, arrays and lineage."""
    from gameforge.artifacts.store import ArtifactStore, StoreError, dumps
    from gameforge.stages.reporting import summary_lines

    artifacts = ArtifactStore(store)
    try:
        meta = artifacts.show(key)
    except StoreError as exc:
        _fail(str(exc))
    if as_json:
        sys.stdout.write(dumps(meta) + "\n")
        return
    console.print(f"[bold]{meta['key']}[/]  stage {meta['stage']} v{meta['version']}")
    for line in _provenance_lines(meta, artifacts.trust_record(meta["key"])):
        _say(line)
    console.print(f"  path {meta['path']} ({_human(meta['bytes'])})")
    console.print("  parameters:")
    for name, value in meta["params"].items():
        console.print(f"    {name} = {value!r}", highlight=False)
    console.print("  inputs:" + ("" if meta["inputs"] else " none"))
    for name, upstream in meta["inputs"].items():
        console.print(f"    {name} <- {upstream}")
    console.print("  arrays:")
    for name, info in meta["arrays"].items():
        shape = "x".join(map(str, info["shape"]))
        unchecked = (
            ""
            if info.get("chunk_checksums")
            else " (chunks unchecked: written before chunk checksums)"
        )
        console.print(
            f"    {name}: {info['dtype']} [{shape}] checksum {info['checksum']}{unchecked}"
        )
    if meta.get("summary"):
        console.print("  summary:")
        for line in summary_lines(meta["summary"], "    "):
            _say(line)
    if meta["stage"] == "cfr":
        from gameforge.stages.poker.best_response import measured_exploitability
        from gameforge.stages.poker.lbr import lower_bound_text

        known = measured_exploitability(artifacts, meta["dependents"])
        if "exact_key" in known:
            console.print(
                f"  real-game exploitability: {known['exact_mbb_per_game']:.3f} mbb/g (exact, "
                f"{known['exact_key']})",
                highlight=False,
            )
        for lbr_key, mean, lower, deals in known.get("lbr", []):
            console.print(
                f"  LBR ({lbr_key}, {deals:,} deals x 2 seats): {lower_bound_text(mean, lower)}",
                highlight=False,
                markup=False,
            )
        if not known:
            console.print(
                f"  real-game exploitability: not computed (gameforge strategy br {meta['key']})",
                highlight=False,
            )
    if meta["dependents"]:
        console.print("  used by: " + ", ".join(meta["dependents"]))


def _built_line(provenance: dict[str, Any]) -> str:
    return (
        f"built {provenance.get('started')} -> {provenance.get('finished')} "
        f"(wall {provenance.get('wall_s')} s, CPU {provenance.get('cpu_s')} s) on "
        f"{provenance.get('host')}, gameforge {provenance.get('gameforge_version')}, "
        f"code {provenance.get('code_version')}"
    )


def _provenance_lines(meta: dict[str, Any], trust: dict[str, Any] | None) -> list[str]:
    """Where an artifact came from (built here or imported) and whether it is trusted."""
    provenance = meta.get("provenance")
    if not provenance:
        return [
            f"  built {meta.get('created')} -> {meta.get('finished')} ({meta.get('duration_s')} s) "
            f"on {meta.get('host')}, code {meta.get('code_version', '?')} "
            "(before provenance was recorded)"
        ]
    if provenance.get("kind") != "imported":
        lines = ["  " + _built_line(provenance)]
    else:
        exported = provenance.get("exported")
        source = _built_line(exported) if exported else "made before provenance was recorded"
        if exported and exported.get("kind") == "imported":
            source = f"itself imported from {exported.get('file')} ({exported.get('sha256')})"
        lines = [
            f"  imported {provenance.get('imported')} on {provenance.get('host')} from "
            f"{provenance.get('file')} (sha256 {provenance.get('sha256')})",
            f"    the exporter's copy: {source}",
        ]
        if trust is None:
            key = meta["key"]
            lines.append(
                f"  trust: none yet, so no run uses it (`gameforge artifacts trust {key}`, or "
                f"`gameforge artifacts check {key} --recompute`)"
            )
    if trust is not None:
        how = "vouched for" if trust.get("how") == "vouched" else "verified by recomputing"
        detail = ""
        if trust.get("how") == "recomputed":
            compared = trust.get("chunks") or {}
            detail = "; ".join(
                f"{name} chunks {', '.join(map(str, ids))}" for name, ids in compared.items()
            ) or ("whole: " + ", ".join(trust.get("arrays") or []))
            detail = f" ({detail}" + (f", seed {trust['seed']})" if trust.get("seed") else ")")
        lines.append(f"  trust: {how} {trust.get('when')} on {trust.get('host')}{detail}")
    return lines


@artifacts_app.command("plot")
def artifacts_plot(
    key: Annotated[
        str | None, typer.Argument(help="Artifact key (a unique prefix will do); or --all.")
    ] = None,
    store: StoreOpt = "store",
    out: Annotated[
        Path | None,
        typer.Option("--out", help="PNG path (default KEY.png); with --all a folder (gallery)."),
    ] = None,
    hand: Annotated[
        str | None,
        typer.Option(
            "--hand",
            help="Hole cards then board in the artifact's deck, e.g. Jc9h/4d5d9d (hsd, ochs; "
            "default: that hand, the paper's, moved into a short deck: 9c7h/2d3d7d with 8 ranks).",
        ),
    ] = None,
    all_: Annotated[
        bool,
        typer.Option("--all", help="Every figure of the store, and an index.html showing them."),
    ] = False,
) -> None:
    """Write a PNG figure of an artifact, or with --all every figure of the store and a page."""
    from gameforge.artifacts.store import ArtifactStore
    from gameforge.flows.plots import plot

    if key is None and not all_:
        _fail("give an artifact KEY, or --all for every figure of the store")
    if key is not None and all_:
        _fail("give an artifact KEY or --all (every figure of the store), not both")
    if all_:
        if hand is not None:
            _fail("--hand picks one artifact's hand: give it with KEY, not with --all")
        _plot_gallery(ArtifactStore(store), out or Path("gallery"))
        return
    assert key is not None
    try:
        artifact = ArtifactStore(store).open(key)
        target = out or Path(f"{artifact.key}.png")
        description = plot(artifact, target, hand)
    except _user_errors() + (ValueError,) as exc:
        _fail(str(exc))
    console.print(f"wrote {target}: {description}", markup=False, highlight=False)


def _plot_gallery(store: Any, out: Path) -> None:
    """`artifacts plot --all`: every figure into `out`, one line each, then the page."""
    from gameforge.flows.plots.gallery import INDEX, GalleryEntry, write_gallery

    def report(entry: GalleryEntry) -> None:
        if entry.error is not None:
            _say(f"failed {entry.key}: {entry.error}")
        elif entry.image is not None:
            _say(f"wrote {out / entry.image}: {entry.description}")

    try:
        entries = write_gallery(store, out, on_entry=report, workers=os.cpu_count() or 1)
    except _user_errors() + (OSError,) as exc:
        _fail(str(exc))
    failed = sum(entry.error is not None for entry in entries)
    drawn = sum(entry.image is not None for entry in entries)
    _say(
        f"wrote {out / INDEX}: {drawn} figures, {failed} failed, "
        f"{len(entries) - drawn - failed} artifacts without a figure"
    )


@artifacts_app.command("export")
def artifacts_export(
    keys: Annotated[list[str], typer.Argument(help="Artifact keys (unique prefixes will do).")],
    out: Annotated[Path, typer.Option("--out", help="Folder for the export files.")],
    store: StoreOpt = "store",
    with_inputs: Annotated[
        bool, typer.Option("--with-inputs", help="Also export every upstream artifact.")
    ] = False,
) -> None:
    """Write self-describing files (one tar per artifact) that `import` reads."""
    from gameforge.artifacts.store import ArtifactStore
    from gameforge.artifacts.transfer import export_artifacts

    try:
        written = export_artifacts(ArtifactStore(store), keys, out, with_inputs)
    except _user_errors() as exc:
        _fail(str(exc))
    for path in written:
        console.print(f"wrote {path} ({_human(path.stat().st_size)})", highlight=False)


@artifacts_app.command("import")
def artifacts_import(
    files: Annotated[list[Path], typer.Argument(help="Files written by `artifacts export`.")],
    store: StoreOpt = "store",
    trust: Annotated[
        bool,
        typer.Option(
            "--trust",
            help="Vouch for the files' source (one you control): runs use them at once.",
        ),
    ] = False,
) -> None:
    """Import exported artifacts, verifying their keys and checksums first. They stay untrusted,
    used by no run, until `artifacts trust` or `artifacts check --recompute` (or --trust)."""
    from gameforge.artifacts.store import ArtifactStore
    from gameforge.artifacts.transfer import import_artifacts

    try:
        results = import_artifacts(ArtifactStore(store), files, trust=trust)
    except _user_errors() as exc:
        _fail(str(exc))
    for key, status in results:
        console.print(f"{status}: {key}")
    fresh = [key for key, status in results if status == "imported"]
    if fresh and not trust:
        _say(
            f"{len(fresh)} imported untrusted: no run uses them until `gameforge artifacts trust "
            "KEY` (you vouch for the source) or `gameforge artifacts check KEY --recompute`"
        )
    # the imported artifacts count as used until a gc that keeps fewer runs forgets this one
    nodes = {
        key: {"key": key, "cached": status != "imported", "seconds": 0.0} for key, status in results
    }
    _ledger(store).record_done("import", nodes, "gameforge " + " ".join(sys.argv[1:]))


@artifacts_app.command("verify")
def artifacts_verify(
    keys: Annotated[list[str] | None, typer.Argument(help="Keys to check (default: all).")] = None,
    store: StoreOpt = "store",
    recompute: Annotated[
        bool,
        typer.Option(
            "--recompute",
            help="Also recompute a sample of the artifacts built by other code than this.",
        ),
    ] = False,
    sample: Annotated[
        int, typer.Option("--sample", min=1, help="Artifacts per stage to recompute.")
    ] = 1,
) -> None:
    """Re-check every array's checksum; exit 1 naming any corrupted artifact. --recompute also
    rebuilds a sample of the artifacts whose recorded code version is not this one and compares
    them bit for bit: a stage changed without a version bump fails, named."""
    from gameforge.artifacts.store import ArtifactStore

    artifacts = ArtifactStore(store)
    report = artifacts.verify(keys or None)
    bad = {k: v for k, v in report.items() if v}
    for key, problems in report.items():
        if problems:
            console.print(f"[red]corrupted[/] {key}: " + "; ".join(problems), highlight=False)
        else:
            console.print(f"[green]ok[/] {key}")
    console.print(f"{len(report) - len(bad)} ok, {len(bad)} corrupted")
    if bad:
        raise typer.Exit(1)
    if recompute:
        _recompute_other_code(artifacts, list(report), sample)


def _recompute_other_code(artifacts: Any, keys: list[str], per_stage: int) -> None:
    """Recompute checks of up to `per_stage` artifacts of each stage that other code built."""
    from gameforge.stages.runner import code_version

    running = code_version()
    chosen: dict[str, list[str]] = {}
    for key in keys:
        meta = artifacts.open(key).meta
        if meta.get("code_version") != running and artifacts.trusted(key):
            picked = chosen.setdefault(meta["stage"], [])
            if len(picked) < per_stage:
                picked.append(key)
    sampled = [key for picked in chosen.values() for key in picked]
    if not sampled:
        _say(f"every artifact was built by this code ({running}): nothing to recompute")
        return
    _say(f"recomputing {len(sampled)} artifacts built by other code than {running}")
    reports = _recompute_checks(artifacts, sampled, 3, False, None)
    failed = sorted({r.stage for r in reports if not r.passed})
    if failed:
        _fail(
            f"{', '.join(failed)}: output changed at the same stage version (bump the version, "
            "see docs/architecture.md)"
        )
    _say(f"{len(reports)} recomputed, all equal")


@artifacts_app.command("trust")
def artifacts_trust(
    keys: Annotated[list[str], typer.Argument(help="Imported artifacts you vouch for.")],
    store: StoreOpt = "store",
    note: Annotated[str, typer.Option("--note", help="Why, kept in the record.")] = "",
) -> None:
    """Vouch for imported artifacts, so that runs use them; the record says who, when, why."""
    from gameforge.artifacts.store import ArtifactStore

    artifacts = ArtifactStore(store)
    try:
        for key in keys:
            full = artifacts.resolve(key)
            if artifacts.trusted(full) and artifacts.trust_record(full) is None:
                _say(f"{full} was built here: trusted already")
                continue
            artifacts.trust(full, "vouched", **({"note": note} if note else {}))
            _say(f"trusted {full} (vouched for; `artifacts show` lists it)")
    except _user_errors() as exc:
        _fail(str(exc))


@artifacts_app.command("check")
def artifacts_check(
    key: Annotated[str, typer.Argument(help="Artifact key (a unique prefix will do).")],
    recompute: Annotated[
        bool,
        typer.Option("--recompute", help="Rebuild it from its recorded recipe and compare."),
    ] = False,
    chunks: Annotated[
        int, typer.Option("--chunks", min=1, help="Chunks of a chunked stage to recompute.")
    ] = 3,
    whole: Annotated[bool, typer.Option("--all", help="Recompute the whole artifact.")] = False,
    seed: Annotated[
        int | None, typer.Option("--seed", help="Which chunks (default: a fresh seed, printed).")
    ] = None,
    store: StoreOpt = "store",
) -> None:
    """Rebuild an artifact from its recorded stage, parameters and inputs in a scratch area and
    compare it bit for bit: N seeded chunks of a chunked stage, or the whole artifact. A pass
    marks it verified (an import becomes trusted); a difference names the array, chunk and
    index, and exits 1. Runs on this machine; the store is not written but for the record."""
    from gameforge.artifacts.store import ArtifactStore

    if not recompute:
        _fail("check needs --recompute (`gameforge artifacts verify KEY` checks the checksums)")
    artifacts = ArtifactStore(store)
    [report] = _recompute_checks(artifacts, [key], chunks, whole, seed)
    if not report.passed:
        _fail(f"{report.key} is not what its recipe computes ({report.seconds:.1f} s)")


def _recompute_checks(
    artifacts: Any, keys: list[str], chunks: int, whole: bool, seed: int | None
) -> list[Any]:
    """Recompute checks of `keys` on this machine, each reported as it ends; a pass recorded."""
    from gameforge.flows.runtime import dask_executor, import_run_libraries
    from gameforge.stages.recompute import recompute_check
    from gameforge.stages.runner import failed_at

    reports = []
    try:
        import_run_libraries()
        with (
            RichProgress() if console.is_terminal else PlainProgress() as progress,
            dask_executor(None, log=progress.echo) as executor,
        ):
            for key in keys:
                report = recompute_check(
                    artifacts, key, chunks, whole, seed, executor, progress, progress.echo
                )
                _report_check(report)
                if report.passed:
                    artifacts.trust(report.key, "recomputed", **report.as_dict())
                reports.append(report)
    except _user_errors() as exc:
        _fail(str(exc))
    except Exception as exc:
        where = failed_at(exc)
        _fail(where.line(exc) if where is not None else _describe(exc))
    return reports


def _report_check(report: Any) -> None:
    """What a recompute check compared, and its verdict."""
    for name, ids in report.chunks.items():
        _say(
            f"{report.key}: compared {name} chunks {', '.join(map(str, ids))} (seed {report.seed})"
        )
    if report.arrays:
        note = f" ({report.note})" if report.note else ""
        _say(f"{report.key}: compared whole {', '.join(report.arrays)}{note}")
    tol = report.tolerance
    if report.skipped and tol is not None:
        _say(f"{report.key}: not compared, {', '.join(report.skipped)}: {tol.reason}")
    elif tol is not None and tol.rtol is not None:
        _say(f"{report.key}: {tol.arrays or 'all'} within rtol {tol.rtol:g}: {tol.reason}")
    for mismatch in report.mismatches:
        err_console.print(
            f"[bold red]differs:[/] {report.key} {escape(mismatch.line())}",
            highlight=False,
            soft_wrap=True,
        )
    if report.passed:
        _say(f"verified {report.key}: what its recipe computes ({report.seconds:.1f} s); recorded")


@artifacts_app.command("repair")
def artifacts_repair(
    key: Annotated[str, typer.Argument(help="Artifact key (a unique prefix will do).")],
    store: StoreOpt = "store",
    rebuild: Annotated[
        bool, typer.Option("--rebuild", help="Rebuild it even if its checksums match.")
    ] = False,
    dask_address: DaskOpt = None,
) -> None:
    """Check an artifact; if corrupted, move it to the trash and rebuild it (and dependents
    whose input changed) from its recorded stage, parameters and inputs."""
    from gameforge.artifacts.store import ArtifactStore
    from gameforge.flows.repair import rebuild_key
    from gameforge.flows.runtime import dask_executor, import_run_libraries
    from gameforge.stages.runner import failed_at, run_stage

    artifacts = ArtifactStore(store)
    try:
        import_run_libraries()
        with (
            RichProgress() if console.is_terminal else PlainProgress() as progress,
            dask_executor(dask_address, log=progress.echo) as executor,
        ):

            def run(stage: str, params: dict[str, Any], inputs: dict[str, str]) -> str:
                done = run_stage(
                    stage, params, inputs, store=artifacts, executor=executor,
                    progress=progress, log=progress.echo,
                )  # fmt: skip
                return done.key

            rebuilt = rebuild_key(artifacts, key, run, progress.echo, always=rebuild)
    except _user_errors() as exc:
        _fail(str(exc))
    except Exception as exc:
        where = failed_at(exc)
        if where is None:
            raise
        _fail(where.line(exc))
    _say(f"rebuilt {len(rebuilt)}: {', '.join(rebuilt)}" if rebuilt else "intact: nothing to do")


@artifacts_app.command("rm")
def artifacts_rm(
    key: Annotated[str, typer.Argument(help="Artifact key (a unique prefix will do).")],
    store: StoreOpt = "store",
    force: Annotated[bool, typer.Option("--force", help="Remove even if others use it.")] = False,
) -> None:
    """Remove an artifact; refuses while other artifacts depend on it, unless --force."""
    from gameforge.artifacts.store import ArtifactStore, StoreError

    try:
        removed = ArtifactStore(store).remove(key, force=force)
    except StoreError as exc:
        _fail(str(exc))
    console.print(f"removed {removed}")


@artifacts_app.command("gc")
def artifacts_gc(
    store: StoreOpt = "store",
    unreferenced: Annotated[
        bool,
        typer.Option(
            "--unreferenced",
            help="Also remove complete artifacts that no kept run (see `gameforge runs ls`) "
            "names or builds on.",
        ),
    ] = False,
    keep_last: Annotated[
        int | None,
        typer.Option(
            "--keep-last",
            min=0,
            help="With --unreferenced: keep only each flow's N newest runs (older records are "
            "forgotten).",
        ),
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Say what would be removed; remove nothing.")
    ] = False,
) -> None:
    """Remove partial artifacts that no running process is building (and, with --unreferenced,
    artifacts no kept run uses)."""
    from gameforge.artifacts.runs import collect_unreferenced
    from gameforge.artifacts.store import ArtifactStore, StoreError

    if keep_last is not None and not unreferenced:
        _fail("--keep-last goes with --unreferenced")
    artifacts = ArtifactStore(store)
    verb = "would be removed" if dry_run else "removed"
    if not dry_run:
        removed = artifacts.gc()
        for key in removed:
            console.print(f"removed {key}")
        console.print(f"{len(removed)} partial builds and trash entries removed")
    if not unreferenced:
        return
    try:
        done = collect_unreferenced(artifacts, keep_last, dry_run)
    except StoreError as exc:
        _fail(str(exc))
    if dry_run and not _ledger(store).all():
        console.print("no run records in this store: every artifact counts as unreferenced")
    for run_id in done.forgotten:
        console.print(f"{'would forget' if dry_run else 'forgot'} run {run_id}", highlight=False)
    for key, size in done.removed:
        console.print(f"{'would remove' if dry_run else 'removed'} {key} ({_human(size)})",
                      highlight=False)  # fmt: skip
    for key in done.busy:
        console.print(f"left {key}: a running process holds its lock", highlight=False)
    console.print(
        f"{len(done.removed)} unreferenced artifacts {verb}, {_human(done.freed)} "
        f"{'would be ' if dry_run else ''}freed",
        highlight=False,
    )


def _ledger(store: str) -> Any:
    from gameforge.artifacts.runs import RunLedger
    from gameforge.artifacts.store import ArtifactStore

    return RunLedger(ArtifactStore(store))


def _get_run(store: str, run_id: str) -> Any:
    from gameforge.artifacts.store import StoreError

    try:
        return _ledger(store).get(run_id)
    except StoreError as exc:
        _fail(str(exc))


def _seconds_between(start: str, end: str | None) -> str:
    from datetime import datetime

    if not end:
        return "-"
    return f"{(datetime.fromisoformat(end) - datetime.fromisoformat(start)).total_seconds():.0f} s"


@runs_app.command("ls")
def runs_ls(
    store: StoreOpt = "store",
    as_json: Annotated[bool, typer.Option("--json", help="JSON array on stdout.")] = False,
) -> None:
    """List recorded runs, oldest first (the id starts with the UTC start time): flow, preset,
    status, duration, and how many stages it computed and found cached."""
    from rich import box

    records = _ledger(store).all()
    if as_json:
        rows = [{**r.as_dict(), "status": r.shown_status()} for r in records]
        sys.stdout.write(json.dumps(rows, indent=2) + "\n")
        return
    table = Table(title=f"runs in store {store}", box=box.SIMPLE_HEAD, collapse_padding=True)
    for column in ("run", "flow", "preset", "status", "took", "computed/cached"):
        table.add_column(column, no_wrap=column in ("run", "status"))
    for r in records:
        computed = sum(1 for n in r.nodes.values() if n.get("cached") is False)
        cached = sum(1 for n in r.nodes.values() if n.get("cached") is True)
        counts = f"{computed}/{cached}" if r.finished and r.status == "completed" else "-"
        table.add_row(r.run_id, r.flow, r.preset or "-", r.shown_status(),
                      _seconds_between(r.started, r.finished), counts)  # fmt: skip
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
    say = functools.partial(console.print, highlight=False, markup=False)
    say(f"{record.run_id}  flow {record.flow}, preset {record.preset}: {record.shown_status()}")
    say(f"  {record.command}")
    say(f"  started {record.started} on {record.host} (pid {record.pid}), "
        f"finished {record.finished or '-'}")  # fmt: skip
    if record.overrides:
        say("  overrides: " + " ".join(record.overrides))
    if record.error:
        say(f"  error: {record.error}")
    artifacts = ArtifactStore(store)
    say("  nodes:")
    for label, node in record.nodes.items():
        how = ("cached" if node["cached"] else f"computed in {node['seconds']:.1f} s") if (
            "cached" in node) else f"planned ({node.get('planned', '?')})"  # fmt: skip
        gone = "" if artifacts.exists(node["key"]) else "  [not in the store]"
        say(f"    {label}: {node['key']} {how}{gone}")


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


@strategy_app.command("show")
def strategy_show(
    key: Annotated[str, typer.Argument(help="cfr artifact key (a unique prefix will do).")],
    hand: Annotated[
        str,
        typer.Option(
            "--hand", help="Hole cards in the strategy's deck, e.g. AsKd (52 cards), 9c7h (2-9)."
        ),
    ],
    board: Annotated[
        str, typer.Option("--board", help="Board cards so far, e.g. 4d5d9d, 2d3d7d (2-9).")
    ] = "",
    history: Annotated[
        str, typer.Option("--history", help="Betting so far: f/c/r, rounds split by '/'.")
    ] = "",
    store: StoreOpt = "store",
) -> None:
    """Print the average strategy's action probabilities at one decision point."""
    from rich.table import Table

    from gameforge.artifacts.store import ArtifactStore
    from gameforge.stages.poker.strategy import ACTION_NAMES, StrategyView

    try:
        artifacts = ArtifactStore(store)
        view = StrategyView(artifacts, artifacts.open(key))
        decision = view.decision(hand, board, history)
        cards = view.cards_text(hand, board)
    except _user_errors() + (ValueError,) as exc:
        _fail(str(exc))
    console.print(
        f"[bold]{view.artifact.key}[/] ({view.artifact.params['algorithm']}, "
        f"{view.artifact.meta['summary']['iterations']:,} iterations; {view.describe})",
        highlight=False,
    )
    console.print(
        f"player {decision.player} holds {cards}, betting {decision.history or '(start)'!r}: "
        f"round {decision.round}, bucket {decision.bucket}",
        highlight=False,
    )
    table = Table("action", "probability")
    for action, p in decision.probabilities.items():
        table.add_row(ACTION_NAMES[action], f"{p:.4f}")
    console.print(table)


@app.command("play")
def play_cmd(
    strategy: Annotated[str, typer.Option("--strategy", help="cfr artifact key (or prefix).")],
    port: Annotated[int, typer.Option("--port", help="Dealer port.")],
    game: Annotated[
        str | None, typer.Option("--game", help="Game name or .game path (must match).")
    ] = None,
    host: Annotated[str, typer.Option("--host", help="Dealer host.")] = "127.0.0.1",
    seed: Annotated[int, typer.Option("--seed", help="Seed of the action sampling.")] = 0,
    card_names: Annotated[
        str,
        typer.Option(
            "--card-names",
            help="How the dealer names a short deck's cards: bottom (the ACPC dealer as "
            "released: lowest ranks and suits, Leduc 2-4 of c, d), top (the acpc_dealer gem's "
            "fork: highest, Leduc Q-A of h, s) or auto (found from the dealer's cards).",
        ),
    ] = "auto",
    store: StoreOpt = "store",
) -> None:
    """Play a match at an ACPC dealer with a solved strategy (ACPC protocol 2.0.0)."""
    from dataclasses import replace

    from gameforge.artifacts.store import ArtifactStore
    from gameforge.engines.poker.shipped_games import load_game
    from gameforge.flows.acpc_client import (
        CARD_NAME_CHOICES,
        ACPCClient,
        CardNames,
        ProtocolError,
        strategy_chooser,
    )
    from gameforge.stages.poker.strategy import StrategyView

    if card_names not in CARD_NAME_CHOICES:
        _fail(f"--card-names must be one of {', '.join(CARD_NAME_CHOICES)}, not {card_names!r}")
    try:
        artifacts = ArtifactStore(store)
        view = StrategyView(artifacts, artifacts.open(strategy))
        if game is not None and replace(load_game(game), name="") != replace(view.game, name=""):
            _fail(f"strategy {view.artifact.key} was solved for {view.game.name}, not {game}")
        names = CardNames(
            view.game,
            card_names,
            log=_say,
        )
        client = ACPCClient(view.game, view.tree, strategy_chooser(view, seed), names)
        hands = client.play(host, port)
    except _user_errors() + (ProtocolError, OSError) as exc:
        _fail(str(exc))
    found = names.found or "not decided: every card sent is in both namings, read as bottom"
    _say(
        f"played {hands:,} hands at {host}:{port} with {view.artifact.key} "
        f"(card names: {names.naming or 'bottom'}, {found})"
    )


def _strategy_stage(
    stage_name: str, key: str, values: dict[str, Any], store: str, dask_address: str | None
) -> tuple[Any, Any]:
    """Run (or find) a stage whose one input is a stored strategy; (its artifact, the strategy)."""
    from gameforge.artifacts.store import ArtifactStore
    from gameforge.flows.runtime import dask_executor
    from gameforge.stages.runner import run_stage

    artifacts = ArtifactStore(store)
    strategy = artifacts.open(key)
    if strategy.stage != "cfr":
        _fail(f"{strategy.key} is a {strategy.stage} artifact, not a cfr strategy")
    params = {"game": strategy.params["game"], **values}
    with RichProgress() as progress, dask_executor(dask_address, log=progress.echo) as executor:
        result = run_stage(
            stage_name, params, {"strategy": strategy.key}, store=artifacts, executor=executor,
            progress=progress, log=progress.echo,
        )  # fmt: skip
    node = {"key": result.key, "cached": result.cached, "seconds": result.seconds}
    _ledger(store).record_done(
        stage_name, {stage_name: node}, "gameforge " + " ".join(sys.argv[1:])
    )
    return artifacts.open(result.key), strategy


@strategy_app.command("lbr")
def strategy_lbr(
    key: Annotated[str, typer.Argument(help="cfr artifact key (a unique prefix will do).")],
    deals: Annotated[
        int, typer.Option("--deals", help="Deals, each played from both seats.")
    ] = 2000,
    seed: Annotated[int, typer.Option("--seed")] = 0,
    store: StoreOpt = "store",
) -> None:
    """Local best response against a strategy (stage `lbr`, stored): a one-sided 95% lower
    bound of its exploitability, in mbb/g (none when the bound is at or below 0)."""
    if deals < 2:
        _fail("--deals must be at least 2")
    try:
        result, strategy = _strategy_stage(
            "lbr", key, {"deals": deals, "seed": seed}, store, "local"
        )
    except _user_errors() + (ValueError,) as exc:
        _fail(str(exc))
    from gameforge.stages.poker.lbr import lower_bound_text

    summary = result.meta["summary"]
    bound = lower_bound_text(
        summary["lbr_mbb_per_game"], summary["exploitability_lower_bound_mbb_per_game"]
    )
    _say(
        f"{strategy.key}: LBR over {deals:,} deals x 2 seats: {bound} [{result.key}: gameforge "
        f"stage lbr on {strategy.key}, deals={deals}, seed={seed}]"
    )


@strategy_app.command("br")
def strategy_br(
    key: Annotated[str, typer.Argument(help="cfr artifact key (a unique prefix will do).")],
    store: StoreOpt = "store",
    dask_address: DaskOpt = None,
) -> None:
    """Exact best response in the real game (stage `best-response`, stored, resumable): the
    strategy's exploitability in mbb/g."""
    try:
        result, strategy = _strategy_stage("best-response", key, {}, store, dask_address)
    except _user_errors() + (ValueError,) as exc:
        _fail(str(exc))
    summary = result.meta["summary"]
    seats = summary["values_mbb_per_game"]
    _say(
        f"{strategy.key}: exploitability {summary['exploitability_mbb_per_game']:.3f} mbb/g "
        f"(best response as seat 0: {seats[0]:.3f}, as seat 1: {seats[1]:.3f}; exact, "
        f"{summary['canonical_boards']:,} canonical boards) [{result.key}: gameforge stage "
        f"best-response on {strategy.key}]"
    )


@game_app.command("list")
def game_list() -> None:
    """List the shipped game definitions."""
    from gameforge.engines.poker.shipped_games import shipped_games

    for name in shipped_games():
        console.print(name)


def _print_columns(rows: list[dict[str, Any]], columns: dict[str, str]) -> None:
    """A right-aligned table of integer fields, one row per dict, thousands separated."""
    table = Table()
    for column in columns:
        table.add_column(column, justify="right", no_wrap=True)
    for row in rows:
        table.add_row(*(f"{row[field]:,}" for field in columns.values()))
    console.print(table)


@game_app.command("info")
def game_info(
    game: Annotated[str, typer.Argument(help="A shipped game name or a path to a .game file.")],
    as_json: Annotated[bool, typer.Option("--json", help="JSON on stdout.")] = False,
    buckets: Annotated[
        str | None,
        typer.Option(
            "--buckets",
            help="Buckets per round of an abstraction (e.g. 169,9000,9000,9000): also show its "
            "information sets.",
        ),
    ] = None,
) -> None:
    """Rounds of a game: canonical (suit-isomorphic) hands, betting-tree size, information sets."""
    from gameforge.engines.poker.acpc import GameDefError
    from gameforge.engines.poker.betting import TREE_NODE_LIMIT, tree_size
    from gameforge.engines.poker.cards import CARD_NAMINGS, TOP
    from gameforge.engines.poker.isomorphism import count_classes
    from gameforge.engines.poker.shipped_games import load_game

    try:
        definition = load_game(game)
    except GameDefError as exc:
        _fail(str(exc))
    per_round: list[int] | None = None
    if buckets is not None:
        try:
            per_round = [int(b) for b in buckets.split(",")]
        except ValueError:
            _fail(f"--buckets {buckets!r}: expected comma-separated integers, e.g. 169,9000")
        if len(per_round) != definition.num_rounds or min(per_round) < 1:
            _fail(
                f"--buckets needs one positive count per round ({definition.num_rounds} rounds), "
                f"got {buckets!r}"
            )
    groups = definition.card_groups()
    classes = count_classes(groups, definition.num_ranks, definition.num_suits)
    has_tree = definition.betting_type == "limit" and definition.num_players == 2
    size = tree_size(definition) if has_tree else None
    rounds = []
    for r in range(definition.num_rounds):
        row: dict[str, Any] = {
            "round": r,
            "board_cards_dealt": definition.num_board_cards[r],
            "board_cards_seen": definition.board_cards_through(r),
            "raw_hands": definition.raw_hands(r),
            "canonical_hands": int(classes[definition.group_of_round(r)]),
        }
        if size is not None:
            row["decisions"] = size.decisions[r]
            row["folds"] = size.folds[r]
            row["infosets_raw"] = size.decisions[r] * row["raw_hands"]
            row["infosets_lossless"] = size.decisions[r] * row["canonical_hands"]
            if per_round is not None:
                row["infosets_abstract"] = size.decisions[r] * per_round[r]
        rounds.append(row)
    tree = None
    if size is not None:
        tree = {
            "nodes": size.nodes,
            "decisions": sum(size.decisions),
            "terminals": size.terminals,
            "infosets_raw": sum(row["infosets_raw"] for row in rounds),
            "showdowns": size.showdowns,
            "node_limit": TREE_NODE_LIMIT,
            "within_limit": size.nodes <= TREE_NODE_LIMIT,
        }
    info = {
        "name": definition.name,
        "betting": definition.betting_type,
        "players": definition.num_players,
        "ranks": definition.num_ranks,
        "suits": definition.num_suits,
        "hole_cards": definition.num_hole_cards,
        "blinds": list(definition.blind),
        "raise_sizes": list(definition.raise_size) if definition.betting_type == "limit" else [],
        "max_raises": list(definition.max_raises),
        "stacks": list(definition.stack),
        "cards": {naming: definition.deck_text(naming) for naming in CARD_NAMINGS},
        "rounds": rounds,
        "betting_tree": tree,
    }
    if as_json:
        sys.stdout.write(json.dumps(info, indent=2) + "\n")
        return
    console.print(
        f"[bold]{definition.name}[/]: {definition.betting_type}, {definition.num_players} players, "
        f"{definition.deck_size} cards ({definition.num_ranks} ranks x {definition.num_suits} "
        f"suits), {definition.num_hole_cards} hole cards, blinds {list(definition.blind)}",
        highlight=False,
    )
    cards = f"cards: {definition.deck_text()}"
    if definition.deck_text(TOP) != definition.deck_text():
        cards += f" (named {definition.deck_text(TOP)} by ACPC dealers dealing the top ones)"
    console.print(cards, highlight=False, markup=False)
    cards_columns = {
        "round": "round",
        "board dealt": "board_cards_dealt",
        "board seen": "board_cards_seen",
        "raw hands": "raw_hands",
        "canonical hands": "canonical_hands",
    }
    _print_columns(rounds, cards_columns)
    if size is not None:
        tree_columns = {
            "round": "round",
            "decisions": "decisions",
            "folds": "folds",
            "infosets (raw)": "infosets_raw",
            "infosets (lossless)": "infosets_lossless",
        }
        if per_round is not None:
            tree_columns["infosets (buckets)"] = "infosets_abstract"
        _print_columns(rounds, tree_columns)
    if tree is not None:
        verdict = (
            f"within gameforge's limit of {TREE_NODE_LIMIT:,}"
            if tree["within_limit"]
            else f"over gameforge's limit of {TREE_NODE_LIMIT:,}: stages that build it refuse it"
        )
        _say(
            f"betting tree: {tree['nodes']:,} nodes ({tree['decisions']:,} decisions, "
            f"{tree['terminals']:,} terminals), {verdict}; {tree['infosets_raw']:,} information "
            "sets (decisions x the round's raw hands; lossless: canonical hands)"
        )
    else:
        _say("betting tree: not built (gameforge's trees are for two-player limit games)")
    if definition.num_hole_cards in (1, 2) and definition.board_cards_through(
        definition.num_rounds - 1
    ):
        hole, board = definition.num_hole_cards, sum(definition.num_board_cards)
        unordered = count_classes((hole, board), definition.num_ranks, definition.num_suits)[-1]
        console.print(f"last round with the board unordered (river-hs layout): {unordered:,}")


@app.command("serve")
def serve_cmd(
    store: StoreOpt = "store",
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
    """Serve every flow as a Prefect deployment (FLOW/NAME), so that runs can be started from the
    Prefect UI or `prefect deployment run`; runs until interrupted. Needs a Prefect server."""
    from gameforge.flows.runtime import prefect_defaults

    prefect_defaults()
    if not os.environ.get("PREFECT_API_URL"):
        _fail("serve needs a Prefect server: `gameforge server start`, or set PREFECT_API_URL")
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
        _say(f"registered {len(served)} deployments with work pool {pool}: {names}")
        return
    _say(f"serving {len(served)} flows as {names}")
    _say(f"store {root}; Prefect API {os.environ['PREFECT_API_URL']}")
    serve(*served, limit=limit, print_starting_message=False)


@server_app.command("start")
def server_start(port: Annotated[int, typer.Option(help="Port on 127.0.0.1.")] = 4200) -> None:
    """Start a local Prefect server (UI and API on 127.0.0.1) that later runs use."""
    from gameforge.flows import server

    with console.status("starting prefect server..."):
        try:
            state = server.start(port)
        except RuntimeError as exc:
            _fail(str(exc))
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


def _version_callback(value: bool) -> None:
    if value:
        from gameforge.stages.runner import code_version

        console.print(f"gameforge {code_version()}", highlight=False)
        raise typer.Exit()


@app.callback()
def _options(
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            callback=_version_callback,
            is_eager=True,
            help="Print the version (and git commit of a checkout) and exit.",
        ),
    ] = False,
) -> None:
    """The `gameforge` command line."""


def main() -> None:
    """Entry point of the `gameforge` script."""
    global _END_PROCESS
    _END_PROCESS = True
    try:
        app()
    except _user_errors() as exc:  # one a command did not phrase itself (a bad --store, say)
        err_console.print(
            f"[bold red]error:[/] {escape(str(exc))}", highlight=False, soft_wrap=True
        )
        sys.exit(2)


if __name__ == "__main__":
    main()
