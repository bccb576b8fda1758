"""Helpers shared by the poker tests: brute-force hand strength, the short-deck stage chain,
small Leduc solves."""

from __future__ import annotations

from itertools import combinations

import numpy as np

from gameforge.artifacts import Artifact, ArtifactStore
from gameforge.engines.poker.evaluator import evaluate
from gameforge.stages.runner import run_stage

SHORT = "holdem6.limit.2p.reverse_blinds"
LEDUC = "leduc.limit.2p"


def quiet(_msg: str) -> None:
    """A stage log that prints nothing."""


def brute_force_count(hole, board, deck_size, num_ranks, num_suits):
    """2*wins + ties of `hole` on `board` against every opponent hole, by direct comparison."""
    used = set(hole) | set(board)
    rest = [c for c in range(deck_size) if c not in used]
    opponents = list(combinations(rest, len(hole)))
    rows = np.array([list(hole) + list(board)] + [list(o) + list(board) for o in opponents])
    values = evaluate(rows.astype(np.int8), num_ranks, num_suits)
    mine, theirs = values[0], values[1:]
    return int(2 * (theirs < mine).sum() + (theirs == mine).sum()), len(opponents)


def solve_leduc(store: ArtifactStore, algorithm: str, iterations: int) -> str:
    """The key of a `cfr` solve of Leduc Hold'em without evaluations."""
    params = {"game": LEDUC, "algorithm": algorithm, "iterations": iterations, "evaluations": 0}
    return run_stage("cfr", params, store=store, log=quiet).key


class ShortDeck:
    """The short-deck Hold'em abstraction chain in one store: river-hs -> hsd -> opponent
    clusters -> ochs -> buckets -> potential buckets. Each call runs only the stages asked
    for (and their inputs); what any earlier call built is a cache hit. The execution-only
    chunk sizes are fixed here, so an artifact is built the same way whichever test asks first.
    """

    def __init__(self, store: ArtifactStore) -> None:
        self.store = store

    def run(self, stage: str, params: dict, inputs: dict[str, Artifact] | None = None) -> Artifact:
        """Run (or find) one stage of the short-deck game; its artifact."""
        keys = {name: art.key for name, art in (inputs or {}).items()}
        result = run_stage(stage, {"game": SHORT, **params}, keys, store=self.store, log=quiet)
        return self.store.open(result.key)

    def hsd(self) -> Artifact:
        """HSDs of every round (several chunks of hands)."""
        river = self.run("river-hs", {})
        return self.run("hsd", {"hands_per_chunk": 4096}, {"river_hs": river})

    def ochs(self, clusters: int) -> Artifact:
        """OCHS against `clusters` opponent clusters (several chunks of boards)."""
        opponents = self.run("opponent-clusters", {"k": clusters}, {"hsd": self.hsd()})
        return self.run("ochs", {"boards_per_chunk": 128}, {"opponent_clusters": opponents})

    def hsd_buckets(self, k: int) -> Artifact:
        """`k` HSD buckets per round."""
        return self.run("hsd-buckets", {"k": k}, {"hsd": self.hsd()})

    def ochs_buckets(self, clusters: int, k: int) -> Artifact:
        """`k` river buckets of the OCHS against `clusters` opponent clusters."""
        return self.run("ochs-buckets", {"k": k}, {"ochs": self.ochs(clusters)})


class CrashAfter:
    """A progress sink that raises `CrashAfter.Boom` at the n-th advance of its bars (only of
    those whose description contains `only`, if given): a run killed mid-way."""

    class Boom(RuntimeError):
        """Stands for the kill."""

    def __init__(self, n: int, only: str = "") -> None:
        self.n = n
        self.only = only
        self.calls = 0

    def start(self, desc: str, total: int, done: int = 0):  # type: ignore[no-untyped-def]
        crash = self

        class Bar:
            def advance(self, k: int = 1) -> None:
                if crash.only in desc:
                    crash.calls += 1
                    if crash.calls == crash.n:
                        raise CrashAfter.Boom

            def close(self) -> None:
                pass

            def note(self, text: str) -> None:
                pass

        return Bar()
