"""Potential-aware abstraction (Ganzfried & Sandholm, AAAI 2014): features, EMD and k-means.

A hand of round r is described by the histogram of the next round's buckets over every way to
deal that next round (47 turn cards for a flop hand, 46 river cards for a turn hand). Two such
histograms are compared by the earth mover's distance whose ground distance is the distance
between next-round centroids, so a hand's whole future trajectory counts, not only its final
strength.

Points are stored as rows of their next-round bucket ids, sorted (each id one unit of mass
1/C, C completions); centroids are dense mean histograms over the K next-round buckets.

Exact EMD (a transportation problem) is POT's network simplex (`exact_emd`): fine for tests
and small cases, far too slow for millions of points against thousands of centroids. The bulk
uses G&S's greedy approximation (`approx_emd`): every unit of point mass is moved, rank by
rank, to the nearest next-round bucket where the mean still has unclaimed mass. It is a
feasible transport, so it is never below the exact EMD; tests measure how far above.
It is not a metric, so no triangle-inequality pruning: assignment skips a centroid only by a
lower bound that holds for any transport (the distance of mean embeddings; see `assign`).

No closed form gives the histogram that minimises the members' summed distance under this EMD
(a transport problem whose ground distance is between next-round centroids), and the mean
does not: with mean centroids Lloyd's objective rises (it did, right after the k-means++
seeds). The centroid step (`best_centres`) therefore keeps, per cluster, the best of its
current centre, its members' mean and the members nearest that mean, so the summed distance
of each cluster to its centre never rises, nor, after the next assignment, the objective.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numba import njit

from gameforge.engines.common.kmeans import KMeansOptions, ordered_map
from gameforge.engines.poker.hsd import completion_indices, completions

_MASS_EPS = 1e-12  # point mass left below this is rounding: that unit counts as moved
CHUNK = 2048  # points per assignment task; fixed so results ignore the thread count
SAMPLE_FACTOR = 20  # k-means++ seeds on a weighted sample of SAMPLE_FACTOR * k points
# The numba kernels below (`_best_centres`: 13 arguments) take their arrays and scalars one by
# one: an @njit function cannot take a Python object such as `KMeansOptions`, so the Python
# functions unpack what each kernel reads.


# ------------------------------------------------------------------------------- features


@njit(cache=True, nogil=True)
def _next_buckets(
    hands: np.ndarray,
    deck_size: int,
    combos: np.ndarray,
    blob: np.ndarray,
    rnd: int,
    table: np.ndarray,
    out: np.ndarray,
) -> int:
    row = np.empty(hands.shape[1] + combos.shape[1], dtype=np.int8)
    indices = np.empty(combos.shape[0], dtype=np.int64)
    bad = 0
    for h in range(hands.shape[0]):
        completion_indices(hands[h], deck_size, combos, blob, rnd, row, indices)
        for c in range(combos.shape[0]):
            idx = indices[c]
            if idx < 0:
                bad += 1
                out[h, c] = 0
            else:
                out[h, c] = table[idx]
        out[h].sort()
    return bad


def next_round_buckets(
    hands: np.ndarray,
    deck_size: int,
    num_new: int,
    next_blob: np.ndarray,
    next_round: int,
    next_table: np.ndarray,
) -> np.ndarray:
    """(n, C) sorted next-round bucket ids of every completion of each hand (row: cards).

    `next_blob`/`next_round` are the tables and round of the indexer whose canonical index
    `next_table` maps to a bucket.
    """
    hands = np.ascontiguousarray(hands, dtype=np.int8)
    combos = completions(deck_size - hands.shape[1], num_new)
    dtype = np.int16 if int(next_table.max(initial=0)) < 2**15 else np.int32
    out = np.empty((hands.shape[0], combos.shape[0]), dtype=dtype)
    bad = _next_buckets(hands, deck_size, combos, next_blob, next_round, next_table, out)
    if bad:
        raise ValueError(f"{bad} next-round hands could not be indexed")
    return out


def to_histograms(points: np.ndarray, num_buckets: int) -> np.ndarray:
    """Dense (n, K) histograms (mass 1 each) of rows of next-round bucket ids."""
    n, c = points.shape
    out = np.zeros((n, num_buckets))
    np.add.at(out, (np.repeat(np.arange(n), c), points.ravel()), 1.0 / c)
    return out


# ------------------------------------------------------------------------------ distances


def neighbour_order(ground: np.ndarray) -> np.ndarray:
    """(K, K) int32: for each bucket, every bucket from nearest to farthest (stable ties)."""
    return np.argsort(ground, axis=1, kind="stable").astype(np.int32)


def exact_emd(p: np.ndarray, q: np.ndarray, ground: np.ndarray) -> float:
    """Exact EMD between two histograms of equal mass under `ground` (POT network simplex),
    solved on the two supports only (a hand's few next-round buckets against a centroid's)."""
    import ot

    p = np.asarray(p, dtype=np.float64)
    q = np.asarray(q, dtype=np.float64)
    a, b = np.flatnonzero(p > 0), np.flatnonzero(q > 0)
    cost = np.ascontiguousarray(np.asarray(ground, dtype=np.float64)[np.ix_(a, b)])
    return float(ot.emd2(p[a] / p[a].sum(), q[b] / q[b].sum(), cost))


@njit(cache=True, nogil=True)
def _greedy(
    ids: np.ndarray,
    mass: np.ndarray,
    m: int,
    cen: np.ndarray,
    used: np.ndarray,
    ground: np.ndarray,
    order: np.ndarray,
    target: np.ndarray,
    touched: np.ndarray,
) -> tuple[float, int]:
    """G&S greedy transport of point (ids, mass)[:m] into centroid `cen`.

    `cen` is read-only (threads share it); the mass taken so far goes to `used`, which the
    caller zeroes again at `touched[:returned count]`.
    """
    cost = 0.0
    left = m
    nt = 0
    for j in range(m):
        target[j] = mass[j]
    for i in range(order.shape[1]):
        for j in range(m):
            t = target[j]
            if t <= 0.0:
                continue
            a = ids[j]
            b = order[a, i]
            avail = cen[b] - used[b]
            if avail <= 0.0:
                continue
            touched[nt] = b
            nt += 1
            if avail < t:
                cost += avail * ground[a, b]
                used[b] = cen[b]
                t -= avail
                if t <= _MASS_EPS:
                    t = 0.0
                    left -= 1
                target[j] = t
            else:
                cost += t * ground[a, b]
                used[b] += t
                target[j] = 0.0
                left -= 1
        if left == 0:
            break
    return cost, nt


@njit(cache=True, nogil=True)
def _scratch(c: int, nb: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(ids, mass, target, touched, used): work arrays of `_point_emd` for points of c
    completions and centroids over nb next-round buckets."""
    ids = np.empty(c, dtype=np.int64)
    touched = np.empty(c + nb + 1, dtype=np.int64)
    return ids, np.empty(c), np.empty(c), touched, np.zeros(nb)


