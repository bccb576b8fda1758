"""Hearts speed: rule-based games, Monte Carlo decisions, logged games, FALCON learning.

    .venv/bin/python bench/bench_hearts.py [--games 200000] [--mc-games 2000]
    .venv/bin/python bench/bench_hearts.py --curve 100000 [--readout value|motor]
        [--opponent rule-based|monte-carlo]
    .venv/bin/python bench/bench_hearts.py --svr

Reference in the same run: OpenSpiel's hearts (C++ engine) stepped from Python with random
play, the way a Python pipeline would drive it.
"""

from __future__ import annotations

import argparse
import os
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from _shared import random_play
from numba import njit

from gameforge.engines.hearts.agents import KIND_NAMES, MONTE_CARLO
from gameforge.engines.hearts.falcon import FalconParams
from gameforge.engines.hearts.game import RULE_BASED, Options
from gameforge.engines.hearts.learner import (
    LearnerSettings,
    action_mask,
    make_learner,
    svr_predict,
)
from gameforge.engines.hearts.play import NO_LOG, NO_QS, falcon_games, play_games
from gameforge.stages.hearts import DIM, N_NETWORKS, svr_arrays

OPTS = Options().array()
OPPONENTS = {kind: name for name, kind in KIND_NAMES.items()}


def _games(kinds: list[int], games: int, threads: int, first: int = 0) -> float:
    """Seconds to play `games` games split over threads."""
    k = np.array(kinds, np.int64)
    per = -(-games // threads)

    def work(start: int) -> None:
        n = min(per, games - start)
        play_games(1, first + start, k, OPTS, 200, np.zeros((n, 4), np.int64), NO_LOG, NO_QS)

    t0 = time.perf_counter()
    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(work, range(0, games, per)))
    return time.perf_counter() - t0


def learning_curve(games: int, readout: str, opponent: int = RULE_BASED) -> None:
    """One learner (all 29 actions, per-trick rewards) vs 3 `opponent` agents (the paper:
    rule-based); evaluations of 3,000 games vs rule-based and 1,000 vs Monte Carlo agents."""
    from gameforge.stages.hearts import READOUTS

    params = FalconParams(rho=(0.8, 0.0, 0.5), beta=0.5).array()
    weights = np.ones((N_NETWORKS, 6000, DIM))
    nodes = np.zeros(N_NETWORKS, np.int64)
    model = svr_arrays(None)

    def play(n: int, first: int, learning: bool, opp: int) -> float:
        points = np.zeros((n, 4), np.int64)
        seats = np.zeros(n, np.int64)
        eps = 0.05 if learning else 0.0
        settings = LearnerSettings(learning, eps, readout=READOUTS[readout])
        learner = make_learner(weights, nodes, params, action_mask(False), settings, *model)
        falcon_games(7, first, opp, OPTS, 200, learner, points, seats)
        return float(points[np.arange(n), seats].mean() / 26)

    done = 0
    t0 = time.perf_counter()
    for n in (1000, 10_000, 30_000, 60_000, 100_000):
        if n > games:
            break
        play(n - done, 10**6 + done, True, opponent)
        done = n
        rb = play(3000, 10**8, False, RULE_BASED)
        mc = play(1000, 10**8, False, MONTE_CARLO)
        print(f"{readout} readout, learning vs {OPPONENTS[opponent]}, N = {n:,}: "
              f"vs rule-based {rb:.4f}, vs Monte Carlo {mc:.4f}, "
              f"{nodes.mean():.0f} nodes per network ({time.perf_counter() - t0:.0f} s)",
              flush=True)  # fmt: skip


@njit(cache=True)
def _svr_rowwise(x, group, sv, dual, sv_start, intercept, gamma, lo, hi):  # type: ignore[no-untyped-def]
    """Reference: the same prediction over row-major support vectors (one vector at a time)."""
    z = np.empty(x.shape[0])
    for f in range(x.shape[0]):
        span = hi[group, f] - lo[group, f]
        z[f] = 0.0 if span <= 0 else -1.0 + 2.0 * (x[f] - lo[group, f]) / span
    total = intercept[group]
    for i in range(sv_start[group], sv_start[group + 1]):
        d = 0.0
        for f in range(x.shape[0]):
            diff = sv[i, f] - z[f]
            d += diff * diff
        total += dual[i] * np.exp(-gamma[group] * d)
    return total


