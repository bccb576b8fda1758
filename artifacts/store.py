"""The artifact store: content-addressed Zarr groups with atomic commit and chunk-level resume.

Layout under the store root:

    objects/<key>/      committed artifacts (Zarr v3 groups); only complete ones ever appear here
    partial/<key>/      a build in progress: Zarr group in `data/`, finished chunks in `done/`,
                        resumable state of iterative work in `checkpoints/`
    locks/<key>.lock    flock held by the one process building <key>
    trash/              removals are renamed here first, then deleted

A writer builds in `partial/<key>`, records each finished chunk with a marker file (a chunk equal
to the fill value is never written by Zarr, so chunk files cannot tell completeness), then writes
checksums and lineage and renames `data/` into `objects/<key>` — one atomic rename. A killed
writer leaves only `partial/`, which the next writer resumes from and `gc` removes.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import json
import os
import shutil
import socket
import time
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from gameforge.artifacts.keys import artifact_key

if TYPE_CHECKING:  # zarr is imported where arrays are touched: listings need only JSON
    import zarr

META_ATTR = "gameforge"
DATA_DIR = "data"
DONE_DIR = "done"
CHECKPOINT_DIR = "checkpoints"
DEFAULT_STORE = "store"


class StoreError(RuntimeError):
    """A problem with the store or one of its artifacts, phrased for the user."""


class CorruptedArtifact(StoreError):
    """An artifact whose metadata or arrays cannot be read back as written."""

    def __init__(self, key: str, problem: str) -> None:
        super().__init__(
            f"artifact {key} is corrupted: {problem} (`gameforge artifacts repair {key}` "
            "rebuilds it)"
        )
        self.key, self.problem = key, problem


def default_root() -> Path:
    """The store root: $GAMEFORGE_STORE, else ./store."""
    return Path(os.environ.get("GAMEFORGE_STORE", DEFAULT_STORE))


def utc_now() -> str:
    """The current UTC time, ISO 8601 to the second (what the store records)."""
    return datetime.now(UTC).isoformat(timespec="seconds")


def _dir_bytes(path: Path) -> int:
    total = 0
    for dirpath, _dirs, files in os.walk(path):
        for name in files:
            with contextlib.suppress(OSError):
                total += os.stat(os.path.join(dirpath, name)).st_size
    return total


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
        return {
            "key": self.key,
            "stage": self.stage,
            "status": self.status,
            "bytes": self.bytes,
            "created": self.created,
            "path": self.path,
        }


class Artifact:
    """A committed artifact opened read-only."""

    def __init__(self, key: str, path: Path):
        self.key = key
        self.path = path
        try:  # the group's zarr.json holds the metadata: read without importing zarr
            document = json.loads((path / "zarr.json").read_text())
            self.meta: dict[str, Any] = dict(document["attributes"][META_ATTR])
        except Exception as exc:  # unreadable, not JSON, or without gameforge's metadata
            raise CorruptedArtifact(key, f"cannot read its metadata ({exc})") from exc
        self._group: zarr.Group | None = None

    @property
    def group(self) -> zarr.Group:
        """The artifact's Zarr group, opened read-only on first use."""
        if self._group is None:
            import zarr

            try:
                self._group = zarr.open_group(str(self.path), mode="r")
            except Exception as exc:  # zarr raises several types for a damaged group
                raise CorruptedArtifact(self.key, f"cannot open its arrays ({exc})") from exc
        return self._group

    def __getitem__(self, name: str) -> zarr.Array:
        """One array of the artifact (its reads check each chunk's checksum, where stored)."""
        try:
            node = self.group[name]
        except KeyError:
            names = ", ".join(self.array_names())
            raise StoreError(f"artifact {self.key} has no array {name!r} (has: {names})") from None
        import zarr

        from gameforge.artifacts.checked import CheckedArray

        assert isinstance(node, zarr.Array)
        return CheckedArray.wrap(node, self.key, name)

    def array_names(self) -> list[str]:
        """Names of the arrays in this artifact."""
        return sorted(name for name, _ in self.group.arrays())

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
    """Builds one artifact in `partial/<key>` under the key's lock; `commit()` publishes it."""

    def __init__(self, store: ArtifactStore, key: str, meta: dict[str, Any]):
        self.store = store
        self.key = key
        self.path = store.partial_path(key)
        self.meta = dict(meta)
        self.started = time.time()
        self.resumed = self.path.exists()
        (self.path / DONE_DIR).mkdir(parents=True, exist_ok=True)
        import zarr

        self.group = zarr.open_group(str(self.path / DATA_DIR), mode="a")

    def write_arrays(self, arrays: Mapping[str, np.ndarray]) -> None:
        """Write each array whole, as one chunk: tables, curves, weights and other small results."""
        for name, value in arrays.items():
            value = np.ascontiguousarray(value)
            chunks = value.shape if value.size else tuple(1 for _ in value.shape)
            self.array(name, value.shape, value.dtype, chunks=chunks)[...] = value

    def __getitem__(self, name: str) -> zarr.Array:
        """One array written so far."""
        node = self.group[name]
        assert not hasattr(node, "members")  # an array, not a group
        return node  # type: ignore[return-value]

    def array(
        self,
        name: str,
        shape: tuple[int, ...],
        dtype: Any,
        chunks: tuple[int, ...],
        fill_value: Any = 0,
    ) -> zarr.Array:
        """Create the array, or reopen it on resume when its shape, dtype and chunks agree."""
        from gameforge.artifacts.checked import CHUNK_CODECS

        if name in self.group:
            existing = self[name]
            same = (
                tuple(existing.shape) == tuple(shape)
                and np.dtype(existing.dtype) == np.dtype(dtype)
                and tuple(existing.chunks) == tuple(chunks)
            )
            if same:
                return existing
            # A layout change means the old partial work cannot be reused.
            self.clear_done(name)
        return self.group.create_array(
            name,
            shape=shape,
            dtype=dtype,
            chunks=chunks,
            fill_value=fill_value,
            compressors=CHUNK_CODECS,
            overwrite=True,
        )

    def done_chunks(self, name: str) -> set[int]:
        """Chunk ids of `name` recorded as finished (by this or an earlier, killed writer)."""
        return done_chunks(str(self.path), name)

    def save_checkpoint(self, name: str, arrays: dict[str, np.ndarray]) -> None:
        """Atomically save resumable state (e.g. k-means) next to the partial artifact."""
        folder = self.path / CHECKPOINT_DIR
        folder.mkdir(exist_ok=True)
        tmp = folder / f"{name}.tmp-{uuid.uuid4().hex[:8]}.npz"
        np.savez(tmp, **arrays)  # type: ignore[arg-type]
        os.replace(tmp, folder / f"{name}.npz")

    def load_checkpoint(self, name: str) -> dict[str, np.ndarray] | None:
        """State saved by `save_checkpoint` (by this or a killed writer), or None."""
        path = self.path / CHECKPOINT_DIR / f"{name}.npz"
        if not path.exists():
            return None
        with np.load(path, allow_pickle=False) as data:
            return {k: data[k] for k in data.files}

    def clear_done(self, name: str) -> None:
        """Forget finished-chunk records of one array."""
        shutil.rmtree(self.path / DONE_DIR / name, ignore_errors=True)

    def commit(self, summary: dict[str, Any] | None = None) -> Artifact:
        """Record checksums and lineage, then atomically move the artifact into `objects/`."""
        arrays = {}
        from gameforge.artifacts.checked import has_chunk_checksums

        for name, array in sorted(self.group.arrays()):
            arrays[name] = {
                "shape": list(array.shape),
                "dtype": str(array.dtype),
                "chunks": list(array.chunks),
                "checksum": array_checksum(array),
                "chunk_checksums": has_chunk_checksums(array),
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
            }
        )
        self.group.attrs[META_ATTR] = meta
        final = self.store.object_path(self.key)
        final.parent.mkdir(parents=True, exist_ok=True)
        if final.exists():  # only under --force: retire the old copy first
            self.store.retire(final)
        os.rename(self.path / DATA_DIR, final)
        self.store.retire(self.path)
        return Artifact(self.key, final)


