"""Every command the README and the docs show, run as a reader would.

The command lines are the lines of fenced blocks, in README.md and docs/**/*.md, that start with
`.venv/bin/gameforge ` or `gameforge ` (a trailing backslash continues a line; a trailing
`# comment` is dropped). A block is classified by the marker on the line before its fence:

- The README's "## Try it" block, then every docs block marked `<!-- test: tour -->`, run as
  written, in that order, in a folder holding the store that `make run` leaves (the flagship
  flow at the `small` preset), and must exit 0.
- A block marked `<!-- test: syntax only (WHY) -->` (a paper-scale run on a store the tests
  cannot build) is checked as syntax summaries only.
- In every other block, a `gameforge run ...` / `stage run ...` line runs as written plus
  `--plan`: the flow, preset, `--set` and `--input` values are all checked, without hours of
  work; a line with placeholders (KEY, GAME, DIR, `[--json]`, `a | b` alternatives) is a syntax
  summary: each subcommand must exist and each option must be one it takes; any other line
  runs as written on an empty store.

A line shown on several pages is checked once. A `.venv/bin/python bench/SCRIPT.py` line must
name an existing script, a `make TARGET` line an existing target of the Makefile.
"""

from __future__ import annotations

import functools
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").rglob("*.md"))]
BIN = Path(sys.executable).parent
PLACEHOLDER = re.compile(r"\b(KEY|GAME|DIR|FILE|NAME|H|P|N)\b|\[|\|")
MARKER = re.compile(r"<!--\s*test:\s*(tour|syntax only)\b.*?-->")
FENCE = re.compile(r"^( *)```([a-z]*)\n(.*?)^\1```", re.S | re.M)


@dataclass(frozen=True)
class Block:
    """One fenced block of a page: its text (dedented), language, marker and the section
    heading it lies under."""

    page: Path
    text: str
    lang: str
    marker: str  # "tour", "syntax only" or ""
    section: str


def blocks(page: Path) -> list[Block]:
    """The fenced blocks of `page`, in order."""
    text = page.read_text(encoding="utf-8")
    found = []
    for match in FENCE.finditer(text):
        before = text[: match.start()].rstrip("\n").rpartition("\n")[2].strip()
        marker = MARKER.fullmatch(before)
        prose = FENCE.sub("", text[: match.start()])
        headings = re.findall(r"^#{1,6} (.*)$", prose, re.M)
        indent = len(match.group(1))
        body = "".join(line[indent:] for line in match.group(3).splitlines(keepends=True))
        found.append(
            Block(
                page,
                body,
                match.group(2),
                marker.group(1) if marker else "",
                headings[-1] if headings else "",
            )
        )
    return found


def joined_lines(text: str) -> list[str]:
    """The lines of a block, with backslash-continued lines joined."""
    lines: list[str] = []
    carry = ""
    for line in text.splitlines():
        part = line.strip() if carry else line.rstrip()
        if part.endswith("\\"):
            carry += part[:-1].rstrip() + " "
            continue
        lines.append(carry + part)
        carry = ""
    return lines


def command_lines(text: str) -> list[str]:
    """`gameforge` command lines of a block's text, without trailing comments."""
    return [
        re.sub(r"\s+#.*$", "", line).strip()
        for line in joined_lines(text)
        if line.startswith(".venv/bin/gameforge ") or line.startswith("gameforge ")
    ]


def other_lines(text: str, prefix: str) -> list[str]:
    return [line.strip() for line in joined_lines(text) if line.strip().startswith(prefix)]


def argv(line: str) -> list[str]:
    """The arguments after the program name."""
    return shlex.split(line)[1:]


def is_run(args: list[str]) -> bool:
    return args[:1] == ["run"] or args[:2] == ["stage", "run"]


def plan_args(line: str) -> tuple[str, ...]:
    """What the test runs for a line outside the tour: a flow or stage run as a plan."""
    args = argv(line)
    if is_run(args) and "--plan" not in args:
        args.append("--plan")
    return tuple(args)


ALL_BLOCKS = [block for page in PAGES for block in blocks(page)]
README_BLOCKS = [block for block in ALL_BLOCKS if block.page == README]


def _unique(lines: list[str]) -> list[str]:
    return list(dict.fromkeys(lines))


