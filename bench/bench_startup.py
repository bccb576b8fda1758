"""Command start-up: wall seconds of `gameforge` commands that do little work, so what they
measure is imports and set-up. Pairs two installations run by run, A B A B ..., and prints the
median of each and of the ratios A/B.

    python bench/bench_startup.py --a OLD/.venv/bin/gameforge --b .venv/bin/gameforge [--runs 7]

Each command runs in a scratch folder with an empty store; none needs a Prefect server.

    python bench/bench_startup.py --a OLD/.venv/bin/gameforge --b .venv/bin/gameforge --server

times instead the commands a user repeats against a filled store with a running Prefect server
(it starts one in a scratch PREFECT_HOME and stops it at the end): a fully cached run of the
tiny `lhe-abstraction`, and the read-only commands.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

COMMANDS = (
    ("--help",),
    ("game", "info", "holdem.limit.2p.reverse_blinds"),
    ("run", "lhe-league", "--preset", "tiny", "--plan"),
    ("run", "lhe-abstraction", "--preset", "paper", "--plan"),
    ("stage", "run", "cfr", "--flow", "lhe-solve", "--preset", "tiny", "--plan"),
    ("run", "nlhe-cnn", "--preset", "tiny", "--plan"),
    ("stage", "list"),
)


# Against a filled store, with a running server: what a user repeats while inspecting results.
SERVER_COMMANDS = (
    ("run", "lhe-abstraction", "--preset", "tiny"),
    ("artifacts", "ls"),
    ("artifacts", "show", "hsd-buckets"),
    ("artifacts", "verify", "hsd-buckets"),
    ("flows",),
)
STORE_COMMANDS = ("run", "artifacts", "runs")


def wall(binary: str, args: tuple[str, ...], folder: Path, env: dict | None = None) -> float:
    """Seconds one run of `binary args` takes; it must succeed."""
    store = ("--store", "store") if args[0] in STORE_COMMANDS else ()
    t0 = time.perf_counter()
    subprocess.run([binary, *args, *store], cwd=folder, check=True, capture_output=True, env=env)
    return time.perf_counter() - t0


def fill_store_with_a_server(b: str, folder: Path, env: dict[str, str]) -> None:
    """Start a Prefect server (through B) in the scratch home of `env`; fill the store."""
    env.pop("PREFECT_API_URL", None)
    subprocess.run([b, "server", "start", "--port", "4299"], env=env, check=True,
                   capture_output=True)  # fmt: skip
    wall(b, SERVER_COMMANDS[0], folder, env)  # computes every stage once


def main() -> None:
    """Time every command under both installations and print a table."""
    parser = argparse.ArgumentParser(description=__doc__.partition("\n")[0])
    parser.add_argument("--a", required=True, help="the reference gameforge executable")
    parser.add_argument("--b", required=True, help="the gameforge executable measured")
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--server", action="store_true", help="time SERVER_COMMANDS")
    args = parser.parse_args()
    args.a, args.b = str(Path(args.a).absolute()), str(Path(args.b).absolute())
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        server_env = {**os.environ, "PREFECT_HOME": str(folder / "prefect")}
        env = server_env if args.server else None
        try:
            if args.server:
                fill_store_with_a_server(args.b, folder, server_env)
            print("| command | A median s | B median s | A/B median |")
            print("|---|---:|---:|---:|")
            for command in SERVER_COMMANDS if args.server else COMMANDS:
                wall(args.a, command, folder, env)  # warm-up: file caches, numba's cache index
                wall(args.b, command, folder, env)
                pairs = [(wall(args.a, command, folder, env), wall(args.b, command, folder, env))
                         for _ in range(args.runs)]  # fmt: skip
                a = statistics.median(p[0] for p in pairs)
                b = statistics.median(p[1] for p in pairs)
                ratio = statistics.median(p[0] / p[1] for p in pairs)
                print(f"| `gameforge {' '.join(command)}` | {a:.2f} | {b:.2f} | {ratio:.2f}x |")
        finally:
            if args.server:
                subprocess.run([args.b, "server", "stop"], env=server_env, capture_output=True)


if __name__ == "__main__":
    main()
