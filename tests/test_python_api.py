"""docs/python-api.md: every ```python snippet runs against tiny stored artifacts.

The test builds a store with the `tiny` presets (an `lhe-solve` abstraction and a short `cfr`
solve on the 6-rank deck, one small `nlhe-train` generation). The page's first four snippets,
the notebook API (`import gameforge as gf`), run in order in one namespace in the folder of
that store, whose flow they find cached; the last four, the parts underneath, run in order in
one namespace holding `store`, `abstraction_keys`, `strategy_key` and `player_key`. What each
snippet computed is checked. (The ```python blocks of the other docs pages run in
tests/test_docs.py; the facade's own examples in tests/test_api.py.)
"""

from __future__ import annotations

import re
from itertools import combinations
from pathlib import Path

import numpy as np
import pytest

from gameforge.artifacts import ArtifactStore
from gameforge.engines.poker.cards import parse_cards
from gameforge.engines.poker.evaluator import evaluate
from gameforge.flows.pipeline import run_plan
from gameforge.flows.request import RunRequest
from gameforge.flows.specs import get_flow
from gameforge.stages.executor import InProcessExecutor
from gameforge.stages.poker.strategy import StrategyView

PAGE = Path(__file__).resolve().parent.parent / "docs" / "python-api.md"
quiet = lambda _m: None  # noqa: E731


def api_snippets() -> list[str]:
    """The ```python blocks of docs/python-api.md, in order."""
    text = PAGE.read_text(encoding="utf-8")
    return re.findall(r"^```python\n(.*?)^```", text, re.S | re.M)


