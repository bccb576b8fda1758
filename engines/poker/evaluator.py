"""Fast poker hand evaluator for decks of 1..13 ranks and 1..4 suits, 1..7 cards per hand.

A hand value is an int32, higher is better, comparable between hands with the same number of
cards: ``(category << 20) | kickers`` where the kickers are up to five 4-bit rank nibbles in
significance order (bits 16, 12, 8, 4, 0). With five or more cards the value is that of the best
five; with fewer, the categories that fewer cards can make (high card, pair, two pair, trips,
quads). A straight is five consecutive ranks; the ace-low wheel A2345 counts only when the deck
has all 13 ranks, i.e. its top rank is the ace (in a short deck the "ace" is absent, so the lowest
rank is never also high).

Evaluation is a few table lookups. Each card has a packed key (``card_key``): a rank key in the low
32 bits, chosen so that the sums over any rank multiset of the same size <= 7 (<= 4 per rank)
are distinct, plus a 4-bit counter per suit at bit ``32 + 4 * suit``; and a bit (``card_bit``) at
``16 * suit + rank``. A hand's key is the sum of its cards' keys and its mask the OR of their
bits. When a suit counter reaches 5 the hand is a flush and ``flush_table`` maps that suit's
13-bit rank mask to its value; otherwise ``rank_table`` (one per hand size) maps the rank key.
Because both are plain sums, a caller can sum a board once and add hole cards incrementally
(see :func:`value_from_packed`).

The rank keys of 7-card hands reach 7.8 million but only 49,205 occur, so a direct table would
be 31 MB of mostly empty, cache-missing lookups. ``rank_table`` is instead a row-displacement
perfect hash in a single int32 array: its first entries hold one offset per block of
``2**ROW_SHIFT`` keys, and a key's value sits at ``rank_table[rank_table[key >> ROW_SHIFT] +
(key & ROW_MASK)]`` (about 104k entries for 7 cards, 0.4 MB, which stays in L2 cache).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations_with_replacement
from typing import NamedTuple

import numpy as np
from numba import njit

CATEGORY_NAMES = (
    "high card",
    "pair",
    "two pair",
    "three of a kind",
    "straight",
    "flush",
    "full house",
    "four of a kind",
    "straight flush",
)
HIGH_CARD, PAIR, TWO_PAIR, TRIPS, STRAIGHT, FLUSH, FULL_HOUSE, QUADS, STRAIGHT_FLUSH = range(9)
CATEGORY_SHIFT = 20
MAX_CARDS = 7
MAX_RANKS = 13
MAX_SUITS = 4

# Greedy rank keys (the same as SKPokerEval's): each is the smallest integer above the previous
# one that keeps all rank-multiset sums of each size <= 7 (<= 4 per rank) distinct.
# tests/test_evaluator.py verifies the uniqueness and reruns the greedy search.
RANK_KEYS = np.array(
    [0, 1, 5, 22, 98, 453, 2031, 8698, 22854, 83661, 262349, 636345, 1479181], dtype=np.int64
)
SUIT_SHIFT = 32  # suit counters live above the 32-bit rank key
RANK_KEY_MASK = 0xFFFFFFFF
FLUSH_PROBE = 0x3333  # adding 3 to a counter sets its bit 3 exactly when it holds 5..7 cards
FLUSH_FLAGS = 0x8888
SUIT_BITS = 16  # card_bit reserves 16 bits per suit, of which the low 13 are ranks
RANK_MASK = 0x1FFF
ROW_SHIFT = 9  # rank-key block size of the displacement hash; 8..10 give the smallest tables
ROW_MASK = (1 << ROW_SHIFT) - 1

# Batch evaluation indexes padded per-card tables with the raw byte of the card id, so any int8
# input is in bounds; invalid ids carry this bit, and a duplicate makes the bit sum differ from
# the OR, so one comparison per hand detects both.
_INVALID_BIT = np.int64(-(2**63))
_PAD = 256


class EvalTables(NamedTuple):
    """Lookup tables for one deck shape and hand size (see the module docstring).

    Numba kernels may take it as an argument, but should copy its fields into locals before
    their loops: reading the fields inside a hot loop ran ~4x slower (numba 0.68).
    """

    card_key: np.ndarray  # int64 (num_ranks * num_suits,)
    card_bit: np.ndarray  # int64 (num_ranks * num_suits,)
    rank_table: np.ndarray  # int32, row offsets then hashed values (see the module docstring)
    flush_table: np.ndarray  # int32 (8192,), indexed by one suit's rank mask


# ---------------------------------------------------------------------------------------------
# Reference evaluator, used only to fill the tables.


@njit(cache=True, nogil=True)
def _add_kickers(value: int, pos: int, counts: np.ndarray, skip1: int, skip2: int, n: int) -> int:
    """Append the n highest present ranks other than skip1/skip2 as nibbles from slot pos."""
    r = counts.shape[0] - 1
    while n > 0 and r >= 0:
        if counts[r] > 0 and r != skip1 and r != skip2:
            value |= r << (16 - 4 * pos)
            pos += 1
            n -= 1
        r -= 1
    return value


@njit(cache=True, nogil=True)
def _straight_top(present: int, num_ranks: int) -> int:
    """Top rank of the best straight in a rank bitmask, or -1 (wheel only with an ace)."""
    for top in range(num_ranks - 1, 3, -1):
        if (present >> (top - 4)) & 0x1F == 0x1F:
            return top
    if num_ranks == MAX_RANKS and present & 0x100F == 0x100F:
        return 3
    return -1


@njit(cache=True, nogil=True)
def _counts_value(counts: np.ndarray) -> int:
    """Value of a hand with no flush from its rank counts (length = num_ranks)."""
    num_ranks = counts.shape[0]
    n = 0
    present = 0
    quad = trip1 = trip2 = pair1 = pair2 = -1
    for r in range(num_ranks - 1, -1, -1):
        c = counts[r]
        n += c
        if c > 0:
            present |= 1 << r
        if c >= 4:
            quad = r
        elif c == 3:
            if trip1 < 0:
                trip1 = r
            elif trip2 < 0:
                trip2 = r
        elif c == 2:
            if pair1 < 0:
                pair1 = r
            elif pair2 < 0:
                pair2 = r
    size = min(n, 5)  # cards that make up the hand
    if quad >= 0:
        value = (QUADS << CATEGORY_SHIFT) | (quad << 16)
        return _add_kickers(value, 1, counts, quad, -1, size - 4)
    if trip1 >= 0 and (trip2 >= 0 or pair1 >= 0):
        return (FULL_HOUSE << CATEGORY_SHIFT) | (trip1 << 16) | (max(trip2, pair1) << 12)
    if n >= 5:
        top = _straight_top(present, num_ranks)
        if top >= 0:
            return (STRAIGHT << CATEGORY_SHIFT) | (top << 16)
    if trip1 >= 0:
        value = (TRIPS << CATEGORY_SHIFT) | (trip1 << 16)
        return _add_kickers(value, 1, counts, trip1, -1, size - 3)
    if pair2 >= 0:
        value = (TWO_PAIR << CATEGORY_SHIFT) | (pair1 << 16) | (pair2 << 12)
        return _add_kickers(value, 2, counts, pair1, pair2, size - 4)
    if pair1 >= 0:
        value = (PAIR << CATEGORY_SHIFT) | (pair1 << 16)
        return _add_kickers(value, 1, counts, pair1, -1, size - 2)
    return _add_kickers(HIGH_CARD << CATEGORY_SHIFT, 0, counts, -1, -1, size)


@njit(cache=True, nogil=True)
def _fill_flush_table(table: np.ndarray, num_ranks: int) -> None:
    """Value of every suited rank mask with at least five ranks (others stay 0)."""
    for mask in range(table.shape[0]):
        bits = 0
        for r in range(num_ranks):
            bits += (mask >> r) & 1
        if bits < 5 or mask >> num_ranks:
            continue
        top = _straight_top(mask, num_ranks)
        if top >= 0:
            table[mask] = (STRAIGHT_FLUSH << CATEGORY_SHIFT) | (top << 16)
            continue
        value = FLUSH << CATEGORY_SHIFT
        pos = 0
        r = num_ranks - 1
        while pos < 5:
            if (mask >> r) & 1:
                value |= r << (16 - 4 * pos)
                pos += 1
            r -= 1
        table[mask] = value


@njit(cache=True, nogil=True)
def _rank_keys_and_values(combos: np.ndarray, num_ranks: int) -> tuple[np.ndarray, np.ndarray]:
    """Rank-key sum and value of every rank multiset (rows of combos)."""
    keys = np.empty(combos.shape[0], np.int64)
    values = np.empty(combos.shape[0], np.int32)
    counts = np.zeros(num_ranks, np.int64)
    for i in range(combos.shape[0]):
        counts[:] = 0
        key = 0
        for j in range(combos.shape[1]):
            counts[combos[i, j]] += 1
            key += RANK_KEYS[combos[i, j]]
        keys[i] = key
        values[i] = _counts_value(counts)
    return keys, values


@njit(cache=True, nogil=True)
def _window(taken: np.ndarray, pos: int) -> np.uint64:
    """64 bits of the bitset taken starting at bit pos."""
    word = pos >> 6
    bit = np.uint64(pos & 63)
    low = taken[word] >> bit
    if bit:
        low |= taken[word + 1] << (np.uint64(64) - bit)
    return low


@njit(cache=True, nogil=True)
def _place_rows(cols: np.ndarray, start: np.ndarray, placement: np.ndarray) -> np.ndarray:
    """Per-row offsets making offset + col distinct over all keys, placed first-fit."""
    # Row r holds the sorted cols[start[r]:start[r + 1]]. Each step tests 64 candidate offsets
    # at once against a bitset of taken slots, which keeps the 7-card build near 0.15 s.
    taken = np.zeros((2 * cols.shape[0] + 4 * (ROW_MASK + 1)) // 64, np.uint64)
    full = ~np.uint64(0)
    offsets = np.zeros(start.shape[0] - 1, np.int64)
    first_free = 0
    for r in placement:
        if start[r] == start[r + 1]:
            continue
        d = max(first_free - cols[start[r]], 0)
        while True:
            if (d + ROW_MASK + 130) // 64 > taken.shape[0]:
                grown = np.zeros(2 * taken.shape[0], np.uint64)
                grown[: taken.shape[0]] = taken
                taken = grown
            clash = np.uint64(0)  # bit j set: offset d + j puts some key on a taken slot
            for i in range(start[r], start[r + 1]):
                clash |= _window(taken, d + cols[i])
            if clash != full:
                while clash & np.uint64(1):
                    clash >>= np.uint64(1)
                    d += 1
                break
            d += 64
        offsets[r] = d
        for i in range(start[r], start[r + 1]):
            slot = d + cols[i]
            taken[slot >> 6] |= np.uint64(1) << np.uint64(slot & 63)
        while (taken[first_free >> 6] >> np.uint64(first_free & 63)) & np.uint64(1):
            first_free += 1
    return offsets


def _hash_table(keys: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Row-displacement perfect hash of distinct keys -> values, as one int32 array."""
    order = np.argsort(keys)
    keys, values = keys[order], values[order]
    rows, cols = keys >> ROW_SHIFT, keys & ROW_MASK
    n_rows = int(rows[-1]) + 1
    start = np.searchsorted(rows, np.arange(n_rows + 1))
    # First-fit decreasing: the fullest rows are the hardest to fit, so they go first.
    placement = np.argsort(-np.diff(start), kind="stable")
    offsets = _place_rows(cols, start, placement)
    # Pad so that any key up to the largest reads in bounds, even one absent from the table.
    table = np.zeros(n_rows + int(offsets.max()) + ROW_MASK + 1, np.int32)
    table[:n_rows] = offsets + n_rows  # offsets point past the offset block
    table[n_rows + offsets[rows] + cols] = values
    return table


