"""Four-player Blokus: pieces, the fixed placement index, legal moves and scores, in numba.

The board is 20x20, cell = 20 * row + column. Each colour has the 21 polyominoes of 1 to 5
squares; their 91 distinct orientations placed on the empty board in every position give the
30,433 placements, which are the fixed action index (ordered by piece, orientation, then the
top-left of the bounding box). Colour p starts in corner `START[p]` (0 top-left, then clockwise),
its first piece must cover that corner, every later piece must touch one of its own pieces
corner to corner and never edge to edge. A colour that cannot move is out for the rest of the
game (the board only fills up); the game ends when all four are out.

A state is one flat uint8 array (`new_state`), so a search copies it with one memcpy:

- `OWNER` 400 cells: colour 0..3 or `EMPTY`;
- `PLACED_AT` 400 cells: the ply (placements so far) at which the cell was filled, `EMPTY` if not;
- `FLAGS` 4 x 400: per colour, bit `BLOCKED` (occupied, or edge-adjacent to its own squares)
  and bit `CORNER` (diagonal to its own squares, or its start corner); a cell where a piece of
  that colour may anchor is CORNER and not BLOCKED;
- `REMAINING` 4 x 21: 1 while the piece is unplaced; `OUT` 4; `LAST_PIECE` 4;
- `TO_MOVE`, `PLY` (placements so far).

Advanced score: -1 per unplaced square; +15 if all 21 pieces are placed, +5 more if the last one
placed was the monomino.
"""

from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

import numpy as np
from numba import njit

SIDE = 20
CELLS = SIDE * SIDE
N_PLAYERS = 4
N_PIECES = 21
EMPTY = 255
BLOCKED = 1
CORNER = 2
START = np.array([0, SIDE - 1, CELLS - 1, CELLS - SIDE], np.int64)  # clockwise from top-left

OWNER = 0
PLACED_AT = OWNER + CELLS
FLAGS = PLACED_AT + CELLS
REMAINING = FLAGS + N_PLAYERS * CELLS
OUT = REMAINING + N_PLAYERS * N_PIECES
LAST_PIECE = OUT + N_PLAYERS
TO_MOVE = LAST_PIECE + N_PLAYERS
PLY = TO_MOVE + 1
STATE_SIZE = PLY + 1

# The 21 pieces as (row, column) squares, monomino first, the pentominoes last.
PIECES: tuple[tuple[tuple[int, int], ...], ...] = (
    ((0, 0),),  # 1: monomino
    ((0, 0), (0, 1)),  # 2: domino
    ((0, 0), (0, 1), (0, 2)),  # 3: I3
    ((0, 0), (0, 1), (1, 0)),  # 3: V3
    ((0, 0), (0, 1), (0, 2), (0, 3)),  # 4: I4
    ((0, 0), (0, 1), (0, 2), (1, 0)),  # 4: L4
    ((0, 0), (0, 1), (0, 2), (1, 1)),  # 4: T4
    ((0, 0), (0, 1), (1, 0), (1, 1)),  # 4: O4
    ((0, 0), (0, 1), (1, 1), (1, 2)),  # 4: Z4
    ((0, 0), (0, 1), (0, 2), (0, 3), (0, 4)),  # 5: I5
    ((0, 0), (0, 1), (0, 2), (0, 3), (1, 0)),  # 5: L5
    ((0, 0), (0, 1), (0, 2), (1, 2), (1, 3)),  # 5: N
    ((0, 0), (0, 1), (0, 2), (1, 0), (1, 1)),  # 5: P
    ((0, 0), (0, 1), (0, 2), (1, 1), (2, 1)),  # 5: T5
    ((0, 0), (0, 2), (1, 0), (1, 1), (1, 2)),  # 5: U
    ((0, 0), (1, 0), (2, 0), (2, 1), (2, 2)),  # 5: V5
    ((0, 0), (1, 0), (1, 1), (2, 1), (2, 2)),  # 5: W
    ((0, 1), (1, 0), (1, 1), (1, 2), (2, 1)),  # 5: X
    ((0, 0), (0, 1), (0, 2), (0, 3), (1, 1)),  # 5: Y
    ((0, 0), (0, 1), (1, 1), (2, 1), (2, 2)),  # 5: Z5
    ((0, 1), (0, 2), (1, 0), (1, 1), (2, 1)),  # 5: F
)
PIECE_NAMES = ("1", "2", "I3", "V3", "I4", "L4", "T4", "O4", "Z4", "I5", "L5", "N", "P", "T5",
               "U", "V5", "W", "X", "Y", "Z5", "F")  # fmt: skip
