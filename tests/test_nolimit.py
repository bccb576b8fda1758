"""Heads-up no-limit hold'em engine (engines/nolimit.py) against the ACPC dealer's rules.

Hand-written sequences check exact chip numbers (blinds, minimum raise-to, round ends, all-ins,
showdown and fold payoffs); random play checks that every recorded hand replays legally and pays
what the cards say; duplicate deals and the heuristic's statistics are checked on large batches;
and random hands are replayed through OpenSpiel's universal_poker (a port of the ACPC game.c) to
compare, at every decision, who acts, fold legality, the call, the raise-to range and the returns.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gameforge.engines.nlhe import game as nl
from gameforge.engines.poker.acpc import parse_game
from gameforge.engines.poker.cards import parse_cards
from gameforge.engines.poker.evaluator import evaluate
from gameforge.engines.poker.shipped_games import load_game
from tests.spiel_helpers import universal_poker

FOLD, CALL, RAISE = nl.FOLD, nl.CALL, nl.RAISE
GAMES = ("holdem.nolimit.2p.50bb", "holdem.nolimit.2p.20bb", "holdem.nolimit.2p.reverse_blinds")

# Unequal stacks (seat 0, the big blind, has 5000; seat 1, the small blind, 1000): the only way to
# reach short all-ins and side pots, which the shipped equal-stack games never produce.
UNEQUAL_TEXT = """GAMEDEF
nolimit
numPlayers = 2
numRounds = 4
stack = 5000 1000
blind = 100 50
firstPlayer = 2 1 1 1
numSuits = 4
numRanks = 13
numHoleCards = 2
numBoardCards = 0 3 1 1
END GAMEDEF
"""


@functools.cache
def rules(name: str) -> nl.Rules:
    """Packed rules of a shipped game, or of the unequal-stack game above."""
    if name == "unequal":
        return nl.rules_of(parse_game(UNEQUAL_TEXT, name="unequal"))
    return nl.rules_of(load_game(name))


def table(name: str = "holdem.nolimit.2p.50bb", cards: str | None = None) -> nl.TableBatch:
    """One fresh table with EXTERNAL seats (nothing plays by itself), optionally with set cards.

    `cards` is seat 0's hole, seat 1's hole, then the board, as in `batch.cards`.
    """
    batch = nl.new_batch(rules(name), 1, 0, 0, (nl.EXTERNAL, nl.EXTERNAL), duplicate=False)
    if cards is not None:
        batch.cards[0] = parse_cards(cards)
    return batch


def act(batch: nl.TableBatch, kind: int, to: int = 0) -> None:
    """Apply one action on table 0 through the checked TableBatch.apply."""
    batch.apply(np.array([0]), np.array([kind]), np.array([to]))


def legal(batch: nl.TableBatch) -> tuple[bool, int, bool, int, int]:
    """legal() on table 0 as plain Python values."""
    f, c, r, lo, hi = nl.legal(batch.state, 0, batch.rules.stack)
    return bool(f), int(c), bool(r), int(lo), int(hi)


def spent(batch: nl.TableBatch) -> tuple[int, int]:
    """Chips committed by seat 0 and seat 1 on table 0."""
    return int(batch.state[0, nl.SPENT]), int(batch.state[0, nl.SPENT + 1])


def col(batch: nl.TableBatch, column: int) -> int:
    """One state column of table 0."""
    return int(batch.state[0, column])


def finish(batch: nl.TableBatch) -> int:
    """Pay the finished table 0 through TableBatch.advance; returns seat 0's chips."""
    assert col(batch, nl.DONE) == 1
    assert batch.advance() == 0
    assert col(batch, nl.DONE) == 2
    return int(batch.payoff[0])


# ---------------------------------------------------------------------------------------------
# 1. Hand-written sequences with exact numbers.


def test_card_ids_follow_acpc_order():
    # The showdown tests below rely on card id = rank * 4 + suit with suits c, d, h, s.
    assert parse_cards("2c2d2h2sAs") == [0, 1, 2, 3, 51]


