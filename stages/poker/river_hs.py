"""Stage `river-hs`: hand strength of every canonical last-round hand against all opponent hands.

Hands are indexed by the hand isomorphism of (hole cards, unordered board) — 123,156,254 classes
on full Hold'em — since river HS does not depend on the order the board was dealt in. The work
is split by canonical board: each chunk runs the sort-and-sweep kernel for a range of boards and
stores ``2*wins + ties`` per hole combination (resumable, Dask-parallel); a final pass scatters
those counts into the canonical-hand layout.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from math import ceil, comb
from typing import ClassVar

import numpy as np
from pydantic import Field

from gameforge.artifacts import Artifact, Build, write_chunk
from gameforge.engines.poker.acpc import GameDef
from gameforge.engines.poker.evaluator import EvalTables, get_tables
from gameforge.engines.poker.hand_strength import board_hs_counts, opponent_hands, scatter_to_hands
from gameforge.engines.poker.isomorphism import HandIndexer
from gameforge.stages.base import StageContext, StageError
from gameforge.stages.poker.params import GameParams
from gameforge.stages.poker.sizes import THREADS, hole_combos, last_round_boards, last_round_hands
from gameforge.stages.registry import stage
from gameforge.stages.resources import Footprint, nbytes

BY_BOARD = "hs_by_board"
RESULT = "hs_count"
RESULT_CHUNK = 1 << 22
UNSET = np.iinfo(np.uint16).max


class RiverHSParams(GameParams):
    """Which game, and how many canonical boards one chunk task handles."""

    boards_per_chunk: int = Field(
        default=1024, ge=1, le=1 << 20, description="Canonical boards one chunk task handles."
    )
    execution_only: ClassVar[frozenset[str]] = frozenset({"boards_per_chunk"})


def board_layout(game: GameDef) -> tuple[int, int]:
    """(hole cards, board cards) of a player's hand in the game's last round."""
    hole = game.num_hole_cards
    board = sum(game.num_board_cards)
    if hole not in (1, 2):
        raise StageError(f"river-hs supports games with 1 or 2 hole cards, not {hole}")
    if hole + board > 7:
        raise StageError(f"river-hs evaluates at most 7 cards, this game has {hole + board}")
    return hole, board


@lru_cache(maxsize=16)
def _indexer(rounds: tuple[int, ...], num_ranks: int, num_suits: int) -> HandIndexer:
    # Built once per process: chunk tasks on one worker share it.
    return HandIndexer(rounds, num_ranks, num_suits)


def _board_indexer(game: GameDef, board: int) -> HandIndexer | None:
    return _indexer((board,), game.num_ranks, game.num_suits) if board else None


def num_boards(game: GameDef) -> int:
    """Number of suit-canonical boards of the last round (1 when the game has no board)."""
    _, board = board_layout(game)
    indexer = _board_indexer(game, board)
    return indexer.size(0) if indexer else 1


def canonical_boards(game: GameDef, start: int, stop: int) -> np.ndarray:
    """Canonical boards ``start..stop-1`` as card arrays (n, board cards)."""
    _, board = board_layout(game)
    indexer = _board_indexer(game, board)
    if indexer is None:
        return np.zeros((stop - start, 0), dtype=np.int8)
    return indexer.unindex(np.arange(start, stop, dtype=np.int64))


def hand_indexer(game: GameDef) -> HandIndexer:
    """The indexer of (hole, unordered board) classes whose order `hs_count` follows."""
    hole, board = board_layout(game)
    rounds = (hole, board) if board else (hole,)
    return _indexer(rounds, game.num_ranks, game.num_suits)


def hand_strength(artifact: Artifact, hands: np.ndarray) -> np.ndarray:
    """HS in [0, 1] of last-round hands (rows: hole cards, then all board cards in any order)."""
    if artifact.stage != "river-hs":
        raise StageError(f"{artifact.key} is a {artifact.stage} artifact, not river-hs")
    game = RiverHSParams(game=artifact.params["game"]).game_def()
    hands = np.ascontiguousarray(hands, dtype=np.int8)
    index = hand_indexer(game).index(hands, validate=True)
    counts = artifact[RESULT].vindex[index]
    return np.asarray(counts, dtype=np.float64) / artifact.meta["summary"]["hs_denominator"]


def scatter_boards(
    ctx: StageContext, game: GameDef, by_board: str, per_chunk: int, out: np.ndarray, desc: str
) -> None:
    """Scatter a per-board array (boards, hole combinations, ...) into canonical-hand order.

    Runs chunk by chunk on threads of this process: the kernels release the GIL, and the
    threads share `out` without copies (disjoint boards write equal values to shared classes).
    """
    hole, _ = board_layout(game)
    indexer = hand_indexer(game)
    last = indexer.rounds - 1
    source = ctx.writer[by_board]
    n_boards = num_boards(game)
    n_chunks = ceil(n_boards / per_chunk)
    bar = ctx.progress.start(desc, n_chunks)

    def scatter(chunk: int) -> None:
        start = chunk * per_chunk
        stop = min(start + per_chunk, n_boards)
        rows = np.asarray(source[start:stop])
        boards = canonical_boards(game, start, stop)
        scatter_to_hands(boards, rows, game.deck_size, hole, indexer.tables.blob, last, out)
        bar.advance()

    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        list(pool.map(scatter, range(n_chunks)))
    bar.close()


def chunk_boards(
    game: GameDef, chunk_id: int, per_chunk: int
) -> tuple[int, np.ndarray, EvalTables]:
    """Hole-card count, canonical boards [chunk_id * per_chunk, ...) and evaluator tables."""
    hole, board = board_layout(game)
    start = chunk_id * per_chunk
    stop = min(start + per_chunk, num_boards(game))
    return (
        hole,
        canonical_boards(game, start, stop),
        get_tables(game.num_ranks, game.num_suits, hole + board),
    )


def compute_board_chunk(
    build: Build, array: str, chunk_id: int, game: GameDef, boards_per_chunk: int
) -> None:
    """Chunk task: HS counts of every hole combination on a range of canonical boards."""
    hole, boards, tables = chunk_boards(game, chunk_id, boards_per_chunk)
    write_chunk(build, array, chunk_id, board_hs_counts(boards, game.deck_size, hole, tables))


def _footprint(params: RiverHSParams, upstream: dict[str, dict]) -> Footprint:
    """Per-hand counts, and the board-by-hole counts written per chunk and scattered."""
    game = params.game_def()
    hands, boards, combos = last_round_hands(game), last_round_boards(game), hole_combos(game)
    chunk = nbytes((min(params.boards_per_chunk, boards), combos), 2)
    return Footprint(
        peak={"hs counts per hand": nbytes(hands, 2), "chunks in flight": 2 * THREADS * chunk},
        # the by-board counts live in the partial build until the scatter has read them
        stored={
            "hs_count": nbytes(hands, 2),
            "hs_by_board (until commit)": nbytes((boards, combos), 2),
        },
        work=boards * combos,  # hole pairs ranked, board by board
    )


@stage("river-hs", 1, RiverHSParams, footprint=_footprint)
def run(ctx: StageContext[RiverHSParams]) -> dict:
    """River hand strength (wins + ties/2) / opponent hands, per canonical hand.

    Compute per-board counts in chunks, then scatter them into canonical-hand order.
    """
    params = ctx.params
    game = params.game_def()
    hole, board = board_layout(game)
    n_boards = num_boards(game)
    per_chunk = params.boards_per_chunk
    n_combos = comb(game.deck_size - board, hole)
    ctx.writer.array(BY_BOARD, (n_boards, n_combos), np.uint16, chunks=(per_chunk, n_combos))
    n_chunks = ceil(n_boards / per_chunk)
    ctx.run_chunks(
        compute_board_chunk, BY_BOARD, n_chunks, args=(game, per_chunk), desc="river-hs boards"
    )

    indexer = hand_indexer(game)
    last = indexer.rounds - 1
    n_hands = indexer.size(last)
    counts = np.full(n_hands, UNSET, dtype=np.uint16)
    scatter_boards(ctx, game, BY_BOARD, per_chunk, counts, "river-hs scatter")
    if (counts == UNSET).any():
        raise RuntimeError(f"river-hs: {(counts == UNSET).sum()} canonical hands left unset")

    result = ctx.writer.array(RESULT, (n_hands,), np.uint16, chunks=(min(RESULT_CHUNK, n_hands),))
    result[:] = counts
    ctx.writer.delete_array(BY_BOARD)
    opponents = opponent_hands(game.deck_size, board, hole)
    return {
        "hands": int(n_hands),
        "boards": int(n_boards),
        "hole_cards": hole,
        "board_cards": board,
        "opponent_hands": int(opponents),
        "hs_denominator": int(2 * opponents),
        "layout": f"hand isomorphism index of (hole {hole}, unordered board {board})",
        "mean_hs_over_classes": float(counts.mean() / (2 * opponents)),
    }
