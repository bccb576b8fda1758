"""Public chance sampling CFR (PCS, Johanson et al. 2012) on bucketed two-player limit games.

Chance sampling (`engines.poker.mccfr`) samples a whole deal per iteration: both hands and the
board. Public chance sampling samples only the public cards, the board, and walks the betting
tree once per player with one vector over every private hand of each player: the traverser's
counterfactual values coming up, both players' reach probabilities going down. One iteration
thus updates every hand against every opponent hand of the sampled board, O(H^2) deals in O(H)
time per node, with fold values from per-card reach sums and showdowns as one sorted sweep
(exact card removal both ways).

Updates alternate: player 0's walk updates its regrets and strategy sums, then player 1's walk
sees player 0's new strategy, as `engines.poker.cfr.Solver` does. On a game without board
cards (Kuhn) an iteration is therefore exactly one iteration of full-traversal CFR; with board
cards it is an unbiased sample of one. The board of iteration t is a function of (seed, t), so
a checkpoint is the regret and strategy-sum arrays plus t. Average-strategy weights are
t**gamma; `plus` floors regrets at zero after every update (CFR+); `discount` = (alpha, beta)
is discounted CFR's (Brown & Sandholm 2019): after iteration t every positive regret is
multiplied by t^alpha / (t^alpha + 1) and every negative one by t^beta / (t^beta + 1) (with
gamma = 2, DCFR's own averaging).

Information-set rows follow `poker.cfr.Solver`: offsets[r] + bucket * ndec[r] + slot.
"""

from __future__ import annotations

from itertools import combinations
from math import comb
from typing import NamedTuple

import numpy as np
from numba import njit

from gameforge.engines.poker.acpc import GameDef
from gameforge.engines.poker.betting import DECISION, FOLD_END, TreeArrays
from gameforge.engines.poker.evaluator import EvalTables
from gameforge.engines.poker.mccfr import (
    BucketLookup,
    DealTables,
    SampledSolver,
    hand_buckets,
    match_regrets,
    showdown_order,
    shuffle_deal,
)

MAX_PUBLIC_HOLE_CARDS = 2  # card removal below is inclusion-exclusion over one or two cards


def private_hands(game: GameDef) -> tuple[np.ndarray, np.ndarray]:
    """(hands [H, hole cards] int8, their card bits uint64): every hole-card combination."""
    hands = np.array(list(combinations(range(game.deck_size), game.num_hole_cards)), np.int8)
    bits = np.zeros(hands.shape[0], np.uint64)
    for t in range(hands.shape[1]):
        bits |= np.left_shift(np.uint64(1), hands[:, t].astype(np.uint64))
    return hands, bits


@njit(cache=True, nogil=True)
def _compatible_totals(
    reach: np.ndarray, hands: np.ndarray, valid: np.ndarray, by_card: np.ndarray, out: np.ndarray
) -> None:
    """out[h] = the total of `reach` over the hands that share no card with h (h excluded)."""
    total = 0.0
    by_card[:] = 0.0
    nh = hands.shape[1]
    for h in valid:
        total += reach[h]
        for t in range(nh):
            by_card[hands[h, t]] += reach[h]
    for h in valid:
        s = total
        for t in range(nh):
            s -= by_card[hands[h, t]]
        if nh == 2:  # h itself was taken away twice
            s += reach[h]
        out[h] = s


@njit(cache=True, nogil=True)
def _showdown(
    reach: np.ndarray,
    hands: np.ndarray,
    order: np.ndarray,
    rank: np.ndarray,
    compatible: np.ndarray,
    below_card: np.ndarray,
    tie_card: np.ndarray,
    stake: float,
    out: np.ndarray,
) -> None:
    """out[h] = stake * (opponent reach beaten by h - reach beating h), card removal exact:
    one sweep in rank order; `compatible` holds `_compatible_totals` of the same reach."""
    nh = hands.shape[1]
    below = 0.0
    below_card[:] = 0.0
    i = 0
    n = order.shape[0]
    while i < n:
        j = i
        while j < n and rank[order[j]] == rank[order[i]]:
            j += 1
        tie = 0.0
        tie_card[:] = 0.0
        for k in range(i, j):
            h = order[k]
            tie += reach[h]
            for t in range(nh):
                tie_card[hands[h, t]] += reach[h]
        for k in range(i, j):
            h = order[k]
            win = below
            eq = tie
            for t in range(nh):
                win -= below_card[hands[h, t]]
                eq -= tie_card[hands[h, t]]
            if nh == 2:
                eq += reach[h]
            out[h] = stake * (win - (compatible[h] - win - eq))
        below += tie
        for k in range(i, j):
            h = order[k]
            for t in range(nh):
                below_card[hands[h, t]] += reach[h]
        i = j


