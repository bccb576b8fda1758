"""Stage `hsd`: Hand Strength Distribution of every canonical hand of every round before the last.

One array per round, `hsd_round<r>` (canonical hands of that round x bins), holding exact counts
of board completions per HS bin (normalise a row to get the paper's HSD). HS comes from the
`river-hs` artifact by lookup. Chunks of canonical hands run in parallel and resume.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from math import ceil, comb
from typing import ClassVar

import numpy as np
import zarr
from pydantic import Field

from gameforge.artifacts import Build, write_chunk
from gameforge.engines.poker.acpc import GameDef
from gameforge.engines.poker.hsd import RiverTable, hsd_counts
from gameforge.engines.poker.isomorphism import HandIndexer
from gameforge.stages.base import StageContext, StageError
from gameforge.stages.poker.params import GameParams, same_game
from gameforge.stages.poker.river_hs import RESULT as HS_ARRAY
from gameforge.stages.poker.river_hs import board_layout, hand_indexer
from gameforge.stages.poker.sizes import THREADS, canonical_hands, completions, last_round_hands
from gameforge.stages.registry import stage
from gameforge.stages.resources import Footprint, nbytes

WORK_PER_CHUNK = 1 << 25


class HSDParams(GameParams):
    """Which rounds (default: all before the last), how many bins, chunk size."""

    rounds: tuple[int, ...] | None = Field(
        default=None,
        description="Betting rounds to describe, 0 the first (None: every round before the last).",
    )
    bins: int = Field(
        default=50, ge=2, le=1000, description="Hand-strength bins of each histogram (the HSD)."
    )
    hands_per_chunk: int = Field(
        default=1 << 17, ge=1, description="Canonical hands one chunk task handles."
    )
    execution_only: ClassVar[frozenset[str]] = frozenset({"hands_per_chunk"})


def array_name(round_: int) -> str:
    """Name of the HSD array of a betting round."""
    return f"hsd_round{round_}"


def hsd_rounds(game: GameDef, rounds: tuple[int, ...] | None) -> tuple[int, ...]:
    """Validated betting rounds to describe (every round before the last by default)."""
    last = game.num_rounds - 1
    chosen = tuple(range(last)) if rounds is None else tuple(rounds)
    bad = [r for r in chosen if not 0 <= r < last]
    if bad:
        raise StageError(f"hsd: rounds must be in 0..{last - 1} (the last round has HS, not HSD)")
    return chosen


@lru_cache(maxsize=16)
def round_indexer(game: GameDef, round_: int) -> HandIndexer:
    """The indexer of a player's canonical hands in betting round `round_`."""
    groups = game.card_groups()[: game.group_of_round(round_) + 1]
    return HandIndexer(groups, game.num_ranks, game.num_suits)


def chunk_hands(game: GameDef, round_: int, chunk_id: int, per_chunk: int) -> np.ndarray:
    """The cards of canonical hands [chunk_id * per_chunk, ...) of round `round_`, one a row."""
    indexer = round_indexer(game, round_)
    rnd = indexer.rounds - 1
    start = chunk_id * per_chunk
    stop = min(start + per_chunk, indexer.size(rnd))
    return indexer.unindex(np.arange(start, stop, dtype=np.int64), rnd)


def count_dtype(max_count: int) -> np.dtype:
    """Smallest unsigned dtype holding `max_count`."""
    for dtype in (np.uint8, np.uint16, np.uint32):
        if max_count <= np.iinfo(dtype).max:
            return np.dtype(dtype)
    return np.dtype(np.uint64)


_ARRAY_CACHE: dict[str, np.ndarray] = {}


def cached_array(path: str) -> np.ndarray:
    """A stored array in memory, loaded once per process (the chunk tasks' threads share it).

    One array at a time: a stage's chunks all read the same one (river-hs counts, a bucket
    table), and the previous one is dropped so memory stays bounded.
    """
    if path not in _ARRAY_CACHE:
        _ARRAY_CACHE.clear()
        _ARRAY_CACHE[path] = np.asarray(zarr.open_array(path, mode="r")[:])
    return _ARRAY_CACHE[path]


