"""ACPC game definitions: parse the `.game` format into a frozen `GameDef`.

The format is the one of the ACPC dealer (project_acpc_server/game.c): a `GAMEDEF` ... `END GAMEDEF`
block with `limit` or `nolimit` and `key = values` lines; `#` starts a comment. Round and player
numbers in the file are 1-based (firstPlayer); `GameDef` stores them 0-based.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from gameforge.engines.poker.cards import (
    BOTTOM,
    MAX_RANKS,
    MAX_SUITS,
    deck_text,
    example_cards,
    format_cards,
    parse_cards,
)

MAX_PLAYERS = 10
MAX_ROUNDS = 4
MAX_HOLE_CARDS = 3
MAX_BOARD_CARDS = 7

# Keys as written in ACPC files (matched case-insensitively) -> (field, per-round/per-player/scalar)
_KEYS = {
    "numplayers": ("num_players", "scalar"),
    "numrounds": ("num_rounds", "scalar"),
    "stack": ("stack", "player"),
    "blind": ("blind", "player"),
    "raisesize": ("raise_size", "round"),
    "firstplayer": ("first_player", "round"),
    "maxraises": ("max_raises", "round"),
    "numsuits": ("num_suits", "scalar"),
    "numranks": ("num_ranks", "scalar"),
    "numholecards": ("num_hole_cards", "scalar"),
    "numboardcards": ("num_board_cards", "round"),
}
_ACPC_NAME = {
    "num_players": "numPlayers", "num_rounds": "numRounds", "stack": "stack", "blind": "blind",
    "raise_size": "raiseSize", "first_player": "firstPlayer", "max_raises": "maxRaises",
    "num_suits": "numSuits", "num_ranks": "numRanks", "num_hole_cards": "numHoleCards",
    "num_board_cards": "numBoardCards",
}  # fmt: skip
UNLIMITED_RAISES = 255  # ACPC's default maxRaises (UINT8_MAX): no cap but its action limit
# Raise-to sizes one no-limit decision chooses among: the largest stack over the smallest
# positive blind (the grid's step). The no-limit engine walks this grid per decision inside
# compiled loops that see no signal until they return; 10^12-chip stacks spun one for 15
# minutes. ACPC's 200-big-blind game has 400 sizes; the cap allows 250 times that.
MAX_RAISE_GRID = 100_000
MAX_CHIPS = 2**31 - 1  # ACPC's dealer holds stacks, blinds and raise sizes as int32


class GameDefError(ValueError):
    """A malformed or inconsistent ACPC game definition."""


@dataclass(frozen=True)
class GameDef:
    """A poker game as the ACPC dealer defines it (player and round indices 0-based)."""

    betting_type: str  # "limit" or "nolimit"
    num_players: int
    num_rounds: int
    blind: tuple[int, ...]
    raise_size: tuple[int, ...]  # per round; only meaningful for limit games
    first_player: tuple[int, ...]  # per round, 0-based
    max_raises: tuple[int, ...]  # per round; 255 means unlimited, as in ACPC
    num_suits: int
    num_ranks: int
    num_hole_cards: int
    num_board_cards: tuple[int, ...]  # dealt at the start of each round
    stack: tuple[int, ...] = ()  # per player; nolimit games only
    name: str = ""

    @property
    def deck_size(self) -> int:
        """Number of cards in the deck."""
        return self.num_suits * self.num_ranks

    def parse_cards(self, text: str, naming: str = BOTTOM) -> list[int]:
        """Cards of this game's deck from text; a card it lacks is refused with the deck's names."""
        return parse_cards(text, self.num_ranks, self.num_suits, naming, self.name)

    def format_cards(self, cards: Iterable[int], naming: str = BOTTOM) -> str:
        """Card ids of this game's deck as text."""
        return format_cards(cards, self.num_suits, self.num_ranks, naming)

    def deck_text(self, naming: str = BOTTOM) -> str:
        """This game's card names in words, e.g. 'ranks 234, suits cd' (Leduc)."""
        return deck_text(self.num_ranks, self.num_suits, naming)

    def example_cards(self, board_cards: int) -> list[int]:
        """The paper's example hand with `board_cards` board cards, moved into this deck."""
        return example_cards(self.num_ranks, self.num_suits, self.num_hole_cards, board_cards)

    def board_cards_through(self, round_: int) -> int:
        """Number of board cards visible in betting round ``round_``."""
        return sum(self.num_board_cards[: round_ + 1])

    def card_groups(self) -> tuple[int, ...]:
        """Cards a player sees, grouped by deal: hole cards, then each round's non-empty board deal.

        This is the round layout a hand isomorphism indexer needs: private and public cards are
        never interchangeable, and a round that deals no board card adds no group.
        """
        return (self.num_hole_cards,) + tuple(b for b in self.num_board_cards if b > 0)

    def group_of_round(self, round_: int) -> int:
        """Index into `card_groups()` of the last group visible in betting round ``round_``."""
        return sum(1 for b in self.num_board_cards[: round_ + 1] if b > 0)

    def raw_hands(self, round_: int) -> int:
        """Number of (ordered by round, unordered within a round) deals one player sees."""
        remaining = self.deck_size
        total = 1
        for size in self.card_groups()[: self.group_of_round(round_) + 1]:
            total *= math.comb(remaining, size)
            remaining -= size
        return total

    def to_text(self) -> str:
        """Render the definition back into the ACPC `.game` format."""
        lines = ["GAMEDEF", self.betting_type]
        lines.append(f"numPlayers = {self.num_players}")
        lines.append(f"numRounds = {self.num_rounds}")
        if self.stack:
            lines.append("stack = " + " ".join(map(str, self.stack)))
        lines.append("blind = " + " ".join(map(str, self.blind)))
        if self.betting_type == "limit":
            lines.append("raiseSize = " + " ".join(map(str, self.raise_size)))
        lines.append("firstPlayer = " + " ".join(str(p + 1) for p in self.first_player))
        lines.append("maxRaises = " + " ".join(map(str, self.max_raises)))
        lines.append(f"numSuits = {self.num_suits}")
        lines.append(f"numRanks = {self.num_ranks}")
        lines.append(f"numHoleCards = {self.num_hole_cards}")
        lines.append("numBoardCards = " + " ".join(map(str, self.num_board_cards)))
        lines.append("END GAMEDEF")
        return "\n".join(lines) + "\n"


