"""What every `gameforge` command shares: consoles, option types, one-line errors and progress
bars (kept apart from the commands, which live in this package's other modules)."""

from __future__ import annotations

from typing import Annotated, Any, NoReturn

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import ProgressColumn, Task
from rich.text import Text

console = Console()
err_console = Console(stderr=True)

# Set by `main()`: a failed or interrupted run ends its process at once (worker threads deep in
# a kernel cannot be joined). Left False under tests that call the app in-process.
END_PROCESS = False


def check_store(store: str, writing: bool = False) -> str:
    """Refuse, in one line, a store path that is a file, or (unless `writing`) is missing."""
    from pathlib import Path

    from gameforge.artifacts.files import is_remote

    if is_remote(store):
        return store  # an object store's prefix exists once written to
    path = Path(store.removeprefix("file://")).expanduser()
    if path.is_dir():
        return store
    if path.exists():
        fail(f"--store {store}: a file, not a store folder (give the folder holding the store)")
    if not writing:
        fail(
            f"--store {store}: no such folder (a store is made by `gameforge run`; "
            "--store or GAMEFORGE_STORE names it)"
        )
    for parent in path.absolute().parents:  # the folder is made later: what holds it must be one
        if parent.exists():
            if not parent.is_dir():
                fail(f"--store {store}: {parent} is a file, not a folder")
            break
    return store


def _reading_store(store: str) -> str:
    return check_store(store)


def _writing_store(store: str) -> str:
    return check_store(store, writing=True)


StoreOpt = Annotated[
    str,
    typer.Option(
        "--store",
        envvar="GAMEFORGE_STORE",
        callback=_reading_store,
        help="Artifact store: a folder, or an object store, s3://bucket/prefix.",
    ),
]
# a command that writes (run, stage run, import, serve) makes a missing store folder
WriteStoreOpt = Annotated[
    str,
    typer.Option(
        "--store",
        envvar="GAMEFORGE_STORE",
        callback=_writing_store,
        help="Artifact store: a folder (made if missing), or an object store, s3://bucket/prefix.",
    ),
]
KeyArg = Annotated[str, typer.Argument(help="Artifact key (a unique prefix will do).")]
PresetOpt = Annotated[
    str,
    typer.Option("--preset", "-p", help="tiny, small or paper (some flows have more: see flows)."),
]
SetOpt = Annotated[
    list[str] | None,
    typer.Option("--set", help="Override a parameter: name=value or stage.name=value."),
]
DaskOpt = Annotated[
    str | None,
    typer.Option(
        "--dask-address",
        envvar="GAMEFORGE_DASK_ADDRESS",
        help="Scheduler of an existing Dask cluster (tls://host:8786, or tcp:// on a trusted "
        "network); 'local' runs in-process. Default: a local threaded cluster.",
    ),
]
InputOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--input",
        help="Feed a node's optional input from the store: node.input=KEY (a key prefix is "
        "enough), e.g. cfr.parent=KEY to continue an earlier solve; cfr[k=8].parent=KEY feeds "
        "one variant of a sweep.",
    ),
]
DashboardOpt = Annotated[
    bool,
    typer.Option(
        "--dashboard",
        envvar="GAMEFORGE_DASHBOARD",
        help="Serve Dask's dashboard on 127.0.0.1 at a free port and print its link.",
    ),
]


def fail(message: str) -> NoReturn:
    """Print one `error:` line and exit 2."""
    err_console.print(f"[bold red]error:[/] {escape(message)}", highlight=False, soft_wrap=True)
    raise typer.Exit(2)


def say(text: str) -> None:
    """Print one plain line: no rich markup or highlighting, never cut at the terminal's width."""
    console.print(text, highlight=False, markup=False, soft_wrap=True)


def human_bytes(n: int) -> str:
    """Bytes as 12.3 GB (the resource plan's formatting)."""
    from gameforge.stages.resources import human

    return human(n)


def user_errors() -> tuple[type[Exception], ...]:  # lazy: the imports are slow
    from gameforge.artifacts.store import StoreError
    from gameforge.engines.poker.acpc import GameDefError
    from gameforge.flows.runtime import ClusterError
    from gameforge.stages.base import StageError

    return (StoreError, StageError, GameDefError, ClusterError, FileNotFoundError)


class _RateColumn(ProgressColumn):
    """Items per second (per minute when slower than one a second)."""

    max_refresh = 0.5

    def render(self, task: Task) -> Text:
        """The bar's rate so far."""
        speed = task.finished_speed or task.speed
        if not speed:
            return Text("-/s", style="progress.data.speed")
        text = f"{speed:,.1f}/s" if speed >= 1 else f"{60 * speed:,.1f}/min"
        return Text(text, style="progress.data.speed")


class PlainProgress:
    """Progress as plain lines every few seconds, for output that is not a terminal (CI, nohup)."""

    def __init__(self, every_s: float = 10.0) -> None:
        from gameforge.stages.progress import LogProgress

        self.lines = LogProgress(self.echo, every_s)

    def __enter__(self) -> PlainProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def start(self, desc: str, total: int, done: int = 0) -> Any:
        """A bar that prints a line now and then, with its rate and ETA."""
        return self.lines.start(desc, total, done)

    def echo(self, message: str) -> None:
        """Print a log line."""
        say(message)


class RichProgress:
    """Progress bars on the terminal (stages report through stages.progress.Progress)."""

    def __init__(self) -> None:
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self.bars = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            _RateColumn(),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            console=console,
            transient=False,
        )

    def __enter__(self) -> RichProgress:
        self.bars.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.bars.stop()

    def start(self, desc: str, total: int, done: int = 0) -> Any:
        """Add a bar (`done` set as its start, not as progress, so rich's rate leaves it out)."""
        task_id = self.bars.add_task(desc, total=total, completed=done)
        bars = self.bars

        class _Bar:
            def advance(self, n: int = 1) -> None:
                bars.advance(task_id, n)

            def close(self) -> None:
                bars.refresh()

            def note(self, text: str) -> None:
                bars.update(task_id, description=f"{desc} {text}")

            def end_early(self, why: str) -> None:
                # the bar ends full where the work ended: its total becomes what was done
                done = next(t.completed for t in bars.tasks if t.id == task_id)
                bars.update(task_id, total=done, description=f"{desc} ({why})")
                bars.refresh()

        return _Bar()

    def echo(self, message: str) -> None:
        """Print a log line above the bars."""
        self.bars.console.print(message, highlight=False, markup=False, soft_wrap=True)


VerboseOpt = Annotated[
    bool,
    typer.Option(
        "--verbose",
        "-v",
        envvar="GAMEFORGE_VERBOSE",
        help="Print a failure's full traceback, and library errors, on the terminal too.",
    ),
]
ForceResourcesOpt = Annotated[
    bool,
    typer.Option(
        "--force-resources",
        help="Run even if the estimated memory or stored bytes exceed what is free.",
    ),
]
RepairOpt = Annotated[
    bool,
    typer.Option(
        "--repair",
        help="Check the checksums of the stored artifacts this run reuses; move corrupted ones "
        "to the store's trash and rebuild them.",
    ),
]


def describe_failure(exc: BaseException) -> str:
    """One line for an unexpected failure: a stage's own line, else `Type: message`."""
    from gameforge.flows.runlog import one_line
    from gameforge.stages.runner import failed_at

    where = failed_at(exc)
    return where.line(exc) if where is not None else one_line(exc)


def ledger(store: str) -> Any:
    from gameforge.artifacts.runs import RunLedger
    from gameforge.artifacts.store import ArtifactStore

    return RunLedger(ArtifactStore(store))
