"""Four-player Blokus, BlokusZero against MCTS-MAXN: self-play, training, evaluation.

- `blokus-selfplay` plays games of four copies of a network (the `net` input, else a freshly
  initialised one) with the batched MAXN PUCT search (`engines.blokus.selfplay`) and stores the
  compact game records; resumes per chunk of games.
- `blokus-train` continues the `previous` network (or starts one) on the most recent
  `buffer_games` games of its `games` inputs: SGD with momentum and weight decay, the paper's
  learning-rate drop at a global step, optional symmetry augmentation; checkpoints as it goes.
- `blokus-eval` plays every `net.N` input against three MCTS-MAXN (the paper's protocol) on
  the same seeded games, optionally beside an untrained control, and writes win rates with 95%
  Wilson intervals (a shared win counts 1/k: `WIN_DEFINITION`), plus the policy statistics of
  the paper's Figure 12.
"""

from __future__ import annotations

import time
from typing import Any, ClassVar, Literal

import numpy as np
import torch
from pydantic import Field

from gameforge.artifacts import Artifact
from gameforge.engines.blokus.game import CELLS, N_PLAYERS, tables
from gameforge.engines.blokus.mcts import ROLLOUT_EPSILON
from gameforge.engines.blokus.rollouts import ROLLOUT_WIDEST, RolloutTargets, rollout_games
from gameforge.engines.blokus.selfplay import (
    POLICY_STATS,
    RECORD_FIELDS,
    GameRecords,
    MatchParams,
    SearchParams,
    make_optimiser,
    match,
    sample_batch,
    self_play,
    train_step,
    tree_capacity,
)
from gameforge.engines.blokus.zero import (
    MAX_PLIES,
    N_MOVES,
    N_ORIENTATIONS,
    N_PLANES,
    BlokusNet,
    Evaluator,
    ZeroConfig,
    model_from_arrays,
)
from gameforge.engines.common.torch_arrays import (
    pick_device,
    restore_training_state,
    training_state,
    weights_to_arrays,
)
from gameforge.stages.base import Seed, StageContext, StageError, StageParams, numbered
from gameforge.stages.progress import ProgressTask
from gameforge.stages.registry import stage
from gameforge.stages.reporting import UNTRAINED, rate_fields, win_rate_text
from gameforge.stages.resources import MB, TORCH_WORKING, Footprint, Upstream, nbytes

WEIGHT_PREFIX = "weights."


class NetParams(StageParams):
    """The network's size (the paper: 10 residual blocks of 128 filters), its policy head
    ("dense", the paper's; "conv", beyond it: see `ConvPolicy`) and the torch device."""

    blocks: int = Field(default=10, ge=0, description="Residual blocks (the paper: 10).")
    filters: int = Field(
        default=128, ge=1, description="Filters of each convolution (the paper: 128)."
    )
    policy_head: Literal["dense", "conv"] = Field(
        default="dense",
        description='The policy head: "dense", the paper\'s; "conv", beyond it (see `ConvPolicy`).',
    )
    device: str = Field(
        default="auto", description="Torch device of the networks (auto: cuda when available)."
    )
    execution_only: ClassVar[frozenset[str]] = frozenset({"device"})

    def config(self) -> ZeroConfig:
        """The network configuration."""
        return ZeroConfig(self.blocks, self.filters, self.policy_head)


def load_net(train: Artifact, device: str) -> tuple[BlokusNet, ZeroConfig]:
    """The network of a `blokus-train` artifact."""
    config = ZeroConfig(
        int(train.params["blocks"]),
        int(train.params["filters"]),
        str(train.params.get("policy_head", "dense")),
    )
    arrays = {
        n[len(WEIGHT_PREFIX) :]: np.asarray(train[n][...])
        for n in train.array_names()
        if n.startswith(WEIGHT_PREFIX)
    }
    return model_from_arrays(arrays, config, device), config


def fresh_net(config: ZeroConfig, seed: int) -> BlokusNet:
    """A freshly initialised network (seeded)."""
    torch.manual_seed(seed)
    return BlokusNet(config)


def load_records(artifact: Artifact) -> GameRecords:
    """The game records of a `blokus-selfplay` or `blokus-rollouts` artifact."""
    names = set(artifact.array_names())
    wanted = [n for n in (*RECORD_FIELDS, "ply_value") if n in names]
    return GameRecords.from_arrays({n: np.asarray(artifact[n][...]) for n in wanted})


# ---------------------------------------------------------------------------------------------
# Resource estimates (stages/resources.py): what the footprints below count.

