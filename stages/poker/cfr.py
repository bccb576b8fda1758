"""Stage `cfr`: an equilibrium strategy of a limit game, on a card abstraction or lossless.

Algorithms: `cfr` and `cfr+` walk the whole game every iteration (vectorised over hands; small
games only, e.g. Kuhn, Leduc), `chance` and `external` sample one deal per iteration (Monte
Carlo CFR, any size: the paper preset's 169-9000-9000-9000 Hold'em abstraction), `public`
samples one board per iteration and walks every private hand of both players as a vector
(public chance sampling, `engines.poker.pcs`; any size). With the two
bucket inputs the information sets are (betting sequence, bucket of this round); without them
the game is solved losslessly (canonical hands).

The run checkpoints its regrets and strategy sums every `checkpoint_seconds`; a killed run
resumes there and, deals being a function of (seed, iteration), ends bit-identical to an
uninterrupted one. The optional input `parent` (an earlier `cfr` artifact with the same
settings and abstraction) continues that run to more iterations, as a new artifact. With
`seconds` the run solves for a wall-time budget instead of (or up to) an iteration count, so
that algorithms compare at equal time; the iteration reached is recorded and a recompute check
replays the run to it. Where the
game is small enough, the exact exploitability (best response in the real game) is recorded
along the way, in chips and mbb/g.
"""

from __future__ import annotations

import os
import time
from math import comb
from typing import Any, ClassVar, Literal

import numpy as np
from pydantic import Field, ValidationInfo, field_validator, model_validator

from gameforge.engines.poker.acpc import GameDef
from gameforge.engines.poker.betting import tree_size
from gameforge.engines.poker.cfr import FullWalkSolver, build_cards
from gameforge.engines.poker.mccfr import SampledSolver
from gameforge.engines.poker.pcs import PublicSampledSolver
from gameforge.engines.poker.solver import CfrSolver
from gameforge.stages.base import Nondeterminism, Seed, StageContext, StageError, StageParams
from gameforge.stages.poker.abstraction import CardAbstraction
from gameforge.stages.poker.params import TreeGameParams, same_game
from gameforge.stages.poker.sizes import bucket_table_bytes, buckets_per_round, infosets
from gameforge.stages.progress import end_early
from gameforge.stages.registry import stage
from gameforge.stages.resources import Footprint, Recorded, nbytes

FULL = ("cfr", "cfr+")
EXACT_LIMIT = 5_000_000  # boards x hands up to which exact exploitability is computed
CURVE_ARRAYS = ("iteration", "exploitability", "regret_bound", "seconds")
CHECKPOINT = "cfr"  # the solve's checkpoint: regret, avg, iteration, seconds, curve_<name>
# A distinct curve point in Python: its int in a set and a sorted list, and a float object in
# each of the curve's lists (measured ~210 bytes a point)
CURVE_POINT_BYTES = 256
# public sampling walks a board's hands in threads by default from this many private hands (a
# thread pays for itself on Hold'em's 1,326, not on the short decks' few hundred)
PUBLIC_THREADED_HANDS = 1_000


