"""Every flow's artifact keys at every preset, against the recorded ones.

A key hashes a stage's name, version, content parameters and input keys, so it changes only
when one of those does. A change here must be on purpose (a stage's version bumped because
its output changes, a preset changed): record the new keys with
`python tests/test_flow_keys.py --record` and say why in the commit.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from gameforge.flows.pipeline import plan_keys
from gameforge.flows.specs import FLOWS

RECORD = Path(__file__).with_name("data") / "flow_keys.json"
RECORDED: dict[str, dict[str, str]] = json.loads(RECORD.read_text()) if RECORD.exists() else {}


def current_keys() -> dict[str, dict[str, str]]:
    """flow/preset -> node -> key, for every flow and preset."""
    return {
        f"{name}/{preset}": plan_keys(spec, spec.resolve(preset, []))
        for name, spec in FLOWS.items()
        for preset in spec.presets
    }


@pytest.mark.parametrize("flow_preset", sorted(RECORDED))
def test_keys_are_the_recorded_ones(flow_preset):
    """Same parameters, versions and inputs: the same keys, node by node."""
    name, preset = flow_preset.split("/")
    spec = FLOWS[name]
    assert plan_keys(spec, spec.resolve(preset, [])) == RECORDED[flow_preset]


def test_every_flow_and_preset_is_recorded():
    """A new flow or preset gets its keys recorded too."""
    assert set(RECORDED) == {f"{n}/{p}" for n, s in FLOWS.items() for p in s.presets}


if __name__ == "__main__" and sys.argv[1:] == ["--record"]:
    RECORD.write_text(json.dumps(current_keys(), indent=1, sort_keys=True) + "\n")
    print(f"recorded {RECORD}")
