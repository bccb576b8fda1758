"""Hearts stages: logged labels, the SVR as arrays against scikit-learn, learners, evaluation."""

from __future__ import annotations

import numpy as np
import pytest

from gameforge.artifacts import ArtifactStore
from gameforge.engines.common.stats import wilson_interval
from gameforge.engines.hearts.learner import N_FEATURES, net_index, svr_predict
from gameforge.engines.hearts.svr import balanced_sample, scale
from gameforge.stages.base import StageError
from gameforge.stages.runner import run_stage

QUIET = {"log": lambda m: None}


@pytest.fixture(scope="module")
def chain(tmp_path_factory):
    store = ArtifactStore(tmp_path_factory.mktemp("hearts"))
    logs = run_stage("hearts-logs", {"games": 240, "games_per_chunk": 60}, {}, store=store, **QUIET)
    svr = run_stage("hearts-svr", {"per_label": 150}, {"logs": logs.key}, store=store, **QUIET)
    return store, logs.key, svr.key


def test_logs_label_who_takes_the_queen_later(chain):
    store, logs, _ = chain
    art = store.open(logs)
    meta = np.asarray(art["meta"][:])
    features = np.asarray(art["features"][:])
    assert features.shape == (240 * 52, N_FEATURES) and meta.shape == (240 * 52, 3)
    points = np.asarray(art["points"][:]).astype(np.int64)
    assert set(np.unique(meta[:, 1])) <= {-1, 1}
    # Without passing or shooting the moon, every deal has exactly one Q♠ taker: the seat
    # whose decisions are +1 up to the trick it took Q♠ in and -1 after; everyone else's are
    # all -1. Its points hold Q♠'s 13, and all four sum to 26 (Q♠ and 13 hearts).
    assert (points.sum(axis=1) == 26).all()
    for g in range(240):
        rows = meta[52 * g : 52 * (g + 1)]
        assert sorted(rows[:, 2].tolist()) == sorted(list(range(4)) * 13)  # 13 decisions a seat
        takers = {int(s) for _grp, lab, s in rows if lab > 0}
        assert len(takers) == 1, g
        seat = takers.pop()
        assert points[g, seat] >= 13, g
        mine = rows[rows[:, 2] == seat]
        tricks, labels = mine[:, 0] // 4, mine[:, 1]
        assert sorted(tricks.tolist()) == list(range(13))
        last = tricks[labels > 0].max()
        assert (labels[tricks <= last] > 0).all() and (labels[tricks > last] < 0).all()
    # features: one-hot suit of the card played, rank in [0, 1], perception in [0, 1]
    assert np.allclose(features[:, :4].sum(axis=1), 1.0)
    assert features.min() >= 0 and features.max() <= 1


def test_svr_arrays_predict_exactly_as_scikit_learn(chain):
    from sklearn.svm import NuSVR

    store, logs, svr = chain
    la, sa = store.open(logs), store.open(svr)
    meta = np.asarray(la["meta"][:])
    features = np.asarray(la["features"][:]).astype(np.float64)
    group = net_index(2, 1)
    rows = np.flatnonzero(meta[:, 0] == group)
    x, y = features[rows], meta[rows, 1].astype(np.int64)
    arrays = {n: np.asarray(sa[n][...]) for n in sa.array_names()}
    idx = balanced_sample(y, 150, np.random.default_rng(0 + group))
    lo, hi = x[idx].min(axis=0), x[idx].max(axis=0)
    ref = NuSVR(kernel="rbf", nu=0.5, C=1.0, gamma=1.0 / N_FEATURES).fit(
        scale(x[idx], lo, hi), y[idx]
    )
    want = ref.predict(scale(x, lo, hi))
    args = [arrays[n] for n in ("support", "dual", "sv_start", "intercept", "gamma", "lo", "hi")]
    args[0] = np.ascontiguousarray(args[0].T)  # svr_predict takes the vectors feature-major
    got = np.array([svr_predict(row, group, *args) for row in x])
    assert np.allclose(got, want, atol=1e-9)
    # the model separates the labels better than chance on its own group
    assert got[y > 0].mean() > got[y < 0].mean()


