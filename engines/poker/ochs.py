"""Opponent Cluster Hand Strength: last-round HS against each cluster of opponent hole cards.

Per board, the same sort-and-sweep as river HS, with the per-card counters kept per opponent
cluster: for a hand and cluster c, wins (ties) count the opponent hands of cluster c with a lower
(equal) value that share no card with the hand. The denominator — cluster c's opponent hands
consistent with the hand and the board — follows from the same counters at the end of the sweep.
A cluster with no consistent opponent hand gets OCHS 0.5 (no information either way).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from gameforge.engines.poker.evaluator import EvalTables
from gameforge.engines.poker.hand_strength import (
    _POS_BITS,
    _remaining_cards,
    equal_value_end,
    hole_combinations,
    sorted_hand_values,
)

EMPTY_CLUSTER_VALUE = 0.5


@njit(cache=True, nogil=True)
def _boards_ochs(
    boards: np.ndarray,
    deck_size: int,
    combos: np.ndarray,
    hole_cluster: np.ndarray,
    k: int,
    ev: EvalTables,
    out: np.ndarray,
) -> None:
    n_combo, num_hole = combos.shape
    mask = (np.int64(1) << _POS_BITS) - 1
    for b in range(boards.shape[0]):
        board = boards[b]
        remaining = _remaining_cards(board, deck_size)
        n_rem = remaining.shape[0]
        cluster = np.empty(n_combo, dtype=np.int64)
        for p in range(n_combo):
            code = 0
            for t in range(num_hole):
                code = code * deck_size + remaining[combos[p, t]]
            cluster[p] = hole_cluster[code]
        packed = sorted_hand_values(board, remaining, combos, ev)
        below_total = np.zeros(k, dtype=np.int64)
        below_card = np.zeros((k, n_rem), dtype=np.int64)
        group_total = np.zeros(k, dtype=np.int64)
        group_card = np.zeros((k, n_rem), dtype=np.int64)
        score = np.zeros((n_combo, k), dtype=np.int64)  # 2*wins + ties per cluster
        g = 0
        while g < n_combo:
            e = equal_value_end(packed, g)
            for s in range(g, e):
                p = packed[s] & mask
                group_total[cluster[p]] += 1
                for t in range(num_hole):
                    group_card[cluster[p], combos[p, t]] += 1
            for s in range(g, e):
                p = packed[s] & mask
                for c in range(k):
                    wins = below_total[c]
                    ties = group_total[c]
                    for t in range(num_hole):
                        wins -= below_card[c, combos[p, t]]
                        ties -= group_card[c, combos[p, t]]
                    if c == cluster[p]:
                        ties += num_hole - 1  # the hand itself was removed once per hole card
                    score[p, c] = 2 * wins + ties
            for s in range(g, e):
                p = packed[s] & mask
                below_total[cluster[p]] += 1
                group_total[cluster[p]] = 0
                for t in range(num_hole):
                    below_card[cluster[p], combos[p, t]] += 1
                    group_card[cluster[p], combos[p, t]] = 0
            g = e
        for p in range(n_combo):
            for c in range(k):
                denominator = below_total[c]
                for t in range(num_hole):
                    denominator -= below_card[c, combos[p, t]]
                if c == cluster[p]:
                    denominator += num_hole - 1
                if denominator > 0:
                    out[b, p, c] = score[p, c] / (2.0 * denominator)
                else:
                    out[b, p, c] = EMPTY_CLUSTER_VALUE


def board_ochs(
    boards: np.ndarray,
    deck_size: int,
    num_hole: int,
    hole_cluster: np.ndarray,
    k: int,
    tables: EvalTables,
) -> np.ndarray:
    """OCHS (n_boards, hole combinations in colex order, k) as float64 in [0, 1].

    `hole_cluster[code]` is the opponent cluster of a hole-card set, with code = c0 for one hole
    card and c0 * deck_size + c1 (c0 < c1) for two.
    """
    boards = np.ascontiguousarray(boards, dtype=np.int8)
    combos = hole_combinations(deck_size - boards.shape[1], num_hole)
    out = np.empty((boards.shape[0], combos.shape[0], k), dtype=np.float64)
    hole_cluster = np.ascontiguousarray(hole_cluster, dtype=np.int64)
    _boards_ochs(boards, deck_size, combos, hole_cluster, k, tables, out)
    return out
