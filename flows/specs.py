"""Flow specifications: the stages a flow chains, and its presets. No Prefect here."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gameforge.stages.base import StageError
from gameforge.stages.registry import get_stage


@dataclass(frozen=True)
class Node:
    """One stage in a flow; `inputs` maps the stage's input names to earlier nodes' names.

    A flow that runs a stage more than once (one `nlhe-train` per generation) gives each run
    its own `id`; otherwise the node is named after its stage.
    """

    stage: str
    inputs: dict[str, str] = field(default_factory=dict)
    id: str = ""

    @property
    def name(self) -> str:
        """The node's name in its flow (presets, overrides and results use it)."""
        return self.id or self.stage


@dataclass(frozen=True)
class FlowSpec:
    """A named chain of stages with parameter presets (preset -> node name -> parameters)."""

    name: str
    description: str
    nodes: tuple[Node, ...]
    presets: dict[str, dict[str, dict[str, Any]]]
    # (stage, parameter) whose preset value is a list: that stage and everything downstream of
    # it run once per value; a stage with a many-input (a league) gathers all the variants.
    sweep: tuple[str, str] | None = None

    def swept_stages(self) -> set[str]:
        """Stages that run once per sweep value (the swept one and its regular dependents)."""
        if self.sweep is None:
            return set()
        swept = {self.sweep[0]}
        for node in self.nodes:
            many = get_stage(node.stage).many_inputs
            if any(
                up in swept for name, up in node.inputs.items() if name.split(".")[0] not in many
            ):
                swept.add(node.name)
        return swept

    def node(self, name: str) -> Node:
        """The node called `name`, else the first node running stage `name`."""
        for node in self.nodes:
            if node.name == name:
                return node
        for node in self.nodes:
            if node.stage == name:
                return node
        raise StageError(f"flow {self.name} has no stage {name!r}")

    def upstream(self, name: str) -> list[str]:
        """Node `name` (or the first running stage `name`) and all it depends on, in run order."""
        wanted = {self.node(name).name}
        for node in reversed(self.nodes):
            if node.name in wanted:
                wanted.update(node.inputs.values())
        return [n.name for n in self.nodes if n.name in wanted]

    def resolve(self, preset: str, overrides: list[str] | None = None) -> dict[str, dict]:
        """Parameters per stage for a preset with `--set` overrides applied.

        An override is `node.param=value` (a node name, or a stage name for every node of that
        stage) or `param=value` (every node whose stage has `param`).
        """
        if preset not in self.presets:
            valid = ", ".join(self.presets)
            raise StageError(f"flow {self.name} has no preset {preset!r} (valid: {valid})")
        params = {n.name: dict(self.presets[preset].get(n.name, {})) for n in self.nodes}
        stage_of = {n.name: n.stage for n in self.nodes}
        for item in overrides or []:
            name, sep, raw = item.partition("=")
            if not sep or not name:
                raise StageError(f"bad --set {item!r}: expected name=value or stage.name=value")
            value = parse_value(raw)
            prefix, dot, pname = name.partition(".")
            targets = [n for n in params if dot and prefix in (n, stage_of[n])]
            if targets:
                for node in targets:
                    _check_param(stage_of[node], pname)
                    params[node][pname] = value
                continue
            takers = [n for n in params if pname_in(stage_of[n], name)]
            if not takers:
                raise StageError(f"bad --set {item!r}: no stage of flow {self.name} has {name!r}")
            for node in takers:
                params[node][name] = value
        for node, values in params.items():
            for variant in sweep_values(self, values, node):
                get_stage(stage_of[node]).make_params(variant)  # fail now, before any flow starts
        return params


def sweep_values(spec: FlowSpec, values: dict[str, Any], stage: str) -> list[dict[str, Any]]:
    """The parameter sets a stage runs with: one, or one per value of the flow's sweep."""
    if spec.sweep is None or spec.sweep[0] != stage:
        return [values]
    param = spec.sweep[1]
    chosen = values.get(param)
    if not isinstance(chosen, list) or not chosen:
        raise StageError(f"flow {spec.name}: {stage}.{param} must be a non-empty list to sweep")
    return [{**values, param: v} for v in chosen]


def pname_in(stage: str, name: str) -> bool:
    """True if `stage`'s parameter model has a field `name`."""
    return name in get_stage(stage).params_model.model_fields


