"""BlokusZero's games and training: self-play, matches against MCTS-MAXN, the training step.

Games are recorded compactly (`GameRecords`): the placements in order (a position is rebuilt
by replaying them, passes are implied by the rules), the policy target pi of every searched
position (the root visit counts, or the Gumbel rule's improved policy), the final scores and
outcomes. Training samples positions
uniformly from the records, rebuilds their planes, optionally applies one of the 8 board
symmetries to planes and pi together, and minimises (z - v)^2 - pi . log p with SGD (momentum,
weight decay as the L2 term).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
import torch
from numba import njit

from gameforge.engines.blokus.game import (
    CELLS,
    N_PLAYERS,
    OWNER,
    PIECE_SIZES,
    PLY,
    STATE_SIZE,
    TO_MOVE,
    Tables,
    advance,
    board_symmetries,
    legal_moves,
    margin_values,
    new_state,
    outcome,
    place,
    scores,
)
from gameforge.engines.blokus.mcts import History, Tree, mcts_move, seeded_rng
from gameforge.engines.blokus.zero import (
    N_MOVES,
    N_PLANES,
    Evaluator,
    Forest,
    considered_visits,
    encode,
    encode_batch,
    expand_leaves,
    gumbel_root_picks,
    mix_rollouts,
    pick_move,
    reset_roots,
    root_sigma_logits,
    root_visits,
    select_leaves,
)

Progress = Callable[[int], None]


@dataclass
class GameRecords:
    """Finished games: placements, searched positions' visit counts, scores and outcomes; for
    records of `engines.blokus.rollouts`, a value target per kept position as well."""

    moves: np.ndarray  # [plies] placement per ply, games concatenated
    game_start: np.ndarray  # [games + 1] offsets into moves
    pi_start: np.ndarray  # [plies + 1] offsets into pi_move / pi_weight (empty: not searched)
    pi_move: np.ndarray
    pi_weight: np.ndarray  # the policy target's weights (visit counts, or Gumbel's policy)
    scores: np.ndarray  # [games, 4] advanced scores by colour
    outcome: np.ndarray  # [games, 4] +1 sole winner, 0 shared top, -1 otherwise
    # [plies, 4] by colour, NaN where a ply has none (the game's outcome is its target), or
    # [0, 4]: none at all (self-play)
    ply_value: np.ndarray = field(default_factory=lambda: np.zeros((0, N_PLAYERS), np.float32))

    @property
    def games(self) -> int:
        """Number of games."""
        return int(self.scores.shape[0])

    def arrays(self) -> dict[str, np.ndarray]:
        """What the store keeps (no `ply_value` array when there is none)."""
        out = dict(self.__dict__)
        if not self.ply_value.size:
            del out["ply_value"]
        return out

    @classmethod
    def from_arrays(cls, arrays: Mapping[str, np.ndarray]) -> GameRecords:
        """Records from `arrays()`'s fields (read from a store or a checkpoint)."""
        extra = {"ply_value": np.asarray(arrays["ply_value"])} if "ply_value" in arrays else {}
        return cls(*(np.asarray(arrays[n]) for n in RECORD_FIELDS), **extra)

    def values_per_ply(self) -> np.ndarray:
        """[plies, 4]: `ply_value`, NaN-filled when there is none."""
        if self.ply_value.size:
            return self.ply_value
        return np.full((len(self.moves), N_PLAYERS), np.nan, np.float32)

    def last_games(self, n: int) -> GameRecords:
        """The last n games."""
        if self.games <= n:
            return self
        first = self.games - n
        a = int(self.game_start[first])
        pa = int(self.pi_start[a])
        return GameRecords(
            self.moves[a:], self.game_start[first:] - a, self.pi_start[a:] - pa,
            self.pi_move[pa:], self.pi_weight[pa:], self.scores[first:], self.outcome[first:],
            self.ply_value[a:] if self.ply_value.size else self.ply_value,
        )  # fmt: skip

    @classmethod
    def concat(cls, parts: list[GameRecords]) -> GameRecords:
        """Records of several runs as one."""
        moves = np.concatenate([p.moves for p in parts])
        lengths = np.concatenate([np.diff(p.game_start) for p in parts])
        game_start = np.concatenate([[0], np.cumsum(lengths)])
        pi_counts = np.concatenate([np.diff(p.pi_start) for p in parts])
        pi_start = np.concatenate([[0], np.cumsum(pi_counts)])
        any_values = any(p.ply_value.size for p in parts)
        ply_value = (np.concatenate([p.values_per_ply() for p in parts]).astype(np.float32)
                     if any_values else np.zeros((0, N_PLAYERS), np.float32))  # fmt: skip
        return cls(moves.astype(np.int64), game_start.astype(np.int64), pi_start.astype(np.int64),
                   np.concatenate([p.pi_move for p in parts]).astype(np.int64),
                   np.concatenate([p.pi_weight for p in parts]).astype(np.float32),
                   np.concatenate([p.scores for p in parts]),
                   np.concatenate([p.outcome for p in parts]), ply_value)  # fmt: skip


