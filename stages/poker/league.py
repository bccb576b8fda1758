"""Stage `league`: a duplicate round robin between solved strategies, in mbb/g with intervals.

Inputs `players.0`, `players.1`, ... are `cfr` artifacts of one game (each through its own card
abstraction). Every pairing plays the same seeded deals (`engines.poker.match`): `matches` blocks of
`hands_per_set` deals, each deal played in all `sets` (seats swapped between sets). Output: the
row-versus-column table of mbb/g, its 95% half-widths and hands per pairing, plus each player's
mean. The summary orders players only where head-to-head intervals separate them
(`stages.reporting`); `gameforge artifacts plot KEY` draws the table as a heat map like the
paper's.
"""

from __future__ import annotations

import os
from itertools import combinations
from typing import Any

import numpy as np
from pydantic import Field

from gameforge.engines.common.parallel import Parallel
from gameforge.engines.poker.match import play_match, summarize
from gameforge.stages.base import Seed, StageContext, StageError, numbered
from gameforge.stages.poker.best_response import strategy_bytes
from gameforge.stages.poker.params import TreeGameParams, same_game
from gameforge.stages.poker.strategy import StrategyView, abstraction_keys
from gameforge.stages.registry import stage
from gameforge.stages.reporting import comparison_text, head_to_head
from gameforge.stages.resources import Footprint, nbytes


class LeagueParams(TreeGameParams):
    """The paper's duplicate structure (3,000 hands per set, 3,000 sets, 9 matches) and a seed."""

    hands_per_set: int = Field(default=3000, ge=1, description="Deals in a set (the paper: 3,000).")
    sets: int = Field(
        default=2,
        ge=2,
        description="Times each deal is played, seats swapped between consecutive sets (even;"
        " the paper: 3,000).",
    )
    matches: int = Field(
        default=1,
        ge=1,
        description="Blocks of fresh deals, each played in all sets (the paper: 9).",
    )
    seed: Seed = Field(default=0, description="Seed of the deals every pairing plays.")


def player_label(view: StrategyView) -> str:
    """A short name: the opponent-cluster count of its abstraction if known, else the key."""
    buckets = abstraction_keys(view.artifact.key, view.artifact.inputs)
    if buckets is not None:
        store = view.store
        ochs_b = store.open(buckets[1])
        ochs = store.open(ochs_b.inputs["ochs"])
        clusters = store.open(ochs.inputs["opponent_clusters"])
        return f"C{clusters.params['k']}"
    return view.artifact.key[:16]


def _footprint(params: LeagueParams, upstream: dict[str, dict]) -> Footprint:
    """Every player's strategy and bucket lookups, and one pairing's per-hand winnings."""
    game = params.game_def()
    players = [p for name, p in upstream.items() if name.startswith("players")]
    peak: dict[str, int] = {}
    for i, player in enumerate(players):
        for name, size in strategy_bytes(player, game).items():
            peak[f"player {i} {name}"] = size
    # one pairing's per-hand winnings at a time (and summarize's copy)
    peak["winnings of a pairing"] = 2 * nbytes(
        (params.matches, params.sets, params.hands_per_set), 8
    )
    pairings = len(players) * (len(players) - 1) // 2
    return Footprint(
        peak=peak,
        stored={"tables": nbytes((len(players), len(players), 3), 8)},
        work=pairings * params.matches * params.sets * params.hands_per_set,  # hands dealt
    )


@stage("league", 2, LeagueParams, inputs={"players": "cfr"}, many={"players"},
       check_inputs=same_game, labels=("hands_per_set", "sets"), footprint=_footprint)  # fmt: skip
