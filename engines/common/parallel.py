"""How a chunked computation runs: threads, chunk size and a progress callback.

Functions that split their work into independent chunks (`local_best_response`, `play_match`)
take one `Parallel` instead of three loose keywords. Their results never depend on it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Parallel:
    """Threads, work per task and a progress callback; results never depend on them."""

    threads: int = 1
    chunk: int | None = None  # units per task; None: the function's own default
    progress: Callable[[int], None] | None = None  # told the units done as each task ends


SERIAL = Parallel()  # the default: one thread, the function's own chunk, no progress
