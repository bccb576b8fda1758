"""Honest statistics: Wilson intervals, one-sided bounds, and league orders only where the
head-to-head intervals separate (engines.common.stats, stages.reporting)."""

from __future__ import annotations

from math import sqrt

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from gameforge.engines.common.stats import (
    mean_half_width,
    one_sided_lower_bound,
    separated,
    t_half_width,
    tiers,
    wilson_interval,
)
from gameforge.stages.poker.league import more_clusters_claim
from gameforge.stages.reporting import head_to_head, ranking_line, rate_fields, win_rate_text

Z = 1.96


def wilson_by_roots(k: int, n: int) -> tuple[float, float]:
    """The Wilson bounds as the roots of (k/n - p)^2 = z^2 p (1 - p) / n, a quadratic in p."""
    phat = k / n
    a = 1 + Z * Z / n
    b = -(2 * phat + Z * Z / n)
    c = phat * phat
    roots = np.roots([a, b, c]).real
    return float(roots.min()), float(roots.max())


@pytest.mark.parametrize(("k", "n"), [(0, 2), (1, 2), (10, 10), (50, 100), (3, 7)])
def test_wilson_matches_the_quadratic_roots(k, n):
    """The closed form equals the roots of the score test's quadratic."""
    assert wilson_interval(k, n) == pytest.approx(wilson_by_roots(k, n), abs=1e-12)


def test_wilson_known_values():
    """0 of 2 and 10 of 10 have the closed ends z^2/(n+z^2) and n/(n+z^2); 1 of 2 is symmetric
    about 1/2; 50 of 100 is 0.5 -/+ z sqrt(0.25/100 + z^2/40000) / (1 + z^2/100)."""
    low, high = wilson_interval(0, 2)
    assert low == 0.0 and high == pytest.approx(Z * Z / (2 + Z * Z))  # 0.6576, not "± 0.000"
    assert high == pytest.approx(0.657628, abs=1e-6)
    low, high = wilson_interval(10, 10)
    assert high == 1.0 and low == pytest.approx(10 / (10 + Z * Z))
    low, high = wilson_interval(1, 2)
    assert low + high == pytest.approx(1.0) and low == pytest.approx(0.094529, abs=1e-6)
    half = Z * sqrt(0.25 / 100 + Z * Z / 40_000) / (1 + Z * Z / 100)
    assert wilson_interval(50, 100) == pytest.approx((0.5 - half, 0.5 + half))
    assert wilson_interval(0, 0) == (0.0, 1.0)  # no games: the rate is unknown
    with pytest.raises(ValueError, match="outside"):
        wilson_interval(3, 2)


