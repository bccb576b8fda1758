"""How evaluation stages state their results, and the lines their figures print.

- Round-robin leagues (`league`, `nlhe-league`): which head-to-head comparisons are decided at
  95%, which are not, and the partial order the decided ones give. A league never states an
  order its intervals do not separate: `ranking` is a list of tiers (best first) with a
  boundary only where every player above beats every player below, and each pair's
  comparison is quoted with its own head-to-head interval.
- Rates (a win rate, a share of trials): the rate with its 95% Wilson interval
  (`engines.common.stats.wilson_interval`), valid for a handful of games.

Light imports only (numpy): the figures import it.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import combinations
from typing import Any

import numpy as np

from gameforge.engines.common.stats import separated, tiers, wilson_interval

COMPARISONS_FROM = (
    "each pair's own head-to-head duplicate result and its 95% interval (1.96 standard errors "
    "of the per-deal duplicate outcomes); a comparison is decided where that interval "
    "excludes 0"
)


def comparison_text(
    labels: list[str], table: np.ndarray, half: np.ndarray, i: int, j: int, unit: str, digits: int
) -> str:
    """One pair's result from the better side: 'C12 > C6: +41.0 ± 30.0 mbb/g' when decided,
    'C10 vs C8: +3.1 ± 30.2 mbb/g' when the interval holds 0."""
    if table[j, i] > table[i, j]:
        i, j = j, i
    sign = ">" if table[i, j] - half[i, j] > 0 else "vs"
    return (
        f"{labels[i]} {sign} {labels[j]}: {table[i, j]:+.{digits}f} ± {half[i, j]:.{digits}f} "
        f"{unit}"
    )


def tier_text(ranking: list[list[str]]) -> str:
    """Tiers as one line: 'C12 > {C10, C8, C6}' (braces: not separated from each other)."""
    return " > ".join(t[0] if len(t) == 1 else "{" + ", ".join(t) + "}" for t in ranking)


def head_to_head(
    labels: list[str], table: np.ndarray, half: np.ndarray, unit: str, digits: int
) -> dict[str, Any]:
    """`ranking` (tiers), `ranking_text`, `decided` and `undecided` comparisons, and what they
    were decided from, for a league's antisymmetric table and its 95% half-widths."""
    table = np.asarray(table, dtype=np.float64)
    half = np.asarray(half, dtype=np.float64)
    n = len(labels)
    beats = separated(table, half)
    means = table.sum(axis=1) / max(n - 1, 1)
    ranking = [[labels[k] for k in tier] for tier in tiers(beats, means)]
    decided: list[str] = []
    undecided: list[str] = []
    for i, j in combinations(range(n), 2):
        line = comparison_text(labels, table, half, i, j, unit, digits)
        (decided if beats[i, j] or beats[j, i] else undecided).append(line)
    return {
        "ranking": ranking,
        "ranking_text": tier_text(ranking),
        "decided": decided,
        "undecided": undecided,
        "comparisons_from": COMPARISONS_FROM,
    }


def ranking_line(summary: dict[str, Any]) -> str:
    """The one-line ranking a league's plot prints: the tiers, the decided pairs the tiers do
    not show, and the undecided pairs (an artifact from before the tiers gives its order of
    means, said to be untested)."""
    if "ranking_text" not in summary:
        return "order of means (not tested): " + " > ".join(summary["ranking"])
    tier_of = {p: t for t, tier in enumerate(summary["ranking"]) for p in tier}
    pairs = [line.partition(":")[0] for line in summary["decided"]]
    inside = [p for p in pairs if len({tier_of[x] for x in p.split(" > ")}) == 1]
    undecided = [line.partition(":")[0] for line in summary["undecided"]]
    text = f"ranking at 95%: {summary['ranking_text']}"
    if inside:
        text += f"; decided within a tier: {', '.join(inside)}"
    if undecided:
        text += f"; undecided: {', '.join(undecided)}"
    return text


