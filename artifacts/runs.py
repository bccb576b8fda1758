"""Run records: what each run of a flow (or of a single stage, or an import) asked for and got.

A record is one small JSON file, `STORE/runs/<run id>.json`, written when the run starts (status
`running`, with the keys it plans to produce) and rewritten when it ends (`completed`, `failed`
or `stopped`, with each node's key, whether it was cached, and its seconds). Records are what
`gameforge runs` lists and compares, and what `artifacts gc --unreferenced` keeps artifacts for:
an artifact is referenced when a kept run names it, or it is an input (recursively) of one that
is.

A run killed by SIGKILL keeps its `running` record, with its pid and host; `runs ls` shows it
as `killed` once that process is gone.
"""

from __future__ import annotations

import json
import os
import socket
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from gameforge.artifacts.files import pid_alive
from gameforge.artifacts.store import ArtifactStore, StoreError, utc_now

RUNS_DIR = "runs"


@dataclass
class RunRecord:
    """One run: what was asked (flow, preset, overrides, command), what each node got, when."""

    run_id: str
    flow: str
    preset: str | None = None
    overrides: list[str] = field(default_factory=list)
    command: str = ""
    nodes: dict[str, dict[str, Any]] = field(default_factory=dict)  # label -> key, cached, s
    status: str = "running"
    started: str = field(default_factory=utc_now)
    finished: str | None = None
    host: str = field(default_factory=socket.gethostname)
    pid: int = field(default_factory=os.getpid)
    error: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def artifact_keys(self) -> list[str]:
        """The artifact keys this run names, in node order."""
        return [n["key"] for n in self.nodes.values() if n.get("key")]

    def as_dict(self) -> dict[str, Any]:
        """Plain JSON-ready dict."""
        return dict(self.__dict__)

    def shown_status(self) -> str:
        """The status, or `killed` for a run recorded as running whose process is gone."""
        if self.status != "running" or self.host != socket.gethostname():
            return self.status
        return self.status if pid_alive(self.pid) else "killed"


def new_run_id(flow: str) -> str:
    """A sortable, unique id: '20261125-041503-lhe-league-3fa2'."""
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    return f"{stamp}-{flow}-{uuid.uuid4().hex[:4]}"


class RunLedger:
    """The run records of one store."""

    def __init__(self, store: ArtifactStore) -> None:
        self.store = store
        self.files = store.files

    def write(self, record: RunRecord) -> None:
        """Write (or rewrite) a record atomically."""
        data = json.dumps(record.as_dict(), indent=1, default=str).encode()
        self.files.write(f"{RUNS_DIR}/{record.run_id}.json", data)

    def record_done(self, flow: str, nodes: dict[str, dict[str, Any]], command: str) -> None:
        """Record a finished run of no flow (a single stage, an import) in one write."""
        record = RunRecord(run_id=new_run_id(flow), flow=flow, command=command)
        self.finish(record, "completed", nodes=nodes)

    def finish(
        self,
        record: RunRecord,
        status: str,
        nodes: dict[str, dict[str, Any]] | None = None,
        error: str | None = None,
    ) -> None:
        """Rewrite a record with how its run ended."""
        record.status, record.finished, record.error = status, utc_now(), error
        if nodes is not None:
            record.nodes = nodes
        self.write(record)

    def all(self) -> list[RunRecord]:
        """Every readable record, oldest first (an unreadable file is skipped)."""
        records = []
        for name in self.files.listdir(RUNS_DIR):
            if not name.endswith(".json"):
                continue
            try:
                records.append(RunRecord(**json.loads(self.files.read_bytes(f"{RUNS_DIR}/{name}"))))
            except (OSError, ValueError, TypeError):
                continue
        return sorted(records, key=lambda r: (r.started, r.run_id))

    def get(self, run_id: str) -> RunRecord:
        """A record by id or unique prefix; 'last' is the newest, 'last~1' the one before."""
        records = self.all()
        back_text = run_id.removeprefix("last").removeprefix("~") or "0"
        if run_id.startswith("last") and back_text.isdigit():
            back = int(back_text)
            if back >= len(records):
                raise StoreError(f"no run {run_id!r}: the store has {len(records)} runs")
            return records[-1 - back]
        matches = [r for r in records if r.run_id.startswith(run_id)]
        if len(matches) == 1:
            return matches[0]
        if not matches:
            raise StoreError(f"no run {run_id!r} in store {self.store.location}")
        shown = ", ".join(r.run_id for r in matches[:5])
        raise StoreError(f"run prefix {run_id!r} is ambiguous: {shown}")

    def last_naming(self, key: str) -> RunRecord | None:
        """The newest run that planned or made `key` (None if no record names it)."""
        naming = [r for r in self.all() if key in r.artifact_keys()]
        return naming[-1] if naming else None

    def kept(self, keep_last: int | None = None) -> list[RunRecord]:
        """The runs whose artifacts gc keeps: all, or the `keep_last` newest of each flow."""
        records = self.all()
        if keep_last is None:
            return records
        by_flow: dict[str, list[RunRecord]] = {}
        for record in records:
            by_flow.setdefault(record.flow, []).append(record)
        return [r for runs in by_flow.values() for r in runs[len(runs) - keep_last :]]

    def forget(self, records: list[RunRecord]) -> None:
        """Delete these records."""
        for record in records:
            self.files.remove(f"{RUNS_DIR}/{record.run_id}.json")


