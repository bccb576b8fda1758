"""A store to search, artifacts that explain themselves, and runs with their findings.

Every view here reads through `gameforge.artifacts` (the store, the run ledger) and
`gameforge.flows` (the listing's labels, the findings, the figures); nothing is computed here.
The examples run in a folder whose store holds a solved Leduc (`tests/test_api.py` runs them
where `docs/tutorial.ipynb` left its store; elsewhere the first line computes it, in seconds):

>>> import gameforge as gf
>>> leduc = gf.run("solve-lossless", preset="small")
>>> store = gf.open_store("store")

Search by stage, parameters, flow or run; the newest of a kind:

>>> solves = store.find("cfr", game="leduc.limit.2p", iterations=1000)
>>> [a.key for a in solves]
['cfr-c8ba3d413160dd5a']
>>> store.latest("cfr", flow="solve-lossless").key
'cfr-c8ba3d413160dd5a'
>>> store.find(run=leduc.run_id) == [leduc["cfr"]]
True

An artifact explains itself: its parameters, inputs, arrays, summary and lineage.

>>> cfr = store.open("cfr-c8ba")
>>> cfr.stage, cfr.params["algorithm"], cfr.summary["iterations"]
('cfr', 'cfr+', 1000)
>>> cfr.inputs, cfr.lineage()
({}, [])
>>> cfr.arrays
{'average_strategy': float32 (468, 3), 'curve_exploitability': float64 (8,), ...}
>>> cfr.arrays["average_strategy"].shape
(468, 3)
>>> cfr
cfr-c8ba3d413160dd5a: stage cfr v..., built ... UTC
  parameters: game=leduc.limit.2p, algorithm=cfr+, iterations=1000, seed=0, ...
  inputs:     none
  arrays:     average_strategy float32 (468, 3), curve_exploitability float64 (8,), ...
  finding:    cfr: exploitability = 0.255 mbb/g (exact best response) after 1,000 cfr+ ...
>>> type(cfr.figure()).__name__                              # its figure, as `artifacts plot`
'Figure'

A run's artifacts by node, and its findings (what `gameforge run` prints last):

>>> leduc["cfr"] == cfr
True
>>> [f.what for f in leduc.findings]
['cfr: exploitability']
>>> store.runs(flow="solve-lossless")[-1].flow
'solve-lossless'
"""

from __future__ import annotations

import html
import json
import os
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from gameforge.artifacts.runs import RunLedger, RunRecord
from gameforge.artifacts.store import Artifact as StoredArtifact
from gameforge.artifacts.store import ArtifactStore, StoreError
from gameforge.flows.findings import Finding, reader_for, run_findings

if TYPE_CHECKING:
    from matplotlib.figure import Figure

PathLike = str | os.PathLike[str]


def open_store(path: PathLike | None = None) -> Store:
    """The store at `path` (a folder or an fsspec URL; default `$GAMEFORGE_STORE` or ./store)."""
    return Store(path)


def as_store(store: StoreLike) -> Store:
    """A `Store` from a Store, an ArtifactStore, a path or None (the default store)."""
    if isinstance(store, Store):
        return store
    if isinstance(store, ArtifactStore):
        return Store(store.location)
    return Store(store)


def _same(a: Any, b: Any) -> bool:
    """Parameter values compared as the store records them (JSON: tuples are lists)."""
    return json.dumps(a, sort_keys=True, default=str) == json.dumps(b, sort_keys=True, default=str)


