"""What would fail late is refused early, in one line: seeds below 0, infinite or NaN floats, a
count whose memory the resource estimate must show, a no-limit game given to a stage that builds
the limit betting tree (and the reverse), a no-limit game whose raise grid no kernel should walk,
and a full, read-only or forbidden store."""

from __future__ import annotations

import errno
import math
import os
import subprocess
import sys
import time
import typing
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from pydantic import ValidationError
from typer.testing import CliRunner

from gameforge.artifacts import ArtifactStore
from gameforge.engines.nlhe.encoding import THERMO_CELLS
from gameforge.engines.nlhe.game import (
    ACTOR,
    CALL,
    EXTERNAL,
    FOLD,
    RAISE,
    RANDOM,
    SPENT,
    legal,
    new_batch,
    raise_grid_size,
    raise_grid_value,
    rules_of,
)
from gameforge.engines.nlhe.net import MAX_CANDIDATES, expand_candidates
from gameforge.engines.poker.acpc import MAX_RAISE_GRID, GameDefError, parse_game
from gameforge.engines.poker.shipped_games import load_game
from gameforge.flows.cli import app
from gameforge.flows.runlog import storage_error, storage_line
from gameforge.stages.base import MAX_SEED
from gameforge.stages.registry import all_stages, get_stage

NOLIMIT = "holdem.nolimit.2p.reverse_blinds"  # stacks 20,000, blinds 100/50: 400 raise sizes


def refused(args: list[str], store: Path) -> str:
    """Run the CLI in this process; it must refuse with exit status 2 and one `error:` line,
    before it creates the store. Returns that line."""
    result = CliRunner().invoke(app, [*args, "--store", str(store)])
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert result.exit_code == 2, result.output
    assert len(lines) == 1 and lines[0].startswith("error: "), result.output
    assert not store.exists()
    return lines[0]


def field_errors(model: type, **values: object) -> set[str]:
    """The fields `values` make invalid in `model`."""
    try:
        model(**values)
    except ValidationError as exc:
        return {str(error["loc"][0]) for error in exc.errors() if error["loc"]}
    return set()


# -- seeds, floats, counts ---------------------------------------------------------------------


def test_every_seed_is_refused_below_0_and_above_int64():
    seeded = [s for s in all_stages().values() if "seed" in s.params_model.model_fields]
    assert len(seeded) >= 10
    for stage in seeded:
        for bad in (-1, MAX_SEED + 1):
            assert "seed" in field_errors(stage.params_model, seed=bad), (stage.name, bad)
        assert "seed" not in field_errors(stage.params_model, seed=MAX_SEED), stage.name


def test_every_float_parameter_is_refused_infinite_or_nan():
    checked = 0
    for stage in all_stages().values():
        for name, info in stage.params_model.model_fields.items():
            annotation = info.annotation
            if annotation is not float and float not in typing.get_args(annotation):
                continue
            for bad in (math.inf, -math.inf, math.nan):
                assert name in field_errors(stage.params_model, **{name: bad}), (stage.name, name)
            checked += 1
    assert checked >= 20


def test_a_bad_seed_or_time_is_refused_in_one_line_before_the_store_is_made(tmp_path):
    line = refused(["run", "lhe-abstraction", "--preset", "tiny", "--set", "hsd-buckets.seed=-1"],
                   tmp_path / "a")  # fmt: skip
    assert "stage hsd-buckets: parameter seed" in line
    line = refused(["run", "solve-lossless", "--preset", "tiny", "--set", "cfr.seconds=inf"],
                   tmp_path / "b")  # fmt: skip
    assert "stage cfr: parameter seconds" in line and "finite" in line


