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
        weights: Sequence[int] | None = None,
        done: int = 0,
    ) -> list[Any]:
        """Run fn over items; the progress bar counts `weights[i]` for item i (default 1), after
        `done` units finished by an earlier run (shown, but not in the rate or ETA)."""
        ...


def _work(items: Sequence[Any], weights: Sequence[int] | None) -> list[int]:
    """Each item's share of the progress bar: its weight, or 1."""
    return list(weights) if weights is not None else [1] * len(items)


class InProcessExecutor:
    """Runs chunk work one after another in this process."""

    def map(
        self,
        fn: Callable[..., Any],
        items: Sequence[tuple[Any, ...]],
        desc: str = "",
        progress: Progress | None = None,
        weights: Sequence[int] | None = None,
        done: int = 0,
    ) -> list[Any]:
        """Run fn over items serially."""
        work = _work(items, weights)
        bar = (progress or NullProgress()).start(desc, done + sum(work), done=done)
        results = []
        try:
            for item, amount in zip(items, work, strict=True):
                results.append(fn(*item))
                bar.advance(amount)
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
        weights: Sequence[int] | None = None,
        done: int = 0,
    ) -> list[Any]:
        """Submit every item (small arguments only: paths and chunk ids), gather in order."""
        from distributed import as_completed

        work = _work(items, weights)
        bar = (progress or NullProgress()).start(desc, done + sum(work), done=done)
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
        finally:
            bar.close()
        return [f.result() for f in futures]
