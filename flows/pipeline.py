"""Run a flow's stages in order against the store (the plain-Python core of every flow)."""

from __future__ import annotations

import contextvars
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gameforge.artifacts import ArtifactStore
from gameforge.artifacts.runs import RunLedger, RunRecord, new_run_id
from gameforge.artifacts.store import CorruptedArtifact, StoreError
from gameforge.flows.request import ResolvedRun, RunRequest
from gameforge.flows.specs import FlowSpec, Node, get_flow, sweep_values
from gameforge.stages.base import StageError
from gameforge.stages.executor import Executor
from gameforge.stages.progress import NullProgress, Progress
from gameforge.stages.registry import get_stage
from gameforge.stages.resources import Footprint, Recorded
from gameforge.stages.runner import StageRun, run_stage, stage_key


def run_plan(
    request: RunRequest,
    store: ArtifactStore | None = None,
    executor: Executor | None = None,
    *,
    progress: Progress | None = None,
    log: Callable[[str], None] = print,
    run_one: Callable[..., StageRun] = run_stage,
) -> dict[str, StageRun]:
    """Run the request's nodes (`only`, default: every node of a plain run) in dependency order,
    feeding each its upstream keys; results by node label.

    `store` defaults to the request's `store_root`. `stored_inputs` feed nodes' optional inputs
    from stored artifacts. `replays` gives, by artifact key, execution parameters that make a
    rebuild repeat a stored build (a repair of a solve that a time budget stopped:
    `Stage.replay`). `only` and `force` name nodes; a stage name stands for every node running
    that stage. With `parallel_nodes` > 1, nodes whose inputs are ready run side by side in
    threads (the flow's context is copied into each), e.g. the independent learners of a flow;
    results do not depend on the order, since every artifact is addressed by its content.
    """
    opened = store if store is not None else ArtifactStore(request.store_root)
    return _run_nodes(request.resolve(), request, opened, _Runner(executor, progress, log, run_one))


@dataclass(frozen=True)
class _Runner:
    """How a plan's nodes run: where chunk work goes, what shows progress and log lines, and
    the function that runs one stage (`run_stage`, a Prefect task, or a dry run)."""

    executor: Executor | None
    progress: Progress | None
    log: Callable[[str], None]
    run_one: Callable[..., StageRun]


Job = tuple[Node, int | None, str, list[str]]  # node, sweep variant, label, the labels it needs


def _jobs(spec: FlowSpec, wanted: set[str], swept: set[str], labels: list[str]) -> list[Job]:
    """The wanted nodes in flow order, a swept one once per sweep value, each with the labels
    of the jobs whose artifacts it reads."""
    jobs: list[Job] = []
    for node in spec.nodes:
        if node.name not in wanted and node.stage not in wanted:
            continue
        variants = range(len(labels)) if node.name in swept else [None]
        for v in variants:
            label = node.name if v is None else f"{node.name}[{labels[v]}]"
            needs = []
            for up in node.inputs.values():
                if up not in swept:
                    needs.append(up)
                elif v is not None:
                    needs.append(f"{up}[{labels[v]}]")
                else:
                    needs.extend(f"{up}[{x}]" for x in labels)
            jobs.append((node, v, label, needs))
    return jobs