class CFRParams(TreeGameParams):
    """Algorithm, iterations, seed and averaging of the solve."""

    algorithm: Literal["cfr", "cfr+", "chance", "external", "public"] = Field(
        default="chance",
        description="cfr and cfr+ walk the whole game; chance and external sample one deal per"
        " iteration (Monte Carlo CFR); public samples one board and walks every hand.",
    )
    iterations: int | None = Field(
        default=100_000,
        ge=1,
        description="Iterations to run (None: no cap; then `seconds` ends the run).",
    )
    # The stop depends on the machine, so the summary records the iteration reached; a
    # recompute check replays the run to it (`replay_iterations`).
    seconds: float | None = Field(
        default=None,
        gt=0,
        description="A wall-time budget in seconds: stop at the first kernel call ending at or"
        " past it (solving time summed over resumes and the parent, less curve evaluations and"
        " checkpoints) or at `iterations`, whichever comes first (None: no budget).",
    )
    replay_iterations: int | None = Field(
        default=None,
        ge=1,
        description="Stop at this iteration, not by the clock: replays a timed run.",
    )
    seed: Seed = Field(default=0, description="Seed of the sampled deals or boards.")
    averaging: float | None = Field(
        default=None,
        ge=0,
        description="Strategy-sum weight exponent: iteration t weighs t**averaging"
        " (None: 1 for cfr+, else 0).",
    )
    plus: bool = Field(
        default=False,
        description="Regret matching+ (regrets floored at 0): fixed by cfr+ (on) and cfr (off),"
        " a choice for the sampled algorithms.",
    )
    evaluations: int = Field(
        default=8,
        ge=0,
        description="Exploitability points of the learning curve, log-spaced (0: none).",
    )
    checkpoint_seconds: float = Field(
        default=120.0, ge=0, description="Seconds between checkpoints of regrets and sums."
    )
    batch: int | None = Field(
        default=None,
        ge=1,
        description="Iterations per kernel call, the progress and checkpoint granularity"
        " (None: 10 for public sampling, where each walks every hand on a board, else 1,000).",
    )
    discount_alpha: float | None = Field(
        default=None,
        description="Discounted CFR (public sampling only): after iteration t positive regrets"
        " are scaled by t^a / (t^a + 1); Brown & Sandholm's DCFR: 1.5 with averaging 2"
        " (None: no discount).",
    )
    discount_beta: float = Field(
        default=0.0,
        description="Discounted CFR: negative regrets are scaled by t^b / (t^b + 1)"
        " (DCFR: 0); used with discount_alpha.",
    )
    threads: int = Field(
        default=0,
        ge=0,
        description="Public sampling: threads walking a board's hands at once, the same bits at"
        f" any count (0: every core on games of at least {PUBLIC_THREADED_HANDS:,} private"
        " hands, else 1).",
    )
    execution_only: ClassVar[frozenset[str]] = frozenset(
        {"checkpoint_seconds", "batch", "replay_iterations", "threads"}
    )
    new_at_default: ClassVar[dict[str, tuple[str, ...]]] = {
        "discount_alpha": ("discount_alpha", "discount_beta"),
        "seconds": ("seconds",),
    }

    @model_validator(mode="after")
    def _a_run_has_an_end(self) -> CFRParams:
        """Refuse a run with neither an iteration cap nor a time budget, and a replay of a run
        that had no time budget."""
        if self.iterations is None and self.seconds is None:
            raise ValueError("iterations none needs a time budget (seconds)")
        if self.replay_iterations is not None and self.seconds is None:
            raise ValueError("replay_iterations replays a run with a time budget (seconds)")
        return self

    @model_validator(mode="after")
    def _discount_is_public(self) -> CFRParams:
        """Refuse a discount for an algorithm that does not implement it."""
        if self.discount_alpha is not None and self.algorithm != "public":
            raise ValueError("discount_alpha (discounted CFR) is implemented for public sampling")
        return self

    @model_validator(mode="before")
    @classmethod
    def _plus_of_full_walks(cls, values: Any) -> Any:
        """Fill `plus` in from a full-walk algorithm (True for cfr+, False for cfr), so the
        parameters never show cfr+ without regret matching+."""
        if isinstance(values, dict) and values.get("algorithm") in FULL and "plus" not in values:
            return {**values, "plus": values["algorithm"] == "cfr+"}
        return values

    @field_validator("plus")
    @classmethod
    def _plus_agrees(cls, plus: bool, info: ValidationInfo) -> bool:
        """Refuse a `plus` that contradicts a full-walk algorithm."""
        algorithm = info.data.get("algorithm")
        if algorithm in FULL and plus != (algorithm == "cfr+"):
            raise ValueError(
                f"{plus} contradicts algorithm {algorithm} (cfr+ always uses regret "
                "matching+, cfr never; plus is a choice for chance, external and public)"
            )
        return plus

    def by_clock(self) -> bool:
        """True if the time budget decides the stop (a replay stops at its recorded one)."""
        return self.seconds is not None and self.replay_iterations is None

    def last_iteration(self) -> int:
        """Where the run stops unless its clock stops it first (_NO_CAP: no cap)."""
        return min(self.iterations or _NO_CAP, self.replay_iterations or _NO_CAP)

    def iterations_per_call(self) -> int:
        """Iterations per kernel call: `batch`, else the algorithm's default."""
        if self.batch is not None:
            return self.batch
        return self.default_batch()

    def default_batch(self) -> int:
        """The algorithm's iterations per kernel call (10 for public sampling, else 1,000)."""
        return 10 if self.algorithm == "public" else 1000

    def gamma(self) -> float:
        """Strategy-sum weight exponent: 1 (linear) for CFR+, else 0 (uniform).

        Sampled variants average uniformly by default: on Leduc, linear averaging of their noisy
        iterates ends 10x more exploitable at equal time (bench/BENCHMARKS.md).
        """
        if self.averaging is not None:
            return self.averaging
        return 1.0 if self.algorithm == "cfr+" else 0.0


