"""AIVAT against the plain winnings (issue 62 item 4): standard deviation per hand and the hands a
±50 mbb/g 95% interval needs, by game and opponent.

    .venv/bin/python bench/aivat.py --game leduc --opponent example --hands 20000
    .venv/bin/python bench/aivat.py --game holdem --opponent cfr --hands 2000
    .venv/bin/python bench/aivat.py --table          # the markdown table of every saved run

Games: `leduc` (lossless), `holdem8` (the 8-rank short deck, holdem8.limit.2p.reverse_blinds),
`holdem` (full heads-up limit hold'em), `nolimit` (holdem.nolimit.2p.reverse_blinds, the league's
engine). The known agent of a limit game is a CFR strategy: Leduc solved without abstraction
(chance-sampled MCCFR, 200,000 iterations); the hold'em decks solved on a hand-strength
abstraction built here in seconds (preflop lossless; flop, turn and river: 16 equal-mass buckets of
the hand's strength against every opponent hole on the board so far, by the river-hs kernel on
(hole, unordered board) classes; 300,000 MCCFR iterations). Opponents: `example`, the ACPC example
player (fold 0.06, call 0.47, raise 0.47, whatever its cards; gameforge's stand-in for the
dealer's random player), and `cfr`, a second CFR strategy (Leduc: 3,000 iterations; hold'em: 8
buckets a round, 100,000 iterations). No-limit: the league's random player is the known agent,
against the heuristic (`heuristic`) or another random player (`random`), hands played by the
no-limit engine.

Hands are dealt and played here (half with the known agent in each seat); the baselines are fitted
on separate hands (`--fit-hands`, other seeds). Rows per run:

- `plain`: the known agent's chips.
- `made hand`: `MadeHandValues` (strategy-free; hold'em only).
- `AIVAT, ref self`: `RoundValues` with the known strategy itself as the reference opponent (uses
  nothing of the opponent).
- `AIVAT, ref opponent`: the same with the opponent's strategy as the reference (for the example
  player: its published strategy; for `cfr`: the true opponent).
- `+ imaginary`: the paper's imaginary observations (Leduc: a walk per hole the known agent
  could have held; hold'em decks with `--holes K`: K holes drawn in proportion to the agent's
  reach, unbiased too).
- `both known`: the opponent's decisions corrected too (`aivat(..., other=...)`): unbiased only
  because the opponent really plays its published strategy; not the issue's setting, shown for
  what knowing the opponent would add.
- No-limit: `FittedValues` (a + b * equity per state, fitted on hands against the reference).

Each run saves bench/out/aivat/<game>-<opponent>.json; `--table` prints them all.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import numpy as np

from gameforge.engines.poker.aivat import (
    AgentPolicy,
    ExamplePolicy,
    Hand,
    Imaginary,
    MadeHandValues,
    Policy,
    aivat,
    betting_of,
    interval,
    sample_hands,
)
from gameforge.engines.poker.aivat_values import Equity, FittedValues, RoundValues
from gameforge.engines.poker.hs_abstraction import strength_abstraction, strength_counts
from gameforge.engines.poker.match import Agent
from gameforge.engines.poker.mccfr import DealTables, SampledSolver
from gameforge.engines.poker.shipped_games import load_game

OUT = Path(__file__).parent / "out" / "aivat"
GAMES = {
    "leduc": "leduc.limit.2p",
    "holdem8": "holdem8.limit.2p.reverse_blinds",
    "holdem": "holdem.limit.2p.reverse_blinds",
    "nolimit": "holdem.nolimit.2p.reverse_blinds",
}
KNOWN = {"buckets": 16, "iterations": 300_000, "seed": 1}
OPPONENT = {"buckets": 8, "iterations": 100_000, "seed": 2}
LEDUC = {"known": 200_000, "opponent": 3_000}
TARGET_MBB = 50.0


# ------------------------------------------------------------------------------- agents


def cached_counts(game: Any, board: int) -> np.ndarray:
    """`strength_counts`, cached under bench/out/aivat."""
    path = OUT / f"{game.name}-hs-board{board}.npy"
    if not path.exists():
        OUT.mkdir(parents=True, exist_ok=True)
        np.save(path, strength_counts(game, board))
    return np.load(path)


def strength_tables(game: Any, k: int) -> DealTables:
    """The hand-strength abstraction with k buckets a round after the preflop."""
    return strength_abstraction(game, k, cached_counts)


def cfr_agent(game: Any, tables: DealTables | None, iterations: int, seed: int) -> Agent:
    """Chance-sampled MCCFR's average strategy (linear averaging), cached by its parameters."""
    tag = "lossless" if tables is None else f"b{int(tables.num_buckets[-1])}"
    path = OUT / f"{game.name}-{tag}-cfr{iterations}-s{seed}.npy"
    solver = SampledSolver(game, tables, variant="chance", gamma=1.0, seed=seed)
    if path.exists():
        strategy = np.load(path)
    else:
        solver.iterate(iterations)
        strategy = solver.average_strategy()
        OUT.mkdir(parents=True, exist_ok=True)
        np.save(path, strategy)
    layout = solver.layout
    return Agent("strategy", strategy=strategy, offsets=layout.offsets, ndec=layout.ndec,
                 tables=tables)  # fmt: skip


