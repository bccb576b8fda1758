"""Play at an ACPC dealer: the ACPC protocol over TCP, a solved strategy choosing the actions.

Protocol (ACPC server documentation, version 2.0.0): the client sends `VERSION:2.0.0`; the
dealer then sends `MATCHSTATE:<position>:<hand>:<betting>:<cards>` after every change; when the
betting leaves this position to act, the client answers with that same line plus `:<action>`
(`f`, `c` or `r` in limit games). Betting rounds are split by `/`; cards are
`<hole of position 0>|<hole of position 1>/<board of round 1>/...`, hidden hole cards empty.
Lines starting with `#` or `;` are comments.
"""

from __future__ import annotations

import socket
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from gameforge.engines.poker.acpc import GameDef
from gameforge.engines.poker.betting import ACTIONS, DECISION, BettingTree
from gameforge.engines.poker.cards import parse_cards

VERSION = "VERSION:2.0.0"


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


def parse_match_state(line: str, game: GameDef) -> MatchState:
    """Parse `MATCHSTATE:pos:hand:betting:cards`; raises ProtocolError if it is malformed."""
    parts = line.split(":")
    if len(parts) != 5 or parts[0] != "MATCHSTATE":
        raise ProtocolError(
            f"malformed dealer line {line!r}: expected MATCHSTATE:pos:hand:betting:cards"
        )
    _, pos, hand, betting, cards = parts
    if not (pos.isdigit() and hand.isdigit()) or int(pos) not in (0, 1):
        raise ProtocolError(f"malformed dealer line {line!r}: bad position or hand number")
    if any(ch not in "fcr/" for ch in betting):
        raise ProtocolError(f"malformed dealer line {line!r}: betting must use f, c, r and /")
    rounds = cards.split("/")
    holes = rounds[0].split("|")
    if len(holes) != 2:
        raise ProtocolError(f"malformed dealer line {line!r}: hole cards need one '|'")
    try:
        hole = [parse_cards(h, game.num_ranks, game.num_suits) if h else [] for h in holes]
        board = [c for r in rounds[1:] for c in parse_cards(r, game.num_ranks, game.num_suits)]
    except ValueError as exc:
        raise ProtocolError(f"malformed dealer line {line!r}: {exc}") from None
    if len(hole[int(pos)]) != game.num_hole_cards:
        raise ProtocolError(f"malformed dealer line {line!r}: missing our hole cards")
    return MatchState(line, int(pos), int(hand), betting, hole, board)


class ACPCClient:
    """Plays one seat: reads states, answers with `choose(state, node) -> action char`."""

    def __init__(self, game: GameDef, tree: BettingTree, choose: Callable[[MatchState, int], str]):
        self.game, self.tree, self.choose = game, tree, choose

    def respond(self, line: str) -> str | None:
        """The answer to one dealer line, or None when it is not our turn."""
        if not line or line[0] in "#;":
            return None
        state = parse_match_state(line, self.game)
        try:
            node = self.tree.node_of(state.betting)
        except ValueError as exc:
            raise ProtocolError(f"malformed dealer line {line!r}: {exc}") from None
        if self.tree.kind[node] != DECISION or self.tree.player[node] != state.position:
            return None
        action = self.choose(state, node)
        if action not in ACTIONS or self.tree.children[node, ACTIONS.index(action)] < 0:
            raise ValueError(f"chose illegal action {action!r} at {state.betting!r}")
        return f"{line}:{action}"

    def play(self, host: str, port: int, timeout: float = 60.0) -> int:
        """Connect, play until the dealer closes the connection; returns hands seen."""
        hands: set[int] = set()
        with socket.create_connection((host, port), timeout=timeout) as sock:
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
