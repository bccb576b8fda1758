"""Public chance sampling CFR: exact where there is nothing to sample, unbiased where there is."""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pytest

from gameforge.engines.poker.betting import DECISION
from gameforge.engines.poker.cfr import FullWalkSolver
from gameforge.engines.poker.mccfr import SampledSolver
from gameforge.engines.poker.pcs import PublicSampledSolver, private_hands
from gameforge.engines.poker.shipped_games import load_game
from tests.poker_helpers import LEDUC


@pytest.mark.parametrize("plus, linear", [(False, False), (True, True)], ids=["cfr", "cfr+"])
def test_without_board_cards_an_iteration_is_one_of_full_cfr(plus, linear):
    """Kuhn deals no board: every iteration walks every pair of hands, as full-traversal CFR
    does with alternating updates, so 60 iterations give its regrets and strategy sums (CFR,
    and CFR+ with linear averaging) up to the order of the sums."""
    game = load_game("kuhn.limit.2p")
    full = FullWalkSolver(game, plus=plus, linear=linear)
    public = PublicSampledSolver(game, gamma=1.0 if linear else 0.0, plus=plus, seed=5)
    full.iterate(60)
    public.iterate(60)
    assert public.deals_per_iteration == full.cards.num_deals == 6
    np.testing.assert_allclose(public.regret, full.regret, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(public.avg, full.avg, rtol=1e-12, atol=1e-12)


def _player_rows(solver: SampledSolver, player: int) -> np.ndarray:
    """Rows of `player`'s information sets."""
    tree = solver.tree
    mask = np.zeros(solver.num_infosets, np.bool_)
    for n in np.flatnonzero((tree.kind == DECISION) & (tree.player == player)):
        r = int(tree.round[n])
        start = solver.offsets[r] + tree.slot[n]
        stop = solver.offsets[r] + solver.tables.num_buckets[r] * solver.ndec[r]
        mask[start : stop : solver.ndec[r]] = True
    return mask


@pytest.mark.parametrize("game_name", [LEDUC, "holdem5.flop.limit.2p"], ids=["leduc", "flop"])
def test_the_updates_of_every_board_sum_to_a_full_cfr_iteration(game_name):
    """Unbiased with exact card removal: player 0's first-iteration updates (uniform strategy)
    on each possible board, summed over the boards, are full-traversal CFR's first update of
    player 0 exactly. Leduc has one hole card, the flop game two (with a board of three)."""
    game = load_game(game_name)
    full = FullWalkSolver(game)
    full.iterate(1)
    board_cards = game.board_cards_through(game.num_rounds - 1)
    summed_regret = np.zeros_like(full.regret)
    summed_avg = np.zeros_like(full.avg)
    boards = list(combinations(range(game.deck_size), board_cards))
    public = PublicSampledSolver(game)
    for board in boards:
        public.regret[:] = 0.0
        public.avg[:] = 0.0
        public.update_on_board(np.array(board), trav=0)
        summed_regret += public.regret
        summed_avg += public.avg
    mine = _player_rows(public, 0)
    assert mine.any() and summed_regret[~mine].max() == 0.0
    # every deal holds one unordered board; full CFR sums over deals, the boards over pairs
    assert public.deals_per_iteration * len(boards) == full.cards.num_deals
    scale = np.abs(full.regret[mine]).max()
    np.testing.assert_allclose(summed_regret[mine], full.regret[mine], atol=1e-9 * scale)
    # strategy sums: full CFR adds a hand's reach once per board dealt so far, a board walk
    # once per walk, so within a round they differ by one factor (the round's count of boards
    # per hand), which every row's normalisation cancels
    for r in range(game.num_rounds):
        rows = mine.copy()
        rows[: public.offsets[r]] = False
        if r + 1 < game.num_rounds:
            rows[public.offsets[r + 1] :] = False
        ratio = summed_avg[rows][full.avg[rows] > 0] / full.avg[rows][full.avg[rows] > 0]
        assert ratio.size and np.allclose(ratio, ratio[0], rtol=1e-12), (r, np.unique(ratio))
        assert np.array_equal(summed_avg[rows] > 0, full.avg[rows] > 0)


def test_private_hands_are_every_hole_combination():
    """Hold'em: C(52, 2) = 1,326 two-card hands, their card bits set for both cards."""
    hands, bits = private_hands(load_game("holdem.limit.2p.reverse_blinds"))
    assert hands.shape == (1326, 2) and len({tuple(h) for h in hands}) == 1326
    assert all(int(b).bit_count() == 2 for b in bits)
    assert all(int(b) == (1 << int(h[0])) | (1 << int(h[1])) for h, b in zip(hands, bits))


def test_flop_holdem_converges_faster_than_chance_sampling_at_equal_time():
    """Flop hold'em (20 cards, 190 hands a player): 2,000 public-sampled CFR+ iterations with
    quadratic averaging take about as long here as 900,000 chance-sampled deals (about 5 s
    each on this 2-core machine) and end at least 2x less exploitable (seeded: 0.598 against
    1.396 chips; the gap widens with time, bench/BENCHMARKS.md)."""
    game = load_game("holdem5.flop.limit.2p")
    exact = FullWalkSolver(game)
    public = PublicSampledSolver(game, seed=1, plus=True, gamma=2.0)
    public.iterate(2000)
    chance = SampledSolver(game, variant="chance", seed=1)
    chance.iterate(900_000)
    public_value = exact.exploitability(public.average_strategy())
    chance_value = exact.exploitability(chance.average_strategy())
    assert public_value * 2 < chance_value


def test_discounted_cfr_discounts_every_regret_after_each_iteration():
    """DCFR (alpha 1.5, beta 0, quadratic averaging) on Kuhn: the kernel's discount equals
    undiscounted iterations with positive regrets x t^1.5 / (t^1.5 + 1) and negative ones
    x 1/2 applied in between, and it converges faster than plain CFR (exact exploitability
    after 300 iterations)."""
    game = load_game("kuhn.limit.2p")
    dcfr = PublicSampledSolver(game, gamma=2.0, discount=(1.5, 0.0), seed=3)
    stepped = PublicSampledSolver(game, gamma=2.0, seed=3)
    for t in range(1, 41):
        dcfr.iterate(1)
        stepped.iterate(1)
        keep = np.where(stepped.regret > 0, t**1.5 / (t**1.5 + 1.0), 0.5)
        stepped.regret[:] = stepped.regret * keep
    np.testing.assert_allclose(dcfr.regret, stepped.regret, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(dcfr.avg, stepped.avg, rtol=1e-12, atol=1e-15)
    exact = FullWalkSolver(game)
    plain = PublicSampledSolver(game, seed=3)
    plain.iterate(300)
    dcfr.iterate(300 - dcfr.iteration)
    assert exact.exploitability(dcfr.average_strategy()) < 0.5 * exact.exploitability(
        plain.average_strategy()
    )


@pytest.mark.parametrize("game_name", [LEDUC, "holdem5.flop.limit.2p"], ids=["leduc", "flop"])
def test_threads_give_the_same_bits(game_name):
    """Threads split each walk's hands (halves going down, buckets by parity going up, so no
    two threads write one information-set row): CFR+ with quadratic averaging, and DCFR, give
    a single thread's regrets and strategy sums bit for bit."""
    game = load_game(game_name)
    for options in ({"plus": True, "gamma": 2.0}, {"discount": (1.5, 0.0), "gamma": 2.0}):
        one = PublicSampledSolver(game, seed=3, **options)
        two = PublicSampledSolver(game, seed=3, threads=2, **options)
        three = PublicSampledSolver(game, seed=3, threads=3, **options)
        for solver in (one, two, three):
            solver.iterate(25)
        assert np.abs(one.regret).sum() > 0
        for other in (two, three):
            assert np.array_equal(other.regret, one.regret)
            assert np.array_equal(other.avg, one.avg)
            assert other.nodes_visited == one.nodes_visited
