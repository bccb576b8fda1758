"""What every CFR solver of limit games shares: the information-set layout and the protocol.

The full-walk solver (`poker.cfr`), chance and external sampling (`poker.mccfr`) and public
chance sampling (`poker.pcs`) keep their regrets and strategy sums in the same rows, laid out by
`InfosetLayout`, and offer the same `CfrSolver` interface to whoever drives them (the `cfr`
stage): run iterations, save and restore the state, read the average strategy.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple, Protocol

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


class SolverState(NamedTuple):
    """What a solve resumes from: regrets, strategy sums, and the iterations behind them."""

    regret: np.ndarray  # (infosets, 3)
    avg: np.ndarray  # (infosets, 3) strategy sums
    iteration: int


class SolverRows:
    """What the solvers share about their tables: the rows' layout, the regrets and strategy
    sums in them, the iterations run (set by each solver's constructor)."""

    layout: InfosetLayout
    regret: np.ndarray
    avg: np.ndarray
    iteration: int

    @property
    def offsets(self) -> np.ndarray:
        """(R,) first information-set row of each round (`InfosetLayout`)."""
        return self.layout.offsets

    @property
    def ndec(self) -> np.ndarray:
        """(R,) decision nodes per round (`InfosetLayout`)."""
        return self.layout.ndec

    @property
    def num_infosets(self) -> int:
        """Information sets of the (abstract) game, both players."""
        return int(self.regret.shape[0])

    def state(self) -> SolverState:
        """Regrets, strategy sums and iterations (the live arrays)."""
        return SolverState(self.regret, self.avg, self.iteration)


class CfrSolver(Protocol):
    """A CFR solver as its driver sees it (`FullWalkSolver`, `SampledSolver`,
    `PublicSampledSolver`)."""

    @property
    def iteration(self) -> int:
        """Iterations run so far."""
        ...

    @property
    def layout(self) -> InfosetLayout:
        """The rows of the regret and strategy-sum tables."""
        ...

    @property
    def deals_per_iteration(self) -> float:
        """Deals one iteration's regret updates sum over (regrets / this: per deal)."""
        ...

    def iterate(self, iterations: int = 1) -> None:
        """Run `iterations` more iterations."""
        ...

    def state(self) -> SolverState:
        """The solver's state (the live arrays, not copies)."""
        ...

    def restore(self, regret: np.ndarray, avg: np.ndarray, iteration: int) -> None:
        """Continue from saved regrets and strategy sums after `iteration` iterations."""
        ...

    def average_strategy(self) -> np.ndarray:
        """(infosets, 3) average strategy; uniform over legal actions where never reached."""
        ...
