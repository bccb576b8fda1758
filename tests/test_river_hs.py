"""River hand strength: sort-and-sweep against a brute-force definition, and the stage."""

from __future__ import annotations

from math import comb

import numpy as np
import pytest
from numba import njit

from gameforge.engines.poker.cards import parse_cards
from gameforge.engines.poker.evaluator import get_tables, value_from_packed
from gameforge.engines.poker.hand_strength import board_hs_counts, hands_on_boards, opponent_hands
from gameforge.engines.poker.shipped_games import load_game
from gameforge.stages.poker.river_hs import (
    canonical_boards,
    hand_indexer,
    hand_strength,
    num_boards,
)
from gameforge.stages.runner import run_stage
from tests.poker_helpers import brute_force_count


def test_kuhn_and_leduc_by_hand():
    kuhn = load_game("kuhn.limit.2p")
    tables = get_tables(kuhn.num_ranks, kuhn.num_suits, 1)
    counts = board_hs_counts(np.zeros((1, 0), np.int8), kuhn.deck_size, 1, tables)
    # J beats nothing, Q beats J, K beats both: HS 0, 1/2, 1 of 2 opponent cards.
    assert counts.tolist() == [[0, 2, 4]]
    leduc = load_game("leduc.limit.2p")
    tables = get_tables(leduc.num_ranks, leduc.num_suits, 2)
    board = np.array([[0]], np.int8)  # the deuce of clubs ("J" of Leduc)
    counts = board_hs_counts(board, leduc.deck_size, 1, tables)[0]
    hands = hands_on_boards(board, leduc.deck_size, 1)
    for (hole, *_), count in zip(hands.tolist(), counts.tolist()):
        assert count == brute_force_count([hole], [0], 6, 3, 2)[0]
    assert counts[0] == 2 * 4  # the pair wins against all four other cards


@pytest.mark.parametrize("game_name", ["holdem6.limit.2p.reverse_blinds", "leduc.limit.2p"])
def test_every_board_matches_brute_force_on_short_decks(game_name):
    game = load_game(game_name)
    hole = game.num_hole_cards
    board_cards = sum(game.num_board_cards)
    boards = canonical_boards(game, 0, num_boards(game))
    if game.deck_size > 12:
        boards = boards[:: max(1, len(boards) // 150)]  # a spread of 150 boards, all holes
    tables = get_tables(game.num_ranks, game.num_suits, hole + board_cards)
    counts = board_hs_counts(boards, game.deck_size, hole, tables)
    hands = hands_on_boards(boards, game.deck_size, hole)
    flat = counts.reshape(-1)
    for row, count in zip(hands.tolist(), flat.tolist()):
        expected, n_opp = brute_force_count(
            row[:hole], row[hole:], game.deck_size, game.num_ranks, game.num_suits
        )
        assert count == expected
        assert n_opp == opponent_hands(game.deck_size, board_cards, hole)


def test_random_full_deck_hands_match_brute_force():
    rng = np.random.default_rng(7)
    tables = get_tables(13, 4, 7)
    for _ in range(40):
        cards = rng.choice(52, size=7, replace=False).astype(np.int8)
        board = np.sort(cards[2:])[None, :]
        counts = board_hs_counts(board, 52, 2, tables)[0]
        hands = hands_on_boards(board, 52, 2)
        hole = sorted(cards[:2].tolist())
        [pos] = [i for i, h in enumerate(hands.tolist()) if sorted(h[:2]) == hole]
        expected, n_opp = brute_force_count(hole, board[0].tolist(), 52, 13, 4)
        assert n_opp == 990
        assert counts[pos] == expected


@njit(cache=True)
def _brute_force_all(hands, deck_size, card_key, card_bit, rank_table, flush_table, out):
    """2*wins + ties of every 2-hole-card hand by comparing against each opponent directly."""
    for h in range(hands.shape[0]):
        used = np.zeros(deck_size, np.bool_)
        key_b = np.int64(0)
        bit_b = np.int64(0)
        for t in range(2, hands.shape[1]):
            used[hands[h, t]] = True
            key_b += card_key[hands[h, t]]
            bit_b |= card_bit[hands[h, t]]
        a, b = hands[h, 0], hands[h, 1]
        used[a] = used[b] = True
        mine = value_from_packed(
            key_b + card_key[a] + card_key[b],
            bit_b | card_bit[a] | card_bit[b],
            rank_table,
            flush_table,
        )
        total = 0
        for j in range(deck_size):
            for i in range(j):
                if used[i] or used[j]:
                    continue
                theirs = value_from_packed(
                    key_b + card_key[i] + card_key[j],
                    bit_b | card_bit[i] | card_bit[j],
                    rank_table,
                    flush_table,
                )
                total += 2 if mine > theirs else (1 if mine == theirs else 0)
        out[h] = total


def test_stage_covers_every_canonical_hand_exactly(store):
    """Every class of the (hole, board) indexer gets its brute-force HS: all of a 6-rank deck."""
    game = "holdem6.limit.2p.reverse_blinds"
    result = run_stage(
        "river-hs", {"game": game, "boards_per_chunk": 64}, store=store, log=lambda _m: None
    )
    artifact = store.open(result.key)
    counts = artifact["hs_count"][:]
    definition = load_game(game)
    indexer = hand_indexer(definition)
    assert counts.shape == (indexer.size(1),) == (324552,)
    assert artifact.meta["summary"]["opponent_hands"] == comb(24 - 7, 2)
    hands = indexer.unindex(np.arange(counts.shape[0], dtype=np.int64), 1)
    tables = get_tables(6, 4, 7)
    expected = np.empty(counts.shape[0], np.int64)
    _brute_force_all(
        hands, 24, tables.card_key, tables.card_bit, tables.rank_table, tables.flush_table, expected
    )
    np.testing.assert_array_equal(counts, expected)


def test_full_holdem_stage_matches_brute_force_on_random_river_hands(holdem_river_hs):
    """Paper scale in the default suite (~15 s): all 123,156,254 classes, checked on samples."""
    artifact = holdem_river_hs
    assert artifact.meta["summary"]["hands"] == 123_156_254
    assert artifact.meta["summary"]["boards"] == 134_459
    rng = np.random.default_rng(11)
    hands = np.array([rng.choice(52, size=7, replace=False) for _ in range(300)], np.int8)
    hs = hand_strength(artifact, hands)
    for row, value in zip(hands.tolist(), hs.tolist()):
        expected, n_opp = brute_force_count(row[:2], row[2:], 52, 13, 4)
        assert value == expected / (2 * n_opp)
    # The paper's example hand, J♣9♡ on 4♢5♢9♢6♣J♠ (two pair), any board order.
    example = np.array([parse_cards("Jc9h" + b) for b in ("4d5d9d6cJs", "Js6c9d5d4d")], np.int8)
    expected, _ = brute_force_count(example[0, :2].tolist(), example[0, 2:].tolist(), 52, 13, 4)
    np.testing.assert_array_equal(hand_strength(artifact, example), expected / 1980)
    with pytest.raises(ValueError):
        hand_strength(artifact, np.array([parse_cards("Jc9h4d5d9d6c") + [9]], np.int8))
