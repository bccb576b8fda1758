"""Lossless, optimal hand isomorphism indexing (after Waugh, 2013), with numba batch kernels.

A hand is dealt in rounds (``cards_per_round``, e.g. ``(2, 3, 1, 1)`` for Hold'em): cards within a
round are unordered, rounds are ordered, and two hands are isomorphic when a permutation of the
suits maps one onto the other round by round. :class:`HandIndexer` numbers the classes after each
round ``0 .. size(round) - 1`` with no gaps, and maps an index back to a canonical representative.

How an index is built:

* per suit, the ranks it receives in each round; its count vector ``(m_0, .., m_r)`` is the suit's
  *configuration*, numbered by the mixed-radix ``raw`` id of ``(c_k - m_k)`` (round 0 most
  significant), so ascending ``raw`` means more cards in early rounds;
* the suit's index is the mixed radix (round 0 most significant) of per-round colex indices,
  where round ``k``'s ranks are renumbered after removing those the suit received earlier;
* suits are sorted by ``(raw, suit index)``; suits of equal configuration form a group whose
  indices are ranked as a multiset (colex of combinations with repetition), which is what makes
  the suit permutations vanish;
* the hand's configuration (the sorted ``raw`` ids) is looked up in a small hash table giving
  its offset (configurations are numbered in a fixed order per round); the index is that offset
  plus the mixed radix of the group ranks, the first group least significant.

``unindex`` inverts each step and deals the sorted suits to clubs, diamonds, ... in order, so the
canonical hand gives the low suits the most (and earliest) cards.

Numba use: ``HandIndexer.tables`` is an :class:`IsoTables` named tuple of numpy arrays whose
``blob`` field (one flat int64 array) holds everything the kernels read. Another ``@njit`` kernel
can call, without Python overhead:

* ``index_hand(cards, rnd, tables.blob) -> int64``: ``cards`` a 1-D integer array whose first
  ``sum(cards_per_round[:rnd + 1])`` entries are the hand's cards, round by round; returns the
  index in round ``rnd``, -1 if a card repeats, -2 if a card id is out of range;
* ``unindex_hand(index, rnd, tables.blob, out) -> bool``: writes the canonical hand into ``out``
  (a 1-D integer array with room for the hand); False if ``index`` is out of range.

Both are ``inline="always"``: the caller's loop absorbs them, with no per-hand call or
reference-count traffic. Neither allocates; both are safe to run from many threads (``nogil``).

Cards use the conventions of :mod:`gameforge.engines.poker.cards`: id ``rank * num_suits + suit``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import product
from math import comb, prod
from typing import Any, NamedTuple

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

from gameforge.engines.poker.cards import MAX_RANKS, MAX_SUITS

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
_BAD_CARD_BIT = 15  # bit position of an invalid card id: rank 15 of suit 0, never a real card
# Kernels are written for 4 suit lanes; fewer suits leave lanes empty, which changes nothing.
_LANES = 4
_MAX_RAW = 1 << 15  # raw ids per round, so that a 4-lane configuration key fits in int64
_MAX_SIZE = 1 << 60  # keeps intermediate products of the multiset binomials inside int64
_HASH_MUL = 0x9E3779B97F4A7C15  # Fibonacci hashing multiplier
_U64 = (1 << 64) - 1


# ---------------------------------------------------------------------------------------------
# Pure-Python enumeration (no numba): configurations and class counts.


def _check_game(cards_per_round: Sequence[int], num_ranks: int, num_suits: int) -> tuple[int, ...]:
    cpr = tuple(int(c) for c in cards_per_round)
    if not cpr:
        raise ValueError("cards_per_round must name at least one round")
    if any(c < 0 for c in cpr):
        raise ValueError(f"cards_per_round {cpr}: a round cannot deal a negative number of cards")
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


class IsoTables(NamedTuple):
    """Tables of one indexer. Kernels read only ``blob``; the other fields are for Python."""

    blob: np.ndarray  # int64[*]: every table the kernels need, laid out as described below
    cards_per_round: np.ndarray  # int64[R]
    round_start: np.ndarray  # int64[R + 1]: first column of each round in a hand
    sizes: np.ndarray  # int64[R]: classes after each round


# Layout of the blob. One flat int64 array, so that a kernel receives a single array: a tuple of
# arrays costs one reference-count update per array on every inlined call.
_H_NUM_RANKS = 0
_H_NUM_SUITS = 1
_H_NUM_CARDS = 2
_H_ROUNDS = 3
_H_CARDS = 4  # offset of card byte (0..255) -> bit position 16 * suit + rank; 15 if invalid
_H_NCR = 5  # offset of C(n, k) at [n * 16 + k]
_H_RADIX = 6  # offset of C(num_ranks - u, m) at [u * 16 + m]
_H_ROUND = 7  # offset of the per-round records
_H_UNRANK = 8  # offset of the m-subset masks of 0..12 in colex order, for m = 0, 1, .., 13
_H_UNRANK_START = 9  # offset of where each m starts in that table
_HEADER = 10
# Per-round record fields (a record has _R_STRIDE entries).
_R_CARDS = 0  # cards dealt in this round
_R_START = 1  # first column of this round in a hand
_R_SIZE = 2  # classes after this round
_R_HASH_SHIFT = 3  # 64 - log2(hash table size)
_R_HASH_MASK = 4
_R_HASH_MUL = 5
_R_HASH_KEYS = 6  # offset: packed sorted raw ids of each configuration, -1 where empty
_R_HASH_VALS = 7  # offset: offset of that configuration's first index
_R_SUIT_SIZE = 8  # offset: suit hands of each raw configuration id
_R_CFG_COUNT = 9
_R_CFG_OFFSET = 10  # offset: ascending first index of each configuration
_R_CFG_RAW = 11  # offset: [cfg * num_suits + j] sorted raw id of suit j
_R_CFG_POS = 12  # offset: [(cfg * num_suits + j) * (round + 1) + k] first column of j's cards
_R_GROUP_SIZE = 13  # offset: [raw * 4 + g - 1] classes of g suits of configuration raw
_R_RAW_COUNTS = 14  # offset: [raw] the configuration's cards per round, 4 bits per round
_R_RAW_AFTER = 15  # offset: [raw * (round + 1) + k] product of the radices of rounds after k
_R_STRIDE = 16


def _hash_params(keys: list[int]) -> tuple[int, int]:
    """(bits, multiplier) of a multiplicative hash with no collisions on keys, when one is found."""
    arr = np.asarray(keys, dtype=np.uint64)
    rng = np.random.default_rng(20130101)  # fixed seed: tables are reproducible
    low = max(4, (2 * len(keys) - 1).bit_length())
    for bits in range(low, low + 5):
        for attempt in range(48):
            mul = _HASH_MUL if attempt == 0 else int(rng.integers(1, 1 << 63)) * 2 + 1
            slots = (arr * np.uint64(mul)) >> np.uint64(64 - bits)
            if len(np.unique(slots)) == len(keys):
                return bits, mul
    return low + 1, _HASH_MUL  # linear probing resolves the collisions


def build_tables(
    cards_per_round: Sequence[int], num_ranks: int = 13, num_suits: int = 4
) -> IsoTables:
    """Build the tables the kernels use (pure Python/numpy; compiles nothing)."""
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
    starts = [0]
    for c in cpr:
        starts.append(starts[-1] + c)

    blob: list[int] = [0] * _HEADER

    def put(values: Sequence[int]) -> int:
        blob.extend(int(v) for v in values)
        return len(blob) - len(values)

    blob[_H_NUM_RANKS : _H_ROUNDS + 1] = [num_ranks, num_suits, num_cards, rounds]
    # 256 entries so that any card byte is a safe lookup; bit 15 (rank 15) flags a bad card.
    card_bits = [16 * (c % num_suits) + c // num_suits for c in range(num_cards)]
    blob[_H_CARDS] = put(card_bits + [_BAD_CARD_BIT] * (256 - num_cards))
    blob[_H_NCR] = put([comb(n, k) for n in range(16) for k in range(16)])
    blob[_H_RADIX] = put(
        [comb(num_ranks - u, m) if u <= num_ranks else 0 for u in range(16) for m in range(16)]
    )
    # Colex order of equal-size subsets is the numeric order of their bit masks, and does not
    # depend on the size of the universe: one table serves every count of unused ranks.
    by_size: list[list[int]] = [[] for _ in range(MAX_RANKS + 1)]
    for mask in range(1 << MAX_RANKS):
        by_size[mask.bit_count()].append(mask)
    blob[_H_UNRANK] = put([mask for masks in by_size for mask in masks])
    blob[_H_UNRANK_START] = put([sum(len(m) for m in by_size[:k]) for k in range(MAX_RANKS + 1)])
    records = put([0] * (_R_STRIDE * rounds))
    blob[_H_ROUND] = records

    for r, (vecs, cfgs, counts) in enumerate(per_round):
        sub = cpr[: r + 1]
        raws = [_raw_id(v, sub) for v in vecs]
        suit_size = [0] * num_raw[r]
        for v, raw in zip(vecs, raws, strict=True):
            suit_size[raw] = _suit_hands(v, num_ranks)
        cfg_raws = [[raws[i] for i in cfg] for cfg in cfgs]
        # The kernels pad to 4 suits with empty suits (raw id num_raw - 1, the largest).
        keys = []
        for sorted_raws in cfg_raws:
            key = 0
            for raw in sorted_raws + [num_raw[r] - 1] * (_LANES - num_suits):
                key = (key << _LANE_BITS) | raw
            keys.append(key)
        bits, mul = _hash_params(keys)
        mask = (1 << bits) - 1
        hash_keys = [-1] * (1 << bits)
        hash_vals = [0] * (1 << bits)
        offsets = []
        positions = []
        offset = 0
        for cfg, key, count in zip(cfgs, keys, counts, strict=True):
            slot = ((key * mul) & _U64) >> (64 - bits)
            while hash_keys[slot] >= 0:
                slot = (slot + 1) & mask
            hash_keys[slot] = key
            hash_vals[slot] = offset
            offsets.append(offset)
            column = starts[: r + 1]
            for i in cfg:
                for k in range(r + 1):
                    positions.append(column[k])
                    column[k] += vecs[i][k]
            offset += count
        rec = records + r * _R_STRIDE
        blob[rec + _R_CARDS] = cpr[r]
        blob[rec + _R_START] = starts[r]
        blob[rec + _R_SIZE] = sizes[r]
        blob[rec + _R_HASH_SHIFT] = 64 - bits
        blob[rec + _R_HASH_MASK] = mask
        blob[rec + _R_HASH_MUL] = mul - (1 << 64) if mul >= 1 << 63 else mul
        blob[rec + _R_HASH_KEYS] = put(hash_keys)
        blob[rec + _R_HASH_VALS] = put(hash_vals)
        blob[rec + _R_SUIT_SIZE] = put(suit_size)
        raw_counts = [0] * num_raw[r]
        raw_after = [0] * (num_raw[r] * (r + 1))
        for v, raw in zip(vecs, raws, strict=True):
            raw_counts[raw] = sum(m << (4 * k) for k, m in enumerate(v))
            for k in range(r + 1):
                after, used = 1, sum(v[: k + 1])
                for m in v[k + 1 :]:
                    after *= comb(num_ranks - used, m)
                    used += m
                raw_after[raw * (r + 1) + k] = after
        blob[rec + _R_RAW_COUNTS] = put(raw_counts)
        blob[rec + _R_RAW_AFTER] = put(raw_after)
        # Sizes a hand cannot reach may not fit in int64; they are never used, so store 0.
        group_size = [comb(m + g - 1, g) for m in suit_size for g in range(1, 5)]
        blob[rec + _R_GROUP_SIZE] = put([v if v < 1 << 63 else 0 for v in group_size])
        blob[rec + _R_CFG_COUNT] = len(cfgs)
        blob[rec + _R_CFG_OFFSET] = put(offsets)
        blob[rec + _R_CFG_RAW] = put([raw for sorted_raws in cfg_raws for raw in sorted_raws])
        blob[rec + _R_CFG_POS] = put(positions)

    return IsoTables(
        blob=np.asarray(blob, dtype=np.int64),
        cards_per_round=np.asarray(cpr, dtype=np.int64),
        round_start=np.asarray(starts, dtype=np.int64),
        sizes=np.asarray(sizes, dtype=np.int64),
    )


# ---------------------------------------------------------------------------------------------
# Numba kernels.


def _int64_intrinsic(name: str, emit: Callable[[Any, Any], Any]) -> Any:
    """A numba intrinsic `name(x) -> int64` of any integer x: one LLVM instruction, built by
    `emit(builder, value)` on x cast to int64."""

    def typer(typingctx, x):
        if not isinstance(x, types.Integer):
            return None

        def codegen(context, builder, signature, args):
            return emit(builder, context.cast(builder, args[0], signature.args[0], types.int64))

        return types.int64(x), codegen

    typer.__name__ = typer.__qualname__ = name
    return intrinsic(typer)


_popcount = _int64_intrinsic("_popcount", lambda b, v: b.ctpop(v))  # count of set bits
_cttz = _int64_intrinsic(  # index of the lowest set bit
    "_cttz", lambda b, v: b.cttz(v, ir.Constant(ir.IntType(1), 0))
)


@njit(cache=True, nogil=True, inline="always")
def _lane_counts(x):
    """Bit counts of the four 16-bit lanes of x, each in its own lane (bit 63 must be clear)."""
    x = x - ((x >> 1) & 0x5555555555555555)
    x = (x & 0x3333333333333333) + ((x >> 2) & 0x3333333333333333)
    x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0F
    return (x + (x >> 8)) & 0x00FF00FF00FF00FF


@njit(cache=True, nogil=True, inline="always")
def _ld(a, i):
    """a[i] for a known non-negative i: an unsigned index skips numba's negative-index fix-up."""
    return a[np.uint64(i)]


