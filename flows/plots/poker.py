"""Limit poker figures: river HS, HSD, opponent clusters, OCHS, buckets, CFR and the league."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from gameforge.artifacts import Artifact, ArtifactStore
from gameforge.engines.poker.cards import PAPER_BOARD, PAPER_HOLE, RANK_CHARS
from gameforge.flows.plots.common import (
    MUTED,
    Plotter,
    aivat_panel,
    figure,
    game_def,
    hand_index,
    heat_map,
    integer_ticks,
    legend_below,
    parse_hand,
    pyplot,
    readable_log_axis,
    store_of,
    title_hand,
    wrap_title,
)
from gameforge.stages.base import StageError
from gameforge.stages.poker.best_response import measured_exploitability
from gameforge.stages.poker.cfr import CFRParams
from gameforge.stages.reporting import ranking_line


def plot_river_hs(artifact: Artifact, out: Path, hand: str | None) -> str:
    """Histogram of HS over all canonical last-round hands."""
    counts = np.asarray(artifact["hs_count"][:])
    hs = counts / artifact.meta["summary"]["hs_denominator"]
    bins = 50
    with figure(out, dpi=120, figsize=(7, 4.2), layout="constrained") as (fig, ax):
        ax.hist(hs, bins=bins, range=(0, 1), color="#3b6ea5")
        ax.axvline(float(hs.mean()), color="#d08c2c", linestyle="--",
                   label=f"mean HS {hs.mean():.3f}")  # fmt: skip
        ax.set(
            xlim=(0, 1),
            xlabel="river hand strength: (wins + ties/2) / opponent hands",
            ylabel=f"canonical hands per bin (width {1 / bins:g})",
        )
        _legend_and_title(
            ax,
            f"river-hs: hand strength of {hs.size:,} canonical river hands "
            f"(suit-isomorphism classes, unweighted), {artifact.params['game']}",
        )
    return f"HS histogram of {hs.size:,} hands (canonical river hands), mean HS {hs.mean():.3f}"


def _legend_and_title(ax, title: str) -> None:  # type: ignore[no-untyped-def]
    """A one-panel figure's legend below the axes and its title, wrapped at 70 characters."""
    legend_below(ax)
    ax.set_title(wrap_title(title, 70), fontsize=10)


def hand_origin(game, cards: list[int]) -> str:  # type: ignore[no-untyped-def]
    """Where a default hand comes from, for its figure's title: the paper's hand as it is, that
    hand moved into a short deck (` (the paper's Jc9h | 4d5d9d moved into this 8-rank deck)`),
    or the deck's highest cards where the paper's hand does not fit."""
    board = len(cards) - game.num_hole_cards
    paper = PAPER_HOLE + PAPER_BOARD[: 2 * board]
    paper_title = f"{PAPER_HOLE} | {paper[len(PAPER_HOLE) :]}" if board else PAPER_HOLE
    if game.format_cards(cards) == paper:
        return " (the paper's hand)"
    top = game.num_ranks * game.num_suits - 1
    if cards == list(range(top, top - len(cards), -1)):
        return f" (the deck's highest cards: the paper's {paper_title} does not fit this deck)"
    return f" (the paper's {paper_title} moved into this {game.num_ranks}-rank deck)"