def _check_param(stage: str, name: str) -> None:
    if not pname_in(stage, name):
        valid = ", ".join(sorted(get_stage(stage).params_model.model_fields))
        raise StageError(f"stage {stage}: unknown parameter {name} (valid: {valid})")


def parse_value(raw: str) -> Any:
    """`--set` values: integers, floats, true/false, none, comma-separated lists, else the
    string."""
    if "," in raw:
        return [parse_value(part) for part in raw.split(",") if part]
    lowered = raw.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    if lowered in ("none", "null"):
        return None
    for cast in (int, float):
        try:
            return cast(raw)
        except ValueError:
            pass
    return raw


_HOLDEM = "holdem.limit.2p.reverse_blinds"
_SHORT = "holdem6.limit.2p.reverse_blinds"
_SMALL = "holdem8.limit.2p.reverse_blinds"  # 32 cards: the whole chain in about a minute

LHE_ABSTRACTION = FlowSpec(
    name="lhe-abstraction",
    description="Limit Hold'em card abstraction: HS, HSD, opponent clusters, OCHS, k-means buckets",
    nodes=(
        Node("river-hs"),
        Node("hsd", inputs={"river_hs": "river-hs"}),
        Node("opponent-clusters", inputs={"hsd": "hsd"}),
        Node("ochs", inputs={"opponent_clusters": "opponent-clusters"}),
        Node("hsd-buckets", inputs={"hsd": "hsd"}),
        Node("ochs-buckets", inputs={"ochs": "ochs"}),
    ),
    presets={
        "tiny": {
            "river-hs": {"game": _SHORT, "boards_per_chunk": 256},
            "hsd": {"game": _SHORT, "hands_per_chunk": 16384},
            "opponent-clusters": {"game": _SHORT, "k": 8},
            "ochs": {"game": _SHORT, "boards_per_chunk": 256},
            "hsd-buckets": {"game": _SHORT, "k": 150},
            "ochs-buckets": {"game": _SHORT, "k": 150},
        },
        "small": {
            "river-hs": {"game": _SMALL},
            "hsd": {"game": _SMALL},
            "opponent-clusters": {"game": _SMALL, "k": 8},
            "ochs": {"game": _SMALL},
            "hsd-buckets": {"game": _SMALL, "k": 1000},
            "ochs-buckets": {"game": _SMALL, "k": 1000},
        },
        "paper": {
            "river-hs": {"game": _HOLDEM},
            "hsd": {"game": _HOLDEM},
            "opponent-clusters": {"game": _HOLDEM, "k": 8},
            "ochs": {"game": _HOLDEM},
            "hsd-buckets": {"game": _HOLDEM, "k": 9000},
            "ochs-buckets": {"game": _HOLDEM, "k": 9000, "n_groups": 8},
        },
    },
)

# Potential-aware flop and turn buckets (Ganzfried & Sandholm 2014) over the same river buckets;
# every upstream artifact is shared with lhe-abstraction. The paper preset's k-means is a full
# scan under a non-metric EMD: see bench/BENCHMARKS.md for what it costs at that scale.
_PA_K = {"tiny": 150, "small": 300, "paper": 9000}
LHE_ABSTRACTION_PA = FlowSpec(
    name="lhe-abstraction-pa",
    description="Limit Hold'em abstraction with potential-aware flop and turn buckets (G&S 2014)",
    nodes=(
        *LHE_ABSTRACTION.nodes,
        Node("potential-buckets", inputs={"ochs_buckets": "ochs-buckets"}),
    ),
    presets={
        name: {
            **stages,
            "potential-buckets": {"game": stages["ochs-buckets"]["game"], "k": _PA_K[name]},
        }
        for name, stages in LHE_ABSTRACTION.presets.items()
    },
)

# Solve the abstract game. Chance-sampled MCCFR: one iteration deals one hand and walks the
# whole betting tree (measured fastest per unit of exploitability here: bench/BENCHMARKS.md).
_SOLVE = {
    "tiny": {"algorithm": "chance", "iterations": 200_000},
    "small": {"algorithm": "chance", "iterations": 1_000_000},
    "paper": {"algorithm": "chance", "iterations": 300_000},
}
LHE_SOLVE = FlowSpec(
    name="lhe-solve",
    description="Limit Hold'em: card abstraction, then CFR on the abstract game",
    nodes=(
        *LHE_ABSTRACTION.nodes,
        Node("cfr", inputs={"middle_buckets": "hsd-buckets", "river_buckets": "ochs-buckets"}),
    ),
    presets={
        name: {**stages, "cfr": {"game": stages["ochs-buckets"]["game"], **_SOLVE[name]}}
        for name, stages in LHE_ABSTRACTION.presets.items()
    },
)

