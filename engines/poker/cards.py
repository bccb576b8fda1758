"""Card ids, parsing and formatting, following the ACPC conventions.

A card is the integer ``rank * num_suits + suit``. Rank 0 is the deuce ('2') and rank 12 the ace
('A'); suits are 'c', 'd', 'h', 's' in that order, as in the ACPC dealer. A deck with fewer ranks
uses the lowest ranks of that alphabet (ACPC's Leduc deck is 2, 3, 4 of two suits).
"""

from __future__ import annotations

from collections.abc import Iterable

RANK_CHARS = "23456789TJQKA"
SUIT_CHARS = "cdhs"
MAX_RANKS = len(RANK_CHARS)
MAX_SUITS = len(SUIT_CHARS)


def parse_card(text: str, num_ranks: int = 13, num_suits: int = 4) -> int:
    """Parse one card such as 'As' or 'Td' into its id; raises ValueError on bad input."""
    if len(text) != 2:
        raise ValueError(f"bad card {text!r}: expected a rank and a suit, like 'As'")
    rank = RANK_CHARS.find(text[0].upper())
    suit = SUIT_CHARS.find(text[1].lower())
    if rank < 0 or rank >= num_ranks:
        raise ValueError(f"bad card {text!r}: rank must be one of {RANK_CHARS[:num_ranks]!r}")
    if suit < 0 or suit >= num_suits:
        raise ValueError(f"bad card {text!r}: suit must be one of {SUIT_CHARS[:num_suits]!r}")
    return rank * num_suits + suit


def parse_cards(text: str, num_ranks: int = 13, num_suits: int = 4) -> list[int]:
    """Parse a run of cards such as 'AsKd' or 'As Kd 2c' into ids; rejects duplicates."""
    compact = "".join(text.split())
    if len(compact) % 2:
        raise ValueError(f"bad cards {text!r}: odd number of characters")
    cards = [
        parse_card(compact[i : i + 2], num_ranks, num_suits) for i in range(0, len(compact), 2)
    ]
    if len(set(cards)) != len(cards):
        raise ValueError(f"bad cards {text!r}: a card appears twice")
    return cards


def format_card(card: int, num_suits: int = 4) -> str:
    """Format a card id as text, e.g. 51 -> 'As'."""
    return RANK_CHARS[card // num_suits] + SUIT_CHARS[card % num_suits]


def format_cards(cards: Iterable[int], num_suits: int = 4) -> str:
    """Format card ids as one string, e.g. [51, 46] -> 'AsKd'."""
    return "".join(format_card(int(c), num_suits) for c in cards)
