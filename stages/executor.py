"""Executors for chunk work: in-process (tests, notebooks) or a Dask cluster (flows)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from typing import Any

from gameforge.stages.progress import NullProgress, Progress, ProgressTask

ChunkFn = Callable[..., Any]  # a module-level function: it may run in a Dask worker
Items = Sequence[tuple[Any, ...]]  # each item's arguments to it


class Executor(ABC):
    """Runs ``fn(*item)`` for every item, reporting progress; results in item order."""

    def map(
        self,
        fn: ChunkFn,
        items: Items,
        desc: str = "",
        progress: Progress | None = None,
        weights: Sequence[int] | None = None,
        done: int = 0,
    ) -> list[Any]:
        """Run fn over items; the progress bar counts `weights[i]` for item i (default 1), after
        `done` units finished by an earlier run (shown, but not in the rate or ETA)."""
        work = list(weights) if weights is not None else [1] * len(items)
        bar = (progress or NullProgress()).start(desc, done + sum(work), done=done)
        try:
            return self._gather(fn, items, work, bar)
        finally:
            bar.close()

    @abstractmethod
    def _gather(self, fn: ChunkFn, items: Items, work: list[int], bar: ProgressTask) -> list[Any]:
        """Run fn over items, advancing `bar` by `work[i]` as item i finishes; the results."""


class InProcessExecutor(Executor):
    """Runs chunk work one after another in this process."""

    def _gather(self, fn: ChunkFn, items: Items, work: list[int], bar: ProgressTask) -> list[Any]:
        """Run fn over items serially."""
        results = []
        for item, amount in zip(items, work, strict=True):
            results.append(fn(*item))
            bar.advance(amount)
        return results


class DaskExecutor(Executor):
    """Sends chunk work to a Dask cluster through a `distributed.Client`."""

    def __init__(self, client: Any):
        self.client = client

    def _gather(self, fn: ChunkFn, items: Items, work: list[int], bar: ProgressTask) -> list[Any]:
        """Submit every item (small arguments only: paths and chunk ids), gather in order."""
        from distributed import as_completed

        futures = [self.client.submit(fn, *item, pure=False) for item in items]
        amount = {future.key: w for future, w in zip(futures, work, strict=True)}
        try:
            for future in as_completed(futures):
                future.result()  # re-raises a worker's exception here
                bar.advance(amount[future.key])
        except BaseException:
            for future in futures:
                future.cancel()
            raise
        return [f.result() for f in futures]