# ---------------------------------------------------------------------------------------------
# Tables.

_TABLES: dict[tuple[int, int, int], EvalTables] = {}
_PADDED: dict[tuple[int, int], tuple[np.ndarray, np.ndarray]] = {}


def _check_deck(num_ranks: int, num_suits: int) -> None:
    if not 1 <= num_ranks <= MAX_RANKS:
        raise ValueError(f"num_ranks must be in 1..{MAX_RANKS}, got {num_ranks}")
    if not 1 <= num_suits <= MAX_SUITS:
        raise ValueError(f"num_suits must be in 1..{MAX_SUITS}, got {num_suits}")


def _check_size(n_cards: int, num_ranks: int, num_suits: int) -> None:
    if not 1 <= n_cards <= min(MAX_CARDS, num_ranks * num_suits):
        raise ValueError(
            f"hands must have 1..{min(MAX_CARDS, num_ranks * num_suits)} cards in a deck of "
            f"{num_ranks} ranks x {num_suits} suits, got {n_cards}"
        )


def _card_tables(num_ranks: int, num_suits: int) -> tuple[np.ndarray, np.ndarray]:
    card = np.arange(num_ranks * num_suits, dtype=np.int64)
    rank, suit = card // num_suits, card % num_suits
    card_key = RANK_KEYS[rank] + (np.int64(1) << (SUIT_SHIFT + 4 * suit))
    card_bit = np.int64(1) << (SUIT_BITS * suit + rank)
    return card_key, card_bit


