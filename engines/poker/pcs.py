"""Public chance sampling CFR (PCS, Johanson et al. 2012) on bucketed two-player limit games.

Chance sampling (`engines.poker.mccfr`) samples a whole deal per iteration: both hands and the
board. Public chance sampling samples only the public cards, the board, and walks the betting
tree once per player with one vector over every private hand of each player: the traverser's
counterfactual values coming up, both players' reach probabilities going down. One iteration
thus updates every hand against every opponent hand of the sampled board, O(H^2) deals in O(H)
time per node, with fold values from per-card reach sums and showdowns as one sorted sweep
(exact card removal both ways). The walks go node by node, each step a loop over the board's
hands (their information-set rows are scattered, so each is asked for a few hands ahead), and
the terminals LANES opponent reach rows at a time; the regrets and sums still change in the
order of a hand-by-hand walk, so the results are its bits.

Updates alternate: player 0's walk updates its regrets and strategy sums, then player 1's walk
sees player 0's new strategy, as `engines.poker.cfr.FullWalkSolver` does. On a game without board
cards (Kuhn) an iteration is therefore exactly one iteration of full-traversal CFR; with board
cards it is an unbiased sample of one. The board of iteration t is a function of (seed, t), so
a checkpoint is the regret and strategy-sum arrays plus t. Average-strategy weights are
t**gamma; `plus` floors regrets at zero after every update (CFR+); `discount` = (alpha, beta)
is discounted CFR's (Brown & Sandholm 2019): after iteration t every positive regret is
multiplied by t^alpha / (t^alpha + 1) and every negative one by t^beta / (t^beta + 1) (with
gamma = 2, DCFR's own averaging).

Information-set rows follow `poker.solver.InfosetLayout`: offsets[r] + bucket * ndec[r] + slot.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from functools import partial
from itertools import combinations
from math import comb
from typing import Any, NamedTuple

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

from gameforge.engines.poker.acpc import GameDef
from gameforge.engines.poker.betting import DECISION, FOLD_END, TreeArrays
from gameforge.engines.poker.evaluator import EvalTables
from gameforge.engines.poker.mccfr import (
    BucketLookup,
    DealTables,
    SampledSolver,
    hand_buckets,
    regret_matched,
    showdown_order,
    shuffle_deal,
    tie_end,
)

MAX_PUBLIC_HOLE_CARDS = 2  # card removal below is inclusion-exclusion over one or two cards


def private_hands(game: GameDef) -> tuple[np.ndarray, np.ndarray]:
    """(hands [H, hole cards] int8, their card bits uint64): every hole-card combination."""
    hands = np.array(list(combinations(range(game.deck_size), game.num_hole_cards)), np.int8)
    bits = np.zeros(hands.shape[0], np.uint64)
    for t in range(hands.shape[1]):
        bits |= np.left_shift(np.uint64(1), hands[:, t].astype(np.uint64))
    return hands, bits


AHEAD = 16  # hands: how far ahead the walks ask for a hand's information-set rows


def _prefetch_typer(typingctx, array, index):
    """Ask the CPU to bring row `index` of a 2-D array into cache for writing
    (llvm.prefetch): the walks touch one row per hand at scattered places, and the loads
    would otherwise wait one after another."""
    if not isinstance(array, types.Array) or not isinstance(index, types.Integer):
        return None

    def codegen(context, builder, signature, args):
        arr = context.make_array(signature.args[0])(context, builder, args[0])
        byte_ptr = ir.IntType(8).as_pointer()
        data = builder.bitcast(arr.data, byte_ptr)
        row = context.cast(builder, args[1], signature.args[1], types.intp)
        ptr = builder.gep(data, [builder.mul(row, builder.extract_value(arr.strides, 0))])
        i32 = ir.IntType(32)
        fn = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(ir.VoidType(), [byte_ptr, i32, i32, i32]),
            "llvm.prefetch.p0",
        )  # fmt: skip
        builder.call(fn, [ptr, i32(1), i32(3), i32(1)])  # write, keep, data
        return context.get_dummy_value()

    return types.void(array, index), codegen


_prefetch_row: Any = intrinsic(_prefetch_typer)


class WalkLayout(NamedTuple):
    """Where each node's data lives in the walk's scratch arrays. A child gets a new reach row
    for the player who acts at its parent and shares its parent's row for the other, so no
    reach is copied, and terminals that share the opponent's row share its sums."""

    decision: np.ndarray  # (N,) index among the decision nodes, -1 at terminals
    terminals: np.ndarray  # (T,) node of each terminal
    reach_row: np.ndarray  # (N, 2) each player's reach row at each node


