"""Every figure (`gameforge artifacts plot`) drawn from real artifacts, and the store's gallery.

One session store holds every flow's artifacts at the `tiny` preset, made smaller where the
preset takes minutes on two cores (`tests/tiny_runs.py`: fewer buckets, iterations, hands,
games and steps; the figures need the data's shapes, not its quality), plus a `best-response`
and two `lbr` artifacts, which no plain flow run makes. Each figure must have drawn data (a line
of more than one point, bars, an image, a filled area or markers) on the matplotlib Figure
itself, not only have written a PNG; the gallery page is opened in headless Chromium where one
is installed.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from gameforge.artifacts import ArtifactStore
from gameforge.flows.plots import PLOTTERS, render
from gameforge.flows.specs import FLOWS
from gameforge.stages.executor import InProcessExecutor
from gameforge.stages.runner import run_stage
from tests.tiny_runs import build_tiny_store

BIN = Path(sys.executable).parent
quiet = lambda _m: None  # noqa: E731

# Stages that flows produce but that deliberately have no figure, with the reason. None today:
# every stage a flow runs has a plot.
UNPLOTTED: dict[str, str] = {}


@pytest.fixture(scope="session")
def plot_store(tmp_path_factory: pytest.TempPathFactory) -> ArtifactStore:
    """Every flow's stages at (reduced) tiny presets; best-response and lbr on Kuhn's solve and
    lbr on an abstract Hold'em solve, so the cfr figures show those measurements."""
    store = ArtifactStore(tmp_path_factory.mktemp("plots") / "store")
    build_tiny_store(store, InProcessExecutor())
    return store


def keys_by_stage(store: ArtifactStore) -> dict[str, list[str]]:
    """The store's complete artifacts, grouped by stage."""
    keys = store.keys()
    grouped: dict[str, list[str]] = {}
    for key in keys:
        grouped.setdefault(store.open(key).stage, []).append(key)
    return grouped


def drawn_data(fig) -> list[str]:  # type: ignore[no-untyped-def]
    """What the figure's plotting axes (colour bars aside) draw in data coordinates: lines of
    more than one point, non-empty collections (markers, filled areas), images, bars."""
    from matplotlib.patches import Rectangle

    found = []
    for ax in fig.axes:
        if ax.get_label() == "<colorbar>":
            continue
        for line in ax.get_lines():
            # reference lines (axhline/axvline) are drawn in axes coordinates: not data
            if line.get_transform() is ax.transData and len(line.get_xdata()) > 1:
                found.append(f"line {line.get_label()}")
        for collection in ax.collections:
            if len(collection.get_offsets()) > 0 or len(collection.get_paths()) > 0:
                found.append(type(collection).__name__)
        for image in ax.get_images():
            if np.asarray(image.get_array()).size > 0:
                found.append("image")
        for patch in ax.patches:
            if isinstance(patch, Rectangle):
                if patch.get_width() != 0 and patch.get_height() != 0:
                    found.append("bar")
            elif len(patch.get_path().vertices) > 2:
                found.append(type(patch).__name__)
    return found


def test_every_plot_kind_draws_data_from_tiny_artifacts(plot_store, tmp_path):
    """Each stage's figure from real artifacts: a PNG, a one-line description and drawn data
    on every Figure; every plotter is exercised, and every stage a flow runs has one."""
    by_stage = keys_by_stage(plot_store)
    # One artifact per stage, and every cfr solve: their figures differ with what measured them.
    chosen = [keys[0] for stage, keys in sorted(by_stage.items()) if stage != "cfr"]
    chosen += by_stage.get("cfr", [])
    rendered: dict[str, list[str]] = {}
    labels: dict[str, list[str]] = {}
    for key in chosen:
        artifact = plot_store.open(key)
        if artifact.stage not in PLOTTERS:
            continue
        png = tmp_path / f"{key}.png"
        description, figures = render(artifact, png)
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", key
        assert description.strip() and "\n" not in description, (key, description)
        assert figures, f"{key}: no figure captured"
        for fig in figures:
            assert drawn_data(fig), f"{key} ({artifact.stage}): a figure without data"
            assert fig.get_suptitle() or any(ax.get_title() for ax in fig.axes), key
        rendered.setdefault(artifact.stage, []).append(description)
        labels[key] = [
            text.get_text()
            for fig in figures
            for legend in fig.legends
            for text in legend.get_texts()
        ] + [line.get_label() for fig in figures for ax in fig.axes for line in ax.get_lines()]
    assert set(PLOTTERS) - set(rendered) == set(), "plotters never exercised"
    produced = {node.stage for spec in FLOWS.values() for node in spec.nodes}
    assert produced - set(by_stage) == set(), "the fixture missed stages that flows run"
    assert produced - set(PLOTTERS) - set(UNPLOTTED) == set(), "flow stages without a figure"
    assert set(UNPLOTTED) & set(PLOTTERS) == set(), "UNPLOTTED lists a stage that has a plot"
    # The measurements of the store reach the cfr figures: Kuhn's exact best response, the
    # abstract solve's LBR point.
    cfr_labels = [" ".join(labels[key]) for key in by_stage["cfr"]]
    assert any("best-response artifact" in text for text in cfr_labels)
    assert any("LBR" in text for text in cfr_labels)


