"""What a failing or interrupted run leaves: one line on the terminal, the whole story in a file.

A run writes `STORE/logs/<time>-<flow>.log`: every line the run prints, the warnings and errors
of Prefect and Dask, and the full traceback of a failure. The terminal gets only the one-line
`error:` and the log's path (`--verbose` prints the traceback there too). SIGINT and SIGTERM stop
a run: the main thread unwinds (partial artifacts stay, each finished chunk is kept for the
next run to resume), then child processes (Prefect's temporary API server) are stopped.
"""

from __future__ import annotations

import _thread
import contextlib
import errno
import logging
import os
import signal
import socket
import sys
import threading
import time
import traceback
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO

# Seconds a stop may take to unwind before the process is ended regardless: worker threads
# deep in a numba kernel cannot be interrupted, and the run's state is on disk already.
STOP_GRACE_S = 5.0


# Errors of the filesystem under the store (or the log), not of the computation: said in one
# line with what to do; a full disk gave 737 lines of tracebacks, the log's own among them.
STORAGE_ERRNOS = {
    errno.ENOSPC: "free space",
    errno.EDQUOT: "free space",
    errno.EACCES: "make it writable or choose another --store",
    errno.EPERM: "make it writable or choose another --store",
    errno.EROFS: "make it writable or choose another --store",
    errno.ENOTDIR: "choose another --store",  # a file where the store's folders go
}


def storage_error(exc: BaseException | None) -> OSError | None:
    """The full, read-only or forbidden filesystem's OSError in `exc` or its causes, else None."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, OSError) and exc.errno in STORAGE_ERRNOS:
            return exc
        exc = exc.__cause__ or exc.__context__
    return None


def storage_line(exc: OSError, store: str | Path | None = None, started: bool = True) -> str:
    """A storage failure as one line: what the system said, where (the file, else `store`), and
    what to do (`started`: then resume)."""
    reason = exc.strerror or os.strerror(exc.errno or 0)
    where = exc.filename or store
    line = f"{reason}: {where}" if where else reason
    fix = STORAGE_ERRNOS.get(exc.errno or 0, "check the store")
    if not started:
        return f"{line}; {fix}"
    return f"{line}; {fix}, then run the same command to resume (finished work is kept)"


class _QuietConsole(logging.Filter):
    """Keeps errors off the terminal: the run reports them in one line and in its log file."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.levelno < logging.ERROR


class _NotEchoed(logging.Filter):
    """Drops the run loggers' info lines from the file: the run writes those lines itself."""

    def filter(self, record: logging.LogRecord) -> bool:
        echoed = record.name.startswith(("prefect.flow_runs", "prefect.task_runs"))
        return not echoed or record.levelno > logging.INFO


class _LogFileHandler(logging.StreamHandler):
    """The log file's handler: a record it cannot write (the disk is full) ends the file
    quietly instead of printing a traceback per record to stderr."""

    def __init__(self, stream: TextIO, runlog: RunLog) -> None:
        super().__init__(stream)
        self.runlog = runlog

    def handleError(self, record: logging.LogRecord) -> None:  # noqa: N802 (logging's name)
        """Give the file up: the run reports the failure itself, in one line."""
        self.runlog.lose(sys.exc_info()[1])


def _loggers() -> list[logging.Logger]:
    """The root logger and every logger that has handlers of its own."""
    found = [logging.getLogger()]
    for logger in list(logging.Logger.manager.loggerDict.values()):
        if isinstance(logger, logging.Logger) and logger.handlers:
            found.append(logger)
    return found


def log_folder(store: str | Path) -> Path:
    """Where a run's log file goes: `logs/` in a local store; for an object store, which
    cannot append, a local folder ($GAMEFORGE_LOGS, else ~/.cache/gameforge/logs)."""
    from gameforge.artifacts.files import is_remote

    if not is_remote(store):
        return Path(store) / "logs"
    default = Path.home() / ".cache" / "gameforge" / "logs"
    return Path(os.environ.get("GAMEFORGE_LOGS", default))


