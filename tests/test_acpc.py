"""ACPC game definitions and card text."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gameforge.engines.poker.acpc import GameDefError, parse_game
from gameforge.engines.poker.cards import format_cards, parse_card, parse_cards
from gameforge.engines.poker.shipped_games import load_game, shipped_games


def test_shipped_games_parse_and_round_trip():
    names = shipped_games()
    for required in (
        "kuhn.limit.2p",
        "leduc.limit.2p",
        "holdem.limit.2p.reverse_blinds",
        "holdem.nolimit.2p.reverse_blinds",
        "holdem6.limit.2p.reverse_blinds",
    ):
        assert required in names
    for name in names:
        game = load_game(name)
        assert parse_game(game.to_text(), name=name) == game


def test_paper_game_is_the_acpc_reverse_blinds_game():
    game = load_game("holdem.limit.2p.reverse_blinds")
    assert game.betting_type == "limit" and game.num_players == 2
    assert game.blind == (10, 5) and game.raise_size == (10, 10, 20, 20)
    assert game.first_player == (1, 0, 0, 0) and game.max_raises == (3, 4, 4, 4)
    assert game.card_groups() == (2, 3, 1, 1) and game.deck_size == 52
    assert [game.raw_hands(r) for r in range(4)] == [1326, 25989600, 1221511200, 56189515200]
    nolimit = load_game("holdem.nolimit.2p.reverse_blinds")
    assert nolimit.betting_type == "nolimit" and nolimit.stack == (20000, 20000)
    leduc = load_game("leduc.limit.2p")
    assert leduc.card_groups() == (1, 1) and leduc.group_of_round(0) == 0
    assert leduc.group_of_round(1) == 1


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("limit\nnumPlayers = 2\n", "expected GAMEDEF"),
        ("GAMEDEF\nlimit\nnumPlayers = 2\n", "missing GAMEDEF ... END GAMEDEF"),
        ("GAMEDEF\nnumPlayers = 2\nEND GAMEDEF\n", "betting type missing"),
        ("GAMEDEF\nlimit\nnumPlayerz = 2\nEND GAMEDEF\n", "unknown key 'numPlayerz'"),
        ("GAMEDEF\nlimit\nnumPlayers = two\nEND GAMEDEF\n", "needs integers"),
        ("GAMEDEF\nlimit\nnumPlayers 2\nEND GAMEDEF\n", "expected 'key = values'"),
        ("GAMEDEF\nlimit\nnumPlayers = 2\nnumRounds = 2\nEND GAMEDEF\n", "raise_size is missing"),
        (
            "GAMEDEF\nlimit\nnumPlayers = 2\nnumRounds = 1\nraiseSize = 1\nnumSuits = 5\n"
            "numRanks = 3\nnumHoleCards = 1\nEND GAMEDEF\n",
            "numSuits must be 1..4",
        ),
        (
            "GAMEDEF\nlimit\nnumPlayers = 2\nnumRounds = 1\nraiseSize = 1\nnumSuits = 1\n"
            "numRanks = 2\nnumHoleCards = 2\nEND GAMEDEF\n",
            "deals 4 cards from a deck of 2",
        ),
    ],
)
def test_malformed_definitions_name_the_problem(text, message):
    with pytest.raises(GameDefError, match=message):
        parse_game(text, name="x")


def test_card_text():
    assert parse_card("As") == 51 and parse_card("2c") == 0 and parse_card("Td") == 8 * 4 + 1
    assert parse_cards("AsKd 2c") == [51, 11 * 4 + 1, 0]
    assert format_cards([51, 0]) == "As2c"
    with pytest.raises(ValueError, match="bad card"):
        parse_card("Xs")
    with pytest.raises(ValueError, match="appears twice"):
        parse_cards("AsAs")
    with pytest.raises(ValueError, match="rank must be one of '234'"):
        parse_card("5c", num_ranks=3, num_suits=2)


@given(st.lists(st.integers(0, 51), min_size=1, max_size=7, unique=True))
def test_card_text_round_trips(cards):
    assert parse_cards(format_cards(cards)) == cards
