"""Play at an ACPC dealer: the ACPC protocol over TCP, a solved strategy choosing the actions.

Protocol (ACPC server documentation, version 2.0.0): the client sends `VERSION:2.0.0`; the
dealer then sends `MATCHSTATE:<position>:<hand>:<betting>:<cards>` after every change; when the
betting leaves this position to act, the client answers with that same line plus `:<action>`
(`f`, `c` or `r` in limit games). Betting rounds are split by `/`; cards are
`<hole of position 0>|<hole of position 1>/<board of round 1>/...`, hidden hole cards empty.
Lines starting with `#` or `;` are comments. The protocol does not say how many hands a match
has: the dealer closes the connection after the last one. A close in the middle of a hand, or
(when the caller knows the match's length) before the last hand, is an error.

A dealer is not trusted to be well behaved: a line longer than `MAX_LINE_BYTES` is refused, a line
must arrive whole within `MESSAGE_TIMEOUT` seconds and the match within `MATCH_TIMEOUT` (both
parameters of `ACPCClient.play`), and error messages quote at most `QUOTE_CHARS` of a line.

Card names: a short deck's cards can be named two ways (`gameforge.engines.poker.cards`): `top`,
the ACPC dealer's (project_acpc_server's game.c builds a short deck from the highest ranks and
suits, in every published copy found, the `acpc_dealer` gem's included), and `bottom`, the
lowest ranks and suits, as gameforge names every deck and as a dealer that built its deck from
rank 0 would. `CardNames` reads the dealer's names into this engine's card ids under one of them,
or finds which one the dealer uses (`auto`). The client never sends card text of its own: its
answer repeats the dealer's line verbatim, in the dealer's names, and appends the action.

Hand histories: the client records each hand as its last state shows it (`PlayedHand`: the
hand's number, the client's position, the betting, the cards it saw, the chips it won). The
dealer shows the opponent's hole cards only at a showdown (game.c's `printPlayerHoleCards`);
its log of the match (dealer.c's `addToLogFile`: a `STATE:` line per hand with every hole card)
has them all: `parse_dealer_log` reads it and `with_dealer_log` completes the client's records
from it, refusing a log that disagrees with what the client saw.
"""

from __future__ import annotations

import re
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from gameforge.engines.poker.acpc import GameDef
from gameforge.engines.poker.aivat import LimitBetting
from gameforge.engines.poker.betting import ACTIONS, DECISION, BettingTree
from gameforge.engines.poker.cards import (
    BOTTOM,
    CARD_NAMINGS,
    MAX_RANKS,
    MAX_SUITS,
    TOP,
    namings_of,
)
from gameforge.engines.poker.hand_history import PlayedHand, chips_won

VERSION = "VERSION:2.0.0"
AUTO = "auto"
CARD_NAME_CHOICES = (AUTO, *CARD_NAMINGS)
DEALERS = {
    BOTTOM: "gameforge's own naming, a deck from rank 0 up",
    TOP: "the ACPC dealer's naming, game.c's deck",
}
# How `auto` reads cards that both namings have before it has decided: as the ACPC dealer names
# them (a dealer naming from the bottom has those lines misread until its first card that only
# `bottom` has).
UNDECIDED = TOP


# A MATCHSTATE line is at most a few hundred bytes (a limit game's betting and cards; a no-limit
# game's raise sizes); 64 KiB is far above any real line and small enough to hold at once.
MAX_LINE_BYTES = 64 * 1024
# Seconds for one whole line to arrive, counted from when the client starts waiting for it, so it
# covers the opponent's thinking too (the client's old per-read timeout, now for the whole line).
MESSAGE_TIMEOUT = 60.0
# Seconds for a whole match: an ACPC competition match (3,000 hands at most 7 s a hand on average)
# takes under 6 h; a day leaves room for longer matches and still ends a dealer that never stops.
MATCH_TIMEOUT = 24 * 3600.0
QUOTE_CHARS = 60  # the most of a dealer's line that an error message quotes
_RECV_BYTES = 65536

