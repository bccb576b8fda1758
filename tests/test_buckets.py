"""Bucketing stages: k-means abstraction per round, resume, ordering, and the lookup API."""

from __future__ import annotations

import numpy as np
import pytest

from gameforge.artifacts import ArtifactStore
from gameforge.artifacts.transfer import export_artifacts, import_artifacts
from gameforge.engines.common.emd import cumulative, histogram_from_cdf
from gameforge.engines.common.kmeans import KMeansOptions, kmeans
from gameforge.engines.poker.shipped_games import load_game
from gameforge.stages.base import StageError
from gameforge.stages.poker.abstraction import CardAbstraction
from gameforge.stages.poker.buckets import merge_rows, strength_of_centroids
from gameforge.stages.poker.hsd import array_name, round_indexer
from gameforge.stages.runner import run_stage
from tests.poker_helpers import SHORT, CrashAfter, quiet


@pytest.fixture(scope="module")
def chain(short_deck):
    """150 HSD buckets and 150 river buckets of the OCHS against 8 opponent clusters."""
    return short_deck.store, short_deck.hsd_buckets(150), short_deck.ochs_buckets(8, 150)


def test_every_bucket_used_and_ordered_by_strength(chain):
    _, hsd_b, ochs_b = chain
    for artifact, rounds in ((hsd_b, (1, 2)), (ochs_b, (3,))):
        for r in rounds:
            labels = artifact[f"bucket_round{r}"][:]
            assert sorted(np.unique(labels).tolist()) == list(range(150))
            centroids = artifact[f"centroids_round{r}"][:]
            metric = "emd" if artifact.stage == "hsd-buckets" else "l2"
            strength = strength_of_centroids(centroids, metric)
            assert (np.diff(strength) >= 0).all()
            objective = artifact[f"objective_round{r}"][:]
            assert objective.size >= 2 and objective[-1] <= objective[1]
            summary = artifact.meta["summary"]["rounds"][str(r)]
            assert summary["skipped_fraction_mean"] > 0.5  # pruning does its job


