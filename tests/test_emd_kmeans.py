"""EMD kernels against POT; pruned k-means against a brute-force numpy Lloyd and k-means++;
the per-bin median centroid of EMD k-means against brute force."""

from __future__ import annotations

import dataclasses

import numpy as np
import ot
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gameforge.engines.common import emd
from gameforge.engines.common import kmeans as km

# ---------------------------------------------------------------------------------------- EMD


@st.composite
def histogram_pairs(draw):
    bins = draw(st.integers(2, 60))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    # Sparse-ish positive masses of very different totals: counts are normalised by emd_1d.
    a = rng.random(bins) * (rng.random(bins) < 0.7) * draw(st.floats(1e-3, 1e4))
    b = rng.random(bins) * (rng.random(bins) < 0.7) * draw(st.floats(1e-3, 1e4))
    a[rng.integers(bins)] += 0.5
    b[rng.integers(bins)] += 0.5
    return a, b


@settings(max_examples=150, deadline=None)
@given(histogram_pairs())
def test_emd_1d_matches_pot(pair):
    a, b = pair
    bins = a.shape[0]
    pa, pb = a / a.sum(), b / b.sum()
    x = np.arange(bins, dtype=np.float64)
    M = np.abs(x[:, None] - x[None, :])
    ours = emd.emd_1d(a, b)
    assert ours == pytest.approx(float(ot.emd2(pa, pb, M)), rel=1e-9, abs=1e-12)
    assert ours == pytest.approx(float(ot.wasserstein_1d(x, x, pa, pb, p=1)), rel=1e-9, abs=1e-12)
    # EMD = L1 between the CDF rows cumulative() returns.
    cdf = emd.cumulative(np.stack([a, b]), np.float64)
    assert np.abs(cdf[0] - cdf[1]).sum() == pytest.approx(ours, rel=1e-12, abs=1e-12)


def test_emd_matrix_cumulative_and_inverse():
    rng = np.random.default_rng(3)
    X = rng.integers(0, 30, (7, 50)).astype(np.uint16)
    Y = rng.integers(1, 30, (5, 50)).astype(np.int64)
    M = emd.emd_matrix(X, Y)
    assert M.shape == (7, 5) and M.dtype == np.float64
    for i in range(7):
        for j in range(5):
            assert M[i, j] == pytest.approx(emd.emd_1d(X[i], Y[j]), rel=1e-12)
    cdf = emd.cumulative(X)
    assert cdf.dtype == np.float32 and np.all(cdf[:, -1] == 1.0)
    hist = emd.histogram_from_cdf(emd.cumulative(X, np.float64))
    np.testing.assert_allclose(hist, X / X.sum(axis=1, keepdims=True), atol=1e-15)
    with pytest.raises(ValueError):
        emd.cumulative(np.zeros((2, 5)))
    with pytest.raises(ValueError):
        emd.emd_1d(np.ones(4), np.ones(5))


# ------------------------------------------------------------------------------------ k-means


def _data(metric, n=1500, d=50, seed=0):
    rng = np.random.default_rng(seed)
    if metric == "emd":
        # Histograms around a few random shapes, so clusters have some structure.
        base = rng.dirichlet(np.full(d, 0.5), size=6)
        H = rng.poisson(200 * base[rng.integers(6, size=n)]) + rng.poisson(0.3, (n, d))
        H[:, 0] += 1
        return emd.cumulative(H)
    centres = rng.random((6, d))
    return (centres[rng.integers(6, size=n)] + 0.15 * rng.standard_normal((n, d))).astype(
        np.float32
    )


def _raw(X64, C, metric):
    diff = X64[:, None, :] - C[None, :, :]
    return np.abs(diff).sum(-1) if metric == "emd" else (diff**2).sum(-1)


def _lower_median(values, weights):
    """Weighted lower median by sorting: the smallest value whose prefix weighs >= half."""
    order = np.argsort(values, kind="stable")
    cum = np.cumsum(weights[order])
    return values[order][np.searchsorted(cum, 0.5 * cum[-1], side="left")]


