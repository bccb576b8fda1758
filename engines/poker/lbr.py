"""Local best response (Lisý & Bowling, AAAI 2017) against a bucketed limit-poker strategy.

Exact exploitability needs a best response over the whole real game, out of reach for limit
Hold'em on two cores. LBR is the standard lower bound: it plays real hands against the fixed
strategy, keeps the exact posterior over the opponent's hole cards (every card-consistent hand,
reweighted by the strategy's probability of each action it took, through the strategy's own
buckets), and at each of its decisions picks the action with the best expected value assuming
both players only check/call afterwards: fold, call (showdown equity against the range over
every board completion) or raise (the range's fold probability at the next node, then equity
against the hands that continue). Preflop it calls (as the paper's LBR variants for hold'em do;
preflop equity over every board is too costly per decision). Its mean winnings over many deals,
played from both seats on the same cards, estimate a lower bound of exploitability.
"""

from __future__ import annotations

from itertools import combinations

import numpy as np
from numba import njit

from gameforge.engines.common.parallel import SERIAL, Parallel
from gameforge.engines.common.rng import uniform
from gameforge.engines.poker.acpc import GameDef
from gameforge.engines.poker.betting import (
    CALL,
    DECISION,
    FOLD,
    FOLD_END,
    RAISE,
    TreeArrays,
    build_tree,
)
from gameforge.engines.poker.evaluator import EvalTables, hand_value
from gameforge.engines.poker.mccfr import (
    BucketLookup,
    DealTables,
    hand_buckets,
    lookup_bucket,
    shuffle_deal,
)


def _combos(n: int, k: int) -> np.ndarray:
    return np.array(list(combinations(range(n), k)), dtype=np.int8).reshape(-1, k)


@njit(cache=True, nogil=True)
def _equity(
    mine: np.ndarray,
    board: np.ndarray,
    seen: int,
    total: int,
    weight: np.ndarray,
    hands: np.ndarray,
    hand_bits: np.ndarray,
    deck_size: int,
    combos: np.ndarray,
    ev: EvalTables,
) -> float:
    """Showdown equity (win + tie/2) of `mine` against weighted opponent hands, every runout."""
    card_key, card_bit, rank_table, flush_table = ev
    nh = mine.shape[0]
    used = np.uint64(0)
    for t in range(nh):
        used |= np.uint64(1) << np.uint64(mine[t])
    for t in range(seen):
        used |= np.uint64(1) << np.uint64(board[t])
    rest = np.empty(deck_size, dtype=np.int8)
    nr = 0
    for c in range(deck_size):
        if (used >> np.uint64(c)) & np.uint64(1) == 0:
            rest[nr] = c
            nr += 1
    row = np.empty(nh + total, dtype=np.int8)
    opp = np.empty(nh + total, dtype=np.int8)
    for t in range(nh):
        row[t] = mine[t]
    for t in range(seen):
        row[nh + t] = board[t]
        opp[nh + t] = board[t]
    missing = total - seen
    win = 0.0
    mass = 0.0
    for ci in range(combos.shape[0]):
        ok = True
        extra = np.uint64(0)
        for t in range(missing):
            if combos[ci, t] >= nr:
                ok = False
                break
            card = rest[combos[ci, t]]
            row[nh + seen + t] = card
            opp[nh + seen + t] = card
            extra |= np.uint64(1) << np.uint64(card)
        if not ok:
            continue
        v = hand_value(row, nh + total, card_key, card_bit, rank_table, flush_table)
        for h in range(hands.shape[0]):
            w = weight[h]
            if w <= 0.0 or (hand_bits[h] & extra) != 0:
                continue
            for t in range(nh):
                opp[t] = hands[h, t]
            o = hand_value(opp, nh + total, card_key, card_bit, rank_table, flush_table)
            mass += w
            if v > o:
                win += w
            elif v == o:
                win += 0.5 * w
    return win / mass if mass > 0.0 else 0.5


