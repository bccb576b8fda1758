"""The Blokus flow: BlokusZero self-play, training and evaluation against MCTS-MAXN."""

from __future__ import annotations

from typing import Any

from gameforge.flows.specs.base import FlowSpec, Node

# Blokus (the BlokusZero paper): self-play -> train -> evaluate, repeated. Iteration i trains on
# the newest `buffer_games` games of all self-play runs so far (the paper's replay buffer: a
# window of a few runs holds too few games, and a value head memorises their outcomes),
# continuing generation i - 1, and evaluates the result against three MCTS-MAXN
# (with --parallel-nodes 2, beside the next self-play); `curve` gathers the evaluations into the
# learning curve.
BLOKUS_ITERATIONS = 10
_BLOKUS: dict[str, dict[str, Any]] = {
    # net: blocks x filters; sims: BlokusZero simulations per move (and MCTS-MAXN's rollouts
    # unless mcts_sims); games and steps per iteration; the small preset trains faster with a
    # larger learning rate and symmetry augmentation (the paper's suggestion), and its 64
    # simulations search in depth with a first-play-urgency reduction (fpu; None: the paper's
    # Q = 0, under which 64 simulations visit each root child at most once); its self-play
    # blends one rollout into each leaf value (mix, AlphaGo's mixing) so the first
    # generations' search targets are not a random network's values, and its root follows the
    # Gumbel rule (root: sequential halving over 16 Gumbel-sampled moves, trained towards the
    # improved policy), which improves the policy with fewer simulations than legal moves; its
    # policy loss is a softmax over the legal placements (legal_softmax), the set the search
    # renormalises the priors over, so 480 games are not spent learning which are illegal; its
    # value loss is weighted 0.1 (value_weight), which slows the value head's memorising of the
    # outcomes of its few games (it does not stop it in the flow: see bench/BENCHMARKS.md).
    # Evaluation plays the search self-play trains with (the same root rule and leaf mixing),
    # without noise; `bench_blokus.py probe --mix 0` measures the network-only search beside it.
    "tiny": {"blocks": 1, "filters": 8, "sims": 2, "games": 2, "parallel": 2, "steps": 4,
             "buffer": 100, "lr": 0.001, "drop": 40_000, "augment": False, "eval_games": 1,
             "final_games": 2, "mcts_sims": 4, "fpu": 0.25, "mix": 0.5,
             "root": "gumbel", "legal_softmax": True, "value_weight": 1.0},
    "small": {"blocks": 4, "filters": 64, "sims": 64, "games": 48, "parallel": 48,
              "steps": 300, "buffer": 2000, "lr": 0.01, "drop": 1700, "augment": True,
              "eval_games": 12, "final_games": 120, "mcts_sims": 64, "fpu": 0.25,
              "mix": 0.5, "root": "gumbel", "legal_softmax": True, "value_weight": 0.1},
    "paper": {"blocks": 10, "filters": 128, "sims": 800, "games": 7000, "parallel": 32,
              "steps": 7000, "buffer": 10_000, "lr": 0.001, "drop": 40_000, "augment": False,
              "eval_games": 300, "final_games": 300, "mcts_sims": 800, "fpu": None,
              "mix": 0.0, "root": "puct", "legal_softmax": False, "value_weight": 1.0},
}  # fmt: skip


def _blokus_nodes() -> tuple[Node, ...]:
    nodes = []
    for i in range(1, BLOKUS_ITERATIONS + 1):
        net = {"net": f"train-{i - 1}"} if i > 1 else {}
        nodes.append(Node("blokus-selfplay", inputs=net, id=f"selfplay-{i}"))
        inputs = {f"games.{j - 1}": f"selfplay-{j}" for j in range(1, i + 1)}
        if i > 1:
            inputs["previous"] = f"train-{i - 1}"
        nodes.append(Node("blokus-train", inputs=inputs, id=f"train-{i}"))
        nodes.append(Node("blokus-eval", inputs={"net.0": f"train-{i}"}, id=f"eval-{i}"))
    evals = {f"evals.{i - 1}": f"eval-{i}" for i in range(1, BLOKUS_ITERATIONS + 1)}
    nodes.append(Node("blokus-curve", inputs=evals, id="curve"))
    return tuple(nodes)


def _blokus_preset(v: dict[str, Any]) -> dict[str, dict[str, Any]]:
    net = {"blocks": v["blocks"], "filters": v["filters"]}
    out: dict[str, dict[str, Any]] = {}
    for i in range(1, BLOKUS_ITERATIONS + 1):
        out[f"selfplay-{i}"] = {**net, "sims": v["sims"], "games": v["games"],
                                "parallel": v["parallel"], "fpu_reduction": v["fpu"],
                                "rollout_mix": v["mix"], "root_rule": v["root"],
                                "seed": i}  # fmt: skip
        out[f"train-{i}"] = {**net, "steps": v["steps"], "buffer_games": v["buffer"],
                             "lr": v["lr"], "lr_late": v["lr"] / 10, "lr_drop_step": v["drop"],
                             "augment": v["augment"], "legal_softmax": v["legal_softmax"],
                             "value_weight": v["value_weight"], "seed": i}  # fmt: skip
        last = i == BLOKUS_ITERATIONS
        out[f"eval-{i}"] = {"games": v["final_games"] if last else v["eval_games"],
                            "zero_sims": v["sims"], "mcts_sims": v["mcts_sims"],
                            "fpu_reduction": v["fpu"], "root_rule": v["root"],
                            "rollout_mix": v["mix"], "seed": 20_000_003 + i}  # fmt: skip
    return out


BLOKUS_ZERO = FlowSpec(
    name="blokus-zero",
    description="Blokus: BlokusZero self-play and training (10 iterations), eval vs MCTS-MAXN",
    nodes=_blokus_nodes(),
    presets={name: _blokus_preset(values) for name, values in _BLOKUS.items()},
)
