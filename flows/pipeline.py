"""Run a flow's stages in order against the store (the plain-Python core of every flow)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from artifacts import ArtifactStore
from flows.specs import FlowSpec
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
    """Run `only` (default: every) stage of `spec` in order, feeding each its upstream keys."""
    results: dict[str, StageRun] = {}
    wanted = set(only) if only is not None else {n.stage for n in spec.nodes}
    for node in spec.nodes:
        if node.stage not in wanted:
            continue
        inputs = {name: results[up].key for name, up in node.inputs.items()}
        results[node.stage] = run_one(
            node.stage,
            params.get(node.stage, {}),
            inputs,
            store=store,
            executor=executor,
            force=node.stage in force,
            progress=progress,
            log=log,
        )
    return results