def referenced(store: ArtifactStore, records: list[RunRecord]) -> set[str]:
    """Every committed key these runs name, with all their inputs, recursively."""
    todo = [key for record in records for key in record.artifact_keys()]
    seen: set[str] = set()
    while todo:
        key = todo.pop()
        if key in seen or not store.exists(key):
            continue
        seen.add(key)
        try:
            todo.extend(store.open(key).inputs.values())
        except StoreError as exc:  # its inputs are unknown: removing anything could break it
            raise StoreError(f"{exc}; repair or remove it before collecting garbage") from None
    return seen


@dataclass
class Collection:
    """What `gc --unreferenced` removed (or, on a dry run, would remove)."""

    removed: list[tuple[str, int]] = field(default_factory=list)  # key, bytes
    forgotten: list[str] = field(default_factory=list)  # run ids no longer kept
    busy: list[str] = field(default_factory=list)  # keys locked by a live process: left

    @property
    def freed(self) -> int:
        """Bytes of the removed artifacts."""
        return sum(size for _key, size in self.removed)


def collect_unreferenced(
    store: ArtifactStore, keep_last: int | None = None, dry_run: bool = False
) -> Collection:
    """Remove complete artifacts that no kept run reaches (see `referenced`); with `keep_last`,
    also forget each flow's older run records. A store without records is refused (nothing
    would count as used), except for a dry run, which lists everything."""
    ledger = RunLedger(store)
    records = ledger.all()
    if not records and not dry_run:
        raise StoreError(
            f"store {store.location} has no run records, so every artifact would count as unused; "
            "nothing removed"
        )
    kept = ledger.kept(keep_last)
    used = referenced(store, kept)
    kept_ids = {r.run_id for r in kept}
    dropped = [r for r in records if r.run_id not in kept_ids]
    out = Collection(forgotten=[r.run_id for r in dropped])
    for info in store.entries():
        if info.status != "complete" or info.key in used:
            continue
        if not dry_run and not store.remove_unlocked(info.key):
            out.busy.append(info.key)
            continue
        out.removed.append((info.key, info.bytes))
    if not dry_run:
        ledger.forget(dropped)
    return out


# Lists up to this long are compared element by element; longer ones (per-hand tables, curves)
# are not headline results.
SHORT_LIST = 12