def big_blind(params: CFRParams) -> float:
    """The big blind in chips (mbb/g are thousandths of it)."""
    return float(max(params.game_def().blind))


def _abstraction(ctx: StageContext[StageParams]) -> CardAbstraction | None:
    """The two bucket inputs as one card abstraction; None without them (lossless)."""
    has = "middle_buckets" in ctx.inputs, "river_buckets" in ctx.inputs
    if any(has) and not all(has):
        raise StageError("cfr: give both bucket inputs (middle and river) or neither")
    if not all(has):
        return None
    return CardAbstraction(ctx.inputs["middle_buckets"], ctx.inputs["river_buckets"])


def _full_walk(
    game: GameDef,
    abstraction: CardAbstraction | None,
    *,
    plus: bool = False,
    linear: bool | None = None,
) -> FullWalkSolver:
    """A full-walk solver on every deal of the game, bucketed by the abstraction if given."""
    if abstraction is None:
        cards = build_cards(game)
    else:
        sizes = np.array([abstraction.num_buckets(r) for r in range(game.num_rounds)])
        cards = build_cards(game, abstraction.bucket, sizes)
    return FullWalkSolver(game, cards, plus=plus, linear=linear)


def _sampled(
    params: CFRParams, game: GameDef, abstraction: CardAbstraction | None
) -> SampledSolver:
    """A sampling solver: public chance sampling, or chance or external sampling."""
    tables = abstraction.deal_tables() if abstraction is not None else None
    gamma = params.gamma()
    if params.algorithm == "public":
        discount = (
            None if params.discount_alpha is None else (params.discount_alpha, params.discount_beta)
        )
        hands = comb(game.deck_size, game.num_hole_cards)
        threads = params.threads or (os.cpu_count() or 1 if hands >= PUBLIC_THREADED_HANDS else 1)
        return PublicSampledSolver(
            game, tables, gamma=gamma, plus=params.plus, seed=params.seed, discount=discount,
            threads=threads,
        )  # fmt: skip
    return SampledSolver(
        game, tables, variant=params.algorithm, gamma=gamma, plus=params.plus, seed=params.seed
    )


def _exact(solver: FullWalkSolver) -> FullWalkSolver | None:
    """The solver as the exact evaluator of strategies, unless its deals are too many."""
    return solver if solver.cards.bucket.size <= EXACT_LIMIT else None


def _solvers(ctx: StageContext[CFRParams]) -> tuple[CfrSolver, FullWalkSolver | None]:
    """The algorithm's solver, and a full walk of the same game and abstraction that computes
    exact exploitabilities (None where the game is too large)."""
    params = ctx.params
    game = params.game_def()
    abstraction = _abstraction(ctx)
    gamma = params.gamma()
    if params.algorithm in FULL:
        solver = _full_walk(game, abstraction, plus=params.plus, linear=gamma == 1.0)
        if gamma not in (0.0, 1.0):
            raise StageError("cfr/cfr+: averaging must be 0 (uniform) or 1 (linear)")
        return solver, _exact(solver)
    sampled = _sampled(params, game, abstraction)
    try:
        exact = _full_walk(game, abstraction)
    except ValueError:
        return sampled, None  # too large to enumerate: no exact exploitability
    return sampled, _exact(exact)


