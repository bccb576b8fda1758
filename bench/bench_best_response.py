"""Time the exact best response on a few canonical boards of a stored strategy and project the
whole game: seconds per board, public-node x hand updates per second, and wall time for N
workers (every canonical board costs about the same: each deals the same later cards).

    .venv/bin/python bench/bench_best_response.py CFR_KEY --store /tmp/paper --boards 3
    .venv/bin/python bench/bench_best_response.py --against-enumerated   # small games, side by side
    .venv/bin/python bench/bench_best_response.py --synthetic --boards 2  # no solve needed
    .venv/bin/python bench/bench_best_response.py --policy always-call --boards 3
    .venv/bin/python bench/bench_best_response.py --lanes 8,16,32,64,128  # the last round's width
    .venv/bin/python bench/bench_best_response.py --lanes 64 --precision float64,float32
    .venv/bin/python bench/bench_best_response.py --card-blind always-fold,uniform --check-flops 2
    .venv/bin/python bench/bench_best_response.py --chunk-rates BR_KEY --store /tmp/paper

`--synthetic` draws a 169-9000-9000-9000 abstraction of full Hold'em (every canonical hand of a
round in a random bucket) and a random strategy on it (no action has probability 0, so nothing
is skipped), without a half-hour solve: a bound on a solved strategy's work per board (the
paper's solved C8 took 0.75x its time). `--policy` times the reference strategies that ignore
the cards (`uniform`: every legal action alike; `always-call`; `always-raise`: raise where
legal, else call).

`--chunk-rates` reads a whole-game run's rate from the times its chunks were marked finished
(windows of chunks finished in a row, pauses left out), for a run killed and resumed across
sessions.

`--card-blind` computes the exploitability of those strategies (and always-fold) in the whole
game by counting (`engines/poker/card_blind.py`, minutes, an independent method), and with
`--check-flops N` holds the streamed best response's values at every flop entry of the first
N canonical flops without symmetry to the counted ones (`--symmetric`: also the first flop of
each kind with suit symmetry (trips, paired, monotone, two-tone), which the streamed engine
walks by suit orbits; `--check-only`: no whole-game count).
"""

from __future__ import annotations

import argparse
import sys
import time
from math import comb

import numpy as np
from _shared import reference_module

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
    """The streamed best response beside the enumerated one (`engines.poker.cfr.FullWalkSolver`),
    same partly solved strategy, both seats, median of 5 after a warm-up."""
    from gameforge.engines.poker.best_response import BestResponse, solve_small
    from gameforge.engines.poker.cfr import FullWalkSolver
    from gameforge.engines.poker.mccfr import lossless_tables
    from gameforge.engines.poker.shipped_games import load_game

    for name in ("leduc.limit.2p", "holdem5.flop.limit.2p"):
        game = load_game(name)
        solver = FullWalkSolver(game, plus=True)
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


def _holdem():  # type: ignore[no-untyped-def]
    """Heads-up limit Hold'em and one hand indexer per round (the river's is the abstraction's:
    hole cards and the five board cards as one set)."""
    from gameforge.engines.poker.shipped_games import load_game
    from gameforge.stages.poker.hsd import round_indexer
    from gameforge.stages.poker.river_hs import hand_indexer

    game = load_game("holdem.limit.2p.reverse_blinds")
    return game, [round_indexer(game, r) for r in range(3)] + [hand_indexer(game)]


def _strategy_layout(game, buckets: list[int]):  # type: ignore[no-untyped-def]
    """The betting tree, decisions per round, strategy row offsets, the number of rows, and
    each decision node's rows (one per bucket) with its legal actions."""
    from gameforge.engines.poker.betting import DECISION, build_tree

    tree = build_tree(game)
    ndec = np.array(tree.decision_counts(), dtype=np.int64)
    sizes = ndec * np.array(buckets)
    offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
    nodes = []
    for node in np.flatnonzero(tree.kind == DECISION):
        r = int(tree.round[node])
        rows = offsets[r] + tree.slot[node] + ndec[r] * np.arange(buckets[r])
        nodes.append((rows, tree.children[node] >= 0))
    return tree, ndec, offsets, int(sizes.sum()), nodes


