"""Potential-aware abstraction: greedy vs exact EMD (accuracy, speed) and the stage at a preset.

python bench/bench_potential.py emd [--buckets 300] [--pairs 300]
python bench/bench_potential.py stage --store S [--preset small]
"""

from __future__ import annotations

import argparse
import os
import resource
import time

import numpy as np
from _shared import build_upstream, elapsed_log

from gameforge.engines.poker.potential import (
    _distances_to,
    approx_emd,
    exact_emd,
    ground_from_centroids,
    neighbour_order,
    to_histograms,
)


def emd(buckets: int, pairs: int) -> None:
    """Greedy EMD against POT's exact EMD on turn-like points (46 units) and dense means."""
    rng = np.random.default_rng(0)
    centres = rng.random((buckets, 8))  # OCHS-like next-round centroids
    ground = ground_from_centroids(centres)
    order = neighbour_order(ground)
    strength = centres.mean(axis=1)
    rank = np.argsort(np.argsort(strength))
    # Points: 46 completions concentrated around a hand strength, as real turn hands are.
    points = np.empty((pairs, 46), dtype=np.int16)
    for i in range(pairs):
        mid = rng.integers(0, buckets)
        ids = np.clip(mid + rng.normal(0, buckets / 10, 46).round().astype(int), 0, buckets - 1)
        points[i] = np.sort(np.argsort(rank)[ids])
    hist = to_histograms(points, buckets)
    means = np.stack([hist[rng.choice(pairs, 50)].mean(axis=0) for _ in range(pairs)])
    t0 = time.perf_counter()
    exact = np.array([exact_emd(hist[i], means[i], ground) for i in range(pairs)])
    t_exact = (time.perf_counter() - t0) / pairs
    approx_emd(hist[0], means[0], ground, order)  # compile
    greedy = np.array([approx_emd(hist[i], means[i], ground, order) for i in range(pairs)])
    out = np.empty(pairs)
    reps = 20
    t0 = time.perf_counter()
    for _ in range(reps):
        for i in range(0, pairs, 50):
            _distances_to(points[i : i + 50], means[i], ground, order, out[i : i + 50])
    t_kernel = (time.perf_counter() - t0) / (reps * pairs)
    ratio = greedy / exact
    print(f"K = {buckets} next-round buckets, {pairs} point-mean pairs, 1 thread\n")
    print("| method | µs per distance | mean ratio to exact | max ratio | below exact |")
    print("|---|---:|---:|---:|---:|")
    print(f"| POT ot.emd2 (exact) | {1e6 * t_exact:.1f} | 1 | 1 | - |")
    print(
        f"| greedy (G&S 2014), kernel | {1e6 * t_kernel:.2f} | {ratio.mean():.4f} | "
        f"{ratio.max():.4f} | {int((greedy < exact - 1e-9).sum())} |"
    )
    print(f"\nspeed-up greedy vs exact: {t_exact / t_kernel:,.0f}x")


def stage(store: str, preset: str) -> None:
    """Build (or reuse) the upstream chain, then time `potential-buckets` in this process."""
    from gameforge.artifacts import ArtifactStore
    from gameforge.flows.specs import get_flow
    from gameforge.stages.progress import LogProgress
    from gameforge.stages.runner import run_stage

    spec = get_flow("lhe-abstraction-pa")
    params = spec.resolve(preset)
    artifacts = ArtifactStore(store)
    log = elapsed_log()
    results = build_upstream(spec, preset, artifacts, "potential-buckets", log)
    inputs = {"ochs_buckets": results["ochs-buckets"].key}
    t1 = time.monotonic()
    result = run_stage(
        "potential-buckets",
        params["potential-buckets"],
        inputs,
        store=artifacts,
        progress=LogProgress(log, 30),
        log=log,
    )
    seconds = time.monotonic() - t1
    summary = artifacts.open(result.key).meta["summary"]
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    print(f"\n{os.cpu_count()} cores; preset {preset}; cached: {result.cached}\n")
    print("| round | hands | distinct histograms | next-round buckets | k | iterations |")
    print("|---|---:|---:|---:|---:|---:|")
    for r, s in sorted(summary["rounds"].items(), reverse=True):
        print(
            f"| {r} | {s['hands']:,} | {s['distinct_features']:,} | {s['next_buckets']:,} | "
            f"{summary['k']:,} | {s['iterations']} |"
        )
    print(f"\nstage seconds {seconds:.0f}, peak RSS {peak:.1f} GB")
    print("\n| round | objective at the seeding | stored objective (iteration) | change |")
    print("|---|---:|---:|---:|")
    for r, s in sorted(summary["rounds"].items(), reverse=True):
        seeded, kept = s["objective_per_iteration"][0], s["objective"]
        print(f"| {r} | {seeded:,.1f} | {kept:,.1f} ({s['best_iteration']}) | "
              f"{100 * (kept / seeded - 1):+.2f}% |")  # fmt: skip
    for r, s in sorted(summary["rounds"].items(), reverse=True):
        per = ", ".join(f"{v:,.0f}" for v in s["objective_per_iteration"])
        print(f"\nround {r} objective per iteration: {per}")
        if "emd_check" in s:
            c = s["emd_check"]
            excess = 100 * c["relative_excess_mean"], 100 * c["relative_excess_max"]
            print(
                f"round {r} greedy vs exact EMD over {c['pairs']} hands and their centroids: "
                f"mean {c['greedy_mean']:.5f} vs {c['exact_mean']:.5f}, relative excess mean "
                f"{excess[0]:.2f}%, max {excess[1]:.2f}%, below exact {c['below_exact']}"
            )


def main() -> None:
    """Dispatch."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("which", choices=("emd", "stage"))
    parser.add_argument("--buckets", type=int, default=300)
    parser.add_argument("--pairs", type=int, default=300)
    parser.add_argument("--store", default=None)
    parser.add_argument("--preset", default="small")
    args = parser.parse_args()
    if args.which == "emd":
        emd(args.buckets, args.pairs)
    else:
        if not args.store:
            parser.error("stage needs --store")
        stage(args.store, args.preset)


if __name__ == "__main__":
    main()
