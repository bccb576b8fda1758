"""Card ids, parsing and formatting, following the ACPC conventions.

A card is the integer ``rank * num_suits + suit`` of its game's deck: rank 0 is the deck's lowest
rank and suit 0 its first suit. Card text uses the ACPC alphabets, ranks '23456789TJQKA' and
suits 'cdhs' (in that order). A 52-card deck is named alike everywhere; a short deck can be
named in one of two ways (both print a card as ``rankChars[rank] + suitChars[suit]`` of the full
alphabets):

- ``top``: the ACPC dealer (project_acpc_server's ``game.c``, in every published copy found,
  the ``acpc_dealer`` gem's included) deals the highest ranks and suits. Its ``dealCards``
  builds the deck with ``s`` from ``MAX_SUITS - numSuits`` and ``r`` from
  ``MAX_RANKS - numRanks``, so Leduc is Q, K, A of hearts and spades and an 8-rank deck 7 to A
  (a Leduc log line: ``STATE:0:rc/crf:Kh|Ks/Qh:-3|3:...``).
- ``bottom``: the lowest ranks and suits, as gameforge (and OpenSpiel's ``universal_poker``)
  name every deck internally, and as a dealer that built its deck from rank and suit 0 would:
  Leduc is 2, 3, 4 of clubs and diamonds, an 8-rank deck 2 to 9. It is this module's default.

The ids here are the same under both; only the names move up the alphabets.

`example_cards` is the paper's example hand moved into any deck (rule in its docstring).
"""

from __future__ import annotations

from collections.abc import Iterable

RANK_CHARS = "23456789TJQKA"
SUIT_CHARS = "cdhs"
MAX_RANKS = len(RANK_CHARS)
MAX_SUITS = len(SUIT_CHARS)
BOTTOM = "bottom"  # the lowest ranks and suits (gameforge's own naming, OpenSpiel's)
TOP = "top"  # the highest ranks and suits (the ACPC dealer's game.c)
CARD_NAMINGS = (BOTTOM, TOP)


def deck_ranks(num_ranks: int, naming: str = BOTTOM) -> str:
    """The rank characters of a deck of `num_ranks` ranks, lowest first, under a naming."""
    start = MAX_RANKS - num_ranks if naming == TOP else 0
    return RANK_CHARS[start : start + num_ranks]


def deck_suits(num_suits: int, naming: str = BOTTOM) -> str:
    """The suit characters of a deck of `num_suits` suits, in id order, under a naming."""
    start = MAX_SUITS - num_suits if naming == TOP else 0
    return SUIT_CHARS[start : start + num_suits]


def deck_text(num_ranks: int, num_suits: int, naming: str = BOTTOM) -> str:
    """The deck's card names in words, e.g. 'ranks 234, suits cd'."""
    return f"ranks {deck_ranks(num_ranks, naming)}, suits {deck_suits(num_suits, naming)}"


def namings_of(text: str, num_ranks: int = 13, num_suits: int = 4) -> tuple[str, ...]:
    """The namings (of `CARD_NAMINGS`) under which `text` names a card of this deck."""
    if len(text) != 2:
        return ()
    rank, suit = text[0].upper(), text[1].lower()
    return tuple(
        naming
        for naming in CARD_NAMINGS
        if rank in deck_ranks(num_ranks, naming) and suit in deck_suits(num_suits, naming)
    )


def parse_card(
    text: str, num_ranks: int = 13, num_suits: int = 4, naming: str = BOTTOM, game: str = ""
) -> int:
    """Parse one card such as 'As' or 'Td' into its id; raises ValueError on bad input.

    A card the deck lacks is refused with the deck's card names (`game` names it in the message).
    """
    ranks, suits = deck_ranks(num_ranks, naming), deck_suits(num_suits, naming)
    where = f" for game {game}" if game else ""
    if len(text) != 2:
        example = ranks[-1] + suits[-1]
        raise ValueError(f"bad card {text!r}{where}: expected a rank and a suit, like {example!r}")
    rank, suit = ranks.find(text[0].upper()), suits.find(text[1].lower())
    if rank < 0 or suit < 0:
        deck = "this game's deck" if game else "the deck"
        named = f" ({naming} naming)" if naming != BOTTOM else ""
        message = (
            f"bad card {text!r}{where}: {deck}{named} has {deck_text(num_ranks, num_suits, naming)}"
        )
        other = TOP if naming == BOTTOM else BOTTOM
        if other in namings_of(text, num_ranks, num_suits):
            card = parse_card(text, num_ranks, num_suits, other)
            here = format_card(card, num_suits, num_ranks, naming)
            message += f" (in the {other} naming, {text} is the card named {here} here)"
        raise ValueError(message)
    return rank * num_suits + suit


