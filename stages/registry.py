"""Imports every stage module so each registers itself."""

from stages import hsd, ochs, opponent_clusters, river_hs  # noqa: F401