@njit(cache=True, nogil=True, inline="always")
def _point_emd(
    ids: np.ndarray,
    mass: np.ndarray,
    m: int,
    cen: np.ndarray,
    ground: np.ndarray,
    order: np.ndarray,
    target: np.ndarray,
    touched: np.ndarray,
    used: np.ndarray,
) -> float:
    """`_greedy` EMD of a point to centroid `cen`, leaving `used` zeroed again."""
    cost, nt = _greedy(ids, mass, m, cen, used, ground, order, target, touched)
    for t in range(nt):
        used[touched[t]] = 0.0
    return cost


@njit(cache=True, nogil=True)
def _run_lengths(row: np.ndarray, ids: np.ndarray, mass: np.ndarray) -> int:
    """Sorted bucket ids -> distinct ids with masses (count / len); returns how many."""
    c = row.shape[0]
    m = 0
    for t in range(c):
        if m > 0 and ids[m - 1] == row[t]:
            mass[m - 1] += 1.0 / c
        else:
            ids[m] = row[t]
            mass[m] = 1.0 / c
            m += 1
    return m


@njit(cache=True, nogil=True)
def _approx_emd_dense(p: np.ndarray, q: np.ndarray, ground: np.ndarray, order: np.ndarray) -> float:
    k = p.shape[0]
    ids, mass, target, touched, used = _scratch(k, k)
    m = 0
    for b in range(k):
        if p[b] > 0.0:
            ids[m] = b
            mass[m] = p[b]
            m += 1
    return _point_emd(ids, mass, m, q, ground, order, target, touched, used)