def parse_cards(
    text: str, num_ranks: int = 13, num_suits: int = 4, naming: str = BOTTOM, game: str = ""
) -> list[int]:
    """Parse a run of cards such as 'AsKd' or 'As Kd 2c' into ids; rejects duplicates."""
    compact = "".join(text.split())
    if len(compact) % 2:
        where = f" for game {game}" if game else ""
        example = deck_ranks(num_ranks, naming)[-1] + deck_suits(num_suits, naming)[-1]
        raise ValueError(
            f"bad cards {text!r}{where}: odd number of characters (a card is a rank and a suit, "
            f"like {example!r})"
        )
    cards = [
        parse_card(compact[i : i + 2], num_ranks, num_suits, naming, game)
        for i in range(0, len(compact), 2)
    ]
    if len(set(cards)) != len(cards):
        raise ValueError(f"bad cards {text!r}: a card appears twice")
    return cards


def format_card(card: int, num_suits: int = 4, num_ranks: int = 13, naming: str = BOTTOM) -> str:
    """Format a card id as text, e.g. 51 -> 'As' (`num_ranks` matters for the top naming only)."""
    rank, suit = divmod(int(card), num_suits)
    return deck_ranks(num_ranks, naming)[rank] + deck_suits(num_suits, naming)[suit]


def format_cards(
    cards: Iterable[int], num_suits: int = 4, num_ranks: int = 13, naming: str = BOTTOM
) -> str:
    """Format card ids as one string, e.g. [51, 46] -> 'AsKd'."""
    return "".join(format_card(c, num_suits, num_ranks, naming) for c in cards)


# The paper's example hand (its HSD and OCHS figures): J♣9♡ on the flop 4♢5♢9♢, then 6♣ and J♠.
PAPER_HOLE = "Jc9h"
PAPER_BOARD = "4d5d9d6cJs"


def example_cards(num_ranks: int, num_suits: int, hole_cards: int, board_cards: int) -> list[int]:
    """The paper's hand J♣9♡ | 4♢5♢9♢6♣J♠, cut to `hole_cards` and `board_cards`, in a deck.

    - A deck with all of its cards (four suits, ranks 2 to J at least) uses it as it is.
    - A deck of four suits and 5 to 9 ranks keeps the suits and the order of the hand's ranks
      4 5 6 9 J: each keeps its distance above the 4, which becomes the deck's lowest rank (2);
      where that passes the deck's top, the highest are pulled down, each to just below the one
      above it. 8 ranks (2-9): 9c7h | 2d3d7d4c9s; 6 ranks (2-7): 7c6h | 2d3d6d4c7s; 5 ranks
      (2-6): 6c5h | 2d3d5d4c6s.
    - Other decks (fewer suits or ranks, as Leduc's), or more cards than the paper's hand has:
      the deck's highest cards, highest first (Leduc: 4d | 4c).
    """
    hole, board = parse_cards(PAPER_HOLE), parse_cards(PAPER_BOARD)
    if (
        num_suits < MAX_SUITS
        or hole_cards > len(hole)
        or board_cards > len(board)
        or num_ranks < len({c // MAX_SUITS for c in hole + board})
    ):
        top = num_ranks * num_suits - 1
        return list(range(top, top - hole_cards - board_cards, -1))
    ranks = sorted({c // MAX_SUITS for c in hole + board})
    moved = [r - ranks[0] if ranks[-1] >= num_ranks else r for r in ranks]
    ceiling = num_ranks
    for i in reversed(range(len(moved))):
        moved[i] = min(moved[i], ceiling - 1)
        ceiling = moved[i]
    rank_of = dict(zip(ranks, moved))
    return [
        rank_of[c // MAX_SUITS] * num_suits + c % MAX_SUITS
        for c in hole[:hole_cards] + board[:board_cards]
    ]
