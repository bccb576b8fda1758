"""Hand histories of a match played at an ACPC dealer: the hands one player played, their
canonical text and arrays, and the plain and AIVAT estimates of what the player won.

A `PlayedHand` is one hand as the player saw it at its end (the dealer's last MATCHSTATE of the
hand): the dealer's hand number, the player's position in the hand (ACPC's viewing player,
`seat` in `engines.poker.aivat`), the betting, each position's hole cards (the other position's
empty where the dealer did not show them: it shows them only at a showdown; its log of the
match has them all), the board dealt and the chips the player won.

`history_text` writes hands as one canonical text, a line per hand in the order played, cards
in this engine's naming (`bottom`), so that its SHA-256 (`history_digest`) names the history
whatever the dealer's card names; `parse_history` reads it back and refuses any other text.
`history_arrays` gives the arrays a stored history keeps. `plain_estimate` and `aivat_chips`
estimate the player's winnings: the chips won, and AIVAT's value of each hand with the player's
own strategy as the known policy, which needs both hole cards of every hand.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from gameforge.engines.poker.acpc import GameDef
from gameforge.engines.poker.aivat import (
    Cards,
    Hand,
    Imaginary,
    LimitBetting,
    aivat,
    board_groups,
    interval,
    parse_betting,
    showdown_payoff,
)
from gameforge.engines.poker.aivat_values import self_reference_values
from gameforge.engines.poker.betting import DECISION, FOLD_END
from gameforge.engines.poker.cards import BOTTOM
from gameforge.engines.poker.match import Agent

UNSEEN = -1  # a card id in the arrays where the card was not seen (or not dealt)


@dataclass(frozen=True)
class PlayedHand:
    """One hand as one player saw it at its end."""

    hand: int  # the dealer's hand number
    seat: int  # the player's position in the hand (0 or 1)
    betting: str  # ACPC betting, rounds split by '/'
    hole: tuple[Cards, Cards]  # per position; () where not seen
    board: Cards  # the board cards dealt, in deal order
    chips: int  # what the player won

    @property
    def full(self) -> bool:
        """Whether both positions' hole cards are known."""
        return all(self.hole)


def chips_won(
    betting: LimitBetting, node: int, hole: Sequence[Cards], board: Cards, seat: int
) -> int:
    """The chips `seat` wins at a terminal node of the betting tree; ValueError when a showdown
    lacks a hole or board card it needs."""
    tree, game = betting.tree, betting.game
    if tree.kind[node] == DECISION:
        raise ValueError(f"betting {tree.history[node]!r} does not end the hand")
    if tree.kind[node] != FOLD_END:
        missing = [p for p in (0, 1) if len(hole[p]) != game.num_hole_cards]
        if missing:
            raise ValueError(f"a showdown without position {missing[0]}'s hole cards")
        need = game.board_cards_through(game.num_rounds - 1)
        if len(board) != need:
            raise ValueError(f"a showdown with {len(board)} board cards; the game deals {need}")
    pay = showdown_payoff(betting, node, (tuple(hole[0]), tuple(hole[1])), tuple(board))
    return int(pay if seat == 0 else -pay)


# ------------------------------------------------------------------------------- text


def cards_text(game: GameDef, hole: Sequence[Cards], board: Cards) -> str:
    """`hole0|hole1/board of a round/...` in this engine's naming, the board split by round."""
    text = "|".join(game.format_cards(h, BOTTOM) for h in hole)
    start = 0
    for _, n in board_groups(game):
        if start >= len(board):
            break
        text += "/" + game.format_cards(board[start : start + n], BOTTOM)
        start += n
    return text


def hand_line(game: GameDef, hand: PlayedHand) -> str:
    """One hand's canonical line: `hand:seat:betting:cards:chips`."""
    cards = cards_text(game, hand.hole, hand.board)
    return f"{hand.hand}:{hand.seat}:{hand.betting}:{cards}:{hand.chips}"


def history_text(game: GameDef, hands: Sequence[PlayedHand]) -> str:
    """The hands' canonical text: a line per hand, in the order played."""
    return "".join(hand_line(game, h) + "\n" for h in hands)


def history_digest(text: str | bytes) -> str:
    """The SHA-256 (hex) of a history's canonical text (or of a file's bytes)."""
    return hashlib.sha256(text if isinstance(text, bytes) else text.encode("ascii")).hexdigest()


def parse_history(game: GameDef, text: str) -> list[PlayedHand]:
    """The hands of a canonical history text; ValueError, naming the line, for anything else."""
    hands: list[PlayedHand] = []
    seen: set[int] = set()
    lines = text.split("\n")
    if lines[-1] != "":
        raise ValueError("a history's text ends with a newline")
    for number, line in enumerate(lines[:-1], 1):
        try:
            hand = _parse_line(game, line)
        except ValueError as exc:
            raise ValueError(f"history line {number}: {exc}") from None
        if hand.hand in seen:
            raise ValueError(f"history line {number}: hand {hand.hand} appears twice")
        seen.add(hand.hand)
        hands.append(hand)
    return hands


