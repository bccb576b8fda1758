"""Content-addressed artifact keys: a hash of (stage, version, canonical parameters, inputs)."""

from __future__ import annotations

import hashlib
import json
from typing import Any

KEY_HASH_CHARS = 16


def canonical_json(obj: Any) -> str:
    """JSON with sorted keys and no whitespace: equal values give equal text."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def artifact_key(stage: str, version: int, params: dict[str, Any], inputs: dict[str, str]) -> str:
    """`<stage>-<16 hex>`: equal stage, version, parameters and input keys give equal keys."""
    payload = canonical_json(
        {"stage": stage, "version": version, "params": params, "inputs": inputs}
    )
    digest = hashlib.sha256(payload.encode()).hexdigest()[:KEY_HASH_CHARS]
    return f"{stage}-{digest}"
