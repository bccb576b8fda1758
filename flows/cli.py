"""The `gameforge` command line.

Commands that only read the store or a game definition import neither Prefect nor Dask, so they
answer quickly; `run` and `stage run` go through Prefect.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
    help=__doc__.splitlines()[0],
)
artifacts_app = typer.Typer(no_args_is_help=True, help="Inspect and maintain the artifact store.")
stage_app = typer.Typer(no_args_is_help=True, help="Run or list single stages.")
game_app = typer.Typer(no_args_is_help=True, help="Poker game definitions.")
server_app = typer.Typer(no_args_is_help=True, help="A long-lived local Prefect server.")
strategy_app = typer.Typer(no_args_is_help=True, help="Query solved strategies (cfr artifacts).")
app.add_typer(artifacts_app, name="artifacts")
app.add_typer(stage_app, name="stage")
app.add_typer(game_app, name="game")
app.add_typer(server_app, name="server")
app.add_typer(strategy_app, name="strategy")

console = Console()
err_console = Console(stderr=True)

StoreOpt = Annotated[
    Path,
    typer.Option("--store", envvar="GAMEFORGE_STORE", help="Artifact store root directory."),
]
PresetOpt = Annotated[str, typer.Option("--preset", "-p", help="tiny, small or paper.")]
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
        "enough), e.g. cfr.parent=KEY to continue an earlier solve.",
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


def _fail(message: str) -> NoReturn:
    err_console.print(f"[bold red]error:[/] {escape(message)}", highlight=False, soft_wrap=True)
    raise typer.Exit(2)


def _user_errors() -> tuple[type[Exception], ...]:  # lazy: the imports are slow
    from gameforge.artifacts.store import StoreError
    from gameforge.engines.poker.acpc import GameDefError
    from gameforge.flows.runtime import ClusterError
    from gameforge.stages.base import StageError

    return (StoreError, StageError, GameDefError, ClusterError, FileNotFoundError)


def _human_bytes(n: int) -> str:
    size = float(n)
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if size < 1024 or unit == "TB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"


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

    def start(self, desc: str, total: int) -> Any:
        """Add a bar."""
        task_id = self.bars.add_task(desc, total=total)
        bars = self.bars

        class _Bar:
            def advance(self, n: int = 1) -> None:
                bars.advance(task_id, n)

            def close(self) -> None:
                bars.refresh()

            def note(self, text: str) -> None:
                bars.update(task_id, description=f"{desc} {text}")

        return _Bar()

    def echo(self, message: str) -> None:
        """Print a log line above the bars."""
        self.bars.console.print(message, highlight=False)


def _run(
    flow: str,
    preset: str,
    overrides: list[str] | None,
    store: Path,
    dask_address: str | None,
    force: list[str],
    only: list[str] | None = None,
    parallel_nodes: int = 1,
    dashboard: bool = False,
    stored_inputs: list[str] | None = None,
) -> None:
    import time

    from gameforge.flows.prefect_flow import run_flow

    t0 = time.monotonic()
    try:
        with RichProgress() as progress:
            results = run_flow(
                flow,
                preset,
                overrides,
                store_root=str(store),
                dask_address=dask_address,
                force=force,
                only=only,
                progress=progress,
                echo=progress.echo,
                parallel_nodes=parallel_nodes,
                dashboard=dashboard,
                stored_inputs=stored_inputs,
            )
    except _user_errors() as exc:
        _fail(str(exc))
    table = Table(title=f"{flow} \\[{preset}] in {time.monotonic() - t0:.1f} s")
    for column in ("stage", "key", "status", "seconds"):
        table.add_column(column)
    for stage, result in results.items():
        status = "cached" if result["cached"] else "computed"
        table.add_row(escape(stage), result["key"], status, f"{result['seconds']:.1f}")
    console.print(table)


@app.command("flows")
def flows_cmd() -> None:
    """List flows, their stages and presets."""
    from gameforge.flows.specs import FLOWS

    table = Table()
    for column in ("flow", "stages", "presets", "description"):
        table.add_column(column)
    for spec in FLOWS.values():
        stages = " -> ".join(n.name for n in spec.nodes)
        table.add_row(spec.name, stages, ", ".join(spec.presets), spec.description)
    console.print(table)


@app.command("run")
def run_cmd(
    flow: Annotated[str, typer.Argument(help="Flow name (see `gameforge flows`).")],
    preset: PresetOpt = "small",
    overrides: SetOpt = None,
    store: StoreOpt = Path("store"),
    dask_address: DaskOpt = None,
    force: Annotated[
        list[str] | None, typer.Option("--force", help="Recompute this stage (repeatable).")
    ] = None,
    parallel_nodes: Annotated[
        int,
        typer.Option(
            "--parallel-nodes",
            min=1,
            help="Run up to N independent stages at once (e.g. a flow's learners).",
        ),
    ] = 1,
    dashboard: DashboardOpt = False,
    stored_inputs: InputOpt = None,
    with_nodes: Annotated[
        list[str] | None,
        typer.Option(
            "--with",
            help="Also run this optional node (repeatable), e.g. best-response in lhe-solve.",
        ),
    ] = None,
) -> None:
    """Run a flow at a preset: every stage, reusing cached artifacts."""
    forced = force or []
    only = None
    if with_nodes:
        try:
            from gameforge.flows.specs import get_flow

            only = get_flow(flow).default_nodes(with_nodes)
        except _user_errors() as exc:
            _fail(str(exc))
    _run(flow, preset, overrides, store, dask_address, forced, only, parallel_nodes, dashboard,
         stored_inputs)  # fmt: skip


@stage_app.command("run")
def stage_run_cmd(
    stage: Annotated[str, typer.Argument(help="Stage name (see `gameforge stage list`).")],
    preset: PresetOpt = "small",
    overrides: SetOpt = None,
    store: StoreOpt = Path("store"),
    dask_address: DaskOpt = None,
    force: Annotated[bool, typer.Option("--force", help="Recompute even if cached.")] = False,
    dashboard: DashboardOpt = False,
    stored_inputs: InputOpt = None,
) -> None:
    """Run one stage (and whatever it needs upstream) with its flow's preset."""
    try:
        from gameforge.flows.specs import flow_of_stage

        spec = flow_of_stage(stage)
    except _user_errors() as exc:
        _fail(str(exc))
    only = spec.upstream(stage)
    forced = [stage] if force else []
    _run(spec.name, preset, overrides, store, dask_address, forced, only, dashboard=dashboard,
         stored_inputs=stored_inputs)  # fmt: skip


