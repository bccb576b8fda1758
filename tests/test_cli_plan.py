"""Dry runs (`--plan`), `stage run`'s flow and node resolution, `--version`, and progress lines."""

from __future__ import annotations

import re

import pytest

from gameforge.flows.pipeline import plan, plan_keys, run_plan
from gameforge.flows.request import RunRequest
from gameforge.flows.specs import FlowSpec, Node, get_flow, resolve_stage
from gameforge.stages.base import StageError
from gameforge.stages.progress import LabelledProgress, LogProgress
from tests.test_flow import gameforge
from tests.toy_stages import DOUBLE, SQUARES

TOY = FlowSpec(
    "toy",
    "squares, then doubled",
    (Node(SQUARES.name), Node(DOUBLE.name, {"squares": SQUARES.name})),
    {"tiny": {SQUARES.name: {"n": 300}}},
)


def quiet(_message: str) -> None:
    pass


def test_plan_says_what_is_cached_resumed_and_computed_and_writes_nothing(store):
    params = TOY.resolve("tiny")
    before = plan(TOY, params, store)
    assert [s.status for s in before] == ["computes", "computes"]
    assert {s.label: s.key for s in before} == plan_keys(TOY, params)
    assert before[0].params == {"n": 300, "chunk": 100} and before[0].execution == {
        "delay": 0.0,
        "fail_chunk": -1,
    }
    assert not store.root.exists()  # a dry run leaves no trace

    # TOY's first node alone: the stage by itself, at TOY's parameters
    squares = RunRequest(flow=f"stage:{SQUARES.name}", preset="tiny", overrides=("n=300",))
    run_plan(squares, store, log=quiet)
    after = plan(TOY, params, store)
    assert [s.status for s in after] == ["cached", "computes"]
    assert [s.key for s in after] == [s.key for s in before]
    store.partial_path(after[1].key).mkdir(parents=True)  # a killed build of the second node
    assert [s.status for s in plan(TOY, params, store)] == ["cached", "resumes"]
    forced = plan(TOY, params, store, force={SQUARES.name})
    assert [s.status for s in forced] == ["recomputes", "resumes"]


def test_plan_resolves_stored_input_prefixes_and_refuses_unknown_ones(store):
    solve = get_flow("solve-lossless")
    params = solve.resolve("tiny")
    short = RunRequest(flow="solve-lossless", preset="tiny", overrides=("cfr.iterations=20",))
    first = run_plan(short, store, log=quiet)
    parent = first["cfr"].key
    stored = {"cfr": {"parent": parent[:10]}}
    steps = plan(solve, params, store, stored=stored)
    assert [s.status for s in steps] == ["computes"]
    with pytest.raises(Exception, match="no artifact"):
        plan(solve, params, store, stored={"cfr": {"parent": "cfr-0000"}})


def test_stage_run_resolves_flow_and_node_and_names_the_alternatives():
    default = resolve_stage("cfr")
    assert default.flow.name == "solve-lossless" and default.node.name == "cfr"
    assert set(default.other_flows) == {"lhe-solve", "lhe-league"}
    league = resolve_stage("cfr", flow="lhe-league")
    assert league.flow.name == "lhe-league" and "solve-lossless" in league.other_flows
    train = resolve_stage("nlhe-train")
    assert train.node.name == "train-1" and "train-2" in train.other_nodes
    assert resolve_stage("nlhe-train", node="train-3").node.name == "train-3"
    with pytest.raises(StageError, match="has no cfr node"):
        resolve_stage("cfr", flow="nlhe-cnn")
    with pytest.raises(StageError, match="no node 'train-9'"):
        resolve_stage("nlhe-train", node="train-9")


