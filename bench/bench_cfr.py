"""CFR benchmarks: Leduc against OpenSpiel, sampling variants by time, and the paper preset.

python bench/bench_cfr.py leduc [--iterations 1000]      # ours vs pyspiel C++, same run
python bench/bench_cfr.py sampling [--seconds 10] [--game G] [--plot P.png]   # equal time
python bench/bench_cfr.py hulhe [--iterations 20] [--threads 1] [--reference OLD/pcs.py]  # public
python bench/bench_cfr.py paper --store S [--iterations 300000] [--algorithm chance]
"""

from __future__ import annotations

import argparse
import os
import resource
import time

import numpy as np
from _shared import build_upstream, elapsed_log, reference_module

from gameforge.engines.poker.cfr import FullWalkSolver
from gameforge.engines.poker.mccfr import SampledSolver
from gameforge.engines.poker.pcs import PublicSampledSolver
from gameforge.engines.poker.shipped_games import load_game


def leduc(iterations: int) -> None:
    """Time per iteration and exploitability: our CFR/CFR+ vs OpenSpiel's C++ solvers."""
    import pyspiel

    game = pyspiel.load_game("leduc_poker")
    ours_game = load_game("leduc.limit.2p")
    checkpoints = [c for c in (10, 100, 1000, 10000) if c <= iterations]
    print(f"{os.cpu_count()} cores; Leduc, {iterations} iterations; exploitability in chips\n")
    print(
        "| solver | ms / iteration (ours) | ms / iteration (OpenSpiel C++) | speed-up | "
        + " | ".join(f"expl. @{c} ours / OpenSpiel" for c in checkpoints)
        + " |"
    )
    print("|---|---:|---:|---:|" + "---|" * len(checkpoints))
    for name, plus, ref_cls in (
        ("CFR", False, pyspiel.CFRSolver),
        ("CFR+", True, pyspiel.CFRPlusSolver),
    ):
        ours = FullWalkSolver(ours_game, plus=plus)
        ours.iterate(1)  # compile outside the clock
        ours = FullWalkSolver(ours_game, plus=plus)
        ref = ref_cls(game)
        t_ours = t_ref = 0.0
        rows = []
        done = 0
        for c in checkpoints:
            t0 = time.perf_counter()
            ours.iterate(c - done)
            t_ours += time.perf_counter() - t0
            t0 = time.perf_counter()
            for _ in range(c - done):
                ref.evaluate_and_update_policy()
            t_ref += time.perf_counter() - t0
            done = c
            rows.append(
                f"{ours.exploitability():.6f} / "
                f"{pyspiel.exploitability(game, ref.average_policy()):.6f}"
            )
        a, b = 1000 * t_ours / done, 1000 * t_ref / done
        print(f"| {name} | {a:.3f} | {b:.3f} | {b / a:.1f}x | " + " | ".join(rows) + " |")


SAMPLING_VARIANTS = (
    ("CFR+ (full traversal)", "full", {}),
    ("chance sampling, uniform avg", "chance", {"gamma": 0.0}),
    ("chance sampling, linear avg", "chance", {"gamma": 1.0}),
    ("external sampling, uniform avg", "external", {"gamma": 0.0}),
    ("external sampling, linear avg", "external", {"gamma": 1.0}),
    ("public sampling, uniform avg", "public", {"gamma": 0.0}),
    ("public sampling, CFR+, linear avg", "public", {"gamma": 1.0, "plus": True}),
    ("public sampling, CFR+, quadratic avg", "public", {"gamma": 2.0, "plus": True}),
    ("public sampling, DCFR (1.5, 0, 2)", "public", {"gamma": 2.0, "discount": (1.5, 0.0)}),
)


def _sampling_solver(game, kind: str, options: dict):  # type: ignore[no-untyped-def]
    if kind == "full":
        return FullWalkSolver(game, plus=True)
    if kind == "public":
        return PublicSampledSolver(game, **options)
    return SampledSolver(game, variant=kind, **options)


def sampling(seconds: float, game_name: str, plot: str | None) -> None:
    """Exploitability after equal wall time: full CFR+, chance, external and public sampling
    (a table at log-spaced times; with `plot`, the curves in one PNG)."""
    game = load_game(game_name)
    exact = FullWalkSolver(game)
    budgets = [float(b) for b in np.geomspace(seconds / 32, seconds, 6)]
    print(f"{game_name}: exploitability (chips) after the same wall time; {os.cpu_count()} cores\n")
    print(
        "| algorithm | " + " | ".join(f"{b:.3g} s" for b in budgets) + " | iterations in "
        f"{seconds:g} s | nodes / iteration |"
    )
    print("|---|" + "---:|" * (len(budgets) + 2))
    curves = {}
    for label, kind, options in SAMPLING_VARIANTS:
        warm = _sampling_solver(game, kind, options)
        warm.iterate(2)
        solver = _sampling_solver(game, kind, options)
        step = {"full": 1, "public": 20}.get(kind, 2000)
        values = []
        spent = 0.0
        for budget in budgets:
            while spent < budget:
                t0 = time.perf_counter()
                solver.iterate(step)
                spent += time.perf_counter() - t0
            values.append(exact.exploitability(solver.average_strategy()))
        curves[label] = values
        nodes = getattr(solver, "nodes_visited", 0) / max(1, solver.iteration)
        print(
            f"| {label} | "
            + " | ".join(f"{v:.4f}" for v in values)
            + f" | {solver.iteration:,} | "
            + (f"{nodes:.0f} |" if nodes else "all |"),
            flush=True,
        )
    if plot:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(8, 5.5), layout="constrained")
        for label, values in curves.items():
            style = "-" if label.startswith("public") else "--"
            ax.loglog(budgets, values, style, marker="o", label=label)
        ax.set_xlabel("seconds of solving (one thread)")
        ax.set_ylabel("exact exploitability (chips per hand, mean over seats)")
        ax.set_title(
            f"{game_name}: exploitability against wall time, {os.cpu_count()}-core machine"
        )
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
        fig.savefig(plot, dpi=120)
        print(f"\nwrote {plot}")


