"""Where the store's bytes live: a local directory, or an object store (s3:// through fsspec).

The store needs few things of its storage, and each has one meaning on both kinds:

- `write` replaces a file whole; a reader sees the old bytes or the new, never a mix
  (a rename on a local disk, one PUT on an object store);
- `create` writes a file only if none is there, atomically (a hard link on a local disk, a
  conditional PUT, `If-None-Match: *`, on an object store): the store's commit and its object
  store lock rest on it;
- `lock` is one holder per key across processes and machines: `flock` on a local disk, which the
  kernel releases when the holder dies; on an object store a lease (see `LeaseLock`).

A `file://` URL is a local directory.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import shutil
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

# How long an object store lock outlives its holder's last renewal; the holder renews it every
# third of this. A waiter on the same host as a dead holder takes over at once.
LEASE_ENV = "GAMEFORGE_LEASE_S"
DEFAULT_LEASE_S = 60.0

OnWait = Callable[[str, str], None] | None

# Protocols whose fsspec driver is known to make `pipe_file(mode="create")` one atomic
# conditional write (s3fs >= 2024.12: PUT with If-None-Match: *). A driver that ignored the
# mode would silently break one writer per key, so other protocols are refused until tested.
ATOMIC_CREATE = frozenset({"s3", "s3a"})


class StorageUnavailable(RuntimeError):
    """A store URL this machine cannot use (no fsspec driver, or one without atomic create)."""


def is_remote(location: str | os.PathLike[str]) -> bool:
    """True for a URL other than file:// (the store then lives on an object store)."""
    text = os.fspath(location)
    return "://" in text and not text.startswith("file://")


def local_path(location: str) -> Path:
    """The folder a local store location names (`file://` and `~` resolved, not made absolute)."""
    return Path(location.removeprefix("file://")).expanduser()


def first_line(exc: BaseException) -> str:
    """An exception's message cut to its first line (drivers' and tarfile's can span several)."""
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def pid_alive(pid: int) -> bool:
    """True if process `pid` exists on this host (one we may not signal counts as alive)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def lease_seconds() -> float:
    """The object store lock's lease: $GAMEFORGE_LEASE_S, else 60 s."""
    return float(os.environ.get(LEASE_ENV, DEFAULT_LEASE_S))


