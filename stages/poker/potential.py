"""Stage `potential-buckets`: potential-aware buckets (Ganzfried & Sandholm 2014), last to first.

The round before the last (the turn) is described by each hand's histogram over the last
round's buckets (`ochs-buckets`) across its completions, with the Euclidean distance between
OCHS centroids as ground distance. Each earlier round (the flop) is then described by its
histogram over the potential-aware buckets just built for the round after, with the greedy EMD
between those buckets' centroids as ground distance. Clustering is k-means under the greedy
EMD approximation (`engines.poker.potential`). Features are chunked and resumable, k-means is
checkpointed, bucket ids go from the weakest centroid (lowest mean next-round bucket) up.

No closed form gives the histogram that minimises the members' summed greedy EMD, and the mean
does not: with mean centroids Lloyd's objective rose right after the k-means++ seeds and never
came back. Each centroid step therefore keeps, per cluster, the best of its current centre,
its members' mean and the members nearest that mean (`best_centres`), so the objective never
rises; the summary says so (`centroid`, `objective_monotone`: true) with the objective of every
iteration, and checks the greedy EMD against the exact one (POT) on a sample of hands and their
centroids (`emd_check`).

This replaces `hsd-buckets` for the middle rounds: `CardAbstraction` accepts either.
"""

from __future__ import annotations

import os
from math import ceil, comb
from typing import Any, ClassVar

import numpy as np
from pydantic import Field

from gameforge.artifacts import Build, write_chunk
from gameforge.engines.common.kmeans import KMeansOptions
from gameforge.engines.poker.acpc import GameDef
from gameforge.engines.poker.potential import (
    PotentialState,
    approx_emd,
    exact_emd,
    ground_from_centroids,
    ground_from_histograms,
    neighbour_order,
    next_round_buckets,
    potential_kmeans,
    to_histograms,
)
from gameforge.stages.base import StageContext, StageError
from gameforge.stages.poker.buckets import (
    LloydParams,
    bucket_dtype,
    iteration_checkpoints,
    merge_rows,
)
from gameforge.stages.poker.hsd import cached_array, chunk_hands, round_indexer
from gameforge.stages.poker.params import GameParams, same_game
from gameforge.stages.poker.river_hs import hand_indexer
from gameforge.stages.poker.sizes import THREADS, canonical_hands, completions, last_round_hands
from gameforge.stages.registry import stage
from gameforge.stages.resources import Footprint, nbytes

WORK_PER_CHUNK = 1 << 22  # next-round lookups per feature chunk
CENTROID_RULE = "best of the current centre, the members' mean and the members nearest it"
EMD_CHECK_PAIRS = 200  # hands per round whose greedy EMD to their centroid is checked exactly


class PotentialParams(GameParams, LloydParams):
    """k per round, the first round to bucket (down from the second-to-last), k-means knobs."""

    first_round: int = Field(
        default=1,
        ge=1,
        description="The earliest round to bucket (rounds from the second-to-last down to it).",
    )
    hands_per_chunk: int = Field(
        default=1 << 16,
        ge=1,
        description="Canonical hands one feature chunk task handles at most.",
    )
    execution_only: ClassVar[frozenset[str]] = frozenset({"hands_per_chunk", "checkpoint_seconds"})


def feature_name(round_: int) -> str:
    """Array holding each hand's sorted next-round bucket ids over its completions."""
    return f"next_round{round_}"


def next_indexer(game: GameDef, round_: int):  # type: ignore[no-untyped-def]
    """The indexer whose canonical index the next round's bucket table follows."""
    return (
        hand_indexer(game) if round_ + 1 == game.num_rounds - 1 else round_indexer(game, round_ + 1)
    )


def compute_chunk(
    build: Build,
    array: str,
    chunk_id: int,
    game: GameDef,
    round_: int,
    per_chunk: int,
    table_path: str,
) -> None:
    """Chunk task: next-round bucket ids of canonical hands [chunk_id * per_chunk, ...)."""
    hands = chunk_hands(game, round_, chunk_id, per_chunk)
    following = next_indexer(game, round_)
    num_new = game.board_cards_through(round_ + 1) - game.board_cards_through(round_)
    ids = next_round_buckets(
        hands,
        game.deck_size,
        num_new,
        following.tables.blob,
        following.rounds - 1,
        cached_array(table_path),
    )
    write_chunk(build, array, chunk_id, ids)


