"""The betting tree of a two-player limit ACPC game, as flat arrays for numba kernels.

Rules (ACPC limit): blinds are posted as bets; in each round the first player is
`first_player[r]`; actions are fold (only when facing a bet), call/check and raise (by
`raise_size[r]`, at most `max_raises[r]` times a round, counted over both players, and only while
the round has room for the raise and the call after it within ACPC's 64 actions a round). A round
ends on a call once every player has acted in it; after the last round comes the showdown.

Nodes are numbered in depth-first preorder, so every parent precedes its children. Each
decision node also has a `slot`: its index among the decision nodes of its round, which with
a card bucket names an information set.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import NamedTuple

import numpy as np

from gameforge.engines.poker.acpc import UNLIMITED_RAISES, GameDef, GameDefError

FOLD, CALL, RAISE = 0, 1, 2
# ACPC game.h MAX_NUM_ACTIONS: a raise is legal only while the round's actions so far plus the
# raise and the opponent's reply fit in it (game.c raiseIsValid, two players).
MAX_ACTIONS_PER_ROUND = 64
# The largest betting tree gameforge builds: the tree and the tables indexed by it are held in
# memory whole. Heads-up limit hold'em has 16,584 nodes; a game over the limit is refused at load.
TREE_NODE_LIMIT = 2_000_000
ACTIONS = "fcr"
DECISION, FOLD_END, SHOWDOWN = 0, 1, 2


class TreeArrays(NamedTuple):
    """The arrays of a `BettingTree` that numba kernels walk, passed as one argument."""

    kind: np.ndarray
    player: np.ndarray
    round: np.ndarray
    spent: np.ndarray
    children: np.ndarray
    slot: np.ndarray


@dataclass(frozen=True)
class BettingTree:
    """Flat betting tree; `children[n, a]` is -1 where action `a` is illegal."""

    kind: np.ndarray  # (N,) int8: DECISION, FOLD_END or SHOWDOWN
    player: np.ndarray  # (N,) int8 acting player (decision) or the folder (FOLD_END); else -1
    round: np.ndarray  # (N,) int8 betting round of the node
    spent: np.ndarray  # (N, 2) int32 chips each player has put in
    children: np.ndarray  # (N, 3) int32 child per action (fold, call, raise)
    parent: np.ndarray  # (N,) int32, -1 at the root
    slot: np.ndarray  # (N,) int32 index among the decision nodes of its round; -1 otherwise
    history: tuple[str, ...]  # ACPC-style betting string per node, rounds split by "/"

    @property
    def arrays(self) -> TreeArrays:
        """The arrays the kernels walk."""
        return TreeArrays(self.kind, self.player, self.round, self.spent, self.children, self.slot)

    @property
    def num_nodes(self) -> int:
        """Number of nodes, terminals included."""
        return int(self.kind.shape[0])

    def decision_counts(self) -> list[int]:
        """Decision points (betting sequences where someone acts) per round."""
        rounds = int(self.round.max()) + 1
        mask = self.kind == DECISION
        return [int(np.count_nonzero(mask & (self.round == r))) for r in range(rounds)]

    def num_actions(self) -> np.ndarray:
        """(N,) number of legal actions per node (0 at terminals)."""
        return (self.children >= 0).sum(axis=1).astype(np.int32)

    def node_of(self, history: str) -> int:
        """Node id of a betting string such as "rc/cr" (raises ValueError if illegal)."""
        node = 0
        for ch in history.replace("/", ""):
            if ch not in ACTIONS:
                raise ValueError(f"unknown action {ch!r} in {history!r} (use f, c, r)")
            if self.kind[node] != DECISION:
                raise ValueError(f"betting {history!r} continues past the end of the hand")
            child = int(self.children[node, ACTIONS.index(ch)])
            if child < 0:
                raise ValueError(f"action {ch!r} is illegal after {self.history[node]!r}")
            node = child
        return node


def raise_allowed(game: GameDef, r: int, raises: int, actions: int) -> bool:
    """ACPC's rule: under `max_raises[r]` raises, with room for the raise and one reply."""
    return raises < game.max_raises[r] and actions + game.num_players <= MAX_ACTIONS_PER_ROUND


@dataclass(frozen=True)
class TreeSize:
    """Node counts of a betting tree, found by counting without building it."""

    decisions: tuple[int, ...]  # decision nodes (betting sequences where someone acts) per round
    folds: tuple[int, ...]  # fold terminals per round
    showdowns: int  # showdown terminals (after the last round)

    @property
    def nodes(self) -> int:
        """Every node, terminals included."""
        return sum(self.decisions) + sum(self.folds) + self.showdowns

    @property
    def terminals(self) -> int:
        """Terminal sequences: folds and showdowns."""
        return sum(self.folds) + self.showdowns