def rate_fields(successes: float, n: int, name: str = "rate") -> dict[str, Any]:
    """`{name: rate, name_low, name_high}`: a rate of `successes` in `n` with its 95% Wilson
    interval, rounded to 4 decimals (a rate over no trials is None, its interval 0 to 1)."""
    low, high = wilson_interval(successes, n)
    rate = round(successes / n, 4) if n else None
    return {name: rate, f"{name}_low": round(low, 4), f"{name}_high": round(high, 4)}


# the name of the untrained control row in a blokus-eval table
UNTRAINED = "untrained"


def win_rate_text(row: dict[str, Any]) -> str:
    """'win rate 0.433 (95% Wilson 0.347-0.523, 120 games) after 3,000 steps' for a
    `blokus-eval` result row (for a row from before the Wilson interval, which stored a
    normal-approximation half-width, the interval is recomputed from its rate and games)."""
    rate, games = row["win_rate"], row["games"]
    if "win_rate_low" in row:
        low, high = row["win_rate_low"], row["win_rate_high"]
    else:
        low, high = wilson_interval(rate * games, games)
    return (
        f"win rate {rate:.3f} (95% Wilson {low:.3f}-{high:.3f}, {games:,} "
        f"game{'' if games == 1 else 's'}) "
        f"after {row['steps']:,} steps"
    )


def width_ratio(narrower: float | None) -> str:
    """How AIVAT's interval compares with the plain one: '2.1x narrower' or '1.4x wider'."""
    if not narrower:
        return "no plain interval to compare"
    if narrower >= 1:
        return f"{narrower:.2f}x narrower"
    return f"{1 / narrower:.2f}x wider"


def inline(value: Any) -> str:
    """A value on one line: lists in brackets, dicts in braces, strings unquoted."""
    if isinstance(value, list):
        return "[" + ", ".join(inline(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {inline(v)}" for k, v in value.items()) + "}"
    return str(value)


def summary_lines(values: dict[str, Any], indent: str, width: int = 80) -> list[str]:
    """A summary as indented lines: a nested dict as a sub-listing, a list that does not fit
    on its line (or holds dicts) one item per line, everything else `name: value`."""
    lines = []
    for name, value in values.items():
        text = f"{indent}{name}: {inline(value)}"
        if isinstance(value, dict) and value:
            lines.append(f"{indent}{name}:")
            lines.extend(summary_lines(value, indent + "  ", width))
        elif (
            isinstance(value, list)
            and value
            and (len(text) > width or any(isinstance(v, dict) for v in value))
        ):
            lines.append(f"{indent}{name}:")
            for item in value:
                if isinstance(item, dict):
                    fields = ", ".join(f"{k}: {inline(v)}" for k, v in item.items())
                    lines.append(f"{indent}  - {fields}")
                else:
                    lines.append(f"{indent}  - {inline(item)}")
        else:
            lines.append(text)
    return lines


# A league's AIVAT table rows (its `scored` array's first axis): the mean and 95% half-width of
# AIVAT, the same of the plain result on the same hands, and the hands (row player's view).
AIVAT_MIRROR = np.array([-1.0, 1.0, -1.0, 1.0, 1.0])  # the column player's view: means change sign


def record_aivat(scored: np.ndarray, i: int, j: int, got: np.ndarray) -> None:
    """Store pairing (i, j)'s AIVAT row from i's view, and j's view of it."""
    scored[:, i, j] = got
    scored[:, j, i] = got * AIVAT_MIRROR


def aivat_summary(
    labels: list[str], scored: np.ndarray, known: Callable[[int, int], str], digits: int
) -> dict[str, Any]:
    """Per pairing AIVAT scored: whose strategy was known (`known(i, j)`), the hands, both
    estimates on them (row player's view, 95% half-widths, to `digits`) and how much narrower
    AIVAT's interval is."""
    out: dict[str, Any] = {}
    for i, j in combinations(range(len(labels)), 2):
        mean, half, plain, plain_half, hands = (float(x) for x in scored[:, i, j])
        if np.isnan(mean):
            continue
        out[f"{labels[i]} vs {labels[j]}"] = {
            "known": known(i, j),
            "hands": int(hands),
            "aivat": [round(mean, digits), round(half, digits)],
            "plain": [round(plain, digits), round(plain_half, digits)],
            "narrower": round(plain_half / half, 2) if half > 0 else None,
        }
    return out