# Small games solved without card abstraction, with exact exploitability along the way.
SOLVE_LOSSLESS = FlowSpec(
    name="solve-lossless",
    description="CFR on a small game without card abstraction (Kuhn, Leduc, short-deck hold'em)",
    nodes=(Node("cfr"),),
    presets={
        "tiny": {"cfr": {"game": "kuhn.limit.2p", "algorithm": "cfr+", "iterations": 1000}},
        "small": {"cfr": {"game": "leduc.limit.2p", "algorithm": "cfr+", "iterations": 1000}},
        "paper": {
            "cfr": {
                "game": "holdem5.flop.limit.2p",
                "algorithm": "chance",
                "iterations": 20_000_000,
                "batch": 100_000,
            }
        },
    },
)

# The paper's experiment: one abstraction per opponent-cluster count (everything that does not
# depend on the count is built once), one CFR solve each, then the duplicate league.
_LEAGUE = {
    "tiny": ({"iterations": 100_000}, {"hands_per_set": 3000, "sets": 20}),
    "small": ({"iterations": 500_000}, {"hands_per_set": 3000, "sets": 100}),
    "paper": ({"iterations": 300_000}, {"hands_per_set": 3000, "sets": 3000, "matches": 9}),
}
LHE_LEAGUE = FlowSpec(
    name="lhe-league",
    description="The paper's C6/C8/C10/C12 experiment: abstractions, CFR solves, duplicate league",
    nodes=(
        *LHE_SOLVE.nodes,
        Node("league", inputs={"players": "cfr"}),
    ),
    presets={
        name: {
            **{stage: dict(values) for stage, values in stages.items()},
            "opponent-clusters": {
                **stages["opponent-clusters"],
                "k": [6, 8, 10, 12],
            },
            "cfr": {**stages["cfr"], **_LEAGUE[name][0]},
            "league": {"game": stages["cfr"]["game"], **_LEAGUE[name][1]},
        }
        for name, stages in LHE_SOLVE.presets.items()
    },
    sweep=("opponent-clusters", "k"),
)

# No-limit CNN players (the CNN paper): generation 1 learns from heuristic self-play, generation
# g from equal shares of every pairing of {heuristic, generations 1..g-1}; then the league over
# Random, Heuristic and every generation. Each generation trains from scratch.
_NLHE_NET = {"filters": [32, 64], "kernel": 5, "dense": 1024}
_NLHE = {
    # preset: (generation-1 hands, later generations' hands, train params, league hands)
    "tiny": (2_000, 1_200, {"epochs": 2, "filters": [8, 16], "kernel": 5, "dense": 64}, 1_000),
    "small": (20_000, 6_000, {"epochs": 2, **_NLHE_NET}, 2_000),
    "paper": (200_000, 200_000, {"epochs": 3, **_NLHE_NET}, 100_000),
}
NLHE_GENERATIONS = 3


def _nlhe_nodes() -> tuple[Node, ...]:
    nodes = []
    for g in range(1, NLHE_GENERATIONS + 1):
        earlier = {f"cnn.{i}": f"train-{i + 1}" for i in range(g - 1)}
        nodes.append(Node("nlhe-histories", inputs=earlier, id=f"histories-{g}"))
        nodes.append(Node("nlhe-train", inputs={"histories": f"histories-{g}"}, id=f"train-{g}"))
    league = {f"cnn.{i}": f"train-{i + 1}" for i in range(NLHE_GENERATIONS)}
    nodes.append(Node("nlhe-league", inputs=league, id="league"))
    return tuple(nodes)


