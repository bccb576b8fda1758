"""Poker in one line each: hand strength, HSD, buckets, a solved strategy's play, evaluation.

Cards are written as the ACPC dealer writes them (`AsKd`, Leduc's `4c`); a game is a shipped
game's name (`gameforge game list`) or a `.game` file, full Limit Hold'em unless given.
Hand strength and HSD come from the engines alone, no store; the rest reads stored
artifacts through the stages' own lookups (`stages.poker.strategy`, `stages.poker.abstraction`)
and evaluates with the match engine, the `league`, `best-response` and `lbr` stages.

>>> import gameforge as gf
>>> round(gf.hand_strength("AsKd", "4d5d9dKhQc"), 4)
0.8505
>>> histogram = gf.hsd("Jc9h", "4d5d9d")                # the paper's hand: 50 bins of river HS
>>> int(histogram.sum()), int(histogram.argmax())       # 1,081 ways to deal turn and river
(1081, 34)

A solved strategy, queried by hand, board and betting, or by an ACPC MATCHSTATE line:

>>> leduc = gf.run("solve-lossless", preset="small")
>>> strategy = gf.strategy(leduc["cfr"])
>>> odds = strategy.probabilities("4c", "3d", "rc/r")      # f(old), c(all), r(aise)
>>> {action: round(p, 2) for action, p in odds.items()}
{'f': 0.7, 'c': 0.3, 'r': 0.0}
>>> strategy.matchstate("MATCHSTATE:1:7:rc/r:|4c/3d") == odds
True
>>> strategy.bucket("4c", "3d")                             # lossless: the canonical hand
11

Evaluation: a match against a built-in player (call, raise, uniform) or another strategy, a
league (stage `league`), and the exploitability (exact where it fits the time budget):

>>> gf.play(strategy, "call", hands=2000)
cfr-c8ba3d413160 vs call: +... ± ... mbb/g over 4,000 hands (95% interval)
>>> measured = gf.exploitability(strategy)
>>> measured.method, round(measured.mbb_per_game, 3), measured.artifact.stage
('exact', 0.255, 'best-response')
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from gameforge._store import Artifact, Store, StoreLike, as_store

if TYPE_CHECKING:
    from gameforge.engines.poker.acpc import GameDef
    from gameforge.engines.poker.match import Agent
    from gameforge.stages.poker.abstraction import CardAbstraction
    from gameforge.stages.poker.strategy import Decision, StrategyView

HOLDEM = "holdem.limit.2p.reverse_blinds"
BUILT_IN_PLAYERS = ("call", "raise", "uniform")  # the match engine's card-blind kinds


def poker_game(game: str | GameDef = HOLDEM) -> GameDef:
    """A poker game: a shipped game's name, a `.game` file, or a GameDef as it is."""
    from gameforge.engines.poker.shipped_games import load_game

    return load_game(game) if isinstance(game, str) else game


def _cards(game: GameDef, hand: str, board: str) -> tuple[list[int], list[int]]:
    """Hole cards and board of a hand in `game`'s deck, checked."""
    hole, seen = game.parse_cards(hand), game.parse_cards(board) if board else []
    if len(hole) != game.num_hole_cards:
        name = game.name or "the game"
        raise ValueError(f"{hand!r}: {name} deals {game.num_hole_cards} hole cards")
    if len(set(hole + seen)) != len(hole) + len(seen):
        raise ValueError(f"a card appears twice in {hand!r} and {board!r}")
    if len(seen) > sum(game.num_board_cards):
        raise ValueError(f"{board!r}: {game.name or 'the game'} shows at most "
                         f"{sum(game.num_board_cards)} board cards")  # fmt: skip
    return hole, seen


def _strength_counts(game: GameDef, hole: list[int], boards: np.ndarray) -> np.ndarray:
    """2 * wins + ties of `hole` on each board (the `river-hs` kernel over every hole pair)."""
    from gameforge.engines.poker.evaluator import get_tables
    from gameforge.engines.poker.hand_strength import board_hs_counts, hands_on_boards

    n_hole = game.num_hole_cards
    tables = get_tables(game.num_ranks, game.num_suits, n_hole + boards.shape[1])
    counts = board_hs_counts(boards, game.deck_size, n_hole, tables)
    rows = hands_on_boards(boards, game.deck_size, n_hole)[:, :n_hole]
    mine = (np.sort(rows, axis=1) == sorted(hole)).all(axis=1).reshape(counts.shape)
    return counts[mine]


