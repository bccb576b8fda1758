"""A quick card abstraction from each round's hand strength on the board dealt so far.

Preflop lossless (the canonical hole index); in every later round, `k` equal-mass buckets (by
canonical class) of the hand's strength against every opponent hole on the board so far,
2 * wins + ties, computed per (hole, unordered board) class by the river-hs sort-and-sweep kernel
(`hand_strength.board_hs_counts`), whatever the round. No potential, no opponent clusters: the
crudest classic abstraction, but built in seconds (full hold'em: about 30 s on one core, the river
dominating; the 8-rank deck: about a second) and stored nowhere, for agents that need a solved
abstract strategy without a store (`bench/aivat.py`, the AIVAT tests).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from gameforge.engines.poker.acpc import GameDef
from gameforge.engines.poker.evaluator import get_tables
from gameforge.engines.poker.hand_strength import board_hs_counts, scatter_to_hands
from gameforge.engines.poker.isomorphism import HandIndexer
from gameforge.engines.poker.mccfr import DealTables, deal_tables

BOARDS_PER_CALL = 2048


def strength_counts(game: GameDef, board: int) -> np.ndarray:
    """2 * wins + ties against every opponent hole, per (hole, unordered board) class with
    `board` board cards (uint16, in `HandIndexer((holes, board))` order)."""
    if game.num_hole_cards != 2:
        raise ValueError("hs_abstraction is for hold'em decks (two hole cards)")
    boards = HandIndexer((board,), game.num_ranks, game.num_suits)
    hands = HandIndexer((2, board), game.num_ranks, game.num_suits)
    counts = np.zeros(hands.size(1), dtype=np.uint16)
    tables = get_tables(game.num_ranks, game.num_suits, 2 + board)
    n = boards.size(0)
    for start in range(0, n, BOARDS_PER_CALL):
        rows = boards.unindex(np.arange(start, min(start + BOARDS_PER_CALL, n), dtype=np.int64))
        hs = board_hs_counts(rows, game.deck_size, 2, tables)
        scatter_to_hands(rows, hs, game.deck_size, 2, hands.tables.blob, 1, counts)
    return counts


def strength_abstraction(
    game: GameDef, k: int, counts: Callable[[GameDef, int], np.ndarray] = strength_counts
) -> DealTables:
    """The abstraction's deal tables: preflop lossless, k buckets a later round (`counts` gives
    a round's strengths: `strength_counts`, or a cached copy of it)."""
    indexers = [HandIndexer((game.num_hole_cards,), game.num_ranks, game.num_suits)]
    tables: list[np.ndarray | None] = [None]
    board = 0
    for r in range(1, game.num_rounds):
        board += game.num_board_cards[r]
        strength = counts(game, board)
        sample = strength[:: max(1, len(strength) // 2_000_000)]
        edges = np.quantile(sample, np.linspace(0, 1, k + 1)[1:-1])
        tables.append(np.searchsorted(edges, strength, side="right").astype(np.int32))
        indexers.append(HandIndexer((2, board), game.num_ranks, game.num_suits))
    sizes = [indexers[0].size(0)] + [k] * (game.num_rounds - 1)
    return deal_tables(game, indexers, tables, sizes)
