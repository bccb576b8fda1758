"""What every game's figures share: pyplot set-up and saving, the league heat map, poker hands."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any

import numpy as np

from gameforge.artifacts import Artifact
from gameforge.stages.base import StageError
from gameforge.stages.poker.params import GameParams
from gameforge.stages.reporting import width_ratio

# A figure of one artifact: writes the PNG `out` (`hand` is the `--hand` option, or None) and
# returns a one-line description.
Plotter = Callable[[Artifact, Path, str | None], str]


def pyplot():  # type: ignore[no-untyped-def]
    """matplotlib's pyplot on the Agg backend (files only: no display is needed)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


# The figures `figure` wrote while `capture_figures` is active (None: not capturing).
_CAPTURED: ContextVar[list[Any] | None] = ContextVar("captured_figures", default=None)


@contextmanager
def capture_figures() -> Iterator[list[Any]]:
    """Collect every matplotlib Figure that `figure` writes inside the block (closed, but still
    holding its artists), for callers that inspect a plot rather than only its PNG."""
    captured: list[Any] = []
    token = _CAPTURED.set(captured)
    try:
        yield captured
    finally:
        _CAPTURED.reset(token)


@contextmanager
def figure(out: Path, dpi: int = 110, **subplots: Any) -> Iterator[tuple[Any, Any]]:
    """(figure, axes) of `pyplot.subplots(**subplots)`; when the block ends the figure is laid
    out and written to `out` (PNG), and freed even if the block raised.

    `layout="constrained"` (a `subplots` option) keeps long titles, colour bars and legends
    outside the axes inside the image; without a layout engine the figure gets `tight_layout`.
    """
    plt = pyplot()
    fig, axes = plt.subplots(**subplots)
    try:
        yield fig, axes
        if fig.get_layout_engine() is None:
            fig.tight_layout()
        fig.savefig(out, dpi=dpi)
        captured = _CAPTURED.get()
        if captured is not None:
            captured.append(fig)
    finally:
        plt.close(fig)


MUTED = "#e4e4e4"  # cells whose 95% interval contains 0: no colour claims a difference


def heat_map(  # type: ignore[no-untyped-def]
    ax,
    table: np.ndarray,
    ci: np.ndarray,
    labels: list[str],
    digits: int,
    *,
    mute_insignificant: bool = False,
    colour_bar: str | None = None,
):
    """A row-versus-column league table: each cell's result and its 95% interval; returns the
    image.

    `mute_insignificant` paints cells whose interval contains 0 in flat grey (`MUTED`): no
    colour for a difference the data do not show; `colour_bar` adds a colour bar with that label
    (the unit, e.g. "row player's winnings (mbb/g)")."""
    n = len(labels)
    table = np.asarray(table, dtype=np.float64)
    ci = np.asarray(ci, dtype=np.float64)
    off_diagonal = ~np.eye(n, dtype=bool)
    significant = off_diagonal & (np.abs(table) > ci) if mute_insignificant else off_diagonal
    limit = max(1e-9, float(np.abs(table).max()))
    cmap = pyplot().get_cmap("RdBu").with_extremes(bad=MUTED if mute_insignificant else "white")
    values = np.ma.masked_array(table, mask=~significant) if mute_insignificant else table
    image = ax.imshow(values, cmap=cmap, vmin=-limit, vmax=limit)
    for i in range(n):
        for j in range(n):
            if i == j:
                continue
            if significant[i, j]:
                dark = abs(table[i, j]) > 0.6 * limit  # white text where the colour is deep
                colour = "white" if dark else "black"
            else:
                colour = "#555555"
            ax.text(
                j,
                i,
                f"{table[i, j]:+.{digits}f}\n±{ci[i, j]:.{digits}f}",
                ha="center",
                va="center",
                color=colour,
            )
    if mute_insignificant:
        from matplotlib.patches import Rectangle

        for i in range(n):  # the diagonal (no game against oneself) stays white, not "muted"
            ax.add_patch(Rectangle((i - 0.5, i - 0.5), 1, 1, facecolor="white", edgecolor="none"))
    ax.set_xticks(range(n), labels)
    ax.set_yticks(range(n), labels)
    ax.set_xlabel("column player")
    if colour_bar is not None:
        bar = ax.figure.colorbar(image, ax=ax, shrink=0.8)
        bar.set_label(colour_bar)
    return image


def game_def(artifact: Artifact):  # type: ignore[no-untyped-def]
    """The poker game an artifact was computed for."""
    return GameParams(game=artifact.params["game"]).game_def()


def parse_hand(text: str, game) -> list[int]:  # type: ignore[no-untyped-def]
    """Hole cards then board, e.g. `Jc9h/4d5d9d` (`/` and `|` are optional separators)."""
    cards = game.parse_cards(text.replace("/", "").replace("|", ""))
    if len(cards) < game.num_hole_cards:
        raise StageError(f"hand {text!r}: needs {game.num_hole_cards} hole cards first")
    return cards


def title_hand(cards: list[int], game) -> str:  # type: ignore[no-untyped-def]
    """`hole | board`, or the hole cards alone before the flop."""
    hole = game.format_cards(cards[: game.num_hole_cards])
    board = game.format_cards(cards[game.num_hole_cards :])
    return f"{hole} | {board}" if board else hole


