"""Sizes of a game's hand and board spaces, counted without building indexers: what the
poker stages' resource estimates (`footprint`) are computed from."""

from __future__ import annotations

import os
from functools import lru_cache
from math import comb

from gameforge.engines.poker.acpc import GameDef
from gameforge.engines.poker.isomorphism import count_classes
from gameforge.stages.poker.params import GameParams

THREADS = os.cpu_count() or 1  # chunk tasks held at once by the default local cluster


@lru_cache(maxsize=64)
def _classes(groups: tuple[int, ...], ranks: int, suits: int) -> tuple[int, ...]:
    return tuple(count_classes(groups, ranks, suits))


def game_of(params: dict | GameParams) -> GameDef:
    """The game of a stage's parameters (a params object or an artifact's recorded dict)."""
    name = params.game if isinstance(params, GameParams) else params.get("game")
    return GameParams(game=name).game_def() if name else GameParams().game_def()


def canonical_hands(game: GameDef, round_: int) -> int:
    """Suit-canonical hands of a player in `round_` (the layout of hsd and its buckets)."""
    groups = tuple(game.card_groups())
    return _classes(groups, game.num_ranks, game.num_suits)[game.group_of_round(round_)]


def last_round_hands(game: GameDef) -> int:
    """Canonical (hole, unordered board) hands of the last round (river-hs and ochs layout)."""
    hole, board = game.num_hole_cards, sum(game.num_board_cards)
    groups = (hole, board) if board else (hole,)
    return _classes(groups, game.num_ranks, game.num_suits)[-1]


def last_round_boards(game: GameDef) -> int:
    """Canonical last-round boards (the chunking of river-hs and ochs)."""
    board = sum(game.num_board_cards)
    return _classes((board,), game.num_ranks, game.num_suits)[0] if board else 1


def hole_combos(game: GameDef) -> int:
    """Hole-card combinations beside a complete board."""
    return comb(game.deck_size - sum(game.num_board_cards), game.num_hole_cards)


def completions(game: GameDef, round_: int, to: int | None = None) -> int:
    """Board completions of a `round_` hand to round `to` (default: the last round)."""
    seen = game.board_cards_through(round_)
    target = game.board_cards_through(game.num_rounds - 1 if to is None else to)
    return comb(game.deck_size - game.num_hole_cards - seen, target - seen)


def kmeans_bytes(n: int, d: int, k: int, groups: int | None) -> int:
    """Memory of k-means with exact pruning (engines/common/kmeans.py) on n float32 points of d
    dims (not counted here): labels and bounds (4 n G), per-point scratch, the failing points'
    group minima (taken as a tenth of the points), per-thread float64 centre sums."""
    g = max(1, min(k // 10, 32)) if groups is None else groups
    per_point = 16 + 4 * g + 48 + g + (24 * g) // 10
    return n * per_point + THREADS * 8 * k * d + 16 * k * d


def clustering_bytes(n: int, d: int, item: int, k: int, groups: int | None, merge: bool) -> dict:
    """The peak of clustering n feature rows of d items: the larger of merging duplicate rows
    (`np.unique` on the rows: a sorted copy and index arrays) and k-means on the distinct rows,
    taken as a quarter of the rows when merging (the paper preset measured flop 80%, turn 2.4%,
    river 15%), beside the raw rows and the inverse index."""
    raw = n * d * item
    distinct = max(min(k, n), n // 4) if merge else n
    kmeans = {
        "features": raw,
        "inverse index": 8 * n if merge else 0,
        "float32 points": distinct * d * 4,
        "k-means": kmeans_bytes(distinct, d, k, groups),
    }
    merging = {"features": raw, "sorted copy": raw, "unique's index arrays": 33 * n}
    return merging if merge and sum(merging.values()) > sum(kmeans.values()) else kmeans


def buckets_per_round(game: GameDef, solve: dict) -> list[int]:
    """Buckets per round of a `cfr` artifact's abstraction, from its recorded inputs' `k`
    (`Recorded.inputs`); lossless (canonical hands) where it has none."""
    inputs = getattr(solve, "inputs", {})
    middle, river = inputs.get("middle_buckets"), inputs.get("river_buckets")
    last = game.num_rounds - 1
    sizes = [canonical_hands(game, r) for r in range(game.num_rounds)]
    if middle is not None and river is not None:
        for r in range(1, last):
            sizes[r] = int(middle.get("k", sizes[r]))
        sizes[last] = int(river.get("k", sizes[last]))
    return sizes


def bucket_table_bytes(game: GameDef, abstract: bool) -> int:
    """Bucket lookups held while dealing: per canonical hand of each round after the first, an
    int16 bucket as stored and an int32 copy packed for the kernels (none when lossless)."""
    if not abstract:
        return 0
    last = game.num_rounds - 1
    hands = [canonical_hands(game, r) for r in range(1, last)] + [last_round_hands(game)]
    return 6 * sum(hands)


def infosets(game: GameDef, buckets: list[int]) -> int:
    """Information sets of the abstract game: decisions per round times buckets of the round."""
    from gameforge.engines.poker.betting import tree_size

    return sum(d * b for d, b in zip(tree_size(game).decisions, buckets, strict=True))
