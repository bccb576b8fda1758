"""The `gameforge` command line with a toy flow added: `python tests/toy_flow_cli.py run toy ...`.

Flow `toy` is toy-squares (40 chunks, each sleeping `delay` seconds) then toy-double: a real
Prefect flow over the local Dask cluster, slow enough to be stopped in the middle of a stage.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import tests.toy_stages  # noqa: E402, F401  (registers the toy stages)
from gameforge.flows import cli  # noqa: E402
from gameforge.flows.specs import FLOWS, FlowSpec, Node  # noqa: E402

FLOWS["toy"] = FlowSpec(
    name="toy",
    description="toy squares, then doubled",
    nodes=(Node("toy-squares"), Node("toy-double", inputs={"squares": "toy-squares"})),
    presets={"tiny": {"toy-squares": {"n": 4000, "chunk": 100, "delay": 0.25}}},
)

if __name__ == "__main__":
    cli.main()