def test_rules_of_packs_the_50bb_game():
    r = rules("holdem.nolimit.2p.50bb")
    assert r.stack.tolist() == [5000, 5000]
    assert r.blind.tolist() == [100, 50]
    assert r.first.tolist() == [1, 0, 0, 0]
    assert r.board_through.tolist() == [0, 3, 4, 5]
    assert (r.big_blind, r.small_blind, r.n_cards, r.max_actions) == (100, 50, 9, 256)
    assert rules("holdem.nolimit.2p.reverse_blinds").stack.tolist() == [20000, 20000]
    assert rules("holdem.nolimit.2p.20bb").stack.tolist() == [2000, 2000]


def test_rules_of_rejects_limit_games():
    with pytest.raises(nl.NoLimitError):
        nl.rules_of(load_game("holdem.limit.2p.reverse_blinds"))


def test_blinds_posted_and_small_blind_acts_first():
    b = table()
    assert spent(b) == (100, 50)
    assert col(b, nl.ROUND) == 0
    assert col(b, nl.ACTOR) == 1
    assert col(b, nl.MAX_SPENT) == 100
    assert col(b, nl.MIN_TO) == 200  # twice the big blind
    assert col(b, nl.FOLDED) == -1
    assert col(b, nl.DONE) == 0
    assert col(b, nl.N_ACTS) == 0
    # SB faces the big blind: fold legal, call to 100, raise to 200..5000.
    assert legal(b) == (True, 100, True, 200, 5000)


def test_raise_reraise_call_sets_min_raise_to_and_next_round():
    b = table()
    act(b, RAISE, 300)  # SB raises by 200 over 100
    assert col(b, nl.MIN_TO) == 500  # 300 + 200
    assert col(b, nl.ACTOR) == 0
    assert legal(b) == (True, 300, True, 500, 5000)
    act(b, RAISE, 800)  # BB re-raises by 500
    assert col(b, nl.MIN_TO) == 1300
    assert col(b, nl.ACTOR) == 1
    assert legal(b) == (True, 800, True, 1300, 5000)
    act(b, CALL)  # the call closes the preflop round
    assert spent(b) == (800, 800)
    assert col(b, nl.ROUND) == 1
    assert col(b, nl.ACTOR) == 0  # seat 0 acts first after the preflop
    assert col(b, nl.MIN_TO) == 900  # current bet + big blind
    assert legal(b) == (False, 800, True, 900, 5000)
    assert b.history[0, :3].tolist() == [[0, 1, RAISE, 300], [0, 0, RAISE, 800], [0, 1, CALL, 800]]
    assert col(b, nl.N_ACTS) == 3


def test_min_bet_then_min_raise_on_the_flop():
    b = table()
    act(b, RAISE, 800)
    act(b, CALL)  # BB calls: flop, spent 800 each
    act(b, RAISE, 900)  # BB bets the minimum (one big blind)
    assert col(b, nl.MIN_TO) == 1000  # min raise = previous raise size = 100
    assert legal(b) == (True, 900, True, 1000, 5000)
    act(b, RAISE, 2000)
    assert col(b, nl.MIN_TO) == 3100
    assert legal(b) == (True, 2000, True, 3100, 5000)
    act(b, CALL)
    assert (col(b, nl.ROUND), col(b, nl.ACTOR), col(b, nl.MIN_TO)) == (2, 0, 2100)
    assert spent(b) == (2000, 2000)


def test_limp_gives_big_blind_the_option():
    b = table()
    act(b, CALL)  # SB completes to 100
    # The round is not over: BB has not acted since the blinds.
    assert col(b, nl.ROUND) == 0
    assert col(b, nl.ACTOR) == 0
    assert spent(b) == (100, 100)
    assert legal(b) == (False, 100, True, 200, 5000)  # BB can check or raise, not fold
    act(b, RAISE, 300)
    assert (col(b, nl.ROUND), col(b, nl.ACTOR), col(b, nl.MIN_TO)) == (0, 1, 500)
    assert legal(b) == (True, 300, True, 500, 5000)


