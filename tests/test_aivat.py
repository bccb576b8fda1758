"""AIVAT (engines.poker.aivat): unbiased to 1e-9 by full enumeration on Kuhn, Leduc and a tiny
no-limit game, lower variance than the plain winnings, and unbiased on sampled short-deck hands.

Every expectation here enumerates every deal and every betting sequence with its probability
under the two strategies that played (no sampling), except the short-deck check.
"""

from __future__ import annotations

import itertools
from functools import cache

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gameforge.engines.poker.acpc import parse_game
from gameforge.engines.poker.aivat import (
    AgentPolicy,
    Betting,
    ExactValues,
    ExamplePolicy,
    Hand,
    MadeHandValues,
    Policy,
    UniformPolicy,
    aivat,
    betting_of,
    hand_from_acpc,
    interval,
    next_outcomes,
    parse_betting,
    sample_hands,
)
from gameforge.engines.poker.aivat_values import Equity, FittedValues, RoundValues
from gameforge.engines.poker.betting import CALL, FOLD, RAISE, build_tree
from gameforge.engines.poker.evaluator import category_of, evaluate, evaluate_one
from gameforge.engines.poker.hs_abstraction import strength_abstraction
from gameforge.engines.poker.match import Agent
from gameforge.engines.poker.mccfr import SampledSolver, lossless_tables
from gameforge.engines.poker.shipped_games import load_game
from gameforge.engines.poker.solver import infoset_layout
from tests.test_match import exact_value

KUHN, LEDUC = "kuhn.limit.2p", "leduc.limit.2p"
EXACT = 1e-9
# Leduc with no-limit betting and 5-chip stacks: raises to 4 or 5 pre-flop, every size after.
TINY_NOLIMIT = """GAMEDEF
nolimit
numPlayers = 2
numRounds = 2
stack = 5 5
blind = 2 1
firstPlayer = 2 1
numSuits = 2
numRanks = 3
numHoleCards = 1
numBoardCards = 0 1
END GAMEDEF
"""


def enumerate_hands(betting: Betting, policies: tuple[Policy, Policy]) -> list[tuple[float, Hand]]:
    """Every hand (deal and betting) the two policies can play, with its probability."""
    g = betting.game
    h = g.num_hole_cards
    deals = list(itertools.permutations(range(g.deck_size), 2 * h + sum(g.num_board_cards)))
    out: list[tuple[float, Hand]] = []

    def walk(hole, board, state, actions, p) -> None:  # type: ignore[no-untyped-def]
        seat = betting.actor(state)
        if seat < 0:
            out.append((p, Hand(hole, board, tuple(actions))))
            return
        seen = hole[seat] + board[: g.board_cards_through(betting.round(state))]
        options, probs = policies[seat].distribution(state, seen)
        for action, q in zip(options, probs):
            walk(hole, board, betting.apply(state, action), [*actions, action], p * q)

    for deal in deals:
        walk((deal[:h], deal[h : 2 * h]), deal[2 * h :], betting.start(), [], 1.0 / len(deals))
    return out


def moments(hands: list[tuple[float, Hand]], values: np.ndarray) -> tuple[float, float]:
    """Exact mean and variance of per-hand values under the hands' probabilities."""
    p = np.array([q for q, _ in hands])
    assert abs(p.sum() - 1.0) < EXACT
    mean = float(p @ values)
    return mean, float(p @ (values - mean) ** 2)


def check_unbiased(
    betting: Betting,
    known: Policy,
    opponent: Policy,
    seat: int,
    reference: Policy,
    imaginary: tuple[bool, ...] = (False,),
) -> tuple[float, float, list[float]]:
    """E[AIVAT] == E[plain] by enumeration, with and/or without imaginary observations; the
    plain mean and variance, and AIVAT's variance for each `imaginary`."""
    policies = (known, opponent) if seat == 0 else (opponent, known)
    hands = enumerate_hands(betting, policies)
    values = ExactValues(betting, known, reference)
    variances = []
    for imagined in imaginary:
        est = aivat(betting, [h for _, h in hands], seat, known, values, imagined)
        plain_mean, plain_var = moments(hands, est.plain)
        aivat_mean, aivat_var = moments(hands, est.corrected)
        assert aivat_mean == pytest.approx(plain_mean, abs=EXACT)
        variances.append(aivat_var)
    # the plain mean itself, by another walk: the exact value with the true opponent as reference
    truth = ExactValues(betting, known, opponent).value(seat, betting.start(), ())
    assert plain_mean == pytest.approx(truth, abs=EXACT)
    return plain_mean, plain_var, variances


