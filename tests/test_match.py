"""Match engine: exact expected values on tiny games, self-play, reproducibility."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from gameforge.engines.common.parallel import Parallel
from gameforge.engines.poker.betting import DECISION, FOLD_END, build_tree
from gameforge.engines.poker.cfr import FullWalkSolver
from gameforge.engines.poker.evaluator import evaluate
from gameforge.engines.poker.match import Agent, play_match, summarize
from gameforge.engines.poker.mccfr import lossless_tables
from gameforge.engines.poker.shipped_games import load_game


def _policy(kind: str, legal: np.ndarray) -> np.ndarray:
    probs = np.zeros(3)
    if kind == "call":
        probs[1] = 1
    elif kind == "raise":
        probs[2 if legal[2] >= 0 else 1] = 1
    else:
        probs[legal >= 0] = 1 / np.count_nonzero(legal >= 0)
    return probs


def _walk(tree, n: int, a_seat: int, result: int, kind_a: str, kind_b: str) -> float:
    """A's expected chips below node n for fixed cards (showdown `result` for seat 0)."""
    if tree.kind[n] == FOLD_END:
        s = tree.spent[n]
        seat0 = -s[0] if tree.player[n] == 0 else s[1]
        return seat0 if a_seat == 0 else -seat0
    if tree.kind[n] != DECISION:
        seat0 = result * tree.spent[n, 0]
        return seat0 if a_seat == 0 else -seat0
    probs = _policy(kind_a if tree.player[n] == a_seat else kind_b, tree.children[n])
    return sum(
        probs[a] * _walk(tree, c, a_seat, result, kind_a, kind_b)
        for a, c in enumerate(tree.children[n])
        if c >= 0
    )


def exact_value(game, kind_a: str, kind_b: str) -> float:
    """A's expected chips per hand over every deal and both seats, by enumeration."""
    tree = build_tree(game)
    hole, board = game.num_hole_cards, sum(game.num_board_cards)
    total, count = 0.0, 0
    for deal in itertools.permutations(range(game.deck_size), 2 * hole + board):
        rows = [list(deal[p * hole : (p + 1) * hole]) + list(deal[2 * hole :]) for p in (0, 1)]
        v = evaluate(np.array(rows, dtype=np.int8), game.num_ranks, game.num_suits)
        result = int(np.sign(int(v[0]) - int(v[1])))
        for a_seat in (0, 1):
            total += _walk(tree, 0, a_seat, result, kind_a, kind_b)
            count += 1
    return total / count


@pytest.mark.parametrize("game_name", ["kuhn.limit.2p", "leduc.limit.2p"])
@pytest.mark.parametrize(("a", "b"), [("raise", "uniform"), ("call", "uniform"), ("raise", "call")])
def test_card_blind_agents_hit_the_exact_value(game_name, a, b):
    """Sampled duplicate matches agree with the expected value enumerated by hand."""
    game = load_game(game_name)
    exact = exact_value(game, a, b)
    out = play_match(
        game, Agent(a), Agent(b), seed=3, hands_per_set=100_000, parallel=Parallel(threads=2)
    )
    se = out.std(ddof=1) / np.sqrt(out.size)
    assert abs(out.mean() - exact) <= 4 * se + 1e-12, (out.mean(), exact, se)


def test_strategy_self_play_is_zero_and_runs_are_reproducible():
    """A CFR strategy against itself scores 0 within its interval; seeds fix the result and
    the split over workers does not change it."""
    game = load_game("leduc.limit.2p")
    solver = FullWalkSolver(game, plus=True)
    solver.iterate(200)
    agent = Agent(
        "strategy",
        name="cfr+",
        strategy=solver.average_strategy(),
        offsets=solver.offsets,
        ndec=solver.ndec,
        tables=lossless_tables(game),
    )
    out = play_match(
        game, agent, agent, seed=5, hands_per_set=20_000, sets=4, parallel=Parallel(threads=2)
    )
    stats = summarize(out, 1.0, 4)
    assert abs(stats["mbb_per_game"]) <= stats["ci95"] and stats["hands"] == 80_000
    again = play_match(
        game, agent, agent, seed=5, hands_per_set=20_000, sets=4, parallel=Parallel(chunk=777)
    )
    assert np.array_equal(out, again)
    other = play_match(game, agent, agent, seed=6, hands_per_set=20_000, sets=4)
    assert not np.array_equal(out, other)
    beat = play_match(
        game, agent, Agent("uniform"), seed=5, hands_per_set=20_000, parallel=Parallel(threads=2)
    )
    won = summarize(beat, 1.0, 2)
    assert won["mbb_per_game"] - won["ci95"] > 100  # a near-equilibrium crushes uniform play
    with pytest.raises(ValueError, match="even"):
        play_match(game, agent, agent, sets=3)
