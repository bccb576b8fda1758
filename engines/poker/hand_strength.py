"""River hand strength by sort-and-sweep over all hole combinations of one board.

For a board, every hole combination of the remaining cards is evaluated once (board key summed
once, hole cards added incrementally), the values are sorted, and one sweep over groups of equal
value counts, for each hand, the opponent hands it beats and ties — with card removal handled by
inclusion-exclusion on per-card counters. Cost per board is O(P log P) for P hole combinations,
instead of the O(P^2) of comparing hands pairwise.

Results are integer counts ``2 * wins + ties`` (exact, fits uint16 for every ACPC deck), so
HS = count / (2 * opponent_hands).
"""

from __future__ import annotations

from math import comb

import numpy as np
from numba import njit

from gameforge.engines.poker.evaluator import EvalTables, value_from_packed
from gameforge.engines.poker.isomorphism import index_hand

_POS_BITS = 20  # hole-combination position packed below the hand value when sorting


def hole_combinations(num_remaining: int, num_hole: int) -> np.ndarray:
    """Positions (into the remaining cards) of every hole combination, in colex order."""
    if num_hole == 1:
        return np.arange(num_remaining, dtype=np.int32).reshape(-1, 1)
    if num_hole == 2:
        pairs = [(i, j) for j in range(num_remaining) for i in range(j)]
        return np.array(pairs, dtype=np.int32).reshape(-1, 2)
    raise ValueError(f"hand strength supports 1 or 2 hole cards, not {num_hole}")


def opponent_hands(deck_size: int, num_board: int, num_hole: int) -> int:
    """Opponent hole combinations consistent with one's own hole cards and the board."""
    return comb(deck_size - num_board - num_hole, num_hole)


@njit(cache=True, nogil=True)
def _remaining_cards(board: np.ndarray, deck_size: int) -> np.ndarray:
    used = np.zeros(deck_size, dtype=np.bool_)
    for c in board:
        used[c] = True
    out = np.empty(deck_size - board.shape[0], dtype=np.int8)
    k = 0
    for c in range(deck_size):
        if not used[c]:
            out[k] = c
            k += 1
    return out


@njit(cache=True, nogil=True)
def sorted_hand_values(
    board: np.ndarray, remaining: np.ndarray, combos: np.ndarray, ev: EvalTables
) -> np.ndarray:
    """Every hole combination's hand value packed as ``value << _POS_BITS | position``, sorted.

    The board's key is summed once and each combination's hole cards added incrementally.
    """
    card_key, card_bit, rank_table, flush_table = ev
    n_combo, num_hole = combos.shape
    key_b = np.int64(0)
    bit_b = np.int64(0)
    for c in board:
        key_b += card_key[c]
        bit_b |= card_bit[c]
    packed = np.empty(n_combo, dtype=np.int64)
    for p in range(n_combo):
        key = key_b
        bit = bit_b
        for t in range(num_hole):
            c = remaining[combos[p, t]]
            key += card_key[c]
            bit |= card_bit[c]
        value = value_from_packed(key, bit, rank_table, flush_table)
        packed[p] = (np.int64(value) << _POS_BITS) | p
    packed.sort()
    return packed


@njit(cache=True, nogil=True, inline="always")
def equal_value_end(packed: np.ndarray, g: int) -> int:
    """One past the last of the hands from `g` on that share its value in `packed` (sorted
    `sorted_hand_values`): the sweep handles each group of equal value at once."""
    value = packed[g] >> _POS_BITS
    e = g + 1
    while e < packed.shape[0] and (packed[e] >> _POS_BITS) == value:
        e += 1
    return e


@njit(cache=True, nogil=True)
def _board_counts(
    board: np.ndarray, deck_size: int, combos: np.ndarray, ev: EvalTables, out: np.ndarray
) -> None:
    remaining = _remaining_cards(board, deck_size)
    n_rem = remaining.shape[0]
    n_combo, num_hole = combos.shape
    packed = sorted_hand_values(board, remaining, combos, ev)
    mask = (np.int64(1) << _POS_BITS) - 1
    below_card = np.zeros(n_rem, dtype=np.int32)
    group_card = np.zeros(n_rem, dtype=np.int32)
    below_total = 0
    g = 0
    while g < n_combo:
        e = equal_value_end(packed, g)
        for s in range(g, e):
            p = packed[s] & mask
            for t in range(num_hole):
                group_card[combos[p, t]] += 1
        size = e - g
        for s in range(g, e):
            p = packed[s] & mask
            wins = below_total
            ties = size
            for t in range(num_hole):
                wins -= below_card[combos[p, t]]
                ties -= group_card[combos[p, t]]
            # Inclusion-exclusion: with two hole cards the hand itself was removed twice from the
            # tie count; no lower-valued hand holds both of its cards (only the hand itself does).
            ties += num_hole - 1
            out[p] = 2 * wins + ties
        for s in range(g, e):
            p = packed[s] & mask
            for t in range(num_hole):
                below_card[combos[p, t]] += 1
                group_card[combos[p, t]] = 0
        below_total += size
        g = e


