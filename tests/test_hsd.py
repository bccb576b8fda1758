"""HSD: histograms of river HS over board completions, against brute force."""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pytest

from gameforge.engines.poker.shipped_games import load_game
from gameforge.stages.poker.hsd import array_name, round_indexer
from gameforge.stages.runner import run_stage
from tests.poker_helpers import SHORT as GAME
from tests.poker_helpers import brute_force_count


def brute_force_hsd(cards, game, bins=50):
    """HSD by enumerating completions and computing each HS by direct comparison."""
    hole, board = list(cards[:2]), list(cards[2:])
    rest = [c for c in range(game.deck_size) if c not in set(cards)]
    missing = sum(game.num_board_cards) - len(board)
    hist = np.zeros(bins, np.int64)
    for extra in combinations(rest, missing):
        count, n_opp = brute_force_count(
            hole, board + list(extra), game.deck_size, game.num_ranks, game.num_suits
        )
        hist[min(count * bins // (2 * n_opp), bins - 1)] += 1
    return hist


@pytest.fixture(scope="module")
def short_deck_hsd(short_deck):
    """HSDs of every round of the short deck, built in chunks of 4,096 hands."""
    return short_deck.hsd()


@pytest.mark.parametrize("round_", [0, 1, 2])
def test_hsd_matches_brute_force_on_a_short_deck(short_deck_hsd, round_):
    game = load_game(GAME)
    counts = short_deck_hsd[array_name(round_)][:]
    indexer = round_indexer(game, round_)
    rnd = indexer.rounds - 1
    assert counts.shape == (indexer.size(rnd), 50)
    completions = {0: 26334, 1: 171, 2: 18}[round_]
    assert (counts.sum(axis=1) == completions).all()
    rng = np.random.default_rng(round_)
    picks = rng.choice(counts.shape[0], size={0: 3, 1: 12, 2: 40}[round_], replace=False)
    hands = indexer.unindex(picks.astype(np.int64), rnd)
    for idx, row in zip(picks.tolist(), hands.tolist()):
        np.testing.assert_array_equal(counts[idx], brute_force_hsd(row, game))


def test_bad_rounds_are_rejected(short_deck, short_deck_hsd):
    from gameforge.stages.base import StageError

    with pytest.raises(StageError, match="rounds must be in 0..2"):
        run_stage(
            "hsd",
            {"game": GAME, "rounds": (3,)},
            {"river_hs": short_deck_hsd.inputs["river_hs"]},
            log=lambda _m: None,
            store=short_deck.store,
        )


def test_an_input_built_for_another_game_is_refused(store):
    from gameforge.stages.base import StageError

    leduc = run_stage("river-hs", {"game": "leduc.limit.2p"}, store=store, log=lambda _m: None)
    with pytest.raises(StageError, match="input river_hs .* was built for another game"):
        run_stage("hsd", {"game": GAME}, {"river_hs": leduc.key}, store=store, log=lambda _m: None)
    assert [i.key for i in store.entries() if i.stage == "hsd"] == []
