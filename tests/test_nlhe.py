"""The CNN paper's no-limit pipeline: plane encoding, network, scoring, stages and flow."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from gameforge.artifacts import ArtifactStore
from gameforge.engines.common.torch_arrays import weights_to_arrays
from gameforge.engines.nlhe import game as nl
from gameforge.engines.nlhe.encoding import (
    COL0,
    ROW0,
    encode_candidate,
    encode_samples,
    encode_state,
    thermo_count,
)
from gameforge.engines.nlhe.net import (
    CnnPlayer,
    NetConfig,
    PokerCNN,
    make_optimiser,
    model_from_arrays,
    train_epoch,
)
from gameforge.engines.poker.cards import parse_cards
from gameforge.engines.poker.shipped_games import load_game
from gameforge.stages.base import StageError
from gameforge.stages.runner import run_stage
from tests.resume_helpers import killed_then_rerun

RULES = nl.rules_of(load_game("holdem.nolimit.2p.50bb"))
TINY_NET = {"filters": [4, 8], "kernel": 3, "dense": 16, "epochs": 1, "batch_size": 256}


def _inner(plane: np.ndarray) -> np.ndarray:
    """The 13x4 matrix inside a padded 17x17 plane."""
    return plane[ROW0 : ROW0 + 13, COL0 : COL0 + 4]


def _cells(plane: np.ndarray) -> list[tuple[int, int]]:
    return [tuple(int(v) for v in x) for x in np.argwhere(_inner(plane) != 0)]


def _thermo(n: int) -> np.ndarray:
    m = np.zeros((13, 4), np.float32)
    m.reshape(-1)[: min(n, 52)] = 1.0
    return m


def test_thermometer_code_matches_the_paper_examples():
    out = np.zeros((33, 17, 17), np.float32)
    encode_candidate(out, nl.CALL, 50, 50)  # 1 SB: the top-left cell only
    assert _cells(out[32]) == [(0, 0)]
    for chips, cells in ((200, 4), (350, 7), (2600, 52), (5000, 52), (0, 0), (49, 0)):
        out[:] = 0
        encode_candidate(out, nl.RAISE, chips, 50)
        assert np.array_equal(_inner(out[32]), _thermo(cells)), chips
        assert thermo_count(chips, 50) == cells
        assert out[32].sum() == cells  # nothing outside the 13x4 block
    # 4 SB fill the first rank row (four suits); the type plane is constant over the block.
    out[:] = 0
    encode_candidate(out, nl.RAISE, 200, 50)
    assert _cells(out[32]) == [(0, 0), (0, 1), (0, 2), (0, 3)]
    assert np.all(_inner(out[31]) == 1.0) and out[31].sum() == 52


def _scripted_flop_state():
    """SB raises to 300, BB calls; on the flop BB checks, SB bets 200: BB to act."""
    cards = np.array(parse_cards("AsKd" + "2c3c" + "4h5h6h7s8s"), dtype=np.int64)
    history = np.zeros((1, RULES.max_actions, 4), np.int32)
    state = np.zeros((1, nl.STATE_WIDTH), np.int64)
    nl.start_hand(state, 0, RULES.stack, RULES.blind, RULES.first)
    for kind, to in ((nl.RAISE, 300), (nl.CALL, 0), (nl.CALL, 0), (nl.RAISE, 500)):
        nl.apply_action(state, 0, kind, to, history, RULES.stack, RULES.blind, RULES.first)
    return cards, history[0], state[0]


def test_state_planes_of_a_hand_built_flop_decision():
    cards, history, state = _scripted_flop_state()
    assert state[nl.ROUND] == 1 and state[nl.ACTOR] == 0 and state[nl.N_ACTS] == 4
    out = np.zeros((33, 17, 17), np.float32)
    encode_state(out, cards, 0, history, 4, 1, RULES.encoding(False))
    # ranks: 2=0 .. A=12; suits c d h s = 0..3
    assert _cells(out[0]) == [(12, 3)]  # As
    assert _cells(out[1]) == [(11, 1)]  # Kd
    assert sorted(_cells(out[2])) == [(2, 2), (3, 2), (4, 2)]  # flop 4h 5h 6h
    assert out[3].sum() == 0 and out[4].sum() == 0  # turn and river not dealt yet
    assert sorted(_cells(out[5])) == [(2, 2), (3, 2), (4, 2), (11, 1), (12, 3)]
    assert np.array_equal(_inner(out[6]), _thermo(16))  # pot 300 + 500 = 800 chips = 16 SB
    assert out[7].sum() == 52 and out[8].sum() == 0 and out[9].sum() == 0  # round 1
    assert out[10].sum() == 52  # seat 0 acts first after the flop
    # current round, most recent first: the bet (raise, 200 chips = 4 SB), then the check
    assert np.allclose(_inner(out[11]), 1.0) and np.array_equal(_inner(out[16]), _thermo(4))
    assert np.allclose(_inner(out[12]), 2 / 3) and out[17].sum() == 0
    assert all(out[p].sum() == 0 for p in (13, 14, 15, 18, 19, 20))
    # previous round: the call (200 chips), then the raise to 300 (250 chips = 5 SB)
    assert np.allclose(_inner(out[21]), 2 / 3) and np.array_equal(_inner(out[26]), _thermo(4))
    assert np.allclose(_inner(out[22]), 1.0) and np.array_equal(_inner(out[27]), _thermo(5))
    assert out[31].sum() == 0 and out[32].sum() == 0
    # everything outside the 13x4 block is padding
    mask = np.ones((17, 17), bool)
    mask[ROW0 : ROW0 + 13, COL0 : COL0 + 4] = False
    assert not out[:, mask].any()


def test_canonical_suits_make_isomorphic_hands_encode_identically():
    def planes(text: str, canonical: bool) -> np.ndarray:
        cards = np.array(parse_cards(text), dtype=np.int64)
        out = np.zeros((33, 17, 17), np.float32)
        history = np.zeros((4, 4), np.int32)
        encode_state(out, cards, 0, history, 0, 3, RULES.encoding(canonical))
        return out

    a = "AhKh" + "2c3c" + "Qh7d2s9h3d"
    b = "AsKs" + "2d3d" + "Qs7c2h9s3c"  # hearts<->spades, diamonds<->clubs
    assert not np.array_equal(planes(a, False), planes(b, False))
    assert np.array_equal(planes(a, True), planes(b, True))
    c = "AhKd" + "2c3c" + "Qh7d2s9h3d"  # another suit pattern stays different
    assert not np.array_equal(planes(a, True), planes(c, True))


def test_recorded_samples_encode_with_their_own_action_as_candidate():
    rec = nl.play(RULES, (nl.HEURISTIC, nl.RANDOM), nl.Deals(50, seed=3))
    starts = np.concatenate([[0], np.cumsum(rec.counts)]).astype(np.int64)
    hand = np.repeat(np.arange(len(rec.counts)), rec.counts)
    ids = np.arange(len(rec.actions))
    out = np.zeros((len(ids), 33, 17, 17), np.float32)
    cards = rec.cards.astype(np.int64)
    r = RULES
    enc = r.encoding(False)
    encode_samples(out, ids, hand, starts, cards, rec.actions, enc)
    for j in range(0, len(ids), 7):
        h, k = hand[j], j - starts[hand[j]]
        seat, kind, after = rec.actions[j, 1], rec.actions[j, 2], rec.actions[j, 3]
        mine = [a for a in rec.actions[starts[h] : j] if a[1] == seat]
        before = mine[-1][3] if mine else r.blind[seat]
        ref = np.zeros((33, 17, 17), np.float32)
        acts = rec.actions[starts[h] : j + 1]
        encode_state(ref, cards[h], seat, acts, k, rec.actions[j, 0], enc)
        encode_candidate(ref, kind, after - before, 50)
        assert np.array_equal(out[j], ref)


def test_network_shape_range_and_weights_round_trip():
    torch.manual_seed(0)
    config = NetConfig()
    model = PokerCNN(config).eval()
    x = torch.rand(5, 33, 17, 17)
    y = model(x)
    assert y.shape == (5,) and bool((y.abs() <= 1).all())
    # the paper's layers: 5x5x32, 5x5x32, pool, 5x5x64, 5x5x64, pool, dense 1024, 1 output
    shapes = [tuple(w.shape) for w in model.parameters() if w.dim() > 1]
    assert shapes == [(32, 33, 5, 5), (32, 32, 5, 5), (64, 32, 5, 5), (64, 64, 5, 5), (1024, 1024),
                      (1, 1024)]  # fmt: skip
    arrays = weights_to_arrays(model)
    assert all(isinstance(v, np.ndarray) and v.dtype == np.float32 for v in arrays.values())
    again = model_from_arrays(arrays, config)
    assert torch.equal(again(x), y)


def test_split_first_convolution_scores_equal_full_planes():
    torch.manual_seed(1)
    model = PokerCNN(NetConfig(filters=(8, 8), kernel=5, dense=32)).eval()
    player = CnnPlayer(model, max_candidates=37)  # several chunks
    batch = nl.new_batch(RULES, 40, 5, 0, (nl.EXTERNAL, nl.HEURISTIC))
    batch.advance()
    tables = batch.waiting(0)
    assert len(tables) > 10
    row, kind, raise_to, scores = player.score(batch, tables)
    assert len(row) > 5 * len(tables)  # fold/call and many raise sizes per decision
    full = np.zeros((len(row), 33, 17, 17), np.float32)
    r = RULES
    for c in range(len(row)):  # the planes built here, independently of reference_score
        t = tables[row[c]]
        seat = batch.state[t, nl.ACTOR]
        spent = batch.state[t, nl.SPENT + seat]
        chips = 0 if kind[c] == nl.FOLD else raise_to[c] - spent
        n_acts, rnd = batch.state[t, nl.N_ACTS], batch.state[t, nl.ROUND]
        encode_state(
            full[c], batch.cards[t], seat, batch.history[t], n_acts, rnd, r.encoding(False)
        )
        encode_candidate(full[c], kind[c], chips, 50)
    with torch.no_grad():
        direct = model(torch.from_numpy(full)).numpy()
    assert np.allclose(scores, direct, atol=1e-5)
    assert np.allclose(player.reference_score(batch, tables)[3], direct, atol=1e-6)
    # every raise candidate is legal and the saturated sizes collapse to one
    for j, t in enumerate(tables):
        _f, _c, can_raise, lo, hi = nl.legal(batch.state, t, r.stack)
        sizes = raise_to[(row == j) & (kind == nl.RAISE)]
        assert (len(sizes) > 0) == can_raise
        if can_raise:
            assert sizes.min() == lo and sizes.max() <= hi and len(sizes) <= 53


class _Checked:
    """Plays as a CnnPlayer, first holding its scores to the full-plane reference."""

    def __init__(self, player: CnnPlayer):
        self.player = player
        self.worst = np.zeros(4)
        self.decisions = np.zeros(4, np.int64)

    def choose(self, batch, tables):
        row, _kind, _to, fast = self.player.score(batch, tables)
        _row, _kind, _to, full = self.player.reference_score(batch, tables)
        street = batch.state[tables, nl.ROUND][row]
        np.add.at(self.decisions, batch.state[tables, nl.ROUND], 1)
        np.maximum.at(self.worst, street, np.abs(fast - full))
        return self.player.choose(batch, tables)


@pytest.mark.parametrize("kernel", [5, 3])
def test_scores_equal_the_full_plane_network_on_played_decisions_of_every_street(kernel):
    """Over every decision of 300 deals against the heuristic, the split, cropped scorer equals
    the plain network on each candidate's full 33 planes; the streets are all reached."""
    torch.manual_seed(3)
    model = PokerCNN(NetConfig(filters=(8, 16), kernel=kernel, dense=32)).eval()
    checked = _Checked(CnnPlayer(model, remember=False))
    nl.play(RULES, (checked, nl.HEURISTIC), nl.Deals(300, seed=4), batch_deals=100)
    assert checked.player.crop is not None  # the second convolution ran on its varying columns
    assert (checked.decisions >= 50).all(), checked.decisions
    assert checked.worst.max() <= 1e-6, checked.worst


