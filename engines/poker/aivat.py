"""AIVAT: an unbiased, low-variance value of each played hand for a player whose strategy is known.

Burch, Schmid, Moravčík, Morrill and Bowling, "AIVAT: A New Variance Reduction Technique for
Agent Evaluation in Imperfect Information Games" (AAAI 2018). A hand's plain value is the chips
the known player won. AIVAT subtracts a control variate at every chance event and at every
decision of the known player: a baseline value after what happened minus that value's
expectation over what could have happened (the remaining cards of the deck, the known strategy's
actions). Each term has mean zero given the hand so far, so the corrected value has the plain
value's expectation for any baseline; a baseline near the true values removes the luck of the
cards and of the known player's own sampling, leaving mostly the opponent's choices.

Chance events, in this order: the known seat's hole cards, the other seat's hole cards, then each
round's board cards once the betting reaches that round (or, after an all-in, the showdown).
The estimator needs both players' hole cards, as a dealer's log or a simulated match has them;
a value after the known seat's deal alone averages over the other seat's cards. A deal is a tuple
of card groups in that order (`Deal`), each group sorted.

Two-player ACPC games, limit and no-limit (`betting_of`): an action is (FOLD, CALL or RAISE, the
raise-to chips of a no-limit raise, else 0); `parse_betting` and `hand_from_acpc` read ACPC
betting and card strings. Strategies are `Policy` objects: `AgentPolicy` (a limit-game match
`Agent`: a solved average strategy through its bucket lookup, uniform, always-call,
always-raise, with the probabilities `match._choose` samples), `UniformPolicy` (uniform over
the legal action types, then over a raise grid, as the no-limit random player) and
`ExamplePolicy` (the ACPC example player). Baselines are `ValueModel` objects:

- `ExactValues`: the exact expected chips under the known strategy against a reference opponent
  strategy, by enumerating every deal and betting sequence below a state (memoized). Games small
  enough to enumerate (Kuhn, Leduc, small no-limit games). With the known strategy itself as the
  reference it uses nothing of the opponent; the true opponent as reference leaves only the
  opponent's own sampling (none against a deterministic one).
- `MadeHandValues`: strategy-free and cheap for any deck: the chips of a showdown now, on the
  cards dealt so far, after the player facing a bet calls (exact at a real showdown). A few ms a
  hand on full hold'em (every flop is an outcome), but a crude guess before the river.

For hold'em decks, `engines.poker.aivat_values` has better baselines: `RoundValues` (the known
strategy's round played out exactly against a reference, fitted where rounds end) and
`FittedValues` (a + b * equity per state, any betting).

`aivat` gives an `Estimate` per hand (plain chips and each correction); `imaginary=True` adds
the paper's imaginary observations (`aivat_hand`), at a walk per hole the known seat could have
held; `other=` corrects the other seat's decisions too where its strategy is known as well.
`sample_hands` deals and plays hands between two policies, for checks and benchmarks.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any, NamedTuple, Protocol

import numpy as np

from gameforge.engines.poker.acpc import GameDef
from gameforge.engines.poker.betting import (
    CALL,
    DECISION,
    FOLD,
    FOLD_END,
    RAISE,
    BettingTree,
    build_tree,
)
from gameforge.engines.poker.cards import BOTTOM
from gameforge.engines.poker.evaluator import evaluate
from gameforge.engines.poker.match import ALWAYS_CALL, ALWAYS_RAISE, STRATEGY, Agent, deal_cards
from gameforge.engines.poker.mccfr import lookup_bucket

Action = tuple[int, int]  # (FOLD, CALL or RAISE; a no-limit raise's raise-to chips, else 0)
Cards = tuple[int, ...]
Deal = tuple[Cards, ...]  # chance outcomes so far: known seat's hole, other's hole, board groups
State = Any  # a betting position: a tree node (limit) or an `NLState` (no-limit); hashable
MAX_ROUND_ACTIONS = 64  # ACPC's MAX_NUM_ACTIONS (a raise needs room for itself and a reply)


@dataclass(frozen=True)
class Hand:
    """One played hand: each seat's hole cards, the board cards dealt, the actions in order."""

    hole: tuple[Cards, Cards]  # per seat
    board: Cards  # in deal order; a hand that ended early may hold fewer than the game deals
    actions: tuple[Action, ...]


# ------------------------------------------------------------------------------- betting


def board_groups(game: GameDef) -> tuple[tuple[int, int], ...]:
    """(round, cards) of every round that deals board cards, in order."""
    return tuple((r, n) for r, n in enumerate(game.num_board_cards) if n > 0)


def deals_through(game: GameDef) -> tuple[int, ...]:
    """Per round: the chance events (two holes, then board groups) that have happened by then."""
    return tuple(
        2 + sum(1 for r, _ in board_groups(game) if r <= rr) for rr in range(game.num_rounds)
    )