def test_cfr_evaluations_are_counted_in_the_memory_estimate(tmp_path):
    stage = get_stage("cfr")
    assert stage.footprint is not None
    base = {"game": "kuhn.limit.2p", "algorithm": "cfr+", "iterations": 1000}
    small = stage.footprint(stage.make_params({**base, "evaluations": 8}), {})
    huge = stage.footprint(stage.make_params({**base, "evaluations": 2_000_000_000}), {})
    # _eval_points holds two float64 arrays of that length at once
    assert huge.memory - small.memory >= 2 * 8 * (2_000_000_000 - 8)
    assert huge.largest(1)[0][0] == "curve points"
    result = CliRunner().invoke(
        app,
        ["run", "solve-lossless", "--preset", "tiny", "--set", "cfr.evaluations=2000000000",
         "--plan", "--store", str(tmp_path / "s")],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "curve points 29.8 GB" in result.output


# -- games -------------------------------------------------------------------------------------


@pytest.mark.parametrize("flow", ["solve-lossless", "lhe-solve"])
def test_a_no_limit_game_is_refused_by_the_limit_solve_in_one_line(tmp_path, flow):
    line = refused(["run", flow, "--preset", "tiny", "--set", "game=holdem.nolimit.2p.20bb"],
                   tmp_path / "s")  # fmt: skip
    assert "holdem.nolimit.2p.20bb is a no-limit game" in line
    assert "two-player limit games" in line


def test_a_limit_game_is_refused_by_the_no_limit_stages_in_one_line(tmp_path):
    line = refused(["run", "nlhe-cnn", "--preset", "tiny", "--set", "game=leduc.limit.2p"],
                   tmp_path / "s")  # fmt: skip
    assert "needs a heads-up no-limit game" in line


def deep_game(stack: int) -> str:
    """The reverse-blinds no-limit game's text with both stacks set to `stack`."""
    return load_game(NOLIMIT).to_text().replace("stack = 20000 20000", f"stack = {stack} {stack}")


def test_a_raise_grid_over_the_cap_is_refused_when_the_game_is_read(tmp_path):
    small_blind = 50
    at_cap = parse_game(deep_game(MAX_RAISE_GRID * small_blind), "deep")
    assert max(at_cap.stack) == MAX_RAISE_GRID * small_blind
    with pytest.raises(GameDefError, match="over gameforge's limit of 100,000") as exc:
        parse_game(deep_game((MAX_RAISE_GRID + 1) * small_blind), "deeper")
    assert "\n" not in str(exc.value)
    path = tmp_path / "trillion.game"
    path.write_text(deep_game(10**12))
    line = refused(["run", "nlhe-cnn", "--preset", "tiny", "--set", f"game={path}"],
                   tmp_path / "s")  # fmt: skip
    assert "20,000,000,000 raise sizes a decision" in line and "100,000" in line


def reference_candidates(state, tables, stack, small_blind) -> list[tuple[int, int, int, int]]:
    """expand_candidates as first written: the whole raise grid walked, in Python."""
    out = []
    for j, t in enumerate(tables):
        spent = state[t, SPENT + state[t, ACTOR]]
        can_fold, call_to, can_raise, lo, hi = legal(state, t, stack)
        if can_fold:
            out.append((j, FOLD, 0, 0))
        out.append((j, CALL, call_to, call_to - spent))
        if can_raise:
            last = -1
            for g in range(raise_grid_size.py_func(lo, hi, small_blind)):
                to = raise_grid_value.py_func(lo, hi, small_blind, g)
                count = min(max(to - spent, 0) // small_blind, THERMO_CELLS)
                if count != last:
                    last = count
                    out.append((j, RAISE, to, to - spent))
    return out


def kernel_candidates(batch, tables) -> list[tuple[int, int, int, int]]:
    """expand_candidates' rows for the listed tables."""
    r = batch.rules
    cap = len(tables) * MAX_CANDIDATES
    row, kind, raise_to, added = (np.empty(cap, np.int64) for _ in range(4))
    m = expand_candidates(
        batch.state, tables, r.stack, r.small_blind, r.small_blind, row, kind, raise_to, added
    )
    return list(zip(row[:m].tolist(), kind[:m].tolist(), raise_to[:m].tolist(),
                    added[:m].tolist(), strict=True))  # fmt: skip


@pytest.mark.parametrize("stack", [20_000, 1_000_000])
def test_the_candidate_walk_stops_where_sizes_encode_alike_with_the_same_candidates(stack):
    rules = rules_of(parse_game(deep_game(stack), "deep"))
    batch = new_batch(rules, 16, seed=7, first_deal=0, kinds=(EXTERNAL, RANDOM))
    rng = np.random.default_rng(3)
    decisions = 0
    while batch.advance():
        tables = batch.waiting(0)
        got = kernel_candidates(batch, tables)
        assert got == reference_candidates(batch.state, tables, rules.stack, rules.small_blind)
        decisions += len(tables)
        picks = [rng.choice([c for c in got if c[0] == j]) for j in range(len(tables))]
        batch.apply(tables, np.array([p[1] for p in picks]), np.array([p[2] for p in picks]))
    assert decisions >= 16


def test_the_candidate_walk_returns_at_once_whatever_the_stacks():
    # a game over the cap, built past the reader: the walk still ends after ~53 sizes a table
    game = replace(load_game(NOLIMIT), stack=(10**12, 10**12))
    batch = new_batch(rules_of(game), 64, seed=1, first_deal=0, kinds=(EXTERNAL, EXTERNAL))
    tables = np.arange(128)
    started = time.monotonic()
    got = kernel_candidates(batch, tables)
    assert time.monotonic() - started < 5.0
    assert len(got) <= len(tables) * MAX_CANDIDATES


# -- a full or unwritable store ----------------------------------------------------------------


def test_storage_errors_are_found_in_a_cause_chain_and_said_in_one_line():
    full = OSError(errno.ENOSPC, "No space left on device")
    try:
        try:
            raise full
        except OSError as exc:
            raise RuntimeError("the stage's wrapper") from exc
    except RuntimeError as wrapped:
        assert storage_error(wrapped) is full
    assert storage_error(OSError(errno.ECONNREFUSED, "refused")) is None
    assert storage_error(ValueError("no")) is None
    line = storage_line(full, "/data/store")
    assert line.startswith("No space left on device: /data/store; free space, then run")
    denied = PermissionError(errno.EACCES, "Permission denied", "/data/store/runs")
    assert storage_line(denied, started=False) == (
        "Permission denied: /data/store/runs; make it writable or choose another --store"
    )


@pytest.mark.parametrize("code", [errno.EACCES, errno.EROFS, errno.ENOSPC])
def test_an_unwritable_store_is_refused_in_one_line_before_work(tmp_path, monkeypatch, code):
    from gameforge.flows import pipeline

    def unwritable(*_args: object, **_kwargs: object) -> None:
        raise OSError(code, os.strerror(code), str(tmp_path / "s" / "runs"))

    monkeypatch.setattr(pipeline, "start_record", unwritable)
    result = CliRunner().invoke(
        app, ["run", "solve-lossless", "--preset", "tiny", "--store", str(tmp_path / "s")]
    )
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert result.exit_code == 2, result.output
    assert len(lines) == 1 and "Traceback" not in result.output, result.output
    assert lines[0] == f"error: {os.strerror(code)}: {tmp_path / 's' / 'runs'}; " + (
        "free space" if code == errno.ENOSPC else "make it writable or choose another --store"
    )


def test_a_store_under_a_file_is_refused_in_one_line(tmp_path):
    (tmp_path / "file").write_text("")
    line = refused(["run", "solve-lossless", "--preset", "tiny"], tmp_path / "file" / "s")
    assert line.startswith("error: --store ") and "/file is a file, not a folder" in line


# The toy flow with its chunk writes failing as on a full disk from the third chunk on.
FULL_DISK_RUN = """
import errno, sys
sys.path.insert(0, {root!r})
import tests.toy_flow_cli  # registers the toy flow
import tests.toy_stages as toy
from gameforge.flows import cli
real = toy.write_chunk
def full(build, array, chunk_id, values):
    if chunk_id >= 2:
        raise OSError(errno.ENOSPC, "No space left on device")
    real(build, array, chunk_id, values)
toy.write_chunk = full
sys.argv = ["gameforge", "run", "toy", "--preset", "tiny", "--store", {store!r},
            "--set", "toy-squares.delay=0"]
cli.main()
"""


def test_a_disk_that_fills_during_a_stage_ends_the_run_in_one_line_and_keeps_the_partial(
    tmp_path,
):
    store = tmp_path / "store"
    root = str(Path(__file__).resolve().parents[1])
    done = subprocess.run(
        [sys.executable, "-c", FULL_DISK_RUN.format(root=root, store=str(store))],
        capture_output=True, text=True, timeout=120,
        env={**os.environ, "COLUMNS": "100", "NO_COLOR": "1"},
    )  # fmt: skip
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert done.returncode == 1, done.stderr
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    assert lines[0].startswith("error: stage toy-squares (toy-squares-")
    assert f"No space left on device: {store}; free space, then run the same command" in lines[0]
    artifacts = ArtifactStore(store)
    assert artifacts.keys() == []  # nothing committed
    assert list((store / "partial").glob("toy-squares-*/done/squares/*"))  # chunks kept
