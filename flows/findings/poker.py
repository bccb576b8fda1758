"""Limit poker's headline results: buckets per round, exploitability, the league's ranking."""

from __future__ import annotations

from typing import Any

from gameforge.artifacts import Artifact
from gameforge.flows.findings import (
    Finding,
    Reader,
    aivat_findings,
    head_to_head_findings,
    summary_of,
)

ROUND_NAMES = ("preflop", "flop", "turn", "river")


def _round_name(round_index: str) -> str:
    index = int(round_index)
    return ROUND_NAMES[index] if index < len(ROUND_NAMES) else f"round {index}"


def _number(x: float) -> str:
    """A k-means objective: whole numbers with separators when large, else 4 digits."""
    return f"{x:,.0f}" if abs(x) >= 1000 else f"{x:.4g}"


def bucket_findings(label: str, artifact: Artifact) -> list[Finding]:
    """Buckets per round: k, the hands bucketed, the k-means objective and its iterations."""
    summary = summary_of(artifact)
    parts = []
    for round_index, r in sorted((summary.get("rounds") or {}).items()):
        buckets = min(int(summary.get("k", 0)), int(r.get("distinct_features", r["hands"])))
        parts.append(
            f"{_round_name(round_index)} {buckets:,} buckets of {r['hands']:,} hands, "
            f"objective {_number(r['objective'])} after {r['iterations']} iterations"
        )
    return [Finding(f"{label}: buckets", "; ".join(parts) or "no rounds", artifact.key)]


def _solve_text(summary: dict[str, Any]) -> str:
    seconds = summary.get("seconds")
    took = f" in {seconds:,.1f} s" if isinstance(seconds, int | float) else ""
    return f"{summary.get('iterations', 0):,} {summary.get('algorithm', '')} iterations{took}"


def cfr_findings(label: str, artifact: Artifact) -> list[Finding]:
    """A solve: its exact exploitability where the stage measured one, iterations and time."""
    summary = summary_of(artifact)
    solve = _solve_text(summary)
    exploitability = summary.get("exploitability_mbb_per_game")
    if exploitability is not None:
        where = "" if summary.get("abstraction") == "lossless" else ", in the abstract game"
        value = f"{mbb(exploitability)} mbb/g (exact best response{where}) after {solve}"
        return [Finding(f"{label}: exploitability", value, artifact.key)]
    value = (
        f"{solve}, {summary.get('infosets', 0):,} information sets; exploitability in the real "
        "game: run with `--with best-response`"
    )
    return [Finding(f"{label}: solve", value, artifact.key)]


def exploitability_findings(label: str, artifact: Artifact) -> list[Finding]:
    """A strategy's exploitability in the real game: exact from a best response (no interval:
    nothing is sampled), or a local best response's one-sided 95% lower bound (said to be no
    evidence where that bound is at or below 0)."""
    from gameforge.stages.poker.lbr import lower_bound_text

    s = summary_of(artifact)
    if artifact.stage == "lbr":
        lower = s.get("exploitability_lower_bound_mbb_per_game")
        if lower is None:  # an artifact from before the bound was stored
            lower = s["lbr_mbb_per_game"] - s["half_width_95_mbb_per_game"]
        value = f"{lower_bound_text(s['lbr_mbb_per_game'], lower)}, {s['deals']:,} deals"
    else:
        value = (
            f"{mbb(s['exploitability_mbb_per_game'])} mbb/g (exact best response in the real "
            f"game, {s.get('precision', 'float64')}) of {s.get('strategy', '?')}"
        )
    return [Finding(f"{label}: exploitability", value, artifact.key)]


def mbb(x: float) -> str:
    """An exploitability in mbb/g: 3 significant digits below 10 (Kuhn's 0.0874), else one
    decimal with separators."""
    return f"{x:.3g}" if abs(x) < 10 else f"{x:,.1f}"


def league_findings(label: str, artifact: Artifact) -> list[Finding]:
    """A duplicate league: its ranking at 95%, each pairing with its interval, AIVAT beside it,
    and the opponent-cluster claim where the players are C6, C8, ..."""
    summary = summary_of(artifact)
    rows = head_to_head_findings(label, artifact)
    rows += aivat_findings(label, artifact, "mbb/g", 1)
    claim = summary.get("more_clusters_rank_higher")
    if isinstance(claim, dict):
        value = f"{claim['holds']} (the claim: {claim['statement']})"
        rows.append(Finding(f"{label}: more clusters rank higher", value, artifact.key))
    return rows


READERS: dict[str, Reader] = {
    "hsd-buckets": bucket_findings,
    "ochs-buckets": bucket_findings,
    "potential-buckets": bucket_findings,
    "cfr": cfr_findings,
    "best-response": exploitability_findings,
    "lbr": exploitability_findings,
    "league": league_findings,
}