@njit(cache=True, nogil=True, inline="always")
def _multiset_term(x, k):
    """C(x + k - 1, k) for k in 1..4."""
    c = x
    if k >= 2:
        c = (c * (x + 1)) >> 1
    if k >= 3:
        c = c * (x + 2) // 3
    if k >= 4:
        c = (c * (x + 3)) >> 2
    return c


@njit(cache=True, nogil=True, inline="always")
def _binom_small(n, k):
    """C(n, k) for 1 <= k <= 4 and n >= k - 1."""
    return _multiset_term(n - k + 1, k)


@njit(cache=True, nogil=True, inline="always")
def _horner(idx, col, radix_key, shift, radix, b):
    """One round of one suit's mixed-radix index: idx * C(N - used, m) + colex index."""
    return idx * _ld(b, radix + ((radix_key >> shift) & 0xFF)) + ((col >> shift) & _LANE_MASK)


@njit(cache=True, nogil=True, inline="always")
def _group_step(key, prev, top, group_size, b, total, gmul, gacc, gpos):
    """Add the next sorted suit (the top-th, 1-based) to the multiset rank of its group.

    Branch-free: whether suits share a configuration is data-dependent and unpredictable.
    """
    same = np.int64((key >> _IDX_BITS) == (prev >> _IDX_BITS))
    new = 1 - same
    total += gacc * gmul * new  # the previous group ends here when the configuration changes
    closed = _ld(b, group_size + (prev >> _IDX_BITS) * 4 + gpos - 1)
    gmul *= 1 + (closed - 1) * new
    gpos = gpos * same + 1
    # C(x + gpos - 1, gpos): products for gpos up to `top`, picked with masks.
    x = key & _IDX_MASK
    term = x
    c = (x * (x + 1)) >> 1
    term ^= (term ^ c) & -np.int64(gpos >= 2)
    if top >= 3:  # top is a constant: these lines vanish for the earlier suits
        c3 = c * (x + 2) // 3
        term ^= (term ^ c3) & -np.int64(gpos >= 3)
        if top >= 4:
            c4 = (c3 * (x + 3)) >> 2
            term ^= (term ^ c4) & -np.int64(gpos >= 4)
    gacc = gacc * same + term
    return total, gmul, gacc, gpos