def test_check_check_advances_every_round_to_showdown():
    b = table()
    act(b, CALL)
    act(b, CALL)  # BB checks the option
    for r in (1, 2, 3):
        assert (col(b, nl.ROUND), col(b, nl.ACTOR), col(b, nl.MIN_TO)) == (r, 0, 200)
        assert legal(b) == (False, 100, True, 200, 5000)
        act(b, CALL)
        assert (col(b, nl.ROUND), col(b, nl.ACTOR), col(b, nl.DONE)) == (r, 1, 0)
        act(b, CALL)
    assert col(b, nl.DONE) == 1
    assert col(b, nl.FOLDED) == -1
    assert col(b, nl.N_ACTS) == 8
    assert spent(b) == (100, 100)
    with pytest.raises(nl.NoLimitError):  # nothing is legal on a finished table
        act(b, CALL)


def test_fold_is_legal_only_facing_a_bet():
    b = table()
    act(b, CALL)
    act(b, CALL)  # flop, nothing to call
    assert legal(b)[0] is False
    with pytest.raises(nl.NoLimitError):
        act(b, FOLD)
    # The rejected fold changed nothing.
    assert (col(b, nl.N_ACTS), col(b, nl.DONE), col(b, nl.ACTOR)) == (2, 0, 0)
    act(b, RAISE, 300)  # BB bets
    assert legal(b) == (True, 300, True, 500, 5000)
    act(b, FOLD)
    assert (col(b, nl.DONE), col(b, nl.FOLDED)) == (1, 1)
    assert b.history[0, 3].tolist() == [1, 1, FOLD, 100]  # spent_after of a fold: unchanged
    assert finish(b) == 100  # SB loses what it put in


def test_all_in_leaves_only_call_or_fold():
    b = table(cards="AsAh 7d2c KcQd9h5s3c")
    act(b, RAISE, 5000)  # SB shoves
    assert col(b, nl.MIN_TO) == 9900  # 2 * 5000 - 100: no further raise is possible anyway
    f, c, r, _lo, _hi = legal(b)
    assert (f, c, r) == (True, 5000, False)
    with pytest.raises(nl.NoLimitError):
        act(b, RAISE, 5000)
    act(b, CALL)
    assert spent(b) == (5000, 5000)
    assert col(b, nl.DONE) == 1
    assert finish(b) == 5000  # aces win the whole stack


def test_all_in_on_the_turn_ends_the_hand_when_called():
    b = table(cards="7d2c AsAh KcQd9h5s3c")
    act(b, CALL)
    act(b, CALL)
    act(b, CALL)
    act(b, CALL)  # turn
    assert col(b, nl.ROUND) == 2
    act(b, RAISE, 5000)  # BB shoves on the turn
    assert legal(b)[:3] == (True, 5000, False)
    act(b, CALL)
    assert col(b, nl.DONE) == 1
    assert finish(b) == -5000


def test_min_raise_above_stack_leaves_only_all_in_20bb():
    b = table("holdem.nolimit.2p.20bb")
    act(b, RAISE, 300)
    act(b, RAISE, 1200)
    assert col(b, nl.MIN_TO) == 2100  # above the 2000 stack
    # The only raise left is all-in.
    assert legal(b) == (True, 1200, True, 2000, 2000)
    for bad in (1500, 2100):
        with pytest.raises(nl.NoLimitError):
            act(b, RAISE, bad)
    act(b, RAISE, 2000)
    assert col(b, nl.MIN_TO) == 2800
    assert legal(b)[:3] == (True, 2000, False)


def test_short_all_in_never_lowers_min_raise_to_unequal_stacks():
    b = table("unequal")
    act(b, RAISE, 300)
    act(b, RAISE, 900)
    assert col(b, nl.MIN_TO) == 1500
    # SB has 1000 < 1500: the only raise is its all-in.
    assert legal(b) == (True, 900, True, 1000, 1000)
    act(b, RAISE, 1000)
    assert col(b, nl.MIN_TO) == 1500  # 2 * 1000 - 900 = 1100 would be lower: kept at 1500
    # BB faces an all-in: call (to 1000) or fold, no raise.
    assert legal(b)[:3] == (True, 1000, False)
    act(b, CALL)
    assert col(b, nl.DONE) == 1
    assert spent(b) == (1000, 1000)