def done_chunks(partial_path: str, name: str) -> set[int]:
    """Finished chunk ids of array `name` in a partial artifact."""
    folder = Path(partial_path) / DONE_DIR / name
    if not folder.exists():
        return set()
    return {int(p.name) for p in folder.iterdir() if p.name.isdigit()}


def write_chunk(partial_path: str, name: str, chunk_id: int, data: np.ndarray) -> None:
    """Write rows of chunk `chunk_id` (along axis 0) of an array, then record it as finished.

    Called by chunk tasks, possibly in other processes: each task owns whole chunks, and the
    marker is written only after the data, so a killed task leaves its chunk unrecorded.
    """
    import zarr

    array = zarr.open_array(str(Path(partial_path) / DATA_DIR / name), mode="r+")
    step = array.chunks[0]
    start = chunk_id * step
    array[start : start + data.shape[0]] = data
    mark_chunk_done(partial_path, name, chunk_id)


def mark_chunk_done(partial_path: str, name: str, chunk_id: int) -> None:
    """Record chunk `chunk_id` of array `name` as finished."""
    folder = Path(partial_path) / DONE_DIR / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / str(chunk_id)).touch()


class ArtifactStore:
    """A directory of content-addressed artifacts (see the module docstring for the layout)."""

    def __init__(self, root: str | os.PathLike[str] | None = None):
        self.root = Path(root) if root is not None else default_root()

    # -- paths ---------------------------------------------------------------------------------
    def object_path(self, key: str) -> Path:
        """Where a committed artifact lives."""
        return self.root / "objects" / key

    def partial_path(self, key: str) -> Path:
        """Where an artifact is built."""
        return self.root / "partial" / key

    def lock_path(self, key: str) -> Path:
        """The lock file of a key."""
        return self.root / "locks" / f"{key}.lock"

    # -- reading -------------------------------------------------------------------------------
    def exists(self, key: str) -> bool:
        """True if a committed artifact has this key (one metadata read)."""
        return (self.object_path(key) / "zarr.json").is_file()

    def open(self, key: str) -> Artifact:
        """Open a committed artifact read-only; a unique key prefix is accepted."""
        full = self.resolve(key)
        return Artifact(full, self.object_path(full))

    def resolve(self, key: str) -> str:
        """The full key for a key or a unique prefix of one."""
        if self.exists(key):
            return key
        objects = self.root / "objects"
        matches = sorted(p.name for p in objects.iterdir()) if objects.exists() else []
        matches = [m for m in matches if m.startswith(key)]
        if len(matches) == 1:
            return matches[0]
        if not matches:
            raise StoreError(f"no artifact {key!r} in store {self.root}")
        raise StoreError(f"key prefix {key!r} is ambiguous: {', '.join(matches[:5])}")

    def keys(self) -> list[str]:
        """Keys of all committed artifacts."""
        objects = self.root / "objects"
        if not objects.exists():
            return []
        return sorted(p.name for p in objects.iterdir() if (p / "zarr.json").is_file())

    def entries(self) -> list[ArtifactInfo]:
        """Every committed and partial artifact."""
        infos = []
        for key in self.keys():
            path = self.object_path(key)
            try:
                meta = self.open(key).meta
                stage, created = meta.get("stage", "?"), meta.get("created")
            except StoreError:
                stage, created = "?", None
            infos.append(ArtifactInfo(key, stage, "complete", _dir_bytes(path), created, str(path)))
        partial = self.root / "partial"
        if partial.exists():
            for path in sorted(partial.iterdir()):
                stage = path.name.rsplit("-", 1)[0]
                infos.append(
                    ArtifactInfo(path.name, stage, "partial", _dir_bytes(path), None, str(path))
                )
        return infos

    def dependents(self, key: str) -> list[str]:
        """Keys of committed artifacts that name `key` as an input."""
        found = []
        for other in self.keys():
            if other == key:
                continue
            try:
                inputs = self.open(other).inputs
            except StoreError:
                continue
            if key in inputs.values():
                found.append(other)
        return found

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
        with self.lock(key, on_wait=on_wait, timeout=wait_timeout):
            if self.exists(key) and not force:
                yield None
                return
            if force:
                self.retire(self.partial_path(key))
            yield ArtifactWriter(self, key, meta)

    @contextlib.contextmanager
    def lock(self, key: str, on_wait: Any = None, timeout: float | None = None) -> Iterator[None]:
        """Exclusive per-key lock across processes (flock: released if the holder dies)."""
        path = self.lock_path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "a+") as handle:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as exc:
                if exc.errno not in (errno.EAGAIN, errno.EACCES):
                    raise
                handle.seek(0)
                holder = handle.read().strip() or "another process"
                if on_wait is not None:
                    on_wait(key, holder)
                self._wait_lock(handle, key, holder, timeout)
            handle.seek(0)
            handle.truncate()
            handle.write(f"pid {os.getpid()} on {socket.gethostname()}")
            handle.flush()
            try:
                yield
            finally:
                handle.seek(0)
                handle.truncate()
                fcntl.flock(handle, fcntl.LOCK_UN)

    @staticmethod
    def _wait_lock(handle: Any, key: str, holder: str, timeout: float | None) -> None:
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return
            except OSError:
                if deadline is not None and time.monotonic() > deadline:
                    raise StoreError(
                        f"{key} is being built by {holder}; gave up waiting after {timeout:.0f} s"
                    ) from None
                time.sleep(0.2)

    def retire(self, path: Path) -> None:
        """Make a directory vanish atomically (rename into trash/), then delete it."""
        if not path.exists():
            return
        trash = self.root / "trash"
        trash.mkdir(parents=True, exist_ok=True)
        target = trash / f"{path.name}-{uuid.uuid4().hex[:8]}"
        os.rename(path, target)
        shutil.rmtree(target, ignore_errors=True)

    def quarantine(self, key: str) -> Path:
        """Move a (corrupted) artifact into trash/ for inspection; `gc` deletes it later."""
        full = self.resolve(key)
        with self.lock(full, timeout=0):
            trash = self.root / "trash"
            trash.mkdir(parents=True, exist_ok=True)
            target = trash / f"{full}-{uuid.uuid4().hex[:8]}"
            os.rename(self.object_path(full), target)
        return target

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
            self.retire(self.object_path(full))
        return full

    def gc(self) -> list[str]:
        """Remove partial artifacts no live process is building, and leftover trash."""
        removed = []
        partial = self.root / "partial"
        if partial.exists():
            for path in sorted(partial.iterdir()):
                try:
                    with self.lock(path.name, timeout=0):
                        self.retire(path)
                        removed.append(path.name)
                except StoreError:
                    continue  # a live writer holds it
        trash = self.root / "trash"
        if trash.exists():
            for path in trash.iterdir():
                shutil.rmtree(path, ignore_errors=True)
                removed.append(f"trash/{path.name}")
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
                    except Exception as exc:  # a missing or undecodable chunk
                        problems.append(f"{name}: unreadable ({type(exc).__name__}: {exc})")
                        continue
                    if actual != info["checksum"]:
                        problems.append(f"{name}: checksum mismatch")
            except StoreError as exc:
                problems.append(str(exc))
            report[key] = problems
        return report

    def show(self, key: str) -> dict[str, Any]:
        """Lineage and metadata of an artifact, with its inputs' stages."""
        artifact = self.open(key)
        meta = dict(artifact.meta)
        meta["path"] = str(artifact.path)
        meta["bytes"] = _dir_bytes(artifact.path)
        meta["dependents"] = self.dependents(artifact.key)
        return meta


def dumps(obj: Any) -> str:
    """JSON for CLI output (numpy scalars become plain numbers)."""
    return json.dumps(obj, indent=2, default=lambda o: o.item() if hasattr(o, "item") else str(o))
