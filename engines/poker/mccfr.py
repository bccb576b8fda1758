"""Monte Carlo CFR on bucketed limit games: chance sampling and external sampling, in numba.

Each iteration deals one complete hand (both players' hole cards and the whole board) from a
counter-based generator (splitmix64 of seed and iteration), so iteration t always sees the same
cards: a checkpoint is just the regret and strategy-sum arrays plus t, and a resumed run is
bit-identical to an uninterrupted one. Buckets come from per-round isomorphism indexers and
bucket tables (identity tables make the game lossless).

- Chance sampling (CS, Zinkevich et al. 2007): one walk of the whole betting tree per deal,
  updating both players (each information set is met at most once per deal, so updates can be
  applied in place). The walk is two flat passes over the preorder node arrays (reach down,
  values up): no recursion, no allocation.
- External sampling (ES, Lanctot et al. 2009): per player, every own action is explored and one
  opponent action is sampled from the current strategy; the opponent's strategy sum is updated
  where it acts ("simple" averaging).

Average-strategy weights are t**gamma: 0 uniform, 1 linear, 2 quadratic (the DCFR default).
`plus` floors regrets at zero after each update (regret matching+).
Information-set rows follow `poker.solver.InfosetLayout`: offsets[r] + bucket * ndec[r] + slot.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from numba import njit

from gameforge.engines.common.rng import stream_seed, uniform
from gameforge.engines.poker.acpc import GameDef
from gameforge.engines.poker.betting import DECISION, FOLD_END, BettingTree, TreeArrays, build_tree
from gameforge.engines.poker.evaluator import EvalTables, get_tables, hand_value
from gameforge.engines.poker.isomorphism import HandIndexer, index_hand
from gameforge.engines.poker.solver import SolverRows, infoset_layout

CHANCE_SAMPLING, EXTERNAL_SAMPLING = 0, 1
VARIANTS = {"chance": CHANCE_SAMPLING, "external": EXTERNAL_SAMPLING}


class BucketLookup(NamedTuple):
    """Per-round indexer tables and bucket tables, as `lookup_bucket` takes them."""

    blobs: np.ndarray  # int64: every round's indexer blob, concatenated
    blob_start: np.ndarray  # (R + 1,) int64
    index_round: np.ndarray  # (R,) int64 the indexer round that covers the cards of round r
    tables: np.ndarray  # int32: every round's bucket table (canonical index -> bucket)
    table_start: np.ndarray  # (R + 1,) int64; an empty table means "bucket = index"


@dataclass(frozen=True)
class DealTables:
    """How a dealt hand becomes one bucket per round, plus the showdown evaluator tables."""

    lookup: BucketLookup
    num_buckets: np.ndarray  # (R,) int64
    evaluator: EvalTables


def deal_tables(
    game: GameDef,
    indexers: list[HandIndexer],
    tables: list[np.ndarray | None],
    num_buckets: list[int] | None = None,
) -> DealTables:
    """Pack one indexer and one bucket table (None: lossless) per round for the kernels.

    The indexer of round r must index the player's cards of round r laid out as hole cards then
    the board in deal order (its last round covers them all).
    """
    if len(indexers) != game.num_rounds or len(tables) != game.num_rounds:
        raise ValueError("need one indexer and one table per betting round")
    blobs = [ix.tables.blob for ix in indexers]
    sizes = []
    packed = []
    for ix, table in zip(indexers, tables):
        n = ix.size(ix.rounds - 1)
        if table is None:
            packed.append(np.zeros(0, dtype=np.int32))
            sizes.append(n)
        else:
            if table.shape[0] != n:
                raise ValueError(f"bucket table has {table.shape[0]} rows, indexer has {n}")
            packed.append(np.ascontiguousarray(table, dtype=np.int32))
            sizes.append(int(table.max()) + 1)
    if num_buckets is not None:
        if any(given < used for given, used in zip(num_buckets, sizes)):
            raise ValueError(f"bucket tables use more buckets than {num_buckets}")
        sizes = list(num_buckets)
    lookup = BucketLookup(
        blobs=np.concatenate(blobs).astype(np.int64),
        blob_start=np.concatenate([[0], np.cumsum([b.shape[0] for b in blobs])]).astype(np.int64),
        index_round=np.array([ix.rounds - 1 for ix in indexers], dtype=np.int64),
        tables=np.concatenate(packed) if packed else np.zeros(0, dtype=np.int32),
        table_start=np.concatenate([[0], np.cumsum([p.shape[0] for p in packed])]).astype(np.int64),
    )
    return DealTables(lookup, np.array(sizes, dtype=np.int64), showdown_tables(game))


def showdown_tables(game: GameDef) -> EvalTables:
    """Evaluator tables for a complete hand of the game: hole cards and the whole board."""
    return get_tables(
        game.num_ranks, game.num_suits, game.num_hole_cards + sum(game.num_board_cards)
    )


def lossless_tables(game: GameDef) -> DealTables:
    """Canonical isomorphism index per round as the bucket: the unabstracted game."""
    groups = game.card_groups()
    indexers = [
        HandIndexer(groups[: game.group_of_round(r) + 1], game.num_ranks, game.num_suits)
        for r in range(game.num_rounds)
    ]
    return deal_tables(game, indexers, [None] * game.num_rounds)


def subtree_ends(tree: BettingTree) -> np.ndarray:
    """(N,) one past the last node of each node's subtree (preorder numbering)."""
    end = np.arange(1, tree.num_nodes + 1, dtype=np.int64)
    for n in range(tree.num_nodes - 1, 0, -1):
        p = tree.parent[n]
        end[p] = max(end[p], end[n])
    return end


