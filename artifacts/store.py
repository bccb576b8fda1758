"""The artifact store: content-addressed Zarr groups with atomic commit and chunk-level resume.

The store is a local directory or an object-store URL (`s3://bucket/prefix`; see
`files`). Layout under its root:

    objects/<key>/      artifacts (Zarr v3 groups), built in place; the group's own `zarr.json`,
                        which carries gameforge's metadata, is written last and is the commit
    partial/<key>/      a build's bookkeeping: finished chunks in `done/`, resumable state of
                        iterative work in `checkpoints/`
    locks/<key>         the one writer of <key>: a flock (local) or lease files (object store)
    runs/               run records (see `runs`)
    trash/              local removals are renamed here first, then deleted

A writer holds the key's lock, creates each array under `objects/<key>/` and records each
finished chunk with a marker (a chunk equal to the fill value is never written by Zarr, so
chunk files cannot tell completeness). It commits by computing checksums and creating the
group's `zarr.json` only if absent, atomically (a hard link locally, a conditional PUT on an
object store). Readers require that file, so they see a whole artifact or none, and no key can
be committed twice. A killed writer leaves its arrays and markers, which the next writer resumes
from and `gc` removes.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import io
import json
import os
import socket
import time
from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from gameforge.artifacts.errors import CorruptedArtifact, StoreError, Untrusted
from gameforge.artifacts.files import (
    LockLost,
    LockTimeout,
    OnWait,
    StorageUnavailable,
    StoreFiles,
    first_line,
)
from gameforge.artifacts.keys import artifact_key

if TYPE_CHECKING:  # zarr is imported where arrays are touched: listings need only JSON
    import zarr

META_ATTR = "gameforge"
GROUP_FILE = "zarr.json"
OBJECTS, PARTIAL, LOCKS, TRUST = "objects", "partial", "locks", "trust"
DONE_DIR = "done"
CHECKPOINT_DIR = "checkpoints"
ATTEMPTS_FILE = "attempts.json"  # beside the checkpoints: each build process's time so far
RECIPE_FILE = "recipe.json"  # what an unfinished build computes, and the code that started it
RECIPE_FIELDS = ("stage", "version", "params", "inputs", "code_version")
LEGACY_DATA_DIR = "data"  # where builds lived before they moved in place (never resumed)
DEFAULT_STORE = "store"


def default_root() -> str:
    """The store: $GAMEFORGE_STORE (a path or an fsspec URL), else ./store."""
    return os.environ.get("GAMEFORGE_STORE", DEFAULT_STORE)


@functools.cache
def gameforge_version() -> str:
    """The installed gameforge package's version."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("gameforge")
    except PackageNotFoundError:
        return "unknown"


def committed_meanwhile(key: str) -> StoreError:
    """The error of a writer that finds `key` committed by another: theirs is kept."""
    return StoreError(f"{key} was committed by another writer meanwhile; kept theirs")


def utc_now() -> str:
    """The current UTC time, ISO 8601 to the second (what the store records)."""
    return datetime.now(UTC).isoformat(timespec="seconds")


def array_checksum(array: zarr.Array) -> str:
    """blake2b of the array's decoded bytes, chunk row by chunk row (independent of codecs)."""
    digest = hashlib.blake2b(digest_size=16)
    digest.update(repr((tuple(array.shape), str(array.dtype))).encode())
    step = array.chunks[0] if array.ndim else 1
    if array.ndim == 0:
        digest.update(np.ascontiguousarray(array[...]).tobytes())
        return digest.hexdigest()
    for start in range(0, array.shape[0], step):
        block = np.ascontiguousarray(array[start : start + step])
        digest.update(block.tobytes())
    return digest.hexdigest()


def storage_keys(array: zarr.Array) -> Iterator[str]:
    """The storage key of every chunk of `array` (of every shard, for a sharded array)."""
    import itertools
    import math

    grid = array.shards or array.chunks
    counts = [math.ceil(size / step) for size, step in zip(array.shape, grid, strict=True)]
    for coords in itertools.product(*(range(n) for n in counts)):
        yield array.metadata.encode_chunk_key(coords)


def absent_chunks(files: StoreFiles, folder: str, array: zarr.Array) -> list[str]:
    """Storage keys of `array`'s chunks with no file under `folder` (its store-relative path)."""
    present = set(files.files_under(folder))
    return [name for name in storage_keys(array) if name not in present]


def _json_default(value: Any) -> Any:
    return value.item() if hasattr(value, "item") else str(value)


