"""Where `gameforge artifacts plot` writes: the store's `plots/` folder unless `--out` says.

A figure is `KEY.png`, or `KEY-<hand>.png` when `--hand` picks the hand (`9c7h/2d3d7d` gives
`KEY-9c7h-2d3d7d.png`), so figures of several hands of one artifact sit side by side. `--out`
is a file when it ends in `.png`, otherwise a folder (made if missing, a dot in its name
included), which then receives the file's default name. A store that is not a local folder (an
object store) has nowhere local to keep figures: they go to `plots/` in the working directory.
"""

from __future__ import annotations

import re
from pathlib import Path

from gameforge.artifacts.store import ArtifactStore
from gameforge.stages.base import StageError

PLOTS_DIR = "plots"


def plots_folder(store: ArtifactStore) -> Path:
    """The default folder of a store's figures: `<store>/plots`, or `./plots` for an object
    store."""
    return Path(PLOTS_DIR) if store.remote else Path(store.location) / PLOTS_DIR


def hand_slug(hand: str) -> str:
    """A hand as file-name text: `9c7h/2d3d7d` -> `9c7h-2d3d7d` (letters and digits kept)."""
    return "-".join(re.findall(r"[A-Za-z0-9]+", hand))


def figure_name(key: str, hand: str | None = None) -> str:
    """The file name of an artifact's figure: `KEY.png`, or `KEY-<hand>.png`."""
    slug = hand_slug(hand) if hand else ""
    return f"{key}-{slug}.png" if slug else f"{key}.png"


def is_png_path(out: Path) -> bool:
    """Whether `--out` names a PNG file (it ends in .png) rather than a folder."""
    return out.suffix.lower() == ".png"


def figure_path(store: ArtifactStore, key: str, out: Path | None, hand: str | None) -> Path:
    """The file one figure goes to, its folder made: `--out` FILE.png as given, `--out` FOLDER
    (existing or made) with the default name inside it, else the store's plots folder."""
    if out is not None and is_png_path(out):
        target = out
    else:
        folder = out if out is not None else plots_folder(store)
        target = folder / figure_name(key, hand)
    make_folder(target.parent)
    return target


def gallery_folder(store: ArtifactStore, out: Path | None) -> Path:
    """The folder of `--all`'s figures and page (`--out`, else the store's plots folder), made."""
    if out is not None and is_png_path(out):
        raise StageError(f"--all writes a folder of figures and a page: {out} names a PNG file")
    folder = out if out is not None else plots_folder(store)
    make_folder(folder)
    return folder


def make_folder(folder: Path) -> None:
    """Make `folder` (and its parents); a file in the way is one clear error, not a traceback."""
    if folder.exists() and not folder.is_dir():
        raise StageError(f"--out: {folder} is a file, not a folder (give FOLDER or FILE.png)")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        raise StageError(f"--out: cannot make folder {folder}: a file is in its path") from None
    except PermissionError:
        raise StageError(f"--out: no permission to make folder {folder}") from None
