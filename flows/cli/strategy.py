"""`gameforge strategy ...` (query a solved strategy, best responses against it) and `gameforge
play` (a match at an ACPC dealer with it)."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import Annotated, Any

import typer

from gameforge.flows.cli.common import (
    DaskOpt,
    RichProgress,
    StoreOpt,
    console,
    fail,
    ledger,
    say,
    user_errors,
)

strategy_app = typer.Typer(no_args_is_help=True, help="Query solved strategies (cfr artifacts).")


@strategy_app.command("show")
def strategy_show(
    key: Annotated[str, typer.Argument(help="cfr artifact key (a unique prefix will do).")],
    hand: Annotated[
        str,
        typer.Option(
            "--hand", help="Hole cards in the strategy's deck, e.g. AsKd (52 cards), 9c7h (2-9)."
        ),
    ],
    board: Annotated[
        str, typer.Option("--board", help="Board cards so far, e.g. 4d5d9d, 2d3d7d (2-9).")
    ] = "",
    history: Annotated[
        str, typer.Option("--history", help="Betting so far: f/c/r, rounds split by '/'.")
    ] = "",
    store: StoreOpt = "store",
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
    except user_errors() + (ValueError,) as exc:
        fail(str(exc))
    console.print(
        f"[bold]{view.artifact.key}[/] ({view.artifact.params['algorithm']}, "
        f"{view.artifact.meta['summary']['iterations']:,} iterations; {view.describe})",
        highlight=False,
    )
    console.print(
        f"player {decision.player} (players count from 0) holds {cards}, betting "
        f"{decision.history or '(start)'!r}: "
        f"round {decision.round}, bucket {decision.bucket}",
        highlight=False,
    )
    table = Table("action", "probability")
    for action, p in decision.probabilities.items():
        table.add_row(ACTION_NAMES[action], f"{p:.4f}")
    console.print(table)


def play_cmd(
    strategy: Annotated[str, typer.Option("--strategy", help="cfr artifact key (or prefix).")],
    port: Annotated[int, typer.Option("--port", help="Dealer port.")],
    game: Annotated[
        str | None, typer.Option("--game", help="Game name or .game path (must match).")
    ] = None,
    host: Annotated[str, typer.Option("--host", help="Dealer host.")] = "127.0.0.1",
    seed: Annotated[int, typer.Option("--seed", help="Seed of the action sampling.")] = 0,
    card_names: Annotated[
        str,
        typer.Option(
            "--card-names",
            help="How the dealer names a short deck's cards: top (the ACPC dealer's game.c: "
            "highest ranks and suits, Leduc Q-A of h, s), bottom (lowest, as gameforge names "
            "them: Leduc 2-4 of c, d) or auto (found from the dealer's cards; cards both have "
            "are read as top until then).",
        ),
    ] = "auto",
    hands: Annotated[
        int | None,
        typer.Option(
            "--hands",
            min=1,
            help="The match's length, as the dealer was started with: a dealer that stops "
            "before its last hand is then an error (the protocol never says the length).",
        ),
    ] = None,
    dealer_log: Annotated[
        str | None,
        typer.Option(
            "--dealer-log",
            help="The ACPC dealer's log of this match (its matchName.log), read after the "
            "match: it supplies the hole cards the dealer did not show (hands that ended in a "
            "fold), so that AIVAT can score every hand; it must agree with the match.",
        ),
    ] = None,
    imaginary_holes: Annotated[
        int,
        typer.Option(
            "--imaginary-holes",
            min=0,
            help="AIVAT's imaginary observations over this many holes a hand, drawn by the "
            "strategy's reach (every hole where there are no more: Leduc's); about 25 ms each "
            "on full hold'em. 0: none.",
        ),
    ] = 0,
    store: StoreOpt = "store",
) -> None:
    """Play a match at an ACPC dealer with a solved strategy (ACPC protocol 2.0.0); store its
    hand history (stage hand-history) and print the plain and AIVAT results in mbb/g."""
    from dataclasses import replace

    from gameforge.artifacts.store import ArtifactStore
    from gameforge.engines.poker.shipped_games import load_game
    from gameforge.flows.acpc_client import (
        CARD_NAME_CHOICES,
        ACPCClient,
        CardNames,
        DealerLogError,
        ProtocolError,
        strategy_chooser,
    )
    from gameforge.stages.poker.strategy import StrategyView

    if card_names not in CARD_NAME_CHOICES:
        fail(f"--card-names must be one of {', '.join(CARD_NAME_CHOICES)}, not {card_names!r}")
    try:
        artifacts = ArtifactStore(store)
        view = StrategyView(artifacts, artifacts.open(strategy))
        if game is not None and replace(load_game(game), name="") != replace(view.game, name=""):
            fail(f"strategy {view.artifact.key} was solved for {view.game.name}, not {game}")
        names = CardNames(
            view.game,
            card_names,
            log=say,
        )
        client = ACPCClient(view.game, view.tree, strategy_chooser(view, seed), names)
        played = client.play(host, port, hands=hands)
    except user_errors() + (ProtocolError, OSError) as exc:
        fail(str(exc))
    found = names.found or (
        f"not decided: every card sent is in both namings, read as {names.reading}"
    )
    record = client.hands
    if dealer_log is not None:
        try:
            record = dealer_log_hands(dealer_log, record, view.game, names.reading)
        except DealerLogError as exc:
            fail(str(exc))
    say(
        f"played {played:,} hands at {host}:{port} with {view.artifact.key} "
        f"(card names: {names.reading}, {found})"
    )
    if not record:
        return
    from gameforge.stages.poker.hand_history import estimate_text

    history = store_history(view.game, view.artifact.key, record, store, imaginary_holes)
    summary = history.meta["summary"]
    say(f"plain: {estimate_text(summary['plain'])} (95% interval, {summary['hands']:,} hands)")
    aivat = summary["aivat"]
    if aivat is None:
        say(f"AIVAT: {summary['aivat_note']}")
    else:
        narrower = f"{aivat['narrower']:.2f}x narrower" if aivat["narrower"] else "no interval"
        baseline = aivat["baseline"]
        say(f"AIVAT: {estimate_text(aivat)} (95% interval, {narrower}; baseline {baseline})")
    say(f"hand history: {history.key}")


def dealer_log_hands(path: str, hands: list[Any], game: Any, naming: str) -> list[Any]:
    """The match's hands with every hole card from the dealer's log at `path` (its cards named
    `naming`, as the match's were read); DealerLogError in one line if it is unreadable or
    disagrees."""
    from gameforge.flows.acpc_client import DealerLogError, parse_dealer_log, with_dealer_log

    try:
        text = Path(path).read_text(encoding="ascii", errors="replace")
    except OSError as exc:
        raise DealerLogError(f"cannot read the dealer log {path}: {exc.strerror or exc}") from None
    try:
        return with_dealer_log(hands, parse_dealer_log(text, game, naming), game)
    except DealerLogError as exc:
        raise DealerLogError(f"{path}: {exc}") from None


def store_history(
    game: Any, strategy: str, hands: list[Any], store: str, imaginary_holes: int = 0
) -> Any:
    """Store the match's hands (stage hand-history, from a history file that lasts only as long
    as the build: the artifact is the history's only copy) and open the artifact."""
    from gameforge.engines.poker.hand_history import history_digest, history_text

    text = history_text(game, hands)
    values: dict[str, Any] = {"hands": len(hands), "history_sha256": history_digest(text)}
    if imaginary_holes:
        values["imaginary_holes"] = imaginary_holes
    with tempfile.TemporaryDirectory(prefix="gameforge-play-") as folder:
        source = Path(folder) / "hands.txt"
        source.write_text(text, encoding="ascii")
        try:
            history, _ = _strategy_stage(
                "hand-history", strategy, {**values, "source": str(source)}, store, "local"
            )
        except user_errors() + (ValueError,) as exc:
            fail(str(exc))
    return history


def _strategy_stage(
    stage_name: str, key: str, values: dict[str, Any], store: str, dask_address: str | None
) -> tuple[Any, Any]:
    """Run (or find) a stage whose one input is a stored strategy; (its artifact, the strategy)."""
    from gameforge.artifacts.store import ArtifactStore
    from gameforge.flows.runtime import dask_executor
    from gameforge.stages.runner import run_stage

    artifacts = ArtifactStore(store)
    strategy = artifacts.open(key)
    if strategy.stage != "cfr":
        fail(f"{strategy.key} is a {strategy.stage} artifact, not a cfr strategy")
    params = {"game": strategy.params["game"], **values}
    with RichProgress() as progress, dask_executor(dask_address, log=progress.echo) as executor:
        result = run_stage(
            stage_name, params, {"strategy": strategy.key}, store=artifacts, executor=executor,
            progress=progress, log=progress.echo,
        )  # fmt: skip
    node = {"key": result.key, "cached": result.cached, "seconds": result.seconds}
    ledger(store).record_done(stage_name, {stage_name: node}, "gameforge " + " ".join(sys.argv[1:]))
    return artifacts.open(result.key), strategy


@strategy_app.command("lbr")
def strategy_lbr(
    key: Annotated[str, typer.Argument(help="cfr artifact key (a unique prefix will do).")],
    deals: Annotated[
        int, typer.Option("--deals", help="Deals, each played from both seats.")
    ] = 2000,
    seed: Annotated[int, typer.Option("--seed")] = 0,
    store: StoreOpt = "store",
) -> None:
    """Local best response against a strategy (stage `lbr`, stored): a one-sided 95% lower
    bound of its exploitability, in mbb/g (none when the bound is at or below 0)."""
    if deals < 2:
        fail("--deals must be at least 2")
    try:
        result, strategy = _strategy_stage(
            "lbr", key, {"deals": deals, "seed": seed}, store, "local"
        )
    except user_errors() + (ValueError,) as exc:
        fail(str(exc))
    from gameforge.stages.poker.lbr import lower_bound_text

    summary = result.meta["summary"]
    bound = lower_bound_text(
        summary["lbr_mbb_per_game"], summary["exploitability_lower_bound_mbb_per_game"]
    )
    say(
        f"{strategy.key}: LBR over {deals:,} deals x 2 seats: {bound} [{result.key}: gameforge "
        f"stage lbr on {strategy.key}, deals={deals}, seed={seed}]"
    )


@strategy_app.command("br")
def strategy_br(
    key: Annotated[str, typer.Argument(help="cfr artifact key (a unique prefix will do).")],
    precision: Annotated[
        str,
        typer.Option(
            "--precision",
            help="The last round's sums: float64, or float32 (about 1.9x faster, 1e-7 "
            "relative rounding).",
        ),
    ] = "float64",
    store: StoreOpt = "store",
    dask_address: DaskOpt = None,
) -> None:
    """Exact best response in the real game (stage `best-response`, stored, resumable): the
    strategy's exploitability in mbb/g."""
    try:
        result, strategy = _strategy_stage(
            "best-response", key, {"precision": precision}, store, dask_address
        )
    except user_errors() + (ValueError,) as exc:
        fail(str(exc))
    summary = result.meta["summary"]
    seats = summary["values_mbb_per_game"]
    say(
        f"{strategy.key}: exploitability {summary['exploitability_mbb_per_game']:.3f} mbb/g "
        f"(best response as seat 0: {seats[0]:.3f}, as seat 1: {seats[1]:.3f}; exact, "
        f"{summary['canonical_boards']:,} canonical boards, {precision} sums) [{result.key}: "
        f"gameforge stage best-response on {strategy.key}]"
    )
