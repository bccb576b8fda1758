"""Fuzzing what users and dealers hand gameforge: game files, dealer lines, `--set` values and
export archives. Each input is either accepted and usable or refused with the module's own error
type, within a time limit per case and under a cap on the address space, so that a regression
fails the test instead of taking the machine down."""

from __future__ import annotations

import contextlib
import io
import json
import resource
import tarfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

import tests.toy_stages  # noqa: F401  (registers the toy stages)
from gameforge.artifacts import ArtifactStore, StoreError
from gameforge.artifacts.transfer import export_artifacts, import_artifacts
from gameforge.engines.poker.acpc import MAX_CHIPS, GameDef, GameDefError, largest_pot, parse_game
from gameforge.engines.poker.betting import tree_size
from gameforge.engines.poker.shipped_games import load_game
from gameforge.flows.acpc_client import MatchState, ProtocolError, parse_match_state
from gameforge.flows.cli import app
from gameforge.flows.specs import get_flow
from gameforge.stages.base import StageError
from gameforge.stages.runner import run_stage
from tests.poker_helpers import quiet

HEADROOM = 1 << 30  # bytes of address space a case may add to what the process has mapped
FUZZ = settings(
    max_examples=150, deadline=2000, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def mapped_bytes() -> int:
    """The process's virtual memory size now (VmSize)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmSize:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError("no VmSize in /proc/self/status")


@contextlib.contextmanager
def capped_address_space() -> Iterator[None]:
    """Cap RLIMIT_AS at what is mapped now plus HEADROOM: a runaway allocation fails fast."""
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    cap = mapped_bytes() + HEADROOM
    if hard != resource.RLIM_INFINITY:
        cap = min(cap, hard)
    resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


# -- game files ----------------------------------------------------------------------------------

KEYS = [
    "numPlayers", "numRounds", "stack", "blind", "raiseSize", "firstPlayer", "maxRaises",
    "numSuits", "numRanks", "numHoleCards", "numBoardCards", "numrounds", "BLIND", "bogus",
]  # fmt: skip
numbers = st.one_of(
    st.integers(-3, 20), st.integers(-(10**30), 10**30),
    st.sampled_from([255, 256, 2**31 - 1, 2**31, 2_000_000_000, 10**12]),
)  # fmt: skip
key_lines = st.builds(
    lambda key, values, sep: f"{key}{sep}{' '.join(map(str, values))}",
    st.sampled_from(KEYS),
    st.lists(numbers, max_size=6),
    st.sampled_from([" = ", "=", " ", " : "]),
)
game_lines = st.lists(
    st.one_of(
        key_lines,
        st.sampled_from(["limit", "nolimit", "# comment", "", "GAMEDEF", "END GAMEDEF"]),
        st.text(max_size=30),
    ),
    max_size=16,
)
VALID = load_game("leduc.limit.2p").to_text().splitlines()


@st.composite
def game_texts(draw: st.DrawFn) -> str:
    """Game files: a valid one with lines dropped, replaced or added, or free-form lines."""
    if draw(st.booleans()):
        body = draw(game_lines)
        return "\n".join(["GAMEDEF", *body, "END GAMEDEF"])
    lines = list(VALID)
    for _ in range(draw(st.integers(1, 4))):
        i = draw(st.integers(0, len(lines) - 1))
        action = draw(st.sampled_from(["drop", "replace", "insert"]))
        if action == "drop" and len(lines) > 1:
            lines.pop(i)
        elif action == "replace":
            lines[i] = draw(key_lines)
        else:
            lines.insert(i, draw(key_lines))
    return "\n".join(lines)


def usable(game: GameDef) -> None:
    """What a stage does with a game: print it, read it back, size its betting tree."""
    assert parse_game(game.to_text(), name=game.name) == game
    assert game.num_players >= 2 and 1 <= game.num_rounds <= 4
    assert game.num_players * game.num_hole_cards + sum(game.num_board_cards) <= game.deck_size
    for r in range(game.num_rounds):
        assert game.raw_hands(r) >= 1
    if game.betting_type == "limit" and game.num_players == 2:
        assert tree_size(game).nodes >= 3
    assert largest_pot(game) <= MAX_CHIPS  # every chip amount the engines hold fits int32


LEDUC_TEXT = "\n".join(VALID)


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (("blind = 1 1", "blind = 1 2147483648"), "blind"),
        (("raiseSize = 2 4", "raiseSize = 2 2000000000"), "pot"),
        (("blind = 1 1", "blind = 1 2147483647"), "pot"),
    ],
)
def test_chip_amounts_that_overflow_are_refused_when_the_game_is_read(tmp_path, change, field):
    """A chip amount over ACPC's int32, or a betting tree whose largest pot is, is refused by the
    parser in one line naming the field and the limit, and a run stops before any stage."""
    text = LEDUC_TEXT.replace(*change)
    assert text != LEDUC_TEXT
    with pytest.raises(GameDefError, match="2,147,483,647") as refused:
        parse_game(text, name="overflow")
    assert "\n" not in str(refused.value)
    assert field in str(refused.value)
    path = tmp_path / "overflow.game"
    path.write_text(text)
    store = tmp_path / "store"
    run = CliRunner().invoke(app, ["run", "solve-lossless", "--preset", "tiny", "--set",
                                   f"game={path}", "--store", str(store)])  # fmt: skip
    said = " ".join(run.output.split())
    assert run.exit_code == 2 and "Traceback" not in said and "2,147,483,647" in said
    assert not (store / "objects").exists() or not any((store / "objects").iterdir())


@FUZZ
@given(text=game_texts())
def test_game_files_parse_or_are_refused_with_a_game_error(text):
    with capped_address_space():
        try:
            game = parse_game(text, name="fuzz")
        except GameDefError as exc:
            assert "\n" not in str(exc)
            return
        usable(game)


@pytest.mark.parametrize("content", [b"\xff\xfe not text", b"GAMEDEF\n" * 200_000, b""])
def test_game_paths_that_are_not_game_files_are_refused(tmp_path, content):
    path = tmp_path / "odd.game"
    path.write_bytes(content)
    with capped_address_space():
        for spec in (str(path), str(tmp_path), "/dev/zero", "no/such/file", "a\x00b"):
            with pytest.raises(GameDefError):
                load_game(spec)


# -- dealer lines --------------------------------------------------------------------------------

HOLDEM = load_game("holdem.limit.2p.reverse_blinds")
cards = st.sampled_from(["As", "Kd", "2c", "Th", "9s", "Zz", "A", "", "1c", "As|", "²"])
fields = st.one_of(
    st.text(max_size=12),
    st.sampled_from(["0", "1", "2", "-1", "²", "٣", "00", "99999999999999999999"]),
    st.text(alphabet="fcr/", max_size=12),
    st.lists(cards, max_size=6).map("".join),
)


@st.composite
def dealer_lines(draw: st.DrawFn) -> str:
    """MATCHSTATE lines with fields drawn from near-valid pieces and from arbitrary text."""
    if draw(st.integers(0, 9)) == 0:
        return draw(st.text(max_size=60))
    parts = ["MATCHSTATE", *(draw(fields) for _ in range(3))]
    hole = "|".join(draw(st.lists(st.lists(cards, max_size=3).map("".join), max_size=3)))
    board = "/".join(draw(st.lists(st.lists(cards, max_size=3).map("".join), max_size=4)))
    parts.append(hole + (f"/{board}" if board else ""))
    extra = draw(st.lists(fields, max_size=1))
    return ":".join(parts + extra)


@pytest.mark.parametrize("field", ["²", "٣", "-1", ""])
def test_dealer_lines_with_odd_numbers_are_refused(field):
    for line in (
        f"MATCHSTATE:{field}:0::AsKd|",
        f"MATCHSTATE:0:{field}::AsKd|",
        "MATCHSTATE:2:0::|AsKd",
    ):
        with pytest.raises(ProtocolError):
            parse_match_state(line, HOLDEM)


@FUZZ
@given(line=dealer_lines())
def test_dealer_lines_parse_or_are_refused_with_a_protocol_error(line):
    with capped_address_space():
        try:
            state = parse_match_state(line, HOLDEM)
        except ProtocolError:
            return
    assert isinstance(state, MatchState)
    assert state.position in (0, 1) and state.hand >= 0
    assert len(state.hole[state.position]) == HOLDEM.num_hole_cards
    assert all(0 <= c < HOLDEM.deck_size for c in state.board + sum(state.hole, []))


# -- --set values --------------------------------------------------------------------------------

SOLVE = get_flow("lhe-solve")
SOLVE.resolve("tiny")  # imports every stage module once, outside the timed cases
names = st.sampled_from(
    ["k", "iterations", "game", "hsd.bins", "cfr.seed", "seed", "cfr.algorithm", "nope",
     "cfr.nope", "river-hs.boards_per_chunk", "", "=", "hsd-buckets.k"]
)  # fmt: skip
values = st.one_of(
    st.text(max_size=12),
    st.sampled_from(["0", "-1", "1e999", "nan", "inf", "true", "none", "1,2,3", ",", "3.5",
                     "/dev/zero", "/", "kuhn.limit.2p", "holdem.limit.2p.reverse_blinds",
                     "99999999999999999999999", "chance", "cfr+"]),
)  # fmt: skip


@FUZZ
@given(items=st.lists(st.builds(lambda n, v: f"{n}={v}", names, values), max_size=3))
def test_set_values_resolve_or_are_refused_with_a_stage_error(items):
    with capped_address_space():
        try:
            params = SOLVE.resolve("tiny", items)
        except StageError as exc:
            assert "\n" not in str(exc)
            return
    assert set(params) == {n.name for n in SOLVE.nodes}


# -- export archives -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> bytes:
    """One exported toy artifact, as bytes."""
    root = tmp_path_factory.mktemp("export")
    store = ArtifactStore(root / "store")
    key = run_stage("toy-squares", {"n": 300}, store=store, log=quiet).key
    (path,) = export_artifacts(store, [key], root / "out")
    return path.read_bytes()


def tar_of(members: dict[str, bytes]) -> bytes:
    """A tar holding the given files."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


manifests = st.one_of(
    st.builds(json.dumps, st.recursive(st.none() | st.integers() | st.text(max_size=8),
              lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
                  st.sampled_from(["format", "key", "meta", "stage", "params", "inputs",
                                   "version", "arrays"]), inner, max_size=4), max_leaves=12)),
    st.binary(max_size=40).map(lambda b: b.decode("latin-1")),
)  # fmt: skip