def tree_size(game: GameDef) -> TreeSize:
    """The size of `build_tree(game)`, counted in time linear in the raise and action caps."""
    _check_limit_two_player(game)
    rounds = game.num_rounds

    @cache
    def count(r: int, facing: bool, raises: int, acted: int, actions: int) -> tuple[int, ...]:
        # (decisions per round, folds per round, showdowns) of the subtree at one decision node
        out = [0] * (2 * rounds + 1)
        out[r] += 1
        out[rounds + r] += facing

        def add(sub: tuple[int, ...]) -> None:
            for i, v in enumerate(sub):
                out[i] += v

        if acted >= 1:  # this call or check ends the round
            if r + 1 == rounds:
                out[2 * rounds] += 1
            else:
                add(count(r + 1, False, 0, 0, 0))
        else:
            add(count(r, False, raises, 1, actions + 1))
        if raise_allowed(game, r, raises, actions):
            add(count(r, True, raises + 1, 1, actions + 1))
        return tuple(out)

    first = game.first_player[0]
    sizes = count(0, game.blind[1 - first] > game.blind[first], 0, 0, 0)
    return TreeSize(sizes[:rounds], sizes[rounds : 2 * rounds], sizes[2 * rounds])


def check_tree_size(game: GameDef) -> TreeSize:
    """`tree_size(game)`, or GameDefError in one line if the tree is over `TREE_NODE_LIMIT`."""
    size = tree_size(game)
    if size.nodes <= TREE_NODE_LIMIT:
        return size
    where = game.name or "game"
    if all(m == UNLIMITED_RAISES for m in game.max_raises):
        cause = f"maxRaises missing: the ACPC default is {UNLIMITED_RAISES} raises a round"
    else:
        cause = "maxRaises " + " ".join(map(str, game.max_raises))
    fit = MAX_ACTIONS_PER_ROUND - game.num_players + 1
    raise GameDefError(
        f"{where}: betting tree of {size.nodes:,} nodes, over gameforge's limit of "
        f"{TREE_NODE_LIMIT:,} ({cause}, of which {fit} fit in ACPC's "
        f"{MAX_ACTIONS_PER_ROUND} actions a round)"
    )


def _check_limit_two_player(game: GameDef) -> None:
    if game.betting_type != "limit" or game.num_players != 2:
        raise ValueError("betting trees are built for two-player limit games")


def build_tree(game: GameDef) -> BettingTree:
    """The full limit betting tree of a two-player game."""
    _check_limit_two_player(game)
    kind: list[int] = []
    player: list[int] = []
    rnd: list[int] = []
    spent: list[tuple[int, int]] = []
    children: list[list[int]] = []
    parent: list[int] = []
    history: list[str] = []

    def add(k: int, p: int, r: int, s: tuple[int, int], par: int, h: str) -> int:
        kind.append(k)
        player.append(p)
        rnd.append(r)
        spent.append(s)
        children.append([-1, -1, -1])
        parent.append(par)
        history.append(h)
        return len(kind) - 1

    def decide(
        r: int, p: int, s: tuple[int, int], raises: int, acted: int, par: int, h: str, n: int = 0
    ) -> int:
        """Add the decision node after `n` actions in round `r`, and its subtree."""
        node = add(DECISION, p, r, s, par, h)
        facing = s[1 - p] > s[p]
        if facing:
            children[node][FOLD] = add(FOLD_END, p, r, s, node, h + "f")
        called = list(s)
        called[p] = s[1 - p]
        c = (called[0], called[1])
        if acted + 1 >= 2:  # both have acted and the bets are level: the round is over
            if r + 1 == game.num_rounds:
                children[node][CALL] = add(SHOWDOWN, -1, r, c, node, h + "c")
            else:
                nxt = r + 1
                children[node][CALL] = decide(nxt, game.first_player[nxt], c, 0, 0, node, h + "c/")
        else:
            children[node][CALL] = decide(r, 1 - p, c, raises, acted + 1, node, h + "c", n + 1)
        if raise_allowed(game, r, raises, n):
            up = list(c)
            up[p] += game.raise_size[r]
            children[node][RAISE] = decide(
                r, 1 - p, (up[0], up[1]), raises + 1, acted + 1, node, h + "r", n + 1
            )
        return node

    blinds = (game.blind[0], game.blind[1])
    decide(0, game.first_player[0], blinds, 0, 0, -1, "")
    kinds = np.array(kind, dtype=np.int8)
    rounds = np.array(rnd, dtype=np.int8)
    slot = np.full(len(kind), -1, dtype=np.int32)
    for r in range(game.num_rounds):
        ids = np.flatnonzero((kinds == DECISION) & (rounds == r))
        slot[ids] = np.arange(ids.size, dtype=np.int32)
    return BettingTree(
        kind=kinds,
        player=np.array(player, dtype=np.int8),
        round=rounds,
        spent=np.array(spent, dtype=np.int32).reshape(-1, 2),
        children=np.array(children, dtype=np.int32).reshape(-1, 3),
        parent=np.array(parent, dtype=np.int32),
        slot=slot,
        history=tuple(history),
    )