# A game's records: at most MAX_PLIES placements, and a policy target entry per root child of
# every searched position (about 190 legal placements a ply, 10,600-11,200 a game measured in
# games of a fresh network; a round upper figure for longer games of a trained one)
PI_PER_GAME = 16_000
# bytes a game's records hold: int64 placement and pi offset per ply, int64 move and float32
# weight per policy entry, game offset, float64 scores and outcomes
RECORD_BYTES = MAX_PLIES * 16 + PI_PER_GAME * 12 + 8 + 2 * N_PLAYERS * 8
# bytes per game while records are gathered: the self-play recorder's lists (int64 moves and
# float64 targets) or the loaded inputs, beside their concatenation and one `astype` copy
RECORD_PEAK_BYTES = MAX_PLIES * 48 + PI_PER_GAME * 32 + 3 * 2 * N_PLAYERS * 8
# distinct legal placements a searched game adds to a network batch (measured: 95 on average,
# 236 at most, per game in batches of 32)
LEGAL_PER_GAME = 300
# legal placements of a game's widest positions (the most of a game: 574 on average, 810 at
# most, in 128 self-play games), the children an expansion adds there
WIDEST = 600
# ZeroSearch node: int64 placement, float32 prior, int64 visits, float64 value sum per colour,
# int64 first child and child count
ZERO_NODE_BYTES = 8 + 4 + 8 + 8 * N_PLAYERS + 8 + 8
# MCTS-MAXN node: int64 placement and visits, float64 reward per colour, int64 first child and
# child count
MCTS_NODE_BYTES = 8 + 8 + 8 * N_PLAYERS + 8 + 8


def net_parameters(blocks: int, filters: int, policy_head: str = "dense") -> int:
    """A BlokusNet's weights and batch-norm statistics (the dense head's 800 x 30,433 policy
    layer, 24 million, dominates small networks)."""
    f = filters
    stem = N_PLANES * f * 9 + 4 * f  # conv 3x3, batch norm (weight, bias, mean, variance)
    block = 2 * (f * f * 9 + 4 * f)  # two convs 3x3 with batch norms
    if policy_head == "conv":
        policy = N_ORIENTATIONS * f + N_MOVES  # conv 1x1, a bias per placement
    else:
        policy = 2 * f + 4 * 2 + 2 * CELLS * N_MOVES + N_MOVES  # conv 1x1, norm, dense
    value = 4 * f + 4 * 4 + 4 * CELLS * 256 + 256 + 256 * N_PLAYERS + N_PLAYERS
    return stem + blocks * block + policy + value


def net_multiply_adds(blocks: int, filters: int, policy_head: str = "dense") -> int:
    """A BlokusNet's multiply-adds for one position: each convolution weight once per cell,
    each dense weight once."""
    f = filters
    convolutions = (N_PLANES * f * 9 + blocks * 2 * f * f * 9 + 6 * f) * CELLS
    policy = N_ORIENTATIONS * f * CELLS if policy_head == "conv" else 2 * CELLS * N_MOVES
    return convolutions + policy + 4 * CELLS * 256 + 256 * N_PLAYERS


def _net_size(upstream: dict[str, Any], default: NetParams) -> tuple[int, int, str]:
    """(blocks, filters, policy head) of a blokus-train input's recorded parameters, else
    `default`'s."""
    return (
        int(upstream.get("blocks", default.blocks)),
        int(upstream.get("filters", default.filters)),
        str(upstream.get("policy_head", default.policy_head)),
    )


def touched_nodes(sims: int, expansions: int) -> int:
    """Nodes of a preallocated tree that searches write over a game (the pages RSS counts):
    the root's children and `expansions` expansions of the widest positions, at most the
    `tree_capacity(sims)` allocated (measured, ZeroSearch: 330-500 nodes a simulation at 64;
    MCTS-MAXN: 75-130 at 400)."""
    return min(tree_capacity(sims), 1 + WIDEST + expansions * WIDEST)


def search_bytes(games: int, sims: int) -> int:
    """ZeroSearch of `games` games side by side: their trees (one expansion a simulation), the
    leaf's legal placements and `legal_moves` stamps, the network's input planes and output
    logits per game, and the policy layer's columns of the batch's legal placements."""
    nodes = nbytes((games, touched_nodes(sims, sims)), ZERO_NODE_BYTES)
    scratch = nbytes((games, N_MOVES), 2 * 8 + 2 * 4) + nbytes((games, N_PLANES, CELLS), 4)
    columns = nbytes((min(N_MOVES, games * LEGAL_PER_GAME), 2 * CELLS), 4)
    return nodes + scratch + columns


# ---------------------------------------------------------------------------------------------
# blokus-selfplay