class Store:
    """A store of artifacts and run records, searchable from Python."""

    def __init__(self, path: PathLike | None = None) -> None:
        self.artifacts = ArtifactStore(path)
        self.location = self.artifacts.location

    def __repr__(self) -> str:
        rows = self._rows()
        stages: dict[str, int] = {}
        for row in rows:
            stages[row["stage"]] = stages.get(row["stage"], 0) + 1
        kinds = ", ".join(f"{n} {s}" for s, n in stages.items())
        runs = len(RunLedger(self.artifacts).all())
        return f"<Store {self.location}: {len(rows)} artifacts ({kinds or 'none'}), {runs} runs>"

    def _repr_html_(self) -> str:
        rows = [
            (
                row["key"],
                row["stage"],
                row.get("game") or "",
                _labels_text(row.get("labels")),
                (row.get("created") or "")[:19].replace("T", " "),
            )  # fmt: skip
            for row in self._rows()
        ]
        head = html.escape(repr(self))
        return head + _html_table(("key", "stage", "game", "labels", "built (UTC)"), rows)

    def _rows(self) -> list[dict[str, Any]]:
        """`artifacts ls --json`'s rows of the committed artifacts, oldest first."""
        from gameforge.flows.queries import list_artifacts

        rows = [r for r in list_artifacts(self.artifacts) if r["status"] == "complete"]
        return sorted(rows, key=lambda r: (r.get("created") or "", r["key"]))

    def open(self, key: str) -> Artifact:
        """The artifact with this key (a unique prefix will do)."""
        return Artifact(self, self.artifacts.open(key))

    def __getitem__(self, key: str) -> Artifact:
        return self.open(key)

    def __contains__(self, key: str) -> bool:
        try:
            self.artifacts.resolve(key)
        except StoreError:
            return False
        return True

    def find(
        self,
        stage: str | None = None,
        *,
        flow: str | None = None,
        run: str | None = None,
        game: str | None = None,
        **params: Any,
    ) -> list[Artifact]:
        """By stage, flow, run (id, prefix or 'last'), game and parameters, oldest first."""
        wanted: set[str] | None = None
        ledger = RunLedger(self.artifacts)
        if run is not None:
            wanted = set(ledger.get(run).artifact_keys())
        if flow is not None:
            named = {k for r in ledger.all() if r.flow == flow for k in r.artifact_keys()}
            wanted = named if wanted is None else wanted & named
        found = []
        for row in self._rows():
            if stage is not None and row["stage"] != stage:
                continue
            if wanted is not None and row["key"] not in wanted:
                continue
            if game is not None and row.get("game") != game:
                continue
            artifact = self.open(row["key"])
            have = artifact.params
            if all(n in have and _same(have[n], v) for n, v in params.items()):
                found.append(artifact)
        return found

    def latest(self, stage: str | None = None, **filters: Any) -> Artifact:
        """The newest artifact that `find(stage, **filters)` finds; StoreError if none."""
        found = self.find(stage, **filters)
        if not found:
            asked = ", ".join([*(f"stage {stage}",) * bool(stage)] +
                              [f"{n}={v!r}" for n, v in filters.items()])  # fmt: skip
            raise StoreError(f"no artifact in {self.location} with {asked or 'anything'}")
        return found[-1]

    def runs(self, flow: str | None = None) -> list[Run]:
        """The recorded runs (of one flow, if given), oldest first."""
        records = RunLedger(self.artifacts).all()
        return [Run(self, r) for r in records if flow is None or r.flow == flow]

    def run(self, run_id: str = "last") -> Run:
        """One recorded run: an id, a unique prefix, 'last' or 'last~1'."""
        return Run(self, RunLedger(self.artifacts).get(run_id))


# What a function's `store=` takes: a Store, an ArtifactStore, a path or URL, or None (./store).
StoreLike = Store | ArtifactStore | PathLike | None


class Arrays(Mapping[str, np.ndarray]):
    """An artifact's arrays by name, each read whole into memory when asked for."""

    def __init__(self, stored: StoredArtifact) -> None:
        self._stored = stored
        self._info: dict[str, dict[str, Any]] = dict(stored.meta.get("arrays") or {})

    def __getitem__(self, name: str) -> np.ndarray:
        return np.asarray(self._stored[name][...])

    def __iter__(self) -> Iterator[str]:
        return iter(self._stored.array_names())

    def __len__(self) -> int:
        return len(self._stored.array_names())

    def describe(self, name: str) -> str:
        """`dtype (shape)` of one array, from the metadata (nothing is read)."""
        info = self._info.get(name)
        if info is None:
            node = self._stored[name]
            return f"{node.dtype} {tuple(node.shape)}"
        return f"{info['dtype']} {tuple(info['shape'])}"

    def __repr__(self) -> str:
        return "{" + ", ".join(f"{n!r}: {self.describe(n)}" for n in self) + "}"


