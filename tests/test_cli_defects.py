"""Smaller CLI defects of issue 60: `artifacts show` of an interrupted build known only by its
partial folder, and a recompute check that says an array was both compared and not."""

from __future__ import annotations

from types import SimpleNamespace

from typer.testing import CliRunner

from gameforge.flows.cli import app
from gameforge.flows.cli.artifacts import _report_check


def test_show_finds_an_interrupted_build_by_a_prefix_as_ls_lists_it(tmp_path):
    (tmp_path / "store" / "partial" / "cfr-0123456789abcdef" / "data").mkdir(parents=True)
    where = ["--store", str(tmp_path / "store")]
    listed = CliRunner().invoke(app, ["artifacts", "ls", *where])
    assert "cfr-0123456789abcdef" in listed.output and "partial" in listed.output
    shown = CliRunner().invoke(app, ["artifacts", "show", "cfr-0123", *where])
    assert shown.exit_code == 0, shown.output
    assert "cfr-0123456789abcdef  stage cfr: unfinished" in shown.output


def test_a_check_never_says_an_array_it_skipped_was_compared(capsys):
    tolerance = SimpleNamespace(reason="wall-clock times differ run to run", rtol=None, arrays=None)
    report = SimpleNamespace(
        key="cfr-1", seed=None, chunks={}, arrays=["regrets", "curve_seconds"], note="",
        skipped=["curve_seconds"], tolerance=tolerance, mismatches=[], passed=True, seconds=1.0,
    )  # fmt: skip
    _report_check(report)
    out = capsys.readouterr().out
    assert "compared whole regrets" in out and "compared whole regrets, curve_seconds" not in out
    assert "not compared, curve_seconds: wall-clock times differ" in out


def test_show_prints_the_peak_memory_the_build_recorded(tmp_path):
    from gameforge.artifacts import ArtifactStore
    from gameforge.stages.resources import human
    from gameforge.stages.runner import run_stage

    store = ArtifactStore(tmp_path / "store")
    params = {"game": "kuhn.limit.2p", "iterations": 5, "evaluations": 0}
    key = run_stage("cfr", params, store=store, log=lambda _line: None).key
    peak = store.open(key).meta["memory"]["peak_rss_bytes"]
    shown = CliRunner().invoke(app, ["artifacts", "show", key, "--store", str(store.root)])
    assert shown.exit_code == 0, shown.output
    assert f"peak memory {human(peak)} (resident" in shown.output