class SearchSettings(StageParams):
    """The search settings blokus-selfplay and blokus-eval share, flat (each is in the key);
    `search_params` gathers them into the engine's `SearchParams`, whose comments say what
    each means."""

    rollout_mix: float = Field(
        default=0.0,
        ge=0,
        le=1,
        description="Share of a leaf's value taken from one MCTS-MAXN rollout (AlphaGo's mixing;"
        " beyond the paper, which uses the value network alone: 0).",
    )
    fpu_reduction: float | None = Field(
        default=None,
        ge=0,
        description="First-play urgency: None, Q = 0 before an edge's first visit (the paper's,"
        " AlphaZero's); r, the parent's Q for the mover minus r.",
    )
    root_rule: Literal["puct", "gumbel"] = Field(
        default="puct",
        description='The root rule: "puct" (the paper\'s) or "gumbel" (Gumbel-top-m with'
        " sequential halving over `considered` actions, trained towards the improved policy).",
    )
    considered: int = Field(
        default=16, ge=1, description="m, the root actions the Gumbel rule considers."
    )
    value_margin: float = Field(
        default=0.0,
        ge=0,
        description="The value of a finished game, for rollouts and terminal leaves: 0, win/loss"
        " (the paper's); m > 0, beyond the paper, tanh((own score - best other score) / m).",
    )

    def search_params(
        self,
        sims: int,
        noise_alpha: float = SearchParams.noise_alpha,
        noise_eps: float = 0.0,
        proportional_plies: int = 0,
    ) -> SearchParams:
        """The engine's search settings: these fields, with the stage's simulations, root
        noise and proportional plies (an evaluation: none)."""
        return SearchParams(
            sims=sims, noise_alpha=noise_alpha, noise_eps=noise_eps,
            proportional_plies=proportional_plies, rollout_mix=self.rollout_mix,
            fpu_reduction=self.fpu_reduction, root_rule=self.root_rule,
            considered=self.considered, value_margin=self.value_margin,
        )  # fmt: skip


class SelfPlayParams(NetParams, SearchSettings):
    """Games, simulations per move, games searched at once (one network batch), noise, the
    search settings (`SearchSettings`), seed."""

    games: int = Field(default=1000, ge=1, description="Self-play games.")
    sims: int = Field(default=800, ge=1, description="Simulations per move (the paper: 800).")
    parallel: int = Field(
        default=32, ge=1, description="Games searched at once, as one network batch."
    )
    proportional_plies: int = Field(
        default=20,
        ge=0,
        description="Plies from a game's start whose move is drawn in proportion to the root's"
        " visit counts (the paper: 20); the most visited move afterwards.",
    )
    noise_alpha: float = Field(
        default=0.02,
        gt=0,
        description="Concentration alpha of the Dirichlet noise on the root priors (the paper:"
        " 0.02).",
    )
    noise_eps: float = Field(
        default=0.25,
        ge=0,
        le=1,
        description="Weight eps of the root noise, priors becoming (1 - eps) p + eps noise (the"
        " paper: 0.25; 0: none).",
    )
    seed: Seed = Field(
        default=0, description="Seed of a fresh network (without `net`), the noise and the moves."
    )
    # `parallel` is in the key: the games of a batch share the noise and move-draw streams, and
    # the batch size is the network's, so another `parallel` plays other games
    execution_only: ClassVar[frozenset[str]] = frozenset({"device"})


def _selfplay_footprint(params: SelfPlayParams, upstream: Upstream) -> Footprint:
    """The network and its folded copy, a chunk's search trees, the games' records."""
    blocks, filters, head = _net_size(upstream.get("net", {}), params)
    parallel = min(params.parallel, params.games)
    return Footprint(
        peak={
            # the network (loaded or fresh) and the evaluator's batch-norm-folded copy
            "network": 2 * nbytes(net_parameters(blocks, filters, head), 4),
            # one chunk's `parallel` games searched at once (a chunk at a time)
            "search trees": search_bytes(parallel, params.sims),
            # every game's records while gathered and concatenated
            "records": params.games * RECORD_PEAK_BYTES,
        },
        # the records, and each chunk's checkpoint of them until the commit
        stored={"records": params.games * RECORD_BYTES, "checkpoints": params.games * RECORD_BYTES},
        working=TORCH_WORKING,
        work=params.games * params.sims,  # simulations per move, every game
    )


@stage("blokus-selfplay", 5, SelfPlayParams, inputs={"net": "blokus-train"}, optional={"net"},
       labels=("seed", "games"), footprint=_selfplay_footprint)  # fmt: skip
def run_selfplay(ctx: StageContext[SelfPlayParams]) -> dict[str, Any]:
    """BlokusZero self-play games (batched MAXN PUCT search) as compact records.

    Self-play in chunks of games; each finished chunk is checkpointed.
    """
    p = ctx.params
    device = pick_device(p.device)
    if "net" in ctx.inputs:
        model, _config = load_net(ctx.inputs["net"], device)
    else:
        model = fresh_net(p.config(), p.seed)
    evaluator = Evaluator(model, device)
    search = p.search_params(p.sims, p.noise_alpha, p.noise_eps, p.proportional_plies)
    t = tables()
    t0 = time.perf_counter()
    plies = 0

    def play_chunk(start: int, stop: int, bar: ProgressTask) -> GameRecords:
        nonlocal plies
        rec = self_play(t, evaluator, stop - start, p.parallel, search,
                        p.seed * 1_000_003 + start, progress=bar.advance)  # fmt: skip
        plies += len(rec.moves)
        return rec

    # a chunk is one batch of games played side by side, checkpointed when finished
    parts = ctx.run_batches(
        "games", p.games, p.parallel, play_chunk, GameRecords.arrays,
        GameRecords.from_arrays, "self-play games",
    )  # fmt: skip
    seconds = time.perf_counter() - t0
    records = GameRecords.concat(parts)
    ctx.writer.write_arrays(records.arrays())
    wins = (records.outcome == 1).sum(axis=0)
    return {
        "games": records.games,
        "plies_per_game": round(len(records.moves) / max(records.games, 1), 2),
        "moves_per_second": round(plies / seconds, 2) if seconds > 0 and plies else None,
        "mean_score": [round(float(x), 2) for x in records.scores.mean(axis=0)],
        "sole_wins_by_colour": [int(x) for x in wins],
        "device": device,
    }