def plot_hsd(artifact: Artifact, out: Path, hand: str | None) -> str:
    """The HSD of one hand (default: the paper's J♣9♡ on 4♢5♢9♢).

    Without `hand`, the paper's flop hand where the deck has it, else the same hand moved into
    the deck (`GameDef.example_cards`: 9c7h/2d3d7d with 8 ranks, 7c6h/2d3d6d with 6); with the
    board of the first round the artifact describes if it has no flop histograms.
    """
    from gameforge.stages.poker.hsd import array_name, round_indexer

    game = game_def(artifact)
    if hand:
        cards = parse_hand(hand, game)
    else:
        described = sorted(int(r) for r in artifact.meta["summary"]["rounds"])
        flop = 1 if 1 in described else described[0]
        cards = game.example_cards(game.board_cards_through(flop))
    origin = "" if hand else hand_origin(game, cards)
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
    x = (np.arange(bins) + 0.5) / bins
    expected = float((hist * x).sum())
    with figure(out, dpi=120, figsize=(7, 4.2), layout="constrained") as (fig, ax):
        ax.bar(x, hist, width=1 / bins, color="#3b6ea5", edgecolor="w")
        ax.axvline(expected, color="#d08c2c", linestyle="--",
                   label=f"E[HS] {expected:.3f} (bin centres)")  # fmt: skip
        ax.set(
            xlim=(0, 1),
            xlabel=f"river hand strength (bins of width {1 / bins:g})",
            ylabel="share of board completions",
        )
        _legend_and_title(
            ax,
            f"hsd: HS distribution of {title_hand(cards, game)}{origin} in "
            f"{_round_name(game, round_)} over {int(row.sum()):,} board completions, {bins} "
            f"bins, {artifact.params['game']}",
        )
    return f"HSD of {title_hand(cards, game)}: E[HS] {expected:.3f}"


def plot_opponent_clusters(artifact: Artifact, out: Path, hand: str | None) -> str:
    """13x13 grid (pairs on the diagonal, suited above, offsuit below) coloured by cluster."""
    from gameforge.stages.poker.hsd import round_indexer
    from gameforge.stages.poker.opponent_clusters import hand_name

    game = game_def(artifact)
    labels = np.asarray(artifact["cluster"][:])
    k = int(artifact.meta["summary"]["k"])
    cmap = pyplot().get_cmap("viridis", k)
    title = wrap_title(
        f"opponent-clusters: k={k} EMD k-means clusters of the {labels.size} first-round hands "
        f"by HSD, {artifact.params['game']}",
        70,
    )
    if game.num_hole_cards != 2:
        strength = np.asarray(artifact["expected_hs"][:])
        with figure(out, dpi=120, figsize=(7, 4.2), layout="constrained") as (fig, ax):
            ax.bar(range(labels.size), strength, color=cmap(labels))
            ax.set(
                xlabel="first-round hand (canonical index)",
                ylabel="expected river hand strength E[HS]",
                ylim=(0, 1),
            )
            integer_ticks(ax.xaxis)
            image = pyplot().cm.ScalarMappable(cmap=cmap, norm=pyplot().Normalize(-0.5, k - 0.5))
            bar = fig.colorbar(image, ax=ax, ticks=range(k))
            bar.set_label("opponent cluster (0 = weakest)")
            ax.set_title(title, fontsize=10)
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
    with figure(out, dpi=120, figsize=(8.6, 7.6), layout="constrained") as (fig, ax):
        # aspect "auto": an equal-aspect image lets constrained layout clip the title
        image = ax.imshow(np.ma.masked_less(grid, 0), cmap=cmap, vmin=-0.5, vmax=k - 0.5,
                          aspect="auto")  # fmt: skip
        for r in range(n_ranks):
            for c in range(n_ranks):
                if grid[r, c] < 0:
                    continue
                red, green, blue, _ = cmap(int(grid[r, c]))
                light = 0.299 * red + 0.587 * green + 0.114 * blue > 0.5  # dark text on yellow
                ax.text(c, r, names[r][c], ha="center", va="center", fontsize=7,
                        color="black" if light else "white")  # fmt: skip
        ticks = [RANK_CHARS[n_ranks - 1 - i] for i in range(n_ranks)]
        ax.set_xticks(range(n_ranks), ticks)
        ax.set_yticks(range(n_ranks), ticks)
        ax.set_xlabel("lower card's rank if suited, higher card's if offsuit")
        ax.set_ylabel("higher card's rank if suited, lower card's if offsuit")
        bar = fig.colorbar(image, ax=ax, ticks=range(k), shrink=0.85)
        bar.set_label("opponent cluster (0 = weakest)")
        ax.set_title(title + "\nsuited hands above the diagonal, pairs on it, offsuit below",
                     fontsize=10)  # fmt: skip
    return f"{k} clusters of {labels.size} hands"


