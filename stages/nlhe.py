"""No-limit hold'em CNN players: hand histories, training one generation, and the league.

- `nlhe-histories` plays every pairing of a roster (built-in players by name, CNN generations as
  `cnn.N` inputs) for equal numbers of hands, each deal twice with seats swapped, and stores the
  compact action records (`engines.nlhe.game`); planes are encoded on the fly when training.
- `nlhe-train` fits one network (`engines.nlhe.net`) to every recorded action: the target is
  the acting player's chips won in that hand divided by the buy-in. Checkpoints each epoch.
- `nlhe-league` plays a duplicate round robin and writes big blinds per hand with 95% intervals
  (ordering players only where head-to-head intervals separate them, `stages.reporting`),
  plus each player's action mix and raise sizes (the paper's Figures 2 and 3).
"""

from __future__ import annotations

import math
import os
import time
from functools import partial
from itertools import combinations, combinations_with_replacement
from typing import Any, ClassVar

import numpy as np
import torch
from numba import njit
from pydantic import Field, field_validator

from gameforge.artifacts import Artifact, ArtifactStore
from gameforge.engines.common.torch_arrays import (
    cpu_runs_bfloat16,
    pick_device,
    restore_training_state,
    training_state,
    weights_to_arrays,
)
from gameforge.engines.nlhe import game as nl_game
from gameforge.engines.nlhe.aivat import KNOWN_KINDS, hands_of, policy_of
from gameforge.engines.nlhe.encoding import N_PLANES, SIZE, encode_samples
from gameforge.engines.nlhe.game import (
    KINDS,
    RANDOM,
    STATE_WIDTH,
    Deals,
    HandRecords,
    Player,
    Rules,
    play,
    rules_of,
)
from gameforge.engines.nlhe.net import (
    MAX_CANDIDATES,
    MEMO_ENTRY_BYTES,
    MEMO_LIMIT,
    MEMORY_FIELDS,
    N_PATTERNS,
    CnnPlayer,
    NetConfig,
    Placement,
    PokerCNN,
    Precision,
    evaluate_loss,
    make_optimiser,
    model_from_arrays,
    train_epoch,
)
from gameforge.engines.poker.aivat import NoLimitBetting, aivat
from gameforge.engines.poker.aivat_values import Equity, FittedValues
from gameforge.engines.poker.shipped_games import load_game
from gameforge.stages.base import (
    Nondeterminism,
    Seed,
    StageContext,
    StageError,
    StageParams,
    numbered,
)
from gameforge.stages.poker.params import GameParams, same_game
from gameforge.stages.registry import stage
from gameforge.stages.reporting import aivat_summary, head_to_head, record_aivat
from gameforge.stages.resources import NUMBA_WORKING, TORCH_WORKING, Footprint, nbytes

NLHE_GAME = "holdem.nolimit.2p.50bb"
RECORD_FIELDS = ("cards", "seat_player", "counts", "actions", "payoff")
WEIGHT_PREFIX = "weights."


class NlheParams(GameParams):
    """A heads-up no-limit game (default: the paper's 50 big blinds)."""

    game: str = Field(
        default=NLHE_GAME,
        description="The heads-up no-limit ACPC game: a shipped game's name or a `.game` path.",
    )

    @field_validator("game")
    @classmethod
    def _nolimit(cls, value: str) -> str:
        """Refuse a game the no-limit engine cannot play when the parameters are read."""
        rules_of(load_game(value))  # NoLimitError (a ValueError) with the reason
        return value

    def rules(self) -> Rules:
        """The game packed for the engine (a limit or multi-player game is refused)."""
        try:
            return rules_of(self.game_def())
        except ValueError as exc:
            raise StageError(str(exc)) from None


class RosterParams(NlheParams):
    """Built-in players by name (CNNs come as `cnn.N` inputs) and the torch device."""

    players: list[str] = Field(
        default_factory=lambda: ["heuristic"],
        description=f"Built-in players by name ({', '.join(KINDS)}); CNNs come as `cnn.N` inputs.",
    )
    device: str = Field(
        default="auto", description="Torch device of the CNNs (auto: cuda when available)."
    )
    # Like the device, it moves scores in their last bits only.
    compiled: bool = Field(
        default=False,
        description="Score CNNs through torch.compile: 1.2-1.4x the decisions per second on a"
        " CPU, 10-20 s of compiling per network.",
    )
    precision: Precision = Field(
        default="float32",
        description="CNN layers after the first in float32, or bfloat16 (about 2x where the CPU"
        " has AVX512_BF16; may flip near-ties), or bfloat16-checked (near-best rescored in"
        " float32).",
    )
    execution_only: ClassVar[frozenset[str]] = frozenset({"device", "compiled"})
    new_at_default: ClassVar[dict[str, tuple[str, ...]]] = {"precision": ("precision",)}

    @field_validator("players", mode="before")
    @classmethod
    def _known(cls, v: list[str] | str) -> list[str]:
        return _check_builtins(v)


def _check_builtins(names: list[str] | str) -> list[str]:
    if isinstance(names, str):  # `--set players=heuristic-cards`
        names = [n for n in names.split(",") if n]
    bad = [n for n in names if n not in KINDS]
    if bad:
        raise ValueError(f"unknown player {bad[0]!r} (built-in players: {', '.join(KINDS)})")
    return names


# ---------------------------------------------------------------------------------------------
# Players from the store.


def generation(store: ArtifactStore, train: Artifact) -> int:
    """1 + the highest generation among the CNNs whose hands trained this one."""
    histories = store.open(train.inputs["histories"])
    ups = [store.open(histories.inputs[n]) for n in numbered(histories.inputs, "cnn")]
    return 1 + max((generation(store, u) for u in ups), default=0)


