"""The FALCON Hearts learner: 52 networks, optional nu-SVR guidance, games against agents.

One FALCON per (trick, seat in the trick), network `net_index(trick, position)`. At a decision
the learner perceives the 22 values (`gameforge.engines.hearts.actions`), its network ranks
the valid actions of its role, and the card of the first one is played. With SVR guidance the
ranked actions are tried in order and the first whose predicted DegSQ (the risk of taking Q♠ in
this or a later trick) is at most `threshold` is played; if every one exceeds it, the first.
During learning an epsilon share of decisions is a random valid action, and after the game
every decision is learned with its reward:

- `reward_mode` 0 (trick): r = 1 - (points the learner took in that trick) / 16;
- `reward_mode` 1 (rest of game): r = 1 - (points it took from that trick to the end) / 26.

`action_mask` restricts the learner to a subset of the 29 actions (the "previous action set").
`readout` 0 is the paper's reactive FALCON (rank by the chosen node's motor template); 1 is
TD-FALCON's value readout (rank actions by the reward their resonating nodes predict, learn
each action's reward; `hearts.falcon.action_values`). The games themselves are played by
`gameforge.engines.hearts.play`, where the learner is one more seat kind.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from numba import njit

from gameforge.engines.common.rng import uniform
from gameforge.engines.hearts.actions import N_ACTIONS, N_PERCEPTION, card_features
from gameforge.engines.hearts.falcon import action_values, learn, learn_value, select_action

N_NETWORKS = 52
N_FEATURES = 5 + N_PERCEPTION  # the SVR's inputs

# The "previous action set": the rules built on card strength and point cards alone, without
# the void / smoke-out / cash / exit / spear-play techniques (our reconstruction; the earlier
# papers' exact list is not in the seed paper).
PREVIOUS_ACTIONS = (0, 7, 8, 9, 14, 17, 19, 20, 22, 23, 25, 28)


def action_mask(previous: bool) -> np.ndarray:
    """All 29 actions, or the previous action set."""
    mask = np.zeros(N_ACTIONS, dtype=np.bool_)
    if previous:
        mask[list(PREVIOUS_ACTIONS)] = True
    else:
        mask[:] = True
    return mask


@njit(cache=True, nogil=True, inline="always")
def net_index(trick: int, position: int) -> int:
    """The network of trick `trick` (0..12) and seat in the trick `position` (0 = leader)."""
    return 4 * trick + position


@njit(cache=True, nogil=True)
def svr_predict(
    x: np.ndarray,
    group: int,
    sv_t: np.ndarray,
    dual: np.ndarray,
    sv_start: np.ndarray,
    intercept: np.ndarray,
    gamma: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
) -> float:
    """An RBF nu-SVR's prediction for raw features x, scaled to [-1, 1] as svm-scale does.

    `sv_t` holds the support vectors feature-major ([features, vectors]) so the squared
    distances accumulate over all of a group's vectors at once (a loop numba vectorises); each
    distance still adds its features in order, so the result is that of the row-wise sum."""
    a, b = sv_start[group], sv_start[group + 1]
    dist = np.zeros(b - a)
    for f in range(x.shape[0]):
        span = hi[group, f] - lo[group, f]
        z = 0.0 if span <= 0 else -1.0 + 2.0 * (x[f] - lo[group, f]) / span
        row = sv_t[f, a:b]
        for i in range(b - a):
            diff = row[i] - z
            dist[i] += diff * diff
    total = intercept[group]
    g = gamma[group]
    for i in range(b - a):
        total += dual[a + i] * np.exp(-g * dist[i])
    return total


class Learner(NamedTuple):
    """A FALCON learner's networks, settings and (optional) SVR model, as numba takes them."""

    weights: np.ndarray  # [52, capacity, DIM]
    nodes: np.ndarray  # committed nodes per network
    params: np.ndarray  # gameforge.engines.hearts.falcon.FalconParams.array()
    mask: np.ndarray  # the actions it may use (`action_mask`)
    learning: bool
    epsilon: float  # share of random valid actions while learning
    reward_mode: int  # 0 trick, 1 rest of game
    readout: int  # 0 reactive (motor template), 1 TD-FALCON value
    svr_on: bool
    threshold: float  # the SVR's DegSQ threshold
    sv_t: np.ndarray  # the SVR model: support vectors of all 52 groups, stacked, feature-major
    dual: np.ndarray
    sv_start: np.ndarray
    intercept: np.ndarray
    gamma: np.ndarray
    lo: np.ndarray  # svm-scale's per-feature minimum and maximum
    hi: np.ndarray