@dataclass(frozen=True)
class RoundChunks:
    """What every chunk task of one round reads: the game, the round, the histogram bins, the
    canonical hands per chunk, and the river HS table (its path, and its denominator: 2 *
    opponent hands)."""

    game: GameDef
    round_: int
    bins: int
    per_chunk: int
    hs_path: str
    denominator: int


def compute_chunk(build: Build, array: str, chunk_id: int, task: RoundChunks) -> None:
    """Chunk task: HSD counts of canonical hands [chunk_id * per_chunk, ...) of one round."""
    game, round_, bins, per_chunk = task.game, task.round_, task.bins, task.per_chunk
    hs_path, denominator = task.hs_path, task.denominator
    hands = chunk_hands(game, round_, chunk_id, per_chunk)
    river = hand_indexer(game)
    seen = game.board_cards_through(round_)
    missing = sum(game.num_board_cards) - seen
    max_count = comb(game.deck_size - game.num_hole_cards - seen, missing)
    counts = hsd_counts(
        hands,
        game.num_hole_cards,
        game.deck_size,
        missing,
        RiverTable(river.tables.blob, river.rounds - 1, cached_array(hs_path), denominator),
        bins,
        count_dtype(max_count),
    )
    write_chunk(build, array, chunk_id, counts)


def _footprint(params: HSDParams, upstream: dict[str, dict]) -> Footprint:
    """The river HS table each worker loads, chunk counts in flight, and the histograms."""
    game = params.game_def()
    peak: dict[str, int] = {"river hs table": nbytes(last_round_hands(game), 2)}
    stored: dict[str, int] = {}
    for round_ in hsd_rounds(game, params.rounds):
        n = canonical_hands(game, round_)
        item = count_dtype(completions(game, round_)).itemsize
        rows = min(params.hands_per_chunk, n)
        peak[f"chunks in flight, round {round_}"] = 2 * THREADS * nbytes((rows, params.bins), item)
        stored[array_name(round_)] = nbytes((n, params.bins), item)
    worst = max((v for k, v in peak.items() if k.startswith("chunks")), default=0)
    peak = {k: v for k, v in peak.items() if not k.startswith("chunks") or v == worst}
    # every canonical hand's completions evaluated
    work = sum(
        canonical_hands(game, r) * completions(game, r) for r in hsd_rounds(game, params.rounds)
    )
    return Footprint(peak=peak, stored=stored, work=work)


@stage("hsd", 1, HSDParams, inputs={"river_hs": "river-hs"}, check_inputs=same_game,
       labels=("bins",), footprint=_footprint)  # fmt: skip
def run(ctx: StageContext[HSDParams]) -> dict:
    """HS histograms over all board completions, per canonical hand and round.

    Compute the HSD of every requested round, chunk by chunk.
    """
    params = ctx.params
    game = params.game_def()
    board_layout(game)  # same hand-shape limits as river-hs
    river_hs = ctx.inputs["river_hs"]
    hs_path = river_hs.array_url(HS_ARRAY)
    denominator = int(river_hs.meta["summary"]["hs_denominator"])
    summary: dict = {"bins": params.bins, "rounds": {}}
    for round_ in hsd_rounds(game, params.rounds):
        indexer = round_indexer(game, round_)
        n_hands = indexer.size(indexer.rounds - 1)
        seen = game.board_cards_through(round_)
        missing = sum(game.num_board_cards) - seen
        completions = comb(game.deck_size - game.num_hole_cards - seen, missing)
        # Bound the work per chunk (lookups), so preflop's few, costly hands still spread out.
        per_chunk = max(1, min(params.hands_per_chunk, n_hands, WORK_PER_CHUNK // completions))
        name = array_name(round_)
        ctx.writer.array(
            name, (n_hands, params.bins), count_dtype(completions), chunks=(per_chunk, params.bins)
        )
        ctx.run_chunks(
            compute_chunk,
            name,
            ceil(n_hands / per_chunk),
            args=(RoundChunks(game, round_, params.bins, per_chunk, hs_path, denominator),),
            desc=f"hsd round {round_}",
        )
        summary["rounds"][str(round_)] = {"hands": n_hands, "completions": completions}
    return summary