def cnn_label(store: ArtifactStore, train: Artifact) -> str:
    """`CNN-<g>g` as in the paper's table."""
    return f"CNN-{generation(store, train)}g"


def load_cnn(
    train: Artifact, device: str = "cpu", compiled: bool = False, precision: Precision = "float32"
) -> CnnPlayer:
    """The CNN player of an `nlhe-train` artifact (scoring through torch.compile if asked)."""
    p = train.params
    config = NetConfig(tuple(p["filters"]), p["kernel"], p["dense"], p["dropout"])
    arrays = {
        name[len(WEIGHT_PREFIX) :]: np.asarray(train[name][:])
        for name in train.array_names()
        if name.startswith(WEIGHT_PREFIX)
    }
    model = model_from_arrays(arrays, config, device)
    return CnnPlayer(
        model, p["canonical_suits"], device=device, compiled=compiled, precision=precision
    )


def roster(
    ctx: StageContext[StageParams],
    builtins: list[str],
    device: str = "cpu",
    compiled: bool = False,
    precision: Precision = "float32",
) -> tuple[list[str], list[Player], list[str]]:
    """(labels, players, artifact keys or '') of the built-in names then the `cnn.N` inputs."""
    labels: list[str] = list(builtins)
    players: list[Player] = [KINDS[b] for b in builtins]
    keys = [""] * len(builtins)
    cnns = ctx.numbered_inputs("cnn")
    if cnns and precision != "float32" and device == "cpu" and not cpu_runs_bfloat16():
        ctx.log(
            f"precision={precision}: this CPU has no bfloat16 arithmetic (AVX-512 or newer), so"
            " torch emulates it, far slower than float32; set precision=float32 here"
        )
    for art in cnns:
        labels.append(cnn_label(art.store, art))
        players.append(load_cnn(art, device, compiled, precision))
        keys.append(art.key)
    if len(set(labels)) < len(labels):
        labels = [f"{label}#{i}" for i, label in enumerate(labels)]
    return labels, players, keys


# ---------------------------------------------------------------------------------------------
# Resource estimates (stages/resources.py): hand records, tables in flight, the networks.

# Action records per hand: the built-in pairings make 3.7 (random) to 6.9 (card-aware) a hand.
ACTIONS_PER_HAND = 8
SCORE_CHUNK = 8192  # candidates a CnnPlayer scores at once (its max_candidates)
PLANE = SIZE * SIZE * 4  # one float32 input plane or feature map of the network


def _hand_bytes(rules: Rules) -> int:
    """One hand of `HandRecords`: int8 cards and seats, int64 action count and payoff, and
    `ACTIONS_PER_HAND` int32 action records of 4 fields."""
    return rules.n_cards + 2 + 8 + 8 + ACTIONS_PER_HAND * 4 * 4


def _tables_bytes(rules: Rules, deals: int, threads: int) -> int:
    """The tables `play` keeps in flight: per thread one batch of 2 * batch_deals tables (int64
    state, cards, RNG, seats, kinds and payoff; the int32 action history and its records
    mask)."""
    tables = 2 * min(bar_batch(deals), max(deals, 1))
    per_table = (STATE_WIDTH + rules.n_cards + 6) * 8 + rules.max_actions * (4 * 4 + 1)
    return threads * tables * per_table


def _play_threads(deals: int) -> int:
    """Threads `play` runs a built-in pairing on (one per batch, at most one per core)."""
    return max(1, min(os.cpu_count() or 1, math.ceil(deals / bar_batch(deals))))


def _net_config(train: dict[str, Any]) -> NetConfig:
    """The network of an `nlhe-train` artifact's recorded parameters (defaults if unknown)."""
    fields = TrainParams.model_fields
    try:
        p = TrainParams(**{k: v for k, v in train.items() if k in fields})
    except ValueError:
        p = TrainParams()
    return NetConfig(p.filters, p.kernel, p.dense, p.dropout)


def _net_parameters(config: NetConfig) -> int:
    """Weights and biases of a `PokerCNN`: four convolutions, the dense layer and the output."""
    f1, f2 = config.filters
    side = SIZE // 2 // 2
    convs = (N_PLANES * f1 + f1 * f1 + f1 * f2 + f2 * f2) * config.kernel**2 + 2 * (f1 + f2)
    return convs + (f2 * side * side + 1) * config.dense + config.dense + 1


def _multiply_adds(config: NetConfig) -> int:
    """A `PokerCNN`'s multiply-adds for one position: each convolution weight once per cell of
    its map, each dense weight once."""
    f1, f2 = config.filters
    half, quarter = SIZE // 2, SIZE // 4
    convs = (N_PLANES * f1 + f1 * f1) * SIZE**2 + (f1 * f2 + f2 * f2) * half**2
    return convs * config.kernel**2 + f2 * quarter**2 * config.dense + config.dense


def _scoring_cost(configs: list[NetConfig]) -> int:
    """What scoring a decision costs in the time model: the largest network's multiply-adds."""
    return max((_multiply_adds(c) for c in configs), default=1)


def _scoring_maps(config: NetConfig) -> int:
    """float32 values of every feature map one candidate passes through when scored: the
    gathered first-layer response, ReLU, second convolution, ReLU, pool, the two convolutions
    of the second stage with their ReLUs, pool, dense layer and ReLU, output and tanh."""
    f1, f2 = config.filters
    half, quarter = SIZE // 2, SIZE // 4
    return (
        4 * f1 * SIZE**2 + f1 * half**2 + 4 * f2 * half**2 + f2 * quarter**2 + 2 * config.dense + 2
    )


