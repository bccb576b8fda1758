"""Stages `hsd-buckets` and `ochs-buckets`: k-means card abstraction, one round at a time.

- `hsd-buckets`: the rounds after the first and before the last (flop and turn in Hold'em),
  each hand described by its HSD, clustered with EMD k-means (L1 between CDFs). A centroid is
  the per-bin (lower, weighted) median of its members' CDFs, the CDF that minimises their summed
  EMD, so the objective never rises from one iteration to the next (summary `centroid`:
  "cdf-median"). Mean CDFs, the usual "EMD k-means", do not minimise it, and the objective
  did rise under them (stage version 1).
- `ochs-buckets`: the last round (river), each (hole, unordered board) class described by its
  OCHS vector, clustered with L2 k-means. A river hand's bucket is its class's bucket. The
  centroid is the mean, which minimises the squared L2 objective (summary `centroid`: "mean").

The first round is never clustered: its canonical index is its bucket (169 on Hold'em).
Identical feature vectors are merged into one weighted point before clustering. Seeding is
k-means++ (deterministic for a seed); each Lloyd iteration uses Yinyang/Hamerly pruning, and the
k-means state is checkpointed so a killed run resumes at its last checkpoint and ends identical
to an uninterrupted one. Bucket ids are ordered from the weakest centroid to the strongest.
Two separate stages keep caching right: changing the opponent clusters (and so OCHS) leaves
the flop and turn buckets reused.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np
from pydantic import Field

from gameforge.engines.common.emd import cumulative
from gameforge.engines.common.kmeans import Centroid, KMeansOptions, KMeansState, kmeans
from gameforge.stages.base import Seed, StageContext, StageError, StageParams
from gameforge.stages.poker.hsd import array_name, count_dtype, hsd_rounds
from gameforge.stages.poker.ochs import RESULT as OCHS_ARRAY
from gameforge.stages.poker.params import GameParams, same_game
from gameforge.stages.poker.sizes import (
    canonical_hands,
    clustering_bytes,
    completions,
    last_round_hands,
)
from gameforge.stages.progress import end_early
from gameforge.stages.registry import stage
from gameforge.stages.resources import Footprint, nbytes

# The centroid rule of each k-means metric and its name in the summaries: the rule that
# minimises the stage's objective, so Lloyd's iterations never raise it.
CENTROID_RULES: dict[str, tuple[Centroid, str]] = {
    "emd": ("median", "cdf-median"),
    "l2": ("mean", "mean"),
}


class LloydParams(StageParams):
    """The k-means settings of every bucketing stage (these two and potential-buckets)."""

    k: int = Field(default=9000, ge=1, description="Buckets per round (the paper: 9,000).")
    seed: Seed = Field(default=0, description="Seed of the k-means++ seeding.")
    max_iter: int = Field(default=100, ge=1, description="Lloyd iterations per round at most.")
    tol: float = Field(
        default=1e-4,
        ge=0,
        description="Stop once the objective's relative change falls below this.",
    )
    merge_duplicates: bool = Field(
        default=True,
        description="Cluster identical feature vectors as one weighted point.",
    )
    checkpoint_seconds: float = Field(
        default=60.0, ge=0, description="Seconds between k-means checkpoints."
    )


class KMeansParams(LloydParams):
    """k-means settings shared by both bucketing stages."""

    n_groups: int | None = Field(
        default=None,
        ge=1,
        description="Centre groups of the Yinyang pruning (1: Hamerly's; None: chosen from k).",
    )
    # Pruning groups and checkpoints change speed and memory, never the assignments.
    execution_only: ClassVar[frozenset[str]] = frozenset({"n_groups", "checkpoint_seconds"})


class HSDBucketParams(GameParams, KMeansParams):
    """Which rounds to bucket by HSD (default: every round after the first, before the last)."""

    rounds: tuple[int, ...] | None = Field(
        default=None,
        description="Betting rounds to bucket, 0 the first (None: all between the first and last).",
    )


class OCHSBucketParams(GameParams, KMeansParams):
    """Bucketing of the last round by OCHS."""


def merge_rows(features: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(unique rows, inverse index, counts): identical feature vectors become one point."""
    rows = np.ascontiguousarray(features)
    as_bytes = rows.view(np.dtype((np.void, rows.dtype.itemsize * rows.shape[1]))).ravel()
    _, first, inverse, counts = np.unique(
        as_bytes, return_index=True, return_inverse=True, return_counts=True
    )
    return rows[first], inverse.ravel(), counts


