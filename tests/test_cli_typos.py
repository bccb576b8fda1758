"""Every typo is refused in one line before any work, naming the valid choices: node and stage
names in `--force`, `--with`, `--only` and `--node`; a bare `--set NAME=V` that several stages
of the flow take; a store that is a file, or missing for a command that only reads."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from gameforge.flows.cli import app
from gameforge.flows.request import RunRequest
from gameforge.flows.specs import FlowSpec, Node, get_flow
from gameforge.stages.base import StageError


def invoke(*args: str) -> tuple[int, list[str]]:
    """The CLI in this process: its exit status and non-blank output lines."""
    result = CliRunner().invoke(app, list(args), env={"COLUMNS": "200"})
    assert "Traceback" not in result.output, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result.exit_code, [line for line in result.output.splitlines() if line.strip()]


def refused(*args: str, store: Path) -> str:
    """A refusal: exit status 2, one `error:` line, and the store left as it was."""
    before = sorted(store.rglob("*")) if store.exists() else None
    code, lines = invoke(*args, "--store", str(store))
    assert code == 2 and len(lines) == 1 and lines[0].startswith("error: "), lines
    assert (sorted(store.rglob("*")) if store.exists() else None) == before
    return lines[0]


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("run", "lhe-league", "--force", "cfrr"), ["--force 'cfrr'", "did you mean 'cfr'?",
                                                    "valid: river-hs, hsd,"]),
        (("run", "lhe-solve", "--with", "best-respons"), ["--with 'best-respons'",
                                                          "optional nodes: best-response"]),
        (("run", "lhe-league", "--set", "k=3"), ["3 stages of flow lhe-league take k",
                                                 "opponent-clusters, hsd-buckets, ochs-buckets",
                                                 "--set opponent-clusters.k=3"]),
        (("run", "lhe-solve", "--set", "cfrr.iterations=3"), ["no node or stage 'cfrr'",
                                                              "did you mean 'cfr'?"]),
        (("run", "lhe-solve", "--set", "iteratons=3"), ["did you mean 'iterations'?"]),
        (("run", "lhe-solve", "--set", "cfr.iteratons=3"), ["unknown parameter iteratons",
                                                            "valid: algorithm,"]),
        (("stage", "run", "cfr", "--node", "cfrr"), ["no node 'cfrr'"]),
        (("run", "lhe-solv"), ["unknown flow 'lhe-solv' (valid: "]),
        (("run", "lhe-solve", "--preset", "tny"), ["no preset 'tny' (valid: tiny, small"]),
    ],
)  # fmt: skip
def test_a_mistyped_name_is_refused_in_one_line_naming_the_choices(tmp_path, args, said):
    preset = () if "--preset" in args else ("--preset", "tiny")
    line = refused(*args, *preset, "--plan", store=tmp_path / "store")
    for part in said:
        assert part in line, line


def test_a_bare_name_one_running_stage_takes_or_a_flow_wide_one_is_accepted(tmp_path):
    store = str(tmp_path / "store")
    # only hsd-buckets (and what it needs) runs: its k is the only one meant
    code, lines = invoke("stage", "run", "hsd-buckets", "--preset", "tiny", "--set", "k=20",
                         "--plan", "--store", store)  # fmt: skip
    assert code == 0, lines
    assert any("k=20" in line for line in lines)
    # the README's whole-run settings
    code, lines = invoke("run", "blokus-zero", "--preset", "tiny", "--set", "value_margin=10",
                         "--set", "device=cpu", "--plan", "--store", store)  # fmt: skip
    assert code == 0, lines
    assert not Path(store).exists()  # a plan writes nothing


def test_a_flow_declares_the_options_a_bare_set_fans_out_to():
    solve = get_flow("lhe-solve")
    with pytest.raises(StageError, match="3 stages of flow lhe-solve take k"):
        solve.resolve("tiny", ["k=3"], strict=True)
    fans = FlowSpec(solve.name, "", solve.nodes, solve.presets, options=("k",))
    params = fans.resolve("tiny", ["k=3"], strict=True)
    taking = {node for node, values in params.items() if values.get("k") == 3}
    assert taking == {"opponent-clusters", "hsd-buckets", "ochs-buckets"}
    # a library caller's bare name still reaches every stage that takes it
    assert solve.resolve("tiny", ["seed=4"])["hsd-buckets"]["seed"] == 4


def test_only_and_force_names_are_checked_by_the_request_itself():
    with pytest.raises(StageError, match="--only 'nope': flow solve-lossless has no node"):
        RunRequest(flow="solve-lossless", preset="tiny", only=("nope",)).resolve()
    with pytest.raises(StageError, match="--force 'cf'.*did you mean 'cfr'"):
        RunRequest(flow="solve-lossless", preset="tiny", force=("cf",)).resolve()
    spec = FlowSpec("two", "", (Node("cfr"), Node("lbr", {"strategy": "cfr"}, optional=True)), {})
    with pytest.raises(StageError, match=r"--with 'lbrr'.*optional nodes: lbr"):
        spec.default_nodes(["lbrr"])


@pytest.mark.parametrize(
    "args",
    [
        ("artifacts", "ls"),
        ("artifacts", "show", "cfr"),
        ("artifacts", "verify"),
        ("artifacts", "gc"),
        ("runs", "ls"),
        ("runs", "show", "last"),
        ("strategy", "show", "cfr", "--hand", "AsKd"),
    ],
)
def test_a_reader_refuses_a_missing_store_or_a_file(tmp_path, args):
    line = refused(*args, store=tmp_path / "missing")
    assert "no such folder" in line and "GAMEFORGE_STORE" in line
    (tmp_path / "file").write_text("")
    line = refused(*args, store=tmp_path / "file")
    assert "a file, not a store folder" in line


def test_a_writer_makes_a_missing_store_but_refuses_a_file(tmp_path):
    (tmp_path / "file").write_text("")
    for store in (tmp_path / "file", tmp_path / "file" / "store"):
        line = refused("run", "solve-lossless", "--preset", "tiny", "--plan", store=store)
        assert "a file" in line
        line = refused("artifacts", "import", str(tmp_path / "x.tar"), store=store)
        assert "a file" in line
    code, lines = invoke("run", "solve-lossless", "--preset", "tiny", "--plan", "--store",
                         str(tmp_path / "new"))  # fmt: skip
    assert code == 0, lines
