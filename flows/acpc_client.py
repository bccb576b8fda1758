"""Play at an ACPC dealer: the ACPC protocol over TCP, a solved strategy choosing the actions.

Protocol (ACPC server documentation, version 2.0.0): the client sends `VERSION:2.0.0`; the
dealer then sends `MATCHSTATE:<position>:<hand>:<betting>:<cards>` after every change; when the
betting leaves this position to act, the client answers with that same line plus `:<action>`
(`f`, `c` or `r` in limit games). Betting rounds are split by `/`; cards are
`<hole of position 0>|<hole of position 1>/<board of round 1>/...`, hidden hole cards empty.
Lines starting with `#` or `;` are comments.

Card names: two ACPC dealers name a short deck's cards differently (`gameforge.engines.poker.cards`:
`bottom`, the released University of Alberta dealer; `top`, the fork behind the `acpc_dealer`
gem). `CardNames` reads the dealer's names into this engine's card ids under one of them, or
finds which one the dealer uses (`auto`). The client never sends card text of its own: its answer
repeats the dealer's line verbatim, in the dealer's names, and appends the action.
"""

from __future__ import annotations

import re
import socket
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from gameforge.engines.poker.acpc import GameDef
from gameforge.engines.poker.betting import ACTIONS, DECISION, BettingTree
from gameforge.engines.poker.cards import (
    BOTTOM,
    CARD_NAMINGS,
    MAX_RANKS,
    MAX_SUITS,
    TOP,
    namings_of,
)

VERSION = "VERSION:2.0.0"
AUTO = "auto"
CARD_NAME_CHOICES = (AUTO, *CARD_NAMINGS)
DEALERS = {
    BOTTOM: "the University of Alberta dealer as released",
    TOP: "the acpc_dealer gem's fork by dmorrill10",
}


_NUMBER = re.compile(r"[0-9]{1,18}")  # ASCII digits only: str.isdigit() also takes '²'


class ProtocolError(ValueError):
    """A line from the dealer that does not follow the ACPC protocol."""


@dataclass(frozen=True)
class MatchState:
    """One parsed MATCHSTATE line."""

    line: str
    position: int
    hand: int
    betting: str
    hole: list[list[int]]  # per position; empty where hidden
    board: list[int]


def parse_match_state(line: str, game: GameDef, naming: str = BOTTOM) -> MatchState:
    """Parse `MATCHSTATE:pos:hand:betting:cards` with the cards named under `naming` into this
    engine's card ids; raises ProtocolError if it is malformed."""
    parts = line.split(":")
    if len(parts) != 5 or parts[0] != "MATCHSTATE":
        raise ProtocolError(
            f"malformed dealer line {line!r}: expected MATCHSTATE:pos:hand:betting:cards"
        )
    _, pos, hand, betting, cards = parts
    if not (_NUMBER.fullmatch(pos) and _NUMBER.fullmatch(hand)) or int(pos) not in (0, 1):
        raise ProtocolError(f"malformed dealer line {line!r}: bad position or hand number")
    if any(ch not in "fcr/" for ch in betting):
        raise ProtocolError(f"malformed dealer line {line!r}: betting must use f, c, r and /")
    rounds = cards.split("/")
    holes = rounds[0].split("|")
    if len(holes) != 2:
        raise ProtocolError(f"malformed dealer line {line!r}: hole cards need one '|'")
    try:
        hole = [game.parse_cards(h, naming) if h else [] for h in holes]
        board = [c for r in rounds[1:] for c in game.parse_cards(r, naming)]
    except ValueError as exc:
        raise ProtocolError(f"malformed dealer line {line!r}: {exc}") from None
    if len(hole[int(pos)]) != game.num_hole_cards:
        raise ProtocolError(f"malformed dealer line {line!r}: missing our hole cards")
    return MatchState(line, int(pos), int(hand), betting, hole, board)


def card_tokens(line: str) -> list[str]:
    """The two-character card names of a MATCHSTATE line's cards field (none if it has no such
    field; malformed runs are left for `parse_match_state` to refuse)."""
    parts = line.split(":")
    if len(parts) != 5:
        return []
    runs = parts[4].replace("|", "/").split("/")
    return [run[i : i + 2] for run in runs if len(run) % 2 == 0 for i in range(0, len(run), 2)]