def test_learner_resumes_after_a_kill_to_the_same_snapshots(chain, monkeypatch):
    import gameforge.stages.hearts as stage

    store, _logs, svr = chain
    params = {"games": 2500, "checkpoints": [0, 100, 1000], "actions": "new", "svr": True}
    whole = run_stage("hearts-falcon", params, {"svr": svr}, store=store, **QUIET)
    want = {n: a["checksum"] for n, a in store.open(whole.key).meta["arrays"].items()}
    real = stage.falcon_games
    calls = []

    def dying(*args):
        calls.append(1)
        if len(calls) == 3:  # killed during the third batch: two checkpoints are saved
            raise KeyboardInterrupt("killed")
        return real(*args)

    store.remove(whole.key, force=True)
    monkeypatch.setattr(stage, "falcon_games", dying)
    with pytest.raises(KeyboardInterrupt):
        run_stage("hearts-falcon", params, {"svr": svr}, store=store, **QUIET)
    monkeypatch.setattr(stage, "falcon_games", real)
    again = run_stage("hearts-falcon", params, {"svr": svr}, store=store, **QUIET)
    got = {n: a["checksum"] for n, a in store.open(again.key).meta["arrays"].items()}
    assert store.open(again.key).meta["resumed"] and got == want
    art = store.open(again.key)
    checkpoints = [0, 100, 1000, 2500]
    assert np.asarray(art["checkpoints"][:]).tolist() == checkpoints
    nodes = [np.asarray(art[f"nodes_{c}"][:]) for c in checkpoints]
    assert nodes[0].tolist() == [0] * 52  # learning starts from empty networks
    for before, after in zip(nodes, nodes[1:]):
        assert (before <= after).all()  # a network only ever commits nodes
    for c, n in zip(checkpoints, nodes):
        weights = np.asarray(art[f"weights_{c}"][...])
        assert len(weights) == n.sum() and ((weights >= 0) & (weights <= 1)).all()
    ratios = np.asarray(art["training_ratio"][:])
    assert len(ratios) == 2500
    summary = art.meta["summary"]
    assert summary["games"] == 2500 and summary["nodes_total"] == int(nodes[-1].sum()) > 52
    assert summary["training_ratio_last_1000"] == pytest.approx(ratios[-1000:].mean(), abs=1e-4)


def test_svr_guidance_needs_a_model(chain):
    store, _logs, _svr = chain
    with pytest.raises(StageError, match="needs a hearts-svr input"):
        run_stage("hearts-falcon", {"games": 10, "svr": True}, {}, store=store, **QUIET)


