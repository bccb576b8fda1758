"""Time estimates: the seconds a stage run takes, from its footprint's count of work.

Each footprint counts its stage's `work`, the operations its main loop repeats (hands ranked,
CFR node visits, games times simulations, multiply-adds of SGD). A run takes about
`fixed + rate x work` seconds: `fixed` is what does not scale (loading inputs and compiled
kernels, the commit), `rate` the seconds per unit. Both are fitted per stage (per CFR
algorithm, per player kind: `Footprint.work_kind`) to the `duration_s` that artifacts record,
less the seconds of parts a stage times on its own (`Footprint.parts`, each its own model),
by `bench/stage_times.py fit`, which writes them to `timings.json` beside this module with the
machine they were measured on. A flow adds `flow_start_s` (Python, Prefect's temporary API,
Dask's local cluster). On another machine the estimates scale with its speed: refit them there
from its own stores.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from gameforge.stages.resources import Footprint, Recorded

TIMINGS = Path(__file__).with_name("timings.json")


@dataclass(frozen=True)
class TimeModel:
    """A stage's (or one work kind's) fitted constants and the runs they were fitted to."""

    fixed_s: float
    rate_s: float  # seconds per unit of work
    runs: int


@lru_cache(maxsize=1)
def timings() -> dict[str, Any]:
    """The fitted constants (`timings.json`): machine, flow start, one model per stage kind."""
    if not TIMINGS.exists():
        return {"machine": "", "flow_start_s": 0.0, "models": {}}
    return json.loads(TIMINGS.read_text(encoding="utf-8"))


def model_name(stage: str, footprint: Footprint) -> str:
    """The time model a stage run uses: the stage's, or its work kind's within it."""
    return f"{stage}/{footprint.work_kind}" if footprint.work_kind else stage


def time_model(name: str) -> TimeModel | None:
    """The fitted model `name`, None when no run of it was measured."""
    found = timings()["models"].get(name)
    return TimeModel(**found) if found else None


def part_model_name(stage: str, part: str) -> str:
    """The time model of a part a stage times on its own (`Footprint.parts`)."""
    return f"{stage}:{part}"


def stage_seconds(stage: str, footprint: Footprint) -> float | None:
    """Estimated seconds of a stage run; None when its kind (or a part of it with work) was
    never measured."""
    model = time_model(model_name(stage, footprint))
    if model is None:
        return None
    seconds = model.fixed_s + model.rate_s * footprint.work
    if footprint.budget_s is not None:
        budget = model.fixed_s + footprint.budget_s  # it stops at its wall-time budget
        seconds = min(seconds, budget) if footprint.work else budget
    for part, work in footprint.parts.items():
        if work <= 0:
            continue
        part_model = time_model(part_model_name(stage, part))
        if part_model is None:
            return None
        seconds += part_model.fixed_s + part_model.rate_s * work
    return seconds


def part_seconds(meta: dict[str, Any]) -> dict[str, float]:
    """The seconds of the parts an artifact's stage timed on its own (none for most)."""
    found = meta.get("part_seconds") or {}
    return {str(k): float(v) for k, v in found.items()}


def flow_start_seconds() -> float:
    """A flow's fixed cost beside its stages (interpreter, Prefect, Dask), measured."""
    return float(timings()["flow_start_s"])


# How far estimates fall from measured wall times: every tiny preset's flow and the measured
# stages of the small ones (tests/test_plots.py checks the tiny runs of the tests' store).
FACTOR = 2.0


def time_basis() -> str:
    """What an estimate means: serial, fitted where, and how close to measured runs."""
    where = timings()["machine"] or "no machine (run bench/stage_times.py fit)"
    return (
        f"of wall time, stages one after another (fitted on {where}; measured tiny runs "
        f"came within a factor {FACTOR:g})"
    )


def human_seconds(seconds: float) -> str:
    """A duration at a useful precision: 8 s, 2.5 min, 3.1 h, 4.2 days."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 90 * 60:
        return f"{seconds / 60:.1f} min"
    if seconds < 48 * 3600:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.1f} days"


def recorded_inputs(store: Any, key: str) -> Recorded:
    """An artifact's parameters with its inputs', as a plan passes them to footprints."""
    artifact = store.open(key)
    return Recorded(
        artifact.params, {n: recorded_inputs(store, k) for n, k in artifact.inputs.items()}
    )


def recorded_footprint(store: Any, key: str) -> Footprint | None:
    """The footprint a stored artifact's stage declares for its recorded parameters."""
    from gameforge.stages.registry import get_stage

    artifact = store.open(key)
    stage = get_stage(artifact.stage)
    if stage.footprint is None:
        return None
    fields = stage.params_model.model_fields
    values = {k: v for k, v in artifact.params.items() if k in fields}
    values.update(artifact.meta.get("execution") or {})
    upstream: dict[str, dict[str, Any]] = {
        n: recorded_inputs(store, k) for n, k in artifact.inputs.items()
    }
    return stage.footprint(stage.make_params(values), upstream)
