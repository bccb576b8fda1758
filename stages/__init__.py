"""Stages: declared inputs, typed parameters, and a run function that writes one artifact."""
