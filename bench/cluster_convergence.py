"""Exploitability against solve length, per opponent-cluster count: the abstraction paper's claim
(more OCHS opponent clusters make a better agent) measured exactly on a short deck.

    .venv/bin/python bench/cluster_convergence.py run --store S --preset small \\
        --k 6,8,10,12 --abstraction-seeds 0,1,2 --solve-seeds 0,1 --lengths 300000,1200000,4800000
    .venv/bin/python bench/cluster_convergence.py league --store S --preset small --game G \\
        --algorithm public --abstraction-seeds 0 --solve-seeds 0
    .venv/bin/python bench/cluster_convergence.py report --store S --figure bench/figures/F.png

`run` builds, for every cluster count k and abstraction seed (the seed of every k-means: the
opponent clusters, the HSD and the OCHS buckets), the `lhe-solve` abstraction at the preset; for
every solve seed it solves it to each length in turn, every longer solve continuing the last
through `parent`, and takes the exact best response of each solve in the real game (stage
`best-response`). Every step is a stage: a killed run, rerun alike, resumes from the store.

`report` gathers every best response in the store whose strategy has that lineage (`gather`):
a markdown table of exploitability (mbb/g) per k and solve length, with the mean over seeds, its
spread (min-max) and a 95% t-interval over the seeds, and a figure (log scale) with one line per
k, its seed spread shaded and the paper's 300,000 iterations marked, and beside it each pooled
league's standings (below); and, for every `league` in the store between gathered solves, its
order beside their order by exploitability.

`league` plays the duplicate league (stage `league`, the preset's deals) between the solves of
each k for one abstraction seed and solve seed at the longest length they all reached (or at
`--at`), on deals of that seed pair's own; with leagues of several seed pairs at one length,
`report` pools them: each pairing's mean over the seed pairs with a t-interval over them.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path

import numpy as np

from gameforge.artifacts import Artifact, ArtifactStore
from gameforge.engines.common.stats import mean_half_width, t_half_width
from gameforge.stages.reporting import head_to_head

PAPER_ITERATIONS = 300_000  # the paper's chance-sampled CFR iterations per abstraction
KMEANS_NODES = ("opponent-clusters", "hsd-buckets", "ochs-buckets")
# public sampling as lhe-league's paper-public preset runs it: CFR+ with quadratic averaging
PUBLIC_CFR_PLUS = {"public": {"plus": True, "averaging": 2}}
SOLVERS = {"chance": "chance-sampled CFR", "public": "public chance sampling, CFR+"}


def deal_seed(abstraction_seed: int, solve_seed: int) -> int:
    """The league deals of one seed pair: its own, so that pooled leagues are independent."""
    return 1000 * abstraction_seed + solve_seed


@dataclass(frozen=True)
class Point:
    """One exact best response: which abstraction and solve it measured, and what it found."""

    k: int  # opponent clusters of the OCHS
    abstraction_seed: int
    solve_seed: int
    algorithm: str
    iterations: int
    exploitability_mbb: float
    best_response: str  # the keys, for lineage
    strategy: str


def _lineage(store: ArtifactStore, br: Artifact) -> Point | None:
    """The point a best-response artifact stands for, or None if its strategy is not an
    abstract solve of the OCHS pipeline (a lossless solve, say)."""
    solve = store.open(br.inputs["strategy"])
    river = solve.inputs.get("river_buckets")
    middle = solve.inputs.get("middle_buckets")
    if river is None or middle is None:
        return None
    ochs_buckets = store.open(river)
    clusters = store.open(store.open(ochs_buckets.inputs["ochs"]).inputs["opponent_clusters"])
    seeds = {
        int(clusters.params["seed"]),
        int(store.open(middle).params["seed"]),
        int(ochs_buckets.params["seed"]),
    }
    if len(seeds) != 1:
        return None  # not one of `run`'s abstractions, whose k-means share one seed
    summary = br.meta["summary"]
    return Point(
        k=int(clusters.params["k"]),
        abstraction_seed=seeds.pop(),
        solve_seed=int(solve.params.get("seed", 0)),
        algorithm=str(solve.params["algorithm"]),
        iterations=int(solve.meta["summary"]["iterations"]),
        exploitability_mbb=float(summary["exploitability_mbb_per_game"]),
        best_response=br.key,
        strategy=solve.key,
    )


def gather(store: ArtifactStore, game: str | None = None) -> list[Point]:
    """Every stored best response of an abstract solve (of `game`, if given), sorted."""
    points = []
    for key in store.keys():  # noqa: SIM118 (a store, not a dict)
        if not key.startswith("best-response-"):
            continue
        br = store.open(key)
        if game is not None and br.params.get("game") != game:
            continue
        point = _lineage(store, br)
        if point is not None:
            points.append(point)
    return sorted(points, key=lambda p: (p.algorithm, p.k, p.iterations, p.abstraction_seed,
                                         p.solve_seed))  # fmt: skip


@dataclass(frozen=True)
class Cell:
    """Exploitability of one cluster count at one solve length, over its seeds."""

    algorithm: str
    k: int
    iterations: int
    values: tuple[float, ...]  # mbb/g, one per (abstraction seed, solve seed)
    seeds: tuple[tuple[int, int], ...]  # (abstraction seed, solve seed) of each value

    @property
    def mean(self) -> float:
        """Mean over the seeds."""
        return float(np.mean(self.values))

    @property
    def half_width(self) -> float:
        """95% t-interval half-width of the mean over the seeds (nan with one seed)."""
        return t_half_width(np.asarray(self.values))


def paired_values(a: Cell, b: Cell) -> list[tuple[float, float]]:
    """(a's value, b's value) for every seed both cells have, in b's seed order."""
    mine = dict(zip(a.seeds, a.values, strict=True))
    return [(mine[seed], v) for seed, v in zip(b.seeds, b.values, strict=True) if seed in mine]


