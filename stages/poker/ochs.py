"""Stage `ochs`: Opponent Cluster Hand Strength of every canonical last-round hand.

For each (hole, unordered board) class — the layout of `river-hs` — a vector of k values: the
HS against the opponent hole cards of each opponent cluster, card removal respected. Stored as
uint16 fixed point (value * 65535, rounded). Computed per canonical board in resumable chunks,
then scattered into canonical-hand order.
"""

from __future__ import annotations

from itertools import combinations
from math import ceil, comb
from typing import ClassVar

import numpy as np
from pydantic import Field

from gameforge.artifacts import Build, write_chunk
from gameforge.engines.poker.acpc import GameDef
from gameforge.engines.poker.ochs import board_ochs
from gameforge.stages.base import StageContext
from gameforge.stages.poker.hsd import round_indexer
from gameforge.stages.poker.params import GameParams, same_game
from gameforge.stages.poker.river_hs import (
    board_layout,
    chunk_boards,
    hand_indexer,
    num_boards,
    scatter_boards,
)
from gameforge.stages.poker.sizes import THREADS, hole_combos, last_round_boards, last_round_hands
from gameforge.stages.registry import stage
from gameforge.stages.resources import Footprint, nbytes

BY_BOARD = "ochs_by_board"
RESULT = "ochs"
SCALE = 65535
RESULT_CHUNK_ROWS = 1 << 19


class OCHSParams(GameParams):
    """Which game, and how many canonical boards one chunk task handles."""

    boards_per_chunk: int = Field(
        default=512, ge=1, le=1 << 20, description="Canonical boards one chunk task handles."
    )
    execution_only: ClassVar[frozenset[str]] = frozenset({"boards_per_chunk"})


def hole_cluster_table(game: GameDef, clusters: np.ndarray) -> np.ndarray:
    """Opponent cluster of every hole-card set, by code c0 (one card) or c0 * deck + c1."""
    hole = game.num_hole_cards
    rows = np.array(list(combinations(range(game.deck_size), hole)), dtype=np.int8)
    labels = clusters[round_indexer(game, 0).index(rows, 0)]
    table = np.zeros(game.deck_size**hole, dtype=np.int64)
    codes = rows[:, 0].astype(np.int64)
    if hole == 2:
        codes = codes * game.deck_size + rows[:, 1]
    table[codes] = labels
    return table


def compute_board_chunk(
    build: Build,
    array: str,
    chunk_id: int,
    game: GameDef,
    per_chunk: int,
    table: np.ndarray,
    k: int,
) -> None:
    """Chunk task: OCHS of every hole combination on a range of canonical boards."""
    hole, boards, tables = chunk_boards(game, chunk_id, per_chunk)
    values = board_ochs(boards, game.deck_size, hole, table, k, tables)
    write_chunk(build, array, chunk_id, np.rint(values * SCALE).astype(np.uint16))


def _footprint(params: OCHSParams, upstream: dict[str, dict]) -> Footprint:
    """Per-hand OCHS of every opponent cluster, chunk arrays in flight, and the by-board
    counts that stay in the partial build until scattered."""
    game = params.game_def()
    k = int(upstream.get("opponent_clusters", {}).get("k", 8))
    hands, boards, combos = last_round_hands(game), last_round_boards(game), hole_combos(game)
    chunk = nbytes((min(params.boards_per_chunk, boards), combos, k), 2)
    return Footprint(
        peak={"ochs per hand": nbytes((hands, k), 2), "chunks in flight": 2 * THREADS * chunk},
        stored={
            RESULT: nbytes((hands, k), 2),
            f"{BY_BOARD} (until commit)": nbytes((boards, combos, k), 2),
        },
        work=boards * combos * k,  # each hole pair's equity against each cluster, per board
    )


@stage("ochs", 1, OCHSParams, inputs={"opponent_clusters": "opponent-clusters"},
       check_inputs=same_game, footprint=_footprint)  # fmt: skip
def run(ctx: StageContext[OCHSParams]) -> dict:
    """Last-round HS against each opponent cluster, per canonical hand.

    OCHS per board in chunks, then scattered into canonical-hand order.
    """
    params = ctx.params
    game = params.game_def()
    hole, board = board_layout(game)
    clusters_artifact = ctx.inputs["opponent_clusters"]
    clusters = np.asarray(clusters_artifact["cluster"][:]).astype(np.int64)
    k = int(clusters_artifact.meta["summary"]["k"])
    table = hole_cluster_table(game, clusters)
    n_boards = num_boards(game)
    per_chunk = params.boards_per_chunk
    n_combos = comb(game.deck_size - board, hole)
    ctx.writer.array(BY_BOARD, (n_boards, n_combos, k), np.uint16, chunks=(per_chunk, n_combos, k))
    n_chunks = ceil(n_boards / per_chunk)
    ctx.run_chunks(
        compute_board_chunk,
        BY_BOARD,
        n_chunks,
        args=(game, per_chunk, table, k),
        desc="ochs boards",
    )
    indexer = hand_indexer(game)
    last = indexer.rounds - 1
    n_hands = indexer.size(last)
    values = np.zeros((n_hands, k), dtype=np.uint16)
    scatter_boards(ctx, game, BY_BOARD, per_chunk, values, "ochs scatter")
    rows_per_chunk = min(RESULT_CHUNK_ROWS, n_hands)
    result = ctx.writer.array(RESULT, (n_hands, k), np.uint16, chunks=(rows_per_chunk, k))
    result[:] = values
    ctx.writer.delete_array(BY_BOARD)
    return {
        "hands": int(n_hands),
        "k": k,
        "scale": SCALE,
        "layout": f"hand isomorphism index of (hole {hole}, unordered board {board})",
        "mean_per_cluster": (values.mean(axis=0) / SCALE).round(4).tolist(),
    }
