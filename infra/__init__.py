"""Recipes for running gameforge bigger (see README.md in this folder)."""
