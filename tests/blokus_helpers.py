"""Helpers shared by the Blokus tests: the engine's legal moves, a move, scores and outcome,
and a hand-built position with exactly one winning move."""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from gameforge.engines.blokus import game as g


def T():
    return g.tables()


@lru_cache(maxsize=1)
def scratch() -> tuple[np.ndarray, np.ndarray]:
    n = T().n
    return np.zeros(n + 1, np.int64), np.zeros(n, np.int64)


def engine_legal(s: np.ndarray, colour: int | None = None, min_size: int = 1) -> set[int]:
    """The engine's legal placements for `colour` (default: the colour to move)."""
    t = T()
    if colour is not None:
        s = s.copy()
        s[g.TO_MOVE] = colour
    stamp, out = scratch()
    n = g.legal_moves(s, t, stamp, out, min_size)
    return {int(m) for m in out[:n]}


def step(s: np.ndarray, m: int) -> bool:
    """Place m for the colour to move and pass the turn; False when the game is over."""
    t = T()
    g.place(s, m, t)
    return bool(g.advance(s, t))


def score_of(s: np.ndarray) -> np.ndarray:
    out = np.zeros(g.N_PLAYERS)
    g.scores(s, g.PIECE_SIZES, out)
    return out


def outcome_of(s: np.ndarray) -> np.ndarray:
    z = np.zeros(g.N_PLAYERS)
    g.outcome(s, g.PIECE_SIZES, z)
    return z


def piece_index(name: str) -> int:
    return g.PIECE_NAMES.index(name)


def one_winning_move_position() -> tuple[np.ndarray, int, int]:
    """Colour 0 to move with the monomino and the domino left, colour 1 out on +15, colours 2
    and 3 out on -89. Board: colour 1 everywhere but (11,11), (11,12), (12,13); colour 0 on
    (10,10). Domino (11,11)-(11,12) then monomino (12,13) scores +20 (sole win); the monomino
    on (11,11) leaves no room for the domino (-2, a loss). Returns (state, win, loss)."""
    t = T()
    s = g.new_state()
    hole = {g.SIDE * 11 + 11, g.SIDE * 11 + 12, g.SIDE * 12 + 13}
    mine = g.SIDE * 10 + 10
    for c in range(g.CELLS):
        if c in hole:
            continue
        s[g.TO_MOVE] = 0 if c == mine else 1
        g.place(s, c, t)  # monomino placement m == cell c
    s[g.PLY] = 60
    s[g.PLACED_AT : g.PLACED_AT + g.CELLS] = np.where(
        s[g.OWNER : g.OWNER + g.CELLS] == g.EMPTY, g.EMPTY, 0
    )
    s[g.REMAINING : g.REMAINING + g.N_PLAYERS * g.N_PIECES] = 1
    s[g.REMAINING : g.REMAINING + g.N_PIECES] = 0
    s[g.REMAINING + g.MONOMINO] = 1
    s[g.REMAINING + piece_index("2")] = 1
    s[g.REMAINING + g.N_PIECES : g.REMAINING + 2 * g.N_PIECES] = 0
    last = [piece_index("F"), piece_index("P"), g.EMPTY, g.EMPTY]
    s[g.LAST_PIECE : g.LAST_PIECE + g.N_PLAYERS] = last
    s[g.OUT : g.OUT + g.N_PLAYERS] = [0, 1, 1, 1]
    s[g.TO_MOVE] = 0
    cells = {frozenset(int(c) for c in row if c >= 0): m for m, row in enumerate(t.cells)}
    win = cells[frozenset({g.SIDE * 11 + 11, g.SIDE * 11 + 12})]
    loss = cells[frozenset({g.SIDE * 11 + 11})]
    return s, win, loss
