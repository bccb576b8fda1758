"""BlokusZero: the paper's network, a MAXN PUCT search batched across games, self-play records.

Input (`encode`): 33 planes of 20x20, the four colours' squares ordered from the colour to move,
for the current position and the 7 before it (a position k placements ago is the board minus
its last k pieces), then the number of pieces on the board / 84. Output: 30,433 policy logits
(the placement index of `blokus.game`) and 4 tanh values, one per colour in the same order
from the colour to move.

Search (`select_leaves`, `expand_leaves`): every edge keeps its visit count and the value sum of
each colour; at a node where colour p moves the child maximising

    Q_p(s, a) + C(s) P(s, a) sqrt(N(s)) / (1 + N(s, a)),
    C(s) = log((1 + N(s) + c_base) / c_base) + c_init

is followed. Before its first visit an edge's Q is 0 (AlphaZero's initialisation, the paper's)
or, with a first-play-urgency reduction r, the parent's Q_p minus r (MuGo's parent value, Leela
Zero's reduction): with values of +1 win / -1 loss among four colours a typical Q_p is near -0.5,
so Q = 0 makes every unvisited edge look better than any visited one and a search of fewer
simulations than legal moves visits each root child at most once. The most visited root child
is played, ties to the better mean value for the mover (as MCTS-MAXN breaks them).

A leaf is evaluated by the network (priors renormalised over the legal placements) or, at the
end of the game, by the outcome (+1 sole winner, 0 shared top score, -1 otherwise; or, with a
value margin m > 0, beyond the paper, tanh((own score - best other score) / m)); the four
values are added to every edge on the path.
Dirichlet noise (alpha, eps) mixes into the root priors during self-play. One leaf per game per
step, so a batch holds one position of every game played in parallel. A node whose children
would not fit in the tree's capacity stays a leaf (its value is still backed up).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple

import numpy as np
import torch
from numba import njit
from torch import nn

from gameforge.engines.blokus.game import (
    CELLS,
    N_PLAYERS,
    OWNER,
    PIECE_SIZES,
    PIECES,
    PLACED_AT,
    PLY,
    SIDE,
    STATE_SIZE,
    TO_MOVE,
    Tables,
    advance,
    legal_moves,
    orientations,
    place,
    utility,
)
from gameforge.engines.blokus.mcts import mean_rollouts
from gameforge.engines.common.rng import uniform
from gameforge.engines.common.torch_arrays import load_arrays

N_HISTORY = 8
N_PLANES = N_PLAYERS * N_HISTORY + 1
N_MOVES = 30_433
MAX_PLIES = 84
C_BASE = 19_652.0
C_INIT = 1.25


# ---------------------------------------------------------------------------------------------
# Input planes.


@njit(cache=True, nogil=True)
def encode(s: np.ndarray, out: np.ndarray) -> None:
    """The 33 input planes of state s into out[33, 400] (float32)."""
    me = s[TO_MOVE]
    ply = s[PLY]
    out[:] = 0.0
    for c in range(CELLS):
        owner = s[OWNER + c]
        if owner == 255:
            continue
        rel = (owner - me) % N_PLAYERS
        at = s[PLACED_AT + c]
        for k in range(N_HISTORY):
            if at + k < ply:  # on the board k placements ago
                out[k * N_PLAYERS + rel, c] = 1.0
    out[N_PLANES - 1, :] = ply / MAX_PLIES


@njit(cache=True, nogil=True)
def encode_batch(states: np.ndarray, rows: np.ndarray, out: np.ndarray) -> None:
    """encode(states[rows[i]]) into out[i] for every i."""
    for i in range(rows.shape[0]):
        encode(states[rows[i]], out[i])


# ---------------------------------------------------------------------------------------------
# The network.


@dataclass(frozen=True)
class ZeroConfig:
    """Residual blocks, filters (the paper: 10 x 128) and the policy head ("dense", the paper's,
    or "conv", see `ConvPolicy`)."""

    blocks: int = 10
    filters: int = 128
    policy: str = "dense"


@lru_cache(maxsize=1)
def placement_anchors() -> np.ndarray:
    """[30,433]: orientation * CELLS + the top-left cell of the placement's bounding box, in the
    placement index's order (piece, orientation, then that cell)."""
    anchors: list[int] = []
    k = 0
    for p in range(len(PIECES)):
        for o in orientations(p):
            h = 1 + max(r for r, _ in o)
            w = 1 + max(c for _, c in o)
            anchors.extend(k * CELLS + SIDE * r0 + c0
                           for r0 in range(SIDE - h + 1) for c0 in range(SIDE - w + 1))  # fmt: skip
            k += 1
    return np.array(anchors, np.int64)