_NO_CAP = 1 << 62  # iterations: no cap (a time budget ends the run)


class _SolveBar:
    """The run's progress: iterations of the cap, or seconds of the time budget (the iteration
    reached shown beside it; the bar starts after the start-up call, so its rate and ETA are
    the solve clock's)."""

    def __init__(
        self, ctx: StageContext[CFRParams], params: CFRParams, iteration: int, seconds: float
    ):
        self.ctx, self.params, self.text, self.iteration = ctx, params, "", iteration
        self.clock = params.by_clock()
        self.budget = int(np.ceil(params.seconds or 0))
        self.bar: Any = None
        if self.clock:
            self.shown = min(int(seconds), self.budget)
        else:
            self.shown = iteration
            self.bar = ctx.progress.start(
                f"{params.algorithm} iterations", params.last_iteration(), done=iteration
            )

    def advance(self, iteration: int, seconds: float) -> None:
        """The solve reached `iteration` after `seconds` of solving."""
        now = self.iteration = iteration
        if self.clock:
            if self.bar is None:
                self.bar = self.ctx.progress.start(
                    f"{self.params.algorithm} solve seconds", self.budget, done=self.shown
                )
            self.bar.note(f"iteration {iteration:,} {self.text}".rstrip())
            now = min(int(seconds), self.budget)
        if now > self.shown:
            self.bar.advance(now - self.shown)
            self.shown = now

    def note(self, text: str) -> None:
        """The latest curve point, beside the bar."""
        self.text = text
        if self.bar is not None:
            self.bar.note(f"iteration {self.iteration:,} {text}" if self.clock else text)

    def close(self, stopped_by: str = "") -> None:
        """Finish the bar; a clock's bar ends where the solve ended: short of its budget when
        the iteration cap stopped it (done, not stopped), full when the budget did."""
        if self.bar is None:
            return
        left = self.budget - self.shown
        if self.clock and left > 0 and stopped_by == "iterations":
            end_early(self.bar, "iteration cap reached", left)  # its note names the iteration
            return
        if self.clock and left > 0 and stopped_by == "time budget":
            self.bar.advance(left)  # spent, though whole seconds shown fall short of ceil(budget)
        self.bar.close()


def _doubling_points(stop: int, batch: int, count: int) -> list[int]:
    """Curve points of a run with no iteration cap: `batch` iterations and every doubling
    (the algorithm's default batch, not the execution-only `batch`: the points are content)."""
    if count == 0:
        return []
    points, point = [], batch
    while point < stop:
        points.append(point)
        point *= 2
    return points


def _eval_points(total: int, count: int) -> list[int]:
    """`count` log-spaced iterations in 1..total, always ending at `total`."""
    if count == 0:
        return []
    points = {int(p) for p in np.geomspace(1, total, count).round()} | {total}
    return sorted(points)


def _replay(meta: dict[str, Any]) -> dict[str, Any]:
    """A run with a time budget stopped where its clock said: a rebuild stops at the same
    iteration (everything else is a function of the recipe)."""
    if meta["params"].get("seconds") is None:
        return {}
    return {"replay_iterations": int(meta["summary"]["iterations"])}


Curve = dict[str, list[float]]  # CURVE_ARRAYS name -> one value per curve point


class _Clock:
    """The solve clock: wall time summed over resumes and the parent, less the seconds off it
    (evaluating curve points, writing checkpoints, and with a time budget each process's first
    kernel call, one iteration that holds numba's compiling)."""

    def __init__(self, elapsed: float) -> None:
        self.elapsed = elapsed  # solve seconds before this process
        self.t0 = time.monotonic()
        self.off = 0.0
        self.startup = 0.0  # this process's first kernel call, with a time budget

    def spent(self) -> float:
        """Seconds of solving so far."""
        return self.elapsed + time.monotonic() - self.t0 - self.off

    def off_since(self, started: float) -> None:
        """Take the time since `started` (a monotonic time) off the clock."""
        self.off += time.monotonic() - started