class WalkLayout(NamedTuple):
    """Where each node's per-hand data lives in the walk's scratch arrays."""

    decision: np.ndarray  # (N,) index among the decision nodes, -1 at terminals
    terminal: np.ndarray  # (N,) index among the terminals, -1 at decision nodes
    terminals: np.ndarray  # (T,) node of each terminal


class WalkScratch(NamedTuple):
    """Arrays a walk reuses: hand-major for the per-hand passes (each hand's information-set
    rows of a round are one contiguous run in the bucket-major layout), node-major for the
    terminals (one vector over the hands each)."""

    reach: np.ndarray  # (H, N, 2) both players' reach
    sigma: np.ndarray  # (H, D, 3) the strategy at each decision node, before any update
    opp_reach: np.ndarray  # (T, H) the opponent's reach at each terminal
    payoff: np.ndarray  # (T, H) the traverser's value at each terminal
    payoff_by_hand: np.ndarray  # (H, T) the same, hand-major
    values: np.ndarray  # (N,) one hand's values during the up pass
    by_card: np.ndarray  # (deck,) per-card reach sums
    tie_card: np.ndarray  # (deck,)
    compatible: np.ndarray  # (H,)


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
    """Decision and terminal indices of a betting tree's nodes."""
    is_decision = tree.kind == DECISION
    decision = np.where(is_decision, np.cumsum(is_decision) - 1, -1).astype(np.int64)
    terminal = np.where(~is_decision, np.cumsum(~is_decision) - 1, -1).astype(np.int64)
    return WalkLayout(decision, terminal, np.flatnonzero(~is_decision).astype(np.int64))


def walk_scratch(layout: WalkLayout, hands: int, deck_size: int) -> WalkScratch:
    """Scratch arrays for walks over `hands` private hands."""
    n, d, t = layout.decision.shape[0], int((layout.decision >= 0).sum()), layout.terminals.size
    return WalkScratch(
        np.zeros((hands, n, 2)), np.zeros((hands, d, 3)), np.zeros((t, hands)),
        np.zeros((t, hands)), np.zeros((hands, t)), np.zeros(n), np.zeros(deck_size),
        np.zeros(deck_size), np.zeros(hands),
    )  # fmt: skip


TILE = 64  # a tile of the transposes below: both sides stay in cache


@njit(cache=True, nogil=True)
def _gather_reach(reach: np.ndarray, nodes: np.ndarray, player: int, out: np.ndarray) -> None:
    """out[t, h] = reach[h, nodes[t], player], tile by tile."""
    T, H = out.shape
    for t0 in range(0, T, TILE):
        for h0 in range(0, H, TILE):
            for h in range(h0, min(h0 + TILE, H)):
                for t in range(t0, min(t0 + TILE, T)):
                    out[t, h] = reach[h, nodes[t], player]


@njit(cache=True, nogil=True)
def _transpose(src: np.ndarray, out: np.ndarray) -> None:
    """out[h, t] = src[t, h], tile by tile."""
    T, H = src.shape
    for t0 in range(0, T, TILE):
        for h0 in range(0, H, TILE):
            for t in range(t0, min(t0 + TILE, T)):
                for h in range(h0, min(h0 + TILE, H)):
                    out[h, t] = src[t, h]


class BoardHands(NamedTuple):
    """One board's view of the private hands: bucket per round (-1 if the hand collides with
    the board), the hands that do not, their showdown ranks and the sweep order."""

    buckets: np.ndarray  # (R, H)
    valid: np.ndarray  # hands that share no card with the board
    rank: np.ndarray  # (H,) showdown value on the whole board (valid hands only)
    order: np.ndarray  # valid hands by rank