def group_document(meta: dict[str, Any]) -> bytes:
    """The bytes of a committed artifact's `zarr.json`: a Zarr v3 group carrying `meta`."""
    document = {
        "zarr_format": 3,
        "node_type": "group",
        "attributes": {META_ATTR: meta},
    }
    return json.dumps(document, indent=2, default=_json_default).encode()


@dataclass(frozen=True)
class ArtifactInfo:
    """One entry of `ls`: where an artifact stands."""

    key: str
    stage: str
    status: str  # "complete" or "partial"
    bytes: int
    created: str | None
    path: str

    def as_dict(self) -> dict[str, Any]:
        """Plain dict for JSON output."""
        return asdict(self)


@dataclass(frozen=True)
class Build:
    """Where chunk tasks write one artifact under construction (picklable, for Dask workers)."""

    store: str  # the store's location: a local path or a URL
    key: str

    @property
    def files(self) -> StoreFiles:
        """The store's files."""
        return StoreFiles(self.store)

    def array_url(self, name: str) -> str:
        """The address of one array of the artifact (for zarr)."""
        return self.files.url(f"{OBJECTS}/{self.key}/{name}")

    def refuse_if_committed(self) -> None:
        """Raise if the artifact was committed meanwhile: a writer that lost its lock to
        another, which finished, must not write into the published artifact."""
        if self.files.exists(f"{OBJECTS}/{self.key}/{GROUP_FILE}"):
            raise committed_meanwhile(self.key)

    def done_dir(self, name: str) -> str:
        """Store-relative folder of the finished-chunk markers of array `name`."""
        return f"{PARTIAL}/{self.key}/{DONE_DIR}/{name}"


class Artifact:
    """A committed artifact opened read-only."""

    def __init__(self, store: ArtifactStore, key: str):
        self.store = store
        self.key = key
        self._rel = f"{OBJECTS}/{key}"
        self.url = store.files.url(self._rel)  # a local path or a URL: what zarr opens anywhere
        try:  # the group's zarr.json holds the metadata: read without importing zarr
            document = json.loads(store.files.read_bytes(f"{self._rel}/{GROUP_FILE}"))
            self.meta: dict[str, Any] = dict(document["attributes"][META_ATTR])
        except Exception as exc:  # unreadable, not JSON, or without gameforge's metadata
            raise CorruptedArtifact(key, f"cannot read its metadata ({exc})", True) from exc
        self._group: zarr.Group | None = None
        self._complete: set[str] = set()  # arrays whose chunks were all found

    @property
    def group(self) -> zarr.Group:
        """The artifact's Zarr group, opened read-only on first use."""
        if self._group is None:
            import zarr

            try:
                self._group = zarr.open_group(self.url, mode="r")
            except Exception as exc:  # zarr raises several types for a damaged group
                raise CorruptedArtifact(self.key, f"cannot open its arrays ({exc})") from exc
        return self._group

    def array_url(self, name: str) -> str:
        """The address of one array (for zarr in a worker process)."""
        return self.store.files.url(f"{self._rel}/{name}")

    def __getitem__(self, name: str) -> zarr.Array:
        """One array of the artifact (its reads check each chunk's checksum, where stored)."""
        try:
            node = self.group[name]
        except KeyError:
            names = ", ".join(self.array_names())
            raise StoreError(f"artifact {self.key} has no array {name!r} (has: {names})") from None
        except Exception as exc:  # the array's own zarr.json is damaged
            raise CorruptedArtifact(
                self.key, f"cannot read the metadata of array {name!r} ({first_line(exc)})"
            ) from None
        import zarr

        from gameforge.artifacts.checked import CheckedArray

        assert isinstance(node, zarr.Array)
        self._require_chunks(name, node)
        return CheckedArray.wrap(node, self.key, name)

    def missing_chunks(self, name: str, node: zarr.Array | None = None) -> list[str]:
        """Chunks of array `name` stored at commit and gone now (zarr would read them as fill
        values); empty for an artifact committed before chunks were recorded."""
        info = self.meta.get("arrays", {}).get(name) or {}
        if "absent_chunks" not in info:
            return []
        if node is None:
            import zarr

            found = self.group[name]
            assert isinstance(found, zarr.Array)
            node = found
        absent_at_commit = set(info["absent_chunks"])
        gone = absent_chunks(self.store.files, f"{self._rel}/{name}", node)
        return [chunk for chunk in gone if chunk not in absent_at_commit]

    def _require_chunks(self, name: str, node: zarr.Array | None = None) -> None:
        if name in self._complete:
            return
        gone = self.missing_chunks(name, node)
        if gone:
            more = f" and {len(gone) - 1} more" if len(gone) > 1 else ""
            raise CorruptedArtifact(
                self.key, f"array {name!r} is missing its chunk {gone[0]}{more}"
            )
        self._complete.add(name)

    def require_complete(self) -> None:
        """Raise `CorruptedArtifact` if any recorded array or any stored chunk of one is gone."""
        names = set(self.array_names())
        for name in sorted(self.meta.get("arrays", {})):
            if name not in names:
                raise CorruptedArtifact(self.key, f"array {name!r} is gone")
            self._require_chunks(name)

    def array_names(self) -> list[str]:
        """Names of the arrays in this artifact."""
        try:
            return sorted(name for name, _ in self.group.arrays())
        except Exception as exc:  # an array's own zarr.json is damaged
            raise CorruptedArtifact(
                self.key, f"cannot read the metadata of its arrays ({first_line(exc)})"
            ) from None

    def bytes(self) -> int:
        """Bytes the artifact takes in the store."""
        return self.store.files.size(self._rel)

    @property
    def stage(self) -> str:
        """The stage that produced this artifact."""
        return str(self.meta["stage"])

    @property
    def params(self) -> dict[str, Any]:
        """The stage parameters this artifact was built with."""
        return dict(self.meta["params"])

    @property
    def inputs(self) -> dict[str, str]:
        """Input name -> key of the upstream artifact."""
        return dict(self.meta.get("inputs", {}))