_NUMBER = re.compile(r"[0-9]{1,18}")  # ASCII digits only: str.isdigit() also takes '²'


class ProtocolError(ValueError):
    """A line from the dealer that does not follow the ACPC protocol."""


class MatchError(ProtocolError):
    """The dealer broke off the match (closed early, sent an over-long line, or was too slow);
    `hands` is how many hands were finished before."""

    def __init__(self, message: str, hands: int = 0):
        super().__init__(message)
        self.hands = hands


def quote(text: str | bytes | bytearray) -> str:
    """A dealer's text for an error message: its repr, cut to `QUOTE_CHARS` characters."""
    if isinstance(text, (bytes, bytearray)):
        text = bytes(text[: QUOTE_CHARS + 1]).decode("ascii", errors="replace")
    if len(text) <= QUOTE_CHARS:
        return repr(text)
    return f"{text[:QUOTE_CHARS]!r}..."


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
    engine's card ids; raises ProtocolError if it is malformed. The default is gameforge's own
    naming; the ACPC dealer's short-deck lines are named `top` (`CardNames.naming_for` says which
    naming a dealer's line uses)."""
    parts = line.split(":")
    if len(parts) != 5 or parts[0] != "MATCHSTATE":
        raise ProtocolError(
            f"malformed dealer line {quote(line)}: expected MATCHSTATE:pos:hand:betting:cards"
        )
    _, pos, hand, betting, cards = parts
    if not (_NUMBER.fullmatch(pos) and _NUMBER.fullmatch(hand)) or int(pos) not in (0, 1):
        raise ProtocolError(f"malformed dealer line {quote(line)}: bad position or hand number")
    if any(ch not in "fcr/" for ch in betting):
        raise ProtocolError(f"malformed dealer line {quote(line)}: betting must use f, c, r and /")
    # Bounded before parsing, so that no error quotes a long run of cards whole.
    most = 2 * (2 * game.num_hole_cards + sum(game.num_board_cards)) + game.num_rounds
    if len(cards) > most:
        raise ProtocolError(
            f"malformed dealer line {quote(line)}: its cards field is longer than the game's "
            f"cards ({len(cards):,} characters, at most {most})"
        )
    rounds = cards.split("/")
    holes = rounds[0].split("|")
    if len(holes) != 2:
        raise ProtocolError(f"malformed dealer line {quote(line)}: hole cards need one '|'")
    try:
        hole = [game.parse_cards(h, naming) if h else [] for h in holes]
        board = [c for r in rounds[1:] for c in game.parse_cards(r, naming)]
    except ValueError as exc:
        raise ProtocolError(f"malformed dealer line {quote(line)}: {exc}") from None
    if len(hole[int(pos)]) != game.num_hole_cards:
        raise ProtocolError(f"malformed dealer line {quote(line)}: missing our hole cards")
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
    """Which naming the dealer's cards use: a fixed one, or `auto`, decided by the first dealer
    line whose cards fit only one naming. Until then, cards that both namings have are read as
    `UNDECIDED` (`top`, as the ACPC dealer names them; a dealer naming from the bottom has those
    lines misread). A 52-card deck is named alike by both: nothing to decide there."""

    game: GameDef
    choice: str = AUTO
    log: Callable[[str], None] = print
    naming: str | None = None  # the naming in use; None while `auto` has not decided
    found: str = ""  # how it was chosen, for the log
    shared_lines: int = 0  # lines read as `UNDECIDED` before `auto` decided

    def __post_init__(self) -> None:
        if self.choice not in CARD_NAME_CHOICES:
            raise ValueError(f"--card-names must be one of {', '.join(CARD_NAME_CHOICES)}")
        if self.choice != AUTO:
            self.naming, self.found = self.choice, f"--card-names {self.choice}"
        elif self.game.num_ranks == MAX_RANKS and self.game.num_suits == MAX_SUITS:
            self.naming, self.found = BOTTOM, "a 52-card deck, named alike by both"

    @property
    def reading(self) -> str:
        """The naming the cards read so far were read with: the one in use, or `UNDECIDED`."""
        return self.naming or UNDECIDED

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
                    f"malformed dealer line {quote(line)}: card {token!r} is in neither ACPC "
                    f"naming of {deck}: {self.both()}"
                )
            if self.naming is not None and self.naming not in namings:
                (other,) = namings
                mismatch = (
                    f"malformed dealer line {quote(line)}: card {token!r} is not in {deck} named "
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
                f"malformed dealer line {quote(line)}: its cards mix both ACPC namings of {deck}: "
                f"{self.both()}"
            )
        if len(common) > 1:
            self.shared_lines += bool(tokens)
            return UNDECIDED
        self.naming = common.pop()
        decider = next(t for t in tokens if fits[t] == (self.naming,))
        hand = line.split(":")[2]  # not yet checked: parse_match_state reads the line next
        hand = hand if _NUMBER.fullmatch(hand) else quote(hand)
        self.found = f"found from the dealer's card {decider!r} in hand {hand}"
        if self.shared_lines:
            self.found += (
                f"; {self.shared_lines} earlier lines, all of whose cards both namings have, "
                f"were read as {UNDECIDED}"
            )
        self.log(
            f"card names: {self.naming} ({DEALERS[self.naming]}: "
            f"{self.game.deck_text(self.naming)}), {self.found}"
        )
        return self.naming


