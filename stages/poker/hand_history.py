"""Stage `hand-history`: the hands a `cfr` strategy played in a match at an ACPC dealer, stored,
with the plain and the AIVAT estimate of what it won.

A match cannot be replayed, so this stage does not compute its hands: it reads them from a
history file in canonical text (`engines.poker.hand_history`, written by `gameforge play`,
parameter `source`, execution only) and checks it against the digest its key holds
(`history_sha256`): the key names the history's content, never where the file was. A rebuild
(a recompute check, a repair) needs that file again; without it, or with another file, the
stage refuses in one line rather than build something else. What it computes from the hands
is reproducible: the plain mean with its 95% interval in mbb/g, and where the dealer's log
gave both hole cards of every hand, AIVAT's (`aivat_chips`: the strategy as the known player,
itself as the reference opponent) with how much narrower its interval is.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
from pydantic import Field

from gameforge.engines.poker.aivat import interval
from gameforge.engines.poker.hand_history import (
    aivat_chips,
    history_arrays,
    history_digest,
    mbb_scale,
    parse_history,
    plain_estimate,
)
from gameforge.stages.base import Seed, StageContext, StageError
from gameforge.stages.poker.best_response import strategy_bytes
from gameforge.stages.poker.params import TreeGameParams, same_game
from gameforge.stages.poker.strategy import StrategyView
from gameforge.stages.registry import stage
from gameforge.stages.resources import Footprint, nbytes

SHA256 = r"^[0-9a-f]{64}$"
BASELINE = "RoundValues with the strategy itself as the reference opponent"


def baseline_text(params: HandHistoryParams) -> str:
    """The AIVAT baseline and options a summary states."""
    if params.imaginary_holes == 0:
        return BASELINE
    return f"{BASELINE}, imaginary observations over {params.imaginary_holes} holes a hand"


# Bytes of one hand in the stored arrays: number, seat, chips, AIVAT value, cards, and betting
# (a limit game's longest betting is a few dozen characters).
HAND_BYTES = 8 + 1 + 8 + 8 + 16 + 64


class HandHistoryParams(TreeGameParams):
    """The history's hands and digest, the baseline's fit, and the history file (execution)."""

    hands: int = Field(ge=1, description="Hands in the history (the match's length).")
    history_sha256: str = Field(
        pattern=SHA256,
        description="SHA-256 of the history's canonical text: the hands this artifact holds.",
    )
    fit_hands: int = Field(
        default=2000,
        ge=0,
        description="Hands of the strategy against itself that AIVAT's baseline is fitted on, "
        "in games whose chance events are too many to average exactly (not Leduc).",
    )
    seed: Seed = Field(
        default=0, description="Seed of those hands and of the baseline's sampled chance means."
    )
    imaginary_holes: int = Field(
        default=0,
        ge=0,
        description="AIVAT's imaginary observations: holes the player could have held, drawn a "
        "hand in proportion to its strategy's reach (every hole where there are no more: all "
        "of Leduc's); each a walk (about 25 ms on full hold'em). 0: none.",
    )
    source: str = Field(
        default="",
        description="The history file, in canonical text (gameforge play writes it); read and "
        "checked against history_sha256.",
    )
    execution_only: ClassVar[frozenset[str]] = frozenset({"source"})


def _footprint(params: HandHistoryParams, upstream: dict[str, dict]) -> Footprint:
    """The strategy and its bucket lookups, the hands, and the baseline's memoized values."""
    game = params.game_def()
    return Footprint(
        peak={**strategy_bytes(upstream.get("strategy", {}), game),
              "hands": nbytes(params.hands, 4 * HAND_BYTES)},
        stored={"hands": nbytes(params.hands, HAND_BYTES)},
        work=params.hands,
    )  # fmt: skip


def read_source(params: HandHistoryParams) -> str:
    """The history file's text, checked against the digest; StageError in one line if it is
    missing or another history."""
    where = params.source
    if not where:
        raise StageError(
            "hand-history: no source file; its hands come from a match (gameforge play writes "
            "them), which cannot be played again"
        )
    try:
        data = Path(where).read_bytes()
    except OSError as exc:
        raise StageError(
            f"hand-history: cannot read the match's hands at {where} ({exc.strerror or exc}); "
            f"a match cannot be played again, so this artifact is its only copy"
        ) from None
    found = history_digest(data)
    if found != params.history_sha256:
        raise StageError(
            f"hand-history: {where} holds another history than sha256 {params.history_sha256} "
            f"(its sha256 is {found}); refused rather than store other hands"
        )
    return data.decode("ascii", errors="replace")  # not ASCII: refused by parse_history


@stage("hand-history", 1, HandHistoryParams, inputs={"strategy": "cfr"}, check_inputs=same_game,
       labels=("hands",), footprint=_footprint)  # fmt: skip
def run(ctx: StageContext[HandHistoryParams]) -> dict[str, Any]:
    """The hands a strategy played at an ACPC dealer: plain and AIVAT results in mbb/g.

    Read the history file, check its digest, write its arrays, and estimate the strategy's
    winnings plainly and, where every hand's hole cards are known, by AIVAT.
    """
    params = ctx.params
    t0 = time.monotonic()
    text = read_source(params)
    view = StrategyView(ctx.inputs["strategy"].store, ctx.inputs["strategy"])
    game = view.game
    try:
        hands = parse_history(game, text)
    except ValueError as exc:
        raise StageError(f"hand-history: {params.source}: {exc}") from None
    if len(hands) != params.hands:
        raise StageError(
            f"hand-history: {params.source} has {len(hands):,} hands, not {params.hands:,}"
        )
    arrays = history_arrays(game, hands)
    plain_mean, plain_half = plain_estimate(game, arrays["chips"])
    corrected = np.full(len(hands), np.nan)
    aivat: dict[str, Any] | None = None
    note = ""
    if not all(h.full for h in hands):
        note = (
            "not computed: the opponent's hole cards of hands it folded are unknown (the dealer's "
            "log has them: gameforge play --dealer-log)"
        )
    else:
        try:
            corrected = aivat_chips(game, view.agent("played"), hands, params.fit_hands,
                                    params.seed, params.imaginary_holes)  # fmt: skip
        except ValueError as exc:  # the recorded play is not the strategy's: no estimate
            note = f"not computed: {exc}"
        else:
            mean, half = interval(corrected * mbb_scale(game))
            aivat = {
                "mbb_per_game": mean,
                "half_width_95_mbb_per_game": half,
                "narrower": plain_half / half if half > 0 else None,
                "baseline": baseline_text(params),
            }
    ctx.writer.write_arrays({**arrays, "aivat_chips": corrected})
    seats = np.bincount(arrays["seat"], minlength=2)
    return {
        "strategy": view.artifact.key,
        "hands": len(hands),
        "hands_per_position": [int(seats[0]), int(seats[1])],
        "both_holes_known": bool(all(h.full for h in hands)),
        "chips": int(arrays["chips"].sum()),
        "plain": {"mbb_per_game": plain_mean, "half_width_95_mbb_per_game": plain_half},
        "aivat": aivat,
        "aivat_note": note,
        "seconds": round(time.monotonic() - t0, 3),
    }


def estimate_text(estimate: dict[str, Any]) -> str:
    """`+557.4 ± 157.3 mbb/g` of a summary's estimate (95% interval)."""
    return f"{estimate['mbb_per_game']:+,.1f} ± {estimate['half_width_95_mbb_per_game']:,.1f} mbb/g"