def _run_nodes(
    resolved: ResolvedRun, request: RunRequest, store: ArtifactStore, runner: _Runner
) -> dict[str, StageRun]:
    """`run_plan` on resolved parameters (which `plan` passes as they are)."""
    spec, params, stored = resolved.spec, resolved.params, resolved.stored
    only, force, replays = request.only, request.force, request.replays
    progress, parallel_nodes = runner.progress, request.parallel_nodes
    wanted = set(only) if only is not None else set(spec.default_nodes())
    forced = {n.name for n in spec.nodes if n.name in force or n.stage in force}
    swept = spec.swept_stages()
    labels: list[str] = []  # one label per sweep value, e.g. "k=8"
    if spec.sweep is not None:
        stage, param = spec.sweep
        labels = [f"{param}={v[param]}" for v in sweep_values(spec, params[stage], stage)]
    jobs = _jobs(spec, wanted, swept, labels)
    _check_variants(swept, labels, stored)
    results: dict[str, StageRun] = {}

    def run_job(node: Node, v: int | None, label: str) -> StageRun:
        many = get_stage(node.stage).many_inputs
        inputs: dict[str, str] = {}
        for name, up in node.inputs.items():
            if up not in swept:
                inputs[name] = results[up].key
            elif v is not None:
                inputs[name] = results[f"{up}[{labels[v]}]"].key
            elif name in many:  # gather every variant, in sweep order
                for i, x in enumerate(labels):
                    inputs[f"{name}.{i}"] = results[f"{up}[{x}]"].key
            else:
                raise StageError(f"{node.name}: input {name} varies with the sweep")
        inputs.update(stored.get(node.name, {}))
        if v is not None:  # `--input node[k=8].input=KEY`: this variant only
            inputs.update(stored.get(label, {}))
        values = params.get(node.name, {})
        if v is not None and spec.sweep is not None and node.name == spec.sweep[0]:
            values = sweep_values(spec, values, node.name)[v]
        if replays:
            stage_params = get_stage(node.stage).make_params(values)
            full = {n: store.resolve(k) for n, k in inputs.items()}
            values = {**values, **replays.get(stage_key(node.stage, stage_params, full), {})}
        return runner.run_one(
            node.stage,
            values,
            inputs,
            store=store,
            executor=runner.executor,
            force=node.name in forced,
            progress=progress,
            log=runner.log,
            label=label,
        )

    # one bar for the flow itself above the stages' own bars, counting each stage's estimated
    # seconds (stages/timing.py), so that its rate and ETA mean something
    weights = _estimated_seconds(resolved, request, store) if progress and len(jobs) > 1 else {}
    flow_bar = (progress if progress is not None and weights else NullProgress()).start(
        f"{spec.name} (estimated seconds of work)", sum(weights.values())
    )
    if parallel_nodes <= 1:
        for i, (node, v, label, _needs) in enumerate(jobs, 1):
            flow_bar.note(f"(stage {i} of {len(jobs)}: {label})")
            results[label] = run_job(node, v, label)
            flow_bar.advance(weights.get(label, 1))
    else:
        pending = list(jobs)
        running: dict[Future[StageRun], str] = {}
        with ThreadPoolExecutor(parallel_nodes) as pool:
            while pending or running:
                for job in [j for j in pending if all(n in results for n in j[3])]:
                    if len(running) >= parallel_nodes:
                        break
                    pending.remove(job)
                    context = contextvars.copy_context()  # Prefect's flow-run context, per thread
                    node, variant, label, _needs = job
                    running[pool.submit(context.run, run_job, node, variant, label)] = label
                flow_bar.note(f"(running: {', '.join(sorted(running.values()))})")
                done, _ = wait(running, return_when=FIRST_COMPLETED)
                for future in done:
                    label = running.pop(future)
                    results[label] = future.result()  # a failure stops the flow here
                    flow_bar.advance(weights.get(label, 1))
    flow_bar.note("")
    flow_bar.close()
    return {job[2]: results[job[2]] for job in jobs}


def _estimated_seconds(
    resolved: ResolvedRun, request: RunRequest, store: ArtifactStore
) -> dict[str, int]:
    """Each job's estimated seconds (at least 1; a cached one 1) for the flow's bar."""
    steps = plan(
        resolved.spec, resolved.params, store,
        list(request.only) if request.only is not None else None,
        set(request.force), resolved.stored,
    )  # fmt: skip
    return {
        step.label: max(1, round(step_seconds(step) or 1)) if step.computes else 1 for step in steps
    }


def plan_keys(spec: FlowSpec, params: dict[str, dict[str, Any]]) -> dict[str, str]:
    """Every node's artifact key for these parameters, computed without running anything."""
    return {step.label: step.key for step in plan(spec, params, ArtifactStore())}


