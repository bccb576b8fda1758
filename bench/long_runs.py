"""The paper-scale runs that take hours here, in the order they are worth running. Rerun this
script in every session (in the background, with a log) and it goes on from where the store
stands: every step is a gameforge command, so a finished step is a cache hit and a killed one
resumes from its checkpoints or finished chunks.

    .venv/bin/python bench/long_runs.py --store /tmp/paper --status     # done, next, left
    nohup .venv/bin/python bench/long_runs.py --store /tmp/paper > long_runs.log 2>&1 &
    .venv/bin/python bench/long_runs.py --store /tmp/paper --only solve-public-30m
    .venv/bin/python bench/long_runs.py --store /tmp/paper --report     # the comparison so far

The steps (issues 20 and 21):
1. the solver comparison on the paper's C8 abstraction: chance sampling (the presets') and
   public chance sampling with CFR+ and quadratic averaging, each for 30 minutes of solving,
   then continued (input `parent`) to 2 hours;
2. LBR of those four solves (minutes each: a lower bound while the exact figures wait);
3. the exact best response (`best-response`, float32 sums, about 9 hours each) of the four
   solves; then the no-limit CNN flow's `paper` preset (issue 25: in bfloat16, about 9.3 hours,
   where the CPU runs it natively, else in float32, about 16 hours);
   then the best responses of the paper's C8 at 300,000 iterations and at 7.5 M, and of C6,
   C10 and C12.

A timed solve's wall time is its budget, so it starts only on an idle machine: while the
1-minute load average is above `--idle-load` (other work running) the script waits for it to
fall (`--no-wait`: skip to the next step instead). A step whose exact best response was built,
or is being built, by an earlier stage version counts as done or is left to be resumed with that
version's code (the script says which).
"""

from __future__ import annotations

import argparse
import math
import os
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from gameforge.artifacts import ArtifactStore
from gameforge.engines.common.torch_arrays import cpu_runs_bfloat16
from gameforge.flows.pipeline import plan
from gameforge.flows.specs import get_flow

ROOT = Path(__file__).resolve().parent.parent
GAMEFORGE = str(ROOT / ".venv" / "bin" / "gameforge")
PUBLIC = ["cfr.algorithm=public", "cfr.plus=true", "cfr.averaging=2"]
FLOAT32 = ["best-response.precision=float32"]


@dataclass(frozen=True)
class Solve:
    """One `lhe-solve --preset paper` configuration: its `--set`s and optional parent."""

    sets: tuple[str, ...] = ()
    parent: Solve | None = None
    flow: str = "lhe-solve"

    @property
    def timed(self) -> bool:
        """True if the solve runs for a time budget (its wall time must be its own)."""
        return any(value.startswith("cfr.seconds=") for value in self.sets)

    def overrides(self) -> list[str]:
        """`--set` values (a solve's best response always in float32)."""
        return [*self.sets, *(FLOAT32 if self.flow == "lhe-solve" else [])]

    def inputs(self, store: ArtifactStore) -> dict[str, dict[str, str]]:
        """The cfr node's parent, once the parent solve is stored."""
        if self.parent is None:
            return {}
        return {"cfr": {"parent": self.parent.cfr_key(store)}}

    def steps(self, store: ArtifactStore, with_br: bool) -> list:  # type: ignore[type-arg]
        """The flow's planned steps (with its best response, if asked)."""
        spec = get_flow(self.flow)
        params = spec.resolve("paper", self.overrides())
        only = spec.default_nodes(["best-response"] if with_br else [])
        return plan(spec, params, store, only=only, stored=self.inputs(store))

    def cfr_key(self, store: ArtifactStore) -> str:
        """The key its cfr node computes (stored or not)."""
        return next(s.key for s in self.steps(store, False) if s.stage == "cfr")

    def argv(self, store: ArtifactStore, with_br: bool) -> list[str]:
        """The gameforge command line."""
        out = ["run", self.flow, "--preset", "paper", "--store", str(store.root)]
        for value in self.overrides():
            out += ["--set", value]
        for node, names in self.inputs(store).items():
            for name, key in names.items():
                out += ["--input", f"{node}.{name}={key}"]
        return out + (["--with", "best-response"] if with_br else [])