def get_tables(num_ranks: int = 13, num_suits: int = 4, n_cards: int = 7) -> EvalTables:
    """Lookup tables for hands of n_cards from a num_ranks x num_suits deck (built once, cached)."""
    key = (num_ranks, num_suits, n_cards)
    tables = _TABLES.get(key)
    if tables is not None:
        return tables
    _check_deck(num_ranks, num_suits)
    _check_size(n_cards, num_ranks, num_suits)
    card_key, card_bit = _card_tables(num_ranks, num_suits)
    per_rank = min(4, num_suits)
    combos = np.array(
        [
            c
            for c in combinations_with_replacement(range(num_ranks), n_cards)
            if max(c.count(r) for r in c) <= per_rank
        ],
        dtype=np.int64,
    ).reshape(-1, n_cards)
    keys, values = _rank_keys_and_values(combos, num_ranks)
    if np.unique(keys).shape[0] != keys.shape[0]:
        raise AssertionError("RANK_KEYS sums collide")  # cheap guard on the hard-coded keys
    rank_table = _hash_table(keys, values)
    flush_table = np.zeros(1 << MAX_RANKS, dtype=np.int32)
    if n_cards >= 5:
        _fill_flush_table(flush_table, num_ranks)
    for array in (card_key, card_bit, rank_table, flush_table):
        array.flags.writeable = False  # shared through the cache
    tables = EvalTables(card_key, card_bit, rank_table, flush_table)
    _TABLES[key] = tables
    return tables


