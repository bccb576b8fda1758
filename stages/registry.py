"""The stage registry: which modules hold stages, and the lookup of a stage by name.

Adding a stage: write its module (a run function declared with `@stage(...)`, or a `Stage`
passed to `register`) and list the module's import path with the stage's name in its game's
declaration (`games/<game>.py`). A module is imported when one of its stages is first looked
up, so a stage module may import from here without an import circle, and planning a poker flow
never imports torch (two seconds of every command's start) for the network stages.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Generic, TypedDict, TypeVar, Unpack

from gameforge.artifacts import Artifact
from gameforge.games import GAMES, Game
from gameforge.stages.base import Nondeterminism, Stage, StageContext, StageError, StageParams
from gameforge.stages.resources import Footprint

P = TypeVar("P", bound=StageParams)
RunFn = Callable[[StageContext[P]], dict[str, Any]]


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


class Declaration(TypedDict, Generic[P], total=False):
    """What a stage declares besides its name, version and parameter model: each a field of
    `Stage`, all optional."""

    inputs: dict[str, str]  # input name -> upstream stage ("a|b": either)
    optional: Iterable[str]  # inputs that may be left out
    many: Iterable[str]  # inputs that take `name.0`, `name.1`, ...
    check_inputs: Callable[[P, dict[str, Artifact]], None]  # raises StageError on a mismatch
    labels: tuple[str, ...]  # the parameters that tell its artifacts apart
    footprint: Callable[[P, dict[str, dict[str, Any]]], Footprint]  # memory and bytes estimate
    nondeterminism: Nondeterminism  # why its output is not bit-reproducible, and the tolerance
    replay: Callable[[dict[str, Any]], dict[str, Any]]  # execution params repeating a build


def stage(
    name: str, version: int, params: type[P], **declared: Unpack[Declaration[P]]
) -> Callable[[RunFn[P]], RunFn[P]]:
    """Declare the decorated run function as stage `name` (its docstring's first line is the
    stage's description), with the rest of its declaration (`Declaration`)."""

    def declare(run: RunFn[P]) -> RunFn[P]:
        description = (run.__doc__ or "").strip().partition("\n")[0]
        register(
            Stage(
                name,
                version,
                params,
                run,
                inputs=dict(declared.get("inputs") or {}),
                description=description,
                optional_inputs=frozenset(declared.get("optional", ())),
                many_inputs=frozenset(declared.get("many", ())),
                check_inputs=declared.get("check_inputs"),
                label_params=tuple(declared.get("labels", ())),
                footprint=declared.get("footprint"),
                nondeterminism=declared.get("nondeterminism"),
                replay=declared.get("replay"),
            )
        )
        return run

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


@dataclass(frozen=True)
class InputRow:
    """One declared input of a stage, as `gameforge stage show` lists it."""

    name: str
    upstream: tuple[str, ...]  # the stages that may feed it
    optional: bool  # a run may leave it out
    many: bool  # takes `name.0`, `name.1`, ...


@dataclass(frozen=True)
class ParamRow:
    """One parameter of a stage, as `gameforge stage show` lists it."""

    name: str
    type: str  # the annotation as written: `int`, `int | None`, `Literal['cfr', 'cfr+']` ...
    default: str  # the default's repr (a default factory's value), or "(required)"
    execution_only: bool  # changes how the stage runs, not what it writes: not in the key
    description: str


def stage_inputs(declared: Stage) -> list[InputRow]:
    """A stage's declared inputs, in declaration order."""
    return [
        InputRow(
            name,
            tuple(upstream.split("|")),
            name in declared.optional_inputs,
            name in declared.many_inputs,
        )
        for name, upstream in declared.inputs.items()
    ]


def stage_parameters(declared: Stage) -> list[ParamRow]:
    """A stage's parameters, in the model's order: type, default, whether execution-only, and
    what each means (the field's description)."""
    model = declared.params_model
    rows = []
    for name, info in model.model_fields.items():
        if info.is_required():
            default = "(required)"
        else:
            default = repr(info.get_default(call_default_factory=True))
        rows.append(
            ParamRow(
                name,
                _type_name(info.annotation),
                default,
                name in model.execution_only,
                info.description or "",
            )
        )
    return rows


def _type_name(annotation: Any) -> str:
    """`int` for a class, else the annotation as written (`int | None`, `list[str]`)."""
    if isinstance(annotation, type) and not getattr(annotation, "__args__", None):
        return annotation.__name__
    return repr(annotation).replace("typing.", "")
