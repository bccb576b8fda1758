"""Heads-up limit matches in numba: duplicate deals, several agent kinds, mbb/g with intervals.

A match is `matches` blocks of `hands_per_set` deals; within a block, the k-th hand of every
set uses the same cards (the paper's duplicate structure) and consecutive sets swap seats, so
both agents hold both seats' cards equally often. Cards of deal (match m, hand k) and the
agents' random choices in (m, k, set s) come from counter-based streams of the seed: the same
deals for every pairing, and the same results however the deals are split over workers.

Agents: a solved strategy (its average strategy sampled through its own bucket lookup), uniform
random, always-call, always-raise (raise when allowed, else call).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
from numba import njit

from gameforge.engines.common.parallel import SERIAL, Parallel
from gameforge.engines.common.rng import mix, uniform
from gameforge.engines.poker.acpc import GameDef
from gameforge.engines.poker.betting import CALL, DECISION, FOLD_END, RAISE, TreeArrays, build_tree
from gameforge.engines.poker.evaluator import EvalTables, hand_value
from gameforge.engines.poker.mccfr import (
    BucketLookup,
    DealTables,
    lookup_bucket,
    lossless_tables,
    showdown_tables,
    shuffle_deal,
)

STRATEGY, UNIFORM, ALWAYS_CALL, ALWAYS_RAISE = 0, 1, 2, 3
KINDS = {"strategy": STRATEGY, "uniform": UNIFORM, "call": ALWAYS_CALL, "raise": ALWAYS_RAISE}


class PackedAgent(NamedTuple):
    """An `Agent` as the kernel takes it."""

    kind: int
    strategy: np.ndarray
    offsets: np.ndarray
    ndec: np.ndarray
    lookup: BucketLookup


@dataclass
class Agent:
    """One player: a kind, and for `strategy` the average strategy with its abstraction."""

    kind: str
    name: str = ""
    strategy: np.ndarray = field(default_factory=lambda: np.zeros((0, 3), dtype=np.float32))
    offsets: np.ndarray = field(default_factory=lambda: np.zeros(1, dtype=np.int64))
    ndec: np.ndarray = field(default_factory=lambda: np.zeros(1, dtype=np.int64))
    tables: DealTables | None = None

    def packed(self, game: GameDef) -> PackedAgent:
        """Arrays for the kernel (dummy tables for the card-blind kinds)."""
        if self.kind not in KINDS:
            raise ValueError(f"agent kind must be one of {sorted(KINDS)}, got {self.kind!r}")
        if self.kind == "strategy":
            if self.strategy.shape[0] == 0:
                raise ValueError(f"agent {self.name!r} has no strategy")
            lookup = (self.tables if self.tables is not None else lossless_tables(game)).lookup
        else:  # card-blind agents never look a bucket up
            empty = np.zeros(game.num_rounds + 1, dtype=np.int64)
            lookup = BucketLookup(empty, empty, empty[:-1], np.zeros(0, dtype=np.int32), empty)
        return PackedAgent(
            KINDS[self.kind],
            np.ascontiguousarray(self.strategy, dtype=np.float32),
            np.ascontiguousarray(self.offsets, dtype=np.int64),
            np.ascontiguousarray(self.ndec, dtype=np.int64),
            lookup,
        )


@njit(cache=True, nogil=True)
def _choose(agent: PackedAgent, bucket: int, r: int, slot: int, legal: np.ndarray, u: float) -> int:
    kind, strategy, offsets, ndec, _ = agent
    if kind == ALWAYS_CALL:
        return CALL
    if kind == ALWAYS_RAISE:
        return RAISE if legal[RAISE] >= 0 else CALL
    acc = 0.0
    count = 0
    for a in range(3):
        if legal[a] >= 0:
            count += 1
    pick = -1
    last = CALL
    for a in range(3):
        if legal[a] < 0:
            continue
        last = a
        p = strategy[offsets[r] + bucket * ndec[r] + slot, a] if kind == STRATEGY else 1.0 / count
        acc += p
        if pick < 0 and u < acc:
            pick = a
    return pick if pick >= 0 else last


@njit(cache=True, nogil=True)
def _play_block(
    seed: int,
    deal_ids: np.ndarray,
    sets: int,
    tree: TreeArrays,
    deck_size: int,
    num_hole: int,
    board_through: np.ndarray,
    ev: EvalTables,
    a: PackedAgent,
    b: PackedAgent,
    out: np.ndarray,
    ends: np.ndarray,
) -> None:
    """out[i] = agent A's mean chips per hand over the `sets` plays of deal deal_ids[i];
    ends[i, s] = the terminal betting node of its play in set s, for the first len(ends) deals
    and ends.shape[1] sets."""
    kind, player, rnd, spent, children, slot = tree
    card_key, card_bit, rank_table, flush_table = ev
    a_kind, a_lookup, b_kind, b_lookup = a.kind, a.lookup, b.kind, b.lookup
    R = board_through.shape[0]
    total = board_through[R - 1]
    n_cards = num_hole + total
    deck = np.empty(deck_size, dtype=np.int8)
    rows = np.empty((2, n_cards), dtype=np.int8)
    buckets = np.zeros((2, 2, R), dtype=np.int64)  # [agent, seat, round]
    values = np.zeros(2, dtype=np.int64)
    state = np.zeros(1, dtype=np.uint64)
    rng = np.zeros(1, dtype=np.uint64)
    for i in range(deal_ids.shape[0]):
        d = deal_ids[i]
        shuffle_deal(seed, d, state, deck, 2 * num_hole + total)
        for p in range(2):
            for t in range(num_hole):
                rows[p, t] = deck[p * num_hole + t]
            for t in range(total):
                rows[p, num_hole + t] = deck[2 * num_hole + t]
            values[p] = hand_value(rows[p], n_cards, card_key, card_bit, rank_table, flush_table)
            for r in range(R):
                n = num_hole + board_through[r]
                if a_kind == STRATEGY:
                    buckets[0, p, r] = lookup_bucket(rows[p], n, r, a_lookup)
                if b_kind == STRATEGY:
                    buckets[1, p, r] = lookup_bucket(rows[p], n, r, b_lookup)
        showdown = 1 if values[0] > values[1] else (-1 if values[0] < values[1] else 0)
        acc = 0.0
        for s in range(sets):
            a_seat = s & 1  # consecutive sets swap seats
            rng[0] = mix(state[0] ^ mix(np.uint64(s) + np.uint64(0x632BE59BD9B4E019)))
            n = 0
            while kind[n] == DECISION:
                p = player[n]
                r = rnd[n]
                u = uniform(rng)
                if p == a_seat:
                    act = _choose(a, buckets[0, p, r], r, slot[n], children[n], u)
                else:
                    act = _choose(b, buckets[1, p, r], r, slot[n], children[n], u)
                n = children[n, act]
            if i < ends.shape[0] and s < ends.shape[1]:
                ends[i, s] = n
            if kind[n] == FOLD_END:
                folder = player[n]
                seat0 = -float(spent[n, 0]) if folder == 0 else float(spent[n, 1])
            else:
                seat0 = showdown * float(spent[n, 0])
            acc += seat0 if a_seat == 0 else -seat0
        out[i] = acc / sets


def play_match(
    game: GameDef,
    a: Agent,
    b: Agent,
    *,
    seed: int = 0,
    hands_per_set: int = 3000,
    sets: int = 2,
    matches: int = 1,
    parallel: Parallel = SERIAL,
    ends: np.ndarray | None = None,
) -> np.ndarray:
    """Per-deal duplicate outcomes (A's mean chips per hand), matches * hands_per_set deals
    (`parallel`: threads, deals per task and progress). `ends`, if given, an int32 (deals kept,
    sets kept) array: filled with the terminal betting node of each play of the first deals in
    the first sets (with `deal_cards` of the same seed, the hands' histories; A holds seat
    s & 1 in set s)."""
    n_threads, chunk = parallel.threads, parallel.chunk
    if sets < 2 or sets % 2:
        raise ValueError("sets must be even (>= 2): consecutive sets swap seats")
    if hands_per_set < 1 or matches < 1:
        raise ValueError("hands_per_set and matches must be >= 1")
    tree = build_tree(game).arrays
    ev = showdown_tables(game)
    board_through = np.array(
        [game.board_cards_through(r) for r in range(game.num_rounds)], dtype=np.int64
    )
    pa, pb = a.packed(game), b.packed(game)
    deals = matches * hands_per_set
    if chunk is None:  # enough pieces to keep every thread busy; results never depend on it
        chunk = max(1, min(4096, -(-deals // (8 * max(1, n_threads)))))
    out = np.zeros(deals)
    ids = np.arange(deals, dtype=np.int64)
    kept = np.zeros((0, sets), dtype=np.int32) if ends is None else ends
    if kept.dtype != np.int32 or kept.ndim != 2 or kept.shape[1] > sets:
        raise ValueError(f"ends must be an int32 array (deals, at most {sets} sets)")

    def work(start: int) -> int:
        stop = min(deals, start + chunk)
        _play_block(
            seed, ids[start:stop], sets, tree, game.deck_size, game.num_hole_cards,
            board_through, ev, pa, pb, out[start:stop], kept[start:stop],
        )  # fmt: skip
        return stop - start

    with ThreadPoolExecutor(max_workers=max(1, n_threads)) as pool:
        for done in pool.map(work, range(0, deals, chunk)):
            if parallel.progress is not None:
                parallel.progress(done)
    return out


@njit(cache=True)
def _deal_cards(seed: int, deals: int, deck_size: int, need: int, out: np.ndarray) -> None:
    state = np.zeros(1, dtype=np.uint64)
    deck = np.empty(deck_size, dtype=np.int8)
    for d in range(deals):
        shuffle_deal(seed, d, state, deck, need)
        out[d] = deck[:need]


def deal_cards(game: GameDef, seed: int, deals: int) -> np.ndarray:
    """(deals, 2 holes + board) int8: the cards `play_match` deals for deals 0.. of `seed`,
    seat 0's hole, seat 1's, then the whole board."""
    need = 2 * game.num_hole_cards + sum(game.num_board_cards)
    out = np.zeros((deals, need), dtype=np.int8)
    _deal_cards(seed, deals, game.deck_size, need, out)
    return out


def summarize(outcomes: np.ndarray, big_blind: float, sets: int) -> dict[str, float]:
    """mbb/g mean and 95% half-width from per-deal duplicate outcomes; hands played."""
    scale = 1000.0 / big_blind
    mean = float(outcomes.mean()) * scale
    half = 1.96 * float(outcomes.std(ddof=1)) / np.sqrt(outcomes.size) * scale
    return {"mbb_per_game": mean, "ci95": half, "hands": float(outcomes.size * sets)}
