"""Run a flow's stages in order against the store (the plain-Python core of every flow)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from artifacts import ArtifactStore
from flows.specs import FlowSpec, sweep_values
from stages.base import StageError, get_stage
from stages.executor import Executor
from stages.progress import Progress
from stages.runner import StageRun, run_stage


def run_plan(
    spec: FlowSpec,
    params: dict[str, dict[str, Any]],
    store: ArtifactStore,
    executor: Executor | None = None,
    force: set[str] | frozenset[str] = frozenset(),
    only: list[str] | None = None,
    progress: Progress | None = None,
    log: Callable[[str], None] = print,
    run_one: Callable[..., StageRun] = run_stage,
) -> dict[str, StageRun]:
    """Run `only` (default: every) node of `spec` in order, feeding each its upstream keys.

    `only` and `force` name nodes; a stage name stands for every node running that stage.
    """
    results: dict[str, StageRun] = {}
    names = {n.name for n in spec.nodes}
    wanted = set(only) if only is not None else names
    forced = {n.name for n in spec.nodes if n.name in force or n.stage in force}
    swept = spec.swept_stages()
    labels: list[str] = []  # one label per sweep value, e.g. "k=8"
    if spec.sweep is not None:
        stage, param = spec.sweep
        labels = [f"{param}={v[param]}" for v in sweep_values(spec, params[stage], stage)]
    for node in spec.nodes:
        if node.name not in wanted and node.stage not in wanted:
            continue
        many = get_stage(node.stage).many_inputs
        variants = range(len(labels)) if node.name in swept else [None]
        for v in variants:
            inputs: dict[str, str] = {}
            for name, up in node.inputs.items():
                if up not in swept:
                    inputs[name] = results[up].key
                elif v is not None:
                    inputs[name] = results[f"{up}[{labels[v]}]"].key
                elif name in many:  # gather every variant, in sweep order
                    for i, label in enumerate(labels):
                        inputs[f"{name}.{i}"] = results[f"{up}[{label}]"].key
                else:
                    raise StageError(f"{node.name}: input {name} varies with the sweep")
            values = params.get(node.name, {})
            if v is not None and spec.sweep is not None and node.name == spec.sweep[0]:
                values = sweep_values(spec, values, node.name)[v]
            label = node.name if v is None else f"{node.name}[{labels[v]}]"
            results[label] = run_one(
                node.stage,
                values,
                inputs,
                store=store,
                executor=executor,
                force=node.name in forced,
                progress=progress,
                log=log,
            )
    return results