CHANCE_30M = Solve(("cfr.seconds=1800", "cfr.iterations=none"))
PUBLIC_30M = Solve((*PUBLIC, "cfr.seconds=1800", "cfr.iterations=none"))
# a candidate after public sampling's LBR fell behind at 30 minutes: chance sampling with
# regret matching+ and linear averaging
CHANCE_PLUS_30M = Solve(
    ("cfr.plus=true", "cfr.averaging=1", "cfr.seconds=1800", "cfr.iterations=none")
)
# public sampling again after its walks went node by node and into threads (4.7x per
# iteration here): seed 1, since the seed-0 key holds the slower code's 30 minutes (the
# iterations are the same bits at any speed, so only the budget's stop differs)
PUBLIC_30M_FAST = Solve((*PUBLIC, "cfr.seed=1", "cfr.seconds=1800", "cfr.iterations=none"))
CHANCE_2H = Solve(("cfr.seconds=7200", "cfr.iterations=none"), parent=CHANCE_30M)
PUBLIC_2H = Solve(
    (*PUBLIC, "cfr.seed=1", "cfr.seconds=7200", "cfr.iterations=none"), parent=PUBLIC_30M_FAST
)
C8_300K = Solve()
C8_7M5 = Solve(("cfr.iterations=7500000",), parent=C8_300K)
CLUSTERS = {k: Solve((f"opponent-clusters.k={k}",)) for k in (6, 10, 12)}
# issue 25: bfloat16 scoring where the CPU runs it (about 9.3 h); emulated it is far slower
# than float32 (about 16 h)
NLHE_BFLOAT16 = cpu_runs_bfloat16()
NLHE_PAPER = Solve(("precision=bfloat16",) if NLHE_BFLOAT16 else (), flow="nlhe-cnn")


# deals x 2 seats per LBR: at 6,000 a 30-minute solve's LBR was +-60 mbb/g and the paired
# difference of two +-73, too wide to order them; 24,000 halves both (about 14 min each here)
LBR_DEALS = 24_000


def stored_on(store: ArtifactStore, strategy: str, prefix: str) -> str | None:
    """A stored artifact of a stage (by key prefix) built on `strategy`: for LBR the one of
    most deals (deal d is the same in every run of a seed, so a longer run extends a shorter)."""
    keys = [k for k in store.dependents(strategy) if k.startswith(prefix)]
    if prefix == "lbr-":
        keys.sort(key=lambda k: int(store.open(k).meta["params"]["deals"]))
    return keys[-1] if keys else None


def lbr_figures(store: ArtifactStore, lbr: str, big_blind: float) -> tuple[np.ndarray, str, str]:
    """A stored LBR's winnings per deal in mbb/g, its mean with 95% half-width, and its
    one-sided lower bound, as printed in the tables."""
    art = store.open(lbr)
    s = art.meta["summary"]
    wins = np.asarray(art["winnings"][:]) * 1000.0 / big_blind
    interval = f"{s['lbr_mbb_per_game']:,.1f} ± {s['half_width_95_mbb_per_game']:,.1f}"
    return wins, interval, f"{s['exploitability_lower_bound_mbb_per_game']:,.1f}"


def paired_difference(a: np.ndarray, b: np.ndarray) -> tuple[float, float, int]:
    """Mean of a - b over the deals both played (a seed's deal d is the same in every run),
    its 95% half-width, and the number of deals."""
    common = min(a.size, b.size)
    diff = a[:common] - b[:common]
    return float(diff.mean()), 1.959964 * float(diff.std(ddof=1)) / math.sqrt(common), common


