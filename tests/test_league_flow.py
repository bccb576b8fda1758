"""Flow `lhe-league`: a sweep over opponent-cluster counts shares what it can, then a league."""

from __future__ import annotations

from flows.pipeline import run_plan
from flows.specs import get_flow

quiet = lambda _m: None  # noqa: E731


def test_league_flow_sweeps_and_shares_upstream(store):
    """Per-count stages run once per value, shared ones once; the league gathers every solve."""
    spec = get_flow("lhe-league")
    params = spec.resolve(
        "tiny",
        [
            "opponent-clusters.k=4,6",
            "hsd-buckets.k=20",
            "ochs-buckets.k=20",
            "cfr.iterations=5000",
            "league.sets=4",
            "league.hands_per_set=500",
        ],
    )
    results = run_plan(spec, params, store, log=quiet)
    assert set(results) == {
        "river-hs",
        "hsd",
        "hsd-buckets",
        "opponent-clusters[k=4]",
        "opponent-clusters[k=6]",
        "ochs[k=4]",
        "ochs[k=6]",
        "ochs-buckets[k=4]",
        "ochs-buckets[k=6]",
        "cfr[k=4]",
        "cfr[k=6]",
        "league",
    }
    league = store.open(results["league"].key)
    summary = league.meta["summary"]
    assert summary["players"] == ["C4", "C6"]
    assert isinstance(summary["more_clusters_rank_higher"], bool)
    assert league.inputs == {
        "players.0": results["cfr[k=4]"].key,
        "players.1": results["cfr[k=6]"].key,
    }
    solve = store.open(results["cfr[k=6]"].key)
    assert solve.inputs["middle_buckets"] == results["hsd-buckets"].key  # shared, built once
    again = run_plan(spec, params, store, log=quiet)
    assert all(r.cached for r in again.values())
