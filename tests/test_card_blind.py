"""The card-blind best response (counting) against the enumerated and the streamed ones."""

from __future__ import annotations

import numpy as np
import pytest

from gameforge.engines.poker.acpc import parse_game
from gameforge.engines.poker.betting import DECISION, build_tree
from gameforge.engines.poker.card_blind import (
    POLICIES,
    card_blind_best_response,
    card_blind_policy,
    round_plans,
)
from gameforge.engines.poker.cfr import FullWalkSolver
from gameforge.engines.poker.shipped_games import load_game
from tests.test_best_response import THREE_BOARDS


def _solver_strategy(solver: FullWalkSolver, probs: np.ndarray) -> np.ndarray:
    """The card-blind probabilities in the solver's layout: every bucket alike."""
    tree, nbk = solver.tree, solver.cards.num_buckets
    out = np.zeros_like(solver.sigma)
    for node in np.flatnonzero(tree.kind == DECISION):
        r = int(tree.round[node])
        rows = solver.offsets[r] + tree.slot[node] + np.arange(int(nbk[r])) * int(solver.ndec[r])
        out[rows] = probs[node]
    return out


@pytest.mark.parametrize("policy", POLICIES)
def test_counting_equals_the_enumerated_best_response(policy):
    """On a four-round 12-card deck, both seats' values equal the whole-tree enumeration."""
    game = parse_game(THREE_BOARDS, "three-boards")
    solver = FullWalkSolver(game)
    probs = card_blind_policy(solver.tree, policy)
    result = card_blind_best_response(game, probs, solver.tree, threads=1)
    strategy = _solver_strategy(solver, probs)
    expected = [solver.best_response_value(p, strategy) for p in (0, 1)]
    assert result.values == pytest.approx(expected, abs=1e-9)
    assert result.exploitability == pytest.approx(sum(expected) / 2, abs=1e-9)


def test_subtrees_alike_share_a_class():
    """Hold'em's 567 river entries fall into one class per stake for uniform play."""
    game = load_game("holdem.limit.2p.reverse_blinds")
    tree = build_tree(game)
    plans, classes = round_plans(tree, card_blind_policy(tree, "uniform"), 4)
    assert len(classes[3]) == 7 * 9 * 9
    spent = {int(tree.spent[n, 0]) for n in classes[3]}
    assert len(plans[3].start) - 1 == len(spent)


def test_games_it_cannot_count_are_refused():
    game = load_game("holdem5.flop.limit.2p")
    with pytest.raises(ValueError, match="four rounds"):
        card_blind_best_response(game, np.zeros((1, 3)))


@pytest.mark.slow
def test_always_fold_in_full_holdem_loses_exactly_its_blinds():
    """Heads-up limit hold'em, blinds 10/5: the best response to always-fold wins the small
    blind (5) as the big blind, whose rival folds at once, and the big blind (10) as the small
    blind by raising: 7.5 chips a deal over the seats, 750 mbb/g. Counted over every deal."""
    game = load_game("holdem.limit.2p.reverse_blinds")
    tree = build_tree(game)
    result = card_blind_best_response(game, card_blind_policy(tree, "always-fold"), tree)
    assert result.values == pytest.approx((5.0, 10.0), abs=1e-9)
    assert result.exploitability / 10 * 1000 == pytest.approx(750.0, abs=1e-6)
