"""The Prefect side: each flow spec becomes a Prefect flow whose tasks are its stages.

Prefect tasks run in the flow's own process (no task runner); chunk work inside a stage goes to
Dask directly. Prefect's result cache is off: the content-addressed store decides what is cached.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

from gameforge.flows.request import RunRequest, flow_signature
from gameforge.flows.runtime import prefect_defaults


@dataclass
class _Hooks:
    """What the caller's terminal wants from a run: kept out of the flow's parameters, which
    Prefect records and shows (a progress bar is no parameter of a flow)."""

    progress: Any = None
    echo: Callable[[str], None] | None = None
    record: Any = None  # (ledger, record) the caller keeps the run in; else the flow keeps one
    stopped: BaseException | None = None  # the signal that stopped the run, raised again after


_HOOKS = _Hooks()


def send_run_logs_to_prefect() -> None:
    """Flow and task run loggers at INFO, to the Prefect API and the run's log file only: the
    terminal shows the same lines through the run's own echo and bars."""
    import logging

    for name in ("prefect.flow_runs", "prefect.task_runs"):
        logger = logging.getLogger(name)
        logger.setLevel(logging.INFO)
        logger.propagate = False


def _logged_and_echoed(logger: Any) -> Callable[[str], None]:
    """A line to a run logger (the Prefect UI) and to the caller's terminal, if any."""

    def log(message: str) -> None:
        logger.info(message)
        if _HOOKS.echo is not None:
            _HOOKS.echo(message)

    return log


def flow_run_name() -> str:
    """A flow run's name in the UI: flow, preset and start time ('lhe-abstraction [small]
    2026-11-29 00:41:07 UTC'), for runs from the command line and from deployments alike."""
    from datetime import UTC, datetime

    from prefect.runtime import flow_run

    preset = flow_run.parameters.get("preset", "?")
    return f"{flow_run.flow_name} [{preset}] {datetime.now(UTC):%Y-%m-%d %H:%M:%S} UTC"


@cache
def _prefect_flow(name: str) -> Any:
    prefect_defaults()
    from prefect import flow, get_run_logger, task
    from prefect.cache_policies import NO_CACHE
    from prefect.runtime import deployment, flow_run
    from prefect.states import Cancelled

    from gameforge.artifacts import ArtifactStore
    from gameforge.flows.pipeline import plan_run, run_plan, start_record
    from gameforge.flows.prefect_report import PrefectProgress, artifact_key, publish_stage
    from gameforge.flows.runlog import Interrupted, one_line
    from gameforge.flows.runtime import dask_executor
    from gameforge.stages.runner import run_stage

    send_run_logs_to_prefect()

    @task(cache_policy=NO_CACHE, persist_result=False)
    def stage_task(stage: str, params: dict, inputs: dict, **kwargs: Any) -> Any:
        logger = get_run_logger()
        label = kwargs.get("label") or stage

        kwargs["log"] = _logged_and_echoed(logger)
        kwargs["progress"] = PrefectProgress(
            _HOOKS.progress, logger.info, artifact_key(name, label, "progress"), logger.warning
        )
        result = run_stage(stage, params, inputs, **kwargs)
        meta = kwargs["store"].open(result.key).meta
        try:
            publish_stage(name, label, meta, result.cached, result.seconds)
        except Exception as exc:  # the API mirrors the work; a refused artifact loses nothing
            logger.warning(f"{label}: summary artifact not published: {exc}")
        return result

    def run_one(stage: str, params: dict, inputs: dict, **kwargs: Any) -> Any:
        run_name = kwargs.get("label") or stage
        return stage_task.with_options(name=stage, task_run_name=run_name)(
            stage, params, inputs, **kwargs
        )

    def gameforge_flow(**parameters: Any) -> Any:  # the nodes' results, or Cancelled
        request = RunRequest(flow=name, **parameters)
        log = _logged_and_echoed(get_run_logger())
        store = ArtifactStore(request.store_root)
        ledger = record = None
        if _HOOKS.record is not None:  # the command line keeps the record; add this flow run
            kept_ledger, kept = _HOOKS.record
            kept.extra["prefect_flow_run"] = flow_run.get_id()
            kept_ledger.write(kept)
        else:  # started from Prefect (a deployment): the run records itself
            command = f"prefect deployment run {name}/{deployment.name}"
            extra = {"prefect_flow_run": flow_run.get_id()}
            steps = plan_run(request, store)
            ledger, record = start_record(request, store, steps, command, extra)
        try:
            with dask_executor(
                request.dask_address, dashboard=request.dashboard, log=log
            ) as executor:
                results = run_plan(
                    request, store, executor, progress=_HOOKS.progress, log=log, run_one=run_one
                )
        except BaseException as exc:
            if ledger is not None and record is not None:
                ledger.finish(record, "failed", error=one_line(exc))
            if isinstance(exc, Interrupted):  # asked to stop: Cancelled in the UI, not Crashed
                _HOOKS.stopped = exc
                return Cancelled(message=f"stopped by {exc}; finished chunks are kept")
            raise
        out = {
            s: {"key": r.key, "cached": r.cached, "seconds": r.seconds} for s, r in results.items()
        }
        _publish_findings(name, request.preset, out, store, log)
        if ledger is not None and record is not None:
            ledger.finish(record, "completed", nodes=out)
        return out

    # The flow's parameters are the request's fields, so that a deployment shows and sets each
    # (`--param preset=tiny` merges into its defaults); the flow rebuilds the request from them.
    gameforge_flow.__signature__ = flow_signature()  # type: ignore[attr-defined]
    return flow(
        name=name,
        flow_run_name=flow_run_name,
        persist_result=False,
        validate_parameters=False,
    )(gameforge_flow)


