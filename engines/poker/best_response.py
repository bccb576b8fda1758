"""Exact best response in the real game against a bucketed limit-poker strategy, streamed by board.

The public tree (betting node x board) is walked with one vector per player over every private
hand: both players' reach probabilities under the fixed strategy going down, and both players'
best-response counterfactual values coming up (a best responder maximises at its own nodes and
sums over the other's, whose probabilities are already in its reach). Both seats' best
responses share one walk, one bucket lookup and one showdown ranking per board.

Boards are never materialised as boards x hands. The first round that deals board cards is
split into canonical boards (suit isomorphism, each with the number of raw boards it stands
for): the unit of chunked, resumable work. Within a chunk every later deal is walked one orbit
at a time under the suit permutations that fix the board so far (a monotone flop's turn has 23
orbits, not 49), and summed back over those permutations. On each board the bucket of every
hand is looked up once, showdowns are sorted sweeps with exact card removal (O(H) per terminal
for H hands), and a subtree neither player's strategy reaches is skipped. The last round, where
nearly all the work is, walks LANES of its entries side by side (all of one subtree shape):
each hand's subtree is walked once for every lane at a time, from a copy of the strategy in
(bucket, decision, action, lane) order, in two passes over the hands (the reach sums, then
the showdown sweep with the values going up). Values are sums over every complete deal (a hand
that ends by a fold in round r stands for every board completion after r), divided by the
number of deals at the root.

Suit symmetry returns the canonical boards' values to every raw board: with the strategy's
buckets suit-invariant (canonical indices), the values summed over a canonical board's orbit,
for a hand h, equal the orbit size over the size of h's own suit class times the sum of the
canonical board's values over that class. So a chunk stores, per canonical board, exit of the
earlier rounds and seat, one sum per hand class of the first round (169 for Hold'em).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations, permutations
from typing import NamedTuple

import numpy as np
from numba import njit

from gameforge.engines.poker.acpc import GameDef
from gameforge.engines.poker.betting import DECISION, FOLD_END, SHOWDOWN, BettingTree, TreeArrays
from gameforge.engines.poker.cfr import deals_after, num_deals
from gameforge.engines.poker.evaluator import EvalTables
from gameforge.engines.poker.isomorphism import HandIndexer
from gameforge.engines.poker.mccfr import BucketLookup, hand_buckets, showdown_order, tie_end


class LayoutArrays(NamedTuple):
    """The arrays of a `Layout` that the kernels read, passed as one argument."""

    round_list: np.ndarray
    round_start: np.ndarray
    local: np.ndarray
    entry_end: np.ndarray
    entry_id: np.ndarray


class Policy(NamedTuple):
    """A strategy in the solver's bucket-major layout: row offsets[r] + bucket * ndec[r] + slot."""

    strategy: np.ndarray  # (information sets, 3)
    offsets: np.ndarray  # (R,) int64
    ndec: np.ndarray  # (R,) int64 decision slots per round


@dataclass(frozen=True)
class Layout:
    """The betting tree cut into rounds: each round's nodes in preorder, and its entry nodes."""

    round_list: np.ndarray  # global node ids, round by round, preorder within a round
    round_start: np.ndarray  # (R + 1,) where each round's ids start in round_list
    local: np.ndarray  # (N,) position of a node within its round
    entry_id: np.ndarray  # (N,) index of an entry node among its round's entries; -1 otherwise
    entry_end: np.ndarray  # (N,) for an entry node: one past its round's last node under it
    entries: tuple[np.ndarray, ...]  # per round: entry node ids (the root; then calls into it)

    @property
    def arrays(self) -> LayoutArrays:
        """The arrays the kernels read."""
        return LayoutArrays(
            self.round_list, self.round_start, self.local, self.entry_end, self.entry_id
        )


def layout(tree: BettingTree, num_rounds: int) -> Layout:
    """Per-round node lists and entry nodes of a betting tree."""
    n = tree.num_nodes
    rounds = tree.round.astype(np.int64)
    lists = [np.flatnonzero(rounds == r) for r in range(num_rounds)]
    local = np.zeros(n, dtype=np.int64)
    for ids in lists:
        local[ids] = np.arange(ids.size)
    entry_id = np.full(n, -1, dtype=np.int64)
    entries = []
    for r in range(num_rounds):
        ids = lists[r]
        parents = tree.parent[ids]
        is_entry = (parents < 0) | (rounds[np.maximum(parents, 0)] != r)
        found = ids[is_entry]
        entry_id[found] = np.arange(found.size)
        entries.append(found.astype(np.int64))
    # Preorder: an entry's round-r nodes run until the next entry of the same round.
    entry_end = np.zeros(n, dtype=np.int64)
    for r in range(num_rounds):
        starts = local[entries[r]]
        ends = np.append(starts[1:], lists[r].size)
        entry_end[entries[r]] = ends
    round_start = np.concatenate([[0], np.cumsum([ids.size for ids in lists])]).astype(np.int64)
    return Layout(
        round_list=np.concatenate(lists).astype(np.int64),
        round_start=round_start,
        local=local,
        entry_id=entry_id,
        entry_end=entry_end,
        entries=tuple(entries),
    )


@dataclass(frozen=True)
class CanonicalBoards:
    """The boards of the first board-dealing round, up to suit isomorphism."""

    cards: np.ndarray  # (B, k) int8 one representative each, sorted
    weight: np.ndarray  # (B,) int64 raw boards it stands for (its orbit size)


