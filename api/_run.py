"""Run a flow or a stage from Python: the command line's plan, record and runner, in process.

`run` is `gameforge run FLOW` without Prefect: the same request (`RunRequest`), the same plan
and run record (`flows.pipeline.plan_run`, `start_record`), the same runner (`run_plan`), and
the same findings; chunk work runs in this process unless `dask_address` names a cluster.
A rerun finds every artifact cached and returns at once.

>>> import gameforge as gf
>>> leduc = gf.run("solve-lossless", preset="small")
>>> leduc
run ...-solve-lossless-...: solve-lossless [small], completed
  cfr: cfr-c8ba3d413160dd5a (...)
  finding: cfr: exploitability = 0.255 mbb/g (exact best response) after 1,000 cfr+ iterations...
>>> leduc["cfr"].params["game"]
'leduc.limit.2p'

Parameters as `--set` takes them (`node.param` or `stage.param`), nodes as `--only`:

>>> holdem = gf.run("lhe-solve", preset="tiny", params={"cfr.iterations": 20000})
>>> list(holdem.keys)
['river-hs', 'hsd', 'opponent-clusters', 'ochs', 'hsd-buckets', 'ochs-buckets', 'cfr']
>>> holdem["cfr"].params["iterations"], holdem["cfr"].inputs["middle_buckets"]
(20000, 'hsd-buckets-2362ddc695228798')

One stage and what it needs upstream, with its flow's preset (`gameforge stage run`):

>>> gf.run_stage("cfr", preset="small").key
'cfr-c8ba3d413160dd5a'
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from gameforge._store import Artifact, Run, Store, StoreLike, as_store


def overrides_of(params: Mapping[str, Any] | Sequence[str] | None) -> tuple[str, ...]:
    """`--set` items of a dict ({"cfr.iterations": 1000}) or as written ("cfr.iterations=1000")."""
    if params is None:
        return ()
    if isinstance(params, Mapping):
        return tuple(f"{name}={set_value(value)}" for name, value in params.items())
    return tuple(params)


def set_value(value: Any) -> str:
    """A value as `--set` writes it: none, true/false, comma-separated lists."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, list | tuple):
        items = ",".join(set_value(v) for v in value)
        return items if len(value) > 1 else items + ","
    return str(value)


def run(
    flow: str,
    preset: str = "tiny",
    *,
    params: Mapping[str, Any] | Sequence[str] | None = None,
    store: StoreLike = None,
    only: Sequence[str] | None = None,
    force: Sequence[str] = (),
    dask_address: str | None = "local",
    verbose: bool = False,
) -> Run:
    """Run a flow as `gameforge run FLOW --preset P --set ...` does; its run, with findings."""
    from gameforge.flows.request import RunRequest

    opened = as_store(store)
    request = RunRequest(
        flow=flow,
        preset=preset,
        overrides=overrides_of(params),
        store_root=opened.location,
        dask_address=dask_address,
        force=tuple(force),
        only=None if only is None else tuple(only),
    )
    return run_request(request, opened, print if verbose else _quiet)


def run_stage(
    stage: str,
    preset: str = "tiny",
    *,
    params: Mapping[str, Any] | Sequence[str] | None = None,
    store: StoreLike = None,
    flow: str | None = None,
    node: str | None = None,
    verbose: bool = False,
) -> Artifact:
    """Run one stage and what it needs upstream with its flow's preset (`gameforge stage run`)."""
    from gameforge.flows.request import RunRequest
    from gameforge.flows.specs import resolve_stage

    target = resolve_stage(stage, flow, node)
    opened = as_store(store)
    request = RunRequest(
        flow=target.flow.name,
        preset=preset,
        overrides=overrides_of(params),
        store_root=opened.location,
        dask_address="local",
        only=tuple(target.flow.upstream(target.node.name)),
    )
    return run_request(request, opened, print if verbose else _quiet)[target.node.name]


def run_request(request: Any, store: Store, log: Callable[[str], None]) -> Run:
    """Plan, record and run a `RunRequest` in this process, as the command line does."""
    from gameforge.artifacts.runs import RunLedger
    from gameforge.flows.pipeline import plan_run, run_plan, start_record
    from gameforge.flows.runtime import dask_executor

    request.resolve(strict=True)  # a bad flow, preset or --set is refused before anything runs
    steps = plan_run(request, store.artifacts)
    ledger, record = start_record(request, store.artifacts, steps, _command(request))
    try:
        with dask_executor(request.dask_address, log=log) as executor:
            results = run_plan(request, store.artifacts, executor, log=log)
    except KeyboardInterrupt:  # a notebook's interrupt: finished chunks are kept, as on a stop
        ledger.finish(record, "stopped", error="stopped by SIGINT")
        raise
    except BaseException as exc:
        ledger.finish(record, "failed", error=f"{type(exc).__name__}: {exc}")
        raise
    nodes = {
        label: {"key": r.key, "cached": r.cached, "seconds": r.seconds}
        for label, r in results.items()
    }
    ledger.finish(record, "completed", nodes=nodes)
    return Run(store, RunLedger(store.artifacts).get(record.run_id))


def stage_on(
    stage: str,
    params: dict[str, Any],
    inputs: dict[str, str],
    store: Store,
    log: Callable[[str], None] = print,
) -> Artifact:
    """Run (or find) one stage on stored inputs and record it, as `gameforge strategy br` does."""
    from gameforge.artifacts.runs import RunLedger
    from gameforge.stages.runner import run_stage as run_one

    result = run_one(stage, params, inputs, store=store.artifacts, log=log)
    node = {"key": result.key, "cached": result.cached, "seconds": result.seconds}
    RunLedger(store.artifacts).record_done(stage, {stage: node}, f"gameforge (Python) {stage}")
    return store.open(result.key)


def _command(request: Any) -> str:
    """What the run record says started it: the equivalent command line, from Python."""
    sets = "".join(f" --set {item}" for item in request.overrides)
    where = "" if isinstance(request.store_root, str) and request.store_root == "store" else (
        f" --store {request.store_root}")  # fmt: skip
    return f"gameforge run {request.flow} --preset {request.preset}{sets}{where} (Python)"


def _quiet(_message: str) -> None:
    pass