def test_eval_reports_every_snapshot_and_the_variant_table(chain):
    store, _logs, svr = chain
    keys = []
    for actions in ("previous", "new"):
        run = run_stage(
            "hearts-falcon", {"games": 300, "checkpoints": [0, 300], "actions": actions},
            {}, store=store, **QUIET,
        )  # fmt: skip
        keys.append(run.key)
    ev = run_stage(
        "hearts-eval", {"games": 120, "sims": 20, "rank_matches": 5},
        {f"learners.{i}": k for i, k in enumerate(keys)}, store=store, **QUIET,
    )  # fmt: skip
    from gameforge.engines.hearts.agents import MONTE_CARLO
    from gameforge.engines.hearts.game import RULE_BASED

    art = store.open(ev.key)
    curve = np.asarray(art["curve"][:])  # (learner, checkpoint, vs rule-based, vs Monte Carlo)
    assert curve[:, :2].tolist() == [[0, 0], [0, 300], [1, 0], [1, 300]]
    assert ((curve[:, 2:] >= 0) & (curve[:, 2:] <= 1)).all()
    ranks = np.asarray(art["ranks"][:])  # (learner, opponent, mean rank, matches)
    assert ranks[:, [0, 1, 3]].tolist() == [
        [0, RULE_BASED, 5], [0, MONTE_CARLO, 5], [1, RULE_BASED, 5], [1, MONTE_CARLO, 5],
    ]  # fmt: skip
    assert ((ranks[:, 2] >= 1) & (ranks[:, 2] <= 4)).all()
    # the variant table summarises each learner's final snapshot and its ranks
    table = art.meta["summary"]["table"]
    assert list(table) == ["previous", "new"]
    for li, variant in enumerate(table):
        final, entry = curve[2 * li + 1], table[variant]
        mine = ranks[ranks[:, 0] == li]
        below = [int(final[2] < 0.25), int(final[3] < 0.25)]
        # one trial: the share of trials below par is 0 or 1, its Wilson interval 0.79 wide
        wilson = [[round(x, 4) for x in wilson_interval(b, 1)] for b in below]
        assert entry == {
            "trials": 1,
            "vs_rule_based": round(float(final[2]), 4),
            "vs_rule_based_trials_below_0.25": below[0],
            "vs_rule_based_share_of_trials_below_0.25": float(below[0]),
            "vs_rule_based_share_of_trials_below_0.25_low": wilson[0][0],
            "vs_rule_based_share_of_trials_below_0.25_high": wilson[0][1],
            "vs_monte_carlo": round(float(final[3]), 4),
            "vs_monte_carlo_trials_below_0.25": below[1],
            "vs_monte_carlo_share_of_trials_below_0.25": float(below[1]),
            "vs_monte_carlo_share_of_trials_below_0.25_low": wilson[1][0],
            "vs_monte_carlo_share_of_trials_below_0.25_high": wilson[1][1],
            "rank_vs_rule_based": round(float(mine[0, 2]), 4),
            "rank_vs_monte_carlo": round(float(mine[1, 2]), 4),
        }
        assert wilson[0][1] - wilson[0][0] == pytest.approx(0.7935, abs=1e-4)


def kill_then_resume(monkeypatch, store, key, task: str, die_at: int, rerun):
    """Remove artifact `key`, rerun it with stages.hearts.`task` killed at its `die_at`-th
    call, then rerun it whole; (the resumed run, calls of `task` it made)."""
    import gameforge.stages.hearts as stage

    real = getattr(stage, task)
    calls = []

    def dying(*args):
        calls.append(1)
        if len(calls) == die_at:
            raise KeyboardInterrupt("killed")
        return real(*args)

    store.remove(key, force=True)
    monkeypatch.setattr(stage, task, dying)
    with pytest.raises(KeyboardInterrupt):
        rerun()
    calls.clear()
    monkeypatch.setattr(stage, task, lambda *a: calls.append(1) or real(*a))
    return rerun(), len(calls)


def test_eval_resumes_after_a_kill_to_the_same_table(chain, monkeypatch):
    """A hearts-eval run killed after some snapshot batches resumes from its checkpoints,
    evaluates only the rest, and commits the same arrays as an uninterrupted run."""
    import gameforge.stages.hearts as stage

    store, _logs, _svr = chain
    learners = {}
    for i, actions in enumerate(("previous", "new")):
        run = run_stage(
            "hearts-falcon", {"games": 300, "checkpoints": [0, 100, 300], "actions": actions},
            {}, store=store, **QUIET,
        )  # fmt: skip
        learners[f"learners.{i}"] = run.key
    params = {"games": 60, "sims": 10, "rank_matches": 3, "seed": 5}
    monkeypatch.setattr(stage, "EVAL_BATCH", 2)
    whole = run_stage("hearts-eval", params, learners, store=store, **QUIET)
    want = {n: a["checksum"] for n, a in store.open(whole.key).meta["arrays"].items()}
    want_table = store.open(whole.key).meta["summary"]["table"]
    # killed at the fifth snapshot, in the third batch: two batches (4 snapshots) are saved
    again, calls = kill_then_resume(monkeypatch, store, whole.key, "eval_snapshot", 5,
                                    lambda: run_stage("hearts-eval", params, learners,
                                                      store=store, **QUIET))  # fmt: skip
    assert again.key == whole.key and calls == 6 - 4
    got = {n: a["checksum"] for n, a in store.open(again.key).meta["arrays"].items()}
    assert got == want
    assert store.open(again.key).meta["resumed"]
    assert store.open(again.key).meta["summary"]["table"] == want_table


