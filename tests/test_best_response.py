"""Stage `best-response`: the streamed real-game best response equals the enumerated one,
always-fold loses exactly its blinds, a killed run resumes to the same bytes, LBR stays below."""

from __future__ import annotations

import numpy as np
import pytest
from typer.testing import CliRunner

from gameforge.artifacts import ArtifactStore
from gameforge.engines.poker.acpc import parse_game
from gameforge.engines.poker.best_response import (
    BestResponse,
    canonical_boards,
    deal_orbits,
    solve_small,
    stabiliser,
    suit_permutations,
)
from gameforge.engines.poker.betting import DECISION, FOLD
from gameforge.engines.poker.cfr import FullWalkSolver, build_cards
from gameforge.engines.poker.mccfr import deal_tables, lossless_tables
from gameforge.engines.poker.shipped_games import load_game
from gameforge.stages.poker.hsd import round_indexer
from gameforge.stages.runner import run_stage
from tests.poker_helpers import LEDUC, CrashAfter, quiet

FLOP = "holdem5.flop.limit.2p"


def _engine(
    game, solver: FullWalkSolver, strategy: np.ndarray, tables, precision: str = "float64"
) -> BestResponse:
    return BestResponse(
        game, solver.tree, strategy, solver.offsets, solver.ndec, tables.lookup,
        tables.evaluator, precision,
    )  # fmt: skip


@pytest.mark.parametrize("name", ["kuhn.limit.2p", LEDUC, FLOP])
def test_streamed_best_response_equals_the_enumerated_one_lossless(name):
    """Both seats' best-response values match the whole-tree enumeration to 1e-9, for uniform
    play and for a partly solved strategy, and the per-board shares add up to them."""
    game = load_game(name)
    solver = FullWalkSolver(game, plus=True)
    tables = lossless_tables(game)
    for strategy in (solver.sigma.copy(), None):
        if strategy is None:
            solver.iterate(7)
            strategy = solver.average_strategy()
        result = solve_small(_engine(game, solver, strategy, tables))
        expected = [solver.best_response_value(p, strategy) for p in (0, 1)]
        assert result.values == pytest.approx(expected, abs=1e-9)
        shares = result.board_contribution.sum(axis=0) + result.fold_contribution
        assert shares == pytest.approx(result.values, abs=1e-9)


def test_streamed_best_response_equals_the_enumerated_one_abstract():
    """An imperfect-recall card abstraction (random buckets of the flop): still equal."""
    game = load_game(FLOP)
    indexers = [round_indexer(game, r) for r in range(game.num_rounds)]
    flop_size = indexers[1].size(indexers[1].rounds - 1)
    table = np.random.default_rng(3).integers(0, 12, flop_size).astype(np.int32)
    tables = deal_tables(game, indexers, [None, table], [indexers[0].size(0), 12])

    def bucketer(round_: int, cards: np.ndarray) -> np.ndarray:
        ix = indexers[round_]
        index = ix.index(cards, ix.rounds - 1).astype(np.int64)
        return index if round_ == 0 else table[index].astype(np.int64)

    cards = build_cards(game, bucketer, tables.num_buckets)
    solver = FullWalkSolver(game, cards)
    solver.iterate(5)
    strategy = solver.average_strategy()
    result = solve_small(_engine(game, solver, strategy, tables))
    expected = [solver.best_response_value(p, strategy) for p in (0, 1)]
    assert result.values == pytest.approx(expected, abs=1e-9)


# Four rounds on a 12-card deck of three suits: every later round's deal is walked one orbit at a
# time under the suit permutations that fix the earlier boards (the flop-only games never do).
THREE_BOARDS = """GAMEDEF
limit
numPlayers = 2
numRounds = 4
blind = 10 5
raiseSize = 10 10 20 20
firstPlayer = 2 1 1 1
maxRaises = 1 2 1 2
numSuits = 3
numRanks = 4
numHoleCards = 2
numBoardCards = 0 1 1 1
END GAMEDEF
"""


