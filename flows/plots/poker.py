"""Limit poker figures: river HS, HSD, opponent clusters, OCHS, buckets, CFR and the league."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from gameforge.artifacts import Artifact, ArtifactStore
from gameforge.engines.poker.cards import RANK_CHARS
from gameforge.flows.plots.common import (
    Plotter,
    figure,
    game_def,
    hand_index,
    heat_map,
    parse_hand,
    pyplot,
    title_hand,
)
from gameforge.stages.base import StageError
from gameforge.stages.poker.best_response import measured_exploitability

# The paper's example hands (Limit Hold'em abstraction paper, figures of HSD and OCHS).
PAPER_FLOP_HAND = "Jc9h4d5d9d"
PAPER_RIVER_HAND = "Jc9h4d5d9d6cJs"


def plot_river_hs(artifact: Artifact, out: Path, hand: str | None) -> str:
    """Histogram of HS over all canonical last-round hands."""
    counts = np.asarray(artifact["hs_count"][:])
    hs = counts / artifact.meta["summary"]["hs_denominator"]
    with figure(out, dpi=120, figsize=(7, 4)) as (fig, ax):
        ax.hist(hs, bins=50, range=(0, 1), color="#3b6ea5")
        ax.set(
            xlabel="hand strength (wins + ties/2) / opponent hands",
            ylabel="canonical hands",
            title=f"River HS over {hs.size:,} canonical hands ({artifact.params['game']})",
        )
    return f"HS histogram of {hs.size:,} hands"


def plot_hsd(artifact: Artifact, out: Path, hand: str | None) -> str:
    """The HSD of one hand (default: the paper's J♣9♡ on 4♢5♢9♢)."""
    from gameforge.stages.poker.hsd import array_name, round_indexer

    game = game_def(artifact)
    cards = parse_hand(hand or PAPER_FLOP_HAND, game)
    seen = len(cards) - game.num_hole_cards
    rounds = [r for r in range(game.num_rounds - 1) if game.board_cards_through(r) == seen]
    if not rounds or array_name(rounds[0]) not in artifact.array_names():
        raise StageError(f"hsd: no histograms for hands with {seen} board cards in {artifact.key}")
    round_ = rounds[0]
    row = np.asarray(
        artifact[array_name(round_)][hand_index(round_indexer(game, round_), cards)],
        dtype=np.float64,
    )
    hist = row / row.sum()
    bins = hist.size
    with figure(out, dpi=120, figsize=(7, 4)) as (fig, ax):
        x = (np.arange(bins) + 0.5) / bins
        ax.bar(x, hist, width=1 / bins, color="#3b6ea5", edgecolor="w")
        ax.set(
            xlim=(0, 1),
            xlabel="river hand strength",
            ylabel="share of board completions",
            title=f"HSD of {title_hand(cards, game)} (round {round_}, {int(row.sum()):,} boards)",
        )
    return f"HSD of {title_hand(cards, game)}"


def plot_opponent_clusters(artifact: Artifact, out: Path, hand: str | None) -> str:
    """13x13 grid (pairs on the diagonal, suited above, offsuit below) coloured by cluster."""
    from gameforge.stages.poker.hsd import round_indexer
    from gameforge.stages.poker.opponent_clusters import hand_name

    game = game_def(artifact)
    labels = np.asarray(artifact["cluster"][:])
    k = int(artifact.meta["summary"]["k"])
    cmap = pyplot().get_cmap("viridis", k)
    if game.num_hole_cards != 2:
        strength = np.asarray(artifact["expected_hs"][:])
        with figure(out, dpi=120, figsize=(7, 4)) as (fig, ax):
            ax.bar(range(labels.size), strength, color=cmap(labels))
            ax.set(xlabel="first-round hand (canonical index)", ylabel="E[HS]")
        return f"{k} clusters of {labels.size} hands"
    n_ranks = game.num_ranks
    hands = round_indexer(game, 0).unindex(np.arange(labels.size, dtype=np.int64), 0)
    grid = np.full((n_ranks, n_ranks), -1)
    names = [["" for _ in range(n_ranks)] for _ in range(n_ranks)]
    for cards, label in zip(hands.tolist(), labels.tolist()):
        high, low = sorted((c // game.num_suits for c in cards), reverse=True)
        suited = cards[0] % game.num_suits == cards[1] % game.num_suits
        # Row/column 0 is the top rank: suited above the diagonal, offsuit below.
        r, c = n_ranks - 1 - high, n_ranks - 1 - low
        if not suited:
            r, c = c, r
        grid[r, c] = label
        names[r][c] = hand_name(cards, game.num_suits)
    with figure(out, dpi=120, figsize=(8, 7)) as (fig, ax):
        image = ax.imshow(np.ma.masked_less(grid, 0), cmap=cmap, vmin=-0.5, vmax=k - 0.5)
        for r in range(n_ranks):
            for c in range(n_ranks):
                ax.text(c, r, names[r][c], ha="center", va="center", fontsize=7, color="w")
        ticks = [RANK_CHARS[n_ranks - 1 - i] for i in range(n_ranks)]
        ax.set_xticks(range(n_ranks), ticks)
        ax.set_yticks(range(n_ranks), ticks)
        bar = fig.colorbar(image, ticks=range(k))
        bar.set_label("opponent cluster (0 = weakest)")
        ax.set_title(f"{k} opponent clusters: suited above the diagonal, offsuit below")
    return f"{k} clusters of {labels.size} hands"


def plot_ochs(artifact: Artifact, out: Path, hand: str | None) -> str:
    """OCHS bars of one river hand (default: the paper's J♣9♡ on 4♢5♢9♢6♣J♠)."""
    from gameforge.stages.poker.river_hs import hand_indexer

    game = game_def(artifact)
    cards = parse_hand(hand or PAPER_RIVER_HAND, game)
    row = artifact["ochs"][hand_index(hand_indexer(game), cards)]
    values = np.asarray(row, dtype=np.float64) / artifact.meta["summary"]["scale"]
    with figure(out, dpi=120, figsize=(7, 4)) as (fig, ax):
        ax.bar(range(values.size), values, color="#3b6ea5")
        ax.set(
            ylim=(0, 1),
            xticks=range(values.size),
            xlabel="opponent cluster (0 = weakest)",
            ylabel="HS against the cluster",
            title=f"OCHS of {title_hand(cards, game)}",
        )
    return f"OCHS of {title_hand(cards, game)}: " + " ".join(f"{v:.3f}" for v in values)


def plot_buckets(artifact: Artifact, out: Path, hand: str | None) -> str:
    """Per round: bucket-size histogram and the k-means objective (and pruning) per iteration."""
    rounds = sorted(artifact.meta["summary"]["rounds"], key=int)
    size = (11, 3.6 * len(rounds))
    with figure(out, nrows=len(rounds), ncols=2, figsize=size, squeeze=False) as (fig, axes):
        for row, r in zip(axes, rounds):
            sizes = np.bincount(np.asarray(artifact[f"bucket_round{r}"][:]))
            row[0].hist(sizes, bins=60, color="#3b6ea5")
            row[0].set_xlabel("hands per bucket")
            row[0].set_ylabel("buckets")
            row[0].set_title(f"round {r}: {sizes.size:,} buckets of {sizes.sum():,} hands")
            objective = np.asarray(artifact[f"objective_round{r}"][:])
            iterations = np.arange(1, objective.size + 1)
            row[1].plot(iterations, objective, marker="o", color="#3b6ea5")
            row[1].set_xlabel("iteration")
            row[1].set_ylabel("objective")
            row[1].set_title(f"round {r}: k-means objective")
            if f"skipped_round{r}" in artifact.array_names():
                skipped = np.asarray(artifact[f"skipped_round{r}"][:])
                twin = row[1].twinx()
                twin.plot(iterations, 100 * skipped, color="#d08c2c", linestyle="--")
                twin.set_ylabel("distances pruned (%)", color="#d08c2c")
                row[1].set_title(f"round {r}: k-means objective and pruning")
    return f"buckets of rounds {', '.join(rounds)}"


def plot_cfr(artifact: Artifact, out: Path, hand: str | None) -> str:
    """Exploitability (exact where computable, else the regret indicator) per iteration and time."""
    iterations = np.asarray(artifact["curve_iteration"][:])
    exact = np.asarray(artifact["curve_exploitability"][:])
    bound = np.asarray(artifact["curve_regret_bound"][:])
    seconds = np.asarray(artifact["curve_seconds"][:])
    if iterations.size == 0:
        raise StageError(f"{artifact.key} recorded no evaluation points (evaluations=0)")
    bb = float(artifact.meta["summary"]["big_blind"])
    has_exact = bool(np.isfinite(exact).any())
    store = ArtifactStore(artifact.path.parent.parent)  # objects/KEY under the store root
    real = measured_exploitability(store, store.dependents(artifact.key))
    with figure(out, ncols=2, figsize=(11, 4)) as (fig, axes):
        for ax, x, label in ((axes[0], iterations, "iterations"), (axes[1], seconds, "seconds")):
            if has_exact:
                ax.loglog(x, exact / bb * 1000, marker="o", label="exploitability (exact)")
            if "exact_mbb_per_game" in real and not has_exact:
                ax.loglog(
                    [x[-1]], [real["exact_mbb_per_game"]], marker="*", markersize=14,
                    linestyle="none", label="real-game exploitability (best-response stage)",
                )  # fmt: skip
            ax.loglog(x, bound / bb * 1000, marker=".", linestyle="--", label="positive regret / T")
            ax.set_xlabel(label)
            ax.set_ylabel("mbb/g")
            ax.grid(True, which="both", alpha=0.3)
            ax.legend()
        algorithm = artifact.params["algorithm"]
        fig.suptitle(f"{artifact.key}: {algorithm} on {artifact.params['game']}")
    if "exact_mbb_per_game" in real:
        final_mbb, what = real["exact_mbb_per_game"], "real-game exploitability"
    elif has_exact:
        final_mbb, what = exact[-1] / bb * 1000, "exploitability"
    else:
        final_mbb, what = bound[-1] / bb * 1000, "positive regret per iteration"
    return f"{what} {final_mbb:.2f} mbb/g after {int(iterations[-1]):,} iterations"


def plot_league(artifact: Artifact, out: Path, hand: str | None) -> str:
    """Row-versus-column mbb/g heat map with 95% intervals, like the paper's league table."""
    mbb = np.asarray(artifact["mbb_per_game"][:])
    ci = np.asarray(artifact["ci95"][:])
    summary = artifact.meta["summary"]
    labels = summary["players"]
    n = len(labels)
    with figure(out, figsize=(1.6 * n + 3, 1.2 * n + 1.5)) as (fig, ax):
        heat_map(ax, mbb, ci, labels, 1)
        ax.set_ylabel("row player (mbb/g won)")
        hands = summary["hands_per_pairing"]
        ax.set_title(f"league: {hands:,} hands per pairing, 95% intervals")
    return "ranking " + " > ".join(summary["ranking"])


def plot_best_response(artifact: Artifact, out: Path, hand: str | None) -> str:
    """Where the best response wins: each canonical board's share of both seats' values."""
    share = np.asarray(artifact["board_contribution"][:])  # (boards, 2) chips
    summary = artifact.meta["summary"]
    scale = 1000.0 / float(summary["big_blind"])
    with figure(out, ncols=2, figsize=(11, 4)) as (fig, axes):
        for seat, ax in enumerate(axes):
            values = np.sort(share[:, seat] * scale)[::-1]
            ax.plot(np.arange(values.size), values, drawstyle="steps-mid")
            ax.axhline(0.0, color="grey", linewidth=0.8)
            ax.set_xlabel("canonical boards of the first board round, by share")
            ax.set_ylabel("mbb/g from the board's orbit")
            seat_value = summary["values_mbb_per_game"][seat]
            ax.set_title(f"best response as seat {seat}: {seat_value:.2f} mbb/g")
            ax.grid(True, alpha=0.3)
        fig.suptitle(
            f"{artifact.key}: exploitability {summary['exploitability_mbb_per_game']:.3f} mbb/g "
            f"of {summary['strategy']}"
        )
    return f"exploitability {summary['exploitability_mbb_per_game']:.3f} mbb/g (exact)"


PLOTTERS: dict[str, Plotter] = {
    "river-hs": plot_river_hs,
    "hsd": plot_hsd,
    "opponent-clusters": plot_opponent_clusters,
    "ochs": plot_ochs,
    "hsd-buckets": plot_buckets,
    "ochs-buckets": plot_buckets,
    "potential-buckets": plot_buckets,
    "cfr": plot_cfr,
    "league": plot_league,
    "best-response": plot_best_response,
}
