"""What every `gameforge` command shares: consoles, option types, one-line errors and progress
bars (kept apart from the commands, which live in this package's other modules)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import ProgressColumn, Task
from rich.table import Table
from rich.text import Text
from typer._click import Context  # typer 0.29 vendors click: its errors are these
from typer._click.exceptions import ClickException
from typer.core import TyperGroup, TyperOption
from typer.exceptions import Abort


class LiveConsole(Console):
    """A console measured when it prints, not when it was made: COLUMNS and the terminal then
    count (rich fixes COLUMNS at creation, so a test at 200 columns after one at 80 saw 80).

    Every table it prints folds or wraps its cells instead of cutting them with an ellipsis,
    and is plain text (no box drawing) when the output is not a terminal."""

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        if options.get("width") is None:
            self._width = None  # `size` then reads COLUMNS, or the terminal's, at each use

    def print(self, *objects: Any, **options: Any) -> None:
        """Print, with each table folding its cells (and plain off a terminal)."""
        for item in objects:
            if isinstance(item, Table):
                _uncut(item, self.is_terminal)
        super().print(*objects, **options)


def _uncut(table: Table, terminal: bool) -> None:
    """Make `table` fold long cells onto further lines instead of cutting them."""
    for column in table.columns:
        column.no_wrap = False
        column.overflow = "fold"
    if not terminal:
        table.box = None  # plain text for files and pipes: no box-drawing characters
        table.show_edge = False


console = LiveConsole()
err_console = LiveConsole(stderr=True)

# Set by `main()`: a failed or interrupted run ends its process at once (worker threads deep in
# a kernel cannot be joined). Left False under tests that call the app in-process.
END_PROCESS = False


def check_store(store: str, writing: bool = False) -> str:
    """Refuse, in one line, a store path that is a file, or (unless `writing`) is missing."""
    from gameforge.artifacts.files import is_remote, local_path

    if is_remote(store):
        return store  # an object store's prefix exists once written to
    path = local_path(store)
    if path.is_dir():
        return store
    if path.exists():
        fail(f"--store {store}: a file, not a store folder (give the folder holding the store)")
    if not writing:
        fail(
            f"--store {store}: no such folder (a store is made by `gameforge run`; "
            "--store or GAMEFORGE_STORE names it)"
        )
    check_folder(path, "--store")
    return store


def check_folder(path: Path, option: str) -> None:
    """Refuse, in one line, a folder to write that is a file or lies under one (made if
    missing, by the command)."""
    if path.exists() and not path.is_dir():
        fail(f"{option} {path}: a file, not a folder")
    for parent in path.absolute().parents:  # the folder is made later: what holds it must be one
        if parent.exists():
            if not parent.is_dir():
                fail(f"{option} {path}: {parent} is a file, not a folder")
            break


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


_typer_type = TyperOption.display_type_rich


def _shown_type(self: TyperOption, ctx: Context) -> str | None:
    """An option's type in `--help`; none for a flag (typer 0.29 shows `<bool>`, as if it took
    a value)."""
    if self.is_flag and not self.count:
        return None
    return _typer_type(self, ctx)


setattr(TyperOption, "display_type_rich", _shown_type)  # noqa: B010 (a method, patched)


class OneLineErrors(TyperGroup):
    """The top command group: a usage error (a mistyped option, a bad number) is one `error:`
    line; an error a command did not phrase is one line too; an unexpected one (a bug) says so
    in one line with the path of its traceback's log."""

    def main(  # type: ignore[override]
        self,
        args: Any = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        """Run the command line; on its own (`standalone_mode`), end the process with its status."""
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode, **extra)
        try:
            code = super().main(args, prog_name, complete_var, False, **extra)
        except ClickException as exc:
            if type(exc).__name__ != "NoArgsIsHelpError":  # its help is printed already
                usage = getattr(exc, "ctx", None)
                where = f" (see {usage.command_path} --help)" if usage is not None else ""
                err_console.print(
                    f"[bold red]error:[/] {escape(exc.format_message())}{escape(where)}",
                    highlight=False,
                    soft_wrap=True,
                )
            sys.exit(exc.exit_code)
        except Abort:
            err_console.print("[bold red]error:[/] aborted", highlight=False)
            sys.exit(1)
        except Exception as exc:
            sys.exit(_unphrased(exc))
        sys.exit(code if isinstance(code, int) else 0)


def _unphrased(exc: Exception) -> int:
    """Say an error no command phrased in one line; its exit status (2: the user's input, 1: a
    full store, 70: a bug, whose traceback goes to a log file named in the line)."""
    from gameforge.flows.runlog import storage_error, storage_line

    if isinstance(exc, user_errors()):
        line, code = str(exc), 2
    elif isinstance(exc, OSError) and storage_error(exc) is not None:
        line, code = storage_line(exc, started=False), 1
    elif isinstance(exc, OSError) and exc.filename is not None:  # a path the user gave
        line, code = f"{exc.filename}: {exc.strerror or exc}", 2
    else:
        line, code = f"{_bug_line(exc)}", 70
    err_console.print(f"[bold red]error:[/] {escape(line)}", highlight=False, soft_wrap=True)
    return code


def _bug_line(exc: Exception) -> str:
    """`internal error (a bug, not your input): Type: message; traceback in LOG`."""
    import os
    import traceback
    from datetime import UTC, datetime
    from pathlib import Path

    from gameforge.flows.runlog import one_line

    folder = Path(os.environ.get("GAMEFORGE_LOGS", Path.home() / ".cache" / "gameforge" / "logs"))
    path = folder / f"{datetime.now(UTC):%Y%m%d-%H%M%S}-cli-{os.getpid()}.log"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        path.write_text(
            "gameforge " + " ".join(sys.argv[1:]) + "\n" + "".join(traceback.format_exception(exc)),
            encoding="utf-8",
        )
        where = f"traceback in {path}"
    except OSError as lost:
        where = f"its traceback could not be written ({lost})"
    return f"internal error (a bug in gameforge, not your input): {one_line(exc)}; {where}"


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
