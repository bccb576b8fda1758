"""Imports every stage module so each registers itself."""

from stages import (  # noqa: F401
    blokus,
    buckets,
    cfr,
    hearts,
    hsd,
    league,
    nlhe,
    ochs,
    opponent_clusters,
    potential,
    river_hs,
)
