"""FALCON's fusion-ART equations on cases worked out by hand."""

from __future__ import annotations

import numpy as np
import pytest

from gameforge.engines.hearts.actions import N_ACTIONS, N_PERCEPTION
from gameforge.engines.hearts.falcon import (
    FalconBank,
    FalconParams,
    action_values,
    learn,
    learn_value,
    resonate,
    select_action,
)
from gameforge.engines.hearts.learner import choose_action, learn_game, no_learner

# One perception value (complement-coded to 2), two actions, reward field (r, 1 - r).
# node 0: S (0.2, 0.8), A (1, 0), R (1, 0); node 1: S (0.6, 0.4), A (0, 1), R (1, 0)
TWO_NODES = np.array(
    [
        [0.2, 0.8, 1.0, 0.0, 1.0, 0.0],
        [0.6, 0.4, 0.0, 1.0, 1.0, 0.0],
        [1.0] * 6,
    ]
)
VALID = np.array([True, True])


def _params(rho=(0.8, 0.0, 0.5), beta=0.5) -> np.ndarray:
    return FalconParams(rho=rho, beta=beta).array()


def test_choice_function_by_hand():
    # x = (0.2, 0.8 | 1, 1 | 1, 0): T0 = (1/3)(1/1.1 * 3) = 0.909, T1 = (1/3)(0.6/1.1 + 2/1.1)
    x = np.array([0.2, 0.8, 1.0, 1.0, 1.0, 0.0])
    bounds = np.array([0, 2, 4, 6])
    assert resonate(TWO_NODES, 2, x, bounds, _params(), np.array([True, False, False])) == 0
    x[:2] = (0.6, 0.4)  # now node 1 fits the state exactly
    assert resonate(TWO_NODES, 2, x, bounds, _params(), np.array([True, False, False])) == 1


@pytest.mark.parametrize(("state", "best"), [(0.2, [0, 1]), (0.6, [1, 0])])
def test_action_readout_ranks_the_chosen_nodes_motor_weights(state, best):
    order = np.zeros(2, dtype=np.int64)
    k = select_action(TWO_NODES, 2, np.array([state]), VALID, 2, _params(), order)
    assert k == 2 and order.tolist() == best
    only_second = np.array([False, True])
    k = select_action(TWO_NODES, 2, np.array([state]), only_second, 2, _params(), order)
    assert k == 1 and order[0] == 1


def test_vigilance_with_match_tracking_can_reject_every_node():
    # state 0.4: both nodes match the sensory field at 0.8 (0.2 + 0.6 and 0.4 + 0.4)
    order = np.zeros(2, dtype=np.int64)
    assert select_action(TWO_NODES, 2, np.array([0.4]), VALID, 2, _params((0.75, 0, 0)), order)
    assert select_action(TWO_NODES, 2, np.array([0.4]), VALID, 2, _params((0.9, 0, 0)), order) == 0


def test_learning_resets_then_resonates_and_moves_templates_by_beta():
    """(S=0.2, action 1, r=0.9): node 1 wins the choice (T 0.758 vs 0.576) but fails sensory
    vigilance (0.6 < 0.8); match tracking lifts rho_S to 0.601 and node 0 resonates (S 1.0,
    A 0 >= 0, R 0.9 >= 0.5); with beta 0.5 its A weights become (0.5, 0) and R (0.95, 0)."""
    w = TWO_NODES.copy()
    n = learn(w, 2, np.array([0.2]), 1, 2, 0.9, _params())
    assert n == 2
    assert np.allclose(w[0], [0.2, 0.8, 0.5, 0.0, 0.95, 0.0])
    assert np.array_equal(w[1], TWO_NODES[1])


def test_poor_reward_learns_the_complement_of_the_action_and_commits_new_nodes():
    w = TWO_NODES.copy()
    # rho_S 0.99 and S = 0.4: no node fits, a new one is committed with w = x, where a poor
    # reward (0.2 < 0.5) codes the motor field as "every action but 0".
    n = learn(w, 2, np.array([0.4]), 0, 2, 0.2, _params((0.99, 0.0, 0.5)))
    assert n == 3
    assert np.allclose(w[2], [0.4, 0.6, 0.0, 1.0, 0.2, 0.8])
    # The new node now steers selection away from action 0 for this state.
    order = np.zeros(2, dtype=np.int64)
    assert select_action(w, 3, np.array([0.4]), VALID, 2, _params((0.99, 0, 0)), order) == 2
    assert order.tolist() == [1, 0]


