"""Prefect flows that chain stages, their presets, and the `gameforge` command line."""
