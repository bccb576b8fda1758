"""Every `gameforge` command in the README, run as a reader would.

- The "## Try it" section's commands run as written, in order, in a folder holding the store
  that `make run` leaves (the flagship flow at the `small` preset), and must exit 0.
- Every other `gameforge run ...` / `stage run ...` line runs as written plus `--plan`: the
  flow, preset, `--set` and `--input` values are all checked, without hours of work.
- Lines with placeholders (KEY, GAME, DIR, `[--json]`, `a | b` alternatives) are syntax
  summaries: each subcommand must exist and each option must be one it takes.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parent.parent / "README.md"
BIN = Path(sys.executable).parent
PLACEHOLDER = re.compile(r"\b(KEY|GAME|DIR|FILE|NAME|H|P|N)\b|\[|\|")


def command_lines(text: str) -> list[str]:
    """`gameforge` command lines of the fenced blocks of `text`, without trailing comments."""
    lines = []
    for block in re.findall(r"^```[a-z]*\n(.*?)^```", text, re.S | re.M):
        for line in block.splitlines():
            if line.startswith(".venv/bin/gameforge ") or line.startswith("gameforge "):
                lines.append(re.sub(r"\s+#.*$", "", line).strip())
    return lines


def section(text: str, title: str) -> str:
    """The README section under heading `title` (up to the next `## `)."""
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", text, re.S | re.M)
    assert match, f"README.md has no '## {title}' section"
    return match.group(1)


def run(args: list[str], cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess:
    env = dict(os.environ, NO_COLOR="1", COLUMNS="100")
    env.pop("GAMEFORGE_STORE", None)
    return subprocess.run(
        [str(BIN / "gameforge"), *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=timeout,
    )


def argv(line: str) -> list[str]:
    """The arguments after the program name."""
    return shlex.split(line)[1:]


README_TEXT = README.read_text(encoding="utf-8")
TOUR = command_lines(section(README_TEXT, "Try it"))
OTHERS = [line for line in command_lines(README_TEXT) if line not in TOUR]


@pytest.fixture(scope="module")
def made_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder where the flagship flow (what `make run` runs) has written ./store."""
    folder = tmp_path_factory.mktemp("readme")
    done = run(["run", "lhe-abstraction", "--preset", "small"], folder)
    assert done.returncode == 0, done.stdout + done.stderr
    return folder


def test_the_readme_has_a_tour_and_every_line_is_classified():
    assert len(TOUR) >= 5
    assert not [line for line in TOUR if PLACEHOLDER.search(line)], "the tour runs as written"
    assert len(OTHERS) >= 20


def test_the_tour_runs_as_written_on_the_store_make_run_leaves(made_run):
    for line in TOUR:
        done = run(argv(line), made_run)
        assert done.returncode == 0, f"{line}\n{done.stdout}\n{done.stderr}"
        assert "error" not in done.stderr.lower(), f"{line}\n{done.stderr}"


@pytest.mark.parametrize("line", [x for x in OTHERS if not PLACEHOLDER.search(x)])
def test_every_other_line_runs_as_written_or_as_a_plan(line, tmp_path):
    args = argv(line)
    if args[:1] == ["run"] or args[:2] == ["stage", "run"]:
        args.append("--plan")
    (tmp_path / "store").mkdir()  # the commands that read a store read ./store: an empty one
    done = run(args, tmp_path, timeout=120)
    assert done.returncode == 0, f"{line}\n{done.stdout}\n{done.stderr}"


@pytest.mark.parametrize("line", [x for x in OTHERS if PLACEHOLDER.search(x)])
def test_every_syntax_line_names_real_commands_and_options(line, tmp_path):
    words = argv(line)
    head = [w for w in words[:2] if not w.startswith("-") and not PLACEHOLDER.search(w)]
    # `artifacts ls | show KEY | plot KEY`: every alternative after the group is a subcommand
    groups = [head]
    if "|" in words and len(head) == 2:
        for i, w in enumerate(words):
            if words[i - 1] == "|" and re.fullmatch(r"[a-z-]+", w):
                groups.append([head[0], w])
    for group in groups:
        helped = run([*group, "--help"], tmp_path, timeout=60)
        assert helped.returncode == 0, f"{line}: no command {' '.join(group)}\n{helped.stderr}"
    options = {w.strip("[]").split("=")[0] for w in words if w.strip("[]").startswith("--")}
    helps = "".join(run([*g, "--help"], tmp_path, timeout=60).stdout for g in groups)
    for option in options:
        assert option in helps, f"{line}: {option} is not an option of {groups}"
