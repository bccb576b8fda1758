"""Limit Hold'em stages: hand strength, HSD, opponent clusters, OCHS, buckets, CFR, league."""
