"""Blokus figures: BlokusZero's self-play games, its training, its win rate against MCTS-MAXN
and its policy network's statistics."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from gameforge.artifacts import Artifact
from gameforge.engines.common.stats import wilson_interval
from gameforge.flows.plots.common import (
    Plotter,
    figure,
    integer_ticks,
    key_footnote,
    legend_below,
    reference_line,
    single_x_range,
    stage_title,
    store_of,
)
from gameforge.stages.reporting import UNTRAINED, win_rate_text

BLOKUS_COLOURS = ("#1f5fbf", "#e8c31a", "#c8322c", "#2f9a3f")  # blue, yellow, red, green
COLOUR_NAMES = ("blue", "yellow", "red", "green")
PAR_LABEL = "par 0.25 (1 of 4 players)"
WIN_RATE_LABEL = "win rate (a top score shared by k counts 1/k)"
ENTROPY_POSITIONS = 20_000  # positions whose policy-target entropy a self-play figure draws


def _rate_rows(rows: list[dict[str, Any]]) -> tuple[np.ndarray, ...]:
    """(steps, win rate, 95% Wilson low, high, games) of result rows; rows written before the
    Wilson interval (a normal half-width) get it from their rate and games."""
    steps, rate, low, high, games = [], [], [], [], []
    for row in rows:
        n = int(row["games"])
        if "win_rate_low" in row:
            lo, hi = float(row["win_rate_low"]), float(row["win_rate_high"])
        else:
            lo, hi = wilson_interval(min(float(row["win_rate"]) * n, n), n)
        steps.append(int(row["steps"]))
        rate.append(float(row["win_rate"]))
        low.append(lo)
        high.append(hi)
        games.append(n)
    return tuple(np.array(v) for v in (steps, rate, low, high, games))


def _win_rate_axes(ax, rows: list[dict[str, Any]]) -> None:  # type: ignore[no-untyped-def]
    """Win rate against three MCTS-MAXN per training step, 95% Wilson intervals, the games
    behind each point written above it (n=12+120: two evaluations of that step), against
    par."""
    control = [r for r in rows if r.get("net") == UNTRAINED]
    if control:  # the untrained network on the same games: apart from the curve, in grey
        c_steps, c_rate, c_low, c_high, _ = _rate_rows(control)
        ax.errorbar(c_steps, c_rate, yerr=[c_rate - c_low, c_high - c_rate], marker="s",
                    capsize=3, linestyle="none", color="grey",
                    label="untrained control, same games")  # fmt: skip
    steps, rate, low, high, games = _rate_rows(rows)
    trained = np.array([r.get("net") != UNTRAINED for r in rows])
    ax.errorbar(steps[trained], rate[trained],
                yerr=[(rate - low)[trained], (high - rate)[trained]], marker="o", capsize=3,
                linestyle="-" if trained.sum() > 1 else "none",
                label="BlokusZero, 95% Wilson interval")  # fmt: skip
    for x in np.unique(steps):  # evaluations of one step (several runs) share one label
        at = steps == x
        counts = "+".join(str(n) for n in games[at])
        ax.annotate(f"n={counts}", (x, high[at].max()), textcoords="offset points",
                    xytext=(0, 4), ha="center", fontsize=7)  # fmt: skip
    reference_line(ax, 0.25, PAR_LABEL)
    ax.set_xlabel("training steps (global)")
    ax.set_ylabel(WIN_RATE_LABEL)
    ax.set_ylim(-0.03, 1.12)
    ax.set_yticks(np.linspace(0, 1, 6))
    single_x_range(ax, steps)
    integer_ticks(ax.xaxis)
    ax.grid(True, alpha=0.3)
    legend_below(ax, ncol=2)


def _last_array(artifact: Artifact, name: str, width: int) -> np.ndarray:
    """An array of the last checkpoint's games, or an empty one where the eval kept none."""
    if name in artifact.array_names():
        return np.asarray(artifact[name][...])
    return np.zeros((0, width))


