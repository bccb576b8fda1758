"""The store's errors, phrased for the user (their own module so that `store` and `checked`,
which both raise them, need not import each other)."""

from __future__ import annotations


class StoreError(RuntimeError):
    """A problem with the store or one of its artifacts, phrased for the user."""


class CorruptedArtifact(StoreError):
    """An artifact whose metadata or arrays cannot be read back as written."""

    def __init__(self, key: str, problem: str, metadata_lost: bool = False) -> None:
        # with its own metadata lost, only the run that made it knows its stage and parameters
        how = (
            "rerun the flow that made it with --repair to rebuild it"
            if metadata_lost
            else f"`gameforge artifacts repair {key}` rebuilds it"
        )
        super().__init__(f"artifact {key} is corrupted: {problem} ({how})")
        self.key, self.problem = key, problem


class Untrusted(StoreError):
    """An imported artifact that a run would use before anyone trusted it: why it is not used,
    and the two ways on (one line)."""

    def __init__(self, key: str) -> None:
        super().__init__(
            f"artifact {key} was imported and is not trusted yet, so nothing uses it: "
            f"`gameforge artifacts trust {key}` vouches for its source, or "
            f"`gameforge artifacts check {key} --recompute` verifies it by recomputing"
        )
        self.key = key
