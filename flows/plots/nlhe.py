"""No-limit hold'em figures: the CNN players' hand histories, their training curves and league."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from gameforge.artifacts import Artifact
from gameforge.flows.plots.common import (
    MUTED,
    Plotter,
    aivat_panel,
    figure,
    heat_map,
    integer_ticks,
    key_footnote,
    legend_below,
    plain_ticks,
    stage_title,
    store_of,
    wrap_title,
)
from gameforge.stages.reporting import ranking_line

ACTION_NAMES = ("fold", "check/call", "bet/raise")
ACTION_COLOURS = ("#c8322c", "#1f5fbf", "#2f9a3f")
STREETS = ("preflop", "flop", "turn", "river")
POT_TICKS = (1, 1.5, 2, 3, 5, 10, 20, 30, 50, 100, 200, 300, 500, 1000)  # big blinds


def _stacked_shares(  # type: ignore[no-untyped-def]
    ax, counts: np.ndarray, names, labels: list[str], xlabel: str, title: str, colours=None
) -> None:
    """One 100% bar per row of `counts`, labelled with the row's name and total."""
    counts = np.asarray(counts, dtype=np.float64)
    totals = counts.sum(axis=1)
    share = counts / np.maximum(totals[:, None], 1)
    rows = np.arange(len(labels))
    left = np.zeros(len(labels))
    for k, name in enumerate(names):
        colour = colours[k] if colours is not None else None
        ax.barh(rows, share[:, k], left=left, label=name, color=colour)
        left += share[:, k]
    ax.set_yticks(
        rows, [f"{label}\n(n={int(t):,})" for label, t in zip(labels, totals, strict=True)]
    )
    ax.invert_yaxis()
    ax.set_xlim(0, 1)
    ax.set_xlabel(xlabel)
    ax.set_title(title)
    legend_below(ax, ncol=min(3, len(names)))


def plot_nlhe_league(artifact: Artifact, out: Path, hand: str | None) -> str:
    """BB/hand heat map with 95% intervals (the paper's Table 3; grey where the interval holds
    0), action mix and raise sizes."""
    from matplotlib.patches import Patch

    table = np.asarray(artifact["bb_per_hand"][:])
    ci = np.asarray(artifact["ci95"][:])
    mix = np.asarray(artifact["action_mix"][:]).astype(float)
    sizes = np.asarray(artifact["raise_sizes"][:]).astype(float)
    summary = artifact.meta["summary"]
    labels = summary["players"]
    n = len(labels)
    scored = summary.get("aivat") or {}
    size = (1.5 * n + 12 + (4 if scored else 0), 1.1 * n + 3)
    ratios = {"width_ratios": [1.6, 1, 1] + ([1.2] if scored else [])}
    panels = 4 if scored else 3
    with figure(out, ncols=panels, figsize=size, gridspec_kw=ratios, layout="constrained") as (
        fig,
        axes,
    ):
        fig.suptitle(
            stage_title(
                artifact,
                f"duplicate round robin of {n} players, {summary['hands_per_pairing']:,} hands "
                f"per pairing, {artifact.params['game']}, seed {artifact.params['seed']}",
            )
        )
        heat_map(axes[0], table, ci, labels, 2, mute_insignificant=True,
                 colour_bar="row player's big blinds won per hand")  # fmt: skip
        axes[0].set_ylabel("row player")
        axes[0].set_title("row player's BB won per hand, ± 95% interval")
        muted = Patch(
            facecolor=MUTED,
            edgecolor="grey",
            label="grey: the 95% interval contains 0 (no significant difference)",
        )
        axes[0].legend(handles=[muted], loc="upper center", bbox_to_anchor=(0.5, -0.1),
                       fontsize=8, frameon=False, title=wrap_title(ranking_line(summary), 60),
                       title_fontsize=8)  # fmt: skip
        _stacked_shares(axes[1], mix, ACTION_NAMES, labels, "share of the player's actions",
                        "action mix (the paper's Figure 2)", ACTION_COLOURS)  # fmt: skip
        _stacked_shares(axes[2], sizes, ("<=1/2 pot", "<=1 pot", "<=2 pots", ">2 pots", "all-in"),
                        labels, "share of the player's bets and raises (size vs the pot)",
                        "raise sizes (the paper's Figure 3)")  # fmt: skip
        if scored:
            aivat_panel(axes[3], scored, "row player's BB won per hand")
        key_footnote(fig, artifact)
    return ranking_line(summary)