@stage_app.command("list")
def stage_list_cmd() -> None:
    """List stages with their versions, inputs and parameters."""
    from gameforge.stages.registry import all_stages

    table = Table()
    for column in ("stage", "version", "inputs", "parameters (defaults)", "description"):
        table.add_column(column)
    for stage in all_stages().values():
        fields = stage.params_model.model_fields
        params = ", ".join(f"{k}={v.default!r}" for k, v in fields.items())
        inputs = ", ".join(f"{k}<-{v}" for k, v in stage.inputs.items()) or "-"
        table.add_row(stage.name, str(stage.version), inputs, params, stage.description)
    console.print(table)


@artifacts_app.command("ls")
def artifacts_ls(
    store: StoreOpt = Path("store"),
    as_json: Annotated[bool, typer.Option("--json", help="JSON array on stdout.")] = False,
) -> None:
    """List artifacts: key, stage, status (complete or partial), size."""
    from gameforge.artifacts.store import ArtifactStore

    infos = ArtifactStore(store).entries()
    if as_json:
        sys.stdout.write(json.dumps([i.as_dict() for i in infos], indent=2) + "\n")
        return
    table = Table(title=f"store {store}")
    table.add_column("key", no_wrap=True)
    for column in ("stage", "status", "size", "created"):
        table.add_column(column)
    for info in infos:
        style = None if info.status == "complete" else "yellow"
        table.add_row(
            info.key,
            info.stage,
            info.status,
            _human_bytes(info.bytes),
            (info.created or "-").replace("+00:00", "Z"),
            style=style,
        )
    console.print(table)


