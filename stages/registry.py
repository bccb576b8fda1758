"""The stage registry: which modules hold stages, and the lookup of a stage by name.

Adding a stage: write its module (a run function declared with `@stage(...)`, or a `Stage`
passed to `register`) and list the module's import path with the stage's name in its game's
declaration (`games/<game>.py`). A module is imported when one of its stages is first looked
up, so a stage module may import from here without an import circle, and planning a poker flow
never imports torch (two seconds of every command's start) for the network stages.
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Callable, Iterable
from typing import Any

from gameforge.games import GAMES, Game
from gameforge.stages.base import Nondeterminism, Stage, StageContext, StageError, StageParams
from gameforge.stages.resources import Footprint

RunFn = Callable[[StageContext], dict[str, Any]]


def stage_modules(games: Iterable[Game]) -> dict[str, tuple[str, ...]]:
    """Each stage module of these games and the stages it declares, in the games' order."""
    return {module: names for game in games for module, names in game.stages.items()}


# Every shipped stage module and the stages it declares (a test checks the two agree).
STAGE_MODULES = stage_modules(GAMES)
MODULE_OF = {name: module for module, names in STAGE_MODULES.items() for name in names}

STAGES: dict[str, Stage] = {}
_loaded = False


def register(stage: Stage) -> Stage:
    """Add a stage (its name must be new); returns it, so a module can keep a handle."""
    if STAGES.get(stage.name, stage) is not stage:
        raise StageError(f"stage {stage.name!r} is registered twice")
    STAGES[stage.name] = stage
    return stage


def stage(
    name: str,
    version: int,
    params: type[StageParams],
    inputs: dict[str, str] | None = None,
    optional: Iterable[str] = (),
    many: Iterable[str] = (),
    check_inputs: Callable[[Any, dict[str, Any]], None] | None = None,
    labels: tuple[str, ...] = (),
    nondeterminism: Nondeterminism | None = None,
    replay: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
) -> Callable[[RunFn], RunFn]:
    """Declare the decorated run function as stage `name`; its docstring's first line is the
    stage's description. `optional` and `many` name inputs that may be left out, or that take
    `name.0`, `name.1`, ...; `labels` names the parameters that tell its artifacts apart;
    `nondeterminism` says why its output is not bit-reproducible and the tolerance it keeps;
    `replay` gives the execution parameters that make a rebuild repeat a stored build."""

    def declare(run: RunFn) -> RunFn:
        description = (run.__doc__ or "").strip().partition("\n")[0]
        register(
            Stage(
                name,
                version,
                params,
                run,
                inputs=dict(inputs or {}),
                description=description,
                optional_inputs=frozenset(optional),
                many_inputs=frozenset(many),
                check_inputs=check_inputs,
                label_params=tuple(labels),
                nondeterminism=nondeterminism,
                replay=replay,
            )
        )
        return run

    return declare


FootprintFn = Callable[[Any, dict[str, dict[str, Any]]], Footprint]


def footprint(name: str) -> Callable[[FootprintFn], FootprintFn]:
    """Declare the decorated function as the resource estimate of (already declared) stage
    `name`: `fn(params, upstream) -> Footprint`, upstream being input name -> its parameters."""

    def declare(fn: FootprintFn) -> FootprintFn:
        STAGES[name] = dataclasses.replace(STAGES[name], footprint=fn)
        return fn

    return declare


def all_stages() -> dict[str, Stage]:
    """Every registered stage by name: the shipped ones in `STAGE_MODULES` order (whatever order
    they were first looked up in), then any registered since."""
    global _loaded
    if not _loaded:
        for module in STAGE_MODULES:
            importlib.import_module(module)
        _loaded = True
    shipped = {name: STAGES[name] for name in MODULE_OF if name in STAGES}
    return shipped | {name: stage for name, stage in STAGES.items() if name not in shipped}


def current_version(name: str) -> int | None:
    """This code's version of a stage, or None for a stage it does not know."""
    try:
        return get_stage(name).version
    except StageError:
        return None


def get_stage(name: str) -> Stage:
    """A registered stage by name; an unknown name raises StageError listing the valid ones."""
    if name not in STAGES and name in MODULE_OF:
        importlib.import_module(MODULE_OF[name])
    if name not in STAGES and name not in all_stages():
        raise StageError(f"unknown stage {name!r} (valid: {', '.join(sorted(STAGES))})")
    return STAGES[name]
