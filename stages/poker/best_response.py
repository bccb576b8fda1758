"""Stage `best-response`: the exact exploitability of a `cfr` strategy in the real game.

For each seat, the value of a best response of the real (unabstracted) game against the other
seat's average strategy, streamed canonical board by canonical board of the first board round
(`engines.poker.best_response`): exact, no sampling. Exploitability is the mean over the two
seats of the best-response value (the usual convention for a strategy profile playing both
seats; the game value averages to zero over seats), in chips and in mbb/g.

Chunks of canonical boards run in parallel (Dask) and resume: a killed run continues from its
finished chunks and ends bit-identical. Output arrays: `values` (per seat, chips per game),
`board_cards` and `board_weight` (each canonical board and the raw boards it stands for),
`board_contribution` (chips each board's orbit adds to each seat's value, given the best
response's play before that board), `fold_contribution` (chips from hands over before any board)
and `board_values` (per board, first-round entry, seat and hand class: the chunks' raw sums).
"""

from __future__ import annotations

import threading
import time
from math import ceil, comb, factorial
from typing import Any, ClassVar, Literal

import numpy as np
from pydantic import Field

from gameforge.artifacts import Artifact, ArtifactStore, Build, write_chunk
from gameforge.engines.common.stats import Z_TWO_SIDED_95, one_sided_lower_bound
from gameforge.engines.poker.acpc import GameDef
from gameforge.engines.poker.best_response import BestResponse
from gameforge.engines.poker.betting import tree_size
from gameforge.engines.poker.mccfr import lossless_tables
from gameforge.stages.base import StageContext
from gameforge.stages.poker.params import TreeGameParams, same_game
from gameforge.stages.poker.sizes import (
    THREADS,
    bucket_table_bytes,
    buckets_per_round,
    infosets,
)
from gameforge.stages.poker.strategy import StrategyView
from gameforge.stages.registry import stage
from gameforge.stages.resources import Footprint, nbytes

SUMS = "board_values"


class BestResponseParams(TreeGameParams):
    """The game (it must be the strategy's); the last round's sums' precision; canonical boards
    per chunk (execution only)."""

    # float32 trades about 1e-7 relative rounding (measured in bench/BENCHMARKS.md) for less
    # memory traffic
    precision: Literal["float64", "float32"] = Field(
        default="float64",
        description="Float type of the last round's sums (boards are summed in float64 either"
        " way).",
    )
    boards_per_chunk: int = Field(
        default=4, ge=1, description="Canonical boards of the first board round per chunk task."
    )
    execution_only: ClassVar[frozenset[str]] = frozenset({"boards_per_chunk"})
    new_at_default: ClassVar[dict[str, tuple[str, ...]]] = {"precision": ("precision",)}


_ENGINES: dict[tuple[str, str, str], BestResponse] = {}
_ENGINES_LOCK = threading.Lock()


def engine_for(
    store: ArtifactStore, artifact: Artifact, precision: str = "float64"
) -> BestResponse:
    """A best-response engine for a stored strategy, built once per process (chunk tasks on
    the same worker share the strategy and bucket tables in memory)."""
    cache_key = (store.location, artifact.key, precision)
    with _ENGINES_LOCK:
        if cache_key not in _ENGINES:
            _ENGINES.clear()  # one strategy at a time: each holds GBs at the paper's scale
            view = StrategyView(store, artifact)
            tables = (
                view.abstraction.deal_tables()
                if view.abstraction is not None
                else lossless_tables(view.game)
            )
            strategy = np.ascontiguousarray(np.asarray(view.average[:]), dtype=np.float32)
            _ENGINES[cache_key] = BestResponse(
                view.game, view.tree, strategy, view.offsets, view.ndec, tables.lookup,
                tables.evaluator, precision,
            )  # fmt: skip
        return _ENGINES[cache_key]


def compute_chunk(
    build: Build,
    array: str,
    chunk_id: int,
    store_root: str,
    cfr_key: str,
    per_chunk: int,
    precision: str,
) -> None:
    """Chunk task: class sums of the values under canonical boards [chunk_id * per_chunk, ...)."""
    store = ArtifactStore(store_root)
    br = engine_for(store, store.open(cfr_key), precision)
    _, entry_reach = br.top_reach()
    boards = br.boards.cards[chunk_id * per_chunk : (chunk_id + 1) * per_chunk]
    sums = np.stack([br.class_sums(br.board_values(board, entry_reach)) for board in boards])
    write_chunk(build, array, chunk_id, sums)