class _Solve:
    """A run's moving parts: the solver, its exact evaluator, the curve, the clock, the bar."""

    def __init__(
        self,
        ctx: StageContext[CFRParams],
        solver: CfrSolver,
        exact: FullWalkSolver | None,
        curve: Curve,
        clock: _Clock,
        bar: _SolveBar,
    ) -> None:
        self.ctx, self.params, self.solver, self.exact = ctx, ctx.params, solver, exact
        self.curve, self.clock, self.bar = curve, clock, bar


def _footprint(params: CFRParams, upstream: dict[str, dict]) -> Footprint:
    """Regret and strategy-sum tables (plus the full walks' current strategy, legal mask and
    per-deal card tables), the abstraction's bucket lookups, and the written tables."""
    game = params.game_def()
    sizes = buckets_per_round(game, Recorded({}, upstream))
    sets = infosets(game, sizes)
    abstract = "middle_buckets" in upstream and "river_buckets" in upstream
    peak = {
        "regret, strategy sums": nbytes((sets, 3), 16),
        # np.savez of a checkpoint and the float32 average written at the end: one table's copy
        "checkpoint and output copies": nbytes((sets, 3), 8),
        "bucket lookups": bucket_table_bytes(game, abstract),
    }
    if params.algorithm in FULL:
        peak["current strategy, legal mask"] = nbytes((sets, 3), 9)
        peak["enumerated deals"] = _enumerated_deal_bytes(game)
    if params.algorithm == "public":
        # per private hand (float64): both reaches at every node, the strategy at every
        # decision, and at every terminal the opponent's reach and the payoff, twice laid out
        hands = comb(game.deck_size, game.num_hole_cards)
        size = tree_size(game)
        per_hand = 2 * size.nodes + 3 * sum(size.decisions) + 3 * size.terminals
        peak["public walk vectors"] = nbytes((hands, per_hand), 8)
    if params.iterations is not None and params.evaluations:
        # `_eval_points` spaces `evaluations` float64 values and rounds them (two arrays at
        # once) before it dedupes them: 2,000,000,000 took 30 GiB at the start of the solve
        peak["curve points"] = nbytes(params.evaluations, 16) + nbytes(
            _curve_points(params), CURVE_POINT_BYTES
        )
    return Footprint(
        peak=peak,
        stored={
            "regret, strategy_sum, average_strategy": nbytes((sets, 3), 20),
            "checkpoint (until commit)": nbytes((sets, 3), 16),
            "curve": nbytes((_curve_points(params), len(CURVE_ARRAYS)), 8 * 2),  # and checkpoint
        },
        work=(params.iterations or 0) * _walk_size(params, game, sets),
        work_kind=params.algorithm,
        budget_s=params.seconds,
    )


def _walk_size(params: CFRParams, game: Any, sets: int) -> int:
    """What one iteration walks: the betting tree for one deal (sampled), for every hand of a
    sampled board (public), or every information set (the full walks)."""
    if params.algorithm in FULL:
        return sets
    nodes = tree_size(game).nodes
    if params.algorithm == "public":
        return nodes * comb(game.deck_size, game.num_hole_cards)
    return nodes


