"""Counterfactual regret minimisation on two-player limit games, vectorised over private hands.

The game is walked as a public tree: betting nodes (`poker.betting`) times board cards, with
one vector per player over every private hand (reach probabilities going down, counterfactual
values coming up). Card removal is exact: the opponent mass compatible with a hand comes from
per-card sums (inclusion-exclusion, one or two hole cards), and showdowns sweep the hands in
rank order, so a terminal costs O(H log H) for H hands instead of O(H^2).

An information set is (betting node's slot in its round, bucket of the player's cards in that
round): lossless buckets (the isomorphism index) give the real game; coarser buckets give an
imperfect-recall abstraction, handled as in the literature by summing regrets over all hands
mapped to the bucket. Updates alternate between players, as OpenSpiel's CFRSolver and
CFRPlusSolver do: vanilla CFR, CFR+ (regret floor at 0, linear averaging), or linear averaging
alone. Best response walks the same tree with the opponent's average strategy; with lossless
buckets it is the exact best response of the real game.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from itertools import combinations
from math import comb
from typing import NamedTuple

import numpy as np
from numba import njit

from gameforge.engines.poker.acpc import GameDef
from gameforge.engines.poker.betting import DECISION, FOLD_END, SHOWDOWN, BettingTree, build_tree
from gameforge.engines.poker.evaluator import evaluate
from gameforge.engines.poker.isomorphism import HandIndexer
from gameforge.engines.poker.solver import SolverRows, infoset_layout

MODE_UPDATE, MODE_BEST_RESPONSE, MODE_EVALUATE = 0, 1, 2
MAX_TABLE = 50_000_000  # boards x hands: beyond this, enumerate boards by sampling instead

Bucketer = Callable[[int, np.ndarray], np.ndarray]


@dataclass(frozen=True)
class CardSetup:
    """Private hands, the board tree, and each (board, hand)'s bucket and showdown rank."""

    hands: np.ndarray  # (H, hole) int8 card ids
    hand_bits: np.ndarray  # (H,) uint64
    board_round: np.ndarray  # (B,) int8; node 0 is a virtual root (round -1)
    board_bits: np.ndarray  # (B,) uint64 every board card so far
    child_start: np.ndarray  # (B,) int64 first child board
    child_count: np.ndarray  # (B,) int64
    bucket: np.ndarray  # (B, H) int32, -1 where the hand shares a card with the board
    rank_order: np.ndarray  # (B, H) int32 hands by ascending showdown value (last round)
    rank: np.ndarray  # (B, H) int64 showdown value (last round; -1 on conflict)
    num_buckets: np.ndarray  # (R,) int64
    num_deals: float  # equally likely complete deals (both hands and the board)
    deals_after: np.ndarray  # (R,) float64 board completions still to come after round r

    @property
    def arrays(self) -> CardArrays:
        """The arrays the tree walk reads (`_walk(..., *setup.arrays, ...)`)."""
        return CardArrays(
            self.hands, self.hand_bits, self.board_bits, self.child_start, self.child_count,
            self.bucket, self.rank, self.rank_order, self.deals_after,
        )  # fmt: skip


class CardArrays(NamedTuple):
    """The arrays of a `CardSetup` that `_walk` reads, in the order of its parameters (they
    stay separate parameters: unpacking a tuple on every recursive call costs ~15% on small
    games)."""

    hands: np.ndarray
    hand_bits: np.ndarray
    board_bits: np.ndarray
    child_start: np.ndarray
    child_count: np.ndarray
    bucket: np.ndarray
    rank: np.ndarray
    rank_order: np.ndarray
    deals_after: np.ndarray


def lossless_bucketer(game: GameDef) -> tuple[Bucketer, np.ndarray]:
    """Canonical isomorphism index per round: the unabstracted game."""
    groups = game.card_groups()
    indexers = [
        HandIndexer(groups[: game.group_of_round(r) + 1], game.num_ranks, game.num_suits)
        for r in range(game.num_rounds)
    ]

    def bucket(round_: int, cards: np.ndarray) -> np.ndarray:
        ix = indexers[round_]
        return ix.index(cards, ix.rounds - 1).astype(np.int64)

    sizes = np.array([ix.size(ix.rounds - 1) for ix in indexers], dtype=np.int64)
    return bucket, sizes


