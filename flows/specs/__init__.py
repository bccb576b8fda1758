"""Flow specifications: the stages each flow chains, and its presets. No Prefect here.

Each game's flows live in their own module; `FLOWS` gathers them, in the order `stage run`
searches for a stage's presets.
"""

from __future__ import annotations

from gameforge.flows.specs.base import (
    FlowSpec,
    Node,
    parse_value,
    pname_in,
    stored_inputs,
    sweep_values,
)
from gameforge.flows.specs.blokus import BLOKUS_ITERATIONS, BLOKUS_ZERO
from gameforge.flows.specs.hearts import HEARTS_FALCON, HEARTS_TRIALS, HEARTS_VARIANTS
from gameforge.flows.specs.nlhe import NLHE_CNN, NLHE_GENERATIONS
from gameforge.flows.specs.poker import (
    LHE_ABSTRACTION,
    LHE_ABSTRACTION_PA,
    LHE_LEAGUE,
    LHE_SOLVE,
    SOLVE_LOSSLESS,
)
from gameforge.stages.base import StageError
from gameforge.stages.registry import get_stage

__all__ = [
    "BLOKUS_ITERATIONS",
    "FLOWS",
    "HEARTS_TRIALS",
    "HEARTS_VARIANTS",
    "NLHE_GENERATIONS",
    "FlowSpec",
    "Node",
    "flow_of_stage",
    "get_flow",
    "parse_value",
    "pname_in",
    "single_stage_flow",
    "stored_inputs",
    "sweep_values",
]

# `stage run cfr` takes its presets from the first flow that has the stage: the lossless one.
FLOWS: dict[str, FlowSpec] = {
    f.name: f
    for f in (
        LHE_ABSTRACTION,
        LHE_ABSTRACTION_PA,
        SOLVE_LOSSLESS,
        LHE_SOLVE,
        LHE_LEAGUE,
        NLHE_CNN,
        HEARTS_FALCON,
        BLOKUS_ZERO,
    )
}


def single_stage_flow(stage: str) -> FlowSpec:
    """A flow of one node for a stage that no flow runs: its defaults at every preset."""
    get_stage(stage)
    presets: dict[str, dict[str, dict]] = {preset: {} for preset in ("tiny", "small", "paper")}
    return FlowSpec(f"stage:{stage}", f"the {stage} stage alone", (Node(stage),), presets)


def get_flow(name: str) -> FlowSpec:
    """A flow by name (`stage:NAME` is one stage alone); an unknown name raises StageError."""
    if name.startswith("stage:"):
        return single_stage_flow(name.removeprefix("stage:"))
    if name not in FLOWS:
        raise StageError(f"unknown flow {name!r} (valid: {', '.join(FLOWS)})")
    return FLOWS[name]


def flow_of_stage(stage: str) -> FlowSpec:
    """The first flow that runs `stage`, else a flow of that stage alone (its defaults)."""
    get_stage(stage)
    for flow in FLOWS.values():
        if any(n.stage == stage for n in flow.nodes):
            return flow
    return single_stage_flow(stage)
