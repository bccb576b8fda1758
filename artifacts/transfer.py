"""Export artifacts as self-describing files, and import them into another store.

An export is one tar file per artifact, `<key>.gameforge.tar`: `manifest.json` (format, key,
and the artifact's full lineage metadata with per-array checksums) plus the Zarr group under
`<key>/`. Chunks are already compressed by Zarr (zstd), so the tar itself is not. Import checks
that the key matches the recorded stage, version, parameters and inputs, extracts into a local
temporary folder, re-verifies every checksum, and only then publishes it into the store, the
group's `zarr.json` last (the store's commit, on a local disk and on an object store alike).
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import shutil
import socket
import tarfile
import tempfile
import uuid
from pathlib import Path
from typing import Any

from gameforge.artifacts.files import first_line
from gameforge.artifacts.keys import KEY_HASH_CHARS, artifact_key
from gameforge.artifacts.store import (
    GROUP_FILE,
    META_ATTR,
    OBJECTS,
    ArtifactStore,
    StoreError,
    array_checksum,
    gameforge_version,
    group_document,
    utc_now,
)

FORMAT = "gameforge-artifact/1"
SUFFIX = ".gameforge.tar"
MAX_MANIFEST_BYTES = 64 << 20  # metadata with every curve of a long run stays far below this
_KEY = re.compile(rf"[a-z0-9][a-z0-9-]*-[0-9a-f]{{{KEY_HASH_CHARS}}}")


def _manifest(tar: tarfile.TarFile, path: Path) -> tuple[str, dict[str, Any]]:
    """The (key, metadata) an export declares, checked for shape; StoreError if malformed."""
    try:
        member = tar.getmember("manifest.json")
        if not member.isfile() or member.size > MAX_MANIFEST_BYTES:
            raise StoreError(f"{path}: manifest.json is not a file of at most 64 MiB")
        manifest = json.loads(tar.extractfile(member).read())  # type: ignore[union-attr]
    except (KeyError, AttributeError, ValueError, tarfile.TarError, OSError, EOFError):
        raise StoreError(f"{path}: no readable manifest.json") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        found = manifest.get("format") if isinstance(manifest, dict) else type(manifest).__name__
        raise StoreError(f"{path}: unknown format {found!r}")
    key, meta = manifest.get("key"), manifest.get("meta")
    shapes = {"stage": str, "version": int, "params": dict, "inputs": dict}
    if not (
        isinstance(key, str)
        and _KEY.fullmatch(key)
        and isinstance(meta, dict)
        and all(isinstance(meta.get(k), t) for k, t in shapes.items())
        and isinstance(meta.get("arrays", {}), dict)
    ):
        raise StoreError(f"{path}: manifest.json lacks a valid key, stage, version or lineage")
    try:
        expected = artifact_key(meta["stage"], meta["version"], meta["params"], meta["inputs"])
    except (TypeError, ValueError):
        raise StoreError(f"{path}: manifest.json holds a lineage that cannot be hashed") from None
    if expected != key:
        raise StoreError(f"{path}: key {key} does not match its recorded lineage")
    return key, meta


def lineage(store: ArtifactStore, key: str) -> list[str]:
    """`key` and every artifact upstream of it in the store, upstream first."""
    order: list[str] = []

    def visit(k: str) -> None:
        if k in order:
            return
        for upstream in store.open(k).inputs.values():
            if store.exists(upstream):
                visit(upstream)
        order.append(k)

    visit(store.resolve(key))
    return order


def export_artifacts(
    store: ArtifactStore, keys: list[str], out_dir: Path, with_inputs: bool = False
) -> list[Path]:
    """Write one tar per artifact (and its inputs, if asked) into `out_dir`."""
    out_dir.mkdir(parents=True, exist_ok=True)
    wanted: list[str] = []
    for key in keys:
        for k in lineage(store, key) if with_inputs else [store.resolve(key)]:
            if k not in wanted:
                wanted.append(k)
    written = []
    for key in wanted:
        artifact = store.open(key)
        manifest = {"format": FORMAT, "key": key, "meta": artifact.meta}
        target = out_dir / f"{key}{SUFFIX}"
        partial = target.with_name(target.name + f".tmp-{uuid.uuid4().hex[:8]}")
        with tarfile.open(partial, "w") as tar:
            data = json.dumps(manifest, indent=2).encode()
            info = tarfile.TarInfo("manifest.json")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
            files = store.files
            folder = f"{OBJECTS}/{key}"
            for name in files.files_under(folder):
                data = files.read_bytes(f"{folder}/{name}")
                info = tarfile.TarInfo(f"{key}/{name}")
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
        partial.rename(target)  # a half-written export never carries the final name
        written.append(target)
    return written


def import_artifacts(
    store: ArtifactStore, paths: list[Path], trust: bool = False
) -> list[tuple[str, str]]:
    """Import exported tars, untrusted unless `trust` (the user vouches for their source);
    returns (key, "imported" | "already present") per file."""
    results = []
    for path in paths:
        try:
            tar = tarfile.open(path, "r")  # noqa: SIM115 (closed by the with below)
        except (OSError, tarfile.TarError) as exc:
            raise StoreError(f"{path}: not a gameforge export ({first_line(exc)})") from None
        with tar:
            key, meta = _manifest(tar, path)
            if store.exists(key):
                results.append((key, "already present"))
                continue
            with store.lock(key):
                staging = Path(tempfile.mkdtemp(prefix=f"{key}.import-"))
                try:
                    try:
                        members = [m for m in tar.getmembers() if m.name.split("/")[0] == key]
                        tar.extractall(staging, members=members, filter="data")
                    except (tarfile.TarError, OSError, EOFError, ValueError) as exc:
                        raise StoreError(
                            f"{path}: cannot extract ({first_line(exc)}); nothing imported"
                        ) from None
                    _verify_extracted(staging / key, meta, path)
                    imported = {**meta, "provenance": _import_provenance(path, meta)}
                    (staging / key / GROUP_FILE).write_bytes(group_document(imported))
                    store.install(key, staging / key)
                finally:
                    shutil.rmtree(staging, ignore_errors=True)
            if trust:
                store.trust(key, "vouched", source=str(path))
            results.append((key, "imported"))
    return results


def _import_provenance(path: Path, meta: dict[str, Any]) -> dict[str, Any]:
    """Where an imported artifact came from: the file's sha256, when, here, and the exporter's
    own provenance (None for an export made before provenance was recorded)."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return {
        "kind": "imported",
        "file": Path(path).name,
        "sha256": digest.hexdigest(),
        "imported": utc_now(),
        "host": socket.gethostname(),
        "gameforge_version": gameforge_version(),
        "exported": meta.get("provenance"),
    }


def _verify_extracted(group_path: Path, meta: dict, source: Path) -> None:
    import zarr

    try:
        group = zarr.open_group(str(group_path), mode="r")
    except Exception as exc:  # zarr raises several types for a missing or damaged group
        raise StoreError(
            f"{source}: the artifact's data is missing or unreadable ({first_line(exc)})"
        ) from None
    if dict(group.attrs).get(META_ATTR) != meta:
        raise StoreError(f"{source}: the artifact's own metadata differs from its manifest")
    for name, info in meta.get("arrays", {}).items():
        if not isinstance(info, dict) or "checksum" not in info:
            raise StoreError(f"{source}: array {name} has no recorded checksum; nothing imported")
        try:
            actual = array_checksum(group[name])  # type: ignore[arg-type]
        except Exception as exc:  # a missing or undecodable chunk
            raise StoreError(f"{source}: array {name} is unreadable ({first_line(exc)})") from None
        if actual != info["checksum"]:
            raise StoreError(f"{source}: array {name} fails its checksum; nothing imported")