@dataclass
class CardNames:
    """Which ACPC naming the dealer's cards use: a fixed one, or `auto`, decided by the first
    dealer line whose cards fit only one naming. Until then, cards that both namings have are
    read as `bottom` (a 52-card deck is named alike by both: nothing to decide there)."""

    game: GameDef
    choice: str = AUTO
    log: Callable[[str], None] = print
    naming: str | None = None  # the naming in use; None while `auto` has not decided
    found: str = ""  # how it was chosen, for the log
    shared_lines: int = 0  # lines read as `bottom` before `auto` decided

    def __post_init__(self) -> None:
        if self.choice not in CARD_NAME_CHOICES:
            raise ValueError(f"--card-names must be one of {', '.join(CARD_NAME_CHOICES)}")
        if self.choice != AUTO:
            self.naming, self.found = self.choice, f"--card-names {self.choice}"
        elif self.game.num_ranks == MAX_RANKS and self.game.num_suits == MAX_SUITS:
            self.naming, self.found = BOTTOM, "a 52-card deck, named alike by both"

    def both(self) -> str:
        """Both namings' card sets, for messages."""
        return "; ".join(f"{n} ({DEALERS[n]}): {self.game.deck_text(n)}" for n in CARD_NAMINGS)

    def naming_for(self, line: str) -> str:
        """The naming to read this dealer line's cards with (deciding `auto` when they fit only
        one); raises ProtocolError for a card that the naming in use, or either, lacks."""
        tokens = card_tokens(line)
        fits = {t: namings_of(t, self.game.num_ranks, self.game.num_suits) for t in tokens}
        deck = f"{self.game.name or 'the game'}'s deck"
        for token, namings in fits.items():
            if not namings:
                raise ProtocolError(
                    f"malformed dealer line {line!r}: card {token!r} is in neither ACPC naming "
                    f"of {deck}: {self.both()}"
                )
            if self.naming is not None and self.naming not in namings:
                (other,) = namings
                mismatch = (
                    f"malformed dealer line {line!r}: card {token!r} is not in {deck} named "
                    f"{self.naming} ({self.game.deck_text(self.naming)}) but is named {other} "
                    f"({self.game.deck_text(other)})"
                )
                if self.choice == AUTO:
                    raise ProtocolError(f"{mismatch}: the dealer mixes both ({self.found})")
                raise ProtocolError(f"{mismatch}: try --card-names {other} or auto")
        if self.naming is not None:
            return self.naming
        common = set(CARD_NAMINGS).intersection(*fits.values())
        if not common:
            raise ProtocolError(
                f"malformed dealer line {line!r}: its cards mix both ACPC namings of {deck}: "
                f"{self.both()}"
            )
        if len(common) > 1:
            self.shared_lines += bool(tokens)
            return BOTTOM
        self.naming = common.pop()
        decider = next(t for t in tokens if fits[t] == (self.naming,))
        self.found = f"found from the dealer's card {decider!r} in hand {line.split(':')[2]}"
        if self.shared_lines:
            self.found += (
                f"; {self.shared_lines} earlier lines, all of whose cards both namings have, "
                f"were read as {BOTTOM}"
            )
        self.log(
            f"card names: {self.naming} ({DEALERS[self.naming]}: "
            f"{self.game.deck_text(self.naming)}), {self.found}"
        )
        return self.naming


class ACPCClient:
    """Plays one seat: reads states, answers with `choose(state, node) -> action char`."""

    def __init__(
        self,
        game: GameDef,
        tree: BettingTree,
        choose: Callable[[MatchState, int], str],
        card_names: CardNames | None = None,
    ):
        self.game, self.tree, self.choose = game, tree, choose
        self.card_names = card_names or CardNames(game)

    def respond(self, line: str) -> str | None:
        """The answer to one dealer line, or None when it is not our turn."""
        if not line or line[0] in "#;":
            return None
        state = parse_match_state(line, self.game, self.card_names.naming_for(line))
        try:
            node = self.tree.node_of(state.betting)
        except ValueError as exc:
            raise ProtocolError(f"malformed dealer line {line!r}: {exc}") from None
        if self.tree.kind[node] != DECISION or self.tree.player[node] != state.position:
            return None
        action = self.choose(state, node)
        if action not in ACTIONS or self.tree.children[node, ACTIONS.index(action)] < 0:
            raise ValueError(f"chose illegal action {action!r} at {state.betting!r}")
        return f"{line}:{action}"  # the dealer's own text: its card names go back unchanged

    def play(self, host: str, port: int, timeout: float = 60.0) -> int:
        """Connect, play until the dealer closes the connection; returns hands seen."""
        hands: set[int] = set()
        with socket.create_connection((host, port), timeout=timeout) as sock:
            # One short line per turn each way: without this, Nagle's algorithm holds an answer
            # back until the dealer's delayed ACK of the previous one (~40 ms a turn).
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            sock.sendall((VERSION + "\r\n").encode())
            buffer = b""
            while True:
                data = sock.recv(65536)
                if not data:
                    return len(hands)
                buffer += data
                while b"\n" in buffer:
                    raw, buffer = buffer.split(b"\n", 1)
                    line = raw.decode("ascii", errors="replace").rstrip("\r")
                    answer = self.respond(line)
                    if line.startswith("MATCHSTATE:"):
                        hands.add(int(line.split(":")[2]))
                    if answer is not None:
                        sock.sendall((answer + "\r\n").encode())


def strategy_chooser(view, seed: int = 0) -> Callable[[MatchState, int], str]:  # type: ignore[no-untyped-def]
    """Sample the solved strategy's action at our bucket (see `gameforge.stages.poker.strategy`)."""
    rng = np.random.default_rng(seed)

    def choose(state: MatchState, node: int) -> str:
        r = int(view.tree.round[node])
        cards = state.hole[state.position] + state.board[: view.game.board_cards_through(r)]
        bucket = view.bucket(r, cards)
        row = int(view.offsets[r] + bucket * view.ndec[r] + view.tree.slot[node])
        probs = np.asarray(view.average[row], dtype=np.float64)
        legal = view.tree.children[node] >= 0
        probs = np.where(legal, probs, 0.0)
        probs = probs / probs.sum() if probs.sum() > 0 else legal / legal.sum()
        return ACTIONS[int(rng.choice(3, p=probs))]

    return choose