def plot_ochs(artifact: Artifact, out: Path, hand: str | None) -> str:
    """OCHS bars of one river hand (default: the paper's J♣9♡ on 4♢5♢9♢6♣J♠, or the same hand
    moved into the deck: 9c7h/2d3d7d4c9s with 8 ranks; rule in `GameDef.example_cards`)."""
    from gameforge.stages.poker.river_hs import hand_indexer

    game = game_def(artifact)
    cards = parse_hand(hand, game) if hand else game.example_cards(sum(game.num_board_cards))
    origin = "" if hand else hand_origin(game, cards)
    row = artifact["ochs"][hand_index(hand_indexer(game), cards)]
    values = np.asarray(row, dtype=np.float64) / artifact.meta["summary"]["scale"]
    with figure(out, dpi=120, figsize=(7, 4.2), layout="constrained") as (fig, ax):
        bars = ax.bar(range(values.size), values, color="#3b6ea5")
        ax.bar_label(bars, fmt="%.2f", fontsize=7, padding=2)
        ax.axhline(0.5, color="grey", linestyle="--", linewidth=1, label="HS 0.5 (even)")
        ax.set(
            ylim=(0, 1.08),
            xticks=range(values.size),
            xlabel="opponent cluster (0 = weakest)",
            ylabel="HS against the cluster's hands\n(wins + ties/2) / hands",
        )
        _legend_and_title(
            ax,
            f"ochs: hand strength of {title_hand(cards, game)}{origin} against each of "
            f"k={values.size} opponent clusters, {artifact.params['game']}",
        )
    return f"OCHS of {title_hand(cards, game)}: " + " ".join(f"{v:.3f}" for v in values)


# What each bucketing stage's k-means objective sums over the canonical hands of a round.
_OBJECTIVES = {
    "hsd-buckets": "mean EMD to the bucket's centroid\n(L1 between HSD CDFs, in HS bins)",
    "ochs-buckets": "mean squared L2 distance to the\nbucket's centroid (OCHS vectors)",
    "potential-buckets": "mean greedy EMD to the bucket's centroid\n(ground: next-round centroids)",
}
_METHODS = {
    "hsd-buckets": "EMD k-means of HSDs",
    "ochs-buckets": "L2 k-means of OCHS vectors",
    "potential-buckets": "potential-aware k-means (greedy EMD over next-round buckets)",
}


