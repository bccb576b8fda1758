"""Where `gameforge artifacts plot` writes (the store's plots/ folder, `--out` a file or a folder,
the hand in the name) and the gallery's navigation by run and game, on toy artifacts."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

import tests.toy_stages  # noqa: F401  (registers the toy stages)
from gameforge.artifacts import ArtifactStore
from gameforge.artifacts.runs import RunLedger
from gameforge.flows.plots import PLOTTERS, common
from gameforge.flows.plots.output import figure_name, figure_path, gallery_folder, plots_folder
from gameforge.stages.base import StageError
from gameforge.stages.runner import run_stage

quiet = lambda _m: None  # noqa: E731


def _squares_plot(artifact, out, hand):  # type: ignore[no-untyped-def]
    with common.figure(out) as (_fig, ax):
        ax.plot(np.asarray(artifact[artifact.array_names()[0]][:]))
    return f"squares, hand {hand}"


@pytest.fixture
def toy(tmp_path, monkeypatch):  # type: ignore[no-untyped-def]
    """A store with two toy-squares artifacts (n 40 and 80) and a toy-double, one run naming
    them all; the toy stages drawn by a small plot."""
    monkeypatch.setitem(PLOTTERS, "toy-squares", _squares_plot)
    monkeypatch.setitem(PLOTTERS, "toy-double", _squares_plot)
    # the gallery draws in this process (spawned workers would not see the patched table)
    monkeypatch.setattr("os.cpu_count", lambda: 1)
    store = ArtifactStore(tmp_path / "store")
    small = run_stage("toy-squares", {"n": 40, "chunk": 10}, store=store, log=quiet)
    large = run_stage("toy-squares", {"n": 80, "chunk": 10}, store=store, log=quiet)
    double = run_stage("toy-double", {}, {"squares": small.key}, store=store, log=quiet)
    nodes = {
        "squares-small": {"key": small.key},
        "squares-large": {"key": large.key},
        "double": {"key": double.key},
    }
    RunLedger(store).record_done("toy", nodes, "gameforge run toy")
    return store, small.key, large.key, double.key


def plot_cli(*args: str, cwd: Path) -> tuple[int, str]:
    """`gameforge artifacts plot ARGS` in-process, from `cwd`: (exit code, output)."""
    import os

    from gameforge.flows.cli import app

    before = Path.cwd()
    os.chdir(cwd)
    try:
        result = CliRunner().invoke(app, ["artifacts", "plot", *args])
    finally:
        os.chdir(before)
    return result.exit_code, result.output


def test_figure_names_and_paths(tmp_path):
    """KEY.png, the hand in the name, --out a file, an existing or a new folder (a dot in its
    name included), the store's plots/ folder by default."""
    store = ArtifactStore(tmp_path / "store")
    assert plots_folder(store) == tmp_path / "store" / "plots"
    assert figure_name("hsd-ab12") == "hsd-ab12.png"
    assert figure_name("hsd-ab12", "9c7h/2d3d7d") == "hsd-ab12-9c7h-2d3d7d.png"
    assert figure_name("hsd-ab12", "Jc9h | 4d5d9d") == "hsd-ab12-Jc9h-4d5d9d.png"
    assert figure_path(store, "k", None, None) == tmp_path / "store" / "plots" / "k.png"
    assert (tmp_path / "store" / "plots").is_dir()
    assert figure_path(store, "k", tmp_path / "x.png", "9c7h") == tmp_path / "x.png"
    assert figure_path(store, "k", tmp_path / "a" / "X.PNG", None) == tmp_path / "a" / "X.PNG"
    assert figure_path(store, "k", tmp_path, None) == tmp_path / "k.png"
    dotted = tmp_path / "figs.v2"
    assert figure_path(store, "k", dotted, "9c7h") == dotted / "k-9c7h.png"
    assert dotted.is_dir()
    (tmp_path / "notes.txt").write_text("a file")
    with pytest.raises(StageError, match="is a file, not a folder"):
        figure_path(store, "k", tmp_path / "notes.txt", None)
    with pytest.raises(StageError, match="names a PNG file"):
        gallery_folder(store, tmp_path / "gallery.png")
    assert gallery_folder(store, None) == tmp_path / "store" / "plots"