class Betting(Protocol):
    """The betting of a two-player ACPC game as hashable states."""

    game: GameDef
    deals: tuple[int, ...]  # per round: deal groups out by then (`deals_through`)

    def start(self) -> State:
        """The state after the blinds."""
        ...

    def actor(self, state: State) -> int:
        """The seat to act, or -1 once the hand is over."""
        ...

    def round(self, state: State) -> int:
        """The betting round of a state."""
        ...

    def spent(self, state: State) -> tuple[int, int]:
        """Chips each seat has put in."""
        ...

    def folded(self, state: State) -> int:
        """The seat that folded, or -1."""
        ...

    def actions(self, state: State) -> list[Action]:
        """The legal actions (every raise-to size in no-limit)."""
        ...

    def canonical(self, state: State, action: Action) -> Action:
        """The action as `actions` names it; ValueError if it is illegal."""
        ...

    def apply(self, state: State, action: Action) -> State:
        """The state after a legal action."""
        ...


class LimitBetting:
    """Limit betting on gameforge's betting tree: a state is a node (`poker.betting`)."""

    def __init__(self, game: GameDef, tree: BettingTree | None = None):
        self.game = game
        self.tree = tree if tree is not None else build_tree(game)
        self.deals = deals_through(game)

    def start(self) -> State:
        """The root node."""
        return 0

    def actor(self, state: State) -> int:
        """The seat to act, or -1 at a terminal node."""
        return int(self.tree.player[state]) if self.tree.kind[state] == DECISION else -1

    def round(self, state: State) -> int:
        """The node's betting round."""
        return int(self.tree.round[state])

    def spent(self, state: State) -> tuple[int, int]:
        """Chips each seat has put in."""
        s = self.tree.spent[state]
        return int(s[0]), int(s[1])

    def folded(self, state: State) -> int:
        """The folder at a fold node, else -1."""
        return int(self.tree.player[state]) if self.tree.kind[state] == FOLD_END else -1

    def actions(self, state: State) -> list[Action]:
        """Legal (kind, 0) actions."""
        if self.tree.kind[state] != DECISION:
            return []
        return [(a, 0) for a in range(3) if self.tree.children[state, a] >= 0]

    def canonical(self, state: State, action: Action) -> Action:
        """(kind, 0): a limit raise's size is fixed, so any size given is ignored."""
        kind = int(action[0])
        if self.tree.kind[state] != DECISION or not 0 <= kind < 3:
            raise ValueError(f"action {action} after {self.tree.history[state]!r}: not legal")
        if self.tree.children[state, kind] < 0:
            raise ValueError(
                f"action {'fcr'[kind]!r} is illegal after {self.tree.history[state]!r}"
            )
        return kind, 0

    def apply(self, state: State, action: Action) -> State:
        """The child node."""
        return int(self.tree.children[state, self.canonical(state, action)[0]])


class NLState(NamedTuple):
    """A no-limit betting position (the ACPC dealer's rules, as `engines.nlhe.game` keeps them)."""

    round: int
    actor: int  # -1 once the hand is over
    spent: tuple[int, int]
    min_to: int  # the smallest legal raise-to
    top: int  # the largest commitment
    called: int  # players who called since the last raise
    round_acts: int
    folded: int


class NoLimitBetting:
    """No-limit betting by the ACPC rules (project_acpc_server/game.c, two players)."""

    def __init__(self, game: GameDef):
        if game.betting_type != "nolimit" or game.num_players != 2:
            raise ValueError("NoLimitBetting needs a two-player no-limit game")
        self.game = game
        self.deals = deals_through(game)
        self.stack = (int(game.stack[0]), int(game.stack[1]))
        self.raise_step = max(max(game.blind), 1)  # a new round's minimum raise

    def start(self) -> State:
        """Blinds posted, the first seat of round 0 to act."""
        spent = (min(self.game.blind[0], self.stack[0]), min(self.game.blind[1], self.stack[1]))
        top = max(spent)
        return NLState(
            0, self.game.first_player[0], spent, 2 * top if top > 0 else 1, top, 0, 0, -1
        )

    def actor(self, state: State) -> int:
        """The seat to act, or -1."""
        return int(state.actor)

    def round(self, state: State) -> int:
        """The betting round."""
        return int(state.round)

    def spent(self, state: State) -> tuple[int, int]:
        """Chips each seat has put in."""
        return state.spent

    def folded(self, state: State) -> int:
        """The folder, or -1."""
        return int(state.folded)

    def limits(self, state: State) -> tuple[bool, bool, int, int]:
        """(fold legal, raise legal, smallest raise-to, largest raise-to) of the seat to act."""
        p = state.actor
        own, opp = state.spent[p], state.spent[1 - p]
        can_fold = own < state.top and own < self.stack[p]
        can_raise = opp < self.stack[1 - p] and state.round_acts + 2 <= MAX_ROUND_ACTIONS
        lo, hi = state.min_to, self.stack[p]
        if can_raise and lo > hi:  # short of a full raise: all-in only, if that is a raise
            can_raise, lo = state.top < hi, hi
        return can_fold, can_raise, lo, hi

    def actions(self, state: State) -> list[Action]:
        """Fold (when facing a bet), call, and every raise-to size."""
        if state.actor < 0:
            return []
        can_fold, can_raise, lo, hi = self.limits(state)
        out = [(FOLD, 0)] if can_fold else []
        out.append((CALL, 0))
        if can_raise:
            out.extend((RAISE, size) for size in range(lo, hi + 1))
        return out

    def canonical(self, state: State, action: Action) -> Action:
        """(kind, raise-to for a raise, else 0); ValueError if illegal."""
        kind, size = int(action[0]), int(action[1])
        if state.actor < 0:
            raise ValueError(f"action {action} after the hand's end")
        can_fold, can_raise, lo, hi = self.limits(state)
        if kind == CALL or (kind == FOLD and can_fold):
            return kind, 0
        if kind == RAISE and can_raise and lo <= size <= hi:
            return kind, size
        raise ValueError(f"action {action} is illegal (raises to {lo}..{hi} allowed: {can_raise})")

    def apply(self, state: State, action: Action) -> State:
        """The state after the action (nlhe.game.apply_action's rules)."""
        kind, size = self.canonical(state, action)
        p = state.actor
        spent = list(state.spent)
        min_to, top, called = state.min_to, state.top, state.called
        if kind == FOLD:
            return state._replace(actor=-1, folded=p, round_acts=state.round_acts + 1)
        if kind == CALL:
            spent[p] = min(top, self.stack[p])
            called += spent[p] < self.stack[p]
        else:
            min_to = max(min_to, 2 * size - top)
            top = spent[p] = size
            called = 1 if size < self.stack[p] else 0
        acting = sum(spent[s] < self.stack[s] for s in (0, 1))
        new = state._replace(
            spent=(spent[0], spent[1]), min_to=min_to, top=top, called=called,
            round_acts=state.round_acts + 1, actor=1 - p,
        )  # fmt: skip
        if called < acting:
            return new
        if acting > 1 and state.round + 1 < self.game.num_rounds:
            r = state.round + 1
            return new._replace(
                round=r, actor=self.game.first_player[r], min_to=top + self.raise_step,
                called=0, round_acts=0,
            )  # fmt: skip
        return new._replace(actor=-1)  # a showdown (all-in or the last round's call)


