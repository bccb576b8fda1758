"""`gameforge play` records the match's hands, stores them (stage `hand-history`) and reports the
plain and the AIVAT result with their 95% intervals.

The test dealer (`tests/acpc_dealer.py`) writes its log as the ACPC dealer does (`--log`): every
hand's hole cards, which the dealer shows the client only at a showdown; `--dealer-log` reads it
after the match, and a log that disagrees with the match stops the command in one line before
anything is stored. A stored history cannot be rebuilt without the match's hands: a recompute
check refuses in one line.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from gameforge.artifacts import ArtifactStore
from gameforge.engines.poker.betting import build_tree
from gameforge.engines.poker.hand_history import (
    PlayedHand,
    history_digest,
    history_text,
    parse_history,
)
from gameforge.engines.poker.shipped_games import load_game
from gameforge.flows.acpc_client import (
    ACPCClient,
    CardNames,
    DealerLogError,
    ProtocolError,
    parse_dealer_log,
    parse_match_state,
    with_dealer_log,
)
from gameforge.stages.base import StageError
from gameforge.stages.recompute import recompute_check
from tests.acpc_dealer import start_dealer
from tests.poker_helpers import LEDUC, solve_leduc

GAMEFORGE = str(Path(sys.executable).with_name("gameforge"))
HANDS = 300


def play(store: ArtifactStore, key: str, port: int, *extra: str) -> subprocess.CompletedProcess:
    """`gameforge play` of Leduc at the dealer at `port`; the finished process."""
    args = [GAMEFORGE, "play", "--strategy", key, "--game", LEDUC, "--port", str(port),
            "--store", str(store.root), *extra]  # fmt: skip
    return subprocess.run(args, capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def match(tmp_path_factory):  # type: ignore[no-untyped-def]
    """A near-equilibrium Leduc strategy's 300 hands against the always-call dealer bot, whose
    log `--dealer-log` reads (cards named from the top, as the ACPC dealer's game.c names
    them): (the store, the client's stdout, the dealer's score of the client, the log)."""
    folder = tmp_path_factory.mktemp("play")
    store = ArtifactStore(folder / "store")
    key = solve_leduc(store, "cfr+", 300)
    log = folder / "match.log"
    dealer, port = start_dealer(LEDUC, HANDS, "top", seed=3, log=str(log))
    client = play(store, key[:14], port, "--dealer-log", str(log))
    out, _ = dealer.communicate(timeout=60)
    assert client.returncode == 0, client.stderr
    assert dealer.returncode == 0, out
    return store, client.stdout, float(out.strip().splitlines()[-1].split(":")[1]), log


def test_the_match_is_stored_with_plain_and_aivat_results(match):
    """The history holds every hand with both hole cards; its plain mean is the dealer's score
    over the hands; AIVAT's mean agrees with it within the plain interval, and AIVAT's
    interval is narrower. The command prints both and the artifact's whole key."""
    store, stdout, score, _ = match
    lines = stdout.splitlines()
    key = next(line for line in lines if line.startswith("hand history: ")).split(": ")[1]
    assert len(key) == len("hand-history-") + 16, key
    history = store.open(key)
    summary = history.meta["summary"]
    assert summary["hands"] == HANDS and summary["both_holes_known"]
    assert history["hole"][:].min() >= 0 and int(history["chips"][:].sum()) == score
    game = load_game(LEDUC)
    plain = summary["plain"]
    assert plain["mbb_per_game"] == pytest.approx(score / HANDS * 1000 / max(game.blind))
    aivat = summary["aivat"]
    assert abs(aivat["mbb_per_game"] - plain["mbb_per_game"]) < plain["half_width_95_mbb_per_game"]
    assert aivat["half_width_95_mbb_per_game"] < plain["half_width_95_mbb_per_game"]
    assert aivat["narrower"] > 1.5, aivat
    corrected = history["aivat_chips"][:]
    assert np.isfinite(corrected).all() and corrected.std() < history["chips"][:].std()
    assert f"played {HANDS} hands" in stdout
    assert f"plain: {plain['mbb_per_game']:+,.1f} ± " in stdout
    assert f"AIVAT: {aivat['mbb_per_game']:+,.1f} ± " in stdout and "x narrower" in stdout


def test_imaginary_holes_score_the_same_match_again(match, tmp_path):
    """`--imaginary-holes 4` (every hole Leduc has: exact) on the same match (same dealer seed,
    same action seed): the same hands and plain result, AIVAT's interval about as narrow or
    narrower, the baseline naming the imaginary observations."""
    store, stdout, score, _ = match
    first = store.open(stdout.split("hand history: ")[1].split()[0]).meta["summary"]
    log = tmp_path / "again.log"
    dealer, port = start_dealer(LEDUC, HANDS, "top", seed=3, log=str(log))
    key = first["strategy"]
    client = play(store, key[:14], port, "--dealer-log", str(log), "--imaginary-holes", "4")
    dealer.communicate(timeout=60)
    assert client.returncode == 0, client.stderr
    again = store.open(client.stdout.split("hand history: ")[1].split()[0]).meta["summary"]
    assert again["chips"] == first["chips"] == score and again["plain"] == first["plain"]
    aivat, before = again["aivat"], first["aivat"]
    assert "imaginary observations over 4 holes" in aivat["baseline"]
    assert (
        abs(aivat["mbb_per_game"] - first["plain"]["mbb_per_game"])
        < first["plain"]["half_width_95_mbb_per_game"]
    )
    assert aivat["half_width_95_mbb_per_game"] < 1.05 * before["half_width_95_mbb_per_game"]