@pytest.fixture(scope="module")
def api_store(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """A store with a tiny abstraction, a tiny solve on it and one tiny CNN generation."""
    store = ArtifactStore(tmp_path_factory.mktemp("api") / "store")
    solve = RunRequest(flow="lhe-solve", preset="tiny", overrides=("cfr.iterations=20000",))
    poker = run_plan(solve, store, InProcessExecutor(), log=quiet)
    nlhe = get_flow("nlhe-cnn")
    cnn = run_plan(
        RunRequest(
            flow="nlhe-cnn",
            preset="tiny",
            overrides=("histories-1.hands=240", "train-1.epochs=1"),
            only=nlhe.upstream("train-1"),
        ),
        store,
        InProcessExecutor(),
        log=quiet,
    )
    return {
        "store": store,
        "abstraction_keys": (poker["hsd-buckets"].key, poker["ochs-buckets"].key),
        "strategy_key": poker["cfr"].key[:12],  # a prefix, as the page allows
        "player_key": cnn["train-1"].key,
    }


def brute_force_hs(hole: list[int], board: list[int]) -> float:
    """(wins + ties/2) / opponent hands, comparing against every opponent pair one by one."""
    rest = [c for c in range(52) if c not in hole + board]
    opponents = np.array([list(pair) + board for pair in combinations(rest, 2)])
    mine = evaluate(np.array([hole + board]))[0]
    theirs = evaluate(opponents)
    return float(((mine > theirs).sum() + 0.5 * (mine == theirs).sum()) / len(opponents))


FACADE_SNIPPETS = 4  # store and artifacts, poker, evaluation, Hearts and Blokus


def test_the_notebook_api_snippets_run_and_give_sound_results(
    api_store: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    import gameforge as gf

    snippets = api_snippets()[:FACADE_SNIPPETS]
    store = api_store["store"]
    monkeypatch.chdir(store.root.parent)  # the page's ./store: the fixture's
    ns: dict = {"__name__": "python_api_page"}

    # (a) The tiny solve, found cached, searched and explained.
    exec(compile(snippets[0], "docs/python-api.md:gf-1", "exec"), ns)
    holdem, buckets = ns["holdem"], ns["buckets"]
    assert holdem["cfr"].key.startswith(api_store["strategy_key"])
    assert all(node.get("cached") for node in holdem.record.nodes.values())
    assert [a.key for a in ns["solves"]] == [holdem["cfr"].key]
    assert buckets.key == api_store["abstraction_keys"][0]
    assert ns["flop_buckets"].shape == (store.open(buckets.key)["bucket_round1"].shape[0],)
    assert ns["built_from"][0] == "river-hs" and ns["built_from"][-1] == "ochs-buckets"
    assert type(ns["figure"]).__name__ == "Figure" and ns["figure"].axes

    # (b) One line each: the same numbers as the parts underneath give.
    exec(compile(snippets[1], "docs/python-api.md:gf-2", "exec"), ns)
    hole, board = parse_cards("AsKd"), parse_cards("4d5d9dKhQc")
    assert ns["hs"] == pytest.approx(brute_force_hs(hole, board), abs=1e-12)
    assert ns["histogram"].sum() == 1081 and len(ns["histogram"]) == 50
    view = StrategyView(store, store.open(api_store["strategy_key"]))
    assert ns["odds"] == view.decision("7s6s", "2d5d4c", "rc/").probabilities == ns["same"]
    assert ns["bucket"] == view.decision("7s6s", "2d5d4c", "rc/").bucket

    # (c) Evaluation: an interval around the mean, a stored league, an exploitability.
    exec(compile(snippets[2], "docs/python-api.md:gf-3", "exec"), ns)
    match = ns["match"]
    assert ns["low"] < match.mbb_per_game < ns["high"] and match.hands == 4000
    assert ns["league"].stage == "league" and ns["ranking"].startswith("ranking at 95%")
    assert ns["measured"].method == "lbr" and ns["measured"].artifact.stage == "lbr"

    # (d) Hearts and Blokus: legal cards; the move the search played is its most visited.
    exec(compile(snippets[3], "docs/python-api.md:gf-4", "exec"), ns)
    assert set(ns["cards"].values()) <= set(ns["trick"].legal())
    search = ns["search"]
    assert search.move == search.children[0]["move"] and search.move in ns["board"].legal_moves()
    assert isinstance(ns["board"], gf.BlokusPosition)


def test_python_api_page_snippets_run_and_give_sound_results(api_store: dict) -> None:
    snippets = api_snippets()[FACADE_SNIPPETS:]
    assert len(snippets) == 4, "expected four snippets: HS, bucket, strategy, player"
    ns = dict(api_store)
    store = ns["store"]

    # (a) Hand strength of one hand, from the engines: equal to comparing hands one by one.
    exec(compile(snippets[0], "docs/python-api.md:1", "exec"), ns)
    hs = float(ns["hs"])
    assert 0.0 <= hs <= 1.0
    assert hs == pytest.approx(brute_force_hs(ns["hole"], ns["board"]), abs=1e-12)

    # (b) A bucket from the stored abstraction: in range, and the same for a suit-swapped hand.
    exec(compile(snippets[1], "docs/python-api.md:2", "exec"), ns)
    abstraction, bucket, cards = ns["abstraction"], ns["bucket"], ns["cards"]
    assert 0 <= bucket < abstraction.num_buckets(1)
    swapped = cards.copy()
    suit = swapped % 4
    swapped[suit == 3] -= 1  # spades <-> hearts: an isomorphic hand, hence the same bucket
    swapped[suit == 2] += 1
    assert int(abstraction.bucket(1, swapped)[0]) == bucket

    # (c) The stored strategy at one information set: a probability vector over legal actions.
    exec(compile(snippets[2], "docs/python-api.md:3", "exec"), ns)
    decision = ns["decision"]
    probs = np.array(list(decision.probabilities.values()))
    assert decision.round == 1 and 0 <= decision.bucket < abstraction.num_buckets(1)
    assert set(decision.probabilities) <= {"f", "c", "r"} and len(probs) >= 2
    assert (probs >= 0).all() and probs.sum() == pytest.approx(1.0, abs=1e-6)
    assert decision.bucket == bucket  # the abstraction the solve used, the same hand

    # (d) The trained CNN from its stored weights: one value in [-1, 1] per input.
    exec(compile(snippets[3], "docs/python-api.md:4", "exec"), ns)
    values, net, train = ns["values"], ns["net"], ns["train"]
    assert tuple(values.shape) == (8,)
    assert bool(((values >= -1) & (values <= 1)).all())
    stored = np.asarray(train["weights.head.1.weight"][:])
    assert np.array_equal(net.state_dict()["head.1.weight"].numpy(), stored)
    assert train.key == store.open(api_store["player_key"]).key
