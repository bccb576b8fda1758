"""Run one stage against the store: cache hit, resume, or compute; no Prefect here."""

from __future__ import annotations

import contextlib
import ctypes
import subprocess
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, TypedDict, Unpack

from gameforge.artifacts import Artifact, ArtifactStore, artifact_key
from gameforge.artifacts.runs import older_build_note
from gameforge.artifacts.store import CorruptedArtifact, StoreError, gameforge_version
from gameforge.stages.base import Stage, StageContext, StageError, StageParams
from gameforge.stages.executor import Executor, InProcessExecutor
from gameforge.stages.progress import LabelledProgress, NullProgress, Progress
from gameforge.stages.registry import get_stage


@dataclass(frozen=True)
class FailedAt:
    """Where a stage's exception arose: the flow node, the key, and corrupted inputs found.

    `run_stage` attaches it to the exception (`failed_at(exc)`) and re-raises the exception
    itself, so callers still catch what the stage raised."""

    label: str
    key: str
    corrupted: dict[str, str]

    def line(self, exc: BaseException) -> str:
        """The failure as one line: node, key, cause, and any corrupted input."""
        text = str(exc).strip().splitlines()
        reason = f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__
        if isinstance(exc, MemoryError):
            reason += " (out of memory: `gameforge run ... --plan` shows what each stage needs)"
        parts = [] if isinstance(exc, CorruptedArtifact) else [reason]
        for input_key, problem in self.corrupted.items():
            parts.append(f"its input {input_key} is corrupted ({problem})")
        return f"stage {self.label} ({self.key}) failed: " + "; ".join(parts)


_FAILED_AT = "gameforge_failed_at"


def failed_at(exc: BaseException) -> FailedAt | None:
    """The stage an exception came out of, if it came out of `run_stage`."""
    found = getattr(exc, _FAILED_AT, None)
    return found if isinstance(found, FailedAt) else None


def _status_bytes(field: str) -> int | None:
    """A `/proc/self/status` memory field (VmRSS, VmHWM) in bytes; None off Linux."""
    try:
        with open("/proc/self/status", encoding="ascii") as handle:
            for line in handle:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def _return_freed_memory() -> None:
    """Give memory the allocator holds but no object uses back to the kernel (glibc only), so a
    stage's measured peak includes what it allocates again rather than reuses unseen."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)


def reset_peak_rss() -> int | None:
    """Restart the kernel's peak-RSS record (VmHWM) at the current RSS; returns that RSS."""
    _return_freed_memory()
    try:
        with open("/proc/self/clear_refs", "w", encoding="ascii") as handle:
            handle.write("5")
    except OSError:
        return None
    return _status_bytes("VmRSS")


def peak_rss() -> int | None:
    """The process's peak resident memory since the last `reset_peak_rss`."""
    return _status_bytes("VmHWM")