PIECE_SIZES = np.array([len(p) for p in PIECES], np.int64)
TOTAL_SQUARES = int(PIECE_SIZES.sum())  # 89
MONOMINO = 0


def _normalise(cells: list[tuple[int, int]]) -> tuple[tuple[int, int], ...]:
    r0 = min(r for r, _ in cells)
    c0 = min(c for _, c in cells)
    return tuple(sorted((r - r0, c - c0) for r, c in cells))


def _transform(cells, k: int) -> list[tuple[int, int]]:
    """Symmetry k of the square (0..3 rotations by 90 degrees, 4..7 the same after a flip)."""
    out = []
    for r, c in cells:
        if k >= 4:
            c = -c
        for _ in range(k % 4):
            r, c = c, -r
        out.append((r, c))
    return out


def orientations(piece: int) -> list[tuple[tuple[int, int], ...]]:
    """The distinct orientations of a piece, in first-seen order over the 8 symmetries."""
    seen: list[tuple[tuple[int, int], ...]] = []
    for k in range(8):
        o = _normalise(_transform(PIECES[piece], k))
        if o not in seen:
            seen.append(o)
    return seen


class Tables(NamedTuple):
    """The placement index and its lookup tables; the kernels take it whole."""

    cells: np.ndarray  # [P, 5] cell of each square, -1 padded
    piece: np.ndarray  # [P]
    size: np.ndarray  # [P]
    by_cell: np.ndarray  # placements covering each cell, grouped by cell (CSR), largest first
    by_cell_start: np.ndarray  # [CELLS + 1]
    edges: np.ndarray  # [CELLS, 4] edge neighbours, -1 padded
    diagonals: np.ndarray  # [CELLS, 4] diagonal neighbours, -1 padded
    symmetry: np.ndarray  # [8, P] placement index under each board symmetry
    size_bound: np.ndarray  # [CELLS, 7]: index in by_cell of cell c's first placement < s squares
    piece_bound: np.ndarray  # [CELLS, 22]: cell c's placements of piece k are
    #                          by_cell[piece_bound[c, 20 - k] : piece_bound[c, 21 - k]]

    @property
    def n(self) -> int:
        """The number of placements (30,433)."""
        return int(self.piece.shape[0])


@lru_cache(maxsize=1)
def tables() -> Tables:
    """Build the placement index (about a second; cached per process)."""
    cells, piece = [], []
    for p in range(N_PIECES):
        for o in orientations(p):
            h = 1 + max(r for r, _ in o)
            w = 1 + max(c for _, c in o)
            for r0 in range(SIDE - h + 1):
                for c0 in range(SIDE - w + 1):
                    sq = [SIDE * (r0 + r) + c0 + c for r, c in o]
                    cells.append(sq + [-1] * (5 - len(sq)))
                    piece.append(p)
    cell_arr = np.array(cells, np.int64)
    piece_arr = np.array(piece, np.int64)
    size = PIECE_SIZES[piece_arr]
    lists: list[list[int]] = [[] for _ in range(CELLS)]
    for m in np.argsort(-piece_arr, kind="stable"):  # largest piece first, one piece together
        for c in cell_arr[m]:
            if c >= 0:
                lists[c].append(int(m))
    start = np.zeros(CELLS + 1, np.int64)
    start[1:] = np.cumsum([len(x) for x in lists])
    by_cell = np.array([m for x in lists for m in x], np.int64)
    edges = -np.ones((CELLS, 4), np.int64)
    diagonals = -np.ones((CELLS, 4), np.int64)
    for c in range(CELLS):
        r, q = divmod(c, SIDE)
        for j, (dr, dq) in enumerate(((-1, 0), (1, 0), (0, -1), (0, 1))):
            if 0 <= r + dr < SIDE and 0 <= q + dq < SIDE:
                edges[c, j] = SIDE * (r + dr) + q + dq
        for j, (dr, dq) in enumerate(((-1, -1), (-1, 1), (1, -1), (1, 1))):
            if 0 <= r + dr < SIDE and 0 <= q + dq < SIDE:
                diagonals[c, j] = SIDE * (r + dr) + q + dq
    index = {frozenset(int(c) for c in row if c >= 0): m for m, row in enumerate(cell_arr)}
    symmetry = np.zeros((8, len(cell_arr)), np.int64)
    cell_map = board_symmetries()
    for k in range(8):
        for m, row in enumerate(cell_arr):
            symmetry[k, m] = index[frozenset(int(cell_map[k, c]) for c in row if c >= 0)]
    size_bound = np.zeros((CELLS, 7), np.int64)
    for c in range(CELLS):
        sizes = size[by_cell[start[c] : start[c + 1]]]  # descending
        for s in range(7):
            size_bound[c, s] = start[c] + int((sizes >= s).sum())
    piece_bound = np.zeros((CELLS, N_PIECES + 1), np.int64)
    for c in range(CELLS):
        pieces = piece_arr[by_cell[start[c] : start[c + 1]]]  # descending
        for j in range(N_PIECES + 1):
            piece_bound[c, j] = start[c] + int((pieces > N_PIECES - 1 - j).sum())
    return Tables(cell_arr, piece_arr, size, by_cell, start, edges, diagonals, symmetry,
                  size_bound, piece_bound)  # fmt: skip