def test_plot_goes_under_the_store_and_names_the_file(toy, tmp_path):
    """No --out: `<store>/plots/KEY.png`, nothing in the working directory; the message names
    the file; --hand adds the hand; --out FOLDER (made, a dot in its name) gets KEY.png."""
    store, small, _, _ = toy
    work = tmp_path / "work"
    work.mkdir()
    code, output = plot_cli(small[:14], "--store", str(store.root), cwd=work)
    expected = store.root / "plots" / f"{small}.png"
    assert code == 0, output
    assert output.strip() == f"wrote {expected}: squares, hand None"
    assert expected.read_bytes()[:4] == b"\x89PNG"
    assert list(work.iterdir()) == []
    code, output = plot_cli(small, "--store", str(store.root), "--hand", "9c7h/2d3d7d", cwd=work)
    with_hand = store.root / "plots" / f"{small}-9c7h-2d3d7d.png"
    assert code == 0 and output.startswith(f"wrote {with_hand}:") and with_hand.is_file()
    code, output = plot_cli(small, "--store", str(store.root), "--out", "figs.v2", cwd=work)
    assert code == 0, output
    assert output.startswith(f"wrote figs.v2/{small}.png:")
    assert (work / "figs.v2" / f"{small}.png").is_file()
    code, output = plot_cli(small, "--store", str(store.root), "--out", "one.png", cwd=work)
    assert code == 0 and output.startswith("wrote one.png:") and (work / "one.png").is_file()


def test_the_store_ignores_its_plots_folder(toy, tmp_path):
    """Listing, verify and gc neither list nor touch `<store>/plots`."""
    store, *keys = toy
    code, output = plot_cli("--all", "--store", str(store.root), cwd=tmp_path)
    assert code == 0, output
    plots = store.root / "plots"
    assert (plots / "index.html").is_file()
    before = sorted(p.name for p in plots.iterdir())
    assert sorted(store.keys()) == sorted(keys)
    assert {info.key for info in store.entries()} == set(keys)
    assert store.verify() == {key: [] for key in keys}
    assert store.gc() == []
    assert sorted(p.name for p in plots.iterdir()) == before


def test_gallery_is_navigated_by_run_and_game_with_telling_links(toy, tmp_path):
    """The page lists the run (flow, status) and every artifact by game; each link says its
    stage and what tells it from its siblings (n=40 / n=80), not only a key."""
    store, small, large, double = toy
    code, output = plot_cli("--all", "--store", str(store.root), cwd=tmp_path)
    assert code == 0, output
    index = store.root / "plots" / "index.html"
    assert f"wrote {index}: 3 figures, 0 failed" in output
    page = index.read_text(encoding="utf-8")
    nav = page[page.index("<nav>") : page.index("</nav>")]
    assert "<h2>Runs</h2>" in nav and "toy · completed" in nav and "<h2>By game</h2>" in nav
    assert f'<a href="#{small}">squares-small: toy-squares · n=40</a>' in nav  # the run's node
    assert f'<a href="#{small}">toy-squares · n=40</a>' in nav  # by game
    assert f'<a href="#{large}">squares-large: toy-squares · n=80</a>' in nav
    assert f'<a href="#{double}">double: toy-double</a>' in nav
    assert nav.count(f'href="#{small}"') == 2  # under its run, and under its game


def test_label_text_reads_as_words():
    from gameforge.flows.plots.gallery import label_text

    assert label_text("seed", 2) == "seed 2"
    assert label_text("episodes", 400) == "400 episodes"
    assert label_text("iterations", 200000) == "200,000 iterations"
    assert label_text("games", 1) == "1 game"
    assert label_text("seed", 20000004) == "seed 20000004"
    assert label_text("k", 8) == "k=8"
    assert (label_text("svr", True), label_text("svr", False)) == ("svr", "no svr")
    assert label_text("rounds", [1, 2]) == "rounds 1,2"


def test_plot_all_refuses_a_png_out_in_one_line(toy, tmp_path):
    store, *_ = toy
    code, output = plot_cli("--all", "--store", str(store.root), "--out", "g.png", cwd=tmp_path)
    assert code == 2 and "names a PNG file" in output and "Traceback" not in output