# ------------------------------------------------------------------------------- kernels


@njit(cache=True, nogil=True)
def shuffle_deal(seed: int, deal: int, state: np.ndarray, deck: np.ndarray, need: int) -> None:
    """Seed `state` from (seed, deal) and put a uniform `need`-card deal at the front of `deck`."""
    state[0] = stream_seed(seed, deal)
    size = deck.shape[0]
    for i in range(size):
        deck[i] = i
    for i in range(need):  # partial Fisher-Yates
        j = i + int(uniform(state) * (size - i))
        tmp = deck[i]
        deck[i] = deck[j]
        deck[j] = tmp


@njit(cache=True, nogil=True)
def lookup_bucket(row: np.ndarray, n: int, r: int, lookup: BucketLookup) -> int:
    """Bucket in round r of the first n cards of `row` (an empty table: the canonical index)."""
    blobs, blob_start, index_round, tables, table_start = lookup
    blob = blobs[blob_start[r] : blob_start[r + 1]]
    idx = index_hand(row[:n], index_round[r], blob)
    if table_start[r + 1] > table_start[r]:
        return int(tables[table_start[r] + idx])
    return int(idx)


@njit(cache=True, nogil=True)
def hand_buckets(
    hands: np.ndarray,
    board: np.ndarray,
    r: int,
    n_board: int,
    lookup: BucketLookup,
    conflict: np.uint64,
    hand_bits: np.ndarray,
    out: np.ndarray,
) -> None:
    """Bucket in round r of every hand on `board[:n_board]`; -1 where it holds a card of
    `conflict` (the board's cards and any others known to be out)."""
    nh = hands.shape[1]
    row = np.empty(nh + n_board, dtype=np.int8)
    for t in range(n_board):
        row[nh + t] = board[t]
    for h in range(hands.shape[0]):
        if hand_bits[h] & conflict:
            out[h] = -1
            continue
        for t in range(nh):
            row[t] = hands[h, t]
        out[h] = lookup_bucket(row, nh + n_board, r, lookup)


@njit(cache=True, nogil=True, inline="always")
def tie_end(rank: np.ndarray, order: np.ndarray, i: int, n: int) -> int:
    """The end of the group of equal showdown values that starts at order[i] (`order` is
    ascending in rank, as `showdown_order` gives it; n its length)."""
    j = i
    while j < n and rank[order[j]] == rank[order[i]]:
        j += 1
    return j