class TerminalWork(NamedTuple):
    """`_terminal_lanes`' arrays: LANES opponent reach rows side by side."""

    by_hand: np.ndarray  # (H, LANES) the rows, hand-major
    compat: np.ndarray  # (H, LANES) each hand's compatible total
    diff: np.ndarray  # (H, LANES) each hand's showdown difference
    by_card: np.ndarray  # (deck, LANES) reach per card
    below_card: np.ndarray  # (deck, LANES) reach per card of the hands ranked below
    tie_card: np.ndarray  # (deck, LANES) reach per card of a group of equal rank
    total: np.ndarray  # (LANES,)
    below: np.ndarray  # (LANES,)
    tie: np.ndarray  # (LANES,)


class WalkScratch(NamedTuple):
    """Arrays a walk reuses, node-major: one vector over the board's hands per node, so every
    step is a loop over the hands."""

    reach: np.ndarray  # (rows + 1, H) reach rows (WalkLayout.reach_row), the last a sink
    sigma: np.ndarray  # (D, 3, H) the strategy at each decision node, before any update
    values: np.ndarray  # (N, H) the traverser's value at each node
    lane_of_row: np.ndarray  # (rows,) a reach row's place among the terminals' rows, or -1
    lane_rows: np.ndarray  # (rows,) the terminals' rows with reach, showdown rows first
    terminal: TerminalWork


class PublicGame(NamedTuple):
    """What the walks read of the game and the abstraction, passed as one argument."""

    tree: TreeArrays
    layout: WalkLayout
    offsets: np.ndarray  # (R,) first information-set row of each round
    ndec: np.ndarray  # (R,) decision nodes per round
    board_through: np.ndarray  # (R,) board cards dealt by each round
    hands: np.ndarray  # (H, hole cards) every private hand
    hand_bits: np.ndarray  # (H,) their card bits
    lookup: BucketLookup
    ev: EvalTables


def walk_layout(tree: TreeArrays) -> WalkLayout:
    """Decision indices, terminals and reach rows of a betting tree."""
    is_decision = tree.kind == DECISION
    decision = np.where(is_decision, np.cumsum(is_decision) - 1, -1).astype(np.int64)
    terminals = np.flatnonzero(~is_decision).astype(np.int64)
    reach_row = np.full((tree.kind.size, 2), -1, np.int64)
    reach_row[0] = (0, 1)
    rows = 2
    for node in np.flatnonzero(is_decision):
        p = int(tree.player[node])
        for child in tree.children[node]:
            if child < 0:
                continue
            if child <= node:  # the down pass fills a node's rows before its children's
                raise ValueError("betting tree: a child numbered before its parent")
            reach_row[child, p] = rows
            reach_row[child, 1 - p] = reach_row[node, 1 - p]
            rows += 1
    return WalkLayout(decision, terminals, reach_row)


def walk_scratch(layout: WalkLayout, hands: int, deck_size: int) -> WalkScratch:
    """Scratch arrays for walks over `hands` private hands."""
    n, d = layout.decision.shape[0], int((layout.decision >= 0).sum())
    rows = int(layout.reach_row.max()) + 1
    return WalkScratch(
        np.zeros((rows + 1, hands)), np.zeros((d, 3, hands)), np.zeros((n, hands)),
        np.full(rows, -1, np.int64), np.zeros(rows, np.int64), terminal_work(hands, deck_size),
    )  # fmt: skip


