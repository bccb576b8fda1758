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

import math
import os
from itertools import combinations
from typing import Any

import numpy as np
from pydantic import Field

from gameforge.engines.common.parallel import Parallel
from gameforge.engines.poker.acpc import GameDef
from gameforge.engines.poker.aivat import AgentPolicy, LimitBetting, aivat, match_hands
from gameforge.engines.poker.aivat_values import (
    EXACT_OUTCOMES,
    RoundValues,
    outcome_counts,
    self_reference_values,
)
from gameforge.engines.poker.match import Agent, play_match, summarize
from gameforge.stages.base import Seed, StageContext, StageError, numbered
from gameforge.stages.poker.best_response import strategy_bytes
from gameforge.stages.poker.params import TreeGameParams, same_game
from gameforge.stages.poker.strategy import StrategyView, abstraction_keys
from gameforge.stages.registry import stage
from gameforge.stages.reporting import (
    aivat_summary,
    comparison_text,
    head_to_head,
    record_aivat,
)
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
    aivat_hands: int = Field(
        default=1000,
        ge=0,
        description="Hands of each pairing (its first deals, each played from both seats in"
        " the first two sets) scored again by AIVAT for the row player, whose strategy the"
        " league knows, beside the plain result on the same hands; their histories are stored"
        " (hand_ends). 0: none.",
    )


AIVAT_FIELDS = ("mbb_per_game", "ci95", "plain_mbb_per_game", "plain_ci95", "hands")
AIVAT_FIT_HANDS = 2000  # at most, self-play hands a player's AIVAT baseline is fitted on
# a fitted player's start (its first walks and bucket lookups), in hands, measured: 4 players at
# 100 hands took twice the time of their hands alone
AIVAT_START_HANDS = 300


def aivat_work(game: GameDef, params: LeagueParams, players: int) -> float:
    """AIVAT's work in a league: hands scored and fitted on, times the chance outcomes a hand
    walks (every event's; the baselines' lookups and walks scale with them, about 3 us each
    here), and each fitted player's start (AIVAT_START_HANDS hands' worth). Kuhn and Leduc fit
    nothing: their values are exact."""
    scored = aivat_deals(params) * AIVAT_SETS
    if scored == 0:
        return 0.0
    outcomes = outcome_counts(game)
    pairings = players * (players - 1) // 2
    fitted = 0 if math.prod(outcomes) <= EXACT_OUTCOMES else players - 1  # the row players
    fit_hands = aivat_fit_hands(params) + AIVAT_START_HANDS
    return float((pairings * scored + fitted * fit_hands) * sum(outcomes))


def aivat_fit_hands(params: LeagueParams) -> int:
    """Hands of self-play each scored player's AIVAT baseline is fitted on (games that fit)."""
    return min(AIVAT_FIT_HANDS, 2 * params.aivat_hands)


AIVAT_SETS = 2  # a deal's duplicate pair: the first two sets, seats swapped