def test_eval_resumes_its_rank_matches_after_a_kill(chain, monkeypatch):
    """The rank step (games to 100 points) checkpoints per batch of learners too: killed in
    the second learner's matches, the rerun ranks only that one and the table is unchanged."""
    import gameforge.stages.hearts as stage

    store, _logs, _svr = chain
    learners = {}
    for i, actions in enumerate(("previous", "new")):
        run = run_stage("hearts-falcon", {"games": 200, "checkpoints": [0, 200], "actions": actions,
                                          "seed": 7}, {}, store=store, **QUIET)  # fmt: skip
        learners[f"learners.{i}"] = run.key
    params = {"games": 40, "sims": 10, "rank_matches": 3, "seed": 6}
    monkeypatch.setattr(stage, "RANK_BATCH", 1)
    whole = run_stage("hearts-eval", params, learners, store=store, **QUIET)
    want = {n: a["checksum"] for n, a in store.open(whole.key).meta["arrays"].items()}
    again, calls = kill_then_resume(monkeypatch, store, whole.key, "rank_final", 2,
                                    lambda: run_stage("hearts-eval", params, learners,
                                                      store=store, **QUIET))  # fmt: skip
    assert again.key == whole.key and calls == 1
    got = {n: a["checksum"] for n, a in store.open(again.key).meta["arrays"].items()}
    assert got == want


@pytest.mark.parametrize("first", [16, 2])  # 2: several rounds of deals before 6 matches end
def test_rank_matches_play_only_the_deals_they_need(chain, monkeypatch, first):
    """rank_final plays 16 deals per match and more only while matches are missing; since a
    game depends on its number only, the ranks equal those of one run of 40 deals per match."""
    import gameforge.stages.hearts as stage
    from gameforge.engines.hearts.agents import MONTE_CARLO
    from gameforge.engines.hearts.game import RULE_BASED

    store, _logs, _svr = chain
    monkeypatch.setattr(stage, "RANK_DEALS_FIRST", first)
    run = run_stage("hearts-falcon", {"games": 200, "checkpoints": [0, 200], "seed": 3}, {},
                    store=store, **QUIET)  # fmt: skip
    art = store.open(run.key)
    p = {**stage.EvalParams(sims=10, rank_matches=6, seed=4).model_dump(),
         "options": stage.EvalParams().options().tolist()}  # fmt: skip
    got = stage.rank_final(str(store.root), art.key, p)
    weights, nodes = stage.load_snapshot(art, 200, art.params["capacity"])
    for (opp, mean, n), kind in zip(got, (RULE_BASED, MONTE_CARLO), strict=True):
        points, seats = stage.evaluate(weights, nodes, art.params, kind, stage.Games(40 * 6, 5),
                                       10, np.asarray(p["options"]))  # fmt: skip
        want = stage.ranks_to_100(points, seats, 6)
        assert (opp, n) == (kind, 6) and mean == float(want.mean())


