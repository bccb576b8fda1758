"""Recompute checks: rebuild a stored artifact from its recorded recipe and compare, bit for bit.

The recipe is what the artifact's lineage records: its stage (at the same version), content and
execution parameters, and input artifacts. The rebuild goes to a scratch store of its own, so
the store is never written (the caller records a pass). Every chunked pass over a stored array
computes a seeded sample of its chunks, compares them as they are made, and takes the other
chunks from the stored artifact, so that the stage carries on; everything else the stage
writes is recomputed and compared whole. With `whole`, every chunk is recomputed. A chunked pass
over scratch the artifact does not keep runs in full. Arrays a stage declares not
bit-reproducible (`nondeterminism`) are compared within its tolerance, or not at all. A build
that a wall-time budget stopped is rebuilt to where it stopped (the stage's `replay`).
"""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gameforge.artifacts import Artifact, ArtifactStore, ArtifactWriter
from gameforge.stages.base import Nondeterminism, StageContext, StageError, StageParams
from gameforge.stages.executor import Executor, InProcessExecutor
from gameforge.stages.progress import LabelledProgress, NullProgress, Progress
from gameforge.stages.registry import get_stage
from gameforge.stages.runner import code_version

DEFAULT_CHUNKS = 3


@dataclass(frozen=True)
class Mismatch:
    """The first difference found in one array."""

    array: str
    chunk: int
    index: tuple[int, ...]
    stored: Any
    recomputed: Any

    def line(self) -> str:
        """One line naming the array, the chunk and the first differing index."""
        where = ", ".join(str(i) for i in self.index)
        return (
            f"{self.array}: chunk {self.chunk} differs first at [{where}]: "
            f"stored {self.stored!r}, recomputed {self.recomputed!r}"
        )


@dataclass
class CheckReport:
    """What a recompute check compared and found."""

    key: str
    stage: str
    mode: str  # "sampled chunks" or "whole artifact"
    seed: int | None
    chunks: dict[str, list[int]] = field(default_factory=dict)  # array -> chunk ids compared
    arrays: list[str] = field(default_factory=list)  # arrays compared whole
    mismatches: list[Mismatch] = field(default_factory=list)
    tolerance: Nondeterminism | None = None
    skipped: list[str] = field(default_factory=list)  # declared not reproducible: not compared
    seconds: float = 0.0
    note: str = ""
    code_version: str = ""  # the code that recomputed it (this one)

    @property
    def passed(self) -> bool:
        """True if every compared value agreed (within the stage's tolerance, if it has one)."""
        return not self.mismatches

    def as_dict(self) -> dict[str, Any]:
        """Plain dict for the trust record and JSON output."""
        return {
            "mode": self.mode,
            "seed": self.seed,
            "chunks": self.chunks,
            "arrays": self.arrays,
            "skipped": self.skipped,
            "seconds": round(self.seconds, 2),
            "tolerance": None if self.tolerance is None else self.tolerance.as_dict(),
            "code_version": self.code_version,
        }


