"""What `gameforge artifacts ls` says of each artifact: its game and the parameters that tell it
from its siblings (the other artifacts of its stage in the listing).

An artifact's labels are, in this order:

1. its stage's declared `label_params` (`Stage.label_params`: k, the algorithm and iterations,
   a seed ...);
2. any other content parameter whose value differs among the listed artifacts of its stage;
3. only where 1 and 2 leave siblings looking alike (the four `ochs` artifacts of a league, its
   four `cfr` solves): the declared labels of its single upstream artifacts, recursively, named
   `stage.param` (`opponent-clusters.k=12`), as far as they differ among those siblings.

The game is the `game` parameter, else that of the first upstream artifact that has one, else
the word the stage's name starts with (`hearts`, `blokus`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from gameforge.artifacts.store import ArtifactInfo, ArtifactStore, StoreError
from gameforge.stages.base import StageError
from gameforge.stages.registry import get_stage

NOT_LABELS = frozenset({"game", "game_digest"})  # the game is shown on its own


@dataclass
class _Known:
    """One committed artifact's stage, parameters and single (not numbered) inputs."""

    stage: str
    params: dict[str, Any]
    inputs: dict[str, str] = field(default_factory=dict)
    label_params: list[str] | None = None  # as recorded at commit (None: before they were)


def _declared(known: _Known) -> dict[str, Any]:
    """The stage's declared label parameters among the artifact's parameters: as recorded in
    the artifact, else as its stage declares them now (none for an unknown stage)."""
    if known.label_params is not None:
        return {n: known.params[n] for n in known.label_params if n in known.params}
    try:  # imports the stage's module, which a recorded list spares a listing
        return get_stage(known.stage).labels(known.params)
    except StageError:  # a stage this checkout does not know
        return {}


def _value(v: Any) -> str:
    """A parameter value as comparable text."""
    return json.dumps(v, sort_keys=True)


def _known(meta: dict[str, Any]) -> _Known | None:
    """An artifact's stage, parameters, single inputs and labels from its metadata."""
    try:
        single = {n: k for n, k in dict(meta.get("inputs", {})).items() if "." not in n}
        params = dict(meta["params"])
        return _Known(
            str(meta["stage"]), params, dict(sorted(single.items())), meta.get("label_params")
        )
    except (KeyError, TypeError, ValueError):
        return None


class _Lineage:
    """Opens artifacts once each and answers their game and upstream labels."""

    def __init__(self, store: ArtifactStore, metas: dict[str, dict[str, Any] | None]) -> None:
        self.store = store
        self.metas = metas  # every artifact's metadata, read in one pass
        self.known: dict[str, _Known | None] = {}
        self.upstream: dict[str, dict[str, Any]] = {}

    def get(self, key: str) -> _Known | None:
        """The artifact's stage, parameters and single inputs, or None if it cannot be read."""
        if key not in self.known:
            meta = self.metas.get(key)
            if meta is None and key not in self.metas:
                try:
                    meta = self.store.open(key).meta  # a key prefix, or committed since
                except StoreError:
                    meta = None
            self.known[key] = None if meta is None else _known(meta)
        return self.known[key]

    def game(self, key: str, depth: int = 0) -> str | None:
        """The `game` parameter of the artifact or of its first upstream artifact with one."""
        got = self.get(key)
        if got is None or depth > 64:
            return None
        if got.params.get("game"):
            return str(got.params["game"])
        for upstream in got.inputs.values():
            found = self.game(upstream, depth + 1)
            if found:
                return found
        return None

    def inherited(self, key: str) -> dict[str, Any]:
        """`stage.param` -> value for the declared labels of every single upstream artifact,
        nearest first (numbered inputs, a league's players, are left out)."""
        if key in self.upstream:
            return self.upstream[key]
        self.upstream[key] = {}  # guards a cycle, which a store never holds
        out: dict[str, Any] = {}
        got = self.get(key)
        for upstream in got.inputs.values() if got else ():
            above = self.get(upstream)
            if above is None:
                continue
            for name, v in _declared(above).items():
                out.setdefault(f"{above.stage}.{name}", v)
            for name, v in self.inherited(upstream).items():
                out.setdefault(name, v)
        self.upstream[key] = out
        return out


def describe(
    store: ArtifactStore,
    infos: list[ArtifactInfo],
    metas: dict[str, dict[str, Any] | None] | None = None,
) -> list[dict[str, Any]]:
    """Per listed artifact: {"game": ..., "labels": {name: value}}; a partial build has
    neither (its parameters are recorded only at commit). `metas`: from `store.metas()`, if
    already read."""
    lineage = _Lineage(store, store.metas() if metas is None else metas)
    by_stage: dict[str, dict[str, _Known]] = {}
    for info in infos:
        got = lineage.get(info.key) if info.status == "complete" else None
        if got is not None:
            by_stage.setdefault(got.stage, {})[info.key] = got
    labels: dict[str, dict[str, Any]] = {}
    for siblings in by_stage.values():
        names = set().union(*(s.params for s in siblings.values())) - NOT_LABELS
        varying = sorted(
            n for n in names if len({_value(s.params.get(n)) for s in siblings.values()}) > 1
        )
        own: dict[str, dict[str, Any]] = {}
        for key, s in siblings.items():
            own[key] = _declared(s)
            own[key].update({n: s.params[n] for n in varying if n in s.params})
        alike: dict[str, list[str]] = {}
        for key in siblings:
            alike.setdefault(_value(own[key]), []).append(key)
        for group in (g for g in alike.values() if len(g) > 1):
            up = {k: lineage.inherited(k) for k in group}
            order = dict.fromkeys(n for k in group for n in up[k])
            for n in order:
                if len({_value(up[k].get(n)) for k in group}) > 1:
                    for k in group:
                        if n in up[k]:
                            own[k][n] = up[k][n]
        labels.update(own)
    out: list[dict[str, Any]] = []
    for info in infos:
        if info.key not in labels:
            out.append({"game": None, "labels": {}})
            continue
        game = lineage.game(info.key) or info.stage.partition("-")[0]
        out.append({"game": game, "labels": labels[info.key]})
    return out
