"""Lossless, optimal hand isomorphism indexing (after Waugh, 2013), with numba batch kernels.

A hand is dealt in rounds (``cards_per_round``, e.g. ``(2, 3, 1, 1)`` for Hold'em): cards within a
round are unordered, rounds are ordered, and two hands are isomorphic when a permutation of the
suits maps one onto the other round by round. :class:`HandIndexer` numbers the classes after each
round ``0 .. size(round) - 1`` with no gaps, and maps an index back to a canonical representative.

How an index is built:

* per suit, the ranks it receives in each round; its count vector ``(m_0, .., m_r)`` is the suit's
  *configuration*, numbered by the mixed-radix ``raw`` id of ``(c_k - m_k)`` (round 0 most
  significant), so ascending ``raw`` means more cards in early rounds;
* the suit's index is the mixed radix (round 0 least significant) of per-round colex indices,
  where round ``k``'s ranks are renumbered after removing those the suit received earlier;
* suits are sorted by ``(raw, suit index)``; suits of equal configuration form a group whose
  indices are ranked as a multiset (colex of combinations with repetition), which is what makes
  the suit permutations vanish;
* the hand's configuration (the sorted ``raw`` ids) is found in a small hash table giving its
  offset; the index is that offset plus the mixed radix of the group ranks.

Numba use: ``HandIndexer.tables`` is an :class:`IsoTables` named tuple of numpy arrays. Another
``@njit`` kernel can index one hand with ``index_hand(cards_row, rnd, tables)`` (``cards_row`` a
1-D integer array holding the cards of rounds ``0..rnd``; returns the int64 index, or -1 for a
hand with repeated cards) and decode one with ``unindex_hand(index, rnd, tables, out_row)``
(writes the canonical hand into ``out_row``; returns False for an index out of range). Neither
checks card ids: the caller keeps them in ``0 .. num_ranks * num_suits - 1``.

Cards use the conventions of :mod:`engines.cards`: id ``rank * num_suits + suit``.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import product
from math import comb, prod
from typing import NamedTuple

import numpy as np
from numba import njit, types
from numba.extending import intrinsic

from engines.cards import MAX_RANKS, MAX_SUITS

__all__ = [
    "HandIndexer",
    "IsoTables",
    "build_tables",
    "count_classes",
    "index_hand",
    "unindex_hand",
]

# Each suit owns a 16-bit lane of one int64 rank mask, so one OR per card builds all suit masks.
_LANE_BITS = 16
_LANE_MASK = (1 << _LANE_BITS) - 1
# Suits are sorted on one int64: (raw configuration id << 33) | suit index; 13! < 2**33.
_IDX_BITS = 33
_IDX_MASK = (1 << _IDX_BITS) - 1
# Kernels are written for 4 suit lanes; fewer suits leave lanes empty, which changes nothing.
_LANES = 4
_MAX_RAW = 1 << 15  # raw ids per round, so that a 4-lane configuration key fits in int64
_MAX_SIZE = 1 << 60  # keeps intermediate products of the multiset binomials inside int64
_HASH_MUL = 0x9E3779B97F4A7C15  # Fibonacci hashing multiplier
_HASH_MUL_I64 = _HASH_MUL - (1 << 64)  # the same bits as a signed int64 for the kernels
_U64 = (1 << 64) - 1


class IsoTables(NamedTuple):
    """Precomputed tables of one indexer; every field is a numpy array (R = rounds)."""

    meta: np.ndarray  # int64[4]: num_ranks, num_suits, num_cards, rounds
    cards_per_round: np.ndarray  # int64[R]
    round_start: np.ndarray  # int64[R + 1]: first column of each round
    sizes: np.ndarray  # int64[R]: classes after each round
    num_raw: np.ndarray  # int64[R]: number of raw configuration ids per suit after each round
    card_bit: np.ndarray  # int64[cards]: 1 << (16 * suit + rank)
    card_below: np.ndarray  # int64[cards]: lane bits of the same suit with lower ranks
    card_rank: np.ndarray  # int64[cards]
    card_shift: np.ndarray  # int64[cards]: 16 * suit
    ncr: np.ndarray  # int64[14, 14]: binomial coefficients
    suit_size: np.ndarray  # int64[R, P]: suit hands of each raw configuration id
    raw_stride: np.ndarray  # int64[R, R]: place value of round k's digit in a round-r raw id
    hash_keys: np.ndarray  # int64[R, H]: configuration keys, -1 where empty
    hash_vals: np.ndarray  # int64[R, H]: offset of the configuration
    hash_bits: np.ndarray  # int64[R]: log2 of the hash table size used in each round
    cfg_count: np.ndarray  # int64[R]: configurations per round
    cfg_offset: np.ndarray  # int64[R, C]: ascending offsets, in configuration order
    cfg_raw: np.ndarray  # int64[R, C, S]: sorted raw ids of each configuration
    cfg_pos: np.ndarray  # int64[R, C, S, R]: first output column of suit j's cards in round k


# ---------------------------------------------------------------------------------------------
# Pure-Python enumeration (no numba): configurations and class counts.


def _check_game(
    cards_per_round: Sequence[int], num_ranks: int, num_suits: int
) -> tuple[int, ...]:
    cpr = tuple(int(c) for c in cards_per_round)
    if not cpr:
        raise ValueError("cards_per_round must name at least one round")
    if any(c < 1 for c in cpr):
        raise ValueError(f"cards_per_round {cpr}: every round must deal at least one card")
    if not 1 <= num_ranks <= MAX_RANKS:
        raise ValueError(f"num_ranks must be in 1..{MAX_RANKS}, not {num_ranks}")
    if not 1 <= num_suits <= MAX_SUITS:
        raise ValueError(f"num_suits must be in 1..{MAX_SUITS}, not {num_suits}")
    if sum(cpr) > num_ranks * num_suits:
        raise ValueError(
            f"cards_per_round {cpr} deals {sum(cpr)} cards from a deck of {num_ranks * num_suits}"
        )
    return cpr


def _raw_id(vec: Sequence[int], cpr: Sequence[int]) -> int:
    raw = 0
    for m, c in zip(vec, cpr, strict=True):
        raw = raw * (c + 1) + (c - m)
    return raw


def _suit_hands(vec: Sequence[int], num_ranks: int) -> int:
    """Number of ways one suit can receive the per-round rank counts ``vec``."""
    total, used = 1, 0
    for m in vec:
        total *= comb(num_ranks - used, m)
        used += m
    return total


def _suit_vectors(cpr: tuple[int, ...], num_ranks: int) -> list[tuple[int, ...]]:
    """Feasible per-suit count vectors in ascending raw-id order."""
    ranges = [range(min(c, num_ranks), -1, -1) for c in cpr]
    return [v for v in product(*ranges) if sum(v) <= num_ranks]


def _configurations(cpr: tuple[int, ...], num_ranks: int, num_suits: int) -> list[list[int]]:
    """Every hand configuration as a list of positions into ``_suit_vectors``, ascending."""
    vecs = _suit_vectors(cpr, num_ranks)
    position = {v: i for i, v in enumerate(vecs)}
    found: list[list[int]] = []

    def extend(start: int, rem: tuple[int, ...], chosen: list[int]) -> None:
        left = num_suits - len(chosen)
        if left == 1:
            # The last suit takes whatever is left; it must still sort after the others.
            last = position.get(rem, -1)
            if last >= start:
                found.append([*chosen, last])
            return
        room = (left - 1) * num_ranks
        total = sum(rem)
        for i in range(start, len(vecs)):
            v = vecs[i]
            if total - sum(v) <= room and all(a <= b for a, b in zip(v, rem, strict=True)):
                extend(i, tuple(b - a for a, b in zip(v, rem, strict=True)), [*chosen, i])

    extend(0, cpr, [])
    return found


def _group_sizes(sizes: Sequence[int]) -> int:
    """Classes of one configuration: product over runs of equal suits of C(M + g - 1, g)."""
    total, i = 1, 0
    while i < len(sizes):
        g = 1
        while i + g < len(sizes) and sizes[i + g] == sizes[i] and g >= 1:
            g += 1
        total *= comb(sizes[i] + g - 1, g)
        i += g
    return total


def _round_configs(
    cpr: tuple[int, ...], num_ranks: int, num_suits: int
) -> tuple[list[tuple[int, ...]], list[list[int]], list[int]]:
    """(suit vectors, configurations as vector positions, class count of each configuration)."""
    vecs = _suit_vectors(cpr, num_ranks)
    suit_sizes = [_suit_hands(v, num_ranks) for v in vecs]
    configs = _configurations(cpr, num_ranks, num_suits)
    counts = []
    for cfg in configs:
        total, i = 1, 0
        while i < len(cfg):
            g = 1
            while i + g < len(cfg) and cfg[i + g] == cfg[i]:
                g += 1
            total *= comb(suit_sizes[cfg[i]] + g - 1, g)
            i += g
        counts.append(total)
    return vecs, configs, counts


def count_classes(
    cards_per_round: Sequence[int], num_ranks: int = 13, num_suits: int = 4
) -> list[int]:
    """Number of isomorphism classes after each round, computed in pure Python (exact ints)."""
    cpr = _check_game(cards_per_round, num_ranks, num_suits)
    return [sum(_round_configs(cpr[: r + 1], num_ranks, num_suits)[2]) for r in range(len(cpr))]


def _hash_slot(key: int, bits: int) -> int:
    return ((key * _HASH_MUL) & _U64) >> (64 - bits)


def build_tables(
    cards_per_round: Sequence[int], num_ranks: int = 13, num_suits: int = 4
) -> IsoTables:
    """Build the numpy tables the kernels use (pure Python/numpy; compiles nothing)."""
    cpr = _check_game(cards_per_round, num_ranks, num_suits)
    rounds = len(cpr)
    num_cards = num_ranks * num_suits
    num_raw = [prod(c + 1 for c in cpr[: r + 1]) for r in range(rounds)]
    if num_raw[-1] > _MAX_RAW:
        raise ValueError(f"cards_per_round {cpr}: too many rounds or cards per round to index")

    per_round = [_round_configs(cpr[: r + 1], num_ranks, num_suits) for r in range(rounds)]
    sizes = [sum(counts) for _, _, counts in per_round]
    if sizes[-1] >= _MAX_SIZE:
        raise ValueError(f"cards_per_round {cpr}: {sizes[-1]} classes is too many to index")

    ranks = np.arange(num_cards, dtype=np.int64) // num_suits
    suits = np.arange(num_cards, dtype=np.int64) % num_suits
    shift = suits * _LANE_BITS
    ncr = np.array([[comb(n, k) for k in range(MAX_RANKS + 1)] for n in range(MAX_RANKS + 1)])

    max_cfg = max(len(cfgs) for _, cfgs, _ in per_round)
    hash_bits = [max(4, (4 * len(cfgs) - 1).bit_length()) for _, cfgs, _ in per_round]
    hash_size = 1 << max(hash_bits)
    suit_size = np.zeros((rounds, num_raw[-1]), dtype=np.int64)
    raw_stride = np.zeros((rounds, rounds), dtype=np.int64)
    hash_keys = np.full((rounds, hash_size), -1, dtype=np.int64)
    hash_vals = np.zeros((rounds, hash_size), dtype=np.int64)
    cfg_offset = np.full((rounds, max_cfg), np.iinfo(np.int64).max, dtype=np.int64)
    cfg_raw = np.zeros((rounds, max_cfg, num_suits), dtype=np.int64)
    cfg_pos = np.zeros((rounds, max_cfg, num_suits, rounds), dtype=np.int64)
    round_start = np.concatenate([[0], np.cumsum(cpr)]).astype(np.int64)

    for r, (vecs, cfgs, counts) in enumerate(per_round):
        sub = cpr[: r + 1]
        raws = [_raw_id(v, sub) for v in vecs]
        for v, raw in zip(vecs, raws, strict=True):
            suit_size[r, raw] = _suit_hands(v, num_ranks)
        stride = 1
        for k in range(r, -1, -1):
            raw_stride[r, k] = stride
            stride *= cpr[k] + 1
        bits, p = hash_bits[r], num_raw[r]
        mask = (1 << bits) - 1
        offset = 0
        for c, (cfg, count) in enumerate(zip(cfgs, counts, strict=True)):
            cfg_raws = [raws[i] for i in cfg]
            key = 0
            for raw in cfg_raws + [p - 1] * (_LANES - num_suits):
                key = key * p + raw
            slot = _hash_slot(key, bits)
            while hash_keys[r, slot] >= 0:
                slot = (slot + 1) & mask
            hash_keys[r, slot] = key
            hash_vals[r, slot] = offset
            cfg_offset[r, c] = offset
            cfg_raw[r, c] = cfg_raws
            column = list(round_start[: r + 1])
            for j, i in enumerate(cfg):
                for k in range(r + 1):
                    cfg_pos[r, c, j, k] = column[k]
                    column[k] += vecs[i][k]
            offset += count

    def i64(values: Sequence[int]) -> np.ndarray:
        return np.asarray(values, dtype=np.int64)

    return IsoTables(
        meta=i64([num_ranks, num_suits, num_cards, rounds]),
        cards_per_round=i64(cpr),
        round_start=round_start,
        sizes=i64(sizes),
        num_raw=i64(num_raw),
        card_bit=np.left_shift(1, shift + ranks).astype(np.int64),
        card_below=(np.left_shift(1, ranks) - 1) << shift,
        card_rank=ranks,
        card_shift=shift,
        ncr=ncr.astype(np.int64),
        suit_size=suit_size,
        raw_stride=raw_stride,
        hash_keys=hash_keys,
        hash_vals=hash_vals,
        hash_bits=i64(hash_bits),
        cfg_count=i64([len(cfgs) for _, cfgs, _ in per_round]),
        cfg_offset=cfg_offset,
        cfg_raw=cfg_raw,
        cfg_pos=cfg_pos,
    )


# ---------------------------------------------------------------------------------------------
# Numba kernels.


@intrinsic
def _popcount(typingctx, x):  # type: ignore[no-untyped-def]
    """Population count of an integer as int64 (LLVM ctpop: one instruction)."""
    if not isinstance(x, types.Integer):
        return None
    sig = types.int64(x)

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        value = context.cast(builder, args[0], signature.args[0], types.int64)
        return builder.ctpop(value)

    return sig, codegen


@njit(cache=True, nogil=True, inline="always")
def _binom_small(n, k):  # type: ignore[no-untyped-def]
    """C(n, k) for k <= 4 with constant divisors; each step stays below k * C(n, k)."""
    if k == 0:
        return 1
    if n < k:
        return 0
    c = n
    if k >= 2:
        c = (c * (n - 1)) >> 1
    if k >= 3:
        c = c * (n - 2) // 3
    if k >= 4:
        c = (c * (n - 3)) >> 2
    return c


@njit(cache=True, nogil=True, inline="always")
def _lane(idx, mult, raw, col, rmask, used, shift, nk, num_ranks, ncr):  # type: ignore[no-untyped-def]
    """Fold one round into one suit's (index, radix, raw configuration id)."""
    m = _popcount((rmask >> shift) & _LANE_MASK)
    u = _popcount((used >> shift) & _LANE_MASK)
    idx += ((col >> shift) & _LANE_MASK) * mult
    mult *= ncr[num_ranks - u, m]
    raw = raw * (nk + 1) + (nk - m)
    return idx, mult, raw