# ---------------------------------------------------------------------------------------------
# blokus-rollouts


class RolloutParams(StageParams):
    """Games of MCTS-MAXN's rollout policy with policy and value targets at a few positions
    each (`engines.blokus.rollouts`; beyond the paper: a network to start self-play from)."""

    games: int = Field(default=20_000, ge=1, description="Rollout-policy games to play.")
    epsilon: float = Field(
        default=ROLLOUT_EPSILON,
        ge=0,
        le=1,
        description="The games' share of random placements (MCTS-MAXN's rollouts: 0.05).",
    )
    positions: int = Field(
        default=4,
        ge=1,
        description="Positions kept per game as targets (few, so outcomes are not memorised).",
    )
    value_rollouts: int = Field(
        default=16, ge=1, description="Rollouts averaged into each kept position's value."
    )
    value_margin: float = Field(
        default=0.0,
        ge=0,
        description="The value of a finished game, as in blokus-selfplay (0: win/loss).",
    )
    chunk: int = Field(default=1000, ge=1, description="Games per checkpoint.")
    threads: int = Field(default=2, ge=1, description="Threads playing games at once.")
    seed: Seed = Field(default=0, description="Seed of the games.")
    execution_only: ClassVar[frozenset[str]] = frozenset({"chunk", "threads"})


def _rollouts_footprint(params: RolloutParams, upstream: Upstream) -> Footprint:
    """A chunk's scratch (every game's plies, targets and widest policy rows), the records."""
    chunk = min(params.chunk, params.games)
    per_game = MAX_PLIES * (8 + 8 * (N_PLAYERS + 1)) + params.positions * ROLLOUT_WIDEST * 16
    records = params.games * (MAX_PLIES * 32 + params.positions * 600 * 12 + 64)
    return Footprint(
        peak={"chunk scratch": chunk * per_game, "records": 3 * records},
        stored={"records": records, "checkpoints": records},
        working=64 * MB,
        work=params.games * (1 + params.positions * params.value_rollouts),  # games played
    )


@stage("blokus-rollouts", 1, RolloutParams, labels=("seed", "games"), footprint=_rollouts_footprint)
def run_rollouts(ctx: StageContext[RolloutParams]) -> dict[str, Any]:
    """Rollout-policy games as training records, in checkpointed chunks of games."""
    p = ctx.params
    t = tables()
    t0 = time.perf_counter()
    targets = RolloutTargets(p.epsilon, p.positions, p.value_rollouts, p.value_margin)

    def play_chunk(start: int, stop: int, bar: ProgressTask) -> GameRecords:
        return rollout_games(t, start, stop, p.seed, targets, p.threads)

    parts = ctx.run_batches("games", p.games, p.chunk, play_chunk, GameRecords.arrays,
                            GameRecords.from_arrays, "rollout games")  # fmt: skip
    records = GameRecords.concat(parts)
    ctx.writer.write_arrays(records.arrays())
    values = records.ply_value[np.isfinite(records.ply_value[:, 0])]
    return {
        "games": records.games,
        "positions": int(values.shape[0]),
        "plies_per_game": round(len(records.moves) / records.games, 2),
        "seconds": round(time.perf_counter() - t0, 1),
        # how much the averaged targets vary about their mean (a game outcome's: about 2.87)
        "value_variance": round(
            float(((values - values.mean(axis=0)) ** 2).sum(axis=1).mean()), 3
        ),  # fmt: skip
    }


# ---------------------------------------------------------------------------------------------
# blokus-train