def test_big_stack_raises_to_own_stack_and_short_call_makes_side_pot():
    b = table("unequal", cards="7d2c AsAh KcQd9h5s3c")
    act(b, CALL)  # SB limps
    # BB may raise up to its own stack although SB can only put in 1000.
    assert legal(b) == (False, 100, True, 200, 5000)
    act(b, RAISE, 3000)
    # SB cannot raise: the bet is at or above its whole stack; calling puts it all-in for 1000.
    assert legal(b)[:3] == (True, 1000, False)
    act(b, CALL)
    assert spent(b) == (3000, 1000)
    assert col(b, nl.DONE) == 1
    assert finish(b) == -1000  # SB's aces win only the contested 1000


def test_short_stack_folding_to_a_raise_loses_its_bet():
    b = table("unequal")
    act(b, RAISE, 600)
    act(b, RAISE, 1200)
    act(b, FOLD)
    assert finish(b) == 600


def test_raise_cap_of_64_actions_per_round():
    # ACPC allows a raise only while numActions + numPlayers <= MAX_NUM_ACTIONS (64): 63 raises.
    b = table("holdem.nolimit.2p.reverse_blinds")
    for k in range(1, 64):
        f, c, r, lo, hi = legal(b)
        assert r and lo == 100 * (k + 1) and hi == 20000
        act(b, RAISE, lo)
    assert col(b, nl.MAX_SPENT) == 6400
    assert legal(b)[:3] == (True, 6400, False)  # BB (at 6300) may only call or fold
    with pytest.raises(nl.NoLimitError):
        act(b, RAISE, 20000)
    act(b, CALL)
    assert (col(b, nl.ROUND), col(b, nl.N_ACTS)) == (1, 64)
    assert legal(b) == (False, 6400, True, 6500, 20000)  # a new round may raise again


@pytest.mark.parametrize(
    ("kind", "to"),
    [(RAISE, 199), (RAISE, 5001), (RAISE, 100), (FOLD, 0)],
    ids=["below-min", "above-stack", "not-a-raise", "fold-after-limp"],
)
def test_apply_rejects_illegal_actions(kind, to):
    b = table()
    if kind == FOLD:
        act(b, CALL)  # BB's option: nothing to call, so no fold
    before = b.state.copy()
    with pytest.raises(nl.NoLimitError):
        act(b, kind, to)
    assert np.array_equal(b.state, before)


def test_apply_rejects_unknown_action_kind_and_bad_tables():
    b = table()
    before = b.state.copy()
    with pytest.raises(nl.NoLimitError):
        act(b, 7, 123)
    with pytest.raises(nl.NoLimitError, match="outside"):
        b.apply(np.array([5]), np.array([CALL]), np.array([0]))
    assert np.array_equal(b.state, before)


def _check_down(b: nl.TableBatch) -> None:
    while col(b, nl.DONE) == 0:
        act(b, CALL)


@pytest.mark.parametrize(
    ("cards", "preflop_to", "expected"),
    [
        ("AsAh 7d2c KcQd9h5s3c", None, 100),  # seat 0's aces win the limped pot
        ("7d2c AsAh KcQd9h5s3c", None, -100),  # seat 1's aces win
        ("2c3d 2h3s AcKdQhJsTc", None, 0),  # the board's straight plays for both: split
        ("AsAh 7d2c KcQd9h5s3c", 800, 800),  # a raised pot: won amount = min(spent) = 800
        ("7d2c 8h8d KcQd9h5s3c", 800, -800),
        ("Ah2h KsQs 3h7h9hJcTd", 800, 800),  # seat 0's flush beats seat 1's straight
    ],
)
def test_showdown_payoff(cards, preflop_to, expected):
    b = table(cards=cards)
    if preflop_to is not None:
        act(b, RAISE, preflop_to)
    _check_down(b)
    assert spent(b) == ((preflop_to or 100),) * 2
    assert finish(b) == expected


@pytest.mark.parametrize(
    ("script", "folder", "expected"),
    [
        ([(FOLD, 0)], 1, 50),  # SB folds its small blind
        ([(RAISE, 300), (FOLD, 0)], 0, -100),  # BB folds its big blind
        ([(RAISE, 300), (RAISE, 900), (FOLD, 0)], 1, 300),
        # Flop: BB bets 200 (the minimum), SB raises to 400, BB folds what it put in.
        ([(CALL, 0), (CALL, 0), (RAISE, 200), (RAISE, 400), (FOLD, 0)], 0, -200),
    ],
)
def test_fold_pays_folders_spent(script, folder, expected):
    b = table(cards="AsAh 7d2c KcQd9h5s3c")  # seat 0's aces must not matter after a fold
    for kind, to in script:
        act(b, kind, to)
    assert col(b, nl.FOLDED) == folder
    assert finish(b) == expected