def build_cards(
    game: GameDef, bucketer: Bucketer | None = None, num_buckets: np.ndarray | None = None
) -> CardSetup:
    """Enumerate hands and boards of a small game; buckets lossless unless `bucketer` given."""
    if game.num_hole_cards not in (1, 2):
        raise ValueError("card removal is implemented for one or two hole cards")
    if bucketer is None:
        bucketer, num_buckets = lossless_bucketer(game)
    assert num_buckets is not None
    deck = game.deck_size
    hands = np.array(list(combinations(range(deck), game.num_hole_cards)), dtype=np.int8)
    H = hands.shape[0]
    bits = (np.uint64(1) << hands.astype(np.uint64)).sum(axis=1).astype(np.uint64)
    count, level_size, left = 1, 1, deck
    for size in game.num_board_cards:
        level_size *= comb(left, size)
        left -= size
        count += level_size
    if count * H > MAX_TABLE:
        raise ValueError(f"{count:,} boards x {H:,} hands is too many to enumerate")
    boards: list[tuple[int, ...]] = [()]
    rounds = [-1]
    parents = [-1]
    level = [0]
    for r in range(game.num_rounds):
        nxt = []
        for b in level:
            used = set(boards[b])
            rest = [c for c in range(deck) if c not in used]
            for new in combinations(rest, game.num_board_cards[r]):
                boards.append(boards[b] + new)
                rounds.append(r)
                parents.append(b)
                nxt.append(len(boards) - 1)
        level = nxt
    B = len(boards)
    if B * H > MAX_TABLE:
        raise ValueError(f"{B:,} boards x {H:,} hands is too many to enumerate")
    parent = np.array(parents)
    child_count = np.bincount(parent[1:], minlength=B).astype(np.int64)
    child_start = np.zeros(B, dtype=np.int64)
    for b in range(B - 1, 0, -1):  # children are contiguous: each level is built in order
        child_start[parent[b]] = b
    board_bits = np.zeros(B, dtype=np.uint64)
    bucket = np.full((B, H), -1, dtype=np.int32)
    rank = np.full((B, H), -1, dtype=np.int64)
    last = game.num_rounds - 1
    for b in range(1, B):
        cards = boards[b]
        board_bits[b] = np.uint64(sum(1 << c for c in cards))
        ok = (bits & board_bits[b]) == 0
        rows = np.concatenate(
            [hands[ok], np.tile(np.array(cards, dtype=np.int8), (int(ok.sum()), 1))], axis=1
        )
        bucket[b, ok] = bucketer(rounds[b], rows)
        if rounds[b] == last:
            rank[b, ok] = evaluate(rows, game.num_ranks, game.num_suits)
    rank_order = np.argsort(rank, axis=1, kind="stable").astype(np.int32)
    return CardSetup(
        hands=hands,
        hand_bits=bits,
        board_round=np.array(rounds, dtype=np.int8),
        board_bits=board_bits,
        child_start=child_start,
        child_count=child_count,
        bucket=bucket,
        rank_order=rank_order,
        rank=rank,
        num_buckets=np.asarray(num_buckets, dtype=np.int64),
        num_deals=num_deals(game),
        deals_after=deals_after(game),
    )


def num_deals(game: GameDef) -> float:
    """Equally likely complete deals: both hands and the whole board."""
    deals, left = 1.0, game.deck_size
    for size in (game.num_hole_cards, game.num_hole_cards, *game.num_board_cards):
        deals *= float(comb(left, size))
        left -= size
    return deals