def parse_game(text: str, name: str = "") -> GameDef:
    """Parse an ACPC game definition; raises GameDefError naming the line at fault."""
    values: dict[str, list[int]] = {}
    betting_type = None
    started = ended = False
    for lineno, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        word = line.lower()
        if word == "gamedef":
            started = True
            continue
        if not started:
            raise GameDefError(f"{name or 'game'}:{lineno}: expected GAMEDEF, got {line!r}")
        if word == "end gamedef":
            ended = True
            break
        if word in ("limit", "nolimit"):
            betting_type = word
            continue
        if "=" not in line:
            raise GameDefError(f"{name or 'game'}:{lineno}: expected 'key = values', got {line!r}")
        key, _, rest = line.partition("=")
        field = _KEYS.get(key.strip().lower())
        if field is None:
            valid = ", ".join(sorted(_KEYS))
            raise GameDefError(f"{name or 'game'}:{lineno}: unknown key {key.strip()!r} ({valid})")
        try:
            numbers = [int(tok) for tok in rest.split()]
        except ValueError:
            raise GameDefError(
                f"{name or 'game'}:{lineno}: {key.strip()} needs integers, got {rest.strip()!r}"
            ) from None
        if not numbers:
            raise GameDefError(f"{name or 'game'}:{lineno}: {key.strip()} has no value")
        values[field[0]] = numbers
    if not started or not ended:
        raise GameDefError(f"{name or 'game'}: missing GAMEDEF ... END GAMEDEF block")
    if betting_type is None:
        raise GameDefError(f"{name or 'game'}: betting type missing (limit or nolimit)")
    return _build(values, betting_type, name)


def _build(values: dict[str, list[int]], betting_type: str, name: str) -> GameDef:
    where = name or "game"

    def scalar(field: str, default: int | None = None) -> int:
        if field not in values:
            if default is None:
                raise GameDefError(f"{where}: {_ACPC_NAME[field]} is missing")
            return default
        return values[field][0]

    num_players = scalar("num_players")
    num_rounds = scalar("num_rounds")
    if not 2 <= num_players <= MAX_PLAYERS:
        raise GameDefError(f"{where}: numPlayers must be 2..{MAX_PLAYERS}, got {num_players}")
    if not 1 <= num_rounds <= MAX_ROUNDS:
        raise GameDefError(f"{where}: numRounds must be 1..{MAX_ROUNDS}, got {num_rounds}")

    def per(field: str, count: int, default: int | None = None) -> tuple[int, ...]:
        if field not in values:
            if default is None:
                raise GameDefError(f"{where}: {_ACPC_NAME[field]} is missing")
            return (default,) * count
        got = values[field]
        if len(got) < count:
            raise GameDefError(f"{where}: {_ACPC_NAME[field]} needs {count} values, got {len(got)}")
        return tuple(got[:count])

    blind = per("blind", num_players)  # required, as in ACPC's game.c
    first_player = tuple(p - 1 for p in per("first_player", num_rounds, 1))
    max_raises = per("max_raises", num_rounds, UNLIMITED_RAISES)
    num_board_cards = per("num_board_cards", num_rounds)  # required, as in game.c
    raise_size = per("raise_size", num_rounds) if betting_type == "limit" else (0,) * num_rounds
    if betting_type == "limit" and "stack" in values:
        # ACPC then lets a limit raise or call put a player all-in, with side pots
        raise GameDefError(
            f"{where}: a limit game with stacks (all-in limit betting) is not supported"
        )
    stack = per("stack", num_players) if betting_type == "nolimit" else ()
    game = GameDef(
        betting_type=betting_type,
        num_players=num_players,
        num_rounds=num_rounds,
        blind=blind,
        raise_size=raise_size,
        first_player=first_player,
        max_raises=max_raises,
        num_suits=scalar("num_suits"),
        num_ranks=scalar("num_ranks"),
        num_hole_cards=scalar("num_hole_cards"),
        num_board_cards=num_board_cards,
        stack=stack,
        name=name,
    )
    _validate(game)
    return game


