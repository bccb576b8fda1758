"""Poker: cards, ACPC games, evaluator, isomorphism, betting trees, features, CFR, matches."""
