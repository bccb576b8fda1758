"""The `gameforge` command line: runs, single stages, strategies, games and servers here; the
store's commands (`artifacts`, `runs`) in `cli_store`; what all share in `cli_common`.

Commands that only read the store or a game definition import neither Prefect nor Dask, so they
answer quickly; `run` and `stage run` go through Prefect.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer
from rich.markup import escape
from rich.table import Table

from gameforge.flows.cli_common import (
    DashboardOpt,
    DaskOpt,
    ForceResourcesOpt,
    InputOpt,
    PlainProgress,
    PresetOpt,
    RepairOpt,
    RichProgress,
    SetOpt,
    StoreOpt,
    VerboseOpt,
    console,
    describe_failure,
    err_console,
    fail,
    ledger,
    say,
    user_errors,
)
from gameforge.flows.cli_store import artifacts_app, runs_app
from gameforge.flows.request import RunRequest

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
    help="gameforge: card abstraction, equilibrium strategies, trained networks and leagues, "
    "as resumable, cached stages.",
)
stage_app = typer.Typer(no_args_is_help=True, help="Run or list single stages.")
game_app = typer.Typer(no_args_is_help=True, help="Poker game definitions.")
server_app = typer.Typer(no_args_is_help=True, help="A long-lived local Prefect server.")
strategy_app = typer.Typer(no_args_is_help=True, help="Query solved strategies (cfr artifacts).")
app.add_typer(artifacts_app, name="artifacts")
app.add_typer(stage_app, name="stage")
app.add_typer(game_app, name="game")
app.add_typer(server_app, name="server")
app.add_typer(strategy_app, name="strategy")
app.add_typer(runs_app, name="runs")

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


def _run(request: RunRequest, dry_run: bool = False, verbose: bool = False) -> None:
    """Run (or, `dry_run`, plan) the request's flow for the terminal: bars, one-line errors, a
    log file, the run's record, and `--repair` around the flow run."""
    import time

    t_start = time.monotonic()
    store = request.store_root
    if dry_run:
        _print_plan(request)
        return
    from gameforge.flows.runlog import (
        Interrupted,
        RunLog,
        stop_on_signals,
        storage_error,
        storage_line,
    )

    ledger: Any = None
    record: Any = None
    # a signal while the run sets up (imports, plan, Prefect's start) stops it as one later would
    with stop_on_signals(on_timeout=_hard_stop):
        try:
            from gameforge.artifacts.store import ArtifactStore
            from gameforge.flows.pipeline import plan_run, start_record
            from gameforge.flows.prefect_flow import run_flow
            from gameforge.flows.runtime import STARTUP_TIMEOUT, import_run_libraries
            from gameforge.stages.runner import failed_at

            stored = request.resolve().stored  # bad input is refused before the store is touched
            artifacts = ArtifactStore(store)
            steps = plan_run(request, artifacts)
            if not request.force_resources:
                _check_resources(steps, store, request.parallel_nodes)
            extra = {"stored_inputs": list(request.stored_inputs)} if request.stored_inputs else {}
            command = "gameforge " + " ".join(sys.argv[1:])
            ledger, record = start_record(request, artifacts, steps, command, extra)
            if not request.repair and all(
                node["planned"] == "cached" for node in record.nodes.values()
            ):
                # nothing to compute: no flow run, no cluster (a run record all the same)
                done = {
                    n: {"key": v["key"], "cached": True, "seconds": 0.0}
                    for n, v in record.nodes.items()
                }
                ledger.finish(record, "completed", nodes=done)
                _print_results(request, done, time.monotonic() - t_start)
                say(f"every stage cached: no Prefect flow run started (run {record.run_id})")
                return
            api = _temporary_api()
            import_run_libraries()  # Prefect and Dask set up their log handlers on import
        except user_errors() as exc:
            fail(str(exc))
        except OSError as exc:  # a full or unwritable store, met before any work
            if storage_error(exc) is None:
                raise
            fail(storage_line(exc, store, started=False))
        except Interrupted as exc:
            if ledger is not None:
                _finish(ledger, record, "stopped", error=f"stopped by {exc.args[0]}")
            _say_stopped(f"stopped by {exc.args[0]}")
            _end_run(128 + exc.signum)
    t0 = time.monotonic()
    runlog = RunLog(store, request.flow, verbose)
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

                def run_once(replays: dict[str, dict] | None = None) -> dict[str, dict]:
                    if api is not None:
                        api.wait(float(os.environ[STARTUP_TIMEOUT]))
                    asked = request.model_copy(update={"replays": replays or None})
                    return run_flow(asked, progress, echo, record=(ledger, record))

                if not request.repair:
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
                    results = run_once(mending.replays())
                    while mending.changed_dependents(echo):
                        results = run_once(mending.replays())
        except user_errors() as exc:
            if failed_at(exc) is not None:  # a stage met a corrupted input: a stage failure
                _stage_failed(exc, runlog, verbose, ledger, record)
            runlog.exception(exc)
            runlog.close()
            _finish(ledger, record, "failed", error=str(exc))
            fail(_with_repair_hint(str(exc), exc))
        except Interrupted as exc:
            runlog.write(f"stopped by {exc.args[0]}")
            _finish(ledger, record, "stopped", error=f"stopped by {exc.args[0]}")
            _say_stopped(f"stopped by {exc.args[0]}")
            _end_run(128 + exc.signum)
        except KeyboardInterrupt:
            runlog.write("stopped by SIGINT")
            _finish(ledger, record, "stopped", error="stopped by SIGINT")
            _say_stopped("interrupted")
            _end_run(130)
        except Exception as exc:
            _stage_failed(exc, runlog, verbose, ledger, record)
        unrecorded = _finish(ledger, record, "completed", nodes=results)
    _print_results(request, results, time.monotonic() - t0)
    if unrecorded is not None:
        say(f"warning: the run's record was not written: {storage_line(unrecorded, store)}")