@dataclass(frozen=True)
class PlannedStep:
    """What a run would do at one node: its key, and whether the store already has it."""

    label: str
    stage: str
    version: int
    key: str
    status: str  # cached, resumes, computes, or recomputes (--force)
    params: dict[str, Any]  # the content parameters (those in the key)
    execution: dict[str, Any]  # execution-only parameters (not in the key)
    footprint: Footprint | None = None  # estimated memory peak and stored bytes, if declared
    # unfinished builds of the same content by earlier stage versions: (version, key)
    older_builds: tuple[tuple[int, str], ...] = ()

    @property
    def computes(self) -> bool:
        """True if running the plan would build this artifact."""
        return self.status != "cached"


def _check_variants(swept: set[str], labels: list[str], stored: dict[str, dict[str, str]]) -> None:
    """Refuse a stored input for a sweep variant the run does not make (`cfr[k=9]`)."""
    variants = {f"{name}[{x}]" for name in swept for x in labels}
    for target in stored:
        if "[" in target and target not in variants:
            node = target.partition("[")[0]
            made = ", ".join(f"{node}[{x}]" for x in labels) or "none"
            raise StageError(f"--input {target}: the run makes no such variant (it makes {made})")


def plan(
    spec: FlowSpec,
    params: dict[str, dict[str, Any]],
    store: ArtifactStore,
    only: list[str] | None = None,
    force: set[str] | frozenset[str] = frozenset(),
    stored: dict[str, dict[str, str]] | None = None,
) -> list[PlannedStep]:
    """The run `run_plan` would make, node by node, without computing or writing anything."""
    steps: list[PlannedStep] = []
    planned: set[str] = set()
    recorded: dict[str, Recorded] = {}  # key -> content parameters and inputs, for footprints

    def params_of(key: str) -> Recorded:
        if key not in recorded:
            try:
                artifact = store.open(key)
                found: dict[str, dict[str, Any]] = {
                    name: params_of(k) for name, k in artifact.inputs.items()
                }
                recorded[key] = Recorded(artifact.params, found)
            except StoreError:
                recorded[key] = Recorded({})
        return recorded[key]

    def dry_run(
        stage_name: str,
        values: dict[str, Any],
        inputs: dict[str, str],
        force: bool = False,
        label: str = "",
        **_: Any,
    ) -> StageRun:
        stage = get_stage(stage_name)
        stage_params = stage.make_params(values)
        # upstream keys of this plan need not exist yet; stored inputs may be prefixes
        full = {n: k if k in planned else store.resolve(k) for n, k in inputs.items()}
        for input_key in full.values():
            if input_key not in planned:  # given from the store (--input)
                store.require_trusted(input_key)
        key = stage_key(stage_name, stage_params, full)
        if force:
            status = "recomputes"
        elif store.exists(key):
            try:
                store.require_trusted(key)  # a run stops before any work, the store untouched
                status = "cached"
            except CorruptedArtifact:
                status = "damaged"  # unreadable metadata: `--repair` sets it aside and rebuilds
        elif store.building_now(key):
            status = "resumes"
        else:
            status = "computes"
        content = stage_params.key_params()
        older: tuple[tuple[int, str], ...] = ()
        if status != "cached":
            older = tuple(store.older_builds(stage_name, stage.version, content, full))
        planned.add(key)
        upstream: dict[str, dict[str, Any]] = {n: params_of(k) for n, k in full.items()}
        recorded[key] = Recorded(content, upstream)
        estimate = None
        if stage.footprint is not None:
            estimate = stage.footprint(stage_params, upstream)
        steps.append(
            PlannedStep(
                label or stage_name,
                stage_name,
                stage.version,
                key,
                status,
                dict(recorded[key]),
                stage_params.execution_params(),
                estimate,
                older,
            )
        )
        return StageRun(stage_name, key, status == "cached", 0.0)

    nodes = tuple(only) if only is not None else None
    asked = RunRequest(flow=spec.name, only=nodes, force=tuple(sorted(force)))
    quiet = _Runner(None, None, lambda _m: None, dry_run)
    _run_nodes(ResolvedRun(spec, params, stored or {}), asked, store, quiet)
    return steps


