"""Hand Strength Distributions: histograms of final-round HS over every way to finish the board.

For a hand seen before the last round, every completion of the board is enumerated; each
completed hand's HS is looked up (never re-evaluated) through the isomorphism index of
(hole, unordered board) in a table of exact counts ``2*wins + ties``; the histogram counts how
many completions fall in each of `bins` equal-width HS bins on [0, 1] (HS = 1 in the top bin).
Bin arithmetic is integer-exact: bin = min(count * bins // denominator, bins - 1).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

import numpy as np
from numba import njit

from gameforge.engines.poker.hand_strength import _remaining_cards
from gameforge.engines.poker.isomorphism import index_hand


def completions(num_remaining: int, num_missing: int) -> np.ndarray:
    """Positions (into the remaining cards) of every set of `num_missing` board cards."""
    if num_missing == 0:
        return np.zeros((1, 0), dtype=np.int8)
    combos = np.array(list(combinations(range(num_remaining), num_missing)), dtype=np.int8)
    return combos.reshape(-1, num_missing)


@njit(cache=True, nogil=True, inline="always")
def completion_indices(
    hand: np.ndarray,
    deck_size: int,
    combos: np.ndarray,
    blob: np.ndarray,
    rnd: int,
    row: np.ndarray,
    out: np.ndarray,
) -> None:
    """out[c] = canonical index of `hand` completed by the remaining cards at `combos[c]`
    (-1 where it cannot be indexed); `row` is scratch of the completed hand's size."""
    n_seen = hand.shape[0]
    remaining = _remaining_cards(hand, deck_size)
    row[:n_seen] = hand
    for c in range(combos.shape[0]):
        for t in range(combos.shape[1]):
            row[n_seen + t] = remaining[combos[c, t]]
        out[c] = index_hand(row, rnd, blob)


@njit(cache=True, nogil=True)
def _hsd(
    hands: np.ndarray,
    num_hole: int,
    deck_size: int,
    combos: np.ndarray,
    blob: np.ndarray,
    rnd: int,
    hs_counts: np.ndarray,
    denominator: int,
    out: np.ndarray,
) -> int:
    bins = out.shape[1]
    row = np.empty(hands.shape[1] + combos.shape[1], dtype=np.int8)
    indices = np.empty(combos.shape[0], dtype=np.int64)
    bad = 0
    for h in range(hands.shape[0]):
        completion_indices(hands[h], deck_size, combos, blob, rnd, row, indices)
        for j in range(bins):
            out[h, j] = 0
        for idx in indices:
            if idx < 0:
                bad += 1
                continue
            b = np.int64(hs_counts[idx]) * bins // denominator
            if b >= bins:
                b = bins - 1
            out[h, b] += 1
    return bad


@dataclass(frozen=True)
class RiverTable:
    """The river HS lookup: the (hole, unordered board) indexer's tables `blob` and last round
    `round_`, the exact counts ``2*wins + ties`` it indexes, and their `denominator` (2 *
    opponent hands)."""

    blob: np.ndarray
    round_: int
    hs_counts: np.ndarray
    denominator: int


def hsd_counts(
    hands: np.ndarray,
    num_hole: int,
    deck_size: int,
    num_missing: int,
    river: RiverTable,
    bins: int,
    dtype: np.dtype,
) -> np.ndarray:
    """HSD counts (n, bins) of hands (rows: hole cards then the board seen so far).

    Each completion's HS is looked up in `river`.
    """
    hands = np.ascontiguousarray(hands, dtype=np.int8)
    combos = completions(deck_size - hands.shape[1], num_missing)
    out = np.empty((hands.shape[0], bins), dtype=dtype)
    bad = _hsd(hands, num_hole, deck_size, combos, river.blob, river.round_, river.hs_counts,
               river.denominator, out)  # fmt: skip
    if bad:
        raise ValueError(f"{bad} completed hands could not be indexed")
    return out
