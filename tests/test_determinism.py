"""Every stage a flow runs is deterministic: two builds of every flow's (reduced) tiny preset,
one chunk after another in this process and one on Dask's threaded local cluster, give the
same keys and the same array checksums; a third build, killed before every commit (after a
stage's last step, its checkpoints all written) and run again, commits the same arrays; and a
recompute check passes on every artifact.

Slow (about ten minutes on two cores): `make test-slow`, which CI runs.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import pytest

from gameforge.artifacts import Artifact, ArtifactStore
from gameforge.flows.runtime import dask_executor
from gameforge.stages.base import Nondeterminism
from gameforge.stages.executor import InProcessExecutor
from gameforge.stages.recompute import recompute_check
from gameforge.stages.registry import get_stage
from tests.tiny_runs import build_tiny_store, quiet

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def two_builds(tmp_path_factory) -> tuple[ArtifactStore, ArtifactStore]:
    """The same stages built twice, into two stores, by two kinds of executor."""
    one = ArtifactStore(tmp_path_factory.mktemp("determinism") / "in-process")
    build_tiny_store(one, InProcessExecutor())
    two = ArtifactStore(tmp_path_factory.mktemp("determinism") / "dask")
    with dask_executor(None) as executor:
        build_tiny_store(two, executor)
    return one, two


@pytest.fixture(scope="module")
def killed_before_every_commit(tmp_path_factory, monkeypatch_module) -> ArtifactStore:
    """The same stages built once more, each killed at its first commit and resumed."""
    from gameforge.artifacts.store import ArtifactWriter

    store = ArtifactStore(tmp_path_factory.mktemp("determinism") / "killed")
    real_commit = ArtifactWriter.commit
    killed: set[str] = set()

    def commit_once_killed(self, summary=None):  # type: ignore[no-untyped-def]
        if self.key not in killed:
            killed.add(self.key)
            raise KeyboardInterrupt(f"killed before committing {self.key}")
        return real_commit(self, summary)

    monkeypatch_module.setattr(ArtifactWriter, "commit", commit_once_killed)
    while True:
        try:
            build_tiny_store(store, InProcessExecutor())
            break
        except KeyboardInterrupt:
            continue  # the next attempt resumes the killed build and goes on to the next
    monkeypatch_module.setattr(ArtifactWriter, "commit", real_commit)
    assert killed == set(store.keys())
    return store


@pytest.fixture(scope="module")
def monkeypatch_module():
    """A monkeypatch undone when the module's tests end."""
    with pytest.MonkeyPatch.context() as patch:
        yield patch


def _within(declared: Nondeterminism | None, name: str, a: Artifact, b: Artifact) -> bool:
    """True if the stage declares array `name` not reproducible and the two agree as declared
    (wall-clock measurements are not compared at all)."""
    if declared is None or not declared.covers(name):
        return False
    if declared.rtol is None:
        return True
    x, y = np.asarray(a[name][...]), np.asarray(b[name][...])
    return x.shape == y.shape and bool(np.allclose(x, y, declared.rtol, declared.atol))


def _stage_of(store: ArtifactStore, key: str) -> str:
    return store.open(key).stage


def _differing(one: ArtifactStore, two: ArtifactStore) -> dict[str, list[str]]:
    """Stage -> "key (arrays)" of the artifacts whose arrays differ beyond what is declared."""
    keys = one.keys()
    assert keys == two.keys()
    differing: dict[str, list[str]] = defaultdict(list)
    for key in keys:
        a, b = one.open(key).meta["arrays"], two.open(key).meta["arrays"]
        declared = get_stage(_stage_of(one, key)).nondeterminism
        names = sorted(
            n
            for n in set(a) | set(b)
            if a.get(n) != b.get(n) and not _within(declared, n, one.open(key), two.open(key))
        )
        if names:
            differing[_stage_of(one, key)].append(f"{key} ({', '.join(names)})")
    return differing


def test_two_builds_give_the_same_keys_and_arrays(two_builds):
    one, two = two_builds
    differing = _differing(one, two)
    assert not differing, "stages not bit-reproducible: " + "; ".join(
        f"{stage}: {', '.join(keys)}" for stage, keys in sorted(differing.items())
    )


def test_a_build_killed_before_every_commit_resumes_to_the_same_arrays(
    two_builds, killed_before_every_commit
):
    one, _ = two_builds
    differing = _differing(one, killed_before_every_commit)
    assert not differing, "resumed builds differ from clean ones: " + "; ".join(
        f"{stage}: {', '.join(keys)}" for stage, keys in sorted(differing.items())
    )


def test_a_recompute_check_passes_on_every_artifact(two_builds):
    one, _ = two_builds
    failing: dict[str, list[str]] = defaultdict(list)
    keys = one.keys()
    for key in keys:
        report = recompute_check(one, key, chunks=2, seed=1, log=quiet)
        if not report.passed:
            failing[report.stage].append(f"{key}: {report.mismatches[0].line()}")
    assert not failing, "recompute checks failed: " + "; ".join(
        f"{stage}: {', '.join(lines)}" for stage, lines in sorted(failing.items())
    )