@stage(
    "cfr",
    4,
    CFRParams,
    inputs={
        "middle_buckets": "hsd-buckets|potential-buckets",
        "river_buckets": "ochs-buckets",
        "parent": "cfr",
    },
    optional={"middle_buckets", "river_buckets", "parent"},
    check_inputs=same_game,
    labels=("algorithm", "iterations", "seconds"),
    nondeterminism=Nondeterminism(
        "curve_seconds is the wall time at each curve point", arrays=("curve_seconds",)
    ),
    replay=_replay,
    footprint=_footprint,
)
def run(ctx: StageContext[CFRParams]) -> dict:
    """CFR / CFR+ / Monte Carlo CFR strategy on a card abstraction or lossless.

    Iterate, checkpoint, evaluate; write regrets, strategy sums and the curve.
    """
    params = ctx.params
    solver, exact = _solvers(ctx)
    curve: Curve = {name: [] for name in CURVE_ARRAYS}
    start_iteration, elapsed = _resume(ctx, solver, curve)
    bar = _SolveBar(ctx, params, solver.iteration, elapsed)
    solve = _Solve(ctx, solver, exact, curve, _Clock(elapsed), bar)
    stopped_by = _iterate(solve)
    if (
        params.seconds is not None
        and params.evaluations
        and (not curve["iteration"] or curve["iteration"][-1] != solver.iteration)
    ):
        _evaluate(solve, solver.iteration)  # where the budget stopped it
    bar.close(stopped_by)
    seconds = solve.clock.spent()
    _write_outputs(ctx, solver, curve)
    summary = _summary(ctx, solver, seconds)
    summary.update(_curve_summary(ctx, exact, curve))
    summary.update(_budget_summary(params, solve.clock, stopped_by))
    if "parent" in ctx.inputs:
        summary["parent"] = ctx.inputs["parent"].key
        summary["parent_iterations"] = start_iteration
    return summary


def _resume(ctx: StageContext[CFRParams], solver: CfrSolver, curve: Curve) -> tuple[int, float]:
    """Load the parent, then this build's checkpoint: the parent's iterations, solve seconds."""
    start_iteration, elapsed = 0, 0.0
    if "parent" in ctx.inputs:
        start_iteration, elapsed = _load_parent(ctx, solver, curve)
    saved = ctx.writer.load_checkpoint(CHECKPOINT)
    if saved is not None:
        solver.restore(saved["regret"], saved["avg"], int(saved["iteration"]))
        for name in curve:
            curve[name] = [float(v) for v in saved[f"curve_{name}"]]
        # checkpoints before the solve clock was kept: the last curve point's time
        if "seconds" in saved:
            elapsed = float(saved["seconds"])
        elif curve["seconds"]:
            elapsed = curve["seconds"][-1]
        ctx.log(f"cfr: resuming at iteration {solver.iteration:,}")
    return start_iteration, elapsed


def _curve_iterations(params: CFRParams) -> list[int]:
    """The iterations that get a curve point (besides where a time budget stops the run)."""
    if params.iterations is not None:
        return _eval_points(params.iterations, params.evaluations)
    return _doubling_points(params.last_iteration(), params.default_batch(), params.evaluations)


def _call_size(params: CFRParams, clock: _Clock, rate: float | None) -> int:
    """Iterations of the next kernel call, 0 once the time budget is spent: with a budget, no
    longer than what is left of it at `rate` iterations a second (None: the first call, one
    iteration, start-up)."""
    size = params.iterations_per_call()
    if not params.by_clock():
        return size
    left = params.seconds - clock.spent()  # type: ignore[operator]
    if left <= 0:
        return 0
    return 1 if rate is None else max(1, min(size, int(left * rate)))


def _iterate(solve: _Solve) -> str:
    """Iterate to the stop, adding curve points and checkpoints on the way; what stopped it."""
    params, solver, clock = solve.params, solve.solver, solve.clock
    stop = params.last_iteration()  # the clock's stop is checked by `_call_size`
    points = _curve_iterations(params)
    last_save = clock.t0
    rate = None  # iterations per second of the latest kernel call
    while solver.iteration < stop:
        size = _call_size(params, clock, rate)
        if size == 0:
            return "time budget"
        target = min(stop, solver.iteration + size)
        upcoming = [p for p in points if p > solver.iteration]
        if upcoming:
            target = min(target, upcoming[0])
        before, called = solver.iteration, time.monotonic()
        solver.iterate(target - before)
        took = time.monotonic() - called
        if params.by_clock() and rate is None:
            clock.startup = took
            clock.off += took
        rate = (target - before) / max(took, 1e-9)
        solve.bar.advance(target, clock.spent())
        if target in points:
            _evaluate(solve, target)
        if time.monotonic() - last_save >= params.checkpoint_seconds:
            _save(solve)
            last_save = time.monotonic()
    return "iterations"


