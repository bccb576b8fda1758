"""Hearts: rules, whole games, OpenSpiel's hearts, the rule-based agent, the FALCON action set.

OpenSpiel (2.0.2, `games/hearts/hearts.{h,cc}`) cross-check, as worked out from its source:

- Cards are `rank * 4 + suit` with suits C, D, H, S (0..3), ours `suit * 13 + rank` with suits
  c, d, s, h: `to_os` / `from_os` below (checked against `action_to_string` for all 52).
- The first chance action is the pass direction (0 "No Pass", 1 Left, 2 Across, 3 Right; with
  `pass_cards=False` only 0 is legal). Then 52 chance actions deal the named card to seat
  `(cards dealt so far) % 4`, so the hands are dealt round-robin. With passing, seats 0..3 then
  each pass three cards; seat p's cards go to `(p + dir) % 4`. Ours: 1 left (p + 1),
  2 right (p + 3), 3 across (p + 2), so our direction d maps to OpenSpiel's `OS_PASS[d]`.
- Options: pass_cards = (passing != 0), must_break_hearts = must_break_hearts,
  no_pts_on_first_trick = no_points_first_trick, qs_breaks_hearts = True (ours always),
  can_lead_any_club = False (our two_clubs_leads = True; our "seat 0 leads anything" has no
  OpenSpiel counterpart), can_lead_hearts_instead_of_qs = False, jd_bonus = False,
  avoid_all_tricks_bonus = False.
- OpenSpiel always applies shooting the moon (whoever takes every trick with points gets -26,
  the others +26) and returns `26 - points`: so `our points with moon=True == 26 - returns`
  (the shooter's return is 26, the others' 0).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from gameforge.engines.hearts.actions import (
    ACTION_NAMES,
    N_ACTIONS,
    N_PERCEPTION,
    action_card,
    fallback_card,
    perception,
    role_range,
    valid_actions,
)
from gameforge.engines.hearts.agents import MONTE_CARLO
from gameforge.engines.hearts.game import (
    HEARTS,
    QUEEN_SPADES,
    RANDOM,
    RULE_BASED,
    Options,
    apply_passing,
    card_name,
    card_points,
    deal,
    final_points,
    first_leader,
    legal_mask,
    parse_hand,
    pass_cards,
    rule_based_card,
    trick_points,
    trick_winner,
)
from gameforge.engines.hearts.play import LOG_WIDTH, NO_LOG, NO_QS, play_games

DEFAULT = Options().array()
MOON = Options(moon=True)
# Log rows: game, seat, trick, [position,] card, then the perception values.
FEEL_COL = LOG_WIDTH - N_PERCEPTION
CARD_COL = FEEL_COL - 1


# ---------------------------------------------------------------------------------------------
# Helpers.


def card(name: str) -> int:
    return parse_hand(name).bit_length() - 1


def cards_of(mask: int) -> set[int]:
    return {c for c in range(52) if (int(mask) >> c) & 1}


def names(mask: int) -> set[str]:
    return {card_name(c) for c in cards_of(mask)}


def S(text: str) -> set[str]:
    return set(text.split())


def trick_of(text: str) -> tuple[np.ndarray, int]:
    ids = [card(t) for t in text.split()]
    trick = np.zeros(4, np.int64)
    trick[: len(ids)] = ids
    return trick, len(ids)


def legal(hand: str, trick_text: str = "", trick_no: int = 5, broken: bool = False, opts=DEFAULT):
    trick, n = trick_of(trick_text)
    return names(legal_mask(parse_hand(hand), trick, n, trick_no, broken, opts))


def is_point(c: int) -> bool:
    return c // 13 == HEARTS or c == QUEEN_SPADES


def games(seed, kinds, options, n, sims=50, first_game=0):
    points = np.zeros((n, 4), np.int64)
    kinds = np.asarray(kinds, np.int64)
    play_games(seed, first_game, kinds, options.array(), sims, points, NO_LOG, NO_QS)
    return points


def direction_of(options: Options, game: int) -> int:
    """Our pass direction of a game: 1 left, 2 right, 3 across, 0 hold; 4 cycles by game."""
    return options.passing if options.passing < 4 else (1, 2, 3, 0)[game % 4]


@dataclass
class Step:
    """One logged decision with the state tracked here, independently of the engine."""

    seat: int
    trick_no: int
    pos: int
    leader: int
    hand: int
    trick: np.ndarray
    played: int  # every card played so far, the current trick's included
    broken: bool
    voids: np.ndarray
    taken: np.ndarray
    card: int
    feel: np.ndarray


@dataclass
class Game:
    dealt: np.ndarray  # before passing
    direction: int
    steps: list[Step]
    points: list[int]


def replay(seed: int, kinds, options: Options, n: int, sims: int = 50) -> list[Game]:
    """Play `n` logged games and rebuild every decision; checks the engine's bookkeeping."""
    opts = options.array()
    points = np.zeros((n, 4), np.int64)
    log = np.zeros((52 * n, LOG_WIDTH), np.float32)
    qs = np.full((n, 2), -1, np.int64)
    rows = play_games(seed, 0, np.asarray(kinds, np.int64), opts, sims, points, log, qs)
    assert rows == 52 * n
    out = []
    for g in range(n):
        dealt = np.zeros(4, np.int64)
        deal(seed, g, dealt)
        assert sorted(c for h in dealt for c in cards_of(h)) == list(range(52))
        assert all(len(cards_of(h)) == 13 for h in dealt)
        hands = dealt.copy()
        direction = direction_of(options, g)
        apply_passing(hands, direction)
        hands = [int(h) for h in hands]
        leader = next(p for p in range(4) if hands[p] & 1) if options.two_clubs_leads else 0
        played, broken = 0, False
        taken = np.zeros(4, np.int64)
        voids = np.zeros(4, np.int64)
        qs_taker = None
        steps = []
        for t in range(13):
            trick = np.zeros(4, np.int64)
            for i in range(4):
                row = log[52 * g + 4 * t + i]
                p = (leader + i) % 4
                assert (int(row[0]), int(row[1]), int(row[2])) == (g, p, t)
                if CARD_COL == 4:
                    assert int(row[3]) == i
                c = int(row[CARD_COL])
                assert (hands[p] >> c) & 1
                steps.append(
                    Step(p, t, i, leader, hands[p], trick.copy(), played, broken, voids.copy(),
                         taken.copy(), c, row[FEEL_COL:].copy())
                )  # fmt: skip
                if i > 0 and c // 13 != trick[0] // 13:
                    voids[p] |= 1 << (trick[0] // 13)
                trick[i] = c
                hands[p] &= ~(1 << c)
                played |= 1 << c
                broken = broken or is_point(c)
            led = [c for c in trick if c // 13 == trick[0] // 13]
            winner = (leader + list(trick).index(max(led))) % 4
            taken[winner] += sum(13 if c == QUEEN_SPADES else c // 13 == HEARTS for c in trick)
            if QUEEN_SPADES in trick:
                qs_taker = [winner, t]
            leader = winner
        assert sum(taken) == 26
        expected = taken.tolist()
        if options.moon and 26 in expected:
            expected = [0 if x == 26 else 26 for x in expected]
        assert points[g].tolist() == expected, g
        assert qs[g].tolist() == qs_taker, g
        out.append(Game(dealt, direction, steps, expected))
    return out


def legal_of(step: Step, opts: np.ndarray) -> int:
    return legal_mask(step.hand, step.trick, step.pos, step.trick_no, step.broken, opts)


# ---------------------------------------------------------------------------------------------
# 1. Rules on hand-built cases.


def test_card_encoding():
    assert card("2c") == 0 and card("Qs") == QUEEN_SPADES == 36 and card("Ah") == 51
    assert card("Ad") == 25 and card("2s") == 26 and card("2h") == 39
    assert [card_name(c) for c in (0, 12, 13, 36, 51)] == ["2c", "Ac", "2d", "Qs", "Ah"]


def test_two_clubs_leads_the_first_trick():
    assert legal("5c 2c Kd Ah", trick_no=0) == S("2c")
    assert legal("5c 2c Kd Ah 2h", trick_no=0, broken=True) == S("2c")
    no_rule = Options(two_clubs_leads=False).array()
    assert legal("5c 2c Kd Ah", trick_no=0, opts=no_rule) == S("5c 2c Kd")


def test_follow_suit_when_able():
    assert legal("3c 9c Ad Qs Ah", "Kc") == S("3c 9c")
    assert legal("3c 9c Ad Qs Ah", "Ks 2s", broken=True) == S("Qs")
    assert legal("3c 9c Ad Qs Ah", "4h 9h", broken=True) == S("Ah")
    assert legal("3c 9c Ad Qs Ah", "2c 3c", trick_no=0) == S("3c 9c")
    # void after the first trick: anything, points included, broken or not
    assert legal("3c 9c Qs Ah", "Kd") == S("3c 9c Qs Ah")
    assert legal("3c 9c Qs Ah", "Kd 2d 5d", trick_no=12) == S("3c 9c Qs Ah")


def test_no_points_on_the_first_trick():
    assert legal("Ad Qs Ah 2h", "2c", trick_no=0) == S("Ad")
    assert legal("Ad Qs Ah 2h 3s", "2c 5c Kc", trick_no=0) == S("Ad 3s")
    assert legal("Qs Ah 2h 5s", "2c", trick_no=0) == S("5s")
    assert legal("Qs Ah 2h", "2c", trick_no=0) == S("Qs Ah 2h")  # only point cards
    assert legal("Ah 2h", "2c 3c", trick_no=0) == S("Ah 2h")
    off = Options(no_points_first_trick=False).array()
    assert legal("Ad Qs Ah 2h", "2c", trick_no=0, opts=off) == S("Ad Qs Ah 2h")
    assert legal("Ad Qs Ah 2h", "7c", trick_no=1) == S("Ad Qs Ah 2h")


def test_hearts_cannot_be_led_before_broken():
    assert legal("Ah 2h 3d Qs", broken=False) == S("3d Qs")
    assert legal("Ah 2h", broken=False) == S("Ah 2h")  # only hearts held
    assert legal("Ah 2h 3d Qs", broken=True) == S("Ah 2h 3d Qs")
    off = Options(must_break_hearts=False).array()
    assert legal("Ah 2h 3d Qs", broken=False, opts=off) == S("Ah 2h 3d Qs")


def test_a_heart_or_the_queen_of_spades_breaks_hearts_in_games():
    """In whole games a heart or Q♠ breaks hearts (perception 13 is the engine's flag), and a
    heart is led with other suits in hand only once broken; seen after Q♠ alone too."""
    after_queen_only = 0
    for game in replay(11, [RANDOM] * 4, Options(), 150):
        for st in game.steps:
            assert st.feel[13] == float(st.broken)
            assert (st.hand >> st.card) & 1
            assert (legal_of(st, DEFAULT) >> st.card) & 1
            holds_other = st.hand & ~(((1 << 13) - 1) << 39)
            if st.pos == 0 and st.card // 13 == HEARTS and holds_other:
                assert st.broken
                hearts_played = st.played & (((1 << 13) - 1) << 39)
                if hearts_played == 0:
                    assert (st.played >> QUEEN_SPADES) & 1
                    after_queen_only += 1
    assert after_queen_only > 0


@pytest.mark.parametrize(
    "text, leader, winner",
    [
        ("5c Ac Kd 2c", 2, 3),
        ("2c As Ah Kd", 1, 1),  # off-suit cards never win, whatever their ids
        ("Td Jd 3d Qd", 0, 3),
        ("Qs Ks 2h As", 3, 2),
        ("2h 3h Ac As", 0, 1),
        ("9h 2h Ah Th", 1, 3),
    ],
)
def test_trick_winner(text, leader, winner):
    trick, n = trick_of(text)
    assert n == 4 and trick_winner(trick, leader) == winner


def test_trick_and_card_points():
    trick, _ = trick_of("Qs 2h Ah 3c")
    assert [trick_points(trick, n) for n in range(5)] == [0, 13, 14, 15, 15]
    assert trick_points(trick_of("2c 3c 4c 5c")[0], 4) == 0
    assert trick_points(trick_of("Ks As Jh Th")[0], 4) == 2
    expected = [13 if c == QUEEN_SPADES else (1 if c >= 39 else 0) for c in range(52)]
    assert [card_points(c) for c in range(52)] == expected
    assert sum(expected) == 26


def test_final_points_and_moon():
    out = np.zeros(4, np.int64)
    for taken, off, on in [
        ([0, 26, 0, 0], [0, 26, 0, 0], [26, 0, 26, 26]),
        ([13, 13, 0, 0], [13, 13, 0, 0], [13, 13, 0, 0]),
        ([25, 1, 0, 0], [25, 1, 0, 0], [25, 1, 0, 0]),
    ]:
        final_points(np.array(taken, np.int64), DEFAULT, out)
        assert out.tolist() == off
        final_points(np.array(taken, np.int64), MOON.array(), out)
        assert out.tolist() == on


def test_pass_cards_and_directions():
    assert names(pass_cards(parse_hand("Qs As Ks Ah 2c 3d"))) == S("Qs As Ks")
    assert names(pass_cards(parse_hand("Ah Kh 2h 3h Ac 4s"))) == S("Ah Kh 3h")
    assert names(pass_cards(parse_hand("Ks 5h 2c Ad Jc"))) == S("Ks 5h Ad")
    dealt = np.zeros(4, np.int64)
    deal(3, 0, dealt)
    given = [pass_cards(int(h)) for h in dealt]
    for direction, shift in ((1, 1), (2, 3), (3, 2)):
        hands = dealt.copy()
        apply_passing(hands, direction)
        for p in range(4):
            src = (p - shift) % 4
            assert int(hands[p]) == (int(dealt[p]) & ~given[p]) | given[src]
    hands = dealt.copy()
    apply_passing(hands, 0)
    assert hands.tolist() == dealt.tolist()


# ---------------------------------------------------------------------------------------------
# 2. Whole-game invariants.


@pytest.mark.parametrize("passing", [0, 1, 2, 3, 4])
def test_points_sum_to_26(passing):
    options = Options(passing=passing)
    for seed, kinds, n in [
        (passing, [RANDOM] * 4, 400),
        (passing + 10, [RULE_BASED] * 4, 400),
        (passing + 20, [RULE_BASED, RANDOM, RULE_BASED, RANDOM], 400),
        (passing + 30, [MONTE_CARLO, RANDOM, RULE_BASED, RANDOM], 30),
    ]:
        points = games(seed, kinds, options, n)
        assert (points.sum(axis=1) == 26).all()
        assert points.min() >= 0 and points.max() <= 26


def test_moon_rule_in_games():
    kinds = [RANDOM] * 4
    off = games(5, kinds, Options(), 3000)
    on = games(5, kinds, MOON, 3000)
    moon = (off == 26).any(axis=1)
    assert moon.sum() >= 5  # random players shoot the moon now and then (~1%)
    shooter = off[moon].argmax(axis=1)
    expected = np.where(np.arange(4)[None, :] == shooter[:, None], 0, 26)
    assert (on[moon] == expected).all()
    assert (on[~moon] == off[~moon]).all()
    assert set(on[moon].sum(axis=1)) == {78}


def test_same_seed_same_games():
    for kinds in ([RANDOM] * 4, [MONTE_CARLO, RULE_BASED, RANDOM, RULE_BASED]):
        a = games(42, kinds, Options(passing=4), 40)
        b = games(42, kinds, Options(passing=4), 40)
        assert (a == b).all()
        assert not (a == games(43, kinds, Options(passing=4), 40)).all()


def test_first_game_offsets_equal_one_call():
    kinds = [MONTE_CARLO, RANDOM, RULE_BASED, RANDOM]
    options = Options(passing=4)
    whole = games(7, kinds, options, 24)
    parts = [
        games(7, kinds, options, hi - lo, first_game=lo) for lo, hi in ((0, 5), (5, 13), (13, 24))
    ]
    assert (np.concatenate(parts) == whole).all()
    assert (games(7, kinds, options, 3, first_game=21) == whole[21:]).all()


# ---------------------------------------------------------------------------------------------
# 3. OpenSpiel's hearts.

OS_SUIT = (0, 1, 3, 2)  # ours c, d, s, h -> OpenSpiel C, D, H, S (and back: the map is its inverse)
OS_PASS = {0: 0, 1: 1, 2: 3, 3: 2}  # ours hold, left, right, across -> OpenSpiel's PassDir


def to_os(c: int) -> int:
    return (c % 13) * 4 + OS_SUIT[c // 13]


def from_os(a: int) -> int:
    return OS_SUIT[a % 4] * 13 + a // 4


def os_game(pyspiel, options: Options):
    assert options.two_clubs_leads
    return pyspiel.load_game(
        "hearts",
        {
            "pass_cards": options.passing != 0,
            "must_break_hearts": options.must_break_hearts,
            "no_pts_on_first_trick": options.no_points_first_trick,
            "qs_breaks_hearts": True,
            "can_lead_any_club": False,
            "can_lead_hearts_instead_of_qs": False,
            "jd_bonus": False,
            "avoid_all_tricks_bonus": False,
        },
    )


def os_start(game, dealt, direction: int):
    """OpenSpiel's state after dealing `dealt` (and passing our pass_cards)."""
    state = game.new_initial_state()
    assert state.is_chance_node()
    state.apply_action(OS_PASS[direction])
    per_seat = [sorted(cards_of(h)) for h in dealt]
    for k in range(13):
        for p in range(4):
            assert state.is_chance_node()
            state.apply_action(to_os(per_seat[p][k]))
    if direction:
        for p in range(4):
            assert state.current_player() == p
            for c in sorted(cards_of(pass_cards(int(dealt[p])))):
                state.apply_action(to_os(c))
    return state


def os_legal(state) -> set[int]:
    return {from_os(a) for a in state.legal_actions()}


def test_openspiel_card_encoding():
    pyspiel = pytest.importorskip("pyspiel")
    state = os_game(pyspiel, Options()).new_initial_state()
    state.apply_action(0)
    for c in range(52):
        assert from_os(to_os(c)) == c
        assert state.action_to_string(to_os(c)) == card_name(c)[0] + card_name(c)[1].upper()


OPTION_SETS = [
    MOON,
    Options(moon=True, must_break_hearts=False),
    Options(moon=True, no_points_first_trick=False),
    Options(moon=True, must_break_hearts=False, no_points_first_trick=False),
]


@pytest.mark.parametrize("options", OPTION_SETS)
def test_openspiel_random_games(options):
    """Random cards from OpenSpiel's legal set: the same legal sets and the same scores."""
    pyspiel = pytest.importorskip("pyspiel")
    game = os_game(pyspiel, options)
    opts = options.array()
    rng = np.random.default_rng(2024)
    for _ in range(70):
        deck = rng.permutation(52)
        hands = np.array([sum(1 << int(c) for c in deck[13 * p : 13 * p + 13]) for p in range(4)])
        state = os_start(game, hands, 0)
        leader = first_leader(hands, opts)
        hands = [int(h) for h in hands]
        taken = np.zeros(4, np.int64)
        broken = False
        for t in range(13):
            trick = np.zeros(4, np.int64)
            for i in range(4):
                p = (leader + i) % 4
                assert state.current_player() == p
                allowed = os_legal(state)
                assert cards_of(legal_mask(hands[p], trick, i, t, broken, opts)) == allowed
                c = int(rng.choice(sorted(allowed)))
                state.apply_action(to_os(c))
                trick[i] = c
                hands[p] &= ~(1 << c)
                broken = broken or is_point(c)
            leader = trick_winner(trick, leader)
            taken[leader] += trick_points(trick, 4)
        assert state.is_terminal()
        points = np.zeros(4, np.int64)
        final_points(taken, opts, points)
        assert points.tolist() == [26 - r for r in state.returns()]


@pytest.mark.parametrize(
    "kinds, options, n, seed",
    [
        ([RANDOM] * 4, MOON, 120, 1),
        ([RULE_BASED, RANDOM, MONTE_CARLO, RULE_BASED], MOON, 40, 2),
        ([RANDOM, RULE_BASED, RANDOM, RULE_BASED], Options(moon=True, passing=4), 60, 3),
    ],
)
def test_openspiel_replays_engine_games(kinds, options, n, seed):
    """play_games' logged games replayed in OpenSpiel: legal sets, every card, the scores."""
    pyspiel = pytest.importorskip("pyspiel")
    game = os_game(pyspiel, options)
    opts = options.array()
    for g in replay(seed, kinds, options, n):
        state = os_start(game, g.dealt, g.direction)
        for st in g.steps:
            assert state.current_player() == st.seat
            allowed = os_legal(state)
            assert cards_of(legal_of(st, opts)) == allowed
            assert st.card in allowed
            state.apply_action(to_os(st.card))
        assert state.is_terminal()
        assert g.points == [26 - r for r in state.returns()]


def test_openspiel_moon_game():
    """A game where someone shoots the moon: OpenSpiel's returns are our moon=True points."""
    pyspiel = pytest.importorskip("pyspiel")
    off = games(5, [RANDOM] * 4, Options(), 400)
    g = int(np.flatnonzero((off == 26).any(axis=1))[0])
    game = os_game(pyspiel, MOON)
    played = replay(5, [RANDOM] * 4, MOON, g + 1)[g]
    state = os_start(game, played.dealt, 0)
    for st in played.steps:
        state.apply_action(to_os(st.card))
    shooter = int(off[g].argmax())
    assert played.points == [0 if p == shooter else 26 for p in range(4)]
    assert state.returns() == [26.0 if p == shooter else 0.0 for p in range(4)]


# ---------------------------------------------------------------------------------------------
# 4. The rule-based agent.


def rb(legal_text: str, trick_text: str = "", played_text: str = "") -> str:
    trick, n = trick_of(trick_text)
    played = parse_hand(played_text) | parse_hand(trick_text)
    return card_name(rule_based_card(parse_hand(legal_text), trick, n, played))


def test_rule_based_leads_low_and_avoids_the_queen():
    assert rb("5c 3d 9s Ah") == "3d"
    assert rb("3d 3c 7h") == "3c"  # equal ranks: clubs first
    assert rb("Qs Ks Ah") == "Ks"
    assert rb("Qs 2h", played_text="Ah") == "2h"
    assert rb("Qs") == "Qs"


def test_rule_based_plays_high_on_a_pointless_trick():
    assert rb("2c 7c Jc", "5c 9c") == "Jc"
    assert rb("2c 7c Ac", "5c Kc 3c") == "Ac"
    assert rb("Qs 5s", "3s") == "5s"  # not Q♠
    assert rb("Qs Ks 5s", "3s") == "Ks"
    assert rb("Qs", "3s") == "Qs"


def test_rule_based_ducks_under_points():
    assert rb("3d 6d 9d Kd", "8d Ah") == "6d"
    assert rb("3d 9d Kd", "5d 2h") == "3d"
    assert rb("9d Kd", "2d 5h") == "Kd"  # every card wins: the highest
    assert rb("3d 6d 9d Kd", "8d Ah Td") == "9d"


def test_rule_based_void_discards():
    assert rb("Qs As 2h Ac", "5d") == "Qs"
    assert rb("As Ks Ah 3c", "5d") == "As"
    assert rb("Ks Ah 3c", "5d") == "Ks"
    assert rb("Ah 3h Kc", "5d") == "Ah"
    assert rb("Kc 9s", "5d") == "Kc"
    assert rb("Tc Js", "5d") == "Js"  # highest by rank, not by id


def test_rule_based_spades_around_the_queen():
    assert rb("Qs 3s 8s", "5s As") == "Qs"  # dump Q♠ under A♠
    assert rb("Qs 2s", "Ks") == "Qs"  # under K♠
    assert rb("Qs 2s", "Js") == "2s"  # J♠ wins: keep Q♠
    # Q♠ out and not held: keep A♠/K♠ back
    assert rb("As 9s 3s", "5s") == "9s"
    assert rb("Ks 9s 3s", "5s 7s") == "9s"
    assert rb("As 9s 3s", "5s Ah") == "3s"  # points on the trick: below the winner
    assert rb("As Js", "Ts 2h") == "Js"  # every spade below Q♠ wins: the highest of them
    # Q♠ gone (played earlier, or on this trick): play high
    assert rb("As 9s 3s", "5s", played_text="Qs") == "As"
    assert rb("As 9s 3s", "5s Qs") == "9s"  # Q♠ on the trick wins: the highest below it
    assert rb("As Ks", "5s") == "As"  # nothing below Q♠ held


def test_rule_based_agent_in_games():
    """Every rule-based decision of play_games is rule_based_card on the tracked state."""
    for game in replay(21, [RULE_BASED, RANDOM, RULE_BASED, RULE_BASED], Options(), 100):
        for st in game.steps:
            if st.seat != 1:
                lg = legal_of(st, DEFAULT)
                assert st.card == rule_based_card(lg, st.trick, st.pos, st.played)


# ---------------------------------------------------------------------------------------------
# 5. The FALCON action set and perception.


def act(name, hand, trick_text="", played_text="", trick_no=5, broken=True, voids=(0, 0, 0, 0)):
    h = parse_hand(hand)
    trick, n = trick_of(trick_text)
    played = parse_hand(played_text) | parse_hand(trick_text)
    lg = legal_mask(h, trick, n, trick_no, broken, DEFAULT)
    vo = np.array(voids, np.int64)
    c = action_card(ACTION_NAMES.index(name), h, lg, trick, n, played, vo, 0)
    assert c == -1 or (lg >> c) & 1
    return card_name(c) if c >= 0 else None


def test_action_names_and_roles():
    assert len(ACTION_NAMES) == N_ACTIONS == 29
    assert ACTION_NAMES[0] == "par1" and ACTION_NAMES[17] == "par18"
    assert ACTION_NAMES[18] == "ch1" and ACTION_NAMES[23] == "ch'1" and ACTION_NAMES[28] == "ch'6"
    h = parse_hand("3d 8d 2c")
    assert tuple(role_range(h, *trick_of(""))) == (0, 18)
    assert tuple(role_range(h, *trick_of("Td"))) == (18, 23)
    assert tuple(role_range(h, *trick_of("Ts Js"))) == (23, 29)


def test_lead_actions_spades_and_hearts():
    assert act("par1", "2s 7s Js As 4c") == "2s"
    assert act("par1", "4c 9d") is None
    assert act("par2", "2s 7s Js Qs As 4c") == "Js"
    assert act("par2", "Qs Ks As 4c") is None
    assert act("par3", "3h 9h 4c") == "9h"
    assert act("par3", "3h 9h Jh 4c") is None  # more than 2 hearts
    assert act("par3", "3h 9h 4c", broken=False) is None  # hearts may not be led yet
    assert act("par3", "2h 9h", broken=False) == "9h"  # only hearts: they may
    assert act("par3", "4c 5d") is None
    assert act("par7", "3h 9h Ah 4c") == "9h"  # below K♥, the strongest unseen heart
    assert act("par7", "3h 9h Ah 4c", played_text="Kh Qh Jh Th") == "3h"
    assert act("par7", "3h 9h Ah 4c", broken=False) is None
    assert act("par7", "Ah 4c", played_text="2h 3h 4h 5h 6h 7h 8h 9h Th Jh Qh Kh") is None
    assert act("par15", "3h 9h Ah 4c") == "Ah"
    assert act("par15", "3h 9h Ah 4c", broken=False) is None


def test_lead_actions_exit_clubs():
    assert act("par4", "4c 8c 2d 5d") == "8c"  # 2 clubs, 11 unseen: fewer than average
    assert act("par4", "4c Ac 2d") == "4c"  # below K♣
    assert act("par4", "4c 8c 2d", played_text="2c 3c 5c 6c") == "8c"  # 2 < 7 / 3
    assert act("par4", "4c 8c 2d", played_text="2c 3c 5c 6c 7c") is None  # 2 = 6 / 3
    assert act("par4", "4c 8c 9c Tc 2d") is None  # 4 > 9 / 3
    assert act("par4", "Kc Ac 2d", played_text="2c 3c 4c 5c 6c 7c") is None  # nothing below Q♣
    assert act("par4", "2d 3d") is None


def test_lead_actions_other_exits_cash_and_length():
    assert act("par5", "3d 9d 2c") == "9d"
    assert act("par6", "3s 9s 2d") == "9s"
    assert act("par6", "3s 9s Ts Js 2d") is None
    assert act("par8", "4c 8c 2d") == "4c"
    assert act("par9", "4c 8d 2d") == "2d"
    assert act("par10", "3h 9h 4c") == "3h"
    assert act("par10", "3h 9h 4c", broken=False) is None
    assert act("par11", "Ac 4c 2d") == "Ac"
    assert act("par11", "Ac 4c 2d", voids=(0, 0, 1, 0)) is None  # seat 2 is void in clubs
    assert act("par11", "Ac 4c 2d", voids=(1, 2, 0, 0)) == "Ac"  # our own void does not count
    assert act("par11", "Kc 4c 2d") is None
    assert act("par11", "Kc 4c 2d", played_text="Ac") == "Kc"
    assert act("par12", "Ad 4c", voids=(0, 0, 0, 2)) is None
    assert act("par13", "2c 9c 3d Jd Kd 4s 5s 2h") == "9c"  # clubs and spades tie: clubs
    assert act("par13", "2c 9c 3d 4s 5s 2h 3h") == "3d"
    assert act("par13", "2h 3h") is None
    assert act("par14", "2c 9c 3d Jd Kd 4s") == "3d"
    assert act("par14", "2c 3h 4h 5h", broken=False) is None  # hearts may not be led yet
    assert act("par18", "9c 3d Qs 2h") == "2h"
    assert act("par18", "9c 3d Qs 2h", broken=False) is None  # names 2h, which is illegal


def test_lead_actions_queen_of_spades():
    assert act("par16", "Qs As Ks 4c") == "Qs"
    assert act("par16", "Qs As 4c", played_text="Ks") == "Qs"
    assert act("par16", "Qs 4c", played_text="As Ks") == "Qs"
    assert act("par16", "Qs As 4c") is None  # K♠ unseen
    assert act("par16", "As Ks 4c") is None
    assert act("par17", "As Ks 4c", played_text="Qs") == "As"
    assert act("par17", "Ks 4c", played_text="Qs") == "Ks"
    assert act("par17", "As Ks 4c") is None  # Q♠ not played
    assert act("par17", "Qs As Ks") is None


def test_lead_actions_on_the_first_trick_only_name_the_two_of_clubs():
    h = parse_hand("2c 5c Ks 3h Qs 2s 4d")
    trick, _ = trick_of("")
    lg = legal_mask(h, trick, 0, 0, False, DEFAULT)
    out = np.zeros(N_ACTIONS, np.int64)
    k = valid_actions(h, lg, trick, 0, 0, np.zeros(4, np.int64), 0, out)
    assert set(out.tolist()) == {-1, 0}
    assert k == int((out == 0).sum()) > 0
    assert out[ACTION_NAMES.index("par1")] == -1 and out[ACTION_NAMES.index("par8")] == 0


def test_follow_actions():
    hand = "3d 8d Jd Kd 2c As"
    assert act("ch1", hand, "Td Qd", played_text="Qs") is None  # A♠ cannot follow diamonds
    assert act("ch1", "3s As Ks 2c", "5s", played_text="Qs") == "As"
    assert act("ch1", "3s Ks 2c", "5s", played_text="Qs") == "Ks"
    assert act("ch1", "3s As Ks 2c", "5s") is None
    assert act("ch2", hand, "Td Qd") == "Jd"
    assert act("ch2", hand, "Td As") == "8d"  # off-suit A♠ does not win
    assert act("ch2", "Kd Ad", "Td Qd") is None
    assert act("ch3", hand, "Td Qd") == "Kd"
    assert act("ch4", hand, "Td Qd") == "8d"
    assert act("ch4", "6d 7d Jd", "Td") == "7d"
    assert act("ch4", "6d Qd Jd", "Td 2d") == "Jd"
    assert act("ch4", "3d 6d Qd Kd Ad", "Td") is None
    assert act("ch5", hand, "Td Qd") == "3d"


def test_void_actions():
    hand = "Qs As Ks 4h Jh 3d Kd 9s"
    assert act("ch'1", hand, "5c") == "Qs"
    assert act("ch'1", "As 4h", "5c") is None
    assert act("ch'2", hand, "5c") == "As"
    assert act("ch'2", "Ks 4h", "5c") == "Ks"
    assert act("ch'2", "Qs 4h", "5c") is None
    assert act("ch'3", hand, "5c") == "Jh"
    assert act("ch'3", "Qs 3d", "5c") is None
    assert act("ch'4", hand, "5c") == "Kd"
    assert act("ch'4", "3d 7d Kd 4h", "5c") is None  # 3 diamonds
    assert act("ch'5", "2c 9c Qs", "5d") == "9c"
    assert act("ch'5", "2c 9c Jc", "5d") is None
    assert act("ch'5", "Qs 4h", "5d") is None
    assert act("ch'6", hand, "5c") == "Jh"
    assert act("ch'6", "9s As 3d", "5c") == "As"
    assert act("ch'6", "3d Jd", "5c") == "Jd"
    assert act("ch'6", "3c", "5d") == "3c"


def test_void_actions_on_the_first_trick_are_legal():
    hand = "Qs Ah 5d 9s As"
    first = {n: act(n, hand, "2c", trick_no=0, broken=False) for n in ACTION_NAMES[23:]}
    # Q♠ and hearts may not be played: the actions naming them do not apply (ch'6 names A♥).
    assert first == {
        "ch'1": None,
        "ch'2": "As",
        "ch'3": None,
        "ch'4": "5d",
        "ch'5": None,
        "ch'6": None,
    }
    assert act("ch'1", "Qs Ah", "2c", trick_no=0) == "Qs"  # only point cards: anything


def test_actions_in_games_are_legal_and_in_role():
    out = np.zeros(N_ACTIONS, np.int64)
    applied = np.zeros(N_ACTIONS, np.int64)
    for game in replay(31, [MONTE_CARLO, RANDOM, RULE_BASED, RANDOM], Options(), 40):
        for st in game.steps:
            lg = legal_of(st, DEFAULT)
            k = valid_actions(st.hand, lg, st.trick, st.pos, st.played, st.voids, st.seat, out)
            lo, hi = role_range(st.hand, st.trick, st.pos)
            assert (out[:lo] == -1).all() and (out[hi:] == -1).all()
            named = [int(c) for c in out if c >= 0]
            assert k == len(named) and all((lg >> c) & 1 for c in named)
            applied += out >= 0
            if st.seat == 0:  # Monte Carlo plays a named card, or the fallback when none
                assert st.card in named if named else st.card == fallback_card(lg)
    assert (applied > 0).all()  # every action applies somewhere


def test_perception_on_a_hand_built_state():
    hand = parse_hand("Jc 9d Ad 3s Ks Ah 7h 2h Qh Kh")
    trick, n = trick_of("Kd Qs")
    played = parse_hand("3c 4c 5c 6c 7c 8c 9c Tc 2d 3d 4d 5d Kd Qs")
    voids = np.array([0, 0, 0, 1 << 1], np.int64)  # seat 3 is void in diamonds
    taken = np.array([2, 1, 5, 0], np.int64)
    out = np.full(N_PERCEPTION, -1.0)
    perception(out, hand, trick, n, 3, played, True, taken, voids, 1, 3)
    # me = seat 1 at position 2 of a trick led by seat 3: seat 2 is still to play, not void
    expected = [3 / 12, 2 / 3, 1 / 13, 2 / 13, 2 / 13, 5 / 13, 4 / 13, 6 / 13, 10 / 13, 8 / 13,
                1, 0, 0.5, 1, 13 / 16, 1 / 26, 5 / 26, 0, 11 / 12, 1 / 13, 0, 1]  # fmt: skip
    assert out == pytest.approx(expected)
    perception(out, hand, trick, n, 3, played, True, taken, voids, 1, 0)
    expected[20] = 1 / 3  # led by seat 0: seat 3 still to play and void in diamonds
    assert out == pytest.approx(expected)
    # void myself: only the players after me count (seat 0 already played, seat 2 has not)
    void_hand = parse_hand("Jc 3s Ks Ah 7h 2h Qh Kh")
    perception(out, void_hand, trick, n, 3, played, True, taken, np.array([2, 2, 2, 0]), 1, 3)
    assert out[20] == pytest.approx(1 / 3) and out[19] == 0 and out[3] == 0
    lead, _ = trick_of("")
    perception(out, hand, lead, 0, 4, played, False, taken, voids, 1, 1)
    assert out[0] == pytest.approx(4 / 12) and out[1] == 0 and out[13] == 0 and out[14] == 0
    assert (out[17:] == 0).all()


def test_perception_in_games():
    for game in replay(41, [RANDOM] * 4, Options(), 60):
        for st in game.steps:
            f = st.feel
            assert f.shape == (N_PERCEPTION,) and (f >= 0).all() and (f <= 1).all()
            assert f[0] == pytest.approx(st.trick_no / 12) and f[1] == pytest.approx(st.pos / 3)
            assert f[10] == (st.played >> QUEEN_SPADES) & 1
            assert f[11] == (st.hand >> QUEEN_SPADES) & 1
            assert f[15] == pytest.approx(st.taken[st.seat] / 26)
            assert sum(f[2:6]) * 13 == pytest.approx(13 - st.trick_no)


# ---------------------------------------------------------------------------------------------
# 6. Agents.


def test_rule_based_beats_random():
    points = games(8, [RULE_BASED, RANDOM, RANDOM, RANDOM], Options(), 2000)
    ratio = points.mean(axis=0) / 26  # observed: 0.11 for rule-based, 0.30 for random
    assert ratio[0] < 0.15
    assert ratio[1:].min() > 0.27


def test_monte_carlo_beats_rule_based():
    """The paper: Monte Carlo > rule-based. Observed over 1,000 games (seeds 0..5): MC 0.20-0.23
    of the points, the rule-based seats 0.26; rule-based in seat 0 on the same deals 0.23-0.27."""
    mc = games(4, [MONTE_CARLO, RULE_BASED, RULE_BASED, RULE_BASED], Options(), 1000, sims=200)
    rb_only = games(4, [RULE_BASED] * 4, Options(), 1000)
    mc_ratio = mc[:, 0].mean() / 26
    assert mc_ratio < mc[:, 1:].mean() / 26 - 0.02
    assert mc_ratio < rb_only[:, 0].mean() / 26
    assert mc_ratio < 0.25
