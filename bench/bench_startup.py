"""Command start-up: wall seconds of `gameforge` commands that do little work, so what they
measure is imports and set-up. Pairs two installations run by run, A B A B ..., and prints the
median of each and of the ratios A/B.

    python bench/bench_startup.py --a OLD/.venv/bin/gameforge --b .venv/bin/gameforge [--runs 7]

Each command runs in a scratch folder with an empty store; none needs a Prefect server.
"""

from __future__ import annotations

import argparse
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


def wall(binary: str, args: tuple[str, ...], folder: Path) -> float:
    """Seconds one run of `binary args` takes; it must succeed."""
    t0 = time.perf_counter()
    subprocess.run([binary, *args, *(("--store", "store") if args[0] == "run" else ())],
                   cwd=folder, check=True, capture_output=True)  # fmt: skip
    return time.perf_counter() - t0


def main() -> None:
    """Time every command under both installations and print a table."""
    parser = argparse.ArgumentParser(description=__doc__.partition("\n")[0])
    parser.add_argument("--a", required=True, help="the reference gameforge executable")
    parser.add_argument("--b", required=True, help="the gameforge executable measured")
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        print("| command | A median s | B median s | A/B median |")
        print("|---|---:|---:|---:|")
        for command in COMMANDS:
            wall(args.a, command, folder)  # warm-up: file caches, numba's cache index
            wall(args.b, command, folder)
            pairs = [(wall(args.a, command, folder), wall(args.b, command, folder))
                     for _ in range(args.runs)]  # fmt: skip
            a = statistics.median(p[0] for p in pairs)
            b = statistics.median(p[1] for p in pairs)
            ratio = statistics.median(p[0] / p[1] for p in pairs)
            print(f"| `gameforge {' '.join(command)}` | {a:.2f} | {b:.2f} | {ratio:.2f}x |")


if __name__ == "__main__":
    main()