def test_cli_plan_version_and_stage_resolution(tmp_path):
    store = tmp_path / "store"
    planned = gameforge("run", "lhe-abstraction", "--preset", "tiny", "--plan", store=store)
    assert planned.returncode == 0, planned.stderr
    keys = plan_keys(get_flow("lhe-abstraction"), get_flow("lhe-abstraction").resolve("tiny"))
    for node, key in keys.items():
        assert re.search(rf"{re.escape(node)} \(.*\) {key}: computes", planned.stdout), node
    assert "6 stages: 0 cached, 0 resume, 6 to compute" in planned.stdout
    assert not store.exists()

    staged = gameforge("stage", "run", "nlhe-train", "--node", "train-2", "--plan", store=store)
    assert staged.returncode == 0, staged.stderr
    assert "stage nlhe-train: flow nlhe-cnn, node train-2" in staged.stdout
    assert "train-2 (nlhe-train" in staged.stdout and "train-3 (" not in staged.stdout
    wrong = gameforge("stage", "run", "cfr", "--flow", "nlhe-cnn", store=store)
    assert wrong.returncode == 2 and wrong.stderr.count("\n") == 1
    assert "flow nlhe-cnn has no cfr node" in wrong.stderr

    version = gameforge("--version", store=store)
    assert version.returncode == 0 and re.match(r"gameforge \d+\.\d+\.\d+", version.stdout)


def test_progress_lines_carry_the_node_rate_and_eta(monkeypatch):
    clock = iter([0.0, 20.0, 40.0, 50.0, 60.0])
    monkeypatch.setattr("gameforge.stages.progress.time.monotonic", lambda: next(clock))
    lines: list[str] = []
    bar = LabelledProgress(LogProgress(lines.append, every_s=10), "ochs[k=8]").start("boards", 100)
    bar.advance(10)  # at 20 s: 10 in 20 s (start-up included: no rate yet)
    bar.advance(40)  # at 40 s: 40 more in 20 s, 2/s since the first line
    bar.advance(10)  # at 50 s: 50 since the first line in 30 s, not the last 10 s's 1/s
    bar.advance(40)  # at 60 s: all 100, then the closing line
    assert lines[0] == "ochs[k=8]: boards: 10/100 (20 s)"
    assert lines[1].startswith("ochs[k=8]: boards: 50/100 (40 s, 2.00/s, ETA 25 s)")
    assert lines[2].startswith("ochs[k=8]: boards: 60/100 (50 s, 1.67/s, ETA 24 s)")
    assert lines[3].startswith("ochs[k=8]: boards: 100/100 (60 s, 2.25/s")


def test_work_done_before_a_resume_is_shown_but_not_in_the_rate(monkeypatch):
    """A solve continued from iteration 3,778 of 4,500 reads 30 in 10 s as 3/s, not 380/s."""
    clock = iter([0.0, 10.0, 20.0])
    monkeypatch.setattr("gameforge.stages.progress.time.monotonic", lambda: next(clock))
    lines: list[str] = []
    bar = LogProgress(lines.append, every_s=10).start("iterations", 4500, done=3778)
    bar.advance(30)  # the first line: no rate yet (it would hold the start-up)
    bar.advance(30)
    assert lines == [
        "iterations: 3,808/4,500 (10 s)",
        "iterations: 3,838/4,500 (20 s, 3.00/s, ETA 221 s)",
    ]


def test_the_terminal_bar_leaves_earlier_work_out_of_its_speed():
    """rich's speed counts only what this run advanced."""
    from gameforge.flows.cli.common import RichProgress

    progress = RichProgress()
    bar = progress.start("iterations", 4500, done=3778)
    task = progress.bars.tasks[0]
    assert task.completed == 3778 and task.speed is None
    bar.advance(30)
    assert task.completed == 3808 and sum(s.completed for s in task._progress) == 30


def test_a_bar_closed_early_says_it_stopped(monkeypatch):
    """A killed run's last line must not read as finished work."""
    clock = iter([0.0, 5.0, 8.0, 9.0, 10.0])
    monkeypatch.setattr("gameforge.stages.progress.time.monotonic", lambda: next(clock))
    lines: list[str] = []
    bar = LogProgress(lines.append, every_s=10).start("boards", 100)
    bar.advance(30)
    bar.close()
    assert lines == ["boards: 30/100 stopped after 8.0 s"]
    bar = LogProgress(lines.append, every_s=10).start("boards", 2)
    bar.close()
    assert lines[-1].startswith("boards: 0/2 stopped")
