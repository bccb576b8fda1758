"""OpenSpiel's universal_poker (a port of ACPC's game.c) on a gameforge no-limit game: the
reference that tests/test_nolimit.py and bench/bench_nlhe.py compare the engine with."""

from __future__ import annotations

from types import ModuleType
from typing import Any

from gameforge.engines.poker.acpc import GameDef


def universal_poker(pyspiel: ModuleType, g: GameDef) -> Any:
    """universal_poker on no-limit game `g`, every raise-to size its own action (action id =
    raise-to)."""
    return pyspiel.load_game(
        "universal_poker",
        {
            "betting": "nolimit",
            "bettingAbstraction": "fullgame",
            "numPlayers": g.num_players,
            "numRounds": g.num_rounds,
            "stack": " ".join(map(str, g.stack)),
            "blind": " ".join(map(str, g.blind)),
            "firstPlayer": " ".join(str(p + 1) for p in g.first_player),
            "numSuits": g.num_suits,
            "numRanks": g.num_ranks,
            "numHoleCards": g.num_hole_cards,
            "numBoardCards": " ".join(map(str, g.num_board_cards)),
        },
    )
