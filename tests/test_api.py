"""The notebook API (`import gameforge as gf`, api/) and the tutorial notebook that shows it.

- docs/tutorial.ipynb runs end to end in a Jupyter kernel, in a scratch folder, within its
  time, and the copy committed with its output is the notebook as it runs now (every code cell
  shows its output, the same kinds of output where it runs);
- the examples in the facade's docstrings run (doctest) in the folder the notebook left, so
  their flows are cached there;
- what the facade computes itself agrees with the stages: a hand's strength and HSD with the
  stored `river-hs` and `hsd` artifacts of the same deck;
- `import gameforge` imports nothing until a name is used, and every public function's
  docstring is one line.
"""

from __future__ import annotations

import doctest
import importlib
import inspect
import io
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK = ROOT / "docs" / "tutorial.ipynb"
FACADE_MODULES = ("gameforge", "gameforge._store", "gameforge._run", "gameforge._poker",
                  "gameforge._games")  # fmt: skip
TUTORIAL_SECONDS = 120  # the notebook's budget in the suite (about 40 s on two idle cores)


@dataclass(frozen=True)
class Executed:
    """The tutorial as it ran: its folder (holding ./store), its cells and its seconds."""

    folder: Path
    notebook: Any
    seconds: float


@pytest.fixture(scope="module")
def tutorial(tmp_path_factory: pytest.TempPathFactory) -> Executed:
    """docs/tutorial.ipynb executed in a fresh folder by a Jupyter kernel of this Python."""
    import nbclient
    import nbformat

    folder = tmp_path_factory.mktemp("tutorial")
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    client = nbclient.NotebookClient(
        notebook,
        timeout=600,
        kernel_name="python3",
        record_timing=False,
        resources={"metadata": {"path": str(folder)}},
    )
    start = time.monotonic()
    client.execute()
    return Executed(folder, notebook, time.monotonic() - start)


def code_cells(notebook: Any) -> list[Any]:
    return [cell for cell in notebook.cells if cell.cell_type == "code"]


def output_kinds(cell: Any) -> list[tuple[str, ...]]:
    """What a cell shows: per output, its type and its MIME types (or stream name); stderr
    (a library's warning on one machine and not another) is left out."""
    return [
        (o.output_type, *sorted(o.get("data", {})), *([o.name] if "name" in o else []))
        for o in cell.outputs
        if o.get("name") != "stderr"
    ]


def text_of(cell: Any) -> str:
    return "\n".join(
        o.get("text", "") + o.get("data", {}).get("text/plain", "") for o in cell.outputs
    )


def test_the_tutorial_runs_end_to_end_within_its_time(tutorial: Executed) -> None:
    cells = code_cells(tutorial.notebook)
    errors = [o for cell in cells for o in cell.outputs if o.output_type == "error"]
    assert not errors, errors
    assert tutorial.seconds < TUTORIAL_SECONDS, f"the tutorial took {tutorial.seconds:.0f} s"
    assert all(cell.outputs for cell in cells), "every code cell shows something"
    images = [kinds for cell in cells for kinds in output_kinds(cell) if "image/png" in kinds]
    assert len(images) >= 4, "the HSD, the solve, the buckets and the league are drawn"
    text = "\n".join(text_of(cell) for cell in cells)
    assert "exact best response" in text and "LBR wins" in text  # both ways of measuring
    assert "ranking at 95%" in text and "mbb/g over 10,000 hands" in text
    assert "MCTS-MAXN, 500 simulations" in text and "('Jc', '6c')" in text


def test_the_committed_tutorial_shows_what_it_computes_now(tutorial: Executed) -> None:
    """The committed notebook reads on the web: every code cell carries its output, of the
    kinds a run gives now (rerun it and commit it when a cell changes what it shows)."""
    import nbformat

    committed = code_cells(nbformat.read(NOTEBOOK, as_version=4))
    ran = code_cells(tutorial.notebook)
    assert [c.source for c in committed] == [c.source for c in ran]
    for number, (saved, now) in enumerate(zip(committed, ran, strict=True), 1):
        assert saved.execution_count == number, "run top to bottom, once"
        assert output_kinds(saved) == output_kinds(now), f"code cell {number}: {saved.source}"