def _generation(artifact: Artifact) -> str:
    """`CNN-<g>g: ` for an `nlhe-train` artifact whose histories chain is in its store, else
    nothing."""
    from gameforge.artifacts import StoreError
    from gameforge.stages.nlhe import cnn_label

    try:
        return f"{cnn_label(store_of(artifact), artifact)}: "
    except StoreError:  # an input was removed or not imported: the title does without
        return ""


def plot_nlhe_train(artifact: Artifact, out: Path, hand: str | None) -> str:
    """Training and validation loss per epoch, with the network and the sample counts."""
    train = np.asarray(artifact["train_loss"][:])
    valid = np.asarray(artifact["valid_loss"][:])
    epochs = np.arange(1, len(train) + 1)
    p = artifact.params
    s = artifact.meta["summary"]
    filters = "-".join(str(f) for f in p["filters"])
    title = stage_title(
        artifact,
        f"{_generation(artifact)}CNN {filters} filters {p['kernel']}x{p['kernel']}, dense "
        f"{p['dense']}, dropout {p['dropout']}\n{len(train)} epochs, batch {p['batch_size']}"
        + (", canonical suits" if p.get("canonical_suits") else ""),
    )
    with figure(out, figsize=(7, 4.6)) as (fig, ax):
        ax.plot(epochs, train, marker="o", label=f"training ({s['train_samples']:,} actions)")
        ax.plot(epochs, valid, marker="s", label=f"validation ({s['valid_samples']:,} actions)")
        ax.set(
            xlabel="epoch",
            ylabel="mean squared error\n(target: chips won / buy-in, in [-1, 1])",
            title=title,
        )
        ax.set_xlim(0.5, len(train) + 0.5)
        integer_ticks(ax.xaxis)
        plain_ticks(ax.yaxis)
        ax.grid(True, alpha=0.3)
        legend_below(ax, ncol=2)
        key_footnote(fig, artifact)
    return f"validation loss {valid[-1]:.4f} after {len(train)} epochs"


