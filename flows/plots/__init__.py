"""Figures of artifacts (`gameforge artifacts plot KEY`): one PNG per artifact, by stage.

Each game's module (named by its declaration, `games/<game>.py`) keeps a `PLOTTERS` table from
stage name to figure: adding a plot is a function there and one entry in its game's table.
Helpers they share are in `common`."""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from gameforge.artifacts import Artifact
from gameforge.flows.plots.common import Plotter, capture_figures
from gameforge.games import GAMES, Game
from gameforge.stages.base import StageError


def _merged(*tables: dict[str, Plotter]) -> dict[str, Plotter]:
    merged: dict[str, Plotter] = {}
    for table in tables:
        for stage, plotter in table.items():
            if stage in merged:
                raise RuntimeError(f"two plots for stage {stage!r}")
            merged[stage] = plotter
    return merged


def plotters_of(games: Iterable[Game]) -> dict[str, Plotter]:
    """The figures of these games' stages by stage name (a stage drawn twice is an error)."""
    return _merged(*(importlib.import_module(game.plots).PLOTTERS for game in games))


PLOTTERS: dict[str, Plotter] = plotters_of(GAMES)


def plot(artifact: Artifact, out: Path, hand: str | None = None) -> str:
    """Write the artifact's figure to `out` (PNG); returns a one-line description."""
    return render(artifact, out, hand)[0]


def render(artifact: Artifact, out: Path, hand: str | None = None) -> tuple[str, list[Any]]:
    """Write the artifact's figure to `out` (PNG); returns its one-line description and the
    matplotlib Figure objects written (closed, with their artists: what tests inspect)."""
    plotter = PLOTTERS.get(artifact.stage)
    if plotter is None:
        raise StageError(f"stage {artifact.stage!r} has no plot")
    with capture_figures() as figures:
        description = plotter(artifact, out, hand)
    return description, figures