def test_advance_pays_only_finished_tables():
    b = nl.new_batch(rules(GAMES[0]), 3, 5, 0, (nl.EXTERNAL, nl.EXTERNAL), duplicate=False)
    b.apply(np.array([0, 2]), np.array([FOLD, RAISE]), np.array([0, 300]))
    assert b.advance() == 2  # tables 1 and 2 still wait on a seat
    assert b.payoff.tolist() == [50, 0, 0]
    assert b.state[:, nl.DONE].tolist() == [2, 0, 0]
    assert b.waiting(0).tolist() == [2]  # BB (player 0) to act on table 2
    assert b.waiting(1).tolist() == [1]


# ---------------------------------------------------------------------------------------------
# 2. Random play: every recorded hand replays legally and pays what the cards say.


def split_hands(rec: nl.HandRecords) -> list[np.ndarray]:
    """The action records of each hand."""
    assert rec.counts.sum() == len(rec.actions)
    return np.split(rec.actions, np.cumsum(rec.counts)[:-1])


def replay(r: nl.Rules, acts: np.ndarray) -> tuple[np.ndarray, list[tuple[bool, bool, int]]]:
    """Replay one hand's records through a fresh state, checking each against legal().

    Returns the final state row and, per decision, (fold legal, raise legal, action type).
    Besides legal(), the basic rules are checked on chip counts tracked here independently.
    """
    state = np.zeros((1, nl.STATE_WIDTH), dtype=np.int64)
    history = np.zeros((1, r.max_actions, 4), dtype=np.int32)
    nl.start_hand(state, 0, r.stack, r.blind, r.first)
    decisions = []
    mine = [int(r.blind[0]), int(r.blind[1])]  # spent per seat, tracked from the records
    prev_round, prev_seat = -1, -1
    for rnd, seat, kind, after in acts.tolist():
        assert state[0, nl.DONE] == 0
        assert (state[0, nl.ROUND], state[0, nl.ACTOR]) == (rnd, seat)
        if rnd != prev_round:  # a round opens with its first player, bets level
            assert rnd == prev_round + 1 and seat == r.first[rnd]
            assert rnd == 0 or mine[0] == mine[1]
        else:  # heads-up, the seats alternate within a round
            assert seat != prev_seat
        prev_round, prev_seat = rnd, seat
        top = max(mine)
        assert kind != FOLD or mine[seat] < top  # fold only facing a bet
        assert kind != CALL or after == min(top, r.stack[seat])
        assert kind != RAISE or top < after <= r.stack[seat]
        mine[seat] = after
        can_fold, call_to, can_raise, lo, hi = nl.legal(state, 0, r.stack)
        if kind == FOLD:
            assert can_fold
            assert after == state[0, nl.SPENT + seat]
        elif kind == CALL:
            assert after == call_to
        else:
            assert kind == RAISE
            assert can_raise
            assert lo <= after <= hi
            assert after > state[0, nl.MAX_SPENT]
        assert after <= r.stack[seat]
        decisions.append((bool(can_fold), bool(can_raise), kind))
        nl.apply_action(state, 0, kind, after, history, r.stack, r.blind, r.first)
        assert state[0, nl.SPENT + seat] == after
    assert state[0, nl.DONE] == 1
    assert np.array_equal(history[0, : len(acts)], acts)
    return state[0], decisions


def expected_payoff(r: nl.Rules, cards: np.ndarray, acts: np.ndarray) -> int:
    """Seat 0's chips from the records alone: fold pays the folder's spent, else min(spent)."""
    spent = [int(r.blind[0]), int(r.blind[1])]
    for _rnd, seat, _kind, after in acts.tolist():
        spent[seat] = after
    last = acts[-1].tolist()
    if last[2] == FOLD:
        return -spent[0] if last[1] == 0 else spent[1]
    hole = r.game.num_hole_cards
    board = cards[2 * hole :]
    hands = np.array([np.concatenate([cards[s * hole : (s + 1) * hole], board]) for s in (0, 1)])
    v0, v1 = evaluate(hands.astype(np.int64))
    return int(np.sign(int(v0) - int(v1))) * min(spent)