@njit(cache=True, nogil=True)
def showdown_order(
    hands: np.ndarray, bk: np.ndarray, board: np.ndarray, nb: int, ev: EvalTables
) -> tuple[np.ndarray, np.ndarray]:
    """Showdown value of every valid hand (bucket >= 0, else -1) on `board[:nb]`, and the valid
    hands in ascending order of it (ties in hand order)."""
    card_key, card_bit, rank_table, flush_table = ev
    nh = hands.shape[1]
    H = hands.shape[0]
    row = np.empty(nh + nb, dtype=np.int8)
    for t in range(nb):
        row[nh + t] = board[t]
    rank = np.full(H, -1, dtype=np.int64)
    n_valid = 0
    for h in range(H):
        if bk[h] < 0:
            continue
        for t in range(nh):
            row[t] = hands[h, t]
        rank[h] = hand_value(row, nh + nb, card_key, card_bit, rank_table, flush_table)
        n_valid += 1
    valid = np.empty(n_valid, dtype=np.int64)
    i = 0
    for h in range(H):
        if bk[h] >= 0:
            valid[i] = h
            i += 1
    order = valid[np.argsort(rank[valid], kind="mergesort")]
    return rank, order


# Long argument list: a numba kernel takes no Python objects, only arrays, scalars, tuples.
@njit(cache=True, nogil=True)
def _deal(
    num_hole: int,
    board_total: int,
    num_rounds: int,
    board_through: np.ndarray,
    lookup: BucketLookup,
    ev: EvalTables,
    deck: np.ndarray,
    rows: np.ndarray,
    buckets: np.ndarray,
) -> int:
    """Deal both hands and the board; fill buckets[p, r]; return +1/0/-1 (player 0 wins)."""
    card_key, card_bit, rank_table, flush_table = ev
    values = np.zeros(2, dtype=np.int64)
    for p in range(2):
        for t in range(num_hole):
            rows[p, t] = deck[p * num_hole + t]
        for t in range(board_total):
            rows[p, num_hole + t] = deck[2 * num_hole + t]
        for r in range(num_rounds):
            n = num_hole + board_through[r]
            buckets[p, r] = lookup_bucket(rows[p], n, r, lookup)
        values[p] = hand_value(
            rows[p], num_hole + board_total, card_key, card_bit, rank_table, flush_table
        )
    if values[0] > values[1]:
        return 1
    if values[0] < values[1]:
        return -1
    return 0


@njit(cache=True, nogil=True, inline="always")
def regret_matched(
    x0: float, x1: float, x2: float, l0: bool, l1: bool, l2: bool
) -> tuple[float, float, float]:
    """Regret matching of one row's regrets (x0, x1, x2) over the legal actions (l0, l1, l2):
    each positive regret's share of their sum, or uniform if none is positive."""
    total = 0.0
    if l0 and x0 > 0.0:
        total += x0
    if l1 and x1 > 0.0:
        total += x1
    if l2 and x2 > 0.0:
        total += x2
    if total > 0.0:
        return (
            x0 / total if l0 and x0 > 0.0 else 0.0,
            x1 / total if l1 and x1 > 0.0 else 0.0,
            x2 / total if l2 and x2 > 0.0 else 0.0,
        )
    uniform = 1.0 / (int(l0) + int(l1) + int(l2))
    return (uniform if l0 else 0.0, uniform if l1 else 0.0, uniform if l2 else 0.0)


@njit(cache=True, nogil=True, inline="always")
def match_regrets(regret: np.ndarray, row: int, legal: np.ndarray, out: np.ndarray) -> None:
    """Regret matching of one information-set row over the legal actions."""
    out[0], out[1], out[2] = regret_matched(
        regret[row, 0], regret[row, 1], regret[row, 2], legal[0] >= 0, legal[1] >= 0,
        legal[2] >= 0,
    )  # fmt: skip