def test_later_rounds_walked_by_suit_orbit_equal_the_enumerated_one():
    """Turn and river dealt one orbit at a time (then summed back over the permutations that fix
    the board so far): both seats equal the whole-tree enumeration to 1e-9."""
    game = parse_game(THREE_BOARDS, "three-boards")
    solver = FullWalkSolver(game, plus=True)
    solver.iterate(3)
    strategy = solver.average_strategy()
    result = solve_small(_engine(game, solver, strategy, lossless_tables(game)))
    expected = [solver.best_response_value(p, strategy) for p in (0, 1)]
    assert result.values == pytest.approx(expected, abs=1e-9)


def _fold_some_hands(solver: FullWalkSolver, strategy: np.ndarray, seed: int) -> np.ndarray:
    """The strategy with a random 40% of the buckets folding wherever fold is legal (the first
    to act folds them at once): hands without reach in some seats of the last round's entries
    and not in others."""
    out = strategy.copy()
    tree, nbk = solver.tree, solver.cards.num_buckets
    rng = np.random.default_rng(seed)
    for node in np.flatnonzero(tree.kind == DECISION):
        if tree.children[node, FOLD] < 0:
            continue
        r = int(tree.round[node])
        folding = np.flatnonzero(rng.random(int(nbk[r])) < 0.4)
        out[solver.offsets[r] + tree.slot[node] + folding * int(solver.ndec[r])] = [1.0, 0, 0]
    return out


@pytest.mark.parametrize("name", [FLOP, "three-boards"])
@pytest.mark.parametrize("precision", ["float64", "float32"])
def test_hands_without_reach_are_skipped_exactly(name, precision):
    """Hands with no reach in a seat (every lane 0) skip that seat's walk and sums; the values
    still equal the enumerated best response (1e-9, float32 within 1e-5 relative)."""
    game = parse_game(THREE_BOARDS, name) if name == "three-boards" else load_game(name)
    solver = FullWalkSolver(game, plus=True)
    solver.iterate(3)
    strategy = _fold_some_hands(solver, solver.average_strategy(), seed=5)
    result = solve_small(_engine(game, solver, strategy, lossless_tables(game), precision))
    expected = np.array([solver.best_response_value(p, strategy) for p in (0, 1)])
    tolerance = 1e-9 if precision == "float64" else 1e-5 * np.abs(expected).max()
    assert np.abs(result.values - expected).max() <= tolerance


def test_float32_sums_stay_within_their_rounding():
    """The last round's sums in float32: both seats within 1e-5 relative of the enumerated
    best response (float32 rounds at 6e-8; the sums run over a few hundred hands)."""
    game = parse_game(THREE_BOARDS, "three-boards")
    solver = FullWalkSolver(game, plus=True)
    solver.iterate(3)
    strategy = solver.average_strategy()
    tables = lossless_tables(game)
    result = solve_small(_engine(game, solver, strategy, tables, "float32"))
    expected = np.array([solver.best_response_value(p, strategy) for p in (0, 1)])
    assert np.abs(result.values - expected).max() <= 1e-5 * np.abs(expected).max()
    with pytest.raises(ValueError, match="precision"):
        _engine(game, solver, strategy, tables, "float16")


def test_precision_is_in_the_key_only_where_not_the_default():
    """Best responses stored before the precision option keep their keys."""
    from gameforge.stages.poker.best_response import BestResponseParams

    assert "precision" not in BestResponseParams(game=LEDUC).key_params()
    assert BestResponseParams(game=LEDUC, precision="float32").key_params()["precision"] == (
        "float32"
    )


def test_deal_orbits_cover_every_deal_once():
    """Hold'em turn cards under the stabiliser of each of a few flops: orbit sizes (weight x
    group size) add up to the 49 cards left, and each orbit's stabiliser has 1 / weight members."""
    game = load_game("holdem.limit.2p.reverse_blinds")
    perms = suit_permutations(4)
    every = np.arange(perms.shape[0])
    boards = canonical_boards(game, 1).cards
    for flop in boards[[0, 1, 100, 900, 1754]]:
        group = stabiliser(perms, every, flop)
        assert 24 % group.size == 0
        orbits = deal_orbits(perms, group, flop, 1, 52)
        assert sum(weight * group.size for _, weight, _ in orbits) == pytest.approx(49)
        for cards, weight, sub in orbits:
            assert sub.size * weight == pytest.approx(1.0)
            assert not set(cards.tolist()) & set(flop.tolist())
    monotone = np.array([0, 4, 8])  # 2c 3c 4c: any permutation of d, h, s fixes it
    group = stabiliser(perms, every, monotone)
    assert group.size == 6
    assert len(deal_orbits(perms, group, monotone, 1, 52)) == 10 + 13