def approx_emd(p: np.ndarray, q: np.ndarray, ground: np.ndarray, order: np.ndarray) -> float:
    """G&S greedy EMD from histogram `p` to histogram `q` (dense, mass 1 each); >= exact."""
    return float(
        _approx_emd_dense(
            np.ascontiguousarray(p, dtype=np.float64),
            np.ascontiguousarray(q, dtype=np.float64),
            np.ascontiguousarray(ground, dtype=np.float64),
            np.ascontiguousarray(order, dtype=np.int32),
        )
    )


@njit(cache=True, nogil=True)
def _distances_to(
    points: np.ndarray,
    centroid: np.ndarray,
    ground: np.ndarray,
    order: np.ndarray,
    out: np.ndarray,
) -> None:
    """Approximate EMD of every point row (sorted bucket ids) to one dense centroid."""
    ids, mass, target, touched, used = _scratch(points.shape[1], centroid.shape[0])
    for q in range(points.shape[0]):
        m = _run_lengths(points[q], ids, mass)
        out[q] = _point_emd(ids, mass, m, centroid, ground, order, target, touched, used)


_LB_SLACK = 1e-9  # relative margin: a float lower bound must never prune a near-tie


@njit(cache=True, nogil=True)
def _assign(
    points: np.ndarray,
    centroids: np.ndarray,
    ground: np.ndarray,
    order: np.ndarray,
    emb_points: np.ndarray,
    emb_centroids: np.ndarray,
    labels: np.ndarray,
    dist: np.ndarray,
) -> int:
    """Nearest centroid (lowest index on ties) and its greedy EMD; returns distances computed.

    With an embedding (next-round buckets as points whose Euclidean distances are the ground
    distance), ||mean embedding of p - that of q|| is a lower bound of the exact EMD, hence of
    the greedy one: a centroid whose bound exceeds the best distance so far is skipped, and
    the result is the full scan's.
    """
    n, c = points.shape
    k, nb = centroids.shape
    d = emb_points.shape[1]
    ids, mass, target, touched, used = _scratch(c, nb)
    lb = np.zeros(k)
    computed = 0
    for q in range(n):
        m = _run_lengths(points[q], ids, mass)
        start = 0
        if d > 0:
            low = np.inf
            for j in range(k):
                acc = 0.0
                for t in range(d):
                    v = emb_points[q, t] - emb_centroids[j, t]
                    acc += v * v
                lb[j] = np.sqrt(acc)
                if lb[j] < low:
                    low = lb[j]
                    start = j
        best = _point_emd(ids, mass, m, centroids[start], ground, order, target, touched, used)
        computed += 1
        label = start
        for j in range(k):
            if j == start or (d > 0 and lb[j] > best * (1.0 + _LB_SLACK) + 1e-12):
                continue
            g = _point_emd(ids, mass, m, centroids[j], ground, order, target, touched, used)
            computed += 1
            if g < best or (g == best and j < label):
                best = g
                label = j
        labels[q] = label
        dist[q] = best
    return computed


@njit(cache=True, nogil=True)
def _means(
    points: np.ndarray, weights: np.ndarray, labels: np.ndarray, k: int, num_buckets: int
) -> tuple[np.ndarray, np.ndarray]:
    sums = np.zeros((k, num_buckets))
    totals = np.zeros(k)
    c = points.shape[1]
    for q in range(points.shape[0]):
        w = 1.0 if weights.shape[0] == 0 else weights[q]
        j = labels[q]
        totals[j] += w
        for t in range(c):
            sums[j, points[q, t]] += w / c
    return sums, totals


@njit(cache=True, nogil=True)
def _cost_to(
    points: np.ndarray,
    weights: np.ndarray,
    members: np.ndarray,
    centre: np.ndarray,
    ground: np.ndarray,
    order: np.ndarray,
    bound: float,
    dist: np.ndarray,
) -> float:
    """Summed (weighted) greedy EMD of the `members` rows to `centre`, each kept in `dist`;
    stops early, returning inf, once the sum passes `bound`."""
    ids, mass, target, touched, used = _scratch(points.shape[1], centre.shape[0])
    cost = 0.0
    for t in range(members.shape[0]):
        q = members[t]
        m = _run_lengths(points[q], ids, mass)
        d = _point_emd(ids, mass, m, centre, ground, order, target, touched, used)
        dist[t] = d
        cost += d if weights.shape[0] == 0 else weights[q] * d
        if cost > bound:
            return np.inf
    return cost