def run(ctx: StageContext[LeagueParams]) -> dict[str, Any]:
    """Duplicate round robin between solved strategies (mbb/g, 95% intervals).

    Play every pairing; write the table.
    """
    params = ctx.params
    if params.sets % 2:
        raise StageError("league: sets must be even (consecutive sets swap seats)")
    game = params.game_def()
    names = numbered(ctx.inputs, "players")
    if len(names) < 2:
        raise StageError("league: needs at least two players")
    views = [StrategyView(ctx.inputs[n].store, ctx.inputs[n]) for n in names]
    labels = [player_label(v) for v in views]
    if len(set(labels)) < len(labels):
        labels = [f"{label}#{i}" for i, label in enumerate(labels)]
    agents = [view.agent(label) for view, label in zip(views, labels)]
    n = len(agents)
    mbb = np.zeros((n, n))
    ci = np.zeros((n, n))
    hands = np.zeros((n, n))
    bb = float(max(game.blind))
    pairs = list(combinations(range(n), 2))
    deals = params.matches * params.hands_per_set  # each played `sets` times
    bar = ctx.progress.start(f"duplicate deals ({len(pairs)} pairings)", len(pairs) * deals)
    for i, j in pairs:
        out = play_match(
            game,
            agents[i],
            agents[j],
            seed=params.seed,
            hands_per_set=params.hands_per_set,
            sets=params.sets,
            matches=params.matches,
            parallel=Parallel(threads=os.cpu_count() or 1, progress=bar.advance),
        )
        stats = summarize(out, bb, params.sets)
        mbb[i, j], mbb[j, i] = stats["mbb_per_game"], -stats["mbb_per_game"]
        ci[i, j] = ci[j, i] = stats["ci95"]
        hands[i, j] = hands[j, i] = stats["hands"]
        ctx.log(
            f"league: {labels[i]} vs {labels[j]}: {stats['mbb_per_game']:+.2f} "
            f"± {stats['ci95']:.2f} mbb/g over {int(stats['hands']):,} hands"
        )
    bar.close()
    results = {"mbb_per_game": mbb, "ci95": ci, "hands": hands}
    ctx.writer.write_arrays({name: np.asarray(t, np.float64) for name, t in results.items()})
    means = mbb.sum(axis=1) / (n - 1)
    summary: dict[str, Any] = {
        "players": labels,
        "keys": [v.artifact.key for v in views],
        "mean_mbb_per_game": [round(float(m), 3) for m in means],
        **head_to_head(labels, mbb, ci, "mbb/g", 1),
        "hands_per_pairing": int(hands[0, 1]),
    }
    if all(label[1:].isdigit() and label[0] == "C" for label in labels):
        summary["more_clusters_rank_higher"] = more_clusters_claim(labels, mbb, ci)
    return summary


def more_clusters_claim(labels: list[str], mbb: np.ndarray, ci: np.ndarray) -> dict[str, Any]:
    """The paper's claim (C12 > C10 > C8 > C6) tested pair by pair, head to head at 95%.

    It holds ("yes") where every player with more opponent clusters beats every one with fewer,
    fails ("no") where some player with fewer clusters beats one with more, and is "undecided"
    otherwise; the evidence is every such pair's result, and the scope says what the
    intervals leave out.
    """
    by_k = sorted(range(len(labels)), key=lambda i: int(labels[i][1:]))
    pairs = [(more, fewer) for x, fewer in enumerate(by_k) for more in by_k[x + 1 :]]
    won = [mbb[more, fewer] - ci[more, fewer] > 0 for more, fewer in pairs]
    lost = [mbb[fewer, more] - ci[fewer, more] > 0 for more, fewer in pairs]
    holds = "yes" if all(won) else "no" if any(lost) else "undecided"
    return {
        "statement": "every player with more opponent clusters beats every one with fewer, "
        "head to head at 95%",
        "holds": holds,
        "scope": "these solves only: the intervals hold this league's card luck, not how far "
        "another solve of the same abstractions would play (another solve seed can reorder "
        "them by many times these intervals); a claim about the abstractions needs leagues of "
        "several solves",
        "evidence": [comparison_text(labels, mbb, ci, a, b, "mbb/g", 1) for a, b in pairs],
    }