def test_lookup_api_matches_tables_and_ignores_suit_symmetry(chain):
    store, hsd_b, ochs_b = chain
    abstraction = CardAbstraction.from_store(store, hsd_b.key, ochs_b.key)
    game = load_game(SHORT)
    assert [abstraction.num_buckets(r) for r in range(4)] == [36, 150, 150, 150]
    rng = np.random.default_rng(1)
    deals = np.array([rng.choice(24, size=7, replace=False) for _ in range(500)], np.int8)
    perm = np.array([2, 0, 3, 1])
    permuted = (deals // 4) * 4 + perm[deals % 4]
    for r, n in ((0, 2), (1, 5), (2, 6), (3, 7)):
        got = abstraction.bucket(r, deals[:, :n])
        np.testing.assert_array_equal(got, abstraction.bucket(r, permuted[:, :n].astype(np.int8)))
        if 0 < r < 3:
            idx = round_indexer(game, r).index(deals[:, :n], round_indexer(game, r).rounds - 1)
            np.testing.assert_array_equal(got, hsd_b[f"bucket_round{r}"][:][idx])
    river = abstraction.bucket(3, deals)
    shuffled = deals.copy()
    shuffled[:, 2:] = shuffled[:, [6, 4, 2, 5, 3]]  # river buckets ignore board order
    np.testing.assert_array_equal(river, abstraction.bucket(3, shuffled))
    with pytest.raises(ValueError, match="need 6 cards"):
        abstraction.bucket(2, deals[:, :5])


def test_killed_kmeans_resumes_identically(chain, tmp_path):
    """An exception mid-k-means leaves a checkpoint; the rerun ends identical to a clean run."""
    from gameforge.artifacts import ArtifactStore

    store, hsd_b, _ = chain
    hsd_key = hsd_b.inputs["hsd"]
    params = {"game": SHORT, "k": 120, "rounds": (1,), "checkpoint_seconds": 0}
    crash = CrashAfter(4)
    with pytest.raises(CrashAfter.Boom):
        run_stage("hsd-buckets", params, {"hsd": hsd_key}, store=store, progress=crash, log=quiet)
    logs: list[str] = []
    resumed = run_stage("hsd-buckets", params, {"hsd": hsd_key}, store=store, log=logs.append)
    assert any("resuming k-means at iteration" in line for line in logs), logs
    clean_store = ArtifactStore(tmp_path / "clean")
    from gameforge.artifacts.transfer import export_artifacts, import_artifacts

    import_artifacts(clean_store, export_artifacts(store, [hsd_key], tmp_path / "x"), trust=True)
    clean = run_stage("hsd-buckets", params, {"hsd": hsd_key}, store=clean_store, log=quiet)
    a, b = store.open(resumed.key), clean_store.open(clean.key)
    assert a.meta["arrays"] == b.meta["arrays"]


def test_kmeans_killed_before_its_commit_resumes_to_the_same_artifact(chain, tmp_path, monkeypatch):
    """Killed after the last k-means step, with the converged state checkpointed, and before
    the commit: the rerun takes no further step and commits the uninterrupted run's arrays."""
    from gameforge.artifacts.store import ArtifactWriter

    store, hsd_b, _ = chain
    params = {"game": SHORT, "k": 60, "rounds": (1,), "checkpoint_seconds": 0, "tol": 1e-3}
    inputs = {"hsd": hsd_b.inputs["hsd"]}
    real_commit = ArtifactWriter.commit

    def killed(self, summary=None):  # type: ignore[no-untyped-def]
        raise KeyboardInterrupt("killed before the commit")

    monkeypatch.setattr(ArtifactWriter, "commit", killed)
    with pytest.raises(KeyboardInterrupt):
        run_stage("hsd-buckets", params, inputs, store=store, log=quiet)
    monkeypatch.setattr(ArtifactWriter, "commit", real_commit)
    logs: list[str] = []
    resumed = run_stage("hsd-buckets", params, inputs, store=store, log=logs.append)
    assert any("resuming k-means at iteration" in line for line in logs), logs
    clean_store = ArtifactStore(tmp_path / "clean")
    import_artifacts(
        clean_store, export_artifacts(store, [inputs["hsd"]], tmp_path / "x"), trust=True
    )
    clean = run_stage("hsd-buckets", params, inputs, store=clean_store, log=quiet)
    assert resumed.key == clean.key
    assert store.open(resumed.key).meta["arrays"] == clean_store.open(clean.key).meta["arrays"]


def test_merge_rows_and_bad_rounds(chain):
    rows = np.array([[1, 2], [3, 4], [1, 2], [1, 2]], np.uint8)
    unique, inverse, counts = merge_rows(rows)
    np.testing.assert_array_equal(unique[inverse], rows)
    assert sorted(counts.tolist()) == [1, 3]
    store, hsd_b, _ = chain
    with pytest.raises(StageError, match="round 0 is not clustered"):
        run_stage(
            "hsd-buckets", {"game": SHORT, "rounds": (0,)}, hsd_b.inputs, store=store, log=quiet
        )
    with pytest.raises(StageError, match="exceeds"):
        run_stage("hsd-buckets", {"game": SHORT, "k": 10**6}, hsd_b.inputs, store=store, log=quiet)


def test_bucket_plots(chain, tmp_path):
    from gameforge.flows.plots import plot

    _, hsd_b, ochs_b = chain
    k = hsd_b.params["k"]
    assert plot(hsd_b, tmp_path / "a.png") == (
        f"buckets of rounds 1, 2: k={k}, centroid rule: cdf-median"
    )
    assert plot(ochs_b, tmp_path / "b.png") == (
        f"buckets of rounds 3: k={ochs_b.params['k']}, centroid rule: mean"
    )
    assert (tmp_path / "a.png").read_bytes()[:4] == b"\x89PNG"


def test_pruning_groups_change_neither_key_nor_buckets(chain, tmp_path):
    """n_groups is execution-only: Hamerly (1 group) gives the default's exact buckets."""
    from gameforge.artifacts import ArtifactStore
    from gameforge.artifacts.transfer import export_artifacts, import_artifacts

    store, hsd_b, _ = chain
    other = ArtifactStore(tmp_path / "other")
    exported = export_artifacts(store, [hsd_b.inputs["hsd"]], tmp_path / "x")
    import_artifacts(other, exported, trust=True)  # our own export
    params = {"game": SHORT, "k": 150, "n_groups": 1}
    again = run_stage("hsd-buckets", params, hsd_b.inputs, store=other, log=quiet)
    assert again.key == hsd_b.key
    for r in (1, 2):
        np.testing.assert_array_equal(
            other.open(again.key)[f"bucket_round{r}"][:], hsd_b[f"bucket_round{r}"][:]
        )


def test_hsd_median_centroids_never_raise_the_objective(chain, short_deck):
    """hsd-buckets: per-bin CDF-median centroids (valid CDFs), an objective that never rises,
    recorded per iteration in the summary; mean CDFs on the same input raise it."""
    _, hsd_b, ochs_b = chain
    summary = hsd_b.meta["summary"]
    assert summary["centroid"] == "cdf-median" and summary["objective_monotone"] is True
    assert ochs_b.meta["summary"]["centroid"] == "mean"
    assert ochs_b.meta["summary"]["objective_monotone"] is True
    for r in (1, 2):
        objective = np.asarray(hsd_b[f"objective_round{r}"][:])
        assert summary["rounds"][str(r)]["objective_per_iteration"] == objective.tolist()
        assert np.all(np.diff(objective) <= 1e-12 * objective[:-1]), objective
        hist = histogram_from_cdf(np.asarray(hsd_b[f"centroids_round{r}"][:]))
        assert np.all(hist >= 0)
        np.testing.assert_allclose(hist.sum(axis=1), 1.0, atol=1e-12)
    # The same turn HSDs with mean centroids (stage version 1): the objective rises.
    unique, _, counts = merge_rows(np.asarray(short_deck.hsd()[array_name(2)][:]))
    options = KMeansOptions(max_iter=100)
    mean = kmeans(cumulative(unique), 150, "emd", counts.astype(np.float64), options)
    assert np.any(np.diff(mean.objective) > 1e-6 * mean.objective[:-1])


class RecordingProgress:
    """A progress sink that records each bar's total, advances, notes and closing."""

    def __init__(self) -> None:
        self.bars: dict[str, dict] = {}

    def start(self, desc: str, total: int, done: int = 0):  # type: ignore[no-untyped-def]
        record = self.bars.setdefault(desc, {"total": total, "done": 0, "notes": [], "closed": 0})
        record["done"] += done

        class Bar:
            def advance(self, n: int = 1) -> None:
                record["done"] += n

            def close(self) -> None:
                record["closed"] += 1

            def note(self, text: str) -> None:
                record["notes"].append(text)

        return Bar()


def test_converged_kmeans_fills_its_bar(chain):
    """A k-means that converges early ends its bar at the total, noting the iteration."""
    store, hsd_b, _ = chain
    progress = RecordingProgress()
    params = {"game": SHORT, "k": 60, "rounds": (1,)}
    run = run_stage("hsd-buckets", params, hsd_b.inputs, store=store, progress=progress, log=quiet)
    iterations = store.open(run.key).meta["summary"]["rounds"]["1"]["iterations"]
    assert iterations < 100
    bars = [bar for desc, bar in progress.bars.items() if "k-means" in desc]
    # The runner may prefix the flow node's name; the stage names the round and k.
    assert [desc for desc in progress.bars if "k-means" in desc][0].endswith(
        "round1 k-means k=60 iterations"
    )
    assert len(bars) == 1
    bar = bars[0]
    assert bar == {
        "total": 100,
        "done": 100,
        "notes": [f"(converged at {iterations})"],
        "closed": 1,
    }