RECORD_FIELDS = ("moves", "game_start", "pi_start", "pi_move", "pi_weight", "scores", "outcome")


class _Recorder:
    def __init__(self) -> None:
        self.moves: list[int] = []
        self.game_start = [0]
        self.pi_counts: list[int] = []
        self.pi_move: list[np.ndarray] = []
        self.pi_weight: list[np.ndarray] = []
        self.scores: list[np.ndarray] = []
        self.outcome: list[np.ndarray] = []

    def add(
        self, plies: list[int], pis: list[tuple[np.ndarray, np.ndarray]], final: np.ndarray
    ) -> None:
        self.moves.extend(plies)
        self.game_start.append(len(self.moves))
        for m, v in pis:
            self.pi_counts.append(len(m))
            self.pi_move.append(m)
            self.pi_weight.append(v)
        sc = np.zeros(N_PLAYERS)
        scores(final, PIECE_SIZES, sc)
        z = np.zeros(N_PLAYERS)
        outcome(final, PIECE_SIZES, z)
        self.scores.append(sc)
        self.outcome.append(z)

    def records(self) -> GameRecords:
        def cat(xs: list[np.ndarray], dtype: type = np.int64) -> np.ndarray:
            return np.concatenate(xs).astype(dtype) if xs else np.zeros(0, dtype)

        return GameRecords(
            np.array(self.moves, np.int64), np.array(self.game_start, np.int64),
            np.concatenate([[0], np.cumsum(self.pi_counts)]).astype(np.int64),
            cat(self.pi_move), cat(self.pi_weight, np.float32),
            np.array(self.scores).reshape(-1, N_PLAYERS),
            np.array(self.outcome).reshape(-1, N_PLAYERS),
        )  # fmt: skip


class RootResult(NamedTuple):
    """A searched root's children: placements, visit counts, mean values for the mover, the
    policy target (the visit counts under PUCT, the improved policy under the Gumbel rule) and
    the Gumbel rule's chosen placement (-1 under PUCT: the caller picks from the visits)."""

    moves: np.ndarray
    visits: np.ndarray
    means: np.ndarray
    target: np.ndarray
    choice: int = -1


ROOT_RULES = ("puct", "gumbel")


@dataclass(frozen=True)
class SearchParams:
    """How BlokusZero searches a position and picks its move: the settings `ZeroSearch`,
    `self_play` and `match` take (the stages build it from their flat parameters). The defaults
    are a plain search: the paper's PUCT with Q = 0 before a first visit, the network's values
    alone, no noise, the most visited move."""

    # Simulations per searched move (the paper: 800).
    sims: int = 800
    # Dirichlet noise on the root priors: its concentration alpha and its weight eps, the
    # priors becoming (1 - eps) p + eps noise; eps 0: none (the paper's self-play: 0.02 and
    # 0.25). Under the Gumbel root rule, eps > 0 draws the Gumbel variables instead and leaves
    # the priors alone.
    noise_alpha: float = 0.02
    noise_eps: float = 0.0
    # Plies from a game's start whose move is drawn in proportion to the root's visit counts
    # (the paper's self-play: 20); afterwards, and at 0, the most visited move is played. The
    # Gumbel root rule plays its own choice at every ply.
    proportional_plies: int = 0
    # The share of a leaf's value taken from one MCTS-MAXN rollout: v <- (1 - mix) v + mix z
    # (AlphaGo's mixed leaf evaluation; beyond the paper, which uses the value network alone).
    rollout_mix: float = 0.0
    # First-play urgency: None, Q = 0 before an edge's first visit (the paper's, AlphaZero's);
    # r, the parent's Q for the mover minus r (MuGo's parent value, Leela Zero's reduction).
    fpu_reduction: float | None = None
    # The root rule: "puct" (the paper's) or "gumbel" (Gumbel-top-m sampling with sequential
    # halving over `considered` actions, trained towards the improved policy).
    root_rule: str = "puct"
    # m, the root actions the Gumbel rule considers (unused under PUCT).
    considered: int = 16
    # The value of a finished game, at a terminal leaf or a rollout's end: 0, win/loss (+1 sole
    # winner, 0 shared top score, -1 otherwise; the paper's); m > 0, beyond the paper,
    # tanh((own score - best other score) / m).
    value_margin: float = 0.0

    def __post_init__(self) -> None:
        if self.root_rule not in ROOT_RULES:
            raise ValueError(f"root_rule must be one of {ROOT_RULES}, not {self.root_rule!r}")


