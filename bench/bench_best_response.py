"""Time the exact best response on a few canonical boards of a stored strategy and project the
whole game: seconds per board, public-node x hand updates per second, and wall time for N
workers (every canonical board costs about the same: each deals the same later cards).

    .venv/bin/python bench/bench_best_response.py CFR_KEY --store /tmp/paper --boards 3
    .venv/bin/python bench/bench_best_response.py --against-enumerated   # small games, side by side
"""

from __future__ import annotations

import argparse
import sys
import time
from math import comb

import numpy as np

from gameforge.artifacts import ArtifactStore
from gameforge.stages.poker.best_response import engine_for


def node_hand_updates(br) -> float:
    """Public-node x hand pairs one canonical board's walk covers (every later card dealt)."""
    game, tree = br.game, br.tree
    total, boards = 0.0, 1.0
    for r in range(br.first, game.num_rounds):
        if r > br.first:
            boards *= comb(
                game.deck_size - game.board_cards_through(r - 1), game.num_board_cards[r]
            )
        valid = comb(game.deck_size - game.board_cards_through(r), game.num_hole_cards)
        total += boards * int(np.count_nonzero(tree.round == r)) * valid
    return total


def against_enumerated() -> None:
    """The streamed best response beside the enumerated one (`engines.poker.cfr.Solver`), same
    partly solved strategy, both seats, median of 5 after a warm-up."""
    from gameforge.engines.poker.best_response import BestResponse, solve_small
    from gameforge.engines.poker.cfr import Solver
    from gameforge.engines.poker.mccfr import lossless_tables
    from gameforge.engines.poker.shipped_games import load_game

    for name in ("leduc.limit.2p", "holdem5.flop.limit.2p"):
        game = load_game(name)
        solver = Solver(game, plus=True)
        solver.iterate(5)
        strategy = solver.average_strategy()
        tables = lossless_tables(game)
        br = BestResponse(
            game, solver.tree, strategy, solver.offsets, solver.ndec, tables.lookup,
            tables.evaluator,
        )  # fmt: skip
        old, new = [], []
        for _ in range(6):
            t = time.perf_counter()
            expected = [solver.best_response_value(p, strategy) for p in (0, 1)]
            old.append(time.perf_counter() - t)
            t = time.perf_counter()
            got = solve_small(br).values
            new.append(time.perf_counter() - t)
        assert np.allclose(got, expected, atol=1e-9)
        a, b = np.median(old[1:]), np.median(new[1:])
        print(f"{name}: enumerated {a * 1e3:.1f} ms, streamed {b * 1e3:.1f} ms, ratio {a / b:.1f}x")


def main() -> None:
    """Time `--boards` canonical boards and print the projection."""
    if "--against-enumerated" in sys.argv:
        against_enumerated()
        return
    ap = argparse.ArgumentParser()
    ap.add_argument("key")
    ap.add_argument("--store", default="store")
    ap.add_argument("--boards", type=int, default=3)
    ap.add_argument("--first", type=int, default=0, help="index of the first canonical board")
    args = ap.parse_args()
    store = ArtifactStore(args.store)
    t0 = time.monotonic()
    br = engine_for(store, store.open(args.key))
    _, entry_reach = br.top_reach()
    print(f"engine ready in {time.monotonic() - t0:.1f} s")
    seconds = []
    for i in range(args.first, args.first + args.boards):
        t = time.monotonic()
        br.board_values(br.boards.cards[i], entry_reach)
        seconds.append(time.monotonic() - t)
        print(f"board {i} {br.boards.cards[i].tolist()}: {seconds[-1]:.1f} s", flush=True)
    # The first board also compiles the kernels (or loads numba's cache): leave it out.
    per_board = float(np.mean(seconds[1:] if len(seconds) > 1 else seconds))
    n = int(br.boards.weight.size)
    updates = node_hand_updates(br) * 2  # both seats
    print(
        f"{per_board:.1f} s per canonical board; {n:,} boards: {per_board * n / 3600:.2f} "
        f"core-hours; {updates / per_board / 1e9:.2f} G node x hand x seat updates/s per core"
    )
    for workers in (1, 2, 8, 32):
        print(f"  {workers:>3} workers: {per_board * n / workers / 3600:.2f} h wall")


if __name__ == "__main__":
    main()