class StoreFiles:
    """The files of one store root, addressed by '/'-separated paths relative to it."""

    def __init__(self, location: str | os.PathLike[str]) -> None:
        text = os.fspath(location)
        self.remote = is_remote(text)
        if self.remote:
            import fsspec

            protocol = text.split("://", 1)[0]
            if protocol not in ATOMIC_CREATE:
                raise StorageUnavailable(
                    f"cannot use store {text}: gameforge's commits and locks need an atomic "
                    f"create-if-absent, tested so far with s3:// (and S3-compatible services); "
                    f"{protocol}:// is not supported yet"
                )
            try:
                # Listings are never cached: other processes and machines write the same store.
                self.fs = fsspec.filesystem(protocol, use_listings_cache=False)
            except (ImportError, ValueError) as exc:
                raise StorageUnavailable(f"cannot open store {text}: {exc}") from None
            self.protocol = protocol
            self.base = str(self.fs._strip_protocol(text)).rstrip("/")
            self.location = f"{protocol}://{self.base}"
        else:
            self.base = str(Path(text.removeprefix("file://")))
            self.location = self.base

    def check_reachable(self) -> None:
        """Raise StorageUnavailable, in one line, if the bucket (container) is missing or
        cannot be reached with the credentials at hand."""
        if not self.remote:
            return
        bucket = self.base.split("/", 1)[0]
        try:
            found = self.fs.exists(bucket)
        except Exception as exc:  # drivers raise their own types for auth and network failures
            raise StorageUnavailable(
                f"cannot reach store {self.location}: {first_line(exc)}"
            ) from None
        if not found:
            raise StorageUnavailable(
                f"store {self.location}: bucket {bucket} does not exist (create it first)"
            )

    # -- addressing ----------------------------------------------------------------------------
    def url(self, rel: str = "") -> str:
        """The full address of `rel`: a local path, or a URL zarr and fsspec accept."""
        if not rel:
            return self.location
        return f"{self.location}/{rel}" if self.remote else os.path.join(self.base, rel)

    def _path(self, rel: str) -> str:
        return f"{self.base}/{rel}" if rel else self.base

    # -- reading -------------------------------------------------------------------------------
    def exists(self, rel: str) -> bool:
        """True if a file (or folder) is at `rel`."""
        if not self.remote:
            return os.path.exists(self._path(rel))
        return bool(self.fs.exists(self._path(rel)))

    def read_bytes(self, rel: str) -> bytes:
        """The bytes of one file (FileNotFoundError if none)."""
        if not self.remote:
            return Path(self._path(rel)).read_bytes()
        return bytes(self.fs.cat_file(self._path(rel)))

    def read_many(self, rels: list[str]) -> dict[str, bytes]:
        """The bytes of each file among `rels` that exists (on an object store, fetched
        concurrently: one round trip's latency, not one per file)."""
        if not self.remote:
            found = {}
            for rel in rels:
                with contextlib.suppress(FileNotFoundError, NotADirectoryError):
                    found[rel] = self.read_bytes(rel)
            return found
        if not rels:
            return {}
        paths = {self._path(rel): rel for rel in rels}
        got = self.fs.cat(list(paths), on_error="omit")
        return {paths[p]: bytes(data) for p, data in got.items() if p in paths}

    def sizes_under(self, rel: str) -> dict[str, int]:
        """Bytes under each entry directly below `rel` (one listing on an object store)."""
        if not self.remote:
            return {name: self.size(f"{rel}/{name}") for name in self.listdir(rel)}
        prefix = self._path(rel).rstrip("/") + "/"
        try:
            found = self.fs.find(self._path(rel), detail=True)
        except FileNotFoundError:
            return {}
        sizes: dict[str, int] = {}
        for path, info in found.items():
            if str(path).startswith(prefix):
                top = str(path)[len(prefix) :].split("/")[0]
                sizes[top] = sizes.get(top, 0) + int(info.get("size") or 0)
        return sizes

    def listdir(self, rel: str) -> list[str]:
        """Sorted names directly under `rel` (empty if there is nothing)."""
        if not self.remote:
            try:
                return sorted(os.listdir(self._path(rel)))
            except (FileNotFoundError, NotADirectoryError):
                return []
        try:
            found = self.fs.ls(self._path(rel), detail=False)
        except FileNotFoundError:
            return []
        prefix = self._path(rel).rstrip("/") + "/"
        return sorted(
            {str(p)[len(prefix) :].split("/")[0] for p in found if str(p).startswith(prefix)} - {""}
        )

    def files_under(self, rel: str) -> list[str]:
        """Every file under `rel`, as paths relative to `rel`, sorted."""
        if not self.remote:
            top = Path(self._path(rel))
            return sorted(str(p.relative_to(top)) for p in top.rglob("*") if p.is_file())
        prefix = self._path(rel).rstrip("/") + "/"
        try:
            found = self.fs.find(self._path(rel))
        except FileNotFoundError:
            return []
        return sorted(str(p)[len(prefix) :] for p in found if str(p).startswith(prefix))

    def size(self, rel: str) -> int:
        """Bytes of every file under `rel`."""
        if not self.remote:
            total = 0
            for dirpath, _dirs, names in os.walk(self._path(rel)):
                for name in names:
                    with contextlib.suppress(OSError):
                        total += os.stat(os.path.join(dirpath, name)).st_size
            return total
        try:
            return int(self.fs.du(self._path(rel), total=True))
        except FileNotFoundError:
            return 0

    # -- writing -------------------------------------------------------------------------------
    def write(self, rel: str, data: bytes) -> None:
        """Replace the file at `rel` whole (readers see old or new bytes, never a mix)."""
        if self.remote:
            self.fs.pipe_file(self._path(rel), data)
            return
        path = Path(self._path(rel))
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{path.name}.tmp-{uuid.uuid4().hex[:8]}")
        tmp.write_bytes(data)
        os.replace(tmp, path)

    def copy_in(self, rel: str, source: Path) -> None:
        """Replace the file at `rel` with a copy of local file `source`, streamed (never read
        whole into memory)."""
        if self.remote:
            self.fs.put_file(str(source), self._path(rel))
            return
        path = Path(self._path(rel))
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{path.name}.tmp-{uuid.uuid4().hex[:8]}")
        shutil.copyfile(source, tmp)
        os.replace(tmp, path)

    def create(self, rel: str, data: bytes) -> bool:
        """Write a file only if none is at `rel`, atomically; False if one already was."""
        if self.remote:
            try:
                self.fs.pipe_file(self._path(rel), data, mode="create")
            except FileExistsError:
                return False
            except TypeError:
                raise StorageUnavailable(
                    f"{self.protocol}:// cannot create a file only if it is absent, which the "
                    "store needs for one writer per key"
                ) from None
            return True
        path = Path(self._path(rel))
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{path.name}.tmp-{uuid.uuid4().hex[:8]}")
        tmp.write_bytes(data)
        try:
            os.link(tmp, path)  # fails if the name exists; the full bytes appear at once
        except FileExistsError:
            return False
        except OSError as exc:  # a filesystem without hard links: check, then rename
            if exc.errno not in (errno.EPERM, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EXDEV):
                raise
            if path.exists():
                return False
            os.replace(tmp, path)
        finally:
            tmp.unlink(missing_ok=True)
        return True

    def touch(self, rel: str) -> None:
        """An empty file at `rel` (a marker)."""
        if self.remote:
            self.fs.pipe_file(self._path(rel), b"")
            return
        path = Path(self._path(rel))
        path.parent.mkdir(parents=True, exist_ok=True)
        path.touch()

    def remove(self, rel: str) -> None:
        """Delete one file, if it is there."""
        with contextlib.suppress(FileNotFoundError):
            if self.remote:
                self.fs.rm_file(self._path(rel))
            else:
                os.unlink(self._path(rel))

    def remove_tree(self, rel: str, first: str | None = None) -> None:
        """Delete everything under `rel`; a reader sees it vanish at once.

        On a local disk the folder is renamed into trash/ first. On an object store, `first`
        (a file that readers require, such as the commit marker) is deleted before the rest.
        """
        if not self.remote:
            if os.path.exists(self._path(rel)):
                shutil.rmtree(self.set_aside(rel), ignore_errors=True)
            return
        if first is not None:
            self.remove(f"{rel}/{first}")
        with contextlib.suppress(FileNotFoundError):
            self.fs.rm(self._path(rel), recursive=True)

    def set_aside(self, rel: str) -> Path:
        """Rename a local folder into trash/ at once (readers see it vanish); its new path."""
        path = Path(self._path(rel))
        trash = Path(self._path("trash"))
        trash.mkdir(parents=True, exist_ok=True)
        target = trash / f"{path.name}-{uuid.uuid4().hex[:8]}"
        os.rename(path, target)
        return target

    def purge(self, rel: str) -> None:
        """Delete everything under `rel`, with no care for readers (trash, leftovers)."""
        if not self.remote:
            path = Path(self._path(rel))
            if path.is_dir():
                shutil.rmtree(path, ignore_errors=True)
            else:
                with contextlib.suppress(FileNotFoundError):
                    path.unlink()
            return
        with contextlib.suppress(FileNotFoundError):
            self.fs.rm(self._path(rel), recursive=True)

    # -- locking -------------------------------------------------------------------------------
    @contextlib.contextmanager
    def lock(self, rel: str, on_wait: OnWait = None, timeout: float | None = None) -> Iterator[Any]:
        """Hold the lock named `rel` (one holder across processes and machines); yields a handle
        whose `check()` raises if the lock was lost (only an expired lease can be)."""
        if self.remote:
            lease = LeaseLock(self, rel)
            lease.acquire(on_wait, timeout)
            try:
                yield lease
            finally:
                lease.release()
            return
        with _flock(Path(self._path(rel + ".lock")), rel, on_wait, timeout) as held:
            yield held


