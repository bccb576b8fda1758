"""Exact best response to a strategy that ignores the cards (uniform, always-call, ...) in a
two-player limit hold'em game, by counting hands instead of walking hands against hands.

Against a strategy whose action probabilities depend on the betting alone, the opponent's hand
is uniform, at every node, over the hands that share no card with the board and with the
responder's hand. A showdown then pays the responder its stake x W, where W is the number of
those hands it beats minus the number that beat it, and a fold pays a stake x their number. So
a last-round subtree is worth a function of W alone to a hand: it is tabulated once for every W
and every class of subtrees (same betting, stakes and probabilities). Each earlier round sums
the next round's values over the cards still to come, then walks its own subtrees hand by hand.
Values are sums over every completion of the deal (the cards still to come and the opponent's
hand), so every action of a decision is compared over the same deals.

The flop is walked one canonical flop at a time under suit permutations; the turn and river
are enumerated. Nothing here is shared with the streamed best response (`best_response.py`)
but the betting tree and the showdown ranking (`showdown_order`), so each checks the other.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from itertools import combinations, permutations
from math import comb
from typing import NamedTuple

import numpy as np
from numba import njit

from gameforge.engines.poker.acpc import GameDef
from gameforge.engines.poker.betting import (
    CALL,
    DECISION,
    FOLD,
    FOLD_END,
    RAISE,
    SHOWDOWN,
    BettingTree,
    build_tree,
)
from gameforge.engines.poker.evaluator import EvalTables
from gameforge.engines.poker.mccfr import showdown_order, showdown_tables, tie_end

NEXT = 3  # a leaf of a round's plan: the next round's first decision
POLICIES = ("uniform", "always-call", "always-raise", "always-fold")


def card_blind_policy(tree: BettingTree, name: str) -> np.ndarray:
    """(nodes, 3) action probabilities of a named strategy that ignores the cards: uniform over
    the legal actions, or one action wherever it is legal (else call)."""
    if name not in POLICIES:
        raise ValueError(f"policy {name!r}: one of {', '.join(POLICIES)}")
    legal = tree.children >= 0
    probs = np.zeros((tree.num_nodes, 3))
    decision = tree.kind == DECISION
    if name == "uniform":
        probs[decision] = legal[decision] / legal[decision].sum(axis=1, keepdims=True)
        return probs
    only = {"always-call": CALL, "always-raise": RAISE, "always-fold": FOLD}[name]
    probs[decision & legal[:, only], only] = 1.0
    probs[decision & ~legal[:, only], CALL] = 1.0
    return probs


class RoundPlan(NamedTuple):
    """A round's subtree classes, each a run of local nodes in preorder (its entry first)."""

    start: np.ndarray  # (K + 1,) each class's first local node
    kind: np.ndarray  # (L,) DECISION, FOLD_END, SHOWDOWN or NEXT
    player: np.ndarray  # (L,) who acts, or who folded
    child: np.ndarray  # (L, 3) local node of each action, -1 where illegal
    prob: np.ndarray  # (L, 3) the strategy's action probabilities
    spent: np.ndarray  # (L, 2) chips each player has put in
    next_class: np.ndarray  # (L,) at a NEXT leaf, the next round's class