def limit_agents(name: str, game: Any) -> tuple[Agent, Agent]:
    """(known, CFR opponent) of a limit game."""
    if name == "leduc":
        return (
            cfr_agent(game, None, LEDUC["known"], KNOWN["seed"]),
            cfr_agent(game, None, LEDUC["opponent"], OPPONENT["seed"]),
        )
    known = cfr_agent(
        game, strength_tables(game, KNOWN["buckets"]), KNOWN["iterations"], KNOWN["seed"]
    )
    opponent = cfr_agent(
        game, strength_tables(game, OPPONENT["buckets"]), OPPONENT["iterations"],
        OPPONENT["seed"],
    )  # fmt: skip
    return known, opponent


# ------------------------------------------------------------------------------- measuring


def seated(known: Policy, other: Policy, seat: int) -> tuple[Policy, Policy]:
    """The two policies by seat, the known one in `seat`."""
    return (known, other) if seat == 0 else (other, known)


def summary(values: np.ndarray, bb: float) -> dict[str, float]:
    """sd per hand (mbb/g), mean and 95% half-width, and hands for a ±50 mbb/g interval."""
    scale = 1000.0 / bb
    mean, half = interval(values * scale)
    sd = float(values.std(ddof=1) * scale)
    return {"sd": sd, "mean": mean, "half": half, "hands_50": (1.96 * sd / TARGET_MBB) ** 2}