class TrainParams(NetParams):
    """SGD steps on the replay buffer (the newest `buffer_games` games of the inputs)."""

    steps: int = Field(default=1000, ge=1, description="SGD steps of this run.")
    batch: int = Field(default=64, ge=1, description="Positions per SGD batch.")
    lr: float = Field(
        default=0.001, gt=0, description="Learning rate before the global step `lr_drop_step`."
    )
    lr_late: float = Field(
        default=0.0001, gt=0, description="Learning rate from the global step `lr_drop_step`."
    )
    lr_drop_step: int = Field(
        default=40_000,
        ge=0,
        description="Global step (counted over the `previous` networks too) from which"
        " `lr_late` applies.",
    )
    weight_decay: float = Field(default=1e-4, ge=0, description="SGD weight decay.")
    buffer_games: int = Field(
        default=10_000,
        ge=1,
        description="The replay buffer: the newest games of the inputs, in games.",
    )
    augment: bool = Field(
        default=False,
        description="One of the 8 board symmetries per sample (the paper's suggestion).",
    )
    legal_softmax: bool = Field(
        default=False,
        description="The policy loss over the legal placements only (beyond the paper, which"
        " uses all 30,433).",
    )
    value_margin: float = Field(
        default=0.0,
        ge=0,
        description="The value target of a finished game, as in blokus-selfplay (0: win/loss).",
    )
    value_weight: float = Field(
        default=1.0,
        gt=0,
        description="The value loss's weight (the paper's 1); lower keeps the value head from"
        " memorising the outcomes of a small buffer's games.",
    )
    checkpoint_every: int = Field(default=200, ge=1, description="SGD steps between checkpoints.")
    seed: Seed = Field(
        default=0, description="Seed of a fresh network (without `previous`) and of the batches."
    )
    execution_only: ClassVar[frozenset[str]] = frozenset({"device", "checkpoint_every"})


def replay_buffer(inputs: dict[str, Artifact], newest: int) -> GameRecords:
    """The newest `newest` games of the `games.N` inputs (a higher N is newer)."""
    names = numbered(inputs, "games")
    if not names:
        raise StageError("blokus-train: needs at least one games input (blokus-selfplay)")
    loaded: list[GameRecords] = []
    games = 0
    for name in reversed(names):  # newest first, only as many runs as the buffer holds
        loaded.append(load_records(inputs[name]))
        games += loaded[-1].games
        if games >= newest:
            break
    return GameRecords.concat(loaded[::-1]).last_games(newest)


def _train_footprint(params: TrainParams, upstream: Upstream) -> Footprint:
    """The replay buffer, the network with gradients and momentum, a batch and its activations."""
    weights = nbytes(net_parameters(params.blocks, params.filters, params.policy_head), 4)
    dense = nbytes((N_MOVES, 2 * CELLS), 4)  # the policy layer, the largest array stored
    b = params.batch
    return Footprint(
        peak={
            # the loaded games, their concatenation and its copies
            "replay buffer": replay_buffer_bytes(params, upstream),
            # weights, gradients and SGD momentum (float32 each)
            "weights+grads+momentum": 3 * weights,
            # a stored array in flight: its encoded copy (written), or its encoded bytes beside
            # the decoded array (read: the previous network's weights)
            "store reads/writes": dense,
            # a batch: planes, and per sample the policy target, the legality mask, the
            # logits, their masked and log-softmax versions, the loss terms and their grads
            "batch": nbytes((b, N_PLANES, CELLS), 2 * 4) + nbytes((b, N_MOVES), 4 + 1 + 6 * 4),
            # activations autograd keeps: about six per residual block, four for stem/heads
            "activations": nbytes((b, params.filters, CELLS), 4) * (6 * params.blocks + 4),
        },
        stored={
            "weights": weights,
            "losses": nbytes((params.steps, 2), 4),
            # a training checkpoint (weights, momentum) until the commit, after a few hundred
            "checkpoint": 2 * weights if params.steps > params.checkpoint_every else 0,
        },
        working=TORCH_WORKING,
        # forward and backward passes of every sample of every step
        work=params.steps
        * b
        * net_multiply_adds(params.blocks, params.filters, params.policy_head),
    )


@stage("blokus-train", 3, TrainParams,
       inputs={"games": "blokus-selfplay|blokus-rollouts", "previous": "blokus-train"},
       optional={"previous"}, many={"games"}, labels=("seed", "steps"),
       footprint=_train_footprint)  # fmt: skip