@artifacts_app.command("show")
def artifacts_show(
    key: Annotated[str, typer.Argument(help="Artifact key (a unique prefix will do).")],
    store: StoreOpt = Path("store"),
    as_json: Annotated[bool, typer.Option("--json", help="Raw metadata as JSON.")] = False,
) -> None:
    """Explain an artifact: its stage, parameters, inputs, arrays and lineage."""
    from gameforge.artifacts.store import ArtifactStore, StoreError, dumps

    artifacts = ArtifactStore(store)
    try:
        meta = artifacts.show(key)
    except StoreError as exc:
        _fail(str(exc))
    if as_json:
        sys.stdout.write(dumps(meta) + "\n")
        return
    console.print(f"[bold]{meta['key']}[/]  stage {meta['stage']} v{meta['version']}")
    console.print(f"  built {meta['created']} -> {meta['finished']} ({meta['duration_s']} s)")
    console.print(f"  on {meta['host']}, code {meta.get('code_version', '?')}")
    console.print(f"  path {meta['path']} ({_human_bytes(meta['bytes'])})")
    console.print("  parameters:")
    for name, value in meta["params"].items():
        console.print(f"    {name} = {value!r}", highlight=False)
    console.print("  inputs:" + ("" if meta["inputs"] else " none"))
    for name, upstream in meta["inputs"].items():
        console.print(f"    {name} <- {upstream}")
    console.print("  arrays:")
    for name, info in meta["arrays"].items():
        shape = "x".join(map(str, info["shape"]))
        console.print(f"    {name}: {info['dtype']} [{shape}] checksum {info['checksum']}")
    if meta.get("summary"):
        console.print("  summary:")
        for name, value in meta["summary"].items():
            console.print(f"    {name}: {value}", highlight=False)
    if meta["stage"] == "cfr":
        from gameforge.stages.poker.best_response import measured_exploitability

        known = measured_exploitability(artifacts, meta["dependents"])
        if "exact_key" in known:
            console.print(
                f"  real-game exploitability: {known['exact_mbb_per_game']:.3f} mbb/g (exact, "
                f"{known['exact_key']})",
                highlight=False,
            )
        for lbr_key, mean, half in known.get("lbr", []):
            console.print(
                f"  LBR lower bound: {mean:.1f} ± {half:.1f} mbb/g ({lbr_key})", highlight=False
            )
        if not known:
            console.print(
                f"  real-game exploitability: not computed (gameforge strategy br {meta['key']})",
                highlight=False,
            )
    if meta["dependents"]:
        console.print("  used by: " + ", ".join(meta["dependents"]))


@artifacts_app.command("plot")
def artifacts_plot(
    key: Annotated[str, typer.Argument(help="Artifact key (a unique prefix will do).")],
    store: StoreOpt = Path("store"),
    out: Annotated[Path | None, typer.Option("--out", help="PNG path (default KEY.png).")] = None,
    hand: Annotated[
        str | None,
        typer.Option("--hand", help="Hole cards then board, e.g. Jc9h/4d5d9d (hsd, ochs)."),
    ] = None,
) -> None:
    """Write a PNG figure of an artifact (HSD, opponent-cluster grid, OCHS, HS histogram)."""
    from gameforge.artifacts.store import ArtifactStore
    from gameforge.flows.plots import plot

    try:
        artifact = ArtifactStore(store).open(key)
        target = out or Path(f"{artifact.key}.png")
        description = plot(artifact, target, hand)
    except _user_errors() + (ValueError,) as exc:
        _fail(str(exc))
    console.print(f"wrote {target}: {description}", highlight=False)


@artifacts_app.command("export")
def artifacts_export(
    keys: Annotated[list[str], typer.Argument(help="Artifact keys (unique prefixes will do).")],
    out: Annotated[Path, typer.Option("--out", help="Folder for the export files.")],
    store: StoreOpt = Path("store"),
    with_inputs: Annotated[
        bool, typer.Option("--with-inputs", help="Also export every upstream artifact.")
    ] = False,
) -> None:
    """Write self-describing files (one tar per artifact) that `import` reads."""
    from gameforge.artifacts.store import ArtifactStore
    from gameforge.artifacts.transfer import export_artifacts

    try:
        written = export_artifacts(ArtifactStore(store), keys, out, with_inputs)
    except _user_errors() as exc:
        _fail(str(exc))
    for path in written:
        console.print(f"wrote {path} ({_human_bytes(path.stat().st_size)})", highlight=False)