def _print_results(request: RunRequest, results: dict[str, dict], seconds: float) -> None:
    """The table a run ends with: each node's key, cached or computed, and its seconds."""
    table = Table(title=f"{request.flow} \\[{request.preset}] in {seconds:.1f} s")
    for column in ("stage", "key", "status", "seconds"):
        table.add_column(column)
    for stage, result in results.items():
        status = "cached" if result["cached"] else "computed"
        table.add_row(escape(stage), result["key"], status, f"{result['seconds']:.1f}")
    console.print(table)


def _say_stopped(what: str) -> None:
    """The one line a stopped run ends with."""
    err_console.print(
        f"[bold red]error:[/] {what}; finished chunks are kept: run the same command again to "
        "resume",
        highlight=False,
        soft_wrap=True,
    )


def _finish(ledger: Any, record: Any, status: str, **fields: Any) -> OSError | None:
    """Close the run's record; the storage error that kept it from the store, if one did (the
    failure being reported may be that very store's)."""
    from gameforge.flows.runlog import storage_error

    try:
        ledger.finish(record, status, **fields)
    except OSError as exc:
        if storage_error(exc) is None:
            raise
        return exc
    return None


def _stage_failed(
    exc: BaseException, runlog: Any, verbose: bool, ledger: Any, record: Any
) -> NoReturn:
    """End a run that failed inside a stage: one line, the log's path, exit status 1.

    A full or unwritable store is said in one line with what to do, and nothing else."""
    from gameforge.flows.runlog import storage_error, storage_line
    from gameforge.stages.runner import failed_at

    trace = runlog.exception(exc)
    storage = storage_error(exc)
    if storage is None:
        line = _with_repair_hint(describe_failure(exc), exc)
    else:
        where = failed_at(exc)
        line = (f"stage {where.label} ({where.key}) failed: " if where else "") + (
            storage_line(storage, runlog.store)
        )
    _finish(ledger, record, "failed", error=line)
    if verbose:
        err_console.print(trace, markup=False, highlight=False)
    err_console.print(f"[bold red]error:[/] {escape(line)}", highlight=False, soft_wrap=True)
    if storage is None:
        log = runlog.path if runlog.written else f"not written ({runlog.lost})"
        err_console.print(f"full traceback: {log}", highlight=False, soft_wrap=True)
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
        fail(f"{refusal}: lower the parameters, or --force-resources to run anyway")


