"""Kill a stage mid-run and run it again: the shared shape of the resume tests."""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

import pytest

from gameforge.artifacts import ArtifactStore
from gameforge.stages.runner import StageRun, run_stage


def killed_on_call(real: Callable, n: int, calls: list[int]) -> Callable:
    """`real`, except that its n-th call (counted in `calls`) raises as a kill would."""

    def dying(*args, **kwargs):
        calls.append(1)
        if len(calls) == n:
            raise KeyboardInterrupt("killed")
        return real(*args, **kwargs)

    return dying


def killed_then_rerun(
    monkeypatch,
    module: ModuleType,
    target: str,
    n: int,
    run: Callable[[], Any],
    rerun: Callable[[], Any] | None = None,
) -> tuple[Any, int]:
    """`run()` killed on the n-th call of `module.target`, then `rerun()` (default `run()`):
    (what the rerun returned, how many calls of `target` it made)."""
    real = getattr(module, target)
    monkeypatch.setattr(module, target, killed_on_call(real, n, []))
    with pytest.raises(KeyboardInterrupt):
        run()
    calls: list[int] = []
    monkeypatch.setattr(module, target, killed_on_call(real, 0, calls))  # counts, never kills
    return (rerun or run)(), len(calls)


def checksums(store: ArtifactStore, key: str) -> dict[str, str]:
    """Each array of artifact `key` -> its recorded checksum."""
    return {n: a["checksum"] for n, a in store.open(key).meta["arrays"].items()}


def killed_run_resumes_alike(
    monkeypatch,
    store: ArtifactStore,
    module: ModuleType,
    target: str,
    n: int,
    stage: str,
    params: dict,
) -> tuple[StageRun, int]:
    """Run `stage` whole, remove it, then run it killed on the n-th call of `module.target` and
    again; checks the rerun commits the whole run's key and arrays: (the rerun, how many calls
    of `target` it made)."""
    whole = run_stage(stage, params, {}, store=store, log=lambda m: None)
    want = checksums(store, whole.key)
    store.remove(whole.key, force=True)
    again, calls = killed_then_rerun(
        monkeypatch, module, target, n,
        lambda: run_stage(stage, params, {}, store=store, log=lambda m: None),
    )  # fmt: skip
    assert again.key == whole.key
    assert checksums(store, again.key) == want
    return again, calls
