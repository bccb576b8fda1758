"""Stage `opponent-clusters`: the first-round hands clustered by their HSD with EMD k-means.

On Hold'em these are the 169 preflop hands (k = 8 in the original OCHS paper; 6, 10, 12 in the
Limit Hold'em abstraction paper). Several k-means++ restarts run and the lowest objective wins;
cluster ids are then renumbered from the weakest cluster (lowest mean E[HS]) to the strongest.
"""

from __future__ import annotations

import numpy as np
from pydantic import Field

from gameforge.engines.common.emd import cumulative, histogram_from_cdf
from gameforge.engines.common.kmeans import KMeansOptions, KMeansState, kmeans
from gameforge.engines.poker.cards import RANK_CHARS
from gameforge.stages.base import Seed, StageContext, StageError
from gameforge.stages.poker.hsd import array_name, round_indexer
from gameforge.stages.poker.params import GameParams, same_game
from gameforge.stages.poker.sizes import canonical_hands, kmeans_bytes
from gameforge.stages.registry import stage
from gameforge.stages.resources import Footprint, nbytes


class OpponentClusterParams(GameParams):
    """Number of clusters, restarts and seed; `weighted` counts each hand's card combinations."""

    k: int = Field(
        default=8,
        ge=1,
        description="Opponent clusters of the first-round hands (the OCHS paper: 8).",
    )
    restarts: int = Field(
        default=20, ge=1, description="k-means++ restarts; the lowest objective wins."
    )
    seed: Seed = Field(default=0, description="Seed of the first restart (restart i: seed + i).")
    max_iter: int = Field(default=200, ge=1, description="Lloyd iterations per restart at most.")
    weighted: bool = Field(
        default=False,
        description="Weight each hand class by its card combinations (off: every class counts 1).",
    )


def hand_name(cards: list[int], num_suits: int) -> str:
    """Suit-free name of a first-round hand: 'AA', 'AKs', 'T9o' (or a rank for one card)."""
    ranks = sorted((c // num_suits for c in cards), reverse=True)
    text = "".join(RANK_CHARS[r] for r in ranks)
    if len(cards) == 2 and ranks[0] != ranks[1]:
        text += "s" if cards[0] % num_suits == cards[1] % num_suits else "o"
    return text


def expected_hs(hsd: np.ndarray) -> np.ndarray:
    """E[HS] of histogram rows, taking each bin at its centre."""
    bins = hsd.shape[1]
    centres = (np.arange(bins) + 0.5) / bins
    mass = hsd.sum(axis=1, dtype=np.float64)
    return (hsd.astype(np.float64) @ centres) / mass


def _footprint(params: OpponentClusterParams, upstream: dict[str, dict]) -> Footprint:
    """Preflop HSDs as float CDFs and k-means state: small at every size (169 hands)."""
    game = params.game_def()
    n = canonical_hands(game, 0)
    bins = int(upstream.get("hsd", {}).get("bins", 50))
    return Footprint(
        peak={
            "preflop histograms and k-means": 3
            * (nbytes((n, bins), 4) + kmeans_bytes(n, bins, params.k, None))
        },
        stored={"cluster, expected_hs": nbytes(n, 10), "centroids": nbytes((params.k, bins), 8)},
        work=n * params.k * bins,  # one k-means pass's distances
    )


@stage("opponent-clusters", 1, OpponentClusterParams, inputs={"hsd": "hsd"},
       check_inputs=same_game, labels=("k",), footprint=_footprint)  # fmt: skip
def run(ctx: StageContext[OpponentClusterParams]) -> dict:
    """First-round hands clustered by HSD with EMD k-means, weakest cluster first.

    Cluster the first-round HSDs, best of several restarts, ids ordered by strength.
    """
    params = ctx.params
    game = params.game_def()
    hsd_artifact = ctx.inputs["hsd"]
    if array_name(0) not in hsd_artifact.array_names():
        raise StageError("opponent-clusters: the hsd input has no round-0 histograms")
    hsd = np.asarray(hsd_artifact[array_name(0)][:])
    n = hsd.shape[0]
    if params.k > n:
        raise StageError(f"opponent-clusters: k={params.k} exceeds the {n} first-round hands")
    indexer = round_indexer(game, 0)
    hands = indexer.unindex(np.arange(n, dtype=np.int64), 0)
    weights = None
    if params.weighted:
        # Raw deals per class: the ones a suit permutation reaches (count by brute force once).
        weights = _class_sizes(indexer, game.deck_size, game.num_hole_cards).astype(np.float64)
    cdf = cumulative(hsd)
    best = None
    bar = ctx.progress.start(f"k-means k={params.k} restarts", params.restarts)
    for restart in range(params.restarts):
        options = KMeansOptions[KMeansState](max_iter=params.max_iter, seed=params.seed + restart)
        state = kmeans(cdf, params.k, "emd", weights, options)
        if best is None or state.objective[-1] < best.objective[-1]:
            best = state
        bar.advance()
    bar.close()
    assert best is not None
    strength = expected_hs(hsd)
    # Renumber: cluster 0 = lowest mean E[HS] of its members.
    mean_strength = np.array(
        [
            strength[best.labels == c].mean() if (best.labels == c).any() else np.inf
            for c in range(params.k)
        ]
    )
    order = np.argsort(mean_strength, kind="stable")
    relabel = np.empty(params.k, dtype=np.int64)
    relabel[order] = np.arange(params.k)
    labels = relabel[best.labels].astype(np.int16)
    centroids = histogram_from_cdf(best.centroids[order])
    writer = ctx.writer
    writer.array("cluster", (n,), np.int16, chunks=(n,))[:] = labels
    writer.array("expected_hs", (n,), np.float64, chunks=(n,))[:] = strength
    writer.write_arrays({
        "centroids": np.asarray(centroids, np.float64),
        "objective": np.asarray(best.objective, np.float64),
    })  # fmt: skip
    names = [hand_name(row, game.num_suits) for row in hands.tolist()]
    members = {
        str(c): [names[i] for i in np.argsort(-strength) if labels[i] == c] for c in range(params.k)
    }
    return {
        "k": params.k,
        "hands": n,
        "objective": float(best.objective[-1]),
        "iterations": int(best.iteration),
        "sizes": [int((labels == c).sum()) for c in range(params.k)],
        "members": members,
    }


def _class_sizes(indexer, deck_size: int, num_hole: int) -> np.ndarray:  # type: ignore[no-untyped-def]
    from itertools import combinations

    rows = np.array(list(combinations(range(deck_size), num_hole)), dtype=np.int8)
    return np.bincount(indexer.index(rows, 0), minlength=indexer.size(0))