def deals_after(game: GameDef) -> np.ndarray:
    """(R,) board completions still to come after round r, once both hands are dealt: a hand
    that ends by a fold in round r stands for every board that was never dealt."""
    out = np.ones(game.num_rounds)
    for r in range(game.num_rounds):
        left = game.deck_size - 2 * game.num_hole_cards - game.board_cards_through(r)
        for size in game.num_board_cards[r + 1 :]:
            out[r] *= float(comb(left, size))
            left -= size
    return out


# ------------------------------------------------------------------------------- kernels


@njit(cache=True, nogil=True)
def _opponent_mass(ro: np.ndarray, hands: np.ndarray, deck: int) -> np.ndarray:
    """For each hand h: sum of ro over opponent hands sharing no card with h."""
    H = ro.shape[0]
    per_card = np.zeros(deck)
    total = 0.0
    for h in range(H):
        total += ro[h]
        for t in range(hands.shape[1]):
            per_card[hands[h, t]] += ro[h]
    out = np.empty(H)
    for h in range(H):
        v = total
        for t in range(hands.shape[1]):
            v -= per_card[hands[h, t]]
        if hands.shape[1] == 2:
            v += ro[h]  # h itself was removed twice
        out[h] = v
    return out


@njit(cache=True, nogil=True)
def _showdown(
    ro: np.ndarray, hands: np.ndarray, deck: int, rank: np.ndarray, order: np.ndarray, stake: float
) -> np.ndarray:
    """stake * (compatible opponent mass ranked below - above), by a sweep in rank order."""
    H = ro.shape[0]
    out = np.zeros(H)
    card = np.zeros(deck)
    total = 0.0
    i = 0
    while i < H:  # ascending: mass strictly below each group of equal rank
        j = i
        while j < H and rank[order[j]] == rank[order[i]]:
            j += 1
        for q in range(i, j):
            h = order[q]
            v = total
            for t in range(hands.shape[1]):
                v -= card[hands[h, t]]
            out[h] = v
        for q in range(i, j):
            h = order[q]
            total += ro[h]
            for t in range(hands.shape[1]):
                card[hands[h, t]] += ro[h]
        i = j
    card[:] = 0.0
    total = 0.0
    i = H - 1
    while i >= 0:  # descending: mass strictly above
        j = i
        while j >= 0 and rank[order[j]] == rank[order[i]]:
            j -= 1
        for q in range(j + 1, i + 1):
            h = order[q]
            v = total
            for t in range(hands.shape[1]):
                v -= card[hands[h, t]]
            out[h] -= v
        for q in range(j + 1, i + 1):
            h = order[q]
            total += ro[h]
            for t in range(hands.shape[1]):
                card[hands[h, t]] += ro[h]
        i = j
    # Unlike `_opponent_mass`, nothing to add back for two hole cards: a hand never ranks
    # strictly below or above itself, so it was never removed twice.
    for h in range(H):
        out[h] *= stake
    return out


