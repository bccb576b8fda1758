"""Four-player Blokus: an AlphaZero-style learner against MCTS-MAXN with Progressive History."""

from gameforge.games.base import Game, TestRun

GAME = Game(
    name="blokus",
    stages={
        "gameforge.stages.blokus": (
            "blokus-rollouts",
            "blokus-selfplay",
            "blokus-train",
            "blokus-eval",
            "blokus-curve",
        ),
    },
    flows="gameforge.flows.specs.blokus",
    plots="gameforge.flows.plots.blokus",
    findings="gameforge.flows.findings.blokus",
    test_runs={
        # minutes on two cores in full: two of its ten iterations (the tests then draw the
        # learning curve of what was built)
        "blokus-zero": TestRun(
            ("games=1", "parallel=1", "steps=2", "final_games=1", "mcts_sims=2", "rollout_mix=0"),
            ("eval-1", "eval-2"),
        ),
        # rollout games, pretraining, 2 self-play rounds, controls
        "blokus-bootstrap": TestRun(),
    },
)
