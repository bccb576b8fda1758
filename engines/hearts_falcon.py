"""The FALCON Hearts learner: 52 networks, optional nu-SVR guidance, games against agents.

One FALCON per (trick, seat in the trick), network `net_index(trick, position)`. At a decision
the learner perceives the 22 values (`engines.hearts_actions`), its network ranks
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
each action's reward; `engines.falcon.action_values`). The learner's seat rotates with the
game number (seat = game % 4); the other seats are built-in agents.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from engines.falcon import action_values, learn, learn_value, select_action
from engines.hearts import (
    HEARTS,
    PASSING,
    QUEEN_SPADES,
    RULE_BASED,
    apply_passing,
    deal,
    final_points,
    first_leader,
    legal_mask,
    random_card,
    rule_based_card,
    trick_points,
    trick_winner,
)
from engines.hearts_actions import (
    N_ACTIONS,
    N_PERCEPTION,
    card_features,
    fallback_card,
    perception,
    valid_actions,
)
from engines.hearts_agents import MONTE_CARLO, monte_carlo_card
from engines.mccfr import _mix, _uniform

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
    sv: np.ndarray,
    dual: np.ndarray,
    sv_start: np.ndarray,
    intercept: np.ndarray,
    gamma: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
) -> float:
    """An RBF nu-SVR's prediction for raw features x, scaled to [-1, 1] as svm-scale does."""
    z = np.empty(x.shape[0])
    for f in range(x.shape[0]):
        span = hi[group, f] - lo[group, f]
        z[f] = 0.0 if span <= 0 else -1.0 + 2.0 * (x[f] - lo[group, f]) / span
    total = intercept[group]
    g = gamma[group]
    for i in range(sv_start[group], sv_start[group + 1]):
        d = 0.0
        for f in range(x.shape[0]):
            diff = sv[i, f] - z[f]
            d += diff * diff
        total += dual[i] * np.exp(-g * d)
    return total


@njit(cache=True, nogil=True)
def falcon_games(
    seed: int,
    first_game: int,
    opponent: int,
    opts: np.ndarray,
    sims: int,
    weights: np.ndarray,
    nodes: np.ndarray,
    params: np.ndarray,
    mask: np.ndarray,
    learning: bool,
    epsilon: float,
    reward_mode: int,
    readout: int,
    svr_on: bool,
    threshold: float,
    sv: np.ndarray,
    dual: np.ndarray,
    sv_start: np.ndarray,
    intercept: np.ndarray,
    gamma: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
    points: np.ndarray,
    seats: np.ndarray,
) -> None:
    """Play `points.shape[0]` games, the learner against three `opponent` agents."""
    hands = np.zeros(4, dtype=np.int64)
    trick = np.zeros(4, dtype=np.int64)
    taken = np.zeros(4, dtype=np.int64)
    voids = np.zeros(4, dtype=np.int64)
    named = np.zeros(N_ACTIONS, dtype=np.int64)
    valid = np.zeros(N_ACTIONS, dtype=np.bool_)
    order = np.zeros(N_ACTIONS, dtype=np.int64)
    values = np.zeros(N_ACTIONS)
    feel = np.zeros(N_PERCEPTION)
    x = np.zeros(N_FEATURES)
    states = np.zeros((13, N_PERCEPTION))
    acts = np.zeros(13, dtype=np.int64)
    nets = np.zeros(13, dtype=np.int64)
    trick_pts = np.zeros(13, dtype=np.int64)
    decided = np.zeros(13, dtype=np.bool_)
    rng = np.zeros(1, dtype=np.uint64)
    for g in range(points.shape[0]):
        game = first_game + g
        me = game % 4
        seats[g] = me
        deal(seed, game, hands)
        direction = opts[PASSING] if opts[PASSING] < 4 else (game % 4 + 1) % 4
        apply_passing(hands, direction)
        rng[0] = _mix(np.uint64(seed + 91) * np.uint64(0xD1B54A32D192ED03) + np.uint64(game))
        leader = first_leader(hands, opts)
        played = 0
        broken = False
        taken[:] = 0
        voids[:] = 0
        decided[:] = False
        for t in range(13):
            for i in range(4):
                p = (leader + i) % 4
                legal = legal_mask(hands[p], trick, i, t, broken, opts)
                if p == me:
                    k = valid_actions(hands[p], legal, trick, i, played, voids, p, named)
                    n_valid = 0
                    for a in range(N_ACTIONS):
                        valid[a] = named[a] >= 0 and mask[a]
                        if valid[a]:
                            n_valid += 1
                    if k == 0 or n_valid == 0:
                        c = fallback_card(legal)
                    else:
                        perception(feel, hands[p], trick, i, t, played, broken, taken, voids, p,
                                   leader)  # fmt: skip
                        net = net_index(t, i)
                        if readout == 0:
                            ranked = select_action(
                                weights[net], nodes[net], feel, valid, N_ACTIONS, params, order
                            )
                        else:
                            action_values(
                                weights[net], nodes[net], feel, valid, N_ACTIONS, params, values
                            )
                            ranked = 0
                            for a in np.argsort(-values, kind="mergesort"):
                                if valid[a]:
                                    order[ranked] = a
                                    ranked += 1
                        if ranked == 0 or (learning and _uniform(rng) < epsilon):
                            pick = int(_uniform(rng) * n_valid)
                            ranked = 0
                            for a in range(N_ACTIONS):
                                if valid[a]:
                                    if ranked == pick:
                                        order[0] = a
                                    ranked += 1
                            ranked = 1
                        choice = order[0]
                        if svr_on:
                            for r in range(ranked):
                                card_features(x[:5], named[order[r]])
                                x[5:] = feel
                                risk = svr_predict(x, net, sv, dual, sv_start, intercept, gamma,
                                                   lo, hi)  # fmt: skip
                                if risk <= threshold:
                                    choice = order[r]
                                    break
                        c = named[choice]
                        states[t] = feel
                        acts[t] = choice
                        nets[t] = net
                        decided[t] = True
                elif opponent == RULE_BASED:
                    c = rule_based_card(legal, trick, i, played)
                elif opponent == MONTE_CARLO:
                    c = monte_carlo_card(
                        hands[p], legal, trick, i, t, broken, played, voids, p, leader, opts,
                        sims, rng,
                    )  # fmt: skip
                else:
                    c = random_card(legal, rng)
                if i > 0 and c // 13 != trick[0] // 13:
                    voids[p] |= 1 << (trick[0] // 13)
                trick[i] = c
                hands[p] &= ~(1 << c)
                played |= 1 << c
                if c // 13 == HEARTS or c == QUEEN_SPADES:
                    broken = True
            w = trick_winner(trick, leader)
            pts = trick_points(trick, 4)
            taken[w] += pts
            trick_pts[t] = pts if w == me else 0
            leader = w
        final_points(taken, opts, points[g])
        if learning:
            rest = 0
            for t in range(12, -1, -1):
                rest += trick_pts[t]
                if not decided[t]:
                    continue
                trick_r = 1.0 - min(trick_pts[t], 16) / 16.0
                r = trick_r if reward_mode == 0 else 1.0 - rest / 26.0
                net = nets[t]
                if readout == 0:
                    nodes[net] = learn(
                        weights[net], nodes[net], states[t], acts[t], N_ACTIONS, r, params
                    )
                else:
                    nodes[net] = learn_value(
                        weights[net], nodes[net], states[t], acts[t], N_ACTIONS, r, params
                    )
