"""Imports bounded by their manifest: a small archive cannot make an import read, write or
allocate more than the arrays it declares can need, and a refused import leaves nothing behind.
`verify --recompute` believes no code version an archive claims."""

from __future__ import annotations

import io
import json
import tarfile
import tempfile
import time
import tracemalloc
from pathlib import Path

import pytest

from gameforge.artifacts import ArtifactStore, StoreError
from gameforge.artifacts.store import GROUP_FILE, META_ATTR, array_checksum
from gameforge.artifacts.transfer import (
    MAX_BLOCK_BYTES,
    MAX_CHUNKS,
    export_artifacts,
    import_artifacts,
)
from gameforge.stages.recompute import recorded_code_version
from gameforge.stages.runner import code_version, run_stage
from tests.toy_stages import TOY_CLI

SQUARES = {"n": 400, "chunk": 100}  # 4 chunks of 100 int64
BOMB = 128 << 20  # zero bytes in one member: about 130 KB gzipped
MANIFEST = "manifest.json"


def _quiet(_line: str) -> None:
    pass


class _Zeros(io.RawIOBase):
    """`size` zero bytes, read in blocks (the bomb is never held whole here either)."""

    def __init__(self, size: int) -> None:
        self.left = size

    def read(self, n: int = -1) -> bytes:
        n = self.left if n < 0 else min(n, self.left)
        self.left -= n
        return bytes(n)


@pytest.fixture(scope="module")
def export(tmp_path_factory) -> tuple[str, Path]:
    """(key, export) of a 4-chunk toy artifact."""
    root = tmp_path_factory.mktemp("source")
    store = ArtifactStore(root / "store")
    key = run_stage("toy-squares", SQUARES, store=store, log=_quiet).key
    [path] = export_artifacts(store, [key], root / "out")
    return key, path


@pytest.fixture
def target(tmp_path, monkeypatch) -> ArtifactStore:
    """A store holding one artifact of its own, with staging folders under tmp_path/tmp."""
    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    store = ArtifactStore(tmp_path / "store")
    run_stage("toy-squares", {"n": 50}, store=store, log=_quiet)
    return store


def _members(path: Path) -> dict[str, bytes]:
    """The files of an export, in order, manifest first."""
    with tarfile.open(path) as tar:
        return {m.name: tar.extractfile(m).read() for m in tar.getmembers() if m.isfile()}  # type: ignore[union-attr]


def _pack(out: Path, members: dict[str, bytes | int]) -> Path:
    """A .tar.gz of the members in order; an int stands for that many zero bytes."""
    with tarfile.open(out, "w:gz", compresslevel=1) as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = data if isinstance(data, int) else len(data)
            tar.addfile(info, _Zeros(data) if isinstance(data, int) else io.BytesIO(data))
    return out


def _listing(store: ArtifactStore) -> list[str]:
    return sorted(str(p.relative_to(store.root)) for p in store.root.rglob("*"))


def _refused(store: ArtifactStore, archive: Path, match: str) -> str:
    """Import `archive`, which must be refused in one line matching `match`, quickly, in
    bounded memory, leaving the store as it was (no lock, object or partial) and no staging."""
    before = _listing(store)
    tracemalloc.start()
    t0 = time.monotonic()
    try:
        with pytest.raises(StoreError, match=match) as refused:
            import_artifacts(store, [archive])
        seconds = time.monotonic() - t0
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    message = str(refused.value)
    assert "\n" not in message.strip()
    assert seconds < 10, seconds
    assert peak < 16 << 20, f"{peak:,} bytes allocated"
    assert _listing(store) == before
    assert not any(Path(tempfile.gettempdir()).iterdir()), "staging left behind"
    return message


def test_a_compressed_export_imports(tmp_path, export, target):
    key, path = export
    archive = _pack(tmp_path / "ok.tar.gz", dict(_members(path)))
    assert import_artifacts(target, [archive]) == [(key, "imported")]
    assert target.verify([key]) == {key: []}
    assert not any(Path(tempfile.gettempdir()).iterdir())


@pytest.mark.parametrize(
    "where",
    [
        "{key}/bucket_round1/c/0",  # an array the manifest does not declare
        "{key}/squares/c/7",  # outside the declared array's 4 chunks
        "{key}/squares/c/0",  # a declared chunk, far larger than 100 int64 can be
    ],
)
def test_a_bomb_member_is_refused_from_its_header(tmp_path, export, target, where):
    key, path = export
    members: dict[str, bytes | int] = dict(_members(path))
    name = where.format(key=key)
    members[name] = BOMB  # replaces the real chunk 0 in place, or comes last
    archive = _pack(tmp_path / "bomb.tar.gz", members)
    assert archive.stat().st_size < 1 << 20
    message = _refused(target, archive, "nothing imported")
    assert repr(name) in message
    if name.endswith("squares/c/0"):
        assert f"holds {BOMB:,} bytes" in message
    else:
        assert "is not part of the artifact its manifest declares" in message
    assert not target.exists(key)


@pytest.mark.parametrize("name", ["run_me.sh", "{key}/run_me.sh", "{key}/squares/run_me.sh"])
def test_an_extra_file_is_refused(tmp_path, export, target, name):
    key, path = export
    name = name.format(key=key)
    archive = _pack(tmp_path / "extra.tar.gz", {**_members(path), name: b"#!/bin/sh\nrm -rf ~\n"})
    message = _refused(target, archive, "is not part of the artifact its manifest declares")
    assert repr(name) in message


