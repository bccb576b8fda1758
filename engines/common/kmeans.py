"""Weighted k-means with exact pruning (Hamerly / Yinyang bounds), for EMD and L2, in numba.

Input space. ``X`` is ``(n, d)`` float32 (other dtypes are converted, which copies).

* ``metric="emd"``: ``X`` must hold normalised CDF rows, ``common.emd.cumulative(histograms)``,
  not the histograms themselves; then L1 between rows is the 1-D EMD in bins. A cheap check on
  a sample of rows rejects histograms passed by mistake.
* ``metric="l2"``: plain vectors (e.g. OCHS), Euclidean distance.

Centroid rule (``centroid``, kept in the state):

* ``"mean"``: the weighted mean of the members. For "l2" it minimises the squared distances.
  For "emd" it is the CDF of the mean histogram, the "EMD k-means" of poker abstraction
  (Johanson et al., 2013), but not the L1 minimiser.
* ``"median"`` ("emd" only): per coordinate, the weighted lower median of the members' values:
  the smallest value ``v`` whose members at or below it weigh at least half the cluster (for
  ``m`` unweighted members, the ``ceil(m / 2)``-th smallest). Per coordinate it minimises
  ``sum_i w_i |x_it - v|``, so it minimises the summed EMD of the members. The medians of
  non-decreasing CDF rows ending at 1 are non-decreasing and end at 1: a valid CDF
  (``common.emd.histogram_from_cdf`` gives its non-negative histogram of mass 1), every entry
  one of the members' own values. Per cluster the members are gathered once, coordinate-major;
  per coordinate one pass weighs the members against the previous centroid's value, which
  settles the median when it is that value again, else a weighted quickselect (expected linear
  time) runs on the side that holds it. Clusters are independent, so threads do not change
  the result.

Objective, recorded per iteration: ``sum_i w_i * dist(x_i, c_{a_i})`` with ``dist`` = EMD for
"emd" (plain, not squared) and squared Euclidean for "l2" (standard k-means), measured against
the centroids the assignment used. When the centroid minimises the summed distance of its
members ("l2" with means, "emd" with medians), Lloyd's iteration never increases it: the update
cannot raise the members' total, and re-assigning to fixed centres cannot either (up to float
rounding in the sums). With "emd" and means only the assignment half is guaranteed; the mean
update can raise it, and on skewed HSDs it does (most in the first update, away from the
k-means++ seeds, which are data points). ``kmeans`` stops when the objective's relative change
(either way) drops below ``tol``, at a fixed point, or at ``max_iter``.

Pruning: Yinyang k-means (Ding et al., 2015), which with one group is Hamerly's algorithm
(Hamerly, 2010). The centres are split once into ``G`` groups (a few Lloyd iterations on the
initial centres). Per point the state keeps the exact distance to its centre (recomputed every
iteration anyway, since the objective needs it: n distances, 1/k of a naive pass) and, per
group, a float32 lower bound on the distance to the group's centres other than its own; after
an update each group bound drops by the group's largest centre drift. A point whose centre
distance is below ``max(min group bound, half the gap from its centre to the nearest other
centre)`` keeps its centre without any other distance; otherwise only the groups whose bound
is below that distance are scanned. For "l2" the bounds are on the unsquared distance (the
triangle inequality needs a metric). Pruning is exact: assignments equal a brute-force argmin
(ties to the lowest index), and pruned and unpruned runs give bit-identical results. With one
group, Hamerly skipped 14-43% of the distances in the first 8 iterations on 200,000 x 1,000
HSD-like data; 32 groups skipped 95-97% (see bench/bench_kmeans.py). Bounds take
``4 * n * G`` bytes; ``default_groups(k)`` = min(k // 10, 32).

Empty clusters: after each update, empty clusters (in index order) are re-seeded on the points
farthest from their assigned centre (distance descending, index ascending; only points at
positive distance), without removing those points from their old clusters; the next
assignment moves them. If fewer such points exist than empty clusters (fewer distinct points
than k), the rest keep their old centroid and stay empty.

Threads and determinism. The assignment kernel runs over a point range ``[start, stop)`` and
releases the GIL; :func:`kmeans_step` cuts the points into fixed chunks of ``chunk_size``,
runs them on ``n_threads`` threads, and adds the per-chunk partial sums (weighted vectors and
weights per cluster, objective) in chunk order, so results do not depend on ``n_threads``.
They do depend, at float-rounding level, on ``chunk_size``.

Seeding: :func:`kmeanspp_init` is greedy k-means++ (``n_local_trials`` candidates per centre,
default ``2 + ln k``, sampled proportionally to ``w * D^p`` with ``p = 1`` for "emd" and
``p = 2`` for "l2", keeping the candidate that lowers the potential most). The classic version
costs ``n * k * d`` per trial (5.8e11 terms for the flop round, times ~11 trials). Here each
centre keeps its points in a list sorted by distance, and a candidate only reads the points it
can win: those with ``d(candidate, their centre) < 2 D`` (triangle inequality), a few percent
of ``n * k`` in practice. When ``n > 50 * k`` it seeds on a weighted random sample of ``50 * k``
points (``sample_size`` overrides), drawn with replacement and merged into counts: at
n = 1,286,792 HSD-like rows and k = 9,000 that took 27 s on one core. Deterministic for a seed.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeVar

import numpy as np
from numba import njit

Metric = Literal["emd", "l2"]
Centroid = Literal["mean", "median"]

DEFAULT_CHUNK = 1 << 15  # points per assignment chunk; fixed, so results ignore n_threads
SAMPLE_FACTOR = 50  # k-means++ seeds on a sample of SAMPLE_FACTOR * k points when n exceeds it

_TILE = 256  # centres per scan tile: its (d, 256) float64 slice stays in L2 while points stream
_PP_BLOCK = 1024  # points per potential block in k-means++ sampling
_SLACK = 1e-9  # relative margin so float rounding in the bounds never prunes a near-tie
_DENSE_NUM, _DENSE_DEN = 1, 2  # a point needing >= 1/2 of the groups scans them all, tiled
_ROUND_DOWN = 1.0 - 1e-6  # float32 bounds are shrunk by more than their rounding error
_METRICS = ("emd", "l2")
_CENTROIDS = ("mean", "median")
_GATHER_MAX = 1 << 22  # values per thread in the median's coordinate-major gather (16 MiB f32)

T = TypeVar("T")
R = TypeVar("R")
State = TypeVar("State")


# ------------------------------------------------------------------------------------ kernels
# Distances are accumulated in float64, dimension by dimension in order, both here and in the
# tiled scan (no fastmath), so a point-centre distance has the same bits wherever computed.
# The kernels take their arrays and scalars one by one, however many (`_assign_range`: 20):
# an @njit function cannot take a Python object such as `KMeansOptions` or `KMeansState`, so
# the Python wrappers unpack those into what each kernel reads.


@njit(cache=True, nogil=True)
def _dist_full(x: np.ndarray, c: np.ndarray, l2: bool) -> float:
    """Raw distance: L1, or squared L2."""
    acc = 0.0
    if l2:
        for t in range(x.shape[0]):
            v = np.float64(x[t]) - c[t]
            acc += v * v
    else:
        for t in range(x.shape[0]):
            acc += abs(np.float64(x[t]) - c[t])
    return acc


@njit(cache=True, nogil=True)
def _dist4(x: np.ndarray, c: np.ndarray, l2: bool) -> float:
    """Raw distance with four interleaved sums: a fixed order, but ~4x the ILP of one sum."""
    d = x.shape[0]
    a0 = 0.0
    a1 = 0.0
    a2 = 0.0
    a3 = 0.0
    t = 0
    if l2:
        while t + 4 <= d:
            v0 = np.float64(x[t]) - c[t]
            v1 = np.float64(x[t + 1]) - c[t + 1]
            v2 = np.float64(x[t + 2]) - c[t + 2]
            v3 = np.float64(x[t + 3]) - c[t + 3]
            a0 += v0 * v0
            a1 += v1 * v1
            a2 += v2 * v2
            a3 += v3 * v3
            t += 4
        while t < d:
            v0 = np.float64(x[t]) - c[t]
            a0 += v0 * v0
            t += 1
    else:
        while t + 4 <= d:
            a0 += abs(np.float64(x[t]) - c[t])
            a1 += abs(np.float64(x[t + 1]) - c[t + 1])
            a2 += abs(np.float64(x[t + 2]) - c[t + 2])
            a3 += abs(np.float64(x[t + 3]) - c[t + 3])
            t += 4
        while t < d:
            a0 += abs(np.float64(x[t]) - c[t])
            t += 1
    return (a0 + a1) + (a2 + a3)


@njit(cache=True, nogil=True)
def _tile_dists(
    x: np.ndarray, CT: np.ndarray, j0: int, width: int, l2: bool, acc: np.ndarray
) -> None:
    """Raw distances from ``x`` to centres ``j0 .. j0+width-1`` of transposed ``CT`` (d, k)."""
    for jj in range(width):
        acc[jj] = 0.0
    for t in range(CT.shape[0]):
        xt = np.float64(x[t])
        row = CT[t, j0 : j0 + width]
        if l2:
            for jj in range(width):
                v = xt - row[jj]
                acc[jj] += v * v
        else:
            for jj in range(width):
                acc[jj] += abs(xt - row[jj])


@njit(cache=True, nogil=True)
def _scan(
    X: np.ndarray,
    rows: np.ndarray,
    m: int,
    CT: np.ndarray,
    l2: bool,
    best: np.ndarray,
    bd: np.ndarray,
    sd: np.ndarray,
) -> None:
    """Closest and second-closest centre (raw distances) of points ``X[rows[:m]]``.

    Centres come transposed, ``CT`` (d, k), and in tiles of ``_TILE``: the inner loop runs
    over centres (vectorised, no reduction), and a tile is reused by every point while in cache.
    Ties go to the lowest centre index, as with argmin.
    """
    d, k = CT.shape
    acc = np.empty(_TILE, dtype=np.float64)
    for q in range(m):
        best[q] = -1
        bd[q] = np.inf
        sd[q] = np.inf
    for j0 in range(0, k, _TILE):
        width = min(k, j0 + _TILE) - j0
        for q in range(m):
            _tile_dists(X[rows[q]], CT, j0, width, l2, acc)
            b = best[q]
            b1 = bd[q]
            b2 = sd[q]
            for jj in range(width):
                dj = acc[jj]
                if dj < b1:
                    b2 = b1
                    b1 = dj
                    b = j0 + jj
                elif dj < b2:
                    b2 = dj
            best[q] = b
            bd[q] = b1
            sd[q] = b2


@njit(cache=True, nogil=True)
def _store_lower(v: float) -> np.float32:
    """A float32 no larger than ``v`` (>= 0): bounds must stay bounds after rounding."""
    return np.float32(v * _ROUND_DOWN)


@njit(cache=True, nogil=True)
def _assign_range(
    X: np.ndarray,
    w: np.ndarray,
    C: np.ndarray,
    CTg: np.ndarray,
    gorder: np.ndarray,
    gstart: np.ndarray,
    sgroup: np.ndarray,
    cgroup: np.ndarray,
    gdrift: np.ndarray,
    half_gap: np.ndarray,
    labels: np.ndarray,
    upper: np.ndarray,
    lower: np.ndarray,
    start: int,
    stop: int,
    l2: bool,
    prune: bool,
    sums: np.ndarray,
    wsum: np.ndarray,
    stats: np.ndarray,
) -> None:
    """Assign points ``start .. stop-1`` with group bounds (if ``prune``); add sums and stats.

    Pass 1 decays each point's group lower bounds and tests them against the exact distance to
    its centre, listing the groups it must scan; pass 2 computes the distances: points that
    need most groups ("dense") over tiles of all centres, the others group by group (a group's
    slice of ``CTg``, the centres transposed in group order, stays in cache while the points
    that listed it stream past); pass 3 picks the closest centre and refreshes the bounds;
    pass 4 adds every point, in index order, to the sums, so pruned and unpruned runs agree
    bit for bit.
    ``gdrift`` rows: largest drift in the group, its centre, second-largest drift.
    """
    d = X.shape[1]
    k = C.shape[0]
    G = gstart.shape[0] - 1
    size = stop - start
    has_w = w.shape[0] > 0
    raw = np.empty(size, dtype=np.float64)  # raw distance to the assigned centre
    fail = np.empty(size, dtype=np.int64)  # points that scan at least one group
    best0 = np.empty(size, dtype=np.int64)
    bd0 = np.empty(size, dtype=np.float64)
    need = np.zeros((size, G), dtype=np.bool_)
    dense = np.empty(size, dtype=np.int64)  # positions in ``fail`` that scan every group
    gcount = np.zeros(G, dtype=np.int64)
    nfail = 0
    ndense = 0
    n_dist = 0
    for i in range(start, stop):
        a = labels[i]
        if prune and a >= 0:
            da = _dist_full(X[i], C[a], l2)
            n_dist += 1
            ua = np.sqrt(da) if l2 else da
            ga = cgroup[a]
            glb = np.inf
            for g in range(G):
                # A group's bound moves by its largest drift, not counting the point's own centre.
                dg = gdrift[2, g] if (g == ga and gdrift[1, g] == a) else gdrift[0, g]
                v = max(0.0, np.float64(lower[i, g]) - dg)
                lower[i, g] = _store_lower(v)
                glb = min(glb, v)
            thr = ua * (1.0 + _SLACK)
            if thr < max(glb, half_gap[a]):
                raw[i - start] = da
                upper[i] = ua
                continue
            fail[nfail] = i
            best0[nfail] = a
            bd0[nfail] = da
            cnt = 0
            for g in range(G):
                if lower[i, g] <= thr:
                    need[nfail, g] = True
                    cnt += 1
            if cnt * _DENSE_DEN >= G * _DENSE_NUM:
                dense[ndense] = nfail
                ndense += 1
                for g in range(G):
                    need[nfail, g] = True
            else:
                for g in range(G):
                    if need[nfail, g]:
                        gcount[g] += 1
        else:
            fail[nfail] = i
            best0[nfail] = -1
            bd0[nfail] = np.inf
            dense[ndense] = nfail
            ndense += 1
            for g in range(G):
                need[nfail, g] = True
        nfail += 1

    r_min1 = np.empty((nfail, G), dtype=np.float64)
    r_min2 = np.empty((nfail, G), dtype=np.float64)
    r_arg = np.empty((nfail, G), dtype=np.int64)

    # Dense points: tiles of centres (in group order) across all groups, as in ``_scan``.
    n_dist += ndense * k
    acc = np.empty(_TILE, dtype=np.float64)
    for p in range(ndense):
        q = dense[p]
        for g in range(G):
            r_min1[q, g] = np.inf
            r_min2[q, g] = np.inf
            r_arg[q, g] = -1
    runs = np.empty(_TILE + 1, dtype=np.int64)  # group runs within a tile (groups contiguous)
    for j0 in range(0, k, _TILE):
        width = min(k, j0 + _TILE) - j0
        n_runs = 0
        for jj in range(width):
            if jj == 0 or sgroup[j0 + jj] != sgroup[j0 + jj - 1]:
                runs[n_runs] = jj
                n_runs += 1
        runs[n_runs] = width
        for p in range(ndense):
            q = dense[p]
            _tile_dists(X[fail[q]], CTg, j0, width, l2, acc)
            for r in range(n_runs):
                g = sgroup[j0 + runs[r]]
                m1 = r_min1[q, g]
                m2 = r_min2[q, g]
                am = r_arg[q, g]
                for jj in range(runs[r], runs[r + 1]):
                    dj = acc[jj]
                    if dj < m2:
                        if dj < m1:
                            m2 = m1
                            m1 = dj
                            am = gorder[j0 + jj]
                        else:
                            m2 = dj
                r_min1[q, g] = m1
                r_min2[q, g] = m2
                r_arg[q, g] = am

    # Sparse points: group by group, over the points that listed the group.
    gptr = np.zeros(G + 1, dtype=np.int64)
    for g in range(G):
        gptr[g + 1] = gptr[g] + gcount[g]
    glist = np.empty(gptr[G], dtype=np.int64)
    fill = gptr[:G].copy()
    p = 0
    for q in range(nfail):
        if p < ndense and dense[p] == q:
            p += 1
            continue
        for g in range(G):
            if need[q, g]:
                glist[fill[g]] = q
                fill[g] += 1
    max_gs = 0
    for g in range(G):
        max_gs = max(max_gs, gstart[g + 1] - gstart[g])
    gacc = np.empty(max(max_gs, 1), dtype=np.float64)
    for g in range(G):
        c0 = gstart[g]
        gs = gstart[g + 1] - c0
        n_dist += gs * (gptr[g + 1] - gptr[g])
        for p in range(gptr[g], gptr[g + 1]):
            q = glist[p]
            m1 = np.inf
            m2 = np.inf
            am = -1
            if gs > 0:
                _tile_dists(X[fail[q]], CTg, c0, gs, l2, gacc)
                for jj in range(gs):
                    dj = gacc[jj]
                    if dj < m1:
                        m2 = m1
                        m1 = dj
                        am = gorder[c0 + jj]
                    elif dj < m2:
                        m2 = dj
            r_min1[q, g] = m1
            r_min2[q, g] = m2
            r_arg[q, g] = am

    n_changed = 0
    for q in range(nfail):
        i = fail[q]
        b = best0[q]
        bd = bd0[q]
        # Closest over the old centre and every scanned group; ties to the lowest index.
        for g in range(G):
            if need[q, g]:
                m1 = r_min1[q, g]
                j = r_arg[q, g]
                if m1 < bd or (m1 == bd and j < b):
                    b = j
                    bd = m1
        for g in range(G):
            if need[q, g]:
                v = r_min2[q, g] if r_arg[q, g] == b else r_min1[q, g]
                lower[i, g] = _store_lower(np.sqrt(v) if l2 else v)
        a = labels[i]
        if a >= 0 and b != a:
            ga = cgroup[a]
            if not need[q, ga]:
                # The old centre is no longer excluded from its (unscanned) group's bound.
                da = bd0[q]
                ua = np.sqrt(da) if l2 else da
                lower[i, ga] = min(lower[i, ga], _store_lower(ua))
        if b != a:
            n_changed += 1
        labels[i] = b
        raw[i - start] = bd
        upper[i] = np.sqrt(bd) if l2 else bd

    obj = 0.0
    for i in range(start, stop):
        wi = w[i] if has_w else 1.0
        a = labels[i]
        obj += wi * raw[i - start]
        for t in range(d):
            sums[a, t] += wi * np.float64(X[i, t])
        wsum[a] += wi
    stats[0] += n_dist
    stats[1] += n_changed
    stats[2] += obj


@njit(cache=True, nogil=True)
def _select_weighted(v: np.ndarray, wt: np.ndarray, m: int, need: float) -> float:
    """Smallest of ``v[:m]`` whose entries at or below it weigh at least ``need`` (> 0).

    Quickselect with a three-way partition (CDF values tie often: 0 early, 1 late),
    reordering ``v[:m]`` and ``wt[:m]`` in place. Expected linear time.
    """
    lo = 0
    hi = m
    while True:
        a = v[lo]
        b = v[(lo + hi - 1) // 2]
        c = v[hi - 1]
        p = max(min(a, b), min(max(a, b), c))  # median of three
        lt = lo
        i = lo
        gt = hi
        while i < gt:
            x = v[i]
            if x < p:
                v[i], v[lt] = v[lt], x
                wt[i], wt[lt] = wt[lt], wt[i]
                lt += 1
                i += 1
            elif x > p:
                gt -= 1
                v[i], v[gt] = v[gt], x
                wt[i], wt[gt] = wt[gt], wt[i]
            else:
                i += 1
        w_less = 0.0
        for j in range(lo, lt):
            w_less += wt[j]
        if w_less >= need:
            hi = lt
            continue
        w_equal = 0.0
        for j in range(lt, gt):
            w_equal += wt[j]
        # gt == hi: nothing is larger, so only rounding in ``need`` could make this fail.
        if w_less + w_equal >= need or gt == hi:
            return p
        need -= w_less + w_equal
        lo = gt


@njit(cache=True, nogil=True)
def _column_median(
    col: np.ndarray, wrow: np.ndarray, m: int, guess: float, vals: np.ndarray, wts: np.ndarray
) -> float:
    """Weighted lower median of ``col[:m]`` (weights ``wrow``), trying ``guess`` as the pivot.

    The previous centroid's value is usually the median again, or close to it: one read-only
    pass then settles it, or leaves only the values on the median's side to select from
    (copied into the scratch ``vals``, ``wts``). The result does not depend on the guess
    (beyond float rounding in sums of non-integer weights).
    """
    total = 0.0
    w_less = 0.0
    w_equal = 0.0
    for r in range(m):
        x = col[r]
        total += wrow[r]
        if x < guess:
            w_less += wrow[r]
        elif x == guess:
            w_equal += wrow[r]
    need = 0.5 * total
    if w_less < need <= w_less + w_equal:
        return guess  # w_equal > 0 here: the guess is one of the values
    q = 0
    if w_less >= need:
        for r in range(m):
            if col[r] < guess:
                vals[q] = col[r]
                wts[q] = wrow[r]
                q += 1
    else:
        need -= w_less + w_equal
        for r in range(m):
            if col[r] > guess:
                vals[q] = col[r]
                wts[q] = wrow[r]
                q += 1
        if q == 0:  # only float rounding of non-integer weights gets here: take the largest
            return col[:m].max()
    return _select_weighted(vals, wts, q, need)


@njit(cache=True, nogil=True)
def _members_by_cluster(labels: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Point indices grouped by label (ascending within a cluster) and each cluster's start."""
    start = np.zeros(k + 1, dtype=np.int64)
    for i in range(labels.shape[0]):
        start[labels[i] + 1] += 1
    for c in range(k):
        start[c + 1] += start[c]
    fill = start[:k].copy()
    members = np.empty(labels.shape[0], dtype=np.int64)
    for i in range(labels.shape[0]):
        c = labels[i]
        members[fill[c]] = i
        fill[c] += 1
    return members, start


