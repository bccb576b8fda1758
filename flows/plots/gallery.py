"""A store's gallery (`gameforge artifacts plot --all --out DIR`): every figure, one HTML page.

`write_gallery` draws the figure of every complete artifact whose stage has a plot into
`DIR/KEY.png` and writes `DIR/index.html`. The page opens with its navigation: the store's runs,
newest first, each listing its artifacts by game, then every artifact by game and stage. Each
link says what the figure is: its stage and the parameters that tell it from its siblings
(`hearts-falcon · actions previous · seed 2`, as `artifacts ls` labels them), never a bare key.
Then per artifact its title, key, stage and version, its parameters, its inputs as links to
their entries (so a run's lineage can be followed in a browser), what uses it, the plot's
one-line description and the figure. Artifacts without a plot get a short entry, so every input
link lands somewhere. A plot that fails is listed with its error; the rest of the gallery is
still written. Every link in the page is relative: the folder can be moved, archived or served
as it is.
"""

from __future__ import annotations

import html
import multiprocessing
import re
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

from gameforge.artifacts import Artifact, ArtifactStore

INDEX = "index.html"
# Parameters every poker artifact carries that say nothing a reader needs (the game's name
# is shown; its digest only pins the file's content).
HIDDEN_PARAMS = frozenset({"game_digest"})


@dataclass
class GalleryEntry:
    """One artifact of the gallery: its lineage and what its plot gave."""

    key: str
    stage: str
    version: int
    params: dict[str, Any]
    inputs: dict[str, str]
    used_by: list[str] = field(default_factory=list)
    game: str = ""
    labels: dict[str, Any] = field(default_factory=dict)  # what tells it from its siblings
    image: str | None = None  # the PNG's file name in the gallery folder
    description: str | None = None
    error: str | None = None

    @property
    def has_plot(self) -> bool:
        """True when the stage has a plot (drawn, or failed)."""
        return self.image is not None or self.error is not None

    @property
    def title(self) -> str:
        """What the figure is, in words: `stage · label · label` (the game is said apart)."""
        return " · ".join([self.stage, *(label_text(n, v) for n, v in self.labels.items())])


@dataclass
class GalleryRun:
    """One recorded run of the store, as the page's navigation lists it."""

    run_id: str
    flow: str
    preset: str | None
    status: str
    started: str
    keys: list[str]  # the run's artifacts that are in the gallery, in node order
    nodes: dict[str, str] = field(default_factory=dict)  # key -> the run's node label

    @property
    def heading(self) -> str:
        """`flow · preset tiny · completed · 2026-11-29 00:02 UTC`."""
        parts = [self.flow]
        if self.preset:
            parts.append(f"preset {self.preset}")
        parts += [self.status, self.started[:16].replace("T", " ") + " UTC"]
        return " · ".join(parts)


# Parameters that read best with the count first ("400 episodes", not "episodes 400").
COUNTS = frozenset(
    {"episodes", "games", "iterations", "steps", "deals", "hands", "epochs", "restarts", "trials"}
)


def label_text(name: str, value: Any) -> str:
    """One distinguishing parameter in words: `seed 2`, `400 episodes`, `1 game`, `k=8`,
    `svr`/`no svr` (numbers other than counts as typed: seed 20000004)."""
    if isinstance(value, bool):
        return name if value else f"no {name}"
    text = _value_text(value)
    if isinstance(value, int) and name in COUNTS:  # a count: 1 game, 200,000 iterations
        return f"{value:,} {name[:-1] if value == 1 else name}"
    return f"{name}={text}" if len(name) == 1 else f"{name} {text}"  # k=8 as papers write it


def lineage_order(artifacts: dict[str, Artifact]) -> list[str]:
    """Keys with every artifact after the inputs it names (those in the store); otherwise in
    the order the stages are registered (poker, then the other games), then by key."""
    from gameforge.stages.registry import all_stages

    rank = {name: i for i, name in enumerate(all_stages())}
    ordered: list[str] = []
    seen: set[str] = set()

    def visit(key: str) -> None:
        if key in seen:
            return
        seen.add(key)
        for upstream in sorted(artifacts[key].inputs.values()):
            if upstream in artifacts:
                visit(upstream)
        ordered.append(key)

    for key in sorted(artifacts, key=lambda k: (rank.get(artifacts[k].stage, len(rank)), k)):
        visit(key)
    return ordered


