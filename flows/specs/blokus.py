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
    # Every key is a stage field's name, but for `eval_games` (games of each evaluation) and
    # `last_eval_games` (of the last iteration's); `sims` is self-play's and the evaluation's
    # `zero_sims`, and the train nodes' `lr_late` is a tenth of `lr`.
    # net: blocks x filters; sims: BlokusZero simulations per move; games and steps per
    # iteration; the small preset trains faster with a larger learning rate and symmetry
    # augmentation (the paper's suggestion), and its 64 simulations search in depth with a
    # first-play-urgency reduction (fpu_reduction; None: the paper's Q = 0, under which 64
    # simulations visit each root child at most once); its self-play blends one rollout into
    # each leaf value (rollout_mix, AlphaGo's mixing) so the first generations' search targets
    # are not a random network's values, and its root follows the Gumbel rule (root_rule:
    # sequential halving over 16 Gumbel-sampled moves, trained towards the improved policy),
    # which improves the policy with fewer simulations than legal moves; its policy loss is a
    # softmax over the legal placements (legal_softmax), the set the search renormalises the
    # priors over, so 480 games are not spent learning which are illegal; its value loss is
    # weighted 0.1 (value_weight), which slows the value head's memorising of the outcomes of
    # its few games (it does not stop it in the flow: see bench/BENCHMARKS.md).
    # Evaluation plays the search self-play trains with (the same `_SEARCH` settings), without
    # noise; `bench_blokus.py probe --mix 0` measures the network-only search beside it.
    "tiny": {"blocks": 1, "filters": 8, "policy_head": "conv", "sims": 2, "games": 2,
             "parallel": 2, "steps": 4, "buffer_games": 100, "lr": 0.001, "lr_drop_step": 40_000,
             "augment": False, "eval_games": 1, "last_eval_games": 2, "mcts_sims": 4,
             "fpu_reduction": 0.25, "rollout_mix": 0.5, "root_rule": "gumbel",
             "legal_softmax": True, "value_weight": 1.0},
    "small": {"blocks": 4, "filters": 64, "sims": 64, "games": 48, "parallel": 48,
              "steps": 300, "buffer_games": 2000, "lr": 0.01, "lr_drop_step": 1700,
              "augment": True, "eval_games": 12, "last_eval_games": 120, "mcts_sims": 64,
              "fpu_reduction": 0.25, "rollout_mix": 0.5, "root_rule": "gumbel",
              "legal_softmax": True, "value_weight": 0.1},
    "paper": {"blocks": 10, "filters": 128, "sims": 800, "games": 7000, "parallel": 32,
              "steps": 7000, "buffer_games": 10_000, "lr": 0.001, "lr_drop_step": 40_000,
              "augment": False, "eval_games": 300, "last_eval_games": 300, "mcts_sims": 800,
              "fpu_reduction": None, "rollout_mix": 0.0, "root_rule": "puct",
              "legal_softmax": False, "value_weight": 1.0},
}  # fmt: skip
# The search settings self-play and evaluation share; the training nodes' settings.
_SEARCH = ("fpu_reduction", "rollout_mix", "root_rule")
_TRAINING = ("steps", "buffer_games", "lr", "lr_drop_step", "augment", "legal_softmax",
             "value_weight")  # fmt: skip


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
    if "policy_head" in v:  # tiny's: the dense head alone is 87 MB a generation
        net["policy_head"] = v["policy_head"]
    search = {name: v[name] for name in _SEARCH}
    train = {**net, **{name: v[name] for name in _TRAINING}, "lr_late": v["lr"] / 10}
    out: dict[str, dict[str, Any]] = {}
    for i in range(1, BLOKUS_ITERATIONS + 1):
        out[f"selfplay-{i}"] = {**net, **search, "sims": v["sims"], "games": v["games"],
                                "parallel": v["parallel"], "seed": i}  # fmt: skip
        out[f"train-{i}"] = {**train, "seed": i}
        last = i == BLOKUS_ITERATIONS
        out[f"eval-{i}"] = {**search, "games": v["last_eval_games"] if last else v["eval_games"],
                            "zero_sims": v["sims"], "mcts_sims": v["mcts_sims"],
                            "seed": 20_000_003 + i}  # fmt: skip
    return out


BLOKUS_ZERO = FlowSpec(
    name="blokus-zero",
    description="Blokus: BlokusZero self-play and training (10 iterations), eval vs MCTS-MAXN",
    nodes=_blokus_nodes(),
    findings=("eval-1", f"eval-{BLOKUS_ITERATIONS}"),
    options=(*_SEARCH, "value_margin"),  # a bare --set of these sets the whole run
    presets={name: _blokus_preset(values) for name, values in _BLOKUS.items()},
)


