"""No-limit hold'em's headline results: the CNN league in big blinds per hand."""

from __future__ import annotations

from gameforge.artifacts import Artifact
from gameforge.flows.findings import (
    Finding,
    Reader,
    aivat_findings,
    head_to_head_findings,
    summary_of,
)


def nlhe_league_findings(label: str, artifact: Artifact) -> list[Finding]:
    """The league's ranking at 95%, each pairing in BB/hand with its interval, AIVAT beside the
    plain result where a player's strategy is known, and which networks beat the heuristic
    player with their interval above 0."""
    summary = summary_of(artifact)
    rows = head_to_head_findings(label, artifact)
    rows += aivat_findings(label, artifact, "BB/hand", 3)
    if "beats_heuristic_significantly" in summary:
        winners = summary["beats_heuristic_significantly"]
        value = ", ".join(winners) if winners else "none (no interval lies above 0)"
        rows.append(Finding(f"{label}: beat the heuristic at 95%", value, artifact.key))
    return rows


READERS: dict[str, Reader] = {"nlhe-league": nlhe_league_findings}
