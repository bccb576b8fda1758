"""The one Hearts game loop, for every seat kind: random, rule-based, Monte Carlo and FALCON.

`play` deals, passes and plays the tricks; each seat's card comes from its kind. A FALCON seat
(the learner, `hearts.learner`) records its decisions and, when learning, learns them
after the game. `play_games` (built-in agents, optionally logging every decision for the SVR)
and `falcon_games` (the learner against three built-in agents, its seat rotating with the game
number) are the two ways the stages call it.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from gameforge.engines.common.rng import mix
from gameforge.engines.hearts.actions import (
    N_ACTIONS,
    N_PERCEPTION,
    fallback_card,
    perception,
    valid_actions,
)
from gameforge.engines.hearts.agents import MONTE_CARLO, monte_carlo_card
from gameforge.engines.hearts.game import (
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
from gameforge.engines.hearts.learner import (
    N_FEATURES,
    Learner,
    choose_action,
    learn_game,
    net_index,
    no_learner,
)

FALCON = 3
LOG_WIDTH = 5 + N_PERCEPTION  # game, seat, trick, position, card, then the perception values
ROTATE = 4  # learner_seat: the learner sits at seat game % 4
NO_LOG = np.zeros((0, LOG_WIDTH), np.float32)
NO_QS = np.zeros((0, 2), np.int64)
NO_SEATS = np.zeros(0, np.int64)
# Each entry point keeps its own random stream, so stored results stay reproducible.
AGENT_SALT = 77
LEARNER_SALT = 91


@njit(cache=True, nogil=True)
def play(
    seed: int,
    salt: int,
    first_game: int,
    kinds: np.ndarray,
    learner_seat: int,
    lr: Learner,
    opts: np.ndarray,
    sims: int,
    points: np.ndarray,
    seats: np.ndarray,
    log: np.ndarray,
    qs_taker: np.ndarray,
) -> int:
    """Play games first_game.. (`points.shape[0]` of them); returns the log rows written.

    Seat s plays `kinds[s]`, except the learner's seat (`learner_seat` 0..3, `ROTATE`, or -1 for
    none), which is FALCON and is written to seats[g]. Writes points[g, seat]. With a non-empty
    `log` (rows of `LOG_WIDTH` float32) every decision is logged as (game index in this call,
    seat, trick, position, card, perception...) and qs_taker[g] = (seat, trick) of who took Q♠.
    """
    hands = np.zeros(4, dtype=np.int64)
    trick = np.zeros(4, dtype=np.int64)
    taken = np.zeros(4, dtype=np.int64)
    voids = np.zeros(4, dtype=np.int64)
    feel = np.zeros(N_PERCEPTION)
    rng = np.zeros(1, dtype=np.uint64)
    named = np.zeros(N_ACTIONS, dtype=np.int64)
    valid = np.zeros(N_ACTIONS, dtype=np.bool_)
    order = np.zeros(N_ACTIONS, dtype=np.int64)
    values = np.zeros(N_ACTIONS)
    x = np.zeros(N_FEATURES)
    states = np.zeros((13, N_PERCEPTION))  # the learner's decisions in this game
    acts = np.zeros(13, dtype=np.int64)
    nets = np.zeros(13, dtype=np.int64)
    trick_pts = np.zeros(13, dtype=np.int64)
    decided = np.zeros(13, dtype=np.bool_)
    rows = 0
    logging = log.shape[0] > 0
    for g in range(points.shape[0]):
        game = first_game + g
        me = game % 4 if learner_seat == ROTATE else learner_seat
        if me >= 0:
            seats[g] = me
        deal(seed, game, hands)
        direction = opts[PASSING] if opts[PASSING] < 4 else (game % 4 + 1) % 4
        apply_passing(hands, direction)
        rng[0] = mix(np.uint64(seed + salt) * np.uint64(0xD1B54A32D192ED03) + np.uint64(game))
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
                kind = FALCON if p == me else kinds[p]
                if kind == FALCON:
                    k = valid_actions(hands[p], legal, trick, i, played, voids, p, named)
                    n_valid = 0
                    for a in range(N_ACTIONS):
                        valid[a] = named[a] >= 0 and lr.mask[a]
                        if valid[a]:
                            n_valid += 1
                    if k == 0 or n_valid == 0:
                        c = fallback_card(legal)
                    else:
                        perception(feel, hands[p], trick, i, t, played, broken, taken, voids, p,
                                   leader)  # fmt: skip
                        net = net_index(t, i)
                        choice = choose_action(lr, feel, named, valid, n_valid, net, rng, order,
                                               values, x)  # fmt: skip
                        c = named[choice]
                        states[t] = feel
                        acts[t] = choice
                        nets[t] = net
                        decided[t] = True
                elif kind == RULE_BASED:
                    c = rule_based_card(legal, trick, i, played)
                elif kind == MONTE_CARLO:
                    c = monte_carlo_card(
                        hands[p], legal, trick, i, t, broken, played, voids, p, leader, opts,
                        sims, rng,
                    )  # fmt: skip
                else:
                    c = random_card(legal, rng)
                if logging:
                    perception(feel, hands[p], trick, i, t, played, broken, taken, voids, p, leader)
                    log[rows, 0] = g
                    log[rows, 1] = p
                    log[rows, 2] = t
                    log[rows, 3] = i
                    log[rows, 4] = c
                    log[rows, 5:] = feel
                    rows += 1
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
            if logging:
                for i in range(4):
                    if trick[i] == QUEEN_SPADES:
                        qs_taker[g, 0] = w
                        qs_taker[g, 1] = t
            leader = w
        final_points(taken, opts, points[g])
        if me >= 0 and lr.learning:
            learn_game(lr, states, acts, nets, trick_pts, decided)
    return rows


_NO_LEARNER = no_learner()


def play_games(
    seed: int,
    first_game: int,
    kinds: np.ndarray,
    opts: np.ndarray,
    sims: int,
    points: np.ndarray,
    log: np.ndarray = NO_LOG,
    qs_taker: np.ndarray = NO_QS,
) -> int:
    """Built-in agents `kinds[seat]` play `points.shape[0]` games (see `play` for the log)."""
    return int(
        play(
            seed,
            AGENT_SALT,
            first_game,
            kinds,
            -1,
            _NO_LEARNER,
            opts,
            sims,
            points,
            NO_SEATS,
            log,
            qs_taker,
        )  # fmt: skip
    )


def falcon_games(
    seed: int,
    first_game: int,
    opponent: int,
    opts: np.ndarray,
    sims: int,
    learner: Learner,
    points: np.ndarray,
    seats: np.ndarray,
) -> None:
    """The learner against three `opponent` agents, its seat rotating (seats[g] = game % 4)."""
    kinds = np.full(4, opponent, np.int64)
    play(seed, LEARNER_SALT, first_game, kinds, ROTATE, learner, opts, sims, points, seats,
         NO_LOG, NO_QS)  # fmt: skip
