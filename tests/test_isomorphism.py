"""Tests of the hand isomorphism: exact class counts, round trips, brute force, suit symmetry."""

from __future__ import annotations

import functools
import itertools
import time
from math import comb
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import njit

from gameforge.engines.poker import isomorphism as iso
from gameforge.engines.poker.isomorphism import HandIndexer, count_classes, index_hand, unindex_hand

HOLDEM = (2, 3, 1, 1)
HOLDEM_SIZES = [169, 1_286_792, 55_190_538, 2_428_287_420]


@pytest.fixture(scope="module")
def holdem() -> HandIndexer:
    return HandIndexer(HOLDEM)


@functools.cache
def indexer_for(rounds: tuple[int, ...], num_ranks: int = 13, num_suits: int = 4) -> HandIndexer:
    return HandIndexer(rounds, num_ranks, num_suits)


# --- brute-force helpers (plain numpy) -------------------------------------------------------


def all_hands(cards_per_round: tuple[int, ...], num_cards: int) -> np.ndarray:
    """Every hand: rounds ordered, cards within a round as sorted combinations."""
    hands = np.zeros((1, 0), dtype=np.int64)
    masks = np.zeros(1, dtype=np.int64)
    for c in cards_per_round:
        combos = np.array(list(itertools.combinations(range(num_cards), c)), dtype=np.int64)
        combo_masks = np.bitwise_or.reduce(np.left_shift(1, combos), axis=1)
        left = np.repeat(np.arange(len(hands)), len(combos))
        right = np.tile(np.arange(len(combos)), len(hands))
        keep = (masks[left] & combo_masks[right]) == 0
        left, right = left[keep], right[keep]
        hands = np.concatenate([hands[left], combos[right]], axis=1)
        masks = masks[left] | combo_masks[right]
    return hands


def canonical_keys(
    hands: np.ndarray, cards_per_round: tuple[int, ...], num_ranks: int, num_suits: int
) -> np.ndarray:
    """Min over suit permutations of the hand's sorted rounds, encoded as one integer."""
    num_cards = num_ranks * num_suits
    ranks, suits = hands // num_suits, hands % num_suits
    bounds = np.cumsum((0, *cards_per_round))
    weights = num_cards ** np.arange(hands.shape[1] - 1, -1, -1, dtype=np.int64)
    best = None
    for perm in itertools.permutations(range(num_suits)):
        mapped = ranks * num_suits + np.asarray(perm)[suits]
        parts = [np.sort(mapped[:, a:b], axis=1) for a, b in itertools.pairwise(bounds)]
        key = np.concatenate(parts, axis=1) @ weights
        best = key if best is None else np.minimum(best, key)
    assert best is not None
    return best


