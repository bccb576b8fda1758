"""Figures of artifacts (`gameforge artifacts plot KEY`): one PNG per artifact, by stage."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np

from gameforge.artifacts import Artifact
from gameforge.engines.poker.cards import RANK_CHARS, format_cards, parse_cards
from gameforge.stages.base import StageError
from gameforge.stages.poker.params import GameParams

# The paper's example hands (Limit Hold'em abstraction paper, figures of HSD and OCHS).
PAPER_FLOP_HAND = "Jc9h4d5d9d"
PAPER_RIVER_HAND = "Jc9h4d5d9d6cJs"


def _pyplot():  # type: ignore[no-untyped-def]
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _save(plt, fig, out: Path) -> None:  # type: ignore[no-untyped-def]
    """Lay out, write the PNG and free the figure."""
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def _game(artifact: Artifact):  # type: ignore[no-untyped-def]
    return GameParams(game=artifact.params["game"]).game_def()


def _parse_hand(text: str, game) -> list[int]:  # type: ignore[no-untyped-def]
    cards = parse_cards(text.replace("/", "").replace("|", ""), game.num_ranks, game.num_suits)
    if len(cards) < game.num_hole_cards:
        raise StageError(f"hand {text!r}: needs {game.num_hole_cards} hole cards first")
    return cards


def _title_hand(cards: list[int], game) -> str:  # type: ignore[no-untyped-def]
    hole = format_cards(cards[: game.num_hole_cards], game.num_suits)
    board = format_cards(cards[game.num_hole_cards :], game.num_suits)
    return f"{hole} | {board}" if board else hole


def plot_river_hs(artifact: Artifact, out: Path, hand: str | None) -> str:
    """Histogram of HS over all canonical last-round hands."""
    plt = _pyplot()
    counts = np.asarray(artifact["hs_count"][:])
    hs = counts / artifact.meta["summary"]["hs_denominator"]
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.hist(hs, bins=50, range=(0, 1), color="#3b6ea5")
    ax.set_xlabel("hand strength (wins + ties/2) / opponent hands")
    ax.set_ylabel("canonical hands")
    ax.set_title(f"River HS over {hs.size:,} canonical hands ({artifact.params['game']})")
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    plt.close(fig)
    return f"HS histogram of {hs.size:,} hands"


def plot_hsd(artifact: Artifact, out: Path, hand: str | None) -> str:
    """The HSD of one hand (default: the paper's J♣9♡ on 4♢5♢9♢)."""
    from gameforge.stages.poker.hsd import array_name, round_indexer

    plt = _pyplot()
    game = _game(artifact)
    cards = _parse_hand(hand or PAPER_FLOP_HAND, game)
    seen = len(cards) - game.num_hole_cards
    rounds = [r for r in range(game.num_rounds - 1) if game.board_cards_through(r) == seen]
    if not rounds or array_name(rounds[0]) not in artifact.array_names():
        raise StageError(f"hsd: no histograms for hands with {seen} board cards in {artifact.key}")
    round_ = rounds[0]
    indexer = round_indexer(game, round_)
    index = int(indexer.index(np.array([cards], np.int8), indexer.rounds - 1, validate=True)[0])
    row = np.asarray(artifact[array_name(round_)][index], dtype=np.float64)
    hist = row / row.sum()
    bins = hist.size
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.bar((np.arange(bins) + 0.5) / bins, hist, width=1 / bins, color="#3b6ea5", edgecolor="w")
    ax.set_xlim(0, 1)
    ax.set_xlabel("river hand strength")
    ax.set_ylabel("share of board completions")
    ax.set_title(f"HSD of {_title_hand(cards, game)} (round {round_}, {int(row.sum()):,} boards)")
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    plt.close(fig)
    return f"HSD of {_title_hand(cards, game)}"


def plot_opponent_clusters(artifact: Artifact, out: Path, hand: str | None) -> str:
    """13x13 grid (pairs on the diagonal, suited above, offsuit below) coloured by cluster."""
    from gameforge.stages.poker.hsd import round_indexer
    from gameforge.stages.poker.opponent_clusters import hand_name

    plt = _pyplot()
    game = _game(artifact)
    labels = np.asarray(artifact["cluster"][:])
    k = int(artifact.meta["summary"]["k"])
    cmap = plt.get_cmap("viridis", k)
    if game.num_hole_cards != 2:
        strength = np.asarray(artifact["expected_hs"][:])
        fig, ax = plt.subplots(figsize=(7, 4))
        ax.bar(range(labels.size), strength, color=cmap(labels))
        ax.set_xlabel("first-round hand (canonical index)")
        ax.set_ylabel("E[HS]")
        fig.savefig(out, dpi=120)
        plt.close(fig)
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
    fig, ax = plt.subplots(figsize=(8, 7))
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
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    plt.close(fig)
    return f"{k} clusters of {labels.size} hands"


def plot_ochs(artifact: Artifact, out: Path, hand: str | None) -> str:
    """OCHS bars of one river hand (default: the paper's J♣9♡ on 4♢5♢9♢6♣J♠)."""
    from gameforge.stages.poker.river_hs import hand_indexer

    plt = _pyplot()
    game = _game(artifact)
    cards = _parse_hand(hand or PAPER_RIVER_HAND, game)
    indexer = hand_indexer(game)
    index = int(indexer.index(np.array([cards], np.int8), indexer.rounds - 1, validate=True)[0])
    values = (
        np.asarray(artifact["ochs"][index], dtype=np.float64) / artifact.meta["summary"]["scale"]
    )
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.bar(range(values.size), values, color="#3b6ea5")
    ax.set_ylim(0, 1)
    ax.set_xticks(range(values.size))
    ax.set_xlabel("opponent cluster (0 = weakest)")
    ax.set_ylabel("HS against the cluster")
    ax.set_title(f"OCHS of {_title_hand(cards, game)}")
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    plt.close(fig)
    return f"OCHS of {_title_hand(cards, game)}: " + " ".join(f"{v:.3f}" for v in values)


def plot_buckets(artifact: Artifact, out: Path, hand: str | None) -> str:
    """Per round: bucket-size histogram and the k-means objective (and pruning) per iteration."""
    plt = _pyplot()
    rounds = sorted(artifact.meta["summary"]["rounds"], key=int)
    fig, axes = plt.subplots(len(rounds), 2, figsize=(11, 3.6 * len(rounds)), squeeze=False)
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
    _save(plt, fig, out)
    return f"buckets of rounds {', '.join(rounds)}"


def plot_cfr(artifact: Artifact, out: Path, hand: str | None) -> str:
    """Exploitability (exact where computable, else the regret indicator) per iteration and time."""
    plt = _pyplot()
    iterations = np.asarray(artifact["curve_iteration"][:])
    exact = np.asarray(artifact["curve_exploitability"][:])
    bound = np.asarray(artifact["curve_regret_bound"][:])
    seconds = np.asarray(artifact["curve_seconds"][:])
    if iterations.size == 0:
        raise StageError(f"{artifact.key} recorded no evaluation points (evaluations=0)")
    bb = float(artifact.meta["summary"]["big_blind"])
    has_exact = bool(np.isfinite(exact).any())
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for ax, x, label in ((axes[0], iterations, "iterations"), (axes[1], seconds, "seconds")):
        if has_exact:
            ax.loglog(x, exact / bb * 1000, marker="o", label="exploitability (exact)")
        ax.loglog(x, bound / bb * 1000, marker=".", linestyle="--", label="positive regret / T")
        ax.set_xlabel(label)
        ax.set_ylabel("mbb/g")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
    algorithm = artifact.params["algorithm"]
    fig.suptitle(f"{artifact.key}: {algorithm} on {artifact.params['game']}")
    _save(plt, fig, out)
    final = exact[-1] if has_exact else bound[-1]
    what = "exploitability" if has_exact else "positive regret per iteration"
    return f"{what} {final / bb * 1000:.2f} mbb/g after {int(iterations[-1]):,} iterations"


def _heat_map(ax, table: np.ndarray, ci: np.ndarray, labels: list[str], digits: int) -> None:  # type: ignore[no-untyped-def]
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


def plot_league(artifact: Artifact, out: Path, hand: str | None) -> str:
    """Row-versus-column mbb/g heat map with 95% intervals, like the paper's league table."""
    plt = _pyplot()
    mbb = np.asarray(artifact["mbb_per_game"][:])
    ci = np.asarray(artifact["ci95"][:])
    summary = artifact.meta["summary"]
    labels = summary["players"]
    n = len(labels)
    fig, ax = plt.subplots(figsize=(1.6 * n + 3, 1.2 * n + 1.5))
    _heat_map(ax, mbb, ci, labels, 1)
    ax.set_ylabel("row player (mbb/g won)")
    hands = summary["hands_per_pairing"]
    ax.set_title(f"league: {hands:,} hands per pairing, 95% intervals")
    _save(plt, fig, out)
    return "ranking " + " > ".join(summary["ranking"])


def plot_nlhe_league(artifact: Artifact, out: Path, hand: str | None) -> str:
    """BB/hand heat map with 95% intervals (the paper's Table 3), action mix and raise sizes."""
    plt = _pyplot()
    table = np.asarray(artifact["bb_per_hand"][:])
    ci = np.asarray(artifact["ci95"][:])
    mix = np.asarray(artifact["action_mix"][:]).astype(float)
    sizes = np.asarray(artifact["raise_sizes"][:]).astype(float)
    summary = artifact.meta["summary"]
    labels = summary["players"]
    n = len(labels)
    fig, axes = plt.subplots(
        1, 3, figsize=(1.5 * n + 11, 1.1 * n + 2), gridspec_kw={"width_ratios": [1.6, 1, 1]}
    )
    _heat_map(axes[0], table, ci, labels, 2)
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
    _save(plt, fig, out)
    return "ranking " + " > ".join(summary["ranking"])


def plot_nlhe_train(artifact: Artifact, out: Path, hand: str | None) -> str:
    """Training and validation loss per epoch."""
    plt = _pyplot()
    train = np.asarray(artifact["train_loss"][:])
    valid = np.asarray(artifact["valid_loss"][:])
    epochs = np.arange(1, len(train) + 1)
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot(epochs, train, marker="o", label="training")
    ax.plot(epochs, valid, marker="s", label="validation")
    ax.set_xlabel("epoch")
    ax.set_ylabel("mean squared error (chips won / buy-in)")
    ax.set_title(f"{artifact.key}")
    ax.grid(True, alpha=0.3)
    ax.legend()
    _save(plt, fig, out)
    return f"validation loss {valid[-1]:.4f} after {len(train)} epochs"


def plot_hearts_eval(artifact: Artifact, out: Path, hand: str | None) -> str:
    """Penalty ratio against learning games, per variant (mean over trials, min-max band),
    against rule-based and against Monte Carlo agents: the paper's two learning-curve figures."""
    plt = _pyplot()
    curve = np.asarray(artifact["curve"][:])  # (learner, checkpoint, vs rule-based, vs MC)
    labels = artifact.meta["summary"]["learners"]
    variants: dict[str, list[int]] = {}
    for li, label in enumerate(labels):
        variants.setdefault(label.rsplit(" seed ", 1)[0], []).append(li)
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5), sharey=True)
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
    _save(plt, fig, out)
    table = artifact.meta["summary"]["table"]
    return "; ".join(
        f"{v}: {t['vs_rule_based']:.4f} / {t['vs_monte_carlo']:.4f}" for v, t in table.items()
    )


