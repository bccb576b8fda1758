"""No traceback for a user error, ever: random combinations of the CLI's real commands and
options, each with at least one malformed value (a typo of a name, a file for a folder, a missing
key or run, an out-of-range number, a bad `--set` or `--input`), on a store holding a solve, an
interrupted build and a run record. Each must exit non-zero with at most a few lines on stderr,
no "Traceback", and the store unchanged. `run` and `stage run` go with `--plan`, so that a case
the CLI failed to refuse would plan instead of computing."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from gameforge.artifacts import ArtifactStore
from gameforge.artifacts.runs import RunLedger
from gameforge.flows.cli import app
from gameforge.stages.runner import run_stage
from tests.poker_helpers import quiet

PARTIAL = "cfr-0123456789abcdef"  # an interrupted build: started, never committed
STORES = ["@missing", "@file", "@under-file"]  # a store that is not one

# command -> (its arguments when well formed, malformed pieces it may get; at least one is
# drawn). `{key}` is the stored solve, `{file}` a plain file, `{missing}` a path that is not there.
COMMANDS: dict[str, tuple[list[str], list[list[str]]]] = {
    "run": (
        ["run", "@flow", "--preset", "tiny", "--plan"],
        [["--force", "cfrr"], ["--with", "best-respons"], ["--set", "k=3"],
         ["--set", "cfr.iterations=-5"], ["--set", "nope=1"], ["--set", "="],
         ["--set", "seed"], ["--set", "cfr.seed=1e999"], ["--preset", "tny"],
         ["--parallel-nodes", "0"], ["--parallel-nodes", "two"], ["--input", "garbage"],
         ["--input", "cfr.nope={key}"], ["--input", "cfr.parent=nokey-00"],
         ["--input", "cfr[k=99].parent={key}"], ["@flow-typo"], ["@store", "@file"],
         ["@store", "@under-file"], ["--forse", "cfr"]],
    ),
    "stage run": (
        ["stage", "run", "cfr", "--preset", "tiny", "--plan"],
        [["--node", "cfrr"], ["--flow", "nope"], ["--flow", "nlhe-cnn"],
         ["--set", "cfr.iterations=0"], ["--set", "iteratons=3"], ["--set", "game=nothing"],
         ["--set", "game={file}"], ["@stage-typo"], ["@store", "@file"]],
    ),
    "artifacts ls": (["artifacts", "ls"], [["@store", s] for s in STORES] + [["--jsn"]]),
    "artifacts show": (
        ["artifacts", "show", "@any-key"],
        [["@key-missing"], ["@store", "@missing"], ["@store", "@file"], ["--jsonn"]],
    ),
    "artifacts plot": (["artifacts", "plot", "@any-key"],
                       [["@key-missing"], ["@store", "@file"], ["--all"]]),
    "artifacts export": (
        ["artifacts", "export", "@any-key", "--out", "{tmp}/exported"],
        [["@key-missing"], ["--out", "{file}"], ["--out", "{file}/sub"], ["@store", "@missing"]],
    ),
    "artifacts import": (["artifacts", "import", "{file}"],
                         [["{missing}.tar"], ["@store", "@file"], ["--trust"]]),
    "artifacts verify": (["artifacts", "verify"],
                         [["@key-missing"], ["--sample", "0"], ["@store", "@missing"]]),
    "artifacts trust": (["artifacts", "trust", "@key-missing"],
                        [["--note", "x"], ["@store", "@file"]]),
    "artifacts check": (
        ["artifacts", "check", "@any-key"],
        [["--chunks", "0", "--recompute"], ["--seed", "x", "--recompute"], ["@key-missing"],
         ["@store", "@missing"]],
    ),
    "artifacts repair": (["artifacts", "repair", "@key-missing"],
                         [["--rebuild"], ["@store", "@file"]]),
    "artifacts rm": (["artifacts", "rm", "@key-missing"], [["--force"], ["@store", "@missing"]]),
    "artifacts gc": (["artifacts", "gc", "--dry-run"],
                     [["--keep-last", "-1"], ["@store", "@missing"], ["@store", "@file"]]),
    "runs ls": (["runs", "ls"], [["@store", s] for s in STORES]),
    "runs show": (["runs", "show", "last"], [["@run-missing"], ["@store", "@missing"]]),
    "runs compare": (["runs", "compare", "last"], [["@run-missing"], ["@store", "@file"]]),
    "strategy show": (
        ["strategy", "show", "@any-key", "--hand", "3c"],
        [["--hand", "ZZ"], ["--hand", "KsKs"], ["--board", "XX"], ["--history", "q"],
         ["--history", "rrrrrrrr"], ["@key-missing"], ["@store", "@missing"]],
    ),
    "strategy lbr": (["strategy", "lbr", "@any-key"],
                     [["--deals", "1"], ["--deals", "x"], ["@store", "@file"]]),
    "strategy br": (["strategy", "br", "@key-missing"],
                    [["--precision", "float16"], ["@store", "@missing"]]),
    "game info": (["game", "info", "leduc.limit.2p"],
                  [["@game-typo"], ["--buckets", "x"], ["--buckets", "0,0"],
                   ["--buckets", "1"]]),
    "stage show": (["stage", "show", "cfr"], [["@stage-typo"], ["--verbose"]]),
    "play": (
        ["play", "--strategy", "@key-missing", "--port", "1"],
        [["--card-names", "foo"], ["--port", "x"], ["--hands", "0"], ["@store", "@file"]],
    ),
}  # fmt: skip
FLOWS = ["solve-lossless", "lhe-solve", "lhe-league", "nlhe-cnn", "hearts-falcon", "blokus-zero"]


@pytest.fixture(scope="module")
def places(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A store with a 10-iteration Kuhn solve, an interrupted build and a run record; a plain
    file; and a path that does not exist."""
    root = tmp_path_factory.mktemp("malformed")
    store = ArtifactStore(root / "store")
    params = {"game": "kuhn.limit.2p", "iterations": 10, "evaluations": 0}
    key = run_stage("cfr", params, store=store, log=quiet).key
    (store.root / "partial" / PARTIAL / "data").mkdir(parents=True)
    RunLedger(store).record_done("solve-lossless", {"cfr": {"key": key}}, "gameforge run ...")
    (root / "file").write_text("not a store, not an export\n")
    return {"root": root, "store": store.root, "file": root / "file", "missing": root / "nothing"}


