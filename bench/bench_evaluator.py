"""Benchmark the poker hand evaluator against eval7, phevaluator and pokerkit on 7-card hands.

Ours runs as one batch call (single-threaded numba loop); the others are called once per hand
from Python on a smaller sample, with cards converted to their formats outside the timed loop.
Also times the incremental path river hand strength uses: a board's packed key summed once,
then each of the 1081 hole pairs added. Prints a markdown table; writes nothing.

    .venv/bin/python bench/bench_evaluator.py [--hands 10000000] [--seed 0]
"""

from __future__ import annotations

import argparse
import platform
import time
from collections.abc import Callable

import numpy as np
from numba import njit

from gameforge.engines.poker import evaluator as ev
from gameforge.engines.poker.cards import format_card


@njit(cache=True, nogil=True)
def _random_hands(n_hands: int, n_cards: int, deck: int, seed: int) -> np.ndarray:
    """n_hands rows of n_cards distinct cards (partial Fisher-Yates per row)."""
    np.random.seed(seed)
    out = np.empty((n_hands, n_cards), np.int8)
    cards = np.arange(deck).astype(np.int8)
    for i in range(n_hands):
        for j in range(n_cards):
            k = np.random.randint(j, deck)
            cards[j], cards[k] = cards[k], cards[j]
            out[i, j] = cards[j]
    return out


@njit(cache=True, nogil=True)
def _river_all_holes(boards: np.ndarray, tables: ev.EvalTables, out: np.ndarray) -> None:
    """For each 5-card board, the value of every hole pair from the remaining cards."""
    # Unpack the tuple once: reading its fields inside the loops is ~4x slower (numba 0.68).
    card_key, card_bit = tables.card_key, tables.card_bit
    rank_table, flush_table = tables.rank_table, tables.flush_table
    deck = card_key.shape[0]
    rest = np.empty(deck, np.int64)
    for b in range(boards.shape[0]):
        key = np.int64(0)
        bits = np.int64(0)
        for c in boards[b]:
            key += card_key[c]
            bits |= card_bit[c]
        n_rest = 0
        for c in range(deck):
            if not bits & card_bit[c]:
                rest[n_rest] = c
                n_rest += 1
        k = 0
        for i in range(n_rest):
            key_i = key + card_key[rest[i]]
            bits_i = bits | card_bit[rest[i]]
            for j in range(i + 1, n_rest):
                out[b, k] = ev.value_from_packed(
                    key_i + card_key[rest[j]], bits_i | card_bit[rest[j]], rank_table, flush_table
                )
                k += 1


def _time(fn: Callable[[], object], repeats: int = 3) -> float:
    """Best of a few timed runs, in seconds."""
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    """Run the benchmark and print a markdown table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=10_000_000, help="hands for our batch")
    parser.add_argument("--small", type=int, default=200_000, help="hands for eval7/phevaluator")
    parser.add_argument("--pokerkit", type=int, default=20_000, help="hands for pokerkit")
    parser.add_argument("--boards", type=int, default=10_000, help="river boards (x1081 pairs)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    start = time.perf_counter()
    tables = ev.get_tables(13, 4, 7)
    build_s = time.perf_counter() - start
    hands = _random_hands(args.hands, 7, 52, args.seed)
    rows: list[tuple[str, int, float]] = []

    ev.evaluate(hands[:100_000])  # warm-up: compile/load kernels, fault in tables and output
    rows.append(("gameforge evaluate (batch)", args.hands, _time(lambda: ev.evaluate(hands))))

    boards = _random_hands(args.boards, 5, 52, args.seed + 1)
    out = np.empty((args.boards, 1081), np.int32)
    _river_all_holes(boards[:10], tables, out)
    river_s = _time(lambda: _river_all_holes(boards, tables, out))
    rows.append(("gameforge incremental (board + 1081 holes)", args.boards * 1081, river_s))
    expected = ev.evaluate(np.hstack([boards[:1].repeat(1081, axis=0), _holes_of(boards[0])]))
    assert np.array_equal(np.sort(out[0]), np.sort(expected)), "incremental path disagrees"

    small = hands[: args.small]
    try:
        import eval7

        deck7 = [eval7.Card(format_card(c)) for c in range(52)]
        hands7 = [[deck7[c] for c in hand] for hand in small.tolist()]
        evaluate7 = eval7.evaluate
        rows.append(("eval7", len(hands7), _time(lambda: [evaluate7(h) for h in hands7], 1)))
    except ImportError:
        print("eval7 not installed; skipped")
    try:
        from phevaluator import evaluate_cards

        # phevaluator's integer ids are ours: rank * 4 + suit, suits c, d, h, s.
        hands_ph = small.astype(np.int64).tolist()
        rows.append(
            ("phevaluator", len(hands_ph), _time(lambda: [evaluate_cards(*h) for h in hands_ph], 1))
        )
    except ImportError:
        print("phevaluator not installed; skipped")
    try:
        from pokerkit import Card, StandardHighHand

        deck_pk = [next(iter(Card.parse(format_card(c)))) for c in range(52)]
        hands_pk = [
            ([deck_pk[c] for c in hand[:2]], [deck_pk[c] for c in hand[2:]])
            for hand in hands[: args.pokerkit].tolist()
        ]
        from_game = StandardHighHand.from_game
        rows.append(
            (
                "pokerkit StandardHighHand.from_game",
                len(hands_pk),
                _time(lambda: [from_game(h, b) for h, b in hands_pk], 1),
            )
        )
    except ImportError:
        print("pokerkit not installed; skipped")

    ours_rate = rows[0][1] / rows[0][2]
    print(
        f"\n{platform.machine()}, python {platform.python_version()}, one thread; 7-card tables "
        f"built in {build_s:.2f} s (includes loading kernels)\n"
    )
    print("| evaluator | hands | seconds | evals/s | ratio ours/theirs |")
    print("|---|---:|---:|---:|---:|")
    for name, n, seconds in rows:
        rate = n / seconds
        print(f"| {name} | {n:,} | {seconds:.4f} | {rate:,.0f} | {ours_rate / rate:,.1f} |")


def _holes_of(board: np.ndarray) -> np.ndarray:
    """All 1081 hole pairs from the 47 cards not on a 5-card board, in loop order."""
    rest = np.setdiff1d(np.arange(52), board)
    i, j = np.triu_indices(rest.shape[0], k=1)
    return np.stack([rest[i], rest[j]], axis=1).astype(np.int8)


if __name__ == "__main__":
    main()
