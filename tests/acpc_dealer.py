"""A small ACPC dealer for tests: one TCP client against a built-in always-call opponent.

Follows the ACPC server protocol (version 2.0.0) for two-player limit games: reads the client's
VERSION line; for every hand sends `MATCHSTATE:<position>:<hand>:<betting>:<cards>` after each
change (the client's hole cards only, both at a showdown), reads `<state>:<action>` when the
client is to act and checks it. Positions alternate by hand. At the end it prints the client's
total chips as `SCORE:<chips>` and closes.

    python tests/acpc_dealer.py --game leduc.limit.2p --hands 100 --port 0   # prints PORT:<n>

Tests start it with `start_dealer`.
"""

from __future__ import annotations

import argparse
import socket
import subprocess
import sys

import numpy as np

from gameforge.engines.poker.betting import ACTIONS, DECISION, FOLD_END, build_tree
from gameforge.engines.poker.cards import format_cards
from gameforge.engines.poker.evaluator import evaluate
from gameforge.engines.poker.shipped_games import load_game


def cards_field(game, holes, board, position, show_all: bool, round_: int) -> str:  # type: ignore[no-untyped-def]
    """`hole0|hole1/board1/...` from `position`'s point of view."""
    shown = [
        format_cards(h, game.num_suits) if (p == position or show_all) else ""
        for p, h in enumerate(holes)
    ]
    text = "|".join(shown)
    dealt = 0
    for r in range(1, round_ + 1):
        n = game.num_board_cards[r]
        if n:
            text += "/" + format_cards(board[dealt : dealt + n], game.num_suits)
        dealt += n
    return text


def start_dealer(game: str, hands: int) -> tuple[subprocess.Popen, int]:
    """This dealer as a process serving `hands` hands of `game` at a free port; (it, the port).
    Its standard output is a pipe: read the `SCORE:` line with `communicate()`."""
    dealer = subprocess.Popen(
        [sys.executable, __file__, "--game", game, "--hands", str(hands)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert dealer.stdout is not None
    return dealer, int(dealer.stdout.readline().strip().split(":")[1])


def main() -> None:
    """Serve one client for `--hands` hands."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--game", required=True)
    parser.add_argument("--hands", type=int, default=100)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    game = load_game(args.game)
    tree = build_tree(game)
    rng = np.random.default_rng(args.seed)
    server = socket.create_server(("127.0.0.1", args.port))
    print(f"PORT:{server.getsockname()[1]}", flush=True)
    conn, _ = server.accept()
    reader = conn.makefile("r", newline="\n")
    version = reader.readline().strip()
    if not version.startswith("VERSION:2."):
        print(f"ERROR: bad version line {version!r}", flush=True)
        sys.exit(1)
    total = 0.0
    board_total = sum(game.num_board_cards)
    for hand in range(args.hands):
        position = hand % 2  # the client's seat this hand
        deck = rng.permutation(game.deck_size)
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
            conn.sendall((state + "\r\n").encode())
            if terminal:
                break
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
            v = evaluate(np.array(rows, dtype=np.int8), game.num_ranks, game.num_suits)
            sign = np.sign(int(v[position]) - int(v[1 - position]))
            gain = sign * spent[position]
        total += float(gain)
    conn.close()
    print(f"SCORE:{total}", flush=True)


if __name__ == "__main__":
    main()
