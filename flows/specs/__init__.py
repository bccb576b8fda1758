"""Flow specifications: the stages each flow chains, and its presets. No Prefect here.

Each game's flows live in their own module, named by its declaration (`games/<game>.py`);
`FLOWS` gathers them, in the order `stage run` searches for a stage's presets.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from dataclasses import dataclass

from gameforge.flows.specs.base import (
    FlowSpec,
    Node,
    parse_value,
    pname_in,
    stored_inputs,
    sweep_values,
)
from gameforge.flows.specs.blokus import BLOKUS_ITERATIONS, BOOTSTRAP_ITERATIONS
from gameforge.flows.specs.hearts import HEARTS_TRIALS, HEARTS_VARIANTS
from gameforge.flows.specs.nlhe import NLHE_GENERATIONS
from gameforge.games import GAMES, Game
from gameforge.stages.base import StageError
from gameforge.stages.registry import get_stage

__all__ = [
    "BLOKUS_ITERATIONS",
    "BOOTSTRAP_ITERATIONS",
    "FLOWS",
    "HEARTS_TRIALS",
    "HEARTS_VARIANTS",
    "NLHE_GENERATIONS",
    "FlowSpec",
    "Node",
    "StageTarget",
    "flow_of_stage",
    "flows_of",
    "get_flow",
    "parse_value",
    "pname_in",
    "resolve_stage",
    "single_stage_flow",
    "stored_inputs",
    "sweep_values",
]


def flows_of(games: Iterable[Game]) -> dict[str, FlowSpec]:
    """The flows of these games by name, in the games' order and each game's own."""
    return {spec.name: spec for game in games for spec in importlib.import_module(game.flows).FLOWS}


# `stage run cfr` takes its presets from the first flow that has the stage: the lossless one.
FLOWS: dict[str, FlowSpec] = flows_of(GAMES)


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
    return resolve_stage(stage).flow


@dataclass(frozen=True)
class StageTarget:
    """Where `stage run` takes a stage's presets from: a flow, one of its nodes, and the
    other flows and nodes that were not chosen (so the command can say so)."""

    flow: FlowSpec
    node: Node
    other_flows: tuple[str, ...]
    other_nodes: tuple[str, ...]


def resolve_stage(stage: str, flow: str | None = None, node: str | None = None) -> StageTarget:
    """The flow and node running `stage`: the given ones, else the first flow and node that
    run it (a flow of the stage alone when none does); a mismatch raises StageError."""
    get_stage(stage)
    having = [f for f in FLOWS.values() if any(n.stage == stage for n in f.nodes)]
    if flow is not None:
        spec = get_flow(flow)
        if spec not in having and not spec.name.startswith("stage:"):
            where = ", ".join(f.name for f in having) or "none (it runs alone)"
            raise StageError(f"flow {spec.name} has no {stage} node (flows with it: {where})")
    else:
        spec = having[0] if having else single_stage_flow(stage)
    candidates = [n for n in spec.nodes if n.stage == stage]
    if node is not None:
        chosen = [n for n in candidates if n.name == node]
        if not chosen:
            names = ", ".join(n.name for n in candidates)
            raise StageError(
                f"--node {node!r}: flow {spec.name} has no node {node!r} running {stage} "
                f"(valid: {names})"
            )
        target = chosen[0]
    else:
        target = candidates[0]
    return StageTarget(
        spec,
        target,
        tuple(f.name for f in having if f is not spec),
        tuple(n.name for n in candidates if n is not target),
    )
