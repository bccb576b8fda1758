"""Checked reads: every chunk of a new array carries a crc32c, and a read that meets a corrupted
chunk names its artifact and array (kept apart from `store` so that listings need no zarr)."""

from __future__ import annotations

import functools
from typing import Any

import zarr
from zarr.codecs import Crc32cCodec, ZstdCodec

from gameforge.artifacts.errors import CorruptedArtifact

# Every chunk is compressed (zarr's default zstd) and then carries a crc32c of its stored
# bytes, which zarr checks on every read: a flipped byte fails the read that meets it instead
# of answering with wrong numbers. Artifacts written before this have no chunk checksums; their
# reads are unchecked, and `verify` still checks them whole.
CHUNK_CODECS = (ZstdCodec(level=0), Crc32cCodec())


def _checksum_failure(exc: BaseException) -> bool:
    """True if `exc` (or what it was raised from) is a chunk's crc32c mismatch."""
    seen: BaseException | None = exc
    while seen is not None:
        if "checksum do not match" in str(seen):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def _checked(method: Any) -> Any:
    @functools.wraps(method)
    def read(self: CheckedArray, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except Exception as exc:
            if not _checksum_failure(exc):
                raise
            raise CorruptedArtifact(
                self.artifact_key, f"a chunk of array {self.array_name!r} fails its checksum"
            ) from None

    return read


class CheckedArray(zarr.Array):
    """A stored array whose every read names its artifact and array when a chunk is corrupted
    (one `CorruptedArtifact` line instead of zarr's codec error)."""

    artifact_key: str
    array_name: str

    @classmethod
    def wrap(cls, array: zarr.Array, key: str, name: str) -> CheckedArray:
        """`array` read through the checks, reporting as array `name` of artifact `key`."""
        checked = cls(array._async_array)
        checked.artifact_key, checked.array_name = key, name
        return checked

    __getitem__ = _checked(zarr.Array.__getitem__)
    __array__ = _checked(zarr.Array.__array__)
    get_basic_selection = _checked(zarr.Array.get_basic_selection)
    get_orthogonal_selection = _checked(zarr.Array.get_orthogonal_selection)
    get_mask_selection = _checked(zarr.Array.get_mask_selection)
    get_coordinate_selection = _checked(zarr.Array.get_coordinate_selection)
    get_block_selection = _checked(zarr.Array.get_block_selection)


def has_chunk_checksums(array: zarr.Array) -> bool:
    """True if the array's chunks carry a crc32c."""
    return any(isinstance(c, Crc32cCodec) for c in array.compressors)