def test_every_finding_reader_reads_the_tiny_artifacts(plot_store):
    """Each stage a flow reports its findings from gives rows for every tiny artifact of it:
    a value, the artifact's key, and an interval or an exact figure where the stage has one."""
    from gameforge.flows.findings import reader_for

    read = set()
    for stage, keys in keys_by_stage(plot_store).items():
        reader = reader_for(stage)
        if reader is None:
            continue
        for key in keys:
            rows = reader(stage, plot_store.open(key))
            assert rows, f"{stage} {key}: no findings"
            assert all(row.value and row.key == key for row in rows), rows
        read.add(stage)
    reported = {n.stage for f in FLOWS.values() for n in f.nodes if n.name in f.findings}
    assert reported <= read, f"no tiny artifact of {sorted(reported - read)} was read"


def test_league_figure_mutes_insignificant_cells_and_has_a_colour_bar(plot_store, tmp_path):
    """Cells whose 95% interval holds 0 are grey (masked), the others coloured; a colour bar
    in mbb/g."""
    league = plot_store.open(keys_by_stage(plot_store)["league"][0])
    _, (fig,) = render(league, tmp_path / "league.png")
    image = fig.axes[0].get_images()[0]
    mbb = np.asarray(league["mbb_per_game"][:])
    ci = np.asarray(league["ci95"][:])
    significant = (np.abs(mbb) > ci) & ~np.eye(len(mbb), dtype=bool)
    assert np.array_equal(~np.ma.getmaskarray(image.get_array()), significant)
    bars = [ax for ax in fig.axes if ax.get_label() == "<colorbar>"]
    assert len(bars) == 1 and "mbb/g" in bars[0].get_ylabel()


def test_cfr_time_axis_starts_after_the_start_up(plot_store, tmp_path):
    """Kuhn's curve times hold the start-up (compiling the solver) in the first point: the
    time panel counts from there, so its axis spans the solve, not 6.20-6.25 s."""
    solves = [plot_store.open(key) for key in keys_by_stage(plot_store)["cfr"]]
    cfr = next(s for s in solves if s.meta["summary"]["abstraction"] == "lossless")
    seconds = np.asarray(cfr["curve_seconds"][:])
    _, (fig,) = render(cfr, tmp_path / "cfr.png")
    time_axes = fig.axes[1]
    lines = [line for line in time_axes.get_lines() if len(line.get_xdata()) > 1]
    assert lines
    for line in lines:
        x = np.asarray(line.get_xdata(), dtype=np.float64)
        assert x.max() == pytest.approx(seconds[-1] - seconds[0])
    assert "start-up" in time_axes.get_xlabel()


def test_cfr_figures_define_exploitability_only_where_they_draw_it(plot_store, tmp_path):
    """The footnote defines exploitability only on a figure with an exploitability series or
    point (a chance-sampled abstract solve has neither: it defines only regret / T)."""
    for key in keys_by_stage(plot_store)["cfr"]:
        _, (fig,) = render(plot_store.open(key), tmp_path / "cfr.png")
        (legend,) = fig.legends
        drawn = any("exploitability" in text.get_text() for text in legend.get_texts())
        assert ("exploitability:" in legend.get_title().get_text()) == drawn, key
        assert "positive regret / T:" in legend.get_title().get_text(), key


