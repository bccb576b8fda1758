"""The sizes of a poker game: its cards, each round's raw and canonical hands, its betting tree and
information sets (what `gameforge game info` prints), as plain numbers."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from gameforge.engines.poker.acpc import GameDef
from gameforge.engines.poker.betting import TREE_NODE_LIMIT, tree_size
from gameforge.engines.poker.cards import CARD_NAMINGS
from gameforge.engines.poker.isomorphism import count_classes


def game_info(definition: GameDef, buckets: Sequence[int] | None = None) -> dict[str, Any]:
    """A JSON-able description of a game: its rules, card names, one row per round (board
    cards, raw and canonical hands; decisions, folds and information sets where gameforge
    builds a betting tree: two-player limit games) and the tree's totals (None without one).

    `buckets` (one count per round) adds each round's information sets under that abstraction.
    """
    if buckets is not None and len(buckets) != definition.num_rounds:
        raise ValueError(f"{len(buckets)} bucket counts for {definition.num_rounds} rounds")
    groups = definition.card_groups()
    classes = count_classes(groups, definition.num_ranks, definition.num_suits)
    has_tree = definition.betting_type == "limit" and definition.num_players == 2
    size = tree_size(definition) if has_tree else None
    rounds = []
    for r in range(definition.num_rounds):
        row: dict[str, Any] = {
            "round": r,
            "board_cards_dealt": definition.num_board_cards[r],
            "board_cards_seen": definition.board_cards_through(r),
            "raw_hands": definition.raw_hands(r),
            "canonical_hands": int(classes[definition.group_of_round(r)]),
        }
        if size is not None:
            row["decisions"] = size.decisions[r]
            row["folds"] = size.folds[r]
            row["infosets_raw"] = size.decisions[r] * row["raw_hands"]
            row["infosets_lossless"] = size.decisions[r] * row["canonical_hands"]
            if buckets is not None:
                row["infosets_abstract"] = size.decisions[r] * buckets[r]
        rounds.append(row)
    tree = None
    if size is not None:
        tree = {
            "nodes": size.nodes,
            "decisions": sum(size.decisions),
            "terminals": size.terminals,
            "infosets_raw": sum(row["infosets_raw"] for row in rounds),
            "showdowns": size.showdowns,
            "node_limit": TREE_NODE_LIMIT,
            "within_limit": size.nodes <= TREE_NODE_LIMIT,
        }
    return {
        "name": definition.name,
        "betting": definition.betting_type,
        "players": definition.num_players,
        "ranks": definition.num_ranks,
        "suits": definition.num_suits,
        "hole_cards": definition.num_hole_cards,
        "blinds": list(definition.blind),
        "raise_sizes": list(definition.raise_size) if definition.betting_type == "limit" else [],
        "max_raises": list(definition.max_raises),
        "stacks": list(definition.stack),
        "cards": {naming: definition.deck_text(naming) for naming in CARD_NAMINGS},
        "rounds": rounds,
        "betting_tree": tree,
    }


def unordered_last_round(definition: GameDef) -> int | None:
    """Canonical hands of the last round with the board's order forgotten (river-hs's layout),
    for games of one or two hole cards that deal a board; else None."""
    if definition.num_hole_cards not in (1, 2):
        return None
    if not definition.board_cards_through(definition.num_rounds - 1):
        return None
    hole, board = definition.num_hole_cards, sum(definition.num_board_cards)
    return int(count_classes((hole, board), definition.num_ranks, definition.num_suits)[-1])