def pot_at_end(
    starts: np.ndarray, actions: np.ndarray, blind: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Per hand: chips in the pot when it ended, and whether it ended with a fold."""
    hands = len(starts) - 1
    spent = np.tile(np.asarray(blind, np.int64), (hands, 1))
    hand_of = np.repeat(np.arange(hands), np.diff(starts))
    # a seat's spending only grows within a hand, so its last amount is its largest
    np.maximum.at(spent, (hand_of, actions[:, 1]), actions[:, 3].astype(np.int64))
    counts = np.diff(starts)
    last = np.maximum(starts[1:] - 1, 0)
    folded = (counts > 0) & (actions[last, 2] == 0) if len(actions) else np.zeros(hands, bool)
    return spent.sum(axis=1), folded


def plot_nlhe_histories(artifact: Artifact, out: Path, hand: str | None) -> str:
    """What a generation trains on: the action mix by player and street, the pot at the end of
    the hand (folded or shown down), and each pairing's result with its 95% interval."""
    from gameforge.stages.nlhe import NlheParams

    rules = NlheParams(game=artifact.params["game"]).rules()
    summary = artifact.meta["summary"]
    labels: list[str] = summary["players"]
    starts = np.asarray(artifact["hand_start"][:]).astype(np.int64)
    actions = np.asarray(artifact["actions"][:]).astype(np.int64)
    seat_player = np.asarray(artifact["seat_player"][:]).astype(np.int64)
    hands = len(starts) - 1
    hand_of = np.repeat(np.arange(hands), np.diff(starts))
    who = seat_player[hand_of, actions[:, 1]]
    streets = min(rules.num_rounds, len(STREETS))
    mix = np.zeros((len(labels), streets, 3), np.int64)
    np.add.at(mix, (who, np.minimum(actions[:, 0], streets - 1), actions[:, 2]), 1)
    rows = [(i, r) for i in range(len(labels)) for r in range(streets) if mix[i, r].sum()]
    pots, folded = pot_at_end(starts, actions, rules.blind)
    pots_bb = pots / rules.big_blind
    pairings = summary["bb_per_hand_first_vs_second"]
    height = max(4.8, 0.42 * len(rows) + 2.5, 0.45 * len(pairings) + 2.5)
    title = stage_title(
        artifact,
        f"{hands:,} hands ({hands // 2:,} duplicate deals) of {len(pairings)} "
        f"pairing{'s' if len(pairings) != 1 else ''} among "
        f"{', '.join(labels)}; {artifact.params['game']}, seed {artifact.params['seed']}",
    )
    ratios = {"width_ratios": [1.1, 1, 1]}
    with figure(out, ncols=3, figsize=(17, height), gridspec_kw=ratios) as (fig, axes):
        fig.suptitle(title)
        _stacked_shares(axes[0], np.array([mix[i, r] for i, r in rows]), ACTION_NAMES,
                        [f"{labels[i]}, {STREETS[r]}" for i, r in rows],
                        "share of the player's actions on the street",
                        "action mix by player and street", ACTION_COLOURS)  # fmt: skip
        ax = axes[1]
        top = 2 * float(rules.stack.max()) / rules.big_blind
        bins = np.geomspace(max(pots_bb.min(), 0.5), top * 1.001, 25)
        ax.hist([pots_bb[folded], pots_bb[~folded]], bins=bins, stacked=True,
                color=("#c8322c", "#1f5fbf"),
                label=[f"ended by a fold ({int(folded.sum()):,} hands)",
                       f"shown down ({int((~folded).sum()):,} hands)"])  # fmt: skip
        ax.set_xscale("log")
        ticks = [t for t in POT_TICKS if bins[0] <= t <= bins[-1]]
        ax.set_xticks(ticks, [f"{t:g}" for t in ticks])
        ax.minorticks_off()
        ax.set_xlabel("pot at the end of the hand (big blinds, log scale)")
        ax.set_ylabel("hands")
        integer_ticks(ax.yaxis)
        ax.axvline(top, color="grey", linestyle=":", linewidth=1, label="both stacks all in")
        ax.set_title(f"pot sizes (median {np.median(pots_bb):.1f} BB)")
        legend_below(ax, ncol=2)
        ax = axes[2]
        names = list(pairings)
        means = np.array([pairings[k][0] for k in names], np.float64)
        halves = np.array([pairings[k][1] for k in names], np.float64)
        finite = np.isfinite(halves)
        y = np.arange(len(names))
        ax.errorbar(means[finite], y[finite], xerr=halves[finite], fmt="o", capsize=3,
                    label="mean ± 95% interval (duplicate deals)")  # fmt: skip
        if (~finite).any():
            ax.plot(means[~finite], y[~finite], "x", color="black",
                    label="one deal: no interval")  # fmt: skip
        ax.axvline(0, color="grey", linestyle="--", linewidth=1, label="break-even")
        # a player against itself: the stored number is the first seat's result (seat advantage)
        shown = [
            f"{k}\n(first seat's result)" if len(set(k.split(" vs "))) == 1 else k for k in names
        ]
        ax.set_yticks(y, shown)
        ax.invert_yaxis()
        ax.set_xlabel("first-named player's big blinds won per hand")
        ax.set_title(f"result per pairing ({hands // max(len(names), 1):,} hands each)")
        ax.grid(True, axis="x", alpha=0.3)
        legend_below(ax, ncol=1)
        key_footnote(fig, artifact)
    shares = mix.sum(axis=(0, 1)) / max(int(mix.sum()), 1)
    return (
        f"{hands:,} hands, {len(actions) / max(hands, 1):.2f} actions per hand, fold/call/raise "
        f"{shares[0]:.3f}/{shares[1]:.3f}/{shares[2]:.3f}, median pot {np.median(pots_bb):.1f} BB"
    )


PLOTTERS: dict[str, Plotter] = {
    "nlhe-histories": plot_nlhe_histories,
    "nlhe-league": plot_nlhe_league,
    "nlhe-train": plot_nlhe_train,
}
