"""Honest progress: no rate or ETA before one is measured, and a bar whose work ended early
(k-means converged) ends where the work ended, not filled to its total nor marked stopped."""

from __future__ import annotations

from types import SimpleNamespace

from gameforge.stages.progress import LogProgress, end_early


def _clock(monkeypatch, *times: float) -> None:  # type: ignore[no-untyped-def]
    """time.monotonic() of the progress module returns `times` in turn, then the last one."""
    ticks = iter(times)
    last = [times[-1]]

    def now() -> float:
        last[0] = next(ticks, last[0])
        return last[0]

    monkeypatch.setattr("gameforge.stages.progress.time.monotonic", now)


def test_the_first_line_has_no_rate_or_eta(monkeypatch):
    """1 iteration in the first 13 s (numba compiling) says no rate: not "0.08/s, ETA 12781 s";
    the next line's rate is measured from the first line."""
    _clock(monkeypatch, 0.0, 13.0, 23.0, 30.0)
    lines: list[str] = []
    bar = LogProgress(lines.append, every_s=10).start("cfr+ iterations", 1000)
    bar.advance(1)  # at 13 s
    bar.advance(499)  # at 23 s: 499 in 10 s
    bar.advance(500)  # at 30 s: all done, then the closing line
    bar.close()
    assert lines[0] == "cfr+ iterations: 1/1,000 (13 s)"
    assert lines[1] == "cfr+ iterations: 500/1,000 (23 s, 49.90/s, ETA 10 s)"
    assert "ETA" not in lines[2]  # nothing left: no "ETA 0 s"
    assert lines[-1].startswith("cfr+ iterations: 1,000/1,000 done after")


def test_a_bar_that_ends_early_ends_where_the_work_ended(monkeypatch):
    """Converged at iteration 15 of at most 100: "15 (of at most 100) done", not "100/100"."""
    _clock(monkeypatch, 0.0, 1.0, 2.5)
    lines: list[str] = []
    bar = LogProgress(lines.append, every_s=10).start("k-means iterations", 100)
    bar.advance(15)
    end_early(bar, "converged at 15", 85)
    assert lines == ["k-means iterations: 15 (of at most 100) done after 2.5 s, converged at 15"]


def test_end_early_on_a_sink_without_it_fills_and_notes():
    """A progress sink written before `end_early` still ends full, the reason noted."""
    seen: list[str] = []
    bar = SimpleNamespace(
        advance=lambda n=1: seen.append(f"advance {n}"),
        note=lambda text: seen.append(f"note {text}"),
        close=lambda: seen.append("close"),
    )
    end_early(bar, "converged at 15", 85)  # type: ignore[arg-type]
    assert seen == ["note (converged at 15)", "advance 85", "close"]


def test_the_terminal_bar_ends_full_where_the_work_ended():
    """rich's bar of 100 that ended at 15 becomes 15/15, finished, with the reason."""
    from gameforge.flows.cli.common import RichProgress

    progress = RichProgress()
    bar = progress.start("k-means iterations", 100)
    bar.advance(15)
    end_early(bar, "converged at 15", 85)
    task = progress.bars.tasks[0]
    assert task.completed == 15 and task.total == 15 and task.finished
    assert task.description == "k-means iterations (converged at 15)"


def test_converged_kmeans_ends_its_bar_at_the_iteration_it_stopped(monkeypatch):
    """The bucketing stages' k-means bar: converged at 8 of 100 reads "8 (of at most 100)"."""
    from gameforge.stages.poker.buckets import iteration_checkpoints

    _clock(monkeypatch, *[float(t) for t in range(40)])
    lines: list[str] = []
    ctx = SimpleNamespace(
        log=lines.append,
        progress=LogProgress(lines.append, every_s=1000),
        writer=SimpleNamespace(save_checkpoint=lambda name, arrays: None),
    )
    params = SimpleNamespace(k=150, max_iter=100, checkpoint_seconds=1000.0)
    checkpoint, finish = iteration_checkpoints(ctx, "round1", "k-means", params, None)  # type: ignore[arg-type]
    state = SimpleNamespace(to_arrays=dict)
    for _ in range(8):
        checkpoint(state)
    finish(8)
    assert len(lines) == 1
    assert lines[0].startswith("round1 k-means k=150 iterations: 8 (of at most 100) done after")
    assert lines[0].endswith(", converged at 8")


def test_the_terminal_bar_has_no_eta_after_its_first_tick():
    """rich leaves the first sample out of its speed: no remaining time until a second one."""
    from gameforge.flows.cli.common import RichProgress

    progress = RichProgress()
    bar = progress.start("cfr+ iterations", 1000)
    bar.advance(1)
    assert progress.bars.tasks[0].time_remaining is None


def test_a_solve_under_a_time_budget_stopped_by_its_iteration_cap_ends_there(monkeypatch):
    """A 60 s budget whose 100-iteration cap stops it at 12 s: "12 (of at most 60) done", not
    "12/60 stopped"; a solve the budget stopped fills its bar."""
    from gameforge.stages.poker.cfr import _SolveBar

    _clock(monkeypatch, *[float(t) for t in range(40)])
    lines: list[str] = []
    ctx = SimpleNamespace(progress=LogProgress(lines.append, every_s=1000))
    params = SimpleNamespace(
        algorithm="cfr+", seconds=59.5, by_clock=lambda: True, last_iteration=lambda: 100
    )
    bar = _SolveBar(ctx, params, 0, 0.0)  # type: ignore[arg-type]
    bar.advance(100, 12.4)
    bar.close("iterations")
    assert lines[-1].startswith("cfr+ solve seconds: 12 (of at most 60) done after")
    assert lines[-1].endswith(", iteration cap reached; iteration 100")
    bar = _SolveBar(ctx, params, 0, 0.0)  # type: ignore[arg-type]
    bar.advance(5000, 59.6)
    bar.close("time budget")
    assert lines[-1].startswith("cfr+ solve seconds: 60/60 done after")