class Artifact:
    """A stored artifact that explains itself: parameters, inputs, arrays, summary, lineage."""

    def __init__(self, store: Store, stored: StoredArtifact) -> None:
        self.store = store
        self.stored = stored
        self.key = stored.key

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Artifact) and other.key == self.key

    def __hash__(self) -> int:
        return hash(self.key)

    @property
    def stage(self) -> str:
        """The stage that built it."""
        return self.stored.stage

    @property
    def version(self) -> int:
        """The stage's version that built it."""
        return int(self.stored.meta.get("version", 0))

    @property
    def params(self) -> dict[str, Any]:
        """The parameters it was built with (those in its key)."""
        return self.stored.params

    @property
    def inputs(self) -> dict[str, str]:
        """Input name -> key of the artifact it was built from."""
        return self.stored.inputs

    @property
    def summary(self) -> dict[str, Any]:
        """What its stage reported (the headline numbers, with their intervals)."""
        return dict(self.stored.meta.get("summary") or {})

    @property
    def meta(self) -> dict[str, Any]:
        """All its recorded metadata (`artifacts show --json`)."""
        return dict(self.stored.meta)

    @property
    def created(self) -> str:
        """When it was committed (UTC, ISO 8601)."""
        return str(self.stored.meta.get("created", ""))

    @property
    def arrays(self) -> Arrays:
        """Its arrays by name, read as numpy arrays."""
        return Arrays(self.stored)

    @property
    def upstream(self) -> dict[str, Artifact]:
        """Its inputs, opened: input name -> artifact."""
        return {name: self.store.open(key) for name, key in self.inputs.items()}

    def lineage(self) -> list[Artifact]:
        """Every artifact it was built from, directly or not, each before those built from it."""
        order: list[Artifact] = []
        seen: set[str] = set()

        def visit(artifact: Artifact) -> None:
            for upstream in artifact.upstream.values():
                if upstream.key not in seen:
                    seen.add(upstream.key)
                    visit(upstream)
                    order.append(upstream)

        visit(self)
        return order

    def dependents(self) -> list[Artifact]:
        """The stored artifacts built from this one."""
        return [self.store.open(k) for k in self.store.artifacts.dependents(self.key)]

    def findings(self) -> list[Finding]:
        """Its headline results, as a flow's findings read them (none for most stages)."""
        reader = reader_for(self.stage)
        return [] if reader is None else reader(self.stage, self.stored)

    def figure(self, hand: str | None = None) -> Figure:
        """Its figure, as `gameforge artifacts plot KEY [--hand H]` draws and saves it."""
        from gameforge.flows.plots import render
        from gameforge.flows.plots.output import figure_path

        out = figure_path(self.store.artifacts, self.key, None, hand)
        _, figures = render(self.stored, Path(out), hand)
        show_figures_in_notebooks()
        return figures[0]

    def _parts(self) -> list[tuple[str, str]]:
        params = ", ".join(f"{n}={_short(v)}" for n, v in self.params.items())
        inputs = ", ".join(f"{n}={k}" for n, k in self.inputs.items()) or "none"
        arrays = self.arrays
        names = list(arrays)
        listed = ", ".join(f"{n} {arrays.describe(n)}" for n in names[:4])
        more = f", ... ({len(names)} arrays)" if len(names) > 4 else ""
        parts = [("parameters", params), ("inputs", inputs), ("arrays", listed + more)]
        findings = self.findings()
        if findings:
            parts += [("finding", f"{f.what} = {f.value}") for f in findings[:6]]
        else:
            parts.append(("summary", _summary_text(self.summary)))
        return parts

    def __repr__(self) -> str:
        built = self.created[:16].replace("T", " ")
        head = f"{self.key}: stage {self.stage} v{self.version}, built {built} UTC"
        width = max(len(name) for name, _ in self._parts()) + 2
        lines = [f"  {(name + ':').ljust(width)}{text}" for name, text in self._parts()]
        return "\n".join([head, *lines])

    def _repr_html_(self) -> str:
        built = self.created[:16].replace("T", " ")
        head = f"<b>{html.escape(self.key)}</b>: stage {html.escape(self.stage)} v{self.version}"
        return f"{head}, built {built} UTC" + _html_table(("", ""), self._parts())


