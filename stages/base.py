"""The stage contract: a name, a version, a frozen parameter model, named inputs, a run function."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any, ClassVar, Generic, TypeVar

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from gameforge.artifacts import Artifact, ArtifactWriter, done_chunks
from gameforge.stages.executor import Executor, InProcessExecutor
from gameforge.stages.progress import NullProgress, Progress, ProgressTask
from gameforge.stages.resources import Footprint

Batch = TypeVar("Batch")


class StageError(ValueError):
    """Bad use of a stage (unknown stage, bad parameter), phrased as one line for the user."""


# A seed: numba's random streams take it as an int64 and numpy's generators refuse a negative
# one, which a stage met only when it drew its first number.
MAX_SEED = 2**63 - 1
Seed = Annotated[int, Field(ge=0, le=MAX_SEED)]


class StageParams(BaseModel):
    """Base of every stage's parameters: frozen, validated, unknown names rejected."""

    # Floats are finite: an infinite time budget or a NaN rate failed only inside the stage.
    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)
    # Fields that change how a stage runs (chunk sizes, checkpoint interval, pruning groups)
    # but never what it writes: recorded in the lineage, left out of the artifact key.
    execution_only: ClassVar[frozenset[str]] = frozenset()
    # Fields added after artifacts were stored, left out of the key while a field is at its
    # default (that field: the fields it leaves out), so the older artifacts' keys stand.
    new_at_default: ClassVar[dict[str, tuple[str, ...]]] = {}

    def key_params(self) -> dict[str, Any]:
        """The parameters that define the artifact's content (they form its key)."""
        found = self.model_dump(mode="json", exclude=set(self.execution_only))
        for switch, names in self.new_at_default.items():
            if getattr(self, switch) == type(self).model_fields[switch].default:
                for name in names:
                    found.pop(name)
        return found

    def execution_params(self) -> dict[str, Any]:
        """The execution-only parameters of this run."""
        return self.model_dump(mode="json", include=set(self.execution_only))


def numbered(names: Iterable[str], base: str) -> list[str]:
    """The names `base.0`, `base.1`, ... among `names` (a many-input's inputs), in index order."""
    prefix = base + "."
    found = [n for n in names if n.startswith(prefix) and n[len(prefix) :].isdigit()]
    return sorted(found, key=lambda n: int(n[len(prefix) :]))


@dataclass(frozen=True)
class Nondeterminism:
    """Arrays of a stage that are not bit-reproducible, why, and how a recompute compares them:
    within rtol/atol, or (rtol None: wall-clock measurements) not at all."""

    reason: str
    arrays: tuple[str, ...] = ()  # () for every array
    rtol: float | None = None
    atol: float = 0.0

    def covers(self, array: str) -> bool:
        """True if `array` is one of the arrays this applies to."""
        return not self.arrays or array in self.arrays

    def as_dict(self) -> dict[str, Any]:
        """Plain dict for reports."""
        return {"reason": self.reason, "arrays": list(self.arrays), "rtol": self.rtol,
                "atol": self.atol}  # fmt: skip


P = TypeVar("P", bound="StageParams")
# Covariant: a helper taking `StageContext[StageParams]` takes any stage's context (read-only).
P_co = TypeVar("P_co", bound="StageParams", covariant=True)


@dataclass(frozen=True)
class StageContext(Generic[P_co]):
    """What a stage's run function gets: its parameters (of the stage's own model, so a run
    function typed `StageContext[CfrParams]` reads `ctx.params.iterations` checked), the opened
    inputs, the writer and an executor."""

    params: P_co
    inputs: dict[str, Artifact]
    writer: ArtifactWriter
    executor: Executor = field(default_factory=InProcessExecutor)
    progress: Progress = field(default_factory=NullProgress)
    log: Callable[[str], None] = print

    def numbered_inputs(self, base: str) -> list[Artifact]:
        """The artifacts given to many-input `base` (`base.0`, `base.1`, ...), in index order."""
        return [self.inputs[name] for name in numbered(self.inputs, base)]

    def run_chunks(
        self,
        fn: Callable[..., Any],
        array: str,
        n_chunks: int,
        args: Sequence[Any] = (),
        desc: str = "",
        weights: Sequence[int] | None = None,
    ) -> int:
        """Run ``fn(build, array, chunk_id, *args)`` for every chunk not yet finished.

        `fn` must be a module-level function (it may run in a Dask worker) that writes its whole
        chunk with `artifacts.write_chunk`. `weights` (one per chunk: its share of the work)
        make the progress bar's rate and ETA count work instead of chunks. Returns the number of
        chunks computed now.
        """
        todo, before = self._chunks_to_run(array, n_chunks, weights)
        items = [(self.writer.build, array, c, *args) for c in todo]
        work = None if weights is None else [weights[c] for c in todo]
        self.executor.map(
            fn, items, desc=desc or array, progress=self.progress, weights=work, done=before
        )
        self._chunks_ran(array, n_chunks, todo)
        return len(todo)

    def _chunks_to_run(
        self, array: str, n_chunks: int, weights: Sequence[int] | None
    ) -> tuple[list[int], int]:
        """The chunks of `array` to run now (those not yet finished) and the work already done
        (finished chunks, or their weights)."""
        done = done_chunks(self.writer.build, array)
        todo = [c for c in range(n_chunks) if c not in done]
        if done:
            self.log(f"resuming {array}: {len(done)} of {n_chunks} chunks already finished")
        return todo, len(done) if weights is None else sum(weights[c] for c in done)

    def _chunks_ran(self, array: str, n_chunks: int, ran: list[int]) -> None:
        """Called once the chunks `ran` of `array` are written (nothing to do here)."""

    def run_batches(
        self,
        prefix: str,
        total: int,
        size: int,
        run_batch: Callable[[int, int, ProgressTask], Batch],
        to_arrays: Callable[[Batch], dict[str, np.ndarray]],
        from_arrays: Callable[[dict[str, np.ndarray]], Batch],
        desc: str,
    ) -> list[Batch]:
        """Results of items [0, total) in batches of `size`, each checkpointed when done.

        Batch k covers items [k * size, min((k + 1) * size, total)) and is saved as checkpoint
        `{prefix}-{k}`, so a rerun after a kill loads the saved batches and runs only the rest.
        `run_batch(start, stop, bar)` may advance `bar` item by item; whatever it leaves is
        advanced when the batch ends.
        """
        size = max(size, 1)
        batches: list[Batch] = []
        while (saved := self.writer.load_checkpoint(f"{prefix}-{len(batches)}")) is not None:
            batches.append(from_arrays(saved))
        start = min(len(batches) * size, total)
        if batches:
            self.log(f"{desc}: resuming after {start} of {total} (saved batches)")
        bar = self.progress.start(desc, total, done=start)
        while start < total:
            stop = min(start + size, total)
            counted = _CountingTask(bar)
            batch = run_batch(start, stop, counted)
            self.writer.save_checkpoint(f"{prefix}-{len(batches)}", to_arrays(batch))
            batches.append(batch)
            bar.advance(stop - start - counted.done)
            start = stop
        bar.close()
        return batches