@dataclass(frozen=True)
class MatchParams:
    """The paper's evaluation protocol around the tested player: its three MCTS-MAXN opponents
    and the random opening."""

    # Simulations per move of each MCTS-MAXN opponent (the paper: 800).
    mcts_sims: int = 800
    # The game's first placements, whoever makes them, drawn uniformly among the legal ones.
    random_plies: int = 4
    # Games whose MCTS-MAXN moves are searched at once (every game draws from its own streams,
    # so the results do not depend on it).
    threads: int = 2


class ZeroSearch:
    """The batched MAXN search of G games sharing one network, set by `params`: PUCT throughout,
    or the Gumbel root rule (`root_rule="gumbel"`, m = `considered` actions) above PUCT. With
    noise (noise_eps > 0, self-play) the PUCT root gets Dirichlet noise and the Gumbel root its
    Gumbel draws; without noise the Gumbel root ranks by log p + sigma(q) alone."""

    def __init__(
        self,
        t: Tables,
        evaluator: Evaluator,
        games: int,
        params: SearchParams,
        capacity: int,
        seed: int = 0,
    ) -> None:
        self.t = t
        self.params = params
        self.gumbel = params.root_rule == "gumbel"
        self.considered = max(1, params.considered)
        self.root_pick = np.full(games, -1, np.int64)
        self.gumbel_rng = np.random.default_rng([seed, 3])
        self._schedules: dict[int, np.ndarray] = {}
        # NaN: Q = 0 before the first visit (the paper's); else the parent's Q minus this
        self.fpu = np.nan if params.fpu_reduction is None else float(params.fpu_reduction)
        self.evaluator = evaluator
        self.sims = params.sims
        self.forest = Forest.empty(games, capacity)
        self.noise_alpha = params.noise_alpha
        self.noise_eps = params.noise_eps
        self.rng = seeded_rng(seed, 1)
        self.rollout_mix = params.rollout_mix
        self.value_margin = params.value_margin
        self.rollout_rng = seeded_rng(seed, 2)
        self._stamp = np.zeros(N_MOVES + 1, np.int64)
        self.planes = np.zeros((games, N_PLANES, CELLS), np.float32)
        self._moves = np.zeros(N_MOVES, np.int64)
        self._visits = np.zeros(N_MOVES, np.int64)
        self._means = np.zeros(N_MOVES, np.float64)

    def run(self, roots: np.ndarray, active: np.ndarray) -> list[RootResult]:
        """Search every active game's root; placements, visit counts and mean values for the
        mover of each root's children."""
        t, f = self.t, self.forest
        reset_roots(active, f.n_children, f.visits, f.value, f.used)
        rows = np.full(active.shape[0], -1, np.int64)
        movers = roots[:, TO_MOVE].astype(np.int64)
        self.root_pick[:] = -1
        for k in range(self.sims):
            if self.gumbel and k > 0:
                self._gumbel_picks(active, movers, k - 1)
            select_leaves(roots, active, t, self.fpu, self.root_pick, f)
            need = np.flatnonzero(active & ~f.terminal & (f.n_legal > 0))
            rows[:] = -1
            rows[need] = np.arange(need.size)
            if need.size:
                encode_batch(f.leaf_states, need, self.planes)
                wanted = np.unique(np.concatenate([f.legal[g, : f.n_legal[g]] for g in need]))
                logits, values = self.evaluator(self.planes[: need.size], wanted)
                if self.rollout_mix > 0:
                    values = np.array(values, np.float64)
                    mix_rollouts(active, rows, f.leaf_states, values, self.rollout_mix, t,
                                 self._stamp, self._moves, self.rollout_rng,
                                 self.value_margin)  # fmt: skip
            else:
                logits = np.zeros((1, N_MOVES), np.float32)
                values = np.zeros((1, N_PLAYERS), np.float32)
            expand_leaves(active, logits, values, rows, self.noise_alpha,
                          0.0 if self.gumbel else self.noise_eps, self.value_margin, self.rng,
                          f)  # fmt: skip
            if self.gumbel and k == 0:
                self._gumbel_start(active, movers)
        if self.gumbel:
            self._gumbel_picks(active, movers, -1)
        out = []
        for g in range(active.shape[0]):
            if not active[g]:
                none = np.zeros(0, np.int64)
                out.append(RootResult(none, none, np.zeros(0), np.zeros(0)))
                continue
            n = root_visits(g, f.move, f.visits, f.value, f.first_child, f.n_children,
                            int(movers[g]), self._moves, self._visits, self._means)  # fmt: skip
            visits = self._visits[:n].copy()
            if not self.gumbel or n == 0:  # (a live root always has children)
                out.append(RootResult(self._moves[:n].copy(), visits, self._means[:n].copy(),
                                      visits.astype(np.float64)))  # fmt: skip
                continue
            logits = np.zeros(max(n, 1))
            root_sigma_logits(g, int(movers[g]), float(self._root_value[g]), f.prior, f.visits,
                              f.value, f.first_child, f.n_children, logits)  # fmt: skip
            improved = np.exp(logits[:n] - logits[:n].max())
            choice = int(f.move[g, self.root_pick[g]]) if self.root_pick[g] >= 0 else -1
            out.append(RootResult(self._moves[:n].copy(), visits, self._means[:n].copy(),
                                  improved / improved.sum(), choice))  # fmt: skip
        return out

    def _gumbel_start(self, active: np.ndarray, movers: np.ndarray) -> None:
        """After the root's expansion: its network value, Gumbel draws (in self-play) and the
        m considered children (Gumbel-top-m of the log priors) of every active game."""
        f = self.forest
        g_count = active.shape[0]
        width = max(1, int(f.n_children[:, 0].max()))
        self._root_value = np.zeros(g_count)
        self._gumbels = np.zeros((g_count, width))
        self._considered = np.zeros((g_count, min(self.considered, width)), np.int64)
        self._n_considered = np.zeros(g_count, np.int64)
        self._schedule = np.zeros((g_count, max(self.sims - 1, 1)), np.int64)
        self._scratch = np.zeros(width)
        for g in np.flatnonzero(active).tolist():
            n = int(max(f.n_children[g, 0], 0))
            if n == 0:
                continue
            self._root_value[g] = f.value[g, 0, movers[g]] / max(f.visits[g, 0], 1)
            if self.noise_eps > 0:
                self._gumbels[g, :n] = self.gumbel_rng.gumbel(size=n)
            start = int(f.first_child[g, 0])
            keys = self._gumbels[g, :n] + np.log(np.maximum(f.prior[g, start : start + n], 1e-30))
            m = min(self.considered, n)
            self._considered[g, :m] = np.argsort(-keys, kind="stable")[:m]
            self._n_considered[g] = m
            if self.sims > 1:
                if m not in self._schedules:
                    self._schedules[m] = considered_visits(m, self.sims - 1)
                self._schedule[g] = self._schedules[m]

    def _gumbel_picks(self, active: np.ndarray, movers: np.ndarray, k: int) -> None:
        """Root children for simulation k + 1 (k = -1: the child to play) of every game."""
        f = self.forest
        target = self._schedule[:, k] if k >= 0 else np.full(active.shape[0], -1, np.int64)
        gumbel_root_picks(active, movers, self._root_value, self._gumbels, self._considered,
                          self._n_considered, target, f.prior, f.visits, f.value,
                          f.first_child, f.n_children, self._scratch, self.root_pick)  # fmt: skip

    def root_policy_stats(self, g: int) -> tuple[float, float, float, float, float]:
        """(legal moves, entropy, top-1, top-10, top-100 mass) of game g's root priors."""
        f = self.forest
        n = int(max(f.n_children[g, 0], 0))
        start = int(f.first_child[g, 0])
        p = np.sort(f.prior[g, start : start + n].astype(np.float64))[::-1]
        if n == 0:
            return 0.0, 0.0, 0.0, 0.0, 0.0
        entropy = float(-(p[p > 0] * np.log(p[p > 0])).sum())
        return float(n), entropy, float(p[:1].sum()), float(p[:10].sum()), float(p[:100].sum())


