"""`gameforge artifacts plot`: an artifact's figure, or every figure of the store and a page."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Any

import typer

from gameforge.flows.cli.common import StoreOpt, fail, say, user_errors


def artifacts_plot(
    key: Annotated[
        str | None, typer.Argument(help="Artifact key (a unique prefix will do); or --all.")
    ] = None,
    store: StoreOpt = "store",
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            help="A FILE.png, or a folder (made if missing) that gets KEY.png; default: the "
            "store's plots/ folder. With --all the gallery's folder (default the same).",
        ),
    ] = None,
    hand: Annotated[
        str | None,
        typer.Option(
            "--hand",
            help="Hole cards then board in the artifact's deck, e.g. Jc9h/4d5d9d (hsd, ochs; "
            "default: that hand, the paper's, moved into a short deck: 9c7h/2d3d7d with 8 ranks).",
        ),
    ] = None,
    all_: Annotated[
        bool,
        typer.Option("--all", help="Every figure of the store, and an index.html showing them."),
    ] = False,
) -> None:
    """Write a PNG figure of an artifact, or with --all every figure of the store and a page."""
    from gameforge.artifacts.store import ArtifactStore
    from gameforge.flows.plots import plot
    from gameforge.flows.plots.output import figure_path, gallery_folder

    if key is None and not all_:
        fail("give an artifact KEY, or --all for every figure of the store")
    if key is not None and all_:
        fail("give an artifact KEY or --all (every figure of the store), not both")
    if all_:
        if hand is not None:
            fail("--hand picks one artifact's hand: give it with KEY, not with --all")
        try:
            opened = ArtifactStore(store)
            folder = gallery_folder(opened, out)
        except user_errors() as exc:
            fail(str(exc))
        _plot_gallery(opened, folder)
        return
    assert key is not None
    try:
        opened = ArtifactStore(store)
        artifact = opened.open(key)
        target = figure_path(opened, artifact.key, out, hand)
        description = plot(artifact, target, hand)
    except user_errors() + (ValueError, OSError) as exc:
        fail(str(exc))
    say(f"wrote {target}: {description}")


def _plot_gallery(store: Any, out: Path) -> None:
    """`artifacts plot --all`: every figure into `out`, one line each, then the page."""
    from gameforge.flows.plots.gallery import INDEX, GalleryEntry, write_gallery

    def report(entry: GalleryEntry) -> None:
        if entry.error is not None:
            say(f"failed {entry.key}: {entry.error}")
        elif entry.image is not None:
            say(f"wrote {out / entry.image}: {entry.description}")

    try:
        entries = write_gallery(store, out, on_entry=report, workers=os.cpu_count() or 1)
    except user_errors() + (OSError,) as exc:
        fail(str(exc))
    failed = sum(entry.error is not None for entry in entries)
    drawn = sum(entry.image is not None for entry in entries)
    say(
        f"wrote {out / INDEX}: {drawn} figures, {failed} failed, "
        f"{len(entries) - drawn - failed} artifacts without a figure"
    )
