"""FALCON's fusion-ART equations on cases worked out by hand."""

from __future__ import annotations

import numpy as np
import pytest

from gameforge.engines.hearts.falcon import FalconBank, FalconParams, learn, resonate, select_action

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


def test_a_full_network_learns_into_its_best_node():
    w = TWO_NODES[:2].copy()  # capacity 2, both committed
    n = learn(w, 2, np.array([0.4]), 0, 2, 1.0, _params((0.99, 0.0, 0.5), beta=1.0))
    assert n == 2
    assert not np.array_equal(w, TWO_NODES[:2])  # one template moved (fast learning)


def test_bank_layout():
    bank = FalconBank(52, 100, 22, 29)
    assert bank.weights.shape == (52, 100, 2 * 22 + 29 + 2)
    assert bank.nodes.tolist() == [0] * 52


# TD-FALCON value readout: node 0 predicts r = 0.9 for action 0, node 1 r = 0.3 for action 1.
VALUE_NODES = np.array(
    [
        [0.2, 0.8, 1.0, 0.0, 0.9, 0.1],
        [0.2, 0.8, 0.0, 1.0, 0.3, 0.7],
        [1.0] * 6,
    ]
)


def test_value_readout_predicts_each_actions_reward():
    from gameforge.engines.hearts.falcon import action_values

    values = np.zeros(2)
    action_values(VALUE_NODES, 2, np.array([0.2]), VALID, 2, _params(), values)
    assert np.allclose(values, [0.9, 0.3])
    # an unknown state (sensory match 0.3 < 0.8) is valued 0.5; invalid actions -1
    action_values(VALUE_NODES, 2, np.array([0.9]), np.array([True, False]), 2, _params(), values)
    assert np.allclose(values, [0.5, -1.0])


def test_value_learning_moves_the_reward_template_toward_r():
    from gameforge.engines.hearts.falcon import action_values, learn_value

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
