"""The stored LBRs of several strategies side by side, and every pair's difference paired deal by
deal (LBR runs of one seed deal the same cards, so the card luck cancels in the difference).

    .venv/bin/python bench/lbr_table.py LABEL=CFR_KEY LABEL=CFR_KEY ... --store /tmp/paper

Each strategy's LBR of most deals is used (`gameforge strategy lbr KEY --deals N` computes one).
LBR is a lower bound of exploitability, so a difference orders the strategies' LBR values, not
their exploitability. Markdown on stdout, for bench/BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import itertools

import numpy as np
from long_runs import lbr_figures, paired_difference, stored_on

from gameforge.artifacts import ArtifactStore


def main() -> None:
    """Print the LBR table and the paired differences."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("strategies", nargs="+", metavar="LABEL=CFR_KEY")
    ap.add_argument("--store", default="store")
    args = ap.parse_args()
    store = ArtifactStore(args.store)
    wins: dict[str, np.ndarray] = {}
    print("| strategy | key | iterations | LBR mbb/g (95%) | one-sided lower bound | deals |")
    print("|---|---|---:|---:|---:|---:|")
    for item in args.strategies:
        label, _, key = item.partition("=")
        summary = store.open(key).meta["summary"]
        lbr = stored_on(store, key, "lbr-")
        if lbr is None:
            raise SystemExit(f"error: {key} has no stored LBR: run gameforge strategy lbr {key}")
        wins[label], interval, bound = lbr_figures(store, lbr, float(summary["big_blind"]))
        deals = wins[label].size  # one winnings entry per deal
        print(
            f"| {label} | `{key}` | {summary['iterations']:,} | {interval} | {bound} | {deals:,} |"
        )
    print("\n| pair (LBR of the first minus the second) | mbb/g (95%) | deals |")
    print("|---|---:|---:|")
    for a, b in itertools.combinations(wins, 2):
        mean, half, deals = paired_difference(wins[a], wins[b])
        print(f"| {a} - {b} | {mean:+,.1f} ± {half:,.1f} | {deals:,} |")


if __name__ == "__main__":
    main()
