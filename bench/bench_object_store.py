"""The store on S3 against the store on a local disk: wall seconds of the same commands, pair
by pair (local, S3, local, S3 ...), and the median of the ratios S3/local.

    python bench/bench_object_store.py [--runs 3] [--gameforge .venv/bin/gameforge]

A Prefect server runs throughout (in a scratch home). The S3 side is moto's S3-compatible
server on 127.0.0.1, started here: the figures measure the object-store code path (requests,
conditional writes, leases), not a network. Each pair runs, on a fresh store of each kind,
the tiny `lhe-abstraction` with its chunk tasks in this process (`--dask-address local`),
then the same run fully cached, then `artifacts ls` and `artifacts verify`.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.cluster_helpers import S3Server  # noqa: E402  (the tests' moto server)

STEPS = (
    ("computed run", ("run", "lhe-abstraction", "--preset", "tiny", "--dask-address", "local")),
    ("cached run", ("run", "lhe-abstraction", "--preset", "tiny")),
    ("artifacts ls", ("artifacts", "ls")),
    ("artifacts verify", ("artifacts", "verify")),
)


def timed(command: list[str], env: dict[str, str], cwd: Path) -> float:
    """Wall seconds of one command, which must succeed."""
    start = time.perf_counter()
    done = subprocess.run(command, env=env, cwd=cwd, capture_output=True, text=True)
    took = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed:\n{done.stdout}\n{done.stderr}")
    return took


def main() -> None:
    """Time the steps on both kinds of store and print medians and ratios."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--gameforge", default=str(Path(sys.executable).parent / "gameforge"))
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="bench-object-store-"))
    server = S3Server(scratch / "moto.log")
    env = {**os.environ, **server.env, "PREFECT_HOME": str(scratch / "prefect")}
    env.pop("PREFECT_API_URL", None)
    os.environ.update(server.env)
    server.create_bucket()
    # one Prefect server for every run, so that no run pays for a temporary one
    subprocess.run([args.gameforge, "server", "start", "--port", "4298"], env=env, check=True,
                   capture_output=True)  # fmt: skip
    times: dict[tuple[str, str], list[float]] = {}
    try:
        for run in range(args.runs):
            for kind in ("local", "s3"):
                store = (
                    str(scratch / f"local-{run}") if kind == "local" else server.url(f"s3-{run}")
                )
                for name, step in STEPS:
                    took = timed([args.gameforge, *step, "--store", store], env, scratch)
                    times.setdefault((name, kind), []).append(took)
    finally:
        subprocess.run([args.gameforge, "server", "stop"], env=env, capture_output=True)
        server.stop()
    print(f"{args.runs} pairs; wall seconds, median (min-max); S3 = moto on 127.0.0.1")
    print(f"{'step':<18} {'local':>16} {'S3':>16} {'S3/local':>9}")
    for name, _step in STEPS:
        local, s3 = times[(name, "local")], times[(name, "s3")]
        ratio = statistics.median(b / a for a, b in zip(local, s3, strict=True))
        cells = [f"{statistics.median(t):.2f} ({min(t):.2f}-{max(t):.2f})" for t in (local, s3)]
        print(f"{name:<18} {cells[0]:>16} {cells[1]:>16} {ratio:>9.2f}")


if __name__ == "__main__":
    main()
