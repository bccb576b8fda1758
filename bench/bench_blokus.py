"""Blokus speed: legal-move generation, MCTS-MAXN simulations, BlokusZero network and self-play.

    .venv/bin/python bench/bench_blokus.py [moves|mcts|net|selfplay|all] [--root puct|gumbel]
        [--layouts channels_last,contiguous,channels_last,contiguous]
    .venv/bin/python bench/bench_blokus.py probe --store DIR --net KEY|uniform [--mix 0.5]
        [--fpu 0.25|none] [--root puct|gumbel] [--games 24] [--sims 64] [--seed 7]
        [--parallel 16]   (with --seed 20000013: the same games as the small preset's final eval)

    .venv/bin/python bench/bench_blokus.py targets --store DIR --net KEY|uniform [--mix 0.5]
        [--fpu 0.25] [--root gumbel] [--games 16] [--seed 11] [--margin 10]
    .venv/bin/python bench/bench_blokus.py signal --store DIR [--margin 10]
    .venv/bin/python bench/bench_blokus.py ownership --games 200 [--steps 450] [--weights 0,1]
    .venv/bin/python bench/bench_blokus.py bootstrap --games 5000 --steps 3000 [--blocks 6
        --filters 32 --head conv] [--positions 4] [--rollouts 16] [--eval-games 48]
    .venv/bin/python bench/bench_blokus.py report --store DIR [--preset cpu]

`probe`: a stored blokus-train network (or an untrained one) under a chosen search against three
MCTS-MAXN, the paper's evaluation protocol, without writing to the store. `targets`: how much
the policy targets of repeated searches of one position agree, and how much they prefer large
pieces. `signal`: how much of a stored run's training targets simple features can predict, on
its last self-play run held out (value: a linear fit on the squares each colour has placed;
policy: a softmax on piece size). `ownership`: whether KataGo's auxiliary target (each cell's
final owner) keeps the value head from memorising a few games' outcomes. `bootstrap`: a network
trained on rollout-policy games (`engines.blokus.rollouts`), its held-out value error against
the best constant as it trains, then its own search (no rollouts) and an untrained network's
against three MCTS-MAXN on the same games. `report`: a `blokus-bootstrap` run in a store, node
by node, with its evaluations beside their untrained controls.

Reference in the same run for legal moves: the rules applied to all 30,433 placements at once
with numpy (what a vectorised Python engine would do).
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import torch

from gameforge.engines.blokus.game import (
    CELLS,
    EMPTY,
    N_PLAYERS,
    OWNER,
    REMAINING,
    SIDE,
    START,
    TO_MOVE,
    advance,
    legal_moves,
    new_state,
    place,
    tables,
)
from gameforge.engines.blokus.mcts import ROLLOUT_EPSILON, History, Tree, mcts_move, seeded_rng
from gameforge.engines.blokus.selfplay import (
    MatchParams,
    MatchResult,
    SearchParams,
    self_play,
    tree_capacity,
)
from gameforge.engines.blokus.zero import N_MOVES, N_PLANES, BlokusNet, Evaluator, ZeroConfig


def mid_game_positions(n: int, seed: int = 0) -> list[np.ndarray]:
    """Positions after 8..48 random placements."""
    t = tables()
    rng = np.random.default_rng(seed)
    stamp = np.zeros(t.n + 1, np.int64)
    moves = np.zeros(t.n, np.int64)
    out = []
    while len(out) < n:
        s = new_state()
        target = int(rng.integers(8, 49))
        alive = True
        for _ in range(target):
            k = legal_moves(s, t, stamp, moves, 1)
            place(s, int(moves[rng.integers(k)]), t)
            alive = advance(s, t)
            if not alive:
                break
        if alive:
            out.append(s)
    return out


def numpy_legal(s: np.ndarray) -> np.ndarray:
    """The vectorised reference: every placement tested against the owner grid."""
    t = tables()
    p = int(s[TO_MOVE])
    grid = s[OWNER : OWNER + CELLS].reshape(SIDE, SIDE)
    own = grid == p
    pad = np.pad(own, 1)
    edge = pad[:-2, 1:-1] | pad[2:, 1:-1] | pad[1:-1, :-2] | pad[1:-1, 2:]
    diag = pad[:-2, :-2] | pad[:-2, 2:] | pad[2:, :-2] | pad[2:, 2:]
    anchor = (diag & ~edge).ravel()
    if not own.any():
        anchor = np.zeros(CELLS, bool)
        anchor[START[p]] = True
    ok = np.append((grid == EMPTY).ravel() & ~edge.ravel(), True)
    anchor = np.append(anchor, False)
    remaining = s[REMAINING + p * 21 : REMAINING + (p + 1) * 21]
    c = t.cells
    return np.flatnonzero((remaining[t.piece] != 0) & ok[c].all(axis=1) & anchor[c].any(axis=1))


def bench_moves() -> None:
    """Legal-move generation over random mid-game positions, numba vs the numpy reference."""
    t = tables()
    positions = mid_game_positions(400)
    stamp = np.zeros(t.n + 1, np.int64)
    moves = np.zeros(t.n, np.int64)
    legal_moves(positions[0], t, stamp, moves, 1)
    counts = []
    t0 = time.perf_counter()
    reps = 20
    for _ in range(reps):
        for s in positions:
            counts.append(legal_moves(s, t, stamp, moves, 1))
    ours = reps * len(positions) / (time.perf_counter() - t0)
    t0 = time.perf_counter()
    for s in positions:
        numpy_legal(s)
    ref = len(positions) / (time.perf_counter() - t0)
    print(f"legal moves: {ours:,.0f} positions/s (mean {np.mean(counts):.0f} legal moves); "
          f"numpy reference {ref:,.0f} positions/s; ratio {ours / ref:.0f}x",
          flush=True)  # fmt: skip


def bench_mcts(sims: int = 200, threads: int = 2) -> None:
    """MCTS-MAXN simulations per second over mid-game positions, 1 and `threads` threads."""
    t = tables()
    positions = mid_game_positions(16, seed=1)
    trees = [Tree(tree_capacity(sims), t.n) for _ in range(threads)]
    hists = [History(t.n) for _ in range(threads)]
    mcts_move(positions[0], t, trees[0], hists[0], 4, seeded_rng(0, 0))

    def work(k: int, todo: list[np.ndarray]) -> None:
        for i, s in enumerate(todo):
            mcts_move(s, t, trees[k], hists[k], sims, seeded_rng(k, i))

    for n in (1, threads):
        t0 = time.perf_counter()
        with ThreadPoolExecutor(n) as pool:
            list(pool.map(work, range(n), [positions[k::n] for k in range(n)]))
        rate = len(positions) * sims / (time.perf_counter() - t0)
        print(f"MCTS-MAXN ({sims} sims/move, mid-game): {rate:,.0f} simulations/s on {n} "
              f"thread(s) ({rate / n:,.0f} per core)", flush=True)  # fmt: skip


def bench_net(config: ZeroConfig, batches: tuple[int, ...] = (1, 8, 32, 64)) -> None:
    """Network evaluations per second by batch size: the plain torch forward against the
    evaluator (batch norms folded, only the policy columns of the batch's legal moves; 240
    legal moves per position, as in mid-game)."""
    model = BlokusNet(config).eval()
    ev = Evaluator(model)
    rng = np.random.default_rng(0)
    for b in batches:
        planes = (rng.random((b, N_PLANES, CELLS)) < 0.2).astype(np.float32)
        moves = np.unique(rng.choice(30_433, min(30_433, 240 * b), replace=False))
        x = torch.from_numpy(planes).view(-1, N_PLANES, SIDE, SIDE)

        def plain(x: torch.Tensor = x) -> None:
            with torch.inference_mode():
                model(x)

        def ours(planes: np.ndarray = planes, moves: np.ndarray = moves) -> None:
            ev(planes, moves)

        rates = []
        for run in (plain, ours):
            run()
            reps = max(2, 64 // b)
            t0 = time.perf_counter()
            for _ in range(reps):
                run()
            rates.append(reps * b / (time.perf_counter() - t0))
        print(f"network {config.blocks}x{config.filters}, batch {b}: evaluator "
              f"{rates[1]:,.0f} evaluations/s, plain forward {rates[0]:,.0f} "
              f"({rates[1] / rates[0]:.2f}x)", flush=True)  # fmt: skip


def bench_selfplay(
    config: ZeroConfig, sims: int, games: int, parallel: int, root: str, layouts: str
) -> None:
    """Self-play moves per second with a fresh network, for each network memory layout in
    turn (`--layouts channels_last,contiguous`: the evaluator's layout against torch's
    default, alternating, the same games)."""
    t = tables()
    net = BlokusNet(config)
    for layout in layouts.split(","):
        ev = Evaluator(net, channels_last=layout == "channels_last")
        warm = SearchParams(2, noise_eps=0.25, proportional_plies=20, root_rule=root)
        self_play(t, ev, 1, 1, warm, seed=0)
        ev.positions = 0
        t0 = time.perf_counter()
        rec = self_play(t, ev, games, parallel, dataclasses.replace(warm, sims=sims), seed=1)
        dt = time.perf_counter() - t0
        print(f"self-play {config.blocks}x{config.filters}, {sims} sims ({root}), {parallel} "
              f"games at once, {layout}: "
              f"{len(rec.moves) / dt:.2f} moves/s ({ev.positions / dt:,.0f} evaluations/s, "
              f"{len(rec.moves) / max(rec.games, 1):.1f} plies/game)", flush=True)  # fmt: skip


def probe_search(args: argparse.Namespace) -> tuple[torch.nn.Module, SearchParams]:
    """The network a probe searches with (a stored blokus-train artifact, or an untrained one)
    and the search the options ask for, without noise (`--fpu none`: the paper's Q = 0)."""
    from gameforge.artifacts import ArtifactStore
    from gameforge.stages.blokus import fresh_net, load_net

    fpu = None if args.fpu == "none" else float(args.fpu)
    search = SearchParams(args.sims, rollout_mix=args.mix, fpu_reduction=fpu,
                          root_rule=args.root, value_margin=args.margin)  # fmt: skip
    if args.net == "uniform":
        return fresh_net(ZeroConfig(args.blocks, args.filters), 0), search
    return load_net(ArtifactStore(args.store).open(args.net), "cpu")[0], search


def probe(args: argparse.Namespace) -> None:
    """A network's win share against three MCTS-MAXN under the chosen search settings."""
    from gameforge.engines.blokus.selfplay import match

    model, search = probe_search(args)
    t0 = time.perf_counter()
    parallel = args.parallel or args.games  # the eval stage searches 16 at once
    result = match(tables(), Evaluator(model), args.games, parallel, search,
                   MatchParams(args.sims, 4, 1), args.seed)  # fmt: skip
    fpu = search.fpu_reduction
    share, _ = _win_share(result)
    print(f"{args.net} rollout_mix={args.mix} fpu={fpu} root={args.root}, {args.games} games: "
          f"{share} ({time.perf_counter() - t0:.0f} s)", flush=True)  # fmt: skip


def _win_share(result: MatchResult) -> tuple[str, int]:
    """`win share M (95% Wilson L-H)` of the network's seat in a match, and the games played."""
    from gameforge.engines.common.stats import wilson_interval

    shares = np.asarray(result.win_share())
    low, high = wilson_interval(float(shares.sum()), len(shares))
    return f"win share {shares.mean():.3f} (95% Wilson {low:.3f}-{high:.3f})", len(shares)


def target_spread(args: argparse.Namespace) -> None:
    """How reproducible the search's policy target is: `--games` self-play searches of the same
    position (the empty board, every game's ply 0) under the chosen settings, compared."""
    model, search = probe_search(args)
    noisy = dataclasses.replace(search, noise_eps=0.25, proportional_plies=20)  # self-play's
    rec = self_play(tables(), Evaluator(model), args.games, args.games, noisy, args.seed)
    targets = np.zeros((rec.games, N_MOVES))
    for g in range(rec.games):
        a, b = rec.pi_start[rec.game_start[g]], rec.pi_start[rec.game_start[g] + 1]
        targets[g, rec.pi_move[a:b]] = rec.pi_weight[a:b]
    targets /= targets.sum(axis=1, keepdims=True)
    pairs = [(i, j) for i in range(rec.games) for j in range(i + 1, rec.games)]
    tv = np.mean([0.5 * np.abs(targets[i] - targets[j]).sum() for i, j in pairs])
    consensus = int(targets.mean(axis=0).argmax())
    print(f"{args.net} rollout_mix={args.mix} root={args.root}, {rec.games} searches of the "
          f"empty board ({int((targets[0] > 0).sum())} legal): top-1 mass "
          f"{targets.max(axis=1).mean():.3f}, distinct top-1 moves "
          f"{len(set(targets.argmax(axis=1)))}, mean pairwise total variation {tv:.3f}, mass on "
          f"the mean target's top move {targets[:, consensus].mean():.3f}", flush=True)  # fmt: skip
    size = tables().size
    searched = np.flatnonzero(np.diff(rec.pi_start) > 1)
    by_target = by_legal = 0.0
    for k in searched.tolist():
        moves = rec.pi_move[rec.pi_start[k] : rec.pi_start[k + 1]]
        w = rec.pi_weight[rec.pi_start[k] : rec.pi_start[k + 1]]
        by_target += float((w * size[moves]).sum() / w.sum())
        by_legal += float(size[moves].mean())
    print(f"over all {searched.size} searched positions of these games: mean piece size "
          f"{by_target / searched.size:.3f} under the target, {by_legal / searched.size:.3f} "
          "over the legal moves", flush=True)  # fmt: skip


def learnable_signal(args: argparse.Namespace) -> None:
    """On a stored run's self-play games (the last run held out): the value targets' variance a
    linear fit on placed squares explains (win/loss, and the margin utility), and the policy
    loss of the best softmax on piece size against a uniform guess over the legal moves."""
    from gameforge.artifacts import ArtifactStore
    from gameforge.engines.blokus.selfplay import GameRecords, sample_batch
    from gameforge.stages.blokus import load_records

    store = ArtifactStore(args.store)
    done = [e.key for e in store.entries()
            if e.stage == "blokus-selfplay" and e.status == "complete"]  # fmt: skip
    runs = sorted((store.open(k) for k in done), key=lambda a: int(a.params["seed"]))
    fit = GameRecords.concat([load_records(a) for a in runs[:-1]])
    held = load_records(runs[-1])
    t = tables()

    def features(planes: np.ndarray, legal: np.ndarray) -> np.ndarray:
        placed = planes[:, :N_PLAYERS, :].sum(axis=2)  # squares on the board, mover first
        ply = planes[:, N_PLANES - 1, :1]
        count = np.log(legal.sum(axis=1, keepdims=True))
        return np.concatenate([placed, placed * ply, ply, count, np.ones_like(ply)], axis=1)

    for margin in dict.fromkeys((0.0, args.margin)):  # win/loss once when --margin is 0
        xp, _, xz, xl = sample_batch(t, fit, 8192, np.random.default_rng(5), False, margin)
        hp, _, hz, hl = sample_batch(t, held, 2048, np.random.default_rng(6), False, margin)
        w, *_ = np.linalg.lstsq(features(xp, xl), xz, rcond=None)
        constant = float(((hz - xz.mean(axis=0)) ** 2).sum(axis=1).mean())
        fitted = features(hp, hl) @ w
        linear = float(((hz - fitted) ** 2).sum(axis=1).mean())
        name = "win/loss" if margin == 0 else f"margin {margin:g}"
        corr = np.corrcoef(fitted.ravel(), hz.ravel())[0, 1]
        print(f"value targets ({name}), {held.games} held-out games: squared error "
              f"{constant:.3f} for the best constant, {linear:.3f} for the linear fit "
              f"({1 - linear / constant:.1%} explained, correlation {corr:.3f})",
              flush=True)  # fmt: skip
    size = t.size.astype(np.float64)

    def size_loss(records: GameRecords, beta: float) -> float:
        losses = []
        for k in np.flatnonzero(np.diff(records.pi_start) > 1).tolist():
            a, b = records.pi_start[k], records.pi_start[k + 1]
            w = records.pi_weight[a:b] / records.pi_weight[a:b].sum()
            logits = beta * size[records.pi_move[a:b]]
            logits -= logits.max()
            losses.append(-float((w * (logits - np.log(np.exp(logits).sum()))).sum()))
        return float(np.mean(losses))

    betas = np.linspace(-0.5, 1.5, 21)
    best = betas[int(np.argmin([size_loss(fit, b) for b in betas]))]
    print(f"policy targets: held-out loss {size_loss(held, 0.0):.4f} for a uniform guess over "
          f"the legal moves, {size_loss(held, best):.4f} for softmax({best:.1f} x piece size) "
          "fitted on the rest", flush=True)  # fmt: skip
    if args.net != "uniform":  # a network that has not trained on the held-out games
        model, _ = probe_search(args)
        # the other runs as well: far lower error there than held out is memorising, both
        # above the constant is underfitting
        for name, records in (("held-out", held), ("the other runs'", fit)):
            planes, pi, z, legal = sample_batch(t, records, 2048, np.random.default_rng(6), False)
            with torch.no_grad():
                logits, v = model.eval()(torch.from_numpy(planes).view(-1, N_PLANES, SIDE, SIDE))
            logits = logits.masked_fill(~torch.from_numpy(legal), -1e9)
            loss = -(torch.from_numpy(pi) * torch.log_softmax(logits, dim=1)).sum(dim=1).mean()
            uniform = float(np.log(legal.sum(axis=1)).mean())
            error = float(((z - v.numpy()) ** 2).sum(axis=1).mean())
            # what the search uses is the ranking, not the calibration
            corr = np.corrcoef(v.numpy().ravel(), z.ravel())[0, 1]
            print(f"{args.net} on {name} positions: policy loss {float(loss):.4f} (uniform "
                  f"over the legal moves {uniform:.4f}), value squared error {error:.3f}, "
                  f"correlation {corr:.3f} (win/loss)", flush=True)  # fmt: skip


def _rollout_games(n: int, seed: int, epsilon: float) -> tuple[list[np.ndarray], np.ndarray]:
    """n games of the epsilon-greedy rollout policy: each game's placements and final owners."""
    from gameforge.engines.blokus.mcts import rollout_move

    t = tables()
    stamp = np.zeros(t.n + 1, np.int64)
    buffer = np.zeros(t.n, np.int64)
    anchors = np.zeros(CELLS, np.int64)
    games, finals = [], []
    for g in range(n):
        rng = seeded_rng(seed, g)
        s = new_state()  # colour 0 moves first, as `replay_planes` replays the game
        plies = []
        while (m := rollout_move(s, t, stamp, buffer, anchors, epsilon, rng)) >= 0:
            place(s, m, t)
            plies.append(m)
            if not advance(s, t):
                break
        games.append(np.array(plies, np.int64))
        finals.append(s.copy())
    return games, np.array(finals)


def ownership_probe(args: argparse.Namespace) -> None:
    """The value head's error on held-out games, trained with and without an ownership head.

    Games of MCTS-MAXN's rollout policy (epsilon 0.25), the last 200 held out; positions
    sampled uniformly from the training games with a random board symmetry; a network of the
    small preset's size trained as the flow trains (SGD, momentum 0.9, lr 0.01, batch 64) on
    the value loss plus `weight` x the ownership loss (cross-entropy of each cell's final
    owner: one of the four colours from the mover, or empty). No policy loss: the question is
    the value head alone.
    """
    from torch import nn

    from gameforge.engines.blokus.game import PIECE_SIZES, board_symmetries, outcome
    from gameforge.engines.blokus.selfplay import make_optimiser, replay_planes

    t = tables()
    held_games = 200
    games, finals = _rollout_games(args.games + held_games, args.seed, 0.25)
    z_all = np.zeros((len(games), N_PLAYERS))
    for g, final in enumerate(finals):
        outcome(final, PIECE_SIZES, z_all[g])
    owner_all = finals[:, OWNER : OWNER + CELLS].astype(np.int64)
    moves = np.concatenate(games)
    starts = np.concatenate([[0], np.cumsum([len(g) for g in games])]).astype(np.int64)
    cell_map = board_symmetries()

    def sample(first: int, last: int, n: int, rng: np.random.Generator, symmetric: bool):
        pick = rng.integers(starts[first], starts[last], n)
        game = np.searchsorted(starts, pick, side="right") - 1
        planes = np.zeros((n, N_PLANES, CELLS), np.float32)
        movers = np.zeros(n, np.int64)
        replay_planes(moves, starts, game, pick - starts[game], t, new_state(), planes, movers)
        order = (movers[:, None] + np.arange(N_PLAYERS)[None, :]) % N_PLAYERS
        z = z_all[game[:, None], order].astype(np.float32)
        own = owner_all[game]
        owner = np.where(own == EMPTY, N_PLAYERS, (own - movers[:, None]) % N_PLAYERS)
        if symmetric:
            for i, k in enumerate(rng.integers(0, 8, n)):
                planes[i][:, cell_map[k]] = planes[i].copy()
                owner[i][cell_map[k]] = owner[i].copy()
        return planes, z, owner

    train_games = args.games
    held_planes, held_z, _ = sample(train_games, len(games), 2048, np.random.default_rng(99), False)
    _, fit_z, _ = sample(0, train_games, 8192, np.random.default_rng(98), False)
    constant = float(((held_z - fit_z.mean(axis=0)) ** 2).sum(axis=1).mean())
    print(f"{len(games)} rollout games ({len(moves) / len(games):.1f} plies each), "
          f"{train_games} to train on, {held_games} held out; held-out value error of the best "
          f"constant {constant:.3f}", flush=True)  # fmt: skip
    held_x = torch.from_numpy(held_planes).view(-1, N_PLANES, SIDE, SIDE)
    for weight in (float(w) for w in args.weights.split(",")):
        torch.manual_seed(0)
        net = BlokusNet(ZeroConfig(args.blocks, args.filters))
        head = nn.Conv2d(args.filters, N_PLAYERS + 1, 1)
        optimiser = make_optimiser(nn.ModuleList([net, head]), 0.01)
        for step in range(args.steps):
            planes, z, owner = sample(0, train_games, 64, np.random.default_rng([0, step]), True)
            net.train()
            h = net.blocks(net.stem(torch.from_numpy(planes).view(-1, N_PLANES, SIDE, SIDE)))
            value_loss = ((torch.from_numpy(z) - net.value(h)) ** 2).sum(dim=1).mean()
            owner_loss = nn.functional.cross_entropy(head(h).flatten(2), torch.from_numpy(owner))
            optimiser.zero_grad()
            (value_loss + weight * owner_loss).backward()
            optimiser.step()
            if (step + 1) % 150 == 0:
                net.eval()
                with torch.no_grad():
                    v = torch.cat([net(held_x[a : a + 256])[1] for a in range(0, 2048, 256)])
                error = float(((v.numpy() - held_z) ** 2).sum(axis=1).mean())
                print(f"ownership weight {weight:g}, step {step + 1}: training value loss "
                      f"{value_loss.item():.3f}, ownership loss {owner_loss.item():.3f}; held-out "
                      f"value error {error:.3f} (constant {constant:.3f})", flush=True)  # fmt: skip


def bootstrap_probe(args: argparse.Namespace) -> None:
    """Train on rollout-policy games, then play the network-only search against MCTS-MAXN.

    Training games 0..games-1 and 300 held-out games games..games+299 of one seed; the flow's
    training step (SGD, momentum 0.9, lr 0.01, batch 64, symmetry augmentation, legal-set
    policy loss, value weight 1). Every `--every` steps: the held-out value error (summed over
    the colours) against the training targets' mean, and the held-out policy loss against the
    targets' own entropy. Then the trained and an untrained network of the same shape, each
    searching alone (rollout_mix 0, Gumbel root, fpu 0.25, `--sims`), against three MCTS-MAXN
    of `--sims` simulations on the same `--eval-games` games (seed `--seed`).
    """
    from gameforge.engines.blokus.rollouts import RolloutTargets, rollout_games
    from gameforge.engines.blokus.selfplay import make_optimiser, match, sample_batch, train_step

    t = tables()
    t0 = time.perf_counter()
    targets = RolloutTargets(ROLLOUT_EPSILON, args.positions, args.rollouts)
    train = rollout_games(t, 0, args.games, 11, targets)
    held = rollout_games(t, args.games, args.games + 300, 11, targets)
    kept = int(np.isfinite(train.ply_value[:, 0]).sum())
    print(f"{args.games} + 300 rollout games, {kept} training positions, {args.rollouts} "
          f"rollouts each: {time.perf_counter() - t0:.0f} s", flush=True)  # fmt: skip
    n_held = int(np.isfinite(held.ply_value[:, 0]).sum())
    h_planes, h_pi, h_z, h_legal = sample_batch(t, held, n_held, np.random.default_rng(5), False)
    mean = sample_batch(t, train, 4096, np.random.default_rng(6), False)[2].mean(axis=0)
    constant = float(((h_z - mean) ** 2).sum(axis=1).mean())
    entropy = float(-(h_pi * np.log(np.maximum(h_pi, 1e-30))).sum(axis=1).mean())
    config = ZeroConfig(args.blocks, args.filters, args.head)
    torch.manual_seed(0)
    untrained = BlokusNet(config)
    net = copy.deepcopy(untrained)
    optimiser = make_optimiser(net, 0.01)
    held_x = torch.from_numpy(h_planes).view(-1, N_PLANES, SIDE, SIDE)
    t0 = time.perf_counter()
    for step in range(args.steps):
        planes, pi, z, legal = sample_batch(t, train, 64, np.random.default_rng([1, step]), True)
        train_step(net, optimiser, planes, pi, z, legal=legal)
        if (step + 1) % args.every == 0 or step + 1 == args.steps:
            net.eval()
            with torch.no_grad():
                out = [net(held_x[a : a + 256]) for a in range(0, n_held, 256)]
            value = torch.cat([o[1] for o in out]).numpy()
            logits = torch.cat([o[0] for o in out]).masked_fill(~torch.from_numpy(h_legal), -1e9)
            policy = float(-(torch.from_numpy(h_pi) * torch.log_softmax(logits, 1)).sum(1).mean())
            error = float(((value - h_z) ** 2).sum(axis=1).mean())
            rate = (step + 1) * 64 / (time.perf_counter() - t0)
            print(f"step {step + 1}: held-out value error {error:.3f} (constant {constant:.3f}), "
                  f"policy loss {policy:.3f} (target entropy {entropy:.3f}); "
                  f"{rate:.0f} samples/s", flush=True)  # fmt: skip
    if args.save:
        torch.save(net.state_dict(), args.save)
    for name, model in (("trained", net), ("untrained", untrained)):
        t0 = time.perf_counter()
        search = SearchParams(args.sims, fpu_reduction=0.25, root_rule="gumbel")
        result = match(t, Evaluator(model.eval()), args.eval_games, args.eval_games, search,
                       MatchParams(args.sims, 4, 2), args.seed)  # fmt: skip
        share, games = _win_share(result)
        print(f"{name} {args.blocks}x{args.filters} ({args.head} head), its own search alone: "
              f"{share} over {games} games ({time.perf_counter() - t0:.0f} s)",
              flush=True)  # fmt: skip


def flow_report(args: argparse.Namespace) -> None:
    """A blokus-bootstrap run in `--store` at `--preset` (markdown): every node's key, wall and
    CPU time over all its attempts and what it found; every evaluation's rows (the untrained
    control beside the network it was played against); the training time in all."""
    from gameforge.artifacts import ArtifactStore
    from gameforge.flows.pipeline import plan_keys
    from gameforge.flows.specs import get_flow

    spec = get_flow("blokus-bootstrap")
    keys = plan_keys(spec, spec.resolve(args.preset, []))
    store = ArtifactStore(args.store)
    print("| node | key | wall h | CPU h | result |\n|---|---|---:|---:|---|")
    learning = 0.0
    for node in spec.nodes:
        key = keys[node.name]
        if not store.exists(key):
            print(f"| {node.name} | {key} | | | not built |")
            continue
        art = store.open(key)
        built = art.meta.get("provenance", {})
        wall = float(built.get("wall_s_all_attempts", built.get("wall_s", 0.0)))
        cpu = float(built.get("cpu_s_all_attempts", built.get("cpu_s", 0.0)))
        if not node.stage.endswith(("eval", "curve")):
            learning += wall
        s = art.meta["summary"]
        if node.stage == "blokus-eval":
            result = "; ".join(f"{r['net']} {r['win_rate']:.3f} ({r['win_rate_low']:.3f}-"
                               f"{r['win_rate_high']:.3f}, {r['games']} games)"
                               for r in s["table"])  # fmt: skip
        elif node.stage == "blokus-train":
            result = (f"{s['steps_total']:,} steps, value {s['value_loss_last_100']}, policy "
                      f"{s['policy_loss_last_100']} (last 100)")  # fmt: skip
        elif node.stage == "blokus-curve":
            result = f"{len(s['table'])} rows"
        else:
            result = f"{s['games']:,} games, {s['plies_per_game']} plies each"
        print(f"| {node.name} | {key} | {wall / 3600:.2f} | {cpu / 3600:.2f} | {result} |")
    print(f"\nrollout games, pretraining, self-play and training (no evaluation): "
          f"{learning / 3600:.2f} h wall")  # fmt: skip
    for node in spec.nodes:
        key = keys[node.name]
        versus = store.open(key).meta["summary"].get("versus_control") if (
            node.stage == "blokus-eval" and store.exists(key)) else None  # fmt: skip
        if versus:
            print(f"\n{node.name}: {versus['statement']}")


def main() -> None:
    """Run the chosen benchmarks."""
    ap = argparse.ArgumentParser()
    ap.add_argument("what", nargs="?", default="all")
    ap.add_argument("--sims", type=int, default=64)
    ap.add_argument("--games", type=int, default=8)
    ap.add_argument("--parallel", type=int, default=None, help="default: 8; a probe: --games")
    ap.add_argument("--blocks", type=int, default=4)
    ap.add_argument("--filters", type=int, default=64)
    ap.add_argument("--store", default=None)
    ap.add_argument("--net", default="uniform")
    ap.add_argument("--mix", type=float, default=0.0)
    ap.add_argument("--fpu", default="none")
    ap.add_argument("--margin", type=float, default=0.0, help="value margin (0: win/loss)")
    # (signal compares win/loss with --margin; give it one above 0 there)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--steps", type=int, default=450, help="ownership: training steps")
    ap.add_argument("--layouts", default="channels_last", help="selfplay: memory layouts")
    ap.add_argument("--weights", default="0,1", help="ownership: loss weights to compare")
    ap.add_argument("--root", choices=("puct", "gumbel"), default="puct")
    ap.add_argument("--head", choices=("dense", "conv"), default="dense", help="policy head")
    ap.add_argument("--positions", type=int, default=4, help="bootstrap: kept per game")
    ap.add_argument("--rollouts", type=int, default=16, help="bootstrap: per value target")
    ap.add_argument("--every", type=int, default=500, help="bootstrap: steps between reports")
    ap.add_argument("--eval-games", type=int, default=48, help="bootstrap: games vs MCTS-MAXN")
    ap.add_argument("--save", default=None, help="bootstrap: where to save the trained weights")
    ap.add_argument("--preset", default="cpu", help="report: the blokus-bootstrap preset")
    args = ap.parse_args()
    search_probes = {"probe": probe, "targets": target_spread, "signal": learnable_signal,
                     "ownership": ownership_probe, "bootstrap": bootstrap_probe,
                     "report": flow_report}  # fmt: skip
    if args.what in search_probes:
        search_probes[args.what](args)
        return
    print(f"torch threads {torch.get_num_threads()}, players {N_PLAYERS}", flush=True)
    config = ZeroConfig(args.blocks, args.filters)
    if args.what in ("moves", "all"):
        bench_moves()
    if args.what in ("mcts", "all"):
        bench_mcts()
    if args.what in ("net", "all"):
        bench_net(config)
        if args.what == "net":
            bench_net(ZeroConfig(10, 128))
    if args.what in ("selfplay", "all"):
        bench_selfplay(config, args.sims, args.games, args.parallel or 8, args.root, args.layouts)


if __name__ == "__main__":
    main()