@njit(cache=True, nogil=True)
def _play(
    seed: int,
    first: int,
    count: int,
    tree: TreeArrays,
    raise_size: np.ndarray,
    offsets: np.ndarray,
    ndec: np.ndarray,
    strategy: np.ndarray,
    hands: np.ndarray,
    hand_bits: np.ndarray,
    deck_size: int,
    board_through: np.ndarray,
    combos_flat: np.ndarray,
    combos_start: np.ndarray,
    combos_width: np.ndarray,
    lookup: BucketLookup,
    ev: EvalTables,
    out: np.ndarray,
) -> None:
    """Deals first..first+count-1, each from both seats; out[i] = LBR's mean chips on deal i."""
    kind, player, rnd, spent, children, slot = tree
    card_key, card_bit, rank_table, flush_table = ev
    R = board_through.shape[0]
    total = board_through[R - 1]
    nh = hands.shape[1]
    H = hands.shape[0]
    deck = np.empty(deck_size, dtype=np.int8)
    cards = np.empty(2 * nh + total, dtype=np.int8)
    weight = np.empty(H)
    folded = np.empty(H)
    opp_bucket = np.empty(H, dtype=np.int64)
    state = np.zeros(1, dtype=np.uint64)
    for i in range(count):
        deal = first + i
        need = 2 * nh + total
        shuffle_deal(seed, deal, state, deck, need)
        for c in range(need):
            cards[c] = deck[c]
        board = cards[2 * nh :]
        result = 0.0
        for lbr in range(2):
            mine = cards[lbr * nh : (lbr + 1) * nh]
            theirs = cards[(1 - lbr) * nh : (2 - lbr) * nh]
            mine_bits = np.uint64(0)
            for t in range(nh):
                mine_bits |= np.uint64(1) << np.uint64(mine[t])
            for h in range(H):
                weight[h] = 0.0 if hand_bits[h] & mine_bits else 1.0
            # The opponent's own bucket sequence, and the actual row lookups.
            their_row = np.empty(nh + total, dtype=np.int8)
            for t in range(nh):
                their_row[t] = theirs[t]
            for t in range(total):
                their_row[nh + t] = board[t]
            n = 0
            current_round = -1
            while kind[n] == DECISION:
                r = rnd[n]
                nb = board_through[r]
                if r != current_round:
                    current_round = r
                    conflict = mine_bits
                    for t in range(nb):
                        conflict |= np.uint64(1) << np.uint64(board[t])
                    for h in range(H):
                        if hand_bits[h] & conflict:
                            weight[h] = 0.0
                    hand_buckets(hands, board, r, nb, lookup, conflict, hand_bits, opp_bucket)
                p = player[n]
                if p != lbr:
                    b = lookup_bucket(their_row, nh + nb, r, lookup)
                    row = offsets[r] + b * ndec[r] + slot[n]
                    u = uniform(state)
                    acc = 0.0
                    pick = -1
                    for a in range(3):
                        if children[n, a] >= 0:
                            acc += strategy[row, a]
                            if pick < 0 and u < acc:
                                pick = a
                    if pick < 0:
                        for a in range(3):
                            if children[n, a] >= 0:
                                pick = a
                    base = offsets[r] + slot[n]
                    for h in range(H):
                        if weight[h] > 0.0:
                            weight[h] *= strategy[base + opp_bucket[h] * ndec[r], pick]
                    n = children[n, pick]
                    continue
                # LBR decides: expected chips of fold / call / raise, check-down afterwards.
                hi = max(spent[n, 0], spent[n, 1])
                if r == 0:
                    n = children[n, CALL]
                    continue
                missing = total - nb
                cs = combos_flat[combos_start[missing] : combos_start[missing + 1]]
                cs = cs.reshape(-1, combos_width[missing]) if missing > 0 else cs.reshape(1, 0)
                wp = _equity(mine, board, nb, total, weight, hands, hand_bits, deck_size, cs, ev)
                best_a = CALL
                best = (2.0 * wp - 1.0) * hi
                if children[n, FOLD] >= 0 and -float(spent[n, lbr]) > best:
                    best_a = FOLD
                    best = -float(spent[n, lbr])
                c = children[n, RAISE]
                if c >= 0 and kind[c] == DECISION:
                    cbase = offsets[r] + slot[c]
                    fold_mass = 0.0
                    mass = 0.0
                    for h in range(H):
                        w = weight[h]
                        if w <= 0.0:
                            folded[h] = 0.0
                            continue
                        f = strategy[cbase + opp_bucket[h] * ndec[r], FOLD]
                        mass += w
                        fold_mass += w * f
                        folded[h] = w * (1.0 - f)
                    fp = fold_mass / mass if mass > 0.0 else 0.0
                    wp2 = wp
                    if fp < 1.0:
                        wp2 = _equity(
                            mine, board, nb, total, folded, hands, hand_bits, deck_size, cs, ev
                        )
                    top = hi + raise_size[r]
                    raise_value = (
                        fp * float(spent[n, 1 - lbr]) + (1.0 - fp) * (2.0 * wp2 - 1.0) * top
                    )
                    if raise_value > best:
                        best_a = RAISE
                        best = raise_value
                n = children[n, best_a]
            # Terminal: chips for LBR.
            if kind[n] == FOLD_END:
                gain = -float(spent[n, lbr]) if player[n] == lbr else float(spent[n, 1 - lbr])
            else:
                mine_row = np.empty(nh + total, dtype=np.int8)
                for t in range(nh):
                    mine_row[t] = mine[t]
                for t in range(total):
                    mine_row[nh + t] = board[t]
                v = hand_value(mine_row, nh + total, card_key, card_bit, rank_table, flush_table)
                o = hand_value(their_row, nh + total, card_key, card_bit, rank_table, flush_table)
                stake = float(spent[n, 0])
                gain = stake if v > o else (-stake if v < o else 0.0)
            result += gain
        out[i] = 0.5 * result