def _parse_line(game: GameDef, line: str) -> PlayedHand:
    parts = line.split(":")
    if len(parts) != 5:
        raise ValueError(f"{line[:80]!r} is not hand:seat:betting:cards:chips")
    number, seat, betting, cards, chips = parts
    if any(ch not in "fcr/" for ch in betting):
        raise ValueError(f"betting {betting!r} uses other actions than f, c, r and /")
    groups = cards.split("/")
    holes = groups[0].split("|")
    if len(holes) != 2:
        raise ValueError(f"cards {cards!r} need one '|' between the hole cards")
    hole = (tuple(game.parse_cards(holes[0])), tuple(game.parse_cards(holes[1])))
    board = tuple(c for g in groups[1:] for c in game.parse_cards(g))
    hand = PlayedHand(int(number), int(seat), betting, hole, board, int(chips))
    if hand.seat not in (0, 1) or hand_line(game, hand) != line:
        raise ValueError(f"{line[:80]!r} is not in canonical form")
    return hand


# ------------------------------------------------------------------------------- arrays


def history_arrays(game: GameDef, hands: Sequence[PlayedHand]) -> dict[str, np.ndarray]:
    """The arrays of a stored history: `hand`, `seat`, `betting` (ASCII, zero-padded), `hole`
    (hand x position x card) and `board` (card ids; -1 where not seen or not dealt), `chips`."""
    n = len(hands)
    width = max([len(h.betting) for h in hands] + [1])
    betting = np.zeros((n, width), dtype=np.uint8)
    hole = np.full((n, 2, game.num_hole_cards), UNSEEN, dtype=np.int8)
    board = np.full((n, max(sum(game.num_board_cards), 1)), UNSEEN, dtype=np.int8)
    for i, h in enumerate(hands):
        betting[i, : len(h.betting)] = np.frombuffer(h.betting.encode("ascii"), dtype=np.uint8)
        for p in (0, 1):
            hole[i, p, : len(h.hole[p])] = h.hole[p]
        board[i, : len(h.board)] = h.board
    return {
        "hand": np.array([h.hand for h in hands], dtype=np.int64),
        "seat": np.array([h.seat for h in hands], dtype=np.int8),
        "betting": betting,
        "hole": hole,
        "board": board,
        "chips": np.array([h.chips for h in hands], dtype=np.int64),
    }


# ------------------------------------------------------------------------------- estimates


def mbb_scale(game: GameDef) -> float:
    """mbb/g per chip: a thousand per big blind."""
    return 1000.0 / float(max(game.blind))


def plain_estimate(game: GameDef, chips: np.ndarray) -> tuple[float, float]:
    """Mean chips won and its 95% half-width (normal approximation), in mbb/g."""
    return interval(np.asarray(chips, dtype=np.float64) * mbb_scale(game))


def aivat_chips(
    game: GameDef,
    agent: Agent,
    hands: Sequence[PlayedHand],
    fit_hands: int = 2000,
    seed: int = 0,
    imaginary_holes: int = 0,
) -> np.ndarray:
    """AIVAT's value (chips) of each hand for the player who played `agent` (a limit game;
    both hole cards of every hand known). ValueError when a hand's actions are ones the
    strategy never takes (it was not what the player played) or its chips are not the cards'.

    The baseline is `self_reference_values`, the league's: the strategy itself as the
    reference opponent (nothing of the opponent, whom the player does not know), fitted on
    `fit_hands` hands against it, dealt from `seed`, where the game needs it; with
    `imaginary_holes`, the imaginary observations over that many drawn holes a hand."""
    betting = LimitBetting(game)
    known, values = self_reference_values(betting, agent, fit_hands, seed)
    played = [Hand(h.hole, h.board, parse_betting(game, h.betting)) for h in hands]
    seats = [h.seat for h in hands]
    imaginary = Imaginary(imaginary_holes, seed) if imaginary_holes else False
    found = aivat(betting, played, seats, known, values, imaginary)
    chips = np.array([h.chips for h in hands], dtype=np.float64)
    wrong = np.flatnonzero(np.abs(found.plain - chips) > 1e-6)  # the walk divides by a reach
    if wrong.size:
        h = hands[int(wrong[0])]
        raise ValueError(
            f"hand {h.hand}: its cards and betting give {found.plain[wrong[0]]:g} chips, "
            f"the record {h.chips}"
        )
    return found.corrected