@njit(cache=True, nogil=True, inline="always")
def _group_step(key, rnd, suit_size, total, gmul, gacc, gpos, graw, gsize):  # type: ignore[no-untyped-def]
    """Add one sorted suit to the running multiset rank of its group of equal configurations."""
    raw = key >> _IDX_BITS
    x = key & _IDX_MASK
    if raw == graw:
        gpos += 1
    else:
        total += gacc * gmul
        gmul *= _binom_small(gsize + gpos - 1, gpos)
        gpos = 1
        gacc = 0
        graw = raw
        gsize = suit_size[rnd, raw]
    gacc += _binom_small(x + gpos - 1, gpos)
    return total, gmul, gacc, gpos, graw, gsize


@njit(cache=True, nogil=True)
def index_hand(cards, rnd, t):  # type: ignore[no-untyped-def]
    """Index of one hand (cards of rounds 0..rnd) in round rnd; -1 if a card repeats."""
    cpr = t.cards_per_round
    ncr = t.ncr
    card_bit = t.card_bit
    card_below = t.card_below
    card_rank = t.card_rank
    card_shift = t.card_shift
    num_ranks = t.meta[0]
    used = 0
    i0 = i1 = i2 = i3 = 0
    m0 = m1 = m2 = m3 = 1
    r0 = r1 = r2 = r3 = 0
    pos = 0
    for k in range(rnd + 1):
        nk = cpr[k]
        end = pos + nk
        rmask = 0
        for j in range(pos, end):
            rmask |= card_bit[cards[j]]
        # Per card: its colex term C(rank among unused ranks, rank within this round's set);
        # the terms of all suits add up in their own 16-bit lanes (each lane stays < C(13, 6)).
        col = 0
        for j in range(pos, end):
            c = cards[j]
            below = card_below[c]
            x = card_rank[c] - _popcount(used & below)
            p = _popcount(rmask & below) + 1
            col += ncr[x, p] << card_shift[c]
        i0, m0, r0 = _lane(i0, m0, r0, col, rmask, used, 0, nk, num_ranks, ncr)
        i1, m1, r1 = _lane(i1, m1, r1, col, rmask, used, 16, nk, num_ranks, ncr)
        i2, m2, r2 = _lane(i2, m2, r2, col, rmask, used, 32, nk, num_ranks, ncr)
        i3, m3, r3 = _lane(i3, m3, r3, col, rmask, used, 48, nk, num_ranks, ncr)
        used |= rmask
        pos = end
    if pos != _popcount(used):
        return -1  # a card repeats
    k0 = (r0 << _IDX_BITS) | i0
    k1 = (r1 << _IDX_BITS) | i1
    k2 = (r2 << _IDX_BITS) | i2
    k3 = (r3 << _IDX_BITS) | i3
    # Sorting network for 4 keys; min/max compile to branch-free selects.
    k0, k1 = min(k0, k1), max(k0, k1)
    k2, k3 = min(k2, k3), max(k2, k3)
    k0, k2 = min(k0, k2), max(k0, k2)
    k1, k3 = min(k1, k3), max(k1, k3)
    k1, k2 = min(k1, k2), max(k1, k2)
    p = t.num_raw[rnd]
    key = (((k0 >> _IDX_BITS) * p + (k1 >> _IDX_BITS)) * p + (k2 >> _IDX_BITS)) * p + (
        k3 >> _IDX_BITS
    )
    bits = t.hash_bits[rnd]
    mask = (1 << bits) - 1
    slot = ((key * _HASH_MUL_I64) >> (64 - bits)) & mask
    hash_keys = t.hash_keys[rnd]
    while hash_keys[slot] != key:
        if hash_keys[slot] < 0:
            return -1
        slot = (slot + 1) & mask
    offset = t.hash_vals[rnd, slot]
    suit_size = t.suit_size
    total, gmul, gacc, gpos, graw, gsize = 0, 1, 0, 0, -1, 1
    total, gmul, gacc, gpos, graw, gsize = _group_step(
        k0, rnd, suit_size, total, gmul, gacc, gpos, graw, gsize
    )
    total, gmul, gacc, gpos, graw, gsize = _group_step(
        k1, rnd, suit_size, total, gmul, gacc, gpos, graw, gsize
    )
    total, gmul, gacc, gpos, graw, gsize = _group_step(
        k2, rnd, suit_size, total, gmul, gacc, gpos, graw, gsize
    )
    total, gmul, gacc, gpos, graw, gsize = _group_step(
        k3, rnd, suit_size, total, gmul, gacc, gpos, graw, gsize
    )
    return offset + total + gacc * gmul