@pytest.mark.parametrize("beta", [0.5, 1.0])
def test_a_full_network_learns_into_its_best_node_past_vigilance(beta):
    """(S=0.5, action 1, r=1) with rho_S 0.99: neither node fits (sensory match 0.7 and 0.9).
    With room, a new node is committed with w = x; in a full network the best choice, node 1
    (T = (0.9 + 1 + 1) / 3.3 against (0.7 + 0 + 1) / 3.3), learns it anyway:
    w <- (1 - beta) w + beta (x ^ w), with x ^ w = (0.5, 0.4 | 0, 1 | 1, 0)."""
    x = np.array([0.5, 0.5, 0.0, 1.0, 1.0, 0.0])
    params = _params((0.99, 0.0, 0.5), beta=beta)
    roomy = TWO_NODES.copy()
    assert learn(roomy, 2, np.array([0.5]), 1, 2, 1.0, params) == 3
    assert np.allclose(roomy[2], x) and np.array_equal(roomy[:2], TWO_NODES[:2])
    full = TWO_NODES[:2].copy()
    assert learn(full, 2, np.array([0.5]), 1, 2, 1.0, params) == 2
    assert np.array_equal(full[0], TWO_NODES[0])
    fuzzy_and = np.minimum(x, TWO_NODES[1])
    assert np.allclose(fuzzy_and, [0.5, 0.4, 0.0, 1.0, 1.0, 0.0])
    assert np.allclose(full[1], (1 - beta) * TWO_NODES[1] + beta * fuzzy_and)


def test_a_fresh_bank_knows_nothing_and_each_network_learns_alone():
    """A bank's networks start empty: no ranking (the caller picks at random) and every action
    valued 0.5. Learning in one network commits its first node with w = (S, 1 - S | one-hot
    action | r, 1 - r) and touches no other network; that network then ranks the action first."""
    bank = FalconBank(52, 100, N_PERCEPTION, N_ACTIONS)
    assert bank.weights.shape == (52, 100, 2 * N_PERCEPTION + N_ACTIONS + 2)
    p = FalconParams().array()
    state = np.linspace(0.0, 1.0, N_PERCEPTION)
    valid = np.ones(N_ACTIONS, np.bool_)
    order = np.zeros(N_ACTIONS, np.int64)
    values = np.zeros(N_ACTIONS)
    net = bank.weights[7]  # a view: the kernels learn in place
    assert select_action(net, bank.nodes[7], state, valid, N_ACTIONS, p, order) == 0
    action_values(net, bank.nodes[7], state, valid, N_ACTIONS, p, values)
    assert (values == 0.5).all()
    bank.nodes[7] = learn(net, bank.nodes[7], state, 3, N_ACTIONS, 0.75, p)
    assert bank.nodes.tolist() == [0] * 7 + [1] + [0] * 44
    want = np.concatenate([state, 1 - state, np.eye(N_ACTIONS)[3], [0.75, 0.25]])
    np.testing.assert_allclose(bank.weights[7, 0], want)
    others = np.ones(52, np.bool_)
    others[7] = False
    assert (bank.weights[others] == 1).all() and (bank.weights[7, 1:] == 1).all()
    assert select_action(net, bank.nodes[7], state, valid, N_ACTIONS, p, order) == N_ACTIONS
    assert order[0] == 3
    assert {n: a.shape for n, a in bank.arrays().items()} == {
        "weights": bank.weights.shape,
        "nodes": (52,),
    }


# TD-FALCON value readout: node 0 predicts r = 0.9 for action 0, node 1 r = 0.3 for action 1.
VALUE_NODES = np.array(
    [
        [0.2, 0.8, 1.0, 0.0, 0.9, 0.1],
        [0.2, 0.8, 0.0, 1.0, 0.3, 0.7],
        [1.0] * 6,
    ]
)


def test_value_readout_predicts_each_actions_reward():
    values = np.zeros(2)
    action_values(VALUE_NODES, 2, np.array([0.2]), VALID, 2, _params(), values)
    assert np.allclose(values, [0.9, 0.3])
    # an unknown state (sensory match 0.3 < 0.8) is valued 0.5; invalid actions -1
    action_values(VALUE_NODES, 2, np.array([0.9]), np.array([True, False]), 2, _params(), values)
    assert np.allclose(values, [0.5, -1.0])


def test_value_learning_moves_the_reward_template_toward_r():
    w = VALUE_NODES.copy()
    # (0.2, action 1, r 0.7), beta 0.5: node 1's R becomes (0.5*0.3 + 0.5*0.7, 0.5*0.7 + 0.5*0.3)
    assert learn_value(w, 2, np.array([0.2]), 1, 2, 0.7, _params()) == 2
    assert np.allclose(w[1], [0.2, 0.8, 0.0, 1.0, 0.5, 0.5])
    assert np.array_equal(w[0], VALUE_NODES[0])  # the other action's node is untouched
    values = np.zeros(2)
    action_values(w, 2, np.array([0.2]), VALID, 2, _params(), values)
    assert np.allclose(values, [0.9, 0.5])
    # a new state commits a new node for that action
    assert learn_value(w, 2, np.array([0.9]), 0, 2, 0.1, _params()) == 3
    assert np.allclose(w[2], [0.9, 0.1, 1.0, 0.0, 0.1, 0.9])


