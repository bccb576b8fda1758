"""BlokusZero (gameforge.engines.blokus.zero, gameforge.engines.blokus.selfplay, stages.blokus).

The input planes are rebuilt from the list of placements made, the search is driven by constant
networks whose outputs are known, self-play records are replayed through the rules engine, and
the training samples are matched against positions rebuilt independently. The stages run with a
tiny network (1 block of 8 filters; the policy head is still 30,433 wide) and 2 simulations.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

from gameforge.artifacts import ArtifactStore
from gameforge.engines.blokus.game import (
    CELLS,
    N_PLAYERS,
    OUT,
    TO_MOVE,
    board_symmetries,
    new_state,
    tables,
)
from gameforge.engines.blokus.selfplay import (
    GameRecords,
    MatchParams,
    SearchParams,
    ZeroSearch,
    match,
    sample_batch,
    self_play,
    train_step,
    tree_capacity,
)
from gameforge.engines.blokus.zero import (
    MAX_PLIES,
    N_HISTORY,
    N_MOVES,
    N_PLANES,
    BlokusNet,
    Evaluator,
    ZeroConfig,
    considered_visits,
    encode,
    pick_move,
)
from gameforge.engines.common.stats import wilson_interval
from gameforge.stages.base import StageError
from gameforge.stages.runner import run_stage
from tests.blokus_helpers import engine_legal, one_winning_move_position, outcome_of, score_of, step
from tests.resume_helpers import checksums, killed_run_resumes_alike

torch.set_num_threads(1)

QUIET = {"log": lambda m: None}
TINY = ZeroConfig(blocks=1, filters=8)


# ---------------------------------------------------------------------------------------------
# Helpers.


class Constant(nn.Module):
    """A stand-in network: the same logits and values (mover first) for every position."""

    def __init__(self, logits: np.ndarray | None = None, values=(0.0, 0.0, 0.0, 0.0)) -> None:
        super().__init__()
        lg = np.zeros(N_MOVES, np.float32) if logits is None else logits.astype(np.float32)
        self.register_buffer("logits", torch.from_numpy(lg))
        self.register_buffer("values", torch.tensor(values, dtype=torch.float32))

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        b = x.shape[0]
        return self.logits.expand(b, -1).clone(), self.values.expand(b, -1).clone()


def search_root(state, sims, module=None, seed=0, **settings):
    """One game's search from `state`, `settings` the other SearchParams fields (noise alpha
    0.3 unless given); (search, root child placements, their visits)."""
    params = SearchParams(sims=sims, **{"noise_alpha": 0.3, **settings})
    search = ZeroSearch(tables(), Evaluator(module or Constant()), 1, params, tree_capacity(sims),
                        seed)  # fmt: skip
    (root,) = search.run(state[None].copy(), np.ones(1, np.bool_))
    search.last = root
    return search, root.moves, root.visits


def self_play_search(sims: int, **settings) -> SearchParams:
    """The paper's self-play search (Dirichlet noise, 20 proportional plies) of `sims`
    simulations, with other `settings`."""
    return SearchParams(sims=sims, noise_eps=0.25, proportional_plies=20, **settings)


def root_children(search: ZeroSearch, node: int = 0) -> np.ndarray:
    f = search.forest
    a, n = int(f.first_child[0, node]), int(f.n_children[0, node])
    assert n > 0
    return np.arange(a, a + n)


def cells_of(m: int) -> list[int]:
    return [int(c) for c in tables().cells[m] if c >= 0]


def expected_planes(placed: list[tuple[int, int]], mover: int) -> np.ndarray:
    """The 33 planes from the list of (colour, placement) made so far, independently."""
    out = np.zeros((N_PLANES, CELLS), np.float32)
    n = len(placed)
    for k in range(N_HISTORY):
        for colour, m in placed[: max(n - k, 0)]:
            out[k * N_PLAYERS + (colour - mover) % N_PLAYERS, cells_of(m)] = 1.0
    out[-1] = n / MAX_PLIES
    return out


def replay_game(
    rec: GameRecords, g: int, sims: int, gumbel: bool = False
) -> tuple[np.ndarray, list]:
    """Replay game g through the rules, checking every move and every searched position;
    returns the final state and, per ply, (state before the move, legal set)."""
    s = new_state()
    a, b = int(rec.game_start[g]), int(rec.game_start[g + 1])
    assert b > a
    positions = []
    for k in range(a, b):
        legal = engine_legal(s)
        m = int(rec.moves[k])
        assert m in legal, (g, k - a)
        pm = rec.pi_move[rec.pi_start[k] : rec.pi_start[k + 1]]
        pv = rec.pi_weight[rec.pi_start[k] : rec.pi_start[k + 1]]
        assert len(set(pm.tolist())) == len(pm) and set(pm.tolist()) == legal, (g, k - a)
        total = 1.0 if gumbel else sims - 1  # a policy, or visit counts
        assert pv.min() >= 0 and abs(pv.sum() - total) < 1e-4, (g, k - a)
        if sims > 1:
            assert pv[pm == m][0] > 0  # the played move was searched
        positions.append((s.copy(), legal))
        alive = step(s, m)
        assert alive == (k < b - 1), (g, k - a)  # the game ends on its last recorded move
    assert s[OUT : OUT + N_PLAYERS].all()
    return s, positions


# ---------------------------------------------------------------------------------------------
# Input planes.


def test_encode_planes_are_the_boards_of_the_last_eight_placements():
    """Plane 4k + rel holds the squares of colour (mover + rel) % 4 as they were k placements
    ago; planes beyond the history are empty; plane 32 is ply / 84 everywhere."""
    rng = np.random.default_rng(4)
    s = new_state()
    placed: list[tuple[int, int]] = []
    out = np.zeros((N_PLANES, CELLS), np.float32)
    for n in range(12):
        encode(s, out)
        mover = int(s[TO_MOVE])
        assert np.array_equal(out, expected_planes(placed, mover)), n
        assert np.all(out[-1] == n / MAX_PLIES)
        if n == 6:
            assert not out[6 * N_PLAYERS : 8 * N_PLAYERS].any()  # before the first placement
            assert out[:N_PLAYERS].sum() == sum(len(cells_of(m)) for _, m in placed)
            # rel 0 is the mover's own squares (colour 2 moves at ply 6)
            assert mover == 2 and np.array_equal(
                np.flatnonzero(out[0]),
                sorted(c for col, m in placed if col == 2 for c in cells_of(m)),
            )
        legal = np.array(sorted(engine_legal(s)))
        size = tables().size[legal]
        largest = legal[size == size.max()]  # a big piece of the colour to move, at random
        m = int(largest[rng.integers(len(largest))])
        placed.append((mover, m))
        assert step(s, m)
    # after 12 placements every history plane is occupied
    encode(s, out)
    assert all(out[k * N_PLAYERS : (k + 1) * N_PLAYERS].any() for k in range(N_HISTORY))


# ---------------------------------------------------------------------------------------------
# The search.


def test_search_children_are_the_legal_moves_and_visits_add_up():
    s = new_state()
    for _ in range(3):
        step(s, sorted(engine_legal(s))[0])
    for sims in (2, 17):
        search, moves, visits = search_root(s, sims)
        assert len(set(moves.tolist())) == len(moves)
        assert set(moves.tolist()) == engine_legal(s)
        assert visits.sum() == sims - 1 and visits.min() >= 0
        assert search.forest.visits[0, 0] == sims


def test_search_backs_up_values_rotated_from_the_mover():
    """Values come out mover first: at the root colour 0 moves, at its child colour 1; after
    two simulations the root holds [a + d, b + a, c + b, d + c] and the child [d, a, b, c]."""
    a, b, c, d = 0.1, 0.2, 0.3, 0.4
    search, moves, visits = search_root(new_state(), 2, Constant(values=(a, b, c, d)))
    f = search.forest
    assert np.allclose(f.value[0, 0], [a + d, b + a, c + b, d + c], atol=1e-6)
    child = root_children(search)[visits > 0]
    assert len(child) == 1
    assert np.allclose(f.value[0, child[0]], [d, a, b, c], atol=1e-6)


def test_search_priors_are_the_softmax_over_legal_moves():
    rng = np.random.default_rng(9)
    logits = rng.normal(0, 2, N_MOVES).astype(np.float32)
    s = new_state()
    step(s, sorted(engine_legal(s))[-1])
    search, moves, _ = search_root(s, 1, Constant(logits))
    kids = root_children(search)
    priors = search.forest.prior[0, kids].astype(np.float64)
    lg = logits[search.forest.move[0, kids]].astype(np.float64)
    want = np.exp(lg - lg.max()) / np.exp(lg - lg.max()).sum()
    assert np.allclose(priors, want, rtol=1e-4, atol=1e-7)


def test_search_finds_the_only_winning_move():
    """Colour 0 has two moves, one wins outright (+1 for the sole winner), the other makes
    colour 1 the sole winner; the zero network knows nothing, the terminal outcomes decide."""
    s, win, loss = one_winning_move_position()
    search, moves, visits = search_root(s, 30)
    assert set(moves.tolist()) == {win, loss}
    assert int(moves[np.argmax(visits)]) == win
    f = search.forest
    kids = root_children(search)
    by_move = {int(f.move[0, k]): k for k in kids}
    lk, wk = by_move[loss], by_move[win]
    assert f.visits[0, lk] >= 1
    # the losing move ends the game: colour 0 -1, colour 1 +1 (sole top score), every visit
    assert np.allclose(f.value[0, lk] / f.visits[0, lk], [-1, 1, -1, -1])
    assert f.value[0, wk, 0] / f.visits[0, wk] > 0.5


def test_first_play_urgency_decides_between_breadth_and_depth():
    """Every colour valued -0.5 (a typical four-player position): with Q = 0 before the first
    visit (the paper's) an unvisited child beats every visited one, so 30 simulations over the
    58 first moves visit 29 children once each; with the parent's Q minus 0.1 the search goes
    back to the first child until its shrinking exploration term lets a new one in."""
    s = new_state()
    even = Constant(values=(-0.5, -0.5, -0.5, -0.5))
    _, moves, visits = search_root(s, 30, even)
    assert len(moves) == 58 and visits.sum() == 29 and visits.max() == 1
    _, moves, visits = search_root(s, 30, even, fpu_reduction=0.1)
    assert visits.sum() == 29 and visits.max() > 10 and (visits > 0).sum() < 10
    # at the root's second simulation all children tie; the first child is taken
    _, moves2, visits2 = search_root(s, 2, even, fpu_reduction=0.1)
    assert visits2.tolist() == [1] + [0] * 57


def test_most_visited_move_ties_go_to_the_better_mean():
    rng = np.random.default_rng(0)
    moves = np.array([7, 8, 9, 10])
    counts = np.array([2, 3, 3, 1])
    assert pick_move(moves, counts, False, rng) == 8  # without means: the first of the tie
    assert pick_move(moves, counts, False, rng, np.array([0.9, -0.2, 0.1, 1.0])) == 9
    assert pick_move(moves, counts, False, rng, np.array([0.9, 0.4, 0.1, 1.0])) == 8


def test_dirichlet_noise_mixes_into_root_priors_only():
    s = new_state()
    n_legal = len(engine_legal(s))  # 58
    plain, _, _ = search_root(s, 2, noise_eps=0.0)
    p0 = plain.forest.prior[0, root_children(plain)]
    assert np.allclose(p0, 1.0 / n_legal, atol=1e-7)
    eps = 0.25
    noisy, moves, visits = search_root(s, 2, noise_eps=eps, noise_alpha=0.3, seed=1)
    kids = root_children(noisy)
    p1 = noisy.forest.prior[0, kids].astype(np.float64)
    assert abs(p1.sum() - 1.0) < 1e-5
    assert not np.allclose(p1, 1.0 / n_legal, atol=1e-4)
    assert p1.min() >= (1 - eps) / n_legal - 1e-6  # the rest is eps times a distribution
    # the same seed draws the same noise, another seed other noise
    again, _, _ = search_root(s, 2, noise_eps=eps, noise_alpha=0.3, seed=1)
    assert np.array_equal(again.forest.prior[0, root_children(again)], noisy.forest.prior[0, kids])
    other, _, _ = search_root(s, 2, noise_eps=eps, noise_alpha=0.3, seed=2)
    assert not np.allclose(other.forest.prior[0, root_children(other)], p1)
    # the child expanded by the second simulation gets the plain (uniform) priors
    child = kids[noisy.forest.visits[0, kids] > 0][0]
    grand = noisy.forest.prior[0, root_children(noisy, child)]
    assert np.allclose(grand, grand[0]) and abs(grand.sum() - 1.0) < 1e-5


# ---------------------------------------------------------------------------------------------
# The Gumbel root rule.


def test_sequential_halving_schedule():
    """m = 4 actions, 16 simulations: two rounds of all four (16 / (log2 4 * 4) = 2), then four
    rounds of the best two; one action needs no halving."""
    assert considered_visits(4, 16).tolist() == [0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5]
    assert considered_visits(1, 5).tolist() == [0, 1, 2, 3, 4]
    seq = considered_visits(16, 63)
    assert len(seq) == 63 and seq[:16].tolist() == [0] * 16 and seq[16] == 1


def test_gumbel_root_halves_over_the_top_prior_moves_without_noise():
    """Equal values: sigma(q) is 0, so the m = 4 most probable children are searched by the
    halving schedule (the best two to 6 visits, the other two stay at 2), the most probable
    one is played and the policy target is the prior itself."""
    logits = np.zeros(N_MOVES, np.float32)
    s = new_state()
    first = sorted(engine_legal(s))
    for rank, m in enumerate(first[:5]):
        logits[m] = 5.0 - rank  # the five best moves in order
    search, moves, visits = search_root(s, 17, Constant(logits), root_rule="gumbel",
                                        considered=4)  # fmt: skip
    by_move = dict(zip(moves.tolist(), visits.tolist(), strict=True))
    assert [by_move[m] for m in first[:5]] == [6, 6, 2, 2, 0]
    assert visits.sum() == 16
    assert search.last.choice == first[0]
    kids = root_children(search)
    assert np.allclose(search.last.target, search.forest.prior[0, kids], atol=1e-6)


def test_gumbel_improved_policy_is_softmax_of_log_prior_plus_sigma_of_completed_q():
    """Recomputed from the tree: visited children's mean values, v_mix for the rest, rescaled
    to [0, 1] and scaled by (50 + max visits) * 0.1."""
    s = new_state()
    step(s, sorted(engine_legal(s))[3])
    torch.manual_seed(3)
    net = BlokusNet(TINY).eval()  # values vary from position to position
    search, moves, visits = search_root(s, 24, net, root_rule="gumbel", considered=8)
    f = search.forest
    kids = root_children(search)
    mover = int(s[TO_MOVE])
    prior = f.prior[0, kids].astype(np.float64)
    n = f.visits[0, kids].astype(np.float64)
    q = np.where(n > 0, f.value[0, kids, mover] / np.maximum(n, 1), 0.0)
    root_value = search._root_value[0]
    seen = n > 0
    weighted = (prior[seen] * q[seen]).sum() / prior[seen].sum()
    v_mix = (root_value + n.sum() * weighted) / (1 + n.sum())
    completed = np.where(seen, q, v_mix)
    scaled = (completed - completed.min()) / max(completed.max() - completed.min(), 1e-8)
    z = np.log(prior) + (50 + n.max()) * 0.1 * scaled
    want = np.exp(z - z.max()) / np.exp(z - z.max()).sum()
    assert np.allclose(search.last.target, want, atol=1e-6)
    assert (visits > 0).sum() <= 8 and visits.sum() == 23
    # the played move is a most visited considered child
    assert by_visits_max(moves, visits, search.last.choice)


def by_visits_max(moves: np.ndarray, visits: np.ndarray, choice: int) -> bool:
    """True if `choice` is among the most visited placements."""
    return int(visits[moves.tolist().index(choice)]) == int(visits.max())


def test_gumbel_finds_the_only_winning_move():
    s, win, loss = one_winning_move_position()
    search, moves, visits = search_root(s, 9, root_rule="gumbel")
    assert search.last.choice == win
    target = dict(zip(moves.tolist(), search.last.target.tolist(), strict=True))
    assert target[win] > 0.99 > 0.01 > target[loss]


def test_gumbel_noise_samples_the_played_move_from_the_prior():
    """One simulation: nothing is searched, so the played move is argmax(g + log p), the
    Gumbel-max trick, a sample from the prior (chi-square over the 58 first moves' top 3)."""
    logits = np.full(N_MOVES, -3.0, np.float32)
    s = new_state()
    first = sorted(engine_legal(s))
    logits[first[0]], logits[first[1]], logits[first[2]] = 1.0, 0.5, 0.0
    params = SearchParams(sims=1, noise_alpha=0.3, noise_eps=0.25, root_rule="gumbel")
    search = ZeroSearch(tables(), Evaluator(Constant(logits)), 1, params, tree_capacity(1), seed=8)
    picks = [search.run(s[None].copy(), np.ones(1, np.bool_))[0].choice for _ in range(600)]
    e = np.exp(logits[first].astype(np.float64))
    p = e / e.sum()
    counts = np.array([picks.count(m) for m in first[:3]] + [600 - sum(
        picks.count(m) for m in first[:3])])  # fmt: skip
    expected = 600 * np.array([p[0], p[1], p[2], 1 - p[:3].sum()])
    chi2 = ((counts - expected) ** 2 / expected).sum()
    assert chi2 < 16.3  # 3 degrees of freedom, p = 0.001


def test_gumbel_self_play_records_policies_and_replays_legally():
    torch.manual_seed(0)
    search = self_play_search(5, root_rule="gumbel", considered=4)
    rec = self_play(tables(), Evaluator(BlokusNet(TINY)), 1, 1, search, seed=2)
    assert rec.pi_weight.dtype == np.float32
    final, _ = replay_game(rec, 0, sims=5, gumbel=True)
    assert np.array_equal(rec.scores[0], score_of(final))


# ---------------------------------------------------------------------------------------------
# Self-play records and training samples.


@pytest.fixture(scope="module")
def records() -> GameRecords:
    torch.manual_seed(0)
    evaluator = Evaluator(BlokusNet(TINY))
    return self_play(tables(), evaluator, games=2, parallel=2, search=self_play_search(3), seed=11)


def test_self_play_records_replay_legally(records):
    rec = records
    assert rec.games == 2 and rec.game_start.tolist()[0] == 0 and len(rec.game_start) == 3
    assert rec.game_start[-1] == len(rec.moves)
    assert len(rec.pi_start) == len(rec.moves) + 1 and rec.pi_start[0] == 0
    assert rec.pi_start[-1] == len(rec.pi_move) == len(rec.pi_weight)
    assert (np.diff(rec.pi_start) > 0).all()  # every ply was searched
    for g in range(rec.games):
        final, positions = replay_game(rec, g, sims=3)
        assert np.array_equal(rec.scores[g], score_of(final))
        assert np.array_equal(rec.outcome[g], outcome_of(final))
        # after the proportional opening (20 plies) a most visited move is played
        a = int(rec.game_start[g])
        for k in range(a + 20, int(rec.game_start[g + 1])):
            pm = rec.pi_move[rec.pi_start[k] : rec.pi_start[k + 1]]
            pv = rec.pi_weight[rec.pi_start[k] : rec.pi_start[k + 1]]
            assert pv[pm == rec.moves[k]].tolist() == [pv.max()]


def test_records_concat_shifts_offsets(records):
    torch.manual_seed(1)
    other = self_play(tables(), Evaluator(BlokusNet(TINY)), 1, 1, self_play_search(2), seed=5)
    both = GameRecords.concat([records, other])
    n0, p0 = len(records.moves), len(records.pi_move)
    assert both.games == 3
    assert both.game_start.tolist() == [*records.game_start.tolist(), n0 + len(other.moves)]
    assert np.array_equal(both.pi_start[: n0 + 1], records.pi_start)
    assert np.array_equal(both.pi_start[n0:], other.pi_start + p0)
    for g, sims in ((0, 3), (1, 3), (2, 2)):
        final, _ = replay_game(both, g, sims)
        assert np.array_equal(both.scores[g], score_of(final))
        assert np.array_equal(both.outcome[g], outcome_of(final))


@pytest.fixture(scope="module")
def all_positions(records):
    """Every recorded position rebuilt independently: planes, pi, z (mover first), legal set."""
    planes, pis, zs, legals = [], [], [], []
    out = np.zeros((N_PLANES, CELLS), np.float32)
    for g in range(records.games):
        _final, positions = replay_game(records, g, sims=3)
        a = int(records.game_start[g])
        for j, (s, legal) in enumerate(positions):
            k = a + j
            encode(s, out)
            planes.append(out.copy())
            pi = np.zeros(N_MOVES, np.float32)
            pm = records.pi_move[records.pi_start[k] : records.pi_start[k + 1]]
            pv = records.pi_weight[records.pi_start[k] : records.pi_start[k + 1]]
            pi[pm] = pv / pv.sum()
            pis.append(pi)
            mover = int(s[TO_MOVE])
            zs.append(records.outcome[g, (mover + np.arange(N_PLAYERS)) % N_PLAYERS])
            legals.append(legal)
    return np.array(planes), np.array(pis), np.array(zs, np.float32), legals


def test_sample_batch_rebuilds_positions_pi_and_z(records, all_positions):
    planes_all, pi_all, z_all, legals = all_positions
    planes, pi, z, legal = sample_batch(
        tables(), records, 24, np.random.default_rng(3), augment=False
    )
    assert (
        planes.shape == (24, N_PLANES, CELLS) and pi.shape == (24, N_MOVES) and z.shape == (24, 4)
    )
    picked = set()
    for i in range(24):
        same = np.flatnonzero(
            (planes_all == planes[i]).all(axis=(1, 2)) & np.isclose(pi_all, pi[i]).all(axis=1)
        )
        # (the empty board of both games may come with the same pi: any match will do)
        same = [int(k) for k in same if np.array_equal(z[i], z_all[k])]
        assert same, i
        k = same[0]
        picked.add(k)
        assert abs(pi[i].sum() - 1.0) < 1e-5
        assert set(np.flatnonzero(pi[i]).tolist()) <= legals[k]
        assert set(np.flatnonzero(legal[i]).tolist()) == legals[k]
    assert len(picked) > 8  # the batch spreads over many positions


class Flat(nn.Module):
    """All logits and values equal to one trainable scalar (0): a uniform policy."""

    def __init__(self) -> None:
        super().__init__()
        self.bias = nn.Parameter(torch.zeros(1))

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        b = x.shape[0]
        return torch.zeros(b, N_MOVES) + self.bias, torch.zeros(b, 4) + self.bias


def test_margin_value_targets_come_from_the_final_scores(records):
    """With value_margin m, sample_batch's z is tanh((score - best other score) / m) of the
    game's final scores in the mover's order, of the outcome's sign; the rest of the batch is
    unchanged."""
    m = 8.0
    base = sample_batch(tables(), records, 24, np.random.default_rng(3), augment=False)
    graded = sample_batch(tables(), records, 24, np.random.default_rng(3), False, m)
    for a, b in zip(base[:2] + base[3:], graded[:2] + graded[3:], strict=True):
        assert np.array_equal(a, b)
    z = graded[2]
    assert np.array_equal(np.sign(z), base[2]) and (np.abs(z) < 1).all()
    wanted = np.array([
        [np.tanh((sc[p] - max(sc[q] for q in range(4) if q != p)) / m) for p in order]
        for sc in records.scores
        for order in ([(mover + i) % 4 for i in range(4)] for mover in range(4))
    ])  # fmt: skip
    for row in z:
        assert np.isclose(wanted, row, atol=1e-6).all(axis=1).any(), row


def test_replay_buffer_is_the_newest_games_and_loads_no_older_run(records):
    """replay_buffer keeps the newest `newest` games across the games.N inputs (higher N
    newer), in order, and does not read a run older than the buffer needs."""
    from gameforge.engines.blokus.selfplay import RECORD_FIELDS
    from gameforge.stages.blokus import replay_buffer

    read = []

    class Run(dict):
        def __init__(self, n: int) -> None:
            arrays = records.arrays()
            super().__init__({f: arrays[f] for f in RECORD_FIELDS})
            self["scores"] = arrays["scores"] + 100 * n  # tells the runs' games apart
            self.n = n

        def __getitem__(self, name: str) -> np.ndarray:
            read.append(self.n)
            return dict.__getitem__(self, name)

        def array_names(self) -> list[str]:
            return list(self)

    inputs = {f"games.{n}": Run(n) for n in (2, 0, 1)}  # order of the dict does not matter
    buffer = replay_buffer(inputs, 3)
    assert 0 not in read and buffer.games == 3
    np.testing.assert_array_equal(
        buffer.scores, np.concatenate([records.scores[1:] + 100, records.scores + 200])
    )
    last = records.game_start[1]
    assert buffer.moves.tolist() == records.moves[last:].tolist() + records.moves.tolist()
    assert replay_buffer(inputs, 100).games == 6


def test_value_weight_scales_only_the_value_gradient(records):
    """train_step's value_weight w multiplies the value loss's gradient: from the same start,
    the value head's output bias moves w times as far, the policy head's bias the same."""
    import copy

    planes, pi, z, legal = sample_batch(tables(), records, 8, np.random.default_rng(2), False)
    torch.manual_seed(5)
    start = BlokusNet(TINY)
    moved = {}
    for w in (1.0, 0.25):
        net = copy.deepcopy(start)
        opt = torch.optim.SGD(net.parameters(), lr=0.01)
        train_step(net, opt, planes, pi, z, legal=legal, value_weight=w)
        moved[w] = [(getattr(net, head)[-2 if head == "value" else -1].bias
                     - getattr(start, head)[-2 if head == "value" else -1].bias).detach().numpy()
                    for head in ("value", "policy")]  # fmt: skip
    assert np.abs(moved[1.0][0]).max() > 0
    np.testing.assert_allclose(moved[0.25][0], 0.25 * moved[1.0][0], rtol=1e-4, atol=1e-9)
    np.testing.assert_allclose(moved[0.25][1], moved[1.0][1], rtol=1e-4, atol=1e-9)


def test_legal_softmax_loss_is_the_cross_entropy_over_the_legal_placements(records):
    """With `legal`, the policy loss is -sum pi log softmax over the legal set only: a network
    whose logits are equal on the legal placements scores log(number legal), not log 30,433."""
    planes, pi, z, legal = sample_batch(tables(), records, 4, np.random.default_rng(1), False)
    flat = Flat()
    opt = torch.optim.SGD(flat.parameters(), lr=0.0)
    _, full = train_step(flat, opt, planes, pi, z)
    _, masked = train_step(flat, opt, planes, pi, z, legal=legal)
    assert np.isclose(full, np.log(N_MOVES), atol=1e-4)
    assert np.isclose(masked, np.log(legal.sum(axis=1)).mean(), atol=1e-4)


def test_augmentation_is_one_symmetry_of_planes_and_pi_together(records):
    t = tables()
    maps = board_symmetries()
    base = sample_batch(t, records, 32, np.random.default_rng(6), augment=False)
    aug = sample_batch(t, records, 32, np.random.default_rng(6), augment=True)
    assert np.array_equal(base[2], aug[2])  # z is unchanged
    turned = 0
    for i in range(32):
        fits = []
        for k in range(8):
            moved = np.empty_like(base[0][i])
            moved[:, maps[k]] = base[0][i]
            pi = np.zeros(N_MOVES, np.float32)
            pi[t.symmetry[k]] = base[1][i]
            legal = np.zeros(N_MOVES, np.bool_)
            legal[t.symmetry[k]] = base[3][i]
            if (np.array_equal(moved, aug[0][i]) and np.array_equal(pi, aug[1][i])
                    and np.array_equal(legal, aug[3][i])):  # fmt: skip
                fits.append(k)
        assert fits, i
        turned += 0 not in fits
    assert turned > 16  # about 7 in 8 samples are transformed


# ---------------------------------------------------------------------------------------------
# Stages.

SELFPLAY = {"blocks": 1, "filters": 8, "games": 2, "sims": 2, "parallel": 2, "device": "cpu"}
TRAIN = {"blocks": 1, "filters": 8, "steps": 6, "batch": 8, "checkpoint_every": 2,
         "device": "cpu"}  # fmt: skip
EVAL = {"games": 1, "zero_sims": 2, "mcts_sims": 2, "parallel": 1, "threads": 1, "device": "cpu"}


@pytest.fixture(scope="module")
def chain(tmp_path_factory):
    store = ArtifactStore(tmp_path_factory.mktemp("blokus") / "store")
    sp = run_stage("blokus-selfplay", SELFPLAY, {}, store=store, **QUIET)
    tr1 = run_stage("blokus-train", TRAIN, {"games.0": sp.key}, store=store, **QUIET)
    tr2 = run_stage(
        "blokus-train", TRAIN, {"games.0": sp.key, "previous": tr1.key}, store=store, **QUIET
    )
    ev = run_stage(
        "blokus-eval", EVAL, {"net.0": tr1.key, "net.1": tr2.key}, store=store, **QUIET
    )  # fmt: skip
    return store, sp.key, tr1.key, tr2.key, ev.key


def test_selfplay_stage_records_replay_legally(chain):
    from gameforge.stages.blokus import load_records

    store, sp, *_ = chain
    art = store.open(sp)
    rec = load_records(art)
    assert rec.games == 2 and art.meta["summary"]["games"] == 2
    for g in range(2):
        final, _ = replay_game(rec, g, sims=2)
        assert np.array_equal(rec.scores[g], score_of(final))


def test_train_stage_continues_the_previous_network(chain):
    store, sp, tr1, tr2, _ = chain
    first, second = store.open(tr1), store.open(tr2)
    assert first.meta["summary"]["steps_total"] == 6
    assert second.meta["summary"]["steps_total"] == 12
    assert np.asarray(second["steps_total"][...]).tolist() == [12]
    losses = np.asarray(second["losses"][...])
    assert losses.shape == (6, 2) and np.isfinite(losses).all() and (losses > 0).all()
    w1 = np.asarray(first["weights.policy.4.weight"][...])
    w2 = np.asarray(second["weights.policy.4.weight"][...])
    assert w1.shape == (N_MOVES, 2 * CELLS) and not np.array_equal(w1, w2)
    # only the network is stored (a generation starts its momentum afresh), and it alone
    # determines the next generation: rebuilding the second from the first gives it bit for bit
    assert not [n for n in second.array_names() if not n.startswith("weights.")
                and n not in ("losses", "steps_total")]  # fmt: skip
    want = checksums(store, tr2)
    again = run_stage(
        "blokus-train", second.params, second.inputs, store=store, force=True, **QUIET
    )
    assert again.key == tr2 and checksums(store, tr2) == want


def test_eval_stage_reports_every_network(chain):
    store, *_, ev = chain
    art = store.open(ev)
    assert np.asarray(art["steps"][...]).tolist() == [6, 12]
    rates = np.asarray(art["win_rate"][...])
    assert rates.shape == (2, 2) and ((rates[:, 0] >= 0) & (rates[:, 0] <= 1)).all()
    table = art.meta["summary"]["table"]
    assert [r["net"] for r in table] == ["net.0", "net.1"]
    assert [r["steps"] for r in table] == [6, 12] and all(r["games"] == 1 for r in table)
    for i in range(2):
        seat = np.asarray(art[f"seat_{i}"][...])
        scores = np.asarray(art[f"scores_{i}"][...])
        share = np.asarray(art[f"share_{i}"][...])
        assert seat.shape == (1,) and scores.shape == (1, 4) and share.shape == (1,)
        top = scores[0].max()
        want = 1.0 / (scores[0] == top).sum() if scores[0, seat[0]] == top else 0.0
        assert share[0] == pytest.approx(want) == rates[i, 0]
        # one game: the rate's 95% Wilson interval is wide (0 of 1 is 0 to 0.79), never ± 0
        low, high = wilson_interval(float(share.sum()), 1)
        assert (table[i]["win_rate_low"], table[i]["win_rate_high"]) == (
            round(low, 4),
            round(high, 4),
        )
        assert np.asarray(art["win_interval"][...])[i].tolist() == [round(low, 4), round(high, 4)]
        assert high - low > 0.5 and table[i]["clear_of_par"] is (low > 0.25)
        assert rates[i, 1] == pytest.approx(max(rates[i, 0] - low, high - rates[i, 0]), abs=1e-4)
        # the final board holds 89 squares less the unplaced ones of every colour
        board = np.asarray(art[f"boards_{i}"][...])
        assert board.shape == (1, CELLS)
        for p in range(N_PLAYERS):
            owned = int((board[0] == p).sum())
            if scores[0, p] < 0:
                assert owned == 89 + scores[0, p]
            else:
                assert owned == 89 and scores[0, p] in (15, 20)
        # BlokusZero's decisions: ply (after the 4 random ones), legal moves, root priors
        policy = np.asarray(art[f"policy_{i}"][...])
        assert policy.ndim == 2 and policy.shape[1] == 6 and len(policy) >= 1
        ply, legal, entropy, top1, top10, top100 = policy.T
        assert (ply >= 4).all() and (ply < 84).all() and (legal >= 1).all()
        assert ((entropy >= -1e-9) & (entropy <= np.log(legal) + 1e-6)).all()
        assert (top1 >= 1 / legal - 1e-6).all()
        assert ((top1 <= top10 + 1e-9) & (top10 <= top100 + 1e-9) & (top100 <= 1 + 1e-5)).all()


def test_eval_plays_every_network_on_the_same_games_beside_an_untrained_control(chain):
    """Two inputs holding the same network play the same seeded games, so their records are
    identical (seats, scores, boards); `control` adds, as row 0, an untrained network of that
    shape initialised as a fresh blokus-train of its seed would be, on those same seats, and
    the summary says whether the last network's interval separates from the control's."""
    from gameforge.stages.blokus import fresh_net, load_net

    store, _sp, tr1, _tr2, _ev = chain
    params = {**EVAL, "games": 3, "parallel": 3, "control": True}
    ev = run_stage("blokus-eval", params, {"net.0": tr1, "net.1": tr1}, store=store, **QUIET)
    art = store.open(ev.key)
    table = art.meta["summary"]["table"]
    assert [r["net"] for r in table] == ["untrained", "net.0", "net.1"]
    assert [r["steps"] for r in table] == [0, 6, 6] and all(r["games"] == 3 for r in table)
    for name in ("seat", "scores", "share", "boards", "policy"):
        assert np.array_equal(np.asarray(art[f"{name}_1"][...]), np.asarray(art[f"{name}_2"][...]))
    assert np.array_equal(np.asarray(art["seat_0"][...]), np.asarray(art["seat_1"][...]))
    versus = art.meta["summary"]["versus_control"]
    low, high = table[2]["win_rate_low"], table[2]["win_rate_high"]
    assert versus["above"] is (low > table[0]["win_rate_high"])
    assert versus["separated"] is (versus["above"] or high < table[0]["win_rate_low"])
    assert "untrained" in versus["statement"] and "net.1" in versus["statement"]
    # the control is the starting point of a fresh training run of that seed and shape
    _, config = load_net(store.open(tr1), "cpu")
    control = fresh_net(config, int(store.open(tr1).params["seed"]))
    p = art.params
    protocol = MatchParams(p["mcts_sims"], p["random_plies"], threads=1)
    again = match(tables(), Evaluator(control, "cpu"), 3, 3, SearchParams(p["zero_sims"]),
                  protocol, p["seed"])  # fmt: skip
    assert np.array_equal(again.scores, np.asarray(art["scores_0"][...]))
    assert np.array_equal(again.boards, np.asarray(art["boards_0"][...]))


def test_train_stage_weighs_the_value_gradient_by_value_weight(chain):
    """One blokus-train step from the same fresh network at value weights 1, 1/2 and 1/4:
    SGD moves the value head's output bias by lr (w g + weight_decay b), linear in w, so equal
    steps in w move it equally; the policy head's bias moves the same at every w."""
    store, sp, *_ = chain
    bias = {}
    for w in (1.0, 0.5, 0.25):
        params = {**TRAIN, "steps": 1, "lr": 0.1, "value_weight": w}
        art = store.open(run_stage("blokus-train", params, {"games.0": sp}, store=store,
                                   **QUIET).key)  # fmt: skip
        bias[w] = [np.asarray(art[f"weights.{name}"][...]).astype(np.float64)
                   for name in ("value.6.bias", "policy.4.bias")]  # fmt: skip
    value_step = bias[1.0][0] - bias[0.5][0]
    assert np.abs(value_step).max() > 1e-3
    np.testing.assert_allclose(value_step, 2 * (bias[0.5][0] - bias[0.25][0]), rtol=1e-3, atol=1e-6)
    np.testing.assert_allclose(bias[1.0][1], bias[0.25][1], rtol=0, atol=1e-7)


def test_train_resumes_after_a_kill_to_the_same_weights(chain, monkeypatch):
    import gameforge.stages.blokus as stage

    store, sp, tr1, _tr2, _ev = chain
    want = checksums(store, tr1)
    real = stage.train_step
    calls = []

    def dying(*args, **kwargs):
        calls.append(1)
        if len(calls) == 5:  # step 5: the checkpoints after steps 2 and 4 are saved
            raise KeyboardInterrupt("killed")
        return real(*args, **kwargs)

    store.remove(tr1, force=True)
    monkeypatch.setattr(stage, "train_step", dying)
    with pytest.raises(KeyboardInterrupt):
        run_stage("blokus-train", TRAIN, {"games.0": sp}, store=store, **QUIET)
    monkeypatch.setattr(stage, "train_step", real)
    logs = []
    again = run_stage("blokus-train", TRAIN, {"games.0": sp}, store=store, log=logs.append)
    assert again.key == tr1 and store.open(tr1).meta["resumed"]
    assert any("resuming after step 4" in m for m in logs)
    assert checksums(store, tr1) == want


def test_selfplay_resumes_after_a_kill_to_the_same_games(chain, monkeypatch):
    """A blokus-selfplay run killed after its first batch of games resumes from that batch's
    checkpoint, plays only the rest, and commits the same records as an uninterrupted run."""
    import gameforge.stages.blokus as stage

    params = {**SELFPLAY, "games": 4, "parallel": 2}
    # killed in the second batch: the first is checkpointed
    _, calls = killed_run_resumes_alike(
        monkeypatch, chain[0], stage, "self_play", 2, "blokus-selfplay", params
    )
    assert calls == 1


def test_train_refuses_a_previous_network_of_another_size(chain):
    store, sp, tr1, *_ = chain
    before = sorted(store.keys())
    with pytest.raises(StageError, match="another size") as err:
        run_stage(
            "blokus-train", {**TRAIN, "filters": 4}, {"games.0": sp, "previous": tr1},
            store=store, **QUIET,
        )  # fmt: skip
    assert "\n" not in str(err.value)
    assert sorted(store.keys()) == before


def test_blokus_zero_flow_wiring_and_paper_preset():
    """The flow chains self-play -> train ten times (each train on every self-play run so far,
    its buffer the newest games, continuing the previous network), evaluates every generation,
    and its paper preset is the paper's setting."""
    from gameforge.flows.specs import BLOKUS_ITERATIONS, get_flow
    from gameforge.stages.registry import get_stage

    spec = get_flow("blokus-zero")
    for i in range(1, BLOKUS_ITERATIONS + 1):
        sp = spec.node(f"selfplay-{i}")
        assert sp.inputs == ({"net": f"train-{i - 1}"} if i > 1 else {})
        tr = spec.node(f"train-{i}")
        games = sorted(v for k, v in tr.inputs.items() if k.startswith("games."))
        assert games == sorted(f"selfplay-{j}" for j in range(1, i + 1))
        assert tr.inputs.get("previous") == (f"train-{i - 1}" if i > 1 else None)
        assert spec.node(f"eval-{i}").inputs == {"net.0": f"train-{i}"}
    assert sorted(spec.node("curve").inputs.values()) == sorted(
        f"eval-{i}" for i in range(1, BLOKUS_ITERATIONS + 1)
    )
    for preset in ("tiny", "small", "paper"):
        spec.resolve(preset)
    paper = spec.resolve("paper")
    sp, tr, ev = paper["selfplay-3"], paper["train-3"], paper[f"eval-{BLOKUS_ITERATIONS}"]
    assert (sp["blocks"], sp["filters"], sp["sims"]) == (10, 128, 800)
    assert (tr["lr"], tr["lr_late"], tr["lr_drop_step"], tr["buffer_games"]) == (
        0.001, 0.0001, 40_000, 10_000,
    )  # fmt: skip
    assert BLOKUS_ITERATIONS * tr["steps"] == 70_000 and tr["augment"] is False
    assert (ev["games"], ev["zero_sims"], ev["mcts_sims"]) == (300, 800, 800)
    # the paper's search and loss are the stages' defaults (Q = 0 for unvisited children, no
    # rollouts, the PUCT root, the softmax over all placements, both losses weighed alike):
    # the paper preset departs from them only in sizes and schedules
    for node, values in paper.items():
        model = get_stage(spec.node(node).stage).params_model
        for name in ("fpu_reduction", "rollout_mix", "root_rule", "legal_softmax", "value_weight"):
            if name in values:
                assert values[name] == model.model_fields[name].default, (node, name)


def test_every_preset_evaluates_with_the_search_it_trains_with():
    """In every preset each generation is evaluated with the search its self-play used (root
    rule, first-play urgency, rollout mixing) and trained alike in every iteration; a `--set`
    of one of these settings reaches every node whose stage takes it, and no other node."""
    from gameforge.flows.specs import BLOKUS_ITERATIONS, get_flow

    spec = get_flow("blokus-zero")
    search = ("fpu_reduction", "rollout_mix", "root_rule")
    training = ("value_weight", "legal_softmax", "augment", "lr", "lr_late", "buffer_games")
    iterations = range(1, BLOKUS_ITERATIONS + 1)
    searchers = [f"{kind}-{i}" for kind in ("selfplay", "eval") for i in iterations]
    trainers = [f"train-{i}" for i in iterations]
    for preset in ("tiny", "small", "paper"):
        params = spec.resolve(preset)
        assert len({tuple(params[n][k] for k in search) for n in searchers}) == 1, preset
        assert len({tuple(params[n][k] for k in training) for n in trainers}) == 1, preset
    sets = ["fpu_reduction=none", "rollout_mix=0.3", "root_rule=puct", "value_weight=0.5"]
    changed = spec.resolve("small", sets)
    for node, values in changed.items():
        if node in searchers:
            assert tuple(values[k] for k in search) == (None, 0.3, "puct"), node
        else:
            assert not set(search) & set(values), node
        assert values.get("value_weight") == (0.5 if node in trainers else None), node


def test_value_margin_and_value_weight_are_keyed_at_every_value():
    """value_margin and value_weight define what the stages compute, so they are in the
    artifact key at every value, the defaults included (win/loss targets, weight 1: the stages'
    versions were bumped when the keys gained them); from the CLI value_margin reaches
    self-play, training and evaluation alike."""
    from gameforge.flows.specs import get_flow
    from gameforge.stages.blokus import EvalParams, SelfPlayParams, TrainParams

    for model in (SelfPlayParams, TrainParams, EvalParams):
        assert model().key_params()["value_margin"] == 0.0
        assert model(value_margin=10.0).key_params()["value_margin"] == 10.0
    assert TrainParams().key_params()["value_weight"] == 1.0
    assert TrainParams(value_weight=0.25).key_params()["value_weight"] == 0.25
    graded = get_flow("blokus-zero").resolve("small", ["value_margin=10"])
    assert {n for n, v in graded.items() if v.get("value_margin") == 10.0} == {
        f"{kind}-{i}" for kind in ("selfplay", "train", "eval") for i in range(1, 11)
    }


@pytest.mark.parametrize("head", ["dense", "conv"])
def test_evaluator_folds_batch_norm_and_computes_only_the_asked_logits(head):
    """The evaluator (batch norms folded into the convolutions, only the asked policy columns
    computed, in either memory layout) gives the plain network's logits and values to float
    precision, with either policy head."""
    from gameforge.engines.blokus.zero import BlokusNet, Evaluator, ZeroConfig

    torch.manual_seed(3)
    net = BlokusNet(ZeroConfig(2, 8, head))
    with torch.no_grad():  # a placement bias that is not all zero
        for p in net.policy.parameters():
            if p.dim() == 1:
                p.normal_()
    net.train()
    with torch.no_grad():  # move the batch-norm statistics away from their initial values
        for _ in range(3):
            net(torch.rand(8, 33, 20, 20))
    net.eval()
    planes = (np.random.default_rng(0).random((5, 33, 400)) < 0.2).astype(np.float32)
    moves = np.sort(np.random.default_rng(1).choice(30_433, 700, replace=False))
    with torch.inference_mode():
        want_logits, want_values = net(torch.from_numpy(planes).view(-1, 33, 20, 20))
    for channels_last in (True, False):  # the evaluator's layout, and torch's default
        evaluator = Evaluator(net, channels_last=channels_last)
        logits, values = evaluator(planes, moves)
        np.testing.assert_allclose(logits[:, moves], want_logits.numpy()[:, moves], atol=1e-5)
        np.testing.assert_allclose(values, want_values.numpy(), atol=1e-6)
        full, _ = evaluator(planes)
        np.testing.assert_allclose(full, want_logits.numpy(), atol=1e-5)


def test_convolutional_policy_head_reads_each_placement_at_its_orientation_and_corner():
    """The convolutional head's anchors: one distinct (orientation, cell) per placement, the
    cell the top-left of the placement's bounding box, 91 orientations in the index's order
    (a piece's orientations consecutive), and a placement shifted by one column reads the next
    cell of the same map."""
    from gameforge.engines.blokus.zero import N_ORIENTATIONS, placement_anchors

    t = tables()
    anchors = placement_anchors()
    assert anchors.shape == (30_433,) and np.unique(anchors).size == 30_433
    rows = np.where(t.cells >= 0, t.cells // 20, 99).min(axis=1)
    cols = np.where(t.cells >= 0, t.cells % 20, 99).min(axis=1)
    np.testing.assert_array_equal(anchors % 400, 20 * rows + cols)
    orientation = anchors // 400
    assert orientation.max() == N_ORIENTATIONS - 1 and (np.diff(orientation) >= 0).all()
    assert (np.diff(t.piece[np.unique(orientation, return_index=True)[1]]) >= 0).all()
    shape = [tuple(sorted(c - c.min() for c in row[row >= 0])) for row in t.cells[:2000]]
    for m in range(1999):
        if shape[m] == shape[m + 1] and cols[m + 1] == cols[m] + 1:
            assert anchors[m + 1] == anchors[m] + 1


def test_curve_gathers_evaluations_in_step_order(chain):
    """blokus-curve lists every network of its blokus-eval inputs by training steps, with the
    same win rates; without inputs it refuses with a one-line error."""
    store, sp, tr1, tr2, ev = chain
    single = run_stage("blokus-eval", EVAL, {"net.0": tr2}, store=store, **QUIET)
    curve = run_stage("blokus-curve", {}, {"evals.0": single.key, "evals.1": ev},
                      store=store, **QUIET)  # fmt: skip
    art = store.open(curve.key)
    assert np.asarray(art["steps"][:]).tolist() == [6, 12, 12]
    rows = store.open(ev).meta["summary"]["table"] + store.open(single.key).meta["summary"]["table"]
    want = sorted((r["steps"], r["win_rate"]) for r in rows)
    got = list(
        zip(np.asarray(art["steps"][:]).tolist(), np.asarray(art["win_rate"][:, 0]).tolist())
    )
    assert sorted(got) == want
    # the Wilson intervals come with the rows, and an eval from before them is recomputed
    table = art.meta["summary"]["table"]
    assert all("win_rate_low" in r and "half_width" not in r for r in table)
    assert np.asarray(art["win_interval"][:]).tolist() == [
        [r["win_rate_low"], r["win_rate_high"]] for r in table
    ]
    from gameforge.stages.blokus import _with_wilson

    old = {"net": "net.0", "steps": 6, "games": 2, "win_rate": 0.0, "half_width": 0.0,
           "clear_of_par": False}  # fmt: skip
    assert _with_wilson(old) == {"net": "net.0", "steps": 6, "games": 2, "win_rate": 0.0,
                                 "win_rate_low": 0.0, "win_rate_high": 0.6576,
                                 "clear_of_par": False}  # fmt: skip
    with pytest.raises(StageError, match="missing inputs evals"):
        run_stage("blokus-curve", {}, {}, store=store, **QUIET)


def test_rollout_mix_blends_one_rollout_outcome_into_the_leaf_value():
    """mix_rollouts turns a leaf value v into (1 - mix) v + mix z, z the outcome (+1 sole
    winner, 0 shared top, -1 otherwise) of one rollout from the leaf, in the mover's order."""
    from gameforge.engines.blokus.mcts import seeded_rng
    from gameforge.engines.blokus.zero import mix_rollouts

    t = tables()
    rng = np.random.default_rng(4)
    leaves = []
    for plies in (10, 30, 50):
        s = new_state()
        for _ in range(plies):
            legal = sorted(engine_legal(s))
            if not step(s, legal[rng.integers(len(legal))]):
                break
        leaves.append(s)
    leaf_states = np.array(leaves)
    active = np.ones(3, np.bool_)
    rows = np.array([2, -1, 0], np.int64)  # game 1 not evaluated: left alone
    net = np.array([[0.2, -0.4, 0.6, -0.8], [0.5, 0.5, 0.5, 0.5], [0.1, 0.0, -0.1, 0.3]])
    stamp, moves = np.zeros(t.n + 1, np.int64), np.zeros(t.n, np.int64)

    def mixed(mix: float, margin: float = 0.0) -> np.ndarray:
        values = net.copy()
        mix_rollouts(active, rows, leaf_states, values, mix, t, stamp, moves, seeded_rng(9, 9),
                     margin)  # fmt: skip
        return values

    pure = mixed(1.0)
    for r in (0, 2):
        z = pure[r]
        assert set(z.tolist()) <= {-1.0, 0.0, 1.0} and (z >= 0).sum() >= 1
        assert (z == 1).sum() <= 1 and ((z == 1).sum() == 1) == ((z == 0).sum() == 0)
    assert np.array_equal(pure[1], net[1])
    half = mixed(0.5)  # the same rollouts (same seed): halfway between
    np.testing.assert_allclose(half[[0, 2]], 0.5 * net[[0, 2]] + 0.5 * pure[[0, 2]])
    np.testing.assert_array_equal(mixed(0.0), net)
    graded = mixed(1.0, margin=6.0)  # the same rollouts, valued by the score margin
    assert np.array_equal(np.sign(graded[[0, 2]]), pure[[0, 2]])
    assert (np.abs(graded[[0, 2]]) < 1).all() and np.array_equal(graded[1], net[1])


def test_plots_of_selfplay_training_eval_and_curve_show_data(chain, tmp_path):
    """Every Blokus stage draws a figure with data: a training run of 6 steps (one point of a
    running mean, the empty figure this once was), an eval of 2 networks, a curve of 3."""
    from tests.plot_checks import assert_plot_has_data

    store, sp, tr1, tr2, ev = chain
    single = run_stage("blokus-eval", EVAL, {"net.0": tr2}, store=store, **QUIET)
    curve = run_stage("blokus-curve", {}, {"evals.0": single.key, "evals.1": ev},
                      store=store, **QUIET)  # fmt: skip
    for key, axes in ((sp, 4), (tr1, 2), (tr2, 2), (ev, 4), (curve.key, 1)):
        assert_plot_has_data(store.open(key), tmp_path / f"{key}.png", min_axes=axes)
    text = assert_plot_has_data(store.open(sp), tmp_path / "sp.png")
    assert text.startswith("2 games") and "nats" in text
