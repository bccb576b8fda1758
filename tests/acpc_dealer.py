"""A small ACPC dealer for tests: one TCP client against a built-in always-call opponent.

Follows the ACPC server protocol (version 2.0.0) for two-player limit games: reads the client's
VERSION line; for every hand sends `MATCHSTATE:<position>:<hand>:<betting>:<cards>` after each
change (the client's hole cards only, both at a showdown), reads `<state>:<action>` when the
client is to act and checks it. Positions alternate by hand. At the end it prints the client's
total chips as `SCORE:<chips>` and closes. `--close-after K` plays a dealer that breaks off: it
hangs up before hand K (after K whole hands), or with `--mid-hand` just after hand K's first
state, and prints `CLOSED:<K>` instead. `--log PATH` writes the match's log as the ACPC dealer
does (dealer.c's `-L`, `matchName.log`): the comment lines of its start, a `STATE:` line for each
hand before its last state is sent (every hole card; each position's chips; each position's
player's name) and the `SCORE:` line of the totals by seat before it hangs up.

Cards are dealt and named as the ACPC dealer's `game.c` does, on its own 52-card ids
(`rank * 4 + suit` over the full alphabets '23456789TJQKA' and 'cdhs'), independently of
gameforge's card module: `--card-names top`, the default, builds a short deck from the highest
ranks and suits, as `dealCards` in project_acpc_server's game.c does (every published copy
found, the acpc_dealer gem's included: Leduc is Q-A of h, s); `bottom` from the lowest (as
gameforge names a deck, and as a dealer building its deck from rank 0 would: Leduc is 2-4 of c,
d). Hands are ranked on those ids with the 52-card evaluator, as `game.c` ranks them. The same
seed deals the same cards, relative to the deck, under both.

    python tests/acpc_dealer.py --game leduc.limit.2p --hands 100 --port 0   # prints PORT:<n>

Tests start it with `start_dealer`; `serve_once` runs a scripted, in-process dealer for one
connection (a hostile one: over-long lines, bytes without a newline, bytes dribbled slowly).
"""

from __future__ import annotations

import argparse
import socket
import subprocess
import sys
import threading
from collections.abc import Callable

import numpy as np

from gameforge.engines.poker.betting import ACTIONS, DECISION, FOLD_END, build_tree
from gameforge.engines.poker.evaluator import evaluate
from gameforge.engines.poker.shipped_games import load_game

# game.c's alphabets and card ids: makeCard(rank, suit) = rank * MAX_SUITS + suit.
RANKS, SUITS = "23456789TJQKA", "cdhs"
MAX_RANKS, MAX_SUITS = len(RANKS), len(SUITS)


def acpc_deck(game, card_names: str) -> list[int]:  # type: ignore[no-untyped-def]
    """The deck, suits outer, ranks inner: from MAX_SUITS - numSuits and MAX_RANKS - numRanks up
    (`top`, as game.c's `dealCards` builds it) or from 0 up (`bottom`)."""
    first_suit = MAX_SUITS - game.num_suits if card_names == "top" else 0
    first_rank = MAX_RANKS - game.num_ranks if card_names == "top" else 0
    return [
        r * MAX_SUITS + s
        for s in range(first_suit, first_suit + game.num_suits)
        for r in range(first_rank, first_rank + game.num_ranks)
    ]


