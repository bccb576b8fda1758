"""Betting trees and CFR: published counts, Kuhn's game value, OpenSpiel's Leduc curves."""

from __future__ import annotations

import numpy as np
import pytest

from gameforge.engines.poker.betting import CALL, FOLD, RAISE, build_tree
from gameforge.engines.poker.cfr import FullWalkSolver, build_cards
from gameforge.engines.poker.shipped_games import load_game

HOLDEM = "holdem.limit.2p.reverse_blinds"

# OpenSpiel 2.0.2, pyspiel.CFRSolver / CFRPlusSolver on leduc_poker, exploitability in chips.
OPENSPIEL_CFR = {1: 2.373611, 10: 0.888579, 100: 0.095716, 1000: 0.011818}
OPENSPIEL_CFR_PLUS = {1: 2.373611, 10: 0.610439, 100: 0.013416, 1000: 0.000257}


def test_limit_holdem_decision_points_per_round():
    """The paper's betting sequences per round: 8, 70, 630, 5,670."""
    tree = build_tree(load_game(HOLDEM))
    assert tree.decision_counts() == [8, 70, 630, 5670]
    assert build_tree(load_game("leduc.limit.2p")).decision_counts() == [6, 30]
    assert build_tree(load_game("kuhn.limit.2p")).decision_counts() == [4]


def test_betting_rules_of_limit_holdem():
    """Blinds, raise sizes, the raise cap, fold only when facing a bet, rounds end on a call."""
    tree = build_tree(load_game(HOLDEM))
    root = 0
    assert tuple(tree.spent[root]) == (10, 5) and tree.player[root] == 1  # small blind acts
    assert tree.children[root, FOLD] >= 0
    limp = tree.node_of("c")
    assert tree.player[limp] == 0 and tree.children[limp, FOLD] < 0  # big blind's option
    assert tree.round[tree.node_of("cc")] == 1
    capped = tree.node_of("rrr")  # big blind + 3 raises = 40 each side once called
    assert tree.children[capped, RAISE] < 0
    assert tuple(tree.spent[tree.node_of("rrrc")]) == (40, 40)
    river = tree.node_of("cc/cc/cc/rrrr")
    assert tree.children[river, RAISE] < 0 and tuple(tree.spent[river]) == (70, 90)
    assert tree.kind[tree.node_of("cc/cc/cc/rrrrc")] == 2  # showdown
    assert tree.history[tree.node_of("rc/cr")] == "rc/cr"
    with pytest.raises(ValueError, match="illegal"):
        tree.node_of("rrrr")
    with pytest.raises(ValueError, match="past the end"):
        tree.node_of("fc")
    assert tree.children[tree.node_of("rc/"), CALL] >= 0


def test_kuhn_converges_to_the_game_value():
    """CFR on Kuhn poker: first player's value -1/18, exploitability below 1e-3 chips."""
    for plus in (False, True):
        solver = FullWalkSolver(load_game("kuhn.limit.2p"), plus=plus)
        solver.iterate(2000)
        assert solver.value(0) == pytest.approx(-1 / 18, abs=2e-3)
        assert solver.exploitability() < 1e-3
        assert solver.value(0) + solver.value(1) == pytest.approx(0, abs=1e-12)


@pytest.mark.parametrize(
    ("plus", "reference"), [(False, OPENSPIEL_CFR), (True, OPENSPIEL_CFR_PLUS)]
)
def test_leduc_exploitability_matches_openspiel(plus, reference):
    """Leduc exploitability after 1/10/100/1000 iterations equals OpenSpiel's C++ solvers'."""
    solver = FullWalkSolver(load_game("leduc.limit.2p"), plus=plus)
    for iterations, expected in reference.items():
        solver.iterate(iterations - solver.iteration)
        got = solver.exploitability()
        # CFR+ floors regrets at exactly 0, so rounding differences (summation order, our suit
        # isomorphism merging J-spade and J-heart) flip near-ties late in the run: ~1% at 1,000.
        if plus and iterations == 1000:
            assert got == pytest.approx(expected, rel=0.02), (iterations, got)
        else:  # the references are printed to 6 decimals
            assert got == pytest.approx(expected, abs=1e-6), (iterations, got)


def test_leduc_matches_live_openspiel_and_best_response_bounds_value():
    """Against pyspiel run here: the same curve per iteration; BR value >= policy value."""
    pyspiel = pytest.importorskip("pyspiel")
    game = pyspiel.load_game("leduc_poker")
    reference = pyspiel.CFRSolver(game)
    solver = FullWalkSolver(load_game("leduc.limit.2p"))
    for iteration in range(1, 31):
        reference.evaluate_and_update_policy()
        solver.iterate(1)
        if iteration % 10 == 0:
            expected = pyspiel.exploitability(game, reference.average_policy())
            assert solver.exploitability() == pytest.approx(expected, rel=1e-9, abs=1e-12)
    for player in (0, 1):
        assert solver.best_response_value(player) >= solver.value(player) - 1e-12


