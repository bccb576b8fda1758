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
t**gamma; `plus` floors regrets at zero after every update (CFR+).

Information-set rows follow `poker.cfr.Solver`: offsets[r] + bucket * ndec[r] + slot.
"""

from __future__ import annotations

from itertools import combinations
from math import comb

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
    hand_value,
    match_regrets,
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


@njit(cache=True, nogil=True)
def walk_board(
    board: np.ndarray,
    trav: int,
    weight: float,
    plus: bool,
    tree: TreeArrays,
    end: np.ndarray,
    offsets: np.ndarray,
    ndec: np.ndarray,
    board_through: np.ndarray,
    hands: np.ndarray,
    hand_bits: np.ndarray,
    lookup: BucketLookup,
    ev: EvalTables,
    deck_size: int,
    regret: np.ndarray,
    avg: np.ndarray,
    reach: np.ndarray,
    value: np.ndarray,
    live: np.ndarray,
) -> int:
    """One walk for traverser `trav` on a complete `board`: updates trav's regrets and strategy
    sums (weight * own reach); returns the decision nodes walked. `reach` [N, 2, H], `value`
    [N, H] and `live` [N] are scratch, reused from walk to walk."""
    kind, player, rnd, spent, children, slot = tree
    N = kind.shape[0]
    R = board_through.shape[0]
    H = hands.shape[0]
    nh = hands.shape[1]
    conflict = np.uint64(0)
    for t in range(board.shape[0]):
        conflict |= np.uint64(1) << np.uint64(board[t])
    buckets = np.empty((R, H), np.int64)
    for r in range(R):
        hand_buckets(hands, board, r, board_through[r], lookup, conflict, hand_bits, buckets[r])
    valid = np.flatnonzero(buckets[R - 1] >= 0)
    # showdown ranks of every valid hand on the whole board, and the sweep order
    card_key, card_bit, rank_table, flush_table = ev
    cards = np.empty(nh + board.shape[0], np.int8)
    for t in range(board.shape[0]):
        cards[nh + t] = board[t]
    rank = np.zeros(H, np.int64)
    for h in valid:
        for t in range(nh):
            cards[t] = hands[h, t]
        rank[h] = hand_value(cards, cards.shape[0], card_key, card_bit, rank_table, flush_table)
    order = valid[np.argsort(rank[valid], kind="mergesort")]
    live[:] = False
    for h in valid:
        reach[0, 0, h] = 1.0
        reach[0, 1, h] = 1.0
    live[0] = True
    sig = np.zeros(3)
    by_card = np.zeros(deck_size)
    tie_card = np.zeros(deck_size)
    compatible = np.zeros(H)
    walked = 0
    # Down: reach of both players; a subtree neither reaches is skipped.
    n = 0
    while n < N:
        if not live[n]:
            n = end[n]
            continue
        if kind[n] != DECISION:
            n += 1
            continue
        walked += 1
        p = player[n]
        r = rnd[n]
        base = offsets[r] + slot[n]
        for a in range(3):
            c = children[n, a]
            if c >= 0:
                live[c] = False
        for h in valid:
            match_regrets(regret, base + buckets[r, h] * ndec[r], children[n], sig)
            for a in range(3):
                c = children[n, a]
                if c >= 0:
                    reach[c, p, h] = reach[n, p, h] * sig[a]
                    reach[c, 1 - p, h] = reach[n, 1 - p, h]
                    if reach[c, 0, h] > 0.0 or reach[c, 1, h] > 0.0:
                        live[c] = True
        n += 1
    # Up: trav's counterfactual values (against the opponent's reach), children first.
    opp = 1 - trav
    scratch = np.zeros((H, 3))
    for n in range(N - 1, -1, -1):
        if not live[n]:
            continue
        k = kind[n]
        if k == FOLD_END:
            folder = player[n]
            stake = float(spent[n, folder]) if folder == opp else -float(spent[n, trav])
            _compatible_totals(reach[n, opp], hands, valid, by_card, compatible)
            for h in valid:
                value[n, h] = stake * compatible[h]
            continue
        if k != DECISION:
            _compatible_totals(reach[n, opp], hands, valid, by_card, compatible)
            _showdown(reach[n, opp], hands, order, rank, compatible, by_card, tie_card,
                      float(spent[n, 0]), value[n])  # fmt: skip
            continue
        p = player[n]
        if p != trav:  # the opponent's strategy is already in its reach below
            for h in valid:
                v = 0.0
                for a in range(3):
                    c = children[n, a]
                    if c >= 0 and live[c]:
                        v += value[c, h]
                value[n, h] = v
            continue
        r = rnd[n]
        base = offsets[r] + slot[n]
        for h in valid:  # every hand's strategy before any of this node's rows change
            match_regrets(regret, base + buckets[r, h] * ndec[r], children[n], scratch[h])
            v = 0.0
            for a in range(3):
                c = children[n, a]
                if c >= 0 and live[c]:
                    v += scratch[h, a] * value[c, h]
            value[n, h] = v
        for h in valid:
            row = base + buckets[r, h] * ndec[r]
            for a in range(3):
                c = children[n, a]
                if c >= 0:
                    child = value[c, h] if live[c] else 0.0
                    regret[row, a] += child - value[n, h]
                    avg[row, a] += weight * reach[n, trav, h] * scratch[h, a]
        if plus:
            for h in valid:
                row = base + buckets[r, h] * ndec[r]
                for a in range(3):
                    if regret[row, a] < 0.0:
                        regret[row, a] = 0.0
    return walked


@njit(cache=True, nogil=True)
def _run(
    start: int,
    count: int,
    seed: int,
    gamma: float,
    plus: bool,
    tree: TreeArrays,
    end: np.ndarray,
    offsets: np.ndarray,
    ndec: np.ndarray,
    board_through: np.ndarray,
    hands: np.ndarray,
    hand_bits: np.ndarray,
    deck_size: int,
    lookup: BucketLookup,
    ev: EvalTables,
    regret: np.ndarray,
    avg: np.ndarray,
) -> int:
    """Iterations start+1 .. start+count: a board each, then a walk per player."""
    board_total = board_through[board_through.shape[0] - 1]
    deck = np.empty(deck_size, np.int8)
    state = np.zeros(1, np.uint64)
    N = tree.kind.shape[0]
    reach = np.zeros((N, 2, hands.shape[0]))
    value = np.zeros((N, hands.shape[0]))
    live = np.zeros(N, np.bool_)
    walked = 0
    for t in range(start + 1, start + count + 1):
        shuffle_deal(seed, t, state, deck, board_total)
        board = deck[:board_total].copy()
        weight = float(t) ** gamma
        for trav in range(2):
            walked += walk_board(board, trav, weight, plus, tree, end, offsets, ndec,
                                 board_through, hands, hand_bits, lookup, ev, deck_size,
                                 regret, avg, reach, value, live)  # fmt: skip
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
    ):
        if not 1 <= game.num_hole_cards <= MAX_PUBLIC_HOLE_CARDS:
            raise ValueError(
                f"public chance sampling needs 1 or 2 hole cards, {game.name} has "
                f"{game.num_hole_cards}"
            )
        super().__init__(game, tables, variant="chance", gamma=gamma, plus=plus, seed=seed)
        self.variant = "public"
        self.hands, self.hand_bits = private_hands(game)

    @property
    def deals_per_iteration(self) -> int:
        """Deals one iteration's regret updates sum over: every ordered pair of compatible
        hands on the sampled board."""
        left = self.game.deck_size - int(self._board_through[-1])
        hole = self.game.num_hole_cards
        return comb(left, hole) * comb(left - hole, hole)

    def update_on_board(self, board: np.ndarray, trav: int, weight: float = 1.0) -> None:
        """One walk of `trav` on a given complete board (what an iteration does per player)."""
        n, h = self.tree.num_nodes, self.hands.shape[0]
        walk_board(np.asarray(board, np.int8), trav, weight, self.plus, self.tree.arrays,
                   self._end, self.offsets, self.ndec, self._board_through, self.hands,
                   self.hand_bits, self.tables.lookup, self.tables.evaluator,
                   self.game.deck_size, self.regret, self.avg, np.zeros((n, 2, h)),
                   np.zeros((n, h)), np.zeros(n, np.bool_))  # fmt: skip

    def iterate(self, iterations: int = 1) -> None:
        """Run `iterations` more iterations (deterministic for the seed)."""
        self.nodes_visited += _run(
            self.iteration, iterations, self.seed, self.gamma, self.plus, self.tree.arrays,
            self._end, self.offsets, self.ndec, self._board_through, self.hands,
            self.hand_bits, self.game.deck_size, self.tables.lookup, self.tables.evaluator,
            self.regret, self.avg,
        )  # fmt: skip
        self.iteration += iterations