@given(st.integers(1, 10_000).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
def test_wilson_holds_the_rate_and_stays_in_the_unit_interval(pair):
    """For any count the interval lies in [0, 1] and contains the observed rate."""
    k, n = pair
    low, high = wilson_interval(k, n)
    assert 0.0 <= low <= k / n <= high <= 1.0


@given(
    st.integers(1, 500).flatmap(
        lambda n: st.tuples(st.floats(0, 1).map(lambda f: f * n), st.just(n))
    )
)
def test_wilson_takes_fractional_shares(pair):
    """Shared wins make the count fractional; the interval still holds the rate, in [0, 1]."""
    s, n = pair
    low, high = wilson_interval(s, n)
    assert 0.0 <= low <= s / n + 1e-12 and s / n - 1e-12 <= high <= 1.0


def test_rate_fields_and_blokus_text():
    """A rate's summary fields carry its Wilson interval; the Blokus line quotes it."""
    fields = rate_fields(0, 2, "win_rate")
    assert fields == {"win_rate": 0.0, "win_rate_low": 0.0, "win_rate_high": 0.6576}
    row = {"steps": 4, "games": 2, **fields}
    assert win_rate_text(row) == "win rate 0.000 (95% Wilson 0.000-0.658, 2 games) after 4 steps"
    old = {"steps": 4, "games": 2, "win_rate": 0.0, "half_width": 0.0}  # before the Wilson
    assert win_rate_text(old) == win_rate_text(row)


def test_one_sided_lower_bound():
    """mean - 1.645 SE."""
    assert one_sided_lower_bound(100.0, 10.0) == pytest.approx(83.55)


def test_t_half_width_known_values():
    """t(0.975, 2) = 4.3027 (the tables' value) times SD 1 over sqrt(3); one value: none."""
    assert t_half_width(np.array([1.0, 2.0, 3.0])) == pytest.approx(4.302653 / sqrt(3), rel=1e-6)
    assert t_half_width(np.array([5.0, 5.0])) == 0.0
    assert np.isnan(t_half_width(np.array([7.0])))


def test_mean_half_width_is_the_half_width_of_a_mean_of_independent_estimates():
    """Four estimates each of half-width 2: the mean's is 2 / sqrt(4) = 1; elementwise."""
    halves = np.array([[2.0, 3.0], [2.0, 4.0], [2.0, 0.0], [2.0, 0.0]])
    assert mean_half_width(halves).tolist() == [1.0, 1.25]


def test_tiers_split_only_where_every_pair_across_is_decided():
    """A beats everyone; B and C are not separated; D loses to everyone but C (undecided):
    tiers {A} > {B, C, D}. With C > D decided too: {A} > {B, C} > {D}."""
    beats = np.zeros((4, 4), bool)
    beats[0, 1:] = True
    beats[1, 3] = True
    means = np.array([3.0, 1.0, 0.5, -2.0])
    assert tiers(beats, means) == [[0], [1, 2, 3]]
    beats[2, 3] = True
    assert tiers(beats, means) == [[0], [1, 2], [3]]
    nothing = np.zeros((3, 3), bool)
    assert tiers(nothing, np.array([1.0, 2.0, 0.0])) == [[1, 0, 2]]  # one tier, by mean
    cycle = np.zeros((3, 3), bool)
    cycle[0, 1] = cycle[1, 2] = cycle[2, 0] = True
    assert len(tiers(cycle, np.zeros(3))) == 1  # a cycle orders nobody


def test_tiers_come_from_the_decisions_not_the_means():
    """A player with the best mean (it crushed a weak player) but a significant loss to
    another is not ranked first."""
    beats = np.zeros((3, 3), bool)
    beats[1, 0] = True  # 1 beats 0 head to head
    beats[0, 2] = beats[1, 2] = True
    means = np.array([5.0, 1.0, -6.0])  # 0 has the best mean
    assert tiers(beats, means) == [[1], [0], [2]]


def league_table(mbb: dict[tuple[int, int], float], n: int) -> np.ndarray:
    """An antisymmetric table from the upper cells."""
    table = np.zeros((n, n))
    for (i, j), v in mbb.items():
        table[i, j], table[j, i] = v, -v
    return table


def test_head_to_head_states_no_order_when_every_cell_is_inside_its_interval():
    """The user's case: means C6 > C8 > C10 > C12 but every cell within its 95% interval."""
    labels = ["C6", "C8", "C10", "C12"]
    mbb = league_table({(0, 1): 10, (0, 2): 20, (0, 3): 25, (1, 2): 5, (1, 3): 12, (2, 3): 6}, 4)
    ci = np.full((4, 4), 30.0)
    out = head_to_head(labels, mbb, ci, "mbb/g", 1)
    assert out["ranking"] == [["C6", "C8", "C10", "C12"]]  # one tier: no order claimed
    assert out["ranking_text"] == "{C6, C8, C10, C12}"
    assert out["decided"] == [] and len(out["undecided"]) == 6
    assert "C6 vs C12: +25.0 ± 30.0 mbb/g" in out["undecided"]
    assert "head-to-head" in out["comparisons_from"]
    assert ranking_line(out).startswith("ranking at 95%: {C6, C8, C10, C12}; undecided: C6 vs C8")
    assert separated(mbb, ci).sum() == 0


def test_head_to_head_decided_pairs_and_tiers():
    """C12 beats everyone beyond its interval; the rest are undecided among themselves."""
    labels = ["C6", "C8", "C10", "C12"]
    mbb = league_table({(0, 1): 3, (0, 2): 4, (0, 3): -41, (1, 2): 2, (1, 3): -35, (2, 3): -40}, 4)
    ci = np.full((4, 4), 30.0)
    out = head_to_head(labels, mbb, ci, "mbb/g", 1)
    assert out["ranking"][0] == ["C12"] and sorted(out["ranking"][1]) == ["C10", "C6", "C8"]
    assert out["decided"] == [
        "C12 > C6: +41.0 ± 30.0 mbb/g",
        "C12 > C8: +35.0 ± 30.0 mbb/g",
        "C12 > C10: +40.0 ± 30.0 mbb/g",
    ]
    assert out["ranking_text"] == "C12 > {C6, C8, C10}"
    assert len(out["undecided"]) == 3


def test_decided_pairs_inside_one_tier_are_named():
    """C6 beats C10 and C12 but not C8, which beats nobody: no boundary separates anyone, and
    the line says which pairs are decided all the same (a tiny lhe-league run gave this)."""
    labels = ["C6", "C8", "C10", "C12"]
    cells = {(0, 1): 28.6, (0, 2): 30.3, (0, 3): 40.2, (1, 2): -2.5, (1, 3): 13.5, (2, 3): 26.1}
    ci = league_table({k: 30.0 for k in cells}, 4)
    out = head_to_head(labels, league_table(cells, 4), np.abs(ci), "mbb/g", 1)
    assert out["ranking"] == [["C6", "C10", "C8", "C12"]]
    assert out["decided"] == ["C6 > C10: +30.3 ± 30.0 mbb/g", "C6 > C12: +40.2 ± 30.0 mbb/g"]
    assert ranking_line(out) == (
        "ranking at 95%: {C6, C10, C8, C12}; decided within a tier: C6 > C10, C6 > C12; "
        "undecided: C6 vs C8, C10 vs C8, C8 vs C12, C10 vs C12"
    )


def test_more_clusters_claim_is_yes_no_or_undecided_with_evidence():
    """The paper's claim, pair by pair: all decided for more clusters (yes), one decided
    against (no), else undecided; the evidence lists every pair."""
    labels = ["C6", "C12"]
    ci = np.full((2, 2), 10.0)
    yes = more_clusters_claim(labels, league_table({(0, 1): -25}, 2), ci)
    assert yes["holds"] == "yes" and yes["evidence"] == ["C12 > C6: +25.0 ± 10.0 mbb/g"]
    no = more_clusters_claim(labels, league_table({(0, 1): 25}, 2), ci)
    assert no["holds"] == "no" and no["evidence"] == ["C6 > C12: +25.0 ± 10.0 mbb/g"]
    unsure = more_clusters_claim(labels, league_table({(0, 1): -5}, 2), ci)
    assert unsure["holds"] == "undecided" and unsure["evidence"] == ["C12 vs C6: +5.0 ± 10.0 mbb/g"]
    assert "statement" in unsure


def test_ranking_line_of_an_artifact_from_before_the_tiers():
    """An old summary's order of means is printed as untested."""
    assert ranking_line({"ranking": ["C6", "C8"]}) == "order of means (not tested): C6 > C8"
