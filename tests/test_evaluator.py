"""Tests of the poker evaluator: reference libraries, exhaustive counts, small decks, properties."""

from __future__ import annotations

import itertools
import random
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import njit

from gameforge.engines.poker import evaluator as ev
from gameforge.engines.poker.cards import format_card, parse_cards

FULL_5CARD_COUNTS = [1302540, 1098240, 123552, 54912, 10200, 5108, 3744, 624, 40]
FULL_5CARD_DISTINCT = [1277, 2860, 858, 858, 10, 1277, 156, 156, 10]  # 7462 in all
FULL_7CARD_COUNTS = [
    23294460,
    58627800,
    31433400,
    6461620,
    6180020,
    4047644,
    3473184,
    224848,
    41584,
]


@njit(cache=True)
def _all_combos(n: int, k: int) -> np.ndarray:
    """Every k-subset of range(n) in lexicographic order, as int8 rows."""
    total = 1
    for i in range(k):
        total = total * (n - i) // (i + 1)
    out = np.empty((total, k), np.int8)
    idx = np.arange(k)
    for row in range(total):
        out[row] = idx
        i = k - 1
        while i >= 0 and idx[i] == n - k + i:
            i -= 1
        if i < 0:
            break
        idx[i] += 1
        for j in range(i + 1, k):
            idx[j] = idx[j - 1] + 1
    return out


def _deal(rng: np.random.Generator, n_deals: int, n_cards: int, deck: int = 52) -> np.ndarray:
    """n_deals rows of n_cards distinct cards each."""
    return rng.random((n_deals, deck)).argsort(axis=1)[:, :n_cards].astype(np.int8)


# -------------------------------------------------------------------------------------------
# An independent, slow reference: group the ranks of the best five cards.


