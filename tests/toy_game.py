"""A toy game declared as docs/architecture.md's "add a game" recipe says: its stages
(tests/toy_stages.py), its flow and figure here, and its declaration `GAME`."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from gameforge.artifacts import Artifact
from gameforge.flows.plots import common
from gameforge.flows.specs import FlowSpec, Node
from gameforge.games import Game, TestRun

TOY = FlowSpec(
    name="toy",
    description="squares, then doubled",
    nodes=(Node("toy-squares"), Node("toy-double", inputs={"squares": "toy-squares"})),
    presets={
        "tiny": {"toy-squares": {"n": 400}},
        "small": {},  # the stages' defaults
        "paper": {"toy-squares": {"n": 10**8}},
    },
)
FLOWS = (TOY,)


def doubled_plot(artifact: Artifact, out: Path, hand: str | None = None) -> str:
    """The doubled squares against their index."""
    with common.figure(out) as (_fig, ax):
        ax.plot(np.asarray(artifact["doubled"][:]))
        ax.set(title=f"toy-double {artifact.key}", xlabel="index", ylabel="2 i^2")
    return "doubled squares"


def squares_plot(artifact: Artifact, out: Path, hand: str | None = None) -> str:
    """The squares against their index."""
    with common.figure(out) as (_fig, ax):
        ax.plot(np.asarray(artifact["squares"][:]))
        ax.set(title=f"toy-squares {artifact.key}", xlabel="index", ylabel="i^2")
    return "squares"


PLOTTERS = {"toy-squares": squares_plot, "toy-double": doubled_plot}

GAME = Game(
    name="toy",
    stages={"tests.toy_stages": ("toy-squares", "toy-double")},
    flows="tests.toy_game",
    plots="tests.toy_game",
    test_runs={"toy": TestRun(("toy-squares.n=40",))},
)