def tree_capacity(sims: int) -> int:
    """Nodes per game tree: room for any root (a few thousand moves at most) and `sims`
    expansions of a wide mid-game position."""
    return 1 + 4000 + sims * 1200


def self_play(
    t: Tables,
    evaluator: Evaluator,
    games: int,
    parallel: int,
    search: SearchParams,
    seed: int,
    first_game: int = 0,
    progress: Progress | None = None,
) -> GameRecords:
    """`games` self-play games, `parallel` at a time, each move searched as `search` says."""
    parallel = max(1, min(parallel, games))
    zero = ZeroSearch(t, evaluator, parallel, search, tree_capacity(search.sims), seed)
    rng = np.random.default_rng([seed, first_game])
    roots = np.zeros((parallel, STATE_SIZE), np.uint8)
    active = np.zeros(parallel, np.bool_)
    plies: list[list[int]] = [[] for _ in range(parallel)]
    pis: list[list[tuple[np.ndarray, np.ndarray]]] = [[] for _ in range(parallel)]
    started = 0
    rec = _Recorder()
    for g in range(parallel):
        roots[g] = new_state()
        active[g] = True
        started += 1
    while active.any():
        visits = zero.run(roots, active)
        for g in np.flatnonzero(active).tolist():
            moves, counts, means, target, choice = visits[g]
            if choice < 0:
                early = len(plies[g]) < search.proportional_plies
                choice = pick_move(moves, counts, early, rng, means)
            m = choice
            plies[g].append(m)
            pis[g].append((moves, target))
            place(roots[g], m, t)
            if not advance(roots[g], t):
                rec.add(plies[g], pis[g], roots[g])
                if progress:
                    progress(1)
                plies[g], pis[g] = [], []
                if started < games:
                    roots[g] = new_state()
                    started += 1
                else:
                    active[g] = False
    return rec.records()