def test_bfloat16_checked_plays_as_float32_and_bfloat16_stays_within_its_rounding():
    """bfloat16 scores stay within bfloat16 rounding of the float32 ones; bfloat16-checked
    rescores only the near-best candidates and plays every decision of 200 deals as float32."""
    torch.manual_seed(6)
    model = PokerCNN(NetConfig(filters=(8, 16), kernel=5, dense=32)).eval()
    with torch.no_grad():  # spread the scores, as a trained network's are, past the margin
        model.head[4].weight.mul_(40.0)
    batch = nl.new_batch(RULES, 60, 6, 0, (nl.EXTERNAL, nl.HEURISTIC))
    batch.advance()
    tables = batch.waiting(0)
    exact = CnnPlayer(model).score(batch, tables)[3]
    low = CnnPlayer(model, precision="bfloat16").score(batch, tables)[3]
    assert 0 < np.abs(low - exact).max() < 0.02
    plain = CnnPlayer(model, remember=False)
    checked = CnnPlayer(model, remember=False, precision="bfloat16-checked")
    a = nl.play(RULES, (plain, nl.HEURISTIC), nl.Deals(200, seed=8), batch_deals=100)
    b = nl.play(RULES, (checked, nl.HEURISTIC), nl.Deals(200, seed=8), batch_deals=100)
    assert np.array_equal(a.actions, b.actions) and np.array_equal(a.payoff, b.payoff)
    assert 0 < checked.rescored < checked.scored / 2
    with pytest.raises(ValueError, match="precision"):
        CnnPlayer(model, precision="float16")  # type: ignore[arg-type]