def canonical_boards(game: GameDef, round_: int) -> CanonicalBoards:
    """Canonical boards of `round_`'s deal (cards dealt before it must be none)."""
    k = game.num_board_cards[round_]
    S = game.num_suits
    perms = [np.array(p) for p in permutations(range(S))]
    raw = np.array(list(combinations(range(game.deck_size), k)), dtype=np.int64)
    raw = raw.reshape(-1, k) if k else np.zeros((1, 0), dtype=np.int64)
    best = None
    for p in perms:
        mapped = np.sort((raw // S) * S + p[raw % S], axis=1)
        key = _pack(mapped, game.deck_size)
        best = key if best is None else np.minimum(best, key)
    assert best is not None
    keys, weight = np.unique(best, return_counts=True)
    cards = np.zeros((keys.size, k), dtype=np.int8)
    rest = keys.copy()
    for t in range(k - 1, -1, -1):
        cards[:, t] = rest % game.deck_size
        rest //= game.deck_size
    return CanonicalBoards(cards=cards, weight=weight.astype(np.int64))


def _pack(cards: np.ndarray, base: int) -> np.ndarray:
    key = np.zeros(cards.shape[0], dtype=np.int64)
    for t in range(cards.shape[1]):
        key = key * base + cards[:, t]
    return key


def hand_classes(game: GameDef, hands: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Suit-isomorphism class of every private hand (the first round's canonical index) and each
    class's size."""
    indexer = HandIndexer((game.num_hole_cards,), game.num_ranks, game.num_suits)
    cls = indexer.index(np.ascontiguousarray(hands, dtype=np.int8), 0).astype(np.int64)
    return cls, np.bincount(cls, minlength=int(indexer.size(0))).astype(np.int64)


def suit_permutations(num_suits: int) -> np.ndarray:
    """(S!, S) every permutation of the suits, the identity first."""
    return np.array(list(permutations(range(num_suits))), dtype=np.int64).reshape(-1, num_suits)


def _permute_cards(cards: np.ndarray, perm: np.ndarray) -> np.ndarray:
    """Cards (rank x suits + suit) with their suits renamed by perm, sorted."""
    s = perm.size
    return np.sort((cards // s) * s + perm[cards % s])


def stabiliser(perms: np.ndarray, group: np.ndarray, cards: np.ndarray) -> np.ndarray:
    """The members of `group` (indices into perms) that map the set `cards` onto itself."""
    key = np.sort(np.asarray(cards, dtype=np.int64))
    keep = [g for g in group if np.array_equal(_permute_cards(key, perms[g]), key)]
    return np.array(keep, dtype=np.int64)


def deal_orbits(
    perms: np.ndarray, group: np.ndarray, board: np.ndarray, k: int, deck: int
) -> list[tuple[np.ndarray, float, np.ndarray]]:
    """The deals of k more cards onto `board` up to the suit permutations of `group` (each of
    which fixes every round's cards so far): per orbit, its least member, the weight 1 / |its
    stabiliser| and that stabiliser. For any function V of a deal that the group moves with
    the hands, the sum of V over all deals at hand h is, summing orbit by orbit, sum over the
    group's g of sum over orbits of weight x V(representative) at g(h)."""
    used = set(int(c) for c in board)
    rest = [c for c in range(deck) if c not in used]
    counts: dict[tuple[int, ...], int] = {}
    for extra in combinations(rest, k):
        cards = np.array(extra, dtype=np.int64)
        least = min(tuple(_permute_cards(cards, perms[g])) for g in group)
        counts[least] = counts.get(least, 0) + 1
    out = []
    for least, size in sorted(counts.items()):
        cards = np.array(least, dtype=np.int64)
        out.append((cards, size / group.size, stabiliser(perms, group, cards)))
    return out


def hand_permutations(hands: np.ndarray, perms: np.ndarray, deck: int) -> np.ndarray:
    """(permutations, H): index of the hand each suit permutation maps hand h to."""
    index = {tuple(int(c) for c in hand): i for i, hand in enumerate(hands)}
    out = np.empty((perms.shape[0], hands.shape[0]), dtype=np.int64)
    cards = hands.astype(np.int64)
    for g in range(perms.shape[0]):
        mapped = _permute_cards(cards, perms[g])
        out[g] = [index[tuple(int(c) for c in row)] for row in mapped]
    return out


# ------------------------------------------------------------------------------- kernels


def walked_boards(
    game: GameDef, first: int, boards: CanonicalBoards, perms: np.ndarray
) -> np.ndarray:
    """Complete boards of the last round walked under each canonical board of round `first`
    (its share of the work): one per orbit of every later deal under the suit permutations
    that fix the cards before it. Needs no strategy: progress and rates can be counted from
    it alone."""
    every = np.arange(perms.shape[0])
    rounds = list(range(first + 1, game.num_rounds))

    def count(board: np.ndarray, group: np.ndarray, rest: list[int]) -> int:
        if not rest:
            return 1
        k = game.num_board_cards[rest[0]]
        if len(rest) == 1 and k == 1:  # Burnside: orbits = mean number of cards left fixed
            used = set(board.tolist())
            suits = perms[group] == np.arange(game.num_suits)[None, :]
            left = np.bincount(
                [c % game.num_suits for c in range(game.deck_size) if c not in used],
                minlength=game.num_suits,
            )
            return int(round(float((suits * left[None, :]).sum()) / group.size))
        return sum(
            count(np.concatenate([board, cards]), sub, rest[1:])
            for cards, _, sub in deal_orbits(perms, group, board, k, game.deck_size)
        )

    return np.array(
        [count(b.astype(np.int64), stabiliser(perms, every, b), rounds) for b in boards.cards],
        dtype=np.int64,
    )


@njit(cache=True, nogil=True)
def board_buckets(
    hands: np.ndarray,
    hand_bits: np.ndarray,
    board: np.ndarray,
    nb: int,
    r: int,
    lookup: BucketLookup,
    out: np.ndarray,
) -> None:
    """Bucket in round r of every hand on `board[:nb]`; -1 where it shares a card with it."""
    bits = np.uint64(0)
    for t in range(nb):
        bits |= np.uint64(1) << np.uint64(board[t])
    hand_buckets(hands, board, r, nb, lookup, bits, hand_bits, out)


@njit(cache=True, nogil=True)
def _fold_values(
    ro: np.ndarray, hands: np.ndarray, bk: np.ndarray, deck: int, scale: float, out: np.ndarray
) -> None:
    """out[h] = scale * opponent reach sharing no card with h (0 where h is not valid)."""
    H = ro.shape[0]
    per_card = np.zeros(deck)
    total = 0.0
    nh = hands.shape[1]
    for h in range(H):
        v = ro[h]
        if v != 0.0:
            total += v
            for t in range(nh):
                per_card[hands[h, t]] += v
    for h in range(H):
        if bk[h] < 0:
            out[h] = 0.0
            continue
        v = total
        for t in range(nh):
            v -= per_card[hands[h, t]]
        if nh == 2:
            v += ro[h]  # h itself was removed twice
        out[h] = v * scale


@njit(cache=True, nogil=True)
def _entry_down(
    g_entry: int,
    r: int,
    entry_reach: np.ndarray,
    bk: np.ndarray,
    base: int,
    tree: TreeArrays,
    lay: LayoutArrays,
    policy: Policy,
    reach: np.ndarray,
    exit_reach: np.ndarray,
    exit_alive: np.ndarray,
) -> None:
    """Both players' reach at every round-r node under one entry (rows local - base), and at
    the calls that leave the round (rows entry_id of the next round's entry)."""
    round_list, round_start, local, entry_end, entry_id = lay
    strategy, offsets, ndec = policy
    kind, player, rnd, spent, children, slot = tree
    H = bk.shape[0]
    s = local[g_entry]
    t_end = entry_end[g_entry]
    rs = round_start[r]
    for h in range(H):
        ok = bk[h] >= 0
        reach[s - base, 0, h] = entry_reach[0, h] if ok else 0.0
        reach[s - base, 1, h] = entry_reach[1, h] if ok else 0.0
    stride = ndec[r]
    for i in range(s, t_end):
        g = round_list[rs + i]
        if kind[g] != DECISION:
            continue
        q = player[g]
        row0 = offsets[r] + slot[g]
        src = reach[i - base]
        for a in range(3):
            c = children[g, a]
            if c < 0:
                continue
            dst = reach[local[c] - base] if rnd[c] == r else exit_reach[entry_id[c]]
            alive = False
            for h in range(H):
                b = bk[h]
                v = src[q, h] * strategy[row0 + b * stride, a] if b >= 0 else 0.0
                dst[q, h] = v
                dst[1 - q, h] = src[1 - q, h]
                if v != 0.0 or src[1 - q, h] != 0.0:
                    alive = True
            if rnd[c] != r:
                exit_alive[entry_id[c]] = alive


@njit(cache=True, nogil=True)
def _entry_up(
    g_entry: int,
    r: int,
    bk: np.ndarray,
    base: int,
    tree: TreeArrays,
    lay: LayoutArrays,
    hands: np.ndarray,
    deck: int,
    fold_scale: float,
    reach: np.ndarray,
    exit_values: np.ndarray,
    exit_alive: np.ndarray,
    values: np.ndarray,
    out: np.ndarray,
) -> None:
    """Both seats' best-response values at every node of a round that is not the last under one
    entry, bottom-up (folds and the calls leaving the round end it); the entry's into out."""
    round_list, round_start, local, entry_end, entry_id = lay
    kind, player, rnd, spent, children, slot = tree
    H = bk.shape[0]
    s = local[g_entry]
    t_end = entry_end[g_entry]
    rs = round_start[r]
    for i in range(t_end - 1, s - 1, -1):
        g = round_list[rs + i]
        k = kind[g]
        v = values[i - base]
        if k == FOLD_END:
            for p in range(2):
                pay = -float(spent[g, p]) if player[g] == p else float(spent[g, 1 - p])
                _fold_values(reach[i - base, 1 - p], hands, bk, deck, pay * fold_scale, v[p])
            continue
        q = player[g]
        v[:] = 0.0
        for h in range(H):
            v[q, h] = -np.inf
        for a in range(3):
            c = children[g, a]
            if c < 0:
                continue
            if rnd[c] == r:
                cv = values[local[c] - base]
                dead = False
            else:
                cv = exit_values[entry_id[c]]
                dead = not exit_alive[entry_id[c]]
            for h in range(H):
                x = 0.0 if dead else cv[q, h]
                if x > v[q, h]:
                    v[q, h] = x
                if not dead:
                    v[1 - q, h] += cv[1 - q, h]
        for h in range(H):
            if bk[h] < 0:
                v[q, h] = 0.0
    out[:, :] = values[s - base]


# Plan columns of one last-round node (see `_entry_plan`).
_KIND, _PLAYER, _CHILD, _DEC, _COL, _ROW = 0, 1, 2, 5, 6, 7
_PLAN_WIDTH = 9
# Last-round entries walked side by side. Loops over this many lanes are vectorised; numba
# leaves loops of 8 or 16 scalar, and 64 measured fastest on Hold'em (bench/BENCHMARKS.md).
LANES = 64
BOARD_BATCH = 64  # complete boards per call of the last round's kernel


@njit(cache=True, nogil=True)
def _entry_plan(
    e: int,
    r: int,
    tree: TreeArrays,
    lay: LayoutArrays,
    fold_scale: float,
    plan: np.ndarray,
    scale: np.ndarray,
) -> tuple[int, int, int, int]:
    """One last-round entry's subtree as a flat plan, one row per local node j: kind, player,
    three children (local), decision index (slot minus the entry's first), terminal column,
    reach row of each seat. Terminal columns come two per terminal (seat 0's value, then seat
    1's), showdowns first; scale[col] is each column's stake or pay. A child's reach row is new
    for the seat that acts and its parent's for the other (rows 0 and 1: the entry's).
    Returns (nodes, showdown columns, columns, the entry's first decision slot)."""
    round_list, round_start, local, entry_end, entry_id = lay
    kind, player, rnd, spent, children, slot = tree
    s = local[e]
    w = entry_end[e] - s
    rs = round_start[r]
    n_sd = 0
    n_term = 0
    first_slot = -1
    for j in range(w):
        g = round_list[rs + s + j]
        if kind[g] == SHOWDOWN:
            n_sd += 1
        if kind[g] != DECISION:
            n_term += 1
        elif first_slot < 0:
            first_slot = slot[g]
    sd_col = 0
    fold_col = 2 * n_sd
    plan[0, _ROW] = 0
    plan[0, _ROW + 1] = 1
    rows = 2
    for j in range(w):
        g = round_list[rs + s + j]
        k = kind[g]
        plan[j, _KIND] = k
        plan[j, _PLAYER] = player[g]
        for a in range(3):
            c = children[g, a]
            plan[j, _CHILD + a] = local[c] - s if c >= 0 else -1
        plan[j, _DEC] = slot[g] - first_slot if k == DECISION else -1
        if k == SHOWDOWN:
            col = sd_col
            scale[col] = float(spent[g, 1])
            scale[col + 1] = float(spent[g, 0])
            sd_col += 2
        elif k == FOLD_END:
            col = fold_col
            f = player[g]
            scale[col] = (-float(spent[g, 0]) if f == 0 else float(spent[g, 1])) * fold_scale
            scale[col + 1] = (-float(spent[g, 1]) if f == 1 else float(spent[g, 0])) * fold_scale
            fold_col += 2
        else:
            col = -1
        plan[j, _COL] = col
        if k == DECISION:
            q = player[g]
            for a in range(3):
                c = plan[j, _CHILD + a]
                if c >= 0:
                    plan[c, _ROW + q] = rows
                    plan[c, _ROW + 1 - q] = plan[j, _ROW + 1 - q]
                    rows += 1
    return w, 2 * n_sd, 2 * n_term, first_slot


class LastRound(NamedTuple):
    """The last round's entries packed E lanes at a time (entries of one subtree shape share a
    group), with each group's strategy laid out for the lanes: the kernel's whole input."""

    lane_entry: np.ndarray  # (G, E) entry index (entry_id) of each lane; -1 if empty
    plan: np.ndarray  # (G, widest, _PLAN_WIDTH) the group's shared subtree plan
    info: np.ndarray  # (G, 3) nodes, showdown columns, columns
    col_row: np.ndarray  # (G, 2 widest) the reach row each terminal column reads (the opponent's)
    col_node: np.ndarray  # (G, 2 widest) the terminal node of each column (its seat: col % 2)
    scale: np.ndarray  # (G, 2 widest, E) each column's stake or pay, per lane
    strategy: np.ndarray  # (G, buckets, decisions, 3, E)


def last_round_lanes(
    tree: BettingTree,
    lay: Layout,
    policy: Policy,
    last: int,
    fold_scale: float,
    width: int = 0,
    dtype: type = np.float64,
) -> LastRound:
    """Pack the last round's entries into groups of `width` (default LANES) with the same
    subtree shape, and copy each group's strategy into (bucket, decision, action, lane) order:
    a hand's rows for a group are then one contiguous 3 x decisions x width read."""
    width = width or LANES
    entries = lay.entries[last]
    widest = max(int(lay.entry_end[e] - lay.local[e]) for e in entries)
    plan = np.full((widest, _PLAN_WIDTH), -1, dtype=np.int64)
    scale = np.zeros(2 * widest)
    by_shape: dict[bytes, list[tuple[int, int, np.ndarray]]] = {}
    shapes: dict[bytes, tuple[np.ndarray, tuple[int, int, int]]] = {}
    for e in entries:
        plan[:] = -1
        w, n_sd, n_cols, first = _entry_plan(
            int(e), last, tree.arrays, lay.arrays, fold_scale, plan, scale
        )
        key = plan[:w].tobytes()
        shapes.setdefault(key, (plan.copy(), (w, n_sd, n_cols)))
        by_shape.setdefault(key, []).append((int(lay.entry_id[e]), first, scale[:n_cols].copy()))
    width = min(width, max(len(members) for members in by_shape.values()))
    groups = [
        (key, members[i : i + width])
        for key, members in by_shape.items()
        for i in range(0, len(members), width)
    ]
    strategy, offsets, ndec = policy
    stride = int(ndec[last])
    buckets = (strategy.shape[0] - int(offsets[last])) // max(stride, 1)
    decisions = max(info[0] - info[2] // 2 for _, info in shapes.values())
    G = len(groups)
    out = LastRound(
        lane_entry=np.full((G, width), -1, dtype=np.int64),
        plan=np.zeros((G, widest, _PLAN_WIDTH), dtype=np.int64),
        info=np.zeros((G, 3), dtype=np.int64),
        col_row=np.zeros((G, 2 * widest), dtype=np.int64),
        col_node=np.zeros((G, 2 * widest), dtype=np.int64),
        scale=np.zeros((G, 2 * widest, width), dtype=dtype),
        strategy=np.zeros((G, buckets, max(decisions, 1), 3, width), dtype=strategy.dtype),
    )
    rows = int(offsets[last]) + stride * np.arange(buckets, dtype=np.int64)
    for g, (key, members) in enumerate(groups):
        shape_plan, info = shapes[key]
        out.plan[g] = shape_plan
        out.info[g] = info
        for j in range(info[0]):
            col = shape_plan[j, _COL]
            if col >= 0:  # seat 0's value reads seat 1's reach, and the other way round
                out.col_row[g, col] = shape_plan[j, _ROW + 1]
                out.col_row[g, col + 1] = shape_plan[j, _ROW]
                out.col_node[g, col : col + 2] = j
        nd = info[0] - info[2] // 2
        for lane, (x, first, lane_scale) in enumerate(members):
            out.lane_entry[g, lane] = x
            out.scale[g, : lane_scale.size, lane] = lane_scale
            out.strategy[g, :, :nd, :, lane] = strategy[rows[:, None] + first + np.arange(nd)]
    return out


@njit(cache=True, nogil=True)
def _prepare_boards(
    boards: np.ndarray,
    r: int,
    hands: np.ndarray,
    hand_bits: np.ndarray,
    lookup: BucketLookup,
    ev: EvalTables,
    deck: int,
    n_valid: np.ndarray,
    order: np.ndarray,
    bucket: np.ndarray,
    cards: np.ndarray,
    group_end: np.ndarray,
) -> None:
    """Per board: its valid hands in showdown order, their buckets and hole cards (a one-card
    hand's second is `deck`, a row of the per-card sums that stays 0), and where each hand's
    group of equal rank ends."""
    H = hands.shape[0]
    nb = boards.shape[1]
    nh = hands.shape[1]
    bk = np.empty(H, dtype=np.int64)
    for b in range(boards.shape[0]):
        board_buckets(hands, hand_bits, boards[b], nb, r, lookup, bk)
        rank, o = showdown_order(hands, bk, boards[b], nb, ev)
        n = o.shape[0]
        n_valid[b] = n
        for i in range(n):
            h = o[i]
            order[b, i] = h
            bucket[b, i] = bk[h]
            cards[b, i, 0] = hands[h, 0]
            cards[b, i, 1] = hands[h, 1] if nh == 2 else deck
        i = 0
        while i < n:
            j = tie_end(rank, o, i, n)
            for q in range(i, j):
                group_end[b, q] = j
            i = j


@njit(cache=True, nogil=True)
def _lanes_down(
    plan: np.ndarray,
    w: int,
    strategy: np.ndarray,
    bucket: int,
    reach: np.ndarray,
    h: int,
    rows: np.ndarray,
    live: np.ndarray,
) -> None:
    """Both seats' reach down one hand's subtree in every lane, into the plan's reach rows; a
    seat with no reach in any lane (live[h, s] False) is skipped, its rows left stale."""
    E = reach.shape[2]
    for s in range(2):
        for lane in range(E):
            rows[s, lane] = reach[h, s, lane]
    for j in range(w):
        if plan[j, _KIND] != DECISION:
            continue
        q = plan[j, _PLAYER]
        if not live[h, q]:
            continue
        d = plan[j, _DEC]
        src = plan[j, _ROW + q]
        c0, c1, c2 = plan[j, _CHILD], plan[j, _CHILD + 1], plan[j, _CHILD + 2]
        if c0 >= 0 and c2 >= 0:  # fold, call and raise: one loop
            r0, r1, r2 = plan[c0, _ROW + q], plan[c1, _ROW + q], plan[c2, _ROW + q]
            for lane in range(E):
                v = rows[src, lane]
                rows[r0, lane] = v * strategy[bucket, d, 0, lane]
                rows[r1, lane] = v * strategy[bucket, d, 1, lane]
                rows[r2, lane] = v * strategy[bucket, d, 2, lane]
        else:
            for a in range(3):
                c = plan[j, _CHILD + a]
                if c < 0:
                    continue
                dst = plan[c, _ROW + q]
                for lane in range(E):
                    rows[dst, lane] = rows[src, lane] * strategy[bucket, d, a, lane]


@njit(cache=True, nogil=True)
def _add_reach(
    rows: np.ndarray,
    col_row: np.ndarray,
    n_cols: int,
    x: int,
    y: int,
    per_card: np.ndarray,
    live0: bool,
    live1: bool,
) -> None:
    """Add one hand's opponent reach in each of the first n_cols columns to the sums over
    hands of its two cards' rows. Column c reads seat 1 - c % 2's reach: a seat without
    reach adds nothing."""
    E = rows.shape[1]
    for c in range(n_cols):
        if not (live1 if c % 2 == 0 else live0):
            continue
        rr = col_row[c]
        for lane in range(E):
            v = rows[rr, lane]
            per_card[x, c, lane] += v
            per_card[y, c, lane] += v


@njit(cache=True, nogil=True)
def _total_from_cards(per_card: np.ndarray, n_cols: int, total: np.ndarray) -> None:
    """The sums over all hands from the per-card sums: every hand was added to two rows (a
    one-card hand's second to the spare row), so the total is half their sum. One pass over
    the card rows instead of a third add per hand (1.06x on C8, measured alone)."""
    E = total.shape[1]
    total[:n_cols] = 0.0
    for k in range(per_card.shape[0]):
        for c in range(n_cols):
            for lane in range(E):
                total[c, lane] += per_card[k, c, lane]
    for c in range(n_cols):
        for lane in range(E):
            total[c, lane] *= 0.5


@njit(cache=True, nogil=True)
def _take_reach(
    rows: np.ndarray,
    col_row: np.ndarray,
    n_cols: int,
    x: int,
    y: int,
    total: np.ndarray,
    per_card: np.ndarray,
    live0: bool,
    live1: bool,
) -> None:
    """Take twice one hand's opponent reach from the first n_cols columns' sums (the total and
    the hand's two cards' rows): the showdown sweep's all - 2 x seen. (`_add_reach` with a
    factor would multiply a float32 row by a float64 scalar: 0.77x on the whole kernel.)"""
    E = rows.shape[1]
    for c in range(n_cols):
        if not (live1 if c % 2 == 0 else live0):
            continue
        rr = col_row[c]
        for lane in range(E):
            v = rows[rr, lane] + rows[rr, lane]
            total[c, lane] -= v
            per_card[x, c, lane] -= v
            per_card[y, c, lane] -= v


@njit(cache=True, nogil=True)
def _lanes_board(
    n: int,
    order: np.ndarray,
    bucket: np.ndarray,
    cards: np.ndarray,
    group_end: np.ndarray,
    two: bool,
    plan: np.ndarray,
    info: np.ndarray,
    col_row: np.ndarray,
    col_node: np.ndarray,
    scale: np.ndarray,
    strategy: np.ndarray,
    reach: np.ndarray,
    live: np.ndarray,
    weight: float,
    out: np.ndarray,
    work: tuple[np.ndarray, ...],
) -> None:
    """Add weight x both seats' best-response values at a group's entries on one complete board
    to out (H, 2, E), for the board's n valid hands in showdown order.

    Two passes over the hands, each hand's subtree walked in all lanes at once. The first sums
    every terminal column's opponent reach over all hands and per card. The second goes in
    showdown order (a group of equal rank at a time), turning each showdown column's sums into
    all - 2 x (the hands seen so far), and gives each hand its terminal values with exact card
    removal: a showdown pays stake x (compatible reach beaten - compatible reach that beats it),
    a fold pay x every compatible hand's reach. The hand's values then go up its subtree (the
    seat that responds takes its best action, the other's are summed). Each step is one loop
    over the lanes of a column: the loops are few, since each costs a few ns to start whatever
    its length."""
    node_reach, group_reach, below, value, t_all, p_all = work
    w, n_sd, n_cols = info[0], info[1], info[2]
    E = reach.shape[2]
    # a one-card hand: its second card is a row of zeros to subtract, and a row to add to
    spare = p_all.shape[0] - 1
    p_all[:, :n_cols] = 0.0
    for i in range(n):
        h = order[i]
        if not (live[h, 0] or live[h, 1]):
            continue  # no reach in any lane: adds nothing to the sums
        _lanes_down(plan, w, strategy, bucket[i], reach, h, node_reach, live)
        _add_reach(node_reach, col_row, n_cols, cards[i, 0], cards[i, 1] if two else spare,
                   p_all, live[h, 0], live[h, 1])  # fmt: skip
    _total_from_cards(p_all, n_cols, t_all)
    # The showdown columns' sums now become all - 2 x seen (seen: the hands before this one in
    # showdown order), in place: a hand's compatible reach beaten minus the compatible reach
    # that beats it is -(t - p[x] - p[y]) of them, less its own reach (counted once per card).
    i = 0
    while i < n:
        j_end = group_end[i]
        if j_end == i + 1:  # one hand of its rank: its showdowns and the sums at once
            gr = group_reach[0]
            h = order[i]
            if live[h, 0] or live[h, 1]:
                _lanes_down(plan, w, strategy, bucket[i], reach, h, gr, live)
            x, y = cards[i, 0], cards[i, 1]
            for c in range(n_sd):
                rr = col_row[c]
                j, p = col_node[c], c % 2
                if not live[h, 1 - p]:  # no reach to take: r = 0
                    for lane in range(E):
                        d = p_all[x, c, lane] + p_all[y, c, lane] - t_all[c, lane]
                        value[j, p, lane] = scale[c, lane] * d
                elif two:
                    for lane in range(E):
                        r = gr[rr, lane]
                        d = p_all[x, c, lane] + p_all[y, c, lane] - t_all[c, lane]
                        value[j, p, lane] = scale[c, lane] * (d - r)
                        t_all[c, lane] -= r + r
                        p_all[x, c, lane] -= r + r
                        p_all[y, c, lane] -= r + r
                else:  # row y (= deck) stays 0: no self-removal beyond the one card
                    for lane in range(E):
                        r = gr[rr, lane]
                        value[j, p, lane] = scale[c, lane] * (p_all[x, c, lane] - t_all[c, lane])
                        t_all[c, lane] -= r + r
                        p_all[x, c, lane] -= r + r
        else:  # a tie group: the mean of the differences before and after the whole group
            for q in range(i, j_end):
                if live[order[q], 0] or live[order[q], 1]:
                    _lanes_down(plan, w, strategy, bucket[q], reach, order[q], group_reach[q - i],
                                live)  # fmt: skip
                x, y = cards[q, 0], cards[q, 1]
                for c in range(n_sd):
                    for lane in range(E):
                        below[q - i, c, lane] = (
                            p_all[x, c, lane] + p_all[y, c, lane] - t_all[c, lane]
                        )
            for q in range(i, j_end):
                h = order[q]
                y = cards[q, 1] if two else spare
                _take_reach(group_reach[q - i], col_row, n_sd, cards[q, 0], y, t_all, p_all,
                            live[h, 0], live[h, 1])  # fmt: skip
        for q in range(i, j_end):
            gr = group_reach[q - i]
            x, y = cards[q, 0], cards[q, 1]
            h = order[q]
            if j_end > i + 1:  # a tie group's showdowns (one value buffer: hand by hand)
                for c in range(n_sd):
                    j, p = col_node[c], c % 2
                    for lane in range(E):
                        d = p_all[x, c, lane] + p_all[y, c, lane] - t_all[c, lane]
                        value[j, p, lane] = 0.5 * scale[c, lane] * (below[q - i, c, lane] + d)
            for c in range(n_sd, n_cols):  # folds: every compatible hand's reach
                rr = col_row[c]
                j, p = col_node[c], c % 2
                if two and live[h, 1 - p]:  # the hand itself was removed twice
                    for lane in range(E):
                        every = t_all[c, lane] - p_all[x, c, lane] - p_all[y, c, lane]
                        value[j, p, lane] = scale[c, lane] * (every + gr[rr, lane])
                elif two:
                    for lane in range(E):
                        every = t_all[c, lane] - p_all[x, c, lane] - p_all[y, c, lane]
                        value[j, p, lane] = scale[c, lane] * every
                else:
                    for lane in range(E):
                        value[j, p, lane] = scale[c, lane] * (t_all[c, lane] - p_all[x, c, lane])
            for j in range(w - 1, -1, -1):  # values up: one loop per node, children at once
                if plan[j, _KIND] != DECISION:
                    continue
                p = plan[j, _PLAYER]
                k0, k1, k2 = plan[j, _CHILD], plan[j, _CHILD + 1], plan[j, _CHILD + 2]
                if k0 < 0:  # no fold: call and raise, or call alone
                    k0, k1, k2 = k1, k2, -1
                if k1 < 0:
                    k1, k2 = k2, -1
                if k2 >= 0:
                    for lane in range(E):
                        value[j, p, lane] = max(
                            max(value[k0, p, lane], value[k1, p, lane]), value[k2, p, lane]
                        )
                        value[j, 1 - p, lane] = (
                            value[k0, 1 - p, lane] + value[k1, 1 - p, lane]
                        ) + value[k2, 1 - p, lane]
                elif k1 >= 0:
                    for lane in range(E):
                        value[j, p, lane] = max(value[k0, p, lane], value[k1, p, lane])
                        value[j, 1 - p, lane] = value[k0, 1 - p, lane] + value[k1, 1 - p, lane]
                else:
                    for lane in range(E):
                        value[j, p, lane] = value[k0, p, lane]
                        value[j, 1 - p, lane] = value[k0, 1 - p, lane]
            for lane in range(E):
                out[h, 0, lane] += weight * value[0, 0, lane]
                out[h, 1, lane] += weight * value[0, 1, lane]
        i = j_end


@njit(cache=True, nogil=True)
def deal_last_round(
    r: int,
    wanted: np.ndarray,
    reach_in: np.ndarray,
    boards: np.ndarray,
    weights: np.ndarray,
    lanes: LastRound,
    hands: np.ndarray,
    hand_bits: np.ndarray,
    lookup: BucketLookup,
    ev: EvalTables,
    deck: int,
    values_out: np.ndarray,
) -> None:
    """Add sum over boards b of weights[b] x the best-response values (2, H) at the last
    round's entries on complete board b (hands sharing a card with it add 0) to
    values_out[entry_id], for the entries `wanted` marks. The reach at those entries is the
    same on every board.

    Entries go E at a time and boards inside a group: each hand's strategy rows for a group
    are one contiguous read, and every per-hand step is a loop across the lanes that the
    compiler vectorises."""
    G, E = lanes.lane_entry.shape
    H = hands.shape[0]
    B = boards.shape[0]
    two = hands.shape[1] == 2
    n_valid = np.zeros(B, dtype=np.int64)
    order = np.zeros((B, H), dtype=np.int64)
    bucket = np.zeros((B, H), dtype=np.int64)
    cards = np.zeros((B, H, 2), dtype=np.int64)
    group_end = np.zeros((B, H), dtype=np.int64)
    _prepare_boards(
        boards, r, hands, hand_bits, lookup, ev, deck, n_valid, order, bucket, cards, group_end
    )
    widest = lanes.plan.shape[1]
    cols = 2 * widest
    rows = widest + 1  # reach rows: two at the entry, one per child
    real = lanes.scale.dtype  # the sums' precision
    work = (
        np.zeros((rows, E), real),  # both seats' reach down one hand's subtree
        np.empty((H, rows, E), real),  # the same for each hand of a group of equal rank
        np.empty((H, cols, E), real),  # a tie group's showdown differences before it
        np.zeros((widest, 2, E), real),  # values at each node
        np.zeros((cols, E), real),  # every hand's reach per column
        # the same per card; row `deck` (a one-card hand's second) stays 0, deck + 1 is
        # where a one-card hand's additions to its second card go
        np.zeros((deck + 2, cols, E), real),
    )
    reach = np.zeros((H, 2, E), real)
    live = np.zeros((H, 2), dtype=np.bool_)  # a seat's hand with reach in some lane
    out = np.zeros((H, 2, E))
    for g in range(G):
        live[:] = False
        for lane in range(E):
            x = lanes.lane_entry[g, lane]
            use = x >= 0 and wanted[x]
            for h in range(H):
                for s in range(2):
                    v = reach_in[x, s, h] if use else 0.0
                    reach[h, s, lane] = v
                    if v != 0.0:
                        live[h, s] = True
        if not live.any():
            continue
        out[:] = 0.0
        strategy = lanes.strategy[g]
        for b in range(B):
            n = n_valid[b]
            _lanes_board(
                n, order[b, :n], bucket[b, :n], cards[b, :n], group_end[b, :n], two,
                lanes.plan[g], lanes.info[g], lanes.col_row[g], lanes.col_node[g], lanes.scale[g],
                strategy, reach, live,
                weights[b], out, work,
            )  # fmt: skip
        for lane in range(E):
            x = lanes.lane_entry[g, lane]
            if x >= 0 and wanted[x]:
                for s in range(2):
                    for h in range(H):
                        values_out[x, s, h] += out[h, s, lane]


@njit(cache=True, nogil=True)
def round_down(
    r: int,
    entries: np.ndarray,
    reach_in: np.ndarray,
    bk: np.ndarray,
    tree: TreeArrays,
    lay: LayoutArrays,
    policy: Policy,
    reach: np.ndarray,
    exit_reach: np.ndarray,
    exit_alive: np.ndarray,
) -> None:
    """Reach at every node of a round that is not the last, and at the calls leaving it."""
    entry_id = lay.entry_id
    exit_alive[:] = False
    for e in entries:
        _entry_down(
            e, r, reach_in[entry_id[e]], bk, 0, tree, lay, policy, reach, exit_reach,
            exit_alive,
        )  # fmt: skip


@njit(cache=True, nogil=True)
def round_up(
    r: int,
    entries: np.ndarray,
    bk: np.ndarray,
    tree: TreeArrays,
    lay: LayoutArrays,
    hands: np.ndarray,
    deck: int,
    fold_scale: float,
    reach: np.ndarray,
    exit_values: np.ndarray,
    exit_alive: np.ndarray,
    values_out: np.ndarray,
) -> None:
    """Values at a round's entries from its exits' values (a round that is not the last)."""
    round_list, round_start, local, entry_end, entry_id = lay
    H = bk.shape[0]
    values = np.empty((reach.shape[0], 2, H))
    out = np.empty((2, H))
    for e in entries:
        _entry_up(
            e, r, bk, 0, tree, lay, hands, deck, fold_scale, reach, exit_values, exit_alive,
            values, out,
        )  # fmt: skip
        values_out[entry_id[e]] = out


# ------------------------------------------------------------------------------- driver


@dataclass(frozen=True)
class TopResult:
    """Both seats' best-response values and where each comes from."""

    values: np.ndarray  # (2,) chips per game of a best response in each seat
    board_contribution: np.ndarray  # (B, 2) chips each canonical board adds (its orbit's)
    fold_contribution: np.ndarray  # (2,) chips from hands that end before the first board


class BestResponse:
    """Exact best response of both seats against one strategy of a two-player limit game.

    `strategy` is (information sets, 3) in the solver's bucket-major layout (row offsets[r] +
    bucket * ndec[r] + slot); `lookup` gives the strategy's bucket of a hand in each round.
    `precision` is the last round's sums' (float32 halves their memory traffic; every value
    is still summed over boards in float64).
    """

    def __init__(
        self,
        game: GameDef,
        tree: BettingTree,
        strategy: np.ndarray,
        offsets: np.ndarray,
        ndec: np.ndarray,
        lookup: BucketLookup,
        ev: EvalTables,
        precision: str = "float64",
    ):
        if game.num_players != 2 or game.betting_type != "limit":
            raise ValueError("best responses are computed for two-player limit games")
        if game.num_hole_cards not in (1, 2):
            raise ValueError("card removal is implemented for one or two hole cards")
        self.game, self.tree = game, tree
        self.policy = Policy(
            strategy, np.asarray(offsets, dtype=np.int64), np.asarray(ndec, dtype=np.int64)
        )
        self.lookup, self.ev = lookup, ev
        self.layout = layout(tree, game.num_rounds)
        self.hands = np.array(
            list(combinations(range(game.deck_size), game.num_hole_cards)), dtype=np.int8
        )
        self.hand_bits = (np.uint64(1) << self.hands.astype(np.uint64)).sum(axis=1)
        self.hand_bits = self.hand_bits.astype(np.uint64)
        dealt = [r for r in range(game.num_rounds) if game.num_board_cards[r] > 0]
        self.first = dealt[0] if dealt else 0  # the round whose boards are the chunks
        self.boards = canonical_boards(game, self.first)
        self.classes, self.class_size = hand_classes(game, self.hands)
        self.deals_after = deals_after(game)
        self.num_deals = num_deals(game)
        self.last = game.num_rounds - 1
        self.perms = suit_permutations(game.num_suits)
        self.hand_perm = hand_permutations(self.hands, self.perms, game.deck_size)
        if precision not in ("float64", "float32"):
            raise ValueError(f"precision is float64 or float32, not {precision}")
        self.lanes = last_round_lanes(
            tree, self.layout, self.policy, self.last, float(self.deals_after[self.last]),
            dtype=np.float32 if precision == "float32" else np.float64,
        )  # fmt: skip

    @property
    def num_hands(self) -> int:
        """Private hands of one player (1,326 in Hold'em)."""
        return int(self.hands.shape[0])

    def _buckets(self, r: int, board: np.ndarray, nb: int) -> np.ndarray:
        bk = np.empty(self.num_hands, dtype=np.int64)
        board_buckets(self.hands, self.hand_bits, board, nb, r, self.lookup, bk)
        return bk

    def walked_boards(self) -> np.ndarray:
        """Complete boards of the last round walked under each canonical board (its share of
        the work): one per orbit of every later deal under the suit permutations that fix the
        cards before it."""
        return walked_boards(self.game, self.first, self.boards, self.perms)

    # --- the rounds before the first board: reach down, then values up

    def top_reach(self) -> tuple[list[np.ndarray], np.ndarray]:
        """Reach at every node of the rounds before the first board (one array a round), and
        at the first board round's entries: (entries, 2, H)."""
        H = self.num_hands
        lay = self.layout
        entry = np.ones((1, 2, H))
        per_round = []
        for r in range(self.first):
            bk = self._buckets(r, np.zeros(0, dtype=np.int8), 0)
            reach = np.zeros((lay.round_start[r + 1] - lay.round_start[r], 2, H))
            exit_reach = np.zeros((lay.entries[r + 1].size, 2, H))
            alive = np.zeros(lay.entries[r + 1].size, dtype=np.bool_)
            round_down(
                r, lay.entries[r], entry, bk, self.tree.arrays, lay.arrays, self.policy, reach,
                exit_reach, alive,
            )  # fmt: skip
            per_round.append(reach)
            entry = exit_reach
        return per_round, entry

    def board_values(self, board: np.ndarray, entry_reach: np.ndarray) -> np.ndarray:
        """(entries of the first board round, 2, H): values under one canonical board."""
        board = np.ascontiguousarray(board, dtype=np.int8)
        entries = self.layout.entries[self.first]
        alive = (entry_reach != 0).any(axis=(1, 2))
        every = np.arange(self.perms.shape[0], dtype=np.int64)
        group = stabiliser(self.perms, every, board)
        return self._level(self.first, board, board.size, entries[alive], entry_reach, group)

    def class_sums(self, values: np.ndarray) -> np.ndarray:
        """(..., H) -> (..., classes): sums over each suit class of hands."""
        flat = values.reshape(-1, values.shape[-1])
        out = np.zeros((flat.shape[0], self.class_size.size))
        for i in range(flat.shape[0]):
            out[i] = np.bincount(self.classes, weights=flat[i], minlength=self.class_size.size)
        return out.reshape(*values.shape[:-1], self.class_size.size)

    def _symmetrise(self, values: np.ndarray, group: np.ndarray) -> np.ndarray:
        """Sum over the group's permutations g of values at g(h), for every hand h."""
        if group.size == 1:
            return values
        out = np.zeros_like(values)
        for g in group:
            out += values[..., self.hand_perm[g]]
        return out

    def _deal_last(
        self,
        r: int,
        entries: np.ndarray,
        reach_in: np.ndarray,
        boards: np.ndarray,
        weights: np.ndarray,
        values: np.ndarray,
    ) -> None:
        """Add the weighted values at the last round's entries over complete `boards` (a
        bounded batch at a time: its per-board tables are H-long rows)."""
        wanted = np.zeros(self.layout.entries[r].size, dtype=np.bool_)
        wanted[self.layout.entry_id[entries]] = True
        for at in range(0, boards.shape[0], BOARD_BATCH):
            deal_last_round(
                r, wanted, reach_in, np.ascontiguousarray(boards[at : at + BOARD_BATCH]),
                weights[at : at + BOARD_BATCH], self.lanes, self.hands, self.hand_bits,
                self.lookup, self.ev, self.game.deck_size, values,
            )  # fmt: skip

    def _level(
        self,
        r: int,
        board: np.ndarray,
        nb: int,
        entries: np.ndarray,
        reach_in: np.ndarray,
        group: np.ndarray,
    ) -> np.ndarray:
        """Values at round r's entries on `board`, every later card dealt. `group` holds the
        suit permutations that fix the cards of every round so far: the reach is the same at
        h and g(h), so only one deal per orbit of each later round is walked."""
        lay = self.layout
        H = self.num_hands
        values = np.zeros((lay.entries[r].size, 2, H))
        tree, arrays = self.tree.arrays, lay.arrays
        if entries.size == 0:
            return values
        if r == self.last:
            self._deal_last(r, entries, reach_in, board[None, :nb], np.ones(1), values)
            return values
        bk = self._buckets(r, board, nb)
        reach = np.empty((lay.round_start[r + 1] - lay.round_start[r], 2, H))
        exit_reach = np.zeros((lay.entries[r + 1].size, 2, H))
        alive = np.zeros(lay.entries[r + 1].size, dtype=np.bool_)
        round_down(r, entries, reach_in, bk, tree, arrays, self.policy, reach, exit_reach, alive)
        nxt = lay.entries[r + 1][alive]
        exit_values = np.zeros_like(exit_reach)
        if nxt.size:
            k = self.game.num_board_cards[r + 1]
            orbits = deal_orbits(self.perms, group, board[:nb], k, self.game.deck_size)
            if r + 1 == self.last:
                full = np.array(
                    [np.concatenate([board[:nb], cards]) for cards, _, _ in orbits], dtype=np.int8
                )
                weights = np.array([weight for _, weight, _ in orbits])
                self._deal_last(r + 1, nxt, exit_reach, full, weights, exit_values)
            else:
                for cards, weight, sub in orbits:
                    full = np.concatenate([board[:nb], cards.astype(np.int8)])
                    exit_values += weight * self._level(r + 1, full, nb + k, nxt, exit_reach, sub)
            exit_values = self._symmetrise(exit_values, group)
        round_up(
            r, entries, bk, tree, arrays, self.hands, self.game.deck_size,
            float(self.deals_after[r]), reach, exit_values, alive, values,
        )  # fmt: skip
        return values

    def combine(
        self, top: list[np.ndarray], entry_reach: np.ndarray, board_sums: np.ndarray
    ) -> TopResult:
        """Both seats' values from the canonical boards' class sums (B, entries, 2, classes)."""
        lay = self.layout
        H = self.num_hands
        scale = self.boards.weight[:, None] / self.class_size[None, :].astype(np.float64)
        # (B, entries, 2, classes) -> each board's share of every entry value, per hand.
        per_board = board_sums * scale[:, None, None, :]
        entry_values = per_board.sum(axis=0)[..., self.classes]  # (entries, 2, H)
        if self.first == 0:
            root = entry_values[0]
            policy_reach = {lay.entries[0][0]: np.ones((2, H))}
            fold = np.zeros(2)
        else:
            root, policy_reach, fold = self._top_up(top, entry_values)
        values = root.sum(axis=1) / self.num_deals
        contribution = np.zeros((self.boards.weight.size, 2))
        for e in lay.entries[self.first]:
            x = lay.entry_id[e]
            mine = policy_reach.get(int(e))
            if mine is None:
                continue
            hand_share = per_board[:, x][..., self.classes]  # (B, 2, H)
            contribution += (hand_share * mine[None]).sum(axis=2) / self.num_deals
        return TopResult(values=values, board_contribution=contribution, fold_contribution=fold)

    def _top_up(
        self, top: list[np.ndarray], entry_values: np.ndarray
    ) -> tuple[np.ndarray, dict[int, np.ndarray], np.ndarray]:
        """Values up the rounds before the first board; the best responders' own reach (0/1) at
        each first-board entry; and the chips from folds in those rounds."""
        tree, lay = self.tree, self.layout
        H = self.num_hands
        node_values: dict[int, np.ndarray] = {}
        for e in lay.entries[self.first]:
            node_values[int(e)] = entry_values[lay.entry_id[e]]
        nodes = [int(g) for r in range(self.first) for g in lay.round_list[
            lay.round_start[r] : lay.round_start[r + 1]]]  # fmt: skip
        ok = np.ones(H, dtype=np.bool_)
        best_child: dict[int, np.ndarray] = {}
        for g in sorted(nodes, reverse=True):
            r = int(tree.round[g])
            reach = top[r][lay.local[g]]
            v = np.zeros((2, H))
            if tree.kind[g] == FOLD_END:
                for p in range(2):
                    folder = int(tree.player[g])
                    pay = -float(tree.spent[g, p]) if folder == p else float(tree.spent[g, 1 - p])
                    _fold_values(
                        reach[1 - p], self.hands, np.zeros(H, dtype=np.int64), self.game.deck_size,
                        pay * float(self.deals_after[r]), v[p],
                    )  # fmt: skip
            elif tree.kind[g] == DECISION:
                q = int(tree.player[g])
                kids = [int(c) for c in tree.children[g] if c >= 0]
                child_values = np.stack([node_values[c] for c in kids])  # (A, 2, H)
                pick = np.argmax(child_values[:, q], axis=0)
                best_child[g] = np.array(kids)[pick]
                v[q] = child_values[pick, q, np.arange(H)]
                v[1 - q] = child_values[:, 1 - q].sum(axis=0)
            node_values[g] = np.where(ok, v, 0.0)
        # Each seat's best response, played from the root: which hands reach which node.
        mine: dict[int, np.ndarray] = {0: np.ones((2, H))}
        fold = np.zeros(2)
        for g in sorted(nodes):
            here = mine.get(g)
            if here is None:
                continue
            if tree.kind[g] == FOLD_END:
                fold += (here * node_values[g]).sum(axis=1) / self.num_deals
                continue
            q = int(tree.player[g])
            for c in tree.children[g]:
                if c < 0:
                    continue
                share = here.copy()
                share[q] = np.where(best_child[g] == c, here[q], 0.0)
                mine[int(c)] = mine.get(int(c), 0.0) + share
        root = node_values[0]
        first_entries = {int(e) for e in lay.entries[self.first]}
        return root, {g: m for g, m in mine.items() if g in first_entries}, fold


def solve_small(br: BestResponse) -> TopResult:
    """Every canonical board in this process: the whole computation, for tests and small games."""
    top, entry_reach = br.top_reach()
    sums = np.stack([br.class_sums(br.board_values(b, entry_reach)) for b in br.boards.cards])
    return br.combine(top, entry_reach, sums)