def terminal_work(hands: int, deck_size: int) -> TerminalWork:
    """`_terminal_lanes`' arrays for `hands` private hands (one set per thread)."""
    return TerminalWork(
        np.zeros((hands, LANES)), np.zeros((hands, LANES)), np.zeros((hands, LANES)),
        np.zeros((deck_size, LANES)), np.zeros((deck_size, LANES)),
        np.zeros((deck_size, LANES)), np.zeros(LANES), np.zeros(LANES), np.zeros(LANES),
    )  # fmt: skip


class BoardHands(NamedTuple):
    """One board's view of the private hands that share no card with it, numbered 0..n-1 in
    hand order: where each one's information-set rows start in every round, its hole cards,
    its showdown rank and the sweep order."""

    base: np.ndarray  # (R, n) offsets[r] + bucket * ndec[r]: a row is base + the node's slot
    cards: np.ndarray  # (n, hole cards)
    rank: np.ndarray  # (n,) showdown value on the whole board
    order: np.ndarray  # (n,) the hands by rank (ties in hand order)


@njit(cache=True, nogil=True)
def board_hands(board: np.ndarray, game: PublicGame) -> BoardHands:
    """The hands valid on a complete `board`, with their rows, cards and showdown ranks (both
    walks share them)."""
    offsets, ndec, board_through, hands, hand_bits, lookup, ev = game[2:]
    R = board_through.shape[0]
    H = hands.shape[0]
    conflict = np.uint64(0)
    for t in range(board.shape[0]):
        conflict |= np.uint64(1) << np.uint64(board[t])
    buckets = np.empty((R, H), np.int64)
    for r in range(R):
        hand_buckets(hands, board, r, board_through[r], lookup, conflict, hand_bits, buckets[r])
    rank, order = showdown_order(hands, buckets[R - 1], board, board.shape[0], ev)
    valid = np.flatnonzero(buckets[R - 1] >= 0)
    n = valid.shape[0]
    position = np.full(H, -1, np.int64)
    base = np.empty((R, n), np.int64)
    cards = np.empty((n, hands.shape[1]), np.int64)
    for i in range(n):
        h = valid[i]
        position[h] = i
        for r in range(R):
            base[r, i] = offsets[r] + buckets[r, h] * ndec[r]
        for t in range(hands.shape[1]):
            cards[i, t] = hands[h, t]
    return BoardHands(base, cards, rank[valid], position[order])


LANES = 64  # opponent reach rows whose terminal values are computed side by side


@njit(cache=True, nogil=True)
def _terminal_lanes(
    reach: np.ndarray,
    rows: np.ndarray,
    cards: np.ndarray,
    order: np.ndarray,
    rank: np.ndarray,
    sweep: bool,
    work: TerminalWork,
) -> None:
    """For the opponent's reach rows `rows` (at most LANES), side by side: each hand's
    compatible total (the reach of the hands that share no card with it) into compat[:, k]
    and, with `sweep`, its showdown difference (compatible reach beaten minus compatible reach
    that beats it, card removal exact: one sweep in rank order) into diff[:, k].

    Each row's sums are added in the same order as a row alone would add them, so the values
    are the same bits; every step is a loop over the rows."""
    by_hand, compat, diff, by_card, below_card, tie_card, total, below, tie = work
    n, nh, L = cards.shape[0], cards.shape[1], rows.shape[0]
    for i0 in range(0, n, LANES):  # the rows transposed, a tile at a time
        for k in range(L):
            src = reach[rows[k]]
            for i in range(i0, min(i0 + LANES, n)):
                by_hand[i, k] = src[i]
    total[:L] = 0.0
    by_card[:, :L] = 0.0
    for i in range(n):
        for k in range(L):
            total[k] += by_hand[i, k]
        for t in range(nh):
            c = cards[i, t]
            for k in range(L):
                by_card[c, k] += by_hand[i, k]
    for i in range(n):
        c0, c1 = cards[i, 0], cards[i, nh - 1]
        if nh == 2:  # i itself was taken away twice
            for k in range(L):
                compat[i, k] = total[k] - by_card[c0, k] - by_card[c1, k] + by_hand[i, k]
        else:
            for k in range(L):
                compat[i, k] = total[k] - by_card[c0, k]
    if not sweep:
        return
    below[:L] = 0.0
    below_card[:, :L] = 0.0
    g = 0
    while g < n:
        e = tie_end(rank, order, g, n)
        tie[:L] = 0.0
        for q in range(g, e):  # tie_card is 0 outside the group's cards
            i = order[q]
            for k in range(L):
                tie[k] += by_hand[i, k]
            for t in range(nh):
                c = cards[i, t]
                for k in range(L):
                    tie_card[c, k] += by_hand[i, k]
        for q in range(g, e):
            i = order[q]
            c0, c1 = cards[i, 0], cards[i, nh - 1]
            if nh == 2:
                for k in range(L):
                    win = below[k] - below_card[c0, k] - below_card[c1, k]
                    eq = tie[k] - tie_card[c0, k] - tie_card[c1, k] + by_hand[i, k]
                    diff[i, k] = win - (compat[i, k] - win - eq)
            else:
                for k in range(L):
                    win = below[k] - below_card[c0, k]
                    eq = tie[k] - tie_card[c0, k]
                    diff[i, k] = win - (compat[i, k] - win - eq)
        for k in range(L):
            below[k] += tie[k]
        for q in range(g, e):
            i = order[q]
            for t in range(nh):
                c = cards[i, t]
                for k in range(L):
                    below_card[c, k] += by_hand[i, k]
                    tie_card[c, k] = 0.0
        g = e


