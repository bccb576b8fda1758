"""ACPC game definitions and card text."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gameforge.engines.poker.acpc import GameDefError, parse_game
from gameforge.engines.poker.cards import (
    BOTTOM,
    CARD_NAMINGS,
    TOP,
    format_cards,
    namings_of,
    parse_card,
    parse_cards,
)
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
        ("GAMEDEF\nlimit\nnumPlayers = 2\nnumRounds = 2\nEND GAMEDEF\n", "blind is missing"),
        (
            "GAMEDEF\nlimit\nnumPlayers = 2\nnumRounds = 2\nblind = 2 1\nnumBoardCards = 0 1\n"
            "END GAMEDEF\n",
            "raiseSize is missing",
        ),
        (
            "GAMEDEF\nlimit\nnumPlayers = 2\nnumRounds = 2\nblind = 2 1\nraiseSize = 1 1\n"
            "numSuits = 2\nnumRanks = 3\nnumHoleCards = 1\nEND GAMEDEF\n",
            "numBoardCards is missing",
        ),
        (
            "GAMEDEF\nlimit\nnumPlayers = 2\nnumRounds = 1\nraiseSize = 1\nnumSuits = 5\n"
            "numRanks = 3\nnumHoleCards = 1\nblind = 1 1\nnumBoardCards = 0\nEND GAMEDEF\n",
            "numSuits must be 1..4",
        ),
        (
            "GAMEDEF\nlimit\nnumPlayers = 2\nnumRounds = 1\nraiseSize = 1\nnumSuits = 1\n"
            "numRanks = 2\nnumHoleCards = 2\nblind = 1 1\nnumBoardCards = 0\nEND GAMEDEF\n",
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
    with pytest.raises(ValueError, match="bad card '5c': the deck has ranks 234, suits cd"):
        parse_card("5c", num_ranks=3, num_suits=2)


def test_short_decks_are_named_from_the_bottom_or_the_top():
    """gameforge names a short deck's lowest ranks and suits, the ACPC dealer (game.c's
    `dealCards`) its highest; the card ids are the same, a 52-card deck is named alike."""
    leduc = load_game("leduc.limit.2p")
    assert (
        leduc.deck_text() == "ranks 234, suits cd" and leduc.deck_text(TOP) == "ranks QKA, suits hs"
    )
    assert leduc.format_cards(range(6)) == "2c2d3c3d4c4d"
    assert leduc.format_cards(range(6), TOP) == "QhQsKhKsAhAs"
    assert leduc.parse_cards("QhAs", TOP) == leduc.parse_cards("2c4d") == [0, 5]
    holdem8 = load_game("holdem8.limit.2p.reverse_blinds")
    assert holdem8.deck_text(TOP) == "ranks 789TJQKA, suits cdhs"
    assert holdem8.parse_cards("7c", TOP) == [0] and holdem8.parse_cards("7c") == [20]
    assert namings_of("7c", 8, 4) == (BOTTOM, TOP) and namings_of("As", 8, 4) == (TOP,)
    assert namings_of("2c", 3, 2) == (BOTTOM,) and namings_of("Jc", 3, 2) == ()
    holdem = load_game("holdem.limit.2p.reverse_blinds")
    assert holdem.format_cards(range(52), TOP) == holdem.format_cards(range(52))
    for game in (leduc, holdem8, holdem):
        for naming in CARD_NAMINGS:
            cards = list(range(game.deck_size))
            assert game.parse_cards(game.format_cards(cards, naming), naming) == cards


def test_a_refused_card_names_the_game_and_its_deck():
    holdem8 = load_game("holdem8.limit.2p.reverse_blinds")
    with pytest.raises(ValueError) as error:
        holdem8.parse_cards("9hJc")
    assert str(error.value) == (
        "bad card 'Jc' for game holdem8.limit.2p.reverse_blinds: this game's deck has ranks "
        "23456789, suits cdhs (in the top naming, Jc is the card named 6c here)"
    )
    with pytest.raises(ValueError, match="ranks 234, suits cd$"):
        load_game("leduc.limit.2p").parse_cards("Jc")
    with pytest.raises(ValueError, match=r"deck \(top naming\) has ranks QKA, suits hs"):
        load_game("leduc.limit.2p").parse_cards("2c", TOP)
    with pytest.raises(
        ValueError, match="odd number of characters .a card is a rank and a suit, like '9s'."
    ):
        holdem8.parse_cards("9")


@pytest.mark.parametrize(
    ("game", "hole", "board"),
    [
        ("holdem.limit.2p.reverse_blinds", "Jc9h", "4d5d9d6cJs"),  # the paper's own hand
        ("holdem8.limit.2p.reverse_blinds", "9c7h", "2d3d7d4c9s"),  # 4 5 6 9 J -> 2 3 4 7 9
        ("holdem6.limit.2p.reverse_blinds", "7c6h", "2d3d6d4c7s"),  # -> 2 3 4 6 7
        ("holdem5.flop.limit.2p", "6c5h", "2d3d5d"),  # -> 2 3 4 5 6
        ("leduc.limit.2p", "4d", "4c"),  # too small: the deck's highest cards
        ("kuhn.limit.2p", "4c", ""),
    ],
)
def test_the_papers_example_hand_in_every_deck(game, hole, board):
    """The README's rule: the paper's J♣9♡ | 4♢5♢9♢6♣J♠ where the deck has it, else its ranks
    moved into the deck in order, else the deck's highest cards."""
    definition = load_game(game)
    cards = definition.example_cards(sum(definition.num_board_cards))
    assert definition.format_cards(cards) == hole + board
    assert definition.example_cards(0) == cards[: definition.num_hole_cards]


@given(st.lists(st.integers(0, 51), min_size=1, max_size=7, unique=True))
def test_card_text_round_trips(cards):
    assert parse_cards(format_cards(cards)) == cards