def test_walked_boards_count_the_orbits_of_later_deals():
    """The work per canonical board (the stage's progress weights): the complete boards walked
    under each canonical flop equal the orbits of every (turn, river) deal under the suit
    permutations that fix the flop, counted by brute force."""
    game = parse_game(THREE_BOARDS, "three-boards")
    solver = FullWalkSolver(game)
    br = _engine(game, solver, solver.sigma.copy(), lossless_tables(game))
    perms, every = br.perms, np.arange(br.perms.shape[0])
    expected = []
    for board in br.boards.cards.astype(np.int64):
        group = stabiliser(perms, every, board)
        rest = [c for c in range(game.deck_size) if c not in board]
        orbits = {
            min(tuple((np.array([t, v]) // 3) * 3 + perms[g][np.array([t, v]) % 3]) for g in group)
            for t in rest
            for v in rest
            if v != t
        }
        expected.append(len(orbits))
    assert br.walked_boards().tolist() == expected


def test_canonical_boards_cover_every_board_once():
    """Suit isomorphism: Hold'em's 22,100 flops fall into the 1,755 canonical ones."""
    boards = canonical_boards(load_game("holdem.limit.2p.reverse_blinds"), 1)
    assert boards.weight.size == 1755 and boards.weight.sum() == 22100
    leduc = canonical_boards(load_game(LEDUC), 1)
    assert leduc.weight.tolist() == [2, 2, 2]


def test_always_fold_loses_exactly_its_blinds():
    """A strategy that folds whenever it faces a bet (and checks otherwise), blinds 5/10.

    As the big blind it loses 10 chips: the small blind raises and it folds (limping works too:
    it checks, and folds to the first bet after). As the small blind it folds at once and loses
    5. A best response wins (10 + 5) / 2 = 7.5 chips a game = 750 mbb/g, in every game with
    these blinds, whatever the deck.
    """
    game = load_game(FLOP)
    solver = FullWalkSolver(game)
    strategy = np.zeros_like(solver.sigma)
    strategy[:, 1] = 1.0
    tree, nbk = solver.tree, solver.cards.num_buckets
    for node in np.flatnonzero(tree.kind == DECISION):
        if tree.children[node, FOLD] >= 0:
            r = int(tree.round[node])
            start, step = solver.offsets[r] + tree.slot[node], int(solver.ndec[r])
            strategy[start : start + nbk[r] * step : step] = [1.0, 0.0, 0.0]
    result = solve_small(_engine(game, solver, strategy, lossless_tables(game)))
    assert result.values.mean() / 10.0 * 1000.0 == pytest.approx(750.0, abs=1e-9)


@pytest.mark.slow  # a minute; chunk resume is checked by default on river-hs, cfr and k-means
def test_stage_resumes_bit_identical_and_lbr_stays_below(store, tmp_path):
    """The stage on a short-deck solve: killed after two chunks, resumed to the same bytes as an
    uninterrupted run; equal to the enumerated best response of the stored (float32) strategy;
    the `lbr` stage's estimate is not above it; `strategy br` prints one line."""
    solve = run_stage(
        "cfr", {"game": FLOP, "algorithm": "cfr+", "iterations": 5}, store=store, log=quiet
    ).key
    params = {"game": FLOP, "boards_per_chunk": 3}
    with pytest.raises(CrashAfter.Boom):
        run_stage(
            "best-response", params, {"strategy": solve}, store=store,
            progress=CrashAfter(2, only="best response"), log=quiet,
        )  # fmt: skip
    logs: list[str] = []
    resumed = run_stage("best-response", params, {"strategy": solve}, store=store, log=logs.append)
    assert any("resuming board_values" in line for line in logs), logs
    clean_store = ArtifactStore(tmp_path / "clean")
    clean_solve = run_stage(
        "cfr", {"game": FLOP, "algorithm": "cfr+", "iterations": 5}, store=clean_store, log=quiet
    ).key
    clean = run_stage(
        "best-response", params, {"strategy": clean_solve}, store=clean_store, log=quiet
    )
    assert resumed.key == clean.key
    a = store.open(resumed.key).meta["arrays"]
    b = clean_store.open(clean.key).meta["arrays"]
    assert {k: v["checksum"] for k, v in a.items()} == {k: v["checksum"] for k, v in b.items()}

    art = store.open(resumed.key)
    stored = np.asarray(store.open(solve)["average_strategy"][:], dtype=np.float64)
    solver = FullWalkSolver(load_game(FLOP))
    expected = [solver.best_response_value(p, stored) for p in (0, 1)]
    assert np.asarray(art["values"][:]) == pytest.approx(expected, abs=1e-9)
    summary = art.meta["summary"]
    assert summary["exploitability_chips"] == pytest.approx(np.mean(expected), abs=1e-9)

    lbr = run_stage(
        "lbr", {"game": FLOP, "deals": 400, "seed": 2}, {"strategy": solve}, store=store, log=quiet
    )
    lbr_summary = store.open(lbr.key).meta["summary"]
    low = lbr_summary["lbr_mbb_per_game"] - lbr_summary["half_width_95_mbb_per_game"]
    assert low <= summary["exploitability_mbb_per_game"]

    from gameforge.flows.cli import app

    shown = CliRunner().invoke(app, ["artifacts", "show", solve, "--store", str(store.root)])
    assert "against its lower bound: at or above it, as it must be" in shown.output, shown.output

    out = CliRunner().invoke(
        app, ["strategy", "br", solve, "--store", str(store.root), "--dask-address", "local"]
    )
    assert out.exit_code == 0, out.output
    line = out.output.strip().splitlines()[-1]
    assert f"{summary['exploitability_mbb_per_game']:.3f} mbb/g" in line and resumed.key in line

    # float32 sums: another artifact, within float32's rounding of the exact figure
    args = ["--store", str(store.root), "--dask-address", "local"]
    out = CliRunner().invoke(app, ["strategy", "br", solve, "--precision", "float32", *args])
    assert out.exit_code == 0, out.output
    line = out.output.strip().splitlines()[-1]
    key32 = line.rsplit("[", 1)[1].split(":", 1)[0]
    assert "float32 sums" in line and key32 != resumed.key
    chips32 = store.open(key32).meta["summary"]["exploitability_chips"]
    assert chips32 == pytest.approx(np.mean(expected), rel=1e-5)
    bad = CliRunner().invoke(app, ["strategy", "br", solve, "--precision", "float16", *args])
    assert bad.exit_code != 0 and "precision" in bad.output


@pytest.mark.parametrize(
    ("game", "algorithm", "iterations"),
    [("kuhn.limit.2p", "cfr+", 300), (LEDUC, "cfr+", 300), (FLOP, "chance", 20_000)],
)
def test_a_solve_summary_states_the_exploitability_of_the_strategy_it_stores(
    store, game, algorithm, iterations
):
    """The `cfr` summary's exploitability is that of the stored float32 strategy: the
    best-response stage, reading the artifact, finds the same to 1e-9."""
    params = {"game": game, "algorithm": algorithm, "iterations": iterations, "evaluations": 2}
    solve = run_stage("cfr", params, store=store, log=quiet)
    said = store.open(solve.key).meta["summary"]
    found = run_stage("best-response", {"game": game}, {"strategy": solve.key}, store=store,
                      log=quiet)  # fmt: skip
    exact = store.open(found.key).meta["summary"]
    assert said["exploitability_chips"] == pytest.approx(exact["exploitability_chips"], abs=1e-9)
    assert said["exploitability_mbb_per_game"] == pytest.approx(
        exact["exploitability_mbb_per_game"], abs=1e-9
    )
