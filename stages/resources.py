"""Resource estimates: what a stage run holds in memory at its peak, and what it stores.

Each stage may declare `footprint(params, upstream) -> Footprint`, computed from its parameters
and its inputs' recorded parameters (no input needs to exist yet: a run plans before it
computes). The model names the big arrays (strategy and regret tables, feature matrices, replay
buffers) with their bytes; `working` covers the rest of a stage's transient memory (JIT
compilation, library state, small arrays). `gameforge run` sums the plan and refuses one that
does not fit in the machine's available memory or the store's free disk. Estimates are checked
against the peak resident memory that every artifact records (`tests/test_resources.py`).
"""

from __future__ import annotations

import math
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

MB = 1 << 20
# Memory a numba stage takes beside its named arrays: kernels compiled or loaded from numba's
# cache, temporaries of small arrays. Measured peaks of tiny runs range 10-150 MB above the RSS
# before the stage (tests/test_resources.py).
NUMBA_WORKING = 160 * MB
# A torch stage: the same plus torch's allocator pools and autograd buffers of a small network.
TORCH_WORKING = 320 * MB


class Recorded(dict[str, Any]):
    """An upstream artifact's recorded parameters; `.inputs` holds its own inputs' the same way
    (a solve's buckets, seen from a best response of it)."""

    def __init__(self, params: dict[str, Any], inputs: dict[str, dict[str, Any]] | None = None):
        super().__init__(params)
        self.inputs: dict[str, dict[str, Any]] = inputs or {}  # values are Recorded


Upstream = dict[str, dict[str, Any]]  # input name -> the upstream artifact's recorded parameters


@dataclass(frozen=True)
class Footprint:
    """A stage run's estimate: named arrays held at its peak, named arrays it stores."""

    peak: dict[str, int]  # bytes held at the peak, by what holds them
    stored: dict[str, int] = field(default_factory=dict)  # bytes written (before compression)
    working: int = NUMBA_WORKING  # transient memory beside the named arrays
    # what its time scales with (stages/timing.py): units of its main loop, of the time model
    # `work_kind` within the stage (a CFR algorithm), or a wall-time budget it stops at
    work: float = 0.0
    work_kind: str = ""
    budget_s: float | None = None
    # work of parts that the stage times on its own (ArtifactWriter.timed_part), each with its
    # own time model `stage:part`: a league's AIVAT scoring beside its dealt hands
    parts: dict[str, float] = field(default_factory=dict)

    @property
    def memory(self) -> int:
        """Estimated peak memory above what the process held before the stage."""
        return self.working + sum(self.peak.values())

    @property
    def stored_bytes(self) -> int:
        """Estimated bytes written to the store (an upper bound: chunks are compressed)."""
        return sum(self.stored.values())

    def largest(self, n: int = 3) -> list[tuple[str, int]]:
        """The `n` biggest named arrays held at the peak."""
        return sorted(self.peak.items(), key=lambda item: -item[1])[:n]


def nbytes(shape: tuple[int, ...] | int, itemsize: int) -> int:
    """Bytes of an array of `shape` with items of `itemsize` bytes."""
    count = shape if isinstance(shape, int) else math.prod(shape)
    return int(count) * itemsize


def available_memory() -> int | None:
    """MemAvailable of /proc/meminfo (what can be allocated without swapping), in bytes."""
    try:
        with open("/proc/meminfo", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    pages = os.sysconf("SC_AVPHYS_PAGES") if hasattr(os, "sysconf") else None
    return int(pages * os.sysconf("SC_PAGE_SIZE")) if pages else None


def free_disk(store: str | Path) -> int | None:
    """Free bytes on the filesystem that holds a local store (or its nearest existing parent);
    None for an object store, whose free space is not ours to know."""
    from gameforge.artifacts.files import is_remote

    if is_remote(store):
        return None
    path = Path(store).resolve()
    while not path.exists():
        path = path.parent
    return shutil.disk_usage(path).free


def human(n: int | float) -> str:
    """Bytes as 12.3 GB."""
    size = float(n)
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if size < 1024 or unit == "TB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} TB"