@njit(cache=True, nogil=True)
def board_hands(board: np.ndarray, game: PublicGame) -> BoardHands:
    """Every hand's buckets and showdown rank on a complete `board` (both walks share them)."""
    board_through, hands, hand_bits, lookup, ev = game[4:]
    R = board_through.shape[0]
    H = hands.shape[0]
    conflict = np.uint64(0)
    for t in range(board.shape[0]):
        conflict |= np.uint64(1) << np.uint64(board[t])
    buckets = np.empty((R, H), np.int64)
    for r in range(R):
        hand_buckets(hands, board, r, board_through[r], lookup, conflict, hand_bits, buckets[r])
    rank, order = showdown_order(hands, buckets[R - 1], board, board.shape[0], ev)
    return BoardHands(buckets, np.flatnonzero(buckets[R - 1] >= 0), rank, order)


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
    sums (weight * own reach); returns the decision nodes walked, summed over the hands."""
    tree, layout, offsets, ndec = game[:4]
    hands = game.hands
    kind, player, rnd, spent, children, slot = tree
    decision, terminal, terminals = layout
    reach, sigma, opp_reach, payoff, payoff_by_hand, values, by_card, tie_card, compatible = scratch
    buckets, valid, rank, order = dealt
    N = kind.shape[0]
    walked = 0
    # Down, hand by hand: both players' reach and the strategy before this walk's updates.
    for h in valid:  # (another hand's rows are stale: nothing below reads them)
        reach[h, 0, 0] = 1.0
        reach[h, 0, 1] = 1.0
        for n in range(N):
            if kind[n] != DECISION:
                continue
            p = player[n]
            d = decision[n]
            walked += 1
            r = rnd[n]
            match_regrets(regret, offsets[r] + buckets[r, h] * ndec[r] + slot[n], children[n],
                          sigma[h, d])  # fmt: skip
            for a in range(3):
                c = children[n, a]
                if c >= 0:
                    reach[h, c, p] = reach[h, n, p] * sigma[h, d, a]
                    reach[h, c, 1 - p] = reach[h, n, 1 - p]
    # Terminals, node by node: the traverser's value against the opponent's reach vector.
    opp = 1 - trav
    _gather_reach(reach, terminals, opp, opp_reach)
    for t in range(terminals.shape[0]):
        n = terminals[t]
        any_reach = False
        for h in valid:
            if opp_reach[t, h] != 0.0:
                any_reach = True
                break
        if not any_reach:
            for h in valid:
                payoff[t, h] = 0.0
            continue
        _compatible_totals(opp_reach[t], hands, valid, by_card, compatible)
        if kind[n] == FOLD_END:
            folder = player[n]
            stake = float(spent[n, folder]) if folder == opp else -float(spent[n, trav])
            for h in valid:
                payoff[t, h] = stake * compatible[h]
        else:
            _showdown(opp_reach[t], hands, order, rank, compatible, by_card, tie_card,
                      float(spent[n, 0]), payoff[t])  # fmt: skip
    _transpose(payoff, payoff_by_hand)
    # Up, hand by hand: values, then the traverser's regrets and strategy sums.
    for h in valid:
        for n in range(N - 1, -1, -1):
            if kind[n] != DECISION:
                values[n] = payoff_by_hand[h, terminal[n]]
                continue
            if player[n] != trav:  # the opponent's strategy is already in its reach below
                v = 0.0
                for a in range(3):
                    c = children[n, a]
                    if c >= 0:
                        v += values[c]
                values[n] = v
                continue
            d = decision[n]
            v = 0.0
            for a in range(3):
                c = children[n, a]
                if c >= 0:
                    v += sigma[h, d, a] * values[c]
            values[n] = v
            r = rnd[n]
            row = offsets[r] + buckets[r, h] * ndec[r] + slot[n]
            own = weight * reach[h, n, trav]
            for a in range(3):
                c = children[n, a]
                if c >= 0:
                    regret[row, a] += values[c] - v
                    avg[row, a] += own * sigma[h, d, a]
    if plus:  # after every hand's update, as a full iteration floors them
        for h in valid:
            for n in range(N):
                if kind[n] == DECISION and player[n] == trav:
                    r = rnd[n]
                    row = offsets[r] + buckets[r, h] * ndec[r] + slot[n]
                    for a in range(3):
                        if regret[row, a] < 0.0:
                            regret[row, a] = 0.0
    return walked


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
    deck = np.empty(scratch.by_card.shape[0], np.int8)
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
    ):
        if not 1 <= game.num_hole_cards <= MAX_PUBLIC_HOLE_CARDS:
            raise ValueError(
                f"public chance sampling needs 1 or 2 hole cards, {game.name} has "
                f"{game.num_hole_cards}"
            )
        super().__init__(game, tables, variant="chance", gamma=gamma, plus=plus, seed=seed)
        self.variant = "public"
        self.hands, self.hand_bits = private_hands(game)
        self._layout = walk_layout(self.tree.arrays)
        self._game = PublicGame(self.tree.arrays, self._layout, self.offsets, self.ndec,
                                self._board_through, self.hands, self.hand_bits,
                                self.tables.lookup, self.tables.evaluator)  # fmt: skip
        self._walk_scratch: WalkScratch | None = None
        self.discount = discount

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
            self._walk_scratch = walk_scratch(self._layout, self.hands.shape[0],
                                              self.game.deck_size)  # fmt: skip
        return self._walk_scratch

    def iterate(self, iterations: int = 1) -> None:
        """Run `iterations` more iterations (deterministic for the seed)."""
        discount = self.discount if self.discount is not None else (np.nan, 0.0)
        self.nodes_visited += _run(self.iteration, iterations, self.seed, self.gamma, self.plus,
                                   (float(discount[0]), float(discount[1])), self._game,
                                   self.regret, self.avg, self._scratch())  # fmt: skip
        self.iteration += iterations
