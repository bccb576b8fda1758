"""Limit Hold'em flows: abstraction, potential-aware abstraction, solves and the league."""

from __future__ import annotations

from gameforge.flows.specs.base import FlowSpec, Node

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
    findings=("hsd-buckets", "ochs-buckets"),
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
    findings=("hsd-buckets", "ochs-buckets", "potential-buckets"),
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
        # The real game's exploitability of each solve: `--with best-response` (hours on full
        # Hold'em, minutes on the short decks).
        Node("best-response", inputs={"strategy": "cfr"}, optional=True),
    ),
    findings=("cfr", "best-response"),
    presets={
        name: {
            **stages,
            "cfr": {"game": stages["ochs-buckets"]["game"], **_SOLVE[name]},
            "best-response": {"game": stages["ochs-buckets"]["game"]},
        }
        for name, stages in LHE_ABSTRACTION.presets.items()
    },
)

# Small games solved without card abstraction, with exact exploitability along the way.
SOLVE_LOSSLESS = FlowSpec(
    name="solve-lossless",
    description="CFR on a small game without card abstraction (Kuhn, Leduc, short-deck hold'em)",
    nodes=(Node("cfr"),),
    findings=("cfr",),
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
    # AIVAT: its baselines' fits and walks take about 5-10 ms a hand on the tiny deck
    "tiny": ({"iterations": 30_000}, {"hands_per_set": 3000, "sets": 20, "aivat_hands": 100}),
    "small": ({"iterations": 500_000}, {"hands_per_set": 3000, "sets": 100, "aivat_hands": 1000}),
    "paper": (
        {"iterations": 300_000},
        {"hands_per_set": 3000, "sets": 3000, "matches": 9, "aivat_hands": 3000},
    ),
}
_LEAGUE_PRESETS = {
    name: {
        **{stage: dict(values) for stage, values in stages.items()},
        "opponent-clusters": {**stages["opponent-clusters"], "k": [6, 8, 10, 12]},
        "cfr": {**stages["cfr"], **_LEAGUE[name][0]},
        "league": {"game": stages["cfr"]["game"], **_LEAGUE[name][1]},
    }
    for name, stages in LHE_SOLVE.presets.items()
}
# The same experiment solved by public chance sampling, CFR+ with quadratic averaging (beyond
# the paper: a board per iteration, every hand of both players walked); about 0.2 s an
# iteration on full Hold'em in 2 threads here, so 2,000 iterations take minutes per abstraction;
# `--set cfr.seconds=S --set cfr.iterations=none` solves each for S seconds instead.
_LEAGUE_PRESETS["paper-public"] = {
    **_LEAGUE_PRESETS["paper"],
    "cfr": {
        **_LEAGUE_PRESETS["paper"]["cfr"],
        "algorithm": "public",
        "plus": True,
        "averaging": 2,
        "iterations": 2000,
    },
}
LHE_LEAGUE = FlowSpec(
    name="lhe-league",
    description="The paper's C6/C8/C10/C12 experiment: abstractions, CFR solves, duplicate league",
    nodes=(
        *LHE_SOLVE.nodes,
        Node("league", inputs={"players": "cfr"}),
    ),
    findings=("league", "best-response"),
    presets=_LEAGUE_PRESETS,
    sweep=("opponent-clusters", "k"),
)

# `stage run cfr` takes its presets from the first flow that has the stage: the lossless one.
FLOWS = (LHE_ABSTRACTION, LHE_ABSTRACTION_PA, SOLVE_LOSSLESS, LHE_SOLVE, LHE_LEAGUE)