# Blokus on a CPU (beyond the paper): self-play alone gives a 2-core machine too few games for a
# value head, so the network starts from MCTS-MAXN's rollout policy, as AlphaGo started from a
# fast policy: `rollouts` plays its games (a millisecond each) with targets at a few positions
# per game, `pretrain` fits the network to them, then `BOOTSTRAP_ITERATIONS` rounds of
# self-play continue it, the rollout games staying in the buffer. The network always searches
# alone (rollout_mix 0), so what it wins is learnt; the first and last evaluations play an
# untrained network of the same shape on the same games (`control`), and `curve` draws it at
# step 0.
BOOTSTRAP_ITERATIONS = 2
_BOOTSTRAP: dict[str, dict[str, Any]] = {
    # rollout games (`rollout_games`, the rollouts node's `games`) and the targets per game; the
    # net (6x32 with the convolutional policy head trains at about 6 steps/s here); pretraining
    # steps (`pretrain_steps`), lr and its drop; self-play games and steps per iteration at a
    # tenth of the pretraining lr; games of the first and last evaluations (with the control,
    # `last_eval_games`) and of the others (`eval_games`)
    "tiny": {"rollout_games": 40, "positions": 2, "value_rollouts": 2, "blocks": 1,
             "filters": 8, "pretrain_steps": 4, "lr": 0.01, "lr_drop_step": 2, "sims": 2,
             "games": 2, "parallel": 2, "steps": 2, "last_eval_games": 2, "eval_games": 1},
    "cpu": {"rollout_games": 20_000, "positions": 4, "value_rollouts": 16, "blocks": 6,
            "filters": 32, "pretrain_steps": 6000, "lr": 0.01, "lr_drop_step": 4500, "sims": 64,
            "games": 96, "parallel": 48, "steps": 1000, "last_eval_games": 240,
            "eval_games": 48},
}  # fmt: skip


def _bootstrap_nodes() -> tuple[Node, ...]:
    nodes = [
        Node("blokus-rollouts", id="rollouts"),
        Node("blokus-train", inputs={"games.0": "rollouts"}, id="pretrain"),
        Node("blokus-eval", inputs={"net.0": "pretrain"}, id="eval-0"),
    ]
    previous = "pretrain"
    for i in range(1, BOOTSTRAP_ITERATIONS + 1):
        nodes.append(Node("blokus-selfplay", inputs={"net": previous}, id=f"selfplay-{i}"))
        buffer = {"games.0": "rollouts", **{f"games.{j}": f"selfplay-{j}" for j in range(1, i + 1)}}
        nodes.append(Node("blokus-train", inputs={**buffer, "previous": previous}, id=f"train-{i}"))
        nodes.append(Node("blokus-eval", inputs={"net.0": f"train-{i}"}, id=f"eval-{i}"))
        previous = f"train-{i}"
    evals = {f"evals.{i}": f"eval-{i}" for i in range(BOOTSTRAP_ITERATIONS + 1)}
    nodes.append(Node("blokus-curve", inputs=evals, id="curve"))
    return tuple(nodes)


def _bootstrap_preset(v: dict[str, Any]) -> dict[str, dict[str, Any]]:
    net = {"blocks": v["blocks"], "filters": v["filters"], "policy_head": "conv"}
    # one seed for every training node: a step's batch depends on (seed, global step) only,
    # and both controls are then the pretraining's own starting network
    train = {**net, "augment": True, "legal_softmax": True, "value_weight": 1.0, "seed": 1,
             "buffer_games": v["rollout_games"] + BOOTSTRAP_ITERATIONS * v["games"]}  # fmt: skip
    search = {"fpu_reduction": 0.25, "root_rule": "gumbel", "rollout_mix": 0.0}
    rollouts = {"games": v["rollout_games"], "positions": v["positions"],
                "value_rollouts": v["value_rollouts"], "seed": 1}  # fmt: skip
    pretrain = {**train, "steps": v["pretrain_steps"], "lr": v["lr"], "lr_late": v["lr"] / 10,
                "lr_drop_step": v["lr_drop_step"]}  # fmt: skip
    out: dict[str, dict[str, Any]] = {"rollouts": rollouts, "pretrain": pretrain}
    for i in range(BOOTSTRAP_ITERATIONS + 1):
        ends = i in (0, BOOTSTRAP_ITERATIONS)
        out[f"eval-{i}"] = {**search, "games": v["last_eval_games"] if ends else v["eval_games"],
                            "zero_sims": v["sims"], "mcts_sims": v["sims"],
                            "parallel": v["parallel"], "control": ends,
                            "seed": 20_000_013 + i}  # fmt: skip
    for i in range(1, BOOTSTRAP_ITERATIONS + 1):
        out[f"selfplay-{i}"] = {**net, **search, "sims": v["sims"], "games": v["games"],
                                "parallel": v["parallel"], "seed": i}  # fmt: skip
        out[f"train-{i}"] = {**train, "steps": v["steps"], "lr": v["lr"] / 10,
                             "lr_late": v["lr"] / 10, "lr_drop_step": 0}  # fmt: skip
    return out


BLOKUS_BOOTSTRAP = FlowSpec(
    name="blokus-bootstrap",
    description="Blokus on a CPU: a network from rollout-policy games, then self-play; "
    "evaluated searching alone beside an untrained control",
    nodes=_bootstrap_nodes(),
    findings=("eval-0", f"eval-{BOOTSTRAP_ITERATIONS}"),
    options=(*_SEARCH, "value_margin"),  # a bare --set of these sets the whole run
    presets={name: _bootstrap_preset(values) for name, values in _BOOTSTRAP.items()},
)

FLOWS = (BLOKUS_ZERO, BLOKUS_BOOTSTRAP)
