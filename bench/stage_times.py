"""Fit and check the stages' time models (gameforge/stages/timing.py) on stored artifacts.

    python bench/stage_times.py fit STORE... [--walls TIMES] [--write]
    python bench/stage_times.py check STORE... --walls TIMES

`fit` reads every complete artifact of the stores (but those resumed, built while other work
took the CPU, or by an older version of their stage): its stage's footprint (from its recorded
parameters) gives the work, the artifact's `duration_s` the time; the parts a stage timed on
its own (`Footprint.parts`, a league's AIVAT) are models of their own, taken from the rest.
Each time model (a stage, or one work kind of it) gets `fixed + rate x work` by least squares
on relative errors; a model measured at one work size only gets the median fixed cost of the
models measured at several, and the rest as its rate. With `--walls` (the `times.txt` of
bench/tiny_times.sh: one line per flow store with its wall time), a flow's start-up cost is its
wall minus its stages' durations (the median over the stores). `--write` stores the result in
stages/timings.json.

`check` prints, per store, the estimated wall time (flow start plus every stage's estimate)
beside the measured one and their ratio.
"""

from __future__ import annotations

import argparse
import json
import platform
import re
import statistics
import sys
from pathlib import Path

import numpy as np

from gameforge.artifacts import ArtifactStore
from gameforge.stages import timing
from gameforge.stages.registry import current_version
from gameforge.stages.timing import (
    model_name,
    part_model_name,
    part_seconds,
    recorded_footprint,
    stage_seconds,
)


def machine() -> str:
    """The CPU model and core count, as /proc/cpuinfo names them."""
    try:
        text = Path("/proc/cpuinfo").read_text()
        name = re.search(r"model name\s*:\s*(.+)", text)
        cores = len(re.findall(r"^processor\s*:", text, re.M))
        return f"{name.group(1).strip() if name else platform.processor()}, {cores} cores"
    except OSError:
        return platform.processor()


# A run of at least CONTENDED_AFTER_S seconds that got less than this share of a core was
# measured beside other work: left out of the fit.
CONTENDED_CPU_SHARE, CONTENDED_AFTER_S = 0.8, 5.0


def contended(meta: dict) -> bool:
    """Whether an artifact's build shared the machine (its CPU time well under its wall time)."""
    wall = meta.get("duration_s") or 0.0
    cpu = (meta.get("provenance") or {}).get("cpu_s")
    return cpu is not None and wall >= CONTENDED_AFTER_S and cpu < CONTENDED_CPU_SHARE * wall


def measured_runs(stores: list[str]) -> list[tuple[str, str, float, float, str]]:
    """(store, model, work, duration_s, key) of every complete artifact with a footprint, built
    in one go (not resumed) and alone."""
    rows = []
    for root in stores:
        store = ArtifactStore(root)
        for key in store.keys():  # noqa: SIM118 (a store, not a dict)
            artifact = store.open(key)
            duration = artifact.meta.get("duration_s")
            footprint = recorded_footprint(store, key)
            if footprint is None or duration is None or artifact.meta.get("resumed"):
                continue
            if artifact.meta.get("version") != current_version(artifact.stage):
                continue  # an older version's work need not be this one's
            if contended(artifact.meta):
                continue
            parts = part_seconds(artifact.meta)
            for part, seconds in parts.items():  # timed on its own: its own model
                work = footprint.parts.get(part, 0.0)
                rows.append((root, part_model_name(artifact.stage, part), work, seconds, key))
            name = model_name(artifact.stage, footprint)
            rest = float(duration) - sum(parts.values())
            rows.append((root, name, float(footprint.work), rest, key))
    return rows