def difference(a: Cell, b: Cell) -> tuple[float, float, str]:
    """b's exploitability minus a's, its 95% half-width and how it was formed: paired seed by
    seed over the seeds both have, where there are two or more (the same abstraction seed
    shares the HSD buckets, the same solve seed the sampled boards, so their noise partly
    cancels), else as independent means."""
    diffs = np.array([vb - va for va, vb in paired_values(a, b)])
    if len(diffs) >= 2:
        return float(diffs.mean()), t_half_width(diffs), f"paired over {len(diffs)} seeds"
    return b.mean - a.mean, float(np.hypot(a.half_width, b.half_width)), "independent"


def summarise(points: list[Point]) -> list[Cell]:
    """One cell per (algorithm, k, iterations), its values in seed order."""
    groups: dict[tuple[str, int, int], list[Point]] = {}
    for p in points:
        groups.setdefault((p.algorithm, p.k, p.iterations), []).append(p)
    return [
        Cell(a, k, it, tuple(p.exploitability_mbb for p in got),
             tuple((p.abstraction_seed, p.solve_seed) for p in got))
        for (a, k, it), got in sorted(groups.items())
    ]  # fmt: skip


def table_lines(cells: list[Cell]) -> list[str]:
    """Markdown: k, iterations, seeds, mean ± 95% over seeds, min-max."""
    lines = [
        "| algorithm | k | iterations | seeds | exploitability (mbb/g), mean ± 95% | min-max |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for c in cells:
        hw = "" if np.isnan(c.half_width) else f" ± {c.half_width:.1f}"
        lines.append(
            f"| {c.algorithm} | {c.k} | {c.iterations:,} | {len(c.values)} | {c.mean:.1f}{hw} | "
            f"{min(c.values):.1f}-{max(c.values):.1f} |"
        )
    return lines


def order_lines(cells: list[Cell]) -> list[str]:
    """At each solve length every k has, the order by exploitability, claimed only where the
    95% interval of a neighbouring pair's difference excludes 0 (lower is better), and the
    most against the fewest clusters, the paper's claim in one difference."""
    lines = []
    by_length: dict[tuple[str, int], list[Cell]] = {}
    for c in cells:
        by_length.setdefault((c.algorithm, c.iterations), []).append(c)
    for (algorithm, iterations), row in sorted(by_length.items()):
        ranked = sorted(row, key=lambda c: c.mean)
        decided, undecided = [], []
        for a, b in zip(ranked, ranked[1:], strict=False):
            gap, width, _ = difference(a, b)
            shown = f"C{a.k} {'<' if gap > width else '~'} C{b.k}"
            (decided if gap > width else undecided).append(
                shown + ("" if np.isnan(width) else f" ({gap:+.1f} ± {width:.1f})")
            )
        line = (
            f"- {algorithm}, {iterations:,} iterations, lowest first: "
            + ", ".join(f"C{c.k} {c.mean:.1f}" for c in ranked)
            + f"; separated: {', '.join(decided) or 'none'}"
            + (f"; not separated: {', '.join(undecided)}" if undecided else "")
        )
        fewest, most = min(row, key=lambda c: c.k), max(row, key=lambda c: c.k)
        gap, width, how = difference(fewest, most)
        if fewest is not most and not np.isnan(width):
            line += f"; C{most.k} - C{fewest.k} = {gap:+.1f} ± {width:.1f} mbb/g ({how})"
        lines.append(line)
    return lines


def convergence_lines(cells: list[Cell]) -> list[str]:
    """Per algorithm and k, how much each longer solve gained: the means over the seeds both
    lengths have, the fall, and the local slope of log exploitability against log iterations
    (0 where the curve has flattened onto the abstraction's own error)."""
    lines = []
    by_k: dict[tuple[str, int], list[Cell]] = {}
    for c in cells:
        by_k.setdefault((c.algorithm, c.k), []).append(c)
    for (algorithm, k), row in sorted(by_k.items()):
        steps = []
        for a, b in zip(row, row[1:], strict=False):
            common = paired_values(a, b)
            if not common:
                continue
            before, after = (float(np.mean(v)) for v in zip(*common, strict=True))
            slope = np.log(after / before) / np.log(b.iterations / a.iterations)
            steps.append(
                f"{a.iterations:,} to {b.iterations:,}: {before:.1f} to {after:.1f}, "
                f"{after / before - 1:+.0%} (slope {slope:+.2f}, {len(common)} "
                f"seed{'s' if len(common) > 1 else ''})"
            )
        if steps:
            lines.append(f"- {algorithm} C{k}: " + "; ".join(steps))
    return lines


def figure(cells: list[Cell], out: Path, title: str, leagues: Sequence[LeagueOf] = ()) -> None:
    """Exploitability (log) against solve length, a panel per solver (their iterations differ
    in kind), a line per k in the same colour in each, with its seed spread shaded; beside
    them, a panel per pooled league (`pooled_groups`): each k's standing with its interval."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    algorithms = sorted({c.algorithm for c in cells})
    ks = sorted({c.k for c in cells})
    colours = dict(zip(ks, plt.cm.viridis(np.linspace(0, 0.85, max(len(ks), 2))), strict=False))
    groups = pooled_groups(leagues)
    panels = len(algorithms) + len(groups)
    fig, axes = plt.subplots(1, panels, figsize=(max(5 * panels, 7), 5), layout="constrained",
                             squeeze=False)  # fmt: skip
    plain = matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:,.0f}")
    for ax in axes[0][1 : len(algorithms)]:
        ax.sharey(axes[0][0])
        ax.tick_params(labelleft=False)
    for ax, algorithm in zip(axes[0], algorithms, strict=False):
        for k in ks:
            mine = sorted((c for c in cells if (c.algorithm, c.k) == (algorithm, k)),
                          key=lambda c: c.iterations)  # fmt: skip
            if not mine:
                continue
            x = [c.iterations for c in mine]
            counts = sorted({len(c.values) for c in mine})
            seeds = (f"{counts[0]} seed{'s' if counts[0] > 1 else ''}" if len(counts) == 1
                     else f"{counts[0]}-{counts[-1]} seeds a point")  # fmt: skip
            ax.plot(x, [c.mean for c in mine], marker="o", color=colours[k],
                    label=f"C{k} ({seeds})")  # fmt: skip
            ax.fill_between(x, [min(c.values) for c in mine], [max(c.values) for c in mine],
                            color=colours[k], alpha=0.2)  # fmt: skip
        if algorithm == "chance":
            ax.axvline(PAPER_ITERATIONS, color="grey", linestyle=":", label="the paper's 300,000")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.yaxis.set_major_formatter(plain)
        ax.yaxis.set_minor_formatter(plain)
        lengths = sorted({c.iterations for c in cells if c.algorithm == algorithm})
        ax.set_xticks(lengths, [f"{x:,}" for x in lengths])  # the lengths solved, in full
        ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        ax.set_xlabel(f"{SOLVERS.get(algorithm, algorithm)}: iterations")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    axes[0][0].set_ylabel("exploitability in the real game (mbb/g, exact)")
    for ax, ((algorithm, iterations, league_ks), group) in zip(
        axes[0][len(algorithms) :], groups.items(), strict=True
    ):
        for x, (k, (mean, width)) in enumerate(zip(league_ks, standings(group), strict=True)):
            ax.errorbar(x, mean, yerr=width, marker="o", capsize=6, color=colours.get(k, "k"))
        ax.axhline(0, color="grey", linewidth=0.8)
        ax.set_xticks(range(len(league_ks)), [f"C{k}" for k in league_ks])
        ax.set_xlim(-0.5, len(league_ks) - 0.5)
        ax.set_ylabel("mean head to head against the others (mbb/g, 95%)")
        solver = SOLVERS.get(algorithm, algorithm)
        ax.set_xlabel(
            f"league after {iterations:,} iterations of {solver},\n{len(group)} seed pairs, "
            f"each k against the other {len(league_ks) - 1}"
        )
        ax.grid(True, axis="y", alpha=0.3)
    fig.suptitle(title, fontsize=10)
    fig.savefig(out, dpi=110)
    plt.close(fig)


def longest_solves(points: list[Point], algorithm: str, abstraction_seed: int,
                   solve_seed: int, length: int | None = None) -> dict[int, Point]:  # fmt: skip
    """Per k, the solve of one abstraction seed and solve seed by `algorithm` at `length`, or
    by default at the longest length every k reached (equal iterations: a k solved further
    would be favoured); empty where not every k has it."""
    mine = [p for p in points
            if (p.algorithm, p.abstraction_seed, p.solve_seed) == (algorithm, abstraction_seed,
                                                                   solve_seed)]  # fmt: skip
    ks = {p.k for p in mine}
    common = [n for n in {p.iterations for p in mine}
              if {p.k for p in mine if p.iterations == n} == ks]  # fmt: skip
    if length is not None:
        common = [n for n in common if n == length]
    if not common:
        return {}
    return {p.k: p for p in mine if p.iterations == max(common)}


@dataclass(frozen=True)
class LeagueOf:
    """A stored league between gathered solves of one algorithm, length and seed pair."""

    key: str
    players: tuple[Point, ...]  # in seat order: the rows and columns of `mbb`
    mbb: np.ndarray  # mbb[i, j]: player i's head-to-head result against j, mbb/g
    ci: np.ndarray  # its 95% half-widths: the card luck of this league's deals
    deals: int  # the league's deal seed
    hands: int  # per pairing
    summary: dict


def stored_leagues(store: ArtifactStore, points: list[Point]) -> list[LeagueOf]:
    """Every stored league whose players are all gathered solves of one algorithm, length,
    abstraction seed and solve seed (as `league` plays them)."""
    by_strategy = {p.strategy: p for p in points}
    found = []
    for key in store.keys():  # noqa: SIM118 (a store, not a dict)
        if not key.startswith("league-"):
            continue
        league = store.open(key)
        seats = sorted((n for n in league.inputs if n.startswith("players.")),
                       key=lambda n: int(n.split(".")[1]))  # fmt: skip
        players = [by_strategy[league.inputs[n]] for n in seats if league.inputs[n] in by_strategy]
        alike = {(p.algorithm, p.iterations, p.abstraction_seed, p.solve_seed) for p in players}
        if len(players) < 2 or len(players) != len(seats) or len(alike) != 1:
            continue
        summary = league.meta["summary"]
        found.append(LeagueOf(key, tuple(players), np.asarray(league["mbb_per_game"][:]),
                              np.asarray(league["ci95"][:]), int(league.params["seed"]),
                              int(summary["hands_per_pairing"]), summary))  # fmt: skip
    return found


def league_lines(leagues: list[LeagueOf]) -> list[str]:
    """Each league's order (head to head at 95%) beside the same players' order by exact
    exploitability (lowest first)."""
    lines = []
    for league in leagues:
        ranked = sorted(league.players, key=lambda p: p.exploitability_mbb)
        first = league.players[0]
        lines.append(
            f"- league `{league.key}` ({first.algorithm} at {first.iterations:,} iterations, "
            f"abstraction seed {first.abstraction_seed}, solve seed {first.solve_seed}, "
            f"deal seed {league.deals}, {league.hands:,} hands a pairing): by the league "
            f"{league.summary['ranking_text']}; by exploitability "
            + " < ".join(f"C{p.k} {p.exploitability_mbb:.1f}" for p in ranked)
        )
        lines += [f"  - {line}" for line in league.summary["decided"] + league.summary["undecided"]]
    return lines


def pooled_groups(
    leagues: Sequence[LeagueOf],
) -> dict[tuple[str, int, tuple[int, ...]], list[LeagueOf]]:
    """Per algorithm, length and k, the leagues of two or more seed pairs to pool, in seed order:
    only leagues on the seed pair's own deals (`deal_seed`), since leagues on shared deals share
    their card luck, which no interval over seeds holds; of several leagues of one seed pair,
    the one with the most hands a pairing."""
    chosen: dict[tuple[str, int, tuple[int, ...]], dict[tuple[int, int], LeagueOf]] = {}
    for league in leagues:
        first = league.players[0]
        if league.deals != deal_seed(first.abstraction_seed, first.solve_seed):
            continue
        group = chosen.setdefault(
            (first.algorithm, first.iterations, tuple(p.k for p in league.players)), {}
        )
        seed = (first.abstraction_seed, first.solve_seed)
        if seed not in group or (league.hands, league.key) > (group[seed].hands, group[seed].key):
            group[seed] = league
    return {
        name: [group[seed] for seed in sorted(group)]
        for name, group in sorted(chosen.items())
        if len(group) >= 2
    }


def _pooled(values: np.ndarray, luck: float) -> tuple[float, float]:
    """Mean over independent seed pairs and its 95% t half-width, never narrower than `luck`
    (the card luck alone: a few seeds can agree by chance)."""
    return float(values.mean()), max(t_half_width(values), luck)


def pooled_table(group: list[LeagueOf]) -> tuple[np.ndarray, np.ndarray]:
    """The seed pairs' mean head-to-head table (row vs column, mbb/g) and its 95% half-widths:
    a t-interval over the seed pairs, never narrower than their pooled card luck."""
    tables = np.stack([league.mbb for league in group])
    luck = mean_half_width(np.stack([league.ci for league in group]))
    n = tables.shape[1]
    mean, half = np.zeros((n, n)), np.zeros((n, n))
    for i, j in combinations(range(n), 2):
        mean[i, j], half[i, j] = _pooled(tables[:, i, j], float(luck[i, j]))
        mean[j, i], half[j, i] = -mean[i, j], half[i, j]
    return mean, half


def pooled_league_lines(leagues: list[LeagueOf]) -> list[str]:
    """Per algorithm and length with leagues of two or more seed pairs between the same k
    (`pooled_groups`): the order at 95% and each pairing's mean over the seed pairs with its
    t-interval over them (`pooled_table`: it holds the spread between abstractions and solves
    as well as the card luck), claimed only where it excludes 0."""
    lines = []
    for (algorithm, iterations, ks), group in pooled_groups(leagues).items():
        mean, half = pooled_table(group)
        result = head_to_head([f"C{k}" for k in ks], mean, half, "mbb/g", 1)
        hands = sorted({league.hands for league in group})
        hands_text = f"{hands[0]:,}" + (f" to {hands[-1]:,}" if len(hands) > 1 else "")
        lines.append(
            f"- leagues over {len(group)} seed pairs ({algorithm} at {iterations:,} iterations, "
            f"{hands_text} hands a pairing, each on its own deals), mean head to head ± 95% "
            f"over the seeds: {result['ranking_text']}"
        )
        lines += [f"  - {line}" for line in result["decided"] + result["undecided"]]
    return lines


def standings(group: list[LeagueOf]) -> list[tuple[float, float]]:
    """Each player's mean head-to-head result against the others (mbb/g), pooled over the
    seed pairs like `pooled_table`, with its 95% half-width."""
    others = len(group[0].players) - 1
    rows = np.stack([league.mbb.sum(axis=1) / others for league in group])
    # each row's card luck as if its pairings were independent: only a floor
    row_luck = np.stack([np.sqrt((league.ci**2).sum(axis=1)) / others for league in group])
    luck = mean_half_width(row_luck)
    return [_pooled(rows[:, i], float(luck[i])) for i in range(rows.shape[1])]


def play_league(args: argparse.Namespace, log: Callable[[str], None]) -> None:
    """The preset's duplicate league between each k's solve at the longest length every k
    reached, or at `--at` (one abstraction seed and solve seed each, on that pair's own deals),
    stored as a `league` artifact."""
    from gameforge.flows.specs import get_flow
    from gameforge.stages.runner import run_stage

    if any(s.startswith("league.seed=") for s in args.set):
        sys.exit("league.seed is set per seed pair (1000 x abstraction seed + solve seed)")
    store = ArtifactStore(args.store)
    points = gather(store, args.game)
    params = get_flow("lhe-league").resolve(args.preset, args.set)["league"]
    for seed in _ints(args.abstraction_seeds):
        for solve_seed in _ints(args.solve_seeds):
            longest = longest_solves(points, args.algorithm, seed, solve_seed, args.at)
            if len(longest) < 2:
                length = f"{args.at:,} iterations" if args.at else "a common length"
                sys.exit(
                    f"fewer than two k solved to {length} for abstraction seed {seed}, "
                    f"solve seed {solve_seed} by {args.algorithm} in {args.store}"
                )
            game = store.open(longest[min(longest)].strategy).params["game"]
            inputs = {f"players.{i}": longest[k].strategy for i, k in enumerate(sorted(longest))}
            deals = deal_seed(seed, solve_seed)
            run_stage("league", {**params, "game": game, "seed": deals}, inputs, store=store,
                      log=log)  # fmt: skip
    leagues = stored_leagues(store, points)
    print("\n".join(league_lines(leagues) + pooled_league_lines(leagues)))


def _ints(text: str) -> list[int]:
    return [int(v) for v in text.split(",") if v.strip()]


def stored_solves(store: ArtifactStore) -> list[Artifact]:
    """Every stored `cfr` artifact, opened once for `chain_inputs`' lookups."""
    return [store.open(key) for key in store.keys() if key.startswith("cfr-")]  # noqa: SIM118


def chain_inputs(solves: list[Artifact], cfr: dict, inputs: dict[str, str],
                 parent: str | None) -> dict[str, str]:  # fmt: skip
    """The inputs of the solve `cfr` asks for: those of a stored solve of that length and
    settings (continued from `parent` where one was), else `parent` or the longest stored
    shorter solve to continue, else the abstraction's alone (a fresh solve)."""
    same = {name: value for name, value in cfr.items() if name != "iterations"}
    mine = [solve for solve in solves
            if all(solve.inputs.get(name) == value for name, value in inputs.items())
            and all(solve.params.get(name) == value for name, value in same.items())]  # fmt: skip
    done = {solve.key: int(solve.meta["summary"]["iterations"]) for solve in mine}
    # a stored solve of this length is reused as it was made, so a rerun recomputes nothing
    exact = sorted((s for s in mine if done[s.key] == cfr["iterations"]),
                   key=lambda s: (s.inputs.get("parent") != parent, s.key))  # fmt: skip
    if exact:
        return dict(exact[0].inputs)
    shorter = [s for s in mine if done[s.key] < cfr["iterations"]]
    if parent is None and shorter:
        parent = max(shorter, key=lambda s: (done[s.key], s.key)).key
    return {**inputs, **({"parent": parent} if parent else {})}


def run(args: argparse.Namespace, log: Callable[[str], None]) -> None:
    """Build, solve and best-respond every (k, abstraction seed, solve seed, length): every
    abstraction first, then one solve length at a time across all of them, so that a run cut
    short has whole cross-sections."""
    from gameforge.flows.pipeline import run_plan
    from gameforge.flows.request import RunRequest
    from gameforge.flows.runtime import dask_executor
    from gameforge.flows.specs import get_flow
    from gameforge.stages.runner import run_stage

    spec = get_flow("lhe-solve")
    store = ArtifactStore(args.store)
    upstream = [n for n in spec.upstream("cfr") if n != "cfr"]
    with dask_executor(None) as executor:
        abstractions: dict[tuple[int, int], tuple[str, dict[str, str]]] = {}
        for seed in _ints(args.abstraction_seeds):
            for k in _ints(args.k):
                sets = [*args.set, f"opponent-clusters.k={k}",
                        *(f"{n}.seed={seed}" for n in KMEANS_NODES)]  # fmt: skip
                params = spec.resolve(args.preset, sets)
                asked = RunRequest(
                    flow=spec.name, preset=args.preset, overrides=sets, only=upstream
                )
                built = run_plan(asked, store, executor, log=log)
                abstractions[seed, k] = (
                    params["cfr"]["game"],
                    {"middle_buckets": built["hsd-buckets"].key,
                     "river_buckets": built["ochs-buckets"].key},
                )  # fmt: skip
        # each solve is the stored one of its length, or continues the longest shorter one
        parents: dict[tuple[int, int, int], str] = {}
        stored = stored_solves(store)
        for length in sorted(_ints(args.lengths)):
            for (seed, k), (game, inputs) in abstractions.items():
                for solve_seed in _ints(args.solve_seeds):
                    cfr = {"game": game, "algorithm": args.algorithm, "iterations": length,
                           "seed": solve_seed, "evaluations": 0,
                           **PUBLIC_CFR_PLUS.get(args.algorithm, {})}  # fmt: skip
                    given = chain_inputs(stored, cfr, inputs, parents.get((seed, k, solve_seed)))
                    solve = run_stage("cfr", cfr, given, store=store, log=log)
                    parents[seed, k, solve_seed] = solve.key
                    br = {"game": game, "precision": args.precision}
                    run_stage("best-response", br, {"strategy": solve.key}, store=store,
                              executor=executor, log=log)  # fmt: skip


def main() -> None:
    """Dispatch."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("which", choices=("run", "league", "report"))
    parser.add_argument("--store", required=True)
    parser.add_argument("--preset", default="small")
    parser.add_argument("--k", default="6,8,10,12")
    parser.add_argument("--abstraction-seeds", default="0")
    parser.add_argument("--solve-seeds", default="0")
    parser.add_argument("--lengths", default="300000,1200000,4800000")
    parser.add_argument("--algorithm", default="chance")
    parser.add_argument("--precision", default="float64")
    parser.add_argument("--set", action="append", default=[], help="run, league: a preset override")
    parser.add_argument("--game", default=None, help="report, league: only this game's solves")
    parser.add_argument("--figure", default=None, help="report: write the figure here")
    parser.add_argument(
        "--at", type=int, default=None, help="league: this solve length (default: the longest)"
    )
    args = parser.parse_args()
    if args.which in ("run", "league"):
        sys.path.insert(0, str(Path(__file__).parent))
        from _shared import elapsed_log

        (run if args.which == "run" else play_league)(args, elapsed_log())
        return
    store = ArtifactStore(args.store)
    points = gather(store, args.game)
    cells = summarise(points)
    if not cells:
        sys.exit(f"no best response of an abstract solve in {args.store}")
    print("\n".join(table_lines(cells)))
    print()
    print("\n".join(order_lines(cells)))
    steps = convergence_lines(cells)
    if steps:
        print()
        print("\n".join(steps))
    leagues = stored_leagues(store, points)
    if leagues:
        print()
        print("\n".join(league_lines(leagues)))
    pooled = pooled_league_lines(leagues)
    if pooled:
        print()
        print("\n".join(pooled))
    if args.figure:
        title = (f"exact exploitability and league standing by opponent clusters, "
                 f"{args.game or 'every game stored'}")  # fmt: skip
        figure(cells, Path(args.figure), title, leagues)
        print(f"\nwrote {args.figure}")


if __name__ == "__main__":
    main()
