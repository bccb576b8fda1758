"""What several benchmarks share: building a stage's upstream artifacts, OpenSpiel's reference
rate of random play. Imported by the scripts as `_shared` (run as `python bench/bench_x.py`)."""

from __future__ import annotations

import time
from collections.abc import Callable
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
    spec: FlowSpec,
    params: dict[str, dict[str, Any]],
    store: ArtifactStore,
    stage: str,
    log: Callable[[str], None],
) -> dict[str, StageRun]:
    """Build (or reuse) every node of flow `spec` that `stage` depends on, with a local Dask
    cluster; the plan's results by node."""
    from gameforge.flows.pipeline import run_plan
    from gameforge.flows.runtime import dask_executor

    upstream = [s for s in spec.upstream(stage) if s != stage]
    with dask_executor(None) as executor:
        return run_plan(spec, params, store, executor, only=upstream, log=log)


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