def betting_of(game: GameDef) -> LimitBetting | NoLimitBetting:
    """The betting of a two-player limit or no-limit game."""
    if game.num_players != 2:
        raise ValueError(f"AIVAT is implemented for two players, not {game.num_players}")
    return LimitBetting(game) if game.betting_type == "limit" else NoLimitBetting(game)


def parse_betting(game: GameDef, text: str) -> tuple[Action, ...]:
    """Actions of an ACPC betting string: 'rc/cr' (limit), 'r300c/cr900f' (no-limit raise-to)."""
    out: list[Action] = []
    i = 0
    while i < len(text):
        ch = text[i]
        i += 1
        if ch == "/":
            continue
        if ch not in "fcr":
            raise ValueError(f"betting {text!r}: unknown action {ch!r} (f, c, r and /)")
        size = 0
        if ch == "r" and game.betting_type == "nolimit":
            j = i
            while j < len(text) and text[j].isdigit():
                j += 1
            if j == i:
                raise ValueError(f"betting {text!r}: a no-limit raise needs its raise-to size")
            size, i = int(text[i:j]), j
        out.append(("fcr".index(ch), size))
    return tuple(out)


def hand_from_acpc(game: GameDef, betting: str, cards: str, naming: str = BOTTOM) -> Hand:
    """A hand from ACPC betting and cards strings, e.g. 'rc/cr' and 'Kc|Qd/Jh' (both holes)."""
    rounds = cards.split("/")
    holes = rounds[0].split("|")
    if len(holes) != 2 or not all(holes):
        raise ValueError(f"cards {cards!r}: AIVAT needs both seats' hole cards ('Kc|Qd/...')")
    hole = (tuple(game.parse_cards(holes[0], naming)), tuple(game.parse_cards(holes[1], naming)))
    board = tuple(c for r in rounds[1:] if r for c in game.parse_cards(r, naming))
    return Hand(hole, board, parse_betting(game, betting))


def showdown_payoff(betting: Betting, state: State, hole: tuple[Cards, Cards], board: Cards) -> int:
    """Chips seat 0 wins at a terminal state (a showdown compares the whole board's hands)."""
    spent = betting.spent(state)
    folded = betting.folded(state)
    if folded >= 0:
        return -spent[0] if folded == 0 else spent[1]
    g = betting.game
    rows = np.array([hole[0] + board, hole[1] + board], dtype=np.int8)
    v = evaluate(rows, g.num_ranks, g.num_suits)
    return int(np.sign(int(v[0]) - int(v[1]))) * min(spent)


# ------------------------------------------------------------------------------- policies


class Policy(Protocol):
    """A player's strategy: the actions it may take and their probabilities."""

    def distribution(self, state: State, cards: Cards) -> tuple[list[Action], np.ndarray]:
        """Actions with positive probability at `state` for a player holding `cards` (hole,
        then the board it sees), and their probabilities."""
        ...


