"""The CNN paper's input: 33 planes of 13x4 (ranks x suits), zero-padded to 17x17.

Every plane is a 13-row (rank, deuce first) by 4-column (suit, `cdhs`) matrix placed in the middle
of a 17x17 zero plane (rows 2..14, columns 6..9). Plane by plane:

====  ========================================================================================
0-1   the player's hole cards, one card per plane (in dealt order)
2-4   the flop (three cards), the turn, the river, each once dealt
5     every card the player sees
6     the pot (both players' chips in), thermometer-coded in small blinds
7-9   the round, as constant planes: plane 7 + i is all ones when the round is past i (preflop
      all zero, river all ones)
10    position: all ones when this player acts first in the current round
11-15 the current round's last five actions, most recent first: a constant plane of 1/3 for a
      fold, 2/3 for a check/call, 1 for a bet/raise; zero where the round has fewer actions
16-20 the chips those actions put in, thermometer-coded
21-25 the previous round's last five actions, coded as planes 11-15
26-30 their chips
31    the candidate action's type (coded as planes 11-15)
32    the chips the candidate puts in, thermometer-coded
====  ========================================================================================

Thermometer code: an amount of n small blinds (rounded down) fills the first min(n, 52) cells
in reading order: 1 SB sets the top-left cell, 4 SB the first rank row of four suits (the
paper's drawing is 4x13, where this is its first column), 52 SB or more the whole matrix.

With `canonical_suits` (the paper's first future-work item) suits are relabelled in order of
first appearance: hole cards by descending rank, then the board in dealt order. Isomorphic
hands (same ranks, same suit pattern) then encode identically.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

N_PLANES = 33
SIZE = 17
ROW0, COL0 = 2, 6
THERMO_CELLS = 52
HOLE, BOARD, VISIBLE, POT, ROUND, POSITION = 0, 2, 5, 6, 7, 10
CUR_TYPE, CUR_AMOUNT, PREV_TYPE, PREV_AMOUNT = 11, 16, 21, 26
CAND_TYPE, CAND_AMOUNT = 31, 32
HISTORY = 5


class StateEncoding(NamedTuple):
    """The game's constants that `encode_state` needs, and whether suits are canonical, as the
    one argument every encoding kernel takes (`Rules.encoding` builds it)."""

    num_hole: int
    num_suits: int
    board_through: np.ndarray
    first: np.ndarray
    blind: np.ndarray
    small_blind: int
    canonical: bool


@njit(cache=True, nogil=True, inline="always")
def thermo_count(chips: int, small_blind: int) -> int:
    """Cells a thermometer fills for `chips`."""
    return min(max(chips, 0) // small_blind, THERMO_CELLS)


@njit(cache=True, nogil=True)
def _thermo(out: np.ndarray, plane: int, chips: int, small_blind: int) -> None:
    for c in range(thermo_count(chips, small_blind)):
        out[plane, ROW0 + c // 4, COL0 + c % 4] = 1.0


@njit(cache=True, nogil=True)
def _fill(out: np.ndarray, plane: int, value: float) -> None:
    for r in range(13):
        for c in range(4):
            out[plane, ROW0 + r, COL0 + c] = value


@njit(cache=True, nogil=True)
def _card(out: np.ndarray, plane: int, card: int, num_suits: int, suit_map: np.ndarray) -> None:
    out[plane, ROW0 + card // num_suits, COL0 + suit_map[card % num_suits]] = 1.0


@njit(cache=True, nogil=True)
def suit_relabelling(
    cards: np.ndarray, num_hole: int, seat: int, n_board: int, num_suits: int, canonical: bool
) -> np.ndarray:
    """suit -> plane column: the identity, or the first-appearance order (see module doc)."""
    out = np.arange(4)
    if not canonical:
        return out
    out[:] = -1
    seen = np.empty(num_hole + n_board, dtype=np.int64)
    n = 0
    hole = np.empty(num_hole, dtype=np.int64)
    for c in range(num_hole):
        hole[c] = cards[seat * num_hole + c]
    order = np.argsort(-(hole // num_suits) * 8 + hole % num_suits, kind="mergesort")
    for c in range(num_hole):
        seen[n] = hole[order[c]]
        n += 1
    for c in range(n_board):
        seen[n] = cards[2 * num_hole + c]
        n += 1
    nxt = 0
    for c in range(n):
        s = seen[c] % num_suits
        if out[s] < 0:
            out[s] = nxt
            nxt += 1
    for s in range(4):
        if out[s] < 0:
            out[s] = nxt
            nxt += 1
    return out


@njit(cache=True, nogil=True)
def encode_state(
    out: np.ndarray,
    cards: np.ndarray,
    seat: int,
    actions: np.ndarray,
    k: int,
    rnd: int,
    enc: StateEncoding,
) -> None:
    """Planes 0-30 for `seat` to act in round `rnd` after the first k of `actions`.

    `cards` is the table's row (seat 0 hole, seat 1 hole, board); `actions` rows are
    `(round, seat, type, spent_after)`. `out` must be zero on entry.
    """
    num_hole, num_suits, board_through, first, blind, small_blind, canonical = enc
    n_board = board_through[rnd]
    suit_map = suit_relabelling(cards, num_hole, seat, n_board, num_suits, canonical)
    for c in range(num_hole):
        _card(out, HOLE + min(c, 1), cards[seat * num_hole + c], num_suits, suit_map)
        _card(out, VISIBLE, cards[seat * num_hole + c], num_suits, suit_map)
    start = 0
    for r in range(rnd + 1):
        stop = board_through[r]
        for c in range(start, stop):
            _card(out, BOARD + min(r - 1, 2), cards[2 * num_hole + c], num_suits, suit_map)
            _card(out, VISIBLE, cards[2 * num_hole + c], num_suits, suit_map)
        start = stop
    spent0 = blind[0]
    spent1 = blind[1]
    added = np.empty(max(k, 1), dtype=np.int64)
    for a in range(k):
        after = actions[a, 3]
        if actions[a, 1] == 0:
            added[a] = after - spent0
            spent0 = after
        else:
            added[a] = after - spent1
            spent1 = after
    _thermo(out, POT, spent0 + spent1, small_blind)
    for i in range(min(rnd, 3)):
        _fill(out, ROUND + i, 1.0)
    if first[rnd] == seat:
        _fill(out, POSITION, 1.0)
    cur = 0
    prev = 0
    for a in range(k - 1, -1, -1):
        r = actions[a, 0]
        if r == rnd and cur < HISTORY:
            _fill(out, CUR_TYPE + cur, (actions[a, 2] + 1) / 3.0)
            _thermo(out, CUR_AMOUNT + cur, added[a], small_blind)
            cur += 1
        elif r == rnd - 1 and prev < HISTORY:
            _fill(out, PREV_TYPE + prev, (actions[a, 2] + 1) / 3.0)
            _thermo(out, PREV_AMOUNT + prev, added[a], small_blind)
            prev += 1
        elif r < rnd - 1:
            break


@njit(cache=True, nogil=True)
def encode_candidate(out: np.ndarray, kind: int, chips: int, small_blind: int) -> None:
    """Planes 31-32: the candidate action and the chips it puts in (planes must be zero)."""
    _fill(out, CAND_TYPE, (kind + 1) / 3.0)
    _thermo(out, CAND_AMOUNT, chips, small_blind)


@njit(cache=True, nogil=True)
def encode_samples(
    out: np.ndarray,
    sample: np.ndarray,
    action_hand: np.ndarray,
    hand_start: np.ndarray,
    cards: np.ndarray,
    actions: np.ndarray,
    enc: StateEncoding,
) -> None:
    """Encode recorded actions `sample` (global action indices) with themselves as candidates."""
    blind, small_blind = enc.blind, enc.small_blind
    out[:] = 0.0
    for b in range(sample.shape[0]):
        j = sample[b]
        h = action_hand[j]
        base = hand_start[h]
        k = j - base
        seat = actions[j, 1]
        acts = actions[base : j + 1]
        encode_state(out[b], cards[h], seat, acts, k, actions[j, 0], enc)
        before = blind[seat]
        for a in range(k - 1, -1, -1):
            if acts[a, 1] == seat:
                before = acts[a, 3]
                break
        encode_candidate(out[b], actions[j, 2], actions[j, 3] - before, small_blind)