class ArtifactWriter:
    """Builds one artifact in place under the key's lock; `commit()` publishes it."""

    def __init__(
        self, store: ArtifactStore, key: str, meta: dict[str, Any], held: Any = None
    ) -> None:
        self.store = store
        self.key = key
        self.build = Build(store.location, key)
        self.meta = dict(meta)
        self.started = time.time()
        self._cpu_started = time.process_time()
        self._held = held
        files = store.files
        self._partial = f"{PARTIAL}/{key}"
        self._data = f"{OBJECTS}/{key}"
        if files.exists(f"{self._partial}/{LEGACY_DATA_DIR}"):
            # a build from before in-place builds: its chunk markers describe other files
            files.remove_tree(self._partial)
        self.resumed = bool(self.array_names()) or files.exists(self._partial)
        self._earlier = self._earlier_attempts()
        self._recipe_noted = False

    @contextlib.contextmanager
    def timed_part(self, part: str) -> Iterator[None]:
        """Count the seconds inside the block towards a part of the build that has its own time
        model (stages/timing.py), recorded beside `duration_s` as `part_seconds`."""
        started = time.perf_counter()
        try:
            yield
        finally:
            parts = self.meta.setdefault("part_seconds", {})
            parts[part] = round(parts.get(part, 0.0) + time.perf_counter() - started, 3)

    def array_url(self, name: str) -> str:
        """The address of one array being written (for zarr in a worker process)."""
        return self.build.array_url(name)

    def array_names(self) -> list[str]:
        """Names of the arrays created so far."""
        return [name for name in self.store.files.listdir(self._data) if self.has_array(name)]

    def has_array(self, name: str) -> bool:
        """True if array `name` was created (by this or an earlier, killed writer)."""
        return self.store.files.exists(f"{self._data}/{name}/{GROUP_FILE}")

    def delete_array(self, name: str) -> None:
        """Drop an array the result does not keep (scratch work) and its chunk records."""
        self.store.files.purge(f"{self._data}/{name}")
        self.clear_done(name)

    def write_arrays(self, arrays: Mapping[str, np.ndarray]) -> None:
        """Write each array whole, as one chunk: tables, curves, weights and other small results."""
        for name, value in arrays.items():
            value = np.ascontiguousarray(value)
            chunks = value.shape if value.size else tuple(1 for _ in value.shape)
            self.array(name, value.shape, value.dtype, chunks=chunks)[...] = value

    def __getitem__(self, name: str) -> zarr.Array:
        """One array written so far."""
        import zarr

        return zarr.open_array(self.array_url(name), mode="r+")

    def array(
        self,
        name: str,
        shape: tuple[int, ...],
        dtype: Any,
        chunks: tuple[int, ...],
        fill_value: Any = 0,
    ) -> zarr.Array:
        """Create the array, or reopen it on resume when its shape, dtype and chunks agree."""
        import zarr

        from gameforge.artifacts.checked import CHUNK_CODECS

        self.build.refuse_if_committed()
        self._note_recipe()
        if self.has_array(name):
            existing = self[name]
            same = (
                tuple(existing.shape) == tuple(shape)
                and np.dtype(existing.dtype) == np.dtype(dtype)
                and tuple(existing.chunks) == tuple(chunks)
            )
            if same:
                return existing
        # A new array (or a new layout) holds none of the work that markers may still name:
        # markers outliving their array (set aside, deleted) would pass fill values as results.
        self.clear_done(name)
        return zarr.create_array(
            self.array_url(name),
            shape=shape,
            dtype=dtype,
            chunks=chunks,
            fill_value=fill_value,
            compressors=CHUNK_CODECS,
            overwrite=True,
        )

    def done_chunks(self, name: str) -> set[int]:
        """Chunk ids of `name` recorded as finished (by this or an earlier, killed writer)."""
        return done_chunks(self.build, name)

    def save_checkpoint(self, name: str, arrays: dict[str, np.ndarray]) -> None:
        """Atomically save resumable state (e.g. k-means) next to the partial artifact."""
        self._note_recipe()
        buffer = io.BytesIO()
        np.savez(buffer, **arrays)  # type: ignore[arg-type]
        self.store.files.write(f"{self._partial}/{CHECKPOINT_DIR}/{name}.npz", buffer.getvalue())
        self._record_attempt()

    def _note_recipe(self) -> None:
        """Record beside the build, before its first array or checkpoint, what it computes and
        the code that started it: a killed build then says which code resumes it (a later
        stage version computes another key for the same run)."""
        if self._recipe_noted:
            return
        path = f"{self._partial}/{RECIPE_FILE}"
        if not self.store.files.exists(path):
            recipe = {name: self.meta.get(name) for name in RECIPE_FIELDS}
            self.store.files.write(path, json.dumps(recipe, indent=1).encode())
        self._recipe_noted = True

    def _this_attempt(self) -> dict[str, Any]:
        return {
            "host": socket.gethostname(),
            "started": datetime.fromtimestamp(self.started, UTC).isoformat(timespec="seconds"),
            "wall_s": round(time.time() - self.started, 3),
            "cpu_s": round(time.process_time() - self._cpu_started, 3),
        }

    def _earlier_attempts(self) -> list[dict[str, Any]]:
        """Killed builds' times, each up to its last checkpoint (the work kept)."""
        try:
            data = self.store.files.read_bytes(f"{self._partial}/{ATTEMPTS_FILE}")
        except FileNotFoundError:
            return []
        return list(json.loads(data))

    def _record_attempt(self) -> None:
        """Note this build's time so far beside its checkpoints, so that a build resumed over
        several sessions reports the time of all of them."""
        attempts = [*self._earlier, self._this_attempt()]
        self.store.files.write(f"{self._partial}/{ATTEMPTS_FILE}", json.dumps(attempts).encode())

    def _all_attempts(self) -> dict[str, Any]:
        """For a build resumed from checkpoints: how many processes built it and their summed
        wall and CPU seconds (killed ones counted to their last checkpoint); else nothing."""
        if not self._earlier:
            return {}
        attempts = [*self._earlier, self._this_attempt()]
        return {
            "attempts": len(attempts),
            "wall_s_all_attempts": round(sum(a["wall_s"] for a in attempts), 3),
            "cpu_s_all_attempts": round(sum(a["cpu_s"] for a in attempts), 3),
        }

    def load_checkpoint(self, name: str) -> dict[str, np.ndarray] | None:
        """State saved by `save_checkpoint` (by this or a killed writer), or None."""
        try:
            data = self.store.files.read_bytes(f"{self._partial}/{CHECKPOINT_DIR}/{name}.npz")
        except FileNotFoundError:
            return None
        with np.load(io.BytesIO(data), allow_pickle=False) as saved:
            return {k: saved[k] for k in saved.files}

    def has_checkpoint(self, name: str) -> bool:
        """Whether `save_checkpoint` saved `name` (in this or a killed writer)."""
        return self.store.files.exists(f"{self._partial}/{CHECKPOINT_DIR}/{name}.npz")

    def remove_checkpoint(self, name: str) -> None:
        """Drop state saved by `save_checkpoint` once a later checkpoint supersedes it."""
        self.store.files.remove(f"{self._partial}/{CHECKPOINT_DIR}/{name}.npz")

    def clear_done(self, name: str) -> None:
        """Forget finished-chunk records of one array."""
        self.store.files.remove_tree(self.build.done_dir(name))

    def commit(self, summary: dict[str, Any] | None = None) -> Artifact:
        """Record checksums and lineage in the group's zarr.json, created last: the commit."""
        from gameforge.artifacts.checked import has_chunk_checksums

        arrays = {}
        for name in sorted(self.array_names()):
            array = self[name]
            arrays[name] = {
                "shape": list(array.shape),
                "dtype": str(array.dtype),
                "chunks": list(array.chunks),
                "checksum": array_checksum(array),
                "chunk_checksums": has_chunk_checksums(array),
                # chunks equal to the fill value are never written: recorded so that a chunk
                # file lost later is told from them and never read as fill values
                "absent_chunks": absent_chunks(self.store.files, f"{self._data}/{name}", array),
            }
        finished = time.time()
        meta = dict(self.meta)
        meta.update(
            {
                "key": self.key,
                "created": datetime.fromtimestamp(self.started, UTC).isoformat(timespec="seconds"),
                "finished": utc_now(),
                "duration_s": round(finished - self.started, 3),
                "host": socket.gethostname(),
                "resumed": self.resumed,
                "arrays": arrays,
                "summary": summary or {},
                "provenance": {
                    "kind": "built",
                    "gameforge_version": gameforge_version(),
                    "code_version": self.meta.get("code_version"),
                    "host": socket.gethostname(),
                    "started": datetime.fromtimestamp(self.started, UTC).isoformat(
                        timespec="seconds"
                    ),
                    "finished": utc_now(),
                    "wall_s": round(finished - self.started, 3),
                    # this process's threads (a local Dask cluster's too), not other processes'
                    "cpu_s": round(time.process_time() - self._cpu_started, 3),
                    **self._all_attempts(),
                },
            }
        )
        try:
            if self._held is not None:  # a writer whose lease lapsed must not commit
                self._held.check()
        except LockLost as exc:
            raise StoreError(str(exc)) from None
        if not self.store.files.create(f"{self._data}/{GROUP_FILE}", group_document(meta)):
            raise committed_meanwhile(self.key)
        self.store.files.remove_tree(self._partial)
        return self.store.open(self.key)


