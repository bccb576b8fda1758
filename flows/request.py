"""One run of a flow as asked for: the options `gameforge run` takes, in one frozen model.

The command line builds a `RunRequest` once; `run_flow`, the Prefect flow and `run_plan` take it
whole. The Prefect flow's parameters are the request's `FLOW_PARAMETERS` (what a deployment may
set, shown field by field in the UI); the rest is what the command line does around a flow run.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

if TYPE_CHECKING:
    from gameforge.flows.specs import FlowSpec


class RunRequest(BaseModel):
    """A flow, its preset and overrides, the store and cluster, and how to run it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    flow: str = Field(description="Flow name (`gameforge flows`), or `stage:NAME`.")
    preset: str = Field(default="small", description="tiny, small or paper.")
    overrides: tuple[str, ...] = Field(
        default=(), description="`--set` items: node.param=value, stage.param=value, param=value."
    )
    store_root: str = Field(default="store", description="The store: a folder or an fsspec URL.")
    dask_address: str | None = Field(
        default=None, description="A Dask scheduler; `local`: in this process; none: a cluster."
    )
    force: tuple[str, ...] = Field(default=(), description="Nodes or stages to recompute.")
    only: tuple[str, ...] | None = Field(
        default=None, description="The nodes to run (none: every node a plain run makes)."
    )
    parallel_nodes: int = Field(default=1, ge=1, description="Independent stages run at once.")
    dashboard: bool = Field(default=False, description="Serve the local cluster's dashboard.")
    stored_inputs: tuple[str, ...] = Field(
        default=(), description="`--input` items: node.input=KEY, stored artifacts fed in."
    )
    replays: dict[str, dict[str, Any]] | None = Field(
        default=None,
        description="Artifact key -> execution parameters that make a rebuild repeat a stored "
        "build (set by a repair).",
    )
    # What the command line does around the flow run, not parameters of the flow:
    repair: bool = Field(default=False, description="Verify, trash and rebuild what is damaged.")
    force_resources: bool = Field(
        default=False, description="Run even if the estimated memory or disk does not fit."
    )

    def resolve(self, strict: bool = False) -> ResolvedRun:
        """The flow, its parameters and its stored inputs; a bad name or value raises StageError
        (before anything runs). `strict` (the command line) also refuses a bare `--set` that
        several stages share (`FlowSpec.resolve`)."""
        from gameforge.flows.specs import get_flow, stored_inputs

        spec = get_flow(self.flow)
        spec.check_names(self.force, "--force")
        spec.check_names(self.only or (), "--only")
        wanted = set(spec.default_nodes() if self.only is None else self.only)
        running = [n.name for n in spec.nodes if n.name in wanted or n.stage in wanted]
        params = spec.resolve(self.preset, list(self.overrides), strict=strict, running=running)
        return ResolvedRun(spec, params, stored_inputs(spec, list(self.stored_inputs)))

    def flow_parameters(self) -> dict[str, Any]:
        """The Prefect flow's parameters: JSON values, recorded with its flow run."""
        return self.model_dump(mode="json", include=set(FLOW_PARAMETERS))


# The fields a Prefect flow (and a deployment) takes: a deployment's flow is fixed, and repair and
# the resource check belong to the command line that starts the flow run.
FLOW_PARAMETERS = tuple(
    name for name in RunRequest.model_fields if name not in ("flow", "repair", "force_resources")
)


def flow_signature() -> inspect.Signature:
    """`FLOW_PARAMETERS` as keyword-only parameters with their types and defaults: the
    signature Prefect reads a flow's parameter schema from (and binds a deployment's values to)."""
    fields = RunRequest.model_fields
    return inspect.Signature(
        [
            inspect.Parameter(
                name,
                inspect.Parameter.KEYWORD_ONLY,
                default=inspect.Parameter.empty
                if fields[name].is_required()
                else fields[name].default,
                annotation=fields[name].annotation,
            )
            for name in FLOW_PARAMETERS
        ],
        return_annotation=dict[str, dict],
    )


@dataclass(frozen=True)
class ResolvedRun:
    """A request's flow spec, its parameters by node, and its stored inputs by node."""

    spec: FlowSpec
    params: dict[str, dict[str, Any]]
    stored: dict[str, dict[str, str]]
