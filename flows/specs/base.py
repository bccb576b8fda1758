"""The flow contract: nodes, flow specs with presets, sweeps and `--set` overrides."""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

from gameforge.stages.base import StageError
from gameforge.stages.registry import get_stage

# Parameters that mean one thing in every stage taking them, so that a bare `--set NAME=V` sets
# them all on purpose in any flow: the game and the device. Any other name that several stages
# of a flow take (k, seed, games ...) must name its stage, unless the flow lists it in its
# `options` (the Hearts rules, the Blokus search settings).
FLOW_WIDE = frozenset({"game", "device"})


@dataclass(frozen=True)
class Node:
    """One stage in a flow; `inputs` maps the stage's input names to earlier nodes' names.

    A flow that runs a stage more than once (one `nlhe-train` per generation) gives each run
    its own `id`; otherwise the node is named after its stage. An `optional` node runs only
    when asked for (`gameforge run FLOW --with NODE`, or `stage run`).
    """

    stage: str
    inputs: dict[str, str] = field(default_factory=dict)
    id: str = ""
    optional: bool = False

    @property
    def name(self) -> str:
        """The node's name in its flow (presets, overrides and results use it)."""
        return self.id or self.stage


@dataclass(frozen=True)
class FlowSpec:
    """A named chain of stages with parameter presets (preset -> node name -> parameters)."""

    name: str
    description: str
    nodes: tuple[Node, ...]
    presets: dict[str, dict[str, dict[str, Any]]]
    # (stage, parameter) whose preset value is a list: that stage and everything downstream of
    # it run once per value; a stage with a many-input (a league) gathers all the variants.
    sweep: tuple[str, str] | None = None
    # the nodes whose results are the flow's findings, printed when it ends
    # (gameforge.flows.findings reads them from the artifacts' summaries)
    findings: tuple[str, ...] = ()
    # flow-level options: parameters that a bare `--set NAME=V` sets in every stage taking them
    # on purpose (beyond FLOW_WIDE); other names several stages share must name their stage
    options: tuple[str, ...] = ()

    def names(self) -> list[str]:
        """Every node name of the flow, then each stage name that is not also a node's."""
        nodes = [n.name for n in self.nodes]
        return nodes + sorted({n.stage for n in self.nodes} - set(nodes))

    def check_names(self, names: Collection[str], option: str) -> None:
        """Refuse (StageError) a name in `names` that is neither a node nor a stage of the flow."""
        known = self.names()
        for name in names:
            if name not in known:
                raise StageError(
                    f"{option} {name!r}: flow {self.name} has no node or stage {name!r}"
                    f"{_close(name, known)} (valid: {', '.join(known)})"
                )

    def swept_stages(self) -> set[str]:
        """Stages that run once per sweep value (the swept one and its regular dependents)."""
        if self.sweep is None:
            return set()
        swept = {self.sweep[0]}
        for node in self.nodes:
            many = get_stage(node.stage).many_inputs
            if any(
                up in swept for name, up in node.inputs.items() if name.split(".")[0] not in many
            ):
                swept.add(node.name)
        return swept

    def node(self, name: str) -> Node:
        """The node called `name`, else the first node running stage `name`."""
        for node in self.nodes:
            if node.name == name:
                return node
        for node in self.nodes:
            if node.stage == name:
                return node
        raise StageError(f"flow {self.name} has no stage {name!r}")

    def default_nodes(self, extra: list[str] | None = None) -> list[str]:
        """Nodes a plain run runs (all but the optional ones), plus the optional `extra`."""
        asked = set(extra or [])
        unknown = sorted(asked - set(self.names()))
        if unknown:
            optional = [n.name for n in self.nodes if n.optional]
            raise StageError(
                f"--with {unknown[0]!r}: flow {self.name} has no node {unknown[0]!r}"
                f"{_close(unknown[0], optional)} (optional nodes: {', '.join(optional) or 'none'})"
            )
        return [n.name for n in self.nodes if not n.optional or n.name in asked or n.stage in asked]

    def upstream(self, name: str) -> list[str]:
        """Node `name` (or the first running stage `name`) and all it depends on, in run order."""
        wanted = {self.node(name).name}
        for node in reversed(self.nodes):
            if node.name in wanted:
                wanted.update(node.inputs.values())
        return [n.name for n in self.nodes if n.name in wanted]

    def resolve(
        self,
        preset: str,
        overrides: list[str] | None = None,
        *,
        strict: bool = False,
        running: Collection[str] | None = None,
    ) -> dict[str, dict]:
        """Parameters per stage for a preset with `--set` overrides applied.

        An override is `node.param=value` (a node name, or a stage name for every node of that
        stage) or `param=value` (every node whose stage has `param`). `strict` (the command
        line) refuses a bare `param=value` that several stages of the `running` nodes (default:
        all) take, unless it is a flow-level option (`FLOW_WIDE`, `options`).
        """
        if preset not in self.presets:
            valid = ", ".join(self.presets)
            raise StageError(f"flow {self.name} has no preset {preset!r} (valid: {valid})")
        params = {n.name: dict(self.presets[preset].get(n.name, {})) for n in self.nodes}
        stage_of = {n.name: n.stage for n in self.nodes}
        for item in overrides or []:
            name, sep, raw = item.partition("=")
            if not sep or not name:
                raise StageError(f"bad --set {item!r}: expected name=value or stage.name=value")
            value = parse_value(raw)
            prefix, dot, pname = name.partition(".")
            targets = [n for n in params if dot and prefix in (n, stage_of[n])]
            if targets:
                for node in targets:
                    _check_param(stage_of[node], pname, item)
                    params[node][pname] = value
                continue
            if dot:
                raise StageError(
                    f"bad --set {item!r}: flow {self.name} has no node or stage {prefix!r}"
                    f"{_close(prefix, self.names())} (valid: {', '.join(self.names())})"
                )
            takers = [n for n in params if pname_in(stage_of[n], name)]
            if not takers:
                known = sorted({p for s in set(stage_of.values()) for p in _fields(s)})
                raise StageError(
                    f"bad --set {item!r}: no stage of flow {self.name} has {name!r}"
                    f"{_close(name, known)} (parameters: {', '.join(known)})"
                )
            if strict:
                self._check_bare(item, name, takers if running is None else
                                 [n for n in takers if n in running])  # fmt: skip
            for node in takers:
                params[node][name] = value
        for node, values in params.items():
            for variant in sweep_values(self, values, node):
                get_stage(stage_of[node]).make_params(variant)  # fail now, before any flow starts
        return params

    def _check_bare(self, item: str, name: str, takers: list[str]) -> None:
        """Refuse a bare override that would change `name` in several stages by surprise."""
        stages = list(dict.fromkeys(self.node(n).stage for n in takers))
        if len(stages) < 2 or name in FLOW_WIDE or name in self.options:
            return
        value = item.partition("=")[2]
        raise StageError(
            f"bad --set {item!r}: {len(stages)} stages of flow {self.name} take {name} "
            f"({', '.join(stages)}); name the one meant: --set STAGE.{name}={value}, e.g. "
            f"--set {stages[0]}.{name}={value}"
        )


