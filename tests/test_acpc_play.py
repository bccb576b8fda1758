"""`gameforge play`: the ACPC protocol over a real TCP socket against a dealer process."""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
from pathlib import Path

from tests.acpc_dealer import start_dealer
from tests.poker_helpers import LEDUC, solve_leduc

GAMEFORGE = str(Path(sys.executable).with_name("gameforge"))


def test_play_a_match_at_an_acpc_dealer(store):
    """A solved Leduc strategy plays 400 hands against an always-call dealer bot and wins."""
    key = solve_leduc(store, "cfr+", 300)
    dealer, port = start_dealer(LEDUC, 400)
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
    )
    out, _ = dealer.communicate(timeout=60)
    assert client.returncode == 0, client.stderr
    assert "played 400 hands" in client.stdout
    assert dealer.returncode == 0, out
    score = float(out.strip().splitlines()[-1].split(":")[1])
    assert score > 0  # always-call is very exploitable; a near-equilibrium wins over 400 hands


def test_malformed_dealer_line_gives_one_clear_error(store, tmp_path):
    """A dealer that speaks nonsense: one-line error, exit code 2, nothing hangs."""
    key = solve_leduc(store, "cfr", 2)
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
    )
    thread.join(timeout=10)
    server.close()
    assert result.returncode == 2
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "malformed dealer line 'HELLO WORLD'" in lines[0], result.stderr