def synthetic_tables(seed: int = 0):  # type: ignore[no-untyped-def]
    """Heads-up limit Hold'em, a random 169-9000-9000-9000 abstraction of it (deal tables) and
    the random generator that drew it, to draw more from."""
    from gameforge.engines.poker.mccfr import deal_tables

    rng = np.random.default_rng(seed)
    game, indexers = _holdem()
    buckets = [169, 9000, 9000, 9000]
    tables = [None] + [
        rng.integers(0, k, int(ix.size(ix.rounds - 1)), dtype=np.int32)
        for ix, k in zip(indexers[1:], buckets[1:], strict=True)
    ]
    return game, deal_tables(game, indexers, tables, buckets), rng


def synthetic_engine(seed: int = 0, precision: str = "float64"):
    """A best-response engine for a random strategy on a random 169-9000-9000-9000 abstraction
    of heads-up limit Hold'em."""
    from gameforge.engines.poker.best_response import BestResponse

    game, dt, rng = synthetic_tables(seed)
    tree, ndec, offsets, n_rows, nodes = _strategy_layout(game, [int(b) for b in dt.num_buckets])
    strategy = rng.random((n_rows, 3), dtype=np.float32) + np.float32(0.05)
    for rows, legal in nodes:  # illegal actions get probability 0
        strategy[rows[:, None], np.flatnonzero(~legal)[None, :]] = 0.0
    strategy /= strategy.sum(axis=1, keepdims=True)
    return BestResponse(
        game, tree, strategy, offsets, ndec, dt.lookup, dt.evaluator, precision=precision
    )


POLICIES = ("uniform", "always-call", "always-raise")


def fixed_policy_engine(policy: str, precision: str = "float64"):
    """A best-response engine for a strategy of heads-up limit Hold'em that ignores the cards:
    one bucket per round after the first, the same action probabilities at every hand."""
    from gameforge.engines.poker.best_response import BestResponse
    from gameforge.engines.poker.betting import CALL, RAISE
    from gameforge.engines.poker.mccfr import deal_tables

    if policy not in POLICIES:
        raise SystemExit(f"--policy: one of {', '.join(POLICIES)}, not {policy!r}")
    game, indexers = _holdem()
    tables = [None] + [np.zeros(int(ix.size(ix.rounds - 1)), np.int32) for ix in indexers[1:]]
    dt = deal_tables(game, indexers, tables, [169, 1, 1, 1])
    tree, ndec, offsets, n_rows, nodes = _strategy_layout(game, [int(b) for b in dt.num_buckets])
    strategy = np.zeros((n_rows, 3), dtype=np.float32)
    for rows, legal in nodes:
        if policy == "uniform":
            strategy[rows] = legal / legal.sum()
        elif policy == "always-raise" and legal[RAISE]:
            strategy[rows, RAISE] = 1.0
        else:
            strategy[rows, CALL] = 1.0
    return BestResponse(
        game, tree, strategy, offsets, ndec, dt.lookup, dt.evaluator, precision=precision
    )


