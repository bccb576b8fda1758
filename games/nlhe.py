"""No-limit hold'em: CNN players trained from heuristic and self-play hand histories."""

from gameforge.games.base import Game, TestRun

GAME = Game(
    name="nlhe",
    stages={"gameforge.stages.nlhe": ("nlhe-histories", "nlhe-train", "nlhe-league")},
    flows="gameforge.flows.specs.nlhe",
    plots="gameforge.flows.plots.nlhe",
    findings="gameforge.flows.findings.nlhe",
    test_runs={
        # minutes on two cores in full: stops after generation 1 (the tests then play the
        # league on what was built)
        "nlhe-cnn": TestRun(("hands=240", "max_samples=400", "league.hands=60"), ("train-1",)),
    },
)