class DealerLines:
    """A dealer's lines off a socket, each bounded in length and in time, all within a deadline.

    Received bytes go into one bytearray and only bytes not yet searched are searched for the
    newline, so reading costs time linear in the bytes received, however they are split."""

    def __init__(
        self,
        sock: socket.socket,
        message_timeout: float = MESSAGE_TIMEOUT,
        match_deadline: float = float("inf"),
        max_line: int = MAX_LINE_BYTES,
    ):
        self.sock, self.message_timeout = sock, message_timeout
        self.match_deadline, self.max_line = match_deadline, max_line  # deadline: time.monotonic()
        self.buffer = bytearray()
        self.searched = 0  # bytes at the start of `buffer` known to hold no newline

    def readline(self) -> str | None:
        """The next line without its line end; None when the dealer closed between lines. Raises
        MatchError for a line over `max_line` bytes, a line not whole within `message_timeout`
        seconds, the match deadline passing, or a close in the middle of a line."""
        started = time.monotonic()
        deadline = min(started + self.message_timeout, self.match_deadline)
        while True:
            end = self.buffer.find(b"\n", self.searched)
            if end >= 0:
                if end > self.max_line:
                    raise self._too_long()
                raw = bytes(self.buffer[:end])
                del self.buffer[: end + 1]  # cheap: a bytearray drops its front without copying
                self.searched = 0
                return raw.decode("ascii", errors="replace").rstrip("\r")
            self.searched = len(self.buffer)
            if len(self.buffer) > self.max_line:
                raise self._too_long()  # refused now: no waiting for the rest of a hostile line
            left = deadline - time.monotonic()
            if left <= 0:
                raise self._late(started)
            self.sock.settimeout(left)
            try:
                data = self.sock.recv(_RECV_BYTES)
            except TimeoutError:
                raise self._late(started) from None
            if not data:
                if self.buffer:
                    raise MatchError(
                        f"the dealer closed the connection in the middle of a line "
                        f"({len(self.buffer):,} bytes: {quote(self.buffer)})"
                    )
                return None
            self.buffer += data

    def _too_long(self) -> MatchError:
        """The error for a line over `max_line` bytes."""
        return MatchError(
            f"the dealer sent a line over {self.max_line:,} bytes, the most this client reads (an "
            f"ACPC line is a few hundred); it starts {quote(self.buffer)}"
        )

    def _late(self, started: float) -> MatchError:
        """The error for a line that did not arrive whole in time."""
        part = (
            f"; {len(self.buffer):,} bytes of it came: {quote(self.buffer)}" if self.buffer else ""
        )
        if time.monotonic() >= self.match_deadline:
            return MatchError(f"the match went past its time limit{part}")
        return MatchError(
            f"the dealer sent no whole line within {self.message_timeout:g} s "
            f"(waited {time.monotonic() - started:.1f} s){part}"
        )


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
        self.betting = LimitBetting(game, tree)
        # A longer betting string is no path of the tree: refused before node_of quotes it whole.
        self.longest_betting = max(map(len, tree.history)) + game.num_rounds
        self.hands_played = 0  # hands whose last state has been seen: kept when play() raises
        self.open_hand: int | None = None  # the hand under way, None between hands
        self.last_finished: int | None = None  # the number of the hand finished last
        self.hands: list[PlayedHand] = []  # every finished hand, as its last state showed it

    def state_of(self, line: str) -> tuple[MatchState, int] | None:
        """A dealer line's state and its betting-tree node; None for an empty or comment line."""
        if not line or line[0] in "#;":
            return None
        state = parse_match_state(line, self.game, self.card_names.naming_for(line))
        if len(state.betting) > self.longest_betting:
            raise ProtocolError(
                f"malformed dealer line {quote(line)}: its betting is longer than any in "
                f"{self.game.name or 'the game'} ({len(state.betting):,} characters)"
            )
        try:
            node = self.tree.node_of(state.betting)
        except ValueError as exc:
            raise ProtocolError(f"malformed dealer line {quote(line)}: {exc}") from None
        return state, node

    def answer(self, state: MatchState, node: int) -> str | None:
        """The answer to a state, or None when it is not our turn."""
        if self.tree.kind[node] != DECISION or self.tree.player[node] != state.position:
            return None
        action = self.choose(state, node)
        if action not in ACTIONS or self.tree.children[node, ACTIONS.index(action)] < 0:
            raise ValueError(f"chose illegal action {action!r} at {state.betting!r}")
        return f"{state.line}:{action}"  # the dealer's own text: its card names go back unchanged

    def respond(self, line: str) -> str | None:
        """The answer to one dealer line, or None when it is not our turn."""
        found = self.state_of(line)
        return None if found is None else self.answer(*found)

    def play(
        self,
        host: str,
        port: int,
        message_timeout: float = MESSAGE_TIMEOUT,
        match_timeout: float = MATCH_TIMEOUT,
        hands: int | None = None,
    ) -> int:
        """Connect and play until the dealer closes the connection; returns the hands played.

        Each line must arrive whole within `message_timeout` seconds, the match end within
        `match_timeout`. `hands` is the match's length when the caller knows it (the protocol
        does not say). Raises MatchError, with the hands played so far in its message and in
        `hands`, when the dealer closes in the middle of a hand or before the `hands`-th, sends
        an over-long line, or is too slow; `hands_played` keeps the count too."""
        self.hands_played, self.open_hand, self.last_finished = 0, None, None
        self.hands = []
        deadline = time.monotonic() + match_timeout
        try:
            with socket.create_connection((host, port), timeout=message_timeout) as sock:
                # One short line per turn each way: without this, Nagle's algorithm holds an
                # answer back until the dealer's delayed ACK of the previous one (~40 ms a turn).
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                self._send(sock, VERSION, message_timeout, deadline)
                lines = DealerLines(sock, message_timeout, deadline)
                while (line := lines.readline()) is not None:
                    self._play_line(sock, line, message_timeout, deadline)
        except MatchError as exc:
            raise MatchError(f"{exc}; {self._progress(hands)}", self.hands_played) from None
        except OSError as exc:
            if not self.hands_played and self.open_hand is None:
                raise  # no match under way: connection refused, unknown host and the like
            raise MatchError(
                f"the connection to the dealer failed ({exc}); {self._progress(hands)}",
                self.hands_played,
            ) from None
        if self.open_hand is not None:
            raise MatchError(
                f"the dealer closed the connection in the middle of hand {self.open_hand}; "
                f"{self._progress(hands)}",
                self.hands_played,
            )
        if hands is not None and self.hands_played < hands:
            raise MatchError(
                f"the dealer closed the connection before the match's end; {self._progress(hands)}",
                self.hands_played,
            )
        return self.hands_played

    def _play_line(self, sock: socket.socket, line: str, timeout: float, deadline: float) -> None:
        """Track the hand a dealer line belongs to and answer it when it is our turn."""
        found = self.state_of(line)
        if found is None:
            return
        state, node = found
        if self.tree.kind[node] == DECISION:
            self.open_hand = state.hand
        else:  # the hand's last state: counted and recorded once, should the dealer repeat it
            if state.hand != self.last_finished:
                self.hands.append(self.played_hand(state, node))
                self.hands_played, self.last_finished = self.hands_played + 1, state.hand
            self.open_hand = None
        reply = self.answer(state, node)
        if reply is not None:
            self._send(sock, reply, timeout, deadline)

    def played_hand(self, state: MatchState, node: int) -> PlayedHand:
        """The record of a hand from its last state; ProtocolError for a showdown whose cards
        the dealer did not show."""
        hole = (tuple(state.hole[0]), tuple(state.hole[1]))
        try:
            chips = chips_won(self.betting, node, hole, tuple(state.board), state.position)
        except ValueError as exc:
            raise ProtocolError(f"malformed dealer line {quote(state.line)}: {exc}") from None
        return PlayedHand(
            state.hand, state.position, state.betting, hole, tuple(state.board), chips
        )

    @staticmethod
    def _send(sock: socket.socket, text: str, timeout: float, deadline: float) -> None:
        """Send one line, within the message and match time limits."""
        left = min(timeout, deadline - time.monotonic())
        if left <= 0:
            raise MatchError("the match went past its time limit")
        sock.settimeout(left)
        sock.sendall((text + "\r\n").encode())

    def _progress(self, hands: int | None) -> str:
        """How far the match got, for error messages."""
        of = f" of the match's {hands:,}" if hands is not None else ""
        return f"{self.hands_played:,} hands{of} played before"


