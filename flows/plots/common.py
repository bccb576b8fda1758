"""What every game's figures share: pyplot set-up and saving, the league heat map, poker hands."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from gameforge.artifacts import Artifact
from gameforge.engines.poker.cards import format_cards, parse_cards
from gameforge.stages.base import StageError
from gameforge.stages.poker.params import GameParams

# A figure of one artifact: writes the PNG `out` (`hand` is the `--hand` option, or None) and
# returns a one-line description.
Plotter = Callable[[Artifact, Path, str | None], str]


def pyplot():  # type: ignore[no-untyped-def]
    """matplotlib's pyplot on the Agg backend (files only: no display is needed)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


@contextmanager
def figure(out: Path, dpi: int = 110, **subplots: Any) -> Iterator[tuple[Any, Any]]:
    """(figure, axes) of `pyplot.subplots(**subplots)`; when the block ends the figure is laid
    out and written to `out` (PNG), and freed even if the block raised."""
    plt = pyplot()
    fig, axes = plt.subplots(**subplots)
    try:
        yield fig, axes
        fig.tight_layout()
        fig.savefig(out, dpi=dpi)
    finally:
        plt.close(fig)


def heat_map(ax, table: np.ndarray, ci: np.ndarray, labels: list[str], digits: int) -> None:  # type: ignore[no-untyped-def]
    """A row-versus-column league table: each cell's result and its 95% interval."""
    n = len(labels)
    limit = max(1e-9, float(np.abs(table).max()))
    ax.imshow(table, cmap="RdBu", vmin=-limit, vmax=limit)
    for i in range(n):
        for j in range(n):
            if i != j:
                dark = abs(table[i, j]) > 0.6 * limit  # white text where the colour is deep
                ax.text(
                    j,
                    i,
                    f"{table[i, j]:+.{digits}f}\n±{ci[i, j]:.{digits}f}",
                    ha="center",
                    va="center",
                    color="white" if dark else "black",
                )
    ax.set_xticks(range(n), labels)
    ax.set_yticks(range(n), labels)
    ax.set_xlabel("column player")


def game_def(artifact: Artifact):  # type: ignore[no-untyped-def]
    """The poker game an artifact was computed for."""
    return GameParams(game=artifact.params["game"]).game_def()


def parse_hand(text: str, game) -> list[int]:  # type: ignore[no-untyped-def]
    """Hole cards then board, e.g. `Jc9h/4d5d9d` (`/` and `|` are optional separators)."""
    cards = parse_cards(text.replace("/", "").replace("|", ""), game.num_ranks, game.num_suits)
    if len(cards) < game.num_hole_cards:
        raise StageError(f"hand {text!r}: needs {game.num_hole_cards} hole cards first")
    return cards


def title_hand(cards: list[int], game) -> str:  # type: ignore[no-untyped-def]
    """`hole | board`, or the hole cards alone before the flop."""
    hole = format_cards(cards[: game.num_hole_cards], game.num_suits)
    board = format_cards(cards[game.num_hole_cards :], game.num_suits)
    return f"{hole} | {board}" if board else hole


def hand_index(indexer, cards: list[int]) -> int:  # type: ignore[no-untyped-def]
    """The canonical index of a hand in its indexer's last round (bad hands raise)."""
    return int(indexer.index(np.array([cards], np.int8), indexer.rounds - 1, validate=True)[0])