# Long argument list: a numba kernel called per node, its rows passed as they are (no tuple built).
@njit(cache=True, nogil=True)
def _match_down(
    regret: np.ndarray,
    base: np.ndarray,
    slot: int,
    legal: tuple[bool, bool, bool],
    src: np.ndarray,
    sigma: np.ndarray,
    dst0: np.ndarray,
    dst1: np.ndarray,
    dst2: np.ndarray,
    lo: int,
    hi: int,
) -> None:
    """One decision node for hands lo..hi-1: regret matching of their rows into sigma (3, n),
    and the acting player's reach at the children (dst_a = src x sigma_a; an illegal action's
    dst is a sink)."""
    l0, l1, l2 = legal
    for i in range(lo, hi):
        if i + AHEAD < hi:
            _prefetch_row(regret, base[i + AHEAD] + slot)
        row = base[i] + slot
        s0, s1, s2 = regret_matched(regret[row, 0], regret[row, 1], regret[row, 2], l0, l1, l2)
        sigma[0, i] = s0
        sigma[1, i] = s1
        sigma[2, i] = s2
        v = src[i]
        dst0[i] = v * s0
        dst1[i] = v * s1
        dst2[i] = v * s2


@njit(cache=True, nogil=True)
def _sum_up(
    legal: tuple[bool, bool, bool], v0: np.ndarray, v1: np.ndarray, v2: np.ndarray,
    hands: np.ndarray, out: np.ndarray,
) -> None:  # fmt: skip
    """An opponent's node for `hands`: the sum of its children's values (its strategy is in
    their reach)."""
    l0, l1, l2 = legal
    for i in hands:
        v = 0.0
        if l0:
            v += v0[i]
        if l1:
            v += v1[i]
        if l2:
            v += v2[i]
        out[i] = v


