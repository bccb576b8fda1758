"""Hearts's headline results: each learner variant's penalty ratio and rank against the
rule-based and Monte Carlo players, beside the FALCON paper's."""

from __future__ import annotations

import numpy as np

from gameforge.artifacts import Artifact
from gameforge.engines.common.stats import t_half_width
from gameforge.engines.hearts.agents import MONTE_CARLO
from gameforge.engines.hearts.game import RULE_BASED
from gameforge.flows.findings import Finding, Reader, summary_of
from gameforge.stages.hearts import learner_variants

# The paper's results after 100,000 learning games, 5 trials: penalty ratio against three
# rule-based and three Monte Carlo players, and the expected rank in games to 100 points
# (ranks were published for the previous work and for both methods only).
PAPER = {
    "previous": {"ratio": (0.2354, 0.2657), "rank": (2.3756, 2.7482)},
    "new": {"ratio": (0.2181, 0.2549)},
    "previous+svr": {"ratio": (0.2429, 0.2685)},
    "new+svr": {"ratio": (0.2170, 0.2503), "rank": (2.0744, 2.5150)},
}
OPPONENTS = ((RULE_BASED, "rule-based"), (MONTE_CARLO, "Monte Carlo"))


def mean_interval(values: np.ndarray) -> str:
    """'0.2170 ± 0.0040 (95% t, 5 trials)': the mean over trials with its t interval (one
    trial: no interval)."""
    n = len(values)
    if n < 2:
        return f"{float(values.mean()):.4f} (1 trial: no interval)"
    half = t_half_width(values)
    return f"{float(values.mean()):.4f} ± {half:.4f} (95% t, {n} trials)"


def eval_findings(label: str, artifact: Artifact) -> list[Finding]:
    """Per variant: the final penalty ratio (0.25 is par; lower is better) against each
    opponent and, where ranks were played, the mean rank; the paper's figure beside each."""
    summary = summary_of(artifact)
    learners = list(summary.get("learners", []))
    curve = np.asarray(artifact["curve"][...])
    ranks = np.asarray(artifact["ranks"][...]) if "ranks" in artifact.array_names() else None
    rows = []
    for variant, members in learner_variants(learners).items():
        finals = np.array([curve[curve[:, 0] == m][-1] for m in members])
        paper = PAPER.get(variant, {})
        for column, (opponent, name) in enumerate(OPPONENTS):
            value = mean_interval(finals[:, 2 + column])
            if "ratio" in paper:
                value += f"; paper {paper['ratio'][column]:.4f}"
            what = f"{label}: {variant} penalty ratio vs {name}"
            rows.append(Finding(what, value, artifact.key))
            if ranks is None:
                continue
            got = np.array([r[2] for r in ranks if int(r[0]) in members and int(r[1]) == opponent])
            if len(got):
                value = mean_interval(got)
                if "rank" in paper:
                    value += f"; paper {paper['rank'][column]:.4f}"
                rows.append(Finding(f"{label}: {variant} rank vs {name}", value, artifact.key))
    return rows


READERS: dict[str, Reader] = {"hearts-eval": eval_findings}
