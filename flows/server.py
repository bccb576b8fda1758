"""A long-lived local Prefect server on 127.0.0.1, started and stopped by `gameforge server`."""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

DEFAULT_PORT = 4200


def prefect_home() -> Path:
    """gameforge's Prefect home: PREFECT_HOME if set, else `.prefect` in the working directory
    (beside the default store, `./store`), so `make run`, the CLI and `gameforge server start`
    in a checkout share one database and one UI, and two checkouts never mix their runs."""
    return Path(os.environ.get("PREFECT_HOME") or Path(".prefect").absolute())


def use_prefect_home() -> Path:
    """Set PREFECT_HOME for Prefect (read once, at its import) and for the processes started."""
    home = prefect_home()
    os.environ["PREFECT_HOME"] = str(home)
    return home


def _state_file() -> Path:
    return prefect_home() / "gameforge-server.json"


def _alive(pid: int) -> bool:
    """True if `pid` is a live Prefect server (not a dead one's number taken by another
    process)."""
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    try:
        command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")
    except OSError:
        return True  # no /proc (macOS): the signal test is all there is
    return b"prefect" in command or b"uvicorn" in command


def _healthy(url: str, timeout: float = 0.5) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/health", timeout=timeout) as response:
            return bool(response.status == 200)
    except OSError:
        return False


def status() -> dict | None:
    """The running server's pid, port and API URL, or None."""
    path = _state_file()
    if not path.exists():
        return None
    state = json.loads(path.read_text())
    if not _alive(state["pid"]):
        path.unlink(missing_ok=True)
        return None
    state["healthy"] = _healthy(state["api_url"])
    return state


def server_url() -> str | None:
    """API URL of a healthy local server started by gameforge, else None."""
    state = status()
    return state["api_url"] if state and state["healthy"] else None


def start(port: int = DEFAULT_PORT, wait_s: float = 90.0) -> dict:
    """Start `prefect server start` on 127.0.0.1 in the background and wait until it answers."""
    use_prefect_home()
    current = status()
    if current:
        return current
    path = _state_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    log_path = path.with_suffix(".log")
    api_url = f"http://127.0.0.1:{port}/api"
    # the UI finds its API through this, not the --port given (it would try :4200)
    env = dict(os.environ, DO_NOT_TRACK="1", PREFECT_SERVER_ANALYTICS_ENABLED="false",
               PREFECT_SERVER_UI_API_URL=api_url)  # fmt: skip
    env.pop("PREFECT_API_URL", None)
    prefect = Path(sys.executable).with_name("prefect")
    with open(log_path, "ab") as log:
        proc = subprocess.Popen(
            [str(prefect), "server", "start", "--host", "127.0.0.1", "--port", str(port)],
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=env,
            start_new_session=True,
        )
    state = {"pid": proc.pid, "port": port, "api_url": api_url, "ui": f"http://127.0.0.1:{port}"}
    path.write_text(json.dumps(state))
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            path.unlink(missing_ok=True)
            raise RuntimeError(f"prefect server exited with {proc.returncode}; see {log_path}")
        if _healthy(api_url):
            state["healthy"] = True
            return state
        time.sleep(0.5)
    raise RuntimeError(f"prefect server did not answer within {wait_s:.0f} s; see {log_path}")


def stop() -> bool:
    """Stop the server started by `start`; False if none was running."""
    state = status()
    if not state:
        return False
    try:
        os.killpg(state["pid"], signal.SIGTERM)
    except OSError:
        os.kill(state["pid"], signal.SIGTERM)
    for _ in range(100):
        with contextlib.suppress(ChildProcessError):  # reap it when this process started it
            os.waitpid(state["pid"], os.WNOHANG)
        if not _alive(state["pid"]):
            break
        time.sleep(0.1)
    _state_file().unlink(missing_ok=True)
    return True


def _free_port() -> int:
    import socket

    with contextlib.closing(socket.socket(socket.AF_INET, socket.SOCK_STREAM)) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _die_with_parent(parent: int) -> None:
    """In the child, before exec: receive SIGKILL when the parent ends, however it ends."""
    import ctypes

    pr_set_pdeathsig = 1
    ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGKILL)
    if os.getppid() != parent:  # the parent ended before prctl took effect
        os._exit(1)


class TemporaryApi:
    """A run's own Prefect API on 127.0.0.1 (as Prefect's temporary server, without its UI),
    tied to the run's process: the kernel kills it when the run ends, even by SIGKILL.

    Start it before Prefect is imported: Prefect reads PREFECT_API_URL once, at import.
    """

    def __init__(self) -> None:
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}/api"
        env = dict(os.environ, PREFECT_UI_ENABLED="0", PREFECT__SERVER_EPHEMERAL="1")
        env.pop("PREFECT_API_URL", None)
        parent = os.getpid()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "uvicorn", "--factory",
             "prefect.server.api.server:create_app", "--host", "127.0.0.1",
             "--port", str(self.port), "--log-level", "error", "--lifespan", "on"],
            stdin=subprocess.DEVNULL,
            env=env,
            # A session of its own: a signal to the run's process group (`timeout`, a
            # supervisor, Ctrl-C) reaches the run alone, which records the stop through this API
            # and then ends it; the API ending first left Prefect retrying it for over a minute.
            start_new_session=True,
            preexec_fn=lambda: _die_with_parent(parent),  # noqa: PLW1509 (no threads yet)
        )  # fmt: skip
        os.environ["PREFECT_API_URL"] = self.url
        # Stopped at exit: after Prefect's own exit hooks (run from threading's shutdown,
        # before atexit's) have sent the logs and events still queued to it.
        atexit.register(self.stop)

    def wait(self, wait_s: float) -> None:
        """Block until the API answers; RuntimeError if it exits or stays silent."""
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"Prefect's API exited with {self.process.returncode}")
            if _healthy(self.url, timeout=1.0):
                return
            time.sleep(0.1)
        raise RuntimeError(f"Prefect's API did not answer within {wait_s:.0f} s")

    def stop(self) -> None:
        """End the API: SIGTERM, then SIGKILL after 5 s."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