def _reads_store(exc: BaseException) -> bool:
    """True if the failure happened while zarr or a codec was decoding stored data."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        for frame, _line in traceback.walk_tb(exc.__traceback__):
            module = frame.f_globals.get("__name__", "")
            if module.startswith(("zarr", "numcodecs")):
                return True
        if type(exc).__module__.startswith(("zarr", "numcodecs")):
            return True
        exc = exc.__cause__ or exc.__context__  # type: ignore[assignment]
    return False


def reproducible_checksums(meta: dict[str, Any] | None) -> dict[str, str] | None:
    """The array checksums recorded in an artifact's metadata (None where there is none), less
    the arrays its stage declares wall-clock measurements (`cfr`'s curve_seconds): a rebuild
    always changes those, and nothing downstream is computed from them."""
    if meta is None:
        return None
    try:
        loose = get_stage(str(meta.get("stage"))).nondeterminism
    except StageError:
        loose = None
    return {
        name: info.get("checksum", "")
        for name, info in meta.get("arrays", {}).items()
        if loose is None or loose.rtol is not None or not loose.covers(name)
    }


def corrupted_inputs(store: ArtifactStore, keys: list[str]) -> dict[str, str]:
    """The artifacts among `keys` whose checksums no longer match: key -> first problem."""
    report = store.verify(keys)
    return {key: problems[0] for key, problems in report.items() if problems}


@dataclass(frozen=True)
class StageRun:
    """The outcome of asking for a stage's artifact."""

    stage: str
    key: str
    cached: bool
    seconds: float


@cache
def code_version() -> str:
    """The package version plus the git commit of the checkout, when there is one."""
    base = gameforge_version()
    try:
        root = Path(__file__).resolve().parent.parent
        sha = subprocess.run(
            ["git", "-C", str(root), "describe", "--always", "--dirty"],
            capture_output=True,
            text=True,
            timeout=5,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        sha = ""
    return f"{base}+{sha}" if sha else base


def stage_key(name: str, params: StageParams, inputs: dict[str, str]) -> str:
    """The artifact key a stage run with these parameters and inputs produces."""
    stage = get_stage(name)
    return artifact_key(stage.name, stage.version, params.key_params(), inputs)


def _check_input_names(stage: Stage, inputs: dict[str, str]) -> None:
    """Refuse inputs the stage does not declare, and declared ones left out (before the store
    is opened, so a bad call fails the same wherever the store is)."""
    unknown = sorted(n for n in inputs if stage.declared(n) is None)
    if unknown:
        raise StageError(f"stage {stage.name}: unknown inputs {', '.join(unknown)}")
    given = {stage.declared(n) for n in inputs}
    missing = sorted(set(stage.inputs) - stage.optional_inputs - given)
    if missing:
        raise StageError(f"stage {stage.name}: missing inputs {', '.join(missing)}")


def _open_inputs(stage: Stage, inputs: dict[str, str], store: ArtifactStore) -> dict[str, Artifact]:
    """The given inputs opened, after checking they are trusted and from the stages the stage
    accepts."""
    name = stage.name
    opened = {input_name: store.open(key) for input_name, key in inputs.items()}
    for artifact in opened.values():
        store.require_trusted(artifact.key, artifact.meta)
    for input_name, artifact in opened.items():
        if not stage.accepts(input_name, artifact.stage):
            raise StageError(
                f"stage {name}: input {input_name} must come from "
                f"{stage.inputs[stage.declared(input_name) or input_name]}, "
                f"got {artifact.stage} ({artifact.key})"
            )
    return opened


class RunOptions(TypedDict, total=False):
    """How `run_stage` runs a stage (every one optional)."""

    store: ArtifactStore | None  # default: the default store
    executor: Executor | None  # for chunk work; default: in this process
    force: bool  # build anew even if the key is stored
    progress: Progress | None  # where bars go; default: nowhere
    log: Callable[[str], None]  # where log lines go; default: print
    label: str | None  # the flow node's name in log lines and bars; default: the stage's


def run_stage(
    name: str,
    params: StageParams | dict[str, Any] | None,
    inputs: dict[str, str] | None = None,
    **options: Unpack[RunOptions],
) -> StageRun:
    """Produce (or reuse) the artifact of stage `name`: its key, and whether it was cached."""
    unknown = sorted(set(options) - set(RunOptions.__annotations__))
    if unknown:  # what a signature would refuse, since a caller's typo must not go unnoticed
        raise TypeError(f"run_stage() got unexpected options {', '.join(unknown)}")
    stage = get_stage(name)
    shown = options.get("label") or name
    log = options.get("log", print)
    progress = options.get("progress")
    force = options.get("force", False)
    checked = params if isinstance(params, StageParams) else stage.make_params(params)
    given = dict(inputs or {})
    _check_input_names(stage, given)
    store = options.get("store") or ArtifactStore()
    opened = _open_inputs(stage, given, store)
    inputs = {input_name: artifact.key for input_name, artifact in opened.items()}  # full keys
    if stage.check_inputs is not None:
        try:
            stage.check_inputs(checked, opened)
        except StageError as exc:
            raise StageError(f"stage {name}: {exc}") from None
    t0 = time.monotonic()
    key = stage_key(name, checked, inputs)
    if store.exists(key) and not force:
        store.require_trusted(key)  # an import is no cache hit until trusted
        log(f"{shown}: cache hit {key}, skipped")
        return StageRun(name, key, True, time.monotonic() - t0)

    for artifact in opened.values():
        try:  # a chunk lost since its commit would be read as fill values
            artifact.require_complete()
        except CorruptedArtifact as exc:
            setattr(exc, _FAILED_AT, FailedAt(shown, key, {exc.key: exc.problem}))
            raise

    def waiting(key: str, holder: str) -> None:
        log(f"{shown}: {key} is being built by {holder}; waiting to reuse it")

    with store.building(
        stage.name,
        stage.version,
        checked.key_params(),
        inputs,
        extra_meta={
            "code_version": code_version(),
            "description": stage.description,
            "label_params": list(stage.label_params),
            "execution": checked.execution_params(),
            # what was read: `verify` and `--repair` tell a dependent of changed content by it
            "input_checksums": {
                name: reproducible_checksums(artifact.meta) for name, artifact in opened.items()
            },
        },
        force=force,
        on_wait=waiting,
    ) as writer:
        if writer is None:
            log(f"{shown}: {key} was built by another process, reused")
            return StageRun(name, key, True, time.monotonic() - t0)
        log(f"{shown}: computing {key}" + (" (resuming)" if writer.resumed else ""))
        if not writer.resumed:
            for version, older in store.older_builds(
                stage.name, stage.version, checked.key_params(), inputs
            ):
                log(f"{shown}: {older_build_note(store, stage.name, version, older)}")
        ctx = StageContext(
            params=checked,
            inputs=opened,
            writer=writer,
            executor=options.get("executor") or InProcessExecutor(),
            progress=LabelledProgress(progress, shown) if progress else NullProgress(),
            log=log,
        )
        rss_before = reset_peak_rss()
        try:
            summary = stage.run(ctx)
        except CorruptedArtifact as exc:  # an input failed a chunk checksum as it was read
            setattr(exc, _FAILED_AT, FailedAt(shown, key, {exc.key: exc.problem}))
            raise
        except (StageError, StoreError):
            raise  # already one line for the user
        except Exception as exc:
            if failed_at(exc) is None:
                suspects = [a.key for a in opened.values()] if _reads_store(exc) else []
                where = FailedAt(shown, key, corrupted_inputs(store, suspects))
                setattr(exc, _FAILED_AT, where)
                exc.add_note(f"(in stage {shown}, building {key})")
            raise
        peak = peak_rss()
        if rss_before is not None and peak is not None:
            # process-wide: under --parallel-nodes it covers the stages that ran alongside
            writer.meta["memory"] = {"rss_before_bytes": rss_before, "peak_rss_bytes": peak}
        writer.commit(summary)
    seconds = time.monotonic() - t0
    log(f"{shown}: committed {key} in {seconds:.1f} s")
    return StageRun(name, key, False, seconds)