# Long argument list: a numba kernel called per node, its rows passed as they are (no tuple built).
@njit(cache=True, nogil=True)
def _regret_up(
    regret: np.ndarray,
    avg: np.ndarray,
    base: np.ndarray,
    slot: int,
    legal: tuple[bool, bool, bool],
    sigma: np.ndarray,
    v0: np.ndarray,
    v1: np.ndarray,
    v2: np.ndarray,
    own: np.ndarray,
    weight: float,
    plus: bool,
    hands: np.ndarray,
    out: np.ndarray,
) -> None:
    """A traverser's node for `hands`: its value under sigma, each action's regret and the
    strategy sums (weight x own reach x sigma); with `plus`, their rows floored at zero once
    they have all added to them (every hand of a bucket is among `hands`, and no other node
    writes its rows)."""
    l0, l1, l2 = legal
    n = hands.shape[0]
    for j in range(n):
        if j + AHEAD < n:
            _prefetch_row(regret, base[hands[j + AHEAD]] + slot)
            _prefetch_row(avg, base[hands[j + AHEAD]] + slot)
        i = hands[j]
        v = 0.0
        if l0:
            v += sigma[0, i] * v0[i]
        if l1:
            v += sigma[1, i] * v1[i]
        if l2:
            v += sigma[2, i] * v2[i]
        out[i] = v
        row = base[i] + slot
        w = weight * own[i]
        if l0:
            regret[row, 0] += v0[i] - v
            avg[row, 0] += w * sigma[0, i]
        if l1:
            regret[row, 1] += v1[i] - v
            avg[row, 1] += w * sigma[1, i]
        if l2:
            regret[row, 2] += v2[i] - v
            avg[row, 2] += w * sigma[2, i]
    if plus:
        for i in hands:
            row = base[i] + slot
            for a in range(3):
                if regret[row, a] < 0.0:
                    regret[row, a] = 0.0


@njit(cache=True, nogil=True)
def walk_down(
    dealt: BoardHands, game: PublicGame, regret: np.ndarray, scratch: WalkScratch, lo: int,
    hi: int,
) -> None:  # fmt: skip
    """A walk's first part for hands lo..hi-1: both players' reach at every node and the
    strategy before this walk's updates."""
    tree, layout = game[0], game[1]
    kind, player, rnd, _, children, slot = tree
    decision, _, reach_row = layout
    reach, sigma = scratch[0], scratch[1]
    base = dealt.base
    sink = reach[reach.shape[0] - 1]
    reach[0, lo:hi] = 1.0
    reach[1, lo:hi] = 1.0
    for v in range(kind.shape[0]):
        if kind[v] != DECISION:
            continue
        p = player[v]
        c0, c1, c2 = children[v, 0], children[v, 1], children[v, 2]
        _match_down(
            regret, base[rnd[v]], slot[v], (c0 >= 0, c1 >= 0, c2 >= 0), reach[reach_row[v, p]],
            sigma[decision[v]],
            reach[reach_row[c0, p]] if c0 >= 0 else sink,
            reach[reach_row[c1, p]] if c1 >= 0 else sink,
            reach[reach_row[c2, p]] if c2 >= 0 else sink,
            lo, hi,
        )  # fmt: skip


@njit(cache=True, nogil=True)
def terminal_rows(trav: int, n: int, game: PublicGame, scratch: WalkScratch) -> tuple[int, int]:
    """The opponent's reach rows that the terminals read and that reach somewhere, numbered
    into scratch.lane_rows, the showdowns' rows first: (rows, showdown rows)."""
    kind = game.tree.kind
    _, terminals, reach_row = game.layout
    reach, lane_of_row, lane_rows = scratch.reach, scratch.lane_of_row, scratch.lane_rows
    opp = 1 - trav
    count = 0
    n_sweep = 0
    for showdowns in (True, False):
        for k in range(terminals.shape[0]):
            v = terminals[k]
            row = reach_row[v, opp]
            if (kind[v] != FOLD_END) != showdowns or lane_of_row[row] >= 0:
                continue
            for i in range(n):
                if reach[row, i] != 0.0:
                    lane_of_row[row] = count
                    lane_rows[count] = row
                    count += 1
                    break
        if showdowns:
            n_sweep = count
    return count, n_sweep