def _draw(store_root: str, key: str, png: str) -> tuple[str | None, str | None]:
    """Draw one artifact's figure to `png`: (its description, None) or (None, the error)."""
    from gameforge.flows.plots import plot
    from gameforge.flows.runlog import one_line

    try:
        return plot(ArtifactStore(store_root).open(key), Path(png)), None
    except Exception as exc:  # any failure of one plot is reported, not fatal
        return None, one_line(exc)


def _drawn(
    store: ArtifactStore, jobs: list[tuple[str, Path]], workers: int
) -> Iterator[tuple[str | None, str | None]]:
    """`_draw` of each (key, png) job, in order; over `workers` processes when more than one
    (matplotlib draws on one core, and a store's figures are independent)."""
    if workers <= 1 or len(jobs) <= 1:
        for key, png in jobs:
            yield _draw(store.location, key, str(png))
        return
    # spawn: forking a process that may hold zarr's and Dask's threads is not safe
    pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"))
    try:
        futures: list[Future[tuple[str | None, str | None]]] = [
            pool.submit(_draw, store.location, key, str(png)) for key, png in jobs
        ]
        for future in futures:
            yield future.result()
    finally:  # an interrupted gallery drops the figures not yet started
        pool.shutdown(wait=True, cancel_futures=True)


def write_gallery(
    store: ArtifactStore,
    out_dir: Path,
    on_entry: Callable[[GalleryEntry], None] | None = None,
    workers: int = 1,
) -> list[GalleryEntry]:
    """Draw every plot of the store's complete artifacts into `out_dir` and write its
    `index.html`; returns the entries in page order (`on_entry` sees each one as it is done).

    `workers` > 1 draws in that many spawned processes, which, as with any multiprocessing,
    needs the calling script's work under `if __name__ == "__main__":`."""
    from gameforge.flows.plots import PLOTTERS

    out_dir.mkdir(parents=True, exist_ok=True)
    complete = store.keys()  # committed artifacts only: partial builds are never listed
    artifacts = {key: store.open(key) for key in complete}
    used_by: dict[str, list[str]] = {key: [] for key in artifacts}
    for key, artifact in artifacts.items():
        for upstream in artifact.inputs.values():
            if upstream in used_by:
                used_by[upstream].append(key)
    order = lineage_order(artifacts)
    jobs = [(key, out_dir / f"{key}.png") for key in order if artifacts[key].stage in PLOTTERS]
    for _key, png in jobs:
        png.unlink(missing_ok=True)  # never show a figure left by an earlier gallery
    described = _described(store, list(artifacts))
    results = _drawn(store, jobs, workers or 1)
    entries = []
    for key in order:
        artifact = artifacts[key]
        entry = GalleryEntry(
            key=key,
            stage=artifact.stage,
            version=int(artifact.meta.get("version", 0)),
            params={k: v for k, v in artifact.params.items() if k not in HIDDEN_PARAMS},
            inputs=artifact.inputs,
            used_by=sorted(used_by[key]),
            game=described[key]["game"] or "",
            labels=described[key]["labels"],
        )
        if artifact.stage in PLOTTERS:
            entry.description, entry.error = next(results)
            if entry.error is None:
                entry.image = f"{key}.png"
        entries.append(entry)
        if on_entry is not None:
            on_entry(entry)
    (out_dir / INDEX).write_text(index_html(entries, gallery_runs(store, artifacts)), "utf-8")
    return entries


def _described(store: ArtifactStore, keys: list[str]) -> dict[str, dict[str, Any]]:
    """Per key its game and the labels that tell it from its stage's siblings (as `artifacts
    ls` shows them)."""
    from gameforge.flows.listing import describe

    wanted = set(keys)
    infos = [info for info in store.entries() if info.key in wanted]
    return {info.key: found for info, found in zip(infos, describe(store, infos), strict=True)}


def gallery_runs(store: ArtifactStore, present: dict[str, Any]) -> list[GalleryRun]:
    """The store's recorded runs that name an artifact of the gallery, newest first."""
    from gameforge.artifacts.runs import RunLedger

    runs = []
    for record in reversed(RunLedger(store).all()):
        nodes = {n["key"]: label for label, n in record.nodes.items() if n.get("key") in present}
        keys = [key for key in dict.fromkeys(record.artifact_keys()) if key in present]
        if keys:
            runs.append(
                GalleryRun(record.run_id, record.flow, record.preset, record.shown_status(),
                           record.started, keys, nodes)
            )  # fmt: skip
    return runs