@st.composite
def archives(draw: st.DrawFn, exported: bytes) -> bytes:
    """An export with bytes flipped, cut or added, or a tar with an arbitrary manifest."""
    kind = draw(st.sampled_from(["flip", "cut", "append", "manifest", "escape"]))
    data = bytearray(exported)
    if kind == "flip":
        for _ in range(draw(st.integers(1, 8))):
            i = draw(st.integers(0, len(data) - 1))
            data[i] = draw(st.integers(0, 255))
        return bytes(data)
    if kind == "cut":
        return bytes(data[: draw(st.integers(0, len(data) - 1))])
    if kind == "append":
        return bytes(data) + draw(st.binary(min_size=1, max_size=600))
    if kind == "manifest":
        return tar_of({"manifest.json": draw(manifests).encode()})
    with tarfile.open(fileobj=io.BytesIO(exported)) as tar:
        manifest = json.loads(tar.extractfile("manifest.json").read())  # type: ignore[union-attr]
    stage = draw(st.sampled_from(["../../outside", "/abs", "toy-squares/../x", "a\\b", "ok"]))
    manifest["meta"]["stage"] = stage
    from gameforge.artifacts import artifact_key

    meta = manifest["meta"]
    manifest["key"] = artifact_key(meta["stage"], meta["version"], meta["params"], meta["inputs"])
    return tar_of({"manifest.json": json.dumps(manifest).encode(), "../escape": b"x"})


@settings(
    max_examples=80, deadline=5000, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_archives_import_or_are_refused_with_a_store_error(tmp_path, exported, data):
    archive = data.draw(archives(exported))
    case = tmp_path / f"case-{uuid.uuid4().hex}"
    case.mkdir()
    source = case / "in.tar"
    source.write_bytes(archive)
    store = ArtifactStore(case / "store")
    with capped_address_space():
        try:
            results = import_artifacts(store, [source])
            event("imported")
        except StoreError as exc:
            assert "\n" not in str(exc).strip()
            results = []
            event("refused: " + str(exc).split(":", 1)[1][:28])
    outside = {p.name for p in case.iterdir()} - {"in.tar", "store"}
    assert not outside, f"import wrote outside the store: {outside}"
    assert not list((case / "store" / "partial").glob("*")) if (case / "store").exists() else True
    for key, _status in results:
        assert store.verify([key]) == {key: []}
        assert store.object_path(key).resolve().is_relative_to((case / "store").resolve())
