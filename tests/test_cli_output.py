"""What the CLI prints, read as a user would at 80 columns: one-sided LBR bounds, stage
defaults, nested summaries, artifact listings with their telling parameters, flow names."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gameforge.artifacts import ArtifactStore
from gameforge.stages.base import StageError
from gameforge.stages.runner import run_stage
from tests.poker_helpers import quiet

KUHN = "kuhn.limit.2p"


def gameforge(*args: str, columns: int = 80) -> str:
    """Run the CLI in a subprocess at 80 columns; its stdout (exit status 0 asserted)."""
    env = {**os.environ, "COLUMNS": str(columns), "NO_COLOR": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "gameforge.flows.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture(scope="module")
def kuhn_store(tmp_path_factory) -> tuple[ArtifactStore, dict[str, str]]:
    """Two 10-iteration Kuhn solves (cfr+ and cfr), an LBR run on each with the same settings,
    and a partial build."""
    store = ArtifactStore(tmp_path_factory.mktemp("kuhn") / "store")
    keys = {}
    for algorithm in ("cfr+", "cfr"):
        params = {"game": KUHN, "algorithm": algorithm, "iterations": 10, "evaluations": 0}
        keys[algorithm] = run_stage("cfr", params, store=store, log=quiet).key
        lbr = {"game": KUHN, "deals": 20, "seed": 0}
        keys[f"lbr {algorithm}"] = run_stage(
            "lbr", lbr, {"strategy": keys[algorithm]}, store=store, log=quiet
        ).key
    (store.root / "partial" / "cfr-0123456789abcdef" / "data").mkdir(parents=True)
    return store, keys


def test_strategy_lbr_states_a_one_sided_bound_or_nothing(kuhn_store):
    """`strategy lbr` quotes the one-sided 95% bound (mean - 1.645 SE), or says the run bounds
    nothing when that bound is at or below 0; `artifacts show` on the strategy says the same."""
    from gameforge.flows.cli import app
    from gameforge.stages.poker.lbr import lower_bound_text

    store, keys = kuhn_store
    out = CliRunner().invoke(
        app, ["strategy", "lbr", keys["cfr+"], "--store", str(store.root), "--deals", "20"]
    )
    assert out.exit_code == 0, out.output
    summary = store.open(keys["lbr cfr+"]).meta["summary"]
    mean, se = summary["lbr_mbb_per_game"], summary["standard_error_mbb_per_game"]
    lower = summary["exploitability_lower_bound_mbb_per_game"]
    assert lower == pytest.approx(mean - 1.645 * se)
    bound = lower_bound_text(mean, lower)
    assert summary["bound"] == bound
    text = " ".join(out.output.split())
    assert bound in text and "at least about this" not in text
    assert ("no evidence of exploitability" in text) is (lower <= 0)
    show = CliRunner().invoke(app, ["artifacts", "show", keys["cfr+"], "--store", str(store.root)])
    assert show.exit_code == 0, show.output
    assert f"LBR ({keys['lbr cfr+']}, 20 deals x 2 seats): {bound}" in " ".join(show.output.split())


def test_lower_bound_text_bounds_only_above_zero():
    """A positive bound is stated as such; one at or below 0 bounds nothing."""
    from gameforge.stages.poker.lbr import lower_bound_text

    assert lower_bound_text(150.0, 40.0) == (
        "exploitability >= 40.0 mbb/g with 95% confidence (one-sided, mean - 1.645·SE; "
        "LBR wins 150.0 mbb/g)"
    )
    nothing = lower_bound_text(-50.2, -167.8)
    assert nothing.startswith("no evidence of exploitability at this sample size")
    assert lower_bound_text(10.0, 0.0).startswith("no evidence")


def test_cfr_parameters_never_contradict_the_algorithm(kuhn_store):
    """cfr+ records plus=True (regret matching+ is part of it), cfr plus=False; a contradicting
    `plus` is one clear error; the sampled variants keep it as a choice."""
    from gameforge.stages.registry import get_stage

    store, keys = kuhn_store
    assert store.open(keys["cfr+"]).params["plus"] is True
    assert store.open(keys["cfr"]).params["plus"] is False
    cfr = get_stage("cfr")
    with pytest.raises(StageError, match="parameter plus: False contradicts algorithm cfr\\+"):
        cfr.make_params({"game": KUHN, "algorithm": "cfr+", "plus": False})
    with pytest.raises(StageError, match="parameter plus: True contradicts algorithm cfr "):
        cfr.make_params({"game": KUHN, "algorithm": "cfr", "plus": True})
    assert cfr.make_params({"game": KUHN, "algorithm": "external", "plus": True}).plus is True
    assert cfr.make_params({"game": KUHN}).plus is False


def test_artifacts_show_lists_nested_summaries_readably(kuhn_store):
    """A dict in a summary is an indented sub-listing, not a Python dict."""
    store, keys = kuhn_store
    out = gameforge("artifacts", "show", keys["cfr+"], "--store", str(store.root))
    lines = out.splitlines()
    at = lines.index("    layout:")
    assert lines[at + 1 : at + 4] == [
        "      offsets: [0]",
        "      decisions_per_round: [4]",
        "      buckets_per_round: [3]",
    ]
    assert "{'" not in out and "plus = True" in out


def test_listing_shows_nested_lists_one_item_a_line():
    """A list too long for its line, or of dicts, goes one item a line."""
    from gameforge.stages.reporting import summary_lines as _listing

    rows = [{"net": "net.0", "win_rate": 0.5}]
    assert _listing({"table": rows, "tiers": [["C12"], ["C6", "C8"]]}, "  ") == [
        "  table:",
        "    - net: net.0, win_rate: 0.5",
        "  tiers: [[C12], [C6, C8]]",
    ]
    long = [f"player {i}" for i in range(20)]
    assert _listing({"p": long}, "")[:2] == ["p:", "  - player 0"]


def test_stage_list_prints_defaults_not_pydantic_internals():
    """Default factories print their value; a parameter without a default says required."""
    from pydantic import Field

    from gameforge.flows.cli import _param_default
    from gameforge.stages.base import StageParams

    out = gameforge("stage", "list", columns=400)
    assert "PydanticUndefined" not in out
    assert "players=['heuristic']" in out and "checkpoints=[0, 1, 100, 1000, " in out

    class Needs(StageParams):
        players: list[str]
        hands: list[int] = Field(default_factory=lambda: [1, 2])

    fields = Needs.model_fields
    assert _param_default("players", fields["players"]) == "players (required)"
    assert _param_default("hands", fields["hands"]) == "hands=[1, 2]"


def test_artifacts_ls_shows_game_and_telling_parameters_at_80_columns(kuhn_store):
    """Grouped by game, every row keeps its whole key and status within 80 columns; the
    labels tell siblings apart (LBR runs alike but for their strategy get `cfr.algorithm`);
    --json carries the same game and labels."""
    store, keys = kuhn_store
    out = gameforge("artifacts", "ls", "--store", str(store.root))
    lines = [line.rstrip() for line in out.splitlines()]
    assert max(len(line) for line in lines) <= 80
    assert "kuhn.limit.2p" in lines and "(unknown: partial builds)" in lines
    rows = {line.split()[0]: line for line in lines if line.split() and "-" in line.split()[0]}
    for algorithm in ("cfr+", "cfr"):
        row = rows[keys[algorithm]]
        assert f"algorithm={algorithm} " in row + " " and row.split()[-3] == "complete"
        lbr = rows[keys[f"lbr {algorithm}"]]
        assert "deals=20 seed=0" in lbr and lbr.split()[-3] == "complete"
    # the LBR runs differ only in their strategy: the next line names its algorithm
    for algorithm in ("cfr+", "cfr"):
        at = lines.index(rows[keys[f"lbr {algorithm}"]])
        assert f"cfr.algorithm={algorithm}" in lines[at] + lines[at + 1]
    assert rows["cfr-0123456789abcdef"].split()[-3] == "partial"
    as_json = json.loads(gameforge("artifacts", "ls", "--json", "--store", str(store.root)))
    listed = {row["key"]: row for row in as_json}
    assert listed[keys["cfr+"]]["game"] == KUHN
    # plus is not declared, but differs between the two solves
    assert listed[keys["cfr+"]]["labels"] == {"algorithm": "cfr+", "iterations": 10, "plus": True}
    assert listed[keys["lbr cfr"]]["labels"] == {"deals": 20, "seed": 0, "cfr.algorithm": "cfr"}
    assert listed["cfr-0123456789abcdef"]["game"] is None


def test_flows_never_cut_a_flow_name_at_80_columns():
    """Each flow's full name is on its row; the stage chains wrap instead."""
    from gameforge.flows.specs import FLOWS

    out = gameforge("flows")
    names = {line.split()[0] for line in out.splitlines() if line.strip()}  # plain: no box
    assert set(FLOWS) <= names
    assert "…" not in out and max(len(line) for line in out.splitlines()) <= 80