def _with_repair_hint(line: str, exc: BaseException) -> str:
    """Add how to recover when the failure met a corrupted artifact."""
    from gameforge.artifacts.store import CorruptedArtifact
    from gameforge.stages.runner import failed_at

    where = failed_at(exc)
    corrupted = isinstance(exc, CorruptedArtifact) or (where is not None and where.corrupted)
    if not corrupted or "--repair" in line:
        return line
    return line + "; rerun with --repair to move it to the trash and rebuild it"


def _print_plan(request: RunRequest) -> None:
    """What a run would do, node by node (the `--plan` dry run); computes and writes nothing."""
    from gameforge.artifacts.runs import older_build_note
    from gameforge.artifacts.store import ArtifactStore
    from gameforge.flows.pipeline import plan_run, resource_plan, resource_refusal
    from gameforge.stages.resources import available_memory, free_disk, human

    store = request.store_root
    try:
        request.resolve()  # bad input is refused before the store is touched
        steps = plan_run(request, ArtifactStore(store))
    except user_errors() as exc:
        fail(str(exc))
    console.print(
        f"plan: {request.flow} at preset {request.preset}, store {store}", highlight=False
    )
    artifacts = ArtifactStore(store)
    for i, step in enumerate(steps, 1):
        status = step.status
        if status == "resumes":  # how far the unfinished build got
            progress = artifacts.build_progress(step.key)
            done = ", ".join(f"{a} {d:,} of {t:,} chunks" for a, (d, t) in progress.items())
            status += f" ({done} finished)" if done else ""
        say(f"{i:>3}. {step.label} ({step.stage} v{step.version}) {step.key}: {status}")
        for version, older in step.older_builds:
            say(f"       {older_build_note(artifacts, step.stage, version, older)}")
        content = ", ".join(f"{k}={v!r}" for k, v in step.params.items())
        say(f"       parameters: {content or '-'}")
        if step.execution:
            execution = ", ".join(f"{k}={v!r}" for k, v in step.execution.items())
            say(f"       execution: {execution}")
        if step.footprint is not None:
            largest = ", ".join(f"{n} {human(b)}" for n, b in step.footprint.largest())
            say(
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
    needs = resource_plan(steps, request.parallel_nodes)
    memory_free, disk_free = available_memory(), free_disk(store)
    say(
        f"resources: memory ~{human(needs.memory)} at the peak"
        + (f" ({needs.hungriest.label})" if needs.hungriest else "")
        + f", {human(memory_free) if memory_free is not None else 'unknown'} available; "
        f"stores up to {human(needs.stored)}, "
        + (f"{human(disk_free)} free" if disk_free is not None else "on an object store")
        + (f"; not estimated: {', '.join(needs.unestimated)}" if needs.unestimated else "")
    )
    refusal = resource_refusal(needs, memory_free, disk_free)
    if refusal:
        say(f"a run would be refused: {refusal}")


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
    only = None
    if with_nodes:
        try:
            from gameforge.flows.specs import get_flow

            only = tuple(get_flow(flow).default_nodes(with_nodes))
        except user_errors() as exc:
            fail(str(exc))
    request = RunRequest(
        flow=flow,
        preset=preset,
        overrides=tuple(overrides or ()),
        store_root=store,
        dask_address=dask_address,
        force=tuple(force or ()),
        only=only,
        parallel_nodes=parallel_nodes,
        dashboard=dashboard,
        stored_inputs=tuple(stored_inputs or ()),
        repair=repair,
        force_resources=force_resources,
    )
    _run(request, dry_run, verbose)


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
    _run(request, dry_run, verbose)


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
    except user_errors() + (ValueError,) as exc:
        fail(str(exc))
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
    hands: Annotated[
        int | None,
        typer.Option(
            "--hands",
            min=1,
            help="The match's length, as the dealer was started with: a dealer that stops "
            "before its last hand is then an error (the protocol never says the length).",
        ),
    ] = None,
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
        fail(f"--card-names must be one of {', '.join(CARD_NAME_CHOICES)}, not {card_names!r}")
    try:
        artifacts = ArtifactStore(store)
        view = StrategyView(artifacts, artifacts.open(strategy))
        if game is not None and replace(load_game(game), name="") != replace(view.game, name=""):
            fail(f"strategy {view.artifact.key} was solved for {view.game.name}, not {game}")
        names = CardNames(
            view.game,
            card_names,
            log=say,
        )
        client = ACPCClient(view.game, view.tree, strategy_chooser(view, seed), names)
        played = client.play(host, port, hands=hands)
    except user_errors() + (ProtocolError, OSError) as exc:
        fail(str(exc))
    found = names.found or "not decided: every card sent is in both namings, read as bottom"
    say(
        f"played {played:,} hands at {host}:{port} with {view.artifact.key} "
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
        fail(f"{strategy.key} is a {strategy.stage} artifact, not a cfr strategy")
    params = {"game": strategy.params["game"], **values}
    with RichProgress() as progress, dask_executor(dask_address, log=progress.echo) as executor:
        result = run_stage(
            stage_name, params, {"strategy": strategy.key}, store=artifacts, executor=executor,
            progress=progress, log=progress.echo,
        )  # fmt: skip
    node = {"key": result.key, "cached": result.cached, "seconds": result.seconds}
    ledger(store).record_done(stage_name, {stage_name: node}, "gameforge " + " ".join(sys.argv[1:]))
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
        fail("--deals must be at least 2")
    try:
        result, strategy = _strategy_stage(
            "lbr", key, {"deals": deals, "seed": seed}, store, "local"
        )
    except user_errors() + (ValueError,) as exc:
        fail(str(exc))
    from gameforge.stages.poker.lbr import lower_bound_text

    summary = result.meta["summary"]
    bound = lower_bound_text(
        summary["lbr_mbb_per_game"], summary["exploitability_lower_bound_mbb_per_game"]
    )
    say(
        f"{strategy.key}: LBR over {deals:,} deals x 2 seats: {bound} [{result.key}: gameforge "
        f"stage lbr on {strategy.key}, deals={deals}, seed={seed}]"
    )


@strategy_app.command("br")
def strategy_br(
    key: Annotated[str, typer.Argument(help="cfr artifact key (a unique prefix will do).")],
    precision: Annotated[
        str,
        typer.Option(
            "--precision",
            help="The last round's sums: float64, or float32 (about 1.9x faster, 1e-7 "
            "relative rounding).",
        ),
    ] = "float64",
    store: StoreOpt = "store",
    dask_address: DaskOpt = None,
) -> None:
    """Exact best response in the real game (stage `best-response`, stored, resumable): the
    strategy's exploitability in mbb/g."""
    try:
        result, strategy = _strategy_stage(
            "best-response", key, {"precision": precision}, store, dask_address
        )
    except user_errors() + (ValueError,) as exc:
        fail(str(exc))
    summary = result.meta["summary"]
    seats = summary["values_mbb_per_game"]
    say(
        f"{strategy.key}: exploitability {summary['exploitability_mbb_per_game']:.3f} mbb/g "
        f"(best response as seat 0: {seats[0]:.3f}, as seat 1: {seats[1]:.3f}; exact, "
        f"{summary['canonical_boards']:,} canonical boards, {precision} sums) [{result.key}: "
        f"gameforge stage best-response on {strategy.key}]"
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
        fail(str(exc))
    per_round: list[int] | None = None
    if buckets is not None:
        try:
            per_round = [int(b) for b in buckets.split(",")]
        except ValueError:
            fail(f"--buckets {buckets!r}: expected comma-separated integers, e.g. 169,9000")
        if len(per_round) != definition.num_rounds or min(per_round) < 1:
            fail(
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
        say(
            f"betting tree: {tree['nodes']:,} nodes ({tree['decisions']:,} decisions, "
            f"{tree['terminals']:,} terminals), {verdict}; {tree['infosets_raw']:,} information "
            "sets (decisions x the round's raw hands; lossless: canonical hands)"
        )
    else:
        say("betting tree: not built (gameforge's trees are for two-player limit games)")
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
    except user_errors() as exc:  # one a command did not phrase itself (a bad --store, say)
        err_console.print(
            f"[bold red]error:[/] {escape(str(exc))}", highlight=False, soft_wrap=True
        )
        sys.exit(2)
    except OSError as exc:  # a full or unwritable store met by any command: one line
        from gameforge.flows.runlog import storage_error, storage_line

        if storage_error(exc) is None:
            raise
        err_console.print(
            f"[bold red]error:[/] {escape(storage_line(exc, started=False))}",
            highlight=False,
            soft_wrap=True,
        )
        sys.exit(1)


if __name__ == "__main__":
    main()
