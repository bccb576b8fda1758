"""A solve continued through `parent` is read by every consumer of a strategy: `strategy show`,
`strategy br`, `strategy lbr`, `play`, and the best-response, lbr and league stages, for a
lossless solve (whose only input is then its parent) and an abstract one alike."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from gameforge.flows.cli import app
from gameforge.stages.poker.strategy import StrategyView, abstraction_keys
from gameforge.stages.runner import run_stage
from tests.acpc_dealer import start_dealer
from tests.poker_helpers import LEDUC, SHORT, quiet
from tests.test_acpc_play import play


def continued(store, base: dict, inputs: dict[str, str]) -> tuple[str, str]:  # type: ignore[no-untyped-def]
    """(a solve, the same solve continued to twice its iterations through `parent`)."""
    first = run_stage("cfr", base, inputs, store=store, log=quiet).key
    longer = {**base, "iterations": 2 * base["iterations"]}
    second = run_stage("cfr", longer, {**inputs, "parent": first}, store=store, log=quiet).key
    return first, second


def every_consumer(store, game: str, first: str, second: str, hand: str, deals: int,  # type: ignore[no-untyped-def]
                   exact: bool = True) -> None:  # fmt: skip
    """Run every reader of a strategy on the continued solve `second` (`exact`: with the exact
    best response, minutes on a short deck)."""
    view = StrategyView(store, store.open(second))
    assert view.decision(hand, "", "").probabilities
    runner = CliRunner()
    where = ["--store", str(store.root)]
    commands = [["strategy", "show", second, "--hand", hand],
                ["strategy", "lbr", second, "--deals", str(deals)]]  # fmt: skip
    if exact:
        commands.append(["strategy", "br", second])
    for command in commands:
        result = runner.invoke(app, [*command, *where])
        assert result.exit_code == 0, (command, result.output)
        assert "Traceback" not in result.output
    stages = [("lbr", {"deals": deals})] + ([("best-response", {})] if exact else [])
    for stage, params in stages:
        run_stage(stage, {"game": game, **params}, {"strategy": second}, store=store, log=quiet)
    league = {"game": game, "sets": 2, "hands_per_set": 50}
    players = {"players.0": first, "players.1": second}
    run_stage("league", league, players, store=store, log=quiet)
    dealer, port = start_dealer(game, 20, "bottom")
    client = play(store, second, game, port)
    dealer.communicate(timeout=60)
    assert client.returncode == 0, client.stderr
    assert "played 20 hands" in client.stdout


def test_a_continued_lossless_solve_is_read_by_every_consumer(store):
    base = {"game": LEDUC, "algorithm": "cfr+", "iterations": 200, "evaluations": 0}
    first, second = continued(store, base, {})
    assert store.open(second).inputs == {"parent": first}
    assert abstraction_keys(second, store.open(second).inputs) is None
    every_consumer(store, LEDUC, first, second, "2c", deals=50)


@pytest.mark.parametrize("only", ["middle_buckets", "river_buckets"])
def test_half_an_abstraction_is_refused_in_one_line(only):
    with pytest.raises(Exception, match="needs both middle_buckets and river_buckets"):
        abstraction_keys("cfr-x", {only: "k", "parent": "p"})


@pytest.mark.parametrize(
    "exact", [False, pytest.param(True, marks=pytest.mark.slow)], ids=["fast", "exact"]
)
def test_a_continued_abstract_solve_is_read_by_every_consumer(short_deck, exact):
    store = short_deck.store
    middle, river = short_deck.hsd_buckets(20), short_deck.ochs_buckets(4, 20)
    inputs = {"middle_buckets": middle.key, "river_buckets": river.key}
    base = {"game": SHORT, "algorithm": "chance", "iterations": 2000, "evaluations": 0}
    first, second = continued(short_deck.store, base, inputs)
    assert abstraction_keys(second, store.open(second).inputs) == (middle.key, river.key)
    every_consumer(store, SHORT, first, second, "7c7d", deals=20, exact=exact)