@artifacts_app.command("import")
def artifacts_import(
    files: Annotated[list[Path], typer.Argument(help="Files written by `artifacts export`.")],
    store: StoreOpt = Path("store"),
) -> None:
    """Import exported artifacts, verifying their keys and checksums first."""
    from gameforge.artifacts.store import ArtifactStore
    from gameforge.artifacts.transfer import import_artifacts

    try:
        results = import_artifacts(ArtifactStore(store), files)
    except _user_errors() as exc:
        _fail(str(exc))
    for key, status in results:
        console.print(f"{status}: {key}")


@artifacts_app.command("verify")
def artifacts_verify(
    keys: Annotated[list[str] | None, typer.Argument(help="Keys to check (default: all).")] = None,
    store: StoreOpt = Path("store"),
) -> None:
    """Re-check every array's checksum; exit 1 naming any corrupted artifact."""
    from gameforge.artifacts.store import ArtifactStore

    report = ArtifactStore(store).verify(keys or None)
    bad = {k: v for k, v in report.items() if v}
    for key, problems in report.items():
        if problems:
            console.print(f"[red]corrupted[/] {key}: " + "; ".join(problems), highlight=False)
        else:
            console.print(f"[green]ok[/] {key}")
    console.print(f"{len(report) - len(bad)} ok, {len(bad)} corrupted")
    if bad:
        raise typer.Exit(1)


@artifacts_app.command("rm")
def artifacts_rm(
    key: Annotated[str, typer.Argument(help="Artifact key (a unique prefix will do).")],
    store: StoreOpt = Path("store"),
    force: Annotated[bool, typer.Option("--force", help="Remove even if others use it.")] = False,
) -> None:
    """Remove an artifact; refuses while other artifacts depend on it, unless --force."""
    from gameforge.artifacts.store import ArtifactStore, StoreError

    try:
        removed = ArtifactStore(store).remove(key, force=force)
    except StoreError as exc:
        _fail(str(exc))
    console.print(f"removed {removed}")


@artifacts_app.command("gc")
def artifacts_gc(store: StoreOpt = Path("store")) -> None:
    """Remove partial artifacts that no running process is building."""
    from gameforge.artifacts.store import ArtifactStore

    removed = ArtifactStore(store).gc()
    for key in removed:
        console.print(f"removed {key}")
    console.print(f"{len(removed)} removed")


@strategy_app.command("show")
def strategy_show(
    key: Annotated[str, typer.Argument(help="cfr artifact key (a unique prefix will do).")],
    hand: Annotated[str, typer.Option("--hand", help="Hole cards, e.g. AsKd.")],
    board: Annotated[str, typer.Option("--board", help="Board cards so far, e.g. 4d5d9d.")] = "",
    history: Annotated[
        str, typer.Option("--history", help="Betting so far: f/c/r, rounds split by '/'.")
    ] = "",
    store: StoreOpt = Path("store"),
) -> None:
    """Print the average strategy's action probabilities at one decision point."""
    from rich.table import Table

    from gameforge.artifacts.store import ArtifactStore
    from gameforge.stages.poker.strategy import ACTION_NAMES, StrategyView

    try:
        artifacts = ArtifactStore(store)
        view = StrategyView(artifacts, artifacts.open(key))
        decision = view.decision(hand, board, history)
        cards = view.cards_text(hand, board)
    except _user_errors() + (ValueError,) as exc:
        _fail(str(exc))
    console.print(
        f"[bold]{view.artifact.key}[/] ({view.artifact.params['algorithm']}, "
        f"{view.artifact.meta['summary']['iterations']:,} iterations; {view.describe})",
        highlight=False,
    )
    console.print(
        f"player {decision.player} holds {cards}, betting {decision.history or '(start)'!r}: "
        f"round {decision.round}, bucket {decision.bucket}",
        highlight=False,
    )
    table = Table("action", "probability")
    for action, p in decision.probabilities.items():
        table.add_row(ACTION_NAMES[action], f"{p:.4f}")
    console.print(table)