def test_a_stored_history_is_not_rebuilt_without_the_match(match):
    """A recompute check of the history needs the match's hands, whose file is gone: one line
    saying so, nothing rebuilt."""
    store, stdout, _, _ = match
    key = stdout.split("hand history: ")[1].split()[0]
    with pytest.raises(StageError, match="cannot read the match's hands") as raised:
        recompute_check(store, key, log=lambda _m: None)
    assert "\n" not in str(raised.value)


def test_a_dealer_log_of_another_match_fails_in_one_line_and_stores_nothing(store, tmp_path):
    """A log of another deal of the same length: exit code 2, one error line naming the first
    hand where log and match disagree; the store holds the strategy only."""
    key = solve_leduc(store, "cfr", 2)
    leduc = load_game(LEDUC)
    other = tmp_path / "other.log"
    dealer, port = start_dealer(LEDUC, 20, seed=1, log=str(other))
    ACPCClient(leduc, build_tree(leduc), lambda state, node: "c").play("127.0.0.1", port)
    dealer.communicate(timeout=60)
    dealer, port = start_dealer(LEDUC, 20, seed=2)
    result = play(store, key, port, "--dealer-log", str(other))
    dealer.communicate(timeout=60)
    assert result.returncode == 2, result.stdout
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert "the dealer log disagrees with the match at hand 0 (log line 5)" in lines[0]
    assert [info.stage for info in store.entries()] == ["cfr"]


# -- the dealer's log and the client's records, in process --------------------------------------


# Cards named bottom (gameforge's naming, parse_dealer_log's default); the ACPC dealer's own log
# of Leduc names Q-A of h, s (top), as the match fixture's does.
LOG = """# name/game/hands/seed m leduc.limit.2p 3 7
#--t_response 600000
STATE:0:rc/cc:3d|2c/4c:3|-3:a|b
STATE:1:rf:2d|4d:1|-1:b|a
STATE:2:cc/rrc:4c|3c/2c:9|-9:a|b
SCORE:11|-11:a|b
"""


def client_hands() -> list[PlayedHand]:
    """What the client, player a (position 0, then 1, then 0), saw of the log's hands."""
    leduc = load_game(LEDUC)
    client = ACPCClient(
        leduc, build_tree(leduc), lambda state, node: "c", CardNames(leduc, "bottom")
    )
    lines = [
        "MATCHSTATE:0:0:rc/cc:3d|2c/4c",
        "MATCHSTATE:1:1:rf:|4d",
        "MATCHSTATE:0:2:cc/rrc:4c|3c/2c",
    ]
    found = [client.state_of(line) for line in lines]
    return [client.played_hand(*state) for state in found if state is not None]


def test_the_log_fills_in_the_hole_cards_the_dealer_did_not_show():
    """The client's records (chips from its cards and betting), completed by the log, written as
    canonical text and read back; a line not in canonical form is refused."""
    leduc = load_game(LEDUC)
    hands = client_hands()
    assert [h.chips for h in hands] == [3, -1, 9] and hands[1].hole[0] == ()
    full = with_dealer_log(hands, parse_dealer_log(LOG, leduc), leduc)
    assert all(h.full for h in full) and full[1].hole[0] == tuple(leduc.parse_cards("2d"))
    text = history_text(leduc, full)
    assert text.splitlines()[1] == "1:1:rf:2d|4d:-1" and parse_history(leduc, text) == full
    assert len(history_digest(text)) == 64
    with pytest.raises(ValueError, match="history line 2: .* not in canonical form"):
        parse_history(leduc, text.replace(":-1\n", ":-01\n", 1))


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("STATE:0:rc/cc:", "STATE:0:rr/cc:", "hand 0 (log line 3): its betting is 'rr/cc'"),
        ("3d|2c/4c", "2d|2c/4c", "hand 0 (log line 3): the client's hole cards (position 0)"),
        ("3d|2c/4c", "3d|2d/4c", "hand 0 (log line 3): the opponent's shown hole cards"),
        ("4c|3c/2c", "4c|3c/2d", "hand 2 (log line 5): its board is 2d, the client's 2c"),
        ("2d|4d:1|-1", "2d|4d:2|-2", "hand 1 (log line 4): it gives position 1 -2 chips"),
        ("STATE:2:", "STATE:3:", "it has 3 hands (0-3), the client played 3 hands (0-2)"),
        ("STATE:2:", "STATE:1:", "hand 1 twice (lines 4 and 5)"),
        ("2d|4d:", "2d|4h:", "dealer log line 4 'STATE:1:rf:2d|4h"),
    ],
)
def test_a_log_that_disagrees_is_refused_in_one_line(old, new, message):
    """Each way a log can disagree with the match, or be unreadable: one line that says where."""
    leduc = load_game(LEDUC)
    with pytest.raises(DealerLogError) as raised:
        with_dealer_log(client_hands(), parse_dealer_log(LOG.replace(old, new), leduc), leduc)
    assert message in str(raised.value) and "\n" not in str(raised.value), str(raised.value)


def test_a_showdown_without_the_opponents_cards_is_a_protocol_error():
    """A dealer that ends a showdown without showing the opponent's card: the hand's chips are
    unknown, and the client says why."""
    leduc = load_game(LEDUC)
    client = ACPCClient(leduc, build_tree(leduc), lambda state, node: "c")
    state = parse_match_state("MATCHSTATE:0:0:rc/cc:2c|/4c", leduc)
    with pytest.raises(ProtocolError, match="a showdown without position 1's hole cards"):
        client.played_hand(state, client.tree.node_of(state.betting))
