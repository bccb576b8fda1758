"""Potential-aware abstraction (Ganzfried & Sandholm 2014): greedy EMD, k-means, the stage."""

from __future__ import annotations

import numpy as np
import pytest

import gameforge.engines.poker.potential as potential
from gameforge.engines.common.kmeans import KMeansOptions
from gameforge.engines.poker.potential import (
    Assignment,
    PotentialState,
    _distances_to,
    approx_emd,
    assign,
    best_centres,
    exact_emd,
    ground_from_centroids,
    ground_from_histograms,
    neighbour_order,
    potential_kmeans,
    to_histograms,
)
from gameforge.engines.poker.shipped_games import load_game
from gameforge.stages.poker.abstraction import CardAbstraction
from gameforge.stages.poker.hsd import round_indexer
from gameforge.stages.poker.potential import CENTROID_RULE
from gameforge.stages.poker.river_hs import hand_indexer
from gameforge.stages.runner import run_stage
from tests.poker_helpers import SHORT, CrashAfter, quiet

K_POT = 40


def random_ground(rng: np.random.Generator, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Euclidean ground distance between k random next-round buckets in 3-D, and its order."""
    ground = ground_from_centroids(rng.random((k, 3)))
    return ground, neighbour_order(ground)


def random_mean(rng: np.random.Generator, k: int, density: float = 0.5) -> np.ndarray:
    """A random sparse histogram over k buckets with total mass 1."""
    q = rng.random(k) * (rng.random(k) < density)
    if q.sum() == 0:
        q[rng.integers(k)] = 1.0
    return q / q.sum()


def random_points(rng: np.random.Generator, n: int, k: int, c: int) -> np.ndarray:
    """n point rows of c sorted next-round bucket ids, each drawn around one of a few centres."""
    centres = np.sort(rng.choice(k, size=4, replace=False))
    base = centres[rng.integers(4, size=n)][:, None]
    ids = np.clip(base + rng.integers(-2, 3, size=(n, c)), 0, k - 1)
    return np.sort(ids, axis=1).astype(np.int16)


# ------------------------------------------------------------------------------ distances


def test_greedy_emd_is_a_close_upper_bound_of_exact_emd():
    """Greedy EMD is feasible (>= exact POT EMD), near exact on average, exact for one unit."""
    rng = np.random.default_rng(0)
    ratios = []
    singles = 0
    for _ in range(200):
        k = int(rng.integers(2, 15))
        ground, order = random_ground(rng, k)
        row = np.sort(rng.integers(0, k, size=int(rng.integers(1, 11))))
        p = to_histograms(row[None, :], k)[0]
        q = random_mean(rng, k)
        approx, exact = approx_emd(p, q, ground, order), exact_emd(p, q, ground)
        assert approx >= exact - 1e-9, (approx, exact)
        if (row == row[0]).all():  # one unit of mass: filling the nearest buckets first is optimal
            singles += 1
            assert approx == pytest.approx(exact, abs=1e-9)
        if exact > 1e-12:
            ratios.append(approx / exact)
        assert approx_emd(p, p, ground, order) == 0.0
        assert approx_emd(q, q, ground, order) == 0.0
    ratios = np.array(ratios)
    assert singles >= 10 and len(ratios) >= 190
    assert ratios.mean() < 1.05, (ratios.mean(), ratios.max())


def test_chunked_kernel_and_assign_match_dense_greedy_emd(monkeypatch):
    """The point-row kernel gives approx_emd's exact numbers; assign is the brute-force argmin."""
    monkeypatch.setattr(potential, "CHUNK", 37)  # several chunks, so the threads share work
    rng = np.random.default_rng(1)
    k, c = 12, 18
    ground, order = random_ground(rng, k)
    points = random_points(rng, 300, k, c)
    dense = to_histograms(points, k)
    centroids = np.array([random_mean(rng, k, d) for d in (0.2, 0.5, 1.0, 0.3, 0.7, 0.5)])
    centroids = np.vstack([centroids, centroids[2], to_histograms(points[:3], k)])  # ties
    brute = np.array([[approx_emd(h, m, ground, order) for m in centroids] for h in dense])
    for j, m in enumerate(centroids):
        out = np.empty(len(points))
        _distances_to(points, m, ground, order, out)
        np.testing.assert_array_equal(out, brute[:, j])
        _, single = assign(points, m[None, :], ground, order)
        np.testing.assert_array_equal(single, brute[:, j])
    assert (brute[:, 2] == brute[:, 6]).all()  # the duplicated centroid: a tie, lowest index wins
    for n_threads in (1, 2):
        labels, dist = assign(points, centroids, ground, order, n_threads)
        np.testing.assert_array_equal(labels, np.argmin(brute, axis=1))
        np.testing.assert_array_equal(dist, brute.min(axis=1))
    assert 6 not in labels  # the copy of centroid 2 never wins its ties
    assert (dist[:3] == 0).all()  # a point's own histogram is at distance 0


def test_ground_from_histograms_symmetric_average_of_both_directions():
    """The next ground distance is the mean of both greedy EMD directions, zero diagonal."""
    rng = np.random.default_rng(2)
    k = 9
    ground, order = random_ground(rng, k)
    hist = np.array([random_mean(rng, k) for _ in range(7)])
    g1 = ground_from_histograms(hist, ground, n_threads=1)
    np.testing.assert_array_equal(g1, ground_from_histograms(hist, ground, n_threads=2))
    np.testing.assert_array_equal(g1, g1.T)
    assert (np.diag(g1) == 0).all() and (g1 >= 0).all()
    for a, b in ((0, 1), (2, 5), (6, 3), (4, 0)):
        both = 0.5 * (
            approx_emd(hist[a], hist[b], ground, order)
            + approx_emd(hist[b], hist[a], ground, order)
        )
        assert g1[a, b] == both and g1[b, a] == both
        assert g1[a, b] > 0
    # Centroids that are single next-round buckets reproduce the ground distance itself.
    np.testing.assert_allclose(ground_from_histograms(np.eye(k), ground), ground, atol=1e-12)


# -------------------------------------------------------------------------------- k-means


def test_kmeans_deterministic_resumable_and_weights_equal_duplicates():
    """k-means is seed-deterministic, resumes exactly from a state, and weights act as copies."""
    rng = np.random.default_rng(3)
    k_next, k = 14, 6
    ground, _ = random_ground(rng, k_next)
    points = random_points(rng, 400, k_next, 12)
    weights = rng.integers(1, 4, size=len(points)).astype(np.float64)

    def run(init=None, **kw):
        options = KMeansOptions(**{"seed": 5, "max_iter": 40, "tol": 0.0, **kw})
        return potential_kmeans(points, k, k_next, ground, weights, options, init)

    def same(a: PotentialState, b: PotentialState) -> None:
        assert a.iteration == b.iteration and a.best_iteration == b.best_iteration
        for x, y in zip(a.best_assignment(), b.best_assignment(), strict=True):
            np.testing.assert_array_equal(x, y)
        np.testing.assert_array_equal(a.labels, b.labels)
        np.testing.assert_array_equal(a.centroids, b.centroids)
        np.testing.assert_array_equal(a.objective, b.objective)
        np.testing.assert_array_equal(a.n_changed, b.n_changed)
        np.testing.assert_array_equal(a.n_empty, b.n_empty)

    clean = run()
    assert clean.iteration > 2 and sorted(np.unique(clean.labels)) == list(range(k))
    np.testing.assert_allclose(clean.centroids.sum(axis=1), 1.0)
    same(clean, run())
    assert not np.array_equal(run(seed=6).centroids, clean.centroids)
    two = run(max_iter=2)
    assert two.iteration == 2
    saved = PotentialState.from_arrays(two.to_arrays())
    same(run(init=saved), clean)

    # Integer weights behave as duplicated points (same seeds, so no sampling difference).
    seeds = to_histograms(points[rng.choice(len(points), size=k, replace=False)], k_next)
    counts = weights.astype(np.int64)
    dup = np.repeat(points, counts, axis=0)

    def from_seeds(data: np.ndarray, w: np.ndarray | None):
        init = PotentialState(seeds.copy(), np.full(len(data), -1, np.int32))
        return potential_kmeans(data, k, k_next, ground, w, KMeansOptions(40, 0.0), init)

    weighted, copies = from_seeds(points, weights), from_seeds(dup, None)
    assert weighted.iteration == copies.iteration > 1
    np.testing.assert_array_equal(copies.labels, np.repeat(weighted.labels, counts))
    np.testing.assert_allclose(copies.centroids, weighted.centroids, rtol=0, atol=1e-12)
    np.testing.assert_allclose(copies.objective, weighted.objective, rtol=1e-12)


def test_kmeans_resumed_after_any_iteration_equals_uninterrupted():
    """Resumed from the state after any iteration, the converged last one included (with or
    without its flag), potential-aware k-means ends exactly where the uninterrupted run did."""
    rng = np.random.default_rng(8)
    k_next, k = 12, 5
    ground, _ = random_ground(rng, k_next)
    points = random_points(rng, 300, k_next, 10)
    saved: list[dict[str, np.ndarray]] = []

    def keep(state: PotentialState) -> None:
        saved.append({n: np.array(v, copy=True) for n, v in state.to_arrays().items()})

    def run(init=None, callback=None):
        options = KMeansOptions(max_iter=60, tol=1e-3, seed=1, callback=callback)
        return potential_kmeans(points, k, k_next, ground, None, options, init)

    full = run(callback=keep)
    assert full.converged and full.iteration < 60 and len(saved) == full.iteration
    last = {n: v for n, v in saved[-1].items() if n != "converged"}
    for arrays in [*saved, last]:
        resumed = run(init=PotentialState.from_arrays(arrays))
        a, b = full.to_arrays(), resumed.to_arrays()
        assert a.keys() == b.keys()
        for name in a:
            np.testing.assert_array_equal(a[name], b[name], err_msg=name)


def test_kmeans_objective_never_rises_and_ends_below_its_seeding():
    """The centroid step keeps the best of the current centre, the mean and members near it: the
    objective falls from the seeding's at every iteration, and the kept assignment is the
    latest."""
    rng = np.random.default_rng(7)
    k_next, k = 30, 8
    ground, _ = random_ground(rng, k_next)
    points = random_points(rng, 600, k_next, 10)
    for seed in range(6):
        options = KMeansOptions(max_iter=25, tol=0.0, seed=seed)
        state = potential_kmeans(points, k, k_next, ground, options=options)
        objective = state.objective
        assert np.all(np.diff(objective) <= 1e-12 * objective[:-1]), objective
        assert objective[-1] < 0.97 * objective[0]
        assert state.best_iteration == state.iteration and state.best_labels is None


def test_kmeans_refuses_the_options_it_does_not_read():
    """The k-means++ trials, centroid rule, Yinyang groups and chunk size are common.kmeans's
    options: given to potential-aware k-means, they are refused rather than ignored."""
    rng = np.random.default_rng(2)
    ground, _ = random_ground(rng, 8)
    points = random_points(rng, 50, 8, 6)
    unread = {"n_local_trials": 3, "centroid": "median", "n_groups": 2, "chunk_size": 64}
    for name, value in unread.items():
        with pytest.raises(ValueError, match=name):
            potential_kmeans(points, 3, 8, ground, options=KMeansOptions(**{name: value}))


def test_best_centres_match_a_brute_force_choice():
    """Per cluster, the chosen centre is the cheapest of the current centre, the members' mean and
    the members nearest that mean, by the summed greedy EMD computed one pair at a time."""
    rng = np.random.default_rng(5)
    k_next, k, n_candidates = 16, 5, 3
    ground, _ = random_ground(rng, k_next)
    order = neighbour_order(ground)
    points = random_points(rng, 120, k_next, 8)
    weights = rng.integers(1, 4, size=len(points)).astype(np.float64)
    centroids = to_histograms(points[rng.choice(len(points), k, replace=False)], k_next)
    labels, dist = assign(points, centroids, ground, order)
    got, kind = best_centres(
        points, weights, Assignment(labels, dist), centroids, ground, order, 2, n_candidates
    )
    hist = to_histograms(points, k_next)

    def cost(members: np.ndarray, centre: np.ndarray) -> float:
        return sum(weights[q] * approx_emd(hist[q], centre, ground, order) for q in members)

    for j in range(k):
        members = np.flatnonzero(labels == j)
        mean = (weights[members, None] * hist[members]).sum(axis=0) / weights[members].sum()
        to_mean = [approx_emd(hist[q], mean, ground, order) for q in members]
        near = members[np.argsort(to_mean, kind="mergesort")[:n_candidates]]
        options = [centroids[j], mean, *(hist[q] for q in near)]
        costs = [cost(members, c) for c in options]
        best = min(range(len(options)), key=lambda i: (costs[i], i))
        np.testing.assert_allclose(got[j], options[best], atol=1e-12)
        assert kind[j] == min(best, 2)
        assert cost(members, got[j]) <= cost(members, centroids[j]) * (1 + 1e-12)


# ------------------------------------------------------------------------------ the stage


@pytest.fixture(scope="module")
def chain(short_deck):
    """K_POT potential-aware buckets over 150 river buckets of the OCHS against 8 clusters."""
    ochs_b = short_deck.ochs_buckets(8, 150)
    pot = short_deck.run("potential-buckets", {"k": K_POT}, {"ochs_buckets": ochs_b})
    return short_deck.store, pot, ochs_b


def random_deals(seed: int, n: int, num_cards: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.array([rng.choice(24, size=num_cards, replace=False) for _ in range(n)], np.int8)


def brute_next_buckets(hands: np.ndarray, lookup) -> np.ndarray:
    """Sorted next-round buckets over every next card, dealt one by one in Python."""
    rows = []
    for hand in hands.tolist():
        nexts = [hand + [card] for card in range(24) if card not in hand]
        rows.append(np.sort(lookup(np.array(nexts, np.int8))))
    return np.array(rows)


def test_stage_features_match_brute_force_enumeration(chain):
    """Stored next-round histograms equal an enumeration of every river (turn) card by hand."""
    _, pot, ochs_b = chain
    game = load_game(SHORT)
    river_table = np.asarray(ochs_b["bucket_round3"][:])
    turn_table = np.asarray(pot["bucket_round2"][:])
    river_idx, turn_idx = hand_indexer(game), round_indexer(game, 2)
    turn = random_deals(10, 200, 6)
    got = np.asarray(pot["next_round2"][:])[turn_idx.index(turn, turn_idx.rounds - 1)]
    assert got.shape == (200, 18)
    expected = brute_next_buckets(turn, lambda c: river_table[river_idx.index(c, validate=True)])
    np.testing.assert_array_equal(got, expected)
    flop_idx = round_indexer(game, 1)
    flop = random_deals(11, 200, 5)
    got = np.asarray(pot["next_round1"][:])[flop_idx.index(flop, flop_idx.rounds - 1)]
    assert got.shape == (200, 19)
    expected = brute_next_buckets(
        flop, lambda c: turn_table[turn_idx.index(c, turn_idx.rounds - 1, validate=True)]
    )
    np.testing.assert_array_equal(got, expected)


def test_stage_buckets_used_ordered_and_looked_up(chain):
    """Every bucket is used, ids go weak to strong, and CardAbstraction reads the stored tables."""
    store, pot, ochs_b = chain
    river_ground = ground_from_centroids(np.asarray(ochs_b["centroids_round3"][:]))

    def ground_of(r: int) -> np.ndarray:
        """The ground distance round `r` was clustered under."""
        if r == 2:
            return river_ground
        return ground_from_histograms(np.asarray(pot["centroids_round2"][:]), river_ground)

    game = load_game(SHORT)
    summary = pot.meta["summary"]["rounds"]
    assert sorted(summary) == ["1", "2"]
    for r, k_next in ((1, K_POT), (2, 150)):
        labels = np.asarray(pot[f"bucket_round{r}"][:])
        assert labels.shape == (round_indexer(game, r).size(round_indexer(game, r).rounds - 1),)
        assert np.unique(labels).tolist() == list(range(K_POT))
        centroids = np.asarray(pot[f"centroids_round{r}"][:])
        assert centroids.shape == (K_POT, k_next)
        np.testing.assert_allclose(centroids.sum(axis=1), 1.0)
        strength = centroids @ np.arange(k_next)
        assert (np.diff(strength) >= 0).all()
        # Lloyd's last update: no stored centroid is farther from its bucket's hands than the
        # bucket's mean histogram (summed greedy EMD over the hands, one pair at a time).
        ids = np.asarray(pot[f"next_round{r}"][:]).astype(np.int64)
        mass = np.bincount(
            (labels.astype(np.int64)[:, None] * k_next + ids).ravel(), minlength=K_POT * k_next
        ).reshape(K_POT, k_next)
        means = mass / mass.sum(axis=1, keepdims=True)
        ground = ground_of(r)
        order = neighbour_order(ground)
        rows, counts = np.unique(np.c_[labels, ids], axis=0, return_counts=True)
        for j in range(0, K_POT, 7):
            mine = rows[:, 0] == j
            hist = to_histograms(rows[mine, 1:], k_next)
            stored = sum(c * approx_emd(h, centroids[j], ground, order)
                         for h, c in zip(hist, counts[mine], strict=True))  # fmt: skip
            mean = sum(c * approx_emd(h, means[j], ground, order)
                       for h, c in zip(hist, counts[mine], strict=True))  # fmt: skip
            assert stored <= mean * (1 + 1e-9), (r, j)
        assert summary[str(r)]["next_buckets"] == k_next
        sizes = np.bincount(labels, minlength=K_POT)
        assert summary[str(r)]["bucket_size_min"] == sizes.min() >= 1
        assert summary[str(r)]["bucket_size_max"] == sizes.max()
        assert summary[str(r)]["hands"] == len(labels) == sizes.sum()
        objective = np.asarray(pot[f"objective_round{r}"][:])
        assert summary[str(r)]["objective_per_iteration"] == objective.tolist()
        assert summary[str(r)]["iterations"] == len(objective)
        # The objective falls from the seeding's at every iteration; the latest is kept.
        assert np.all(np.diff(objective) <= 1e-12 * objective[:-1]), objective
        assert objective[-1] < 0.95 * objective[0]
        assert summary[str(r)]["best_iteration"] == len(objective)
        assert summary[str(r)]["objective"] == objective[-1]
        # The greedy EMD is a feasible transport: never below POT's exact one, and close.
        check = summary[str(r)]["emd_check"]
        assert check["pairs"] == 200 and check["below_exact"] == 0
        assert 0 <= check["relative_excess_mean"] < 0.2
    assert pot.meta["summary"]["centroid"] == CENTROID_RULE
    assert pot.meta["summary"]["objective_monotone"] is True
    abstraction = CardAbstraction(pot, ochs_b)
    assert CardAbstraction.from_store(store, pot.key, ochs_b.key).keys == abstraction.keys
    assert [abstraction.num_buckets(r) for r in (1, 2, 3)] == [K_POT, K_POT, 150]
    deals = random_deals(12, 500, 7)
    perm = np.array([3, 1, 0, 2])
    permuted = ((deals // 4) * 4 + perm[deals % 4]).astype(np.int8)
    for r, n in ((1, 5), (2, 6)):
        got = abstraction.bucket(r, deals[:, :n])
        idx = round_indexer(game, r).index(deals[:, :n], round_indexer(game, r).rounds - 1)
        np.testing.assert_array_equal(got, np.asarray(pot[f"bucket_round{r}"][:])[idx])
        np.testing.assert_array_equal(got, abstraction.bucket(r, permuted[:, :n]))
        assert len(np.unique(got)) > K_POT // 2


def test_killed_potential_kmeans_resumes_identically(chain, tmp_path):
    """An exception mid-k-means leaves a checkpoint; the rerun ends identical to a clean run."""
    from gameforge.artifacts import ArtifactStore
    from gameforge.artifacts.transfer import export_artifacts, import_artifacts

    store, pot, ochs_b = chain
    other = ArtifactStore(tmp_path / "other")
    import_artifacts(other, export_artifacts(store, [ochs_b.key], tmp_path / "x"), trust=True)
    params = {"game": SHORT, "k": K_POT, "checkpoint_seconds": 0}
    inputs = {"ochs_buckets": ochs_b.key}
    crash = CrashAfter(3, only="k-means")  # the third k-means step (feature chunks report too)
    with pytest.raises(CrashAfter.Boom):
        run_stage("potential-buckets", params, inputs, store=other, progress=crash, log=quiet)
    logs: list[str] = []
    resumed = run_stage("potential-buckets", params, inputs, store=other, log=logs.append)
    assert any("resuming potential-aware k-means at iteration 2" in line for line in logs), logs
    assert resumed.key == pot.key  # checkpoint_seconds is execution-only
    assert other.open(resumed.key).meta["arrays"] == pot.meta["arrays"]


def test_embedding_lower_bound_prunes_without_changing_assignments():
    """Mean-embedding bounds (exact EMD >= ||mean_p - mean_q||) skip work, never a winner."""
    from gameforge.engines.poker.potential import (
        assign,
        ground_from_centroids,
        neighbour_order,
        to_histograms,
    )

    rng = np.random.default_rng(11)
    K, n, k = 60, 400, 25
    coords = rng.random((K, 8))
    ground = ground_from_centroids(coords)
    order = neighbour_order(ground)
    centre_ids = rng.integers(0, K, size=n)
    points = np.sort(
        np.clip(centre_ids[:, None] + rng.integers(-4, 5, size=(n, 12)), 0, K - 1), axis=1
    ).astype(np.int16)
    centroids = to_histograms(points[rng.choice(n, k, replace=False)], K)
    for j in range(k):  # some exact ties: duplicate a centroid
        if j % 7 == 3:
            centroids[j] = centroids[j - 1]
    stats_full: list[int] = []
    stats_pruned: list[int] = []
    plain = assign(points, centroids, ground, order, 1, None, stats_full)
    pruned = assign(points, centroids, ground, order, 2, coords, stats_pruned)
    assert np.array_equal(plain[0], pruned[0])
    assert np.array_equal(plain[1], pruned[1])
    assert stats_full[0] == n * k
    assert stats_pruned[0] < 0.6 * n * k


def test_pruned_assignment_equals_the_exhaustive_one_on_real_histograms(chain):
    """On the short deck's own hands and centroids, both rounds: the mean-embedding lower bound
    (valid for any transport, the greedy EMD is not a metric) skips distances, never a winner."""
    _, pot, ochs_b = chain
    river = np.asarray(ochs_b["centroids_round3"][:], dtype=np.float64)
    ground = ground_from_centroids(river)
    embedding = river
    for r in (2, 1):
        points = np.unique(np.asarray(pot[f"next_round{r}"][:]), axis=0)
        centroids = np.asarray(pot[f"centroids_round{r}"][:])
        order = neighbour_order(ground)
        full: list[int] = []
        pruned: list[int] = []
        plain = assign(points, centroids, ground, order, 2, None, full)
        bounded = assign(points, centroids, ground, order, 2, embedding, pruned)
        np.testing.assert_array_equal(plain[0], bounded[0])
        np.testing.assert_array_equal(plain[1], bounded[1])
        assert pruned[0] < 0.5 * full[0], (r, pruned[0], full[0])
        embedding = centroids @ embedding  # as the stage does one round earlier
        ground = ground_from_histograms(centroids, ground)
