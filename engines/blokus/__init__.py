"""Four-player Blokus: rules, placements, MCTS-MAXN, the BlokusZero network, search, training."""
