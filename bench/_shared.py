"""What several benchmarks share: building a stage's upstream artifacts, OpenSpiel's reference
rate of random play, another commit's copy of a module to time side by side. Imported by the
scripts as `_shared` (run as `python bench/bench_x.py`)."""

from __future__ import annotations

import importlib.util
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gameforge.artifacts import ArtifactStore
    from gameforge.flows.specs.base import FlowSpec
    from gameforge.stages.runner import StageRun


def elapsed_log() -> Callable[[str], None]:
    """A log that prefixes each message with the seconds since it was made."""
    t0 = time.monotonic()

    def log(message: str) -> None:
        print(f"{time.monotonic() - t0:8.1f} s  {message}", flush=True)

    return log


def build_upstream(
    spec: FlowSpec, preset: str, store: ArtifactStore, stage: str, log: Callable[[str], None]
) -> dict[str, StageRun]:
    """Build (or reuse) every node of flow `spec` at `preset` that `stage` depends on, with a
    local Dask cluster; the plan's results by node."""
    from gameforge.flows.pipeline import run_plan
    from gameforge.flows.request import RunRequest
    from gameforge.flows.runtime import dask_executor

    upstream = [s for s in spec.upstream(stage) if s != stage]
    request = RunRequest(flow=spec.name, preset=preset, only=upstream)
    with dask_executor(None) as executor:
        return run_plan(request, store, executor, log=log)


def random_play(game: Any, seconds: float) -> tuple[int, float]:
    """(episodes, seconds taken) of uniformly random play of a pyspiel game, chance outcomes
    included, stepped from Python for about `seconds`."""
    import numpy as np

    rng = np.random.default_rng(0)
    episodes = 0
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                state.apply_action(outcomes[rng.integers(len(outcomes))][0])
            else:
                legal = state.legal_actions()
                state.apply_action(legal[rng.integers(len(legal))])
        episodes += 1
    return episodes, time.perf_counter() - t0


def reference_module(path: str, name: str) -> ModuleType:
    """Another implementation of a module (e.g. a previous commit's file), loaded from a copy
    under `name` for a side-by-side timing.

    numba caches compiled code beside the source file, under the module name it was loaded as:
    loaded from a copy, the reference leaves nothing that a later normal import of the original
    file (a worktree run) would try to unpickle under this name."""
    copy = Path(tempfile.mkdtemp(prefix="reference-")) / f"{name}.py"
    shutil.copy(path, copy)
    spec = importlib.util.spec_from_file_location(name, copy)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module