def _ref_five_or_fewer(cards: list[int], num_ranks: int, num_suits: int) -> int:
    ranks = [c // num_suits for c in cards]
    suits = [c % num_suits for c in cards]
    counts = Counter(ranks)
    # Tie-break order: by multiplicity, then rank, each rank once.
    order = sorted(counts, key=lambda r: (counts[r], r), reverse=True)
    shape = sorted(counts.values(), reverse=True)
    flush = len(cards) == 5 and len(set(suits)) == 1
    distinct = sorted(counts)
    straight_top = -1
    if len(cards) == 5 and len(distinct) == 5:
        if distinct[4] - distinct[0] == 4:
            straight_top = distinct[4]
        elif num_ranks == 13 and distinct == [0, 1, 2, 3, 12]:
            straight_top = 3
    if straight_top >= 0:
        category, kickers = (8 if flush else 4), [straight_top]
    elif flush:
        category, kickers = 5, order
    else:
        category = {
            (4,): 7,
            (4, 1): 7,
            (3, 2): 6,
            (3,): 3,
            (3, 1): 3,
            (3, 1, 1): 3,
            (2, 2): 2,
            (2, 2, 1): 2,
        }.get(tuple(shape), 1 if shape[0] == 2 else 0)
        kickers = order
    value = category << 20
    for pos, r in enumerate(kickers):
        value |= r << (16 - 4 * pos)
    return value


def _ref_value(cards: list[int], num_ranks: int = 13, num_suits: int = 4) -> int:
    if len(cards) <= 5:
        return _ref_five_or_fewer(cards, num_ranks, num_suits)
    return max(
        _ref_five_or_fewer(list(five), num_ranks, num_suits)
        for five in itertools.combinations(cards, 5)
    )


# -------------------------------------------------------------------------------------------
# Keys and tables.


def test_rank_keys_unique_per_hand_size() -> None:
    for size in range(1, ev.MAX_CARDS + 1):
        combos = np.array(list(itertools.combinations_with_replacement(range(13), size)))
        allowed = ((combos[:, :, None] == np.arange(13)).sum(axis=1) <= 4).all(axis=1)
        sums = ev.RANK_KEYS[combos[allowed]].sum(axis=1)
        assert np.unique(sums).shape[0] == sums.shape[0], size
    assert sums.max() < 2**32  # the rank key must not spill into the suit counters


@pytest.mark.slow
def test_rank_keys_are_the_greedy_minimum() -> None:
    """Rerun the greedy search: each key is the smallest keeping same-size sums distinct."""
    keys = [0]
    for n_ranks in range(1, 13):
        by_size: list[set[int]] = [set() for _ in range(8)]
        for size in range(8):
            for combo in itertools.combinations_with_replacement(range(n_ranks), size):
                if all(combo.count(r) <= 4 for r in set(combo)):
                    by_size[size].add(sum(keys[r] for r in combo))
        sorted_sets = [np.array(sorted(s), dtype=np.int64) for s in by_size]
        keys.append(_next_key(sorted_sets, keys[-1] + 1))
    assert keys == ev.RANK_KEYS.tolist()


def _next_key(sums_by_size: list[np.ndarray], start: int) -> int:
    marks = [np.zeros(int(s.max()) + 1 if s.size else 1, np.bool_) for s in sums_by_size]
    for mark, s in zip(marks, sums_by_size, strict=True):
        mark[s] = True
    flat = np.concatenate(sums_by_size)
    offsets = np.cumsum([0] + [s.size for s in sums_by_size])
    width = max(m.shape[0] for m in marks)
    mark2d = np.zeros((8, width), np.bool_)
    for size, mark in enumerate(marks):
        mark2d[size, : mark.shape[0]] = mark
    return int(_first_free_key(mark2d, flat, offsets, start))


@njit(cache=True)
def _first_free_key(marks: np.ndarray, flat: np.ndarray, offsets: np.ndarray, k: int) -> int:
    # With c copies of the new rank, size-m sums are S[m - c] + c*k; two copy counts c1 < c2
    # collide when S[m - c1] meets S[m - c2] + (c2 - c1)*k.
    while True:
        good = True
        for m in range(8):
            for c1 in range(min(m, 4) + 1):
                for c2 in range(c1 + 1, min(m, 4) + 1):
                    shift = (c2 - c1) * k
                    for i in range(offsets[m - c2], offsets[m - c2 + 1]):
                        v = flat[i] + shift
                        if v < marks.shape[1] and marks[m - c1, v]:
                            good = False
                            break
                    if not good:
                        break
                if not good:
                    break
            if not good:
                break
        if good:
            return k
        k += 1


@pytest.mark.parametrize("n_cards", [1, 2, 3, 4, 5, 6, 7])
def test_hashed_rank_table_is_perfect(n_cards: int) -> None:
    combos = np.array(
        [
            c
            for c in itertools.combinations_with_replacement(range(13), n_cards)
            if max(c.count(r) for r in c) <= 4
        ]
    )
    keys, values = ev._rank_keys_and_values(combos, 13)
    table = ev.get_tables(13, 4, n_cards).rank_table
    slots = table[keys >> ev.ROW_SHIFT] + (keys & ev.ROW_MASK)
    assert np.unique(slots).shape[0] == slots.shape[0]
    assert (slots >= (keys.max() >> ev.ROW_SHIFT) + 1).all()  # past the offset block
    assert np.array_equal(table[slots], values)


def test_tables_are_cached_and_read_only() -> None:
    tables = ev.get_tables(13, 4, 7)
    assert ev.get_tables(13, 4, 7) is tables
    assert tables.card_key.shape == tables.card_bit.shape == (52,)
    assert tables.flush_table.shape == (8192,)
    with pytest.raises(ValueError):
        tables.rank_table[0] = 1


# -------------------------------------------------------------------------------------------
# Full deck against known counts and reference libraries.


def test_five_card_exhaustive_counts_and_distinct_values() -> None:
    values = ev.evaluate(_all_combos(52, 5))
    assert values.shape == (2598960,)
    assert np.bincount(ev.category_of(values), minlength=9).tolist() == FULL_5CARD_COUNTS
    distinct = np.unique(values)
    assert distinct.shape[0] == 7462
    assert np.bincount(ev.category_of(distinct), minlength=9).tolist() == FULL_5CARD_DISTINCT


def _holdem_pairs(n_pairs: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    deal = _deal(np.random.default_rng(seed), n_pairs, 9)
    board = deal[:, 4:]
    return np.hstack([deal[:, 0:2], board]), np.hstack([deal[:, 2:4], board])


def test_showdowns_agree_with_eval7() -> None:
    import eval7  # test dependency: must be installed, never skipped

    hands_a, hands_b = _holdem_pairs(100_000, seed=7)
    ours = np.sign(ev.evaluate(hands_a).astype(np.int64) - ev.evaluate(hands_b))
    deck = [eval7.Card(format_card(c)) for c in range(52)]
    evaluate = eval7.evaluate
    theirs_a = np.array([evaluate([deck[c] for c in hand]) for hand in hands_a.tolist()])
    theirs_b = np.array([evaluate([deck[c] for c in hand]) for hand in hands_b.tolist()])
    theirs = np.sign(theirs_a - theirs_b)
    mismatch = np.flatnonzero(ours != theirs)
    assert mismatch.size == 0, [
        (hands_a[i].tolist(), hands_b[i].tolist(), ours[i], theirs[i]) for i in mismatch[:5]
    ]
    assert (ours == 0).any() and (ours == 1).any() and (ours == -1).any()
    # Categories too, on the first hands.
    names = {name.lower(): i for i, name in enumerate(ev.CATEGORY_NAMES)}
    names.update({"trips": 3, "quads": 7})
    their_categories = np.array([names[eval7.handtype(int(v)).lower()] for v in theirs_a[:20000]])
    assert np.array_equal(ev.category_of(ev.evaluate(hands_a[:20000])), their_categories)


def test_showdowns_agree_with_pokerkit() -> None:
    import pokerkit  # test dependency: must be installed, never skipped

    hands_a, hands_b = _holdem_pairs(10_000, seed=11)
    ours = np.sign(ev.evaluate(hands_a).astype(np.int64) - ev.evaluate(hands_b))
    deck = [next(iter(pokerkit.Card.parse(format_card(c)))) for c in range(52)]
    hand_type = pokerkit.StandardHighHand
    for i, (a, b) in enumerate(zip(hands_a.tolist(), hands_b.tolist(), strict=True)):
        board = [deck[c] for c in a[2:]]
        high_a = hand_type.from_game([deck[c] for c in a[:2]], board)
        high_b = hand_type.from_game([deck[c] for c in b[:2]], board)
        theirs = (high_a > high_b) - (high_a < high_b)
        assert ours[i] == theirs, (a, b)


def test_known_hands() -> None:
    def value(text: str) -> int:
        return ev.evaluate_one(parse_cards(text))

    assert value("AsKsQsJsTs9s8s") > value("KsQsJsTs9s8s7s")  # higher straight flush
    assert value("5d4d3d2dAd") < value("6d5d4d3d2d")  # the wheel is the lowest straight flush
    assert ev.category_of(value("5d4c3d2dAh")) == ev.STRAIGHT
    assert value("5d4c3d2dAh9s9c") < value("6d5c4d3d2h9s9c")
    assert value("AhAdAcKsKd") > value("KhKdKcAsAd")  # full house: trips first
    assert value("AhAdKcKsQd") > value("AhAdKcKsJd")  # two pair: kicker counts
    assert value("AhAdKcKsQdQc2h") == value("AcAsKhKdQh3c2c")  # third pair never plays
    assert value("2h2d2c2s3h4h5h") > value("AhKhQhJh9h8c8d")  # quads beat a flush
    assert value("AhAdAcKsKdKcQh") == value("AhAdAcKsKdQcQs")  # two trips: best full house
    # Fewer than five cards: no straights or flushes, kickers limited to the cards held.
    assert ev.category_of(value("AhKhQhJh")) == ev.HIGH_CARD
    assert value("AhAd") > value("AsKd")
    assert value("2h2d2c") > value("AhAdKc")
    assert value("2h2d3c3s") > value("AhAdKcQs")
    assert ev.category_of(value("7h7d7c7s")) == ev.QUADS


# -------------------------------------------------------------------------------------------
# Small decks.


def test_kuhn_one_card() -> None:
    values = [ev.evaluate_one([c], num_ranks=3, num_suits=1) for c in range(3)]
    assert values == sorted(values) and len(set(values)) == 3


def test_leduc_two_cards() -> None:
    def leduc(*cards: int) -> int:
        return ev.evaluate_one(list(cards), num_ranks=3, num_suits=2)

    jj, qq, kk = leduc(0, 1), leduc(2, 3), leduc(4, 5)
    kq, kj, qj = leduc(4, 2), leduc(4, 0), leduc(2, 0)
    assert jj > kq  # any pair beats high card
    assert kk > qq > jj
    assert kq > kj > qj
    assert leduc(4, 3) == leduc(5, 2)  # suits never matter in Leduc
    values = ev.evaluate(_all_combos(6, 2).astype(np.int8), num_ranks=3, num_suits=2)
    assert (ev.category_of(values) <= ev.PAIR).all()


def test_short_deck_has_no_wheel() -> None:
    # Ranks 2..7: 7-2-3-4-5 is not a straight (the top rank is not an ace), 2-3-4-5-6 is.
    deck = {"num_ranks": 6, "num_suits": 4}
    not_wheel = ev.evaluate_one(parse_cards("7c2d3h4s5c", 6, 4), **deck)
    assert ev.category_of(not_wheel) == ev.HIGH_CARD
    assert ev.category_of(ev.evaluate_one(parse_cards("6c2d3h4s5c", 6, 4), **deck)) == ev.STRAIGHT
    values = ev.evaluate(_all_combos(24, 5), **deck)
    straights = np.unique(values[ev.category_of(values) == ev.STRAIGHT] >> 16 & 0xF)
    assert straights.tolist() == [4, 5]  # six-high and seven-high only
    # With the full 13 ranks the wheel exists and is the lowest straight.
    assert ev.category_of(ev.evaluate_one(parse_cards("Ac2d3h4s5c"))) == ev.STRAIGHT


def test_category_counts_on_a_small_deck() -> None:
    counts = ev.category_counts_7card(num_ranks=6, num_suits=4)
    values = ev.evaluate(_all_combos(24, 7), num_ranks=6, num_suits=4)
    assert counts.tolist() == np.bincount(ev.category_of(values), minlength=9).tolist()
    assert counts.sum() == 346104


# -------------------------------------------------------------------------------------------
# Properties.


@st.composite
def _hands(draw: st.DrawFn) -> tuple[list[int], int, int]:
    num_ranks = draw(st.integers(1, 13))
    num_suits = draw(st.integers(1, 4))
    deck = num_ranks * num_suits
    n_cards = draw(st.integers(1, min(7, deck)))
    cards = draw(st.permutations(range(deck)))[:n_cards]
    return list(cards), num_ranks, num_suits


@settings(max_examples=300, deadline=None)
@given(_hands(), st.randoms(use_true_random=False))
def test_matches_reference_and_symmetries(
    hand: tuple[list[int], int, int], rnd: random.Random
) -> None:
    cards, num_ranks, num_suits = hand
    value = ev.evaluate_one(cards, num_ranks, num_suits)
    assert value == _ref_value(cards, num_ranks, num_suits)
    shuffled = cards[:]
    rnd.shuffle(shuffled)
    assert ev.evaluate_one(shuffled, num_ranks, num_suits) == value
    perm = list(range(num_suits))
    rnd.shuffle(perm)
    relabelled = [c - c % num_suits + perm[c % num_suits] for c in cards]
    assert ev.evaluate_one(relabelled, num_ranks, num_suits) == value
    batch = ev.evaluate(np.array([cards, shuffled], dtype=np.int8), num_ranks, num_suits)
    assert batch.tolist() == [value, value]


def test_seven_cards_are_the_best_five_of_them() -> None:
    hands = _deal(np.random.default_rng(3), 2000, 7)
    sevens = ev.evaluate(hands)
    fives = ev.evaluate(hands[:, list(itertools.combinations(range(7), 5))].reshape(-1, 5))
    assert np.array_equal(sevens, fives.reshape(-1, 21).max(axis=1))
    sixes = ev.evaluate(hands[:, :6])
    assert (sevens >= sixes).all()  # one more card never hurts


@njit(cache=True)
def _board_plus_holes(board: np.ndarray, holes: np.ndarray, tables: ev.EvalTables) -> np.ndarray:
    key = np.int64(0)
    bits = np.int64(0)
    for c in board:
        key += tables.card_key[c]
        bits |= tables.card_bit[c]
    out = np.empty(holes.shape[0], np.int32)
    for i in range(holes.shape[0]):
        a, b = holes[i, 0], holes[i, 1]
        out[i] = ev.value_from_packed(
            key + tables.card_key[a] + tables.card_key[b],
            bits | tables.card_bit[a] | tables.card_bit[b],
            tables.rank_table,
            tables.flush_table,
        )
    return out


def test_incremental_packed_sums_match_batch() -> None:
    rng = np.random.default_rng(5)
    tables = ev.get_tables()
    for _ in range(20):
        deal = _deal(rng, 1, 52)[0]
        board, rest = deal[:5], deal[5:]
        holes = rest[_all_combos(47, 2)]
        values = _board_plus_holes(board, holes, tables)
        expected = ev.evaluate(np.hstack([holes, np.broadcast_to(board, (holes.shape[0], 5))]))
        assert np.array_equal(values, expected)


# -------------------------------------------------------------------------------------------
# Input validation.


def test_evaluate_one_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match="duplicate"):
        ev.evaluate_one([0, 5, 0])
    with pytest.raises(ValueError, match="out of range"):
        ev.evaluate_one([0, 52])
    with pytest.raises(ValueError, match="out of range"):
        ev.evaluate_one([-1, 3])
    with pytest.raises(ValueError, match="1..7 cards"):
        ev.evaluate_one(list(range(8)))
    with pytest.raises(ValueError, match="1..7 cards"):
        ev.evaluate_one([])
    with pytest.raises(ValueError, match="out of range"):
        ev.evaluate_one([6], num_ranks=3, num_suits=2)
    with pytest.raises(ValueError, match="num_ranks"):
        ev.evaluate_one([0], num_ranks=14)


def test_evaluate_rejects_bad_input() -> None:
    good = np.array([[0, 1, 2, 3, 4, 5, 6]], dtype=np.int8)
    assert ev.evaluate(good).shape == (1,)
    assert ev.evaluate(good.astype(np.int64)).tolist() == ev.evaluate(good).tolist()
    assert ev.evaluate(np.empty((0, 7), np.int8)).shape == (0,)
    for bad in ([[0, 1, 2, 3, 4, 5, 52]], [[0, 1, 2, 3, 4, 5, -1]], [[0, 1, 2, 3, 4, 5, 5]]):
        for dtype in (np.int8, np.int16, np.int64):
            with pytest.raises(ValueError, match="hand 0"):
                ev.evaluate(np.array(bad, dtype=dtype))
    with pytest.raises(ValueError, match="first hand 1"):
        ev.evaluate(np.array([[0, 1], [3, 3]], dtype=np.int8))
    with pytest.raises(ValueError, match="0..5"):
        ev.evaluate(np.array([[0, 6]], dtype=np.int8), num_ranks=3, num_suits=2)
    with pytest.raises(ValueError, match="2-D"):
        ev.evaluate(np.arange(7, dtype=np.int8))
    with pytest.raises(ValueError, match="integer"):
        ev.evaluate(np.zeros((1, 5)))
    with pytest.raises(ValueError, match="1..7 cards"):
        ev.evaluate(np.arange(8, dtype=np.int8)[None])


def test_category_names() -> None:
    assert len(ev.CATEGORY_NAMES) == 9
    assert ev.CATEGORY_NAMES[ev.STRAIGHT_FLUSH] == "straight flush"
    assert ev.category_of(np.array([8 << 20, 1 << 20 | 5])).tolist() == [8, 1]


# -------------------------------------------------------------------------------------------
# Slow.


@pytest.mark.slow
def test_seven_card_exhaustive_category_counts() -> None:
    counts = ev.category_counts_7card()
    assert counts.tolist() == FULL_7CARD_COUNTS
    assert counts.sum() == 133784560