# Long argument list: a numba kernel takes no Python objects, only arrays, scalars, tuples.
@njit(cache=True, nogil=True)
def _run(
    start: int,
    count: int,
    seed: int,
    variant: int,
    gamma: float,
    plus: bool,
    tree: TreeArrays,
    end: np.ndarray,
    offsets: np.ndarray,
    ndec: np.ndarray,
    deck_size: int,
    num_hole: int,
    board_through: np.ndarray,
    lookup: BucketLookup,
    ev: EvalTables,
    regret: np.ndarray,
    avg: np.ndarray,
) -> int:
    """Iterations start+1 .. start+count; returns the number of nodes visited."""
    kind, player, rnd, spent, children, slot = tree
    N = kind.shape[0]
    R = board_through.shape[0]
    board_total = board_through[R - 1]
    deck = np.empty(deck_size, dtype=np.int8)
    rows = np.empty((2, num_hole + board_total), dtype=np.int8)
    buckets = np.empty((2, R), dtype=np.int64)
    reach = np.zeros((N, 2))
    sig = np.zeros((N, 3))
    value = np.zeros(N)  # player 0's value (CS) or the traverser's (ES)
    active = np.zeros(N, dtype=np.bool_)
    state = np.zeros(1, dtype=np.uint64)
    visited = 0
    for t in range(start + 1, start + count + 1):
        shuffle_deal(seed, t, state, deck, 2 * num_hole + board_total)
        result = _deal(num_hole, board_total, R, board_through, lookup, ev, deck, rows, buckets)
        weight = float(t) ** gamma
        travs = 1 if variant == CHANCE_SAMPLING else 2
        for pass_ in range(travs):
            trav = pass_  # ES: the traverser; CS: unused (both players update)
            # Down: reach (CS) or which nodes the sampled walk enters (ES).
            reach[0, 0] = 1.0
            reach[0, 1] = 1.0
            active[0] = True
            n = 0
            while n < N:
                if not active[n]:
                    n = end[n]
                    continue
                visited += 1
                if kind[n] != DECISION:
                    n += 1
                    continue
                p = player[n]
                r = rnd[n]
                row = offsets[r] + buckets[p, r] * ndec[r] + slot[n]
                match_regrets(regret, row, children[n], sig[n])
                if variant == CHANCE_SAMPLING:
                    live = reach[n, 0] > 0.0 or reach[n, 1] > 0.0
                    for a in range(3):
                        c = children[n, a]
                        if c >= 0:
                            active[c] = live
                            reach[c, p] = reach[n, p] * sig[n, a]
                            reach[c, 1 - p] = reach[n, 1 - p]
                elif p == trav:
                    for a in range(3):
                        c = children[n, a]
                        if c >= 0:
                            active[c] = True
                else:
                    u = uniform(state)
                    pick = -1
                    acc = 0.0
                    for a in range(3):
                        c = children[n, a]
                        if c >= 0:
                            active[c] = False
                            acc += sig[n, a]
                            if pick < 0 and u < acc:
                                pick = a
                    if pick < 0:  # rounding left u above the total: take the last legal
                        for a in range(3):
                            if children[n, a] >= 0:
                                pick = a
                    active[children[n, pick]] = True
                    for a in range(3):  # the opponent's strategy sum, where it acts
                        if children[n, a] >= 0:
                            avg[row, a] += weight * sig[n, a]
                n += 1
            # Up: values, regrets and strategy sums, children before parents.
            for n in range(N - 1, -1, -1):
                if not active[n]:
                    continue
                k = kind[n]
                if k == FOLD_END:
                    v0 = float(spent[n, 1]) if player[n] == 1 else -float(spent[n, 0])
                    value[n] = v0 if (variant == CHANCE_SAMPLING or trav == 0) else -v0
                    continue
                if k != DECISION:  # showdown: the bets are level
                    v0 = result * float(spent[n, 0])
                    value[n] = v0 if (variant == CHANCE_SAMPLING or trav == 0) else -v0
                    continue
                p = player[n]
                r = rnd[n]
                row = offsets[r] + buckets[p, r] * ndec[r] + slot[n]
                cs = variant == CHANCE_SAMPLING
                if cs and reach[n, 0] == 0.0 and reach[n, 1] == 0.0:
                    value[n] = 0.0  # nobody can get here: nothing to learn below
                    continue
                if not cs and p != trav:  # ES opponent: the value of its sampled action
                    for a in range(3):
                        c = children[n, a]
                        if c >= 0 and active[c]:
                            value[n] = value[c]
                    continue
                v = 0.0
                for a in range(3):
                    c = children[n, a]
                    if c >= 0:
                        v += sig[n, a] * value[c]
                value[n] = v
                # CS weighs regrets by the opponent's reach (values are player 0's) and sums the
                # acting player's strategy here; ES sampled the opponent's actions instead.
                scale = reach[n, 1 - p] * (1.0 if p == 0 else -1.0) if cs else 1.0
                for a in range(3):
                    c = children[n, a]
                    if c >= 0:
                        regret[row, a] += scale * (value[c] - v)
                        if plus and regret[row, a] < 0.0:
                            regret[row, a] = 0.0
                        if cs:
                            avg[row, a] += weight * reach[n, p] * sig[n, a]
            for n in range(N):
                active[n] = False
    return visited


