"""End-to-end `river-hs` on a game (default: full Hold'em): wall time and peak memory.

Each configuration runs in a fresh process against a fresh store, so the numbers include
numba's cached-kernel load, the chunked per-board pass, the scatter into canonical order,
checksums and the commit. Prints a markdown table.

    python bench/bench_river_hs.py [--game holdem.limit.2p.reverse_blinds] [--executors local,dask]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile

CHILD = r"""
import json, resource, sys, time
from gameforge.artifacts import ArtifactStore
from gameforge.flows.runtime import dask_executor
from gameforge.stages.runner import run_stage

game, executor_name, root = sys.argv[1], sys.argv[2], sys.argv[3]
t0 = time.perf_counter()
with dask_executor("local" if executor_name == "local" else None) as executor:
    result = run_stage("river-hs", {"game": game}, store=ArtifactStore(root), executor=executor,
                       log=lambda m: None)
seconds = time.perf_counter() - t0
summary = ArtifactStore(root).open(result.key).meta["summary"]
peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"seconds": seconds, "peak_mb": peak_kb / 1024, "hands": summary["hands"],
                  "boards": summary["boards"]}))
"""


def run_one(game: str, executor: str) -> dict:
    """Run river-hs once in a child process; its timing and memory."""
    root = tempfile.mkdtemp(prefix="bench-river-hs-")
    try:
        out = subprocess.run(
            [sys.executable, "-c", CHILD, game, executor, root],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        return json.loads(out.strip().splitlines()[-1])
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main() -> None:
    """Benchmark the configurations and print a table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="holdem.limit.2p.reverse_blinds")
    parser.add_argument("--executors", default="local,dask")
    args = parser.parse_args()
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores")
    print(f"game: {args.game}\n")
    print("| executor | canonical hands | boards | seconds | hands/s | peak RSS (MB) |")
    print("|---|---:|---:|---:|---:|---:|")
    for name in args.executors.split(","):
        r = run_one(args.game, name)
        label = (
            "in-process (1 core)"
            if name == "local"
            else f"Dask LocalCluster ({os.cpu_count()} threads)"
        )
        print(
            f"| {label} | {r['hands']:,} | {r['boards']:,} | {r['seconds']:.1f} | "
            f"{r['hands'] / r['seconds'] / 1e6:.1f} M | {r['peak_mb']:.0f} |"
        )


if __name__ == "__main__":
    main()