def _footprint(params: BestResponseParams, upstream: dict[str, dict]) -> Footprint:
    """The strategy and its bucket lookups, the last round's strategy again in lanes, per-board
    working arrays of each thread, and the class sums of every canonical board of the first
    board round."""
    game = params.game_def()
    held = strategy_bytes(upstream.get("strategy", {}), game)
    last_round = (
        tree_size(game).decisions[-1] * buckets_per_round(game, upstream.get("strategy", {}))[-1]
    )
    # padding: the last group of each subtree shape fills its lanes (1.6% on Hold'em)
    held["last round's strategy in lanes"] = nbytes((last_round, 3), 4) * 65 // 64
    hands = comb(game.deck_size, game.num_hole_cards)
    decisions = sum(tree_size(game).decisions)
    flop = game.card_groups()[1] if len(game.card_groups()) > 1 else 0
    boards = comb(game.deck_size, flop) // max(1, factorial(game.num_suits) // 2)
    sums = nbytes((boards, 8, 2, hands), 8)
    return Footprint(
        peak={**held, "per-board reach and values": THREADS * nbytes((decisions, hands), 16),
              "class sums": 2 * sums},
        stored={"board_values (until commit)": sums, "values and contributions": sums // 4},
        # every full board, each hand's values through the tree's decisions
        work=comb(game.deck_size, sum(game.num_board_cards)) * hands * decisions,
    )  # fmt: skip


@stage("best-response", 3, BestResponseParams, inputs={"strategy": "cfr"},
       check_inputs=same_game, footprint=_footprint)  # fmt: skip
def run(ctx: StageContext[BestResponseParams]) -> dict[str, Any]:
    """Exact best response in the real game against a cfr strategy; its exploitability.

    Stream the canonical boards in chunks, then combine both seats' values.
    """
    params = ctx.params
    strategy = ctx.inputs["strategy"]
    store = strategy.store  # the store its abstraction is in
    t0 = time.monotonic()
    br = engine_for(store, strategy, params.precision)
    top, entry_reach = br.top_reach()
    n_boards = int(br.boards.weight.size)
    per_chunk = min(params.boards_per_chunk, n_boards)
    shape = (n_boards, entry_reach.shape[0], 2, int(br.class_size.size))
    ctx.writer.array(SUMS, shape, np.float64, chunks=(per_chunk, *shape[1:]))
    walked = br.walked_boards()
    n_chunks = ceil(n_boards / per_chunk)
    ctx.run_chunks(
        compute_chunk,
        SUMS,
        n_chunks,
        args=(store.location, strategy.key, per_chunk, params.precision),
        desc=f"best response: complete boards walked under {n_boards:,} canonical boards",
        weights=[int(walked[c * per_chunk : (c + 1) * per_chunk].sum()) for c in range(n_chunks)],
    )
    sums = np.asarray(ctx.writer[SUMS][:])
    result = br.combine(top, entry_reach, sums)
    w = ctx.writer
    w.write_arrays(
        {
            "values": result.values,
            "board_cards": br.boards.cards,
            "board_weight": br.boards.weight,
            "board_contribution": result.board_contribution,
            "fold_contribution": result.fold_contribution,
        }
    )
    big_blind = float(max(br.game.blind))
    exploitability = float(result.values.mean())
    return {
        "strategy": strategy.key,
        "values_chips": [float(v) for v in result.values],
        "values_mbb_per_game": [float(v) / big_blind * 1000.0 for v in result.values],
        "exploitability_chips": exploitability,
        "exploitability_mbb_per_game": exploitability / big_blind * 1000.0,
        "convention": "mean over the two seats of the best response's value, per game",
        "precision": params.precision,
        "canonical_boards": n_boards,
        "big_blind": big_blind,
        "seconds": round(time.monotonic() - t0, 3),
    }


def measured_exploitability(store: ArtifactStore, dependents: list[str]) -> dict[str, Any]:
    """What the store knows of a strategy's real-game exploitability, from the artifacts that
    use it (`store.dependents(key)`): the exact figure (a `best-response` artifact) and LBR's
    runs (`lbr` artifacts) as (key, mean, one-sided 95% lower bound, deals), mbb/g."""
    found: dict[str, Any] = {}
    for key in dependents:
        other = store.open(key)
        summary = other.meta.get("summary", {})
        if other.stage == "best-response":
            found["exact_mbb_per_game"] = summary["exploitability_mbb_per_game"]
            found["exact_key"] = key
        elif other.stage == "lbr":
            mean = summary["lbr_mbb_per_game"]
            # an lbr artifact before version 2 stored only the two-sided half-width
            se = summary.get(
                "standard_error_mbb_per_game",
                summary["half_width_95_mbb_per_game"] / Z_TWO_SIDED_95,
            )
            lower = one_sided_lower_bound(mean, se)
            found.setdefault("lbr", []).append((key, mean, lower, summary["deals"]))
    return found


def strategy_bytes(upstream: dict[str, dict], game: GameDef) -> dict[str, int]:
    """A stored strategy opened for play: its float32 average and its bucket lookups."""
    sizes = buckets_per_round(game, upstream)
    inputs = getattr(upstream, "inputs", {})
    abstract = "middle_buckets" in inputs and "river_buckets" in inputs
    return {
        "strategy": nbytes((infosets(game, sizes), 3), 4),
        "bucket lookups": bucket_table_bytes(game, abstract),
    }
