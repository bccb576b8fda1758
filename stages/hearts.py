"""Hearts with FALCON and nu-SVR: logged games, risk models, learners and their evaluation.

- `hearts-logs`: games of four Monte Carlo agents; every decision as the SVR's 27 features
  (5 for the card played, 22 perception values), its (trick, seat in the trick) group and the
  DegSQ label (+1 if that player takes Q♠ in this or a later trick). Chunked over Dask workers.
- `hearts-svr`: one nu-SVR per group (52) on a label-balanced sample, as arrays, with each
  model's predictions for held-out rows (outside its sample) to check it on.
- `hearts-falcon`: one learner (action set, SVR guidance on or off, seed) playing against three
  rule-based agents, with network snapshots at the learning-curve checkpoints.
- `hearts-eval`: every snapshot of every learner against three rule-based and three Monte Carlo
  agents (penalty ratio = points / 26), and the final learners' ranks in games to 100 points.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from pydantic import Field, field_validator

from gameforge.artifacts import Artifact, ArtifactStore, Build, write_chunk
from gameforge.engines.common.rng import Numbered
from gameforge.engines.hearts.actions import N_ACTIONS, N_PERCEPTION, card_features
from gameforge.engines.hearts.agents import MONTE_CARLO
from gameforge.engines.hearts.falcon import FalconParams
from gameforge.engines.hearts.game import RULE_BASED, Options
from gameforge.engines.hearts.learner import (
    N_FEATURES,
    N_NETWORKS,
    LearnerSettings,
    action_mask,
    make_learner,
)
from gameforge.engines.hearts.play import LOG_WIDTH, falcon_games, play_games
from gameforge.engines.hearts.svr import SvrModel, check_rows, fit, pack, predict
from gameforge.stages.base import Seed, StageContext, StageError, StageParams, numbered
from gameforge.stages.progress import ProgressTask
from gameforge.stages.registry import stage
from gameforge.stages.reporting import rate_fields
from gameforge.stages.resources import MB, Footprint, nbytes

CHECKPOINTS = (0, 1, 100, 1000, 10_000, *range(20_000, 100_001, 10_000))
READOUTS = {"motor": 0, "value": 1}
DIM = 2 * N_PERCEPTION + N_ACTIONS + 2  # FALCON weight vector: S complement-coded, A, R


class RuleParams(StageParams):
    """The rule options (gameforge.engines.hearts.game): the paper's game by default."""

    passing: int = Field(
        default=0,
        ge=0,
        le=4,
        description="Card passing: 0 off (the paper's), 1 left, 2 right, 3 across, 4 cycling"
        " left, right, across, hold.",
    )
    moon: bool = Field(
        default=False,
        description="Shooting the moon: a player taking all 26 points scores 0 and the others"
        " 26 each (the paper: off).",
    )
    two_clubs_leads: bool = Field(
        default=True,
        description="The holder of 2♣ leads it to the first trick (off: seat 0 leads any card).",
    )
    must_break_hearts: bool = Field(
        default=True,
        description="Hearts cannot be led until a heart or Q♠ has been played, unless the"
        " leader holds only hearts.",
    )
    no_points_first_trick: bool = Field(
        default=True,
        description="No heart or Q♠ on the first trick unless the hand holds nothing else.",
    )

    def options(self) -> np.ndarray:
        """The options array."""
        return Options(
            self.passing,
            self.moon,
            self.two_clubs_leads,
            self.must_break_hearts,
            self.no_points_first_trick,
        ).array()


# ---------------------------------------------------------------------------------------------
# hearts-logs