@dataclass(frozen=True)
class _SamplingContext(StageContext[StageParams]):
    """A stage context whose chunked passes over stored arrays compute a seeded sample of the
    chunks, compare them at once, and take the other chunks from the stored artifact, so the
    stage carries on to its later passes and its whole-array work (see the module)."""

    stored: Artifact | None = None
    report: CheckReport | None = None
    sample: int = DEFAULT_CHUNKS
    seed: int = 0

    def _chunked_alike(self, array: str, n_chunks: int) -> list[str]:
        """`array` and the other stored arrays, not yet compared, with as many row chunks and
        the same chunks as their scratch copies."""
        assert self.stored is not None and self.report is not None
        recorded = self.stored.meta.get("arrays", {})
        built = set(self.writer.array_names())
        alike = [array]
        for name, info in sorted(recorded.items()):
            if name == array or name in self.report.chunks or name not in built:
                continue
            shape, chunks = info["shape"], info["chunks"]
            same_count = bool(shape) and -(-int(shape[0]) // int(chunks[0])) == n_chunks
            if same_count and list(self.writer[name].chunks) == list(chunks):
                alike.append(name)
        return alike

    def _samples(self, array: str) -> bool:
        """Whether this check samples `array`'s chunks: a stored artifact recorded it chunked
        as its scratch copy is (else it is scratch work, run whole)."""
        if self.stored is None or self.report is None:
            return False
        recorded = self.stored.meta.get("arrays", {}).get(array)
        return recorded is not None and list(recorded["chunks"]) == list(self.writer[array].chunks)

    def _chunks_to_run(
        self, array: str, n_chunks: int, weights: Sequence[int] | None
    ) -> tuple[list[int], int]:
        """A seeded sample of the chunks, to compute and compare (see `_chunks_ran`)."""
        if not self._samples(array):
            return super()._chunks_to_run(array, n_chunks, weights)
        assert self.report is not None
        rng = np.random.default_rng(self.seed + len(self.report.chunks))
        ids = sorted(int(c) for c in rng.choice(n_chunks, min(self.sample, n_chunks), False))
        return ids, 0

    def _chunks_ran(self, array: str, n_chunks: int, ran: list[int]) -> None:
        """Compare the sampled chunks; copy the rest from the stored array."""
        if not self._samples(array):
            return
        assert self.stored is not None and self.report is not None
        # A chunk task may write rows of other arrays too (one chunk each, as Hearts' logs do):
        # every stored array chunked the same way along axis 0 is treated alike.
        for name in self._chunked_alike(array, n_chunks):
            stored, recomputed = self.stored[name], self.writer[name]
            _compare_rows(self.report, name, stored, recomputed, ran)
            step = int(recomputed.chunks[0])
            for chunk in sorted(set(range(n_chunks)) - set(ran)):
                rows = slice(chunk * step, (chunk + 1) * step)
                recomputed[rows] = stored[rows]
            self.report.chunks[name] = ran


def _first_difference(
    stored: np.ndarray, recomputed: np.ndarray, tolerance: Nondeterminism | None
) -> tuple[int, ...] | None:
    """Index of the first element that differs (NaN equals NaN), or None; same shapes."""
    if np.issubdtype(stored.dtype, np.floating):
        both_nan = np.isnan(stored) & np.isnan(recomputed)
        if tolerance is not None and tolerance.rtol is not None:
            close = np.isclose(stored, recomputed, rtol=tolerance.rtol, atol=tolerance.atol)
        else:
            close = stored == recomputed
        same = close | both_nan
    else:
        same = stored == recomputed
    if bool(np.all(same)):
        return None
    flat = int(np.flatnonzero(~np.asarray(same).reshape(-1))[0])
    return tuple(int(i) for i in np.unravel_index(flat, stored.shape))


def _compare_rows(
    report: CheckReport, name: str, stored: Any, recomputed: Any, chunk_ids: Sequence[int] | None
) -> None:
    """Compare chunk rows (axis 0) of one array; record its first mismatch, if any. An array
    the stage declares non-reproducible is compared within its tolerance, or not at all."""
    tolerance = report.tolerance
    if tolerance is not None and tolerance.covers(name):
        if tolerance.rtol is None:
            report.skipped.append(name)
            return
    else:
        tolerance = None
    if tuple(stored.shape) != tuple(recomputed.shape):
        shapes = (f"shape {tuple(stored.shape)}", f"shape {tuple(recomputed.shape)}")
        report.mismatches.append(Mismatch(name, 0, (), *shapes))
        return
    step = int(stored.chunks[0]) if stored.ndim else 1
    n_chunks = -(-int(stored.shape[0]) // step) if stored.ndim else 1
    for chunk in chunk_ids if chunk_ids is not None else range(n_chunks):
        rows = slice(chunk * step, (chunk + 1) * step) if stored.ndim else ...
        a, b = np.asarray(stored[rows]), np.asarray(recomputed[rows])
        local = _first_difference(a, b, tolerance)
        if local is None:
            continue
        index = (local[0] + chunk * step, *local[1:]) if stored.ndim else local
        report.mismatches.append(Mismatch(name, chunk, index, _plain(a[local]), _plain(b[local])))
        return


def _plain(value: Any) -> Any:
    return value.item() if hasattr(value, "item") else value


def recorded_code_version(store: ArtifactStore, key: str, meta: dict[str, Any]) -> str | None:
    """The code version this store recorded for `key`, never an archive's claim; None if none."""
    # Built here: its writer's. An import's `code_version` is whatever its archive says (a
    # forger writes this code's, and `verify --recompute` would pass it over as built by this
    # code), so only the code that recomputed it here counts, from the store's trust record.
    if (meta.get("provenance") or {}).get("kind") != "imported":
        return meta.get("code_version")
    record = store.trust_record(key) or {}
    return record.get("code_version") if record.get("how") == "recomputed" else None


def recompute_check(
    store: ArtifactStore,
    key: str,
    chunks: int = DEFAULT_CHUNKS,
    whole: bool = False,
    seed: int | None = None,
    executor: Executor | None = None,
    progress: Progress | None = None,
    log: Callable[[str], None] = print,
) -> CheckReport:
    """Rebuild `key` from its recorded recipe in a scratch store and compare (see the module)."""
    t0 = time.monotonic()
    artifact = store.open(key)
    stage = get_stage(artifact.stage)
    if int(artifact.meta.get("version", -1)) != stage.version:
        raise StageError(
            f"{artifact.key} was built by {stage.name} version {artifact.meta.get('version')}; "
            f"this code has version {stage.version}, which cannot rebuild it"
        )
    opened = {name: store.open(k) for name, k in artifact.inputs.items()}
    for input_artifact in opened.values():
        # check inputs first: trust runs downstream
        store.require_trusted(input_artifact.key, input_artifact.meta)
    fields = stage.params_model.model_fields
    recorded = stage.rebuild_values(artifact.meta)
    params = stage.make_params({k: v for k, v in recorded.items() if k in fields})
    if params.key_params() != artifact.params:
        raise StageError(
            f"{artifact.key}: its recorded parameters no longer give the same recipe here "
            "(a game definition changed?), so it cannot be recomputed"
        )
    if seed is None:
        seed = int(np.random.default_rng().integers(0, 2**31))
    sampled = not whole
    report = CheckReport(
        artifact.key,
        stage.name,
        "sampled chunks" if sampled else "whole artifact",
        seed if sampled else None,
        tolerance=stage.nondeterminism,
        code_version=code_version(),
    )
    scratch_root = tempfile.mkdtemp(prefix="gameforge-check-")
    try:
        scratch = ArtifactStore(scratch_root)
        writer = ArtifactWriter(scratch, artifact.key, dict(artifact.meta))
        ctx = _SamplingContext(
            params=params,
            inputs=opened,
            writer=writer,
            executor=executor or InProcessExecutor(),
            progress=LabelledProgress(progress, "check") if progress else NullProgress(),
            log=log,
            stored=artifact if sampled else None,
            report=report,
            sample=chunks,
            seed=seed,
        )
        stage.run(ctx)
        if sampled and not report.chunks:
            report.mode, report.seed = "whole artifact", None
            report.note = "no chunked pass over a stored array: rebuilt whole"
        rebuilt = set(writer.array_names())
        for name in sorted(artifact.meta.get("arrays", {})):
            if name in report.chunks:
                continue  # its sampled chunks were compared as they were computed
            report.arrays.append(name)
            if name not in rebuilt:
                report.mismatches.append(Mismatch(name, 0, (), "present", "missing"))
                continue
            _compare_rows(report, name, artifact[name], writer[name], None)
    finally:
        shutil.rmtree(scratch_root, ignore_errors=True)
    report.seconds = time.monotonic() - t0
    return report
