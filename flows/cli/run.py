"""`gameforge run` and `gameforge flows`, and what `stage run` shares with `run`: a flow run for
the terminal (bars, one-line errors, its log and record, `--repair`) over `run_flow`, and the
`--plan` dry run over `plan_run`."""

from __future__ import annotations

import json
import os
import sys
from typing import Annotated, Any, NoReturn

import typer
from rich.markup import escape
from rich.table import Table

from gameforge.flows.cli import common
from gameforge.flows.cli.common import (
    DashboardOpt,
    DaskOpt,
    ForceResourcesOpt,
    InputOpt,
    PlainProgress,
    PresetOpt,
    RepairOpt,
    RichProgress,
    SetOpt,
    VerboseOpt,
    WriteStoreOpt,
    console,
    describe_failure,
    err_console,
    fail,
    say,
    user_errors,
)
from gameforge.flows.request import RunRequest

_ENDING = False  # set once the main thread stops children itself: the stop timer then waits


def _end_run(code: int) -> NoReturn:
    """Stop child processes, flush, and end the run with exit status `code`."""
    import os

    from gameforge.flows.runlog import stop_descendants

    global _ENDING
    _ENDING = True
    stop_descendants()
    if common.END_PROCESS:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    raise typer.Exit(code)


def _hard_stop(signum: int) -> None:
    """A stop that did not unwind in time (or a second signal): end the process now."""
    import os

    from gameforge.flows.runlog import stop_descendants

    if not common.END_PROCESS or _ENDING:
        return  # the main thread is stopping the children within its own bounded time
    stop_descendants(grace_s=1.0)
    sys.stderr.write(f"error: stopped by {signal_name(signum)}; run the same command to resume\n")
    sys.stderr.flush()
    os._exit(128 + signum)


def signal_name(signum: int) -> str:
    """SIGTERM for 15, and so on."""
    import signal

    return signal.Signals(signum).name


def run_request(request: RunRequest, dry_run: bool = False, verbose: bool = False) -> None:
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

            stored = request.resolve(strict=True).stored  # refused before the store is touched
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
            line = _with_repair_hint(str(exc), exc)
            err_console.print(
                f"[bold red]error:[/] {escape(line)}", highlight=False, soft_wrap=True
            )
            _say_log(runlog)
            raise typer.Exit(2) from None
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
    """How a run ends: each node's key, cached or computed, and its seconds; then its findings,
    the headline results read from its artifacts, last."""
    from rich import box

    from gameforge.artifacts.store import ArtifactStore
    from gameforge.flows.cli.runs import print_findings
    from gameforge.flows.findings import flow_findings
    from gameforge.flows.specs import FLOWS

    table = Table(title=f"{request.flow} \\[{request.preset}] in {seconds:.1f} s",
                  box=box.SIMPLE_HEAD)  # fmt: skip
    longest_key = max((len(r["key"]) for r in results.values()), default=3)
    for column in ("stage", "key", "status", "seconds"):
        # a key is copied whole: its column never narrows below the longest (the others fold)
        table.add_column(column, min_width=longest_key if column == "key" else None)
    for stage, result in results.items():
        status = "cached" if result["cached"] else "computed"
        table.add_row(escape(stage), result["key"], status, f"{result['seconds']:.1f}")
    console.print(table)
    spec = FLOWS.get(request.flow)
    if spec is not None:  # a single-stage run has no findings to print
        keys = {label: result["key"] for label, result in results.items()}
        findings = flow_findings(spec, keys, ArtifactStore(request.store_root))
        print_findings(f"findings of {request.flow} [{request.preset}]", findings)


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
        _say_log(runlog)
    _end_run(1)


def _say_log(runlog: Any) -> None:
    """The line naming a failed run's log (where its full traceback is)."""
    log = runlog.path if runlog.written else f"not written ({runlog.lost})"
    err_console.print(f"full traceback: {log}", highlight=False, soft_wrap=True)


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
    from gameforge.flows.pipeline import plan_run, resource_plan, resource_refusal, step_seconds
    from gameforge.stages.resources import available_memory, free_disk, human
    from gameforge.stages.timing import human_seconds, time_basis

    store = request.store_root
    try:
        request.resolve(strict=True)  # bad input is refused before the store is touched
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
            seconds = step_seconds(step) if step.computes else None
            say(
                f"       resources: memory ~{human(step.footprint.memory)} ({largest or 'small'}"
                f"; working {human(step.footprint.working)}), stores up to "
                f"{human(step.footprint.stored_bytes)}"
                + (f", time ~{human_seconds(seconds)}" if seconds is not None else "")
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
    say(f"time: ~{human_seconds(needs.seconds)} {time_basis()}"
        + (f"; not estimated: {', '.join(needs.untimed)}" if needs.untimed else ""))  # fmt: skip
    refusal = resource_refusal(needs, memory_free, disk_free)
    if refusal:
        say(f"a run would be refused: {refusal}")


def flows_cmd(
    as_json: Annotated[bool, typer.Option("--json", help="JSON array on stdout.")] = False,
) -> None:
    """List flows, their nodes, and each preset's estimated time and disk."""
    from gameforge.flows.pipeline import preset_estimates
    from gameforge.flows.specs import FLOWS
    from gameforge.stages.resources import human
    from gameforge.stages.timing import human_seconds, time_basis

    estimates = {name: preset_estimates(name) for name in FLOWS}
    if as_json:
        rows = [
            {
                "flow": spec.name,
                "nodes": [{"node": n.name, "stage": n.stage, "optional": n.optional}
                          for n in spec.nodes],
                "presets": {preset: {"seconds": round(plan.seconds, 1), "stored_bytes": plan.stored}
                            for preset, plan in estimates[spec.name].items()},
                "description": spec.description,
            }
            for spec in FLOWS.values()
        ]  # fmt: skip
        sys.stdout.write(json.dumps(rows, indent=2) + "\n")
        return
    table = Table()
    table.add_column("flow", no_wrap=True)  # a name is never cut; the node chain wraps
    table.add_column("nodes", overflow="fold")  # a node name too long for a line folds
    table.add_column("presets: time, disk", no_wrap=True)
    table.add_column("description")
    for spec in FLOWS.values():
        nodes = " -> ".join(n.name for n in spec.nodes)
        presets = "\n".join(
            f"{preset} ~{human_seconds(plan.seconds)}, {human(plan.stored)}"
            for preset, plan in estimates[spec.name].items()
        )
        table.add_row(spec.name, nodes, presets, spec.description)
    console.print(table)
    console.print(
        f"times: estimates {time_basis()}; disk: what the run stores, at most", highlight=False
    )


def run_cmd(
    flow: Annotated[str, typer.Argument(help="Flow name (see `gameforge flows`).")],
    preset: PresetOpt = "small",
    overrides: SetOpt = None,
    store: WriteStoreOpt = "store",
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
    run_request(request, dry_run, verbose)