class SampledSolver(SolverRows):
    """Regrets, strategy sums and iteration count of a sampled CFR run on one abstraction."""

    def __init__(
        self,
        game: GameDef,
        tables: DealTables | None = None,
        *,
        variant: str = "chance",
        gamma: float = 0.0,
        plus: bool = False,
        seed: int = 0,
        dtype: type = np.float64,
    ):
        if variant not in VARIANTS:
            raise ValueError(f"variant must be one of {sorted(VARIANTS)}, got {variant!r}")
        self.game = game
        self.tree = build_tree(game)
        self.tables = tables if tables is not None else lossless_tables(game)
        self.variant, self.gamma, self.plus, self.seed = variant, gamma, plus, seed
        self.layout = infoset_layout(self.tree, self.tables.num_buckets)
        n_sets = self.layout.num_infosets
        self.regret: np.ndarray = np.zeros((n_sets, 3), dtype=dtype)
        self.avg: np.ndarray = np.zeros((n_sets, 3), dtype=dtype)
        self.iteration = 0
        self.nodes_visited = 0
        self._end = subtree_ends(self.tree)
        self._board_through = np.array(
            [game.board_cards_through(r) for r in range(game.num_rounds)], dtype=np.int64
        )

    @property
    def deals_per_iteration(self) -> int:
        """Deals one iteration's regret updates sum over (one: the sampled deal)."""
        return 1

    def restore(self, regret: np.ndarray, avg: np.ndarray, iteration: int) -> None:
        """Continue from saved regrets and strategy sums after `iteration` iterations (deals are
        a function of seed and iteration, so nothing else carries over)."""
        self.regret[:] = regret
        self.avg[:] = avg
        self.iteration = int(iteration)

    def iterate(self, iterations: int = 1) -> None:
        """Run `iterations` more sampled iterations (deterministic for the seed)."""
        self.nodes_visited += _run(
            self.iteration, iterations, self.seed, VARIANTS[self.variant], self.gamma,
            self.plus, self.tree.arrays, self._end, self.layout.offsets, self.layout.ndec,
            self.game.deck_size, self.game.num_hole_cards, self._board_through,
            self.tables.lookup, self.tables.evaluator, self.regret, self.avg,
        )  # fmt: skip
        self.iteration += iterations

    def legal(self) -> np.ndarray:
        """(infosets, 3) legal-action mask."""
        return self.layout.legal()

    def average_strategy(self) -> np.ndarray:
        """(infosets, 3) average strategy; uniform over legal actions where never reached."""
        legal = self.legal()
        total = self.avg.sum(axis=1, keepdims=True)
        uniform = legal / legal.sum(axis=1, keepdims=True).clip(min=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(total > 0, self.avg / np.where(total > 0, total, 1.0), uniform)
