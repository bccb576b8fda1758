"""The betting tree of a two-player limit ACPC game, as flat arrays for numba kernels.

Rules (ACPC limit): blinds are posted as bets; in each round the first player is
`first_player[r]`; actions are fold (only when facing a bet), call/check and raise (by
`raise_size[r]`, at most `max_raises[r]` times a round, counted over both players). A round
ends on a call once every player has acted in it; after the last round comes the showdown.

Nodes are numbered in depth-first preorder, so every parent precedes its children. Each
decision node also has a `slot`: its index among the decision nodes of its round, which with
a card bucket names an information set.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from gameforge.engines.poker.acpc import GameDef

FOLD, CALL, RAISE = 0, 1, 2
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


def build_tree(game: GameDef) -> BettingTree:
    """The full limit betting tree of a two-player game."""
    if game.betting_type != "limit" or game.num_players != 2:
        raise ValueError("betting trees are built for two-player limit games")
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

    def decide(r: int, p: int, s: tuple[int, int], raises: int, acted: int, par: int, h: str):
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
            children[node][CALL] = decide(r, 1 - p, c, raises, acted + 1, node, h + "c")
        if raises < game.max_raises[r]:
            up = list(c)
            up[p] += game.raise_size[r]
            children[node][RAISE] = decide(
                r, 1 - p, (up[0], up[1]), raises + 1, acted + 1, node, h + "r"
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