@njit(cache=True, nogil=True)
def terminal_values(
    dealt: BoardHands,
    trav: int,
    game: PublicGame,
    scratch: WalkScratch,
    lanes: TerminalWork,
    rows: tuple[int, int],
    first: int,
    step: int,
) -> None:
    """The traverser's value at every terminal whose opponent row is in blocks first,
    first + step, ... of LANES rows (a showdown's value is stake x its row's difference, a
    fold's stake x the compatible total)."""
    kind, player, _, spent, _, _ = game.tree
    _, terminals, reach_row = game.layout
    cards, rank, order = dealt.cards, dealt.rank, dealt.order
    n = cards.shape[0]
    count, n_sweep = rows
    opp = 1 - trav
    for block in range(first, (count + LANES - 1) // LANES, step):
        lo = block * LANES
        hi = min(lo + LANES, count)
        _terminal_lanes(scratch.reach, scratch.lane_rows[lo:hi], cards, order, rank,
                        lo < n_sweep, lanes)  # fmt: skip
        for k in range(terminals.shape[0]):
            v = terminals[k]
            lane = scratch.lane_of_row[reach_row[v, opp]] - lo
            if not 0 <= lane < hi - lo:
                continue
            out = scratch.values[v]
            if kind[v] == FOLD_END:
                folder = player[v]
                stake = float(spent[v, folder]) if folder == opp else -float(spent[v, trav])
                for i in range(n):
                    out[i] = stake * lanes.compat[i, lane]
            else:
                stake = float(spent[v, 0])
                for i in range(n):
                    out[i] = stake * lanes.diff[i, lane]


@njit(cache=True, nogil=True)
def terminals_done(trav: int, n: int, game: PublicGame, scratch: WalkScratch, count: int) -> None:
    """Value 0 at the terminals the opponent never reaches; the row numbering cleared."""
    _, terminals, reach_row = game.layout
    lane_of_row = scratch.lane_of_row
    for k in range(terminals.shape[0]):
        v = terminals[k]
        if lane_of_row[reach_row[v, 1 - trav]] < 0:
            scratch.values[v, :n] = 0.0
    for k in range(count):
        lane_of_row[scratch.lane_rows[k]] = -1


# Long argument list: a numba kernel takes no Python objects, only arrays, scalars, tuples.
@njit(cache=True, nogil=True)
def walk_up(
    dealt: BoardHands,
    trav: int,
    weight: float,
    plus: bool,
    game: PublicGame,
    regret: np.ndarray,
    avg: np.ndarray,
    scratch: WalkScratch,
    r: int,
    hands: np.ndarray,
) -> None:
    """A walk's last part on round r's decision nodes (every later round done) for `hands`:
    values, then the traverser's regrets and strategy sums."""
    kind, player, rnd, _, children, slot = game.tree
    decision, _, reach_row = game.layout
    reach, sigma, values = scratch[0], scratch[1], scratch[2]
    base = dealt.base[r]
    sink = reach[reach.shape[0] - 1]
    for v in range(kind.shape[0] - 1, -1, -1):
        if kind[v] != DECISION or rnd[v] != r:
            continue
        c0, c1, c2 = children[v, 0], children[v, 1], children[v, 2]
        legal = (c0 >= 0, c1 >= 0, c2 >= 0)
        v0 = values[c0] if c0 >= 0 else sink
        v1 = values[c1] if c1 >= 0 else sink
        v2 = values[c2] if c2 >= 0 else sink
        if player[v] != trav:
            _sum_up(legal, v0, v1, v2, hands, values[v])
        else:
            _regret_up(regret, avg, base, slot[v], legal, sigma[decision[v]], v0, v1, v2,
                       reach[reach_row[v, trav]], weight, plus, hands, values[v])  # fmt: skip


@njit(cache=True, nogil=True)
def walk_board(
    dealt: BoardHands,
    trav: int,
    weight: float,
    plus: bool,
    game: PublicGame,
    regret: np.ndarray,
    avg: np.ndarray,
    scratch: WalkScratch,
) -> int:
    """One walk for traverser `trav` on a dealt board: updates trav's regrets and strategy
    sums (weight * own reach); returns the decision nodes walked, summed over the hands.

    Node by node, each step a loop over the board's hands: per hand the regrets and sums
    change in the same order as a hand-by-hand walk, so the results are the same bits. The
    values go up a round at a time (a node's children are in its round or a later one)."""
    n = dealt.cards.shape[0]
    walk_down(dealt, game, regret, scratch, 0, n)
    rows = terminal_rows(trav, n, game, scratch)
    terminal_values(dealt, trav, game, scratch, scratch.terminal, rows, 0, 1)
    terminals_done(trav, n, game, scratch, rows[0])
    every = np.arange(n)
    for r in range(dealt.base.shape[0] - 1, -1, -1):
        walk_up(dealt, trav, weight, plus, game, regret, avg, scratch, r, every)
    return n * int(game.layout.decision.max() + 1)


@njit(cache=True, nogil=True)
def hand_parts(dealt: BoardHands, game: PublicGame, parts: int) -> tuple[np.ndarray, np.ndarray]:
    """The board's hands split `parts` ways in every round by bucket (bucket mod parts), so
    that threads walking the parts up never write the same information-set row: (R, parts,
    n) hands in order, and (R, parts) how many."""
    base, offsets, ndec = dealt.base, game.offsets, game.ndec
    R, n = base.shape
    out = np.empty((R, parts, n), np.int64)
    sizes = np.zeros((R, parts), np.int64)
    for r in range(R):
        for i in range(n):
            k = ((base[r, i] - offsets[r]) // ndec[r]) % parts
            out[r, k, sizes[r, k]] = i
            sizes[r, k] += 1
    return out, sizes


@njit(cache=True, nogil=True)
def _discount(regret: np.ndarray, t: int, alpha: float, beta: float) -> None:
    """Discounted CFR after iteration t: positive regrets x t^alpha / (t^alpha + 1), negative
    ones x t^beta / (t^beta + 1)."""
    up = float(t) ** alpha
    down = float(t) ** beta
    keep_positive = up / (up + 1.0)
    keep_negative = down / (down + 1.0)
    flat = regret.reshape(-1)
    for i in range(flat.shape[0]):
        v = flat[i]
        flat[i] = v * (keep_positive if v > 0.0 else keep_negative)


# Long argument list: a numba kernel takes no Python objects, only arrays, scalars, tuples.
@njit(cache=True, nogil=True)
def _run(
    start: int,
    count: int,
    seed: int,
    gamma: float,
    plus: bool,
    discount: tuple[float, float],
    game: PublicGame,
    regret: np.ndarray,
    avg: np.ndarray,
    scratch: WalkScratch,
) -> int:
    """Iterations start+1 .. start+count: a board each, then a walk per player (and the
    regrets discounted, where discount's alpha is not NaN)."""
    board_total = game.board_through[game.board_through.shape[0] - 1]
    deck = np.empty(scratch.terminal.by_card.shape[0], np.int8)
    state = np.zeros(1, np.uint64)
    walked = 0
    for t in range(start + 1, start + count + 1):
        shuffle_deal(seed, t, state, deck, board_total)
        dealt = board_hands(deck[:board_total].copy(), game)
        weight = float(t) ** gamma
        for trav in range(2):
            walked += walk_board(dealt, trav, weight, plus, game, regret, avg, scratch)
        if not np.isnan(discount[0]):
            _discount(regret, t, discount[0], discount[1])
    return walked


class PublicSampledSolver(SampledSolver):
    """Public chance sampling CFR: the board sampled, every private hand walked as a vector."""

    def __init__(
        self,
        game: GameDef,
        tables: DealTables | None = None,
        *,
        gamma: float = 0.0,
        plus: bool = False,
        seed: int = 0,
        discount: tuple[float, float] | None = None,
        threads: int = 1,
    ):
        if not 1 <= game.num_hole_cards <= MAX_PUBLIC_HOLE_CARDS:
            raise ValueError(
                f"public chance sampling needs 1 or 2 hole cards, {game.name} has "
                f"{game.num_hole_cards}"
            )
        super().__init__(game, tables, variant="chance", gamma=gamma, plus=plus, seed=seed)
        self.variant = "public"
        self.hands, self.hand_bits = private_hands(game)
        self._walk_layout = walk_layout(self.tree.arrays)
        self._game = PublicGame(self.tree.arrays, self._walk_layout, self.layout.offsets,
                                self.layout.ndec, self._board_through, self.hands,
                                self.hand_bits, self.tables.lookup,
                                self.tables.evaluator)  # fmt: skip
        self._walk_scratch: WalkScratch | None = None
        self.discount = discount
        self.threads = max(1, int(threads))
        self._pool: ThreadPoolExecutor | None = None
        self._lanes: list[TerminalWork] = []

    @property
    def deals_per_iteration(self) -> int:
        """Deals one iteration's regret updates sum over: every ordered pair of compatible
        hands on the sampled board."""
        left = self.game.deck_size - int(self._board_through[-1])
        hole = self.game.num_hole_cards
        return comb(left, hole) * comb(left - hole, hole)

    def update_on_board(self, board: np.ndarray, trav: int, weight: float = 1.0) -> None:
        """One walk of `trav` on a given complete board (what an iteration does per player)."""
        dealt = board_hands(np.asarray(board, np.int8), self._game)
        walk_board(dealt, trav, weight, self.plus, self._game, self.regret,
                   self.avg, self._scratch())  # fmt: skip

    def _scratch(self) -> WalkScratch:
        """The walk's scratch arrays, made at the first walk (hundreds of MB for Hold'em)."""
        if self._walk_scratch is None:
            self._walk_scratch = walk_scratch(self._walk_layout, self.hands.shape[0],
                                              self.game.deck_size)  # fmt: skip
        return self._walk_scratch

    def iterate(self, iterations: int = 1) -> None:
        """Run `iterations` more iterations (deterministic for the seed; the same bits at any
        number of threads)."""
        discount = self.discount if self.discount is not None else (np.nan, 0.0)
        alpha, beta = float(discount[0]), float(discount[1])
        if self.threads == 1:
            self.nodes_visited += _run(self.iteration, iterations, self.seed, self.gamma,
                                       self.plus, (alpha, beta), self._game, self.regret,
                                       self.avg, self._scratch())  # fmt: skip
            self.iteration += iterations
            return
        game, scratch, k = self._game, self._scratch(), self.threads
        if self._pool is None:
            self._pool = ThreadPoolExecutor(k - 1, thread_name_prefix="public-sampling")
            self._lanes = [scratch.terminal] + [
                terminal_work(self.hands.shape[0], self.game.deck_size) for _ in range(k - 1)
            ]
        board_total = int(self._board_through[-1])
        deck = np.empty(self.game.deck_size, np.int8)
        state = np.zeros(1, np.uint64)
        decisions = int(self._walk_layout.decision.max()) + 1
        for t in range(self.iteration + 1, self.iteration + iterations + 1):
            shuffle_deal(self.seed, t, state, deck, board_total)
            dealt = board_hands(deck[:board_total].copy(), game)
            n = dealt.cards.shape[0]
            parts, sizes = hand_parts(dealt, game, k)
            cuts = [n * j // k for j in range(k + 1)]
            weight = float(t) ** self.gamma
            for trav in range(2):
                self._together([
                    partial(walk_down, dealt, game, self.regret, scratch, cuts[j], cuts[j + 1])
                    for j in range(k)
                ])  # fmt: skip
                rows = terminal_rows(trav, n, game, scratch)
                self._together([
                    partial(terminal_values, dealt, trav, game, scratch, self._lanes[j], rows, j, k)
                    for j in range(k)
                ])  # fmt: skip
                terminals_done(trav, n, game, scratch, rows[0])
                for r in range(parts.shape[0] - 1, -1, -1):
                    self._together([
                        partial(walk_up, dealt, trav, weight, self.plus, game, self.regret,
                                self.avg, scratch, r, parts[r, j, : sizes[r, j]])
                        for j in range(k)
                    ])  # fmt: skip
            if not np.isnan(alpha):
                _discount(self.regret, t, alpha, beta)
            self.nodes_visited += 2 * n * decisions
        self.iteration += iterations

    def _together(self, calls: list[partial[None]]) -> None:
        """Run the calls at once: the first in this thread, the rest in the pool (the kernels
        release the GIL)."""
        assert self._pool is not None
        pending = [self._pool.submit(call) for call in calls[1:]]
        calls[0]()
        for future in pending:
            future.result()
