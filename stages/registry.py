"""Imports every stage module so each registers itself."""

from stages import river_hs  # noqa: F401
