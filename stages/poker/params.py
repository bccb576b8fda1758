"""Parameter pieces shared by poker stages."""

from __future__ import annotations

import hashlib

from pydantic import Field, computed_field, field_validator

from gameforge.artifacts import Artifact
from gameforge.engines.poker.acpc import GameDef
from gameforge.engines.poker.betting import check_tree_size
from gameforge.engines.poker.shipped_games import load_game
from gameforge.stages.base import StageError, StageParams


class GameParams(StageParams):
    """Parameters of a stage that works on one ACPC game (a shipped name or a `.game` path)."""

    game: str = Field(
        default="holdem.limit.2p.reverse_blinds",
        description="The ACPC game: a shipped game's name or the path of a `.game` file.",
    )

    @field_validator("game")
    @classmethod
    def _game_loads(cls, value: str) -> str:
        load_game(value)  # raises GameDefError (a ValueError) with the reason
        return value

    @computed_field  # type: ignore[prop-decorator]
    @property
    def game_digest(self) -> str:
        """Hash of the parsed definition, so the artifact key follows the game's content."""
        return hashlib.sha256(self.game_def().to_text().encode()).hexdigest()[:12]

    def game_def(self) -> GameDef:
        """The parsed game."""
        return load_game(self.game)


class TreeGameParams(GameParams):
    """Parameters of a stage that builds the game's betting tree: refused over its size limit."""

    @field_validator("game")
    @classmethod
    def _tree_fits(cls, value: str) -> str:
        game = load_game(value)
        if game.betting_type != "limit" or game.num_players != 2:
            # refused here, before the plan: building the tree raised deep in a footprint
            kind = "a no-limit" if game.betting_type != "limit" else "a multi-player"
            raise ValueError(
                f"{game.name or value} is {kind} game; this stage solves two-player limit games"
            )
        check_tree_size(game)  # raises GameDefError naming the size, the cause and the limit
        return value


def same_game(params: GameParams, inputs: dict[str, Artifact]) -> None:
    """A stage's `check_inputs`: every input that records a game was built for this one."""
    for name, artifact in inputs.items():
        theirs = artifact.params.get("game_digest")
        if theirs and theirs != params.game_digest:
            raise StageError(f"input {name} ({artifact.key}) was built for another game")
