"""A counter-based random stream for numba kernels: splitmix64, one uint64 of state per stream.

Every engine draws from it, so a seeded run is bit-identical on any machine and at any chunking:
a stream is seeded from (seed, index) with `mix`, never from a shared global generator.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

GOLDEN_GAMMA = np.uint64(0x9E3779B97F4A7C15)


@njit(cache=True, nogil=True, inline="always")
def mix(x: np.uint64) -> np.uint64:
    """splitmix64 finaliser."""
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


@njit(cache=True, nogil=True, inline="always")
def uniform(state: np.ndarray) -> float:
    """Next double in [0, 1) of a splitmix64 stream held in state[0]."""
    state[0] += GOLDEN_GAMMA
    return float(mix(state[0]) >> np.uint64(11)) * (1.0 / 9007199254740992.0)


@njit(cache=True, nogil=True, inline="always")
def stream_seed(seed: int, index: int) -> np.uint64:
    """The starting state of stream `index` of a seeded family (a deal, a game)."""
    return mix(np.uint64(seed) * GOLDEN_GAMMA + np.uint64(index))


@dataclass(frozen=True)
class Numbered:
    """Items first..first + count - 1 of `seed`'s family of streams (deals, games): each
    depends on its number only, so any split of a run into blocks plays the same items."""

    count: int
    seed: int
    first: int = 0
