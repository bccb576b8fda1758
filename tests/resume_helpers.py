"""Kill a stage mid-run and run it again: the shared shape of the resume tests."""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

import pytest


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
