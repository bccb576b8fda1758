"""`gameforge play`: the ACPC protocol over a real TCP socket against a dealer process.

The test dealer (`tests/acpc_dealer.py`) deals and names cards as the ACPC dealer's game.c does,
naming a short deck's highest ranks and suits (`top`, its default), or its lowest (`bottom`,
gameforge's own naming, as a dealer building its deck from rank 0 would). With the same seed
both deal the same cards relative to the deck, so a client that reads both namings right sees
the same hands and, with the same seed, plays the same match. Scripted dealers that break off,
send over-long lines or dribble bytes check that the client ends every match it cannot finish
with one clear error, quickly.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from gameforge.engines.poker.betting import build_tree
from gameforge.engines.poker.shipped_games import load_game
from gameforge.flows.acpc_client import (
    MAX_LINE_BYTES,
    QUOTE_CHARS,
    ACPCClient,
    CardNames,
    DealerLines,
    MatchError,
    MatchState,
    ProtocolError,
    parse_match_state,
)
from tests.acpc_dealer import serve_once, start_dealer
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
    # the hands are stored and scored (AIVAT only where the dealer showed every hole card)
    assert "plain: " in client.stdout and "AIVAT: " in client.stdout
    assert "hand history: hand-history-" in client.stdout
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
    explicit naming, the client sees the same cards from both dealers. `auto` reads the shared
    cards of the first lines as `top`, the ACPC dealer's naming, and decides at the first card
    only one naming has. Seed 13 deals the client 7h8c preflop at the top dealer (both namings
    have them) and a jack on the flop: auto sees every card the explicit naming sees. Seed 26
    deals it 7h8d preflop at a bottom dealer and a 3 on the flop: auto misreads its preflop
    decision of hand 0 (as top: 2h3d) and from the flop on sees the same cards."""
    reference, _ = cards_seen(HOLDEM8, "top", "top", 30, seed=13)
    assert {seat for _, seat, _, _ in reference} == {0, 1}
    assert cards_seen(HOLDEM8, "bottom", "bottom", 30, seed=13)[0] == reference
    seen, log = cards_seen(HOLDEM8, "top", "auto", 30, seed=13)
    assert len(log) == 1 and log[0].startswith("card names: top ("), log
    assert "found from the dealer's card 'Jh' in hand 0" in log[0]
    assert "earlier lines" in log[0] and "were read as top" in log[0]
    assert seen == reference
    seen, log = cards_seen(HOLDEM8, "bottom", "auto", 30, seed=13)  # 2h3c: only bottom has them
    assert seen == reference and log[0].startswith("card names: bottom ("), log
    assert "in hand 0" in log[0] and "earlier lines" not in log[0], log
    # A dealer naming from the bottom, its first lines' cards in both namings: misread till then.
    holdem8 = load_game(HOLDEM8)
    reference, _ = cards_seen(HOLDEM8, "bottom", "bottom", 4, seed=26)
    seen, log = cards_seen(HOLDEM8, "bottom", "auto", 4, seed=26)
    assert len(log) == 1 and log[0].startswith("card names: bottom ("), log
    assert "found from the dealer's card '3c' in hand 0" in log[0]
    assert "2 earlier lines" in log[0] and "were read as top" in log[0]
    first = reference[0]
    assert first[:2] == (0, 0) and holdem8.format_cards(first[2]) == "7h8d" and not first[3]
    misread = tuple(holdem8.parse_cards("7h8d", "top"))
    assert holdem8.format_cards(misread) == "2h3d"
    assert seen == [(0, 0, misread, ()), *reference[1:]]


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


