"""The FALCON paper's Hearts action set and its 22 perception values.

Actions are rules that name a card, not cards. A leader chooses among par1..par18, a follower
holding the led suit among ch1..ch5, a follower void in it among ch'1..ch'6 (29 in all, indices
below). An action applies when its condition holds and the card it names is legal. The paper
lists par1-par7, par15 and every follower action; the rest are defined from the techniques it
names (void: shed a short suit; smoke out: lead low spades to force Q♠ out; cash: take a safe
trick with a sure winner; exit: lead a card that someone else must win; spear play: lead Q♠
when it cannot be caught). "Unseen" cards are those neither in the hand nor played: the
opponents' cards, together. "Average" is the unseen count of the suit divided by 3.

===  ======  ==============================================================================
idx  name    card
===  ======  ==============================================================================
0    par1    the lowest spade (smoke out)
1    par2    the strongest spade below Q♠ (smoke out)
2    par3    with 2 or fewer hearts, the strongest heart
3    par4    with fewer clubs than average, the strongest club below the strongest unseen
             club (exit)
4    par5    the same in diamonds
5    par6    the same in spades
6    par7    the strongest heart below the strongest unseen heart (exit)
7    par8    the lowest club (exit)
8    par9    the lowest diamond (exit)
9    par10   the lowest heart (exit)
10   par11   the strongest club if it beats every unseen club and no opponent is known void in
             clubs (cash)
11   par12   the same in diamonds (cash)
12   par13   the strongest card of the shortest non-empty suit other than hearts (void)
13   par14   the lowest card of the longest suit
14   par15   the strongest heart
15   par16   Q♠, when A♠ and K♠ are both gone or in this hand (spear play)
16   par17   A♠, else K♠, once Q♠ has been played (cash)
17   par18   the lowest-ranked card
18   ch1     A♠, else K♠, if held and Q♠ already played
19   ch2     the strongest card below the strongest card of the led suit on the table
20   ch3     the strongest card
21   ch4     the smallest card from 7 to J
22   ch5     the weakest card
23   ch'1    Q♠
24   ch'2    A♠, else K♠
25   ch'3    the strongest heart
26   ch'4    with 2 or fewer diamonds, the strongest diamond
27   ch'5    with 2 or fewer clubs, the strongest club
28   ch'6    the strongest card in the order hearts, spades, diamonds, clubs
===  ======  ==============================================================================

Perception values (all in [0, 1]): 0 trick number / 12; 1 position in the trick / 3; 2-5 own
cards per suit (clubs, diamonds, spades, hearts) / 13; 6-9 unseen cards per suit / 13; 10 Q♠
played; 11 Q♠ held; 12 A♠ and K♠ held / 2; 13 hearts broken; 14 points on the trick / 16;
15 own points / 26; 16 the most points of an opponent / 26; 17 the led suit is spades; 18 rank of
the card winning the trick / 12; 19 own cards of the led suit above it / 13; 20 players still to
play who are known void in the led suit / 3; 21 Q♠ is on the trick. Leading, 17-21 are 0.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from gameforge.engines.hearts.game import (
    ACE_SPADES,
    CLUBS,
    DIAMONDS,
    HEARTS,
    HEARTS_MASK,
    KING_SPADES,
    QS_BIT,
    QUEEN_SPADES,
    SPADES,
    count,
    current_winner_card,
    highest,
    lowest,
    lowest_rank,
    suit_mask,
    trick_points,
)

N_ACTIONS = 29
ACTION_NAMES = (
    *(f"par{i}" for i in range(1, 19)),
    *(f"ch{i}" for i in range(1, 6)),
    *(f"ch'{i}" for i in range(1, 7)),
)
N_PERCEPTION = 22
ALL_CARDS = (1 << 52) - 1


@njit(cache=True, nogil=True)
def role_range(hand: int, trick: np.ndarray, n: int) -> tuple[int, int]:
    """The action indices open to this player: leading, following suit, or void."""
    if n == 0:
        return 0, 18
    if hand & suit_mask(trick[0] // 13):
        return 18, 23
    return 23, 29


@njit(cache=True, nogil=True)
def _below(mask: int, card: int) -> int:
    return mask & ((1 << card) - 1) if card >= 0 else 0


@njit(cache=True, nogil=True)
def _exit_card(hand: int, unseen: int, suit: int, need_short: bool) -> int:
    mine = hand & suit_mask(suit)
    others = unseen & suit_mask(suit)
    if mine == 0 or others == 0:
        return -1
    if need_short and 3 * count(mine) >= count(others):
        return -1
    return highest(_below(mine, highest(others)))


@njit(cache=True, nogil=True)
def _cash_card(hand: int, unseen: int, suit: int, voids: np.ndarray, me: int) -> int:
    mine = hand & suit_mask(suit)
    if mine == 0:
        return -1
    for q in range(4):
        if q != me and (voids[q] >> suit) & 1:
            return -1
    top = highest(mine)
    others = unseen & suit_mask(suit)
    if others and highest(others) > top:
        return -1
    return top


@njit(cache=True, nogil=True)
def action_card(
    action: int,
    hand: int,
    legal: int,
    trick: np.ndarray,
    n: int,
    played: int,
    voids: np.ndarray,
    me: int,
) -> int:
    """The card `action` names for this player now, or -1 if it does not apply.

    `played` holds every card played so far, the current trick's included; `voids[q]` has bit s
    set when seat q is known void in suit s.
    """
    unseen = ALL_CARDS & ~hand & ~played
    spades = hand & suit_mask(SPADES)
    hearts = hand & HEARTS_MASK
    qs_gone = (played >> QUEEN_SPADES) & 1
    c = -1
    if action == 0:
        c = lowest(spades)
    elif action == 1:
        c = highest(_below(spades, QUEEN_SPADES))
    elif action == 2:
        if count(hearts) <= 2:
            c = highest(hearts)
    elif action == 3:
        c = _exit_card(hand, unseen, CLUBS, True)
    elif action == 4:
        c = _exit_card(hand, unseen, DIAMONDS, True)
    elif action == 5:
        c = _exit_card(hand, unseen, SPADES, True)
    elif action == 6:
        c = _exit_card(hand, unseen, HEARTS, False)
    elif action == 7:
        c = lowest(hand & suit_mask(CLUBS))
    elif action == 8:
        c = lowest(hand & suit_mask(DIAMONDS))
    elif action == 9:
        c = lowest(hearts)
    elif action == 10:
        c = _cash_card(hand, unseen, CLUBS, voids, me)
    elif action == 11:
        c = _cash_card(hand, unseen, DIAMONDS, voids, me)
    elif action == 12:
        best = -1
        for s in (CLUBS, DIAMONDS, SPADES):
            k = count(hand & suit_mask(s))
            if k > 0 and (best < 0 or k < count(hand & suit_mask(best))):
                best = s
        if best >= 0:
            c = highest(hand & suit_mask(best))
    elif action == 13:
        best = -1
        for s in range(4):
            k = count(hand & suit_mask(s))
            if k > 0 and (best < 0 or k > count(hand & suit_mask(best))):
                best = s
        if best >= 0:
            c = lowest(hand & suit_mask(best))
    elif action == 14:
        c = highest(hearts)
    elif action == 15:
        if hand & QS_BIT and not (unseen >> ACE_SPADES) & 1 and not (unseen >> KING_SPADES) & 1:
            c = QUEEN_SPADES
    elif action == 16 or action == 18:
        if qs_gone:
            if (hand >> ACE_SPADES) & 1:
                c = ACE_SPADES
            elif (hand >> KING_SPADES) & 1:
                c = KING_SPADES
    elif action == 17:
        c = lowest_rank(hand)
    elif action == 19:
        led = hand & suit_mask(trick[0] // 13)
        c = highest(_below(led, current_winner_card(trick, n)))
    elif action == 20:
        c = highest(hand & suit_mask(trick[0] // 13))
    elif action == 21:
        led = hand & suit_mask(trick[0] // 13)
        window = 0
        for r in range(5, 10):  # ranks 7..J
            window |= 1 << ((trick[0] // 13) * 13 + r)
        c = lowest(led & window)
    elif action == 22:
        c = lowest(hand & suit_mask(trick[0] // 13))
    elif action == 23:
        if hand & QS_BIT:
            c = QUEEN_SPADES
    elif action == 24:
        if (hand >> ACE_SPADES) & 1:
            c = ACE_SPADES
        elif (hand >> KING_SPADES) & 1:
            c = KING_SPADES
    elif action == 25:
        c = highest(hearts)
    elif action == 26:
        d = hand & suit_mask(DIAMONDS)
        if count(d) <= 2:
            c = highest(d)
    elif action == 27:
        k = hand & suit_mask(CLUBS)
        if count(k) <= 2:
            c = highest(k)
    elif action == 28:
        for s in (HEARTS, SPADES, DIAMONDS, CLUBS):
            m = hand & suit_mask(s)
            if m:
                c = highest(m)
                break
    if c < 0 or not (legal >> c) & 1:
        return -1
    return c


@njit(cache=True, nogil=True)
def valid_actions(
    hand: int,
    legal: int,
    trick: np.ndarray,
    n: int,
    played: int,
    voids: np.ndarray,
    me: int,
    cards: np.ndarray,
) -> int:
    """Fill cards[a] with each action's card (-1 when it does not apply); returns how many apply.

    When no action of the role applies (a forced card no rule names), every legal card is
    still playable: the agents then fall back to `fallback_card`.
    """
    cards[:] = -1
    lo, hi = role_range(hand, trick, n)
    k = 0
    for a in range(lo, hi):
        cards[a] = action_card(a, hand, legal, trick, n, played, voids, me)
        if cards[a] >= 0:
            k += 1
    return k


@njit(cache=True, nogil=True)
def fallback_card(legal: int) -> int:
    """The card played when no action applies: the lowest legal card by rank."""
    return lowest_rank(legal)


@njit(cache=True, nogil=True)
def perception(
    out: np.ndarray,
    hand: int,
    trick: np.ndarray,
    n: int,
    trick_no: int,
    played: int,
    broken: bool,
    taken: np.ndarray,
    voids: np.ndarray,
    me: int,
    leader: int,
) -> None:
    """The 22 perception values (module docstring) into `out`."""
    unseen = ALL_CARDS & ~hand & ~played
    out[0] = trick_no / 12.0
    out[1] = n / 3.0
    for s in range(4):
        out[2 + s] = count(hand & suit_mask(s)) / 13.0
        out[6 + s] = count(unseen & suit_mask(s)) / 13.0
    out[10] = float((played >> QUEEN_SPADES) & 1)
    out[11] = float((hand >> QUEEN_SPADES) & 1)
    out[12] = (((hand >> ACE_SPADES) & 1) + ((hand >> KING_SPADES) & 1)) / 2.0
    out[13] = 1.0 if broken else 0.0
    out[14] = min(trick_points(trick, n), 16) / 16.0
    out[15] = taken[me] / 26.0
    most = 0
    for q in range(4):
        if q != me and taken[q] > most:
            most = taken[q]
    out[16] = most / 26.0
    for i in range(17, 22):
        out[i] = 0.0
    if n > 0:
        led = trick[0] // 13
        win = current_winner_card(trick, n)
        out[17] = 1.0 if led == SPADES else 0.0
        out[18] = (win % 13) / 12.0
        above = hand & suit_mask(led) & ~((1 << (win + 1)) - 1)
        out[19] = count(above) / 13.0
        void_after = 0
        for i in range(n + 1, 4):
            q = (leader + i) % 4
            if (voids[q] >> led) & 1:
                void_after += 1
        out[20] = void_after / 3.0
        for i in range(n):
            if trick[i] == QUEEN_SPADES:
                out[21] = 1.0


@njit(cache=True, nogil=True)
def card_features(out: np.ndarray, card: int) -> None:
    """The SVR's 5 card values: suit one-hot (clubs, diamonds, spades, hearts), rank / 12."""
    for s in range(4):
        out[s] = 1.0 if card // 13 == s else 0.0
    out[4] = (card % 13) / 12.0