BLOKUS_COLOURS = ("#1f5fbf", "#e8c31a", "#c8322c", "#2f9a3f")  # blue, yellow, red, green


def plot_blokus_eval(artifact: Artifact, out: Path, hand: str | None) -> str:
    """Win rate against three MCTS-MAXN per training step (95% intervals), the policy
    network's statistics by pieces on the board (the paper's Figure 12) and a final board of
    the last network's games (`--hand N` picks game N)."""
    plt = _pyplot()
    steps = np.asarray(artifact["steps"][:])
    rates = np.asarray(artifact["win_rate"][:])
    last = len(steps) - 1
    fig, axes = plt.subplots(1, 3, figsize=(17, 5))
    ax = axes[0]
    ax.errorbar(steps, rates[:, 0], yerr=rates[:, 1], marker="o", capsize=3)
    ax.axhline(0.25, color="grey", linestyle="--", linewidth=1, label="par (1 of 4)")
    ax.set_xlabel("training steps")
    ax.set_ylabel("BlokusZero win rate vs 3 MCTS-MAXN")
    ax.set_ylim(0, 1)
    ax.grid(True, alpha=0.3)
    ax.legend()
    ax = axes[1]
    policy = (
        np.asarray(artifact[f"policy_{last}"][...])
        if f"policy_{last}" in artifact.array_names()
        else np.zeros((0, 6))
    )
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
    ax = axes[2]
    boards = (
        np.asarray(artifact[f"boards_{last}"][...])
        if f"boards_{last}" in artifact.array_names()
        else np.zeros((0, 400))
    )
    if len(boards):
        g = int(hand) if hand and hand.isdigit() else 0
        g = min(g, len(boards) - 1)
        grid = boards[g].reshape(20, 20).astype(int)
        image = np.ones((20, 20, 3))
        for colour, hexcode in enumerate(BLOKUS_COLOURS):
            rgb = [int(hexcode[i : i + 2], 16) / 255 for i in (1, 3, 5)]
            image[grid == colour] = rgb
        ax.imshow(image, interpolation="nearest")
        ax.set_xticks(np.arange(-0.5, 20, 1), minor=True)
        ax.set_yticks(np.arange(-0.5, 20, 1), minor=True)
        ax.grid(which="minor", color="#cccccc", linewidth=0.5)
        ax.tick_params(which="both", length=0, labelbottom=False, labelleft=False)
        scores = np.asarray(artifact[f"scores_{last}"][...])[g]
        seat = int(np.asarray(artifact[f"seat_{last}"][...])[g])
        names = ("blue", "yellow", "red", "green")
        parts = [f"{n}{'*' if i == seat else ''} {int(scores[i]):+d}" for i, n in enumerate(names)]
        ax.set_title(f"game {g}: {', '.join(parts)}  (* BlokusZero)", fontsize=9)
    _save(plt, fig, out)
    return f"win rate {rates[last, 0]:.3f} ± {rates[last, 1]:.3f} after {int(steps[last]):,} steps"