def _publish_findings(
    flow: str, preset: str, out: dict[str, dict], store: Any, log: Callable[[str], None]
) -> None:
    """The run's findings as its Prefect markdown artifact; a finding that cannot be read is
    logged in one line and never fails a run whose artifacts are all built."""
    from gameforge.flows.findings import findings_markdown, run_findings
    from gameforge.flows.prefect_report import publish_findings

    title = f"findings of {flow} [{preset}]"
    try:
        findings = run_findings(flow, {label: r["key"] for label, r in out.items()}, store)
        if findings:
            publish_findings(flow, title, findings_markdown(title, findings))
    except Exception as exc:  # the findings report the work; they are not part of it
        log(f"findings not published: {type(exc).__name__}: {exc}")


def run_flow(
    request: RunRequest, progress: Any = None, echo: Any = None, record: Any = None
) -> dict[str, dict]:
    """Run the request's flow as a Prefect flow run; returns stage -> key/cached/seconds.

    `progress` and `echo` show the run in the caller's terminal; `record` is the (ledger, run
    record) the caller keeps: the flow adds its Prefect flow run id.
    """
    from prefect.exceptions import CancelledRun

    request.resolve()  # fail fast on bad presets, overrides and inputs, before Prefect starts
    flow = _prefect_flow(request.flow)
    _HOOKS.progress, _HOOKS.echo, _HOOKS.record = progress, echo, record
    _HOOKS.stopped = None
    try:
        return flow(**with_absolute_store(request).flow_parameters())
    except CancelledRun:
        if _HOOKS.stopped is not None:  # the caller reports a stop as it always has
            raise _HOOKS.stopped from None
        raise
    finally:
        _HOOKS.progress, _HOOKS.echo, _HOOKS.record = None, None, None
        _HOOKS.stopped = None


def with_absolute_store(request: RunRequest) -> RunRequest:
    """The request with a local store as an absolute path: the flow run's parameters in the UI
    then say which store it wrote, wherever it was started from."""
    from gameforge.artifacts.files import is_remote, local_path

    if is_remote(request.store_root):
        return request
    return request.model_copy(update={"store_root": str(local_path(request.store_root).absolute())})


ENTRYPOINT_PREFIX = "flow_"


def entrypoint(name: str) -> str:
    """The module path Prefect imports flow `name` from: this module's `flow_<name>` attribute."""
    return f"{__name__}.{ENTRYPOINT_PREFIX}{name.replace('-', '_')}"


def __getattr__(attribute: str) -> Any:
    """`flow_lhe_abstraction` and so on: the Prefect flows, for deployments' entrypoints."""
    from gameforge.flows.specs import FLOWS

    if attribute.startswith(ENTRYPOINT_PREFIX):
        wanted = attribute[len(ENTRYPOINT_PREFIX) :]
        for name in FLOWS:
            if name.replace("-", "_") == wanted:
                return _prefect_flow(name)
    raise AttributeError(f"module {__name__!r} has no attribute {attribute!r}")


def deployments(name: str, preset: str, store_root: str, dask_address: str | None) -> list[Any]:
    """One Prefect deployment per flow, named `name`: its parameters default to `preset`, no
    overrides, this store and Dask address (a run from the UI may change any of them)."""
    from prefect.deployments.runner import EntrypointType

    from gameforge.flows.specs import FLOWS

    out = []
    for flow_name, spec in FLOWS.items():
        if preset not in spec.presets:
            continue
        deployment = _prefect_flow(flow_name).to_deployment(
            name=name,
            parameters={"preset": preset, "overrides": [], "store_root": store_root,
                        "dask_address": dask_address},
            description=spec.description,
            entrypoint_type=EntrypointType.MODULE_PATH,
        )  # fmt: skip
        deployment.entrypoint = entrypoint(flow_name)
        out.append(deployment)
    return out
