"""Heads-up no-limit hold'em on batches of tables, in numba, with the ACPC dealer's rules.

A batch is `n` tables, each a row of `state` (layout below), a row of `cards` (seat 0's hole
cards, seat 1's, then the whole board) and a row of `history` (one `(round, seat, type,
spent_after)` record per action, `spent_after` being the seat's total commitment after it, as
ACPC's raise-to sizes are). The rules follow project_acpc_server/game.c:

- blinds are posted from the game's `blind` line; the minimum raise-to starts at twice the
  largest blind and after a raise to `x` over a bet of `m` becomes `2x - m` if that is larger
  (the minimum raise is the previous raise size; a short all-in never lowers it);
- a player may raise to anything from the minimum to their whole stack; with fewer chips than the
  minimum, the only raise is all-in; a player facing an all-in can only call or fold (with one
  player left who can act, nobody may raise, so a short all-in never reopens the betting);
- fold is legal only when facing a bet; a round ends when every player who can still act has
  called since the last raise; at most 64 actions per round, after which only call or fold;
- each new round's minimum raise-to is the current bet plus the big blind;
- a fold loses what the folder put in; a showdown wins min(spent) and ties split (side pot).

Players chosen by `kind` act inside the kernel: `RANDOM` (uniform over the legal action types,
then uniform over the raise grid), `HEURISTIC` (the paper's card-blind 45% bet/raise, 45%
check/call, 10% fold; see `heuristic_action`), `HEURISTIC_CARDS` (the card-aware variant the paper
lists as future work; see `aware_action`). `EXTERNAL` seats stop the kernel at their decisions so a
network can choose (`gameforge.engines.nlhe.net`).
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Protocol

import numpy as np
from numba import njit

from gameforge.engines.common.rng import Numbered, mix, stream_seed, uniform
from gameforge.engines.nlhe.encoding import StateEncoding
from gameforge.engines.poker.acpc import GameDef
from gameforge.engines.poker.evaluator import get_tables, hand_value

FOLD, CALL, RAISE = 0, 1, 2
RANDOM, HEURISTIC, HEURISTIC_CARDS, EXTERNAL = 0, 1, 2, 3
KINDS = {"random": RANDOM, "heuristic": HEURISTIC, "heuristic-cards": HEURISTIC_CARDS}
MAX_ROUND_ACTIONS = 64  # ACPC's MAX_NUM_ACTIONS

# state row layout
ROUND, ACTOR, SPENT, MIN_TO, MAX_SPENT, FOLDED, DONE, CALLED, ROUND_ACTS, N_ACTS = (
    0,
    1,
    2,  # 2 and 3: spent of seat 0 and seat 1
    4,
    5,
    6,
    7,
    8,
    9,
    10,
)
STATE_WIDTH = 11

# The heuristic's raise sizes: a raise adds this fraction of the pot (after calling), chosen
# uniformly, then is rounded to whole small blinds and clipped to [minimum raise, all-in].
HEURISTIC_POT_FRACTIONS = np.array([0.5, 0.75, 1.0, 1.5, 2.0])
AWARE_ROLLOUTS = 24  # equity samples per decision of the card-aware heuristic


class NoLimitError(ValueError):
    """A game this engine cannot play, or an illegal action."""


@dataclass(frozen=True)
class Rules:
    """A heads-up no-limit ACPC game as the arrays the kernels take."""

    game: GameDef
    stack: np.ndarray  # int64[2]
    blind: np.ndarray  # int64[2]
    first: np.ndarray  # int64[rounds]: first seat to act per round
    board_through: np.ndarray  # int64[rounds]: board cards visible in each round
    big_blind: int
    small_blind: int
    n_cards: int  # per table: 2 * hole + board
    max_actions: int

    @property
    def num_rounds(self) -> int:
        """Betting rounds."""
        return self.game.num_rounds

    def encoding(self, canonical: bool) -> StateEncoding:
        """What the CNN input encoding needs of the game (suits relabelled if `canonical`)."""
        return StateEncoding(
            self.game.num_hole_cards, self.game.num_suits, self.board_through, self.first,
            self.blind, self.small_blind, canonical,
        )  # fmt: skip


def rules_of(game: GameDef) -> Rules:
    """Check that `game` is a heads-up no-limit game and pack it for the kernels."""
    if game.betting_type != "nolimit" or game.num_players != 2:
        raise NoLimitError(f"{game.name or 'game'}: needs a heads-up no-limit game")
    if any(game.max_raises[r] < 255 for r in range(game.num_rounds)):
        raise NoLimitError(f"{game.name or 'game'}: raise caps are not supported in no-limit")
    blinds = sorted(b for b in game.blind if b > 0)
    if not blinds:
        raise NoLimitError(f"{game.name or 'game'}: needs blinds")
    if min(game.stack) <= blinds[-1]:
        raise NoLimitError(f"{game.name or 'game'}: stacks must exceed the big blind")
    board = np.cumsum(np.array(game.num_board_cards, dtype=np.int64))
    return Rules(
        game=game,
        stack=np.array(game.stack, dtype=np.int64),
        blind=np.array(game.blind, dtype=np.int64),
        first=np.array(game.first_player, dtype=np.int64),
        board_through=board,
        big_blind=int(blinds[-1]),
        small_blind=int(blinds[0]),
        n_cards=2 * game.num_hole_cards + int(board[-1]),
        max_actions=MAX_ROUND_ACTIONS * game.num_rounds,
    )


# ---------------------------------------------------------------------------------------------
# Rules.


@njit(cache=True, nogil=True)
def start_hand(state: np.ndarray, i: int, stack: np.ndarray, blind: np.ndarray, first: np.ndarray):
    """Post the blinds on table i and give the first seat the move."""
    state[i, ROUND] = 0
    state[i, SPENT] = min(blind[0], stack[0])
    state[i, SPENT + 1] = min(blind[1], stack[1])
    top = max(state[i, SPENT], state[i, SPENT + 1])
    state[i, MAX_SPENT] = top
    state[i, MIN_TO] = 2 * top if top > 0 else 1
    state[i, FOLDED] = -1
    state[i, DONE] = 0
    state[i, CALLED] = 0
    state[i, ROUND_ACTS] = 0
    state[i, N_ACTS] = 0
    state[i, ACTOR] = first[0]


@njit(cache=True, nogil=True)
def legal(state: np.ndarray, i: int, stack: np.ndarray) -> tuple[bool, int, bool, int, int]:
    """(fold legal, call-to, raise legal, minimum raise-to, maximum raise-to) on table i."""
    p = state[i, ACTOR]
    spent = state[i, SPENT + p]
    top = state[i, MAX_SPENT]
    can_fold = spent < top and spent < stack[p]
    call_to = min(top, stack[p])
    opp = 1 - p
    can_raise = state[i, SPENT + opp] < stack[opp] and state[i, ROUND_ACTS] + 2 <= 64
    lo = state[i, MIN_TO]
    hi = stack[p]
    if can_raise and lo > hi:
        if top >= hi:
            can_raise = False
        else:
            lo = hi
    return can_fold, call_to, can_raise, lo, hi


@njit(cache=True, nogil=True)
def apply_action(
    state: np.ndarray,
    i: int,
    kind: int,
    raise_to: int,
    history: np.ndarray,
    stack: np.ndarray,
    blind: np.ndarray,
    first: np.ndarray,
) -> None:
    """Apply FOLD, CALL or RAISE (to `raise_to` chips in total) on table i; record it."""
    p = state[i, ACTOR]
    n = state[i, N_ACTS]
    if kind == FOLD:
        state[i, FOLDED] = p
        state[i, DONE] = 1
        after = state[i, SPENT + p]
    elif kind == CALL:
        after = min(state[i, MAX_SPENT], stack[p])
        state[i, SPENT + p] = after
        if after < stack[p]:
            state[i, CALLED] += 1
    else:
        top = state[i, MAX_SPENT]
        if 2 * raise_to - top > state[i, MIN_TO]:
            state[i, MIN_TO] = 2 * raise_to - top
        state[i, MAX_SPENT] = raise_to
        state[i, SPENT + p] = raise_to
        state[i, CALLED] = 1 if raise_to < stack[p] else 0
        after = raise_to
    history[i, n, 0] = state[i, ROUND]
    history[i, n, 1] = p
    history[i, n, 2] = kind
    history[i, n, 3] = after
    state[i, N_ACTS] = n + 1
    state[i, ROUND_ACTS] += 1
    if state[i, DONE]:
        return
    acting = 0
    for s in range(2):
        if state[i, SPENT + s] < stack[s]:
            acting += 1
    if state[i, CALLED] >= acting:
        if acting > 1 and state[i, ROUND] + 1 < first.shape[0]:
            r = state[i, ROUND] + 1
            state[i, ROUND] = r
            state[i, MIN_TO] = state[i, MAX_SPENT] + max(blind[0], blind[1], 1)
            state[i, CALLED] = 0
            state[i, ROUND_ACTS] = 0
            state[i, ACTOR] = first[r]
        else:
            state[i, DONE] = 1
    else:
        state[i, ACTOR] = 1 - p


@njit(cache=True, nogil=True)
def showdown_payoff(
    state: np.ndarray,
    i: int,
    cards: np.ndarray,
    num_hole: int,
    n_board: int,
    card_key: np.ndarray,
    card_bit: np.ndarray,
    rank_table: np.ndarray,
    flush_table: np.ndarray,
    scratch: np.ndarray,
) -> int:
    """Chips won by seat 0 on finished table i (a fold, or a showdown over the whole board)."""
    folded = state[i, FOLDED]
    if folded == 0:
        return -state[i, SPENT]
    if folded == 1:
        return state[i, SPENT + 1]
    contested = min(state[i, SPENT], state[i, SPENT + 1])
    values = np.empty(2, dtype=np.int64)
    for s in range(2):
        n = 0
        for c in range(num_hole):
            scratch[n] = cards[i, s * num_hole + c]
            n += 1
        for c in range(n_board):
            scratch[n] = cards[i, 2 * num_hole + c]
            n += 1
        values[s] = hand_value(scratch, n, card_key, card_bit, rank_table, flush_table)
    if values[0] > values[1]:
        return contested
    if values[0] < values[1]:
        return -contested
    return 0


# ---------------------------------------------------------------------------------------------
# Built-in players.


@njit(cache=True, nogil=True)
def raise_grid_size(lo: int, hi: int, step: int) -> int:
    """Raise-to sizes from lo to hi: lo, every multiple of `step` strictly between, and hi."""
    if hi <= lo:
        return 1
    first = (lo // step + 1) * step
    inner = 0 if first >= hi else (hi - 1 - first) // step + 1
    return 2 + inner


@njit(cache=True, nogil=True)
def raise_grid_value(lo: int, hi: int, step: int, j: int) -> int:
    """The j-th size of `raise_grid_size`'s grid."""
    if j == 0:
        return lo
    n = raise_grid_size(lo, hi, step)
    if j == n - 1:
        return hi
    return (lo // step + j) * step


@njit(cache=True, nogil=True)
def random_action(rng: np.ndarray, state, i, stack, step) -> tuple[int, int]:
    """Uniform over the legal action types, then uniform over the raise grid."""
    can_fold, call_to, can_raise, lo, hi = legal(state, i, stack)
    n_types = 1 + int(can_fold) + int(can_raise)
    pick = int(uniform(rng) * n_types)
    if can_fold and pick == 0:
        return FOLD, 0
    if can_raise and pick == n_types - 1:
        j = int(uniform(rng) * raise_grid_size(lo, hi, step))
        return RAISE, raise_grid_value(lo, hi, step, j)
    return CALL, call_to


@njit(cache=True, nogil=True)
def pot_raise_to(pot: int, call_to: int, k: int, lo: int, hi: int, step: int) -> int:
    """The heuristic's raise-to with the k-th pot fraction, in whole small blinds, clipped."""
    target = call_to + HEURISTIC_POT_FRACTIONS[k] * pot
    to = int(round(target / step)) * step
    return min(max(to, lo), hi)


@njit(cache=True, nogil=True)
def heuristic_raise_to(rng: np.ndarray, state, i, call_to, lo, hi, step) -> int:
    """A raise adding a random pot fraction (after calling), in whole small blinds, clipped."""
    pot = state[i, SPENT] + state[i, SPENT + 1] + call_to - state[i, SPENT + state[i, ACTOR]]
    k = int(uniform(rng) * HEURISTIC_POT_FRACTIONS.shape[0])
    return pot_raise_to(pot, call_to, k, lo, hi, step)


@njit(cache=True, nogil=True)
def heuristic_action(rng: np.ndarray, state, i, stack, step) -> tuple[int, int]:
    """The paper's card-blind player: 45% bet/raise, 45% check/call, 10% fold.

    Where the drawn action is illegal (fold with nothing to call, raise with no raise left) the
    player checks or calls instead.
    """
    can_fold, call_to, can_raise, lo, hi = legal(state, i, stack)
    u = uniform(rng)
    if u < 0.45 and can_raise:
        return RAISE, heuristic_raise_to(rng, state, i, call_to, lo, hi, step)
    if u >= 0.9 and can_fold:
        return FOLD, 0
    return CALL, call_to


@njit(cache=True, nogil=True)
def equity(
    rng: np.ndarray,
    cards: np.ndarray,
    i: int,
    seat: int,
    num_hole: int,
    n_visible: int,
    n_board: int,
    deck_size: int,
    rollouts: int,
    card_key: np.ndarray,
    card_bit: np.ndarray,
    rank_table: np.ndarray,
    flush_table: np.ndarray,
) -> float:
    """Monte Carlo equity of `seat`'s hole cards against a random hand, given the visible board."""
    known = np.zeros(deck_size, dtype=np.bool_)
    mine = np.empty(num_hole + n_board, dtype=np.int64)
    theirs = np.empty(num_hole + n_board, dtype=np.int64)
    for c in range(num_hole):
        mine[c] = cards[i, seat * num_hole + c]
        known[mine[c]] = True
    for c in range(n_visible):
        b = cards[i, 2 * num_hole + c]
        mine[num_hole + c] = b
        theirs[num_hole + c] = b
        known[b] = True
    pool = np.empty(deck_size, dtype=np.int64)
    n_pool = 0
    for c in range(deck_size):
        if not known[c]:
            pool[n_pool] = c
            n_pool += 1
    need = num_hole + n_board - n_visible
    score = 0.0
    for _ in range(rollouts):
        for t in range(need):  # partial shuffle of the unseen cards
            j = t + int(uniform(rng) * (n_pool - t))
            tmp = pool[t]
            pool[t] = pool[j]
            pool[j] = tmp
        for c in range(num_hole):
            theirs[c] = pool[c]
        for c in range(n_board - n_visible):
            mine[num_hole + n_visible + c] = pool[num_hole + c]
            theirs[num_hole + n_visible + c] = pool[num_hole + c]
        a = hand_value(mine, num_hole + n_board, card_key, card_bit, rank_table, flush_table)
        b = hand_value(theirs, num_hole + n_board, card_key, card_bit, rank_table, flush_table)
        score += 1.0 if a > b else (0.5 if a == b else 0.0)
    return score / rollouts


@njit(cache=True, nogil=True)
def aware_action(rng: np.ndarray, state, i, stack, step, strength: float) -> tuple[int, int]:
    """Card-aware heuristic: raise with probability 0.9 s^2, fold a bet with 0.5 (1 - s)^2.

    `s` is the hand's Monte Carlo equity against a random hand. At s = 0.5 this is about the
    card-blind player's mix (22% raise, 12% fold); strong hands raise up to 90% and never fold.
    Sizes are the card-blind player's.
    """
    can_fold, call_to, can_raise, lo, hi = legal(state, i, stack)
    u = uniform(rng)
    if can_raise and u < 0.9 * strength * strength:
        return RAISE, heuristic_raise_to(rng, state, i, call_to, lo, hi, step)
    if can_fold and u >= 1.0 - 0.5 * (1.0 - strength) ** 2:
        return FOLD, 0
    return CALL, call_to


# ---------------------------------------------------------------------------------------------
# Batches of tables.


@njit(cache=True, nogil=True)
def deal_tables(
    cards: np.ndarray, rng_state: np.ndarray, seed: int, first_deal: int, deck_size: int, dup: int
) -> None:
    """Deal deal `first_deal + t // dup` to table t (tables of one deal share their cards)."""
    n_cards = cards.shape[1]
    deck = np.empty(deck_size, dtype=np.int64)
    state = np.zeros(1, dtype=np.uint64)
    for t in range(cards.shape[0]):
        deal = first_deal + t // dup
        if t % dup == 0:
            state[0] = stream_seed(seed, deal)
            for c in range(deck_size):
                deck[c] = c
            for c in range(n_cards):
                j = c + int(uniform(state) * (deck_size - c))
                tmp = deck[c]
                deck[c] = deck[j]
                deck[j] = tmp
        for c in range(n_cards):
            cards[t, c] = deck[c]
        # Decision streams differ per table, also between the two plays of a duplicate deal.
        rng_state[t] = mix(
            np.uint64(seed + 0x51ED) * np.uint64(0xD1B54A32D192ED03)
            + np.uint64(first_deal * dup + t)
        )


@njit(cache=True, nogil=True)
def advance(
    state: np.ndarray,
    cards: np.ndarray,
    history: np.ndarray,
    rng_state: np.ndarray,
    seat_kind: np.ndarray,
    stack: np.ndarray,
    blind: np.ndarray,
    first: np.ndarray,
    board_through: np.ndarray,
    num_hole: int,
    deck_size: int,
    step: int,
    card_key: np.ndarray,
    card_bit: np.ndarray,
    rank_table: np.ndarray,
    flush_table: np.ndarray,
    payoff: np.ndarray,
) -> int:
    """Play every table until it ends or waits on an EXTERNAL seat; returns tables waiting.

    `seat_kind[t, s]` is the player kind on seat s of table t. A finished table gets seat 0's
    chips in `payoff[t]`.
    """
    n_board = board_through[board_through.shape[0] - 1]
    scratch = np.empty(num_hole + n_board, dtype=np.int64)
    rng = np.zeros(1, dtype=np.uint64)
    waiting = 0
    for t in range(state.shape[0]):
        if state[t, DONE] == 2:
            continue
        rng[0] = rng_state[t]
        while state[t, DONE] == 0:
            p = state[t, ACTOR]
            kind = seat_kind[t, p]
            if kind == EXTERNAL:
                waiting += 1
                break
            if kind == RANDOM:
                a, to = random_action(rng, state, t, stack, step)
            elif kind == HEURISTIC:
                a, to = heuristic_action(rng, state, t, stack, step)
            else:
                s = equity(
                    rng,
                    cards,
                    t,
                    p,
                    num_hole,
                    board_through[state[t, ROUND]],
                    n_board,
                    deck_size,
                    AWARE_ROLLOUTS,
                    card_key,
                    card_bit,
                    rank_table,
                    flush_table,
                )
                a, to = aware_action(rng, state, t, stack, step, s)
            apply_action(state, t, a, to, history, stack, blind, first)
        rng_state[t] = rng[0]
        if state[t, DONE] == 1:
            payoff[t] = showdown_payoff(
                state,
                t,
                cards,
                num_hole,
                n_board,
                card_key,
                card_bit,
                rank_table,
                flush_table,
                scratch,
            )
            state[t, DONE] = 2
    return waiting


@njit(cache=True, nogil=True)
def start_hands(state: np.ndarray, stack: np.ndarray, blind: np.ndarray, first: np.ndarray):
    """Post the blinds on every table."""
    for t in range(state.shape[0]):
        start_hand(state, t, stack, blind, first)


@njit(cache=True, nogil=True)
def apply_many(state, tables, kinds, raise_to, history, stack, blind, first) -> int:
    """Apply actions to several tables; returns -1, or the first table whose action is illegal."""
    for j in range(tables.shape[0]):
        t = tables[j]
        can_fold, _call, can_raise, lo, hi = legal(state, t, stack)
        k = kinds[j]
        if (
            k < FOLD
            or k > RAISE
            or state[t, DONE] != 0
            or (k == FOLD and not can_fold)
            or (k == RAISE and (not can_raise or raise_to[j] < lo or raise_to[j] > hi))
        ):
            return t
        apply_action(state, t, k, raise_to[j], history, stack, blind, first)
    return -1


@dataclass
class TableBatch:
    """Tables of one game in flight: state, cards, action records, RNG streams, payoffs.

    `seat_player[t, s]` says which of the two players (0 or 1) sits on seat s of table t and
    `seat_kind[t, s]` what kind of player that is.
    """

    rules: Rules
    state: np.ndarray
    cards: np.ndarray
    history: np.ndarray
    rng_state: np.ndarray
    seat_player: np.ndarray
    seat_kind: np.ndarray
    payoff: np.ndarray

    def advance(self) -> int:
        """Run the built-in players; returns how many tables wait on an external seat."""
        r = self.rules
        n_cards = r.game.num_hole_cards + int(r.board_through[-1])
        ev = get_tables(r.game.num_ranks, r.game.num_suits, n_cards)
        return int(
            advance(
                self.state,
                self.cards,
                self.history,
                self.rng_state,
                self.seat_kind,
                r.stack,
                r.blind,
                r.first,
                r.board_through,
                r.game.num_hole_cards,
                r.game.deck_size,
                r.small_blind,
                ev.card_key,
                ev.card_bit,
                ev.rank_table,
                ev.flush_table,
                self.payoff,
            )
        )

    def waiting(self, player: int) -> np.ndarray:
        """Tables whose next move belongs to `player` on an EXTERNAL seat."""
        live = self.state[:, DONE] == 0
        rows = np.arange(self.state.shape[0])
        actor = self.state[:, ACTOR]
        mine = (self.seat_player[rows, actor] == player) & (self.seat_kind[rows, actor] == EXTERNAL)
        return np.flatnonzero(live & mine)

    def apply(self, tables: np.ndarray, kinds: np.ndarray, raise_to: np.ndarray) -> None:
        """Apply one chosen action per listed table; an illegal one raises NoLimitError."""
        r = self.rules
        tables = np.asarray(tables)
        if len(tables) != len(kinds) or len(tables) != len(raise_to):
            raise NoLimitError("apply: tables, kinds and raise_to differ in length")
        if len(tables) and (tables.min() < 0 or tables.max() >= self.state.shape[0]):
            raise NoLimitError(f"apply: table index outside 0..{self.state.shape[0] - 1}")
        bad = apply_many(
            self.state,
            np.ascontiguousarray(tables, dtype=np.int64),
            np.ascontiguousarray(kinds, dtype=np.int64),
            np.ascontiguousarray(raise_to, dtype=np.int64),
            self.history,
            r.stack,
            r.blind,
            r.first,
        )
        if bad >= 0:
            raise NoLimitError(f"illegal action on table {bad}")

    def records(self) -> tuple[np.ndarray, np.ndarray]:
        """(actions per table, the concatenated `(round, seat, type, spent_after)` records)."""
        counts = self.state[:, N_ACTS].copy()
        mask = np.arange(self.history.shape[1])[None, :] < counts[:, None]
        return counts, self.history[mask]


def new_batch(
    rules: Rules,
    n_deals: int,
    seed: int,
    first_deal: int,
    kinds: tuple[int, int],
    duplicate: bool = True,
) -> TableBatch:
    """Tables for deals first_deal.. of a seeded deck, player 0 on seat 0 first.

    With `duplicate`, each deal is played twice with the players' seats swapped (same cards per
    seat), so luck of the deal cancels between the two plays.
    """
    dup = 2 if duplicate else 1
    n = n_deals * dup
    state = np.zeros((n, STATE_WIDTH), dtype=np.int64)
    cards = np.zeros((n, rules.n_cards), dtype=np.int64)
    history = np.zeros((n, rules.max_actions, 4), dtype=np.int32)
    rng_state = np.zeros(n, dtype=np.uint64)
    seat_player = np.zeros((n, 2), dtype=np.int64)
    seat_player[:, 1] = 1
    if duplicate:
        seat_player[1::2] = seat_player[1::2, ::-1]
    seat_kind = np.asarray(kinds, dtype=np.int64)[seat_player]
    deal_tables(cards, rng_state, seed, first_deal, rules.game.deck_size, dup)
    start_hands(state, rules.stack, rules.blind, rules.first)
    return TableBatch(
        rules, state, cards, history, rng_state, seat_player, seat_kind, np.zeros(n, np.int64)
    )


# ---------------------------------------------------------------------------------------------
# Matches.


class ExternalPlayer(Protocol):
    """A player chosen outside the kernels (the CNN): actions for the listed waiting tables."""

    def choose(self, batch: TableBatch, tables: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(action kinds, raise-to sizes), one per table."""
        ...


Player = int | ExternalPlayer  # a built-in kind, or an external player


@dataclass
class HandRecords:
    """Finished hands: cards per table row, who sat where, the action records, seat 0's chips."""

    cards: np.ndarray  # int8 [H, n_cards]: seat 0 hole, seat 1 hole, board
    seat_player: np.ndarray  # int8 [H, 2]: which of the two players sat on each seat
    counts: np.ndarray  # int64 [H]: actions per hand
    actions: np.ndarray  # int32 [A, 4]: (round, seat, type, spent_after)
    payoff: np.ndarray  # int64 [H]: chips won by seat 0

    def player_payoff(self) -> np.ndarray:
        """Chips won by player 0 (whichever seat it held) per hand."""
        return np.where(self.seat_player[:, 0] == 0, self.payoff, -self.payoff)

    @staticmethod
    def concat(parts: list[HandRecords]) -> HandRecords:
        """Join record sets in order."""
        return HandRecords(*(np.concatenate([getattr(p, f) for p in parts]) for f in _FIELDS))


_FIELDS = ("cards", "seat_player", "counts", "actions", "payoff")


def _finished(batch: TableBatch) -> HandRecords:
    counts, actions = batch.records()
    return HandRecords(
        batch.cards.astype(np.int8),
        batch.seat_player.astype(np.int8),
        counts,
        actions,
        batch.payoff.copy(),
    )


def _play_batch(
    rules: Rules,
    players: tuple[Player, Player],
    n_deals: int,
    seed: int,
    first_deal: int,
    duplicate: bool,
) -> HandRecords:
    kinds = tuple(p if isinstance(p, int) else EXTERNAL for p in players)
    batch = new_batch(rules, n_deals, seed, first_deal, (kinds[0], kinds[1]), duplicate)
    while batch.advance():
        for index, player in enumerate(players):
            if isinstance(player, int):
                continue
            tables = batch.waiting(index)
            if len(tables):
                kind, raise_to = player.choose(batch, tables)
                batch.apply(tables, kind, raise_to)
    return _finished(batch)


Deals = Numbered  # deals first..first + count - 1 of a seed (a deal depends on its number only)


def play(
    rules: Rules,
    players: tuple[Player, Player],
    deals: Deals,
    duplicate: bool = True,
    batch_deals: int = 4096,
    n_threads: int = 1,
    on_hands: Callable[[int], None] | None = None,
) -> HandRecords:
    """Play `deals` between two players; records in deal order.

    Results depend only on the seed and deal numbers, never on batching or threads. Built-in
    pairings run on `n_threads` threads (the kernels release the GIL).
    """
    n_deals, seed, first_deal = deals.count, deals.seed, deals.first
    starts = list(range(first_deal, first_deal + n_deals, batch_deals))

    def work(start: int) -> HandRecords:
        size = min(batch_deals, first_deal + n_deals - start)
        out = _play_batch(rules, players, size, seed, start, duplicate)
        if on_hands is not None:
            on_hands(len(out.payoff))
        return out

    builtin = all(isinstance(p, int) for p in players)
    if builtin and n_threads > 1 and len(starts) > 1:
        with ThreadPoolExecutor(max_workers=n_threads) as pool:
            parts = list(pool.map(work, starts))
    else:
        parts = [work(s) for s in starts]
    return HandRecords.concat(parts)
