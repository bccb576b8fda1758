"""Blokus figures: BlokusZero's win rate, its policy network's statistics and its training."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from gameforge.artifacts import Artifact
from gameforge.flows.plots.common import Plotter, figure

BLOKUS_COLOURS = ("#1f5fbf", "#e8c31a", "#c8322c", "#2f9a3f")  # blue, yellow, red, green


def _win_rate_axes(ax, steps, rates, ylabel: str, label: str | None = None) -> None:  # type: ignore[no-untyped-def]
    """Win rate against three MCTS-MAXN per training step (95% intervals) against par."""
    ax.errorbar(steps, rates[:, 0], yerr=rates[:, 1], marker="o", capsize=3, label=label)
    ax.axhline(0.25, color="grey", linestyle="--", linewidth=1, label="par (1 of 4)")
    ax.set_xlabel("training steps")
    ax.set_ylabel(ylabel)
    ax.set_ylim(0, 1)
    ax.grid(True, alpha=0.3)
    ax.legend()


def _last_array(artifact: Artifact, name: str, width: int) -> np.ndarray:
    """An array of the last checkpoint's games, or an empty one where the eval kept none."""
    if name in artifact.array_names():
        return np.asarray(artifact[name][...])
    return np.zeros((0, width))


def _policy_axes(ax, policy: np.ndarray) -> None:  # type: ignore[no-untyped-def]
    """The policy network's root statistics (`POLICY_STATS` rows) by pieces on the board."""
    if len(policy):
        pieces = policy[:, 0]
        bins = np.arange(0, 88, 4)
        centre, cols = [], []
        for lo in bins:
            sel = (pieces >= lo) & (pieces < lo + 4)
            if sel.any():
                centre.append(lo + 2)
                cols.append(policy[sel].mean(axis=0))
        mean = np.array(cols)
        for j, label in ((3, "top-1 mass"), (4, "top-10 mass"), (5, "top-100 mass")):
            ax.plot(centre, mean[:, j], marker=".", label=label)
        ax.set_ylim(0, 1.02)
        ax.set_ylabel("policy mass on the top moves")
        twin = ax.twinx()
        twin.plot(centre, mean[:, 1], color="black", linestyle=":", label="legal moves")
        twin.plot(centre, mean[:, 2] * 100, color="grey", linestyle="--", label="entropy x 100")
        twin.set_ylabel("legal moves / entropy x 100")
        twin.legend(loc="upper right")
        ax.legend(loc="lower right")
    ax.set_xlabel("pieces on the board")
    ax.set_title("policy network at the last checkpoint (Figure 12)")


def _board_axes(ax, board: np.ndarray, scores: np.ndarray, seat: int, g: int) -> None:  # type: ignore[no-untyped-def]
    """Game g's final board (owner of each cell), its scores, the tested player's colour."""
    grid = board.reshape(20, 20).astype(int)
    image = np.ones((20, 20, 3))
    for colour, hexcode in enumerate(BLOKUS_COLOURS):
        rgb = [int(hexcode[i : i + 2], 16) / 255 for i in (1, 3, 5)]
        image[grid == colour] = rgb
    ax.imshow(image, interpolation="nearest")
    ax.set_xticks(np.arange(-0.5, 20, 1), minor=True)
    ax.set_yticks(np.arange(-0.5, 20, 1), minor=True)
    ax.grid(which="minor", color="#cccccc", linewidth=0.5)
    ax.tick_params(which="both", length=0, labelbottom=False, labelleft=False)
    names = ("blue", "yellow", "red", "green")
    parts = [f"{n}{'*' if i == seat else ''} {int(scores[i]):+d}" for i, n in enumerate(names)]
    ax.set_title(f"game {g}: {', '.join(parts)}  (* BlokusZero)", fontsize=9)


def plot_blokus_eval(artifact: Artifact, out: Path, hand: str | None) -> str:
    """Win rate against three MCTS-MAXN per training step (95% intervals), the policy
    network's statistics by pieces on the board (the paper's Figure 12) and a final board of
    the last network's games (`--hand N` picks game N)."""
    steps = np.asarray(artifact["steps"][:])
    rates = np.asarray(artifact["win_rate"][:])
    last = len(steps) - 1
    with figure(out, ncols=3, figsize=(17, 5)) as (fig, axes):
        _win_rate_axes(axes[0], steps, rates, "BlokusZero win rate vs 3 MCTS-MAXN")
        _policy_axes(axes[1], _last_array(artifact, f"policy_{last}", 6))
        boards = _last_array(artifact, f"boards_{last}", 400)
        if len(boards):
            g = min(int(hand) if hand and hand.isdigit() else 0, len(boards) - 1)
            scores = np.asarray(artifact[f"scores_{last}"][...])[g]
            seat = int(np.asarray(artifact[f"seat_{last}"][...])[g])
            _board_axes(axes[2], boards[g], scores, seat, g)
    return f"win rate {rates[last, 0]:.3f} ± {rates[last, 1]:.3f} after {int(steps[last]):,} steps"


def plot_blokus_curve(artifact: Artifact, out: Path, hand: str | None) -> str:
    """BlokusZero's win rate against three MCTS-MAXN by training step, 95% intervals (the
    paper's Figure 10)."""
    steps = np.asarray(artifact["steps"][:])
    rates = np.asarray(artifact["win_rate"][:])
    games = np.asarray(artifact["games"][:])
    with figure(out, figsize=(7, 4.5)) as (fig, ax):
        _win_rate_axes(ax, steps, rates, "win rate vs 3 MCTS-MAXN (games annotated)", "BlokusZero")
        for x, y, n in zip(steps, rates[:, 0], games, strict=True):
            ax.annotate(f"{n}", (x, y), textcoords="offset points", xytext=(4, -12), fontsize=7)
    return f"win rate {rates[-1, 0]:.3f} ± {rates[-1, 1]:.3f} after {int(steps[-1]):,} steps"


def plot_blokus_train(artifact: Artifact, out: Path, hand: str | None) -> str:
    """Value and policy loss per training step (running mean over 50 steps)."""
    losses = np.asarray(artifact["losses"][...])
    total = int(np.asarray(artifact["steps_total"][...]).ravel()[0])
    x = np.arange(total - len(losses) + 1, total + 1)
    w = max(1, min(50, len(losses)))
    kernel = np.ones(w) / w
    with figure(out, figsize=(7, 4)) as (fig, ax):
        for j, label in ((0, "value loss (z - v)^2"), (1, "policy loss -pi . log p")):
            smooth = np.convolve(losses[:, j], kernel, mode="valid")
            ax.plot(x[w - 1 :], smooth, label=label)
        ax.set(
            xlabel="global training step", ylabel=f"loss (mean of {w} steps)", title=artifact.key
        )
        ax.grid(True, alpha=0.3)
        ax.legend()
    return (
        f"value {losses[-w:, 0].mean():.3f}, policy {losses[-w:, 1].mean():.3f} at step {total:,}"
    )


PLOTTERS: dict[str, Plotter] = {
    "blokus-eval": plot_blokus_eval,
    "blokus-curve": plot_blokus_curve,
    "blokus-train": plot_blokus_train,
}
