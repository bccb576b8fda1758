"""The artifact store: keys, Zarr layout, commit protocol, resume, listing and lineage."""

from gameforge.artifacts.keys import artifact_key, canonical_json
from gameforge.artifacts.store import (
    Artifact,
    ArtifactInfo,
    ArtifactStore,
    ArtifactWriter,
    Build,
    StoreError,
    done_chunks,
    mark_chunk_done,
    write_chunk,
)

__all__ = [
    "Artifact",
    "ArtifactInfo",
    "ArtifactStore",
    "ArtifactWriter",
    "Build",
    "StoreError",
    "artifact_key",
    "canonical_json",
    "done_chunks",
    "mark_chunk_done",
    "write_chunk",
]