class RandomExternal:
    """An EXTERNAL player choosing uniformly among legal action types, then raise sizes."""

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)

    def choose(self, batch: nl.TableBatch, tables: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        kinds = np.empty(len(tables), dtype=np.int64)
        to = np.zeros(len(tables), dtype=np.int64)
        for j, t in enumerate(tables):
            can_fold, call_to, can_raise, lo, hi = nl.legal(batch.state, t, batch.rules.stack)
            options = [CALL] + [FOLD] * bool(can_fold) + [RAISE] * bool(can_raise)
            kinds[j] = options[self.rng.integers(len(options))]
            if kinds[j] == RAISE:
                to[j] = self.rng.integers(lo, hi + 1)
        return kinds, to


PAIRINGS = {
    "random-random": (nl.RANDOM, nl.RANDOM),
    "heuristic-random": (nl.HEURISTIC, nl.RANDOM),
    "cards-heuristic": (nl.HEURISTIC_CARDS, nl.HEURISTIC),
    "external-random": (None, nl.RANDOM),  # None: a RandomExternal
}


def check_records(r: nl.Rules, rec: nl.HandRecords, duplicate: bool) -> None:
    """Every invariant a finished set of hands must satisfy."""
    hands = split_hands(rec)
    assert len(hands) == len(rec.payoff) == len(rec.cards)
    seats = np.array([[0, 1], [1, 0]] if duplicate else [[0, 1]])
    assert np.array_equal(rec.seat_player, np.tile(seats, (len(hands) // len(seats), 1)))
    for cards, acts, payoff in zip(rec.cards, hands, rec.payoff.tolist()):
        assert len(set(cards.tolist())) == len(cards)
        final, _ = replay(r, acts)
        assert payoff == expected_payoff(r, cards, acts)
        assert abs(payoff) <= min(r.stack)
        assert abs(payoff) <= min(final[nl.SPENT], final[nl.SPENT + 1]) or acts[-1][2] == FOLD


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 2**31 - 1),
    game=st.sampled_from(GAMES + ("unequal",)),
    pairing=st.sampled_from(sorted(PAIRINGS)),
    duplicate=st.booleans(),
)
def test_random_play_replays_legally_and_pays_the_cards(seed, game, pairing, duplicate):
    r = rules(game)
    players = tuple(RandomExternal(seed) if p is None else p for p in PAIRINGS[pairing])
    rec = nl.play(r, players, nl.Deals(150, seed), duplicate=duplicate, batch_deals=64)
    check_records(r, rec, duplicate)


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), game=st.sampled_from(GAMES))
def test_results_depend_only_on_seed_and_deal(seed, game):
    r = rules(game)
    players = (nl.HEURISTIC, nl.RANDOM)
    whole = nl.play(r, players, nl.Deals(60, seed), batch_deals=60)
    split = nl.play(r, players, nl.Deals(60, seed), batch_deals=7, n_threads=2)
    tail = nl.play(r, players, nl.Deals(25, seed, first=35), batch_deals=4)
    for field in ("cards", "seat_player", "counts", "actions", "payoff"):
        assert np.array_equal(getattr(whole, field), getattr(split, field)), field
    # Deals 35..59 are rows 70..119 of the whole run.
    assert np.array_equal(tail.cards, whole.cards[70:])
    assert np.array_equal(tail.payoff, whole.payoff[70:])
    assert np.array_equal(tail.counts, whole.counts[70:])
    assert np.array_equal(tail.actions, np.concatenate(split_hands(whole)[70:]))


def test_external_player_acts_on_its_own_seats_in_duplicate_play():
    r = rules(GAMES[0])
    seen = []

    class Recorder(RandomExternal):
        def choose(self, batch, tables):
            rows = np.asarray(tables)
            actor = batch.state[rows, nl.ACTOR]
            # Player 0 is on seat 0 in even rows and on seat 1 in odd rows.
            assert np.array_equal(batch.seat_player[rows, actor], np.zeros(len(rows)))
            seen.extend(zip(rows.tolist(), actor.tolist(), strict=True))
            return super().choose(batch, tables)

    rec = nl.play(r, (Recorder(3), nl.HEURISTIC), nl.Deals(30, 11))
    check_records(r, rec, duplicate=True)
    assert {t % 2 for t, _ in seen} == {0, 1}
    assert all(seat == t % 2 for t, seat in seen)