# Not cached: numba's on-disk cache of a recursive function crashes when reloaded.
# Arrays one by one: numba takes no objects, and unpacking tuples on every recursive call
# measured ~15% slower (`CardArrays`).
@njit(cache=False, nogil=True)
def _walk(
    n: int,
    b: int,
    ri: np.ndarray,
    ro: np.ndarray,
    trav: int,
    mode: int,
    weight: float,
    kind: np.ndarray,
    player: np.ndarray,
    rnd: np.ndarray,
    spent: np.ndarray,
    children: np.ndarray,
    slot: np.ndarray,
    offsets: np.ndarray,
    ndec: np.ndarray,
    hands: np.ndarray,
    hand_bits: np.ndarray,
    board_bits: np.ndarray,
    child_start: np.ndarray,
    child_count: np.ndarray,
    bucket: np.ndarray,
    rank: np.ndarray,
    rank_order: np.ndarray,
    deals_after: np.ndarray,
    deck: int,
    sigma: np.ndarray,
    regret: np.ndarray,
    avg: np.ndarray,
) -> np.ndarray:
    """Counterfactual values (H,) of the traverser at public state (betting node n, board b)."""
    H = ri.shape[0]
    k = kind[n]
    if k == FOLD_END:
        pay = -spent[n, trav] if player[n] == trav else spent[n, 1 - trav]
        return _opponent_mass(ro, hands, deck) * (pay * deals_after[rnd[n]])
    if k == SHOWDOWN:
        return _showdown(ro, hands, deck, rank[b], rank_order[b], float(spent[n, 1 - trav]))
    p = player[n]
    r = rnd[n]
    base = offsets[r] + slot[n]  # rows are bucket-major: (bucket, slot)
    stride = ndec[r]
    bk = bucket[b]
    out = np.zeros(H)
    vals = np.zeros((3, H))
    probs = np.zeros((3, H))
    for a in range(3):
        c = children[n, a]
        if c < 0:
            continue
        if p == trav and mode == MODE_BEST_RESPONSE:
            ri2 = ri
            ro2 = ro
        elif p == trav:
            ri2 = np.zeros(H)
            for h in range(H):
                if bk[h] >= 0:
                    s = sigma[base + bk[h] * stride, a]
                    probs[a, h] = s
                    ri2[h] = ri[h] * s
            ro2 = ro
        else:
            ri2 = ri
            ro2 = np.zeros(H)
            for h in range(H):
                if bk[h] >= 0:
                    ro2[h] = ro[h] * sigma[base + bk[h] * stride, a]
        # Into the next round, chance deals its board cards: sum over every deal, masking hands
        # that collide with it (their reach is zero there and their value must be too).
        deal = kind[c] == DECISION and rnd[c] != r
        first = child_start[b] if deal else b
        last = first + child_count[b] if deal else b + 1
        for cb in range(first, last):
            ri3 = ri2
            ro3 = ro2
            if deal:
                ri3 = np.zeros(H)
                ro3 = np.zeros(H)
                for h in range(H):
                    if hand_bits[h] & board_bits[cb] == 0:
                        ri3[h] = ri2[h]
                        ro3[h] = ro2[h]
            sub = _walk(
                c, cb, ri3, ro3, trav, mode, weight, kind, player, rnd, spent, children, slot,
                offsets, ndec, hands, hand_bits, board_bits, child_start, child_count, bucket,
                rank, rank_order, deals_after, deck, sigma, regret, avg,
            )  # fmt: skip
            if not deal:
                vals[a] = sub
            else:
                for h in range(H):
                    if hand_bits[h] & board_bits[cb] == 0:
                        vals[a, h] += sub[h]
    if p != trav:
        for a in range(3):
            if children[n, a] >= 0:
                out += vals[a]
        return out
    if mode == MODE_BEST_RESPONSE:
        for h in range(H):
            best = -np.inf
            for a in range(3):
                if children[n, a] >= 0 and vals[a, h] > best:
                    best = vals[a, h]
            out[h] = best
        return out
    for a in range(3):
        if children[n, a] >= 0:
            out += probs[a] * vals[a]
    if mode == MODE_UPDATE:
        for h in range(H):
            if bk[h] < 0:
                continue
            row = base + bk[h] * stride
            for a in range(3):
                if children[n, a] >= 0:
                    regret[row, a] += vals[a, h] - out[h]
                    avg[row, a] += weight * ri[h] * probs[a, h]
    return out


@njit(cache=True, nogil=True)
def _regret_matching(regret: np.ndarray, legal: np.ndarray, sigma: np.ndarray) -> None:
    """sigma <- positive regrets normalised, or uniform over legal actions if none."""
    for row in range(regret.shape[0]):
        total = 0.0
        count = 0
        for a in range(3):
            if legal[row, a]:
                count += 1
                if regret[row, a] > 0.0:
                    total += regret[row, a]
        for a in range(3):
            if not legal[row, a]:
                sigma[row, a] = 0.0
            elif total > 0.0:
                sigma[row, a] = regret[row, a] / total if regret[row, a] > 0.0 else 0.0
            else:
                sigma[row, a] = 1.0 / count


# ------------------------------------------------------------------------------- solver