# ------------------------------------------------------------------------------- dealer log


class DealerLogError(ValueError):
    """A dealer log that cannot be read, or that disagrees with the match the client played."""


@dataclass(frozen=True)
class LoggedHand:
    """One hand of an ACPC dealer's log: its last state with every hole card, and what each
    position won."""

    hand: int
    betting: str
    hole: tuple[tuple[int, ...], tuple[int, ...]]  # per position
    board: tuple[int, ...]
    values: tuple[float, float]  # per position (the log's order), not per seat
    line: int  # where it is in the log, counting from 1


def parse_dealer_log(text: str, game: GameDef, naming: str = BOTTOM) -> list[LoggedHand]:
    """The hands of an ACPC dealer's log (dealer.c's `addToLogFile`: one line per finished hand,
    `STATE:<hand>:<betting>:<hole 0>|<hole 1>/<board>...:<value 0>|<value 1>:<name 0>|<name 1>`,
    in position order; `#` comments; a last `SCORE:` line of the totals by seat), cards named
    under `naming` (the default is gameforge's own naming; the ACPC dealer's log of a short deck
    is named `top`); DealerLogError, naming the line, for anything else."""
    found = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line[0] in "#;" or line.startswith("SCORE:"):
            continue
        try:
            found.append(_logged_hand(line, number, game, naming))
        except ValueError as exc:
            raise DealerLogError(f"dealer log line {number} {quote(line)}: {exc}") from None
    return found