# ---------------------------------------------------------------------------------------------
# 3. Duplicate deals and the heuristic player's statistics.


def test_duplicate_rows_share_cards_and_swap_seats():
    r = rules(GAMES[0])
    dup = nl.new_batch(r, 500, 9, 3, (nl.RANDOM, nl.HEURISTIC), duplicate=True)
    single = nl.new_batch(r, 500, 9, 3, (nl.RANDOM, nl.HEURISTIC), duplicate=False)
    assert dup.cards.shape == (1000, 9)
    assert np.array_equal(dup.cards[0::2], dup.cards[1::2])
    assert np.array_equal(dup.seat_player[0::2], np.tile([0, 1], (500, 1)))
    assert np.array_equal(dup.seat_player[1::2], np.tile([1, 0], (500, 1)))
    assert np.array_equal(dup.seat_kind[0::2], np.tile([nl.RANDOM, nl.HEURISTIC], (500, 1)))
    assert np.array_equal(dup.seat_kind[1::2], np.tile([nl.HEURISTIC, nl.RANDOM], (500, 1)))
    # A deal's cards depend on the seed and deal number only, not on duplication.
    assert np.array_equal(single.cards, dup.cards[0::2])
    assert all(len(set(row)) == 9 for row in single.cards.tolist())
    # Different deals differ.
    assert len({tuple(row) for row in single.cards.tolist()}) == 500


def test_heuristic_self_play_hand_length_and_action_frequencies():
    r = rules(GAMES[0])
    rec = nl.play(r, (nl.HEURISTIC, nl.HEURISTIC), nl.Deals(20_000, 2024))
    # The paper reports about 7 actions per hand for its heuristic self-play.
    assert 5.5 < rec.counts.mean() < 8
    # Both plays of a duplicate deal are played (different decision streams, same cards).
    assert np.array_equal(rec.cards[0::2], rec.cards[1::2])
    # Among decisions where fold, call and raise are all legal the draw is 45/45/10.
    decisions = []
    for acts in split_hands(rec):
        decisions += replay(r, acts)[1]
    full = np.array([kind for f, rz, kind in decisions if f and rz])
    assert len(full) > 50_000
    assert abs(np.mean(full == RAISE) - 0.45) < 0.02
    assert abs(np.mean(full == FOLD) - 0.10) < 0.02
    assert abs(np.mean(full == CALL) - 0.45) < 0.02
    # Without a bet to face, the fold share becomes a check.
    no_fold = np.array([kind for f, rz, kind in decisions if not f and rz])
    assert not np.any(no_fold == FOLD)
    assert abs(np.mean(no_fold == RAISE) - 0.45) < 0.02


# ---------------------------------------------------------------------------------------------
# 4. Cross-check against OpenSpiel's universal_poker (ACPC game.c port), full no-limit game.


def spiel_game(r: nl.Rules):
    """universal_poker with every raise-to size as its own action (action id = raise-to)."""
    return universal_poker(pytest.importorskip("pyspiel"), r.game)