def snapshot(folder: Path) -> dict[str, int]:
    """Every file under `folder` with its size."""
    return {str(p.relative_to(folder)): p.stat().st_size for p in folder.rglob("*") if p.is_file()}


@st.composite
def malformed(draw: st.DrawFn) -> tuple[str, list[str]]:
    """A command with its well-formed arguments and one to three malformed pieces."""
    name = draw(st.sampled_from(sorted(COMMANDS)))
    base, bad = COMMANDS[name]
    picks = draw(st.lists(st.sampled_from(bad), min_size=1, max_size=3, unique_by=tuple))
    args, store = list(base), "@good"
    for piece in picks:
        if piece[0] == "@store":
            store = piece[1]
        elif piece[0] == "@flow-typo":
            args = [a if a != "@flow" else "lhe-solvee" for a in args]
        elif piece[0] == "@stage-typo":
            args = [("cfrr" if a == "cfr" else a) for a in args]
        elif piece[0] == "@game-typo":
            args = [("leduc.limit.2pp" if a == "leduc.limit.2p" else a) for a in args]
        elif piece[0] == "@key-missing":
            args = [("nokey-0000" if a == "@any-key" else a) for a in args]
            if "nokey-0000" not in args:
                args.append("nokey-0000")
        elif piece[0] == "@run-missing":
            args.append("20990101-nosuchrun")
        else:
            args += piece
    flow = draw(st.sampled_from(FLOWS))
    key = draw(st.sampled_from(["{key}", PARTIAL]))  # a stored solve, or the interrupted build
    args = [flow if a == "@flow" else key if a == "@any-key" else a for a in args]
    args = [("nokey-0000" if a == "@key-missing" else a) for a in args]
    if name == "runs compare" and len(args) == 3:
        args.append("last")
    return store, args if name in ("game info", "stage show") else [*args, "--store", store]


@settings(
    max_examples=80,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(case=malformed())
def test_a_malformed_command_is_refused_in_a_few_lines_without_a_traceback(places, case):
    store_kind, raw = case
    key = ArtifactStore(places["store"]).entries()[0].key
    stores = {
        "@good": places["store"],
        "@missing": places["missing"] / "store",
        "@file": places["file"],
        "@under-file": places["file"] / "store",
    }
    fill = {"key": key, "file": str(places["file"]), "missing": str(places["missing"]),
            "tmp": str(places["root"])}  # fmt: skip
    args = [str(stores[a]) if a in stores else a.format(**fill) for a in raw]
    before = snapshot(places["store"])
    result = CliRunner().invoke(app, args, env={"COLUMNS": "100", "GAMEFORGE_STORE": None})
    stderr = [line for line in result.stderr.splitlines() if line.strip()]
    shown = f"{args}\n{result.output}"
    assert result.exit_code not in (0, None), shown
    assert result.exception is None or isinstance(result.exception, SystemExit), shown
    assert "Traceback" not in result.output and len(stderr) <= 3, shown
    assert stderr and stderr[0].startswith("error: "), shown
    assert "internal error" not in result.output, shown  # each is the user's error, said so
    assert snapshot(places["store"]) == before, shown  # nothing written or lost
    assert not places["missing"].exists(), shown
    shutil.rmtree(places["root"] / "exported", ignore_errors=True)


def test_a_bug_says_so_in_one_line_with_the_log_path(tmp_path, monkeypatch):
    """An error no command phrased that is not the user's: one line saying it is a bug, and
    where its traceback went."""
    import gameforge.flows.queries as queries

    def broken(_store: object) -> list:
        raise KeyError("oops")

    monkeypatch.setattr(queries, "list_artifacts", broken)
    monkeypatch.setenv("GAMEFORGE_LOGS", str(tmp_path / "logs"))
    (tmp_path / "store").mkdir()
    result = CliRunner().invoke(app, ["artifacts", "ls", "--store", str(tmp_path / "store")])
    stderr = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.exit_code == 70 and len(stderr) == 1, result.output
    assert stderr[0].startswith("error: internal error (a bug in gameforge, not your input): ")
    [log] = (tmp_path / "logs").iterdir()
    assert f"traceback in {log}" in stderr[0]
    assert "KeyError: 'oops'" in log.read_text() and "Traceback" in log.read_text()