def hand_index(indexer, cards: list[int]) -> int:  # type: ignore[no-untyped-def]
    """The canonical index of a hand in its indexer's last round (bad hands raise)."""
    return int(indexer.index(np.array([cards], np.int8), indexer.rounds - 1, validate=True)[0])


def stage_title(artifact: Artifact, details: str) -> str:
    """A figure title that names the stage and its key parameters: `stage: details`."""
    return f"{artifact.stage}: {details}" if details else artifact.stage


def key_footnote(fig, artifact: Artifact) -> None:  # type: ignore[no-untyped-def]
    """The artifact's key in small grey type at the figure's bottom right (where it came from);
    a figure-level x label, so either layout engine keeps it clear of the axes and legends."""
    fig.supxlabel(artifact.key, x=0.995, ha="right", fontsize=7, color="grey")


def integer_ticks(axis) -> None:  # type: ignore[no-untyped-def]
    """Whole-number ticks in plain notation (epochs, games, steps: no 2.5 or 1e3 offsets)."""
    from matplotlib.ticker import FuncFormatter, MaxNLocator

    lo, hi = axis.get_view_interval()
    if hi - lo < 2:  # one point (one epoch): widen, else every tick would read the same number
        middle = round((lo + hi) / 2)
        axis.set_view_interval(middle - 1, middle + 1, ignore=True)
    axis.set_major_locator(MaxNLocator(integer=True))
    axis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:,.0f}"))


def plain_ticks(axis) -> None:  # type: ignore[no-untyped-def]
    """Plain tick labels: no scientific notation and no offset (no `9.8x10^0`)."""
    from matplotlib.ticker import ScalarFormatter

    formatter = ScalarFormatter(useOffset=False)
    formatter.set_scientific(False)
    axis.set_major_formatter(formatter)


def reference_line(ax, y: float, label: str) -> None:  # type: ignore[no-untyped-def]
    """A labelled horizontal reference (par, break-even), in the legend with its meaning."""
    ax.axhline(y, color="grey", linestyle="--", linewidth=1, label=label, zorder=1)


def legend_below(ax, ncol: int = 3, below_points: float = 34, **kw: Any) -> None:  # type: ignore[no-untyped-def]
    """The axes' legend under its tick labels and x label (`below_points` under the axes),
    outside the data."""
    from matplotlib.transforms import offset_copy

    anchor = offset_copy(ax.transAxes, fig=ax.figure, y=-below_points, units="points")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, 0.0), bbox_transform=anchor, ncol=ncol,
              fontsize=8, frameon=False, **kw)  # fmt: skip


def single_x_range(ax, xs: np.ndarray) -> None:  # type: ignore[no-untyped-def]
    """An x range from 0 that shows a lone point honestly (not a 38-42 axis around it)."""
    xs = np.asarray(xs, dtype=np.float64)
    top = float(xs.max()) if len(xs) else 1.0
    ax.set_xlim(-0.04 * max(top, 1.0), 1.08 * max(top, 1.0))


def wrap_title(text: str, width: int = 80) -> str:
    """A long title broken into lines of at most `width` characters (never clipped)."""
    import textwrap

    return "\n".join(
        textwrap.fill(line, width, break_on_hyphens=False) for line in text.split("\n")
    )


def short_number(value: float, _pos: Any = None) -> str:
    """A tick label without exponents where a plain number reads better: 0.02, 3, 1,000."""
    if value == 0:
        return "0"
    if abs(value) >= 1e6 or abs(value) < 1e-4:
        return f"{value:.0e}"
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    return f"{value:.3g}"


def readable_log_axis(axis) -> None:  # type: ignore[no-untyped-def]
    """Plain labels on a log axis (0.1, 1, 10, not 9.8x10^0); where it spans under two decades,
    ticks at 1, 2 and 5 of each decade so it still has several labels. Call after plotting."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    low, high = sorted(axis.get_view_interval())
    if low > 0 and np.log10(high / low) < 2:
        axis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    axis.set_major_formatter(FuncFormatter(short_number))
    axis.set_minor_formatter(NullFormatter())


def store_of(artifact: Artifact):  # type: ignore[no-untyped-def]
    """The store an artifact was opened from: for figures that draw its inputs beside it."""
    return artifact.store


def aivat_panel(ax, scored: dict, unit: str) -> None:  # type: ignore[no-untyped-def]
    """A league's pairings scored by AIVAT (its summary's `aivat`): the plain and the AIVAT mean
    on the same hands, each ± its 95% interval, in `unit`."""
    names = list(scored)
    rows = np.arange(len(names))
    for shift, field, colour, label in ((-0.15, "plain", "#7a7a7a", "plain (duplicate)"),
                                        (0.15, "aivat", "#1f5fbf", "AIVAT")):  # fmt: skip
        mean = [scored[k][field][0] for k in names]
        half = [scored[k][field][1] for k in names]
        ax.errorbar(mean, rows + shift, xerr=half, fmt="o", color=colour, label=label, capsize=3)
    ax.axvline(0, color="grey", lw=0.8)
    ax.set_yticks(rows, [
        f"{k}\n({v['known']} known, {v['hands']:,} hands, {width_ratio(v['narrower'])})"
        for k, v in scored.items()
    ])  # fmt: skip
    ax.invert_yaxis()
    ax.set_xlabel(f"{unit}, ± 95% interval")
    ax.set_title("AIVAT beside the plain result, same hands")
    legend_below(ax, ncol=2)