def card_blind(
    policies: list[str], check_flops: int, symmetric: bool = False, check_only: bool = False
) -> None:
    """Whole-game exploitability of card-blind strategies by counting; with check_flops, the
    streamed engine's flop-entry values on that many canonical flops against the counted ones
    (with `symmetric`, flops whose suit symmetry the streamed engine walks by orbits: the
    first of each kind, by stabiliser size, suits and ranks; the counted values enumerate
    every card)."""
    from gameforge.engines.poker.best_response import stabiliser
    from gameforge.engines.poker.betting import build_tree
    from gameforge.engines.poker.card_blind import CardBlind, card_blind_policy

    game, _ = _holdem()
    tree = build_tree(game)
    for policy in policies:
        t0 = time.monotonic()
        probs = card_blind_policy(tree, policy)
        counted = CardBlind(game, probs, tree)
        if (check_flops or symmetric) and policy != "always-fold":
            br = fixed_policy_engine(policy)
            # the streamed engine holds the strategy in float32 (1/3 rounded): count with that
            rounded = CardBlind(game, probs.astype(np.float32).astype(np.float64), tree)
            _, entry_reach = br.top_reach()
            every = np.arange(br.perms.shape[0], dtype=np.int64)
            sizes = [stabiliser(br.perms, every, b).size for b in br.boards.cards]
            plain = [i for i, size in enumerate(sizes) if size == 1][:check_flops]
            if symmetric:  # the first flop of each kind with symmetry (suits, ranks, size)
                ns = br.game.num_suits
                kinds = {
                    (sizes[i], len({int(c) % ns for c in b}), len({int(c) // ns for c in b})): i
                    for i, b in reversed(list(enumerate(br.boards.cards)))
                    if sizes[i] > 1
                }
                plain += sorted(kinds.values())
            entries = br.layout.entries[br.first]
            cls = np.array([rounded.classes[1][int(n)] for n in entries])
            for i in plain:
                flop = br.boards.cards[i]
                t = time.monotonic()
                streamed = br.board_values(flop, entry_reach)
                ts = time.monotonic() - t
                t = time.monotonic()
                per_class = rounded.flop(flop)  # (H, 2, classes)
                tc = time.monotonic() - t
                # the streamed values carry the rival's reach at the entry, the same for every hand
                rival = entry_reach[:, ::-1, :]
                expected = rival * per_class[:, :, cls].transpose(2, 1, 0)
                gap = np.abs(streamed - expected).max() / np.abs(expected).max()
                print(
                    f"{policy}, canonical flop {i} {flop.tolist()} (symmetry {sizes[i]}): "
                    f"streamed {ts:.1f} s, counted {tc:.2f} s; largest difference {gap:.1e} of "
                    "the largest value",
                    flush=True,
                )
                assert gap < 1e-9, gap
        if check_only:
            continue
        result = counted.solve(threads=2)
        bb = max(game.blind)
        print(
            f"{policy}: best-response values {result.values[0]:.6f}, {result.values[1]:.6f} "
            f"chips; exploitability {result.exploitability / bb * 1000:.3f} mbb/g (mean over "
            f"seats); {result.flops:,} canonical flops counted in {time.monotonic() - t0:.1f} s",
            flush=True,
        )


def reference_engine(path: str, br):
    """The same strategy in another implementation of the module (e.g. a previous commit's
    `engines/poker/best_response.py`), for a side-by-side timing."""
    module = reference_module(path, "gameforge_reference_best_response")
    p = br.policy
    args = (br.game, br.tree, p.strategy, p.offsets, p.ndec, br.lookup, br.ev)
    precision = "float32" if br.lanes.scale.dtype == np.float32 else "float64"
    try:  # the same precision, where the reference has the choice
        return module.BestResponse(*args, precision=precision)
    except TypeError:
        return module.BestResponse(*args)


def chunk_rates(key: str, store_root: str, window: int, game_name: str, pause: float) -> None:
    """Rates of a best-response build (finished or not) from its chunk markers' times: complete
    boards walked per second over each `window` chunks finished in a row, and the whole game's
    wall time at the median rate. A window with a gap of over `pause` seconds between two
    markers (the run stopped and restarted) is left out."""
    import datetime as dt
    import json
    import os

    from gameforge.engines.poker.best_response import (
        canonical_boards,
        suit_permutations,
        walked_boards,
    )
    from gameforge.engines.poker.shipped_games import load_game

    store = ArtifactStore(store_root)
    game = load_game(game_name)
    first = next(r for r in range(game.num_rounds) if game.num_board_cards[r] > 0)
    boards = canonical_boards(game, first)
    walked = walked_boards(game, first, boards, suit_permutations(game.num_suits))
    meta = json.loads((store.object_path(key) / "board_values" / "zarr.json").read_text())
    per = int(meta["chunk_grid"]["configuration"]["chunk_shape"][0])
    weight = [int(walked[c * per : (c + 1) * per].sum()) for c in range(-(-walked.size // per))]
    done = store.partial_path(key) / "done" / "board_values"
    marks = sorted((os.path.getmtime(done / name), int(name)) for name in os.listdir(done))
    gaps = np.diff([t for t, _ in marks])
    rates = []
    for k in range(0, len(marks) - window, window):
        (t0, _), (t1, _) = marks[k], marks[k + window]
        if gaps[k : k + window].max() > pause:
            continue  # a pause or a restart inside the window
        rate = sum(weight[c] for _, c in marks[k + 1 : k + window + 1]) / (t1 - t0)
        rates.append(rate)
        when = dt.datetime.fromtimestamp(t0, dt.UTC).strftime("%m-%d %H:%M")
        print(f"{when} UTC, chunks {marks[k + 1][1]}..: {rate:.1f} complete boards/s", flush=True)
    total = int(walked.sum())
    finished = sum(weight[c] for _, c in marks)
    print(f"{len(marks)} of {len(weight)} chunks finished, {finished:,} of {total:,} boards "
          f"({100 * finished / total:.1f}%)")  # fmt: skip
    if rates:
        median = float(np.median(rates))
        whole, left = total / median / 3600, (total - finished) / median / 3600
        print(f"median {median:.1f} boards/s over {len(rates)} windows of {window} chunks: "
              f"{whole:.2f} h for the whole game, {left:.2f} h left")  # fmt: skip


def lane_widths(widths: list[int], precisions: list[str], rivers: int = 32) -> None:
    """The last round's kernel at several lane widths and precisions on the same rivers of one
    turn (canonical flop 101, turn 7c, synthetic strategy): ms per complete board, median of 3
    after a warm-up; float64 values must agree to 1e-12, float32's largest difference from the
    first float64 run is printed."""
    from gameforge.engines.poker.best_response import deal_orbits, last_round_lanes, round_down

    br = synthetic_engine()
    lay, H = br.layout, br.num_hands
    _, reach = br.top_reach()
    board = br.boards.cards[101].astype(np.int8)
    entries = lay.entries[br.first]
    for r, card in ((br.first, None), (br.first + 1, 20)):
        if card is not None:
            board = np.append(board, np.int8(card))
        bk = br._buckets(r, board, board.size)
        nodes = np.empty((lay.round_start[r + 1] - lay.round_start[r], 2, H))
        exit_reach = np.zeros((lay.entries[r + 1].size, 2, H))
        alive = np.zeros(lay.entries[r + 1].size, dtype=np.bool_)
        round_down(
            r, entries, reach, bk, br.tree.arrays, lay.arrays, br.policy, nodes, exit_reach, alive
        )  # fmt: skip
        reach, entries = exit_reach, lay.entries[r + 1][alive]
    every = np.arange(br.perms.shape[0])
    orbits = deal_orbits(br.perms, every[:1], board, 1, br.game.deck_size)[:rivers]
    full = np.array([np.append(board, cards.astype(np.int8)) for cards, _, _ in orbits])
    last = br.game.num_rounds - 1
    first = None
    for precision in precisions:
        for width in widths:
            br.lanes = last_round_lanes(
                br.tree, lay, br.policy, last, float(br.deals_after[last]), width=width,
                dtype=np.dtype(precision).type,
            )  # fmt: skip
            times = []
            for _ in range(4):
                values = np.zeros((lay.entries[last].size, 2, H))
                t = time.perf_counter()
                br._deal_last(last, entries, reach, full, np.ones(len(full)), values)
                times.append(time.perf_counter() - t)
            first = values if first is None else first
            scale = np.abs(first).max()
            gap = np.abs(values - first).max() / scale
            if precision == "float64":
                assert gap < 1e-12, gap
            ms = float(np.median(times[1:])) / len(full) * 1e3
            print(
                f"{precision} {width:>4} lanes: {ms:.1f} ms per complete board ({len(full)} "
                f"rivers); largest difference {gap:.1e} of the largest value",
                flush=True,
            )


def main() -> None:
    """Time `--boards` canonical boards (and optionally a reference implementation on the
    same boards) and print the projection for the whole game."""
    if "--against-enumerated" in sys.argv:
        against_enumerated()
        return
    if "--lanes" in sys.argv:
        at = sys.argv.index("--lanes") + 1
        precisions = ["float64"]
        if "--precision" in sys.argv:
            precisions = sys.argv[sys.argv.index("--precision") + 1].split(",")
        lane_widths([int(w) for w in sys.argv[at].split(",")], precisions)
        return
    if "--chunk-rates" in sys.argv:
        ap = argparse.ArgumentParser()
        ap.add_argument("--chunk-rates", required=True, metavar="KEY", help="a best-response key")
        ap.add_argument("--store", default="store")
        ap.add_argument("--window", type=int, default=10)
        ap.add_argument("--game", default="holdem.limit.2p.reverse_blinds")
        ap.add_argument("--pause", type=float, default=600.0, help="seconds: a restart")
        args = ap.parse_args()
        chunk_rates(args.chunk_rates, args.store, args.window, args.game, args.pause)
        return
    if "--card-blind" in sys.argv:
        ap = argparse.ArgumentParser()
        ap.add_argument("--card-blind", required=True, help="policies, comma-separated")
        ap.add_argument("--check-flops", type=int, default=0)
        ap.add_argument("--symmetric", action="store_true", help="check flops with symmetry")
        ap.add_argument("--check-only", action="store_true", help="no whole-game count")
        args = ap.parse_args()
        card_blind(args.card_blind.split(","), args.check_flops, args.symmetric, args.check_only)
        return
    ap = argparse.ArgumentParser()
    ap.add_argument("key", nargs="?", help="a cfr artifact (or --synthetic)")
    ap.add_argument("--synthetic", action="store_true")
    ap.add_argument("--policy", help=f"a strategy that ignores the cards: {', '.join(POLICIES)}")
    ap.add_argument("--store", default="store")
    ap.add_argument("--boards", type=int, default=3)
    ap.add_argument("--first", type=int, default=0, help="index of the first canonical board")
    ap.add_argument("--reference", help="a best_response.py to time side by side")
    ap.add_argument("--precision", default="float64", help="the last round's sums")
    args = ap.parse_args()
    t0 = time.monotonic()
    if args.synthetic:
        br = synthetic_engine(precision=args.precision)
    elif args.policy:
        br = fixed_policy_engine(args.policy, args.precision)
    else:
        store = ArtifactStore(args.store)
        br = engine_for(store, store.open(args.key), args.precision)
    engines = {"this": br}
    if args.reference:
        engines["reference"] = reference_engine(args.reference, br)
    _, entry_reach = br.top_reach()
    walked = br.walked_boards()
    print(f"engine ready in {time.monotonic() - t0:.1f} s", flush=True)
    raw = int(np.prod([comb(br.game.deck_size - br.game.board_cards_through(r - 1),
                            br.game.num_board_cards[r]) for r in range(br.first + 1,
                            br.game.num_rounds)]))  # fmt: skip
    per_river: dict[str, list[float]] = {name: [] for name in engines}
    for i in range(args.first, args.first + args.boards):
        board = br.boards.cards[i]
        got = {}
        for name, engine in engines.items():
            t = time.monotonic()
            got[name] = engine.board_values(board, entry_reach)
            seconds = time.monotonic() - t
            boards = int(walked[i])  # both walk one board per orbit
            per_river[name].append(seconds / boards)
            print(
                f"board {i} {board.tolist()} {name}: {seconds:.1f} s, {boards:,} complete "
                f"boards, {seconds / boards * 1e3:.1f} ms each",
                flush=True,
            )
        if "reference" in got:
            a, b = br.class_sums(got["this"]), br.class_sums(got["reference"])
            gap = np.abs(a - b).max() / np.abs(b).max()
            print(f"  largest difference from the reference: {gap:.1e} of the largest value")
            assert gap < (1e-9 if args.precision == "float64" else 1e-5), gap
    # The first board also compiles the kernels (or loads numba's cache): leave it out.
    ms = {name: float(np.median(v[1:] if len(v) > 1 else v)) for name, v in per_river.items()}
    total = int(walked.sum())
    per_core_h = ms["this"] * total / 3600
    updates = node_hand_updates(br) * 2 / raw  # per complete board, both seats
    print(
        f"{ms['this'] * 1e3:.1f} ms per complete board; {total:,} boards walked in all "
        f"({br.boards.weight.size:,} canonical first boards x {raw:,} later deals = "
        f"{br.boards.weight.size * raw:,} without the later rounds' symmetry): "
        f"{per_core_h:.1f} core-hours; {updates / ms['this'] / 1e9:.2f} G node x hand x seat "
        "updates/s per core"
    )
    if "reference" in ms:
        ref_h = ms["reference"] * total / 3600
        print(
            f"reference: {ms['reference'] * 1e3:.1f} ms per complete board, {ref_h:.1f} "
            f"core-hours; per board {ms['reference'] / ms['this']:.2f}x, whole game "
            f"{ref_h / per_core_h:.2f}x"
        )
    for workers in (1, 2, 8, 32):
        print(f"  {workers:>3} workers: {per_core_h / workers:.2f} h wall")


if __name__ == "__main__":
    main()
