"""What figures say, checked without artifacts: titles that state only what happened (the
learning rates used, where a default hand comes from, wins that can be fractional), no legend
entry for an empty series, outcome colours apart from the players' colours, uncrowded ticks."""

from __future__ import annotations

import numpy as np
import pytest

from gameforge.flows.plots.blokus import BLOKUS_COLOURS, _lr_text, _outcome_axes
from gameforge.flows.plots.common import pyplot
from gameforge.flows.plots.hearts import _games_axis, _prediction_histograms
from gameforge.flows.plots.poker import hand_origin
from gameforge.stages.poker.params import GameParams


def test_learning_rate_title_says_the_rates_these_steps_used():
    """No "lr 0.001 (then 0.001 from step 0)": one rate where only one was used."""
    same = {"lr": 0.001, "lr_late": 0.001, "lr_drop_step": 0}
    assert _lr_text(same, 0, 99) == "lr 0.001"
    from_start = {"lr": 0.01, "lr_late": 0.001, "lr_drop_step": 0}
    assert _lr_text(from_start, 0, 99) == "lr 0.001"
    later = {"lr": 0.001, "lr_late": 0.0001, "lr_drop_step": 40_000}
    assert _lr_text(later, 0, 99) == "lr 0.001 (0.0001 from global step 40,000: not reached)"
    assert _lr_text(later, 39_950, 40_049) == "lr 0.001, then 0.0001 from global step 40,000"


@pytest.mark.parametrize(
    ("game", "board", "origin"),
    [
        ("holdem.limit.2p.reverse_blinds", 3, " (the paper's hand)"),
        ("holdem6.limit.2p.reverse_blinds", 3,
         " (the paper's Jc9h | 4d5d9d moved into this 6-rank deck)"),
        ("leduc.limit.2p", 1,
         " (the deck's highest cards: the paper's Jc9h | 4d does not fit this deck)"),
    ],
)  # fmt: skip
def test_a_default_hand_says_where_it_comes_from(game, board, origin):
    definition = GameParams(game=game).game_def()
    assert hand_origin(definition, definition.example_cards(board)) == origin


def _figure():  # type: ignore[no-untyped-def]
    plt = pyplot()
    fig, ax = plt.subplots()
    return plt, fig, ax


def test_outcome_bars_wear_none_of_the_players_colours():
    plt, fig, ax = _figure()
    outcome = np.array([[1, 0, 0, -1], [0, -1, 0, -1]])
    _outcome_axes(ax, outcome)
    from matplotlib.colors import to_hex

    faces = {to_hex(patch.get_facecolor()) for patch in ax.patches}
    assert faces and not faces & {c.lower() for c in BLOKUS_COLOURS}
    plt.close(fig)


def test_an_empty_series_has_no_legend_entry():
    """hearts-svr's histograms: no held-out row labelled +1 gives no "+1: none (n=0)" entry."""
    plt, fig, ax = _figure()
    label = np.array([-1, -1, 1, 1, -1])
    trained = np.array([False, False, True, True, True])
    prediction = np.array([-0.5, 0.2, 0.9, 0.4, -0.8])
    _prediction_histograms(ax, label, trained, prediction)
    texts = [text.get_text() for text in ax.get_legend().get_texts()]
    assert not any("n=0" in text for text in texts), texts
    assert any("held out, actual -1" in text for text in texts)
    plt.close(fig)


def test_a_count_axis_top_does_not_print_over_a_power_of_ten():
    """1,356 nodes: ticks 0, 1, 10, 100, 1,356, not 1,000 and 1,356 on top of each other."""
    plt, fig, ax = _figure()
    ax.plot([0, 1, 100, 1000], [0, 13, 300, 1356])
    _games_axis(ax, 1356, "y")
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels == ["0", "1", "10", "100", "1,356"]
    _games_axis(ax, 1000, "x")
    assert [t.get_text() for t in ax.get_xticklabels()] == ["0", "1", "10", "100", "1,000"]
    plt.close(fig)
