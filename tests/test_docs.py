"""The README and docs/**/*.md: their links resolve, their Python runs, the README stays short.

- Every relative link, inline (`[text](path#anchor)`) or by reference (`[id]: path#anchor`),
  names an existing file or folder; an anchor names a heading of the target page (GitHub's
  anchors: lower case, punctuation dropped, spaces as hyphens, `-1`, `-2` for repeats); every
  `[text][id]` has its definition.
- Every ```python block of a page other than docs/python-api.md (whose blocks
  tests/test_python_api.py runs against stored artifacts) runs, in order, in one namespace per
  page, with the stages it registers removed afterwards; docs/architecture.md's toy stages are
  then run on a scratch store.
- The README is a front door: about 150 lines, no prose line over 100 characters.

(The command lines of the same pages are run by tests/test_readme_commands.py.)
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from gameforge.artifacts import ArtifactStore
from gameforge.stages import registry
from gameforge.stages.runner import run_stage

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").rglob("*.md"))]
PYTHON_API = ROOT / "docs" / "python-api.md"  # run by tests/test_python_api.py
FENCE = re.compile(r"^( *)(```+|~~~+)([A-Za-z]*)[^\n]*\n(.*?)^\1\2[ \t]*$", re.S | re.M)
INLINE_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]*)>?(?:\s+\"[^\"]*\")?\s*\)")
REF_DEFINITION = re.compile(r"^ {0,3}\[([^\]]+)\]:\s*<?(\S+?)>?(?:\s+\"[^\"]*\")?\s*$", re.M)
REF_USE = re.compile(r"\[((?:[^\[\]]|\[[^\]]*\])+)\]\[([^\]]*)\]")
EXTERNAL = re.compile(r"^[a-z][a-z0-9+.-]*:", re.I)  # http:, https:, mailto: ...
quiet = lambda _m: None  # noqa: E731


def prose(text: str) -> str:
    """`text` without fenced blocks and inline code, where links are not links."""
    text = FENCE.sub("", text)
    return re.sub(r"(`+)(?:(?!\1).)+?\1", "", text, flags=re.S)


def slug(heading: str) -> str:
    """GitHub's anchor of a heading."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading.strip())  # a link's text only
    text = re.sub(r"[^\w\- ]", "", text.lower())
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    """The anchors of a page's headings (repeated ones numbered, as GitHub does)."""
    seen: dict[str, int] = {}
    found = set()
    for line in FENCE.sub("", page.read_text(encoding="utf-8")).splitlines():
        match = re.match(r"^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not match:
            continue
        base = slug(match.group(1))
        n = seen.get(base, 0)
        seen[base] = n + 1
        found.add(base if n == 0 else f"{base}-{n}")
    return found


def links(page: Path) -> list[str]:
    """Every link target of a page: inline ones and reference definitions."""
    text = prose(page.read_text(encoding="utf-8"))
    return INLINE_LINK.findall(text) + [target for _, target in REF_DEFINITION.findall(text)]


def python_blocks(page: Path) -> list[str]:
    """The ```python blocks of a page, dedented, in order."""
    found = []
    for match in FENCE.finditer(page.read_text(encoding="utf-8")):
        if match.group(3) == "python":
            indent = len(match.group(1))
            lines = match.group(4).splitlines(keepends=True)
            found.append("".join(line[indent:] for line in lines))
    return found


def test_the_pages_are_found():
    names = {p.relative_to(ROOT).as_posix() for p in PAGES}
    assert {
        "README.md",
        "docs/architecture.md",
        "docs/concepts.md",
        "docs/cli.md",
        "docs/python-api.md",
    } <= names
    assert len([n for n in names if n.startswith("docs/papers/")]) == 4


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_relative_link_resolves(page: Path):
    broken = []
    for target in links(page):
        if not target or EXTERNAL.match(target):
            continue
        path, _, anchor = target.partition("#")
        resolved = (page.parent / path).resolve() if path else page
        if not resolved.exists():
            broken.append(f"{target}: no such file or folder")
        elif anchor and resolved.suffix == ".md" and anchor not in anchors(resolved):
            broken.append(f"{target}: {resolved.name} has no heading with anchor #{anchor}")
        elif anchor and resolved.suffix != ".md":
            broken.append(f"{target}: an anchor into a file that is not Markdown")
    assert not broken, f"{page.relative_to(ROOT)}:\n" + "\n".join(broken)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_reference_link_is_defined_and_nothing_points_outside_the_repository(page: Path):
    text = prose(page.read_text(encoding="utf-8"))
    defined = {label.lower() for label, _ in REF_DEFINITION.findall(text)}
    used = {(ref or label).lower() for label, ref in REF_USE.findall(text)}
    assert not used - defined, f"{page.relative_to(ROOT)}: undefined {sorted(used - defined)}"
    for target in links(page):
        if target and not EXTERNAL.match(target):
            path = (page.parent / target.partition("#")[0]).resolve()
            assert path.is_relative_to(ROOT), f"{page.relative_to(ROOT)}: {target} leaves the repo"
    assert "../shared" not in page.read_text(encoding="utf-8")


def test_the_slugs_are_githubs():
    heading = "The whole `paper` abstraction end to end (issue 3) — target: under 8 CPU-hours"
    assert (
        slug(heading) == "the-whole-paper-abstraction-end-to-end-issue-3--target-under-8-cpu-hours"
    )
    assert slug("How to add ...") == "how-to-add-"
    assert slug("No-limit CNN players (issue 6) — `bench/bench_nlhe.py`") == (
        "no-limit-cnn-players-issue-6--benchbench_nlhepy"
    )


PYTHON_PAGES = [p for p in PAGES if p != PYTHON_API and python_blocks(p)]


@pytest.mark.parametrize("page", PYTHON_PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_python_block_runs(page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    # the page's stages go into a copy of the registry, without any toy stage of the tests
    stages = {n: s for n, s in registry.STAGES.items() if not n.startswith("toy-")}
    monkeypatch.setattr(registry, "STAGES", stages)
    monkeypatch.chdir(tmp_path)
    namespace: dict = {"__name__": "docs_page"}
    for i, block in enumerate(python_blocks(page), 1):
        name = f"{page.relative_to(ROOT).as_posix()}:python-{i}"
        exec(compile(block, name, "exec"), namespace)
    if page.name == "architecture.md":  # the worked example of a stage works
        store = ArtifactStore(tmp_path / "store")
        squares = run_stage("toy-squares", {"n": 40, "chunk": 10}, store=store, log=quiet)
        doubled = run_stage("toy-double", {}, {"squares": squares.key}, store=store, log=quiet)
        values = np.asarray(store.open(doubled.key)["doubled"][:])
        assert np.array_equal(values, 2 * np.arange(40) ** 2)
        assert registry.STAGES["toy-double"].description == "Twice the upstream squares."
        assert [node.name for node in namespace["TOY"].nodes] == ["toy-squares", "toy-double"]
        assert namespace["GAME"].test_runs["mygame-zero"].nodes == ("train-1",)


def test_the_readme_is_a_front_door():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 160, f"README.md has {len(lines)} lines; the details go under docs/"
    long = [
        line
        for line in lines
        if len(line) > 100 and not line.startswith("|") and not REF_DEFINITION.match(line)
    ]
    assert not long, "README lines over 100 characters:\n" + "\n".join(long)
    rows = [line for line in lines if line.startswith("|") and len(line) > 130]
    assert not rows, "README table rows over 130 characters:\n" + "\n".join(rows)


def test_the_readme_links_every_docs_page():
    readme = README.read_text(encoding="utf-8")
    for page in PAGES[1:]:
        rel = page.relative_to(ROOT).as_posix()
        assert rel in readme, f"README.md does not link {rel}"
