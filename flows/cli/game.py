"""`gameforge game ...`: the shipped game definitions, and a game's sizes (computed by
`engines.poker.game_info`; printed here)."""

from __future__ import annotations

import json
import sys
from typing import Annotated, Any

import typer
from rich import box
from rich.table import Table

from gameforge.flows.cli.common import console, fail, say

game_app = typer.Typer(no_args_is_help=True, help="Poker game definitions.")


@game_app.command("list")
def game_list(
    as_json: Annotated[bool, typer.Option("--json", help="JSON array on stdout.")] = False,
) -> None:
    """List the shipped game definitions."""
    from gameforge.engines.poker.shipped_games import shipped_games

    names = list(shipped_games())
    if as_json:
        sys.stdout.write(json.dumps(names, indent=2) + "\n")
        return
    for name in names:
        say(name)


def _print_columns(rows: list[dict[str, Any]], columns: dict[str, str]) -> None:
    """A right-aligned table of integer fields, one row per dict, thousands separated."""
    # no vertical rules: 80 columns hold the widest counts whole
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False)
    for column in columns:  # a header on two lines, so that the counts set the widths
        table.add_column(column.replace(" ", "\n", 1), justify="right")
    for row in rows:
        table.add_row(*(f"{row[field]:,}" for field in columns.values()))
    console.print(table)


@game_app.command("info")
def game_info(
    game: Annotated[str, typer.Argument(help="A shipped game name or a path to a .game file.")],
    as_json: Annotated[bool, typer.Option("--json", help="JSON on stdout.")] = False,
    buckets: Annotated[
        str | None,
        typer.Option(
            "--buckets",
            help="Buckets per round of an abstraction (e.g. 169,9000,9000,9000): also show its "
            "information sets.",
        ),
    ] = None,
) -> None:
    """Rounds of a game: canonical (suit-isomorphic) hands, betting-tree size, information sets."""
    from gameforge.engines.poker.acpc import GameDefError
    from gameforge.engines.poker.cards import TOP
    from gameforge.engines.poker.game_info import game_info as compute_info
    from gameforge.engines.poker.game_info import unordered_last_round
    from gameforge.engines.poker.shipped_games import load_game

    try:
        definition = load_game(game)
    except GameDefError as exc:
        fail(str(exc))
    per_round: list[int] | None = None
    if buckets is not None:
        try:
            per_round = [int(b) for b in buckets.split(",")]
        except ValueError:
            fail(f"--buckets {buckets!r}: expected comma-separated integers, e.g. 169,9000")
        if len(per_round) != definition.num_rounds or min(per_round) < 1:
            fail(
                f"--buckets needs one positive count per round ({definition.num_rounds} rounds), "
                f"got {buckets!r}"
            )
    info = compute_info(definition, per_round)
    rounds, tree = info["rounds"], info["betting_tree"]
    if as_json:
        sys.stdout.write(json.dumps(info, indent=2) + "\n")
        return
    console.print(
        f"[bold]{definition.name}[/]: {definition.betting_type}, {definition.num_players} players, "
        f"{definition.deck_size} cards ({definition.num_ranks} ranks x {definition.num_suits} "
        f"suits), {definition.num_hole_cards} hole cards, blinds {list(definition.blind)}",
        highlight=False,
    )
    cards = f"cards: {definition.deck_text()}"
    if definition.deck_text(TOP) != definition.deck_text():
        cards += f" (named {definition.deck_text(TOP)} by ACPC dealers dealing the top ones)"
    console.print(cards, highlight=False, markup=False)
    cards_columns = {
        "round": "round",
        "board dealt": "board_cards_dealt",
        "board seen": "board_cards_seen",
        "raw hands": "raw_hands",
        "canonical hands": "canonical_hands",
    }
    _print_columns(rounds, cards_columns)
    if tree is not None:
        tree_columns = {
            "round": "round",
            "decisions": "decisions",
            "folds": "folds",
            "infosets (raw)": "infosets_raw",
            "infosets (lossless)": "infosets_lossless",
        }
        if per_round is not None:
            tree_columns["infosets (buckets)"] = "infosets_abstract"
        _print_columns(rounds, tree_columns)
        limit = tree["node_limit"]
        verdict = (
            f"within gameforge's limit of {limit:,}"
            if tree["within_limit"]
            else f"over gameforge's limit of {limit:,}: stages that build it refuse it"
        )
        say(
            f"betting tree: {tree['nodes']:,} nodes ({tree['decisions']:,} decisions, "
            f"{tree['terminals']:,} terminals), {verdict}; {tree['infosets_raw']:,} information "
            "sets (decisions x the round's raw hands; lossless: canonical hands)"
        )
    else:
        say("betting tree: not built (gameforge's trees are for two-player limit games)")
    unordered = unordered_last_round(definition)
    if unordered is not None:
        console.print(f"last round with the board unordered (river-hs layout): {unordered:,}")
