"""Export artifacts as self-describing files, and import them into another store.

An export is one tar file per artifact, `<key>.gameforge.tar`: `manifest.json` (format, key,
and the artifact's full lineage metadata with per-array checksums) plus the Zarr group under
`<key>/`. Chunks are already compressed by Zarr (zstd), so the tar itself is not (a compressed
one imports too). Import checks that the key matches the recorded stage, version, parameters
and inputs, and bounds the archive by its manifest before anything is written or allocated: only
the members the declared arrays put there (their zarr.json and chunk keys), none larger than its
array's chunks can need, the declared arrays within hard caps. It then copies the members in
blocks into a local temporary folder, counting bytes as they come, re-verifies every checksum,
and only then takes the key's lock and publishes it into the store, the group's `zarr.json`
last (the store's commit, on a local disk and on an object store alike). A refused import
leaves nothing in the store.
"""

from __future__ import annotations

import hashlib
import io
import json
import lzma
import math
import re
import shutil
import socket
import tarfile
import tempfile
import uuid
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

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
MANIFEST = "manifest.json"
MAX_MANIFEST_BYTES = 64 << 20  # metadata with every curve of a long run stays far below this
# Hard caps on what an archive may claim, checked against the manifest before anything is read
# past it, written or allocated. The largest artifacts the paper presets write are a few GB
# (river-hs: 2.4 G hands of uint16, about 5 GB), in chunks of at most tens of MB.
MAX_ARTIFACT_BYTES = 64 << 30  # all declared arrays, raw: what staging and the store may get
MAX_BLOCK_BYTES = 1 << 30  # one decoded chunk, or one row of chunks the checksum reads at once
MAX_CHUNKS = 1 << 20  # chunks of all arrays: the checksum reads each (fill-value ones too)
# A stored chunk is its raw bytes compressed (zstd) plus a crc32c; incompressible data comes
# out slightly larger: zstd's worst case adds raw/256 + 64 bytes plus a frame header, and the
# crc 4 bytes. A chunk file may hold its raw size plus twice zstd's margin and 1 KiB.
CHUNK_SLACK_DIVISOR = 128
CHUNK_SLACK_BYTES = 1 << 10
ARRAY_DOC_BYTES = 64 << 10  # an array's zarr.json (zarr writes about 1 KB)
READ_BLOCK = 1 << 20  # members are copied in blocks of this, never read whole
_KEY = re.compile(rf"[a-z0-9][a-z0-9-]*-[0-9a-f]{{{KEY_HASH_CHARS}}}")
_ARRAY_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*")
_CHUNK_INDEX = re.compile(r"0|[1-9][0-9]{0,18}")
_PLAIN_FILE = (tarfile.REGTYPE, tarfile.AREGTYPE)  # not sparse, links or devices
# what reading a damaged or truncated archive raises (a bad gzip stream: OSError or zlib.error)
_READ_ERRORS = (tarfile.TarError, OSError, EOFError, ValueError, zlib.error, lzma.LZMAError)


def _stream(
    tar: tarfile.TarFile, member: tarfile.TarInfo, limit: int, path: Path, sink: Any
) -> int:
    """Copy a member's bytes to `sink` in blocks, counting them as they come; refuse (StoreError)
    past `limit` or on a damaged archive. Returns the bytes copied."""
    count = 0
    try:
        source = tar.extractfile(member)
        if source is None:
            raise StoreError(f"{path}: member {member.name!r} is not a file; nothing imported")
        with source:
            while block := source.read(min(READ_BLOCK, limit + 1 - count)):
                count += len(block)
                if count > limit:
                    raise StoreError(
                        f"{path}: member {member.name!r} holds more than the {limit:,} bytes "
                        "its manifest allows; nothing imported"
                    )
                sink(block)
    except _READ_ERRORS as exc:
        raise StoreError(
            f"{path}: cannot read member {member.name!r} ({first_line(exc)}); nothing imported"
        ) from None
    return count


def _manifest(tar: tarfile.TarFile, path: Path) -> tuple[str, dict[str, Any], int]:
    """The (key, metadata, manifest size) an export declares in its first member, checked for
    shape; StoreError if malformed."""
    try:
        member = tar.next()
    except _READ_ERRORS as exc:
        raise StoreError(f"{path}: no readable manifest.json ({first_line(exc)})") from None
    if member is None or member.name != MANIFEST:
        raise StoreError(f"{path}: no readable manifest.json (an export begins with it)")
    if member.type not in _PLAIN_FILE or member.size > MAX_MANIFEST_BYTES:
        raise StoreError(f"{path}: manifest.json is not a file of at most 64 MiB")
    data = bytearray()
    _stream(tar, member, MAX_MANIFEST_BYTES, path, data.extend)
    try:
        manifest = json.loads(data)
    except ValueError:
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
    return key, meta, len(data)