def score_rows(
    b: Any,
    played: list[tuple[Hand, int]],
    known: Policy,
    models: list,
    bb: float,
    log: Any,
    save: Path | None = None,
) -> list[dict]:
    """Every baseline on every (hand, seat) (they share a hand's equities): the plain row, then
    one per baseline with its paired difference from plain, how much narrower (with a bootstrap
    interval) and its milliseconds a hand; the per-hand values saved to `save` (.npz)."""
    corrected = np.zeros((len(models), len(played)))
    plain = np.zeros(len(played))
    seconds = np.zeros(len(models))
    for i, (hand, seat) in enumerate(played):
        for m, (_, model, extra) in enumerate(models):
            t0 = time.perf_counter()
            est = aivat(b, [hand], seat, known, model, **extra)
            seconds[m] += time.perf_counter() - t0
            corrected[m, i] = est.corrected[0]
            plain[i] = est.plain[0]
        if (i + 1) % max(1, len(played) // 10) == 0:
            log(f"{i + 1:,} hands")
    rows = [{"baseline": "plain", **summary(plain, bb), "ms": 0.0}]
    for m, (label, _, _) in enumerate(models):
        diff = summary(plain - corrected[m], bb)
        rows.append({
            "baseline": label, **summary(corrected[m], bb),
            "diff": diff["mean"], "diff_half": diff["half"],
            "ms": 1000 * seconds[m] / len(played),
            "narrower_ci": narrower_interval(plain, corrected[m]),
        })  # fmt: skip
    labels = [label for label, _, _ in models]
    if "both known" in labels and "AIVAT, ref opponent" in labels:
        # what correcting the opponent's decisions removes: luck AIVAT cannot touch without its
        # strategy (with these values and no imaginary observations, whose ratio it bounds: the
        # terms are uncorrelated)
        ref_opp, both = labels.index("AIVAT, ref opponent"), labels.index("both known")
        left = corrected[ref_opp] - corrected[both]
        rows.append({"baseline": "opponent's decisions alone", **summary(left, bb), "ms": 0.0})
    if save is not None:
        np.savez_compressed(save, plain=plain, corrected=corrected, labels=np.array(labels))
    return rows


def narrower_interval(plain: np.ndarray, corrected: np.ndarray, draws: int = 2000) -> list[float]:
    """95% bootstrap interval (over hands) of how many times narrower `corrected`'s interval
    is than `plain`'s on the same hands: the ratio of their standard deviations."""
    rng = np.random.default_rng(0)
    picks = rng.integers(0, len(plain), size=(draws, len(plain)))
    ratios = plain[picks].std(axis=1, ddof=1) / corrected[picks].std(axis=1, ddof=1)
    return [float(x) for x in np.percentile(ratios, [2.5, 97.5])]


def measure_limit(
    name: str, opponent: str, hands: int, fit_hands: int, log: Any, holes: int = 0
) -> dict:
    """Every baseline on the same hands of one limit game and opponent."""
    game = load_game(GAMES[name])
    b = betting_of(game)
    known_agent, opp_agent = limit_agents(name, game)
    log("agents ready")
    known = AgentPolicy(b, known_agent)
    opp: Policy = ExamplePolicy(b) if opponent == "example" else AgentPolicy(b, opp_agent)
    equity = Equity(game)
    ref_self = RoundValues(b, known, known, equity)
    ref_opp = RoundValues(b, known, opp, equity)
    if name != "leduc":  # Leduc's values are exact throughout: nothing to fit
        for seat in (0, 1):
            ref_self.fit(sample_hands(b, seated(known, known, seat), fit_hands // 2, 100 + seat),
                         seat)  # fmt: skip
            ref_opp.fit(sample_hands(b, seated(known, opp, seat), fit_hands // 2, 200 + seat),
                        seat)  # fmt: skip
        log(f"baselines fitted on {fit_hands:,} hands each")
    models: list[tuple[str, Any, dict]] = []
    if name != "leduc":
        models.append(("made hand", MadeHandValues(b), {}))
    models += [("AIVAT, ref self", ref_self, {}), ("AIVAT, ref opponent", ref_opp, {})]
    if name == "leduc":
        models += [
            ("AIVAT, ref self + imaginary", ref_self, {"imaginary": True}),
            ("AIVAT, ref opponent + imaginary", ref_opp, {"imaginary": True}),
        ]
    elif holes:  # every hole is a walk each: a sample of them drawn by the agent's reach
        drawn = {"imaginary": Imaginary(holes)}
        models += [
            (f"AIVAT, ref self + imaginary ({holes} holes)", ref_self, drawn),
            (f"AIVAT, ref opponent + imaginary ({holes} holes)", ref_opp, drawn),
        ]
    models.append(("both known", ref_opp, {"other": opp}))
    played: list[tuple[Hand, int]] = []
    for seat in (0, 1):
        played += [(h, seat) for h in sample_hands(b, seated(known, opp, seat), hands // 2, seat)]
    tag = f"{name}-{opponent}" + (f"-holes{holes}" if holes and name != "leduc" else "")
    save = OUT / f"{tag}-hands.npz"
    rows = score_rows(b, played, known, models, float(max(game.blind)), log, save)
    return {"game": GAMES[name], "known": "cfr", "opponent": opponent, "hands": len(played),
            "fit_hands": fit_hands if name != "leduc" else 0, "rows": rows}  # fmt: skip


def measure_nolimit(opponent: str, hands: int, fit_hands: int, log: Any) -> dict:
    """The no-limit league's random player (known) against the heuristic or random player."""
    from gameforge.engines.nlhe.aivat import hands_of, policy_of
    from gameforge.engines.nlhe.game import HEURISTIC, RANDOM, Deals, play, rules_of

    game = load_game(GAMES["nolimit"])
    rules = rules_of(game)
    b = betting_of(game)
    other_kind = HEURISTIC if opponent == "heuristic" else RANDOM
    known = policy_of(RANDOM, b, rules)
    opp = policy_of(other_kind, b, rules)
    assert known is not None and opp is not None

    def deal(n: int, seed: int) -> tuple[list[Hand], list[int]]:
        rec = play(rules, (RANDOM, other_kind), Deals(max(1, n // 2), seed))
        return hands_of(rec, game.num_hole_cards), [int(s) for s in np.where(
            rec.seat_player[:, 0] == 0, 0, 1)]  # fmt: skip

    equity = Equity(game)
    fits = {}
    for label, reference_kind in (("self", RANDOM), ("opponent", other_kind)):
        model = FittedValues(b, equity)
        rec = play(rules, (RANDOM, reference_kind), Deals(max(1, fit_hands // 2), 100))
        fit_seats = np.where(rec.seat_player[:, 0] == 0, 0, 1)
        model.fit(hands_of(rec, game.num_hole_cards), [int(s) for s in fit_seats])
        fits[label] = model
    log(f"baselines fitted on {fit_hands:,} hands each")
    played, seats = deal(hands, 1)
    models = [("made hand", MadeHandValues(b), {}),
              ("AIVAT, ref self", fits["self"], {}),
              ("AIVAT, ref opponent", fits["opponent"], {}),
              ("both known", fits["opponent"], {"other": opp})]  # fmt: skip
    rows = score_rows(b, list(zip(played, seats)), known, models, float(rules.big_blind), log)
    return {"game": GAMES["nolimit"], "known": "random", "opponent": opponent,
            "hands": len(played), "fit_hands": fit_hands, "rows": rows}  # fmt: skip


# ------------------------------------------------------------------------------- report


def narrower_text(plain_sd: float, row: dict) -> str:
    """How many times narrower a row's interval is than the plain one, with its bootstrap 95%
    interval where measured."""
    text = f"{plain_sd / row['sd']:.2f}x"
    if "narrower_ci" in row:
        low, high = row["narrower_ci"]
        text += f" ({low:.2f}-{high:.2f})"
    return text


def table(results: list[dict]) -> str:
    """One markdown row per (game, opponent, baseline)."""
    head = (
        "| game | known vs opponent | hands | estimate | sd (mbb/g per hand) | narrower | "
        "hands for ±50 mbb/g | mean ± 95% (mbb/g) | plain − AIVAT ± 95% | ms/hand |\n"
        "|---|---|---:|---|---:|---:|---:|---:|---:|---:|"
    )
    lines = [head]
    for res in results:
        if "duplicate" in res:
            continue
        plain_sd = res["rows"][0]["sd"]
        for row in res["rows"]:
            diff = (
                f"{row['diff']:+.0f} ± {row['diff_half']:.0f}" if "diff" in row else ""
            )  # fmt: skip
            lines.append(
                f"| {res['game']} | {res['known']} vs {res['opponent']} | {res['hands']:,} | "
                f"{row['baseline']} | {row['sd']:,.0f} | {narrower_text(plain_sd, row)} | "
                f"{row['hands_50']:,.0f} | {row['mean']:+,.0f} ± {row['half']:,.0f} | {diff} | "
                f"{row['ms']:.1f} |"
            )
    league = [res for res in results if "duplicate" in res]
    if league:
        lines += ["", "| league pairing | hands | estimate | mean ± 95% (mbb/g) | narrower |",
                  "|---|---:|---|---:|---:|"]  # fmt: skip
    for res in league:
        first = res["duplicate"][0]
        plain = f"{first['plain_mean']:+,.0f} ± {first['plain_half']:,.0f}"
        lines.append(f"| random vs heuristic | {res['hands']:,} | duplicate | {plain} | 1.00x |")
        for row in res["duplicate"]:
            lines.append(
                f"| random vs heuristic | {res['hands']:,} | {row['baseline']} | "
                f"{row['mean']:+,.0f} ± {row['half']:,.0f} | "
                f"{row['plain_half'] / row['half']:.2f}x |"
            )
    return "\n".join(lines)


def main() -> None:
    """Measure one game and opponent, or print the table of every saved run."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", choices=sorted(GAMES), default="leduc")
    parser.add_argument(
        "--opponent",
        default="example",
        help="example or cfr (limit); heuristic or random (nolimit)",
    )
    parser.add_argument("--hands", type=int, default=2000, help="hands evaluated")
    parser.add_argument("--fit-hands", type=int, default=4000, help="hands each fit sees")
    parser.add_argument(
        "--holes",
        type=int,
        default=0,
        help="hold'em decks: imaginary observations over this many holes drawn by the agent's "
        "reach (0: none; Leduc walks every hole)",
    )
    parser.add_argument("--table", action="store_true", help="print the saved runs' table")
    args = parser.parse_args()
    if args.table:
        results = [json.loads(p.read_text()) for p in sorted(OUT.glob("*.json"))]
        print(table(results))
        return
    t0 = time.perf_counter()

    def log(message: str) -> None:
        print(f"{time.perf_counter() - t0:7.1f} s  {message}", flush=True)

    if args.game == "nolimit":
        result = measure_nolimit(args.opponent, args.hands, args.fit_hands, log)
    else:
        result = measure_limit(
            args.game, args.opponent, args.hands, args.fit_hands, log, args.holes
        )
    result["seconds"] = round(time.perf_counter() - t0, 1)
    OUT.mkdir(parents=True, exist_ok=True)
    tag = f"{args.game}-{args.opponent}" + (f"-holes{args.holes}" if args.holes else "")
    (OUT / f"{tag}.json").write_text(json.dumps(result, indent=1))
    print(table([result]))


if __name__ == "__main__":
    main()