def _padded_card_tables(num_ranks: int, num_suits: int) -> tuple[np.ndarray, np.ndarray]:
    """card_key/card_bit extended to all 256 byte values; invalid ids get _INVALID_BIT."""
    tables = _PADDED.get((num_ranks, num_suits))
    if tables is None:
        card_key, card_bit = _card_tables(num_ranks, num_suits)
        key = np.zeros(_PAD, dtype=np.int64)
        bit = np.full(_PAD, _INVALID_BIT, dtype=np.int64)
        key[: card_key.shape[0]] = card_key
        bit[: card_bit.shape[0]] = card_bit
        tables = _PADDED[(num_ranks, num_suits)] = (key, bit)
    return tables


# ---------------------------------------------------------------------------------------------
# Kernels.


@njit(cache=True, nogil=True)
def value_from_packed(
    key_sum: int | np.integer,
    bit_or: int | np.integer,
    rank_table: np.ndarray,
    flush_table: np.ndarray,
) -> np.int32:
    """Hand value from the sum of its cards' card_key and the OR of their card_bit."""
    # The tables must be those for this hand size: other sums are not checked.
    flags = ((key_sum >> SUIT_SHIFT) + FLUSH_PROBE) & FLUSH_FLAGS
    # Branch-free: both lookups always run and a select picks one, since a data-dependent
    # flush branch mispredicts (river boards with 3-4 suited cards) and blocks overlapping
    # the loads of consecutive hands; this is 2-4x faster than branching. At most one suit
    # can hold five of <= 7 cards, so at most one flag bit (3 + 4 * suit) is set.
    flag = flags >> 3
    shift = ((flag >> 4) & 1) * SUIT_BITS + ((flag >> 8) & 1) * (2 * SUIT_BITS)
    shift += ((flag >> 12) & 1) * (3 * SUIT_BITS)
    flush_value = flush_table[(bit_or >> shift) & RANK_MASK]
    key = key_sum & RANK_KEY_MASK
    rank_value = rank_table[rank_table[key >> ROW_SHIFT] + (key & ROW_MASK)]
    return flush_value if flags != 0 else rank_value