def strategy_agent(game_name: str, table: np.ndarray) -> Agent:
    """A lossless-bucket strategy agent from an (infosets, 3) table."""
    game = load_game(game_name)
    layout = infoset_layout(build_tree(game), lossless_tables(game).num_buckets)
    return Agent("strategy", strategy=table, offsets=layout.offsets, ndec=layout.ndec)


@cache
def legal_mask(game_name: str) -> np.ndarray:
    """(infosets, 3) legal actions of a game's lossless information sets."""
    game = load_game(game_name)
    return infoset_layout(build_tree(game), lossless_tables(game).num_buckets).legal()


def random_table(game_name: str, seed: int) -> np.ndarray:
    """A random strategy: Dirichlet(1) over the legal actions of every information set."""
    legal = legal_mask(game_name)
    rng = np.random.default_rng(seed)
    table = rng.dirichlet(np.ones(3), size=legal.shape[0]) * legal
    return table / table.sum(axis=1, keepdims=True)


@cache
def solved_table(game_name: str) -> np.ndarray:
    """A near-equilibrium: chance-sampled MCCFR, linear averaging (kernels cached by numba)."""
    solver = SampledSolver(load_game(game_name), variant="chance", gamma=1.0, seed=1)
    solver.iterate(200_000)
    return solver.average_strategy()


@cache
def players(game_name: str) -> dict[str, Policy]:
    """The strategies the exact checks pair up."""
    b = betting_of(load_game(game_name))
    solved = solved_table(game_name)
    perturbed = 0.5 * solved + 0.5 * random_table(game_name, 7)
    agents = {
        "solved": strategy_agent(game_name, solved),
        "perturbed": strategy_agent(game_name, perturbed),
        "uniform": Agent("uniform"),
        "call": Agent("call"),
        "raise": Agent("raise"),
    }
    return {name: AgentPolicy(b, agent) for name, agent in agents.items()}


# ------------------------------------------------------------------------------- exactness


@settings(max_examples=25, deadline=None)
@given(
    seeds=st.tuples(*(st.integers(0, 2**32 - 1) for _ in range(3))),
    seat=st.sampled_from([0, 1]),
    imaginary=st.booleans(),
)
def test_kuhn_random_strategies_unbiased(seeds: tuple[int, int, int], seat: int, imaginary: bool):
    """Any known strategy, opponent and baseline reference: E[AIVAT] = E[plain] on Kuhn."""
    b = betting_of(load_game(KUHN))
    known, opponent, reference = (
        AgentPolicy(b, strategy_agent(KUHN, random_table(KUHN, s))) for s in seeds
    )
    check_unbiased(b, known, opponent, seat, reference, (imaginary,))


@pytest.mark.parametrize("game_name", [KUHN, LEDUC])
@pytest.mark.parametrize(
    "known, opponent",
    [("solved", "uniform"), ("uniform", "solved"), ("perturbed", "solved"), ("solved", "raise")],
)
@pytest.mark.parametrize("seat", [0, 1])
def test_unbiased_by_enumeration(game_name: str, known: str, opponent: str, seat: int):
    """E[AIVAT] = E[plain] to 1e-9 for solved, uniform, perturbed and card-blind players, in
    both seats; the baseline is the known strategy's self-play value (it never sees the
    opponent's)."""
    b = betting_of(load_game(game_name))
    p = players(game_name)
    check_unbiased(b, p[known], p[opponent], seat, p[known])