def _reference_medians(X64, lab, w, C):
    """Per cluster and coordinate, the weighted lower median of the members (empty: ``C``)."""
    out = C.copy()
    for c in np.unique(lab):
        members = lab == c
        for t in range(X64.shape[1]):
            out[c, t] = _lower_median(X64[members, t], w[members])
    return out


def _reference_lloyd(X, C0, metric, w, iters, centroid="mean"):
    """Brute-force Lloyd in numpy with the engine's empty-cluster rule."""
    X64 = X.astype(np.float64)
    n, k = X.shape[0], C0.shape[0]
    C = C0.astype(np.float64).copy()
    out = []
    for _ in range(iters):
        D = _raw(X64, C, metric)
        lab = D.argmin(axis=1)
        dmin = D[np.arange(n), lab]
        obj = float((w * dmin).sum())
        dist = dmin if metric == "emd" else np.sqrt(dmin)
        sums = np.zeros_like(C)
        np.add.at(sums, lab, w[:, None] * X64)
        ws = np.bincount(lab, w, minlength=k)
        new = C.copy()
        f = ws > 0
        if centroid == "median":
            new = _reference_medians(X64, lab, w, C)
        else:
            new[f] = sums[f] / ws[f, None]
        empty = np.flatnonzero(~f)
        order = np.lexsort((np.arange(n), -dist))
        order = order[dist[order] > 0][: empty.size]
        new[empty[: order.size]] = X64[order]
        out.append((lab, obj, new))
        C = new
    return out


def _first_rows(X, k, seed):
    return X[np.random.default_rng(seed).choice(X.shape[0], k, replace=False)].astype(np.float64)


