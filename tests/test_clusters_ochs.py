"""Opponent clusters (EMD k-means of first-round HSDs) and OCHS, against brute force."""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pytest

from gameforge.engines.poker.evaluator import evaluate, get_tables
from gameforge.engines.poker.hand_strength import board_hs_counts
from gameforge.engines.poker.ochs import board_ochs
from gameforge.engines.poker.shipped_games import load_game
from gameforge.stages.poker.hsd import round_indexer
from gameforge.stages.poker.river_hs import canonical_boards, hand_indexer
from gameforge.stages.runner import run_stage
from tests.poker_helpers import SHORT, quiet


def brute_force_ochs(row, game, cluster_of_hole, k):
    """Per-cluster HS of one (hole, board) hand by direct comparison."""
    board = row[2:]
    rest = [c for c in range(game.deck_size) if c not in set(row)]
    mine = evaluate(np.array([row], np.int8), game.num_ranks, game.num_suits)[0]
    out = np.full(k, 0.5)
    for c in range(k):
        opp = [o for o in combinations(rest, 2) if cluster_of_hole[o] == c]
        if opp:
            v = evaluate(
                np.array([list(o) + board for o in opp], np.int8), game.num_ranks, game.num_suits
            )
            out[c] = ((v < mine).sum() + 0.5 * (v == mine).sum()) / len(opp)
    return out


def test_ochs_kernel_with_one_cluster_is_hs():
    game = load_game(SHORT)
    tables = get_tables(6, 4, 7)
    boards = canonical_boards(game, 0, 200)
    ochs = board_ochs(boards, 24, 2, np.zeros(24 * 24, np.int64), 1, tables)
    counts = board_hs_counts(boards, 24, 2, tables)
    np.testing.assert_array_equal(ochs[:, :, 0], counts / 272)


@pytest.fixture(scope="module")
def short_chain(short_deck):
    """Five opponent clusters of the short deck and the OCHS against them."""
    ochs = short_deck.ochs(5)
    return short_deck.store, short_deck.store.open(ochs.inputs["opponent_clusters"]), ochs


def test_ochs_stage_matches_brute_force(short_chain):
    _, clusters, ochs = short_chain
    game = load_game(SHORT)
    labels = clusters["cluster"][:]
    pre = round_indexer(game, 0)
    cluster_of_hole = {
        pair: int(labels[pre.index(np.array([pair], np.int8), 0)[0]])
        for pair in combinations(range(24), 2)
    }
    values = ochs["ochs"][:]
    indexer = hand_indexer(game)
    assert values.shape == (indexer.size(1), 5)
    rng = np.random.default_rng(5)
    picks = rng.choice(values.shape[0], size=150, replace=False)
    hands = indexer.unindex(picks.astype(np.int64), 1)
    for idx, row in zip(picks.tolist(), hands.tolist()):
        expected = brute_force_ochs(row, game, cluster_of_hole, 5)
        np.testing.assert_allclose(values[idx] / 65535, expected, atol=0.5 / 65535 + 1e-12)


def test_clusters_are_ordered_deterministic_and_complete(short_chain):
    store, clusters, _ = short_chain
    labels = clusters["cluster"][:]
    strength = clusters["expected_hs"][:]
    assert sorted(set(labels.tolist())) == list(range(5))
    means = [strength[labels == c].mean() for c in range(5)]
    assert means == sorted(means)
    params = {"game": SHORT, "k": 5, "seed": 0}
    again = run_stage("opponent-clusters", params, clusters.inputs, store=store, force=True,
                      log=quiet)  # fmt: skip
    np.testing.assert_array_equal(store.open(again.key)["cluster"][:], labels)


@pytest.mark.slow  # the preflop HSD of full Hold'em takes 30-45 s; CI runs it with -m slow
def test_preflop_clusters_on_full_holdem(holdem_store, holdem_preflop_hsd):
    """The paper's setting: 169 hands, k = 8; aces strongest, 72o-like trash weakest."""
    result = run_stage(
        "opponent-clusters",
        {"game": "holdem.limit.2p.reverse_blinds", "k": 8},
        {"hsd": holdem_preflop_hsd.key},
        store=holdem_store,
        log=quiet,
    )
    artifact = holdem_store.open(result.key)
    members = artifact.meta["summary"]["members"]
    assert sum(len(v) for v in members.values()) == 169
    assert len(members) == 8 and all(members.values())
    assert "AA" in members["7"] and "72o" in members["0"] and "32o" in members["0"]
    hsd = holdem_preflop_hsd["hsd_round0"][:]
    assert hsd.shape == (169, 50) and (hsd.sum(axis=1) == 2_118_760).all()


def test_plots_of_every_feature_stage(short_chain, tmp_path):
    from gameforge.flows.plots import plot
    from gameforge.stages.base import StageError

    store, clusters, ochs = short_chain
    hsd = store.open(clusters.inputs["hsd"])
    river = store.open(hsd.inputs["river_hs"])
    cases = [
        (river, None, "HS histogram of 324,552 hands"),
        (hsd, "7c6h/2d3d6d", "HSD of 7c6h | 2d3d6d"),
        (clusters, None, "5 clusters of 36 hands"),
        (ochs, "7c6h2d3d6d4c7s", "OCHS of 7c6h | 2d3d6d4c7s: "),
    ]
    for artifact, hand, description in cases:
        out = tmp_path / f"{artifact.stage}.png"
        assert plot(artifact, out, hand).startswith(description)
        assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(ValueError, match="bad card"):
        plot(hsd, tmp_path / "x.png", "7c6h/2d3dXX")
    with pytest.raises(StageError, match="no histograms for hands with 2 board cards"):
        plot(hsd, tmp_path / "x.png", "7c6h/2d3d")


def test_hand_plots_default_to_the_papers_hand_moved_into_the_deck(short_chain, tmp_path):
    """Without --hand, HSD and OCHS show the paper's Jc9h/4d5d9d6cJs moved into the 6-rank deck
    (2-7); a card the deck lacks is refused with the deck's cards."""
    from gameforge.flows.plots import plot

    store, clusters, ochs = short_chain
    hsd = store.open(clusters.inputs["hsd"])
    assert plot(hsd, tmp_path / "hsd.png", None).startswith("HSD of 7c6h | 2d3d6d")
    assert plot(ochs, tmp_path / "ochs.png", None).startswith("OCHS of 7c6h | 2d3d6d4c7s: ")
    with pytest.raises(ValueError, match="bad card 'Jc' for game holdem6.limit.2p.reverse_blinds: "
                       "this game's deck has ranks 234567, suits cdhs"):  # fmt: skip
        plot(hsd, tmp_path / "x.png", "Jc9h/4d5d9d")
