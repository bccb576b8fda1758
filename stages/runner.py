"""Run one stage against the store: cache hit, resume, or compute; no Prefect here."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from gameforge.artifacts import ArtifactStore, artifact_key
from gameforge.stages.base import StageContext, StageError, StageParams
from gameforge.stages.executor import Executor, InProcessExecutor
from gameforge.stages.progress import LabelledProgress, NullProgress, Progress
from gameforge.stages.registry import get_stage


@dataclass(frozen=True)
class StageRun:
    """The outcome of asking for a stage's artifact."""

    stage: str
    key: str
    cached: bool
    seconds: float


@cache
def code_version() -> str:
    """The package version plus the git commit of the checkout, when there is one."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        base = version("gameforge")
    except PackageNotFoundError:
        base = "unknown"
    try:
        root = Path(__file__).resolve().parent.parent
        sha = subprocess.run(
            ["git", "-C", str(root), "describe", "--always", "--dirty"],
            capture_output=True,
            text=True,
            timeout=5,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        sha = ""
    return f"{base}+{sha}" if sha else base


def stage_key(name: str, params: StageParams, inputs: dict[str, str]) -> str:
    """The artifact key a stage run with these parameters and inputs produces."""
    stage = get_stage(name)
    return artifact_key(stage.name, stage.version, params.key_params(), inputs)


def run_stage(
    name: str,
    params: StageParams | dict[str, Any] | None,
    inputs: dict[str, str] | None = None,
    store: ArtifactStore | None = None,
    executor: Executor | None = None,
    force: bool = False,
    progress: Progress | None = None,
    log: Callable[[str], None] = print,
    label: str | None = None,
) -> StageRun:
    """Produce (or reuse) the artifact of stage `name`: its key, and whether it was cached.

    `label` names the flow node in log lines and progress bars (default: the stage's name).
    """
    stage = get_stage(name)
    shown = label or name
    if not isinstance(params, StageParams):
        params = stage.make_params(params)
    inputs = dict(inputs or {})
    unknown = sorted(n for n in inputs if stage.declared(n) is None)
    if unknown:
        raise StageError(f"stage {name}: unknown inputs {', '.join(unknown)}")
    given = {stage.declared(n) for n in inputs}
    missing = sorted(set(stage.inputs) - stage.optional_inputs - given)
    if missing:
        raise StageError(f"stage {name}: missing inputs {', '.join(missing)}")
    store = store or ArtifactStore()
    opened = {input_name: store.open(key) for input_name, key in inputs.items()}
    inputs = {input_name: artifact.key for input_name, artifact in opened.items()}  # full keys
    for input_name, artifact in opened.items():
        if not stage.accepts(input_name, artifact.stage):
            raise StageError(
                f"stage {name}: input {input_name} must come from "
                f"{stage.inputs[stage.declared(input_name) or input_name]}, "
                f"got {artifact.stage} ({artifact.key})"
            )
    if stage.check_inputs is not None:
        try:
            stage.check_inputs(params, opened)
        except StageError as exc:
            raise StageError(f"stage {name}: {exc}") from None
    t0 = time.monotonic()
    key = stage_key(name, params, inputs)
    if store.exists(key) and not force:
        log(f"{shown}: cache hit {key}, skipped")
        return StageRun(name, key, True, time.monotonic() - t0)

    def waiting(key: str, holder: str) -> None:
        log(f"{shown}: {key} is being built by {holder}; waiting to reuse it")

    with store.building(
        stage.name,
        stage.version,
        params.key_params(),
        inputs,
        extra_meta={
            "code_version": code_version(),
            "description": stage.description,
            "execution": params.execution_params(),
        },
        force=force,
        on_wait=waiting,
    ) as writer:
        if writer is None:
            log(f"{shown}: {key} was built by another process, reused")
            return StageRun(name, key, True, time.monotonic() - t0)
        log(f"{shown}: computing {key}" + (" (resuming)" if writer.resumed else ""))
        ctx = StageContext(
            params=params,
            inputs=opened,
            writer=writer,
            executor=executor or InProcessExecutor(),
            progress=LabelledProgress(progress, shown) if progress else NullProgress(),
            log=log,
        )
        summary = stage.run(ctx)
        writer.commit(summary)
    seconds = time.monotonic() - t0
    log(f"{shown}: committed {key} in {seconds:.1f} s")
    return StageRun(name, key, False, seconds)