def local_best_response(
    game: GameDef,
    tables: DealTables,
    strategy: np.ndarray,
    offsets: np.ndarray,
    ndec: np.ndarray,
    deals: int,
    seed: int = 0,
    parallel: Parallel = SERIAL,
) -> np.ndarray:
    """LBR's winnings (chips, mean of both seats) on each of `deals` seeded deals (`parallel`:
    threads, deals per task (default 64) and progress)."""
    chunk = 64 if parallel.chunk is None else parallel.chunk
    from concurrent.futures import ThreadPoolExecutor

    if game.num_hole_cards not in (1, 2):
        raise ValueError("LBR is implemented for one or two hole cards")
    tree = build_tree(game)
    hands = np.array(list(combinations(range(game.deck_size), game.num_hole_cards)), dtype=np.int8)
    hand_bits = (np.uint64(1) << hands.astype(np.uint64)).sum(axis=1).astype(np.uint64)
    board_through = np.array(
        [game.board_cards_through(r) for r in range(game.num_rounds)], dtype=np.int64
    )
    total = int(board_through[-1])
    max_missing = max(total - int(b) for b in board_through[1:]) if game.num_rounds > 1 else 0
    pool = game.deck_size - game.num_hole_cards
    flats, starts, widths = [], [0], []
    for missing in range(max_missing + 1):
        c = _combos(pool, missing) if missing else np.zeros((1, 0), dtype=np.int8)
        flats.append(c.ravel())
        starts.append(starts[-1] + c.size)
        widths.append(max(1, missing))
    combos_flat = np.concatenate(flats).astype(np.int8) if flats else np.zeros(0, np.int8)
    out = np.zeros(deals)
    strategy = np.ascontiguousarray(strategy, dtype=np.float32)

    def work(first: int) -> int:
        count = min(chunk, deals - first)
        _play(
            seed, first, count, tree.arrays, np.array(game.raise_size, dtype=np.int64), offsets,
            ndec, strategy, hands, hand_bits, game.deck_size, board_through, combos_flat,
            np.array(starts, dtype=np.int64), np.array(widths, dtype=np.int64), tables.lookup,
            tables.evaluator, out[first : first + count],
        )  # fmt: skip
        return count

    with ThreadPoolExecutor(max_workers=max(1, parallel.threads)) as pool_:
        for done in pool_.map(work, range(0, deals, chunk)):
            if parallel.progress is not None:
                parallel.progress(done)
    return out