# The Hearts learner around the networks (gameforge.engines.hearts.learner).


def _learner(readout: int, reward_mode: int = 0):
    """A learner with empty networks of capacity 4 over all 29 actions, not exploring."""
    return no_learner()._replace(
        weights=np.ones((52, 4, 2 * N_PERCEPTION + N_ACTIONS + 2)),
        nodes=np.zeros(52, np.int64),
        params=FalconParams().array(),
        mask=np.ones(N_ACTIONS, np.bool_),
        reward_mode=reward_mode,
        readout=readout,
    )


def _choose(lr, state: np.ndarray, valid_actions: list[int], net: int = 5) -> int:
    valid = np.zeros(N_ACTIONS, np.bool_)
    valid[valid_actions] = True
    named = np.arange(N_ACTIONS, dtype=np.int64)  # the card an action names (unused: no SVR)
    rng = np.zeros(1, np.uint64)
    order, values = np.zeros(N_ACTIONS, np.int64), np.zeros(N_ACTIONS)
    x = np.zeros(5 + N_PERCEPTION)
    return int(
        choose_action(lr, state, named, valid, len(valid_actions), net, rng, order, values, x)
    )


def test_value_readout_plays_the_action_with_the_highest_predicted_reward():
    """TD-FALCON readout: actions 2, 5 and 7 learned with rewards 0.2, 0.9 and 0.6 in this
    state, action 10 unknown (0.5): the learner plays the best valid one."""
    lr = _learner(readout=1)
    state = np.linspace(0.1, 0.9, N_PERCEPTION)
    for action, reward in ((2, 0.2), (5, 0.9), (7, 0.6)):
        lr.nodes[5] = learn_value(lr.weights[5], lr.nodes[5], state, action, N_ACTIONS, reward,
                                  lr.params)  # fmt: skip
    assert lr.nodes[5] == 3
    assert _choose(lr, state, [2, 5, 7, 10]) == 5
    assert _choose(lr, state, [2, 7, 10]) == 7
    assert _choose(lr, state, [2, 10]) == 10  # unknown (0.5) beats a known 0.2
    assert _choose(lr, state, [2]) == 2


def test_motor_readout_follows_the_node_learned_for_the_state():
    """Reactive readout: a good outcome (r >= 0.5) of action 4 codes the motor field one-hot,
    so 4 is played; a poor one codes "every action but 4", so 4 is played last."""
    state = np.linspace(0.1, 0.9, N_PERCEPTION)
    good, poor = _learner(readout=0), _learner(readout=0)
    good.nodes[5] = learn(good.weights[5], 0, state, 4, N_ACTIONS, 0.8, good.params)
    poor.nodes[5] = learn(poor.weights[5], 0, state, 4, N_ACTIONS, 0.2, poor.params)
    assert _choose(good, state, [1, 4, 9]) == 4
    assert _choose(poor, state, [4, 9, 12]) == 9  # ties: the lowest action first
    assert _choose(poor, state, [4]) == 4


@pytest.mark.parametrize("reward_mode", [0, 1])
def test_a_finished_game_teaches_each_decision_its_reward(reward_mode):
    """After a game every decided trick t teaches network nets[t] (state, action, r): by trick,
    r = 1 - points / 16 of that trick; by rest of game, r = 1 - points from t on / 26."""
    lr = _learner(readout=1, reward_mode=reward_mode)
    rng = np.random.default_rng(0)
    states = rng.random((13, N_PERCEPTION))
    acts = np.arange(13, dtype=np.int64) + 3
    nets = 4 * np.arange(13, dtype=np.int64) + 1  # the learner sat second in every trick
    trick_pts = np.zeros(13, np.int64)
    trick_pts[[0, 1, 2, 12]] = [1, 13, 3, 9]
    decided = np.zeros(13, np.bool_)
    decided[:3] = True  # decisions in the first three tricks only
    learn_game(lr, states, acts, nets, trick_pts, decided)
    if reward_mode == 0:
        rewards = [1 - 1 / 16, 1 - 13 / 16, 1 - 3 / 16]
    else:
        rewards = [1 - 26 / 26, 1 - 25 / 26, 1 - 12 / 26]
    m2 = 2 * N_PERCEPTION
    for t, r in enumerate(rewards):
        assert lr.nodes[nets[t]] == 1
        w = lr.weights[nets[t], 0]
        np.testing.assert_allclose(w[:m2], np.concatenate([states[t], 1 - states[t]]))
        assert w[m2 : m2 + N_ACTIONS].tolist() == np.eye(N_ACTIONS)[acts[t]].tolist()
        np.testing.assert_allclose(w[m2 + N_ACTIONS :], [r, 1 - r])
    assert lr.nodes.sum() == 3  # undecided tricks teach nothing