@njit(cache=True, nogil=True, inline="always")
def _index_at(cards, start, rnd, b):
    """Index of the hand held in cards[start:]; see index_hand."""
    card_pos = _ld(b, _H_CARDS)
    ncr = _ld(b, _H_NCR)
    radix = _ld(b, _H_RADIX)
    rec = _ld(b, _H_ROUND)
    used = 0
    used_counts = 0  # cards per suit so far, one per 16-bit lane
    raws = 0  # the four suits' raw configuration ids, one per 16-bit lane
    i0 = i1 = i2 = i3 = 0
    pos = start
    for k in range(rnd + 1):
        nk = _ld(b, rec + k * _R_STRIDE + _R_CARDS)
        end = pos + nk
        if nk == 1:
            # One card (turn, river): only its suit's index moves, by its rank among the suit's
            # unused ranks; masks rather than branches pick the lane (the suit is random).
            bp = _ld(b, card_pos + np.uint8(_ld(cards, pos)))
            shift = bp & 48
            rmask = 1 << bp
            counts = 1 << shift
            x = (bp & 15) - _popcount(used & (rmask - counts))
            n = _ld(b, radix + (((used_counts >> shift) & 15) << 4) + 1) - 1  # N - used - 1
            i0 += (i0 * n + x) & -np.int64(shift == 0)
            i1 += (i1 * n + x) & -np.int64(shift == 16)
            i2 += (i2 * n + x) & -np.int64(shift == 32)
            i3 += (i3 * n + x) & -np.int64(shift == 48)
        else:
            rmask = 0
            for j in range(pos, end):
                rmask |= 1 << _ld(b, card_pos + np.uint8(_ld(cards, j)))
            # Each card adds its colex term C(rank among the suit's unused ranks, rank within
            # the suit's cards this round) to its suit's lane, which stays below C(13, 6).
            col = 0
            for j in range(pos, end):
                bp = _ld(b, card_pos + np.uint8(_ld(cards, j)))
                shift = bp & 48
                below = (1 << bp) - (1 << shift)
                x = (bp & 15) - _popcount(used & below)
                p = _popcount(rmask & below) + 1
                col += _ld(b, ncr + x * 16 + p) << shift
            counts = _lane_counts(rmask)  # exact even for bad hands: keeps raw ids in range
            radix_key = (used_counts << 4) | counts  # masked to 8 bits per lane when used
            i0 = _horner(i0, col, radix_key, 0, radix, b)
            i1 = _horner(i1, col, radix_key, 16, radix, b)
            i2 = _horner(i2, col, radix_key, 32, radix, b)
            i3 = _horner(i3, col, radix_key, 48, radix, b)
        raws = raws * (nk + 1) + nk * 0x0001000100010001 - counts
        used |= rmask
        used_counts += counts
        pos = end
    # Masking the suit indices keeps the raw ids exact (so table reads stay in range) even when
    # repeated or bad cards made the indices meaningless.
    k0 = ((raws & _LANE_MASK) << _IDX_BITS) | (i0 & _IDX_MASK)
    k1 = (((raws >> 16) & _LANE_MASK) << _IDX_BITS) | (i1 & _IDX_MASK)
    k2 = (((raws >> 32) & _LANE_MASK) << _IDX_BITS) | (i2 & _IDX_MASK)
    k3 = (((raws >> 48) & _LANE_MASK) << _IDX_BITS) | (i3 & _IDX_MASK)
    # Sorting network for 4 keys; min/max compile to branch-free selects.
    k0, k1 = min(k0, k1), max(k0, k1)
    k2, k3 = min(k2, k3), max(k2, k3)
    k0, k2 = min(k0, k2), max(k0, k2)
    k1, k3 = min(k1, k3), max(k1, k3)
    k1, k2 = min(k1, k2), max(k1, k2)
    key = (
        ((k0 >> _IDX_BITS) << 48)
        | ((k1 >> _IDX_BITS) << 32)
        | ((k2 >> _IDX_BITS) << 16)
        | (k3 >> _IDX_BITS)
    )
    rrec = rec + rnd * _R_STRIDE
    mask = _ld(b, rrec + _R_HASH_MASK)
    slot = ((key * _ld(b, rrec + _R_HASH_MUL)) >> _ld(b, rrec + _R_HASH_SHIFT)) & mask
    hash_keys = _ld(b, rrec + _R_HASH_KEYS)
    while _ld(b, hash_keys + slot) != key and _ld(b, hash_keys + slot) >= 0:
        slot = (slot + 1) & mask
    found = _ld(b, hash_keys + slot) == key
    offset = _ld(b, _ld(b, rrec + _R_HASH_VALS) + slot)
    group_size = _ld(b, rrec + _R_GROUP_SIZE)
    total, gmul, gacc, gpos = 0, 1, k0 & _IDX_MASK, 1
    total, gmul, gacc, gpos = _group_step(k1, k0, 2, group_size, b, total, gmul, gacc, gpos)
    total, gmul, gacc, gpos = _group_step(k2, k1, 3, group_size, b, total, gmul, gacc, gpos)
    total, gmul, gacc, gpos = _group_step(k3, k2, 4, group_size, b, total, gmul, gacc, gpos)
    if (used >> _BAD_CARD_BIT) & 1:
        return -2
    if not found or pos - start != _popcount(used):
        return -1  # a card repeats
    return offset + total + gacc * gmul


