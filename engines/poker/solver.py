"""What every CFR solver of limit games shares: the information-set layout.

The full-walk solver (`poker.cfr`), chance and external sampling (`poker.mccfr`) and public
chance sampling (`poker.pcs`) keep their regrets and strategy sums in the same rows, laid out by
`InfosetLayout`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gameforge.engines.poker.betting import DECISION, BettingTree


@dataclass(frozen=True)
class InfosetLayout:
    """Where each information set's row is, and its legal actions.

    The row of (round r, bucket b, decision slot s) is offsets[r] + b * ndec[r] + s: bucket-major,
    so a deal's buckets touch one contiguous block per round. Every bucket of a round shares
    the legal actions of the decision node at the slot.
    """

    offsets: np.ndarray  # (R,) int64 first row of each round
    ndec: np.ndarray  # (R,) int64 decision nodes per round (the slots)
    num_buckets: np.ndarray  # (R,) int64 buckets per round
    node_round: np.ndarray  # (D,) int64 round of each decision node
    node_slot: np.ndarray  # (D,) int64 its slot in the round
    node_actions: np.ndarray  # (D, 3) bool its legal actions

    @property
    def num_infosets(self) -> int:
        """Information sets (rows) of both players."""
        return int((self.ndec * self.num_buckets).sum())

    def legal(self) -> np.ndarray:
        """(infosets, 3) legal-action mask."""
        legal = np.zeros((self.num_infosets, 3), dtype=np.bool_)
        for r, slot, actions in zip(self.node_round, self.node_slot, self.node_actions):
            start = self.offsets[r] + slot
            stop = self.offsets[r] + self.num_buckets[r] * self.ndec[r]
            legal[start : stop : self.ndec[r]] = actions
        return legal


def infoset_layout(tree: BettingTree, num_buckets: np.ndarray) -> InfosetLayout:
    """The rows of a betting tree's information sets with `num_buckets[r]` buckets in round r."""
    ndec = np.array(tree.decision_counts(), dtype=np.int64)
    buckets = np.asarray(num_buckets, dtype=np.int64)
    sizes = ndec * buckets
    nodes = np.flatnonzero(tree.kind == DECISION)
    return InfosetLayout(
        offsets=np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64),
        ndec=ndec,
        num_buckets=buckets,
        node_round=tree.round[nodes].astype(np.int64),
        node_slot=tree.slot[nodes].astype(np.int64),
        node_actions=tree.children[nodes] >= 0,
    )