def round_plans(
    tree: BettingTree, probs: np.ndarray, num_rounds: int
) -> tuple[list[RoundPlan], list[dict[int, int]]]:
    """Per round, its plan and the class of each of its entry nodes. Entries whose subtrees
    have the same shape, stakes, probabilities and next-round classes share a class."""
    plans: list[RoundPlan] = [None] * num_rounds  # type: ignore[list-item]
    classes: list[dict[int, int]] = [{} for _ in range(num_rounds)]
    rnd = tree.round
    for r in range(num_rounds - 1, -1, -1):
        entries = [
            int(n)
            for n in np.flatnonzero((tree.kind == DECISION) & (rnd == r))
            if tree.parent[n] < 0 or rnd[tree.parent[n]] != r
        ]
        rows: list[tuple] = []
        start = [0]
        seen: dict[tuple, int] = {}
        for entry in entries:
            local = _subtree(tree, entry, r)
            where = {n: i for i, n in enumerate(local)}
            sig: list[tuple] = []
            for n in local:
                if rnd[n] != r:  # the next round's entry
                    sig.append((NEXT, -1, (0, 0), (-1, -1, -1), (0.0,) * 3, classes[r + 1][n]))
                    continue
                kids = tuple(where[int(c)] if c >= 0 else -1 for c in tree.children[n])
                spent = (int(tree.spent[n, 0]), int(tree.spent[n, 1]))
                sig.append(
                    (int(tree.kind[n]), int(tree.player[n]), spent, kids, tuple(probs[n]), -1)
                )
            key = tuple(sig)
            if key not in seen:
                seen[key] = len(seen)
                base = start[-1]
                rows.extend(
                    (k, p, s, tuple(base + c if c >= 0 else -1 for c in kids), pr, nc)
                    for k, p, s, kids, pr, nc in sig
                )
                start.append(base + len(sig))
            classes[r][entry] = seen[key]
        plans[r] = RoundPlan(
            start=np.array(start, dtype=np.int64),
            kind=np.array([row[0] for row in rows], dtype=np.int64),
            player=np.array([row[1] for row in rows], dtype=np.int64),
            spent=np.array([row[2] for row in rows], dtype=np.float64).reshape(-1, 2),
            child=np.array([row[3] for row in rows], dtype=np.int64).reshape(-1, 3),
            prob=np.array([row[4] for row in rows], dtype=np.float64).reshape(-1, 3),
            next_class=np.array([row[5] for row in rows], dtype=np.int64),
        )
    return plans, classes


def _subtree(tree: BettingTree, entry: int, r: int) -> list[int]:
    """The nodes of round r under `entry` in preorder, with the next round's entries as leaves."""
    out, stack = [], [entry]
    while stack:
        n = stack.pop()
        out.append(n)
        if tree.round[n] == r and tree.kind[n] == DECISION:
            stack.extend(int(c) for c in tree.children[n][::-1] if c >= 0)
    return out


@njit(cache=True, nogil=True)
def _walk(
    plan: RoundPlan,
    k: int,
    seat: int,
    next_values: np.ndarray,
    completions: float,
    w: float,
    scratch: np.ndarray,
) -> float:
    """Value to `seat`'s best response of class k's subtree: a fold pays its stake for every
    completion, a showdown its stake x w, a NEXT leaf its class's entry of next_values."""
    a, b = plan.start[k], plan.start[k + 1]
    for i in range(b - 1, a - 1, -1):
        kind = plan.kind[i]
        if kind == FOLD_END:
            if plan.player[i] == seat:
                v = -plan.spent[i, seat] * completions
            else:
                v = plan.spent[i, 1 - seat] * completions
        elif kind == SHOWDOWN:
            v = plan.spent[i, 1 - seat] * w
        elif kind == NEXT:
            v = next_values[plan.next_class[i]]
        elif plan.player[i] == seat:
            v = -np.inf
            for act in range(3):
                c = plan.child[i, act]
                if c >= 0:
                    v = max(v, scratch[c])
        else:
            v = 0.0
            for act in range(3):
                c = plan.child[i, act]
                if c >= 0:
                    v += plan.prob[i, act] * scratch[c]
        scratch[i] = v
    return scratch[a]


@njit(cache=True, nogil=True)
def _last_round_table(plan: RoundPlan, rivals: int) -> np.ndarray:
    """(2 rivals + 1, 2, K): each class's value to each seat at W = index - rivals."""
    K = plan.start.shape[0] - 1
    out = np.empty((2 * rivals + 1, 2, K))
    scratch = np.empty(plan.kind.shape[0])
    empty = np.zeros(1)
    for w in range(-rivals, rivals + 1):
        for s in range(2):
            for k in range(K):
                out[w + rivals, s, k] = _walk(plan, k, s, empty, rivals, w, scratch)
    return out


