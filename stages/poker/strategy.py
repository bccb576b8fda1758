"""Query a `cfr` artifact: the action probabilities at one hand, board and betting history."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from gameforge.artifacts import Artifact, ArtifactStore
from gameforge.engines.poker.acpc import GameDef
from gameforge.engines.poker.betting import ACTIONS, DECISION, build_tree
from gameforge.engines.poker.cfr import lossless_bucketer
from gameforge.engines.poker.match import Agent
from gameforge.stages.base import StageError
from gameforge.stages.poker.abstraction import CardAbstraction
from gameforge.stages.poker.params import GameParams

ACTION_NAMES = {"f": "fold", "c": "call/check", "r": "raise/bet"}


@dataclass(frozen=True)
class Decision:
    """One information set's average strategy, and how it was found."""

    round: int
    bucket: int
    row: int
    history: str
    player: int
    probabilities: dict[str, float]  # legal actions only, in f/c/r order


def abstraction_keys(key: str, inputs: Mapping[str, str]) -> tuple[str, str] | None:
    """The (middle, river) bucket artifacts a `cfr` strategy was solved on, by input name;
    None for a lossless solve (a continued one has only its `parent` as input)."""
    middle, river = inputs.get("middle_buckets"), inputs.get("river_buckets")
    if middle is None and river is None:
        return None
    if middle is None or river is None:
        raise StageError(f"{key}: a card abstraction needs both middle_buckets and river_buckets")
    return middle, river


class StrategyView:
    """A solved strategy plus the abstraction and betting tree needed to look it up."""

    def __init__(self, store: ArtifactStore, artifact: Artifact):
        if artifact.stage != "cfr":
            raise StageError(f"{artifact.key} is a {artifact.stage} artifact, not a cfr strategy")
        self.artifact = artifact
        self.store = store
        self.game: GameDef = GameParams(game=artifact.params["game"]).game_def()
        self.tree = build_tree(self.game)
        layout = artifact.meta["summary"]["layout"]
        self.offsets = np.array(layout["offsets"], dtype=np.int64)
        self.ndec = np.array(layout["decisions_per_round"], dtype=np.int64)
        buckets = abstraction_keys(artifact.key, artifact.inputs)
        if buckets is not None:
            middle, river = buckets
            self.abstraction: CardAbstraction | None = CardAbstraction.from_store(
                store, middle, river
            )
            self.describe = f"abstraction {middle} + {river}"
        else:
            self.abstraction = None
            self._lossless, _ = lossless_bucketer(self.game)
            self.describe = "lossless (canonical hands)"
        self.average = artifact["average_strategy"]

    def agent(self, name: str) -> Agent:
        """This strategy as a match player named `name`."""
        tables = self.abstraction.deal_tables() if self.abstraction is not None else None
        return Agent(
            "strategy",
            name=name,
            strategy=np.asarray(self.average[:]),
            offsets=self.offsets,
            ndec=self.ndec,
            tables=tables,
        )

    def bucket(self, round_: int, cards: list[int]) -> int:
        """The bucket of a player's cards (hole then board) in a round."""
        row = np.array([cards], dtype=np.int8)
        if self.abstraction is not None:
            return int(self.abstraction.bucket(round_, row)[0])
        return int(self._lossless(round_, row)[0])

    def decision(self, hand: str, board: str, history: str) -> Decision:
        """Action probabilities where `history` (e.g. "rc/cr") leaves the hand's owner to act."""
        g = self.game
        hole = g.parse_cards(hand)
        seen = g.parse_cards(board) if board else []
        if len(hole) != g.num_hole_cards:
            raise StageError(
                f"hand {hand!r}: {g.name or 'this game'} deals {g.num_hole_cards} hole card(s) "
                f"from a deck of {g.deck_text()}"
            )
        if len(set(hole + seen)) != len(hole + seen):
            raise StageError("a card appears twice in hand and board")
        try:
            node = self.tree.node_of(history)
        except ValueError as exc:
            raise StageError(str(exc)) from None
        if self.tree.kind[node] != DECISION:
            raise StageError(f"betting {history!r} ends the hand: nobody acts there")
        round_ = int(self.tree.round[node])
        if len(seen) != g.board_cards_through(round_):
            raise StageError(
                f"betting {history!r} is in round {round_}, which shows "
                f"{g.board_cards_through(round_)} board cards; got {len(seen)}"
            )
        bucket = self.bucket(round_, hole + seen)
        row = int(self.offsets[round_] + bucket * self.ndec[round_] + self.tree.slot[node])
        probs = np.asarray(self.average[row])
        legal = self.tree.children[node] >= 0
        return Decision(
            round=round_,
            bucket=bucket,
            row=row,
            history=history,
            player=int(self.tree.player[node]),
            probabilities={ACTIONS[a]: float(probs[a]) for a in range(3) if legal[a]},
        )

    def cards_text(self, hand: str, board: str) -> str:
        """Canonical rendering of a hand and board for display."""
        g = self.game
        text = g.format_cards(g.parse_cards(hand))
        if board:
            text += " | " + g.format_cards(g.parse_cards(board))
        return text

    def local_best_response_deals(
        self, deals: int, seed: int = 0, n_threads: int = 1, progress: Any = None
    ) -> np.ndarray:
        """LBR's winnings (chips, mean of both seats) on each of `deals` seeded deals against
        this strategy in the real game (see `gameforge.engines.poker.lbr`)."""
        from gameforge.engines.common.parallel import Parallel
        from gameforge.engines.poker.lbr import local_best_response
        from gameforge.engines.poker.mccfr import lossless_tables

        tables = (
            self.abstraction.deal_tables()
            if self.abstraction is not None
            else lossless_tables(self.game)
        )
        return local_best_response(
            self.game,
            tables,
            np.asarray(self.average[:]),
            self.offsets,
            self.ndec,
            deals,
            seed=seed,
            parallel=Parallel(threads=n_threads, progress=progress),
        )