def run_train(ctx: StageContext[TrainParams]) -> dict[str, Any]:
    """Train BlokusZero on the newest self-play games (SGD, momentum, decay).

    Continue (or start) the network for `steps` SGD steps; checkpoint every few hundred. Each
    generation starts its momentum at zero from the previous network's weights (as
    alpha-zero-general does): the artifact keeps the weights only, half of what weights plus
    momentum took, and the stored network alone determines the next generation. Momentum still
    rides in the checkpoints, so a killed stage resumes bit for bit.
    """
    p = ctx.params
    device = pick_device(p.device)
    prev = ctx.inputs.get("previous")
    if prev is not None and _net_size(prev.params, NetParams()) != (
        p.blocks,
        p.filters,
        p.policy_head,
    ):
        raise StageError("blokus-train: the previous network has another size or policy head")
    t = tables()
    buffer = replay_buffer(ctx.inputs, p.buffer_games)
    start_global = 0
    if prev is not None:
        model, _ = load_net(prev, device)
        start_global = int(np.asarray(prev["steps_total"][...]).ravel()[0])
    else:
        model = fresh_net(p.config(), p.seed).to(device)
    optimiser = make_optimiser(model, p.lr, p.weight_decay)
    done = 0
    losses = np.zeros((p.steps, 2), np.float32)
    saved = ctx.writer.load_checkpoint("train")
    if saved is not None:
        extra = restore_training_state(model, optimiser, saved)
        done = int(extra["done"])
        losses[:done] = extra["losses"][:done]
        ctx.log(f"blokus-train: resuming after step {done}")
    bar = ctx.progress.start("training steps", p.steps, done=done)
    t0 = time.perf_counter()
    for step in range(done, p.steps):
        g = start_global + step
        lr = p.lr if g < p.lr_drop_step else p.lr_late
        for group in optimiser.param_groups:
            group["lr"] = lr
        rng = np.random.default_rng([p.seed, g])  # a step's batch depends on its number only
        planes, pi, z, legal = sample_batch(t, buffer, p.batch, rng, p.augment, p.value_margin)
        losses[step] = train_step(model, optimiser, planes, pi, z, device,
                                  legal if p.legal_softmax else None, p.value_weight)  # fmt: skip
        bar.advance(1)
        bar.note(f"value {losses[step, 0]:.3f} policy {losses[step, 1]:.3f}")
        if (step + 1) % p.checkpoint_every == 0 and step + 1 < p.steps:
            extra = {"done": np.array(step + 1), "losses": losses}
            ctx.writer.save_checkpoint("train", training_state(model, optimiser, extra))
    bar.close()
    seconds = time.perf_counter() - t0
    weights = weights_to_arrays(model)
    ctx.writer.write_arrays({WEIGHT_PREFIX + name: value for name, value in weights.items()})
    total = np.array([start_global + p.steps], np.int64)
    ctx.writer.write_arrays({"losses": losses, "steps_total": total})
    tail = losses[-max(1, min(100, p.steps)) :]
    return {
        "steps_total": start_global + p.steps,
        "buffer_games": buffer.games,
        "value_loss_last_100": round(float(tail[:, 0].mean()), 4),
        "policy_loss_last_100": round(float(tail[:, 1].mean()), 4),
        "steps_per_second": round((p.steps - done) / seconds, 2) if seconds > 0 else None,
        "parameters": int(sum(x.numel() for x in model.parameters())),
        "device": device,
    }


def replay_buffer_bytes(params: TrainParams, upstream: Upstream) -> int:
    """Bytes `replay_buffer` holds while loading: whole `games.N` runs, newest first, until
    `buffer_games` (a run of unknown size counted as a full buffer of self-play games)."""
    names = numbered(upstream, "games")
    if not names:
        return params.buffer_games * RECORD_PEAK_BYTES
    loaded = total = 0
    for name in reversed(names):
        run = upstream[name]
        games = int(run.get("games", params.buffer_games))
        loaded += games
        total += games * record_peak_bytes(run)
        if loaded >= params.buffer_games:
            break
    return total


def record_peak_bytes(run: dict[str, Any]) -> int:
    """Peak bytes per game of a games input while gathered: a self-play game's policy targets
    at every ply, or a rollout game's at its `positions` kept plies only (with a value target
    per ply beside its placements)."""
    if "positions" not in run:
        return RECORD_PEAK_BYTES
    per_ply = 3 * (8 + N_PLAYERS * 4)  # placement and ply value, in lists, joined, cast
    return MAX_PLIES * per_ply + int(run["positions"]) * WIDEST * 32 + 3 * 2 * N_PLAYERS * 8


# ---------------------------------------------------------------------------------------------
# blokus-eval


class EvalParams(SearchSettings):
    """The paper's evaluation: games per network, simulations, random opening plies; the
    network searches as blokus-selfplay's does (`SearchSettings`), without noise."""

    games: int = Field(default=300, ge=1, description="Games per network against three MCTS-MAXN.")
    final_games: int = Field(
        default=0, ge=0, description="Games for the last network (0: `games`)."
    )
    zero_sims: int = Field(
        default=800,
        ge=1,
        description="Simulations per move of the network's search (the paper: 800).",
    )
    mcts_sims: int = Field(
        default=800,
        ge=1,
        description="Simulations per move of each MCTS-MAXN opponent (the paper: 800).",
    )
    random_plies: int = Field(
        default=4,
        ge=0,
        description="The game's first placements, whoever makes them, drawn uniformly among the"
        " legal ones.",
    )
    parallel: int = Field(
        default=16, ge=1, description="Games whose network searches run at once (one batch)."
    )
    threads: int = Field(
        default=2, ge=1, description="Games whose MCTS-MAXN moves are searched at once."
    )
    # the control tells what the search wins without any learning
    control: bool = Field(
        default=False,
        description="Also play an untrained network of the last input's shape (a fresh"
        " blokus-train with that input's seed) on the same games, as row 0 (beyond the paper).",
    )
    seed: Seed = Field(default=20_000_003, description="Seed of the evaluation games.")
    device: str = Field(
        default="auto", description="Torch device of the networks (auto: cuda when available)."
    )
    # `parallel` is in the key (the batch size is the network's, and rollout_mix draws from one
    # stream shared by the batch); MCTS-MAXN's streams are per game, so `threads` is not
    execution_only: ClassVar[frozenset[str]] = frozenset({"device", "threads"})