class _CountingTask:
    """A bar passed to one batch: counts what the batch advanced itself."""

    def __init__(self, bar: ProgressTask) -> None:
        self.bar, self.done = bar, 0

    def advance(self, n: int = 1) -> None:
        self.done += n
        self.bar.advance(n)

    def close(self) -> None:
        pass

    def note(self, text: str) -> None:
        self.bar.note(text)


@dataclass(frozen=True)
class Stage(Generic[P]):
    """A declared stage; `run(ctx)` writes arrays through ctx.writer and returns a summary."""

    name: str
    version: int
    params_model: type[P]
    run: Callable[[StageContext[P]], dict[str, Any]]
    # input name -> upstream stage name ("a|b": either stage is accepted)
    inputs: dict[str, str] = field(default_factory=dict)
    description: str = ""
    optional_inputs: frozenset[str] = frozenset()  # inputs a run may leave out
    # Inputs that take one or more artifacts, given as `name.0`, `name.1`, ... (a league's players)
    many_inputs: frozenset[str] = frozenset()
    # Called with the parameters and the opened inputs before any work; raises StageError with
    # the reason when the inputs cannot go together (e.g. built for another game).
    check_inputs: Callable[[P, dict[str, Artifact]], None] | None = None
    # Parameters that tell this stage's artifacts apart in `gameforge artifacts ls` (k, the
    # algorithm and iterations, a seed ...), shown beside the `game` parameter.
    label_params: tuple[str, ...] = ()
    # Memory peak and stored bytes from the parameters and the inputs' recorded parameters
    # (stages/resources.py); None: not estimated.
    footprint: Callable[[P, dict[str, dict[str, Any]]], Footprint] | None = None
    # None: the stage's output is bit-reproducible from its recipe (a recompute check compares
    # bit for bit); else why it is not, and the tolerance a recompute check allows.
    nondeterminism: Nondeterminism | None = None
    # Execution parameters under which a rebuild from the recipe repeats a stored build, from
    # its recorded metadata (a run that a wall-time budget stopped: the iteration it stopped
    # at). Recompute checks and repairs apply them.
    replay: Callable[[dict[str, Any]], dict[str, Any]] | None = None

    def replay_of(self, meta: dict[str, Any] | None) -> dict[str, Any]:
        """The execution parameters that make a rebuild repeat the build `meta` records."""
        if self.replay is None or not meta:
            return {}
        return self.replay(meta)

    def rebuild_values(self, meta: dict[str, Any]) -> dict[str, Any]:
        """The parameter values that rebuild the artifact `meta` records: its content
        parameters that are fields here (computed ones, a game's digest, are derived), its
        execution parameters, and its replay."""
        fields = self.params_model.model_fields
        values = {k: v for k, v in meta["params"].items() if k in fields}
        values.update(meta.get("execution") or {})
        values.update(self.replay_of(meta))
        return values

    def declared(self, input_name: str) -> str | None:
        """The declared input a given input name fills (`players.3` fills `players`), or None."""
        base, dot, index = input_name.partition(".")
        if dot:
            return base if base in self.many_inputs and index.isdigit() else None
        return (
            input_name if input_name in self.inputs and input_name not in self.many_inputs else None
        )

    def accepts(self, input_name: str, upstream_stage: str) -> bool:
        """True if `upstream_stage` may feed input `input_name`."""
        declared = self.declared(input_name)
        return declared is not None and upstream_stage in self.inputs[declared].split("|")

    def labels(self, params: dict[str, Any]) -> dict[str, Any]:
        """The label parameters' values among an artifact's recorded parameters."""
        return {name: params[name] for name in self.label_params if name in params}

    def make_params(self, values: dict[str, Any] | None = None) -> P:
        """Validate parameter values; a bad one raises StageError listing the valid names."""
        values = dict(values or {})
        valid = sorted(self.params_model.model_fields)
        unknown = sorted(set(values) - set(valid))
        if unknown:
            raise StageError(
                f"stage {self.name}: unknown parameter {', '.join(unknown)} "
                f"(valid: {', '.join(valid)})"
            )
        try:
            return self.params_model(**values)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            message = first["msg"].removeprefix("Value error, ")
            raise StageError(f"stage {self.name}: parameter {where}: {message}") from None
