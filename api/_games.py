"""Hearts and Blokus positions: what an agent plays there, and what a search thinks of it.

The rules, the agents and the search are the engines' (`engines.hearts`, `engines.blokus`);
a position here is only their state, built from cards or placements you name.

A Hearts trick: the seat to play holds `hand`, the cards of the trick so far lie on the table,
and `played` are the cards of the earlier tricks:

>>> import gameforge as gf
>>> trick = gf.hearts_position("4c 6c Jc Ad 2s 7s 4h", trick="8c Kd", played=(
...     "2c 9c Ac 7c Ts Th 5s Ks 3h Td 7h Js Qd 6d 2d As Qc Qs 8s 4d Ah 9s 6s 3d"),
...     voids={1: "c"})                                     # seat 1 showed it has no club
>>> trick
Hearts trick 7, seat 2 to play after 8c Kd (led by seat 0); hearts broken
  hand:  4c 6c Jc Ad 2s 7s 4h
  legal: 4c 6c Jc
>>> trick.move("rule-based"), trick.move("monte-carlo", sims=200)
('Jc', '6c')

A Blokus position after some placements of MCTS-MAXN's rollout policy, and MCTS-MAXN's search
from it: its move, and each move's visits and mean reward per colour (the search's values):

>>> board = gf.blokus_position(moves=8, seed=3)
>>> board.to_move, board.ply
(0, 8)
>>> search = board.search(sims=300, seed=0)
>>> search.move == search.children[0]["move"]               # the most visited move is played
True
>>> sorted(search.children[0])
['cells', 'move', 'piece', 'value', 'visits']
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

HEARTS_AGENTS = ("rule-based", "monte-carlo", "random")
_CARD = re.compile(r"[2-9TJQKA][cdsh]")


def _mask(text: str) -> int:
    """A Hearts card mask from `Qs 2c Ah` (spaces optional)."""
    from gameforge.engines.hearts.game import parse_hand

    tokens = _CARD.findall(text)
    if "".join(tokens) != re.sub(r"[\s,]", "", text):
        raise ValueError(f"{text!r}: cards are written like 'Qs 2c Ah'")
    mask = parse_hand(" ".join(tokens))
    if bin(mask).count("1") != len(tokens):
        raise ValueError(f"{text!r} names a card twice")
    return mask


def _names(mask: int) -> list[str]:
    from gameforge.engines.hearts.game import card_name

    # by suit as the engine orders them (clubs, diamonds, spades, hearts), low to high
    return [card_name(c) for c in range(52) if (mask >> c) & 1]


def hearts_position(
    hand: str,
    trick: str = "",
    played: str = "",
    *,
    leader: int = 0,
    voids: dict[int, str] | None = None,
) -> HeartsPosition:
    """A Hearts position: the hand to play, the trick so far, the earlier tricks' cards."""
    from gameforge.engines.hearts.game import HEARTS, QUEEN_SPADES, SUIT_CHARS

    held, earlier = _mask(hand), _mask(played)
    on_table = [c for c in _CARD.findall(trick)]
    table = _mask(trick)
    if held & earlier or held & table or earlier & table:
        raise ValueError("a card is both in the hand and on the table or in an earlier trick")
    trick_no = 13 - bin(held).count("1")
    if not 0 <= trick_no < 13 or bin(earlier).count("1") != 4 * trick_no or len(on_table) > 3:
        raise ValueError(
            f"{bin(held).count('1')} cards in hand mean {4 * trick_no} cards of earlier tricks "
            f"and at most 3 on the table; got {bin(earlier).count('1')} and {len(on_table)}"
        )
    seen = earlier | table
    broken = any((seen >> c) & 1 for c in range(52) if c // 13 == HEARTS or c == QUEEN_SPADES)
    void_masks = np.zeros(4, dtype=np.int64)
    for seat, suits in (voids or {}).items():
        for s in suits:
            void_masks[seat] |= 1 << SUIT_CHARS.index(s)
    cards = np.zeros(4, dtype=np.int64)
    for i, token in enumerate(on_table):
        cards[i] = _mask(token).bit_length() - 1
    return HeartsPosition(held, cards, len(on_table), trick_no, broken, seen, void_masks, leader)


@dataclass
class HeartsPosition:
    """One decision in a Hearts game, as the engine's agents see it."""

    hand: int
    trick: np.ndarray
    n_in_trick: int
    trick_no: int
    broken: bool
    played: int  # every card played so far, this trick's too
    voids: np.ndarray
    leader: int
    options: Any = field(default=None)

    def __post_init__(self) -> None:
        from gameforge.engines.hearts.game import Options

        if self.options is None:
            self.options = Options()  # the paper's rules

    @property
    def seat(self) -> int:
        """The seat to play (0..3)."""
        return (self.leader + self.n_in_trick) % 4

    def _legal_mask(self) -> int:
        from gameforge.engines.hearts.game import legal_mask

        return int(legal_mask(self.hand, self.trick, self.n_in_trick, self.trick_no, self.broken,
                              self.options.array()))  # fmt: skip

    def legal(self) -> list[str]:
        """The cards the rules allow here."""
        return _names(self._legal_mask())

    def move(self, agent: str = "rule-based", sims: int = 200, seed: int = 0) -> str:
        """The card an agent plays here: rule-based, monte-carlo (`sims` simulations) or random."""
        from gameforge.engines.common.rng import mix
        from gameforge.engines.hearts.agents import monte_carlo_card
        from gameforge.engines.hearts.game import card_name, random_card, rule_based_card

        legal = self._legal_mask()
        rng = np.array([mix(np.uint64(seed))], dtype=np.uint64)
        if agent == "rule-based":
            card = rule_based_card(legal, self.trick, self.n_in_trick, self.played)
        elif agent == "monte-carlo":
            card = monte_carlo_card(
                self.hand, legal, self.trick, self.n_in_trick, self.trick_no, self.broken,
                self.played, self.voids, self.seat, self.leader, self.options.array(), sims, rng,
            )  # fmt: skip
        elif agent == "random":
            card = random_card(legal, rng)
        else:
            raise ValueError(f"agent must be one of {', '.join(HEARTS_AGENTS)}, not {agent!r}")
        return card_name(int(card))

    def __repr__(self) -> str:
        from gameforge.engines.hearts.game import card_name

        on_table = " ".join(card_name(int(c)) for c in self.trick[: self.n_in_trick])
        after = f"after {on_table} (led by seat {self.leader})" if on_table else "to lead"
        broken = "hearts broken" if self.broken else "hearts not broken"
        hand, legal = " ".join(_names(self.hand)), " ".join(self.legal())
        head = f"Hearts trick {self.trick_no + 1}, seat {self.seat} to play {after}; {broken}"
        return f"{head}\n  hand:  {hand}\n  legal: {legal}"


BLOKUS_COLOURS = "BYRG"  # colour 0..3: blue, yellow, red, green (clockwise from top-left)


def blokus_position(moves: int = 0, seed: int = 0) -> BlokusPosition:
    """A Blokus position: the board after `moves` placements of the (seeded) rollout policy."""
    from gameforge.engines.blokus.game import new_state

    position = BlokusPosition(new_state())
    rng = _blokus_rng(seed, 0)
    for _ in range(moves):
        position = position.play(position.rollout_move(rng))
    return position


def _blokus_rng(seed: int, stream: int) -> np.ndarray:
    from gameforge.engines.blokus.mcts import seeded_rng

    return seeded_rng(seed, stream)


class BlokusPosition:
    """A four-player Blokus state (`engines.blokus.game`), to search and play from."""

    def __init__(self, state: np.ndarray) -> None:
        from gameforge.engines.blokus.game import tables

        self.state = state
        self.tables = tables()

    @property
    def to_move(self) -> int:
        """The colour to move (0..3)."""
        from gameforge.engines.blokus.game import TO_MOVE

        return int(self.state[TO_MOVE])

    @property
    def ply(self) -> int:
        """Placements so far."""
        from gameforge.engines.blokus.game import PLY

        return int(self.state[PLY])

    def scores(self) -> list[int]:
        """Each colour's advanced score so far (-1 per square still in hand)."""
        from gameforge.engines.blokus.game import PIECE_SIZES, scores

        out = np.zeros(4)
        scores(self.state, PIECE_SIZES, out)
        return [int(x) for x in out]

    def legal_moves(self) -> list[int]:
        """The placements the colour to move may play (indices into the placement table)."""
        from gameforge.engines.blokus.game import legal_moves

        t = self.tables
        out = np.zeros(t.n, np.int64)
        n = legal_moves(self.state, t, np.zeros(t.n + 1, np.int64), out, 1)
        return [int(m) for m in out[:n]]

    def rollout_move(self, rng: np.ndarray) -> int:
        """MCTS-MAXN's rollout policy's placement here (-1 if the colour is stuck)."""
        from gameforge.engines.blokus.game import CELLS
        from gameforge.engines.blokus.mcts import ROLLOUT_EPSILON, rollout_move

        t = self.tables
        scratch = (np.zeros(t.n + 1, np.int64), np.zeros(t.n, np.int64), np.zeros(CELLS, np.int64))
        return int(rollout_move(self.state.copy(), t, *scratch, ROLLOUT_EPSILON, rng))

    def play(self, move: int) -> BlokusPosition:
        """The position after placement `move` (checked) and the turn passing on."""
        from gameforge.engines.blokus.game import advance, is_legal, place

        if move < 0 or not is_legal(self.state, move, self.tables):
            raise ValueError(f"placement {move} is not legal for colour {self.to_move}")
        state = self.state.copy()
        place(state, move, self.tables)
        advance(state, self.tables)
        return BlokusPosition(state)

    def describe_move(self, move: int) -> dict[str, Any]:
        """A placement's piece name and cells (row, column)."""
        from gameforge.engines.blokus.game import PIECE_NAMES, SIDE

        cells = [int(c) for c in self.tables.cells[move] if c >= 0]
        return {"move": move, "piece": PIECE_NAMES[int(self.tables.piece[move])],
                "cells": [(c // SIDE, c % SIDE) for c in cells]}  # fmt: skip

    def search(self, sims: int = 200, seed: int = 0) -> BlokusSearch:
        """MCTS-MAXN (the paper's settings) from here: its move and every root move's values."""
        from gameforge.engines.blokus.mcts import History, Tree, mcts_move
        from gameforge.engines.blokus.selfplay import tree_capacity

        t = self.tables
        tree = Tree(tree_capacity(sims), t.n)
        move = mcts_move(self.state, t, tree, History(t.n), sims, _blokus_rng(seed, 1))
        first, count = int(tree.first_child[0]), int(tree.n_children[0])
        children = []
        for c in range(first, first + count):
            visits = int(tree.visits[c])
            value = [float(v) / visits if visits else 0.0 for v in tree.reward[c]]
            children.append({**self.describe_move(int(tree.move[c])), "visits": visits,
                             "value": value})  # fmt: skip
        children.sort(key=lambda row: (-row["visits"], -row["value"][self.to_move]))
        return BlokusSearch(self.to_move, move, sims, children)

    def __repr__(self) -> str:
        from gameforge.engines.blokus.game import EMPTY, OWNER, SIDE

        owner = self.state[OWNER : OWNER + SIDE * SIDE].reshape(SIDE, SIDE)
        rows = ["".join("." if v == EMPTY else BLOKUS_COLOURS[v] for v in row) for row in owner]
        scores = ", ".join(f"{BLOKUS_COLOURS[p]} {s}" for p, s in enumerate(self.scores()))
        head = (f"Blokus after {self.ply} placements, {BLOKUS_COLOURS[self.to_move]} "
                f"(colour {self.to_move}) to move; scores {scores}")  # fmt: skip
        return "\n".join([head, *rows])


@dataclass(frozen=True)
class BlokusSearch:
    """MCTS-MAXN's verdict at one position: the move played and every root move's statistics."""

    colour: int
    move: int
    sims: int
    children: list[dict[str, Any]]  # most visited first: move, piece, cells, visits, value[4]

    def __repr__(self) -> str:
        best = next(c for c in self.children if c["move"] == self.move)
        lines = [f"MCTS-MAXN, {self.sims} simulations, {len(self.children)} moves: colour "
                 f"{self.colour} plays {best['piece']} at {best['cells']}",
                 "  move   piece  visits  mean reward per colour (B Y R G)"]  # fmt: skip
        for c in self.children[:5]:
            values = " ".join(f"{v:.2f}" for v in c["value"])
            lines.append(f"  {c['move']:>5}  {c['piece']:<5}  {c['visits']:>6}  {values}")
        return "\n".join(lines)