def _evaluate(solve: _Solve, iteration: int) -> None:
    """Add the curve point of `iteration`, off the solve clock."""
    solver, exact, curve = solve.solver, solve.exact, solve.curve
    at, started = solve.clock.spent(), time.monotonic()
    value = np.nan if exact is None else exact.exploitability(solver.average_strategy())
    curve["iteration"].append(float(iteration))
    curve["exploitability"].append(value)
    # Full-traversal regrets sum over every deal, public-sampled ones over every pair of
    # hands on a board; chance- and external-sampled ones are per-deal estimates.
    bound = regret_bound(solver.state().regret, iteration) / solver.deals_per_iteration
    curve["regret_bound"].append(bound)
    latest = ("exploitability", value) if exact is not None else ("regret/T", bound)
    # the iteration it was measured at: curve points double apart, so a value can stand for long
    mbb = latest[1] / big_blind(solve.params) * 1000.0
    solve.bar.note(f"({latest[0]} {mbb:,.1f} mbb/g at iteration {iteration:,})")
    curve["seconds"].append(at)
    solve.clock.off_since(started)


def _save(solve: _Solve) -> None:
    """Checkpoint the solver's state, the curve and the solve seconds, off the solve clock."""
    started = time.monotonic()
    state = solve.solver.state()
    arrays: dict[str, Any] = {
        "regret": state.regret,
        "avg": state.avg,
        "iteration": state.iteration,
        "seconds": solve.clock.spent(),
    }
    arrays.update({f"curve_{k}": np.asarray(v) for k, v in solve.curve.items()})
    solve.ctx.writer.save_checkpoint(CHECKPOINT, arrays)
    solve.clock.off_since(started)  # writing is not solving


def _write_outputs(ctx: StageContext[CFRParams], solver: CfrSolver, curve: Curve) -> None:
    """Write the regrets, strategy sums, average strategy (float32) and the curve's arrays."""
    w = ctx.writer
    state = solver.state()
    shape = state.regret.shape
    rows = max(1, min(shape[0], 1 << 20))
    w.array("regret", shape, np.float64, chunks=(rows, 3))[:] = state.regret
    w.array("strategy_sum", shape, np.float64, chunks=(rows, 3))[:] = state.avg
    average = w.array("average_strategy", shape, np.float32, chunks=(rows, 3))
    _write_average(average, state.avg, solver.layout.legal(), rows)
    for name, values in curve.items():
        arr = np.asarray(values, dtype=np.float64)
        w.array(f"curve_{name}", arr.shape, np.float64, chunks=(max(1, arr.shape[0]),))[:] = arr


def _summary(ctx: StageContext[CFRParams], solver: CfrSolver, seconds: float) -> dict[str, Any]:
    """The summary's description of the solve: algorithm, length, layout, abstraction."""
    params = ctx.params
    layout = solver.layout
    return {
        "algorithm": params.algorithm,
        "iterations": int(solver.iteration),
        "seconds": round(seconds, 3),
        "infosets": int(layout.num_infosets),
        "layout": {
            "offsets": [int(v) for v in layout.offsets],
            "decisions_per_round": [int(v) for v in layout.ndec],
            "buckets_per_round": [int(v) for v in layout.num_buckets],
        },
        "abstraction": {k: a.key for k, a in ctx.inputs.items() if k != "parent"} or "lossless",
        "big_blind": big_blind(params),
    }


def _curve_summary(
    ctx: StageContext[CFRParams], exact: FullWalkSolver | None, curve: Curve
) -> dict[str, float]:
    """The summary's quality numbers: the last regret bound and the stored strategy's exact
    exploitability, where computed."""
    bb = big_blind(ctx.params)
    out: dict[str, float] = {}
    if curve["regret_bound"]:
        out["regret_bound_mbb_per_game"] = curve["regret_bound"][-1] / bb * 1000.0
    if exact is not None and curve["exploitability"]:
        # Of the strategy as stored (float32), as the best-response stage reads it; the curve's
        # points are the solver's own float64 average, a few 1e-6 relative away.
        stored = np.asarray(ctx.writer["average_strategy"][:], dtype=np.float64)
        final = exact.exploitability(stored)
        out["exploitability_chips"] = final
        out["exploitability_mbb_per_game"] = final / bb * 1000.0
    return out


