"""Stage `lbr`: local best response (Lisý & Bowling 2017) against a `cfr` strategy, stored.

LBR plays seeded deals from both seats against the strategy (`engines.poker.lbr`); its mean
winnings are a lower bound of the strategy's exploitability in the real game. Output: the
winnings of every deal (chips, mean of both seats) and the mean with its 95% interval.
"""

from __future__ import annotations

import os
import time
from typing import Any, ClassVar

import numpy as np
from pydantic import Field

from gameforge.stages.base import StageContext
from gameforge.stages.poker.params import GameParams, same_game
from gameforge.stages.poker.strategy import StrategyView
from gameforge.stages.registry import stage


class LBRParams(GameParams):
    """Deals (each played from both seats), their seed, and threads (execution only)."""

    deals: int = Field(default=2000, ge=2)
    seed: int = 0
    threads: int = Field(default=0, ge=0)  # 0: every core
    execution_only: ClassVar[frozenset[str]] = frozenset({"threads"})


@stage("lbr", 1, LBRParams, inputs={"strategy": "cfr"}, check_inputs=same_game)
def run(ctx: StageContext) -> dict[str, Any]:
    """Local best response against a cfr strategy: a lower bound of its exploitability.

    Play the deals from both seats; write every deal's winnings and the mean in mbb/g.
    """
    params: LBRParams = ctx.params
    view = StrategyView(ctx.writer.store, ctx.inputs["strategy"])
    t0 = time.monotonic()
    bar = ctx.progress.start("LBR deals", params.deals)
    wins = view.local_best_response_deals(
        params.deals, seed=params.seed, n_threads=params.threads or os.cpu_count() or 1,
        progress=bar.advance,
    )  # fmt: skip
    bar.close()
    ctx.writer.write_arrays({"winnings": wins})
    scale = 1000.0 / float(max(view.game.blind))
    se = float(wins.std(ddof=1) / np.sqrt(wins.size))
    return {
        "strategy": view.artifact.key,
        "deals": params.deals,
        "lbr_mbb_per_game": float(wins.mean()) * scale,
        "half_width_95_mbb_per_game": 1.96 * se * scale,
        "bound": "a lower bound of the exploitability (mean over both seats)",
        "seconds": round(time.monotonic() - t0, 3),
    }
