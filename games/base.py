"""What a game declares: the modules that hold its stages, flows and figures, and the reduced
runs its tests build. Module names only, so that nothing heavy (torch) loads until it is used."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class TestRun:
    """A flow run cut to what the tests can afford on two cores: overrides of its `tiny` preset,
    and the nodes to build (with what they need; empty: the whole flow)."""

    __test__ = False  # not a pytest test class, whatever its name

    overrides: tuple[str, ...] = ()
    nodes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Game:
    """One game's declaration: everything it adds to gameforge, named once."""

    name: str
    # stage module -> the stages importing it declares (a test checks the two agree)
    stages: Mapping[str, tuple[str, ...]]
    flows: str  # module whose `FLOWS` tuple holds the game's flows, in `stage run`'s search order
    plots: str  # module whose `PLOTTERS` maps the game's stages to their figures
    # module whose `READERS` maps the game's stages to their headline results
    findings: str = ""
    # flow name -> its reduced run for the tests' shared tiny store (tests/tiny_runs.py)
    test_runs: Mapping[str, TestRun] = field(default_factory=dict)