def compare_with_spiel(game, r: nl.Rules, cards, script) -> int:
    """Play `script` ((type, raise-to) pairs) in both engines, comparing every decision.

    OpenSpiel deals hole cards seat by seat and the board round by round as chance nodes; they
    are forced to `cards` (our row layout is that same order). Returns seat 0's chips.
    """
    s = game.new_initial_state()
    deal = iter(np.asarray(cards).tolist())

    def deal_chance():
        while s.is_chance_node():
            c = next(deal)
            assert c in dict(s.chance_outcomes())
            s.apply_action(c)

    state = np.zeros((1, nl.STATE_WIDTH), dtype=np.int64)
    history = np.zeros((1, r.max_actions, 4), dtype=np.int32)
    nl.start_hand(state, 0, r.stack, r.blind, r.first)
    for kind, to in script:
        deal_chance()
        assert not s.is_terminal() and state[0, nl.DONE] == 0
        assert s.current_player() == state[0, nl.ACTOR]
        spent_before = state[0, nl.SPENT : nl.SPENT + 2].tolist()
        assert list(s.to_struct().player_contributions) == spent_before
        actions = s.legal_actions()
        can_fold, call_to, can_raise, lo, hi = nl.legal(state, 0, r.stack)
        assert (0 in actions) == can_fold
        assert 1 in actions
        sizes = [a for a in actions if a >= 2]
        assert bool(sizes) == can_raise
        if sizes:
            assert (sizes[0], sizes[-1], len(sizes)) == (lo, hi, hi - lo + 1)
        p = state[0, nl.ACTOR]
        s.apply_action(to if kind == RAISE else kind)
        nl.apply_action(state, 0, kind, to, history, r.stack, r.blind, r.first)
        # The call's size shows in the contributions after it.
        spent_now = state[0, nl.SPENT : nl.SPENT + 2].tolist()
        assert list(s.to_struct().player_contributions) == spent_now
        if kind == CALL:
            assert spent_now[p] == call_to
    deal_chance()  # the rest of the board after an all-in
    assert s.is_terminal() and state[0, nl.DONE] == 1
    payoff = int(round(s.returns()[0]))
    assert s.returns() == [payoff, -payoff]
    return payoff


@pytest.mark.parametrize("game_name", GAMES + ("unequal",))
def test_random_hands_match_openspiel(game_name):
    r = rules(game_name)
    game = spiel_game(r)
    hands = 0
    for pairing in ((nl.RANDOM, nl.RANDOM), (nl.HEURISTIC, nl.RANDOM)):
        rec = nl.play(r, pairing, nl.Deals(300, 77), duplicate=False)
        for cards, acts, payoff in zip(rec.cards, split_hands(rec), rec.payoff.tolist()):
            script = [(k, after) for _rnd, _seat, k, after in acts.tolist()]
            assert compare_with_spiel(game, r, cards.astype(np.int64), script) == payoff
            hands += 1
    assert hands == 600


@pytest.mark.parametrize(
    ("game_name", "script"),
    [
        ("holdem.nolimit.2p.50bb", [(RAISE, 300), (RAISE, 800), (CALL, 0)] + [(CALL, 0)] * 6),
        ("holdem.nolimit.2p.50bb", [(CALL, 0), (RAISE, 5000), (CALL, 0)]),
        ("holdem.nolimit.2p.20bb", [(RAISE, 300), (RAISE, 1200), (RAISE, 2000), (CALL, 0)]),
        ("unequal", [(RAISE, 300), (RAISE, 900), (RAISE, 1000), (CALL, 0)]),
        ("unequal", [(CALL, 0), (RAISE, 3000), (CALL, 0)]),
        ("unequal", [(CALL, 0), (CALL, 0), (RAISE, 950), (RAISE, 1000), (CALL, 0)]),
        (
            "holdem.nolimit.2p.reverse_blinds",
            [(RAISE, 100 * (k + 1)) for k in range(1, 64)] + [(CALL, 0)] + [(CALL, 0)] * 6,
        ),
    ],
    ids=["reraise", "bb-shove", "only-all-in", "short-all-in", "side-pot", "flop-all-in", "cap"],
)
@pytest.mark.parametrize(
    ("cards", "sign"),
    [("7d2c AsAh KcQd9h5s3c", -1), ("AsAh 7d2c KcQd9h5s3c", 1), ("2c3d 2h3s AcKdQhJsTc", 0)],
    ids=["seat1-wins", "seat0-wins", "split"],
)
def test_scripted_corners_match_openspiel(game_name, script, cards, sign):
    r = rules(game_name)
    state = np.zeros((1, nl.STATE_WIDTH), dtype=np.int64)
    history = np.zeros((1, r.max_actions, 4), dtype=np.int32)
    nl.start_hand(state, 0, r.stack, r.blind, r.first)
    for kind, to in script:
        nl.apply_action(state, 0, kind, to, history, r.stack, r.blind, r.first)
    contested = min(state[0, nl.SPENT], state[0, nl.SPENT + 1])
    assert compare_with_spiel(spiel_game(r), r, parse_cards(cards), script) == sign * contested