# ---------------------------------------------------------------------------------------------
# Matches: BlokusZero (or a random player) in one seat, MCTS-MAXN in the others.


POLICY_STATS = ("ply", "legal", "entropy", "top1", "top10", "top100")


@dataclass
class MatchResult:
    """Per game: the tested player's colour, the four scores, the outcome by colour and the
    final board; per BlokusZero decision: `POLICY_STATS` of its network's root priors."""

    seat: np.ndarray
    scores: np.ndarray
    outcome: np.ndarray
    boards: np.ndarray  # [games, 400] owner of each cell at the end (255 empty)
    policy: np.ndarray  # [decisions, len(POLICY_STATS)]

    def win_share(self) -> np.ndarray:
        """Per game: 1 sole win, 1/k for a top score shared by k, else 0 (par = 0.25)."""
        sc = self.scores
        top = sc.max(axis=1, keepdims=True)
        k = (sc == top).sum(axis=1)
        mine = sc[np.arange(len(sc)), self.seat]
        return np.where(mine == top[:, 0], 1.0 / k, 0.0)


def match(
    t: Tables,
    evaluator: Evaluator | None,
    games: int,
    parallel: int,
    search: SearchParams,
    protocol: MatchParams,
    seed: int,
    progress: Progress | None = None,
) -> MatchResult:
    """The paper's evaluation: the tested player (BlokusZero searching as `search` says, or
    uniform random without an evaluator) in a random seat against three MCTS-MAXN, the first
    `protocol.random_plies` placements uniformly random (the eval stage: no noise, the most
    visited move)."""
    parallel = max(1, min(parallel, games))
    mcts_sims, random_plies = protocol.mcts_sims, protocol.random_plies
    rng = np.random.default_rng(seed)
    seats = rng.integers(0, N_PLAYERS, games)
    zero = (ZeroSearch(t, evaluator, parallel, search, tree_capacity(search.sims), seed=seed)
            if evaluator is not None else None)  # fmt: skip
    trees = [Tree(tree_capacity(mcts_sims), t.n) for _ in range(parallel)]
    histories = [[History(t.n) for _ in range(N_PLAYERS)] for _ in range(parallel)]
    roots = np.zeros((parallel, STATE_SIZE), np.uint8)
    slot_game = -np.ones(parallel, np.int64)
    # Per slot: MCTS random stream and opening draws (reseeded per game by `start`), scratch.
    rngs = [seeded_rng(seed, 0) for _ in range(parallel)]
    draw = [np.random.default_rng(seed) for _ in range(parallel)]
    stamp_of = [np.zeros(t.n + 1, np.int64) for _ in range(parallel)]
    moves_of = [np.zeros(t.n, np.int64) for _ in range(parallel)]
    out_scores = np.zeros((games, N_PLAYERS))
    out_z = np.zeros((games, N_PLAYERS))
    out_boards = np.zeros((games, CELLS), np.uint8)
    policy: list[list[float]] = []
    next_game = 0

    lock = threading.Lock()

    def start(slot: int) -> None:
        nonlocal next_game
        with lock:
            g = next_game
            next_game += 1
        if g >= games:
            slot_game[slot] = -1
            return
        slot_game[slot] = g
        rngs[slot] = seeded_rng(seed, 1000 + g)  # a game's moves depend on its number only
        draw[slot] = np.random.default_rng([seed, 7, g])
        for h in histories[slot]:
            h.total[:] = 0.0
            h.count[:] = 0.0
        roots[slot] = new_state()

    def play(slot: int, m: int) -> None:
        s = roots[slot]
        place(s, m, t)
        if not advance(s, t):
            g = slot_game[slot]
            sc = np.zeros(N_PLAYERS)
            scores(s, PIECE_SIZES, sc)
            out_scores[g] = sc
            outcome(s, PIECE_SIZES, out_z[g])
            out_boards[g] = s[OWNER : OWNER + CELLS]
            if progress:
                progress(1)
            start(slot)

    def random_move(slot: int) -> int:
        n = legal_moves(roots[slot], t, stamp_of[slot], moves_of[slot], 1)
        return int(moves_of[slot][draw[slot].integers(n)])

    def mcts_turns(slot: int) -> None:
        """Play the MCTS and random-opening moves of one game until the tested player moves."""
        while slot_game[slot] >= 0:
            s = roots[slot]
            g = slot_game[slot]
            p = int(s[TO_MOVE])
            if int(s[PLY]) < random_plies:
                play(slot, random_move(slot))
            elif p == seats[g]:
                return
            else:
                play(slot, mcts_move(s, t, trees[slot], histories[slot][p], mcts_sims, rngs[slot]))

    for slot in range(parallel):
        start(slot)
    with ThreadPoolExecutor(max(1, protocol.threads)) as pool:
        while (slot_game >= 0).any():
            list(pool.map(mcts_turns, range(parallel)))
            active = slot_game >= 0
            if not active.any():
                break
            if zero is None:
                for slot in np.flatnonzero(active).tolist():
                    play(slot, random_move(slot))
                continue
            visits = zero.run(roots, active)
            for slot in np.flatnonzero(active).tolist():
                ply = int(roots[slot][PLY])
                policy.append([float(ply), *zero.root_policy_stats(slot)])
                ms, counts, means, _target, choice = visits[slot]
                if choice < 0:
                    early = ply < search.proportional_plies
                    choice = pick_move(ms, counts, early, rng, means)
                play(slot, choice)
    stats = np.array(policy, np.float64).reshape(-1, len(POLICY_STATS))
    return MatchResult(seats, out_scores, out_z, out_boards, stats)


