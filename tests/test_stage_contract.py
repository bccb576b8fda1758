"""The stage contract's shared pieces: declaration, numbered inputs, stored inputs, lone stages."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from gameforge.flows.pipeline import plan_keys, run_plan
from gameforge.flows.request import RunRequest
from gameforge.flows.specs import flow_of_stage, get_flow, stored_inputs
from gameforge.stages.base import StageContext, StageError, StageParams, numbered
from gameforge.stages.registry import all_stages, get_stage, stage


class CountParams(StageParams):
    """How many values."""

    n: int = 5


@stage("contract-count", 1, CountParams)
def run_count(ctx: StageContext) -> dict:
    """Write 0..n-1, a stage that no flow runs.

    More about it here.
    """
    ctx.writer.write_arrays({"values": np.arange(ctx.params.n), "empty": np.zeros((0, 3))})
    return {"n": ctx.params.n}


def test_a_declared_stage_is_registered_with_its_docstring_as_description():
    declared = get_stage("contract-count")
    assert declared.run is run_count and declared.version == 1
    assert declared.description == "Write 0..n-1, a stage that no flow runs."
    assert "contract-count" in all_stages()


def test_declaring_a_stage_name_twice_is_refused():
    with pytest.raises(StageError, match="registered twice"):
        stage("contract-count", 2, CountParams)(run_count)


def test_a_stage_in_no_flow_runs_alone_with_its_defaults(store):
    spec = flow_of_stage("contract-count")
    assert spec.name == "stage:contract-count" and get_flow(spec.name).nodes == spec.nodes
    params = spec.resolve("tiny", ["n=7"])
    request = RunRequest(flow=spec.name, preset="tiny", overrides=("n=7",))
    runs = run_plan(request, store, log=lambda _m: None)
    artifact = store.open(runs["contract-count"].key)
    assert artifact["values"][:].tolist() == list(range(7))
    assert artifact["empty"].shape == (0, 3)  # write_arrays keeps empty arrays
    assert plan_keys(spec, params) == {"contract-count": artifact.key}


@given(st.lists(st.integers(0, 1000), unique=True), st.lists(st.text("ab.x", max_size=6)))
def test_numbered_inputs_come_in_index_order(indices, noise):
    """`players.10` after `players.2`; other names, bare `players` and `players.x` left out."""
    names = [f"players.{i}" for i in indices] + [f"other.{i}" for i in indices] + noise
    names += ["players", "players.", "players.x", "players.1.2"]
    assert numbered(names, "players") == [f"players.{i}" for i in sorted(indices)]


def test_stored_inputs_feed_optional_inputs_and_refuse_the_rest():
    solve = get_flow("lhe-solve")
    assert stored_inputs(solve, ["cfr.parent=abc123"]) == {"cfr": {"parent": "abc123"}}
    with pytest.raises(StageError, match="expected node.input=KEY"):
        stored_inputs(solve, ["cfr.parent"])
    with pytest.raises(StageError, match="has no input 'nothing'"):
        stored_inputs(solve, ["cfr.nothing=abc"])
    with pytest.raises(StageError, match="feeds it from"):
        stored_inputs(solve, ["cfr.river_buckets=abc"])  # the flow's own wiring
    with pytest.raises(StageError, match="has no stage"):
        stored_inputs(solve, ["nowhere.parent=abc"])


def test_the_registry_index_names_the_stages_each_module_declares():
    """`STAGE_MODULES` lists, per module, exactly the stages importing that module declares."""
    from gameforge.stages.registry import STAGE_MODULES

    stages = all_stages().values()
    for module, names in STAGE_MODULES.items():
        assert {s.name for s in stages if s.run.__module__ == module} == set(names), module


def test_planning_a_poker_flow_imports_no_network_code():
    """A poker flow's plan looks up only the poker stage modules: torch (about two seconds of a
    command's start) stays unimported."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from gameforge.flows.specs import get_flow\n"
        "spec = get_flow('lhe-league')\n"
        "spec.resolve('tiny', {})\n"
        "print('torch' in sys.modules, 'gameforge.stages.nlhe' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "False"]


def test_every_shipped_stage_parameter_says_what_it_means():
    """Every field of every shipped stage's parameter model has a description (what it is, its
    unit, the paper's value), which `gameforge stage show NAME` prints."""
    from gameforge.stages.registry import MODULE_OF

    missing = [
        f"{name}.{field}"
        for name, declared in all_stages().items()
        if name in MODULE_OF
        for field, info in declared.params_model.model_fields.items()
        if not (info.description or "").strip()
    ]
    assert not missing, f"parameters without a description: {', '.join(missing)}"
