"""AIVAT baselines for decks too big to enumerate: showdown equity of the cards dealt, scaled by
what the chips at stake at each betting state have been seen to be.

`engines.poker.aivat` corrects a hand's chips with a value estimate after every card dealt and
every decision of the known player; any estimate keeps the result unbiased, and the closer it is
to the true expected chips, the more variance it removes. On Kuhn and Leduc `ExactValues`
enumerates the truth. On hold'em decks it cannot, and `MadeHandValues` (the made hand's sign
times the chips in) knows nothing of the cards still to come or of the betting still to happen.
`FittedValues` estimates both:

- **Equity** (`Equity`): the known seat's showdown equity 2 P(win) + P(tie) - 1 with both hole
  cards known, over the cards not yet dealt: exact when one card is missing (every turn-to-river
  card), otherwise averaged over `samples` fixed permutations of the deck (each completes the deal
  with its first cards not yet used). A fixed function of the cards, so still any baseline.
  Chance events ask it for every outcome at once (17,296 flops of full hold'em), in numba.
- **Chips at stake** (`FittedValues.fit`): per betting state, the known seat's chips are fitted
  as a + b * equity by least squares on hands played beforehand (never the hands evaluated)
  between the known strategy and a reference opponent. States are pooled at three levels, each
  shrunk towards the next coarser one by a pseudo-count (`prior`): the exact betting state, then
  (round, chips each seat has in: bucketed on a log scale for no-limit), then the round. Terminal
  states take their exact payoff.

Fitting against the known strategy itself (self-play) uses nothing of the opponent; fitting
against a model of the opponent (the ACPC example player, say) tells the baseline how big pots
get against it. Either is unbiased; `bench/aivat.py` measures both.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from itertools import combinations
from math import comb, log2
from typing import Any

import numpy as np
from numba import njit

from gameforge.engines.poker.aivat import (
    Action,
    AgentPolicy,
    Betting,
    Cards,
    Deal,
    Hand,
    LimitBetting,
    Policy,
    State,
    deal_groups,
    groups_needed,
    next_outcomes,
    sample_hands,
    showdown_payoff,
)
from gameforge.engines.poker.evaluator import EvalTables, hand_value
from gameforge.engines.poker.match import Agent
from gameforge.engines.poker.mccfr import lookup_bucket, lossless_tables, showdown_tables

KNOWN_HOLE, OTHER_HOLE, BOARD = 0, 1, 2  # which part of the deal a chance outcome fills
LEVELS = 4  # pooling levels of a fitted value, finest first
EXPECTED_MEMO = 1_000_000  # exact expectations kept before the memo is dropped
KEEP = 32  # chance events whose outcome equities `Equity.after` keeps
# RoundValues walks chance exactly from where the events left have this many outcomes together
# (all of Kuhn and Leduc, hold'em's river)
EXACT_OUTCOMES = 200


@njit(cache=True, nogil=True)
def _showdown_sign(rows: np.ndarray, n: int, ev: EvalTables) -> float:
    card_key, card_bit, rank_table, flush_table = ev
    a = hand_value(rows[0], n, card_key, card_bit, rank_table, flush_table)
    b = hand_value(rows[1], n, card_key, card_bit, rank_table, flush_table)
    return 1.0 if a > b else (-1.0 if a < b else 0.0)


@njit(cache=True, nogil=True)
def _next_combo(pos: np.ndarray, k: int, n: int) -> bool:
    """Advance `pos` (k increasing positions below n) to the next combination; False at the end."""
    i = k - 1
    while i >= 0 and pos[i] == n - k + i:
        i -= 1
    if i < 0:
        return False
    pos[i] += 1
    for j in range(i + 1, k):
        pos[j] = pos[j - 1] + 1
    return True


@njit(cache=True, nogil=True)
def _equity(  # noqa: PLR0913 (a kernel takes arrays and scalars)
    known: np.ndarray,
    other: np.ndarray,
    n_other: int,
    board: np.ndarray,
    n_board: int,
    num_hole: int,
    board_total: int,
    deck_size: int,
    perms: np.ndarray,
    exact: int,
    ev: EvalTables,
) -> float:
    """2 P(win) + P(tie) - 1 of `known` against `other` (its first n_other cards dealt), the
    board's first n_board cards dealt: over every completion of the board when both holes are
    dealt and there are at most `exact` completions, else over `perms`."""
    used = np.zeros(deck_size, dtype=np.bool_)
    n = num_hole + board_total
    rows = np.empty((2, n), dtype=np.int8)
    for t in range(num_hole):
        used[known[t]] = True
        rows[0, t] = known[t]
    for t in range(n_other):
        used[other[t]] = True
        rows[1, t] = other[t]
    for t in range(n_board):
        used[board[t]] = True
        rows[0, num_hole + t] = board[t]
        rows[1, num_hole + t] = board[t]
    k = board_total - n_board
    if n_other == num_hole and k == 0:
        return _showdown_sign(rows, n, ev)
    if n_other == num_hole:
        rest = np.empty(deck_size, dtype=np.int8)
        m = 0
        for c in range(deck_size):
            if not used[c]:
                rest[m] = c
                m += 1
        count = 1.0
        for t in range(k):
            count = count * (m - t) / (t + 1)
        if count <= exact:
            pos = np.arange(k)
            total = 0.0
            while True:
                for t in range(k):
                    rows[0, num_hole + n_board + t] = rest[pos[t]]
                    rows[1, num_hole + n_board + t] = rest[pos[t]]
                total += _showdown_sign(rows, n, ev)
                if not _next_combo(pos, k, m):
                    break
            return total / count
    total = 0.0
    for m in range(perms.shape[0]):
        o, b = n_other, n_board
        for t in range(deck_size):
            c = perms[m, t]
            if used[c]:
                continue
            if o < num_hole:
                rows[1, o] = c
                o += 1
            elif b < board_total:
                rows[0, num_hole + b] = c
                rows[1, num_hole + b] = c
                b += 1
            else:
                break
        total += _showdown_sign(rows, n, ev)
    return total / perms.shape[0]


@njit(cache=True, nogil=True)
def _board_event_equities(  # noqa: PLR0913 (a kernel takes arrays and scalars)
    known: np.ndarray,
    other: np.ndarray,
    board: np.ndarray,
    n_board: int,
    group: int,
    num_hole: int,
    board_total: int,
    deck_size: int,
    binom: np.ndarray,
    ev: EvalTables,
    acc: np.ndarray,
) -> None:
    """Exact equity after every outcome of a board event, by enumerating each completion of
    the board once: acc[colex rank of the outcome's positions among the cards left] sums the
    showdown signs of the completions that contain it (both holes dealt)."""
    used = np.zeros(deck_size, dtype=np.bool_)
    n = num_hole + board_total
    rows = np.empty((2, n), dtype=np.int8)
    for t in range(num_hole):
        used[known[t]] = True
        used[other[t]] = True
        rows[0, t] = known[t]
        rows[1, t] = other[t]
    for t in range(n_board):
        used[board[t]] = True
        rows[0, num_hole + t] = board[t]
        rows[1, num_hole + t] = board[t]
    rest = np.empty(deck_size, dtype=np.int8)
    m = 0
    for c in range(deck_size):
        if not used[c]:
            rest[m] = c
            m += 1
    k = board_total - n_board  # this group and every later one
    pos = np.arange(k)
    sub = np.arange(group)
    while True:
        for t in range(k):
            rows[0, num_hole + n_board + t] = rest[pos[t]]
            rows[1, num_hole + n_board + t] = rest[pos[t]]
        sign = _showdown_sign(rows, n, ev)
        for t in range(group):
            sub[t] = t
        while True:  # every `group`-subset of the completion is an outcome it follows
            rank = 0
            for t in range(group):
                rank += binom[pos[sub[t]], t + 1]
            acc[rank] += sign
            if not _next_combo(sub, group, k):
                break
        if not _next_combo(pos, k, m):
            break


@njit(cache=True, nogil=True)
def _outcome_equities(  # noqa: PLR0913 (a kernel takes arrays and scalars)
    known: np.ndarray,
    other: np.ndarray,
    n_other: int,
    board: np.ndarray,
    n_board: int,
    target: int,
    outcomes: np.ndarray,
    num_hole: int,
    board_total: int,
    deck_size: int,
    perms: np.ndarray,
    exact: int,
    ev: EvalTables,
    out: np.ndarray,
) -> None:
    """`_equity` after each outcome (a row of cards) fills the `target` part of the deal."""
    kh = known.copy()
    oh = other.copy()
    bd = board.copy()
    g = outcomes.shape[1]
    for i in range(outcomes.shape[0]):
        no, nb = n_other, n_board
        for t in range(g):
            c = outcomes[i, t]
            if target == 0:
                kh[t] = c
            elif target == 1:
                oh[t] = c
                no = g
            else:
                bd[n_board + t] = c
                nb = n_board + g
        out[i] = _equity(kh, oh, no, bd, nb, num_hole, board_total, deck_size, perms, exact, ev)


class Equity:
    """Showdown equity of the known seat given a deal in the estimator's order (its hole, the
    other hole, board groups). With both holes dealt it is exact: a single deal's over every
    completion of the board (up to `exact` of them), a board event's outcomes together by
    enumerating each completion once (up to `exact_event`: the 1.7 M of full hold'em's flop);
    otherwise (a hole still to come) over `samples` fixed permutations of the deck. Single
    deals are memoized (`clear` drops them), and the outcome arrays of the last few events."""

    def __init__(
        self,
        game: Any,
        samples: int = 256,
        seed: int = 0,
        exact: int = 5_000,
        exact_event: int = 2_000_000,
        sample_event: int = 20_000,
        event_samples: int = 8,
    ):
        self.game = game
        self.samples = samples
        self.exact, self.exact_event = exact, exact_event
        self.sample_event, self.event_samples = sample_event, event_samples
        rng = np.random.default_rng(seed)
        self.rng = np.random.default_rng([seed, 1])  # run-outs of sampled event means
        self.perms = np.array(
            [rng.permutation(game.deck_size) for _ in range(max(samples, 1))], dtype=np.int8
        )
        self.ev = showdown_tables(game)
        self.board_total = int(sum(game.num_board_cards))
        top = game.deck_size + 1
        self.binom = np.array(
            [[comb(n, k) for k in range(self.board_total + 2)] for n in range(top)], dtype=np.int64
        )
        self._one: dict[Deal, float] = {}
        self._many: dict[Deal, np.ndarray] = {}
        self._holes: dict[Deal, np.ndarray] = {}

    def clear(self) -> None:
        """Forget the memoized equities (their memory grows with the deals seen)."""
        self._one.clear()
        self._many.clear()
        self._holes.clear()

    def _parts(self, deal: Deal) -> tuple[np.ndarray, np.ndarray, int, np.ndarray, int]:
        h = self.game.num_hole_cards
        known = np.zeros(h, dtype=np.int8)
        other = np.zeros(h, dtype=np.int8)
        board = np.zeros(max(self.board_total, 1), dtype=np.int8)
        if len(deal) > 0:
            known[:] = deal[0]
        n_other = 0
        if len(deal) > 1:
            other[:] = deal[1]
            n_other = h
        cards = [c for group in deal[2:] for c in group]
        board[: len(cards)] = cards
        return known, other, n_other, board, len(cards)

    def of(self, deal: Deal) -> float:
        """Equity after `deal` (0 before any card: the deal is symmetric)."""
        if not deal:
            return 0.0
        found = self._one.get(deal)
        if found is None:
            known, other, n_other, board, n_board = self._parts(deal)
            g = self.game
            found = self._one[deal] = float(
                _equity(known, other, n_other, board, n_board, g.num_hole_cards,
                        self.board_total, g.deck_size, self.perms, self.exact, self.ev)
            )  # fmt: skip
        return found

    def after(self, deal: Deal, outcomes: Sequence[Cards]) -> np.ndarray:
        """Equity after each outcome of the chance event that follows `deal` (the outcomes of
        a deal are always the same list: `aivat.next_outcomes`)."""
        if len(deal) < 2:  # a hole event: at most one per hole of the known seat, kept
            found = self._holes.get(deal)
            if found is None:
                found = self._holes[deal] = self._after(deal, outcomes)
            return found
        found = self._many.get(deal)
        if found is None or len(found) != len(outcomes):
            found = self._after(deal, outcomes)
            if len(self._many) >= KEEP:
                del self._many[next(iter(self._many))]
            self._many[deal] = found
        return found

    def sampled(self, deal: Deal) -> bool:
        """Whether the event after `deal` is large enough that its mean is better sampled
        (`sampled_after`) than enumerated: both holes out, more board completions than
        `sample_event`."""
        if len(deal) < 2:
            return False
        out = sum(len(group) for group in deal)
        left = self.board_total - sum(len(group) for group in deal[2:])
        return comb(self.game.deck_size - out, left) > self.sample_event

    def sampled_after(self, deal: Deal, outcomes: Sequence[Cards]) -> np.ndarray:
        """Unbiased estimates of `after(deal, outcomes)`: each outcome's equity over
        `event_samples` run-outs drawn afresh (randomness independent of the cards)."""
        g = self.game
        known, other, n_other, board, n_board = self._parts(deal)
        rows = outcome_rows(self.game, deal, outcomes)
        perms = np.array(
            [self.rng.permutation(g.deck_size) for _ in range(self.event_samples)], np.int8
        )
        out = np.empty(len(outcomes))
        _outcome_equities(
            known, other, n_other, board, n_board, min(len(deal), BOARD), rows,
            g.num_hole_cards, self.board_total, g.deck_size, perms, 0, self.ev, out,
        )  # fmt: skip
        return out

    def _after(self, deal: Deal, outcomes: Sequence[Cards]) -> np.ndarray:
        g = self.game
        known, other, n_other, board, n_board = self._parts(deal)
        rows = outcome_rows(self.game, deal, outcomes)
        if len(deal) >= 2:
            used = {c for group in deal for c in group}
            rest = np.array([c for c in range(g.deck_size) if c not in used], dtype=np.int64)
            k = self.board_total - n_board
            if comb(len(rest), k) <= self.exact_event:
                group = rows.shape[1]
                acc = np.zeros(comb(len(rest), group))
                _board_event_equities(
                    known, other, board, n_board, group, g.num_hole_cards, self.board_total,
                    g.deck_size, self.binom, self.ev, acc,
                )  # fmt: skip
                pos = np.searchsorted(rest, rows)
                rank = self.binom[pos, np.arange(1, group + 1)].sum(axis=1)
                return acc[rank] / comb(len(rest) - group, k - group)
        out = np.empty(len(outcomes))
        _outcome_equities(
            known, other, n_other, board, n_board, min(len(deal), BOARD), rows,
            g.num_hole_cards, self.board_total, g.deck_size, self.perms, self.exact, self.ev, out,
        )  # fmt: skip
        return out


_POSITIONS: dict[tuple[int, int], np.ndarray] = {}


def outcome_rows(game: Any, deal: Deal, outcomes: Sequence[Cards]) -> np.ndarray:
    """`outcomes` (the next chance event's, `aivat.next_outcomes` order) as an int8 array, built
    from the cards left without reading the tuples (a flop's 17,296 of them)."""
    used = {c for group in deal for c in group}
    rest = np.array([c for c in range(game.deck_size) if c not in used], dtype=np.int8)
    size = len(outcomes[0]) if len(outcomes) else 0
    key = (len(rest), size)
    positions = _POSITIONS.get(key)
    if positions is None:
        positions = _POSITIONS[key] = np.array(
            list(combinations(range(len(rest)), size)), dtype=np.int64
        ).reshape(-1, size)
    if len(positions) != len(outcomes):
        return np.array(outcomes, dtype=np.int8).reshape(len(outcomes), -1)
    return rest[positions]


def spent_bucket(chips: int, unit: int) -> int:
    """Half-octave bucket of a seat's chips in, in units of the big blind (no-limit pooling)."""
    return 0 if chips <= 0 else int(2 * log2(max(chips / unit, 1e-9)) + 64)


class FittedValues:
    """a + b * equity per betting state (see the module docstring), fitted on played hands.

    `equity`: an `Equity` (shared between models that see the same hands, its memo serves
    both). `prior`: the pseudo-count that shrinks a state's fit towards its coarser pool.
    """

    def __init__(self, betting: Betting, equity: Equity, prior: float = 20.0):
        self.betting = betting
        self.equity = equity
        self.prior = float(prior)
        self.limit = isinstance(betting, LimitBetting)
        self.unit = max(max(betting.game.blind), 1)
        self._stats: list[dict[tuple, np.ndarray]] = [{} for _ in range(LEVELS)]
        self._parents: list[dict[tuple, tuple]] = [{} for _ in range(LEVELS)]
        self._coef: list[dict[tuple, tuple[float, float]]] = [{} for _ in range(LEVELS)]
        self.samples = 0

    # --------------------------------------------------------------------------- keys

    def keys(self, seat: int, state: State, depth: int, tag: Hashable = None) -> tuple[tuple, ...]:
        """The pooling levels of a state with `depth` deal groups out, finest first: with
        `tag` (what else the fit tells apart: the players' buckets), the state, (round, chips
        each seat has in), the round."""
        b = self.betting
        r = b.round(state)
        spent = b.spent(state)
        own, opp = spent[seat], spent[1 - seat]
        if not self.limit:
            own, opp = spent_bucket(own, self.unit), spent_bucket(opp, self.unit)
        return (
            (seat, depth, state, tag),
            (seat, depth, state),
            (seat, depth, r, b.actor(state) == seat, own, opp),
            (seat, depth, r),
        )

    # --------------------------------------------------------------------------- fitting

    def fit(self, hands: Sequence[Hand], seats: int | Sequence[int]) -> FittedValues:
        """Add the states of `hands` (the known player in `seats`) to the fit and solve it."""
        seat_of = [seats] * len(hands) if isinstance(seats, int) else list(seats)
        for hand, seat in zip(hands, seat_of):
            self._add_hand(hand, seat)
        self.solve()
        return self

    def add(self, seat: int, state: State, deal: Deal, y: float, tag: Hashable = None) -> None:
        """One observation: `y` chips for `seat` at `state` after `deal`."""
        x = self.equity.of(deal)
        row = np.array([1.0, x, y, x * x, x * y])
        keys = self.keys(seat, state, len(deal), tag)
        for level, key in enumerate(keys):
            found = self._stats[level].get(key)
            if found is None:
                self._stats[level][key] = row.copy()
                if level + 1 < LEVELS:
                    self._parents[level][key] = keys[level + 1]
            else:
                found += row
        self.samples += 1

    def _add_hand(self, hand: Hand, seat: int) -> None:
        b = self.betting
        groups = deal_groups(b.game, hand, seat)
        states: list[State] = []
        state = b.start()
        for action in hand.actions:
            states.append(state)
            state = b.apply(state, b.canonical(state, action))
        end = state
        board = tuple(c for group in groups[2:] for c in group)
        pay = showdown_payoff(b, end, (tuple(hand.hole[0]), tuple(hand.hole[1])), board)
        y = float(pay if seat == 0 else -pay)
        depth = 0
        for i, state in enumerate([*states, end]):
            if i > 0 and self._terminal(seat, state, tuple(groups[:depth])) is None:
                self.add(seat, state, tuple(groups[:depth]), y)  # an action's value
            while depth < groups_needed(b, state):  # every chance event's
                depth += 1
                self.add(seat, state, tuple(groups[:depth]), y)

    def solve(self, depth: int | None = None) -> None:
        """Fit every key (of one `depth` only, if given), coarsest level first, each shrunk
        towards its parent's fit by `prior` pseudo-observations."""
        lam = self.prior
        for level in reversed(range(LEVELS)):
            coef = self._coef[level]
            parents = self._coef[level + 1] if level + 1 < LEVELS else {}
            for key, (n, sx, sy, sxx, sxy) in self._stats[level].items():
                if depth is not None and key[1] != depth:
                    continue
                parent = self._parents[level].get(key)
                pa, pb = parents.get(parent, (0.0, 0.0)) if parent is not None else (0.0, 0.0)
                m = np.array([[n + lam, sx], [sx, sxx + lam]])
                rhs = np.array([sy + lam * pa, sxy + lam * pb])
                a, bb = np.linalg.solve(m, rhs)
                coef[key] = (float(a), float(bb))

    def coefficients(
        self, seat: int, state: State, depth: int, tag: Hashable = None
    ) -> tuple[float, float]:
        """(a, b) of a state: its own fit, else its pool's, else (0, 0)."""
        for level, key in enumerate(self.keys(seat, state, depth, tag)):
            found = self._coef[level].get(key)
            if found is not None:
                return found
        return 0.0, 0.0

    # --------------------------------------------------------------------------- ValueModel

    def _terminal(self, seat: int, state: State, deal: Deal) -> float | None:
        b = self.betting
        if b.actor(state) >= 0:
            return None
        if b.folded(state) >= 0:
            pay = showdown_payoff(b, state, ((), ()), ())
            return float(pay if seat == 0 else -pay)
        if len(deal) < b.deals[-1]:
            return None  # a showdown whose board is still to come: fitted like any state
        hole = (deal[0], deal[1]) if seat == 0 else (deal[1], deal[0])
        board = tuple(c for group in deal[2:] for c in group)
        pay = showdown_payoff(b, state, hole, board)
        return float(pay if seat == 0 else -pay)

    def value(self, seat: int, state: State, deal: Deal) -> float:
        """The fitted chips of `seat` at `state` after `deal`."""
        exact = self._terminal(seat, state, deal)
        if exact is not None:
            return exact
        a, bb = self.coefficients(seat, state, len(deal))
        return a + bb * self.equity.of(deal)

    def chance_values(
        self, seat: int, state: State, deal: Deal, outcomes: Sequence[Cards]
    ) -> np.ndarray:
        """Values after each outcome of the next chance event."""
        b = self.betting
        if b.actor(state) < 0 and b.folded(state) >= 0:
            return np.full(len(outcomes), self.value(seat, state, deal))
        depth = len(deal) + 1
        if b.actor(state) < 0 and depth == b.deals[-1]:  # the showdown's last card: exact
            return np.array([self.value(seat, state, deal + (o,)) for o in outcomes])
        a, bb = self.coefficients(seat, state, depth)
        return a + bb * self.equity.after(deal, outcomes)

    def chance_mean(self, seat: int, state: State, deal: Deal, outcomes: Sequence[Cards]) -> float:
        """The mean of `chance_values`: exact, or for a large event (the flop) unbiased from
        each outcome's equity over a few random run-outs (`Equity.sampled`)."""
        b = self.betting
        depth = len(deal) + 1
        last = b.actor(state) < 0 and depth == b.deals[-1]
        if last or b.folded(state) >= 0 or not self.equity.sampled(deal):
            return float(self.chance_values(seat, state, deal, outcomes).mean())
        a, bb = self.coefficients(seat, state, depth)
        return a + bb * float(self.equity.sampled_after(deal, outcomes).mean())


def fit_values(
    betting: Betting,
    known: Policy,
    reference: Policy,
    hands: int,
    seed: int,
    equity: Equity,
    sample: Callable[..., list[Hand]],
    prior: float = 20.0,
) -> FittedValues:
    """A `FittedValues` fitted on `hands` hands (half in each seat) of the known strategy
    against `reference`, dealt by `sample(betting, policies, n, seed)`."""
    model = FittedValues(betting, equity, prior)
    half = hands // 2
    for seat in (0, 1):
        policies = (known, reference) if seat == 0 else (reference, known)
        model.fit(sample(betting, policies, half, seed + seat), seat)
    return model


# ------------------------------------------------------------------------------- round values


@njit(cache=True, nogil=True)
def _lookup_rows(rows: np.ndarray, n: int, r: int, lookup: Any, out: np.ndarray) -> None:
    for i in range(rows.shape[0]):
        out[i] = lookup_bucket(rows[i], n, r, lookup)


class BucketView:
    """A policy seen through what it plays on: its bucket of the cards (a strategy agent), one
    class for all cards (a card-blind player), or the cards themselves (any other policy)."""

    def __init__(self, policy: Policy):
        self.policy = policy
        self.blind = bool(getattr(policy, "card_blind", False))
        self.agent = policy if isinstance(policy, AgentPolicy) and not self.blind else None

    def bucket(self, round_: int, cards: Cards) -> Hashable:
        """The class of a player's cards (hole, then the board it sees) in a round."""
        if self.blind:
            return 0
        if self.agent is not None:
            return self.agent.bucket(round_, cards)
        return cards

    def buckets(self, round_: int, rows: np.ndarray) -> list[Any]:
        """`bucket` of every row of cards."""
        if self.blind:
            return [0] * len(rows)
        if self.agent is not None:
            out = np.empty(len(rows), dtype=np.int64)
            rows = np.ascontiguousarray(rows, dtype=np.int8)
            _lookup_rows(rows, rows.shape[1], round_, self.agent.lookup, out)
            return out.tolist()
        return [tuple(int(c) for c in row) for row in rows]

    def distribution(self, state: State, bucket: Any) -> tuple[list[Action], np.ndarray]:
        """Actions and probabilities at `state` for cards of `bucket`."""
        if self.blind:
            return self.policy.distribution(state, ())
        if self.agent is not None:
            return self.agent.by_bucket(state, int(bucket))
        return self.policy.distribution(state, bucket)


class MarginalPolicy:
    """A strategy agent's play averaged over its buckets, equally, at each betting node: card-
    blind, so as `RoundValues`' reference it needs one walk of a round per bucket of the known
    player only (with the agent itself as reference, a walk per pair of buckets: millions on a
    9,000-bucket abstraction)."""

    card_blind = True

    def __init__(self, policy: AgentPolicy):
        self.policy = policy
        self._memo: dict[State, tuple[list[Action], np.ndarray]] = {}

    def distribution(self, state: State, cards: Cards) -> tuple[list[Action], np.ndarray]:
        """The same distribution for every hand (memoized by node)."""
        found = self._memo.get(state)
        if found is None:
            found = self._memo[state] = self._mean(state)
        return found

    def _mean(self, state: State) -> tuple[list[Action], np.ndarray]:
        p = self.policy
        if p.card_blind:
            return p.by_bucket(state, 0)
        tree = p.tree
        legal = [a for a in range(3) if tree.children[state, a] >= 0]
        r = int(tree.round[state])
        end = p.offsets[r + 1] if r + 1 < len(p.offsets) else p.strategy.shape[0]
        buckets = int((end - p.offsets[r]) // p.ndec[r])
        rows = p.offsets[r] + np.arange(buckets) * p.ndec[r] + tree.slot[state]
        weights = np.asarray(p.strategy[rows][:, legal], dtype=np.float64)
        weights /= np.maximum(weights.sum(axis=1, keepdims=True), 1e-300)
        probs = weights.mean(axis=0)
        keep = probs > 0
        return [(a, 0) for a, k in zip(legal, keep) if k], probs[keep] / probs[keep].sum()


class RoundValues:
    """Exact within the betting round under way, fitted where it ends (limit games).

    The known strategy (in its seat, with its cards) and `reference` (in the other, with the
    other seat's cards) play the rest of the current round exactly; where the round ends the
    value is a fold's or a showdown's chips, or a fitted a + b * equity before the next round's
    cards (`fit`: per state and the two players' buckets of the round just played, by least
    squares on the value the next round's cards then gave, fitted from the last round back).
    Every value is A + B * equity with (A, B) a function of the state and the two players'
    buckets this round, so each (state, bucket pair) is walked once for all hands, and a chance
    event's outcomes are grouped by the buckets they give. At the known player's decisions the
    value is its strategy's mean over its actions, exactly, so the action corrections measure
    only its luck.
    """

    def __init__(
        self,
        betting: Betting,
        known: Policy,
        reference: Policy,
        equity: Equity,
        prior: float = 20.0,
        exact_outcomes: int = EXACT_OUTCOMES,
        subsample: int = 8,
        seed: int = 0,
    ):
        self.betting = betting
        self.game = betting.game
        self.known, self.reference = BucketView(known), BucketView(reference)
        self.boundary = FittedValues(betting, equity, prior)
        self.equity = equity
        self._walks: dict[tuple[Any, ...], tuple[float, float]] = {}
        self._expected: dict[tuple[Any, ...], float] = {}
        self._round_of_depth = {d: r for r, d in enumerate(betting.deals)}
        # the chance events from this depth on have at most `exact_outcomes` outcomes together:
        # averaged exactly (all of Kuhn and Leduc; hold'em's river)
        sizes = outcome_counts(self.game)
        self.exact_depth, together = len(sizes), 1
        while self.exact_depth > 0 and together * sizes[self.exact_depth - 1] <= exact_outcomes:
            self.exact_depth -= 1
            together *= sizes[self.exact_depth]
        self._events: dict[Deal, tuple[list[Hashable], list[Hashable]]] = {}
        self.subsample = subsample
        # a limit tree's children as lists (the walks' inner loop; no-limit states apply)
        self._children = betting.tree.children.tolist() if isinstance(betting, LimitBetting) else []
        self.rng = np.random.default_rng(seed)  # the outcomes of subsampled means
        self.last_round = self.game.num_rounds - 1

    # --------------------------------------------------------------------------- fitting

    def fit(self, hands: Sequence[Hand], seats: int | Sequence[int]) -> RoundValues:
        """Fit the values where rounds end on `hands` of the known strategy (in `seats`)
        against the reference: the deepest chance events first, each target being the value
        the hand's next cards gave (which uses only fits of later events)."""
        seat_of = [seats] * len(hands) if isinstance(seats, int) else list(seats)
        b = self.betting
        points: dict[int, list[tuple[int, State, Deal, Deal]]] = {}
        for hand, seat in zip(hands, seat_of):
            groups = deal_groups(b.game, hand, seat)
            state, depth = b.start(), 0
            for action in (*hand.actions, None):
                while depth < min(groups_needed(b, state), len(groups)):
                    before, after = tuple(groups[:depth]), tuple(groups[: depth + 1])
                    points.setdefault(depth, []).append((seat, state, before, after))
                    depth += 1
                if action is not None:
                    state = b.apply(state, b.canonical(state, action))
        for depth in sorted(points, reverse=True):
            for seat, state, before, after in points[depth]:
                y = self.value(seat, state, after)
                self.boundary.add(seat, state, before, y, self._tag(before))
            self.boundary.solve(depth)
            self._walks.clear()
        return self

    def _tag(self, deal: Deal) -> Hashable:
        """The players' buckets in the round whose cards `deal` completes (None before both
        holes are out)."""
        r = self._round_of_depth.get(len(deal))
        if r is None:
            return None
        return (
            self.known.bucket(r, self._cards(0, deal, r)),
            self.reference.bucket(r, self._cards(1, deal, r)),
        )

    # --------------------------------------------------------------------------- values

    def _walk(self, seat: int, state: State, depth: int, kb: Hashable, rb: Hashable) -> Any:
        """(A, B) of `state` with `depth` deal groups out and buckets kb (known), rb (other)."""
        key = (seat, state, depth, kb, rb)
        found = self._walks.get(key)
        if found is not None:
            return found
        b = self.betting
        if b.actor(state) < 0:
            if b.folded(state) >= 0:
                pay = showdown_payoff(b, state, ((), ()), ())
                found = (float(pay if seat == 0 else -pay), 0.0)
            elif depth >= b.deals[-1]:  # a showdown: the equity is the sign
                found = (0.0, float(min(b.spent(state))))
            else:
                found = self.boundary.coefficients(seat, state, depth, (kb, rb))
        elif groups_needed(b, state) > depth:
            found = self.boundary.coefficients(seat, state, depth, (kb, rb))
        else:
            actor = b.actor(state)
            view, bucket = (self.known, kb) if actor == seat else (self.reference, rb)
            actions, probs = view.distribution(state, bucket)
            a_sum = b_sum = 0.0
            for action, q in zip(actions, probs.tolist()):
                child = self._children[state][action[0]] if self._children else None
                if child is None:
                    child = b.apply(state, action)
                a, bb = self._walk(seat, child, depth, kb, rb)
                a_sum += q * a
                b_sum += q * bb
            found = (a_sum, b_sum)
        self._walks[key] = found
        return found

    def _cards(self, seat_of_cards: int, deal: Deal, round_: int) -> Cards:
        hole = deal[seat_of_cards]
        board = tuple(c for group in deal[2:] for c in group)
        return hole + board[: self.game.board_cards_through(round_)]

    def _ahead(self, state: State, depth: int) -> bool:
        """Whether `state` waits for cards not yet dealt (a value before a chance event)."""
        b = self.betting
        return depth < 2 or (b.actor(state) >= 0 and groups_needed(b, state) > depth)

    def value(self, seat: int, state: State, deal: Deal) -> float:
        """The known seat's chips at `state` after `deal`."""
        b = self.betting
        depth = len(deal)
        if depth >= self.exact_depth:
            return self._expect(seat, state, deal)
        if depth < 2:
            return self.boundary.value(seat, state, deal)
        if self._ahead(state, depth):
            a, bb = self.boundary.coefficients(seat, state, depth, self._tag(deal))
            return a + bb * self.equity.of(deal)
        r = b.round(state)
        kb = self.known.bucket(r, self._cards(0, deal, r))
        rb = self.reference.bucket(r, self._cards(1, deal, r))
        a, bb = self._walk(seat, state, depth, kb, rb)
        return a + bb * self.equity.of(deal)

    def chance_values(
        self, seat: int, state: State, deal: Deal, outcomes: Sequence[Cards]
    ) -> np.ndarray:
        """Values after each outcome of the next chance event, grouped by the buckets they give."""
        if len(deal) + 1 >= self.exact_depth:
            return np.array([self._expect(seat, state, deal + (o,)) for o in outcomes])
        return self._factorized(seat, state, deal, outcomes)

    def chance_mean(self, seat: int, state: State, deal: Deal, outcomes: Sequence[Cards]) -> float:
        """The mean of `chance_values`: exact, or for a large event (the flop) an unbiased
        estimate from each outcome's equity over a few random run-outs (`Equity.sampled`)."""
        depth = len(deal) + 1
        if depth > self.exact_depth or (
            depth == self.exact_depth and len(outcomes) <= self.subsample
        ):
            return float(self.chance_values(seat, state, deal, outcomes).mean())
        if depth == self.exact_depth:
            # the values after are exact expectations, each a walk: the walks' cheap fitted
            # approximation over every outcome, plus the mean difference from the exact ones
            # over a random subset of them (unbiased for the difference's mean)
            fitted = self._factorized(seat, state, deal, outcomes)
            pick = self.rng.choice(len(outcomes), self.subsample, replace=False)
            gap = [self._expect(seat, state, deal + (outcomes[i],)) - fitted[i] for i in pick]
            return float(fitted.mean() + np.mean(gap))
        equity = self.equity.sampled_after(deal, outcomes) if self.equity.sampled(deal) else None
        return float(self._factorized(seat, state, deal, outcomes, equity).mean())

    def _factorized(
        self,
        seat: int,
        state: State,
        deal: Deal,
        outcomes: Sequence[Cards],
        equity: np.ndarray | None = None,
    ) -> np.ndarray:
        """Values after each outcome by the bucket walks (fitted where the round ends), with
        the equities given or exact ones."""
        b = self.betting
        depth = len(deal) + 1
        if depth < 2:
            return self.boundary.chance_values(seat, state, deal, outcomes)
        if self._ahead(state, depth):  # not in limit games: every round deals one group
            return np.array([self.boundary.value(seat, state, deal + (o,)) for o in outcomes])
        if b.actor(state) < 0 and b.folded(state) >= 0:
            return np.full(len(outcomes), self.value(seat, state, deal))
        kbs, rbs = self._event(deal, b.round(state), outcomes)
        if equity is None:
            equity = self.equity.after(deal, outcomes)
        pairs: dict[tuple[Hashable, Hashable], int] = {}
        index = np.array([pairs.setdefault(pair, len(pairs)) for pair in zip(kbs, rbs)])
        coef = np.array([self._walk(seat, state, depth, k, o) for k, o in pairs])
        return coef[index, 0] + coef[index, 1] * equity

    def _event(
        self, deal: Deal, r: int, outcomes: Sequence[Cards]
    ) -> tuple[list[Hashable], list[Hashable]]:
        """The known and other seat's buckets in round r after each outcome of the chance event
        after `deal` (kept for the last few deals)."""
        found = self._events.get(deal)
        if found is not None and len(found[0]) == len(outcomes):
            return found
        rows = outcome_rows(self.game, deal, outcomes)
        board = np.array([c for group in deal[2:] for c in group], dtype=np.int8)
        through = self.game.num_hole_cards + self.game.board_cards_through(r)
        spread = np.broadcast_to(board, (len(rows), len(board)))
        if len(deal) == 1:  # the other seat's hole: the known seat's cards are the same throughout
            kbs = [self.known.bucket(r, self._cards(0, deal, r))] * len(rows)
            rbs = self.reference.buckets(r, np.concatenate([rows, spread], axis=1)[:, :through])
        else:

            def seen(hole: Cards) -> np.ndarray:
                fixed = np.broadcast_to(np.array(hole, np.int8), (len(rows), len(hole)))
                return np.concatenate([fixed, spread, rows], axis=1)[:, :through]

            kbs = self.known.buckets(r, seen(deal[0]))
            rbs = self.reference.buckets(r, seen(deal[1]))
        if len(self._events) >= KEEP:
            del self._events[next(iter(self._events))]
        found = self._events[deal] = (kbs, rbs)
        return found

    def _expect(self, seat: int, state: State, deal: Deal) -> float:
        """The exact expected chips below `state` (chance events averaged over every outcome,
        the last round by its bucket walk), for states past the last large chance event."""
        key = (seat, state, deal)
        found = self._expected.get(key)
        if found is not None:
            return found
        b = self.betting
        depth = len(deal)
        if b.actor(state) < 0 and (b.folded(state) >= 0 or depth >= b.deals[-1]):
            found = self.boundary.value(seat, state, deal)  # exact at a terminal state
        elif depth < groups_needed(b, state):
            outcomes = next_outcomes(self.game, deal)
            if depth + 1 == groups_needed(b, state) and b.round(state) == self.last_round:
                found = float(self._factorized(seat, state, deal, outcomes).mean())
            else:
                found = float(np.mean([self._expect(seat, state, deal + (o,)) for o in outcomes]))
        elif b.round(state) == self.last_round:
            r = self.last_round
            kb = self.known.bucket(r, self._cards(0, deal, r))
            rb = self.reference.bucket(r, self._cards(1, deal, r))
            a, bb = self._walk(seat, state, depth, kb, rb)
            found = a + bb * self.equity.of(deal)
        else:
            r = b.round(state)
            actor = b.actor(state)
            view, hole = (self.known, 0) if actor == seat else (self.reference, 1)
            actions, probs = view.distribution(state, view.bucket(r, self._cards(hole, deal, r)))
            found = float(
                sum(q * self._expect(seat, b.apply(state, a), deal) for a, q in zip(actions, probs))
            )
        if len(self._expected) > EXPECTED_MEMO:
            self._expected.clear()
        self._expected[key] = found
        return found


def outcome_counts(game: Any) -> list[int]:
    """Outcomes of each chance event in the estimator's order: the two holes, board groups."""
    left, h = game.deck_size, game.num_hole_cards
    out = [comb(left, h), comb(left - h, h)]
    left -= 2 * h
    for _, n in ((r, n) for r, n in enumerate(game.num_board_cards) if n > 0):
        out.append(comb(left, n))
        left -= n
    return out


# Beyond this many buckets a round after the first, a self-reference's own buckets would make a
# walk per pair of buckets per chance outcome (a flop's 17,296): its play is averaged over them.
SELF_REFERENCE_BUCKETS = 64


def self_reference_values(
    betting: LimitBetting, agent: Agent, fit_hands: int, seed: int = 0
) -> tuple[AgentPolicy, RoundValues]:
    """A known agent's policy and an AIVAT baseline that needs nothing of its opponent:
    `RoundValues` with the agent itself as the reference opponent (its play averaged over its
    buckets, `MarginalPolicy`, beyond SELF_REFERENCE_BUCKETS a round), fitted on `fit_hands`
    hands against that reference where the game's chance events are too many to average
    exactly (hold'em decks; Kuhn and Leduc fit nothing). Any baseline keeps AIVAT unbiased; one
    nearer the true opponent only removes more luck."""
    game = betting.game
    known = AgentPolicy(betting, agent)
    tables = agent.tables if agent.tables is not None else lossless_tables(game)
    small = int(np.max(tables.num_buckets[1:], initial=0)) <= SELF_REFERENCE_BUCKETS
    reference: Policy = known if small else MarginalPolicy(known)
    values = RoundValues(betting, known, reference, Equity(game, samples=64, seed=seed), seed=seed)
    if values.exact_depth > 0 and fit_hands > 1:
        for seat in (0, 1):
            policies = (known, reference) if seat == 0 else (reference, known)
            values.fit(sample_hands(betting, policies, fit_hands // 2, seed + 1 + seat), seat)
    return known, values