@njit(cache=True, nogil=True)
def flop_values(
    flop: np.ndarray,
    hands: np.ndarray,
    deck: int,
    ev: EvalTables,
    table: np.ndarray,
    turn: RoundPlan,
    flop_plan: RoundPlan,
    completions: np.ndarray,
) -> np.ndarray:
    """(H, 2, K1) each hand's value to each seat at each flop class on this flop: every turn
    and river card enumerated, each river board ranked once for both of its turn orders."""
    H = hands.shape[0]
    rivals = (table.shape[0] - 1) // 2
    K3, K2 = table.shape[2], turn.start.shape[0] - 1
    K1 = flop_plan.start.shape[0] - 1
    nf = flop.shape[0]
    used = np.zeros(deck, dtype=np.bool_)
    for c in flop:
        used[c] = True
    rest = np.array([c for c in range(deck) if not used[c]], dtype=np.int64)
    after_turn = np.zeros((deck, H, 2, K3))  # per turn card: its rivers' values summed
    board = np.empty(nf + 2, dtype=np.int8)
    board[:nf] = flop
    alive = np.empty(H, dtype=np.int64)  # 0 for a hand sharing no card with the board, else -1
    below = np.zeros(deck + 1, dtype=np.int64)  # hands of lower value holding each card
    tied = np.zeros(deck + 1, dtype=np.int64)
    for ia in range(rest.shape[0]):
        a = rest[ia]
        for ib in range(ia + 1, rest.shape[0]):
            b = rest[ib]
            board[nf], board[nf + 1] = a, b
            used[a] = used[b] = True
            for h in range(H):
                alive[h] = -1 if used[hands[h, 0]] or used[hands[h, 1]] else 0
            used[a] = used[b] = False
            value, order = showdown_order(hands, alive, board, nf + 2, ev)
            n = order.shape[0]
            below[:] = 0
            lower_all = 0
            i = 0
            while i < n:
                j = tie_end(value, order, i, n)
                for q in range(i, j):
                    tied[hands[order[q], 0]] += 1
                    tied[hands[order[q], 1]] += 1
                for q in range(i, j):
                    h = order[q]
                    x, y = hands[h, 0], hands[h, 1]
                    lower = lower_all - below[x] - below[y]
                    tie = (j - i) - (tied[x] + tied[y] - 1)
                    w = 2 * lower + tie - rivals  # lower - (rivals - lower - tie)
                    for s in range(2):
                        for k in range(K3):
                            v = table[w + rivals, s, k]
                            after_turn[a, h, s, k] += v
                            after_turn[b, h, s, k] += v
                for q in range(i, j):
                    x, y = hands[order[q], 0], hands[order[q], 1]
                    tied[x] -= 1
                    tied[y] -= 1
                    below[x] += 1
                    below[y] += 1
                lower_all += j - i
                i = j
    after_flop = np.zeros((H, 2, K2))
    scratch = np.empty(max(turn.kind.shape[0], flop_plan.kind.shape[0]))
    for a in rest:
        used[a] = True
        for h in range(H):
            if used[hands[h, 0]] or used[hands[h, 1]]:
                continue
            for s in range(2):
                for k in range(K2):
                    after_flop[h, s, k] += _walk(
                        turn, k, s, after_turn[a, h, s], completions[2], 0.0, scratch
                    )
        used[a] = False
    out = np.zeros((H, 2, K1))
    for h in range(H):
        if used[hands[h, 0]] or used[hands[h, 1]]:
            continue
        for s in range(2):
            for k in range(K1):
                out[h, s, k] = _walk(
                    flop_plan, k, s, after_flop[h, s], completions[1], 0.0, scratch
                )
    return out


class CardBlindResult(NamedTuple):
    """Best-response values per seat (chips per deal) and their mean, the exploitability."""

    values: tuple[float, float]
    exploitability: float
    flops: int  # canonical flops walked


