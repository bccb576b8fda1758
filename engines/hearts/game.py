"""Four-player Hearts in numba: rules, the rule-based (gnome-hearts) agent, whole games.

Cards are 0..51, `suit * 13 + rank`, suits clubs, diamonds, spades, hearts (0..3) and ranks
2..A (0..12): 2♣ = 0, Q♠ = 36. A hand is an int64 bit mask of its cards. Seats 0..3 play
clockwise; a trick is won by the highest card of the led suit; each heart is 1 point and Q♠ 13.

Rule options (`Options`, as an int array for the kernels), defaults in brackets:

- `passing` [off, as in the paper]: 0 off, 1 left, 2 right, 3 across, 4 cycling left, right,
  across, hold by game number. Every player passes its three most dangerous cards: Q♠, A♠, K♠,
  then its highest hearts, then its highest other cards.
- `moon` [off, as in the paper]: a player taking all 26 points scores 0 and the others 26 each.
- `two_clubs_leads` [on]: the holder of 2♣ leads it to the first trick (off: seat 0 leads any
  card).
- `must_break_hearts` [on]: hearts cannot be led until a heart (or Q♠) has been played, unless
  the leader holds only hearts.
- `no_points_first_trick` [on]: no heart or Q♠ on the first trick (led or followed) unless the
  hand holds nothing else.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from gameforge.engines.common.rng import stream_seed, uniform

CLUBS, DIAMONDS, SPADES, HEARTS = 0, 1, 2, 3
SUIT_CHARS = "cdsh"
RANK_CHARS = "23456789TJQKA"
QUEEN_SPADES = SPADES * 13 + 10
KING_SPADES = SPADES * 13 + 11
ACE_SPADES = SPADES * 13 + 12
TWO_CLUBS = 0
FULL_SUIT = (1 << 13) - 1
HEARTS_MASK = FULL_SUIT << (13 * HEARTS)
QS_BIT = 1 << QUEEN_SPADES
POINT_CARDS = HEARTS_MASK | QS_BIT

PASSING, MOON, TWO_CLUBS_LEADS, MUST_BREAK, NO_POINTS_FIRST = range(5)


@dataclass(frozen=True)
class Options:
    """Rule options (see the module docstring); the defaults are the paper's game."""

    passing: int = 0
    moon: bool = False
    two_clubs_leads: bool = True
    must_break_hearts: bool = True
    no_points_first_trick: bool = True

    def array(self) -> np.ndarray:
        """The options as the int64 array the kernels take."""
        return np.array(
            [
                self.passing,
                int(self.moon),
                int(self.two_clubs_leads),
                int(self.must_break_hearts),
                int(self.no_points_first_trick),
            ],
            dtype=np.int64,
        )