@pytest.mark.parametrize("metric", ["emd", "l2"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("n_groups", [1, 6])  # 1 group is Hamerly's algorithm
def test_pruned_matches_bruteforce(metric, weighted, n_groups):
    X = _data(metric)
    n, k = X.shape[0], 25
    w = np.random.default_rng(1).integers(1, 9, n).astype(np.float64) if weighted else None
    C0 = _first_rows(X, k, 2)
    ref = _reference_lloyd(X, C0, metric, np.ones(n) if w is None else w, 8)
    state = km.KMeansState.initial(C0, n, metric, n_groups=n_groups)
    assert state.lower.shape == (n, n_groups)
    for lab, obj, newC in ref:
        used = state.centroids
        state = km.kmeans_step(X, state, metric, w, chunk_size=256)
        np.testing.assert_array_equal(state.labels, lab)
        assert state.objective[-1] == pytest.approx(obj, rel=1e-11)
        np.testing.assert_allclose(state.centroids, newC, rtol=1e-10, atol=1e-12)
        # Bounds: upper is the exact distance, lower never exceeds the true second distance.
        D = _raw(X.astype(np.float64), used, metric)
        if metric == "l2":
            D = np.sqrt(D)
        np.testing.assert_allclose(state.upper, D[np.arange(n), lab], rtol=1e-9)
        # Group bounds: never above the closest centre of the group other than the label.
        D[np.arange(n), lab] = np.inf
        for g in range(state.lower.shape[1]):
            in_g = state.groups == g
            if in_g.any():
                assert np.all(state.lower[:, g] <= D[:, in_g].min(axis=1))
    assert state.skipped_fraction[-1] > 0.2  # pruning does work once centres settle


@pytest.mark.parametrize("metric", ["emd", "l2"])
def test_threads_and_naive_give_identical_results(metric):
    X = _data(metric, n=2000)
    C0 = _first_rows(X, 20, 4)
    runs = {}
    for name, threads, prune in [("1", 1, True), ("2", 2, True), ("naive", 2, False)]:
        state = km.KMeansState.initial(C0, X.shape[0], metric, n_groups=4)
        for _ in range(6):
            state = km.kmeans_step(
                X, state, metric, n_threads=threads, chunk_size=128, prune=prune, inplace=True
            )
        runs[name] = state
    a, b, c = runs["1"], runs["2"], runs["naive"]
    np.testing.assert_array_equal(a.labels, b.labels)
    np.testing.assert_array_equal(a.centroids, b.centroids)  # bit-identical across threads
    np.testing.assert_array_equal(a.objective, b.objective)
    np.testing.assert_array_equal(a.skipped_fraction, b.skipped_fraction)
    # Pruning changes nothing but the work: bit-identical to the unpruned run.
    np.testing.assert_array_equal(a.labels, c.labels)
    np.testing.assert_array_equal(a.centroids, c.centroids)
    np.testing.assert_array_equal(a.objective, c.objective)
    assert np.all(c.skipped_fraction == 0) and a.skipped_fraction[-1] > 0.5


@pytest.mark.parametrize("metric", ["emd", "l2"])
def test_weights_equal_duplicates(metric):
    X = _data(metric, n=600, seed=5)
    counts = np.random.default_rng(6).integers(1, 5, X.shape[0])
    Xdup = np.repeat(X, counts, axis=0)
    C0 = _first_rows(X, 12, 7)
    a = km.kmeans(X, 12, metric, counts, km.KMeansOptions(max_iter=8, tol=0), init=C0)
    b = km.kmeans(Xdup, 12, metric, None, km.KMeansOptions(max_iter=8, tol=0), init=C0)
    np.testing.assert_array_equal(np.repeat(a.labels, counts), b.labels)
    np.testing.assert_allclose(a.objective, b.objective, rtol=1e-10)
    np.testing.assert_allclose(a.centroids, b.centroids, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("metric", ["emd", "l2"])
def test_objective_monotonicity(metric):
    X = _data(metric, n=2000, seed=8)
    state = km.kmeans(X, 30, metric, options=km.KMeansOptions(max_iter=15, tol=0, seed=1))
    obj = state.objective
    if metric == "l2":
        # Exact Lloyd for squared L2: never increases.
        assert np.all(np.diff(obj) <= 1e-12 * obj[:-1])
    else:
        # Mean centroids are not L1 minimisers, so only the assignment half is guaranteed:
        # re-assigning to fixed centres never increases the objective, and the run improves.
        assert obj[-1] < obj[0]
    X64 = X.astype(np.float64)
    s = km.KMeansState.initial(km.kmeanspp_init(X, 30, metric, seed=1), X.shape[0], metric)
    for _ in range(6):
        s = km.kmeans_step(X, s, metric)
        D = _raw(X64, s.centroids, metric)
        before = D[np.arange(X.shape[0]), s.labels].sum()  # old labels, updated centres
        s = km.kmeans_step(X, s, metric)
        assert s.objective[-1] <= before * (1 + 1e-12)


# ------------------------------------------------------------- EMD k-means, median centroids


@st.composite
def cdf_sets(draw):
    """A few CDF rows over a few bins (from small counts, so values tie), optional weights."""
    m = draw(st.integers(1, 9))
    bins = draw(st.integers(2, 7))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    counts = rng.integers(0, 4, (m, bins)) * (rng.random((m, bins)) < 0.7)
    counts[np.arange(m), rng.integers(bins, size=m)] += 1
    weights = rng.integers(1, 6, m).astype(np.float64) if draw(st.booleans()) else None
    return emd.cumulative(counts), weights, rng


def _total_emd(X64, w, c):
    return float((w * np.abs(X64 - c).sum(axis=1)).sum())


@settings(max_examples=200, deadline=None)
@given(cdf_sets())
def test_median_centroid_minimises_total_emd(case):
    """The per-bin median centroid: a valid CDF whose summed EMD beats the mean's, every
    member's and any perturbation's, and equals the brute-force minimum bin by bin."""
    X, weights, rng = case
    m = X.shape[0]
    w = np.ones(m) if weights is None else weights
    X64 = X.astype(np.float64)
    # One cluster: a single Lloyd step from any centre makes the centroid the members' median.
    state = km.KMeansState.initial(X[:1], m, "emd", centroid="median")
    c = km.kmeans_step(X, state, "emd", weights).centroids[0]
    np.testing.assert_array_equal(c, _reference_medians(X64, np.zeros(m, int), w, c[None])[0])
    # A valid CDF: non-decreasing, ends at 1; as a histogram non-negative with mass 1.
    assert np.all(np.diff(c) >= 0) and c[-1] == 1.0
    hist = emd.histogram_from_cdf(c)
    assert np.all(hist >= 0) and hist.sum() == pytest.approx(1.0, abs=1e-12)
    best = _total_emd(X64, w, c)
    slack = 1e-12 * max(1.0, best)
    mean = (w[:, None] * X64).sum(axis=0) / w.sum()
    assert best <= _total_emd(X64, w, mean) + slack
    for row in X64:
        assert best <= _total_emd(X64, w, row) + slack
    for _ in range(20):
        other = np.sort(np.clip(c + rng.normal(0, 0.2, c.shape), 0, 1))
        other[-1] = 1.0
        assert best <= _total_emd(X64, w, other) + slack
        assert best <= _total_emd(X64, w, c + rng.normal(0, 0.05, c.shape)) + slack
    # Brute force per bin: the weighted L1 sum is piecewise linear with kinks at the members'
    # values, so its minimum over all reals is its minimum over those values.
    brute = sum(
        min(float((w * np.abs(X64[:, t] - v)).sum()) for v in X64[:, t]) for t in range(X.shape[1])
    )
    assert best == pytest.approx(brute, rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("weighted", [False, True])
def test_median_lloyd_matches_bruteforce(weighted):
    """Pruned EMD k-means with median centroids equals a numpy Lloyd with sorted medians."""
    X = _data("emd", n=900, d=30, seed=21)
    n, k = X.shape[0], 15
    w = np.random.default_rng(22).integers(1, 9, n).astype(np.float64) if weighted else None
    C0 = _first_rows(X, k, 23)
    ref = _reference_lloyd(X, C0, "emd", np.ones(n) if w is None else w, 6, centroid="median")
    state = km.KMeansState.initial(C0, n, "emd", n_groups=3, centroid="median")
    for lab, obj, newC in ref:
        state = km.kmeans_step(X, state, "emd", w, chunk_size=256)
        np.testing.assert_array_equal(state.labels, lab)
        assert state.objective[-1] == pytest.approx(obj, rel=1e-11)
        np.testing.assert_array_equal(state.centroids, newC)  # medians are members' values


def test_median_threads_pruning_and_weights_change_nothing():
    """Median centroids: same bits on 1 and 2 threads, pruned or not; weights act as copies."""
    X = _data("emd", n=1500, seed=24)
    C0 = _first_rows(X, 20, 25)
    runs = []
    for threads, prune in ((1, True), (2, True), (2, False)):
        state = km.KMeansState.initial(C0, X.shape[0], "emd", n_groups=4, centroid="median")
        for _ in range(5):
            state = km.kmeans_step(X, state, "emd", n_threads=threads, prune=prune, inplace=True)
        runs.append(state)
    for other in runs[1:]:
        np.testing.assert_array_equal(runs[0].labels, other.labels)
        np.testing.assert_array_equal(runs[0].centroids, other.centroids)
        np.testing.assert_array_equal(runs[0].objective, other.objective)
    counts = np.random.default_rng(26).integers(1, 5, X.shape[0])
    median = km.KMeansOptions(max_iter=6, tol=0, centroid="median")
    a = km.kmeans(X, 20, "emd", counts, median, init=C0)
    b = km.kmeans(np.repeat(X, counts, axis=0), 20, "emd", None, median, init=C0)
    np.testing.assert_array_equal(np.repeat(a.labels, counts), b.labels)
    np.testing.assert_array_equal(a.centroids, b.centroids)
    np.testing.assert_allclose(a.objective, b.objective, rtol=1e-12)


@pytest.mark.parametrize("seed", [8, 27])
def test_median_objective_never_rises(seed):
    """With median centroids every Lloyd step keeps or lowers the summed EMD."""
    X = _data("emd", n=2000, seed=seed)
    w = np.random.default_rng(seed).integers(1, 4, X.shape[0])
    for weights in (None, w):
        median = km.KMeansOptions(max_iter=20, tol=0, seed=1, centroid="median")
        state = km.kmeans(X, 30, "emd", weights, median)
        obj = state.objective
        assert state.iteration >= 5
        assert np.all(np.diff(obj) <= 1e-12 * obj[:-1]), obj
        hist = emd.histogram_from_cdf(state.centroids)
        assert np.all(hist >= 0)
        np.testing.assert_allclose(hist.sum(axis=1), 1.0, atol=1e-12)


def test_centroid_rule_checks_and_resume():
    """Median is for EMD only; a resumed state keeps its rule and ends like an unbroken run."""
    X = _data("emd", n=600, seed=28)
    with pytest.raises(ValueError, match="emd"):
        km.kmeans(_data("l2", n=100), 3, "l2", options=km.KMeansOptions(centroid="median"))
    with pytest.raises(ValueError, match="centroid"):
        km.kmeans(X, 3, "emd", options=km.KMeansOptions(centroid="mode"))  # type: ignore[arg-type]
    median = km.KMeansOptions(max_iter=6, tol=0, seed=3, centroid="median")
    part = km.kmeans(X, 10, "emd", None, dataclasses.replace(median, max_iter=3))
    saved = km.KMeansState.from_arrays(part.to_arrays())
    assert saved.centroid == "median"
    with pytest.raises(ValueError, match="median"):
        km.kmeans(X, 10, "emd", None, dataclasses.replace(median, centroid="mean"), init=saved)
    resumed = km.kmeans(X, 10, "emd", None, median, init=saved)
    full = km.kmeans(X, 10, "emd", None, median)
    for key, value in full.to_arrays().items():
        np.testing.assert_array_equal(value, resumed.to_arrays()[key], err_msg=key)
    legacy = {key: v for key, v in part.to_arrays().items() if key != "centroid"}
    assert km.KMeansState.from_arrays(legacy).centroid == "mean"


def _reference_kmeanspp(X, k, metric, seed, trials):
    """Greedy k-means++ by full numpy passes, drawing the same uniforms as the engine."""
    rng = np.random.default_rng(seed)
    first_u = rng.random()
    trial_u = rng.random((k - 1, trials))
    X64 = X.astype(np.float64)
    w = np.ones(X.shape[0])
    chosen = [int(np.searchsorted(np.cumsum(w), first_u * w.sum(), side="right"))]
    Dr = _raw(X64, X64[chosen], metric)[:, 0]
    for c in range(1, k):
        pot = w * Dr
        total = pot.sum()
        best, best_gain, best_D = -1, -1.0, None
        for t in range(trials):
            idx = int(np.searchsorted(np.cumsum(pot), trial_u[c - 1, t] * total, side="right"))
            newD = np.minimum(Dr, _raw(X64, X64[[idx]], metric)[:, 0])
            gain = float((w * (Dr - newD)).sum())
            if gain > best_gain:
                best, best_gain, best_D = idx, gain, newD
        chosen.append(best)
        Dr = best_D
    return X64[chosen]


@pytest.mark.parametrize("metric", ["emd", "l2"])
def test_kmeanspp_matches_reference_and_is_deterministic(metric):
    X = _data(metric, n=800, seed=9)
    C = km.kmeanspp_init(X, 15, metric, seed=11, n_local_trials=3, sample_size=800)
    np.testing.assert_array_equal(C, _reference_kmeanspp(X, 15, metric, 11, 3))
    again = km.kmeanspp_init(X, 15, metric, seed=11, n_local_trials=3, sample_size=800)
    np.testing.assert_array_equal(C, again)
    other = km.kmeanspp_init(X, 15, metric, seed=12, n_local_trials=3, sample_size=800)
    assert not np.array_equal(C, other)
    # n > 50 k: seeds on a weighted sample, still deterministic.
    S = km.kmeanspp_init(X, 5, metric, weights=np.arange(1, 801), seed=3)
    np.testing.assert_array_equal(S, km.kmeanspp_init(X, 5, metric, np.arange(1, 801), seed=3))


@pytest.mark.parametrize("metric", ["emd", "l2"])
def test_kmeanspp_recovers_blobs(metric):
    rng = np.random.default_rng(13)
    k, per, d = 8, 150, 40
    truth = np.repeat(np.arange(k), per)
    if metric == "emd":
        # Each blob: counts concentrated around its own bin of the strength axis.
        centre_bins = np.linspace(2, d - 3, k).astype(int)
        H = rng.poisson(0.05, (k * per, d)).astype(np.float64)
        H[np.arange(k * per), centre_bins[truth]] += 100
        X = emd.cumulative(H)
    else:
        X = (rng.random((k, d)) * 20)[truth] + rng.standard_normal((k * per, d))
        X = X.astype(np.float32)
    C = km.kmeanspp_init(X, k, metric, seed=0)
    D = _raw(X.astype(np.float64), C, metric)
    assert len(set(D.argmin(axis=1)[::per])) == k  # one seed in every blob
    state = km.kmeans(X, k, metric)
    for b in range(k):
        assert len(set(state.labels[truth == b])) == 1
    assert len(set(state.labels)) == k


@pytest.mark.parametrize("metric", ["emd", "l2"])
def test_resume_from_arrays_equals_uninterrupted(metric):
    X = _data(metric, n=1200, seed=14)
    w = np.random.default_rng(15).integers(1, 4, X.shape[0])
    options = km.KMeansOptions(max_iter=6, tol=0, seed=2)
    full = km.kmeans(X, 16, metric, w, options)
    part = km.kmeans(X, 16, metric, w, dataclasses.replace(options, max_iter=3))
    arrays = {k: np.array(v, copy=True) for k, v in part.to_arrays().items()}
    assert all(isinstance(v, np.ndarray) for v in arrays.values())
    resumed = km.KMeansState.from_arrays(arrays)
    resumed = km.kmeans(X, 16, metric, w, km.KMeansOptions(max_iter=6, tol=0), init=resumed)
    a, b = full.to_arrays(), resumed.to_arrays()
    assert a.keys() == b.keys()
    for key in a:
        np.testing.assert_array_equal(a[key], b[key], err_msg=key)
    assert resumed.iteration == 6 and set(resumed.stats) >= {"objective", "skipped_fraction"}


@pytest.mark.parametrize("metric", ["emd", "l2"])
def test_resume_at_every_iteration_boundary_equals_uninterrupted(metric):
    """A state saved after any iteration, the converged last one included, resumes to the
    uninterrupted result: a finished state takes no further step (and a checkpoint written
    before the flag existed is recognised as finished from its history)."""
    X = _data(metric, n=900, seed=21)
    saved: list[dict[str, np.ndarray]] = []

    def keep(state: km.KMeansState) -> None:
        saved.append({k: np.array(v, copy=True) for k, v in state.to_arrays().items()})

    options = km.KMeansOptions(max_iter=100, tol=1e-3)
    full = km.kmeans(X, 20, metric, None, dataclasses.replace(options, callback=keep))
    assert full.converged and 2 < full.iteration < 100 and len(saved) == full.iteration
    assert bool(saved[-1]["converged"]) and not any(bool(s["converged"]) for s in saved[:-1])
    last = saved[-1]
    without_flag = {k: v for k, v in last.items() if k != "converged"}
    for arrays in [*saved, without_flag]:
        init = km.KMeansState.from_arrays(arrays)
        resumed = km.kmeans(X, 20, metric, None, options, init=init)
        a, b = full.to_arrays(), resumed.to_arrays()
        for key in a:
            np.testing.assert_array_equal(a[key], b[key], err_msg=f"{key} from {init.iteration}")


def test_empty_cluster_reseeded_on_farthest_point():
    X = _data("l2", n=500, seed=16)
    C0 = np.vstack([_first_rows(X, 4, 17), np.full((1, X.shape[1]), 100.0)])  # far away
    state = km.kmeans_step(X, km.KMeansState.initial(C0, 500, "l2"), "l2")
    assert state.n_empty[-1] == 1
    far = int(np.argmax(state.upper))
    np.testing.assert_array_equal(state.centroids[4], X[far].astype(np.float64))
    state = km.kmeans_step(X, state, "l2")
    assert state.n_empty[-1] == 0 and state.labels[far] == 4


def test_input_checks():
    H = np.random.default_rng(0).integers(1, 9, (100, 10)).astype(np.float32)
    with pytest.raises(ValueError, match="cumulative"):
        km.kmeanspp_init(H, 3, "emd")
    with pytest.raises(ValueError):
        km.kmeans(emd.cumulative(H), 3, "cosine")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        km.kmeans(emd.cumulative(H), 3, "emd", weights=np.zeros(100))