def _declared_layout(name: str, info: Any, path: Path) -> tuple[list[int], list[int], int]:
    """(shape, chunks, item size) the manifest declares for array `name`; StoreError if any is
    missing or malformed."""
    info = info if isinstance(info, dict) else {}
    shape, chunks, dtype = info.get("shape"), info.get("chunks"), info.get("dtype")
    itemsize = 0
    if (
        isinstance(shape, list)
        and isinstance(chunks, list)
        and len(shape) == len(chunks)
        and all(type(s) is int and s >= 0 for s in shape)
        and all(type(c) is int and c >= 1 for c in chunks)
        and isinstance(dtype, str)
    ):
        try:
            parsed = np.dtype(dtype)
            itemsize = 0 if parsed.hasobject else parsed.itemsize
        except (TypeError, ValueError, SyntaxError):
            itemsize = 0
    if itemsize < 1:
        raise StoreError(
            f"{path}: array {name} has no valid shape, chunks and fixed-size dtype in the "
            "manifest; nothing imported"
        )
    return shape, chunks, itemsize


@dataclass(frozen=True)
class _Bounds:
    """What an archive may hold given its manifest: which members, and how many bytes each."""

    key: str
    grids: dict[str, tuple[int, ...]]  # array -> chunks along each axis
    chunk_bytes: dict[str, int]  # array -> the most one stored chunk may take
    group_bytes: int
    total: int  # all members together
    members: int  # files and folders together

    @classmethod
    def declared(cls, key: str, meta: dict[str, Any], manifest_size: int, path: Path) -> _Bounds:
        """The bounds of the arrays `meta` declares; StoreError if they pass the hard caps."""
        grids: dict[str, tuple[int, ...]] = {}
        chunk_bytes: dict[str, int] = {}
        raw_total = chunks_total = 0
        for name, info in meta.get("arrays", {}).items():
            if not (isinstance(name, str) and _ARRAY_NAME.fullmatch(name)) or name == GROUP_FILE:
                raise StoreError(
                    f"{path}: the manifest declares an array {name!r}; nothing imported"
                )
            shape, chunks, itemsize = _declared_layout(name, info, path)
            claim = f"array {name} claims shape {shape} in chunks {chunks} of {itemsize}-byte items"
            # the checksum reads a row of chunks at once: chunks[0] rows of the whole width
            block = itemsize * max(
                math.prod(chunks), chunks[0] * math.prod(shape[1:]) if shape else 1
            )
            if block > MAX_BLOCK_BYTES:
                raise StoreError(
                    f"{path}: {claim}: {block:,} bytes read at once, over the "
                    f"{MAX_BLOCK_BYTES:,} an import accepts; nothing imported"
                )
            grids[name] = tuple(-(-s // c) for s, c in zip(shape, chunks, strict=True))
            raw_total += itemsize * math.prod(shape)
            chunks_total += math.prod(grids[name])
            if raw_total > MAX_ARTIFACT_BYTES or chunks_total > MAX_CHUNKS:
                raise StoreError(
                    f"{path}: {claim}: the arrays would hold {raw_total:,} bytes in "
                    f"{chunks_total:,} chunks, over the {MAX_ARTIFACT_BYTES:,} bytes or "
                    f"{MAX_CHUNKS:,} chunks an import accepts; nothing imported"
                )
            raw = itemsize * math.prod(chunks)
            chunk_bytes[name] = raw + raw // CHUNK_SLACK_DIVISOR + CHUNK_SLACK_BYTES
        # the group's zarr.json is the manifest's metadata nested one level deeper: two more
        # spaces a line (four allowed), and a line holds at least two bytes
        group_bytes = 3 * manifest_size + ARRAY_DOC_BYTES
        total = group_bytes + sum(
            ARRAY_DOC_BYTES + math.prod(grids[n]) * chunk_bytes[n] for n in grids
        )
        files = 1 + len(grids) + chunks_total
        return cls(key, grids, chunk_bytes, group_bytes, total, 2 * files + 8)

    def limit(self, name: str, folder: bool) -> int | None:
        """The most bytes member `name` may hold (0 for a folder), or None if the manifest puts
        no such member in the artifact."""
        parts = name.split("/")
        if parts[0] != self.key:
            return None
        if len(parts) == 1:
            return 0 if folder else None
        if parts[1:] == [GROUP_FILE]:
            return None if folder else self.group_bytes
        grid = self.grids.get(parts[1])
        rest = parts[2:]
        if grid is None or (rest and rest[0] not in (GROUP_FILE, "c")):
            return None
        if not rest:
            return 0 if folder else None
        if rest == [GROUP_FILE]:
            return None if folder else ARRAY_DOC_BYTES
        indices = rest[1:]  # zarr's default chunk keys: c/<i>/<j>/..., one index per axis
        if len(indices) > len(grid) or not all(
            _CHUNK_INDEX.fullmatch(i) and int(i) < n for i, n in zip(indices, grid, strict=False)
        ):
            return None
        if len(indices) < len(grid):
            return 0 if folder else None
        return None if folder else self.chunk_bytes[parts[1]]


def _extract(tar: tarfile.TarFile, bounds: _Bounds, staging: Path, path: Path) -> None:
    """Copy the archive's members after the manifest into `staging`, each checked against
    `bounds` from its header before any of its bytes are read; StoreError at the first that
    the manifest does not declare or that holds more than its arrays can need."""
    written = count = 0
    while True:
        try:
            member = tar.next()
        except _READ_ERRORS as exc:
            raise StoreError(
                f"{path}: cannot read the archive ({first_line(exc)}); nothing imported"
            ) from None
        if member is None:
            return
        # tarfile keeps every header it reads (typeshed omits the list); a copy needs none
        tar.members.clear()  # type: ignore[attr-defined]
        count += 1
        if count > bounds.members:
            raise StoreError(
                f"{path}: more than the {bounds.members:,} members its manifest allows; "
                "nothing imported"
            )
        folder = member.isdir()
        if not folder and member.type not in _PLAIN_FILE:
            raise StoreError(
                f"{path}: member {member.name!r} is not a plain file; nothing imported"
            )
        limit = bounds.limit(member.name, folder)
        if limit is None:
            raise StoreError(
                f"{path}: member {member.name!r} is not part of the artifact its manifest "
                "declares; nothing imported"
            )
        if folder:
            continue  # folders are made as their files are copied
        if member.size > limit or written + member.size > bounds.total:
            raise StoreError(
                f"{path}: member {member.name!r} holds {member.size:,} bytes, more than the "
                f"{min(limit, bounds.total - written):,} its manifest allows; nothing imported"
            )
        target = staging.joinpath(*member.name.split("/"))
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            with open(target, "xb") as out:
                written += _stream(tar, member, limit, path, out.write)
        except FileExistsError:
            raise StoreError(
                f"{path}: member {member.name!r} appears twice; nothing imported"
            ) from None
        except OSError as exc:
            raise StoreError(
                f"{path}: cannot extract {member.name!r} ({first_line(exc)}); nothing imported"
            ) from None


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
        key, status = _import_one(store, Path(path))
        if trust and status == "imported":
            store.trust(key, "vouched", source=str(path))
        results.append((key, status))
    return results


def _import_one(store: ArtifactStore, path: Path) -> tuple[str, str]:
    """Check, stage and verify one export, then publish it; the store is not touched (not even
    the key's lock) until the staged copy has passed every check."""
    try:
        tar = tarfile.open(path, "r")  # noqa: SIM115 (closed by the with below)
    except _READ_ERRORS as exc:
        raise StoreError(f"{path}: not a gameforge export ({first_line(exc)})") from None
    with tar:
        key, meta, manifest_size = _manifest(tar, path)
        if store.exists(key):
            return key, "already present"
        bounds = _Bounds.declared(key, meta, manifest_size, path)
        staging = Path(tempfile.mkdtemp(prefix=f"{key}.import-"))
        try:
            _extract(tar, bounds, staging, path)
            _verify_extracted(staging / key, meta, path)
            imported = {**meta, "provenance": _import_provenance(path, meta)}
            (staging / key / GROUP_FILE).write_bytes(group_document(imported))
            with store.lock(key):
                if store.exists(key):
                    return key, "already present"
                store.install(key, staging / key)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    return key, "imported"


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
    """Refuse (StoreError) a staged artifact whose metadata or checksums differ from `meta`."""
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
            node = group[name]
        except Exception as exc:  # a missing or damaged zarr.json
            raise StoreError(f"{source}: array {name} is unreadable ({first_line(exc)})") from None
        # zarr allocates by the array's own zarr.json: it must claim what the manifest was
        # bounded by (shape, chunks, dtype), before any chunk is read
        declared = (info.get("shape"), info.get("chunks"), info.get("dtype"), None)
        if (
            not isinstance(node, zarr.Array)
            or (
                list(node.shape),
                list(node.chunks),
                str(node.dtype),
                node.shards,
            )
            != declared
        ):
            raise StoreError(
                f"{source}: array {name}'s zarr.json differs from its manifest; nothing imported"
            )
        try:
            actual = array_checksum(node)
        except Exception as exc:  # a missing or undecodable chunk
            raise StoreError(f"{source}: array {name} is unreadable ({first_line(exc)})") from None
        if actual != info["checksum"]:
            raise StoreError(f"{source}: array {name} fails its checksum; nothing imported")
