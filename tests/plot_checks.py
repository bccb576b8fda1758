"""A check shared by the game modules' plot tests: a figure is written and shows data."""

from __future__ import annotations

from pathlib import Path

from gameforge.artifacts import Artifact


def _axes_data(ax) -> bool:  # type: ignore[no-untyped-def]
    """Whether an axes draws data: a line of 2+ points or of marked points (reference lines
    across the axes do not count), a non-empty collection (scatter, error bars, fills), an
    image, or bars."""
    for line in ax.get_lines():
        if line.get_transform() is not ax.transData:  # axhline / axvline: a reference
            continue
        n = len(line.get_xdata())
        drawn = n >= 2 and line.get_linestyle() not in ("None", "")
        marked = n >= 1 and line.get_marker() not in (None, "None", "")
        if drawn or marked:
            return True
    if any(len(c.get_paths()) or len(c.get_offsets()) for c in ax.collections):
        return True
    return bool(ax.images) or bool(ax.patches)


def assert_plot_has_data(artifact: Artifact, out: Path, min_axes: int = 1) -> str:
    """Render the artifact's figure to `out`: a PNG is written, and at least `min_axes` axes
    (each visible one but those with only text) draw data; returns the description."""
    from gameforge.flows.plots import render

    description, figures = render(artifact, out)
    assert description and out.exists() and out.stat().st_size > 10_000
    assert figures, "the plot wrote no figure"
    with_data = [ax for fig in figures for ax in fig.axes if ax.axison and _axes_data(ax)]
    assert len(with_data) >= min_axes, (artifact.stage, len(with_data))
    return description