def _cnn_players_bytes(configs: list[NetConfig], tables: int, hands: int) -> dict[str, int]:
    """CNN players: every network's float32 weights and candidate-pattern responses, one
    `CnnPlayer.score` on `tables` waiting tables (their state planes and first-convolution
    responses, the candidate lists, the feature maps of one chunk of candidates), and the
    preflop decisions each remembers in a match of `hands` hands (at most its cap)."""
    if not configs:
        return {}
    f1 = max(c.filters[0] for c in configs)
    weights = sum(4 * _net_parameters(c) + N_PATTERNS * c.filters[0] * PLANE for c in configs)
    candidates = tables * MAX_CANDIDATES
    # A chunk holds three first-layer maps at once; the rest are freed as it goes, but over
    # many batches the allocator keeps those under its mmap threshold (32 MB), and the peak
    # grows toward every map of the chunk (10 batches of the tiny network: 350 -> 680 MB).
    maps = max(_scoring_maps(c) for c in configs)
    return {
        "cnn weights": weights,
        "cnn state planes": tables * (N_PLANES + f1) * PLANE,
        "cnn candidates": nbytes(candidates, 6 * 8),  # row, kind, raise_to, added, pattern, score
        "cnn chunk activations": nbytes((min(SCORE_CHUNK, candidates), maps), 4),
        "cnn remembered decisions": len(configs)
        * min(ACTIONS_PER_HAND * hands, MEMO_LIMIT)
        * MEMO_ENTRY_BYTES,
    }


def _cnn_configs(upstream: dict[str, dict]) -> list[NetConfig]:
    """The networks of the `cnn.N` inputs."""
    return [
        _net_config(params) for name, params in sorted(upstream.items()) if name.startswith("cnn.")
    ]


# ---------------------------------------------------------------------------------------------
# nlhe-histories


class HistoriesParams(RosterParams):
    """Who plays (built-ins by name; CNNs as inputs), how many hands in all, and the seed."""

    players: list[str] = Field(
        default_factory=lambda: ["heuristic"],
        description=f"Built-in players by name ({', '.join(KINDS)}); CNNs come as `cnn.N` inputs.",
    )
    hands: int = Field(
        default=200_000,
        ge=2,
        description="Hands in all, shared equally by the pairings, each deal played twice with"
        " seats swapped.",
    )
    seed: Seed = Field(default=0, description="Seed of the deals.")
    self_play: bool = Field(default=True, description="Also pair every player with itself.")


def _histories_footprint(params: HistoriesParams, upstream: dict[str, dict]) -> Footprint:
    """Every pairing's hand records, twice (parts, concatenation); the tables and networks."""
    rules = params.rules()
    configs = _cnn_configs(upstream)
    n = len(params.players) + len(configs)
    pairs = n * (n + 1) // 2 if params.self_play else n * (n - 1) // 2
    deals = params.hands // (2 * max(pairs, 1))
    hands = 2 * deals * max(pairs, 1)  # each deal twice, seats swapped
    actions = ACTIONS_PER_HAND * hands
    builtin_pairs = len(params.players) > 0 and (params.self_play or len(params.players) > 1)
    threads = _play_threads(deals) if builtin_pairs else 1
    stored = {
        "cards": nbytes((hands, rules.n_cards), 1),
        "seat_player": nbytes((hands, 2), 2),
        "hand_start": nbytes(hands + 1, 8),
        "actions": nbytes((actions, 4), 4),
        "payoff": nbytes(hands, 4),
        "pairing": nbytes(hands, 2),
    }
    peak = {
        "records": 2 * hands * _hand_bytes(rules),  # per-pairing parts and their concatenation
        "tables": _tables_bytes(rules, deals, threads),
        # writing: hand starts, pairing ids (list and array), the int32 copy of the actions
        "write copies": nbytes(hands, 8 + 2 + 2) + stored["actions"],
        **_cnn_players_bytes(configs, 2 * min(bar_batch(deals), max(deals, 1)), 2 * deals),
    }
    kind = "cnn" if configs else ""  # networks scoring decisions: their own time model
    return Footprint(peak, stored, TORCH_WORKING if configs else NUMBA_WORKING,
                     work=hands * _scoring_cost(configs), work_kind=kind)  # fmt: skip


@stage("nlhe-histories", 2, HistoriesParams, inputs={"cnn": "nlhe-train"}, optional={"cnn"},
       many={"cnn"}, check_inputs=same_game, labels=("hands", "seed"),
       footprint=_histories_footprint)  # fmt: skip
def run_histories(ctx: StageContext[HistoriesParams]) -> dict[str, Any]:
    """No-limit hand histories between built-in and CNN players (action records).

    Play every pairing for an equal share of the hands; write the records.
    """
    params = ctx.params
    rules = params.rules()
    labels, players, _keys = roster(
        ctx, params.players, pick_device(params.device), params.compiled, params.precision
    )
    if not labels:
        raise StageError("nlhe-histories: needs at least one player")
    pairs = list(
        combinations_with_replacement(range(len(labels)), 2)
        if params.self_play
        else combinations(range(len(labels)), 2)
    )
    if not pairs:
        raise StageError("nlhe-histories: one player and self_play=false leave no pairing")
    deals = params.hands // (2 * len(pairs))
    if deals < 1:
        raise StageError(
            f"nlhe-histories: {params.hands} hands cannot cover {len(pairs)} pairings twice"
        )
    parts: list[HandRecords] = []
    pair_of_hand = []
    bar = ctx.progress.start("hands", deals * 2 * len(pairs))
    stats = {}
    for idx, (i, j) in enumerate(pairs):
        rec = _saved_records(ctx, f"pair{idx}")
        if rec is not None:
            bar.advance(len(rec.payoff))
        else:
            pair_deals = Deals(deals, params.seed, idx * deals)
            rec = _play_pairing(ctx, f"pair{idx}", rules, players, (i, j), pair_deals, bar)
            rec.seat_player = np.where(rec.seat_player == 0, i, j).astype(np.int8)
            _save_records(ctx, f"pair{idx}", rec)
            _log_scoring(ctx, "nlhe-histories", labels, players, (i, j))
        parts.append(rec)
        pair_of_hand.append(np.full(len(rec.payoff), idx, np.int16))
        first_player_chips = np.where(rec.seat_player[:, 0] == i, rec.payoff, -rec.payoff)
        mean, ci = duplicate_mean(first_player_chips, rules.big_blind)
        stats[f"{labels[i]} vs {labels[j]}"] = [round(mean, 3), round(ci, 3)]
    bar.close()
    rec = HandRecords.concat(parts)
    hands = len(rec.payoff)
    starts = np.concatenate([[0], np.cumsum(rec.counts)]).astype(np.int64)
    w = ctx.writer
    _write(w, "cards", rec.cards.astype(np.int8))
    _write(w, "seat_player", rec.seat_player.astype(np.int16))
    _write(w, "hand_start", starts)
    _write(w, "actions", rec.actions.astype(np.int32))
    _write(w, "payoff", rec.payoff.astype(np.int32))
    _write(w, "pairing", np.concatenate(pair_of_hand))
    mix = np.bincount(rec.actions[:, 2], minlength=3) / max(len(rec.actions), 1)
    return {
        "players": labels,
        "pairings": [[labels[i], labels[j]] for i, j in pairs],
        "hands": hands,
        "actions": int(len(rec.actions)),
        "actions_per_hand": round(len(rec.actions) / hands, 3),
        "fold_call_raise": [round(float(m), 4) for m in mix],
        "bb_per_hand_first_vs_second": stats,
    }