@njit(cache=True, nogil=True)
def _boards_counts(
    boards: np.ndarray, deck_size: int, combos: np.ndarray, ev: EvalTables, out: np.ndarray
) -> None:
    for b in range(boards.shape[0]):
        _board_counts(boards[b], deck_size, combos, ev, out[b])


def board_hs_counts(
    boards: np.ndarray, deck_size: int, num_hole: int, tables: EvalTables
) -> np.ndarray:
    """``2*wins + ties`` of every hole combination (colex order) on each board; (n, P) uint16.

    `tables` must be the evaluator tables for hands of ``num_hole + boards.shape[1]`` cards.
    """
    boards = np.ascontiguousarray(boards, dtype=np.int8)
    if boards.ndim != 2:
        raise ValueError("boards must be a 2-D array (n_boards, board_cards)")
    combos = hole_combinations(deck_size - boards.shape[1], num_hole)
    out = np.empty((boards.shape[0], combos.shape[0]), dtype=np.uint16)
    _boards_counts(boards, deck_size, combos, tables, out)
    return out


@njit(cache=True, nogil=True)
def _hands_on_boards(
    boards: np.ndarray, deck_size: int, combos: np.ndarray, out: np.ndarray
) -> None:
    n_board = boards.shape[1]
    num_hole = combos.shape[1]
    n_combo = combos.shape[0]
    for b in range(boards.shape[0]):
        remaining = _remaining_cards(boards[b], deck_size)
        for p in range(n_combo):
            row = b * n_combo + p
            for t in range(num_hole):
                out[row, t] = remaining[combos[p, t]]
            for t in range(n_board):
                out[row, num_hole + t] = boards[b, t]


def hands_on_boards(boards: np.ndarray, deck_size: int, num_hole: int) -> np.ndarray:
    """Rows (hole..., board...) for every hole combination of every board, matching the counts."""
    boards = np.ascontiguousarray(boards, dtype=np.int8)
    combos = hole_combinations(deck_size - boards.shape[1], num_hole)
    out = np.empty((boards.shape[0] * combos.shape[0], num_hole + boards.shape[1]), np.int8)
    _hands_on_boards(boards, deck_size, combos, out)
    return out


@njit(cache=True, nogil=True)
def _scatter(
    boards: np.ndarray,
    values: np.ndarray,
    deck_size: int,
    combos: np.ndarray,
    rnd: int,
    blob: np.ndarray,
    out: np.ndarray,
) -> int:
    n_board = boards.shape[1]
    num_hole = combos.shape[1]
    row = np.empty(num_hole + n_board, dtype=np.int8)
    bad = 0
    for b in range(boards.shape[0]):
        remaining = _remaining_cards(boards[b], deck_size)
        for t in range(n_board):
            row[num_hole + t] = boards[b, t]
        for p in range(combos.shape[0]):
            for t in range(num_hole):
                row[t] = remaining[combos[p, t]]
            idx = index_hand(row, rnd, blob)
            if idx < 0:
                bad += 1
            else:
                out[idx] = values[b, p]
    return bad


def scatter_to_hands(
    boards: np.ndarray,
    values: np.ndarray,
    deck_size: int,
    num_hole: int,
    blob: np.ndarray,
    rnd: int,
    out: np.ndarray,
) -> None:
    """Write each board's per-hole values into `out` at the hands' isomorphism indices.

    `values` is (boards, hole combinations, ...) and `out` (hands, ...) with the same trailing
    shape; `blob`/`rnd` are the tables and last round of the (hole, board) indexer. Boards with
    suit symmetry reach some classes more than once, always with equal values, so concurrent
    calls on disjoint board ranges may share `out`.
    """
    boards = np.ascontiguousarray(boards, dtype=np.int8)
    combos = hole_combinations(deck_size - boards.shape[1], num_hole)
    values = np.ascontiguousarray(values)
    if values.ndim == 2:  # one value per hand: give both a trailing axis of length 1
        values, out = values[:, :, None], out.reshape(-1, 1)
    bad = _scatter(boards, values, deck_size, combos, rnd, blob, out)
    if bad:
        raise ValueError(f"{bad} hands could not be indexed (repeated or invalid cards)")
