"""AIVAT for the no-limit engine's hands: its records as `engines.poker.aivat` hands, and the
built-in card-blind players as exact policies.

`hands_of` turns `HandRecords` (cards: seat 0's hole, seat 1's, the board; one (round, seat,
type, spent_after) record per action) into `Hand`s: a raise is its raise-to chips, as ACPC's
no-limit betting names it, and `NoLimitBetting` replays the engine's rules (the same legal
actions, minimum raises, all-ins and round ends). `policy_of` gives the random player
(`UniformPolicy` with the small blind as its raise step: uniform over the legal action types,
then over the raise grid, as `game.random_action` draws) and the paper's heuristic
(`HeuristicPolicy`: 45% raise by a uniformly drawn pot fraction, 10% fold, else call, as
`game.heuristic_action` draws). Both are card-blind, so AIVAT's action corrections at their
decisions and its baselines need nothing else. The card-aware heuristic decides by sampled
rollouts and a CNN plays through a network: no exact policy here, `policy_of` returns None.
"""

from __future__ import annotations

import numpy as np

from gameforge.engines.nlhe.game import (
    HEURISTIC,
    HEURISTIC_POT_FRACTIONS,
    RANDOM,
    HandRecords,
    Rules,
    pot_raise_to,
)
from gameforge.engines.poker.aivat import (
    Action,
    Cards,
    Hand,
    NoLimitBetting,
    Policy,
    State,
    UniformPolicy,
)
from gameforge.engines.poker.betting import CALL, FOLD, RAISE

HEURISTIC_RAISE, HEURISTIC_FOLD = 0.45, 0.10  # game.heuristic_action's thresholds
KNOWN_KINDS = (RANDOM, HEURISTIC)  # the built-in kinds `policy_of` gives exactly


def hands_of(records: HandRecords, num_hole: int, limit: int | None = None) -> list[Hand]:
    """The records' hands (the first `limit`), in order: holes by seat, the board, actions (a
    raise's raise-to)."""
    cards = np.asarray(records.cards)
    starts = np.concatenate([[0], np.cumsum(records.counts)])
    acts = np.asarray(records.actions)
    n = len(records.payoff) if limit is None else min(limit, len(records.payoff))
    out = []
    for h in range(n):
        row = [int(c) for c in cards[h]]
        hole = (tuple(row[:num_hole]), tuple(row[num_hole : 2 * num_hole]))
        actions = tuple(
            (int(kind), int(after) if kind == RAISE else 0)
            for _, _, kind, after in acts[starts[h] : starts[h + 1]]
        )
        out.append(Hand(hole, tuple(row[2 * num_hole :]), actions))
    return out


class HeuristicPolicy:
    """The paper's card-blind heuristic (`game.heuristic_action`): with probability 0.45 a raise
    (when one is legal) to call-plus-a-pot-fraction, the fraction uniform over
    `HEURISTIC_POT_FRACTIONS`, rounded to whole small blinds and clipped to the legal range;
    with 0.10 a fold (when facing a bet); otherwise a check or call."""

    card_blind = True

    def __init__(self, betting: NoLimitBetting, step: int):
        self.betting = betting
        self.step = int(step)

    def distribution(self, state: State, cards: Cards) -> tuple[list[Action], np.ndarray]:
        """The same distribution for every hand."""
        can_fold, can_raise, lo, hi = self.betting.limits(state)
        p = state.actor
        call_to = min(state.top, self.betting.stack[p])
        weights: dict[Action, float] = {}
        if can_raise:
            pot = state.spent[0] + state.spent[1] + call_to - state.spent[p]
            share = HEURISTIC_RAISE / len(HEURISTIC_POT_FRACTIONS)
            for k in range(len(HEURISTIC_POT_FRACTIONS)):
                size = int(pot_raise_to(pot, call_to, k, lo, hi, self.step))
                weights[(RAISE, size)] = weights.get((RAISE, size), 0.0) + share
        if can_fold:
            weights[(FOLD, 0)] = HEURISTIC_FOLD
        weights[(CALL, 0)] = 1.0 - sum(weights.values())
        actions = sorted(weights)
        return actions, np.array([weights[a] for a in actions])


def policy_of(kind: int, betting: NoLimitBetting, rules: Rules) -> Policy | None:
    """The exact policy of a built-in player kind, or None (no exact policy)."""
    if kind == RANDOM:
        return UniformPolicy(betting, step=rules.small_blind)
    if kind == HEURISTIC:
        return HeuristicPolicy(betting, rules.small_blind)
    return None