def _budget_summary(params: CFRParams, clock: _Clock, stopped_by: str) -> dict[str, Any]:
    """The summary's time budget, start-up seconds and what stopped the run (with a budget)."""
    if params.seconds is None:
        return {}
    return {
        "budget_seconds": params.seconds,
        "startup_seconds": round(clock.startup, 3),  # this process's, off the clock
        "stopped_by": "replayed to the recorded stop" if params.replay_iterations else stopped_by,
    }


def _write_average(out: Any, avg: np.ndarray, legal: np.ndarray, rows: int) -> None:
    """Normalised strategy sums, chunk by chunk: whole-array temporaries cost GBs at scale."""
    for start in range(0, avg.shape[0], rows):
        sums = avg[start : start + rows]
        ok = legal[start : start + rows]
        total = sums.sum(axis=1, keepdims=True)
        uniform = ok / ok.sum(axis=1, keepdims=True).clip(min=1)
        safe = np.where(total > 0, total, 1.0)
        out[start : start + rows] = np.where(total > 0, sums / safe, uniform).astype(np.float32)


def regret_bound(regret: np.ndarray, iterations: int) -> float:
    """Mean over players of summed positive regret per iteration (CFR's exploitability bound).

    With perfect recall it bounds the abstract game's exploitability; with sampling it is an
    estimate, and with imperfect recall an indicator: the number to watch where no exact best
    response can be computed.
    """
    positive = np.maximum(regret.max(axis=1), 0.0)
    return float(positive.sum() / (2.0 * iterations))


def _load_parent(
    ctx: StageContext[CFRParams], solver: CfrSolver, curve: Curve
) -> tuple[int, float]:
    """Load the parent's tables and curve; its iterations and solve seconds."""
    params = ctx.params
    parent = ctx.inputs["parent"]
    length = ("iterations", "seconds")  # how long a run is: what a continuation may change
    mine = {k: v for k, v in params.key_params().items() if k not in length}
    theirs = {k: v for k, v in parent.params.items() if k not in length}
    if theirs.get("algorithm") in FULL:  # older cfr+ artifacts recorded plus=False, unused
        theirs["plus"] = theirs["algorithm"] == "cfr+"
    abstraction = {k: a.key for k, a in ctx.inputs.items() if k != "parent"}
    if mine != theirs or {k: v for k, v in parent.inputs.items() if k != "parent"} != abstraction:
        raise StageError(f"cfr: parent {parent.key} was run with other settings or inputs")
    done = int(parent.meta["summary"]["iterations"])
    spent = float(parent.meta["summary"]["seconds"])
    if params.iterations is not None and done >= params.iterations:
        raise StageError(
            f"cfr: parent already has {done:,} iterations (asked {params.iterations:,})"
        )
    if params.seconds is not None and spent >= params.seconds:
        raise StageError(
            f"cfr: parent already solved for {spent:,.0f} s (the budget is {params.seconds:,.0f} s)"
        )
    solver.restore(np.asarray(parent["regret"][:]), np.asarray(parent["strategy_sum"][:]), done)
    for name in curve:
        curve[name] = [float(v) for v in np.asarray(parent[f"curve_{name}"][:])]
    ctx.log(f"cfr: continuing {parent.key} from iteration {done:,}")
    return done, spent


def _curve_points(params: CFRParams) -> int:
    """Curve points a run may record at most: its evaluation points, and the budget's stop."""
    if params.iterations is None:  # doubling points up to no cap: a few dozen
        return 64
    return min(params.evaluations, params.iterations) + 1


def _enumerated_deal_bytes(game: GameDef) -> int:
    """Full walks enumerate every board with every hand: bucket ids and showdown ranks."""
    from math import comb

    hands = comb(game.deck_size, game.num_hole_cards)
    boards = comb(game.deck_size, sum(game.num_board_cards))
    return 16 * game.num_rounds * boards * hands