N_ORIENTATIONS = 91


class ConvPolicy(nn.Module):
    """A convolutional policy head (beyond the paper; AlphaZero's chess and shogi heads): a 1x1
    convolution to one map per piece orientation, each placement's logit read at the top-left
    cell of its bounding box, plus a bias per placement. About f x 91 x 400 multiply-adds
    against the dense head's 800 x 30,433 (24 M), and 30,433 + 91 f weights against 24 M."""

    def __init__(self, filters: int) -> None:
        super().__init__()
        self.conv = nn.Conv2d(filters, N_ORIENTATIONS, 1, bias=False)
        self.bias = nn.Parameter(torch.zeros(N_MOVES))
        self.anchor: torch.Tensor
        self.register_buffer("anchor", torch.from_numpy(placement_anchors()), persistent=False)

    def forward(self, h: torch.Tensor, moves: torch.Tensor | None = None) -> torch.Tensor:
        """Logits [B, 30433], or only the columns `moves` [B, len(moves)]."""
        maps = self.conv(h).flatten(1)
        if moves is None:
            return maps[:, self.anchor] + self.bias
        return maps[:, self.anchor[moves]] + self.bias[moves]


class _Residual(nn.Module):
    def __init__(self, f: int) -> None:
        super().__init__()
        self.c1 = nn.Conv2d(f, f, 3, padding=1, bias=False)
        self.b1 = nn.BatchNorm2d(f)
        self.c2 = nn.Conv2d(f, f, 3, padding=1, bias=False)
        self.b2 = nn.BatchNorm2d(f)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.relu(self.b1(self.c1(x)))
        return torch.relu(x + self.b2(self.c2(y)))