def plot_blokus_curve(artifact: Artifact, out: Path, hand: str | None) -> str:
    """BlokusZero's win rate against three MCTS-MAXN by training step, 95% intervals (the
    paper's Figure 10)."""
    plt = _pyplot()
    steps = np.asarray(artifact["steps"][:])
    rates = np.asarray(artifact["win_rate"][:])
    games = np.asarray(artifact["games"][:])
    fig, ax = plt.subplots(figsize=(7, 4.5))
    ax.errorbar(steps, rates[:, 0], yerr=rates[:, 1], marker="o", capsize=3, label="BlokusZero")
    for x, y, n in zip(steps, rates[:, 0], games, strict=True):
        ax.annotate(f"{n}", (x, y), textcoords="offset points", xytext=(4, -12), fontsize=7)
    ax.axhline(0.25, color="grey", linestyle="--", linewidth=1, label="par (1 of 4)")
    ax.set_xlabel("training steps")
    ax.set_ylabel("win rate vs 3 MCTS-MAXN (games annotated)")
    ax.set_ylim(0, 1)
    ax.grid(True, alpha=0.3)
    ax.legend()
    _save(plt, fig, out)
    return f"win rate {rates[-1, 0]:.3f} ± {rates[-1, 1]:.3f} after {int(steps[-1]):,} steps"


