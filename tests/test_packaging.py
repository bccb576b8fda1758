"""The wheel: one `gameforge` package with every module, game file and py.typed, and nothing
else at top level; installed outside the checkout, it lists the games and runs a tiny flow."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PARTS = ("engines", "stages", "artifacts", "flows", "games", "api")
TOP = "api"  # the folder of `gameforge` itself (the notebook API); the others are gameforge.<part>


def in_wheel(path: Path) -> str:
    """Where a file of the checkout lies in the wheel: `engines/x.py` at `gameforge/engines/x.py`,
    `api/_store.py` at `gameforge/_store.py`."""
    relative = path.relative_to(ROOT)
    inside = relative.relative_to(TOP) if relative.parts[0] == TOP else relative
    return f"gameforge/{inside.as_posix()}"


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """A wheel built from the checkout (no build isolation: setuptools is in the venv)."""
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            str(ROOT),
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(out),
        ],  # fmt: skip
        check=True,
        capture_output=True,
        timeout=300,
    )
    (found,) = out.glob("gameforge-*.whl")
    return found


def test_wheel_holds_every_module_game_and_marker(wheel):
    """Every .py of the six parts, every shipped .game, py.typed per part, no stray packages."""
    names = set(zipfile.ZipFile(wheel).namelist())
    expected = {
        in_wheel(path)
        for part in PARTS
        for path in (ROOT / part).rglob("*")
        if path.suffix in (".py", ".game") and "__pycache__" not in path.parts
    }
    assert expected <= names, sorted(expected - names)
    assert {in_wheel(ROOT / part / "py.typed") for part in PARTS} <= names
    games = [n for n in names if n.endswith(".game")]
    assert len(games) == len(list((ROOT / "engines/poker/games").glob("*.game"))) > 0
    top = {n.split("/")[0] for n in names}
    assert {t for t in top if not t.endswith(".dist-info")} == {"gameforge"}
    assert not any(n.startswith("gameforge/tests/") or "/bench/" in n for n in names)


@pytest.mark.slow
def test_installed_wheel_lists_games_and_runs_a_tiny_flow(wheel, tmp_path):
    """In a fresh venv (the dependencies borrowed from this one), outside the checkout."""
    env_dir = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env_dir)], check=True)
    python = env_dir / "bin" / "python"
    fresh_site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    # The dependencies come from this venv's site-packages as a plain path entry: its .pth
    # files (the editable install's finder among them) are not processed from there.
    Path(fresh_site, "dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(python),
            "install",
            "--no-deps",
            "-q",
            str(wheel),
        ],  # fmt: skip
        check=True,
        timeout=300,
    )
    work = tmp_path / "elsewhere"
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    where = subprocess.run(
        [str(python), "-c", "import gameforge.engines.poker.cards as m, gameforge as gf; "
         "print(m.__file__); print(gf.__file__); print(gf.hand_strength('AsKd', '4d5d9dKhQc'))"],
        cwd=work, capture_output=True, text=True, env=env, check=True,
    ).stdout  # fmt: skip
    cards, top, strength = where.split()
    assert cards.startswith(fresh_site) and top.startswith(fresh_site), where
    assert float(strength) == pytest.approx(0.8505, abs=1e-4)
    script = [str(env_dir / "bin" / "gameforge")]
    games = subprocess.run([*script, "game", "list"], cwd=work, capture_output=True, text=True,
                           env=env, timeout=120)  # fmt: skip
    assert games.returncode == 0, games.stderr
    assert "holdem.limit.2p.reverse_blinds" in games.stdout and "leduc.limit.2p" in games.stdout
    run = subprocess.run(
        [*script, "run", "lhe-abstraction", "--preset", "tiny", "--dask-address", "local",
         "--store", str(work / "store")],  # fmt: skip
        cwd=work, capture_output=True, text=True, env=env, timeout=600,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    assert "ochs-buckets" in run.stdout