@pytest.mark.parametrize("game_name", [KUHN, LEDUC])
def test_plain_mean_matches_match_engine_enumeration(game_name: str):
    """The enumeration's plain mean agrees with test_match's independent tree walk."""
    b = betting_of(load_game(game_name))
    p = players(game_name)
    means = [check_unbiased(b, p["uniform"], p["call"], s, p["uniform"])[0] for s in (0, 1)]
    assert np.mean(means) == pytest.approx(exact_value(load_game(game_name), "uniform", "call"))


class HashedPolicy:
    """A card-aware random strategy for any betting: a fixed Dirichlet draw per (state, cards)."""

    def __init__(self, betting: Betting, seed: int):
        self.betting, self.seed = betting, seed
        self.memo: dict[tuple, tuple[list, np.ndarray]] = {}

    def distribution(self, state, cards):  # type: ignore[no-untyped-def]
        """Its actions and their probabilities."""
        key = (state, cards)
        if key not in self.memo:
            actions = self.betting.actions(state)
            rng = np.random.default_rng([self.seed, abs(hash(key))])
            self.memo[key] = (actions, rng.dirichlet(np.ones(len(actions))))
        return self.memo[key]


@pytest.mark.parametrize("seat", [0, 1])
def test_no_limit_unbiased_by_enumeration(seat: int):
    """No-limit betting (every raise-to size): exact for a card-aware known player against the
    uniform one, with imaginary observations, and the variance drops."""
    b = betting_of(parse_game(TINY_NOLIMIT, "tiny-nolimit"))
    known = HashedPolicy(b, 3)
    _, plain, (corrected,) = check_unbiased(b, known, UniformPolicy(b), seat, known, (seat == 1,))
    assert corrected < plain


# ------------------------------------------------------------------------------- variance


def test_leduc_variance_solved_against_random():
    """Measured on Leduc (exact, by enumeration), the solved strategy against the uniform random
    player, baseline = the solved strategy's self-play values (nothing of the opponent): the
    standard deviation per hand falls from 4.16 to 2.53 chips in seat 0 and from 4.59 to 2.68 in
    seat 1 (1.6x and 1.7x narrower intervals), and with the paper's imaginary observations
    (every hole the known seat could have held, weighted by its strategy's probability of its
    actions) to 2.20 and 2.32 (1.9x, 2.0x); both stay exact."""
    b = betting_of(load_game(LEDUC))
    p = players(LEDUC)
    for seat, sds in ((0, (4.155, 2.534, 2.196)), (1, (4.593, 2.675, 2.316))):
        _, plain, (basic, imagined) = check_unbiased(
            b, p["solved"], p["uniform"], seat, p["solved"], (False, True)
        )
        assert np.sqrt([plain, basic, imagined]) == pytest.approx(sds, abs=0.01)
        assert plain > 2 * basic > 2 * imagined


def test_sampled_imaginary_holes_estimate_the_full_mean():
    """Imaginary observations over `holes` holes drawn in proportion to the known strategy's
    reach: `_reach` is the reach every hole's walk finds (exactly); on Leduc hands of the
    solved strategy against the uniform player (4 holes possible a hand), 3 drawn holes give
    the full mean over every hole on average over 400 draw seeds (within 4 standard errors, a
    hand and over 12 hands: unbiased), 4 or more walk every hole exactly, and a seed's draws
    are the same each time."""
    from gameforge.engines.poker.aivat import Imaginary, _reach, _walk

    b = betting_of(load_game(LEDUC))
    p = players(LEDUC)
    hands = [h for _, h in enumerate_hands(b, (p["solved"], p["uniform"]))][::331][:12]
    values = ExactValues(b, p["solved"], p["solved"])
    for hand in hands:
        assert _reach(b, hand, 0, p["solved"]) == pytest.approx(
            _walk(b, hand, 0, p["solved"], values)[0][3], abs=EXACT
        )
    full = aivat(b, hands, 0, p["solved"], values, imaginary=True).corrected
    every = aivat(b, hands, 0, p["solved"], values, imaginary=Imaginary(holes=4)).corrected
    assert np.array_equal(full, every)
    draws = np.array([
        aivat(b, hands, 0, p["solved"], values, imaginary=Imaginary(3, s)).corrected
        for s in range(400)
    ])  # fmt: skip
    assert not np.array_equal(draws[0], full)  # drawn, not enumerated
    gap = draws.mean(axis=0) - full
    error = draws.std(axis=0, ddof=1) / np.sqrt(len(draws))  # of each hand's mean over seeds
    # (plus 0.002: a hole whose reach is a thousandth may never be drawn, its share of the mean)
    assert (np.abs(gap) <= 4 * error + 0.002).all(), (gap, error)
    assert abs(gap.mean()) <= 4 * np.sqrt((error**2).sum()) / len(hands)
    again = aivat(b, hands, 0, p["solved"], values, imaginary=Imaginary(3, 7)).corrected
    assert np.array_equal(again, draws[7])


