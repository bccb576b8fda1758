"""A long-lived local Prefect server on 127.0.0.1, started and stopped by `gameforge server`."""

from __future__ import annotations

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


def _state_file() -> Path:
    home = Path(os.environ.get("PREFECT_HOME", Path.home() / ".prefect"))
    return home / "gameforge-server.json"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    return True


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
    current = status()
    if current:
        return current
    path = _state_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    log_path = path.with_suffix(".log")
    env = dict(os.environ, DO_NOT_TRACK="1", PREFECT_SERVER_ANALYTICS_ENABLED="false")
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
    api_url = f"http://127.0.0.1:{port}/api"
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
