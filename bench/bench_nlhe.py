"""No-limit CNN pipeline speed: heuristic self-play, CNN decisions, training, paper projection.

    .venv/bin/python bench/bench_nlhe.py selfplay [--deals 200000]
    .venv/bin/python bench/bench_nlhe.py cnn [--deals 500]
    .venv/bin/python bench/bench_nlhe.py scoring --reference OLD/engines/nlhe/net.py
        [--deals 1000] [--store S --network NLHE_TRAIN_KEY]
    .venv/bin/python bench/bench_nlhe.py bfloat16 [--deals 600] [--store S --network KEY]
    .venv/bin/python bench/bench_nlhe.py quantized [--deals 300] [--store S --network KEY]
    .venv/bin/python bench/bench_nlhe.py train [--samples 20000] [--device cpu]
    .venv/bin/python bench/bench_nlhe.py ceiling [--deals 300]
    .venv/bin/python bench/bench_nlhe.py all
    .venv/bin/python bench/bench_nlhe.py variants [--hands 8000,3000] [--league-hands 2000]
        [--variants "paper settings,3x3 filters"] [--seeds 3]
    .venv/bin/python bench/bench_nlhe.py report --store S [--network NLHE_LEAGUE_KEY]

`selfplay` is compared in the same run with OpenSpiel's universal_poker on the same ACPC game
(random play stepped from Python: the reference's own speed of dealing and applying actions).
`cnn` compares the split-first-convolution scorer with scoring every candidate's full planes.
`all` runs the three and projects the `paper` preset of `nlhe-cnn` from the measured rates.
`ceiling` bounds that preset's wall time from below: its multiply-adds (every preflop decision
free) at the speed of a large matrix product in float32, and in bfloat16 where the CPU has it.
`report` prints a stored `nlhe-cnn` league beside the paper's table (markdown), the players'
action mix and raise sizes, and the time of every stage behind it (all attempts of a resumed one).
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np
import torch
from _shared import random_play, reference_module

from gameforge.engines.nlhe import game as nl
from gameforge.engines.nlhe.encoding import SIZE
from gameforge.engines.nlhe.net import (
    PRECISIONS,
    CnnPlayer,
    NetConfig,
    Placement,
    PokerCNN,
    make_optimiser,
    train_epoch,
)
from gameforge.engines.poker.shipped_games import load_game
from gameforge.stages.nlhe import NLHE_GAME, Samples

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.spiel_helpers import universal_poker  # noqa: E402  (the tests' OpenSpiel reference)

RULES = nl.rules_of(load_game(NLHE_GAME))


def selfplay(deals: int) -> dict[str, float]:
    """Heuristic self-play hands per second (1 and 2 threads) and OpenSpiel's random play."""
    nl.play(RULES, (nl.HEURISTIC, nl.HEURISTIC), nl.Deals(2000, 0))  # compile
    out = {}
    for threads in (1, 2):
        t0 = time.perf_counter()
        rec = nl.play(RULES, (nl.HEURISTIC, nl.HEURISTIC), nl.Deals(deals, 1), n_threads=threads)
        dt = time.perf_counter() - t0
        out[f"threads_{threads}"] = len(rec.payoff) / dt
        out["actions_per_hand"] = float(rec.counts.mean())
        print(
            f"heuristic self-play, {threads} thread(s): {len(rec.payoff):,} hands in {dt:.2f} s "
            f"= {len(rec.payoff) / dt:,.0f} hands/s, {rec.counts.mean():.2f} actions/hand"
        )
    try:
        import pyspiel
    except ImportError:
        print("OpenSpiel not installed: no reference")
        return out
    game = universal_poker(pyspiel, RULES.game)
    hands, dt = random_play(game, 3.0)
    out["openspiel"] = hands / dt
    print(
        f"OpenSpiel universal_poker, random play: {hands:,} hands in {dt:.2f} s "
        f"= {hands / dt:,.0f} hands/s; ratio {out['threads_2'] / out['openspiel']:,.0f}x"
    )
    return out