TOUR = _unique(
    [line for b in README_BLOCKS if b.section == "Try it" for line in command_lines(b.text)]
    + [line for b in ALL_BLOCKS if b.marker == "tour" for line in command_lines(b.text)]
)
SHOWN_ONLY = _unique(
    [line for b in ALL_BLOCKS if b.marker == "syntax only" for line in command_lines(b.text)]
)
_REST = [
    line
    for b in ALL_BLOCKS
    if not b.marker and not (b.page == README and b.section == "Try it")
    for line in command_lines(b.text)
    if line not in TOUR
]
SYNTAX = _unique([line for line in _REST if PLACEHOLDER.search(line)] + SHOWN_ONLY)
# one test per distinct invocation (`run X` and `run X --plan` are the same check)
RUNS = list({plan_args(line): line for line in _REST if not PLACEHOLDER.search(line)}.values())
BENCH_SCRIPTS = _unique(
    [line for b in ALL_BLOCKS for line in other_lines(b.text, ".venv/bin/python bench/")]
)
MAKE_LINES = _unique([line for b in ALL_BLOCKS for line in other_lines(b.text, "make ")])


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


@functools.cache
def help_text(group: tuple[str, ...]) -> subprocess.CompletedProcess:
    """`gameforge GROUP --help`, once per group for the whole module."""
    return run([*group, "--help"], ROOT, timeout=60)


@pytest.fixture(scope="module")
def made_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder where the flagship flow (what `make run` runs) has written ./store."""
    folder = tmp_path_factory.mktemp("readme")
    done = run(["run", "lhe-abstraction", "--preset", "small"], folder)
    assert done.returncode == 0, done.stdout + done.stderr
    return folder


def test_the_readme_starts_with_the_set_up_commands_and_has_a_tour():
    first = ALL_BLOCKS[0]
    assert first.page == README and first.section == "gameforge"
    assert [line.split("#")[0].strip() for line in first.text.splitlines()] == [
        "make run",
        "make test",
    ]
    tour = [line for b in README_BLOCKS if b.section == "Try it" for line in command_lines(b.text)]
    assert len(tour) >= 5
    assert not [line for line in TOUR if PLACEHOLDER.search(line)], "the tour runs as written"
    assert len(RUNS) + len(SYNTAX) >= 40, "the command reference's lines are found"


def test_every_marker_is_on_a_fenced_block():
    for page in PAGES:
        standalone = [
            line.strip()
            for line in page.read_text(encoding="utf-8").splitlines()
            if re.fullmatch(r"\s*<!--\s*test:.*-->\s*", line)
        ]
        unknown = [line for line in standalone if not MARKER.fullmatch(line)]
        assert not unknown, f"{page}: {unknown} (known: 'test: tour', 'test: syntax only (WHY)')"
        marked = sum(1 for b in blocks(page) if b.marker)
        assert len(standalone) == marked, f"{page}: a marker not on the line before a fence"


def test_the_tour_runs_as_written_on_the_store_make_run_leaves(made_run):
    for line in TOUR:
        done = run(argv(line), made_run)
        assert done.returncode == 0, f"{line}\n{done.stdout}\n{done.stderr}"
        assert "error" not in done.stderr.lower(), f"{line}\n{done.stderr}"


@pytest.mark.parametrize("line", RUNS)
def test_every_other_line_runs_as_written_or_as_a_plan(line, tmp_path):
    (tmp_path / "store").mkdir()  # the commands that read a store read ./store: an empty one
    done = run(list(plan_args(line)), tmp_path, timeout=120)
    assert done.returncode == 0, f"{line}\n{done.stdout}\n{done.stderr}"


@pytest.mark.parametrize("line", SYNTAX)
def test_every_syntax_line_names_real_commands_and_options(line):
    words = argv(line)
    head = [w for w in words[:2] if not w.startswith("-") and not PLACEHOLDER.search(w)]
    if head[:1] == ["run"]:
        head = ["run"]  # `run FLOW`: FLOW is an argument, and every flow takes run's options
    # `artifacts ls | show KEY | plot KEY`: every alternative after the group is a subcommand
    groups = [tuple(head)]
    if "|" in words and len(head) == 2:
        for i, w in enumerate(words):
            if words[i - 1] == "|" and re.fullmatch(r"[a-z-]+", w):
                groups.append((head[0], w))
    for group in groups:
        helped = help_text(group)
        assert helped.returncode == 0, f"{line}: no command {' '.join(group)}\n{helped.stderr}"
    options = {w.strip("[]").split("=")[0] for w in words if w.strip("[]").startswith("--")}
    helps = "".join(help_text(g).stdout for g in groups)
    for option in options:
        assert option in helps, f"{line}: {option} is not an option of {groups}"


@pytest.mark.parametrize("line", BENCH_SCRIPTS)
def test_every_bench_script_shown_exists(line):
    script = argv(line)[0]
    assert (ROOT / script).is_file(), f"{line}: no {script}"


def test_every_make_target_shown_exists():
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    targets = set(re.findall(r"^([a-z][a-z-]*):", makefile, re.M))
    for line in MAKE_LINES:
        target = line.split()[1]
        assert target in targets, f"{line}: no make target {target!r}"