class LogsParams(RuleParams):
    """How many Monte Carlo games to log, their simulations and seed."""

    games: int = Field(default=100_000, ge=1, description="Monte Carlo games to log.")
    sims: int = Field(
        default=200, ge=1, description="Monte Carlo simulations per decision of each agent."
    )
    seed: Seed = Field(default=0, description="Seed of the deals and the agents' simulations.")
    # The default keeps the progress bar moving every few seconds.
    games_per_chunk: int | None = Field(
        default=None,
        ge=1,
        description="Games per chunk task (None: about 64 chunks of at most 500 games).",
    )
    # Each game's deal and decisions depend only on (seed, game number): chunking is free.
    execution_only: ClassVar[frozenset[str]] = frozenset({"games_per_chunk"})

    def chunk_games(self) -> int:
        """Games per chunk (the default spreads the games over about 64 chunks)."""
        return self.games_per_chunk or max(1, min(500, -(-self.games // 64)))


def log_chunk(build: Build, array: str, chunk: int, p: dict[str, Any]) -> None:
    """Play and log one chunk of games (a Dask task)."""
    first = chunk * p["games_per_chunk"]
    n = min(p["games_per_chunk"], p["games"] - first)  # the payload carries chunk_games()
    log = np.zeros((52 * n, LOG_WIDTH), np.float32)
    qs = np.zeros((n, 2), np.int64)
    points = np.zeros((n, 4), np.int64)
    kinds = np.full(4, MONTE_CARLO, np.int64)
    play_games(p["seed"], first, kinds, np.asarray(p["options"]), p["sims"], points, log, qs)
    game = log[:, 0].astype(np.int64)
    seat = log[:, 1].astype(np.int64)
    trick = log[:, 2].astype(np.int64)
    position = log[:, 3].astype(np.int64)
    card = log[:, 4].astype(np.int64)
    label = np.where((qs[game, 0] == seat) & (qs[game, 1] >= trick), 1, -1)
    features = np.zeros((len(log), N_FEATURES), np.float32)
    one = np.zeros(5)
    for i in range(len(log)):
        card_features(one, card[i])
        features[i, :5] = one
    features[:, 5:] = log[:, 5:]
    meta = np.stack([4 * trick + position, label, seat], axis=1).astype(np.int16)
    write_chunk(build, "meta", chunk, meta)
    write_chunk(build, "points", chunk, points.astype(np.int16))
    write_chunk(build, array, chunk, features)


def _logs_footprint(params: LogsParams, upstream: dict[str, dict]) -> Footprint:
    """One chunk's log and features (one per worker under Dask), then the metadata read back."""
    rows = 52 * params.games
    chunk_rows = 52 * min(params.chunk_games(), params.games)
    stored = {
        "features": nbytes((rows, N_FEATURES), 4),
        "meta": nbytes((rows, 3), 2),
        "points": nbytes((params.games, 4), 2),
    }
    peak = {
        # float32 log and features; int64 game, seat, trick, position, card, label and the
        # label's gathers; the int64 metadata stack and its int16 copy
        "chunk": nbytes((chunk_rows, LOG_WIDTH + N_FEATURES), 4) + nbytes((chunk_rows, 10), 8)
        + nbytes((chunk_rows, 3), 8 + 2),
        # every decision's int16 metadata and its positive-label flags; float64 points
        "summary": nbytes((rows, 3), 2) + rows + nbytes((params.games, 4), 8 + 2),
    }  # fmt: skip
    return Footprint(peak, stored, work=params.games)


@stage("hearts-logs", 1, LogsParams, labels=("games",), footprint=_logs_footprint)
def run_logs(ctx: StageContext[LogsParams]) -> dict[str, Any]:
    """Hearts games of four Monte Carlo agents, every decision logged for the SVR.

    Log every decision of `games` Monte Carlo games.
    """
    p = ctx.params
    rows = 52 * p.games
    per_chunk = p.chunk_games()
    per = 52 * per_chunk
    w = ctx.writer
    w.array("features", (rows, N_FEATURES), np.float32, chunks=(per, N_FEATURES))
    w.array("meta", (rows, 3), np.int16, chunks=(per, 3))
    w.array("points", (p.games, 4), np.int16, chunks=(per_chunk, 4))
    n_chunks = -(-p.games // per_chunk)
    payload = {**p.model_dump(), "games_per_chunk": per_chunk, "options": p.options().tolist()}
    desc = f"Monte Carlo game chunks ({per_chunk} games each)"
    ctx.run_chunks(log_chunk, "features", n_chunks, (payload,), desc=desc)
    meta = np.asarray(w["meta"][:])
    points = np.asarray(w["points"][:]).astype(np.float64)
    return {
        "games": p.games,
        "decisions": rows,
        "label_share_positive": round(float((meta[:, 1] > 0).mean()), 4),
        "mean_penalty_ratio": round(float(points.mean() / 26), 4),
    }


# ---------------------------------------------------------------------------------------------
# hearts-svr


class SvrParams(StageParams):
    """Samples per label per group, the nu-SVR's parameters (gamma 0: 1 / features), and the
    rows per label per group that each model is checked on, held out and from its sample."""

    per_label: int = Field(
        default=10_000,
        ge=1,
        description="Training samples per label per group at most (label-balanced).",
    )
    nu: float = Field(
        default=0.5,
        gt=0,
        le=1,
        description="nu of the nu-SVR: bounds the share of support vectors.",
    )
    c: float = Field(default=1.0, gt=0, description="C of the nu-SVR: the error penalty.")
    gamma: float = Field(
        default=0.0, ge=0, description="RBF kernel width gamma (0: 1 / the number of features)."
    )
    seed: Seed = Field(default=0, description="Seed of the samples drawn (group g: seed + g).")
    check_per_label: int = Field(
        default=200,
        ge=0,
        description="Rows per label per group each model is checked on, held out and from its"
        " sample.",
    )


def fit_group(path: str, group: int, p: dict[str, Any]) -> dict[str, Any]:
    """Fit one group's model (a Dask task); returns its arrays, label counts, and its
    predictions for check rows (held out, and from its training sample)."""
    import zarr

    meta = np.asarray(zarr.open_array(f"{path}/meta", mode="r")[:])
    features_array = zarr.open_array(f"{path}/features", mode="r")
    rows = np.flatnonzero(meta[:, 0] == group)
    labels = meta[rows, 1].astype(np.int64)
    features = np.asarray(features_array.get_orthogonal_selection((rows, slice(None))))
    gamma = p["gamma"] or 1.0 / N_FEATURES
    model = fit(features, labels, p["per_label"], p["nu"], p["c"], gamma, p["seed"] + group)
    fallback = 1.0 if len(labels) and (labels > 0).all() else -1.0
    rows, trained = check_rows(labels, p["per_label"], p["seed"] + group, p["check_per_label"])
    # a group without a model predicts its fallback in the learner's kernel too
    prediction = np.full(len(rows), fallback) if model is None else predict(model, features[rows])
    return {
        "model": model,
        "fallback": fallback,
        "positive": int((labels > 0).sum()),
        "negative": int((labels <= 0).sum()),
        "check_label": labels[rows].astype(np.int8),
        "check_trained": trained.astype(np.int8),
        "check_prediction": prediction.astype(np.float32),
    }


SVR_BATCH = 4  # groups fitted between checkpoints
CHECK_FIELDS = ("check_label", "check_trained", "check_prediction")


def _groups_to_arrays(results: list[dict[str, Any]]) -> dict[str, np.ndarray]:
    """Fitted groups (one batch) as flat arrays for a checkpoint."""
    out: dict[str, np.ndarray] = {"groups": np.array(len(results))}
    for g, r in enumerate(results):
        out[f"{g}.counts"] = np.array([r["positive"], r["negative"]], np.int64)
        out[f"{g}.fallback"] = np.array(r["fallback"])
        for name in CHECK_FIELDS:
            out[f"{g}.{name}"] = r[name]
        m = r["model"]
        if m is not None:
            out[f"{g}.support"] = m.support
            out[f"{g}.dual"] = m.dual
            out[f"{g}.scalars"] = np.array([m.intercept, m.gamma])
            out[f"{g}.lo"] = m.lo
            out[f"{g}.hi"] = m.hi
    return out


def _group_from_arrays(a: dict[str, np.ndarray], g: int) -> dict[str, Any]:
    """Group g of a batch back from `_groups_to_arrays`."""
    model = None
    if f"{g}.support" in a:
        intercept, gamma = a[f"{g}.scalars"]
        model = SvrModel(a[f"{g}.support"], a[f"{g}.dual"], float(intercept), float(gamma),
                         a[f"{g}.lo"], a[f"{g}.hi"])  # fmt: skip
    positive, negative = a[f"{g}.counts"]
    checks = {name: a[f"{g}.{name}"] for name in CHECK_FIELDS}
    return {"model": model, "fallback": float(a[f"{g}.fallback"]), "positive": int(positive),
            "negative": int(negative), **checks}  # fmt: skip


def _svr_footprint(params: SvrParams, upstream: dict[str, dict]) -> Footprint:
    """A group's rows, sample and LIBSVM kernel cache while fitted; all groups' support vectors."""
    games = _logged_games(upstream.get("logs") or {})  # rows per group
    rows = 52 * games
    largest, samples = _svr_samples(params.per_label, games)
    checks = N_NETWORKS * 4 * min(params.check_per_label, games)
    peak = {
        # int16 metadata of every decision, the group's mask, row and label ids, float32 rows
        "group rows": nbytes((rows, 3), 2) + rows + nbytes((games, 2), 8)
        + nbytes((games, N_FEATURES), 4),
        # float64 sample, its svm-scaled copy and temporaries; LIBSVM's float kernel columns
        # (at most its cache) and its per-sample solver arrays
        "sample": nbytes((largest, N_FEATURES), 3 * 8)
        + min(LIBSVM_CACHE, nbytes((largest, largest), 4)) + nbytes(largest, 16 * 8),
        # every group's float64 support vectors (at most its whole sample), twice: the fitted
        # models, then packed; their dual coefficients
        "models": nbytes((samples, N_FEATURES + 1), 2 * 8),
    }  # fmt: skip
    stored = {
        "support": nbytes((samples, N_FEATURES), 8),
        "dual": nbytes(samples, 8),
        "scaling": nbytes((N_NETWORKS, 2 * N_FEATURES + 3), 8),
        "checks": nbytes(checks, 2 + 1 + 1 + 4),
    }
    return Footprint(peak, stored, work=samples * largest)  # kernel rows of each group's solve


@stage("hearts-svr", 2, SvrParams, inputs={"logs": "hearts-logs"}, labels=("per_label",),
       footprint=_svr_footprint)  # fmt: skip
def run_svr(ctx: StageContext[SvrParams]) -> dict[str, Any]:
    """One nu-SVR per (trick, seat in trick) predicting the risk of taking Q♠.

    Fit the 52 group models and store them as arrays, with their predictions for check rows
    (`check_*`: group, DegSQ label, whether in the training sample, prediction).
    """
    p = ctx.params
    logs: Artifact = ctx.inputs["logs"]
    params = p.model_dump()

    def fit_batch(start: int, stop: int, _bar: object) -> list[dict[str, Any]]:
        items = [(logs.url, g, params) for g in range(start, stop)]
        return ctx.executor.map(fit_group, items, desc="")

    batches = ctx.run_batches(
        "svr", N_NETWORKS, SVR_BATCH, fit_batch, _groups_to_arrays,
        lambda saved: [_group_from_arrays(saved, g) for g in range(int(saved["groups"]))],
        "nu-SVR groups",
    )  # fmt: skip
    results = [group for batch in batches for group in batch]
    packed = pack([r["model"] for r in results], N_FEATURES, [r["fallback"] for r in results])
    for name, data in packed.items():
        shape = data.shape if data.size else (0,) * data.ndim
        chunks = tuple(max(1, s) for s in data.shape)
        ctx.writer.array(name, shape, data.dtype, chunks=chunks)[...] = data
    checks = {
        "check_group": np.concatenate(
            [np.full(len(r["check_label"]), g, np.int16) for g, r in enumerate(results)]
        ),
        **{name: np.concatenate([r[name] for r in results]) for name in CHECK_FIELDS},
    }
    for name, data in checks.items():
        ctx.writer.array(name, data.shape, data.dtype, chunks=(max(1, len(data)),))[...] = data
    held = checks["check_trained"] == 0
    label, said = checks["check_label"][held], checks["check_prediction"][held] > 0
    positive, negative = label > 0, label <= 0
    return {
        "support_vectors": int(len(packed["dual"])),
        "groups_fitted": sum(r["model"] is not None for r in results),
        "samples_per_group": [2 * min(r["positive"], r["negative"], p.per_label) for r in results],
        # sign agreement on held-out rows (prediction > 0 read as "takes Q♠"); a group whose
        # positives all went into its training sample has no held-out positive
        "held_out": {
            "positive": int(positive.sum()),
            "negative": int(negative.sum()),
            "true_positive_rate": _share(said[positive]),
            "true_negative_rate": _share(~said[negative]),
        },
    }


def _share(flags: np.ndarray) -> float | None:
    """The share of true flags, rounded to 4 decimals (None without any)."""
    return round(float(flags.mean()), 4) if len(flags) else None


# Share of a group's decisions labelled +1 (takes Q♠ in this or a later trick), measured on
# Monte Carlo logs: about 0.3 in the first tricks' groups, 0.14 over all groups.
POSITIVE_SHARE_MAX = 0.3
POSITIVE_SHARE_MEAN = 0.15
LIBSVM_CACHE = 500 * MB  # NuSVR's kernel cache_size (hearts.svr.fit)


def _logged_games(logs: dict[str, Any]) -> int:
    """Games of a hearts-logs artifact's recorded parameters (the default if unknown): the
    rows of each SVR group."""
    return int(logs.get("games", LogsParams.model_fields["games"].default))


def _svr_samples(per_label: int, games: int) -> tuple[int, int]:
    """(the largest group's sample, all groups' samples) of SVRs fitted on `games` logged
    games: up to `per_label` of each label, the rarer label (+1) kept whole. Support vectors
    are at most the whole sample (0.6 to 0.8 of it at nu = 0.5)."""
    largest = 2 * min(per_label, int(POSITIVE_SHARE_MAX * games))
    return largest, N_NETWORKS * 2 * min(per_label, int(POSITIVE_SHARE_MEAN * games))


# ---------------------------------------------------------------------------------------------
# hearts-falcon


class FalconStageParams(RuleParams):
    """One learner: action set, SVR guidance, learning games, FALCON parameters, seed."""

    actions: str = Field(
        default="new",
        description='The action set: "new", all 29 actions; "previous", the earlier papers\'.',
    )
    svr: bool = Field(
        default=False, description="Guide the learner by the hearts-svr risk models (DegSQ)."
    )
    games: int = Field(
        default=100_000, ge=0, description="Learning games against three rule-based agents."
    )
    checkpoints: list[int] = Field(
        default_factory=lambda: list(CHECKPOINTS),
        description="Games after which a network snapshot is kept for the learning curve (the"
        " last game always).",
    )
    seed: Seed = Field(default=0, description="Seed of the deals and the exploration.")
    capacity: int = Field(
        default=3000, ge=1, description="Category nodes per FALCON network at most."
    )
    rho_state: float = Field(
        default=0.8, ge=0, le=1, description="FALCON's vigilance of the state field."
    )
    rho_reward: float = Field(
        default=0.5, ge=0, le=1, description="FALCON's vigilance of the reward field."
    )
    beta: float = Field(default=0.5, gt=0, le=1, description="FALCON's learning rate.")
    epsilon: float = Field(
        default=0.05,
        ge=0,
        le=1,
        description="Share of random valid actions while learning (exploration).",
    )
    reward: str = Field(
        default="trick",
        description='The reward: "trick", from the points of that trick; "rest-of-game", from'
        " the points from that trick to the end.",
    )
    threshold: float = Field(
        default=0.0,
        description="With SVR guidance: try the next action while the predicted DegSQ exceeds"
        " this.",
    )
    readout: str = Field(
        default="value",
        description='"value": TD-FALCON\'s value readout (0.263 vs rule-based after 30,000'
        ' games here); "motor": the paper\'s reactive readout of the motor template (plateaus'
        " near 0.29).",
    )

    @field_validator("actions")
    @classmethod
    def _actions(cls, v: str) -> str:
        if v not in ("new", "previous"):
            raise ValueError("actions must be 'new' or 'previous'")
        return v

    @field_validator("readout")
    @classmethod
    def _readout(cls, v: str) -> str:
        if v not in READOUTS:
            raise ValueError(f"readout must be one of {', '.join(READOUTS)}")
        return v

    @field_validator("reward")
    @classmethod
    def _reward(cls, v: str) -> str:
        if v not in ("trick", "rest-of-game"):
            raise ValueError("reward must be 'trick' or 'rest-of-game'")
        return v


def svr_arrays(artifact: Artifact | None) -> tuple[np.ndarray, ...]:
    """(support, dual, sv_start, intercept, gamma, lo, hi) of a hearts-svr artifact, or empty."""
    if artifact is None:
        z = np.zeros((N_NETWORKS, N_FEATURES))
        return (np.zeros((0, N_FEATURES)), np.zeros(0), np.zeros(N_NETWORKS + 1, np.int64),
                np.zeros(N_NETWORKS), np.zeros(N_NETWORKS), z, z)  # fmt: skip
    names = ("support", "dual", "sv_start", "intercept", "gamma", "lo", "hi")
    return tuple(np.asarray(artifact[n][...]) for n in names)


def _falcon_footprint(params: FalconStageParams, upstream: dict[str, dict]) -> Footprint:
    """The 52 networks at full capacity, a snapshot's copies of its nodes, the SVR model."""
    networks = nbytes((N_NETWORKS, params.capacity, DIM), 8)
    nodes = _snapshot_nodes(params.capacity, params.games)
    support = _upstream_svr_samples(upstream.get("svr") or {}) if params.svr else 0
    checkpoints = _checkpoints_of(params.checkpoints, params.games)
    peak = {
        "networks": networks,  # float64 weights [52, capacity, DIM], filled with ones
        # a snapshot: the committed nodes gathered as float64, their float32 copy, compressed
        "snapshot": nbytes((nodes, DIM), 8 + 4 + 4),
        # the SVR's float64 support vectors as stored and transposed for the kernels
        "svr model": nbytes((support, N_FEATURES), 2 * 8),
        # penalty ratio per game: a Python float in a list, then float32
        "ratios": nbytes(params.games, 32 + 4),
    }
    stored = {
        "snapshots": sum(
            nbytes((_snapshot_nodes(params.capacity, c), DIM), 4) + nbytes(N_NETWORKS, 8)
            for c in checkpoints
        ),
        "training_ratio": nbytes(params.games, 4),
    }
    # the SVR's guidance scores every decision: its own time model
    return Footprint(peak, stored, work=params.games, work_kind="svr" if params.svr else "")


@stage("hearts-falcon", 1, FalconStageParams, inputs={"svr": "hearts-svr"}, optional={"svr"},
       labels=("actions", "svr", "seed"), footprint=_falcon_footprint)  # fmt: skip
def run_falcon(ctx: StageContext[FalconStageParams]) -> dict[str, Any]:
    """A FALCON Hearts learner against rule-based agents, with snapshots.

    Learn against three rule-based agents; snapshot the networks at each checkpoint.
    """
    p = ctx.params
    svr = ctx.inputs.get("svr")
    if p.svr and svr is None:
        raise StageError("hearts-falcon: svr=true needs a hearts-svr input")
    checkpoints = sorted({c for c in p.checkpoints if c <= p.games} | {p.games})
    params = FalconParams(rho=(p.rho_state, 0.0, p.rho_reward), beta=p.beta).array()
    weights = np.ones((N_NETWORKS, p.capacity, DIM))
    nodes = np.zeros(N_NETWORKS, np.int64)
    mask = action_mask(p.actions == "previous")
    model = svr_arrays(svr if p.svr else None)
    reward_mode = 0 if p.reward == "trick" else 1
    settings = LearnerSettings(
        True, p.epsilon, reward_mode, READOUTS[p.readout], p.svr, p.threshold
    )
    opts = p.options()
    done = 0
    ratios = []
    saved = ctx.writer.load_checkpoint("falcon")
    if saved is not None:
        weights, nodes, done = saved["weights"], saved["nodes"], int(saved["done"])
        ratios = list(saved["ratios"])
    bar = ctx.progress.start("learning games", p.games, done=done)
    w = ctx.writer
    for c in checkpoints:
        if c < done or (c == done and w.has_array(f"nodes_{c}")):
            continue  # written before a kill: the partial artifact keeps it
        while done < c:
            n = min(c - done, 1000)
            points = np.zeros((n, 4), np.int64)
            seats = np.zeros(n, np.int64)
            learner = make_learner(weights, nodes, params, mask, settings, *model)
            falcon_games(p.seed, done, RULE_BASED, opts, 0, learner, points, seats)
            ratios.extend((points[np.arange(n), seats] / 26.0).tolist())
            done += n
            bar.advance(n)
        committed = _committed(weights, nodes)
        w.write_arrays({f"nodes_{c}": np.asarray(nodes, np.int64)})
        shape = committed.shape if committed.size else (0, DIM)
        w.array(f"weights_{c}", shape, np.float32, chunks=(max(1, shape[0]), DIM))[:] = committed
        ctx.writer.save_checkpoint(
            "falcon",
            {
                "weights": weights,
                "nodes": nodes,
                "done": np.array(done),
                "ratios": np.array(ratios),
            },
        )
    bar.close()
    w.write_arrays({"checkpoints": np.array(checkpoints, np.int64)})
    if ratios:
        w.write_arrays({"training_ratio": np.array(ratios, np.float32)})
    return {
        "games": p.games,
        "nodes_total": int(nodes.sum()),
        "training_ratio_last_1000": round(float(np.mean(ratios[-1000:])), 4) if ratios else None,
    }


def _snapshot_nodes(capacity: int, games: int) -> int:
    """Committed nodes of a learner after `games` games: at most one per decision (13 a game),
    at most `capacity` per network."""
    return min(N_NETWORKS * capacity, 13 * games)


def _checkpoints_of(checkpoints: Any, games: int) -> list[int]:
    """The snapshots a learner writes (as `run_falcon` picks them): checkpoints up to `games`,
    and `games`."""
    return sorted({int(c) for c in checkpoints if c <= games} | {games})


def _upstream_svr_samples(svr: dict[str, Any]) -> int:
    """Support vectors of a hearts-svr artifact at most (its recorded parameters, and its logs'
    as `Recorded.inputs` where known): every group's whole sample."""
    per_label = int(svr.get("per_label", SvrParams.model_fields["per_label"].default))
    logs = getattr(svr, "inputs", {}).get("logs") or {}
    return _svr_samples(per_label, _logged_games(logs))[1]


def _committed(weights: np.ndarray, nodes: np.ndarray) -> np.ndarray:
    parts = [weights[n, : nodes[n]] for n in range(N_NETWORKS)]
    return np.concatenate(parts).astype(np.float32) if parts else np.zeros((0, DIM), np.float32)


def load_snapshot(artifact: Artifact, checkpoint: int, capacity: int) -> tuple[np.ndarray, ...]:
    """(weights [52, capacity, DIM], nodes [52]) of a learner at a checkpoint."""
    nodes = np.asarray(artifact[f"nodes_{checkpoint}"][:])
    flat = np.asarray(artifact[f"weights_{checkpoint}"][...]).astype(np.float64)
    weights = np.ones((N_NETWORKS, max(capacity, 1), DIM))
    start = 0
    for n in range(N_NETWORKS):
        weights[n, : nodes[n]] = flat[start : start + nodes[n]]
        start += nodes[n]
    return weights, nodes


# ---------------------------------------------------------------------------------------------
# hearts-eval


class EvalParams(RuleParams):
    """Games per evaluation (the paper: 5,000), Monte Carlo simulations, rank games, seed."""

    games: int = Field(
        default=5000, ge=1, description="Games per snapshot and opponent (the paper: 5,000)."
    )
    sims: int = Field(
        default=200, ge=1, description="Simulations per decision of the Monte Carlo opponents."
    )
    rank_matches: int = Field(
        default=1000,
        ge=0,
        description="Matches to 100 points that rank each final learner, per opponent kind.",
    )
    seed: Seed = Field(default=10_000_019, description="Seed of the evaluation games.")


Games = Numbered  # games first..first + count - 1 of a seed (a game depends on its number only)


def evaluate(
    weights: np.ndarray,
    nodes: np.ndarray,
    lp: dict[str, Any],
    opponent: int,
    games: Games,
    sims: int,
    opts: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """(points [games.count, 4], learner seats) of `games` against three agents (no learning,
    SVR or exploring)."""
    params = FalconParams(rho=(lp["rho_state"], 0.0, lp["rho_reward"]), beta=lp["beta"]).array()
    mask = action_mask(lp["actions"] == "previous")
    model = svr_arrays(None)
    points = np.zeros((games.count, 4), np.int64)
    seats = np.zeros(games.count, np.int64)
    settings = LearnerSettings(reward_mode=1, readout=READOUTS[lp.get("readout", "motor")])
    learner = make_learner(weights.copy(), nodes.copy(), params, mask, settings, *model)
    falcon_games(games.seed, games.first, opponent, opts, sims, learner, points, seats)
    return points, seats


def ranks_to_100(points: np.ndarray, seats: np.ndarray, matches: int) -> np.ndarray:
    """Learner's rank (1..4, ties shared) in consecutive matches played until someone has 100."""
    out = []
    i = 0
    totals = np.zeros(4)
    mine = 0.0
    for g in range(len(points)):
        totals += np.roll(points[g], -seats[g])  # learner first
        if totals.max() >= 100:
            mine = totals[0]
            out.append(1 + (totals[1:] < mine).sum() + 0.5 * (totals[1:] == mine).sum())
            totals[:] = 0
            i += 1
            if i == matches:
                break
    return np.array(out)


def eval_snapshot(store: str, key: str, checkpoint: int, p: dict[str, Any]) -> list[float]:
    """Penalty ratios of one snapshot vs rule-based and vs Monte Carlo agents (a Dask task)."""
    art = ArtifactStore(store).open(key)
    lp = art.params
    weights, nodes = load_snapshot(art, checkpoint, lp["capacity"])
    out = []
    games, options = Games(p["games"], p["seed"]), np.asarray(p["options"])
    for opp in (RULE_BASED, MONTE_CARLO):
        points, seats = evaluate(weights, nodes, lp, opp, games, p["sims"], options)
        out.append(float(points[np.arange(len(seats)), seats].mean() / 26.0))
    return out


RANK_DEALS_FIRST = 16  # deals per match played before checking which matches are complete
RANK_DEALS_MOST = 40  # deals per match at most (a match to 100 points lasts about 10-15)


def rank_final(store: str, key: str, p: dict[str, Any]) -> list[tuple[int, float, int]]:
    """Mean rank of a learner's last snapshot in games to 100 points, per opponent kind."""
    art = ArtifactStore(store).open(key)
    lp = art.params
    final = int(np.asarray(art["checkpoints"][:])[-1])
    weights, nodes = load_snapshot(art, final, lp["capacity"])
    matches = p["rank_matches"]
    out = []
    for opp in (RULE_BASED, MONTE_CARLO):
        # Play RANK_DEALS_FIRST deals per match, then more while matches are missing. Games
        # depend on their number only, so this equals one run of RANK_DEALS_MOST deals per
        # match, without playing the unused ones.
        points = np.zeros((0, 4), np.int64)
        seats = np.zeros(0, np.int64)
        ranks = np.zeros(0)
        while len(ranks) < matches and len(points) < RANK_DEALS_MOST * matches:
            more = min(RANK_DEALS_FIRST * matches, RANK_DEALS_MOST * matches - len(points))
            games = Games(more, p["seed"] + 1, first=len(points))
            got_points, got_seats = evaluate(weights, nodes, lp, opp, games, p["sims"],
                                             np.asarray(p["options"]))  # fmt: skip
            points = np.concatenate([points, got_points])
            seats = np.concatenate([seats, got_seats])
            ranks = ranks_to_100(points, seats, matches)
        out.append((opp, float(ranks.mean()), len(ranks)))
    return out


EVAL_BATCH = 20  # snapshots evaluated between hearts-eval checkpoints
RANK_BATCH = 4  # learners ranked in games to 100 points between checkpoints


def learner_variants(labels: list[str]) -> dict[str, list[int]]:
    """hearts-eval's learners grouped by variant: 'new+svr seed 2' -> 'new+svr' -> indices of
    its trials, in label order."""
    variants: dict[str, list[int]] = {}
    for index, label in enumerate(labels):
        variants.setdefault(label.rsplit(" seed ", 1)[0], []).append(index)
    return variants


def _eval_footprint(params: EvalParams, upstream: dict[str, dict]) -> Footprint:
    """One snapshot at a time (one per Dask worker): its networks, their copy, its nodes read."""
    learners = [p for name, p in upstream.items() if name.startswith("learners.")] or [{}]
    defaults = FalconStageParams.model_fields
    capacity = max(int(p.get("capacity", defaults["capacity"].default)) for p in learners)
    games = max(int(p.get("games", defaults["games"].default)) for p in learners)
    snapshots = sum(
        len(_checkpoints_of(p.get("checkpoints", CHECKPOINTS), int(p.get("games", games))))
        for p in learners
    )
    peak = {
        # float64 [52, capacity, DIM] networks of the snapshot, and `evaluate`'s copy
        "networks": nbytes((2, N_NETWORKS, max(capacity, 1), DIM), 8),
        # the committed nodes as stored (float32) and as float64
        "snapshot read": nbytes((_snapshot_nodes(capacity, games), DIM), 4 + 8),
        # int64 points and seats of an evaluation's games, and of a rank run's (at most
        # RANK_DEALS_MOST games per match, concatenated)
        "games": nbytes((params.games + 2 * RANK_DEALS_MOST * params.rank_matches, 5), 8),
    }
    stored = {
        "curve": nbytes((snapshots, 4), 8),
        "ranks": nbytes((2 * len(learners), 4), 8) if params.rank_matches else 0,
    }
    # a snapshot's evaluation games, and the rank matches (about 22 games each, measured)
    work = snapshots * params.games + 22 * len(learners) * params.rank_matches
    return Footprint(peak, stored, work=work)


@stage("hearts-eval", 2, EvalParams, inputs={"learners": "hearts-falcon"}, many={"learners"},
       labels=("games",), footprint=_eval_footprint)  # fmt: skip
def run_eval(ctx: StageContext[EvalParams]) -> dict[str, Any]:
    """Penalty ratios of learner snapshots vs rule-based and Monte Carlo agents.

    Evaluate every snapshot of every learner (in parallel); ranks for the final snapshots.
    """
    p = ctx.params
    names = numbered(ctx.inputs, "learners")
    if not names:
        raise StageError("hearts-eval: needs learners (inputs learners.0, learners.1, ...)")
    payload = {**p.model_dump(), "options": p.options().tolist()}
    labels = []
    items = []
    for li, name in enumerate(names):
        art = ctx.inputs[name]
        lp = art.params
        labels.append(f"{lp['actions']}{'+svr' if lp['svr'] else ''} seed {lp['seed']}")
        for c in np.asarray(art["checkpoints"][:]):
            items.append((li, art.store.location, art.key, int(c)))

    def eval_batch(start: int, stop: int, _bar: ProgressTask) -> list[tuple[float, float]]:
        jobs = [(path, key, c, payload) for _li, path, key, c in items[start:stop]]
        return ctx.executor.map(eval_snapshot, jobs)

    # a checkpoint per batch of snapshots, so a killed paper-scale run resumes
    batches = ctx.run_batches(
        "snapshots", len(items), EVAL_BATCH, eval_batch,
        lambda got: {"ratios": np.array(got, np.float64)},
        lambda saved: [(float(rb), float(mc)) for rb, mc in saved["ratios"]],
        "snapshot evaluations",
    )  # fmt: skip
    results = [pair for batch in batches for pair in batch]
    rows = [(li, c, rb, mc) for (li, _p, _k, c), (rb, mc) in zip(items, results)]
    rank_rows: list[tuple[int, int, float, int]] = []
    if p.rank_matches:
        jobs = [(ctx.inputs[n].store.location, ctx.inputs[n].key, payload) for n in names]

        def rank_batch(
            start: int, stop: int, _bar: ProgressTask
        ) -> list[list[tuple[int, float, int]]]:
            return ctx.executor.map(rank_final, jobs[start:stop], desc="")

        # a checkpoint per batch of learners: a paper-scale rank step takes over an hour
        rank_batches = ctx.run_batches(
            "ranks", len(names), RANK_BATCH, rank_batch,
            lambda per: {"rows": np.array(per, np.float64).reshape(-1, 3)},
            lambda saved: [[(int(o), float(m), int(n)) for o, m, n in learner]
                           for learner in saved["rows"].reshape(-1, 2, 3)],
            "games to 100 (learners)",
        )  # fmt: skip
        finals = [learner for batch in rank_batches for learner in batch]
        rank_rows = [(li, opp, mean, n) for li, per in enumerate(finals) for opp, mean, n in per]
    table = np.array(rows, np.float64)
    w = ctx.writer
    w.write_arrays({"curve": table})
    if rank_rows:
        w.write_arrays({"ranks": np.array(rank_rows, np.float64)})
    table_rows = {}
    for variant, members in learner_variants(labels).items():
        last = np.array([table[table[:, 0] == li][-1] for li in members])
        entry: dict[str, Any] = {"trials": len(members)}
        for col, key in ((2, "vs_rule_based"), (3, "vs_monte_carlo")):
            # below 0.25 is also below the opponents' mean: the four ratios sum to 1
            entry[key] = round(float(last[:, col].mean()), 4)
            below = int((last[:, col] < 0.25).sum())
            entry[key + "_trials_below_0.25"] = below
            # the share of trials below par, with its Wilson interval (5 trials: wide)
            entry.update(rate_fields(below, len(members), key + "_share_of_trials_below_0.25"))
        for opp, key in ((RULE_BASED, "rank_vs_rule_based"), (MONTE_CARLO, "rank_vs_monte_carlo")):
            got = [r[2] for r in rank_rows if r[0] in members and r[1] == opp]
            if got:
                entry[key] = round(float(np.mean(got)), 4)
        table_rows[variant] = entry
    return {"learners": labels, "table": table_rows}