# ------------------------------------------------------------------------------- short deck


class MadeHandPolicy:
    """A card-aware limit player: raises more, folds less, with a pair or better."""

    def __init__(self, betting: Betting):
        self.betting = betting
        self.game = betting.game

    def distribution(self, state, cards):  # type: ignore[no-untyped-def]
        """Its actions and their probabilities."""
        actions = self.betting.actions(state)
        made = category_of(evaluate_one(cards, self.game.num_ranks, self.game.num_suits)) >= 1
        weight = (
            {FOLD: 0.05, CALL: 0.4, RAISE: 0.55} if made else {FOLD: 0.3, CALL: 0.5, RAISE: 0.2}
        )
        w = np.array([weight[a[0]] for a in actions])
        return actions, w / w.sum()


def test_short_deck_sampled_hands_unbiased():
    """8-rank limit hold'em, 1,000 sampled hands per seat, the strategy-free made-hand
    baseline: the AIVAT mean agrees with the plain mean within the interval of their paired
    difference, and within the plain mean's 95% interval."""
    b = betting_of(load_game("holdem8.limit.2p.reverse_blinds"))
    known = MadeHandPolicy(b)
    values = MadeHandValues(b)
    for seat in (0, 1):
        policies = (known, UniformPolicy(b)) if seat == 0 else (UniformPolicy(b), known)
        hands = sample_hands(b, policies, 1000, seed=11 + seat)
        est = aivat(b, hands, seat, known, values)
        plain_mean, plain_half = interval(est.plain)
        diff_mean, diff_half = interval(est.plain - est.corrected)
        assert abs(diff_mean) <= 1.5 * diff_half
        assert abs(float(est.corrected.mean()) - plain_mean) <= plain_half


# ------------------------------------------------------------------------------- histories


def test_acpc_strings_and_refusals():
    """ACPC betting and cards strings become hands; impossible histories are refused."""
    leduc = load_game(LEDUC)
    hand = hand_from_acpc(leduc, "rc/cr", "3c|2d/4c")
    assert hand.actions == ((RAISE, 0), (CALL, 0), (CALL, 0), (RAISE, 0))
    assert hand.hole == ((2,), (1,)) and hand.board == (4,)
    nolimit = parse_game(TINY_NOLIMIT, "tiny-nolimit")
    assert parse_betting(nolimit, "r4c/r5f") == ((RAISE, 4), (CALL, 0), (RAISE, 5), (FOLD, 0))
    b = betting_of(leduc)
    p = players(LEDUC)
    values = ExactValues(b, p["call"], p["call"])
    with pytest.raises(ValueError, match="never plays"):  # always-call never raised
        aivat(b, [hand], 0, p["call"], values)
    with pytest.raises(ValueError, match="stop before"):
        aivat(b, [hand_from_acpc(leduc, "cc/c", "3c|2d/4c")], 1, p["uniform"], values)
    with pytest.raises(ValueError, match="both seats"):
        hand_from_acpc(leduc, "cc/cc", "3c|/4c")
    with pytest.raises(ValueError, match="illegal"):
        aivat(b, [hand_from_acpc(leduc, "ccf", "3c|2d/4c")], 1, p["uniform"], values)


# ------------------------------------------------------------------------------- baselines