@njit(cache=True, nogil=True)
def hand_value(
    cards: np.ndarray,
    n: int,
    card_key: np.ndarray,
    card_bit: np.ndarray,
    rank_table: np.ndarray,
    flush_table: np.ndarray,
) -> int:
    """Showdown value of the first n cards."""
    key = np.int64(0)
    bit_or = np.int64(0)
    for t in range(n):
        key += card_key[cards[t]]
        bit_or |= card_bit[cards[t]]
    return int(value_from_packed(key, bit_or, rank_table, flush_table))


@njit(cache=True, nogil=True)
def _evaluate_batch(
    cards: np.ndarray,
    card_key: np.ndarray,
    card_bit: np.ndarray,
    rank_table: np.ndarray,
    flush_table: np.ndarray,
    out: np.ndarray,
) -> int:
    """Fill out with hand values; returns the number of invalid hands (marked -1)."""
    n_cards = cards.shape[1]
    bad = 0
    for i in range(cards.shape[0]):
        key = np.int64(0)
        bit_or = np.int64(0)
        bit_sum = np.int64(0)
        for j in range(n_cards):
            c = cards[i, j]
            key += card_key[c]
            b = card_bit[c]
            bit_or |= b
            bit_sum += b
        if bit_or != bit_sum or bit_or < 0:
            out[i] = -1
            bad += 1
        else:
            out[i] = value_from_packed(key, bit_or, rank_table, flush_table)
    return bad


# ---------------------------------------------------------------------------------------------
# Public API.