def done_chunks(build: Build, name: str) -> set[int]:
    """Finished chunk ids of array `name` of an artifact being built."""
    return {int(n) for n in build.files.listdir(build.done_dir(name)) if n.isdigit()}


def write_chunk(build: Build, name: str, chunk_id: int, data: np.ndarray) -> None:
    """Write rows of chunk `chunk_id` (along axis 0) of an array, then record it as finished.

    Called by chunk tasks, possibly in other processes or machines: each task owns whole chunks,
    and the marker is written only after the data, so a killed task leaves its chunk unrecorded.
    """
    import zarr

    build.refuse_if_committed()
    array = zarr.open_array(build.array_url(name), mode="r+")
    step = array.chunks[0]
    start = chunk_id * step
    array[start : start + data.shape[0]] = data
    mark_chunk_done(build, name, chunk_id)


def mark_chunk_done(build: Build, name: str, chunk_id: int) -> None:
    """Record chunk `chunk_id` of array `name` as finished."""
    build.files.touch(f"{build.done_dir(name)}/{chunk_id}")


class ArtifactStore:
    """Content-addressed artifacts under a local directory or an fsspec URL (see above)."""

    def __init__(self, root: str | os.PathLike[str] | None = None):
        location = os.fspath(root) if root is not None else default_root()
        try:
            self.files = StoreFiles(location)
            self.files.check_reachable()
        except StorageUnavailable as exc:
            raise StoreError(str(exc)) from None
        self.location = self.files.location
        self.remote = self.files.remote

    def __repr__(self) -> str:
        return f"ArtifactStore({self.location!r})"

    # -- local paths (a local store only: tests and tools that touch files) -------------------
    @property
    def root(self) -> Path:
        """The root folder of a local store."""
        if self.remote:
            raise StoreError(f"store {self.location} is not a local folder")
        return Path(self.location)

    def object_path(self, key: str) -> Path:
        """Where a committed artifact lives in a local store."""
        return self.root / OBJECTS / key

    def partial_path(self, key: str) -> Path:
        """Where a local build keeps its chunk markers and checkpoints."""
        return self.root / PARTIAL / key

    # -- reading -------------------------------------------------------------------------------
    def exists(self, key: str) -> bool:
        """True if a committed artifact has this key (one metadata read)."""
        return self.files.exists(f"{OBJECTS}/{key}/{GROUP_FILE}")

    def building_now(self, key: str) -> bool:
        """True if `key` has a build started and not committed (running or killed)."""
        return self.files.exists(f"{PARTIAL}/{key}") or (
            self.has_files(key) and not self.exists(key)
        )

    def unfinished(self, key: str) -> bool:
        """True if `key` is a build started and never committed (running now or killed)."""
        return not self.exists(key) and self.building_now(key)

    def build_progress(self, key: str) -> dict[str, tuple[int, int]]:
        """An unfinished build's chunked arrays: name -> (chunks finished, chunks in all)."""
        progress = {}
        for name in self.files.listdir(f"{PARTIAL}/{key}/{DONE_DIR}"):
            try:
                doc = json.loads(self.files.read_bytes(f"{OBJECTS}/{key}/{name}/{GROUP_FILE}"))
                rows = int(doc["shape"][0])
                step = int(doc["chunk_grid"]["configuration"]["chunk_shape"][0])
            except (OSError, ValueError, KeyError, TypeError, IndexError):
                continue  # no array: its markers are stale and the next writer clears them
            total = -(-rows // max(step, 1))
            done = len(self.files.listdir(f"{PARTIAL}/{key}/{DONE_DIR}/{name}"))
            progress[name] = (min(done, total), total)
        return progress

    def build_recipe(self, key: str) -> dict[str, Any] | None:
        """An unfinished build's recipe as its writer recorded it (stage, version, parameters,
        inputs, code); None for a build started before recipes were recorded."""
        try:
            return dict(json.loads(self.files.read_bytes(f"{PARTIAL}/{key}/{RECIPE_FILE}")))
        except (FileNotFoundError, ValueError):
            return None

    def older_builds(
        self, stage: str, version: int, params: dict[str, Any], inputs: dict[str, str]
    ) -> list[tuple[int, str]]:
        """Unfinished builds of the same parameters and inputs by an earlier version of the
        stage, as (version, key): work this version will not resume, since the version is in
        the key. Found by their keys, so builds from before recipes were recorded count too."""
        found = []
        for earlier in range(version - 1, 0, -1):
            key = artifact_key(stage, earlier, params, inputs)
            if self.unfinished(key):
                found.append((earlier, key))
        return found

    def has_files(self, key: str) -> bool:
        """True if anything is stored under `objects/<key>` (committed or not)."""
        return bool(self.files.listdir(f"{OBJECTS}/{key}"))

    def open(self, key: str) -> Artifact:
        """Open a committed artifact read-only; a unique key prefix is accepted."""
        return Artifact(self, self.resolve(key))

    def resolve(self, key: str) -> str:
        """The full key for a key or a unique prefix of one."""
        if self.exists(key):
            return key
        matches = [m for m in self.files.listdir(OBJECTS) if m.startswith(key)]
        if len(matches) == 1:
            return matches[0]
        if not matches:
            raise StoreError(f"no artifact {key!r} in store {self.location}")
        raise StoreError(f"key prefix {key!r} is ambiguous: {', '.join(matches[:5])}")

    def keys(self) -> list[str]:
        """Keys of all committed artifacts."""
        if self.remote:  # one concurrent batch of metadata reads, not a request per key
            return sorted(self.metas())
        return [k for k in self.files.listdir(OBJECTS) if self.exists(k)]

    def metas(self) -> dict[str, dict[str, Any] | None]:
        """Every committed artifact's metadata (None where it cannot be read), read at once."""
        names = self.files.listdir(OBJECTS)
        documents = self.files.read_many([f"{OBJECTS}/{n}/{GROUP_FILE}" for n in names])
        found: dict[str, dict[str, Any] | None] = {}
        for name in names:
            document = documents.get(f"{OBJECTS}/{name}/{GROUP_FILE}")
            if document is None:
                continue  # not committed
            try:
                found[name] = dict(json.loads(document)["attributes"][META_ATTR])
            except (ValueError, KeyError, TypeError):
                found[name] = None
        return found

    def entries(self, metas: dict[str, dict[str, Any] | None] | None = None) -> list[ArtifactInfo]:
        """Every committed and partial artifact (`metas`: from `metas()`, if already read)."""
        infos = []
        metas = self.metas() if metas is None else metas
        sizes = self.files.sizes_under(OBJECTS)
        for key, meta in sorted(metas.items()):
            stage, created = (meta.get("stage", "?"), meta.get("created")) if meta else ("?", None)
            where = self.files.url(f"{OBJECTS}/{key}")
            infos.append(ArtifactInfo(key, stage, "complete", sizes.get(key, 0), created, where))
        building = self.files.sizes_under(PARTIAL)
        for key in sorted(set(building) | (set(sizes) - set(metas))):
            size = building.get(key, 0) + (0 if key in metas else sizes.get(key, 0))
            stage = key.rsplit("-", 1)[0]
            where = self.files.url(f"{OBJECTS}/{key}")
            infos.append(ArtifactInfo(key, stage, "partial", size, None, where))
        return infos

    def dependents(self, key: str) -> list[str]:
        """Keys of committed artifacts that name `key` as an input."""
        return sorted(
            other
            for other, meta in self.metas().items()
            if other != key and meta and key in dict(meta.get("inputs", {})).values()
        )

    # -- trust ---------------------------------------------------------------------------------
    def trust_record(self, key: str) -> dict[str, Any] | None:
        """How an artifact came to be trusted (vouched for, or recomputed), or None."""
        try:
            return dict(json.loads(self.files.read_bytes(f"{TRUST}/{key}.json")))
        except (FileNotFoundError, ValueError):
            return None

    def trusted(self, key: str, meta: dict[str, Any] | None = None) -> bool:
        """True unless the artifact was imported and nobody has trusted it since (artifacts
        from before provenance was recorded count as built here); `meta`, if already read."""
        meta = self.open(key).meta if meta is None else meta
        provenance = meta.get("provenance") or {}
        return provenance.get("kind") != "imported" or self.trust_record(key) is not None

    def require_trusted(self, key: str, meta: dict[str, Any] | None = None) -> None:
        """Raise Untrusted (one line, the two ways on) for an untrusted import."""
        if not self.trusted(key, meta):
            raise Untrusted(key)

    def trust(self, key: str, how: str, **detail: Any) -> dict[str, Any]:
        """Record that `key` is trusted: `how` is "vouched" or "recomputed"; returns the record."""
        full = self.resolve(key)
        record = {"key": full, "how": how, "when": utc_now(), "host": socket.gethostname()}
        record.update(detail)
        self.files.write(f"{TRUST}/{full}.json", json.dumps(record, indent=1).encode())
        return record

    # -- writing -------------------------------------------------------------------------------
    @contextlib.contextmanager
    def building(
        self,
        stage: str,
        version: int,
        params: dict[str, Any],
        inputs: dict[str, str],
        extra_meta: dict[str, Any] | None = None,
        force: bool = False,
        on_wait: Any = None,
        wait_timeout: float | None = None,
    ) -> Iterator[ArtifactWriter | None]:
        """Hold the key's lock and yield a writer, or None if the artifact already exists.

        A second process asking for the same key waits for the lock and then finds the
        committed artifact (None: reuse it). `force` rebuilds from scratch.
        """
        key = artifact_key(stage, version, params, inputs)
        meta = {
            "stage": stage,
            "version": version,
            "params": params,
            "inputs": inputs,
            **(extra_meta or {}),
        }
        with self.lock(key, on_wait=on_wait, timeout=wait_timeout) as held:
            if self.exists(key) and not force:
                yield None
                return
            if force:
                self._discard(key)
            yield ArtifactWriter(self, key, meta, held)

    @contextlib.contextmanager
    def lock(self, key: str, on_wait: OnWait = None, timeout: float | None = None) -> Iterator[Any]:
        """Exclusive per-key lock across processes (and machines, on an object store)."""
        try:
            with self.files.lock(f"{LOCKS}/{key}", on_wait=on_wait, timeout=timeout) as held:
                yield held
        except LockTimeout as exc:
            raise StoreError(
                f"{key} is being built by {exc.holder}; gave up waiting after {timeout or 0:.0f} s"
            ) from None

    def _discard(self, key: str) -> None:
        """Remove an artifact (committed or not), its build state and any trust in it (a later
        import of the same key starts untrusted); the caller holds the lock."""
        self.files.remove_tree(f"{OBJECTS}/{key}", first=GROUP_FILE)
        self.files.remove_tree(f"{PARTIAL}/{key}")
        self.files.remove(f"{TRUST}/{key}.json")

    def install(self, key: str, folder: Path) -> None:
        """Publish a checked local copy of an artifact (an import); caller holds the key's lock.

        Every file is written first and the group's zarr.json last, created only if absent.
        """
        rel = f"{OBJECTS}/{key}"
        self.files.remove_tree(rel)  # leftovers of a killed build or import of the same key
        names = sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())
        for name in names:
            if name != GROUP_FILE:
                self.files.copy_in(f"{rel}/{name}", folder / name)
        if not self.files.create(f"{rel}/{GROUP_FILE}", (folder / GROUP_FILE).read_bytes()):
            raise committed_meanwhile(key)

    def quarantine(self, key: str) -> str:
        """Set a (corrupted) artifact aside: locally into trash/ for inspection, which `gc`
        empties later; on an object store it is deleted. Says which, for the log."""
        full = self.resolve(key)
        with self.lock(full, timeout=0):
            if self.remote:
                self._discard(full)
                return "deleted (an object store keeps no trash)"
            target = self.files.set_aside(f"{OBJECTS}/{full}")
            self.files.remove(f"{TRUST}/{full}.json")
            self.files.remove_tree(f"{PARTIAL}/{full}")  # its markers name the arrays set aside
        return f"moved to {target}"

    # -- maintenance ---------------------------------------------------------------------------
    def remove(self, key: str, force: bool = False) -> str:
        """Delete a committed artifact; refuses while others depend on it, unless forced."""
        full = self.resolve(key)
        users = self.dependents(full)
        if users and not force:
            raise StoreError(
                f"{full} is an input of {', '.join(users)}; remove those first or use --force"
            )
        with self.lock(full, timeout=0):
            self._discard(full)
        return full

    def remove_unlocked(self, key: str) -> bool:
        """Delete a committed artifact unless a writer holds its key; False if one does."""
        try:
            with self.lock(key, timeout=0):
                self._discard(key)
        except StoreError:
            return False
        return True

    def gc(self) -> list[str]:
        """Remove builds no live process is working on, and leftover trash."""
        removed = []
        committed = set(self.keys())
        started = set(self.files.listdir(PARTIAL)) | (set(self.files.listdir(OBJECTS)) - committed)
        for key in sorted(started):
            try:
                with self.lock(key, timeout=0):
                    if key not in committed:
                        self.files.remove_tree(f"{OBJECTS}/{key}")
                    self.files.remove_tree(f"{PARTIAL}/{key}")
                    removed.append(key)
            except StoreError:
                continue  # a live writer holds it
        for name in self.files.listdir("trash"):
            self.files.purge(f"trash/{name}")
            removed.append(f"trash/{name}")
        return removed

    def verify(self, keys: list[str] | None = None) -> dict[str, list[str]]:
        """Re-check every array's checksum; key -> list of problems (empty when intact)."""
        report: dict[str, list[str]] = {}
        for key in keys if keys is not None else self.keys():
            problems: list[str] = []
            try:
                artifact = self.open(key)
                recorded = artifact.meta.get("arrays", {})
                for name, info in recorded.items():
                    try:
                        actual = array_checksum(artifact[name])
                    except CorruptedArtifact as exc:
                        problems.append(exc.problem)
                        continue
                    except Exception as exc:  # an undecodable chunk or array
                        problems.append(f"{name}: unreadable ({type(exc).__name__}: {exc})")
                        continue
                    if actual != info["checksum"]:
                        problems.append(f"{name}: checksum mismatch")
                problems += self.changed_inputs(artifact)
            except StoreError as exc:
                problems.append(str(exc))
            report[key] = problems
        return report

    def changed_inputs(self, artifact: Artifact) -> list[str]:
        """One line per stored input whose arrays differ from those `artifact` was built from
        (its recorded `input_checksums`; inputs no longer stored are not judged)."""
        lines = []
        for name, sums in sorted((artifact.meta.get("input_checksums") or {}).items()):
            source = artifact.inputs.get(name)
            if source is None or not self.exists(source):
                continue
            try:
                now = self.open(source).meta.get("arrays", {})
            except StoreError:
                continue  # the input's own verify reports it
            changed = sorted(a for a, c in sums.items() if (now.get(a) or {}).get("checksum") != c)
            if changed:
                lines.append(
                    f"built from another content of its input {name} ({source}): "
                    f"{', '.join(changed)} differ"
                )
        return lines

    def show(self, key: str) -> dict[str, Any]:
        """Lineage and metadata of an artifact, with its inputs' stages."""
        artifact = self.open(key)
        meta = dict(artifact.meta)
        meta["path"] = artifact.url
        meta["bytes"] = artifact.bytes()
        meta["dependents"] = self.dependents(artifact.key)
        return meta


def dumps(obj: Any) -> str:
    """JSON for CLI output (numpy scalars become plain numbers)."""
    return json.dumps(obj, indent=2, default=_json_default)