def svr_speed(n_sv: int = 9000, n: int = 2000) -> None:
    """nu-SVR predictions per second (27 features, `n_sv` support vectors in the group, the
    paper-scale fit's mean): the engine's feature-major kernel vs the row-major reference."""
    rng = np.random.default_rng(2)
    sv = rng.uniform(-1, 1, (n_sv, 27))
    args = (rng.normal(0, 0.01, n_sv), np.array([0, n_sv], np.int64), np.zeros(1),
            np.full(1, 1 / 27), np.zeros((1, 27)), np.ones((1, 27)))  # fmt: skip
    x = rng.uniform(0, 1, (n, 27))
    sv_t = np.ascontiguousarray(sv.T)
    rates = []
    for kernel, vectors in ((_svr_rowwise, sv), (svr_predict, sv_t)):
        kernel(x[0], 0, vectors, *args)
        t0 = time.perf_counter()
        got = [kernel(row, 0, vectors, *args) for row in x]
        rates.append(n / (time.perf_counter() - t0))
        if kernel is _svr_rowwise:
            want = got
    assert got == want  # the same sums in the same order: bit-identical
    print(f"nu-SVR predictions ({n_sv:,} SVs): feature-major {rates[1]:,.0f}/s, row-major "
          f"reference {rates[0]:,.0f}/s, ratio {rates[1] / rates[0]:.2f}x")  # fmt: skip


def main() -> None:
    """Run every measurement and print a table row per line."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--games", type=int, default=200_000)
    parser.add_argument("--mc-games", type=int, default=2000)
    parser.add_argument("--curve", type=int, default=0, help="learning games for one learner")
    parser.add_argument("--readout", default="value")
    parser.add_argument("--opponent", default="rule-based", choices=["rule-based", "monte-carlo"])
    parser.add_argument("--svr", action="store_true", help="only the nu-SVR prediction speed")
    args = parser.parse_args()
    if args.svr:
        svr_speed()
        return
    if args.curve:
        learning_curve(args.curve, args.readout, KIND_NAMES[args.opponent])
        return
    print(f"{os.cpu_count()} cores")
    _games([1, 1, 1, 1], 100, 1)
    _games([2, 2, 2, 2], 4, 1)  # compile
    for threads in (1, 2):
        dt = _games([RULE_BASED] * 4, args.games, threads, 10**7)
        print(f"4 rule-based, {threads} thread(s): {args.games / dt:,.0f} games/s")
    try:
        import pyspiel

        n, dt = random_play(pyspiel.load_game("hearts", {"pass_cards": False}), 3.0)
        rate = n / dt
        print(f"OpenSpiel hearts, random play from Python: {rate:,.0f} games/s")
    except ImportError:
        print("OpenSpiel not installed")
    for threads in (1, 2):
        dt = _games([MONTE_CARLO] * 4, args.mc_games, threads, 2 * 10**7)
        rate = args.mc_games / dt
        print(
            f"4 Monte Carlo (200 simulations), {threads} thread(s): {rate:,.0f} games/s = "
            f"{52 * rate:,.0f} decisions/s; 100,000 logged games: {100_000 / rate / 60:.1f} min"
        )
    # FALCON learning against rule-based agents, without and with a (random) SVR of 5,000
    # support vectors per group, the size a 10,000-per-label fit gives.
    params = FalconParams().array()
    for svr in (False, True):
        weights = np.ones((N_NETWORKS, 3000, DIM))
        nodes = np.zeros(N_NETWORKS, np.int64)
        model = list(svr_arrays(None))
        if svr:
            rng = np.random.default_rng(1)
            n_sv = 5000
            model[0] = rng.uniform(-1, 1, (N_NETWORKS * n_sv, 27))
            model[1] = rng.normal(0, 0.01, N_NETWORKS * n_sv)
            model[2] = np.arange(0, N_NETWORKS * n_sv + 1, n_sv, dtype=np.int64)
            model[4] = np.full(N_NETWORKS, 1 / 27)
            model[5] = np.zeros((N_NETWORKS, 27))
            model[6] = np.ones((N_NETWORKS, 27))
        n = 5000 if not svr else 500
        t0 = time.perf_counter()
        settings = LearnerSettings(True, 0.05, reward_mode=1, svr_on=svr)
        learner = make_learner(weights, nodes, params, action_mask(False), settings, *model)
        falcon_games(
            3, 0, RULE_BASED, OPTS, 0, learner, np.zeros((n, 4), np.int64), np.zeros(n, np.int64)
        )
        dt = time.perf_counter() - t0
        print(
            f"FALCON learning vs rule-based, SVR {'on (5,000 SVs/group)' if svr else 'off'}: "
            f"{n / dt:,.0f} games/s"
        )


if __name__ == "__main__":
    main()
