"""Hearts: FALCON reinforcement learning guided by a nu-SVR risk model."""

from gameforge.games.base import Game, TestRun

GAME = Game(
    name="hearts",
    stages={
        "gameforge.stages.hearts": ("hearts-logs", "hearts-svr", "hearts-falcon", "hearts-eval"),
    },
    flows="gameforge.flows.specs.hearts",
    plots="gameforge.flows.plots.hearts",
    findings="gameforge.flows.findings.hearts",
    test_runs={
        "hearts-falcon": TestRun(
            (
                "logs.games=100",
                "hearts-falcon.games=60",
                "hearts-falcon.checkpoints=0,30,60",
                "eval.games=8",
                "eval.sims=8",
                "eval.rank_matches=2",
            ),
        ),  # fmt: skip
    },
)
