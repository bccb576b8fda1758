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
nearly all the work is, reads the strategy rows of a group of entries hand by hand (one
contiguous run each in the bucket-major layout) and walks each subtree node by node over tiles
of hands (loops the compiler vectorises). Values are sums over every complete deal (a hand
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
from gameforge.engines.poker.mccfr import BucketLookup, hand_buckets, hand_value


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
def _ranking(
    hands: np.ndarray, bk: np.ndarray, board: np.ndarray, nb: int, ev: EvalTables
) -> tuple[np.ndarray, np.ndarray]:
    """Showdown value of every valid hand (bucket >= 0) and the valid hands in ascending order."""
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


@njit(cache=True, nogil=True)
def _sorted_cards(
    hands: np.ndarray, order: np.ndarray, rank: np.ndarray, cards: np.ndarray, group_end: np.ndarray
) -> None:
    """Hole cards of the valid hands in showdown order (a one-card hand repeats its card in the
    second column, flagged by the caller) and where each hand's group of equal rank ends."""
    n = order.shape[0]
    nh = hands.shape[1]
    for i in range(n):
        h = order[i]
        cards[i, 0] = hands[h, 0]
        cards[i, 1] = hands[h, nh - 1]
    i = 0
    while i < n:
        j = i
        while j < n and rank[order[j]] == rank[order[i]]:
            j += 1
        for q in range(i, j):
            group_end[q] = j
        i = j


# Plan columns of one last-round node (see `_entry_plan`).
_KIND, _PLAYER, _CHILD, _DEC, _COL, _REACH, _VALUE = 0, 1, 2, 5, 6, 7, 9
_PLAN_WIDTH = 11
TILE = 128  # hands per tile of the subtree walks: their rows stay in the core's L1
BOARD_BATCH = 64  # complete boards per call of the last round's kernel
GROUP = 4  # last-round entries whose strategy rows are read together, one run per hand


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
    reach row of each seat, value row of each seat. Terminal columns come two per terminal
    (seat 0's value, then seat 1's), showdowns first; scale[col] is each column's stake or pay.
    A child's reach row is new for the seat that acts and shared for the other. Value rows
    0..columns-1 are the terminals' columns, then two per decision.
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
    dec = 0
    plan[0, _REACH] = 0
    plan[0, _REACH + 1] = 1
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
            plan[j, _VALUE] = 2 * n_term + 2 * dec
            plan[j, _VALUE + 1] = 2 * n_term + 2 * dec + 1
            dec += 1
            q = player[g]
            for a in range(3):
                c = plan[j, _CHILD + a]
                if c >= 0:
                    plan[c, _REACH + q] = rows
                    plan[c, _REACH + 1 - q] = plan[j, _REACH + 1 - q]
                    rows += 1
        else:
            plan[j, _VALUE] = col
            plan[j, _VALUE + 1] = col + 1
    return w, 2 * n_sd, 2 * n_term, first_slot


@njit(cache=True, nogil=True)
def _gather_rows(
    order: np.ndarray,
    row_base: np.ndarray,
    strategy: np.ndarray,
    first_slot: int,
    n_slots: int,
    staged: np.ndarray,
) -> None:
    """staged[3 s + a, i] = the strategy of valid hand order[i] at slot first_slot + s, action a:
    each hand's rows for a group of entries are one contiguous read."""
    n = order.shape[0]
    for i in range(n):
        base = row_base[i] + first_slot
        for s in range(n_slots):
            for a in range(3):
                staged[3 * s + a, i] = strategy[base + s, a]


@njit(cache=True, nogil=True)
def _reach_down(
    t0: int,
    m: int,
    x: int,
    order: np.ndarray,
    reach_in: np.ndarray,
    plan: np.ndarray,
    w: int,
    staged: np.ndarray,
    row0: int,
    reach: np.ndarray,
    cols: np.ndarray,
    colmap: np.ndarray,
) -> None:
    """Reach of both seats at every node for hands order[t0:t0+m], into the group's columns
    (hand-major; an entry's column 2t, at colmap[2t], holds seat 1's reach at terminal t, which
    seat 0 responds to, and 2t + 1 seat 0's)."""
    for i in range(m):
        h = order[t0 + i]
        reach[0, i] = reach_in[x, 0, h]
        reach[1, i] = reach_in[x, 1, h]
    for j in range(w):
        if plan[j, _KIND] == DECISION:
            q = plan[j, _PLAYER]
            src = reach[plan[j, _REACH + q]]
            for a in range(3):
                c = plan[j, _CHILD + a]
                if c < 0:
                    continue
                dst = reach[plan[c, _REACH + q]]
                g = staged[row0 + 3 * plan[j, _DEC] + a, t0 : t0 + m]
                for i in range(m):
                    dst[i] = src[i] * g[i]
    for j in range(w):
        col = plan[j, _COL]
        if col < 0:
            continue
        r0 = reach[plan[j, _REACH]]
        r1 = reach[plan[j, _REACH + 1]]
        c0 = colmap[col]
        c1 = colmap[col + 1]
        for i in range(m):
            cols[t0 + i, c0] = r1[i]
            cols[t0 + i, c1] = r0[i]


@njit(cache=True, nogil=True)
def _sweep(
    cards: np.ndarray,
    group_end: np.ndarray,
    two: bool,
    cols: np.ndarray,
    n_sd: int,
    tied: np.ndarray,
    total: np.ndarray,
    per_card: np.ndarray,
) -> None:
    """One pass in showdown order over every column of a group of entries (showdown columns
    first). Afterwards total and per_card hold every hand's reach, and each showdown column of
    hand q holds the card-compatible reach of the hands q beats plus of those it beats or ties,
    less (for two hole cards) q's own. A hand of two hole cards ties only with itself when no
    other hand has its rank: that common case takes one step."""
    n, n_cols = cols.shape
    total[:] = 0.0
    per_card[:, :] = 0.0
    i = 0
    while i < n:
        j_end = group_end[i]
        if two and j_end == i + 1:
            px = per_card[cards[i, 0]]
            py = per_card[cards[i, 1]]
            row = cols[i]
            for c in range(n_sd):
                tied[0, c] = 2.0 * (total[c] - px[c] - py[c]) - row[c]
            for c in range(n_cols):
                total[c] += row[c]
            for c in range(n_cols):
                px[c] += row[c]
            for c in range(n_cols):
                py[c] += row[c]
            for c in range(n_sd):
                row[c] = tied[0, c]
            i = j_end
            continue
        for q in range(i, j_end):
            px = per_card[cards[q, 0]]
            py = per_card[cards[q, 1]]
            for c in range(n_sd):
                tied[q - i, c] = total[c] - px[c] - (py[c] if two else 0.0)
        for q in range(i, j_end):
            px = per_card[cards[q, 0]]
            py = per_card[cards[q, 1]]
            row = cols[q]
            for c in range(n_cols):
                total[c] += row[c]
            for c in range(n_cols):
                px[c] += row[c]
            if two:
                for c in range(n_cols):
                    py[c] += row[c]
        for q in range(i, j_end):
            px = per_card[cards[q, 0]]
            py = per_card[cards[q, 1]]
            row = cols[q]
            if two:
                for c in range(n_sd):
                    row[c] = tied[q - i, c] + total[c] - px[c] - py[c]
            else:
                for c in range(n_sd):
                    row[c] = tied[q - i, c] + total[c] - px[c]
        i = j_end


@njit(cache=True, nogil=True)
def _terminal_values(
    cards: np.ndarray,
    two: bool,
    cols: np.ndarray,
    n_sd: int,
    scale: np.ndarray,
    total: np.ndarray,
    per_card: np.ndarray,
) -> None:
    """After the sweep, every column's terminal value in place: showdown, stake x (reach beaten
    + beaten or tied - every card-compatible hand's); fold, pay x every card-compatible hand's."""
    n, n_cols = cols.shape
    for q in range(n):
        px = per_card[cards[q, 0]]
        py = per_card[cards[q, 1]]
        row = cols[q]
        if two:
            for c in range(n_sd):
                row[c] = scale[c] * (row[c] - (total[c] - px[c] - py[c]))
            for c in range(n_sd, n_cols):
                row[c] = scale[c] * (total[c] - px[c] - py[c] + row[c])
        else:
            for c in range(n_sd):
                row[c] = scale[c] * (row[c] - (total[c] - px[c]))
            for c in range(n_sd, n_cols):
                row[c] = scale[c] * (total[c] - px[c])


@njit(cache=True, nogil=True)
def _values_up(
    t0: int,
    m: int,
    x: int,
    order: np.ndarray,
    plan: np.ndarray,
    w: int,
    n_cols: int,
    cols: np.ndarray,
    colmap: np.ndarray,
    value: np.ndarray,
    weight: float,
    values_out: np.ndarray,
) -> None:
    """Values of hands order[t0:t0+m] up one entry's subtree from its terminal columns (the
    seat that responds takes its best action, the other's are summed); weight x the root's
    added to values_out."""
    for c in range(n_cols):
        gc = colmap[c]
        dst = value[c]
        for i in range(m):
            dst[i] = cols[t0 + i, gc]
    for j in range(w - 1, -1, -1):
        if plan[j, _KIND] != DECISION:
            continue
        p = plan[j, _PLAYER]
        mine = value[plan[j, _VALUE + p]]
        other = value[plan[j, _VALUE + 1 - p]]
        first = True
        for a in range(3):
            c = plan[j, _CHILD + a]
            if c < 0:
                continue
            cm = value[plan[c, _VALUE + p]]
            co = value[plan[c, _VALUE + 1 - p]]
            if first:
                for i in range(m):
                    mine[i] = cm[i]
                    other[i] = co[i]
                first = False
            else:
                for i in range(m):
                    mine[i] = cm[i] if cm[i] > mine[i] else mine[i]
                    other[i] += co[i]
    v0 = value[plan[0, _VALUE]]
    v1 = value[plan[0, _VALUE + 1]]
    for i in range(m):
        h = order[t0 + i]
        values_out[x, 0, h] += weight * v0[i]
        values_out[x, 1, h] += weight * v1[i]


@njit(cache=True, nogil=True)
def _prepare_boards(
    boards: np.ndarray,
    r: int,
    hands: np.ndarray,
    hand_bits: np.ndarray,
    lookup: BucketLookup,
    ev: EvalTables,
    first_row: int,
    stride: int,
    n_valid: np.ndarray,
    order: np.ndarray,
    cards: np.ndarray,
    group_end: np.ndarray,
    row_base: np.ndarray,
) -> None:
    """Per board: its valid hands in showdown order, their cards, where each tie group ends,
    and where each hand's strategy rows of round r start."""
    H = hands.shape[0]
    nb = boards.shape[1]
    bk = np.empty(H, dtype=np.int64)
    for b in range(boards.shape[0]):
        board_buckets(hands, hand_bits, boards[b], nb, r, lookup, bk)
        rank, o = _ranking(hands, bk, boards[b], nb, ev)
        n = o.shape[0]
        n_valid[b] = n
        order[b, :n] = o
        _sorted_cards(hands, o, rank, cards[b, :n], group_end[b, :n])
        for i in range(n):
            row_base[b, i] = first_row + bk[o[i]] * stride


@njit(cache=True, nogil=True)
def deal_last_round(
    r: int,
    entries: np.ndarray,
    reach_in: np.ndarray,
    boards: np.ndarray,
    weights: np.ndarray,
    tree: TreeArrays,
    lay: LayoutArrays,
    policy: Policy,
    hands: np.ndarray,
    hand_bits: np.ndarray,
    lookup: BucketLookup,
    ev: EvalTables,
    deck: int,
    fold_scale: float,
    values_out: np.ndarray,
) -> None:
    """Add sum over boards b of weights[b] x the best-response values (2, H) at the last
    round's entries on complete board b (hands sharing a card with it add 0) to
    values_out[entry_id]. The reach at those entries is the same on every board.

    Entries go in groups of GROUP, boards inside a group: the group's strategy rows (one
    contiguous run per bucket in the bucket-major layout) are read from memory on the first
    board and from cache on the others. Per board and group: both seats' reach down each
    subtree, node by node over tiles of hands; one sweep in showdown order for every column of
    the group (a column per terminal and seat), with exact card removal; the values up each
    subtree, node by node again.
    """
    local, entry_end, entry_id = lay.local, lay.entry_end, lay.entry_id
    strategy, offsets, ndec = policy
    H = hands.shape[0]
    B = boards.shape[0]
    two = hands.shape[1] == 2
    n_valid = np.zeros(B, dtype=np.int64)
    order = np.zeros((B, H), dtype=np.int64)
    cards = np.zeros((B, H, 2), dtype=np.int64)
    group_end = np.zeros((B, H), dtype=np.int64)
    row_base = np.zeros((B, H), dtype=np.int64)
    _prepare_boards(
        boards, r, hands, hand_bits, lookup, ev, offsets[r], ndec[r], n_valid, order, cards,
        group_end, row_base,
    )  # fmt: skip
    n_max = 1
    for b in range(B):
        n_max = max(n_max, n_valid[b])
    live = np.empty(entries.size, dtype=np.int64)
    n_live = 0
    for e in entries:
        x = entry_id[e]
        for h in range(H):
            if reach_in[x, 0, h] != 0.0 or reach_in[x, 1, h] != 0.0:
                live[n_live] = e
                n_live += 1
                break
    widest = 1
    for e in entries:
        widest = max(widest, entry_end[e] - local[e])
    plans = np.empty((GROUP, widest, _PLAN_WIDTH), dtype=np.int64)
    scales = np.empty((GROUP, 2 * widest))
    colmaps = np.empty((GROUP, 2 * widest), dtype=np.int64)
    info = np.empty((GROUP, 4), dtype=np.int64)  # nodes, showdown columns, columns, first slot
    scale = np.empty(GROUP * 2 * widest)
    reach = np.empty((widest + 2, TILE))
    value = np.empty((2 * widest, TILE))
    col_buffer = np.empty(n_max * GROUP * 2 * widest)
    tied = np.empty((n_max, GROUP * 2 * widest))
    total = np.empty(GROUP * 2 * widest)
    per_card = np.empty((deck, GROUP * 2 * widest))
    staged_buffer = np.empty(0, dtype=strategy.dtype)
    for g0 in range(0, n_live, GROUP):
        ng = min(GROUP, n_live - g0)
        n_sd_all = 0
        n_cols_all = 0
        for k in range(ng):
            w, n_sd, n_cols, first = _entry_plan(
                live[g0 + k], r, tree, lay, fold_scale, plans[k], scales[k]
            )
            info[k, 0], info[k, 1], info[k, 2], info[k, 3] = w, n_sd, n_cols, first
            n_sd_all += n_sd
            n_cols_all += n_cols
        sd_at, fold_at = 0, n_sd_all
        for k in range(ng):
            n_sd, n_cols = info[k, 1], info[k, 2]
            for c in range(n_cols):
                gc = sd_at + c if c < n_sd else fold_at + c - n_sd
                colmaps[k, c] = gc
                scale[gc] = scales[k, c]
            sd_at += n_sd
            fold_at += n_cols - n_sd
        first = info[0, 3]
        last = ng - 1
        n_slots = info[last, 3] + info[last, 0] - info[last, 2] // 2 - first
        if staged_buffer.size < 3 * n_slots * n_max:
            staged_buffer = np.empty(3 * n_slots * n_max, dtype=strategy.dtype)
        for b in range(B):
            n = n_valid[b]
            if n == 0:
                continue
            o = order[b, :n]
            staged = staged_buffer[: 3 * n_slots * n].reshape(3 * n_slots, n)
            _gather_rows(o, row_base[b, :n], strategy, first, n_slots, staged)
            cols = col_buffer[: n * n_cols_all].reshape(n, n_cols_all)
            for k in range(ng):
                x = entry_id[live[g0 + k]]
                row0 = 3 * (info[k, 3] - first)
                for t0 in range(0, n, TILE):
                    m = min(TILE, n - t0)
                    _reach_down(
                        t0, m, x, o, reach_in, plans[k], info[k, 0], staged, row0, reach, cols,
                        colmaps[k],
                    )  # fmt: skip
            c_b = cards[b, :n]
            tot = total[:n_cols_all]
            pc = per_card[:, :n_cols_all]
            _sweep(c_b, group_end[b, :n], two, cols, n_sd_all, tied, tot, pc)
            _terminal_values(c_b, two, cols, n_sd_all, scale[:n_cols_all], tot, pc)
            for k in range(ng):
                x = entry_id[live[g0 + k]]
                for t0 in range(0, n, TILE):
                    m = min(TILE, n - t0)
                    _values_up(
                        t0, m, x, o, plans[k], info[k, 0], info[k, 2], cols, colmaps[k], value,
                        weights[b], values_out,
                    )  # fmt: skip


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

    @property
    def num_hands(self) -> int:
        """Private hands of one player (1,326 in Hold'em)."""
        return int(self.hands.shape[0])

    def _buckets(self, r: int, board: np.ndarray, nb: int) -> np.ndarray:
        bk = np.empty(self.num_hands, dtype=np.int64)
        board_buckets(self.hands, self.hand_bits, board, nb, r, self.lookup, bk)
        return bk

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
        for at in range(0, boards.shape[0], BOARD_BATCH):
            deal_last_round(
                r, entries, reach_in, np.ascontiguousarray(boards[at : at + BOARD_BATCH]),
                weights[at : at + BOARD_BATCH], self.tree.arrays, self.layout.arrays,
                self.policy, self.hands, self.hand_bits, self.lookup, self.ev,
                self.game.deck_size, float(self.deals_after[r]), values,
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
