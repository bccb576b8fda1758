"""The `gameforge` command line, one module per command group: `run` (and `flows`), `stage`,
`artifacts`, `runs`, `strategy` (and `play`), `game`, `server` (and `serve`); `common` holds what
they share (consoles, options, one-line errors, progress bars).

Each command parses its options and prints; the work is done by library functions a notebook can
call as well (`flows.pipeline`, `flows.prefect_flow`, `flows.queries`, `engines.poker.game_info`
...). Commands that only read the store or a game definition import neither Prefect nor Dask, so
they answer quickly; `run` and `stage run` go through Prefect.
"""

from __future__ import annotations

from typing import Annotated

import typer

from gameforge.flows.cli import common
from gameforge.flows.cli.artifacts import artifacts_app
from gameforge.flows.cli.common import OneLineErrors, console
from gameforge.flows.cli.game import game_app
from gameforge.flows.cli.run import flows_cmd, run_cmd
from gameforge.flows.cli.runs import runs_app
from gameforge.flows.cli.server import serve_cmd, server_app
from gameforge.flows.cli.stage import _param_default, stage_app
from gameforge.flows.cli.strategy import play_cmd, strategy_app

__all__ = ["app", "main", "_param_default"]

app = typer.Typer(
    cls=OneLineErrors,
    rich_markup_mode="markdown",  # help paragraphs rewrap; `[k=8]` in a help text stays as is
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
    help="gameforge: card abstraction, equilibrium strategies, trained networks and leagues, "
    "as resumable, cached stages.",
)
# the order `gameforge --help` lists them in: commands, then groups
app.command("flows")(flows_cmd)
app.command("run")(run_cmd)
app.command("play")(play_cmd)
app.command("serve")(serve_cmd)
app.add_typer(artifacts_app, name="artifacts")
app.add_typer(stage_app, name="stage")
app.add_typer(game_app, name="game")
app.add_typer(server_app, name="server")
app.add_typer(strategy_app, name="strategy")
app.add_typer(runs_app, name="runs")


def _version_callback(value: bool) -> None:
    if value:
        from gameforge.stages.runner import code_version

        console.print(f"gameforge {code_version()}", highlight=False)
        raise typer.Exit()


@app.callback()
def _options(
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            callback=_version_callback,
            is_eager=True,
            help="Print the version (and git commit of a checkout) and exit.",
        ),
    ] = False,
) -> None:
    """The `gameforge` command line."""


def main() -> None:
    """Entry point of the `gameforge` script."""
    common.END_PROCESS = True
    app()  # errors end in one line (common.OneLineErrors)