def card_text(cards) -> str:  # type: ignore[no-untyped-def]
    """game.c's printCard of each card: rankChars[card / 4], suitChars[card % 4]."""
    return "".join(RANKS[c // MAX_SUITS] + SUITS[c % MAX_SUITS] for c in cards)


def cards_field(game, holes, board, position, show_all: bool, round_: int) -> str:  # type: ignore[no-untyped-def]
    """`hole0|hole1/board1/...` from `position`'s point of view."""
    shown = [card_text(h) if (p == position or show_all) else "" for p, h in enumerate(holes)]
    text = "|".join(shown)
    dealt = 0
    for r in range(1, round_ + 1):
        n = game.num_board_cards[r]
        if n:
            text += "/" + card_text(board[dealt : dealt + n])
        dealt += n
    return text


def start_dealer(
    game: str,
    hands: int,
    card_names: str = "top",
    seed: int = 0,
    close_after: int | None = None,
    mid_hand: bool = False,
    log: str | None = None,
) -> tuple[subprocess.Popen, int]:
    """This dealer as a process serving `hands` hands of `game` at a free port, naming cards
    `top` (the ACPC dealer's naming) or `bottom` (breaking off at hand `close_after`, if given;
    writing its log to `log`, if given); (it, the port). Its standard output is a pipe: read the
    `SCORE:` or `CLOSED:` line (and any `ERROR:` line) with `communicate()`."""
    args = [sys.executable, __file__, "--game", game, "--hands", str(hands),
            "--card-names", card_names, "--seed", str(seed)]  # fmt: skip
    if close_after is not None:
        args += ["--close-after", str(close_after)] + (["--mid-hand"] if mid_hand else [])
    if log is not None:
        args += ["--log", log]
    dealer = subprocess.Popen(args, stdout=subprocess.PIPE, text=True)
    assert dealer.stdout is not None
    return dealer, int(dealer.stdout.readline().strip().split(":")[1])


def acpc_value(value: float) -> str:
    """dealer.c's value text: `%.6f` without trailing zeros, nor a trailing point."""
    return f"{value:.6f}".rstrip("0").rstrip(".")


def log_line(game, hand: int, betting: str, holes, board, round_: int, values, names) -> str:  # type: ignore[no-untyped-def]
    """One hand of the log, as dealer.c's `addToLogFile` writes it: `printState` (every hole
    card, the board through the hand's last round), then the values and the names in position
    order."""
    cards = cards_field(game, holes, board, 0, True, round_)
    shown = "|".join(acpc_value(v) for v in values)
    return f"STATE:{hand}:{betting}:{cards}:{shown}:{'|'.join(names)}"


def hang_up(conn: socket.socket) -> None:
    """Close like a dealer whose process ends: FIN, then read what the client still sends until
    it closes (closing with its answer unread would reset the connection instead)."""
    try:
        conn.shutdown(socket.SHUT_WR)
        conn.settimeout(10)
        while conn.recv(65536):
            pass
    except OSError:
        pass  # the client reset the connection: nothing left to read
    conn.close()


def serve_once(script: Callable[[socket.socket], None]) -> tuple[int, threading.Thread]:
    """A one-connection dealer in a thread at a free port of 127.0.0.1: it reads the client's
    VERSION line, runs `script(connection)`, then hangs up; (the port, the thread). A client that
    gives up mid-script (sends fail) ends the script quietly."""
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(30)  # a test whose client never connects does not leave a thread for ever

    def serve() -> None:
        with server:
            conn, _ = server.accept()
        try:
            conn.settimeout(30)
            while not conn.recv(100).endswith(b"\n"):  # the VERSION line
                pass
            script(conn)
        except OSError:
            conn.close()  # the client hung up: what it was sent no longer matters
            return
        hang_up(conn)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    return server.getsockname()[1], thread


def main() -> None:
    """Serve one client for `--hands` hands."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--game", required=True)
    parser.add_argument("--hands", type=int, default=100)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--card-names", choices=("bottom", "top"), default="top")
    parser.add_argument("--close-after", type=int, default=None, help="hang up at this hand")
    parser.add_argument("--mid-hand", action="store_true", help="after its first state")
    parser.add_argument("--log", default=None, help="write the match's log here")
    args = parser.parse_args()
    game = load_game(args.game)
    log = open(args.log, "w", encoding="ascii") if args.log else None  # noqa: SIM115
    seats = ("client", "always_call")  # by seat: the client connects first, as seat 0
    if log is not None:  # dealer.c's printInitialMessage: name/game/hands/seed, time limits
        log.write(f"# name/game/hands/seed test {args.game} {args.hands} {args.seed}\n"
                  "#--t_response 600000\n#--t_hand 600000\n#--t_per_hand 7000\n")  # fmt: skip
        log.flush()
    cards = np.array(acpc_deck(game, args.card_names))
    tree = build_tree(game)
    rng = np.random.default_rng(args.seed)
    server = socket.create_server(("127.0.0.1", args.port))
    print(f"PORT:{server.getsockname()[1]}", flush=True)
    conn, _ = server.accept()
    conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # no Nagle wait between lines
    reader = conn.makefile("r", newline="\n")
    version = reader.readline().strip()
    if not version.startswith("VERSION:2."):
        print(f"ERROR: bad version line {version!r}", flush=True)
        sys.exit(1)
    total = 0.0
    opponent_total = 0.0
    board_total = sum(game.num_board_cards)
    for hand in range(args.hands):
        if hand == args.close_after and not args.mid_hand:
            hang_up(conn)
            print(f"CLOSED:{hand}", flush=True)
            return
        position = hand % 2  # the client's seat this hand
        deck = cards[rng.permutation(game.deck_size)]
        holes = [
            sorted(int(c) for c in deck[p * game.num_hole_cards : (p + 1) * game.num_hole_cards])
            for p in (0, 1)
        ]
        board = [
            int(c) for c in deck[2 * game.num_hole_cards : 2 * game.num_hole_cards + board_total]
        ]
        node, betting = 0, ""
        while True:
            terminal = tree.kind[node] != DECISION
            showdown = terminal and tree.kind[node] != FOLD_END
            round_ = int(tree.round[node])
            state = (
                f"MATCHSTATE:{position}:{hand}:{betting}:"
                f"{cards_field(game, holes, board, position, showdown, round_)}"
            )
            if terminal:
                break  # its last state is sent once the hand is scored (and logged)
            conn.sendall((state + "\r\n").encode())
            if hand == args.close_after:  # --mid-hand: the hand's first state was its last
                hang_up(conn)
                print(f"CLOSED:{hand}", flush=True)
                return
            if tree.player[node] == position:
                answer = reader.readline().strip()
                if not answer.startswith(state + ":") or len(answer) != len(state) + 2:
                    print(f"ERROR: bad answer {answer!r} to {state!r}", flush=True)
                    sys.exit(1)
                action = ACTIONS.index(answer[-1]) if answer[-1] in ACTIONS else -1
                if action < 0 or tree.children[node, action] < 0:
                    print(f"ERROR: illegal action in {answer!r}", flush=True)
                    sys.exit(1)
            else:
                action = 1  # the built-in opponent always calls
            child = int(tree.children[node, action])
            betting += ACTIONS[action]
            if tree.kind[child] == DECISION and tree.round[child] != tree.round[node]:
                betting += "/"
            node = child
        spent = tree.spent[node]
        if tree.kind[node] == FOLD_END:
            gain = -spent[position] if tree.player[node] == position else spent[1 - position]
        else:
            rows = [holes[p] + board for p in (0, 1)]
            v = evaluate(np.array(rows, dtype=np.int8), MAX_RANKS, MAX_SUITS)
            sign = np.sign(int(v[position]) - int(v[1 - position]))
            gain = sign * spent[position]
        total += float(gain)
        opponent_total -= float(gain)
        if log is not None:  # written before the hand's last state is sent, as dealer.c does
            values = [0.0, 0.0]
            values[position], values[1 - position] = float(gain), 0.0 - float(gain)
            names = [seats[0], seats[1]] if position == 0 else [seats[1], seats[0]]
            log.write(log_line(game, hand, betting, holes, board, round_, values, names) + "\n")
            log.flush()
        conn.sendall((state + "\r\n").encode())
    if log is not None:  # the totals by seat, before the connections close
        log.write(f"SCORE:{acpc_value(total)}|{acpc_value(opponent_total)}:{'|'.join(seats)}\n")
        log.close()
    conn.close()
    print(f"SCORE:{total}", flush=True)


if __name__ == "__main__":
    main()
