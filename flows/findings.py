"""A flow's findings: the headline results it prints last, read from its artifacts' summaries."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Finding:
    """One row of a flow's closing table: what was measured, its value (with its interval), and
    the artifact it was read from."""

    what: str
    value: str
    key: str


@dataclass(frozen=True)
class FlowResults:
    """A finished run's artifacts by node name, one per variant (a swept node has several)."""

    artifacts: dict[str, list[Any]]
