"""Two small chunked stages for testing the store and runner without poker kernels.

Run as a script (`python tests/toy_stages.py STORE [DELAY]`) it builds `toy-squares` in STORE,
sleeping DELAY seconds per chunk, so tests can kill it mid-way or race two of them.
"""

from __future__ import annotations

import sys
import time
from math import ceil
from pathlib import Path
from typing import ClassVar

import numpy as np
from pydantic import Field

from gameforge.artifacts import Build, write_chunk
from gameforge.stages.base import Stage, StageContext, StageParams
from gameforge.stages.registry import register

N_CHUNKS = 40

# `gameforge` with flow `toy` (these stages) added, as a command for tests to start
TOY_CLI = [sys.executable, str(Path(__file__).with_name("toy_flow_cli.py"))]


class SquaresParams(StageParams):
    """Size of the output and its chunking."""

    n: int = Field(default=4000, ge=1)
    chunk: int = Field(default=100, ge=1)
    delay: float = 0.0
    fail_chunk: int = -1  # a chunk task that raises MemoryError (-1: none), to test failures
    execution_only: ClassVar[frozenset[str]] = frozenset({"delay", "fail_chunk"})


def squares_chunk(
    build: Build, array: str, chunk_id: int, n: int, chunk: int, delay: float, fail: int = -1
) -> None:
    """Chunk task: squares of a slice of 0..n-1."""
    time.sleep(delay)
    if chunk_id == fail:
        raise MemoryError(f"chunk {chunk_id} could not allocate")
    start = chunk_id * chunk
    values = np.arange(start, min(start + chunk, n), dtype=np.int64)
    write_chunk(build, array, chunk_id, values * values)


def run_squares(ctx: StageContext[SquaresParams]) -> dict:
    """Write i*i for i < n, chunk by chunk."""
    p = ctx.params
    ctx.writer.array("squares", (p.n,), np.int64, chunks=(p.chunk,))
    computed = ctx.run_chunks(
        squares_chunk, "squares", ceil(p.n / p.chunk), args=(p.n, p.chunk, p.delay, p.fail_chunk)
    )
    return {"chunks_computed_now": computed}


class DoubleParams(StageParams):
    """No parameters."""


def run_double(ctx: StageContext[DoubleParams]) -> dict:
    """Twice the upstream squares."""
    source = ctx.inputs["squares"]["squares"]
    out = ctx.writer.array("doubled", source.shape, np.int64, chunks=source.chunks)
    out[:] = 2 * np.asarray(source[:])
    return {}


SQUARES = register(Stage("toy-squares", 1, SquaresParams, run_squares))
DOUBLE = register(
    Stage("toy-double", 1, DoubleParams, run_double, inputs={"squares": "toy-squares"})
)


if __name__ == "__main__":
    from gameforge.artifacts import ArtifactStore
    from gameforge.stages.runner import run_stage

    store_root, delay = sys.argv[1], float(sys.argv[2]) if len(sys.argv) > 2 else 0.0
    result = run_stage("toy-squares", {"delay": delay}, store=ArtifactStore(store_root), log=print)
    print("RESULT", result.key, "cached" if result.cached else "computed", flush=True)