def hulhe_speed(iterations: int, reference: str | None, threads: int) -> None:
    """Public sampling on heads-up limit hold'em with a random 169-9000-9000-9000 abstraction:
    seconds per iteration and peak memory, beside chance sampling's per deal; with a reference
    `pcs.py` (another commit's), both public solvers from the same seed, timed iteration by
    iteration in turn, and their regrets and strategy sums compared. `threads`: this
    solver's."""
    from bench_best_response import synthetic_tables

    game, tables, _rng = synthetic_tables()
    if reference:
        old = reference_module(reference, "gameforge_reference_pcs")
        solvers = {
            "this": PublicSampledSolver(game, tables, plus=True, gamma=2.0, threads=threads),
            "reference": old.PublicSampledSolver(game, tables, plus=True, gamma=2.0),
        }
        spent = dict.fromkeys(solvers, 0.0)
        for solver in solvers.values():
            solver.iterate(1)  # compile
        for block in range(0, iterations, 2):  # in turns of two iterations
            for name, solver in solvers.items():
                t0 = time.perf_counter()
                solver.iterate(min(2, iterations - block))
                spent[name] += time.perf_counter() - t0
        a, b = solvers.values()
        same = np.array_equal(a.regret, b.regret) and np.array_equal(a.avg, b.avg)
        for name, seconds in spent.items():
            print(f"public sampling, CFR+ ({name}): {1e3 * seconds / iterations:.1f} ms per "
                  f"iteration over {iterations}")  # fmt: skip
        print(f"this vs reference: {spent['reference'] / spent['this']:.2f}x; regrets and "
              f"strategy sums {'bit for bit the same' if same else 'DIFFERENT'}")  # fmt: skip
        return
    for label, make, count in (
        ("chance sampling", lambda: SampledSolver(game, tables, variant="chance"), 20_000),
        (f"public sampling, CFR+, {threads} thread(s)",
         lambda: PublicSampledSolver(game, tables, plus=True, gamma=2.0, threads=threads),
         iterations),
    ):  # fmt: skip
        solver = make()
        solver.iterate(1)  # compile
        t0 = time.perf_counter()
        solver.iterate(count)
        spent = time.perf_counter() - t0
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
        print(f"{label}: {count:,} iterations in {spent:.1f} s, {1e3 * spent / count:.3f} ms "
              f"each; peak RSS so far {peak:.1f} GB", flush=True)  # fmt: skip


def paper(store: str, iterations: int, algorithm: str) -> None:
    """The paper preset's abstraction (built or reused), then `cfr` timed in this process."""
    from gameforge.artifacts import ArtifactStore
    from gameforge.flows.specs import get_flow
    from gameforge.stages.progress import LogProgress
    from gameforge.stages.runner import run_stage

    spec = get_flow("lhe-solve")
    params = spec.resolve("paper")
    artifacts = ArtifactStore(store)
    log = elapsed_log()
    results = build_upstream(spec, "paper", artifacts, "cfr", log)
    inputs = {name: results[up].key for name, up in spec.node("cfr").inputs.items()}
    cfr_params = dict(params["cfr"], iterations=iterations, algorithm=algorithm, batch=10_000)
    t1 = time.monotonic()
    result = run_stage(
        "cfr", cfr_params, inputs, store=artifacts, progress=LogProgress(log, 60), log=log
    )
    wall = time.monotonic() - t1
    summary = artifacts.open(result.key).meta["summary"]
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    print(f"\n{os.cpu_count()} cores; cached: {result.cached}; key {result.key}\n")
    print(
        "| algorithm | iterations | infosets | solve seconds | stage seconds | "
        "µs / iteration | positive regret / T (mbb/g) | peak RSS GB |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    print(
        f"| {algorithm} | {summary['iterations']:,} | {summary['infosets']:,} | "
        f"{summary['seconds']:.0f} | {wall:.0f} | "
        f"{1e6 * summary['seconds'] / summary['iterations']:.0f} | "
        f"{summary.get('regret_bound_mbb_per_game', float('nan')):.1f} | {peak:.1f} |"
    )


def main() -> None:
    """Dispatch to one benchmark."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("which", choices=("leduc", "sampling", "hulhe", "paper"))
    parser.add_argument("--iterations", type=int, default=None)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--store", default=None)
    parser.add_argument("--algorithm", default="chance")
    parser.add_argument("--game", default="leduc.limit.2p")
    parser.add_argument("--plot", default=None, help="sampling: the curves as a PNG")
    parser.add_argument("--reference", default=None, help="hulhe: another pcs.py, side by side")
    parser.add_argument("--threads", type=int, default=1, help="hulhe: public sampling's")
    args = parser.parse_args()
    np.set_printoptions(precision=6)
    if args.which == "leduc":
        leduc(args.iterations or 1000)
    elif args.which == "sampling":
        sampling(args.seconds, args.game, args.plot)
    elif args.which == "hulhe":
        hulhe_speed(args.iterations or 20, args.reference, args.threads)
    else:
        if not args.store:
            parser.error("paper needs --store")
        paper(args.store, args.iterations or 300_000, args.algorithm)


if __name__ == "__main__":
    main()
