"""Leagues of the same strategies on different deal seeds: each table, then the seeds pooled;
and, given leagues of several solves, every pairing compared across the solves.

    .venv/bin/python bench/league_seeds.py LEAGUE_KEY LEAGUE_KEY ... --store /tmp/paper

Leagues are grouped by their players (the same `cfr` keys in the same order): one group per
solve. Within a group the leagues must differ in their `seed`, so their deals, and so their
estimates, are independent. A group's pooled table is the mean of its seeds' tables with
half-width sqrt(sum of squared half-widths) / seeds, and is ordered, like each league, only
where the intervals separate (the league stage's own rules); the paper's claim (more opponent
clusters beat fewer) is tested on it the same way. With several groups of the same labels (the
same abstractions solved again, e.g. with another `cfr.seed`), each pairing's pooled result is
shown per solve, and a pairing is called decided across solves only where every solve separates
it the same way: the deal intervals say nothing about how far solves of one abstraction differ.
Markdown on stdout, for bench/BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import itertools
import sys
from typing import Any

import numpy as np

from gameforge.artifacts import ArtifactStore
from gameforge.engines.common.stats import mean_half_width, separated
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


def pooled(arts: list[Any]) -> tuple[np.ndarray, np.ndarray]:
    """The mean of leagues' tables on independent deals and its 95% half-widths."""
    tables = np.stack([np.asarray(a["mbb_per_game"][:]) for a in arts])
    halves = np.stack([np.asarray(a["ci95"][:]) for a in arts])
    return tables.mean(axis=0), mean_half_width(halves)


def solve_label(store: ArtifactStore, players: tuple[str, ...]) -> str:
    """How a league's players were solved, as a column heading ("public, 1200 s, seed 1")."""
    runs = set()
    for key in players:
        params = store.open(key).params
        length = (
            f"{params['seconds']:g} s" if params.get("seconds") else f"{params['iterations']:,} it"
        )
        runs.add(f"{params.get('algorithm', 'chance')}, {length}, seed {params.get('seed')}")
    return "; ".join(sorted(runs))


def group_lines(arts: list[Any], pooled_table: tuple[np.ndarray, np.ndarray]) -> list[str]:
    """Each league of one group of players, then the group's seeds pooled (`pooled_table`)."""
    seeds = [a.params["seed"] for a in arts]
    if len(set(seeds)) < len(seeds):
        sys.exit(f"league_seeds: seeds repeat ({seeds}); their deals are not independent")
    labels = arts[0].meta["summary"]["players"]
    lines: list[str] = []
    for art, seed in zip(arts, seeds):
        mbb, ci = np.asarray(art["mbb_per_game"][:]), np.asarray(art["ci95"][:])
        hands = int(art.meta["summary"]["hands_per_pairing"])
        lines.append(
            f"\nseed {seed} (`{art.key}`, {hands:,} hands per pairing), mbb/g, row vs column:\n"
        )
        lines += table_lines(labels, mbb, ci) + [""] + verdict_lines(labels, mbb, ci)
    if len(arts) > 1:
        mbb, ci = pooled_table
        lines.append(f"\nseeds {', '.join(map(str, seeds))} pooled (independent deals), mbb/g:\n")
        lines += table_lines(labels, mbb, ci) + [""] + verdict_lines(labels, mbb, ci)
    return lines


def across_solves_lines(
    labels: list[str], names: list[str], results: list[tuple[np.ndarray, np.ndarray]]
) -> list[str]:
    """Every pairing's pooled result per solve, and whether every solve separates it alike."""
    lines = [
        "\n| pair (row vs column, mbb/g, 95%) | " + " | ".join(names) + " | across solves |",
        "|---|" + "---:|" * len(names) + "---|",
    ]
    beats = [separated(mbb, ci) for mbb, ci in results]
    for i, j in itertools.combinations(range(len(labels)), 2):
        cells = [f"{mbb[i, j]:+.1f} ± {ci[i, j]:.1f}" for mbb, ci in results]
        ahead = {1 if b[i, j] else -1 if b[j, i] else 0 for b in beats}
        if ahead == {1}:
            verdict = f"{labels[i]} ahead in every solve"
        elif ahead == {-1}:
            verdict = f"{labels[j]} ahead in every solve"
        elif {1, -1} <= ahead:
            verdict = "solves disagree"
        else:
            verdict = "not separated in every solve"
        lines.append(f"| {labels[i]} vs {labels[j]} | " + " | ".join(cells) + f" | {verdict} |")
    return lines


def main() -> None:
    """Print each group's leagues and pooled table, then the pairings across groups."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("leagues", nargs="+", help="league artifact keys, one per seed and solve")
    ap.add_argument("--store", required=True)
    args = ap.parse_args()
    store = ArtifactStore(args.store)
    groups: dict[tuple[str, ...], list[Any]] = {}
    for art in sorted((store.open(key) for key in args.leagues), key=lambda a: a.params["seed"]):
        groups.setdefault(tuple(art.meta["summary"]["keys"]), []).append(art)
    names = [solve_label(store, players) for players in groups]
    results = [pooled(arts) for arts in groups.values()]
    for name, arts, result in zip(names, groups.values(), results):
        if len(groups) > 1:
            print(f"\n#### {name}")
        print("\n".join(group_lines(arts, result)))
    label_sets = {tuple(arts[0].meta["summary"]["players"]) for arts in groups.values()}
    if len(groups) > 1 and len(label_sets) == 1:
        print("\n".join(across_solves_lines(list(label_sets.pop()), names, results)))


if __name__ == "__main__":
    main()
