"""Imports every stage module so each registers itself."""

from stages import hsd, river_hs  # noqa: F401