def test_remembered_preflop_decisions_play_exactly_as_scored_ones():
    """The memory of preflop decisions changes nothing: the same hands, action for action."""
    torch.manual_seed(4)
    model = PokerCNN(NetConfig(filters=(4, 8), kernel=3, dense=16)).eval()
    plain = CnnPlayer(model, remember=False)
    remembering = CnnPlayer(model)
    a = nl.play(RULES, (plain, nl.HEURISTIC), nl.Deals(600, seed=5), batch_deals=60)
    b = nl.play(RULES, (remembering, nl.HEURISTIC), nl.Deals(600, seed=5), batch_deals=60)
    assert np.array_equal(a.actions, b.actions) and np.array_equal(a.payoff, b.payoff)
    assert plain.decisions == remembering.decisions and plain.remembered == 0
    assert remembering.remembered >= 50  # some preflop states repeat
    assert remembering.scored < plain.scored


def test_a_recalled_memory_continues_as_the_original_player():
    """A fresh player given another's memory (as a resumed pairing is) plays the next deals
    exactly as the original does, remembering the same decisions."""
    torch.manual_seed(4)
    model = PokerCNN(NetConfig(filters=(4, 8), kernel=3, dense=16)).eval()
    original = CnnPlayer(model)
    nl.play(RULES, (original, nl.HEURISTIC), nl.Deals(300, seed=5), batch_deals=60)
    saved = original.memory()
    assert len(saved["memo_keys"]) > 0 and saved["counters"][0] == original.decisions
    resumed = CnnPlayer(model)
    resumed.recall(saved)
    a = nl.play(RULES, (original, nl.HEURISTIC), nl.Deals(300, seed=5, first=300), batch_deals=60)
    b = nl.play(RULES, (resumed, nl.HEURISTIC), nl.Deals(300, seed=5, first=300), batch_deals=60)
    assert np.array_equal(a.actions, b.actions) and np.array_equal(a.payoff, b.payoff)
    assert resumed.remembered == original.remembered > saved["counters"][2]
    assert resumed.memo == original.memo