def test_svr_resumes_after_a_kill_to_the_same_models(chain, monkeypatch):
    """A hearts-svr run killed after some groups resumes from its checkpoint and commits the
    same arrays as an uninterrupted run."""
    import gameforge.stages.hearts as stage

    store, logs, svr = chain
    want = {n: a["checksum"] for n, a in store.open(svr).meta["arrays"].items()}
    real = stage.fit_group
    calls = []

    def dying(*args):
        calls.append(1)
        if len(calls) == 2 * stage.SVR_BATCH + 1:  # two batches are checkpointed
            raise KeyboardInterrupt("killed")
        return real(*args)

    store.remove(svr, force=True)
    monkeypatch.setattr(stage, "fit_group", dying)
    with pytest.raises(KeyboardInterrupt):
        run_stage("hearts-svr", {"per_label": 150}, {"logs": logs}, store=store, **QUIET)
    calls.clear()
    monkeypatch.setattr(stage, "fit_group", lambda *a: calls.append(1) or real(*a))
    again = run_stage("hearts-svr", {"per_label": 150}, {"logs": logs}, store=store, **QUIET)
    assert again.key == svr
    assert len(calls) == stage.N_NETWORKS - 2 * stage.SVR_BATCH
    got = {n: a["checksum"] for n, a in store.open(again.key).meta["arrays"].items()}
    assert got == want


def test_svr_check_rows_are_held_out_or_from_the_training_sample():
    """`check_rows` takes up to n rows per label outside `fit`'s balanced sample and as many
    inside it; `predict` is the learner kernel's prediction."""
    from gameforge.engines.hearts.svr import check_rows

    labels = np.where(np.random.default_rng(3).random(400) < 0.3, 1, -1)
    rows, trained = check_rows(labels, 50, 7, 20)
    sample = set(balanced_sample(labels, 50, np.random.default_rng(7)).tolist())
    assert [int(r) in sample for r in rows] == trained.tolist()
    for inside in (False, True):
        for sign in (1, -1):
            assert ((trained == inside) & (labels[rows] == sign)).sum() == 20
    assert len(set(rows.tolist())) == len(rows)


def test_svr_stores_predictions_of_its_check_rows(chain):
    from gameforge.engines.hearts.svr import check_rows
    from gameforge.stages.hearts import svr_arrays

    store, logs, svr = chain
    art, log = store.open(svr), store.open(logs)
    group = np.asarray(art["check_group"][:])
    label = np.asarray(art["check_label"][:])
    trained = np.asarray(art["check_trained"][:]).astype(bool)
    prediction = np.asarray(art["check_prediction"][:])
    meta = np.asarray(log["meta"][:])
    features = np.asarray(log["features"][:])
    sv, dual, start, intercept, gamma, lo, hi = svr_arrays(art)
    for g in (0, 21):
        rows = np.flatnonzero(meta[:, 0] == g)
        picked, inside = check_rows(meta[rows, 1].astype(np.int64), 150, g, 200)
        assert (group == g).sum() == len(picked)
        assert np.array_equal(label[group == g], meta[rows[picked], 1])
        assert np.array_equal(trained[group == g], inside)
        want = [svr_predict(features[rows[i]].astype(np.float64), g, np.ascontiguousarray(sv.T),
                            dual, start, intercept, gamma, lo, hi) for i in picked]  # fmt: skip
        np.testing.assert_allclose(prediction[group == g], want, rtol=1e-5, atol=1e-5)
    held = art.meta["summary"]["held_out"]
    assert held["negative"] == int(((~trained) & (label < 0)).sum())


def test_plots_of_logs_svr_learner_and_eval_show_data(chain, tmp_path):
    from tests.plot_checks import assert_plot_has_data

    store, logs, svr = chain
    keys = [  # the learners and evaluation of test_eval_reports_every_snapshot_...: reused
        run_stage(
            "hearts-falcon", {"games": 300, "checkpoints": [0, 300], "actions": actions}, {},
            store=store, **QUIET,
        ).key
        for actions in ("previous", "new")
    ]  # fmt: skip
    ev = run_stage(
        "hearts-eval", {"games": 120, "sims": 20, "rank_matches": 5},
        {f"learners.{i}": k for i, k in enumerate(keys)}, store=store, **QUIET,
    )  # fmt: skip
    for key, axes in ((logs, 3), (svr, 3), (keys[1], 3), (ev.key, 3)):
        assert_plot_has_data(store.open(key), tmp_path / f"{key}.png", min_axes=axes)
