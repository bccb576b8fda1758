"""The games gameforge ships, one declaration each (`games/<game>.py`): the stage registry,
the flows, the figures and the tests' tiny store are all derived from `GAMES`.

Adding a game is its own packages (engines, stages, flows/specs, flows/plots), its declaration
here, and its name in `GAME_MODULES`. This package imports nothing else of gameforge, so every
layer may read it.
"""

from __future__ import annotations

import importlib

from gameforge.games.base import Game, TestRun

__all__ = ["GAMES", "GAME_MODULES", "Game", "TestRun"]

# In this order the registries list them: `stage run` takes a stage's presets from the first
# flow that runs it.
GAME_MODULES: tuple[str, ...] = ("poker", "nlhe", "hearts", "blokus")

GAMES: tuple[Game, ...] = tuple(
    importlib.import_module(f"gameforge.games.{name}").GAME for name in GAME_MODULES
)
