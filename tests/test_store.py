"""The artifact store: keys, cache hits, atomic commit, SIGKILL resume, races, verify, rm, gc.

The guarantees are checked on a local folder and on an object store (a real S3-compatible
server on 127.0.0.1) alike: `any_store` runs a test on both."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from gameforge.artifacts import ArtifactStore, StoreError, artifact_key
from gameforge.artifacts.store import CorruptedArtifact
from gameforge.stages.base import StageError
from gameforge.stages.registry import get_stage
from gameforge.stages.runner import run_stage
from tests import toy_stages  # registers toy-squares and toy-double

SCRIPT = Path(toy_stages.__file__)  # also a script: builds toy-squares in a store


def _quiet(_msg: str) -> None:
    pass


def test_key_depends_on_everything_and_nothing_else():
    base = artifact_key("s", 1, {"a": 1, "b": [1, 2]}, {"x": "k1"})
    assert base == artifact_key("s", 1, {"b": [1, 2], "a": 1}, {"x": "k1"})  # order-free
    assert base.startswith("s-")
    others = [
        artifact_key("t", 1, {"a": 1, "b": [1, 2]}, {"x": "k1"}),
        artifact_key("s", 2, {"a": 1, "b": [1, 2]}, {"x": "k1"}),
        artifact_key("s", 1, {"a": 2, "b": [1, 2]}, {"x": "k1"}),
        artifact_key("s", 1, {"a": 1, "b": [1, 2]}, {"x": "k2"}),
    ]
    assert len({base, *others}) == 5


def test_run_then_cache_hit_then_force(any_store):
    store = any_store
    logs: list[str] = []
    first = run_stage("toy-squares", {"n": 1000}, store=store, log=logs.append)
    assert not first.cached
    data = store.open(first.key)["squares"][:]
    np.testing.assert_array_equal(data, np.arange(1000) ** 2)
    meta = store.open(first.key).meta
    assert meta["stage"] == "toy-squares" and meta["version"] == 1
    assert meta["params"]["n"] == 1000 and meta["arrays"]["squares"]["checksum"]
    for field in ("code_version", "created", "finished", "duration_s", "host"):
        assert field in meta

    second = run_stage("toy-squares", {"n": 1000}, store=store, log=logs.append)
    assert second.cached and second.key == first.key
    assert any("cache hit" in line for line in logs)

    third = run_stage("toy-squares", {"n": 1000}, store=store, force=True, log=logs.append)
    assert not third.cached and third.key == first.key
    assert store.keys() == [first.key]
    assert store.verify() == {first.key: []}


def test_unknown_stage_and_parameter_list_valid_ones(store):
    with pytest.raises(StageError, match=r"unknown stage 'nope' \(valid: .*river-hs"):
        get_stage("nope")
    with pytest.raises(
        StageError, match=r"unknown parameter bogus \(valid: chunk, delay, fail_chunk, n\)"
    ):
        run_stage("toy-squares", {"bogus": 1}, store=store, log=_quiet)
    with pytest.raises(StageError, match="parameter n"):
        run_stage("toy-squares", {"n": -5}, store=store, log=_quiet)
    assert store.entries() == []


def test_inputs_lineage_and_rm_refuses_while_used(any_store):
    store = any_store
    up = run_stage("toy-squares", {"n": 300}, store=store, log=_quiet)
    down = run_stage("toy-double", {}, {"squares": up.key}, store=store, log=_quiet)
    np.testing.assert_array_equal(store.open(down.key)["doubled"][:], 2 * np.arange(300) ** 2)
    assert store.open(down.key).inputs == {"squares": up.key}
    assert store.dependents(up.key) == [down.key]
    with pytest.raises(StoreError, match="is an input of"):
        store.remove(up.key)
    assert store.exists(up.key)
    store.remove(down.key)
    store.remove(up.key)
    assert store.keys() == []


def test_rm_force_and_prefix(any_store):
    store = any_store
    up = run_stage("toy-squares", {"n": 300}, store=store, log=_quiet)
    run_stage("toy-double", {}, {"squares": up.key}, store=store, log=_quiet)
    assert store.remove(up.key[:14], force=True) == up.key
    assert not store.exists(up.key)


def test_verify_names_a_corrupted_artifact(store):
    good = run_stage("toy-squares", {"n": 500}, store=store, log=_quiet)
    bad = run_stage("toy-squares", {"n": 600}, store=store, log=_quiet)
    chunk_files = sorted((store.object_path(bad.key) / "squares" / "c").rglob("*"))
    victim = [p for p in chunk_files if p.is_file()][2]
    raw = bytearray(victim.read_bytes())
    raw[len(raw) // 2] ^= 0xFF
    victim.write_bytes(bytes(raw))
    report = store.verify()
    assert report[good.key] == []
    assert report[bad.key], "the corrupted artifact must be named"


def test_a_lost_chunk_is_an_error_never_fill_values(store):
    """Chunks equal to the fill value are recorded absent at commit; a chunk file lost later
    fails every read of its array, a dependent's build before it starts, and `verify`, each in
    a line naming artifact, array and chunk."""
    with store.building("toy-zeros", 1, {}, {}) as writer:
        assert writer is not None
        values = np.arange(30, dtype=np.int64)
        values[10:20] = 0  # chunk c/1 equals the fill value, so zarr writes no file for it
        writer.array("values", (30,), np.int64, chunks=(10,))[:] = values
        zeros = writer.commit()
    assert zeros.meta["arrays"]["values"]["absent_chunks"] == ["c/1"]
    np.testing.assert_array_equal(store.open(zeros.key)["values"][:], values)
    assert store.verify([zeros.key]) == {zeros.key: []}
    (store.object_path(zeros.key) / "values" / "c" / "2").unlink()
    with pytest.raises(CorruptedArtifact, match=r"'values' is missing its chunk c/2"):
        store.open(zeros.key)["values"][:]
    assert store.verify([zeros.key])[zeros.key] == ["array 'values' is missing its chunk c/2"]

    squares = run_stage("toy-squares", {"n": 500}, store=store, log=_quiet)
    (store.object_path(squares.key) / "squares" / "c" / "3").unlink()
    with pytest.raises(
        CorruptedArtifact, match=rf"{squares.key}.*'squares' is missing its chunk c/3"
    ):
        run_stage("toy-double", {}, {"squares": squares.key}, store=store, log=_quiet)
    assert not [k for k in store.keys() if k.startswith("toy-double")]  # noqa: SIM118


def test_verify_flags_a_dependent_of_other_content_than_its_input_holds(store):
    """A build records the checksums of the inputs it read; `verify` names a dependent whose
    input now holds other content."""
    squares = run_stage("toy-squares", {"n": 500}, store=store, log=_quiet)
    double = run_stage("toy-double", {}, {"squares": squares.key}, store=store, log=_quiet)
    meta = store.open(double.key).meta
    recorded = store.open(squares.key).meta["arrays"]["squares"]["checksum"]
    assert meta["input_checksums"] == {"squares": {"squares": recorded}}
    assert store.verify([double.key]) == {double.key: []}
    path = store.object_path(squares.key) / "zarr.json"
    path.write_text(path.read_text().replace(recorded, "0" * len(recorded)))
    assert store.verify([double.key])[double.key] == [
        f"built from another content of its input squares ({squares.key}): squares differ"
    ]


def _partial_chunks(store: ArtifactStore) -> int:
    return sum(1 for f in store.files.files_under("partial") if "/done/squares/" in f)


def _building(store: ArtifactStore, chunks: int) -> subprocess.Popen:
    """A process building toy-squares in `store` (0.05 s a chunk), once `chunks` chunks are
    done (or a minute passed)."""
    proc = subprocess.Popen(
        [sys.executable, str(SCRIPT), store.location, "0.05"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while _partial_chunks(store) < chunks and time.monotonic() < deadline:
        time.sleep(0.02)
    return proc


def test_sigkill_leaves_partial_and_resume_is_bit_identical(tmp_path, any_store):
    store = any_store
    proc = _building(store, 8)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    finished_before = _partial_chunks(store)
    assert 8 <= finished_before < toy_stages.N_CHUNKS
    assert store.keys() == [], "a killed writer must leave nothing that looks complete"
    [info] = store.entries()
    assert info.status == "partial"

    logs: list[str] = []
    resumed = run_stage("toy-squares", {"delay": 0.05}, store=store, log=logs.append)
    meta = store.open(resumed.key).meta
    assert meta["resumed"] is True
    assert meta["summary"]["chunks_computed_now"] == toy_stages.N_CHUNKS - finished_before
    assert any("resuming" in line for line in logs)

    fresh = ArtifactStore(tmp_path / "fresh")
    clean = run_stage("toy-squares", {"delay": 0.0}, store=fresh, log=_quiet)
    a = store.open(resumed.key)["squares"][:]
    b = fresh.open(clean.key)["squares"][:]
    assert a.tobytes() == b.tobytes()
    assert store.entries()[0].status == "complete" and len(store.entries()) == 1


def test_an_unfinished_build_is_shown_kept_by_repair_and_resumed_never_from_stale_markers(
    any_store,
):
    """A failed build with 5 of 40 chunks finished: listed with its progress, refused by
    `artifacts repair` (setting it aside would lose its work), kept by a run's repair check,
    resumed to the right squares. Markers that outlive their array (the objects folder lost)
    are ignored: the resumed array is recomputed, not read back as fill values."""
    from gameforge.artifacts.runs import unfinished_build
    from gameforge.flows.repair import Repair, rebuild_key

    store = any_store
    with pytest.raises(MemoryError):
        run_stage("toy-squares", {"fail_chunk": 5}, store=store, log=_quiet)
    [info] = store.entries()
    assert info.status == "partial" and store.unfinished(info.key)
    assert store.build_progress(info.key) == {"squares": (5, toy_stages.N_CHUNKS)}
    build = unfinished_build(store, info.key)
    assert build is not None and "squares 5 of 40 chunks finished (12%)" in build.line()
    assert f"gameforge artifacts rm {info.key}" in build.line()
    with pytest.raises(StoreError, match="unfinished build, not a stored artifact"):
        rebuild_key(store, info.key, lambda *_: "", _quiet)
    logs: list[str] = []
    assert Repair(store).check([info.key], logs.append) == []
    assert "left for the run to resume" in logs[0]
    assert store.build_progress(info.key) == {"squares": (5, toy_stages.N_CHUNKS)}

    store.files.remove_tree(f"objects/{info.key}")  # the arrays are gone, the markers stay
    assert store.build_progress(info.key) == {}
    resumed = run_stage("toy-squares", {}, store=store, log=_quiet)
    assert resumed.key == info.key and not store.unfinished(info.key)
    np.testing.assert_array_equal(store.open(info.key)["squares"][:], np.arange(4000) ** 2)
    assert unfinished_build(store, info.key) is None


def test_a_resumed_chunked_build_starts_its_bar_at_the_chunks_already_finished(store):
    """Killed after 5 of 40 chunks, the rerun's bar covers all 40, starts at 5 (shown, but
    out of the rate and ETA) and advances only by the 35 it computes."""
    with pytest.raises(MemoryError):
        run_stage("toy-squares", {"fail_chunk": 5}, store=store, log=_quiet)
    bars = _Bars()
    resumed = run_stage("toy-squares", {}, store=store, progress=bars, log=_quiet)
    summary = store.open(resumed.key).meta["summary"]
    assert summary["chunks_computed_now"] == toy_stages.N_CHUNKS - 5
    assert (bars.total, bars.started_at, bars.advanced) == (toy_stages.N_CHUNKS, 5, 40)


def test_cli_shows_how_far_an_unfinished_build_got_and_how_to_resume_it(store):
    from typer.testing import CliRunner

    from gameforge.artifacts.runs import RunLedger
    from gameforge.flows.cli import app

    with pytest.raises(MemoryError):
        run_stage("toy-squares", {"fail_chunk": 5}, store=store, log=_quiet)
    [info] = store.entries()
    command = f"gameforge run toy --preset tiny --force toy-squares --store {store.root}"
    RunLedger(store).record_done("toy", {"toy-squares": {"key": info.key}}, command)
    where = ["--store", str(store.root)]
    shown = CliRunner().invoke(app, ["artifacts", "show", info.key[:14], *where])
    assert shown.exit_code == 0, shown.output
    assert "squares: 5 of 40 chunks finished (12%)" in shown.output
    assert f"resume: gameforge run toy --preset tiny --store {store.root}" in shown.output
    listed = CliRunner().invoke(app, ["artifacts", "ls", *where], env={"COLUMNS": "120"})
    assert "partial 12%" in listed.output, listed.output
    planned = subprocess.run([*toy_stages.TOY_CLI, "run", "toy", "--preset", "tiny", "--plan",
                              *where], capture_output=True, text=True, timeout=120)  # fmt: skip
    assert f"{info.key}: resumes (squares 5 of 40 chunks finished)" in planned.stdout, planned


def test_a_build_an_earlier_stage_version_started_is_named_and_not_offered_to_resume(
    store, monkeypatch
):
    """A killed build records its recipe. Once the stage's version changes, the same run
    computes another key and names the earlier build it does not resume; `artifacts show` on
    that build says which version and code started it and offers no resume command that this
    code would turn into another build."""
    import dataclasses

    from typer.testing import CliRunner

    from gameforge.artifacts.runs import RunLedger, unfinished_build
    from gameforge.flows.cli import app
    from gameforge.stages import registry

    with pytest.raises(MemoryError):
        run_stage("toy-squares", {"fail_chunk": 5}, store=store, log=_quiet)
    [info] = store.entries()
    recipe = store.build_recipe(info.key)
    assert recipe is not None
    assert (recipe["stage"], recipe["version"]) == ("toy-squares", 1)
    assert artifact_key("toy-squares", 1, recipe["params"], recipe["inputs"]) == info.key
    RunLedger(store).record_done("toy", {"toy-squares": {"key": info.key}}, "gameforge run toy")
    current = unfinished_build(store, info.key, registry.current_version)
    assert current is not None and not current.outdated and current.resume == "gameforge run toy"

    bumped = dataclasses.replace(get_stage("toy-squares"), version=2)
    monkeypatch.setitem(registry.STAGES, "toy-squares", bumped)
    params = get_stage("toy-squares").make_params({}).key_params()
    assert store.older_builds("toy-squares", 2, params, {}) == [(1, info.key)]
    from gameforge.flows.specs import FLOWS, FlowSpec, Node

    toy = FlowSpec("toy", "toy squares", (Node("toy-squares"),), {"tiny": {}})
    monkeypatch.setitem(FLOWS, "toy", toy)
    where = ["--store", str(store.root)]
    planned = CliRunner().invoke(app, ["run", "toy", "--preset", "tiny", "--plan", *where])
    assert planned.exit_code == 0, planned.output
    assert (
        f"not resumed: {info.key}, an unfinished build of the same content by toy-squares "
        "version 1" in " ".join(planned.output.split())
    ), planned.output
    logs: list[str] = []
    rebuilt = run_stage("toy-squares", {}, store=store, log=logs.append)
    assert rebuilt.key != info.key and store.unfinished(info.key)
    [note] = [line for line in logs if "not resumed" in line]
    assert f"{info.key}, an unfinished build of the same content by toy-squares version 1" in note
    assert "squares 5 of 40 chunks finished (12%)" in note

    build = unfinished_build(store, info.key, registry.current_version)
    assert build is not None and build.outdated and build.resume is None
    assert "started by toy-squares version 1" in build.line()
    assert "this code has version 2" in build.line()
    shown = CliRunner().invoke(app, ["artifacts", "show", info.key, "--store", str(store.root)])
    assert shown.exit_code == 0, shown.output
    assert "stage toy-squares v1: unfinished" in shown.output
    assert "not resumable by this code" in shown.output and "resume:" not in shown.output


def test_resume_command_drops_force_options():
    from gameforge.artifacts.runs import resume_command

    assert resume_command("gameforge run f --preset p --force cfr --store s --force br") == (
        "gameforge run f --preset p --store s"
    )
    assert resume_command("gameforge stage run cfr --force --store s") == (
        "gameforge stage run cfr --store s"
    )
    assert resume_command("gameforge run f --force-resources --force=cfr") == (
        "gameforge run f --force-resources"
    )


def test_gc_removes_leftovers_but_not_live_builds(any_store):
    store = any_store
    proc = _building(store, 2)
    assert store.gc() == [], "gc must not touch an artifact a live process is building"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    removed = store.gc()
    assert len(removed) == 1 and removed[0].startswith("toy-squares-")
    assert store.entries() == []


def test_two_processes_one_computes_the_other_reuses(any_store):
    store = any_store
    procs = [
        subprocess.Popen(
            [sys.executable, str(SCRIPT), store.location, "0.02"],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for _ in range(2)
    ]
    outputs = [p.communicate(timeout=120)[0] for p in procs]
    assert all(p.returncode == 0 for p in procs), outputs
    verdicts = sorted(
        line.split()[-1]
        for out in outputs
        for line in out.splitlines()
        if line.startswith("RESULT")
    )
    assert verdicts == ["cached", "computed"], outputs
    [key] = store.keys()
    np.testing.assert_array_equal(store.open(key)["squares"][:], np.arange(4000) ** 2)
    assert store.verify() == {key: []}
    assert [i.status for i in store.entries()] == ["complete"]


RIVER_SCRIPT = """
import sys
from gameforge.artifacts import ArtifactStore
from gameforge.stages.runner import run_stage
run_stage("river-hs", {"game": "holdem8.limit.2p.reverse_blinds", "boards_per_chunk": 8},
          store=ArtifactStore(sys.argv[1]), log=lambda _m: None)
