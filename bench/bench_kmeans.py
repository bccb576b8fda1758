"""EMD k-means iteration time: pruned (Yinyang groups, and Hamerly) vs naive, 1 and 2 threads.

Data: ``n`` random HSD-like 50-bin histograms (each a mixture of two Beta densities with random
parameters, 1,081 multinomial draws: the river roll-outs of a flop hand), as CDF rows. Seeds
with the engine's k-means++ (sampled when n > 50 k), then times ``--iters`` full iterations
(assignment + centroid update) per configuration, from the same initial centroids, and one
naive iteration (every point-centre distance, same numba scan, no bounds); every time is the
best of 2 runs. Prints markdown tables, then an extrapolation to the flop round
(n = 1,286,792, k = 9,000).

    python bench/bench_kmeans.py [--n 200000] [--k 1000] [--iters 5]
"""

from __future__ import annotations

import argparse
import os
import platform
import time

import numba
import numpy as np

from gameforge.engines.common import emd
from gameforge.engines.common import kmeans as km

FLOP_N, FLOP_K = 1_286_792, 9_000


def cpu_name() -> str:
    """CPU model from /proc/cpuinfo where there is one."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "cpu"


def hsd_histograms(n: int, bins: int = 50, draws: int = 1081, seed: int = 0) -> np.ndarray:
    """Random hand-strength-distribution-like histograms of counts, (n, bins) int64."""
    rng = np.random.default_rng(seed)
    x = (np.arange(bins) + 0.5) / bins

    def beta(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        p = x[None] ** (a[:, None] - 1) * (1 - x[None]) ** (b[:, None] - 1)
        return p / p.sum(axis=1, keepdims=True)

    a1, b1, a2, b2 = (rng.uniform(0.5, 8, n) for _ in range(4))
    mix = rng.uniform(0, 1, n)[:, None]
    return rng.multinomial(draws, mix * beta(a1, b1) + (1 - mix) * beta(a2, b2))


def run(
    X: np.ndarray, C0: np.ndarray, iters: int, threads: int, groups: int, repeats: int = 2
) -> tuple[km.KMeansState, list[float]]:
    """``iters`` iterations from ``C0``, ``repeats`` times: the state, best seconds per iteration.

    The machine is shared, so the best of the repeats is the least disturbed measurement.
    """
    best: list[float] = []
    state = None
    for _ in range(repeats):
        state = km.KMeansState.initial(C0, X.shape[0], "emd", n_groups=groups)
        seconds = []
        for _ in range(iters):
            t0 = time.perf_counter()
            state = km.kmeans_step(X, state, "emd", n_threads=threads, inplace=True)
            seconds.append(time.perf_counter() - t0)
        best = seconds if not best else [min(a, b) for a, b in zip(best, seconds)]
    assert state is not None
    return state, best


def naive_seconds(X: np.ndarray, state: km.KMeansState, threads: int, repeats: int = 2) -> float:
    """Best time of one unpruned iteration from ``state``."""
    best = np.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        km.kmeans_step(X, state, "emd", n_threads=threads, prune=False)
        best = min(best, time.perf_counter() - t0)
    return float(best)


def main() -> None:
    """Benchmark and print the tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=200_000)
    parser.add_argument("--k", type=int, default=1_000)
    parser.add_argument("--iters", type=int, default=5)
    args = parser.parse_args()
    n, k, iters = args.n, args.k, args.iters
    groups = km.default_groups(k)

    X = emd.cumulative(hsd_histograms(n))
    km.kmeans_step(X[:2000], km.KMeansState.initial(X[:20], 2000, "emd"), "emd")  # warm numba
    t0 = time.perf_counter()
    C0 = km.kmeanspp_init(X, k, "emd", seed=0)
    t_init = time.perf_counter() - t0

    yy1, t1 = run(X, C0, iters, 1, groups)
    yy2, t2 = run(X, C0, iters, 2, groups)
    assert np.array_equal(yy1.labels, yy2.labels) and np.array_equal(yy1.objective, yy2.objective)
    ham, th = run(X, C0, iters, 1, 1, repeats=1)
    assert np.array_equal(yy1.labels, ham.labels)
    naive1 = naive_seconds(X, yy1, 1)
    naive2 = naive_seconds(X, yy1, 2)

    print(
        f"n = {n:,}, k = {k:,}, d = {X.shape[1]}, metric emd; {cpu_name()}, "
        f"{os.cpu_count()} cores, numpy {np.__version__}, numba {numba.__version__}\n"
        f"k-means++ seeding (greedy, {2 + int(np.log(k))} trials, sampled when n > 50 k): "
        f"{t_init:.2f} s\n"
    )
    print(
        f"Pruned iterations: Yinyang with {groups} groups (1 and 2 threads), "
        "Hamerly (1 group, 1 run)."
    )
    print(f"Naive iteration (no bounds): {naive1:.3f} s (1 thread), {naive2:.3f} s (2 threads).\n")
    print(
        "| iteration | skipped (Yinyang) | 1 thread s | 2 threads s | naive/pruned (1 thr) "
        "| skipped (Hamerly) | Hamerly 1 thread s | changed |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    for i in range(iters):
        s1, s2, sh = t1[i], t2[i], th[i]
        print(
            f"| {i + 1} | {yy1.skipped_fraction[i]:.1%} | {s1:.3f} | {s2:.3f} | "
            f"{naive1 / s1:.1f}x | {ham.skipped_fraction[i]:.1%} | {sh:.3f} | "
            f"{yy1.n_changed[i]:,} |"
        )

    # Extrapolation: distance work scales with n * k at the measured skipped fraction.
    scale = (FLOP_N * FLOP_K) / (n * k)
    last1, last2 = t1[-1], t2[-1]
    print(
        f"\nExtrapolation (not measured) to the flop round, n = {FLOP_N:,}, k = {FLOP_K:,}: "
        f"x{scale:.1f} the work of this run, assuming the same skipped fraction.\n"
    )
    print("| configuration | 1 thread s | 2 threads s |")
    print("|---|---:|---:|")
    print(f"| naive iteration (= first iteration) | {naive1 * scale:.0f} | {naive2 * scale:.0f} |")
    print(f"| pruned iteration {iters} (Yinyang) | {last1 * scale:.1f} | {last2 * scale:.1f} |")


if __name__ == "__main__":
    main()