@lru_cache(maxsize=1)
def board_symmetries() -> np.ndarray:
    """[8, CELLS]: the cell each cell goes to under symmetry k (k as in `_transform`); cached,
    do not modify."""
    out = np.zeros((8, CELLS), np.int64)
    for k in range(8):
        for c in range(CELLS):
            r, q = divmod(c, SIDE)
            ((tr, tq),) = _transform([(2 * r - (SIDE - 1), 2 * q - (SIDE - 1))], k)  # centred
            out[k, c] = SIDE * ((tr + SIDE - 1) // 2) + (tq + SIDE - 1) // 2
    return out


def new_state() -> np.ndarray:
    """The empty board, colour 0 to move."""
    s = np.zeros(STATE_SIZE, np.uint8)
    s[OWNER:PLACED_AT] = EMPTY
    s[PLACED_AT:FLAGS] = EMPTY
    for p in range(N_PLAYERS):
        s[FLAGS + p * CELLS + START[p]] = CORNER
    s[REMAINING:OUT] = 1
    s[LAST_PIECE:TO_MOVE] = EMPTY
    return s


@njit(cache=True, nogil=True)
def is_legal(s: np.ndarray, m: int, t: Tables) -> bool:
    """Whether colour `s[TO_MOVE]` may play placement m."""
    p = s[TO_MOVE]
    if s[REMAINING + p * N_PIECES + t.piece[m]] == 0:
        return False
    base = FLAGS + p * CELLS
    anchored = False
    for j in range(5):
        c = t.cells[m, j]
        if c < 0:
            break
        f = s[base + c]
        if f & BLOCKED:
            return False
        if f & CORNER:
            anchored = True
    return anchored


@njit(cache=True, nogil=True, inline="always")
def _fits(s: np.ndarray, base: int, m: int, cells: np.ndarray) -> bool:
    """No square of m is blocked for the colour whose flags start at `base`."""
    for j in range(5):
        c = cells[m, j]
        if c < 0:
            break
        if s[base + c] & BLOCKED:
            return False
    return True


@njit(cache=True, nogil=True)
def legal_moves(
    s: np.ndarray,
    t: Tables,
    stamp: np.ndarray,
    out: np.ndarray,
    min_size: int = 1,
) -> int:
    """Write the legal placements of the colour to move (of at least `min_size` squares) to
    `out`, return how many. `stamp` is an int64 [P + 1] scratch array (last entry: the counter).

    Every anchor (a CORNER cell that is not BLOCKED) is tried with the placements covering it
    of the pieces still in hand, largest first; a placement through several anchors is kept
    once.
    """
    p = s[TO_MOVE]
    base = FLAGS + p * CELLS
    hand = REMAINING + p * N_PIECES
    stamp[-1] += 1
    token = stamp[-1]
    n = 0
    for c in range(CELLS):
        if s[base + c] != CORNER:
            continue
        for j in range(N_PIECES):
            k = N_PIECES - 1 - j
            if PIECE_SIZES[k] < min_size:
                break
            if s[hand + k] == 0:
                continue
            for i in range(t.piece_bound[c, j], t.piece_bound[c, j + 1]):
                m = t.by_cell[i]
                if stamp[m] == token:
                    continue
                stamp[m] = token
                if _fits(s, base, m, t.cells):
                    out[n] = m
                    n += 1
    return n


@njit(cache=True, nogil=True)
def has_move(s: np.ndarray, t: Tables) -> bool:
    """Whether the colour to move has any legal placement."""
    p = s[TO_MOVE]
    base = FLAGS + p * CELLS
    hand = REMAINING + p * N_PIECES
    for c in range(CELLS):
        if s[base + c] != CORNER:
            continue
        for j in range(N_PIECES):
            if s[hand + N_PIECES - 1 - j] == 0:
                continue
            for i in range(t.piece_bound[c, j], t.piece_bound[c, j + 1]):
                if _fits(s, base, t.by_cell[i], t.cells):
                    return True
    return False


@njit(cache=True, nogil=True)
def place(s: np.ndarray, m: int, t: Tables) -> None:
    """Play placement m for the colour to move (not checked; see `is_legal`)."""
    p = s[TO_MOVE]
    base = FLAGS + p * CELLS
    ply = s[PLY]
    for j in range(5):
        c = t.cells[m, j]
        if c < 0:
            break
        s[OWNER + c] = p
        s[PLACED_AT + c] = ply
        for q in range(N_PLAYERS):
            s[FLAGS + q * CELLS + c] |= BLOCKED
    for j in range(5):
        c = t.cells[m, j]
        if c < 0:
            break
        for e in range(4):
            d = t.edges[c, e]
            if d >= 0:
                s[base + d] |= BLOCKED
            d = t.diagonals[c, e]
            if d >= 0:
                s[base + d] |= CORNER
    s[REMAINING + p * N_PIECES + t.piece[m]] = 0
    s[LAST_PIECE + p] = t.piece[m]
    s[PLY] = ply + 1


@njit(cache=True, nogil=True)
def advance(s: np.ndarray, t: Tables) -> bool:
    """Pass the turn to the next colour that can move, marking the stuck ones out; False when
    the game is over. Call after `place` (and once on a state whose mover may be stuck)."""
    p = s[TO_MOVE]
    for i in range(1, N_PLAYERS + 1):
        q = (p + i) % N_PLAYERS
        if s[OUT + q]:
            continue
        s[TO_MOVE] = q
        if has_move(s, t):
            return True
        s[OUT + q] = 1
    return False


@njit(cache=True, nogil=True)
def scores(s: np.ndarray, sizes: np.ndarray, out: np.ndarray) -> None:
    """The advanced score of each colour into out[4]."""
    for p in range(N_PLAYERS):
        left = 0
        for k in range(N_PIECES):
            if s[REMAINING + p * N_PIECES + k]:
                left += sizes[k]
        if left == 0:
            out[p] = 15 + (5 if s[LAST_PIECE + p] == MONOMINO else 0)
        else:
            out[p] = -left


@njit(cache=True, nogil=True)
def outcome(s: np.ndarray, sizes: np.ndarray, z: np.ndarray) -> None:
    """z[p] = +1 for the sole top score, 0 for a shared top score, -1 otherwise."""
    sc = np.zeros(N_PLAYERS)
    scores(s, sizes, sc)
    top = sc.max()
    winners = 0
    for p in range(N_PLAYERS):
        if sc[p] == top:
            winners += 1
    for p in range(N_PLAYERS):
        z[p] = -1.0 if sc[p] < top else (1.0 if winners == 1 else 0.0)


@njit(cache=True, nogil=True)
def margin_values(sc: np.ndarray, margin: float, z: np.ndarray) -> None:
    """z[p] = tanh((score p - the best other score) / margin): the sign of `outcome`, graded by
    how far ahead or behind (a lower-variance utility than win/loss; beyond the paper)."""
    for p in range(N_PLAYERS):
        best_other = -1e9
        for q in range(N_PLAYERS):
            if q != p:
                best_other = max(best_other, sc[q])
        z[p] = np.tanh((sc[p] - best_other) / margin)


@njit(cache=True, nogil=True)
def utility(s: np.ndarray, sizes: np.ndarray, margin: float, z: np.ndarray) -> None:
    """The final position's value per colour: `outcome` (margin 0, the paper's win/loss) or
    `margin_values` of the scores."""
    if margin <= 0:
        outcome(s, sizes, z)
        return
    sc = np.zeros(N_PLAYERS)
    scores(s, sizes, sc)
    margin_values(sc, margin, z)