def cnn(deals: int) -> dict[str, float]:
    """CNN decisions and candidates per second in a match against the heuristic."""
    torch.manual_seed(0)
    model = PokerCNN(NetConfig()).eval()
    player = CnnPlayer(model, compiled=True)  # as the small and paper presets score
    nl.play(RULES, (player, nl.HEURISTIC), nl.Deals(20, 0))  # compile and warm up
    player.decisions = player.scored = player.remembered = 0
    player.forget()
    t0 = time.perf_counter()
    nl.play(RULES, (player, nl.HEURISTIC), nl.Deals(deals, 2), batch_deals=deals)
    dt = time.perf_counter() - t0
    out = {
        "decisions_per_s": player.decisions / dt,
        "candidates_per_s": player.scored / dt,
        "candidates_scored_per_decision": player.scored / player.decisions,
    }
    print(
        f"CNN vs heuristic, {2 * deals:,} hands: {player.decisions:,} CNN decisions in {dt:.1f} s "
        f"= {out['decisions_per_s']:,.1f} decisions/s, {out['candidates_per_s']:,.0f} "
        f"candidates scored/s ({out['candidates_scored_per_decision']:.1f} per decision, "
        f"{player.remembered / player.decisions:.1%} of decisions remembered)"
    )
    # Reference: the same candidates scored from their full 33 planes.
    batch = nl.new_batch(RULES, 200, 9, 0, (nl.EXTERNAL, nl.HEURISTIC))
    batch.advance()
    tables = batch.waiting(0)
    row = player.score(batch, tables)[0]
    t0 = time.perf_counter()
    player.score(batch, tables)
    split_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    player.reference_score(batch, tables)
    full_s = time.perf_counter() - t0
    out["split_vs_full"] = full_s / split_s
    print(
        f"scoring {len(row):,} candidates of {len(tables)} decisions: shortcuts {split_s:.2f} s, "
        f"full planes {full_s:.2f} s ({full_s / split_s:.2f}x)"
    )
    return out


def _network(store_root: str, key: str) -> tuple[CnnPlayer, str]:
    """The CNN player of a stored `nlhe-train` artifact, or a fresh paper network."""
    if not key:
        torch.manual_seed(0)
        return CnnPlayer(PokerCNN(NetConfig()).eval()), "an untrained paper network"
    from gameforge.artifacts import ArtifactStore
    from gameforge.stages.nlhe import load_cnn

    art = ArtifactStore(store_root).open(key)
    return load_cnn(art), f"{key} ({art.params['filters']}, {art.params['kernel']}x)"