def _play_pairing(
    ctx: StageContext[StageParams],
    name: str,
    rules: Rules,
    players: list[Player],
    seats: tuple[int, int],
    deals: Deals,
    bar: Any,
) -> HandRecords:
    """One pairing's duplicate deals, in blocks of `bar_batch` deals.

    CNNs start the pairing remembering no decision, so its hands are the same whether or not a
    resumed run played the pairings before it. Where a CNN plays, every block's records and the
    CNNs' memories after it are checkpointed (`name`.block<b>, `name`.memory<b>): a pairing can
    take hours at the paper's scale, and a killed one resumes after its last finished block
    with exactly the memories an uninterrupted run would have there.
    """
    pair = (players[seats[0]], players[seats[1]])
    cnns: dict[int, CnnPlayer] = {}
    for k in sorted(set(seats)):
        player = players[k]
        if isinstance(player, CnnPlayer):
            cnns[k] = player
    for cnn in cnns.values():
        cnn.forget()
    block = bar_batch(deals.count)
    if not cnns:  # built-in players: seconds, on every core
        return play(
            rules, pair, deals, n_threads=os.cpu_count() or 1, on_hands=bar.advance,
            batch_deals=block,
        )  # fmt: skip
    starts = range(0, deals.count, block)
    done = _finished_blocks(ctx, name, len(starts))
    parts = []
    for b, start in enumerate(starts):
        if b < done:
            saved = _saved_records(ctx, f"{name}.block{b}")
            assert saved is not None  # _finished_blocks found it
            parts.append(saved)
            bar.advance(len(saved.payoff))
            continue
        if b == done and b > 0:
            memories = ctx.writer.load_checkpoint(f"{name}.memory{b - 1}")
            assert memories is not None
            for k, cnn in cnns.items():
                cnn.recall({f: memories[f"{k}.{f}"] for f in MEMORY_FIELDS})
        size = min(block, deals.count - start)
        rec = play(
            rules, pair, Deals(size, deals.seed, deals.first + start), on_hands=bar.advance,
            batch_deals=size,
        )  # fmt: skip
        _save_records(ctx, f"{name}.block{b}", rec)
        memories = {
            f"{k}.{f}": value for k, cnn in cnns.items() for f, value in cnn.memory().items()
        }
        ctx.writer.save_checkpoint(f"{name}.memory{b}", memories)
        if b > 0:
            ctx.writer.remove_checkpoint(f"{name}.memory{b - 1}")
        parts.append(rec)
    return HandRecords.concat(parts)


def _save_records(ctx: StageContext[StageParams], name: str, rec: HandRecords) -> None:
    """Checkpoint hand records as `name`."""
    ctx.writer.save_checkpoint(name, {f: getattr(rec, f) for f in RECORD_FIELDS})


def _saved_records(ctx: StageContext[StageParams], name: str) -> HandRecords | None:
    """Hand records `_save_records` checkpointed, or None."""
    saved = ctx.writer.load_checkpoint(name)
    return None if saved is None else HandRecords(*(saved[f] for f in RECORD_FIELDS))


def _finished_blocks(ctx: StageContext[StageParams], name: str, n_blocks: int) -> int:
    """How many leading blocks of a pairing a killed run finished: their records and the
    memories after the last of them are checkpointed."""
    saved = ctx.writer.has_checkpoint
    for b in range(n_blocks - 1, -1, -1):
        if saved(f"{name}.memory{b}") and all(saved(f"{name}.block{c}") for c in range(b + 1)):
            return b + 1
    return 0


def _log_scoring(
    ctx: StageContext[StageParams],
    stage_name: str,
    labels: list[str],
    players: list[Player],
    seats: tuple[int, int],
) -> None:
    """How the CNNs of a pairing have scored so far: decisions, candidates, remembered ones."""
    for k in sorted(set(seats)):
        p = players[k]
        if isinstance(p, CnnPlayer) and p.decisions:
            ctx.log(
                f"{stage_name}: {labels[k]} so far: {p.decisions:,} decisions "
                f"({p.remembered / p.decisions:.1%} remembered), {p.scored:,} candidates scored"
            )


def _write(writer: Any, name: str, data: np.ndarray) -> None:
    chunks = (min(max(len(data), 1), 1 << 20),) + data.shape[1:]
    writer.array(name, data.shape, data.dtype, chunks=chunks)[:] = data