def plan_run(request: RunRequest, store: ArtifactStore) -> list[PlannedStep]:
    """`plan` of what `run_plan(request)` would do; a bad request raises StageError."""
    resolved = request.resolve()
    only = list(request.only) if request.only is not None else None
    return plan(resolved.spec, resolved.params, store, only, set(request.force), resolved.stored)


@dataclass(frozen=True)
class ResourcePlan:
    """What a plan needs: the memory of its hungriest stage(s) and the bytes it would store."""

    memory: int  # the largest estimated peak (the sum of the `parallel` largest, run together)
    hungriest: PlannedStep | None
    stored: int
    unestimated: list[str]  # computing steps whose stage declares no footprint
    seconds: float = 0.0  # wall time, one stage after another, with the flow's start
    untimed: tuple[str, ...] = ()  # computing steps whose kind of run was never timed


def step_seconds(step: PlannedStep) -> float | None:
    """A planned step's estimated seconds (stages/timing.py), None if it cannot be estimated."""
    from gameforge.stages.timing import stage_seconds

    return stage_seconds(step.stage, step.footprint) if step.footprint is not None else None


def resource_plan(steps: list[PlannedStep], parallel_nodes: int = 1) -> ResourcePlan:
    """Sum a plan's footprints over the steps it would compute."""
    from gameforge.stages.timing import flow_start_seconds

    computing = [s for s in steps if s.computes]
    estimated = [(s, s.footprint) for s in computing if s.footprint is not None]
    estimated.sort(key=lambda pair: -pair[1].memory)
    times = {s.label: step_seconds(s) for s in computing}
    return ResourcePlan(
        memory=sum(f.memory for _s, f in estimated[: max(parallel_nodes, 1)]),
        hungriest=estimated[0][0] if estimated else None,
        stored=sum(f.stored_bytes for _s, f in estimated),
        unestimated=[s.label for s in computing if s.footprint is None],
        seconds=flow_start_seconds() + sum(t for t in times.values() if t is not None),
        untimed=tuple(label for label, t in times.items() if t is None),
    )


def preset_estimates(flow: str) -> dict[str, ResourcePlan]:
    """Each preset's whole run planned into an empty store: its estimated time and disk."""
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        empty = ArtifactStore(Path(folder) / "store")  # never created: planning writes nothing
        return {
            preset: resource_plan(plan_run(RunRequest(flow=flow, preset=preset), empty))
            for preset in get_flow(flow).presets
        }


def resource_refusal(
    needs: ResourcePlan, memory_free: int | None, disk_free: int | None
) -> str | None:
    """One line saying why the plan does not fit (memory or disk), or None if it fits."""
    from gameforge.stages.resources import human

    step = needs.hungriest
    if step is not None and memory_free is not None and needs.memory > memory_free:
        arrays = ", ".join(f"{name} {human(b)}" for name, b in step.footprint.largest())  # type: ignore[union-attr]
        return (
            f"stage {step.label} ({step.key}) needs about {human(needs.memory)} of memory "
            f"({arrays}); {human(memory_free)} available"
        )
    if disk_free is not None and needs.stored > disk_free:
        return f"the run would store up to {human(needs.stored)}; {human(disk_free)} free"
    return None


def start_record(
    request: RunRequest,
    store: ArtifactStore,
    steps: list[PlannedStep],
    command: str,
    extra: dict[str, Any] | None = None,
) -> tuple[RunLedger, RunRecord]:
    """Write a run's record (status running, each planned step's key and how: cached,
    computes ...); (the ledger, the record)."""
    record = RunRecord(
        run_id=new_run_id(request.flow),
        flow=request.flow,
        preset=request.preset,
        overrides=list(request.overrides),
        command=command,
        nodes={step.label: {"key": step.key, "planned": step.status} for step in steps},
        extra=dict(extra or {}),
    )
    ledger = RunLedger(store)
    ledger.write(record)
    return ledger, record
