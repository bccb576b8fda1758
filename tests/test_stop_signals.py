"""A signal stops a run within seconds, with its own exit status and one line, whether it reaches
the run alone or its whole process group (what `timeout`, supervisors and Ctrl-C send): during a
chunked stage, a CFR solve and a torch training stage, with Prefect's temporary API as the run's
own child process (the case where the group's signal reached the API too and the stop took
70 s)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from gameforge.flows import runlog
from gameforge.flows.runlog import Interrupted, descendants, stop_on_signals
from tests.conftest import without_shared_prefect
from tests.test_run_failures import running

CLI = [sys.executable, "-m", "gameforge.flows.cli"]
STOP_WITHIN_S = 5.0  # the run's own bound (runlog.STOP_GRACE_S) is 5 s; most stops take 1-2 s


def started_run(args: list[str], store: Path) -> subprocess.Popen:
    """`gameforge run ARGS` in a session of its own (its pid is its process group), with no
    shared Prefect server, so that it starts the temporary API as its child."""
    env = without_shared_prefect({**os.environ, "COLUMNS": "100", "NO_COLOR": "1"})
    return subprocess.Popen(
        [*CLI, "run", *args, "--preset", "tiny", "--store", str(store)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        start_new_session=True,
    )  # fmt: skip


def wait_for_line(proc: subprocess.Popen, marker: str, timeout_s: float = 240.0) -> list[str]:
    """The run's output lines up to the first holding `marker` (the run still going)."""
    seen: list[str] = []
    found = threading.Event()

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            seen.append(line)
            if marker in line:
                found.set()
                return

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    assert found.wait(timeout_s), f"no {marker!r} line: {seen}"
    assert proc.poll() is None, seen
    return seen


def stop_group_and_check(proc: subprocess.Popen, signum: int) -> None:
    """Send `signum` to the run's process group; it ends in seconds with 128 + signum, one
    `error:` line naming the signal, no traceback, and no child process left running."""
    children = descendants(proc.pid)
    assert any(b"uvicorn" in cmdline(pid) for pid in children)  # the temporary API
    sent = time.monotonic()
    os.killpg(proc.pid, signum)
    _out, err = proc.communicate(timeout=60)
    took = time.monotonic() - sent
    assert proc.returncode == 128 + signum, err
    assert took < STOP_WITHIN_S, f"{took:.1f} s"
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in err, err
    assert lines[0].startswith("error: stopped by " + signal.Signals(signum).name)
    deadline = time.monotonic() + 5
    while (alive := [p for p in children if running(p)]) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not alive, [cmdline(p) for p in alive]


def cmdline(pid: int) -> bytes:
    """A process's command line, empty once it has gone."""
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def test_sigterm_to_the_group_stops_a_chunked_stage_at_once(tmp_path):
    proc = started_run(["lhe-abstraction"], tmp_path / "store")
    wait_for_line(proc, "hsd: computing")  # the chunked stages after river-hs
    stop_group_and_check(proc, signal.SIGTERM)


def test_sigint_to_the_group_stops_a_cfr_solve_at_once(tmp_path):
    proc = started_run(["solve-lossless"], tmp_path / "store")
    wait_for_line(proc, "cfr: computing")
    time.sleep(1.0)  # into the solve (or numba's compiling of it)
    stop_group_and_check(proc, signal.SIGINT)


def test_sigterm_to_the_group_stops_torch_training_at_once(tmp_path):
    proc = started_run(["nlhe-cnn"], tmp_path / "store")
    wait_for_line(proc, "samples on cpu")  # train-1's epochs under way
    time.sleep(1.0)
    stop_group_and_check(proc, signal.SIGTERM)


def test_the_stop_deadline_is_armed_even_when_another_handler_takes_the_signal(monkeypatch):
    # Prefect's flow engine swaps in a SIGTERM handler of its own during a flow run; the
    # deadline must not depend on the run's own handler ever running.
    monkeypatch.setattr(runlog, "STOP_GRACE_S", 0.2)
    before = signal.getsignal(signal.SIGTERM), signal.set_wakeup_fd(-1)
    signal.set_wakeup_fd(before[1])
    ended: list[int] = []
    with stop_on_signals(on_timeout=ended.append):
        previous = signal.signal(signal.SIGTERM, lambda *_: None)  # swallows it, as Prefect's
        try:
            os.kill(os.getpid(), signal.SIGTERM)
            deadline = time.monotonic() + 5
            while not ended and time.monotonic() < deadline:
                time.sleep(0.01)
        finally:
            signal.signal(signal.SIGTERM, previous)
    assert ended == [signal.SIGTERM]
    assert (signal.getsignal(signal.SIGTERM), signal.set_wakeup_fd(-1)) == before  # put back
    signal.set_wakeup_fd(before[1])


def test_a_stop_raised_inside_a_ctypes_callback_is_delivered_after_it():
    # numba's compiler calls Python back through ctypes, which prints and drops an exception
    # raised there: the stop must still reach the run, not wait out the deadline
    import ctypes

    def callback() -> None:
        os.kill(os.getpid(), signal.SIGTERM)
        sum(range(100_000))  # the handler runs here, inside the callback

    unraisable: list[object] = []
    previous = sys.unraisablehook
    sys.unraisablehook = unraisable.append
    try:
        with pytest.raises(Interrupted), stop_on_signals():
            ctypes.CFUNCTYPE(None)(callback)()
            for _ in range(500):
                time.sleep(0.002)
    finally:
        sys.unraisablehook = previous
    assert not unraisable  # nothing printed as ignored


# `gameforge run` with a SIGTERM to itself while it plans (before any stage or Prefect).
STOP_WHILE_PLANNING = """
import os, signal, sys, time
from gameforge.flows import cli
def stop_here(*_args):
    os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(10)
cli.run._check_resources = stop_here
sys.argv = ["gameforge", "run", "solve-lossless", "--preset", "tiny", "--store", {store!r}]
cli.main()
"""


def test_a_signal_while_the_run_sets_up_stops_it_the_same_way(tmp_path):
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", STOP_WHILE_PLANNING.format(store=str(tmp_path / "store"))],
        capture_output=True, text=True, timeout=60,
        env={**os.environ, "COLUMNS": "100", "NO_COLOR": "1"},
    )  # fmt: skip
    assert time.monotonic() - started < 10
    assert done.returncode == 128 + signal.SIGTERM, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: stopped by SIGTERM"), done.stderr
