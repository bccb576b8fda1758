"""The no-limit CNN flow: three generations of players and their league."""

from __future__ import annotations

from typing import Any

from gameforge.flows.specs.base import FlowSpec, Node

# No-limit CNN players (the CNN paper): generation 1 learns from heuristic self-play, generation
# g from equal shares of every pairing of {heuristic, generations 1..g-1}; then the league over
# Random, Heuristic and every generation. Each generation trains from scratch.
_NLHE_NET = {"filters": [32, 64], "kernel": 5, "dense": 1024}
_NLHE = {
    # preset: (generation-1 hands, later generations' hands, train params, league hands)
    "tiny": (2_000, 1_200, {"epochs": 2, "filters": [8, 16], "kernel": 5, "dense": 64}, 400),
    "small": (20_000, 6_000, {"epochs": 2, **_NLHE_NET}, 2_000),
    "paper": (200_000, 200_000, {"epochs": 3, **_NLHE_NET}, 100_000),
}
# Hands of each league pairing scored again by AIVAT where a player's strategy is known (about
# 10-20 ms a hand): the tiny preset keeps to its minute.
_AIVAT_HANDS = {"tiny": 100, "small": 2_000, "paper": 5_000}
NLHE_GENERATIONS = 3
# Presets whose CNNs score through torch.compile (not tiny: compiling would outlast its games).
_COMPILED = ("small", "paper")


def _nlhe_nodes() -> tuple[Node, ...]:
    nodes = []
    for g in range(1, NLHE_GENERATIONS + 1):
        earlier = {f"cnn.{i}": f"train-{i + 1}" for i in range(g - 1)}
        nodes.append(Node("nlhe-histories", inputs=earlier, id=f"histories-{g}"))
        nodes.append(Node("nlhe-train", inputs={"histories": f"histories-{g}"}, id=f"train-{g}"))
    league = {f"cnn.{i}": f"train-{i + 1}" for i in range(NLHE_GENERATIONS)}
    nodes.append(Node("nlhe-league", inputs=league, id="league"))
    return tuple(nodes)


def _nlhe_preset(
    name: str, first: int, later: int, train: dict[str, Any], league: int
) -> dict[str, dict[str, Any]]:
    """One preset: every generation's histories and training, then the league."""
    compiled = {"compiled": True} if name in _COMPILED else {}
    generations = range(1, NLHE_GENERATIONS + 1)
    return {
        **{
            f"histories-{g}": {
                "players": ["heuristic"],
                "hands": first if g == 1 else later,
                "seed": g,
                **(compiled if g > 1 else {}),
            }
            for g in generations
        },
        **{f"train-{g}": dict(train) for g in generations},
        "league": {
            "players": ["random", "heuristic"],
            "hands": league,
            "aivat_hands": _AIVAT_HANDS[name],
            **compiled,
        },
    }


NLHE_CNN = FlowSpec(
    name="nlhe-cnn",
    description="No-limit hold'em CNN players: heuristic hands, 3 generations, league in BB/hand",
    nodes=_nlhe_nodes(),
    findings=("league",),
    presets={name: _nlhe_preset(name, *values) for name, values in _NLHE.items()},
)

FLOWS = (NLHE_CNN,)