@app.command("play")
def play_cmd(
    strategy: Annotated[str, typer.Option("--strategy", help="cfr artifact key (or prefix).")],
    port: Annotated[int, typer.Option("--port", help="Dealer port.")],
    game: Annotated[
        str | None, typer.Option("--game", help="Game name or .game path (must match).")
    ] = None,
    host: Annotated[str, typer.Option("--host", help="Dealer host.")] = "127.0.0.1",
    seed: Annotated[int, typer.Option("--seed", help="Seed of the action sampling.")] = 0,
    store: StoreOpt = Path("store"),
) -> None:
    """Play a match at an ACPC dealer with a solved strategy (ACPC protocol 2.0.0)."""
    from dataclasses import replace

    from gameforge.artifacts.store import ArtifactStore
    from gameforge.engines.poker.shipped_games import load_game
    from gameforge.flows.acpc_client import ACPCClient, ProtocolError, strategy_chooser
    from gameforge.stages.poker.strategy import StrategyView

    try:
        artifacts = ArtifactStore(store)
        view = StrategyView(artifacts, artifacts.open(strategy))
        if game is not None and replace(load_game(game), name="") != replace(view.game, name=""):
            _fail(f"strategy {view.artifact.key} was solved for {view.game.name}, not {game}")
        client = ACPCClient(view.game, view.tree, strategy_chooser(view, seed))
        hands = client.play(host, port)
    except _user_errors() + (ProtocolError, OSError) as exc:
        _fail(str(exc))
    console.print(f"played {hands:,} hands at {host}:{port} with {view.artifact.key}")


def _strategy_stage(
    stage_name: str, key: str, values: dict[str, Any], store: Path, dask_address: str | None
) -> tuple[Any, Any]:
    """Run (or find) a stage whose one input is a stored strategy; (its artifact, the strategy)."""
    from gameforge.artifacts.store import ArtifactStore
    from gameforge.flows.runtime import dask_executor
    from gameforge.stages.runner import run_stage

    artifacts = ArtifactStore(store)
    strategy = artifacts.open(key)
    if strategy.stage != "cfr":
        _fail(f"{strategy.key} is a {strategy.stage} artifact, not a cfr strategy")
    params = {"game": strategy.params["game"], **values}
    with RichProgress() as progress, dask_executor(dask_address, log=progress.echo) as executor:
        result = run_stage(
            stage_name, params, {"strategy": strategy.key}, store=artifacts, executor=executor,
            progress=progress, log=progress.echo,
        )  # fmt: skip
    return artifacts.open(result.key), strategy


@strategy_app.command("lbr")
def strategy_lbr(
    key: Annotated[str, typer.Argument(help="cfr artifact key (a unique prefix will do).")],
    deals: Annotated[
        int, typer.Option("--deals", help="Deals, each played from both seats.")
    ] = 2000,
    seed: Annotated[int, typer.Option("--seed")] = 0,
    store: StoreOpt = Path("store"),
) -> None:
    """Local best response against a strategy (stage `lbr`, stored): a lower bound of its
    exploitability, in mbb/g."""
    if deals < 2:
        _fail("--deals must be at least 2")
    try:
        result, strategy = _strategy_stage(
            "lbr", key, {"deals": deals, "seed": seed}, store, "local"
        )
    except _user_errors() + (ValueError,) as exc:
        _fail(str(exc))
    summary = result.meta["summary"]
    console.print(
        f"{strategy.key}: LBR wins {summary['lbr_mbb_per_game']:.1f} ± "
        f"{summary['half_width_95_mbb_per_game']:.1f} mbb/g (95%, {deals:,} deals x 2 seats): the "
        f"exploitability is at least about this [{result.key}: gameforge stage lbr on "
        f"{strategy.key}, deals={deals}, seed={seed}]",
        highlight=False,
        markup=False,
        soft_wrap=True,
    )


@strategy_app.command("br")
def strategy_br(
    key: Annotated[str, typer.Argument(help="cfr artifact key (a unique prefix will do).")],
    store: StoreOpt = Path("store"),
    dask_address: DaskOpt = None,
) -> None:
    """Exact best response in the real game (stage `best-response`, stored, resumable): the
    strategy's exploitability in mbb/g."""
    try:
        result, strategy = _strategy_stage("best-response", key, {}, store, dask_address)
    except _user_errors() + (ValueError,) as exc:
        _fail(str(exc))
    summary = result.meta["summary"]
    seats = summary["values_mbb_per_game"]
    console.print(
        f"{strategy.key}: exploitability {summary['exploitability_mbb_per_game']:.3f} mbb/g "
        f"(best response as seat 0: {seats[0]:.3f}, as seat 1: {seats[1]:.3f}; exact, "
        f"{summary['canonical_boards']:,} canonical boards) [{result.key}: gameforge stage "
        f"best-response on {strategy.key}]",
        highlight=False,
        markup=False,
        soft_wrap=True,
    )