def test_imperfect_recall_abstraction_solves_and_is_measured_in_the_real_game():
    """A coarse Leduc abstraction (river: pair or high card) is exploitable in the real game."""
    game = load_game("leduc.limit.2p")

    def coarse(round_: int, cards: np.ndarray) -> np.ndarray:
        ranks = cards.astype(np.int64) // game.num_suits
        if round_ == 0:
            return ranks[:, 0]
        return (ranks[:, 0] == ranks[:, 1]).astype(np.int64)  # forget the private card

    abstract = FullWalkSolver(game, build_cards(game, coarse, np.array([3, 2])))
    lossless = FullWalkSolver(game)
    abstract.iterate(300)
    lossless.iterate(300)
    assert abstract.num_infosets == 6 * 3 + 30 * 2
    assert abstract.exploitability() > 5 * lossless.exploitability()
    # The abstract strategy is still a strategy of the real game: zero-sum values.
    assert abstract.value(0) + abstract.value(1) == pytest.approx(0, abs=1e-12)


TWO_HOLE = """GAMEDEF
limit
numPlayers = 2
numRounds = 2
blind = 2 1
raiseSize = 2 4
firstPlayer = 2 1
maxRaises = 2 2
numSuits = 2
numRanks = 3
numHoleCards = 2
numBoardCards = 0 1
END GAMEDEF
"""


def _openspiel_policy(game, solver, strategy):
    """Our (bucketed) strategy as an OpenSpiel tabular policy, through the info-state strings."""
    import re

    from open_spiel.python import policy

    from gameforge.engines.poker.cards import parse_cards
    from gameforge.engines.poker.cfr import lossless_bucketer

    bucket, _ = lossless_bucketer(solver.game)
    tabular = policy.TabularPolicy(game)
    pattern = re.compile(
        r"\[Round (\d+)\].*\[Private: (\w+)\]\[Public: (\w*)\]\[Sequences: ([^\]]*)\]"
    )
    g = solver.game
    for info, index in tabular.state_lookup.items():
        m = pattern.search(info)
        round_ = int(m.group(1))
        cards = parse_cards(m.group(2) + m.group(3), g.num_ranks, g.num_suits)
        node = solver.tree.node_of(m.group(4).replace("|", "/"))
        b = int(bucket(round_, np.array([cards], dtype=np.int8))[0])
        row = solver.offsets[round_] + b * solver.ndec[round_] + solver.tree.slot[node]
        tabular.action_probability_array[index] = strategy[row]
    return tabular


def test_two_hole_card_removal_matches_openspiel_universal_poker():
    """Two hole cards, reverse blinds: value and exact best response of a random strategy equal
    OpenSpiel's (ACPC rules), through an independent info-state mapping."""
    pyspiel = pytest.importorskip("pyspiel")
    from open_spiel.python import policy
    from open_spiel.python.algorithms import expected_game_score, exploitability

    from gameforge.engines.poker.acpc import parse_game

    game = pyspiel.universal_poker.load_universal_poker_from_acpc_gamedef(TWO_HOLE)
    uniform = policy.UniformRandomPolicy(game)
    solver = FullWalkSolver(parse_game(TWO_HOLE))
    value = expected_game_score.policy_value(game.new_initial_state(), [uniform, uniform])[0]
    assert solver.value(0, solver.sigma) == pytest.approx(value, abs=1e-12)
    expected = exploitability.exploitability(game, uniform)
    assert solver.exploitability(solver.sigma) == pytest.approx(expected, abs=1e-12)
    rng = np.random.default_rng(7)
    strategy = rng.random(solver.sigma.shape) * solver.legal
    strategy /= strategy.sum(axis=1, keepdims=True)
    tabular = _openspiel_policy(game, solver, strategy)
    ours = [solver.best_response_value(p, strategy) for p in (0, 1)]
    theirs = exploitability.nash_conv(game, tabular, return_only_nash_conv=False)
    value = expected_game_score.policy_value(game.new_initial_state(), [tabular, tabular])[0]
    assert ours[0] - value == pytest.approx(theirs.player_improvements[0], abs=1e-9)
    assert ours[1] + value == pytest.approx(theirs.player_improvements[1], abs=1e-9)
    # CFR itself agrees for the first iterations; later, regrets that are exactly 0 in exact
    # arithmetic come out as +-1e-15 in either implementation and regret matching amplifies them.
    reference = pyspiel.CFRSolver(game)
    for _ in range(2):
        reference.evaluate_and_update_policy()
    solver.iterate(2)
    expected = pyspiel.exploitability(game, reference.average_policy())
    assert solver.exploitability() == pytest.approx(expected, rel=1e-9)


def test_short_deck_flop_holdem_exact_best_response():
    """Short-deck flop hold'em (20 cards): 500k chance-sampled deals cut exploitability 4x."""
    from gameforge.engines.poker.mccfr import SampledSolver

    game = load_game("holdem5.flop.limit.2p")
    exact = FullWalkSolver(game)
    uniform = exact.exploitability(exact.sigma)
    sampled = SampledSolver(game, variant="chance")
    sampled.iterate(500_000)
    assert exact.exploitability(sampled.average_strategy()) < uniform / 4