@njit(cache=True, nogil=True)
def _best_centres(
    points: np.ndarray,
    weights: np.ndarray,
    members: np.ndarray,
    starts: np.ndarray,
    old_cost: np.ndarray,
    means: np.ndarray,
    ground: np.ndarray,
    order: np.ndarray,
    n_candidates: int,
    first: int,
    stop: int,
    out: np.ndarray,
    kind: np.ndarray,
) -> None:
    """For clusters first..stop-1: of the current centre (its cost `old_cost`), the members'
    mean and the `n_candidates` members nearest that mean, the centre with the lowest summed
    distance to the members goes to `out` (ties keep the earlier; `kind` 0, 1, 2 says which)."""
    c = points.shape[1]
    nb = means.shape[1]
    candidate = np.zeros(nb)
    for j in range(first, stop):
        kind[j] = 0
        a, b = starts[j], starts[j + 1]
        if b == a:
            continue
        group = members[a:b]
        best = old_cost[j]
        to_mean = np.empty(b - a)
        cost = _cost_to(points, weights, group, means[j], ground, order, np.inf, to_mean)
        if cost < best:
            best = cost
            out[j] = means[j]
            kind[j] = 1
        scratch = np.empty(b - a)
        for s in np.argsort(to_mean, kind="mergesort")[:n_candidates]:
            candidate[:] = 0.0
            row = points[group[s]]
            for t in range(c):
                candidate[row[t]] += 1.0 / c
            cost = _cost_to(points, weights, group, candidate, ground, order, best, scratch)
            if cost < best:
                best = cost
                out[j] = candidate
                kind[j] = 2


@dataclass(frozen=True)
class Assignment:
    """An assignment step's result: each point's cluster `labels` and its greedy EMD `dist` to
    that cluster's centroid (what `assign` returns)."""

    labels: np.ndarray
    dist: np.ndarray


