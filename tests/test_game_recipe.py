"""The "add a game" recipe of docs/architecture.md, walked with a toy game: a declaration is
all the registries need, and every shipped game's declaration agrees with its code."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import numpy as np

from gameforge.artifacts import ArtifactStore
from gameforge.flows.plots import PLOTTERS, plotters_of
from gameforge.flows.specs import FLOWS, flows_of
from gameforge.games import GAME_MODULES, GAMES
from gameforge.stages.registry import STAGE_MODULES, get_stage, stage_modules
from gameforge.stages.runner import run_stage
from tests.toy_game import GAME as TOY_GAME

ROOT = Path(__file__).resolve().parent.parent


def quiet(_line: str) -> None:
    """Drop a log line."""


def test_a_declared_toy_game_reaches_every_registry_and_runs(tmp_path):
    """Its stage modules, flow and figures are found from the declaration alone; its test run
    builds and its figure draws."""
    games = (*GAMES, TOY_GAME)
    modules = stage_modules(games)
    assert modules["tests.toy_stages"] == ("toy-squares", "toy-double")
    importlib.import_module("tests.toy_stages")
    assert get_stage("toy-double").inputs == {"squares": "toy-squares"}
    flows = flows_of(games)
    assert list(flows)[-1] == "toy" and list(flows)[:-1] == list(FLOWS)
    plotters = plotters_of(games)
    assert set(plotters) - set(PLOTTERS) == {"toy-squares", "toy-double"}

    params = flows["toy"].resolve("tiny", list(TOY_GAME.test_runs["toy"].overrides))
    store = ArtifactStore(tmp_path / "store")
    squares = run_stage("toy-squares", params["toy-squares"], {}, store=store, log=quiet)
    double = run_stage("toy-double", {}, {"squares": squares.key}, store=store, log=quiet)
    doubled = store.open(double.key)
    assert np.array_equal(doubled["doubled"][:], 2 * np.arange(40) ** 2)
    assert plotters["toy-double"](doubled, tmp_path / "double.png", None) == "doubled squares"
    assert (tmp_path / "double.png").stat().st_size > 0


def test_every_shipped_declaration_agrees_with_its_code():
    """Each game's test runs name flows of its own; its plotters draw only its own stages; every
    flow of a game runs only stages some game declares."""
    declared = {name for names in STAGE_MODULES.values() for name in names}
    for game in GAMES:
        own_flows = {spec.name for spec in flows_of([game]).values()}
        assert set(game.test_runs) <= own_flows, game.name
        own_stages = {name for names in game.stages.values() for name in names}
        assert set(plotters_of([game])) <= own_stages, game.name
        for spec in flows_of([game]).values():
            assert {node.stage for node in spec.nodes} <= declared, spec.name
    assert [game.name for game in GAMES] == list(GAME_MODULES)


def test_the_documented_recipe_names_what_the_code_needs():
    """docs/architecture.md's recipes send a new game to its declaration and `GAME_MODULES`,
    and name no registry that is derived (and so must not be edited by hand)."""
    doc = (ROOT / "docs" / "architecture.md").read_text()
    recipe = doc[doc.index("### ... a game") :]
    for needed in ("games/<game>.py", "GAME_MODULES", "test_runs", "flow_keys"):
        assert needed in recipe, needed
    assert not re.search(r"add[^.]*\b(STAGE_MODULES|TINY_RUNS)\b", doc, re.IGNORECASE)