def _canonical_flops(game: GameDef, perms: np.ndarray) -> list[tuple[tuple[int, ...], int]]:
    """Each canonical flop (the least of its suit images) with its stabiliser's size."""
    ns = game.num_suits
    out = []
    for flop in combinations(range(game.deck_size), game.num_board_cards[1]):
        images = [tuple(sorted((c // ns) * ns + int(p[c % ns]) for c in flop)) for p in perms]
        if min(images) == flop:
            out.append((flop, sum(image == flop for image in images)))
    return out


class CardBlind:
    """A card-blind strategy of a four-round limit hold'em game (dealing 0, n, 1 and 1 board
    cards) made ready for counting: its round plans, the last round's table, the completions."""

    def __init__(self, game: GameDef, probs: np.ndarray, tree: BettingTree | None = None):
        nb = game.num_board_cards
        if (
            game.num_players != 2
            or game.num_hole_cards != 2
            or game.num_rounds != 4
            or nb[0] != 0
            or nb[2:] != (1, 1)
        ):
            raise ValueError(
                f"{game.name or 'this game'}: the card-blind best response needs two players, "
                "two hole cards and four rounds dealing 0, n, 1 and 1 board cards"
            )
        self.game = game
        self.tree = tree if tree is not None else build_tree(game)
        self.plans, self.classes = round_plans(self.tree, probs, 4)
        deck = game.deck_size
        self.hands = np.array(list(combinations(range(deck), 2)), dtype=np.int64)
        # deals after a fold in each round: the board cards still to come, then the rival's hand
        rivals = comb(deck - 2 - sum(nb), 2)
        self.completions = np.zeros(4)
        self.completions[3] = rivals
        for r in (2, 1, 0):
            seen = sum(nb[: r + 1])
            self.completions[r] = comb(deck - 2 - seen, nb[r + 1]) * self.completions[r + 1]
        self.table = _last_round_table(self.plans[3], rivals)
        self.ev = showdown_tables(game)

    def flop(self, cards: np.ndarray) -> np.ndarray:
        """(H, 2, flop classes): each hand's value to each seat at each flop class entered on
        this flop (0 for hands holding a flop card)."""
        cards = np.asarray(cards, dtype=np.int64)
        return flop_values(
            cards, self.hands, self.game.deck_size, self.ev, self.table, self.plans[2],
            self.plans[1], self.completions,
        )  # fmt: skip

    def solve(
        self, threads: int = 2, on_flop: Callable[[int, int], None] | None = None
    ) -> CardBlindResult:
        """Both seats' best-response values, every canonical flop counted (threads at once)."""
        game, hands = self.game, self.hands
        deck, ns, H = game.deck_size, game.num_suits, self.hands.shape[0]
        perms = np.array(list(permutations(range(ns))), dtype=np.int64)
        flops = _canonical_flops(game, perms)
        # the hand each suit permutation takes each hand to
        card_image = (np.arange(deck)[None, :] // ns) * ns + perms[:, np.arange(deck) % ns]
        index = np.full((deck, deck), -1, dtype=np.int64)
        index[hands[:, 0], hands[:, 1]] = index[hands[:, 1], hands[:, 0]] = np.arange(H)
        hand_image = index[card_image[:, hands[:, 0]], card_image[:, hands[:, 1]]]
        after_preflop = np.zeros((H, 2, self.plans[1].start.shape[0] - 1))
        with ThreadPoolExecutor(max(threads, 1)) as pool:
            done = pool.map(lambda f: self.flop(np.array(f[0])), flops)
            for f, values in enumerate(done):
                share = values / flops[f][1]
                for image in hand_image:  # the orbit: each image once per stabiliser element
                    after_preflop[image] += share
                if on_flop is not None:
                    on_flop(f + 1, len(flops))
        root = np.empty((H, 2))
        scratch = np.empty(self.plans[0].kind.shape[0])
        entry = self.classes[0][0]
        for h in range(H):
            for s in range(2):
                root[h, s] = _walk(
                    self.plans[0], entry, s, after_preflop[h, s], self.completions[0], 0.0, scratch
                )
        v0, v1 = (float(root[:, s].mean() / self.completions[0]) for s in range(2))
        return CardBlindResult((v0, v1), (v0 + v1) / 2, len(flops))


def card_blind_best_response(
    game: GameDef,
    probs: np.ndarray,
    tree: BettingTree | None = None,
    threads: int = 2,
    on_flop: Callable[[int, int], None] | None = None,
) -> CardBlindResult:
    """Both seats' best-response values against the card-blind strategy `probs` (nodes, 3)."""
    return CardBlind(game, probs, tree).solve(threads, on_flop)
