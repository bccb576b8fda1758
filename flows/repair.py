"""Recovering from corrupted artifacts: quarantine, rebuild, and rebuild dependents if needed.

A corrupted artifact is moved into the store's trash (kept for inspection until `gc`) and rebuilt
under the same key by the run that needs it. A dependent records the checksums of the inputs it
read: if the rebuilt arrays have those, it stays; if not, it is quarantined and rebuilt too
(a dependent built before the record was kept: if the rebuilt arrays differ from the checksums
recorded before the damage, or the old metadata was unreadable).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from gameforge.artifacts import ArtifactStore
from gameforge.artifacts.runs import unfinished_build
from gameforge.artifacts.store import StoreError
from gameforge.stages.runner import reproducible_checksums


@dataclass
class Repair:
    """What a repair moved aside: key -> the checksums recorded before (None: unreadable)."""

    store: ArtifactStore
    within: set[str] | None = None  # the keys a rebuild can remake (a run's plan); None: any
    quarantined: dict[str, dict[str, Any] | None] = field(default_factory=dict)  # their metadata

    def check(self, keys: list[str], log: Callable[[str], None]) -> list[str]:
        """Verify the stored artifacts among `keys`; quarantine the corrupted ones."""
        present = [k for k in dict.fromkeys(keys) if self.store.has_files(k)]
        for key in [k for k in present if self.store.unfinished(k)]:
            # not corrupted: setting it aside would only throw its finished chunks away
            log(f"repair: {key} is an unfinished build, left for the run to resume")
            present.remove(key)
        report = self.store.verify(present)
        bad = [key for key, problems in report.items() if problems]
        for key in bad:
            self.move(key, log, f"is corrupted ({report[key][0]})")
        log(f"repair: {len(present) - len(bad)} of {len(present)} stored artifacts intact")
        return bad

    def changed_dependents(self, log: Callable[[str], None]) -> list[str]:
        """After the rebuild: quarantine the dependents built from other content than the
        rebuilt artifacts now hold."""
        moved: list[str] = []
        for key, before in list(self.quarantined.items()):
            now = _meta(self.store, key) if self.store.exists(key) else before
            for user in self.store.dependents(key):
                if user in self.quarantined or not _built_from_other(
                    self.store, user, key, before, now
                ):
                    continue
                if self.within is not None and user not in self.within:
                    log(
                        f"repair: {user} was built from the old {key}; rebuild it with "
                        f"`gameforge artifacts repair {user} --rebuild`"
                    )
                    continue
                self.move(user, log, f"was built from the old {key}")
                moved.append(user)
        return moved

    def replays(self) -> dict[str, dict[str, Any]]:
        """Key -> the execution parameters that make its rebuild repeat the quarantined build
        (a solve a time budget stopped), for the quarantined artifacts whose stage has them."""
        from gameforge.stages.base import StageError
        from gameforge.stages.registry import get_stage

        out = {}
        for key, meta in self.quarantined.items():
            try:
                values = get_stage(meta["stage"]).replay_of(meta) if meta else {}
            except (StageError, KeyError):
                values = {}
            if values:
                out[key] = values
        return out

    def move(self, key: str, log: Callable[[str], None], why: str) -> None:
        """Quarantine one artifact, keeping its metadata (if readable) for the rebuild."""
        before = _meta(self.store, key)
        went = self.store.quarantine(key)
        self.quarantined[key] = before
        log(f"repair: {key} {why}; {went}, it will be rebuilt")

    def rebuild(self, key: str, rebuild_one: Callable[[dict[str, Any]], str]) -> None:
        """Rebuild a quarantined artifact from its recorded stage, parameters and inputs."""
        meta = self.quarantined.get(key)
        if meta is None:
            raise StoreError(
                f"{key}: its metadata is unreadable, so its stage and parameters are unknown; "
                "rebuild it with the run that made it (`gameforge run FLOW ... --repair`)"
            )
        made = rebuild_one(meta)
        if made != key:
            raise StoreError(
                f"{key} rebuilt as {made}: stage {meta['stage']} has changed since (version "
                f"{meta.get('version')} then); the old artifact stays in the trash"
            )


def _meta(store: ArtifactStore, key: str) -> dict[str, Any] | None:
    """An artifact's recorded metadata, or None if it cannot be read."""
    try:
        return dict(store.open(key).meta)
    except StoreError:
        return None


def _built_from_other(
    store: ArtifactStore,
    user: str,
    key: str,
    before: dict[str, Any] | None,
    now: dict[str, Any] | None,
) -> bool:
    """True if dependent `user` read other content of `key` than `key` holds now: by the input
    checksums `user` recorded, or (built before those were recorded) if `key` changed."""
    meta = _meta(store, user) or {}
    recorded = meta.get("input_checksums") or {}
    names = [name for name, source in (meta.get("inputs") or {}).items() if source == key]
    current = reproducible_checksums(now)
    if current is None or not names or any(recorded.get(name) is None for name in names):
        return reproducible_checksums(before) != current
    return any(
        current.get(array) != checksum
        for name in names
        for array, checksum in recorded[name].items()
    )


def rebuild_key(
    store: ArtifactStore,
    key: str,
    run: Callable[[str, dict[str, Any], dict[str, str]], str],
    log: Callable[[str], None],
    always: bool = False,
) -> list[str]:
    """`artifacts repair`: rebuild `key` if corrupted (or `always`), then dependents that need it.

    `run(stage, params, inputs)` builds one artifact and returns its key. Returns what was rebuilt.
    """
    from gameforge.stages.registry import current_version

    full = store.resolve(key)
    unfinished = unfinished_build(store, full, current_version)
    if unfinished is not None:
        raise StoreError(unfinished.line())
    mending = Repair(store)
    if always:
        mending.move(full, log, "is rebuilt on request")
    elif not mending.check([full], log):
        return []

    def one(meta: dict[str, Any]) -> str:
        from gameforge.stages.registry import get_stage

        values = get_stage(meta["stage"]).rebuild_values(meta)
        return run(meta["stage"], values, dict(meta.get("inputs") or {}))

    rebuilt = []
    todo = [full]
    while todo:
        for item in todo:
            mending.rebuild(item, one)
            rebuilt.append(item)
        todo = mending.changed_dependents(log)
    return rebuilt
