"""Limit and no-limit poker on ACPC games: the card abstraction paper's pipeline (hand
strength features, k-means buckets, CFR, best responses, the duplicate league)."""

from gameforge.games.base import Game, TestRun

GAME = Game(
    name="poker",
    stages={
        "gameforge.stages.poker.river_hs": ("river-hs",),
        "gameforge.stages.poker.hsd": ("hsd",),
        "gameforge.stages.poker.opponent_clusters": ("opponent-clusters",),
        "gameforge.stages.poker.ochs": ("ochs",),
        "gameforge.stages.poker.buckets": ("hsd-buckets", "ochs-buckets"),
        "gameforge.stages.poker.potential": ("potential-buckets",),
        "gameforge.stages.poker.cfr": ("cfr",),
        "gameforge.stages.poker.league": ("league",),
        "gameforge.stages.poker.best_response": ("best-response",),
        "gameforge.stages.poker.lbr": ("lbr",),
        "gameforge.stages.poker.hand_history": ("hand-history",),
    },
    flows="gameforge.flows.specs.poker",
    plots="gameforge.flows.plots.poker",
    findings="gameforge.flows.findings.poker",
    test_runs={
        # lhe-abstraction and lhe-solve are subsets of lhe-league's nodes
        "lhe-league": TestRun(
            (
                "opponent-clusters.k=4,6",
                "hsd-buckets.k=20",
                "ochs-buckets.k=20",
                "cfr.iterations=5000",
                "league.sets=4",
                "league.hands_per_set=500",
            ),
        ),  # fmt: skip
        # the same abstraction as lhe-league's k=4 variant: only potential-buckets is new
        "lhe-abstraction-pa": TestRun(
            (
                "opponent-clusters.k=4",
                "hsd-buckets.k=20",
                "ochs-buckets.k=20",
                "potential-buckets.k=20",
            ),
        ),  # fmt: skip
        "solve-lossless": TestRun(),  # Kuhn, CFR+: exact exploitability at every point
    },
)
