"""Executors for chunk work: in-process (tests, notebooks) or a Dask cluster (flows)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

from gameforge.stages.progress import NullProgress, Progress


class Executor(Protocol):
    """Runs ``fn(*item)`` for every item, reporting progress; results in item order."""

    def map(
        self,
        fn: Callable[..., Any],
        items: Sequence[tuple[Any, ...]],
        desc: str = "",
        progress: Progress | None = None,
    ) -> list[Any]:
        """Run fn over items."""
        ...


class InProcessExecutor:
    """Runs chunk work one after another in this process."""

    def map(
        self,
        fn: Callable[..., Any],
        items: Sequence[tuple[Any, ...]],
        desc: str = "",
        progress: Progress | None = None,
    ) -> list[Any]:
        """Run fn over items serially."""
        bar = (progress or NullProgress()).start(desc, len(items))
        results = []
        try:
            for item in items:
                results.append(fn(*item))
                bar.advance()
        finally:
            bar.close()
        return results


class DaskExecutor:
    """Sends chunk work to a Dask cluster through a `distributed.Client`."""

    def __init__(self, client: Any):
        self.client = client

    def map(
        self,
        fn: Callable[..., Any],
        items: Sequence[tuple[Any, ...]],
        desc: str = "",
        progress: Progress | None = None,
    ) -> list[Any]:
        """Submit every item (small arguments only: paths and chunk ids), gather in order."""
        from distributed import as_completed

        bar = (progress or NullProgress()).start(desc, len(items))
        futures = [self.client.submit(fn, *item, pure=False) for item in items]
        try:
            for future in as_completed(futures):
                future.result()  # re-raises a worker's exception here
                bar.advance()
        except BaseException:
            for future in futures:
                future.cancel()
            raise
        finally:
            bar.close()
        return [f.result() for f in futures]
