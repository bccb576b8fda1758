"""Leagues of the same strategies on different deal seeds: each table, then the seeds pooled.

    .venv/bin/python bench/league_seeds.py LEAGUE_KEY LEAGUE_KEY ... --store /tmp/paper

Every league must hold the same players (the same `cfr` keys in the same order) and differ in
its `seed`, so its deals, and so its estimates, are independent of the others'. The pooled table
is the mean of the seeds' tables with half-width sqrt(sum of squared half-widths) / seeds, and
is ordered, like each league, only where the intervals separate (the league stage's own rules);
the paper's claim (more opponent clusters beat fewer) is tested on it the same way.
Markdown on stdout, for bench/BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from gameforge.artifacts import ArtifactStore
from gameforge.stages.poker.league import more_clusters_claim
from gameforge.stages.reporting import head_to_head


def table_lines(labels: list[str], mbb: np.ndarray, ci: np.ndarray) -> list[str]:
    """A row-versus-column markdown table of mbb/g with 95% half-widths, and each row's mean."""
    n = len(labels)
    lines = ["| | " + " | ".join(labels) + " | mean |", "|---|" + "---:|" * (n + 1)]
    for i in range(n):
        cells = ["" if i == j else f"{mbb[i, j]:+.1f} ± {ci[i, j]:.1f}" for j in range(n)]
        mean = mbb[i].sum() / (n - 1)
        lines.append(f"| {labels[i]} | " + " | ".join(cells) + f" | {mean:+.1f} |")
    return lines


def verdict_lines(labels: list[str], mbb: np.ndarray, ci: np.ndarray) -> list[str]:
    """The ranking at 95%, the undecided pairs and the more-clusters claim, one bullet each."""
    h2h = head_to_head(labels, mbb, ci, "mbb/g", 1)
    lines = [f"- ranking at 95%: {h2h['ranking_text']}"]
    lines += [f"- undecided: {u}" for u in h2h["undecided"]]
    if all(label[0] == "C" and label[1:].isdigit() for label in labels):
        claim = more_clusters_claim(labels, mbb, ci)
        lines.append(f"- more opponent clusters beat fewer: {claim['holds']}")
    return lines


def main() -> None:
    """Print each league's table and the pooled one."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("leagues", nargs="+", help="league artifact keys, one per seed")
    ap.add_argument("--store", required=True)
    args = ap.parse_args()
    store = ArtifactStore(args.store)
    arts = sorted((store.open(key) for key in args.leagues), key=lambda a: a.params["seed"])
    players = [a.meta["summary"]["keys"] for a in arts]
    if any(p != players[0] for p in players):
        sys.exit("league_seeds: the leagues do not hold the same players in the same order")
    seeds = [a.params["seed"] for a in arts]
    if len(set(seeds)) < len(seeds):
        sys.exit(f"league_seeds: seeds repeat ({seeds}); their deals are not independent")
    labels = arts[0].meta["summary"]["players"]
    tables = np.stack([np.asarray(a["mbb_per_game"][:]) for a in arts])
    halves = np.stack([np.asarray(a["ci95"][:]) for a in arts])
    for art, seed, mbb, ci in zip(arts, seeds, tables, halves):
        hands = int(art.meta["summary"]["hands_per_pairing"])
        print(f"\nseed {seed} (`{art.key}`, {hands:,} hands per pairing), mbb/g, row vs column:\n")
        print("\n".join(table_lines(labels, mbb, ci) + [""] + verdict_lines(labels, mbb, ci)))
    if len(arts) > 1:
        mbb = tables.mean(axis=0)
        ci = np.sqrt((halves**2).sum(axis=0)) / len(arts)
        print(f"\nseeds {', '.join(map(str, seeds))} pooled (independent deals), mbb/g:\n")
        print("\n".join(table_lines(labels, mbb, ci) + [""] + verdict_lines(labels, mbb, ci)))


if __name__ == "__main__":
    main()