WIN_DEFINITION = (
    "win share per game: 1 for the sole top score, 1/k for a top score shared by k players, "
    "else 0; win rate = mean share over the games (par 0.25); 95% Wilson score interval on "
    "(sum of shares, games), conservative for shared wins"
)


def win_rate_fields(successes: float, games: int) -> dict[str, Any]:
    """A result row's rate fields: the win rate (mean share), its 95% Wilson interval, and
    whether the interval lies above par."""
    fields = rate_fields(successes, games, "win_rate")
    return {**fields, "clear_of_par": bool(fields["win_rate_low"] > 0.25)}


def _rate_arrays(rows: list[dict[str, Any]]) -> dict[str, np.ndarray]:
    """`win_rate` (rate, the half-width of the narrowest symmetric bar holding the interval:
    what the figures' error bars draw) and `win_interval` (Wilson low, high) per row."""
    rate = np.array([r["win_rate"] for r in rows], np.float64)
    low = np.array([r["win_rate_low"] for r in rows], np.float64)
    high = np.array([r["win_rate_high"] for r in rows], np.float64)
    bar = np.maximum(rate - low, high - rate)
    return {
        "win_rate": np.stack([rate, bar], axis=1),
        "win_interval": np.stack([low, high], axis=1),
    }


def _eval_footprint(params: EvalParams, upstream: Upstream) -> Footprint:
    """A network loaded beside the last one and its folded copy; per game played at once,
    BlokusZero's search tree, the MCTS-MAXN players' tree and Progressive History tables."""
    names = numbered(upstream, "net") or ["net.0"]
    largest = max(net_parameters(*_net_size(upstream.get(n, {}), NetParams())) for n in names)
    games = [params.games] * len(names)
    if params.final_games:
        games[-1] = params.final_games
    parallel = min(params.parallel, max(games))
    # MCTS-MAXN expands a node on its second visit: at most one expansion per two simulations
    mcts_touched = touched_nodes(params.mcts_sims, params.mcts_sims // 2)
    mcts_nodes = nbytes((parallel, mcts_touched), MCTS_NODE_BYTES)
    # a tree's and a slot's `legal_moves` stamps and placement lists (int64)
    mcts_scratch = nbytes((parallel, N_MOVES), 4 * 8)
    return Footprint(
        peak={
            # the loaded arrays and model (beside the previous network's, with two or more)
            # and the evaluator's folded copy
            "networks": (2 if len(names) == 1 else 3) * nbytes(largest, 4),
            "zero search": search_bytes(parallel, params.zero_sims),
            "mcts trees": mcts_nodes + mcts_scratch,
            # per game at once: a history per colour (sums and counts, float64, [4, 30433])
            "histories": nbytes((parallel, N_PLAYERS, 2, N_PLAYERS, N_MOVES), 8),
        },
        stored={
            # per game: seat, scores, share and the final board; 21 decisions' policy stats
            "results": sum(g * (8 + 4 * 8 + 8 + CELLS + 21 * len(POLICY_STATS) * 8) for g in games),
        },
        working=TORCH_WORKING,
        # simulations per move of a game's BlokusZero seat and its three MCTS-MAXN seats
        work=(sum(games) + (games[0] if params.control else 0))
        * (params.zero_sims + 3 * params.mcts_sims),
    )


@stage("blokus-eval", 6, EvalParams, inputs={"net": "blokus-train"}, many={"net"},
       labels=("seed", "games"), footprint=_eval_footprint)  # fmt: skip
def run_eval(ctx: StageContext[EvalParams]) -> dict[str, Any]:
    """BlokusZero networks vs three MCTS-MAXN: win rates with 95% Wilson intervals.

    Every network (and, with `control`, an untrained one first) against three MCTS-MAXN on the
    same seeded games; one checkpointed result per network.
    """
    p = ctx.params
    device = pick_device(p.device)
    t = tables()
    names = numbered(ctx.inputs, "net")
    if not names:
        raise StageError("blokus-eval: needs at least one net.N input (blokus-train)")
    last = ctx.inputs[names[-1]]
    last_games = p.final_games or p.games
    players: list[tuple[str, Artifact | None, int]] = [
        (name, ctx.inputs[name], last_games if name == names[-1] else p.games) for name in names
    ]
    if p.control:
        players.insert(0, (UNTRAINED, None, players[-1][2]))
    search = p.search_params(p.zero_sims)
    protocol = MatchParams(p.mcts_sims, p.random_plies, p.threads)
    rows = []
    for i, (name, art, games) in enumerate(players):
        saved = ctx.writer.load_checkpoint(f"eval-{i}")
        if saved is None:
            if art is None:
                model = fresh_net(ZeroConfig(*_net_size(last.params, NetParams())),
                                  int(last.params.get("seed", 0))).to(device)  # fmt: skip
            else:
                model, _ = load_net(art, device)
            bar = ctx.progress.start(f"{name}: games vs 3 MCTS-MAXN", games)
            # every network plays the same seeded games (seats, openings, opponents' streams)
            result = match(t, Evaluator(model, device), games, p.parallel, search, protocol,
                           p.seed, bar.advance)  # fmt: skip
            bar.close()
            saved = {"seat": result.seat, "scores": result.scores, "outcome": result.outcome,
                     "share": result.win_share(), "boards": result.boards,
                     "policy": result.policy}  # fmt: skip
            ctx.writer.save_checkpoint(f"eval-{i}", saved)
        fields = ("seat", "scores", "share", "boards", "policy")
        ctx.writer.write_arrays({f"{key}_{i}": np.asarray(saved[key]) for key in fields})
        steps = 0 if art is None else int(np.asarray(art["steps_total"][...]).ravel()[0])
        shares = np.asarray(saved["share"])
        rows.append({"net": name, "steps": steps, "games": len(shares),
                     **win_rate_fields(float(shares.sum()), len(shares))})  # fmt: skip
        ctx.log(f"blokus-eval: {name}: {win_rate_text(rows[-1])}")
    all_steps = np.array([r["steps"] for r in rows], np.int64)
    ctx.writer.write_arrays({"steps": all_steps, **_rate_arrays(rows)})
    summary = {"table": rows, "win_definition": WIN_DEFINITION, "zero_sims": p.zero_sims,
               "mcts_sims": p.mcts_sims, "policy_stats": list(POLICY_STATS)}  # fmt: skip
    if p.control:
        summary["versus_control"] = versus_control(rows[-1], rows[0])
    return summary


def versus_control(trained: dict[str, Any], control: dict[str, Any]) -> dict[str, Any]:
    """The last network against the untrained control on the same games: whether their 95%
    intervals separate, as a sentence with the numbers."""
    above = trained["win_rate_low"] > control["win_rate_high"]
    below = trained["win_rate_high"] < control["win_rate_low"]
    verdict = ("the trained network's interval lies above the control's: the learning wins"
               if above else "the trained network's interval lies below the control's"
               if below else "the intervals overlap: undecided")  # fmt: skip
    text = (f"{trained['net']}: {win_rate_text(trained)}; untrained: {win_rate_text(control)}; "
            f"{verdict}")  # fmt: skip
    return {"separated": bool(above or below), "above": bool(above), "statement": text}


# ---------------------------------------------------------------------------------------------
# blokus-curve


class CurveParams(StageParams):
    """No parameters: the curve gathers its inputs' results."""


def _curve_footprint(params: CurveParams, upstream: Upstream) -> Footprint:
    """A few numbers per network of the inputs' result tables: nothing large."""
    rows = max(len(upstream), 1) * 16  # evaluated networks, a generous count per input
    return Footprint(
        peak={"rows": rows * 4096},  # the rows' dicts, a few KB each
        stored={"curve": nbytes((rows, 7), 8)},  # steps, rate and bar, interval, games
        working=32 * MB,  # no numba nor torch: reading metadata, writing small arrays
        work=len(upstream),
    )


@stage("blokus-curve", 2, CurveParams, inputs={"evals": "blokus-eval"}, many={"evals"},
       footprint=_curve_footprint)  # fmt: skip
def run_curve(ctx: StageContext[CurveParams]) -> dict[str, Any]:
    """BlokusZero's learning curve: win rate by training step from blokus-eval runs.

    The learning curve: every `evals.N` input's networks, ordered by training steps.
    """
    names = numbered(ctx.inputs, "evals")
    if not names:
        raise StageError("blokus-curve: needs at least one evals.N input (blokus-eval)")
    rows = [_with_wilson(row) for n in names for row in ctx.inputs[n].meta["summary"]["table"]]
    rows.sort(key=lambda r: r["steps"])
    ctx.writer.write_arrays({
        "steps": np.array([r["steps"] for r in rows], np.int64),
        **_rate_arrays(rows),
        "games": np.array([r["games"] for r in rows], np.int64),
    })  # fmt: skip
    return {"table": rows, "win_definition": WIN_DEFINITION,
            "evals": [ctx.inputs[n].key for n in names]}  # fmt: skip


def _with_wilson(row: dict[str, Any]) -> dict[str, Any]:
    """A blokus-eval result row with its Wilson interval; rows of evals before version 4 held
    a normal-approximation half-width instead, recomputed here from the rate and the games."""
    if "win_rate_low" in row:
        return row
    old = {k: v for k, v in row.items() if k not in ("half_width", "clear_of_par")}
    return {**old, **win_rate_fields(row["win_rate"] * row["games"], row["games"])}