class _Checked:
    """Plays as `player`, and compares its scores with the full-plane reference first."""

    def __init__(self, player: CnnPlayer):
        self.player = player
        self.err = np.zeros(4)
        self.decisions = np.zeros(4, np.int64)

    def choose(self, batch: nl.TableBatch, tables: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        row, _k, _r, fast = self.player.score(batch, tables)
        _row, _k, _r, ref = self.player.reference_score(batch, tables)
        streets = batch.state[tables, nl.ROUND]
        np.add.at(self.decisions, streets, 1)
        for s in range(4):
            mine = streets[row] == s
            if mine.any():
                self.err[s] = max(self.err[s], float(np.abs(fast[mine] - ref[mine]).max()))
        return self.player.choose(batch, tables)


def scoring(deals: int, reference: str, store_root: str, key: str) -> None:
    """CnnPlayer against another implementation of `engines/nlhe/net.py` (a reference, e.g.
    an older commit's), with and without each shortcut: the same weights on the same deals,
    one after the other, and this scorer's error against the full planes by street."""
    player, label = _network(store_root, key)
    model = player.model
    old = reference_module(reference, "gameforge_reference_net")
    batch_deals = max(256, deals // 16)
    print(f"network: {label}; {2 * deals:,} hands against the heuristic, {batch_deals} deals "
          f"per batch")  # fmt: skip

    checked = _Checked(CnnPlayer(model, remember=False))
    nl.play(RULES, (checked, nl.HEURISTIC), nl.Deals(400, 7), batch_deals=200)
    streets = ", ".join(
        f"{n:,} decisions {e:.1e}" for n, e in zip(checked.decisions, checked.err, strict=True)
    )
    print(f"largest |score - full-plane score| by street (preflop..river): {streets}")

    players = {
        "reference": old.CnnPlayer(model),
        "this, no memory": CnnPlayer(model, remember=False),
        "this": CnnPlayer(model),
        "this, compiled": CnnPlayer(model, compiled=True),
        "this, compiled, bfloat16-checked": CnnPlayer(
            model, compiled=True, precision="bfloat16-checked"
        ),
        "this, compiled, bfloat16": CnnPlayer(model, compiled=True, precision="bfloat16"),
    }
    for p in players.values():
        nl.play(RULES, (p, nl.HEURISTIC), nl.Deals(20, 0))  # compile and warm up
        p.decisions = p.scored = 0
        if isinstance(p, CnnPlayer):
            p.remembered = p.rescored = 0
            p.forget()
    seconds, records = {}, {}
    for name, p in players.items():
        t0 = time.perf_counter()
        records[name] = nl.play(
            RULES, (p, nl.HEURISTIC), nl.Deals(deals, 2), batch_deals=batch_deals
        )
        seconds[name] = time.perf_counter() - t0
    ref = players["reference"]
    for name, p in players.items():
        rec = records[name]
        same = np.mean(rec.payoff == records["reference"].payoff)
        extra = ""
        if isinstance(p, CnnPlayer) and p.memo is not None:
            extra = f", {p.remembered / p.decisions:.1%} of decisions remembered"
        if isinstance(p, CnnPlayer) and p.precision == "bfloat16-checked":
            extra += f", {p.rescored / p.scored:.1%} of candidates rescored in float32"
        print(
            f"{name}: {p.decisions:,} decisions in {seconds[name]:.1f} s = "
            f"{p.decisions / seconds[name]:,.1f} decisions/s, {p.scored / seconds[name]:,.0f} "
            f"candidates scored/s{extra}; {seconds['reference'] / seconds[name]:.2f}x the "
            f"reference; hands with the reference's result {same:.2%}"
        )
    assert ref.decisions == players["this"].decisions
    exact = [n for n in seconds if n != "reference" and "bfloat16" not in n]
    fastest = min(exact, key=lambda n: seconds[n])
    arithmetic_peak(players[fastest], seconds[fastest])
    arithmetic_peak(players["this, compiled, bfloat16"], seconds["this, compiled, bfloat16"])


def gemm_rate(dtype: torch.dtype) -> float:
    """Multiply-adds per second of a 4096^3 matrix product in `dtype` (all threads)."""
    a, b = torch.randn(4096, 4096, dtype=dtype), torch.randn(4096, 4096, dtype=dtype)
    a @ b
    t0 = time.perf_counter()
    for _ in range(3):
        a @ b
    return 3 * 4096**3 / (time.perf_counter() - t0)


def candidate_multiply_adds(player: CnnPlayer) -> int:
    """Multiply-adds the player spends on one candidate after the shared first layer."""
    f1, f2 = (int(c.out_channels) for c in (player.conv1, player.model.features[5]))
    k = int(player.conv1.kernel_size[0])
    crop = player.crop
    cols = 2 * (crop.pooled.stop - crop.pooled.start) if crop else 17
    dense = player.model.head[1]
    return (
        f1 * f1 * k * k * 17 * cols
        + f1 * f2 * k * k * 64
        + f2 * f2 * k * k * 64
        + dense.in_features * dense.out_features
    )


def training_multiply_adds(model: PokerCNN) -> int:
    """Multiply-adds of one training sample: the forward pass, the weight gradients (as many)
    and the input gradients of every layer but the first (as many as its forward)."""
    side, forward, first = SIZE, 0, 0
    for layer in model.features:
        if isinstance(layer, torch.nn.MaxPool2d):
            side //= 2
        elif isinstance(layer, torch.nn.Conv2d):
            k = int(layer.kernel_size[0])
            macs = side * side * layer.in_channels * layer.out_channels * k * k
            first = first or macs
            forward += macs
    forward += sum(m.in_features * m.out_features for m in model.head if hasattr(m, "in_features"))
    return 3 * forward - first


def arithmetic_peak(player: CnnPlayer, seconds: float) -> None:
    """The network's multiply-adds per second against a large matrix product's in the
    player's precision."""
    dtype = torch.float32 if player.precision == "float32" else torch.bfloat16
    gemm = gemm_rate(dtype)
    per_candidate = candidate_multiply_adds(player)
    rate = per_candidate * player.scored / seconds
    print(
        f"arithmetic: {per_candidate / 1e6:.1f} M multiply-adds per candidate after the first "
        f"layer = {rate / 1e9:.1f} G/s in {player.precision}, against {gemm / 1e9:.1f} G/s for "
        f"a 4096^3 {str(dtype)[6:]} matrix product ({rate / gemm:.0%})"
    )


Decision = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def _recorded_decisions(player: CnnPlayer, deals: int) -> list[Decision]:
    """(state planes, candidate rows, candidate patterns, streets) of each batch of decisions
    `player` makes in `deals` deals against the heuristic."""
    decisions = []

    class _Recorder:
        def choose(self, batch: nl.TableBatch, tables: np.ndarray):
            row, kind, _to, added, states = player._candidates(batch, tables)
            pattern = player._patterns(added, kind, RULES.small_blind)
            decisions.append((states, row, pattern, batch.state[tables, nl.ROUND].copy()))
            return player.choose(batch, tables)

    nl.play(RULES, (_Recorder(), nl.HEURISTIC), nl.Deals(deals, 11), batch_deals=min(deals, 300))
    return decisions


def bfloat16(deals: int, store_root: str, key: str) -> None:
    """The network after its first layer in bfloat16, plain and checked, against float32 on
    the same recorded candidates: time, score error, top-two gaps and argmax moves by street."""
    from gameforge.engines.nlhe.net import CHECK_MARGIN, _argmax_per_row

    player, label = _network(store_root, key)
    player.memo = None
    decisions = _recorded_decisions(player, deals)
    model = player.model
    scorers = {p: CnnPlayer(model, remember=False, precision=p) for p in PRECISIONS}
    for p in scorers.values():  # warm up
        p._score(*decisions[0][:3])
        p.rescored = 0
    seconds = dict.fromkeys(scorers, 0.0)
    moved = {p: np.zeros(4, np.int64) for p in scorers}
    seen, worst, gaps, candidates = np.zeros(4, np.int64), 0.0, [], 0
    for states, row, pattern, street in decisions:
        scores = {}
        for name, p in scorers.items():
            t0 = time.perf_counter()
            scores[name] = p._score(states, row, pattern)
            seconds[name] += time.perf_counter() - t0
        exact = scores["float32"]
        worst = max(worst, float(np.abs(scores["bfloat16"] - exact).max()))
        best = {n: _argmax_per_row(row, s, len(states)) for n, s in scores.items()}
        np.add.at(seen, street, 1)
        for name in scorers:
            np.add.at(moved[name], street[best[name] != best["float32"]], 1)
        candidates += len(row)
        for j in range(len(states)):
            mine = np.sort(exact[row == j])
            if len(mine) > 1:
                gaps.append(mine[-1] - mine[-2])
    print(f"network: {label}; {int(seen.sum()):,} decisions, {candidates:,} candidates")
    print(f"largest |bfloat16 - float32| score: {worst:.4f} (check margin {CHECK_MARGIN})")
    q = np.quantile(gaps, [0.1, 0.5, 0.9])
    print(f"float32 gap between a decision's two best scores, 10/50/90%: {q[0]:.5f} {q[1]:.5f} "
          f"{q[2]:.5f}")  # fmt: skip
    for name, p in scorers.items():
        by_street = ", ".join(f"{m}/{n}" for m, n in zip(moved[name], seen, strict=True))
        rescored = f", {p.rescored / candidates:.1%} rescored" if p.rescored else ""
        print(
            f"{name}: {seconds[name]:.1f} s, {seconds['float32'] / seconds[name]:.2f}x float32"
            f"{rescored}; argmax moved (preflop..river) {by_street}"
        )


def quantized(deals: int, store_root: str, key: str) -> None:
    """int8 (x86 backend, static, FX) for everything after the second convolution, against
    float32 on the same candidates: speed, score error and the argmax per decision."""
    import copy
    import warnings

    from torch import nn
    from torch.ao.quantization import get_default_qconfig_mapping
    from torch.ao.quantization.quantize_fx import convert_fx, prepare_fx

    warnings.filterwarnings("ignore")
    player, label = _network(store_root, key)
    player.memo = None
    model = player.model
    decisions = _recorded_decisions(player, deals)

    def second_layer(states: np.ndarray, row: np.ndarray, pattern: np.ndarray) -> torch.Tensor:
        with torch.no_grad():
            s1 = player._first_columns(player.conv1(torch.from_numpy(states)))
            h = s1.index_select(0, torch.from_numpy(row))
            h.add_(player.patterns.index_select(0, torch.from_numpy(pattern)))
            assert player.crop is not None
            conv2 = player.model.features[2]
            return player._cropped_second_layer(h.relu_(), conv2, player.zero_pooled, player.crop)

    tail = nn.Sequential(*list(model.features[5:]), model.head).eval()
    calibration = [second_layer(*d[:3]) for d in decisions[:3]]
    torch.backends.quantized.engine = "x86"
    prepared = prepare_fx(
        copy.deepcopy(tail), get_default_qconfig_mapping("x86"), (calibration[0][:8],)
    )
    with torch.no_grad():
        for x in calibration:
            prepared(x)
    int8 = convert_fx(prepared)
    flips, seen, worst = np.zeros(4), np.zeros(4), 0.0
    fp_s = q_s = 0.0
    with torch.no_grad():
        for states, row, pattern, street in decisions[3:]:
            x = second_layer(states, row, pattern)
            t0 = time.perf_counter()
            a = tail(x).squeeze(1).numpy()
            fp_s += time.perf_counter() - t0
            t0 = time.perf_counter()
            b = int8(x).squeeze(1).numpy()
            q_s += time.perf_counter() - t0
            worst = max(worst, float(np.abs(a - b).max()))
            for j in range(len(states)):
                mine = row == j
                seen[street[j]] += 1
                flips[street[j]] += a[mine].argmax() != b[mine].argmax()
    by_street = ", ".join(f"{int(f)}/{int(n)}" for f, n in zip(flips, seen, strict=True))
    print(
        f"network: {label}. int8 after the second convolution: {fp_s / q_s:.2f}x float32 on "
        f"that part; largest score error {worst:.4f}; decisions whose argmax moves, preflop.."
        f"river: {by_street}"
    )


def train(samples: int, device: str) -> dict[str, float]:
    """Training samples per second for one epoch of the paper's network."""
    rec_deals = samples // 12 + 1
    rec = nl.play(RULES, (nl.HEURISTIC, nl.HEURISTIC), nl.Deals(rec_deals, 3), n_threads=2)

    class _Hist:  # what Samples reads from a histories artifact
        params = {"game": NLHE_GAME}

        def __getitem__(self, name: str) -> np.ndarray:
            starts = np.concatenate([[0], np.cumsum(rec.counts)])
            return {
                "cards": rec.cards,
                "hand_start": starts,
                "actions": rec.actions,
                "payoff": rec.payoff,
            }[name]

    data = Samples(_Hist(), canonical=False)  # type: ignore[arg-type]
    ids = np.arange(min(samples, len(data)))
    rates = {}
    for compiled, low in ((False, False), (True, False), (False, True)):
        torch.manual_seed(0)
        model = PokerCNN(NetConfig()).to(device)
        opt = make_optimiser(model)
        net = torch.compile(model) if compiled else model
        placement = Placement(device, bfloat16=low)
        train_epoch(net, opt, data.batch, ids[:512], 128, 0, placement)  # warm up
        t0 = time.perf_counter()
        loss = train_epoch(net, opt, data.batch, ids, 128, 1, placement)
        rates[compiled, low] = len(ids) / (time.perf_counter() - t0)
        how = ", torch.compile" if compiled else ", bfloat16 autocast" if low else ""
        print(
            f"training on {device}{how}: {len(ids):,} samples = {rates[compiled, low]:,.0f} "
            f"samples/s, mean loss {loss:.6f}"
        )
    eager = rates[False, False]
    print(
        f"torch.compile: {rates[True, False] / eager:.2f}x eager; bfloat16 autocast: "
        f"{rates[False, True] / eager:.2f}x eager"
    )
    dt = len(ids) / eager
    t0 = time.perf_counter()
    for b in range(0, len(ids), 128):
        data.batch(ids[b : b + 128])
    encode_s = time.perf_counter() - t0
    rate = len(ids) / dt
    print(f"encoding alone: {len(ids) / encode_s:,.0f} samples/s")
    return {"samples_per_s": rate}


def paper_cnn_decisions(actions_per_hand: float) -> float:
    """CNN decisions of `gameforge run nlhe-cnn --preset paper`: its CNN seats in generations 2
    and 3's histories (pairings with replacement, 200,000 hands) and in the league."""
    cnn_decisions = 0.0
    for g in (2, 3):
        roster = g  # heuristic + g-1 CNNs
        pairs = roster * (roster + 1) // 2
        seats_cnn = sum(
            (i > 0) + (j > 0) for i in range(roster) for j in range(i, roster)
        )  # CNN seats over all pairings
        cnn_decisions += 200_000 * actions_per_hand * seats_cnn / (2 * pairs)
    players = ["random", "heuristic", "cnn", "cnn", "cnn"]
    for i in range(5):
        for j in range(i + 1, 5):
            seats = (players[i] == "cnn") + (players[j] == "cnn")
            cnn_decisions += 100_000 * actions_per_hand * seats / 2
    return cnn_decisions


def paper_training_samples(actions_per_hand: float) -> float:
    """Training samples of the `paper` preset: 3 generations x 3 epochs of 200,000 hands."""
    return 3 * 3 * 200_000 * actions_per_hand


def project(sp: dict[str, float], cn: dict[str, float], tr: dict[str, float]) -> None:
    """Wall time of `gameforge run nlhe-cnn --preset paper` from the measured rates."""
    samples = paper_training_samples(sp["actions_per_hand"])
    train_s = samples / tr["samples_per_s"]
    decisions = paper_cnn_decisions(sp["actions_per_hand"])
    play_s = decisions / cn["decisions_per_s"]
    total = train_s + play_s
    print(
        f"paper preset projection on this machine: training {train_s / 3600:.1f} h "
        f"({samples:,.0f} samples), CNN play {play_s / 3600:.1f} h "
        f"({decisions:,.0f} CNN decisions), total {total / 3600:.1f} h"
    )


class _StreetTally(CnnPlayer):
    """A CNN player that also counts its decisions and their candidates per betting round."""

    def __init__(self, model: PokerCNN, **kw: object):
        super().__init__(model, **kw)  # type: ignore[arg-type]
        self.decisions_by_round = np.zeros(4, np.int64)
        self.candidates_by_round = np.zeros(4, np.int64)

    def choose(self, batch: nl.TableBatch, tables: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Count, then choose as the CNN player does."""
        row = self._candidates(batch, tables)[0]
        rounds = batch.state[tables, nl.ROUND]
        np.add.at(self.decisions_by_round, rounds, 1)
        np.add.at(self.candidates_by_round, rounds, np.bincount(row, minlength=len(tables)))
        return super().choose(batch, tables)


def ceiling(deals: int) -> None:
    """A lower bound of the `paper` preset's wall time here: its multiply-adds at the speed of a
    large matrix product, every preflop decision taken as free (remembered), nothing else
    counted (no encoding, no play, no overhead)."""
    rec = nl.play(RULES, (nl.HEURISTIC, nl.HEURISTIC), nl.Deals(20_000, 1), n_threads=2)
    actions_per_hand = float(rec.counts.mean())
    torch.manual_seed(0)
    player = _StreetTally(PokerCNN(NetConfig()).eval())
    nl.play(RULES, (player, nl.HEURISTIC), nl.Deals(deals, 2), batch_deals=deals)
    later = player.decisions_by_round[1:].sum()
    preflop_share = player.decisions_by_round[0] / player.decisions_by_round.sum()
    per_later = player.candidates_by_round[1:].sum() / later
    decisions = paper_cnn_decisions(actions_per_hand)
    decision_macs = decisions * (1 - preflop_share) * per_later * candidate_multiply_adds(player)
    samples = paper_training_samples(actions_per_hand)
    per_sample = training_multiply_adds(player.model)
    train_macs = samples * per_sample
    print(
        f"heuristic self-play: {actions_per_hand:.2f} actions per hand; an untrained CNN against "
        f"the heuristic ({2 * deals:,} hands): {preflop_share:.1%} of its decisions preflop, "
        f"{per_later:.1f} candidates per later decision"
    )
    print(
        f"paper preset: {decisions:,.0f} CNN decisions, {decision_macs / 1e15:.2f} P multiply-"
        f"adds after the first layer with every preflop one free; {samples:,.0f} training "
        f"samples x {per_sample / 1e6:.1f} M = "
        f"{train_macs / 1e15:.2f} P"
    )
    kinds = [torch.float32]
    if torch.ops.mkldnn._is_mkldnn_bf16_supported():
        kinds.append(torch.bfloat16)
    else:
        print("no bfloat16 hardware (oneDNN): bfloat16 would be emulated")
    for dtype in kinds:
        rate = gemm_rate(dtype)
        play_h, train_h = decision_macs / rate / 3600, train_macs / rate / 3600
        print(
            f"at a 4096^3 {str(dtype)[6:]} matrix product's {rate / 1e9:.1f} G multiply-adds/s: "
            f"decisions >= {play_h:.2f} h, training >= {train_h:.2f} h, "
            f"the preset >= {play_h + train_h:.2f} h"
        )


def main() -> None:
    """Run the chosen measurements."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "what",
        choices=(
            "selfplay",
            "cnn",
            "scoring",
            "bfloat16",
            "quantized",
            "train",
            "ceiling",
            "all",
            "variants",
            "report",
        ),  # fmt: skip
    )
    parser.add_argument("--reference", help="scoring: another engines/nlhe/net.py to time")
    parser.add_argument(
        "--network", default="", help="scoring: an nlhe-train key in --store; report: a league"
    )
    parser.add_argument("--store", default="/tmp/nlhe_variants")
    parser.add_argument("--hands", default="8000,3000", help="variants: gen-1, later hands")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--league-hands", type=int, default=2000)
    parser.add_argument("--deals", type=int, default=0)
    parser.add_argument("--samples", type=int, default=20_000)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--seeds", type=int, default=1, help="variants: seeds per variant")
    parser.add_argument(
        "--variants", default="", help="variants: comma-separated names (default: all)"
    )
    args = parser.parse_args()
    torch.set_num_threads(os.cpu_count() or 1)
    print(
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"torch {torch.__version__} ({torch.get_num_threads()} threads)"
    )
    if args.what == "selfplay":
        selfplay(args.deals or 200_000)
    elif args.what == "cnn":
        cnn(args.deals or 500)
    elif args.what == "scoring":
        scoring(args.deals or 1000, args.reference, args.store, args.network)
    elif args.what == "bfloat16":
        bfloat16(args.deals or 600, args.store, args.network)
    elif args.what == "quantized":
        quantized(args.deals or 300, args.store, args.network)
    elif args.what == "train":
        train(args.samples, args.device)
    elif args.what == "ceiling":
        ceiling(args.deals or 300)
    elif args.what == "report":
        report(args.store, args.network)
    elif args.what == "variants":
        first, later = (int(x) for x in args.hands.split(","))
        names = [v.strip() for v in args.variants.split(",") if v.strip()] or list(VARIANTS)
        variants(args.store, (first, later), args.epochs, args.league_hands, names, args.seeds)
    else:
        sp = selfplay(args.deals or 200_000)
        cn = cnn(500)
        tr = train(args.samples, args.device)
        project(sp, cn, tr)


# The paper's league (Hwang & Kaneko 2016, Table 3): row player's mean BB per hand.
PAPER_PLAYERS = ("random", "heuristic", "CNN-1g", "CNN-2g", "CNN-3g")
PAPER_TABLE = np.array([
    [0.0, -6.82, 0.78, 0.10, -0.58],
    [6.82, 0.0, 3.57, 3.74, 7.86],
    [-0.78, -3.57, 0.0, -0.28, -2.35],
    [-0.10, -3.74, 0.28, 0.0, -5.32],
    [0.58, -7.86, 2.35, 5.32, 0.0],
])  # fmt: skip


def report(store_root: str, league_key: str) -> None:
    """A stored league (the newest `nlhe-league` in the store by default) beside the paper's."""
    from gameforge.artifacts import ArtifactStore

    store = ArtifactStore(store_root)
    if not league_key:
        stored: list[str] = store.keys()
        leagues = sorted(
            (store.open(k) for k in stored if k.startswith("nlhe-league-")),
            key=lambda a: a.meta["finished"],
        )
        if not leagues:
            raise SystemExit(f"no nlhe-league artifact in {store_root}")
        league_key = leagues[-1].key
    art = store.open(league_key)
    labels = art.meta["summary"]["players"]
    table = np.asarray(art["bb_per_hand"][:])
    ci = np.asarray(art["ci95"][:])
    hands = np.asarray(art["hands"][:])
    print(f"{league_key}: {int(hands[0, 1]):,} hands per pairing; each cell: this run's row "
          f"player's BB/hand ± 95%, then the paper's\n")  # fmt: skip
    print("| | " + " | ".join(labels) + " |")
    print("|---|" + "---:|" * len(labels))
    for i, row in enumerate(labels):
        cells = []
        for j, col in enumerate(labels):
            paper = ""
            if row in PAPER_PLAYERS and col in PAPER_PLAYERS:
                paper = f" ({PAPER_TABLE[PAPER_PLAYERS.index(row), PAPER_PLAYERS.index(col)]:+.2f})"
            cells.append("" if i == j else f"{table[i, j]:+.2f} ± {ci[i, j]:.2f}{paper}")
        print(f"| {row} | " + " | ".join(cells) + " |")
    mix = np.asarray(art["action_mix"][:]).astype(float)
    sizes = np.asarray(art["raise_sizes"][:]).astype(float)
    print("\n| player | fold | check/call | bet/raise | raises <=1/2 pot | <=1 pot | <=2 pots "
          "| >2 pots | all-in |")  # fmt: skip
    print("|---|" + "---:|" * 8)
    for k, name in enumerate(labels):
        m = mix[k] / max(mix[k].sum(), 1)
        z = sizes[k] / max(sizes[k].sum(), 1)
        print(f"| {name} | " + " | ".join(f"{x:.3f}" for x in (*m, *z)) + " |")
    print("\n| stage | key | wall h | CPU h | processes |")
    print("|---|---|---:|---:|---:|")
    seen: set[str] = set()

    def lineage(key: str) -> list[str]:
        if key in seen:
            return []
        seen.add(key)
        out = []
        for upstream in store.open(key).inputs.values():
            out += lineage(upstream)
        return [*out, key]

    total = 0.0
    for key in lineage(league_key):
        built = store.open(key).meta.get("provenance", {})
        wall = built.get("wall_s_all_attempts", built.get("wall_s", 0.0))
        cpu = built.get("cpu_s_all_attempts", built.get("cpu_s", 0.0))
        total += wall
        print(f"| {store.open(key).meta['stage']} | {key} | {wall / 3600:.2f} | {cpu / 3600:.2f} "
              f"| {built.get('attempts', 1)} |")  # fmt: skip
    print(
        f"\nin all: {total / 3600:.2f} h of wall time (a killed process counted to its last "
        "checkpoint)"
    )


# The paper's future-work options, one at a time and all together (`variants` mode).
VARIANTS = {
    "paper settings": [],
    "suit canonicalisation": ["canonical_suits=true"],
    "20 BB stacks": ["game=holdem.nolimit.2p.20bb"],
    "3x3 filters": ["kernel=3"],
    "card-aware heuristic": ["nlhe-histories.players=heuristic-cards"],
    "all four": [
        "canonical_suits=true",
        "game=holdem.nolimit.2p.20bb",
        "kernel=3",
        "nlhe-histories.players=heuristic-cards",
    ],
}


def _seed_overrides(seed: int) -> list[str]:
    """Seed 0 is the flow's own seeds; seed s moves every histories, training and league seed."""
    if seed == 0:
        return []
    out = [f"histories-{g}.seed={g + 100 * seed}" for g in (1, 2, 3)]
    return out + [f"train-{g}.seed={seed}" for g in (1, 2, 3)]


def variants(
    store_root: str,
    hands: tuple[int, int],
    epochs: int,
    league_hands: int,
    names: list[str],
    seeds: int,
) -> None:
    """Train three generations per variant and seed; play generation 3 against the heuristics.

    Across seeds, the mean of each result comes with a 95% Student-t interval over the seeds
    (n - 1 degrees of freedom): the spread of whole pipelines, not of hands within one.
    """
    from gameforge.artifacts import ArtifactStore
    from gameforge.engines.common.stats import t_half_width
    from gameforge.flows.pipeline import run_plan
    from gameforge.flows.request import RunRequest
    from gameforge.flows.specs import get_flow
    from gameforge.stages.runner import run_stage

    spec = get_flow("nlhe-cnn")
    store = ArtifactStore(store_root)
    scale = [f"histories-1.hands={hands[0]}", f"histories-2.hands={hands[1]}",
             f"histories-3.hands={hands[1]}", f"epochs={epochs}"]  # fmt: skip
    rows = []
    for name in names:
        for seed in range(seeds):
            t0 = time.perf_counter()
            sets = scale + VARIANTS[name] + _seed_overrides(seed)
            only = [n.name for n in spec.nodes if n.name != "league"]
            asked = RunRequest(flow=spec.name, preset="small", overrides=sets, only=only)
            params = asked.resolve().params
            results = run_plan(asked, store, log=lambda m: None)
            game = params["league"].get("game", NLHE_GAME)
            league = run_stage(
                "nlhe-league",
                {
                    "game": game,
                    "players": ["heuristic", "heuristic-cards"],
                    "hands": league_hands,
                    "seed": 1 + 100 * seed,
                },  # fmt: skip
                {"cnn.0": results["train-3"].key},
                store=store,
                log=lambda m: None,
            )
            art = store.open(league.key)
            table = np.asarray(art["bb_per_hand"][:])
            ci = np.asarray(art["ci95"][:])
            row = (name, seed, table[2, 0], ci[2, 0], table[2, 1], ci[2, 1],
                   time.perf_counter() - t0, league.key)  # fmt: skip
            rows.append(row)
            print(f"{name}, seed {seed}: CNN-3g vs heuristic {row[2]:+.2f} ± {row[3]:.2f}, vs "
                  f"card-aware {row[4]:+.2f} ± {row[5]:.2f} BB/hand ({row[6]:.0f} s, "
                  f"{league.key})", flush=True)  # fmt: skip
    print("\n| variant | seed | CNN-3g vs heuristic | CNN-3g vs card-aware heuristic | seconds |")
    print("|---|---:|---:|---:|---:|")
    for name, seed, a, ca, b, cb, s, _ in rows:
        print(f"| {name} | {seed} | {a:+.2f} ± {ca:.2f} | {b:+.2f} ± {cb:.2f} | {s:.0f} |")
    if seeds < 2:
        return
    print(f"\nAcross {seeds} seeds (mean, 95% t-interval over seeds):\n")
    print("| variant | CNN-3g vs heuristic | CNN-3g vs card-aware heuristic |")
    print("|---|---:|---:|")
    for name in names:
        mine = [r for r in rows if r[0] == name]
        cells = []
        for col in (2, 4):
            x = np.array([r[col] for r in mine])
            half = t_half_width(x)
            cells.append(f"{x.mean():+.2f} ± {half:.2f}")
        print(f"| {name} | {cells[0]} | {cells[1]} |")


if __name__ == "__main__":
    main()