def best_centres(
    points: np.ndarray,
    weights: np.ndarray,
    assignment: Assignment,
    centroids: np.ndarray,
    ground: np.ndarray,
    order: np.ndarray,
    n_threads: int = 1,
    n_candidates: int = 8,
) -> tuple[np.ndarray, np.ndarray]:
    """The centroid step that never raises the objective: (new centroids, per-cluster choice
    0 = kept, 1 = mean, 2 = a member), each cluster's centre the best of its current one (cost
    from the `assignment`'s distances), its mean and its members nearest that mean."""
    labels, dist = assignment.labels, assignment.dist
    k, nb = centroids.shape
    w = weights
    old_cost = np.bincount(labels, weights=dist if w.shape[0] == 0 else dist * w, minlength=k)
    sums, totals = _means(points, w, labels, k, nb)
    means = centroids.copy()
    filled = totals > 0
    means[filled] = sums[filled] / totals[filled, None]
    members = np.argsort(labels, kind="stable").astype(np.int64)
    starts = np.zeros(k + 1, dtype=np.int64)
    starts[1:] = np.cumsum(np.bincount(labels, minlength=k))
    out = centroids.copy()
    kind = np.zeros(k, dtype=np.int8)
    step = max(1, -(-k // (4 * max(1, n_threads))))  # a few ranges a thread: big clusters vary

    def work(first: int) -> None:
        _best_centres(points, w, members, starts, old_cost, means, ground, order, n_candidates,
                      first, min(k, first + step), out, kind)  # fmt: skip

    for _ in ordered_map(work, range(0, k, step), n_threads):
        pass
    return out, kind


def ground_from_centroids(centroids: np.ndarray) -> np.ndarray:
    """(K, K) Euclidean distances between next-round centroids (e.g. OCHS vectors)."""
    c = np.asarray(centroids, dtype=np.float64)
    sq = (c * c).sum(axis=1)
    d2 = np.maximum(sq[:, None] + sq[None, :] - 2.0 * c @ c.T, 0.0)
    np.fill_diagonal(d2, 0.0)
    return np.sqrt(d2)


@njit(cache=True, nogil=True)
def _pairwise_rows(
    H: np.ndarray, ground: np.ndarray, order: np.ndarray, start: int, stop: int, out: np.ndarray
) -> None:
    for a in range(start, stop):
        for b in range(H.shape[0]):
            if b != a:
                out[a - start, b] = _approx_emd_dense(H[a], H[b], ground, order)


def ground_from_histograms(
    histograms: np.ndarray, ground: np.ndarray, n_threads: int = 1
) -> np.ndarray:
    """(K, K) distances between centroids that are histograms over the round after them.

    Each entry is the greedy EMD averaged over both directions (it is not symmetric).
    """
    H = np.ascontiguousarray(histograms, dtype=np.float64)
    G = np.ascontiguousarray(ground, dtype=np.float64)
    order = neighbour_order(G)
    k = H.shape[0]
    out = np.zeros((k, k))
    step = max(1, -(-k // (8 * max(1, n_threads))))

    def rows(start: int) -> tuple[int, np.ndarray]:
        block = np.zeros((min(k, start + step) - start, k))
        _pairwise_rows(H, G, order, start, min(k, start + step), block)
        return start, block

    for start, block in ordered_map(rows, range(0, k, step), n_threads):
        out[start : start + block.shape[0]] = block
    return 0.5 * (out + out.T)


# -------------------------------------------------------------------------------- k-means


@dataclass
class PotentialState:
    """Resumable potential-aware k-means: dense centroids, labels and history."""

    centroids: np.ndarray  # (k, K) float64 mean histograms over next-round buckets
    labels: np.ndarray  # (n,) int32
    iteration: int = 0
    objective: np.ndarray = field(default_factory=lambda: np.zeros(0))
    n_changed: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    n_empty: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    skipped_fraction: np.ndarray = field(default_factory=lambda: np.zeros(0))  # of n*k pairs
    # Set by the iteration that met the stopping rule: a resumed finished state takes no step.
    converged: bool = False
    # The iteration whose assignment had the lowest objective (the latest on ties; 0 before
    # the first), and the labels and centroids after it when it is not the latest (None when
    # it is: then they are `labels` and `centroids`, and nothing is copied).
    best_iteration: int = 0
    best_labels: np.ndarray | None = None
    best_centroids: np.ndarray | None = None

    def best_assignment(self) -> tuple[np.ndarray, np.ndarray]:
        """(labels, centroids) after the iteration with the lowest objective seen.

        The centroids are the mean histograms of those labels' clusters (an empty cluster
        keeps its centre), as after any iteration.
        """
        if self.best_labels is None or self.best_centroids is None:
            return self.labels, self.centroids
        return self.best_labels, self.best_centroids

    def to_arrays(self) -> dict[str, np.ndarray]:
        """Plain arrays for a checkpoint."""
        out = {
            "centroids": self.centroids,
            "labels": self.labels,
            "iteration": np.array(self.iteration, dtype=np.int64),
            "objective": self.objective,
            "n_changed": self.n_changed,
            "n_empty": self.n_empty,
            "skipped_fraction": self.skipped_fraction,
            "best_iteration": np.array(self.best_iteration, dtype=np.int64),
            "converged": np.array(self.converged, dtype=np.int8),
        }
        if self.best_labels is not None and self.best_centroids is not None:
            out["best_labels"] = self.best_labels
            out["best_centroids"] = self.best_centroids
        return out

    @classmethod
    def from_arrays(cls, arrays: dict[str, Any]) -> PotentialState:
        """Inverse of :meth:`to_arrays`."""
        a = {k: np.asarray(v) for k, v in arrays.items()}
        return cls(
            centroids=np.ascontiguousarray(a["centroids"], dtype=np.float64),
            labels=np.ascontiguousarray(a["labels"], dtype=np.int32),
            iteration=int(a["iteration"]),
            objective=np.asarray(a["objective"], dtype=np.float64),
            n_changed=np.asarray(a["n_changed"], dtype=np.int64),
            n_empty=np.asarray(a["n_empty"], dtype=np.int64),
            skipped_fraction=np.asarray(a.get("skipped_fraction", np.zeros(0)), dtype=np.float64),
            # A checkpoint without the record counts its latest iteration as the best.
            best_iteration=int(a.get("best_iteration", a["iteration"])),
            converged=bool(a["converged"]) if "converged" in a else False,
            best_labels=(
                np.ascontiguousarray(a["best_labels"], dtype=np.int32)
                if "best_labels" in a
                else None
            ),
            best_centroids=(
                np.ascontiguousarray(a["best_centroids"], dtype=np.float64)
                if "best_centroids" in a
                else None
            ),
        )


def assign(
    points: np.ndarray,
    centroids: np.ndarray,
    ground: np.ndarray,
    order: np.ndarray,
    n_threads: int = 1,
    embedding: np.ndarray | None = None,
    stats: list[int] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """(labels, greedy EMD) of every point to its nearest centroid, threaded over chunks.

    `embedding` (K, d): coordinates of the next-round buckets whose Euclidean distances are
    `ground`; it enables exact lower-bound pruning. `stats`, if given, receives the number of
    greedy distances computed.
    """
    n = points.shape[0]
    labels = np.empty(n, dtype=np.int32)
    dist = np.empty(n)
    if embedding is None:
        emb_p = np.zeros((n, 0))
        emb_c = np.zeros((centroids.shape[0], 0))
    else:
        emb_p = embed(points, embedding)
        emb_c = np.ascontiguousarray(centroids @ embedding)

    def work(start: int) -> int:
        stop = min(n, start + CHUNK)
        return int(
            _assign(
                points[start:stop],
                centroids,
                ground,
                order,
                emb_p[start:stop],
                emb_c,
                labels[start:stop],
                dist[start:stop],
            )
        )

    computed = sum(ordered_map(work, range(0, n, CHUNK), n_threads))
    if stats is not None:
        stats.append(computed)
    return labels, dist


def embed(points: np.ndarray, embedding: np.ndarray) -> np.ndarray:
    """(n, d) mean embedding of each point row (sorted next-round bucket ids)."""
    out = np.zeros((points.shape[0], embedding.shape[1]))
    step = 1 << 16
    for s in range(0, points.shape[0], step):
        out[s : s + step] = embedding[points[s : s + step]].mean(axis=1)
    return out


def kmeanspp_seeds(
    points: np.ndarray,
    weights: np.ndarray | None,
    k: int,
    num_buckets: int,
    ground: np.ndarray,
    order: np.ndarray,
    rng: np.random.Generator,
    n_threads: int = 1,
) -> np.ndarray:
    """k-means++ (D^2 weighting by greedy EMD) on a weighted sample of SAMPLE_FACTOR * k points;
    (k, K) dense seeds."""
    n = points.shape[0]
    w = np.ones(n) if weights is None else np.asarray(weights, dtype=np.float64)
    m = min(n, SAMPLE_FACTOR * k)
    if m < n:
        # Sampling by weight with replacement, repeats merged into counts, keeps the weighting.
        idx, counts = np.unique(
            rng.choice(n, size=m, replace=True, p=w / w.sum()), return_counts=True
        )
        sample, sw = points[idx], counts.astype(np.float64)
    else:
        sample, sw = points, w
    if sample.shape[0] < k:
        raise ValueError(f"k-means++ needs at least k={k} distinct points, got {sample.shape[0]}")
    nearest = np.full(sample.shape[0], np.inf)
    seeds = np.empty((k, num_buckets))
    chosen = int(np.searchsorted(np.cumsum(sw), rng.random() * sw.sum(), side="right"))
    for j in range(k):
        seeds[j] = to_histograms(sample[min(chosen, sample.shape[0] - 1)][None, :], num_buckets)[0]
        _, dist = assign(sample, seeds[j : j + 1], ground, order, n_threads)
        np.minimum(nearest, dist, out=nearest)
        if j + 1 == k:
            break
        potential = sw * nearest * nearest
        total = potential.sum()
        if total <= 0:  # every sampled point sits on a seed: take the first unused one
            chosen = int(np.flatnonzero(nearest > 0)[0]) if np.any(nearest > 0) else j + 1
        else:
            chosen = int(np.searchsorted(np.cumsum(potential), rng.random() * total, side="right"))
    return seeds


def kmeans_step(
    points: np.ndarray,
    weights: np.ndarray | None,
    state: PotentialState,
    ground: np.ndarray,
    order: np.ndarray,
    n_threads: int = 1,
    embedding: np.ndarray | None = None,
) -> PotentialState:
    """One Lloyd iteration: assign by greedy EMD, then each centroid becomes the best of itself,
    its members' mean and the members nearest that mean (`best_centres`): never a rise.

    The new state also carries the best assignment so far (`PotentialState.best_iteration`).
    """
    k, num_buckets = state.centroids.shape
    stats: list[int] = []
    labels, dist = assign(points, state.centroids, ground, order, n_threads, embedding, stats)
    w = np.empty(0) if weights is None else np.ascontiguousarray(weights, dtype=np.float64)
    objective = float(dist.sum() if weights is None else (dist * w).sum())
    centroids, _ = best_centres(
        points, w, Assignment(labels, dist), state.centroids, ground, order, n_threads
    )
    empty = np.bincount(labels, minlength=k) == 0  # an empty cluster keeps its centre
    changed = int(np.count_nonzero(labels != state.labels))
    skipped = 1.0 - stats[0] / float(points.shape[0] * k)
    best_iteration, best_labels, best_centroids = state.iteration + 1, None, None
    if state.best_iteration > 0 and objective > state.objective[state.best_iteration - 1]:
        # Worse than the best so far: keep that one's arrays (the previous state's own, not
        # copied, when it was the best; they are never written to again).
        best_iteration = state.best_iteration
        best_labels, best_centroids = state.best_assignment()
    return PotentialState(
        centroids=centroids,
        labels=labels,
        iteration=state.iteration + 1,
        objective=np.append(state.objective, objective),
        n_changed=np.append(state.n_changed, changed),
        n_empty=np.append(state.n_empty, int(empty.sum())),
        skipped_fraction=np.append(state.skipped_fraction, skipped),
        best_iteration=best_iteration,
        best_labels=best_labels,
        best_centroids=best_centroids,
    )


# The fields of `KMeansOptions` that only common.kmeans's k-means reads (its k-means++ trials,
# centroid rule, Yinyang groups and assignment chunks): set here, they would do nothing.
_KMEANS_ONLY = ("n_local_trials", "centroid", "n_groups", "chunk_size")


def potential_kmeans(
    points: np.ndarray,
    k: int,
    num_buckets: int,
    ground: np.ndarray,
    weights: np.ndarray | None = None,
    options: KMeansOptions[PotentialState] | None = None,
    init: PotentialState | None = None,
    embedding: np.ndarray | None = None,
) -> PotentialState:
    """Potential-aware k-means of point rows (sorted next-round bucket ids) under greedy EMD.

    `options` (`KMeansOptions`, its defaults when None): its `max_iter`, `tol` (stops at a
    fixed point or when the objective changes by less than `tol`, relative), `seed`,
    `n_threads` and `callback(state)` (after every iteration); the others are refused.
    `init` resumes a checkpointed state. `embedding`: see `assign` (pruning only; the result
    is the same without it). The centroid step never raises the objective, so
    `best_assignment()` (the assignment of the lowest-objective iteration, `best_iteration`)
    is the latest one; it is kept as a guard against rounding, at the cost of one more
    centroid array only while it is not the latest.
    """
    opt: KMeansOptions[PotentialState] = KMeansOptions() if options is None else options
    unread = [name for name in _KMEANS_ONLY
              if getattr(opt, name) != getattr(KMeansOptions, name)]  # fmt: skip
    if unread:
        raise ValueError(f"potential_kmeans does not use the options {', '.join(unread)}")
    seed, max_iter, tol, n_threads = opt.seed, opt.max_iter, opt.tol, opt.n_threads
    points = np.ascontiguousarray(points)
    ground = np.ascontiguousarray(ground, dtype=np.float64)
    if ground.shape != (num_buckets, num_buckets):
        raise ValueError(f"ground must be ({num_buckets}, {num_buckets}), got {ground.shape}")
    if points.size and (points.min() < 0 or points.max() >= num_buckets):
        raise ValueError(f"bucket ids must be in 0..{num_buckets - 1}")
    order = neighbour_order(ground)
    if init is None:
        rng = np.random.default_rng(seed)
        seeds = kmeanspp_seeds(points, weights, k, num_buckets, ground, order, rng, n_threads)
        state = PotentialState(seeds, np.full(points.shape[0], -1, dtype=np.int32))
    else:
        state = init
    if state.centroids.shape != (k, num_buckets):
        raise ValueError(
            f"state has centroids {state.centroids.shape}, expected ({k}, {num_buckets})"
        )
    if state.iteration > 0 and not state.converged:
        state.converged = _converged(state, tol)  # a checkpoint written before the flag was
    while not state.converged and state.iteration < max_iter:
        state = kmeans_step(points, weights, state, ground, order, n_threads, embedding)
        state.converged = _converged(state, tol)
        if opt.callback is not None:
            opt.callback(state)
    return state


def _converged(state: PotentialState, tol: float) -> bool:
    """The stopping rule: a fixed point, or a relative objective change below `tol`."""
    if state.n_changed[-1] == 0 and state.n_empty[-1] == 0:
        return True
    if state.iteration < 2:
        return False
    prev, cur = state.objective[-2], state.objective[-1]
    return bool(prev <= 0 or abs(prev - cur) / prev < tol)
