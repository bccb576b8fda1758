"""Match engine speed: hands per second between two solved Hold'em strategies.

    python bench/bench_match.py --store S --a KEY [--b KEY] [--deals 3000] [--sets 1000]

The paper's structure: 3,000 deals per set, each played in every set (3,000 sets per match).

Reference in the same run: OpenSpiel's universal_poker (C++ game, stepped from Python) playing
uniform-random hands of the same ACPC game.
"""

from __future__ import annotations

import argparse
import os
import time

from _shared import random_play

from gameforge.artifacts import ArtifactStore
from gameforge.engines.common.parallel import Parallel
from gameforge.engines.poker.match import play_match, summarize
from gameforge.stages.poker.strategy import StrategyView


def openspiel_hands_per_second(game_text: str, seconds: float = 3.0) -> float:
    """Uniform-random hands per second through pyspiel's universal_poker."""
    import pyspiel

    game = pyspiel.universal_poker.load_universal_poker_from_acpc_gamedef(game_text)
    hands, taken = random_play(game, seconds)
    return hands / taken


def main() -> None:
    """Time one match between two strategies."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", required=True)
    parser.add_argument("--a", required=True)
    parser.add_argument("--b", default=None)
    parser.add_argument("--deals", type=int, default=3000)
    parser.add_argument("--sets", type=int, default=1000)
    args = parser.parse_args()
    store = ArtifactStore(args.store)
    va = StrategyView(store, store.open(args.a))
    vb = StrategyView(store, store.open(args.b or args.a))
    a, b = va.agent(va.artifact.key), vb.agent(vb.artifact.key)
    game = va.game
    play_match(game, a, b, hands_per_set=1000, sets=2)  # compile outside the clock
    rows = []
    for threads in (1, os.cpu_count() or 1):
        t0 = time.perf_counter()
        out = play_match(
            game,
            a,
            b,
            seed=1,
            hands_per_set=args.deals,
            sets=args.sets,
            parallel=Parallel(threads=threads),
        )
        seconds = time.perf_counter() - t0
        rows.append((threads, out.size * args.sets, seconds))
    stats = summarize(out, float(max(game.blind)), args.sets)
    reference = openspiel_hands_per_second(game.to_text())
    print(f"\n{game.name}: {va.artifact.key} vs {vb.artifact.key}\n")
    print("| engine | threads | hands | seconds | hands / s | ratio to OpenSpiel |")
    print("|---|---:|---:|---:|---:|---:|")
    for threads, hands, seconds in rows:
        rate = hands / seconds
        print(
            f"| gameforge match | {threads} | {hands:,} | {seconds:.2f} | {rate:,.0f} | "
            f"{rate / reference:,.0f}x |"
        )
    print(f"| OpenSpiel universal_poker, random play | 1 | - | 3 | {reference:,.0f} | 1x |")
    print(f"\nresult: {stats['mbb_per_game']:.1f} ± {stats['ci95']:.1f} mbb/g (A vs B)")


if __name__ == "__main__":
    main()