@dataclass
class Step:
    """A named unit of the queue: a solve (timed or not), its LBR, or its exact best response."""

    name: str
    what: str
    solve: Solve
    kind: str  # "solve" (or any flow run), "lbr" or "best-response"
    notes: list[str] = field(default_factory=list)

    @property
    def timed(self) -> bool:
        """True for a solve whose wall time is its budget: it must run alone."""
        return self.kind == "solve" and self.solve.timed

    def status(self, store: ArtifactStore) -> str:
        """done, next (runnable now), waits (on an earlier step) or by-hand (an older build)."""
        if self.solve.parent is not None and not store.exists(self.solve.parent.cfr_key(store)):
            return "waits"
        if self.kind == "lbr":
            strategy = self.solve.cfr_key(store)
            if not store.exists(strategy):
                return "waits"
            lbr = stored_on(store, strategy, "lbr-")
            done = lbr is not None and store.open(lbr).meta["params"]["deals"] >= LBR_DEALS
            return "done" if done else "next"
        planned = self.solve.steps(store, self.kind == "best-response")
        node = planned[-1]
        if node.status == "cached":
            return "done"
        if self.kind == "best-response":
            strategy = self.solve.cfr_key(store)
            if not store.exists(strategy):  # the flow would solve it first: not a timed solve
                return "waits" if self.solve.timed else "next"
            built = stored_on(store, strategy, "best-response-")
            if built is not None:
                self.notes = [f"an earlier version's exact figure is stored: {built}"]
                return "done"
            if node.older_builds:
                version, key = node.older_builds[0]
                self.notes = [
                    f"{key} is an unfinished build by best-response version {version}: resume "
                    "it with that version's code (bench/BENCHMARKS.md says how), or remove it"
                ]
                return "by-hand"
        return "next"

    def argv(self, store: ArtifactStore) -> list[str]:
        """The gameforge command that runs (or resumes) this step."""
        if self.kind == "lbr":
            key = self.solve.cfr_key(store)
            deals = str(LBR_DEALS)
            return ["strategy", "lbr", key, "--deals", deals, "--store", str(store.root)]
        return self.solve.argv(store, self.kind == "best-response")


def queue() -> list[Step]:
    """Every step, in the order the script runs them."""
    timed = {
        "chance-30m": ("chance sampling, 30 minutes", CHANCE_30M),
        "public-30m": ("public chance sampling, CFR+ quadratic, 30 minutes", PUBLIC_30M),
        "public-30m-fast": (
            "public chance sampling, node-major walks in 2 threads, seed 1, 30 minutes",
            PUBLIC_30M_FAST,
        ),
        "chanceplus-30m": (
            "chance sampling, regret matching+, linear avg, 30 min",
            CHANCE_PLUS_30M,
        ),
        "chance-2h": ("chance sampling, continued to 2 hours", CHANCE_2H),
        "public-2h": ("public chance sampling, continued to 2 hours", PUBLIC_2H),
    }
    steps = [Step(f"solve-{n}", w, s, "solve") for n, (w, s) in timed.items()]
    steps += [Step(f"lbr-{n}", f"LBR of {w}", s, "lbr") for n, (w, s) in timed.items()]
    later = {
        **{n: (w, s) for n, (w, s) in timed.items()},
        "c8-300k": ("the paper's C8, 300,000 chance-sampled iterations", C8_300K),
        "c8-7m5": ("the paper's C8 continued to 7.5 M iterations", C8_7M5),
        **{f"c{k}-300k": (f"the paper's C{k}, 300,000 iterations", s) for k, s in CLUSTERS.items()},
    }
    steps.append(Step("solve-c8-7m5", "the paper's C8 continued to 7.5 M", C8_7M5, "solve"))
    steps += [
        Step(f"br-{n}", f"exact best response of {w}", s, "best-response")
        for n, (w, s) in later.items()
    ]
    # the no-limit CNN players' paper preset after the comparison's figures
    nlhe = Step(
        "nlhe-cnn-paper",
        f"no-limit CNN players, paper preset, {'bfloat16' if NLHE_BFLOAT16 else 'float32'}",
        NLHE_PAPER,
        "solve",
    )
    steps.insert(next(i for i, s in enumerate(steps) if s.name == "br-c8-300k"), nlhe)
    return steps


COMPARED = {  # at each budget: chance sampling (the presets'), then the others against it
    "30 minutes": ("chance-30m", "public-30m", "public-30m-fast", "chanceplus-30m"),
    "2 hours": ("chance-2h", "public-2h"),
}
TIMED = {
    "chance-30m": CHANCE_30M,
    "public-30m": PUBLIC_30M,
    "public-30m-fast": PUBLIC_30M_FAST,
    "chanceplus-30m": CHANCE_PLUS_30M,
    "chance-2h": CHANCE_2H,
    "public-2h": PUBLIC_2H,
}