# Inlined into callers (numba inline): a real call would copy arguments for every hand.
@njit(cache=True, nogil=True, inline="always")
def index_hand(cards, rnd, blob):
    """Index of a hand (cards of rounds 0..rnd) in round rnd; -1 if a card repeats, -2 if bad."""
    return _index_at(cards, 0, rnd, blob)


@njit(cache=True, nogil=True, inline="always")
def _largest_binom_le(v, i, hi):
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


@njit(cache=True, nogil=True, inline="always")
def _write_suit(x, raw, suit, rnd, b, pos, out, start):
    """Decode suit index x of configuration raw into cards of suit, at out[start + b[pos + k]]."""
    num_ranks = b[_H_NUM_RANKS]
    num_suits = b[_H_NUM_SUITS]
    ncr = b[_H_NCR]
    unrank = b[_H_UNRANK]
    unrank_start = b[_H_UNRANK_START]
    rrec = b[_H_ROUND] + rnd * _R_STRIDE
    counts = b[b[rrec + _R_RAW_COUNTS] + raw]
    after = b[rrec + _R_RAW_AFTER] + raw * (rnd + 1)
    used = 0
    for k in range(rnd + 1):
        m = (counts >> (4 * k)) & 15
        if m == 0:
            continue
        # Round 0 is the most significant digit: divide by the radices of later rounds.
        avail = num_ranks - _popcount(used)
        col = (x // b[after + k]) % b[ncr + avail * 16 + m]
        subset = b[unrank + b[unrank_start + m] + col]  # positions among the unused ranks
        # Deposit those positions onto the ranks not used yet (a software pdep, branch-free).
        taken = 0
        j = 0
        for rank in range(num_ranks):
            free = ((used >> rank) & 1) ^ 1
            taken |= ((subset >> j) & free) << rank
            j += free
        column = start + b[pos + k]
        rest = taken
        while rest:
            out[column] = _cttz(rest) * num_suits + suit
            column += 1
            rest &= rest - 1
        used |= taken


@njit(cache=True, nogil=True, inline="always")
def _unindex_at(index, rnd, b, out, start):
    """Write the canonical hand of index into out[start:]; see unindex_hand."""
    rrec = b[_H_ROUND] + rnd * _R_STRIDE
    if index < 0 or index >= b[rrec + _R_SIZE]:
        return False
    num_suits = b[_H_NUM_SUITS]
    offsets = b[rrec + _R_CFG_OFFSET]
    lo = 0
    hi = b[rrec + _R_CFG_COUNT] - 1
    while lo < hi:
        mid = (lo + hi + 1) >> 1
        if b[offsets + mid] <= index:
            lo = mid
        else:
            hi = mid - 1
    rem = index - b[offsets + lo]
    raws = b[rrec + _R_CFG_RAW] + lo * num_suits
    pos = b[rrec + _R_CFG_POS] + lo * num_suits * (rnd + 1)
    suit_size = b[rrec + _R_SUIT_SIZE]
    j = 0
    while j < num_suits:
        raw = b[raws + j]
        g = 1
        while j + g < num_suits and b[raws + j + g] == raw:
            g += 1
        m = b[suit_size + raw]
        gsize = _multiset_term(m, g)
        gval = rem % gsize
        rem //= gsize
        # Multiset colex unrank, largest element first; suit j + i - 1 gets the i-th smallest.
        for i in range(g, 0, -1):
            y = _largest_binom_le(gval, i, m + i - 2)
            gval -= _binom_small(y, i)
            s = j + i - 1
            _write_suit(y - (i - 1), raw, s, rnd, b, pos + s * (rnd + 1), out, start)
        j += g
    rec = b[_H_ROUND]
    for k in range(rnd + 1):
        first = start + b[rec + k * _R_STRIDE + _R_START]
        last = first + b[rec + k * _R_STRIDE + _R_CARDS]
        for a in range(first + 1, last):  # insertion sort: a round holds a few cards
            v = out[a]
            c = a - 1
            while c >= first and out[c] > v:
                out[c + 1] = out[c]
                c -= 1
            out[c + 1] = v
    return True


@njit(cache=True, nogil=True, inline="always")
def unindex_hand(index, rnd, blob, out):
    """Write the canonical hand of index (round rnd) into out; False if out of range."""
    return _unindex_at(index, rnd, blob, out, 0)


@njit(cache=True, nogil=True)
def _index_batch(cards, rnd, blob, out):
    """Index every row; returns the first row with a card id out of range, else -1."""
    width = cards.shape[1]
    flat = cards.reshape(-1)  # one flat view: a row view per hand would cost refcount updates
    for i in range(cards.shape[0]):
        out[i] = _index_at(flat, i * width, rnd, blob)
        if out[i] == -2:
            return i
    return -1


@njit(cache=True, nogil=True)
def _unindex_batch(indices, rnd, blob, out):
    """Decode every index; returns the first position out of range, else -1."""
    width = out.shape[1]
    flat = out.reshape(-1)
    for i in range(indices.shape[0]):
        if not _unindex_at(indices[i], rnd, blob, flat, i * width):
            return i
    return -1


@njit(cache=True, nogil=True)
def _first_repeat(cards):
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
            raise ValueError(f"cards must have shape (n, {width}) for round {rnd}, not {arr.shape}")
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
        """Indices (int64, shape (n,)) of hands given as card ids, shape (n, cards so far).

        Card ids out of range raise ValueError. A repeated card is only detected with
        ``validate=True`` (ValueError); otherwise such a hand gets index -1.
        """
        rnd = self._round(round)
        arr = self._cards(cards, rnd)
        out = np.empty(arr.shape[0], dtype=np.int64)
        if arr.shape[0] == 0:
            return out
        bad = _index_batch(arr, rnd, self.tables.blob, out)
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
        bad = _unindex_batch(arr, rnd, self.tables.blob, out)
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
        indices = self.index(cards, round, validate)
        if indices.size and indices.min() < 0:
            raise ValueError(f"hand {int(np.argmin(indices))}: a card appears twice")
        return self.unindex(indices, round)

    def index_one(self, cards: Sequence[int], round: int | None = None) -> int:
        """Index of one hand given as a sequence of card ids (validated)."""
        row = [int(c) for c in cards]
        if len(set(row)) != len(row):
            raise ValueError(f"hand {row}: a card appears twice")
        return int(self.index(np.asarray([row], dtype=np.int64).reshape(1, -1), round)[0])

    def unindex_one(self, index: int, round: int | None = None) -> list[int]:
        """Canonical hand of one index, as a list of card ids."""
        return [int(c) for c in self.unindex(np.asarray([int(index)], dtype=np.int64), round)[0]]
