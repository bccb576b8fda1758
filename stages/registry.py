"""Imports every stage module so each registers itself."""

from stages import buckets, cfr, hsd, league, ochs, opponent_clusters, potential, river_hs  # noqa: F401