def evaluate(cards: np.ndarray, num_ranks: int = 13, num_suits: int = 4) -> np.ndarray:
    """Values (int32) of hands given as an (n_hands, n_cards) array of card ids."""
    cards = np.asarray(cards)
    if cards.ndim != 2:
        raise ValueError(f"cards must be a 2-D (n_hands, n_cards) array, got shape {cards.shape}")
    if cards.dtype.kind not in "iu":
        raise ValueError(f"cards must hold integer card ids, got dtype {cards.dtype}")
    _check_deck(num_ranks, num_suits)
    n_hands, n_cards = cards.shape
    _check_size(n_cards, num_ranks, num_suits)
    deck_size = num_ranks * num_suits
    if cards.dtype.itemsize != 1:
        # Wider ints may not fit a byte; range-check them before narrowing.
        if n_hands and (cards.min() < 0 or cards.max() >= deck_size):
            i = int(np.flatnonzero(((cards < 0) | (cards >= deck_size)).any(axis=1))[0])
            raise ValueError(
                f"hand {i} {cards[i].tolist()}: card ids must be in 0..{deck_size - 1}"
            )
        cards = cards.astype(np.int8)
    # The raw byte indexes the 256-entry padded tables: negative int8 ids land on invalid slots.
    card_bytes = np.ascontiguousarray(cards).view(np.uint8)
    tables = get_tables(num_ranks, num_suits, n_cards)
    card_key, card_bit = _padded_card_tables(num_ranks, num_suits)
    out = np.empty(n_hands, dtype=np.int32)
    bad = _evaluate_batch(
        card_bytes, card_key, card_bit, tables.rank_table, tables.flush_table, out
    )
    if bad:
        i = int(np.flatnonzero(out < 0)[0])
        raise ValueError(
            f"{bad} invalid hand(s), first hand {i} {np.asarray(cards[i]).tolist()}: card ids "
            f"must be distinct within a hand and in 0..{deck_size - 1}"
        )
    return out


def evaluate_one(cards: Sequence[int], num_ranks: int = 13, num_suits: int = 4) -> int:
    """Value of one hand given as a sequence of 1..7 distinct card ids."""
    ids = [int(c) for c in cards]
    _check_deck(num_ranks, num_suits)
    _check_size(len(ids), num_ranks, num_suits)
    deck_size = num_ranks * num_suits
    for c in ids:
        if not 0 <= c < deck_size:
            raise ValueError(f"card id {c} out of range 0..{deck_size - 1} in {ids}")
    if len(set(ids)) != len(ids):
        raise ValueError(f"duplicate card in {ids}")
    tables = get_tables(num_ranks, num_suits, len(ids))
    key = int(tables.card_key[ids].sum())
    bit_or = int(np.bitwise_or.reduce(tables.card_bit[ids]))
    return int(value_from_packed(key, bit_or, tables.rank_table, tables.flush_table))


def category_of(values: np.ndarray | int) -> np.ndarray:
    """Category index (see CATEGORY_NAMES) of each hand value."""
    return np.asarray(values) >> CATEGORY_SHIFT


@njit(cache=True, nogil=True)
def _category_counts_7card(
    card_key: np.ndarray, card_bit: np.ndarray, rank_table: np.ndarray, flush_table: np.ndarray
) -> np.ndarray:
    """Count categories over all 7-card hands, summing keys incrementally down the loops."""
    n = card_key.shape[0]
    counts = np.zeros(9, np.int64)
    for a in range(n - 6):
        ka, ba = card_key[a], card_bit[a]
        for b in range(a + 1, n - 5):
            kb, bb = ka + card_key[b], ba | card_bit[b]
            for c in range(b + 1, n - 4):
                kc, bc = kb + card_key[c], bb | card_bit[c]
                for d in range(c + 1, n - 3):
                    kd, bd = kc + card_key[d], bc | card_bit[d]
                    for e in range(d + 1, n - 2):
                        ke, be = kd + card_key[e], bd | card_bit[e]
                        for f in range(e + 1, n - 1):
                            kf, bf = ke + card_key[f], be | card_bit[f]
                            for g in range(f + 1, n):
                                v = value_from_packed(
                                    kf + card_key[g], bf | card_bit[g], rank_table, flush_table
                                )
                                counts[v >> CATEGORY_SHIFT] += 1
    return counts


def category_counts_7card(num_ranks: int = 13, num_suits: int = 4) -> np.ndarray:
    """Category counts (int64, 9) over every 7-card hand of the deck (133,784,560 for 52 cards)."""
    tables = get_tables(num_ranks, num_suits, 7)
    return _category_counts_7card(
        tables.card_key, tables.card_bit, tables.rank_table, tables.flush_table
    )