@pytest.mark.slow
def test_compiled_scores_equal_the_eager_ones():
    """torch.compile (as the small and paper presets score) moves scores in the last bits."""
    torch.manual_seed(5)
    model = PokerCNN(NetConfig(filters=(8, 16), kernel=5, dense=32)).eval()
    batch = nl.new_batch(RULES, 60, 6, 0, (nl.EXTERNAL, nl.HEURISTIC))
    batch.advance()
    tables = batch.waiting(0)
    eager = CnnPlayer(model).score(batch, tables)[3]
    compiled = CnnPlayer(model, compiled=True).score(batch, tables)[3]
    assert np.allclose(compiled, eager, atol=1e-6)


def test_training_fits_a_learnable_target():
    """Loss falls on a target the planes determine (the pot thermometer's fill)."""
    torch.manual_seed(2)
    rng = np.random.default_rng(0)
    x_all = np.zeros((512, 33, 17, 17), np.float32)
    fill = rng.integers(0, 53, 512)
    for i, n in enumerate(fill):
        x_all[i, 6, ROW0 : ROW0 + 13, COL0 : COL0 + 4] = _thermo(int(n))
    y_all = (fill / 26.0 - 1.0).astype(np.float32) * 0.8

    def batches(ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return x_all[ids], y_all[ids]

    model = PokerCNN(NetConfig(filters=(4, 8), kernel=3, dense=32, dropout=0.0))
    opt = make_optimiser(model)
    ids = np.arange(512)
    losses = [train_epoch(model, opt, batches, ids, 32, seed=e) for e in range(8)]
    assert losses[-1] < 0.2 * losses[0]


@pytest.fixture(scope="module")
def tiny_chain(tmp_path_factory):
    """Generation 1 from heuristic hands, generation 2 from {heuristic, gen 1} pairings."""
    store = ArtifactStore(tmp_path_factory.mktemp("nlhe"))
    h1 = run_stage("nlhe-histories", {"hands": 800, "seed": 1}, {}, store=store, log=lambda m: None)
    g1 = run_stage("nlhe-train", TINY_NET, {"histories": h1.key}, store=store, log=lambda m: None)
    h2 = run_stage(
        "nlhe-histories", {"hands": 600, "seed": 2}, {"cnn.0": g1.key}, store=store,
        log=lambda m: None,
    )  # fmt: skip
    return store, h1.key, g1.key, h2.key


def test_histories_cover_every_pairing_equally(tiny_chain):
    store, h1, g1, h2 = tiny_chain
    first = store.open(h1)
    assert first.meta["summary"]["pairings"] == [["heuristic", "heuristic"]]
    assert first.meta["summary"]["hands"] == 800
    second = store.open(h2)
    s = second.meta["summary"]
    assert s["pairings"] == [
        ["heuristic", "heuristic"], ["heuristic", "CNN-1g"], ["CNN-1g", "CNN-1g"]
    ]  # fmt: skip
    pairing = np.asarray(second["pairing"][:])
    assert np.bincount(pairing).tolist() == [200, 200, 200]
    starts = np.asarray(second["hand_start"][:])
    assert starts[-1] == second["actions"].shape[0] == s["actions"]
    payoff = np.asarray(second["payoff"][:])
    assert np.abs(payoff).max() <= 5000


def _checksums(store: ArtifactStore, key: str) -> dict[str, str]:
    return {n: a["checksum"] for n, a in store.open(key).meta["arrays"].items()}


def _killed_then_rerun(monkeypatch, store, name, params, inputs, target: str, n: int, log=None):
    """Run stage `name`, killed on the n-th call of `target` in the NLHE stages' module, then
    again: (the rerun, how many calls of `target` the rerun made)."""
    import gameforge.stages.nlhe as stage

    return killed_then_rerun(
        monkeypatch, stage, target, n,
        lambda: run_stage(name, params, inputs, store=store, log=lambda m: None),
        lambda: run_stage(name, params, inputs, store=store, log=log or (lambda m: None)),
    )  # fmt: skip


def test_histories_resume_after_a_kill_to_the_same_records(tiny_chain, monkeypatch):
    """Killed after its first pairing, a rerun resumes from the pairing checkpoint; the records
    equal the uninterrupted run's (CNN decisions and the counter-based deals are deterministic)."""
    store, _h1, g1, h2 = tiny_chain
    want = _checksums(store, h2)
    params = {"hands": 600, "seed": 2}
    store.remove(h2, force=True)
    run, _ = _killed_then_rerun(
        monkeypatch, store, "nlhe-histories", params, {"cnn.0": g1}, "play", 2
    )
    assert run.key == h2 and store.open(h2).meta["resumed"]
    assert _checksums(store, h2) == want


def test_histories_resume_inside_a_pairing_from_its_last_block(tiny_chain, monkeypatch):
    """Killed in the middle of a CNN pairing, a rerun replays only the blocks after the last
    checkpointed one, with the CNN's memory as it was there, and writes the same records."""
    import gameforge.stages.nlhe as stage

    store, _h1, g1, _h2 = tiny_chain
    monkeypatch.setattr(stage, "bar_batch", lambda deals: 40)  # 100 deals: blocks of 40, 40, 20
    params = {"hands": 600, "seed": 7}
    logs: list[str] = []
    whole = run_stage("nlhe-histories", params, {"cnn.0": g1}, store=store, log=logs.append)
    want = _checksums(store, whole.key)
    want_tally = [m for m in logs if "so far" in m][-1]
    whole_built = store.open(whole.key).meta["provenance"]
    store.remove(whole.key, force=True)
    logs.clear()
    # calls: heuristic self-play (1), heuristic vs CNN (2-4), CNN self-play (5-7): die in 6
    again, calls = _killed_then_rerun(
        monkeypatch, store, "nlhe-histories", params, {"cnn.0": g1}, "play", 6, logs.append
    )
    assert calls == 2  # the CNN self-play pairing's second and third blocks
    assert _checksums(store, again.key) == want
    # the CNN's tally (decisions, remembered, scored) was recalled with its memory
    assert [m for m in logs if "so far" in m] == [want_tally]
    # the killed process's time, to its last checkpoint, counts in the stage's time
    built = store.open(again.key).meta["provenance"]
    assert built["attempts"] == 2
    assert built["wall_s"] < built["wall_s_all_attempts"] < built["wall_s"] + 120
    assert "attempts" not in whole_built  # one process built the uninterrupted run


def test_training_resumes_after_a_kill_to_the_same_weights(tiny_chain, tmp_path, monkeypatch):
    store, h1, _g1, _h2 = tiny_chain
    params = {**TINY_NET, "epochs": 2, "seed": 5}
    whole = run_stage("nlhe-train", params, {"histories": h1}, store=store, log=lambda m: None)
    want = _checksums(store, whole.key)
    store.remove(whole.key, force=True)
    # killed in epoch 2's validation: epoch 1 is checkpointed
    again, _ = _killed_then_rerun(
        monkeypatch, store, "nlhe-train", params, {"histories": h1}, "evaluate_loss", 2
    )
    assert store.open(again.key).meta["resumed"]
    got = _checksums(store, again.key)
    assert {k: v for k, v in got.items() if k != "samples_per_second"} == {
        k: v for k, v in want.items() if k != "samples_per_second"
    }


def test_league_resumes_after_a_kill_from_its_finished_pairings(tiny_chain, monkeypatch):
    """Killed in its third pairing, a rerun replays only the pairings not checkpointed and
    writes the uninterrupted league's bytes."""
    store, _h1, g1, _h2 = tiny_chain
    params = {"hands": 200, "seed": 9, "aivat_hands": 40}
    whole = run_stage("nlhe-league", params, {"cnn.0": g1}, store=store, log=lambda m: None)
    want = _checksums(store, whole.key)
    store.remove(whole.key, force=True)
    again, calls = _killed_then_rerun(
        monkeypatch, store, "nlhe-league", params, {"cnn.0": g1}, "play", 3
    )
    assert calls == 1  # two of the three pairings came from their checkpoints
    assert store.open(again.key).meta["resumed"]
    assert _checksums(store, again.key) == want


def test_league_table_is_antisymmetric_and_random_loses(tiny_chain):
    store, _h1, g1, _h2 = tiny_chain
    params = {"hands": 400, "aivat_hands": 200}
    run = run_stage("nlhe-league", params, {"cnn.0": g1}, store=store, log=lambda m: None)
    art = store.open(run.key)
    table = np.asarray(art["bb_per_hand"][:])
    ci = np.asarray(art["ci95"][:])
    assert np.allclose(table, -table.T) and np.allclose(ci, ci.T)
    s = art.meta["summary"]
    assert s["players"] == ["random", "heuristic", "CNN-1g"]
    assert table[0, 1] < 0  # Random loses to the heuristic (paper: -6.82 BB/hand)
    # an order only where head-to-head intervals separate: the stated comparisons are the table's
    labels = s["players"]
    decided = {(labels[i], labels[j]) for i in range(3) for j in range(3) if table[i, j] > ci[i, j]}
    assert {tuple(d.split(":")[0].split(" > ")) for d in s["decided"]} == decided
    assert len(s["decided"]) + len(s["undecided"]) == 3
    assert sorted(p for tier in s["ranking"] for p in tier) == sorted(labels)
    # the heuristic's recorded mix: raises are drawn 45% of the time where legal
    assert abs(s["fold_call_raise"]["heuristic"][2] - 0.42) < 0.05
    sizes = np.asarray(art["raise_sizes"][:])
    assert sizes.sum(axis=1).tolist() == np.asarray(art["action_mix"][:])[:, 2].tolist()
    # AIVAT beside the plain result wherever a player's strategy is known (here: every pairing;
    # the random player is the known one where it plays), on the first aivat_hands hands
    aivat_mean = np.asarray(art["aivat_mean"][:])
    aivat_half = np.asarray(art["aivat_half"][:])
    plain_mean = np.asarray(art["aivat_plain_mean"][:])
    off = ~np.eye(3, dtype=bool)
    assert np.isfinite(aivat_mean[off]).all() and np.isnan(aivat_mean[~off]).all()
    assert np.allclose(aivat_mean[off], -aivat_mean.T[off])
    assert np.allclose(aivat_half[off], aivat_half.T[off])
    assert (np.asarray(art["aivat_hands"][:])[off] == 200).all()
    scored = s["aivat"]
    assert [v["known"] for v in scored.values()] == ["random", "random", "heuristic"]
    assert scored["random vs heuristic"]["narrower"] > 1  # the random player's own luck removed
    # on the same hands, the AIVAT and the plain mean agree within their widths
    both = np.hypot(aivat_half[0, 1], np.asarray(art["aivat_plain_half"][:])[0, 1])
    assert abs(aivat_mean[0, 1] - plain_mean[0, 1]) < 2 * both


@pytest.mark.parametrize("native", [False, True])
def test_bfloat16_on_a_cpu_that_emulates_it_is_named_in_one_line(tiny_chain, monkeypatch, native):
    """Emulated bfloat16 runs far slower than float32 (a matrix product about 100x on AVX2):
    a CNN stage asked for it on such a CPU says so once; where the CPU runs it, nothing."""
    from gameforge.stages import nlhe

    store, _h1, g1, _h2 = tiny_chain
    monkeypatch.setattr(nlhe, "cpu_runs_bfloat16", lambda: native)
    logs: list[str] = []
    params = {"hands": 20, "precision": "bfloat16-checked", "seed": 7 + native}
    run_stage("nlhe-league", params, {"cnn.0": g1}, store=store, log=logs.append)
    named = [line for line in logs if "no bfloat16 arithmetic" in line]
    assert len(named) == (0 if native else 1), logs
    if named:
        assert "precision=bfloat16-checked" in named[0] and "precision=float32" in named[0]


def test_bad_player_name_is_one_clear_error(tmp_path):
    store = ArtifactStore(tmp_path)
    with pytest.raises(StageError, match="unknown player 'shark'"):
        run_stage("nlhe-histories", {"players": ["shark"]}, {}, store=store)
    with pytest.raises(StageError, match="heads-up no-limit"):
        run_stage("nlhe-histories", {"game": "leduc.limit.2p", "hands": 10}, {}, store=store)
    assert store.keys() == []


def test_nlhe_cnn_flow_chains_three_generations_and_reuses_them(tmp_path):
    from gameforge.flows.pipeline import run_plan
    from gameforge.flows.request import RunRequest

    overrides = ("hands=240", "epochs=1", "league.hands=200")
    request = RunRequest(flow="nlhe-cnn", preset="tiny", overrides=overrides)
    params = request.resolve().params
    assert params["histories-1"]["hands"] == 240 and params["league"]["hands"] == 200
    store = ArtifactStore(tmp_path)
    first = run_plan(request, store, log=lambda m: None)
    assert list(first) == [
        "histories-1", "train-1", "histories-2", "train-2", "histories-3", "train-3", "league"
    ]  # fmt: skip
    h3 = store.open(first["histories-3"].key).meta["summary"]
    assert h3["players"] == ["heuristic", "CNN-1g", "CNN-2g"] and len(h3["pairings"]) == 6
    league = store.open(first["league"].key).meta["summary"]
    assert league["players"] == ["random", "heuristic", "CNN-1g", "CNN-2g", "CNN-3g"]
    again = run_plan(request, store, log=lambda m: None)
    assert all(r.cached for r in again.values())
    assert {k: r.key for k, r in again.items()} == {k: r.key for k, r in first.items()}


def test_plots_of_histories_training_and_league_show_data(tiny_chain, tmp_path):
    """Every no-limit stage draws a figure with data, also a one-epoch training curve."""
    from tests.plot_checks import assert_plot_has_data

    store, h1, g1, h2 = tiny_chain
    league = run_stage("nlhe-league", {"hands": 400, "aivat_hands": 100}, {"cnn.0": g1},
                       store=store, log=lambda m: None)  # fmt: skip
    for key, axes in ((h1, 3), (h2, 3), (g1, 1), (league.key, 4)):
        art = store.open(key)
        description = assert_plot_has_data(art, tmp_path / f"{key}.png", min_axes=axes)
        assert description
    text = assert_plot_has_data(store.open(h2), tmp_path / "h2.png")
    assert text.startswith("600 hands") and "median pot" in text


# ---------------------------------------------------------------------------------------------
# AIVAT's view of the engine's hands and built-in players


def _engine_distribution(kind: int, state: np.ndarray, step: int) -> dict[tuple[int, int], float]:
    """What the kernels' random or heuristic player draws on table 0, from their own legal()
    and raise grid (the heuristic's sizes by `pot_raise_to`, which `heuristic_raise_to` uses)."""
    can_fold, call_to, can_raise, lo, hi = nl.legal(state, 0, RULES.stack)
    out: dict[tuple[int, int], float] = {}
    if kind == nl.RANDOM:
        n_types = 1 + int(can_fold) + int(can_raise)
        if can_fold:
            out[(nl.FOLD, 0)] = 1 / n_types
        out[(nl.CALL, 0)] = 1 / n_types
        if can_raise:
            grid = nl.raise_grid_size(lo, hi, step)
            for j in range(grid):
                size = (nl.RAISE, int(nl.raise_grid_value(lo, hi, step, j)))
                out[size] = out.get(size, 0.0) + 1 / n_types / grid
        return out
    pot = int(state[0, nl.SPENT] + state[0, nl.SPENT + 1] + call_to)
    pot -= int(state[0, nl.SPENT + state[0, nl.ACTOR]])
    fractions = len(nl.HEURISTIC_POT_FRACTIONS)
    if can_raise:
        for k in range(fractions):
            size = (nl.RAISE, int(nl.pot_raise_to(pot, call_to, k, lo, hi, step)))
            out[size] = out.get(size, 0.0) + 0.45 / fractions
    if can_fold:
        out[(nl.FOLD, 0)] = 0.1
    out[(nl.CALL, 0)] = 1.0 - sum(out.values())
    return out


@pytest.mark.parametrize("kind", [nl.RANDOM, nl.HEURISTIC])
def test_aivat_policies_match_the_engine(kind: int):
    """The random and heuristic players as AIVAT policies: the engine's hands replay through
    NoLimitBetting to the same chips, every action recorded is in the policy's support, and at
    every decision the policy's distribution is exactly what the kernel draws from (its legal
    actions and raise grid); the action frequencies of many played hands agree with it."""
    from gameforge.engines.nlhe.aivat import hands_of, policy_of
    from gameforge.engines.poker.aivat import betting_of, showdown_payoff

    game = RULES.game
    b = betting_of(game)
    policy = policy_of(kind, b, RULES)
    assert policy is not None and policy_of(nl.HEURISTIC_CARDS, b, RULES) is None
    rec = nl.play(RULES, (kind, kind), nl.Deals(400, 9))
    hands = hands_of(rec, game.num_hole_cards)
    first_counts: dict[tuple[int, int], int] = {}
    for hand, payoff in zip(hands, rec.payoff):
        state = b.start()
        engine = np.zeros((1, nl.STATE_WIDTH), dtype=np.int64)
        history = np.zeros((1, RULES.max_actions, 4), dtype=np.int64)
        nl.start_hand(engine, 0, RULES.stack, RULES.blind, RULES.first)
        for i, action in enumerate(hand.actions):
            actions, probs = policy.distribution(state, ())
            want = _engine_distribution(kind, engine, RULES.small_blind)
            assert dict(zip(actions, probs.tolist())) == pytest.approx(want, abs=1e-12)
            assert action in actions
            if i == 0:
                first_counts[action] = first_counts.get(action, 0) + 1
            raise_to = action[1] if action[0] == nl.RAISE else 0
            nl.apply_action(engine, 0, action[0], raise_to, history, RULES.stack, RULES.blind,
                            RULES.first)  # fmt: skip
            state = b.apply(state, action)
            assert tuple(int(x) for x in engine[0, nl.SPENT : nl.SPENT + 2]) == state.spent
        assert b.actor(state) < 0 and engine[0, nl.DONE] == 1
        assert showdown_payoff(b, state, hand.hole, hand.board) == payoff
    actions, probs = policy.distribution(b.start(), ())
    n = sum(first_counts.values())
    kinds = {a: sum(p for x, p in zip(actions, probs) if x[0] == a) for a in (0, 1, 2)}
    for a, p in kinds.items():
        seen = sum(c for x, c in first_counts.items() if x[0] == a)
        assert abs(seen - n * p) <= 4 * np.sqrt(n * p * (1 - p)) + 1