def test_every_stage_declares_labels_it_has():
    """Every declared label is a parameter of its stage."""
    from gameforge.stages.registry import all_stages

    for stage in all_stages().values():
        assert set(stage.label_params) <= set(stage.params_model.model_fields), stage.name


def test_listing_labels_by_differing_parameters_and_the_stage_family(tmp_path: Path):
    """A stage that declares no labels still shows the parameters its listed artifacts differ
    in; without a `game` parameter the game is its name's first word; a partial build has
    neither."""
    import tests.toy_stages  # noqa: F401  (registers the toy stages)
    from gameforge.artifacts.store import ArtifactInfo
    from gameforge.flows.listing import describe

    store = ArtifactStore(tmp_path)
    for n in (10, 20):
        run_stage("toy-squares", {"n": n, "chunk": 10}, store=store, log=quiet)
    infos = store.entries() + [ArtifactInfo("cfr-0", "cfr", "partial", 0, None, "")]
    assert sorted(map(str, describe(store, infos))) == sorted(
        map(str, [{"game": "toy", "labels": {"n": 10}}, {"game": "toy", "labels": {"n": 20}},
                  {"game": None, "labels": {}}])
    )  # fmt: skip


def test_a_flipped_byte_fails_the_read_in_one_line_naming_artifact_and_array(tmp_path):
    """Every chunk carries a crc32c: `strategy show` on a strategy with one flipped byte stops
    with one line naming the artifact and the array, instead of answering from it."""
    store = ArtifactStore(tmp_path / "store")
    params = {"game": KUHN, "algorithm": "cfr+", "iterations": 10, "evaluations": 0}
    key = run_stage("cfr", params, store=store, log=quiet).key
    assert all(a["chunk_checksums"] for a in store.open(key).meta["arrays"].values())
    folder = store.object_path(key) / "average_strategy" / "c"
    chunk = next(p for p in sorted(folder.rglob("*")) if p.is_file())
    data = bytearray(chunk.read_bytes())
    data[len(data) // 2] ^= 0x01
    chunk.write_bytes(bytes(data))
    env = {**os.environ, "COLUMNS": "80", "NO_COLOR": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "gameforge.flows.cli", "strategy", "show", key, "--hand", "2c",
         "--store", str(store.root)],
        capture_output=True, text=True, env=env, timeout=300,
    )  # fmt: skip
    assert done.returncode == 2
    error = " ".join(done.stderr.split())
    assert error.startswith(
        f"error: artifact {key} is corrupted: a chunk of array 'average_strategy'"
    )
    assert "Traceback" not in done.stderr and "artifacts repair" in error
    assert store.verify([key])[key] and "average_strategy" in store.verify([key])[key][0]