def headline_values(summary: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """A stage summary's plain values by dotted path ('ranking_text', 'table.0.win_rate'); short
    lists element by element, long lists left out."""
    out: dict[str, Any] = {}
    for name, value in summary.items():
        path = f"{prefix}{name}"
        if isinstance(value, dict):
            out.update(headline_values(value, path + "."))
        elif isinstance(value, list):
            if len(value) <= SHORT_LIST:
                out.update(headline_values({str(i): v for i, v in enumerate(value)}, path + "."))
        else:
            out[path] = value
    return out


def _run_differences(a: RunRecord, b: RunRecord, everything: bool = False) -> list[dict[str, Any]]:
    """Rows (node '(run)', field, a, b) of the flow, preset and overrides the runs asked for
    differently (all three with `everything`)."""
    rows = []
    for name in ("flow", "preset", "overrides"):
        x, y = getattr(a, name), getattr(b, name)
        if x != y or everything:
            rows.append({"node": "(run)", "field": name, "a": x, "b": y})
    return rows


def compare_runs(
    store: ArtifactStore, a: RunRecord, b: RunRecord, everything: bool = False
) -> list[dict[str, Any]]:
    """Rows (node, field, a, b, change) of two runs' results side by side: for each node of
    either, its key, then each summary value that differs (all of them with `everything`)."""
    rows = [{**row, "change": ""} for row in _run_differences(a, b, everything)]
    for node in list(dict.fromkeys([*a.nodes, *b.nodes])):
        keys = [run.nodes.get(node, {}).get("key") for run in (a, b)]
        rows.append({"node": node, "field": "key", "a": keys[0], "b": keys[1], "change": ""})
        if keys[0] == keys[1] and not everything:
            continue  # the same artifact: the same results
        values = [
            headline_values(store.open(k).meta.get("summary") or {})
            if k and store.exists(k)
            else {}
            for k in keys
        ]
        for name in list(dict.fromkeys([*values[0], *values[1]])):
            x, y = values[0].get(name), values[1].get(name)
            if x == y and not everything:
                continue
            numeric = all(isinstance(v, int | float) and not isinstance(v, bool) for v in (x, y))
            change = f"{y - x:+.6g}" if numeric else ""  # type: ignore[operator]
            rows.append({"node": node, "field": name, "a": x, "b": y, "change": change})
    return rows


def parameter_differences(store: ArtifactStore, a: RunRecord, b: RunRecord) -> list[dict[str, Any]]:
    """Rows (node, field, a, b) of what two runs asked for differently: the run's flow, preset
    and overrides, then each node's parameters as its artifacts record them (a node only one
    run built shows its key against '(not run)')."""
    rows = _run_differences(a, b)
    for node in list(dict.fromkeys([*a.nodes, *b.nodes])):
        keys = [run.nodes.get(node, {}).get("key") for run in (a, b)]
        if keys[0] == keys[1]:
            continue  # the same artifact: the same parameters
        if None in keys or not all(store.exists(k) for k in keys if k):
            shown = [k or "(not run)" for k in keys]
            rows.append({"node": node, "field": "key", "a": shown[0], "b": shown[1]})
            continue
        params = [store.open(k).params for k in keys if k]
        for name in list(dict.fromkeys([*params[0], *params[1]])):
            x, y = params[0].get(name), params[1].get(name)
            if x != y:
                rows.append({"node": node, "field": name, "a": x, "b": y})
    return rows


def resume_command(command: str) -> str:
    """A recorded command without its `--force` options: the same run, resuming what it built.

    `gameforge run` takes `--force STAGE`; `gameforge stage run` takes a bare `--force`."""
    words = command.split()
    bare = words[1:2] == ["stage"]
    kept: list[str] = []
    skip = False
    for word in words:
        if skip:
            skip = False
        elif word == "--force":
            skip = not bare
        elif not word.startswith("--force="):
            kept.append(word)
    return " ".join(kept)


def older_build_note(store: ArtifactStore, stage: str, version: int, key: str) -> str:
    """One line on an unfinished build of the same content by an earlier stage version, which
    this version does not resume (the version is in the key)."""
    build = UnfinishedBuild(
        key, store.build_progress(key), None, store.location, store.build_recipe(key)
    )
    code = (build.recipe or {}).get("code_version")
    return (
        f"not resumed: {key}, an unfinished build of the same content by {stage} version "
        f"{version}{f', code {code}' if code else ''} ({build.progress_text()}); resume it with "
        f"that version's code, or discard it with `{build.discard}`"
    )


def share(done: int, total: int) -> str:
    """Chunks finished as a whole percentage, rounded down: '28%'."""
    return f"{100 * done // max(total, 1)}%"


@dataclass
class UnfinishedBuild:
    """A build started and never committed: how far it got and the run that resumes it."""

    key: str
    progress: dict[str, tuple[int, int]]  # chunked array -> (chunks finished, chunks in all)
    run: RunRecord | None  # the newest run that planned it
    store: str = "store"  # the store's location, as commands name it
    recipe: dict[str, Any] | None = None  # what its writer recorded (None before recipes)
    current_version: int | None = None  # its stage's version in this code, where known

    @property
    def outdated(self) -> bool:
        """True if this code's version of its stage differs from the one that started it: the
        same run now computes another key, and only the code that started it resumes it."""
        return (
            self.recipe is not None
            and self.current_version is not None
            and self.recipe.get("version") != self.current_version
        )

    @property
    def discard(self) -> str:
        """The command that throws its finished work away."""
        where = "" if self.store == "store" else f" --store {self.store}"
        return f"gameforge artifacts rm {self.key}{where}"

    @property
    def resume(self) -> str | None:
        """The command that resumes it: its run's, without `--force` (None where this code
        would build another key)."""
        if self.outdated or not (self.run and self.run.command):
            return None
        return resume_command(self.run.command)

    def outdated_text(self) -> str:
        """Why this code does not resume it: 'started by best-response version 2 (code ...);
        this code has version 3, which computes another key for the same run'."""
        recipe = self.recipe or {}
        return (
            f"started by {recipe.get('stage')} version {recipe.get('version')} (code "
            f"{recipe.get('code_version') or 'unknown'}); this code has version "
            f"{self.current_version}, which computes another key for the same run"
        )

    def progress_text(self) -> str:
        """'board_values 124 of 439 chunks finished (28%)', one clause per chunked array."""
        return (
            "; ".join(
                f"{name} {done:,} of {total:,} chunks finished ({share(done, total)})"
                for name, (done, total) in self.progress.items()
            )
            or "no chunk finished"
        )

    def line(self) -> str:
        """One line: what it is, how far it got, how to resume or discard it."""
        if self.outdated:
            how = f"{self.outdated_text()}: resume it with that code"
        elif self.resume:
            how = f"resume it with `{self.resume}`"
        else:
            how = "rerun the run that started it"
        return (
            f"{self.key} is an unfinished build, not a stored artifact ({self.progress_text()}): "
            f"{how}, or discard it with `{self.discard}`"
        )

    def as_dict(self) -> dict[str, Any]:
        """Plain JSON-ready dict."""
        return {
            "key": self.key,
            "status": "partial",
            "progress": {name: list(pair) for name, pair in self.progress.items()},
            "run": self.run.run_id if self.run else None,
            "run_status": self.run.shown_status() if self.run else None,
            "resume": self.resume,
            "recipe": self.recipe,
            "outdated": self.outdated,
        }


def unfinished_build(
    store: ArtifactStore, key: str, version_of: Callable[[str], int | None] | None = None
) -> UnfinishedBuild | None:
    """`key`'s unfinished build, or None if it is committed or was never started.

    `version_of(stage)` gives this code's version of a stage (None if unknown), to tell a
    build an earlier version started."""
    if not store.unfinished(key):
        return None
    run = RunLedger(store).last_naming(key)
    recipe = store.build_recipe(key)
    current = version_of(str(recipe.get("stage"))) if recipe and version_of else None
    return UnfinishedBuild(key, store.build_progress(key), run, store.location, recipe, current)