def fit_model(work: np.ndarray, seconds: np.ndarray, floor: float) -> tuple[float, float]:
    """(fixed, rate) minimising the relative errors; one work size: `floor` fixed, the rest rate."""
    if work.max() <= 0:
        return float(np.median(seconds)), 0.0
    if work.max() < 2 * max(work.min(), 1e-300):  # one size: the constants are not separable
        fixed = min(floor, float(seconds.min()))
        return fixed, float(np.median((seconds - fixed) / work))
    weights = 1 / seconds
    a = np.stack([weights, work * weights], axis=1)
    (fixed, rate), *_ = np.linalg.lstsq(a, np.ones_like(seconds), rcond=None)
    if fixed < 0:
        return 0.0, float(np.median(seconds / work))
    if rate < 0:
        return float(np.median(seconds)), 0.0
    return float(fixed), float(rate)


def walls(paths: list[str] | None) -> dict[str, float]:
    """Store path -> measured wall seconds, from bench/tiny_times.sh's times.txt files (a later
    file's line for the same store wins)."""
    found = {}
    for path in paths or []:
        out = Path(path).parent
        for line in Path(path).read_text().splitlines():
            match = re.match(r"(\S+) rc=0 wall=([\d.]+) s", line)
            if match:
                found[str(out / match.group(1))] = float(match.group(2))
    return found


def fit(args: argparse.Namespace) -> None:
    """Fit every model and the flow start; print them; write timings.json with --write."""
    rows = measured_runs(args.stores)
    by_model: dict[str, list[tuple[float, float]]] = {}
    for _store, name, work, seconds, _key in rows:
        by_model.setdefault(name, []).append((work, seconds))
    arrays = {
        name: (np.array([w for w, _s in runs]), np.array([s for _w, s in runs]))
        for name, runs in by_model.items()
    }
    # a model measured at one size takes the median fixed cost of those measured at several
    separable = [
        fit_model(w, s, 0.0)[0] for w, s in arrays.values() if w.max() >= 2 * max(w.min(), 1e-300)
    ]
    floor = statistics.median(separable) if separable else 0.3
    models = {}
    for name, (work, seconds) in sorted(arrays.items()):
        fixed, rate = fit_model(work, seconds, floor)
        rate = float(f"{rate:.6g}")
        models[name] = {"fixed_s": round(fixed, 4), "rate_s": rate, "runs": len(work)}
        print(f"{name:28} {len(work):4} runs  fixed {fixed:8.2f} s  rate {rate:.4g} s/unit")
    starts = []
    for store, wall in walls(args.walls).items():
        stages = sum(s for root, _n, _w, s, _k in rows if root == store)
        starts.append(wall - stages)
    start = statistics.median(starts) if starts else timing.flow_start_seconds()
    print(f"flow start {start:.1f} s (median of {len(starts)} flows)")
    if args.write:
        data = {"machine": machine(), "flow_start_s": round(start, 2), "models": models}
        timing.TIMINGS.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
        print(f"wrote {timing.TIMINGS}")


def check(args: argparse.Namespace) -> None:
    """Per store: estimated wall time beside the measured one."""
    measured = walls(args.walls)
    print(f"{'store':40} {'estimate':>10} {'measured':>10} {'ratio':>7}")
    for root in args.stores:
        store = ArtifactStore(root)
        estimate = timing.flow_start_seconds()
        for key in store.keys():  # noqa: SIM118 (a store, not a dict)
            footprint = recorded_footprint(store, key)
            seconds = stage_seconds(store.open(key).stage, footprint) if footprint else None
            estimate += seconds or 0.0
        wall = measured.get(str(Path(root)))
        if wall is None:
            print(f"{root:40} {estimate:9.1f}s {'-':>10}")
        else:
            print(f"{root:40} {estimate:9.1f}s {wall:9.1f}s {estimate / wall:7.2f}")


def main(argv: list[str] | None = None) -> int:
    """The command line."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    for name in ("fit", "check"):
        p = sub.add_parser(name)
        p.add_argument("stores", nargs="+")
        p.add_argument("--walls", action="append", help="bench/tiny_times.sh's times.txt")
        if name == "fit":
            p.add_argument("--write", action="store_true", help="write stages/timings.json")
    args = parser.parse_args(argv)
    {"fit": fit, "check": check}[args.command](args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
