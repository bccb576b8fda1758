"""No-limit hold'em figures: the CNN players' league and their training curves."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from gameforge.artifacts import Artifact
from gameforge.flows.plots.common import Plotter, figure, heat_map


def plot_nlhe_league(artifact: Artifact, out: Path, hand: str | None) -> str:
    """BB/hand heat map with 95% intervals (the paper's Table 3), action mix and raise sizes."""
    table = np.asarray(artifact["bb_per_hand"][:])
    ci = np.asarray(artifact["ci95"][:])
    mix = np.asarray(artifact["action_mix"][:]).astype(float)
    sizes = np.asarray(artifact["raise_sizes"][:]).astype(float)
    summary = artifact.meta["summary"]
    labels = summary["players"]
    n = len(labels)
    size = (1.5 * n + 11, 1.1 * n + 2)
    ratios = {"width_ratios": [1.6, 1, 1]}
    with figure(out, ncols=3, figsize=size, gridspec_kw=ratios) as (fig, axes):
        heat_map(axes[0], table, ci, labels, 2)
        axes[0].set_ylabel("row player (BB/hand won)")
        axes[0].set_title(f"{summary['hands_per_pairing']:,} hands per pairing, 95% intervals")
        for ax, counts, names, title in (
            (axes[1], mix, ("fold", "check/call", "bet/raise"), "action mix (Figure 2)"),
            (axes[2], sizes, ("<=1/2 pot", "<=1 pot", "<=2 pots", ">2 pots", "all-in"),
             "raise sizes (Figure 3)"),
        ):  # fmt: skip
            share = counts / np.maximum(counts.sum(axis=1, keepdims=True), 1)
            left = np.zeros(n)
            for k, name in enumerate(names):
                ax.barh(range(n), share[:, k], left=left, label=name)
                left += share[:, k]
            ax.set_yticks(range(n), labels)
            ax.invert_yaxis()
            ax.set_xlim(0, 1)
            ax.set_title(title)
            ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.06), ncol=3)
    return "ranking " + " > ".join(summary["ranking"])


def plot_nlhe_train(artifact: Artifact, out: Path, hand: str | None) -> str:
    """Training and validation loss per epoch."""
    train = np.asarray(artifact["train_loss"][:])
    valid = np.asarray(artifact["valid_loss"][:])
    epochs = np.arange(1, len(train) + 1)
    with figure(out, figsize=(6, 4)) as (fig, ax):
        ax.plot(epochs, train, marker="o", label="training")
        ax.plot(epochs, valid, marker="s", label="validation")
        ax.set(xlabel="epoch", ylabel="mean squared error (chips won / buy-in)", title=artifact.key)
        ax.grid(True, alpha=0.3)
        ax.legend()
    return f"validation loss {valid[-1]:.4f} after {len(train)} epochs"


PLOTTERS: dict[str, Plotter] = {
    "nlhe-league": plot_nlhe_league,
    "nlhe-train": plot_nlhe_train,
}