def _value_text(value: Any) -> str:
    """A parameter value as it would be typed in `--set` (lists comma-separated)."""
    if isinstance(value, list | tuple):
        return ",".join(_value_text(v) for v in value)
    return str(value)


def _named_link(entry: GalleryEntry, node: str = "") -> str:
    """A same-page link to an entry that says what it is (stage and labels; in a run, its node
    where that is not the stage's name: `train-3: blokus-train · seed 3`), the key beside it in
    small type (still there to copy)."""
    e = html.escape
    mark = "" if entry.has_plot else " (no figure)"
    named = f"{node}: {entry.title}" if node and node != entry.stage else entry.title
    return (
        f'<a href="#{quote(entry.key)}">{e(named)}</a>{mark} '
        f"<small><code>{e(entry.key)}</code></small>"
    )


def _by_game(entries: list[GalleryEntry]) -> dict[str, list[GalleryEntry]]:
    """Entries grouped by game, in first-seen order."""
    groups: dict[str, list[GalleryEntry]] = {}
    for entry in entries:
        groups.setdefault(entry.game or "(no game)", []).append(entry)
    return groups


def _games_list(entries: list[GalleryEntry], nodes: dict[str, str] | None = None) -> str:
    """Nested lists: each game, then its entries' links."""
    items = []
    for game, group in _by_game(entries).items():
        links = "".join(
            f"<li>{_named_link(entry, (nodes or {}).get(entry.key, ''))}</li>" for entry in group
        )
        items.append(f"<li><b>{html.escape(game)}</b><ul>{links}</ul></li>")
    return f"<ul>{''.join(items)}</ul>"


def _stage_then_title(entries: list[GalleryEntry]) -> list[GalleryEntry]:
    """Entries by stage, the stages in page (lineage) order, then by title with numbers compared
    as numbers (seed 2 before seed 10)."""
    first: dict[str, int] = {}
    for i, entry in enumerate(entries):
        first.setdefault(entry.stage, i)

    def natural(text: str) -> list[Any]:
        return [(0, int(part), "") if part.isdigit() else (1, 0, part)
                for part in re.split(r"(\d+)", text)]  # fmt: skip

    return sorted(entries, key=lambda x: (first[x.stage], natural(x.title)))


def navigation_html(entries: list[GalleryEntry], runs: list[GalleryRun]) -> str:
    """The page's navigation: runs (newest open), each by game; then every artifact by game."""
    e = html.escape
    by_key = {entry.key: entry for entry in entries}
    parts = ["<nav>"]
    if runs:
        parts.append("<h2>Runs</h2>")
        for i, run in enumerate(runs):
            listed = [by_key[key] for key in run.keys]
            parts.append(
                f"<details{' open' if i == 0 else ''}><summary><b>{e(run.heading)}</b> "
                f"<small>run <code>{e(run.run_id)}</code>, {len(listed)} artifacts</small>"
                f"</summary>{_games_list(listed, run.nodes)}</details>"
            )
    parts.append("<h2>By game</h2>")
    parts.append(_games_list(_stage_then_title(entries)))
    parts.append("</nav>")
    return "\n".join(parts)


