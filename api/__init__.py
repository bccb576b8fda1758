"""gameforge for notebooks: `import gameforge as gf`.

A thin front over the package's five parts (engines, stages, artifacts, flows, games): a store to
search and artifacts that explain themselves (`open_store`), flows and stages run from Python
with their findings (`run`, `run_stage`), poker in one line each (`hand_strength`, `hsd`,
`bucket`, `strategy`), evaluation (`play`, `league`, `exploitability`) and the other games'
positions (`hearts_position`, `blokus_position`). docs/python-api.md shows each; the examples in
these modules' docstrings run in the test suite. Nothing is imported until a name is used, so
`import gameforge.engines...` stays as light as before.

>>> import gameforge as gf
>>> round(gf.hand_strength("AsKd", "4d5d9dKhQc"), 4)
0.8505
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# public name -> the module (under gameforge) that defines it
_FACADE = {
    "open_store": "_store",
    "Store": "_store",
    "Artifact": "_store",
    "Run": "_store",
    "run": "_run",
    "run_stage": "_run",
    "hand_strength": "_poker",
    "hsd": "_poker",
    "bucket": "_poker",
    "abstraction": "_poker",
    "strategy": "_poker",
    "Strategy": "_poker",
    "play": "_poker",
    "MatchResult": "_poker",
    "league": "_poker",
    "exploitability": "_poker",
    "Exploitability": "_poker",
    "hearts_position": "_games",
    "HeartsPosition": "_games",
    "blokus_position": "_games",
    "BlokusPosition": "_games",
    "BlokusSearch": "_games",
}
__all__ = [
    "Artifact",
    "BlokusPosition",
    "BlokusSearch",
    "Exploitability",
    "HeartsPosition",
    "MatchResult",
    "Run",
    "Store",
    "Strategy",
    "abstraction",
    "blokus_position",
    "bucket",
    "exploitability",
    "hand_strength",
    "hearts_position",
    "hsd",
    "league",
    "open_store",
    "play",
    "run",
    "run_stage",
    "strategy",
]

if TYPE_CHECKING:
    from gameforge._games import (
        BlokusPosition,
        BlokusSearch,
        HeartsPosition,
        blokus_position,
        hearts_position,
    )
    from gameforge._poker import (
        Exploitability,
        MatchResult,
        Strategy,
        abstraction,
        bucket,
        exploitability,
        hand_strength,
        hsd,
        league,
        play,
        strategy,
    )
    from gameforge._run import run, run_stage
    from gameforge._store import Artifact, Run, Store, open_store


def __getattr__(name: str) -> Any:
    """Import the facade's module on first use of one of its names."""
    module = _FACADE.get(name)
    if module is None:
        raise AttributeError(f"module 'gameforge' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"gameforge.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
