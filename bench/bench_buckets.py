"""Paper-scale bucketing: one round of `hsd-buckets` or `ochs-buckets` on full Hold'em.

Builds (or reuses, from `--store`) everything upstream at the `paper` preset, then times the
bucketing of one round in this process with the default thread count and reports wall time,
peak memory, iterations and the share of distance computations the pruning saved.

    python bench/bench_buckets.py --store /tmp/paper-store --round 1 [--k 9000]
    python bench/bench_buckets.py --store /tmp/paper-store --round 3      # river, OCHS
"""

from __future__ import annotations

import argparse
import os
import resource
import time

from _shared import build_upstream, elapsed_log

from gameforge.artifacts import ArtifactStore
from gameforge.flows.specs import get_flow
from gameforge.stages.progress import LogProgress
from gameforge.stages.runner import run_stage


def main() -> None:
    """Build the upstream artifacts, time one bucketing round, print a table row."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", required=True)
    parser.add_argument("--round", type=int, required=True, help="1 flop, 2 turn, 3 river")
    parser.add_argument("--k", type=int, default=9000)
    parser.add_argument("--n-groups", type=int, default=None)
    args = parser.parse_args()
    spec = get_flow("lhe-abstraction")
    stage = "ochs-buckets" if args.round == 3 else "hsd-buckets"
    params = spec.resolve("paper")
    store = ArtifactStore(args.store)
    log = elapsed_log()
    results = build_upstream(spec, "paper", store, stage, log)
    input_name, input_stage = next(iter(spec.node(stage).inputs.items()))
    stage_params = dict(params[stage], k=args.k)
    if stage == "hsd-buckets":
        stage_params["rounds"] = (args.round,)
    if args.n_groups:
        stage_params["n_groups"] = args.n_groups
    t1 = time.monotonic()
    result = run_stage(
        stage,
        stage_params,
        {input_name: results[input_stage].key},
        store=store,
        progress=LogProgress(log, 60),
        log=log,
    )
    seconds = time.monotonic() - t1
    summary = store.open(result.key).meta["summary"]["rounds"][str(args.round)]
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    print(f"\n{os.cpu_count()} cores; cached: {result.cached}\n")
    print("| round | hands | distinct | k | iterations | seconds | pruned | peak RSS GB |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    print(
        f"| {args.round} | {summary['hands']:,} | {summary['distinct_features']:,} | {args.k:,} "
        f"| {summary['iterations']} | {seconds:.0f} | {summary['skipped_fraction_mean']:.1%} "
        f"| {peak:.1f} |"
    )


if __name__ == "__main__":
    main()