def plot_blokus_train(artifact: Artifact, out: Path, hand: str | None) -> str:
    """Value and policy loss per training step (running mean over 50 steps)."""
    plt = _pyplot()
    losses = np.asarray(artifact["losses"][...])
    total = int(np.asarray(artifact["steps_total"][...]).ravel()[0])
    x = np.arange(total - len(losses) + 1, total + 1)
    w = max(1, min(50, len(losses)))
    kernel = np.ones(w) / w
    fig, ax = plt.subplots(figsize=(7, 4))
    for j, label in ((0, "value loss (z - v)^2"), (1, "policy loss -pi . log p")):
        smooth = np.convolve(losses[:, j], kernel, mode="valid")
        ax.plot(x[w - 1 :], smooth, label=label)
    ax.set_xlabel("global training step")
    ax.set_ylabel(f"loss (mean of {w} steps)")
    ax.set_title(artifact.key)
    ax.grid(True, alpha=0.3)
    ax.legend()
    _save(plt, fig, out)
    return (
        f"value {losses[-w:, 0].mean():.3f}, policy {losses[-w:, 1].mean():.3f} at step {total:,}"
    )


PLOTTERS: dict[str, Callable[[Artifact, Path, str | None], str]] = {
    "blokus-curve": plot_blokus_curve,
    "blokus-eval": plot_blokus_eval,
    "blokus-train": plot_blokus_train,
    "hearts-eval": plot_hearts_eval,
    "nlhe-league": plot_nlhe_league,
    "nlhe-train": plot_nlhe_train,
    "league": plot_league,
    "cfr": plot_cfr,
    "river-hs": plot_river_hs,
    "hsd": plot_hsd,
    "opponent-clusters": plot_opponent_clusters,
    "ochs": plot_ochs,
    "hsd-buckets": plot_buckets,
    "ochs-buckets": plot_buckets,
    "potential-buckets": plot_buckets,
}


def plot(artifact: Artifact, out: Path, hand: str | None = None) -> str:
    """Write the artifact's figure to `out` (PNG); returns a one-line description."""
    plotter = PLOTTERS.get(artifact.stage)
    if plotter is None:
        raise StageError(f"no plot for {artifact.stage} artifacts (plots: {', '.join(PLOTTERS)})")
    return plotter(artifact, out, hand)