def cluster_features(
    ctx: StageContext[StageParams],
    name: str,
    points: np.ndarray,
    weights: np.ndarray | None,
    metric: str,
    params: KMeansParams,
) -> dict[str, Any]:
    """Resumable k-means of `points` with the metric's centroid rule (`CENTROID_RULES`);
    returns labels (ordered by `strength`), centroids and history."""
    k = params.k
    if k > points.shape[0]:
        raise StageError(f"{name}: k={k} exceeds the {points.shape[0]} distinct feature vectors")
    saved = ctx.writer.load_checkpoint(name)
    init: Any = KMeansState.from_arrays(saved) if saved is not None else None
    checkpoint, finish = iteration_checkpoints(ctx, name, "k-means", params, init)

    options = KMeansOptions(
        max_iter=params.max_iter,
        tol=params.tol,
        seed=params.seed,
        centroid=CENTROID_RULES[metric][0],
        n_groups=params.n_groups,
        n_threads=os.cpu_count() or 1,
        callback=checkpoint,
    )
    state = kmeans(points, k, metric, weights, options, init)  # type: ignore[arg-type]
    finish(state.iteration)
    ctx.writer.save_checkpoint(name, state.to_arrays())
    # Renumber buckets from the weakest centroid to the strongest.
    order = np.argsort(strength_of_centroids(state.centroids, metric), kind="stable")
    relabel = np.empty(k, dtype=np.int64)
    relabel[order] = np.arange(k)
    return {
        "labels": relabel[state.labels],
        "centroids": state.centroids[order],
        "objective": np.asarray(state.objective, dtype=np.float64),
        "skipped": np.asarray(state.skipped_fraction, dtype=np.float64),
        "iterations": int(state.iteration),
    }


def strength_of_centroids(centroids: np.ndarray, metric: str) -> np.ndarray:
    """A scalar strength per centroid: E[HS] of a CDF centroid, or the mean OCHS."""
    if metric == "emd":
        # E[HS] from a CDF over equal bins: sum over bins of (1 - CDF) * width.
        bins = centroids.shape[1]
        return (1.0 - centroids).sum(axis=1) / bins
    return centroids.mean(axis=1)


def bucket_dtype(k: int) -> np.dtype:
    """Smallest signed dtype for bucket ids 0..k-1."""
    return np.dtype(np.int16 if k <= np.iinfo(np.int16).max else np.int32)


def iteration_checkpoints(
    ctx: StageContext[StageParams], name: str, desc: str, params: Any, init: Any
) -> tuple[Callable[[Any], None], Callable[[int], None]]:
    """A k-means iteration callback and `finish(iterations)` for the bar "`name` `desc` k=K
    iterations" of `params.max_iter` (resumed at `init`'s iteration).

    The callback advances the bar and checkpoints `name` every `params.checkpoint_seconds`.
    `finish` closes the bar; k-means that stopped before `max_iter` has converged, so its bar
    ends there, done (`end_early`: "converged at N"), neither filled to `max_iter` nor stopped.
    """
    if init is not None:
        ctx.log(f"{name}: resuming {desc} at iteration {init.iteration}")
    done = 0 if init is None else init.iteration
    bar = ctx.progress.start(f"{name} {desc} k={params.k} iterations", params.max_iter, done=done)
    seconds = params.checkpoint_seconds
    last_save = time.monotonic()

    def checkpoint(state: Any) -> None:
        nonlocal last_save
        bar.advance()
        if time.monotonic() - last_save >= seconds:
            ctx.writer.save_checkpoint(name, state.to_arrays())
            last_save = time.monotonic()

    def finish(iterations: int) -> None:
        if iterations < params.max_iter:  # converged: the bar ends where the work ended
            end_early(bar, f"converged at {iterations}", params.max_iter - iterations)
        else:
            bar.close()

    return checkpoint, finish


def write_round(ctx: StageContext, suffix: str, result: dict[str, Any], k: int) -> None:
    """Write one round's buckets, centroids and k-means history."""
    labels = result["labels"].astype(bucket_dtype(k))
    n = labels.shape[0]
    ctx.writer.array(f"bucket_{suffix}", (n,), labels.dtype, chunks=(min(n, 1 << 22),))[:] = labels
    ctx.writer.write_arrays(
        {f"{field}_{suffix}": np.asarray(result[field], np.float64)
         for field in ("centroids", "objective", "skipped")}
    )  # fmt: skip


def _prepare(
    features: np.ndarray, merge: bool
) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
    if not merge:
        return features, None, None
    unique, inverse, counts = merge_rows(features)
    return unique, inverse, counts.astype(np.float64)


def _hsd_footprint(params: HSDBucketParams, upstream: dict[str, dict]) -> Footprint:
    """The largest round's histograms, as CDFs under k-means; labels and centroids stored."""
    game = params.game_def()
    bins = int(upstream.get("hsd", {}).get("bins", 50))
    rounds = params.rounds if params.rounds is not None else tuple(range(1, game.num_rounds - 1))
    stored = {f"bucket_round{r}": nbytes(canonical_hands(game, r), 2) for r in rounds}
    stored["centroids"] = len(rounds) * nbytes((params.k, bins), 8)
    per_round = [
        clustering_bytes(
            canonical_hands(game, r), bins, count_dtype(completions(game, r)).itemsize,
            params.k, params.n_groups, params.merge_duplicates,
        )
        for r in rounds
    ]  # fmt: skip
    peak = max(per_round, key=lambda terms: sum(terms.values()), default={})
    # one k-means iteration's point-to-centroid distances, every round
    work = sum(canonical_hands(game, r) for r in rounds) * params.k * bins
    return Footprint(peak=peak, stored=stored, work=work)


