"""Nothing gameforge starts listens beyond loopback: runs, the dashboard, `play` (and `server
start`, checked in tests/test_flow.py on the server that test starts anyway).

Each test samples the listening sockets of a whole process tree (psutil) while it runs and
fails on any address outside 127.0.0.0/8 and ::1.
"""

from __future__ import annotations

import ipaddress
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import psutil

from gameforge.flows.runtime import dask_executor, plain_connection_warning
from tests.acpc_dealer import start_dealer
from tests.conftest import without_shared_prefect
from tests.poker_helpers import LEDUC, solve_leduc

GAMEFORGE = str(Path(sys.executable).with_name("gameforge"))


def _listening(pids: list[int]) -> set[tuple[str, int, str]]:
    """(address, port, process name) of every listening socket of these processes and children."""
    found: set[tuple[str, int, str]] = set()
    for pid in pids:
        try:
            root = psutil.Process(pid)
            procs = [root, *root.children(recursive=True)]
        except psutil.NoSuchProcess:
            continue
        for proc in procs:
            try:
                connections = proc.net_connections(kind="inet")
                name = proc.name()
            except (psutil.NoSuchProcess, psutil.AccessDenied):
                continue
            for c in connections:
                if c.status == psutil.CONN_LISTEN:
                    found.add((c.laddr.ip, c.laddr.port, name))
    return found


def _sample_until_exit(
    watched: subprocess.Popen, also: list[int] = (), timeout: float = 300
) -> set[tuple[str, int, str]]:
    """Listening sockets seen in `watched`'s tree (and `also`) every 50 ms until it exits."""
    seen: set[tuple[str, int, str]] = set()
    deadline = time.monotonic() + timeout
    while watched.poll() is None and time.monotonic() < deadline:
        seen |= _listening([watched.pid, *also])
        time.sleep(0.05)
    return seen


def _run_sampling(
    args: list[str], env: dict[str, str] | None = None, also: list[int] = ()
) -> tuple[set[tuple[str, int, str]], str, int]:
    """Run `args` to its end, sampling its (and `also`'s) listening sockets: (seen, output,
    exit code)."""
    proc = subprocess.Popen(
        args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env
    )
    seen = _sample_until_exit(proc, also)
    assert proc.stdout is not None
    return seen, proc.stdout.read(), proc.wait()


def _off_loopback(seen: set[tuple[str, int, str]]) -> list[tuple[str, int, str]]:
    return sorted(s for s in seen if not ipaddress.ip_address(s[0].split("%")[0]).is_loopback)


def _env(store: Path) -> dict[str, str]:
    return dict(os.environ, GAMEFORGE_STORE=str(store), NO_COLOR="1", COLUMNS="200")


def test_a_run_with_the_dashboard_listens_on_loopback_only(tmp_path):
    """A tiny flow on the default local cluster and Prefect's temporary API, dashboard on."""
    env = without_shared_prefect(_env(tmp_path / "store"))
    seen, out, code = _run_sampling(
        [GAMEFORGE, "run", "lhe-abstraction", "--preset", "tiny", "--dashboard"], env
    )
    assert code == 0, out
    assert not _off_loopback(seen), seen
    links = re.findall(r"Dask dashboard: http://127\.0\.0\.1:(\d+)/status", out)
    assert len(links) == 1, out  # printed once
    ports = {port for _ip, port, _name in seen}
    assert int(links[0]) in ports  # the sampling saw the dashboard itself
    assert len(seen) >= 3, seen  # Prefect's API, the scheduler's and the worker's HTTP servers


def test_the_default_cluster_serves_no_dashboard_and_stays_on_loopback():
    """Without --dashboard: no link, no dashboard page, the HTTP servers bound to 127.0.0.1."""
    import urllib.error
    import urllib.request

    lines: list[str] = []
    with dask_executor(None, workers=1, log=lines.append):
        seen = _listening([os.getpid()])
        statuses = []
        for _ip, port, _name in seen:
            try:
                url = f"http://127.0.0.1:{port}/status"
                with urllib.request.urlopen(url, timeout=5) as response:
                    statuses.append(response.status)
            except urllib.error.HTTPError as exc:
                statuses.append(exc.code)
    assert lines == []
    assert seen and not _off_loopback(seen), seen
    assert 200 not in statuses, statuses


def test_play_listens_nowhere(store):
    """`gameforge play` only connects out; the test dealer it plays binds 127.0.0.1."""
    key = solve_leduc(store, "cfr+", 50)
    dealer, port = start_dealer(LEDUC, 300)
    args = [GAMEFORGE, "play", "--strategy", key, "--game", LEDUC, "--port", str(port)]
    seen, out, code = _run_sampling([*args, "--store", str(store.root)], also=[dealer.pid])
    dealer.communicate(timeout=60)
    assert code == 0, out
    assert not _off_loopback(seen), seen
    assert all(name != "gameforge" for _ip, _port, name in seen), seen
    assert ("127.0.0.1", port) in {(ip, p) for ip, p, _name in seen}  # the sampling saw the dealer


def test_plain_tcp_beyond_loopback_warns_in_one_line():
    """tcp:// to another host is unauthenticated and unencrypted: say so; loopback and tls don't."""
    warning = plain_connection_warning("tcp://10.1.2.3:8786")
    assert warning is not None and "\n" not in warning
    assert "unauthenticated and unencrypted" in warning and "tls://" in warning
    assert plain_connection_warning("10.1.2.3:8786") is not None  # tcp is Dask's default
    for quiet in ("tcp://127.0.0.1:8786", "tcp://localhost:8786", "tcp://[::1]:8786"):
        assert plain_connection_warning(quiet) is None, quiet
    assert plain_connection_warning("tls://10.1.2.3:8786") is None
