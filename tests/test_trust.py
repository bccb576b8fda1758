"""Artifacts you can trust: provenance, quarantined imports, and recompute checks.

An export can be forged with its lineage honest and its checksums recomputed; the import then
passes every check the file itself can offer. It must still serve no run until someone trusts
it, and a recompute from its recipe must find the forged value.
"""

from __future__ import annotations

import json
import subprocess
import tarfile
from pathlib import Path

import numpy as np
import pytest

from gameforge.artifacts import ArtifactStore, StoreError
from gameforge.artifacts.store import GROUP_FILE, META_ATTR, array_checksum
from gameforge.artifacts.transfer import export_artifacts, import_artifacts
from gameforge.stages.recompute import recompute_check
from gameforge.stages.runner import run_stage
from tests.toy_stages import TOY_CLI

SQUARES = {"n": 4000, "chunk": 100}  # the toy flow's tiny preset: 40 chunks
FORGED_ROW = 1234  # in chunk 12


def _quiet(_line: str) -> None:
    pass


def _forge(export: Path, out: Path, key: str) -> Path:
    """The export with squares[FORGED_ROW] changed and every checksum recomputed to match."""
    import zarr

    unpacked = out / "unpacked"
    with tarfile.open(export) as tar:
        tar.extractall(unpacked, filter="data")
    squares = zarr.open_array(str(unpacked / key / "squares"), mode="r+")
    squares[FORGED_ROW] = squares[FORGED_ROW] + 1
    document = json.loads((unpacked / key / GROUP_FILE).read_text())
    meta = document["attributes"][META_ATTR]
    meta["arrays"]["squares"]["checksum"] = array_checksum(squares)
    (unpacked / key / GROUP_FILE).write_text(json.dumps(document))
    manifest = json.loads((unpacked / "manifest.json").read_text())
    manifest["meta"] = meta
    (unpacked / "manifest.json").write_text(json.dumps(manifest))
    forged = out / f"{key}.gameforge.tar"
    with tarfile.open(forged, "w") as tar:
        tar.add(unpacked / "manifest.json", arcname="manifest.json")
        tar.add(unpacked / key, arcname=key)
    return forged


def _toy(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*TOY_CLI, *args], capture_output=True, text=True, timeout=300)


def test_a_forged_import_serves_no_run_until_trusted_and_recompute_finds_it(tmp_path):
    honest_store = ArtifactStore(tmp_path / "honest")
    built = run_stage("toy-squares", SQUARES, store=honest_store, log=_quiet)
    [honest] = export_artifacts(honest_store, [built.key], tmp_path / "exports")
    forged = _forge(honest, tmp_path / "forged", built.key)

    store = ArtifactStore(tmp_path / "store")
    assert import_artifacts(store, [forged]) == [(built.key, "imported")]  # every file check passes
    meta = store.open(built.key).meta
    assert meta["provenance"]["kind"] == "imported"
    assert meta["provenance"]["exported"]["kind"] == "built"
    assert not store.trusted(built.key)

    # a run would use it as a cache hit: it stops before any work, in one line, store untouched
    before = sorted(store.files.files_under(""))
    run = _toy("run", "toy", "--preset", "tiny", "--store", str(store.root))
    assert run.returncode == 2
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and f"artifact {built.key} was imported and is not trusted" in lines[0]
    assert f"gameforge artifacts trust {built.key}" in lines[0]
    assert f"gameforge artifacts check {built.key} --recompute" in lines[0]
    assert sorted(store.files.files_under("")) == before
    with pytest.raises(StoreError, match="not trusted yet"):
        run_stage("toy-double", {}, {"squares": built.key}, store=store, log=_quiet)

    check = _toy(
        "artifacts", "check", built.key, "--recompute", "--all", "--store", str(store.root)
    )
    assert check.returncode == 2, check.stdout + check.stderr
    assert f"squares: chunk 12 differs first at [{FORGED_ROW}]" in check.stderr
    assert f"stored {FORGED_ROW**2 + 1}, recomputed {FORGED_ROW**2}" in check.stderr
    assert not store.trusted(built.key)

    store.remove(built.key)
    assert import_artifacts(store, [honest], trust=True) == [(built.key, "imported")]
    assert store.trust_record(built.key)["how"] == "vouched"
    again = _toy("run", "toy", "--preset", "tiny", "--store", str(store.root))
    assert again.returncode == 0, again.stderr
    assert f"toy-squares: cache hit {built.key}" in again.stdout


def test_a_sampled_recompute_compares_seeded_chunks_and_marks_an_import_verified(
    tmp_path, any_store
):
    source = ArtifactStore(tmp_path / "source")
    built = run_stage("toy-squares", SQUARES, store=source, log=_quiet)
    files = export_artifacts(source, [built.key], tmp_path / "exports")
    import_artifacts(any_store, files)
    before = any_store.files.files_under("")
    report = recompute_check(any_store, built.key, chunks=4, seed=7, log=_quiet)
    assert report.passed and report.mode == "sampled chunks"
    expected = sorted(int(c) for c in np.random.default_rng(7).choice(40, 4, False))
    assert report.chunks == {"squares": expected}
    again = recompute_check(any_store, built.key, chunks=4, seed=7, log=_quiet)
    assert again.chunks == report.chunks  # the seed decides the chunks
    assert any_store.files.files_under("") == before  # the scratch build went elsewhere


def test_the_trust_record_goes_with_the_artifact(tmp_path):
    """rm, then the same import again: untrusted again (trust is not inherited by key)."""
    source = ArtifactStore(tmp_path / "source")
    built = run_stage("toy-squares", {"n": 300}, store=source, log=_quiet)
    files = export_artifacts(source, [built.key], tmp_path / "exports")
    store = ArtifactStore(tmp_path / "store")
    import_artifacts(store, files, trust=True)
    assert store.trusted(built.key)
    store.remove(built.key)
    import_artifacts(store, files)
    assert not store.trusted(built.key)
    assert run_stage("toy-squares", {"n": 300}, store=source, log=_quiet).cached  # built: trusted
    assert source.open(built.key).meta["provenance"]["kind"] == "built"


def test_verify_recompute_catches_output_changed_without_a_version_bump(tmp_path):
    """An artifact recorded by other code, whose output differs from what this code computes
    at the same stage version: `verify --recompute` names the stage; this code's own artifacts
    are not recomputed."""
    import zarr

    store = ArtifactStore(tmp_path / "store")
    old = run_stage("toy-squares", {"n": 400, "chunk": 100}, store=store, log=_quiet)
    run_stage("toy-squares", {"n": 300, "chunk": 100}, store=store, log=_quiet)
    folder = store.object_path(old.key)
    squares = zarr.open_array(str(folder / "squares"), mode="r+")
    squares[:] = squares[:] + 1  # what the older code computed
    document = json.loads((folder / GROUP_FILE).read_text())
    meta = document["attributes"][META_ATTR]
    meta["arrays"]["squares"]["checksum"] = array_checksum(squares)
    meta["code_version"] = "0.0.1+older"
    (folder / GROUP_FILE).write_text(json.dumps(document))

    result = _toy("artifacts", "verify", "--recompute", "--store", str(store.root))
    assert "2 ok, 0 corrupted" in result.stdout
    assert "recomputing 1 artifacts built by other code" in result.stdout
    assert f"{old.key} squares: chunk" in result.stderr
    assert result.returncode == 2
    assert "toy-squares: output changed at the same stage version" in result.stderr
