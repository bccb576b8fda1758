"""Nothing cut off: at 80 and at 200 columns (in one process, one width after the other) every
key, number and parameter value the listings print is there whole, with no ellipsis; output that
is not a terminal is plain text; every listing command has `--json`."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from gameforge.artifacts import ArtifactStore
from gameforge.artifacts.runs import RunLedger
from gameforge.flows.cli import app
from gameforge.stages.runner import run_stage
from tests.poker_helpers import quiet

BOX = set("│─┃━┏┓┗┛┡┩╇┳┻╭╮╰╯")
HOLDEM = "holdem.limit.2p.reverse_blinds"


def cli(*args: str, columns: int) -> str:
    """The CLI's output at `columns` (exit status 0 asserted)."""
    result = CliRunner().invoke(app, list(args), env={"COLUMNS": str(columns)})
    assert result.exit_code == 0, result.output
    return result.output


def whole(out: str) -> str:
    """The output with its lines joined, as a reader copying a value across a fold would."""
    return "".join(line.strip() for line in out.splitlines())


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, list[str]]:
    """Two Kuhn solves and a run record with a long flow name."""
    artifacts = ArtifactStore(tmp_path_factory.mktemp("widths") / "store")
    keys = []
    for algorithm in ("cfr+", "cfr"):
        params = {"game": "kuhn.limit.2p", "algorithm": algorithm, "iterations": 10,
                  "evaluations": 0}  # fmt: skip
        keys.append(run_stage("cfr", params, store=artifacts, log=quiet).key)
    nodes = {"cfr": {"key": keys[0], "cached": False, "seconds": 1.0}}
    RunLedger(artifacts).record_done("lhe-abstraction-pa", nodes, "gameforge run ...")
    return str(artifacts.root), keys


@pytest.mark.parametrize("columns", [80, 200, 80])
def test_listings_keep_every_key_and_value_whole(store, columns):
    root, keys = store
    listed = cli("artifacts", "ls", "--store", root, columns=columns)
    assert "…" not in listed and not BOX & set(listed)
    assert f"artifacts in {root}" in whole(listed) and "store store" not in listed
    for key in keys:
        assert key in listed  # a key is never folded: it can be copied
    runs = cli("runs", "ls", "--store", root, columns=columns)
    assert "…" not in runs and "lhe-abstraction-pa" in whole(runs)
    stages = cli("stage", "list", columns=columns)
    assert "…" not in stages and f"game='{HOLDEM}'" in stages
    flows = cli("flows", columns=columns)
    assert "…" not in flows and not BOX & set(flows)
    assert max(len(line) for line in flows.splitlines()) <= columns


@pytest.mark.parametrize("columns", [80, 200])
def test_game_info_prints_every_count_whole(columns):
    buckets = "169,9000,9000,9000"
    out = cli("game", "info", HOLDEM, "--buckets", buckets, columns=columns)
    info = json.loads(cli("game", "info", HOLDEM, "--buckets", buckets, "--json", columns=columns))
    assert "…" not in out
    for row in info["rounds"]:
        for field in ("raw_hands", "canonical_hands", "infosets_raw", "infosets_lossless"):
            assert f"{row[field]:,}" in out, (field, out)


def test_every_listing_command_has_json(store):
    root, keys = store
    assert {row["key"] for row in json.loads(cli("artifacts", "ls", "--json", "--store", root,
                                                 columns=80))} >= set(keys)  # fmt: skip
    assert "lhe-solve" in {row["flow"] for row in json.loads(cli("flows", "--json", columns=80))}
    stages = json.loads(cli("stage", "list", "--json", columns=80))
    assert {"stage", "version", "inputs", "parameters", "description"} <= set(stages[0])
    assert HOLDEM in json.loads(cli("game", "list", "--json", columns=80))
    assert json.loads(cli("runs", "ls", "--json", "--store", root, columns=80))


def test_help_keeps_brackets_and_shows_no_bool_for_flags():
    out = cli("run", "--help", columns=100)
    assert "cfr[k=8].parent=KEY" in whole(out).replace(" ", "")
    assert "<bool>" not in out