def test_round_values_exact_on_small_games():
    """RoundValues (the round walked exactly, later chance events averaged where they are few)
    is the exact value on Kuhn and Leduc: equal to ExactValues for any reference, state by
    state and correction by correction."""
    for game_name in (KUHN, LEDUC):
        game = load_game(game_name)
        b = betting_of(game)
        p = players(game_name)
        for reference in ("solved", "uniform", "perturbed"):
            rounds = RoundValues(b, p["solved"], p[reference], Equity(game, 16))
            exact = ExactValues(b, p["solved"], p[reference])
            assert rounds.exact_depth == 0
            for seat in (0, 1):
                policies = (p["solved"], p["perturbed"])[:: 1 if seat == 0 else -1]
                hands = [h for _, h in enumerate_hands(b, policies)]
                got = aivat(b, hands, seat, p["solved"], rounds).corrected
                want = aivat(b, hands, seat, p["solved"], exact).corrected
                assert np.abs(got - want).max() < EXACT


@pytest.mark.parametrize("seat", [0, 1])
def test_both_strategies_known_unbiased(seat: int):
    """With the other seat's strategy known too (the ACPC example player), correcting its
    decisions as well keeps E[AIVAT] = E[plain] (by enumeration on Leduc); with the exact
    values against it as the baseline nothing random is left: every hand scores the value."""
    b = betting_of(load_game(LEDUC))
    p = players(LEDUC)
    example = ExamplePolicy(b)
    policies = (p["solved"], example) if seat == 0 else (example, p["solved"])
    hands = enumerate_hands(b, policies)
    for reference in (p["solved"], example):
        values = ExactValues(b, p["solved"], reference)
        est = aivat(b, [h for _, h in hands], seat, p["solved"], values, other=example)
        plain_mean, _ = moments(hands, est.plain)
        mean, var = moments(hands, est.corrected)
        assert mean == pytest.approx(plain_mean, abs=EXACT)
    assert var < EXACT  # the exact values against the true opponent: zero variance


def test_example_player():
    """The ACPC example player: fold 0.06, call 0.47, raise 0.47 renormalized over what is legal."""
    b = betting_of(load_game(LEDUC))
    example = ExamplePolicy(b)
    actions, probs = example.distribution(b.start(), ())  # nothing to call: check or bet
    assert actions == [(CALL, 0), (RAISE, 0)] and probs == pytest.approx([0.5, 0.5])
    facing = b.apply(b.start(), (RAISE, 0))
    actions, probs = example.distribution(facing, ())
    assert [a for a, _ in actions] == [FOLD, CALL, RAISE]
    assert probs == pytest.approx([0.06, 0.47, 0.47])