class RunLog:
    """The log file of one run; while open, errors logged by libraries go there, not to stderr."""

    def __init__(self, store: str | Path, name: str, verbose: bool = False) -> None:
        stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
        self.store = store
        self.path = log_folder(store) / f"{stamp}-{name}-{os.getpid()}.log"
        self.verbose = verbose
        self._file: TextIO | None = None
        self._handler: logging.Handler | None = None
        self._attached: list[logging.Logger] = []
        self._filtered: list[logging.Handler] = []
        self._lock = threading.RLock()
        self.lost: BaseException | None = None  # why the file stopped being written, if it did

    def __enter__(self) -> RunLog:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._file = open(self.path, "a", encoding="utf-8")  # noqa: SIM115 (closed in close)
        except OSError as exc:  # an unwritable store: the run goes on and says so in one line
            self.lost = exc
            self._file = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115
        self._handler = _LogFileHandler(self._file, self)
        self._handler.setFormatter(
            logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s")
        )
        self._handler.setLevel(logging.INFO)
        self._handler.addFilter(_NotEchoed())
        self.capture_library_logs()
        return self

    def capture_library_logs(self) -> None:
        """Send every logger's records to the file; take errors off the console handlers.

        Called again once Prefect and Dask are imported, since they set up their own handlers.
        """
        assert self._handler is not None
        quiet = _QuietConsole()
        for logger in _loggers():
            own = logger is logging.getLogger() or not logger.propagate
            if own and self._handler not in logger.handlers:
                logger.addHandler(self._handler)
                self._attached.append(logger)
            if self.verbose:
                continue
            for handler in logger.handlers:
                if handler is self._handler or handler in self._filtered:
                    continue
                if isinstance(handler, logging.StreamHandler) and not isinstance(
                    handler, logging.FileHandler
                ):
                    handler.addFilter(quiet)
                    self._filtered.append(handler)

    def write(self, line: str) -> None:
        """Add one timestamped line (none once the file could not be written)."""
        with self._lock:
            if self._file is None or self.lost is not None:
                return
            try:
                self._file.write(f"{datetime.now(UTC):%H:%M:%S} {line}\n")
                self._file.flush()
            except OSError as exc:
                self.lose(exc)

    @property
    def written(self) -> bool:
        """True while every line has reached the file."""
        return self.lost is None

    def lose(self, exc: BaseException | None) -> None:
        """Stop writing the file (its disk is full or read-only); `lost` says why."""
        with self._lock:
            if self.lost is None:
                self.lost = exc or OSError("the log file could not be written")
            if self._handler is not None:
                self._handler.setLevel(logging.CRITICAL + 1)  # drop what loggers still send

    def exception(self, exc: BaseException) -> str:
        """Write the full traceback of `exc`; returns it."""
        text = "".join(traceback.format_exception(exc))
        self.write("traceback of the failure:\n" + text)
        return text

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Detach from the loggers and close the file (again: a no-op)."""
        for logger in self._attached:
            logger.removeHandler(self._handler)  # type: ignore[arg-type]
        for handler in self._filtered:
            for f in [f for f in handler.filters if isinstance(f, _QuietConsole)]:
                handler.removeFilter(f)
        self._attached, self._filtered = [], []
        if self._file is not None:
            with contextlib.suppress(OSError):  # what a full disk did not take is lost anyway
                self._file.close()
            self._file = None


def one_line(exc: BaseException) -> str:
    """An exception as `Type: message`, on one line (the first line of a long message)."""
    message = str(exc).strip().splitlines()
    text = message[0] if message else ""
    name = type(exc).__name__
    return f"{name}: {text}" if text else name


def descendants(pid: int | None = None) -> list[int]:
    """Every process below `pid` (default: this one), read from /proc; empty where there is none."""
    root = os.getpid() if pid is None else pid
    children: dict[int, list[int]] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as handle:
                stat = handle.read()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2 :].split()  # the name may hold spaces and parentheses
        children.setdefault(int(fields[1]), []).append(int(entry))
    found: list[int] = []
    todo = [root]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def stop_descendants(grace_s: float = 3.0) -> None:
    """SIGTERM every child process of this one, then SIGKILL what is left after `grace_s`."""
    pids = descendants()
    for pid in pids:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline:
        alive = [p for p in pids if _alive_child(p)]
        if not alive:
            return
        time.sleep(0.05)
    for pid in pids:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    # reap them: a child left unreaped would linger as a zombie under init
    deadline = time.monotonic() + 2.0
    while any(_alive_child(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.02)


def _alive_child(pid: int) -> bool:
    """True while `pid` runs; reaps it if it is our own child and has ended."""
    with contextlib.suppress(ChildProcessError, OSError):
        done, _ = os.waitpid(pid, os.WNOHANG)
        if done == pid:
            return False
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as handle:
            state = handle.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


class Interrupted(KeyboardInterrupt):
    """The run was asked to stop by a signal."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class _SignalWatcher:
    """Sees every SIGINT and SIGTERM the process receives, whichever Python handler takes it.

    Prefect's flow engine swaps in its own SIGTERM handler during a flow run, and a handler
    runs only when the main thread next executes Python (not inside a kernel), so the run's
    own handler may never arm the stop's deadline. The C-level handler writes each signal's
    number to the wakeup fd at once; a thread reading it arms the deadline instead.
    """

    def __init__(self, on_signal: Any) -> None:
        self._reader, self._writer = socket.socketpair()
        self._writer.setblocking(False)
        self._previous = signal.set_wakeup_fd(self._writer.fileno(), warn_on_full_buffer=False)
        self._on_signal = on_signal
        self._thread = threading.Thread(target=self._watch, name="signal-watcher", daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        while True:
            try:
                data = self._reader.recv(64)
            except OSError:
                return
            if not data:
                return
            for signum in data:
                if signum in STOP_SIGNALS:
                    self._on_signal(signum)

    def close(self) -> None:
        """Hand the wakeup fd back and end the thread."""
        signal.set_wakeup_fd(self._previous)
        self._writer.close()  # the reader sees the end of the stream
        self._thread.join(timeout=1.0)
        self._reader.close()


@contextlib.contextmanager
def stop_on_signals(on_timeout: Any = None) -> Iterator[None]:
    """SIGINT and SIGTERM raise `Interrupted` in the main thread; a second signal, or a stop
    that has not unwound within STOP_GRACE_S of the first signal, calls `on_timeout(signum)`
    (which should exit)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    received: list[int] = []
    armed: list[threading.Timer] = []
    lock = threading.Lock()

    def arm(signum: int) -> None:
        """Start the stop's deadline at the first signal (from the handler or the watcher)."""
        if on_timeout is None:
            return
        with lock:
            if armed:
                return
            timer = threading.Timer(STOP_GRACE_S, on_timeout, args=(signum,))
            timer.daemon = True
            armed.append(timer)
        timer.start()

    def handler(signum: int, _frame: Any) -> None:
        received.append(signum)
        arm(signum)
        if len(received) > 1:
            if on_timeout is not None:
                on_timeout(signum)
            return
        raise Interrupted(signum)

    default_hook = sys.unraisablehook

    def unraisable(info: Any) -> None:
        """A stop raised inside a callback that cannot pass it on (numba's compiler calls
        Python back through ctypes, which prints and drops it): deliver it again from another
        thread once the callback has returned, instead of waiting out the deadline."""
        exc = info.exc_value
        signum = exc.signum if isinstance(exc, Interrupted) else getattr(exc, "signal", None)
        if isinstance(exc, Exception) or not isinstance(signum, int):
            default_hook(info)
            return
        if isinstance(exc, Interrupted) and received:
            received.pop()  # the same signal again, not a second one
        # from a timer: a delivery from here would run the handler in this hook at once
        again = threading.Timer(0.01, _thread.interrupt_main, args=(signum,))
        again.daemon = True
        again.start()

    previous = {s: signal.signal(s, handler) for s in STOP_SIGNALS}
    sys.unraisablehook = unraisable
    watcher = _SignalWatcher(arm)
    try:
        yield
    finally:
        watcher.close()
        sys.unraisablehook = default_hook
        for signum, old in previous.items():
            signal.signal(signum, old)