@njit(cache=True, nogil=True)
def _median_range(
    X: np.ndarray,
    w: np.ndarray,
    members: np.ndarray,
    start: np.ndarray,
    c0: int,
    c1: int,
    out: np.ndarray,
) -> None:
    """Rows ``c0 .. c1-1`` of ``out`` (the previous centroids, used as pivot guesses) become
    the weighted lower median, per coordinate, of each cluster's members; empty ones stay.

    A cluster's members are gathered coordinate-major once (each row read once), so each
    coordinate's pass reads contiguous values; a cluster too large for that buffer
    (``_GATHER_MAX`` values) reads its rows once per coordinate instead.
    """
    d = X.shape[1]
    has_w = w.shape[0] > 0
    largest = 0
    for c in range(c0, c1):
        largest = max(largest, start[c + 1] - start[c])
    width = min(largest, max(1, _GATHER_MAX // d))
    cols = np.empty((d, width), dtype=X.dtype)
    column = np.empty(largest if largest > width else 0, dtype=X.dtype)
    wrow = np.empty(largest, dtype=np.float64)
    vals = np.empty(largest, dtype=X.dtype)
    wts = np.empty(largest, dtype=np.float64)
    for c in range(c0, c1):
        s = start[c]
        m = start[c + 1] - s
        if m == 0:
            continue
        gathered = m <= width
        for r in range(m):
            i = members[s + r]
            wrow[r] = w[i] if has_w else 1.0
            if gathered:
                for t in range(d):
                    cols[t, r] = X[i, t]
        for t in range(d):
            if gathered:
                out[c, t] = _column_median(cols[t], wrow, m, out[c, t], vals, wts)
            else:
                for r in range(m):
                    column[r] = X[members[s + r], t]
                out[c, t] = _column_median(column, wrow, m, out[c, t], vals, wts)


@njit(cache=True, nogil=True)
def _half_gaps(C: np.ndarray, CT: np.ndarray, l2: bool, start: int, stop: int, out: np.ndarray):
    """Half the distance from centres ``start .. stop-1`` to their nearest other centre."""
    m = stop - start
    rows = np.arange(start, stop)
    best = np.empty(m, dtype=np.int64)
    bd = np.empty(m, dtype=np.float64)
    sd = np.empty(m, dtype=np.float64)
    _scan(C, rows, m, CT, l2, best, bd, sd)
    # A centre is its own closest (at 0), so the second-closest is the nearest other one.
    for q in range(m):
        out[start + q] = 0.5 * (np.sqrt(sd[q]) if l2 else sd[q])


@njit(cache=True, nogil=True)
def _sample_by_blocks(pot: np.ndarray, bsum: np.ndarray, target: float) -> int:
    """Index ``i`` with cumulative ``pot`` first exceeding ``target`` (block sums first).

    Block sums may carry rounding residue, so the search goes on past the chosen block if
    needed and falls back to the last positive entry seen.
    """
    n = pot.shape[0]
    nb = bsum.shape[0]
    acc = 0.0
    b = 0
    while b < nb - 1 and acc + bsum[b] <= target:
        acc += bsum[b]
        b += 1
    last = -1
    for i in range(b * _PP_BLOCK, n):
        if pot[i] > 0:
            last = i
            acc += pot[i]
            if acc > target:
                return i
    if last >= 0:
        return last
    for i in range(b * _PP_BLOCK - 1, -1, -1):
        if pot[i] > 0:
            return i
    return 0


@njit(cache=True, nogil=True)
def _block_sums(pot: np.ndarray, bsum: np.ndarray) -> None:
    n = pot.shape[0]
    for b in range(bsum.shape[0]):
        s = 0.0
        for i in range(b * _PP_BLOCK, min(n, (b + 1) * _PP_BLOCK)):
            s += pot[i]
        bsum[b] = s


@njit(cache=True, nogil=True)
def _pp_gain(
    X: np.ndarray,
    w: np.ndarray,
    cand: np.ndarray,
    cc: np.ndarray,
    nc: int,
    Dr: np.ndarray,
    head: np.ndarray,
    nxt: np.ndarray,
    rad: np.ndarray,
    f: float,
    l2: bool,
) -> float:
    """Potential removed by adding centre ``cand`` (raw distances ``cc`` to the centres).

    A point can only move to ``cand`` if ``d(cand, its centre) < 2 D``; lists are sorted by
    ``D`` descending, so each list is read only up to the first point that cannot move.
    """
    gain = 0.0
    for j in range(nc):
        dq = cc[j]
        if not dq < f * rad[j]:
            continue
        p = head[j]
        while p >= 0 and dq < f * Dr[p]:
            dx = _dist4(X[p], cand, l2)
            if dx < Dr[p]:
                gain += w[p] * (Dr[p] - dx)
            p = nxt[p]
    return gain


@njit(cache=True, nogil=True)
def _link_sorted(members: np.ndarray, m: int, Dr: np.ndarray, nxt: np.ndarray, prv: np.ndarray):
    """Link ``members[:m]`` into a list by ``Dr`` descending (stable); returns its head."""
    order = np.argsort(-Dr[members[:m]], kind="mergesort")
    prev = -1
    h = -1
    for r in range(m):
        p = members[order[r]]
        prv[p] = prev
        if prev >= 0:
            nxt[prev] = p
        else:
            h = p
        prev = p
    if prev >= 0:
        nxt[prev] = -1
    return h


@njit(cache=True, nogil=True)
def _relayout(
    nc: int,
    head: np.ndarray,
    nxt: np.ndarray,
    Xl: np.ndarray,
    wl: np.ndarray,
    Dr: np.ndarray,
    perm: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Copy points into list order (each list contiguous), so list walks read memory in order.

    Returns the new rows, weights, distances, original indices, next and previous links.
    """
    n = Xl.shape[0]
    order = np.empty(n, dtype=np.int64)
    new_nxt = np.empty(n, dtype=np.int32)
    new_prv = np.empty(n, dtype=np.int32)
    m = 0
    for j in range(nc):
        p = head[j]
        if p < 0:
            continue
        first = m
        while p >= 0:
            order[m] = p
            m += 1
            p = nxt[p]
        head[j] = first
        for r in range(first, m):
            new_prv[r] = r - 1 if r > first else -1
            new_nxt[r] = r + 1 if r + 1 < m else -1
    return Xl[order], wl[order], Dr[order], perm[order], new_nxt, new_prv


@njit(cache=True, nogil=True)
def _kmeanspp(
    X: np.ndarray, w: np.ndarray, k: int, l2: bool, first_u: float, trial_u: np.ndarray
) -> np.ndarray:
    """Greedy k-means++ (D^1 for L1, D^2 for L2) with triangle-inequality skipping; indices.

    Each centre keeps its points in a linked list sorted by distance descending; a candidate
    reads a list only while ``d(candidate, centre) < 2 D`` (the only points it can win).
    Point data live in a private copy, re-laid out in list order now and then (random reads of
    50-float rows dominate otherwise); sampling stays in the caller's order.
    """
    n, d = X.shape
    n_trials = trial_u.shape[1]
    f = 4.0 if l2 else 2.0  # "d(cand, c) < 2 D" in raw units (squared for l2)
    out = np.empty(k, dtype=np.int64)
    CT = np.empty((d, k), dtype=np.float64)  # chosen centres, transposed for tiled distances
    pot = np.empty(n, dtype=np.float64)  # w * Dr, in X's order: the sampling weight
    nb = (n + _PP_BLOCK - 1) // _PP_BLOCK
    bsum = np.empty(nb, dtype=np.float64)
    # In list order ("local" positions): rows, weights, raw distances, links, original index.
    Xl = X
    wl = w
    Dr = np.empty(n, dtype=np.float64)  # raw distance (squared for l2) to the nearest centre
    perm = np.arange(n)
    nxt = np.empty(n, dtype=np.int32)
    prv = np.empty(n, dtype=np.int32)
    head = np.full(k, -1, dtype=np.int32)
    rad = np.zeros(k, dtype=np.float64)  # Dr of each list's head: the cluster's radius
    moved = np.empty(n, dtype=np.int64)
    cc = np.empty((n_trials, k), dtype=np.float64)
    cand = np.empty((n_trials, d), dtype=np.float64)
    cand_idx = np.empty(n_trials, dtype=np.int64)

    wbsum = np.empty(nb, dtype=np.float64)
    _block_sums(w, wbsum)
    wtotal = 0.0
    for b in range(nb):
        wtotal += wbsum[b]
    i0 = _sample_by_blocks(w, wbsum, first_u * wtotal)
    out[0] = i0
    c0 = np.empty(d, dtype=np.float64)
    for t in range(d):
        c0[t] = X[i0, t]
        CT[t, 0] = c0[t]
    for i in range(n):
        dx = _dist4(X[i], c0, l2)
        Dr[i] = dx
        pot[i] = w[i] * dx
        moved[i] = i
    head[0] = _link_sorted(moved, n, Dr, nxt, prv)
    rad[0] = Dr[head[0]]
    _block_sums(pot, bsum)
    next_layout = 1

    for c in range(1, k):
        if c >= next_layout:
            Xl, wl, Dr, perm, nxt, prv = _relayout(c, head, nxt, Xl, wl, Dr, perm)
            next_layout = c + max(16, c // 8)
        if c % 64 == 0:
            _block_sums(pot, bsum)  # clear the rounding drift of incremental updates
        total = 0.0
        for b in range(nb):
            total += bsum[b]
        if not total > 0.0:
            # Fewer distinct points than k: every point is a centre already; repeat by weight.
            idx = _sample_by_blocks(w, wbsum, trial_u[c - 1, 0] * wtotal)
            out[c] = idx
            for t in range(d):
                CT[t, c] = X[idx, t]
            continue
        best_t = 0
        best_gain = -1.0
        for tr in range(n_trials):
            idx = _sample_by_blocks(pot, bsum, trial_u[c - 1, tr] * total)
            cand_idx[tr] = idx
            for t in range(d):
                cand[tr, t] = X[idx, t]
            _tile_dists(cand[tr], CT, 0, c, l2, cc[tr])
            g = _pp_gain(Xl, wl, cand[tr], cc[tr], c, Dr, head, nxt, rad, f, l2)
            if g > best_gain:
                best_gain = g
                best_t = tr
        out[c] = cand_idx[best_t]
        newc = cand[best_t]
        for t in range(d):
            CT[t, c] = newc[t]
        # Unlink the points the new centre wins (lists stay sorted), then link them to it.
        n_moved = 0
        ccb = cc[best_t]
        for j in range(c):
            dq = ccb[j]
            if not dq < f * rad[j]:
                continue
            p = head[j]
            while p >= 0 and dq < f * Dr[p]:
                q = nxt[p]
                dx = _dist4(Xl[p], newc, l2)
                if dx < Dr[p]:
                    if prv[p] >= 0:
                        nxt[prv[p]] = q
                    else:
                        head[j] = q
                    if q >= 0:
                        prv[q] = prv[p]
                    o = perm[p]
                    new_pot = wl[p] * dx
                    bsum[o // _PP_BLOCK] += new_pot - pot[o]
                    pot[o] = new_pot
                    Dr[p] = dx
                    moved[n_moved] = p
                    n_moved += 1
                p = q
            rad[j] = Dr[head[j]] if head[j] >= 0 else 0.0
        head[c] = _link_sorted(moved, n_moved, Dr, nxt, prv)
        rad[c] = Dr[head[c]] if n_moved > 0 else 0.0
    return out


# ------------------------------------------------------------------------------------- state


def _rng_to_ints(gen: np.random.Generator) -> np.ndarray:
    st = gen.bit_generator.state
    if st["bit_generator"] != "PCG64":
        raise ValueError("only PCG64 generators can be stored")
    s, inc = int(st["state"]["state"]), int(st["state"]["inc"])
    m = (1 << 64) - 1
    return np.array(
        [s >> 64, s & m, inc >> 64, inc & m, int(st["has_uint32"]), int(st["uinteger"])],
        dtype=np.uint64,
    )


def _rng_from_ints(a: np.ndarray) -> np.random.Generator:
    v = [int(x) for x in a]
    bg = np.random.PCG64()
    bg.state = {
        "bit_generator": "PCG64",
        "state": {"state": (v[0] << 64) | v[1], "inc": (v[2] << 64) | v[3]},
        "has_uint32": v[4],
        "uinteger": v[5],
    }
    return np.random.Generator(bg)


_HISTORY = ("objective", "skipped_fraction", "n_changed", "n_empty")


@dataclass
class KMeansState:
    """Everything needed to resume k-means: centroids, assignment, bounds, history, rng."""

    centroids: np.ndarray  # (k, d) float64: the centres the next assignment uses
    labels: np.ndarray  # (n,) int32 assigned centre; -1 before the first assignment
    upper: np.ndarray  # (n,) float64 distance to the assigned centre at the last assignment
    lower: np.ndarray  # (n, G) float32 lower bound on the distance to each group's centres
    drift: np.ndarray  # (k,) float64 distance each centre moved in the last update
    groups: np.ndarray  # (k,) int32 group of each centre (fixed at the start)
    metric: str
    centroid: str = "mean"  # the update rule, "mean" or "median" (see the module docstring)
    iteration: int = 0
    # Set by the iteration that met the stopping rule: a resumed finished state takes no step.
    converged: bool = False
    rng_state: np.ndarray = field(default_factory=lambda: np.zeros(6, dtype=np.uint64))
    objective: np.ndarray = field(default_factory=lambda: np.zeros(0))  # per iteration
    skipped_fraction: np.ndarray = field(default_factory=lambda: np.zeros(0))  # of n*k pairs
    n_changed: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    n_empty: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))

    @classmethod
    def initial(
        cls,
        centroids: np.ndarray,
        n: int,
        metric: str,
        rng: np.random.Generator | None = None,
        n_groups: int | None = None,
        centroid: Centroid = "mean",
    ) -> KMeansState:
        """A state before any assignment, from initial centroids for ``n`` points.

        ``n_groups``: centre groups for the bounds (default ``default_groups(k)``; 1 is
        Hamerly's algorithm); the bounds take ``4 * n * n_groups`` bytes. ``centroid``: the
        update rule ("median" needs metric "emd").
        """
        l2 = _check_metric(metric)
        _check_centroid(centroid, metric)
        C = np.array(centroids, dtype=np.float64, order="C", copy=True)
        if C.ndim != 2 or C.shape[0] < 1:
            raise ValueError(f"centroids must be (k, d), got shape {C.shape}")
        k = C.shape[0]
        G = default_groups(k) if n_groups is None else int(n_groups)
        if not 1 <= G <= k:
            raise ValueError(f"need 1 <= n_groups <= k, got {G}")
        return cls(
            centroids=C,
            labels=np.full(n, -1, dtype=np.int32),
            upper=np.full(n, np.inf),
            lower=np.zeros((n, G), dtype=np.float32),
            drift=np.zeros(k),
            groups=_make_groups(C, G, l2),
            metric=metric,
            centroid=centroid,
            rng_state=_rng_to_ints(rng if rng is not None else np.random.default_rng(0)),
        )

    @property
    def k(self) -> int:
        """Number of clusters."""
        return int(self.centroids.shape[0])

    @property
    def stats(self) -> dict[str, float]:
        """Statistics of the latest iteration (empty before the first)."""
        if self.iteration == 0:
            return {}
        return {name: getattr(self, name)[-1].item() for name in _HISTORY}

    def rng(self) -> np.random.Generator:
        """A generator restored from the stored state."""
        return _rng_from_ints(self.rng_state)

    def copy(self) -> KMeansState:
        """Deep copy (arrays copied)."""
        arrays = {k: v.copy() for k, v in self.to_arrays().items()}
        return KMeansState.from_arrays(arrays)

    def to_arrays(self) -> dict[str, np.ndarray]:
        """Plain arrays (no copies of the big ones) for storage, e.g. in Zarr."""
        out = {
            "centroids": self.centroids,
            "labels": self.labels,
            "upper": self.upper,
            "lower": self.lower,
            "drift": self.drift,
            "groups": self.groups,
            "metric": np.array(_METRICS.index(self.metric), dtype=np.int8),
            "centroid": np.array(_CENTROIDS.index(self.centroid), dtype=np.int8),
            "iteration": np.array(self.iteration, dtype=np.int64),
            "converged": np.array(self.converged, dtype=np.int8),
            "rng_state": self.rng_state,
        }
        for name in _HISTORY:
            out[name] = getattr(self, name)
        return out

    @classmethod
    def from_arrays(cls, arrays: dict[str, Any]) -> KMeansState:
        """Inverse of :meth:`to_arrays` (accepts any array-likes, e.g. Zarr arrays)."""
        a = {k: np.asarray(v) for k, v in arrays.items()}
        return cls(
            centroids=np.ascontiguousarray(a["centroids"], dtype=np.float64),
            labels=np.ascontiguousarray(a["labels"], dtype=np.int32),
            upper=np.ascontiguousarray(a["upper"], dtype=np.float64),
            lower=np.ascontiguousarray(a["lower"], dtype=np.float32),
            drift=np.ascontiguousarray(a["drift"], dtype=np.float64),
            groups=np.ascontiguousarray(a["groups"], dtype=np.int32),
            metric=_METRICS[int(a["metric"])],
            # Checkpoints written before the rule was stored used means.
            centroid=_CENTROIDS[int(a["centroid"])] if "centroid" in a else "mean",
            iteration=int(a["iteration"]),
            converged=bool(a["converged"]) if "converged" in a else False,
            rng_state=np.asarray(a["rng_state"], dtype=np.uint64).copy(),
            objective=np.asarray(a["objective"], dtype=np.float64),
            skipped_fraction=np.asarray(a["skipped_fraction"], dtype=np.float64),
            n_changed=np.asarray(a["n_changed"], dtype=np.int64),
            n_empty=np.asarray(a["n_empty"], dtype=np.int64),
        )


# ----------------------------------------------------------------------------------- helpers


def _check_metric(metric: str) -> bool:
    """True for l2, False for emd; raises on anything else."""
    if metric not in _METRICS:
        raise ValueError(f"metric must be one of {_METRICS}, got {metric!r}")
    return metric == "l2"


def _check_centroid(centroid: str, metric: str) -> None:
    """Raises unless ``centroid`` is a known rule that suits ``metric``."""
    if centroid not in _CENTROIDS:
        raise ValueError(f"centroid must be one of {_CENTROIDS}, got {centroid!r}")
    if centroid == "median" and metric != "emd":
        # The coordinate-wise median minimises L1 (EMD on CDF rows), not squared L2.
        raise ValueError("centroid 'median' is for metric 'emd' only")


def _prepare_X(X: np.ndarray, metric: str) -> np.ndarray:
    Xc = np.ascontiguousarray(X, dtype=np.float32)
    if Xc.ndim != 2 or Xc.shape[0] < 1 or Xc.shape[1] < 1:
        raise ValueError(f"X must be (n, d) with n, d >= 1, got shape {Xc.shape}")
    if metric == "emd":
        # A strided sample: CDF rows are non-decreasing and end at 1; raw histograms are not.
        rows = Xc[:: max(1, Xc.shape[0] // 1024)]
        if np.any(np.diff(rows, axis=1) < -1e-6) or np.any(np.abs(rows[:, -1] - 1.0) > 1e-4):
            raise ValueError(
                "metric 'emd' expects CDF rows: pass common.emd.cumulative(histograms)"
            )
    return Xc


def _prepare_weights(weights: np.ndarray | None, n: int) -> np.ndarray:
    if weights is None:
        return np.empty(0, dtype=np.float64)  # kernels read "no weights" as all ones
    w = np.ascontiguousarray(weights, dtype=np.float64)
    if w.shape != (n,):
        raise ValueError(f"weights must have shape ({n},), got {w.shape}")
    if not np.all(w > 0):
        raise ValueError("weights must be positive")
    return w


def _ranges(n: int, size: int) -> list[tuple[int, int]]:
    return [(s, min(n, s + size)) for s in range(0, n, size)]


def ordered_map(fn: Callable[[T], R], items: Iterable[T], n_threads: int) -> Iterator[R]:
    """``map`` over threads, results in input order, at most ``2 * n_threads`` in flight."""
    if n_threads <= 1:
        for it in items:
            yield fn(it)
        return
    with ThreadPoolExecutor(max_workers=n_threads) as pool:
        pending: deque[Future[R]] = deque()
        for it in items:
            pending.append(pool.submit(fn, it))
            if len(pending) >= 2 * n_threads:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()


def _row_distances(A: np.ndarray, B: np.ndarray, l2: bool) -> np.ndarray:
    diff = A - B
    return np.sqrt(np.einsum("ij,ij->i", diff, diff)) if l2 else np.abs(diff).sum(axis=1)


def _farthest_points(dist: np.ndarray, m: int) -> np.ndarray:
    """Up to ``m`` indices with positive ``dist``: largest first, ties by lowest index."""
    cand = np.flatnonzero(dist > 0)
    if cand.size > m:
        vals = dist[cand]
        thr = np.partition(vals, vals.size - m)[vals.size - m]
        above = cand[vals > thr]
        cand = np.concatenate([above, cand[vals == thr][: m - above.size]])
    return cand[np.lexsort((cand, -dist[cand]))]


def _centre_half_gaps(C: np.ndarray, l2: bool, n_threads: int) -> np.ndarray:
    """Half the distance from each centre to its nearest other centre (Hamerly's s/2)."""
    k = C.shape[0]
    CT = np.ascontiguousarray(C.T)
    out = np.empty(k, dtype=np.float64)
    if k == 1:
        out[0] = np.inf
        return out

    def work(r: tuple[int, int]) -> None:
        _half_gaps(C, CT, l2, r[0], r[1], out)

    for _ in ordered_map(work, _ranges(k, max(1, -(-k // (4 * n_threads)))), n_threads):
        pass
    return out


def default_groups(k: int) -> int:
    """Default number of centre groups for the bounds: k / 10, at most 32."""
    return max(1, min(k // 10, 32))


def _make_groups(C: np.ndarray, G: int, l2: bool) -> np.ndarray:
    """Group centres by a few deterministic Lloyd iterations on the centres themselves."""
    k = C.shape[0]
    if G == 1:
        return np.zeros(k, dtype=np.int32)
    D = np.empty((k, G))
    heads = C[np.linspace(0, k - 1, G).astype(np.int64)].copy()
    groups = np.zeros(k, dtype=np.int32)
    for _ in range(5):
        for g in range(G):
            diff = C - heads[g]
            D[:, g] = (diff * diff).sum(axis=1) if l2 else np.abs(diff).sum(axis=1)
        groups = D.argmin(axis=1).astype(np.int32)
        for g in range(G):
            members = groups == g
            if members.any():
                heads[g] = C[members].mean(axis=0)
    return groups


def _group_drift(drift: np.ndarray, groups: np.ndarray, G: int) -> np.ndarray:
    """Per group: largest drift, the centre with it, second-largest drift (rows 0, 1, 2)."""
    out = np.zeros((3, G), dtype=np.float64)
    out[1] = -1
    order = np.lexsort((-drift, groups))  # by group, then drift descending
    gs = groups[order]
    first = np.flatnonzero(np.r_[True, gs[1:] != gs[:-1]])
    for f in first:
        g = gs[f]
        out[0, g] = drift[order[f]]
        out[1, g] = order[f]
        if f + 1 < gs.size and gs[f + 1] == g:
            out[2, g] = drift[order[f + 1]]
    return out


def _median_update(
    X: np.ndarray, w: np.ndarray, labels: np.ndarray, out: np.ndarray, n_threads: int
) -> None:
    """Rows of ``out`` of non-empty clusters become their members' weighted lower medians."""
    k = out.shape[0]
    members, start = _members_by_cluster(labels, k)

    def work(r: tuple[int, int]) -> None:
        _median_range(X, w, members, start, r[0], r[1], out)

    for _ in ordered_map(work, _ranges(k, max(1, -(-k // (4 * n_threads)))), n_threads):
        pass


# ---------------------------------------------------------------------------------- public API


@dataclass(frozen=True)
class KMeansOptions(Generic[State]):
    """How a k-means run goes: when it stops, how it seeds, its centroid rule, how it splits
    the work and what it calls after each iteration. `kmeans` reads every field;
    `engines.poker.potential.potential_kmeans` reads the stopping, seed, thread and callback
    fields and refuses the others set."""

    # Iterations at most, those of a resumed state included.
    max_iter: int = 100
    # Stop once the objective's relative change (either way) from the previous iteration is
    # below this (0: only at a fixed point or at `max_iter`).
    tol: float = 1e-4
    # The k-means++ seeding's random stream (unused when `init` gives centroids or a state).
    seed: int = 0
    # Candidates tried per centre by greedy k-means++ (None: 2 + ln k).
    n_local_trials: int | None = None
    # The update rule: "mean", or "median" for metric "emd" (see the module docstring).
    centroid: Centroid = "mean"
    # Centre groups of the Yinyang bounds (None: `default_groups(k)`; 1: Hamerly's algorithm),
    # 4 n G bytes; the result does not depend on it.
    n_groups: int | None = None
    # Threads for the assignment and the update; the result does not depend on them.
    n_threads: int = 1
    # Points per assignment chunk: partial sums are added in chunk order, so the result
    # depends on it at float-rounding level.
    chunk_size: int = DEFAULT_CHUNK
    # Called with the state after every iteration, e.g. to checkpoint `state.to_arrays()`.
    callback: Callable[[State], None] | None = None


def kmeanspp_init(
    X: np.ndarray,
    k: int,
    metric: Metric,
    weights: np.ndarray | None = None,
    seed: int | np.random.Generator = 0,
    n_local_trials: int | None = None,
    sample_size: int | None = None,
) -> np.ndarray:
    """Greedy k-means++ centroids ``(k, d)`` float64 (rows of ``X``); deterministic for a seed."""
    l2 = _check_metric(metric)
    Xc = _prepare_X(X, metric)
    n = Xc.shape[0]
    w = _prepare_weights(weights, n)
    if not 1 <= k <= n:
        raise ValueError(f"need 1 <= k <= n, got k={k}, n={n}")
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    trials = 2 + int(np.log(k)) if n_local_trials is None else int(n_local_trials)
    if trials < 1:
        raise ValueError("n_local_trials must be >= 1")
    m = (SAMPLE_FACTOR * k if n > SAMPLE_FACTOR * k else n) if sample_size is None else sample_size
    if m < n:
        if m < k:
            raise ValueError(f"sample_size must be >= k, got {m}")
        # Sampling with replacement by weight, then merging repeats into counts, keeps the
        # weighted distribution; k-means++ then runs on the counted sample.
        p = None if w.size == 0 else w / w.sum()
        idx, counts = np.unique(rng.choice(n, size=m, replace=True, p=p), return_counts=True)
        if idx.size < k:
            raise ValueError(f"sample has {idx.size} distinct points < k={k}")
        Xs, ws = Xc[idx], counts.astype(np.float64)
    else:
        idx, Xs = np.arange(n), Xc
        ws = np.ones(n) if w.size == 0 else w
    first_u = float(rng.random())
    trial_u = rng.random((max(k - 1, 0), trials))
    chosen = _kmeanspp(Xs, ws, k, l2, first_u, trial_u)
    return Xs[chosen].astype(np.float64)


def kmeans_step(
    X: np.ndarray,
    state: KMeansState,
    metric: Metric,
    weights: np.ndarray | None = None,
    *,
    n_threads: int = 1,
    chunk_size: int = DEFAULT_CHUNK,
    prune: bool = True,
    inplace: bool = False,
) -> KMeansState:
    """One Lloyd iteration (pruned assignment + the state's centroid update); the new state.

    ``prune=False`` computes every distance (same results, bit for bit; for benchmarks).
    ``inplace=True`` updates and returns ``state`` itself instead of a copy (saves memory).
    """
    l2 = _check_metric(metric)
    if state.metric != metric:
        raise ValueError(f"state was built for metric {state.metric!r}, not {metric!r}")
    Xc = _prepare_X(X, metric)
    n, d = Xc.shape
    if state.labels.shape != (n,) or state.centroids.shape[1] != d:
        raise ValueError("state does not match X (number of points or dimension)")
    w = _prepare_weights(weights, n)
    st = state if inplace else state.copy()
    C = np.ascontiguousarray(st.centroids, dtype=np.float64)
    k = C.shape[0]

    # Centres sorted by group (by index within a group), transposed: group slices contiguous.
    G = int(st.lower.shape[1])
    gorder = np.argsort(st.groups, kind="stable")
    gstart = np.searchsorted(st.groups[gorder], np.arange(G + 1)).astype(np.int64)
    CTg = np.ascontiguousarray(C[gorder].T)
    sgroup = st.groups[gorder]
    gdrift = _group_drift(st.drift, st.groups, G)
    half_gap = _centre_half_gaps(C, l2, n_threads) if prune else np.zeros(k)

    def work(r: tuple[int, int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        sums = np.zeros((k, d), dtype=np.float64)
        wsum = np.zeros(k, dtype=np.float64)
        stats = np.zeros(3, dtype=np.float64)
        _assign_range(
            Xc, w, C, CTg, gorder, gstart, sgroup, st.groups, gdrift, half_gap, st.labels,
            st.upper, st.lower, r[0], r[1], l2, prune, sums, wsum, stats,
        )  # fmt: skip
        return sums, wsum, stats

    sums = np.zeros((k, d), dtype=np.float64)
    wsum = np.zeros(k, dtype=np.float64)
    stats = np.zeros(3, dtype=np.float64)
    for ps, pw, pst in ordered_map(work, _ranges(n, max(1, chunk_size)), n_threads):
        sums += ps
        wsum += pw
        stats += pst

    new_C = C.copy()
    filled = wsum > 0
    if st.centroid == "median":
        _median_update(Xc, w, st.labels, new_C, n_threads)
    else:
        new_C[filled] = sums[filled] / wsum[filled, None]
    empty = np.flatnonzero(~filled)
    if empty.size:
        picks = _farthest_points(st.upper, int(empty.size))
        new_C[empty[: picks.size]] = Xc[picks]
    st.drift = _row_distances(C, new_C, l2)
    st.centroids = new_C
    st.iteration += 1
    st.objective = np.append(st.objective, stats[2])
    st.skipped_fraction = np.append(st.skipped_fraction, 1.0 - stats[0] / (float(n) * k))
    st.n_changed = np.append(st.n_changed, np.int64(stats[1]))
    st.n_empty = np.append(st.n_empty, np.int64(empty.size))
    return st


def kmeans(
    X: np.ndarray,
    k: int,
    metric: Metric,
    weights: np.ndarray | None = None,
    options: KMeansOptions[KMeansState] | None = None,
    init: str | np.ndarray | KMeansState | None = None,
) -> KMeansState:
    """Lloyd iterations until the objective's relative change < ``options.tol`` or
    ``options.max_iter`` (``options``: `KMeansOptions`, its defaults when None).

    ``init``: None or "k-means++" (seeded by ``options.seed``), a ``(k, d)`` array of
    centroids, or a :class:`KMeansState` to resume (``max_iter`` counts its earlier iterations
    too; its groups are kept; its centroid rule must be ``options.centroid``). Stops early at
    a fixed point (no label changed, no empty cluster). With the "median" rule for metric
    "emd" the summed EMD never rises (see the module docstring).
    """
    opt: KMeansOptions[KMeansState] = KMeansOptions() if options is None else options
    _check_metric(metric)
    _check_centroid(opt.centroid, metric)
    Xc = _prepare_X(X, metric)
    n = Xc.shape[0]
    if isinstance(init, KMeansState):
        if init.centroid != opt.centroid:
            raise ValueError(f"init state uses centroid {init.centroid!r}, not {opt.centroid!r}")
        state = init.copy()
    else:
        rng = np.random.default_rng(opt.seed)
        if init is None or (isinstance(init, str) and init == "k-means++"):
            C0 = kmeanspp_init(Xc, k, metric, weights, rng, opt.n_local_trials)
        elif isinstance(init, str):
            raise ValueError(f"unknown init {init!r}")
        else:
            C0 = np.asarray(init)
        state = KMeansState.initial(C0, n, metric, rng, opt.n_groups, opt.centroid)
    if state.k != k:
        raise ValueError(f"init has {state.k} centroids, expected k={k}")
    if state.iteration > 0 and not state.converged:
        state.converged = _converged(state, opt.tol)  # a checkpoint written before the flag was
    while not state.converged and state.iteration < opt.max_iter:
        state = kmeans_step(Xc, state, metric, weights, n_threads=opt.n_threads,
                            chunk_size=opt.chunk_size, inplace=True)  # fmt: skip
        state.converged = _converged(state, opt.tol)
        if opt.callback is not None:
            opt.callback(state)
    return state


def _converged(state: KMeansState, tol: float) -> bool:
    if state.n_changed[-1] == 0 and state.n_empty[-1] == 0:
        return True  # same labels, same centroids: a fixed point
    if state.iteration < 2:
        return False
    prev, cur = float(state.objective[-2]), float(state.objective[-1])
    if prev <= 0:
        return True
    # |change|, not improvement: with EMD and mean centroids the objective can rise after an
    # update; a rise larger than tol is no convergence (max_iter still bounds it).
    return abs(prev - cur) / prev < tol
