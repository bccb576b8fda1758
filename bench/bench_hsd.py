"""`hsd` on a game (default: full Hold'em): preflop, flop and turn HSD from a river-hs artifact.

Builds river-hs first (not timed here; see bench_river_hs.py), then times `hsd` in a fresh
process with the default Dask LocalCluster, and its peak memory. Prints a markdown table.

    python bench/bench_hsd.py [--game holdem.limit.2p.reverse_blinds]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

CHILD = r"""
import json, resource, sys, time
from gameforge.artifacts import ArtifactStore
from gameforge.flows.runtime import dask_executor
from gameforge.stages.runner import run_stage

game, root = sys.argv[1], sys.argv[2]
store = ArtifactStore(root)
quiet = lambda m: None
with dask_executor(None) as executor:
    river = run_stage("river-hs", {"game": game}, store=store, executor=executor, log=quiet)
    t0 = time.perf_counter()
    hsd = run_stage("hsd", {"game": game}, {"river_hs": river.key}, store=store,
                    executor=executor, log=quiet)
    seconds = time.perf_counter() - t0
meta = store.open(hsd.key).meta
rounds = meta["summary"]["rounds"]
print(json.dumps({"seconds": seconds, "rounds": rounds,
                  "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "disk_mb": store.show(hsd.key)["bytes"] / 2**20}))
"""


def main() -> None:
    """Benchmark hsd and print a table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="holdem.limit.2p.reverse_blinds")
    args = parser.parse_args()
    root = tempfile.mkdtemp(prefix="bench-hsd-")
    try:
        out = subprocess.run(
            [sys.executable, "-c", CHILD, args.game, root],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    finally:
        shutil.rmtree(root, ignore_errors=True)
    r = json.loads(out.strip().splitlines()[-1])
    lookups = sum(v["hands"] * v["completions"] for v in r["rounds"].values())
    print(f"game: {args.game}; {os.cpu_count()} cores, Dask LocalCluster (threads)\n")
    print("| rounds | canonical hands | HS lookups | seconds | lookups/s | peak RSS MB | disk MB |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    hands = sum(v["hands"] for v in r["rounds"].values())
    print(
        f"| {', '.join(r['rounds'])} | {hands:,} | {lookups:,} | {r['seconds']:.1f} | "
        f"{lookups / r['seconds'] / 1e6:.1f} M | {r['peak_mb']:.0f} | {r['disk_mb']:.0f} |"
    )


if __name__ == "__main__":
    main()