@njit(cache=True, nogil=True)
def _largest_binom_le(v, i, hi):  # type: ignore[no-untyped-def]
    """Largest y in [i - 1, hi] with C(y, i) <= v (i <= 4), by bisection."""
    if i == 1:
        return v
    lo = i - 1
    while lo < hi:
        mid = (lo + hi + 1) >> 1
        if _binom_small(mid, i) <= v:
            lo = mid
        else:
            hi = mid - 1
    return lo


@njit(cache=True, nogil=True)
def _write_suit(x, raw, suit, rnd, t, pos, out):  # type: ignore[no-untyped-def]
    """Decode one suit's index into its cards, written at columns pos[k] of each round k."""
    num_ranks = t.meta[0]
    num_suits = t.meta[1]
    cpr = t.cards_per_round
    ncr = t.ncr
    used = 0
    for k in range(rnd + 1):
        nk = cpr[k]
        m = nk - (raw // t.raw_stride[rnd, k]) % (nk + 1)
        if m == 0:
            continue
        avail = num_ranks - _popcount(used)
        radix = ncr[avail, m]
        col = x % radix
        x //= radix
        column = pos[k]
        taken = 0
        a = avail - 1
        for i in range(m, 0, -1):
            while ncr[a, i] > col:
                a -= 1
            col -= ncr[a, i]
            # The a-th (0-based) rank this suit has not used in earlier rounds.
            seen = -1
            rank = -1
            while seen < a:
                rank += 1
                if not (used >> rank) & 1:
                    seen += 1
            out[column] = rank * num_suits + suit
            column += 1
            taken |= 1 << rank
            a -= 1
        used |= taken


@njit(cache=True, nogil=True)
def unindex_hand(index, rnd, t, out):  # type: ignore[no-untyped-def]
    """Write the canonical hand of ``index`` (round rnd) into out; False if out of range."""
    if index < 0 or index >= t.sizes[rnd]:
        return False
    num_suits = t.meta[1]
    offsets = t.cfg_offset[rnd]
    lo = 0
    hi = t.cfg_count[rnd] - 1
    while lo < hi:
        mid = (lo + hi + 1) >> 1
        if offsets[mid] <= index:
            lo = mid
        else:
            hi = mid - 1
    rem = index - offsets[lo]
    raws = t.cfg_raw[rnd, lo]
    pos = t.cfg_pos[rnd, lo]
    j = 0
    while j < num_suits:
        raw = raws[j]
        g = 1
        while j + g < num_suits and raws[j + g] == raw:
            g += 1
        m = t.suit_size[rnd, raw]
        gsize = _binom_small(m + g - 1, g)
        gval = rem % gsize
        rem //= gsize
        # Multiset colex unrank: the largest element first; suit j + i - 1 gets the i-th.
        for i in range(g, 0, -1):
            y = _largest_binom_le(gval, i, m + i - 2)
            gval -= _binom_small(y, i)
            _write_suit(y - (i - 1), raw, j + i - 1, rnd, t, pos[j + i - 1], out)
        j += g
    rs = t.round_start
    for k in range(rnd + 1):
        for a in range(rs[k] + 1, rs[k + 1]):  # insertion sort: rounds hold a few cards
            v = out[a]
            b = a - 1
            while b >= rs[k] and out[b] > v:
                out[b + 1] = out[b]
                b -= 1
            out[b + 1] = v
    return True


@njit(cache=True, nogil=True)
def _index_batch(cards, rnd, t, out):  # type: ignore[no-untyped-def]
    """Index every row; returns the first row with a card id out of range, else -1."""
    num_cards = t.meta[2]
    width = cards.shape[1]
    for i in range(cards.shape[0]):
        row = cards[i]
        for j in range(width):
            if row[j] < 0 or row[j] >= num_cards:
                return i
        out[i] = index_hand(row, rnd, t)
    return -1


@njit(cache=True, nogil=True)
def _unindex_batch(indices, rnd, t, out):  # type: ignore[no-untyped-def]
    """Decode every index; returns the first position out of range, else -1."""
    for i in range(indices.shape[0]):
        if not unindex_hand(indices[i], rnd, t, out[i]):
            return i
    return -1


@njit(cache=True, nogil=True)
def _first_repeat(cards):  # type: ignore[no-untyped-def]
    """First row in which a card id appears twice, else -1 (ids must be < 64)."""
    for i in range(cards.shape[0]):
        seen = 0
        for j in range(cards.shape[1]):
            bit = 1 << cards[i, j]
            if seen & bit:
                return i
            seen |= bit
    return -1


# ---------------------------------------------------------------------------------------------
# Python API.


class HandIndexer:
    """Optimal isomorphism index of hands dealt in rounds, for decks of 1..13 ranks x 1..4 suits.

    ``round`` arguments name the last round dealt (0-based) and default to the last round.
    """

    def __init__(self, cards_per_round: Sequence[int], num_ranks: int = 13, num_suits: int = 4):
        self.cards_per_round = _check_game(cards_per_round, num_ranks, num_suits)
        self.num_ranks = num_ranks
        self.num_suits = num_suits
        self.num_cards = num_ranks * num_suits
        self.rounds = len(self.cards_per_round)
        self.tables = build_tables(self.cards_per_round, num_ranks, num_suits)
        self._starts = [int(s) for s in self.tables.round_start]

    def __repr__(self) -> str:
        return (
            f"HandIndexer({self.cards_per_round}, num_ranks={self.num_ranks}, "
            f"num_suits={self.num_suits})"
        )

    def _round(self, round: int | None) -> int:
        if round is None:
            return self.rounds - 1
        if not 0 <= int(round) < self.rounds:
            raise ValueError(f"round must be in 0..{self.rounds - 1}, not {round}")
        return int(round)

    def size(self, round: int) -> int:
        """Number of isomorphism classes after dealing rounds 0..round."""
        return int(self.tables.sizes[self._round(round)])

    def num_hand_cards(self, round: int | None = None) -> int:
        """Cards in a hand after dealing rounds 0..round."""
        return self._starts[self._round(round) + 1]

    def _cards(self, cards: np.ndarray | Sequence[Sequence[int]], rnd: int) -> np.ndarray:
        arr = np.asarray(cards)
        width = self._starts[rnd + 1]
        if arr.ndim != 2 or arr.shape[1] != width:
            raise ValueError(
                f"cards must have shape (n, {width}) for round {rnd}, not {arr.shape}"
            )
        if arr.dtype != np.int8:
            if arr.dtype.kind not in "iu":
                raise ValueError(f"cards must be integer card ids, not {arr.dtype}")
            if arr.size and (arr.min() < 0 or arr.max() >= self.num_cards):
                raise ValueError(f"card ids must be in 0..{self.num_cards - 1}")
            arr = arr.astype(np.int8)
        return np.ascontiguousarray(arr)

    def index(
        self,
        cards: np.ndarray | Sequence[Sequence[int]],
        round: int | None = None,
        validate: bool = False,
    ) -> np.ndarray:
        """Indices (int64, shape (n,)) of hands given as card ids, shape (n, cards so far)."""
        rnd = self._round(round)
        arr = self._cards(cards, rnd)
        out = np.empty(arr.shape[0], dtype=np.int64)
        if arr.shape[0] == 0:
            return out
        bad = _index_batch(arr, rnd, self.tables, out)
        if bad >= 0:
            raise ValueError(f"hand {bad}: card ids must be in 0..{self.num_cards - 1}")
        if validate:
            bad = _first_repeat(arr)
            if bad >= 0:
                raise ValueError(f"hand {bad}: a card appears twice")
        return out

    def unindex(self, indices: np.ndarray | Sequence[int], round: int | None = None) -> np.ndarray:
        """Canonical hands (int8, shape (n, cards so far)), cards sorted within each round."""
        rnd = self._round(round)
        arr = np.asarray(indices)
        if arr.ndim != 1:
            raise ValueError(f"indices must be one-dimensional, not shape {arr.shape}")
        if arr.dtype.kind not in "iu":
            raise ValueError(f"indices must be integers, not {arr.dtype}")
        arr = np.ascontiguousarray(arr, dtype=np.int64)
        out = np.empty((arr.shape[0], self._starts[rnd + 1]), dtype=np.int8)
        if arr.shape[0] == 0:
            return out
        bad = _unindex_batch(arr, rnd, self.tables, out)
        if bad >= 0:
            raise ValueError(
                f"index {arr[bad]} at position {bad} is outside 0..{self.size(rnd) - 1}"
            )
        return out

    def canonicalize(
        self,
        cards: np.ndarray | Sequence[Sequence[int]],
        round: int | None = None,
        validate: bool = False,
    ) -> np.ndarray:
        """Canonical representative of each hand: ``unindex(index(cards))``."""
        return self.unindex(self.index(cards, round, validate), round)

    def index_one(self, cards: Sequence[int], round: int | None = None) -> int:
        """Index of one hand given as a sequence of card ids (validated)."""
        row = [int(c) for c in cards]
        if len(set(row)) != len(row):
            raise ValueError(f"hand {row}: a card appears twice")
        return int(self.index(np.asarray([row], dtype=np.int64).reshape(1, -1), round)[0])

    def unindex_one(self, index: int, round: int | None = None) -> list[int]:
        """Canonical hand of one index, as a list of card ids."""
        return [int(c) for c in self.unindex(np.asarray([int(index)], dtype=np.int64), round)[0]]