def _features(
    ctx: StageContext[PotentialParams], game: GameDef, round_: int, table_path: str, next_k: int
) -> str:
    params = ctx.params
    indexer = round_indexer(game, round_)
    n_hands = indexer.size(indexer.rounds - 1)
    seen = game.board_cards_through(round_)
    num_new = game.board_cards_through(round_ + 1) - seen
    completions = comb(game.deck_size - game.num_hole_cards - seen, num_new)
    per_chunk = max(1, min(params.hands_per_chunk, n_hands, WORK_PER_CHUNK // completions))
    name = feature_name(round_)
    dtype = np.int16 if next_k <= 2**15 else np.int32
    ctx.writer.array(name, (n_hands, completions), dtype, chunks=(per_chunk, completions))
    ctx.run_chunks(
        compute_chunk,
        name,
        ceil(n_hands / per_chunk),
        args=(game, round_, per_chunk, table_path),
        desc=f"potential features round {round_}",
    )
    return name


def _cluster(
    ctx: StageContext[PotentialParams],
    round_: int,
    points: np.ndarray,
    weights: Any,
    ground: np.ndarray,
    next_k: int,
    embedding: np.ndarray | None,
) -> PotentialState:
    params = ctx.params
    if params.k > points.shape[0]:
        raise StageError(
            f"potential-buckets round {round_}: k={params.k} exceeds the "
            f"{points.shape[0]} distinct histograms"
        )
    name = f"round{round_}"
    saved = ctx.writer.load_checkpoint(name)
    init = PotentialState.from_arrays(saved) if saved is not None else None
    if saved is not None and int(saved.get("finished", 0)):
        ctx.log(f"{name}: k-means already finished before the interruption")
        return init  # type: ignore[return-value]
    checkpoint, finish = iteration_checkpoints(ctx, name, "potential-aware k-means", params, init)

    options = KMeansOptions(
        max_iter=params.max_iter,
        tol=params.tol,
        seed=params.seed,
        n_threads=os.cpu_count() or 1,
        callback=checkpoint,
    )
    state = potential_kmeans(points, params.k, next_k, ground, weights, options, init, embedding)
    finish(state.iteration)
    ctx.writer.save_checkpoint(name, {**state.to_arrays(), "finished": np.array(1)})
    return state


def _footprint(params: PotentialParams, upstream: dict[str, dict]) -> Footprint:
    """The largest round's next-round bucket ids per hand (and their distinct rows), the
    river bucket table the chunks read, and potential-aware k-means over `next_k` buckets."""
    game = params.game_def()
    last = game.num_rounds - 1
    next_k = int(upstream.get("ochs_buckets", {}).get("k", 9000))
    rounds = range(params.first_round, last)
    n = max((canonical_hands(game, r) for r in rounds), default=0)
    width = max((completions(game, r, r + 1) for r in rounds), default=0)
    features = nbytes((n, width), 2)
    return Footprint(
        peak={
            "next-round buckets": 2 * features,
            "river bucket table": nbytes(last_round_hands(game), 2),
            "per-point state": nbytes(n, 32),
            "centroids, sums, centre distances": nbytes((params.k, next_k), 8 * (2 + THREADS))
            + nbytes((params.k, params.k), 8),
        },
        stored={
            **{feature_name(r): nbytes((canonical_hands(game, r), completions(game, r, r + 1)), 2)
               for r in rounds},
            "centroids": len(rounds) * nbytes((params.k, next_k), 8),
        },
        # one k-means iteration's distances over next-round bucket ids, every round
        work=sum(canonical_hands(game, r) * completions(game, r, r + 1) for r in rounds)
        * params.k,
    )  # fmt: skip


@stage("potential-buckets", 3, PotentialParams, inputs={"ochs_buckets": "ochs-buckets"},
       check_inputs=same_game, labels=("k", "first_round"), footprint=_footprint)  # fmt: skip
def run(ctx: StageContext[PotentialParams]) -> dict:
    """Potential-aware EMD k-means buckets of the middle rounds (G&S 2014).

    Potential-aware buckets of every round from the second-to-last down to `first_round`.
    """
    params = ctx.params
    game = params.game_def()
    last = game.num_rounds - 1
    if not 1 <= params.first_round < last:
        raise StageError(f"potential-buckets: first_round must be in 1..{last - 1}")
    river = ctx.inputs["ochs_buckets"]
    table_path = river.array_url(f"bucket_round{last}")
    next_k = int(river.params["k"])
    river_centroids = np.asarray(river[f"centroids_round{last}"][:], dtype=np.float64)
    ground = ground_from_centroids(river_centroids)
    # River buckets are points (OCHS centroids) with Euclidean ground distances: an embedding
    # whose mean gives exact lower bounds of the EMD for pruning (Kantorovich-Rubinstein).
    embedding: np.ndarray | None = river_centroids
    threads = os.cpu_count() or 1
    summary: dict[str, Any] = {
        "k": params.k,
        "centroid": CENTROID_RULE,
        "objective_monotone": True,
        "rounds": {},
    }
    for round_ in range(last - 1, params.first_round - 1, -1):
        name = _features(ctx, game, round_, table_path, next_k)
        features = np.asarray(ctx.writer[name][:])
        if params.merge_duplicates:
            points, inverse, counts = merge_rows(features)
            weights = counts.astype(np.float64)
        else:
            points, inverse, weights = features, None, None
        ctx.log(
            f"potential-buckets round {round_}: {features.shape[0]:,} hands, "
            f"{points.shape[0]:,} distinct next-round histograms over {next_k:,} buckets"
        )
        state = _cluster(ctx, round_, points, weights, ground, next_k, embedding)
        best_labels, best_centroids = state.best_assignment()
        # Renumber from the weakest centroid: next-round ids are ordered by strength already.
        strength = best_centroids @ np.arange(next_k, dtype=np.float64)
        order = np.argsort(strength, kind="stable")
        relabel = np.empty(params.k, dtype=np.int64)
        relabel[order] = np.arange(params.k)
        labels = relabel[best_labels]
        if inverse is not None:
            labels = labels[inverse]
        centroids = best_centroids[order]
        bucket = labels.astype(bucket_dtype(params.k))
        n = bucket.shape[0]
        table = f"bucket_round{round_}"
        ctx.writer.array(table, (n,), bucket.dtype, chunks=(min(n, 1 << 22),))[:] = bucket
        ctx.writer.array(
            f"centroids_round{round_}", centroids.shape, np.float64, chunks=centroids.shape
        )[:] = centroids
        objective = np.asarray(state.objective, dtype=np.float64)
        ctx.writer.array(
            f"objective_round{round_}", objective.shape, np.float64, chunks=objective.shape
        )[:] = objective
        skipped = np.asarray(state.skipped_fraction, dtype=np.float64)
        ctx.writer.array(
            f"skipped_round{round_}", skipped.shape, np.float64, chunks=(max(1, skipped.size),)
        )[:] = skipped
        sizes = np.bincount(labels, minlength=params.k)
        summary["rounds"][str(round_)] = {
            "hands": int(n),
            "distinct_features": int(points.shape[0]),
            "next_buckets": next_k,
            "iterations": int(state.iteration),
            "best_iteration": int(state.best_iteration),
            "objective": float(objective[state.best_iteration - 1]),
            "objective_per_iteration": [float(v) for v in objective],
            "bucket_size_min": int(sizes.min()),
            "bucket_size_max": int(sizes.max()),
            "skipped_fraction_mean": float(skipped.mean()) if skipped.size else 0.0,
            "emd_check": emd_check(points, best_labels, best_centroids, ground, params.seed),
        }
        if round_ > params.first_round:
            # The round before is described over these buckets, compared by their centroids.
            ground = ground_from_histograms(centroids, ground, threads)
            table_path = ctx.writer.array_url(table)
            next_k = params.k
            if embedding is not None:
                # Each new bucket's mean embedding: every ground distance just computed (greedy
                # EMD, >= exact EMD >= distance of mean embeddings) is at least the distance of
                # these points, so they still give exact lower bounds one round earlier.
                embedding = centroids @ embedding
    return summary


def emd_check(
    points: np.ndarray, labels: np.ndarray, centroids: np.ndarray, ground: np.ndarray, seed: int
) -> dict[str, float | int]:
    """The greedy EMD of a seeded sample of points to their centroids against the exact EMD
    (POT's network simplex, same ground distance): how far above it the clustering measured."""
    rng = np.random.default_rng(seed)
    sample = np.sort(rng.choice(points.shape[0], min(EMD_CHECK_PAIRS, points.shape[0]), False))
    order = neighbour_order(ground)
    greedy, exact = [], []
    for q in sample:
        histogram = to_histograms(points[q : q + 1], ground.shape[0])[0]
        greedy.append(approx_emd(histogram, centroids[labels[q]], ground, order))
        exact.append(exact_emd(histogram, centroids[labels[q]], ground))
    g, e = np.array(greedy), np.array(exact)
    excess = (g - e) / np.where(e > 0, e, 1.0)
    return {
        "pairs": int(sample.size),
        "greedy_mean": float(g.mean()),
        "exact_mean": float(e.mean()),
        "relative_excess_mean": float(excess.mean()),
        "relative_excess_max": float(excess.max()),
        "below_exact": int(np.count_nonzero(g < e - 1e-9)),  # a feasible transport: never
    }