def _validate(game: GameDef) -> None:
    where = game.name or "game"
    if not 1 <= game.num_suits <= MAX_SUITS:
        raise GameDefError(f"{where}: numSuits must be 1..{MAX_SUITS}, got {game.num_suits}")
    if not 1 <= game.num_ranks <= MAX_RANKS:
        raise GameDefError(f"{where}: numRanks must be 1..{MAX_RANKS}, got {game.num_ranks}")
    if not 1 <= game.num_hole_cards <= MAX_HOLE_CARDS:
        raise GameDefError(
            f"{where}: numHoleCards must be 1..{MAX_HOLE_CARDS}, got {game.num_hole_cards}"
        )
    if any(b < 0 for b in game.num_board_cards) or sum(game.num_board_cards) > MAX_BOARD_CARDS:
        raise GameDefError(f"{where}: numBoardCards must be >= 0 and sum to <= {MAX_BOARD_CARDS}")
    needed = game.num_players * game.num_hole_cards + sum(game.num_board_cards)
    if needed > game.deck_size:
        raise GameDefError(f"{where}: deals {needed} cards from a deck of {game.deck_size}")
    if any(not 0 <= p < game.num_players for p in game.first_player):
        raise GameDefError(f"{where}: firstPlayer must name players 1..{game.num_players}")
    if any(not 0 <= m <= UNLIMITED_RAISES for m in game.max_raises):
        raise GameDefError(f"{where}: maxRaises must be 0..{UNLIMITED_RAISES} (ACPC reads a byte)")
    if any(b < 0 for b in game.blind):
        raise GameDefError(f"{where}: blinds must be >= 0")
    if game.betting_type == "limit" and any(r <= 0 for r in game.raise_size):
        raise GameDefError(f"{where}: raiseSize must be > 0 in a limit game")
    if game.betting_type == "nolimit" and any(s < b for s, b in zip(game.stack, game.blind)):
        raise GameDefError(f"{where}: a stack is smaller than its blind")
    if game.betting_type == "nolimit":
        grid = raise_grid(game)
        if grid > MAX_RAISE_GRID:
            raise GameDefError(
                f"{where}: {grid:,} raise sizes a decision (stack {max(game.stack):,} over the "
                f"smallest blind), over gameforge's limit of {MAX_RAISE_GRID:,}: lower the "
                "stacks or raise the blinds"
            )
    for field in ("stack", "blind", "raise_size"):
        if any(v > MAX_CHIPS for v in getattr(game, field)):
            raise GameDefError(
                f"{where}: {_ACPC_NAME[field]} over {MAX_CHIPS:,} chips (ACPC's 32-bit counts)"
            )
    pot = largest_pot(game)
    if pot > MAX_CHIPS:
        fields = "stacks" if game.betting_type == "nolimit" else "blinds, raiseSize and maxRaises"
        raise GameDefError(
            f"{where}: the betting can reach a pot of {pot:,} chips, over the {MAX_CHIPS:,} the "
            f"engines count in (32-bit): lower the {fields}"
        )


def largest_pot(game: GameDef) -> int:
    """The most chips the betting tree can put in the pot: every player's stack (no-limit), or
    every player calling the largest blind and every raise of every round (limit; an unlimited
    round counts as ACPC caps raises at a byte's worth)."""
    if game.betting_type == "nolimit":
        return sum(game.stack)
    per_player = max(game.blind, default=0) + sum(
        size * raises for size, raises in zip(game.raise_size, game.max_raises, strict=False)
    )
    return game.num_players * per_player


def raise_grid(game: GameDef) -> int:
    """Raise-to sizes of a no-limit decision at most: the largest stack in steps of the smallest
    positive blind (of one chip without blinds)."""
    step = min((b for b in game.blind if b > 0), default=1)
    return max(game.stack) // step