# ---------------------------------------------------------------------------------------------
# Training.


@njit(cache=True, nogil=True)
def replay_planes(
    moves: np.ndarray,
    game_start: np.ndarray,
    games: np.ndarray,
    plies: np.ndarray,
    t: Tables,
    root: np.ndarray,
    planes: np.ndarray,
    movers: np.ndarray,
) -> None:
    """Planes of position plies[i] of game games[i] (replayed from `root`, the empty board)."""
    s = root.copy()
    for i in range(games.shape[0]):
        s[:] = root
        start = game_start[games[i]]
        for k in range(plies[i]):
            place(s, moves[start + k], t)
            advance(s, t)
        encode(s, planes[i])
        movers[i] = s[TO_MOVE]


def sample_batch(
    t: Tables,
    records: GameRecords,
    batch: int,
    rng: np.random.Generator,
    augment: bool,
    value_margin: float = 0.0,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(planes [B, 33, 400], pi [B, 30433], z [B, 4] from the mover, legal [B, 30433]: the
    searched placements, i.e. the legal ones) of random positions; z is the position's own
    value target where the records have one (`ply_value`), else the game's outcome, or with
    value_margin > 0 the `margin_values` of its final scores."""
    searched = np.flatnonzero(np.diff(records.pi_start) > 0)
    pick = searched[rng.integers(0, searched.size, batch)]
    games = np.searchsorted(records.game_start, pick, side="right") - 1
    plies = pick - records.game_start[games]
    planes = np.zeros((batch, N_PLANES, CELLS), np.float32)
    movers = np.zeros(batch, np.int64)
    replay_planes(records.moves, records.game_start, games, plies, t, new_state(), planes, movers)
    pi = np.zeros((batch, N_MOVES), np.float32)
    legal = np.zeros((batch, N_MOVES), np.bool_)
    for i, k in enumerate(pick):
        a, b = records.pi_start[k], records.pi_start[k + 1]
        w = records.pi_weight[a:b].astype(np.float32)
        pi[i, records.pi_move[a:b]] = w / max(float(w.sum()), 1e-12)
        legal[i, records.pi_move[a:b]] = True
    order = (movers[:, None] + np.arange(N_PLAYERS)[None, :]) % N_PLAYERS
    final = records.outcome
    if value_margin > 0:
        final = np.zeros_like(records.scores, dtype=np.float64)
        for g in np.unique(games).tolist():
            margin_values(records.scores[g].astype(np.float64), value_margin, final[g])
    z = final[games[:, None], order].astype(np.float32)
    if records.ply_value.size:
        own = records.ply_value[pick[:, None], order]
        z = np.where(np.isnan(own), z, own).astype(np.float32)
    if augment:
        cell_map = board_symmetries()
        for i, k in enumerate(rng.integers(0, 8, batch)):
            if k:
                moved = np.empty_like(planes[i])
                moved[:, cell_map[k]] = planes[i]
                planes[i] = moved
                turned = np.zeros(N_MOVES, np.float32)
                turned[t.symmetry[k]] = pi[i]
                pi[i] = turned
                allowed = np.zeros(N_MOVES, np.bool_)
                allowed[t.symmetry[k]] = legal[i]
                legal[i] = allowed
    return planes, pi, z, legal


def make_optimiser(
    model: torch.nn.Module, lr: float, weight_decay: float = 1e-4
) -> torch.optim.SGD:
    """The paper's optimiser: SGD with momentum 0.9 and weight decay (the c ||theta||^2 term)."""
    return torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9, weight_decay=weight_decay)