def _policy_by_pieces(policy: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Bins of 4 pieces on the board: centres, mean `POLICY_STATS` rows, decisions per bin."""
    pieces = policy[:, 0]
    centre, means, counts = [], [], []
    for lo in range(0, 88, 4):
        sel = (pieces >= lo) & (pieces < lo + 4)
        if sel.any():
            centre.append(lo + 1.5)
            means.append(policy[sel].mean(axis=0))
            counts.append(int(sel.sum()))
    return np.array(centre), np.array(means), np.array(counts)


def _policy_mass_axes(ax, policy: np.ndarray) -> None:  # type: ignore[no-untyped-def]
    """How much of the policy network's root prior lies on its top 1, 10 and 100 moves."""
    if len(policy):
        centre, mean, _counts = _policy_by_pieces(policy)
        for j, label in ((3, "top-1 move"), (4, "top-10 moves"), (5, "top-100 moves")):
            ax.plot(centre, mean[:, j], marker="o", label=label)
        legend_below(ax, ncol=3)
    ax.set_ylim(0, 1.02)
    ax.set_xlim(0, 88)
    ax.set_ylabel("prior probability on the top moves")
    ax.set_xlabel("pieces on the board (bins of 4)")
    ax.set_title(f"policy network's root prior (Figure 12), {len(policy):,} decisions")
    ax.grid(True, alpha=0.3)


def _policy_spread_axes(ax, policy: np.ndarray) -> None:  # type: ignore[no-untyped-def]
    """Legal moves and the prior's entropy against pieces on the board (two scales)."""
    handles = []
    if len(policy):
        centre, mean, _counts = _policy_by_pieces(policy)
        handles += ax.plot(centre, mean[:, 1], marker="s", color="black", label="legal moves")
        twin = ax.twinx()
        handles += twin.plot(centre, mean[:, 2], marker="^", color="#c8322c",
                             label="entropy of the prior (nats, right axis)")  # fmt: skip
        uniform = np.log(np.maximum(mean[:, 1], 1))
        handles += twin.plot(centre, uniform, linestyle=":", color="#c8322c",
                             label="log(legal moves): a uniform prior's entropy")  # fmt: skip
        twin.set_ylabel("entropy (nats)")
        twin.set_ylim(bottom=0)
        legend_below(ax, ncol=2, handles=handles)
    ax.set_xlim(0, 88)
    ax.set_ylim(bottom=0)
    integer_ticks(ax.yaxis)
    ax.set_ylabel("legal moves (mean over the bin's decisions)")
    ax.set_xlabel("pieces on the board (bins of 4)")
    ax.set_title("choice and spread of the prior")
    ax.grid(True, alpha=0.3)


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
    parts = [
        f"{n}{'*' if i == seat else ''} {int(scores[i]):+d}" for i, n in enumerate(COLOUR_NAMES)
    ]
    ax.set_title(f"final board of game {g}: {', '.join(parts)}\n(* BlokusZero; score: "
                 "-1 per square left, +15 all placed, +20 monomino last)", fontsize=9)  # fmt: skip


def _search_text(p: dict[str, Any]) -> str:
    """The search settings shared by self-play and evaluation, as title text."""
    parts = [f"root {p.get('root_rule', 'puct')}"]
    if p.get("root_rule") == "gumbel":
        parts.append(f"{p.get('considered')} considered")
    if p.get("fpu_reduction") is not None:
        parts.append(f"fpu -{p['fpu_reduction']}")
    if p.get("rollout_mix"):
        parts.append(f"rollout mix {p['rollout_mix']}")
    if p.get("value_margin"):
        parts.append(f"value margin {p['value_margin']}")
    return ", ".join(parts)


def plot_blokus_eval(artifact: Artifact, out: Path, hand: str | None) -> str:
    """Win rate against three MCTS-MAXN per training step (95% Wilson intervals), the policy
    network's statistics by pieces on the board (the paper's Figure 12) and a final board of
    the last network's games (`--hand N` picks game N)."""
    rows = artifact.meta["summary"]["table"]
    last = len(rows) - 1
    p = artifact.params
    policy = _last_array(artifact, f"policy_{last}", 6)
    title = stage_title(
        artifact,
        f"BlokusZero ({p['zero_sims']} simulations) in a random seat vs 3 MCTS-MAXN "
        f"({p['mcts_sims']} rollouts)\n{p['random_plies']} random opening placements, "
        f"{_search_text(p)}, seed {p['seed']}",
    )
    with figure(out, nrows=2, ncols=2, figsize=(14, 11), layout="constrained") as (fig, axes):
        fig.suptitle(title)
        _win_rate_axes(axes[0, 0], rows)
        wins = sum(float(r["win_rate"]) * int(r["games"]) for r in rows)
        games = sum(int(r["games"]) for r in rows)
        versus = artifact.meta["summary"].get("versus_control")
        verdict = ""
        if versus:
            verdict = (
                "\nintervals separate: above the untrained control"
                if versus["above"]
                else "\nintervals separate: below the untrained control"
                if versus["separated"]
                else "\nintervals overlap the untrained control's"
            )
        # wins are fractional (a top score shared by k counts 1/k): "won 0.5 of 1 game"
        axes[0, 0].set_title(f"win rate of {len(rows)} network{'s' if len(rows) > 1 else ''} "
                             f"(won {wins:g} of {games:,} game{'s' if games != 1 else ''})"
                             f"{verdict}")  # fmt: skip
        _policy_mass_axes(axes[0, 1], policy)
        _policy_spread_axes(axes[1, 0], policy)
        boards = _last_array(artifact, f"boards_{last}", 400)
        if len(boards):
            g = min(int(hand) if hand and hand.isdigit() else 0, len(boards) - 1)
            scores = np.asarray(artifact[f"scores_{last}"][...])[g]
            seat = int(np.asarray(artifact[f"seat_{last}"][...])[g])
            _board_axes(axes[1, 1], boards[g], scores, seat, g)
        else:
            axes[1, 1].set_axis_off()
        key_footnote(fig, artifact)
    return win_rate_text(rows[last])


def plot_blokus_curve(artifact: Artifact, out: Path, hand: str | None) -> str:
    """BlokusZero's win rate against three MCTS-MAXN by training step, 95% Wilson intervals
    (the paper's Figure 10)."""
    rows = artifact.meta["summary"]["table"]
    evals = artifact.meta["summary"].get("evals", [])
    settings = ""
    store = store_of(artifact)
    if evals and store.exists(evals[0]):
        p = store.open(evals[0]).params
        settings = f" ({p['zero_sims']} simulations) vs 3 MCTS-MAXN ({p['mcts_sims']} rollouts)"
    title = stage_title(
        artifact, f"BlokusZero{settings or ' vs 3 MCTS-MAXN'}\nlearning curve of {len(rows)} "
        f"evaluation{'s' if len(rows) > 1 else ''}, {sum(int(r['games']) for r in rows):,} games"
    )  # fmt: skip
    with figure(out, figsize=(8, 5.2), layout="constrained") as (fig, ax):
        _win_rate_axes(ax, rows)
        ax.set_title(title, fontsize=10)
        key_footnote(fig, artifact)
    return win_rate_text(rows[-1])


def _train_chain(artifact: Artifact) -> list[Artifact]:
    """This `blokus-train` artifact and the `previous` networks it continues, oldest first
    (those in the store)."""
    chain = [artifact]
    store = store_of(artifact)
    while "previous" in chain[0].inputs and store.exists(chain[0].inputs["previous"]):
        chain.insert(0, store.open(chain[0].inputs["previous"]))
    return chain


def _lr_text(p: dict[str, Any], first: int, last: int) -> str:
    """The learning rates this artifact's global steps `first`..`last` (0-based) trained with:
    one rate where `lr_late` equals `lr` or the drop is outside them, else both and where."""
    lr, late, drop = float(p["lr"]), float(p["lr_late"]), int(p["lr_drop_step"])
    if lr == late or drop <= first:
        return f"lr {late:g}"
    if drop > last:
        return f"lr {lr:g} ({late:g} from global step {drop:,}: not reached)"
    return f"lr {lr:g}, then {late:g} from global step {drop:,}"


def plot_blokus_train(artifact: Artifact, out: Path, hand: str | None) -> str:
    """Value and policy loss per training step, with the earlier networks this one continues
    (running mean where there are enough steps)."""
    chain = _train_chain(artifact)
    xs, ys = [], []
    for art in chain:
        losses = np.asarray(art["losses"][...], np.float64)
        total = int(np.asarray(art["steps_total"][...]).ravel()[0])
        xs.append(np.arange(total - len(losses) + 1, total + 1))
        ys.append(losses)
    x = np.concatenate(xs)
    y = np.concatenate(ys)
    own = xs[-1]
    w = max(1, min(50, len(y) // 10))
    p = artifact.params
    s = artifact.meta["summary"]
    options = [name for name in ("augment", "legal_softmax") if p.get(name)]
    if p.get("value_weight", 1.0) != 1.0:
        options.append(f"value weight {p['value_weight']}")
    title = stage_title(
        artifact,
        f"net {p['blocks']}x{p['filters']}, {p['steps']:,} steps of batch {p['batch']}, "
        f"{_lr_text(p, int(own[0]) - 1, int(own[-1]) - 1)}, buffer "
        f"{s.get('buffer_games', '?')} games" + (f", {', '.join(options)}" if options else ""),
    )
    with figure(out, ncols=2, figsize=(13, 5), sharex=True, layout="constrained") as (fig, axes):
        fig.suptitle(title)
        for ax, j, name in ((axes[0], 0, "value loss (z - v)^2"),
                            (axes[1], 1, "policy loss -pi . log p")):  # fmt: skip
            if len(chain) > 1:
                ax.axvspan(own[0] - 0.5, own[-1] + 0.5, color="#1f5fbf", alpha=0.08,
                           label=f"this artifact's {len(own):,} steps")  # fmt: skip
            ax.plot(x, y[:, j], marker="o" if len(x) <= 200 else None, markersize=3,
                    linewidth=0.8, alpha=0.6 if w > 1 else 1.0,
                    label="per step (one batch)")  # fmt: skip
            if w > 1:
                smooth = np.convolve(y[:, j], np.ones(w) / w, mode="valid")
                ax.plot(x[w - 1 :], smooth, color="black", label=f"running mean of {w} steps")
            if x[0] <= p["lr_drop_step"] <= x[-1]:
                ax.axvline(p["lr_drop_step"], color="grey", linestyle=":",
                           label=f"lr drop to {p['lr_late']:g}")  # fmt: skip
            ax.set_xlabel("global training step")
            ax.set_ylabel(name)
            ax.set_title(f"{name}, {len(chain)} network{'s' if len(chain) > 1 else ''} "
                         f"({len(x):,} steps)")  # fmt: skip
            ax.set_xlim(x[0] - 0.5 - 0.02 * len(x), x[-1] + 0.5 + 0.02 * len(x))
            integer_ticks(ax.xaxis)
            ax.grid(True, alpha=0.3)
            legend_below(ax, ncol=2)
        key_footnote(fig, artifact)
    tail = ys[-1][-max(1, min(50, len(ys[-1]))) :]
    return (
        f"value {tail[:, 0].mean():.3f}, policy {tail[:, 1].mean():.3f} (mean of the last "
        f"{len(tail)} steps) at step {int(own[-1]):,}"
    )


def _target_entropy(pi_start: np.ndarray, pi_weight: np.ndarray) -> tuple[np.ndarray, ...]:
    """Per searched position: its index, the policy target's entropy (nats) and how many moves
    the target spreads over (its weights normalised to sum 1)."""
    counts = np.diff(pi_start)
    searched = np.flatnonzero(counts > 0)
    owner = np.repeat(np.arange(len(counts)), counts)
    weight = np.asarray(pi_weight, np.float64)
    totals = np.zeros(len(counts))
    np.add.at(totals, owner, weight)
    share = weight / np.where(totals[owner] > 0, totals[owner], 1.0)
    terms = np.where(share > 0, -share * np.log(np.where(share > 0, share, 1.0)), 0.0)
    entropy = np.zeros(len(counts))
    np.add.at(entropy, owner, terms)
    support = np.zeros(len(counts))
    np.add.at(support, owner, (share > 0).astype(np.float64))
    return searched, entropy[searched], support[searched]


def plot_blokus_selfplay(artifact: Artifact, out: Path, hand: str | None) -> str:
    """What a self-play run gives training: game lengths, final scores and outcomes by colour,
    and the policy targets' entropy by ply."""
    p = artifact.params
    net = artifact.inputs.get("net", "a fresh network (seeded)")
    title = stage_title(
        artifact,
        f"{artifact['scores'].shape[0]:,} games of 4 copies of {net}, net {p['blocks']}x"
        f"{p['filters']}, {p['sims']} simulations, {_search_text(p)}, seed {p['seed']}",
    )
    outcome = np.asarray(artifact["outcome"][...])
    return _games_figure(artifact, out, title, lambda ax: _outcome_axes(ax, outcome))


def plot_blokus_rollouts(artifact: Artifact, out: Path, hand: str | None) -> str:
    """What rollout-policy games give training: game lengths, final scores by colour, the
    policy targets' entropy and the value targets (means of rollouts) by ply."""
    p = artifact.params
    title = stage_title(
        artifact,
        f"{artifact['scores'].shape[0]:,} games of MCTS-MAXN's rollout policy (epsilon "
        f"{p['epsilon']:g}), {p['positions']} positions kept per game, each valued by the mean "
        f"of {p['value_rollouts']} rollouts; seed {p['seed']}",
    )
    values = np.asarray(artifact["ply_value"][...], np.float64)
    game_start = np.asarray(artifact["game_start"][:]).astype(np.int64)
    ply = np.arange(len(values)) - np.repeat(game_start[:-1], np.diff(game_start))
    return _games_figure(artifact, out, title, lambda ax: _value_target_axes(ax, values, ply))


def _outcome_axes(ax, outcome: np.ndarray) -> None:  # type: ignore[no-untyped-def]
    """Sole, shared and lost top scores by colour, stacked."""
    games = len(outcome)
    # shades of grey: the x axis is the players' colours, so no outcome may wear one of them
    kinds = ((1, "sole top score", "#333333", ""), (0, "shared top score", "#8f8f8f", "//"),
             (-1, "below the top", "#e4e4e4", ""))  # fmt: skip
    bottom = np.zeros(4)
    for value, label, colour, hatch in kinds:
        count = (outcome == value).sum(axis=0)
        ax.bar(range(4), count, bottom=bottom, color=colour, label=label, hatch=hatch,
               edgecolor="#555555", linewidth=0.6)  # fmt: skip
        bottom += count
    for tick, colour in zip(ax.get_xticklabels(), BLOKUS_COLOURS, strict=False):
        tick.set_color(colour)
    ax.set_xticks(range(4), COLOUR_NAMES)
    ax.set_xlabel("colour")
    ax.set_ylabel("games")
    ax.set_ylim(0, games * 1.05)
    integer_ticks(ax.yaxis)
    ax.set_title(f"outcome by colour (n={games:,} game{'s' if games != 1 else ''})")
    legend_below(ax, ncol=3)


def _value_target_axes(ax, values: np.ndarray, ply: np.ndarray) -> None:  # type: ignore[no-untyped-def]
    """Each colour's mean value target over the kept positions, by ply (bins of 4)."""
    kept = np.isfinite(values[:, 0])
    bins = ply[kept] // 4
    present = np.unique(bins)
    for c in range(4):
        means = [values[kept, c][bins == b].mean() for b in present]
        ax.plot(4 * present + 1.5, means, color=BLOKUS_COLOURS[c], marker="o", markersize=3,
                label=COLOUR_NAMES[c])  # fmt: skip
    ax.set_xlabel("ply (placements so far in the game)")
    ax.set_ylabel("mean value target (rollouts' utility)")
    ax.set_title(f"value targets of {int(kept.sum()):,} kept positions by ply (bins of 4)")
    ax.grid(True, alpha=0.3)
    legend_below(ax, ncol=4)


def _games_figure(artifact: Artifact, out: Path, title: str, last_panel) -> str:  # type: ignore[no-untyped-def]
    """Game records' figure: lengths, final scores, policy-target entropy by ply, and
    `last_panel` (drawn into the fourth axes)."""
    game_start = np.asarray(artifact["game_start"][:]).astype(np.int64)
    scores = np.asarray(artifact["scores"][...])
    games = len(scores)
    lengths = np.diff(game_start)
    # the policy targets of the first games, up to ENTROPY_POSITIONS positions (a paper-size
    # run holds some 10^8 target weights)
    shown = max(1, int(np.searchsorted(game_start, ENTROPY_POSITIONS, side="right")) - 1)
    shown = min(shown, games)
    plies = int(game_start[shown])
    ply = np.arange(plies) - np.repeat(game_start[:shown], lengths[:shown])
    pi_start = np.asarray(artifact["pi_start"][: plies + 1]).astype(np.int64)
    weights = np.asarray(artifact["pi_weight"][int(pi_start[0]) : int(pi_start[-1])])
    searched, entropy, support = _target_entropy(pi_start - pi_start[0], weights)
    n_games = f"n={games:,} game{'s' if games != 1 else ''}"
    with figure(out, nrows=2, ncols=2, figsize=(13, 9.5), layout="constrained") as (fig, axes):
        fig.suptitle(title, fontsize=10)
        ax = axes[0, 0]
        bins = np.arange(
            lengths.min() - 0.5, lengths.max() + 1.5, max(1, (int(np.ptp(lengths)) + 1) // 20)
        )
        ax.hist(lengths, bins=bins, color="#777777", edgecolor="white")
        ax.set_xlabel("placements per game (all four colours)")
        ax.set_ylabel("games")
        ax.set_title(f"game length ({n_games}, mean {lengths.mean():.1f})")
        integer_ticks(ax.xaxis)
        integer_ticks(ax.yaxis)
        ax.grid(True, axis="y", alpha=0.3)
        ax = axes[0, 1]
        rng = np.random.default_rng(0)  # horizontal jitter only, for overlapping points
        for c in range(4):
            jitter = rng.uniform(-0.12, 0.12, games) if games > 1 else np.zeros(games)
            ax.scatter(c + jitter, scores[:, c], color=BLOKUS_COLOURS[c], alpha=0.7,
                       edgecolor="black", linewidth=0.4)  # fmt: skip
            ax.hlines(scores[:, c].mean(), c - 0.3, c + 0.3, color="black", linewidth=2)
        ax.set_xticks(range(4), COLOUR_NAMES)
        ax.set_xlabel("colour (blue moves first)")
        ax.set_ylabel("final score (-1 per square left,\n+15 all placed, +20 monomino last)")
        ax.set_title(f"final scores ({n_games}; bar: mean)")
        ax.grid(True, axis="y", alpha=0.3)
        ax = axes[1, 0]
        if len(searched):
            ax.scatter(ply[searched], entropy, s=8, alpha=0.35, color="#c8322c",
                       label="entropy of the target (per position)")  # fmt: skip
            ax.scatter(ply[searched], np.log(np.maximum(support, 1)), s=8, alpha=0.35,
                       color="grey", marker="x",
                       label="log(moves in the target): a uniform target's entropy")  # fmt: skip
            bins = ply[searched] // 4
            present = np.unique(bins)
            means = [entropy[bins == b].mean() for b in present]
            ax.plot(4 * present + 1.5, means, color="black", label="mean over 4 plies")
            legend_below(ax, ncol=1)
        ax.set_xlabel("ply (placements so far in the game)")
        ax.set_ylabel("entropy (nats)")
        of_games = f"{shown:,} game{'s' if shown != 1 else ''}"
        of_games = f"the first {of_games}" if shown < games else of_games
        ax.set_title(f"policy targets of {of_games}: {len(searched):,} positions with one, of "
                     f"{plies:,}")  # fmt: skip
        ax.set_ylim(bottom=0)
        integer_ticks(ax.xaxis)
        ax.grid(True, alpha=0.3)
        last_panel(axes[1, 1])
        key_footnote(fig, artifact)
    return (
        f"{games:,} games, {lengths.mean():.1f} placements per game, mean scores "
        + "/".join(f"{v:.1f}" for v in scores.mean(axis=0))
        + f", target entropy {entropy.mean() if len(entropy) else float('nan'):.2f} nats"
    )


PLOTTERS: dict[str, Plotter] = {
    "blokus-selfplay": plot_blokus_selfplay,
    "blokus-rollouts": plot_blokus_rollouts,
    "blokus-eval": plot_blokus_eval,
    "blokus-curve": plot_blokus_curve,
    "blokus-train": plot_blokus_train,
}