def plot_buckets(artifact: Artifact, out: Path, hand: str | None) -> str:
    """Per round: bucket-size histogram and the k-means objective (and pruning) per iteration."""
    summary = artifact.meta["summary"]
    rounds = sorted(summary["rounds"], key=int)
    game = game_def(artifact)
    centroid = summary.get("centroid")  # the centroid rule; absent in older artifacts
    rule = f", centroid rule: {centroid}" if centroid else ""
    size = (11, 3.9 * len(rounds) + 0.6)
    with figure(out, nrows=len(rounds), ncols=2, figsize=size, squeeze=False,
                layout="constrained") as (fig, axes):  # fmt: skip
        for row, r in zip(axes, rounds):
            name = _round_name(game, int(r))
            sizes = np.bincount(np.asarray(artifact[f"bucket_round{r}"][:]))
            row[0].hist(sizes, bins=int(min(60, max(10, sizes.size // 3))), color="#3b6ea5")
            row[0].set_xlabel("canonical hands per bucket")
            row[0].set_ylabel("buckets")
            integer_ticks(row[0].yaxis)
            row[0].set_title(f"{name}: {sizes.size:,} buckets of {sizes.sum():,} hands",
                             fontsize=10)  # fmt: skip
            objective = np.asarray(artifact[f"objective_round{r}"][:])
            per_hand = objective / max(int(summary["rounds"][r]["hands"]), 1)
            iterations = np.arange(1, objective.size + 1)
            row[1].plot(iterations, per_hand, marker="o", color="#3b6ea5",
                        label="objective (left axis)")  # fmt: skip
            kept = summary["rounds"][r].get("best_iteration")
            if kept:  # the iteration whose assignment is stored
                row[1].plot([kept], [per_hand[kept - 1]], marker="*", markersize=14,
                            color="#c0392b", linestyle="none",
                            label=f"stored (iteration {kept})")  # fmt: skip
            row[1].set_xlabel("Lloyd iteration (1: assignment to the k-means++ seeds)")
            row[1].set_ylabel(_OBJECTIVES.get(artifact.stage, "mean distance to the centroid"))
            integer_ticks(row[1].xaxis)
            row[1].grid(True, alpha=0.3)
            title = f"{name}: k-means objective"
            handles, texts = row[1].get_legend_handles_labels()
            if f"skipped_round{r}" in artifact.array_names():
                skipped = np.asarray(artifact[f"skipped_round{r}"][:])
                twin = row[1].twinx()
                twin.plot(iterations, 100 * skipped, color="#d08c2c", linestyle="--",
                          label="distances pruned (right axis)")  # fmt: skip
                twin.set_ylabel("distances pruned (%)", color="#d08c2c")
                twin.set_ylim(0, 105)
                more = twin.get_legend_handles_labels()
                handles, texts = handles + more[0], texts + more[1]
                title = f"{name}: k-means objective and pruning"
            row[1].legend(handles, texts, loc="upper center", bbox_to_anchor=(0.5, -0.2),
                          ncol=2, fontsize=8, frameon=False)  # fmt: skip
            row[1].set_title(title, fontsize=10)
        method = _METHODS.get(artifact.stage, "k-means")
        fig.suptitle(
            wrap_title(f"{artifact.stage}: k={summary['k']} buckets per round, {method}{rule}, "
                       f"{artifact.params['game']}", 100),
            fontsize=11,
        )  # fmt: skip
    return f"buckets of rounds {', '.join(rounds)}: k={summary['k']}{rule}"


def _round_name(game, round_: int) -> str:  # type: ignore[no-untyped-def]
    """`round 1 (flop)` for Hold'em-like games (named by the board cards seen), else `round 1`."""
    names = {0: "preflop", 3: "flop", 4: "turn", 5: "river"}
    seen = game.board_cards_through(round_)
    if game.num_hole_cards == 2 and seen in names:
        return f"round {round_} ({names[seen]})"
    return f"round {round_}"


_ALGORITHMS = {
    "cfr": "CFR",
    "cfr+": "CFR+",
    "chance": "chance-sampled MCCFR",
    "external": "external-sampling MCCFR",
    "public": "public chance sampling",
}
# The conventions of the two numbers (`FullWalkSolver.exploitability`, stages/poker/cfr.py's
# `regret_bound`); the figure defines only those it draws.
_EXPLOITABILITY = (
    "exploitability: mean over the two seats of the best response's gain (OpenSpiel's)"
)
_REGRET = (
    "positive regret / T: mean over the two players of the summed positive counterfactual "
    "regret per iteration"
)


def _regret_label(algorithm: str, lossless: bool, gamma: float) -> str:
    """What positive regret / T says about this solve: a bound only for full-traversal CFR
    on the lossless game (perfect recall); an estimate or indicator otherwise."""
    if algorithm in ("cfr", "cfr+"):
        if lossless and gamma == 0:
            return "positive regret / T (CFR's upper bound of the exploitability)"
        if lossless:
            return (
                "positive regret / T (CFR's upper bound for a uniform average; this run's "
                f"average weights iteration t by t^{gamma:g})"
            )
        return "positive regret / T (imperfect-recall abstraction: an indicator, not a bound)"
    if lossless:
        return "sampled positive regret / T (an estimate, not a bound)"
    return "sampled positive regret / T (abstract game; an indicator, not a bound)"


def _lineage_measurements(store: ArtifactStore, artifact: Artifact) -> list[dict[str, Any]]:
    """The real-game exploitability measured for this solve and for each solve it continues
    (`parent` inputs), each with the iteration count and curve time where it was taken."""
    found = []
    current: Artifact | None = artifact
    while current is not None:
        measured = measured_exploitability(store, store.dependents(current.key))
        if measured:
            curve_seconds = np.asarray(current["curve_seconds"][:])
            found.append(
                {
                    "key": current.key,
                    "iterations": int(current.meta["summary"]["iterations"]),
                    "seconds": float(curve_seconds[-1]) if curve_seconds.size else np.nan,
                    **measured,
                }
            )
        parent = current.inputs.get("parent")
        current = store.open(parent) if parent and store.exists(parent) else None
    return found


def plot_cfr(artifact: Artifact, out: Path, hand: str | None) -> str:
    """Convergence per iteration and per second of solving: the exact exploitability where the
    stage could compute it, positive regret / T, and the real game's exploitability measured
    by `best-response` (exact) and `lbr` (lower bound) artifacts of this solve or its parents."""
    iterations = np.asarray(artifact["curve_iteration"][:])
    exact = np.asarray(artifact["curve_exploitability"][:])
    bound = np.asarray(artifact["curve_regret_bound"][:])
    seconds = np.asarray(artifact["curve_seconds"][:])
    if iterations.size == 0:
        raise StageError(f"{artifact.key} recorded no evaluation points (evaluations=0)")
    summary = artifact.meta["summary"]
    scale = 1000.0 / float(summary["big_blind"])  # chips -> mbb/g
    algorithm = artifact.params["algorithm"]
    lossless = summary.get("abstraction") == "lossless"
    has_exact = bool(np.isfinite(exact).any())
    # unvalidated: older cfr+ artifacts recorded a plus=False that validation now refuses
    gamma = float(CFRParams.model_construct(**artifact.params).gamma())
    measured = _lineage_measurements(store_of(artifact), artifact)
    # The first point's time holds the start-up (numba compiles the solver's kernels on the
    # first iteration: seconds on Kuhn), so time is counted from the first evaluation point.
    since = seconds - seconds[0]
    startup = float(seconds[0])
    if lossless:
        game_text = "lossless"
    else:
        buckets = "-".join(str(b) for b in summary["layout"]["buckets_per_round"])
        game_text = f"{buckets} buckets per round"
    title = (
        f"cfr: {_ALGORITHMS.get(algorithm, algorithm)} on {artifact.params['game']} "
        f"({game_text}), {int(iterations[-1]):,} iterations"
    )
    budget = summary.get("budget_seconds")
    if budget is not None:
        how = "stopped by" if summary.get("stopped_by") == "time budget" else "within"
        title += f" ({how} its {float(budget):,.4g} s time budget)"
    startup_text = "off this clock" if budget is not None else "included"
    with figure(out, ncols=2, figsize=(12, 5.4), layout="constrained") as (fig, axes):
        panels = (
            (axes[0], iterations, "iterations", np.ones(iterations.size, dtype=bool)),
            (axes[1], since, f"seconds since the first evaluation (iteration "
                             f"{int(iterations[0]):,}; the {startup:.3g} s up to it not "
                             f"shown; start-up {startup_text})", since > 0),
        )  # fmt: skip
        for ax, x, xlabel, keep in panels:
            if has_exact:
                ax.plot(x[keep], exact[keep] * scale, marker="o",
                        label="exploitability (exact, real game)" if lossless
                        else "exploitability in the abstract game (exact)")  # fmt: skip
            ax.plot(x[keep], bound[keep] * scale, marker=".", linestyle="--",
                    label=_regret_label(algorithm, lossless, gamma))  # fmt: skip
            for point in measured:
                at = point["iterations"] if ax is axes[0] else point["seconds"] - startup
                if not at > 0:
                    continue
                if "exact_mbb_per_game" in point:
                    ax.plot([at], [point["exact_mbb_per_game"]], marker="*", markersize=15,
                            linestyle="none", color="#c8322c",
                            label="real-game exploitability (best-response artifact)")  # fmt: skip
                for _key, mean, lower, _deals in point.get("lbr", []):
                    if mean <= 0:
                        continue  # nothing to draw on a log axis; the description says so
                    ax.errorbar([at], [mean], yerr=[[mean - max(lower, 1e-9)], [0.0]],
                                marker="D", color="#2f9a3f", capsize=4, linestyle="none",
                                label="LBR mean (lbr artifact); bar: down to its one-sided "
                                "95% lower bound of the exploitability")  # fmt: skip
            if "parent_iterations" in summary:
                done = int(summary["parent_iterations"])
                at_parent = done if ax is axes[0] else _seconds_at(iterations, since, done)
                if at_parent is not None and at_parent > 0:
                    ax.axvline(at_parent, color="grey", linestyle=":",
                               label=f"continued from {summary['parent']} here")  # fmt: skip
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xlabel(wrap_title(xlabel, 60))
            ax.set_ylabel("mbb/g (thousandths of a big blind per game)")
            ax.grid(True, which="major", alpha=0.3)
            readable_log_axis(ax.xaxis)
            readable_log_axis(ax.yaxis)
        handles, labels = axes[0].get_legend_handles_labels()
        unique = dict(zip(labels, handles))
        drawn = [_EXPLOITABILITY] if any("exploitability" in x for x in unique) else []
        conventions = "; ".join([*drawn, _REGRET])
        fig.legend(unique.values(), unique.keys(), loc="outside lower center", ncol=1,
                   fontsize=8, frameon=False, title=wrap_title(conventions, 110),
                   title_fontsize=7)  # fmt: skip
        fig.suptitle(wrap_title(title, 110), fontsize=11)
    return _cfr_description(summary, iterations, exact, bound, scale, has_exact, measured)


def _seconds_at(iterations: np.ndarray, since: np.ndarray, iteration: int) -> float | None:
    """The curve time recorded at an iteration (a parent's last point), if it was recorded."""
    hits = np.flatnonzero(iterations == iteration)
    return float(since[hits[-1]]) if hits.size else None


def _cfr_description(
    summary: dict[str, Any],
    iterations: np.ndarray,
    exact: np.ndarray,
    bound: np.ndarray,
    scale: float,
    has_exact: bool,
    measured: list[dict[str, Any]],
) -> str:
    """One line: the solve's best measure of its exploitability and where it came from."""
    done = f"after {int(iterations[-1]):,} iterations"
    own: dict[str, Any] = next(
        (m for m in measured if m["iterations"] == int(summary["iterations"])), {}
    )
    if "exact_mbb_per_game" in own:
        return f"real-game exploitability {own['exact_mbb_per_game']:.2f} mbb/g {done}"
    if has_exact:
        where = "exploitability" if summary.get("abstraction") == "lossless" else (
            "abstract-game exploitability")  # fmt: skip
        return f"{where} {exact[-1] * scale:.2f} mbb/g {done}"
    line = f"positive regret / T {bound[-1] * scale:.2f} mbb/g {done}"
    if own.get("lbr"):
        _key, mean, lower, deals = max(own["lbr"], key=lambda run: run[3])
        line += f"; LBR {mean:.1f} mbb/g over {deals:,} deals (one-sided 95% bound {lower:.1f})"
    return line


def plot_league(artifact: Artifact, out: Path, hand: str | None) -> str:
    """Row-versus-column mbb/g heat map with 95% intervals, like the paper's league table;
    results whose interval contains 0 are grey."""
    from matplotlib.patches import Patch

    mbb = np.asarray(artifact["mbb_per_game"][:])
    ci = np.asarray(artifact["ci95"][:])
    summary = artifact.meta["summary"]
    labels = summary["players"]
    n = len(labels)
    hands = summary["hands_per_pairing"]
    ranking = ranking_line(summary)
    scored = summary.get("aivat") or {}
    size = (1.5 * n + 3.8 + (5 if scored else 0), 1.2 * n + 2.8)
    panels: dict[str, Any] = (
        {"ncols": 2, "gridspec_kw": {"width_ratios": [1.4, 1]}} if scored else {}
    )
    with figure(out, figsize=size, layout="constrained", **panels) as (fig, axes):
        ax = axes[0] if scored else axes
        if scored:
            aivat_panel(axes[1], scored, "row player's mbb/g")
        heat_map(ax, mbb, ci, labels, 1, mute_insignificant=True,
                 colour_bar="row player's winnings (mbb/g)")  # fmt: skip
        ax.set_ylabel("row player")
        muted = Patch(
            facecolor=MUTED,
            edgecolor="grey",
            label="grey: the 95% interval contains 0 (no significant difference)",
        )
        ax.legend(handles=[muted], loc="upper center", bbox_to_anchor=(0.5, -0.1), fontsize=8,
                  frameon=False, title=wrap_title(ranking, 70), title_fontsize=8)  # fmt: skip
        ax.set_title(
            wrap_title(
                f"league: duplicate round robin of {n} strategies, {hands:,} hands per pairing, "
                f"{artifact.params['game']}; cell: the row player's mbb/g against the column "
                "player ± the 95% interval's half-width",
                75,
            ),
            fontsize=10,
        )
    return ranking_line(summary)


def plot_best_response(artifact: Artifact, out: Path, hand: str | None) -> str:
    """Each seat's best-response value split into hands over before the first board and hands
    that reach it, and (with several canonical boards) each board's contribution, sorted."""
    summary = artifact.meta["summary"]
    scale = 1000.0 / float(summary["big_blind"])
    per_board = np.asarray(artifact["board_contribution"][:]) * scale  # (boards, 2) mbb/g
    folds = np.asarray(artifact["fold_contribution"][:]) * scale
    values = np.asarray(artifact["values"][:]) * scale
    exploitability = float(summary["exploitability_mbb_per_game"])
    n_boards = per_board.shape[0]
    board_cards = int(artifact["board_cards"].shape[1])
    ncols = 2 if n_boards > 1 else 1
    size = (12, 5.2) if ncols == 2 else (7, 5.2)
    with figure(out, ncols=ncols, figsize=size, squeeze=False, layout="constrained") as (fig, axes):
        ax = axes[0][0]
        seats = np.arange(2)
        parts = [("best response's value in the seat", values, "#3b6ea5")]
        if board_cards:  # the value splits at the first board (no split in a boardless game)
            parts += [
                ("from hands over before the first board", folds, "#9db8d9"),
                ("from hands that reach the first board", per_board.sum(axis=0), "#d08c2c"),
            ]
        width = 0.8 / len(parts)
        for i, (label, heights, colour) in enumerate(parts):
            offset = (i - (len(parts) - 1) / 2) * width
            bars = ax.bar(seats + offset, heights, width=width, color=colour, label=label)
            ax.bar_label(bars, fmt="%.1f", fontsize=7, padding=2)
        ax.axhline(exploitability, color="#c8322c", linestyle="--",
                   label=f"exploitability {exploitability:.3f} (mean of the seats)")  # fmt: skip
        ax.axhline(0.0, color="grey", linewidth=0.8)
        ax.set_xticks(seats, ["best response in seat 0", "best response in seat 1"])
        ax.set_ylabel("mbb/g won by the best response")
        ax.set_title("value per seat", fontsize=10)
        legend_below(ax, ncol=2)
        if ncols == 2:
            ax = axes[0][1]
            rank = np.arange(1, n_boards + 1)
            for seat, colour in ((0, "#3b6ea5"), (1, "#d08c2c")):
                ax.plot(rank, np.sort(per_board[:, seat])[::-1], drawstyle="steps-mid",
                        color=colour, label=f"best response in seat {seat}")  # fmt: skip
            ax.axhline(0.0, color="grey", linewidth=0.8)
            ax.set_xlabel("canonical first-round boards, ranked by contribution")
            ax.set_ylabel("mbb/g contributed by the board\n(its suit-isomorphic orbit)")
            integer_ticks(ax.xaxis)
            ax.grid(True, alpha=0.3)
            ax.set_title(f"where the value comes from: {n_boards:,} canonical boards", fontsize=10)
            legend_below(ax, ncol=2)
        fig.suptitle(
            wrap_title(
                f"best-response: exact best response of {artifact.params['game']} against "
                f"{summary['strategy']}: exploitability {exploitability:.3f} mbb/g "
                "(mean over the two seats)",
                100 if ncols == 2 else 60,
            ),
            fontsize=11,
        )
    return f"exploitability {exploitability:.3f} mbb/g (exact) of {summary['strategy']}"


def plot_lbr(artifact: Artifact, out: Path, hand: str | None) -> str:
    """LBR's running mean winnings per deal with its 95% interval: a lower bound of the
    strategy's exploitability in the real game."""
    from gameforge.engines.common.stats import Z_ONE_SIDED_95, Z_TWO_SIDED_95

    summary = artifact.meta["summary"]
    game = game_def(artifact)
    scale = 1000.0 / float(max(game.blind))
    wins = np.asarray(artifact["winnings"][:], dtype=np.float64) * scale  # mbb/g per deal
    deals = np.arange(1, wins.size + 1)
    mean = np.cumsum(wins) / deals
    square = np.cumsum(wins * wins) / deals
    var = np.maximum(square - mean * mean, 0.0) * deals / np.maximum(deals - 1, 1)
    half = Z_TWO_SIDED_95 * np.sqrt(var / deals)
    final = float(mean[-1])
    lower = final - Z_ONE_SIDED_95 * float(np.sqrt(var[-1] / wins.size))
    with figure(out, figsize=(8, 5), layout="constrained") as (fig, ax):
        start = min(10, wins.size - 1)  # the first few deals' intervals say nothing
        ax.fill_between(
            deals[start:],
            (mean - half)[start:],
            (mean + half)[start:],
            color="#3b6ea5",
            alpha=0.2,
            label="95% interval of the mean (±1.96 SE)",
        )
        ax.plot(deals[start:], mean[start:], color="#3b6ea5", label="mean winnings so far")
        ax.axhline(lower, color="#c8322c", linestyle="--",
                   label=f"one-sided 95% lower bound {lower:.1f} (mean - "
                   f"{Z_ONE_SIDED_95}·SE, all deals)")  # fmt: skip
        ax.axhline(0.0, color="grey", linewidth=0.8, label="0 (no exploitation shown)")
        ax.set_xlabel("deals played (each from both seats)")
        ax.set_ylabel("LBR's winnings (mbb/g, mean of both seats)")
        integer_ticks(ax.xaxis)
        ax.grid(True, alpha=0.3)
        legend_below(ax, ncol=2)
        ax.set_title(
            wrap_title(
                f"lbr: local best response against {summary['strategy']} "
                f"({artifact.params['game']}), {wins.size:,} deals, seed "
                f"{artifact.params['seed']}: a lower bound of the real-game exploitability",
                80,
            ),
            fontsize=10,
        )
    return str(summary.get("bound", f"LBR {final:.1f} mbb/g over {wins.size:,} deals"))


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
    "lbr": plot_lbr,
}
