"""The shipped ACPC game definitions, and loading a game by name or path."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from gameforge.engines.poker.acpc import GameDef, GameDefError, parse_game

_SUFFIX = ".game"
# A game definition is a few hundred bytes; reading stops here so a wrong path (a disk image, a
# log) cannot fill memory.
MAX_GAME_FILE_BYTES = 1 << 20


def shipped_games() -> list[str]:
    """Names of the game definitions that ship with gameforge."""
    folder = resources.files("gameforge.engines.poker") / "games"
    return sorted(p.name[: -len(_SUFFIX)] for p in folder.iterdir() if p.name.endswith(_SUFFIX))


def game_text(spec: str) -> tuple[str, str]:
    """(name, text) of a shipped game name or a path to a `.game` file."""
    shipped = resources.files("gameforge.engines.poker") / "games" / f"{spec}{_SUFFIX}"
    if shipped.is_file():
        return spec, shipped.read_text()
    path = Path(spec)
    if path.is_file():
        try:
            with open(path, "rb") as handle:
                data = handle.read(MAX_GAME_FILE_BYTES + 1)
        except OSError as exc:
            raise GameDefError(f"game file {spec}: {exc.strerror or exc}") from None
        if len(data) > MAX_GAME_FILE_BYTES:
            raise GameDefError(f"game file {spec}: over {MAX_GAME_FILE_BYTES:,} bytes")
        try:
            return path.name.removesuffix(_SUFFIX), data.decode("utf-8")
        except UnicodeDecodeError:
            raise GameDefError(f"game file {spec}: not UTF-8 text") from None
    raise GameDefError(
        f"unknown game {spec!r}: not a file, and not one of {', '.join(shipped_games())}"
    )


def load_game(spec: str) -> GameDef:
    """Load and parse a shipped game name or a `.game` file path."""
    name, text = game_text(spec)
    return parse_game(text, name=name)
