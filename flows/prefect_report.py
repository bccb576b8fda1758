"""What a stage shows in the Prefect UI: its log lines under its task run, a markdown summary, a
table where its result is one, and a progress artifact that moves while it works.

Artifact keys follow Prefect's rule (lowercase letters, digits and dashes), made from the flow
and the node, so each node's artifacts are versions of one key across runs:
`lhe-league-cfr-k-8` (summary), `...-table`, `...-progress`.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable
from typing import Any

from gameforge.stages.progress import (
    LogProgress,
    NullProgress,
    Progress,
    ProgressTask,
    end_early,
)
from gameforge.stages.reporting import inline, summary_lines

# Seconds between two updates of a progress artifact: each is one call to the Prefect API.
PROGRESS_EVERY_S = 2.0


def artifact_key(flow: str, label: str, kind: str = "") -> str:
    """A Prefect artifact key for node `label` of `flow`: 'lhe-league', 'cfr[k=8]' ->
    'lhe-league-cfr-k-8' (plus '-kind')."""
    text = "-".join(part for part in (flow, label, kind) if part).lower()
    return re.sub(r"-{2,}", "-", re.sub(r"[^a-z0-9]+", "-", text)).strip("-")


def stage_markdown(meta: dict[str, Any], cached: bool, seconds: float) -> str:
    """The markdown summary of one stage run: key, how it ran, inputs, parameters, result."""
    done = "reused from the store (cache hit)" if cached else f"computed in {seconds:.1f} s"
    lines = [
        f"### {meta['stage']} `{meta['key']}`",
        "",
        f"Stage version {meta['version']}, {done}; built {meta['created']} on {meta['host']}.",
        "",
        "**Inputs**" + ("" if meta.get("inputs") else ": none"),
        "",
    ]
    lines += [f"- {name}: `{key}`" for name, key in meta.get("inputs", {}).items()]
    lines += ["", "**Parameters**", ""]
    lines += [f"- {name} = `{value!r}`" for name, value in meta["params"].items()]
    summary = meta.get("summary") or {}
    if summary:
        lines += ["", "**Result**", "", "```"]
        lines += summary_lines(summary, "")
        lines += ["```"]
    return "\n".join(lines) + "\n"


def summary_table(summary: dict[str, Any]) -> list[dict[str, Any]] | None:
    """The table in a stage's result, or None: its `table` (rows, or name -> row), else a
    league's one row per player (its key and mean results)."""
    table = summary.get("table")
    if isinstance(table, list) and table and all(isinstance(row, dict) for row in table):
        return [{k: inline(v) for k, v in row.items()} for row in table]
    if isinstance(table, dict) and table and all(isinstance(r, dict) for r in table.values()):
        return [{"name": n, **{k: inline(v) for k, v in r.items()}} for n, r in table.items()]
    players = summary.get("players")
    if not isinstance(players, list) or len(players) < 2:
        return None
    columns = {"player": players}
    for name, values in summary.items():
        per_player = isinstance(values, list) and len(values) == len(players)
        if per_player and (name == "keys" or name.startswith("mean_")):
            columns[name] = values
    if len(columns) == 1:
        return None
    return [{name: inline(v[row]) for name, v in columns.items()} for row in range(len(players))]


def _percent(done: int, total: int) -> float:
    """A bar's progress in percent, as Prefect's progress artifacts take it (an empty bar: 100)."""
    return 100.0 * min(done, total) / total if total else 100.0


class _TeeTask:
    """A terminal bar, the task run's log lines and a Prefect progress artifact, moved together."""

    def __init__(
        self, bars: list[ProgressTask], publish: Callable[[float], None], total: int, done: int = 0
    ):
        self.bars, self.publish, self.total = bars, publish, total
        self.done = done
        self.last = 0.0
        self.lock = threading.Lock()

    def advance(self, n: int = 1) -> None:
        for bar in self.bars:
            bar.advance(n)
        with self.lock:
            self.done += n
            now = time.monotonic()
            due = now - self.last >= PROGRESS_EVERY_S
            if due:
                self.last = now
        if due:
            self.publish(self._fraction())

    def _fraction(self) -> float:
        return _percent(self.done, self.total)

    def note(self, text: str) -> None:
        for bar in self.bars:
            bar.note(text)

    def close(self) -> None:
        for bar in self.bars:
            bar.close()
        self.publish(self._fraction())

    def end_early(self, why: str) -> None:
        for bar in self.bars:
            end_early(bar, why, self.total - self.done)
        self.publish(100.0)  # complete: the work ended early, it did not stop


class PrefectProgress:
    """Progress of one stage: the terminal's bars, plus log lines every 10 s in the stage's task
    run and its progress artifact (`key`), updated every PROGRESS_EVERY_S seconds."""

    def __init__(
        self,
        terminal: Progress | None,
        log: Callable[[str], None],
        key: str,
        warn: Callable[[str], None],
    ) -> None:
        self.terminal = terminal or NullProgress()
        self.lines = LogProgress(log)
        self.key = key
        self.warn = warn
        self.failed = False

    def start(self, desc: str, total: int, done: int = 0) -> ProgressTask:
        """A bar in all three places."""
        from prefect.artifacts import create_progress_artifact, update_progress_artifact

        bars = [self.terminal.start(desc, total, done), self.lines.start(desc, total, done)]
        artifact_id = self._call(
            create_progress_artifact,
            progress=_percent(done, total) if done else 0.0,  # a fresh bar starts at 0
            key=self.key,
            description=desc,
        )

        def publish(fraction: float) -> None:
            if artifact_id is not None:
                self._call(update_progress_artifact, artifact_id=artifact_id, progress=fraction)

        return _TeeTask(bars, publish, total, done)

    def _call(self, function: Callable[..., Any], **kwargs: Any) -> Any:
        """One API call; a failure is reported once and never stops the stage."""
        if self.failed:
            return None
        try:
            return function(**kwargs)
        except Exception as exc:  # the API is a mirror of the work, not part of it
            self.failed = True
            self.warn(f"Prefect progress artifact {self.key} not updated: {exc}")
            return None


def publish_stage(
    flow: str, label: str, meta: dict[str, Any], cached: bool, seconds: float
) -> None:
    """Publish a stage run's markdown summary, and its table where its result has one."""
    from prefect.artifacts import create_markdown_artifact, create_table_artifact

    key = artifact_key(flow, label)
    create_markdown_artifact(
        markdown=stage_markdown(meta, cached, seconds),
        key=key,
        description=f"{label}: {meta['key']}",
    )
    table = summary_table(meta.get("summary") or {})
    if table:
        create_table_artifact(
            table=table, key=artifact_key(flow, label, "table"), description=f"{label}: result"
        )


def publish_findings(flow: str, title: str, markdown: str) -> None:
    """Publish a run's findings as the flow run's markdown artifact (`<flow>-findings`)."""
    from prefect.artifacts import create_markdown_artifact

    create_markdown_artifact(
        markdown=markdown, key=artifact_key(flow, "findings"), description=title
    )
