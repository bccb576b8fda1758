"""Benchmark of the hand isomorphism: batch index and unindex of Hold'em hands, one thread.

Prints a markdown table. The reference C implementation's 190 ns per river index is the number
quoted in the project's issue; it is not re-measured here.

    .venv/bin/python bench/bench_isomorphism.py [--hands 5000000] [--repeats 5]
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numba
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from gameforge.engines.poker.isomorphism import HandIndexer  # noqa: E402

REFERENCE_NS = 190.0  # reference C implementation, ns per river index (quoted, not re-measured)
ROUND_NAMES = ("preflop", "flop", "turn", "river")


def random_hands(rng: np.random.Generator, n: int, width: int) -> np.ndarray:
    """n hands of `width` distinct cards from a 52-card deck (int8), by redrawing repeats."""
    hands = rng.integers(0, 52, size=(n, width), dtype=np.int8)
    while True:
        ordered = np.sort(hands, axis=1)
        bad = np.flatnonzero((np.diff(ordered, axis=1) == 0).any(axis=1))
        if bad.size == 0:
            return hands
        hands[bad] = rng.integers(0, 52, size=(bad.size, width), dtype=np.int8)


def median_seconds(fn: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=5_000_000, help="hands per index run")
    parser.add_argument("--unindex", type=int, default=1_000_000, help="indices per unindex run")
    parser.add_argument("--repeats", type=int, default=5, help="timed runs; the median is shown")
    args = parser.parse_args()

    rng = np.random.default_rng(2013)
    start = time.perf_counter()
    indexer = HandIndexer((2, 3, 1, 1))
    build = time.perf_counter() - start
    # Warm-up: compiles the kernels, or loads them from numba's cache.
    start = time.perf_counter()
    indexer.unindex(indexer.index(random_hands(rng, 16, 7)))
    warm = time.perf_counter() - start

    river = random_hands(rng, args.hands, 7)
    rows = []
    for rnd in (3, 2, 1):
        hands = river[:, : indexer.num_hand_cards(rnd)].copy()
        seconds = median_seconds(lambda h=hands, r=rnd: indexer.index(h, r), args.repeats)
        rows.append((f"index {ROUND_NAMES[rnd]}", len(hands), seconds))
    for rnd in (3, 2, 1):
        indices = rng.integers(0, indexer.size(rnd), args.unindex)
        seconds = median_seconds(lambda i=indices, r=rnd: indexer.unindex(i, r), args.repeats)
        rows.append((f"unindex {ROUND_NAMES[rnd]}", len(indices), seconds))

    print(f"Hand isomorphism (Hold'em rounds 2,3,1,1), one thread, median of {args.repeats} runs")
    print(
        f"python {platform.python_version()}, numpy {np.__version__}, numba {numba.__version__}, "
        f"{platform.machine()}; tables built in {build * 1e3:.0f} ms; warm-up {warm:.2f} s"
    )
    print()
    print(
        "| operation | items | seconds | per second | ns per item "
        "| vs reference C (190 ns/river index, quoted, not re-measured) |"
    )
    print("|---|---:|---:|---:|---:|---:|")
    for name, items, seconds in rows:
        ns = seconds / items * 1e9
        print(
            f"| {name} | {items:,} | {seconds:.3f} | {items / seconds / 1e6:.1f} M "
            f"| {ns:.1f} | {REFERENCE_NS / ns:.2f}x |"
        )


if __name__ == "__main__":
    main()