class FullWalkSolver(SolverRows):
    """CFR / CFR+ walking the whole game tree every iteration, on one game and card abstraction:
    regrets, strategy sums, iteration."""

    def __init__(
        self,
        game: GameDef,
        cards: CardSetup | None = None,
        *,
        plus: bool = False,
        linear: bool | None = None,
    ):
        self.game = game
        self.tree: BettingTree = build_tree(game)
        self.cards = cards if cards is not None else build_cards(game)
        self.plus = plus
        self.linear = plus if linear is None else linear
        self.layout = infoset_layout(self.tree, self.cards.num_buckets)
        self.legal = self.layout.legal()
        n_sets = self.layout.num_infosets
        self.regret = np.zeros((n_sets, 3))
        self.avg = np.zeros((n_sets, 3))
        self.sigma = np.zeros((n_sets, 3))
        _regret_matching(self.regret, self.legal, self.sigma)
        self.iteration = 0

    @property
    def deals_per_iteration(self) -> float:
        """Deals one iteration's regret updates sum over: every deal."""
        return self.cards.num_deals

    def _root(self, trav: int, mode: int, sigma: np.ndarray, weight: float) -> np.ndarray:
        t, c = self.tree.arrays, self.cards
        H = c.hands.shape[0]
        total = np.zeros(H)
        for b in range(int(c.child_start[0]), int(c.child_start[0] + c.child_count[0])):
            ok = (c.hand_bits & c.board_bits[b]) == 0
            reach = ok.astype(np.float64)
            v = _walk(
                0, b, reach.copy(), reach.copy(), trav, mode, weight, *t, self.layout.offsets,
                self.layout.ndec, *c.arrays, self.game.deck_size, sigma, self.regret, self.avg,
            )  # fmt: skip
            total += np.where(ok, v, 0.0)
        return total

    def restore(self, regret: np.ndarray, avg: np.ndarray, iteration: int) -> None:
        """Continue from saved regrets and strategy sums after `iteration` iterations: the
        current strategy is re-derived from the regrets, as the saved run had it."""
        self.regret[:] = regret
        self.avg[:] = avg
        self.iteration = int(iteration)
        _regret_matching(self.regret, self.legal, self.sigma)

    def iterate(self, iterations: int = 1) -> None:
        """Run CFR iterations with alternating updates (player 0, then player 1)."""
        for _ in range(iterations):
            self.iteration += 1
            weight = float(self.iteration) if self.linear else 1.0
            for trav in (0, 1):
                self._root(trav, MODE_UPDATE, self.sigma, weight)
                if self.plus:
                    np.maximum(self.regret, 0.0, out=self.regret)
                _regret_matching(self.regret, self.legal, self.sigma)

    def average_strategy(self) -> np.ndarray:
        """(infosets, 3) average strategy; uniform over legal actions where never reached."""
        total = self.avg.sum(axis=1, keepdims=True)
        uniform = self.legal / self.legal.sum(axis=1, keepdims=True).clip(min=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(total > 0, self.avg / np.where(total > 0, total, 1.0), uniform)

    def best_response_value(self, player: int, strategy: np.ndarray | None = None) -> float:
        """Expected chips of a best response of `player` to `strategy` (default: average)."""
        s = self.average_strategy() if strategy is None else strategy
        v = self._root(player, MODE_BEST_RESPONSE, s, 0.0)
        return float(v.sum() / self.cards.num_deals)

    def value(self, player: int = 0, strategy: np.ndarray | None = None) -> float:
        """Expected chips of `player` when both play `strategy` (default: average)."""
        s = self.average_strategy() if strategy is None else strategy
        v = self._root(player, MODE_EVALUATE, s, 0.0)
        return float(v.sum() / self.cards.num_deals)

    def exploitability(self, strategy: np.ndarray | None = None) -> float:
        """Mean over players of the best-response gain, in chips (OpenSpiel's definition)."""
        s = self.average_strategy() if strategy is None else strategy
        return 0.5 * (self.best_response_value(0, s) + self.best_response_value(1, s))