def hand_strength(hand: str, board: str, game: str | GameDef = HOLDEM) -> float:
    """The share of opponent hands `hand` beats on `board` now, ties counting half."""
    from gameforge.engines.poker.hand_strength import opponent_hands

    g = poker_game(game)
    hole, seen = _cards(g, hand, board)
    count = _strength_counts(g, hole, np.array([seen], dtype=np.int8))[0]
    return float(count) / (2 * opponent_hands(g.deck_size, len(seen), g.num_hole_cards))


def hsd(hand: str, board: str = "", game: str | GameDef = HOLDEM, bins: int = 50) -> np.ndarray:
    """The hand's HSD: board completions by river hand strength, in `bins` bins (stage `hsd`)."""
    from gameforge.engines.poker.hand_strength import opponent_hands
    from gameforge.engines.poker.hsd import completions

    g = poker_game(game)
    hole, seen = _cards(g, hand, board)
    full = sum(g.num_board_cards)
    if len(seen) == full:
        raise ValueError("the board is complete: its hand strength is gf.hand_strength")
    rest = np.array([c for c in range(g.deck_size) if c not in hole + seen], dtype=np.int8)
    ways = completions(len(rest), full - len(seen))
    denominator = 2 * opponent_hands(g.deck_size, full, g.num_hole_cards)
    histogram = np.zeros(bins, dtype=np.int64)
    for start in range(0, len(ways), 4096):
        part = rest[ways[start : start + 4096]]
        boards = np.hstack([np.tile(np.array(seen, np.int8), (len(part), 1)), part])
        counts = _strength_counts(g, hole, boards.astype(np.int8)).astype(np.int64)
        histogram += np.bincount(np.minimum(counts * bins // denominator, bins - 1), minlength=bins)
    return histogram


def round_of_board(game: GameDef, cards_on_board: int) -> int:
    """The betting round whose board shows this many cards."""
    for r in range(game.num_rounds):
        if game.board_cards_through(r) == cards_on_board:
            return r
    raise ValueError(f"no round of {game.name or 'the game'} shows {cards_on_board} board cards")


def abstraction(buckets: Any, river: Artifact | None = None) -> CardAbstraction:
    """A card abstraction: a solved strategy's, or an (hsd-buckets, ochs-buckets) pair's."""
    from gameforge.stages.base import StageError
    from gameforge.stages.poker.abstraction import CardAbstraction

    if isinstance(buckets, Strategy):
        found = buckets.view.abstraction
    elif isinstance(buckets, Artifact) and buckets.stage == "cfr":
        found = Strategy(buckets).view.abstraction
    elif river is not None:
        return CardAbstraction(buckets.stored, river.stored)
    else:
        middle, last = buckets
        return CardAbstraction(middle.stored, last.stored)
    if found is None:
        raise StageError(f"{buckets!r} was solved without a card abstraction")
    return found


def bucket(hand: str, board: str, buckets: Any) -> int:
    """The hand's bucket in a strategy's abstraction or an (hsd-buckets, ochs-buckets) pair's."""
    if isinstance(buckets, Strategy | Artifact) and (
        not isinstance(buckets, Artifact) or buckets.stage == "cfr"
    ):
        return strategy(buckets).bucket(hand, board)
    found = abstraction(buckets)
    hole, seen = _cards(found.game, hand, board)
    row = np.array([hole + seen], dtype=np.int8)
    return int(found.bucket(round_of_board(found.game, len(seen)), row)[0])


def strategy(solved: Strategy | Artifact | str, store: StoreLike = None) -> Strategy:
    """A solved strategy (a `cfr` artifact, or its key in `store`) to query and play."""
    if isinstance(solved, Strategy):
        return solved
    if isinstance(solved, str):
        solved = as_store(store).open(solved)
    return Strategy(solved)


class Strategy:
    """A solved strategy with the abstraction and betting tree to look it up (`strategy show`)."""

    def __init__(self, artifact: Artifact) -> None:
        from gameforge.stages.poker.strategy import StrategyView

        self.artifact = artifact
        self.store: Store = artifact.store
        self.view: StrategyView = StrategyView(artifact.store.artifacts, artifact.stored)
        self.game: GameDef = self.view.game
        self.name = artifact.key[:16]

    def __repr__(self) -> str:
        s = self.artifact.summary
        solve = f"{s.get('iterations', 0):,} {self.artifact.params.get('algorithm', '')} iterations"
        return f"<Strategy {self.artifact.key}: {self.game.name}, {solve}, {self.view.describe}>"

    def decision(self, hand: str, board: str = "", history: str = "") -> Decision:
        """Where `history` leaves the hand's owner to act: round, bucket, action probabilities."""
        return self.view.decision(hand, board, history)

    def probabilities(self, hand: str, board: str = "", history: str = "") -> dict[str, float]:
        """The average strategy's probabilities of f(old), c(all/check), r(aise/bet) there."""
        return self.decision(hand, board, history).probabilities

    def matchstate(self, line: str, card_names: str = "auto") -> dict[str, float]:
        """The probabilities where an ACPC `MATCHSTATE:pos:hand:betting:cards` line asks to act."""
        from gameforge.engines.poker.betting import DECISION
        from gameforge.flows.acpc_client import CardNames, parse_match_state

        names = CardNames(self.game, card_names, log=lambda _line: None)
        state = parse_match_state(line, self.game, names.naming_for(line))
        node = self.view.tree.node_of(state.betting)
        tree = self.view.tree
        if tree.kind[node] != DECISION or tree.player[node] != state.position:
            raise ValueError(f"{line!r}: position {state.position} is not to act there")
        shown = self.game.board_cards_through(int(tree.round[node]))
        hand = self.game.format_cards(state.hole[state.position])
        board = self.game.format_cards(state.board[:shown])
        return self.probabilities(hand, board, state.betting)

    def bucket(self, hand: str, board: str = "") -> int:
        """The hand's bucket in this strategy's abstraction (its canonical index if lossless)."""
        hole, seen = _cards(self.game, hand, board)
        return self.view.bucket(round_of_board(self.game, len(seen)), hole + seen)

    def agent(self) -> Agent:
        """This strategy as a player of the match engine."""
        return self.view.agent(self.name)


@dataclass(frozen=True)
class MatchResult:
    """A duplicate match: the first player's winnings in mbb/g with their 95% half-width."""

    players: tuple[str, str]
    mbb_per_game: float
    ci95: float
    hands: int

    @property
    def interval(self) -> tuple[float, float]:
        """The 95% interval of the winnings (mbb/g)."""
        return self.mbb_per_game - self.ci95, self.mbb_per_game + self.ci95

    def __repr__(self) -> str:
        a, b = self.players
        return (f"{a} vs {b}: {self.mbb_per_game:+.1f} ± {self.ci95:.1f} mbb/g over "
                f"{self.hands:,} hands (95% interval)")  # fmt: skip


def _player(who: Strategy | Artifact | str) -> tuple[Agent, GameDef | None]:
    from gameforge.engines.poker.match import Agent

    if isinstance(who, str):
        if who not in BUILT_IN_PLAYERS:
            raise ValueError(f"a player is a strategy or one of {', '.join(BUILT_IN_PLAYERS)}")
        return Agent(who, name=who), None
    solved = strategy(who)
    return solved.agent(), solved.game


def play(
    a: Strategy | Artifact | str,
    b: Strategy | Artifact | str,
    *,
    hands: int = 2000,
    seed: int = 0,
    game: str | GameDef | None = None,
) -> MatchResult:
    """Play `hands` duplicate deals (each from both seats) between two players; A's winnings."""
    from gameforge.engines.common.parallel import Parallel
    from gameforge.engines.poker.match import play_match, summarize

    (agent_a, game_a), (agent_b, game_b) = _player(a), _player(b)
    games = {g.name: g for g in (game_a, game_b) if g is not None}
    if len(games) > 1:
        raise ValueError(f"the players play different games: {', '.join(games)}")
    g = poker_game(game) if game is not None else next(iter(games.values()), None)
    if g is None:
        raise ValueError("two built-in players: say which game with game=")
    out = play_match(g, agent_a, agent_b, seed=seed, hands_per_set=hands, sets=2,
                     parallel=Parallel(threads=os.cpu_count() or 1))  # fmt: skip
    stats = summarize(out, float(max(g.blind)), 2)
    return MatchResult((agent_a.name, agent_b.name), stats["mbb_per_game"], stats["ci95"],
                       int(stats["hands"]))  # fmt: skip


def league(
    players: list[Strategy | Artifact],
    *,
    hands_per_set: int = 1000,
    sets: int = 2,
    matches: int = 1,
    seed: int = 0,
    verbose: bool = False,
) -> Artifact:
    """A duplicate round robin between solved strategies (stage `league`, stored, with findings)."""
    from gameforge._run import stage_on

    solved = [strategy(p) for p in players]
    params = {"game": solved[0].artifact.params["game"], "hands_per_set": hands_per_set,
              "sets": sets, "matches": matches, "seed": seed}  # fmt: skip
    inputs = {f"players.{i}": s.artifact.key for i, s in enumerate(solved)}
    return stage_on("league", params, inputs, solved[0].store, print if verbose else _quiet)


@dataclass(frozen=True)
class Exploitability:
    """A strategy's exploitability in the real game: exact (best response) or LBR's lower bound."""

    method: str  # "exact" or "lbr"
    mbb_per_game: float  # exact, or LBR's mean winnings
    lower_bound: float  # exact: the same; LBR: its one-sided 95% lower bound
    text: str
    artifact: Artifact

    def __repr__(self) -> str:
        return f"{self.text} [{self.artifact.key}]"


def best_response_seconds(solved: Strategy) -> float | None:
    """The estimated seconds of the exact best response (`--plan`'s estimate); None if unknown."""
    from gameforge.stages.registry import get_stage
    from gameforge.stages.timing import recorded_inputs, stage_seconds

    stage = get_stage("best-response")
    if stage.footprint is None:
        return None
    params = stage.make_params({"game": solved.artifact.params["game"]})
    upstream: dict[str, dict[str, Any]] = {
        "strategy": recorded_inputs(solved.store.artifacts, solved.artifact.key)
    }
    return stage_seconds(stage.name, stage.footprint(params, upstream))


def exploitability(
    solved: Strategy | Artifact,
    *,
    budget_s: float = 120.0,
    deals: int = 2000,
    seed: int = 0,
    verbose: bool = False,
) -> Exploitability:
    """Exact best response where estimated within `budget_s` (or already stored), else LBR."""
    from gameforge._run import stage_on
    from gameforge.flows.findings.poker import exploitability_findings

    s = strategy(solved)
    log = print if verbose else _quiet
    stored = [d for d in s.artifact.dependents() if d.stage == "best-response"]
    seconds = best_response_seconds(s)
    game = s.artifact.params["game"]
    if stored or (seconds is not None and seconds <= budget_s):
        inputs = {"strategy": s.artifact.key}
        found = (
            stored[-1]
            if stored
            else stage_on("best-response", {"game": game}, inputs, s.store, log)
        )
        value = float(found.summary["exploitability_mbb_per_game"])
        method, lower = "exact", value
    else:
        found = stage_on("lbr", {"game": game, "deals": deals, "seed": seed},
                         {"strategy": s.artifact.key}, s.store, log)  # fmt: skip
        value = float(found.summary["lbr_mbb_per_game"])
        method, lower = "lbr", float(found.summary["exploitability_lower_bound_mbb_per_game"])
    (finding,) = exploitability_findings(found.stage, found.stored)
    return Exploitability(method, value, lower, finding.value, found)


def _quiet(_message: str) -> None:
    pass