class Run:
    """One recorded run of a flow: what it asked for, each node's artifact, its findings."""

    def __init__(self, store: Store, record: RunRecord) -> None:
        self.store = store
        self.record = record
        self.run_id = record.run_id
        self.flow = record.flow
        self.preset = record.preset
        self.status = record.shown_status()

    @property
    def keys(self) -> dict[str, str]:
        """Node label -> artifact key."""
        return {label: n["key"] for label, n in self.record.nodes.items() if n.get("key")}

    @property
    def artifacts(self) -> dict[str, Artifact]:
        """Node label -> its artifact (those still stored)."""
        found = self.store.artifacts
        return {label: self.store.open(k) for label, k in self.keys.items() if found.exists(k)}

    def __getitem__(self, label: str) -> Artifact:
        if label not in self.keys:
            raise KeyError(f"run {self.run_id} has no node {label!r} (has: {', '.join(self.keys)})")
        return self.store.open(self.keys[label])

    @property
    def findings(self) -> list[Finding]:
        """Its headline results with their intervals (what `gameforge run` prints last)."""
        return run_findings(self.flow, self.keys, self.store.artifacts)

    def _nodes(self) -> list[tuple[str, str, str]]:
        rows = []
        for label, node in self.record.nodes.items():
            cached, seconds = node.get("cached"), node.get("seconds")
            how = str(node.get("planned") or "?")  # a run that never ended: what it planned
            if cached is not None:
                how = "cached" if cached else "computed"
            if cached is False and isinstance(seconds, int | float):
                how += f", {seconds:.1f} s"
            rows.append((label, str(node.get("key", "")), how))
        return rows

    def __repr__(self) -> str:
        preset = f" [{self.preset}]" if self.preset else ""
        lines = [f"run {self.run_id}: {self.flow}{preset}, {self.status}"]
        lines += [f"  {label}: {key} ({how})" for label, key, how in self._nodes()]
        lines += [f"  finding: {f.what} = {f.value}" for f in self.findings]
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        preset = f" [{self.preset}]" if self.preset else ""
        head = html.escape(f"run {self.run_id}: {self.flow}{preset}, {self.status}")
        nodes = _html_table(("node", "artifact", ""), self._nodes())
        findings = [(f.what, f.value, f.key) for f in self.findings]
        rows = _html_table(("finding", "value", "artifact"), findings) if findings else ""
        return head + nodes + rows


def show_figures_in_notebooks() -> None:
    """In a Jupyter kernel, show matplotlib Figures as PNG images (figures here use Agg)."""
    try:
        from IPython import get_ipython
        from IPython.core.pylabtools import select_figure_formats
    except ImportError:
        return
    shell = get_ipython()
    if shell is not None and hasattr(shell, "kernel"):
        select_figure_formats(shell, {"png"})


def _short(value: Any, width: int = 40) -> str:
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    return text if len(text) <= width else text[: width - 3] + "..."


def _labels_text(labels: dict[str, Any] | None) -> str:
    return ", ".join(f"{n}={_short(v, 24)}" for n, v in (labels or {}).items())


def _summary_text(summary: dict[str, Any], most: int = 6) -> str:
    """The summary's first few plain values, one line."""
    from gameforge.artifacts.runs import headline_values

    values = list(headline_values(summary).items())
    shown = ", ".join(f"{n}={_short(v, 24)}" for n, v in values[:most])
    return (shown + (", ..." if len(values) > most else "")) or "none"


def _html_table(head: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A small HTML table, every cell escaped."""
    cells = "".join(f"<th style='text-align:left'>{html.escape(h)}</th>" for h in head)
    body = "".join(
        "<tr>" + "".join(f"<td style='text-align:left'>{html.escape(str(c))}</td>" for c in row)
        + "</tr>"
        for row in rows
    )  # fmt: skip
    return f"<table><thead><tr>{cells}</tr></thead><tbody>{body}</tbody></table>"
