"""`gameforge play`: the ACPC protocol over a real TCP socket against a dealer process."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
from pathlib import Path

from gameforge.stages.runner import run_stage

ROOT = Path(__file__).resolve().parent.parent
GAMEFORGE = str(Path(sys.executable).with_name("gameforge"))
LEDUC = "leduc.limit.2p"


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT)}


def test_play_a_match_at_an_acpc_dealer(store):
    """A solved Leduc strategy plays 400 hands against an always-call dealer bot and wins."""
    key = run_stage(
        "cfr",
        {"game": LEDUC, "algorithm": "cfr+", "iterations": 300, "evaluations": 0},
        store=store,
        log=lambda _m: None,
    ).key
    dealer = subprocess.Popen(
        [sys.executable, str(ROOT / "tests" / "acpc_dealer.py"), "--game", LEDUC, "--hands", "400"],
        stdout=subprocess.PIPE,
        text=True,
        env=_env(),
    )
    port = int(dealer.stdout.readline().strip().split(":")[1])
    client = subprocess.run(
        [
            GAMEFORGE,
            "play",
            "--strategy",
            key[:14],
            "--game",
            LEDUC,
            "--port",
            str(port),
            "--store",
            str(store.root),
        ],  # fmt: skip
        capture_output=True,
        text=True,
        timeout=300,
        env=_env(),
    )
    out, _ = dealer.communicate(timeout=60)
    assert client.returncode == 0, client.stderr
    assert "played 400 hands" in client.stdout
    assert dealer.returncode == 0, out
    score = float(out.strip().splitlines()[-1].split(":")[1])
    assert score > 0  # always-call is very exploitable; a near-equilibrium wins over 400 hands


def test_malformed_dealer_line_gives_one_clear_error(store, tmp_path):
    """A dealer that speaks nonsense: one-line error, exit code 2, nothing hangs."""
    key = run_stage(
        "cfr",
        {"game": LEDUC, "algorithm": "cfr", "iterations": 2, "evaluations": 0},
        store=store,
        log=lambda _m: None,
    ).key
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]

    def serve() -> None:
        conn, _ = server.accept()
        conn.recv(100)  # the VERSION line
        conn.sendall(b"HELLO WORLD\r\n")
        conn.recv(100)
        conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    result = subprocess.run(
        [GAMEFORGE, "play", "--strategy", key, "--port", str(port), "--store", str(store.root)],
        capture_output=True,
        text=True,
        timeout=120,
        env=_env(),
    )
    thread.join(timeout=10)
    server.close()
    assert result.returncode == 2
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "malformed dealer line 'HELLO WORLD'" in lines[0], result.stderr