def isomorphic(
    a: list[int], b: list[int], cards_per_round: tuple[int, ...], num_suits: int
) -> bool:
    """Whether some suit permutation maps hand a onto hand b, round by round."""
    bounds = list(itertools.accumulate((0, *cards_per_round)))
    rounds_b = [sorted(b[x:y]) for x, y in itertools.pairwise(bounds)]
    for perm in itertools.permutations(range(num_suits)):
        mapped = [(c // num_suits) * num_suits + perm[c % num_suits] for c in a]
        if [sorted(mapped[x:y]) for x, y in itertools.pairwise(bounds)] == rounds_b:
            return True
    return False


def check_valid_hands(hands: np.ndarray, cards_per_round: tuple[int, ...], num_cards: int) -> None:
    assert hands.dtype == np.int8
    assert hands.min() >= 0 and hands.max() < num_cards
    ordered = np.sort(hands, axis=1)
    assert (np.diff(ordered, axis=1) > 0).all(), "a card appears twice"
    start = 0
    for c in cards_per_round:
        assert (np.diff(hands[:, start : start + c], axis=1) > 0).all(), "round not sorted"
        start += c


# --- sizes -----------------------------------------------------------------------------------


def test_holdem_sizes(holdem: HandIndexer) -> None:
    assert count_classes(HOLDEM) == HOLDEM_SIZES
    assert [holdem.size(r) for r in range(4)] == HOLDEM_SIZES
    assert holdem.rounds == 4


@pytest.mark.parametrize(
    ("rounds", "sizes"),
    [((2, 5), [169, 123_156_254]), ((5,), [134_459]), ((2, 3), [169, 1_286_792])],
)
def test_other_layouts(rounds: tuple[int, ...], sizes: list[int]) -> None:
    assert count_classes(rounds) == sizes
    assert [HandIndexer(rounds).size(r) for r in range(len(rounds))] == sizes


def test_small_deck_sizes() -> None:
    assert count_classes((1,)) == [13]
    assert count_classes((1, 1)) == [13, 13 * 25]  # second card: same suit or another
    assert count_classes((2, 3), 13, 1) == [comb(13, 2), comb(13, 2) * comb(11, 3)]
    assert count_classes((1, 1), 3, 2) == [3, 3 * 5]  # Leduc: private card, then board card
    assert count_classes((52,)) == [1]


def test_construction_is_fast_and_compiles_nothing() -> None:
    kernels: list[Any] = [iso._index_batch, iso._unindex_batch, iso._first_repeat]
    before = [len(k.signatures) for k in kernels]
    start = time.perf_counter()
    indexer = HandIndexer(HOLDEM)
    elapsed = time.perf_counter() - start
    assert elapsed < 0.5, elapsed
    assert [len(k.signatures) for k in kernels] == before
    assert indexer.size(3) == HOLDEM_SIZES[3]


# --- round trips -----------------------------------------------------------------------------


def test_every_flop_round_trips(holdem: HandIndexer) -> None:
    indices = np.arange(holdem.size(1), dtype=np.int64)
    hands = holdem.unindex(indices, 1)
    check_valid_hands(hands, HOLDEM[:2], 52)
    np.testing.assert_array_equal(holdem.index(hands, 1), indices)


@pytest.mark.parametrize("rnd", [0, 2, 3])
def test_sampled_round_trips(holdem: HandIndexer, rnd: int) -> None:
    rng = np.random.default_rng(rnd)
    size = holdem.size(rnd)
    indices = rng.integers(0, size, 200_000) if size > 200_000 else np.arange(size)
    indices = np.concatenate([indices, [0, size - 1]])
    hands = holdem.unindex(indices, rnd)
    check_valid_hands(hands, HOLDEM[: rnd + 1], 52)
    np.testing.assert_array_equal(holdem.index(hands, rnd), indices)


def test_random_hands_canonicalize(holdem: HandIndexer) -> None:
    rng = np.random.default_rng(7)
    hands = rng.random((100_000, 52)).argsort(axis=1)[:, :7].astype(np.int8)
    indices = holdem.index(hands)
    assert indices.min() >= 0 and indices.max() < holdem.size(3)
    canon = holdem.canonicalize(hands)
    check_valid_hands(canon, HOLDEM, 52)
    np.testing.assert_array_equal(holdem.index(canon), indices)
    np.testing.assert_array_equal(holdem.canonicalize(canon), canon)


# --- brute force on short decks --------------------------------------------------------------


@pytest.mark.parametrize(
    ("rounds", "num_ranks", "num_suits"),
    [
        ((2, 2, 1), 5, 4),
        ((2, 1, 1), 4, 3),
        ((1, 3), 4, 4),
        ((2, 2), 6, 2),
        ((1, 1, 1, 1), 3, 4),
        ((3, 2), 7, 1),
        ((4,), 4, 4),
        ((0, 2, 0, 1), 4, 3),
    ],
)
def test_brute_force(rounds: tuple[int, ...], num_ranks: int, num_suits: int) -> None:
    indexer = HandIndexer(rounds, num_ranks, num_suits)
    hands = all_hands(rounds, num_ranks * num_suits)
    assert count_classes(rounds, num_ranks, num_suits) == [
        indexer.size(r) for r in range(len(rounds))
    ]
    for rnd in range(len(rounds)):
        width = sum(rounds[: rnd + 1])
        prefix = np.unique(hands[:, :width], axis=0)
        keys = canonical_keys(prefix, rounds[: rnd + 1], num_ranks, num_suits)
        indices = indexer.index(prefix, rnd, validate=True)
        size = indexer.size(rnd)
        assert len(np.unique(keys)) == size
        # index is a function of the class and one-to-one: (key, index) pairs are as many as
        # keys, and as many as indices, which fill 0..size-1.
        pairs = np.unique(np.stack([keys, indices]), axis=1)
        assert pairs.shape[1] == size
        np.testing.assert_array_equal(np.unique(indices), np.arange(size))
        # The representative is in the class it names.
        canon = indexer.unindex(indices, rnd)
        np.testing.assert_array_equal(
            canonical_keys(canon.astype(np.int64), rounds[: rnd + 1], num_ranks, num_suits),
            keys,
        )


# --- suit symmetry (hypothesis) --------------------------------------------------------------


def permute_suits(hand: list[int], perm: list[int], num_suits: int = 4) -> list[int]:
    return [(c // num_suits) * num_suits + perm[c % num_suits] for c in hand]


@settings(max_examples=300, deadline=None)
@given(
    deck=st.permutations(range(52)),
    perm=st.permutations(range(4)),
    shuffle=st.randoms(use_true_random=False),
)
def test_suit_permutation_keeps_index(
    holdem: HandIndexer, deck: list[int], perm: list[int], shuffle
) -> None:
    hand = deck[:7]
    other = permute_suits(hand, perm)
    # Reordering cards within a round changes nothing either.
    bounds = [0, 2, 5, 6, 7]
    for a, b in itertools.pairwise(bounds):
        part = other[a:b]
        shuffle.shuffle(part)
        other[a:b] = part
    for rnd in range(4):
        width = bounds[rnd + 1]
        assert holdem.index_one(hand[:width], rnd) == holdem.index_one(other[:width], rnd)


@settings(max_examples=300, deadline=None)
@given(data=st.data())
@pytest.mark.parametrize(
    ("rounds", "num_ranks"), [(HOLDEM, 13), ((2, 1), 4), ((1, 2, 1), 3)], ids=str
)
def test_equal_index_iff_isomorphic(
    rounds: tuple[int, ...], num_ranks: int, data: st.DataObject
) -> None:
    indexer = indexer_for(rounds, num_ranks)
    num_cards = num_ranks * 4
    width = sum(rounds)
    first = data.draw(st.permutations(range(num_cards)))[:width]
    if data.draw(st.booleans()):
        # Often a suit-permuted copy, sometimes with one card swapped for an unused one.
        second = permute_suits(first, data.draw(st.permutations(range(4))))
        if data.draw(st.booleans()):
            unused = sorted(set(range(num_cards)) - set(second))
            if unused:
                second[data.draw(st.integers(0, width - 1))] = data.draw(st.sampled_from(unused))
    else:
        second = data.draw(st.permutations(range(num_cards)))[:width]
    same = indexer.index_one(first) == indexer.index_one(second)
    assert same == isomorphic(first, second, rounds, 4)


# --- API details -----------------------------------------------------------------------------


def test_one_hand_api(holdem: HandIndexer) -> None:
    hand = [51, 47, 0, 4, 9, 22, 30]  # As Ks | 2c 3c 4d | 7h | 9h
    index = holdem.index_one(hand)
    canon = holdem.unindex_one(index)
    assert holdem.index_one(canon) == index
    assert isomorphic(hand, canon, HOLDEM, 4)
    assert holdem.index_one(hand[:2], 0) == holdem.index_one([50, 46], 0)  # AK suited
    assert holdem.unindex_one(0, 0) == [0, 4]  # the first class: 2c 3c, suited
    assert holdem.num_hand_cards(1) == 5


def test_input_validation(holdem: HandIndexer) -> None:
    good = np.array([[0, 1, 2, 3, 4, 5, 6]], dtype=np.int8)
    with pytest.raises(ValueError, match="shape"):
        holdem.index(good[:, :6])
    with pytest.raises(ValueError, match="shape"):
        holdem.index(good, 2)
    with pytest.raises(ValueError, match="shape"):
        holdem.index(good[0])
    for bad in (52, -1, 127):
        hand = good.copy()
        hand[0, 3] = bad
        with pytest.raises(ValueError, match="card ids"):
            holdem.index(hand)
    with pytest.raises(ValueError, match="card ids"):
        holdem.index(np.array([[0, 1, 2, 3, 4, 5, 300]]))
    with pytest.raises(ValueError, match="integer"):
        holdem.index(good.astype(np.float64))
    repeated = np.array([[0, 1, 2, 3, 4, 5, 6], [0, 1, 2, 3, 4, 5, 1]], dtype=np.int8)
    with pytest.raises(ValueError, match="hand 1: a card appears twice"):
        holdem.index(repeated, validate=True)
    with pytest.raises(ValueError, match="twice"):
        holdem.index_one([0, 1, 2, 3, 4, 5, 0])
    assert holdem.index(repeated)[1] == -1  # unvalidated: flagged, not an error
    with pytest.raises(ValueError, match="round"):
        holdem.index(good, 4)
    with pytest.raises(ValueError, match="outside"):
        holdem.unindex(np.array([0, HOLDEM_SIZES[3]]))
    with pytest.raises(ValueError, match="outside"):
        holdem.unindex_one(-1)
    with pytest.raises(ValueError, match="one-dimensional"):
        holdem.unindex(np.zeros((2, 2), dtype=np.int64))
    assert holdem.index(np.zeros((0, 7), dtype=np.int8)).shape == (0,)
    assert holdem.unindex(np.zeros(0, dtype=np.int64)).shape == (0, 7)
    with pytest.raises(ValueError):
        count_classes((2, -1))
    with pytest.raises(ValueError):
        count_classes((2,), 14)
    with pytest.raises(ValueError):
        count_classes((2,), 13, 5)
    with pytest.raises(ValueError):
        count_classes((30, 30))


def test_repeated_cards_flagged(holdem: HandIndexer) -> None:
    rng = np.random.default_rng(5)
    hands = rng.integers(0, 52, (200_000, 7)).astype(np.int8)
    repeats = (np.diff(np.sort(hands, axis=1), axis=1) == 0).any(axis=1)
    assert repeats.any() and not repeats.all()
    for rnd in range(4):
        width = holdem.num_hand_cards(rnd)
        part = hands[:, :width]
        indices = holdem.index(part, rnd)
        repeated = (np.diff(np.sort(part, axis=1), axis=1) == 0).any(axis=1)
        np.testing.assert_array_equal(indices == -1, repeated)
        valid = holdem.index(part[~repeated], rnd, validate=True)
        np.testing.assert_array_equal(indices[~repeated], valid)


def test_other_integer_dtypes(holdem: HandIndexer) -> None:
    rng = np.random.default_rng(3)
    hands = rng.random((1000, 52)).argsort(axis=1)[:, :7]
    expected = holdem.index(hands.astype(np.int8))
    for dtype in (np.int64, np.uint8, np.int32):
        np.testing.assert_array_equal(holdem.index(hands.astype(dtype)), expected)
    np.testing.assert_array_equal(holdem.index(hands.tolist()), expected)


@njit  # not cached: a test module has no stable import name for numba's cache
def _roundtrip_kernel(cards, rnd, blob, out_idx, out_cards):  # type: ignore[no-untyped-def]
    for i in range(cards.shape[0]):
        out_idx[i] = index_hand(cards[i], rnd, blob)
        unindex_hand(out_idx[i], rnd, blob, out_cards[i])


def test_kernels_callable_from_numba(holdem: HandIndexer) -> None:
    rng = np.random.default_rng(11)
    hands = rng.random((5000, 52)).argsort(axis=1)[:, :5].astype(np.int8)
    out_idx = np.empty(len(hands), dtype=np.int64)
    out_cards = np.empty_like(hands)
    _roundtrip_kernel(hands, 1, holdem.tables.blob, out_idx, out_cards)
    np.testing.assert_array_equal(out_idx, holdem.index(hands, 1))
    np.testing.assert_array_equal(out_cards, holdem.unindex(out_idx, 1))
    bad = hands[:4].copy()
    bad[0, 0], bad[1, 4], bad[2, 1], bad[3, 2] = 52, -1, 127, bad[3, 0]
    _roundtrip_kernel(bad, 1, holdem.tables.blob, out_idx[:4], out_cards[:4])
    np.testing.assert_array_equal(out_idx[:4], [-2, -2, -2, -1])


# --- long checks -----------------------------------------------------------------------------


@pytest.mark.slow
def test_every_turn_round_trips(holdem: HandIndexer) -> None:
    step = 5_000_000
    for start in range(0, holdem.size(2), step):
        indices = np.arange(start, min(start + step, holdem.size(2)), dtype=np.int64)
        np.testing.assert_array_equal(holdem.index(holdem.unindex(indices, 2), 2), indices)


@pytest.mark.slow
def test_every_five_card_board() -> None:
    indexer = HandIndexer((5,))
    boards = np.array(list(itertools.combinations(range(52), 5)), dtype=np.int64)
    keys = canonical_keys(boards, (5,), 13, 4)
    indices = indexer.index(boards)
    assert len(np.unique(keys)) == indexer.size(0) == 134_459
    assert np.unique(np.stack([keys, indices]), axis=1).shape[1] == indexer.size(0)