NLHE_CNN = FlowSpec(
    name="nlhe-cnn",
    description="No-limit hold'em CNN players: heuristic hands, 3 generations, league in BB/hand",
    nodes=_nlhe_nodes(),
    presets={
        name: {
            **{
                f"histories-{g}": {
                    "players": ["heuristic"],
                    "hands": first if g == 1 else later,
                    "seed": g,
                }
                for g in range(1, NLHE_GENERATIONS + 1)
            },
            **{f"train-{g}": dict(train) for g in range(1, NLHE_GENERATIONS + 1)},
            "league": {"players": ["random", "heuristic"], "hands": league},
        }
        for name, (first, later, train, league) in _NLHE.items()
    },
)

# Hearts (the FALCON paper): Monte Carlo logs -> nu-SVR risk models -> learners for the paper's
# four rows (previous / new action set, without / with SVR guidance), several seeded trials
# each -> evaluation of every learning-curve snapshot.
HEARTS_VARIANTS = {
    "previous": {"actions": "previous", "svr": False},
    "new": {"actions": "new", "svr": False},
    "svr": {"actions": "previous", "svr": True},
    "both": {"actions": "new", "svr": True},
}
HEARTS_TRIALS = 5
_HEARTS = {
    # preset: (logged games, samples per label, learning games, checkpoints, eval games, ranks)
    "tiny": (200, 200, 1000, [0, 1, 100, 1000], 200, 10),
    "small": (5000, 2000, 20_000, [0, 1, 100, 1000, 10_000, 20_000], 1000, 200),
    "paper": (100_000, 10_000, 100_000, [0, 1, 100, 1000, *range(10_000, 100_001, 10_000)],
              5000, 1000),
}  # fmt: skip


def _hearts_nodes() -> tuple[Node, ...]:
    nodes = [Node("hearts-logs", id="logs"), Node("hearts-svr", inputs={"logs": "logs"}, id="svr")]
    learners: dict[str, str] = {}
    for variant, values in HEARTS_VARIANTS.items():
        for t in range(HEARTS_TRIALS):
            name = f"falcon-{variant}-{t}"
            nodes.append(
                Node("hearts-falcon", inputs={"svr": "svr"} if values["svr"] else {}, id=name)
            )
            learners[f"learners.{len(learners)}"] = name
    nodes.append(Node("hearts-eval", inputs=learners, id="eval"))
    return tuple(nodes)


HEARTS_FALCON = FlowSpec(
    name="hearts-falcon",
    description="Hearts: MC logs, nu-SVR risk models, FALCON learners (4 variants x 5), eval",
    nodes=_hearts_nodes(),
    presets={
        name: {
            "logs": {"games": logs},
            "svr": {"per_label": per_label},
            **{
                f"falcon-{variant}-{t}": {**values, "games": games, "checkpoints": cps, "seed": t}
                for variant, values in HEARTS_VARIANTS.items()
                for t in range(HEARTS_TRIALS)
            },
            "eval": {"games": eval_games, "rank_matches": ranks},
        }
        for name, (logs, per_label, games, cps, eval_games, ranks) in _HEARTS.items()
    },
)

# Blokus (the BlokusZero paper): self-play -> train -> evaluate, repeated. Iteration i trains on
# the newest `buffer_games` games of all self-play runs so far (the paper's replay buffer; an
# earlier wiring took only the last two runs, whose few games the small preset's value head
# memorised), continuing generation i - 1, and evaluates the result against three MCTS-MAXN
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

# `stage run cfr` takes its presets from the first flow that has the stage: the lossless one.
FLOWS: dict[str, FlowSpec] = {
    f.name: f
    for f in (
        LHE_ABSTRACTION,
        LHE_ABSTRACTION_PA,
        SOLVE_LOSSLESS,
        LHE_SOLVE,
        LHE_LEAGUE,
        NLHE_CNN,
        HEARTS_FALCON,
        BLOKUS_ZERO,
    )
}


def get_flow(name: str) -> FlowSpec:
    """A flow by name; an unknown name raises StageError listing the valid ones."""
    if name not in FLOWS:
        raise StageError(f"unknown flow {name!r} (valid: {', '.join(FLOWS)})")
    return FLOWS[name]


def flow_of_stage(stage: str) -> FlowSpec:
    """The first flow that runs `stage` (its presets, for its first node, apply to `stage run`)."""
    get_stage(stage)
    for flow in FLOWS.values():
        if any(n.stage == stage for n in flow.nodes):
            return flow
    raise StageError(f"stage {stage} is in no flow")