def duplicate_mean(chips: np.ndarray, big_blind: int) -> tuple[float, float]:
    """Mean big blinds per hand and its 95% half-width from duplicate pairs (rows 2d, 2d+1)."""
    pairs = (chips[0::2] + chips[1::2]) / (2.0 * big_blind)
    n = len(pairs)
    if n < 2:
        return float(pairs.mean()) if n else 0.0, float("inf")
    return float(pairs.mean()), float(1.96 * pairs.std(ddof=1) / np.sqrt(n))


# ---------------------------------------------------------------------------------------------
# nlhe-train


class TrainParams(StageParams):
    """Network shape, epochs and batches; the game comes from the histories."""

    epochs: int = Field(default=3, ge=1, description="Passes over the training samples.")
    batch_size: int = Field(default=128, ge=1, description="Samples per SGD batch.")
    seed: Seed = Field(
        default=0, description="Seed of the validation split, the sample draw and the weights."
    )
    filters: tuple[int, int] = Field(
        default=(32, 64),
        description="Filters of the first and of the second pair of convolutions.",
    )
    kernel: int = Field(
        default=5, ge=1, description="Side of the square convolution kernels (odd)."
    )
    dense: int = Field(default=1024, ge=1, description="Units of the dense layer.")
    dropout: float = Field(
        default=0.5, ge=0.0, lt=1.0, description="Dropout rate after the dense layer."
    )
    canonical_suits: bool = Field(
        default=False,
        description="Relabel suits in order of first appearance, so isomorphic hands encode"
        " alike (the paper's first future-work item).",
    )
    valid_fraction: float = Field(
        default=0.05,
        ge=0.0,
        lt=1.0,
        description="Share of the hands held out for validation.",
    )
    max_samples: int = Field(
        default=0,
        ge=0,
        description="Training actions drawn at most (0: every recorded action).",
    )
    device: str = Field(
        default="auto", description="Torch device of the training (auto: cuda when available)."
    )
    execution_only: ClassVar[frozenset[str]] = frozenset({"device"})

    @field_validator("kernel")
    @classmethod
    def _odd(cls, v: int) -> int:
        if v % 2 == 0:
            raise ValueError("kernel must be odd (same-size padding)")
        return v


