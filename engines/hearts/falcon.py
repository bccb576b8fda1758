"""FALCON (Tan's fusion ART) for reinforcement learning, in numba.

Three input fields feed one cognitive field of category nodes:

- sensory S: the M perception values, complement-coded to (s, 1 - s);
- motor A: one value per action (one-hot for a performed action);
- feedback R: (r, 1 - r) for a reward r in [0, 1].

Node j holds a weight vector per field, w_j^k in [0, 1]. For an input x = (x^S, x^A, x^R):

- choice: T_j = sum_k gamma_k |x^k ^ w_j^k| / (alpha_k + |w_j^k|), with ^ the fuzzy AND
  (element-wise minimum) and |.| the L1 norm; the node with the largest T_j is tried first;
- vigilance: node J resonates when m_J^k = |x^k ^ w_J^k| / |x^k| >= rho_k in every field;
  otherwise it is reset and, by match tracking, rho_S rises to m_J^S + epsilon for the rest of
  this search; if no committed node resonates, a new node is committed with w = x;
- learning: w_J^k <- (1 - beta) w_J^k + beta (x^k ^ w_J^k).

Action selection (reactive FALCON): present S with A = all ones and R = (1, 0) (the best
reward); the chosen node's motor weights are read out and the valid action with the largest
weight is taken. With no committed node that passes the sensory vigilance, the choice falls back
to a uniformly random valid action. Learning after feedback r: A is the performed action's
one-hot vector when r >= 0.5, otherwise its complement (every other action), so a node learns to
avoid actions that led to poor outcomes; R = (r, 1 - r).

A `FalconBank` holds many independent networks of a fixed capacity in flat arrays (the Hearts
learner uses 52: one per trick and seat in the trick); when a network is full, learning goes to
its best-resonating node with vigilance ignored.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

EPSILON = 1e-3  # match-tracking increment


@dataclass(frozen=True)
class FalconParams:
    """Choice (alpha), contribution (gamma), vigilance (rho), learning rate (beta) per field."""

    alpha: tuple[float, float, float] = (0.1, 0.1, 0.1)
    gamma: tuple[float, float, float] = (1.0 / 3, 1.0 / 3, 1.0 / 3)
    rho: tuple[float, float, float] = (0.8, 0.0, 0.5)
    beta: float = 0.5

    def array(self) -> np.ndarray:
        """[alpha(3), gamma(3), rho(3), beta] for the kernels."""
        return np.array([*self.alpha, *self.gamma, *self.rho, self.beta], dtype=np.float64)


@njit(cache=True, nogil=True)
def _fuzzy(x: np.ndarray, w: np.ndarray, lo: int, hi: int) -> tuple[float, float]:
    inter = 0.0
    norm_w = 0.0
    for i in range(lo, hi):
        a = x[i]
        b = w[i]
        inter += a if a < b else b
        norm_w += b
    return inter, norm_w


@njit(cache=True, nogil=True)
def _norm(x: np.ndarray, lo: int, hi: int) -> float:
    s = 0.0
    for i in range(lo, hi):
        s += x[i]
    return s


@njit(cache=True, nogil=True, inline="always")
def _fields(n_state: int, n_actions: int) -> np.ndarray:
    """[0, end of S, end of A, end of R] of an input: n_state sensory values complement-coded,
    n_actions motor values, the reward pair."""
    m2 = 2 * n_state
    return np.array([0, m2, m2 + n_actions, m2 + n_actions + 2])


@njit(cache=True, nogil=True, inline="always")
def _value_params(p: np.ndarray) -> np.ndarray:
    """TD-FALCON's parameters: the motor field must match the action exactly (vigilance 1) and
    the reward field takes no part in the choice."""
    q = p.copy()
    q[7] = 1.0
    q[5] = 0.0
    return q


@njit(cache=True, nogil=True, inline="always")
def _new_node(weights: np.ndarray, n_nodes: int, x: np.ndarray) -> bool:
    """Commit x as node n_nodes if the network has room; whether it did."""
    if n_nodes < weights.shape[0]:
        weights[n_nodes, : x.shape[0]] = x
        return True
    return False


@njit(cache=True, nogil=True, inline="always")
def _move_toward(w: np.ndarray, x: np.ndarray, lo: int, hi: int, beta: float, fuzzy: bool) -> None:
    """w[lo:hi] moves at rate beta toward min(x, w) (fuzzy ART), or toward x."""
    for i in range(lo, hi):
        v = (x[i] if x[i] < w[i] else w[i]) if fuzzy else x[i]
        w[i] = (1.0 - beta) * w[i] + beta * v


@njit(cache=True, nogil=True)
def resonate(
    weights: np.ndarray,
    n_nodes: int,
    x: np.ndarray,
    bounds: np.ndarray,
    p: np.ndarray,
    use_vigilance: np.ndarray,
) -> int:
    """Index of the resonating node for input x, or -1 (none passes vigilance).

    `bounds` = [0, end of S, end of A, end of R]; `p` = FalconParams.array(); fields with
    `use_vigilance[k]` false are not tested (action selection tests the sensory field only).
    """
    if n_nodes == 0:
        return -1
    choice = np.empty(n_nodes)
    match = np.empty((n_nodes, 3))
    norms = np.empty(3)
    for k in range(3):
        norms[k] = max(_norm(x, bounds[k], bounds[k + 1]), 1e-12)
    for j in range(n_nodes):
        t = 0.0
        for k in range(3):
            inter, nw = _fuzzy(x, weights[j], bounds[k], bounds[k + 1])
            t += p[3 + k] * inter / (p[k] + nw)
            match[j, k] = inter / norms[k]
        choice[j] = t
    rho_s = p[6]
    for _ in range(n_nodes):
        best = -1
        for j in range(n_nodes):
            if choice[j] >= 0 and (best < 0 or choice[j] > choice[best]):
                best = j
        if best < 0:
            return -1
        ok = True
        for k in range(3):
            rho = rho_s if k == 0 else p[6 + k]
            if use_vigilance[k] and match[best, k] < rho:
                ok = False
        if ok:
            return best
        choice[best] = -1.0
        if use_vigilance[0]:
            rho_s = max(rho_s, match[best, 0] + EPSILON)  # match tracking
    return -1


@njit(cache=True, nogil=True)
def complement_code(out: np.ndarray, s: np.ndarray) -> None:
    """out = (s, 1 - s)."""
    m = s.shape[0]
    for i in range(m):
        out[i] = s[i]
        out[m + i] = 1.0 - s[i]


@njit(cache=True, nogil=True)
def select_action(
    weights: np.ndarray,
    n_nodes: int,
    state: np.ndarray,
    valid: np.ndarray,
    n_actions: int,
    p: np.ndarray,
    order: np.ndarray,
) -> int:
    """Fill `order` with the valid actions from best to worst; returns how many there are.

    The ranking is the resonating node's motor weights (ties: lower index first); with no
    resonating node `order` is left for the caller to fill (returns 0).
    """
    bounds = _fields(state.shape[0], n_actions)
    m2 = bounds[1]
    x = np.ones(bounds[3])
    complement_code(x[:m2], state)
    x[m2 + n_actions] = 1.0
    x[m2 + n_actions + 1] = 0.0
    j = resonate(weights, n_nodes, x, bounds, p, np.array([True, False, False]))
    if j < 0:
        return 0
    k = 0
    for a in range(n_actions):
        if valid[a]:
            order[k] = a
            k += 1
    # insertion sort by descending weight (stable: lower index first on ties)
    for i in range(1, k):
        a = order[i]
        w = weights[j, m2 + a]
        q = i - 1
        while q >= 0 and weights[j, m2 + order[q]] < w:
            order[q + 1] = order[q]
            q -= 1
        order[q + 1] = a
    return k


@njit(cache=True, nogil=True)
def _learning_input(
    state: np.ndarray, action: int, n_actions: int, reward: float, avoid: bool
) -> np.ndarray:
    """(S complement-coded, A, (r, 1 - r)); A is one-hot, or its complement when `avoid`."""
    m2 = state.shape[0] * 2
    x = np.empty(m2 + n_actions + 2)
    complement_code(x[:m2], state)
    for a in range(n_actions):
        x[m2 + a] = 1.0 if (a == action) != avoid else 0.0
    x[m2 + n_actions] = reward
    x[m2 + n_actions + 1] = 1.0 - reward
    return x


@njit(cache=True, nogil=True)
def learn(
    weights: np.ndarray,
    n_nodes: int,
    state: np.ndarray,
    action: int,
    n_actions: int,
    reward: float,
    p: np.ndarray,
) -> int:
    """One learning step for (state, action, reward); returns the new node count."""
    bounds = _fields(state.shape[0], n_actions)
    x = _learning_input(state, action, n_actions, reward, reward < 0.5)
    j = resonate(weights, n_nodes, x, bounds, p, np.array([True, True, True]))
    if j < 0 and _new_node(weights, n_nodes, x):
        return n_nodes + 1
    if j < 0:
        j = resonate(weights, n_nodes, x, bounds, p, np.array([False, False, False]))
    _move_toward(weights[j], x, 0, bounds[3], p[9], True)
    return n_nodes


class FalconBank:
    """`networks` independent FALCONs of `capacity` nodes each, as arrays."""

    def __init__(self, networks: int, capacity: int, n_state: int, n_actions: int):
        self.n_state = n_state
        self.n_actions = n_actions
        self.weights = np.ones((networks, capacity, 2 * n_state + n_actions + 2))
        self.nodes = np.zeros(networks, dtype=np.int64)

    def arrays(self) -> dict[str, np.ndarray]:
        """What the store keeps."""
        return {"weights": self.weights, "nodes": self.nodes}


@njit(cache=True, nogil=True)
def action_values(
    weights: np.ndarray,
    n_nodes: int,
    state: np.ndarray,
    valid: np.ndarray,
    n_actions: int,
    p: np.ndarray,
    values: np.ndarray,
) -> None:
    """TD-FALCON readout: each valid action's predicted reward (0.5 when no node knows it).

    For action a the input is (S, one-hot a, R = (1, 1)); the node that resonates on the
    sensory and motor fields predicts r as w^R_0 / (w^R_0 + w^R_1) (its reward template,
    complement-normalised).
    """
    bounds = _fields(state.shape[0], n_actions)
    m2 = bounds[1]
    x = np.empty(bounds[3])
    complement_code(x[:m2], state)
    use = np.array([True, True, False])
    q = _value_params(p)
    for a in range(n_actions):
        values[a] = -1.0
        if not valid[a]:
            continue
        for b in range(n_actions):
            x[m2 + b] = 1.0 if b == a else 0.0
        x[m2 + n_actions] = 1.0
        x[m2 + n_actions + 1] = 1.0
        j = resonate(weights, n_nodes, x, bounds, q, use)
        if j < 0:
            values[a] = 0.5
        else:
            w0 = weights[j, m2 + n_actions]
            w1 = weights[j, m2 + n_actions + 1]
            values[a] = w0 / (w0 + w1) if w0 + w1 > 0 else 0.5


@njit(cache=True, nogil=True)
def learn_value(
    weights: np.ndarray,
    n_nodes: int,
    state: np.ndarray,
    action: int,
    n_actions: int,
    reward: float,
    p: np.ndarray,
) -> int:
    """TD-FALCON learning of (state, one-hot action, (r, 1 - r)); returns the node count.

    The motor field must match exactly (vigilance 1), so each node predicts one action's
    reward; the reward template moves toward (r, 1 - r) at rate beta: r is overwritten, not
    intersected, since a value estimate must be able to rise again.
    """
    bounds = _fields(state.shape[0], n_actions)
    x = _learning_input(state, action, n_actions, reward, False)
    q = _value_params(p)
    j = resonate(weights, n_nodes, x, bounds, q, np.array([True, True, False]))
    if j < 0 and _new_node(weights, n_nodes, x):
        return n_nodes + 1
    if j < 0:
        j = resonate(weights, n_nodes, x, bounds, q, np.array([False, True, False]))
        if j < 0:
            return n_nodes
    _move_toward(weights[j], x, 0, bounds[1], p[9], True)
    _move_toward(weights[j], x, bounds[2], bounds[3], p[9], False)
    return n_nodes
