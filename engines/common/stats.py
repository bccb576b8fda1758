"""Interval estimates and significance decisions shared by the evaluation stages.

- `wilson_interval`: the 95% interval of a rate (a win rate, a fraction of trials), valid for
  small counts where the normal approximation gives "0.000 ± 0.000" for 0 wins of 2.
- `one_sided_lower_bound`: mean - z * SE, the bound an "at least" claim (LBR) needs.
- `t_half_width`: the 95% Student-t half-width of a mean over a few trials or seeds.
- `separated` and `tiers`: which head-to-head results exclude zero, and the partial order
  (ordered tiers) those decisions support.
"""

from __future__ import annotations

from math import sqrt

import numpy as np

Z_TWO_SIDED_95 = 1.96  # the project's two-sided 95% quantile (as in every reported ci95)
Z_ONE_SIDED_95 = 1.645  # one-sided 95%: P(Z > 1.645) = 0.05


def wilson_interval(successes: float, n: int, z: float = Z_TWO_SIDED_95) -> tuple[float, float]:
    """Wilson score interval (low, high) of a rate of `successes` in `n` trials.

    `successes` may be fractional (shared wins count 1/k): for outcomes in [0, 1] the
    variance is at most p(1 - p), so the interval stays conservative. With no trials the
    rate is unknown: (0, 1).
    """
    if n <= 0:
        return 0.0, 1.0
    if not -1e-9 * n <= successes <= n * (1 + 1e-9):  # tolerate a float sum of shares
        raise ValueError(f"wilson_interval: successes {successes} outside [0, {n}]")
    p = min(max(successes / n, 0.0), 1.0)
    z2 = z * z
    denominator = 1.0 + z2 / n
    centre = (p + z2 / (2 * n)) / denominator
    half = z * sqrt(p * (1.0 - p) / n + z2 / (4.0 * n * n)) / denominator
    # the interval always holds p; clip rounding at the ends (p = 0 or 1 gives low = 0, high = 1)
    return max(0.0, min(centre - half, p)), min(1.0, max(centre + half, p))


def one_sided_lower_bound(mean: float, standard_error: float, z: float = Z_ONE_SIDED_95) -> float:
    """The one-sided lower confidence bound mean - z * SE (95% for the default z)."""
    return mean - z * standard_error


def t_half_width(values: np.ndarray) -> float:
    """95% two-sided Student-t half-width of the mean of `values` (nan with fewer than two)."""
    values = np.asarray(values, dtype=np.float64)
    n = len(values)
    if n < 2:
        return float("nan")
    from scipy.stats import t  # scipy only where a t interval is asked for

    return float(t.ppf(0.975, n - 1) * values.std(ddof=1) / np.sqrt(n))


def mean_half_width(half_widths: np.ndarray) -> np.ndarray:
    """The 95% half-width of the mean of independent estimates (stacked on axis 0), from each
    estimate's own: sqrt(sum of squares) / n."""
    half_widths = np.asarray(half_widths, dtype=np.float64)
    return np.sqrt((half_widths**2).sum(axis=0)) / len(half_widths)


def separated(table: np.ndarray, half_widths: np.ndarray) -> np.ndarray:
    """beats[i, j]: row i's head-to-head result against j is positive beyond its interval.

    `table[i, j]` is i's mean result against j (antisymmetric) and `half_widths[i, j]` the
    half-width of that mean's interval; the diagonal is never decided.
    """
    table = np.asarray(table, dtype=np.float64)
    half_widths = np.asarray(half_widths, dtype=np.float64)
    beats = table - half_widths > 0
    np.fill_diagonal(beats, False)
    return beats


def tiers(beats: np.ndarray, means: np.ndarray) -> list[list[int]]:
    """The finest ordered partition of the players that the decided results support.

    Tier boundaries lie only where every player above significantly beats every player below
    (`beats` from `separated`); players inside one tier are not ordered (some of their pairs
    may be decided, in a cycle or unevenly). Such boundaries are nested, and sorting by the
    number of significant wins minus losses puts every one at a prefix; `means` only orders
    players inside a tier (best first) for display.
    """
    beats = np.asarray(beats, dtype=bool)
    n = len(beats)
    score = beats.sum(axis=1) - beats.sum(axis=0)
    order = sorted(range(n), key=lambda i: (-score[i], -float(means[i]), i))
    out: list[list[int]] = []
    current: list[int] = []
    for position, player in enumerate(order):
        current.append(player)
        above, below = order[: position + 1], order[position + 1 :]
        if not below or beats[np.ix_(above, below)].all():
            out.append(sorted(current, key=lambda i: (-float(means[i]), i)))
            current = []
    return out