def card_name(card: int) -> str:
    """`Qs`, `2c`, ..."""
    return RANK_CHARS[card % 13] + SUIT_CHARS[card // 13]


def parse_hand(text: str) -> int:
    """Bit mask of cards written like `Qs 2c Ah`."""
    mask = 0
    for token in text.split():
        mask |= 1 << (SUIT_CHARS.index(token[1]) * 13 + RANK_CHARS.index(token[0]))
    return mask


# ---------------------------------------------------------------------------------------------
# Bit helpers.


@njit(cache=True, nogil=True, inline="always")
def suit_mask(suit: int) -> int:
    """All 13 cards of a suit."""
    return FULL_SUIT << (13 * suit)


@njit(cache=True, nogil=True)
def lowest(mask: int) -> int:
    """Lowest card id in `mask` (-1 if empty)."""
    if mask == 0:
        return -1
    for c in range(52):
        if (mask >> c) & 1:
            return c
    return -1


@njit(cache=True, nogil=True)
def highest(mask: int) -> int:
    """Highest card id in `mask` (-1 if empty)."""
    if mask == 0:
        return -1
    for c in range(51, -1, -1):
        if (mask >> c) & 1:
            return c
    return -1


@njit(cache=True, nogil=True)
def count(mask: int) -> int:
    """Number of cards in `mask`."""
    n = 0
    while mask:
        mask &= mask - 1
        n += 1
    return n


@njit(cache=True, nogil=True, inline="always")
def _extreme_rank(mask: int, high: bool) -> int:
    best = -1
    for s in range(4):
        c = highest(mask & suit_mask(s)) if high else lowest(mask & suit_mask(s))
        if c >= 0 and (best < 0 or (c % 13 > best % 13 if high else c % 13 < best % 13)):
            best = c
    return best


@njit(cache=True, nogil=True)
def lowest_rank(mask: int) -> int:
    """A card of the lowest rank in `mask`, clubs first among equal ranks (-1 if empty)."""
    return _extreme_rank(mask, False)


@njit(cache=True, nogil=True)
def highest_rank(mask: int) -> int:
    """A card of the highest rank in `mask`, clubs first among equal ranks (-1 if empty)."""
    return _extreme_rank(mask, True)


@njit(cache=True, nogil=True)
def card_points(card: int) -> int:
    """1 for a heart, 13 for Q♠, else 0."""
    if card == QUEEN_SPADES:
        return 13
    return 1 if card // 13 == HEARTS else 0


# ---------------------------------------------------------------------------------------------
# Rules.


@njit(cache=True, nogil=True)
def legal_mask(
    hand: int, trick: np.ndarray, n_in_trick: int, trick_no: int, broken: bool, opts: np.ndarray
) -> int:
    """Cards of `hand` that may be played now (`trick[0]` is the led card)."""
    if n_in_trick == 0:
        if trick_no == 0 and opts[TWO_CLUBS_LEADS] and (hand >> TWO_CLUBS) & 1:
            return 1 << TWO_CLUBS
        if trick_no == 0 and opts[NO_POINTS_FIRST]:
            rest = hand & ~POINT_CARDS
            if rest:
                return rest
        if opts[MUST_BREAK] and not broken:
            rest = hand & ~HEARTS_MASK
            if rest:
                return rest
        return hand
    same = hand & suit_mask(trick[0] // 13)
    if same:
        return same
    if trick_no == 0 and opts[NO_POINTS_FIRST]:
        rest = hand & ~POINT_CARDS
        if rest:
            return rest
    return hand


@njit(cache=True, nogil=True)
def trick_winner(trick: np.ndarray, leader: int) -> int:
    """Seat that wins a complete trick led by `leader`."""
    suit = trick[0] // 13
    best = 0
    for i in range(1, 4):
        if trick[i] // 13 == suit and trick[i] > trick[best]:
            best = i
    return (leader + best) % 4


@njit(cache=True, nogil=True)
def trick_points(trick: np.ndarray, n: int) -> int:
    """Points among the first n cards of a trick."""
    total = 0
    for i in range(n):
        total += card_points(trick[i])
    return total


@njit(cache=True, nogil=True)
def current_winner_card(trick: np.ndarray, n: int) -> int:
    """The card now winning a partial trick (-1 if empty)."""
    if n == 0:
        return -1
    suit = trick[0] // 13
    best = trick[0]
    for i in range(1, n):
        if trick[i] // 13 == suit and trick[i] > best:
            best = trick[i]
    return best


# ---------------------------------------------------------------------------------------------
# The rule-based agent (after gnome-hearts' stock AI).


@njit(cache=True, nogil=True)
def rule_based_card(legal: int, trick: np.ndarray, n: int, played: int) -> int:
    """gnome-hearts' stock play.

    - Leading: the lowest card (by rank), avoiding Q♠ if anything else is legal.
    - Following suit: around Q♠ in spades: dump Q♠ under A♠/K♠ already on the trick; while
      Q♠ is out and not held, keep A♠/K♠ back (play the highest spade below Q♠). Otherwise on a
      pointless trick play high (the highest card, Q♠ only as the last resort); with points on
      the trick play the highest card that does not win, or, if every card wins, the highest.
    - Void in the led suit: dump Q♠, then A♠/K♠, then the highest heart, then the highest card.
    """
    if n == 0:
        safe = legal & ~QS_BIT
        return lowest_rank(safe if safe else legal)
    led = trick[0] // 13
    same = legal & suit_mask(led)
    winner = current_winner_card(trick, n)
    if same:
        if led == SPADES:
            if (same >> QUEEN_SPADES) & 1 and winner > QUEEN_SPADES:
                return QUEEN_SPADES
            if not (played >> QUEEN_SPADES) & 1 and not (same >> QUEEN_SPADES) & 1:
                below = same & ((1 << QUEEN_SPADES) - 1)
                if below:
                    if trick_points(trick, n) == 0:
                        return highest(below)
                    under = below & ((1 << winner) - 1) if winner >= 0 else 0
                    return highest(under) if under else highest(below)
        if trick_points(trick, n) == 0:
            safe = same & ~QS_BIT
            return highest(safe if safe else same)
        under = same & ((1 << winner) - 1)
        if under:
            return highest(under)
        return highest(same)
    if (legal >> QUEEN_SPADES) & 1:
        return QUEEN_SPADES
    if (legal >> ACE_SPADES) & 1:
        return ACE_SPADES
    if (legal >> KING_SPADES) & 1:
        return KING_SPADES
    hearts = legal & HEARTS_MASK
    if hearts:
        return highest(hearts)
    return highest_rank(legal)


@njit(cache=True, nogil=True)
def random_card(legal: int, rng: np.ndarray) -> int:
    """A uniformly random legal card."""
    k = int(uniform(rng) * count(legal))
    for c in range(52):
        if (legal >> c) & 1:
            if k == 0:
                return c
            k -= 1
    return -1


@njit(cache=True, nogil=True)
def pass_cards(hand: int) -> int:
    """The three most dangerous cards: Q♠, A♠, K♠, then the highest hearts, then highest."""
    out = 0
    for c in (QUEEN_SPADES, ACE_SPADES, KING_SPADES):
        if (hand >> c) & 1 and count(out) < 3:
            out |= 1 << c
    while count(out) < 3:
        rest = hand & ~out
        hearts = rest & HEARTS_MASK
        out |= 1 << (highest(hearts) if hearts else highest_rank(rest))
    return out


# ---------------------------------------------------------------------------------------------
# Deals and games.


@njit(cache=True, nogil=True)
def deal(seed: int, game: int, hands: np.ndarray) -> None:
    """Deal game `game` of a seeded sequence: 13 cards to each seat (counter-based RNG)."""
    rng = np.zeros(1, dtype=np.uint64)
    rng[0] = stream_seed(seed, game)
    deck = np.arange(52)
    for i in range(51):
        j = i + int(uniform(rng) * (52 - i))
        tmp = deck[i]
        deck[i] = deck[j]
        deck[j] = tmp
    for p in range(4):
        hands[p] = 0
        for k in range(13):
            hands[p] |= 1 << deck[13 * p + k]


@njit(cache=True, nogil=True)
def apply_passing(hands: np.ndarray, direction: int) -> None:
    """Every seat passes `pass_cards` left (1), right (2) or across (3)."""
    if direction == 0:
        return
    shift = 1 if direction == 1 else (3 if direction == 2 else 2)
    given = np.zeros(4, dtype=np.int64)
    for p in range(4):
        given[p] = pass_cards(hands[p])
    for p in range(4):
        hands[p] &= ~given[p]
    for p in range(4):
        hands[(p + shift) % 4] |= given[p]


@njit(cache=True, nogil=True)
def first_leader(hands: np.ndarray, opts: np.ndarray) -> int:
    """Seat holding 2♣ (or seat 0 when 2♣ does not lead)."""
    if opts[TWO_CLUBS_LEADS]:
        for p in range(4):
            if (hands[p] >> TWO_CLUBS) & 1:
                return p
    return 0


@njit(cache=True, nogil=True)
def final_points(taken: np.ndarray, opts: np.ndarray, out: np.ndarray) -> None:
    """Points per seat after the moon rule."""
    for p in range(4):
        out[p] = taken[p]
    if opts[MOON]:
        for p in range(4):
            if taken[p] == 26:
                for q in range(4):
                    out[q] = 0 if q == p else 26


RANDOM, RULE_BASED = 0, 1  # agent kinds; gameforge.engines.hearts.agents adds the others