def _with_manifest_arrays(path: Path, shape: list[int], chunks: list[int]) -> dict[str, bytes]:
    members = _members(path)
    manifest = json.loads(members[MANIFEST])
    manifest["meta"]["arrays"]["squares"].update(shape=shape, chunks=chunks)
    members[MANIFEST] = json.dumps(manifest).encode()
    return members


@pytest.mark.parametrize(
    ("chunks", "cap"),
    [([10**9], f"{MAX_BLOCK_BYTES:,} an import accepts"), ([100], f"{MAX_CHUNKS:,} chunks")],
)
def test_an_inflated_shape_is_refused_before_reading(tmp_path, export, target, chunks, cap):
    """A manifest claiming 1e9 int64 (8 GB) in a small archive: in one chunk, past the read
    cap; in 1e7 chunks, past the chunk cap. Nothing is read past the manifest."""
    key, path = export
    archive = _pack(tmp_path / "big.tar.gz", dict(_with_manifest_arrays(path, [10**9], chunks)))
    message = _refused(target, archive, "array squares claims shape")
    assert cap in message


def test_an_array_whose_own_metadata_claims_more_than_its_manifest_is_refused(
    tmp_path, export, target
):
    """The manifest is honest; the array's zarr.json, which zarr allocates by, claims 1e9 rows
    in one chunk: refused before any chunk is read."""
    key, path = export
    members = _members(path)
    name = f"{key}/squares/{GROUP_FILE}"
    document = json.loads(members[name])
    document["shape"] = [10**9]
    document["chunk_grid"]["configuration"]["chunk_shape"] = [10**9]
    members[name] = json.dumps(document).encode()
    archive = _pack(tmp_path / "lying.tar.gz", dict(members))
    _refused(target, archive, "array squares's zarr.json differs from its manifest")


def test_a_refused_import_leaves_no_lock_staging_or_partial_object(tmp_path, export, target):
    """Refused after every member was staged (a chunk fails its checksum): the store is as it
    was, without the key's lock file, and the staging folder is gone."""
    key, path = export
    members = _members(path)
    chunk = f"{key}/squares/c/2"
    members[chunk] = members[chunk][:-1] + bytes([members[chunk][-1] ^ 0xFF])
    archive = _pack(tmp_path / "tampered.tar.gz", dict(members))
    _refused(target, archive, "squares")
    assert not (target.root / "locks" / f"{key}.lock").exists()
    assert not target.object_path(key).exists() and not target.partial_path(key).exists()
    assert import_artifacts(target, [path]) == [(key, "imported")]  # the honest one still does


def _forge_all(export: Path, out: Path, key: str, claimed_code: str) -> Path:
    """The export with every square + 1, checksums recomputed, and `claimed_code` written as
    the code version that built it."""
    import zarr

    unpacked = out / "unpacked"
    with tarfile.open(export) as tar:
        tar.extractall(unpacked, filter="data")
    squares = zarr.open_array(str(unpacked / key / "squares"), mode="r+")
    squares[:] = squares[:] + 1
    document = json.loads((unpacked / key / GROUP_FILE).read_text())
    meta = document["attributes"][META_ATTR]
    meta["arrays"]["squares"]["checksum"] = array_checksum(squares)
    meta["code_version"] = meta["provenance"]["code_version"] = claimed_code
    (unpacked / key / GROUP_FILE).write_text(json.dumps(document))
    manifest = json.loads((unpacked / MANIFEST).read_text())
    manifest["meta"] = meta
    (unpacked / MANIFEST).write_text(json.dumps(manifest))
    forged = out / f"{key}.gameforge.tar"
    with tarfile.open(forged, "w") as tar:
        tar.add(unpacked / MANIFEST, arcname=MANIFEST)
        tar.add(unpacked / key, arcname=key)
    return forged


def test_verify_recompute_believes_no_code_version_an_archive_claims(tmp_path, export):
    """A forged import vouched for, claiming this very code built it, is still recomputed by
    `verify --recompute`, and fails; an honest one passes, and the trust record then says
    which code recomputed it."""
    import subprocess

    key, path = export
    running = code_version()
    forged = _forge_all(path, tmp_path / "forged", key, running)
    store = ArtifactStore(tmp_path / "store")
    import_artifacts(store, [forged], trust=True)
    meta = store.open(key).meta
    assert meta["code_version"] == running  # what the archive says...
    assert recorded_code_version(store, key, meta) is None  # ...is not what this store recorded

    def verify() -> subprocess.CompletedProcess:
        command = [*TOY_CLI, "artifacts", "verify", "--recompute", "--store", str(store.root)]
        return subprocess.run(command, capture_output=True, text=True, timeout=300)

    result = verify()
    assert "1 ok, 0 corrupted" in result.stdout  # its checksums were recomputed to match
    assert "recomputing 1 artifacts built by other code" in result.stdout
    assert result.returncode == 2, result.stdout + result.stderr
    assert f"{key} squares: chunk" in result.stderr
    assert "toy-squares: output changed at the same stage version" in result.stderr

    store.remove(key)
    import_artifacts(store, [path], trust=True)
    honest = verify()
    assert honest.returncode == 0, honest.stdout + honest.stderr
    assert "1 recomputed, all equal" in honest.stdout
    record = store.trust_record(key)
    assert record is not None and record["how"] == "recomputed" and record["code_version"]
    assert recorded_code_version(store, key, store.open(key).meta) == record["code_version"]
    built = ArtifactStore(tmp_path / "built")
    mine = run_stage("toy-squares", {"n": 50}, store=built, log=_quiet).key
    assert recorded_code_version(built, mine, built.open(mine).meta) == running