def report(store: ArtifactStore) -> None:
    """The solver comparison so far: each timed solve's iterations and seconds, its LBR (mean,
    95% interval, one-sided lower bound) and its exact exploitability where computed; and at
    each budget the LBR difference of the two algorithms paired over the seeded deals both
    played."""
    wins: dict[str, np.ndarray] = {}
    print("| solve | iterations | solve s | LBR mbb/g (95%) | LBR lower bound | exact mbb/g |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, solve in TIMED.items():
        if solve.parent is not None and not store.exists(solve.parent.cfr_key(store)):
            continue
        key = solve.cfr_key(store)
        if not store.exists(key):
            continue
        summary = store.open(key).meta["summary"]
        row = [name, f"{summary['iterations']:,}", f"{summary['seconds']:,.0f}", "", "", ""]
        lbr = stored_on(store, key, "lbr-")
        if lbr is not None:
            wins[name], row[3], row[4] = lbr_figures(store, lbr, float(summary["big_blind"]))
        exact = stored_on(store, key, "best-response-")
        if exact is not None:
            row[5] = f"{store.open(exact).meta['summary']['exploitability_mbb_per_game']:,.1f}"
        print("| " + " | ".join(row) + " |")
    for budget, (chance, *others) in COMPARED.items():
        for other in others:
            if chance not in wins or other not in wins:
                continue
            mean, half, deals = paired_difference(wins[chance], wins[other])
            print(
                f"{budget}: LBR of {chance} minus {other}, paired over the same "
                f"{deals:,} deals: {mean:,.1f} ± {half:,.1f} mbb/g (95%)"
            )


def wait_for_idle(limit: float, wait: bool, say: Callable[[str], None]) -> bool:
    """True once the 1-minute load average is at most `limit` (or at once, if not waiting)."""
    while os.getloadavg()[0] > limit:
        if not wait:
            return False
        say(f"load {os.getloadavg()[0]:.2f} > {limit}: a timed solve waits for an idle machine")
        time.sleep(60)
    return True


def main() -> None:
    """Show the queue, or run what is left of it in order."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--store", required=True)
    ap.add_argument("--status", action="store_true", help="show the steps; run nothing")
    ap.add_argument("--report", action="store_true", help="the solver comparison so far")
    ap.add_argument("--only", action="append", default=[], help="run these steps (repeatable)")
    ap.add_argument("--idle-load", type=float, default=0.5)
    ap.add_argument("--no-wait", action="store_true", help="skip a timed solve on a busy machine")
    args = ap.parse_args()
    store = ArtifactStore(args.store)

    def say(text: str) -> None:
        print(f"[{time.strftime('%H:%M:%S')}] {text}", flush=True)

    steps = [s for s in queue() if not args.only or s.name in args.only]
    unknown = set(args.only) - {s.name for s in queue()}
    if unknown:
        sys.exit(f"no step {', '.join(sorted(unknown))} (see --status)")
    if args.report:
        report(store)
        return
    if args.status:
        for step in steps:
            state = step.status(store)
            print(f"{state:8} {step.name:22} {step.what}")
            for note in step.notes:
                print(f"{'':31} {note}")
            if state == "next":
                print(f"{'':31} gameforge {' '.join(step.argv(store))}")
        return
    for step in steps:
        state = step.status(store)
        if state != "next":
            say(f"{step.name}: {state}" + "".join(f"; {n}" for n in step.notes))
            continue
        if step.timed and not wait_for_idle(args.idle_load, not args.no_wait, say):
            say(f"{step.name}: skipped, the machine is busy (load {os.getloadavg()[0]:.2f})")
            continue
        argv = step.argv(store)
        say(f"{step.name}: gameforge {' '.join(argv)}")
        started = time.monotonic()
        code = subprocess.call([GAMEFORGE, *argv], cwd=ROOT)
        say(f"{step.name}: exit {code} after {time.monotonic() - started:,.0f} s")
        if code != 0:
            sys.exit(code)


if __name__ == "__main__":
    main()
