"""Figures of artifacts (`gameforge artifacts plot KEY`): one PNG per artifact, by stage.

Each game's module keeps a `PLOTTERS` table from stage name to figure: adding a plot is a
function there and one entry in its game's table. Helpers they share are in `common`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gameforge.artifacts import Artifact
from gameforge.flows.plots import blokus, hearts, nlhe, poker
from gameforge.flows.plots.common import Plotter, capture_figures
from gameforge.stages.base import StageError


def _merged(*tables: dict[str, Plotter]) -> dict[str, Plotter]:
    merged: dict[str, Plotter] = {}
    for table in tables:
        for stage, plotter in table.items():
            if stage in merged:
                raise RuntimeError(f"two plots for stage {stage!r}")
            merged[stage] = plotter
    return merged


PLOTTERS: dict[str, Plotter] = _merged(
    poker.PLOTTERS, nlhe.PLOTTERS, hearts.PLOTTERS, blokus.PLOTTERS
)


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