def stored_inputs(spec: FlowSpec, items: list[str]) -> dict[str, dict[str, str]]:
    """`--input node.input=KEY` items as node -> input -> key, checked against the flow.

    A stored artifact may feed a node's optional input that the flow leaves empty (a `cfr`
    node's `parent`, to continue an earlier solve); a stage name stands for its first node.
    A node the flow runs once per sweep value takes `node[param=value].input=KEY` for one
    variant (`cfr[k=8].parent=KEY`); the bare name feeds every variant. Whether the variant
    is one the run makes is checked once the sweep's values are known (`run_plan`).
    """
    out: dict[str, dict[str, str]] = {}
    for item in items:
        match = _STORED_INPUT.fullmatch(item)
        if match is None:
            raise StageError(f"bad --input {item!r}: expected node.input=KEY")
        node_name, variant, input_name, key = match.group("node", "variant", "input", "key")
        node = spec.node(node_name)
        target = node.name
        if variant is not None:
            if node.name not in spec.swept_stages() or spec.sweep is None:
                raise StageError(f"bad --input {item!r}: {node.name} does not vary in {spec.name}")
            param, _eq, value = variant.partition("=")
            if param != spec.sweep[1] or not value:
                raise StageError(
                    f"bad --input {item!r}: a variant of {node.name} is named "
                    f"[{spec.sweep[1]}=VALUE]"
                )
            target = f"{node.name}[{variant}]"
        stage = get_stage(node.stage)
        if input_name not in stage.inputs:
            valid = ", ".join(sorted(stage.inputs)) or "none"
            raise StageError(f"bad --input {item!r}: {node.stage} has no input {input_name!r} "
                             f"(inputs: {valid})")  # fmt: skip
        if input_name in node.inputs:
            raise StageError(f"bad --input {item!r}: flow {spec.name} feeds it from {node.name}")
        out.setdefault(target, {})[input_name] = key
    return out


# node, an optional sweep variant in brackets, the input, the key: cfr[k=8].parent=cfr-1f2e
_STORED_INPUT = re.compile(
    r"(?P<node>[^.\[\]=]+)(?:\[(?P<variant>[^\]]+)\])?\.(?P<input>[^.=\[\]]+)=(?P<key>.+)"
)


def sweep_values(spec: FlowSpec, values: dict[str, Any], stage: str) -> list[dict[str, Any]]:
    """The parameter sets a stage runs with: one, or one per value of the flow's sweep."""
    if spec.sweep is None or spec.sweep[0] != stage:
        return [values]
    param = spec.sweep[1]
    chosen = values.get(param)
    if not isinstance(chosen, list) or not chosen:
        raise StageError(f"flow {spec.name}: {stage}.{param} must be a non-empty list to sweep")
    return [{**values, param: v} for v in chosen]


def pname_in(stage: str, name: str) -> bool:
    """True if `stage`'s parameter model has a field `name`."""
    return name in get_stage(stage).params_model.model_fields


def _fields(stage: str) -> list[str]:
    """The parameter names of `stage`."""
    return list(get_stage(stage).params_model.model_fields)


def _close(name: str, choices: Collection[str]) -> str:
    """`; did you mean 'x'?` for the nearest of `choices` to a mistyped `name`, else ''."""
    import difflib

    near = difflib.get_close_matches(name, list(choices), n=1)
    return f"; did you mean {near[0]!r}?" if near else ""


def _check_param(stage: str, name: str, item: str = "") -> None:
    if not pname_in(stage, name):
        valid = sorted(_fields(stage))
        where = f"bad --set {item!r}: " if item else ""
        raise StageError(
            f"{where}stage {stage}: unknown parameter {name}{_close(name, valid)} "
            f"(valid: {', '.join(valid)})"
        )


def parse_value(raw: str) -> Any:
    """`--set` values: integers, floats, true/false, none, comma-separated lists, else the
    string."""
    if "," in raw:
        return [parse_value(part) for part in raw.split(",") if part]
    lowered = raw.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    if lowered in ("none", "null"):
        return None
    for cast in (int, float):
        try:
            return cast(raw)
        except ValueError:
            pass
    return raw
