"""A flow's findings: the headline results it prints last, read from its artifacts' summaries.

A flow names the nodes whose results are its findings (`FlowSpec.findings`); each game's module
(named by its declaration, `games/<game>.py`) keeps a `READERS` table from stage name to a reader
that turns one artifact into rows. The same rows end the run on the terminal, become the run's
Prefect markdown artifact, and are printed again by `gameforge runs show`.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from gameforge.games import GAMES, Game
from gameforge.stages.reporting import width_ratio

if TYPE_CHECKING:
    from gameforge.artifacts.store import Artifact, ArtifactStore
    from gameforge.flows.specs.base import FlowSpec


@dataclass(frozen=True)
class Finding:
    """One row of a flow's closing table: what was measured, its value (with its interval), and
    the artifact it was read from."""

    what: str
    value: str
    key: str


# node label ('cfr', 'cfr[k=8]') and its artifact -> rows
Reader = Callable[[str, "Artifact"], list[Finding]]


def readers_of(game: Game) -> dict[str, Reader]:
    """A game's finding readers by stage name (none where it declares no findings module)."""
    if not game.findings:
        return {}
    return dict(importlib.import_module(game.findings).READERS)


def reader_for(stage: str, games: Iterable[Game] = GAMES) -> Reader | None:
    """The reader of `stage`'s results, loading only the module of the game that declares the
    stage (so a poker run's findings never import the Hearts engine)."""
    for game in games:
        if any(stage in stages for stages in game.stages.values()):
            return readers_of(game).get(stage)
    return None


def node_of(label: str) -> str:
    """The node a result label belongs to: 'cfr[k=8]' -> 'cfr'."""
    return label.split("[", 1)[0]


def flow_findings(spec: FlowSpec, keys: Mapping[str, str], store: ArtifactStore) -> list[Finding]:
    """The findings of a run of `spec` whose node labels built `keys`, in the flow's order of
    `findings`; a node the run did not build, or whose artifact is gone, gives no row."""
    rows: list[Finding] = []
    for node in spec.findings:
        for label, key in keys.items():
            if node_of(label) != node or not store.exists(key):
                continue
            artifact = store.open(key)
            reader = reader_for(artifact.stage)
            if reader is not None:
                rows += reader(label, artifact)
    return rows


def findings_markdown(title: str, findings: list[Finding]) -> str:
    """The findings as a markdown table (the run's Prefect artifact)."""
    lines = [f"### {title}", "", "| finding | value | artifact |", "|---|---|---|"]
    for f in findings:
        cells = (f.what, f.value, f"`{f.key}`")
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(lines) + "\n"


def summary_of(artifact: Artifact) -> dict[str, Any]:
    """The artifact's summary (empty where it has none)."""
    return dict(artifact.meta.get("summary") or {})


def head_to_head_findings(label: str, artifact: Artifact) -> list[Finding]:
    """A league's ranking at 95% (tiers, and the pairs left undecided), then each pairing's
    mean with its 95% interval."""
    from gameforge.stages.reporting import ranking_line

    summary = summary_of(artifact)
    rows = [Finding(f"{label}: ranking", ranking_line(summary), artifact.key)]
    for line in [*summary.get("decided", []), *summary.get("undecided", [])]:
        pair, _, result = line.partition(": ")
        rows.append(Finding(f"{label}: {pair}", result, artifact.key))
    return rows


def aivat_findings(label: str, artifact: Artifact, unit: str, digits: int) -> list[Finding]:
    """A league's pairings scored by AIVAT (its summary's `aivat`): both estimates on the same
    hands with their 95% intervals, whose strategy was known, how much narrower."""
    rows = []
    for pair, got in (summary_of(artifact).get("aivat") or {}).items():
        (mean, half), (plain, plain_half) = got["aivat"], got["plain"]
        value = (
            f"AIVAT {mean:+.{digits}f} ± {half:.{digits}f} {unit}, plain {plain:+.{digits}f} ± "
            f"{plain_half:.{digits}f} on the same {got['hands']:,} hands ({got['known']}'s "
            f"strategy known; {width_ratio(got['narrower'])})"
        )
        rows.append(Finding(f"{label}: {pair} (AIVAT)", value, artifact.key))
    return rows


def run_findings(flow: str, keys: Mapping[str, str], store: ArtifactStore) -> list[Finding]:
    """The findings of a run of the flow called `flow` (none for a single-stage run)."""
    from gameforge.flows.specs import FLOWS

    spec = FLOWS.get(flow)
    return [] if spec is None else flow_findings(spec, keys, store)


def compare_findings(a: list[Finding], b: list[Finding]) -> list[dict[str, str]]:
    """Rows (what, a, b) of two runs' findings matched by what they measure: those whose values
    differ, and those only one run has."""
    first = {f.what: f.value for f in a}
    second = {f.what: f.value for f in b}
    rows = []
    for what in list(dict.fromkeys([*first, *second])):
        x, y = first.get(what, "(none)"), second.get(what, "(none)")
        if x != y:
            rows.append({"what": what, "a": x, "b": y})
    return rows