@stage("hsd-buckets", 2, HSDBucketParams, inputs={"hsd": "hsd"}, check_inputs=same_game,
       labels=("k",), footprint=_hsd_footprint)  # fmt: skip
def run_hsd_buckets(ctx: StageContext[HSDBucketParams]) -> dict:
    """EMD k-means buckets of the middle rounds (flop, turn) by HSD.

    EMD k-means of the HSD of every requested round, centroids the per-bin CDF medians.
    """
    params = ctx.params
    game = params.game_def()
    hsd = ctx.inputs["hsd"]
    rounds = params.rounds if params.rounds is not None else tuple(range(1, game.num_rounds - 1))
    if 0 in rounds:
        raise StageError("hsd-buckets: round 0 is not clustered (its canonical index is lossless)")
    hsd_rounds(game, rounds)
    summary: dict[str, Any] = {"k": params.k, **_centroid_summary("emd"), "rounds": {}}
    for round_ in rounds:
        if array_name(round_) not in hsd.array_names():
            raise StageError(f"hsd-buckets: the hsd input has no round {round_}")
        histograms = np.asarray(hsd[array_name(round_)][:])
        points, inverse, weights = _prepare(histograms, params.merge_duplicates)
        ctx.log(
            f"hsd-buckets round {round_}: {histograms.shape[0]:,} hands, "
            f"{points.shape[0]:,} distinct HSDs"
        )
        result = cluster_features(ctx, f"round{round_}", cumulative(points), weights, "emd", params)
        if inverse is not None:
            result["labels"] = result["labels"][inverse]
        write_round(ctx, f"round{round_}", result, params.k)
        summary["rounds"][str(round_)] = _round_summary(histograms.shape[0], points, result)
    return summary


def _ochs_footprint(params: OCHSBucketParams, upstream: dict[str, dict]) -> Footprint:
    """Last-round OCHS vectors (float32 copies) under L2 k-means; labels and centroids stored."""
    game = params.game_def()
    ochs = upstream.get("ochs", {})
    clusters = getattr(ochs, "inputs", {}).get("opponent_clusters", {})
    d = int(clusters.get("k", 8))
    n = last_round_hands(game)
    last = game.num_rounds - 1
    return Footprint(
        peak=clustering_bytes(n, d, 2, params.k, params.n_groups, params.merge_duplicates),
        stored={f"bucket_round{last}": nbytes(n, 2), "centroids": nbytes((params.k, d), 8)},
        work=n * params.k * d,  # one k-means iteration's distances
    )


@stage("ochs-buckets", 2, OCHSBucketParams, inputs={"ochs": "ochs"}, check_inputs=same_game,
       labels=("k",), footprint=_ochs_footprint)  # fmt: skip
def run_ochs_buckets(ctx: StageContext[OCHSBucketParams]) -> dict:
    """L2 k-means buckets of the last round (river) by OCHS.

    L2 k-means of the OCHS vectors of the last round.
    """
    params = ctx.params
    game = params.game_def()
    ochs = ctx.inputs["ochs"]
    raw = np.asarray(ochs[OCHS_ARRAY][:])
    points, inverse, weights = _prepare(raw, params.merge_duplicates)
    last = game.num_rounds - 1
    ctx.log(f"ochs-buckets round {last}: {raw.shape[0]:,} hands, {points.shape[0]:,} distinct")
    scaled = points.astype(np.float32) / float(ochs.meta["summary"]["scale"])
    result = cluster_features(ctx, f"round{last}", scaled, weights, "l2", params)
    if inverse is not None:
        result["labels"] = result["labels"][inverse]
    write_round(ctx, f"round{last}", result, params.k)
    return {
        "k": params.k,
        **_centroid_summary("l2"),
        "rounds": {str(last): _round_summary(raw.shape[0], points, result)},
        "layout": ochs.meta["summary"]["layout"],
    }


def _centroid_summary(metric: str) -> dict[str, Any]:
    """The summary's record of the centroid rule: its name, and that the objective cannot rise."""
    return {"centroid": CENTROID_RULES[metric][1], "objective_monotone": True}


def _round_summary(n_hands: int, points: np.ndarray, result: dict[str, Any]) -> dict[str, Any]:
    sizes = np.bincount(result["labels"])
    return {
        "hands": int(n_hands),
        "distinct_features": int(points.shape[0]),
        "iterations": result["iterations"],
        "objective": float(result["objective"][-1]),
        "objective_per_iteration": [float(v) for v in result["objective"]],
        "skipped_fraction_mean": float(np.mean(result["skipped"][1:]))
        if result["skipped"].size > 1
        else 0.0,
        "bucket_size_min": int(sizes.min()),
        "bucket_size_max": int(sizes.max()),
    }