def gameforge(*args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    """The command line, as a user runs it."""
    env = dict(os.environ, NO_COLOR="1", COLUMNS="200")
    return subprocess.run(
        [str(BIN / "gameforge"), *args], capture_output=True, text=True, env=env, timeout=timeout
    )


@pytest.fixture(scope="session")
def gallery(plot_store, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """`gameforge artifacts plot --all` over the plot store: (its folder, its output)."""
    out = tmp_path_factory.mktemp("gallery") / "gallery"
    result = gameforge("artifacts", "plot", "--all", "--store", str(plot_store.root), "--out",
                       str(out))  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    return out, result.stdout


def test_gallery_lists_every_artifact_with_its_lineage(plot_store, gallery):
    """One entry per complete artifact, after its inputs, each input a link to its entry; a
    figure per artifact whose stage has one, linked by a relative path that exists."""
    out, stdout = gallery
    page = (out / "index.html").read_text(encoding="utf-8")
    keys = plot_store.keys()
    assert f"{len(keys)} figures, 0 failed" in stdout.replace("\n", " ")
    positions = {key: page.index(f'<section class="artifact" id="{key}">') for key in keys}
    for key in keys:
        artifact = plot_store.open(key)
        for upstream in artifact.inputs.values():
            assert positions[upstream] < positions[key], (upstream, key)
            section = page[positions[key] : page.index("</section>", positions[key])]
            assert f'href="#{upstream}"' in section
    sources = re.findall(r'<img src="([^"]+)"', page)
    assert sorted(sources) == sorted(f"{key}.png" for key in keys)
    links = re.findall(r'(?:href|src)="([^"]+)"', page)
    assert all("://" not in link and not link.startswith("/") for link in links), links
    assert all((out / link).is_file() for link in links if not link.startswith("#"))


def test_gallery_reports_a_failing_plot_and_escapes_html(tmp_path, monkeypatch):
    """A plot that raises is listed with its error (escaped) and the others are still drawn."""
    import tests.toy_stages  # noqa: F401  (registers the toy stages)
    from gameforge.flows.plots import common, gallery

    store = ArtifactStore(tmp_path / "store")
    squares = run_stage("toy-squares", {"n": 40, "chunk": 10}, store=store, log=quiet)
    double = run_stage("toy-double", {}, {"squares": squares.key}, store=store, log=quiet)

    def broken(artifact, out, hand):  # type: ignore[no-untyped-def]
        raise ValueError("no <figure> & no luck")

    def squares_plot(artifact, out, hand):  # type: ignore[no-untyped-def]
        with common.figure(out) as (fig, ax):
            ax.plot(np.asarray(artifact["doubled"][:]))
        return "doubled squares <i>"

    monkeypatch.setitem(PLOTTERS, "toy-squares", broken)
    monkeypatch.setitem(PLOTTERS, "toy-double", squares_plot)
    entries = gallery.write_gallery(store, tmp_path / "out")
    by_key = {entry.key: entry for entry in entries}
    assert [entry.key for entry in entries] == [squares.key, double.key]  # inputs first
    assert by_key[squares.key].error == "ValueError: no <figure> & no luck"
    assert by_key[squares.key].image is None
    assert by_key[double.key].image == f"{double.key}.png"
    page = (tmp_path / "out" / "index.html").read_text(encoding="utf-8")
    assert "plot failed: ValueError: no &lt;figure&gt; &amp; no luck" in page
    assert "doubled squares &lt;i&gt;" in page and "<i>" not in page
    assert f'squares: <a href="#{squares.key}">' in page


def test_plot_command_takes_a_key_or_all(plot_store):
    """KEY and --all exclude each other: either mistake is one line on stderr."""
    for args in ((), ("river-hs", "--all")):
        result = gameforge("artifacts", "plot", *args, "--store", str(plot_store.root))
        assert result.returncode == 2
        assert result.stderr.strip().count("\n") == 0
        assert "give an artifact KEY" in result.stderr and "--all" in result.stderr


def chromium_binary() -> str | None:
    """A Chromium (or Chrome) on PATH, if any."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if found := shutil.which(name):
            return found
    return None


def test_gallery_images_load_in_a_browser(request):
    """Headless Chromium opens index.html from disk; the page's own check marks every image
    loaded (naturalWidth > 0) once the load event fired."""
    binary = chromium_binary()
    if binary is None:
        pytest.skip("no chromium on PATH (Debian: apt-get install -y chromium)")
    out, _ = request.getfixturevalue("gallery")  # built only where a browser can open it
    page = (out / "index.html").resolve()
    result = subprocess.run(
        [binary, "--headless", "--disable-gpu", "--no-sandbox", "--virtual-time-budget=20000",
         "--dump-dom", page.as_uri()],
        capture_output=True, text=True, timeout=180,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-2000:]
    dom = result.stdout
    assert 'data-images-checked="yes"' in dom, "the page's load handler never ran"
    images = re.findall(r"<img [^>]*>", dom)
    assert len(images) == len(re.findall(r"<img ", page.read_text(encoding="utf-8"))) > 0
    unloaded = [tag for tag in images if 'data-loaded="yes"' not in tag]
    assert not unloaded, unloaded


# Stated bounds of the resource estimates against the peak RSS each artifact records: never
# under by more than this factor, never over by more than this factor plus the fixed margin
# (at tiny sizes the estimate is mostly its working-memory allowance).
UNDER, OVER, MARGIN = 3.0, 3.0, 400 << 20


def test_resource_estimates_bound_the_measured_peaks_of_every_tiny_artifact(plot_store):
    from gameforge.stages.timing import recorded_footprint

    rows, undeclared = [], set()
    for key in plot_store.keys():  # noqa: SIM118 (a store, not a dict)
        artifact = plot_store.open(key)
        footprint = recorded_footprint(plot_store, key)
        if footprint is None:
            undeclared.add(artifact.stage)
            continue
        memory = artifact.meta["memory"]
        measured = memory["peak_rss_bytes"] - memory["rss_before_bytes"]
        rows.append((artifact.stage, key, footprint.memory, measured))
    assert not undeclared, f"stages without a resource estimate: {sorted(undeclared)}"
    bad = [
        r for r in rows if r[3] > UNDER * r[2] or r[2] > OVER * r[3] + MARGIN
    ]  # fmt: skip
    assert not bad, "\n".join(f"{s} {k}: estimate {e:,} B, measured {m:,} B" for s, k, e, m in bad)
    assert len({r[0] for r in rows}) >= 20  # every kind of stage the flows make


# The tests' own builds run one thread a process (tests/conftest.py), beside another test file:
# their durations run up to this much longer than the runs alone on two cores that the time
# models were fitted to.
SUITE_SLOWDOWN = 2.0


def test_time_estimates_match_the_durations_every_tiny_artifact_records(plot_store):
    """stages/timing.py's estimates against the durations the tests' own runs record: the
    whole store within the stated factor (times the suite's slowdown), each kind of stage
    taking five seconds or more within twice that (shorter ones are mostly start-up noise)."""
    from gameforge.stages.timing import FACTOR, model_name, recorded_footprint, stage_seconds

    measured: dict[str, float] = {}
    estimated: dict[str, float] = {}
    for key in plot_store.keys():  # noqa: SIM118 (a store, not a dict)
        artifact = plot_store.open(key)
        footprint = recorded_footprint(plot_store, key)
        assert footprint is not None, key
        name = model_name(artifact.stage, footprint)
        seconds = stage_seconds(artifact.stage, footprint)
        assert seconds is not None, f"{name} has no time model: refit bench/stage_times.py"
        measured[name] = measured.get(name, 0.0) + artifact.meta["duration_s"]
        estimated[name] = estimated.get(name, 0.0) + seconds
    bound = FACTOR * SUITE_SLOWDOWN
    table = "\n".join(
        f"{n}: estimate {estimated[n]:.1f} s, measured {measured[n]:.1f} s"
        for n in sorted(measured)
    )
    assert 1 / bound <= sum(estimated.values()) / sum(measured.values()) <= bound, table
    off = [
        n for n, s in measured.items()
        if s >= 5.0 and not 0.5 / bound <= estimated[n] / s <= 2 * bound
    ]  # fmt: skip
    assert not off, f"{off}\n{table}"
