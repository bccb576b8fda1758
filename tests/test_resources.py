"""Resource plans: footprints from parameters, the plan's sums, and runs refused before work."""

from __future__ import annotations

import subprocess
import sys

from typer.testing import CliRunner

from gameforge.engines.poker.shipped_games import load_game
from gameforge.flows.cli import app
from gameforge.flows.pipeline import PlannedStep, plan, resource_plan, resource_refusal
from gameforge.flows.specs import get_flow
from gameforge.stages.poker.sizes import infosets
from gameforge.stages.resources import Footprint

HOLDEM = "holdem.limit.2p.reverse_blinds"


def test_the_paper_solve_plans_the_solver_s_tables(store):
    spec = get_flow("lhe-solve")
    steps = {s.label: s for s in plan(spec, spec.resolve("paper"), store)}
    cfr = steps["cfr"].footprint
    assert cfr is not None
    sets = infosets(load_game(HOLDEM), [169, 9000, 9000, 9000])
    assert sets == 57_331_352  # what the paper-preset solve reports as its information sets
    assert cfr.peak["regret, strategy sums"] == sets * 3 * 16
    assert cfr.stored["regret, strategy_sum, average_strategy"] == sets * 3 * 20
    assert all(s.footprint is not None for s in steps.values())


def step(label: str, memory: int, stored: int, status: str = "computes") -> PlannedStep:
    footprint = Footprint(peak={"table": memory}, stored={"out": stored}, working=0)
    return PlannedStep(label, "cfr", 1, f"cfr-{label}", status, {}, {}, footprint)


def test_resource_plan_sums_what_runs_and_names_what_does_not_fit():
    steps = [step("a", 5, 100), step("b", 7, 10), step("c", 50, 1000, status="cached")]
    assert resource_plan(steps).memory == 7  # stages run one at a time; cached ones not at all
    assert resource_plan(steps, parallel_nodes=2).memory == 12
    assert resource_plan(steps).stored == 110
    assert resource_refusal(resource_plan(steps), memory_free=8, disk_free=110) is None
    line = resource_refusal(resource_plan(steps), memory_free=6, disk_free=1000)
    assert line is not None and "stage b (cfr-b)" in line and "6 B available" in line
    line = resource_refusal(resource_plan(steps), memory_free=100, disk_free=109)
    assert line is not None and "store up to 110 B" in line


def test_plan_prints_each_stage_s_resources_and_the_total(tmp_path):
    result = CliRunner().invoke(
        app, ["run", "lhe-solve", "--preset", "paper", "--plan", "--store", str(tmp_path / "s")]
    )
    assert result.exit_code == 0, result.output
    assert result.output.count("resources: memory ~") == 8  # 7 stages and the total
    assert "at the peak (hsd-buckets)" in result.output  # the turn's k-means
    assert result.output.count(", time ~") == 7  # each stage's estimate
    assert "time: ~" in result.output and "stages one after another" in result.output
    assert "not estimated" not in result.output
    assert not (tmp_path / "s").exists()


def test_every_preset_of_every_flow_has_a_time_and_disk_estimate():
    """`gameforge flows --json`: every kind of stage run a preset makes has a fitted time model;
    larger presets take longer."""
    import json

    result = CliRunner().invoke(app, ["flows", "--json"])
    assert result.exit_code == 0, result.output
    for row in json.loads(result.output):
        presets = row["presets"]
        assert all(p["seconds"] > 0 and p["stored_bytes"] > 0 for p in presets.values()), row
        if "small" in presets:
            assert presets["tiny"]["seconds"] < presets["small"]["seconds"], row["flow"]


def test_a_plan_with_an_untimed_stage_says_so(store):
    from gameforge.stages import timing

    models = timing.timings()["models"]
    saved = models.pop("cfr/cfr+")
    try:
        spec = get_flow("solve-lossless")
        needs = resource_plan(plan(spec, spec.resolve("tiny"), store))
        assert needs.untimed == ("cfr",)
    finally:
        models["cfr/cfr+"] = saved


def test_a_run_that_cannot_fit_is_refused_in_one_line_before_any_work(tmp_path):
    store = tmp_path / "store"
    # chance-sampled CFR without abstraction on the 6-rank deck: terabytes of regrets
    done = subprocess.run(
        [sys.executable, "-m", "gameforge.flows.cli", "run", "solve-lossless", "--preset",
         "tiny", "--set", "game=holdem6.limit.2p.reverse_blinds", "--set", "algorithm=chance",
         "--store", str(store)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 2
    lines = (done.stdout + done.stderr).strip().splitlines()
    assert len(lines) <= 3, lines
    assert "stage cfr" in lines[-1] and "TB of memory" in lines[-1]
    assert "--force-resources" in lines[-1]
    assert not store.exists()