@pytest.mark.parametrize("name", FACADE_MODULES)
def test_the_docstring_examples_run(
    name: str, tutorial: Executed, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tutorial.folder)  # ./store: the tutorial's, so their flows are cached
    module = importlib.import_module(name)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    report = io.StringIO()
    for test in doctest.DocTestFinder().find(module, name):
        runner.run(test, out=report.write)
    failed, attempted = runner.summarize(verbose=False)
    assert attempted > 0, f"{name} has no examples"
    assert failed == 0, report.getvalue()


def test_hand_strength_and_hsd_agree_with_the_stored_stages(tutorial: Executed) -> None:
    """On the tutorial's 24-card deck: `gf.hand_strength` equals the `river-hs` artifact's
    lookup, and `gf.hsd` the `hsd` artifact's histogram, hand by hand."""
    import gameforge as gf
    from gameforge.engines.poker.shipped_games import load_game
    from gameforge.stages.poker.hsd import array_name, round_indexer
    from gameforge.stages.poker.river_hs import hand_strength

    store = gf.open_store(tutorial.folder / "store")
    river, hsd = store.latest("river-hs"), store.latest("hsd")
    game = load_game(river.params["game"])
    rng = np.random.default_rng(0)
    for _ in range(5):
        cards = [int(c) for c in rng.choice(game.deck_size, 7, replace=False)]
        hole, board = game.format_cards(cards[:2]), game.format_cards(cards[2:])
        stored = hand_strength(river.stored, np.array([cards], dtype=np.int8))[0]
        assert gf.hand_strength(hole, board, game=game) == pytest.approx(stored, abs=1e-12)
    for round_, shown in ((1, 3), (2, 4)):
        indexer = round_indexer(game, round_)
        for index in rng.choice(indexer.size(indexer.rounds - 1), 3, replace=False):
            cards = [int(c) for c in indexer.unindex(np.array([index]), indexer.rounds - 1)[0]]
            hole, board = game.format_cards(cards[:2]), game.format_cards(cards[2 : 2 + shown])
            expected = np.asarray(hsd.stored[array_name(round_)][int(index)])
            got = gf.hsd(hole, board, game=game, bins=hsd.params["bins"])
            assert np.array_equal(got, expected), (hole, board)


def test_a_strategy_answers_only_where_its_seat_acts(tutorial: Executed) -> None:
    import gameforge as gf

    store = gf.open_store(tutorial.folder / "store")
    strategy = gf.strategy(store.latest("cfr", flow="solve-lossless"))
    assert strategy.matchstate("MATCHSTATE:0:3::4c|") == strategy.probabilities("4c")
    with pytest.raises(ValueError, match="not to act"):
        strategy.matchstate("MATCHSTATE:1:3::|4c")  # position 0 acts first in Leduc
    with pytest.raises(ValueError, match="twice"):
        gf.hand_strength("AsKd", "As5d9dKhQc")


def test_import_gameforge_imports_nothing_until_a_name_is_used() -> None:
    code = (
        "import sys, gameforge, gameforge.engines.poker.cards\n"
        "assert not [m for m in sys.modules if m.startswith('gameforge._')], sys.modules\n"
        "import gameforge as gf\n"
        "assert callable(gf.hand_strength) and 'gameforge._poker' in sys.modules\n"
        "assert 'gameforge._games' not in sys.modules\n"
        "try:\n    gf.no_such_name\nexcept AttributeError:\n    pass\n"
        "else:\n    raise SystemExit('no AttributeError')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_every_public_name_is_exported_and_says_what_it_does_in_one_line() -> None:
    import gameforge as gf

    assert sorted(gf.__all__) == sorted(gf._FACADE) == sorted(set(gf.__all__))
    for name in gf.__all__:
        obj = getattr(gf, name)
        members = [obj]
        if inspect.isclass(obj):
            members += [m for n, m in vars(obj).items() if not n.startswith("_")]
        for member in members:
            target = member.fget if isinstance(member, property) else member
            if not (inspect.isfunction(target) or inspect.isclass(target)):
                continue
            doc = inspect.getdoc(target) or ""
            assert doc and "\n" not in doc, f"{name}: {getattr(target, '__name__', target)}"