def test_equity_exact_and_sampled():
    """Equity with both holes out: a board event's outcomes enumerated together equal each
    outcome's own enumeration and a brute-force count; the sampled means are unbiased."""
    game = load_game("holdem8.limit.2p.reverse_blinds")
    equity = Equity(game, samples=32, event_samples=8)
    deal = ((0, 5), (3, 9))
    outcomes = next_outcomes(game, deal)
    together = equity.after(deal, outcomes)
    picks = [0, 7, len(outcomes) // 2, len(outcomes) - 1]
    assert together[picks] == pytest.approx([equity.of(deal + (outcomes[i],)) for i in picks])
    flop = outcomes[7]
    used = set(deal[0] + deal[1] + flop)
    rest = [c for c in range(game.deck_size) if c not in used]
    signs = []
    for run in itertools.combinations(rest, 2):
        rows = np.array([deal[0] + flop + run, deal[1] + flop + run], dtype=np.int8)
        v = evaluate(rows, game.num_ranks, game.num_suits).astype(np.int64)
        signs.append(np.sign(v[0] - v[1]))
    assert together[7] == pytest.approx(np.mean(signs))
    assert equity.sampled(deal)
    draws = np.array([equity.sampled_after(deal, outcomes).mean() for _ in range(40)])
    assert abs(draws.mean() - together.mean()) < 4 * draws.std(ddof=1) / np.sqrt(len(draws))


@cache
def short_deck_agent() -> Agent:
    """A CFR strategy of the 8-rank deck on a 4-bucket hand-strength abstraction (seconds)."""
    game = load_game("holdem8.limit.2p.reverse_blinds")
    tables = strength_abstraction(game, 4)
    solver = SampledSolver(game, tables, variant="chance", gamma=1.0, seed=3)
    solver.iterate(20_000)
    layout = solver.layout
    return Agent("strategy", strategy=solver.average_strategy(), offsets=layout.offsets,
                 ndec=layout.ndec, tables=tables)  # fmt: skip


def test_short_deck_round_values_unbiased():
    """8-rank limit hold'em, a CFR strategy on a hand-strength abstraction against the example
    player: RoundValues fitted on other hands (the flop's mean sampled, the river's exact)
    keep the AIVAT mean within the paired interval of the plain mean, and narrow the interval."""
    game = load_game("holdem8.limit.2p.reverse_blinds")
    b = betting_of(game)
    known = AgentPolicy(b, short_deck_agent())
    example = ExamplePolicy(b)
    values = RoundValues(b, known, example, Equity(game, samples=32))
    assert values.exact_depth == 4  # the river is averaged exactly, earlier rounds fitted
    for seat in (0, 1):
        policies = (known, example) if seat == 0 else (example, known)
        values.fit(sample_hands(b, policies, 300, seed=40 + seat), seat)
    for seat in (0, 1):
        policies = (known, example) if seat == 0 else (example, known)
        hands = sample_hands(b, policies, 300, seed=50 + seat)
        est = aivat(b, hands, seat, known, values)
        diff_mean, diff_half = interval(est.plain - est.corrected)
        assert abs(diff_mean) <= 1.5 * diff_half
        assert est.corrected.std() < 0.6 * est.plain.std()


def test_fitted_values_unbiased_no_limit():
    """FittedValues on the no-limit engine's hands (the random player known, the heuristic
    against it): the AIVAT mean agrees with the plain mean within their paired interval."""
    from gameforge.engines.nlhe.aivat import hands_of, policy_of
    from gameforge.engines.nlhe.game import HEURISTIC, RANDOM, Deals, play, rules_of

    game = load_game("holdem.nolimit.2p.20bb")
    rules = rules_of(game)
    b = betting_of(game)
    known = policy_of(RANDOM, b, rules)
    values = FittedValues(b, Equity(game, samples=32))
    fit = play(rules, (RANDOM, HEURISTIC), Deals(150, 5))
    values.fit(hands_of(fit, 2), [int(s) for s in np.where(fit.seat_player[:, 0] == 0, 0, 1)])
    rec = play(rules, (RANDOM, HEURISTIC), Deals(150, 6))
    seats = [int(s) for s in np.where(rec.seat_player[:, 0] == 0, 0, 1)]
    est = aivat(b, hands_of(rec, 2), seats, known, values)
    assert est.plain == pytest.approx(np.where(np.array(seats) == 0, rec.payoff, -rec.payoff))
    diff_mean, diff_half = interval(est.plain - est.corrected)
    assert abs(diff_mean) <= 1.5 * diff_half
    assert est.corrected.std() < est.plain.std()


@pytest.mark.parametrize("exact_outcomes", [1, 4])
def test_round_values_fitted_unbiased_by_enumeration(exact_outcomes: int):
    """RoundValues with its fitted parts in play (Leduc with nothing averaged exactly, or only
    the board card): fitted on sampled hands, E[AIVAT] = E[plain] to 1e-9 by enumeration."""
    game = load_game(LEDUC)
    b = betting_of(game)
    p = players(LEDUC)
    example = ExamplePolicy(b)
    values = RoundValues(b, p["solved"], example, Equity(game, 16), exact_outcomes=exact_outcomes)
    assert values.exact_depth == {1: 3, 4: 2}[exact_outcomes]
    for seat in (0, 1):
        policies = (p["solved"], example) if seat == 0 else (example, p["solved"])
        values.fit(sample_hands(b, policies, 200, seed=seat), seat)
    for seat in (0, 1):
        policies = (p["solved"], p["perturbed"]) if seat == 0 else (p["perturbed"], p["solved"])
        hands = enumerate_hands(b, policies)
        est = aivat(b, [h for _, h in hands], seat, p["solved"], values)
        assert moments(hands, est.corrected)[0] == pytest.approx(
            moments(hands, est.plain)[0], abs=EXACT
        )