def serve_lines(lines: list[bytes]) -> tuple[int, threading.Thread]:
    """A one-connection dealer that reads the VERSION line, sends `lines`, then hangs up."""
    return serve_once(lambda conn: [conn.sendall(line) for line in lines])


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (b"HELLO WORLD\r\n", "malformed dealer line 'HELLO WORLD'"),
        (
            b"MATCHSTATE:0:0::Jc|\r\n",
            "card 'Jc' is in neither ACPC naming of leduc.limit.2p's deck: bottom (gameforge's "
            "own naming, a deck from rank 0 up): ranks 234, suits cd; top (the ACPC dealer's "
            "naming, game.c's deck): ranks QKA, suits hs",
        ),
    ],
)
def test_malformed_dealer_line_gives_one_clear_error(store, line, message):
    """A dealer that speaks nonsense, or names a card neither naming has: a one-line error,
    exit code 2, nothing hangs."""
    key = solve_leduc(store, "cfr", 2)
    port, thread = serve_lines([line])
    result = subprocess.run(
        [GAMEFORGE, "play", "--strategy", key, "--port", str(port), "--store", str(store.root)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    thread.join(timeout=10)
    assert result.returncode == 2
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and message in lines[0], result.stderr


def leduc_client() -> ACPCClient:
    """An in-process client of Leduc that always calls."""
    leduc = load_game(LEDUC)
    return ACPCClient(leduc, build_tree(leduc), lambda state, node: "c")


def test_dealer_closing_mid_hand_is_an_error_with_the_hands_played():
    """A dealer that hangs up just after the first state of hand 3: the client raises, naming the
    hand cut short and the 3 hands played before, which it also keeps."""
    dealer, port = start_dealer(LEDUC, 10, close_after=3, mid_hand=True)
    client = leduc_client()
    with pytest.raises(MatchError) as raised:
        client.play("127.0.0.1", port)
    out, _ = dealer.communicate(timeout=60)
    assert out.strip().endswith("CLOSED:3"), out
    message = str(raised.value)
    assert "closed the connection in the middle of hand 3" in message, message
    assert "3 hands played before" in message and "\n" not in message, message
    assert raised.value.hands == client.hands_played == 3


def test_dealer_closing_between_hands_of_a_known_match_is_an_error():
    """A dealer that hangs up after 3 whole hands of a 10-hand match, at a client told the
    match's length: an error with the 3 hands played."""
    dealer, port = start_dealer(LEDUC, 10, close_after=3)
    with pytest.raises(MatchError, match="before the match's end") as raised:
        leduc_client().play("127.0.0.1", port, hands=10)
    assert "3 hands of the match's 10 played before" in str(raised.value)
    assert raised.value.hands == 3
    out, _ = dealer.communicate(timeout=60)
    assert out.strip().endswith("CLOSED:3"), out


def test_dealer_closing_between_hands_of_an_unknown_match_ends_it():
    """The same dealer at a client not told the match's length: the protocol cannot tell the
    close from the match's end, so the match is 3 hands long."""
    dealer, port = start_dealer(LEDUC, 10, close_after=3)
    assert leduc_client().play("127.0.0.1", port) == 3
    out, _ = dealer.communicate(timeout=60)
    assert out.strip().endswith("CLOSED:3"), out


def test_play_command_fails_on_a_dealer_closing_mid_hand(store):
    """`gameforge play` at a dealer that breaks off in hand 3: exit code 2 and one error line
    with the hands played so far, not a "played N hands" success. (A scripted dealer: each hand
    a raise the client answers, then its fold, whatever the answer; hand 3 only begins.)"""
    key = solve_leduc(store, "cfr", 2)
    hands = [f"MATCHSTATE:1:{h}:{betting}:|2d\r\n" for h in range(3) for betting in ("", "r", "rf")]
    port, thread = serve_lines([line.encode() for line in [*hands, "MATCHSTATE:1:3::|3c\r\n"]])
    result = play(store, key, LEDUC, port)
    thread.join(timeout=10)
    assert result.returncode == 2, result.stdout
    assert "played" not in result.stdout.replace("played before", "")
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert "in the middle of hand 3" in lines[0] and "3 hands played before" in lines[0]


def test_play_command_told_the_match_length_fails_on_a_dealer_closing_between_hands(store):
    """`gameforge play --hands 10` at a dealer that hangs up after 3 of its 10 hands: exit code
    2 and one line with the hands played; without `--hands` the protocol cannot tell."""
    key = solve_leduc(store, "cfr", 2)
    dealer, port = start_dealer(LEDUC, 10, close_after=3)
    args = [GAMEFORGE, "play", "--strategy", key[:14], "--game", LEDUC, "--port", str(port),
            "--hands", "10", "--store", str(store.root)]  # fmt: skip
    result = subprocess.run(args, capture_output=True, text=True, timeout=300)
    dealer.communicate(timeout=60)
    assert result.returncode == 2, result.stdout
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "3 hands of the match's 10" in lines[0], result.stderr


def test_over_long_line_is_refused_quickly_and_quoted_short():
    """A 16 MB line: refused once it passes the bound, without reading it all; the error is one
    short line quoting only the line's start."""
    start = b"MATCHSTATE:0:0::"
    port, thread = serve_once(lambda conn: conn.sendall(start + b"x" * (16 << 20) + b"\r\n"))
    began = time.monotonic()
    with pytest.raises(MatchError) as raised:
        leduc_client().play("127.0.0.1", port)
    assert time.monotonic() - began < 2
    message = str(raised.value)
    assert f"a line over {MAX_LINE_BYTES:,} bytes" in message and "\n" not in message
    assert repr((start + b"x" * 60)[:QUOTE_CHARS].decode()) + "..." in message, message
    assert len(message) < 300, len(message)
    thread.join(timeout=10)


def test_blob_without_newline_is_refused_quickly():
    """32 MB with no newline at all: refused at the line bound in well under a second."""
    port, thread = serve_once(lambda conn: conn.sendall(b"\x00" * (32 << 20)))
    began = time.monotonic()
    with pytest.raises(MatchError, match="a line over") as raised:
        leduc_client().play("127.0.0.1", port)
    assert time.monotonic() - began < 2 and len(str(raised.value)) < 400
    thread.join(timeout=10)


def test_reading_a_long_line_takes_time_linear_in_its_bytes():
    """32 MB in one line, read with the bound lifted, in the recv-sized pieces it arrives in:
    each byte is searched for the newline once (rescanning the buffer after every read, as the
    client once did, takes many seconds here)."""
    ours, theirs = socket.socketpair()
    blob = b"A" * (32 << 20)
    sender = threading.Thread(target=lambda: theirs.sendall(blob + b"\nnext\n"), daemon=True)
    sender.start()
    lines = DealerLines(ours, message_timeout=10, max_line=64 << 20)
    began = time.monotonic()
    line = lines.readline()
    assert time.monotonic() - began < 2
    assert line is not None and len(line) == len(blob) and lines.readline() == "next"
    sender.join(timeout=10)
    ours.close()
    theirs.close()


def dribble(data: bytes, every: float) -> Callable[[socket.socket], None]:
    """A dealer script sending `data` one byte every `every` seconds."""

    def script(conn: socket.socket) -> None:
        for i in range(len(data)):
            conn.sendall(data[i : i + 1])
            time.sleep(every)

    return script


def test_dribbling_dealer_is_cut_off_by_the_message_deadline():
    """One byte every 0.2 s keeps every read short, but the line is not whole within 1 s: the
    client gives up after about 1 s, quoting what came."""
    port, thread = serve_once(dribble(b"MATCHSTATE:0:0::2c|\r\n" * 4, 0.2))
    began = time.monotonic()
    with pytest.raises(MatchError, match="no whole line within 1 s") as raised:
        leduc_client().play("127.0.0.1", port, message_timeout=1.0)
    assert 0.9 < time.monotonic() - began < 2.5
    assert "bytes of it came: 'MATCH" in str(raised.value), raised.value
    thread.join(timeout=10)


def test_endless_comments_are_cut_off_by_the_match_deadline():
    """Whole comment lines every 0.1 s meet every message deadline; the match's 1 s limit ends
    them."""
    port, thread = serve_once(dribble(b"#\n" * 50, 0.05))
    began = time.monotonic()
    with pytest.raises(MatchError, match="the match went past its time limit"):
        leduc_client().play("127.0.0.1", port, message_timeout=10, match_timeout=1.0)
    assert 0.9 < time.monotonic() - began < 2.5
    thread.join(timeout=10)


@pytest.mark.parametrize(
    "line",
    [
        "MATCHSTATE:0:" + "9" * 60_000 + "::2c|",
        "MATCHSTATE:0:0:" + "c" * 60_000 + ":2c|",
        "MATCHSTATE:0:0::2c|" + "/2d" * 20_000,
        "MATCHSTATE:0:0::" + "Qs" * 30_000 + "|",
        "MATCHSTATE:0:0::2c|:" + "x" * 60_000,
    ],
)
def test_long_malformed_lines_are_quoted_short(line):
    """A malformed line under the length bound but long, in any field: one short error."""
    with pytest.raises(ProtocolError) as raised:
        leduc_client().respond(line)
    assert len(str(raised.value)) < 400, str(raised.value)[:500]


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