"""


def test_river_hs_killed_mid_way_resumes_bit_identical(tmp_path, store):
    """The real stage: SIGKILL during the chunked pass, rerun, same checksum as a clean run."""
    proc = subprocess.Popen([sys.executable, "-c", RIVER_SCRIPT, str(store.root)])
    partial = store.root / "partial"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        done = sum(1 for _ in partial.rglob("done/hs_by_board/*")) if partial.exists() else 0
        if done >= 100 or proc.poll() is not None:
            break
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert store.keys() == [], "killed before the commit: nothing may look complete"
    logs: list[str] = []
    params = {"game": "holdem8.limit.2p.reverse_blinds", "boards_per_chunk": 8}
    resumed = run_stage("river-hs", params, store=store, log=logs.append)
    assert any("resuming hs_by_board" in line for line in logs), logs
    clean_store = ArtifactStore(tmp_path / "clean")
    clean = run_stage("river-hs", params, store=clean_store, log=_quiet)
    assert resumed.key == clean.key
    a, b = store.open(resumed.key), clean_store.open(clean.key)
    assert a.meta["arrays"] == b.meta["arrays"]
    assert a["hs_count"][:].tobytes() == b["hs_count"][:].tobytes()


def test_export_import_round_trip_with_lineage(tmp_path, any_store):
    store = any_store
    from gameforge.artifacts.transfer import export_artifacts, import_artifacts

    up = run_stage("toy-squares", {"n": 300}, store=store, log=_quiet)
    down = run_stage("toy-double", {}, {"squares": up.key}, store=store, log=_quiet)
    files = export_artifacts(store, [down.key], tmp_path / "out", with_inputs=True)
    assert [f.name for f in files] == [f"{up.key}.gameforge.tar", f"{down.key}.gameforge.tar"]
    other = ArtifactStore(store.location + "-other")
    assert import_artifacts(other, files) == [(up.key, "imported"), (down.key, "imported")]
    assert import_artifacts(other, files[:1]) == [(up.key, "already present")]
    assert other.verify() == {up.key: [], down.key: []}
    assert (
        other.open(down.key)["doubled"][:].tobytes() == store.open(down.key)["doubled"][:].tobytes()
    )
    assert other.dependents(up.key) == [down.key]
    # Imports serve no run until trusted; then the importer's store reuses them: a cache hit.
    with pytest.raises(StoreError, match="not trusted yet"):
        run_stage("toy-squares", {"n": 300}, store=other, log=_quiet)
    other.trust(up.key, "vouched")
    again = run_stage("toy-squares", {"n": 300}, store=other, log=_quiet)
    assert again.cached


def test_import_rejects_a_tampered_export(tmp_path, any_store):
    store = any_store
    import tarfile

    from gameforge.artifacts.transfer import export_artifacts, import_artifacts

    up = run_stage("toy-squares", {"n": 300}, store=store, log=_quiet)
    [path] = export_artifacts(store, [up.key], tmp_path / "out")
    unpacked = tmp_path / "unpacked"
    with tarfile.open(path) as tar:
        tar.extractall(unpacked, filter="data")
    chunk = next(p for p in (unpacked / up.key / "squares" / "c").rglob("*") if p.is_file())
    raw = bytearray(chunk.read_bytes())
    raw[-1] ^= 0xFF
    chunk.write_bytes(bytes(raw))
    bad = tmp_path / "bad.gameforge.tar"
    with tarfile.open(bad, "w") as tar:
        tar.add(unpacked / "manifest.json", arcname="manifest.json")
        tar.add(unpacked / up.key, arcname=up.key)
    other = ArtifactStore(store.location + "-other")
    with pytest.raises(StoreError):
        import_artifacts(other, [bad])
    assert other.keys() == [] and other.entries() == []
    with pytest.raises(StoreError, match="not a gameforge export"):
        import_artifacts(other, [tmp_path / "missing.tar"])


def test_execution_only_parameters_do_not_change_the_key(any_store):
    store = any_store
    first = run_stage("toy-squares", {"n": 300, "delay": 0.0}, store=store, log=_quiet)
    second = run_stage("toy-squares", {"n": 300, "delay": 0.01}, store=store, log=_quiet)
    assert second.cached and second.key == first.key
    meta = store.open(first.key).meta
    assert "delay" not in meta["params"] and meta["execution"] == {"delay": 0.0, "fail_chunk": -1}
    third = run_stage("toy-squares", {"n": 301}, store=store, log=_quiet)
    assert not third.cached and third.key != first.key


class _Killed(Exception):
    """Stands for a kill in the middle of a batch."""


class _Bars:
    """A progress recorder: the totals started and the advances made."""

    def __init__(self) -> None:
        self.total, self.advanced, self.started_at = 0, 0, 0

    def start(self, desc: str, total: int, done: int = 0):
        self.total, self.started_at = total, done
        self.advanced += done  # work finished before a resume counts toward the bar's total
        return self

    def advance(self, n: int = 1) -> None:
        self.advanced += n

    def close(self) -> None:
        pass

    def note(self, text: str) -> None:
        pass


def test_run_batches_checkpoints_each_batch_and_resumes_after_the_saved_ones(store):
    from gameforge.artifacts.store import ArtifactWriter
    from gameforge.stages.base import StageContext

    calls: list[tuple[int, int]] = []
    kill = [True]

    def squares(start: int, stop: int, bar) -> np.ndarray:
        calls.append((start, stop))
        bar.advance(1)  # a batch may report part of its progress itself
        if start == 6 and kill.pop():
            raise _Killed  # killed in the third batch
        return np.arange(start, stop) ** 2

    def run(ctx: StageContext) -> list[np.ndarray]:
        return ctx.run_batches("part", 10, 3, squares, lambda b: {"v": b}, lambda s: s["v"], "sq")

    ctx = StageContext(params=None, inputs={}, writer=ArtifactWriter(store, "toy-k", {}))
    with pytest.raises(_Killed):
        run(ctx)
    assert calls == [(0, 3), (3, 6), (6, 9)]

    bars, calls[:], kill[:] = _Bars(), [], [False]
    writer = ArtifactWriter(store, "toy-k", {})
    assert writer.resumed
    ctx = StageContext(params=None, inputs={}, writer=writer, progress=bars, log=_quiet)
    batches = run(ctx)
    assert calls == [(6, 9), (9, 10)], "only the batches not saved run again"
    assert np.array_equal(np.concatenate(batches), np.arange(10) ** 2)
    assert (bars.total, bars.advanced) == (10, 10)
