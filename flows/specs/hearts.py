"""The Hearts flow: Monte Carlo logs, nu-SVR risk models, FALCON learners, evaluation."""

from __future__ import annotations

from gameforge.flows.specs.base import FlowSpec, Node

# Hearts (the FALCON paper): Monte Carlo logs -> nu-SVR risk models -> learners for the paper's
# four rows (previous / new action set, without / with SVR guidance), several seeded trials
# each -> evaluation of every learning-curve snapshot.
HEARTS_VARIANTS = {
    "previous": {"actions": "previous", "svr": False},
    "new": {"actions": "new", "svr": False},
    "svr": {"actions": "previous", "svr": True},
    "both": {"actions": "new", "svr": True},
}
HEARTS_TRIALS = 5
_HEARTS = {
    # preset: (logged games, samples per label, learning games, checkpoints, eval games, ranks)
    "tiny": (200, 200, 500, [0, 1, 100, 500], 60, 6),
    "small": (5000, 2000, 20_000, [0, 1, 100, 1000, 10_000, 20_000], 1000, 200),
    "paper": (100_000, 10_000, 100_000, [0, 1, 100, 1000, *range(10_000, 100_001, 10_000)],
              5000, 1000),
}  # fmt: skip


def _hearts_nodes() -> tuple[Node, ...]:
    nodes = [Node("hearts-logs", id="logs"), Node("hearts-svr", inputs={"logs": "logs"}, id="svr")]
    learners: dict[str, str] = {}
    for variant, values in HEARTS_VARIANTS.items():
        for t in range(HEARTS_TRIALS):
            name = f"falcon-{variant}-{t}"
            nodes.append(
                Node("hearts-falcon", inputs={"svr": "svr"} if values["svr"] else {}, id=name)
            )
            learners[f"learners.{len(learners)}"] = name
    nodes.append(Node("hearts-eval", inputs=learners, id="eval"))
    return tuple(nodes)


HEARTS_FALCON = FlowSpec(
    name="hearts-falcon",
    description="Hearts: MC logs, nu-SVR risk models, FALCON learners (4 variants x 5), eval",
    nodes=_hearts_nodes(),
    findings=("eval",),
    options=("passing", "moon", "two_clubs_leads", "must_break_hearts", "no_points_first_trick"),
    presets={
        name: {
            "logs": {"games": logs},
            "svr": {"per_label": per_label},
            **{
                f"falcon-{variant}-{t}": {**values, "games": games, "checkpoints": cps, "seed": t}
                for variant, values in HEARTS_VARIANTS.items()
                for t in range(HEARTS_TRIALS)
            },
            "eval": {"games": eval_games, "rank_matches": ranks},
        }
        for name, (logs, per_label, games, cps, eval_games, ranks) in _HEARTS.items()
    },
)

FLOWS = (HEARTS_FALCON,)