class _Held:
    """A held local lock: it cannot be lost while its process lives."""

    def check(self) -> None:
        """Nothing to check: the kernel holds a flock for as long as its process lives."""


class LockTimeout(RuntimeError):
    """Waiting for a lock took longer than allowed."""

    def __init__(self, name: str, holder: str, timeout: float) -> None:
        super().__init__(f"{name} is held by {holder}; gave up waiting after {timeout:.0f} s")
        self.name, self.holder = name, holder


@contextlib.contextmanager
def _flock(path: Path, name: str, on_wait: OnWait, timeout: float | None) -> Iterator[_Held]:
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
                on_wait(name, holder)
            deadline = None if timeout is None else time.monotonic() + timeout
            while True:
                try:
                    fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except OSError:
                    if deadline is not None and time.monotonic() > deadline:
                        raise LockTimeout(name, holder, timeout or 0.0) from None
                    time.sleep(0.2)
        handle.seek(0)
        handle.truncate()
        handle.write(f"pid {os.getpid()} on {socket.gethostname()}")
        handle.flush()
        try:
            yield _Held()
        finally:
            handle.seek(0)
            handle.truncate()
            fcntl.flock(handle, fcntl.LOCK_UN)


class LeaseLock:
    """A lock on an object store, which has no flock: numbered lease files `<rel>/<n>`.

    The highest number is the current lease. To take the lock a process creates the next number
    with an atomic create, which exactly one contender wins, and only when the current lease is
    released, expired (not renewed for `lease_seconds()`), or held by a dead process on this
    host. Numbers only grow, so a stalled holder that wakes up can never mistake a newer lease
    for its own; `check()` (called before a commit) finds it out.
    """

    def __init__(self, files: StoreFiles, rel: str) -> None:
        self.files, self.rel = files, rel
        self.lease = lease_seconds()
        self.token = uuid.uuid4().hex
        self.number: int | None = None
        self._stop = threading.Event()
        self._renewer: threading.Thread | None = None

    def _record(self, released: bool = False) -> bytes:
        return json.dumps(
            {
                "host": socket.gethostname(),
                "pid": os.getpid(),
                "token": self.token,
                "renewed": time.time(),
                "lease_s": self.lease,
                "released": released,
            }
        ).encode()

    def _current(self) -> tuple[int, dict[str, Any] | None]:
        """The highest lease number (-1: none) and its record (None: unreadable or gone)."""
        numbers = [int(n) for n in self.files.listdir(self.rel) if n.isdigit()]
        if not numbers:
            return -1, None
        top = max(numbers)
        try:
            return top, json.loads(self.files.read_bytes(f"{self.rel}/{top}"))
        except (FileNotFoundError, ValueError):
            return top, None

    @staticmethod
    def _holder_text(record: dict[str, Any]) -> str:
        age = time.time() - float(record.get("renewed", 0))
        return f"pid {record.get('pid')} on {record.get('host')} (lease renewed {age:.0f} s ago)"

    @staticmethod
    def _is_free(record: dict[str, Any] | None) -> bool:
        if record is None:
            return False  # being written or just removed: look again
        if record.get("released"):
            return True
        if time.time() - float(record.get("renewed", 0)) > float(record.get("lease_s", 0)):
            return True
        same_host = record.get("host") == socket.gethostname()
        return same_host and not pid_alive(int(record.get("pid", 0)))

    def acquire(self, on_wait: OnWait, timeout: float | None) -> None:
        """Take the lock, waiting while a live holder has it."""
        deadline = None if timeout is None else time.monotonic() + timeout
        told = False
        while True:
            top, record = self._current()
            if top < 0 or self._is_free(record):
                if self.files.create(f"{self.rel}/{top + 1}", self._record()):
                    self.number = top + 1
                    self._renewer = threading.Thread(target=self._renew, daemon=True)
                    self._renewer.start()
                    return
                continue  # another contender won this number
            holder = self._holder_text(record) if record else "another process"
            if not told and on_wait is not None:
                on_wait(self.rel, holder)
                told = True
            if deadline is not None and time.monotonic() > deadline:
                raise LockTimeout(self.rel, holder, timeout or 0.0)
            time.sleep(0.2 if record is None else 0.5)

    def _renew(self) -> None:
        while not self._stop.wait(self.lease / 3):
            with contextlib.suppress(Exception):  # a missed renewal is caught by check()
                self.files.write(f"{self.rel}/{self.number}", self._record())

    def _still_mine(self) -> bool:
        """True if the current lease is this holder's own."""
        top, record = self._current()
        return top == self.number and record is not None and record.get("token") == self.token

    def check(self) -> None:
        """Raise LockLost if another process has taken this lock since (an expired lease)."""
        if not self._still_mine():
            raise LockLost(self.rel)

    def release(self) -> None:
        """Stop renewing and mark the lease released (older numbers are removed)."""
        self._stop.set()
        if self._renewer is not None:
            self._renewer.join()
        if self.number is None:
            return
        with contextlib.suppress(Exception):
            if self._still_mine():
                self.files.write(f"{self.rel}/{self.number}", self._record(released=True))
            for name in self.files.listdir(self.rel):
                if name.isdigit() and int(name) < self.number:
                    self.files.remove(f"{self.rel}/{name}")


class LockLost(RuntimeError):
    """A lease lock that expired while held and was taken by another process."""

    def __init__(self, name: str) -> None:
        super().__init__(
            f"lost the lock of {name}: its lease expired and another process took it; "
            "nothing was committed"
        )
