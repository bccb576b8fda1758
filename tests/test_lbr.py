"""Local best response: a lower bound of the exact exploitability, and it finds the leaks."""

from __future__ import annotations

import numpy as np

from gameforge.engines.common.parallel import Parallel
from gameforge.engines.poker.cfr import FullWalkSolver
from gameforge.engines.poker.lbr import local_best_response
from gameforge.engines.poker.mccfr import SampledSolver, lossless_tables
from gameforge.engines.poker.shipped_games import load_game

FLOP = "holdem5.flop.limit.2p"


def test_lbr_is_below_the_exact_best_response_and_ranks_strategies():
    """On short-deck flop hold'em LBR wins against uniform play but never more than a true best
    response does (3 standard errors), and wins less against a CFR strategy than uniform play."""
    game = load_game(FLOP)
    exact = FullWalkSolver(game)
    tables = lossless_tables(game)
    uniform = exact.sigma
    trained = SampledSolver(game, variant="chance")
    trained.iterate(500_000)
    strategies = {"uniform": uniform, "cfr": trained.average_strategy()}
    found = {}
    for name, strategy in strategies.items():
        wins = local_best_response(
            game,
            tables,
            strategy,
            exact.offsets,
            exact.ndec,
            deals=3000,
            seed=1,
            parallel=Parallel(threads=2),
        )
        mean, se = wins.mean(), wins.std(ddof=1) / np.sqrt(wins.size)
        bound = exact.exploitability(strategy)
        assert mean <= bound + 3 * se, (name, mean, se, bound)
        found[name] = (mean, se, bound)
    assert found["uniform"][0] > 5 * found["uniform"][1]  # clearly exploits uniform play
    assert found["cfr"][0] < found["uniform"][0]
