"""Betting-tree sizes counted without building, ACPC's raise rules, and games refused at load."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from gameforge.engines.poker.acpc import GameDef
from gameforge.engines.poker.betting import (
    DECISION,
    FOLD_END,
    MAX_ACTIONS_PER_ROUND,
    RAISE,
    SHOWDOWN,
    TREE_NODE_LIMIT,
    build_tree,
    check_tree_size,
    tree_size,
)
from gameforge.engines.poker.shipped_games import load_game, shipped_games

ROOT = Path(__file__).resolve().parents[1]


def counted_by_building(game: GameDef) -> tuple[tuple[int, ...], tuple[int, ...], int]:
    """Decisions and folds per round, and showdowns, of the tree as built."""
    tree = build_tree(game)
    rounds = range(game.num_rounds)
    decisions = tuple(int(np.sum((tree.kind == DECISION) & (tree.round == r))) for r in rounds)
    folds = tuple(int(np.sum((tree.kind == FOLD_END) & (tree.round == r))) for r in rounds)
    return decisions, folds, int(np.sum(tree.kind == SHOWDOWN))


def test_counted_sizes_equal_the_built_trees_of_the_shipped_games():
    limit_games = [load_game(n) for n in shipped_games()]
    limit_games = [g for g in limit_games if g.betting_type == "limit" and g.num_players == 2]
    assert len(limit_games) >= 5
    for game in limit_games:
        size = tree_size(game)
        assert (size.decisions, size.folds, size.showdowns) == counted_by_building(game)
        assert size.nodes == build_tree(game).num_nodes


@settings(max_examples=60, deadline=None)
@given(
    rounds=st.integers(1, 4),
    raises=st.lists(st.integers(0, 4), min_size=4, max_size=4),
    first=st.lists(st.integers(0, 1), min_size=4, max_size=4),
    blinds=st.sampled_from([(10, 5), (5, 10), (0, 0), (1, 1), (2, 0)]),
)
def test_counted_sizes_equal_built_trees_of_random_games(rounds, raises, first, blinds):
    game = dataclasses.replace(
        load_game("leduc.limit.2p"),
        num_rounds=rounds,
        max_raises=tuple(raises[:rounds]),
        first_player=tuple(first[:rounds]),
        blind=blinds,
        raise_size=(2,) * rounds,
        num_board_cards=(0,) + (1,) * (rounds - 1),
        num_ranks=5,
    )
    size = tree_size(game)
    assert (size.decisions, size.folds, size.showdowns) == counted_by_building(game)


def test_heads_up_limit_holdem_has_the_published_number_of_information_sets():
    # Bowling et al. (Science 2015): 3.19 x 10^14 information sets; 6,378 betting sequences
    # where a player acts, times that round's raw (ordered-board) hands
    game = load_game("holdem.limit.2p.reverse_blinds")
    size = tree_size(game)
    assert sum(size.decisions) == 6378
    infosets = sum(d * game.raw_hands(r) for r, d in enumerate(size.decisions))
    assert infosets == 319_365_922_522_608


def test_acpc_action_cap_bounds_raises_when_max_raises_is_unlimited():
    # game.c raiseIsValid: a raise needs room for itself and the call within 64 actions a round
    game = dataclasses.replace(
        load_game("kuhn.limit.2p"), max_raises=(255,), blind=(0, 0), first_player=(0,)
    )
    tree = build_tree(game)
    size = tree_size(game)
    assert size.nodes == tree.num_nodes
    longest = max(len(h) for h in tree.history)
    assert longest == MAX_ACTIONS_PER_ROUND  # e.g. 'c' + 62 raises + a call, or 63 raises + a call
    after_raises = [h for h in tree.history if set(h) == {"r"}]
    assert max(map(len, after_raises)) == MAX_ACTIONS_PER_ROUND - 1
    deepest = tree.node_of("r" * (MAX_ACTIONS_PER_ROUND - 1))
    assert tree.children[deepest, RAISE] == -1
    assert tree.children[tree.node_of("r" * (MAX_ACTIONS_PER_ROUND - 2)), RAISE] >= 0


def test_a_game_over_the_tree_limit_is_refused_naming_the_cause():
    game = dataclasses.replace(load_game("holdem6.limit.2p.reverse_blinds"), max_raises=(255,) * 4)
    assert tree_size(game).nodes > TREE_NODE_LIMIT
    try:
        check_tree_size(game)
    except ValueError as exc:
        message = str(exc)
    else:
        raise AssertionError("an oversized game was accepted")
    assert "maxRaises missing" in message and "255" in message and f"{TREE_NODE_LIMIT:,}" in message
    assert "\n" not in message


def test_lhe_solve_without_max_raises_stops_before_any_stage(tmp_path):
    shipped = ROOT / "engines/poker/games/holdem6.limit.2p.reverse_blinds.game"
    lines = [ln for ln in shipped.read_text().splitlines() if "maxraises" not in ln.lower()]
    game = tmp_path / "no-max-raises.game"
    game.write_text("\n".join(lines) + "\n")
    store = tmp_path / "store"
    cli = [sys.executable, "-m", "gameforge.flows.cli"]
    done = subprocess.run(
        [*cli, "run", "lhe-solve", "--preset", "tiny", "--set", f"game={game}", "--store", store],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode != 0
    output = (done.stdout + done.stderr).strip().splitlines()
    assert len(output) <= 3, output
    assert "maxRaises" in output[-1] and "error:" in output[-1]
    assert not store.exists() or not any(store.rglob("*"))