def aivat_deals(params: LeagueParams) -> int:
    """Deals whose first two plays (both seats) AIVAT scores: enough for `aivat_hands` hands
    (many deals rather than all sets of a few: its interval is over deals)."""
    if params.aivat_hands == 0:
        return 0
    deals = params.matches * params.hands_per_set
    return min(deals, -(-params.aivat_hands // AIVAT_SETS))


def aivat_scores(
    game: GameDef,
    agent: Agent,
    seed: int,
    ends: np.ndarray,
    fitted: dict[int, tuple[AgentPolicy, RoundValues]],
    index: int,
    fit: int,
) -> np.ndarray:
    """AIVAT_FIELDS of agent A (`agent`, player `index`) on the recorded hands: AIVAT with its
    own strategy as the reference (`self_reference_values`: nothing of the opponent; fitted on
    `fit` hands where a game needs it) and the plain result, both per deal over its two seats
    (mbb/g with 95% half-widths, as `summarize`)."""
    betting = LimitBetting(game)
    if index not in fitted:
        fitted[index] = self_reference_values(betting, agent, fit, seed)
    known, values = fitted[index]
    hands, seats = match_hands(betting, seed, ends)
    est = aivat(betting, hands, seats, known, values)
    deals, sets = ends.shape
    bb = float(max(game.blind))
    got = summarize(est.corrected.reshape(deals, sets).mean(axis=1), bb, sets)
    plain = summarize(est.plain.reshape(deals, sets).mean(axis=1), bb, sets)
    return np.array([got["mbb_per_game"], got["ci95"], plain["mbb_per_game"], plain["ci95"],
                     got["hands"]])  # fmt: skip


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
    if params.aivat_hands:  # the baselines' walks and equities, kept between hands
        peak["AIVAT baselines"] = 64 << 20
    return Footprint(
        peak=peak,
        stored={
            "tables": nbytes((len(players), len(players), 3 + len(AIVAT_FIELDS)), 8),
            "hand_ends": nbytes((pairings, aivat_deals(params), AIVAT_SETS), 4),
        },
        work=pairings * params.matches * params.sets * params.hands_per_set,  # hands dealt
        parts={"aivat": aivat_work(game, params, len(players))},
    )


@stage("league", 4, LeagueParams, inputs={"players": "cfr"}, many={"players"},
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
    kept = aivat_deals(params)
    ends = np.zeros((len(pairs), kept, AIVAT_SETS), dtype=np.int32)
    scored = np.full((len(AIVAT_FIELDS), n, n), np.nan)  # AIVAT_FIELDS, row player's view
    fitted: dict[int, tuple[AgentPolicy, RoundValues]] = {}
    deals = params.matches * params.hands_per_set  # each played `sets` times
    bar = ctx.progress.start(f"duplicate deals ({len(pairs)} pairings)", len(pairs) * deals)
    for p, (i, j) in enumerate(pairs):
        out = play_match(
            game,
            agents[i],
            agents[j],
            seed=params.seed,
            hands_per_set=params.hands_per_set,
            sets=params.sets,
            matches=params.matches,
            parallel=Parallel(threads=os.cpu_count() or 1, progress=bar.advance),
            ends=ends[p],
        )
        stats = summarize(out, bb, params.sets)
        if kept:
            with ctx.writer.timed_part("aivat"):  # its own time model (Footprint.parts)
                got = aivat_scores(
                    game, agents[i], params.seed, ends[p], fitted, i, aivat_fit_hands(params)
                )
            record_aivat(scored, i, j, got)
        mbb[i, j], mbb[j, i] = stats["mbb_per_game"], -stats["mbb_per_game"]
        ci[i, j] = ci[j, i] = stats["ci95"]
        hands[i, j] = hands[j, i] = stats["hands"]
        got = scored[:, i, j]
        ctx.log(
            f"league: {labels[i]} vs {labels[j]}: {stats['mbb_per_game']:+.2f} "
            f"± {stats['ci95']:.2f} mbb/g over {int(stats['hands']):,} hands"
            + ("" if np.isnan(got[0]) else f"; AIVAT on {int(got[4]):,} of them: "
               f"{got[0]:+.2f} ± {got[1]:.2f} (plain {got[2]:+.2f} ± {got[3]:.2f})")
        )  # fmt: skip
    bar.close()
    results = {"mbb_per_game": mbb, "ci95": ci, "hands": hands}
    results |= {f"aivat_{name}": scored[f] for f, name in enumerate(AIVAT_FIELDS)}
    ctx.writer.write_arrays({name: np.asarray(t, np.float64) for name, t in results.items()})
    ctx.writer.write_arrays({"hand_ends": ends})
    means = mbb.sum(axis=1) / (n - 1)
    summary: dict[str, Any] = {
        "players": labels,
        "keys": [v.artifact.key for v in views],
        "mean_mbb_per_game": [round(float(m), 3) for m in means],
        **head_to_head(labels, mbb, ci, "mbb/g", 1),
        "hands_per_pairing": int(hands[0, 1]),
        "aivat": aivat_summary(labels, scored, lambda i, _j: labels[i], 2),
        "hand_histories": f"hand_ends[pairing, deal, set]: the terminal betting node of the "
        f"plays of deals 0..{kept - 1} of seed {params.seed} in sets 0 and 1 (cards: "
        "match.deal_cards; the pairing's first player sits in seat set & 1)",
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