def _entry_html(entry: GalleryEntry, present: dict[str, GalleryEntry]) -> str:
    """One artifact's section: title, lineage, description and figure (or its error)."""
    e = html.escape
    params = " ".join(
        f"<code>{e(name)}={e(_value_text(value))}</code>" for name, value in entry.params.items()
    )
    inputs = []
    for name, key in entry.inputs.items():
        target = (
            _named_link(present[key]) if key in present
            else f"<code>{e(key)}</code> (not in this store)"
        )  # fmt: skip
        inputs.append(f"<li>{e(name)}: {target}</li>")
    rows = [f"<dt>parameters</dt><dd>{params or '(none)'}</dd>"]
    rows.append(f"<dt>inputs</dt><dd><ul>{''.join(inputs)}</ul></dd>" if inputs else
                "<dt>inputs</dt><dd>(none)</dd>")  # fmt: skip
    if entry.used_by:
        users = "".join(f"<li>{_named_link(present[key])}</li>" for key in entry.used_by)
        rows.append(f"<dt>used by</dt><dd><ul>{users}</ul></dd>")
    game = f"{entry.game} · " if entry.game else ""
    parts = [
        f'<section class="artifact" id="{e(entry.key)}">',
        f'<h2><a href="#{quote(entry.key)}">{e(game + entry.title)}</a></h2>',
        f'<p class="stage"><code>{e(entry.key)}</code> stage <b>{e(entry.stage)}</b>, '
        f"version {entry.version}</p>",
        f"<dl>{''.join(rows)}</dl>",
    ]
    if entry.description is not None:
        parts.append(f'<p class="description">{e(entry.description)}</p>')
    if entry.image is not None:
        src = quote(entry.image)
        parts.append(f'<a href="{src}"><img src="{src}" alt="figure of {e(entry.key)}"></a>')
    if entry.error is not None:
        parts.append(f'<p class="error">plot failed: {e(entry.error)}</p>')
    parts.append("</section>")
    return "\n".join(parts)


# Marks each image's load state in the page (data-loaded="yes"/"no", a visible note on a
# broken one) once everything has loaded: for readers, and for the test that opens the page.
_CHECK_IMAGES = """
<script>
window.addEventListener("load", () => {
  for (const img of document.images) {
    const ok = img.complete && img.naturalWidth > 0;
    img.dataset.loaded = ok ? "yes" : "no";
    if (!ok) {
      const note = document.createElement("p");
      note.className = "error";
      note.textContent = "image did not load: " + img.getAttribute("src");
      img.closest("section").appendChild(note);
    }
  }
  document.body.dataset.imagesChecked = "yes";
});
</script>
"""

_STYLE = """
<style>
body { font-family: sans-serif; margin: 1.5em auto; max-width: 1400px; padding: 0 1em; }
section.artifact { border-top: 1px solid #ccc; padding: 0.5em 0 1em; }
section.artifact h2 { font-size: 1.1em; margin: 0.3em 0; }
section.plain { padding: 0.2em 0; }
dl { display: grid; grid-template-columns: max-content auto; gap: 0.2em 1em; margin: 0.4em 0; }
dt { color: #555; }
dd { margin: 0; }
dd ul { margin: 0; padding-left: 1.2em; }
code { background: #f3f3f3; padding: 0 0.2em; margin-right: 0.3em; }
img { max-width: 100%; border: 1px solid #ddd; }
.description { font-style: italic; }
.error { color: #b00020; font-weight: bold; }
nav li { margin: 0.1em 0; }
nav details { margin: 0.3em 0; }
nav summary { cursor: pointer; }
small code { color: #777; }
</style>
"""


def index_html(entries: list[GalleryEntry], runs: list[GalleryRun] | None = None) -> str:
    """The gallery page of `entries`, navigated by `runs` and game (HTML escaped, relative
    links only)."""
    e = html.escape
    present = {entry.key: entry for entry in entries}
    plotted = [entry for entry in entries if entry.has_plot]
    failed = [entry for entry in plotted if entry.error is not None]
    plain = [entry for entry in entries if not entry.has_plot]
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    counts = (
        f"{len(plotted) - len(failed)} figures, {len(failed)} failed, "
        f"{len(plain)} artifacts of stages without a figure"
    )
    body = [
        "<!doctype html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>gameforge gallery: {len(entries)} artifacts</title>",
        _STYLE,
        "</head><body>",
        f"<h1>gameforge gallery: {len(entries)} artifacts</h1>",
        f"<p>{e(counts)}; written {e(when)}. Artifacts come after their inputs; each input "
        "links to its entry.</p>",
    ]
    if failed:
        body.append(
            '<p class="error">failed: ' + " ".join(_named_link(entry) for entry in failed) + "</p>"
        )
    body.append(navigation_html(entries, runs or []))
    body.extend(_entry_html(entry, present) for entry in plotted)
    if plain:
        body.append("<h2>Artifacts of stages without a figure</h2>")
        body.extend(
            _entry_html(entry, present).replace('class="artifact"', 'class="artifact plain"', 1)
            for entry in plain
        )
    body.append(_CHECK_IMAGES)
    body.append("</body></html>")
    return "\n".join(body) + "\n"