@game_app.command("list")
def game_list() -> None:
    """List the shipped game definitions."""
    from gameforge.engines.poker.shipped_games import shipped_games

    for name in shipped_games():
        console.print(name)


@game_app.command("info")
def game_info(
    game: Annotated[str, typer.Argument(help="A shipped game name or a path to a .game file.")],
    as_json: Annotated[bool, typer.Option("--json", help="JSON on stdout.")] = False,
) -> None:
    """Rounds of a game and, per round, the number of canonical (suit-isomorphic) hands."""
    from gameforge.engines.poker.acpc import GameDefError
    from gameforge.engines.poker.isomorphism import count_classes
    from gameforge.engines.poker.shipped_games import load_game

    try:
        definition = load_game(game)
    except GameDefError as exc:
        _fail(str(exc))
    groups = definition.card_groups()
    classes = count_classes(groups, definition.num_ranks, definition.num_suits)
    rounds = []
    for r in range(definition.num_rounds):
        rounds.append(
            {
                "round": r,
                "board_cards_dealt": definition.num_board_cards[r],
                "board_cards_seen": definition.board_cards_through(r),
                "raw_hands": definition.raw_hands(r),
                "canonical_hands": int(classes[definition.group_of_round(r)]),
            }
        )
    info = {
        "name": definition.name,
        "betting": definition.betting_type,
        "players": definition.num_players,
        "ranks": definition.num_ranks,
        "suits": definition.num_suits,
        "hole_cards": definition.num_hole_cards,
        "blinds": list(definition.blind),
        "raise_sizes": list(definition.raise_size) if definition.betting_type == "limit" else [],
        "max_raises": list(definition.max_raises),
        "stacks": list(definition.stack),
        "rounds": rounds,
    }
    if as_json:
        sys.stdout.write(json.dumps(info, indent=2) + "\n")
        return
    console.print(
        f"[bold]{definition.name}[/]: {definition.betting_type}, {definition.num_players} players, "
        f"{definition.deck_size} cards ({definition.num_ranks} ranks x {definition.num_suits} "
        f"suits), {definition.num_hole_cards} hole cards, blinds {list(definition.blind)}",
        highlight=False,
    )
    table = Table()
    for column in ("round", "board dealt", "board seen", "raw hands", "canonical hands"):
        table.add_column(column, justify="right")
    for row in rounds:
        table.add_row(
            str(row["round"]),
            str(row["board_cards_dealt"]),
            str(row["board_cards_seen"]),
            f"{row['raw_hands']:,}",
            f"{row['canonical_hands']:,}",
        )
    console.print(table)
    if definition.num_hole_cards in (1, 2) and definition.board_cards_through(
        definition.num_rounds - 1
    ):
        hole, board = definition.num_hole_cards, sum(definition.num_board_cards)
        unordered = count_classes((hole, board), definition.num_ranks, definition.num_suits)[-1]
        console.print(f"last round with the board unordered (river-hs layout): {unordered:,}")


@server_app.command("start")
def server_start(port: Annotated[int, typer.Option(help="Port on 127.0.0.1.")] = 4200) -> None:
    """Start a local Prefect server (UI and API on 127.0.0.1) that later runs use."""
    from gameforge.flows import server

    with console.status("starting prefect server..."):
        try:
            state = server.start(port)
        except RuntimeError as exc:
            _fail(str(exc))
    console.print(
        f"prefect server up: pid {state['pid']}, UI {state['ui']}, API {state['api_url']}"
    )


@server_app.command("stop")
def server_stop() -> None:
    """Stop the local Prefect server."""
    from gameforge.flows import server

    console.print("stopped" if server.stop() else "no server running")


@server_app.command("status")
def server_status() -> None:
    """Whether the local Prefect server is up (runs use it when it is)."""
    from gameforge.flows import server

    state = server.status()
    if not state:
        console.print("down: runs use Prefect's temporary local API (slower start)")
        return
    health = "healthy" if state["healthy"] else "not answering"
    console.print(f"up ({health}): pid {state['pid']}, UI {state['ui']}, API {state['api_url']}")


def main() -> None:
    """Entry point of the `gameforge` script."""
    app()


if __name__ == "__main__":
    main()