def train_step(
    model: torch.nn.Module,
    optimiser: torch.optim.Optimizer,
    planes: np.ndarray,
    pi: np.ndarray,
    z: np.ndarray,
    device: str = "cpu",
    legal: np.ndarray | None = None,
    value_weight: float = 1.0,
) -> tuple[float, float]:
    """One SGD step on value_weight (z - v)^2 + cross-entropy(pi, p); returns (value loss,
    policy loss). With `legal`, p is the softmax over those placements only (the search
    renormalises the priors over the legal moves, so the network need not learn which are
    illegal); without it, over all 30,433 (the paper's). A value weight below the paper's 1
    keeps the value head from memorising the outcomes of the few games in a small buffer
    (AlphaGo's reason for sampling one position per game)."""
    model.train()
    x = torch.from_numpy(planes).to(device).view(-1, N_PLANES, 20, 20)
    target_pi = torch.from_numpy(pi).to(device)
    target_z = torch.from_numpy(z).to(device)
    logits, v = model(x)
    if legal is not None:  # a large finite penalty: 0 * log p stays 0 off the legal set
        logits = logits.masked_fill(~torch.from_numpy(legal).to(device), -1e9)
    value_loss = ((target_z - v) ** 2).sum(dim=1).mean()
    policy_loss = -(target_pi * torch.log_softmax(logits, dim=1)).sum(dim=1).mean()
    optimiser.zero_grad(set_to_none=True)
    (value_weight * value_loss + policy_loss).backward()
    optimiser.step()
    return value_loss.item(), policy_loss.item()
