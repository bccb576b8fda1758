"""Hearts figures: the FALCON learners' evaluation curves."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from gameforge.artifacts import Artifact
from gameforge.flows.plots.common import Plotter, figure


def plot_hearts_eval(artifact: Artifact, out: Path, hand: str | None) -> str:
    """Penalty ratio against learning games, per variant (mean over trials, min-max band),
    against rule-based and against Monte Carlo agents: the paper's two learning-curve figures."""
    curve = np.asarray(artifact["curve"][:])  # (learner, checkpoint, vs rule-based, vs MC)
    labels = artifact.meta["summary"]["learners"]
    variants: dict[str, list[int]] = {}
    for li, label in enumerate(labels):
        variants.setdefault(label.rsplit(" seed ", 1)[0], []).append(li)
    with figure(out, ncols=2, figsize=(12, 4.5), sharey=True) as (fig, axes):
        for ax, col, title in (
            (axes[0], 2, "vs 3 rule-based agents"),
            (axes[1], 3, "vs 3 Monte Carlo"),
        ):
            for variant, members in variants.items():
                rows = [curve[curve[:, 0] == li] for li in members]
                x = rows[0][:, 1]
                y = np.array([r[:, col] for r in rows])
                ax.plot(x, y.mean(axis=0), marker="o", label=f"{variant} ({len(members)} trials)")
                ax.fill_between(x, y.min(axis=0), y.max(axis=0), alpha=0.15)
            ax.axhline(0.25, color="grey", linestyle="--", linewidth=1)
            ax.set_xscale("symlog", linthresh=1)
            ax.set_xlim(0, float(curve[:, 1].max()) * 1.5 + 1)
            ax.set_xlabel("learning games N")
            ax.set_title(title)
            ax.grid(True, alpha=0.3)
        axes[0].set_ylabel("penalty ratio (points / 26)")
        axes[0].legend()
    table = artifact.meta["summary"]["table"]
    return "; ".join(
        f"{v}: {t['vs_rule_based']:.4f} / {t['vs_monte_carlo']:.4f}" for v, t in table.items()
    )


PLOTTERS: dict[str, Plotter] = {
    "hearts-eval": plot_hearts_eval,
}
