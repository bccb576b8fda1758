"""Progress reporting for long work, decoupled from any UI (rich in the CLI, logs elsewhere)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Protocol


class ProgressTask(Protocol):
    """One bar: advance it as items finish, close it at the end."""

    def advance(self, n: int = 1) -> None:
        """Count n more items as done."""

    def close(self) -> None:
        """Finish the bar."""

    def note(self, text: str) -> None:
        """Show a short status next to the bar (a running loss)."""


def end_early(bar: ProgressTask, why: str, left: int) -> None:
    """Close a bar whose work ended `left` items short of its total for a reason that is not a
    failure (k-means converged at iteration 15 of at most 100): it ends where the work ended,
    saying why, neither filled to the total nor marked stopped. A bar without `end_early` (a
    sink written before it existed) gets the reason as a note and is filled, then closed."""
    ending = getattr(bar, "end_early", None)
    if ending is not None:
        ending(why)
        return
    bar.note(f"({why})")
    bar.advance(left)
    bar.close()


class Progress(Protocol):
    """Starts progress bars."""

    def start(self, desc: str, total: int, done: int = 0) -> ProgressTask:
        """Begin a bar of `total` items, `done` of them finished before this run (a resumed or
        continued run: shown, but left out of the rate and ETA)."""
        ...


class _NullTask:
    def advance(self, n: int = 1) -> None:
        pass

    def close(self) -> None:
        pass

    def note(self, text: str) -> None:
        pass

    def end_early(self, why: str) -> None:
        pass


class NullProgress:
    """Reports nothing."""

    def start(self, desc: str, total: int, done: int = 0) -> ProgressTask:
        """A bar that shows nothing."""
        return _NullTask()


class _LogTask:
    def __init__(
        self, log: Callable[[str], None], desc: str, total: int, every_s: float, done: int = 0
    ):
        self.log, self.desc, self.total, self.every_s = log, desc, total, every_s
        self.done = self.done_at_first = done  # the rate's baseline until the first line
        self.text = ""
        self.t0 = self.last = time.monotonic()
        self.first: float | None = None  # when the first line was logged

    def advance(self, n: int = 1) -> None:
        self.done += n
        now = time.monotonic()
        if now - self.last >= self.every_s:
            extra = f" {self.text}" if self.text else ""
            self.log(f"{self.desc}: {self.done:,}/{self.total:,} ({self._pace(now)}){extra}")
            self.last = now
            if self.first is None:
                self.first, self.done_at_first = now, self.done

    def _pace(self, now: float) -> str:
        """Elapsed time, then, from the second line on, the rate since the first line and the
        remaining time it implies. The first line has neither: its rate would hold the start-up
        (JIT compiling a solver: "0.08/s, ETA 12781 s" for work done in a minute); chunks that
        finish in bursts average out over the longer window."""
        elapsed = now - self.t0
        if self.first is None:
            return f"{elapsed:.0f} s"
        window = now - self.first
        rate = (self.done - self.done_at_first) / window if window > 0 else 0.0
        left = self.total - self.done
        eta = f", ETA {left / rate:.0f} s" if rate > 0 and left > 0 else ""
        return f"{elapsed:.0f} s, {rate:,.2f}/s{eta}"

    def close(self) -> None:
        extra = f" {self.text}" if self.text else ""
        # closed early (a killed run, a failed item): it stopped, it is not done
        how = "done" if self.done >= self.total else "stopped"
        elapsed = time.monotonic() - self.t0
        self.log(f"{self.desc}: {self.done:,}/{self.total:,} {how} after {elapsed:.1f} s{extra}")

    def end_early(self, why: str) -> None:
        """The work ended at `done`, short of the total, and is complete: the line says so."""
        extra = f"; {self.text}" if self.text else ""
        elapsed = time.monotonic() - self.t0
        self.log(
            f"{self.desc}: {self.done:,} (of at most {self.total:,}) done after {elapsed:.1f} s, "
            f"{why}{extra}"
        )

    def note(self, text: str) -> None:
        self.text = text


class LogProgress:
    """Progress as log lines at most every `every_s` seconds (for Prefect logs and batch jobs)."""

    def __init__(self, log: Callable[[str], None], every_s: float = 10.0):
        self.log, self.every_s = log, every_s

    def start(self, desc: str, total: int, done: int = 0) -> ProgressTask:
        """A bar that logs a line now and then."""
        return _LogTask(self.log, desc, total, self.every_s, done)


class LabelledProgress:
    """Bars of one flow node, each description prefixed with its label ("ochs[k=8]: ...")."""

    def __init__(self, inner: Progress, label: str):
        self.inner, self.label = inner, label

    def start(self, desc: str, total: int, done: int = 0) -> ProgressTask:
        """A bar of the inner progress, named after the node."""
        return self.inner.start(f"{self.label}: {desc}", total, done)