class Samples:
    """Every recorded action of a histories artifact, encoded on demand."""

    def __init__(self, histories: Artifact, canonical: bool):
        self.rules = NlheParams(game=histories.params["game"]).rules()
        self.cards = np.asarray(histories["cards"][:]).astype(np.int64)
        self.starts = np.asarray(histories["hand_start"][:])
        self.actions = np.asarray(histories["actions"][:])
        payoff = np.asarray(histories["payoff"][:]).astype(np.float64)
        counts = np.diff(self.starts)
        self.hand = np.repeat(np.arange(len(counts)), counts)
        seat = self.actions[:, 1]
        chips = np.where(seat == 0, payoff[self.hand], -payoff[self.hand])
        self.target = np.clip(chips / self.rules.stack[seat], -1.0, 1.0).astype(np.float32)
        self.canonical = canonical

    def __len__(self) -> int:
        return len(self.actions)

    def batch(self, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Planes and targets of sample ids."""
        x = np.empty((len(ids), N_PLANES, SIZE, SIZE), np.float32)
        encode_samples(
            x,
            np.asarray(ids, np.int64),
            self.hand,
            self.starts,
            self.cards,
            self.actions,
            self.rules.encoding(self.canonical),
        )
        return x, self.target[ids]


def _train_footprint(params: TrainParams, upstream: dict[str, dict]) -> Footprint:
    """Decoded histories, sample ids, batch planes and activations; weights, optimiser state."""
    histories = upstream.get("histories") or {}
    rules = NlheParams(game=histories.get("game", NLHE_GAME)).rules()
    hands = int(histories.get("hands", HistoriesParams.model_fields["hands"].default))
    actions = ACTIONS_PER_HAND * hands
    valid = int(actions * params.valid_fraction)
    train = min(params.max_samples or actions, actions - valid)
    config = NetConfig(params.filters, params.kernel, params.dense, params.dropout)
    f1, f2 = config.filters
    half, quarter = SIZE // 2, SIZE // 4
    # float32 values per sample that autograd keeps for the backward pass: the ReLU outputs
    # of the four convolutions, the pools' outputs and int64 indices (3 floats' worth), and
    # the dense layer's ReLU output, dropout output and mask
    saved = (2 * f1 * SIZE**2 + 3 * f1 * half**2 + 2 * f2 * half**2 + 3 * f2 * quarter**2
             + 3 * config.dense)  # fmt: skip
    batch_planes = max(2 * params.batch_size, min(4 * params.batch_size, valid))
    parameters = 4 * _net_parameters(config)
    peak = {
        # Samples: int64 cards and hand starts per hand; int32 actions, int64 hand and float32
        # target per action
        "samples": nbytes((hands, rules.n_cards + 1), 8) + nbytes(actions, 4 * 4 + 8 + 4),
        # the validation flags per action, validation ids, training ids and their shuffled order
        "sample ids": actions + nbytes(valid, 8) + nbytes(train, 2 * 8),
        # decoding's temporaries (payoffs per action, chips, stacks: 3 per action) are freed
        # before torch takes its working memory: they count only beyond it
        "decoding": max(0, nbytes(actions, 3 * 8) - TORCH_WORKING),
        # planes of a training batch (numpy and channels-last copies) or of a validation batch
        "batch planes": nbytes((batch_planes, N_PLANES), PLANE),
        "activations": nbytes((2, params.batch_size, saved), 4),  # saved maps, their gradients
        # weights, gradients, Adadelta's two running averages, the checkpoint's copies of all
        "weights+adadelta": 7 * parameters,
    }
    stored = {"weights": parameters, "curves": nbytes(3 * params.epochs, 8)}
    # the multiply-adds of every sample, forward and back, every epoch
    return Footprint(
        peak, stored, TORCH_WORKING, work=params.epochs * train * _multiply_adds(config)
    )


@stage(
    "nlhe-train",
    1,
    TrainParams,
    inputs={"histories": "nlhe-histories"},
    labels=("epochs", "kernel"),
    nondeterminism=Nondeterminism(
        "samples_per_second is the measured training speed", arrays=("samples_per_second",)
    ),
    footprint=_train_footprint,
)
def run_train(ctx: StageContext[TrainParams]) -> dict[str, Any]:
    """Train one CNN generation on hand histories (MSE, Adadelta).

    Fit one generation; checkpoint after every epoch.
    """
    params = ctx.params
    device = pick_device(params.device)
    samples = Samples(ctx.inputs["histories"], params.canonical_suits)
    rng = np.random.default_rng(params.seed)
    n_hands = len(samples.starts) - 1
    valid_hand = rng.random(n_hands) < params.valid_fraction
    is_valid = valid_hand[samples.hand]
    train_ids = np.flatnonzero(~is_valid)
    valid_ids = np.flatnonzero(is_valid)
    if params.max_samples and len(train_ids) > params.max_samples:
        train_ids = np.sort(rng.choice(train_ids, params.max_samples, replace=False))
    if len(train_ids) == 0:
        raise StageError("nlhe-train: no training samples")
    torch.manual_seed(params.seed)
    config = NetConfig(params.filters, params.kernel, params.dense, params.dropout)
    model = PokerCNN(config).to(device)
    optimiser = make_optimiser(model)
    curves: dict[str, list[float]] = {"train_loss": [], "valid_loss": [], "samples_per_second": []}
    start_epoch = 0
    saved = ctx.writer.load_checkpoint("train")
    if saved is not None:
        extra = restore_training_state(model, optimiser, saved)
        start_epoch = int(extra["epoch"])
        for name in curves:
            curves[name] = list(extra[name])
        ctx.log(f"nlhe-train: resuming after epoch {start_epoch}")
    ctx.log(
        f"nlhe-train: {len(train_ids):,} training and {len(valid_ids):,} validation samples "
        f"on {device}"
    )
    for epoch in range(start_epoch, params.epochs):
        bar = ctx.progress.start(f"epoch {epoch + 1}/{params.epochs}", len(train_ids))
        running = [0.0, 0]

        def on_batch(n: int, loss: float, bar: Any = bar, running: list = running) -> None:
            running[0] += loss * n
            running[1] += n
            bar.advance(n)
            bar.note(f"loss {running[0] / running[1]:.4f}")

        t0 = time.perf_counter()
        loss = train_epoch(
            model,
            optimiser,
            samples.batch,
            train_ids,
            params.batch_size,
            params.seed * 1000 + epoch,
            Placement(device),
            on_batch,
        )
        seconds = time.perf_counter() - t0
        valid = evaluate_loss(model, samples.batch, valid_ids, 4 * params.batch_size, device)
        bar.close()
        curves["train_loss"].append(loss)
        curves["valid_loss"].append(valid)
        curves["samples_per_second"].append(len(train_ids) / seconds)
        ctx.log(
            f"nlhe-train: epoch {epoch + 1}: train loss {loss:.5f}, validation {valid:.5f}, "
            f"{len(train_ids) / seconds:,.0f} samples/s"
        )
        extra = {k: np.array(v, np.float64) for k, v in curves.items()}
        extra["epoch"] = np.array(epoch + 1)
        ctx.writer.save_checkpoint("train", training_state(model, optimiser, extra))
    weights = weights_to_arrays(model)
    ctx.writer.write_arrays({WEIGHT_PREFIX + name: value for name, value in weights.items()})
    ctx.writer.write_arrays({name: np.array(values, np.float64) for name, values in curves.items()})
    return {
        "train_samples": int(len(train_ids)),
        "valid_samples": int(len(valid_ids)),
        "train_loss": round(curves["train_loss"][-1], 6),
        "valid_loss": round(curves["valid_loss"][-1], 6),
        "samples_per_second": round(float(np.median(curves["samples_per_second"])), 1),
        "parameters": int(sum(p.numel() for p in model.parameters())),
        "device": device,
    }


# ---------------------------------------------------------------------------------------------
# nlhe-league

RAISE_BINS = ("<=1/2 pot", "<=1 pot", "<=2 pots", ">2 pots", "all-in")


@njit(cache=True)
def action_profile(
    seat_player: np.ndarray,
    starts: np.ndarray,
    actions: np.ndarray,
    blind: np.ndarray,
    stack: np.ndarray,
    n_players: int,
) -> tuple[np.ndarray, np.ndarray]:
    """Per player: counts of fold/call/raise, and of raises by size relative to the pot."""
    mix = np.zeros((n_players, 3), np.int64)
    sizes = np.zeros((n_players, 5), np.int64)
    for h in range(starts.shape[0] - 1):
        spent = blind.copy()
        for j in range(starts[h], starts[h + 1]):
            seat = actions[j, 1]
            who = seat_player[h, seat]
            kind = actions[j, 2]
            mix[who, kind] += 1
            after = actions[j, 3]
            if kind == 2:
                pot = spent[0] + spent[1] + (max(spent[0], spent[1]) - spent[seat])
                extra = after - max(spent[0], spent[1])
                if after >= stack[seat]:
                    b = 4
                elif extra <= 0.5 * pot:
                    b = 0
                elif extra <= pot:
                    b = 1
                elif extra <= 2 * pot:
                    b = 2
                else:
                    b = 3
                sizes[who, b] += 1
            spent[seat] = after
    return mix, sizes


class LeagueParams(RosterParams):
    """Built-in players by name (CNNs as inputs), hands per pairing, seed."""

    players: list[str] = Field(
        default_factory=lambda: ["random", "heuristic"],
        description=f"Built-in players by name ({', '.join(KINDS)}); CNNs come as `cnn.N` inputs.",
    )
    hands: int = Field(
        default=100_000,
        ge=2,
        description="Hands per pairing, each deal played twice with seats swapped.",
    )
    seed: Seed = Field(default=1, description="Seed of the deals every pairing plays.")
    aivat_hands: int = Field(
        default=1_000,
        ge=0,
        description="Hands of each pairing (its first duplicate deals) scored again by AIVAT for"
        " a player whose strategy is known exactly (random or heuristic; the random one where"
        " both are), beside the plain result on the same hands; about 10-20 ms a hand. 0: none.",
    )


AIVAT_FIT_DEALS = 1_000  # self-play deals the AIVAT baseline of a known player is fitted on
AIVAT_FIELDS = ("mean", "half", "plain_mean", "plain_half", "hands")


def known_side(players: list[Player], pair: tuple[int, int]) -> int | None:
    """The player of a pairing whose strategy AIVAT knows (a built-in random or heuristic
    player; the random one first: its own draws of raise sizes are most of the luck AIVAT
    removes, 1.7x narrower than the duplicate interval against the heuristic, 1.2x the other
    way round), or None."""
    known = [k for k in pair if isinstance(players[k], int) and players[k] in KNOWN_KINDS]
    known.sort(key=lambda k: (players[k] != RANDOM, k))
    return known[0] if known else None


def aivat_pairing(
    rules: Rules,
    players: list[Player],
    pair: tuple[int, int],
    rec: HandRecords,
    hands: int,
    fitted: dict[int, tuple[Any, FittedValues]],
    seed: int,
) -> np.ndarray:
    """AIVAT_FIELDS of one pairing, row player's view, in BB/hand over duplicate pairs: AIVAT's
    mean and 95% half-width and the plain ones on the same first `hands` hands (NaN where no
    player's strategy is known). The known player's baseline is a + b * equity per state fitted
    on its self-play (`AIVAT_FIT_DEALS` deals of seed + 1), knowing nothing of the opponent."""
    k = known_side(players, pair)
    n = min(hands, len(rec.payoff)) // 2 * 2
    if k is None or n < 4:
        return np.full(len(AIVAT_FIELDS), np.nan)
    kind = int(players[k])  # type: ignore[arg-type]
    betting = NoLimitBetting(rules.game)
    if kind not in fitted:
        policy = policy_of(kind, betting, rules)
        values = FittedValues(betting, Equity(rules.game, samples=16, event_samples=2))
        selfplay = nl_game.play(rules, (kind, kind), Deals(AIVAT_FIT_DEALS, seed + 1))
        seats = np.where(selfplay.seat_player[:, 0] == 0, 0, 1)
        values.fit(hands_of(selfplay, rules.game.num_hole_cards), [int(s) for s in seats])
        fitted[kind] = (policy, values)
    policy, values = fitted[kind]
    # the flop means' random run-outs: a pairing's own stream, so a resumed league scores alike
    values.equity.rng = np.random.default_rng([seed, *pair])
    side = 0 if k == pair[0] else 1  # the known player's index within the pairing's records
    seats = np.where(rec.seat_player[:n, 0] == side, 0, 1)
    est = aivat(betting, hands_of(rec, rules.game.num_hole_cards, n), [int(s) for s in seats],
                policy, values)  # fmt: skip
    sign = 1.0 if side == 0 else -1.0
    mean, half = duplicate_mean(sign * est.corrected, rules.big_blind)
    plain_mean, plain_half = duplicate_mean(sign * est.plain, rules.big_blind)
    return np.array([mean, half, plain_mean, plain_half, n], dtype=np.float64)


def known_label(labels: list[str], players: list[Player], i: int, j: int) -> str:
    """The label of the player of pairing (i, j) whose strategy AIVAT knew ('' if none)."""
    k = known_side(players, (i, j))
    return labels[k] if k is not None else ""


def bar_batch(deals: int) -> int:
    """Deals per batch of `play` and per checkpointed block of a CNN pairing: small enough that
    the hand bar moves (and a pairing checkpoints) about 16 times per pairing, large enough
    (256) to keep the networks' batched inference efficient. Results do not depend on it."""
    return int(min(4096, max(256, deals // 16)))


def _league_footprint(params: LeagueParams, upstream: dict[str, dict]) -> Footprint:
    """A pairing's records (beside the previous one's), its profile; the tables and networks."""
    rules = params.rules()
    configs = _cnn_configs(upstream)
    n = len(params.players) + len(configs)
    deals = max(1, params.hands // 2)
    hands = 2 * deals  # per pairing
    threads = _play_threads(deals) if len(params.players) > 1 else 1
    peak = {
        # this pairing's parts and their concatenation, and the previous pairing's records
        "records": (2 if n <= 2 else 3) * hands * _hand_bytes(rules),
        "action profile": nbytes(hands, 2 * 8 + 8),  # int64 player per seat, hand starts
        "tables": _tables_bytes(rules, deals, threads),
        **_cnn_players_bytes(configs, 2 * min(bar_batch(deals), deals), hands),
    }
    stored = {"tables": nbytes((3 + len(AIVAT_FIELDS), n, n), 8), "profiles": nbytes((n, 3 + 5), 8)}
    kind = "cnn" if configs else ""  # networks scoring decisions: their own time model
    return Footprint(peak, stored, TORCH_WORKING if configs else NUMBA_WORKING,
                     work=hands * n * (n - 1) // 2 * _scoring_cost(configs),
                     work_kind=kind, parts={"aivat": aivat_work(params, n, hands)})  # fmt: skip


def aivat_work(params: LeagueParams, n: int, hands: int) -> float:
    """AIVAT's work in a league of `n` players and `hands` a pairing: hands scored (every
    pairing with a built-in player, whose strategy is known) and each known kind's self-play it
    is fitted on."""
    builtins = [KINDS[name] for name in params.players]
    known = {kind for kind in builtins if kind in KNOWN_KINDS}
    if not known or params.aivat_hands == 0:
        return 0.0
    unknown = n - sum(kind in KNOWN_KINDS for kind in builtins)
    pairings = n * (n - 1) // 2 - unknown * (unknown - 1) // 2
    scored = min(params.aivat_hands, hands) // 2 * 2
    return float(pairings * scored + len(known) * 2 * AIVAT_FIT_DEALS)


@stage("nlhe-league", 4, LeagueParams, inputs={"cnn": "nlhe-train"}, optional={"cnn"},
       many={"cnn"}, check_inputs=same_game, labels=("hands",),
       footprint=_league_footprint)  # fmt: skip
def run_league(ctx: StageContext[LeagueParams]) -> dict[str, Any]:
    """Duplicate round robin of no-limit players in big blinds per hand.

    Every pairing plays the same duplicate deals; write the table and action profiles.
    """
    params = ctx.params
    rules = params.rules()
    labels, players, keys = roster(
        ctx, params.players, pick_device(params.device), params.compiled, params.precision
    )
    n = len(labels)
    if n < 2:
        raise StageError("nlhe-league: needs at least two players")
    deals = max(1, params.hands // 2)
    table = np.zeros((n, n))
    ci = np.zeros((n, n))
    hands = np.zeros((n, n))
    mix = np.zeros((n, 3), np.int64)
    sizes = np.zeros((n, 5), np.int64)
    scored = np.full((len(AIVAT_FIELDS), n, n), np.nan)  # AIVAT_FIELDS, row player's view
    fitted: dict[int, tuple[Any, FittedValues]] = {}
    pairs = list(combinations(range(n), 2))
    bar = ctx.progress.start("league hands", len(pairs) * 2 * deals)
    for idx, (i, j) in enumerate(pairs):
        t0 = time.perf_counter()
        result = ctx.writer.load_checkpoint(f"pair{idx}")
        if result is not None:  # a killed league resumes after its last finished pairing
            bar.advance(int(result["hands"]))
        else:
            name = f"pair{idx}"
            rec = _play_pairing(ctx, name, rules, players, (i, j), Deals(deals, params.seed), bar)
            mean, half = duplicate_mean(rec.player_payoff(), rules.big_blind)
            starts = np.concatenate([[0], np.cumsum(rec.counts)]).astype(np.int64)
            who = np.where(rec.seat_player == 0, i, j).astype(np.int64)
            m, s = action_profile(who, starts, rec.actions, rules.blind, rules.stack, n)
            with ctx.writer.timed_part("aivat"):  # its own time model (Footprint.parts)
                scores = aivat_pairing(rules, players, (i, j), rec, params.aivat_hands, fitted,
                                       params.seed)  # fmt: skip
            result = {"mean": np.array(mean), "half": np.array(half),
                      "hands": np.array(len(rec.payoff)), "mix": m, "sizes": s,
                      "aivat": scores}  # fmt: skip
            ctx.writer.save_checkpoint(f"pair{idx}", result)
            _log_scoring(ctx, "nlhe-league", labels, players, (i, j))
        mean, half = float(result["mean"]), float(result["half"])
        table[i, j], table[j, i] = mean, -mean
        ci[i, j] = ci[j, i] = half
        hands[i, j] = hands[j, i] = int(result["hands"])
        mix += result["mix"]
        sizes += result["sizes"]
        got = np.asarray(result["aivat"], np.float64)
        record_aivat(scored, i, j, got)
        ctx.log(
            f"nlhe-league: {labels[i]} vs {labels[j]}: {mean:+.3f} ± {half:.3f} BB/hand over "
            f"{int(result['hands']):,} hands ({time.perf_counter() - t0:.1f} s)"
            + ("" if np.isnan(got[0]) else f"; AIVAT on the first {int(got[4]):,}: "
               f"{got[0]:+.3f} ± {got[1]:.3f} (plain {got[2]:+.3f} ± {got[3]:.3f})")
        )  # fmt: skip
    bar.close()
    w = ctx.writer
    w.write_arrays({
        "bb_per_hand": np.asarray(table, np.float64),
        "ci95": np.asarray(ci, np.float64),
        "hands": np.asarray(hands, np.float64),
        "action_mix": np.asarray(mix, np.int64),
        "raise_sizes": np.asarray(sizes, np.int64),
        **{f"aivat_{name}": scored[f] for f, name in enumerate(AIVAT_FIELDS)},
    })  # fmt: skip
    means = table.sum(axis=1) / (n - 1)
    summary: dict[str, Any] = {
        "players": labels,
        "keys": keys,
        "mean_bb_per_hand": [round(float(m), 4) for m in means],
        **head_to_head(labels, table, ci, "BB/hand", 3),
        "hands_per_pairing": int(hands[0, 1]),
        "fold_call_raise": {
            labels[k]: [round(float(x), 4) for x in mix[k] / max(mix[k].sum(), 1)] for k in range(n)
        },
        "raise_sizes": {
            labels[k]: dict(zip(RAISE_BINS, [int(x) for x in sizes[k]])) for k in range(n)
        },
    }
    summary["aivat"] = aivat_summary(labels, scored, partial(known_label, labels, players), 4)
    if "heuristic" in labels:
        h = labels.index("heuristic")
        summary["beats_heuristic_significantly"] = [
            labels[k] for k in range(n) if k != h and table[k, h] - ci[k, h] > 0
        ]
    return summary
