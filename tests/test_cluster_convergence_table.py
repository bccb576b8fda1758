"""bench/cluster_convergence.py's arithmetic on made-up points and solves: which solves a
league takes, which stored solve a run reuses or continues, and when a difference between
cluster counts is claimed (paired over common seeds or not)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
from scipy.stats import t

from tests.test_cluster_convergence import _script


def test_a_league_takes_each_k_at_the_longest_length_all_reached():
    cc = _script()

    def point(k: int, iterations: int, solve_seed: int = 0):  # type: ignore[no-untyped-def]
        return cc.Point(k, 0, solve_seed, "public", iterations, 100.0, f"br{k}-{iterations}",
                        f"cfr{k}-{iterations}-{solve_seed}")  # fmt: skip

    points = [point(6, 1000), point(6, 4000), point(6, 16000), point(8, 1000), point(8, 4000),
              point(8, 4000, solve_seed=1)]  # fmt: skip
    chosen = cc.longest_solves(points, "public", 0, 0)
    assert {k: p.strategy for k, p in chosen.items()} == {6: "cfr6-4000-0", 8: "cfr8-4000-0"}
    assert cc.longest_solves(points, "public", 0, 1) == {8: points[-1]}  # one k: no league
    assert cc.longest_solves(points, "chance", 0, 0) == {}


def test_differences_pair_over_common_seeds_and_claim_only_separated_orders():
    cc = _script()
    seeds = ((0, 0), (0, 1), (1, 0))
    c6 = cc.Cell("public", 6, 4000, (300.0, 310.0, 290.0), seeds)
    c12 = cc.Cell("public", 12, 4000, (305.0, 316.0, 294.0), seeds)  # 4-6 above, seed by seed
    gap, width, how = cc.difference(c6, c12)
    diffs = np.array([5.0, 6.0, 4.0])
    assert (gap, how) == (5.0, "paired over 3 seeds")
    assert np.isclose(width, t.ppf(0.975, 2) * diffs.std(ddof=1) / np.sqrt(3))
    # the same values as independent means: the spread between seeds hides the difference
    alone = cc.Cell("public", 12, 4000, c12.values, ((2, 0), (2, 1), (3, 0)))
    gap, width, how = cc.difference(c6, alone)
    assert how == "independent" and np.isclose(width, np.hypot(c6.half_width, alone.half_width))
    assert width > gap
    # over the seeds in common only
    short = cc.Cell("public", 12, 4000, (305.0, 316.0), seeds[:2])
    gap, _, how = cc.difference(c6, short)
    assert (gap, how) == (5.5, "paired over 2 seeds")

    (line,) = cc.order_lines([c6, c12])
    assert "separated: C6 < C12 (+5.0 ± " in line
    assert "C12 - C6 = +5.0 ± " in line and "(paired over 3 seeds)" in line
    (line,) = cc.order_lines([c6, alone])
    assert "separated: none" in line and "not separated: C6 ~ C12" in line
    one = [cc.Cell("public", k, 1000, (v,), ((0, 0),)) for k, v in ((6, 400.0), (8, 300.0))]
    (line,) = cc.order_lines(one)  # one seed: no interval, nothing claimed
    assert line.endswith("lowest first: C8 300.0, C6 400.0; separated: none; not separated: "
                         "C8 ~ C6")  # fmt: skip


def test_a_run_reuses_a_stored_solve_of_its_length_before_continuing_a_shorter_one():
    cc = _script()
    abstraction = {"middle_buckets": "hsd-buckets-a", "river_buckets": "ochs-buckets-a"}
    settings = {"game": "holdem6", "algorithm": "public", "seed": 0, "evaluations": 0}

    def solve(key: str, iterations: int, parent: str | None = None, **changed):  # type: ignore[no-untyped-def]
        inputs = {**abstraction, **({"parent": parent} if parent else {})}
        params = {**settings, "iterations": iterations, **changed}
        return SimpleNamespace(key=key, inputs=inputs, params=params,
                               meta={"summary": {"iterations": iterations}})  # fmt: skip

    # a 200-iteration trial beside a chain made from scratch at 1,000, then continued to 4,000
    solves = [solve("cfr-trial", 200), solve("cfr-1k", 1000), solve("cfr-4k", 4000, "cfr-1k"),
              solve("cfr-other-seed", 2000, seed=1)]  # fmt: skip

    def given(iterations: int, parent: str | None = None) -> dict[str, str]:
        return cc.chain_inputs(solves, {**settings, "iterations": iterations}, abstraction, parent)

    assert given(1000) == abstraction  # stored as it was made, not continued from the trial
    assert given(4000, parent="cfr-1k") == {**abstraction, "parent": "cfr-1k"}
    assert given(4000) == {**abstraction, "parent": "cfr-1k"}  # the stored 4,000's own parent
    assert given(16000) == {**abstraction, "parent": "cfr-4k"}  # the longest stored shorter
    assert given(16000, parent="cfr-1k") == {**abstraction, "parent": "cfr-1k"}  # this run's
    assert given(100) == abstraction  # nothing shorter: a fresh solve
    other = {**abstraction, "river_buckets": "ochs-buckets-b"}
    assert cc.chain_inputs(solves, {**settings, "iterations": 4000}, other, None) == other


def test_the_gain_of_a_longer_solve_is_taken_over_the_seeds_both_lengths_have():
    cc = _script()
    short = cc.Cell("public", 6, 1000, (400.0, 300.0), ((0, 0), (1, 0)))
    long = cc.Cell("public", 6, 4000, (200.0,), ((0, 0),))  # seed (1, 0) not continued yet
    longer = cc.Cell("public", 6, 64000, (100.0,), ((0, 0),))
    alone = cc.Cell("public", 8, 1000, (300.0,), ((0, 0),))
    assert cc.convergence_lines([short, long, longer, alone]) == [
        "- public C6: 1,000 to 4,000: 400.0 to 200.0, -50% (slope -0.50, 1 seed); "
        "4,000 to 64,000: 200.0 to 100.0, -50% (slope -0.25, 1 seed)"
    ]


def test_leagues_of_several_seed_pairs_are_pooled_with_an_interval_over_them():
    cc = _script()

    def league(seed: tuple[int, int], c6_over_c12: float, hands: int = 600_000,
               deals: int | None = None):  # type: ignore[no-untyped-def]  # fmt: skip
        players = tuple(cc.Point(k, *seed, "public", 4000, 300.0, f"br{k}{seed}", f"cfr{k}{seed}")
                        for k in (6, 12))  # fmt: skip
        mbb = np.array([[0.0, c6_over_c12], [-c6_over_c12, 0.0]])
        ci = np.array([[0.0, 3.0], [3.0, 0.0]])  # each league's card luck
        deals = cc.deal_seed(*seed) if deals is None else deals
        return cc.LeagueOf(f"league{seed}-{hands}-{deals}", players, mbb, ci, deals, hands, {})

    # seed (0, 0) has a short league too: the longer one counts, whatever order they come in;
    # seed (1, 0) one on seed (0, 0)'s deals too, which share their card luck: left out
    leagues = [league((0, 0), -50.0, hands=60_000), league((0, 0), 8.0), league((0, 1), 10.0),
               league((1, 0), 12.0), league((1, 0), 40.0, hands=900_000, deals=0)]  # fmt: skip
    assert cc.deal_seed(1, 0) not in (cc.deal_seed(0, 0), cc.deal_seed(0, 1))
    width = t.ppf(0.975, 2) * np.std([8.0, 10.0, 12.0], ddof=1) / np.sqrt(3)
    assert cc.pooled_league_lines(leagues) == [
        "- leagues over 3 seed pairs (public at 4,000 iterations, 600,000 hands a pairing, each "
        "on its own deals), mean head to head ± 95% over the seeds: C6 > C12",
        f"  - C6 > C12: +10.0 ± {width:.1f} mbb/g",
    ]
    mean, half = cc.pooled_table(cc.pooled_groups(leagues)[("public", 4000, (6, 12))])
    assert mean.tolist() == [[0.0, 10.0], [-10.0, 0.0]] and half[0, 1] == half[1, 0] == width
    # a spread between seeds wider than the mean: nothing claimed
    spread = [league((0, 0), 8.0), league((0, 1), -6.0), league((1, 0), 13.0, hands=300_000)]
    (line, pair) = cc.pooled_league_lines(spread)
    assert "300,000 to 600,000 hands" in line and line.endswith("over the seeds: {C6, C12}")
    assert pair.startswith("  - C6 vs C12: +5.0 ± ")
    assert cc.pooled_league_lines(leagues[1:2]) == []  # one seed pair: no interval over seeds
    # seeds that agree by chance: the interval is never narrower than the pooled card luck
    agree = [league((0, 0), 8.0), league((0, 1), 8.0), league((1, 0), 8.0)]
    (_, pair) = cc.pooled_league_lines(agree)
    assert pair == f"  - C6 > C12: +8.0 ± {np.sqrt(3 * 3.0**2) / 3:.1f} mbb/g"
    # each k's standing: its mean against the others, pooled the same way
    (c6, c12) = cc.standings(cc.pooled_groups(leagues)[("public", 4000, (6, 12))])
    assert c6 == (10.0, width) and c12 == (-10.0, width)
