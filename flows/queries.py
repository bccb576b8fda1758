"""What the store holds, as plain data for the command line and notebooks alike: its artifacts
with their telling labels and build progress, and its recorded runs with what they did."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from gameforge.artifacts.runs import RunLedger, RunRecord
from gameforge.artifacts.store import ArtifactStore
from gameforge.flows.listing import describe


def list_artifacts(store: ArtifactStore) -> list[dict[str, Any]]:
    """Every artifact and partial build, as `artifacts ls --json` gives them: key, stage,
    status, bytes, created, path, game and labels; a partial build adds `progress`, array ->
    [chunks finished, chunks]."""
    metas = store.metas()  # read once, for the entries and their labels
    infos = store.entries(metas)
    rows = []
    for info, about in zip(infos, describe(store, infos, metas), strict=True):
        row = {**info.as_dict(), **about}
        if info.status == "partial":
            progress = store.build_progress(info.key)
            row["progress"] = {name: list(pair) for name, pair in progress.items()}
        rows.append(row)
    return rows


def list_runs(store: ArtifactStore) -> list[RunRecord]:
    """The store's recorded runs, oldest first."""
    return RunLedger(store).all()


def run_counts(record: RunRecord) -> tuple[int, int] | None:
    """(stages computed, stages found cached) of a completed run; None for any other."""
    if not (record.finished and record.status == "completed"):
        return None
    computed = sum(1 for n in record.nodes.values() if n.get("cached") is False)
    cached = sum(1 for n in record.nodes.values() if n.get("cached") is True)
    return computed, cached


def run_seconds(record: RunRecord) -> float | None:
    """How long a run took, start to end; None while it has not ended."""
    if not record.finished:
        return None
    finished = datetime.fromisoformat(record.finished)
    return (finished - datetime.fromisoformat(record.started)).total_seconds()
