"""Exact best response in the real game against a bucketed limit-poker strategy, streamed by board.

The public tree (betting node x board) is walked with one vector per player over every private
hand: both players' reach probabilities under the fixed strategy going down, and both players'
best-response counterfactual values coming up (a best responder maximises at its own nodes and
sums over the other's, whose probabilities are already in its reach). Both seats' best
responses share one walk, one bucket lookup and one showdown ranking per board.

Boards are never materialised as boards x hands. The first round that deals board cards is
split into canonical boards (suit isomorphism, each with the number of raw boards it stands
for): the unit of chunked, resumable work. Within a chunk every later card is enumerated, one
board at a time: the bucket of every hand is looked up once per board, showdowns are sorted
sweeps with exact card removal (O(H) per terminal for H hands), and a subtree neither player's
strategy reaches is skipped. Values are sums over every complete deal (a hand that ends by a
fold in round r stands for every board completion after r), divided by the number of deals at
the root.

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
from gameforge.engines.poker.hand_strength import _remaining_cards
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


@njit(cache=True, nogil=True)
def _entry_program(
    e: int,
    r: int,
    tree: TreeArrays,
    lay: LayoutArrays,
    fold_scale: float,
    prog: np.ndarray,
    scale: np.ndarray,
) -> tuple[int, int]:
    """One last-round entry's subtree as a flat program: prog[j] = (kind, player, child0..2
    local, slot, column) per local node j; showdown columns first, then folds, two per
    terminal (seat 0's value, seat 1's); scale[col] the stake or pay of each column.
    Returns (nodes, showdown columns)."""
    round_list, round_start, local, entry_end, entry_id = lay
    kind, player, rnd, spent, children, slot = tree
    s = local[e]
    w = entry_end[e] - s
    rs = round_start[r]
    n_sd = 0
    for j in range(w):
        if kind[round_list[rs + s + j]] == SHOWDOWN:
            n_sd += 1
    sd_col = 0
    fold_col = 2 * n_sd
    for j in range(w):
        g = round_list[rs + s + j]
        k = kind[g]
        prog[j, 0] = k
        prog[j, 1] = player[g]
        for a in range(3):
            c = children[g, a]
            prog[j, 2 + a] = local[c] - s if c >= 0 else -1
        prog[j, 5] = slot[g]
        if k == SHOWDOWN:
            prog[j, 6] = sd_col
            scale[sd_col] = float(spent[g, 1])
            scale[sd_col + 1] = float(spent[g, 0])
            sd_col += 2
        elif k == FOLD_END:
            prog[j, 6] = fold_col
            f = player[g]
            scale[fold_col] = (-float(spent[g, 0]) if f == 0 else float(spent[g, 1])) * fold_scale
            scale[fold_col + 1] = (
                -float(spent[g, 1]) if f == 1 else float(spent[g, 0])
            ) * fold_scale
            fold_col += 2
        else:
            prog[j, 6] = -1
    return w, 2 * n_sd


@njit(cache=True, nogil=True)
def last_round(
    r: int,
    entries: np.ndarray,
    reach_in: np.ndarray,
    board: np.ndarray,
    nb: int,
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
    accumulate: bool,
) -> None:
    """Best-response values (2, H) at the last round's entries on one complete board, written
    (or added) to values_out[entry_id]; hands sharing a card with the board get 0.

    Per entry, three passes over the valid hands in showdown order: each hand's reach at every
    node of the subtree (its strategy rows are contiguous, bucket-major); one sweep for every
    terminal at once, one column per (terminal, seat), with exact card removal; each hand's
    values up the subtree (max for the seat that responds, sum over the other's actions).
    """
    round_list, round_start, local, entry_end, entry_id = lay
    strategy, offsets, ndec = policy
    H = hands.shape[0]
    bk = np.empty(H, dtype=np.int64)
    board_buckets(hands, hand_bits, board, nb, r, lookup, bk)
    rank, order = _ranking(hands, bk, board, nb, ev)
    n = order.shape[0]
    two = hands.shape[1] == 2
    cards = np.empty((n, 2), dtype=np.int64)
    group_end = np.empty(n, dtype=np.int64)
    _sorted_cards(hands, order, rank, cards, group_end)
    stride = ndec[r]
    row_base = np.empty(n, dtype=np.int64)
    for i in range(n):
        row_base[i] = offsets[r] + bk[order[i]] * stride
    widest = 1
    for e in entries:
        widest = max(widest, entry_end[e] - local[e])
    prog = np.empty((widest, 7), dtype=np.int64)
    scale = np.empty(2 * widest)
    node_reach = np.empty((widest, 2))
    node_value = np.empty((widest, 2))
    cols = np.empty((n, 2 * widest))  # reach of the other seat at each terminal, then values
    vals = np.empty((n, 2 * widest))
    total = np.empty(2 * widest)
    per_card = np.empty((deck, 2 * widest))
    for e in entries:
        x = entry_id[e]
        w, n_sd = _entry_program(e, r, tree, lay, fold_scale, prog, scale)
        n_cols = 0
        for j in range(w):
            if prog[j, 6] >= 0:
                n_cols += 2
        alive = False
        # Reach down, hand by hand: column 2t holds seat 1's reach (seat 0 responds to it).
        for i in range(n):
            h = order[i]
            node_reach[0, 0] = reach_in[x, 0, h]
            node_reach[0, 1] = reach_in[x, 1, h]
            if node_reach[0, 0] != 0.0 or node_reach[0, 1] != 0.0:
                alive = True
            base = row_base[i]
            for j in range(w):
                k = prog[j, 0]
                if k == DECISION:
                    q = prog[j, 1]
                    row = base + prog[j, 5]
                    for a in range(3):
                        c = prog[j, 2 + a]
                        if c >= 0:
                            node_reach[c, q] = node_reach[j, q] * strategy[row, a]
                            node_reach[c, 1 - q] = node_reach[j, 1 - q]
                else:
                    col = prog[j, 6]
                    cols[i, col] = node_reach[j, 1]
                    cols[i, col + 1] = node_reach[j, 0]
        if not alive:
            if not accumulate:
                values_out[x] = 0.0
            continue
        # One sweep for all terminals: below, then below-or-tied, per group of equal rank.
        total[:n_cols] = 0.0
        per_card[:, :n_cols] = 0.0
        i = 0
        while i < n:
            j_end = group_end[i]
            for q in range(i, j_end):
                cx = cards[q, 0]
                cy = cards[q, 1]
                if two:
                    for c in range(n_sd):
                        vals[q, c] = total[c] - per_card[cx, c] - per_card[cy, c]
                else:
                    for c in range(n_sd):
                        vals[q, c] = total[c] - per_card[cx, c]
            for q in range(i, j_end):
                cx = cards[q, 0]
                cy = cards[q, 1]
                for c in range(n_cols):
                    v = cols[q, c]
                    total[c] += v
                    per_card[cx, c] += v
                if two:
                    for c in range(n_cols):
                        per_card[cy, c] += cols[q, c]
            for q in range(i, j_end):
                cx = cards[q, 0]
                cy = cards[q, 1]
                if two:
                    for c in range(n_sd):
                        vals[q, c] += total[c] - per_card[cx, c] - per_card[cy, c] + cols[q, c]
                else:
                    for c in range(n_sd):
                        vals[q, c] += total[c] - per_card[cx, c]
            i = j_end
        # Values: showdown = stake * (below + below-or-tied - all); fold = pay * all.
        for q in range(n):
            cx = cards[q, 0]
            cy = cards[q, 1]
            if two:
                for c in range(n_sd):
                    every = total[c] - per_card[cx, c] - per_card[cy, c] + cols[q, c]
                    vals[q, c] = scale[c] * (vals[q, c] - every)
                for c in range(n_sd, n_cols):
                    every = total[c] - per_card[cx, c] - per_card[cy, c] + cols[q, c]
                    vals[q, c] = scale[c] * every
            else:
                for c in range(n_sd):
                    vals[q, c] = scale[c] * (vals[q, c] - (total[c] - per_card[cx, c]))
                for c in range(n_sd, n_cols):
                    vals[q, c] = scale[c] * (total[c] - per_card[cx, c])
        # Values up, hand by hand.
        if not accumulate:
            values_out[x] = 0.0
        for q in range(n):
            for j in range(w - 1, -1, -1):
                k = prog[j, 0]
                if k != DECISION:
                    col = prog[j, 6]
                    node_value[j, 0] = vals[q, col]
                    node_value[j, 1] = vals[q, col + 1]
                    continue
                p = prog[j, 1]
                best = -np.inf
                other = 0.0
                for a in range(3):
                    c = prog[j, 2 + a]
                    if c >= 0:
                        if node_value[c, p] > best:
                            best = node_value[c, p]
                        other += node_value[c, 1 - p]
                node_value[j, p] = best
                node_value[j, 1 - p] = other
            h = order[q]
            values_out[x, 0, h] += node_value[0, 0]
            values_out[x, 1, h] += node_value[0, 1]


@njit(cache=True, nogil=True)
def deal_last_round(
    r: int,
    entries: np.ndarray,
    reach_in: np.ndarray,
    board: np.ndarray,
    nb: int,
    combos: np.ndarray,
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
    """Values at the last round's entries summed over every deal of its cards onto `board`."""
    entry_id = lay.entry_id
    rest = _remaining_cards(board[:nb], deck)
    n_rest = rest.shape[0]
    k = combos.shape[1]
    full = np.empty(nb + k, dtype=np.int8)
    full[:nb] = board[:nb]
    for e in entries:
        values_out[entry_id[e]] = 0.0
    for ci in range(combos.shape[0]):
        skip = False
        for t in range(k):
            if combos[ci, t] >= n_rest:
                skip = True
                break
            full[nb + t] = rest[combos[ci, t]]
        if skip:
            continue
        last_round(
            r, entries, reach_in, full, nb + k, tree, lay, policy, hands, hand_bits, lookup, ev,
            deck, fold_scale, values_out, True,
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
        self.combos = [
            np.array(
                list(combinations(range(game.deck_size - game.board_cards_through(r - 1)), k)),
                dtype=np.int64,
            ).reshape(-1, k)
            if r > 0 and k > 0
            else np.zeros((1, 0), dtype=np.int64)
            for r, k in enumerate(game.num_board_cards)
        ]

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
        return self._level(self.first, board, board.size, entries[alive], entry_reach)

    def class_sums(self, values: np.ndarray) -> np.ndarray:
        """(..., H) -> (..., classes): sums over each suit class of hands."""
        flat = values.reshape(-1, values.shape[-1])
        out = np.zeros((flat.shape[0], self.class_size.size))
        for i in range(flat.shape[0]):
            out[i] = np.bincount(self.classes, weights=flat[i], minlength=self.class_size.size)
        return out.reshape(*values.shape[:-1], self.class_size.size)

    def _level(
        self, r: int, board: np.ndarray, nb: int, entries: np.ndarray, reach_in: np.ndarray
    ) -> np.ndarray:
        lay = self.layout
        H = self.num_hands
        values = np.zeros((lay.entries[r].size, 2, H))
        tree, arrays, policy = self.tree.arrays, lay.arrays, self.policy
        if entries.size == 0:
            return values
        if r == self.last:
            last_round(
                r, entries, reach_in, board, nb, tree, arrays, policy, self.hands, self.hand_bits,
                self.lookup, self.ev, self.game.deck_size, float(self.deals_after[r]), values,
                False,
            )  # fmt: skip
            return values
        bk = self._buckets(r, board, nb)
        reach = np.empty((lay.round_start[r + 1] - lay.round_start[r], 2, H))
        exit_reach = np.zeros((lay.entries[r + 1].size, 2, H))
        alive = np.zeros(lay.entries[r + 1].size, dtype=np.bool_)
        round_down(r, entries, reach_in, bk, tree, arrays, policy, reach, exit_reach, alive)
        nxt = lay.entries[r + 1][alive]
        exit_values = np.zeros_like(exit_reach)
        k = self.game.num_board_cards[r + 1]
        if nxt.size and r + 1 == self.last:
            deal_last_round(
                r + 1, nxt, exit_reach, board, nb, self.combos[r + 1], tree, arrays, policy,
                self.hands, self.hand_bits, self.lookup, self.ev, self.game.deck_size,
                float(self.deals_after[r + 1]), exit_values,
            )  # fmt: skip
        elif nxt.size:
            used = set(int(c) for c in board[:nb])
            rest = [c for c in range(self.game.deck_size) if c not in used]
            for extra in combinations(rest, k):
                full = np.concatenate([board[:nb], np.array(extra, dtype=np.int8)])
                exit_values += self._level(r + 1, full, nb + k, nxt, exit_reach)
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