def _logged_hand(line: str, number: int, game: GameDef, naming: str) -> LoggedHand:
    parts = line.split(":")
    if len(parts) != 6 or parts[0] != "STATE":
        raise ValueError("expected STATE:hand:betting:cards:values:names")
    _, hand, betting, cards, values, _names = parts
    if not _NUMBER.fullmatch(hand):
        raise ValueError("bad hand number")
    if any(ch not in "fcr/" for ch in betting):
        raise ValueError("betting must use f, c, r and / (a limit game)")
    rounds = cards.split("/")
    holes = rounds[0].split("|")
    amounts = values.split("|")
    if len(holes) != 2 or len(amounts) != 2:
        raise ValueError("expected two players' hole cards and values")
    hole = (tuple(game.parse_cards(holes[0], naming)), tuple(game.parse_cards(holes[1], naming)))
    if any(len(h) != game.num_hole_cards for h in hole):
        raise ValueError(f"each player holds {game.num_hole_cards} card(s) in {game.name}")
    board = tuple(c for r in rounds[1:] for c in game.parse_cards(r, naming))
    return LoggedHand(
        int(hand), betting, hole, board, (float(amounts[0]), float(amounts[1])), number
    )


def with_dealer_log(
    hands: list[PlayedHand], logged: list[LoggedHand], game: GameDef
) -> list[PlayedHand]:
    """The client's hands with both hole cards of each from the dealer's log of the match;
    DealerLogError, in one line, where the log and the match disagree (another match's log, a
    log cut short, another deal) on the hands, a betting, the client's cards, a board, a hole
    card shown at a showdown or the chips."""
    by_hand: dict[int, LoggedHand] = {}
    for entry in logged:
        if entry.hand in by_hand:
            raise DealerLogError(
                f"the dealer log has hand {entry.hand} twice (lines {by_hand[entry.hand].line} "
                f"and {entry.line}): a log of more than one match?"
            )
        by_hand[entry.hand] = entry
    played = [h.hand for h in hands]
    if sorted(played) != sorted(by_hand):
        raise DealerLogError(
            f"the dealer log does not hold the match's hands: it has {_hand_range(list(by_hand))}, "
            f"the client played {_hand_range(played)}"
        )
    out = []
    for h in hands:
        entry = by_hand[h.hand]
        problem = _disagreement(h, entry, game)
        if problem:
            raise DealerLogError(
                f"the dealer log disagrees with the match at hand {h.hand} (log line "
                f"{entry.line}): {problem}"
            )
        out.append(PlayedHand(h.hand, h.seat, h.betting, entry.hole, h.board, h.chips))
    return out


def _disagreement(h: PlayedHand, entry: LoggedHand, game: GameDef) -> str:
    """What a log entry says otherwise than the client saw, or ''."""
    if entry.betting != h.betting:
        return f"its betting is {entry.betting!r}, the client's {h.betting!r}"
    for p in (0, 1):
        if h.hole[p] and sorted(h.hole[p]) != sorted(entry.hole[p]):
            whose = "the client's" if p == h.seat else "the opponent's shown"
            return (
                f"{whose} hole cards (position {p}) are {game.format_cards(entry.hole[p])} in "
                f"the log, {game.format_cards(h.hole[p])} at the client"
            )
    if entry.board != h.board:
        return (
            f"its board is {game.format_cards(entry.board) or 'empty'}, the client's "
            f"{game.format_cards(h.board) or 'empty'}"
        )
    if entry.values[h.seat] != h.chips:
        return f"it gives position {h.seat} {entry.values[h.seat]:g} chips, the client {h.chips}"
    return ""


def _hand_range(hands: list[int]) -> str:
    """`300 hands (0-299)` for messages."""
    if not hands:
        return "no hands"
    return f"{len(hands):,} hands ({min(hands)}-{max(hands)})"


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