class BlokusNet(nn.Module):
    """conv 3x3 + BN + ReLU, residual blocks, a policy head (30,433) and a value head (4, tanh)."""

    def __init__(self, config: ZeroConfig = ZeroConfig()) -> None:
        super().__init__()
        f = config.filters
        self.stem = nn.Sequential(nn.Conv2d(N_PLANES, f, 3, padding=1, bias=False),
                                  nn.BatchNorm2d(f), nn.ReLU())  # fmt: skip
        self.blocks = nn.Sequential(*[_Residual(f) for _ in range(config.blocks)])
        self.policy: nn.Module
        if config.policy == "conv":
            self.policy = ConvPolicy(f)
        elif config.policy == "dense":
            self.policy = nn.Sequential(nn.Conv2d(f, 2, 1, bias=False), nn.BatchNorm2d(2),
                                        nn.ReLU(), nn.Flatten(),
                                        nn.Linear(2 * CELLS, N_MOVES))  # fmt: skip
        else:
            raise ValueError(f"unknown policy head {config.policy!r}: 'dense' or 'conv'")
        self.value = nn.Sequential(nn.Conv2d(f, 4, 1, bias=False), nn.BatchNorm2d(4), nn.ReLU(),
                                   nn.Flatten(), nn.Linear(4 * CELLS, 256), nn.ReLU(),
                                   nn.Linear(256, N_PLAYERS), nn.Tanh())  # fmt: skip

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(policy logits [B, 30433], values [B, 4]) for planes [B, 33, 20, 20]."""
        h = self.blocks(self.stem(x))
        return self.policy(h), self.value(h)


def model_from_arrays(
    arrays: dict[str, np.ndarray], config: ZeroConfig, device: str = "cpu"
) -> BlokusNet:
    """A network in eval mode with the given weights."""
    return load_arrays(BlokusNet(config), arrays, device)


def _fold(conv: nn.Module, bn: nn.Module) -> nn.Conv2d:
    from torch.nn.utils.fusion import fuse_conv_bn_eval

    assert isinstance(conv, nn.Conv2d) and isinstance(bn, nn.BatchNorm2d)
    return fuse_conv_bn_eval(conv, bn)


def inference_copy(model: BlokusNet) -> BlokusNet:
    """An eval-mode copy with every batch norm folded into the convolution before it (the same
    function with fewer operations)."""
    net = copy.deepcopy(model).eval()
    folded = [net.stem, net.value] + ([net.policy] if isinstance(net.policy, nn.Sequential) else [])
    for seq in folded:
        seq[0] = _fold(seq[0], seq[1])
        seq[1] = nn.Identity()
    for block in net.blocks:
        assert isinstance(block, _Residual)
        block.c1 = _fold(block.c1, block.b1)
        block.c2 = _fold(block.c2, block.b2)
        block.b1 = nn.Identity()  # type: ignore[assignment]
        block.b2 = nn.Identity()  # type: ignore[assignment]
    return net


class Evaluator:
    """Batched network evaluation: planes in, (logits, values) as float32 numpy out.

    For a BlokusNet, batch norms are folded and, given the placements the caller will read
    (`moves`), only those columns of the 30,433-way policy layer (or of the convolutional
    head's gather) are computed (the other logits are left at 0). Its convolutions run
    channels-last (oneDNN's fast layout on a CPU; the same function, values moving in the last
    bits); `channels_last=False` keeps torch's default layout, for comparison. Any other module
    is simply called.
    """

    def __init__(self, model: nn.Module, device: str = "cpu", channels_last: bool = True) -> None:
        self.device = device
        self.positions = 0
        self.net: BlokusNet | None = None
        self.layout = torch.channels_last if channels_last else torch.contiguous_format
        if isinstance(model, BlokusNet):  # a folded copy: the caller's network is left as is
            self.net = inference_copy(model).to(device)
            self.net.to(memory_format=self.layout)  # type: ignore[call-overload]  # in place
            self.model: nn.Module = self.net
            if isinstance(self.net.policy, nn.Sequential):
                layers = list(self.net.policy)
                self.features: nn.Module = nn.Sequential(*layers[:-1])  # conv, ReLU, flatten
                dense = layers[-1]
                assert isinstance(dense, nn.Linear)
                self.dense: nn.Linear | None = dense
            else:
                self.features = self.net.policy
                self.dense = None
        else:
            self.model = model.to(device).eval()

    def __call__(
        self, planes: np.ndarray, moves: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Evaluate planes [B, 33, 400]."""
        self.positions += planes.shape[0]
        with torch.inference_mode():
            x = torch.from_numpy(planes).to(self.device).view(-1, N_PLANES, SIDE, SIDE)
            if self.net is None:
                logits, values = self.model(x)
                return logits.float().cpu().numpy(), values.float().cpu().numpy()
            h = self.net.blocks(self.net.stem(x.contiguous(memory_format=self.layout)))
            out_values = self.net.value(h).float().cpu().numpy()
            if self.dense is None:  # the convolutional head gathers its columns itself
                if moves is None:
                    return self.features(h).float().cpu().numpy(), out_values
                part = self.features(h, torch.from_numpy(moves).to(self.device))
            else:
                f = self.features(h)
                if moves is None:
                    return self.dense(f).float().cpu().numpy(), out_values
                cols = torch.from_numpy(moves).to(self.device)
                part = f @ self.dense.weight[cols].T + self.dense.bias[cols]
            out_logits = np.zeros((planes.shape[0], N_MOVES), np.float32)
            out_logits[:, moves] = part.float().cpu().numpy()
        return out_logits, out_values


# ---------------------------------------------------------------------------------------------
# The search, over G games at once. Its settings travel as one `selfplay.SearchParams`, but the
# numba kernels below take the arrays and scalars they use as arguments, however many: an @njit
# function cannot take a Python dataclass, and the trees' arrays already travel whole as a
# `Forest` (a NamedTuple numba types), so what is left flat is what a kernel reads.


class Forest(NamedTuple):
    """The search trees of G games (node 0 of each is its root), with their scratch arrays;
    the kernels take it whole and copy the fields they use into locals first."""

    move: np.ndarray  # [G, capacity] placement into each node
    prior: np.ndarray
    visits: np.ndarray
    value: np.ndarray  # [G, capacity, N_PLAYERS] value sums by player
    first_child: np.ndarray
    n_children: np.ndarray  # -1: not expanded yet
    used: np.ndarray  # [G] nodes in use
    path: np.ndarray  # [G, MAX_PLIES + 2] the last descent, root first
    depth: np.ndarray
    leaf_states: np.ndarray
    legal: np.ndarray  # [G, N_MOVES] the leaf's legal placements
    n_legal: np.ndarray
    terminal: np.ndarray
    stamp: np.ndarray  # `legal_moves` scratch

    @classmethod
    def empty(cls, games: int, capacity: int) -> Forest:
        """Trees of `capacity` nodes for `games` games, nothing searched yet."""
        return cls(
            np.zeros((games, capacity), np.int64), np.zeros((games, capacity), np.float32),
            np.zeros((games, capacity), np.int64), np.zeros((games, capacity, N_PLAYERS)),
            np.zeros((games, capacity), np.int64), np.zeros((games, capacity), np.int64),
            np.zeros(games, np.int64), np.zeros((games, MAX_PLIES + 2), np.int64),
            np.zeros(games, np.int64), np.zeros((games, STATE_SIZE), np.uint8),
            np.zeros((games, N_MOVES), np.int64), np.zeros(games, np.int64),
            np.zeros(games, np.bool_), np.zeros((games, N_MOVES + 1), np.int64),
        )  # fmt: skip


@njit(cache=True, nogil=True)
def reset_roots(
    active: np.ndarray,
    n_children: np.ndarray,
    visits: np.ndarray,
    value: np.ndarray,
    used: np.ndarray,
) -> None:
    """Start a fresh tree for every active game."""
    for g in range(active.shape[0]):
        if active[g]:
            n_children[g, 0] = -1
            visits[g, 0] = 0
            value[g, 0, :] = 0.0
            used[g] = 1


@njit(cache=True, nogil=True)
def select_leaves(
    roots: np.ndarray,
    active: np.ndarray,
    t: Tables,
    fpu: float,
    root_pick: np.ndarray,
    forest: Forest,
) -> None:
    """Descend every active game's tree by PUCT to a leaf; leave its state and legal moves.
    `fpu`: NaN for Q = 0 before the first visit, else the reduction from the parent's Q;
    `root_pick[g]` >= 0: the root child to take first (the Gumbel root rule), else PUCT."""
    move, prior, visits, value, first_child, n_children = forest[:6]
    path, depth, leaf_states, legal, n_legal, terminal, stamp = forest[7:]
    for g in range(roots.shape[0]):
        if not active[g]:
            continue
        s = leaf_states[g]
        s[:] = roots[g]
        node = 0
        d = 0
        path[g, 0] = 0
        alive = True
        while n_children[g, node] > 0:
            p = s[TO_MOVE]
            n_s = visits[g, node]
            c_s = np.log((1.0 + n_s + C_BASE) / C_BASE) + C_INIT
            scale = c_s * np.sqrt(n_s)
            q_new = 0.0 if np.isnan(fpu) else value[g, node, p] / max(n_s, 1) - fpu
            best = -1e30
            pick = first_child[g, node]
            if node == 0 and root_pick[g] >= 0:
                pick = root_pick[g]
            else:
                for c in range(first_child[g, node], first_child[g, node] + n_children[g, node]):
                    n = visits[g, c]
                    q = value[g, c, p] / n if n > 0 else q_new
                    v = q + scale * prior[g, c] / (1.0 + n)
                    if v > best:
                        best = v
                        pick = c
            node = pick
            d += 1
            path[g, d] = node
            place(s, move[g, node], t)
            alive = advance(s, t)
            if not alive:
                break
        depth[g] = d
        terminal[g] = not alive
        n_legal[g] = 0
        if alive and n_children[g, node] < 0:
            n_legal[g] = legal_moves(s, t, stamp[g], legal[g], 1)


@njit(cache=True, nogil=True)
def _gamma(alpha: float, rng: np.ndarray) -> float:
    """A Gamma(alpha, 1) sample (Marsaglia and Tsang, boosted for alpha < 1)."""
    boost = 1.0
    if alpha < 1.0:
        boost = uniform(rng) ** (1.0 / alpha)
        alpha += 1.0
    d = alpha - 1.0 / 3.0
    c = 1.0 / np.sqrt(9.0 * d)
    while True:
        u1 = max(uniform(rng), 1e-300)
        z = np.sqrt(-2.0 * np.log(u1)) * np.cos(2.0 * np.pi * uniform(rng))
        v = (1.0 + c * z) ** 3
        if v <= 0:
            continue
        u = max(uniform(rng), 1e-300)
        if np.log(u) < 0.5 * z * z + d - d * v + d * np.log(v):
            return boost * d * v


@njit(cache=True, nogil=True)
def expand_leaves(
    active: np.ndarray,
    logits: np.ndarray,
    values: np.ndarray,
    rows: np.ndarray,
    noise_alpha: float,
    noise_eps: float,
    margin: float,
    rng: np.ndarray,
    forest: Forest,
) -> None:
    """Expand each active game's leaf with the network's priors and back the values up.

    Game g's network output is row rows[g] of logits/values (-1: not evaluated, i.e. terminal
    or already expanded); a terminal leaf is worth its `utility` (margin 0: win/loss). Root
    priors get Dirichlet noise when noise_eps > 0.
    """
    move, prior, visits, value, first_child, n_children, used = forest[:7]
    path, depth, leaf_states, legal, n_legal, terminal = forest[7:13]
    capacity = move.shape[1]
    v_abs = np.zeros(N_PLAYERS)
    for g in range(active.shape[0]):
        if not active[g]:
            continue
        s = leaf_states[g]
        leaf = path[g, depth[g]]
        if terminal[g]:
            utility(s, PIECE_SIZES, margin, v_abs)
        else:
            r = rows[g]
            me = s[TO_MOVE]
            for i in range(N_PLAYERS):
                v_abs[(me + i) % N_PLAYERS] = values[r, i]
            n = n_legal[g]
            if n > 0 and used[g] + n <= capacity:
                start = used[g]
                top = -1e30
                for j in range(n):
                    top = max(top, logits[r, legal[g, j]])
                total = 0.0
                for j in range(n):
                    e = np.exp(logits[r, legal[g, j]] - top)
                    prior[g, start + j] = e
                    total += e
                for j in range(n):
                    c = start + j
                    move[g, c] = legal[g, j]
                    prior[g, c] /= total
                    visits[g, c] = 0
                    value[g, c, :] = 0.0
                    n_children[g, c] = -1
                if leaf == 0 and noise_eps > 0:
                    noise = np.zeros(n)
                    for j in range(n):
                        noise[j] = _gamma(noise_alpha, rng)
                    ns = noise.sum()
                    if ns > 0:
                        for j in range(n):
                            c = start + j
                            prior[g, c] = (1 - noise_eps) * prior[g, c] + noise_eps * noise[j] / ns
                first_child[g, leaf] = start
                n_children[g, leaf] = n
                used[g] = start + n
        for k in range(depth[g] + 1):
            nd = path[g, k]
            visits[g, nd] += 1
            for q in range(N_PLAYERS):
                value[g, nd, q] += v_abs[q]


@njit(cache=True, nogil=True)
def mix_rollouts(
    active: np.ndarray,
    rows: np.ndarray,
    leaf_states: np.ndarray,
    values: np.ndarray,
    mix: float,
    t: Tables,
    stamp: np.ndarray,
    moves: np.ndarray,
    rng: np.ndarray,
    margin: float = 0.0,
) -> None:
    """Blend one MCTS-MAXN rollout into each evaluated leaf: v <- (1 - mix) v + mix z, z the
    rollout's final `utility` (win/loss, or the score margin with margin > 0) in the mover's
    order (AlphaGo's mixed leaf evaluation; an option beyond the paper, which uses the value
    network alone)."""
    anchors = np.zeros(CELLS, np.int64)
    z = np.zeros(N_PLAYERS)
    for g in range(active.shape[0]):
        r = rows[g]
        if not active[g] or r < 0:
            continue
        me = leaf_states[g, TO_MOVE]
        mean_rollouts(leaf_states[g], 1, t, margin, stamp, moves, anchors, rng, z)
        for i in range(N_PLAYERS):
            values[r, i] = (1.0 - mix) * values[r, i] + mix * z[(me + i) % N_PLAYERS]


@njit(cache=True, nogil=True)
def root_visits(
    g: int,
    move: np.ndarray,
    visits: np.ndarray,
    value: np.ndarray,
    first_child: np.ndarray,
    n_children: np.ndarray,
    mover: int,
    out_moves: np.ndarray,
    out_visits: np.ndarray,
    out_means: np.ndarray,
) -> int:
    """The root's children of game g: placements, visit counts and mean values for the mover;
    returns how many."""
    n = max(n_children[g, 0], 0)
    for j in range(n):
        c = first_child[g, 0] + j
        out_moves[j] = move[g, c]
        out_visits[j] = visits[g, c]
        out_means[j] = value[g, c, mover] / visits[g, c] if visits[g, c] > 0 else -np.inf
    return n


def pick_move(
    moves: np.ndarray,
    counts: np.ndarray,
    proportional: bool,
    rng: np.random.Generator,
    means: np.ndarray | None = None,
) -> int:
    """Visit-proportional (early self-play moves) or the most visited placement, ties to the
    better mean value (`means`) and then to the first."""
    if proportional and counts.sum() > 0:
        return int(rng.choice(moves, p=counts / counts.sum()))
    if means is None:
        return int(moves[int(np.argmax(counts))])
    top = np.flatnonzero(counts == counts.max())
    return int(moves[top[int(np.argmax(means[top]))]])


# ---------------------------------------------------------------------------------------------
# The Gumbel root rule (Danihelka, Guez, Schrittwieser and Silver 2022, "Policy improvement by
# planning with Gumbel"; an option beyond the paper). With fewer simulations than legal moves,
# PUCT's visit counts are no policy improvement; instead the root samples m actions without
# replacement by Gumbel-top-m on the log priors, splits the simulations among them by
# sequential halving on g + log p + sigma(q), plays the survivor, and trains the policy towards
# softmax(log p + sigma(completed q)). sigma(q) = (c_visit + max_b N(b)) c_scale q, q the
# completed values rescaled to [0, 1]; an unvisited child's completed value is v_mix, the
# network's root value mixed with the prior-weighted mean of the visited children's values.
# Below the root the search stays PUCT.

GUMBEL_C_VISIT = 50.0
GUMBEL_C_SCALE = 0.1


def considered_visits(m: int, n: int) -> np.ndarray:
    """Sequential halving over m considered actions in n simulations: the visit count the child
    searched at each simulation must have (the schedule of the paper's reference, mctx)."""
    if m <= 1:
        return np.arange(n, dtype=np.int64)
    log2m = int(np.ceil(np.log2(m)))
    sequence: list[int] = []
    visits = [0] * m
    considered = m
    while len(sequence) < n:
        extra = max(1, n // (log2m * considered))
        for _ in range(extra):
            sequence.extend(visits[:considered])
            for i in range(considered):
                visits[i] += 1
        considered = max(2, considered // 2)
    return np.array(sequence[:n], np.int64)


@njit(cache=True, nogil=True)
def root_sigma_logits(
    g: int,
    mover: int,
    root_value: float,
    prior: np.ndarray,
    visits: np.ndarray,
    value: np.ndarray,
    first_child: np.ndarray,
    n_children: np.ndarray,
    out: np.ndarray,
) -> int:
    """log p + sigma(completed q) of game g's root children for the mover, in child order;
    returns how many children."""
    n = max(n_children[g, 0], 0)
    start = first_child[g, 0]
    n_sum = 0.0
    pq = 0.0
    p_sum = 0.0
    top_visits = 0
    for j in range(n):
        c = start + j
        if visits[g, c] > 0:
            n_sum += visits[g, c]
            pq += prior[g, c] * value[g, c, mover] / visits[g, c]
            p_sum += prior[g, c]
            top_visits = max(top_visits, visits[g, c])
    v_mix = root_value
    if n_sum > 0 and p_sum > 0:
        v_mix = (root_value + n_sum * pq / p_sum) / (1.0 + n_sum)
    lo = 1e30
    hi = -1e30
    for j in range(n):
        c = start + j
        q = value[g, c, mover] / visits[g, c] if visits[g, c] > 0 else v_mix
        out[j] = q
        lo = min(lo, q)
        hi = max(hi, q)
    scale = (GUMBEL_C_VISIT + top_visits) * GUMBEL_C_SCALE / max(hi - lo, 1e-8)
    for j in range(n):
        out[j] = np.log(max(prior[g, start + j], 1e-30)) + scale * (out[j] - lo)
    return n


@njit(cache=True, nogil=True)
def gumbel_root_picks(
    active: np.ndarray,
    movers: np.ndarray,
    root_value: np.ndarray,
    gumbel: np.ndarray,
    considered: np.ndarray,
    n_considered: np.ndarray,
    target: np.ndarray,
    prior: np.ndarray,
    visits: np.ndarray,
    value: np.ndarray,
    first_child: np.ndarray,
    n_children: np.ndarray,
    scratch: np.ndarray,
    picks: np.ndarray,
) -> None:
    """Each active game's root child to search next (or, with target -1, to play): among its
    considered children (child offsets) with `target[g]` visits (-1: the most visited), the one
    maximising g + log p + sigma(q)."""
    for g in range(active.shape[0]):
        picks[g] = -1
        if not active[g] or n_considered[g] == 0:
            continue
        root_sigma_logits(g, movers[g], root_value[g], prior, visits, value, first_child,
                          n_children, scratch)  # fmt: skip
        start = first_child[g, 0]
        want = target[g]
        if want < 0:
            for i in range(n_considered[g]):
                want = max(want, visits[g, start + considered[g, i]])
        best = -1e300
        for i in range(n_considered[g]):
            j = considered[g, i]
            if visits[g, start + j] != want:
                continue
            score = gumbel[g, j] + scratch[j]
            if score > best:
                best = score
                picks[g] = start + j
        if picks[g] < 0:  # no child at the scheduled count (cannot happen); the least visited
            fewest = 1 << 62
            for i in range(n_considered[g]):
                j = considered[g, i]
                if visits[g, start + j] < fewest:
                    fewest = visits[g, start + j]
                    picks[g] = start + j