class AgentPolicy:
    """A limit-game match `Agent` as a policy: the probabilities `match._choose` samples."""

    def __init__(self, betting: LimitBetting, agent: Agent):
        self.tree = betting.tree
        self.kind, self.strategy, self.offsets, self.ndec, self.lookup = agent.packed(betting.game)
        self._buckets: dict[tuple[int, Cards], int] = {}
        self._memo: dict[tuple[State, Cards], tuple[list[Action], np.ndarray]] = {}
        self._by_bucket: dict[tuple[State, int], tuple[list[Action], np.ndarray]] = {}

    def bucket(self, round_: int, cards: Cards) -> int:
        """The agent's bucket of its cards in a round (memoized)."""
        key = (round_, cards)
        found = self._buckets.get(key)
        if found is None:
            row = np.array(cards, dtype=np.int8)
            found = self._buckets[key] = int(lookup_bucket(row, len(cards), round_, self.lookup))
        return found

    def distribution(self, state: State, cards: Cards) -> tuple[list[Action], np.ndarray]:
        """The agent's actions and probabilities at a decision node (memoized)."""
        key = (state, cards)
        found = self._memo.get(key)
        if found is None:
            found = self._memo[key] = self._distribution(state, cards)
        return found

    @property
    def card_blind(self) -> bool:
        """Whether the agent plays the same whatever its cards (every kind but a strategy)."""
        return self.kind != STRATEGY

    def _distribution(self, state: State, cards: Cards) -> tuple[list[Action], np.ndarray]:
        bucket = self.bucket(int(self.tree.round[state]), cards) if self.kind == STRATEGY else 0
        return self.by_bucket(state, bucket)

    def by_bucket(self, state: State, bucket: int) -> tuple[list[Action], np.ndarray]:
        """The agent's actions and probabilities at a decision node holding cards of `bucket`
        in the node's round (any bucket for the card-blind kinds; memoized)."""
        key = (state, bucket)
        found = self._by_bucket.get(key)
        if found is None:
            found = self._by_bucket[key] = self._of_bucket(state, bucket)
        return found

    def _of_bucket(self, state: State, bucket: int) -> tuple[list[Action], np.ndarray]:
        legal = [a for a in range(3) if self.tree.children[state, a] >= 0]
        if self.kind == ALWAYS_CALL:
            return [(CALL, 0)], np.ones(1)
        if self.kind == ALWAYS_RAISE:
            return [(RAISE if RAISE in legal else CALL, 0)], np.ones(1)
        if self.kind == STRATEGY:
            r = int(self.tree.round[state])
            row = self.offsets[r] + bucket * self.ndec[r] + self.tree.slot[state]
            weights = [float(self.strategy[row, a]) for a in legal]
        else:
            weights = [1.0 / len(legal)] * len(legal)
        # _choose picks the first action whose running sum passes u ~ U[0, 1), else the last
        # legal one: each gets its clipped share of [0, 1), the last the rest.
        acc = np.minimum(np.cumsum(weights), 1.0)
        acc[-1] = 1.0
        probs = np.diff(acc, prepend=0.0)
        keep = probs > 0
        return [(a, 0) for a, k in zip(legal, keep) if k], probs[keep]


class ExamplePolicy:
    """The ACPC example player (project_acpc_server's example_player.c): fold 0.06, call 0.47,
    raise 0.47 over the legal action types (renormalized), whatever its cards; a no-limit raise
    to any legal size, uniformly."""

    card_blind = True
    WEIGHTS = {FOLD: 0.06, CALL: 0.47, RAISE: 0.47}

    def __init__(self, betting: Betting):
        self.betting = betting

    def distribution(self, state: State, cards: Cards) -> tuple[list[Action], np.ndarray]:
        """The same distribution for every hand."""
        legal = self.betting.actions(state)
        kinds = {a[0] for a in legal}
        mass = sum(self.WEIGHTS[k] for k in kinds)
        raises = sum(1 for a in legal if a[0] == RAISE)
        probs = np.array([self.WEIGHTS[k] / mass / (raises if k == RAISE else 1) for k, _ in legal])
        return legal, probs


