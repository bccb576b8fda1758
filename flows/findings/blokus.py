"""Blokus's headline results: each network's win share against three MCTS-MAXN players."""

from __future__ import annotations

from gameforge.artifacts import Artifact
from gameforge.flows.findings import Finding, Reader, summary_of
from gameforge.stages.reporting import win_rate_text


def eval_findings(label: str, artifact: Artifact) -> list[Finding]:
    """Each evaluated network's win share with its 95% Wilson interval (the untrained control
    first, where there is one, on the same games), then the verdict against the control."""
    summary = summary_of(artifact)
    rows = [
        Finding(f"{label}: {row['net']}", win_rate_text(row), artifact.key)
        for row in summary.get("table", [])
    ]
    versus = summary.get("versus_control")
    if isinstance(versus, dict):
        verdict = versus["statement"].rsplit("; ", 1)[-1]
        rows.append(Finding(f"{label}: trained vs untrained", verdict, artifact.key))
    return rows


READERS: dict[str, Reader] = {"blokus-eval": eval_findings}