@dataclass(frozen=True)
class LearnerSettings:
    """How a learner plays and learns: learning on or off, its exploration share, reward mode,
    readout, and whether SVR guidance is on with which DegSQ threshold (defaults: none of it)."""

    learning: bool = False
    epsilon: float = 0.0  # share of random valid actions while learning
    reward_mode: int = 0  # 0 trick, 1 rest of game
    readout: int = 0  # 0 reactive (motor template), 1 TD-FALCON value
    svr_on: bool = False
    threshold: float = 0.0  # the SVR's DegSQ threshold


def make_learner(
    weights: np.ndarray,
    nodes: np.ndarray,
    params: np.ndarray,
    mask: np.ndarray,
    settings: LearnerSettings,
    *model: np.ndarray,
) -> Learner:
    """A Learner with its scalars cast to the types the game loop is compiled for; `model` is
    (support vectors row-wise, dual, sv_start, intercept, gamma, lo, hi) as hearts-svr stores it."""
    support, *rest = model
    st = settings
    return Learner(
        weights, nodes, params, mask, bool(st.learning), float(st.epsilon), int(st.reward_mode),
        int(st.readout), bool(st.svr_on), float(st.threshold), np.ascontiguousarray(support.T),
        *rest,
    )  # fmt: skip


def no_learner() -> Learner:
    """The placeholder for games without a learner seat."""
    z2 = np.zeros((0, N_FEATURES))
    scale = np.zeros((N_NETWORKS, N_FEATURES))
    return make_learner(
        np.ones((N_NETWORKS, 1, 2 * N_PERCEPTION + N_ACTIONS + 2)), np.zeros(N_NETWORKS, np.int64),
        np.zeros(10), np.zeros(N_ACTIONS, np.bool_), LearnerSettings(),
        z2, np.zeros(0), np.zeros(N_NETWORKS + 1, np.int64), np.zeros(N_NETWORKS),
        np.zeros(N_NETWORKS), scale, scale,
    )  # fmt: skip


@njit(cache=True, nogil=True)
def choose_action(
    lr: Learner,
    feel: np.ndarray,
    named: np.ndarray,
    valid: np.ndarray,
    n_valid: int,
    net: int,
    rng: np.ndarray,
    order: np.ndarray,
    values: np.ndarray,
    x: np.ndarray,
) -> int:
    """The learner's action: its network's ranking, epsilon exploration, then the SVR filter."""
    if lr.readout == 0:
        ranked = select_action(lr.weights[net], lr.nodes[net], feel, valid, N_ACTIONS, lr.params,
                               order)  # fmt: skip
    else:
        action_values(lr.weights[net], lr.nodes[net], feel, valid, N_ACTIONS, lr.params, values)
        ranked = 0
        for a in np.argsort(-values, kind="mergesort"):
            if valid[a]:
                order[ranked] = a
                ranked += 1
    if ranked == 0 or (lr.learning and uniform(rng) < lr.epsilon):
        pick = int(uniform(rng) * n_valid)
        ranked = 0
        for a in range(N_ACTIONS):
            if valid[a]:
                if ranked == pick:
                    order[0] = a
                ranked += 1
        ranked = 1
    choice = order[0]
    if lr.svr_on:
        risk_of = np.full(52, np.nan)  # several actions can name the same card
        for r in range(ranked):
            card = named[order[r]]
            if np.isnan(risk_of[card]):
                card_features(x[:5], card)
                x[5:] = feel
                risk_of[card] = svr_predict(x, net, lr.sv_t, lr.dual, lr.sv_start, lr.intercept,
                                            lr.gamma, lr.lo, lr.hi)  # fmt: skip
            risk = risk_of[card]
            if risk <= lr.threshold:
                choice = order[r]
                break
    return choice


@njit(cache=True, nogil=True)
def learn_game(
    lr: Learner,
    states: np.ndarray,
    acts: np.ndarray,
    nets: np.ndarray,
    trick_pts: np.ndarray,
    decided: np.ndarray,
) -> None:
    """Learn every decision of a finished game with its reward (see the module docstring)."""
    rest = 0
    for t in range(12, -1, -1):
        rest += trick_pts[t]
        if not decided[t]:
            continue
        trick_r = 1.0 - min(trick_pts[t], 16) / 16.0
        r = trick_r if lr.reward_mode == 0 else 1.0 - rest / 26.0
        net = nets[t]
        if lr.readout == 0:
            lr.nodes[net] = learn(
                lr.weights[net], lr.nodes[net], states[t], acts[t], N_ACTIONS, r, lr.params
            )
        else:
            lr.nodes[net] = learn_value(
                lr.weights[net], lr.nodes[net], states[t], acts[t], N_ACTIONS, r, lr.params
            )