class UniformPolicy:
    """Uniform over the legal action types, then over the raise grid: `lo`, every multiple of
    `step` strictly between, and `hi` (no-limit; with the small blind as `step`, the nlhe random
    player's distribution)."""

    card_blind = True

    def __init__(self, betting: Betting, step: int = 1):
        self.betting = betting
        self.step = max(int(step), 1)

    def distribution(self, state: State, cards: Cards) -> tuple[list[Action], np.ndarray]:
        """Card-blind: the same distribution for every hand."""
        if isinstance(self.betting, NoLimitBetting):
            if state.actor < 0:
                return [], np.zeros(0)
            can_fold, can_raise, lo, hi = self.betting.limits(state)
            legal = [(FOLD, 0)] if can_fold else []
            legal.append((CALL, 0))
            raises = []
            if can_raise:
                inner = range((lo // self.step + 1) * self.step, hi, self.step)
                raises = [(RAISE, s) for s in sorted({lo, hi, *inner})]
        else:
            legal = self.betting.actions(state)
            raises = [a for a in legal if a[0] == RAISE]
        kinds = sorted({a[0] for a in legal + raises})
        out = [a for a in legal if a[0] != RAISE] + raises
        probs = np.array([(1.0 / len(raises) if a[0] == RAISE else 1.0) for a in out])
        return out, probs / len(kinds)


# ------------------------------------------------------------------------------- baselines


class ValueModel(Protocol):
    """A baseline: the known seat's expected chips at a betting state after a deal."""

    def value(self, seat: int, state: State, deal: Deal) -> float:
        """Chips `seat` expects at `state` once the chance events of `deal` have happened."""
        ...

    def chance_values(
        self, seat: int, state: State, deal: Deal, outcomes: Sequence[Cards]
    ) -> np.ndarray:
        """`value(seat, state, deal + (o,))` for every outcome o of the next chance event."""
        ...


# A model may also define `chance_mean(seat, state, deal, outcomes) -> float`: an unbiased
# estimate of the mean of those values, drawn with randomness independent of the cards (the
# hold'em flop's 17,296 outcomes, each value estimated from a few random run-outs, say). The
# estimator then corrects a chance event by the realized outcome's `value` minus that estimate:
# still zero in expectation, and nearly as good as the exact mean over many outcomes.


def groups_needed(betting: Betting, state: State) -> int:
    """Deal groups (two holes, then board groups) dealt by `state`: all at a showdown, none
    that matter at a fold."""
    if betting.actor(state) < 0:
        return 0 if betting.folded(state) >= 0 else betting.deals[-1]
    return betting.deals[betting.round(state)]


def next_outcomes(game: GameDef, deal: Deal) -> list[Cards]:
    """Every outcome of the chance event after `deal`: a hole or the next round's board cards
    from the cards not yet dealt."""
    used = {c for group in deal for c in group}
    rest = [c for c in range(game.deck_size) if c not in used]
    depth = len(deal)
    size = game.num_hole_cards if depth < 2 else board_groups(game)[depth - 2][1]
    return list(combinations(rest, size))


def seat_cards(game: GameDef, seat: int, player: int, deal: Deal, round_: int) -> Cards:
    """What `player` sees in `round_`: its hole cards, then the board so far (`deal` in the
    estimator's order for the known `seat`)."""
    hole = deal[0] if player == seat else deal[1]
    board = tuple(c for group in deal[2:] for c in group)
    return hole + board[: game.board_cards_through(round_)]


class ExactValues:
    """Exact expected chips with the known strategy in its seat and `reference` in the other,
    by enumerating every deal and betting sequence below a state (memoized): games small
    enough to enumerate (Kuhn, Leduc). Values are exact for the true opponent when `reference`
    is it; any reference keeps AIVAT unbiased."""

    def __init__(self, betting: Betting, known: Policy, reference: Policy):
        self.betting, self.known, self.reference = betting, known, reference
        self.game = betting.game
        self._memo: dict[tuple[int, State, Deal], float] = {}
        self._policy_memo: dict[tuple[int, State, Cards], tuple[list[Action], np.ndarray]] = {}

    def _distribution(self, known: bool, state: State, cards: Cards) -> Any:
        key = (int(known), state, cards)
        found = self._policy_memo.get(key)
        if found is None:
            policy = self.known if known else self.reference
            found = self._policy_memo[key] = policy.distribution(state, cards)
        return found

    def value(self, seat: int, state: State, deal: Deal) -> float:
        """Expected chips of `seat` at `state` after `deal`."""
        key = (seat, state, deal)
        found = self._memo.get(key)
        if found is not None:
            return found
        b = self.betting
        if len(deal) < groups_needed(b, state):
            outcomes = next_outcomes(self.game, deal)
            v = sum(self.value(seat, state, deal + (o,)) for o in outcomes) / len(outcomes)
        elif b.actor(state) < 0:
            board = tuple(c for group in deal[2:] for c in group)
            hole: tuple[Cards, Cards] = ((), ())  # a fold's payoff needs no cards
            if len(deal) >= 2:
                hole = (deal[0], deal[1]) if seat == 0 else (deal[1], deal[0])
            pay = showdown_payoff(b, state, hole, board)
            v = float(pay if seat == 0 else -pay)
        else:
            p = b.actor(state)
            cards = seat_cards(self.game, seat, p, deal, b.round(state))
            actions, probs = self._distribution(p == seat, state, cards)
            v = float(
                sum(q * self.value(seat, b.apply(state, a), deal) for a, q in zip(actions, probs))
            )
        self._memo[key] = v
        return v

    def chance_values(
        self, seat: int, state: State, deal: Deal, outcomes: Sequence[Cards]
    ) -> np.ndarray:
        """Values after each outcome of the next chance event."""
        return np.array([self.value(seat, state, deal + (o,)) for o in outcomes])


class MadeHandValues:
    """Strategy-free baseline for any deck: the chips of a showdown now on the cards dealt so
    far (hands of fewer cards compare by what they make), after the player facing a bet calls;
    averaged over the hole cards not yet dealt. Exact at a real showdown."""

    def __init__(self, betting: Betting):
        self.betting = betting
        self.game = betting.game
        stacks = self.game.stack
        self.cap = min(stacks) if stacks else None
        # The first deal's outcomes and their mean signs: the same for every hand, and the
        # costliest (each averages over the other seat's holes).
        self._root: tuple[Sequence[Cards], np.ndarray] | None = None

    def _stake(self, state: State) -> int:
        top = max(self.betting.spent(state))
        return top if self.cap is None else min(top, self.cap)

    def _signs(self, seat: int, deal: Deal, outcomes: Sequence[Cards]) -> np.ndarray:
        """Showdown sign for `seat` after each outcome, on the cards dealt by then."""
        g = self.game
        if not deal:  # the known seat's hole alone: average over the other's
            return np.array(
                [self._signs(seat, (o,), next_outcomes(g, (o,))).mean() for o in outcomes]
            )
        new = np.array(outcomes, dtype=np.int8).reshape(len(outcomes), -1)
        if len(deal) == 1:  # the other seat's hole: no board yet
            own, opp = np.broadcast_to(np.array(deal[0], dtype=np.int8), new.shape), new
        else:
            board = tuple(c for group in deal[2:] for c in group)
            tile = np.array([deal[0] + board, deal[1] + board], dtype=np.int8)
            own = np.concatenate([np.broadcast_to(tile[0], (len(new), tile.shape[1])), new], axis=1)
            opp = np.concatenate([np.broadcast_to(tile[1], (len(new), tile.shape[1])), new], axis=1)
        mine = evaluate(np.ascontiguousarray(own), g.num_ranks, g.num_suits).astype(np.int64)
        theirs = evaluate(np.ascontiguousarray(opp), g.num_ranks, g.num_suits).astype(np.int64)
        return np.sign(mine - theirs).astype(np.float64)

    def value(self, seat: int, state: State, deal: Deal) -> float:
        """The known seat's made-hand chips at `state` after `deal`."""
        b = self.betting
        if b.actor(state) < 0 and b.folded(state) >= 0:
            pay = showdown_payoff(b, state, ((), ()), ())
            return float(pay if seat == 0 else -pay)
        if not deal:  # nothing dealt: by symmetry of the deal, the mean over both holes
            return float(
                self.chance_values(seat, state, deal, next_outcomes(self.game, deal)).mean()
            )
        sign = self._signs(seat, deal[:-1], [deal[-1]])[0]
        return float(sign * self._stake(state))

    def chance_values(
        self, seat: int, state: State, deal: Deal, outcomes: Sequence[Cards]
    ) -> np.ndarray:
        """Values after each outcome of the next chance event."""
        b = self.betting
        if b.actor(state) < 0 and b.folded(state) >= 0:
            return np.full(len(outcomes), self.value(seat, state, deal))
        if deal:
            return self._signs(seat, deal, outcomes) * self._stake(state)
        if self._root is None or self._root[0] != outcomes:
            self._root = (list(outcomes), self._signs(seat, deal, outcomes))
        return self._root[1] * self._stake(state)


# ------------------------------------------------------------------------------- estimator


@dataclass(frozen=True)
class Imaginary:
    """Imaginary observations over `holes` holes drawn a hand (0: every hole), from `seed`."""

    holes: int = 0
    seed: int = 0


def draws_of(imaginary: bool | Imaginary) -> Imaginary | None:
    """The imaginary observations asked for: None, every hole, or drawn holes."""
    if isinstance(imaginary, Imaginary):
        return imaginary
    return Imaginary() if imaginary else None


class Estimate(NamedTuple):
    """Per hand: the known seat's plain chips and the corrections AIVAT subtracts from them."""

    plain: np.ndarray
    chance: np.ndarray  # sum of value-after minus expected value at every chance event
    action: np.ndarray  # the same at every decision of the known seat (and the other's, if known)
    imaginary: np.ndarray  # plain minus its mean over the known seat's possible holes (or 0)

    @property
    def corrected(self) -> np.ndarray:
        """AIVAT's value of each hand: plain minus every correction."""
        return self.plain - self.chance - self.action - self.imaginary


def deal_groups(game: GameDef, hand: Hand, seat: int) -> list[Cards]:
    """The hand's chance outcomes in the estimator's order (as far as its board goes)."""
    for s in (0, 1):
        if len(hand.hole[s]) != game.num_hole_cards:
            raise ValueError(f"seat {s} holds {len(hand.hole[s])} cards, the game deals "
                             f"{game.num_hole_cards}")  # fmt: skip
    groups = [tuple(sorted(hand.hole[seat])), tuple(sorted(hand.hole[1 - seat]))]
    start = 0
    for _, n in board_groups(game):
        if start + n > len(hand.board):
            break
        groups.append(tuple(sorted(hand.board[start : start + n])))
        start += n
    cards = [c for group in groups for c in group]
    if len(set(cards)) != len(cards) or not all(0 <= c < game.deck_size for c in cards):
        raise ValueError(f"cards {cards}: repeated or outside the deck of {game.deck_size}")
    return groups


class _Walk:
    """One hand's walk for one seat: the deal so far, the corrections summed, and the
    probability of the known seat's actions (0 once it takes one its strategy never does)."""

    def __init__(self, betting: Betting, groups: list[Cards], seat: int, values: ValueModel):
        self.betting, self.groups, self.seat, self.values = betting, groups, seat, values
        self.deal: Deal = ()
        self.chance = 0.0
        self.action = 0.0
        self.reach = 1.0

    def deal_to(self, state: State) -> None:
        """Deal the groups `state` needs, correcting at each."""
        while len(self.deal) < groups_needed(self.betting, state):
            depth = len(self.deal)
            if depth >= len(self.groups):
                raise ValueError(f"the hand reaches deal {depth + 1} but its board ends before")
            realized = self.groups[depth]
            outcomes = next_outcomes(self.betting.game, self.deal)
            mean_of = getattr(self.values, "chance_mean", None)
            if mean_of is not None:
                after = self.values.value(self.seat, state, self.deal + (realized,))
                mean = mean_of(self.seat, state, self.deal, outcomes)
                self.chance += float(after - mean)
            else:
                vals = self.values.chance_values(self.seat, state, self.deal, outcomes)
                self.chance += float(vals[outcomes.index(realized)] - vals.mean())
            self.deal += (realized,)

    def decide(self, state: State, action: Action, policy: Policy, player: int) -> None:
        """The action correction at a decision of `player` (playing `policy`), and for the
        known seat its action's probability."""
        b = self.betting
        cards = seat_cards(b.game, self.seat, player, self.deal, b.round(state))
        actions, probs = policy.distribution(state, cards)
        if action not in actions:
            if player != self.seat:
                raise ValueError(f"the other seat's strategy never plays {action} at {state}")
            self.reach = 0.0
            return
        vals = np.array(
            [self.values.value(self.seat, b.apply(state, a), self.deal) for a in actions]
        )
        taken = actions.index(action)
        self.action += float(vals[taken] - probs @ vals)
        if player == self.seat:
            self.reach *= float(probs[taken])


def _walk(
    betting: Betting,
    hand: Hand,
    seat: int,
    known: Policy,
    values: ValueModel,
    other: Policy | None = None,
) -> tuple[np.ndarray, Deal]:
    """([plain, chance, action] weighted by the known seat's reach, and the reach), the deal
    (`other`: the other seat's strategy, when it is known too)."""
    walk = _Walk(betting, deal_groups(betting.game, hand, seat), seat, values)
    state = betting.start()
    for action in hand.actions:
        walk.deal_to(state)
        if betting.actor(state) < 0:
            raise ValueError(f"hand {hand}: actions after the hand's end")
        canonical = betting.canonical(state, action)
        if betting.actor(state) == seat:
            walk.decide(state, canonical, known, seat)
            if walk.reach == 0.0:
                return np.zeros(4), walk.deal
        elif other is not None:
            walk.decide(state, canonical, other, 1 - seat)
        state = betting.apply(state, canonical)
    if betting.actor(state) >= 0:
        raise ValueError(f"hand {hand}: the actions stop before the hand ends")
    walk.deal_to(state)
    board = tuple(c for group in walk.deal[2:] for c in group)
    pay = showdown_payoff(betting, state, (tuple(hand.hole[0]), tuple(hand.hole[1])), board)
    plain = float(pay if seat == 0 else -pay)
    return walk.reach * np.array([plain, walk.chance, walk.action, 1.0]), walk.deal


def aivat_hand(
    betting: Betting,
    hand: Hand,
    seat: int,
    known: Policy,
    values: ValueModel,
    imaginary: bool | Imaginary = False,
    other: Policy | None = None,
) -> tuple[float, float, float, float]:
    """(plain chips, chance, action and imaginary corrections) of `seat` in one hand.

    `imaginary`: the paper's imaginary observations. Given the other seat's cards, the board
    dealt and the actions, every hole the known seat could have held has a probability
    proportional to its strategy's probability of the actions it took (chance and the opponent,
    who never sees the hole, weigh all alike); the corrected value is the mean over them of the
    corrected value with that hole: a conditional expectation of the estimate, so unbiased. It
    costs a walk per possible hole; `Imaginary(holes, seed)` with 0 < holes < their number walks
    only that many, drawn (with replacement, from a stream seeded by the hand and `seed`) in
    proportion to those probabilities, which need only the strategy: their mean is an unbiased
    estimate of that conditional expectation, so the estimate stays unbiased, at `holes` walks
    a hand.

    `other`: the other seat's strategy where it is known too (a published bot such as the ACPC
    example player): its decisions are corrected as well. Unbiased only if it really plays so.
    """
    cache: dict[tuple[Any, ...], np.ndarray] | None = {} if imaginary else None
    return _aivat_hand(betting, hand, seat, known, values, cache, other, draws_of(imaginary))


def _aivat_hand(
    betting: Betting,
    hand: Hand,
    seat: int,
    known: Policy,
    values: ValueModel,
    cache: dict[tuple[Any, ...], np.ndarray] | None,
    other: Policy | None = None,
    draws: Imaginary | None = None,
) -> tuple[float, float, float, float]:
    """`aivat_hand`, imaginary when `cache` (what the hole walks gave, by what they condition on)
    is given."""
    got, deal = _walk(betting, hand, seat, known, values, other)
    if got[3] == 0.0:
        raise ValueError(f"hand {hand}: the known strategy never plays the actions of seat {seat}")
    plain, chance, action = (float(v) for v in got[:3] / got[3])
    if cache is None:
        return plain, chance, action, 0.0
    board = tuple(c for group in deal[2:] for c in group)
    other_hole = tuple(sorted(hand.hole[1 - seat]))
    key = (seat, other_hole, board, hand.actions)
    mean = cache.get(key)
    if mean is None:
        used = set(other_hole) | set(board)
        rest = [c for c in range(betting.game.deck_size) if c not in used]
        hands = []
        for hole in combinations(rest, betting.game.num_hole_cards):
            seated = (hole, other_hole) if seat == 0 else (other_hole, hole)
            hands.append(Hand(seated, board, hand.actions))
        holes, seed = (draws.holes, draws.seed) if draws is not None else (0, 0)
        drawn = 0 < holes < len(hands)  # else every hole, exactly
        if drawn:  # a sample in proportion to the reach: its plain mean estimates theirs
            reach = np.array([_reach(betting, h, seat, known) for h in hands])
            rng = np.random.default_rng([zlib.crc32(repr(key).encode()), seed])
            picks = rng.choice(len(hands), size=holes, p=reach / reach.sum())
            hands = [hands[i] for i in picks]
        total = np.zeros(4)
        for hole_hand in hands:
            got = _walk(betting, hole_hand, seat, known, values, other)[0]
            total += got / got[3] if drawn else got
        mean = cache[key] = total[:3] / total[3]
    return plain, float(mean[1]), float(mean[2]), plain - float(mean[0])


def _reach(betting: Betting, hand: Hand, seat: int, known: Policy) -> float:
    """The known seat's strategy's probability of its actions in `hand` (the cards dealt as
    its decisions need them)."""
    groups = deal_groups(betting.game, hand, seat)
    state, reach = betting.start(), 1.0
    for action in hand.actions:
        if betting.actor(state) == seat:
            deal = tuple(groups[: groups_needed(betting, state)])
            cards = seat_cards(betting.game, seat, seat, deal, betting.round(state))
            canonical = betting.canonical(state, action)
            actions, probs = known.distribution(state, cards)
            if canonical not in actions:
                return 0.0
            reach *= float(probs[actions.index(canonical)])
            state = betting.apply(state, canonical)
        else:
            state = betting.apply(state, betting.canonical(state, action))
    return reach


def aivat(
    betting: Betting,
    hands: Sequence[Hand],
    seats: int | Sequence[int],
    known: Policy,
    values: ValueModel,
    imaginary: bool | Imaginary = False,
    other: Policy | None = None,
) -> Estimate:
    """AIVAT for the known player, in `seats` (one seat, or one per hand), over `hands`
    (`imaginary`, `other`: see `aivat_hand`; hands alike but for the known seat's hole share
    its walks)."""
    seat_of = [seats] * len(hands) if isinstance(seats, int) else list(seats)
    if len(seat_of) != len(hands):
        raise ValueError(f"{len(seat_of)} seats for {len(hands)} hands")
    cache: dict[tuple[Any, ...], np.ndarray] | None = {} if imaginary else None
    draws = draws_of(imaginary)
    rows = [
        _aivat_hand(betting, h, s, known, values, cache, other, draws)
        for h, s in zip(hands, seat_of)
    ]
    out = np.array(rows, dtype=np.float64).reshape(len(hands), 4)
    return Estimate(out[:, 0], out[:, 1], out[:, 2], out[:, 3])


def interval(values: np.ndarray) -> tuple[float, float]:
    """Mean and 95% half-width (normal approximation) of per-hand values."""
    n = len(values)
    if n < 2:
        return (float(values.mean()) if n else 0.0), float("inf")
    return float(values.mean()), float(1.96 * values.std(ddof=1) / np.sqrt(n))


def match_hands(betting: LimitBetting, seed: int, ends: np.ndarray) -> tuple[list[Hand], list[int]]:
    """The hands `match.play_match(..., ends=ends)` played: deal d of `seed` in set s (deal-major
    order), and agent A's seat in each (s & 1: consecutive sets swap seats)."""
    game = betting.game
    cards = deal_cards(game, seed, ends.shape[0])
    h = game.num_hole_cards
    hands, seats = [], []
    for d in range(ends.shape[0]):
        row = tuple(int(c) for c in cards[d])
        hole = (row[:h], row[h : 2 * h])
        for s in range(ends.shape[1]):
            actions = parse_betting(game, betting.tree.history[int(ends[d, s])])
            hands.append(Hand(hole, row[2 * h :], actions))
            seats.append(s & 1)
    return hands, seats


def sample_hands(
    betting: Betting, policies: tuple[Policy, Policy], n: int, seed: int = 0
) -> list[Hand]:
    """`n` hands dealt uniformly and played by `policies[0]` in seat 0, `policies[1]` in seat 1."""
    g = betting.game
    rng = np.random.default_rng(seed)
    need = 2 * g.num_hole_cards + sum(g.num_board_cards)
    hole_n = g.num_hole_cards
    hands = []
    for _ in range(n):
        cards = tuple(int(c) for c in rng.permutation(g.deck_size)[:need])
        hole = (cards[:hole_n], cards[hole_n : 2 * hole_n])
        board = cards[2 * hole_n :]
        state = betting.start()
        actions: list[Action] = []
        while (p := betting.actor(state)) >= 0:
            seen = hole[p] + board[: g.board_cards_through(betting.round(state))]
            options, probs = policies[p].distribution(state, seen)
            action = options[int(rng.choice(len(options), p=probs / probs.sum()))]
            actions.append(action)
            state = betting.apply(state, action)
        hands.append(Hand(hole, board, tuple(actions)))
    return hands
