"""A card abstraction as a batch lookup: `bucket(round, cards)` for many hands at once.

Round 0 buckets are the canonical (lossless) indices; middle rounds come from `hsd-buckets` (or,
for a potential-aware abstraction, `potential-buckets`), the last round from `ochs-buckets`
(through the (hole, unordered board) index). The solver and the match engine call this for
every hand they deal.
"""

from __future__ import annotations

import numpy as np

from gameforge.artifacts import Artifact, ArtifactStore
from gameforge.engines.poker.acpc import GameDef
from gameforge.engines.poker.mccfr import DealTables, deal_tables
from gameforge.stages.base import StageError
from gameforge.stages.poker.hsd import round_indexer
from gameforge.stages.poker.params import GameParams
from gameforge.stages.poker.river_hs import hand_indexer


class CardAbstraction:
    """Bucket tables of every round of one game, loaded into memory."""

    def __init__(self, hsd_buckets: Artifact, ochs_buckets: Artifact):
        middle = ("hsd-buckets", "potential-buckets")
        if hsd_buckets.stage not in middle or ochs_buckets.stage != "ochs-buckets":
            raise StageError(
                "CardAbstraction needs an hsd-buckets (or potential-buckets) and an ochs-buckets "
                "artifact"
            )
        if hsd_buckets.params["game_digest"] != ochs_buckets.params["game_digest"]:
            raise StageError("the two bucket artifacts were built for different games")
        self.game: GameDef = GameParams(game=hsd_buckets.params["game"]).game_def()
        self.keys = (hsd_buckets.key, ochs_buckets.key)
        last = self.game.num_rounds - 1
        self.tables: dict[int, np.ndarray] = {}
        self.sizes: dict[int, int] = {0: round_indexer(self.game, 0).size(0)}
        for artifact in (hsd_buckets, ochs_buckets):
            for r in map(int, artifact.meta["summary"]["rounds"]):
                self.tables[r] = np.asarray(artifact[f"bucket_round{r}"][:])
                self.sizes[r] = int(artifact.params["k"])
        missing = [r for r in range(1, last + 1) if r not in self.tables]
        if missing:
            raise StageError(f"the abstraction has no buckets for rounds {missing}")

    @classmethod
    def from_store(cls, store: ArtifactStore, hsd_key: str, ochs_key: str) -> CardAbstraction:
        """Open the two bucket artifacts by key."""
        return cls(store.open(hsd_key), store.open(ochs_key))

    def num_buckets(self, round_: int) -> int:
        """Number of buckets of a round (169-9000-9000-9000 at the paper preset)."""
        return self.sizes[round_]

    def bucket(self, round_: int, cards: np.ndarray) -> np.ndarray:
        """Buckets of hands: rows of hole cards, then the board in deal order."""
        cards = np.ascontiguousarray(cards, dtype=np.int8)
        expected = self.game.num_hole_cards + self.game.board_cards_through(round_)
        if cards.ndim != 2 or cards.shape[1] != expected:
            raise ValueError(f"round {round_} hands need {expected} cards per row")
        if round_ == self.game.num_rounds - 1:
            indexer = hand_indexer(self.game)
        else:
            indexer = round_indexer(self.game, round_)
        index = indexer.index(cards, indexer.rounds - 1, validate=True)
        return index if round_ == 0 else self.tables[round_][index].astype(np.int64)

    def deal_tables(self) -> DealTables:
        """Indexers and bucket tables of every round, packed for the sampled CFR kernels."""
        last = self.game.num_rounds - 1
        indexers = [round_indexer(self.game, r) for r in range(last)] + [hand_indexer(self.game)]
        tables = [None] + [self.tables[r] for r in range(1, last + 1)]
        sizes = [self.sizes[r] for r in range(last + 1)]
        return deal_tables(self.game, indexers, tables, sizes)
