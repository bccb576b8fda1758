"""`gameforge play`: the ACPC protocol over a real TCP socket against a dealer process.

The test dealer (`tests/acpc_dealer.py`) deals and names cards as either ACPC dealer does: the
released one names a short deck's lowest ranks and suits (`bottom`), the acpc_dealer gem's fork
its highest (`top`). With the same seed both deal the same cards relative to the deck, so a
client that reads both namings right sees the same hands and, with the same seed, plays the
same match.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from gameforge.engines.poker.betting import build_tree
from gameforge.engines.poker.shipped_games import load_game
from gameforge.flows.acpc_client import ACPCClient, CardNames, MatchState, parse_match_state
from tests.acpc_dealer import start_dealer
from tests.poker_helpers import LEDUC, solve_leduc

GAMEFORGE = str(Path(sys.executable).with_name("gameforge"))
HOLDEM8 = "holdem8.limit.2p.reverse_blinds"  # a shipped 8-rank deck: 2-9 bottom, 7-A top
NAMINGS = ("bottom", "top")


def play(store, key: str, game: str, port: int, card_names: str | None = None):  # type: ignore[no-untyped-def]
    """`gameforge play` against the dealer at `port`; the finished process."""
    args = [GAMEFORGE, "play", "--strategy", key[:14], "--game", game, "--port", str(port),
            "--store", str(store.root)]  # fmt: skip
    if card_names is not None:
        args += ["--card-names", card_names]
    return subprocess.run(args, capture_output=True, text=True, timeout=300)


def match(store, key: str, game: str, hands: int, dealer_names: str, card_names: str | None):  # type: ignore[no-untyped-def]
    """One match: (the client's stdout, the dealer's score of the client)."""
    dealer, port = start_dealer(game, hands, dealer_names)
    client = play(store, key, game, port, card_names)
    out, _ = dealer.communicate(timeout=60)
    assert client.returncode == 0, client.stderr
    assert f"played {hands} hands" in client.stdout
    assert dealer.returncode == 0, out
    return client.stdout, float(out.strip().splitlines()[-1].split(":")[1])


def test_play_leduc_at_both_dealers(store):
    """A solved Leduc strategy plays 200 hands against an always-call dealer bot that names cards
    either way, with `--card-names` auto (the default) and the dealer's own naming: every match
    is the same match, and it wins."""
    key = solve_leduc(store, "cfr+", 300)
    scores = {}
    for names in NAMINGS:
        for option in (None, names):
            stdout, scores[names, option] = match(store, key, LEDUC, 200, names, option)
            if option is None:  # auto: Leduc's two namings share no card, the first one decides
                assert f"card names: {names} (" in stdout and "in hand 0" in stdout, stdout
            else:
                assert f"card names: {names}, --card-names {names}" in stdout, stdout
    assert len(set(scores.values())) == 1, scores
    assert scores["top", "top"] > 0  # always-call is very exploitable; a near-equilibrium wins


def cards_seen(game: str, dealer_names: str, card_names: str, hands: int, seed: int):  # type: ignore[no-untyped-def]
    """The hands (hand, seat, hole, board as this engine's card ids) an always-call client sees
    at each of its decisions, playing the in-process client against the dealer; and its log."""
    definition = load_game(game)
    seen: list[tuple] = []
    log: list[str] = []

    def always_call(state: MatchState, node: int) -> str:
        board = tuple(state.board)
        seen.append((state.hand, state.position, tuple(state.hole[state.position]), board))
        return "c"

    dealer, port = start_dealer(game, hands, dealer_names, seed)
    names = CardNames(definition, card_names, log=log.append)
    client = ACPCClient(definition, build_tree(definition), always_call, names)
    assert client.play("127.0.0.1", port) == hands
    out, _ = dealer.communicate(timeout=60)
    assert dealer.returncode == 0, out
    return seen, log


def test_8_rank_deck_read_alike_under_both_namings():
    """Holdem8 (2-9 named bottom, 7-A named top: 7, 8, 9 are in both) from both seats: under the
    explicit naming, the client sees the same cards from both dealers; `auto` reads the shared
    cards of the first lines as `bottom`, decides at the first card only one naming has, and from
    then on sees the same cards. Seed 13 deals 7h8c preflop (both namings) and a jack on the flop.
    """
    reference, _ = cards_seen(HOLDEM8, "bottom", "bottom", 30, seed=13)
    assert {seat for _, seat, _, _ in reference} == {0, 1}
    assert cards_seen(HOLDEM8, "top", "top", 30, seed=13)[0] == reference
    seen, log = cards_seen(HOLDEM8, "top", "auto", 30, seed=13)
    assert len(log) == 1 and log[0].startswith("card names: top ("), log
    assert "found from the dealer's card 'Jh' in hand 0" in log[0]
    assert "earlier lines" in log[0] and "were read as bottom" in log[0]
    later = [s for s in seen if s[0] > 0]
    assert later and later == [s for s in reference if s[0] > 0]
    seen, log = cards_seen(HOLDEM8, "bottom", "auto", 30, seed=13)
    assert seen == reference and log[0].startswith("card names: bottom ("), log


def test_top_names_are_read_into_this_engines_cards():
    """Leduc's 'Qs' (top naming) is the engine's card 1, the one named 2d at the bottom; the
    answer to a line repeats the dealer's own card names."""
    leduc = load_game(LEDUC)
    state = parse_match_state("MATCHSTATE:1:4:r:|Ah/Kh", leduc, "top")
    assert state.hole == [[], [2 * 2 + 0]] and state.board == [1 * 2 + 0]
    assert parse_match_state("MATCHSTATE:1:4:r:|4c/3c", leduc).hole == state.hole
    client = ACPCClient(leduc, build_tree(leduc), lambda state, node: "c", CardNames(leduc, "top"))
    assert client.respond("MATCHSTATE:0:0::Qs|") == "MATCHSTATE:0:0::Qs|:c"


def test_wrong_card_names_give_one_clear_error(store):
    """`--card-names bottom` at a dealer that names Leduc from the top: one line that names both
    namings' cards and the option to use; exit code 2."""
    key = solve_leduc(store, "cfr", 2)
    dealer, port = start_dealer(LEDUC, 10, "top")
    result = play(store, key, LEDUC, port, "bottom")
    dealer.kill()
    dealer.communicate(timeout=60)
    assert result.returncode == 2
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert "is not in leduc.limit.2p's deck named bottom (ranks 234, suits cd)" in lines[0]
    assert "but is named top (ranks QKA, suits hs): try --card-names top or auto" in lines[0]


def serve_lines(lines: list[bytes]) -> tuple[int, threading.Thread, socket.socket]:
    """A one-connection dealer that reads the VERSION line, sends `lines`, then hangs up."""
    server = socket.create_server(("127.0.0.1", 0))

    def serve() -> None:
        conn, _ = server.accept()
        conn.recv(100)  # the VERSION line
        for line in lines:
            conn.sendall(line)
        conn.recv(100)
        conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    return server.getsockname()[1], thread, server


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (b"HELLO WORLD\r\n", "malformed dealer line 'HELLO WORLD'"),
        (
            b"MATCHSTATE:0:0::Jc|\r\n",
            "card 'Jc' is in neither ACPC naming of leduc.limit.2p's deck: bottom (the University "
            "of Alberta dealer as released): ranks 234, suits cd; top (the acpc_dealer gem's fork "
            "by dmorrill10): ranks QKA, suits hs",
        ),
    ],
)
def test_malformed_dealer_line_gives_one_clear_error(store, line, message):
    """A dealer that speaks nonsense, or names a card neither naming has: a one-line error,
    exit code 2, nothing hangs."""
    key = solve_leduc(store, "cfr", 2)
    port, thread, server = serve_lines([line])
    result = subprocess.run(
        [GAMEFORGE, "play", "--strategy", key, "--port", str(port), "--store", str(store.root)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    thread.join(timeout=10)
    server.close()
    assert result.returncode == 2
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and message in lines[0], result.stderr


@pytest.fixture(scope="module")
def holdem8_strategy(tmp_path_factory):  # type: ignore[no-untyped-def]
    """A tiny solved strategy of the 8-rank deck: 8 buckets a round, 2,000 sampled iterations
    (the HSD of its 2.4 M turn hands takes most of the ~30 s)."""
    from gameforge.artifacts import ArtifactStore
    from gameforge.flows.runtime import dask_executor
    from gameforge.stages.runner import run_stage

    store = ArtifactStore(tmp_path_factory.mktemp("holdem8") / "store")
    with dask_executor(None) as executor:

        def run(stage: str, params: dict, inputs: dict[str, str] | None = None) -> str:
            return run_stage(stage, {"game": HOLDEM8, **params}, inputs or {}, store=store,
                             executor=executor, log=lambda _m: None).key  # fmt: skip

        hsd = run("hsd", {}, {"river_hs": run("river-hs", {})})
        clusters = run("opponent-clusters", {"k": 2}, {"hsd": hsd})
        river = run(
            "ochs-buckets", {"k": 8}, {"ochs": run("ochs", {}, {"opponent_clusters": clusters})}
        )
        middle = run("hsd-buckets", {"k": 8}, {"hsd": hsd})
        key = run("cfr", {"algorithm": "chance", "iterations": 2000, "evaluations": 0},
                  {"middle_buckets": middle, "river_buckets": river})  # fmt: skip
    return store, key


@pytest.mark.slow
def test_play_8_rank_deck_at_both_dealers(holdem8_strategy):
    """`gameforge play` with a solved 8-rank-deck strategy at both dealers, `--card-names` auto
    and explicit: the explicit matches are the same match; auto decides the dealer's naming."""
    store, key = holdem8_strategy
    scores = {}
    for names in NAMINGS:
        for option in ("auto", names):
            stdout, scores[names, option] = match(store, key, HOLDEM8, 40, names, option)
            assert f"card names: {names}" in stdout, stdout
    assert scores["bottom", "bottom"] == scores["top", "top"], scores
