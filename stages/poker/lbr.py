"""Stage `lbr`: local best response (Lisý & Bowling 2017) against a `cfr` strategy, stored.

LBR plays seeded deals from both seats against the strategy (`engines.poker.lbr`); its expected
winnings are a lower bound of the strategy's exploitability in the real game. Output: the
winnings of every deal (chips, mean of both seats), the mean with its two-sided 95% interval,
and the one-sided 95% lower bound (mean - 1.645 SE) that an "at least" claim needs; a bound at
or below 0 bounds nothing.
"""

from __future__ import annotations

import os
import time
from typing import Any, ClassVar

import numpy as np
from pydantic import Field

from gameforge.engines.common.stats import Z_ONE_SIDED_95, Z_TWO_SIDED_95, one_sided_lower_bound
from gameforge.stages.base import Seed, StageContext
from gameforge.stages.poker.best_response import strategy_bytes
from gameforge.stages.poker.params import TreeGameParams, same_game
from gameforge.stages.poker.strategy import StrategyView
from gameforge.stages.registry import stage
from gameforge.stages.resources import Footprint, nbytes


class LBRParams(TreeGameParams):
    """Deals (each played from both seats), their seed, and threads (execution only)."""

    deals: int = Field(default=2000, ge=2, description="Deals LBR plays, each from both seats.")
    seed: Seed = Field(default=0, description="Seed of the deals.")
    threads: int = Field(default=0, ge=0, description="Threads playing deals (0: every core).")
    execution_only: ClassVar[frozenset[str]] = frozenset({"threads"})


def _footprint(params: LBRParams, upstream: dict[str, dict]) -> Footprint:
    """The strategy and its bucket lookups, and every deal's winnings."""
    game = params.game_def()
    return Footprint(
        peak={**strategy_bytes(upstream.get("strategy", {}), game),
              "winnings": nbytes(params.deals, 16)},
        stored={"winnings": nbytes(params.deals, 8)},
        work=params.deals,
    )  # fmt: skip


@stage("lbr", 2, LBRParams, inputs={"strategy": "cfr"}, check_inputs=same_game,
       labels=("deals", "seed"), footprint=_footprint)  # fmt: skip
def run(ctx: StageContext[LBRParams]) -> dict[str, Any]:
    """Local best response against a cfr strategy: a lower bound of its exploitability.

    Play the deals from both seats; write every deal's winnings and the mean in mbb/g.
    """
    params = ctx.params
    view = StrategyView(ctx.inputs["strategy"].store, ctx.inputs["strategy"])
    t0 = time.monotonic()
    bar = ctx.progress.start("LBR deals", params.deals)
    wins = view.local_best_response_deals(
        params.deals, seed=params.seed, n_threads=params.threads or os.cpu_count() or 1,
        progress=bar.advance,
    )  # fmt: skip
    bar.close()
    ctx.writer.write_arrays({"winnings": wins})
    scale = 1000.0 / float(max(view.game.blind))
    mean = float(wins.mean()) * scale
    se = float(wins.std(ddof=1) / np.sqrt(wins.size)) * scale
    lower = one_sided_lower_bound(mean, se)
    return {
        "strategy": view.artifact.key,
        "deals": params.deals,
        "lbr_mbb_per_game": mean,
        "half_width_95_mbb_per_game": Z_TWO_SIDED_95 * se,
        "standard_error_mbb_per_game": se,
        "exploitability_lower_bound_mbb_per_game": lower,
        "bound": lower_bound_text(mean, lower),
        "seconds": round(time.monotonic() - t0, 3),
    }


def lower_bound_text(mean: float, lower: float) -> str:
    """What one LBR run shows (mbb/g): a one-sided 95% lower bound of the exploitability, or
    nothing when that bound is at or below 0."""
    if lower <= 0:
        return (
            f"no evidence of exploitability at this sample size (LBR wins {mean:.1f} mbb/g; "
            f"one-sided 95% bound {lower:.1f} <= 0)"
        )
    return (
        f"exploitability >= {lower:.1f} mbb/g with 95% confidence (one-sided, mean - "
        f"{Z_ONE_SIDED_95}·SE; LBR wins {mean:.1f} mbb/g)"
    )
