"""A flow's findings: every flow declares nodes whose stages have a reader, a run ends with its
headline results (never cut at 80 columns), `runs show` prints them again and `runs compare`
shows what two runs found differently."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from gameforge.artifacts import ArtifactStore
from gameforge.flows.findings import (
    Finding,
    compare_findings,
    findings_markdown,
    reader_for,
    readers_of,
)
from gameforge.flows.findings.hearts import mean_interval
from gameforge.flows.specs import FLOWS
from gameforge.games import GAMES
from gameforge.stages.registry import get_stage


def gameforge(*args: str, columns: int = 80) -> subprocess.CompletedProcess[str]:
    """The CLI in a subprocess at `columns` columns, plain text."""
    env = {**os.environ, "COLUMNS": str(columns), "NO_COLOR": "1"}
    return subprocess.run(
        [sys.executable, "-m", "gameforge.flows.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )


@pytest.mark.parametrize("flow", sorted(FLOWS))
def test_every_flow_declares_findings_its_stages_can_read(flow):
    spec = FLOWS[flow]
    assert spec.findings, f"{flow} declares no findings"
    names = {node.name: node.stage for node in spec.nodes}
    for node in spec.findings:
        assert node in names, f"{flow}: findings name {node!r}, not one of its nodes"
        assert reader_for(names[node]) is not None, f"{flow}: stage {names[node]} has no reader"


def test_each_game_reads_only_its_own_stages():
    for game in GAMES:
        declared = {stage for stages in game.stages.values() for stage in stages}
        for stage in readers_of(game):
            get_stage(stage)  # a real stage
            assert stage in declared, f"{game.name} reads {stage}, a stage of another game"


def test_hearts_trials_give_a_t_interval_and_one_trial_none():
    values = np.array([0.21, 0.22, 0.23, 0.22, 0.22])
    # t(0.975, 4) = 2.776; sd 0.00707: half-width 0.00878
    assert mean_interval(values) == "0.2200 ± 0.0088 (95% t, 5 trials)"
    assert mean_interval(np.array([0.3])) == "0.3000 (1 trial: no interval)"


def test_comparing_findings_keeps_only_what_differs():
    a = [Finding("cfr: exploitability", "1.0 mbb/g", "cfr-a"), Finding("x", "same", "k")]
    b = [Finding("cfr: exploitability", "0.5 mbb/g", "cfr-b"), Finding("x", "same", "k"),
         Finding("league: ranking", "C6 > C8", "league-b")]  # fmt: skip
    assert compare_findings(a, b) == [
        {"what": "cfr: exploitability", "a": "1.0 mbb/g", "b": "0.5 mbb/g"},
        {"what": "league: ranking", "a": "(none)", "b": "C6 > C8"},
    ]
    table = findings_markdown("findings of x", [Finding("a | b", "1", "k-1")])
    assert "| a \\| b | 1 | `k-1` |" in table


def test_a_run_ends_with_its_findings_and_runs_show_repeats_them(tmp_path):
    store = str(tmp_path / "store")
    runs = []
    for iterations in (40, 80):
        done = gameforge("run", "solve-lossless", "--preset", "tiny", "--store", store,
                         "--set", f"cfr.iterations={iterations}")  # fmt: skip
        assert done.returncode == 0, done.stderr
        tail = done.stdout[done.stdout.index("findings of solve-lossless [tiny]") :]
        assert "cfr: exploitability" in tail and "mbb/g (exact best response)" in tail
        assert f"{iterations} cfr+ iterations" in " ".join(tail.replace("│", " ").split())
        key = json.loads(gameforge("runs", "ls", "--store", store, "--json").stdout)[-1]
        runs.append(key)
        assert f"from {key['nodes']['cfr']['key']}" in tail, "the key is cut or missing"
    shown = gameforge("runs", "show", "last", "--store", store).stdout
    assert "findings of solve-lossless [tiny]" in shown
    compared = gameforge("runs", "compare", "last~1", "last", "--store", store, "--json")
    document = json.loads(compared.stdout)
    asked = [(r["field"], r["a"], r["b"]) for r in document["parameters"] if r["node"] == "cfr"]
    assert ("iterations", 40, 80) in asked
    assert [r["what"] for r in document["findings"]] == ["cfr: exploitability"]
    text = gameforge("runs", "compare", "last~1", "last", "--store", store).stdout
    assert "asked for differently" in text and "found differently" in text
    assert len(text.splitlines()) < 40, "a comparison of two small runs fits a screen"


def test_findings_of_a_flow_that_did_not_build_its_result_nodes_are_none(tmp_path):
    from gameforge.flows.findings import run_findings

    store = ArtifactStore(tmp_path / "store")
    assert run_findings("lhe-league", {"league": "league-0123456789abcdef"}, store) == []
    assert run_findings("stage:cfr", {"cfr": "cfr-0123456789abcdef"}, store) == []
