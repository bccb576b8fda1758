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

    def as_dict(self) -> dict[str, str]:
        """The row as JSON-ready fields."""
        return {"what": self.what, "value": self.value, "key": self.key}


# node label ('cfr', 'cfr[k=8]') and its artifact -> rows
Reader = Callable[[str, "Artifact"], list[Finding]]


def readers_of(games: Iterable[Game]) -> dict[str, Reader]:
    """The finding readers of these games' stages by stage name (a stage read twice is an
    error)."""
    merged: dict[str, Reader] = {}
    for game in games:
        if not game.findings:
            continue
        for stage, reader in importlib.import_module(game.findings).READERS.items():
            if stage in merged:
                raise RuntimeError(f"two finding readers for stage {stage!r}")
            merged[stage] = reader
    return merged


_READERS: dict[str, Reader] | None = None


def readers() -> dict[str, Reader]:
    """Every shipped game's readers, loaded on first use."""
    global _READERS
    if _READERS is None:
        _READERS = readers_of(GAMES)
    return _READERS


def node_of(label: str) -> str:
    """The node a result label belongs to: 'cfr[k=8]' -> 'cfr'."""
    return label.split("[", 1)[0]


def flow_findings(spec: FlowSpec, keys: Mapping[str, str], store: ArtifactStore) -> list[Finding]:
    """The findings of a run of `spec` whose node labels built `keys`, in the flow's order of
    `findings`; a node the run did not build, or whose artifact is gone, gives no row."""
    table = readers()
    rows: list[Finding] = []
    for node in spec.findings:
        for label, key in keys.items():
            if node_of(label) != node or not store.exists(key):
                continue
            artifact = store.open(key)
            reader = table.get(artifact.stage)
            if reader is not None:
                rows += reader(label, artifact)
    return rows


def findings_markdown(title: str, findings: list[Finding]) -> str:
    """The findings as a markdown table (the run's Prefect artifact)."""
    lines = [f"### {title}", "", "| finding | value | artifact |", "|---|---|---|"]
    for f in findings:
        cells = (f.what, f.value, f"`{f.key}`")
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    if not findings:
        lines.append("| (none: the flow's result nodes were not built) | | |")
    return "\n".join(lines) + "\n"


def summary_of(artifact: Artifact) -> dict[str, Any]:
    """The artifact's summary (empty where it has none)."""
    return dict(artifact.meta.get("summary") or {})
